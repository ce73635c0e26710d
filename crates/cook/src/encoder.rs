//! Block encoding: one trait, [`BlockEncoder`], with intel_tex_2 (Intel's ISPC Texture Compressor)
//! behind it, and [`encode_level`], which pads edge blocks and encodes bands of block rows in
//! parallel.
//!
//! **Why intel_tex_2.** It builds offline here, and on this kind of machine it gave the best
//! quality per second of the encoders tried (shared/FIELD-NOTES.md): on 60 game textures its `fast`
//! profile reached 50.9 dB mean RGB PSNR at 2.2 MP/s per core, against 51.1 dB at 0.9 MP/s for a
//! reference BC7 encoder; `ultra_fast` is 8x faster but its worst image fell to 32.8 dB. Swapping the
//! encoder means implementing [`BlockEncoder`] and changing [`encoder_for`].

use rayon::prelude::*;

use super::{BlockKind, CookError, Quality};

/// A block encoder (BC7, and through [`IntelBlock`] BC1, BC3 to BC5 and BC6H).
pub trait BlockEncoder: Send + Sync {
    /// A short name recorded in the output (part of the incremental-cook stamp).
    fn name(&self) -> String;

    /// Encodes an RGBA8 surface of `width` x `height` texels whose rows are `stride` bytes apart
    /// (`width` and `height` multiples of 4) into `width / 4 * height / 4` BC7 blocks in row-major
    /// order, written to `out`. `alpha`: whether alpha must be kept (otherwise it may be encoded
    /// as opaque).
    fn encode_blocks(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
        stride: u32,
        alpha: bool,
        out: &mut [u8],
    ) -> Result<(), CookError>;

    /// Bytes of one block it writes (16 for BC7; 8 for BC1 and BC4).
    fn block_bytes(&self) -> usize {
        16
    }

    /// Whether [`encode_level`] gives it whole levels (padded to whole blocks) rather than
    /// bands encoded in parallel: a GPU encoder, for which each call is a round trip.
    fn whole_level(&self) -> bool {
        false
    }
}

/// intel_tex_2's BC7 encoder at a [`Quality`].
///
/// | quality | profile | why |
/// |---|---|---|
/// | `Fast` | `very_fast` | about 2x `fast`'s speed; `ultra_fast` (5x faster again) was rejected for its worst cases (32.8 dB on one game texture in FIELD-NOTES, 2.6 dB below `very_fast` on our photos) |
/// | `Default` | `fast` | the knee on FIELD-NOTES' 60 game textures (+1.8 dB over `very_fast`) |
/// | `Slow` | `basic` | the best that stays practical; `slow` costs 3x more for under 0.3 dB |
///
/// Measured on this project's photographs (`assets/photos`, level 0, one thread, opaque profiles,
/// 2-core VM under load): mean RGB PSNR of the three colour photos and throughput were
/// `ultra_fast` 41.75 dB at 14.7 MP per CPU-second, `very_fast` 44.40 dB at 2.85, `fast` 44.54 dB
/// at 1.53, `basic` 44.72 dB at 0.57, `slow` 44.80 dB at 0.19. Photographs are noisier than game
/// textures, so the profiles sit closer together there.
#[derive(Debug, Clone, Copy)]
pub struct IntelBc7 {
    /// The speed/quality trade-off.
    pub quality: Quality,
}

impl IntelBc7 {
    fn settings(&self, alpha: bool) -> intel_tex_2::bc7::EncodeSettings {
        use intel_tex_2::bc7::*;
        match (self.quality, alpha) {
            (Quality::Fast, false) => opaque_very_fast_settings(),
            (Quality::Fast, true) => alpha_very_fast_settings(),
            (Quality::Default, false) => opaque_fast_settings(),
            (Quality::Default, true) => alpha_fast_settings(),
            (Quality::Slow, false) => opaque_basic_settings(),
            (Quality::Slow, true) => alpha_basic_settings(),
        }
    }
}

impl BlockEncoder for IntelBc7 {
    fn name(&self) -> String {
        format!("intel_tex_2-0.5/{}", self.quality.profile())
    }

    fn encode_blocks(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
        stride: u32,
        alpha: bool,
        out: &mut [u8],
    ) -> Result<(), CookError> {
        if check_surface(rgba, (width, height, stride), out, 16)? == 0 {
            return Ok(());
        }
        let surface = intel_tex_2::RgbaSurface {
            data: rgba,
            width,
            height,
            stride,
        };
        intel_tex_2::bc7::compress_blocks_into(&self.settings(alpha), &surface, out);
        Ok(())
    }
}

/// Checks an encoder's input surface (sides multiples of 4, `stride` bytes a row, enough data)
/// and its output (`block_bytes` a block); returns the number of blocks.
pub(crate) fn check_surface(
    rgba: &[u8],
    (width, height, stride): (u32, u32, u32),
    out: &[u8],
    block_bytes: usize,
) -> Result<usize, CookError> {
    let (w, h, st) = (width as usize, height as usize, stride as usize);
    if !width.is_multiple_of(4) || !height.is_multiple_of(4) {
        return Err(CookError::Encode(format!(
            "surface {width}x{height} is not a multiple of 4"
        )));
    }
    if st < w * 4 || (h > 0 && rgba.len() < st * (h - 1) + w * 4) {
        return Err(CookError::Encode(format!(
            "surface data too short for {width}x{height}, stride {stride}"
        )));
    }
    let blocks = (w / 4) * (h / 4);
    if out.len() != blocks * block_bytes {
        return Err(CookError::Encode(format!(
            "output of {} bytes for {blocks} blocks",
            out.len()
        )));
    }
    Ok(blocks)
}

/// The encoder used for `quality`: the one place that picks the BC7 encoder.
pub fn encoder_for(quality: Quality) -> Box<dyn BlockEncoder> {
    Box::new(IntelBc7 { quality })
}

/// The encoder for a cook's options: BC7 by [`encoder_for`], the other formats by
/// [`IntelBlock`].
pub fn encoder_for_options(opts: &crate::CookOptions) -> Box<dyn BlockEncoder> {
    match opts.block_kind() {
        BlockKind::Bc7 => encoder_for(opts.quality),
        kind => Box::new(IntelBlock {
            kind,
            quality: opts.quality,
            srgb_to_linear: opts.mips_in_linear_light(),
        }),
    }
}

/// intel_tex_2's encoders for the other block formats (BC1, BC3, BC4, BC5, BC6H). Each takes the
/// same RGBA8 levels as BC7: BC4 encodes the red channel, BC5 red and green, BC6H the RGB as
/// half floats (decoded from sRGB to linear light when `srgb_to_linear`).
#[derive(Debug, Clone, Copy)]
pub struct IntelBlock {
    /// The format.
    pub kind: BlockKind,
    /// BC6H's effort (the others have one profile).
    pub quality: Quality,
    /// BC6H: the 8-bit values are sRGB-encoded colour.
    pub srgb_to_linear: bool,
}

impl BlockEncoder for IntelBlock {
    fn name(&self) -> String {
        let kind = match self.kind {
            BlockKind::Bc7 => "bc7",
            BlockKind::Bc1 => "bc1",
            BlockKind::Bc3 => "bc3",
            BlockKind::Bc4 => "bc4",
            BlockKind::Bc5 => "bc5",
            BlockKind::Bc6h => "bc6h",
        };
        let q = self.quality.profile();
        let linear = if self.srgb_to_linear { "/linear" } else { "" };
        format!("intel_tex_2-0.5/{kind}/{q}{linear}")
    }

    fn block_bytes(&self) -> usize {
        match self.kind {
            BlockKind::Bc1 | BlockKind::Bc4 => 8,
            _ => 16,
        }
    }

    fn encode_blocks(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
        stride: u32,
        alpha: bool,
        out: &mut [u8],
    ) -> Result<(), CookError> {
        let (w, h, st) = (width as usize, height as usize, stride as usize);
        if check_surface(rgba, (width, height, stride), out, self.block_bytes())? == 0 {
            return Ok(());
        }
        // The channels each format takes, tightly packed.
        let texels = |channels: usize, f: &dyn Fn(&[u8], &mut Vec<u8>)| {
            let mut v = Vec::with_capacity(w * h * channels);
            for y in 0..h {
                for p in rgba[y * st..y * st + w * 4].chunks_exact(4) {
                    f(p, &mut v);
                }
            }
            v
        };
        match self.kind {
            BlockKind::Bc7 => IntelBc7 {
                quality: self.quality,
            }
            .encode_blocks(rgba, width, height, stride, alpha, out)?,
            BlockKind::Bc1 | BlockKind::Bc3 => {
                let surface = intel_tex_2::RgbaSurface {
                    data: rgba,
                    width,
                    height,
                    stride,
                };
                if self.kind == BlockKind::Bc1 {
                    intel_tex_2::bc1::compress_blocks_into(&surface, out);
                } else {
                    intel_tex_2::bc3::compress_blocks_into(&surface, out);
                }
            }
            BlockKind::Bc4 => {
                let r = texels(1, &|p, v| v.push(p[0]));
                let surface = intel_tex_2::RSurface {
                    data: &r,
                    width,
                    height,
                    stride: width,
                };
                intel_tex_2::bc4::compress_blocks_into(&surface, out);
            }
            BlockKind::Bc5 => {
                let rg = texels(2, &|p, v| v.extend_from_slice(&p[..2]));
                let surface = intel_tex_2::RgSurface {
                    data: &rg,
                    width,
                    height,
                    stride: width * 2,
                };
                intel_tex_2::bc5::compress_blocks_into(&surface, out);
            }
            BlockKind::Bc6h => {
                let linear = self.srgb_to_linear;
                let halves = texels(8, &|p, v| {
                    for (c, &x) in p.iter().enumerate() {
                        let f = match c {
                            3 => 1.0,
                            _ if linear => crate::srgb_to_linear(f32::from(x) / 255.0),
                            _ => f32::from(x) / 255.0,
                        };
                        v.extend_from_slice(&half::f16::from_f32(f).to_le_bytes());
                    }
                });
                let surface = intel_tex_2::RgbaSurface {
                    data: &halves,
                    width,
                    height,
                    stride: width * 8,
                };
                use intel_tex_2::bc6h::*;
                let settings = match self.quality {
                    Quality::Fast => very_fast_settings(),
                    Quality::Default => fast_settings(),
                    Quality::Slow => basic_settings(),
                };
                compress_blocks_into(&settings, &surface, out);
            }
        }
        Ok(())
    }
}

/// Texels per parallel encoding task (at least one block row): large enough to amortise the task,
/// small enough to spread a single large image over every core.
const TEXELS_PER_TASK: usize = 64 * 1024;

/// Encodes one RGBA8 level of any size into blocks (`ceil(w/4) * ceil(h/4) * block_bytes`).
///
/// Edge blocks of sizes that are not multiples of 4 are padded by **replicating the last column and
/// row**, so the padding has the colours of the edge and does not spend endpoint precision on texels
/// nobody sees. Bands of block rows are encoded in parallel with rayon.
pub fn encode_level(
    encoder: &dyn BlockEncoder,
    rgba: &[u8],
    width: u32,
    height: u32,
    alpha: bool,
) -> Result<Vec<u8>, CookError> {
    let (w, h) = (width as usize, height as usize);
    if w == 0 || h == 0 || rgba.len() != w * h * 4 {
        return Err(CookError::Encode(format!(
            "{} bytes for a {width}x{height} RGBA8 level",
            rgba.len()
        )));
    }
    let (bw, bh) = (w.div_ceil(4), h.div_ceil(4));
    let bb = encoder.block_bytes();
    let mut out = crate::try_zeroed(bw * bh * bb, "the blocks of a level")?;
    let band_rows = if encoder.whole_level() {
        bh
    } else {
        (TEXELS_PER_TASK / (bw * 16)).max(1)
    };
    out.par_chunks_mut(bw * bb * band_rows)
        .enumerate()
        .try_for_each(|(band, blocks)| {
            let rows = blocks.len() / (bw * bb);
            let y0 = band * band_rows * 4;
            let pw = bw * 4;
            if pw == w && y0 + rows * 4 <= h {
                let strip = &rgba[y0 * w * 4..(y0 + rows * 4) * w * 4];
                return encoder.encode_blocks(
                    strip,
                    pw as u32,
                    rows as u32 * 4,
                    (w * 4) as u32,
                    alpha,
                    blocks,
                );
            }
            // Pad by replicating the last column and the last row.
            let mut strip = Vec::with_capacity(pw * rows * 4 * 4);
            for r in 0..rows * 4 {
                let sy = (y0 + r).min(h - 1);
                let row = &rgba[sy * w * 4..(sy + 1) * w * 4];
                strip.extend_from_slice(row);
                let last = &row[(w - 1) * 4..];
                for _ in w..pw {
                    strip.extend_from_slice(last);
                }
            }
            encoder.encode_blocks(
                &strip,
                pw as u32,
                rows as u32 * 4,
                (pw * 4) as u32,
                alpha,
                blocks,
            )
        })?;
    Ok(out)
}
