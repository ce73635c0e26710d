//! The event loop's pace and the frame-rate figure.

use std::time::Instant;

use winit::event_loop::ControlFlow;

/// How long an occluded window waits before it tries a frame again (when no event says it is
/// visible again first).
pub(super) const OCCLUDED_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// The event loop's pace: as fast as frames go while the window is drawn; asleep until an event
/// while it is minimised; until `occluded_until` (or an event) while the surface says it is
/// occluded.
pub(super) fn pace(minimised: bool, occluded_until: Option<Instant>, now: Instant) -> ControlFlow {
    match occluded_until {
        _ if minimised => ControlFlow::Wait,
        Some(t) if t > now => ControlFlow::WaitUntil(t),
        _ => ControlFlow::Poll,
    }
}

/// Frames-per-second, smoothed (exponential average of frame times).
#[derive(Debug, Default)]
pub(super) struct Fps {
    ms: f32,
}

impl Fps {
    pub(super) fn push(&mut self, dt_ms: f32) {
        if dt_ms.is_finite() && dt_ms > 0.0 {
            self.ms = if self.ms == 0.0 {
                dt_ms
            } else {
                self.ms * 0.9 + dt_ms * 0.1
            };
        }
    }

    pub(super) fn fps(&self) -> f32 {
        if self.ms > 0.0 { 1000.0 / self.ms } else { 0.0 }
    }
}
