//! The incremental part of a plan: which textures it goes through, and the quiet ones it can
//! skip (see [`PlannerConfig::incremental`]).
//!
//! Why skipping a quiet texture gives exactly the plan of a full pass: it is at its floor, not
//! busy and past its hold, so its mode is `Free` and its target its floor; it asks for nothing
//! finer than its floor at any mip bias of the plan's buckets (no pixels, not in view: NaN and
//! infinity count as not in view, or every pixel wants the floor or coarser), so its blur at
//! the floor is exactly 0 (float sums are unchanged bit for bit) and every mip step it could
//! take gains 0 minus a blur, never more, so the greedy makes no item of it; and it adds its
//! floor bytes to the integer sums, which are kept exact in a `u128` (the saturating sums of
//! non-negative terms do not depend on their order). When the floors do not all fit, they
//! compete like any step, so such a frame goes through every texture; new buckets judge every
//! texture again. A quiet texture whose inputs change is planned again, unless its new inputs
//! keep it quiet (checked by [`Quiet::stays`] during the change scan: a distant object while
//! the camera moves).

use super::*;

impl Planner {
    /// Fills `self.list` with the textures this plan goes through: every one (`full`, which
    /// also forgets every quiet mark), or the union of the changed ones the scan listed and the
    /// active ones. A changed texture that was quiet stays quiet, and out of the list, when its
    /// new inputs keep it quiet (its demand moved but still asks for nothing finer than its
    /// floor: a distant object while the camera moves); otherwise the scan took its mark (it is
    /// judged again after the plan). See [`Quiet::stays`].
    pub(super) fn select(&mut self, tex: &PlanTextures, full: bool) {
        let n = tex.len();
        self.list.clear();
        self.levels.resize(n, 0);
        self.listed_all = full;
        if full {
            self.quiet.clear();
            self.quiet.resize(n.div_ceil(64), 0);
            self.quiet_floor = 0;
            // Rewritten by the plan's post-pass, which goes through every texture.
            self.active.resize(n.div_ceil(64), 0);
            self.list.extend(0..n as u32);
            return;
        }
        // The union of two sets of bits, its members written out in ascending order.
        let (changed, active) = (&self.changed[..], &self.active[..]);
        let words = n.div_ceil(64);
        if changed.len() != words || active.len() != words {
            return self.select(tex, true);
        }
        let total: usize = changed
            .iter()
            .zip(active)
            .map(|(&c, &a)| (c | a).count_ones() as usize)
            .sum();
        self.list.resize(total, 0);
        let list = &mut self.list[..];
        let mut k = 0;
        for (w, (&c, &a)) in changed.iter().zip(active).enumerate() {
            let mut bits = c | a;
            while bits != 0 {
                // `k < total`: the bits counted above.
                list[k] = (w * 64 + bits.trailing_zeros() as usize) as u32;
                k += 1;
                bits &= bits - 1;
            }
        }
        // Most textures to go through anyway: one sequential pass over all of them reads memory
        // faster than gathering the listed ones, with the same plan.
        if self.list.len() * 2 > n {
            self.select(tex, true);
        }
    }

    /// Pass 1 over `self.list`: observes each texture's changes (its history: identity, level
    /// changes and holds), sanitises its inputs into its [`Work`], and returns the sums of their
    /// floor and resident bytes and whether a view changed. `scanned`: the scan kept the words
    /// of every changed texture (then they are not computed again, and the scan says whether a
    /// view changed). Running it twice in a frame changes nothing the second time (but
    /// reports no view change unless the scan found one). What it records of a texture must
    /// stay what [`Quiet::stays`] checks is unchanged (identity, level, hold): a texture that
    /// test keeps quiet is not observed. `fused`: also decide each texture's mode and build its
    /// greedy items at the current bucket in the same pass (valid while the floors fit, nothing
    /// is released and the bucket stays; the caller checks and redoes the rest otherwise).
    ///
    /// A listed texture whose change the scan found to be its view alone, or an active one
    /// that did not change, keeps the levels, sizes and flags of its work from its last
    /// observation and has only its view read again ([`Work::revisit`]; debug builds check it
    /// against the work made from scratch): in a moving view, most of them.
    pub(super) fn observe(
        &mut self,
        tex: &PlanTextures,
        frame: u64,
        resize: bool,
        scanned: bool,
        fused: Option<(&mut Modes, &mut super::greedy::Fill)>,
    ) -> (u64, u64, bool) {
        let (mut floor_sum, mut resident_sum) = (0u64, 0u64);
        let mut view_changed = scanned && self.scan_view_changed;
        // Every per-texture array as a slice of the scene's length: one check of a texture's
        // index covers them all.
        let n = tex.len();
        let views = tex.views();
        let (seen, hashes) = (&mut self.seen[..n], &mut self.hashes[..n]);
        let (history, work) = (&mut self.history[..n], &mut self.work[..n]);
        let mut fused = fused.map(|(modes, fill)| (modes, fill, self.scratch.slots(n)));
        let list = &self.list[..];
        // Not when the plan goes through every texture (a full pass makes every work again),
        // nor without the scan's bits.
        let deep = &self.deep[..];
        let quick = scanned && !self.listed_all && deep.len() == n.div_ceil(64);
        for (k, &i) in list.iter().enumerate() {
            // A list of a few of many textures jumps through memory: ask for a later texture's
            // lines now, so that they arrive while this one is worked on (its record and first
            // sizes line, which the steps above a floor read, and its work). Not its history:
            // a plan reads that only for a texture observed from scratch, a busy or a held one
            // (the hold and quiet tests read the copy of its change frame in its work).
            let ahead = list.get(k + PREFETCH_AHEAD).map_or(0, |&j| j as usize);
            views.prefetch(ahead);
            prefetch_at(work, ahead);
            let i = i as usize;
            let Some(t) = views.get(i) else {
                continue;
            };
            // Only its view changed, or nothing (an active texture): its levels, sizes and
            // history are what its last observation found (see `Work::revisit`).
            let w = &mut work[i];
            if quick && deep[i / 64] >> (i % 64) & 1 == 0 && !w.hist {
                #[cfg(debug_assertions)]
                let before = (*w, history[i]);
                w.revisit(&t);
                #[cfg(debug_assertions)]
                {
                    let mut h = before.1;
                    let full = Work::observe(t, &mut h, frame, false);
                    assert!(
                        full.same_as(w) && h == before.1,
                        "texture {i}: its work kept across a view change is stale"
                    );
                }
            } else {
                if !scanned {
                    let now = Seen::of(&t);
                    let hash = histogram_hash(&t, t.bins);
                    view_changed |= now.view_differs(&seen[i]) || hash != hashes[i];
                    seen[i] = now;
                    hashes[i] = hash;
                }
                *w = Work::observe(t, &mut history[i], frame, resize);
            }
            let h = &history[i];
            floor_sum = floor_sum.saturating_add(w.floor_bytes);
            resident_sum = resident_sum.saturating_add(w.resident_bytes);
            if let Some((modes, fill, slots)) = fused.as_mut() {
                modes.decide(t, w, h);
                fill.add(i, t, w, slots);
            }
        }
        (floor_sum, resident_sum, view_changed)
    }

    /// After a plan's targets and drops are decided, one pass over the listed textures: their
    /// cancels (appended to `out.transitions`, in list order), the sums of the builds' bound,
    /// the decisions to remember (a hold compares against them), each one's planned level and
    /// the plan's blur, and which ones are quiet now (their floors kept in `quiet_floor`, the
    /// others listed in `self.active`). `allowed`: whether textures may be quiet at all (not
    /// while the floors compete, nor when incremental planning is off).
    pub(super) fn post_pass(
        &mut self,
        tex: &PlanTextures,
        frame: u64,
        bucket: usize,
        allowed: bool,
        out: &mut Plan,
    ) -> Post {
        let hold = u64::from(self.config.min_frames_between_changes);
        let allowed = allowed && self.config.incremental;
        let mb = self.mip_bias(bucket);
        // The quiet textures (not in the list) hold their floors: those of the plan's start.
        let quiet = u64::try_from(self.quiet_floor).unwrap_or(u64::MAX);
        let base = self
            .fixed
            .saturating_add(self.rt(bucket))
            .saturating_add(quiet);
        // The sums in locals, gathered into a `Post` at the end: a field of a struct on the
        // stack was summed through memory, a store and reload in the chain of every texture
        // (perf: the quality's sum was the pass's hottest line).
        let (mut bound, mut steady, mut pending, mut margin) = (base, base, false, 0u64);
        let mut quality = self.scale_blur(bucket) * self.output_pixels as f64;
        // The active textures and the cancels written into slices as long as the list, their
        // counts in registers: a `push` (a call to grow, now and then) in the loop made the
        // quality's sum live in memory, a store and reload in the chain of every texture.
        let n = self.list.len();
        let mut cancels = std::mem::take(&mut self.cancels);
        cancels.resize(n, 0);
        let mut n_cancels = 0usize;
        // The active textures as bits, a word gathered in a register while the (ascending)
        // list stays in it, then stored whole: every texture that was active is in the list,
        // so a word's bits are exactly those of its listed textures that are active now, and
        // the words the list does not reach hold none.
        // Every per-texture array as a slice of the scene's length (one index check a texture),
        // the quiet marks gathered with the active bits and ORed in at the word's end.
        let m = tex.len();
        let views = tex.views();
        let (work, history) = (&self.work[..m], &mut self.history[..m]);
        let levels = &mut self.levels[..m];
        let (active, quiet_marks) = (&mut self.active[..], &mut self.quiet[..]);
        let (mut word, mut bits, mut quiet_bits) = (usize::MAX, 0u64, 0u64);
        let mut quiet_floor = 0u128;
        let list = &self.list[..];
        for (k, &i) in list.iter().enumerate() {
            let ahead = list.get(k + PREFETCH_AHEAD).map_or(0, |&j| j as usize);
            prefetch_at(work, ahead);
            // Not its history: a plan reads that only for a texture observed from scratch, a
            // busy or held one (its hold and quiet tests read the copy in its work).
            let i = i as usize;
            let Some(t) = views.get(i) else {
                continue;
            };
            let w = &work[i];
            let h = &mut history[i];
            let busy_kept = w.mode == Mode::Busy;
            // `n_cancels <= k < n`: in bounds.
            cancels[n_cancels] = i as u32;
            n_cancels += usize::from(w.busy && !(busy_kept || w.keeps_flight()));
            let level = if busy_kept {
                bound = bound.saturating_add(w.resident_bytes.max(w.flight_bytes));
                steady = steady.saturating_add(w.flight_bytes);
                if w.flight != w.resident {
                    pending = true;
                    margin = margin.max(w.resident_bytes.min(w.flight_bytes));
                }
                w.flight
            } else {
                let bytes = w.bytes_at(t, w.target);
                bound = bound.saturating_add(bytes);
                steady = steady.saturating_add(bytes);
                w.target
            };
            let decided = match w.mode {
                Mode::Stale => true,
                Mode::Busy | Mode::Cooling | Mode::Kept => false,
                _ => w.target != w.resident,
            };
            if decided || w.adopt {
                h.decided = Some((w.wanted, w.pixels, w.priority));
            }
            levels[i] = level;
            quality += w.blur_at(t, level, mb, false);
            let quiet = allowed
                && !w.busy
                && w.resident == w.floor
                && (w.changed_at == NEVER || frame >= w.changed_at.saturating_add(hold))
                && asks_nothing_now(w, t, self.min_bias);
            if quiet {
                quiet_floor += u128::from(w.floor_bytes);
            }
            if i / 64 != word {
                if let (Some(a), Some(q)) = (active.get_mut(word), quiet_marks.get_mut(word)) {
                    *a = bits;
                    *q |= quiet_bits;
                }
                (word, bits, quiet_bits) = (i / 64, 0, 0);
            }
            bits |= u64::from(!quiet) << (i % 64);
            quiet_bits |= u64::from(quiet) << (i % 64);
        }
        if let (Some(a), Some(q)) = (active.get_mut(word), quiet_marks.get_mut(word)) {
            *a = bits;
            *q |= quiet_bits;
        }
        self.quiet_floor += quiet_floor;
        // The cancels first in the plan's transitions, in list order.
        for &i in &cancels[..n_cancels] {
            let w = &self.work[i as usize];
            out.transitions.push(Transition {
                texture: i,
                from: w.resident,
                to: w.resident,
                kind: TransitionKind::Cancel,
            });
        }
        self.cancels = cancels;
        Post {
            bound,
            steady,
            pending,
            margin,
            quality,
        }
    }
}

/// What the change scan needs to tell whether a changed texture that was quiet stays quiet.
pub(super) struct Quiet<'a> {
    /// Which textures are quiet, as bits (64 textures a word).
    pub(super) marks: &'a mut [u64],
    pub(super) floor: &'a mut u128,
    pub(super) work: &'a [Work],
    pub(super) history: &'a [History],
    pub(super) frame: u64,
    pub(super) hold: u64,
    /// The previous plan's least mip bias: new buckets plan every texture anyway.
    pub(super) min_bias: f32,
    /// A changed texture's view (wanted level, pixels, priority, histogram) changed.
    pub(super) view_changed: bool,
}

impl Quiet<'_> {
    /// For changed texture `i` (inputs `t`): whether it was quiet and stays quiet, so that a
    /// plan need not go through it. Stays quiet: still at its floor, not busy, its hold over,
    /// nothing [`Planner::observe`] would record (the same texture, identity, at the same
    /// level, so its history and its work, the floor bytes it added, stand), and asking for
    /// nothing finer than its floor ([`asks_nothing`]). One that was quiet and does not stay so
    /// loses its mark here and its floor leaves the quiet sum (it is judged again after the
    /// plan). A plan that goes through every texture forgets every mark anyway.
    ///
    /// `view_only`: only the view words changed since the previous scan (wanted level, pixels,
    /// priority; not the levels, `busy`, the identity or the histogram flag). Then everything
    /// but the demand is what the previous scan saw, and a quiet texture was quiet with those
    /// words (judged so, or kept so by this test): still at its floor, not busy, the same
    /// identity and level as its history, its hold over (the frame only grows within a run,
    /// and a new run forgets every mark). So only the demand is checked, without reading the
    /// history: a distant object while the camera moves costs the words it changed.
    #[inline(always)]
    pub(super) fn stays(
        &mut self,
        t: &PlanTexture,
        bins: &[f32; MAX_LEVELS],
        i: usize,
        view_only: bool,
    ) -> bool {
        // Without branches on the mark or the demand (either way at random in a moving view):
        // the demand test is a few float operations on a line already read.
        let marked = self
            .marks
            .get(i / 64)
            .is_some_and(|&w| w >> (i % 64) & 1 != 0);
        let floor = t.floor();
        let still = if view_only {
            asks_nothing(t, bins, floor, self.min_bias)
        } else {
            let h = &self.history[i];
            marked
                && !t.busy
                && t.resident() == floor
                && h.level == floor
                && h.identity == (t.level0_bytes, t.count(), floor)
                && (h.changed_at == NEVER || self.frame >= h.changed_at.saturating_add(self.hold))
                && asks_nothing(t, bins, floor, self.min_bias)
        };
        // Marked and not still, as one comparison (rare: a branch the CPU predicts).
        if u8::from(marked) > u8::from(still) {
            self.marks[i / 64] &= !(1 << (i % 64));
            // Its work is the one it was judged quiet with (a quiet texture is not observed
            // again until it changes): the floor it added.
            *self.floor -= u128::from(self.work[i].floor_bytes);
        }
        std::hint::select_unpredictable(still, marked, false)
    }
}

/// What [`Planner::post_pass`] sums over the listed textures.
pub(super) struct Post {
    /// Fixed bytes, render targets, the quiet floors and every listed texture at its target
    /// (busy ones at max(old, new)): what the builds stay within, plus `margin`.
    pub(super) bound: u64,
    /// The same with busy textures at their in-flight level: the plan's steady total.
    pub(super) steady: u64,
    /// A busy texture has a build to come.
    pub(super) pending: bool,
    /// The largest old texture alive during a busy texture's build.
    pub(super) margin: u64,
    /// The plan's blur (not weighted by priority), the scale's included.
    pub(super) quality: f64,
}

/// Whether no mip step of the texture can gain anything at any mip bias, and its blur, weighted
/// or not, is 0: no pixels, or not in view. (No priority is not enough: the plan's
/// `quality_cost` counts the blur of every pixel, whatever its priority.) Reads the texture
/// only for a histogram.
pub(super) fn no_demand(w: &Work, t: Tex<'_>) -> bool {
    if w.hist {
        !t.bins.iter().any(|&p| p > 0.0)
    } else {
        w.pixels == 0.0 || w.wanted == f32::INFINITY
    }
}

/// [`asks_nothing`] from a texture's work (the same sanitised inputs): reads the texture only
/// for a histogram.
fn asks_nothing_now(w: &Work, t: Tex<'_>, min_bias: f32) -> bool {
    if w.hist {
        asks_nothing(&t, t.bins, w.floor, min_bias)
    } else {
        w.pixels == 0.0 || w.wanted == f32::INFINITY || blur(w.floor, w.wanted + min_bias) == 0.0
    }
}

/// Whether the texture's demand, at any mip bias of at least `min_bias` (the least of the
/// plan's buckets), asks for nothing finer than `floor`: no pixels, or not in view
/// ([`no_demand`]), or every pixel wants `floor` or coarser. Then its blur at `floor` is exactly
/// 0 and no step finer gains anything (each step's gain is 0 minus a blur, never positive), so
/// at its floor it adds only its floor bytes to a plan: it may be quiet. From the texture's
/// inputs as [`Planner::observe`] sanitises them.
#[inline(always)]
// The negated comparisons are the point: each is true for NaN, as the sanitised inputs say.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(super) fn asks_nothing(
    t: &PlanTexture,
    bins: &[f32; MAX_LEVELS],
    floor: u8,
    min_bias: f32,
) -> bool {
    if t.histogram {
        histogram_asks_nothing(t, bins, floor, min_bias)
    } else {
        // Blur only shrinks as the wanted level (bias included) grows, and `wanted + bias`
        // grows with the bias (IEEE addition is monotonic). Three comparisons, `|` and not
        // `||` (no branch on a demand that moves at random), each the same test as the
        // sanitised one: no pixels (`sanitize_weight` gives 0 exactly when not `> 0`); not in
        // view (NaN or infinity: `wanted + bias` is NaN or infinity, and `floor >` either is
        // false); or `blur(floor, wanted + bias) == 0`, which is `floor <= max(wanted + bias,
        // 0)` (the sign of a float difference is exact), so `floor == 0` or not
        // `floor > wanted + bias`.
        !(t.screen_pixels > 0.0) | (floor == 0) | !(f32::from(floor) > t.wanted_level + min_bias)
    }
}

/// [`asks_nothing`] of a texture without a histogram (at its `floor()`).
#[inline(always)]
// The negated comparisons are the point: each is true for NaN, as the sanitised inputs say.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(super) fn plain_asks_nothing(t: &PlanTexture, min_bias: f32) -> bool {
    debug_assert!(!t.histogram);
    // As `asks_nothing` (whose tests these are), without its histogram branch.
    let floor = t.floor();
    !(t.screen_pixels > 0.0) | (floor == 0) | !(f32::from(floor) > t.wanted_level + min_bias)
}

/// [`asks_nothing`] of a texture with a histogram (out of line: most have none).
#[inline(never)]
fn histogram_asks_nothing(
    t: &PlanTexture,
    bins: &[f32; MAX_LEVELS],
    floor: u8,
    min_bias: f32,
) -> bool {
    // `blur_pixels` is 0 exactly when every bin with pixels has no blur at `floor`.
    !bins.iter().any(|&p| p > 0.0) || super::textures::blur_pixels(t, bins, floor, min_bias) == 0.0
}
