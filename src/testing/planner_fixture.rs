//! The planner's benchmark scene, one definition for `benches/planner.rs` (criterion) and
//! `mipflow bench` (its planner row): `n` random BC7 textures of 16² to 8192², about half of them
//! in view, a budget of about half the demand, nine render-scale buckets at 1080p.

use super::SplitMix64 as Rng;
use crate::budget::planner::{
    BucketCost, Plan, PlanInput, PlanTexture, PlanTextures, Planner, PlannerConfig, SimExecutor,
};

/// Output pixels of the scene (1080p).
pub const OUTPUT_PIXELS: u64 = 1920 * 1080;

/// A BC7 chain for `side x side` (a power of two), added to `textures` with its floor at the
/// first level no larger than 32x32.
pub fn bc7_chain(textures: &mut PlanTextures, side: u32) -> &mut PlanTexture {
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
    textures.push(&levels, floor)
}

/// The scene and its planner.
pub struct BenchScene {
    /// Every texture (executed plans applied).
    pub textures: PlanTextures,
    /// The render-scale buckets.
    pub buckets: Vec<BucketCost>,
    /// The budget.
    pub budget: u64,
    /// The next frame number.
    pub frame: u64,
    /// The current bucket.
    pub bucket: usize,
    /// The planner.
    pub planner: Planner,
    /// Its last plan.
    pub plan: Plan,
    /// The textures in view (those [`BenchScene::move_view`] moves), once asked for.
    in_view: Vec<u32>,
}

impl BenchScene {
    /// The scene with `n` textures (seeded by `n`), about half of them in view, not yet
    /// converged, planned by the default planner.
    pub fn new(n: usize) -> Self {
        Self::with(n, 0.5, PlannerConfig::default())
    }

    /// The scene with `n` textures (seeded by `n`), a share `visible` of them in view (an open
    /// world sees a few percent of what it has registered), planned with `config`.
    pub fn with(n: usize, visible: f64, config: PlannerConfig) -> Self {
        let mut rng = Rng(n as u64);
        let mut textures = PlanTextures::with_capacity(n);
        let mut demand = 0u64;
        for i in 0..n {
            let side = 1u32 << (4 + rng.next() % 10);
            let t = bc7_chain(&mut textures, side);
            let level = if f64::from(rng.unit()) < visible {
                let extent = 4.0 * 512f32.powf(rng.unit());
                t.wanted_level = (side as f32 / extent).log2();
                t.screen_pixels = extent * extent * 0.5;
                (t.wanted_level.max(0.0) as u8).min(t.floor_level)
            } else {
                t.floor_level
            };
            demand += textures.bytes_from(i, level);
        }
        let buckets: Vec<BucketCost> = (8..=16)
            .map(|k| {
                let s = k as f32 / 16.0;
                BucketCost {
                    scale: s,
                    bytes: (OUTPUT_PIXELS as f64 * f64::from(s * s) * 16.0) as u64,
                }
            })
            .collect();
        Self {
            textures,
            bucket: buckets.len() - 1,
            buckets,
            budget: demand / 2 + OUTPUT_PIXELS * 16,
            frame: 0,
            planner: Planner::new(config),
            plan: Plan::default(),
            in_view: Vec::new(),
        }
    }

    fn input<'a>(&self, textures: &'a PlanTextures, buckets: &'a [BucketCost]) -> PlanInput<'a> {
        PlanInput {
            frame: self.frame,
            budget: self.budget,
            fixed_bytes: 4 << 20,
            headroom: self.budget / 50,
            output_pixels: OUTPUT_PIXELS,
            buckets,
            current_bucket: self.bucket,
            textures,
        }
    }

    /// Plans and executes frames through [`SimExecutor`] (every grow built at once) until
    /// nothing changed for 250 frames, past every hold. Returns the frames it took, or why it
    /// stopped (a contract violation, or no convergence within `max_frames`).
    pub fn converge(&mut self, max_frames: u64) -> Result<u64, String> {
        let start = self.frame;
        let mut quiet = 0;
        while quiet < 250 {
            if self.frame - start > max_frames {
                return Err(format!("did not converge in {max_frames} frames"));
            }
            let snapshot = self.textures.clone();
            let inp = self.input(&snapshot, &self.buckets);
            let _ = self.planner.plan(&inp, &mut self.plan);
            let mut exec = SimExecutor::new(&inp);
            exec.apply(&self.plan, &self.buckets, &mut self.textures)
                .map_err(|e| format!("contract violation while converging: {e}"))?;
            for i in 0..self.textures.len() {
                if self.textures[i].busy {
                    exec.build(i as u32, &mut self.textures)
                        .map_err(|e| format!("contract violation in a build: {e}"))?;
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
        Ok(self.frame - start)
    }

    /// One frame's plan (not executed); whether it was planned again.
    pub fn plan_frame(&mut self) -> bool {
        self.frame += 1;
        let inp = self.input(&self.textures, &self.buckets);
        let _ = self.planner.plan(&inp, &mut self.plan);
        self.plan.replanned
    }

    /// [`BenchScene::plan_frame`] told which textures changed since the previous plan: those
    /// [`BenchScene::move_view`] moves (every texture in view), as a caller that knows its
    /// changes does ([`Planner::plan_with_changes`]). Only after a `move_view` (or none).
    pub fn plan_frame_with_changes(&mut self) -> bool {
        self.frame += 1;
        if self.in_view.is_empty() {
            self.in_view = (0..self.textures.len() as u32)
                .filter(|&i| self.textures[i as usize].wanted_level.is_finite())
                .collect();
        }
        let inp = self.input(&self.textures, &self.buckets);
        let _ = self
            .planner
            .plan_with_changes(&inp, &self.in_view, &mut self.plan);
        self.plan.replanned
    }

    /// Moves every visible texture's wanted level by `delta` (a slow dolly): the next plan
    /// starts from scratch.
    pub fn move_view(&mut self, delta: f32) {
        for t in self.textures.as_mut_slice() {
            if t.wanted_level.is_finite() {
                t.wanted_level += delta;
            }
        }
    }
}
