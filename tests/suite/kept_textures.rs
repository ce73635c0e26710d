//! `StreamConfig::keep_replaced_frames`: an engine that records a frame while the next one is
//! planned (Bevy's pipelined rendering) binds views the plan has already replaced. Those textures
//! must stay alive (and on the ledger) for the frames it keeps in flight, then go.

use crate::common;

use mipflow::wgpu;
use mipflow::{Category, FrameTiming, TextureOptions, TextureSource};

/// Whether a bind group can still be made of `view` (a destroyed texture's view is refused).
fn view_alive(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    view: &wgpu::TextureView,
) -> bool {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let _group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("kept view probe"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::TextureView(view),
        }],
    });
    pollster::block_on(scope.pop()).is_none()
}

/// Frames (after the one that replaced it) a replaced view stays usable, up to 8; and the
/// texture bytes on the ledger the frame after the replacement.
fn replaced_view_lifetime(keep: u32) -> Option<(u32, u64, u64)> {
    let ctx = common::gpu()?;
    let mut config = common::manager_config(64 << 20, false, true);
    config.stream.keep_replaced_frames = keep;
    let mut m = common::manager(&ctx, config);
    let tex = m
        .add_texture(
            TextureSource::Bytes(common::cooked("kept", 3, 256).into()),
            TextureOptions::default(),
        )
        .unwrap();
    let device = ctx.device();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("kept view probe"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    });
    let frame = |m: &mut mipflow::BudgetManager| {
        m.add_demand(tex, 0.0, 65_536.0);
        m.frame((256, 256), FrameTiming::default()).unwrap();
        m.context().queue().submit([]);
        m.end_frame();
    };
    // The floor's view, then the frame that replaces it with a larger texture.
    frame(&mut m);
    let (first, version) = m.texture_view(tex).map(|(v, n)| (v.clone(), n)).unwrap();
    let floor_bytes = m.context().ledger().bytes(Category::Textures);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while m.texture_view(tex).unwrap().1 == version {
        assert!(
            std::time::Instant::now() < deadline,
            "the texture never grew"
        );
        frame(&mut m);
    }
    let grown_bytes = m.context().ledger().bytes(Category::Textures);
    let mut alive = 0;
    while alive < 8 && view_alive(device, &layout, &first) {
        alive += 1;
        frame(&mut m);
    }
    Some((alive, floor_bytes, grown_bytes))
}

#[test]
fn replaced_textures_live_for_the_frames_in_flight_then_go() {
    // Default: the replaced texture is destroyed in the frame that replaced it.
    let Some((alive, _, grown_at_once)) = replaced_view_lifetime(0) else {
        return;
    };
    assert_eq!(alive, 0, "without keep, the old view is gone at once");
    // Kept 3 frames: still bindable in the replacing frame and the 2 after, and charged.
    let (alive, floor, grown_kept) = replaced_view_lifetime(3).unwrap();
    assert_eq!(alive, 3, "kept for exactly 3 frames");
    // The same deterministic grow: the kept run's ledger still holds the textures it replaced
    // (the floor, and the steps of a grow built in the same frame).
    assert!(
        grown_kept >= grown_at_once + floor,
        "the kept textures stay on the ledger: {grown_at_once} then {grown_kept} (floor {floor})"
    );
}
