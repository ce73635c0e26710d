//! The budget planner: how ONE budget is spent on texture mips and on the render-target scale.
//!
//! Pure CPU, no wgpu types, and no allocation per frame once its buffers have grown to the scene.
//! The streaming code keeps a [`PlanTextures`] (one [`PlanTexture`] per streamed texture, its index
//! the texture's id in [`Transition::texture`]), updates it every frame and calls [`Planner::plan`]. The
//! [`Plan`] says which mips each texture should have, which render-target scale bucket to use, and
//! the [`Transition`]s that get there, in execution order.
//!
//! # The quality currency: blurred pixel-octaves
//! A texture that covers `c` output pixels, wants level `w` and has only `r > w` resident blurs
//! those pixels by `r - w` octaves: it costs `c * (r - w)` pixel-octaves. A render scale `s < 1`
//! blurs every output pixel by `log2(1/s)` octaves and, through the mip bias, adds the same amount
//! to every wanted level; that is why scale and mips trade against each other. Each step of one
//! more mip has a gain (pixel-octaves removed, times the texture's priority) and a cost in bytes;
//! the planner takes the steps with the best gain per byte first ("greedy by gain per byte").
//! [`Plan::quality_cost`] reports the remaining blur for the overlay and the reports.
//!
//! # How a plan is made
//! 1. Every texture's floor tail is mandatory while every floor fits; the render targets at the
//!    current bucket, the fixed bytes and the transitions already in flight are counted too.
//! 2. Every other mip step (the resident ones included) is an item valued by gain per byte; items
//!    already resident are worth [`PlannerConfig::keep_bonus`] times more, so nothing is dropped
//!    for something worth barely more. Items are taken best first while they fit, each texture's
//!    steps coarse to fine; a resident step that is not taken is a drop.
//! 3. The neighbouring scale buckets are planned the same way, and one is taken when its whole
//!    plan (scale blur, times [`PlannerConfig::scale_blur_weight`], plus mip blur, within the
//!    same limit) is clearly better: by
//!    [`PlannerConfig::rescale_margin`] of the blur the scale step itself moves. Comparing whole
//!    plans matters: a higher scale only pays once the mips follow it.
//! 4. Transitions are ordered drops first (cancels, a lower scale, evictions and shrinks), then a
//!    higher scale, then grows, so that no step passes [`Plan::limit`] (next section).
//!
//! A drop whose shrink would not fit (its new texture next to the old one) must become an
//! eviction to the floor; the plan is then made again both with that texture kept as it is and
//! with it evicted, and the one with less blur wins.
//!
//! A texture whose level changed stays put for [`PlannerConfig::min_frames_between_changes`]
//! frames while its own view (wanted level, pixels, priority) and the budget stay the same, so
//! that nothing flips back and forth; a grow in flight whose view moved is planned again (kept,
//! or retargeted to a finer level, or cancelled if it would now hold more than planned). The scale is evaluated only when a view or the budget
//! changed, at most once per [`PlannerConfig::min_frames_between_rescales`] frames.
//!
//! When nothing changed since the previous call, the previous plan is returned at the cost of one
//! scan of the inputs (about one cache line per texture); a frame where something changed is
//! planned again from scratch in `O(levels x textures)` (a bucket sort by quantised gain per
//! byte, no comparison sort). With incremental planning, the resident steps far above the
//! previous plan's price (an octave above the first step it left out) are summed instead of
//! sorted, when everything above that line fits in any order: the greedy would take them all.
//!
//! # The executor contract
//! The plan is made for the state passed in: `resident_level` is what is on the GPU now,
//! `busy`/`in_flight_level` are grows requested but not yet built, `current_bucket` is the render
//! targets that exist, and `fixed_bytes` is everything else on the ledger. Then:
//! 1. **Right after `plan` returns, before building any grow**, run [`Plan::transitions`] in order,
//!    one at a time, each finished (its old resource destroyed and released from the ledger)
//!    before the next starts:
//!    - [`TransitionKind::Cancel`]: abandon the texture's in-flight grow; nothing is allocated and
//!      the texture is no longer busy. A busy texture gets no other transition without one first,
//!      except a `Grow` to a finer level than its in-flight one (see below).
//!    - [`TransitionKind::Evict`]: destroy the texture first, then create levels `to..` from the
//!      CPU-held floor data (nothing when `to == level_count`). It never raises the total.
//!    - [`TransitionKind::Shrink`]: create the texture with levels `to..`, copy them GPU-side,
//!      swap the bind group, destroy the old one. Momentarily the total grows by
//!      `bytes_from(to)`.
//!    - [`TransitionKind::Rescale`]: destroy the render targets, then create them at bucket `to`.
//!    - [`TransitionKind::Grow`]: request levels `to..from` and mark the texture busy with
//!      `in_flight_level = to`. Nothing is allocated yet. On a texture already busy (its
//!      `to` then finer than its `in_flight_level`), it retargets the grow in flight: what was
//!      read or built for it stays, and the finer levels are requested too.
//! 2. **Build each requested grow when its data is ready** (this frame or a later one), one at a
//!    time: create the texture with levels `to..`, copy the resident levels GPU-side, upload the
//!    new ones, swap, destroy the old one, then clear `busy`. From `level_count` (nothing resident)
//!    the floor comes from CPU-held data, so that grow can be built at once.
//!
//! With `limit = plan.limit` (never above the budget), the planner guarantees: (a) in step 1
//! every allocation keeps the total within the limit, except that an `Evict` and a `Rescale` to a
//! smaller bucket, which free first, may run while the total is still above it (they never raise
//! it); so a budget lowered below the current usage is reached without any momentary overshoot;
//! (b) after step 1 the total is within the limit (unless the fixed bytes and the smallest render
//! targets alone pass it); (c) the builds of step 2, in any order and interleaved with later
//! frames' plans executed the same way, each stay within the limit, old and new texture alive
//! together. An executor should still check `total + new_bytes <= limit` before every allocation
//! and cancel a build that fails: that only happens when the state passed to `plan` was wrong.
//! [`SimExecutor`] runs this contract on plain numbers and reports every violation; the
//! simulation test uses it and the streaming code can mirror it.
//!
//! # When even the floors do not fit
//! When `fixed_bytes`, the smallest render targets and every floor tail together pass the budget,
//! `plan` returns [`PlanStatus::BudgetTooSmall`], drops to the smallest bucket, and lets floors
//! compete like any other step: the floors of the textures that are worth most per byte stay (an
//! invisible texture's floor is worth nothing), the others are evicted to nothing
//! (`to == level_count`), and the total stays within the budget. It never panics.

mod exec;
mod greedy;
mod incremental;
mod order;
mod replan;
mod scan;
mod state;
mod textures;
pub(crate) use state::REQUIRED_PIXELS;
#[cfg(test)]
mod tests;
mod types;

pub use exec::{ContractViolation, SimExecutor};
use scan::{scan_block, wide_compare, wide_differ_mask};
use state::*;
use textures::Tex;
pub use textures::{PlanTexture, PlanTextures};
pub use types::{
    BucketCost, Plan, PlanInput, PlanStatus, PlannerConfig, Transition, TransitionKind,
};

/// The most mip levels a texture may have (a 32768² texture has 16).
pub const MAX_LEVELS: usize = 16;

/// "Never": no change recorded, no rescale yet, nothing to wake up for.
pub(crate) const NEVER: u64 = u64::MAX;

/// Gain-per-byte values are bucket-sorted by the top 13 bits of their `f32` pattern: sign (always
/// 0), 8 exponent bits and 4 mantissa bits, so 16 bins per octave (at most 6.25% apart). Items
/// closer than that are taken in texture order, which is finer than any hysteresis used here.
pub(crate) const BIN_SHIFT: u32 = 19;
/// Number of gain-per-byte bins (`2^12`: positive `f32` patterns shifted by [`BIN_SHIFT`]).
pub(crate) const BINS: usize = 1 << 12;

/// The planner. Create once, call [`Planner::plan`] every frame; it keeps the hysteresis state
/// and reusable scratch buffers.
#[derive(Debug)]
pub struct Planner {
    config: PlannerConfig,
    seen: Vec<Seen>,
    /// Each texture's 64-bit histogram hash when last seen (0 without a histogram): [`Seen`]
    /// only marks that a texture has one, the exact check compares this.
    hashes: Vec<u64>,
    history: Vec<History>,
    work: Vec<Work>,
    scratch: greedy::Scratch,
    sorted: Vec<Item>,
    counts: Vec<u32>,
    shrinks: Vec<(u64, u32)>,
    evicts: Vec<(u32, u32)>,
    drop_seq: Vec<Drop>,
    forced: Vec<u32>,
    buckets: Vec<BucketCost>,
    cache: Plan,
    cache_status: PlanStatus,
    valid: bool,
    last: (u64, u64, u64, u64, usize, usize),
    last_frame: u64,
    epoch_frame: u64,
    epoch_available: Option<u64>,
    epoch_pixels: u64,
    /// Frame of the last scale evaluation or change.
    last_rescale: u64,
    /// A view or the budget changed since the last scale evaluation: one is due.
    scale_dirty: bool,
    /// [`Planner::invalidate`] was called: recompute every texture's cached sizes.
    resize: bool,
    wake: u64,
    fixed: u64,
    output_pixels: u64,
    /// The incremental state (see [`PlannerConfig::incremental`]). `n_changed`: how many
    /// textures' inputs differ from the previous call; `changed`: those of them the plan must
    /// go through (the scan's output: not the quiet ones that stay quiet), as bits (64
    /// textures a word).
    changed: Vec<u64>,
    n_changed: usize,
    /// Of the changed textures, those whose change is more than their view (levels, `busy`,
    /// identity, allowed bases) or that have a histogram, as bits: [`Planner::observe`] makes
    /// their work again from scratch, and only the view of the others.
    deep: Vec<u64>,
    /// `list` holds every texture (a plan that goes through all of them observes each one
    /// from scratch).
    listed_all: bool,
    /// The scan found a texture whose view (wanted level, pixels, priority, histogram) changed.
    /// The scan keeps the words and hash of every changed texture in `seen` and `hashes`.
    scan_view_changed: bool,
    /// The textures this plan goes through, ascending: every one, or the changed ones and the
    /// active ones (not quiet) of the previous plan.
    list: Vec<u32>,
    /// Textures not quiet after the previous plan, as bits (64 textures a word).
    active: Vec<u64>,
    /// [`Planner::post_pass`]'s cancels, before they become transitions.
    cancels: Vec<u32>,
    /// Quiet textures: at their floor, not busy, no hold running, and asking for nothing finer
    /// than the floor ([`incremental::asks_nothing`]). Such a texture adds its floor to the
    /// sums, nothing to the blur and no item or transition to a plan, so a plan need not go
    /// through it until its inputs change, nor while they change and it stays quiet.
    /// As bits, 64 textures a word.
    quiet: Vec<u64>,
    /// The sum of the quiet textures' floor bytes (exact: a `u128` cannot overflow here).
    quiet_floor: u128,
    /// Every texture's planned level, kept between plans (the quiet ones' are their floors).
    levels: Vec<u8>,
    /// The least mip bias of the current buckets (see [`incremental::asks_nothing`]).
    min_bias: f32,
    /// [`Plan::memory_price`] of the last greedy fill.
    price: f32,
    /// The price [`Planner::save_fill`] kept.
    saved_price: f32,
    /// Per bucket, the bin above which the next fill at it summarises resident steps (see
    /// `Fill::cut`), from the last fill's price there.
    cuts: Vec<u16>,
    /// [`Planner::plan_with_changes`]'s textures as bits (all 0 between calls), and in debug
    /// builds as a sorted list (for the check of the others).
    hint_bits: Vec<u64>,
    hint: Vec<u32>,
}

impl Default for Planner {
    fn default() -> Self {
        Self::new(PlannerConfig::default())
    }
}

impl Planner {
    /// A planner with this tuning.
    pub fn new(config: PlannerConfig) -> Self {
        Self {
            config,
            seen: Vec::new(),
            hashes: Vec::new(),
            history: Vec::new(),
            work: Vec::new(),
            scratch: greedy::Scratch::default(),
            sorted: Vec::new(),
            counts: vec![0; BINS],
            shrinks: Vec::new(),
            evicts: Vec::new(),
            drop_seq: Vec::new(),
            forced: Vec::new(),
            buckets: Vec::new(),
            cache: Plan::default(),
            cache_status: PlanStatus::Ok,
            valid: false,
            last: (0, 0, 0, 0, 0, 0),
            last_frame: 0,
            epoch_frame: 0,
            epoch_available: None,
            epoch_pixels: 0,
            last_rescale: NEVER,
            scale_dirty: true,
            resize: false,
            wake: NEVER,
            fixed: 0,
            output_pixels: 0,
            changed: Vec::new(),
            n_changed: 0,
            deep: Vec::new(),
            listed_all: true,
            scan_view_changed: false,
            list: Vec::new(),
            active: Vec::new(),
            cancels: Vec::new(),
            quiet: Vec::new(),
            quiet_floor: 0,
            levels: Vec::new(),
            min_bias: 0.0,
            price: 0.0,
            saved_price: 0.0,
            cuts: Vec::new(),
            hint_bits: Vec::new(),
            hint: Vec::new(),
        }
    }

    /// How many textures the last re-plan went through: all of them, or with incremental
    /// planning only the changed and the active ones (not quiet).
    pub fn last_plan_textures(&self) -> usize {
        self.list.len()
    }

    /// The tuning this planner was made with.
    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    /// Forget the previous plan and every texture's cached sizes, so that the next call plans
    /// from scratch. Needed only when a slot's `level_bytes` changed without its `level_count`,
    /// `floor_level` or `level_bytes[0]` changing; the hysteresis state is kept.
    pub fn invalidate(&mut self) {
        self.valid = false;
        self.resize = true;
    }

    /// Lift every texture's hold at the next plan, as a new budget does: the game changed what
    /// it asks of the textures (a level forced resident, a cap, a bias), and the plan must react
    /// at once rather than after the neighbours' holds.
    pub fn lift_holds(&mut self) {
        self.epoch_available = None;
    }

    /// Plan this frame: fill `out` (its vectors are reused) and say whether the floors fit.
    ///
    /// When nothing changed since the previous call (every input equal, no hold expiring), this
    /// costs one scan of the inputs and returns the previous plan with `replanned == false`.
    pub fn plan(&mut self, input: &PlanInput<'_>, out: &mut Plan) -> PlanStatus {
        let scanned = self.scan(input.textures, input.frame);
        self.plan_scanned(input, out, scanned)
    }

    /// [`Planner::plan`] for a caller that knows which textures it changed: `changed` lists
    /// every texture whose [`PlanTexture`] may differ from the previous call's (in any order,
    /// repeats allowed); every other texture must be exactly as it was. Then the change check
    /// reads only those, not every texture: with 100k textures registered and a few thousand
    /// given demand, most of a frame's planning time. The plan is the one [`Planner::plan`]
    /// makes. Debug builds check every texture left out and panic on one that changed (the
    /// caller's list was wrong); a scene whose size changed is checked in full anyway.
    pub fn plan_with_changes(
        &mut self,
        input: &PlanInput<'_>,
        changed: &[u32],
        out: &mut Plan,
    ) -> PlanStatus {
        let scanned = self.scan_listed(input.textures, input.frame, changed);
        self.plan_scanned(input, out, scanned)
    }

    /// The rest of a plan once the change check ran (`scanned`: it did, over a scene of the
    /// previous call's size).
    fn plan_scanned(&mut self, input: &PlanInput<'_>, out: &mut Plan, scanned: bool) -> PlanStatus {
        if scanned && self.unchanged(input) {
            out.clone_from(&self.cache);
            out.replanned = false;
            return self.cache_status;
        }
        let status = self.replan(input, out, scanned);
        self.cache.clone_from(out);
        self.cache_status = status;
        self.valid = true;
        self.last = (
            input.budget,
            input.fixed_bytes,
            input.headroom,
            input.output_pixels,
            input.current_bucket,
            input.textures.len(),
        );
        self.last_frame = input.frame;
        status
    }

    /// Whether the previous plan still answers `input`, once [`Planner::scan`] found no texture
    /// changed.
    fn unchanged(&self, input: &PlanInput<'_>) -> bool {
        self.valid
            && self.n_changed == 0
            && input.frame >= self.last_frame
            && input.frame < self.wake
            && self.last
                == (
                    input.budget,
                    input.fixed_bytes,
                    input.headroom,
                    input.output_pixels,
                    input.current_bucket,
                    input.textures.len(),
                )
            && self.same_buckets(input.buckets)
    }

    /// Counts the textures whose inputs differ from the previous plan's (`n_changed`) and lists
    /// those a plan must go through in `changed[..n_listed]`, ascending; false when the scene's
    /// size changed (everything is planned then). A changed texture that was quiet and stays
    /// quiet ([`incremental::stays_quiet`]: a distant object while the camera moves) is not
    /// listed; one that does not stay quiet loses its mark here, while its line is in the
    /// cache. The steady-view cost of a frame, so a branch-free scan and compaction; it is bound
    /// by reading one cache line per texture.
    fn scan(&mut self, all: &PlanTextures, frame: u64) -> bool {
        let textures = all.as_slice();
        // Few changes last time (fewer than one a block of 64: a steady view): each block is
        // first checked as a whole.
        let steady = self.n_changed * 64 <= textures.len();
        self.n_changed = 0;
        self.scan_view_changed = false;
        if self.seen.len() != textures.len()
            || self.hashes.len() != textures.len()
            || self.quiet.len() != textures.len().div_ceil(64)
        {
            return false;
        }
        self.changed.clear();
        self.changed.resize(textures.len().div_ceil(64), 0);
        self.deep.clear();
        self.deep.resize(textures.len().div_ceil(64), 0);
        // In blocks of 64 textures: a mask of the ones that differ (no dependency from one
        // texture to the next, so the loads of several textures overlap), then those gone
        // through ([`scan_block`]) and the bits of the ones a plan must go through kept
        // (almost never any in a steady view).
        let changed = &mut self.changed[..];
        let deep_bits = &mut self.deep[..];
        let differs = |s: &Seen, t: &PlanTexture| s.xor(&Seen::cheap(t));
        let mut total = 0usize;
        let wide = wide_compare();
        let mut quiet = incremental::Quiet {
            marks: &mut self.quiet[..],
            floor: &mut self.quiet_floor,
            work: &self.work[..],
            history: &self.history[..],
            frame,
            hold: u64::from(self.config.min_frames_between_changes),
            min_bias: self.min_bias,
            view_changed: false,
        };
        for (block, ((seen, tex), hashes)) in self
            .seen
            .chunks_mut(64)
            .zip(textures.chunks(64))
            .zip(self.hashes.chunks_mut(64))
            .enumerate()
        {
            // In a steady view, a block as a whole first (nothing but loads and XORs); only a
            // block with a change (or a histogram) is gone through again for which textures.
            // In a moving view most blocks have one, so they are gone through once.
            if steady
                && seen
                    .iter()
                    .zip(tex)
                    .fold(0, |any, (s, t)| any | differs(s, t))
                    == 0
            {
                continue;
            }
            let mask = if wide {
                wide_differ_mask(seen, tex)
            } else {
                let mut mask = 0u64;
                for (j, (s, t)) in seen.iter().zip(tex).enumerate() {
                    mask |= u64::from(differs(s, t) != 0) << j;
                }
                mask
            };
            if mask == 0 {
                continue;
            }
            let base = block * 64;
            let (moved, stays, deep) =
                scan_block::<true>(seen, hashes, all, base, mask, &mut quiet, wide);
            total += moved.count_ones() as usize;
            changed[block] = moved & !stays;
            deep_bits[block] = deep;
        }
        // `n_changed` counts the textures that stay quiet too: they did change, and the next
        // scan's steady-view shortcut asks how many did.
        self.n_changed = total;
        self.scan_view_changed = quiet.view_changed;
        true
    }

    /// [`Planner::scan`] over the textures `hint` lists (the others are the caller's promise
    /// of no change; checked in debug builds). A list three quarters as long as the scene or
    /// longer (repeats counted) is checked as a whole instead, by the full scan's sequential
    /// pass (at 10k textures with half of them listed, the listed check is still the faster,
    /// by 11 µs).
    fn scan_listed(&mut self, all: &PlanTextures, frame: u64, hint: &[u32]) -> bool {
        let textures = all.as_slice();
        let n = textures.len();
        if hint.len() * 4 >= n * 3 {
            return self.scan(all, frame);
        }
        self.n_changed = 0;
        self.scan_view_changed = false;
        if self.seen.len() != n || self.hashes.len() != n || self.quiet.len() != n.div_ceil(64) {
            return false;
        }
        self.changed.clear();
        self.changed.resize(n.div_ceil(64), 0);
        self.deep.clear();
        self.deep.resize(n.div_ceil(64), 0);
        // The listed textures as bits, gone through in ascending order (no sort; repeats are
        // one bit). The words are cleared as they are gone through, ready for the next call.
        self.hint_bits.resize(n.div_ceil(64), 0);
        // A word's bits gathered in a register while the list stays in it (an ascending list
        // fills each word in a run): or-ing each bit into memory chained every texture through
        // a store and its reload (a tenth of the listed check, perf at 10k textures).
        let bits = &mut self.hint_bits[..];
        let (mut word, mut acc) = (usize::MAX, 0u64);
        for &i in hint {
            let i = i as usize;
            if i >= n {
                continue;
            }
            if i / 64 != word {
                if let Some(w) = bits.get_mut(word) {
                    *w |= acc;
                }
                (word, acc) = (i / 64, 0);
            }
            acc |= 1 << (i % 64);
        }
        if let Some(w) = bits.get_mut(word) {
            *w |= acc;
        }
        self.hint.clear();
        let wide = wide_compare();
        let mut quiet = incremental::Quiet {
            marks: &mut self.quiet[..],
            floor: &mut self.quiet_floor,
            work: &self.work[..],
            history: &self.history[..],
            frame,
            hold: u64::from(self.config.min_frames_between_changes),
            min_bias: self.min_bias,
            view_changed: false,
        };
        let mut total = 0usize;
        let changed = &mut self.changed[..];
        let deep_bits = &mut self.deep[..];
        for (w, word) in self.hint_bits.iter_mut().enumerate() {
            let bits = std::mem::take(word);
            if bits == 0 {
                continue;
            }
            if cfg!(debug_assertions) {
                let mut b = bits;
                while b != 0 {
                    self.hint
                        .push((w * 64 + b.trailing_zeros() as usize) as u32);
                    b &= b - 1;
                }
            }
            let base = w * 64;
            let end = (base + 64).min(n);
            let (moved, stays, deep) = scan_block::<false>(
                &mut self.seen[base..end],
                &mut self.hashes[base..end],
                all,
                base,
                bits,
                &mut quiet,
                wide,
            );
            total += moved.count_ones() as usize;
            changed[w] = moved & !stays;
            deep_bits[w] = deep;
        }
        let view_changed = quiet.view_changed;
        #[cfg(debug_assertions)]
        {
            let mut listed = self.hint.iter().peekable();
            for (i, t) in textures.iter().enumerate() {
                if listed.next_if(|&&h| h as usize == i).is_some() {
                    continue;
                }
                assert!(
                    Seen::of(t) == self.seen[i]
                        && histogram_hash(t, all.level_pixels(i)) == self.hashes[i],
                    "Planner::plan_with_changes: texture {i} changed but is not in the list"
                );
            }
        }
        self.n_changed = total;
        self.scan_view_changed = view_changed;
        true
    }

    /// Whether `buckets` are the ones of the previous plan (after the same sanitising).
    fn same_buckets(&self, buckets: &[BucketCost]) -> bool {
        // By bits, so that a NaN scale compares equal to itself.
        let same = |a: &BucketCost, b: &BucketCost| {
            a.scale.to_bits() == b.scale.to_bits() && a.bytes == b.bytes
        };
        if buckets.is_empty() {
            return self.buckets.len() == 1 && same(&self.buckets[0], &DEFAULT_BUCKET);
        }
        let n = buckets.len().min(256);
        self.buckets.len() == n && self.buckets.iter().zip(buckets).all(|(a, b)| same(a, b))
    }

    fn rt(&self, bucket: usize) -> u64 {
        self.buckets[bucket].bytes
    }

    /// The bucket whose render targets cost least (the highest scale among equals). Normally
    /// bucket 0, but a set with a target made only below native scale (an upscaler's
    /// intermediate) can cost less at native scale than lower ones.
    fn cheapest(&self) -> usize {
        (0..self.buckets.len())
            .rev()
            .min_by_key(|&b| self.rt(b))
            .unwrap_or(0)
    }

    /// Whether a higher bucket costs no more than `bucket`: then `bucket` (more blur, no fewer
    /// bytes) is never worth planning.
    fn dominated(&self, bucket: usize) -> bool {
        let bytes = self.rt(bucket);
        self.buckets[bucket + 1..].iter().any(|b| b.bytes <= bytes)
    }

    /// Mip bias of a bucket: `log2(1/scale)`.
    fn mip_bias(&self, bucket: usize) -> f32 {
        let s = self.buckets[bucket].scale;
        if s.is_finite() && s > 0.0 {
            -s.log2()
        } else {
            0.0
        }
    }

    /// [`PlannerConfig::scale_blur_weight`], 1 where it is not finite or negative.
    fn scale_weight(&self) -> f64 {
        let w = self.config.scale_blur_weight;
        if w.is_finite() && w >= 0.0 {
            f64::from(w)
        } else {
            1.0
        }
    }

    /// Blur of every output pixel at a bucket: `max(0, log2(1/scale))` (a scale above 1 does not
    /// make pixels sharper than native).
    fn scale_blur(&self, bucket: usize) -> f64 {
        // Not `max`: at scale 1 the bias is -0.0, which `max` may keep, and a plan's blur
        // must be +0.0 whichever textures its sum goes through (a plan that goes through none,
        // every texture quiet, would otherwise report -0.0 where a full pass reports +0.0).
        let bias = self.mip_bias(bucket);
        f64::from(if bias > 0.0 { bias } else { 0.0 })
    }
}

/// How many listed textures ahead [`Planner::observe`] asks for the memory it will read. Why
/// 12: one texture's work there is tens of nanoseconds and a miss to memory about a hundred, so
/// a dozen ahead lets the lines arrive in time without evicting the ones in use.
pub(super) const PREFETCH_AHEAD: usize = 12;

/// [`prefetch`] of `s[i]`, without a bounds check: `i` may be past the end (the address is
/// only a hint, and a prefetch cannot fault).
#[inline(always)]
pub(super) fn prefetch_at<T>(s: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch`; the pointer is never dereferenced (`wrapping_add` makes any
    // offset a valid computation).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            s.as_ptr().wrapping_add(i).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}

/// Asks the CPU to bring `x`'s cache line in (a hint: no effect on what the program computes).
#[inline(always)]
pub(super) fn prefetch<T>(x: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = x {
        // SAFETY: a prefetch reads nothing the program sees and cannot fault; the intrinsic
        // is `unsafe` only for its target feature (SSE, always present on x86_64).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(x).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
