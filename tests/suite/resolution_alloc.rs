//! The per-frame paths allocate nothing: `ResolutionController::update` (pure CPU) and
//! `RenderTargets::ensure` when the bucket is unchanged, counted with a global allocator that
//! counts this thread's allocations.

use crate::common;

use common::alloc::allocations;

use mipflow::{ControllerConfig, ControllerMode, ScaleBucket, Upscaler};

use mipflow::low_level::{ControllerInput, RenderTargets, ResolutionController, TimeSource};

#[test]
fn the_controller_allocates_nothing_per_frame() {
    for mode in [
        ControllerMode::Planned,
        ControllerMode::LerpBaseline {
            reference_bytes: 1 << 30,
        },
        ControllerMode::Fixed(ScaleBucket::from_sixteenths(12)),
    ] {
        let mut config = ControllerConfig::default();
        config.mode = mode;
        let mut c = ResolutionController::new(config);
        let before = allocations();
        for f in 0..20_000u32 {
            // Memory and time both moving, so every branch (down, up window, changes recorded
            // into the ring) runs.
            let memory = if (f / 500).is_multiple_of(2) {
                1.0
            } else {
                0.55
            };
            let s = c.bucket().scale();
            c.update(&ControllerInput {
                memory_max_scale: memory,
                available_bytes: Some(u64::from(f % 1000) << 21),
                frame_time_ms: Some(20.0 * s * s * (1.0 + 0.1 * ((f % 7) as f32 - 3.0) / 3.0)),
                time_source: TimeSource::Gpu,
                target_frame_ms: Some(16.6),
            });
        }
        assert_eq!(allocations() - before, 0, "{mode:?}");
        assert!(
            c.change_count() > 10,
            "{mode:?}: the test exercised changes"
        );
        let before = allocations();
        assert!(c.history().count() > 0);
        assert_eq!(allocations() - before, 0, "history() allocates");
    }
}

#[test]
fn ensure_with_an_unchanged_bucket_allocates_nothing() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    let b = ScaleBucket::from_sixteenths(12);
    pool.ensure(&ctx, (320, 240), b).unwrap();
    let before = allocations();
    for _ in 0..1000 {
        let t = pool.ensure(&ctx, (320, 240), b).unwrap();
        assert!(t.is_some());
    }
    // And a minimised window.
    for _ in 0..100 {
        assert!(pool.ensure(&ctx, (0, 0), b).unwrap().is_none());
    }
    assert_eq!(allocations() - before, 0);
}
