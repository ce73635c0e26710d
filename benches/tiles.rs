//! Tile planning per frame (`TilePlanner`, what `VirtualTextures::update` runs): 10,000 virtual
//! textures of 1024² at tiles of 128 (92 page entries each with the tail: 920,000 virtual
//! tiles), 4,096 slots, a share of the textures seen (the plan goes through those only), each
//! seen texture with demand on its near tiles at level 0 and coarser ones further, moving a
//! little every frame (every plan made again).
//!
//! `cargo bench --bench tiles`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mipflow::low_level::{PageTable, TileInput, TilePlanner};

const TEXTURES: usize = 10_000;
const SLOTS: usize = 4_096;

/// 1024² at 128: 8x8, 4x4, 2x2 tiled levels and 8 tail levels.
fn table() -> PageTable {
    let mut levels = vec![(8, 8), (4, 4), (2, 2)];
    levels.extend(std::iter::repeat_n((1, 1), 8));
    let mut t = PageTable::new(&levels);
    for l in 3..11 {
        t.set(l, 0, 0, Some(0));
    }
    t
}

/// Texture `k` as the planner's input.
fn input<'a>(tables: &'a [PageTable], pixels: &'a [Vec<f32>], k: usize) -> TileInput<'a> {
    TileInput {
        id: k as u32,
        table: &tables[k],
        tiled_levels: 3,
        pixels: &pixels[k],
        priority: 1.0,
    }
}

fn tiles(c: &mut Criterion) {
    let mut group = c.benchmark_group("tiles");
    group.sample_size(30);
    let mut tables: Vec<PageTable> = (0..TEXTURES).map(|_| table()).collect();
    let entries = tables[0].entries().len();
    for seen_share in [0.05, 0.5] {
        let seen = (TEXTURES as f64 * seen_share) as usize;
        // Each seen texture: a corner of level-0 tiles near, its level-1 and level-2 tiles
        // further (pixels per exact level), varying by texture.
        let mut pixels: Vec<Vec<f32>> = (0..seen)
            .map(|k| {
                let t = &tables[k];
                let mut p = vec![0.0f32; entries];
                let near = 1 + k % 3;
                for y in 0..near as u32 {
                    for x in 0..near as u32 {
                        p[t.first_entry(0) + (y * 8 + x) as usize] = 200.0 + (k % 17) as f32;
                    }
                }
                for i in 0..4 {
                    p[t.first_entry(1) + i] = 500.0 + (k % 13) as f32;
                }
                p[t.first_entry(2)] = 1000.0;
                p
            })
            .collect();
        let mut planner = TilePlanner::default();
        let mut frame = 0u32;
        // Streamed as `VirtualTextures::update` does, untimed: the plan's missing tiles made
        // resident (64 a frame) until none is missing, so the timed plans see a converged
        // cache (a few tiles to load a frame, not thousands).
        let mut next_slot = 0u32;
        for _ in 0..200 {
            let kept: Vec<_> = planner
                .plan_by(seen, |k| input(&tables, &pixels, k), SLOTS)
                .iter()
                .filter(|w| !w.resident)
                .take(64)
                .copied()
                .collect();
            if kept.is_empty() {
                break;
            }
            for w in kept {
                next_slot += 1;
                tables[w.texture as usize].set(w.level.into(), w.tx, w.ty, Some(next_slot));
            }
        }
        group.bench_function(BenchmarkId::new("moving", format!("{}-seen", seen)), |b| {
            b.iter(|| {
                frame += 1;
                // The view moves: one texture in 16 gets new pixels (a copy of the plan's
                // cost to see them).
                let k = (frame as usize * 16) % seen.max(1);
                for p in pixels.iter_mut().skip(k).step_by(16) {
                    p[0] *= if frame.is_multiple_of(2) {
                        1.01
                    } else {
                        1.0 / 1.01
                    };
                }
                let kept = planner
                    .plan_by(seen, |k| input(&tables, &pixels, k), SLOTS)
                    .len();
                black_box(kept)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tiles);
criterion_main!(benches);
