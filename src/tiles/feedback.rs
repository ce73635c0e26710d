//! Tile feedback: the counters `vt_sample_feedback` adds to (one per page entry), copied into a
//! ring of readback buffers and cleared each frame, and mapped without waiting: a frame uses
//! the newest counts that have arrived (typically 1-3 frames old).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::Result;
use crate::budget::Category;
use crate::gpu::{GpuContext, TrackedBuffer};

/// A readback buffer's state.
const FREE: u8 = 0;
const COPIED: u8 = 1;
const MAPPING: u8 = 2;
const MAPPED: u8 = 3;

/// Pixels each count stands for: one pixel in each 4x4 block records per frame.
pub(super) const PIXELS_PER_COUNT: f32 = 16.0;

struct Readback {
    buffer: TrackedBuffer,
    state: Arc<AtomicU8>,
    /// Entries copied into it.
    len: u64,
    /// The frame it was copied in.
    frame: u64,
}

/// The counters, the frame uniform and the readback ring.
pub(super) struct TileFeedback {
    pub(super) counters: TrackedBuffer,
    pub(super) frame_uniform: TrackedBuffer,
    ring: Vec<Readback>,
    /// The newest readback's frame used so far.
    newest: Option<u64>,
}

impl TileFeedback {
    pub(super) fn new(ctx: &GpuContext, entries: u32, ring: usize) -> Result<Self> {
        let bytes = u64::from(entries.max(1)) * 4;
        let counters = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("tile feedback"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let frame_uniform = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("tile feedback frame"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let ring = (0..ring.max(1))
            .map(|_| {
                Ok(Readback {
                    buffer: ctx.create_buffer(
                        &wgpu::BufferDescriptor {
                            label: Some("tile feedback readback"),
                            size: bytes,
                            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: false,
                        },
                        Category::Buffers,
                    )?,
                    state: Arc::new(AtomicU8::new(FREE)),
                    len: 0,
                    frame: 0,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            counters,
            frame_uniform,
            ring,
            newest: None,
        })
    }

    /// Bytes of every buffer here (all on the ledger).
    pub(super) fn bytes(&self) -> u64 {
        self.counters.bytes()
            + self.frame_uniform.bytes()
            + self.ring.iter().map(|r| r.buffer.bytes()).sum::<u64>()
    }

    /// Records into `encoder` the copy of the first `entries` counters into a free readback
    /// buffer and their clearing. False (the counts keep adding up into the next frame) when
    /// every readback buffer is still in use.
    pub(super) fn record(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        entries: u32,
        frame: u64,
    ) -> bool {
        let Some(r) = self
            .ring
            .iter_mut()
            .find(|r| r.state.load(Ordering::Acquire) == FREE)
        else {
            return false;
        };
        let bytes = u64::from(entries.max(1)) * 4;
        encoder.copy_buffer_to_buffer(self.counters.buffer(), 0, r.buffer.buffer(), 0, bytes);
        encoder.clear_buffer(self.counters.buffer(), 0, Some(bytes));
        r.len = u64::from(entries);
        r.frame = frame;
        r.state.store(COPIED, Ordering::Release);
        true
    }

    /// After the submit that holds [`TileFeedback::record`]'s copy: asks for the copies to be
    /// mapped (the callback marks them; nothing waits).
    pub(super) fn submitted(&mut self) {
        for r in &mut self.ring {
            if r.state.load(Ordering::Acquire) != COPIED {
                continue;
            }
            r.state.store(MAPPING, Ordering::Release);
            let state = Arc::clone(&r.state);
            r.buffer.buffer().slice(..r.len.max(1) * 4).map_async(
                wgpu::MapMode::Read,
                move |res| {
                    state.store(if res.is_ok() { MAPPED } else { FREE }, Ordering::Release);
                },
            );
        }
    }

    /// Every readback that has arrived, oldest first, handed to `f` (its frame and counts),
    /// then unmapped for reuse. An older one than a readback already used is dropped.
    pub(super) fn take(&mut self, mut f: impl FnMut(u64, &[u32])) {
        // The ring is small (at most 8): its arrived buffers in an array, oldest first.
        let mut ready = [0usize; 8];
        let mut n = 0;
        for (i, r) in self.ring.iter().enumerate().take(8) {
            if r.state.load(Ordering::Acquire) == MAPPED {
                ready[n] = i;
                n += 1;
            }
        }
        ready[..n].sort_unstable_by_key(|&i| self.ring[i].frame);
        for &i in &ready[..n] {
            let r = &self.ring[i];
            if self.newest.is_none_or(|n| r.frame > n)
                && let Ok(data) = r
                    .buffer
                    .buffer()
                    .slice(..r.len.max(1) * 4)
                    .get_mapped_range()
            {
                let counts: &[u32] = bytemuck::cast_slice(&data[..r.len as usize * 4]);
                f(r.frame, counts);
                self.newest = Some(r.frame);
            }
            r.buffer.buffer().unmap();
            r.state.store(FREE, Ordering::Release);
        }
    }
}
