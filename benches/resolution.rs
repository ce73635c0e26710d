//! Cost of dynamic resolution: the upscale pass per output megapixel on this machine's GPU
//! (lavapipe in CI), and the controller per frame.
//!
//! `cargo bench --bench resolution [FILTER]` first prints a table of GPU time per output megapixel,
//! measured with timestamp queries around the upscale pass alone (mean of 12 frames after 3 of
//! warm-up), then lets criterion time the wall clock of one upscale (record, submit, wait) and
//! one `ResolutionController::update`. The HDR source is cleared to a flat colour: the passes
//! have no data-dependent branches, so their cost does not depend on the image.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mipflow::low_level::{
    ControllerInput, GpuTimer, RenderTargets, ResolutionController, TimeSource, UpscaleConfig,
    UpscalePass,
};
use mipflow::{GpuConfig, GpuContext, TrackedTexture};
use mipflow::{ScaleBucket, Targets, Upscaler};

const OUTPUTS: [(u32, u32); 2] = [(1280, 720), (1920, 1080)];
const SCALES: [u32; 2] = [12, 8];
const UPSCALERS: [Upscaler; 2] = [Upscaler::Bilinear, Upscaler::EasuRcas];
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

fn output(ctx: &GpuContext, (w, h): (u32, u32)) -> TrackedTexture {
    ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("bench output"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        },
        mipflow::Category::Other,
    )
    .expect("output texture")
}

fn clear_hdr(ctx: &GpuContext, targets: &Targets) {
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("bench clear"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: targets
                .view(mipflow::TargetSet::RENDERER_COLOR)
                .expect("made"),
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: 0.4,
                    g: 0.5,
                    b: 0.6,
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    ctx.queue().submit([enc.finish()]);
}

/// One upscale: record, submit, wait.
fn upscale_once(
    ctx: &GpuContext,
    up: &mut UpscalePass,
    targets: &Targets,
    view: &wgpu::TextureView,
    timer: Option<&mut GpuTimer>,
) {
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let settings = UpscaleConfig::default();
    match timer {
        Some(t) => {
            t.begin_frame();
            up.record(
                ctx,
                &mut enc,
                targets,
                view,
                &settings,
                t.pass_writes(true, true),
            )
            .expect("record");
            t.end_frame(&mut enc);
            ctx.queue().submit([enc.finish()]);
            t.after_submit();
        }
        None => {
            up.record(ctx, &mut enc, targets, view, &settings, None)
                .expect("record");
            ctx.queue().submit([enc.finish()]);
        }
    }
    ctx.wait_idle().expect("wait");
}

fn upscale(c: &mut Criterion) {
    let ctx = match GpuContext::headless(&GpuConfig::default()) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("no GPU adapter ({e}): the upscale bench is skipped");
            return;
        }
    };
    // Criterion's name filter (the first positional argument) applies to the table too.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut up = UpscalePass::new(&ctx, FORMAT).expect("upscale pass");
    let mut timer = GpuTimer::new(&ctx).expect("timer");
    eprintln!("adapter: {}", ctx.adapter_name());
    eprintln!("upscaler    output     scale  GPU ms/frame  GPU ms per output MP");
    for upscaler in UPSCALERS {
        for out in OUTPUTS {
            let tex = output(&ctx, out);
            let view = tex.create_view(&Default::default());
            let mut pool = RenderTargets::new(upscaler);
            for n in SCALES {
                let bucket = ScaleBucket::from_sixteenths(n);
                let id = format!("{}x{}@{}", out.0, out.1, bucket.scale());
                if filter
                    .as_ref()
                    .is_some_and(|f| !format!("upscale/{upscaler:?}/{id}").contains(f.as_str()))
                {
                    continue;
                }
                let targets = pool
                    .ensure(&ctx, out, bucket)
                    .expect("targets")
                    .expect("size");
                clear_hdr(&ctx, targets);
                let mp = f64::from(out.0 * out.1) / 1e6;
                if let Some(t) = timer.as_mut() {
                    let mut sum = 0.0;
                    let mut count = 0;
                    for i in 0..15 {
                        upscale_once(&ctx, &mut up, targets, &view, Some(t));
                        if let Some(ms) = t.poll(ctx.device())
                            && i >= 3
                        {
                            sum += f64::from(ms);
                            count += 1;
                        }
                    }
                    if count > 0 {
                        let ms = sum / f64::from(count);
                        eprintln!(
                            "{:<11} {:>4}x{:<5} {:>5.4}  {:>12.2}  {:>20.2}",
                            format!("{upscaler:?}"),
                            out.0,
                            out.1,
                            bucket.scale(),
                            ms,
                            ms / mp
                        );
                    }
                }
                let mut group = c.benchmark_group(format!("upscale/{upscaler:?}"));
                group.sample_size(10);
                group.warm_up_time(Duration::from_millis(500));
                group.measurement_time(Duration::from_secs(3));
                group.throughput(Throughput::Elements(u64::from(out.0 * out.1)));
                group.bench_function(BenchmarkId::from_parameter(&id), |b| {
                    b.iter(|| upscale_once(&ctx, &mut up, targets, &view, None))
                });
                group.finish();
            }
        }
    }
}

fn controller(c: &mut Criterion) {
    let mut ctl = ResolutionController::default();
    let mut f = 0u32;
    c.bench_function("controller/update", |b| {
        b.iter(|| {
            f = f.wrapping_add(1);
            // A budget that moves every 500 frames and a noisy frame time: every path runs.
            let memory = if (f / 500).is_multiple_of(2) {
                1.0
            } else {
                0.6
            };
            let s = ctl.bucket().scale();
            let input = ControllerInput {
                memory_max_scale: memory,
                available_bytes: None,
                frame_time_ms: Some(18.0 * s * s * (1.0 + 0.05 * ((f % 11) as f32 - 5.0) / 5.0)),
                time_source: TimeSource::Gpu,
                target_frame_ms: Some(16.6),
            };
            black_box(ctl.update(black_box(&input)))
        })
    });
}

criterion_group!(benches, controller, upscale);
criterion_main!(benches);
