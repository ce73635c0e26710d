//! The budget manager's per-frame cost (demand, plan and bookkeeping, no drawing) at 1k and 10k
//! textures, in the own-renderer mode (the game's declared MSAA target set, demand from bounds
//! through a `DemandView`) and the Renderer's (its own target set, the same demand), steady and
//! with the camera moving.
//!
//! Each texture is a 256² BC7 chain (87 KiB full, a 1.4 KiB floor), one per panel on a grid in
//! front of the camera, under a 64 MiB budget at 1280x720: the planner always has more demand
//! than budget. A frame here is: `DemandView` + `add_demand_sphere` for every panel, then
//! `BudgetManager::frame` and `end_frame`. "moving" strafes the camera sideways every frame, so
//! every wanted level moves and the plan is made again each frame (uploads of what arrives are
//! included in its figure: that is what the frame costs the render thread).
//!
//! `cargo bench --bench manager`. Prints a table (mean, p50, p95 of the frame in µs, and the
//! planner's own share). Without a GPU adapter it says so and exits.

use std::time::Instant;

use glam::{Mat4, Vec3};
use mipflow::ktx2::{EncodedTexture, write_ktx2};
use mipflow::resolution::{TargetSet, TargetSpec};
use mipflow::{
    Budget, BudgetManager, Camera, DemandView, FrameTiming, GpuContext, GpuOptions, ManagerConfig,
    TextureOptions, TextureSource,
};

const SIDE: u32 = 256;
const OUTPUT: (u32, u32) = (1280, 720);
const WARMUP: usize = 60;
const FRAMES: usize = 200;

fn texture_bytes() -> Vec<u8> {
    let mut rng = mipflow::testing::SplitMix64(7);
    let levels = (0..mipflow::budget::size::full_mip_count(SIDE, SIDE))
        .map(|l| {
            let s = (SIDE >> l).max(1);
            let n = mipflow::ktx2::bc7_level_size(s, s) as usize;
            (0..n).map(|_| rng.next() as u8).collect()
        })
        .collect();
    let tex = EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: SIDE,
        height: SIDE,
        levels,
        key_values: Vec::new(),
    };
    let mut out = Vec::new();
    write_ktx2(&mut out, &tex, None, "mipflow bench").expect("write");
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    OwnRenderer,
    Renderer,
}

fn config(mode: Mode) -> ManagerConfig {
    let mut c = ManagerConfig::default();
    c.budget = Budget::bytes(64 << 20);
    if mode == Mode::OwnRenderer {
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        c.target_set = Some(
            TargetSet::new()
                .with(
                    TargetSpec::scaled("hdr msaa", wgpu::TextureFormat::Rgba16Float)
                        .with_usage(attach)
                        .with_samples(4),
                )
                .with(
                    TargetSpec::scaled("depth msaa", wgpu::TextureFormat::Depth32Float)
                        .with_usage(attach)
                        .with_samples(4),
                )
                .with(TargetSpec::scaled(
                    "hdr resolved",
                    wgpu::TextureFormat::Rgba16Float,
                )),
        );
    }
    c
}

struct Figures {
    mean: f64,
    p50: f64,
    p95: f64,
    planner: f64,
    demand: f64,
    replans: usize,
}

fn run(ctx: &GpuContext, mode: Mode, count: usize, moving: bool, bytes: &[u8]) -> Figures {
    let mut m = BudgetManager::new(ctx.device().clone(), ctx.queue().clone(), config(mode))
        .expect("manager");
    let source = TextureSource::bytes(bytes.to_vec());
    let side = (count as f32).sqrt().ceil() as usize;
    let panels: Vec<(mipflow::TextureHandle, Vec3)> = (0..count)
        .map(|i| {
            let h = m
                .add_texture(source.clone(), TextureOptions::default())
                .expect("add");
            let (x, y) = ((i % side) as f32, (i / side) as f32);
            (
                h,
                Vec3::new(
                    x * 1.2 - side as f32 * 0.6,
                    y * 1.2 - side as f32 * 0.6,
                    0.0,
                ),
            )
        })
        .collect();
    let distance = side as f32 * 0.9;
    let mut times = Vec::with_capacity(FRAMES);
    let (mut planner, mut replans, mut demand) = (0.0f64, 0usize, 0.0f64);
    let mut prev: Option<Mat4> = None;
    for f in 0..WARMUP + FRAMES {
        let shift = if moving { f as f32 * 0.05 } else { 0.0 };
        let eye = Vec3::new(shift, 0.0, distance);
        let camera = Camera::look_at(eye, Vec3::new(shift, 0.0, 0.0));
        let t0 = Instant::now();
        let mut view = DemandView::new(&camera, OUTPUT).with_guard_band(&camera, OUTPUT, 2.0);
        if let Some(p) = prev {
            view = view.with_look_ahead(&camera, OUTPUT, p);
        }
        for &(h, center) in &panels {
            m.add_demand_sphere(h, &view, center, 0.7, 1.0);
        }
        let td = t0.elapsed().as_secs_f64() * 1e6;
        let plan = m.frame(OUTPUT, FrameTiming::default()).expect("frame");
        m.end_frame();
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        prev = Some(camera.view);
        std::hint::black_box(plan);
        if f >= WARMUP {
            times.push(dt);
            demand += td;
            planner += f64::from(m.streamer().frame_stats().planner_us);
            replans += usize::from(m.last_plan().replanned);
        }
        if f % 8 == 0 {
            let _ = ctx.wait_idle();
        }
    }
    times.sort_by(f64::total_cmp);
    Figures {
        mean: times.iter().sum::<f64>() / times.len() as f64,
        p50: times[times.len() / 2],
        p95: times[times.len() * 95 / 100],
        planner: planner / FRAMES as f64,
        demand: demand / FRAMES as f64,
        replans,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run a quick check.
    let quick = !std::env::args().any(|a| a == "--bench");
    let ctx = match GpuContext::headless(&GpuOptions::default()) {
        Ok(c) => c,
        Err(e) => {
            println!("manager bench: no GPU adapter ({e}); nothing measured");
            return;
        }
    };
    println!("adapter: {}", ctx.adapter_name());
    let bytes = texture_bytes();
    println!(
        "| mode | textures | camera | frame mean µs | p50 µs | p95 µs | demand µs | planner µs | replans / {FRAMES} |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let counts: Vec<usize> = if quick {
        vec![100]
    } else if let Ok(n) = std::env::var("MIPFLOW_BENCH_TEXTURES") {
        n.split(',').filter_map(|v| v.trim().parse().ok()).collect()
    } else {
        vec![1_000, 10_000]
    };
    for count in counts {
        for mode in [Mode::OwnRenderer, Mode::Renderer] {
            for moving in [false, true] {
                let f = run(&ctx, mode, count, moving, &bytes);
                println!(
                    "| {} | {count} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {} |",
                    match mode {
                        Mode::OwnRenderer => "own renderer (MSAA set)",
                        Mode::Renderer => "Renderer's set",
                    },
                    if moving { "moving" } else { "steady" },
                    f.mean,
                    f.p50,
                    f.p95,
                    f.demand,
                    f.planner,
                    f.replans
                );
            }
        }
    }
}
