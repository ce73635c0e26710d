//! CPU simulation of the budget planner, no GPU.
//!
//! 1000 randomized runs: 10 to 5000 BC7 textures of 16² to 8192² (bytes per level
//! `ceil(w/4) * ceil(h/4) * 16`), budgets from below the floor to above the demand, 300 frames
//! of random visibility (view switches, camera moves, steady stretches), budget changes mid-run
//! (including a drop to a fifth at once), one or nine render-scale buckets, grows built after a
//! random IO latency of 0 to 5 frames, and 1% of them failing. Every plan is executed by the
//! library's reference executor ([`SimExecutor`]), which rejects any allocation past the plan's
//! limit. Asserted:
//! - the total is within the budget on every frame, transitions and builds included (the only
//!   exception is the frame at which the budget drops below the usage: there the total may only
//!   go down, and must be within the new budget once the plan's synchronous part has run);
//! - when demand (every floor, and every visible texture at its wanted level at the current
//!   scale) exceeds the limit, at least 90% of the budget is in use once converged. Converged:
//!   at least 150 frames into a stretch with no input change (the holds last 100 frames, IO at
//!   most 5), on a frame at which nothing was planned and nothing is in flight; every such frame
//!   is checked. Instead of 90%, a frame may show that nothing more fits at all: no texture can
//!   build its next level (the new texture next to the current total) and no missing floor fits.
//!   That happens when every texture that still wants more is large (each step is a texture
//!   about 4x larger, built next to the old one) and is counted separately. At most 2% of the stretches may lack a converged frame (a late wave of
//!   changes when holds expire); so far none does;
//! - in a steady view (no input change since a frame), no texture changes its resident mips
//!   twice within 100 frames (changes made at the frame of the input change itself are the
//!   reaction to it and not counted);
//! - the floors are resident on every frame at which the planner says they fit.
//!
//! A second test, `no_allocation_per_frame_after_warm_up`, counts the allocations `plan` makes
//! (through a counting global allocator, per thread) over 200 frames of a moving view, a budget
//! drop and a steady view once the scene has been warmed up: none.
//!
//! `PLANNER_SIM_RUNS=n` runs the first `n` seeds, `PLANNER_SIM_SEED=s` one seed, and
//! `PLANNER_SIM_TRACE=1` prints every frame's transitions.

use crate::common;

use std::time::Instant;

use mipflow::low_level::{
    BucketCost, Plan, PlanInput, PlanTexture, PlanTextures, Planner, SimExecutor, TransitionKind,
};

use mipflow::{PlanStatus, PlannerConfig};

use mipflow::testing::SplitMix64 as Rng;

const FRAMES: u64 = 300;
const HOLD: u64 = 100;
const OUTPUT_PIXELS: u64 = 1920 * 1080;

/// A BC7 chain for `w x h` with its floor at the first level no larger than 32x32 that may be a
/// texture's base (a multiple of the 4x4 block), as the streamer registers it.
fn bc7(textures: &mut PlanTextures, w: u32, h: u32) -> &mut PlanTexture {
    let mut levels = Vec::new();
    let (mut lw, mut lh) = (w, h);
    loop {
        levels.push(u64::from(lw.div_ceil(4)) * u64::from(lh.div_ceil(4)) * 16);
        if lw == 1 && lh == 1 {
            break;
        }
        lw = (lw / 2).max(1);
        lh = (lh / 2).max(1);
    }
    let count = levels.len() as u8;
    let bases = PlanTexture::block_aligned_bases(w, h, 4, 4, count);
    // A chain with no allowed base cannot be created: the streamer refuses it; here its last
    // level stands in (the planner's arithmetic does not care).
    let floor = PlanTexture::floor_for(w, h, 32, count, bases).unwrap_or(count - 1);
    let t = textures.push(&levels, floor);
    t.base_levels = bases | 1 << floor;
    t
}

/// Where one texture is in the view: its size on screen, or out of view.
#[derive(Clone, Copy)]
struct View {
    /// Largest side of the texture in texels.
    texels: f32,
    /// On-screen extent in pixels (largest side), 0 when out of view.
    extent: f32,
    coverage: f32,
    priority: f32,
    /// Demand as a histogram (what GPU feedback gives): a tenth of the pixels at the finest
    /// level, the rest two levels coarser.
    histogram: bool,
}

impl View {
    fn apply(&self, textures: &mut PlanTextures, i: usize) {
        textures.clear_histogram(i);
        if self.extent > 0.0 && self.histogram {
            let wanted = (self.texels / self.extent).log2().max(0.0) as usize;
            let pixels = self.extent * self.extent * self.coverage;
            let mut bins = [0.0f32; 16];
            bins[wanted.min(15)] += 0.1 * pixels;
            bins[(wanted + 2).min(15)] += 0.9 * pixels;
            textures.set_level_pixels(i, &bins);
        }
        let t = &mut textures[i];
        if self.extent > 0.0 && self.histogram {
        } else if self.extent > 0.0 {
            t.wanted_level = (self.texels / self.extent).log2();
            t.screen_pixels = self.extent * self.extent * self.coverage;
        } else {
            t.wanted_level = f32::INFINITY;
            t.screen_pixels = 0.0;
        }
        t.priority = self.priority;
    }
}

fn random_view(rng: &mut Rng, texels: f32, visible: f64, priority: f32) -> View {
    let extent = if rng.chance(visible) {
        rng.log_range(4.0, 2048.0) as f32
    } else {
        0.0
    };
    View {
        texels,
        extent,
        coverage: rng.range(0.1, 1.0) as f32,
        priority,
        histogram: rng.chance(0.3),
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Budget(u64),
    ViewSwitch { fraction: f64, visible: f64 },
    Move { frames: u64 },
}

/// What one run observed.
#[derive(Default, Debug)]
struct Report {
    textures: usize,
    fill_checks: u32,
    fill_ok: u32,
    fill_exempt: u32,
    min_fill: f64,
    too_small_frames: u32,
    steady_changes: u64,
    unsettled: u32,
    fill_sum: f64,
    replans: u32,
    transitions: u64,
    evictions: u64,
    rescales: u64,
    /// Re-plans, and textures those went through (the incremental planner skips quiet ones).
    planned_textures: u64,
    /// A hash of every plan of the run (see [`plan_digest`]).
    digest: u64,
}

/// Folds one plan into a run's digest: every field, the quality's bits included. The test prints
/// the digest of all runs, so that a change meant to be an optimization can be checked to change
/// no plan at all (`PLANNER_SIM_RUNS=200`: the same digest before and after).
fn plan_digest(mut h: u64, plan: &Plan, status: PlanStatus) -> u64 {
    let mut mix = |v: u64| h = (h ^ v).wrapping_mul(0x0000_0100_0000_01B3).rotate_left(29);
    for chunk in plan.target_level.chunks(8) {
        mix(chunk.iter().fold(0u64, |a, &l| a << 8 | u64::from(l)));
    }
    for t in &plan.transitions {
        mix(u64::from(t.texture) << 24
            | u64::from(t.from) << 16
            | u64::from(t.to) << 8
            | t.kind as u64);
    }
    mix(plan.bucket as u64);
    mix(plan.limit);
    mix(plan.steady_bytes);
    mix(plan.peak_bytes);
    mix(plan.floor_bytes);
    mix(plan.quality_cost.to_bits());
    mix(u64::from(plan.replanned));
    if let PlanStatus::BudgetTooSmall {
        floor_bytes,
        budget,
    } = status
    {
        mix(floor_bytes ^ budget.rotate_left(32));
    }
    h
}

/// Bytes the view wants: every floor, and each visible texture down to its wanted level at
/// this bucket's mip bias.
fn demand(textures: &PlanTextures, fixed: u64, bucket: BucketCost) -> u64 {
    let bias = -bucket.scale.log2();
    let mut total = fixed + bucket.bytes;
    for (i, t) in textures.iter().enumerate() {
        let w = t.wanted_level + bias;
        let level = if w < f32::from(t.level_count) {
            (w.max(0.0).floor() as u8).min(t.floor_level)
        } else {
            t.floor_level
        };
        // A texture that cannot start at that level needs the next finer one it can start at.
        let level = (0..=level)
            .rev()
            .find(|&k| k == t.floor_level || t.base_allowed(k))
            .unwrap_or(level);
        total += textures.bytes_from(i, level);
    }
    total
}

fn simulate(seed: u64) -> Report {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xD1B5_4A32_D192_ED03);
    let n = rng.log_range(10.0, 5000.0).round() as usize;
    let mut textures = PlanTextures::with_capacity(n);
    let mut views = Vec::with_capacity(n);
    let visible = rng.range(0.05, 0.9);
    for _ in 0..n {
        let side = |rng: &mut Rng| {
            if rng.chance(0.7) {
                1u32 << (4 + rng.below(10))
            } else {
                rng.log_range(16.0, 8192.0).round() as u32
            }
        };
        let w = side(&mut rng);
        let h = if rng.chance(0.7) { w } else { side(&mut rng) };
        bc7(&mut textures, w, h);
        let priority = if rng.chance(0.1) {
            rng.log_range(0.25, 4.0) as f32
        } else {
            1.0
        };
        let v = random_view(&mut rng, w.max(h) as f32, visible, priority);
        v.apply(&mut textures, views.len());
        views.push(v);
    }

    let buckets: Vec<BucketCost> = if rng.chance(0.5) {
        vec![BucketCost {
            scale: 1.0,
            bytes: OUTPUT_PIXELS * 16,
        }]
    } else {
        (8..=16)
            .map(|k| {
                let s = k as f32 / 16.0;
                BucketCost {
                    scale: s,
                    bytes: (OUTPUT_PIXELS as f64 * f64::from(s * s) * 16.0) as u64,
                }
            })
            .collect()
    };
    let fixed = rng.below(8 << 20);
    let floor_sum: u64 = (0..n)
        .map(|i| textures.bytes_from(i, textures[i].floor_level))
        .sum();
    let floor_bytes = fixed + buckets[0].bytes + floor_sum;
    let want = demand(&textures, fixed, *buckets.last().unwrap());
    let pick_budget = |rng: &mut Rng| -> u64 {
        if rng.chance(0.1) {
            // Below the floor (but the fixed bytes and smallest targets fit).
            let lo = (fixed + buckets[0].bytes + 1) as f64;
            rng.range(lo.max(floor_bytes as f64 * 0.5), floor_bytes as f64) as u64
        } else {
            let lo = floor_bytes as f64 * 1.02;
            rng.log_range(lo, (want as f64 * 1.3).max(lo * 1.01)) as u64
        }
    };
    let mut budget = pick_budget(&mut rng);
    let headroom_frac = if rng.chance(0.5) {
        0.0
    } else {
        rng.range(0.0, 0.05)
    };

    // Events: 1 to 3 between frames 20 and 130, then a steady stretch of at least 150 frames.
    let mut events: Vec<(u64, Event)> = Vec::new();
    let count = 1 + rng.below(3);
    let mut budget_changed = false;
    for k in 0..count {
        let frame = 20 + rng.below(110);
        let kind = rng.below(3);
        let ev = if kind == 0 || (k == count - 1 && !budget_changed && rng.chance(0.8)) {
            budget_changed = true;
            if rng.chance(0.35) {
                // A drop to a fifth or so at once (256 -> 48 MiB), mostly still above the floor.
                let cut = (budget as f64 * rng.range(0.15, 0.3)) as u64;
                Event::Budget(if rng.chance(0.7) {
                    cut.max(floor_bytes + floor_bytes / 50)
                } else {
                    cut
                })
            } else if rng.chance(0.15) {
                Event::Budget(0) // filled in below: under the floor
            } else {
                Event::Budget(u64::MAX) // filled in below: a new pick
            }
        } else if kind == 1 {
            Event::ViewSwitch {
                fraction: rng.range(0.2, 1.0),
                visible: rng.range(0.05, 0.9),
            }
        } else {
            Event::Move {
                frames: 5 + rng.below(16),
            }
        };
        events.push((frame, ev));
    }
    events.sort_by_key(|e| e.0);

    let mut config = PlannerConfig::default();
    config.min_frames_between_changes = HOLD as u32;
    // The full planner beside the incremental one (the default): every plan must be the same.
    let mut full = config.clone();
    full.incremental = false;
    let mut full_planner = Planner::new(full);
    let mut full_plan = Plan::default();
    let mut planner = Planner::new(config.clone());
    let mut plan = Plan::default();
    // A third planner told which textures changed (`plan_with_changes`): the textures that
    // differ from those of its previous call, and a few more at random (a caller's list may
    // name textures that did not change). Its plans must be the incremental ones.
    let mut hinted_planner = Planner::new(config);
    let mut hinted_plan = Plan::default();
    let mut hinted_seen = PlanTextures::new();
    let mut hints: Vec<u32> = Vec::new();
    // Its own generator: the run's is left as it was (the digest of the plans stays).
    let mut hint_rng = Rng(0x5EED_u64 ^ n as u64);
    let mut current_bucket = buckets.len() - 1;
    let mut exec = {
        let inp = PlanInput {
            frame: 0,
            budget,
            fixed_bytes: fixed,
            headroom: (budget as f64 * headroom_frac) as u64,
            output_pixels: OUTPUT_PIXELS,
            buckets: &buckets,
            current_bucket,
            textures: &textures,
        };
        SimExecutor::new(&inp)
    };

    let mut report = Report {
        textures: n,
        min_fill: 1.0,
        ..Report::default()
    };
    let mut in_flight: Vec<(u32, u64)> = Vec::new(); // (texture, frame its data is ready)
    let mut last_change = vec![0u64; n];
    // Whether texture i's last change brought its floor back from nothing.
    let mut floor_return = vec![false; n];
    let mut last_input_change = 0u64;
    let mut moving_until = 0u64;
    let mut ev_i = 0;
    let mut stretch_checked = false;
    let trace = std::env::var("PLANNER_SIM_TRACE").is_ok();
    let ctx = |frame: u64| format!("seed {seed}, frame {frame}, {n} textures");

    for frame in 0..FRAMES {
        // Inputs.
        let mut changed = frame == 0;
        while ev_i < events.len() && events[ev_i].0 == frame {
            match events[ev_i].1 {
                Event::Budget(b) => {
                    budget = match b {
                        0 => {
                            let lo = (fixed + buckets[0].bytes + 1) as f64;
                            rng.range(lo.max(floor_bytes as f64 * 0.5), floor_bytes as f64) as u64
                        }
                        u64::MAX => pick_budget(&mut rng),
                        b => b.max(fixed + buckets[0].bytes + 1),
                    };
                }
                Event::ViewSwitch { fraction, visible } => {
                    for (i, v) in views.iter_mut().enumerate() {
                        if rng.chance(fraction) {
                            *v = random_view(&mut rng, v.texels, visible, v.priority);
                            v.apply(&mut textures, i);
                        }
                    }
                }
                Event::Move { frames } => moving_until = frame + frames,
            }
            changed = true;
            ev_i += 1;
        }
        if frame < moving_until {
            // A camera move: a tenth of the textures change size on screen a little, and a few
            // come into or go out of view.
            for _ in 0..(n / 10).max(1) {
                let i = rng.below(n as u64) as usize;
                let v = &mut views[i];
                if rng.chance(0.05) {
                    *v = random_view(&mut rng, v.texels, 0.5, v.priority);
                } else if v.extent > 0.0 {
                    v.extent = (v.extent * rng.range(0.85, 1.18) as f32).clamp(1.0, 4096.0);
                }
                v.apply(&mut textures, i);
            }
            changed = true;
        }
        if changed {
            last_input_change = frame;
        }

        // Plan and run the synchronous part.
        let headroom = (budget as f64 * headroom_frac) as u64;
        let inp = PlanInput {
            frame,
            budget,
            fixed_bytes: fixed,
            headroom,
            output_pixels: OUTPUT_PIXELS,
            buckets: &buckets,
            current_bucket,
            textures: &textures,
        };
        let status = planner.plan(&inp, &mut plan);
        let full_status = full_planner.plan(&inp, &mut full_plan);
        assert_eq!(status, full_status, "{}: status", ctx(frame));
        hints.clear();
        if hinted_seen.len() == textures.len() {
            hints.extend(
                (0..textures.len())
                    .filter(|&i| !same_bits(&hinted_seen, &textures, i))
                    .map(|i| i as u32),
            );
        }
        for _ in 0..hint_rng.next() % 3 {
            hints.push((hint_rng.next() % textures.len().max(1) as u64) as u32);
        }
        let hinted_status = hinted_planner.plan_with_changes(&inp, &hints, &mut hinted_plan);
        hinted_seen.clone_from(&textures);
        assert_eq!(hinted_status, status, "{}: status (hinted)", ctx(frame));
        assert!(
            hinted_plan == plan
                && hinted_plan.quality_cost.to_bits() == plan.quality_cost.to_bits(),
            "{}: the plan told which textures changed differs from the one that checked them all",
            ctx(frame)
        );
        assert_eq!(plan.replanned, full_plan.replanned, "{}", ctx(frame));
        // `!=` takes -0.0 for +0.0: the blur's bits are compared too.
        if plan != full_plan || plan.quality_cost.to_bits() != full_plan.quality_cost.to_bits() {
            let first = plan
                .target_level
                .iter()
                .zip(&full_plan.target_level)
                .position(|(a, b)| a != b);
            if let Some(i) = first {
                eprintln!(
                    "texture {i}: {:?}; levels {} vs {}",
                    textures[i], plan.target_level[i], full_plan.target_level[i]
                );
            }
            panic!(
                "{}: the incremental plan differs from the full one (first target: {first:?}; \
                 transitions {} vs {}; bucket {} vs {}; quality {} vs {}; peak {} vs {})",
                ctx(frame),
                plan.transitions.len(),
                full_plan.transitions.len(),
                plan.bucket,
                full_plan.bucket,
                plan.quality_cost,
                full_plan.quality_cost,
                plan.peak_bytes,
                full_plan.peak_bytes
            );
        }
        report.digest = plan_digest(report.digest, &plan, status);
        if plan.replanned {
            report.planned_textures += planner.last_plan_textures() as u64;
        }
        let start = exec.total();
        exec.reset_peak();
        assert!(
            plan.limit <= budget,
            "{}: limit past the budget",
            ctx(frame)
        );
        assert!(
            plan.peak_bytes <= budget.max(start),
            "{}: planned peak {} past the budget {budget}",
            ctx(frame),
            plan.peak_bytes
        );
        assert_eq!(plan.target_level.len(), n);
        report.replans += u32::from(plan.replanned);
        report.transitions += plan.transitions.len() as u64;
        let snapshot: Vec<(u32, u8)> = plan
            .transitions
            .iter()
            .filter(|t| t.kind != TransitionKind::Rescale)
            .map(|t| (t.texture, textures[t.texture as usize].resident_level))
            .collect();
        if trace && !plan.transitions.is_empty() {
            eprintln!(
                "frame {frame}: {status:?} bucket {current_bucket}->{} total {start} steady {} \
                 peak {} limit {}: {:?}",
                plan.bucket,
                plan.steady_bytes,
                plan.peak_bytes,
                plan.limit,
                plan.transitions.iter().take(12).collect::<Vec<_>>()
            );
        }
        if let Err(e) = exec.apply(&plan, &buckets, &mut textures) {
            panic!("{}: {e}", ctx(frame));
        }
        current_bucket = exec.bucket();
        assert!(
            exec.total() <= budget,
            "{}: total {} past the budget {budget} after the plan ({status:?})",
            ctx(frame),
            exec.total()
        );
        assert!(exec.peak() <= budget.max(start), "{}", ctx(frame));
        for tr in &plan.transitions {
            match tr.kind {
                TransitionKind::Grow => {
                    let t = &textures[tr.texture as usize];
                    // A floor coming back needs no IO; other levels take 0 to 5 frames.
                    let latency = if tr.from == t.level_count {
                        0
                    } else {
                        rng.below(6)
                    };
                    in_flight.retain(|&(i, _)| i != tr.texture);
                    in_flight.push((tr.texture, frame + latency));
                }
                TransitionKind::Cancel => in_flight.retain(|&(i, _)| i != tr.texture),
                TransitionKind::Evict => report.evictions += 1,
                TransitionKind::Rescale => report.rescales += 1,
                TransitionKind::Shrink => {}
            }
        }

        // Builds whose data arrived, in random order, one at a time.
        let mut k = 0;
        let mut ready = Vec::new();
        while k < in_flight.len() {
            if in_flight[k].1 <= frame {
                ready.push(in_flight.swap_remove(k).0);
            } else {
                k += 1;
            }
        }
        for j in (1..ready.len()).rev() {
            let o = rng.below(j as u64 + 1) as usize;
            ready.swap(j, o);
        }
        let mut changes: Vec<u32> = snapshot
            .iter()
            .filter(|&&(i, r)| textures[i as usize].resident_level != r)
            .map(|&(i, _)| i)
            .collect();
        for &i in &ready {
            let t = textures[i as usize];
            let from_disk = t.resident_level != t.level_count;
            if from_disk && rng.chance(0.01) {
                exec.abandon(i, &mut textures); // an IO error: keeps what it had
                continue;
            }
            if let Err(e) = exec.build(i, &mut textures) {
                panic!("{}: {e}", ctx(frame));
            }
            changes.push(i);
        }
        assert!(
            exec.total() <= budget && exec.peak() <= budget.max(start),
            "{}: total {} / peak {} past the budget {budget}",
            ctx(frame),
            exec.total(),
            exec.peak()
        );

        // No texture changes twice within 100 frames of a steady view.
        changes.sort_unstable();
        changes.dedup();
        for &i in &changes {
            let i = i as usize;
            if frame > last_input_change {
                report.steady_changes += 1;
            }
            // A texture that no view wants is not held: it may give up more levels (never gain
            // any) within the hold.
            let t = &textures[i];
            let wanted = if t.histogram {
                textures.level_pixels(i).iter().any(|&p| p > 0.0)
            } else {
                t.screen_pixels > 0.0 && t.wanted_level.is_finite()
            };
            let before = snapshot
                .iter()
                .find(|&&(j, _)| j as usize == i)
                .map(|&(_, r)| r);
            let gave_up = before.is_some_and(|r| t.resident_level > r);
            // A floor brought back to a texture that had nothing resident starts no hold
            // while the floors fit: the texture's levels come in the next plans.
            let after_floor_return = floor_return[i] && status == PlanStatus::Ok;
            if frame > last_input_change
                && last_change[i] > last_input_change
                && (wanted || !gave_up)
                && !after_floor_return
            {
                assert!(
                    frame - last_change[i] >= HOLD,
                    "{}: texture {i} changed at frames {} and {frame} of a steady view since {} \
                     (from level {before:?} to {}, wanted {}, {} pixels)",
                    ctx(frame),
                    last_change[i],
                    last_input_change,
                    t.resident_level,
                    t.wanted_level,
                    t.screen_pixels
                );
            }
            last_change[i] = frame;
            floor_return[i] = before == Some(t.level_count) && t.resident_level == t.floor_level;
        }

        // Floors resident whenever they fit.
        match status {
            PlanStatus::Ok => {
                for (i, t) in textures.iter().enumerate() {
                    assert!(
                        t.resident_level <= t.floor_level,
                        "{}: texture {i} lacks its floor: {t:?}, target {}",
                        ctx(frame),
                        plan.target_level[i]
                    );
                }
            }
            PlanStatus::BudgetTooSmall { floor_bytes: f, .. } => {
                assert_eq!(f, floor_bytes, "{}", ctx(frame));
                report.too_small_frames += 1;
            }
        }

        // Fill, once converged: every frame at least 150 frames into a steady view at which
        // nothing was planned and nothing is in flight.
        let stretch_ends =
            frame + 1 == FRAMES || events.get(ev_i).is_some_and(|e| e.0 == frame + 1);
        let quiet = plan.transitions.is_empty() && in_flight.is_empty();
        let converged = frame >= last_input_change + 150 && quiet;
        if frame == last_input_change {
            stretch_checked = false;
        }
        if stretch_ends && frame >= last_input_change + 150 && !stretch_checked && !converged {
            report.unsettled += 1;
        }
        if converged {
            let bucket = buckets[current_bucket];
            let limit = plan.limit;
            if demand(&textures, fixed, bucket) > limit {
                let total = exec.total();
                let fill = total as f64 / budget as f64;
                let exempt = fill < 0.9;
                if exempt {
                    // Allowed only when nothing more fits at all: no texture can build its next
                    // level (the new texture next to the current total), no floor can return.
                    let bias = -bucket.scale.log2();
                    for (i, t) in textures.iter().enumerate() {
                        let r = t.resident_level;
                        let w = t.wanted_level + bias;
                        let wants = w < f32::from(t.level_count)
                            && (w.max(0.0).floor() as u8) < r.min(t.floor_level + 1);
                        let next = if r > t.floor_level {
                            t.floor_level
                        } else {
                            (0..r).rev().find(|&k| t.base_allowed(k)).unwrap_or(r)
                        };
                        let fits = total + textures.bytes_from(i, next) <= limit;
                        let could_grow = fits && (r > t.floor_level || (wants && next < r));
                        assert!(
                            !could_grow,
                            "{}: {:.1}% of the budget {budget} in use (limit {limit}), but \
                             texture {i} (resident {r}, wanted {w:.2}, floor {}) could grow \
                             ({status:?}, last change {}, steady since {last_input_change})",
                            ctx(frame),
                            fill * 100.0,
                            t.floor_level,
                            last_change[i],
                        );
                    }
                }
                if trace && exempt {
                    eprintln!(
                        "frame {frame}: {:.1}% in use, nothing more fits ({status:?}, limit {limit})",
                        fill * 100.0
                    );
                }
                if !stretch_checked {
                    stretch_checked = true;
                    report.fill_checks += 1;
                    report.fill_sum += fill;
                    if exempt {
                        report.fill_exempt += 1;
                    } else {
                        report.fill_ok += 1;
                        report.min_fill = report.min_fill.min(fill);
                    }
                }
            } else {
                stretch_checked = true;
            }
        }
    }
    report
}

#[test]
fn planner_simulation() {
    let runs: u64 = std::env::var("PLANNER_SIM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let seeds: Vec<u64> = match std::env::var("PLANNER_SIM_SEED") {
        Ok(s) => vec![s.parse().expect("PLANNER_SIM_SEED is a number")],
        Err(_) => (0..runs).collect(),
    };
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reports: Vec<(u64, Report)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let seeds = &seeds;
                s.spawn(move || {
                    seeds
                        .iter()
                        .skip(k)
                        .step_by(threads)
                        .map(|&seed| (seed, simulate(seed)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a simulation run failed"))
            .collect()
    });
    let sum = |f: &dyn Fn(&Report) -> u64| reports.iter().map(|(_, r)| f(r)).sum::<u64>();
    let checks = sum(&|r| u64::from(r.fill_checks));
    let ok = sum(&|r| u64::from(r.fill_ok));
    let exempt = sum(&|r| u64::from(r.fill_exempt));
    let min_fill = reports
        .iter()
        .map(|(_, r)| r.min_fill)
        .fold(1.0f64, f64::min);
    eprintln!(
        "{} runs ({} to {} textures) in {:.1} s: {} fill checks, {} at >= 90% (lowest {:.1}%), \
         mean {:.1}%, {} where nothing more fits; {} frames below the floor; {} re-plans of {} \
         frames (incremental and full plans identical on every frame; the re-plans went through \
         {:.1}% of the textures); {} transitions, {} evictions, {} rescales; {} changes in steady \
         views; {} stretches not settled",
        reports.len(),
        reports.iter().map(|(_, r)| r.textures).min().unwrap_or(0),
        reports.iter().map(|(_, r)| r.textures).max().unwrap_or(0),
        started.elapsed().as_secs_f64(),
        checks,
        ok,
        min_fill * 100.0,
        reports.iter().map(|(_, r)| r.fill_sum).sum::<f64>() * 100.0 / checks.max(1) as f64,
        exempt,
        sum(&|r| u64::from(r.too_small_frames)),
        sum(&|r| u64::from(r.replans)),
        reports.len() as u64 * FRAMES,
        sum(&|r| r.planned_textures) as f64 * 100.0
            / reports
                .iter()
                .map(|(_, r)| u64::from(r.replans) * r.textures as u64)
                .sum::<u64>()
                .max(1) as f64,
        sum(&|r| r.transitions),
        sum(&|r| r.evictions),
        sum(&|r| r.rescales),
        sum(&|r| r.steady_changes),
        sum(&|r| u64::from(r.unsettled)),
    );
    for (seed, r) in &reports {
        if r.fill_exempt > 0 {
            eprintln!("seed {seed}: {} textures, nothing more fits", r.textures);
        }
    }
    let mut digest = 0xCBF2_9CE4_8422_2325u64;
    let mut ordered: Vec<_> = reports.iter().map(|(seed, r)| (*seed, r.digest)).collect();
    ordered.sort_unstable();
    for (_, d) in ordered {
        digest = (digest ^ d).wrapping_mul(0x0000_0100_0000_01B3);
    }
    eprintln!("plan digest of the {} runs: {digest:016x}", reports.len());
    let unsettled = sum(&|r| u64::from(r.unsettled));
    assert!(
        unsettled * 50 <= checks,
        "{unsettled} stretches never converged"
    );
    assert!(
        checks >= reports.len() as u64 / 4 || reports.len() < 20,
        "too few fill checks"
    );
}

/// Counts this thread's allocations, so that the test below is not disturbed by the simulation
/// running on other threads of the same binary.

#[test]
fn no_allocation_per_frame_after_warm_up() {
    let mut rng = Rng(7);
    let mut textures = PlanTextures::new();
    for i in 0..2000 {
        let side = 1u32 << (4 + rng.below(10));
        bc7(&mut textures, side, side);
        random_view(&mut rng, side as f32, 0.5, 1.0).apply(&mut textures, i);
    }
    let buckets: Vec<BucketCost> = (8..=16)
        .map(|k| BucketCost {
            scale: k as f32 / 16.0,
            bytes: OUTPUT_PIXELS * k * k / 16,
        })
        .collect();
    let mut planner = Planner::default();
    let mut plan = Plan::default();
    let mut bucket = buckets.len() - 1;
    let run = |frame: u64,
               budget: u64,
               textures: &mut PlanTextures,
               bucket: &mut usize,
               planner: &mut Planner,
               plan: &mut Plan,
               execute: bool| {
        let snapshot = textures.clone();
        let inp = PlanInput {
            frame,
            budget,
            fixed_bytes: 1 << 20,
            headroom: 0,
            output_pixels: OUTPUT_PIXELS,
            buckets: &buckets,
            current_bucket: *bucket,
            textures: &snapshot,
        };
        let before = common::alloc::allocations();
        let _ = planner.plan(&inp, plan);
        let allocations = common::alloc::allocations() - before;
        if execute {
            let mut exec = SimExecutor::new(&inp);
            exec.apply(plan, &buckets, textures).unwrap();
            for i in 0..textures.len() {
                if textures[i].busy {
                    exec.build(i as u32, textures).unwrap();
                }
            }
            *bucket = exec.bucket();
        }
        allocations
    };
    // Warm-up: the scene converges, with a budget drop and a view change on the way, so that
    // every scratch buffer has seen its largest size.
    for frame in 0..400 {
        let budget = if (150..250).contains(&frame) {
            60 << 20
        } else {
            300 << 20
        };
        if frame == 300 {
            for i in 0..textures.len() {
                random_view(&mut rng, 1024.0, 0.5, 1.0).apply(&mut textures, i);
            }
        }
        run(
            frame,
            budget,
            &mut textures,
            &mut bucket,
            &mut planner,
            &mut plan,
            true,
        );
    }
    // Then: plans of a moving view (every frame planned again), a budget drop and a steady view.
    let mut total = 0;
    for frame in 400..600 {
        let budget = if (450..500).contains(&frame) {
            60 << 20
        } else {
            300 << 20
        };
        if frame < 450 {
            for t in textures.iter_mut() {
                if t.wanted_level.is_finite() {
                    t.wanted_level += if frame % 2 == 0 { 0.01 } else { -0.01 };
                }
            }
        }
        total += run(
            frame,
            budget,
            &mut textures,
            &mut bucket,
            &mut planner,
            &mut plan,
            false,
        );
    }
    assert_eq!(total, 0, "allocations while planning after warm-up");
}

/// The CPU twin of the GPU acceptance test: a gallery of 64 textures of 1024², all in view and
/// wanting level 0, with the budget going 256 -> 48 -> 256 MiB. Every wanted mip is resident
/// within a few frames whenever the budget allows, the total never passes the budget, and at
/// 48 MiB the budget is well used.
#[test]
fn gallery_256_48_256_mib() {
    const MIB: u64 = 1 << 20;
    let mut textures = PlanTextures::new();
    for i in 0..64 {
        let t = bc7(&mut textures, 1024, 1024);
        t.wanted_level = 0.0;
        t.screen_pixels = 20_000.0 + 1000.0 * i as f32;
    }
    let buckets = [BucketCost {
        scale: 1.0,
        bytes: 16 * MIB,
    }];
    let mut planner = Planner::default();
    let mut plan = Plan::default();
    let mut in_flight: Vec<(u32, u64)> = Vec::new();
    let mut exec: Option<SimExecutor> = None;
    for frame in 0..300u64 {
        let budget = if (100..200).contains(&frame) { 48 } else { 256 } * MIB;
        let inp = PlanInput {
            frame,
            budget,
            fixed_bytes: 4 * MIB,
            headroom: 2 * MIB,
            output_pixels: OUTPUT_PIXELS,
            buckets: &buckets,
            current_bucket: 0,
            textures: &textures,
        };
        let status = planner.plan(&inp, &mut plan);
        assert_eq!(status, PlanStatus::Ok);
        let exec = exec.get_or_insert_with(|| SimExecutor::new(&inp));
        let start = exec.total();
        exec.reset_peak();
        exec.apply(&plan, &buckets, &mut textures).unwrap();
        assert!(exec.total() <= budget, "frame {frame}");
        for tr in &plan.transitions {
            match tr.kind {
                TransitionKind::Grow => {
                    in_flight.retain(|&(i, _)| i != tr.texture);
                    in_flight.push((tr.texture, frame + 3));
                }
                TransitionKind::Cancel => in_flight.retain(|&(i, _)| i != tr.texture),
                _ => {}
            }
        }
        in_flight.retain(|&(i, ready)| {
            if ready <= frame {
                exec.build(i, &mut textures).unwrap();
                false
            } else {
                true
            }
        });
        assert!(exec.total() <= budget && exec.peak() <= budget.max(start));
        let all_wanted = textures.iter().all(|t| t.resident_level == 0);
        match frame {
            // Level 0 of all 64 (64 x 1.33 MiB) fits in 256 MiB: converged within 10 frames.
            10..100 | 210..300 => assert!(all_wanted, "frame {frame}"),
            130..200 => {
                let fill = exec.total() as f64 / budget as f64;
                assert!(fill >= 0.9, "frame {frame}: {:.1}%", fill * 100.0);
            }
            _ => {}
        }
    }
}

/// Whether two textures are the same field for field, floats by their bits (`==` takes -0.0
/// for +0.0, which the planner's change check does not).
fn same_bits(a: &PlanTextures, b: &PlanTextures, i: usize) -> bool {
    let bits = |s: &PlanTextures| {
        let t = &s[i];
        (
            [
                t.wanted_level.to_bits(),
                t.screen_pixels.to_bits(),
                t.priority.to_bits(),
            ],
            s.level_pixels(i).map(f32::to_bits),
        )
    };
    let rest = |s: &PlanTextures| {
        let t = &s[i];
        (
            t.level_count,
            t.floor_level,
            t.resident_level,
            t.in_flight_level,
            t.busy,
            t.histogram,
            t.base_levels,
            s.level_bytes(i).to_vec(),
        )
    };
    bits(a) == bits(b) && rest(a) == rest(b)
}
