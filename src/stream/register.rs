//! Registering and removing textures, and making a texture from the CPU-held floor data.

use super::*;

impl Streamer {
    /// Registers a KTX2 texture: reads and validates its header and level index (not its level
    /// data), reads its floor tail and makes it resident at once when `total + floor <= budget`
    /// (otherwise the planner brings it in when there is room).
    pub(crate) fn add_texture(
        &mut self,
        ctx: &GpuContext,
        source: TextureSource,
        opts: TextureOptions,
        budget: u64,
    ) -> Result<TextureHandle> {
        self.register(ctx, source, opts, budget, false)
    }

    /// [`Streamer::add_texture`] for many textures at once (a level, or an open world's tile):
    /// their floors are packed into one staging buffer (charged to [`Category::Staging`] until
    /// the GPU has copied it, within the budget; in parts when it does not fit) and copied in
    /// one submit, instead of one `write_texture` (a staging buffer wgpu makes and frees) per
    /// floor level: on lavapipe about 8 µs a texture instead of 50. Each floor is on the GPU,
    /// as with `add_texture`, before anything submitted after this returns. One result per
    /// texture, in order: a texture refused does not stop the others.
    pub(crate) fn add_textures(
        &mut self,
        ctx: &GpuContext,
        textures: impl IntoIterator<Item = (TextureSource, TextureOptions)>,
        budget: u64,
    ) -> Vec<Result<TextureHandle>> {
        let mut unfilled = Vec::new();
        let out = textures
            .into_iter()
            .map(|(source, opts)| {
                let r = self.register(ctx, source, opts, budget, true);
                if let Ok(h) = &r
                    && self.slots[h.index as usize].gpu.is_some()
                {
                    unfilled.push(h.index);
                }
                r
            })
            .collect();
        self.fill_floors(ctx, &unfilled, budget, true);
        out
    }

    /// Uploads the floors of the textures this frame's evictions made (not filled yet: see
    /// [`Streamer::apply`]), as [`Streamer::add_textures`] does: packed into one staging
    /// buffer under `budget` and one submit, not a `write_texture` a level, which makes and
    /// frees a staging buffer each (the driver allocator walking its free list for those was
    /// 11% of the open-world example's run on lavapipe). Call after the frame's transitions,
    /// before anything draws them.
    pub(crate) fn fill_evicted_floors(&mut self, ctx: &GpuContext, budget: u64) {
        if self.evicted_floors.is_empty() {
            return;
        }
        let slots = std::mem::take(&mut self.evicted_floors);
        self.fill_floors(ctx, &slots, budget, false);
        self.evicted_floors = slots;
        self.evicted_floors.clear();
    }

    /// Uploads the floors of the textures `slots` (made by [`Streamer::add_textures`], or by
    /// this frame's evictions, not filled yet): packed into staging buffers of what fits under
    /// `budget`, one submit each; a texture whose floor has no room in a part (after waiting
    /// once for the GPU to give back the staging of the parts before) goes through
    /// `write_texture` when its staging fits under the budget (`strict`: registration) or
    /// always (an eviction's floor, which the plan counted); a registered one that does not
    /// fit is left with nothing resident. The staging is released when the GPU is done: in
    /// deterministic mode before returning, so that the next frame's room does not depend on
    /// the GPU's timing.
    fn fill_floors(&mut self, ctx: &GpuContext, slots: &[u32], budget: u64, strict: bool) {
        let mut waited = false;
        // A floor's staging, in a part or through `write_floor`: rows padded to 256 bytes.
        let staged_bytes = |s: &Slot| -> u64 {
            let Some(tex) = s.gpu.as_ref().map(|r| r.tex.texture()) else {
                return 0;
            };
            (0..tex.mip_level_count())
                .map(|l| upload::staged_bytes(tex, l))
                .sum()
        };
        // A part's buffer: at most 32 MiB (a tile of large floors goes in several), and what the
        // device takes.
        let cap = ctx.device().limits().max_buffer_size.min(32 << 20);
        let mut k = 0;
        // A part was submitted since the last wait: its staging comes back once the GPU has
        // copied it.
        let mut staged_since_wait = false;
        while k < slots.len() {
            // As many textures as fit the room left under the budget, in one buffer.
            let room = budget.saturating_sub(ctx.ledger().total_bytes()).min(cap);
            let (mut end, mut bytes) = (k, 0u64);
            while end < slots.len() {
                let b = staged_bytes(&self.slots[slots[end] as usize]);
                if bytes + b > room {
                    break;
                }
                bytes += b;
                end += 1;
            }
            if (end == k || bytes == 0) && staged_since_wait {
                // The parts before hold the room: wait for the GPU to copy them (this rare
                // path only: a budget that fits the floors but not their staging as well).
                let _ = ctx.wait_idle();
                staged_since_wait = false;
                continue;
            }
            if end == k || bytes == 0 {
                // No room for this one's staging in a part: the plain way, whose staging is
                // the floor's own bytes, if that fits under the budget (after the GPU gives
                // back what earlier floors' writes held); else the floor is not made resident
                // now, and comes when the planner finds it room.
                let i = slots[k] as usize;
                if !strict {
                    // An eviction's floor: its texture was just destroyed to free room, and
                    // the plan counted the floor; a texture that lost its floor would draw
                    // the fallback and give up its hold. Its staging copy may pass the
                    // budget until the GPU has it, as before.
                    self.write_floor(ctx, i);
                    k += 1;
                    continue;
                }
                let need = staged_bytes(&self.slots[i]);
                if ctx.ledger().total_bytes().saturating_add(need) > budget && !waited {
                    // Once a call: what earlier floors' writes held comes back.
                    ctx.collect_staging(true);
                    waited = true;
                }
                if ctx.ledger().total_bytes().saturating_add(need) <= budget {
                    self.write_floor(ctx, i);
                } else {
                    self.unfill(i);
                }
                k += 1;
                continue;
            }
            staged_since_wait = true;
            if let Err(e) = self.stage_floors(ctx, &slots[k..end], bytes) {
                tracing::warn!(error = %e, textures = end - k, "floor staging buffer refused: uploaded one level at a time");
                for &i in &slots[k..end] {
                    self.write_floor(ctx, i as usize);
                }
            }
            k = end;
        }
        if self.config.deterministic && !slots.is_empty() {
            let _ = ctx.wait_idle();
        }
    }

    /// One staging buffer of `bytes` for the floors of `slots`, their copies and one submit.
    /// The buffer's charge ends when the GPU has finished the copies.
    fn stage_floors(&mut self, ctx: &GpuContext, slots: &[u32], bytes: u64) -> Result<()> {
        let staging = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("floor upload staging"),
                size: bytes,
                // MAP_WRITE: the mapping is the buffer (a COPY_SRC-only buffer mapped at
                // creation gets a hidden staging copy of the same size, uncharged).
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            },
            Category::Staging,
        )?;
        let mut encoder = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("floor uploads"),
            });
        {
            let mut view =
                staging
                    .buffer()
                    .get_mapped_range_mut(..)
                    .map_err(|e| Error::Validation {
                        context: "floor upload staging".into(),
                        message: e.to_string(),
                    })?;
            let mut at = 0u64;
            for &i in slots {
                let s = &self.slots[i as usize];
                let Some(tex) = s.gpu.as_ref().map(|r| r.tex.texture()) else {
                    continue;
                };
                for (l, data) in s.floor_data.iter().enumerate() {
                    let level = l as u32;
                    let (row, rows, padded) = staged_level(tex, level);
                    for (r, src) in data.chunks_exact(row as usize).enumerate() {
                        let o = (at + r as u64 * padded) as usize;
                        view.slice(o..o + row as usize).copy_from_slice(src);
                    }
                    encoder.copy_buffer_to_texture(
                        wgpu::TexelCopyBufferInfo {
                            buffer: staging.buffer(),
                            layout: wgpu::TexelCopyBufferLayout {
                                offset: at,
                                bytes_per_row: Some(padded as u32),
                                rows_per_image: Some(rows),
                            },
                        },
                        wgpu::TexelCopyTextureInfo {
                            texture: tex,
                            mip_level: level,
                            origin: wgpu::Origin3d::ZERO,
                            aspect: wgpu::TextureAspect::All,
                        },
                        tex.size()
                            .mip_level_size(level, tex.dimension())
                            .physical_size(tex.format()),
                    );
                    at += padded * u64::from(rows);
                }
            }
        }
        staging.buffer().unmap();
        ctx.queue().submit([encoder.finish()]);
        // Charged until the GPU is done with it (then dropped: freed and released).
        ctx.queue().on_submitted_work_done(move || drop(staging));
        Ok(())
    }

    /// Uploads slot `i`'s floor with `write_texture`, a level at a time (a failure leaves the
    /// texture with nothing resident, as a failed `add_texture` floor does).
    fn write_floor(&mut self, ctx: &GpuContext, i: usize) {
        let s = &self.slots[i];
        let Some(tex) = s.gpu.as_ref().map(|r| r.tex.texture()) else {
            return;
        };
        // The levels written hold a staging copy each until the GPU has them.
        let mut staged = 0u64;
        let mut failed = false;
        for (l, data) in s.floor_data.iter().enumerate() {
            if upload::write_level(ctx, tex, l as u32, data).is_err() {
                failed = true;
                break;
            }
            staged += upload::staged_bytes(tex, l as u32);
        }
        ctx.hold_staging_until_done(staged, "floor upload staging");
        if failed {
            tracing::warn!(texture = %s.label, "floor not made resident");
            self.unfill(i);
        }
    }

    /// Slot `i`'s texture, made but not filled, is dropped (its bytes given back): nothing of
    /// it is resident, as when its floor had no room at registration.
    fn unfill(&mut self, i: usize) {
        let old = self.slots[i].gpu.take();
        self.drop_resident(old);
        let p = &mut self.plan_tex[i];
        p.resident_level = p.level_count;
        p.in_flight_level = p.level_count;
        self.touched.push(i as u32);
    }

    /// Registers one texture; `staged`: its floor goes through the staging ring (the caller
    /// submits it), else through `write_texture`.
    fn register(
        &mut self,
        ctx: &GpuContext,
        source: TextureSource,
        opts: TextureOptions,
        budget: u64,
        staged: bool,
    ) -> Result<TextureHandle> {
        let mut info = source.info(&self.config.read_limits)?;
        let label = match &source {
            TextureSource::Path(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string()),
            TextureSource::Bytes(_) => info
                .key_values
                .iter()
                .find(|(k, _)| k == "mipflowName")
                .map(|(_, v)| String::from_utf8_lossy(v).trim_end_matches('\0').to_owned())
                .unwrap_or_else(|| format!("memory texture {}x{}", info.width, info.height)),
            TextureSource::Reader(r) => r.describe(),
        };
        // Without BC, a Basis file streams as RGBA8; BCn blocks cannot.
        if !ctx.bc_supported() && !info.transcode_uncompressed() {
            return Err(Error::InvalidResource {
                label,
                reason: missing_bc(ctx),
            });
        }
        let count = info.levels.len().min(crate::budget::planner::MAX_LEVELS) as u8;
        if count == 0 {
            return Err(Error::InvalidResource {
                label,
                reason: "no mip levels".into(),
            });
        }
        // The levels a GPU texture may start at: wgpu wants a block-compressed texture's size to
        // be a multiple of its block, so a 960x540 BC7 chain can only start at level 0.
        let (bw, bh) = info.format.block_dimensions();
        let bases = PlanTexture::block_aligned_bases(info.width, info.height, bw, bh, count);
        // The floor: the first level whose largest side is <= floor_size that may be a base
        // (the whole chain for a small texture; level 0 for a chain no other level can start).
        let floor = PlanTexture::floor_for(
            info.width,
            info.height,
            self.config.floor_size,
            count,
            bases,
        );
        let Some(floor_level) = floor else {
            return Err(Error::InvalidResource {
                label,
                reason: format!(
                    "{}x{} {:?}: no mip level is a multiple of the {bw}x{bh} block, so no GPU \
                     texture can hold it (cook it from an image whose sides are multiples of 4)",
                    info.width, info.height, info.format
                ),
            });
        };
        if floor_level == 0 && count > 1 {
            tracing::info!(
                texture = %label,
                width = info.width,
                height = info.height,
                "only level 0 is a multiple of the block size: the texture stays whole (not \
                 streamed); sides that are multiples of 4 << k let it stream k levels"
            );
        }
        // The floor's bytes, checked against both budgets before a byte of it is read: on the
        // CPU (held for eviction, decoded) and in VRAM (it is what the texture can never drop).
        let floor_cpu: u64 = (floor_level..count)
            .map(|l| info.level_size(usize::from(l)))
            .sum();
        let limit = self.config.cpu_floor_limit;
        if self.floor_cpu_bytes.saturating_add(floor_cpu) > limit {
            return Err(Error::FloorTooLarge {
                label,
                what: "CPU memory (StreamConfig::cpu_floor_limit)",
                needed: floor_cpu,
                limit,
                held: self.floor_cpu_bytes,
            });
        }
        if floor_cpu > budget {
            return Err(Error::FloorTooLarge {
                label,
                what: "VRAM (the budget)",
                needed: floor_cpu,
                limit: budget,
                held: ctx.ledger().total_bytes(),
            });
        }
        let info = Arc::new(info);
        let floor_data = source
            .read_levels(&info, floor_level..count, &AtomicBool::new(false))
            .map_err(|e| e.into_error(&label))?;
        let level_bytes: Vec<u64> = (0..count)
            .map(|l| info.level_size(usize::from(l)))
            .collect();
        // Nothing resident (no room for the floor, or its creation failed): set in the
        // planner's record once the slot is placed.
        let mut nothing_resident = false;
        let floor_bytes = level_bytes[usize::from(floor_level)..]
            .iter()
            .fold(0u64, |a, &b| a.saturating_add(b));
        self.floor_cpu_bytes += floor_data.iter().map(|d| d.len() as u64).sum::<u64>();

        let (index, generation) = match self.free.pop() {
            Some(i) => (i, self.slots[i as usize].generation.wrapping_add(1)),
            None => (self.slots.len() as u32, self.generation_base),
        };
        let mut slot = Slot {
            generation,
            alive: true,
            label,
            source,
            orientation: info.orientation(),
            info,
            floor_data,
            gpu: None,
            inflight: None,
            error: None,
            backoff_until: 0,
        };
        // What earlier floors' uploads held and the GPU has finished with is given back
        // before the room is judged.
        ctx.collect_staging(self.config.deterministic);
        // The single way also holds a staging copy of the floor until the GPU has it (rows
        // padded as a backend pads them).
        let need = if staged {
            floor_bytes
        } else {
            let copies: u64 = (floor_level..count)
                .map(|l| {
                    let (lw, lh) = slot.info.level_dims(usize::from(l));
                    upload::staged_bytes_of(slot.info.format, lw, lh)
                })
                .sum();
            floor_bytes.saturating_add(copies)
        };
        if ctx.ledger().total_bytes().saturating_add(need) <= budget {
            let made = if staged {
                // Filled by `fill_floors` with the rest of the batch.
                Self::create_unfilled(ctx, &slot, floor_level)
            } else {
                self.create_from_cpu(ctx, &slot, floor_level)
            };
            match made {
                Ok(r) => slot.gpu = Some(r),
                Err(e) => {
                    tracing::warn!(texture = %slot.label, error = %e, "floor not made resident");
                    if let Error::OutOfMemory { .. } = e {
                        // As a grow's: the next frame lowers the effective budget to what the
                        // driver gave, and the floor comes when it is worth its bytes.
                        let total = ctx.ledger().total_bytes();
                        self.note_out_of_memory_at(total);
                        self.frame_stats.oom_events += 1;
                    }
                    slot.error = Some(e.to_string());
                    nothing_resident = true;
                }
            }
        } else {
            nothing_resident = true;
        }
        let id = SlotId {
            generation,
            width: slot.info.width,
            height: slot.info.height,
            alive: true,
        };
        let pt = if index as usize == self.slots.len() {
            self.slots.push(slot);
            self.plan_tex.push(&level_bytes, floor_level)
        } else {
            self.slots[index as usize] = slot;
            self.plan_tex
                .replace(index as usize, &level_bytes, floor_level)
        };
        pt.base_levels = bases;
        pt.priority = opts.priority;
        if nothing_resident {
            pt.resident_level = count;
            pt.in_flight_level = count;
        }
        self.set_id(index, id);
        self.changed = true;
        Ok(TextureHandle { index, generation })
    }

    /// Adds a texture the caller made and filled (fully resident, not streamed, not planned): a
    /// UI atlas, a texture that must never blur, or a baseline to compare streaming with. It is
    /// charged to the ledger as `tex` was created (use the tracked constructors of
    /// [`GpuContext`]); the planner counts its bytes as fixed. Its view is handed out like any
    /// other's.
    /// `file`: the KTX2 file it was made from, whose metadata it keeps (its orientation, its
    /// image's shape); without one it has none.
    pub(crate) fn add_resident(
        &mut self,
        tex: TrackedTexture,
        label: &str,
        file: Option<&Ktx2Info>,
    ) -> TextureHandle {
        let (w, h) = (tex.texture().width(), tex.texture().height());
        let mut info = Ktx2Info::resident(tex.texture().format(), w, h);
        let pinned = self.pinned.get_mut(tex.category());
        *pinned = pinned.saturating_add(tex.bytes());
        if let Some(file) = file {
            info.key_values.clone_from(&file.key_values);
        }
        let (index, generation) = match self.free.pop() {
            Some(i) => (i, self.slots[i as usize].generation.wrapping_add(1)),
            None => (self.slots.len() as u32, self.generation_base),
        };
        let slot = Slot {
            generation,
            alive: true,
            label: label.to_owned(),
            source: TextureSource::Bytes(Arc::from(Vec::new())),
            orientation: info.orientation(),
            info: Arc::new(info),
            floor_data: Vec::new(),
            gpu: Some(Resident::new(tex)),
            inflight: None,
            error: None,
            backoff_until: 0,
        };
        if index as usize == self.slots.len() {
            self.slots.push(slot);
            self.plan_tex.push_empty();
        } else {
            self.slots[index as usize] = slot;
            self.plan_tex.clear_slot(index as usize);
        }
        self.set_id(
            index,
            SlotId {
                generation,
                width: w,
                height: h,
                alive: true,
            },
        );
        self.changed = true;
        TextureHandle { index, generation }
    }

    /// A streamer that replaces this one (the manager's `clear`) starts its slots' generations
    /// here, so that a handle from before can never name a texture added after.
    pub(crate) fn after_generations(&self) -> u32 {
        self.slots
            .iter()
            .map(|s| s.generation.wrapping_add(1))
            .fold(self.generation_base, u32::max)
    }

    /// See [`Streamer::after_generations`].
    pub(crate) fn start_generations_at(&mut self, base: u32) {
        self.generation_base = base;
    }

    /// Removes a texture: its GPU memory is freed at once, its reads are cancelled, and the handle
    /// becomes stale. Returns false for a stale handle.
    pub(crate) fn remove_texture(&mut self, h: TextureHandle) -> bool {
        if self.slot(h).is_none() {
            return false;
        }
        let i = h.index as usize;
        self.abort_step(i);
        self.drop_read(i);
        let s = &mut self.slots[i];
        if let Some(f) = s.inflight.take() {
            f.cancel.store(true, Ordering::Release);
        }
        if self.plan_tex[i].level_count == 0
            && let Some(r) = s.gpu.as_ref()
        {
            // Added resident (a streamed texture has a level at least).
            let pinned = self.pinned.get_mut(r.tex.category());
            *pinned = pinned.saturating_sub(r.tex.bytes());
        }
        let old = s.gpu.take();
        s.alive = false;
        self.ids[i].alive = false;
        let held: u64 = s.floor_data.iter().map(|d| d.len() as u64).sum();
        s.floor_data = Vec::new();
        self.floor_cpu_bytes = self.floor_cpu_bytes.saturating_sub(held);
        self.plan_tex.clear_slot(i);
        self.ready.retain(|&r| r as usize != i);
        self.free.push(h.index);
        self.changed = true;
        self.drop_resident(old);
        true
    }

    pub(super) fn texture_desc<'a>(
        info: &Ktx2Info,
        first: u8,
        count: u8,
        label: &'a str,
    ) -> wgpu::TextureDescriptor<'a> {
        let (w, h) = info.level_dims(usize::from(first));
        wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: u32::from(count - first),
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: info.format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_DST
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        }
    }

    /// Creates levels `first..` from the CPU-held floor data (`first >= floor_level`).
    pub(super) fn create_from_cpu(
        &self,
        ctx: &GpuContext,
        slot: &Slot,
        first: u8,
    ) -> Result<Resident> {
        let (count, floor) = slot.chain();
        let first = first.max(floor);
        let levels: Vec<&[u8]> = slot.floor_data[usize::from(first - floor)..]
            .iter()
            .map(Vec::as_slice)
            .collect();
        let desc = Self::texture_desc(&slot.info, first, count, &slot.label);
        let tex = upload::create_texture_with_levels(ctx, &desc, &levels, Category::Textures)?;
        Ok(Resident::new(tex))
    }

    /// The GPU texture [`Streamer::create_from_cpu`] makes, charged, without its data (the
    /// floor levels, checked against their sizes, are uploaded by the caller).
    pub(super) fn create_unfilled(ctx: &GpuContext, slot: &Slot, first: u8) -> Result<Resident> {
        let (count, floor) = slot.chain();
        if first != floor {
            return Err(Error::InvalidResource {
                label: slot.label.clone(),
                reason: format!("a floor from level {first}, its data from level {floor}"),
            });
        }
        let desc = Self::texture_desc(&slot.info, first, count, &slot.label);
        for (l, data) in slot.floor_data.iter().enumerate() {
            let extent = desc.size.mip_level_size(l as u32, desc.dimension);
            let (row, rows) = upload::level_rows_of(desc.format, extent.width, extent.height);
            if data.len() as u64 != u64::from(row) * u64::from(rows) {
                return Err(Error::InvalidResource {
                    label: slot.label.clone(),
                    reason: format!(
                        "level {} has {} bytes, {rows} rows of {row} expected",
                        usize::from(first) + l,
                        data.len()
                    ),
                });
            }
        }
        Ok(Resident::new(
            ctx.create_texture(&desc, Category::Textures)?,
        ))
    }

    /// Makes sure the 1x1 grey fallback exists (drawn for textures with nothing resident).
    pub(crate) fn ensure_fallback(&mut self, ctx: &GpuContext) -> Result<()> {
        if self.fallback.is_some() {
            return Ok(());
        }
        let desc = wgpu::TextureDescriptor {
            label: Some("missing-texture fallback"),
            size: wgpu::Extent3d {
                width: 1,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        };
        let tex = upload::create_texture_with_levels(
            ctx,
            &desc,
            &[&[128, 128, 128, 255]],
            Category::Textures,
        )?;
        let view = tex.create_view(&Default::default());
        self.fallback = Some((tex, view));
        Ok(())
    }
}

/// How a floor level of `tex` lies in a batch's staging buffer ([`Streamer::add_textures`]):
/// its row of blocks, its rows, and the row padded to wgpu's 256-byte alignment (so every
/// level, `rows` padded rows, starts at an aligned offset too).
fn staged_level(tex: &wgpu::Texture, level: u32) -> (u32, u32, u64) {
    const ALIGN: u64 = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64;
    let (row, rows) = upload::level_rows(tex, level);
    (row, rows, u64::from(row).div_ceil(ALIGN) * ALIGN)
}

/// What a device without [`crate::REQUIRED_FEATURES`] lacks, and whose fault it is: the
/// adapter's (it has no BC at all) or the device request's (the adapter has it, the device
/// was made without it).
fn missing_bc(ctx: &GpuContext) -> String {
    let adapter_has = ctx.adapter().map(|a| {
        a.features()
            .contains(wgpu::Features::TEXTURE_COMPRESSION_BC)
    });
    match adapter_has {
        Some(false) => "the adapter cannot sample block-compressed (BC1 to BC7) textures \
                        (no TEXTURE_COMPRESSION_BC); only Basis Universal files stream there (as \
                        RGBA8)"
            .into(),
        _ => "the device was made without TEXTURE_COMPRESSION_BC, which streaming BCn textures \
              needs: request mipflow::REQUIRED_FEATURES (or make the device from \
              mipflow::device_descriptor(&adapter))"
            .into(),
    }
}
