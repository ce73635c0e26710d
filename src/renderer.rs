//! The embeddable renderer: a scene (meshes, materials, instances), streamed textures, and the
//! one budget shared by texture mips and render-target resolution.
//!
//! Each [`Renderer::render`]:
//! 1. takes the IO workers' finished reads and releases finished upload staging;
//! 2. computes every texture's wanted level from the instances in view;
//! 3. runs the planner on the budget, the fixed bytes and the render-target bytes per bucket, and
//!    executes its transitions in order (drops and lower scales first, then grows);
//! 4. builds the grows whose data arrived, within the upload caps;
//! 5. lets the resolution controller pick the bucket (the planner's memory bucket, lowered further
//!    by GPU time when a target frame time is set);
//! 6. draws the scene into the HDR target at that bucket, and upscales it into the caller's view.
//!
//! Memory and scale: the planner is told that the render targets are at its own memory bucket,
//! even while the controller still renders lower (going up waits for the controller's stable
//! window, or GPU time keeps it lower); so textures never take the bytes the targets may claim,
//! and going up always fits.

use std::time::Instant;

use glam::{Mat4, Vec3};

use crate::budget::planner::{PlanStatus, ScaleBucket, TransitionKind};
use crate::budget::{Budget, Category, LedgerSnapshot};
use crate::gpu::{GpuContext, GpuOptions, TrackedBuffer};
use crate::render::scene::{
    Camera, Instance, InstanceHandle, MaterialDesc, MaterialHandle, Mesh, MeshHandle, Slab,
    extrapolate_view, instance_demand, sphere_visible,
};
use crate::render::{DrawUniforms, GpuMesh, TexturedPass, Vertex};
use crate::resolution::{
    Bucket, BucketRange, ChangeReason, ControllerConfig, GpuTimer, RenderTargets,
    ResolutionController, TimeSource, UpscalePass, UpscaleSettings, Upscaler, fill_scale_buckets,
};
use crate::stream::{
    StreamConfig, StreamFrameStats, Streamer, TextureHandle, TextureOptions, TextureSource,
};
use crate::{Error, Result};

/// How a [`Renderer`] is made. `Default` renders to `Rgba8UnormSrgb` with a 256 MiB budget.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RendererConfig {
    /// The VRAM budget (bytes, a fraction of the adapter's memory, or a callback).
    pub budget: Budget,
    /// Format of the views passed to [`Renderer::render`].
    pub output_format: wgpu::TextureFormat,
    /// Streaming settings.
    pub stream: StreamConfig,
    /// Resolution controller settings (scale range, stable window, time path).
    pub controller: ControllerConfig,
    /// The upscaler.
    pub upscaler: Upscaler,
    /// A GPU frame-time target in ms: above it the scale goes down. `None`: memory only.
    pub target_frame_ms: Option<f32>,
    /// Background colour (linear).
    pub clear_color: [f64; 4],
    /// Anisotropic filtering of materials, 1 to 16 (default 8). Why configurable: on a software
    /// rasteriser (lavapipe) 8x costs about 5x the frame time of 1x.
    pub anisotropy: u16,
    /// Streaming guard band: instances outside the view but inside a frustum whose vertical
    /// field of view is this many times wider (default 2; 1 turns it off) also ask for their
    /// levels, with a quarter of their pixels' weight. Why: a camera that turns brings them into
    /// view before a read and an upload can complete; at a quarter weight they only take bytes
    /// the visible ones do not need. Measured by `mipflow bench` (c): frames under 40 dB 20 of 120
    /// without it, 8 at 1.5, 5 at 2.
    pub guard_band: f32,
}

impl Default for RendererConfig {
    fn default() -> Self {
        Self {
            budget: Budget::bytes(256 << 20),
            output_format: wgpu::TextureFormat::Rgba8UnormSrgb,
            stream: StreamConfig::default(),
            controller: ControllerConfig::default(),
            upscaler: Upscaler::EasuRcas,
            target_frame_ms: None,
            clear_color: [0.02, 0.025, 0.035, 1.0],
            anisotropy: 8,
            guard_band: 2.0,
        }
    }
}

/// Per-frame input.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput {
    /// The camera.
    pub camera: Camera,
    /// Colour surfaces by the mip level they sample (debug view).
    pub debug_mips: bool,
}

/// Frames the streaming look-ahead extrapolates the camera's motion by (see `visibility`).
const LOOK_AHEAD: u32 = 12;

/// What [`Renderer::prefetch`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Prefetch {
    /// Every level the view wants is resident.
    pub complete: bool,
    /// Streaming rounds run (frames without drawing).
    pub frames: u32,
    /// Bytes uploaded.
    pub uploaded_bytes: u64,
    /// Bytes of the wanted levels that are resident, and of the wanted levels.
    pub resident_mip_bytes: u64,
    /// Bytes of the levels the view wants.
    pub wanted_mip_bytes: u64,
    /// Wall time spent (ms).
    pub ms: f32,
}

/// The streaming half of a frame's outcome, for the drawing half and the stats.
struct Streamed {
    budget: u64,
    status: PlanStatus,
    bucket: Bucket,
    mem_bucket: Bucket,
}

/// What one frame did, for the overlay, the reports and the caller's own checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameStats {
    /// Frame number, from 1.
    pub frame: u64,
    /// The budget in force.
    pub budget_bytes: u64,
    /// When the driver ran out of memory below the budget: the effective budget it set (what
    /// the driver really gave; raised again after a quiet spell, cleared by a new budget).
    pub oom_cap_bytes: Option<u64>,
    /// The ledger at the end of the frame.
    pub ledger: LedgerSnapshot,
    /// The ledger's peak total inside the frame (transients included).
    pub frame_peak_bytes: u64,
    /// The render scale the frame was drawn at.
    pub render_scale: f32,
    /// The planner's memory-driven scale.
    pub memory_scale: f32,
    /// Streaming figures.
    pub stream: StreamFrameStats,
    /// Whether the budget held the floors.
    pub budget_too_small: bool,
    /// Bytes every floor, the smallest targets and the fixed bytes need.
    pub floor_bytes: u64,
    /// Pixel-octaves of blur left (planner's figure).
    pub quality_cost: f64,
    /// Bytes of the wanted levels that are resident.
    pub resident_mip_bytes: u64,
    /// Bytes of the levels the view wants.
    pub wanted_mip_bytes: u64,
    /// CPU time of the previous frame, submit to submit (ms).
    pub cpu_frame_ms: f32,
    /// Latest GPU frame time (ms), when timestamps are available.
    pub gpu_frame_ms: Option<f32>,
    /// Instances drawn.
    pub instances_drawn: u32,
    /// True when nothing was drawn (a 0x0 output).
    pub skipped: bool,
}

/// The renderer. Owns a [`GpuContext`] (made from the caller's device and queue, or given).
pub struct Renderer {
    config: RendererConfig,
    pass: TexturedPass,
    streamer: Streamer,
    meshes: Slab<Mesh>,
    materials: Slab<MaterialDesc>,
    instances: Slab<Instance>,
    uniforms: Option<(TrackedBuffer, wgpu::BindGroup, u64)>,
    uniform_scratch: Vec<u8>,
    targets: RenderTargets,
    upscale: UpscalePass,
    controller: ResolutionController,
    timer: Option<GpuTimer>,
    range: BucketRange,
    buckets: Vec<ScaleBucket>,
    buckets_for: (u32, u32),
    mem_index: usize,
    frame: u64,
    last_submit: Option<Instant>,
    /// The camera's view matrix at the previous frame (for the look-ahead).
    last_view: Option<Mat4>,
    stats: FrameStats,
    /// Last: fields drop in order, and the context's leak report must see everything else gone.
    ctx: GpuContext,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("ctx", &self.ctx)
            .field("frame", &self.frame)
            .field("streamer", &self.streamer)
            .finish()
    }
}

impl Renderer {
    /// A renderer on the caller's device and queue (the game owns them, and its window and loop).
    /// No uncaptured-error handler is installed on the caller's device.
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, config: RendererConfig) -> Result<Self> {
        let opts = GpuOptions {
            install_error_handler: false,
            ..GpuOptions::default()
        };
        Self::with_context(GpuContext::adopt(device, queue, &opts), config)
    }

    /// A renderer on a context mipflow made (headless, or for a window).
    pub fn with_context(ctx: GpuContext, config: RendererConfig) -> Result<Self> {
        let pass = TexturedPass::new(&ctx, wgpu::TextureFormat::Rgba16Float, config.anisotropy);
        let upscale = UpscalePass::new(&ctx, config.output_format)?;
        let timer = GpuTimer::new(&ctx).unwrap_or(None);
        let range = config.controller.range;
        Ok(Self {
            streamer: Streamer::new(config.stream.clone()),
            controller: ResolutionController::new(config.controller.clone()),
            targets: RenderTargets::new(config.upscaler),
            mem_index: range.len().saturating_sub(1),
            range,
            ctx,
            pass,
            upscale,
            timer,
            meshes: Slab::default(),
            materials: Slab::default(),
            instances: Slab::default(),
            uniforms: None,
            uniform_scratch: Vec::new(),
            buckets: Vec::new(),
            buckets_for: (0, 0),
            frame: 0,
            last_submit: None,
            last_view: None,
            stats: FrameStats::default(),
            config,
        })
    }

    /// The GPU context (device, queue, ledger).
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The streamer (texture states, last plan).
    pub fn streamer(&self) -> &Streamer {
        &self.streamer
    }

    /// The resolution controller (current bucket, history of changes and their reasons).
    pub fn controller(&self) -> &ResolutionController {
        &self.controller
    }

    /// The last frame's figures.
    pub fn stats(&self) -> &FrameStats {
        &self.stats
    }

    /// The budget.
    pub fn budget(&self) -> &Budget {
        &self.config.budget
    }

    /// Replaces the budget; the next frame plans with it (a lower one is reached in that frame,
    /// without passing it).
    pub fn set_budget(&mut self, budget: Budget) {
        self.config.budget = budget;
        // A budget the caller chose replaces what an out-of-memory error inferred.
        self.streamer.clear_oom_cap();
    }

    /// Sets the scale range (min and max per axis, clamped to 1/16..=1).
    pub fn set_scale_range(&mut self, min_scale: f32, max_scale: f32) {
        let range = BucketRange::new(min_scale, max_scale);
        self.range = range;
        let mut c = self.controller.config().clone();
        c.range = range;
        self.controller.set_config(c);
        self.buckets_for = (0, 0);
        self.mem_index = self.mem_index.min(range.len().saturating_sub(1));
    }

    /// Adds a mesh (positions, normals, UVs); its buffers are charged to the ledger.
    pub fn add_mesh(&mut self, vertices: &[Vertex], indices: &[u32]) -> Result<MeshHandle> {
        if let Some(bad) = indices.iter().find(|&&i| i as usize >= vertices.len()) {
            return Err(Error::InvalidResource {
                label: "mesh".into(),
                reason: format!("index {bad} out of range for {} vertices", vertices.len()),
            });
        }
        if vertices.is_empty() || indices.len() < 3 {
            return Err(Error::InvalidResource {
                label: "mesh".into(),
                reason: "a mesh needs vertices and at least one triangle".into(),
            });
        }
        let (center, radius, uv_density) = Mesh::measure(vertices, indices);
        let gpu = GpuMesh::new(&self.ctx, "mesh", vertices, indices)?;
        let (index, generation) = self.meshes.insert(Mesh {
            gpu,
            center,
            radius,
            uv_density,
        });
        Ok(MeshHandle { index, generation })
    }

    /// Adds a streamed texture from a KTX2 file or bytes. Reads its header and floor tail now.
    pub fn add_texture(
        &mut self,
        source: TextureSource,
        opts: TextureOptions,
    ) -> Result<TextureHandle> {
        let budget = self.config.budget.current_bytes();
        self.streamer
            .add_texture(&self.ctx, &self.pass, source, opts, budget)
    }

    /// Removes a texture (freed at once). False for a stale handle.
    pub fn remove_texture(&mut self, h: TextureHandle) -> bool {
        self.streamer.remove_texture(h)
    }

    /// Adds a material.
    pub fn add_material(&mut self, desc: MaterialDesc) -> Result<MaterialHandle> {
        if !self.streamer.contains(desc.base_color) {
            return Err(Error::InvalidResource {
                label: "material".into(),
                reason: "its base colour texture handle is stale".into(),
            });
        }
        let (index, generation) = self.materials.insert(desc);
        Ok(MaterialHandle { index, generation })
    }

    /// Adds an instance of `mesh` with `material` at `transform`.
    pub fn add_instance(
        &mut self,
        mesh: MeshHandle,
        material: MaterialHandle,
        transform: Mat4,
    ) -> Result<InstanceHandle> {
        if self.meshes.get(mesh.index, mesh.generation).is_none()
            || self
                .materials
                .get(material.index, material.generation)
                .is_none()
        {
            return Err(Error::InvalidResource {
                label: "instance".into(),
                reason: "stale mesh or material handle".into(),
            });
        }
        let (index, generation) = self.instances.insert(Instance {
            mesh,
            material,
            transform,
        });
        Ok(InstanceHandle { index, generation })
    }

    /// Moves an instance. False for a stale handle.
    pub fn set_transform(&mut self, h: InstanceHandle, transform: Mat4) -> bool {
        match self.instances.get_mut(h.index, h.generation) {
            Some(i) => {
                i.transform = transform;
                true
            }
            None => false,
        }
    }

    /// Removes an instance. False for a stale handle.
    pub fn remove_instance(&mut self, h: InstanceHandle) -> bool {
        self.instances.remove(h.index, h.generation).is_some()
    }

    /// Removes a mesh (its buffers freed). False for a stale handle.
    pub fn remove_mesh(&mut self, h: MeshHandle) -> bool {
        self.meshes.remove(h.index, h.generation).is_some()
    }

    /// Instances in the scene.
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// Unloads the whole scene: instances, materials, meshes, textures; the render targets and
    /// per-draw buffers too. Every category goes back to its baseline.
    pub fn clear_scene(&mut self) {
        self.instances = Slab::default();
        self.materials = Slab::default();
        self.meshes = Slab::default();
        self.streamer = Streamer::new(self.config.stream.clone());
        self.uniforms = None;
        self.targets.release();
        let _ = self.ctx.wait_idle();
    }

    fn refresh_buckets(&mut self, output: (u32, u32)) {
        if self.buckets_for != output {
            fill_scale_buckets(output, self.range, self.config.upscaler, &mut self.buckets);
            self.buckets_for = output;
            self.mem_index = self.mem_index.min(self.buckets.len().saturating_sub(1));
        }
    }

    /// Fills every texture's wanted level and covered pixels from the instances in view.
    fn visibility(&mut self, camera: &Camera, output: (u32, u32)) {
        for p in self.streamer.plan_textures_mut() {
            p.wanted_level = f32::INFINITY;
            p.screen_pixels = 0.0;
        }
        let aspect = output.0 as f32 / output.1 as f32;
        let vp = camera.projection(aspect) * camera.view;
        let guard = self.config.guard_band;
        let guard_vp = (guard.is_finite() && guard > 1.0).then(|| {
            let fov = (camera.fov_y * guard).min(170f32.to_radians());
            crate::render::perspective(fov, aspect.max(1e-3), camera.near, camera.far) * camera.view
        });
        // Look-ahead: where the camera will look in LOOK_AHEAD frames if it keeps turning and
        // moving as it did since the last frame. Why: a turn brings panels into view before
        // their reads and uploads complete; the guard band covers a slow turn all around, this
        // covers a fast one on the side it turns to. A jump (a cut, a teleport) predicts nothing.
        let ahead_vp = self.last_view.and_then(|prev| {
            extrapolate_view(prev, camera.view, LOOK_AHEAD)
                .map(|ahead| camera.projection(aspect) * ahead)
        });
        self.last_view = Some(camera.view);
        let eye = camera.position();
        let screen = (output.0 as f32) * (output.1 as f32);
        for inst in self.instances.iter() {
            let (Some(mesh), Some(mat)) = (
                self.meshes.get(inst.mesh.index, inst.mesh.generation),
                self.materials
                    .get(inst.material.index, inst.material.generation),
            ) else {
                continue;
            };
            let tex = mat.base_color;
            let Some(width) = self.streamer.texture_width(tex) else {
                continue;
            };
            let scale = inst
                .transform
                .x_axis
                .truncate()
                .length()
                .max(inst.transform.y_axis.truncate().length())
                .max(inst.transform.z_axis.truncate().length());
            let center = inst.transform.transform_point3(mesh.center);
            let radius = mesh.radius * scale;
            // In view: full weight; in the guard band only: a quarter (see `guard_band`).
            let weight = if sphere_visible(&vp, center, radius) {
                1.0
            } else if ahead_vp.is_some_and(|a| sphere_visible(&a, center, radius)) {
                0.5
            } else if guard_vp.is_some_and(|g| sphere_visible(&g, center, radius)) {
                0.25
            } else {
                continue;
            };
            let uv_per_unit = mesh.uv_density * mat.uv_scale / scale.max(1e-6);
            let (level, pixels) = instance_demand(
                eye,
                center,
                radius,
                uv_per_unit,
                width,
                camera.fov_y,
                camera.near,
                output.1,
            );
            let p = &mut self.streamer.plan_textures_mut()[tex.index() as usize];
            p.wanted_level = p.wanted_level.min(level);
            p.screen_pixels = (p.screen_pixels + pixels * weight).min(screen);
        }
    }

    fn set_targets(&mut self, output: (u32, u32), bucket: Bucket) -> Result<()> {
        let current = self
            .targets
            .current()
            .map(|t| (t.bucket(), t.output_size()));
        if current == Some((bucket, output)) {
            return Ok(());
        }
        // Free before allocating, so a change of scale never holds both sets of targets.
        self.targets.release();
        self.targets.ensure(&self.ctx, output, bucket)?;
        Ok(())
    }

    /// The render targets at `bucket`, or, when the driver is out of memory for them, at the
    /// largest smaller bucket it can give: a frame at a lower resolution rather than no frame.
    /// The effective budget is then capped at what the driver gave (with those smaller targets
    /// in it), so the next plans keep the scale, and the textures, within it. Returns the
    /// bucket made.
    fn set_targets_within_memory(&mut self, output: (u32, u32), bucket: Bucket) -> Result<Bucket> {
        let oom = match self.set_targets(output, bucket) {
            Err(e @ Error::OutOfMemory { .. }) => e,
            other => return other.map(|()| bucket),
        };
        // Targets released this frame stay alive in the driver until the GPU has finished the
        // frames that used them: wait for it (only on this error path), then try again before
        // giving up any scale.
        let _ = self.ctx.wait_idle();
        match self.set_targets(output, bucket) {
            Err(Error::OutOfMemory { .. }) => {}
            other => return other.map(|()| bucket),
        }
        for lower in self.range.iter().rev().filter(|&b| b < bucket) {
            match self.set_targets(output, lower) {
                Ok(()) => {
                    self.streamer.note_out_of_memory(&self.ctx, &oom);
                    self.mem_index = self.range.index_of(lower);
                    return Ok(lower);
                }
                Err(Error::OutOfMemory { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.streamer.note_out_of_memory(&self.ctx, &oom);
        Err(oom)
    }

    /// The streaming and resolution half of a frame (no drawing): visibility, the plan and its
    /// transitions, the render targets at the chosen scale, IO and uploads.
    fn stream_frame(
        &mut self,
        output: (u32, u32),
        camera: &Camera,
        gpu_ms: Option<f32>,
        cpu_ms: f32,
    ) -> Result<Streamed> {
        let ledger = self.ctx.ledger().clone();
        self.refresh_buckets(output);
        self.streamer.ensure_fallback(&self.ctx, &self.pass)?;
        self.streamer.begin_frame(&self.ctx);
        self.visibility(camera, output);

        // Plan.
        let budget = self.config.budget.current_bytes();
        let snap = ledger.snapshot();
        let fixed = snap.by_category.buffers.bytes
            + snap.by_category.overlay.bytes
            + snap.by_category.other.bytes;
        // Staging headroom, between the planner's limit and the budget: 1/16 of the budget (at
        // least 256 KiB, at most the per-frame upload cap). Uploads go in bands of rows that fit
        // the room under the budget, so no level needs more: a smaller headroom only streams a
        // large level over more frames, while every byte of it is one texture bytes lack.
        let headroom = (self.streamer.effective_budget(budget) / 16)
            .max(256 << 10)
            .min(self.config.stream.upload_bytes_per_frame);
        let status = self.streamer.plan(
            self.frame,
            budget,
            fixed,
            headroom,
            u64::from(output.0) * u64::from(output.1),
            &self.buckets,
            self.mem_index,
        );
        // Execute the plan's transitions in order (the executor contract). When the budget fell
        // below the usage, the frame's window starts once the drops have brought the total under
        // it (see `Ledger::restart_window`).
        let mut within = ledger.total_bytes() <= budget;
        for i in 0..self.streamer.transition_count() {
            let t = self.streamer.transition(i);
            if t.kind == TransitionKind::Rescale {
                self.mem_index = usize::from(t.to).min(self.buckets.len().saturating_sub(1));
                let mem_bucket = self.range.at(self.mem_index);
                if self
                    .targets
                    .current()
                    .is_some_and(|c| c.bucket() > mem_bucket)
                {
                    self.set_targets_within_memory(output, mem_bucket)?;
                }
            } else {
                self.streamer.apply(&self.ctx, &self.pass, t);
            }
            if !within && ledger.total_bytes() <= budget {
                ledger.restart_window();
                within = true;
            }
        }
        let limit = self.streamer.last_plan().limit;

        // Scale: the planner's memory bucket, lowered by GPU time when a target is set.
        let mem_bucket = self.range.at(self.mem_index);
        let frame_time = gpu_ms.or((cpu_ms > 0.0).then_some(cpu_ms));
        let bucket = self.controller.update(&crate::resolution::FrameInput {
            memory_max_scale: mem_bucket.scale(),
            available_bytes: Some(budget.saturating_sub(fixed)),
            frame_time_ms: frame_time,
            time_source: if gpu_ms.is_some() {
                TimeSource::Gpu
            } else {
                TimeSource::Cpu
            },
            target_frame_ms: self.config.target_frame_ms,
        });
        let bucket = bucket.min(mem_bucket);
        let bucket = self.set_targets_within_memory(output, bucket)?;

        // Grows whose data arrived, within the caps and the limit.
        self.streamer.issue_io();
        self.streamer
            .build_ready(&self.ctx, &self.pass, self.frame, limit, budget);

        Ok(Streamed {
            budget,
            status,
            bucket,
            mem_bucket,
        })
    }

    /// Streams what `camera` sees at an `output` size before the first frame is drawn (a loading
    /// screen): runs the streaming half of frames, without drawing, until every level the view
    /// wants is resident, nothing more can come in (the budget is full, or reads failed), or
    /// `timeout` has passed. IO never blocks longer than a millisecond at a time. The render
    /// targets are made at the planned scale on the way.
    pub fn prefetch(
        &mut self,
        output: (u32, u32),
        camera: &Camera,
        timeout: std::time::Duration,
    ) -> Result<Prefetch> {
        let start = Instant::now();
        let mut result = Prefetch::default();
        if output.0 == 0 || output.1 == 0 {
            return Ok(result);
        }
        let mut quiet = 0u32;
        loop {
            self.frame += 1;
            self.stream_frame(output, camera, None, 0.0)?;
            self.streamer.end_frame(&self.ctx, self.frame);
            self.ctx.ledger().take_window_peak();
            result.frames += 1;
            let st = *self.streamer.frame_stats();
            result.uploaded_bytes += st.uploaded_bytes;
            let (have, want) = self.streamer.wanted_bytes();
            result.resident_mip_bytes = have;
            result.wanted_mip_bytes = want;
            if have >= want {
                result.complete = true;
                break;
            }
            if start.elapsed() >= timeout {
                break;
            }
            let idle =
                st.uploaded_bytes == 0 && st.pending == 0 && self.streamer.transition_count() == 0;
            // Nothing in flight and nothing planned for a few rounds: the budget holds no more.
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet >= 3 {
                break;
            }
            if st.uploaded_bytes == 0 {
                // Waiting for reads (or for staging the GPU still holds).
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        result.ms = start.elapsed().as_secs_f32() * 1e3;
        Ok(result)
    }

    /// Renders one frame into `target` (a view of mip 0 of a texture in
    /// [`RendererConfig::output_format`]; its size is the output size) and submits it.
    ///
    /// A 0x0 target (a minimised window) draws nothing and returns at once.
    pub fn render(
        &mut self,
        target: &wgpu::TextureView,
        input: &FrameInput,
    ) -> Result<&FrameStats> {
        let out_tex = target.texture();
        let output = (out_tex.width(), out_tex.height());
        self.frame += 1;
        let now = Instant::now();
        let cpu_ms = self
            .last_submit
            .map_or(0.0, |t| now.duration_since(t).as_secs_f32() * 1e3);
        if output.0 == 0 || output.1 == 0 {
            self.stats.skipped = true;
            self.stats.frame = self.frame;
            return Ok(&self.stats);
        }
        let gpu_ms = self.timer.as_mut().and_then(|t| t.poll(self.ctx.device()));
        let Streamed {
            budget,
            status,
            bucket,
            mem_bucket,
        } = self.stream_frame(output, &input.camera, gpu_ms, cpu_ms)?;
        let ledger = self.ctx.ledger().clone();

        // Draw.
        let aspect = output.0 as f32 / output.1 as f32;
        let view_proj = input.camera.projection(aspect) * input.camera.view;
        let mip_bias = bucket.mip_bias();
        let count = self.instances.len() as u64;
        let stride = TexturedPass::uniform_stride(&self.ctx);
        if self.uniforms.as_ref().is_none_or(|u| u.2 < count) {
            let cap = count.max(16).next_power_of_two();
            self.uniforms = None;
            let (buf, bg) = self
                .pass
                .uniform_buffer(&self.ctx, "instance uniforms", cap)?;
            self.uniforms = Some((buf, bg, cap));
        }
        self.uniform_scratch.clear();
        self.uniform_scratch
            .resize((stride * count.max(1)) as usize, 0);
        for (i, inst) in self.instances.iter().enumerate() {
            let u = DrawUniforms::new(view_proj, inst.transform, mip_bias, input.debug_mips);
            let off = i * stride as usize;
            self.uniform_scratch[off..off + std::mem::size_of::<DrawUniforms>()]
                .copy_from_slice(bytemuck::bytes_of(&u));
        }
        let Some((ubuf, ubind, _)) = self.uniforms.as_ref() else {
            return Err(Error::Validation {
                context: "rendering".into(),
                message: "no uniform buffer".into(),
            });
        };
        self.ctx
            .queue()
            .write_buffer(ubuf.buffer(), 0, &self.uniform_scratch);
        let Some(targets) = self.targets.current() else {
            return Err(Error::Validation {
                context: "rendering".into(),
                message: "no render targets".into(),
            });
        };
        let timed = self.timer.as_mut().is_some_and(|t| t.begin_frame());
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("mipflow frame"),
            });
        let mut drawn = 0u32;
        {
            let c = self.config.clear_color;
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("scene"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: targets.hdr_view(),
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: c[0],
                            g: c[1],
                            b: c[2],
                            a: c[3],
                        }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: targets.depth_view(),
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: if timed {
                    self.timer.as_ref().and_then(|t| t.pass_writes(true, false))
                } else {
                    None
                },
                occlusion_query_set: None,
                multiview_mask: None,
            });
            for (i, inst) in self.instances.iter().enumerate() {
                let (Some(mesh), Some(mat)) = (
                    self.meshes.get(inst.mesh.index, inst.mesh.generation),
                    self.materials
                        .get(inst.material.index, inst.material.generation),
                ) else {
                    continue;
                };
                let Some(bg) = self.streamer.bind_group(mat.base_color) else {
                    continue;
                };
                self.pass
                    .draw(&mut rp, ubind, (i as u64 * stride) as u32, bg, &mesh.gpu);
                drawn += 1;
            }
        }
        let settings = UpscaleSettings::default();
        let ts = if timed {
            self.timer.as_ref().and_then(|t| t.pass_writes(false, true))
        } else {
            None
        };
        self.upscale
            .record(&self.ctx, &mut enc, targets, target, &settings, ts)?;
        if timed && let Some(t) = self.timer.as_mut() {
            t.end_frame(&mut enc);
        }
        self.ctx.queue().submit([enc.finish()]);
        if timed && let Some(t) = self.timer.as_mut() {
            t.after_submit();
        }
        self.streamer.end_frame(&self.ctx, self.frame);
        self.last_submit = Some(Instant::now());

        let (have, want) = self.streamer.wanted_bytes();
        let plan = self.streamer.last_plan();
        self.stats = FrameStats {
            frame: self.frame,
            budget_bytes: budget,
            oom_cap_bytes: self.streamer.oom_cap(),
            ledger: ledger.snapshot(),
            frame_peak_bytes: ledger.take_window_peak(),
            render_scale: bucket.scale(),
            memory_scale: mem_bucket.scale(),
            stream: *self.streamer.frame_stats(),
            budget_too_small: matches!(status, PlanStatus::BudgetTooSmall { .. }),
            floor_bytes: plan.floor_bytes,
            quality_cost: plan.quality_cost,
            resident_mip_bytes: have,
            wanted_mip_bytes: want,
            cpu_frame_ms: cpu_ms,
            gpu_frame_ms: gpu_ms.or(self.timer.as_ref().and_then(|t| t.last_ms())),
            instances_drawn: drawn,
            skipped: false,
        };
        Ok(&self.stats)
    }

    /// Reasons of the recent scale changes, oldest first.
    pub fn scale_history(&self) -> impl Iterator<Item = (u64, f32, f32, ChangeReason)> + '_ {
        self.controller
            .history()
            .map(|c| (c.frame, c.from.scale(), c.to.scale(), c.reason))
    }

    /// The camera looking from `eye` at `target`, for quick set-ups.
    pub fn camera(eye: Vec3, target: Vec3) -> Camera {
        Camera::look_at(eye, target)
    }

    /// Bytes per category now.
    pub fn ledger_snapshot(&self) -> LedgerSnapshot {
        self.ctx.ledger().snapshot()
    }

    /// Bytes in `category` now.
    pub fn bytes(&self, category: Category) -> u64 {
        self.ctx.ledger().bytes(category)
    }
}
