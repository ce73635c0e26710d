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
//!   (`Streamer::take_out_of_memory`), which lowers the effective budget to what the driver
//!   gave.
//!
//! The streamer executes plans; it does not make them: [`crate::BudgetManager`] owns the planner
//! and the frame's budget loop.

mod config;
mod grow;
mod io;
mod register;
mod transitions;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::budget::Category;
use crate::budget::ledger::Charge;
use crate::budget::planner::{PlanTexture, PlanTextures, Transition, TransitionKind};
use crate::budget::size;
use crate::gpu::staging::{StagedLevel, StagingRing};
use crate::gpu::{GpuContext, TrackedTexture, upload};
use crate::ktx2::Ktx2Info;
use crate::{Error, Result};
pub use config::StreamConfig;
use io::{IoPool, IoRequest};
pub use io::{KtxReader, ReadError, TextureSource, load_resident};

/// A streamed texture. Generational: after the texture is removed, the handle is stale and every
/// call with it fails softly (returns `None` / `false`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureHandle {
    index: u32,
    generation: u32,
}

impl Default for TextureHandle {
    /// A handle to no texture: stale in every manager (every call with it fails softly).
    fn default() -> Self {
        Self {
            index: u32::MAX,
            generation: u32::MAX,
        }
    }
}

impl TextureHandle {
    /// The slot index (stable while the texture lives; the planner's texture id).
    pub fn index(self) -> u32 {
        self.index
    }

    /// A handle made up for a unit test (slot `index`, `generation`).
    #[cfg(test)]
    pub(crate) fn for_test(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }
}

/// Per-texture options.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct TextureOptions {
    /// Weight of this texture's blur against the others' (1 = normal; a hero texture 4).
    pub priority: f32,
    /// Never finer than this level (0, the default: no cap; Unity's `minimumMipmapLevel`,
    /// Unreal's `DropMips`). See [`crate::BudgetManager::set_level_limits`].
    pub finest_level: u8,
    /// Always at least this level resident, whatever the view (`Some(0)`: never streamed;
    /// Unreal's `NeverStream`), within the budget. `None` (default): as the view asks.
    pub required_level: Option<u8>,
}

impl Default for TextureOptions {
    fn default() -> Self {
        Self {
            priority: 1.0,
            finest_level: 0,
            required_level: None,
        }
    }
}

impl TextureOptions {
    /// Options with this priority.
    pub fn with_priority(priority: f32) -> Self {
        Self {
            priority,
            ..Self::default()
        }
    }

    /// A texture that never streams: its whole chain is kept resident (within the budget: a
    /// budget that cannot hold it is reported, [`crate::FrameStats::unmet_required`]).
    pub fn never_stream() -> Self {
        Self {
            required_level: Some(0),
            ..Self::default()
        }
    }
}

/// What the streamer did in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct StreamStats {
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
    /// Bytes the shrinks and evictions of this frame gave back.
    pub freed_bytes: u64,
    /// In-flight grows cancelled this frame.
    pub cancels: u32,
    /// Of `cancels`, those whose data had already been read (or whose step was uploading): IO
    /// done for nothing unless a later grow reuses it ([`StreamConfig::reuse_cache_bytes`]).
    /// A moving camera whose demand is predicted well keeps this near zero.
    pub cancels_after_arrival: u32,
    /// Grows whose levels came from the levels an earlier cancelled grow had read (no IO;
    /// see [`StreamConfig::reuse_cache_bytes`]).
    pub reused_reads: u32,
    /// Reads that waited this frame because the level data held on the CPU would have passed
    /// [`StreamConfig::cpu_io_limit`].
    pub io_deferred: u32,
    /// In-flight grows retargeted to a finer level this frame (what they had read or built
    /// was kept).
    pub retargets: u32,
    /// Reads requested from the IO workers this frame.
    pub io_requests: u32,
    /// Of those, reads made straight into the upload staging ring (see
    /// [`StreamConfig::staged_reads`]).
    pub staged_reads: u32,
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
    /// The texture's handle (for the controls: [`crate::BudgetManager::force_resident`], ...).
    #[serde(skip)]
    pub handle: TextureHandle,
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

/// Where the next streamer's slot generations start (see `Streamer::generation_base`).
static NEXT_GENERATION_BASE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

struct Resident {
    tex: TrackedTexture,
    view: wgpu::TextureView,
    version: u64,
}

impl Resident {
    fn new(tex: TrackedTexture) -> Self {
        Self {
            view: tex.create_view(&Default::default()),
            version: NEXT_VIEW_VERSION.fetch_add(1, Ordering::Relaxed),
            tex,
        }
    }
}

/// How long a budget drop that must give back staging lent to reads waits at most for the
/// cancelled reads to let go of it (see `Streamer::release_staging`). Why so long: a cancelled
/// read still queued lets go only when a worker reaches it, behind the reads queued before it
/// (tens of milliseconds on a loaded machine); the bound is for a reader that hangs, after
/// which the frame reports the staging still held over the budget rather than block for good.
const STAGED_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Frames the banded upload of a step may find no staging chunk while chunks are lent to reads,
/// before those reads are given up (see `Streamer::continue_step`). Why 4: a chunk comes back
/// on its own a frame or two after its levels are built (the GPU's copies must finish), so a
/// shorter wait would throw away reads about to free it; past that, the chunk is held by grows
/// that cannot start behind this step, and only giving them up unblocks it.
const BAND_WAIT_FRAMES: u32 = 4;

/// Frames a kept read whose levels are in staging stays in the reuse cache. Why 8: a cancelled
/// grow is asked again within a few frames when the camera merely hesitated (the prediction's
/// latency is 1-3 frames); longer would keep a staging chunk from the bands for a read that is
/// no longer wanted.
const STAGED_REUSE_FRAMES: u64 = 8;

/// One level's bytes as a read left them: in a buffer of its own, or already in staging
/// memory (read there by the IO worker: see [`StagingRing::lend`]).
#[derive(Debug)]
pub(crate) enum LevelData {
    Cpu(Vec<u8>),
    Staged(StagedLevel),
}

impl LevelData {
    /// The level's bytes.
    fn len(&self) -> u64 {
        match self {
            LevelData::Cpu(v) => v.len() as u64,
            LevelData::Staged(s) => s.layout().bytes(),
        }
    }

    /// Whether the bytes are in staging memory.
    fn staged(&self) -> bool {
        matches!(self, LevelData::Staged(_))
    }
}

struct InFlight {
    to: u8,
    from: u8,
    cancel: Arc<AtomicBool>,
    queued: bool,
    data: Option<Vec<LevelData>>,
    /// Its read was asked for straight into staging (the lease travels with the request).
    staged: bool,
    /// The frame of the plan that started the grow (its latency is measured from there).
    issued: u64,
    /// Its read's bytes, held against [`StreamConfig::cpu_io_limit`] until the grow ends.
    reserved: Option<IoReservation>,
}

/// Bytes of a read held against [`StreamConfig::cpu_io_limit`], given back when dropped (a grow
/// built, cancelled, retargeted or removed: whichever way it ends).
#[derive(Debug)]
struct IoReservation {
    bytes: u64,
    held: Arc<AtomicU64>,
}

impl IoReservation {
    fn new(bytes: u64, held: &Arc<AtomicU64>) -> Self {
        held.fetch_add(bytes, Ordering::Relaxed);
        Self {
            bytes,
            held: held.clone(),
        }
    }
}

impl Drop for IoReservation {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl InFlight {
    /// Whether data read from disk has arrived for it (a floor-only grow's data is the CPU's).
    fn arrived(&self) -> bool {
        self.data.as_ref().is_some_and(|d| !d.is_empty())
    }
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
    data: Vec<LevelData>,
    data_first: u8,
}

/// What a handle check needs of a slot (see `Streamer::ids`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SlotId {
    pub(super) generation: u32,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) alive: bool,
}

struct Slot {
    generation: u32,
    alive: bool,
    label: String,
    source: TextureSource,
    info: Arc<Ktx2Info>,
    /// `info`'s `KTXorientation`, parsed once (the draw asks for it every frame).
    orientation: crate::ktx2::Orientation,
    floor_data: Vec<Vec<u8>>,
    gpu: Option<Resident>,
    inflight: Option<InFlight>,
    error: Option<String>,
    /// After a failed read, the texture is not grown again before this frame.
    backoff_until: u64,
}

impl Slot {
    /// Its level count (at most the planner's) and the first level of its CPU-held floor.
    fn chain(&self) -> (u8, u8) {
        let count = self
            .info
            .levels
            .len()
            .min(crate::budget::planner::MAX_LEVELS) as u8;
        (count, count - self.floor_data.len() as u8)
    }

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
    /// Per slot, what a handle check and a demand need, packed (12 bytes) so that a game's
    /// per-frame demand for 10k textures reads one small array, not 10k slots.
    ids: Vec<SlotId>,
    free: Vec<u32>,
    /// The generation of a texture in a new slot: above every generation a handle of an
    /// earlier streamer of the same manager holds (see [`Streamer::after_generations`]), and
    /// apart from other streamers' ([`NEXT_GENERATION_BASE`]).
    generation_base: u32,
    plan_tex: PlanTextures,
    /// One bit per slot, set when the slot's grow is requested (`Slot::inflight` becomes
    /// `Some`) and cleared lazily once it is `None`: the per-frame IO pass visits the grows in
    /// flight, in slot order, not every slot (100k slots are megabytes).
    inflight_bits: Vec<u64>,
    /// Slots whose `backoff_until` was set (a failed read or transition), until it passes:
    /// what the per-frame back-off check goes through instead of every slot.
    backing_off: Vec<u32>,
    /// Slots whose planner record (`plan_tex`) the streamer changed since the manager last
    /// took them ([`Streamer::take_touched`]): with the textures given demand, every record
    /// that may differ from the previous plan's input (see
    /// [`crate::budget::planner::Planner::plan_with_changes`]). Added and removed textures
    /// set `changed` instead (the manager then checks every texture).
    touched: Vec<u32>,
    /// Textures evicted to their floor this frame whose floor data is still to be uploaded
    /// (`Streamer::fill_evicted_floors`).
    evicted_floors: Vec<u32>,
    /// Textures were added or removed since [`Streamer::take_changed`].
    changed: bool,
    /// The ledger's total at the out-of-memory errors not yet taken by the budget's owner (the
    /// least of them): builds stay under it until the owner has lowered the budget.
    oom_at: Option<u64>,
    /// Bytes of the reads in flight and of the level data waiting to be built (the
    /// [`IoReservation`]s alive), against [`StreamConfig::cpu_io_limit`].
    io_held: Arc<AtomicU64>,
    io: IoPool,
    /// Slots whose grow data arrived, oldest first.
    ready: Vec<u32>,
    staging: Vec<(u64, Charge)>,
    completed_frame: Arc<AtomicU64>,
    frame_stats: StreamStats,
    /// The effective budget of the last plan.
    plan_budget: u64,
    /// The grow step whose upload is under way (one at a time: the planner counts one old-and-new
    /// pair alive at once).
    step: Option<Step>,
    /// Persistently mapped staging for the IO levels' uploads (sized from the headroom).
    ring: StagingRing,
    /// Frames in a row the step under way found no staging chunk while some were lent.
    band_waits: u32,
    /// Textures replaced or dropped while the ring's encoder may still copy into or out of them:
    /// destroyed once it is submitted, or [`StreamConfig::keep_replaced_frames`] after the
    /// frame (tagged) they were replaced in.
    retired: Vec<(u64, TrackedTexture)>,
    fallback: Option<(TrackedTexture, wgpu::TextureView)>,
    /// Reads queued and not yet answered.
    outstanding: usize,
    /// The frame of the last plan.
    frame: u64,
    /// Bytes of floor data held on the CPU, every texture together.
    floor_cpu_bytes: u64,
    /// Bytes of the textures added resident, by the category they are charged to
    /// ([`Streamer::pinned_bytes`]).
    pinned: crate::budget::ledger::ByCategory<u64>,
    /// The last frame whose end registered a callback that raises `completed_frame`.
    callback_frame: u64,
    /// Frames from a grow's plan to its last step built, averaged (exponentially, over about
    /// the last 16 grows): how far ahead demand is predicted.
    latency_frames: f32,
    /// Levels read for grows that were cancelled before they were built, oldest first, at most
    /// [`StreamConfig::reuse_cache_bytes`] together.
    reuse: Vec<CachedRead>,
    reuse_bytes: u64,
}

/// Levels `first..first + data.len()` of a texture, read for a grow that was cancelled.
struct CachedRead {
    slot: u32,
    generation: u32,
    first: u8,
    data: Vec<LevelData>,
    bytes: u64,
    /// The frame it was kept in.
    at: u64,
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

impl Drop for Streamer {
    fn drop(&mut self) {
        // The reads under way stop at their next level (the IO pool, dropped after the slots,
        // waits for its workers): a `clear` or a dropped manager is not held up by them.
        for s in &self.slots {
            if let Some(f) = &s.inflight {
                f.cancel.store(true, Ordering::Release);
            }
        }
    }
}

impl Streamer {
    /// A streamer with no textures.
    pub(crate) fn new(config: StreamConfig) -> Self {
        Self {
            io: IoPool::new(config.io_threads, config.io_queue),
            changed: false,
            oom_at: None,
            io_held: Arc::new(AtomicU64::new(0)),
            config,
            slots: Vec::new(),
            ids: Vec::new(),
            free: Vec::new(),
            // Each streamer of the process starts its generations 2^24 above the last one's,
            // so that a handle of another manager names no texture here (same index, another
            // generation) unless a slot there was reused 16 million times (or 256 streamers
            // were made in between: the counter wraps).
            generation_base: NEXT_GENERATION_BASE.fetch_add(1 << 24, Ordering::Relaxed),
            plan_tex: PlanTextures::new(),
            inflight_bits: Vec::new(),
            backing_off: Vec::new(),
            touched: Vec::new(),
            evicted_floors: Vec::new(),
            ready: Default::default(),
            staging: Vec::new(),
            completed_frame: Arc::new(AtomicU64::new(0)),
            frame_stats: StreamStats::default(),
            plan_budget: u64::MAX,
            step: None,
            ring: StagingRing::default(),
            band_waits: 0,
            retired: Vec::new(),
            fallback: None,
            outstanding: 0,
            frame: 0,
            floor_cpu_bytes: 0,
            pinned: Default::default(),
            callback_frame: 0,
            latency_frames: 1.0,
            reuse: Vec::new(),
            reuse_bytes: 0,
        }
    }

    /// Frames from a grow's plan to its last level built, averaged over the recent grows (1 when
    /// a read lands in the next frame and is built there; more when reads or uploads queue).
    pub fn latency_frames(&self) -> f32 {
        self.latency_frames
    }

    /// Bytes of floor data held on the CPU, every texture together (see
    /// [`StreamConfig::cpu_floor_limit`]).
    pub fn floor_cpu_bytes(&self) -> u64 {
        self.floor_cpu_bytes
    }

    fn slot(&self, h: TextureHandle) -> Option<&Slot> {
        self.slots
            .get(h.index as usize)
            .filter(|s| s.alive && s.generation == h.generation)
    }

    fn id(&self, h: TextureHandle) -> Option<&SlotId> {
        self.ids
            .get(h.index as usize)
            .filter(|s| s.alive && s.generation == h.generation)
    }

    /// Records slot `index`'s identity for the fast handle checks.
    pub(super) fn set_id(&mut self, index: u32, id: SlotId) {
        let i = index as usize;
        if i >= self.ids.len() {
            self.ids.resize(i + 1, SlotId::default());
        }
        self.ids[i] = id;
    }

    /// Width of level 0 of a live texture.
    pub fn texture_width(&self, h: TextureHandle) -> Option<u32> {
        self.id(h).map(|s| s.width)
    }

    /// The texture's `KTXorientation` (which way its rows and columns go): flip the texture
    /// coordinates that sample it accordingly (mipflow's `Renderer` does).
    pub fn texture_orientation(&self, h: TextureHandle) -> Option<crate::ktx2::Orientation> {
        self.slot(h).map(|s| s.orientation)
    }

    /// The side of a square with as many texels as level 0 of a live texture, `sqrt(w x h)`:
    /// what an area-based UV density (UV units per world unit over a mesh's area, as
    /// [`crate::DemandView::sphere`]'s callers give it) turns into texels per world unit. The
    /// width alone made a 512x2048 texture on a 1x4 quad (UVs 0..1) one octave too blurry, and
    /// its 2048x512 twin on a 4x1 quad one octave too sharp (4x the bytes).
    pub fn texture_texel_side(&self, h: TextureHandle) -> Option<f32> {
        self.id(h)
            .map(|s| (f64::from(s.width) * f64::from(s.height)).sqrt() as f32)
    }

    /// Width and height of level 0 of a live texture.
    pub fn texture_size(&self, h: TextureHandle) -> Option<(u32, u32)> {
        self.id(h).map(|s| (s.width, s.height))
    }

    /// Width over height of the image a live texture shows ([`Ktx2Info::display_aspect`]). A
    /// texture added already resident without its file
    /// ([`crate::BudgetManager::add_resident_texture`]) has no KTX2 metadata: its own size.
    pub fn texture_aspect(&self, h: TextureHandle) -> Option<f32> {
        Some(self.slot(h)?.info.display_aspect())
    }

    /// Whether the handle still names a live texture.
    pub fn contains(&self, h: TextureHandle) -> bool {
        self.id(h).is_some()
    }

    /// The view to draw a texture with, and its version: its resident levels
    /// (`resident_level..`, as mips `0..`), or a 1x1 grey fallback (version 0) while nothing is
    /// resident. The version changes whenever the view does (every residency change builds a new
    /// texture): rebuild a bind group only when it differs from the one the group was made with.
    /// `None` for a stale handle, or before the first frame for a texture with
    /// nothing resident.
    pub fn texture_view(&self, h: TextureHandle) -> Option<(&wgpu::TextureView, u64)> {
        let s = self.slot(h)?;
        match &s.gpu {
            Some(r) => Some((&r.view, r.version)),
            None => self.fallback.as_ref().map(|(_, v)| (v, 0)),
        }
    }

    /// The 1x1 grey texture and view a texture with nothing resident is drawn with (the view
    /// [`Streamer::texture_view`] hands out at version 0), on the ledger; made by the first
    /// frame. An engine that needs the texture too (Bevy's `GpuImage`) takes it here.
    pub fn fallback(&self) -> Option<(&wgpu::Texture, &wgpu::TextureView)> {
        self.fallback.as_ref().map(|(t, v)| (t.texture(), v))
    }

    /// Whether each frame waits for its reads ([`StreamConfig::deterministic`]).
    pub(crate) fn deterministic(&self) -> bool {
        self.config.deterministic
    }

    /// Turns [`StreamConfig::deterministic`] on or off (the manager's "load everything").
    pub(crate) fn set_deterministic(&mut self, on: bool) {
        self.config.deterministic = on;
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

    /// Appends the slots whose planner record the streamer changed since the last call to
    /// `out` (repeats possible), and forgets them.
    pub(crate) fn take_touched(&mut self, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.touched);
        self.touched.clear();
    }

    /// Bytes of the textures added resident (`add_resident_texture`) and charged to `category`:
    /// on the GPU for as long as they live and not the planner's to stream. The manager counts
    /// them as fixed bytes, as any allocation it did not make for itself.
    pub fn pinned_bytes(&self, category: Category) -> u64 {
        *self.pinned.get(category)
    }

    /// The planner's view of every texture (index = slot), to fill in `wanted_level` and
    /// `screen_pixels` before [`Streamer::plan`]. Dead slots have `level_count == 0`.
    pub(crate) fn plan_textures_mut(&mut self) -> &mut PlanTextures {
        &mut self.plan_tex
    }

    /// The planner's view of every texture.
    pub fn plan_textures(&self) -> &PlanTextures {
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

    /// Notes an out-of-memory error at ledger total `total` (the least of those noted since
    /// the last [`Streamer::take_out_of_memory`] stands).
    pub(crate) fn note_out_of_memory_at(&mut self, total: u64) {
        self.oom_at = Some(self.oom_at.map_or(total, |t| t.min(total)));
    }

    /// Counts an out-of-memory error the budget's owner handled (render targets, say) in this
    /// frame's [`StreamStats::oom_events`].
    pub(crate) fn count_out_of_memory(&mut self) {
        self.frame_stats.oom_events += 1;
    }

    /// This frame's streaming figures.
    pub fn frame_stats(&self) -> &StreamStats {
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
            .zip(self.plan_tex.as_slice())
            .enumerate()
            .filter(|(_, (s, _))| s.alive)
            .map(|(i, (s, p))| TextureInfo {
                index: i as u32,
                handle: TextureHandle {
                    index: i as u32,
                    generation: self.ids[i].generation,
                },
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
    /// has, for the reports: (resident-and-wanted, wanted). A pass over every texture: the budget
    /// manager's [`crate::BudgetManager::frame_stats`] goes through the textures given demand
    /// only ([`Streamer::wanted_bytes_of`]).
    pub fn wanted_bytes(&self) -> (u64, u64) {
        self.wanted_bytes_of(0..self.plan_tex.len() as u32)
    }

    /// [`Streamer::wanted_bytes`] over the slots listed (each once; a slot past the end or
    /// without demand adds nothing).
    pub fn wanted_bytes_of(&self, slots: impl IntoIterator<Item = u32>) -> (u64, u64) {
        let mut have = 0u64;
        let mut want = 0u64;
        for i in slots.into_iter().map(|i| i as usize) {
            if let Some(w) = self.plan_tex.wanted_whole_level(i) {
                let resident = self.plan_tex[i].resident_level;
                want += self.plan_tex.bytes_from(i, w);
                have += self.plan_tex.bytes_from(i, w.max(resident));
            }
        }
        (have, want)
    }
}
