//! HDR inputs (OpenEXR, Radiance HDR) to BC6H: the levels are made and encoded in floats, so
//! values above 1 (a sky, a light map) keep their range; an 8-bit path would clip them.

use rayon::prelude::*;

use crate::mips::{MipMode, Plane, downsample};
use crate::{BlockKind, CookError, CookOptions, EncodedTexture, Quality, Wrap};
use mipflow::ktx2::{full_level_count, level_dims};

/// The largest value a half float holds: brighter texels are clamped to it.
const HALF_MAX: f32 = 65504.0;

/// Cooks a floating-point RGB image (linear light) into BC6H (unsigned half floats) with a full
/// mip chain, filtered in floats. Negative, NaN and infinite values become 0 or the half-float
/// maximum; alpha is not stored (BC6H has none). `opts.block` must be BC6H or unset.
pub fn cook_hdr(img: &image::Rgb32FImage, opts: &CookOptions) -> Result<EncodedTexture, CookError> {
    if opts.block.is_some_and(|b| b != BlockKind::Bc6h) {
        return Err(CookError::Encode(
            "an HDR image is cooked to BC6H only (--format bc6h)".into(),
        ));
    }
    let (source_w, source_h) = img.dimensions();
    let (width, height) = crate::cook_dims(opts, source_w, source_h)?;
    let clean = |v: f32| {
        if v.is_nan() {
            0.0
        } else {
            v.clamp(0.0, HALF_MAX)
        }
    };
    let mode = MipMode::Opaque { srgb: false };
    let mut plane = Plane {
        width: source_w as usize,
        height: source_h as usize,
        mode,
        data: {
            let mut data = crate::try_zeroed::<f32>(img.as_raw().len(), "the image in floats")?;
            for (d, &v) in data.iter_mut().zip(img.as_raw()) {
                *d = clean(v);
            }
            data
        },
    };
    let wrap = opts.wrap == Wrap::Repeat;
    if (width, height) != (source_w, source_h) {
        plane = downsample(&plane, width as usize, height as usize, opts.filter, wrap)?;
    }
    let count = full_level_count(width, height) as usize;
    let mut levels = Vec::with_capacity(count);
    for level in 0..count {
        levels.push(encode_bc6h(&plane, opts.quality)?);
        if level + 1 < count {
            let (w, h) = level_dims(width, height, level + 1);
            plane = downsample(&plane, w as usize, h as usize, opts.filter, wrap)?;
        }
    }
    Ok(EncodedTexture {
        format: wgpu::TextureFormat::Bc6hRgbUfloat,
        width,
        height,
        levels,
        key_values: crate::source_size_keys((source_w, source_h), (width, height)),
    })
}

/// Encodes one RGB float level (3 channels) into BC6H blocks, edge blocks padded by repeating
/// the last column and row, bands of block rows in parallel.
fn encode_bc6h(plane: &Plane, quality: Quality) -> Result<Vec<u8>, crate::CookError> {
    use intel_tex_2::bc6h::*;
    let (w, h) = (plane.width, plane.height);
    let (bw, bh) = (w.div_ceil(4), h.div_ceil(4));
    let settings = match quality {
        Quality::Fast => very_fast_settings(),
        Quality::Default => fast_settings(),
        Quality::Slow => basic_settings(),
    };
    let mut out = crate::try_zeroed(bw * bh * 16, "the BC6H blocks of a level")?;
    out.par_chunks_mut(bw * 16)
        .enumerate()
        .for_each(|(by, blocks)| {
            // One row of blocks: 4 texel rows of `bw * 4` half-float RGBA texels.
            let pw = bw * 4;
            let mut halves = Vec::with_capacity(pw * 4 * 8);
            for r in 0..4 {
                let y = (by * 4 + r).min(h - 1);
                for x in 0..pw {
                    let p = (y * w + x.min(w - 1)) * 3;
                    for c in 0..3 {
                        halves.extend_from_slice(
                            &half::f16::from_f32(plane.data[p + c].max(0.0)).to_le_bytes(),
                        );
                    }
                    halves.extend_from_slice(&half::f16::ONE.to_le_bytes());
                }
            }
            let surface = intel_tex_2::RgbaSurface {
                data: &halves,
                width: pw as u32,
                height: 4,
                stride: (pw * 8) as u32,
            };
            compress_blocks_into(&settings, &surface, blocks);
        });
    Ok(out)
}
