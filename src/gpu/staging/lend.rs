//! Lending chunks of the ring to IO workers: a lease of a mapped chunk, written on another
//! thread, and the copies out of it recorded with no CPU copy (see the module above).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{ALIGN, HELD, LENT, MAPPED, StagingRing};
use crate::gpu::{GpuContext, TrackedBuffer, upload};
use crate::{Error, Result};

/// Where one level lies in a lent chunk: `rows` rows of blocks of `row` bytes each, `pitch`
/// bytes apart (wgpu's 256-byte row alignment), from `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagedLayout {
    /// Offset of the level's first row in the chunk.
    pub offset: u64,
    /// Bytes of one row of blocks.
    pub row: u32,
    /// Bytes from one row to the next in the chunk.
    pub pitch: u32,
    /// Rows of blocks.
    pub rows: u32,
}

impl StagedLayout {
    /// The level's bytes (tightly packed, as in a KTX2 file).
    pub fn bytes(&self) -> u64 {
        u64::from(self.row) * u64::from(self.rows)
    }
}

/// Part of a mapped staging chunk lent to a writer (an IO worker) for some levels: write each
/// level with [`StagingLease::level`], then [`StagingLease::finish`] for the levels to copy from.
/// `Send`, so the lease can travel with a read request. Dropping it (a cancelled read) gives the
/// room back once the chunk's other leases are done.
pub struct StagingLease {
    // Declared first, so dropped first: the mapping is let go before the chunk can be.
    view: Option<wgpu::BufferViewMut>,
    layouts: Vec<StagedLayout>,
    /// The view starts at this offset of the chunk.
    base: u64,
    writer: Option<Arc<()>>,
    chunk: Arc<TrackedBuffer>,
}

impl std::fmt::Debug for StagingLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingLease")
            .field("layouts", &self.layouts)
            .finish()
    }
}

impl StagingLease {
    /// The levels' layouts, in the order they were asked for.
    pub fn layouts(&self) -> &[StagedLayout] {
        &self.layouts
    }

    /// A writer for the `k`-th level: its bytes, written in order, land in its padded rows.
    pub fn level(&mut self, k: usize) -> Option<RowWriter<'_>> {
        let l = *self.layouts.get(k)?;
        let view = self.view.as_mut()?;
        let start = (l.offset - self.base) as usize;
        let len = if l.rows == 0 {
            0
        } else {
            (l.rows as usize - 1) * l.pitch as usize + l.row as usize
        };
        Some(RowWriter {
            dst: view.slice(start..start + len),
            row: l.row as usize,
            pitch: l.pitch as usize,
            len: l.bytes() as usize,
            pos: 0,
        })
    }

    /// Ends the writes: the levels, ready for [`StagingRing::copy_staged`] (what was not written
    /// is undefined, so only call this when every level was written whole).
    pub fn finish(mut self) -> Vec<StagedLevel> {
        self.view = None;
        self.writer = None;
        self.layouts
            .iter()
            .map(|&layout| StagedLevel {
                chunk: self.chunk.clone(),
                layout,
            })
            .collect()
    }
}

/// One level's bytes in a staging chunk, ready to be copied into a texture (the chunk is held
/// while any of its levels is).
pub struct StagedLevel {
    chunk: Arc<TrackedBuffer>,
    layout: StagedLayout,
}

impl std::fmt::Debug for StagedLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.layout.fmt(f)
    }
}

impl StagedLevel {
    /// Where the level lies in its chunk.
    pub fn layout(&self) -> StagedLayout {
        self.layout
    }
}

/// Writes one level's bytes, in file order, into its padded rows of a mapped chunk.
pub struct RowWriter<'a> {
    dst: wgpu::WriteOnly<'a, [u8]>,
    row: usize,
    pitch: usize,
    len: usize,
    pos: usize,
}

impl RowWriter<'_> {
    /// Appends `src`; false (and nothing written) when it would run past the level's bytes.
    pub fn write(&mut self, mut src: &[u8]) -> bool {
        if src.len() > self.len - self.pos {
            return false;
        }
        while !src.is_empty() {
            let (r, c) = (self.pos / self.row, self.pos % self.row);
            let n = (self.row - c).min(src.len());
            let at = r * self.pitch + c;
            self.dst.slice(at..at + n).copy_from_slice(&src[..n]);
            self.pos += n;
            src = &src[n..];
        }
        true
    }

    /// Reads the whole level from `file` at `offset` straight into the mapped chunk: the one
    /// copy of its bytes (the kernel's, from the page cache), with no buffer in between. Only
    /// for a level whose rows lie back to back in the chunk (rows of a multiple of 256 bytes,
    /// or one row) and nothing written yet; `None` otherwise (then [`RowWriter::write`] the
    /// bytes; also when the level's end lies past what `pread` can address, as on 32-bit
    /// targets). A file shorter than the level is an [`std::io::ErrorKind::UnexpectedEof`]
    /// error, with [`RowWriter::written`] saying how far it got.
    #[cfg(unix)]
    pub fn read_at(&mut self, file: &std::fs::File, offset: u64) -> Option<std::io::Result<()>> {
        use std::os::fd::AsRawFd;
        let contiguous = self.pitch == self.row || self.len <= self.row;
        let addressable = offset
            .checked_add(self.len as u64)
            .is_some_and(|end| libc::off_t::try_from(end).is_ok());
        if self.pos != 0 || !contiguous || !addressable || self.dst.len() < self.len {
            return None;
        }
        let start = self.dst.as_raw_element_ptr().as_ptr();
        while self.pos < self.len {
            let want = (self.len - self.pos).min(1 << 30);
            // In range: `offset + len` fits `off_t` (checked above).
            let at = (offset + self.pos as u64) as libc::off_t;
            // SAFETY: `start + pos .. start + pos + want` lies within `dst` (`pos + want <=
            // len <= dst.len()`), mapped memory valid for writes that nothing else touches
            // while this writer borrows it. `pread` only writes there (no read of the write-only
            // memory, no reference to it is made) and every byte value is a valid `u8`.
            let n = unsafe { libc::pread(file.as_raw_fd(), start.add(self.pos).cast(), want, at) };
            match n {
                n if n > 0 => self.pos += n as usize,
                0 => return Some(Err(std::io::ErrorKind::UnexpectedEof.into())),
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Some(Err(e));
                    }
                }
            }
        }
        Some(Ok(()))
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.pos
    }

    /// The level's bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the level has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Where each level of a lease starting at `base` lies (rows padded to [`ALIGN`], each level
/// starting on an [`ALIGN`] boundary), pushed to `out` when given; the lease's bytes, or `None`
/// for a level that cannot be staged (no bytes in a row, or a pitch past `u32`).
fn staged_layouts(
    levels: &[(u32, u32)],
    base: u64,
    mut out: Option<&mut Vec<StagedLayout>>,
) -> Option<u64> {
    let mut size = 0u64;
    for &(row, rows) in levels {
        let pitch = u64::from(row).div_ceil(ALIGN) * ALIGN;
        if row == 0 || pitch > u64::from(u32::MAX) {
            return None;
        }
        if let Some(out) = out.as_deref_mut() {
            out.push(StagedLayout {
                offset: base + size,
                row,
                pitch: pitch as u32,
                rows,
            });
        }
        size = size.saturating_add(pitch.saturating_mul(u64::from(rows)));
        size = size.div_ceil(ALIGN) * ALIGN;
    }
    Some(size)
}

impl StagingRing {
    /// Lends room for levels of `(row bytes, rows)` each to a writer, in one mapped chunk: a
    /// lent chunk of this frame with room left, or a free chunk, or a new one within `room`
    /// bytes while the ring has fewer than its base chunks. `None` when they do not fit one
    /// chunk, or no chunk can be lent: at most all but one of the base chunks are lent at once,
    /// and a chunk is lent only while `room` (the bytes under the budget) would still hold the
    /// ring's whole base, so the banded uploads ([`Self::write_rows`]) never wait for chunks
    /// that reads hold (the caller then reads into its own buffer).
    pub fn lend(
        &mut self,
        ctx: &GpuContext,
        levels: &[(u32, u32)],
        room: u64,
    ) -> Result<Option<StagingLease>> {
        // The size first, the layouts only once a lease is possible: a read that does not
        // fit is asked again on later frames, and allocated nothing each time.
        let Some(size) = staged_layouts(levels, 0, None) else {
            return Ok(None);
        };
        if size == 0 || size > self.chunk_bytes {
            return Ok(None);
        }
        let open = self
            .chunks
            .iter()
            .position(|c| c.state() == LENT && !c.sealed && c.buf.bytes() - c.used >= size);
        let k = match open {
            Some(k) => k,
            None => {
                let lent = self
                    .chunks
                    .iter()
                    .filter(|c| matches!(c.state(), LENT | HELD))
                    .count();
                // A chunk held for reads is one the banded uploads cannot use: lent only while
                // the room under the budget would still make the ring's whole base beside it,
                // so that under a tight budget the bands (and so the builds) never wait for
                // chunks that reads hold.
                let base_bytes = self.chunk_bytes.saturating_mul(self.base_chunks as u64);
                if lent + 1 >= self.base_chunks || room < base_bytes {
                    return Ok(None);
                }
                let free = self.chunks.iter().position(|c| {
                    c.state() == MAPPED && c.used == 0 && c.buf.bytes() == self.chunk_bytes
                });
                // A new chunk only within the base count: lent chunks are held while their
                // reads wait to be built, so they stay inside the headroom the ring lives in,
                // never in a burst (which would take room the builds need under the budget).
                let k = match free {
                    Some(k) => k,
                    None if self.chunks.len() < self.base_chunks => {
                        match self.new_chunk(ctx, room)? {
                            Some(k) => k,
                            None => return Ok(None),
                        }
                    }
                    None => return Ok(None),
                };
                self.chunks[k].state.store(LENT, Ordering::Release);
                k
            }
        };
        let c = &mut self.chunks[k];
        let base = c.used;
        let mut layouts = Vec::with_capacity(levels.len());
        staged_layouts(levels, base, Some(&mut layouts));
        let view = c
            .buf
            .buffer()
            .get_mapped_range_mut(base..base + size)
            .map_err(|e| Error::Validation {
                context: "staging chunk".into(),
                message: e.to_string(),
            })?;
        c.used = base + size;
        c.idle = 0;
        Ok(Some(StagingLease {
            view: Some(view),
            layouts,
            base,
            writer: Some(c.writers.clone()),
            chunk: c.buf.clone(),
        }))
    }

    /// Records the copy of rows `first..first + n` of `level`'s blocks into mip `mip` of
    /// `texture`, straight from its staging chunk (no CPU copy). Returns the rows recorded: 0
    /// while another lease of the chunk is still being written (the chunk is unmapped before
    /// its first copy; try again next frame).
    pub fn copy_staged(
        &mut self,
        ctx: &GpuContext,
        level: &StagedLevel,
        texture: &wgpu::Texture,
        mip: u32,
        first: u32,
        n: u32,
    ) -> Result<u32> {
        let Some(k) = self
            .chunks
            .iter()
            .position(|c| Arc::ptr_eq(&c.buf, &level.chunk))
        else {
            return Err(Error::InvalidResource {
                label: "staged texture upload".into(),
                reason: "the level's staging chunk is not the ring's".into(),
            });
        };
        let l = level.layout;
        let (row, rows) = upload::level_rows(texture, mip);
        if row != l.row || rows != l.rows {
            return Err(Error::InvalidResource {
                label: "staged texture upload".into(),
                reason: format!(
                    "staged rows {}x{} do not match the texture level's {row}x{rows}",
                    l.row, l.rows
                ),
            });
        }
        let n = n.min(rows.saturating_sub(first));
        if n == 0 {
            return Ok(0);
        }
        let c = &mut self.chunks[k];
        match c.state() {
            LENT => {
                c.sealed = true;
                if !c.written() {
                    return Ok(0);
                }
                c.buf.buffer().unmap();
                c.state.store(HELD, Ordering::Release);
            }
            HELD => {}
            _ => {
                return Err(Error::InvalidResource {
                    label: "staged texture upload".into(),
                    reason: "the level's staging chunk was given back".into(),
                });
            }
        }
        c.copied = true;
        c.idle = 0;
        let buffer = c.buf.buffer().clone();
        let offset = l.offset + u64::from(first) * u64::from(l.pitch);
        self.record_rows(ctx, &buffer, offset, l.pitch, texture, mip, first, n);
        self.pending += u64::from(n) * u64::from(l.pitch);
        Ok(n)
    }

    /// Closes the chunks lent so far to more leases (called at each submit, the end of a frame's
    /// uploads). Why: a chunk is unmapped only when none of its leases is still being written, so
    /// a chunk that took leases frame after frame would never be free of writers, and the copies
    /// out of it would wait behind reads asked for later.
    pub(super) fn seal_lent(&mut self) {
        for c in &mut self.chunks {
            if c.state() == LENT {
                c.sealed = true;
            }
        }
    }

    /// Whether a lease or a staged level of a lent chunk is held outside the ring.
    pub fn leases_out(&self) -> bool {
        self.chunks.iter().any(|c| {
            matches!(c.state(), LENT | HELD)
                && (Arc::strong_count(&c.buf) > 1 || Arc::strong_count(&c.writers) > 1)
        })
    }

    /// Whether copies out of `level`'s chunk can be recorded now: every lease of the chunk has
    /// been written (a build does not start on a level whose chunk another read still fills).
    /// (A level whose chunk is not the ring's is ready too: [`Self::copy_staged`] then fails
    /// with a typed error, rather than a step waiting for it for ever.)
    pub fn staged_ready(&mut self, level: &StagedLevel) -> bool {
        self.chunks
            .iter_mut()
            .find(|c| Arc::ptr_eq(&c.buf, &level.chunk))
            .is_none_or(|c| c.state() == HELD || c.written())
    }

    /// Whether [`Self::lend`] could lend a chunk at all with `room` (a cheap check before a
    /// caller works out the layouts).
    pub fn may_lend(&self, room: u64) -> bool {
        let open = self.chunks.iter().any(|c| c.state() == LENT && !c.sealed);
        open || room >= self.chunk_bytes.saturating_mul(self.base_chunks as u64)
    }

    /// Chunks lent or held for staged levels now.
    pub fn lent_chunks(&self) -> usize {
        self.chunks
            .iter()
            .filter(|c| matches!(c.state(), LENT | HELD))
            .count()
    }
}
