//! Mip generation in linear light.
//!
//! **Filter.** Each level is made from the previous one (kept in `f32`, never re-quantised) by a
//! separable resampler. The default kernel is a **Kaiser-windowed sinc** (half-width 3 output texels,
//! alpha 4, the parameters NVIDIA Texture Tools uses by default for mipmaps): it keeps detail that a
//! box filter blurs away while its small negative lobes ring far less than Lanczos. [`MipFilter::Box`]
//! is the exact area average (for even sizes, the plain 2x2 mean). For odd sizes the output texel
//! `i` of `m = max(1, n / 2)` covers the source interval `[i, i + 1) * n / m`, so a 5-texel row maps to
//! 2 texels each covering 2.5 source texels; box weights are exact interval overlaps, Kaiser weights
//! are the kernel sampled at source texel centres, both normalised to sum to 1. Texels past the
//! border repeat the edge texel (clamp), since most textures are not known to tile.
//!
//! **Colour.** sRGB data is decoded to linear light before filtering and encoded after, so that a
//! checkerboard of sRGB 0 and 255 averages to linear 0.5 (sRGB 188), not 128. With `--color linear`
//! values are filtered as they are.
//!
//! **Alpha.** Colour is filtered premultiplied: each texel's colour is weighted by its alpha, so
//! transparent texels do not bleed their (often meaningless) colour into visible ones, and is divided
//! by the filtered alpha afterwards (the file stores straight alpha). Alpha itself is averaged
//! linearly. To keep a plausible colour where everything is transparent (so bilinear sampling at the
//! edge of a cut-out does not fade to black), the colour weight is `max(alpha, 1/1024)`: fully
//! transparent texels get a tiny weight that only matters when no visible texel is near. Coverage is
//! not rescaled for alpha-tested cut-outs.
//!
//! **Normal maps.** Texels are decoded to vectors in [-1, 1], filtered as vectors, and renormalised
//! when each level is encoded (a zero vector becomes +Z). The filtered, unnormalised vectors feed the
//! next level, so each level is the normalised average of the level-0 normals it covers.
//!
//! **Memory.** Filtering streams: each task filters a band of output rows from the source rows it
//! needs, so no intermediate full-size buffer exists; only the next level's `f32` plane is allocated.

use rayon::prelude::*;

use super::color::{linear_to_srgb8, srgb8_table, unorm8};

/// The resampling kernel used to make each mip level from the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum MipFilter {
    /// Kaiser-windowed sinc, half-width 3, alpha 4 (sharp, little ringing). The default.
    #[default]
    Kaiser,
    /// Exact area average (2x2 mean for even sizes): softest, no ringing.
    Box,
}

/// How texels are represented while filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MipMode {
    /// Opaque colour: 3 channels, RGB (linear light if `srgb`).
    Opaque {
        /// Input and output are sRGB-encoded.
        srgb: bool,
    },
    /// Colour with alpha: 5 channels `[r*w, g*w, b*w, w, a]` with `w = max(a, ALPHA_FLOOR)`.
    Alpha {
        /// Input and output are sRGB-encoded.
        srgb: bool,
    },
    /// Normal map: `[x, y, z]` in [-1, 1], plus alpha as plain data when present.
    Normal {
        /// Carry alpha.
        alpha: bool,
    },
}

/// Colour weight of a fully transparent texel (see the module documentation).
const ALPHA_FLOOR: f32 = 1.0 / 1024.0;

impl MipMode {
    pub(crate) fn channels(self) -> usize {
        match self {
            MipMode::Opaque { .. } => 3,
            MipMode::Alpha { .. } => 5,
            MipMode::Normal { alpha } => 3 + usize::from(alpha),
        }
    }

    /// Converts RGBA8 texels to this mode's filtering representation.
    fn decode_rgba8(self, rgba: &[u8], out: &mut [f32]) {
        let lut = srgb8_table();
        let c = self.channels();
        for (px, o) in rgba.chunks_exact(4).zip(out.chunks_exact_mut(c)) {
            match self {
                MipMode::Opaque { srgb } => {
                    for k in 0..3 {
                        o[k] = if srgb {
                            lut[px[k] as usize]
                        } else {
                            f32::from(px[k]) / 255.0
                        };
                    }
                }
                MipMode::Alpha { srgb } => {
                    let a = f32::from(px[3]) / 255.0;
                    let w = a.max(ALPHA_FLOOR);
                    for k in 0..3 {
                        let v = if srgb {
                            lut[px[k] as usize]
                        } else {
                            f32::from(px[k]) / 255.0
                        };
                        o[k] = v * w;
                    }
                    o[3] = w;
                    o[4] = a;
                }
                MipMode::Normal { alpha } => {
                    for k in 0..3 {
                        o[k] = f32::from(px[k]) / 127.5 - 1.0;
                    }
                    if alpha {
                        o[3] = f32::from(px[3]) / 255.0;
                    }
                }
            }
        }
    }

    /// Converts this mode's representation back to RGBA8 for encoding.
    fn encode_rgba8(self, src: &[f32], out: &mut [u8]) {
        let c = self.channels();
        for (s, px) in src.chunks_exact(c).zip(out.chunks_exact_mut(4)) {
            match self {
                MipMode::Opaque { srgb } => {
                    for k in 0..3 {
                        px[k] = if srgb {
                            linear_to_srgb8(s[k])
                        } else {
                            unorm8(s[k])
                        };
                    }
                    px[3] = 255;
                }
                MipMode::Alpha { srgb } => {
                    let w = s[3];
                    for k in 0..3 {
                        let v = if w > 1e-12 { s[k] / w } else { 0.0 };
                        px[k] = if srgb { linear_to_srgb8(v) } else { unorm8(v) };
                    }
                    px[3] = unorm8(s[4]);
                }
                MipMode::Normal { alpha } => {
                    let (x, y, z) = (s[0], s[1], s[2]);
                    let len = (x * x + y * y + z * z).sqrt();
                    let (x, y, z) = if len > 1e-6 && len.is_finite() {
                        (x / len, y / len, z / len)
                    } else {
                        (0.0, 0.0, 1.0)
                    };
                    px[0] = unorm8(x * 0.5 + 0.5);
                    px[1] = unorm8(y * 0.5 + 0.5);
                    px[2] = unorm8(z * 0.5 + 0.5);
                    px[3] = if alpha { unorm8(s[3]) } else { 255 };
                }
            }
        }
    }
}

/// A level in the filtering representation: `width * height * channels` interleaved `f32`.
#[derive(Debug, Clone)]
pub(crate) struct Plane {
    pub width: usize,
    pub height: usize,
    pub mode: MipMode,
    pub data: Vec<f32>,
}

impl Plane {
    /// This level as RGBA8, ready for the BC7 encoder.
    pub(crate) fn to_rgba8(&self) -> Result<Vec<u8>, crate::CookError> {
        let c = self.mode.channels();
        let mut out = crate::try_zeroed(self.width * self.height * 4, "a mip level as RGBA8")?;
        out.par_chunks_mut(self.width * 4)
            .zip(self.data.par_chunks(self.width * c))
            .for_each(|(o, s)| self.mode.encode_rgba8(s, o));
        Ok(out)
    }
}

/// Something rows can be read from in the filtering representation.
pub(crate) trait RowSource: Sync {
    fn width(&self) -> usize;
    fn height(&self) -> usize;
    fn mode(&self) -> MipMode;
    /// Writes row `y` (`width * channels` values) into `out`.
    fn row(&self, y: usize, out: &mut [f32]);
}

/// Level 0: RGBA8 texels converted on the fly, row by row.
pub(crate) struct Rgba8Source<'a> {
    pub rgba: &'a [u8],
    pub width: usize,
    pub height: usize,
    pub mode: MipMode,
}

impl RowSource for Rgba8Source<'_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    fn mode(&self) -> MipMode {
        self.mode
    }
    fn row(&self, y: usize, out: &mut [f32]) {
        let row = &self.rgba[y * self.width * 4..(y + 1) * self.width * 4];
        self.mode.decode_rgba8(row, out);
    }
}

impl RowSource for Plane {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    fn mode(&self) -> MipMode {
        self.mode
    }
    fn row(&self, y: usize, out: &mut [f32]) {
        let n = self.width * self.mode.channels();
        out.copy_from_slice(&self.data[y * n..(y + 1) * n]);
    }
}

/// Resampling weights from `src` texels to `dst` texels along one axis.
struct Taps {
    /// First source texel of each output texel: in `0..src` at the clamped edges; with
    /// `wrap`, a position on the repeated axis (below 0 or past `src - 1` near the edges), taken
    /// modulo `src` when read.
    start: Vec<isize>,
    /// The axis repeats (a tiling texture): taps past an edge read the other side.
    wrap: bool,
    /// Source texels.
    src: usize,
    /// Weights, `stride` per output texel (unused ones are 0).
    weights: Vec<f32>,
    /// Number of used weights per output texel.
    len: Vec<usize>,
    stride: usize,
}

/// Modified Bessel function of the first kind, order 0 (power series).
fn bessel_i0(x: f64) -> f64 {
    let mut sum = 1.0;
    let mut term = 1.0;
    let q = x * x / 4.0;
    for k in 1..64 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-12 {
            break;
        }
    }
    sum
}

const KAISER_RADIUS: f64 = 3.0;
const KAISER_ALPHA: f64 = 4.0;

fn kaiser(t: f64) -> f64 {
    if t.abs() >= KAISER_RADIUS {
        return 0.0;
    }
    let sinc = if t.abs() < 1e-9 {
        1.0
    } else {
        let x = std::f64::consts::PI * t;
        x.sin() / x
    };
    let r = t / KAISER_RADIUS;
    sinc * bessel_i0(KAISER_ALPHA * (1.0 - r * r).sqrt()) / bessel_i0(KAISER_ALPHA)
}

impl Taps {
    #[cfg(test)]
    fn new(src: usize, dst: usize, filter: MipFilter) -> Taps {
        Self::with_edges(src, dst, filter, false)
    }

    /// The taps; `wrap`: the axis repeats (otherwise taps past an edge repeat the edge texel).
    fn with_edges(src: usize, dst: usize, filter: MipFilter, wrap: bool) -> Taps {
        // Minifying, the kernel widens with the ratio (it must low-pass); magnifying (a cook
        // resize up), it stays one source texel wide and interpolates.
        let scale = (src as f64 / dst as f64).max(1.0);
        let step = src as f64 / dst as f64;
        let radius = match filter {
            MipFilter::Kaiser => KAISER_RADIUS * scale,
            MipFilter::Box => 0.5 * scale,
        };
        let stride = (2.0 * radius).ceil() as usize + 3;
        let mut taps = Taps {
            start: Vec::with_capacity(dst),
            wrap,
            src,
            weights: vec![0.0; dst * stride],
            len: Vec::with_capacity(dst),
            stride,
        };
        let mut w = vec![0f64; if wrap { stride } else { src }];
        for i in 0..dst {
            let centre = (i as f64 + 0.5) * step;
            let first = (centre - radius).floor() as i64;
            let last = (centre + radius).ceil() as i64;
            let (mut lo, mut hi) = (usize::MAX, 0usize);
            for j in first..=last {
                let weight = match filter {
                    MipFilter::Kaiser => kaiser((j as f64 + 0.5 - centre) / scale),
                    MipFilter::Box => {
                        let a = (j as f64).max(centre - radius);
                        let b = (j as f64 + 1.0).min(centre + radius);
                        (b - a).max(0.0)
                    }
                };
                if weight.abs() < 1e-9 {
                    continue;
                }
                // Clamped: the edge texel takes the weight of the taps past it. Wrapped: the
                // tap keeps its place on the repeated axis (read modulo `src`).
                let k = if wrap {
                    (j - first) as usize
                } else {
                    j.clamp(0, src as i64 - 1) as usize
                };
                if k >= w.len() {
                    continue;
                }
                w[k] += weight;
                lo = lo.min(k);
                hi = hi.max(k);
            }
            if lo > hi {
                // No tap (cannot happen for a kernel with a positive centre): the nearest texel.
                lo = ((centre as usize).min(src - 1)).min(w.len() - 1);
                hi = lo;
                w[lo] = 1.0;
            }
            let sum: f64 = w[lo..=hi].iter().sum();
            let n = hi - lo + 1;
            for (k, slot) in (lo..=hi).zip(taps.weights[i * stride..i * stride + n].iter_mut()) {
                *slot = (w[k] / sum) as f32;
                w[k] = 0.0;
            }
            taps.start.push(if wrap {
                first as isize + lo as isize
            } else {
                lo as isize
            });
            taps.len.push(n);
        }
        taps
    }

    /// The source texel of position `v` on the axis.
    #[inline]
    fn texel(&self, v: isize) -> usize {
        if self.wrap {
            v.rem_euclid(self.src as isize) as usize
        } else {
            v as usize
        }
    }
}

/// Output rows filtered per task: large enough to amortise the extra source rows each band needs.
const BAND_ROWS: usize = 16;

/// Resamples `src` to `dst_w` x `dst_h` with `filter` (separable: horizontal, then vertical), in
/// parallel bands of output rows. `wrap`: the image tiles (the filter reads across its edges);
/// otherwise the edge texels repeat.
pub(crate) fn downsample(
    src: &dyn RowSource,
    dst_w: usize,
    dst_h: usize,
    filter: MipFilter,
    wrap: bool,
) -> Result<Plane, crate::CookError> {
    let mode = src.mode();
    let c = mode.channels();
    let (sw, sh) = (src.width(), src.height());
    let h_taps = Taps::with_edges(sw, dst_w, filter, wrap);
    let v_taps = Taps::with_edges(sh, dst_h, filter, wrap);
    let mut data = crate::try_zeroed::<f32>(dst_w * dst_h * c, "a mip level in floats")?;
    data.par_chunks_mut(dst_w * c * BAND_ROWS)
        .enumerate()
        .for_each(|(band, out)| {
            let y0 = band * BAND_ROWS;
            let rows = out.len() / (dst_w * c);
            let src_lo = (y0..y0 + rows).map(|y| v_taps.start[y]).min().unwrap_or(0);
            let src_hi = (y0..y0 + rows)
                .map(|y| v_taps.start[y] + v_taps.len[y] as isize)
                .max()
                .unwrap_or(src_lo);
            let mut row = vec![0f32; sw * c];
            let mut filtered = vec![0f32; (src_hi - src_lo) as usize * dst_w * c];
            for (vy, f) in (src_lo..src_hi).zip(filtered.chunks_exact_mut(dst_w * c)) {
                src.row(v_taps.texel(vy), &mut row);
                for (x, o) in f.chunks_exact_mut(c).enumerate() {
                    let s = h_taps.start[x];
                    let ws = &h_taps.weights[x * h_taps.stride..x * h_taps.stride + h_taps.len[x]];
                    for (k, &wk) in ws.iter().enumerate() {
                        let t = h_taps.texel(s + k as isize);
                        let p = &row[t * c..(t + 1) * c];
                        for ch in 0..c {
                            o[ch] += wk * p[ch];
                        }
                    }
                }
            }
            for (r, o) in out.chunks_exact_mut(dst_w * c).enumerate() {
                let y = y0 + r;
                let s = (v_taps.start[y] - src_lo) as usize;
                let ws = &v_taps.weights[y * v_taps.stride..y * v_taps.stride + v_taps.len[y]];
                for (k, &wk) in ws.iter().enumerate() {
                    let f = &filtered[(s + k) * dst_w * c..(s + k + 1) * dst_w * c];
                    for (ov, fv) in o.iter_mut().zip(f) {
                        *ov += wk * fv;
                    }
                }
            }
        });
    Ok(Plane {
        width: dst_w,
        height: dst_h,
        mode,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_sum_to_one_and_stay_in_range() {
        for filter in [MipFilter::Kaiser, MipFilter::Box] {
            for (src, dst) in [
                (1, 1),
                (2, 1),
                (3, 1),
                (5, 2),
                (7, 3),
                (1000, 500),
                (601, 300),
            ] {
                let t = Taps::new(src, dst, filter);
                for i in 0..dst {
                    let ws = &t.weights[i * t.stride..i * t.stride + t.len[i]];
                    let sum: f32 = ws.iter().sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-5,
                        "{filter:?} {src}->{dst} texel {i}: {sum}"
                    );
                    assert!(t.start[i] >= 0 && t.start[i] as usize + t.len[i] <= src);
                }
            }
        }
    }

    #[test]
    fn box_is_the_2x2_mean() {
        let t = Taps::new(4, 2, MipFilter::Box);
        assert_eq!(&t.weights[..t.len[0]], &[0.5, 0.5]);
        assert_eq!(t.start, vec![0, 2]);
        assert!(!t.wrap);
    }

    #[test]
    fn same_size_is_identity() {
        for filter in [MipFilter::Kaiser, MipFilter::Box] {
            let t = Taps::new(3, 3, filter);
            for i in 0..3 {
                assert_eq!(t.start[i], i as isize);
                assert!((t.weights[i * t.stride] - 1.0).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn normal_mips_are_unit_vectors_before_encoding() {
        // Random unit normals, 8x6, filtered down to 1x1: every output is unit length to within
        // 8-bit quantisation.
        let mut seed = 12345u32;
        let mut rgba = Vec::new();
        for _ in 0..48 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let (a, b) = (
                f32::from((seed >> 8) as u8) / 255.0 * std::f32::consts::TAU,
                f32::from((seed >> 16) as u8) / 255.0 * 1.2,
            );
            let v = [b.sin() * a.cos(), b.sin() * a.sin(), b.cos()];
            rgba.extend(v.map(|c| ((c * 0.5 + 0.5) * 255.0).round() as u8));
            rgba.push(255);
        }
        let mode = MipMode::Normal { alpha: false };
        let src = Rgba8Source {
            rgba: &rgba,
            width: 8,
            height: 6,
            mode,
        };
        let mut plane = downsample(&src, 4, 3, MipFilter::Kaiser, false).unwrap();
        for (w, h) in [(2, 1), (1, 1), (1, 1)] {
            for p in plane.to_rgba8().unwrap().chunks_exact(4) {
                let v = [0, 1, 2].map(|k| f32::from(p[k]) / 127.5 - 1.0);
                let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                assert!((len - 1.0).abs() < 0.012, "{p:?}: {len}");
            }
            plane = downsample(&plane, w, h, MipFilter::Kaiser, false).unwrap();
        }
    }

    #[test]
    fn wrapped_taps_sum_to_one_and_read_across_the_edge() {
        for filter in [MipFilter::Kaiser, MipFilter::Box] {
            for (src, dst) in [(1, 1), (2, 1), (4, 2), (7, 3), (64, 32), (601, 300)] {
                let t = Taps::with_edges(src, dst, filter, true);
                for i in 0..dst {
                    let sum: f32 = t.weights[i * t.stride..i * t.stride + t.len[i]]
                        .iter()
                        .sum();
                    assert!((sum - 1.0).abs() < 1e-5, "{filter:?} {src}->{dst}: {sum}");
                    for k in 0..t.len[i] {
                        assert!(t.texel(t.start[i] + k as isize) < src);
                    }
                }
            }
        }
        // An image black but for its first column (white), 16 -> 8 with Kaiser: the last output
        // texel reads the first column across the edge only when wrapping.
        let mut rgba = Vec::new();
        for _y in 0..4 {
            for x in 0..16 {
                let v = if x == 0 { 255 } else { 0 };
                rgba.extend_from_slice(&[v, v, v, 255]);
            }
        }
        let src = Rgba8Source {
            rgba: &rgba,
            width: 16,
            height: 4,
            mode: MipMode::Opaque { srgb: false },
        };
        let last = |wrap| {
            let p = downsample(&src, 8, 2, MipFilter::Kaiser, wrap)
                .unwrap()
                .to_rgba8()
                .unwrap();
            p[7 * 4]
        };
        let (clamped, wrapped) = (last(false), last(true));
        assert!(
            clamped <= 2,
            "clamped: the far edge stays black ({clamped})"
        );
        assert!(
            wrapped >= 8,
            "wrapped: the white column bleeds in ({wrapped})"
        );
    }
}
