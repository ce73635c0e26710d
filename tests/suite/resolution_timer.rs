//! GPU timing on lavapipe: timestamp queries around the upscale pass come back as plausible
//! milliseconds a few frames late, without blocking, and a timer whose slots are all in flight
//! skips frames instead of waiting.

use crate::common;

use mipflow::low_level::TIMER_SLOTS;
use mipflow::low_level::{GpuTimer, RenderTargets, UpscaleConfig, UpscalePass};
use mipflow::{ScaleBucket, Upscaler};

fn output(ctx: &mipflow::GpuContext) -> mipflow::TrackedTexture {
    ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("timer output"),
            size: wgpu::Extent3d {
                width: 320,
                height: 240,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        },
        mipflow::Category::Other,
    )
    .unwrap()
}

/// One frame: the upscale pass, timed when the timer has a free slot.
fn frame(
    ctx: &mipflow::GpuContext,
    timer: &mut GpuTimer,
    pool: &mut RenderTargets,
    up: &mut UpscalePass,
    view: &wgpu::TextureView,
) -> bool {
    let timed = timer.begin_frame();
    let targets = pool
        .ensure(ctx, (320, 240), ScaleBucket::from_sixteenths(12))
        .unwrap()
        .unwrap();
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    up.record(
        ctx,
        &mut enc,
        targets,
        view,
        &UpscaleConfig::default(),
        timer.pass_writes(true, true),
    )
    .unwrap();
    timer.end_frame(&mut enc);
    ctx.queue().submit([enc.finish()]);
    timer.after_submit();
    timed
}

#[test]
fn gpu_timer_measures_frames_a_few_frames_late() {
    let Some(ctx) = common::gpu() else { return };
    let Some(mut timer) = GpuTimer::new(&ctx).unwrap() else {
        // lavapipe has TIMESTAMP_QUERY, so under CI this must not happen.
        assert!(
            std::env::var("CI").is_err(),
            "no TIMESTAMP_QUERY on the CI adapter"
        );
        eprintln!("no TIMESTAMP_QUERY on this adapter: the caller uses CPU frame time");
        return;
    };
    assert!(timer.period_ns() > 0.0);
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let out = output(&ctx);
    let view = out.create_view(&Default::default());
    let mut got = Vec::new();
    let mut slowest_poll = std::time::Duration::ZERO;
    for _ in 0..40 {
        frame(&ctx, &mut timer, &mut pool, &mut up, &view);
        let t0 = std::time::Instant::now();
        if let Some(ms) = timer.poll(ctx.device()) {
            got.push(ms);
        }
        slowest_poll = slowest_poll.max(t0.elapsed());
    }
    ctx.wait_idle().unwrap();
    if let Some(ms) = timer.poll(ctx.device()) {
        got.push(ms);
    }
    eprintln!(
        "{} measurements, ms: {:?}; slowest poll {slowest_poll:?}",
        got.len(),
        &got[..got.len().min(8)]
    );
    assert!(!got.is_empty(), "no measurement in 40 frames");
    assert!(got.iter().all(|ms| *ms > 0.0 && *ms < 10_000.0), "{got:?}");
    assert_eq!(timer.last_ms(), got.last().copied());
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// Never polled, the timer fills its slots and then skips frames (no wait, no error); one poll
/// after the GPU is idle frees them all again.
#[test]
fn a_full_timer_skips_frames_instead_of_blocking() {
    let Some(ctx) = common::gpu() else { return };
    let Some(mut timer) = GpuTimer::new(&ctx).unwrap() else {
        return;
    };
    let mut pool = RenderTargets::new(Upscaler::Bilinear);
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let out = output(&ctx);
    let view = out.create_view(&Default::default());
    let timed: Vec<bool> = (0..TIMER_SLOTS + 3)
        .map(|_| frame(&ctx, &mut timer, &mut pool, &mut up, &view))
        .collect();
    assert!(timed[..TIMER_SLOTS].iter().all(|t| *t));
    assert!(timed[TIMER_SLOTS..].iter().all(|t| !*t), "{timed:?}");
    ctx.wait_idle().unwrap();
    let newest = timer.poll(ctx.device());
    assert!(newest.is_some());
    assert!(frame(&ctx, &mut timer, &mut pool, &mut up, &view));
    ctx.wait_idle().unwrap();
    assert!(ctx.take_uncaptured_errors().is_empty());
}
