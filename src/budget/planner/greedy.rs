//! The greedy fill: every free texture's target by gain per byte, best first, within the limit.

use super::*;

impl Planner {
    /// Choose every free texture's target at `bucket` by gain per byte, best first, within
    /// `limit`; `compete` lets floors compete (the budget is too small for all of them). Returns
    /// whether the mandatory part (pinned textures, floors, render targets) fits.
    pub(super) fn greedy(
        &mut self,
        tex: &PlanTextures,
        bucket: usize,
        limit: u64,
        compete: bool,
    ) -> bool {
        match self.greedy_with(tex, bucket, limit, compete, true) {
            Some(fits) => fits,
            None => self
                .greedy_with(tex, bucket, limit, compete, false)
                .expect("a fill without a summary is always walked"),
        }
    }

    /// [`Planner::greedy`], the resident steps above the cut summarised or not (`summarize`;
    /// see [`Fill::cut`]): `None` when the summary does not hold and the fill must be made
    /// again without one.
    pub(super) fn greedy_with(
        &mut self,
        tex: &PlanTextures,
        bucket: usize,
        limit: u64,
        compete: bool,
        summarize: bool,
    ) -> Option<bool> {
        let n = tex.len();
        let mut fill = self.fill_start(n, bucket, compete, summarize);
        let list = &self.list[..];
        let work = &mut self.work[..n];
        let views = tex.views();
        let mut slots = self.scratch.slots(n);
        for (k, &i) in list.iter().enumerate() {
            // As in `observe`: the lines of a texture a dozen ahead are asked for now (its
            // level sizes, and its work).
            let ahead = list
                .get(k + super::PREFETCH_AHEAD)
                .map_or(0, |&j| j as usize);
            views.prefetch(ahead);
            super::prefetch_at(work, ahead);
            let i = i as usize;
            let Some(t) = views.get(i) else {
                continue;
            };
            fill.add(i, t, &mut work[i], &mut slots);
        }
        self.fill_finish(fill, limit)
    }

    /// The start of a greedy fill at `bucket` over a scene of `n` textures: the scratch
    /// emptied and sized, the bytes that are not the listed textures' (fixed, render targets,
    /// the quiet textures' floors). Then [`Fill::add`] for every listed texture, in list order,
    /// and [`Planner::fill_finish`].
    pub(super) fn fill_start(
        &mut self,
        n: usize,
        bucket: usize,
        compete: bool,
        summarize: bool,
    ) -> Fill {
        // A bonus below 1 would favour churn; NaN counts as no bonus.
        let bonus = if self.config.keep_bonus >= 1.0 {
            self.config.keep_bonus
        } else {
            1.0
        };
        // The quiet textures (not in the list) stay at their floors, which are in `quiet_floor`.
        let quiet = u64::try_from(self.quiet_floor).unwrap_or(u64::MAX);
        let base = self
            .fixed
            .saturating_add(self.rt(bucket))
            .saturating_add(quiet);
        self.scratch.items.clear();
        self.scratch.growers.clear();
        self.scratch.touched.clear();
        self.scratch.targets.resize(n, 0);
        self.scratch.old.resize(n, 0);
        Fill {
            base,
            margin: 0,
            mb: self.mip_bias(bucket),
            bonus,
            compete,
            held: 0.0,
            // Floors that compete make items of their own: no summary then. Nor without
            // incremental planning: its plans are made from nothing the previous one left,
            // the reference the incremental plans are checked against.
            // Each bucket its own cut, from its last fill's price (other mip bias, other bins).
            cut: match self.cuts.get(bucket) {
                Some(&cut) if summarize && !compete && self.config.incremental => u32::from(cut),
                _ => NO_CUT,
            },
            bucket,
            summary: 0,
            above: 0,
            above_margin: 0,
            broken: false,
        }
    }

    /// The greedy itself once every listed texture was added to `fill`: sorts the items, takes
    /// them best first while they fit, and sets every listed texture's target. Returns whether
    /// the mandatory part fits.
    pub(super) fn fill_finish(&mut self, fill: Fill, limit: u64) -> Option<bool> {
        let Fill {
            base,
            mut margin,
            held,
            cut,
            summary,
            above,
            above_margin,
            broken,
            bucket,
            ..
        } = fill;
        // The summary holds when every step above the cut fits whatever the order it would
        // have been taken in (see `Fill::cut`); otherwise the fill is made again without it.
        if cut != NO_CUT {
            let need = u128::from(base) + summary + above + u128::from(margin.max(above_margin));
            if broken || need > u128::from(limit) {
                return None;
            }
        }
        // ScaleBucket sort by bin, best first; stable, so ties go by texture then coarse to fine.
        // Only the bins from the least to the greatest one used are gone through (the
        // counts outside them stay 0 from the previous sort).
        // Local slices, the counts as an array indexed by a masked bin (bins are below `BINS`
        // by construction): no pointer reloaded through `self` and no bounds check per item.
        let (mut lo, mut hi) = (BINS, 0);
        let counts: &mut [u32; BINS] = (&mut self.counts[..])
            .try_into()
            .expect("the counts have one entry per bin");
        let bin = |it: &Item| it.bin() & (BINS - 1);
        let items = self.scratch.items.as_slice();
        for it in items {
            let b = bin(it);
            counts[b] += 1;
            lo = lo.min(b);
            hi = hi.max(b);
        }
        if lo <= hi {
            let mut acc = 0u32;
            for c in counts[lo..=hi].iter_mut().rev() {
                let n = *c;
                *c = acc;
                acc += n;
            }
        }
        self.sorted.clear();
        self.sorted.resize(items.len(), Item::default());
        let sorted = &mut self.sorted[..];
        for it in items {
            let b = bin(it);
            sorted[counts[b] as usize] = *it;
            counts[b] += 1;
        }
        if lo <= hi {
            counts[lo..=hi].fill(0);
        }

        // The greedy itself touches only the sorted items and two compact per-texture arrays
        // (target, old bytes): at 10k textures that is what keeps a full plan in cache. The
        // summarised steps are taken before any item (their targets are set already).
        let fits = base.saturating_add(margin) <= limit;
        let mut steady = base.saturating_add(u64::try_from(summary).unwrap_or(u64::MAX));
        // The bin of the best step left out for want of room (0: none), or of a held
        // texture's next step if better: the memory's price.
        let mut price = 0;
        let held = bin_of(held);
        for it in &self.sorted {
            let i = it.texture as usize;
            let target = &mut self.scratch.targets[i];
            // Each texture's steps are taken coarse to fine: a step whose coarser neighbour was
            // not taken is blocked (its gain per byte is no better anyway).
            if *target & !GROWER != it.prev {
                continue;
            }
            let kept = it.kept();
            // A grow keeps the old texture alive while the new one is built: the largest such
            // old texture must fit on top of the steady total (builds run one at a time).
            let m = if kept {
                margin
            } else {
                margin.max(self.scratch.old[i])
            };
            if steady.saturating_add(it.bytes).saturating_add(m) <= limit {
                steady = steady.saturating_add(it.bytes);
                margin = m;
                if !kept && *target & GROWER == 0 {
                    *target |= GROWER;
                    self.scratch.growers.push(it.texture);
                }
                *target = it.level | (*target & GROWER);
            } else if price == 0 {
                price = it.bin();
            }
        }
        self.price = f32::from_bits((price.max(held) as u32) << BIN_SHIFT);
        // The next fill's cut: an octave above the first step left out (every step above it
        // fitted; the view moves little from one plan to the next), or every resident step
        // with a gain when all fitted.
        if self.cuts.len() <= bucket {
            self.cuts.resize(bucket + 1, NO_CUT as u16);
        }
        self.cuts[bucket] = if price == 0 {
            0
        } else {
            (price + CUT_MARGIN).min(BINS) as u16
        };
        // The targets the walk moved, and the textures that drop (a target coarser than what
        // is resident, not pinned): what `order_drops` goes through, in list order. Only the
        // touched textures (see `Slots::touch`) can have either: every other one's target
        // was set when it was added.
        self.scratch.drops.clear();
        for &i in &self.scratch.touched {
            let w = &mut self.work[i as usize];
            w.target = self.scratch.targets[i as usize] & !GROWER;
            if w.target > w.resident && !matches!(w.mode, Mode::Busy | Mode::Cooling | Mode::Kept) {
                self.scratch.drops.push(i);
            }
        }
        Some(fits)
    }

    /// Keeps what the last fill decided (each listed texture's target, the grows, the drops,
    /// the memory's price), for [`Planner::restore_fill`].
    #[inline(never)]
    pub(super) fn save_fill(&mut self) {
        let (s, work) = (&mut self.scratch, &self.work);
        s.saved_targets.clear();
        s.saved_targets
            .extend(self.list.iter().map(|&i| work[i as usize].target));
        s.saved_growers.clone_from(&s.growers);
        s.saved_drops.clone_from(&s.drops);
        self.saved_price = self.price;
    }

    /// Back to the fill [`Planner::save_fill`] kept, with the same listed textures and modes
    /// since: what that fill made again would give (a fill depends on nothing else, and a
    /// summarised one gives the targets, grows and price of one walked in full), without
    /// making it again.
    #[inline(never)]
    pub(super) fn restore_fill(&mut self) {
        let s = &mut self.scratch;
        for (&i, &target) in self.list.iter().zip(&s.saved_targets) {
            self.work[i as usize].target = target;
        }
        s.growers.clone_from(&s.saved_growers);
        s.drops.clone_from(&s.saved_drops);
        self.price = self.saved_price;
    }

    /// Debug builds: the fill [`Planner::restore_fill`] brought back is the kept one, and
    /// that is the one a fill at `bucket` makes again (targets, grows, drops, price); leaves
    /// the latter. Allocates nothing (the planner allocates nothing per frame once warm).
    #[cfg(debug_assertions)]
    pub(super) fn check_restored(&mut self, tex: &PlanTextures, bucket: usize, limit: u64) {
        let kept = |p: &Self| {
            let s = &p.scratch;
            let targets = p.list.iter().map(|&i| p.work[i as usize].target);
            targets.eq(s.saved_targets.iter().copied())
                && s.growers == s.saved_growers
                && s.drops == s.saved_drops
                && p.price.to_bits() == p.saved_price.to_bits()
        };
        assert!(kept(self), "a restored fill is not the kept one");
        self.greedy(tex, bucket, limit, false);
        assert!(kept(self), "a kept fill differs from the fill made again");
    }

    /// The planner's objective at a bucket, with the current targets: the scale's blur on every
    /// output pixel (times [`PlannerConfig::scale_blur_weight`]) plus each texture's missing
    /// octaves times its pixels and priority.
    pub(super) fn cost(&self, tex: &PlanTextures, bucket: usize) -> f64 {
        self.output_pixels as f64 * self.scale_blur(bucket) * self.scale_weight()
            + self.texture_blur(tex, bucket)
    }

    /// Texture blur (priority-weighted) of the current targets at a bucket's mip bias.
    pub(super) fn texture_blur(&self, tex: &PlanTextures, bucket: usize) -> f64 {
        let mb = self.mip_bias(bucket);
        self.list
            .iter()
            .map(|&i| {
                let w = &self.work[i as usize];
                let level = if w.mode == Mode::Busy {
                    w.flight
                } else {
                    w.target
                };
                w.blur_at(tex.view(i as usize), level, mb, true)
            })
            .sum()
    }
}

/// A greedy fill under way (see [`Planner::fill_start`]): the bytes of what is decided so far
/// and how the listed textures' steps are valued.
pub(super) struct Fill {
    /// Fixed bytes, render targets, quiet floors and the mandatory bytes of the textures added.
    base: u64,
    /// The largest old texture alive during a busy texture's build.
    margin: u64,
    /// The bucket's mip bias.
    mb: f32,
    /// The keep bonus (at least 1).
    bonus: f32,
    /// Floors compete (the budget is too small for all of them).
    compete: bool,
    /// The best gain per byte of a held texture's next step (held textures make no items, but
    /// what a byte is worth to them is part of the memory's price).
    held: f32,
    /// Resident steps whose bin is above this one are summarised instead of made items: their
    /// bytes summed in `summary`, the texture's target moved past them. The greedy would take
    /// each of them before any item at or below the cut, so it takes them all when everything
    /// above the cut fits whatever its order: the summary, `above` (the bytes of every item
    /// above the cut) and the largest old texture a grow among those keeps alive
    /// (`above_margin`) together within the limit. And the order within a texture must be
    /// the greedy's: a texture's summarised steps are its first ones, each bin no greater
    /// than the previous one's; the step after them, when it is above the cut, no greater
    /// than their last (else `broken`: that step would have come first and been blocked).
    /// [`Planner::fill_finish`] checks this and otherwise asks for the fill again without a
    /// cut ([`NO_CUT`]). At 10k textures in a moving view nearly every item is a resident
    /// step the greedy takes: summarised, none of them is sorted nor walked.
    cut: u32,
    /// The bucket of the fill (the next fill at it takes its cut from this one's price).
    bucket: usize,
    summary: u128,
    above: u128,
    above_margin: u64,
    broken: bool,
}

/// No cut: every step is an item.
const NO_CUT: u32 = BINS as u32;

/// How far above the first step left out (in bins: 16 an octave) the next fill's cut is set.
const CUT_MARGIN: usize = 16;

impl Fill {
    /// Adds texture `i` (inputs `t`, its work `w` with its mode decided): its mandatory bytes,
    /// its target before the greedy, and its mip steps as items.
    #[inline(always)]
    pub(super) fn add(&mut self, i: usize, t: Tex<'_>, w: &mut Work, s: &mut Slots<'_>) {
        s.old[i] = w.resident_bytes;
        let items = s.items.len;
        let id = i as u32;
        let mut grower = false;
        match w.mode {
            Mode::Busy => {
                w.target = w.flight;
                // Its grow is pinned, but what a byte beyond it is worth to it is demand too.
                self.held = self.held.max(next_step(t, w, w.flight, self.mb));
                self.base = self
                    .base
                    .saturating_add(w.resident_bytes.max(w.flight_bytes));
                if w.flight != w.resident {
                    self.margin = self.margin.max(w.resident_bytes.min(w.flight_bytes));
                }
            }
            Mode::Cooling | Mode::Kept => {
                w.target = w.resident;
                self.base = self.base.saturating_add(w.resident_bytes);
                self.held = self.held.max(next_step(t, w, w.resident, self.mb));
            }
            Mode::Evicted => {
                w.target = w.floor;
                self.base = self.base.saturating_add(w.floor_bytes);
            }
            Mode::Free | Mode::Stale | Mode::Released => {
                let (count, floor, resident) = (w.count, w.floor, w.resident);
                let can_grow = w.mode != Mode::Released;
                if self.compete {
                    w.target = count;
                    if floor < count && (resident <= floor || can_grow) {
                        let gain = w.gain(t, count, floor, self.mb);
                        let kept = resident <= floor;
                        let d = density(gain, w.floor_bytes, kept, self.bonus);
                        s.items
                            .push(Item::new(id, floor, count, kept, d, w.floor_bytes));
                    }
                } else {
                    // Floors are mandatory; one that is missing (after a too-small budget)
                    // comes back alone first: it needs no IO, and the next plans add levels
                    // from there.
                    w.target = floor;
                    self.base = self.base.saturating_add(w.floor_bytes);
                    if resident > floor {
                        grower = true;
                        s.growers.push(id);
                    }
                }
                if resident <= floor {
                    // One loop per kind of demand: the one of most textures has no histogram
                    // branch in it.
                    let target = if w.hist {
                        steps::<true>(s.items, id, t, w, self, can_grow)
                    } else {
                        steps::<false>(s.items, id, t, w, self, can_grow)
                    };
                    s.targets[i] = target;
                    w.target = target;
                    s.touch(id, w, items);
                    return;
                }
            }
        }
        s.targets[i] = w.target | if grower { GROWER } else { 0 };
        s.touch(id, w, items);
    }
}

/// The gain per byte of the step from `level` to the next finer allowed level of a texture the
/// plan holds where it is (or pins at its grow in flight): what a byte would be worth to it.
#[inline]
fn next_step(t: Tex<'_>, w: &Work, level: u8, mb: f32) -> f32 {
    // The allowed bases finer than `level`; the next step's level is the highest of them.
    let finer = u32::from(t.base_levels) & ((1u32 << level.min(16)) - 1);
    if finer == 0 {
        return 0.0;
    }
    let k = (31 - finer.leading_zeros()) as u8;
    let bytes = t.bytes_from(k).saturating_sub(t.bytes_from(level));
    density(w.gain(t, level, k, mb), bytes, false, 1.0)
}

/// The greedy's scratch, kept between plans.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The listed textures' mip steps.
    items: Items,
    /// Textures that grow in this plan (a floor that is missing, or a step taken).
    pub(super) growers: Vec<u32>,
    /// Per texture: its target, with [`GROWER`] once listed among the growers. Compact: the
    /// greedy's walk jumps from texture to texture.
    targets: Vec<u8>,
    /// Per texture: its resident bytes (the old texture alive during its grow's build).
    old: Vec<u64>,
    /// The listed textures whose target drops levels (see [`Planner::fill_finish`]).
    pub(super) drops: Vec<u32>,
    /// The listed textures whose target the walk may move or that may drop
    /// ([`Slots::touch`]), in list order: the only ones whose work the fill goes back to.
    touched: Vec<u32>,
    /// What [`Planner::save_fill`] kept: the listed textures' targets (in list order), the
    /// grows and the drops.
    saved_targets: Vec<u8>,
    saved_growers: Vec<u32>,
    saved_drops: Vec<u32>,
}

/// What [`Fill::add`] writes per texture: the scratch's per-texture arrays as slices as long as
/// the scene, its items and its growers.
pub(super) struct Slots<'a> {
    old: &'a mut [u64],
    targets: &'a mut [u8],
    items: &'a mut Items,
    growers: &'a mut Vec<u32>,
    touched: &'a mut Vec<u32>,
}

impl Slots<'_> {
    /// Lists texture `id` (work `w`, its target before the walk) among the touched ones when
    /// the walk may move its target (it has items: the buffer held `items` before it was
    /// added) or it may drop (a target coarser than what is resident: an eviction, a floor
    /// that competes, or resident steps left out, which are items).
    #[inline(always)]
    fn touch(&mut self, id: u32, w: &Work, items: usize) {
        if self.items.len != items || w.target > w.resident {
            self.touched.push(id);
        }
    }
}

impl Scratch {
    /// The slots of a scene of `n` textures (after [`Planner::fill_start`] sized them).
    pub(super) fn slots(&mut self, n: usize) -> Slots<'_> {
        Slots {
            old: &mut self.old[..n],
            targets: &mut self.targets[..n],
            items: &mut self.items,
            growers: &mut self.growers,
            touched: &mut self.touched,
        }
    }
}

/// The mip steps of texture `i` above its floor (at or above it: `w.resident <= w.floor`), as
/// greedy items, for a texture with a histogram (`HIST`) or without: one per allowed base level,
/// from the next coarser allowed one (every level, unless the texture's format forbids some
/// bases); the resident ones all, then the grows while they gain. The same gains, bit for bit,
/// as [`Work::gain`] (one `blur` per level instead of two). Its first resident steps above the
/// fill's cut are summarised instead ([`Fill::cut`]). Returns the texture's target before the
/// walk: `w.target`, or past its summarised steps.
#[inline(always)]
fn steps<const HIST: bool>(
    items: &mut Items,
    i: u32,
    t: Tex<'_>,
    w: &Work,
    fill: &mut Fill,
    can_grow: bool,
) -> u8 {
    // A grow keeps the old texture (its resident bytes) alive while the new one is built.
    let (start, old) = (w.target, w.resident_bytes);
    // At most one item per level finer than the floor: room for all of them, written through
    // a count in a register (a `push` reloaded and stored the vector's length every item).
    let room = items.room();
    let mut n = 0usize;
    let (mb, bonus, cut) = (fill.mb, fill.bonus, fill.cut);
    let (floor, resident) = (w.floor, w.resident);
    // `resident <= floor <= 16`: the mask has room for bit 16. Levels finer than the finest
    // allowed base (a texture's level cap clears the bits below it) are not kept either: the
    // plan drops them.
    let cap = t.base_levels.trailing_zeros();
    let kept_base = if u32::from(resident) >= cap {
        1 << resident
    } else {
        0
    };
    let allowed = u32::from(t.base_levels) | kept_base;
    let (wanted, weight) = (w.wanted + mb, w.weight());
    // The gain of the step from `prev` (blur `prev_blur`) to `k`, and `k`'s blur.
    let step = |k: u8, prev: u8, prev_blur: f32| -> (f32, f32) {
        if HIST {
            (w.gain(t, prev, k, mb), 0.0)
        } else {
            let k_blur = blur(k, wanted);
            (weight * (prev_blur - k_blur), k_blur)
        }
    };
    // The summary (see `Fill::cut`): `chain` while every step so far was summarised, `last`
    // the bin of the last one.
    let (mut chain, mut last, mut target) = (true, u32::MAX, start);
    let (mut summary, mut above) = (0u128, 0u128);
    let mut prev = floor;
    let mut prev_blur = blur(floor, wanted);
    let mut bytes = 0u64;
    let mut k = floor;
    // The chain: the first resident steps, summarised while each is above the cut and in the
    // greedy's order; the step that ends it is the first item. A loop of its own: in a moving
    // view it is every resident step of nearly every texture.
    while k > resident {
        k -= 1;
        bytes = bytes.saturating_add(t.sizes[usize::from(k) & (MAX_LEVELS - 1)]);
        if allowed & 1 << k == 0 {
            continue;
        }
        let (gain, k_blur) = step(k, prev, prev_blur);
        let bin = density_bin(gain, bytes, true, bonus);
        if bin > cut && bin <= last {
            summary += u128::from(bytes);
            target = k;
            last = bin;
        } else {
            fill.broken |= bin > cut;
            chain = false;
            if bin > cut {
                above += u128::from(bytes);
            }
            room[n & (MAX_LEVELS - 1)] = Item::with_bin(i, k, prev, true, bin, bytes);
            n += 1;
        }
        prev = k;
        prev_blur = k_blur;
        bytes = 0;
        if !chain {
            break;
        }
    }
    // The rest of the resident steps: items.
    while k > resident {
        k -= 1;
        bytes = bytes.saturating_add(t.sizes[usize::from(k) & (MAX_LEVELS - 1)]);
        if allowed & 1 << k == 0 {
            continue;
        }
        let (gain, k_blur) = step(k, prev, prev_blur);
        let bin = density_bin(gain, bytes, true, bonus);
        if bin > cut {
            above += u128::from(bytes);
        }
        room[n & (MAX_LEVELS - 1)] = Item::with_bin(i, k, prev, true, bin, bytes);
        n += 1;
        prev = k;
        prev_blur = k_blur;
        bytes = 0;
    }
    if can_grow {
        while k > 0 {
            k -= 1;
            bytes = bytes.saturating_add(t.sizes[usize::from(k) & (MAX_LEVELS - 1)]);
            if allowed & 1 << k == 0 {
                continue;
            }
            let (gain, k_blur) = step(k, prev, prev_blur);
            // Not more than 0, or NaN: nothing finer gains either.
            if gain.is_nan() || gain <= 0.0 {
                break;
            }
            let bin = density_bin(gain, bytes, false, bonus);
            fill.broken |= chain && bin > cut && bin > last;
            chain = false;
            if bin > cut {
                above += u128::from(bytes);
                fill.above_margin = fill.above_margin.max(old);
            }
            room[n & (MAX_LEVELS - 1)] = Item::with_bin(i, k, prev, false, bin, bytes);
            n += 1;
            prev = k;
            prev_blur = k_blur;
            bytes = 0;
        }
    }
    debug_assert!(n <= MAX_LEVELS);
    items.len += n;
    fill.summary += summary;
    fill.above += above;
    target
}

/// The greedy's items: a buffer that only grows, and how many of its items are this plan's.
#[derive(Debug, Default)]
pub(super) struct Items {
    buf: Vec<Item>,
    len: usize,
}

impl Items {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, item: Item) {
        self.room()[0] = item;
        self.len += 1;
    }

    /// Room for one texture's items (at most one per level) after this plan's.
    #[inline(always)]
    fn room(&mut self) -> &mut [Item; MAX_LEVELS] {
        if self.buf.len() < self.len + MAX_LEVELS {
            self.grow();
        }
        (&mut self.buf[self.len..self.len + MAX_LEVELS])
            .try_into()
            .expect("room for MAX_LEVELS items")
    }

    #[cold]
    fn grow(&mut self) {
        let n = (self.len + MAX_LEVELS).max(self.buf.len() * 2);
        self.buf.resize(n, Item::default());
    }

    fn as_slice(&self) -> &[Item] {
        &self.buf[..self.len]
    }
}
