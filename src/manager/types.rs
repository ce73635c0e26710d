//! The manager's configuration and what a frame gives back: [`ManagerConfig`], [`FrameTiming`],
//! [`FramePlan`], [`FrameStats`].

use super::*;

/// How a [`BudgetManager`] is made. `Default`: a 256 MiB budget, default streaming, scales from
/// 0.5 to 1, bilinear upscale targets, memory-driven scaling only.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ManagerConfig {
    /// The VRAM budget (bytes, a fraction of the adapter's memory, or a callback).
    pub budget: Budget,
    /// Streaming settings (the planner's hysteresis among them).
    pub stream: StreamConfig,
    /// Resolution controller settings (scale range, stable window, time path).
    pub controller: ControllerConfig,
    /// The upscaler, which decides the render-target set (an intermediate at output size for
    /// [`Upscaler::EasuRcas`]).
    pub upscaler: Upscaler,
    /// A GPU frame-time target in ms: above it the scale goes down. `None`: memory only.
    pub target_frame_ms: Option<f32>,
    /// Whether the manager makes and scales the render targets (default true). False: it
    /// manages textures only, at a render scale of 1; render targets the caller keeps itself
    /// count as fixed bytes when made with the tracked constructors (category render targets).
    pub render_targets: bool,
    /// The render targets the caller declares (any number, any formats: HDR colour, depth, a
    /// G-buffer...): the manager makes them at the planned scale ([`BudgetManager::targets`],
    /// in declaration order), prices every scale bucket by them and reallocates them at bucket
    /// changes. `None` (default): the [`crate::Renderer`]'s set for `upscaler`.
    pub target_set: Option<TargetSet>,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            budget: Budget::bytes(256 << 20),
            stream: StreamConfig::default(),
            controller: ControllerConfig::default(),
            upscaler: Upscaler::Bilinear,
            target_frame_ms: None,
            render_targets: true,
            target_set: None,
        }
    }
}

/// Frame times the resolution controller may scale by.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameTiming {
    /// The last GPU frame time (ms), when timestamps are available.
    pub gpu_ms: Option<f32>,
    /// The CPU time of the previous frame, submit to submit (ms; 0 when unknown). Reported,
    /// and scaled by only while no GPU time has been given (nor announced with
    /// [`BudgetManager::expect_gpu_times`]): after that, a frame whose GPU time is not back yet
    /// keeps the last decision.
    pub cpu_ms: f32,
}

/// What [`BudgetManager::frame`] decided: draw at `bucket` with `mip_bias`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FramePlan {
    /// The frame number (from 1).
    pub frame: u64,
    /// The caller's budget this frame.
    pub budget_bytes: u64,
    /// The planner's verdict.
    pub status: PlanStatus,
    /// The scale bucket the targets are at this frame.
    pub bucket: ScaleBucket,
    /// The planner's memory-driven bucket (the controller may be lower).
    pub memory_bucket: ScaleBucket,
    /// The render scale per axis.
    pub render_scale: f32,
    /// The mip bias that goes with the render scale (negative: textures sampled as at native
    /// resolution). Give it to your shaders (a uniform used by `textureSampleBias`: wgpu
    /// samplers have no LOD bias).
    pub mip_bias: f32,
    /// Why the controller changed the scale this frame, if it did.
    pub scale_reason: Option<ChangeReason>,
}

/// What one frame did, for the overlay, the reports and the caller's own checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameStats {
    /// Frame number, from 1.
    pub frame: u64,
    /// The budget in force.
    pub budget_bytes: u64,
    /// When the driver ran out of memory below the budget: the effective budget it set (what
    /// the driver really gave; raised again after a quiet spell, cleared by a new budget).
    pub oom_cap_bytes: Option<u64>,
    /// The ledger at the end of the frame.
    pub ledger: LedgerSnapshot,
    /// The ledger's peak total inside the frame (transients included).
    pub frame_peak_bytes: u64,
    /// The render scale the frame was drawn at.
    pub render_scale: f32,
    /// The planner's memory-driven scale.
    pub memory_scale: f32,
    /// Streaming figures.
    pub stream: StreamStats,
    /// Whether the budget held the floors.
    pub budget_too_small: bool,
    /// Bytes every floor, the smallest targets and the fixed bytes need.
    pub floor_bytes: u64,
    /// Pixel-octaves of blur left (planner's figure).
    pub quality_cost: f64,
    /// Bytes of the wanted levels that are resident.
    pub resident_mip_bytes: u64,
    /// Bytes of the levels the view wants (Unity's `desiredTextureMemory`).
    pub wanted_mip_bytes: u64,
    /// Bytes of the wanted levels the plan targets under the budget (Unity's
    /// `targetTextureMemory`); `resident_mip_bytes` is what of them is there now.
    pub target_mip_bytes: u64,
    /// Required or forced levels ([`crate::TextureOptions::required_level`],
    /// [`BudgetManager::force_resident`](crate::BudgetManager::force_resident)) the budget
    /// could not hold this frame: planned as far as it goes, reported here, never forced past
    /// the budget.
    pub unmet_required: u32,
    /// CPU time of the previous frame, submit to submit (ms).
    pub cpu_frame_ms: f32,
    /// Latest GPU frame time (ms), when timestamps are available.
    pub gpu_frame_ms: Option<f32>,
    /// Instances drawn.
    pub instances_drawn: u32,
    /// True when nothing was drawn (a 0x0 output).
    pub skipped: bool,
    /// GPU feedback: its latency (frames) and the pixels it covers (`Renderer` only).
    pub feedback: FeedbackStats,
    /// Why the render scale changed this frame, if it did (see [`crate::EventLog`]).
    pub scale_reason: Option<ChangeReason>,
    /// Texture blur on screen (`Renderer` only; 0 where a game gives its own demand): over the
    /// instances in view, their pixels times the octaves their resident level is coarser than
    /// what the current view wants, after this frame's uploads (the planner's quality
    /// currency, see [`crate::PlannerConfig::scale_blur_weight`]).
    pub blur_pixel_octaves: f32,
}

/// GPU feedback figures of one frame, filled by whoever records feedback (the `Renderer`,
/// or a game that runs `Feedback` itself); plain data, so the manager's stats carry it
/// without depending on feedback.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FeedbackStats {
    /// Frames between the feedback in use and this frame (`None`: none yet).
    pub latency_frames: Option<u64>,
    /// Output pixels the feedback in use covers (all textures, scaled up from the sample).
    pub pixels: f64,
    /// Frames whose feedback was not copied because every readback buffer was still in use.
    pub skipped: u64,
    /// Bytes the last `Feedback::resolve` copied back from the GPU (0: none this frame).
    pub readback_bytes: u64,
    /// Frames whose feedback was not used because they drew more slots than their readback
    /// held (the readbacks then grow: see `FeedbackConfig::readback_slots`).
    pub overflowed: u64,
}
