//! The resolution controller: picks the scale bucket each frame from the memory-driven maximum
//! (the planner's) and a frame-time target. Pure CPU, no allocation per frame.
//!
//! Policy, and why:
//! - **Down at once when memory requires it.** The budget must hold on every frame, so a memory
//!   cap below the current bucket is obeyed on the frame it arrives.
//! - **Up only after a stable window** ([`ControllerConfig::up_stable_frames`]): the wanted bucket
//!   must have stayed above the current one for that many consecutive frames, and the move goes
//!   to the lowest bucket wanted during the window. Why: every change reallocates the render
//!   targets (a stall and a burst of memory traffic), and a budget that dips and recovers within
//!   a fraction of a second should not cost two reallocations.
//! - **The time path is smoothed and has a dead band.** Frame times are noisy (a page fault, a
//!   compositor hiccup), so they go through an exponential moving average, and nothing happens
//!   while the average stays within `target * (1 ± dead_band)`. Above the band the scale goes
//!   down at once, to the largest bucket whose predicted time stays under
//!   `target * (1 - dead_band / 2)` (frame time is taken as proportional to the pixel count, i.e.
//!   to `scale²`). Otherwise the path allows the largest bucket with that same prediction, and
//!   the common up rule applies: that allowance must hold on every frame of the stable window. That
//!   prediction with its margin is what prevents oscillation: an up-step that would land near the
//!   top of the band, and so be undone by noise, is never taken. After each change the average
//!   is rescaled by the same pixel ratio and the time path waits
//!   [`ControllerConfig::settle_frames`] before its next decision, since the average still holds
//!   frames rendered at the old scale.
//! - **Every change records its reason** in a fixed ring of [`HISTORY`] entries (overlay, report).

use super::buckets::{BucketRange, ScaleBucket};

/// Changes kept in [`ResolutionController::history`].
pub const HISTORY: usize = 16;

/// Why the scale changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeReason {
    /// The memory-driven maximum fell below the current bucket.
    MemoryDown,
    /// The memory-driven maximum rose and stayed up for the stable window.
    MemoryUp,
    /// The smoothed GPU frame time went above the target's band.
    GpuTimeDown,
    /// The smoothed GPU frame time stayed below the band; one bucket up is predicted to fit.
    GpuTimeUp,
    /// As [`ChangeReason::GpuTimeDown`], from CPU frame time (no timestamp queries).
    CpuTimeDown,
    /// As [`ChangeReason::GpuTimeUp`], from CPU frame time.
    CpuTimeUp,
    /// Set by [`ResolutionController::force`] or a [`ControllerMode::Fixed`] bucket.
    Manual,
    /// The bucket range or the mode changed and the current bucket no longer fits it.
    Config,
}

impl ChangeReason {
    /// A short snake_case name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            ChangeReason::MemoryDown => "memory_down",
            ChangeReason::MemoryUp => "memory_up",
            ChangeReason::GpuTimeDown => "gpu_time_down",
            ChangeReason::GpuTimeUp => "gpu_time_up",
            ChangeReason::CpuTimeDown => "cpu_time_down",
            ChangeReason::CpuTimeUp => "cpu_time_up",
            ChangeReason::Manual => "manual",
            ChangeReason::Config => "config",
        }
    }
}

/// One recorded change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleChange {
    /// The controller's frame counter when it happened (first update is frame 0).
    pub frame: u64,
    /// ScaleBucket before.
    pub from: ScaleBucket,
    /// ScaleBucket after.
    pub to: ScaleBucket,
    /// Why.
    pub reason: ChangeReason,
}

/// Where the frame time came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeSource {
    /// GPU timestamps ([`super::GpuTimer`]).
    #[default]
    Gpu,
    /// CPU frame time (no timestamp queries on this device).
    Cpu,
}

/// What drives the memory side of the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ControllerMode {
    /// The planner's memory-driven maximum ([`ControllerInput::memory_max_scale`]) and the time path.
    Planned,
    /// The seed idea, kept as a baseline to compare the planner against: the memory cap is
    /// `lerp(min, max, available / reference_bytes)` (clamped), from
    /// [`ControllerInput::available_bytes`]. The time path and the hysteresis still apply, so the
    /// comparison isolates where the scale comes from.
    LerpBaseline {
        /// VRAM at which the full scale is allowed.
        reference_bytes: u64,
    },
    /// A fixed bucket (a user setting): the time path is off, memory still caps it.
    Fixed(ScaleBucket),
}

/// Tuning. `Default` gives the values the tests were run with.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ControllerConfig {
    /// The buckets allowed (default 0.5..=1.0).
    pub range: BucketRange,
    /// Consecutive frames the wanted bucket must stay above the current one before going up
    /// (default 30: half a second at 60 fps, long enough to ride out a transient, short enough
    /// that the player sees the image sharpen soon after the budget returns).
    pub up_stable_frames: u32,
    /// Weight of the newest frame time in the moving average (default 0.1: a time constant of
    /// about 10 frames, which damps single-frame spikes to a tenth while following a real change
    /// of load within a few dozen frames).
    pub time_ema_alpha: f32,
    /// Half-width of the dead band around the target frame time, as a fraction (default 0.1:
    /// nothing happens while the average is within ±10 % of the target; one bucket changes the
    /// pixel count by 12 to 25 %, so a narrower band would see every step as a miss).
    pub dead_band: f32,
    /// Frames the time path waits after any change before deciding again, and at start-up
    /// (default 8: longer than the [`super::GpuTimer`]'s read-back lag of up to
    /// [`super::timer::SLOTS`] frames, so that a time measured at the old scale is not taken for
    /// one at the new scale, and long enough for the average to hold mostly new samples).
    pub settle_frames: u32,
    /// The mode (default [`ControllerMode::Planned`]).
    pub mode: ControllerMode,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            range: BucketRange::default(),
            up_stable_frames: 30,
            time_ema_alpha: 0.1,
            dead_band: 0.1,
            settle_frames: 8,
            mode: ControllerMode::Planned,
        }
    }
}

/// One frame's input. Every field is optional in effect: a non-finite or missing value means
/// "no constraint from this source this frame".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControllerInput {
    /// The planner's memory-driven maximum scale per axis ([`ControllerMode::Planned`]). Rounded
    /// down to a bucket. Not finite: no memory limit (as the planner reads it).
    pub memory_max_scale: f32,
    /// VRAM available to the renderer, bytes ([`ControllerMode::LerpBaseline`] only).
    pub available_bytes: Option<u64>,
    /// The last measured frame time in milliseconds (GPU where possible), at the current bucket.
    /// `None` (or not finite, or `<= 0`) while no measurement is ready: the time path keeps its
    /// last decision.
    pub frame_time_ms: Option<f32>,
    /// Where `frame_time_ms` came from (only changes the recorded reason).
    pub time_source: TimeSource,
    /// The frame-time target in milliseconds; `None` turns the time path off.
    pub target_frame_ms: Option<f32>,
}

impl Default for ControllerInput {
    fn default() -> Self {
        Self {
            memory_max_scale: 1.0,
            available_bytes: None,
            frame_time_ms: None,
            time_source: TimeSource::Gpu,
            target_frame_ms: None,
        }
    }
}

/// `lerp(min, max, available / reference)`, clamped to the range and rounded down to a bucket:
/// the controller's first, memory-only mode. A zero reference allows the full range.
pub fn lerp_baseline(
    range: BucketRange,
    available_bytes: u64,
    reference_bytes: u64,
) -> ScaleBucket {
    let t = if reference_bytes == 0 {
        1.0
    } else {
        (available_bytes as f64 / reference_bytes as f64).clamp(0.0, 1.0) as f32
    };
    let (lo, hi) = (range.min().scale(), range.max().scale());
    range.clamp(ScaleBucket::floor(lo + (hi - lo) * t))
}

/// The largest frame time the average takes (ms): a minute.
const MAX_FRAME_MS: f32 = 60_000.0;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct ResolutionController {
    config: ControllerConfig,
    current: ScaleBucket,
    frame: u64,
    /// The time path's cap (max of the range when it has no opinion).
    time_cap: ScaleBucket,
    /// Smoothed frame time, ms, at the current bucket.
    ema_ms: Option<f32>,
    /// Frame times received (for the average's warm-up).
    samples: u32,
    /// The two frame times before this one, newest first (at the current bucket's scale):
    /// the median of them and the new one enters the average (see `time_path`).
    recent: [Option<f32>; 2],
    /// Frames left before the time path decides again.
    settle: u32,
    /// Consecutive frames the wanted bucket has been above `current`.
    up_frames: u32,
    /// Lowest wanted bucket during the current up window.
    up_target: ScaleBucket,
    /// Whether memory was the binding limit when the up window opened (the up-move's reason).
    up_by_memory: bool,
    /// The memory cap of the previous frame (which cap held the scale down).
    last_memory_cap: ScaleBucket,
    /// A bucket [`ResolutionController::update`] returned that the caller could not make
    /// ([`ResolutionController::note_made`]) and the memory input it was refused under: while
    /// that input holds (and the caller does not lift it), the scale does not step up to it or
    /// below it (it would only be refused again).
    blocked: Option<(ScaleBucket, u32)>,
    /// `ControllerInput::memory_max_scale` of the last update, as bits.
    last_memory_input: u32,
    ring: [Option<ScaleChange>; HISTORY],
    ring_next: usize,
    changes: u64,
}

impl Default for ResolutionController {
    fn default() -> Self {
        Self::new(ControllerConfig::default())
    }
}

impl ResolutionController {
    /// A controller starting at the top of its range. Bad tuning is repaired, not refused:
    /// `up_stable_frames` of 0 counts as 1, `time_ema_alpha` is clamped to `[0.001, 1]` (not finite:
    /// 0.1), `dead_band` to `[0, 0.9]` (not finite: 0.1).
    pub fn new(config: ControllerConfig) -> Self {
        let config = sanitize(config);
        let top = config.range.max();
        Self {
            current: top,
            frame: 0,
            time_cap: top,
            ema_ms: None,
            samples: 0,
            recent: [None; 2],
            // The first decision waits for a few samples too.
            settle: config.settle_frames,
            up_frames: 0,
            up_target: top,
            up_by_memory: false,
            last_memory_cap: top,
            blocked: None,
            last_memory_input: 1.0f32.to_bits(),
            ring: [None; HISTORY],
            ring_next: 0,
            changes: 0,
            config,
        }
    }

    /// The configuration in use (repaired as [`ResolutionController::new`] says).
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    /// Replaces the configuration, keeping the state; the current bucket is clamped into the new
    /// range at once (reason [`ChangeReason::Config`]).
    pub fn set_config(&mut self, config: ControllerConfig) {
        self.config = sanitize(config);
        let r = self.config.range;
        self.time_cap = r.clamp(self.time_cap);
        self.last_memory_cap = r.clamp(self.last_memory_cap);
        self.up_frames = 0;
        self.blocked = None;
        let clamped = r.clamp(self.current);
        self.change(clamped, ChangeReason::Config);
    }

    /// The current bucket.
    pub fn bucket(&self) -> ScaleBucket {
        self.current
    }

    /// The smoothed frame time (ms), once a measurement has arrived.
    pub fn smoothed_frame_ms(&self) -> Option<f32> {
        self.ema_ms
    }

    /// Frames seen so far.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// Changes since creation.
    pub fn change_count(&self) -> u64 {
        self.changes
    }

    /// The last (up to 16) changes, oldest first. No allocation.
    pub fn history(&self) -> impl Iterator<Item = &ScaleChange> + '_ {
        let (newer, older) = self.ring.split_at(self.ring_next);
        older.iter().chain(newer).flatten()
    }

    /// The most recent change.
    pub fn last_change(&self) -> Option<&ScaleChange> {
        self.ring[(self.ring_next + HISTORY - 1) % HISTORY].as_ref()
    }

    /// Sets the bucket now (clamped to the range), reason [`ChangeReason::Manual`]. The next
    /// [`ResolutionController::update`] may move it again (memory at once, time after its
    /// windows); use [`ControllerMode::Fixed`] for a lasting choice.
    pub fn force(&mut self, bucket: ScaleBucket) {
        let b = self.config.range.clamp(bucket);
        self.time_cap = b;
        self.up_frames = 0;
        self.change(b, ChangeReason::Manual);
    }

    /// Tells the controller the bucket the caller made this frame, when lower than the one
    /// [`ResolutionController::update`] returned: its targets would cost more than the memory
    /// allows (an upscaler's intermediate makes a scale just below native dearer than native),
    /// or the driver refused them. The controller moves there (reason
    /// [`ChangeReason::MemoryDown`]; its frame-time average is carried to the new scale), so
    /// what it reports and predicts is the scale drawn, and does not step up again to the
    /// refused bucket or below it while the same memory input holds (until
    /// [`ResolutionController::lift_refusals`]). No effect when `made` is not lower.
    pub fn note_made(&mut self, made: ScaleBucket) {
        let made = self.config.range.clamp(made);
        if made >= self.current {
            return;
        }
        let refused = self.current;
        let b = match self.blocked {
            Some((b, bits)) if bits == self.last_memory_input => b.max(refused),
            _ => refused,
        };
        self.blocked = Some((b, self.last_memory_input));
        self.up_frames = 0;
        self.change(made, ChangeReason::MemoryDown);
    }

    /// Forgets the buckets [`ResolutionController::note_made`] refused: what the targets cost
    /// changed (a new output size or target set), so they may be made now.
    pub fn lift_refusals(&mut self) {
        self.blocked = None;
    }

    /// Advances one frame and returns the bucket to render it at. Constant time, no allocation.
    pub fn update(&mut self, input: &ControllerInput) -> ScaleBucket {
        let range = self.config.range;
        let memory_cap = match self.config.mode {
            ControllerMode::LerpBaseline { reference_bytes } => match input.available_bytes {
                Some(a) => lerp_baseline(range, a, reference_bytes),
                // No figure this frame: keep the previous cap rather than jump to the top.
                None => self.last_memory_cap,
            },
            _ => range.clamp(ScaleBucket::floor(input.memory_max_scale)),
        };
        let fixed = match self.config.mode {
            ControllerMode::Fixed(b) => Some(range.clamp(b)),
            _ => None,
        };
        match fixed {
            Some(b) => self.time_cap = b,
            None => self.time_path(input),
        }
        let mut wanted = memory_cap.min(self.time_cap);
        // A bucket the caller could not make stays out of reach while the memory input it was
        // refused under holds (its targets cost more than that memory allows): stepping up to
        // it would only be refused again. A bucket above it is tried as usual.
        self.last_memory_input = input.memory_max_scale.to_bits();
        if let Some((b, bits)) = self.blocked {
            if bits != self.last_memory_input {
                self.blocked = None;
            } else if wanted > self.current && wanted <= b {
                wanted = self.current;
            }
        }

        if wanted < self.current {
            let reason = if memory_cap < self.current {
                ChangeReason::MemoryDown
            } else if fixed.is_some() {
                ChangeReason::Manual
            } else {
                time_reason(input.time_source, false)
            };
            self.change(wanted, reason);
        } else if wanted > self.current {
            if self.up_frames == 0 {
                self.up_target = wanted;
                // Which limit held the scale down until now: memory if its cap was the binding
                // one on the previous frame, else the time path (or the fixed setting).
                self.up_by_memory = self.last_memory_cap <= self.current;
            }
            self.up_frames += 1;
            self.up_target = self.up_target.min(wanted);
            if self.up_frames >= self.config.up_stable_frames {
                let reason = if self.up_by_memory {
                    ChangeReason::MemoryUp
                } else if fixed.is_some() {
                    ChangeReason::Manual
                } else {
                    time_reason(input.time_source, true)
                };
                let target = self.up_target;
                self.change(target, reason);
            }
        } else {
            self.up_frames = 0;
        }
        self.last_memory_cap = memory_cap;
        self.frame += 1;
        self.current
    }

    /// Updates the smoothed frame time and the time path's cap.
    ///
    /// The `scale²` model is deliberately the pessimistic one for a frame with a fixed cost
    /// (`t = fixed + per_pixel * scale²`): it over-predicts the time after a step up (so it steps
    /// up less) and under-predicts the saving of a step down (so it takes another step after
    /// settling rather than overshooting). Either way it errs towards no oscillation.
    fn time_path(&mut self, input: &ControllerInput) {
        let range = self.config.range;
        let target = match input.target_frame_ms {
            Some(t) if t.is_finite() && t > 0.0 => t,
            _ => {
                // No target: the time path has no opinion.
                self.time_cap = range.max();
                return;
            }
        };
        let Some(t) = input.frame_time_ms.filter(|t| t.is_finite() && *t > 0.0) else {
            return;
        };
        // A minute a frame is as slow as it matters: a larger figure (`f32::MAX`) made the
        // average overflow to infinity when a step up carried it, and then NaN for good.
        let raw = t.min(MAX_FRAME_MS);
        // One frame far from both of its neighbours (a hitch: a shader compiled, a page fault,
        // the time a window spent minimised counted as one frame) is not a change of load: the
        // median of the last three frame times enters the average, so a lone outlier never
        // does (a hitch of 80 ms in frames of 12 took a 16.6 ms target's scale down at once,
        // and back up 38 frames later, every second), and a lasting change does a frame later.
        let t = match self.recent {
            [Some(a), Some(b)] => median3(raw, a, b),
            _ => raw,
        };
        self.recent = [Some(raw), self.recent[0]];
        // Until 1/alpha samples have arrived the average is a plain mean of them (weight
        // 1/n), so that one noisy first frame does not pass for the average.
        self.samples = self.samples.saturating_add(1);
        let a = self.config.time_ema_alpha.max(1.0 / self.samples as f32);
        let ema = match self.ema_ms {
            Some(e) => e + a * (t - e),
            None => t,
        };
        self.ema_ms = Some(ema);
        if self.settle > 0 {
            self.settle -= 1;
            return;
        }
        let band = self.config.dead_band;
        let s = self.current.scale();
        // Both directions aim at the largest bucket whose predicted time, `ema * (b / s)²`, stays
        // under the target less half the band. The margin is what keeps the path from
        // oscillating: a step (up or down) lands well inside the band, so noise cannot push it
        // straight back out, and a bucket whose time sits near the lower edge of the band is not
        // left for one that would sit near the upper edge.
        let limit = target * (1.0 - 0.5 * band);
        let fit = ScaleBucket::floor(s * (limit / ema).sqrt());
        self.time_cap = if ema > target * (1.0 + band) {
            // Over the band: down at once, at least one step.
            range.clamp(fit.min(self.current.down()))
        } else {
            // Inside or under the band: never below the current bucket. Recomputed every frame,
            // so one lucky frame does not open the way up: the up window needs the prediction to
            // hold on every frame of it.
            range.clamp(fit.max(self.current))
        };
    }

    fn change(&mut self, to: ScaleBucket, reason: ChangeReason) {
        let from = self.current;
        self.up_frames = 0;
        if to == from {
            return;
        }
        self.current = to;
        // The average was measured at `from`: carry it to `to` by the pixel ratio, and let it
        // settle on real samples before the time path decides again.
        let r = to.scale() / from.scale();
        if let Some(e) = self.ema_ms.as_mut() {
            *e *= r * r;
        }
        for t in self.recent.iter_mut().flatten() {
            *t *= r * r;
        }
        self.settle = self.config.settle_frames;
        self.ring[self.ring_next] = Some(ScaleChange {
            frame: self.frame,
            from,
            to,
            reason,
        });
        self.ring_next = (self.ring_next + 1) % HISTORY;
        self.changes += 1;
    }
}

fn time_reason(source: TimeSource, up: bool) -> ChangeReason {
    match (source, up) {
        (TimeSource::Gpu, false) => ChangeReason::GpuTimeDown,
        (TimeSource::Gpu, true) => ChangeReason::GpuTimeUp,
        (TimeSource::Cpu, false) => ChangeReason::CpuTimeDown,
        (TimeSource::Cpu, true) => ChangeReason::CpuTimeUp,
    }
}

fn sanitize(mut c: ControllerConfig) -> ControllerConfig {
    c.up_stable_frames = c.up_stable_frames.max(1);
    c.time_ema_alpha = if c.time_ema_alpha.is_finite() {
        c.time_ema_alpha.clamp(1e-3, 1.0)
    } else {
        0.1
    };
    c.dead_band = if c.dead_band.is_finite() {
        c.dead_band.clamp(0.0, 0.9)
    } else {
        0.1
    };
    c
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;

/// The median of three numbers (none NaN).
fn median3(a: f32, b: f32, c: f32) -> f32 {
    a.min(b).max(a.max(b).min(c))
}
