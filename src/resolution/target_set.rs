//! What the render targets are, as pure CPU data: the upscaler choice, the formats, and the
//! descriptor of every target at a scale, and the bytes of the scale buckets priced from them.
//! The pool ([`super::targets`]) allocates from the same descriptors, so the two agree by
//! construction.

use super::buckets::{BucketRange, ScaleBucket, scaled_size};
use crate::budget::planner::BucketCost;

/// How the scaled image is brought to the output size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Upscaler {
    /// Bilinear filtering: one pass, no intermediate.
    #[default]
    Bilinear,
    /// Edge-adaptive upsampling then contrast-adaptive sharpening (FSR 1 class). Below native
    /// scale it needs an Rgba8Unorm intermediate at the output size (4 bytes per output pixel,
    /// charged to the render targets); at native scale there is nothing to upsample, the
    /// sharpening reads the scene colour directly, and the intermediate is not made.
    EasuRcas,
}

/// Format of the HDR scene colour on any device: 8 bytes a pixel. [`TargetSet::renderer`] and
/// [`super::RenderTargets::new`] use it; the [`crate::Renderer`] uses [`hdr_format`].
pub const HDR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// Format of the HDR scene colour where the device can render to it
/// (`Features::RG11B10UFLOAT_RENDERABLE`, which mipflow's own contexts request): packed
/// unsigned floats, 4 bytes a pixel, half of [`HDR_FORMAT`]. Why it is enough: the scene is lit
/// in [0, 1] with no negative values, no pass reads alpha, and its 6-bit (red, green) and 5-bit
/// (blue) mantissas err by at most about a third of an 8-bit step once displayed.
pub const HDR_PACKED_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rg11b10Ufloat;

/// The HDR scene colour format for a device with `features`: [`HDR_PACKED_FORMAT`] where it is
/// renderable, else [`HDR_FORMAT`].
pub fn hdr_format(features: wgpu::Features) -> wgpu::TextureFormat {
    if features.contains(wgpu::Features::RG11B10UFLOAT_RENDERABLE) {
        HDR_PACKED_FORMAT
    } else {
        HDR_FORMAT
    }
}
/// Format of the scene depth (what the Renderer's pass expects).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Format of the EASU output that RCAS reads. 8 bits suffice because it holds display-referred,
/// perceptually encoded colour (tone-mapped and gamma-2 encoded in the EASU pass), and it is half
/// the bytes of a float target at the OUTPUT size, which is the largest target of all.
pub const INTERMEDIATE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// How large a target is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TargetSize {
    /// The scaled size (`output x render scale`, per axis): scene colour, depth, a G-buffer.
    #[default]
    Scaled,
    /// The output size, whatever the scale: an upscaler's output, a UI layer.
    Output,
    /// The output size, and only while the scaled size is smaller than the output (below
    /// native scale): an upscaler's intermediate, not needed when there is nothing to upscale.
    /// At native scale the target is not made ([`super::Targets::view`] is `None`) and costs
    /// nothing, so native scale can cost less than the buckets just below it. The planner
    /// prices every bucket by its targets; the budget manager draws at the largest bucket
    /// within the memory bucket's price and tells the controller
    /// ([`super::ResolutionController::note_made`]).
    OutputWhenScaled,
}

/// One render target of a [`TargetSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TargetSpec {
    /// Its debug label.
    pub label: &'static str,
    /// Its format (any wgpu format with a defined size, depth formats included).
    pub format: wgpu::TextureFormat,
    /// Its usages (`RENDER_ATTACHMENT` is always added).
    pub usage: wgpu::TextureUsages,
    /// MSAA samples (1: none). Each sample is charged.
    pub sample_count: u32,
    /// Scaled or output-sized.
    pub size: TargetSize,
}

impl TargetSpec {
    /// A single-sample target at the scaled size, usable as a render attachment and a texture.
    pub fn scaled(label: &'static str, format: wgpu::TextureFormat) -> Self {
        let usage = if format.is_depth_stencil_format() {
            wgpu::TextureUsages::RENDER_ATTACHMENT
        } else {
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING
        };
        Self {
            label,
            format,
            usage,
            sample_count: 1,
            size: TargetSize::Scaled,
        }
    }

    /// Like [`TargetSpec::scaled`], at the output size.
    pub fn output(label: &'static str, format: wgpu::TextureFormat) -> Self {
        Self {
            size: TargetSize::Output,
            ..Self::scaled(label, format)
        }
    }

    /// Like [`TargetSpec::output`], made only below native scale ([`TargetSize::OutputWhenScaled`]).
    pub fn output_when_scaled(label: &'static str, format: wgpu::TextureFormat) -> Self {
        Self {
            size: TargetSize::OutputWhenScaled,
            ..Self::scaled(label, format)
        }
    }

    /// With these usages (`RENDER_ATTACHMENT` is added).
    pub fn with_usage(mut self, usage: wgpu::TextureUsages) -> Self {
        self.usage = usage | wgpu::TextureUsages::RENDER_ATTACHMENT;
        self
    }

    /// With `n` MSAA samples.
    pub fn with_samples(mut self, n: u32) -> Self {
        self.sample_count = n.max(1);
        self
    }

    /// The descriptor at an output size and a scaled size, or `None` when the target is not
    /// made at that size ([`TargetSize::OutputWhenScaled`] at native scale).
    pub(crate) fn at(&self, output: (u32, u32), scaled: (u32, u32)) -> Option<TargetDesc> {
        let size = match self.size {
            TargetSize::Scaled => scaled,
            TargetSize::Output => output,
            TargetSize::OutputWhenScaled if scaled == output => return None,
            TargetSize::OutputWhenScaled => output,
        };
        Some(TargetDesc {
            label: self.label,
            size,
            format: self.format,
            usage: self.usage | wgpu::TextureUsages::RENDER_ATTACHMENT,
            sample_count: self.sample_count.max(1),
        })
    }
}

/// The key of one target of a [`TargetSet`], as [`TargetSet::add`] returns it (or
/// [`TargetSet::key`] finds it by label): what [`super::Targets::view`] and
/// [`super::Targets::texture`] take. A key is the target's place in its set; it means nothing
/// for another set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetKey(u16);

impl TargetKey {
    /// The target's place in its set (declaration order, from 0).
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// The render targets a renderer declares once: any number, any formats (for example HDR colour,
/// depth and a G-buffer). The manager makes them at the planned scale, charges them to the
/// render targets, prices every scale bucket by them, and reallocates them at bucket changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetSet {
    specs: Vec<TargetSpec>,
    /// Index of the upscaler's intermediate in mipflow's own set.
    intermediate: Option<usize>,
}

impl TargetSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares one more target and returns its key (for [`super::Targets::view`] and
    /// [`super::Targets::texture`] once the manager made the set).
    ///
    /// # Panics
    /// Past 65,536 targets.
    pub fn add(&mut self, spec: TargetSpec) -> TargetKey {
        let key = TargetKey(u16::try_from(self.specs.len()).expect("at most 65,536 targets"));
        self.specs.push(spec);
        key
    }

    /// The set with one more target (a builder; its key is [`TargetSet::key`] of its label, or
    /// the number of targets before it).
    pub fn with(mut self, spec: TargetSpec) -> Self {
        self.add(spec);
        self
    }

    /// The key of the first target labelled `label`.
    pub fn key(&self, label: &str) -> Option<TargetKey> {
        let i = self.specs.iter().position(|s| s.label == label)?;
        u16::try_from(i).ok().map(TargetKey)
    }

    /// The scene colour of the [`crate::Renderer`]'s own set ([`TargetSet::renderer`]).
    pub const RENDERER_COLOR: TargetKey = TargetKey(0);
    /// The scene depth of the [`crate::Renderer`]'s own set ([`TargetSet::renderer`]).
    pub const RENDERER_DEPTH: TargetKey = TargetKey(1);

    /// The targets, in declaration order (a [`TargetKey`]'s index is its place here).
    pub fn specs(&self) -> &[TargetSpec] {
        &self.specs
    }

    /// How many targets there are.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The [`crate::Renderer`]'s own set for an upscaler: HDR colour (index 0, [`HDR_FORMAT`])
    /// and depth (1) at the scaled size, and the upscaler's intermediate (2) at the output size
    /// for [`Upscaler::EasuRcas`], made only below native scale.
    pub fn renderer(upscaler: Upscaler) -> Self {
        Self::renderer_with_hdr(upscaler, HDR_FORMAT)
    }

    /// [`TargetSet::renderer`] with the HDR colour in `hdr` (what [`hdr_format`] gives for the
    /// device: the Renderer's choice).
    pub fn renderer_with_hdr(upscaler: Upscaler, hdr: wgpu::TextureFormat) -> Self {
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let mut set = Self::new()
            // COPY_SRC: screenshots and debug views of the pre-upscale image.
            .with(TargetSpec::scaled("scene hdr colour", hdr).with_usage(
                attach | wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC,
            ))
            .with(
                // TEXTURE_BINDING: the feedback record reads the depth pre-pass's depth.
                TargetSpec::scaled("scene depth", DEPTH_FORMAT)
                    .with_usage(attach | wgpu::TextureUsages::TEXTURE_BINDING),
            );
        if upscaler == Upscaler::EasuRcas {
            set.intermediate = Some(set.len());
            set = set.with(TargetSpec::output_when_scaled(
                "upscale intermediate",
                INTERMEDIATE_FORMAT,
            ));
        }
        set
    }

    /// Index of the upscaler's intermediate (mipflow's own set only).
    pub(crate) fn intermediate(&self) -> Option<usize> {
        self.intermediate
    }

    /// Whether every target for an `output` size at `scale` is at most `max` texels on a side
    /// (the device's `max_texture_dimension_2d`): a bucket that fails it cannot be made.
    pub(crate) fn fits(&self, output: (u32, u32), scale: f32, max: u32) -> bool {
        if output.0 == 0 || output.1 == 0 {
            return true;
        }
        let scaled = scaled_size(output, scale);
        self.specs
            .iter()
            .filter_map(|s| s.at(output, scaled))
            .all(|d| d.size.0 <= max && d.size.1 <= max)
    }

    /// Bytes of every target for an `output` size at `scale` (0 for an empty output): what the
    /// planner is told each bucket costs, and exactly what the pool charges.
    pub fn bytes(&self, output: (u32, u32), scale: f32) -> u64 {
        if output.0 == 0 || output.1 == 0 {
            return 0;
        }
        let scaled = scaled_size(output, scale);
        self.specs
            .iter()
            .filter_map(|s| s.at(output, scaled))
            // A format with no defined size cannot be made (see `TargetSet::problem`): priced
            // at everything, never at nothing.
            .map(|d| crate::budget::size::texture_bytes(&d.desc()).unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add)
    }

    /// Why `device` cannot make this set at any size, if it cannot: a target whose format
    /// has no defined size (a multi-planar video format), is not renderable, or does not take
    /// its sample count (one of 1, 2, 4, 8, 16 that the format allows). The manager refuses
    /// such a set with this reason at every frame rather than price it or fail its creation.
    pub(crate) fn problem(&self, device: &wgpu::Device) -> Option<String> {
        let adapter_specific = device
            .features()
            .contains(wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES);
        self.specs.iter().find_map(|s| {
            let f = s.format;
            if crate::budget::size::block_bytes(f).is_none() || f.is_multi_planar_format() {
                return Some(format!(
                    "target {:?}: {f:?} has no defined size per texel",
                    s.label
                ));
            }
            if !f.required_features().is_empty()
                && !device.features().contains(f.required_features())
            {
                return Some(format!(
                    "target {:?}: {f:?} needs device features {:?}",
                    s.label,
                    f.required_features()
                ));
            }
            let n = s.sample_count;
            if !matches!(n, 1 | 2 | 4 | 8 | 16) {
                return Some(format!(
                    "target {:?}: {n} samples (1, 2, 4, 8 or 16)",
                    s.label
                ));
            }
            // With adapter-specific format features the device may allow more than the
            // guaranteed ones: it says at creation.
            if !adapter_specific {
                let g = f.guaranteed_format_features(device.features());
                if !g
                    .allowed_usages
                    .contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
                {
                    return Some(format!("target {:?}: {f:?} is not renderable", s.label));
                }
                if n > 1 && !g.flags.sample_count_supported(n) {
                    return Some(format!(
                        "target {:?}: {f:?} does not take {n} samples on this device",
                        s.label
                    ));
                }
            }
            None
        })
    }
}

/// One target's descriptor: the pool's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TargetDesc {
    pub label: &'static str,
    pub size: (u32, u32),
    pub format: wgpu::TextureFormat,
    pub usage: wgpu::TextureUsages,
    pub sample_count: u32,
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
            sample_count: self.sample_count,
            dimension: wgpu::TextureDimension::D2,
            format: self.format,
            usage: self.usage,
            view_formats: &[],
        }
    }
}
/// Exact bytes of every render target of [`TargetSet::renderer`] at `scale` for an
/// `output` size, as the ledger will charge them: the HDR colour ([`super::HDR_FORMAT`],
/// Rgba16Float) and depth (Depth32Float) at the scaled size, plus the upscaler's intermediate at
/// the output size when `upscaler` needs one ([`Upscaler::EasuRcas`] below native scale: an
/// Rgba8Unorm image between its two passes). These are the descriptors
/// [`super::RenderTargets::new`] allocates, so the two cannot drift apart. The
/// [`crate::Renderer`] renders its HDR colour in [`super::hdr_format`] of its device (packed, 4
/// bytes a pixel, where renderable): its own figures are [`crate::BudgetManager::scale_buckets`],
/// priced from the set it declared. With an intermediate, native scale costs less than the
/// buckets just below it.
///
/// An empty output (a minimised window) costs 0: no targets are made for it (the pool keeps the
/// previous ones; see [`super::RenderTargets::ensure`]).
pub fn target_bytes(output: (u32, u32), scale: f32, upscaler: Upscaler) -> u64 {
    // The set's own pricing (one source of truth): the descriptors `RenderTargets` allocates.
    TargetSet::renderer(upscaler).bytes(output, scale)
}

/// [`BucketCost`]s (scale and render-target bytes) of every bucket in `range`, ascending, for the
/// planner. Allocates the vector; call it when the output size, the range or the upscaler changes,
/// not every frame (or reuse one with [`fill_scale_buckets`]).
pub fn scale_buckets(
    output: (u32, u32),
    range: BucketRange,
    upscaler: Upscaler,
) -> Vec<BucketCost> {
    let mut v = Vec::with_capacity(range.len());
    fill_scale_buckets(output, range, upscaler, &mut v);
    v
}

/// [`scale_buckets`] into a vector the caller keeps (cleared first; no allocation once it has
/// grown to `range.len()`).
pub fn fill_scale_buckets(
    output: (u32, u32),
    range: BucketRange,
    upscaler: Upscaler,
    out: &mut Vec<BucketCost>,
) {
    out.clear();
    out.extend(range.iter().map(|b| BucketCost {
        scale: b.scale(),
        bytes: target_bytes(output, b.scale(), upscaler),
    }));
}

/// The largest bucket of `range` whose targets fit in `bytes` (render-target bytes the budget
/// leaves), or `range.min()` when none fits: the controller's memory input when no planner is
/// present (tests, the lerp baseline's cross-check). The minimum is returned rather than nothing
/// because rendering must go on; the planner is what guarantees the floor fits.
pub fn largest_fitting(
    output: (u32, u32),
    range: BucketRange,
    upscaler: Upscaler,
    bytes: u64,
) -> ScaleBucket {
    range
        .iter()
        .rev()
        .find(|b| target_bytes(output, b.scale(), upscaler) <= bytes)
        .unwrap_or(range.min())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_follow_the_pixel_count() {
        let out = (320, 240);
        // Rgba16Float (8 B) + Depth32Float (4 B) per scaled pixel.
        assert_eq!(target_bytes(out, 1.0, Upscaler::Bilinear), 320 * 240 * 12);
        assert_eq!(target_bytes(out, 0.5, Upscaler::Bilinear), 160 * 120 * 12);
        // EASU + RCAS adds one Rgba8Unorm image at the output size.
        assert_eq!(
            target_bytes(out, 0.5, Upscaler::EasuRcas),
            160 * 120 * 12 + 320 * 240 * 4
        );
        // ... only below native scale: at 1.0 the sharpening reads the scene colour directly,
        // so native scale costs less than 15/16 and 14/16.
        assert_eq!(target_bytes(out, 1.0, Upscaler::EasuRcas), 320 * 240 * 12);
        assert_eq!(
            target_bytes(out, 0.9375, Upscaler::EasuRcas),
            300 * 225 * 12 + 320 * 240 * 4
        );
        let easu = scale_buckets(out, BucketRange::default(), Upscaler::EasuRcas);
        let dearer: Vec<f32> = easu
            .iter()
            .filter(|b| b.bytes > easu[8].bytes)
            .map(|b| b.scale)
            .collect();
        assert_eq!(dearer, [0.875, 0.9375]);
        assert_eq!(target_bytes((0, 240), 1.0, Upscaler::EasuRcas), 0);
        let b = scale_buckets(out, BucketRange::default(), Upscaler::Bilinear);
        assert_eq!(b.len(), 9);
        assert!(b.windows(2).all(|w| w[0].bytes < w[1].bytes));
        let budget = target_bytes(out, 0.75, Upscaler::Bilinear);
        assert_eq!(
            largest_fitting(out, BucketRange::default(), Upscaler::Bilinear, budget),
            ScaleBucket::from_sixteenths(12)
        );
        assert_eq!(
            largest_fitting(out, BucketRange::default(), Upscaler::Bilinear, 0),
            ScaleBucket::from_sixteenths(8)
        );
    }
}
