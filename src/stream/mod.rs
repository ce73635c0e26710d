//! Texture streaming: residency of every streamed texture's mip chain, IO workers, and the upload
//! scheduler, executing the [`crate::budget::planner`]'s plans under its executor contract, and
//! handing out each texture's current view.
//!
//! A streamed texture is one GPU texture holding a contiguous range of its mip chain,
//! `resident_level..level_count`, starting at a level whose size is a multiple of the format's
//! block. Changing the range builds a new texture (wgpu has no sparse textures): levels already
//! resident are copied GPU-side, new ones are uploaded, the view is swapped (its version changes,
//! see [`Streamer::texture_view`]; whoever draws owns the bind groups), and the old
//! texture is destroyed once the commands that read it are submitted (wgpu frees its memory when
//! the GPU is done).
//!
//! - Shrinks are submitted on their own, one at a time, in the plan's order; one whose transient
//!   copy would pass the budget (earlier staging still held) waits a frame.
//! - Grows are built one level at a time, smallest first, textures in order of quality deficit.
//!   A step's copies and its uploads (bands of block rows through the [`StagingRing`], within the
//!   frame's byte and time caps) are recorded in one encoder, submitted before the frame's draw;
//!   one step at a time is under way, and a level larger than a frame's cap spans frames. Every
//!   step starts only when the new texture fits under the planner's limit *as the ledger counts
//!   it* (replaced textures waiting for the submit included), so the budget holds whatever is
//!   alive.
//! - A driver out-of-memory is reported to the owner of the budget loop
//!   ([`Streamer::take_out_of_memory`]), which lowers the effective budget to what the driver
//!   gave.
//!
//! The streamer executes plans; it does not make them: [`crate::BudgetManager`] owns the planner
//! and the frame's budget loop.

pub mod io;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::budget::Category;
use crate::budget::ledger::Charge;
use crate::budget::planner::{PlanTexture, PlannerConfig, Transition, TransitionKind};
use crate::budget::size;
use crate::gpu::staging::StagingRing;
use crate::gpu::{GpuContext, TrackedTexture, upload};
use crate::ktx2::{Ktx2Info, ReadLimits};
use crate::{Error, Result};
pub use io::TextureSource;
use io::{IoPool, IoRequest};

/// A streamed texture. Generational: after the texture is removed, the handle is stale and every
/// call with it fails softly (returns `None` / `false`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureHandle {
    index: u32,
    generation: u32,
}

impl TextureHandle {
    /// The slot index (stable while the texture lives; the planner's texture id).
    pub fn index(self) -> u32 {
        self.index
    }
}

/// Per-texture options.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct TextureOptions {
    /// Weight of this texture's blur against the others' (1 = normal; a hero texture 4).
    pub priority: f32,
}

impl Default for TextureOptions {
    fn default() -> Self {
        Self { priority: 1.0 }
    }
}

impl TextureOptions {
    /// Options with this priority.
    pub fn with_priority(priority: f32) -> Self {
        Self { priority }
    }
}

/// Streaming configuration. `Default` suits a desktop game; every field is documented with why.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StreamConfig {
    /// Levels of at most this size (largest side) form the floor tail that is always resident
    /// (default 32). Why: the tail of a BC7 chain from 32x32 down is ~1.4 KiB, so thousands of
    /// textures keep a recognisable image for the price of one large mip, and it is kept on the
    /// CPU too, so an eviction can rebuild it without IO.
    pub floor_size: u32,
    /// Most bytes uploaded per frame (default 16 MiB). Why: uploads cost bus and driver time on the
    /// render thread; a cap keeps frame times flat while streaming catches up.
    pub upload_bytes_per_frame: u64,
    /// Most milliseconds spent building textures per frame (default 4). Why: the byte cap alone
    /// does not bound the time on slow drivers (lavapipe copies on the CPU).
    pub upload_ms_per_frame: f32,
    /// IO worker threads (default 2).
    pub io_threads: usize,
    /// Requests queued at most (default 64). Why: a bounded queue keeps memory bounded and lets
    /// stale requests be cancelled before they are read.
    pub io_queue: usize,
    /// Limits applied to the untrusted KTX2 files.
    pub read_limits: ReadLimits,
    /// The planner's hysteresis settings.
    pub planner: PlannerConfig,
    /// Deterministic mode (headless runs, tests): each frame waits for every outstanding read and
    /// ignores the millisecond cap, so that a run is the same every time. Off for games: it
    /// blocks the frame on IO.
    pub deterministic: bool,
    /// Frames without an out-of-memory error after which the effective budget the driver's last
    /// out-of-memory set is raised by an eighth (default 1800, 30 s at 60 fps;
    /// 0 never raises it). Why: memory another application held may come back, and a game
    /// should not stay degraded for good after one bad moment.
    pub oom_probe_frames: u32,
}

impl StreamConfig {
    /// This configuration with deterministic mode on or off (see [`StreamConfig::deterministic`]).
    pub fn with_deterministic(mut self, on: bool) -> Self {
        self.deterministic = on;
        self
    }
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            floor_size: 32,
            upload_bytes_per_frame: 16 << 20,
            upload_ms_per_frame: 4.0,
            io_threads: 2,
            io_queue: 64,
            read_limits: ReadLimits::default(),
            planner: PlannerConfig::default(),
            deterministic: false,
            oom_probe_frames: 1800,
        }
    }
}

/// What the streamer did in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct StreamFrameStats {
    /// Bytes uploaded from the CPU this frame.
    pub uploaded_bytes: u64,
    /// Milliseconds spent building textures this frame.
    pub upload_ms: f32,
    /// Grows completed this frame (their last step built).
    pub grows: u32,
    /// Intermediate steps of grows built this frame: a texture gained its next finer level and
    /// has more to come (grows are built one level at a time, smallest first).
    pub steps: u32,
    /// Textures rebuilt smaller (GPU copy) this frame.
    pub shrinks: u32,
    /// Textures evicted to their floor (or to nothing) this frame.
    pub evictions: u32,
    /// In-flight grows cancelled this frame.
    pub cancels: u32,
    /// In-flight grows retargeted to a finer level this frame (what they had read or built
    /// was kept).
    pub retargets: u32,
    /// Reads requested from the IO workers this frame.
    pub io_requests: u32,
    /// Reads that failed (IO error, corrupt level) this frame; the texture keeps what it had.
    pub io_errors: u32,
    /// Grows waiting for data or for room (queue length).
    pub pending: u32,
    /// Microseconds the planner took.
    pub planner_us: f32,
    /// Out-of-memory errors from the driver this frame.
    pub oom_events: u32,
    /// Shrinks postponed to the next frame: their transient copy would have passed the budget
    /// while an earlier frame's upload staging was still held.
    pub deferred: u32,
}

/// A texture's state, for the overlay's table and the reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TextureInfo {
    /// Slot index.
    pub index: u32,
    /// Label (file name).
    pub label: String,
    /// Full size.
    pub width: u32,
    /// Full size.
    pub height: u32,
    /// Levels in the full chain.
    pub level_count: u8,
    /// Finest level resident.
    pub resident_level: u8,
    /// Finest level wanted (fractional; >= level_count when not visible).
    pub wanted_level: f32,
    /// Finest level being streamed in, if a grow is in flight.
    pub in_flight_level: Option<u8>,
    /// Bytes resident on the GPU.
    pub resident_bytes: u64,
    /// The last IO or decode error, if any.
    pub error: Option<String>,
}

/// Versions of the views handed out: unique across every texture and rebuild (0 is the fallback).
static NEXT_VIEW_VERSION: AtomicU64 = AtomicU64::new(1);

struct Resident {
    tex: TrackedTexture,
    view: wgpu::TextureView,
    version: u64,
}

impl Resident {
    fn new(tex: TrackedTexture) -> Self {
        Self {
            view: tex.create_view(),
            version: NEXT_VIEW_VERSION.fetch_add(1, Ordering::Relaxed),
            tex,
        }
    }
}

struct InFlight {
    to: u8,
    from: u8,
    cancel: Arc<AtomicBool>,
    queued: bool,
    data: Option<Vec<Vec<u8>>>,
}

/// A grow step being built. Its new texture exists (the old one alive next to it, as the planner
/// counted), the levels the old one had are copied, and the new levels are uploaded in bands of
/// block rows, within each frame's upload cap and the room left under the budget: a level larger
/// than the cap takes several frames, and its staging never needs more than one band.
struct Step {
    slot: u32,
    /// First level of the new texture.
    to: u8,
    tex: TrackedTexture,
    /// The level being uploaded, and its next row of blocks; `level < to` when all are done.
    level: i16,
    row: u32,
    /// The grow's IO data: levels `data_first..`.
    data: Vec<Vec<u8>>,
    data_first: u8,
}

struct Slot {
    generation: u32,
    alive: bool,
    label: String,
    source: TextureSource,
    info: Arc<Ktx2Info>,
    floor_data: Vec<Vec<u8>>,
    gpu: Option<Resident>,
    inflight: Option<InFlight>,
    error: Option<String>,
    /// After a failed read, the texture is not grown again before this frame.
    backoff_until: u64,
}

impl Slot {
    /// The level its grow's steps go towards now: the finest level read, which is short of the
    /// plan's `in_flight_level` while a retargeted grow waits for its finer levels.
    fn step_target(&self, p: &PlanTexture) -> u8 {
        self.inflight.as_ref().map_or(p.in_flight_level, |f| f.to)
    }
}

/// The streamer: every streamed texture, the IO pool and the upload scheduler. It executes the
/// plans of [`crate::BudgetManager`] (the planner's transitions) and hands out views.
pub struct Streamer {
    config: StreamConfig,
    slots: Vec<Slot>,
    free: Vec<u32>,
    plan_tex: Vec<PlanTexture>,
    /// Textures were added or removed since [`Streamer::take_changed`].
    changed: bool,
    /// The ledger's total at the out-of-memory errors not yet taken by the budget's owner (the
    /// least of them): builds stay under it until the owner has lowered the budget.
    oom_at: Option<u64>,
    io: IoPool,
    /// Slots whose grow data arrived, oldest first.
    ready: Vec<u32>,
    staging: Vec<(u64, Charge)>,
    completed_frame: Arc<AtomicU64>,
    frame_stats: StreamFrameStats,
    /// The effective budget of the last plan.
    plan_budget: u64,
    /// The grow step whose upload is under way (one at a time: the planner counts one old-and-new
    /// pair alive at once).
    step: Option<Step>,
    /// Persistently mapped staging for the IO levels' uploads (sized from the headroom).
    ring: StagingRing,
    /// Textures replaced or dropped while the ring's encoder may still copy into or out of them:
    /// destroyed once it is submitted.
    retired: Vec<TrackedTexture>,
    fallback: Option<(TrackedTexture, wgpu::TextureView)>,
    /// Reads queued and not yet answered.
    outstanding: usize,
    /// The frame of the last plan.
    frame: u64,
}

impl std::fmt::Debug for Streamer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamer")
            .field("textures", &(self.slots.len() - self.free.len()))
            .field("frame_stats", &self.frame_stats)
            .finish()
    }
}

/// Frames a texture waits after a failed read before it is grown again.
const READ_RETRY_FRAMES: u64 = 300;

fn mip_size(format: wgpu::TextureFormat, w: u32, h: u32, level: u8) -> wgpu::Extent3d {
    let (lw, lh, _) = size::mip_extent(w, h, 1, wgpu::TextureDimension::D2, u32::from(level));
    wgpu::Extent3d {
        width: lw,
        height: lh,
        depth_or_array_layers: 1,
    }
    .physical_size(format)
}

/// Records GPU copies of every level both textures hold, from `old` (whose mip 0 is chain level
/// `old_first`) into `new` (mip 0 = level `new_first`).
fn copy_levels(
    enc: &mut wgpu::CommandEncoder,
    info: &Ktx2Info,
    old: &wgpu::Texture,
    old_first: u8,
    new: &wgpu::Texture,
    new_first: u8,
) {
    let count = old_first.saturating_add(old.mip_level_count() as u8);
    for level in old_first.max(new_first)..count {
        enc.copy_texture_to_texture(
            wgpu::TexelCopyTextureInfo {
                texture: old,
                mip_level: u32::from(level - old_first),
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyTextureInfo {
                texture: new,
                mip_level: u32::from(level - new_first),
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            mip_size(info.format, info.width, info.height, level),
        );
    }
}

impl Streamer {
    /// A streamer with no textures.
    pub fn new(config: StreamConfig) -> Self {
        Self {
            io: IoPool::new(config.io_threads, config.io_queue),
            changed: false,
            oom_at: None,
            config,
            slots: Vec::new(),
            free: Vec::new(),
            plan_tex: Vec::new(),
            ready: Default::default(),
            staging: Vec::new(),
            completed_frame: Arc::new(AtomicU64::new(0)),
            frame_stats: StreamFrameStats::default(),
            plan_budget: u64::MAX,
            step: None,
            ring: StagingRing::default(),
            retired: Vec::new(),
            fallback: None,
            outstanding: 0,
            frame: 0,
        }
    }

    /// Registers a KTX2 texture: reads and validates its header and level index (not its level
    /// data), reads its floor tail and makes it resident at once when `total + floor <= budget`
    /// (otherwise the planner brings it in when there is room).
    pub fn add_texture(
        &mut self,
        ctx: &GpuContext,
        source: TextureSource,
        opts: TextureOptions,
        budget: u64,
    ) -> Result<TextureHandle> {
        let info = match &source {
            TextureSource::Path(p) => crate::ktx2::read_info(p, &self.config.read_limits)?,
            TextureSource::Bytes(b) => Ktx2Info::parse(b, b.len() as u64, &self.config.read_limits)
                .map_err(|e| Error::Ktx2 {
                    path: "<memory>".into(),
                    source: e,
                })?,
        };
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
        };
        if !ctx.bc_supported() {
            return Err(Error::InvalidResource {
                label,
                reason: "the adapter cannot sample BC7 textures (no TEXTURE_COMPRESSION_BC)".into(),
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
        let info = Arc::new(info);
        let floor_data = source
            .read_levels(&info, floor_level..count, &AtomicBool::new(false))
            .map_err(|reason| Error::InvalidResource {
                label: label.clone(),
                reason,
            })?;
        let level_bytes: Vec<u64> = (0..count)
            .map(|l| info.level_size(usize::from(l)))
            .collect();
        let mut pt = PlanTexture::new(&level_bytes, floor_level);
        pt.base_levels = bases;
        pt.priority = opts.priority;
        let floor_bytes = pt.bytes_from(floor_level);

        let (index, generation) = match self.free.pop() {
            Some(i) => (i, self.slots[i as usize].generation.wrapping_add(1)),
            None => (self.slots.len() as u32, 0),
        };
        let mut slot = Slot {
            generation,
            alive: true,
            label,
            source,
            info,
            floor_data,
            gpu: None,
            inflight: None,
            error: None,
            backoff_until: 0,
        };
        if ctx.ledger().total_bytes().saturating_add(floor_bytes) <= budget {
            match self.create_from_cpu(ctx, &slot, floor_level) {
                Ok(r) => slot.gpu = Some(r),
                Err(e) => {
                    tracing::warn!(texture = %slot.label, error = %e, "floor not made resident");
                    pt.resident_level = count;
                    pt.in_flight_level = count;
                }
            }
        } else {
            pt.resident_level = count;
            pt.in_flight_level = count;
        }
        if index as usize == self.slots.len() {
            self.slots.push(slot);
            self.plan_tex.push(pt);
        } else {
            self.slots[index as usize] = slot;
            self.plan_tex[index as usize] = pt;
        }
        self.changed = true;
        Ok(TextureHandle { index, generation })
    }

    /// Adds a texture the caller made and filled (fully resident, not streamed, not planned): a
    /// UI atlas, a texture that must never blur, or a baseline to compare streaming with. It is
    /// charged to the ledger as `tex` was created (use the tracked constructors of
    /// [`GpuContext`]); the planner counts its bytes as fixed. Its view is handed out like any
    /// other's.
    pub fn add_resident(&mut self, tex: TrackedTexture, label: &str) -> TextureHandle {
        let (w, h) = (tex.texture().width(), tex.texture().height());
        let info = Ktx2Info::resident(tex.texture().format(), w, h);
        let (index, generation) = match self.free.pop() {
            Some(i) => (i, self.slots[i as usize].generation.wrapping_add(1)),
            None => (self.slots.len() as u32, 0),
        };
        let slot = Slot {
            generation,
            alive: true,
            label: label.to_owned(),
            source: TextureSource::Bytes(Arc::from(Vec::new())),
            info: Arc::new(info),
            floor_data: Vec::new(),
            gpu: Some(Resident::new(tex)),
            inflight: None,
            error: None,
            backoff_until: 0,
        };
        if index as usize == self.slots.len() {
            self.slots.push(slot);
            self.plan_tex.push(PlanTexture::default());
        } else {
            self.slots[index as usize] = slot;
            self.plan_tex[index as usize] = PlanTexture::default();
        }
        self.changed = true;
        TextureHandle { index, generation }
    }

    fn slot(&self, h: TextureHandle) -> Option<&Slot> {
        self.slots
            .get(h.index as usize)
            .filter(|s| s.alive && s.generation == h.generation)
    }

    /// Width of level 0 of a live texture.
    pub fn texture_width(&self, h: TextureHandle) -> Option<u32> {
        self.slot(h).map(|s| s.info.width)
    }

    /// Width over height of the image a live texture shows: its `mipflowSourceSize` (the size
    /// before `mipflow cook --resize` resampled it) when it has one, else its own size.
    pub fn texture_aspect(&self, h: TextureHandle) -> Option<f32> {
        let info = &self.slot(h)?.info;
        let source = info.key_value_str("mipflowSourceSize").and_then(|v| {
            let (w, h) = v.trim_end_matches('\0').split_once('x')?;
            Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?))
        });
        let (w, h) = source
            .filter(|&(w, h)| w > 0 && h > 0)
            .unwrap_or((info.width, info.height));
        Some(w as f32 / h.max(1) as f32)
    }

    /// Whether the handle still names a live texture.
    pub fn contains(&self, h: TextureHandle) -> bool {
        self.slot(h).is_some()
    }

    /// Removes a texture: its GPU memory is freed at once, its reads are cancelled, and the handle
    /// becomes stale. Returns false for a stale handle.
    pub fn remove_texture(&mut self, h: TextureHandle) -> bool {
        if self.slot(h).is_none() {
            return false;
        }
        let i = h.index as usize;
        self.abort_step(i);
        let s = &mut self.slots[i];
        if let Some(f) = s.inflight.take() {
            f.cancel.store(true, Ordering::Release);
        }
        s.gpu = None;
        s.alive = false;
        s.floor_data = Vec::new();
        self.plan_tex[i] = PlanTexture::default();
        self.ready.retain(|&r| r as usize != i);
        self.free.push(h.index);
        self.changed = true;
        true
    }

    /// The view to draw a texture with, and its version: its resident levels
    /// (`resident_level..`, as mips `0..`), or a 1x1 grey fallback (version 0) while nothing is
    /// resident. The version changes whenever the view does (every residency change builds a new
    /// texture): rebuild a bind group only when it differs from the one the group was made with.
    /// `None` for a stale handle, or before [`Streamer::ensure_fallback`] for a texture with
    /// nothing resident.
    pub fn texture_view(&self, h: TextureHandle) -> Option<(&wgpu::TextureView, u64)> {
        let s = self.slot(h)?;
        match &s.gpu {
            Some(r) => Some((&r.view, r.version)),
            None => self.fallback.as_ref().map(|(_, v)| (v, 0)),
        }
    }

    /// The first mip level of the chain a texture's view starts at (its finest resident level;
    /// the level count when nothing is resident). A game's shader adds it to the level it
    /// computes from its UVs when it samples with an explicit level.
    pub fn resident_level(&self, h: TextureHandle) -> Option<u8> {
        self.slot(h)?;
        Some(self.plan_tex[h.index as usize].resident_level)
    }

    /// The GPU texture holding a live texture's resident levels (`resident_level..`, as its mips
    /// `0..`), if any is resident. For tools and tests: it is replaced at every rebuild.
    pub fn resident_texture(&self, h: TextureHandle) -> Option<&wgpu::Texture> {
        self.slot(h)?.gpu.as_ref().map(|r| r.tex.texture())
    }

    /// The planner's view of every texture (index = slot), to fill in `wanted_level` and
    /// `screen_pixels` before [`Streamer::plan`]. Dead slots have `level_count == 0`.
    pub fn plan_textures_mut(&mut self) -> &mut [PlanTexture] {
        &mut self.plan_tex
    }

    /// The planner's view of every texture.
    pub fn plan_textures(&self) -> &[PlanTexture] {
        &self.plan_tex
    }

    /// Whether textures were added or removed since the last call (the planner's cached state
    /// is then stale).
    pub(crate) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// After out-of-memory errors from the driver for the streamer's creations since the last
    /// call: the ledger's total at them (what the driver really gave). The owner of the budget
    /// lowers the effective budget to it.
    pub(crate) fn take_out_of_memory(&mut self) -> Option<u64> {
        self.oom_at.take()
    }

    /// Counts an out-of-memory error the budget's owner handled (render targets, say) in this
    /// frame's [`StreamFrameStats::oom_events`].
    pub(crate) fn count_out_of_memory(&mut self) {
        self.frame_stats.oom_events += 1;
    }

    /// This frame's streaming figures.
    pub fn frame_stats(&self) -> &StreamFrameStats {
        &self.frame_stats
    }

    /// Textures alive now.
    pub fn texture_count(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Every live texture's state (allocates; for the overlay and reports, not the frame path).
    pub fn texture_infos(&self) -> Vec<TextureInfo> {
        self.slots
            .iter()
            .zip(&self.plan_tex)
            .enumerate()
            .filter(|(_, (s, _))| s.alive)
            .map(|(i, (s, p))| TextureInfo {
                index: i as u32,
                label: s.label.clone(),
                width: s.info.width,
                height: s.info.height,
                level_count: p.level_count,
                resident_level: p.resident_level,
                wanted_level: p.wanted_level,
                in_flight_level: p.busy.then_some(p.in_flight_level),
                resident_bytes: s.gpu.as_ref().map_or(0, |r| r.tex.bytes()),
                error: s.error.clone(),
            })
            .collect()
    }

    /// Bytes of the levels each visible texture wants (rounded to whole levels) and of those it
    /// has, for the reports: (resident-and-wanted, wanted).
    pub fn wanted_bytes(&self) -> (u64, u64) {
        let mut have = 0u64;
        let mut want = 0u64;
        for p in &self.plan_tex {
            // Not visible: infinite, NaN, or past the chain.
            let visible = p.wanted_level.is_finite() && p.wanted_level < f32::from(p.level_count);
            if p.level_count == 0 || !visible {
                continue;
            }
            let w = (p.wanted_level.max(0.0).floor() as u8).min(p.level_count);
            want += p.bytes_from(w);
            have += p.bytes_from(w.max(p.resident_level));
        }
        (have, want)
    }

    /// Starts a frame: releases staging whose uploads the GPU has finished, and takes the IO
    /// workers' finished reads (never blocks).
    pub fn begin_frame(&mut self, ctx: &GpuContext) {
        self.frame_stats = StreamFrameStats::default();
        if self.config.deterministic && self.ring.busy() {
            // Staging chunks come back when the GPU is done with them: waiting for it keeps the
            // upload pace the same on every run (deterministic mode blocks on IO anyway).
            let _ = ctx.wait_idle();
        } else {
            let _ = ctx.device().poll(wgpu::PollType::Poll);
        }
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
            if r.levels.as_ref().is_err_and(|e| e == "cancelled") {
                continue;
            }
            let Some(slot) = self.slots.get_mut(r.slot as usize) else {
                continue;
            };
            if !slot.alive || slot.generation != r.generation {
                continue;
            }
            let Some(f) = slot.inflight.as_mut() else {
                continue;
            };
            if !Arc::ptr_eq(&f.cancel, &r.cancel) || f.cancel.load(Ordering::Acquire) {
                continue;
            }
            match r.levels {
                Ok(levels) => {
                    f.data = Some(levels);
                    self.ready.push(r.slot);
                }
                Err(e) => {
                    // Keep what the texture has; report; the planner may ask again later.
                    tracing::warn!(texture = %slot.label, error = %e, "streaming read failed");
                    slot.error = Some(e);
                    slot.inflight = None;
                    // Why a back-off: a corrupt file stays corrupt; retrying every frame would
                    // spend IO on it forever. A transient error (a file being replaced) heals
                    // after the back-off.
                    slot.backoff_until = self.frame + READ_RETRY_FRAMES;
                    let p = &mut self.plan_tex[r.slot as usize];
                    p.busy = false;
                    p.in_flight_level = p.resident_level;
                    self.frame_stats.io_errors += 1;
                }
            }
        }
        // The build order does not depend on the order reads finish in: `build_ready` sorts.
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
        let burst = (self.config.upload_bytes_per_frame * 2 / chunk).clamp(4, 256) as usize;
        self.ring.set_size(chunk, 4, burst);
        for (s, p) in self.slots.iter().zip(self.plan_tex.iter_mut()) {
            if s.backoff_until > frame {
                // Do not ask for levels finer than those it has while backing off.
                p.wanted_level = p.wanted_level.max(f32::from(p.resident_level));
            }
        }
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
                return;
            }
        }
        match t.kind {
            TransitionKind::Rescale => {}
            TransitionKind::Cancel => {
                if let Some(f) = self.slots[i].inflight.take() {
                    f.cancel.store(true, Ordering::Release);
                }
                self.ready.retain(|&r| r as usize != i);
                let p = &mut self.plan_tex[i];
                p.busy = false;
                p.in_flight_level = p.resident_level;
                self.frame_stats.cancels += 1;
            }
            TransitionKind::Evict => {
                let count = self.plan_tex[i].level_count;
                let floor = self.plan_tex[i].floor_level;
                self.slots[i].gpu = None; // destroyed first: no transient bytes
                let to = if t.to >= count { count } else { floor };
                let mut resident = count;
                if to < count {
                    match self.create_from_cpu(ctx, &self.slots[i], to) {
                        Ok(r) => {
                            self.slots[i].gpu = Some(r);
                            resident = to;
                        }
                        Err(e) => self.note_create_error(ctx, i, &e),
                    }
                }
                let p = &mut self.plan_tex[i];
                p.resident_level = resident;
                p.in_flight_level = resident;
                self.frame_stats.evictions += 1;
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
                let during = total.saturating_add(self.plan_tex[i].bytes_from(t.to));
                if total <= self.plan_budget && during > self.plan_budget {
                    self.frame_stats.deferred += 1;
                    return;
                }
                match self.rebuild(ctx, i, t.to, from) {
                    Ok(()) => self.frame_stats.shrinks += 1,
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
                });
                if t.to >= read_end {
                    self.ready.push(i as u32);
                }
                let p = &mut self.plan_tex[i];
                p.busy = true;
                p.in_flight_level = t.to;
            }
        }
    }

    /// A `Grow` on a busy texture: its grow goes on to the finer level `to`. What it has read, and
    /// a step under way, stay; the finer levels are read with the others if their read was not
    /// queued yet, else once the levels in flight have landed (see `finish_step`). Returns
    /// false when the texture has no such grow (the `Grow` then starts afresh).
    fn retarget(&mut self, i: usize, to: u8) -> bool {
        let p = &mut self.plan_tex[i];
        let Some(f) = self.slots[i].inflight.as_mut() else {
            return false;
        };
        if !p.busy || to >= p.in_flight_level || f.from != p.resident_level {
            return false;
        }
        p.in_flight_level = to;
        if !f.queued && f.data.is_none() {
            f.to = to;
        }
        self.frame_stats.retargets += 1;
        true
    }

    /// Queues the reads of every grow still waiting for data (never blocks: a full queue is
    /// retried next frame).
    pub fn issue_io(&mut self) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            let Some(f) = s.inflight.as_mut() else {
                continue;
            };
            if f.queued || f.data.is_some() {
                continue;
            }
            let floor = self.plan_tex[i].floor_level;
            let req = IoRequest {
                slot: i as u32,
                generation: s.generation,
                first: f.to,
                end: f.from.min(floor),
                source: s.source.clone(),
                info: s.info.clone(),
                cancel: f.cancel.clone(),
            };
            match self.io.try_request(req) {
                Ok(()) => {
                    f.queued = true;
                    self.outstanding += 1;
                    self.frame_stats.io_requests += 1;
                }
                Err(_) => break,
            }
        }
        self.frame_stats.pending =
            self.slots.iter().filter(|s| s.inflight.is_some()).count() as u32;
    }

    /// Builds grows whose data has arrived, one step at a time: a step adds the next finer level
    /// the texture may start at (see [`PlanTexture::base_levels`]), so the smallest missing
    /// level of each texture comes first and a frame's upload cap is spread over many textures
    /// before any of them gets its largest level. Textures go in order of quality deficit (the
    /// missing octaves times their screen pixels and priority), largest first; then by the
    /// smaller step. Each step is built only when `total + new texture <= limit` and
    /// `total + new texture + its staging <= budget`; one that does not fit waits.
    /// `frame` tags the staging charges, released once the GPU has finished that frame.
    pub fn build_ready(
        &mut self,
        ctx: &GpuContext,
        frame: u64,
        limit: u64,
        budget: u64,
    ) {
        let t0 = Instant::now();
        self.build_steps(ctx, frame, limit, budget, t0);
        // The bands recorded this frame go to the GPU before the frame's draw; what they read or
        // wrote may be destroyed after that.
        self.ring.submit(ctx, frame);
        self.retired.clear();
        self.frame_stats.upload_ms = t0.elapsed().as_secs_f32() * 1e3;
    }

    fn build_steps(
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
            let step = p.bytes_from(next) - p.bytes_from(p.resident_level);
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
                let new_bytes = p.bytes_from(next);
                let elapsed_ms = t0.elapsed().as_secs_f32() * 1e3;
                let over_time =
                    !self.config.deterministic && elapsed_ms > self.config.upload_ms_per_frame;
                if self.frame_stats.uploaded_bytes >= self.config.upload_bytes_per_frame
                    || over_time
                {
                    break 'passes;
                }
                let total = ctx.ledger().total_bytes();
                // The planner's contract: the new texture fits under its limit. The floor tail
                // (from the CPU) is written with the texture; the IO levels go in bands, each
                // only when its staging fits under the budget.
                let floor_upload = if from > p.floor_level {
                    p.bytes_from(p.floor_level.max(next))
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
    fn end_grow(&mut self, i: usize) {
        self.slots[i].inflight = None;
        self.ready.retain(|&r| r as usize != i);
        let p = &mut self.plan_tex[i];
        p.busy = false;
        p.in_flight_level = p.resident_level;
    }

    /// Drops the step under way if it is texture `i`'s (its new texture is destroyed; the old one
    /// is still bound). Returns whether there was one.
    fn abort_step(&mut self, i: usize) -> bool {
        if self.step.as_ref().is_some_and(|st| st.slot as usize == i) {
            self.step = None;
            true
        } else {
            false
        }
    }

    /// Starts a step of texture `i`'s grow: creates the texture of levels `to..`, copies the
    /// levels the old texture has, writes the floor tail from the CPU, and leaves the IO levels
    /// to [`Streamer::continue_step`].
    fn begin_step(
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
        for level in to.max(floor)..old_first.min(count) {
            let Some(data) = slot.floor_data.get(usize::from(level - floor)) else {
                return Err(Error::InvalidResource {
                    label: slot.label.clone(),
                    reason: format!("floor level {level} has no data"),
                });
            };
            upload::write_level(ctx, tex.texture(), u32::from(level - to), data)?;
            staged += data.len() as u64;
        }
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
        if staged > 0 {
            // queue.write_texture holds a staging copy until the GPU has consumed it.
            let charge = ctx
                .ledger()
                .charge(Category::Staging, staged, "texture upload staging");
            self.staging.push((frame, charge));
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
    fn continue_step(
        &mut self,
        ctx: &GpuContext,
        budget: u64,
        t0: Instant,
    ) -> bool {
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
            if over_time || uploaded >= self.config.upload_bytes_per_frame {
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
            let data = st
                .data
                .get(usize::from(level - st.data_first))
                .map_or(&[][..], Vec::as_slice);
            let start = st.row as usize * row_bytes as usize;
            let end = start + n as usize * row_bytes as usize;
            let result = match data.get(start..end) {
                Some(band) => self
                    .ring
                    .write_rows(ctx, st.tex.texture(), mip, st.row, band, room),
                None => Err(Error::InvalidResource {
                    label: self.slots[i].label.clone(),
                    reason: format!("level {level} has {} bytes, too few", data.len()),
                }),
            };
            let written = match result {
                Ok(0) => return false, // no staging chunk free or affordable: next frame
                Ok(w) => w,
                Err(e) => {
                    if let Some(st) = self.step.take() {
                        self.retired.push(st.tex);
                    }
                    self.note_create_error(ctx, i, &e);
                    self.end_grow(i);
                    return true;
                }
            };
            st.row += written;
            self.frame_stats.uploaded_bytes += u64::from(written) * row_bytes64;
        }
    }

    /// Binds the finished step's texture (the old one is destroyed now that its copies are
    /// submitted) and moves the grow on: done, or waiting for its next step.
    fn finish_step(&mut self) {
        let Some(st) = self.step.take() else {
            return;
        };
        let i = st.slot as usize;
        let old = self.slots[i].gpu.replace(Resident::new(st.tex));
        // The old texture's copies are recorded, not yet submitted: it goes after the submit.
        if let Some(old) = old {
            self.retired.push(old.tex);
        }
        self.slots[i].error = None;
        self.plan_tex[i].resident_level = st.to;
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
                f.data = from_cpu.then(Vec::new);
            }
            if !from_cpu {
                self.ready.retain(|&r| r as usize != i);
            }
        } else {
            self.frame_stats.grows += 1;
            self.end_grow(i);
        }
    }

    /// The level a grow of `p` from `from` towards `to` reaches in its next step: the floor
    /// first when nothing is resident (its data is on the CPU), then the next finer level the
    /// texture may start at, and `to` at the latest.
    fn next_step(p: &PlanTexture, from: u8, to: u8) -> u8 {
        if from > p.floor_level {
            return p.floor_level.max(to);
        }
        (to..from)
            .rev()
            .find(|&l| p.base_allowed(l))
            .unwrap_or(to)
            .max(to)
    }

    /// Call after the frame's last submit: the frame's staging is released once the GPU has
    /// finished it.
    pub fn end_frame(&mut self, ctx: &GpuContext, frame: u64) {
        let done = self.completed_frame.clone();
        ctx.queue().on_submitted_work_done(move || {
            done.fetch_max(frame, Ordering::AcqRel);
        });
    }

    fn note_create_error(&mut self, ctx: &GpuContext, i: usize, e: &Error) {
        self.slots[i].error = Some(e.to_string());
        if let Error::OutOfMemory { .. } = e {
            // The next plan evicts down to the new limit (the cap less the staging headroom)
            // and retries the texture if it is still worth its bytes: no back-off, the cap is
            // what keeps it from failing again.
            tracing::warn!(texture = %self.slots[i].label, error = %e, "out of GPU memory");
            let total = ctx.ledger().total_bytes();
            self.oom_at = Some(self.oom_at.map_or(total, |t| t.min(total)));
            self.frame_stats.oom_events += 1;
            return;
        }
        tracing::warn!(texture = %self.slots[i].label, error = %e, "texture transition failed");
        // Same back-off as a failed read: a transition that failed for another reason (a driver
        // refusing a size) would fail again if retried every frame.
        self.slots[i].backoff_until = self.frame + READ_RETRY_FRAMES;
    }

    fn texture_desc<'a>(
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
    fn create_from_cpu(
        &self,
        ctx: &GpuContext,
        slot: &Slot,
        first: u8,
    ) -> Result<Resident> {
        let count = slot
            .info
            .levels
            .len()
            .min(crate::budget::planner::MAX_LEVELS) as u8;
        let floor = count - slot.floor_data.len() as u8;
        let first = first.max(floor);
        let levels: Vec<&[u8]> = slot.floor_data[usize::from(first - floor)..]
            .iter()
            .map(Vec::as_slice)
            .collect();
        let desc = Self::texture_desc(&slot.info, first, count, &slot.label);
        let tex = upload::create_texture_with_levels(ctx, &desc, &levels, Category::Textures)?;
        Ok(Resident::new(tex))
    }

    /// Rebuilds texture `i` smaller, with levels `to..` (`to > from`): every level is copied from
    /// the old texture GPU-side. Submits, then destroys the old texture.
    fn rebuild(
        &mut self,
        ctx: &GpuContext,
        i: usize,
        to: u8,
        from: u8,
    ) -> Result<()> {
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
        self.slots[i].gpu = Some(Resident::new(tex));
        self.plan_tex[i].resident_level = to;
        Ok(())
    }

    /// Makes sure the 1x1 grey fallback exists (drawn for textures with nothing resident).
    pub fn ensure_fallback(&mut self, ctx: &GpuContext) -> Result<()> {
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
        let view = tex.create_view();
        self.fallback = Some((tex, view));
        Ok(())
    }
}
