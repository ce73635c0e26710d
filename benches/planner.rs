//! Planner time per frame at 1k and 10k textures (issue 4; goal: at most 50 µs at 10k in a
//! steady view).
//!
//! Each scene is random BC7 textures of 16² to 8192², about half of them in view, a budget of
//! about half the demand and nine render-scale buckets. It is first run to convergence (plans
//! executed through [`SimExecutor`], grows built at once) and past every hold. Then:
//! - `steady`: the view does not change; each frame costs the change check of every texture.
//! - `moving`: every visible texture's wanted level moves by 0.01 each frame (a slow dolly), so
//!   every frame is planned again from scratch.
//!
//! `cargo bench --bench planner`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mipflow::budget::planner::{Plan, PlanInput, PlanTexture, Planner, ScaleBucket, SimExecutor};

const OUTPUT_PIXELS: u64 = 1920 * 1080;

/// A deterministic generator for the scenes (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A BC7 chain for `side x side` with its floor at the first level no larger than 32x32.
fn bc7(side: u32) -> PlanTexture {
    let mut levels = Vec::new();
    let mut s = side;
    let mut floor = 0;
    loop {
        if s > 32 {
            floor += 1;
        }
        levels.push(u64::from(s.div_ceil(4)).pow(2) * 16);
        if s == 1 {
            break;
        }
        s /= 2;
    }
    PlanTexture::new(&levels, floor)
}

struct Scene {
    textures: Vec<PlanTexture>,
    buckets: Vec<ScaleBucket>,
    budget: u64,
    frame: u64,
    bucket: usize,
    planner: Planner,
    plan: Plan,
}

fn input<'a>(
    textures: &'a [PlanTexture],
    buckets: &'a [ScaleBucket],
    budget: u64,
    frame: u64,
    bucket: usize,
) -> PlanInput<'a> {
    PlanInput {
        frame,
        budget,
        fixed_bytes: 4 << 20,
        headroom: budget / 50,
        output_pixels: OUTPUT_PIXELS,
        buckets,
        current_bucket: bucket,
        textures,
    }
}

impl Scene {
    fn new(n: usize) -> Self {
        let mut rng = Rng(n as u64);
        let mut textures = Vec::with_capacity(n);
        let mut demand = 0u64;
        for _ in 0..n {
            let side = 1u32 << (4 + rng.next() % 10);
            let mut t = bc7(side);
            if rng.unit() < 0.5 {
                let extent = 4.0 * 512f32.powf(rng.unit());
                t.wanted_level = (side as f32 / extent).log2();
                t.screen_pixels = extent * extent * 0.5;
                let level = (t.wanted_level.max(0.0) as u8).min(t.floor_level);
                demand += t.bytes_from(level);
            } else {
                demand += t.bytes_from(t.floor_level);
            }
            textures.push(t);
        }
        let buckets: Vec<ScaleBucket> = (8..=16)
            .map(|k| {
                let s = k as f32 / 16.0;
                ScaleBucket {
                    scale: s,
                    bytes: (OUTPUT_PIXELS as f64 * f64::from(s * s) * 16.0) as u64,
                }
            })
            .collect();
        let mut scene = Self {
            textures,
            bucket: buckets.len() - 1,
            buckets,
            budget: demand / 2 + OUTPUT_PIXELS * 16,
            frame: 0,
            planner: Planner::default(),
            plan: Plan::default(),
        };
        scene.converge();
        scene
    }

    /// Plans and executes frames (every grow built at once) until nothing changed for 250
    /// frames, which is past every hold.
    fn converge(&mut self) {
        let mut quiet = 0;
        while quiet < 250 {
            let snapshot = self.textures.clone();
            let inp = input(
                &snapshot,
                &self.buckets,
                self.budget,
                self.frame,
                self.bucket,
            );
            let _ = self.planner.plan(&inp, &mut self.plan);
            let mut exec = SimExecutor::new(&inp);
            exec.apply(&self.plan, &self.buckets, &mut self.textures)
                .expect("the plan keeps the contract");
            for i in 0..self.textures.len() {
                if self.textures[i].busy {
                    exec.build(i as u32, &mut self.textures)
                        .expect("builds keep the contract");
                }
            }
            self.bucket = exec.bucket();
            quiet = if self.plan.transitions.is_empty() {
                quiet + 1
            } else {
                0
            };
            self.frame += 1;
        }
    }

    /// One frame's plan (not executed); whether it was planned again.
    fn plan_frame(&mut self) -> bool {
        self.frame += 1;
        let inp = input(
            &self.textures,
            &self.buckets,
            self.budget,
            self.frame,
            self.bucket,
        );
        let _ = self.planner.plan(&inp, &mut self.plan);
        self.plan.replanned
    }
}

fn planner(c: &mut Criterion) {
    let mut group = c.benchmark_group("planner");
    for n in [1_000, 10_000] {
        let mut scene = Scene::new(n);
        assert!(!scene.plan_frame(), "converged scene re-planned");
        group.bench_function(BenchmarkId::new("steady", n), |b| {
            b.iter(|| black_box(scene.plan_frame()))
        });
        let mut sign = 1.0;
        group.bench_function(BenchmarkId::new("moving", n), |b| {
            b.iter(|| {
                sign = -sign;
                for t in &mut scene.textures {
                    if t.wanted_level.is_finite() {
                        t.wanted_level += 0.01 * sign;
                    }
                }
                black_box(scene.plan_frame())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, planner);
criterion_main!(benches);
