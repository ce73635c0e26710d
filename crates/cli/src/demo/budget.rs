//! The demo's budget each frame: the automatic budget from the window's fixed bytes, the
//! tour's story, and the events (with their `--monitor` lines).

use super::{AUTO_ROOM_BYTES, Budget, Running, SETTLE_FRAMES};

impl Running {
    /// The budget before the frame: the story's at this tour frame, or the automatic one.
    pub(super) fn apply_budget(&mut self) {
        let want = match &self.story {
            Some(s) if self.loader.is_done() => {
                s.budget(self.tour_frame, self.base_budget, self.window_bytes)
            }
            Some(_) => self.base_budget,
            None if self.auto_budget => self.base_budget,
            None => return,
        };
        if self.renderer.budget().current_bytes() != want {
            self.renderer.set_budget(Budget::bytes(want));
        }
    }

    /// After the frame: the automatic budget from the window's fixed bytes, the events, the
    /// story's act and captions (and their `--monitor` lines).
    pub(super) fn after_render(&mut self) {
        let c = &self.stats.ledger.by_category;
        let window_bytes = c.other.bytes + c.overlay.bytes + c.buffers.bytes;
        if self.frame + 1 == SETTLE_FRAMES {
            self.window_bytes = window_bytes;
        }
        if self.auto_budget && !self.stats.skipped {
            let full_targets = self
                .renderer
                .manager()
                .scale_buckets()
                .last()
                .map_or(c.render_targets.bytes, |b| b.bytes);
            // Saturating: a bucket past the device's largest texture is priced u64::MAX.
            let fixed = window_bytes.saturating_add(full_targets);
            let auto = fixed
                .div_ceil(1 << 20)
                .saturating_mul(1 << 20)
                .saturating_add(AUTO_ROOM_BYTES);
            // Only a real change (a resize, the overlay shown): not every egui buffer growth.
            if auto.abs_diff(self.base_budget) >= 2 << 20 {
                tracing::info!(
                    budget = %mipflow::format_bytes(auto),
                    "automatic budget: the window's fixed bytes + 14 MiB"
                );
                self.base_budget = auto;
                self.window_bytes = window_bytes;
                if let Some(s) = self.story.as_mut() {
                    let b = s.budget(self.tour_frame, auto, window_bytes);
                    s.rebase(b);
                }
            }
        }
        // The first frames measure the window for the automatic budget (its provisional value
        // is no event); events and the story start after them.
        if self.frame < SETTLE_FRAMES {
            return;
        }
        self.events.observe(&self.stats);
        if self.opts.args.monitor {
            // In order, each once it is final (a wave with its whole size).
            let first = self
                .events
                .pushed()
                .saturating_sub(mipflow::EventLog::CAPACITY as u64);
            self.events_printed = self.events_printed.max(first);
            // The last frame of a `--frames` run prints what is still open too.
            let last = self.is_last_frame();
            while self.events_printed < self.events.pushed()
                && (last || self.events.is_final(self.events_printed, self.stats.frame))
            {
                if let Some(e) = self.events.get(self.events_printed) {
                    crate::say!("event  {:>6} | {e}", e.frame);
                }
                self.events_printed += 1;
            }
        }
        if let Some(story) = self.story.as_mut()
            && self.loader.is_done()
            && let Some(ended) = story.observe(self.tour_frame, &self.stats)
            && self.opts.args.monitor
        {
            crate::say!("tour   {:>6} | {ended}", self.stats.frame);
        }
    }
}
