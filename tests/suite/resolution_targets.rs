//! The render-target pool on lavapipe: exact bytes in the ledger for every bucket, real frees on
//! reallocation (ledger and driver allocator report), no reallocation when nothing changed, and
//! no panic on a minimised (0x0) or oversize window.

use crate::common;

use mipflow::Category;
use mipflow::low_level::{RenderTargets, scale_buckets, scaled_size, target_bytes};
use mipflow::{BucketRange, ScaleBucket, TargetSet, Upscaler};

fn rt_bytes(ctx: &mipflow::GpuContext) -> u64 {
    ctx.ledger().bytes(Category::RenderTargets)
}

fn rt_count(ctx: &mipflow::GpuContext) -> u64 {
    ctx.ledger().snapshot().by_category.render_targets.count
}

/// For both upscalers and two output sizes (one odd), walking every bucket down and back up: the
/// ledger's render-target bytes equal `target_bytes` (and the planner's bucket list) exactly,
/// and the HDR colour really has the scaled size.
#[test]
fn rt_bytes_in_the_ledger_match_the_formula_for_every_bucket() {
    let Some(ctx) = common::gpu() else { return };
    let range = BucketRange::default();
    for upscaler in [Upscaler::Bilinear, Upscaler::EasuRcas] {
        for output in [(320, 240), (333, 197)] {
            let mut pool = RenderTargets::new(upscaler);
            let list = scale_buckets(output, range, upscaler);
            assert_eq!(list.len(), range.len());
            let walk: Vec<ScaleBucket> = range.iter().rev().chain(range.iter()).collect();
            for b in walk {
                let t = pool
                    .ensure(&ctx, output, b)
                    .expect("ensure")
                    .expect("non-empty output");
                assert_eq!(t.size(), scaled_size(output, b.scale()));
                assert_eq!(
                    (
                        t.texture(TargetSet::RENDERER_COLOR)
                            .unwrap()
                            .texture()
                            .width(),
                        t.texture(TargetSet::RENDERER_COLOR)
                            .unwrap()
                            .texture()
                            .height()
                    ),
                    t.size()
                );
                // EASU + RCAS has its intermediate only below native scale.
                let native = t.size() == output;
                let want = target_bytes(output, b.scale(), upscaler);
                assert_eq!(rt_bytes(&ctx), want, "{upscaler:?} {output:?} {b}");
                assert_eq!(pool.bytes(), want);
                assert_eq!(list[range.index_of(b)].bytes, want);
                assert_eq!(list[range.index_of(b)].scale, b.scale());
                let targets = if upscaler == Upscaler::EasuRcas && !native {
                    3
                } else {
                    2
                };
                assert_eq!(rt_count(&ctx), targets, "old targets still alive");
            }
            pool.release();
            assert_eq!(rt_bytes(&ctx), 0);
        }
    }
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// At 1280x720 (big enough that the targets dominate the driver's figures), going from scale 1
/// to 0.5 frees memory in the allocator report as well as in the ledger, and releasing the pool
/// returns the allocator to its baseline.
#[test]
fn reallocation_frees_memory_in_the_allocator_report() {
    let Some(ctx) = common::gpu() else { return };
    let Some(_) = ctx.allocator_report() else {
        eprintln!("this backend gives no allocator report; the ledger test covers the rest");
        return;
    };
    let allocated = |ctx: &mipflow::GpuContext| {
        // Destroyed textures are freed once the GPU is idle; wait so the report is current.
        ctx.wait_idle().unwrap();
        ctx.allocator_report().unwrap().total_allocated_bytes
    };
    let output = (1280, 720);
    let base = allocated(&ctx);
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    pool.ensure(&ctx, output, ScaleBucket::FULL).unwrap();
    let full = allocated(&ctx);
    let full_ledger = rt_bytes(&ctx);
    pool.ensure(&ctx, output, ScaleBucket::from_sixteenths(8))
        .unwrap();
    let half = allocated(&ctx);
    let half_ledger = rt_bytes(&ctx);
    eprintln!(
        "allocator: base {base}, full {full} (+{}), half {half} (+{}); ledger full {full_ledger}, half {half_ledger}",
        full - base,
        half.saturating_sub(base)
    );
    // The driver allocates at least what the ledger charges (it adds alignment padding only).
    assert!(
        full - base >= full_ledger,
        "{full} - {base} < {full_ledger}"
    );
    // What the ledger says was freed, the driver freed too, within 5 % for alignment.
    let freed_ledger = full_ledger - half_ledger;
    let freed_driver = full.saturating_sub(half);
    assert!(
        freed_driver as f64 >= freed_ledger as f64 * 0.95,
        "driver freed {freed_driver}, ledger {freed_ledger}"
    );
    pool.release();
    assert_eq!(rt_bytes(&ctx), 0);
    assert_eq!(
        allocated(&ctx),
        base,
        "the allocator is back at its baseline"
    );
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// The same output and bucket: nothing is reallocated, over many frames, and the generation
/// (what bind groups are cached against) stays the same.
#[test]
fn an_unchanged_bucket_reallocates_nothing() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    let b = ScaleBucket::from_sixteenths(12);
    let generation = pool
        .ensure(&ctx, (320, 240), b)
        .unwrap()
        .unwrap()
        .generation();
    let peak = ctx.ledger().snapshot().peak_bytes;
    for _ in 0..200 {
        let t = pool.ensure(&ctx, (320, 240), b).unwrap().unwrap();
        assert_eq!(t.generation(), generation);
    }
    assert_eq!(pool.reallocations(), 1);
    assert_eq!(ctx.ledger().snapshot().peak_bytes, peak);
    // Switching the upscaler reallocates only the intermediate: HDR and depth are kept.
    let hdr_before = pool
        .current()
        .unwrap()
        .texture(TargetSet::RENDERER_COLOR)
        .unwrap()
        .texture()
        .clone();
    pool.set_upscaler(Upscaler::Bilinear);
    let t = pool.ensure(&ctx, (320, 240), b).unwrap().unwrap();
    assert!(t.intermediate_view().is_none());
    assert_eq!(
        t.texture(TargetSet::RENDERER_COLOR).unwrap().texture(),
        &hdr_before,
        "the HDR target was kept"
    );
    assert_eq!(
        rt_bytes(&ctx),
        target_bytes((320, 240), 0.75, Upscaler::Bilinear)
    );
}

/// At a tiny output every bucket rounds to the same size: asking for another bucket keeps the
/// targets (nothing reallocated) and makes them that bucket's (before: they kept the first
/// bucket, so the manager, finding another than it asked for, asked again every frame).
#[test]
fn targets_kept_for_another_bucket_are_that_buckets() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::Bilinear);
    pool.ensure(&ctx, (1, 1), ScaleBucket::FULL)
        .unwrap()
        .unwrap();
    let half = ScaleBucket::from_sixteenths(8);
    let t = pool.ensure(&ctx, (1, 1), half).unwrap().unwrap();
    assert_eq!(t.size(), (1, 1));
    assert_eq!(t.bucket(), half);
    assert_eq!(pool.reallocations(), 1);
}

/// A minimised window (0x0, or one axis 0) never panics: `ensure` returns `None` (skip the frame)
/// and keeps the targets, and restoring the window reallocates nothing.
#[test]
fn a_minimised_window_keeps_the_targets_and_never_panics() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    assert!(
        pool.ensure(&ctx, (0, 0), ScaleBucket::FULL)
            .unwrap()
            .is_none()
    );
    assert_eq!(rt_bytes(&ctx), 0, "nothing is made for an empty window");
    pool.ensure(&ctx, (320, 240), ScaleBucket::FULL).unwrap();
    let bytes = rt_bytes(&ctx);
    for size in [(0, 0), (0, 240), (320, 0)] {
        assert!(
            pool.ensure(&ctx, size, ScaleBucket::from_sixteenths(8))
                .unwrap()
                .is_none()
        );
        assert_eq!(
            rt_bytes(&ctx),
            bytes,
            "the targets are kept while minimised"
        );
        assert_eq!(pool.current().unwrap().output_size(), (320, 240));
    }
    pool.ensure(&ctx, (320, 240), ScaleBucket::FULL).unwrap();
    assert_eq!(pool.reallocations(), 1);
    // Resizes follow the window.
    let t = pool
        .ensure(&ctx, (200, 100), ScaleBucket::FULL)
        .unwrap()
        .unwrap();
    assert_eq!(t.output_size(), (200, 100));
    assert_eq!(
        rt_bytes(&ctx),
        target_bytes((200, 100), 1.0, Upscaler::EasuRcas)
    );
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// A window larger than the device allows is a typed error, not a panic; the pool is left empty
/// and consistent, and works again at a sane size.
#[test]
fn an_oversize_window_is_an_error_not_a_panic() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    pool.ensure(&ctx, (320, 240), ScaleBucket::FULL).unwrap();
    let max = ctx.device().limits().max_texture_dimension_2d;
    let err = pool.ensure(&ctx, (max + 1, 16), ScaleBucket::FULL);
    assert!(err.is_err());
    assert!(pool.current().is_none());
    assert_eq!(rt_bytes(&ctx), 0);
    pool.ensure(&ctx, (320, 240), ScaleBucket::FULL).unwrap();
    assert_eq!(
        rt_bytes(&ctx),
        target_bytes((320, 240), 1.0, Upscaler::EasuRcas)
    );
    assert!(ctx.take_uncaptured_errors().is_empty());
}
