//! Device set-up and tracked resource creation.
//!
//! A [`GpuContext`] is made headless ([`GpuContext::headless`]), for a window
//! ([`GpuContext::with_surface`]), or from the caller's own device and queue
//! ([`GpuContext::adopt`]). Every texture and buffer mipflow creates goes through
//! [`GpuContext::create_texture`] / [`GpuContext::create_buffer`], which validate the request,
//! create it inside out-of-memory and validation error scopes, and charge its exact size to the
//! [`Ledger`].

mod adapter_memory;
mod readback;
pub mod staging;
mod tracked;
pub mod upload;

/// The driver's own figures for the memory it holds, beside which the ledger's can be shown
/// ([`GpuContext::driver_memory`]). Zero where the backend gives no allocator report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverMemory {
    /// Bytes the allocator handed out.
    pub allocated: u64,
    /// Bytes the allocator reserved from the driver (its blocks).
    pub reserved: u64,
    /// Memory blocks.
    pub blocks: usize,
    /// Live allocations.
    pub allocations: usize,
    /// wgpu's texture memory counter (feature `counters`).
    pub texture_memory: i64,
    /// wgpu's buffer memory counter.
    pub buffer_memory: i64,
}

pub use readback::{
    Reservation, read_level, read_texture_rgba8, read_texture_rgba8_reserved, readback_bytes,
};
pub use tracked::{TrackedBuffer, TrackedTexture};

use std::sync::Arc;

use parking_lot::Mutex;

use crate::budget::ledger::LiveAllocation;
use crate::budget::source::AdapterMemory;
use crate::budget::{Category, Ledger, size};
use crate::{Error, Result};

/// The device features mipflow's streaming needs: block-compressed textures (BC1 to BC7 and
/// BC6H are what it streams). A device without them can still run the manager (its render
/// targets and a game's own allocations are budgeted as usual), but every
/// [`crate::BudgetManager::add_texture`] of a BCn file is refused with
/// [`Error::InvalidResource`] saying what the device lacks.
pub const REQUIRED_FEATURES: wgpu::Features = wgpu::Features::TEXTURE_COMPRESSION_BC;

/// Device features mipflow uses when the device has them, and does without otherwise:
/// timestamps (the GPU frame time the resolution controller may scale by;
/// [`crate::FrameTiming::gpu_ms`]) and a renderable packed-float HDR colour
/// (`Rg11b10Ufloat`: half the bytes of `Rgba16Float` in the render targets).
pub const OPTIONAL_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::RG11B10UFLOAT_RENDERABLE);

/// A device descriptor that gives mipflow what it needs from `adapter`: the
/// [`REQUIRED_FEATURES`] and [`OPTIONAL_FEATURES`] the adapter has, and the adapter's own limits
/// (wgpu's default limits cap 2D textures at 8192 texels, and a streamed texture may be
/// larger). No limit is needed beyond wgpu's defaults otherwise. Add your own features to
/// `required_features` before requesting the device.
///
/// ```no_run
/// # async fn make(adapter: wgpu::Adapter) -> Result<(), wgpu::RequestDeviceError> {
/// let mut desc = mipflow::device_descriptor(&adapter);
/// desc.required_features |= wgpu::Features::DEPTH_CLIP_CONTROL & adapter.features();
/// let (device, queue) = adapter.request_device(&desc).await?;
/// # Ok(()) }
/// ```
pub fn device_descriptor(adapter: &wgpu::Adapter) -> wgpu::DeviceDescriptor<'static> {
    wgpu::DeviceDescriptor {
        label: Some("mipflow device"),
        required_features: adapter.features() & (REQUIRED_FEATURES | OPTIONAL_FEATURES),
        required_limits: adapter.limits(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::MemoryUsage,
        trace: wgpu::Trace::Off,
    }
}

/// How to pick the adapter and device.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GpuConfig {
    /// Backends to search. `None`: the `WGPU_BACKEND` environment variable, else the platform's
    /// primary backends (Vulkan, Metal, DX12, WebGPU).
    pub backends: Option<wgpu::Backends>,
    /// Adapter preference. `None`: `WGPU_POWER_PREF`, else high performance.
    pub power_preference: Option<wgpu::PowerPreference>,
    /// Install a handler for errors that no error scope catches (wgpu 30 panics on those
    /// otherwise). The handler logs them and keeps them for [`GpuContext::take_uncaptured_errors`].
    pub install_error_handler: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        Self {
            backends: None,
            power_preference: None,
            install_error_handler: true,
        }
    }
}

/// Errors no scope caught, kept for inspection (tests assert there are none).
type ErrorSink = Arc<Mutex<Vec<String>>>;

/// The device, queue and ledger mipflow works with.
pub struct GpuContext {
    instance: Option<wgpu::Instance>,
    adapter: Option<wgpu::Adapter>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter_info: Option<wgpu::AdapterInfo>,
    ledger: Ledger,
    uncaptured: ErrorSink,
    bc_supported: bool,
    /// Times [`GpuContext::wait_idle`] blocked.
    idle_waits: std::sync::atomic::AtomicU64,
    /// wgpu's hidden upload staging ([`GpuContext::hold_staging_until_done`]).
    hidden: HiddenStaging,
    /// The device was lost ([`GpuContext::note_device_lost`], or the callback mipflow installs
    /// on a device it made): every creation is refused from then on.
    lost: Arc<std::sync::atomic::AtomicBool>,
}

/// The charges of wgpu's hidden upload staging, each with a sequence number; a callback per
/// submit raises `done` to the number the GPU has finished. Charges end only where mipflow
/// releases them ([`GpuContext::release_done_staging`]: the streamer's poll, `wait_idle`), not
/// in the callback, so that a deterministic run ends them at the same point every time.
#[derive(Default)]
struct HiddenStaging {
    charges: Mutex<Vec<(u64, crate::budget::ledger::Charge)>>,
    pending: std::sync::atomic::AtomicUsize,
    next: std::sync::atomic::AtomicU64,
    done: Arc<std::sync::atomic::AtomicU64>,
    /// Released only where mipflow's deterministic streaming says (its poll, `wait_idle`):
    /// no release at a poll of its own in `hold_staging_until_done`, whose timing varies.
    deterministic: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.adapter_name())
            .field("bc_supported", &self.bc_supported)
            .field("ledger", &self.ledger)
            .finish()
    }
}

fn make_instance(opts: &GpuConfig) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = opts
        .backends
        .or_else(wgpu::Backends::from_env)
        .unwrap_or(wgpu::Backends::PRIMARY);
    wgpu::Instance::new(desc)
}

impl GpuContext {
    /// A context with no surface, for tests, the headless runner and the bench.
    pub fn headless(opts: &GpuConfig) -> Result<Self> {
        let instance = make_instance(opts);
        let adapter = Self::pick_adapter(&instance, opts, None)?;
        Self::finish(instance, adapter, opts)
    }

    /// A context for a window: creates the instance, the surface for `target` and an adapter that
    /// can present to it. The caller configures the surface.
    pub fn with_surface(
        target: impl Into<wgpu::SurfaceTarget<'static>>,
        opts: &GpuConfig,
    ) -> Result<(Self, wgpu::Surface<'static>)> {
        let instance = make_instance(opts);
        let surface = instance.create_surface(target)?;
        let adapter = Self::pick_adapter(&instance, opts, Some(&surface))?;
        Ok((Self::finish(instance, adapter, opts)?, surface))
    }

    /// [`GpuContext::adopt`] with the adapter the device came from, so that its memory can be
    /// read ([`GpuContext::adapter_memory`]: the device-local heap and the OS budget, from
    /// VK_EXT_memory_budget, DXGI or Metal) for [`crate::Budget::adapter_fraction`].
    pub fn adopt_with_adapter(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        opts: &GpuConfig,
    ) -> Self {
        let mut ctx = Self::adopt(device, queue, opts);
        ctx.adapter_info = Some(adapter.get_info());
        ctx.adapter = Some(adapter);
        ctx
    }

    /// Adopts the caller's device and queue (a game that owns its device). mipflow creates its own
    /// resources inside error scopes; since the device is the caller's, no uncaptured-error handler
    /// is installed unless `opts.install_error_handler` is set, which replaces the caller's.
    pub fn adopt(device: wgpu::Device, queue: wgpu::Queue, opts: &GpuConfig) -> Self {
        let bc_supported = device
            .features()
            .contains(wgpu::Features::TEXTURE_COMPRESSION_BC);
        let ctx = Self {
            instance: None,
            adapter: None,
            device,
            queue,
            adapter_info: None,
            ledger: Ledger::new(),
            uncaptured: ErrorSink::default(),
            bc_supported,
            idle_waits: Default::default(),
            hidden: HiddenStaging::default(),
            lost: Default::default(),
        };
        if opts.install_error_handler {
            ctx.install_handler();
        }
        ctx
    }

    fn pick_adapter(
        instance: &wgpu::Instance,
        opts: &GpuConfig,
        surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<wgpu::Adapter> {
        let power_preference = opts
            .power_preference
            .or_else(wgpu::PowerPreference::from_env)
            .unwrap_or(wgpu::PowerPreference::HighPerformance);
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference,
            force_fallback_adapter: false,
            compatible_surface: surface,
            apply_limit_buckets: false,
        }))
        .map_err(|e| Error::NoAdapter {
            backends: opts
                .backends
                .or_else(wgpu::Backends::from_env)
                .unwrap_or(wgpu::Backends::PRIMARY),
            reason: e.to_string(),
        })
    }

    fn finish(instance: wgpu::Instance, adapter: wgpu::Adapter, opts: &GpuConfig) -> Result<Self> {
        let info = adapter.get_info();
        let available = adapter.features();
        let bc_supported = available.contains(wgpu::Features::TEXTURE_COMPRESSION_BC);
        tracing::info!(
            adapter = %info.name,
            backend = ?info.backend,
            device_type = ?info.device_type,
            driver = %info.driver,
            driver_info = %info.driver_info,
            "GPU adapter"
        );
        if !bc_supported {
            tracing::warn!(
                adapter = %info.name,
                "the adapter has no TEXTURE_COMPRESSION_BC: BC7 textures cannot be sampled on it \
                 (a CPU BC7-decode fallback is planned, not yet built)"
            );
        }
        // What exists of the features mipflow uses; never fail for their absence (see
        // `device_descriptor`).
        let (device, queue) =
            pollster::block_on(adapter.request_device(&device_descriptor(&adapter)))?;
        let ctx = Self {
            instance: Some(instance),
            adapter: Some(adapter),
            device,
            queue,
            adapter_info: Some(info),
            ledger: Ledger::new(),
            uncaptured: ErrorSink::default(),
            bc_supported,
            idle_waits: Default::default(),
            hidden: HiddenStaging::default(),
            lost: Default::default(),
        };
        if opts.install_error_handler {
            ctx.install_handler();
        }
        // The device is ours: its loss (a driver reset, `destroy`) is noted, so that nothing
        // is charged for resources a lost device only pretends to make (wgpu reports no error
        // for them).
        let lost = ctx.lost.clone();
        ctx.device.set_device_lost_callback(move |reason, message| {
            tracing::error!(?reason, message, "GPU device lost");
            lost.store(true, std::sync::atomic::Ordering::Release);
        });
        Ok(ctx)
    }

    /// Notes that the device is lost: from then on every resource mipflow would create is
    /// refused with [`Error::DeviceLost`], with nothing charged. mipflow notes it itself for a
    /// device it made; a game that adopted its own device calls this from its device-lost
    /// callback (a lost device makes resources without any error, and they would be charged).
    pub fn note_device_lost(&self) {
        self.lost.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the device is known to be lost ([`GpuContext::note_device_lost`]).
    pub fn is_device_lost(&self) -> bool {
        self.lost.load(std::sync::atomic::Ordering::Acquire)
    }

    fn install_handler(&self) {
        let sink = self.uncaptured.clone();
        self.device
            .on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                let msg = e.to_string();
                tracing::error!(error = %msg, "uncaptured wgpu error");
                let mut v = sink.lock();
                // Bounded: a runaway error loop must not grow memory without limit.
                if v.len() < 256 {
                    v.push(msg);
                }
            }));
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The instance, unless the device was adopted.
    pub fn instance(&self) -> Option<&wgpu::Instance> {
        self.instance.as_ref()
    }

    /// The adapter, unless the device was adopted.
    pub fn adapter(&self) -> Option<&wgpu::Adapter> {
        self.adapter.as_ref()
    }

    /// The adapter's description, unless the device was adopted.
    pub fn adapter_info(&self) -> Option<&wgpu::AdapterInfo> {
        self.adapter_info.as_ref()
    }

    /// The adapter's name, or `"adopted device"`.
    pub fn adapter_name(&self) -> String {
        self.adapter_info
            .as_ref()
            .map(|i| format!("{} ({:?})", i.name, i.backend))
            .unwrap_or_else(|| "adopted device".to_owned())
    }

    /// Whether BC7 textures can be created and sampled.
    pub fn bc_supported(&self) -> bool {
        self.bc_supported
    }

    /// The byte account of everything this context created.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Errors that reached the uncaptured-error handler since the last call.
    pub fn take_uncaptured_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.uncaptured.lock())
    }

    /// Allocations still alive (by label): at shutdown, the leak report.
    pub fn leak_report(&self) -> Vec<LiveAllocation> {
        self.ledger.live_allocations()
    }

    /// The driver allocator's view, where the backend gives one (Vulkan, DX12).
    pub fn allocator_report(&self) -> Option<wgpu::AllocatorReport> {
        self.device.generate_allocator_report()
    }

    /// The driver's memory figures in one plain struct (for overlays and reports, to set beside
    /// the ledger's): the allocator report where the backend gives one, and wgpu's counters.
    /// Walks every allocation: call it a few times a second at most.
    pub fn driver_memory(&self) -> DriverMemory {
        let counters = self.device.get_internal_counters();
        let mut m = DriverMemory {
            texture_memory: counters.hal.texture_memory.read() as i64,
            buffer_memory: counters.hal.buffer_memory.read() as i64,
            ..DriverMemory::default()
        };
        if let Some(rep) = self.allocator_report() {
            m.allocated = rep.total_allocated_bytes;
            m.reserved = rep.total_reserved_bytes;
            m.blocks = rep.blocks.len();
            m.allocations = rep.allocations.len();
        }
        m
    }

    /// What the adapter says about its memory: the largest device-local heap and the driver's
    /// budget for it, on Vulkan (VK_EXT_memory_budget), DX12 (DXGI `QueryVideoMemoryInfo`) and
    /// Metal (`recommendedMaxWorkingSetSize`). `None` where it cannot be known (adopted device
    /// without its adapter, GL, WebGPU). The DX12 and Metal sources are compiled but not yet run
    /// on a machine of their kind.
    pub fn adapter_memory(&self) -> Option<AdapterMemory> {
        let adapter = self.adapter.as_ref()?;
        adapter_memory::adapter_memory(adapter)
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn wait_idle(&self) -> Result<()> {
        self.idle_waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let r = self
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Validation {
                context: "waiting for the GPU".into(),
                message: e.to_string(),
            });
        self.release_done_staging();
        r
    }

    /// How many times this context blocked until the GPU was idle ([`GpuContext::wait_idle`]):
    /// mipflow does so only on rare paths (an out-of-memory error, a budget dropped below the
    /// upload staging in use, `clear`, an `add_textures` batch or a frame's evictions whose
    /// floors' staging has no room under the budget beside the parts written before it, the
    /// `read_*` readback helpers), never every frame outside deterministic streaming
    /// ([`crate::stream::StreamConfig::deterministic`], which waits for the GPU by design); a figure to
    /// watch for stalls.
    pub fn idle_waits(&self) -> u64 {
        self.idle_waits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Creates a texture charged to `category`. The request is checked first (non-zero extent,
    /// within the device's limits, a mip count the extent allows, the features its format needs),
    /// so that bad input is a typed error, not a wgpu validation panic; it is then created inside
    /// out-of-memory and validation error scopes.
    pub fn create_texture(
        &self,
        desc: &wgpu::TextureDescriptor<'_>,
        category: Category,
    ) -> Result<TrackedTexture> {
        let label = desc.label.unwrap_or("unlabelled texture");
        let invalid = |reason: String| Error::InvalidResource {
            label: label.to_owned(),
            reason,
        };
        let s = desc.size;
        if s.width == 0 || s.height == 0 || s.depth_or_array_layers == 0 {
            return Err(invalid(format!(
                "zero extent {}x{}x{}",
                s.width, s.height, s.depth_or_array_layers
            )));
        }
        let limits = self.device.limits();
        let max_dim = match desc.dimension {
            wgpu::TextureDimension::D1 => limits.max_texture_dimension_1d,
            wgpu::TextureDimension::D2 => limits.max_texture_dimension_2d,
            wgpu::TextureDimension::D3 => limits.max_texture_dimension_3d,
        };
        if s.width > max_dim || s.height > max_dim {
            return Err(invalid(format!(
                "{}x{} exceeds the device limit of {max_dim}",
                s.width, s.height
            )));
        }
        if desc.dimension != wgpu::TextureDimension::D3
            && s.depth_or_array_layers > limits.max_texture_array_layers
        {
            return Err(invalid(format!(
                "{} layers exceed the device limit of {}",
                s.depth_or_array_layers, limits.max_texture_array_layers
            )));
        }
        // A 3D texture's depth halves a level too: 4x4x64 has 7 levels.
        let max_mips = if desc.dimension == wgpu::TextureDimension::D3 {
            size::full_mip_count(s.width.max(s.depth_or_array_layers), s.height)
        } else {
            size::full_mip_count(s.width, s.height)
        };
        if desc.mip_level_count == 0 || desc.mip_level_count > max_mips {
            return Err(invalid(format!(
                "{} mip levels for {}x{}x{} (at most {max_mips})",
                desc.mip_level_count, s.width, s.height, s.depth_or_array_layers
            )));
        }
        let needed = desc.format.required_features();
        if !self.device.features().contains(needed) {
            return Err(invalid(format!(
                "format {:?} needs device features {needed:?}",
                desc.format
            )));
        }
        let bytes = size::texture_bytes(desc)
            .ok_or_else(|| invalid(format!("format {:?} has no defined size", desc.format)))?;
        let texture = self.scoped(label, bytes, || self.device.create_texture(desc))?;
        let charge = self.ledger.charge(category, bytes, label);
        Ok(TrackedTexture::new(texture, charge))
    }

    /// Creates a buffer charged to `category`, inside out-of-memory and validation error scopes.
    pub fn create_buffer(
        &self,
        desc: &wgpu::BufferDescriptor<'_>,
        category: Category,
    ) -> Result<TrackedBuffer> {
        let label = desc.label.unwrap_or("unlabelled buffer");
        if desc.size > self.device.limits().max_buffer_size {
            return Err(Error::InvalidResource {
                label: label.to_owned(),
                reason: format!(
                    "{} bytes exceed the device's max_buffer_size {}",
                    desc.size,
                    self.device.limits().max_buffer_size
                ),
            });
        }
        let buffer = self.scoped(label, desc.size, || self.device.create_buffer(desc))?;
        let charge = self.ledger.charge(category, desc.size, label);
        Ok(TrackedBuffer::new(buffer, charge))
    }

    /// An offscreen colour target of `width x height` in `Rgba8UnormSrgb` (one mip; render
    /// attachment and copy source), charged to [`Category::Other`]: what a window's swapchain
    /// image is, for headless runs, benches and tests, so the planner counts it as fixed bytes.
    pub fn create_offscreen_target(
        &self,
        label: &str,
        width: u32,
        height: u32,
    ) -> Result<TrackedTexture> {
        self.create_texture(
            &wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            },
            Category::Other,
        )
    }

    /// Creates a buffer holding `contents`, charged to `category`.
    pub fn create_buffer_init(
        &self,
        label: &str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
        category: Category,
    ) -> Result<TrackedBuffer> {
        // Buffers mapped at creation need a size that is a multiple of COPY_BUFFER_ALIGNMENT.
        let size = (contents.len() as u64)
            .div_ceil(wgpu::COPY_BUFFER_ALIGNMENT)
            .max(1)
            * wgpu::COPY_BUFFER_ALIGNMENT;
        let buf = self.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: true,
            },
            category,
        )?;
        {
            let mut view =
                buf.buffer()
                    .slice(..)
                    .get_mapped_range_mut()
                    .map_err(|e| Error::Validation {
                        context: format!("mapping {label:?}"),
                        message: e.to_string(),
                    })?;
            view.slice(..contents.len()).copy_from_slice(contents);
        }
        buf.buffer().unmap();
        if !usage.contains(wgpu::BufferUsages::MAP_WRITE) {
            // wgpu filled a hidden staging buffer of the same size: held until it is copied.
            self.hold_staging_until_done(size, "buffer init staging");
        }
        Ok(buf)
    }

    /// Charges `bytes` to `staging` until the GPU has consumed the copies written so far: what
    /// wgpu holds for `Queue::write_texture`, `write_buffer` and buffers mapped at creation
    /// without `MAP_WRITE` (a hidden staging copy each). Submits the pending writes first, so
    /// that the charge ends with them (at the first release after: see `HiddenStaging`). Off
    /// the per-frame path (a boxed callback).
    pub(crate) fn hold_staging_until_done(&self, bytes: u64, label: &str) {
        if bytes == 0 {
            return;
        }
        use std::sync::atomic::Ordering;
        if !self.hidden.deterministic.load(Ordering::Relaxed) {
            // The copies the GPU has finished give their charges back first: a loading loop
            // that never polls does not pile them up.
            self.collect_staging(false);
        }
        self.queue.submit([]);
        let seq = self.hidden.next.fetch_add(1, Ordering::AcqRel) + 1;
        let charge = self.ledger.charge(Category::Staging, bytes, label);
        let mut charges = self.hidden.charges.lock();
        charges.push((seq, charge));
        self.hidden.pending.store(charges.len(), Ordering::Release);
        drop(charges);
        let done = self.hidden.done.clone();
        self.queue.on_submitted_work_done(move || {
            done.fetch_max(seq, Ordering::AcqRel);
        });
    }

    /// Ends the hidden staging charges the GPU is done with, if any: after a non-blocking
    /// device poll, or, with `wait`, after waiting for the GPU (deterministic runs: the same
    /// charges end at the same point every time).
    pub(crate) fn collect_staging(&self, wait: bool) {
        if !self.hidden_staging_pending() {
            return;
        }
        if wait {
            let _ = self.wait_idle(); // releases them
        } else {
            let _ = self.device.poll(wgpu::PollType::Poll);
            self.release_done_staging();
        }
    }

    /// Hidden staging charges end only at mipflow's deterministic points (see
    /// `HiddenStaging`): set by a manager with deterministic streaming.
    pub(crate) fn set_deterministic_release(&self, on: bool) {
        self.hidden
            .deterministic
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether hidden upload staging is still charged ([`GpuContext::hold_staging_until_done`]).
    pub(crate) fn hidden_staging_pending(&self) -> bool {
        self.hidden
            .pending
            .load(std::sync::atomic::Ordering::Acquire)
            > 0
    }

    /// Ends the charges of the hidden upload staging the GPU has finished with (as far as the
    /// last device poll saw). No lock taken when none is charged (the per-frame case).
    pub(crate) fn release_done_staging(&self) {
        use std::sync::atomic::Ordering;
        if !self.hidden_staging_pending() {
            return;
        }
        let done = self.hidden.done.load(Ordering::Acquire);
        let mut charges = self.hidden.charges.lock();
        charges.retain(|(seq, _)| *seq > done);
        self.hidden.pending.store(charges.len(), Ordering::Release);
    }

    /// Runs `create` inside out-of-memory and validation scopes and turns what they catch into
    /// typed errors.
    fn scoped<T>(&self, label: &str, bytes: u64, create: impl FnOnce() -> T) -> Result<T> {
        if self.is_device_lost() {
            return Err(Error::DeviceLost {
                label: label.to_owned(),
            });
        }
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = create();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        if let Some(e) = o {
            tracing::warn!(label, bytes, error = %e, "GPU out of memory");
            return Err(Error::OutOfMemory {
                label: label.to_owned(),
                bytes,
            });
        }
        if let Some(e) = v {
            return Err(Error::Validation {
                context: format!("creating {label:?}"),
                message: e.to_string(),
            });
        }
        Ok(value)
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        // wgpu's hidden staging goes with the device: not a leak of the caller's.
        self.hidden.charges.lock().clear();
        let live = self.ledger.live_allocations();
        if !live.is_empty() {
            let total: u64 = live.iter().map(|a| a.bytes).sum();
            tracing::warn!(
                allocations = live.len(),
                bytes = total,
                "leak report: GPU resources still alive when the context was dropped"
            );
            for a in live.iter().take(32) {
                tracing::warn!(label = %a.label, category = a.category.name(), bytes = a.bytes, "still alive");
            }
        }
    }
}
