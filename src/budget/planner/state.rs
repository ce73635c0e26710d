//! The planner's state between frames (what it saw, each texture's history) and its scratch
//! types (per-frame work, sums, drops, greedy items), with the pure helpers they use.

use super::*;

/// How a texture takes part in this frame's plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Planned from scratch.
    #[default]
    Free,
    /// Busy, inputs unchanged: pinned at its in-flight level.
    Busy,
    /// Busy, but its inputs moved since the grow was decided, or the budget changed: planned
    /// again; the grow stays in flight if the new plan wants the same level, otherwise it is
    /// cancelled (a grow decided for a smaller budget would otherwise complete into a hold and
    /// keep the texture below what the new budget allows).
    Stale,
    /// Busy, cancelled because the budget no longer holds it: may keep or drop levels, not grow.
    Released,
    /// Changed recently with unchanged inputs: pinned at its resident level.
    Cooling,
    /// Its drop could not shrink (no room for the new texture next to the old): kept as it is,
    /// and the others planned again around that.
    Kept,
    /// Its drop could not shrink, and keeping it does not fit either: evicted to its floor, and
    /// the others planned again around that.
    Evicted,
}

/// Per-texture values derived for one plan. One cache line each (56 bytes of fields): at 56
/// bytes apart most works straddled two lines, and a pass that asks for a texture's line
/// ahead of time waited on the second.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub(super) struct Work {
    pub(super) mode: Mode,
    pub(super) count: u8,
    pub(super) floor: u8,
    pub(super) resident: u8,
    pub(super) flight: u8,
    pub(super) target: u8,
    /// Set once a drop of this texture has been ordered.
    pub(super) done: bool,
    /// A grow is in flight.
    pub(super) busy: bool,
    /// Busy with no recorded decision (a grow the planner did not order, or one ordered
    /// before a new identity or run cleared the history): its view now is taken as the
    /// decision ([`Planner::post_pass`] records it), and the grow is held.
    pub(super) adopt: bool,
    /// The demand is the texture's histogram ([`PlanTextures::level_pixels`]); `wanted` is then
    /// its pixel-weighted mean level, for the view tolerance only.
    pub(super) hist: bool,
    /// Sanitised inputs: wanted level (NaN -> infinity), pixels and priority (>= 0).
    pub(super) wanted: f32,
    pub(super) pixels: f32,
    pub(super) priority: f32,
    pub(super) floor_bytes: u64,
    pub(super) resident_bytes: u64,
    pub(super) flight_bytes: u64,
    /// Its history's [`History::changed_at`] when it was observed (only an observation
    /// changes it): a plan's hold and quiet tests read it here, not the history's line.
    pub(super) changed_at: u64,
}

impl Work {
    /// Texture `t`'s work from scratch, its history `h` brought up to date first: identity
    /// (a new one starts a fresh history), sizes (`resize`: recomputed), and a change of its
    /// resident level (which starts a hold, unless exempt or a step of a grow in flight).
    #[inline(always)]
    pub(super) fn observe(t: Tex<'_>, h: &mut History, frame: u64, resize: bool) -> Self {
        let count = t.count();
        let floor = t.floor();
        let resident = t.resident();
        let identity = (t.level0_bytes, count, floor);
        if h.identity != identity {
            *h = History::fresh(t);
        } else if resize {
            h.floor_bytes = t.bytes_from(floor);
            h.resident_bytes = t.bytes_from(resident);
        }
        if resident != h.level {
            h.floor_returned = h.level >= count && resident == floor;
            h.level = resident;
            // A step of a grow still in flight is progress towards a target the planner
            // chose, not a change that starts a hold: were it cancelled here (its last step
            // no longer fits beside the others' builds), a hold would pin the texture at the
            // partial level for the whole hold while the budget has room for it to go on.
            // The hold starts when the grow completes (or for a drop).
            h.changed_at = if h.exempt || t.busy { NEVER } else { frame };
            // A grow built in steps (one level at a time) changes the level several times:
            // an exemption lasts until the last step.
            if !t.busy {
                h.exempt = false;
            }
            h.resident_bytes = t.bytes_from(resident);
        }
        Self {
            mode: Mode::Free,
            count,
            floor,
            resident,
            flight: if t.busy { t.in_flight() } else { resident },
            target: resident,
            done: false,
            busy: t.busy,
            adopt: false,
            hist: t.histogram,
            wanted: if t.histogram {
                histogram_mean(t)
            } else {
                sanitize_wanted(t.wanted_level)
            },
            pixels: sanitize_weight(t.screen_pixels),
            priority: sanitize_weight(t.priority),
            floor_bytes: h.floor_bytes,
            resident_bytes: h.resident_bytes,
            flight_bytes: if t.busy {
                t.bytes_from(t.in_flight())
            } else {
                h.resident_bytes
            },
            changed_at: h.changed_at,
        }
    }

    /// [`Work::observe`] of a texture without a histogram whose levels, `busy`, identity and
    /// flags are those of its last observation (only its view changed since, or nothing), and
    /// whose work has not been made from scratch since (a plan only edits its mode, target and
    /// flags): the same work, its view read again, without reading its history or sizes (its
    /// history would not change either). What the change scan's bits ensure (see
    /// `Planner::deep`): a change beyond the view goes through the scan's slow path, and a
    /// texture that was quiet and changed beyond its view while it stayed quiet kept its level
    /// at its floor and its identity, which is what its work holds.
    #[inline(always)]
    pub(super) fn revisit(&mut self, t: &PlanTexture) {
        debug_assert!(!t.histogram && !self.hist);
        self.mode = Mode::Free;
        self.target = self.resident;
        self.done = false;
        self.adopt = false;
        self.wanted = sanitize_wanted(t.wanted_level);
        self.pixels = sanitize_weight(t.screen_pixels);
        self.priority = sanitize_weight(t.priority);
    }

    /// Whether two works are the same, bit for bit (floats by their bits).
    #[cfg(debug_assertions)]
    pub(super) fn same_as(&self, o: &Work) -> bool {
        (
            self.mode,
            self.count,
            self.floor,
            self.resident,
            self.flight,
            self.target,
        ) == (o.mode, o.count, o.floor, o.resident, o.flight, o.target)
            && (self.done, self.busy, self.adopt, self.hist) == (o.done, o.busy, o.adopt, o.hist)
            && (
                self.wanted.to_bits(),
                self.pixels.to_bits(),
                self.priority.to_bits(),
            ) == (o.wanted.to_bits(), o.pixels.to_bits(), o.priority.to_bits())
            && (
                self.floor_bytes,
                self.resident_bytes,
                self.flight_bytes,
                self.changed_at,
            ) == (
                o.floor_bytes,
                o.resident_bytes,
                o.flight_bytes,
                o.changed_at,
            )
    }

    /// Whether a busy texture planned again keeps its grow in flight: when the new plan still
    /// grows it, to the in-flight level or finer (then a `Grow` without a `Cancel` retargets
    /// it). Why: in a moving view every grow's inputs move each frame; cancelling a grow for a
    /// finer target threw away its reads and a partly uploaded level, so a large level could
    /// never land while the camera moved. A coarser target is cancelled: the flight's bytes
    /// are more than the plan counted.
    pub(super) fn keeps_flight(&self) -> bool {
        self.mode == Mode::Stale && self.target <= self.flight && self.flight < self.resident
    }

    /// Bytes of `t` from `level` on, from the sizes already known where possible (levels above
    /// the floor are few).
    pub(super) fn bytes_at(&self, t: Tex<'_>, level: u8) -> u64 {
        if level == self.resident {
            self.resident_bytes
        } else if level == self.floor {
            self.floor_bytes
        } else if level < self.floor {
            t.sizes[usize::from(level)..usize::from(self.floor)]
                .iter()
                .fold(self.floor_bytes, |a, &b| a.saturating_add(b))
        } else {
            t.bytes_from(level)
        }
    }

    /// Blur weight: pixels times priority.
    pub(super) fn weight(&self) -> f32 {
        (self.pixels * self.priority).min(f32::MAX)
    }

    /// Blur removed (priority-weighted pixel-octaves) by having `to` resident instead of `from`,
    /// at mip bias `mb`.
    #[inline]
    pub(super) fn gain(&self, t: Tex<'_>, from: u8, to: u8, mb: f32) -> f32 {
        if self.hist {
            (self.priority * (t.blur_pixels(from, mb) - t.blur_pixels(to, mb))).min(f32::MAX)
        } else {
            let wanted = self.wanted + mb;
            self.weight() * (blur(from, wanted) - blur(to, wanted))
        }
    }

    /// Blur (pixel-octaves) with `level` resident at mip bias `mb`, weighted by priority or not.
    pub(super) fn blur_at(&self, t: Tex<'_>, level: u8, mb: f32, weighted: bool) -> f64 {
        let weight = if weighted { self.priority } else { 1.0 };
        if self.hist {
            f64::from(weight) * f64::from(t.blur_pixels(level, mb))
        } else {
            let w = if weighted { self.weight() } else { self.pixels };
            f64::from(w) * f64::from(blur(level, self.wanted + mb))
        }
    }
}

/// The pixel-weighted mean wanted level of a histogram texture (infinity with no pixels): what
/// the view tolerance compares frame to frame.
pub(super) fn histogram_mean(t: Tex<'_>) -> f32 {
    let (mut sum, mut total) = (0.0f64, 0.0f64);
    for (l, &p) in t.bins.iter().enumerate() {
        if p > 0.0 {
            sum += f64::from(p) * l as f64;
            total += f64::from(p);
        }
    }
    if total > 0.0 {
        (sum / total) as f32
    } else {
        f32::INFINITY
    }
}

/// What the change check compares, per texture, packed in four words so that the check is a
/// few XORs per texture. Each word is a run of [`PlanTexture`]'s fields in memory order (one
/// load each): the view (wanted level and pixels); the priority and the levels (the in-flight
/// level too, which matters only while busy: a change of it while idle costs one needless
/// re-plan, never a different plan); the identity (level 0's bytes); `busy`, `histogram` and
/// the allowed bases, with [`HISTOGRAM_MARK`] for a texture with a histogram, whose 64-bit hash
/// the planner keeps beside these words (only histogram textures read theirs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Seen(pub(super) [u64; 4]);

impl Seen {
    /// The four words of `t`.
    #[inline]
    pub(super) fn of(t: &PlanTexture) -> Self {
        let mut k = Self::cheap(t);
        if t.histogram {
            k.0[3] |= HISTOGRAM_MARK;
        }
        k
    }

    /// The words without [`HISTOGRAM_MARK`]: equal to [`Seen::of`] for a texture without a
    /// histogram; one with a histogram never compares equal, so it gets the exact check.
    /// Always inlined and with no call inside: the change check runs it for every texture,
    /// every frame. The record's 32 bytes as four little-endian words (four loads; built from
    /// its fields, the compiler loaded them one by one): the view (wanted level, pixels), the
    /// priority and levels (`level_count` from bit 32, then floor, resident, in flight), level
    /// 0's bytes, then `busy`, `histogram`, the bases and the reserved (0) bytes.
    #[inline(always)]
    pub(super) fn cheap(t: &PlanTexture) -> Self {
        let words: [u64; 4] = bytemuck::cast(*t);
        Self(words.map(u64::from_le))
    }

    /// The four words XORed with `other`'s and ORed together: 0 exactly when they are equal.
    /// Word by word in registers: `==` on the arrays compiled to 16-byte loads of words just
    /// stored 8 bytes at a time, a store-forwarding stall that was a third of the listed change
    /// check's time (perf, 10k textures told half of them).
    #[inline(always)]
    pub(super) fn xor(&self, other: &Seen) -> u64 {
        (self.0[0] ^ other.0[0])
            | (self.0[1] ^ other.0[1])
            | (self.0[2] ^ other.0[2])
            | (self.0[3] ^ other.0[3])
    }

    /// Whether these are the words of a texture with a histogram (its hash, kept beside them,
    /// is then not 0; without one it is 0).
    #[inline(always)]
    pub(super) fn has_histogram(&self) -> bool {
        self.0[3] & HISTOGRAM_MARK != 0
    }

    /// Whether everything but the view (wanted level, pixels, priority; a histogram's bins are
    /// not in the words) is the same: levels, `busy`, identity, flags and allowed bases.
    #[inline(always)]
    pub(super) fn same_but_view(&self, other: &Seen) -> bool {
        (self.0[1] ^ other.0[1]) >> 32 == 0 && self.0[2] == other.0[2] && self.0[3] == other.0[3]
    }

    /// Whether the view part (wanted level, pixels, priority, histogram) differs.
    pub(super) fn view_differs(&self, other: &Seen) -> bool {
        self.0[0] != other.0[0]
            || (self.0[1] ^ other.0[1]) & 0xFFFF_FFFF != 0
            || (self.0[3] ^ other.0[3]) & !0xFF != 0
    }
}

/// Set in [`Seen`]'s last word for a texture with a histogram: [`Seen::cheap`] leaves it out, so
/// such a texture always gets the exact check (its histogram's hash, kept beside the words).
const HISTOGRAM_MARK: u64 = 1 << 32;

/// A 64-bit hash of a texture's histogram's bits, 0 without one (never 0 with one).
#[inline(always)]
pub(super) fn histogram_hash(t: &PlanTexture, bins: &[f32; MAX_LEVELS]) -> u64 {
    if t.histogram { hash_bins(bins) } else { 0 }
}

/// Out of line: most textures have no histogram.
#[inline(never)]
fn hash_bins(pixels: &[f32; MAX_LEVELS]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for &p in pixels {
        h = (h ^ u64::from(p.to_bits())).wrapping_mul(0x0000_0100_0000_01B3);
    }
    h | 1
}

/// Per-texture memory across frames: the hysteresis state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct History {
    /// Identity of the texture in this slot (level 0 bytes, level count, floor): when it changes,
    /// the slot holds another texture and its history starts afresh.
    pub(super) identity: (u64, u8, u8),
    /// Resident level seen at the previous plan.
    pub(super) level: u8,
    /// Frame at which the resident level was last seen to change, or [`NEVER`].
    pub(super) changed_at: u64,
    /// Inputs when the planner last decided something for this texture.
    pub(super) decided: Option<(f32, f32, f32)>,
    /// The next observed change was forced (an eviction right after a budget change) and starts
    /// no hold, so the texture may grow back as soon as it is worth it.
    pub(super) exempt: bool,
    /// The last change brought the floor back to a texture that had nothing resident. While
    /// the floors fit, that starts no hold: it is no choice between views (the planner brings
    /// a missing floor back alone and adds levels from it in the next plan), and held, the
    /// texture stayed at its floor for the whole hold. While they compete, it holds as any
    /// change does (a floor that just came back is not evicted in the next plan).
    pub(super) floor_returned: bool,
    /// Bytes of the floor tail and of the resident levels (`level..`), kept across frames: they
    /// change only with the identity or the resident level.
    pub(super) floor_bytes: u64,
    pub(super) resident_bytes: u64,
}

impl History {
    /// The history of a slot not seen yet: an identity no texture has (level counts are at
    /// most 16), so the first sight starts it afresh.
    pub(super) fn none() -> Self {
        Self {
            identity: (u64::MAX, u8::MAX, u8::MAX),
            level: 0,
            changed_at: NEVER,
            decided: None,
            exempt: false,
            floor_returned: false,
            floor_bytes: 0,
            resident_bytes: 0,
        }
    }

    pub(super) fn fresh(t: Tex<'_>) -> Self {
        Self {
            identity: (t.level0_bytes, t.count(), t.floor()),
            level: t.resident(),
            changed_at: NEVER,
            decided: None,
            exempt: false,
            floor_returned: false,
            floor_bytes: t.bytes_from(t.floor()),
            resident_bytes: t.bytes_from(t.resident()),
        }
    }
}

/// Sums over the textures by mode, to size the mandatory bytes for each release level at O(1).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sums {
    /// Resident bytes of every texture now.
    pub(super) resident: u64,
    /// Busy textures: max(old, new) bytes, their floors, and the largest min(old, new).
    pub(super) busy_commit: u64,
    pub(super) busy_floor: u64,
    pub(super) busy_margin: u64,
    /// Cooling textures: resident bytes and floors.
    pub(super) cool_resident: u64,
    pub(super) cool_floor: u64,
    /// Free and stale textures: floors.
    pub(super) free_floor: u64,
}

/// One drop in execution order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Drop {
    pub(super) texture: u32,
    pub(super) to: u8,
    pub(super) kind: TransitionKind,
    /// Evicted to the floor because its shrink did not fit.
    pub(super) forced: bool,
}

/// The bucket used when the caller gives none.
pub(super) const DEFAULT_BUCKET: BucketCost = BucketCost {
    scale: 1.0,
    bytes: 0,
};

/// A wanted level: NaN counts as not in view (infinity).
#[inline(always)]
pub(super) fn sanitize_wanted(v: f32) -> f32 {
    if v.is_nan() { f32::INFINITY } else { v }
}

/// Pixels and priority: negative or NaN count as 0, infinity as the largest `f32`.
pub(super) fn sanitize_weight(v: f32) -> f32 {
    if v > 0.0 { v.min(f32::MAX) } else { 0.0 }
}

/// Deciding each listed texture's [`Mode`] for a plan, and the sums by mode that size the
/// mandatory bytes. Reads a texture's history, never writes it: deciding again (the floors
/// turned out not to fit) gives what deciding once would.
#[derive(Clone, Copy, Debug)]
pub(super) struct Modes {
    pub(super) frame: u64,
    /// [`PlannerConfig::min_frames_between_changes`].
    pub(super) hold: u64,
    /// Frame of the budget's last change: a change before it holds nothing.
    pub(super) epoch_frame: u64,
    pub(super) new_epoch: bool,
    /// The floors do not all fit: they compete (count for nothing here), and a texture above
    /// its floor is held too (with demand or without), as the floors are what is short.
    pub(super) too_small: bool,
    pub(super) wanted_tolerance: f32,
    pub(super) pixels_tolerance: f32,
    /// The sums by mode (`resident` unused).
    pub(super) sums: Sums,
    /// The earliest frame a hold ends.
    pub(super) wake: u64,
}

impl Modes {
    /// Decides the mode of texture `t` (its work `w`, sanitised, and history `h`) and adds it
    /// to the sums.
    #[inline(always)]
    pub(super) fn decide(&mut self, t: Tex<'_>, w: &mut Work, h: &History) {
        let now = (w.wanted, w.pixels, w.priority);
        // Only a busy texture or one whose level changed asks (most are neither).
        let same_view = || h.decided.is_some_and(|d| self.same_view(now, d, w.count));
        w.mode = if w.busy {
            if h.decided.is_none() {
                // No recorded decision (a grow the planner did not order, or one that a new
                // identity or run cleared): trust the caller and hold it. The history is not
                // written while deciding, so deciding again in a frame finds the same.
                w.adopt = true;
                Mode::Busy
            } else if !self.new_epoch && same_view() {
                Mode::Busy
            } else {
                Mode::Stale
            }
        } else if w.changed_at != NEVER
            && w.changed_at > self.epoch_frame
            && self.frame < w.changed_at.saturating_add(self.hold)
            && same_view()
            // A texture short of a level the game requires (forced resident, or a required
            // level) is not held: the hold is for views, and a cut-scene cannot wait for it.
            && !short_of_required(t, w.resident)
            // Above its floor, a texture that no view wants is not held: its levels gain
            // nothing, and pinning them for the hold would starve a texture in view (a level
            // kept when the camera passed a texture used to stay for the whole hold). It keeps
            // them while they fit, as any step without gain.
            && (self.too_small
                || (w.resident <= w.floor
                    && !h.floor_returned
                    && !super::incremental::no_demand(w, t)))
        {
            self.wake = self.wake.min(w.changed_at.saturating_add(self.hold));
            Mode::Cooling
        } else {
            Mode::Free
        };
        let sums = &mut self.sums;
        let floor = if self.too_small { 0 } else { w.floor_bytes };
        match w.mode {
            Mode::Busy => {
                let (old, new) = (w.resident_bytes, w.flight_bytes);
                sums.busy_commit = sums.busy_commit.saturating_add(old.max(new));
                sums.busy_floor = sums.busy_floor.saturating_add(floor);
                if w.flight != w.resident {
                    sums.busy_margin = sums.busy_margin.max(old.min(new));
                }
            }
            Mode::Cooling => {
                sums.cool_resident = sums.cool_resident.saturating_add(w.resident_bytes);
                sums.cool_floor = sums.cool_floor.saturating_add(floor);
            }
            _ => sums.free_floor = sums.free_floor.saturating_add(floor),
        }
    }

    /// Whether `now` is the same view as `then` within the configured tolerances.
    fn same_view(&self, now: (f32, f32, f32), then: (f32, f32, f32), count: u8) -> bool {
        // Out of view is "wanted at level_count", so that infinities compare.
        let cap = f32::from(count);
        let (wa, wb) = (now.0.min(cap), then.0.min(cap));
        (wa - wb).abs() <= self.wanted_tolerance
            && (now.1 - then.1).abs() <= self.pixels_tolerance * now.1.max(then.1)
            && now.2 == then.2
    }
}

/// Pixels at or above this in a bin of a texture's histogram mark a level the game requires:
/// the manager's forced and required levels (`BudgetManager::force_resident`,
/// `TextureOptions::required_level`) are demand of this many pixels, more than any view covers.
pub(crate) const REQUIRED_PIXELS: f32 = 1e9;

/// Whether `t` wants, at `REQUIRED_PIXELS`, a level finer than `resident`.
fn short_of_required(t: Tex<'_>, resident: u8) -> bool {
    t.histogram
        && t.bins
            .iter()
            .take(usize::from(resident))
            .any(|&p| p >= REQUIRED_PIXELS)
}

/// Octaves of blur when `level` is the finest resident level and `wanted` (mip bias included) is
/// wanted. Wanted levels below 0 (magnified textures) count as 0: no mip can fix that blur.
pub(super) fn blur(level: u8, wanted: f32) -> f32 {
    let w = if wanted > 0.0 { wanted } else { 0.0 };
    (f32::from(level) - w).max(0.0)
}

/// Gain per byte, with the keep bonus for a resident step. A free step (0 bytes) is the best.
pub(super) fn density(gain: f32, bytes: u64, kept: bool, bonus: f32) -> f32 {
    let d = per_byte(gain, bytes);
    if kept { (d * bonus).min(f32::MAX) } else { d }
}

/// Gain per byte before the keep bonus: never negative nor NaN (the gain is clamped at 0).
#[inline(always)]
fn per_byte(gain: f32, bytes: u64) -> f32 {
    let gain = if gain > 0.0 { gain } else { 0.0 };
    if bytes == 0 {
        if gain > 0.0 { f32::MAX } else { 0.0 }
    } else {
        gain / bytes as f32
    }
}

/// `bin_of(density(gain, bytes, kept, bonus))` without `bin_of`'s tests, for the greedy's
/// items: a density is never negative nor NaN (a kept one's NaN, zero times an infinite bonus,
/// becomes `f32::MAX`), so its bin is its clamped bits shifted (at most 4079, and 0 for 0).
#[inline(always)]
pub(super) fn density_bin(gain: f32, bytes: u64, kept: bool, bonus: f32) -> u32 {
    let d = per_byte(gain, bytes);
    let d = if kept { d * bonus } else { d };
    let bin = d.min(f32::MAX).to_bits() >> BIN_SHIFT;
    debug_assert_eq!(bin as usize, bin_of(density(gain, bytes, kept, bonus)));
    bin
}

/// Bin of a gain per byte (0 for nothing).
pub(super) fn bin_of(d: f32) -> usize {
    if d > 0.0 {
        ((d.min(f32::MAX).to_bits() >> BIN_SHIFT) as usize).min(BINS - 1)
    } else {
        0
    }
}

/// In [`Planner::greedy`]'s compact target array: the texture is listed among the grows.
pub(super) const GROWER: u8 = 0x80;

/// One mip step as the greedy sees it: 16 bytes, everything the greedy loop reads.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Item {
    /// Bytes the step adds.
    pub(super) bytes: u64,
    pub(super) texture: u32,
    /// Gain-per-byte bin, with [`Item::KEPT`] set for a resident step.
    pub(super) bin: u16,
    /// The level the step leads to (the floor level for a whole floor tail).
    pub(super) level: u8,
    /// The level the texture must be at for this step to be taken.
    pub(super) prev: u8,
}

impl Item {
    const KEPT: u16 = 0x8000;

    pub(super) fn new(
        texture: u32,
        level: u8,
        prev: u8,
        kept: bool,
        density: f32,
        bytes: u64,
    ) -> Self {
        Self {
            bytes,
            texture,
            bin: bin_of(density) as u16 | if kept { Self::KEPT } else { 0 },
            level,
            prev,
        }
    }

    /// [`Item::new`] with its bin already made ([`bin_of`]).
    pub(super) fn with_bin(
        texture: u32,
        level: u8,
        prev: u8,
        kept: bool,
        bin: u32,
        bytes: u64,
    ) -> Self {
        Self {
            bytes,
            texture,
            bin: bin as u16 | if kept { Self::KEPT } else { 0 },
            level,
            prev,
        }
    }

    pub(super) fn bin(&self) -> usize {
        usize::from(self.bin & !Self::KEPT)
    }

    pub(super) fn kept(&self) -> bool {
        self.bin & Self::KEPT != 0
    }
}
