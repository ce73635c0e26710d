//! The controller driving the real render-target pool on lavapipe, with a scripted budget: a drop
//! lowers the scale within one frame and the budget holds on every frame (the ledger's per-frame
//! peak included), restoring it raises the scale within the stable window, and a steady budget
//! changes nothing for 300 frames.

use crate::common;

use mipflow::Category;
use mipflow::low_level::{
    ControllerInput, RenderTargets, ResolutionController, UpscaleConfig, UpscalePass,
    largest_fitting, target_bytes,
};
use mipflow::{BucketRange, ChangeReason, ControllerConfig, ScaleBucket, Upscaler};

#[test]
fn a_scripted_budget_drives_the_scale_and_the_budget_holds() {
    let Some(ctx) = common::gpu() else { return };
    let output = (320, 240);
    let upscaler = Upscaler::EasuRcas;
    let range = BucketRange::default();
    let config = ControllerConfig::default();
    let window = u64::from(config.up_stable_frames);
    let mut controller = ResolutionController::new(config);
    let mut pool = RenderTargets::new(upscaler);
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let out = ctx
        .create_texture(
            &wgpu::TextureDescriptor {
                label: Some("budget test output"),
                size: wgpu::Extent3d {
                    width: output.0,
                    height: output.1,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            },
            Category::Other,
        )
        .unwrap();
    let view = out.create_view(&Default::default());
    // Everything but the render targets, fixed: the budget below is for the targets alone.
    let fixed = ctx.ledger().total_bytes();

    let full = target_bytes(output, 1.0, upscaler);
    let low = target_bytes(output, 0.6, upscaler);
    // Frames 100..200: room for 0.6 only (bucket 9/16); the rest of the time, for everything.
    let budget_at = |f: u64| if (100..200).contains(&f) { low } else { full };
    let (drop_at, restore_at) = (100u64, 200u64);
    let mut raised_at = None;
    let mut reallocations_before_steady = 0;
    for f in 0..600u64 {
        let budget = budget_at(f);
        let memory_max = largest_fitting(output, range, upscaler, budget);
        let bucket = controller.update(&ControllerInput {
            memory_max_scale: memory_max.scale(),
            ..Default::default()
        });
        let before = ctx.ledger().total_bytes();
        ctx.ledger().take_window_peak();
        let targets = pool.ensure(&ctx, output, bucket).unwrap().unwrap();
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        up.record(
            &ctx,
            &mut enc,
            targets,
            &view,
            &UpscaleConfig::default(),
            None,
        )
        .unwrap();
        ctx.queue().submit([enc.finish()]);
        // Lavapipe runs ahead otherwise; keep the frames paced like a swap chain would.
        if f % 8 == 0 {
            ctx.wait_idle().unwrap();
        }

        let rt = ctx.ledger().bytes(Category::RenderTargets);
        assert!(
            rt <= budget,
            "frame {f}: {rt} render-target bytes > budget {budget}"
        );
        assert_eq!(ctx.ledger().total_bytes(), fixed + rt);
        // The peak during the reallocation too: old targets are freed before new ones are made,
        // so the total never passes the larger of before and after.
        let peak = ctx.ledger().take_window_peak();
        let after = ctx.ledger().total_bytes();
        assert!(
            peak <= before.max(after),
            "frame {f}: peak {peak} > max({before}, {after})"
        );
        if f == drop_at {
            assert_eq!(
                bucket,
                ScaleBucket::from_sixteenths(9),
                "lowered within 1 frame"
            );
            assert_eq!(
                controller.last_change().unwrap().reason,
                ChangeReason::MemoryDown
            );
        }
        if (drop_at..restore_at).contains(&f) {
            assert_eq!(bucket, ScaleBucket::from_sixteenths(9));
        }
        if f >= restore_at && raised_at.is_none() && bucket == ScaleBucket::FULL {
            raised_at = Some(f);
            assert_eq!(
                controller.last_change().unwrap().reason,
                ChangeReason::MemoryUp
            );
        }
        if f == 299 {
            reallocations_before_steady = pool.reallocations();
        }
    }
    let raised_at = raised_at.expect("the scale came back up");
    // Up on the frame the window completes: frames restore_at ..= restore_at + window - 1.
    assert!(
        raised_at < restore_at + window,
        "raised at frame {raised_at}, window {window}"
    );
    // Frames 300..600 are steady: no change, no reallocation.
    assert_eq!(
        controller.change_count(),
        2,
        "{:?}",
        controller.history().collect::<Vec<_>>()
    );
    assert_eq!(pool.reallocations(), reallocations_before_steady);
    assert_eq!(pool.reallocations(), 3, "initial, down, up");
    ctx.wait_idle().unwrap();
    assert!(ctx.take_uncaptured_errors().is_empty());
}
