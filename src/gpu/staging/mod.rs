//! A ring of persistently mapped staging buffers for texture uploads.
//!
//! `queue.write_texture` allocates a fresh staging buffer for every call and copies into it; on
//! lavapipe that costs 6.6x the time of copying into a buffer that stays allocated
//! (`cargo bench --bench upload`: 4.65 ms against 0.70 ms for a 2048² BC7 chain), and on any GPU it
//! churns the allocator. The ring keeps a few fixed-size chunks: a chunk is filled while mapped,
//! unmapped and copied to the texture by the frame's upload submit, mapped again once the GPU has
//! finished that frame, and reused. Chunks are charged to [`Category::Staging`] for as long as they
//! exist; idle chunks are freed after a while, so a settled scene holds no staging.
//!
//! A chunk can also be lent ([`StagingRing::lend`]) to an IO worker, which reads a texture's
//! levels straight into it ([`StagingLease`]): the bytes are then copied once on the CPU (from
//! the file, or from the decoder) instead of twice (into the worker's buffer, then into the ring
//! on the render thread). The render thread later records the copies into the texture from the
//! chunk ([`StagingRing::copy_staged`]), with no CPU copy at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

mod lend;

pub use lend::{RowWriter, StagedLayout, StagedLevel, StagingLease};

use super::{GpuContext, TrackedBuffer, upload};
use crate::budget::Category;
use crate::{Error, Result};

/// Frames a base chunk may stay unused before it is freed.
const IDLE_FRAMES: u32 = 120;

/// Frames a burst chunk (beyond the base count) may stay unused before it is freed.
const BURST_IDLE_FRAMES: u32 = 2;

/// Offsets of copies in a chunk are aligned to this (wgpu wants a multiple of the texel block
/// size; 256 also keeps rows cache-line aligned).
const ALIGN: u64 = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64;

const MAPPED: u8 = 0;
const IN_FLIGHT: u8 = 1;
const MAPPING: u8 = 2;
const FAILED: u8 = 3;
/// Mapped and lent to IO workers: its `used` bytes are leases' levels (written, or being written).
const LENT: u8 = 4;
/// Unmapped for the copies out of it; its levels are still held ([`StagedLevel`]).
const HELD: u8 = 5;

struct Chunk {
    /// Shared with the leases and staged levels of a lent chunk: the buffer is destroyed (and
    /// uncharged) only when the last of them is gone, never under a worker that still writes.
    buf: Arc<TrackedBuffer>,
    /// Bytes used this frame (while mapped), or lent.
    used: u64,
    /// MAPPED, IN_FLIGHT (submitted in `frame`), MAPPING (map requested), FAILED, LENT, HELD.
    state: Arc<AtomicU8>,
    frame: u64,
    idle: u32,
    /// One more holder per lease whose worker may still write into the mapping: a lent chunk
    /// is unmapped only when this is the ring's alone.
    writers: Arc<()>,
    /// A lent chunk that takes no more leases (a copy out of it is waiting for its unmap).
    sealed: bool,
    /// Copies out of a held chunk were recorded since the last submit.
    copied: bool,
}

impl Chunk {
    fn new(buf: TrackedBuffer, state: u8) -> Self {
        Self {
            buf: Arc::new(buf),
            used: 0,
            state: Arc::new(AtomicU8::new(state)),
            frame: 0,
            idle: 0,
            writers: Arc::new(()),
            sealed: false,
            copied: false,
        }
    }

    fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    /// Whether no lease or staged level holds the chunk any more (`Arc::get_mut` reads the
    /// counts with acquire ordering: a worker's writes and its view's drop happen before).
    fn alone(&mut self) -> bool {
        Arc::get_mut(&mut self.buf).is_some() && Arc::get_mut(&mut self.writers).is_some()
    }

    /// Whether no lease of the chunk is still being written.
    fn written(&mut self) -> bool {
        Arc::get_mut(&mut self.writers).is_some()
    }
}

/// The ring. Not `Sync`: the streamer owns it on the render thread.
pub struct StagingRing {
    chunks: Vec<Chunk>,
    chunk_bytes: u64,
    /// Chunks kept while the ring is in use (they live in the caller's headroom).
    base_chunks: usize,
    /// Chunks at most: those beyond the base are made only when the caller's room allows and
    /// freed as soon as a frame does not need them (a burst when the budget has room to spare).
    max_chunks: usize,
    encoder: Option<wgpu::CommandEncoder>,
    /// Bytes written since the last submit.
    pending: u64,
    /// The last frame whose submit sent copies ([`StagingRing::submitted_frame`]).
    submitted: u64,
}

impl std::fmt::Debug for StagingRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingRing")
            .field("chunks", &self.chunks.len())
            .field("chunk_bytes", &self.chunk_bytes)
            .finish()
    }
}

impl Default for StagingRing {
    fn default() -> Self {
        Self::new(1 << 20, 4, 4)
    }
}

impl StagingRing {
    /// A ring of chunks of `chunk_bytes` (made when first needed): `base_chunks` kept while in
    /// use, up to `max_chunks` in a burst.
    pub fn new(chunk_bytes: u64, base_chunks: usize, max_chunks: usize) -> Self {
        Self {
            chunks: Vec::new(),
            chunk_bytes: chunk_bytes.max(ALIGN),
            base_chunks: base_chunks.max(1),
            max_chunks: max_chunks.max(base_chunks).max(1),
            encoder: None,
            pending: 0,
            submitted: 0,
        }
    }

    /// Sets the chunk size and counts for chunks made from now on (a free chunk of another size
    /// is dropped). The ring keeps `chunk_bytes * base_chunks` while in use, and holds at most
    /// `chunk_bytes * max_chunks`.
    pub fn set_size(&mut self, chunk_bytes: u64, base_chunks: usize, max_chunks: usize) {
        let chunk_bytes = chunk_bytes.clamp(ALIGN, u64::MAX / 2).div_ceil(ALIGN) * ALIGN;
        self.base_chunks = base_chunks.max(1);
        self.max_chunks = max_chunks.max(self.base_chunks);
        if chunk_bytes != self.chunk_bytes {
            self.chunk_bytes = chunk_bytes;
            self.chunks.retain(|c| {
                c.buf.bytes() == chunk_bytes || c.state.load(Ordering::Acquire) != MAPPED
            });
        }
    }

    /// Bytes the ring's chunks hold on the GPU now.
    pub fn bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.buf.bytes()).sum()
    }

    /// The chunk size.
    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Copies rows `first..first + n` of blocks of `level` of `texture` from `data` (tightly
    /// packed rows of blocks) into a mapped chunk, padding each row to wgpu's 256-byte row
    /// alignment, and records the copy into the texture. Writes as many
    /// whole rows as one chunk holds, and returns that count: 0 when no chunk has room and no new
    /// one fits within `room` bytes (the caller retries next frame). A new chunk is charged to
    /// [`Category::Staging`].
    pub fn write_rows(
        &mut self,
        ctx: &GpuContext,
        texture: &wgpu::Texture,
        level: u32,
        first: u32,
        data: &[u8],
        room: u64,
    ) -> Result<u32> {
        let (row_bytes, rows) = upload::level_rows(texture, level);
        let row = u64::from(row_bytes);
        if row == 0 || !(data.len() as u64).is_multiple_of(row) {
            return Err(Error::InvalidResource {
                label: "staged texture upload".into(),
                reason: format!("{} bytes is not whole rows of {row}", data.len()),
            });
        }
        let want = (data.len() as u64 / row) as u32;
        if want == 0 || first.saturating_add(want) > rows {
            return Ok(0);
        }
        let padded = row.div_ceil(ALIGN) * ALIGN;
        if padded > self.chunk_bytes {
            return Err(Error::InvalidResource {
                label: "staged texture upload".into(),
                reason: format!(
                    "a row of {padded} bytes exceeds the staging chunk ({} bytes)",
                    self.chunk_bytes
                ),
            });
        }
        let Some(k) = self.chunk_with_room(ctx, padded, room)? else {
            return Ok(0);
        };
        let c = &mut self.chunks[k];
        let offset = c.used;
        let fit = ((c.buf.bytes() - offset) / padded).min(u64::from(want)) as u32;
        let span = u64::from(fit) * padded;
        {
            let mut view = c
                .buf
                .buffer()
                .get_mapped_range_mut(offset..offset + span)
                .map_err(|e| Error::Validation {
                    context: "staging chunk".into(),
                    message: e.to_string(),
                })?;
            for (r, src) in data
                .chunks_exact(row as usize)
                .take(fit as usize)
                .enumerate()
            {
                let at = r * padded as usize;
                view.slice(at..at + row as usize).copy_from_slice(src);
            }
        }
        c.used = (offset + span).div_ceil(ALIGN) * ALIGN;
        c.idle = 0;
        let buffer = c.buf.buffer().clone();
        self.record_rows(
            ctx,
            &buffer,
            offset,
            padded as u32,
            texture,
            level,
            first,
            fit,
        );
        self.pending += span;
        Ok(fit)
    }

    /// Writes a whole level through the ring, chunk after chunk, with no budget limit (tools and
    /// benches: the streamer goes band by band within its caps). Fails when a chunk cannot hold
    /// one row, or no chunk is free (submit and recycle between levels if the ring is small).
    pub fn write_level(
        &mut self,
        ctx: &GpuContext,
        texture: &wgpu::Texture,
        level: u32,
        data: &[u8],
    ) -> Result<()> {
        let (row, _) = upload::level_rows(texture, level);
        let mut first = 0u32;
        while (first as usize) * (row as usize) < data.len() {
            let rest = &data[first as usize * row as usize..];
            match self.write_rows(ctx, texture, level, first, rest, u64::MAX)? {
                0 => {
                    return Err(Error::InvalidResource {
                        label: "staged texture upload".into(),
                        reason: "no staging chunk is free".into(),
                    });
                }
                n => first += n,
            }
        }
        Ok(())
    }

    /// A mapped chunk with at least `need` bytes left, made when none has and the ring may grow
    /// within `room`.
    fn chunk_with_room(&mut self, ctx: &GpuContext, need: u64, room: u64) -> Result<Option<usize>> {
        let found = self.chunks.iter().position(|c| {
            c.state.load(Ordering::Acquire) == MAPPED
                && c.buf.bytes() == self.chunk_bytes
                && c.buf.bytes() - c.used >= need
        });
        if found.is_some() {
            return Ok(found);
        }
        self.new_chunk(ctx, room)
    }

    /// A new mapped chunk, when the ring may grow within `room`.
    fn new_chunk(&mut self, ctx: &GpuContext, room: u64) -> Result<Option<usize>> {
        if self.chunks.len() >= self.max_chunks || self.chunk_bytes > room {
            return Ok(None);
        }
        let buf = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("texture upload staging"),
                size: self.chunk_bytes,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            },
            Category::Staging,
        )?;
        self.chunks.push(Chunk::new(buf, MAPPED));
        Ok(Some(self.chunks.len() - 1))
    }

    /// Records the copy of `rows` rows of blocks, `pitch` bytes apart from `offset` in `buffer`,
    /// into rows `first..` of mip `mip` of `texture`.
    #[allow(clippy::too_many_arguments)]
    fn record_rows(
        &mut self,
        ctx: &GpuContext,
        buffer: &wgpu::Buffer,
        offset: u64,
        pitch: u32,
        texture: &wgpu::Texture,
        mip: u32,
        first: u32,
        rows: u32,
    ) {
        let (bw, bh) = texture.format().block_dimensions();
        let physical = texture
            .size()
            .mip_level_size(mip, texture.dimension())
            .physical_size(texture.format());
        self.encoder(ctx).copy_buffer_to_texture(
            wgpu::TexelCopyBufferInfo {
                buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset,
                    bytes_per_row: Some(pitch),
                    rows_per_image: Some(rows),
                },
            },
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: mip,
                origin: wgpu::Origin3d {
                    x: 0,
                    y: first * bh,
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::Extent3d {
                width: physical.width / bw * bw,
                height: rows * bh,
                depth_or_array_layers: 1,
            },
        );
    }

    /// The encoder the ring's copies are recorded in (made on first use): other copies that must
    /// be ordered with them (a rebuild's copies of the old texture's levels) go here too.
    pub fn encoder(&mut self, ctx: &GpuContext) -> &mut wgpu::CommandEncoder {
        self.encoder.get_or_insert_with(|| {
            ctx.device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("staged uploads"),
                })
        })
    }

    /// Submits the copies recorded since the last call (after unmapping the chunks they read),
    /// tagged with `frame`. Call before the frame's draw is submitted, so it sees the uploads.
    pub fn submit(&mut self, ctx: &GpuContext, frame: u64) {
        let Some(encoder) = self.encoder.take() else {
            self.seal_lent();
            return;
        };
        for c in &mut self.chunks {
            match c.state() {
                MAPPED if c.used > 0 => {
                    c.buf.buffer().unmap();
                    c.state.store(IN_FLIGHT, Ordering::Release);
                    c.frame = frame;
                    c.used = 0;
                }
                // A held chunk goes back (in `recycle`) once its levels are gone and the GPU has
                // finished the last frame that copied out of it.
                HELD if c.copied => {
                    c.frame = frame;
                    c.copied = false;
                }
                _ => {}
            }
        }
        self.seal_lent();
        ctx.queue().submit([encoder.finish()]);
        self.pending = 0;
        self.submitted = self.submitted.max(frame);
    }

    /// The last frame whose [`StagingRing::submit`] sent copies: chunks tagged with it come
    /// back once the GPU has finished that frame.
    pub fn submitted_frame(&self) -> u64 {
        self.submitted
    }

    /// Recycles chunks: those whose frame the GPU has finished (`completed`) are mapped again,
    /// failed ones and long-idle ones are freed. Never blocks (mapping completes on a later
    /// device poll).
    pub fn recycle(&mut self, completed: u64) {
        for c in &mut self.chunks {
            // A lent chunk whose leases and levels are all gone comes back: still mapped (nothing
            // was copied out of it), or once the GPU has finished its copies.
            if c.alone() {
                match c.state() {
                    LENT => {
                        c.state.store(MAPPED, Ordering::Release);
                        c.used = 0;
                        c.sealed = false;
                        c.idle = 0;
                    }
                    HELD if !c.copied => {
                        c.state.store(IN_FLIGHT, Ordering::Release);
                        c.used = 0;
                        c.sealed = false;
                    }
                    _ => {}
                }
            }
            match c.state.load(Ordering::Acquire) {
                IN_FLIGHT if c.frame <= completed => {
                    c.state.store(MAPPING, Ordering::Release);
                    let state = c.state.clone();
                    c.buf
                        .buffer()
                        .slice(..)
                        .map_async(wgpu::MapMode::Write, move |r| {
                            state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                        });
                }
                MAPPED => c.idle += 1,
                _ => {}
            }
        }
        // Freed: failed chunks, idle ones (burst chunks after two frames, base ones after a
        // while), and free ones of a size no longer made (they would count against the maximum
        // without ever being used).
        let size = self.chunk_bytes;
        let base = self.base_chunks;
        let mut k = 0;
        self.chunks.retain(|c| {
            let s = c.state.load(Ordering::Acquire);
            let idle_limit = if k < base {
                IDLE_FRAMES
            } else {
                BURST_IDLE_FRAMES
            };
            let keep =
                s != FAILED && !(s == MAPPED && (c.idle > idle_limit || c.buf.bytes() != size));
            k += usize::from(keep);
            keep
        });
    }

    /// Frees every chunk the GPU no longer holds (mapped, or waiting to be mapped again), keeping
    /// only those still in flight: after a budget drop, once the GPU has finished
    /// ([`GpuContext::wait_idle`] and [`StagingRing::recycle`]), this gives all of the ring's
    /// memory back. Chunks written and not yet submitted are kept.
    pub fn free_unused(&mut self) {
        self.chunks
            .retain(|c| match c.state.load(Ordering::Acquire) {
                // Lent and held chunks belong to grows: the streamer cancels those first.
                IN_FLIGHT | LENT | HELD => true,
                MAPPED => c.used > 0,
                _ => false,
            });
    }

    /// Whether copies are recorded and not yet submitted, or chunks are still in the GPU's hands.
    pub fn busy(&self) -> bool {
        self.pending > 0
            || self.chunks.iter().any(|c| match c.state() {
                // A lent chunk waits for no GPU work, nor does a held one whose levels are
                // still held and whose copies are submitted (it comes back only later).
                MAPPED | LENT => false,
                HELD => c.copied || Arc::strong_count(&c.buf) == 1,
                _ => true,
            })
    }
}
