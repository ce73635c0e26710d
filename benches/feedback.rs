//! GPU feedback's cost per frame against the texture slots registered and the slots drawn.
//!
//! A 512x512 pass whose fragment shader records feedback (the record a game prepends to its own
//! shaders, one pixel in 8x8 a frame) for 4,096 distinct slots spread over all the registered
//! ones, then [`Feedback::resolve`], submit, [`Feedback::after_submit`], a wait for the GPU
//! (so that each frame's readback has landed before the next `begin_frame` reads it). Timed:
//! the CPU side a frame (`begin_frame`, which reads the newest readback back into the
//! histograms, and `resolve`), and the whole frame with the GPU's part (the draw, the copy back,
//! the clear). Printed: medians over the frames, and the bytes each frame copies back.
//!
//! `cargo bench --bench feedback` (`MIPFLOW_BENCH_FRAMES=N` frames a case, default 120). Without
//! a GPU adapter it says so and exits 0.

use std::time::{Duration, Instant};

use mipflow::feedback::{Feedback, FeedbackConfig};
use mipflow::gpu::{GpuContext, GpuOptions};

const SIDE: u32 = 512;

fn shader(drawn: u32) -> String {
    format!(
        "{record}
@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {{
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}}
@group(1) @binding(0) var<uniform> stride: vec4<u32>;
@fragment
fn fs(@builtin(position) frag: vec4<f32>) -> @location(0) vec4<f32> {{
    let p = vec2<u32>(frag.xy);
    // One slot per 8x8 block: {drawn} slots, `stride.x` apart.
    let slot = ((p.x >> 3u) + (p.y >> 3u) * 64u) * stride.x;
    let uv = frag.xy / {side}.0;
    mipflow_record_feedback(slot, uv, vec2<f32>(2048.0, 2048.0), 0.0, frag, true);
    return vec4<f32>(uv, 0.0, 1.0);
}}
",
        record = Feedback::wgsl(0),
        side = SIDE,
    )
}

fn main() {
    let ctx = match GpuContext::headless(&GpuOptions::default()) {
        Ok(c) => c,
        Err(e) => {
            println!("no GPU adapter ({e}): nothing measured");
            return;
        }
    };
    let frames: usize = std::env::var("MIPFLOW_BENCH_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120)
        .max(4);
    let drawn = (SIDE / 8) * (SIDE / 8);
    println!(
        "GPU feedback, {SIDE}x{SIDE} pass recording {drawn} slots a frame, {frames} frames a case (medians)"
    );
    println!(
        "| slots registered | CPU µs a frame | frame µs (with the GPU's part) | bytes copied back a frame |"
    );
    println!("|---|---|---|---|");
    for slots in [4_096u32, 10_000, 100_000] {
        let (cpu, whole, bytes) = run(&ctx, slots, drawn, frames);
        println!(
            "| {slots} | {:.0} | {:.0} | {bytes} |",
            cpu.as_secs_f64() * 1e6,
            whole.as_secs_f64() * 1e6
        );
    }
}

fn run(ctx: &GpuContext, slots: u32, drawn: u32, frames: usize) -> (Duration, Duration, u64) {
    let device = ctx.device();
    let mut feedback =
        Feedback::new(ctx, FeedbackConfig::default(), slots).expect("feedback buffers");
    let stride_of = (slots / drawn).max(1);
    let stride = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("bench feedback stride"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            mipflow::budget::Category::Buffers,
        )
        .expect("stride buffer");
    ctx.queue().write_buffer(
        stride.buffer(),
        0,
        bytemuck::cast_slice(&[stride_of, 0, 0, 0]),
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("bench feedback"),
        source: wgpu::ShaderSource::Wgsl(shader(drawn).into()),
    });
    let stride_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("bench stride"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let stride_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("bench stride"),
        layout: &stride_layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: stride.buffer().as_entire_binding(),
        }],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("bench feedback"),
        bind_group_layouts: &[Some(feedback.bind_group_layout()), Some(&stride_layout)],
        immediate_size: 0,
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("bench feedback"),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("bench feedback target"),
        size: wgpu::Extent3d {
            width: SIDE,
            height: SIDE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let (mut cpu, mut whole) = (Vec::new(), Vec::new());
    for frame in 0..frames as u64 {
        let t0 = Instant::now();
        feedback
            .begin_frame(ctx, frame, slots)
            .expect("feedback frame");
        let mut cpu_time = t0.elapsed();
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("bench feedback"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            rp.set_pipeline(&pipeline);
            rp.set_bind_group(0, feedback.bind_group(), &[]);
            rp.set_bind_group(1, &stride_group, &[]);
            rp.draw(0..3, 0..1);
        }
        let t1 = Instant::now();
        feedback.resolve(ctx, &mut enc, 1.0).expect("resolve");
        cpu_time += t1.elapsed();
        ctx.queue().submit([enc.finish()]);
        feedback.after_submit();
        ctx.wait_idle().expect("GPU idle");
        let _ = device.poll(wgpu::PollType::Poll);
        whole.push(t0.elapsed());
        cpu.push(cpu_time);
    }
    // The first frames create the readback ring and compile: left out.
    let median = |v: &mut Vec<Duration>| {
        let v = &mut v[3..];
        v.sort();
        v[v.len() / 2]
    };
    // Every drawn slot was seen: the record reached the histograms.
    let seen = (0..drawn)
        .filter(|&k| {
            feedback
                .histogram(k * stride_of)
                .is_some_and(|h| h.iter().any(|&p| p > 0.0))
        })
        .count();
    assert_eq!(seen as u32, drawn, "every drawn slot has a histogram");
    (
        median(&mut cpu),
        median(&mut whole),
        feedback.stats().readback_bytes,
    )
}
