//! The Renderer's material pass ([`TexturedPass`]): a textured, lit mesh with a mip
//! bias and a colour-by-mip debug view.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};

use crate::Result;
use crate::budget::Category;
use crate::feedback::{Feedback, FeedbackConfig};
use crate::gpu::{GpuContext, TrackedBuffer, TrackedTexture};
use crate::shaders;

/// A mesh vertex: position, normal, UV.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Vertex {
    /// Object-space position.
    pub position: [f32; 3],
    /// Object-space normal.
    pub normal: [f32; 3],
    /// Texture coordinate.
    pub uv: [f32; 2],
}

impl Vertex {
    const ATTRS: [wgpu::VertexAttribute; 3] =
        wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x2];

    fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<Vertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRS,
        }
    }
}

/// A unit quad in the XZ plane (y = 0), facing +Y, UVs 0..1, as 4 vertices and 6 indices.
pub fn quad_xz() -> ([Vertex; 4], [u32; 6]) {
    let n = [0.0, 1.0, 0.0];
    let v = |x: f32, z: f32, u: f32, w: f32| Vertex {
        position: [x, 0.0, z],
        normal: n,
        uv: [u, w],
    };
    (
        [
            v(-0.5, -0.5, 0.0, 0.0),
            v(0.5, -0.5, 1.0, 0.0),
            v(0.5, 0.5, 1.0, 1.0),
            v(-0.5, 0.5, 0.0, 1.0),
        ],
        [0, 2, 1, 0, 3, 2],
    )
}

/// A quad of `w x h` in the XY plane facing +Z, UVs 0..1.
pub fn panel(w: f32, h: f32) -> ([Vertex; 4], [u32; 6]) {
    let n = [0.0, 0.0, 1.0];
    let v = |x: f32, y: f32, u: f32, t: f32| Vertex {
        position: [x * w, y * h, 0.0],
        normal: n,
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

/// Vertex and index buffers of a mesh, charged to [`Category::Buffers`].
#[derive(Debug)]
pub struct GpuMesh {
    vertices: TrackedBuffer,
    indices: TrackedBuffer,
    index_count: u32,
}

impl GpuMesh {
    /// Uploads a mesh.
    pub fn new(
        ctx: &GpuContext,
        label: &str,
        vertices: &[Vertex],
        indices: &[u32],
    ) -> Result<Self> {
        Ok(Self {
            vertices: ctx.create_buffer_init(
                &format!("{label} vertices"),
                bytemuck::cast_slice(vertices),
                wgpu::BufferUsages::VERTEX,
                Category::Buffers,
            )?,
            indices: ctx.create_buffer_init(
                &format!("{label} indices"),
                bytemuck::cast_slice(indices),
                wgpu::BufferUsages::INDEX,
                Category::Buffers,
            )?,
            index_count: indices.len() as u32,
        })
    }
}

/// Per-draw constants of the material pass.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct DrawUniforms {
    /// Projection times view.
    pub view_proj: [[f32; 4]; 4],
    /// Object to world.
    pub model: [[f32; 4]; 4],
    /// x: mip bias (log2 of the render scale), y: debug mode (1 = colour by the level sampled,
    /// 2 = by the level wanted) plus 4 to flip the texture's columns and 8 its rows
    /// (`KTXorientation`), z: the texture's feedback slot (negative: none), w: its full
    /// level-0 width (0: unknown).
    pub params: [f32; 4],
    /// Direction the light travels, world space; w: the texture's level-0 height.
    pub light_dir: [f32; 4],
    /// x, y: how many times the texture repeats across the mesh's UV range 0..1 on each axis
    /// ([`crate::MaterialDesc::uv_scale`]; 1 = once); z, w: unused (0).
    pub uv_scale: [f32; 4],
}

impl DrawUniforms {
    /// Uniforms for one draw.
    pub fn new(view_proj: Mat4, model: Mat4, mip_bias: f32, debug_mips: bool) -> Self {
        Self {
            view_proj: view_proj.to_cols_array_2d(),
            model: model.to_cols_array_2d(),
            params: [mip_bias, if debug_mips { 1.0 } else { 0.0 }, -1.0, 0.0],
            light_dir: Vec4::from((Vec3::new(-0.4, -1.0, -0.3).normalize(), 0.0)).to_array(),
            uv_scale: [1.0, 1.0, 0.0, 0.0],
        }
    }

    /// The material's texture repeats `scale` times across the mesh's UV range (the vertex
    /// shader multiplies the texture coordinates, after any orientation flip).
    pub fn with_uv_scale(mut self, scale: f32) -> Self {
        self.uv_scale = [scale, scale, 0.0, 0.0];
        self
    }

    /// With GPU feedback for the texture in `slot`, whose level 0 is `width x height`.
    pub fn with_feedback(mut self, slot: u32, width: u32, height: u32) -> Self {
        self.params[2] = slot as f32;
        self.with_full_size(width, height)
    }

    /// The texture's full level-0 size (the debug views name levels of the full chain, not of
    /// the resident part).
    pub fn with_full_size(mut self, width: u32, height: u32) -> Self {
        self.params[3] = width as f32;
        self.light_dir[3] = height as f32;
        self
    }

    /// The texture's orientation (`KTXorientation`): its texture coordinates are flipped in the
    /// vertex shader.
    pub fn with_orientation(mut self, o: crate::ktx2::Orientation) -> Self {
        self.params[1] += if o.flip_x { 4.0 } else { 0.0 } + if o.flip_y { 8.0 } else { 0.0 };
        self
    }

    /// The material samples virtual texture `id` (`uv_scale.z`).
    pub fn with_virtual_texture(mut self, id: u32) -> Self {
        self.uv_scale[2] = id as f32;
        self
    }

    /// The wanted-level debug view: colour by the level the view wants (what feedback records).
    pub fn with_debug_wanted(mut self) -> Self {
        self.params[1] = ((self.params[1] as u32 & !3) | 2) as f32;
        self
    }
}

/// The material pass: pipeline, layouts and sampler.
#[derive(Debug)]
pub struct TexturedPass {
    pipeline: wgpu::RenderPipeline,
    uniform_layout: wgpu::BindGroupLayout,
    material_layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    depth_format: wgpu::TextureFormat,
    /// The GPU feedback the pass records (bind group 2; off until enabled).
    feedback: Feedback,
    /// Group 3: the depth pre-pass's depth, read by the feedback record to skip occluded
    /// fragments; `dummy_depth` stands in when there is no pre-pass.
    depth_layout: wgpu::BindGroupLayout,
    dummy_depth: (TrackedTexture, wgpu::BindGroup),
    /// Depth only (the pre-pass), and the shaded pass after it (depth read-only, equal passes).
    depth_pipeline: wgpu::RenderPipeline,
    after_prepass_pipeline: wgpu::RenderPipeline,
    color_format: wgpu::TextureFormat,
    /// Materials sampling a virtual texture ([`TexturedPass::enable_virtual_textures`]): the
    /// shaded pass and the one after a pre-pass.
    virtual_pipelines: Option<(wgpu::RenderPipeline, wgpu::RenderPipeline)>,
}

impl TexturedPass {
    /// Builds the pass for `color_format` targets with a `Depth32Float` depth buffer, sampling
    /// materials trilinearly with `anisotropy` (clamped to 1..=16).
    ///
    /// # Errors
    /// When the feedback buffers cannot be created (out of memory).
    pub fn new(
        ctx: &GpuContext,
        color_format: wgpu::TextureFormat,
        anisotropy: u16,
    ) -> Result<Self> {
        let device = ctx.device();
        let feedback = Feedback::new(ctx, FeedbackConfig::off(), 16)?;
        let module = shaders::create_module(device, "textured.wgsl", shaders::TEXTURED);
        let uniform_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("textured uniforms"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(
                        std::mem::size_of::<DrawUniforms>() as u64
                    ),
                },
                count: None,
            }],
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("textured material"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let depth_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("textured scene depth"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            }],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("textured"),
            bind_group_layouts: &[
                Some(&uniform_layout),
                Some(&material_layout),
                Some(feedback.bind_group_layout()),
                Some(&depth_layout),
            ],
            immediate_size: 0,
        });
        let depth_format = wgpu::TextureFormat::Depth32Float;
        let depth_only_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("textured depth pre-pass"),
            bind_group_layouts: &[Some(&uniform_layout)],
            immediate_size: 0,
        });
        // One vertex stage for every variant (its clip position is @invariant, so the pre-pass
        // and the shaded pass agree on depth to the bit); `shaded` adds the fragment stage.
        let make = |layout: &wgpu::PipelineLayout,
                    write: bool,
                    compare: wgpu::CompareFunction,
                    shaded: bool,
                    label: &str| {
            let formats = (color_format, depth_format);
            Self::pipeline(
                device,
                &module,
                layout,
                formats,
                (write, compare),
                shaded,
                label,
            )
        };
        use wgpu::CompareFunction::{Less, LessEqual};
        let pipeline = make(&layout, true, Less, true, "textured");
        let after_prepass_pipeline = make(
            &layout,
            false,
            LessEqual,
            true,
            "textured after depth pre-pass",
        );
        let depth_pipeline = make(
            &depth_only_layout,
            true,
            Less,
            false,
            "textured depth pre-pass",
        );
        let dummy = ctx.create_texture(
            &wgpu::TextureDescriptor {
                label: Some("textured dummy depth"),
                size: wgpu::Extent3d {
                    width: 1,
                    height: 1,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: depth_format,
                usage: wgpu::TextureUsages::TEXTURE_BINDING
                    | wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            },
            Category::Other,
        )?;
        let dummy_group = Self::depth_group_for(
            device,
            &depth_layout,
            &dummy.create_view(&Default::default()),
        );
        // Trilinear with anisotropy (8x by default): what a game would use.
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("material sampler"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            anisotropy_clamp: anisotropy.clamp(1, 16),
            ..Default::default()
        });
        Ok(Self {
            pipeline,
            uniform_layout,
            material_layout,
            sampler,
            depth_format,
            feedback,
            depth_layout,
            dummy_depth: (dummy, dummy_group),
            depth_pipeline,
            after_prepass_pipeline,
            color_format,
            virtual_pipelines: None,
        })
    }

    /// Makes the pipelines of materials sampling a virtual texture, through a cache whose bind
    /// group has `vt_layout` (group 1, in place of the material's texture). Once.
    pub fn enable_virtual_textures(&mut self, ctx: &GpuContext, vt_layout: &wgpu::BindGroupLayout) {
        if self.virtual_pipelines.is_some() {
            return;
        }
        let device = ctx.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("textured virtual"),
            source: wgpu::ShaderSource::Wgsl(shaders::textured_virtual().into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("textured virtual"),
            bind_group_layouts: &[
                Some(&self.uniform_layout),
                Some(vt_layout),
                Some(self.feedback.bind_group_layout()),
                Some(&self.depth_layout),
            ],
            immediate_size: 0,
        });
        let formats = (self.color_format, self.depth_format);
        let make = |write: bool, compare: wgpu::CompareFunction, label: &str| {
            Self::pipeline(
                device,
                &module,
                &layout,
                formats,
                (write, compare),
                true,
                label,
            )
        };
        self.virtual_pipelines = Some((
            make(true, wgpu::CompareFunction::Less, "textured virtual"),
            make(
                false,
                wgpu::CompareFunction::LessEqual,
                "textured virtual after pre-pass",
            ),
        ));
    }

    /// A pipeline of the material pass: `vs_main`, and `fs_main` when `shaded`, into targets of
    /// `formats` (colour, depth) with the depth test `depth` (write, compare).
    fn pipeline(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        layout: &wgpu::PipelineLayout,
        formats: (wgpu::TextureFormat, wgpu::TextureFormat),
        depth: (bool, wgpu::CompareFunction),
        shaded: bool,
        label: &str,
    ) -> wgpu::RenderPipeline {
        let targets = [Some(wgpu::ColorTargetState {
            format: formats.0,
            blend: None,
            write_mask: wgpu::ColorWrites::ALL,
        })];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(layout),
            vertex: wgpu::VertexState {
                module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(Vertex::layout())],
            },
            primitive: wgpu::PrimitiveState {
                cull_mode: None,
                ..Default::default()
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                format: formats.1,
                depth_write_enabled: Some(depth.0),
                depth_compare: Some(depth.1),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: shaded.then(|| wgpu::FragmentState {
                module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Records one draw of a material sampling a virtual texture (`vt_group`: the cache's bind
    /// group); `depth_group`: the pre-pass's depth when there was one (then depth read-only,
    /// equal passes). Nothing without [`TexturedPass::enable_virtual_textures`].
    #[allow(clippy::too_many_arguments)]
    pub fn draw_virtual(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        uniforms: &wgpu::BindGroup,
        uniform_offset: u32,
        vt_group: &wgpu::BindGroup,
        depth_group: Option<&wgpu::BindGroup>,
        mesh: &GpuMesh,
    ) {
        let Some((shaded, after)) = &self.virtual_pipelines else {
            return;
        };
        pass.set_pipeline(if depth_group.is_some() { after } else { shaded });
        pass.set_bind_group(0, uniforms, &[uniform_offset]);
        pass.set_bind_group(1, vt_group, &[]);
        pass.set_bind_group(2, self.feedback.bind_group(), &[]);
        pass.set_bind_group(3, depth_group.unwrap_or(&self.dummy_depth.1), &[]);
        pass.set_vertex_buffer(0, mesh.vertices.buffer().slice(..));
        pass.set_index_buffer(mesh.indices.buffer().slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..mesh.index_count, 0, 0..1);
    }

    fn depth_group_for(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        view: &wgpu::TextureView,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("textured scene depth"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(view),
            }],
        })
    }

    /// The group-3 bind group over a depth pre-pass's depth view (make it again when the
    /// render targets are reallocated).
    pub fn depth_group(&self, ctx: &GpuContext, depth: &wgpu::TextureView) -> wgpu::BindGroup {
        Self::depth_group_for(ctx.device(), &self.depth_layout, depth)
    }

    /// Records one instance into a depth pre-pass (depth only; no material, no feedback).
    pub fn draw_depth(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        uniforms: &wgpu::BindGroup,
        uniform_offset: u32,
        mesh: &GpuMesh,
    ) {
        pass.set_pipeline(&self.depth_pipeline);
        pass.set_bind_group(0, uniforms, &[uniform_offset]);
        pass.set_vertex_buffer(0, mesh.vertices.buffer().slice(..));
        pass.set_index_buffer(mesh.indices.buffer().slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..mesh.index_count, 0, 0..1);
    }

    /// Records one draw after a depth pre-pass: the depth attachment read-only (its depth is
    /// the pre-pass's, bound as `depth_group` for the feedback record), equal depth passes.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_after_prepass(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        uniforms: &wgpu::BindGroup,
        uniform_offset: u32,
        material: &wgpu::BindGroup,
        depth_group: &wgpu::BindGroup,
        mesh: &GpuMesh,
    ) {
        pass.set_pipeline(&self.after_prepass_pipeline);
        pass.set_bind_group(0, uniforms, &[uniform_offset]);
        pass.set_bind_group(1, material, &[]);
        pass.set_bind_group(2, self.feedback.bind_group(), &[]);
        pass.set_bind_group(3, depth_group, &[]);
        pass.set_vertex_buffer(0, mesh.vertices.buffer().slice(..));
        pass.set_index_buffer(mesh.indices.buffer().slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..mesh.index_count, 0, 0..1);
    }

    /// The pass's GPU feedback.
    pub fn feedback(&self) -> &Feedback {
        &self.feedback
    }

    /// The pass's GPU feedback, to turn on, start frames and resolve.
    pub fn feedback_mut(&mut self) -> &mut Feedback {
        &mut self.feedback
    }

    /// The depth format the pass expects.
    pub fn depth_format(&self) -> wgpu::TextureFormat {
        self.depth_format
    }

    /// A material bind group for a texture view.
    pub fn material_bind_group(
        &self,
        ctx: &GpuContext,
        label: &str,
        view: &wgpu::TextureView,
    ) -> wgpu::BindGroup {
        ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.material_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        })
    }

    /// Bytes between consecutive draws' uniforms in a uniform buffer (the device's dynamic-offset
    /// alignment).
    pub fn uniform_stride(ctx: &GpuContext) -> u64 {
        let align = u64::from(ctx.device().limits().min_uniform_buffer_offset_alignment);
        (std::mem::size_of::<DrawUniforms>() as u64).div_ceil(align) * align
    }

    /// A uniform buffer for `draws` draws (charged to [`Category::Buffers`]) and its bind group;
    /// draw `i` uses dynamic offset `i * uniform_stride`.
    pub fn uniform_buffer(
        &self,
        ctx: &GpuContext,
        label: &str,
        draws: u64,
    ) -> Result<(TrackedBuffer, wgpu::BindGroup)> {
        let buf = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some(label),
                size: Self::uniform_stride(ctx) * draws.max(1),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let bg = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.uniform_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: buf.buffer(),
                    offset: 0,
                    size: wgpu::BufferSize::new(std::mem::size_of::<DrawUniforms>() as u64),
                }),
            }],
        });
        Ok((buf, bg))
    }

    /// Records one draw of `mesh` into `pass`, its uniforms at `uniform_offset` in the uniform
    /// buffer behind `uniforms`.
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        uniforms: &wgpu::BindGroup,
        uniform_offset: u32,
        material: &wgpu::BindGroup,
        mesh: &GpuMesh,
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, uniforms, &[uniform_offset]);
        pass.set_bind_group(1, material, &[]);
        pass.set_bind_group(2, self.feedback.bind_group(), &[]);
        pass.set_bind_group(3, &self.dummy_depth.1, &[]);
        pass.set_vertex_buffer(0, mesh.vertices.buffer().slice(..));
        pass.set_index_buffer(mesh.indices.buffer().slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..mesh.index_count, 0, 0..1);
    }
}
