//! A frame's start and end, and the residency transitions of a plan: evictions, shrinks (GPU
//! copies), the start of a grow, retargets; errors and the driver's out-of-memory.

use super::*;

impl Streamer {
    /// Starts a frame: its figures start again, and [`Streamer::poll`].
    pub(crate) fn begin_frame(&mut self, ctx: &GpuContext) {
        self.frame_stats = StreamStats::default();
        self.poll(ctx);
    }

    /// Releases staging whose uploads the GPU has finished, and takes the IO workers' finished
    /// reads. Never blocks, except in deterministic mode (which waits for the reads asked and
    /// for the GPU, by design).
    pub(crate) fn poll(&mut self, ctx: &GpuContext) {
        if self.touched.len() > 2 * self.slots.len() + 1024 {
            // Not taken for many frames (a loading screen polling without plans): the next
            // plan checks every texture instead, and the list stops growing.
            self.touched.clear();
            self.changed = true;
        }
        if self.config.deterministic
            && (self.ring.busy() || !self.staging.is_empty() || ctx.hidden_staging_pending())
        {
            // Staging chunks, the floor tails' `write_texture` copies and a helper's hidden
            // staging come back when the GPU is done with them: waiting for it keeps the
            // upload pace and the ledger the same on every run (deterministic mode blocks on
            // IO anyway).
            let _ = ctx.wait_idle();
        } else {
            let _ = ctx.device().poll(wgpu::PollType::Poll);
        }
        ctx.release_done_staging();
        let done = self.completed_frame.load(Ordering::Acquire);
        self.staging.retain(|(f, _)| *f > done);
        self.ring.recycle(done);
        if self.config.deterministic && self.ring.busy() {
            let _ = ctx.wait_idle(); // the chunks' mapping completes
        }
        loop {
            let r = if self.config.deterministic && self.outstanding > 0 {
                self.io.wait_result()
            } else {
                self.io.try_result()
            };
            let Some(r) = r else { break };
            self.outstanding = self.outstanding.saturating_sub(1);
            self.take_result(r);
        }
        // The build order does not depend on the order reads finish in: `build_ready` sorts.
        // A kept read in staging holds a chunk of the ring: kept only a few frames (the camera
        // turning back at once), so that the ring's chunks come back.
        let frame = self.frame;
        let before = self.reuse.len();
        self.reuse.retain(|c| {
            frame.saturating_sub(c.at) <= STAGED_REUSE_FRAMES
                || !c.data.iter().any(LevelData::staged)
        });
        if self.reuse.len() != before {
            self.reuse_bytes = self.reuse.iter().map(|c| c.bytes).sum();
        }
    }

    /// Takes one finished read: its data for its grow, if the grow still wants it.
    fn take_result(&mut self, r: io::IoResult) {
        if matches!(r.levels, Err(io::ReadError::Cancelled)) {
            return;
        }
        let Some(slot) = self.slots.get_mut(r.slot as usize) else {
            return;
        };
        if !slot.alive || slot.generation != r.generation {
            return;
        }
        let Some(f) = slot.inflight.as_mut() else {
            return;
        };
        if !Arc::ptr_eq(&f.cancel, &r.cancel) || f.cancel.load(Ordering::Acquire) {
            return;
        }
        match r.levels {
            Ok(levels) => {
                f.data = Some(levels);
                self.ready.push(r.slot);
            }
            Err(e) => {
                // Keep what the texture has; report; the planner may ask again later.
                tracing::warn!(texture = %slot.label, error = %e, "streaming read failed");
                slot.error = Some(e.to_string());
                slot.inflight = None;
                // Why a back-off: a corrupt file stays corrupt; retrying every frame would
                // spend IO on it forever. A transient error (a file briefly missing, a
                // share that dropped) heals after the back-off; a file replaced since the
                // texture was registered does not (its stamp differs): register it again.
                slot.backoff_until = self.frame + READ_RETRY_FRAMES;
                note_backoff(&mut self.backing_off, r.slot);
                self.touched.push(r.slot);
                let p = &mut self.plan_tex[r.slot as usize];
                p.busy = false;
                p.in_flight_level = p.resident_level;
                self.frame_stats.io_errors += 1;
            }
        }
    }

    /// Readies a plan at `frame` under the effective `budget` with `headroom` bytes for staging:
    /// sizes the staging ring from the headroom and holds back textures that are backing off
    /// after a failed read. The planner runs next, over [`Streamer::plan_textures`].
    pub(crate) fn prepare_plan(&mut self, frame: u64, budget: u64, headroom: u64) {
        self.frame = frame;
        self.plan_budget = budget;
        // The staging ring lives in the headroom: four chunks of a quarter of it (64 KiB to
        // 4 MiB each), so uploads can go on while earlier chunks are in the GPU's hands. When
        // the budget has room to spare (textures still coming in), more chunks, up to the
        // frame's upload cap, freed as soon as a frame does not need them.
        // A power of two: a budget that moves a little every frame (a driver's memory-budget
        // figure) must not change the chunk size, which would drop and remake the chunks.
        let chunk = (headroom / 4).clamp(64 << 10, 4 << 20);
        let chunk = 1u64 << (63 - chunk.leading_zeros());
        let burst =
            (self.config.upload_bytes_per_frame.saturating_mul(2) / chunk).clamp(4, 256) as usize;
        self.ring.set_size(chunk, 4, burst);
        let (slots, plan_tex, touched) = (&self.slots, &mut self.plan_tex, &mut self.touched);
        self.backing_off.retain(|&i| {
            let k = i as usize;
            match (slots.get(k), plan_tex.get_mut(k)) {
                (Some(s), Some(p)) if s.backoff_until > frame => {
                    touched.push(i);
                    // Do not ask for levels finer than those it has while backing off.
                    p.wanted_level = p.wanted_level.max(f32::from(p.resident_level));
                    true
                }
                // Over (or the slot holds another texture now, whose `backoff_until` is 0).
                _ => false,
            }
        });
    }

    /// The effective budget of the last plan (`u64::MAX` before the first).
    pub(crate) fn plan_budget(&self) -> u64 {
        self.plan_budget
    }

    /// Counts the planner's time in this frame's figures.
    pub(crate) fn note_planner_time(&mut self, us: f32) {
        self.frame_stats.planner_us = us;
    }

    /// Executes one texture transition of the last plan (not a `Rescale`, which belongs to the
    /// render targets). Shrinks are submitted at once and the old texture destroyed, so that one
    /// old-and-new pair at most is alive. A failure leaves the texture as it was.
    pub(crate) fn apply(&mut self, ctx: &GpuContext, t: Transition) {
        let i = t.texture as usize;
        if i >= self.slots.len() || !self.slots[i].alive {
            return;
        }
        if t.kind == TransitionKind::Grow && self.retarget(i, t.to) {
            return;
        }
        if t.kind != TransitionKind::Rescale && self.abort_step(i) {
            // The plan changed the texture while a step of its grow was uploading: that step is
            // dropped (its new texture destroyed), and so is the grow.
            if let Some(f) = self.slots[i].inflight.take() {
                f.cancel.store(true, Ordering::Release);
            }
            self.end_grow(i);
            if t.kind == TransitionKind::Cancel {
                self.frame_stats.cancels += 1;
                self.frame_stats.cancels_after_arrival += 1;
                return;
            }
        }
        match t.kind {
            TransitionKind::Rescale => {}
            TransitionKind::Cancel => {
                if let Some(mut f) = self.slots[i].inflight.take() {
                    f.cancel.store(true, Ordering::Release);
                    if f.arrived() {
                        self.frame_stats.cancels_after_arrival += 1;
                        if let Some(data) = f.data.take() {
                            self.keep_read(i, f.to, data);
                        }
                    }
                }
                self.ready.retain(|&r| r as usize != i);
                self.touched.push(i as u32);
                let p = &mut self.plan_tex[i];
                p.busy = false;
                p.in_flight_level = p.resident_level;
                self.frame_stats.cancels += 1;
            }
            TransitionKind::Evict => {
                let count = self.plan_tex[i].level_count;
                let floor = self.plan_tex[i].floor_level;
                let before = self.plan_tex.bytes_from(i, self.plan_tex[i].resident_level);
                // Destroyed first, no transient bytes (unless kept for frames in flight).
                let old = self.slots[i].gpu.take();
                self.drop_resident(old);
                let to = if t.to >= count { count } else { floor };
                let mut resident = count;
                if to < count {
                    // Its floor data is uploaded with the other evictions' once the frame's
                    // transitions are done (`fill_evicted_floors`).
                    match Self::create_unfilled(ctx, &self.slots[i], to) {
                        Ok(r) => {
                            self.slots[i].gpu = Some(r);
                            resident = to;
                            self.evicted_floors.push(i as u32);
                        }
                        Err(e) => self.note_create_error(ctx, i, &e),
                    }
                }
                self.touched.push(i as u32);
                let p = &mut self.plan_tex[i];
                p.resident_level = resident;
                p.in_flight_level = resident;
                self.frame_stats.evictions += 1;
                let after = self.plan_tex.bytes_from(i, resident);
                self.frame_stats.freed_bytes += before.saturating_sub(after);
            }
            TransitionKind::Shrink => {
                let from = self.plan_tex[i].resident_level;
                if t.to <= from || t.to >= self.plan_tex[i].level_count {
                    return;
                }
                // The smaller copy is built while the old texture is alive. The planner counted
                // that against its limit, but not the upload staging the GPU has not released
                // yet (it lives in the headroom, and a previous frame's may still be there): if
                // the copy would pass the budget, it waits a frame (the plan asks again).
                let total = ctx.ledger().total_bytes();
                let during = total.saturating_add(self.plan_tex.bytes_from(i, t.to));
                if total <= self.plan_budget && during > self.plan_budget {
                    self.frame_stats.deferred += 1;
                    return;
                }
                match self.rebuild(ctx, i, t.to, from) {
                    Ok(()) => {
                        self.frame_stats.shrinks += 1;
                        let p = &self.plan_tex;
                        self.frame_stats.freed_bytes +=
                            p.bytes_from(i, from).saturating_sub(p.bytes_from(i, t.to));
                    }
                    Err(e) => self.note_create_error(ctx, i, &e),
                }
            }
            TransitionKind::Grow => {
                let from = self.plan_tex[i].resident_level;
                if t.to >= from {
                    return;
                }
                let s = &mut self.slots[i];
                if let Some(f) = s.inflight.take() {
                    f.cancel.store(true, Ordering::Release);
                }
                // From nothing: the floor comes from CPU data; the rest by IO.
                let read_end = from.min(self.plan_tex[i].floor_level);
                mark_inflight(&mut self.inflight_bits, i);
                s.inflight = Some(InFlight {
                    to: t.to,
                    from,
                    cancel: Arc::new(AtomicBool::new(false)),
                    queued: false,
                    data: if t.to >= read_end {
                        Some(Vec::new())
                    } else {
                        None
                    },
                    staged: false,
                    issued: self.frame,
                    reserved: None,
                });
                if t.to >= read_end {
                    self.ready.push(i as u32);
                }
                self.touched.push(i as u32);
                let p = &mut self.plan_tex[i];
                p.busy = true;
                p.in_flight_level = t.to;
            }
        }
    }

    /// Keeps the levels `first..` read for texture `i`'s cancelled grow for a later grow
    /// (oldest dropped first, within [`StreamConfig::reuse_cache_bytes`]).
    pub(super) fn keep_read(&mut self, i: usize, first: u8, data: Vec<LevelData>) {
        let bytes: u64 = data.iter().map(LevelData::len).sum();
        let limit = self.config.reuse_cache_bytes;
        if bytes == 0 || bytes > limit {
            return;
        }
        // One entry a texture: the newest read replaces an older one.
        self.drop_read(i);
        while self.reuse_bytes + bytes > limit && !self.reuse.is_empty() {
            let old = self.reuse.remove(0);
            self.reuse_bytes -= old.bytes;
        }
        self.reuse.push(CachedRead {
            slot: i as u32,
            generation: self.slots[i].generation,
            first,
            data,
            bytes,
            at: self.frame,
        });
        self.reuse_bytes += bytes;
    }

    /// Forgets texture `i`'s kept read, if any.
    pub(super) fn drop_read(&mut self, i: usize) {
        if let Some(k) = self.reuse.iter().position(|c| c.slot as usize == i) {
            let old = self.reuse.remove(k);
            self.reuse_bytes -= old.bytes;
        }
    }

    /// Levels `first..end` of texture `i` from a kept read that holds them all (taken out of
    /// the cache), if there is one of this texture's current generation.
    pub(super) fn take_read(&mut self, i: usize, first: u8, end: u8) -> Option<Vec<LevelData>> {
        let k = self.reuse.iter().position(|c| c.slot as usize == i)?;
        let c = &self.reuse[k];
        let fits = c.generation == self.slots[i].generation
            && c.first <= first
            && usize::from(end - c.first) <= c.data.len()
            && first < end;
        if !fits {
            return None;
        }
        let c = self.reuse.remove(k);
        self.reuse_bytes -= c.bytes;
        let skip = usize::from(first - c.first);
        Some(
            c.data
                .into_iter()
                .skip(skip)
                .take(usize::from(end - first))
                .collect(),
        )
    }

    /// Bytes of level data requested from the IO workers and not yet built, held against
    /// [`StreamConfig::cpu_io_limit`].
    pub fn io_held_bytes(&self) -> u64 {
        self.io_held.load(Ordering::Relaxed)
    }

    /// Bytes of levels kept from cancelled grows (see [`StreamConfig::reuse_cache_bytes`]).
    pub fn reuse_cache_bytes(&self) -> u64 {
        self.reuse_bytes
    }

    /// A `Grow` on a busy texture: its grow goes on to the finer level `to`. What it has read, and
    /// a step under way, stay; the finer levels are read with the others if their read was not
    /// queued yet, else once the levels in flight have landed (see `finish_step`). Returns
    /// false when the texture has no such grow (the `Grow` then starts afresh).
    pub(super) fn retarget(&mut self, i: usize, to: u8) -> bool {
        self.touched.push(i as u32);
        let p = &mut self.plan_tex[i];
        let Some(f) = self.slots[i].inflight.as_mut() else {
            return false;
        };
        if !p.busy || to >= p.in_flight_level || f.from != p.resident_level {
            return false;
        }
        p.in_flight_level = to;
        let stepping = self.step.as_ref().is_some_and(|st| st.slot as usize == i);
        if !f.queued && f.data.is_none() {
            f.to = to;
        } else if f.queued && f.data.is_none() && !stepping {
            // Its read has not landed: asked again for the whole range at once (the old read is
            // cancelled, its answer dropped). Why not wait for it and read the finer levels
            // after: that costs a frame more, and a moving camera wants the finer levels of
            // what it approaches now (a fly-by's nearest panels were a level short).
            f.cancel.store(true, Ordering::Release);
            f.cancel = Arc::new(AtomicBool::new(false));
            f.queued = false;
            // Its answer will be dropped: its bytes are no longer held.
            f.reserved = None;
            f.to = to;
        }
        self.frame_stats.retargets += 1;
        true
    }

    /// After a budget drop whose transitions left the total above the budget: the upload
    /// staging still held for the GPU is what is left over it. Waits for the GPU (this rare path
    /// only: a drop of the budget below what is in use), then frees the staging it held, the
    /// ring's free chunks included (the next uploads make chunks sized for the new headroom).
    /// Returns at once when no staging is held (a budget below the floors leaves the total
    /// above it every frame: nothing of staging's to wait for then).
    pub(crate) fn release_staging(&mut self, ctx: &GpuContext) {
        if self.staging.is_empty() && self.ring.bytes() == 0 {
            return;
        }
        if self.ring.lent_chunks() > 0 {
            self.drop_staged_reads(true);
        }
        if !self.staging.is_empty() || self.ring.busy() {
            let _ = ctx.wait_idle();
        }
        let done = self.completed_frame.load(Ordering::Acquire);
        self.staging.retain(|(f, _)| *f > done);
        self.ring.recycle(done);
        self.ring.free_unused();
    }

    /// Gives back every chunk lent to reads straight into staging: their grows are cancelled (the
    /// planner asks again; the reads are made again, into the ring only where it has room), and
    /// the cancelled requests still queued or being read are waited for, at most
    /// `STAGED_RELEASE_WAIT` (a worker checks the flag before each level; a chunk whose read is
    /// slower comes back once it is answered) when `wait`: on [`Streamer::release_staging`]'s
    /// rare path, which waits for the GPU anyway. Without `wait` (a step starved of bands, on the
    /// frame path) the chunks come back as the cancelled reads are answered in later frames;
    /// deterministic runs wait either way, so that their reports do not depend on timing.
    pub(super) fn drop_staged_reads(&mut self, wait: bool) {
        if self
            .step
            .as_ref()
            .is_some_and(|st| st.data.iter().any(LevelData::staged))
            && let Some(st) = self.step.take()
        {
            self.retire(st.tex);
            self.end_grow(st.slot as usize);
        }
        let stepping = self.step.as_ref().map(|st| st.slot as usize);
        for i in 0..self.slots.len() {
            if stepping == Some(i) {
                continue; // its data is on the CPU (a staged step was dropped above)
            }
            let Some(f) = self.slots[i].inflight.as_mut() else {
                continue;
            };
            let staged_data = f
                .data
                .as_ref()
                .is_some_and(|d| d.iter().any(LevelData::staged));
            let staged_read = f.staged && f.queued && f.data.is_none();
            if staged_data || staged_read {
                f.cancel.store(true, Ordering::Release);
                f.cancel = Arc::new(AtomicBool::new(false));
                f.queued = false;
                f.staged = false;
                f.data = None;
                f.reserved = None;
                self.ready.retain(|&r| r as usize != i);
            }
        }
        self.reuse.retain(|c| !c.data.iter().any(LevelData::staged));
        self.reuse_bytes = self.reuse.iter().map(|c| c.bytes).sum();
        if !wait && !self.config.deterministic {
            return;
        }
        let t0 = Instant::now();
        while self.ring.leases_out() && self.outstanding > 0 {
            let left = STAGED_RELEASE_WAIT.saturating_sub(t0.elapsed());
            let r = if self.config.deterministic {
                self.io.wait_result()
            } else if left.is_zero() {
                break;
            } else {
                self.io.wait_result_for(left)
            };
            let Some(r) = r else { break };
            self.outstanding = self.outstanding.saturating_sub(1);
            self.take_result(r);
        }
        tracing::debug!(
            waited_ms = t0.elapsed().as_secs_f32() * 1e3,
            held = self.ring.leases_out(),
            "staging lent to reads given back"
        );
    }

    /// Call after the frame's last submit: the frame's staging is released once the GPU has
    /// finished it.
    pub(crate) fn end_frame(&mut self, ctx: &GpuContext, frame: u64) {
        if self.staging.is_empty()
            && !self.ring.busy()
            && self.ring.submitted_frame() <= self.callback_frame
        {
            // Nothing of this frame's waits for the GPU (a steady view uploads nothing; a
            // chunk held for a step was tagged with a frame that has its callback): no
            // callback to box. A later frame's, once it fires, covers this one too.
            return;
        }
        self.callback_frame = frame;
        let done = self.completed_frame.clone();
        ctx.queue().on_submitted_work_done(move || {
            done.fetch_max(frame, Ordering::AcqRel);
        });
    }

    pub(super) fn note_create_error(&mut self, ctx: &GpuContext, i: usize, e: &Error) {
        self.slots[i].error = Some(e.to_string());
        if let Error::OutOfMemory { .. } = e {
            // The next plan evicts down to the new limit (the cap less the staging headroom)
            // and retries the texture if it is still worth its bytes: no back-off, the cap is
            // what keeps it from failing again.
            tracing::warn!(texture = %self.slots[i].label, error = %e, "out of GPU memory");
            let total = ctx.ledger().total_bytes();
            self.note_out_of_memory_at(total);
            self.frame_stats.oom_events += 1;
            return;
        }
        tracing::warn!(texture = %self.slots[i].label, error = %e, "texture transition failed");
        // Same back-off as a failed read: a transition that failed for another reason (a driver
        // refusing a size) would fail again if retried every frame.
        self.slots[i].backoff_until = self.frame + READ_RETRY_FRAMES;
        note_backoff(&mut self.backing_off, i as u32);
    }

    /// Rebuilds texture `i` smaller, with levels `to..` (`to > from`): every level is copied from
    /// the old texture GPU-side. Submits, then destroys the old texture.
    pub(super) fn rebuild(&mut self, ctx: &GpuContext, i: usize, to: u8, from: u8) -> Result<()> {
        let slot = &self.slots[i];
        let count = self.plan_tex[i].level_count;
        let Some(old) = slot.gpu.as_ref().filter(|_| to > from && to < count) else {
            return Err(Error::InvalidResource {
                label: slot.label.clone(),
                reason: format!("no resident levels {from}.. to shrink to {to}.."),
            });
        };
        let desc = Self::texture_desc(&slot.info, to, count, &slot.label);
        let tex = ctx.create_texture(&desc, Category::Textures)?;
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("stream shrink"),
            });
        copy_levels(
            &mut enc,
            &slot.info,
            old.tex.texture(),
            from,
            tex.texture(),
            to,
        );
        ctx.queue().submit([enc.finish()]);
        // Old texture destroyed now that the copy is submitted (wgpu frees it when the GPU is done).
        let old = self.slots[i].gpu.replace(Resident::new(tex));
        self.drop_resident(old);
        self.plan_tex[i].resident_level = to;
        self.touched.push(i as u32);
        Ok(())
    }
}

/// Lists slot `i` among those backing off (once).
fn note_backoff(list: &mut Vec<u32>, i: u32) {
    if !list.contains(&i) {
        list.push(i);
    }
}

/// Sets slot `i`'s bit in [`Streamer`]'s `inflight_bits` (grows with the slot count only).
fn mark_inflight(bits: &mut Vec<u64>, i: usize) {
    let w = i / 64;
    if w >= bits.len() {
        bits.resize(w + 1, 0);
    }
    bits[w] |= 1 << (i % 64);
}
