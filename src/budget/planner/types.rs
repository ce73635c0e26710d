//! The planner's public types: its view of a texture, its input, configuration and output.

use super::*;

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
    pub textures: &'a PlanTextures,
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
    /// planned again. In an open world most textures are quiet. It also lets a plan take the
    /// resident mip steps that the previous plan's price puts well above what is left out
    /// without sorting them (only when every step up there fits; the plan is the same). With
    /// `false` every plan goes through every texture and sorts every step: the reference.
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
    /// What a byte is worth to the textures at this budget: the gain per byte (pixel-octaves,
    /// priority-weighted) of the most valuable mip step the plan left out for want of room, or
    /// of the next step of a texture held where it is (its level changed lately) or pinned at
    /// its grow in flight, to 1/16 of an octave; 0 when every step that gains fits. Something else that would take
    /// bytes from the same budget (a tile cache) is worth them when it gains more per byte.
    pub memory_price: f32,
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
        self.memory_price = source.memory_price;
        self.transitions.clone_from(&source.transitions);
        self.replanned = source.replanned;
    }
}
