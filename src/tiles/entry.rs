//! Making a [`VirtualTextures`] cache: its atlas, buffers and bind group; and a texture's
//! reads and the tail's place in its slot.

use std::io::{Cursor, Read, Seek};

use super::*;

impl VirtualTextures {
    /// A cache on `ctx` (its atlas as square as the slots allow, within the device's largest
    /// texture).
    pub fn new(ctx: &GpuContext, config: &VtConfig) -> Result<Self> {
        let invalid = |reason: String| Error::InvalidResource {
            label: "virtual texture cache".into(),
            reason,
        };
        let (bw, bh) = config.format.block_dimensions();
        if config.tile == 0 || !config.tile.is_multiple_of(bw) || !config.tile.is_multiple_of(bh) {
            return Err(invalid(format!(
                "tile {} is not a multiple of {:?}'s block",
                config.tile, config.format
            )));
        }
        let slots = config.slots.max(2);
        let (atlas, slots_x) = Self::make_atlas(ctx, config.format, config.tile, slots)?;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let pages = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("virtual texture pages"),
                size: u64::from(config.max_pages.max(1)) * 4,
                usage: storage,
                mapped_at_creation: false,
            },
            Category::Textures,
        )?;
        let infos = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("virtual texture infos"),
                size: u64::from(config.max_textures.max(1)) * size_of::<GpuInfo>() as u64,
                usage: storage,
                mapped_at_creation: false,
            },
            Category::Textures,
        )?;
        let feedback = feedback::TileFeedback::new(ctx, config.max_pages, 3)?;
        let layout = Self::bind_group_layout(ctx.device());
        let bind_group = Self::make_bind_group(ctx, &layout, &atlas, &pages, &infos, &feedback);
        Ok(Self {
            format: config.format,
            tile: config.tile,
            slots_x,
            atlas,
            pages,
            infos,
            layout,
            bind_group,
            slots: Slots::new(slots),
            entries: Vec::new(),
            page_ranges: registry::PageRanges::default(),
            max_pages: config.max_pages.max(1),
            frame: 0,
            feedback,
            reader: io::TileReader::new(),
            owners: vec![None; slots as usize],
            pixels: Vec::new(),
            cpu_pixels: Vec::new(),
            plan_pixels: Vec::new(),
            planner: TilePlanner::default(),
            seen: Vec::new(),
            last: TileUpdate::default(),
            market: Default::default(),
        })
    }

    /// Makes the atlas again with `slots` slots, for a cache that should take more or fewer
    /// bytes (a budget that changed): the old atlas is destroyed first (no moment with both
    /// alive), the textures' tails are written again (from memory: no file is read), and their
    /// tiles stream back as the view asks for them. Errors (the cache unchanged): fewer slots than the tails take (two a
    /// texture), or an atlas larger than the device's textures.
    pub fn resize(&mut self, ctx: &GpuContext, slots: u32) -> Result<()> {
        let alive = self.entries.iter().filter(|e| e.alive).count() as u32;
        if slots < 2 * alive.max(1) {
            return Err(Error::InvalidResource {
                label: "virtual texture cache".into(),
                reason: format!(
                    "{slots} slots: the tails of {alive} textures take {}",
                    2 * alive
                ),
            });
        }
        let per_row = (ctx.device().limits().max_texture_dimension_2d / self.tile).max(1);
        let slots_x = (f64::from(slots).sqrt().ceil() as u32)
            .next_power_of_two()
            .clamp(1, per_row);
        if slots.div_ceil(slots_x) > per_row {
            return Err(Error::InvalidResource {
                label: "virtual texture cache".into(),
                reason: format!("{slots} slots pass the device's largest texture"),
            });
        }
        // Freed first: the ledger never holds both atlases.
        let old = std::mem::replace(&mut self.atlas, Self::placeholder(ctx, self.format)?);
        old.destroy();
        let (atlas, slots_x, slots) = match Self::make_atlas(ctx, self.format, self.tile, slots) {
            Ok((a, x)) => (a, x, slots),
            Err(e) => {
                // Out of memory for the new size: the textures keep their tails in a cache of
                // the fewest slots they need.
                let fewest = 2 * alive.max(1);
                let (a, x) =
                    Self::make_atlas(ctx, self.format, self.tile, fewest).map_err(|_| e)?;
                (a, x, fewest)
            }
        };
        let placeholder = std::mem::replace(&mut self.atlas, atlas);
        placeholder.destroy();
        self.slots_x = slots_x;
        self.slots = Slots::new(slots);
        self.owners = vec![None; self.slots.len()];
        self.rebind(ctx);
        let mut entries = std::mem::take(&mut self.entries);
        for e in entries.iter_mut().filter(|e| e.alive) {
            for l in 0..e.table.level_count() {
                let (x_n, y_n) = e.table.tiles(l);
                for ty in 0..y_n {
                    for tx in 0..x_n {
                        e.table.set(l, tx, ty, None);
                    }
                }
            }
            let (Some(a), Some(b)) = (self.slots.take(0, true), self.slots.take(0, true)) else {
                unreachable!("two slots a texture were checked");
            };
            e.tail = [a, b];
            e.gpu.slots_x = slots_x;
            e.dirty = true;
            self.upload_tail(ctx.queue(), e);
        }
        self.entries = entries;
        self.flush(ctx.queue());
        Ok(())
    }

    /// Grows the atlas to `slots` slots keeping every tile where it is (a GPU copy of each slot
    /// into the new atlas, the old one alive meanwhile: both on the ledger for that moment, so
    /// call it when the budget has the room). Fewer slots than now: [`VirtualTextures::resize`].
    pub fn grow(&mut self, ctx: &GpuContext, slots: u32) -> Result<()> {
        let have = self.slots.len() as u32;
        if slots <= have {
            return self.resize(ctx, slots);
        }
        let (atlas, slots_x) = Self::make_atlas(ctx, self.format, self.tile, slots)?;
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        let at = |slot: u32, per_row: u32| wgpu::Origin3d {
            x: (slot % per_row) * self.tile,
            y: (slot / per_row) * self.tile,
            z: 0,
        };
        for s in 0..have {
            enc.copy_texture_to_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: self.atlas.texture(),
                    mip_level: 0,
                    origin: at(s, self.slots_x),
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::TexelCopyTextureInfo {
                    texture: atlas.texture(),
                    mip_level: 0,
                    origin: at(s, slots_x),
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    width: self.tile,
                    height: self.tile,
                    depth_or_array_layers: 1,
                },
            );
        }
        ctx.queue().submit([enc.finish()]);
        // wgpu keeps the old atlas for the copy already submitted.
        std::mem::replace(&mut self.atlas, atlas).destroy();
        self.slots_x = slots_x;
        self.slots.extend_to(slots);
        self.owners.resize(slots as usize, None);
        self.rebind(ctx);
        for e in self.entries.iter_mut().filter(|e| e.alive) {
            e.gpu.slots_x = slots_x;
            e.dirty = true;
        }
        self.flush(ctx.queue());
        Ok(())
    }

    /// The bind group made again for the atlas now in place.
    fn rebind(&mut self, ctx: &GpuContext) {
        self.bind_group = Self::make_bind_group(
            ctx,
            &self.layout,
            &self.atlas,
            &self.pages,
            &self.infos,
            &self.feedback,
        );
    }

    /// A 4x4 texture standing in for the atlas while it is made again.
    fn placeholder(ctx: &GpuContext, format: wgpu::TextureFormat) -> Result<TrackedTexture> {
        let (bw, bh) = format.block_dimensions();
        ctx.create_texture(
            &wgpu::TextureDescriptor {
                label: Some("virtual texture atlas (placeholder)"),
                size: wgpu::Extent3d {
                    width: bw,
                    height: bh,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            },
            Category::Textures,
        )
    }

    /// An atlas of `slots` tiles of `tile` texels in `format` (as square as the device's
    /// largest texture allows), and its slots per row.
    pub(super) fn make_atlas(
        ctx: &GpuContext,
        format: wgpu::TextureFormat,
        tile: u32,
        slots: u32,
    ) -> Result<(TrackedTexture, u32)> {
        let max = ctx.device().limits().max_texture_dimension_2d;
        let per_row = (max / tile).max(1);
        let slots_x = (f64::from(slots).sqrt().ceil() as u32)
            .next_power_of_two()
            .clamp(1, per_row);
        let slots_y = slots.div_ceil(slots_x);
        if slots_y > per_row {
            return Err(Error::InvalidResource {
                label: "virtual texture cache".into(),
                reason: format!(
                    "{slots} slots of {tile} texels pass the device's {max}-texel textures"
                ),
            });
        }
        let atlas = ctx.create_texture(
            &wgpu::TextureDescriptor {
                label: Some("virtual texture atlas"),
                size: wgpu::Extent3d {
                    width: slots_x * tile,
                    height: slots_y * tile,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::TEXTURE_BINDING
                    | wgpu::TextureUsages::COPY_DST
                    | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            },
            Category::Textures,
        )?;
        Ok((atlas, slots_x))
    }

    /// The bind group over the atlas and the buffers.
    pub(super) fn make_bind_group(
        ctx: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        atlas: &TrackedTexture,
        pages: &TrackedBuffer,
        infos: &TrackedBuffer,
        feedback: &feedback::TileFeedback,
    ) -> wgpu::BindGroup {
        let view = atlas.texture().create_view(&Default::default());
        ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("virtual textures"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: pages.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: infos.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: feedback.counters.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: feedback.frame_uniform.buffer().as_entire_binding(),
                },
            ],
        })
    }

    /// The layout of the bind group `vt_sample` reads: the atlas (binding 0), the page entries
    /// (1) and the textures' infos (2), for the fragment stage.
    pub fn bind_group_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("virtual textures"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                storage(1),
                storage(2),
                wgpu::BindGroupLayoutEntry {
                    binding: 3,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: false },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 4,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        })
    }
}

impl Entry {
    /// Reads from the texture's file with `f`.
    pub(super) fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn ReadSeek, &Ktx2Info) -> std::result::Result<T, crate::ktx2::Ktx2Error>,
    ) -> Result<T> {
        Self::read_from(&self.source, &self.info, f)
    }

    /// Reads from `source` (a file described by `info`) with `f`.
    pub(super) fn read_from<T>(
        source: &TileSource,
        info: &Ktx2Info,
        f: impl FnOnce(&mut dyn ReadSeek, &Ktx2Info) -> std::result::Result<T, crate::ktx2::Ktx2Error>,
    ) -> Result<T> {
        let (path, result) = match source {
            TileSource::Bytes(b) => ("memory".into(), f(&mut Cursor::new(&b[..]), info)),
            TileSource::File(p) => {
                let mut file = std::fs::File::open(p).map_err(|source| Error::Io {
                    path: p.clone(),
                    source,
                })?;
                (p.clone(), f(&mut file, info))
            }
        };
        result.map_err(|source| Error::Ktx2 { path, source })
    }
}

/// Read and seek, as one object type.
pub(super) trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

/// Where tail level `level` (past the first tail level `first`) lies in the tail's second
/// slot: the first of them at the slot's origin, the others down a column at half the tile's
/// width, each at a multiple of the block.
pub(super) fn tail_origin(info: &Ktx2Info, first: usize, level: usize, tile: u32) -> [u32; 2] {
    if level == first + 1 {
        return [0, 0];
    }
    let (_, bh) = info.format.block_dimensions();
    let y = (first + 2..level)
        .map(|l| info.level_dims(l).1.div_ceil(bh) * bh)
        .sum();
    [tile / 2, y]
}
