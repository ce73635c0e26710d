//! GPU feedback as demand, for any renderer: what mipflow's own `Renderer` does with
//! [`Feedback`]'s histograms, as one object a game's renderer drives the same way.
//!
//! Per frame: [`FeedbackDemand::begin_frame`] makes the [`DemandView`] (guard band, prediction
//! at the manager's measured latency) and notes camera cuts and motion;
//! [`FeedbackDemand::recorded`] says which textures the frame's draws record feedback for;
//! [`FeedbackDemand::add`] gives one object's demand: the CPU estimate (the object's
//! [`Demand`]) unless the feedback says better. The rules:
//! - a texture in view whose feedback was recorded while it was drawn and in view, with none of
//!   its pixels, is hidden (behind a wall): no new levels and no pixels to defend those it has.
//!   The CPU estimate must give it four samples' worth of pixels (a sliver may draw no sample
//!   for frames), and while the camera moves three empty records in a row are needed (its
//!   bounding sphere may touch the view a frame before its surface is on screen);
//! - with [`crate::feedback::FeedbackConfig::histograms`], a seen texture's histogram is its
//!   demand (each level priced by its pixels), with the CPU estimate at a quarter of its pixels
//!   as a lead while the camera moves (the feedback is 1-3 frames old);
//! - otherwise (just entered the view, no feedback yet, a cut, out of view), the CPU estimate.
//!
//! No allocation once its per-slot arrays have grown to the texture count.

use glam::Mat4;

use super::Feedback;
use crate::BudgetManager;
use crate::demand::{Demand, DemandView};
use crate::stream::TextureHandle;

/// Feedback-driven demand for one view (see the module documentation).
#[derive(Debug, Default)]
pub struct FeedbackDemand {
    last_view: Option<Mat4>,
    /// The last camera cut (a jump the feedback in flight does not describe).
    last_cut: u64,
    /// The last frame whose camera differed from the frame before.
    last_moved: u64,
    frame: u64,
    /// Per slot: the first frame its texture was drawn with the record.
    feedback_since: Vec<u64>,
    /// Per slot: the frame its histogram was last given (once per frame).
    feedback_given: Vec<u64>,
    /// Per slot: the last frame it was in view, and the frame it last entered the view.
    view_last: Vec<u64>,
    view_since: Vec<u64>,
    /// Per slot: the feedback frame last looked at, and empty records in a row since then.
    hidden_streak: Vec<(u64, u8)>,
    /// Per slot: the texture the state above is of. A slot reused by another texture starts
    /// afresh: the old one's records (hidden behind a wall, say) say nothing of the new one.
    owner: Vec<Option<TextureHandle>>,
    // This frame's facts.
    fresh: bool,
    moved_since_feedback: bool,
    hidden_min_pixels: f32,
}

impl FeedbackDemand {
    /// Empty: no view yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the demand of the frame the manager plans next: the view of the camera's `view`
    /// and `projection` matrices (see [`DemandView::from_view_proj`]) at an `output` size,
    /// with a guard band `guard_band` times the field of view (1 or less: none) and the
    /// prediction at [`BudgetManager::demand_latency_frames`].
    pub fn begin_frame(
        &mut self,
        manager: &BudgetManager,
        feedback: &Feedback,
        (view_matrix, projection): (Mat4, Mat4),
        output: (u32, u32),
        guard_band: f32,
    ) -> DemandView {
        let mut view =
            DemandView::from_view_proj(view_matrix, projection, output).with_guard_band(guard_band);
        let frame = manager.frame_number() + 1;
        self.frame = frame;
        if let Some(prev) = self.last_view {
            view = view.with_prediction(prev, manager.demand_latency_frames());
            // A cut: feedback recorded before it describes another view.
            let (_, rot, shift) = (view_matrix * prev.inverse()).to_scale_rotation_translation();
            let (angle, distance) = (rot.to_axis_angle().1, shift.length());
            if angle >= 0.5 || distance > 5.0 {
                self.last_cut = frame;
            }
            if angle > 1e-6 || distance > 1e-6 {
                self.last_moved = frame;
            }
        }
        self.last_view = Some(view_matrix);
        let latest = feedback.latest_frame();
        self.fresh = latest.is_some_and(|f| f > self.last_cut);
        // The feedback was recorded at a view the camera has left since: the histograms lag.
        self.moved_since_feedback = latest.is_none_or(|f| self.last_moved > f);
        // The feedback's blocks are at most 32x32 (`block_shift` capped at 5, as it records),
        // of render pixels: each one 1/scale² output pixels, so four samples cover
        // 4 x side² / scale² output pixels (at scale 0.5, the threshold without the scale was
        // one expected sample, and a sliver drawing none lost the pixels defending its levels).
        let scale = manager.targets().map_or(1.0, |t| t.mip_bias().exp2());
        self.hidden_min_pixels = hidden_min_pixels(feedback.config().block_shift, scale);
        let slots = manager.plan_textures().len();
        if self.feedback_since.len() < slots {
            self.feedback_since.resize(slots, u64::MAX);
            self.feedback_given.resize(slots, 0);
            self.view_last.resize(slots, u64::MAX);
            self.view_since.resize(slots, u64::MAX);
            self.hidden_streak.resize(slots, (0, 0));
            self.owner.resize(slots, None);
        }
        view
    }

    /// Texture `h` is drawn with the feedback record from `frame` on (call for every drawn
    /// texture each frame; only the first call counts). The handle, not only its slot: a slot
    /// reused by a new texture starts afresh here, so that the new texture's first record counts
    /// whether this call comes before or after its [`FeedbackDemand::add`].
    pub fn recorded(&mut self, h: TextureHandle, frame: u64) {
        let i = h.index() as usize;
        self.claim(i, h);
        if let Some(since) = self.feedback_since.get_mut(i)
            && *since == u64::MAX
        {
            *since = frame;
        }
    }

    /// Makes slot `i`'s state `h`'s: a slot that held another texture starts afresh (its records,
    /// hidden behind a wall say, say nothing of the new one).
    fn claim(&mut self, i: usize, h: TextureHandle) {
        if let Some(owner) = self.owner.get_mut(i)
            && *owner != Some(h)
        {
            *owner = Some(h);
            self.feedback_since[i] = u64::MAX;
            self.feedback_given[i] = 0;
            self.view_last[i] = u64::MAX;
            self.view_since[i] = u64::MAX;
            self.hidden_streak[i] = (0, 0);
        }
    }

    /// Gives `manager` one object's demand for `h`: `cpu` is the object's [`Demand`] from the
    /// view [`FeedbackDemand::begin_frame`] returned. Returns false for a stale handle.
    pub fn add(
        &mut self,
        manager: &mut BudgetManager,
        feedback: &Feedback,
        h: TextureHandle,
        cpu: &Demand,
    ) -> bool {
        let i = h.index() as usize;
        let frame = self.frame;
        self.claim(i, h);
        let in_view = cpu.weight == 1.0;
        if in_view
            && let Some(last) = self.view_last.get_mut(i)
            && *last != frame
        {
            if last.saturating_add(1) != frame {
                // Entered the view this frame.
                self.view_since[i] = frame;
                self.hidden_streak[i] = (0, 0);
            }
            *last = frame;
        }
        // In view, with feedback recorded while this texture was drawn and in view.
        let seen = self.fresh
            && in_view
            && feedback.latest_frame().is_some_and(|latest| {
                self.feedback_since.get(i).is_some_and(|&s| latest >= s)
                    && self.view_since.get(i).is_some_and(|&s| latest >= s)
            });
        if seen {
            let hist = feedback.histogram(h.index());
            let empty = !hist.is_some_and(|h| h.iter().any(|&p| p > 0.0));
            let latest = feedback.latest_frame().unwrap_or(0);
            if let Some(st) = self.hidden_streak.get_mut(i)
                && st.0 != latest
            {
                *st = (latest, if empty { st.1.saturating_add(1) } else { 0 });
            }
            let streak = self.hidden_streak.get(i).map_or(0, |s| s.1);
            let needed = if self.moved_since_feedback { 3 } else { 1 };
            if empty {
                if cpu.pixels >= self.hidden_min_pixels && streak >= needed {
                    // Hidden: no new level, no pixels to defend those it has.
                    let keep = manager
                        .plan_textures()
                        .get(i)
                        .map_or(f32::INFINITY, |p| f32::from(p.in_flight_level));
                    return manager.add_demand(h, cpu.level.max(keep), 0.0);
                }
            } else if let (Some(hist), true) = (hist, feedback.config().histograms) {
                if self.feedback_given.get(i).is_some_and(|&g| g != frame) {
                    self.feedback_given[i] = frame;
                    manager.add_demand_levels(h, hist);
                }
                if self.moved_since_feedback {
                    return manager.add_view_demand(h, cpu, 0.25);
                }
                return true;
            }
        }
        manager.add_view_demand(h, cpu, 1.0)
    }
}

/// Output pixels a texture must cover for its empty feedback to say it is hidden: four recorded
/// samples' worth. One sample stands for a block of `2^block_shift` squared render pixels (at
/// most 32x32), each `1/scale²` output pixels.
fn hidden_min_pixels(block_shift: u32, scale: f32) -> f32 {
    let scale = if scale.is_finite() {
        scale.clamp(1.0 / 16.0, 1.0)
    } else {
        1.0
    };
    let block = (1u32 << (2 * block_shift.min(5))) as f32;
    4.0 * block / (scale * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four samples' worth of output pixels, at the render scale the feedback was recorded at:
    /// at scale 0.5 a sample covers four times the output pixels (before: the same threshold at
    /// every scale, one expected sample at 0.5).
    #[test]
    fn the_hidden_threshold_follows_the_render_scale() {
        assert_eq!(hidden_min_pixels(3, 1.0), 256.0);
        assert_eq!(hidden_min_pixels(3, 0.5), 1024.0);
        assert_eq!(hidden_min_pixels(9, 1.0), 4096.0, "blocks of at most 32x32");
        assert_eq!(hidden_min_pixels(3, f32::NAN), 256.0);
        assert_eq!(
            hidden_min_pixels(3, 0.0),
            256.0 * 256.0,
            "scale at least 1/16"
        );
    }

    /// A slot reused by a new texture: the new one's first record counts whether `recorded`
    /// comes before or after its `add` (it was dropped when it came first: the old texture's
    /// earlier record stood, then `add` cleared it, one frame later to trust its feedback).
    #[test]
    fn a_reused_slots_first_record_counts_before_or_after_add() {
        let mut d = FeedbackDemand::new();
        for v in [&mut d.feedback_since, &mut d.view_last, &mut d.view_since] {
            v.resize(4, u64::MAX);
        }
        d.feedback_given.resize(4, 0);
        d.hidden_streak.resize(4, (0, 0));
        d.owner.resize(4, None);
        let (old, new) = (TextureHandle::for_test(2, 0), TextureHandle::for_test(2, 1));
        d.recorded(old, 5);
        d.recorded(old, 6);
        assert_eq!(d.feedback_since[2], 5, "only the first record counts");
        d.hidden_streak[2] = (6, 3);
        // The slot's new texture, recorded in frame 9 before anything else of it.
        d.recorded(new, 9);
        assert_eq!(d.feedback_since[2], 9);
        assert_eq!(
            d.hidden_streak[2],
            (0, 0),
            "the old texture's streak is gone"
        );
        assert_eq!(d.owner[2], Some(new));
        // Its `add` would claim the slot again: nothing more is reset.
        d.claim(2, new);
        assert_eq!(d.feedback_since[2], 9);
        // A slot past the arrays (before `begin_frame` sized them): nothing, no panic.
        d.recorded(TextureHandle::for_test(40, 0), 9);
    }
}
