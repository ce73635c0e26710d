//! The budget manager as a game embeds it, on lavapipe: textures it made itself and added
//! resident, its own render targets (no scale of the manager's), a budget the caller sets
//! below what is pinned, the scale range changed at run time, a window minimised from the
//! start, and the staging wgpu holds behind the helpers' uploads. Each case asserts bytes,
//! scales or counts that were wrong before (a review of the embedding API found them).

use crate::common;

use mipflow::Category;
use mipflow::TextureHandle;
use mipflow::{BudgetManager, Error, FrameTiming, TextureOptions, TextureSource};

use common::{manager, manager_config as config};

fn add(m: &mut BudgetManager, seeds: std::ops::Range<u64>, size: u32) -> Vec<TextureHandle> {
    seeds
        .map(|s| {
            m.add_texture(
                TextureSource::bytes(common::cooked("embed", s, size)),
                TextureOptions::default(),
            )
            .unwrap()
        })
        .collect()
}

/// A `w`x`h` RGBA8 texture of the manager's context, charged to `textures` (4 bytes a texel).
fn pinned(m: &BudgetManager, w: u32, h: u32) -> mipflow::TrackedTexture {
    pinned_as(m, w, h, Category::Textures)
}

/// [`pinned`] charged to `category`.
fn pinned_as(m: &BudgetManager, w: u32, h: u32, category: Category) -> mipflow::TrackedTexture {
    m.context()
        .create_texture(
            &wgpu::TextureDescriptor {
                label: Some("game atlas"),
                size: wgpu::Extent3d {
                    width: w,
                    height: h,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8Unorm,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            },
            category,
        )
        .unwrap()
}

/// One frame at `output` with every texture wanted at level 0 over `pixels`, ended.
fn frame_with_demand(
    m: &mut BudgetManager,
    h: &[TextureHandle],
    output: (u32, u32),
    pixels: f32,
    timing: FrameTiming,
) -> mipflow::FramePlan {
    for &t in h {
        m.add_demand(t, 0.0, pixels);
    }
    let plan = m.frame(output, timing).unwrap();
    m.end_frame();
    plan
}

/// Runs `n` frames with every texture wanted at level 0 over a large area; the highest frame
/// peak of the ledger.
fn run(m: &mut BudgetManager, h: &[TextureHandle], n: usize, timing: FrameTiming) -> u64 {
    let mut peak = 0;
    for _ in 0..n {
        let plan = frame_with_demand(m, h, (640, 360), 100_000.0, timing);
        peak = peak.max(m.frame_stats(&plan, timing).frame_peak_bytes);
    }
    peak
}

/// A texture added resident holds its bytes for as long as it lives: the planner counts them
/// as fixed, and the streamed textures get the rest. Before, it counted none of them and
/// filled the whole budget with streamed levels beside it (the ledger over the budget by the
/// atlas's 2 MiB).
#[test]
fn a_resident_texture_counts_against_the_budget() {
    let Some(ctx) = common::gpu() else { return };
    let budget = 6u64 << 20;
    let mut m = manager(&ctx, config(budget, false, true));
    let atlas = pinned(&m, 1024, 512);
    let atlas_bytes = atlas.bytes();
    assert_eq!(atlas_bytes, 2 << 20);
    let atlas = m.add_resident_texture(atlas, "atlas");
    // About 13 MiB of full chains wanted: more than the budget holds.
    let h = add(&mut m, 0..40, 512);
    let peak = run(&mut m, &h, 40, FrameTiming::default());
    let snap = m.context().ledger().snapshot();
    assert!(peak <= budget, "frame peak {peak} over the budget {budget}");
    // What the planner counts as needed before any streamed level: the atlas with the floors.
    let plan = m.frame((640, 360), FrameTiming::default()).unwrap();
    m.end_frame();
    let stats = m.frame_stats(&plan, FrameTiming::default());
    assert!(
        stats.floor_bytes >= atlas_bytes,
        "the planner's fixed bytes hold the atlas: {}",
        stats.floor_bytes
    );
    assert!(snap.total_bytes <= budget);
    assert!(
        snap.by_category.textures.bytes > atlas_bytes + (2 << 20),
        "the rest of the budget still streams: {} bytes of textures",
        snap.by_category.textures.bytes
    );
    assert_eq!(m.streamer().pinned_bytes(Category::Textures), atlas_bytes);
    // One charged to another category is among the fixed bytes already: not counted again.
    let other = m.context().create_texture(
        &wgpu::TextureDescriptor {
            label: Some("ui"),
            size: wgpu::Extent3d {
                width: 256,
                height: 256,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        },
        Category::Overlay,
    );
    let ui = m.add_resident_texture(other.unwrap(), "ui");
    assert_eq!(m.streamer().pinned_bytes(Category::Textures), atlas_bytes);
    assert!(m.remove_texture(ui));
    assert_eq!(m.streamer().pinned_bytes(Category::Textures), atlas_bytes);
    // The test made it past the budget, not the manager: the peak's window starts again.
    m.context().ledger().take_window_peak();
    // Removed: its bytes go back to the streamed textures.
    assert!(m.remove_texture(atlas));
    assert_eq!(m.streamer().pinned_bytes(Category::Textures), 0);
    let before = m.context().ledger().snapshot().by_category.textures.bytes;
    let peak = run(&mut m, &h, 40, FrameTiming::default());
    let after = m.context().ledger().snapshot().by_category.textures.bytes;
    assert!(peak <= budget, "frame peak {peak} over the budget {budget}");
    assert!(
        after > before,
        "streamed textures take the atlas's room: {before} -> {after}"
    );
}

/// A budget below what is pinned (a resident atlas bigger than it): every frame is over the
/// budget with nothing the manager can drop. It says so (`BudgetTooSmall`) and goes on
/// without blocking on the GPU each frame (before: a `wait_idle` in every frame).
#[test]
fn a_budget_below_what_is_pinned_never_waits_for_the_gpu_each_frame() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(512 << 10, false, false));
    let atlas = pinned(&m, 1024, 256);
    m.add_resident_texture(atlas, "atlas");
    let h = add(&mut m, 0..4, 64);
    run(&mut m, &h, 5, FrameTiming::default());
    let waits = m.context().idle_waits();
    let mut too_small = 0;
    for _ in 0..30 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, FrameTiming::default());
        too_small += usize::from(matches!(
            plan.status,
            mipflow::PlanStatus::BudgetTooSmall { .. }
        ));
    }
    assert_eq!(too_small, 30, "every frame says the budget is too small");
    let waited = m.context().idle_waits() - waits;
    assert!(waited <= 1, "{waited} waits for the GPU in 30 frames");
}

/// A game that keeps its own targets draws at scale 1, whatever the scale range or a
/// frame-time target says (before: the range's minimum after `set_scale_range`, and a scale
/// below 1 from the frame-time path).
#[test]
fn without_targets_of_its_own_the_manager_keeps_scale_one() {
    let Some(ctx) = common::gpu() else { return };
    let mut c = config(64 << 20, false, true);
    c.target_frame_ms = Some(4.0);
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..2, 64);
    let slow = FrameTiming {
        gpu_ms: Some(40.0),
        cpu_ms: 40.0,
    };
    frame_with_demand(&mut m, &h, (640, 360), 10_000.0, slow);
    // After a frame (before it, the first frame reset the range anyway).
    m.set_scale_range(0.25, 1.0);
    for _ in 0..40 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, slow);
        assert_eq!(plan.render_scale, 1.0);
        assert_eq!(plan.mip_bias, 0.0);
        assert_eq!(plan.scale_reason, None);
    }
    assert_eq!(
        m.context()
            .ledger()
            .snapshot()
            .by_category
            .render_targets
            .bytes,
        0
    );
}

/// `set_scale_range` keeps the memory-driven scale where it was (clamped into the new range),
/// not its position in the old range (before, the position was kept: at 1 in 0.5..=1, the
/// ninth bucket of 0.25..=1 is 0.75; a roomy budget raised it again in the same frame, so this
/// guards the clamping rather than reproducing the old fault).
#[test]
fn a_new_scale_range_keeps_the_scale() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(256 << 20, true, true));
    let h = add(&mut m, 0..2, 64);
    run(&mut m, &h, 3, FrameTiming::default());
    let frame = |m: &mut BudgetManager| {
        let plan = m.frame((640, 360), FrameTiming::default()).unwrap();
        m.end_frame();
        plan
    };
    assert_eq!(frame(&mut m).memory_bucket.scale(), 1.0);
    m.set_scale_range(0.25, 1.0);
    let plan = frame(&mut m);
    assert_eq!(plan.memory_bucket.scale(), 1.0);
    assert_eq!(plan.render_scale, 1.0);
    // Narrowed below the scale: clamped to the new maximum.
    m.set_scale_range(0.25, 0.5);
    let plan = frame(&mut m);
    assert_eq!(plan.memory_bucket.scale(), 0.5);
    assert_eq!(plan.render_scale, 0.5);
    assert_eq!(m.targets().map(|t| t.size()), Some((320, 180)));
}

/// A window minimised from the start (a 0x0 output before any real size) still gets frames:
/// planned as 1x1, with targets made at the first real size (before: an error saying no scale
/// fits the device's largest texture).
#[test]
fn a_window_minimised_from_the_start_gets_frames() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, true, true));
    let h = add(&mut m, 0..2, 64);
    for _ in 0..3 {
        let plan = frame_with_demand(&mut m, &h, (0, 0), 1_000.0, FrameTiming::default());
        assert_eq!(plan.render_scale, 1.0);
    }
    let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 1.0);
    assert_eq!(m.targets().map(|t| t.output_size()), Some((640, 360)));
}

/// After the driver ran out of memory, a texture added is held to the capped budget, not the
/// caller's: its floor is not made resident past the cap (before: made against the budget).
#[test]
fn a_texture_added_after_an_out_of_memory_stays_under_the_cap() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, false, true));
    let first = add(&mut m, 0..1, 256);
    // Its upload's staging given back: the floor alone.
    m.poll();
    let total = m.context().ledger().total_bytes();
    assert!(total > 0, "the first floor is resident");
    m.note_out_of_memory(&Error::OutOfMemory {
        label: "a game's buffer".into(),
        bytes: 1 << 20,
    });
    assert_eq!(m.oom_cap(), Some(total));
    let second = add(&mut m, 1..2, 256);
    assert_eq!(
        m.context().ledger().total_bytes(),
        total,
        "nothing past the cap"
    );
    let infos = m.streamer().texture_infos();
    let level = |h: TextureHandle| {
        infos
            .iter()
            .find(|i| i.index == h.index())
            .unwrap()
            .resident_level
    };
    assert!(level(first[0]) < 9);
    assert_eq!(level(second[0]), 9, "the second has nothing resident");
}

/// A driver out-of-memory the streamer met (a floor it could not make, say) and then a new
/// budget from the game before the next frame: the new budget stands uncapped, as
/// `set_budget` promises (before: the frame's end took the streamer's figure from before the
/// new budget and capped it again, for the next 1800 frames).
#[test]
fn set_budget_forgets_an_out_of_memory_the_streamer_met_before_it() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, false, true));
    let h = add(&mut m, 0..2, 64);
    frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    m.testing_note_streamer_out_of_memory(1 << 20);
    m.set_budget(mipflow::Budget::bytes(128 << 20));
    let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    assert_eq!(m.oom_cap(), None);
    assert_eq!(plan.budget_bytes, 128 << 20);
    // Met after the new budget, it caps it at the frame's end.
    m.testing_note_streamer_out_of_memory(1 << 20);
    frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    assert_eq!(m.oom_cap(), Some(1 << 20));
}

/// `poll` between a frame and its figures keeps the figures (before: it started them again,
/// and a loading screen's poll read zeros).
#[test]
fn poll_keeps_the_frame_figures() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, false, true));
    let h = add(&mut m, 0..4, 256);
    let mut uploaded = 0;
    for _ in 0..10 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 100_000.0, FrameTiming::default());
        let before = m.streamer().frame_stats().uploaded_bytes;
        m.poll();
        let stats = m.frame_stats(&plan, FrameTiming::default());
        assert_eq!(stats.stream.uploaded_bytes, before);
        uploaded += stats.stream.uploaded_bytes;
    }
    assert!(uploaded > 0, "the frames uploaded");
}

/// The staging wgpu holds behind `create_buffer_init` (a buffer mapped at creation without
/// `MAP_WRITE`) and behind `create_texture_with_levels` (`write_texture`) is charged to
/// `staging` until the GPU has the data, then given back (before: never charged).
#[test]
fn hidden_upload_staging_is_charged_until_the_gpu_has_it() {
    let Some(ctx) = common::gpu() else { return };
    let staging = |ctx: &mipflow::GpuContext| ctx.ledger().snapshot().by_category.staging.bytes;
    assert_eq!(staging(&ctx), 0);
    let data = vec![7u8; 1 << 20];
    let buf = ctx
        .create_buffer_init(
            "vertices",
            &data,
            wgpu::BufferUsages::VERTEX,
            Category::Buffers,
        )
        .unwrap();
    assert_eq!(staging(&ctx), 1 << 20);
    ctx.wait_idle().unwrap();
    assert_eq!(staging(&ctx), 0);
    // A mappable buffer needs no hidden copy.
    let mappable = ctx
        .create_buffer_init(
            "readback",
            &data,
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            Category::Buffers,
        )
        .unwrap();
    assert_eq!(staging(&ctx), 0);
    let texels = vec![9u8; 256 * 256 * 4];
    let desc = wgpu::TextureDescriptor {
        label: Some("filled"),
        size: wgpu::Extent3d {
            width: 256,
            height: 256,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    let tex =
        mipflow::low_level::create_texture_with_levels(&ctx, &desc, &[&texels], Category::Other)
            .unwrap();
    assert_eq!(staging(&ctx), 256 * 256 * 4);
    ctx.wait_idle().unwrap();
    assert_eq!(staging(&ctx), 0);
    drop((buf, mappable, tex));
}

/// A 3D texture's levels halve in depth too: `create_texture_with_levels` takes each level's
/// own bytes (before: every level was expected at the full depth, and correct data refused).
#[test]
fn a_3d_texture_is_filled_level_by_level() {
    let Some(ctx) = common::gpu() else { return };
    let desc = wgpu::TextureDescriptor {
        label: Some("volume"),
        size: wgpu::Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 4,
        },
        mip_level_count: 3,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D3,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    let levels = [
        vec![1u8; 4 * 4 * 4 * 4],
        vec![2u8; 2 * 2 * 2 * 4],
        vec![3u8; 4],
    ];
    let refs: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
    let tex = mipflow::low_level::create_texture_with_levels(&ctx, &desc, &refs, Category::Other)
        .unwrap();
    assert_eq!(tex.bytes(), 256 + 32 + 4);
    // A level of the wrong size is still refused.
    let wrong = [vec![1u8; 256], vec![2u8; 64], vec![3u8; 4]];
    let refs: Vec<&[u8]> = wrong.iter().map(Vec::as_slice).collect();
    let e = mipflow::low_level::create_texture_with_levels(&ctx, &desc, &refs, Category::Other);
    assert!(matches!(e, Err(Error::InvalidResource { .. })), "{e:?}");
}

/// A loading loop that adds textures one by one without a frame between (nothing polls the
/// device): each floor's upload holds wgpu's staging copy until the GPU has it, and what the
/// GPU has finished is given back before the next floor's room is judged, so every floor is
/// made resident (before: the charges piled up until a frame, and the last third of the
/// floors found no room under the budget).
#[test]
fn a_loading_loop_makes_every_floor_resident() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(512 << 10, false, false));
    let h = add(&mut m, 0..200, 64);
    let floors = m.context().ledger().snapshot().by_category.textures.bytes;
    assert!(
        floors > 200 << 10,
        "{floors} bytes of floors: about half the budget"
    );
    let infos = m.streamer().texture_infos();
    let missing = h
        .iter()
        .filter(|h| {
            let i = infos.iter().find(|i| i.index == h.index()).unwrap();
            i.resident_level >= i.level_count
        })
        .count();
    assert_eq!(missing, 0, "textures with no floor resident");
}

/// A resident texture charged to render targets while the manager makes its own targets (a
/// game's probe or shadow atlas kept beside them): the planner prices the manager's targets by
/// bucket, so this one is a fixed byte on its own (one review's fix had left it out: only
/// textures charged to `textures` were counted).
#[test]
fn a_resident_texture_charged_to_render_targets_is_fixed_beside_the_manager_s_targets() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, true, true));
    let h = add(&mut m, 0..2, 64);
    run(&mut m, &h, 3, FrameTiming::default());
    let floor_bytes = |m: &mut BudgetManager| {
        let plan = frame_with_demand(m, &h, (640, 360), 1_000.0, FrameTiming::default());
        m.frame_stats(&plan, FrameTiming::default()).floor_bytes
    };
    let before = floor_bytes(&mut m);
    let probe = pinned_as(&m, 256, 256, Category::RenderTargets);
    let probe = m.add_resident_texture(probe, "probe");
    assert_eq!(
        m.streamer().pinned_bytes(Category::RenderTargets),
        256 << 10
    );
    assert_eq!(floor_bytes(&mut m), before + (256 << 10));
    assert!(m.remove_texture(probe));
    assert_eq!(m.streamer().pinned_bytes(Category::RenderTargets), 0);
    assert_eq!(floor_bytes(&mut m), before);
}

/// The EasuRcas intermediate (output-sized, made only below native scale) makes 15/16 and
/// 14/16 dearer than native. The manager draws at the largest bucket within the memory
/// bucket's price; the controller now follows it (before, a fixed 15/16 reported 15/16 while
/// 13/16 was drawn, and its frame-time model was that of a scale not drawn).
#[test]
fn the_controller_follows_the_scale_the_manager_can_make() {
    use mipflow::{ControllerMode, ScaleBucket, Upscaler};
    let Some(ctx) = common::gpu() else { return };
    let mut c = config(256 << 20, true, true);
    c.upscaler = Upscaler::EasuRcas;
    c.controller.mode = ControllerMode::Fixed(ScaleBucket::from_sixteenths(15));
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..2, 64);
    let mut last = None;
    for f in 0..120 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, FrameTiming::default());
        assert_eq!(
            plan.memory_bucket,
            ScaleBucket::FULL,
            "frame {f}: memory allows native"
        );
        assert!(
            plan.render_scale < 15.0 / 16.0,
            "frame {f}: {}",
            plan.render_scale
        );
        assert_eq!(
            m.controller().bucket().scale(),
            plan.render_scale,
            "frame {f}: the controller reports the scale drawn"
        );
        last = Some(plan.render_scale);
    }
    // Settled: it does not step up to the refused bucket again and again.
    let changes = m.controller().change_count();
    for _ in 0..300 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, FrameTiming::default());
        assert_eq!(Some(plan.render_scale), last);
    }
    assert_eq!(m.controller().change_count(), changes);
}

/// Once GPU times are given, a frame whose GPU time is not back yet keeps the time path's
/// last decision: before, the CPU time (a vsync interval, a loading hitch) stood in for it and
/// moved the scale.
#[test]
fn cpu_times_do_not_stand_in_for_late_gpu_times() {
    let Some(ctx) = common::gpu() else { return };
    let mut c = config(256 << 20, true, true);
    c.target_frame_ms = Some(8.0);
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..2, 64);
    let fast = FrameTiming {
        gpu_ms: Some(2.0),
        cpu_ms: 2.0,
    };
    let late = FrameTiming {
        gpu_ms: None,
        cpu_ms: 40.0,
    };
    for f in 0..100 {
        let timing = if f % 4 == 0 { fast } else { late };
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, timing);
        assert_eq!(plan.render_scale, 1.0, "frame {f}");
    }
    // Without GPU times the CPU time still drives the scale (40 ms against 8).
    let mut m = manager(&ctx, {
        let mut c = config(256 << 20, true, true);
        c.target_frame_ms = Some(8.0);
        c
    });
    let h = add(&mut m, 0..2, 64);
    let mut lowest = 1.0f32;
    for _ in 0..100 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 10_000.0, late);
        lowest = lowest.min(plan.render_scale);
    }
    assert!(lowest < 1.0, "the CPU time path never lowered the scale");
}

/// A change between two scales below native keeps the output-sized upscale intermediate (the
/// pool keeps targets whose descriptor is unchanged): before, the manager released every
/// target first, so the intermediate was made again at every scale change.
#[test]
fn a_scale_change_keeps_the_output_sized_targets() {
    use mipflow::Upscaler;
    let Some(ctx) = common::gpu() else { return };
    let mut c = config(256 << 20, true, true);
    c.upscaler = Upscaler::EasuRcas;
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..2, 64);
    let output = (640, 360);
    frame_with_demand(&mut m, &h, output, 10_000.0, FrameTiming::default());
    m.set_scale_range(0.5, 0.75);
    let plan = frame_with_demand(&mut m, &h, output, 10_000.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 0.75);
    let intermediate = |m: &BudgetManager| {
        let t = m.targets().unwrap();
        let set = mipflow::TargetSet::renderer(mipflow::Upscaler::EasuRcas);
        let key = set
            .key("upscale intermediate")
            .expect("the renderer's set has one");
        t.texture(key)
            .into_iter()
            .find(|x| (x.texture().width(), x.texture().height()) == output)
            .map(|x| x.texture().clone())
            .expect("an output-sized intermediate below native scale")
    };
    let before = intermediate(&m);
    m.set_scale_range(0.5, 0.625);
    let plan = frame_with_demand(&mut m, &h, output, 10_000.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 0.625);
    assert!(
        intermediate(&m) == before,
        "the intermediate was made again"
    );
}

/// The scale rises (a wider range, a roomy budget: after the controller's window) while
/// staging the plan did not count holds bytes (a floor's staging copy until the GPU has it):
/// the targets rise only as far as the room under the budget allows, every frame stays within
/// it, and they rise the rest of the way in the frame the staging is given back (before: made
/// at the plan's bucket, past the budget).
#[test]
fn the_scale_rises_only_into_room_the_staging_does_not_hold() {
    let Some(ctx) = common::gpu() else { return };
    let budget = 4u64 << 20;
    let mut m = manager(&ctx, config(budget, true, true));
    let h = add(&mut m, 0..2, 64);
    m.set_scale_range(0.25, 0.5);
    run(&mut m, &h, 3, FrameTiming::default());
    let low = m.targets().map(|t| t.bytes()).unwrap();
    assert_eq!(m.targets().map(|t| t.size()), Some((320, 180)));
    // Staging held that leaves room for the targets at 0.5 and a little more, not at 1.
    let total = m.context().ledger().total_bytes();
    let staging = m.testing_hold_staging(budget - total - low / 4);
    m.set_scale_range(0.25, 1.0);
    m.context().ledger().take_window_peak();
    for frame in 0..60 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
        let peak = m.context().ledger().take_window_peak();
        assert!(peak <= budget, "frame {frame}: peak {peak} over {budget}");
        assert_eq!(plan.render_scale, 0.5, "frame {frame}");
    }
    drop(staging);
    let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 1.0, "rises once the staging is back");
    assert!(m.context().ledger().take_window_peak() <= budget);
}

/// The window grows (320x180 to 640x360, the same scale) while staging the plan did not count
/// holds most of the room: the targets come out at a lower scale for those frames, within the
/// budget, and at the plan's scale once the staging is given back (before: made at the new
/// size and the old scale, past the budget).
#[test]
fn a_larger_window_takes_only_the_room_the_staging_does_not_hold() {
    let Some(ctx) = common::gpu() else { return };
    let budget = 4u64 << 20;
    let mut m = manager(&ctx, config(budget, true, true));
    let h = add(&mut m, 0..2, 64);
    run_at(&mut m, &h, 3, (320, 180));
    assert_eq!(m.targets().map(|t| t.size()), Some((320, 180)));
    let small = m.targets().map(|t| t.bytes()).unwrap();
    let total = m.context().ledger().total_bytes();
    // Room for twice the small targets: not for the large ones (four times) at scale 1.
    let staging = m.testing_hold_staging(budget - total - small);
    m.context().ledger().take_window_peak();
    for frame in 0..5 {
        let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
        let peak = m.context().ledger().take_window_peak();
        assert!(peak <= budget, "frame {frame}: peak {peak} over {budget}");
        assert!(
            plan.render_scale < 1.0,
            "frame {frame}: grew into the staging's bytes"
        );
    }
    drop(staging);
    let plan = frame_with_demand(&mut m, &h, (640, 360), 1_000.0, FrameTiming::default());
    assert_eq!(
        plan.render_scale, 1.0,
        "back at scale 1 once the staging is back"
    );
    assert_eq!(m.targets().map(|t| t.size()), Some((640, 360)));
    assert!(m.context().ledger().take_window_peak() <= budget);
}

fn run_at(m: &mut BudgetManager, h: &[TextureHandle], n: usize, output: (u32, u32)) {
    for _ in 0..n {
        frame_with_demand(m, h, output, 1_000.0, FrameTiming::default());
    }
}

/// The mip bias is the targets' real scale: at a 1x1 output every bucket is 1x1, so scale 0.5
/// is drawn 1:1 and wants no bias (before: -1, a level finer than the screen shows); at
/// 640x360 it is the bucket's own, -1.
#[test]
fn the_mip_bias_is_the_scale_the_targets_really_have() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, true, true));
    let h = add(&mut m, 0..2, 64);
    m.set_scale_range(0.5, 0.5);
    let plan = frame_with_demand(&mut m, &h, (1, 1), 1.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 0.5);
    assert_eq!(m.targets().map(|t| t.size()), Some((1, 1)));
    assert_eq!(plan.mip_bias, 0.0);
    let plan = frame_with_demand(&mut m, &h, (640, 360), 1.0, FrameTiming::default());
    assert_eq!(plan.render_scale, 0.5);
    assert_eq!(plan.mip_bias, -1.0);
}
