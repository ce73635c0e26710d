//! GPU frame time from timestamp queries, read back a few frames late without blocking.
//!
//! A ring of [`SLOTS`] frames: each frame that is timed writes a begin and an end timestamp (on
//! the first and last render pass, through `timestamp_writes`, which needs only
//! `Features::TIMESTAMP_QUERY`), resolves them into its slot of a resolve buffer, copies that to
//! its own small readback buffer, and maps it after the submit. [`GpuTimer::poll`] checks the
//! device without waiting and turns every finished slot into milliseconds. When all slots are
//! still in flight (the GPU is more than [`SLOTS`] frames behind), a frame is simply not timed:
//! the controller keeps its last decision until a measurement arrives.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::Result;
use crate::budget::Category;
use crate::gpu::{GpuContext, TrackedBuffer};

/// Frames that may be in flight with a timing each. Why 4: swap chains queue up to 3 frames, and
/// one more lets the read-back lag a frame behind the GPU without dropping measurements.
pub const SLOTS: usize = 4;

/// Bytes of one slot in the resolve buffer (query resolves must start 256-byte aligned).
const SLOT_STRIDE: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
/// Two timestamps of 8 bytes.
const SLOT_BYTES: u64 = 2 * wgpu::QUERY_SIZE as u64;

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    /// Commands recorded (resolve + copy), not yet mapped: waiting for the submit.
    Recorded,
    /// `map_async` issued; the flag says when it finished.
    Mapping,
}

#[derive(Debug)]
struct Slot {
    readback: TrackedBuffer,
    state: State,
    flag: Arc<AtomicU8>,
    frame: u64,
}

/// See the module docs.
#[derive(Debug)]
pub struct GpuTimer {
    query_set: wgpu::QuerySet,
    resolve: TrackedBuffer,
    slots: [Slot; SLOTS],
    /// The slot the current frame writes, if it is timed.
    current: Option<usize>,
    next: usize,
    frame: u64,
    newest_frame: Option<u64>,
    last_ms: Option<f32>,
    period_ns: f32,
}

impl GpuTimer {
    /// A timer, or `Ok(None)` when the device lacks `Features::TIMESTAMP_QUERY` (the caller then
    /// uses CPU frame time). The buffers are charged to the ledger: the resolve buffer to
    /// `Buffers`, the readback buffers to `Staging` (about 1 KiB in all).
    pub fn new(ctx: &GpuContext) -> Result<Option<Self>> {
        let device = ctx.device();
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Ok(None);
        }
        let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("gpu timer"),
            ty: wgpu::QueryType::Timestamp,
            count: (2 * SLOTS) as u32,
        });
        let resolve = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("gpu timer resolve"),
                size: SLOT_STRIDE * SLOTS as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let slot = || -> Result<Slot> {
            Ok(Slot {
                readback: ctx.create_buffer(
                    &wgpu::BufferDescriptor {
                        label: Some("gpu timer readback"),
                        size: SLOT_BYTES,
                        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                        mapped_at_creation: false,
                    },
                    Category::Staging,
                )?,
                state: State::Free,
                flag: Arc::new(AtomicU8::new(PENDING)),
                frame: 0,
            })
        };
        let slots = [slot()?, slot()?, slot()?, slot()?];
        Ok(Some(Self {
            query_set,
            resolve,
            slots,
            current: None,
            next: 0,
            frame: 0,
            newest_frame: None,
            last_ms: None,
            period_ns: ctx.queue().get_timestamp_period(),
        }))
    }

    /// Starts a frame. Returns whether it will be timed: `false` when every slot is still in
    /// flight, in which case [`GpuTimer::pass_writes`] gives `None` and nothing is recorded.
    pub fn begin_frame(&mut self) -> bool {
        self.frame += 1;
        let i = self.next;
        if self.slots[i].state == State::Free {
            self.current = Some(i);
            self.slots[i].frame = self.frame;
            self.next = (i + 1) % SLOTS;
        } else {
            self.current = None;
        }
        self.current.is_some()
    }

    /// Timestamp writes for a render pass of the timed frame: `begin` on the frame's first pass,
    /// `end` on its last (both on a frame of one pass). `None` when this frame is not timed.
    pub fn pass_writes(
        &self,
        begin: bool,
        end: bool,
    ) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        let i = self.current? as u32;
        Some(wgpu::RenderPassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: begin.then_some(2 * i),
            end_of_pass_write_index: end.then_some(2 * i + 1),
        })
    }

    /// Records the resolve and the copy of this frame's timestamps into `encoder` (after the
    /// timed passes, before it is finished and submitted).
    pub fn end_frame(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let Some(i) = self.current else { return };
        let offset = SLOT_STRIDE * i as u64;
        let q = 2 * i as u32;
        encoder.resolve_query_set(&self.query_set, q..q + 2, self.resolve.buffer(), offset);
        encoder.copy_buffer_to_buffer(
            self.resolve.buffer(),
            offset,
            self.slots[i].readback.buffer(),
            0,
            SLOT_BYTES,
        );
        self.slots[i].state = State::Recorded;
        self.current = None;
    }

    /// Call after the encoder from [`GpuTimer::end_frame`] was submitted: starts the read-back.
    pub fn after_submit(&mut self) {
        for slot in &mut self.slots {
            if slot.state == State::Recorded {
                slot.flag.store(PENDING, Ordering::Release);
                let flag = slot.flag.clone();
                // wgpu boxes this callback: one small allocation per timed frame inside wgpu,
                // like the command encoder itself; mipflow's own code allocates nothing here.
                slot.readback
                    .buffer()
                    .map_async(wgpu::MapMode::Read, .., move |r| {
                        flag.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                    });
                slot.state = State::Mapping;
            }
        }
    }

    /// Checks the device without blocking and reads every finished slot. Returns the GPU time of
    /// the newest frame measured since the last call (ms), or `None` when none finished: feed it
    /// to [`super::ControllerInput::frame_time_ms`] as is.
    pub fn poll(&mut self, device: &wgpu::Device) -> Option<f32> {
        // An error here (device lost) leaves the slots pending; the caller sees no measurements.
        let _ = device.poll(wgpu::PollType::Poll);
        let mut newest: Option<(u64, f32)> = None;
        for slot in &mut self.slots {
            if slot.state != State::Mapping {
                continue;
            }
            match slot.flag.load(Ordering::Acquire) {
                PENDING => continue,
                MAPPED => {
                    let ms = read_slot(slot.readback.buffer(), self.period_ns);
                    slot.readback.buffer().unmap();
                    if let Some(ms) = ms
                        && newest.is_none_or(|(f, _)| slot.frame > f)
                    {
                        newest = Some((slot.frame, ms));
                    }
                }
                _ => {}
            }
            slot.state = State::Free;
        }
        let (frame, ms) = newest?;
        // Slots finish in order, but never report an older frame after a newer one.
        if self.newest_frame.is_some_and(|f| f >= frame) {
            return None;
        }
        self.newest_frame = Some(frame);
        self.last_ms = Some(ms);
        Some(ms)
    }

    /// The most recent measurement (ms), if any.
    pub fn last_ms(&self) -> Option<f32> {
        self.last_ms
    }

    /// Nanoseconds per timestamp tick on this queue.
    pub fn period_ns(&self) -> f32 {
        self.period_ns
    }
}

/// Milliseconds between the two timestamps of a mapped slot; `None` when they are not in order
/// (a pass that did not write them, or a counter reset).
fn read_slot(buffer: &wgpu::Buffer, period_ns: f32) -> Option<f32> {
    let view = buffer.slice(..).get_mapped_range().ok()?;
    let bytes: &[u8] = &view;
    let begin = u64::from_le_bytes(bytes.get(0..8)?.try_into().ok()?);
    let end = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    if end <= begin {
        return None;
    }
    let ms = (end - begin) as f64 * f64::from(period_ns) / 1e6;
    Some(ms as f32)
}
