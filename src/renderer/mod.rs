//! The reference renderer: a scene (meshes, materials, instances) drawn with streamed textures,
//! on top of the [`BudgetManager`], with no privileges the manager does not give any game.
//!
//! Each [`Renderer::render`]:
//! 1. computes every texture's demand from the instances in view (plus a guard band and a
//!    look-ahead) and gives it to the manager;
//! 2. runs the manager's frame (plan, transitions, render targets at the chosen scale, uploads);
//! 3. refreshes the material bind groups whose texture view changed (by view version);
//! 4. draws the scene into the HDR target at that scale, and upscales it into the caller's view.

mod frame;
mod pass;
mod scene;

pub use pass::{DrawUniforms, GpuMesh, TexturedPass, Vertex, panel, quad_xz};
pub use scene::{InstanceHandle, MaterialDesc, MaterialHandle, MeshHandle};

use std::time::Instant;

use glam::{Mat4, Vec3};

use crate::budget::{Budget, Category, LedgerSnapshot};
use crate::demand::Camera;
use crate::feedback::FeedbackConfig;
use crate::gpu::{GpuConfig, GpuContext, TrackedBuffer, TrackedTexture};
use crate::manager::{BudgetManager, FrameStats, ManagerConfig};
use crate::resolution::{
    ChangeReason, ControllerConfig, GpuTimer, ResolutionController, UpscalePass, Upscaler,
};
use crate::stream::{StreamConfig, Streamer, TextureHandle, TextureOptions, TextureSource};
use crate::{Error, Result};
use scene::{Instance, Mesh, Slab};

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
    /// GPU feedback (on by default): the levels the sampler really used decide the in-view
    /// demand once they are read back (1-3 frames later); the CPU estimate covers the frames
    /// before that, a camera cut, the guard band and the look-ahead. See [`crate::Feedback`].
    pub feedback: FeedbackConfig,
    /// Most bytes of the tile cache made when the first virtual texture is added
    /// ([`Renderer::add_virtual_texture`]; default 16 MiB): on the same ledger, counted by the
    /// planner as fixed bytes. The cache starts at 64 slots; it doubles (its tiles kept) when
    /// the tiles the new slots would hold save more blur per byte than the textures' levels
    /// those bytes would (the plan's [`crate::low_level::Plan::memory_price`], with the keep bonus), the
    /// textures asked to make the room first, and halves when its last slots save less: the
    /// two trade in the one currency. Up to a quarter of the budget and this; a budget that
    /// falls below it shrinks it at the next frame (its tiles stream back).
    pub tile_cache_bytes: u64,
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
            feedback: FeedbackConfig::default(),
            tile_cache_bytes: 16 << 20,
        }
    }
}

/// Per-frame input.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct FrameInput {
    /// The camera.
    pub camera: Camera,
    /// Colour surfaces by the mip level they sample (debug view): the texture's own level, the
    /// finer of what the view wants and what is resident.
    pub debug_mips: bool,
    /// Colour surfaces by the level the view wants there, whatever is resident: what GPU
    /// feedback records (debug view; wins over `debug_mips`).
    pub debug_wanted: bool,
}

impl FrameInput {
    /// A frame seen by `camera`, with no debug view.
    pub fn new(camera: Camera) -> Self {
        Self {
            camera,
            debug_mips: false,
            debug_wanted: false,
        }
    }

    /// This input with the wanted-level debug view on or off (see
    /// [`FrameInput::debug_wanted`]).
    pub fn with_debug_wanted(mut self, on: bool) -> Self {
        self.debug_wanted = on;
        self
    }

    /// This input with the mip-colour debug view on or off.
    pub fn with_debug_mips(mut self, on: bool) -> Self {
        self.debug_mips = on;
        self
    }
}

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

/// The renderer: a [`BudgetManager`] (made from the caller's device and queue, or a given
/// context), a scene, the textured pass and the upscaler.
pub struct Renderer {
    config: RendererConfig,
    pass: TexturedPass,
    meshes: Slab<Mesh>,
    materials: Slab<MaterialDesc>,
    instances: Slab<Instance>,
    uniforms: Option<(TrackedBuffer, wgpu::BindGroup, u64)>,
    uniform_scratch: Vec<u8>,
    /// Material bind groups by texture slot, with the view version each was made from: rebuilt
    /// only when the manager's view of the texture changed.
    material_groups: Vec<Option<(u64, wgpu::BindGroup)>>,
    upscale: UpscalePass,
    timer: Option<GpuTimer>,
    last_submit: Option<Instant>,
    /// GPU feedback could not make room for every slot (a device limit, out of memory): said
    /// once, and the frames go on without it (the CPU estimate decides) until it can.
    feedback_refused: bool,
    /// Demand through the GPU feedback's verdicts (cuts, motion, per-slot view and hidden
    /// state).
    demand: crate::feedback::FeedbackDemand,
    /// This frame's in-view instances: texture slot, the level the current view wants, pixels
    /// (for [`FrameStats::blur_pixel_octaves`], once the frame's uploads are built).
    on_screen: Vec<(u32, f32, f32)>,
    /// The depth pre-pass's depth as the pass's group 3, by render-target generation.
    depth_group: Option<(u64, wgpu::BindGroup)>,
    /// The tile cache of the virtual textures, once one is added.
    vt: Option<crate::VirtualTextures>,
    stats: FrameStats,
    /// Last: fields drop in order, and the context's leak report (in the manager's context)
    /// must see everything else gone.
    manager: BudgetManager,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("manager", &self.manager)
            .finish()
    }
}

impl Renderer {
    /// A renderer on the caller's device and queue (the game owns them, and its window and loop).
    /// No uncaptured-error handler is installed on the caller's device.
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, config: RendererConfig) -> Result<Self> {
        let opts = GpuConfig {
            install_error_handler: false,
            ..GpuConfig::default()
        };
        Self::with_context(GpuContext::adopt(device, queue, &opts), config)
    }

    /// A renderer on a context mipflow made (headless, or for a window).
    pub fn with_context(ctx: GpuContext, config: RendererConfig) -> Result<Self> {
        let mut pass = TexturedPass::new(
            &ctx,
            crate::resolution::hdr_format(ctx.device().features()),
            config.anisotropy,
        )?;
        let mut feedback = config.feedback.clone();
        feedback.max_anisotropy = u32::from(config.anisotropy.clamp(1, 16));
        pass.feedback_mut().set_config(feedback);
        let upscale = UpscalePass::new(&ctx, config.output_format)?;
        let timer = GpuTimer::new(&ctx).unwrap_or(None);
        let mc = ManagerConfig {
            budget: config.budget.clone(),
            stream: config.stream.clone(),
            controller: config.controller.clone(),
            upscaler: config.upscaler,
            target_frame_ms: config.target_frame_ms,
            ..ManagerConfig::default()
        };
        let mut manager = BudgetManager::with_context(ctx, mc);
        if timer.is_some() {
            manager.expect_gpu_times();
        }
        Ok(Self {
            manager,
            pass,
            upscale,
            timer,
            meshes: Slab::default(),
            materials: Slab::default(),
            instances: Slab::default(),
            uniforms: None,
            uniform_scratch: Vec::new(),
            material_groups: Vec::new(),
            last_submit: None,
            feedback_refused: false,
            demand: Default::default(),
            on_screen: Vec::new(),
            depth_group: None,
            vt: None,
            stats: FrameStats::default(),
            config,
        })
    }

    /// Adds a texture streamed tile by tile (a tiled KTX2 file, `mipflow cook --tiles`): its
    /// tail resident at once, its tiles as GPU feedback asks for them. Draw it with a
    /// [`MaterialDesc::virtual_texture`]. The first one makes the tile cache
    /// ([`RendererConfig::tile_cache_bytes`], its format and tile size those of this file's);
    /// the others must match them. See `docs/guide/09-tiles.md`.
    pub fn add_virtual_texture(
        &mut self,
        source: crate::TileSource,
        address: crate::VtAddress,
    ) -> Result<crate::VtId> {
        let limits = crate::ktx2::ReadLimits::default();
        let info = match &source {
            crate::TileSource::File(p) => crate::ktx2::read_info(p, &limits)?,
            crate::TileSource::Bytes(b) => crate::ktx2::Ktx2Info::parse(b, b.len() as u64, &limits)
                .map_err(|source| Error::Ktx2 {
                    path: "virtual texture".into(),
                    source,
                })?,
        };
        if self.vt.is_none() {
            let tile = info.tiles.as_ref().map_or(128, |t| t.tile_size);
            let ctx = self.manager.context();
            // As `fit_tile_cache` sizes it: at most a quarter of the budget, a power of two.
            let cap = (self.config.tile_cache_bytes).min(self.manager.budget().current_bytes() / 4);
            let fit = crate::VtConfig::slots_for(info.format, tile, cap);
            // It starts small (at most 64 slots) and grows while more slots buy more than
            // their bytes would buy the textures (`VirtualTextures::fit_to`), within that cap.
            let useful = info.tiles.as_ref().map_or(0, |t| t.tile_count(&info)) as u32 + 2;
            let vt = crate::VirtualTextures::new(
                ctx,
                &crate::VtConfig {
                    format: info.format,
                    tile,
                    slots: (1 << (31 - fit.leading_zeros()))
                        .min(useful)
                        .min(crate::tiles::START_SLOTS),
                    max_pages: 1 << 16,
                    max_textures: 64,
                },
            )?;
            self.pass.enable_virtual_textures(ctx, vt.layout());
            self.vt = Some(vt);
        }
        let ctx = self.manager.context();
        let vt = self.vt.as_mut().expect("made above");
        vt.add(ctx.queue(), info, source, address)
    }

    /// Sizes the tile cache against the textures before the frame's plan
    /// ([`crate::VirtualTextures::fit_to`], within [`RendererConfig::tile_cache_bytes`]).
    pub(crate) fn fit_tile_cache(&mut self) -> Result<()> {
        match self.vt.as_mut() {
            Some(vt) => vt.fit_to(&mut self.manager, self.config.tile_cache_bytes),
            None => Ok(()),
        }
    }

    /// The tile cache, once a virtual texture was added.
    pub fn virtual_textures(&self) -> Option<&crate::VirtualTextures> {
        self.vt.as_ref()
    }

    /// The GPU context (device, queue, ledger).
    pub fn context(&self) -> &GpuContext {
        self.manager.context()
    }

    /// The GPU feedback of the renderer's pass (its newest histograms and figures).
    pub fn feedback(&self) -> &crate::feedback::Feedback {
        self.pass.feedback()
    }

    /// The budget manager under this renderer.
    pub fn manager(&self) -> &BudgetManager {
        &self.manager
    }

    /// The budget manager, for its streaming controls (level limits, force-resident, the mip
    /// bias, load-all: [`BudgetManager::force_resident`] and its neighbours). The renderer's
    /// own calls (`render`, the texture and material methods) stay the way to add and draw.
    pub fn manager_mut(&mut self) -> &mut BudgetManager {
        &mut self.manager
    }

    /// The streamer (texture states and views).
    pub fn streamer(&self) -> &Streamer {
        self.manager.streamer()
    }

    /// The resolution controller (current bucket, history of changes and their reasons).
    pub fn controller(&self) -> &ResolutionController {
        self.manager.controller()
    }

    /// The last frame's figures.
    pub fn stats(&self) -> &FrameStats {
        &self.stats
    }

    /// The budget.
    pub fn budget(&self) -> &Budget {
        self.manager.budget()
    }

    /// Replaces the budget; the next frame plans with it (a lower one is reached in that frame,
    /// without passing it). A budget the caller chose replaces what an out-of-memory error
    /// inferred.
    pub fn set_budget(&mut self, budget: Budget) {
        self.config.budget = budget.clone();
        self.manager.set_budget(budget);
    }

    /// Sets the scale range (min and max per axis, clamped to 1/16..=1).
    pub fn set_scale_range(&mut self, min_scale: f32, max_scale: f32) {
        self.manager.set_scale_range(min_scale, max_scale);
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
        let gpu = GpuMesh::new(self.manager.context(), "mesh", vertices, indices)?;
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
        self.manager.add_texture(source, opts)
    }

    /// Adds many streamed textures at once (see [`BudgetManager::add_textures`]): their floors
    /// are uploaded together.
    pub fn add_textures(
        &mut self,
        textures: impl IntoIterator<Item = (TextureSource, TextureOptions)>,
    ) -> Vec<Result<TextureHandle>> {
        self.manager.add_textures(textures)
    }

    /// Adds a texture the caller made, fully resident and not streamed (see
    /// [`BudgetManager::add_resident_texture`]): it is charged as it was created, and drawn like
    /// any other.
    pub fn add_resident_texture(&mut self, tex: TrackedTexture, label: &str) -> TextureHandle {
        self.manager.add_resident_texture(tex, label)
    }

    /// [`Renderer::add_resident_texture`] for a texture made from a KTX2 file: drawn with the
    /// file's orientation and shape, as the same file streamed (see
    /// [`BudgetManager::add_resident_texture_from`]).
    pub fn add_resident_texture_from(
        &mut self,
        tex: TrackedTexture,
        label: &str,
        file: &crate::ktx2::Ktx2Info,
    ) -> TextureHandle {
        self.manager.add_resident_texture_from(tex, label, file)
    }

    /// Removes a texture (freed at once). False for a stale handle.
    pub fn remove_texture(&mut self, h: TextureHandle) -> bool {
        if let Some(g) = self.material_groups.get_mut(h.index() as usize) {
            *g = None;
        }
        let removed = self.manager.remove_texture(h);
        if removed {
            // The slot's feedback was the removed texture's: a new texture in it starts afresh.
            let next = self.manager.frame_number() + 1;
            self.pass.feedback_mut().forget_slot(h.index(), next);
        }
        removed
    }

    /// Adds a material.
    pub fn add_material(&mut self, desc: MaterialDesc) -> Result<MaterialHandle> {
        match desc.virtual_texture {
            Some(id) if self.vt.as_ref().and_then(|v| v.info(id)).is_none() => {
                return Err(Error::InvalidResource {
                    label: "material".into(),
                    reason: format!("no virtual texture {}", id.index()),
                });
            }
            Some(_) => {}
            None if !self.manager.streamer().contains(desc.base_color) => {
                return Err(Error::InvalidResource {
                    label: "material".into(),
                    reason: "its base colour texture handle is stale".into(),
                });
            }
            None => {}
        }
        if !(desc.uv_scale.is_finite() && desc.uv_scale > 0.0) {
            return Err(Error::InvalidResource {
                label: "material".into(),
                reason: format!(
                    "its uv_scale is {} (a repeat count: finite and above 0)",
                    desc.uv_scale
                ),
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
        self.material_groups.clear();
        self.manager.clear();
        self.uniforms = None;
        let _ = self.manager.context().wait_idle();
    }

    /// Reasons of the recent scale changes, oldest first.
    pub fn scale_history(&self) -> impl Iterator<Item = (u64, f32, f32, ChangeReason)> + '_ {
        self.manager
            .controller()
            .history()
            .map(|c| (c.frame, c.from.scale(), c.to.scale(), c.reason))
    }

    /// The camera looking from `eye` at `target`, for quick set-ups.
    pub fn camera(eye: Vec3, target: Vec3) -> Camera {
        Camera::look_at(eye, target)
    }

    /// Bytes per category now.
    pub fn ledger_snapshot(&self) -> LedgerSnapshot {
        self.manager.context().ledger().snapshot()
    }

    /// Bytes in `category` now.
    pub fn bytes(&self, category: Category) -> u64 {
        self.manager.context().ledger().bytes(category)
    }
}
