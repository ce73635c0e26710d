//! CPU BC7 decoding, for tests, the bench's RGBA8 baseline and a future no-BC fallback.

/// Decodes `width` x `height` texels of BC7 blocks (row-major, edge blocks padded to 4x4) to tightly
/// packed RGBA8. Blocks missing from a short `data` decode as transparent black; never panics.
pub fn decode_bc7(data: &[u8], width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let bw = w.div_ceil(4);
    let mut out = vec![0u8; w * h * 4];
    let mut block = [0u8; 64];
    for (i, src) in data.chunks_exact(16).take(bw * h.div_ceil(4)).enumerate() {
        let (bx, by) = (i % bw, i / bw);
        bcdec_rs::bc7(src, &mut block, 16);
        for row in 0..4 {
            let y = by * 4 + row;
            if y >= h {
                break;
            }
            let x0 = bx * 4;
            let n = (w - x0).min(4);
            let dst = (y * w + x0) * 4;
            out[dst..dst + n * 4].copy_from_slice(&block[row * 16..row * 16 + n * 4]);
        }
    }
    out
}
