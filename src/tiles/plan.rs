//! Which tiles to keep: the tile planner. Tiles are units of residency like a texture's levels,
//! priced in the same currency (blurred pixel-octaves): a tile of level `l` that is resident
//! saves one octave over every pixel in its area that wants level `l` or finer (without it, they
//! get its parent, one level coarser). Every tile costs one slot, so the plan takes the tiles
//! worth most, a parent always before its children (its pixels include theirs), until the slots
//! are full; a resident tile counts [`TilePlanner::keep_bonus`] times its worth, so nothing is
//! dropped for a tile worth barely more.
//!
//! Cost: linear in the tiles of the textures seen (their demand is summed up the levels) plus a
//! sort of the tiles with demand; the tiles of textures no view sees are not gone through.

use super::page::PageTable;

/// One tile the plan keeps or wants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileWant {
    /// The virtual texture.
    pub texture: u32,
    /// Its level.
    pub level: u8,
    /// Its column and row in the level.
    pub tx: u32,
    /// Row.
    pub ty: u32,
    /// Pixel-octaves it saves (priority-weighted; the keep bonus included for a resident one).
    pub worth: f32,
    /// Whether it is resident now.
    pub resident: bool,
    /// Its texture's position in the planner's input.
    input: u32,
    /// Its rank: worth, then the coarser level, then the order it was found in.
    key: u64,
}

/// The bits of a tile's rank that order equals by the order they were found in.
const SEQ_MASK: u64 = (1 << 27) - 1;

/// The tile planner's state: scratch kept between frames (no allocation once grown).
#[derive(Debug)]
pub struct TilePlanner {
    /// A resident tile counts this many times its worth (default 1.25, as the texture
    /// planner's `keep_bonus`).
    pub keep_bonus: f32,
    sums: Vec<f32>,
    wants: Vec<TileWant>,
    chosen: Vec<bool>,
    bases: Vec<usize>,
    order: Vec<u32>,
    keep: Vec<TileWant>,
}

impl Default for TilePlanner {
    fn default() -> Self {
        Self {
            keep_bonus: 1.25,
            sums: Vec::new(),
            wants: Vec::new(),
            chosen: Vec::new(),
            bases: Vec::new(),
            order: Vec::new(),
            keep: Vec::new(),
        }
    }
}

/// One virtual texture as the tile planner sees it.
#[derive(Clone, Copy)]
pub struct TileInput<'a> {
    /// The texture's id, reported in [`TileWant::texture`].
    pub id: u32,
    /// Its page table (which tiles are resident; the tiled levels are those with more than one
    /// tile, or below `tiled_levels`).
    pub table: &'a PageTable,
    /// Levels `0..tiled_levels` are tiled; the others are the tail, always resident.
    pub tiled_levels: usize,
    /// Pixels that want exactly each entry's level at its tile (indexed as the table's
    /// entries).
    pub pixels: &'a [f32],
    /// Weight of its blur (1 by default).
    pub priority: f32,
}

impl TilePlanner {
    /// The tiles to hold in `slots` slots: the worth most (a parent with its children), those
    /// to load first (worth most first), then the resident ones kept. Tiles that no pixel
    /// wants are not kept (a resident one among them is the first to give up its slot).
    pub fn plan(&mut self, textures: &[TileInput<'_>], slots: usize) -> &[TileWant] {
        self.plan_by(textures.len(), |k| textures[k], slots)
    }

    /// [`TilePlanner::plan`] over `n` textures given by `input` (called more than once for
    /// each; no slice of them needed).
    pub fn plan_by<'a>(
        &mut self,
        n: usize,
        input: impl Fn(usize) -> TileInput<'a>,
        slots: usize,
    ) -> &[TileWant] {
        self.wants.clear();
        for k in 0..n {
            self.add_texture(k as u32, &input(k));
        }
        // The `slots` worth most: a partition, not a sort (linear in the tiles with demand).
        // Between equals the coarser level ranks first, so that a parent (worth at least its
        // children's, its pixels being theirs and its own) ranks before its children and the
        // best `slots` hold the parents of the children they hold; the keep bonus can break
        // that (a resident child, its parent not resident), and such a child is dropped below.
        for (seq, w) in self.wants.iter_mut().enumerate() {
            w.key = u64::from(w.worth.to_bits()) << 32
                | u64::from(w.level) << 27
                | (SEQ_MASK - (seq as u64 & SEQ_MASK));
        }
        let k = slots.min(self.wants.len());
        if k < self.wants.len() && k > 0 {
            self.wants
                .select_nth_unstable_by(k - 1, |a, b| b.key.cmp(&a.key));
        }
        self.bases.clear();
        let mut total = 0;
        for i in 0..n {
            self.bases.push(total);
            total += input(i).table.entries().len();
        }
        if self.chosen.len() < total {
            self.chosen.resize(total, false);
        }
        let index = |w: &TileWant, t: &TileInput<'_>, bases: &[usize]| {
            let (x_n, _) = t.table.tiles(usize::from(w.level));
            bases[w.input as usize]
                + t.table.first_entry(usize::from(w.level))
                + (w.ty * x_n + w.tx) as usize
        };
        for w in &self.wants[..k] {
            let t = input(w.input as usize);
            self.chosen[index(w, &t, &self.bases)] = true;
        }
        // Coarse levels first (a counting sort of the chosen by level), so that a tile dropped
        // for want of its parent is unmarked before its own children are judged.
        let mut starts = [0usize; 16];
        for w in &self.wants[..k] {
            starts[15 - usize::from(w.level.min(15))] += 1;
        }
        let mut at = 0;
        for s in &mut starts {
            let c = *s;
            *s = at;
            at += c;
        }
        self.order.clear();
        self.order.resize(k, 0);
        for (i, w) in self.wants[..k].iter().enumerate() {
            let slot = &mut starts[15 - usize::from(w.level.min(15))];
            self.order[*slot] = i as u32;
            *slot += 1;
        }
        self.keep.clear();
        for &i in &self.order {
            let w = &self.wants[i as usize];
            let t = input(w.input as usize);
            let level = usize::from(w.level);
            if level + 1 < t.tiled_levels {
                let (px_n, py_n) = t.table.tiles(level + 1);
                let (px, py) = ((w.tx / 2).min(px_n - 1), (w.ty / 2).min(py_n - 1));
                let parent = self.bases[w.input as usize]
                    + t.table.first_entry(level + 1)
                    + (py * px_n + px) as usize;
                if !self.chosen[parent] {
                    self.chosen[index(w, &t, &self.bases)] = false;
                    continue;
                }
            }
            self.keep.push(*w);
        }
        // The marks cleared for the next plan (only those set: no pass over every entry).
        for w in &self.wants[..k] {
            let t = input(w.input as usize);
            self.chosen[index(w, &t, &self.bases)] = false;
        }
        // The tiles to load first, worth most first (usually few: sorted alone), then the
        // resident ones kept.
        let mut to_load = 0;
        for i in 0..self.keep.len() {
            if !self.keep[i].resident {
                self.keep.swap(i, to_load);
                to_load += 1;
            }
        }
        self.keep[..to_load].sort_unstable_by_key(|w| std::cmp::Reverse(w.key));
        &self.keep
    }

    /// The pixel-octaves the tiles ranked `from..to` by worth in the last plan would save (the
    /// keep bonus taken out: what a tile is worth, not what keeping it is); 0 past the tiles
    /// with demand. What `to - from` more slots would buy (`from` = the slots), or what the
    /// last `to - from` slots hold (`to` = the slots): a cache's size is traded against the
    /// textures' levels with it. Linear in the tiles with demand (partitions, no sort); the
    /// plan's result ([`TilePlanner::kept`]) is untouched.
    pub fn worth_of_ranks(&mut self, from: usize, to: usize) -> f32 {
        let n = self.wants.len();
        let (from, to) = (from.min(n), to.min(n));
        if from >= to {
            return 0.0;
        }
        let by_rank = |a: &TileWant, b: &TileWant| b.key.cmp(&a.key);
        if to < n {
            self.wants.select_nth_unstable_by(to, by_rank);
        }
        if from > 0 {
            self.wants[..to].select_nth_unstable_by(from, by_rank);
        }
        let bonus = self.keep_bonus.max(1.0);
        self.wants[from..to]
            .iter()
            .map(|w| if w.resident { w.worth / bonus } else { w.worth })
            .sum()
    }

    /// The tiles of the last plan.
    pub fn kept(&self) -> &[TileWant] {
        &self.keep
    }

    /// Whether tile `(tx, ty)` of `level` of texture `texture` (its index in the last plan's
    /// input) is in the last plan.
    pub fn keeps(&self, texture: u32, level: u8, tx: u32, ty: u32) -> bool {
        self.keep
            .iter()
            .any(|w| w.texture == texture && w.level == level && w.tx == tx && w.ty == ty)
    }

    /// Adds the tiles of texture `k` (its position in the input) with demand (or resident) to `wants`: the pixels wanting each
    /// tiled level or finer, summed up the levels (a tile's pixels are its own level's and its
    /// children's sums).
    fn add_texture(&mut self, k: u32, t: &TileInput<'_>) {
        let table = t.table;
        let n = table.entries().len();
        let weight = if t.priority > 0.0 { t.priority } else { 0.0 };
        if t.pixels.len() < n || weight == 0.0 {
            return;
        }
        self.sums.clear();
        self.sums.extend_from_slice(&t.pixels[..n]);
        let levels = t.tiled_levels.min(table.level_count());
        // Level 0 up: each tile's sum goes to its parent.
        for level in 0..levels.saturating_sub(1) {
            let (x_n, y_n) = table.tiles(level);
            let (px_n, py_n) = table.tiles(level + 1);
            let (first, pfirst) = (table.first_entry(level), table.first_entry(level + 1));
            for ty in 0..y_n {
                for tx in 0..x_n {
                    let v = self.sums[first + (ty * x_n + tx) as usize];
                    if v > 0.0 {
                        let (px, py) = ((tx / 2).min(px_n - 1), (ty / 2).min(py_n - 1));
                        self.sums[pfirst + (py * px_n + px) as usize] += v;
                    }
                }
            }
        }
        for level in 0..levels {
            let (x_n, y_n) = table.tiles(level);
            let first = table.first_entry(level);
            for ty in 0..y_n {
                for tx in 0..x_n {
                    let pixels = self.sums[first + (ty * x_n + tx) as usize];
                    if pixels <= 0.0 {
                        continue;
                    }
                    let resident = table.slot(level, tx, ty).is_some();
                    let bonus = if resident {
                        self.keep_bonus.max(1.0)
                    } else {
                        1.0
                    };
                    self.wants.push(TileWant {
                        texture: t.id,
                        input: k,
                        key: 0,
                        level: level as u8,
                        tx,
                        ty,
                        worth: pixels * weight * bonus,
                        resident,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texture 0 of `t` with `pixels`' demand, its three levels tiled, priority 1.
    fn input_of<'a>(t: &'a PageTable, pixels: &'a [f32]) -> TileInput<'a> {
        TileInput {
            id: 0,
            table: t,
            tiled_levels: 3,
            pixels,
            priority: 1.0,
        }
    }

    /// A texture of 4x4, 2x2 and 1x1 tiles (three tiled levels) and a tail level.
    fn table() -> PageTable {
        let mut t = PageTable::new(&[(4, 4), (2, 2), (1, 1), (1, 1)]);
        t.set(3, 0, 0, Some(0));
        t
    }

    /// A corner wanted at level 0 takes its level-0 tile, its parent and the root, in that
    /// order of worth reversed (parents first); with fewer slots, the parents only.
    #[test]
    fn a_near_corner_pays_for_its_corner() {
        let t = table();
        let mut pixels = vec![0.0; t.entries().len()];
        // 500 pixels want level 0 in tile (3, 3); 2000 want level 2 elsewhere.
        pixels[t.first_entry(0) + 15] = 500.0;
        pixels[t.first_entry(2)] = 2000.0;
        let input = [input_of(&t, &pixels)];
        let mut p = TilePlanner::default();
        let kept: Vec<(u8, u32, u32)> = p
            .plan(&input, 8)
            .iter()
            .map(|w| (w.level, w.tx, w.ty))
            .collect();
        assert_eq!(kept, [(2, 0, 0), (1, 1, 1), (0, 3, 3)]);
        assert_eq!(p.kept()[0].worth, 2500.0);
        let kept: Vec<u8> = p.plan(&input, 2).iter().map(|w| w.level).collect();
        assert_eq!(kept, [2, 1]);
        assert!(p.keeps(0, 1, 1, 1) && !p.keeps(0, 0, 3, 3));
    }

    /// The keep bonus: a resident tile is not given up for one worth barely more; for one worth
    /// clearly more, it is.
    #[test]
    fn a_resident_tile_is_kept_against_one_worth_barely_more() {
        let mut t = table();
        t.set(2, 0, 0, Some(1));
        t.set(1, 0, 0, Some(2));
        let mut pixels = vec![0.0; t.entries().len()];
        let (a, b) = (t.first_entry(1), t.first_entry(1) + 3);
        pixels[a] = 100.0; // resident tile (0, 0) of level 1
        pixels[b] = 110.0; // tile (1, 1), not resident
        let input = [input_of(&t, &pixels)];
        let mut p = TilePlanner::default();
        p.plan(&input, 2);
        assert!(p.keeps(0, 1, 0, 0) && !p.keeps(0, 1, 1, 1));
        pixels[b] = 200.0;
        let input = [input_of(&t, &pixels)];
        p.plan(&input, 2);
        assert!(!p.keeps(0, 1, 0, 0) && p.keeps(0, 1, 1, 1));
    }

    /// The worth of tiles by rank: what more slots would buy and what the last ones hold.
    #[test]
    fn the_worth_of_ranks_prices_more_or_fewer_slots() {
        let t = table();
        let mut pixels = vec![0.0; t.entries().len()];
        // Four level-1 tiles wanted by 400, 300, 200 and 100 pixels: their sums go up to the
        // root (1000), so the ranks are 1000, 400, 300, 200, 100.
        for (k, v) in [400.0, 300.0, 200.0, 100.0].into_iter().enumerate() {
            pixels[t.first_entry(1) + k] = v;
        }
        let input = [input_of(&t, &pixels)];
        let mut p = TilePlanner::default();
        assert_eq!(p.plan(&input, 2).len(), 2);
        assert_eq!(p.worth_of_ranks(2, 4), 500.0, "two more slots");
        assert_eq!(p.worth_of_ranks(0, 2), 1400.0, "the two slots held");
        assert_eq!(p.worth_of_ranks(1, 2), 400.0, "the last slot");
        assert_eq!(p.worth_of_ranks(4, 10), 100.0, "past the tiles wanted");
        assert_eq!(p.worth_of_ranks(5, 10), 0.0);
        // The plan is untouched.
        assert_eq!(p.kept().iter().map(|w| w.worth).sum::<f32>(), 1400.0);
        // A resident tile counts its worth, not the keep bonus.
        let mut t = table();
        t.set(2, 0, 0, Some(1));
        let input = [TileInput {
            table: &t,
            ..input[0]
        }];
        p.plan(&input, 1);
        assert_eq!(p.worth_of_ranks(0, 1), 1000.0);
    }

    /// Two textures share the slots by worth; a priority of 0 takes none; no demand, no tiles.
    #[test]
    fn textures_share_the_slots_by_worth() {
        let (t1, t2) = (table(), table());
        let n = t1.entries().len();
        let mut p1 = vec![0.0; n];
        let mut p2 = vec![0.0; n];
        p1[t1.first_entry(1)] = 300.0;
        p2[t2.first_entry(1) + 1] = 100.0;
        let inputs = |w2: f32| {
            [
                TileInput {
                    id: 0,
                    table: &t1,
                    tiled_levels: 3,
                    pixels: &p1,
                    priority: 1.0,
                },
                TileInput {
                    id: 1,
                    table: &t2,
                    tiled_levels: 3,
                    pixels: &p2,
                    priority: w2,
                },
            ]
        };
        let mut p = TilePlanner::default();
        let kept: Vec<(u32, u8)> = p
            .plan(&inputs(1.0), 3)
            .iter()
            .map(|w| (w.texture, w.level))
            .collect();
        assert_eq!(kept, [(0, 2), (0, 1), (1, 2)]);
        assert!(p.plan(&inputs(0.0), 10).iter().all(|w| w.texture == 0));
        let none = vec![0.0; n];
        let empty = [TileInput {
            id: 0,
            table: &t1,
            tiled_levels: 3,
            pixels: &none,
            priority: 1.0,
        }];
        assert!(p.plan(&empty, 10).is_empty());
    }
}
