//! GPU feedback's cost per frame against the texture slots registered and the slots drawn.
//!
//! A 512x512 pass whose fragment shader records feedback (the record a game prepends to its own
//! shaders, one pixel in 8x8 a frame) for 4,096 distinct slots spread over all the registered
//! ones (`mipflow::testing::feedback_pass::RecordPass`), then [`Feedback::resolve`], submit,
//! [`Feedback::after_submit`], a wait for the GPU (so that each frame's readback has landed
//! before the next `begin_frame` reads it). Timed: the CPU side a frame (`begin_frame`, which
//! reads the newest readback back into the histograms, and `resolve`), and the whole frame with
//! the GPU's part (the draw, the gather, the copy back). Printed: medians over the frames, and
//! the bytes each frame copies back.
//!
//! `cargo bench --bench feedback` (`MIPFLOW_BENCH_FRAMES=N` frames a case, default 120). Without
//! a GPU adapter it says so and exits 0.

use std::time::{Duration, Instant};

use mipflow::testing::feedback_pass::RecordPass;
use mipflow::{Feedback, FeedbackConfig};
use mipflow::{GpuConfig, GpuContext};

const SIDE: u32 = 512;

fn main() {
    let ctx = match GpuContext::headless(&GpuConfig::default()) {
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
        .max(8);
    let drawn = (SIDE / 8) * (SIDE / 8);
    println!(
        "GPU feedback, {SIDE}x{SIDE} pass recording {drawn} slots a frame, {frames} frames a case (medians)"
    );
    println!(
        "| slots registered | CPU µs a frame | frame µs (with the GPU's part) | bytes copied back a frame |"
    );
    println!("|---|---|---|---|");
    for slots in [4_096u32, 10_000, 100_000] {
        let (cpu, whole, bytes) = run(&ctx, slots, frames);
        println!(
            "| {slots} | {:.0} | {:.0} | {bytes} |",
            cpu.as_secs_f64() * 1e6,
            whole.as_secs_f64() * 1e6
        );
    }
}

fn run(ctx: &GpuContext, slots: u32, frames: usize) -> (Duration, Duration, u64) {
    let device = ctx.device();
    let mut feedback =
        Feedback::new(ctx, FeedbackConfig::default(), slots).expect("feedback buffers");
    let pass = RecordPass::new(ctx, &feedback, SIDE).expect("record pass");
    let stride = (slots / pass.blocks()).max(1);
    let (mut cpu, mut whole) = (Vec::new(), Vec::new());
    for frame in 0..frames as u64 {
        let t0 = Instant::now();
        feedback
            .begin_frame(ctx, frame, slots)
            .expect("feedback frame");
        let mut cpu_time = t0.elapsed();
        let mut enc = device.create_command_encoder(&Default::default());
        pass.draw(ctx, &mut enc, &feedback, stride, 0);
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
    // The first frames compile, create the readback ring and grow it to the slots drawn: left
    // out.
    let median = |v: &mut Vec<Duration>| {
        let v = &mut v[5..];
        v.sort();
        v[v.len() / 2]
    };
    // Every drawn slot was seen: the record reached the histograms.
    let seen = (0..pass.blocks())
        .filter(|&k| {
            feedback
                .histogram(k * stride)
                .is_some_and(|h| h.iter().any(|&p| p > 0.0))
        })
        .count();
    assert_eq!(
        seen as u32,
        pass.blocks(),
        "every drawn slot has a histogram"
    );
    (
        median(&mut cpu),
        median(&mut whole),
        feedback.stats().readback_bytes,
    )
}
