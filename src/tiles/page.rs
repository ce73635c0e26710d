//! A virtual texture's page table on the CPU: which tile of which level is in which slot of the
//! physical cache, and, for every tile of every level, the finest resident level covering it
//! (the entry the shader reads: one lookup gives a tile that is there, its own or an
//! ancestor's).

/// One resolved entry as the shader reads it: bits 0..24 the slot, 24..28 the level the slot
/// holds, bit 31 set when the entry holds anything (clear: nothing covers the tile, which the
/// floor rules out once it is resident).
pub(crate) fn entry(slot: u32, level: u8) -> u32 {
    (slot & SLOT_MASK) | u32::from(level & 0xF) << 24 | VALID
}

/// The entry bits of the slot.
pub(crate) const SLOT_MASK: u32 = (1 << 24) - 1;
/// The entry bit of a tile that something covers.
pub(crate) const VALID: u32 = 1 << 31;

/// One level's tiles.
#[derive(Debug, Clone)]
struct LevelPages {
    tiles_x: u32,
    tiles_y: u32,
    /// Where this level's entries start in [`PageTable::entries`].
    first: usize,
    /// The slot of each tile resident at this level (row-major), `u32::MAX` when it is not.
    own: Vec<u32>,
}

/// The page table of one virtual texture (see the module docs).
#[derive(Debug, Clone)]
pub struct PageTable {
    levels: Vec<LevelPages>,
    entries: Vec<u32>,
    /// Some entries may be stale: [`PageTable::resolve`] recomputes them.
    dirty: bool,
    resident_tiles: usize,
}

impl PageTable {
    /// The table of a texture whose level `l` has `tiles[l]` tiles across and down (level 0
    /// first; each level's tiles are the parents of the next finer one's, two by two). Nothing
    /// resident.
    pub fn new(tiles: &[(u32, u32)]) -> Self {
        let mut first = 0;
        let levels = tiles
            .iter()
            .map(|&(x, y)| {
                let n = x as usize * y as usize;
                let l = LevelPages {
                    tiles_x: x,
                    tiles_y: y,
                    first,
                    own: vec![u32::MAX; n],
                };
                first += n;
                l
            })
            .collect();
        Self {
            levels,
            entries: vec![0; first],
            dirty: false,
            resident_tiles: 0,
        }
    }

    /// Levels in the table.
    #[inline]
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// Tiles across and down `level`.
    #[inline]
    pub fn tiles(&self, level: usize) -> (u32, u32) {
        self.levels
            .get(level)
            .map_or((0, 0), |l| (l.tiles_x, l.tiles_y))
    }

    /// Where `level`'s entries start in [`PageTable::entries`].
    #[inline]
    pub fn first_entry(&self, level: usize) -> usize {
        self.levels.get(level).map_or(0, |l| l.first)
    }

    /// Every entry, level 0 first, each level's tiles row-major: what the GPU's page buffer
    /// holds. Call [`PageTable::resolve`] first after changes.
    #[inline]
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// Tiles resident at their own level.
    pub fn resident_tiles(&self) -> usize {
        self.resident_tiles
    }

    /// The slot holding tile `(tx, ty)` of `level` itself, if it is resident.
    #[inline]
    pub fn slot(&self, level: usize, tx: u32, ty: u32) -> Option<u32> {
        let l = self.levels.get(level)?;
        if tx >= l.tiles_x || ty >= l.tiles_y {
            return None;
        }
        let s = l.own[(ty * l.tiles_x + tx) as usize];
        (s != u32::MAX).then_some(s)
    }

    /// Records tile `(tx, ty)` of `level` as held by `slot` (`None`: no longer resident).
    /// Returns the slot it had. Out-of-range tiles are ignored (`None`).
    pub fn set(&mut self, level: usize, tx: u32, ty: u32, slot: Option<u32>) -> Option<u32> {
        let l = self.levels.get_mut(level)?;
        if tx >= l.tiles_x || ty >= l.tiles_y {
            return None;
        }
        let own = &mut l.own[(ty * l.tiles_x + tx) as usize];
        let old = (*own != u32::MAX).then_some(*own);
        *own = slot.unwrap_or(u32::MAX);
        self.resident_tiles =
            self.resident_tiles - usize::from(old.is_some()) + usize::from(slot.is_some());
        self.dirty = true;
        old
    }

    /// Recomputes every entry from the coarsest level down: a tile's own slot where it is
    /// resident, else its parent's entry (two by two: tile `(x, y)` of level `l` lies in tile
    /// `(x / 2, y / 2)` of level `l + 1`, clamped to that level's tiles). Returns whether
    /// anything was recomputed (false when nothing changed since the last call).
    pub fn resolve(&mut self) -> bool {
        if !std::mem::take(&mut self.dirty) {
            return false;
        }
        for level in (0..self.levels.len()).rev() {
            let split = self
                .levels
                .get(level + 1)
                .map_or(self.entries.len(), |l| l.first);
            let (lower, upper) = self.entries.split_at_mut(split);
            let l = &self.levels[level];
            let parent = self.levels.get(level + 1);
            for ty in 0..l.tiles_y {
                for tx in 0..l.tiles_x {
                    let k = (ty * l.tiles_x + tx) as usize;
                    let own = l.own[k];
                    lower[l.first + k] = if own != u32::MAX {
                        entry(own, level as u8)
                    } else if let Some(p) = parent {
                        let (px, py) = ((tx / 2).min(p.tiles_x - 1), (ty / 2).min(p.tiles_y - 1));
                        upper[(py * p.tiles_x + px) as usize]
                    } else {
                        0
                    };
                }
            }
        }
        true
    }

    /// The resolved entry of tile `(tx, ty)` of `level` (0 outside the table).
    pub fn entry(&self, level: usize, tx: u32, ty: u32) -> u32 {
        match self.levels.get(level) {
            Some(l) if tx < l.tiles_x && ty < l.tiles_y => {
                self.entries[l.first + (ty * l.tiles_x + tx) as usize]
            }
            _ => 0,
        }
    }
}

/// The physical cache's slots: which are free, and the least recently used of those in use.
#[derive(Debug, Clone)]
pub struct Slots {
    /// Per slot, the frame it was last used (`u64::MAX`: free; `u64::MAX - 1`: pinned, never
    /// reused).
    last_used: Vec<u64>,
    free: Vec<u32>,
}

/// A pinned slot's `last_used`: never the least recently used.
const PINNED: u64 = u64::MAX - 1;
const FREE: u64 = u64::MAX;

impl Slots {
    /// `n` free slots.
    pub fn new(n: u32) -> Self {
        Self {
            last_used: vec![FREE; n as usize],
            free: (0..n).rev().collect(),
        }
    }

    /// Slots in all.
    pub fn len(&self) -> usize {
        self.last_used.len()
    }

    /// Whether there are none at all.
    pub fn is_empty(&self) -> bool {
        self.last_used.is_empty()
    }

    /// Adds free slots up to `n` in all (none when there are that many already).
    pub fn extend_to(&mut self, n: u32) {
        let old = self.last_used.len() as u32;
        if n > old {
            self.last_used.resize(n as usize, FREE);
            self.free.extend((old..n).rev());
        }
    }

    /// Slots free now.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// Takes a free slot, used at `frame` (or pinned: never given back by
    /// [`Slots::least_recent`]). `None` when every slot is taken.
    pub fn take(&mut self, frame: u64, pinned: bool) -> Option<u32> {
        let s = self.free.pop()?;
        self.last_used[s as usize] = if pinned { PINNED } else { frame };
        Some(s)
    }

    /// Marks slot `s` used at `frame` (a pinned slot stays pinned).
    pub fn touch(&mut self, s: u32, frame: u64) {
        if let Some(t) = self.last_used.get_mut(s as usize)
            && *t != FREE
            && *t != PINNED
        {
            *t = frame;
        }
    }

    /// Gives slot `s` back.
    pub fn give_back(&mut self, s: u32) {
        if let Some(t) = self.last_used.get_mut(s as usize)
            && *t != FREE
        {
            *t = FREE;
            self.free.push(s);
        }
    }

    /// The slot in use (not pinned) used longest ago, and when, if it was last used before
    /// `before`: what to give up for a tile wanted more. A pass over the slots (the tile
    /// loader's path, not the frame's).
    pub fn least_recent(&self, before: u64) -> Option<(u32, u64)> {
        self.last_used
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t < PINNED && t < before)
            .min_by_key(|&(_, &t)| t)
            .map(|(s, &t)| (s as u32, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4x4-tile level 0, 2x2 level 1, 1x1 level 2: with only level 2 resident every tile
    /// falls back to it; a level 1 tile then covers its four children; a level 0 tile only
    /// itself; taking it away falls back again.
    #[test]
    fn entries_fall_back_to_the_finest_resident_ancestor() {
        let mut p = PageTable::new(&[(4, 4), (2, 2), (1, 1)]);
        assert!(p.entries().iter().all(|&e| e == 0));
        p.set(2, 0, 0, Some(7));
        assert!(p.resolve());
        assert!(!p.resolve(), "nothing changed since");
        assert!(p.entries().iter().all(|&e| e == entry(7, 2)));
        p.set(1, 1, 0, Some(3));
        p.set(0, 3, 1, Some(9));
        p.resolve();
        assert_eq!(p.entry(1, 1, 0), entry(3, 1));
        assert_eq!(p.entry(1, 0, 0), entry(7, 2));
        // Level 1 tile (1, 0) covers level 0 tiles (2..4, 0..2).
        for (x, y) in [(2, 0), (3, 0), (2, 1)] {
            assert_eq!(p.entry(0, x, y), entry(3, 1), "({x}, {y})");
        }
        assert_eq!(p.entry(0, 3, 1), entry(9, 0));
        assert_eq!(p.entry(0, 1, 1), entry(7, 2));
        assert_eq!(p.entry(0, 2, 2), entry(7, 2));
        assert_eq!(p.resident_tiles(), 3);
        assert_eq!(p.set(1, 1, 0, None), Some(3));
        p.resolve();
        assert_eq!(p.entry(0, 2, 0), entry(7, 2));
        assert_eq!(p.entry(0, 3, 1), entry(9, 0), "its own tile stays");
        assert_eq!(p.slot(0, 3, 1), Some(9));
        assert_eq!(p.slot(1, 1, 0), None);
        // Out of range: ignored, no panic.
        assert_eq!(p.set(0, 4, 0, Some(1)), None);
        assert_eq!(p.set(5, 0, 0, Some(1)), None);
        assert_eq!(p.entry(0, 9, 9), 0);
    }

    /// A level whose tile count is odd: the last tile's parent is clamped to the coarser
    /// level's last tile (a 5-tile row over a 3-tile one).
    #[test]
    fn odd_tile_counts_find_their_parent() {
        let mut p = PageTable::new(&[(5, 3), (3, 2), (2, 1), (1, 1)]);
        p.set(3, 0, 0, Some(0));
        p.set(1, 2, 1, Some(4));
        p.resolve();
        assert_eq!(p.entry(0, 4, 2), entry(4, 1));
        assert_eq!(p.entry(0, 4, 3), 0, "outside");
        assert_eq!(p.entry(2, 1, 0), entry(0, 3));
    }

    /// Slots: taken until none is left, the least recently used one found (pinned ones never),
    /// given back and taken again.
    #[test]
    fn slots_are_taken_touched_and_given_back() {
        let mut s = Slots::new(3);
        let a = s.take(1, true).unwrap();
        let b = s.take(2, false).unwrap();
        let c = s.take(3, false).unwrap();
        assert_eq!(s.take(4, false), None);
        assert_eq!(s.least_recent(10), Some((b, 2)));
        s.touch(b, 5);
        s.touch(a, 6);
        assert_eq!(s.least_recent(10), Some((c, 3)));
        assert_eq!(s.least_recent(3), None, "nothing used before frame 3");
        s.give_back(c);
        s.give_back(c);
        assert_eq!(s.free(), 1);
        assert_eq!(s.take(7, false), Some(c));
        assert_eq!(s.least_recent(u64::MAX - 2), Some((b, 5)));
    }
}
