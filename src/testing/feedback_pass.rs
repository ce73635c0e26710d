//! A pass that records GPU feedback for chosen slots, for the feedback test and bench: a
//! full-screen triangle over a `side x side` target whose fragment shader (the record a game
//! prepends, then a few lines) records, in each 8x8 block of pixels, the slot
//! `block * stride + offset` (blocks numbered row by row), for a texture of 2048² texels drawn
//! across the target (so its level is `log2(2048 / side)`).

use crate::Result;
use crate::budget::Category;
use crate::feedback::Feedback;
use crate::gpu::{GpuContext, TrackedBuffer, TrackedTexture};

/// See the module.
pub struct RecordPass {
    pipeline: wgpu::RenderPipeline,
    params: TrackedBuffer,
    group: wgpu::BindGroup,
    target: TrackedTexture,
    side: u32,
}

const SHADER: &str = "
struct Choice { stride: u32, offset: u32, blocks: u32, side: f32 };
@group(1) @binding(0) var<uniform> choice: Choice;
@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}
@fragment
fn fs(@builtin(position) frag: vec4<f32>) -> @location(0) vec4<f32> {
    let p = vec2<u32>(frag.xy);
    let slot = ((p.x >> 3u) + (p.y >> 3u) * choice.blocks) * choice.stride + choice.offset;
    let uv = frag.xy / choice.side;
    mipflow_record_feedback(slot, uv, vec2<f32>(2048.0, 2048.0), 0.0, frag, true);
    return vec4<f32>(uv, 0.0, 1.0);
}
";

impl RecordPass {
    /// A pass over a `side x side` target (a multiple of 8) recording into `feedback`.
    pub fn new(ctx: &GpuContext, feedback: &Feedback, side: u32) -> Result<Self> {
        let device = ctx.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("feedback record pass"),
            source: wgpu::ShaderSource::Wgsl(format!("{}\n{SHADER}", Feedback::wgsl(0)).into()),
        });
        let params = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("feedback record pass"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("feedback record pass"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("feedback record pass"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: params.buffer().as_entire_binding(),
            }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("feedback record pass"),
            bind_group_layouts: &[Some(feedback.bind_group_layout()), Some(&layout)],
            immediate_size: 0,
        });
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("feedback record pass"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let target = ctx.create_texture(
            &wgpu::TextureDescriptor {
                label: Some("feedback record pass"),
                size: wgpu::Extent3d {
                    width: side,
                    height: side,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            },
            Category::RenderTargets,
        )?;
        Ok(Self {
            pipeline,
            params,
            group,
            target,
            side,
        })
    }

    /// The 8x8 blocks of the target: the slots one draw records.
    pub fn blocks(&self) -> u32 {
        (self.side / 8) * (self.side / 8)
    }

    /// Records the pass into `encoder`: block `b` records slot `b * stride + offset` (the
    /// choice is written to the queue: it takes effect at the next submit).
    pub fn draw(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        feedback: &Feedback,
        stride: u32,
        offset: u32,
    ) {
        let choice = [stride, offset, self.side / 8, (self.side as f32).to_bits()];
        ctx.queue()
            .write_buffer(self.params.buffer(), 0, bytemuck::cast_slice(&choice));
        let view = self.target.texture().create_view(&Default::default());
        let mut rp = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("feedback record pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
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
        rp.set_pipeline(&self.pipeline);
        rp.set_bind_group(0, feedback.bind_group(), &[]);
        rp.set_bind_group(1, &self.group, &[]);
        rp.draw(0..3, 0..1);
    }
}
