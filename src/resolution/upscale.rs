//! The upscale pass: from the scaled HDR scene colour to the caller's output view, at the output
//! size, with the display transform.
//!
//! - [`Upscaler::Bilinear`](super::Upscaler::Bilinear): one pass (`shaders/upscale_bilinear.wgsl`): hardware bilinear in
//!   linear HDR, then the tone map.
//! - [`Upscaler::EasuRcas`](super::Upscaler::EasuRcas): two passes, FSR 1-class, written for mipflow: an edge-adaptive
//!   upsampling (`shaders/fsr_easu.wgsl`, a 12-tap Lanczos-like kernel stretched along the local
//!   edge found by a structure tensor) into an Rgba8Unorm intermediate at the output size, then a
//!   contrast-adaptive sharpening (`shaders/fsr_rcas.wgsl`) into the output view. At native
//!   scale (the scaled size is the output size) there is nothing to upsample: one pass sharpens
//!   the scene colour directly (`fs_rcas_native`, EASU's display transform applied to each tap),
//!   and the targets have no intermediate, so native scale costs 4 bytes an output pixel less.
//!
//! **Display transform**: [`ToneMap::Clamp`] by default: the HDR colour times
//! [`UpscaleConfig::exposure`] is clamped to [0, 1]. Why clamp and not a curve: mipflow's
//! material pass is lit in [0, 1] (albedo times at most 1), so a curve would only darken and
//! desaturate every image; [`ToneMap::Reinhard`] (on luminance) is there for scenes that do
//! produce highlights. The output is then written linear to an sRGB or float view (the hardware
//! encodes), and sRGB-encoded by the shader to a non-sRGB 8-bit view (a `Bgra8Unorm` surface),
//! so that every output format shows the same image.
//!
//! The overlay is drawn after this pass, into the same view, at native resolution.

use bytemuck::{Pod, Zeroable};

use super::target_set::INTERMEDIATE_FORMAT;
use super::targets::Targets;
use crate::budget::Category;
use crate::gpu::{GpuContext, TrackedBuffer};
use crate::{Error, Result, shaders};

/// The HDR-to-display transform.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToneMap {
    /// Clamp to [0, 1] (see the module docs for why this is the default).
    #[default]
    Clamp,
    /// `x / (1 + luminance)`: compresses highlights, keeps the hue.
    Reinhard,
}

/// Per-frame settings of the pass.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct UpscaleConfig {
    /// Multiplier on the HDR colour before the tone map (default 1; not finite counts as 1).
    pub exposure: f32,
    /// The tone map (default [`ToneMap::Clamp`]).
    pub tone_map: ToneMap,
    /// Sharpening of [`Upscaler::EasuRcas`](super::Upscaler::EasuRcas) in [0, 1] (default 0.5): the most the unsharp mask may
    /// add, as a multiple of the pixel's difference from its neighbours; the contrast limit then
    /// lowers it wherever more would overshoot. 0.5 is where the upscale-from-0.75 test scene's
    /// PSNR against the native render peaks on lavapipe (0.25 and 1.0 both score lower).
    pub sharpness: f32,
}

impl Default for UpscaleConfig {
    fn default() -> Self {
        Self {
            exposure: 1.0,
            tone_map: ToneMap::Clamp,
            sharpness: 0.5,
        }
    }
}

/// The uniform block every upscale shader reads (same layout in the three WGSL files).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct Params {
    src_size: [f32; 2],
    out_size: [f32; 2],
    exposure: f32,
    tone_map: u32,
    encode_srgb: u32,
    sharpness: f32,
}

/// Bind groups made for one set of targets.
#[derive(Debug)]
struct Bound {
    generation: u64,
    source: wgpu::BindGroup,
    rcas: Option<wgpu::BindGroup>,
}

/// The upscale pass for one output format. See the module docs.
#[derive(Debug)]
pub struct UpscalePass {
    output_format: wgpu::TextureFormat,
    source_layout: wgpu::BindGroupLayout,
    rcas_layout: wgpu::BindGroupLayout,
    bilinear: wgpu::RenderPipeline,
    easu: wgpu::RenderPipeline,
    rcas: wgpu::RenderPipeline,
    /// RCAS from the scene colour, at native scale.
    rcas_native: wgpu::RenderPipeline,
    sampler: wgpu::Sampler,
    uniforms: TrackedBuffer,
    written: Option<Params>,
    bound: Option<Bound>,
}

impl UpscalePass {
    /// Builds the pipelines for views of `output_format` (a surface's format, or any colour
    /// format the caller renders to). The uniform buffer is charged to `Buffers`.
    ///
    /// # Errors
    /// When a shader or pipeline fails validation (caught in an error scope, so it is a typed
    /// error rather than an uncaptured one), or the uniform buffer cannot be created.
    pub fn new(ctx: &GpuContext, output_format: wgpu::TextureFormat) -> Result<Self> {
        let device = ctx.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let uniform_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: wgpu::BufferSize::new(std::mem::size_of::<Params>() as u64),
            },
            count: None,
        };
        let texture_entry = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        };
        let source_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("upscale source"),
            entries: &[
                uniform_entry,
                texture_entry(1),
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let rcas_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("upscale rcas"),
            entries: &[uniform_entry, texture_entry(1)],
        });
        let pipeline = |name: &str,
                        source: &str,
                        entry: &str,
                        layout: &wgpu::BindGroupLayout,
                        format: wgpu::TextureFormat| {
            let module = shaders::create_module(device, name, source);
            let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(name),
                bind_group_layouts: &[Some(layout)],
                immediate_size: 0,
            });
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(name),
                layout: Some(&pl),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_fullscreen"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let bilinear = pipeline(
            "upscale_bilinear.wgsl",
            shaders::UPSCALE_BILINEAR,
            "fs_bilinear",
            &source_layout,
            output_format,
        );
        let easu = pipeline(
            "fsr_easu.wgsl",
            shaders::FSR_EASU,
            "fs_easu",
            &source_layout,
            INTERMEDIATE_FORMAT,
        );
        let rcas = pipeline(
            "fsr_rcas.wgsl",
            shaders::FSR_RCAS,
            "fs_rcas",
            &rcas_layout,
            output_format,
        );
        let rcas_native = pipeline(
            "fsr_rcas.wgsl",
            shaders::FSR_RCAS,
            "fs_rcas_native",
            &rcas_layout,
            output_format,
        );
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("upscale bilinear"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Validation {
                context: format!("building the upscale pipelines for {output_format:?}"),
                message: e.to_string(),
            });
        }
        let uniforms = ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("upscale params"),
                size: std::mem::size_of::<Params>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )?;
        Ok(Self {
            output_format,
            source_layout,
            rcas_layout,
            bilinear,
            easu,
            rcas,
            rcas_native,
            sampler,
            uniforms,
            written: None,
            bound: None,
        })
    }

    /// The output format the pipelines were built for.
    pub fn output_format(&self) -> wgpu::TextureFormat {
        self.output_format
    }

    /// Records the upscale of `targets`' HDR colour into `output` (a view of mip 0 of a texture
    /// of `targets.output_size()`, in the format given to [`UpscalePass::new`]) with the
    /// upscaler the targets were made for. The output is overwritten entirely (no load).
    ///
    /// `timestamps`, when given, is applied to the first pass (its begin index) and the last pass
    /// (its end index), so a [`super::GpuTimer`] can time the upscale alone or end a frame here.
    ///
    /// Per frame it allocates nothing: bind groups are cached per targets generation and the
    /// uniforms are written only when they change.
    ///
    /// One upscale per submit for each pass: its parameters (sizes, exposure, sharpness) live in
    /// one uniform buffer written through the queue, which every pass recorded before the
    /// submit reads as last written. Views upscaled in the same submit (split screen, a mirror)
    /// each need their own `UpscalePass`.
    ///
    /// # Errors
    /// When the output view's texture is not the size the targets were made for or cannot be
    /// rendered to (multisampled, no `RENDER_ATTACHMENT`), or the targets have no target 0
    /// made at this scale (an empty declared set: the upscale reads target 0 as the scene
    /// colour) or one the upscale cannot sample (multisampled, no `TEXTURE_BINDING`, a depth or
    /// integer format).
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        targets: &Targets,
        output: &wgpu::TextureView,
        settings: &UpscaleConfig,
        timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) -> Result<()> {
        let Some(source) = targets
            .texture(super::TargetSet::RENDERER_COLOR)
            .map(|t| t.texture())
        else {
            return Err(Error::InvalidResource {
                label: "upscale source".into(),
                reason: "the render targets have no target 0 (the scene colour the upscale \
                         reads) at this scale"
                    .into(),
            });
        };
        // The upscale samples target 0 with a filtering sampler: a declared set whose target
        // 0 cannot be (multisampled, not sampled, a depth or integer format) is refused here,
        // not by the device's panic when the bind group is made.
        let filterable = matches!(
            source
                .format()
                .sample_type(None, Some(ctx.device().features())),
            Some(wgpu::TextureSampleType::Float { filterable: true })
        );
        if source.sample_count() != 1
            || !source
                .usage()
                .contains(wgpu::TextureUsages::TEXTURE_BINDING)
            || !filterable
        {
            return Err(Error::InvalidResource {
                label: "upscale source".into(),
                reason: format!(
                    "target 0 ({:?}, {} samples, usage {:?}) is not a single-sampled, \
                     filterable colour target with TEXTURE_BINDING: the upscale samples it",
                    source.format(),
                    source.sample_count(),
                    source.usage()
                ),
            });
        }
        let out_tex = output.texture();
        if out_tex.sample_count() != 1
            || !out_tex
                .usage()
                .contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
        {
            return Err(Error::InvalidResource {
                label: "upscale output".into(),
                reason: format!(
                    "the output ({} samples, usage {:?}) is not a single-sampled texture \
                     with RENDER_ATTACHMENT",
                    out_tex.sample_count(),
                    out_tex.usage()
                ),
            });
        }
        let (ow, oh) = targets.output_size();
        if (out_tex.width(), out_tex.height()) != (ow, oh) {
            return Err(Error::InvalidResource {
                label: "upscale output".into(),
                reason: format!(
                    "the output view is {}x{}, the render targets were made for {ow}x{oh}",
                    out_tex.width(),
                    out_tex.height()
                ),
            });
        }
        let (sw, sh) = targets.size();
        let params = Params {
            src_size: [sw as f32, sh as f32],
            out_size: [ow as f32, oh as f32],
            exposure: if settings.exposure.is_finite() {
                settings.exposure.max(0.0)
            } else {
                1.0
            },
            tone_map: match settings.tone_map {
                ToneMap::Clamp => 0,
                ToneMap::Reinhard => 1,
            },
            // Only 8/10-bit UNORM outputs store display-encoded values; sRGB views encode in
            // hardware, and float views are linear.
            encode_srgb: u32::from(matches!(
                self.output_format,
                wgpu::TextureFormat::Rgba8Unorm
                    | wgpu::TextureFormat::Bgra8Unorm
                    | wgpu::TextureFormat::Rgb10a2Unorm
            )),
            sharpness: if settings.sharpness.is_finite() {
                settings.sharpness.clamp(0.0, 1.0)
            } else {
                0.5
            },
        };
        if self.written != Some(params) {
            ctx.queue()
                .write_buffer(self.uniforms.buffer(), 0, bytemuck::bytes_of(&params));
            self.written = Some(params);
        }
        if self
            .bound
            .as_ref()
            .is_none_or(|b| b.generation != targets.generation())
        {
            self.bound = Some(self.bind(ctx, targets));
        }
        let Some(bound) = self.bound.as_ref() else {
            return Ok(());
        };

        let (first_ts, last_ts) = split_timestamps(timestamps);
        let native = targets.size() == targets.output_size();
        match (targets.intermediate_view(), bound.rcas.as_ref()) {
            (None, Some(rcas_group)) if native => {
                // EASU + RCAS at native scale: the sharpening alone, from the scene colour.
                let both = merge(first_ts, last_ts);
                let mut rp = begin(encoder, "upscale rcas native", output, both);
                rp.set_pipeline(&self.rcas_native);
                rp.set_bind_group(0, rcas_group, &[]);
                rp.draw(0..3, 0..1);
            }
            (Some(mid), Some(rcas_group)) => {
                let mut rp = begin(encoder, "upscale easu", mid, first_ts);
                rp.set_pipeline(&self.easu);
                rp.set_bind_group(0, &bound.source, &[]);
                rp.draw(0..3, 0..1);
                drop(rp);
                let mut rp = begin(encoder, "upscale rcas", output, last_ts);
                rp.set_pipeline(&self.rcas);
                rp.set_bind_group(0, rcas_group, &[]);
                rp.draw(0..3, 0..1);
            }
            _ => {
                let both = merge(first_ts, last_ts);
                let mut rp = begin(encoder, "upscale bilinear", output, both);
                rp.set_pipeline(&self.bilinear);
                rp.set_bind_group(0, &bound.source, &[]);
                rp.draw(0..3, 0..1);
            }
        }
        Ok(())
    }

    fn bind(&self, ctx: &GpuContext, targets: &Targets) -> Bound {
        let device = ctx.device();
        let source = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("upscale source"),
            layout: &self.source_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.uniforms.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(targets.hdr_view()),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        });
        // RCAS reads the intermediate, or at native scale the scene colour.
        let rcas_source = match targets.upscaler() {
            super::Upscaler::EasuRcas => targets
                .intermediate_view()
                .or((targets.size() == targets.output_size()).then(|| targets.hdr_view())),
            super::Upscaler::Bilinear => None,
        };
        let rcas = rcas_source.map(|mid| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("upscale rcas"),
                layout: &self.rcas_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.uniforms.buffer().as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(mid),
                    },
                ],
            })
        });
        Bound {
            generation: targets.generation(),
            source,
            rcas,
        }
    }
}

type Ts<'a> = Option<wgpu::RenderPassTimestampWrites<'a>>;

/// The caller's writes split into (begin only, end only), for a frame of two passes.
fn split_timestamps(ts: Ts<'_>) -> (Ts<'_>, Ts<'_>) {
    match ts {
        None => (None, None),
        Some(t) => (
            Some(wgpu::RenderPassTimestampWrites {
                query_set: t.query_set,
                beginning_of_pass_write_index: t.beginning_of_pass_write_index,
                end_of_pass_write_index: None,
            }),
            Some(wgpu::RenderPassTimestampWrites {
                query_set: t.query_set,
                beginning_of_pass_write_index: None,
                end_of_pass_write_index: t.end_of_pass_write_index,
            }),
        ),
    }
}

/// The two halves back together, for a frame of one pass.
fn merge<'a>(first: Ts<'a>, last: Ts<'a>) -> Ts<'a> {
    match (first, last) {
        (Some(f), Some(l)) => Some(wgpu::RenderPassTimestampWrites {
            query_set: f.query_set,
            beginning_of_pass_write_index: f.beginning_of_pass_write_index,
            end_of_pass_write_index: l.end_of_pass_write_index,
        }),
        (f, l) => f.or(l),
    }
}

fn begin<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    view: &wgpu::TextureView,
    timestamps: Ts<'_>,
) -> wgpu::RenderPass<'e> {
    // A writes-nothing pass would be an error; drop empty timestamp writes.
    let timestamps = timestamps.filter(|t| {
        t.beginning_of_pass_write_index.is_some() || t.end_of_pass_write_index.is_some()
    });
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                // Every pixel is written by the fullscreen triangle: no need to load or clear.
                load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: timestamps,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
