//! GPU feedback: what the GPU really sampled decides the mips. A fragment shader records, for a
//! sample of its pixels, the level the sampler uses for each texture (`shaders/feedback.wgsl`,
//! [`Feedback::wgsl`] for a game's own shaders); the counts land directly in a histogram per
//! texture slot on the GPU (atomic adds, 16 bins a slot); the bins of the slots a frame drew are
//! gathered each frame into a ring of readback buffers (below) and mapped asynchronously. A
//! frame never waits for a readback: it uses the newest one that has arrived (typically 1-3
//! frames old), and the histograms go to the budget manager as demand form (b)
//! ([`crate::BudgetManager::add_demand_levels`]), where the planner prices each level by the
//! pixels that want it. A texture behind a wall gets no pixels, and a wall at a grazing angle
//! gets level 0 only for the few pixels that need it.
//!
//! A frame's cost follows the slots it draws, not the slots registered: a slot's first record in
//! a frame also lists the slot (a per-slot frame tag, so nothing is cleared per slot), and after
//! the passes a compute gather (`shaders/feedback_gather.wgsl`) copies only the listed slots'
//! bins into a compact buffer and zeroes them. That compact buffer is what is copied back and
//! read, and the CPU updates the histograms of the slots listed and of those still fading out.
//! At 100k registered slots and 4,096 drawn, this took the CPU side from 1.5 ms a frame and
//! 6.4 MB copied back to the cost of the drawn slots alone (`cargo bench --bench feedback`).
//!
//! Every buffer here is charged to the ledger ([`Category::Buffers`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::Result;
use crate::budget::Category;
use crate::budget::planner::MAX_LEVELS;
use crate::gpu::{GpuContext, TrackedBuffer};
pub use crate::manager::FeedbackStats;

mod demand;
mod histograms;
mod resources;
pub use demand::FeedbackDemand;
use histograms::Histograms;
use resources::{storage_entry, uniform_entry};

/// The record's WGSL, its bindings in bind group 2 (see [`Feedback::wgsl`] for another group).
pub const WGSL: &str = crate::shaders::FEEDBACK;

/// How GPU feedback runs. `Default`: on, one pixel in 8x8 per frame, 3 readback buffers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FeedbackConfig {
    /// Whether the GPU records feedback (default true in the `Renderer`). Off: the CPU estimate
    /// from bounds decides alone.
    pub enabled: bool,
    /// log2 of the block side: one pixel in each `2^n x 2^n` block records per frame (default
    /// 3: one in 64). Why: the atomics cost fragment time; 1/64 of the pixels a frame, a
    /// different one each frame, is what Godot's and id Tech's feedback sample too.
    pub block_shift: u32,
    /// Readback buffers in the ring (default 3): how many frames the GPU may be behind before a
    /// frame's feedback is skipped (never waited for).
    pub readbacks: usize,
    /// Feedback older than this many frames is not used (default 8): the CPU estimate decides.
    pub max_latency_frames: u64,
    /// Whether the histograms are the demand of the textures they saw (the planner prices each
    /// level by its pixels), or only say which textures were seen at all (default: only that;
    /// a texture no pixel of which was drawn gets no demand, the others the CPU estimate).
    /// Why off by default: on `mipflow bench`'s moving tour under a tight budget, histogram
    /// demand put 30-43 of 120 frames under 40 dB against 1-2 with the CPU estimate for the
    /// seen textures (the feedback lags a moving camera, and its noise moves every histogram
    /// each frame); until that is solved it is a setting to measure, not a default.
    pub histograms: bool,
    /// Weight of each new readback in the per-texture histograms (default 0.25; 1: the last
    /// readback alone). Why: one frame samples one pixel in 64, so a texture covering a few
    /// hundred pixels gets a handful of samples, sometimes none: a single frame's histogram is
    /// noise, and a texture that drew no sample one frame would look hidden. Averaged over the
    /// last few readbacks, a hidden texture still loses its demand within ~16 frames.
    pub smoothing: f32,
    /// The anisotropy clamp of the sampler the record stands for (default 1; the `Renderer`
    /// sets its own): the level follows the footprint's long axis divided by up to this ratio,
    /// as the sampler does.
    pub max_anisotropy: u32,
    /// Slots one frame's readback holds at first (default 1,024; never more than the slots
    /// registered). It grows, to a power of two, to hold the most slots a frame has drawn, and
    /// never shrinks: a frame that drew more than its readback holds is not used (counted in
    /// [`FeedbackStats::overflowed`]), and the frames after get room for them. Why not every
    /// slot: the copy back and the CPU's read then follow what a frame draws, not how many
    /// textures are registered.
    pub readback_slots: u32,
}

impl Default for FeedbackConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            block_shift: 3,
            readbacks: 3,
            max_latency_frames: 8,
            max_anisotropy: 1,
            histograms: false,
            smoothing: 0.25,
            readback_slots: 1024,
        }
    }
}

impl FeedbackConfig {
    /// Feedback off.
    pub fn off() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }
}

const FREE: u8 = 0;
const RECORDED: u8 = 1;
const MAPPING: u8 = 2;
const MAPPED: u8 = 3;

struct Readback {
    buffer: TrackedBuffer,
    state: Arc<AtomicU8>,
    /// The frame whose feedback it holds, the slots it covers, the render scale then, and the
    /// listed slots it has room for.
    frame: u64,
    slots: u32,
    scale: f32,
    room: u32,
    /// `block_shift` (capped at 5) when it was recorded: each recorded pixel stands for a block
    /// of that side (a later change of the config does not rescale it).
    shift: u32,
}

/// The GPU side and the CPU side of feedback: the histogram buffer and its bind group, the
/// gather, the readback ring, and the newest histograms read back.
pub struct Feedback {
    config: FeedbackConfig,
    layout: wgpu::BindGroupLayout,
    /// Bins, tags, the count and the list of the slots recorded this frame (see
    /// `shaders/feedback.wgsl`).
    bins: TrackedBuffer,
    params: TrackedBuffer,
    group: wgpu::BindGroup,
    gather: wgpu::ComputePipeline,
    gather_layout: wgpu::BindGroupLayout,
    /// The gather's output: the count, then per listed slot the slot and its bins.
    compact: TrackedBuffer,
    gather_group: wgpu::BindGroup,
    /// Slots the bins buffer holds.
    capacity: u32,
    /// Slots recording this frame (0 when off).
    slots: u32,
    /// Listed slots the compact buffer (and each readback) holds.
    room: u32,
    /// The most slots a frame drew past its room: the room it needs.
    wanted_room: u32,
    /// This frame's tag (never 0; the next one after each gather).
    tag: u32,
    /// `resolve` ran since the last `begin_frame` (a second one in the same frame does nothing).
    resolved: bool,
    /// The fewest slots refused for a device limit (`u32::MAX`: none): a count at or past it
    /// is refused again without trying (no buffer made and dropped every frame).
    refused: u32,
    /// The fewest slots whose bins the driver refused for memory, and the frame it did: tried
    /// again only [`OOM_RETRY_FRAMES`] later (each try makes and drops buffers, rebuilds the
    /// bind groups and logs), or for fewer slots.
    oom_refused: Option<(u32, u64)>,
    /// Test hook: bins of more slots than this fail as the driver's out-of-memory would.
    #[cfg(feature = "testing")]
    testing_oom_above: Option<u32>,
    ring: Vec<Readback>,
    hist: Histograms,
    latest_frame: Option<u64>,
    /// Readbacks of frames before this one were recorded before the histograms were last
    /// dropped (feedback turned off, or a frame that could not record): they are not read.
    reset_frame: u64,
    frame: u64,
    skipped: u64,
    overflowed: u64,
    pixels: f64,
    /// Bytes the last `resolve` copied back.
    copied: u64,
}

impl std::fmt::Debug for Feedback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feedback")
            .field("config", &self.config)
            .field("capacity", &self.capacity)
            .field("room", &self.room)
            .field("latest_frame", &self.latest_frame)
            .finish()
    }
}

/// Size of [`Feedback`]'s parameters (`MipflowFeedback` in the WGSL).
const PARAMS_BYTES: u64 = 32;

/// Words a listed slot takes in the gather's output: the slot, its bins.
const ENTRY_WORDS: u64 = 1 + MAX_LEVELS as u64;

/// Words a slot takes in the bins buffer (`shaders/feedback.wgsl`): its bins, its tag, its
/// place in the list; the buffer has one more, the list's count.
const SLOT_WORDS: u64 = MAX_LEVELS as u64 + 2;

/// Bytes of the bins buffer for `capacity` slots.
/// Frames before bins the driver refused for memory are tried again (about 2 s at 60 Hz).
pub const OOM_RETRY_FRAMES: u64 = 120;

fn bins_bytes(capacity: u32) -> u64 {
    (u64::from(capacity) * SLOT_WORDS + 1) * 4
}

/// Where the list's count lies in the bins buffer: after the bins and the tags.
fn count_offset(capacity: u32) -> u64 {
    u64::from(capacity) * (MAX_LEVELS as u64 + 1) * 4
}

impl Feedback {
    /// The record's WGSL with its bindings in bind group `group`, to prepend to a shader.
    pub fn wgsl(group: u32) -> String {
        WGSL.replace("@group(2)", &format!("@group({group})"))
    }

    /// The layout of the feedback bind group (binding 0: the bins, storage read-write; 1: the
    /// parameters, uniform), for a pipeline layout.
    pub fn layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("mipflow feedback"),
            entries: &[
                storage_entry(0, wgpu::ShaderStages::FRAGMENT),
                uniform_entry(1, wgpu::ShaderStages::FRAGMENT),
            ],
        })
    }

    /// Feedback with `config`, for textures in slots below `slots` (grown later as needed).
    pub fn new(ctx: &GpuContext, config: FeedbackConfig, slots: u32) -> Result<Self> {
        let device = ctx.device();
        let layout = Self::layout(device);
        let capacity = slots.max(16);
        let room = config.readback_slots.clamp(1, capacity);
        let bins = Self::bins(ctx, capacity)?;
        let params = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("mipflow feedback params"),
                size: PARAMS_BYTES,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let group = Self::group(ctx, &layout, &bins, &params);
        let gather_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("mipflow feedback gather"),
            entries: &[
                storage_entry(0, wgpu::ShaderStages::COMPUTE),
                storage_entry(1, wgpu::ShaderStages::COMPUTE),
                uniform_entry(2, wgpu::ShaderStages::COMPUTE),
            ],
        });
        let module = crate::shaders::create_module(
            device,
            "feedback_gather.wgsl",
            crate::shaders::FEEDBACK_GATHER,
        );
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("mipflow feedback gather"),
            bind_group_layouts: &[Some(&gather_layout)],
            immediate_size: 0,
        });
        let gather = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("mipflow feedback gather"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("gather"),
            compilation_options: Default::default(),
            cache: None,
        });
        let compact = Self::compact(ctx, room)?;
        let gather_group = Self::gather_group(ctx, &gather_layout, &bins, &compact, &params);
        Ok(Self {
            config,
            layout,
            bins,
            params,
            group,
            gather,
            gather_layout,
            compact,
            gather_group,
            capacity,
            slots: 0,
            room,
            wanted_room: 0,
            tag: 1,
            resolved: false,
            refused: u32::MAX,
            oom_refused: None,
            #[cfg(feature = "testing")]
            testing_oom_above: None,
            ring: Vec::new(),
            hist: Histograms::default(),
            latest_frame: None,
            reset_frame: 0,
            frame: 0,
            skipped: 0,
            overflowed: 0,
            pixels: 0.0,
            copied: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FeedbackConfig {
        &self.config
    }

    /// Replaces the configuration (the next frame uses it).
    pub fn set_config(&mut self, config: FeedbackConfig) {
        let on = config.enabled;
        self.config = config;
        self.set_enabled(on);
    }

    /// Turns feedback on or off (off: nothing is recorded, resolved or read back).
    pub fn set_enabled(&mut self, on: bool) {
        self.config.enabled = on;
        if !on {
            // Turned on again later, the histograms start afresh (not smoothed against what
            // was seen before).
            self.latest_frame = None;
            self.reset_frame = self.frame.saturating_add(1);
            self.hist.clear();
        }
    }

    /// Test hook: bins for more than `slots` slots fail as the driver's out-of-memory would
    /// (`None`: as the driver says).
    #[cfg(feature = "testing")]
    pub fn testing_oom_above(&mut self, slots: Option<u32>) {
        self.testing_oom_above = slots;
    }

    /// The bind group layout this feedback's group was made with.
    pub fn bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// The bind group to set at the group number the shader's record uses.
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.group
    }

    /// Starts a frame: reads back what has arrived (never waits; the caller polls the device
    /// once a frame), makes room for `slots` texture slots, and sets which pixel records.
    /// Allocates only when the slots, or the slots a frame draws, grow (or when
    /// [`FeedbackConfig::readback_slots`] is changed). A slot count past the device's limits
    /// is a typed error, and the frame records nothing.
    pub fn begin_frame(&mut self, ctx: &GpuContext, frame: u64, slots: u32) -> Result<()> {
        self.frame = frame;
        self.resolved = false;
        self.collect();
        let mut result = Ok(());
        if !self.config.enabled {
            self.slots = 0;
        } else {
            let mut replaced = false;
            result = self.make_room(ctx, slots, &mut replaced);
            if replaced {
                self.group = Self::group(ctx, &self.layout, &self.bins, &self.params);
                self.gather_group = Self::gather_group(
                    ctx,
                    &self.gather_layout,
                    &self.bins,
                    &self.compact,
                    &self.params,
                );
            }
            // A failed allocation (the driver's out-of-memory, a size past the device's
            // limits) records nothing this frame; the buffers left are consistent. The
            // histograms read so far are dropped too: nothing will refresh them, and a
            // texture seen as hidden must not stay so (the CPU estimate decides meanwhile).
            if result.is_ok() {
                self.slots = slots;
            } else {
                self.slots = 0;
                self.latest_frame = None;
                self.reset_frame = frame.saturating_add(1);
                self.hist.clear();
            }
        }
        let params: [u32; 8] = [
            frame as u32,
            self.config.block_shift.min(5),
            self.slots,
            self.config.max_anisotropy.clamp(1, 16),
            self.tag,
            self.capacity,
            self.room,
            0,
        ];
        ctx.queue()
            .write_buffer(self.params.buffer(), 0, bytemuck::cast_slice(&params));
        result
    }

    /// Grows the bins to hold `slots` and sizes the gather's output to the room wanted. Each
    /// old buffer is dropped before its replacement is made, so the ledger never holds both; a
    /// failed allocation leaves the small buffer in its place with `capacity`/`room` saying so.
    /// `replaced`: a buffer was (the caller rebuilds the bind groups, failed or not). A new
    /// bins buffer is zeroed: no tag (never 0) is set and nothing is listed; readbacks of the
    /// old size are dropped as they come back.
    fn make_room(&mut self, ctx: &GpuContext, slots: u32, replaced: &mut bool) -> Result<()> {
        if slots > self.capacity {
            if slots >= self.refused {
                return Err(crate::Error::InvalidResource {
                    label: "mipflow feedback bins".to_owned(),
                    reason: format!(
                        "{slots} slots: {} or more were refused for a device limit",
                        self.refused
                    ),
                });
            }
            // A power of two, or the most one binding holds when that is less (never fewer
            // than the slots: then the allocation below says why it cannot).
            let binding = ctx.device().limits().max_storage_buffer_binding_size;
            let most = (binding / 4).saturating_sub(1) / SLOT_WORDS;
            let most = u32::try_from(most).unwrap_or(u32::MAX);
            let capacity = slots
                .checked_next_power_of_two()
                .unwrap_or(slots)
                .min(most)
                .max(slots);
            if let Some((at, frame)) = self.oom_refused
                && slots >= at
                && self.frame < frame.saturating_add(OOM_RETRY_FRAMES)
            {
                return Err(crate::Error::OutOfMemory {
                    label: "mipflow feedback bins (refused earlier, retried later)".to_owned(),
                    bytes: bins_bytes(capacity),
                });
            }
            self.bins = Self::bins(ctx, 1)?;
            self.capacity = 1;
            *replaced = true;
            #[cfg(feature = "testing")]
            let made = if self.testing_oom_above.is_some_and(|n| capacity > n) {
                Err(crate::Error::OutOfMemory {
                    label: "mipflow feedback bins (testing)".to_owned(),
                    bytes: bins_bytes(capacity),
                })
            } else {
                Self::bins(ctx, capacity)
            };
            #[cfg(not(feature = "testing"))]
            let made = Self::bins(ctx, capacity);
            let (frame, refused) = (self.frame, &mut self.refused);
            let oom = &mut self.oom_refused;
            self.bins = made.inspect_err(|e| match e {
                crate::Error::InvalidResource { .. } => *refused = (*refused).min(slots),
                crate::Error::OutOfMemory { .. } => {
                    *oom = Some((oom.map_or(slots, |(s, _)| s.min(slots)), frame));
                }
                _ => {}
            })?;
            // Made: a refusal of this many slots or fewer is over (one of more stands).
            self.oom_refused = self.oom_refused.filter(|&(at, _)| capacity < at);
            self.capacity = capacity;
        }
        let room = self
            .config
            .readback_slots
            .max(self.wanted_room)
            .clamp(1, self.capacity);
        if room != self.room {
            self.compact = Self::compact(ctx, 1)?;
            self.room = 1;
            *replaced = true;
            self.compact = Self::compact(ctx, room)?;
            self.room = room;
        }
        Ok(())
    }

    /// Records, after the passes that call the record, the gather of this frame's listed slots
    /// (their bins zeroed for the next frame) and its copy into a free readback buffer;
    /// `render_scale` is the scale the frame was drawn at (its pixel counts are scaled to
    /// output pixels). With no free buffer (the GPU is more than the ring behind), this frame's
    /// feedback is skipped and counted, never waited for. Once per [`Feedback::begin_frame`]:
    /// a second call does nothing (what is recorded after the first lands in the next frame).
    pub fn resolve(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        render_scale: f32,
    ) -> Result<()> {
        self.copied = 0;
        if !self.config.enabled || self.slots == 0 || self.resolved {
            return Ok(());
        }
        self.resolved = true;
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("mipflow feedback gather"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.gather);
            pass.set_bind_group(0, &self.gather_group, &[]);
            // A thread a listed slot up to the room; past it the threads go round again (the
            // slots past the room are zeroed, not copied).
            pass.dispatch_workgroups(self.room.div_ceil(64).clamp(1, 65_535), 1, 1);
        }
        // The count, for the next frame (the tags need no clearing: the tag changes).
        encoder.clear_buffer(self.bins.buffer(), count_offset(self.capacity), Some(4));
        self.tag = self.tag.wrapping_add(1).max(1);
        self.copy_back(ctx, encoder, render_scale)
    }

    /// Copies the gather's output into a free readback buffer (one is made while the ring has
    /// room; a free one too small for the room is replaced), or counts the frame skipped.
    fn copy_back(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        render_scale: f32,
    ) -> Result<()> {
        let bytes = Self::compact_bytes(self.room);
        let free = self
            .ring
            .iter()
            .position(|r| r.state.load(Ordering::Acquire) == FREE && r.buffer.bytes() >= bytes);
        let i = match free {
            Some(i) => i,
            None if self.ring.len() < self.config.readbacks.max(1) => {
                self.ring.push(Readback {
                    buffer: ctx.create_buffer(
                        &wgpu::BufferDescriptor {
                            label: Some("mipflow feedback readback"),
                            size: bytes,
                            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: false,
                        },
                        Category::Buffers,
                    )?,
                    state: Arc::new(AtomicU8::new(FREE)),
                    frame: 0,
                    shift: 0,
                    slots: 0,
                    scale: 1.0,
                    room: 0,
                });
                self.ring.len() - 1
            }
            None => {
                // A free buffer too small for the grown room is replaced.
                match self
                    .ring
                    .iter()
                    .position(|r| r.state.load(Ordering::Acquire) == FREE)
                {
                    Some(i) => {
                        self.ring.swap_remove(i);
                        return self.copy_back(ctx, encoder, render_scale);
                    }
                    None => {
                        self.skipped += 1;
                        return Ok(());
                    }
                }
            }
        };
        let r = &mut self.ring[i];
        encoder.copy_buffer_to_buffer(self.compact.buffer(), 0, r.buffer.buffer(), 0, bytes);
        self.copied = bytes;
        r.state.store(RECORDED, Ordering::Release);
        r.frame = self.frame;
        r.shift = self.config.block_shift.min(5);
        r.slots = self.slots;
        r.room = self.room;
        r.scale = if render_scale.is_finite() && render_scale > 0.0 {
            render_scale
        } else {
            1.0
        };
        Ok(())
    }

    /// Call after the submit that holds [`Feedback::resolve`]'s copy: maps the buffer it filled
    /// (the data is read by a later [`Feedback::begin_frame`]).
    pub fn after_submit(&mut self) {
        for r in &self.ring {
            if r.state.load(Ordering::Acquire) == RECORDED {
                r.state.store(MAPPING, Ordering::Release);
                let state = r.state.clone();
                r.buffer
                    .buffer()
                    .slice(..)
                    .map_async(wgpu::MapMode::Read, move |res| {
                        state.store(if res.is_ok() { MAPPED } else { FREE }, Ordering::Release);
                    });
            }
        }
    }

    /// Slot `slot` holds another texture from `frame` on (the texture in it was removed; call
    /// it when a slot's texture is removed, before the slot is given to a new one): its
    /// histogram starts again from 0, and readbacks of earlier frames still in flight leave it
    /// alone. Without it, the new texture's first histograms were blended with the old one's
    /// (a 4096² wall's level-0 pixels asked of a small prop for dozens of frames).
    pub fn forget_slot(&mut self, slot: u32, frame: u64) {
        self.hist.forget(slot, frame);
    }

    /// Reads the newest mapped readback into the histograms; frees every mapped one.
    fn collect(&mut self) {
        let newest = self
            .ring
            .iter()
            .enumerate()
            .filter(|(_, r)| r.state.load(Ordering::Acquire) == MAPPED)
            .max_by_key(|(_, r)| r.frame)
            .map(|(i, _)| i);
        if let Some(i) = newest
            && self.latest_frame.is_none_or(|f| self.ring[i].frame > f)
            && self.ring[i].frame >= self.reset_frame
        {
            let r = &self.ring[i];
            // One recorded pixel stands for a block of render pixels, each 1/scale² output pixels.
            let side = 1u32 << r.shift;
            let k = f64::from(side * side) / f64::from(r.scale * r.scale);
            let a = if self.config.smoothing > 0.0 && self.config.smoothing <= 1.0 {
                self.config.smoothing
            } else {
                1.0
            };
            let room = r.room as usize;
            if let Ok(data) = r.buffer.buffer().slice(..).get_mapped_range() {
                let words: &[u32] =
                    bytemuck::cast_slice(&data[..Self::compact_bytes(r.room) as usize]);
                let listed = words[0] as usize;
                if listed > room {
                    // More slots drawn than the readback held: the frame is not used (a
                    // texture left out would look hidden), and the next frames make room.
                    self.overflowed += 1;
                    let need = u32::try_from(listed.next_power_of_two()).unwrap_or(u32::MAX);
                    self.wanted_room = self.wanted_room.max(need);
                } else {
                    let entries = &words[1..1 + listed * ENTRY_WORDS as usize];
                    self.pixels = self.hist.update(entries, r.slots as usize, k, a, r.frame);
                    self.latest_frame = Some(r.frame);
                }
            }
        }
        for r in &self.ring {
            if r.state.load(Ordering::Acquire) == MAPPED {
                r.buffer.buffer().unmap();
                r.state.store(FREE, Ordering::Release);
            }
        }
    }

    /// The newest histogram of `slot`: output pixels per wanted level (native resolution), from
    /// frame [`Feedback::latest_frame`]. `None` when feedback is off, too old, or has not
    /// covered this slot.
    pub fn histogram(&self, slot: u32) -> Option<&[f32; MAX_LEVELS]> {
        let f = self.latest_frame?;
        if !self.config.enabled || self.frame.saturating_sub(f) > self.config.max_latency_frames {
            return None;
        }
        self.hist.latest.get(slot as usize)
    }

    /// The frame the histograms in use were recorded in.
    pub fn latest_frame(&self) -> Option<u64> {
        self.latest_frame
    }

    /// This frame's figures.
    pub fn stats(&self) -> FeedbackStats {
        FeedbackStats {
            latency_frames: self.latest_frame.map(|f| self.frame.saturating_sub(f)),
            pixels: if self.latest_frame.is_some() {
                self.pixels
            } else {
                0.0
            },
            skipped: self.skipped,
            readback_bytes: self.copied,
            overflowed: self.overflowed,
        }
    }
}
