//! The streamer's settings.

use crate::budget::planner::PlannerConfig;
use crate::ktx2::ReadLimits;

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
    /// CPU memory for every texture's floor data together (default 512 MiB): the floor tail of
    /// each texture is held on the CPU, decoded, so that an evicted texture can be made again
    /// without IO. A texture whose floor would pass this limit is refused at registration
    /// ([`crate::Error::FloorTooLarge`]) before anything is read: a dozen one-level 16384²
    /// files (256 MiB each, whole textures that cannot stream) must not exhaust the machine.
    pub cpu_floor_limit: u64,
    /// Frames without an out-of-memory error after which the effective budget the driver's last
    /// out-of-memory set is raised by an eighth (default 1800, 30 s at 60 fps;
    /// 0 never raises it). Why: memory another application held may come back, and a game
    /// should not stay degraded for good after one bad moment.
    pub oom_probe_frames: u32,
    /// CPU memory for levels read but not built when their grow was cancelled (default 16 MiB;
    /// 0 keeps none): a grow of the same levels asked again soon (the camera turned back, the
    /// budget came back) takes them from there instead of reading the file again. Oldest go
    /// first; counted in [`StreamStats::reused_reads`](super::StreamStats::reused_reads).
    pub reuse_cache_bytes: u64,
    /// CPU memory for level data requested from the IO workers and not yet built (default 256
    /// MiB): a read that would take the bytes held past it waits (counted in
    /// [`StreamStats::io_deferred`](super::StreamStats::io_deferred)) until earlier grows are built; one read is always
    /// allowed, so a grow larger than the limit still streams, alone. Why: the planner keeps
    /// the GPU within the budget, this keeps the CPU side of the same reads bounded too (a
    /// camera cut in a large world asks for many grows at once).
    pub cpu_io_limit: u64,
    /// IO workers read levels straight into the upload staging ring where they fit one of its
    /// chunks (default on): the bytes are copied once on the CPU, off the render thread, and the
    /// render thread only records the copies into the texture. Larger levels, and reads when
    /// no chunk can be lent, go through a buffer of their own and the ring's bands as before.
    /// Counted in [`StreamStats::staged_reads`](super::StreamStats::staged_reads).
    pub staged_reads: bool,
    /// Frames a replaced or evicted texture is kept before it is destroyed (default 0: at the
    /// frame's submit). An engine that records a frame while the next is planned (Bevy's
    /// pipelined rendering) binds the views of the frame before: set it to the frames it keeps
    /// in flight (the Bevy plugin sets 3). The kept textures stay on the ledger, and a grow
    /// waits for their room, so the budget holds.
    pub keep_replaced_frames: u32,
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
            reuse_cache_bytes: 16 << 20,
            cpu_floor_limit: 512 << 20,
            cpu_io_limit: 256 << 20,
            staged_reads: true,
            keep_replaced_frames: 0,
        }
    }
}
