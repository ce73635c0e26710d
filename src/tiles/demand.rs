//! Demand for tiles from the CPU: a UV rectangle at a level, for a game without GPU feedback or
//! a surface about to come into view.

use super::*;

impl VirtualTextures {
    /// Demand from the CPU for this frame (a fallback where the GPU feedback is off, or for a
    /// surface about to come into view): `pixels` output pixels want level `level` (fractional:
    /// its floor) over the UV rectangle `uv_min..uv_max` of `id` (in texture repeats; clamped
    /// to one repeat, or wrapped for a repeating texture), spread over the tiles it covers by
    /// area. Summed with the feedback in the next [`VirtualTextures::update`], then cleared.
    /// False for an unknown texture or no pixels.
    pub fn add_demand(
        &mut self,
        id: VtId,
        level: f32,
        uv_min: [f32; 2],
        uv_max: [f32; 2],
        pixels: f32,
    ) -> bool {
        if self.live(id).is_none() {
            return false;
        }
        let e = &mut self.entries[id.index as usize];
        if !(pixels > 0.0 && pixels.is_finite()) || level.is_nan() {
            return false;
        }
        let n = e.table.level_count();
        let l = (level.max(0.0) as usize).min(n - 1);
        let (x_n, y_n) = e.table.tiles(l);
        let (w, h) = e.info.level_dims(l);
        let repeat = e.gpu.address == 1;
        // The rectangle in texels of the level, clamped or wrapped into one repeat.
        let span = |a: f32, b: f32, size: u32| -> (f32, f32) {
            let (a, b) = (a.min(b), a.max(b));
            if repeat && b - a < 1.0 {
                let off = a.floor();
                ((a - off) * size as f32, (b - off) * size as f32)
            } else {
                (
                    a.clamp(0.0, 1.0) * size as f32,
                    b.clamp(0.0, 1.0) * size as f32,
                )
            }
        };
        let ((x0, x1), (y0, y1)) = (span(uv_min[0], uv_max[0], w), span(uv_min[1], uv_max[1], h));
        let area = ((x1 - x0) * (y1 - y0)).max(1e-6);
        let end = self.page_ranges.end as usize;
        if self.cpu_pixels.len() < end {
            self.cpu_pixels.resize(end, 0.0);
        }
        let tile = self.tile as f32;
        let first = e.page_base as usize + e.table.first_entry(l);
        let (tx0, tx1) = ((x0 / tile) as u32, ((x1 / tile).ceil() as u32).max(1));
        let (ty0, ty1) = ((y0 / tile) as u32, ((y1 / tile).ceil() as u32).max(1));
        for ty in ty0..ty1 {
            for tx in tx0..tx1 {
                // A texel wider than the level wraps to its first tile.
                let (cx, cy) = (tx % x_n, ty % y_n);
                let ox = (x1.min((tx + 1) as f32 * tile) - x0.max(tx as f32 * tile)).max(0.0);
                let oy = (y1.min((ty + 1) as f32 * tile) - y0.max(ty as f32 * tile)).max(0.0);
                let share = if x1 - x0 <= 0.0 || y1 - y0 <= 0.0 {
                    1.0
                } else {
                    ox * oy / area
                };
                self.cpu_pixels[first + (cy * x_n + cx) as usize] += pixels * share;
            }
        }
        e.cpu_demand = true;
        true
    }
}
