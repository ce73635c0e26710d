//! Ordering a plan's drops and grows into transitions whose transients never pass the limit.

use super::*;

impl Planner {
    /// Order the drops of the current targets, starting from `total`, into `self.drop_seq`, and
    /// return how many had to be evicted to their floor instead of shrunk, and the peak.
    ///
    /// To the floor (or to nothing) an eviction loses nothing and needs no room, so those go
    /// first; the rest shrink smallest new texture first (each shrink needs room for its new
    /// texture next to the old one), and when no remaining shrink fits, the drop whose kept
    /// levels are worth least per byte is evicted to its floor instead, until the rest fit.
    pub(super) fn order_drops(
        &mut self,
        tex: &PlanTextures,
        mut total: u64,
        limit: u64,
        mb: f32,
    ) -> (usize, u64) {
        self.drop_seq.clear();
        self.shrinks.clear();
        self.evicts.clear();
        let mut peak = total;
        // The drops the last greedy fill found (the only textures whose `done` is read).
        for k in 0..self.scratch.drops.len() {
            let i = self.scratch.drops[k] as usize;
            let (t, w) = (tex.view(i), &mut self.work[i]);
            w.done = false;
            if w.target >= w.floor {
                self.drop_seq.push(Drop {
                    texture: i as u32,
                    to: w.target,
                    kind: TransitionKind::Evict,
                    forced: w.mode == Mode::Evicted,
                });
                total = total
                    .saturating_sub(w.resident_bytes)
                    .saturating_add(w.bytes_at(t, w.target));
                w.done = true;
                continue;
            }
            let kept_value = w.gain(t, w.floor, w.target, mb);
            let freed = w.resident_bytes.saturating_sub(w.floor_bytes).max(1);
            let ratio = (kept_value / freed as f32).max(0.0);
            self.shrinks.push((w.bytes_at(t, w.target), i as u32));
            self.evicts.push((ratio.to_bits(), i as u32));
        }
        self.shrinks.sort_unstable();
        self.evicts.sort_unstable();
        let (mut si, mut ei, mut forced) = (0, 0, 0);
        loop {
            while si < self.shrinks.len() && self.work[self.shrinks[si].1 as usize].done {
                si += 1;
            }
            let Some(&(new_bytes, i)) = self.shrinks.get(si) else {
                break;
            };
            if total.saturating_add(new_bytes) <= limit {
                let w = &mut self.work[i as usize];
                self.drop_seq.push(Drop {
                    texture: i,
                    to: w.target,
                    kind: TransitionKind::Shrink,
                    forced: false,
                });
                peak = peak.max(total.saturating_add(new_bytes));
                total = total
                    .saturating_sub(w.resident_bytes)
                    .saturating_add(new_bytes);
                w.done = true;
                si += 1;
            } else {
                // Some drop is not done yet, so this finds one.
                while self.work[self.evicts[ei].1 as usize].done {
                    ei += 1;
                }
                let j = self.evicts[ei].1;
                let w = &mut self.work[j as usize];
                self.drop_seq.push(Drop {
                    texture: j,
                    to: w.floor,
                    kind: TransitionKind::Evict,
                    forced: true,
                });
                total = total
                    .saturating_sub(w.resident_bytes)
                    .saturating_add(w.floor_bytes);
                w.target = w.floor;
                w.done = true;
                forced += 1;
            }
        }
        (forced, peak)
    }

    /// Turn the targets into ordered transitions in `out`, fill `peak_bytes` and
    /// `steady_bytes`, and return the plan's blur (see [`Planner::post_pass`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transitions(
        &mut self,
        tex: &PlanTextures,
        input: &PlanInput<'_>,
        cur: usize,
        bucket: usize,
        limit: u64,
        compete: bool,
        new_epoch: bool,
        resident_sum: u64,
        out: &mut Plan,
    ) -> f64 {
        let mb = self.mip_bias(bucket);
        let start = input
            .fixed_bytes
            .saturating_add(self.rt(cur))
            .saturating_add(resident_sum);
        // A lower scale frees bytes before any drop needs room; a higher one waits for the drops.
        let down = bucket != cur && self.rt(bucket) <= self.rt(cur);
        let after_rescale = if down {
            (start - self.rt(cur).min(start)).saturating_add(self.rt(bucket))
        } else {
            start
        };
        // A drop whose shrink has no room (its new texture next to the old one) has to be
        // evicted to its floor instead, which loses more than the drop was meant to. So the
        // plan is made twice: with those textures kept as they are, and with them evicted and
        // the freed bytes given to others; the one with less blur wins (keeping on a tie, and
        // evicting when keeping does not fit: the budget fell below the usage). A shrink that
        // still has no room in the winning plan is evicted where it stands.
        let (forced, mut peak) = self.order_drops(tex, after_rescale, limit, mb);
        if forced > 0 {
            self.forced.clear();
            self.forced
                .extend(self.drop_seq.iter().filter(|d| d.forced).map(|d| d.texture));
            for &i in &self.forced {
                self.work[i as usize].mode = Mode::Evicted;
            }
            self.greedy(tex, bucket, limit, compete);
            let evict_cost = self.cost(tex, bucket);
            for &i in &self.forced {
                self.work[i as usize].mode = Mode::Kept;
            }
            let keep_fits = self.greedy(tex, bucket, limit, compete);
            if !keep_fits || self.cost(tex, bucket) > evict_cost {
                for &i in &self.forced {
                    self.work[i as usize].mode = Mode::Evicted;
                }
                self.greedy(tex, bucket, limit, compete);
            }
            // The targets changed: order the drops again (with nothing forced, the first
            // ordering is the one: `order_drops` depends only on the targets and modes).
            peak = self.order_drops(tex, after_rescale, limit, mb).1;
        }
        peak = peak.max(start);

        out.transitions.clear();
        // One pass over the listed textures for everything that is per texture: cancels (they
        // free nothing but must precede any other transition of the texture), the builds'
        // bound, the decisions to remember, the outputs and which textures are quiet now.
        let post = self.post_pass(tex, input.frame, bucket, !compete, out);
        let list = &mut out.transitions;
        let rescale = Transition {
            texture: Transition::RENDER_TARGETS,
            from: cur as u8,
            to: bucket as u8,
            kind: TransitionKind::Rescale,
        };
        if down {
            list.push(rescale);
        }
        let mut total = after_rescale;
        for d in &self.drop_seq {
            let w = &self.work[d.texture as usize];
            list.push(Transition {
                texture: d.texture,
                from: w.resident,
                to: d.to,
                kind: d.kind,
            });
            total =
                total.saturating_sub(w.resident_bytes) + tex.bytes_from(d.texture as usize, d.to);
            // Forced by a new budget, not chosen: the texture must be free to grow back at once.
            if d.forced && new_epoch {
                self.history[d.texture as usize].exempt = true;
            }
        }
        if bucket != cur && !down {
            list.push(rescale);
            peak = peak.max((total - self.rt(cur).min(total)).saturating_add(self.rt(bucket)));
        }

        // Grows, most valuable first (the greedy's order; missing floors before anything): the
        // IO queue serves requests in order, so the largest gains per byte land soonest.
        let mut pending = false;
        let mut margin = 0u64;
        for &i in &self.scratch.growers {
            let w = &self.work[i as usize];
            if w.target >= w.resident {
                continue;
            }
            pending = true;
            margin = margin.max(w.resident_bytes);
            if w.keeps_flight() && w.target == w.flight {
                continue; // still wanted: stays in flight
            }
            list.push(Transition {
                texture: i,
                from: w.resident,
                to: w.target,
                kind: TransitionKind::Grow,
            });
        }

        // The builds' bound: every build, in any order, stays within the steady total plus the
        // largest old texture alive during a build (busy ones at max(old, new) until they land).
        let (bound, steady) = (post.bound, post.steady);
        pending |= post.pending;
        margin = margin.max(post.margin);
        if pending {
            peak = peak.max(bound.saturating_add(margin));
        }
        out.peak_bytes = peak;
        out.steady_bytes = steady;

        post.quality
    }
}
