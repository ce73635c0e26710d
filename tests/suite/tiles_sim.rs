//! The tile planner and the slots, simulated on plain numbers: randomized scenes of virtual
//! textures (sizes, demand, priorities), a camera that moves, a cache of too few slots, loads
//! capped per frame and tiles given up by least recent use, as `VirtualTextures::update` runs
//! them. Every frame: the cache never holds more tiles than its slots, every tile the plan keeps
//! has its parent kept, and no tile left out is worth more than one kept (the plan is the
//! greedy optimum by worth per slot).

use mipflow::low_level::{PageTable, Slots, TileInput, TilePlanner};
use mipflow::testing::SplitMix64 as Rng;

/// A texture of `side`² at tiles of 128: its tiled levels' tile counts, then one tail level.
fn levels(side: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut s = side;
    while s > 128 {
        let n = s.div_ceil(128);
        out.push((n, n));
        s /= 2;
    }
    out.push((1, 1));
    out
}

struct Texture {
    table: PageTable,
    tiled: usize,
    pixels: Vec<f32>,
    priority: f32,
}

/// A view of texture `t`: a random corner near (level 0), the rest further.
fn view(rng: &mut Rng, t: &mut Texture) {
    t.pixels.iter_mut().for_each(|p| *p = 0.0);
    if !rng.chance(0.6) {
        return;
    }
    let finest = rng.below(t.tiled as u64 + 1) as usize;
    for level in finest..t.tiled {
        let (x_n, y_n) = t.table.tiles(level);
        let (cx, cy) = (
            rng.below(u64::from(x_n)) as u32,
            rng.below(u64::from(y_n)) as u32,
        );
        let r = 1 + rng.below(2) as u32;
        for ty in cy.saturating_sub(r)..(cy + r).min(y_n) {
            for tx in cx.saturating_sub(r)..(cx + r).min(x_n) {
                let e = t.table.first_entry(level) + (ty * x_n + tx) as usize;
                t.pixels[e] = rng.log_range(1.0, 5000.0) as f32;
            }
        }
    }
}

fn simulate(seed: u64) -> (usize, usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
    let n = 1 + rng.below(40) as usize;
    let mut textures: Vec<Texture> = (0..n)
        .map(|_| {
            let side = 128 << rng.below(5);
            let lv = levels(side);
            let mut table = PageTable::new(&lv);
            table.set(lv.len() - 1, 0, 0, Some(u32::MAX - 1));
            let entries = table.entries().len();
            Texture {
                table,
                tiled: lv.len() - 1,
                pixels: vec![0.0; entries],
                priority: if rng.chance(0.2) {
                    rng.range(0.0, 3.0) as f32
                } else {
                    1.0
                },
            }
        })
        .collect();
    let slot_count = 4 + rng.below(120) as u32;
    let mut slots = Slots::new(slot_count);
    let mut owner: Vec<Option<(usize, u8, u32, u32)>> = vec![None; slot_count as usize];
    let max_loads = 1 + rng.below(16) as usize;
    let mut planner = TilePlanner::default();
    for t in &mut textures {
        view(&mut rng, t);
    }
    let (mut frames, mut loads) = (0, 0);
    for frame in 0..200u64 {
        if rng.chance(0.05) {
            // A camera cut: every view changes.
            for t in &mut textures {
                view(&mut rng, t);
            }
        } else if rng.chance(0.3) {
            let k = rng.below(n as u64) as usize;
            view(&mut rng, &mut textures[k]);
        }
        let kept: Vec<_> = planner
            .plan_by(
                n,
                |k| TileInput {
                    id: k as u32,
                    table: &textures[k].table,
                    tiled_levels: textures[k].tiled,
                    pixels: &textures[k].pixels,
                    priority: textures[k].priority,
                },
                slot_count as usize,
            )
            .to_vec();
        assert!(
            kept.len() <= slot_count as usize,
            "seed {seed}, frame {frame}"
        );
        let keeps = |k: usize, level: u8, tx: u32, ty: u32| {
            kept.iter()
                .any(|w| w.texture as usize == k && w.level == level && w.tx == tx && w.ty == ty)
        };
        // Parents kept, and no tile left out (its parent kept or none) worth more than the
        // least worth kept, when the slots were full.
        let least = kept.iter().map(|w| w.worth).fold(f32::INFINITY, f32::min);
        for w in &kept {
            let t = &textures[w.texture as usize];
            if usize::from(w.level) + 1 < t.tiled {
                let (px_n, py_n) = t.table.tiles(usize::from(w.level) + 1);
                let parent = ((w.tx / 2).min(px_n - 1), (w.ty / 2).min(py_n - 1));
                assert!(
                    keeps(w.texture as usize, w.level + 1, parent.0, parent.1),
                    "seed {seed}, frame {frame}: {w:?} kept without its parent"
                );
            }
        }
        if kept.len() == slot_count as usize {
            for (k, t) in textures.iter().enumerate() {
                for level in 0..t.tiled {
                    let (x_n, y_n) = t.table.tiles(level);
                    for ty in 0..y_n {
                        for tx in 0..x_n {
                            if keeps(k, level as u8, tx, ty) {
                                continue;
                            }
                            // Its pixels: its own and every finer tile's under it.
                            let mut px = 0.0f32;
                            for l in 0..=level {
                                let (lx, ly) = t.table.tiles(l);
                                let d = level - l;
                                for y in 0..ly {
                                    for x in 0..lx {
                                        let (ax, ay) = (x >> d, y >> d);
                                        if ax.min(x_n - 1) == tx && ay.min(y_n - 1) == ty {
                                            px += t.pixels
                                                [t.table.first_entry(l) + (y * lx + x) as usize];
                                        }
                                    }
                                }
                            }
                            let worth = px * t.priority;
                            assert!(
                                worth <= least * 1.0001 || worth == 0.0,
                                "seed {seed}, frame {frame}: texture {k} tile {level}/({tx}, {ty}) worth {worth} left out, {least} kept"
                            );
                        }
                    }
                }
            }
        }
        // Streaming, as `update`: kept tiles touched, missing ones loaded (capped), a slot
        // taken from the least recently used tile the plan does not keep.
        for w in kept.iter().filter(|w| w.resident) {
            if let Some(s) = textures[w.texture as usize]
                .table
                .slot(w.level.into(), w.tx, w.ty)
            {
                slots.touch(s, frame);
            }
        }
        for w in kept.iter().filter(|w| !w.resident).take(max_loads) {
            let s = match slots.take(frame, false) {
                Some(s) => s,
                None => {
                    let Some((s, _)) = slots.least_recent(frame) else {
                        break;
                    };
                    let (k, level, tx, ty) = owner[s as usize].take().expect("an owner");
                    textures[k].table.set(level.into(), tx, ty, None);
                    slots.give_back(s);
                    slots.take(frame, false).expect("given back")
                }
            };
            textures[w.texture as usize]
                .table
                .set(w.level.into(), w.tx, w.ty, Some(s));
            owner[s as usize] = Some((w.texture as usize, w.level, w.tx, w.ty));
            loads += 1;
        }
        let resident: usize = textures.iter().map(|t| t.table.resident_tiles() - 1).sum();
        assert!(
            resident <= slot_count as usize,
            "seed {seed}, frame {frame}: {resident} tiles in {slot_count} slots"
        );
        frames += 1;
    }
    (frames, loads)
}

#[test]
fn tile_plans_stay_within_the_slots_and_take_the_worth_most() {
    let (mut frames, mut loads) = (0, 0);
    for seed in 0..100 {
        let (f, l) = simulate(seed);
        frames += f;
        loads += l;
    }
    eprintln!("{frames} frames, {loads} tiles loaded");
    assert!(loads > 1000, "the runs streamed tiles: {loads}");
}
