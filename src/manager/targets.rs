//! The manager's render targets: the scale buckets priced at the output size, the targets made
//! at the planned bucket (a lower one when the driver is out of memory), and the one function
//! that decides the frame's render scale (`BudgetManager::decide_scale`).

use super::{BudgetManager, FrameTiming};
use crate::budget::planner::BucketCost;
use crate::resolution::{BucketRange, ScaleBucket, TimeSource};
use crate::{Error, Result};

impl BudgetManager {
    /// After [`BudgetManager::refresh_buckets`]: buckets past the device's largest texture are
    /// priced u64::MAX; the plan starts from the highest one that can be made, or, when none
    /// can, the frame is refused before planning.
    pub(super) fn fit_buckets(&mut self, output: (u32, u32)) -> Result<()> {
        if !self.config.render_targets {
            return Ok(());
        }
        if let Some(reason) = &self.target_problem {
            return Err(Error::InvalidResource {
                label: "render targets".into(),
                reason: reason.clone(),
            });
        }
        // Buckets past the device's largest texture are priced u64::MAX: start the plan from
        // the highest one that can be made (a plan from an impossible one would first
        // cancel every grow to make room that no release can give), and when none can,
        // say so before planning, the textures left as they are.
        let top = self.buckets.iter().rposition(|b| b.bytes != u64::MAX);
        match top {
            Some(top) if self.buckets[self.mem_index].bytes == u64::MAX => {
                self.mem_index = top;
            }
            Some(_) => {}
            None => {
                return Err(Error::InvalidResource {
                    label: "render targets".into(),
                    reason: format!(
                        "an output of {}x{}: no render scale from {} to {} gives targets \
                         within the device's largest texture ({})",
                        output.0,
                        output.1,
                        self.range.min().scale(),
                        self.range.max().scale(),
                        self.ctx.device().limits().max_texture_dimension_2d
                    ),
                });
            }
        }
        Ok(())
    }

    pub(super) fn refresh_buckets(&mut self, output: (u32, u32)) {
        if !self.config.render_targets {
            if self.buckets.len() != 1 {
                self.buckets.clear();
                self.buckets.push(BucketCost {
                    scale: 1.0,
                    bytes: 0,
                });
                self.range = BucketRange::new(1.0, 1.0);
                self.mem_index = 0;
            }
            return;
        }
        if self.buckets_for != output {
            let set = self.targets.set();
            // A bucket whose targets pass the device's largest texture (a window wider than
            // an adopted device's default 8192) costs everything: the planner never picks it,
            // and the scale stays where the targets can be made.
            let max = self.ctx.device().limits().max_texture_dimension_2d;
            self.buckets.clear();
            self.buckets.extend(self.range.iter().map(|b| BucketCost {
                scale: b.scale(),
                bytes: if set.fits(output, b.scale(), max) {
                    set.bytes(output, b.scale())
                } else {
                    u64::MAX
                },
            }));
            self.buckets_for = output;
            // New prices: a bucket refused at the old ones may be made now.
            self.controller.lift_refusals();
            self.mem_index = self.mem_index.min(self.buckets.len().saturating_sub(1));
        }
    }

    /// `bucket` (at most the planner's memory bucket), or when its targets cost more than the
    /// memory bucket's (a lower scale can cost more than native: an upscaler's intermediate is
    /// only made below native scale), the largest lower bucket that costs no more.
    pub(super) fn within_memory_bucket(&self, bucket: ScaleBucket) -> ScaleBucket {
        match self.price(self.range.at(self.mem_index)) {
            Some(allowed) => self.largest_within(bucket, allowed),
            None => bucket,
        }
    }

    /// The targets' bytes at `b` for this frame's output, if priced.
    fn price(&self, b: ScaleBucket) -> Option<u64> {
        self.buckets.get(self.range.index_of(b)).map(|s| s.bytes)
    }

    /// `bucket` when its targets cost at most `bytes` (or it is not priced), else the largest
    /// lower bucket that does, else the range's least.
    fn largest_within(&self, bucket: ScaleBucket, bytes: u64) -> ScaleBucket {
        if self.price(bucket).is_none_or(|p| p <= bytes) {
            return bucket;
        }
        self.range
            .iter()
            .rev()
            .filter(|&b| b < bucket)
            .find(|&b| self.price(b).is_some_and(|p| p <= bytes))
            .unwrap_or(self.range.min())
    }

    /// The largest bucket up to `bucket` whose targets fit under `effective` beside what the
    /// ledger holds now (less the current targets, which a change frees first), or cost no more
    /// than the current ones (then the change never raises the total). The plan counted the
    /// targets of its bucket within its limit, but not the staging the same frame may still hold
    /// until the GPU has it (the floors of its evictions, written after the drops): raised into
    /// that, by a higher scale or a larger output, the targets passed the budget. They come out
    /// lower for the frame, and at the plan's scale once the room is back. With no bucket that
    /// fits, the cheapest: the frame is drawn.
    pub(super) fn within_room(&self, bucket: ScaleBucket, effective: u64) -> ScaleBucket {
        let Some(current) = self.targets.current() else {
            return bucket;
        };
        let have = current.bytes();
        let held = self.ctx.ledger().total_bytes().saturating_sub(have);
        self.largest_within(bucket, effective.saturating_sub(held).max(have))
    }

    pub(super) fn set_targets(&mut self, output: (u32, u32), bucket: ScaleBucket) -> Result<()> {
        let current = self
            .targets
            .current()
            .map(|t| (t.bucket(), t.output_size()));
        if current == Some((bucket, output)) {
            return Ok(());
        }
        // The pool frees each changed target before making its replacement (a change of scale
        // never holds both) and keeps the unchanged ones (an output-sized intermediate).
        self.targets.ensure(&self.ctx, output, bucket)?;
        Ok(())
    }

    /// The render targets at `bucket`, or, when the driver is out of memory for them, at the
    /// largest smaller bucket it can give: a frame at a lower resolution rather than no frame.
    /// The effective budget is then capped at what the driver gave (with those smaller targets
    /// in it), so the next plans keep the scale, and the textures, within it. Returns the
    /// bucket made.
    pub(super) fn set_targets_within_memory(
        &mut self,
        output: (u32, u32),
        bucket: ScaleBucket,
    ) -> Result<ScaleBucket> {
        let oom = match self.set_targets(output, bucket) {
            Err(e @ Error::OutOfMemory { .. }) => e,
            other => return other.map(|()| bucket),
        };
        // Targets released this frame stay alive in the driver until the GPU has finished the
        // frames that used them: wait for it (only on this error path), then try again before
        // giving up any scale.
        let _ = self.ctx.wait_idle();
        match self.set_targets(output, bucket) {
            Err(Error::OutOfMemory { .. }) => {}
            other => return other.map(|()| bucket),
        }
        for lower in self.range.iter().rev().filter(|&b| b < bucket) {
            match self.set_targets(output, lower) {
                Ok(()) => {
                    self.note_out_of_memory(&oom);
                    self.mem_index = self.range.index_of(lower);
                    return Ok(lower);
                }
                Err(Error::OutOfMemory { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.note_out_of_memory(&oom);
        Err(oom)
    }

    /// The render scale of this frame, decided here and nowhere else, and the targets made at
    /// it. In order:
    /// 1. the planner's memory bucket `mem_bucket` (the largest scale whose targets, with the
    ///    textures it traded them against, fit the budget; see the planner's
    ///    [`PlannerConfig::scale_blur_weight`](crate::PlannerConfig::scale_blur_weight) for how
    ///    the trade is weighed);
    /// 2. the resolution controller: its stable window before going up, and GPU frame time
    ///    when a target frame time is set (it may only go lower than the memory bucket);
    /// 3. two clamps to what really fits now: the bucket whose targets cost no more than the
    ///    memory bucket's (at outputs where buckets round to the same size), and the room left
    ///    under the budget by staging the plan did not count;
    /// 4. the targets are made at it (the driver may refuse: then a lower one), and the
    ///    controller is told the scale really drawn.
    ///
    /// Without targets of its own (`render_targets: false`) the frame is at scale 1.
    pub(super) fn decide_scale(
        &mut self,
        output: (u32, u32),
        mem_bucket: ScaleBucket,
        budget: u64,
        fixed: u64,
        timing: FrameTiming,
    ) -> Result<ScaleBucket> {
        // The CPU time stands in only for a caller that never gives GPU times: once it has,
        // a frame without a new one (the timestamps not back yet) keeps the last decision.
        // Mixed in, the CPU time (a vsync interval, a loading hitch) moved the scale.
        self.gpu_timed |= timing.gpu_ms.is_some();
        let frame_time = timing.gpu_ms.or(if self.gpu_timed {
            None
        } else {
            (timing.cpu_ms > 0.0).then_some(timing.cpu_ms)
        });
        if self.config.render_targets {
            let bucket = self.controller.update(&crate::resolution::ControllerInput {
                memory_max_scale: mem_bucket.scale(),
                available_bytes: Some(budget.saturating_sub(fixed)),
                frame_time_ms: frame_time,
                time_source: if timing.gpu_ms.is_some() {
                    TimeSource::Gpu
                } else {
                    TimeSource::Cpu
                },
                target_frame_ms: self.config.target_frame_ms,
            });
            let made = self.within_memory_bucket(bucket.min(mem_bucket));
            // Held lower for a frame when staging the plan did not count still holds the room
            // (see `within_room`): the controller is not told, its choice stands and the
            // targets follow it once the room is back (told, it held the scale for its whole
            // window and refused the bucket while the memory input stayed).
            let roomy = self.within_room(made, self.budget.effective(budget));
            let drawn = self.set_targets_within_memory(output, roomy)?;
            // Lower than the controller chose (its targets cost more than the memory bucket's,
            // or the driver refused them): the controller follows, so that its bucket, reason
            // and frame-time model are those of the scale drawn.
            self.controller
                .note_made(if drawn < roomy { drawn } else { made });
            Ok(drawn)
        } else {
            // No targets of ours: the frame is at scale 1 (what the docs promise a caller who
            // keeps its own targets), whatever a frame-time target says.
            Ok(mem_bucket)
        }
    }
}
