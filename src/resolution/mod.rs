//! Dynamic resolution driven by the budget: bucketed render targets, a controller, GPU timing and
//! the upscale pass.
//!
//! - [`buckets`]: the scale steps (1/16 per axis, from a minimum such as 0.5 to 1.0).
//! - [`target_set`]: the upscaler choice, every target's descriptor at a scale and the exact
//!   bytes of the targets at each step, for the planner (pure CPU).
//! - [`targets`]: the render-target pool ([`RenderTargets`]): HDR colour, depth and the upscaler's
//!   intermediate, charged to [`crate::budget::Category::RenderTargets`] and really freed when
//!   the scale changes.
//! - [`controller`]: [`ResolutionController`], which picks the bucket from the planner's memory cap
//!   and a frame-time target.
//! - [`timer`]: [`GpuTimer`], GPU frame time from timestamp queries, read back without blocking.
//! - [`upscale`]: [`UpscalePass`], from the scaled HDR colour to the caller's output view
//!   (bilinear, or an FSR1-class edge-adaptive upscale with contrast-adaptive sharpening).
//!
//! A frame, as the renderer drives it:
//! 1. `bucket = controller.update(&ControllerInput { memory_max_scale, frame_time_ms, .. })`;
//! 2. `targets.ensure(ctx, window_size, bucket)` (skip the frame on `Ok(None)`: minimised);
//! 3. render the scene into the targets' views (`Targets::view(key)`) with a mip bias of
//!    `bucket.mip_bias()`;
//! 4. `upscale.record(..)` into the output view; then the overlay, at native resolution.

pub mod buckets;
pub mod controller;
pub mod target_set;
pub mod targets;
pub mod timer;
pub mod upscale;

pub use buckets::{BucketRange, DEFAULT_MIN_SCALE, ScaleBucket, scaled_size};
pub use controller::{
    ChangeReason, ControllerConfig, ControllerInput, ControllerMode, ResolutionController,
    ScaleChange, TimeSource, lerp_baseline,
};
pub use target_set::{
    DEPTH_FORMAT, HDR_FORMAT, HDR_PACKED_FORMAT, INTERMEDIATE_FORMAT, TargetKey, TargetSet,
    TargetSize, TargetSpec, Upscaler, fill_scale_buckets, hdr_format, largest_fitting,
    scale_buckets, target_bytes,
};
pub use targets::{RenderTargets, Targets};
pub use timer::{GpuTimer, SLOTS as TIMER_SLOTS};
pub use upscale::{ToneMap, UpscaleConfig, UpscalePass};
