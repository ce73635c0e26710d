//! IO worker threads: read the requested KTX2 levels by byte range (zstd-decompressed per level)
//! off the render thread.
//!
//! The request queue is bounded ([`std::sync::mpsc::sync_channel`]) and the render thread's frame
//! path only uses `try_send` / `try_recv`, so it never blocks on IO (deterministic mode waits for
//! its reads by design; a budget dropped below the staging in use waits at most 2 s for the
//! reads holding staging; dropping the pool waits for each worker's current read only). A
//! request carries a cancel flag: a worker checks it before each level, so a request that is no
//! longer wanted costs at most the level being read.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::LevelData;
use crate::gpu::staging::{RowWriter, StagedLevel, StagingLease};
use crate::ktx2::{Ktx2Error, Ktx2Info, read_level, read_level_in, read_level_with};

/// Why levels of a [`TextureSource`] could not be read ([`TextureSource::read_levels`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The request's cancel flag was set before the read finished.
    #[error("cancelled")]
    Cancelled,
    /// The source could not be opened, or is no longer the file registered (see
    /// [`crate::ktx2::Ktx2Info::stamp`]).
    #[error("{name}: {source}")]
    Open {
        /// The source (its path, or its reader's description).
        name: String,
        /// The OS's error, or why the file is refused.
        source: std::io::Error,
    },
    /// A level could not be read or decoded (truncated, a Zstandard stream that fails, a size
    /// that does not match its format).
    #[error("{name}: {}", level_error(*level, source))]
    Level {
        /// The source.
        name: String,
        /// The level (0 = full size).
        level: u8,
        /// What is wrong with it.
        source: Ktx2Error,
    },
    /// The read panicked (a game's [`KtxReader`], or a decoder on a hostile level): the worker
    /// caught it and goes on.
    #[error("{name}: the read panicked: {message}")]
    Panicked {
        /// The source.
        name: String,
        /// The panic's message.
        message: String,
    },
    /// A level read straight into staging memory did not fit or fill its lease.
    #[error("{name}: level {level}: {reason}")]
    Staging {
        /// The source.
        name: String,
        /// The level.
        level: u8,
        /// What went wrong.
        reason: String,
    },
}

impl ReadError {
    /// The crate's error for a read of texture `label`: a level's [`Ktx2Error`] as
    /// [`crate::Error::Ktx2`], an open's as [`crate::Error::Io`] (both with the source's name
    /// as their path).
    pub(crate) fn into_error(self, label: &str) -> crate::Error {
        match self {
            ReadError::Level { name, source, .. } => crate::Error::Ktx2 {
                path: name.into(),
                source,
            },
            ReadError::Open { name, source } => crate::Error::Io {
                path: name.into(),
                source,
            },
            other => crate::Error::InvalidResource {
                label: label.to_owned(),
                reason: other.to_string(),
            },
        }
    }
}

/// Creates a texture with every level of `source`, in its own format, charged to the streamed
/// textures: for a texture that must never blur (give it to
/// [`crate::BudgetManager::add_resident_texture_from`] with the file's [`TextureSource::info`],
/// so that it keeps the file's orientation and shape), or the all-resident baseline a streamed
/// render is compared with. Reads the whole file now.
pub fn load_resident(
    ctx: &crate::gpu::GpuContext,
    source: &TextureSource,
    limits: &crate::ktx2::ReadLimits,
) -> crate::Result<crate::gpu::TrackedTexture> {
    let mut info = source.info(limits)?;
    // Without BC, a Basis file comes as RGBA8 (BCn blocks fail at the texture's creation).
    if !ctx.bc_supported() {
        info.transcode_uncompressed();
    }
    let count = info.levels.len().min(usize::from(u8::MAX)) as u8;
    let levels = source
        .read_levels(&info, 0..count, &AtomicBool::new(false))
        .map_err(|e| e.into_error(&source.describe()))?;
    let label = source.describe();
    let desc = wgpu::TextureDescriptor {
        label: Some(&label),
        size: wgpu::Extent3d {
            width: info.width,
            height: info.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: levels.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: info.format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    let refs: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
    crate::gpu::upload::create_texture_with_levels(
        ctx,
        &desc,
        &refs,
        crate::budget::Category::Textures,
    )
}

/// Random access to one KTX2 file's bytes, from wherever a game keeps them (a pak archive, a
/// virtual file system, a network cache): [`TextureSource::reader`]. Called from mipflow's IO
/// worker threads, never from the render thread once the texture is added.
pub trait KtxReader: Send + Sync + std::fmt::Debug {
    /// The file's length in bytes.
    fn byte_len(&self) -> std::io::Result<u64>;
    /// Fills `buf` with the bytes at `offset..offset + buf.len()` (an error if the file is
    /// shorter).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
    /// A short name for errors and the overlay.
    fn describe(&self) -> String {
        "<reader>".to_owned()
    }
}

/// `Read + Seek` over a [`KtxReader`], for the KTX2 reader.
struct ReaderCursor<'a> {
    reader: &'a dyn KtxReader,
    pos: u64,
    len: u64,
}

impl std::io::Read for ReaderCursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.len.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        if n > 0 {
            self.reader.read_at(self.pos, &mut buf[..n])?;
            self.pos += n as u64;
        }
        Ok(n)
    }
}

impl std::io::Seek for ReaderCursor<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(o) => Some(o),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// Where a streamed texture's bytes live.
#[derive(Clone, Debug)]
pub enum TextureSource {
    /// A KTX2 file on disk, read level by level.
    Path(Arc<PathBuf>),
    /// A KTX2 file in memory (embedded assets, procedurally cooked textures).
    Bytes(Arc<[u8]>),
    /// A KTX2 file read through the game's own [`KtxReader`], level by level.
    Reader(Arc<dyn KtxReader>),
}

impl TextureSource {
    /// A KTX2 file on disk.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        TextureSource::Path(Arc::new(path.into()))
    }

    /// A KTX2 file in memory.
    pub fn bytes(bytes: impl Into<Arc<[u8]>>) -> Self {
        TextureSource::Bytes(bytes.into())
    }

    /// A KTX2 file read through the game's own reader (an archive, a virtual file system).
    pub fn reader(reader: impl KtxReader + 'static) -> Self {
        TextureSource::Reader(Arc::new(reader))
    }

    /// A short description for errors and the overlay.
    pub fn describe(&self) -> String {
        match self {
            TextureSource::Path(p) => p.display().to_string(),
            TextureSource::Bytes(b) => format!("<memory, {} bytes>", b.len()),
            TextureSource::Reader(r) => r.describe(),
        }
    }

    /// Reads and validates the file's header, level index and metadata (not the levels).
    pub fn info(&self, limits: &crate::ktx2::ReadLimits) -> crate::Result<Ktx2Info> {
        match self {
            TextureSource::Path(p) => crate::ktx2::read_info(p, limits),
            TextureSource::Bytes(b) => {
                Ktx2Info::parse(b, b.len() as u64, limits).map_err(|e| crate::Error::Ktx2 {
                    path: "<memory>".into(),
                    source: e,
                })
            }
            TextureSource::Reader(r) => {
                let name = PathBuf::from(r.describe());
                let len = r.byte_len().map_err(|source| crate::Error::Io {
                    path: name.clone(),
                    source,
                })?;
                let mut c = ReaderCursor {
                    reader: r.as_ref(),
                    pos: 0,
                    len,
                };
                crate::ktx2::read_info_from(&mut c, len, limits, &name)
            }
        }
    }

    /// The file's header and every level's bytes (level 0 first), read now on this thread: for
    /// a texture that is kept whole rather than streamed (see [`load_resident`]).
    pub fn read_all(
        &self,
        limits: &crate::ktx2::ReadLimits,
    ) -> crate::Result<(Ktx2Info, Vec<Vec<u8>>)> {
        let info = self.info(limits)?;
        let count = info.levels.len().min(usize::from(u8::MAX)) as u8;
        let levels = self
            .read_levels(&info, 0..count, &AtomicBool::new(false))
            .map_err(|e| e.into_error(&self.describe()))?;
        Ok((info, levels))
    }

    /// Opens the bytes for reading `info`'s levels: a reader, and the name its errors start
    /// with. A file must still be the one `info` was read from.
    fn open(&self, info: &Ktx2Info) -> Result<(Box<dyn ReadSeek + '_>, String), ReadError> {
        match self {
            TextureSource::Path(p) => {
                let f = crate::ktx2::open_checked(p, info).map_err(|source| ReadError::Open {
                    name: p.display().to_string(),
                    source,
                })?;
                Ok((Box::new(f), p.display().to_string()))
            }
            TextureSource::Bytes(b) => Ok((Box::new(Cursor::new(&b[..])), "<memory>".to_owned())),
            TextureSource::Reader(r) => {
                let len = r.byte_len().map_err(|source| ReadError::Open {
                    name: r.describe(),
                    source,
                })?;
                let c = ReaderCursor {
                    reader: r.as_ref(),
                    pos: 0,
                    len,
                };
                Ok((Box::new(c), r.describe()))
            }
        }
    }

    /// Reads levels `levels` (0 = full size), each validated against the format math.
    pub fn read_levels(
        &self,
        info: &Ktx2Info,
        levels: std::ops::Range<u8>,
        cancel: &AtomicBool,
    ) -> Result<Vec<Vec<u8>>, ReadError> {
        let mut out = Vec::with_capacity(levels.len());
        let (mut f, name) = self.open(info)?;
        for l in levels {
            if cancel.load(Ordering::Acquire) {
                return Err(ReadError::Cancelled);
            }
            out.push(read_level(&mut f, info, usize::from(l)).map_err(|source| {
                ReadError::Level {
                    name: name.clone(),
                    level: l,
                    source,
                }
            })?);
        }
        Ok(out)
    }

    /// Reads levels `levels` straight into `lease`'s staging (its layouts, in the same order):
    /// the one CPU copy of their bytes. `bounce` carries a read from a file or a reader, and a
    /// Zstandard decode; a file in memory is copied from directly.
    pub fn read_levels_staged(
        &self,
        info: &Ktx2Info,
        levels: std::ops::Range<u8>,
        cancel: &AtomicBool,
        mut lease: StagingLease,
        bounce: &mut [u8],
    ) -> Result<Vec<StagedLevel>, ReadError> {
        // A file on disk is kept as a `File`: its uncompressed levels are read straight into
        // the staging (`read_direct`).
        let file = match self {
            TextureSource::Path(p) => Some(crate::ktx2::open_checked(p, info).map_err(
                |source| ReadError::Open {
                    name: p.display().to_string(),
                    source,
                },
            )?),
            _ => None,
        };
        let (mut f, name) = match &file {
            Some(file) => (Box::new(file) as Box<dyn ReadSeek + '_>, self.describe()),
            None => self.open(info)?,
        };
        for (k, l) in levels.enumerate() {
            if cancel.load(Ordering::Acquire) {
                return Err(ReadError::Cancelled);
            }
            let Some(mut w) = lease.level(k) else {
                return Err(ReadError::Staging {
                    name,
                    level: l,
                    reason: "no staging room for it".into(),
                });
            };
            let level = usize::from(l);
            let direct = file
                .as_ref()
                .and_then(|file| read_direct(file, info, level, &mut w));
            match direct {
                Some(read) => read,
                None => {
                    let mut sink = |b: &[u8]| w.write(b);
                    match self {
                        TextureSource::Bytes(b) => read_level_in(b, info, level, bounce, &mut sink),
                        _ => read_level_with(&mut f, info, level, bounce, &mut sink),
                    }
                }
            }
            .map_err(|source| ReadError::Level {
                name: name.clone(),
                level: l,
                source,
            })?;
            if w.written() != w.len() {
                return Err(ReadError::Staging {
                    name,
                    level: l,
                    reason: format!("{} bytes read for a staging of {}", w.written(), w.len()),
                });
            }
        }
        Ok(lease.finish())
    }
}

/// Reads an uncompressed level of `file` straight into its staging with one `pread` (the
/// kernel's copy from the page cache is the only one; through a buffer, the bytes were copied
/// twice). `None` where that cannot be done (a Zstandard level, rows padded in the staging, not
/// on Unix): the caller reads through its buffer then. Checks the level's entry as
/// [`read_level_with`] does, and reports a short file as [`Ktx2Error::Truncated`].
fn read_direct(
    file: &std::fs::File,
    info: &Ktx2Info,
    level: usize,
    w: &mut RowWriter<'_>,
) -> Option<Result<(), Ktx2Error>> {
    #[cfg(unix)]
    {
        use crate::ktx2::{Supercompression, level_span};
        if info.supercompression != Supercompression::None || info.basis.is_some() {
            // Zstandard to undo, or Basis blocks to transcode: through the caller's buffer.
            return None;
        }
        let (span, _, end) = match level_span(info, level) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        if span.byte_length != w.len() as u64 {
            // Staging laid out for another size: the buffered path reports the mismatch.
            return None;
        }
        let read = w.read_at(file, span.offset)?;
        Some(read.map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Ktx2Error::Truncated {
                    what: "level data",
                    needed: end,
                    available: span.offset + w.written() as u64,
                }
            } else {
                Ktx2Error::from(e)
            }
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, info, level, w);
        None
    }
}

/// What [`TextureSource::open`] reads through.
trait ReadSeek: std::io::Read + std::io::Seek {}
impl<T: std::io::Read + std::io::Seek> ReadSeek for T {}

/// A level's read error, naming the level once: most [`crate::ktx2::Ktx2Error`]s about a level
/// already start with "level N".
fn level_error(level: u8, e: &Ktx2Error) -> String {
    let m = e.to_string();
    if m.starts_with("level") {
        m
    } else {
        format!("level {level}: {m}")
    }
}

/// One read: levels `first..end` of a texture.
#[derive(Debug)]
pub(crate) struct IoRequest {
    /// Slot of the texture in the streamer.
    pub slot: u32,
    /// Generation of the slot when the request was made (a reused slot ignores old results).
    pub generation: u32,
    /// First (finest) level to read.
    pub first: u8,
    /// One past the last level to read.
    pub end: u8,
    /// The texture's bytes.
    pub source: TextureSource,
    /// Its validated header.
    pub info: Arc<Ktx2Info>,
    /// Set when the request is no longer wanted.
    pub cancel: Arc<AtomicBool>,
    /// Staging lent for the levels: read straight into it (else into buffers of their own).
    pub staged: Option<StagingLease>,
}

/// What a worker read.
#[derive(Debug)]
pub(crate) struct IoResult {
    /// Slot of the texture.
    pub slot: u32,
    /// Generation of the slot when the request was made.
    pub generation: u32,
    /// The levels requested (`first..end`), or why they could not be read.
    pub levels: Result<Vec<LevelData>, ReadError>,
    /// The request's cancel flag (to match the result with the request still wanted).
    pub cancel: Arc<AtomicBool>,
}

/// The worker pool.
pub(crate) struct IoPool {
    tx: Option<SyncSender<IoRequest>>,
    /// Set when the pool is dropped: the requests still queued are answered without a read.
    closing: Arc<AtomicBool>,
    rx: Receiver<IoResult>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for IoPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoPool")
            .field("workers", &self.workers.len())
            .finish()
    }
}

impl IoPool {
    /// Starts `threads` workers (at least 1) with a queue of `capacity` requests (at least 1).
    pub fn new(threads: usize, capacity: usize) -> Self {
        let (tx, req_rx) = sync_channel::<IoRequest>(capacity.max(1));
        let (res_tx, rx) = std::sync::mpsc::channel::<IoResult>();
        let req_rx = Arc::new(Mutex::new(req_rx));
        let closing = Arc::new(AtomicBool::new(false));
        let workers = (0..threads.max(1))
            .map(|i| {
                let req_rx = req_rx.clone();
                let res_tx = res_tx.clone();
                let closing = closing.clone();
                std::thread::Builder::new()
                    .name(format!("mipflow-io-{i}"))
                    .spawn(move || worker(&req_rx, &res_tx, &closing))
                    .ok()
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        if workers.is_empty() {
            tracing::error!("could not start IO worker threads: streaming will not grow textures");
        }
        Self {
            tx: Some(tx),
            closing,
            rx,
            workers,
        }
    }

    /// Queues a request without blocking. False when the queue is full (retry next frame; the
    /// request is dropped, its lease of staging with it).
    pub fn try_request(&self, req: IoRequest) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.try_send(req).is_ok())
    }

    /// A finished read, if any, without blocking.
    pub fn try_result(&self) -> Option<IoResult> {
        self.rx.try_recv().ok()
    }

    /// The next finished read, waiting for it at most `timeout`.
    pub fn wait_result_for(&self, timeout: std::time::Duration) -> Option<IoResult> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// The next finished read, waiting for it (deterministic runs only: never on a game's frame
    /// path). `None` when every worker is gone.
    pub fn wait_result(&self) -> Option<IoResult> {
        self.rx.recv().ok()
    }
}

impl Drop for IoPool {
    fn drop(&mut self) {
        // The requests still queued are answered without a read (a receiver hands out what is
        // queued after its sender is gone); a read under way is finished, or stops at its next
        // level when its request was cancelled (the streamer cancels its reads when it is
        // dropped). Joined, since a read may be writing into mapped staging memory.
        self.closing.store(true, Ordering::Release);
        self.tx = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn worker(
    rx: &Mutex<Receiver<IoRequest>>,
    tx: &std::sync::mpsc::Sender<IoResult>,
    closing: &AtomicBool,
) {
    // The staged reads' bounce buffer: small enough to stay in the CPU's caches, so a level
    // goes from the file (or the decoder) to the staging memory in one pass over memory.
    let mut bounce = vec![0u8; BOUNCE_BYTES];
    loop {
        let mut req = {
            let Ok(guard) = rx.lock() else { return };
            match guard.recv() {
                Ok(r) => r,
                Err(_) => return,
            }
        };
        if closing.load(Ordering::Acquire) {
            req.cancel.store(true, Ordering::Release);
        }
        // A cancelled request is still answered, so that the streamer's count of outstanding
        // requests balances (its deterministic mode waits for them all).
        // The lease (if the read does not finish it) is dropped before the answer: the render
        // thread never waits for a writer that is done.
        // A read that panics (a game's `KtxReader`, a decoder on a hostile level) is answered
        // as an error: unanswered, its texture stayed busy for good, the deterministic mode
        // waited for it for ever, and the worker was lost. (Under `panic = "abort"` nothing
        // can be caught.)
        let staged = req.staged.take();
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match staged {
            lease if req.cancel.load(Ordering::Acquire) => {
                drop(lease);
                Err(ReadError::Cancelled)
            }
            Some(lease) => req
                .source
                .read_levels_staged(
                    &req.info,
                    req.first..req.end,
                    &req.cancel,
                    lease,
                    &mut bounce,
                )
                .map(|v| v.into_iter().map(LevelData::Staged).collect()),
            None => req
                .source
                .read_levels(&req.info, req.first..req.end, &req.cancel)
                .map(|v| v.into_iter().map(LevelData::Cpu).collect()),
        }));
        let levels = read.unwrap_or_else(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|m| (*m).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            Err(ReadError::Panicked {
                name: req.source.describe(),
                message,
            })
        });
        let result = IoResult {
            slot: req.slot,
            generation: req.generation,
            levels,
            cancel: req.cancel,
        };
        if tx.send(result).is_err() {
            return;
        }
    }
}

/// Bytes of an IO worker's bounce buffer for staged reads.
const BOUNCE_BYTES: usize = 128 << 10;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A reader that takes 20 ms a read and counts its reads.
    #[derive(Debug)]
    struct Slow {
        bytes: Vec<u8>,
        reads: Arc<AtomicUsize>,
    }

    impl KtxReader for Slow {
        fn byte_len(&self) -> std::io::Result<u64> {
            Ok(self.bytes.len() as u64)
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
            self.reads.fetch_add(1, Ordering::AcqRel);
            std::thread::sleep(std::time::Duration::from_millis(20));
            let at = offset as usize;
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            Ok(())
        }
    }

    fn request(source: &TextureSource, info: &Arc<Ktx2Info>) -> IoRequest {
        IoRequest {
            slot: 0,
            generation: 0,
            first: 0,
            end: 1,
            source: source.clone(),
            info: info.clone(),
            cancel: Arc::new(AtomicBool::new(false)),
            staged: None,
        }
    }

    /// Dropping the pool (a manager's `clear`, or the manager dropped) reads none of the
    /// requests still queued: before, the workers read every one of them first, and the render
    /// thread waited for all of them (or forever, behind a reader that hangs).
    #[test]
    fn dropping_the_pool_skips_the_queued_reads() {
        let tex = crate::ktx2::EncodedTexture {
            format: wgpu::TextureFormat::Bc7RgbaUnorm,
            width: 8,
            height: 8,
            levels: vec![vec![1u8; 64], vec![2u8; 16], vec![3u8; 16], vec![4u8; 16]],
            key_values: Vec::new(),
        };
        let mut bytes = Vec::new();
        crate::ktx2::write_ktx2(&mut bytes, &tex, None, "io test").unwrap();
        let reads = Arc::new(AtomicUsize::new(0));
        let source = TextureSource::reader(Slow {
            bytes,
            reads: reads.clone(),
        });
        let info = Arc::new(source.info(&Default::default()).unwrap());

        // One request read to the end: the reads a request takes.
        let pool = IoPool::new(1, 16);
        assert!(pool.try_request(request(&source, &info)));
        let r = pool.wait_result().unwrap();
        assert!(r.levels.is_ok(), "{:?}", r.levels.err());
        let per_request = reads.swap(0, Ordering::AcqRel);
        assert!(per_request >= 1);

        for _ in 0..10 {
            assert!(pool.try_request(request(&source, &info)));
        }
        drop(pool);
        let read = reads.load(Ordering::Acquire);
        // The request under way finishes (and, should the worker have taken the next one
        // before the drop, that one too); before, all ten were read.
        assert!(
            read <= 2 * per_request,
            "{read} reads after the drop ({per_request} a request)"
        );
    }
}
