//! The full replan: which textures are pinned, cooling or free, the scale bucket, the greedy
//! fill and the transitions, with the transient cost of each.

use super::*;

impl Planner {
    pub(super) fn replan(
        &mut self,
        input: &PlanInput<'_>,
        out: &mut Plan,
        scanned: bool,
    ) -> PlanStatus {
        let tex = input.textures;
        let n = tex.len();
        let frame = input.frame;
        self.fixed = input.fixed_bytes;
        self.output_pixels = input.output_pixels;

        // Buckets, sanitised: none means render targets are not the planner's business.
        let buckets_changed = !self.same_buckets(input.buckets);
        if buckets_changed {
            // Each bucket's cut was measured at its old mip bias.
            self.cuts.clear();
        }
        self.buckets.clear();
        if input.buckets.is_empty() {
            self.buckets.push(DEFAULT_BUCKET);
        } else {
            self.buckets
                .extend_from_slice(&input.buckets[..input.buckets.len().min(256)]);
        }
        let nb = self.buckets.len();
        let cur = input.current_bucket.min(nb - 1);
        // The least mip bias a plan may use: what a quiet texture is judged against.
        self.min_bias = (0..nb)
            .map(|b| self.mip_bias(b))
            .fold(f32::INFINITY, f32::min);

        // A frame counter that went backwards means a new run: forget every hold.
        let new_run = input.frame < self.last_frame;
        if new_run {
            self.history.clear();
            self.epoch_available = None;
            self.last_rescale = NEVER;
        }

        // A new budget (beyond the jitter tolerance) lifts every hold: the textures' levels were
        // chosen for another budget, and the planner must react at once.
        let available = input
            .budget
            .saturating_sub(input.headroom)
            .saturating_sub(input.fixed_bytes);
        let new_epoch = match self.epoch_available {
            None => true,
            Some(prev) => {
                let tol = f64::from(self.config.budget_tolerance.max(0.0));
                (available as f64 - prev as f64).abs() > tol * prev.max(1) as f64
                    || buckets_changed
                    || input.output_pixels != self.epoch_pixels
            }
        };
        if new_epoch {
            self.epoch_available = Some(available);
            self.epoch_pixels = input.output_pixels;
            self.epoch_frame = frame;
        }

        // Scratch sized to the scene: grows only when the scene does.
        if self.seen.len() != n {
            self.scale_dirty = true;
        }
        self.seen.resize(n, Seen::default());
        self.hashes.resize(n, 0);
        self.work.resize(n, Work::default());
        if self.history.len() < n {
            // An identity no texture has (level counts are at most 16): reset on first sight.
            let none = History::none();
            self.history.resize(n, none);
        }
        let resize = std::mem::take(&mut self.resize);

        // Which textures this plan goes through: all of them, or the changed and the active
        // ones (the quiet ones only add their floors, kept in `quiet_floor`).
        // New buckets: the quiet textures were judged against the old ones' least mip bias.
        let full = !scanned
            || buckets_changed
            || !self.config.incremental
            || resize
            || new_run
            || self.quiet.len() != n.div_ceil(64)
            || self.levels.len() != n;
        self.select(tex, full);

        // Pass 1: observe changes, sanitise, sizes; with them (fused: one pass over the
        // textures' lines instead of three) each texture's mode and its greedy items at the
        // current bucket, as if the floors fit and nothing is released. Checked below: when
        // the floors do not fit, the modes are decided again and the greedy runs in full; when
        // holds are released or the bucket moves, the modes stand (release edits them) and
        // only the greedy items are built again.
        let mut modes = self.modes(frame, new_epoch, false);
        let mut fill = self.fill_start(n, cur, false, true);
        let (mut floor_sum, resident_sum, mut view_changed) =
            self.observe(tex, frame, resize, scanned, Some((&mut modes, &mut fill)));
        let mut fused = true;
        view_changed |= new_epoch;
        let quiet = u64::try_from(self.quiet_floor).unwrap_or(u64::MAX);
        floor_sum = floor_sum.saturating_add(quiet);
        let mut sums = Sums {
            resident: resident_sum.saturating_add(quiet),
            ..Sums::default()
        };

        let mut floor_bytes = input
            .fixed_bytes
            .saturating_add(self.rt(self.cheapest()))
            .saturating_add(floor_sum);
        if floor_bytes > input.budget && !full {
            // The floors compete when they do not all fit: every texture takes part.
            self.select(tex, true);
            let (sum, resident_sum, _) = self.observe(tex, frame, false, scanned, None);
            fused = false;
            floor_sum = sum;
            sums.resident = resident_sum;
            floor_bytes = input
                .fixed_bytes
                .saturating_add(self.rt(self.cheapest()))
                .saturating_add(floor_sum);
        }
        let too_small = floor_bytes > input.budget;
        // Floors first: when they need part of the headroom they get it, as the headroom only
        // speeds streaming up while a missing floor leaves a texture with nothing to draw.
        let limit = if too_small {
            input.budget
        } else {
            input
                .budget
                .saturating_sub(input.headroom)
                .max(floor_bytes)
                .min(input.budget)
        };

        // Pass 2: modes (holds), and the sums that size the mandatory bytes; done in pass 1
        // unless the floors turned out not to fit.
        if too_small || !fused {
            fused = false;
            modes = self.modes(frame, new_epoch, too_small);
            for k in 0..self.list.len() {
                // As in `observe`: ask for the lines of a texture a dozen ahead now (at 100k
                // textures they have left the caches since).
                if let Some(&ahead) = self.list.get(k + super::PREFETCH_AHEAD) {
                    super::prefetch(self.work.get(ahead as usize));
                    super::prefetch(self.history.get(ahead as usize));
                }
                let i = self.list[k] as usize;
                modes.decide(tex.view(i), &mut self.work[i], &self.history[i]);
            }
        }
        let mut wake = modes.wake;
        sums = Sums {
            resident: sums.resident,
            ..modes.sums
        };

        // Mandatory bytes at a bucket for a release level: 0 holds everything, 1 lets the
        // cooling textures go, 2 also cancels the busy ones. The cheapest sacrifice comes first:
        // a hold is only policy, a cancelled grow only wastes IO, a lower scale blurs everything.
        let mandatory = |this: &Self, bucket: usize, release: u8| -> u64 {
            let (pinned, margin) = match release {
                0 => (
                    sums.busy_commit.saturating_add(sums.cool_resident),
                    sums.busy_margin,
                ),
                1 => (
                    sums.busy_commit.saturating_add(sums.cool_floor),
                    sums.busy_margin,
                ),
                _ => (sums.busy_floor.saturating_add(sums.cool_floor), 0),
            };
            input
                .fixed_bytes
                .saturating_add(this.rt(bucket))
                .saturating_add(pinned)
                .saturating_add(sums.free_floor)
                .saturating_add(margin)
        };
        // When floors do not fit, the smallest render targets leave the most for them.
        let mut bucket = if too_small { self.cheapest() } else { cur };
        let mut release = 0u8;
        while mandatory(self, bucket, release) > limit {
            if release < 2 {
                release += 1;
            } else if let Some(lower) = (0..bucket).rev().find(|&b| !self.dominated(b)) {
                // Down to the next bucket that costs less than every higher one.
                bucket = lower;
            } else {
                break;
            }
        }
        if release > 0 {
            for k in 0..self.list.len() {
                let w = &mut self.work[self.list[k] as usize];
                match w.mode {
                    Mode::Cooling => w.mode = Mode::Free,
                    Mode::Busy | Mode::Stale if release >= 2 => w.mode = Mode::Released,
                    _ => {}
                }
            }
            wake = NEVER; // nothing is cooling any more
        }

        if fused && release == 0 && bucket == cur {
            if self.fill_finish(fill, limit).is_none() {
                // The summary did not hold: the items again, every one.
                let _ = self.greedy_with(tex, bucket, limit, too_small, false);
            }
        } else {
            self.greedy(tex, bucket, limit, too_small);
        }

        // The render scale: plan the neighbouring buckets too and move while clearly better. Only
        // when a view or the budget changed: the textures decide in the same plan, so a steady
        // view never sees a rescale that its held textures could not follow.
        self.scale_dirty |= view_changed;
        let rescale_hold = u64::from(self.config.min_frames_between_rescales);
        let rescale_free = new_epoch
            || self.last_rescale == NEVER
            || frame >= self.last_rescale.saturating_add(rescale_hold);
        if !too_small && nb > 1 && self.scale_dirty {
            if rescale_free {
                self.scale_dirty = false;
                self.last_rescale = frame;
                let margin = f64::from(self.config.rescale_margin.max(0.0));
                let mut cost = self.cost(tex, bucket);
                // This bucket's fill, to come back to when no neighbour is better.
                self.save_fill();
                let first = bucket;
                let mut planned = bucket;
                let mut moved = false;
                for up in [true, false] {
                    if moved {
                        break;
                    }
                    loop {
                        // The neighbour, skipping buckets that a higher one dominates (no
                        // cheaper, and blurrier): they are never worth planning.
                        let next = if up {
                            (bucket + 1..nb).find(|&b| !self.dominated(b))
                        } else {
                            (0..bucket).rev().find(|&b| !self.dominated(b))
                        };
                        let Some(next) = next else {
                            break;
                        };
                        if mandatory(self, next, release) > limit {
                            break;
                        }
                        self.greedy(tex, next, limit, false);
                        planned = next;
                        let next_cost = self.cost(tex, next);
                        let at_stake = self.output_pixels as f64
                            * (self.scale_blur(bucket) - self.scale_blur(next)).abs()
                            * self.scale_weight();
                        if !(next_cost < cost && cost - next_cost >= margin * at_stake) {
                            break;
                        }
                        bucket = next;
                        cost = next_cost;
                        moved = true;
                    }
                }
                if planned != bucket {
                    // The chosen bucket's targets again: kept, or planned again.
                    if bucket == first {
                        self.restore_fill();
                        #[cfg(debug_assertions)]
                        self.check_restored(tex, bucket, limit);
                    } else {
                        self.greedy(tex, bucket, limit, false);
                    }
                }
            } else {
                // A view changed during the hold: evaluate once it is over.
                wake = wake.min(self.last_rescale.saturating_add(rescale_hold));
            }
        }
        if bucket != cur {
            self.last_rescale = frame;
        }

        let quality = self.transitions(
            tex,
            input,
            cur,
            bucket,
            limit,
            too_small,
            new_epoch,
            sums.resident,
            out,
        );
        out.target_level.clear();
        out.target_level.extend_from_slice(&self.levels);
        out.bucket = bucket;
        out.limit = limit;
        out.floor_bytes = floor_bytes;
        out.quality_cost = quality;
        out.memory_price = self.price;
        out.replanned = true;
        self.wake = wake;
        if too_small {
            PlanStatus::BudgetTooSmall {
                floor_bytes,
                budget: input.budget,
            }
        } else {
            PlanStatus::Ok
        }
    }

    /// Deciding the listed textures' modes for this frame ([`Modes::decide`]), none yet.
    fn modes(&self, frame: u64, new_epoch: bool, too_small: bool) -> Modes {
        Modes {
            frame,
            hold: u64::from(self.config.min_frames_between_changes),
            epoch_frame: self.epoch_frame,
            new_epoch,
            too_small,
            wanted_tolerance: self.config.wanted_tolerance,
            pixels_tolerance: self.config.pixels_tolerance,
            // The quiet textures are free, at their floors (none when the floors compete).
            sums: Sums {
                free_floor: u64::try_from(self.quiet_floor).unwrap_or(u64::MAX),
                ..Sums::default()
            },
            wake: NEVER,
        }
    }
}
