//! # mipflow-cook
//!
//! Cooking images into BC7 KTX2 files for [mipflow](https://docs.rs/mipflow): decode, linear-light
//! mips, BC7, KTX2 (optionally Zstandard). A crate of its own so that a game that only streams
//! compiles no encoder (intel_tex_2 is C++).
//!
//! - [`cook_image`] turns an image into an [`EncodedTexture`] in memory (full mip chain, BC7);
//!   [`mipflow::ktx2::write_ktx2`] writes it. `mipflow cook` (the CLI) adds folders, parallelism,
//!   progress, incremental skipping and atomic writes.
//! - [`procedural`]: the demo's procedural textures (every level drawn on its own) and a test
//!   pattern; [`compare`]: PSNR, SSIM and reference-image checks; [`decode_bc7`]: a CPU decoder.
//! - [`mips`] documents the filter and the alpha and normal-map handling; [`encoder`] the BC7
//!   encoder choice.
//!
//! **Memory.** Level 0 is encoded from the decoded RGBA8 image itself; level 1 is filtered from it
//! straight into an `f32` plane (3 to 5 channels) and the RGBA8 image is dropped; every further level
//! is filtered from the previous plane, which is dropped once its successor exists. The BC7 levels
//! (1.33 bytes per input texel in all) stay in memory until the file is written. For an 8192x8192
//! RGBA input the peak is about 256 MiB (RGBA8) + 256 to 320 MiB (level 1 plane) + 85 MiB (BC7),
//! whatever the number of levels.

#![warn(missing_docs)]

mod color;
pub mod compare;
pub mod encoder;
mod gpu;
mod hdr;
mod metrics;
pub mod mips;
pub mod procedural;

use std::path::PathBuf;

pub use color::{linear_to_srgb, linear_to_srgb8, srgb_to_linear, unorm8};
pub use compare::psnr_rgb;
pub use encoder::{
    BlockEncoder, IntelBc7, IntelBlock, encode_level, encoder_for, encoder_for_options,
};
pub use gpu::{GpuEncoders, GpuMode};
pub use hdr::cook_hdr;
pub use metrics::{decode_bc6h, decode_bc7, decode_blocks};
pub use mipflow::ktx2::EncodedTexture;
pub use mips::MipFilter;

use mipflow::ktx2::{full_level_count, level_dims};
use mips::{MipMode, Rgba8Source, downsample};

/// Largest accepted image side (the common `max_texture_dimension_2d`, and the reader's default).
pub const MAX_COOK_DIMENSION: u32 = 16384;
/// Working memory of a cook per pixel of level 0, bytes: the decoded RGBA8, the linear-light
/// float mips and the encoded levels together (measured: a 16384² image peaks at 2.6 GB).
pub const COOK_BYTES_PER_PIXEL: u64 = 10;
/// [`COOK_BYTES_PER_PIXEL`] for an HDR input (OpenEXR, Radiance HDR), decoded and filtered in
/// floats: the decoded RGBA floats (16 bytes) while their RGB copy (12) is made, then that copy
/// and the cook's clean plane (12) with its first mip.
pub const COOK_HDR_BYTES_PER_PIXEL: u64 = 32;

/// What went wrong cooking one image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CookError {
    /// An input could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The input.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The image crate could not decode the input (corrupt, or an unsupported variant).
    #[error("cannot decode the image: {0}")]
    Decode(#[source] image::ImageError),
    /// The decoder stopped at the cook's limits (its message alone, "Image size exceeds limit",
    /// named neither).
    #[error(
        "the image passes the decoder's limits: each side at most {max_side}, at most {} MiB \
         decoded (--max-memory)",
        max_memory / (1 << 20)
    )]
    DecodeLimits {
        /// The largest side.
        max_side: u32,
        /// The most bytes a decode may allocate.
        max_memory: u64,
    },
    /// The file cannot hold the image its header describes (cut short, or a header that
    /// claims more than the data): refused rather than cooked with filler.
    #[error("the image is damaged: {0}")]
    Damaged(String),
    /// A file given on the command line is not a supported image type.
    #[error("{path}: not a .png, .jpg, .jpeg, .tga, .bmp, .exr or .hdr file")]
    UnsupportedInput {
        /// The input.
        path: PathBuf,
    },
    /// A folder given as input holds no image of a supported type (searched recursively).
    #[error("{path}: no .png, .jpg, .jpeg, .tga, .bmp, .exr or .hdr file in this folder")]
    NoImages {
        /// The folder.
        path: PathBuf,
    },
    /// The image is empty or larger than [`MAX_COOK_DIMENSION`].
    #[error("image is {width}x{height}; each side must be between 1 and {max}")]
    BadSize {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// The limit.
        max: u32,
    },
    /// Cooking the image would take more memory than allowed (checked from its header, before
    /// it is decoded).
    #[error(
        "image is {width}x{height}: cooking it needs about {} MiB, over the {} MiB allowed \
         (--max-memory)",
        needed.div_ceil(1 << 20),
        limit / (1 << 20)
    )]
    TooLarge {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// Estimated working memory, bytes.
        needed: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// A buffer for this image could not be allocated (the process's memory limit, or the
    /// machine's): this input fails, the others cook.
    #[error(
        "out of memory: {what} needs {} MiB that could not be allocated (lower --max-memory or \
         --threads, or cook this image alone)",
        bytes.div_ceil(1 << 20)
    )]
    OutOfMemory {
        /// What the buffer was for.
        what: &'static str,
        /// Its size, bytes.
        bytes: u64,
    },
    /// The block encoder refused its input (an internal error), or [`cook_hdr`] was asked for a
    /// format other than BC6H.
    #[error("block encoding failed: {0}")]
    Encode(String),
    /// The GPU encoder could not run (`--gpu on` without an adapter, a device lost).
    #[error("GPU encoder: {0}")]
    Gpu(String),
    /// Several inputs would be written to the same output file.
    #[error(
        "{output} would be written by several inputs ({}): rename one, or cook them into \
         different --out folders",
        path_list(inputs)
    )]
    OutputCollision {
        /// The output file.
        output: PathBuf,
        /// The inputs mapping to it.
        inputs: Vec<PathBuf>,
    },
    /// Writing an output failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The output (or its folder).
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A failure while cooking a given input.
    #[error("{}", input_message(path, source))]
    Input {
        /// The input.
        path: PathBuf,
        /// What went wrong.
        source: Box<CookError>,
    },
}

/// Paths for a message: `a.png, b/a.png`.
fn path_list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// [`CookError::Input`]'s message: `<input>: <what went wrong>`, without naming the input twice
/// when the inner error names it already.
fn input_message(path: &std::path::Path, source: &CookError) -> String {
    match source {
        CookError::Read { path: p, .. }
        | CookError::UnsupportedInput { path: p }
        | CookError::NoImages { path: p }
            if p == path =>
        {
            source.to_string()
        }
        _ => format!("{}: {source}", path.display()),
    }
}

/// BC7 encoder effort (see [`IntelBc7`] for the profiles behind each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Quality {
    /// Quick previews.
    Fast,
    /// The best quality per second.
    #[default]
    Default,
    /// Final assets.
    Slow,
}

impl Quality {
    /// The ISPC kernels' profile each quality uses (the CPU's intel_tex_2 and the GPU's
    /// block_compression share them), as the encoders' names record it.
    pub fn profile(self) -> &'static str {
        match self {
            Quality::Fast => "very_fast",
            Quality::Default => "fast",
            Quality::Slow => "basic",
        }
    }
}

/// The block format a cook writes (`mipflow cook --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// RGBA, 16 bytes a block: the best quality (the default for colour).
    #[default]
    Bc7,
    /// RGB, opaque, 8 bytes a block: half of BC7's bytes, lower quality. The encoder writes no
    /// punch-through alpha: an image with transparent texels is cooked opaque (with a warning).
    Bc1,
    /// RGBA with a separate alpha block, 16 bytes a block.
    Bc3,
    /// One channel (the image's red), 8 bytes a block: masks, roughness, heights.
    Bc4,
    /// Two channels (red and green), 16 bytes a block: tangent-space normal maps (the default
    /// with `--normal-map`; the shader rebuilds z).
    Bc5,
    /// HDR RGB (unsigned half floats), 16 bytes a block: skies, light maps. From 8-bit inputs the
    /// values are the image's linear light (0 to 1).
    Bc6h,
}

/// What the mip filter reads past an image's edges (`mipflow cook --wrap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Wrap {
    /// The edge texels repeat: an image that does not tile (the default).
    #[default]
    Clamp,
    /// The other side of the image: a tiling texture, whose mips then tile without a seam.
    Repeat,
}

/// How the image's RGB values are to be interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ColorSpace {
    /// sRGB-encoded colour: filtered in linear light, stored as `Bc7RgbaUnormSrgb`.
    #[default]
    Srgb,
    /// Linear values (or non-colour data): filtered as they are, stored as `Bc7RgbaUnorm`.
    Linear,
}

/// How the cook sizes an image before making its mips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Resize {
    /// The image's own size. A BC7 texture can only start at levels whose sides are multiples of
    /// 4 (wgpu refuses others): 451x300 cannot go on the GPU at all, 960x540 only whole.
    #[default]
    Keep,
    /// Resampled (in linear light, Kaiser) to the nearest size whose levels down to 32 texels all
    /// have sides that are multiples of 4, so that it streams level by level: sides become
    /// multiples of `4 << k`, `k` the levels down to 32 (960x540 -> 1024x512, 451x300 -> 448x320),
    /// with `4 << k` at most the smaller side (a thin strip keeps a larger floor instead).
    /// Textures are UV-mapped: the image on screen keeps its shape. Sizes that stream already
    /// are kept.
    Stream,
    /// Resampled to the nearest powers of two (every level streams).
    Pow2,
}

impl Resize {
    /// The size an image of `width x height` is cooked at.
    pub fn dims(self, width: u32, height: u32) -> (u32, u32) {
        match self {
            Resize::Keep => (width, height),
            Resize::Stream => {
                // Levels until the larger side is at most 32: the default streaming floor.
                let mut k = 0;
                while (width.max(height) >> k) > 32 {
                    k += 1;
                }
                // ...but the unit never above the smaller side: a thin strip (8192x3) is not
                // blown up to stream its last levels; its floor stays larger instead.
                while k > 0 && (4u32 << k) > width.min(height) {
                    k -= 1;
                }
                let unit = 4u32 << k;
                let round = |v: u32| {
                    let n = ((f64::from(v) / f64::from(unit)).round() as u32).max(1);
                    n.saturating_mul(unit).min(MAX_COOK_DIMENSION / unit * unit)
                };
                (round(width), round(height))
            }
            Resize::Pow2 => {
                let round = |v: u32| {
                    // An empty side rounds to 1 (the cook then refuses the empty source).
                    let v = v.max(1);
                    let lo = 1u32 << (31 - v.leading_zeros());
                    let hi = lo.saturating_mul(2);
                    let p = if v - lo <= hi.saturating_sub(v) {
                        lo
                    } else {
                        hi
                    };
                    p.min(MAX_COOK_DIMENSION)
                };
                (round(width), round(height))
            }
        }
    }
}

/// How to cook an image. `Default` is default quality, sRGB colour, no Zstandard, the image's own
/// size.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CookOptions {
    /// BC7 encoder effort.
    pub quality: Quality,
    /// Interpretation of RGB; ignored (linear) for normal maps.
    pub color: ColorSpace,
    /// Tangent-space normal map: filtered as vectors and renormalised, stored as `Bc7RgbaUnorm`.
    pub normal_map: bool,
    /// Zstandard level for supercompression of each level (applied when writing).
    pub zstd: Option<i32>,
    /// The mip filter (not on the command line; Kaiser by default).
    pub filter: MipFilter,
    /// The size the image is cooked at (default: its own).
    pub resize: Resize,
    /// The block format (`None`: BC7, or BC5 for a normal map).
    pub block: Option<BlockKind>,
    /// What the mip filter reads past the edges.
    pub wrap: Wrap,
    /// Store the levels larger than this many texels tile by tile (applied when writing; see
    /// `mipflow::ktx2::TileLayout`): `None` stores them level by level.
    pub tiles: Option<u32>,
}

impl CookOptions {
    /// The block format these options produce.
    pub fn block_kind(&self) -> BlockKind {
        self.block.unwrap_or(if self.normal_map {
            BlockKind::Bc5
        } else {
            BlockKind::Bc7
        })
    }

    /// The texture format these options produce.
    pub fn format(&self) -> wgpu::TextureFormat {
        use wgpu::TextureFormat as F;
        let srgb = !(self.normal_map || self.color == ColorSpace::Linear);
        match (self.block_kind(), srgb) {
            (BlockKind::Bc7, false) => F::Bc7RgbaUnorm,
            (BlockKind::Bc7, true) => F::Bc7RgbaUnormSrgb,
            (BlockKind::Bc1, false) => F::Bc1RgbaUnorm,
            (BlockKind::Bc1, true) => F::Bc1RgbaUnormSrgb,
            (BlockKind::Bc3, false) => F::Bc3RgbaUnorm,
            (BlockKind::Bc3, true) => F::Bc3RgbaUnormSrgb,
            (BlockKind::Bc4, _) => F::Bc4RUnorm,
            (BlockKind::Bc5, _) => F::Bc5RgUnorm,
            (BlockKind::Bc6h, _) => F::Bc6hRgbUfloat,
        }
    }

    /// Whether the mips are filtered in linear light from sRGB-encoded 8-bit values: colour
    /// stored as sRGB, and BC6H from an sRGB image (whose encoder then decodes to linear).
    pub(crate) fn mips_in_linear_light(&self) -> bool {
        match self.block_kind() {
            BlockKind::Bc6h => !self.normal_map && self.color == ColorSpace::Srgb,
            _ => self.format().is_srgb(),
        }
    }
}

/// A zeroed buffer of `len` values, or [`CookError::OutOfMemory`] when it cannot be allocated:
/// every large buffer of a cook goes through this, so that an allocation failure is the input's
/// error, not an abort of the whole batch.
pub(crate) fn try_zeroed<T: Copy + Default>(
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, CookError> {
    let mut v = Vec::new();
    let oom = || CookError::OutOfMemory {
        what,
        bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    };
    v.try_reserve_exact(len).map_err(|_| oom())?;
    v.resize(len, T::default());
    Ok(v)
}

/// Whether `bytes` more could be allocated now (a probe, freed at once): checked before a
/// conversion whose allocation this crate does not control (the image crate's).
pub fn probe_alloc(bytes: u64, what: &'static str) -> Result<(), CookError> {
    let len = usize::try_from(bytes).map_err(|_| CookError::OutOfMemory { what, bytes })?;
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| CookError::OutOfMemory { what, bytes })
}

/// Cooks `img` into a block-compressed texture (BC7 unless `opts.block` says otherwise) with a full mip chain down to 1x1, in memory (see the module
/// documentation for the filter, alpha and memory behaviour). The encoder is [`encoder_for`]
/// `opts.quality`; `opts.zstd` is not applied here but by [`crate::ktx2::write_ktx2`].
pub fn cook_image(
    img: &image::DynamicImage,
    opts: &CookOptions,
) -> Result<EncodedTexture, CookError> {
    let encoder = encoder_for_options(opts);
    probe_alloc(
        u64::from(img.width()) * u64::from(img.height()) * 4,
        "the image as RGBA8",
    )?;
    cook_rgba8(img.to_rgba8(), opts, encoder.as_ref())
}

/// The size an image of `source_w x source_h` is cooked at with `opts` (its resize), or the
/// error for a size out of range.
pub(crate) fn cook_dims(
    opts: &CookOptions,
    source_w: u32,
    source_h: u32,
) -> Result<(u32, u32), CookError> {
    // An empty image (a header that says 0x0) has nothing to cook, whatever the resize.
    if source_w == 0 || source_h == 0 {
        return Err(CookError::BadSize {
            width: source_w,
            height: source_h,
            max: MAX_COOK_DIMENSION,
        });
    }
    let (width, height) = opts.resize.dims(source_w, source_h);
    if width == 0 || height == 0 || width > MAX_COOK_DIMENSION || height > MAX_COOK_DIMENSION {
        return Err(CookError::BadSize {
            width,
            height,
            max: MAX_COOK_DIMENSION,
        });
    }
    Ok((width, height))
}

/// Like [`cook_image`], taking the RGBA8 image by value (so it can be dropped after level 1 is made)
/// and an explicit encoder.
pub fn cook_rgba8(
    mut img: image::RgbaImage,
    opts: &CookOptions,
    encoder: &dyn BlockEncoder,
) -> Result<EncodedTexture, CookError> {
    use rayon::prelude::*;
    let (source_w, source_h) = img.dimensions();
    let (width, height) = cook_dims(opts, source_w, source_h)?;
    let alpha = img
        .as_raw()
        .par_chunks(4 * 4096)
        .any(|c| c.chunks_exact(4).any(|p| p[3] != 255));
    if alpha && opts.block_kind() == BlockKind::Bc1 {
        // The BC1 encoder (intel_tex_2's) writes opaque blocks only: said, not silent.
        tracing::warn!(
            "BC1 is cooked opaque: this image's transparent texels come out opaque \
             (--format bc7 or bc3 keep its alpha)"
        );
    }
    let srgb = opts.mips_in_linear_light();
    let mode = match (opts.normal_map, alpha) {
        (true, alpha) => MipMode::Normal { alpha },
        (false, true) => MipMode::Alpha { srgb },
        (false, false) => MipMode::Opaque { srgb },
    };
    if (width, height) != (source_w, source_h) {
        let source = Rgba8Source {
            rgba: img.as_raw(),
            width: source_w as usize,
            height: source_h as usize,
            mode,
        };
        let plane = downsample(
            &source,
            width as usize,
            height as usize,
            opts.filter,
            opts.wrap == Wrap::Repeat,
        )?;
        img = image::RgbaImage::from_raw(width, height, plane.to_rgba8()?)
            .unwrap_or_else(|| unreachable!("a plane of {width}x{height} has that many texels"));
    }
    let count = full_level_count(width, height) as usize;
    let mut levels = Vec::with_capacity(count);
    levels.push(encode_level(encoder, img.as_raw(), width, height, alpha)?);
    if count > 1 {
        let (w1, h1) = level_dims(width, height, 1);
        let source = Rgba8Source {
            rgba: img.as_raw(),
            width: width as usize,
            height: height as usize,
            mode,
        };
        let mut plane = downsample(
            &source,
            w1 as usize,
            h1 as usize,
            opts.filter,
            opts.wrap == Wrap::Repeat,
        )?;
        drop(img);
        for level in 1..count {
            let rgba = plane.to_rgba8()?;
            levels.push(encode_level(
                encoder,
                &rgba,
                plane.width as u32,
                plane.height as u32,
                alpha,
            )?);
            drop(rgba);
            if level + 1 < count {
                let (w, h) = level_dims(width, height, level + 1);
                plane = downsample(
                    &plane,
                    w as usize,
                    h as usize,
                    opts.filter,
                    opts.wrap == Wrap::Repeat,
                )?;
            }
        }
    }
    Ok(EncodedTexture {
        format: opts.format(),
        width,
        height,
        levels,
        key_values: source_size_keys((source_w, source_h), (width, height)),
    })
}

/// The key/value data of a texture cooked at `cooked` from an image of `source`: the image's own
/// size under `mipflowSourceSize` when the cook resized it (tools and `mipflow inspect` show it),
/// nothing otherwise.
pub(crate) fn source_size_keys(source: (u32, u32), cooked: (u32, u32)) -> Vec<(String, Vec<u8>)> {
    if source == cooked {
        return Vec::new();
    }
    let (w, h) = source;
    vec![(
        "mipflowSourceSize".to_owned(),
        format!("{w}x{h}\0").into_bytes(),
    )]
}

#[cfg(test)]
mod resize_tests {
    use super::Resize;

    #[test]
    fn stream_sizes_are_block_aligned_to_the_floor() {
        assert_eq!(Resize::Stream.dims(960, 540), (1024, 512));
        assert_eq!(Resize::Stream.dims(451, 300), (448, 320));
        assert_eq!(Resize::Stream.dims(512, 341), (512, 320));
        assert_eq!(Resize::Stream.dims(256, 256), (256, 256));
        assert_eq!(Resize::Stream.dims(40, 24), (40, 24));
        assert_eq!(Resize::Stream.dims(30, 30), (32, 32));
        assert_eq!(Resize::Stream.dims(1, 1), (4, 4));
        assert_eq!(Resize::Stream.dims(8192, 3), (8192, 4));
        assert_eq!(Resize::Stream.dims(1000, 70), (1024, 64));
        assert_eq!(Resize::Keep.dims(451, 300), (451, 300));
        assert_eq!(Resize::Pow2.dims(451, 300), (512, 256));
        assert_eq!(Resize::Pow2.dims(384, 1), (256, 1));
    }

    #[test]
    fn empty_sides_do_not_panic() {
        // Every resize copes with a 0 side (the cook refuses the image before using it).
        for resize in [Resize::Keep, Resize::Stream, Resize::Pow2] {
            let (w, h) = resize.dims(0, 0);
            assert!(w <= 4 && h <= 4, "{resize:?}: {w}x{h}");
        }
        assert_eq!(Resize::Pow2.dims(0, 16), (1, 16));
    }

    #[test]
    fn a_resized_hdr_image_keeps_its_source_size() {
        let img = image::Rgb32FImage::from_pixel(60, 30, image::Rgb([2.0, 0.5, 0.25]));
        let opts = super::CookOptions {
            resize: Resize::Stream,
            block: Some(super::BlockKind::Bc6h),
            quality: super::Quality::Fast,
            ..Default::default()
        };
        let tex = super::cook_hdr(&img, &opts).unwrap();
        assert_eq!((tex.width, tex.height), (64, 32));
        assert_eq!(
            tex.key_values,
            vec![("mipflowSourceSize".to_owned(), b"60x30\0".to_vec())]
        );
        let kept = super::cook_hdr(
            &img,
            &super::CookOptions {
                resize: Resize::Keep,
                ..opts
            },
        )
        .unwrap();
        assert!(kept.key_values.is_empty());
    }

    #[test]
    fn an_empty_image_is_a_bad_size_not_a_panic() {
        for resize in [Resize::Keep, Resize::Stream, Resize::Pow2] {
            let opts = super::CookOptions {
                resize,
                ..Default::default()
            };
            for (w, h) in [(0, 0), (0, 16), (16, 0)] {
                let img = image::DynamicImage::ImageRgba8(image::RgbaImage::new(w, h));
                match super::cook_image(&img, &opts) {
                    Err(super::CookError::BadSize { width, height, .. }) => {
                        assert_eq!((width, height), (w, h), "{resize:?}");
                    }
                    other => panic!("{resize:?} {w}x{h}: {:?}", other.map(|t| t.width)),
                }
                let hdr = image::Rgb32FImage::new(w, h);
                assert!(
                    matches!(
                        super::cook_hdr(&hdr, &opts),
                        Err(super::CookError::BadSize { .. })
                    ),
                    "{resize:?} {w}x{h} HDR"
                );
            }
        }
    }
}
