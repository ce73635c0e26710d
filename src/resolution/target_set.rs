//! What the render targets are, as pure CPU data: the upscaler choice, the formats, and the
//! descriptor of every target at a scale. The pool ([`super::targets`]) allocates from these and
//! the buckets ([`super::buckets`]) price them, so both agree by construction.

/// How the scaled image is brought to the output size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Upscaler {
    /// Bilinear filtering: one pass, no intermediate.
    #[default]
    Bilinear,
    /// Edge-adaptive upsampling then contrast-adaptive sharpening (FSR 1 class). Needs an
    /// Rgba8Unorm intermediate at the output size (4 bytes per output pixel, charged to the
    /// render targets).
    EasuRcas,
}

/// Format of the HDR scene colour.
pub const HDR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// Format of the scene depth (what [`crate::render::TexturedPass`] expects).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Format of the EASU output that RCAS reads. 8 bits suffice because it holds display-referred,
/// perceptually encoded colour (tone-mapped and gamma-2 encoded in the EASU pass), and it is half
/// the bytes of a float target at the OUTPUT size, which is the largest target of all.
pub const INTERMEDIATE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// One target's descriptor: the pool's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TargetDesc {
    pub label: &'static str,
    pub size: (u32, u32),
    pub format: wgpu::TextureFormat,
    pub usage: wgpu::TextureUsages,
}

impl TargetDesc {
    pub fn desc(&self) -> wgpu::TextureDescriptor<'static> {
        wgpu::TextureDescriptor {
            label: Some(self.label),
            size: wgpu::Extent3d {
                width: self.size.0,
                height: self.size.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.format,
            usage: self.usage,
            view_formats: &[],
        }
    }
}

/// Slots of the pool, in the order of [`target_descriptors`].
pub(crate) const HDR: usize = 0;
pub(crate) const DEPTH: usize = 1;
pub(crate) const INTERMEDIATE: usize = 2;
pub(crate) const SLOTS: usize = 3;

/// The descriptors of every target for an `output` size rendered at `scaled` size with
/// `upscaler`. The single source of truth for both allocation and [`super::target_bytes`].
pub(crate) fn target_descriptors(
    output: (u32, u32),
    scaled: (u32, u32),
    upscaler: Upscaler,
) -> [Option<TargetDesc>; SLOTS] {
    let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
    [
        Some(TargetDesc {
            label: "scene hdr colour",
            size: scaled,
            format: HDR_FORMAT,
            // COPY_SRC: screenshots and debug views of the pre-upscale image.
            usage: attach | wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC,
        }),
        Some(TargetDesc {
            label: "scene depth",
            size: scaled,
            format: DEPTH_FORMAT,
            usage: attach,
        }),
        match upscaler {
            Upscaler::Bilinear => None,
            Upscaler::EasuRcas => Some(TargetDesc {
                label: "upscale intermediate",
                size: output,
                format: INTERMEDIATE_FORMAT,
                usage: attach | wgpu::TextureUsages::TEXTURE_BINDING,
            }),
        },
    ]
}
