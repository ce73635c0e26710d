//! CPU BC7 decoding, for tests, the bench's RGBA8 baseline and a future no-BC fallback.

/// Decodes `width` x `height` texels of BC7 blocks (row-major, edge blocks padded to 4x4) to tightly
/// packed RGBA8. Blocks missing from a short `data` decode as transparent black; never panics.
pub fn decode_bc7(data: &[u8], width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let bw = w.div_ceil(4);
    let mut out = vec![0u8; w * h * 4];
    let mut block = [0u8; 64];
    for (i, src) in data.chunks_exact(16).take(bw * h.div_ceil(4)).enumerate() {
        bcdec_rs::bc7(src, &mut block, 16);
        place_block(&mut out, (w, h), bw, i, &block, 4);
    }
    out
}

/// Decodes `width` x `height` texels of any BCn `format` (row-major blocks, edge blocks padded)
/// to tightly packed RGBA8 as a shader samples it: BC4 gives `(r, 0, 0, 255)`, BC5 `(r, g, 0,
/// 255)`, BC6H its linear values clamped to 0..1, sRGB formats their stored (encoded) bytes.
/// Signed formats map -1..1 to 0..255. Missing blocks decode as transparent black; a format that
/// is not block-compressed gives all zeros. Never panics.
pub fn decode_blocks(format: wgpu::TextureFormat, data: &[u8], width: u32, height: u32) -> Vec<u8> {
    use wgpu::TextureFormat as F;
    let (w, h) = (width as usize, height as usize);
    let mut out = vec![0u8; w * h * 4];
    let Some(bb) = format.block_copy_size(None).map(|b| b as usize) else {
        return out;
    };
    if format.block_dimensions() != (4, 4) {
        return out;
    }
    let bw = w.div_ceil(4);
    let snorm = |v: u8| ((v as i8 as f32 / 127.0).clamp(-1.0, 1.0) * 127.5 + 127.5) as u8;
    for (i, src) in data.chunks_exact(bb).take(bw * h.div_ceil(4)).enumerate() {
        let mut rgba = [0u8; 64];
        match format {
            F::Bc1RgbaUnorm | F::Bc1RgbaUnormSrgb => bcdec_rs::bc1(src, &mut rgba, 16),
            F::Bc2RgbaUnorm | F::Bc2RgbaUnormSrgb => bcdec_rs::bc2(src, &mut rgba, 16),
            F::Bc3RgbaUnorm | F::Bc3RgbaUnormSrgb => bcdec_rs::bc3(src, &mut rgba, 16),
            F::Bc7RgbaUnorm | F::Bc7RgbaUnormSrgb => bcdec_rs::bc7(src, &mut rgba, 16),
            F::Bc4RUnorm | F::Bc4RSnorm => {
                let signed = format == F::Bc4RSnorm;
                let mut r = [0u8; 16];
                bcdec_rs::bc4(src, &mut r, 4, signed);
                for (t, &v) in r.iter().enumerate() {
                    let v = if signed { snorm(v) } else { v };
                    rgba[t * 4..t * 4 + 4].copy_from_slice(&[v, 0, 0, 255]);
                }
            }
            F::Bc5RgUnorm | F::Bc5RgSnorm => {
                let signed = format == F::Bc5RgSnorm;
                let mut rg = [0u8; 32];
                bcdec_rs::bc5(src, &mut rg, 8, signed);
                for t in 0..16 {
                    let (r, g) = (rg[t * 2], rg[t * 2 + 1]);
                    let (r, g) = if signed { (snorm(r), snorm(g)) } else { (r, g) };
                    rgba[t * 4..t * 4 + 4].copy_from_slice(&[r, g, 0, 255]);
                }
            }
            F::Bc6hRgbUfloat | F::Bc6hRgbFloat => {
                let mut rgb = [0f32; 48];
                bcdec_rs::bc6h_float(src, &mut rgb, 12, format == F::Bc6hRgbFloat);
                for t in 0..16 {
                    let c = |k: usize| (rgb[t * 3 + k].clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
                    rgba[t * 4..t * 4 + 4].copy_from_slice(&[c(0), c(1), c(2), 255]);
                }
            }
            _ => return out,
        }
        place_block(&mut out, (w, h), bw, i, &rgba, 4);
    }
    out
}

/// Decodes BC6H blocks (`signed`: `Bc6hRgbFloat`) to linear RGB floats, 3 per texel, tightly
/// packed. Missing blocks decode as 0; never panics.
pub fn decode_bc6h(data: &[u8], width: u32, height: u32, signed: bool) -> Vec<f32> {
    let (w, h) = (width as usize, height as usize);
    let bw = w.div_ceil(4);
    let mut out = vec![0f32; w * h * 3];
    let mut block = [0f32; 48];
    for (i, src) in data.chunks_exact(16).take(bw * h.div_ceil(4)).enumerate() {
        bcdec_rs::bc6h_float(src, &mut block, 12, signed);
        place_block(&mut out, (w, h), bw, i, &block, 3);
    }
    out
}

/// Copies decoded block `i` (4x4 texels of `ch` values, row-major) into `out`, a `w x h` image of
/// `ch` values a texel whose blocks are `bw` to a row; texels past the edges are dropped.
fn place_block<T: Copy>(
    out: &mut [T],
    (w, h): (usize, usize),
    bw: usize,
    i: usize,
    block: &[T],
    ch: usize,
) {
    let (bx, by) = (i % bw, i / bw);
    for row in 0..4 {
        let y = by * 4 + row;
        if y >= h {
            break;
        }
        let x0 = bx * 4;
        let n = (w - x0).min(4);
        let dst = (y * w + x0) * ch;
        out[dst..dst + n * ch].copy_from_slice(&block[row * 4 * ch..(row * 4 + n) * ch]);
    }
}
