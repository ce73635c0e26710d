//! The budget planner: how ONE budget is spent on texture mips and on the render-target scale.
//!
//! Pure CPU, no wgpu types, and no allocation per frame once its buffers have grown to the scene.
//! The streaming code keeps one [`PlanTexture`] per streamed texture (its index is the texture's id
//! in [`Transition::texture`]), updates the fields every frame and calls [`Planner::plan`]. The
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
//!    plan (scale blur plus mip blur, within the same limit) is clearly better: by
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
//! byte, no comparison sort).
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
#[cfg(test)]
mod tests;

pub use exec::{ContractViolation, SimExecutor};

/// The most mip levels a texture may have (a 32768² texture has 16).
pub const MAX_LEVELS: usize = 16;

/// "Never": no change recorded, no rescale yet, nothing to wake up for.
const NEVER: u64 = u64::MAX;

/// Gain-per-byte values are bucket-sorted by the top 13 bits of their `f32` pattern: sign (always
/// 0), 8 exponent bits and 4 mantissa bits, so 16 bins per octave (at most 6.25% apart). Items
/// closer than that are taken in texture order, which is finer than any hysteresis used here.
const BIN_SHIFT: u32 = 19;
/// Number of gain-per-byte bins (`2^12`: positive `f32` patterns shifted by [`BIN_SHIFT`]).
const BINS: usize = 1 << 12;

/// One texture as the planner sees it. The streaming code keeps a `Vec` of these (the index is
/// the texture's id in [`Transition::texture`]) and updates the fields every frame.
///
/// `#[repr(C, align(32))]`: the per-frame fields come first, next to `level_bytes[0]`, and a
/// texture's first 32 bytes never straddle a cache line, so the planner's change check (every
/// texture, every frame) reads one cache line per texture.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub struct PlanTexture {
    /// Finest level the view wants at native resolution, fractional (2.3 samples levels 2 and 3).
    /// `>= level_count` or `f32::INFINITY`: not visible. NaN counts as not visible.
    pub wanted_level: f32,
    /// Output pixels the texture covers: the weight of its blur. Negative or NaN counts as 0.
    pub screen_pixels: f32,
    /// User weight of the texture's blur, 1 by default. Negative or NaN counts as 0.
    pub priority: f32,
    /// Mips in the full chain (at most [`MAX_LEVELS`]; more are ignored).
    pub level_count: u8,
    /// Levels `floor_level..level_count` (the small tail, such as <= 32x32) are always resident
    /// while the budget holds every texture's floor.
    pub floor_level: u8,
    /// Finest level resident now: levels `resident_level..level_count` are on the GPU.
    /// `floor_level` when only the tail is, `level_count` when nothing is.
    pub resident_level: u8,
    /// While `busy`: the finest level that will be resident once the in-flight grow is built.
    pub in_flight_level: u8,
    /// A grow is in flight (requested, not built yet): the planner plans nothing new for the
    /// texture, except to cancel it when its inputs changed or the budget no longer holds it.
    pub busy: bool,
    /// Bytes of each level, index 0 = full size; entries from `level_count` on are ignored.
    /// Expected to grow with the level's size (coarser levels never larger), as real chains do;
    /// otherwise plans stay within the budget but are less good.
    pub level_bytes: [u64; MAX_LEVELS],
    /// Bit `l` set: level `l` may be the finest resident level (the base of the GPU texture).
    /// All set by default. Why a mask: a block-compressed texture can only start at a level
    /// whose size is a multiple of the block (wgpu refuses a 480x270 BC7 base), so a 960x540
    /// chain can hold `0..` or the floor, nothing between. The planner then steps from one
    /// allowed level to the next finer one as a single step (its bytes and gain summed). The
    /// floor level is expected to be allowed; it is the caller's choice either way.
    pub base_levels: u16,
}

impl Default for PlanTexture {
    fn default() -> Self {
        Self {
            wanted_level: f32::INFINITY,
            screen_pixels: 0.0,
            priority: 1.0,
            level_count: 0,
            floor_level: 0,
            resident_level: 0,
            in_flight_level: 0,
            busy: false,
            level_bytes: [0; MAX_LEVELS],
            base_levels: u16::MAX,
        }
    }
}

impl PlanTexture {
    /// A texture with these level sizes (index 0 = full size; at most [`MAX_LEVELS`] are used)
    /// whose floor `floor_level..` is resident, not visible, priority 1.
    pub fn new(level_bytes: &[u64], floor_level: u8) -> Self {
        let n = level_bytes.len().min(MAX_LEVELS);
        let mut t = Self {
            level_count: n as u8,
            ..Self::default()
        };
        t.level_bytes[..n].copy_from_slice(&level_bytes[..n]);
        t.floor_level = floor_level.min(t.level_count);
        t.resident_level = t.floor_level;
        t.in_flight_level = t.floor_level;
        t
    }

    /// Bytes of the texture holding levels `level..level_count` (0 when `level >= level_count`).
    pub fn bytes_from(&self, level: u8) -> u64 {
        let end = usize::from(self.count());
        let start = usize::from(level).min(end);
        // At most 16 terms: a u128 sum cannot overflow, and is cheaper than saturating adds.
        let sum: u128 = self.level_bytes[start..end]
            .iter()
            .map(|&b| u128::from(b))
            .sum();
        u64::try_from(sum).unwrap_or(u64::MAX)
    }

    /// The base-level mask of a chain whose level 0 is `width x height` in a format of
    /// `block_w x block_h` blocks: level `l` is allowed when its size is a multiple of the block
    /// on both axes (see [`PlanTexture::base_levels`]); every level for 1x1 blocks.
    pub fn block_aligned_bases(
        width: u32,
        height: u32,
        block_w: u32,
        block_h: u32,
        level_count: u8,
    ) -> u16 {
        let (bw, bh) = (block_w.max(1), block_h.max(1));
        (0..level_count.min(MAX_LEVELS as u8))
            .filter(|&l| {
                let (w, h) = ((width >> l).max(1), (height >> l).max(1));
                w % bw == 0 && h % bh == 0
            })
            .fold(0u16, |m, l| m | (1 << l))
    }

    /// The floor level for a chain whose level 0 is `width x height`: the first level whose
    /// largest side is at most `floor_size` that `bases` allows, else the coarsest allowed level
    /// finer than that (the floor moves up: the texture streams in fewer, larger steps). `None`
    /// when no level is allowed: the texture cannot be created at all.
    pub fn floor_for(
        width: u32,
        height: u32,
        floor_size: u32,
        level_count: u8,
        bases: u16,
    ) -> Option<u8> {
        let count = level_count.min(MAX_LEVELS as u8);
        let by_size = (0..count)
            .find(|&l| (width >> l).max(1).max((height >> l).max(1)) <= floor_size)
            .unwrap_or(count.saturating_sub(1));
        let allowed = |l: u8| bases & (1 << l) != 0;
        (by_size..count)
            .find(|&l| allowed(l))
            .or_else(|| (0..by_size).rev().find(|&l| allowed(l)))
    }

    /// Whether level `level` may be the finest resident level (see [`PlanTexture::base_levels`]).
    pub fn base_allowed(&self, level: u8) -> bool {
        level < 16 && self.base_levels & (1 << level) != 0
    }

    /// `level_count`, at most [`MAX_LEVELS`].
    fn count(&self) -> u8 {
        self.level_count.min(MAX_LEVELS as u8)
    }

    /// `floor_level`, at most the level count.
    fn floor(&self) -> u8 {
        self.floor_level.min(self.count())
    }

    /// `resident_level`, at most the level count.
    fn resident(&self) -> u8 {
        self.resident_level.min(self.count())
    }

    /// `in_flight_level`, at most the level count.
    fn in_flight(&self) -> u8 {
        self.in_flight_level.min(self.count())
    }
}

/// Render-target bytes at one scale, from the resolution module. Until that module exists, one
/// bucket with the fixed cost of the targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleBucket {
    /// Render scale per axis (1.0 = native). Not finite or `<= 0` counts as 1.
    pub scale: f32,
    /// Bytes of every render target at this scale.
    pub bytes: u64,
}

/// Everything the planner needs for one frame.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// Frame counter, increasing; the hysteresis timers count these.
    pub frame: u64,
    /// The budget in bytes: the ledger total must never pass it.
    pub budget: u64,
    /// Bytes on the ledger that are not the planner's to trade (buffers, overlay, other).
    pub fixed_bytes: u64,
    /// Bytes kept free (for example for staging). Floors may use it when nothing else fits.
    pub headroom: u64,
    /// Output pixels: the cost of a render scale `s < 1` is every output pixel blurred by
    /// `log2(1/s)` octaves.
    pub output_pixels: u64,
    /// Render-target bytes per scale, ascending scale. Empty counts as one bucket of 0 bytes at
    /// scale 1; only the first 256 are used.
    pub buckets: &'a [ScaleBucket],
    /// Index in `buckets` of the render targets that exist now.
    pub current_bucket: usize,
    /// Every streamed texture, indexed by its id.
    pub textures: &'a [PlanTexture],
}

/// Tuning of the planner's hysteresis. `Default` gives the values the tests were run with.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PlannerConfig {
    /// A resident mip step counts this many times its gain per byte when it competes with steps
    /// that are not resident (default 1.25). Why: every change costs IO, upload bandwidth, a
    /// transient copy and a visible pop, and wanted levels are estimates; a step must be clearly
    /// better (25%) to displace one already paid for.
    pub keep_bonus: f32,
    /// Once its resident level changed, a texture keeps it this many frames (default 100) while
    /// its own inputs stay within the tolerances below and the budget stays the same. Why: a
    /// change caused only by its neighbours (a rescale, one texture more) must not make it flip
    /// back and forth; a change of its own view or of the budget lifts the hold at once.
    pub min_frames_between_changes: u32,
    /// How far (in levels) `wanted_level` may move and still count as the same view for the
    /// hold above (default 0.25). Why: sub-pixel camera jitter moves it by far less than a level.
    pub wanted_tolerance: f32,
    /// How far (relative) `screen_pixels` may move and still count as the same view (default
    /// 0.25), for the same reason.
    pub pixels_tolerance: f32,
    /// A neighbouring scale bucket is taken only when its plan has less blur than the current
    /// bucket's plan by at least this fraction of the blur the scale step itself adds or removes
    /// on screen (`output_pixels x` the difference of `log2(1/scale)`; default 0.25). Why: the
    /// net gain of a scale step is the difference of two large figures (the scale's blur and the
    /// mip blur it moves), so it must be clearly positive; and the opposite step, whose gain is
    /// then negative, cannot be taken right after, so the scale does not see-saw.
    pub rescale_margin: f32,
    /// The scale is evaluated (and changed) at most once per this many frames (default 60); a new
    /// budget lifts it, and floors that no longer fit lower the scale at once. Why: a rescale
    /// reallocates every render target and moves every texture's wanted level, the most
    /// disruptive change there is; and evaluating it costs two more plans.
    pub min_frames_between_rescales: u32,
    /// Relative change of the bytes available to the planner (budget minus headroom minus fixed)
    /// that counts as a new budget and lifts every hold (default 1/64). Why: a callback budget or
    /// the fixed bytes jitter a little every frame, which must not undo the hysteresis.
    pub budget_tolerance: f32,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            keep_bonus: 1.25,
            min_frames_between_changes: 100,
            wanted_tolerance: 0.25,
            pixels_tolerance: 0.25,
            rescale_margin: 0.25,
            min_frames_between_rescales: 60,
            budget_tolerance: 1.0 / 64.0,
        }
    }
}

/// Whether the budget holds the floors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum PlanStatus {
    /// Every floor tail is resident (or planned to be) and the plan is within the budget.
    Ok,
    /// Fixed bytes, the smallest render targets and every floor tail need `floor_bytes`, more
    /// than `budget`: the plan keeps the floors worth most per byte and evicts the rest.
    BudgetTooSmall {
        /// The smallest budget at which every floor fits.
        floor_bytes: u64,
        /// The budget that was given.
        budget: u64,
    },
}

/// What a [`Transition`] does; see the module docs for the executor contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransitionKind {
    /// Abandon the texture's in-flight grow (`from == to == resident_level`).
    Cancel,
    /// Destroy the texture, then recreate levels `to..` (its floor tail) from CPU-held data, or
    /// nothing when `to == level_count`: no transient bytes.
    Evict,
    /// Build a smaller texture with levels `to..` by GPU copy while the old one is alive.
    Shrink,
    /// Destroy the render targets and create them at bucket `to` (`from` is the current
    /// bucket); `texture` is [`Transition::RENDER_TARGETS`].
    Rescale,
    /// Request levels `to..from`; the texture is rebuilt with levels `to..` when they arrive.
    Grow,
}

/// One step of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transition {
    /// Index of the texture in [`PlanInput::textures`], or [`Transition::RENDER_TARGETS`].
    pub texture: u32,
    /// Finest level resident before (the bucket index for a rescale).
    pub from: u8,
    /// Finest level resident after (the bucket index for a rescale).
    pub to: u8,
    /// What to do.
    pub kind: TransitionKind,
}

impl Transition {
    /// The `texture` of a [`TransitionKind::Rescale`].
    pub const RENDER_TARGETS: u32 = u32::MAX;
}

/// The planner's answer for one frame. Reuse one across frames: its vectors keep their capacity
/// (`clone_from` too).
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Finest level each texture has once every transition has completed (`level_count` for a
    /// texture evicted to nothing).
    pub target_level: Vec<u8>,
    /// Render-target bucket once the transitions have completed.
    pub bucket: usize,
    /// The bytes the plan keeps the ledger within: `budget - headroom`, or more (never above the
    /// budget) when the floors need part of the headroom.
    pub limit: u64,
    /// Ledger total once every transition, in flight ones included, has completed.
    pub steady_bytes: u64,
    /// The highest total the transitions can reach (old and new textures alive together), per the
    /// executor contract; above `limit` only when the total already was when `plan` was called.
    pub peak_bytes: u64,
    /// The smallest budget at which every floor tail fits: fixed bytes, the smallest render
    /// targets and every floor tail.
    pub floor_bytes: u64,
    /// Blur left once the plan has completed, in pixel-octaves (not weighted by priority): the
    /// render scale's blur on every output pixel plus each texture's missing octaves on its pixels.
    pub quality_cost: f64,
    /// Transitions in execution order: cancels, a lower scale, evictions and shrinks, a higher
    /// scale, then grows (most valuable first).
    pub transitions: Vec<Transition>,
    /// False when nothing had changed since the previous call and its plan was returned as is.
    pub replanned: bool,
}

impl Clone for Plan {
    fn clone(&self) -> Self {
        let mut plan = Plan::default();
        plan.clone_from(self);
        plan
    }

    /// Reuses `self`'s vectors: the planner copies its cached plan this way every frame.
    fn clone_from(&mut self, source: &Self) {
        self.target_level.clone_from(&source.target_level);
        self.bucket = source.bucket;
        self.limit = source.limit;
        self.steady_bytes = source.steady_bytes;
        self.peak_bytes = source.peak_bytes;
        self.floor_bytes = source.floor_bytes;
        self.quality_cost = source.quality_cost;
        self.transitions.clone_from(&source.transitions);
        self.replanned = source.replanned;
    }
}

/// How a texture takes part in this frame's plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
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

/// Per-texture values derived for one plan.
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    mode: Mode,
    count: u8,
    floor: u8,
    resident: u8,
    flight: u8,
    target: u8,
    /// Set once a drop of this texture has been ordered.
    done: bool,
    /// A grow is in flight.
    busy: bool,
    /// Sanitised inputs: wanted level (NaN -> infinity), pixels and priority (>= 0).
    wanted: f32,
    pixels: f32,
    priority: f32,
    floor_bytes: u64,
    resident_bytes: u64,
    flight_bytes: u64,
}

impl Work {
    /// Whether a busy texture planned again keeps its grow in flight: when the new plan still
    /// grows it, to the in-flight level or finer (then a `Grow` without a `Cancel` retargets
    /// it). Why: in a moving view every grow's inputs move each frame; cancelling a grow for a
    /// finer target threw away its reads and a partly uploaded level, so a large level could
    /// never land while the camera moved. A coarser target is cancelled: the flight's bytes
    /// are more than the plan counted.
    fn keeps_flight(&self) -> bool {
        self.mode == Mode::Stale && self.target <= self.flight && self.flight < self.resident
    }

    /// Bytes of `t` from `level` on, from the sizes already known where possible (levels above
    /// the floor are few).
    fn bytes_at(&self, t: &PlanTexture, level: u8) -> u64 {
        if level == self.resident {
            self.resident_bytes
        } else if level == self.floor {
            self.floor_bytes
        } else if level < self.floor {
            t.level_bytes[usize::from(level)..usize::from(self.floor)]
                .iter()
                .fold(self.floor_bytes, |a, &b| a.saturating_add(b))
        } else {
            t.bytes_from(level)
        }
    }

    /// Blur weight: pixels times priority.
    fn weight(&self) -> f32 {
        (self.pixels * self.priority).min(f32::MAX)
    }
}

/// What the change check compares, per texture, packed in three words so that the check is a
/// few XORs per texture: the view (wanted level and pixels), the priority and the levels, and
/// the identity (`level_bytes[0]`). `in_flight_level` only matters while busy, so it is stored
/// as 255 when idle and at most 254 when busy (the planner clamps it to the level count anyway).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seen([u64; 3]);

impl Seen {
    #[inline]
    fn of(t: &PlanTexture) -> Self {
        let flight = if t.busy {
            t.in_flight_level.min(254)
        } else {
            255
        };
        Self([
            u64::from(t.wanted_level.to_bits()) | u64::from(t.screen_pixels.to_bits()) << 32,
            u64::from(t.priority.to_bits())
                | u64::from(t.level_count) << 32
                | u64::from(t.floor_level) << 40
                | u64::from(t.resident_level) << 48
                | u64::from(flight) << 56,
            t.level_bytes[0],
        ])
    }

    /// Whether the view part (wanted level, pixels, priority) differs.
    fn view_differs(&self, other: &Seen) -> bool {
        self.0[0] != other.0[0] || (self.0[1] ^ other.0[1]) & 0xFFFF_FFFF != 0
    }
}

/// Per-texture memory across frames: the hysteresis state.
#[derive(Clone, Copy, Debug)]
struct History {
    /// Identity of the texture in this slot (level 0 bytes, level count, floor): when it changes,
    /// the slot holds another texture and its history starts afresh.
    identity: (u64, u8, u8),
    /// Resident level seen at the previous plan.
    level: u8,
    /// Frame at which the resident level was last seen to change, or [`NEVER`].
    changed_at: u64,
    /// Inputs when the planner last decided something for this texture.
    decided: Option<(f32, f32, f32)>,
    /// The next observed change was forced (an eviction right after a budget change) and starts
    /// no hold, so the texture may grow back as soon as it is worth it.
    exempt: bool,
    /// Bytes of the floor tail and of the resident levels (`level..`), kept across frames: they
    /// change only with the identity or the resident level.
    floor_bytes: u64,
    resident_bytes: u64,
}

impl History {
    fn fresh(t: &PlanTexture) -> Self {
        Self {
            identity: (t.level_bytes[0], t.count(), t.floor()),
            level: t.resident(),
            changed_at: NEVER,
            decided: None,
            exempt: false,
            floor_bytes: t.bytes_from(t.floor()),
            resident_bytes: t.bytes_from(t.resident()),
        }
    }
}

/// Sums over the textures by mode, to size the mandatory bytes for each release level at O(1).
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    /// Resident bytes of every texture now.
    resident: u64,
    /// Busy textures: max(old, new) bytes, their floors, and the largest min(old, new).
    busy_commit: u64,
    busy_floor: u64,
    busy_margin: u64,
    /// Cooling textures: resident bytes and floors.
    cool_resident: u64,
    cool_floor: u64,
    /// Free and stale textures: floors.
    free_floor: u64,
}

/// The planner. Create once, call [`Planner::plan`] every frame; it keeps the hysteresis state
/// and reusable scratch buffers.
#[derive(Debug)]
pub struct Planner {
    config: PlannerConfig,
    seen: Vec<Seen>,
    history: Vec<History>,
    work: Vec<Work>,
    items: Vec<Item>,
    sorted: Vec<Item>,
    targets: Vec<u8>,
    old: Vec<u64>,
    counts: Vec<u32>,
    growers: Vec<u32>,
    shrinks: Vec<(u64, u32)>,
    evicts: Vec<(u32, u32)>,
    drop_seq: Vec<Drop>,
    forced: Vec<u32>,
    buckets: Vec<ScaleBucket>,
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
            history: Vec::new(),
            work: Vec::new(),
            items: Vec::new(),
            sorted: Vec::new(),
            targets: Vec::new(),
            old: Vec::new(),
            counts: vec![0; BINS],
            growers: Vec::new(),
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
        }
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

    /// Plan this frame: fill `out` (its vectors are reused) and say whether the floors fit.
    ///
    /// When nothing changed since the previous call (every input equal, no hold expiring), this
    /// costs one scan of the inputs and returns the previous plan with `replanned == false`.
    pub fn plan(&mut self, input: &PlanInput<'_>, out: &mut Plan) -> PlanStatus {
        if self.unchanged(input) {
            out.clone_from(&self.cache);
            out.replanned = false;
            return self.cache_status;
        }
        let status = self.replan(input, out);
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

    /// Whether the previous plan still answers `input`.
    fn unchanged(&self, input: &PlanInput<'_>) -> bool {
        self.valid
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
            && self.same_textures(input.textures)
    }

    /// Whether every texture's inputs are the ones of the previous plan: the steady-view cost of
    /// a frame, so a branch-free scan; it is bound by reading one cache line per texture.
    fn same_textures(&self, textures: &[PlanTexture]) -> bool {
        if self.seen.len() != textures.len() {
            return false;
        }
        let mut diff = 0u64;
        for (s, t) in self.seen.iter().zip(textures) {
            let k = Seen::of(t);
            diff |= (s.0[0] ^ k.0[0]) | (s.0[1] ^ k.0[1]) | (s.0[2] ^ k.0[2]);
        }
        diff == 0
    }

    /// Whether `buckets` are the ones of the previous plan (after the same sanitising).
    fn same_buckets(&self, buckets: &[ScaleBucket]) -> bool {
        // By bits, so that a NaN scale compares equal to itself.
        let same = |a: &ScaleBucket, b: &ScaleBucket| {
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

    /// Mip bias of a bucket: `log2(1/scale)`.
    fn mip_bias(&self, bucket: usize) -> f32 {
        let s = self.buckets[bucket].scale;
        if s.is_finite() && s > 0.0 {
            -s.log2()
        } else {
            0.0
        }
    }

    /// Blur of every output pixel at a bucket: `max(0, log2(1/scale))` (a scale above 1 does not
    /// make pixels sharper than native).
    fn scale_blur(&self, bucket: usize) -> f64 {
        f64::from(self.mip_bias(bucket).max(0.0))
    }

    fn replan(&mut self, input: &PlanInput<'_>, out: &mut Plan) -> PlanStatus {
        let tex = input.textures;
        let n = tex.len();
        let frame = input.frame;
        self.fixed = input.fixed_bytes;
        self.output_pixels = input.output_pixels;

        // Buckets, sanitised: none means render targets are not the planner's business.
        let buckets_changed = !self.same_buckets(input.buckets);
        self.buckets.clear();
        if input.buckets.is_empty() {
            self.buckets.push(DEFAULT_BUCKET);
        } else {
            self.buckets
                .extend_from_slice(&input.buckets[..input.buckets.len().min(256)]);
        }
        let nb = self.buckets.len();
        let cur = input.current_bucket.min(nb - 1);

        // A frame counter that went backwards means a new run: forget every hold.
        if input.frame < self.last_frame {
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
        self.work.resize(n, Work::default());
        if self.history.len() < n {
            // An identity no texture has (level counts are at most 16): reset on first sight.
            let mut none = History::fresh(&PlanTexture::default());
            none.identity = (u64::MAX, u8::MAX, u8::MAX);
            self.history.resize(n, none);
        }
        let resize = std::mem::take(&mut self.resize);

        // Pass 1: observe changes, sanitise, sizes.
        let mut sums = Sums::default();
        let mut floor_sum = 0u64;
        let mut view_changed = new_epoch;
        for (i, t) in tex.iter().enumerate() {
            let seen = Seen::of(t);
            view_changed |= seen.view_differs(&self.seen[i]);
            self.seen[i] = seen;
            let count = t.count();
            let floor = t.floor();
            let resident = t.resident();
            let identity = (t.level_bytes[0], count, floor);
            let h = &mut self.history[i];
            if h.identity != identity {
                *h = History::fresh(t);
            } else if resize {
                h.floor_bytes = t.bytes_from(floor);
                h.resident_bytes = t.bytes_from(resident);
            }
            if resident != h.level {
                h.level = resident;
                h.changed_at = if h.exempt { NEVER } else { frame };
                // A grow built in steps (one level at a time) changes the level several times:
                // an exemption lasts until the last step.
                if !t.busy {
                    h.exempt = false;
                }
                h.resident_bytes = t.bytes_from(resident);
            }
            let w = &mut self.work[i];
            *w = Work {
                mode: Mode::Free,
                count,
                floor,
                resident,
                flight: if t.busy { t.in_flight() } else { resident },
                target: resident,
                done: false,
                busy: t.busy,
                wanted: if t.wanted_level.is_nan() {
                    f32::INFINITY
                } else {
                    t.wanted_level
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
            };
            floor_sum = floor_sum.saturating_add(w.floor_bytes);
            sums.resident = sums.resident.saturating_add(w.resident_bytes);
        }

        let floor_bytes = input
            .fixed_bytes
            .saturating_add(self.rt(0))
            .saturating_add(floor_sum);
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

        // Pass 2: modes (holds), and the sums that size the mandatory bytes.
        let hold = u64::from(self.config.min_frames_between_changes);
        let mut wake = NEVER;
        for (i, t) in tex.iter().enumerate() {
            let w = &mut self.work[i];
            let h = &mut self.history[i];
            let now = (w.wanted, w.pixels, w.priority);
            let same_view = h
                .decided
                .is_some_and(|d| same_view(&self.config, now, d, w.count));
            w.mode = if t.busy {
                if h.decided.is_none() {
                    // A grow the planner did not order: trust the caller and hold it.
                    h.decided = Some(now);
                    Mode::Busy
                } else if same_view && !new_epoch {
                    Mode::Busy
                } else {
                    Mode::Stale
                }
            } else if h.changed_at != NEVER
                && h.changed_at > self.epoch_frame
                && frame < h.changed_at.saturating_add(hold)
                && same_view
                && (too_small || w.resident <= w.floor)
            {
                wake = wake.min(h.changed_at.saturating_add(hold));
                Mode::Cooling
            } else {
                Mode::Free
            };
            let floor = if too_small { 0 } else { w.floor_bytes };
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
        let mut bucket = if too_small { 0 } else { cur };
        let mut release = 0u8;
        while mandatory(self, bucket, release) > limit {
            if release < 2 {
                release += 1;
            } else if bucket > 0 {
                bucket -= 1;
            } else {
                break;
            }
        }
        if release > 0 {
            for w in &mut self.work {
                match w.mode {
                    Mode::Cooling => w.mode = Mode::Free,
                    Mode::Busy | Mode::Stale if release >= 2 => w.mode = Mode::Released,
                    _ => {}
                }
            }
            wake = NEVER; // nothing is cooling any more
        }

        self.greedy(tex, bucket, limit, too_small);

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
                let mut cost = self.cost(bucket);
                let mut planned = bucket;
                let mut moved = false;
                for up in [true, false] {
                    if moved {
                        break;
                    }
                    loop {
                        let next = if up {
                            bucket + 1
                        } else if bucket > 0 {
                            bucket - 1
                        } else {
                            break;
                        };
                        if next >= nb || mandatory(self, next, release) > limit {
                            break;
                        }
                        self.greedy(tex, next, limit, false);
                        planned = next;
                        let next_cost = self.cost(next);
                        let at_stake = self.output_pixels as f64
                            * (self.scale_blur(bucket) - self.scale_blur(next)).abs();
                        if !(next_cost < cost && cost - next_cost >= margin * at_stake) {
                            break;
                        }
                        bucket = next;
                        cost = next_cost;
                        moved = true;
                    }
                }
                if planned != bucket {
                    self.greedy(tex, bucket, limit, false); // restore the chosen bucket's targets
                }
            } else {
                // A view changed during the hold: evaluate once it is over.
                wake = wake.min(self.last_rescale.saturating_add(rescale_hold));
            }
        }
        if bucket != cur {
            self.last_rescale = frame;
        }

        self.transitions(
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

        // Outputs.
        let mb = self.mip_bias(bucket);
        let mut quality = self.scale_blur(bucket) * input.output_pixels as f64;
        out.target_level.clear();
        for w in &self.work {
            let level = if w.mode == Mode::Busy {
                w.flight
            } else {
                w.target
            };
            out.target_level.push(level);
            quality += f64::from(w.pixels) * f64::from(blur(level, w.wanted + mb));
        }
        out.bucket = bucket;
        out.limit = limit;
        out.floor_bytes = floor_bytes;
        out.quality_cost = quality;
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

    /// Choose every free texture's target at `bucket` by gain per byte, best first, within
    /// `limit`; `compete` lets floors compete (the budget is too small for all of them). Returns
    /// whether the mandatory part (pinned textures, floors, render targets) fits.
    fn greedy(&mut self, tex: &[PlanTexture], bucket: usize, limit: u64, compete: bool) -> bool {
        let mb = self.mip_bias(bucket);
        // A bonus below 1 would favour churn; NaN counts as no bonus.
        let bonus = if self.config.keep_bonus >= 1.0 {
            self.config.keep_bonus
        } else {
            1.0
        };
        let mut base = self.fixed.saturating_add(self.rt(bucket));
        let mut margin = 0u64;
        self.items.clear();
        self.growers.clear();
        self.targets.clear();
        self.old.clear();
        for (i, (t, w)) in tex.iter().zip(self.work.iter_mut()).enumerate() {
            let i = i as u32;
            self.old.push(w.resident_bytes);
            let mut grower = false;
            match w.mode {
                Mode::Busy => {
                    w.target = w.flight;
                    base = base.saturating_add(w.resident_bytes.max(w.flight_bytes));
                    if w.flight != w.resident {
                        margin = margin.max(w.resident_bytes.min(w.flight_bytes));
                    }
                }
                Mode::Cooling | Mode::Kept => {
                    w.target = w.resident;
                    base = base.saturating_add(w.resident_bytes);
                }
                Mode::Evicted => {
                    w.target = w.floor;
                    base = base.saturating_add(w.floor_bytes);
                }
                Mode::Free | Mode::Stale | Mode::Released => {
                    let (count, floor, resident) = (w.count, w.floor, w.resident);
                    let can_grow = w.mode != Mode::Released;
                    let weight = w.weight();
                    let wanted = w.wanted + mb;
                    if compete {
                        w.target = count;
                        if floor < count && (resident <= floor || can_grow) {
                            let gain = weight * (blur(count, wanted) - blur(floor, wanted));
                            let kept = resident <= floor;
                            let d = density(gain, w.floor_bytes, kept, bonus);
                            self.items
                                .push(Item::new(i, floor, count, kept, d, w.floor_bytes));
                        }
                    } else {
                        // Floors are mandatory; one that is missing (after a too-small budget)
                        // comes back alone first: it needs no IO, and the next plans add levels
                        // from there.
                        w.target = floor;
                        base = base.saturating_add(w.floor_bytes);
                        if resident > floor {
                            grower = true;
                            self.growers.push(i);
                        }
                    }
                    if resident <= floor {
                        // One step per allowed base level, from the next coarser allowed one
                        // (every level, unless the texture's format forbids some bases).
                        let mut prev = floor;
                        let mut bytes = 0u64;
                        for k in (0..floor).rev() {
                            bytes = bytes.saturating_add(t.level_bytes[usize::from(k)]);
                            if !t.base_allowed(k) && k != resident {
                                continue;
                            }
                            let kept = k >= resident;
                            let gain = weight * (blur(prev, wanted) - blur(k, wanted));
                            if !kept && (!can_grow || gain.is_nan() || gain <= 0.0) {
                                break;
                            }
                            let d = density(gain, bytes, kept, bonus);
                            self.items.push(Item::new(i, k, prev, kept, d, bytes));
                            prev = k;
                            bytes = 0;
                        }
                    }
                }
            }
            self.targets
                .push(w.target | if grower { GROWER } else { 0 });
        }

        // Bucket sort by bin, best first; stable, so ties go by texture then coarse to fine.
        self.counts.fill(0);
        for it in &self.items {
            self.counts[it.bin()] += 1;
        }
        let mut acc = 0u32;
        for c in self.counts.iter_mut().rev() {
            let n = *c;
            *c = acc;
            acc += n;
        }
        self.sorted.clear();
        self.sorted.resize(self.items.len(), Item::default());
        for it in &self.items {
            let b = it.bin();
            self.sorted[self.counts[b] as usize] = *it;
            self.counts[b] += 1;
        }

        // The greedy itself touches only the sorted items and two compact per-texture arrays
        // (target, old bytes): at 10k textures that is what keeps a full plan in cache.
        let fits = base.saturating_add(margin) <= limit;
        let mut steady = base;
        for it in &self.sorted {
            let i = it.texture as usize;
            let target = &mut self.targets[i];
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
                margin.max(self.old[i])
            };
            if steady.saturating_add(it.bytes).saturating_add(m) <= limit {
                steady = steady.saturating_add(it.bytes);
                margin = m;
                if !kept && *target & GROWER == 0 {
                    *target |= GROWER;
                    self.growers.push(it.texture);
                }
                *target = it.level | (*target & GROWER);
            }
        }
        for (w, &t) in self.work.iter_mut().zip(&self.targets) {
            w.target = t & !GROWER;
        }
        fits
    }

    /// The planner's objective at a bucket, with the current targets: the scale's blur on every
    /// output pixel plus each texture's missing octaves times its pixels and priority.
    fn cost(&self, bucket: usize) -> f64 {
        self.output_pixels as f64 * self.scale_blur(bucket) + self.texture_blur(bucket)
    }

    /// Texture blur (priority-weighted) of the current targets at a bucket's mip bias.
    fn texture_blur(&self, bucket: usize) -> f64 {
        let mb = self.mip_bias(bucket);
        self.work
            .iter()
            .map(|w| {
                let level = if w.mode == Mode::Busy {
                    w.flight
                } else {
                    w.target
                };
                f64::from(w.weight()) * f64::from(blur(level, w.wanted + mb))
            })
            .sum()
    }

    /// Order the drops of the current targets, starting from `total`, into `self.drop_seq`, and
    /// return how many had to be evicted to their floor instead of shrunk, and the peak.
    ///
    /// To the floor (or to nothing) an eviction loses nothing and needs no room, so those go
    /// first; the rest shrink smallest new texture first (each shrink needs room for its new
    /// texture next to the old one), and when no remaining shrink fits, the drop whose kept
    /// levels are worth least per byte is evicted to its floor instead, until the rest fit.
    fn order_drops(
        &mut self,
        tex: &[PlanTexture],
        mut total: u64,
        limit: u64,
        mb: f32,
    ) -> (usize, u64) {
        self.drop_seq.clear();
        self.shrinks.clear();
        self.evicts.clear();
        let mut peak = total;
        for (i, (t, w)) in tex.iter().zip(self.work.iter_mut()).enumerate() {
            w.done = false;
            if matches!(w.mode, Mode::Busy | Mode::Cooling | Mode::Kept) || w.target <= w.resident {
                continue;
            }
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
            let wanted = w.wanted + mb;
            let kept_value = w.weight() * (blur(w.floor, wanted) - blur(w.target, wanted));
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

    /// Turn the targets into ordered transitions in `out`, and fill `peak_bytes`.
    #[allow(clippy::too_many_arguments)]
    fn transitions(
        &mut self,
        tex: &[PlanTexture],
        input: &PlanInput<'_>,
        cur: usize,
        bucket: usize,
        limit: u64,
        compete: bool,
        new_epoch: bool,
        resident_sum: u64,
        out: &mut Plan,
    ) {
        let mb = self.mip_bias(bucket);
        let start = input
            .fixed_bytes
            .saturating_add(self.rt(cur))
            .saturating_add(resident_sum);
        // A lower scale frees bytes before any drop needs room; a higher one waits for the drops.
        let down = bucket != cur && self.rt(bucket) <= self.rt(cur);
        let after_rescale = if down {
            start - self.rt(cur).min(start) + self.rt(bucket)
        } else {
            start
        };
        // A drop whose shrink has no room (its new texture next to the old one) has to be
        // evicted to its floor instead, which loses more than the drop was meant to. So the
        // plan is made twice: with those textures kept as they are, and with them evicted and
        // the freed bytes given to others; the one with less blur wins (keeping on a tie, and
        // evicting when keeping does not fit: the budget fell below the usage). A shrink that
        // still has no room in the winning plan is evicted where it stands.
        let (forced, _) = self.order_drops(tex, after_rescale, limit, mb);
        if forced > 0 {
            self.forced.clear();
            self.forced
                .extend(self.drop_seq.iter().filter(|d| d.forced).map(|d| d.texture));
            for &i in &self.forced {
                self.work[i as usize].mode = Mode::Evicted;
            }
            self.greedy(tex, bucket, limit, compete);
            let evict_cost = self.cost(bucket);
            for &i in &self.forced {
                self.work[i as usize].mode = Mode::Kept;
            }
            let keep_fits = self.greedy(tex, bucket, limit, compete);
            if !keep_fits || self.cost(bucket) > evict_cost {
                for &i in &self.forced {
                    self.work[i as usize].mode = Mode::Evicted;
                }
                self.greedy(tex, bucket, limit, compete);
            }
        }
        let (_, mut peak) = self.order_drops(tex, after_rescale, limit, mb);
        peak = peak.max(start);

        let list = &mut out.transitions;
        list.clear();
        // Cancels first: they free nothing but must precede any other transition of the texture.
        for (i, w) in self.work.iter().enumerate() {
            let kept = w.mode == Mode::Busy || w.keeps_flight();
            let cancel = w.busy && !kept;
            if cancel {
                list.push(Transition {
                    texture: i as u32,
                    from: w.resident,
                    to: w.resident,
                    kind: TransitionKind::Cancel,
                });
            }
        }
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
                total.saturating_sub(w.resident_bytes) + tex[d.texture as usize].bytes_from(d.to);
            // Forced by a new budget, not chosen: the texture must be free to grow back at once.
            if d.forced && new_epoch {
                self.history[d.texture as usize].exempt = true;
            }
        }
        if bucket != cur && !down {
            list.push(rescale);
            peak = peak.max(total - self.rt(cur).min(total) + self.rt(bucket));
        }

        // Grows, most valuable first (the greedy's order; missing floors before anything): the
        // IO queue serves requests in order, so the largest gains per byte land soonest.
        let mut pending = false;
        let mut margin = 0u64;
        for &i in &self.growers {
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
        let mut bound = input.fixed_bytes.saturating_add(self.rt(bucket));
        let mut steady = bound;
        for (t, w) in tex.iter().zip(&self.work) {
            if w.mode == Mode::Busy {
                bound = bound.saturating_add(w.resident_bytes.max(w.flight_bytes));
                steady = steady.saturating_add(w.flight_bytes);
                if w.flight != w.resident {
                    pending = true;
                    margin = margin.max(w.resident_bytes.min(w.flight_bytes));
                }
            } else {
                let bytes = w.bytes_at(t, w.target);
                bound = bound.saturating_add(bytes);
                steady = steady.saturating_add(bytes);
            }
        }
        if pending {
            peak = peak.max(bound.saturating_add(margin));
        }
        out.peak_bytes = peak;
        out.steady_bytes = steady;

        // Remember the inputs of every decision: a hold compares against them.
        for (i, w) in self.work.iter().enumerate() {
            let decided = match w.mode {
                Mode::Stale => true,
                Mode::Busy | Mode::Cooling | Mode::Kept => false,
                _ => w.target != w.resident,
            };
            if decided {
                self.history[i].decided = Some((w.wanted, w.pixels, w.priority));
            }
        }
    }
}

/// One drop in execution order.
#[derive(Clone, Copy, Debug)]
struct Drop {
    texture: u32,
    to: u8,
    kind: TransitionKind,
    /// Evicted to the floor because its shrink did not fit.
    forced: bool,
}

/// The bucket used when the caller gives none.
const DEFAULT_BUCKET: ScaleBucket = ScaleBucket {
    scale: 1.0,
    bytes: 0,
};

/// Pixels and priority: negative or NaN count as 0, infinity as the largest `f32`.
fn sanitize_weight(v: f32) -> f32 {
    if v > 0.0 { v.min(f32::MAX) } else { 0.0 }
}

/// Whether `now` is the same view as `then` within the configured tolerances.
fn same_view(c: &PlannerConfig, now: (f32, f32, f32), then: (f32, f32, f32), count: u8) -> bool {
    // Out of view is "wanted at level_count", so that infinities compare.
    let cap = f32::from(count);
    let (wa, wb) = (now.0.min(cap), then.0.min(cap));
    (wa - wb).abs() <= c.wanted_tolerance
        && (now.1 - then.1).abs() <= c.pixels_tolerance * now.1.max(then.1)
        && now.2 == then.2
}

/// Octaves of blur when `level` is the finest resident level and `wanted` (mip bias included) is
/// wanted. Wanted levels below 0 (magnified textures) count as 0: no mip can fix that blur.
fn blur(level: u8, wanted: f32) -> f32 {
    let w = if wanted > 0.0 { wanted } else { 0.0 };
    (f32::from(level) - w).max(0.0)
}

/// Gain per byte, with the keep bonus for a resident step. A free step (0 bytes) is the best.
fn density(gain: f32, bytes: u64, kept: bool, bonus: f32) -> f32 {
    let gain = if gain > 0.0 { gain } else { 0.0 };
    let d = if bytes == 0 {
        if gain > 0.0 { f32::MAX } else { 0.0 }
    } else {
        gain / bytes as f32
    };
    if kept { (d * bonus).min(f32::MAX) } else { d }
}

/// Bin of a gain per byte (0 for nothing).
fn bin_of(d: f32) -> usize {
    if d > 0.0 {
        ((d.min(f32::MAX).to_bits() >> BIN_SHIFT) as usize).min(BINS - 1)
    } else {
        0
    }
}

/// In [`Planner::greedy`]'s compact target array: the texture is listed among the grows.
const GROWER: u8 = 0x80;

/// One mip step as the greedy sees it: 16 bytes, everything the greedy loop reads.
#[derive(Clone, Copy, Debug, Default)]
struct Item {
    /// Bytes the step adds.
    bytes: u64,
    texture: u32,
    /// Gain-per-byte bin, with [`Item::KEPT`] set for a resident step.
    bin: u16,
    /// The level the step leads to (the floor level for a whole floor tail).
    level: u8,
    /// The level the texture must be at for this step to be taken.
    prev: u8,
}

impl Item {
    const KEPT: u16 = 0x8000;

    fn new(texture: u32, level: u8, prev: u8, kept: bool, density: f32, bytes: u64) -> Self {
        Self {
            bytes,
            texture,
            bin: bin_of(density) as u16 | if kept { Self::KEPT } else { 0 },
            level,
            prev,
        }
    }

    fn bin(&self) -> usize {
        usize::from(self.bin & !Self::KEPT)
    }

    fn kept(&self) -> bool {
        self.bin & Self::KEPT != 0
    }
}
