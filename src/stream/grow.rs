//! The grow scheduler: IO requests, and grows built one level at a time, smallest first, within
//! the frame's upload caps and the room under the budget.

use super::*;

impl Streamer {
    /// Queues the reads of every grow still waiting for data (never blocks: a full queue is
    /// retried next frame). A read that fits a chunk of the staging ring is made straight into
    /// it ([`StreamConfig::staged_reads`]) only while the budget has room to spare beyond the
    /// plan: `peak` is the highest total the plan's transitions reach (the planner's
    /// `peak_bytes`, old and new textures of the grows alive together). Why: a lent chunk is
    /// held until its levels are built, and under a budget the plan fills, the banded uploads
    /// of the other grows would wait for it.
    pub(crate) fn issue_io(&mut self, ctx: &GpuContext, budget: u64, peak: u64) {
        let budget = self.oom_at.map_or(budget, |c| c.min(budget));
        // The grows in flight, in slot order: the set bits of `inflight_bits` (a bit whose
        // grow has ended is cleared here).
        let mut pending = 0u32;
        let mut issuing = true;
        for w in 0..self.inflight_bits.len() {
            let mut bits = self.inflight_bits[w];
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let i = w * 64 + b;
                if self.slots.get(i).is_none_or(|s| s.inflight.is_none()) {
                    self.inflight_bits[w] &= !(1 << b);
                    continue;
                }
                pending += 1;
                if issuing {
                    let spare = budget
                        .saturating_sub(peak)
                        .saturating_sub(self.ring.bytes());
                    let room = budget.saturating_sub(ctx.ledger().total_bytes()).min(spare);
                    // A full queue: the later grows wait for the next frame (counted still).
                    issuing = self.issue_read(i, Some((ctx, room)));
                }
            }
        }
        self.frame_stats.pending = pending;
    }

    /// Queues the read of texture `i`'s grow if it waits for data. Returns false when the IO
    /// queue is full or the read must wait for [`StreamConfig::cpu_io_limit`] (nothing queued;
    /// retried next frame, before any later read). `stage`: the context and the room under the
    /// budget for a read straight into staging (none: into a buffer of its own).
    pub(super) fn issue_read(&mut self, i: usize, stage: Option<(&GpuContext, u64)>) -> bool {
        let s = &mut self.slots[i];
        let Some(f) = s.inflight.as_mut() else {
            return true;
        };
        if f.queued || f.data.is_some() {
            return true;
        }
        let (first, end) = (f.to, f.from.min(self.plan_tex[i].floor_level));
        if let Some(levels) = self.take_read(i, first, end) {
            // Read before for a grow that was cancelled: no IO.
            // Held on the CPU until built like a read's data (no limit check: the bytes are
            // already in memory, and waiting would only keep them longer).
            let bytes = levels
                .iter()
                .filter(|l| !l.staged())
                .map(LevelData::len)
                .sum();
            if let Some(f) = self.slots[i].inflight.as_mut() {
                f.queued = true;
                f.staged = false;
                f.data = Some(levels);
                f.reserved = Some(IoReservation::new(bytes, &self.io_held));
            }
            self.ready.push(i as u32);
            self.frame_stats.reused_reads += 1;
            return true;
        }
        // Straight into staging when the levels fit a chunk the ring can lend.
        // (Only while the IO queue surely takes the request: a lease dropped with a refused
        // request would keep its chunk from the bands until the next frame.)
        let queue_room = self.outstanding < self.config.io_queue.max(1);
        let lease = match stage {
            Some((ctx, room))
                if self.config.staged_reads && queue_room && self.ring.may_lend(room) =>
            {
                let info = &self.slots[i].info;
                // On the stack: a read deferred by the CPU limit asks again every frame. More
                // levels than that (no real chain) are read into a buffer of their own.
                let mut rows = [(0u32, 0u32); 32];
                let n = usize::from(end.saturating_sub(first));
                for (k, l) in (first..end).take(rows.len()).enumerate() {
                    let (w, h) = info.level_dims(usize::from(l));
                    rows[k] = upload::level_rows_of(info.format, w, h);
                }
                let lent = match rows.get(..n) {
                    Some(rows) => self.ring.lend(ctx, rows, room),
                    None => Ok(None),
                };
                match lent {
                    Ok(lease) => lease,
                    Err(e) => {
                        tracing::debug!(error = %e, "no staging lent for a read");
                        None
                    }
                }
            }
            _ => None,
        };
        let s = &mut self.slots[i];
        let Some(f) = s.inflight.as_mut() else {
            return true;
        };
        // The CPU side of the read: it waits while the data already held would pass the limit
        // (one read is always allowed; this grow's own earlier read, if retargeted, is not
        // counted against it). A read into staging holds no CPU memory.
        let bytes = if lease.is_some() {
            0
        } else {
            (first..end)
                .map(|l| s.info.level_size(usize::from(l)))
                .fold(0u64, u64::saturating_add)
        };
        let own = f.reserved.as_ref().map_or(0, |r| r.bytes);
        let held = self.io_held.load(Ordering::Relaxed).saturating_sub(own);
        if bytes > 0 && held > 0 && held.saturating_add(bytes) > self.config.cpu_io_limit {
            // No later (smaller) read goes before it this frame: a large read would otherwise
            // wait for ever behind a stream of small ones.
            self.frame_stats.io_deferred += 1;
            return false;
        }
        let req = IoRequest {
            slot: i as u32,
            generation: s.generation,
            first,
            end,
            source: s.source.clone(),
            info: s.info.clone(),
            cancel: f.cancel.clone(),
            staged: lease,
        };
        let staged = req.staged.is_some();
        if self.io.try_request(req) {
            f.queued = true;
            f.staged = staged;
            f.reserved = Some(IoReservation::new(bytes, &self.io_held));
            self.outstanding += 1;
            self.frame_stats.io_requests += 1;
            self.frame_stats.staged_reads += u32::from(staged);
            true
        } else {
            false
        }
    }

    /// Builds grows whose data has arrived, one step at a time: a step adds the next finer level
    /// the texture may start at (see [`PlanTexture::base_levels`]), so the smallest missing
    /// level of each texture comes first and a frame's upload cap is spread over many textures
    /// before any of them gets its largest level. Textures go in order of quality deficit (the
    /// missing octaves times their screen pixels and priority), largest first; then by the
    /// smaller step. Each step is built only when `total + new texture <= limit` and
    /// `total + new texture + its staging <= budget`; one that does not fit waits.
    /// `frame` tags the staging charges, released once the GPU has finished that frame.
    pub(crate) fn build_ready(&mut self, ctx: &GpuContext, frame: u64, limit: u64, budget: u64) {
        let t0 = Instant::now();
        self.build_steps(ctx, frame, limit, budget, t0);
        // The bands recorded this frame go to the GPU before the frame's draw; what they read or
        // wrote may be destroyed after that.
        self.ring.submit(ctx, frame);
        self.clear_retired();
        self.frame_stats.upload_ms = t0.elapsed().as_secs_f32() * 1e3;
    }

    /// Submits the uploads recorded and not yet submitted (a frame that ended in an error
    /// after its transitions), as [`Streamer::build_ready`] does at its end.
    pub(crate) fn submit_uploads(&mut self, ctx: &GpuContext, frame: u64) {
        self.ring.submit(ctx, frame);
        self.clear_retired();
    }

    pub(super) fn build_steps(
        &mut self,
        ctx: &GpuContext,
        frame: u64,
        limit: u64,
        budget: u64,
        t0: Instant,
    ) {
        let budget = self.oom_at.map_or(budget, |c| c.min(budget));
        // The step under way goes first; while it uploads, no other starts.
        if self.step.is_some() && !self.continue_step(ctx, budget, t0) {
            return;
        }
        // Drop requests whose texture changed under them; the planner will ask again.
        let mut k = 0;
        while k < self.ready.len() {
            let i = self.ready[k] as usize;
            let keep = self.slots[i]
                .inflight
                .as_ref()
                .is_some_and(|f| f.from == self.plan_tex[i].resident_level && f.to < f.from);
            if keep {
                k += 1;
                continue;
            }
            self.ready.swap_remove(k);
            self.slots[i].inflight = None;
            self.touched.push(i as u32);
            let p = &mut self.plan_tex[i];
            p.busy = false;
            p.in_flight_level = p.resident_level;
        }
        // Why this order: the deficit is the planner's own measure of blur, so the frame's upload
        // goes where it removes the most; between equals, the cheaper step shows sooner.
        let (plan_tex, slots) = (&self.plan_tex, &self.slots);
        let key = |i: u32| {
            let p = &plan_tex[i as usize];
            let deficit =
                (f32::from(p.resident_level.min(p.floor_level)) - p.wanted_level.max(0.0)).max(0.0);
            let weight = p.screen_pixels.max(0.0) * p.priority.max(0.0) * deficit;
            let to = slots[i as usize].step_target(p);
            let next = Self::next_step(p, p.resident_level, to);
            let i = i as usize;
            let step = plan_tex.bytes_from(i, next) - plan_tex.bytes_from(i, p.resident_level);
            (weight, step)
        };
        self.ready.sort_unstable_by(|&a, &b| {
            let (wa, sa) = key(a);
            let (wb, sb) = key(b);
            wb.total_cmp(&wa).then(sa.cmp(&sb)).then(a.cmp(&b))
        });
        // Passes over the sorted list, one step per texture per pass, while something is built.
        let mut progress = true;
        'passes: while progress {
            progress = false;
            let mut k = 0;
            while k < self.ready.len() {
                let i = self.ready[k] as usize;
                let p = self.plan_tex[i];
                let to = self.slots[i].step_target(&p);
                let from = p.resident_level;
                let next = Self::next_step(&p, from, to);
                let new_bytes = self.plan_tex.bytes_from(i, next);
                let elapsed_ms = t0.elapsed().as_secs_f32() * 1e3;
                let over_time =
                    !self.config.deterministic && elapsed_ms > self.config.upload_ms_per_frame;
                // A cap of 0 still lets the first band of a frame through (as any cap does).
                let uploaded = self.frame_stats.uploaded_bytes;
                if (uploaded > 0 && uploaded >= self.config.upload_bytes_per_frame) || over_time {
                    break 'passes;
                }
                let total = ctx.ledger().total_bytes();
                // The planner's contract: the new texture fits under its limit. The floor tail
                // (from the CPU) is written with the texture; the IO levels go in bands, each
                // only when its staging fits under the budget.
                let floor_upload = if from > p.floor_level {
                    self.plan_tex.bytes_from(i, p.floor_level.max(next))
                } else {
                    0
                };
                // The staging ring lives in the headroom, above the limit: it does not count
                // against the limit, only against the budget.
                let below_headroom = total.saturating_sub(self.ring.bytes());
                let fits = below_headroom.saturating_add(new_bytes) <= limit
                    && total.saturating_add(new_bytes).saturating_add(floor_upload) <= budget;
                if !fits {
                    tracing::debug!(texture = i, total, new_bytes, limit, budget, "grow waits");
                    k += 1;
                    continue;
                }
                // Data read straight into a staging chunk that another read still fills: the
                // copies out of it must wait for that read, so the step waits rather than
                // hold up every other build.
                let staged_waits = self.slots[i]
                    .inflight
                    .as_ref()
                    .and_then(|f| f.data.as_ref())
                    .and_then(|d| {
                        d.iter().find_map(|l| match l {
                            LevelData::Staged(s) => Some(s),
                            LevelData::Cpu(_) => None,
                        })
                    })
                    .is_some_and(|s| !self.ring.staged_ready(s));
                if staged_waits {
                    k += 1;
                    continue;
                }
                progress = true;
                match self.begin_step(ctx, i, next, from, frame) {
                    Ok(()) => {
                        self.frame_stats.uploaded_bytes += floor_upload;
                        if !self.continue_step(ctx, budget, t0) {
                            // Still uploading: nothing else starts this frame.
                            break 'passes;
                        }
                    }
                    Err(e) => {
                        self.note_create_error(ctx, i, &e);
                        self.end_grow(i);
                    }
                }
                if self.frame_stats.oom_events > 0 {
                    // The driver is out of memory: the rest waits for the next plan, made under
                    // the lowered budget, rather than fail the same way.
                    break 'passes;
                }
                // A finished grow left the list (its successor is now at `k`); one with more
                // steps to come waits for the next pass.
                if self.ready.get(k) == Some(&(i as u32)) {
                    k += 1;
                }
            }
        }
    }

    /// Ends texture `i`'s grow (done, or failed): it leaves the ready list and is no longer busy.
    pub(super) fn end_grow(&mut self, i: usize) {
        self.slots[i].inflight = None;
        self.ready.retain(|&r| r as usize != i);
        self.touched.push(i as u32);
        let p = &mut self.plan_tex[i];
        p.busy = false;
        p.in_flight_level = p.resident_level;
    }

    /// Drops the step under way if it is texture `i`'s (its new texture is destroyed; the old one
    /// is still bound). Returns whether there was one.
    pub(super) fn abort_step(&mut self, i: usize) -> bool {
        if self.step.as_ref().is_some_and(|st| st.slot as usize == i) {
            self.step = None;
            true
        } else {
            false
        }
    }

    /// Texture `tex` was replaced this frame: destroyed after the frame's uploads are submitted,
    /// or [`StreamConfig::keep_replaced_frames`](super::StreamConfig::keep_replaced_frames)
    /// frames later.
    pub(super) fn retire(&mut self, tex: TrackedTexture) {
        self.retired.push((self.frame, tex));
    }

    /// A resident texture taken out of its slot (evicted, shrunk, removed): destroyed now, or
    /// kept while frames in flight may still bind its view.
    pub(super) fn drop_resident(&mut self, old: Option<Resident>) {
        if let Some(old) = old
            && self.config.keep_replaced_frames > 0
        {
            self.retire(old.tex);
        }
    }

    /// Destroys the retired textures no frame in flight can bind any more.
    fn clear_retired(&mut self) {
        let keep = u64::from(self.config.keep_replaced_frames);
        let now = self.frame;
        self.retired.retain(|(f, _)| keep > 0 && now < f + keep);
    }

    /// Starts a step of texture `i`'s grow: creates the texture of levels `to..`, copies the
    /// levels the old texture has, writes the floor tail from the CPU, and leaves the IO levels
    /// to [`Streamer::continue_step`].
    pub(super) fn begin_step(
        &mut self,
        ctx: &GpuContext,
        i: usize,
        to: u8,
        from: u8,
        frame: u64,
    ) -> Result<()> {
        let slot = &self.slots[i];
        let count = self.plan_tex[i].level_count;
        let floor = self.plan_tex[i].floor_level;
        let old_first = if slot.gpu.is_some() { from } else { count };
        // IO levels to upload: `to..min(old_first, floor)`, coarsest first; their data must be
        // there before anything is created.
        let top = old_first.min(floor);
        let data_first = slot.inflight.as_ref().map_or(to, |f| f.to);
        let have = slot
            .inflight
            .as_ref()
            .and_then(|f| f.data.as_ref())
            .map_or(0, Vec::len);
        if top > to && (data_first > to || usize::from(top - data_first) > have) {
            return Err(Error::InvalidResource {
                label: slot.label.clone(),
                reason: format!("levels {to}..{top} have no data to upload"),
            });
        }
        let desc = Self::texture_desc(&slot.info, to, count, &slot.label);
        let tex = ctx.create_texture(&desc, Category::Textures)?;
        // The floor tail first (it can fail: then nothing refers to the new texture yet).
        let mut staged = 0u64;
        let mut written = Ok(());
        for level in to.max(floor)..old_first.min(count) {
            let Some(data) = slot.floor_data.get(usize::from(level - floor)) else {
                return Err(Error::InvalidResource {
                    label: slot.label.clone(),
                    reason: format!("floor level {level} has no data"),
                });
            };
            written = upload::write_level(ctx, tex.texture(), u32::from(level - to), data);
            if written.is_err() {
                break;
            }
            staged += upload::staged_bytes(tex.texture(), u32::from(level - to));
        }
        if staged > 0 {
            // queue.write_texture holds a staging copy until the GPU has consumed it (the
            // levels written before an error too). The streamer's frame-tagged charges, not
            // `GpuContext::hold_staging_until_done`: no extra submit or callback per grow.
            let charge = ctx
                .ledger()
                .charge(Category::Staging, staged, "texture upload staging");
            self.staging.push((frame, charge));
        }
        written?;
        // The resident levels are copied in the ring's encoder: ordered after the bands of an
        // earlier step of the same texture (recorded there this frame), before this one's.
        if let Some(old) = &slot.gpu {
            let enc = self.ring.encoder(ctx);
            copy_levels(
                enc,
                &slot.info,
                old.tex.texture(),
                old_first,
                tex.texture(),
                to,
            );
        }
        let data = self.slots[i]
            .inflight
            .as_mut()
            .and_then(|f| f.data.take())
            .unwrap_or_default();
        self.step = Some(Step {
            slot: i as u32,
            to,
            tex,
            level: i16::from(top) - 1,
            row: 0,
            data,
            data_first,
        });
        Ok(())
    }

    /// Uploads the step under way in bands of block rows, within the frame's caps and the room
    /// under `budget`; finishes it (binds the new texture, destroys the old) when every level is
    /// in. Returns whether no step is under way any more (finished or failed).
    pub(super) fn continue_step(&mut self, ctx: &GpuContext, budget: u64, t0: Instant) -> bool {
        loop {
            let Some(st) = self.step.as_mut() else {
                return true;
            };
            if st.level < i16::from(st.to) {
                self.finish_step();
                return true;
            }
            let level = st.level as u8;
            let mip = u32::from(level - st.to);
            let (row_bytes, rows) = upload::level_rows(st.tex.texture(), mip);
            if st.row >= rows {
                st.level -= 1;
                st.row = 0;
                continue;
            }
            let over_time = !self.config.deterministic
                && t0.elapsed().as_secs_f32() * 1e3 > self.config.upload_ms_per_frame;
            let uploaded = self.frame_stats.uploaded_bytes;
            if over_time || (uploaded > 0 && uploaded >= self.config.upload_bytes_per_frame) {
                return false;
            }
            // The band: what the frame's cap allows (at least one row while the frame has
            // uploaded nothing, so that a tiny cap still progresses), as far as one staging
            // chunk holds; a new chunk is made only within the room under the budget.
            let room = budget.saturating_sub(ctx.ledger().total_bytes());
            let allowance = self.config.upload_bytes_per_frame - uploaded;
            let row_bytes64 = u64::from(row_bytes.max(1));
            let mut n = (allowance / row_bytes64).min(u64::from(rows - st.row)) as u32;
            if n == 0 {
                if uploaded > 0 {
                    return false;
                }
                n = 1;
            }
            let i = st.slot as usize;
            let data = st.data.get(usize::from(level - st.data_first));
            let from_cpu = !data.is_some_and(LevelData::staged);
            let start = st.row as usize * row_bytes as usize;
            let end = start + n as usize * row_bytes as usize;
            let result = match data {
                // Read straight into staging: only the copy into the texture is recorded.
                Some(LevelData::Staged(staged)) => {
                    self.ring
                        .copy_staged(ctx, staged, st.tex.texture(), mip, st.row, n)
                }
                Some(LevelData::Cpu(data)) if end <= data.len() => self.ring.write_rows(
                    ctx,
                    st.tex.texture(),
                    mip,
                    st.row,
                    &data[start..end],
                    room,
                ),
                _ => Err(Error::InvalidResource {
                    label: self.slots[i].label.clone(),
                    reason: format!(
                        "level {level} has {} bytes, too few",
                        data.map_or(0, LevelData::len)
                    ),
                }),
            };
            let written = match result {
                Ok(0) => {
                    // No staging chunk free or affordable: next frame. While chunks lent to
                    // reads take the room (lent when it was spare; the budget fell since), the
                    // grows holding them cannot start behind this step: after a few frames
                    // those reads are given up (made again later).
                    if from_cpu && self.ring.lent_chunks() > 0 {
                        self.band_waits += 1;
                        if self.band_waits >= BAND_WAIT_FRAMES {
                            self.band_waits = 0;
                            self.drop_staged_reads(false);
                        }
                    }
                    return false;
                }
                Ok(w) => w,
                Err(e) => {
                    if let Some(st) = self.step.take() {
                        self.retire(st.tex);
                    }
                    self.note_create_error(ctx, i, &e);
                    self.end_grow(i);
                    return true;
                }
            };
            self.band_waits = 0;
            st.row += written;
            self.frame_stats.uploaded_bytes += u64::from(written) * row_bytes64;
        }
    }

    /// Binds the finished step's texture (the old one is destroyed now that its copies are
    /// submitted) and moves the grow on: done, or waiting for its next step.
    pub(super) fn finish_step(&mut self) {
        let Some(st) = self.step.take() else {
            return;
        };
        let i = st.slot as usize;
        let old = self.slots[i].gpu.replace(Resident::new(st.tex));
        // The old texture's copies are recorded, not yet submitted: it goes after the submit.
        if let Some(old) = old {
            self.retire(old.tex);
        }
        self.slots[i].error = None;
        self.plan_tex[i].resident_level = st.to;
        self.touched.push(i as u32);
        let target = self.plan_tex[i].in_flight_level;
        let floor = self.plan_tex[i].floor_level;
        let read_to = self.slots[i].step_target(&self.plan_tex[i]);
        if st.to > read_to {
            // More steps of the levels read.
            self.frame_stats.steps += 1;
            if let Some(f) = self.slots[i].inflight.as_mut() {
                f.from = st.to;
                f.data = Some(st.data);
            }
        } else if st.to > target {
            // Retargeted: the levels read have landed; the finer ones are requested by the next
            // `issue_io` (the read before has completed, so its cancel flag serves the next).
            self.frame_stats.steps += 1;
            let from_cpu = target >= st.to.min(floor);
            if let Some(f) = self.slots[i].inflight.as_mut() {
                f.to = target;
                f.from = st.to;
                f.queued = false;
                // The levels read are built: their bytes are no longer held.
                f.reserved = None;
                f.data = from_cpu.then(Vec::new);
            }
            if !from_cpu {
                self.ready.retain(|&r| r as usize != i);
                // The finer levels' read starts now, not at the next frame's `issue_io`: a
                // frame sooner on screen (into a buffer of its own: no context here).
                self.issue_read(i, None);
            }
        } else {
            self.frame_stats.grows += 1;
            if let Some(f) = &self.slots[i].inflight {
                let frames = self.frame.saturating_sub(f.issued).max(1) as f32;
                self.latency_frames += (frames.min(64.0) - self.latency_frames) / 16.0;
            }
            self.end_grow(i);
        }
    }

    /// The level a grow of `p` from `from` towards `to` reaches in its next step: the floor
    /// first when nothing is resident (its data is on the CPU), then the next finer level the
    /// texture may start at, and `to` at the latest.
    pub(super) fn next_step(p: &PlanTexture, from: u8, to: u8) -> u8 {
        if from > p.floor_level {
            return p.floor_level.max(to);
        }
        (to..from)
            .rev()
            .find(|&l| p.base_allowed(l))
            .unwrap_or(to)
            .max(to)
    }
}
