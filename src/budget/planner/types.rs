//! The planner's public types: its view of a texture, its input, configuration and output.

use super::*;

/// One texture as the planner sees it. The streaming code keeps a `Vec` of these (the index is
/// the texture's id in [`Transition::texture`]) and updates the fields every frame.
///
/// `#[repr(C, align(32))]`: the per-frame fields come first, with `base_levels` and next to
/// `level_bytes[0]`, and a texture's first 32 bytes never straddle a cache line, so the
/// planner's change check (every texture, every frame) reads one cache line per texture, and a
/// plan reads the same line for a texture's allowed bases.
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
    /// The demand is [`PlanTexture::level_pixels`], a histogram (what GPU feedback measures),
    /// not the single `wanted_level` over `screen_pixels`. Then `wanted_level` and
    /// `screen_pixels` are only its summary (the finest level with pixels, the total), for
    /// reports; the planner prices every level by the pixels that want finer.
    pub histogram: bool,
    /// Bit `l` set: level `l` may be the finest resident level (the base of the GPU texture).
    /// All set by default. Why a mask: a block-compressed texture can only start at a level
    /// whose size is a multiple of the block (wgpu refuses a 480x270 BC7 base), so a 960x540
    /// chain can hold `0..` or the floor, nothing between. The planner then steps from one
    /// allowed level to the next finer one as a single step (its bytes and gain summed). The
    /// floor level is expected to be allowed; it is the caller's choice either way.
    pub base_levels: u16,
    /// Bytes of each level, index 0 = full size; entries from `level_count` on are ignored.
    /// Expected to grow with the level's size (coarser levels never larger), as real chains do;
    /// otherwise plans stay within the budget but are less good.
    pub level_bytes: [u64; MAX_LEVELS],
    /// With [`PlanTexture::histogram`]: output pixels whose wanted level (at native
    /// resolution) is `l` for bin `l` (a fractional level `l + f` counts in bin `l`). Keeping
    /// level `r` costs `sum over l of pixels[l] x max(0, r - l - mip bias)` pixel-octaves, so a
    /// level is worth the pixels that want it or finer: 1% of a surface at level 0 no longer
    /// prices its whole area at level 0. Ignored otherwise; read only for histogram textures.
    pub level_pixels: [f32; MAX_LEVELS],
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
            histogram: false,
            level_bytes: [0; MAX_LEVELS],
            base_levels: u16::MAX,
            level_pixels: [0.0; MAX_LEVELS],
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

    /// Sets the demand to a histogram of output pixels per wanted level (see
    /// [`PlanTexture::level_pixels`]; bins past [`MAX_LEVELS`] count in the last one; negative or
    /// NaN bins count as 0) and its summary in `wanted_level` / `screen_pixels`.
    pub fn set_level_pixels(&mut self, pixels: &[f32]) {
        self.level_pixels = [0.0; MAX_LEVELS];
        for (l, &p) in pixels.iter().enumerate() {
            if p > 0.0 {
                self.level_pixels[l.min(MAX_LEVELS - 1)] += p.min(f32::MAX);
            }
        }
        self.histogram = true;
        self.summarize_histogram();
    }

    /// Recomputes `wanted_level` (the finest bin with pixels, infinity when none) and
    /// `screen_pixels` (the total) from [`PlanTexture::level_pixels`].
    pub fn summarize_histogram(&mut self) {
        let mut total = 0.0f32;
        let mut finest = f32::INFINITY;
        for (l, &p) in self.level_pixels.iter().enumerate().rev() {
            if p > 0.0 {
                total += p;
                finest = l as f32;
            }
        }
        self.wanted_level = finest;
        self.screen_pixels = total.min(f32::MAX);
    }

    /// Output pixels times octaves of blur when `level` is the finest resident level, at a mip
    /// bias `bias` (not weighted by priority): the planner's objective for this texture.
    pub fn blur_pixels(&self, level: u8, bias: f32) -> f32 {
        if self.histogram {
            let mut sum = 0.0f32;
            for (l, &p) in self.level_pixels.iter().enumerate() {
                if p > 0.0 {
                    sum += p * super::state::blur(level, l as f32 + bias);
                }
            }
            sum.min(f32::MAX)
        } else {
            let pixels = super::state::sanitize_weight(self.screen_pixels);
            let wanted = if self.wanted_level.is_nan() {
                f32::INFINITY
            } else {
                self.wanted_level
            };
            (pixels * super::state::blur(level, wanted + bias)).min(f32::MAX)
        }
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
    pub(super) fn count(&self) -> u8 {
        self.level_count.min(MAX_LEVELS as u8)
    }

    /// `floor_level`, at most the level count.
    pub(super) fn floor(&self) -> u8 {
        self.floor_level.min(self.count())
    }

    /// `resident_level`, at most the level count.
    pub(super) fn resident(&self) -> u8 {
        self.resident_level.min(self.count())
    }

    /// `in_flight_level`, at most the level count.
    pub(super) fn in_flight(&self) -> u8 {
        self.in_flight_level.min(self.count())
    }
}

/// Render-target bytes at one scale, from the resolution module. Until that module exists, one
/// bucket with the fixed cost of the targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BucketCost {
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
    pub buckets: &'a [BucketCost],
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
    /// How much one octave of blur from the render scale counts against one octave of texture
    /// blur, per output pixel, when the planner weighs a scale step (default 4). Why 4 and not
    /// 1 (the same blur in the pixel-octave currency): a lower scale blurs every pixel, edges
    /// and texels already resident included, while a coarser level blurs only its texture's
    /// detail, which a grazing or distant surface barely shows. Measured against the
    /// all-resident picture at 1280x720 (`examples/scale_trade.rs`, BENCHMARKS.md "Scale
    /// against textures"), 4 gave the best PSNR at every squeeze tried: +14 dB over 1 at a
    /// budget of twice the full-resolution targets, +3.3 dB at 1.5x; and +4.5 dB over 8 or more
    /// at 1.2x, where keeping the scale leaves textures at their floors. Higher keeps the scale
    /// longer (textures give way first); lower lets the scale give way first (textures stay
    /// sharp); 0 makes the scale free. Not finite or negative counts as 1. It weighs decisions
    /// only: the reported blur ([`crate::FrameStats::quality_cost`]) stays unweighted.
    pub scale_blur_weight: f32,
    /// The scale is evaluated (and changed) at most once per this many frames (default 60); a new
    /// budget lifts it, and floors that no longer fit lower the scale at once. Why: a rescale
    /// reallocates every render target and moves every texture's wanted level, the most
    /// disruptive change there is; and evaluating it costs two more plans.
    pub min_frames_between_rescales: u32,
    /// Relative change of the bytes available to the planner (budget minus headroom minus fixed)
    /// that counts as a new budget and lifts every hold (default 1/64). Why: a callback budget or
    /// the fixed bytes jitter a little every frame, which must not undo the hysteresis.
    pub budget_tolerance: f32,
    /// Plan incrementally (default true): a plan goes only through the textures whose inputs
    /// changed since the previous call and those that are not quiet. A quiet texture is at its
    /// floor, not busy, past its hold, and asks for nothing finer than its floor (no pixels,
    /// not in view, or far enough that every pixel wants the floor or coarser at any of the
    /// buckets' mip biases): it adds its floor to the sums and nothing else to any plan, so
    /// skipping it gives exactly the plans of a full pass (the simulation test runs both side
    /// by side on every frame). A quiet texture whose demand moves but stays that far is not
    /// planned again. In an open world most textures are quiet; with `false` every plan goes
    /// through every texture.
    pub incremental: bool,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            keep_bonus: 1.25,
            min_frames_between_changes: 100,
            wanted_tolerance: 0.25,
            pixels_tolerance: 0.25,
            rescale_margin: 0.25,
            scale_blur_weight: 4.0,
            min_frames_between_rescales: 60,
            budget_tolerance: 1.0 / 64.0,
            incremental: true,
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

// The change check's and the greedy's fields share a texture's first 32 bytes.
const _: () = assert!(std::mem::offset_of!(PlanTexture, base_levels) < 24);
const _: () = assert!(std::mem::offset_of!(PlanTexture, level_bytes) == 24);
