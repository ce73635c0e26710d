//! Tile streaming (virtual textures): a large texture is resident tile by tile, not level by
//! level, so a wall whose corner is near pays for its corner.
//!
//! wgpu has no sparse textures, so this is done in software, as engines did before sparse
//! binding:
//! - **The physical cache**: one 2D texture (the atlas) of `slots` tiles of `tile x tile`
//!   texels in one format, charged to the ledger like every texture. Each virtual texture's
//!   coarse levels (those one tile or smaller, the *tail*) take two slots for good: the first
//!   tail level in one, the others packed in the other. They are its floor.
//! - **The page tables**: per virtual texture, per level, tile -> slot, resolved so that a tile
//!   that is not resident points at its finest resident ancestor ([`PageTable`]). All tables
//!   live in one storage buffer, rewritten for a texture only when its residency changed.
//! - **Sampling**: `vt_sample` in WGSL ([`vt_wgsl`]) takes the level from the derivatives (and
//!   a bias: the render scale's), reads the page entry, and filters by hand, four texels a
//!   level, each through its own tile, so that filtering across a tile's edge reads the
//!   neighbour tile: no borders, no seams.
//!
//! The tiles come from a tiled KTX2 file (`mipflow cook --tiles`), one byte range each
//! ([`crate::ktx2::read_tile`]).

mod demand;
mod entry;
use entry::tail_origin;
mod feedback;
mod io;
mod market;
mod page;
mod plan;
mod registry;

use std::sync::Arc;

pub(crate) use market::START_SLOTS;
pub use page::{PageTable, Slots};
pub use plan::{TileInput, TilePlanner, TileWant};

use crate::budget::Category;
use crate::gpu::{GpuContext, TrackedBuffer, TrackedTexture};
use crate::ktx2::{Ktx2Info, read_level, read_tile};
use crate::{Error, Result};

/// The most levels a virtual texture may have (a 32768² one has 16).
pub const VT_MAX_LEVELS: usize = 16;

/// Where a virtual texture's tiles are read from.
#[derive(Clone, Debug)]
pub enum TileSource {
    /// The whole tiled KTX2 file in memory.
    Bytes(Arc<[u8]>),
    /// A tiled KTX2 file on disk, opened for each read.
    File(std::path::PathBuf),
}

/// A virtual texture in a [`VirtualTextures`] cache. Its [`VtId::index`] is what the shader
/// takes; a removed texture's index is taken again by a later one, and the id of the removed
/// one is refused from then on (it carries a generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VtId {
    index: u32,
    generation: u32,
}

impl VtId {
    /// The index the shader takes (`vt_sample(index, ...)`): the texture's `VtInfo` in the
    /// cache's buffer, below [`VtConfig::max_textures`].
    pub fn index(self) -> u32 {
        self.index
    }
}

/// One level in the shader's `VtInfo` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuLevel {
    size: [u32; 2],
    origin: [u32; 2],
    tiles_x: u32,
    first: u32,
    tiled: u32,
    _pad: u32,
}

/// A virtual texture as the shader sees it (528 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuInfo {
    level_count: u32,
    tile: u32,
    slots_x: u32,
    address: u32,
    levels: [GpuLevel; VT_MAX_LEVELS],
}

/// How a virtual texture is addressed past its edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VtAddress {
    /// The edge texels (a texture that does not tile).
    #[default]
    Clamp,
    /// The other side (a tiling texture).
    Repeat,
}

struct Entry {
    info: Arc<Ktx2Info>,
    source: TileSource,
    table: PageTable,
    /// Its first entry in the page buffer.
    page_base: u32,
    /// The tail's two slots.
    tail: [u32; 2],
    /// The tail's levels' blocks, read when it was added (written again by a resize).
    tail_data: Vec<Vec<u8>>,
    gpu: GpuInfo,
    /// Its page entries changed since they were written.
    dirty: bool,
    /// The last frame its feedback had a count (`None`: not seen for [`SEEN_FRAMES`]).
    seen: Option<u64>,
    /// Weight of its blur against the other textures' (1 by default).
    priority: f32,
    /// It was given CPU demand since the last update.
    cpu_demand: bool,
    /// Not removed.
    alive: bool,
    /// Counts the textures that took this index: an id of an earlier one is refused.
    generation: u32,
    /// The first frame whose feedback counts for it (earlier copies may hold the counts of a
    /// removed texture that had its page entries).
    since: u64,
}

/// Frames a texture's smoothed tile demand lasts after its last count (it halves each
/// readback: after 16 it is a 65,536th).
const SEEN_FRAMES: u64 = 16;

/// Tile streaming (virtual textures): large textures resident tile by tile, not level by level
/// (a floor whose near corner wants level 0 pays for its corner). One atlas of `slots` tiles
/// (the physical cache), a page table per texture (tile -> slot, a missing tile resolved to its
/// finest resident ancestor) and the bind group `vt_sample` (WGSL, [`vt_wgsl`]) reads. Every
/// buffer and the atlas are on the ledger of the context the cache is made on: made on the
/// budget manager's, its planner counts them as fixed bytes (one budget).
///
/// Per frame: [`VirtualTextures::update`] before drawing, [`VirtualTextures::record_feedback`]
/// after the passes that call `vt_sample_feedback`, [`VirtualTextures::submitted`] after the
/// submit. The tiles come from tiled KTX2 files (`mipflow cook --tiles`), read on a thread of
/// the cache's own. The guide's chapter `docs/guide/09-tiles.md` says when to use tiles, what a
/// shader calls and what it costs.
///
/// ```no_run
/// # fn frame(ctx: &mipflow::GpuContext, encoder: &mut wgpu::CommandEncoder) -> mipflow::Result<()> {
/// use mipflow::{TileSource, VirtualTextures, VtAddress, VtConfig};
/// let info = mipflow::ktx2::read_info("floor.ktx2".as_ref(), &Default::default())?;
/// let format = info.format;
/// let mut vt = VirtualTextures::new(ctx, &VtConfig {
///     format,
///     tile: 128,
///     slots: VtConfig::slots_for(format, 128, 4 << 20),
///     max_pages: 1 << 16,
///     max_textures: 8,
/// })?;
/// let floor = vt.add(ctx.queue(), info, TileSource::File("floor.ktx2".into()), VtAddress::Repeat)?;
/// // Shader: mipflow::vt_wgsl(1) in front of yours, `vt_sample_feedback(0u, uv, bias, pixel)`,
/// // and `vt.bind_group()` at group 1. Each frame:
/// vt.update(ctx.device(), ctx.queue(), 16)?;
/// // ... your passes ...
/// vt.record_feedback(encoder);
/// // ... submit, then:
/// vt.submitted();
/// # let _ = floor; Ok(()) }
/// ```
pub struct VirtualTextures {
    format: wgpu::TextureFormat,
    tile: u32,
    slots_x: u32,
    atlas: TrackedTexture,
    pages: TrackedBuffer,
    infos: TrackedBuffer,
    layout: wgpu::BindGroupLayout,
    bind_group: wgpu::BindGroup,
    slots: Slots,
    entries: Vec<Entry>,
    /// The page entries in use and given back.
    page_ranges: registry::PageRanges,
    max_pages: u32,
    frame: u64,
    feedback: feedback::TileFeedback,
    reader: io::TileReader,
    /// Per slot, the tile it holds (texture, level, column, row), for giving it up.
    owners: Vec<Option<io::TileKey>>,
    /// Per page entry, the pixels that want its level at its tile (smoothed over readbacks).
    pixels: Vec<f32>,
    /// Per page entry, this frame's demand from the CPU ([`VirtualTextures::add_demand`]),
    /// and what the plan reads for the textures given any: the two summed.
    cpu_pixels: Vec<f32>,
    plan_pixels: Vec<f32>,
    planner: TilePlanner,
    /// The textures the plan goes through this frame (scratch).
    seen: Vec<u32>,
    /// What the last update did.
    last: TileUpdate,
    /// Its size's side of the trade with the textures ([`VirtualTextures::fit_to`]).
    market: market::Market,
}

/// What one [`VirtualTextures::update`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileUpdate {
    /// Tiles the plan keeps (resident or to load).
    pub kept: usize,
    /// Tiles loaded this update.
    pub loaded: usize,
    /// Tiles given up this update (for a tile worth more).
    pub evicted: usize,
    /// Tiles the plan keeps that are still to load (the per-update cap was reached).
    pub pending: usize,
    /// Feedback readbacks taken in.
    pub readbacks: usize,
    /// Tiles that could not be read (a corrupt frame, an IO error): asked for again after
    /// 120 updates; their ancestors show meanwhile.
    pub failed: usize,
}

/// Updates a tile that could not be read waits before it is asked for again.
pub(crate) const RETRY_FRAMES: u64 = 120;

/// Settings of a [`VirtualTextures`] cache.
#[derive(Clone, Debug)]
pub struct VtConfig {
    /// The block format of every texture in it (a tiled KTX2's `format`).
    pub format: wgpu::TextureFormat,
    /// Tile side in texels (the files' `--tiles` size).
    pub tile: u32,
    /// Slots in the atlas: its bytes are `slots x` one tile's.
    pub slots: u32,
    /// Page entries for all textures together (4 bytes each): a 16384² texture at tiles of 128
    /// has 21,845.
    pub max_pages: u32,
    /// Virtual textures at most.
    pub max_textures: u32,
}

impl VtConfig {
    /// Slots that `bytes` of atlas hold (at least the two a texture's tail takes).
    pub fn slots_for(format: wgpu::TextureFormat, tile: u32, bytes: u64) -> u32 {
        let per = crate::budget::size::level_bytes(format, tile, tile).unwrap_or(u64::MAX);
        (bytes / per.max(1)).clamp(2, 1 << 20) as u32
    }
}

impl VirtualTextures {
    /// The bind group to set where the shader declared `vt_wgsl`'s group.
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }

    /// Its layout.
    pub fn layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// Bytes of the atlas and the buffers (all on the ledger).
    pub fn bytes(&self) -> u64 {
        self.atlas.bytes() + self.pages.bytes() + self.infos.bytes() + self.feedback.bytes()
    }

    /// Records into `encoder` (after the passes that call `vt_sample_feedback`) the copy of
    /// this frame's tile feedback into a readback buffer, and its clearing; call
    /// [`VirtualTextures::submitted`] after submitting it. False when every readback buffer
    /// was still in use (the counts carry over into the next frame's).
    pub fn record_feedback(&mut self, encoder: &mut wgpu::CommandEncoder) -> bool {
        self.feedback
            .record(encoder, self.page_ranges.end, self.frame)
    }

    /// After the submit that holds [`VirtualTextures::record_feedback`]'s copy.
    pub fn submitted(&mut self) {
        self.feedback.submitted();
    }

    /// The frame's tile streaming: takes in the feedback that has arrived (without waiting),
    /// plans which tiles the slots hold ([`TilePlanner`]: worth most first, a parent before
    /// its children, resident ones kept unless clearly outworth), loads up to `max_loads` of
    /// those missing (giving up tiles the plan no longer keeps), writes the changed page
    /// tables and moves to the next frame.
    pub fn update(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        max_loads: usize,
    ) -> Result<TileUpdate> {
        let _ = device.poll(wgpu::PollType::Poll);
        let mut out = TileUpdate::default();
        let frame = self.frame;
        self.pixels.resize(self.page_ranges.end as usize, 0.0);
        let (feedback, entries, pixels) = (&mut self.feedback, &mut self.entries, &mut self.pixels);
        feedback.take(|copied, counts| {
            out.readbacks += 1;
            for e in entries.iter_mut().filter(|e| e.alive && copied >= e.since) {
                let range = e.page_base as usize..e.page_base as usize + e.table.entries().len();
                let (Some(c), Some(p)) = (counts.get(range.clone()), pixels.get_mut(range)) else {
                    continue;
                };
                if c.iter().any(|&c| c > 0) {
                    e.seen = Some(frame);
                } else if e.seen.is_none_or(|f| frame > f + SEEN_FRAMES) {
                    // Not seen for a while: its smoothed demand is gone (exactly 0).
                    if e.seen.take().is_some() {
                        p.fill(0.0);
                    }
                    continue;
                }
                // Smoothed: one readback samples a sixteenth of the pixels.
                for (p, &c) in p.iter_mut().zip(c) {
                    *p = 0.5 * *p + 0.5 * c as f32 * feedback::PIXELS_PER_COUNT;
                }
            }
        });
        // The plan goes through the textures seen lately only (by the GPU, or given CPU demand
        // this frame): the others' tiles are worth nothing now, and their slots are the first
        // given up (least recently used).
        self.seen.clear();
        self.seen
            .extend((0..self.entries.len() as u32).filter(|&i| {
                let e = &self.entries[i as usize];
                e.alive && (e.seen.is_some() || e.cpu_demand)
            }));
        self.plan_pixels.resize(self.pixels.len(), 0.0);
        for &i in &self.seen {
            let e = &mut self.entries[i as usize];
            let r = e.page_base as usize..e.page_base as usize + e.table.entries().len();
            if std::mem::take(&mut e.cpu_demand) {
                for ((out, &gpu), cpu) in self.plan_pixels[r.clone()]
                    .iter_mut()
                    .zip(&self.pixels[r.clone()])
                    .zip(&mut self.cpu_pixels[r])
                {
                    *out = gpu + std::mem::take(cpu);
                }
            } else {
                self.plan_pixels[r.clone()].copy_from_slice(&self.pixels[r]);
            }
        }
        let free_slots = self.slots.len() - 2 * self.alive();
        let (entries, pixels, seen) = (&self.entries, &self.plan_pixels, &self.seen);
        self.planner.plan_by(
            seen.len(),
            |k| {
                let e = &entries[seen[k] as usize];
                TileInput {
                    id: seen[k],
                    table: &e.table,
                    tiled_levels: e
                        .info
                        .tiles
                        .as_ref()
                        .map_or(0, |t| usize::from(t.tiled_levels)),
                    pixels: &pixels[e.page_base as usize..],
                    priority: e.priority,
                }
            },
            free_slots,
        );
        let kept_n = self.planner.kept().len();
        out.kept = kept_n;
        // Kept tiles are used this frame: the slots given up are the others'.
        for k in 0..kept_n {
            let w = self.planner.kept()[k];
            if !w.resident {
                continue;
            }
            if let Some(s) =
                self.entries[w.texture as usize]
                    .table
                    .slot(usize::from(w.level), w.tx, w.ty)
            {
                self.slots.touch(s, frame);
            }
        }
        // The tiles that have arrived go in (up to `max_loads`; the others wait a frame), then
        // the missing ones the plan keeps are asked for, worth most first.
        while out.loaded < max_loads {
            let Some(done) = self.reader.try_take() else {
                break;
            };
            let data = match done.data {
                Ok(d) => d,
                Err(e) => {
                    // Asked for again only after a back-off (a corrupt tile is not read
                    // every frame); its ancestor shows meanwhile.
                    tracing::warn!(error = %e, "a tile could not be read");
                    out.failed += 1;
                    self.reader.failed(done.key, self.frame + RETRY_FRAMES);
                    continue;
                }
            };
            let had_free = self.slots.free() > 0;
            if self.place(queue, done.key, &data)? {
                out.loaded += 1;
                out.evicted += usize::from(!had_free);
            }
        }
        for k in 0..kept_n {
            let w = self.planner.kept()[k];
            if w.resident {
                continue;
            }
            let e = &self.entries[w.texture as usize];
            let id = VtId {
                index: w.texture,
                generation: e.generation,
            };
            let key = (id, w.level, w.tx, w.ty);
            if e.table.slot(w.level.into(), w.tx, w.ty).is_none() {
                out.pending += 1;
                if self.reader.in_flight.len() < 4 * max_loads.max(1)
                    && !self.reader.backing_off(key, self.frame)
                {
                    self.reader.request(key, &e.info, &e.source);
                }
            }
        }
        self.flush(queue);
        self.last = out;
        self.frame += 1;
        queue.write_buffer(
            self.feedback.frame_uniform.buffer(),
            0,
            bytemuck::bytes_of(&[self.frame as u32, 0, 0, 0]),
        );
        Ok(out)
    }

    /// The pixel-octaves the tiles ranked `ranks` by worth in the last update's plan would save
    /// ([`TilePlanner::worth_of_ranks`]; rank 0 is the tile worth most, the slots a plan fills
    /// are those beside the tails): with [`VirtualTextures::bytes_per_slot`], what more slots
    /// would buy or the last ones hold, to weigh against what the bytes buy elsewhere
    /// ([`crate::low_level::Plan::memory_price`]).
    pub fn tile_worth(&mut self, ranks: std::ops::Range<usize>) -> f32 {
        self.planner.worth_of_ranks(ranks.start, ranks.end)
    }

    /// Tiles asked of the reader thread that have not come back yet (0: streaming is idle).
    pub fn reads_in_flight(&self) -> usize {
        self.reader.in_flight.len()
    }

    /// Slots in all, and free now.
    pub fn slots(&self) -> (usize, usize) {
        (self.slots.len(), self.slots.free())
    }

    /// Whether `id`'s GPU feedback has come back lately (else the CPU's demand is all it has).
    pub fn has_feedback(&self, id: VtId) -> bool {
        self.live(id).is_some_and(|e| e.seen.is_some())
    }

    /// Whether every texture has had GPU feedback lately: the tiles the plan keeps are what
    /// the view asks for, not the CPU's first guess (the whole texture at its nearest level).
    pub fn all_have_feedback(&self) -> bool {
        self.entries
            .iter()
            .filter(|e| e.alive)
            .all(|e| e.seen.is_some())
    }

    /// The block format of its tiles.
    pub fn format(&self) -> wgpu::TextureFormat {
        self.format
    }

    /// Bytes of one slot of the atlas.
    pub fn bytes_per_slot(&self) -> u64 {
        crate::budget::size::level_bytes(self.format, self.tile, self.tile).unwrap_or(0)
    }

    /// The fewest slots the textures' tails take (two a texture), and at least two.
    pub fn min_slots(&self) -> u32 {
        2 * (self.alive() as u32).max(1)
    }

    /// The most slots the textures could use: every tile of every tiled level, and the tails.
    pub fn max_useful_slots(&self) -> u32 {
        let tiles: usize = self
            .entries
            .iter()
            .filter(|e| e.alive)
            .map(|e| {
                let tiled = e.gpu.levels.iter().filter(|l| l.tiled == 1).count();
                (0..tiled)
                    .map(|l| {
                        let (x, y) = e.table.tiles(l);
                        (x * y) as usize
                    })
                    .sum::<usize>()
            })
            .sum();
        (tiles as u32).saturating_add(self.min_slots())
    }

    /// What the last [`VirtualTextures::update`] did.
    pub fn last_update(&self) -> TileUpdate {
        self.last
    }

    /// Tile side in texels.
    pub fn tile_size(&self) -> u32 {
        self.tile
    }

    /// Makes tile `(tx, ty)` of tiled level `level` of `id` resident: read from its file and
    /// written into a free slot, or the least recently used one (given up by its tile) when
    /// none is free. `Ok(false)` when it already was (it is marked used this frame), or when
    /// every slot is pinned or used this frame (nothing to give up).
    pub fn make_resident(
        &mut self,
        queue: &wgpu::Queue,
        id: VtId,
        level: usize,
        tx: u32,
        ty: u32,
    ) -> Result<bool> {
        let frame = self.frame;
        let e = self.entry(id)?;
        if let Some(s) = e.table.slot(level, tx, ty) {
            self.slots.touch(s, frame);
            return Ok(false);
        }
        let data = e.read(|mut f, info| read_tile(&mut f, info, level, tx, ty))?;
        self.place(queue, (id, level as u8, tx, ty), &data)
    }

    /// Puts a tile's blocks (read) into a free slot, or the least recently used one (its tile
    /// given up); false when every slot is pinned or used this frame.
    fn place(&mut self, queue: &wgpu::Queue, key: io::TileKey, data: &[u8]) -> Result<bool> {
        let (id, level, tx, ty) = key;
        // A tile of a texture removed since it was asked for.
        let Some(e) = self.live(id) else {
            return Ok(false);
        };
        let span = crate::ktx2::tile_span(&e.info, level.into(), tx, ty).map_err(|source| {
            Error::Ktx2 {
                path: "virtual texture".into(),
                source,
            }
        })?;
        if e.table.slot(level.into(), tx, ty).is_some() {
            return Ok(false);
        }
        let frame = self.frame;
        let slot = match self.slots.take(frame, false) {
            Some(s) => s,
            None => match self.slots.least_recent(frame) {
                Some((s, _)) => {
                    self.release_slot(s);
                    self.slots
                        .take(frame, false)
                        .expect("a slot was just given back")
                }
                None => return Ok(false),
            },
        };
        let (bw, bh) = self.format.block_dimensions();
        let dims = (span.blocks_wide * bw, span.blocks_high * bh);
        self.write_blocks(queue, slot, [0, 0], dims, data);
        self.owners[slot as usize] = Some(key);
        let e = &mut self.entries[id.index as usize];
        e.table.set(level.into(), tx, ty, Some(slot));
        e.dirty = true;
        Ok(true)
    }

    /// Gives up tile `(tx, ty)` of `level` of `id` (its slot freed); false when it was not
    /// resident or is part of the tail.
    pub fn evict(&mut self, id: VtId, level: usize, tx: u32, ty: u32) -> bool {
        if self.live(id).is_none() {
            return false;
        }
        let e = &mut self.entries[id.index as usize];
        match e.table.slot(level, tx, ty) {
            Some(s) if !e.tail.contains(&s) => {
                e.table.set(level, tx, ty, None);
                e.dirty = true;
                self.owners[s as usize] = None;
                self.slots.give_back(s);
                true
            }
            _ => false,
        }
    }

    /// The next frame: the slots used from now on count as used in it (the least recently used
    /// slot is the one given up for a new tile).
    pub fn next_frame(&mut self) {
        self.frame += 1;
    }

    /// Writes the page entries and infos of every texture whose residency changed (its whole
    /// table: a few KiB for a 16384² texture).
    pub fn flush(&mut self, queue: &wgpu::Queue) {
        for (i, e) in self.entries.iter_mut().enumerate() {
            // A removed texture's page entries may be another's now.
            if !std::mem::take(&mut e.dirty) || !e.alive {
                continue;
            }
            e.table.resolve();
            queue.write_buffer(
                self.pages.buffer(),
                u64::from(e.page_base) * 4,
                bytemuck::cast_slice(e.table.entries()),
            );
            queue.write_buffer(
                self.infos.buffer(),
                i as u64 * size_of::<GpuInfo>() as u64,
                bytemuck::bytes_of(&e.gpu),
            );
        }
    }

    /// Weighs `id`'s blur against the other textures' when the slots are shared (1 by default;
    /// 0: its tiles are never worth a slot). False for an unknown texture.
    pub fn set_priority(&mut self, id: VtId, priority: f32) -> bool {
        match self.live_mut(id) {
            Some(e) => {
                e.priority = if priority.is_finite() {
                    priority.max(0.0)
                } else {
                    1.0
                };
                true
            }
            None => false,
        }
    }

    /// The page table of `id`.
    pub fn table(&self, id: VtId) -> Option<&PageTable> {
        self.live(id).map(|e| &e.table)
    }

    /// The file description of `id`.
    pub fn info(&self, id: VtId) -> Option<&Ktx2Info> {
        self.live(id).map(|e| &*e.info)
    }

    /// The tile in slot `s` gives it up.
    fn release_slot(&mut self, s: u32) {
        if let Some((id, level, tx, ty)) = self.owners[s as usize].take()
            && let Some(e) = self.live_mut(id)
        {
            e.table.set(level.into(), tx, ty, None);
            e.dirty = true;
        }
        self.slots.give_back(s);
    }

    /// Writes `data` (blocks, row-major, of a `dims` texel region) at `origin` in slot `slot`.
    fn write_blocks(
        &self,
        queue: &wgpu::Queue,
        slot: u32,
        origin: [u32; 2],
        dims: (u32, u32),
        data: &[u8],
    ) {
        let (bw, bh) = self.format.block_dimensions();
        let (cols, rows) = (dims.0.div_ceil(bw), dims.1.div_ceil(bh));
        let block = self.format.block_copy_size(None).unwrap_or(16);
        let (sx, sy) = (slot % self.slots_x, slot / self.slots_x);
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: self.atlas.texture(),
                mip_level: 0,
                origin: wgpu::Origin3d {
                    x: sx * self.tile + origin[0],
                    y: sy * self.tile + origin[1],
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(cols * block),
                rows_per_image: Some(rows),
            },
            wgpu::Extent3d {
                width: cols * bw,
                height: rows * bh,
                depth_or_array_layers: 1,
            },
        );
    }
}

/// The WGSL of `vt_sample` with its bindings in group `group` (see [`VirtualTextures`]): to put
/// in front of a fragment shader that calls `vt_sample(id, uv, bias)`. Its cost per call: the
/// level from the derivatives, one page read for the level where `uv` falls, then a bilinear
/// filter by hand on two levels: 8 page reads and 8 texel loads, about 100 ALU operations.
pub fn vt_wgsl(group: u32) -> String {
    crate::shaders::VT.replace("@group(0)", &format!("@group({group})"))
}
