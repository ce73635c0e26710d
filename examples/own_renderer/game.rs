//! The own_renderer example's renderer: written for this example, not mipflow's. Its own vertex
//! format (with tangents), its own WGSL (a lit material with a base colour and a normal map per
//! material: two streamed textures per draw), its own pipelines, bind groups, samplers and
//! upscale. It declares its render targets (HDR colour and depth) to mipflow's
//! [`BudgetManager`], and uses mipflow only for textures, the budget and the render scale.
//!
//! The frame, in the order the manager documents:
//! 1. demand: each panel's bounding sphere, UV density and the camera (a
//!    `mipflow::DemandView` with the guard band, the look-ahead and the prediction), for
//!    both of its textures, through `FeedbackDemand`: what the GPU feedback its own shader
//!    records (mipflow's WGSL snippet, prepended) says was really sampled;
//! 2. plan: [`BudgetManager::frame`] streams, rescales the targets and says the mip bias;
//! 3. bind groups: rebuilt only for a material whose texture views changed version;
//! 4. draw into the manager's targets, then the example's own upscale into the output;
//! 5. [`BudgetManager::end_frame`] after the submit.

#![allow(dead_code)]

#[path = "floor.rs"]
mod floor;

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};
use mipflow::Category;
use mipflow::FeedbackDemand;
use mipflow::TrackedBuffer;
use mipflow::{
    Budget, BudgetManager, Camera, FrameStats, FrameTiming, ManagerConfig, Result, TextureHandle,
    TextureOptions, TextureSource,
};
use mipflow::{Feedback, FeedbackConfig};
use mipflow::{TargetKey, TargetSet, TargetSpec};

/// The HDR scene colour: target 0 of the declared set (multisampled), resolved into target 2.
pub const HDR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// The depth buffer: target 1 (multisampled).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// MSAA samples of the scene pass. At 4x, HDR colour, depth and the resolve are 56 bytes a
/// pixel: the render targets are a large share of the budget, and the render scale the
/// strongest lever the manager has.
pub const SAMPLES: u32 = 4;
/// The keys of the declared render targets.
#[derive(Clone, Copy, Debug)]
struct TargetKeys {
    msaa_hdr: TargetKey,
    msaa_depth: TargetKey,
    resolved_hdr: TargetKey,
}
/// Bytes between two draws' uniforms (wgpu's minimum uniform offset alignment is at most this).
const DRAW_STRIDE: u64 = 256;
/// One draw's uniforms: the model matrix, the feedback slots, the textures' sizes.
const DRAW_BYTES: u64 = 96;

/// The example's vertex: position, normal, tangent, UV.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct GameVertex {
    position: [f32; 3],
    normal: [f32; 3],
    tangent: [f32; 3],
    uv: [f32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct FrameUniforms {
    view_proj: [[f32; 4]; 4],
    light: [f32; 4],
    colour: [f32; 4],
}

/// A material's two textures, as KTX2 sources.
#[derive(Clone, Debug)]
pub struct MaterialSources {
    /// sRGB base colour.
    pub base: TextureSource,
    /// Tangent-space normal map (linear).
    pub normal: TextureSource,
}

/// One panel of the scene: a unit quad in its local XY plane (normal +Z), placed by
/// `transform` (translation, rotation and a uniform scale), showing `material`.
#[derive(Clone, Copy, Debug)]
pub struct Panel {
    /// Local to world.
    pub transform: Mat4,
    /// Index into the materials.
    pub material: usize,
    /// Texture repeats across the quad.
    pub uv_repeat: f32,
}

/// How the renderer streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    /// Under the budget, by demand (the example's normal mode).
    Streamed,
    /// Every level of every texture loaded at start, no streaming: the reference a streamed
    /// frame is compared with.
    Full,
}

struct Material {
    base: TextureHandle,
    normal: TextureHandle,
    /// The view versions the bind group was made with, and the group.
    group: Option<(u64, u64, wgpu::BindGroup)>,
}

/// Counts that show the renderer behaves (the tests read them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Material bind groups made (including the first of each material).
    pub bind_groups_built: u64,
    /// Times a material's texture view version was seen to differ from its bind group's (or
    /// the material had none): exactly when a rebuild is needed.
    pub version_changes: u64,
    /// Upscale bind groups made (at each render-target reallocation).
    pub blit_groups_built: u64,
}

/// The example's renderer. See the module documentation.
pub struct GameRenderer {
    keys: TargetKeys,
    manager: BudgetManager,
    lit: wgpu::RenderPipeline,
    blit: wgpu::RenderPipeline,
    material_layout: wgpu::BindGroupLayout,
    blit_layout: wgpu::BindGroupLayout,
    material_sampler: wgpu::Sampler,
    hdr_sampler: wgpu::Sampler,
    frame_buffer: TrackedBuffer,
    draw_buffer: TrackedBuffer,
    frame_group: wgpu::BindGroup,
    vertices: TrackedBuffer,
    indices: TrackedBuffer,
    materials: Vec<Material>,
    panels: Vec<Panel>,
    blit_group: Option<(u64, wgpu::BindGroup)>,
    counters: Counters,
    /// GPU feedback: the record's buffers, and the demand it decides.
    feedback: Feedback,
    demand: FeedbackDemand,
    /// Feedback could not make room for every slot (said once; the frames go on without it).
    feedback_refused: bool,
    /// Scratch for the draws' uniforms, sized once.
    draw_data: Vec<u8>,
    last_submit: Option<std::time::Instant>,
    /// The floor, streamed tile by tile ([`GameRenderer::with_floor`]), and its draw.
    floor: Option<floor::Floor>,
    floor_draw: Mat4,
    frame_layout: wgpu::BindGroupLayout,
}

impl GameRenderer {
    /// A renderer on the game's device and queue, drawing into views of `output_format`, with
    /// `materials` and `panels`, under `budget`.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        output_format: wgpu::TextureFormat,
        budget: Budget,
        materials: &[MaterialSources],
        panels: Vec<Panel>,
        residency: Residency,
    ) -> Result<Self> {
        let mut config = ManagerConfig::default();
        config.budget = budget;
        // The targets this renderer draws into, declared once: the manager makes them at the
        // planned scale and charges them to the same budget as the textures.
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let mut set = TargetSet::new();
        let keys = TargetKeys {
            msaa_hdr: set.add(
                TargetSpec::scaled("game hdr msaa", HDR_FORMAT)
                    .with_usage(attach)
                    .with_samples(SAMPLES),
            ),
            msaa_depth: set.add(
                TargetSpec::scaled("game depth msaa", DEPTH_FORMAT)
                    .with_usage(attach)
                    .with_samples(SAMPLES),
            ),
            resolved_hdr: set.add(TargetSpec::scaled("game hdr resolved", HDR_FORMAT)),
        };
        config.target_set = Some(set);
        let mut manager = BudgetManager::new(device.clone(), queue, config)?;
        let ctx = manager.context();
        // GPU feedback: the lit shader records which level the sampler uses for a sample of its
        // pixels; the histograms come back a few frames later and decide what is hidden.
        // (Its sampler is trilinear: the default anisotropy clamp of 1 is the sampler's.)
        let feedback = Feedback::new(ctx, FeedbackConfig::default(), 16)?;

        let lit_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("game lit"),
            // mipflow's feedback record first, its bindings in group 2.
            source: wgpu::ShaderSource::Wgsl(
                format!("{}\n{}", Feedback::wgsl(2), include_str!("lit.wgsl")).into(),
            ),
        });
        let blit_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("game blit"),
            source: wgpu::ShaderSource::Wgsl(include_str!("blit.wgsl").into()),
        });
        let uniform = |binding, dynamic, size: u64| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: dynamic,
                min_binding_size: wgpu::BufferSize::new(size),
            },
            count: None,
        };
        let texture = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        };
        let sampler = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
            count: None,
        };
        let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("game frame"),
            entries: &[
                uniform(0, false, std::mem::size_of::<FrameUniforms>() as u64),
                uniform(1, true, DRAW_BYTES),
                sampler(2),
            ],
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("game material"),
            entries: &[texture(0), texture(1)],
        });
        let blit_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("game blit"),
            entries: &[texture(0), sampler(1)],
        });
        let lit_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("game lit"),
            bind_group_layouts: &[
                Some(&frame_layout),
                Some(&material_layout),
                Some(feedback.bind_group_layout()),
            ],
            immediate_size: 0,
        });
        let blit_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("game blit"),
            bind_group_layouts: &[Some(&blit_layout)],
            immediate_size: 0,
        });
        let attributes = wgpu::vertex_attr_array![
            0 => Float32x3, 1 => Float32x3, 2 => Float32x3, 3 => Float32x2
        ];
        let lit = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("game lit"),
            layout: Some(&lit_layout),
            vertex: wgpu::VertexState {
                module: &lit_module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<GameVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &attributes,
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState {
                count: SAMPLES,
                ..Default::default()
            },
            fragment: Some(wgpu::FragmentState {
                module: &lit_module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(HDR_FORMAT.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let blit = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("game blit"),
            layout: Some(&blit_pipeline_layout),
            vertex: wgpu::VertexState {
                module: &blit_module,
                entry_point: Some("blit_vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &blit_module,
                entry_point: Some("blit_fs"),
                compilation_options: Default::default(),
                targets: &[Some(output_format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        // The game picks its own samplers: trilinear and repeating for materials (the mip bias
        // goes into the shader's textureSampleBias), bilinear for the upscale.
        let material_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("game material"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            ..Default::default()
        });
        let hdr_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("game hdr"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });

        // Buffers, charged to the ledger as buffers (fixed bytes for the planner).
        let (verts, idx) = quad();
        let vertices = ctx.create_buffer_init(
            "game quad vertices",
            bytemuck::cast_slice(&verts),
            wgpu::BufferUsages::VERTEX,
            Category::Buffers,
        )?;
        let indices = ctx.create_buffer_init(
            "game quad indices",
            bytemuck::cast_slice(&idx),
            wgpu::BufferUsages::INDEX,
            Category::Buffers,
        )?;
        let frame_buffer = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("game frame uniforms"),
                size: std::mem::size_of::<FrameUniforms>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        // The panels' draws and the floor's.
        let draws = panels.len() as u64 + 1;
        let draw_buffer = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("game draw uniforms"),
                size: draws * DRAW_STRIDE,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let frame_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("game frame"),
            layout: &frame_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: frame_buffer.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: draw_buffer.buffer(),
                        offset: 0,
                        size: wgpu::BufferSize::new(DRAW_BYTES),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&material_sampler),
                },
            ],
        });

        let mut mats = Vec::with_capacity(materials.len());
        for m in materials {
            let (base, normal) = match residency {
                Residency::Streamed => (
                    manager.add_texture(m.base.clone(), TextureOptions::default())?,
                    manager.add_texture(m.normal.clone(), TextureOptions::default())?,
                ),
                Residency::Full => {
                    let limits = mipflow::ktx2::ReadLimits::default();
                    let b = mipflow::low_level::load_resident(manager.context(), &m.base, &limits)?;
                    let n =
                        mipflow::low_level::load_resident(manager.context(), &m.normal, &limits)?;
                    // With their files' metadata: the orientation the shader flips by.
                    let (bi, ni) = (m.base.info(&limits)?, m.normal.info(&limits)?);
                    (
                        manager.add_resident_texture_from(b, "base (full)", &bi),
                        manager.add_resident_texture_from(n, "normal (full)", &ni),
                    )
                }
            };
            mats.push(Material {
                base,
                normal,
                group: None,
            });
        }
        Ok(Self {
            keys,
            manager,
            lit,
            blit,
            material_layout,
            blit_layout,
            material_sampler,
            hdr_sampler,
            frame_buffer,
            draw_buffer,
            frame_group,
            vertices,
            indices,
            materials: mats,
            draw_data: vec![0; (draws * DRAW_STRIDE) as usize],
            panels,
            blit_group: None,
            counters: Counters::default(),
            feedback,
            demand: FeedbackDemand::new(),
            feedback_refused: false,
            last_submit: None,
            floor: None,
            floor_draw: Mat4::IDENTITY,
            frame_layout,
        })
    }

    /// Adds a floor down the corridor of `length` (from z = 2 to z = 2 - `length`, 4.4 wide):
    /// one texture of `side`² streamed tile by tile from a cache of `atlas_bytes` (see
    /// `floor.rs`), drawn with the panels.
    pub fn with_floor(
        mut self,
        side: u32,
        atlas_bytes: u64,
        length: f32,
    ) -> std::result::Result<Self, String> {
        let attributes = wgpu::vertex_attr_array![
            0 => Float32x3, 1 => Float32x3, 2 => Float32x3, 3 => Float32x2
        ];
        let vertex = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<GameVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &attributes,
        };
        self.floor = Some(floor::Floor::new(
            &self.manager,
            side,
            atlas_bytes,
            &self.frame_layout,
            vertex,
            (HDR_FORMAT, DEPTH_FORMAT, SAMPLES),
        )?);
        // The unit quad (XY, facing +Z) laid down facing +Y, 4.4 wide and `length` long.
        self.floor_draw = Mat4::from_translation(Vec3::new(0.0, 0.0, 2.0 - length / 2.0))
            * Mat4::from_rotation_x(-std::f32::consts::FRAC_PI_2)
            * Mat4::from_scale(Vec3::new(4.4, length, 1.0));
        Ok(self)
    }

    /// The floor's tiles held and in all (its tiled levels), if it has one.
    pub fn floor_tiles(&self) -> Option<(usize, usize)> {
        self.floor.as_ref().map(floor::Floor::tiles)
    }

    /// The budget manager (budget, ledger, streamer, the last plan).
    pub fn manager(&self) -> &BudgetManager {
        &self.manager
    }

    /// The budget manager, to change the budget or the scale range.
    pub fn manager_mut(&mut self) -> &mut BudgetManager {
        &mut self.manager
    }

    /// Each material's (base colour, normal map) texture handles.
    pub fn material_textures(&self) -> impl Iterator<Item = (TextureHandle, TextureHandle)> + '_ {
        self.materials.iter().map(|m| (m.base, m.normal))
    }

    /// The counters (bind groups made, version changes seen).
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Whether every level the last frame's demand wanted is resident.
    pub fn all_wanted_resident(&self) -> bool {
        let (have, want) = self.manager.streamer().wanted_bytes();
        have >= want
    }

    /// One frame seen by `camera`, into `target` (a view of a texture of `output` size, in the
    /// format given to [`GameRenderer::new`]). Returns the frame's figures.
    pub fn frame(
        &mut self,
        camera: &Camera,
        target: &wgpu::TextureView,
        output: (u32, u32),
    ) -> Result<FrameStats> {
        let now = std::time::Instant::now();
        let cpu_ms = self
            .last_submit
            .map_or(0.0, |t| now.duration_since(t).as_secs_f32() * 1e3);
        let timing = FrameTiming {
            gpu_ms: None,
            cpu_ms,
        };
        if output.0 == 0 || output.1 == 0 {
            // A minimised window: nothing to draw, nothing to plan.
            self.manager.skip_frame();
            return Ok(FrameStats {
                skipped: true,
                ..FrameStats::default()
            });
        }

        // The game's own matrices: demand reads the same view and projection the draws use.
        let aspect = output.0 as f32 / output.1 as f32;
        let matrices = (camera.view, camera.projection(aspect));

        // 1. Demand: where each panel is, how dense its UVs are, what the camera sees, and
        //    what the GPU feedback says was really sampled (a panel no pixel of which was drawn
        //    gets no new levels).
        let _ = self.manager.context().device().poll(wgpu::PollType::Poll);
        let next = self.manager.frame_number() + 1;
        let slots = self.manager.plan_textures().len() as u32;
        // Feedback that cannot make room for every slot (a device limit) records nothing this
        // frame and the CPU estimate decides: the frame goes on.
        match self
            .feedback
            .begin_frame(self.manager.context(), next, slots)
        {
            Err(e) if !self.feedback_refused => {
                eprintln!("own_renderer: GPU feedback off until it has room: {e}");
                self.feedback_refused = true;
            }
            Ok(()) => self.feedback_refused = false,
            Err(_) => {}
        }
        let view = self
            .demand
            .begin_frame(&self.manager, &self.feedback, matrices, output, 2.0);
        for p in &self.panels {
            let m = &self.materials[p.material];
            let scale = p.transform.x_axis.truncate().length();
            let center = p.transform.transform_point3(Vec3::ZERO);
            // A unit quad: radius sqrt(0.5); `uv_repeat` repeats over `scale` world units.
            let radius = 0.5f32.sqrt() * scale;
            let uv_per_unit = p.uv_repeat / scale.max(1e-6);
            for tex in [m.base, m.normal] {
                let Some(side) = self.manager.texture_side(tex) else {
                    continue;
                };
                if let Some(d) = view.sphere(center, radius, uv_per_unit, side) {
                    self.demand.add(&mut self.manager, &self.feedback, tex, &d);
                }
            }
        }

        // 2. Plan and stream; the manager makes the targets at the planned scale. The floor's
        //    tiles stream from their own feedback (their cache is fixed bytes to the plan),
        //    the cache sized first against what a byte is worth to the textures.
        if let Some(f) = &mut self.floor {
            f.fit(&mut self.manager)?;
        }
        let plan = self.manager.frame(output, timing)?;
        if let Some(f) = &mut self.floor {
            f.update(&self.manager)?;
        }

        // 3. Bind groups: only where a texture's view changed.
        let device = self.manager.context().device();
        for m in &mut self.materials {
            let (Some((bv, b_version)), Some((nv, n_version))) = (
                self.manager.streamer().texture_view(m.base),
                self.manager.streamer().texture_view(m.normal),
            ) else {
                continue;
            };
            if m.group
                .as_ref()
                .is_some_and(|(b, n, _)| *b == b_version && *n == n_version)
            {
                continue;
            }
            self.counters.version_changes += 1;
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("game material"),
                layout: &self.material_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(bv),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(nv),
                    },
                ],
            });
            self.counters.bind_groups_built += 1;
            m.group = Some((b_version, n_version, group));
        }
        let Some(targets) = self.manager.targets() else {
            // Nothing to draw into: the frame still ends (its staging comes back).
            self.manager.end_frame();
            return Ok(self.manager.frame_stats(&plan, timing));
        };
        if self
            .blit_group
            .as_ref()
            .is_none_or(|(g, _)| *g != targets.generation())
        {
            let hdr = targets
                .view(self.keys.resolved_hdr)
                .expect("declared target");
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("game blit"),
                layout: &self.blit_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(hdr),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Sampler(&self.hdr_sampler),
                    },
                ],
            });
            self.counters.blit_groups_built += 1;
            self.blit_group = Some((targets.generation(), group));
        }

        // 4. Draw: uniforms, the lit pass at the scaled size, the upscale to the output.
        let queue = self.manager.context().queue();
        let size = targets.size();
        let aspect = output.0 as f32 / output.1 as f32;
        let view_proj = camera.projection(aspect) * camera.view;
        let light = Vec3::new(0.4, 0.8, 0.45).normalize();
        let frame = FrameUniforms {
            view_proj: view_proj.to_cols_array_2d(),
            light: [light.x, light.y, light.z, plan.mip_bias],
            colour: [1.6, 1.5, 1.4, 0.25],
        };
        queue.write_buffer(self.frame_buffer.buffer(), 0, bytemuck::bytes_of(&frame));
        let streamer = self.manager.streamer();
        for (i, p) in self.panels.iter().enumerate() {
            let at = i * DRAW_STRIDE as usize;
            let m = &self.materials[p.material];
            let size = |h: TextureHandle| streamer.texture_size(h).unwrap_or((0, 0));
            let ((bw, bh), (nw, nh)) = (size(m.base), size(m.normal));
            // The slot to record demand for, or -1 when the texture is not streamed.
            let streamed = |h: TextureHandle, width: u32| {
                if streamer.contains(h) && width > 0 {
                    h.index() as f32
                } else {
                    -1.0
                }
            };
            let extra = [
                streamed(m.base, bw),
                streamed(m.normal, nw),
                0.0,
                0.0,
                bw as f32,
                bh as f32,
                nw as f32,
                nh as f32,
            ];
            self.draw_data[at..at + 64]
                .copy_from_slice(bytemuck::cast_slice(&p.transform.to_cols_array()));
            self.draw_data[at + 64..at + DRAW_BYTES as usize]
                .copy_from_slice(bytemuck::cast_slice(&extra));
            self.demand.recorded(m.base, plan.frame);
            self.demand.recorded(m.normal, plan.frame);
        }
        // The floor's draw after the panels': its texture repeats along it (square texels).
        let at = self.panels.len() * DRAW_STRIDE as usize;
        let along = self.floor_draw.y_axis.truncate().length() / 4.4;
        self.draw_data[at..at + 64]
            .copy_from_slice(bytemuck::cast_slice(&self.floor_draw.to_cols_array()));
        self.draw_data[at + 64..at + 72].copy_from_slice(bytemuck::cast_slice(&[1.0f32, along]));
        queue.write_buffer(self.draw_buffer.buffer(), 0, &self.draw_data);
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("game frame"),
        });
        {
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("game lit"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: targets.view(self.keys.msaa_hdr).expect("declared target"),
                    depth_slice: None,
                    resolve_target: targets.view(self.keys.resolved_hdr),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: 0.05,
                            g: 0.06,
                            b: 0.08,
                            a: 1.0,
                        }),
                        store: wgpu::StoreOp::Discard,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: targets.view(self.keys.msaa_depth).expect("declared target"),
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            rp.set_viewport(0.0, 0.0, size.0 as f32, size.1 as f32, 0.0, 1.0);
            rp.set_pipeline(&self.lit);
            rp.set_vertex_buffer(0, self.vertices.buffer().slice(..));
            rp.set_index_buffer(self.indices.buffer().slice(..), wgpu::IndexFormat::Uint16);
            for (i, p) in self.panels.iter().enumerate() {
                let Some((_, _, group)) = &self.materials[p.material].group else {
                    continue;
                };
                rp.set_bind_group(0, &self.frame_group, &[(i as u64 * DRAW_STRIDE) as u32]);
                rp.set_bind_group(1, group, &[]);
                rp.set_bind_group(2, self.feedback.bind_group(), &[]);
                rp.draw_indexed(0..6, 0, 0..1);
            }
            if let Some(f) = &self.floor {
                let at = (self.panels.len() as u64 * DRAW_STRIDE) as u32;
                rp.set_pipeline(&f.pipeline);
                rp.set_bind_group(0, &self.frame_group, &[at]);
                rp.set_bind_group(1, f.vt.bind_group(), &[]);
                rp.draw_indexed(0..6, 0, 0..1);
            }
        }
        {
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("game upscale"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            if let Some((_, group)) = &self.blit_group {
                rp.set_pipeline(&self.blit);
                rp.set_bind_group(0, group, &[]);
                rp.draw(0..3, 0..1);
            }
        }
        // The bins of the slots drawn this frame are gathered into a readback buffer (mapped
        // later, never waited for).
        let resolved = self
            .feedback
            .resolve(self.manager.context(), &mut enc, plan.render_scale);
        // The floor's tile feedback, copied back the same way.
        if let Some(f) = &mut self.floor {
            f.vt.record_feedback(&mut enc);
        }
        queue.submit([enc.finish()]);
        if let Some(f) = &mut self.floor {
            f.vt.submitted();
        }
        if let Err(e) = resolved {
            // The frame's work is submitted: it ends, then the error is the caller's.
            self.manager.end_frame();
            return Err(e);
        }
        self.feedback.after_submit();

        // 5. End of frame.
        self.manager.end_frame();
        self.last_submit = Some(now);
        let mut stats = self.manager.frame_stats(&plan, timing);
        stats.instances_drawn = self.panels.len() as u32;
        stats.feedback = self.feedback.stats();
        Ok(stats)
    }
}

/// A unit quad in the XY plane facing +Z, UVs 0..1 (v down), tangent +X.
fn quad() -> ([GameVertex; 4], [u16; 6]) {
    let v = |x: f32, y: f32, u: f32, t: f32| GameVertex {
        position: [x, y, 0.0],
        normal: [0.0, 0.0, 1.0],
        tangent: [1.0, 0.0, 0.0],
        uv: [u, t],
    };
    (
        [
            v(-0.5, -0.5, 0.0, 1.0),
            v(0.5, -0.5, 1.0, 1.0),
            v(0.5, 0.5, 1.0, 0.0),
            v(-0.5, 0.5, 0.0, 0.0),
        ],
        [0, 1, 2, 0, 2, 3],
    )
}
