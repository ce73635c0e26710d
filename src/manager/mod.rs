//! The budget manager: the one owner of the frame's budget loop.
//!
//! It owns the ledger (through its [`GpuContext`]), the budget and its out-of-memory cap, the
//! planner, the streamer and the render targets with their resolution controller. Each frame,
//! [`BudgetManager::frame`]:
//! 1. takes the IO workers' finished reads and releases finished upload staging;
//! 2. computes the fixed bytes (everything on the ledger but its own streamed textures, render
//!    targets and staging) and the staging headroom;
//! 3. builds the planner's input from the streamer's textures (with the demand given this frame)
//!    and the render targets' bytes per scale bucket, and runs the planner;
//! 4. dispatches each transition in the plan's order: texture residency to the streamer, a
//!    `Rescale` to the render targets (drops and lower scales come first, so the ledger never
//!    passes the budget);
//! 5. lets the resolution controller pick the bucket (the planner's memory bucket, lowered further
//!    by GPU time when a target frame time is set) and makes the targets at it;
//! 6. builds the grows whose data arrived, within the upload caps.
//!
//! Memory and scale: the planner is told that the render targets are at its own memory bucket,
//! even while the controller still renders lower (going up waits for the controller's stable
//! window, or GPU time keeps it lower); so textures never take the bytes the targets may claim,
//! and going up always fits.
//!
//! It knows nothing of meshes, materials or passes: whoever draws takes the texture views (and
//! their versions) and the render targets, and owns the bind groups.

use std::time::Instant;

use crate::budget::ledger::ManagedScope;
use crate::budget::planner::{
    BucketCost, Plan, PlanInput, PlanStatus, PlanTextures, Planner, TransitionKind,
};
use crate::budget::{Budget, Category, EffectiveBudget, LedgerSnapshot};
use crate::gpu::{GpuConfig, GpuContext, TrackedTexture};
use crate::resolution::{
    BucketRange, ChangeReason, ControllerConfig, RenderTargets, ResolutionController, ScaleBucket,
    TargetSet, Targets, Upscaler,
};
use crate::stream::{
    StreamConfig, StreamStats, Streamer, TextureHandle, TextureOptions, TextureSource,
};
use crate::{Error, Result};

mod controls;
mod demand;
mod targets;
mod types;

pub use controls::{Residency, ResidentFuture};

pub use types::{FeedbackStats, FramePlan, FrameStats, FrameTiming, ManagerConfig};

#[doc = include_str!("budget_manager.md")]
pub struct BudgetManager {
    config: ManagerConfig,
    budget: EffectiveBudget,
    streamer: Streamer,
    planner: Planner,
    plan: Plan,
    targets: RenderTargets,
    /// Why the device cannot make `targets`' set, if it cannot ([`TargetSet::problem`]).
    target_problem: Option<String>,
    controller: ResolutionController,
    /// GPU frame times have been given ([`FrameTiming::gpu_ms`]): from then on a frame without
    /// one keeps the time path's last decision instead of taking the CPU time.
    gpu_timed: bool,
    range: BucketRange,
    buckets: Vec<BucketCost>,
    buckets_for: (u32, u32),
    mem_index: usize,
    frame: u64,
    /// Per texture index: the frame whose demand it holds (0: none). A texture's demand is
    /// reset by its first `add_demand` of a frame, or by the frame when none was given: so a
    /// frame touches only the textures given demand and those that had some before, not all.
    demand_frame: Vec<u64>,
    /// The textures whose demand was begun since the last frame (`demanded.0`) and in the
    /// frame before (`demanded.1`): every texture holding demand is in one of them, so a frame
    /// touches those, not every texture (at 100k textures and 5k in view, 5k).
    demanded: (Vec<u32>, Vec<u32>),
    /// The streaming controls (level limits, requests, forces, bias, load-all, futures).
    controls: controls::Controls,
    /// The textures whose planner records may have changed since the last plan (demand given
    /// or expired, the streamer's changes), for [`Planner::plan_with_changes`]; `None` when
    /// the next plan must check every texture (textures added or removed, or the list grew
    /// past the texture count over frames that did not plan).
    plan_dirty: Option<Vec<u32>>,
    /// `plan_dirty`'s buffer while it is `None` (kept, so that no frame allocates).
    plan_dirty_spare: Vec<u32>,
    /// The last frame [`BudgetManager::end_frame`] was called for, and whether a frame left
    /// without it was reported.
    ended_frame: u64,
    end_missed: bool,
    /// The last output that was not empty: a 0x0 frame (a minimised window) plans for it.
    last_output: (u32, u32),
    /// Bytes the game is about to allocate ([`BudgetManager::make_room`]), planned as fixed.
    room: u64,
    /// Last: fields drop in order, and the context's leak report must see everything else gone.
    ctx: GpuContext,
}

impl std::fmt::Debug for BudgetManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetManager")
            .field("frame", &self.frame)
            .field("streamer", &self.streamer)
            .finish()
    }
}

impl BudgetManager {
    /// A manager on the caller's device and queue (the game owns them, its window and its loop).
    /// No uncaptured-error handler is installed on the caller's device.
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, config: ManagerConfig) -> Result<Self> {
        let opts = GpuConfig {
            install_error_handler: false,
            ..GpuConfig::default()
        };
        Ok(Self::with_context(
            GpuContext::adopt(device, queue, &opts),
            config,
        ))
    }

    /// [`BudgetManager::new`] with the adapter the device came from: its memory can then be
    /// read ([`GpuContext::adapter_memory`]) for a budget that is a fraction of it
    /// ([`Budget::adapter_fraction`], given to [`BudgetManager::set_budget`]).
    pub fn with_adapter(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        config: ManagerConfig,
    ) -> Result<Self> {
        let opts = GpuConfig {
            install_error_handler: false,
            ..GpuConfig::default()
        };
        Ok(Self::with_context(
            GpuContext::adopt_with_adapter(adapter, device, queue, &opts),
            config,
        ))
    }

    /// A manager on a context mipflow made (headless, for a window) or adopted.
    pub fn with_context(ctx: GpuContext, config: ManagerConfig) -> Self {
        let range = config.controller.range;
        ctx.set_deterministic_release(config.stream.deterministic);
        let targets = match &config.target_set {
            Some(set) => RenderTargets::with_set(set.clone()),
            None => RenderTargets::with_hdr(
                config.upscaler,
                crate::resolution::hdr_format(ctx.device().features()),
            ),
        };
        Self {
            budget: EffectiveBudget::new(config.budget.clone(), config.stream.oom_probe_frames),
            streamer: Streamer::new(config.stream.clone()),
            planner: Planner::new(config.stream.planner.clone()),
            plan: Plan::default(),
            // The set is the manager's for life: judged once, not every frame.
            target_problem: targets.set().problem(ctx.device()),
            targets,
            controller: ResolutionController::new(config.controller.clone()),
            gpu_timed: false,
            mem_index: range.len().saturating_sub(1),
            range,
            buckets: Vec::new(),
            buckets_for: (0, 0),
            frame: 0,
            demand_frame: Vec::new(),
            demanded: (Vec::new(), Vec::new()),
            controls: Default::default(),
            plan_dirty: None,
            plan_dirty_spare: Vec::new(),
            ended_frame: 0,
            end_missed: false,
            last_output: (0, 0),
            room: 0,
            ctx,
            config,
        }
    }

    /// The GPU context (device, queue, ledger).
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The streamer (texture states and views).
    pub fn streamer(&self) -> &Streamer {
        &self.streamer
    }

    /// How many frames ahead demand should be predicted
    /// ([`crate::demand::DemandView::with_prediction`]): the measured frames from a grow's plan
    /// to its last level built, rounded up, 1 to [`crate::demand::MAX_PREDICTED_FRAMES`].
    pub fn demand_latency_frames(&self) -> u32 {
        (self.streamer.latency_frames().ceil() as u32).clamp(1, crate::demand::MAX_PREDICTED_FRAMES)
    }

    /// Says that [`FrameTiming::gpu_ms`] will come (a GPU timer measures the frames): the time
    /// path waits for the first GPU time instead of starting on CPU times (a loading frame's
    /// hitch would seed its average), and never takes a CPU time. Given GPU times imply it.
    pub fn expect_gpu_times(&mut self) {
        self.gpu_timed = true;
    }

    /// The resolution controller (current bucket, history of changes and their reasons).
    pub fn controller(&self) -> &ResolutionController {
        &self.controller
    }

    /// The last plan (transitions, limit, floor bytes, quality cost).
    pub fn last_plan(&self) -> &Plan {
        &self.plan
    }

    /// Frames planned so far.
    pub fn frame_number(&self) -> u64 {
        self.frame
    }

    /// The caller's budget.
    pub fn budget(&self) -> &Budget {
        self.budget.budget()
    }

    /// When the driver ran out of memory below the budget: the effective budget it set.
    pub fn oom_cap(&self) -> Option<u64> {
        self.budget.oom_cap()
    }

    /// Replaces the budget; the next frame plans with it (a lower one is reached in that frame,
    /// without passing it). Clears any out-of-memory cap.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget.set_budget(budget);
        // An out-of-memory figure the streamer noted since the last frame is from before the
        // new budget too: taken at the frame's end, it set the cap again.
        let _ = self.streamer.take_out_of_memory();
        self.planner.invalidate();
    }

    /// Test hook: `bytes` of upload staging charged as the manager's own, held until the
    /// charge is dropped (what a floor's staging copy holds until the GPU has it; `testing`
    /// feature; not a stable API).
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn testing_hold_staging(&self, bytes: u64) -> crate::budget::ledger::Charge {
        let _managed = ManagedScope::enter();
        self.ctx
            .ledger()
            .charge(Category::Staging, bytes, "test: staging held")
    }

    /// Test hook: the streamer notes a driver out-of-memory at ledger total `total`, as a
    /// creation that failed would (`testing` feature; not a stable API).
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn testing_note_streamer_out_of_memory(&mut self, total: u64) {
        self.streamer.note_out_of_memory_at(total);
    }

    /// Holds `bytes` of room in `category` for the game's own short-lived allocations (a
    /// screenshot's readback: [`crate::readback_bytes`]), planned as fixed bytes from the next
    /// frame on; [`crate::Reservation::lend`] (or [`crate::read_texture_rgba8_reserved`]) gives
    /// it to the allocation while it lives. Dropping the reservation gives the room back.
    pub fn reserve(&self, category: Category, bytes: u64, label: &str) -> crate::Reservation {
        crate::Reservation::new(self.ctx.ledger(), category, bytes, label)
    }

    /// Asks the plans from the next frame on to leave `bytes` free under the budget, beyond
    /// everything on the ledger, for an allocation the game is about to make (a cache it will
    /// grow); 0 stops asking. Unlike [`BudgetManager::reserve`], nothing is charged: the
    /// textures give the room up over the next frames (drops first, within the budget), and
    /// the game allocates once `budget - ledger total` has it, then asks for 0.
    pub fn make_room(&mut self, bytes: u64) {
        self.room = bytes;
    }

    /// The bytes [`BudgetManager::make_room`] asks for now.
    pub fn room_asked(&self) -> u64 {
        self.room
    }

    /// The scale range.
    pub fn scale_range(&self) -> BucketRange {
        self.range
    }

    /// Sets the scale range (min and max per axis, clamped to 1/16..=1). The memory-driven
    /// scale stays where it was, clamped into the new range. Without render targets of the
    /// manager's ([`ManagerConfig::render_targets`] false) the scale stays 1.
    pub fn set_scale_range(&mut self, min_scale: f32, max_scale: f32) {
        let range = BucketRange::new(min_scale, max_scale);
        let mut c = self.controller.config().clone();
        c.range = range;
        self.controller.set_config(c);
        if !self.config.render_targets {
            return;
        }
        let at = self.range.at(self.mem_index);
        self.range = range;
        self.buckets_for = (0, 0);
        self.mem_index = range.index_of(range.clamp(at));
    }

    /// Adds a streamed texture from a KTX2 file or bytes. Reads its header and floor tail now,
    /// and makes the floor resident at once when it fits under the budget.
    pub fn add_texture(
        &mut self,
        source: TextureSource,
        opts: TextureOptions,
    ) -> Result<TextureHandle> {
        let _managed = ManagedScope::enter();
        let budget = self.budget.effective(self.budget.budget().current_bytes());
        let h = self.streamer.add_texture(&self.ctx, source, opts, budget)?;
        self.apply_options(h, &opts);
        Ok(h)
    }

    /// A new texture's level limits ([`TextureOptions`]) become its controls.
    fn apply_options(&mut self, h: TextureHandle, opts: &TextureOptions) {
        if opts.finest_level > 0 || opts.required_level.is_some() {
            self.set_level_limits(h, opts.finest_level, opts.required_level);
        }
    }

    /// [`BudgetManager::add_texture`] for many textures at once (a level, an open world's tile):
    /// one result per texture, in order (one refused does not stop the others). Their floors
    /// are packed into one staging buffer (charged to `staging` until the GPU has copied it;
    /// in parts of at most 32 MiB, within the budget) and submitted together before it
    /// returns, instead of one `write_texture` per floor level: on lavapipe 13 µs a texture
    /// instead of 27 (BENCHMARKS.md). A floor with no room under the budget for its staging
    /// goes the single way.
    pub fn add_textures(
        &mut self,
        textures: impl IntoIterator<Item = (TextureSource, TextureOptions)>,
    ) -> Vec<Result<TextureHandle>> {
        let _managed = ManagedScope::enter();
        let budget = self.budget.effective(self.budget.budget().current_bytes());
        let mut options = Vec::new();
        let textures = textures.into_iter().inspect(|(_, o)| options.push(*o));
        let results = self.streamer.add_textures(&self.ctx, textures, budget);
        for (r, o) in results.iter().zip(&options) {
            if let Ok(h) = r {
                self.apply_options(*h, o);
            }
        }
        results
    }

    /// Adds a texture the caller made and filled, fully resident and not streamed (a UI atlas, a
    /// texture that must never blur, a baseline to compare streaming with; see
    /// [`crate::stream::load_resident`]). It is charged as `tex` was created (use the tracked
    /// constructors of [`GpuContext`]); the planner counts its bytes as fixed. Its view is
    /// handed out like any other's.
    pub fn add_resident_texture(&mut self, tex: TrackedTexture, label: &str) -> TextureHandle {
        self.streamer.add_resident(tex, label, None)
    }

    /// [`BudgetManager::add_resident_texture`] for a texture made from a KTX2 file (by
    /// [`crate::stream::load_resident`], or decoded from it): it keeps the file's metadata, so
    /// that [`Streamer::texture_orientation`] and [`Streamer::texture_aspect`] say what they say
    /// of the same file streamed (a `KTXorientation` of "ru" flips it alike, a cooked image
    /// keeps its shape).
    pub fn add_resident_texture_from(
        &mut self,
        tex: TrackedTexture,
        label: &str,
        file: &crate::ktx2::Ktx2Info,
    ) -> TextureHandle {
        self.streamer.add_resident(tex, label, Some(file))
    }

    /// Removes a texture (freed at once). False for a stale handle.
    pub fn remove_texture(&mut self, h: TextureHandle) -> bool {
        self.streamer.remove_texture(h)
    }

    /// The view to draw `h` with and its version (see [`Streamer::texture_view`]).
    pub fn texture_view(&self, h: TextureHandle) -> Option<(&wgpu::TextureView, u64)> {
        self.streamer.texture_view(h)
    }

    /// The render-target bytes of every scale bucket at the last frame's output size, as the
    /// planner priced them (ascending scale); `u64::MAX` for a bucket whose targets would pass
    /// the device's largest texture (never planned).
    pub fn scale_buckets(&self) -> &[BucketCost] {
        &self.buckets
    }

    /// The render targets at the current scale, once a frame has made them.
    pub fn targets(&self) -> Option<&Targets> {
        self.targets.current()
    }

    /// Frees the render targets (they are made again by the next frame).
    pub fn release_targets(&mut self) {
        self.targets.release();
    }

    /// Removes every texture (their memory freed at once) and frees the render targets.
    pub fn clear(&mut self) {
        // Handles from before name no texture after (their generations are never reused).
        let generations = self.streamer.after_generations();
        self.streamer = Streamer::new(self.config.stream.clone());
        self.streamer.start_generations_at(generations);
        self.demand_frame.clear();
        self.demanded.0.clear();
        self.demanded.1.clear();
        self.check_every_texture();
        self.targets.release();
        self.planner.invalidate();
    }

    /// The planner's per-texture view (demand and residency), for reports.
    pub fn plan_textures(&self) -> &PlanTextures {
        self.streamer.plan_textures()
    }

    /// Takes the IO workers' finished reads and releases upload staging the GPU has finished,
    /// without planning (a loading screen's loop, or a test's). Never blocks, except with
    /// [`StreamConfig::deterministic`] streaming (which waits for the reads asked and for the
    /// GPU, by design). The last frame's streaming figures are kept.
    pub fn poll(&mut self) {
        let _managed = ManagedScope::enter();
        self.streamer.poll(&self.ctx);
    }

    /// Counts a frame that drew nothing (a 0x0 output): frame numbers stay those of the caller.
    pub fn skip_frame(&mut self) -> u64 {
        // Nothing of its own to end: it is ended when the frame before it was.
        let ended = self.ended_frame == self.frame;
        self.frame += 1;
        if ended {
            self.ended_frame = self.frame;
        }
        // The demand given for it is over with it, as a frame's is (and the lists of textures
        // given demand stay the size of one frame's, however long a game skips).
        self.expire_demand(None);
        self.frame
    }

    /// The streaming and resolution half of a frame at an `output` size (see the module
    /// documentation): plan under the budget with the demand given since the last frame,
    /// execute the transitions, make the render targets at the chosen scale, stream. Then
    /// draw with [`BudgetManager::texture_view`] and [`BudgetManager::targets`], and call
    /// [`BudgetManager::end_frame`] after the frame's last submit.
    ///
    /// The demand is consumed: give it again before the next frame (until then, the streamer's
    /// figures, [`Streamer::wanted_bytes`] and [`Streamer::texture_infos`], show this frame's).
    ///
    /// A 0x0 `output` (a minimised window) plans for the last output that was not empty (1x1
    /// before the first), so the
    /// render targets and the textures stay as they were instead of the textures taking the
    /// targets' bytes until the window comes back ([`BudgetManager::skip_frame`] is the cheaper
    /// call for a frame that draws nothing). A frame left without `end_frame` is ended when the
    /// next one starts (its work is submitted by then), so that its staging still comes back.
    pub fn frame(&mut self, output: (u32, u32), timing: FrameTiming) -> Result<FramePlan> {
        let _managed = ManagedScope::enter();
        if self.frame > self.ended_frame {
            if !self.end_missed && self.frame > 0 {
                tracing::warn!(
                    frame = self.frame,
                    "BudgetManager::end_frame was not called after the frame's last submit; \
                     ended when the next frame starts"
                );
                self.end_missed = true;
            }
            self.end_frame();
        }
        let output = if output.0 == 0 || output.1 == 0 {
            if self.last_output == (0, 0) {
                // Minimised from the start: nothing to size the targets by yet. Planned as
                // a 1x1 output (targets of a few bytes), remade at the first real size.
                (1, 1)
            } else {
                self.last_output
            }
        } else {
            self.last_output = output;
            output
        };
        self.apply_controls();
        self.frame += 1;
        self.expire_demand(Some(output));
        self.apply_required();
        let frame = self.frame;
        let planned = self.plan_and_stream(frame, output, timing);
        if planned.is_ok() {
            self.note_controls();
        }
        if planned.is_err() {
            // What the transitions before the error left to upload (evictions' floors, bands
            // recorded) goes to the GPU now: a texture they write may be drawn, or destroyed,
            // before the next frame's.
            let budget = self.streamer.plan_budget();
            self.streamer.fill_evicted_floors(&self.ctx, budget);
            self.streamer.submit_uploads(&self.ctx, frame);
            // The caller has an error to handle, not a frame to end: ended here.
            self.end_open_frame();
        }
        planned
    }

    /// The next plan checks every texture for changes (see `plan_dirty`).
    fn check_every_texture(&mut self) {
        if let Some(mut d) = self.plan_dirty.take() {
            d.clear();
            self.plan_dirty_spare = d;
        }
    }

    fn plan_and_stream(
        &mut self,
        frame: u64,
        output: (u32, u32),
        timing: FrameTiming,
    ) -> Result<FramePlan> {
        let ledger = self.ctx.ledger().clone();
        self.refresh_buckets(output);
        self.fit_buckets(output)?;
        self.streamer.ensure_fallback(&self.ctx)?;
        self.streamer.begin_frame(&self.ctx);
        if self.streamer.take_changed() {
            self.planner.invalidate();
            self.check_every_texture();
        }
        // Plan.
        let (budget, effective, moved) = self.budget.at_frame(frame);
        if moved {
            self.planner.invalidate();
        }
        // Fixed: every byte on the ledger but the manager's own streamed textures, render
        // targets and staging, which the plan and its headroom account. So the caller's own
        // allocations count whatever their category: its buffers, its targets, textures it
        // made (added resident or not) and its staging.
        let snap = ledger.snapshot();
        let fixed = [
            Category::Textures,
            Category::RenderTargets,
            Category::Staging,
        ]
        .into_iter()
        .fold(snap.total_bytes, |f, c| {
            f.saturating_sub(ledger.managed_bytes(c))
        })
        .saturating_add(self.room);
        // Staging headroom, between the planner's limit and the budget: 1/16 of the budget (at
        // least 256 KiB, at most the per-frame upload cap). Uploads go in bands of rows that fit
        // the room under the budget, so no level needs more: a smaller headroom only streams a
        // large level over more frames, while every byte of it is one texture bytes lack.
        let headroom = (effective / 16)
            .max(256 << 10)
            .min(self.config.stream.upload_bytes_per_frame.max(64 << 10));
        let fell = effective < self.streamer.plan_budget();
        self.streamer.prepare_plan(frame, effective, headroom);
        // The textures whose records changed since the last plan: those given demand or whose
        // demand expired (`expire_demand` listed them) and those the streamer changed; or
        // every texture.
        let dirty = match self.plan_dirty.take() {
            Some(mut d) => {
                self.streamer.take_touched(&mut d);
                Some(d)
            }
            None => {
                // The streamer's list is dropped (every texture is checked); the buffer kept.
                self.streamer.take_touched(&mut self.plan_dirty_spare);
                self.plan_dirty_spare.clear();
                None
            }
        };
        let t0 = Instant::now();
        let input = PlanInput {
            frame,
            budget: effective,
            fixed_bytes: fixed,
            headroom,
            output_pixels: u64::from(output.0) * u64::from(output.1),
            buckets: &self.buckets,
            current_bucket: self.mem_index,
            textures: self.streamer.plan_textures(),
        };
        let status = match dirty.as_deref() {
            Some(changed) => self
                .planner
                .plan_with_changes(&input, changed, &mut self.plan),
            None => self.planner.plan(&input, &mut self.plan),
        };
        // Every change so far is in this plan's input: the list starts again.
        let mut list = dirty.unwrap_or_else(|| std::mem::take(&mut self.plan_dirty_spare));
        list.clear();
        self.plan_dirty = Some(list);
        self.streamer
            .note_planner_time(t0.elapsed().as_secs_f32() * 1e6);
        if !self.plan.transitions.is_empty() {
            tracing::debug!(frame, budget = effective, transitions = ?self.plan.transitions, bucket = self.plan.bucket, "plan");
        }

        // Execute the plan's transitions in order (the executor contract). When the budget fell
        // below the usage, the frame's window starts once the drops have brought the total under
        // it (see `Ledger::restart_window`).
        let mut within = ledger.total_bytes() <= effective;
        if within && fell && ledger.window_peak() > effective {
            // The budget fell this frame and the staging ring, sized for the new headroom in
            // `prepare_plan`, already brought the total under it: what the window saw before
            // belongs to the old budget, as when the drops below bring it under.
            ledger.restart_window();
        }
        for i in 0..self.plan.transitions.len() {
            let t = self.plan.transitions[i];
            if t.kind == TransitionKind::Rescale && !self.config.render_targets {
                // No targets of ours: one bucket of zero bytes, nothing to rescale.
            } else if t.kind == TransitionKind::Rescale {
                self.mem_index = usize::from(t.to).min(self.buckets.len().saturating_sub(1));
                let mem_bucket = self.range.at(self.mem_index);
                if self
                    .targets
                    .current()
                    .is_some_and(|c| c.bucket() > mem_bucket)
                {
                    self.set_targets_within_memory(output, mem_bucket)?;
                }
            } else {
                self.streamer.apply(&self.ctx, t);
            }
            if !within && ledger.total_bytes() <= effective {
                ledger.restart_window();
                within = true;
            }
        }
        // The evictions' floors, together (within the budget: `write_texture` past it).
        self.streamer.fill_evicted_floors(&self.ctx, effective);
        if !within {
            // Every drop is done and the total is still above the budget: what is left is
            // upload staging the GPU holds (a budget far below what was in use, while uploads
            // were under way). Wait for the GPU on this rare path, and free it.
            self.streamer.release_staging(&self.ctx);
            if ledger.total_bytes() <= effective {
                ledger.restart_window();
            }
        }
        let limit = self.plan.limit;

        let mem_bucket = self.range.at(self.mem_index);
        let changes = self.controller.change_count();
        let bucket = self.decide_scale(output, mem_bucket, budget, fixed, timing)?;

        // Grows whose data arrived, within the caps and the limit.
        let effective = self.budget.effective(budget);
        // The render targets the plan counted at its memory bucket and the controller has not
        // made yet (it holds a lower scale, or raises it a step at a time): their bytes are
        // kept free for them. Without this, staging took them while the scale was low, and
        // the frame the scale rose passed the budget (an open world under pressure:
        // `examples/open_world.rs`, 2 frames in 2 of 10 runs).
        let planned_targets = self.buckets.get(self.mem_index).map_or(0, |b| b.bytes);
        let made_targets = self.targets.current().map_or(0, |t| t.bytes());
        let reserve = if self.config.render_targets {
            planned_targets.saturating_sub(made_targets)
        } else {
            0
        };
        let (limit, effective) = (
            limit.saturating_sub(reserve),
            effective.saturating_sub(reserve),
        );
        self.streamer.issue_io(
            &self.ctx,
            effective,
            self.plan.peak_bytes.max(self.plan.steady_bytes),
        );
        self.streamer
            .build_ready(&self.ctx, frame, limit, effective);
        if let Some(total) = self.streamer.take_out_of_memory() {
            // The next plan evicts down to the new limit (the cap less the staging headroom)
            // and retries the texture if it is still worth its bytes.
            self.budget.note_out_of_memory(frame, total);
            self.planner.invalidate();
        }
        // The bias of the scale the targets really have (at a tiny output, not the bucket's).
        let mip_bias = match self.targets.current() {
            Some(t) if self.config.render_targets => t.mip_bias(),
            _ => bucket.mip_bias(),
        };
        Ok(FramePlan {
            frame,
            budget_bytes: budget,
            status,
            bucket,
            memory_bucket: mem_bucket,
            render_scale: bucket.scale(),
            mip_bias,
            scale_reason: (self.controller.change_count() > changes)
                .then(|| self.controller.last_change().map(|c| c.reason))
                .flatten(),
        })
    }

    /// [`Streamer::wanted_bytes`] over the textures that hold demand only: every such texture
    /// was given it for the last frame (the list of the frame before, `demanded.1`) or since
    /// (`demanded.0`), so the other textures (most of an open world) are not read. A texture
    /// in both lists was given demand again since: counted from the second.
    pub fn wanted_bytes(&self) -> (u64, u64) {
        let (since, last) = (&self.demanded.0, &self.demanded.1);
        let again = |i: u32| self.demand_frame.get(i as usize) == Some(&(self.frame + 1));
        let (a, b) = self.streamer.wanted_bytes_of(since.iter().copied());
        let (c, d) = self
            .streamer
            .wanted_bytes_of(last.iter().copied().filter(|&i| !again(i)));
        (a + c, b + d)
    }

    /// The frame's figures for the overlay panels and reports, once the frame is drawn (after
    /// [`BudgetManager::end_frame`]): the ledger, its peak inside the frame (taken: the next
    /// frame's window starts), the scales, streaming, the planner's figures. `instances_drawn`
    /// is 0: the caller fills what it knows of its own draw.
    pub fn frame_stats(&mut self, plan: &FramePlan, timing: FrameTiming) -> FrameStats {
        let (have, want) = self.wanted_bytes();
        let ledger = self.ctx.ledger();
        FrameStats {
            frame: plan.frame,
            budget_bytes: plan.budget_bytes,
            oom_cap_bytes: self.budget.oom_cap(),
            ledger: ledger.snapshot(),
            frame_peak_bytes: ledger.take_window_peak(),
            render_scale: plan.render_scale,
            memory_scale: plan.memory_bucket.scale(),
            stream: *self.streamer.frame_stats(),
            budget_too_small: matches!(plan.status, PlanStatus::BudgetTooSmall { .. }),
            floor_bytes: self.plan.floor_bytes,
            quality_cost: self.plan.quality_cost,
            resident_mip_bytes: have,
            wanted_mip_bytes: want,
            target_mip_bytes: self.target_mip_bytes(),
            unmet_required: self.unmet_required(),
            cpu_frame_ms: timing.cpu_ms,
            gpu_frame_ms: timing.gpu_ms,
            instances_drawn: 0,
            skipped: false,
            feedback: Default::default(),
            scale_reason: plan.scale_reason,
            blur_pixel_octaves: 0.0,
        }
    }

    /// Call after the frame's last submit: the frame's upload staging is released once the GPU
    /// has finished it.
    pub fn end_frame(&mut self) {
        let _managed = ManagedScope::enter();
        self.ended_frame = self.frame;
        self.streamer.end_frame(&self.ctx, self.frame);
    }

    /// Ends the last frame if it was not ended, without the missed-`end_frame` warning: for a
    /// caller whose frame failed after [`BudgetManager::frame`] (the `Renderer`'s error paths).
    pub(crate) fn end_open_frame(&mut self) {
        if self.frame > self.ended_frame {
            self.end_frame();
        }
    }

    /// The driver ran out of memory for a creation of the manager's (or of the caller's, who
    /// reports it here): the effective budget is lowered to what the driver gave, the ledger's
    /// total now; counted in the frame's `oom_events`.
    pub fn note_out_of_memory(&mut self, e: &Error) {
        tracing::warn!(error = %e, "out of GPU memory");
        let total = self.ctx.ledger().total_bytes();
        self.budget.note_out_of_memory(self.frame, total);
        self.streamer.count_out_of_memory();
        self.planner.invalidate();
    }
}
