//! Cooking images into BC7 KTX2 files: decode, linear-light mips, BC7, KTX2 (optionally Zstandard).
//!
//! - [`cook_image`] turns an image into an [`EncodedTexture`] in memory (full mip chain, BC7).
//! - [`run_cook`] is `mipflow cook`: folders, parallelism, progress, incremental skipping, atomic
//!   writes, per-input error reports.
//! - [`mips`] documents the filter and the alpha and normal-map handling; [`encoder`] the BC7
//!   encoder choice.
//!
//! **Memory.** Level 0 is encoded from the decoded RGBA8 image itself; level 1 is filtered from it
//! straight into an `f32` plane (3 to 5 channels) and the RGBA8 image is dropped; every further level
//! is filtered from the previous plane, which is dropped once its successor exists. The BC7 levels
//! (1.33 bytes per input texel in all) stay in memory until the file is written. For an 8192x8192
//! RGBA input the peak is about 256 MiB (RGBA8) + 256 to 320 MiB (level 1 plane) + 85 MiB (BC7),
//! whatever the number of levels.

mod color;
pub mod encoder;
mod metrics;
pub mod mips;
mod run;

use std::path::PathBuf;

pub use crate::ktx2::EncodedTexture;
pub use color::{linear_to_srgb, srgb_to_linear};
pub use encoder::{Bc7Encoder, IntelBc7, encode_level, encoder_for};
pub use metrics::{decode_bc7, psnr_rgb};
pub use mips::MipFilter;
pub use run::{CookSummary, cook_files, run_cook};

use crate::ktx2::{full_level_count, level_dims};
use mips::{MipMode, Rgba8Source, downsample};

/// Largest accepted image side (the common `max_texture_dimension_2d`, and the reader's default).
pub const MAX_COOK_DIMENSION: u32 = 16384;

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
    /// A file given on the command line is not a supported image type.
    #[error("{path}: not a .png, .jpg, .jpeg, .tga or .bmp file")]
    UnsupportedInput {
        /// The input.
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
    /// The BC7 encoder refused its input (an internal error).
    #[error("BC7 encoding failed: {0}")]
    Encode(String),
    /// Several inputs would be written to the same output file.
    #[error("{output}: would be written by several inputs: {inputs:?}")]
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
    #[error("{path}: {source}")]
    Input {
        /// The input.
        path: PathBuf,
        /// What went wrong.
        source: Box<CookError>,
    },
}

/// BC7 encoder effort (see [`IntelBc7`] for the profiles behind each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
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

/// How the image's RGB values are to be interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorSpace {
    /// sRGB-encoded colour: filtered in linear light, stored as `Bc7RgbaUnormSrgb`.
    #[default]
    Srgb,
    /// Linear values (or non-colour data): filtered as they are, stored as `Bc7RgbaUnorm`.
    Linear,
}

/// How to cook an image. `Default` is default quality, sRGB colour, no Zstandard.
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
}

impl CookOptions {
    /// The texture format these options produce.
    pub fn format(&self) -> wgpu::TextureFormat {
        if self.normal_map || self.color == ColorSpace::Linear {
            wgpu::TextureFormat::Bc7RgbaUnorm
        } else {
            wgpu::TextureFormat::Bc7RgbaUnormSrgb
        }
    }
}

/// Cooks `img` into a BC7 texture with a full mip chain down to 1x1, in memory (see the module
/// documentation for the filter, alpha and memory behaviour). The encoder is [`encoder_for`]
/// `opts.quality`; `opts.zstd` is not applied here but by [`crate::ktx2::write_ktx2`].
pub fn cook_image(
    img: &image::DynamicImage,
    opts: &CookOptions,
) -> Result<EncodedTexture, CookError> {
    let encoder = encoder_for(opts.quality);
    cook_rgba8(img.to_rgba8(), opts, encoder.as_ref())
}

/// Like [`cook_image`], taking the RGBA8 image by value (so it can be dropped after level 1 is made)
/// and an explicit encoder.
pub fn cook_rgba8(
    img: image::RgbaImage,
    opts: &CookOptions,
    encoder: &dyn Bc7Encoder,
) -> Result<EncodedTexture, CookError> {
    use rayon::prelude::*;
    let (width, height) = img.dimensions();
    if width == 0 || height == 0 || width > MAX_COOK_DIMENSION || height > MAX_COOK_DIMENSION {
        return Err(CookError::BadSize {
            width,
            height,
            max: MAX_COOK_DIMENSION,
        });
    }
    let alpha = img
        .as_raw()
        .par_chunks(4 * 4096)
        .any(|c| c.chunks_exact(4).any(|p| p[3] != 255));
    let srgb = opts.format().is_srgb();
    let mode = match (opts.normal_map, alpha) {
        (true, alpha) => MipMode::Normal { alpha },
        (false, true) => MipMode::Alpha { srgb },
        (false, false) => MipMode::Opaque { srgb },
    };
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
        let mut plane = downsample(&source, w1 as usize, h1 as usize, opts.filter);
        drop(img);
        for level in 1..count {
            let rgba = plane.to_rgba8();
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
                plane = downsample(&plane, w as usize, h as usize, opts.filter);
            }
        }
    }
    Ok(EncodedTexture {
        format: opts.format(),
        width,
        height,
        levels,
        key_values: Vec::new(),
    })
}

/// Arguments of `mipflow cook`.
#[derive(Debug, Clone, clap::Args)]
pub struct CookArgs {
    /// Image files or folders (folders are searched recursively for .png .jpg .jpeg .tga .bmp).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output folder: each input becomes OUTDIR/<path relative to its folder, extension .ktx2>.
    #[arg(short = 'o', long = "out", value_name = "OUTDIR")]
    pub out: PathBuf,
    /// BC7 encoder effort.
    #[arg(long, value_enum, default_value_t = Quality::Default)]
    pub quality: Quality,
    /// Supercompress each level with Zstandard at this level (1 to 22).
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd: Option<i32>,
    /// Colour space of the inputs' RGB.
    #[arg(long, value_enum, default_value_t = ColorSpace::Srgb)]
    pub color: ColorSpace,
    /// Treat inputs as tangent-space normal maps (linear, renormalised mips; overrides --color).
    #[arg(long)]
    pub normal_map: bool,
    /// Cook even when an output is up to date.
    #[arg(long)]
    pub force: bool,
}

impl CookArgs {
    /// The cooking options these arguments select.
    pub fn options(&self) -> CookOptions {
        CookOptions {
            quality: self.quality,
            color: self.color,
            normal_map: self.normal_map,
            zstd: self.zstd,
            filter: MipFilter::default(),
        }
    }
}
