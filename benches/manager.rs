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
//! Then an open world: 100k registered textures (128² BC7) along a corridor the camera flies
//! down (one texture pair a frame), of which the game's own culling gives demand to the 5k
//! nearest ahead each frame, as a game with a spatial index does. What it shows: the frame's
//! cost follows the textures given demand and the grows in flight, not the textures registered
//! (`MIPFLOW_BENCH_OPEN_WORLD=0` skips it; `=N` registers N).
//!
//! `cargo bench --bench manager`. Prints a table (mean, p50, p95 of the frame in µs, and the
//! planner's own share). Without a GPU adapter it says so and exits.

use std::time::Instant;

use glam::{Mat4, Vec3};
use mipflow::{
    Budget, BudgetManager, Camera, DemandView, FrameTiming, GpuConfig, GpuContext, ManagerConfig,
    TextureOptions, TextureSource,
};
use mipflow::{TargetSet, TargetSpec};

const SIDE: u32 = 256;
const OUTPUT: (u32, u32) = (1280, 720);
const WARMUP: usize = 60;
const FRAMES: usize = 200;

fn texture_bytes() -> Vec<u8> {
    let mut rng = mipflow::testing::SplitMix64(7);
    mipflow::testing::bc7_ktx2(SIDE, || rng.next() as u8)
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
        let (td, dt) = timed_frame(&mut m, &camera, &mut prev, &panels);
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
    let ctx = match GpuContext::headless(&GpuConfig::default()) {
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
    let registered: usize = std::env::var("MIPFLOW_BENCH_OPEN_WORLD")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(if quick { 2_000 } else { 100_000 });
    if registered > 0 {
        open_world(&ctx, registered, (registered / 20).max(1));
    }
}

/// One frame of a game: the demand view of `camera` (guard band, and the look-ahead from
/// `prev`, the last frame's view, updated here), a sphere's demand for each of `panels`, then
/// `frame` and `end_frame`. Returns the demand's and the whole frame's time (µs).
fn timed_frame(
    m: &mut BudgetManager,
    camera: &Camera,
    prev: &mut Option<Mat4>,
    panels: &[(mipflow::TextureHandle, Vec3)],
) -> (f64, f64) {
    let t0 = Instant::now();
    let mut view = DemandView::new(camera, OUTPUT).with_guard_band(2.0);
    if let Some(p) = *prev {
        view = view.with_look_ahead(p);
    }
    for &(h, center) in panels {
        m.add_demand_sphere(h, &view, center, 0.7, 1.0);
    }
    let td = t0.elapsed().as_secs_f64() * 1e6;
    let plan = m.frame(OUTPUT, FrameTiming::default()).expect("frame");
    m.end_frame();
    let dt = t0.elapsed().as_secs_f64() * 1e6;
    *prev = Some(camera.view);
    std::hint::black_box(plan);
    (td, dt)
}

/// The open world of the module documentation: `registered` textures, `window` given demand.
fn open_world(ctx: &GpuContext, registered: usize, window: usize) {
    let bytes = mipflow::testing::bc7_ktx2(128, || 0x5A);
    let mut c = ManagerConfig::default();
    // Every floor (about 1.4 KiB each) and the window's full chains fit.
    c.budget = Budget::bytes(1 << 30);
    let mut m = BudgetManager::new(ctx.device().clone(), ctx.queue().clone(), c).expect("manager");
    let source = TextureSource::bytes(bytes);
    let t0 = Instant::now();
    // Texture i on the left or right wall, half a unit further down the corridor per index.
    // Registered a tile of 1000 at a time (`add_textures`: the floors uploaded together).
    let mut panels: Vec<(mipflow::TextureHandle, Vec3)> = Vec::with_capacity(registered);
    while panels.len() < registered {
        let tile = (registered - panels.len()).min(1000);
        let handles =
            m.add_textures((0..tile).map(|_| (source.clone(), TextureOptions::default())));
        for h in handles {
            let i = panels.len();
            let x = if i.is_multiple_of(2) { -2.0 } else { 2.0 };
            panels.push((h.expect("add"), Vec3::new(x, 1.5, -(i as f32) * 0.5)));
        }
    }
    let setup_s = t0.elapsed().as_secs_f64();
    let frames = (registered / 2)
        .saturating_sub(window / 2)
        .min(WARMUP + FRAMES);
    let (mut frame_us, mut demand_us, mut planner_us) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest_us = Vec::new();
    let mut prev: Option<Mat4> = None;
    for f in 0..frames {
        // One texture pair a frame, looking 10 units down the corridor.
        let z = -(f as f32) * 1.0;
        let camera = Camera::look_at(Vec3::new(0.0, 1.6, z), Vec3::new(0.0, 1.6, z - 10.0));
        // The game's culling: from a few pairs behind the camera, the `window` nearest ahead.
        let first = (2 * f).saturating_sub(40);
        let seen = &panels[first..(first + window).min(registered)];
        let (td, dt) = timed_frame(&mut m, &camera, &mut prev, seen);
        if f >= WARMUP.min(frames / 2) {
            let planner = f64::from(m.streamer().frame_stats().planner_us);
            frame_us.push(dt);
            demand_us.push(td);
            planner_us.push(planner);
            rest_us.push(dt - td - planner);
        }
        if f % 8 == 0 {
            let _ = ctx.wait_idle();
        }
    }
    let p = |v: &mut Vec<f64>, q: usize| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() * q / 100).copied().unwrap_or(0.0)
    };
    let n = frame_us.len();
    println!();
    println!(
        "open world: {registered} textures registered ({setup_s:.1} s to add in tiles of 1000: {:.1} µs a texture), {window} given demand a frame, camera flying (one pair a frame), {n} frames",
        setup_s * 1e6 / registered as f64
    );
    println!("| frame p50 µs | frame p95 µs | demand p50 µs | planner p50 µs | rest p50 µs |");
    println!("|---|---|---|---|---|");
    println!(
        "| {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
        p(&mut frame_us, 50),
        p(&mut frame_us, 95),
        p(&mut demand_us, 50),
        p(&mut planner_us, 50),
        p(&mut rest_us, 50)
    );
}
