//! A cache's textures coming and going: [`VirtualTextures::add`] and
//! [`VirtualTextures::remove`], the page entries they take and give back, and each texture's
//! tail, read once and kept in memory.
//!
//! A game that streams an open world adds and removes virtual textures for as long as it runs,
//! so nothing here is used up by doing that: a removed texture's index (its `VtInfo` in the
//! shader's buffer) and its page entries are taken by the next texture added, and an id carries
//! a generation, so that an id kept past its texture's removal is refused rather than naming
//! the texture that took its place. Tiles read for a removed texture that arrive later, and
//! feedback counted for it, are dropped.

use super::*;

/// Ranges of page entries given back, by first entry, none touching another (merged when
/// given back), and the end of the entries ever used.
#[derive(Debug, Default)]
pub(super) struct PageRanges {
    free: Vec<(u32, u32)>,
    /// One past the last entry in use: what the feedback copies each frame.
    pub(super) end: u32,
}

impl PageRanges {
    /// `count` entries, first fit among those given back, else after the last in use; `None`
    /// when that passes `max`.
    pub(super) fn take(&mut self, count: u32, max: u32) -> Option<u32> {
        if let Some(k) = self.free.iter().position(|&(_, n)| n >= count) {
            let (base, n) = self.free[k];
            if n == count {
                self.free.remove(k);
            } else {
                self.free[k] = (base + count, n - count);
            }
            return Some(base);
        }
        let base = self.end;
        let end = base.checked_add(count).filter(|&e| e <= max)?;
        self.end = end;
        Some(base)
    }

    /// Gives back `count` entries from `base`, merged with their neighbours; a range that ends
    /// at `end` lowers it.
    pub(super) fn give_back(&mut self, base: u32, count: u32) {
        if count == 0 {
            return;
        }
        let k = self.free.partition_point(|&(b, _)| b < base);
        self.free.insert(k, (base, count));
        if let Some(&(nb, nn)) = self.free.get(k + 1)
            && base + count == nb
        {
            self.free[k].1 += nn;
            self.free.remove(k + 1);
        }
        if k > 0 && self.free[k - 1].0 + self.free[k - 1].1 == base {
            self.free[k - 1].1 += self.free[k].1;
            self.free.remove(k);
        }
        if let Some(&(b, n)) = self.free.last()
            && b + n == self.end
        {
            self.end = b;
            self.free.pop();
        }
    }

    /// The most entries one texture can take now.
    pub(super) fn largest(&self, max: u32) -> u32 {
        self.free
            .iter()
            .map(|&(_, n)| n)
            .max()
            .unwrap_or(0)
            .max(max - self.end)
    }
}

impl VirtualTextures {
    /// Adds a virtual texture from a tiled file (tiles of this cache's size and format) and
    /// makes its tail resident (two slots): the tail's levels are read now and kept in memory
    /// (a few KiB), so that a cache made again ([`VirtualTextures::resize`]) reads no file.
    /// The index and page entries of a removed texture are taken again. Errors: a file that is
    /// not tiled as the cache is, no free slot for the tail, `max_textures` textures already,
    /// or no room left in `max_pages` for its page table.
    pub fn add(
        &mut self,
        queue: &wgpu::Queue,
        info: Ktx2Info,
        source: TileSource,
        address: VtAddress,
    ) -> Result<VtId> {
        let invalid = |reason: String| Error::InvalidResource {
            label: "virtual texture".into(),
            reason,
        };
        let layout = info
            .tiles
            .clone()
            .ok_or_else(|| invalid("the file is not tiled (mipflow cook --tiles)".into()))?;
        if layout.tile_size != self.tile || info.format != self.format {
            return Err(invalid(format!(
                "tiles of {} in {:?}; the cache takes {} in {:?}",
                layout.tile_size, info.format, self.tile, self.format
            )));
        }
        let n = info.levels.len().min(VT_MAX_LEVELS);
        let reused = self.entries.iter().position(|e| !e.alive);
        let capacity = self.infos.bytes() / size_of::<GpuInfo>() as u64;
        if reused.is_none() && self.entries.len() as u64 >= capacity {
            return Err(invalid("the cache holds its most textures".into()));
        }
        let tiles: Vec<(u32, u32)> = (0..n).map(|l| layout.tiles(&info, l)).collect();
        let table = PageTable::new(&tiles);
        let count = table.entries().len() as u32;
        let largest = self.page_ranges.largest(self.max_pages);
        if count > largest {
            return Err(invalid(format!(
                "{count} page entries, {largest} left in one run"
            )));
        }
        let first_tail = usize::from(layout.tiled_levels).min(n - 1);
        let info = Arc::new(info);
        let tail_data = (first_tail..n)
            .map(|l| Entry::read_from(&source, &info, |mut f, info| read_level(&mut f, info, l)))
            .collect::<Result<Vec<_>>>()?;
        let (Some(a), Some(b)) = (self.slots.take(0, true), self.slots.take(0, true)) else {
            return Err(invalid("no free slot for the texture's tail".into()));
        };
        let page_base = self
            .page_ranges
            .take(count, self.max_pages)
            .expect("a run of page entries was checked");
        let mut gpu = GpuInfo {
            level_count: n as u32,
            tile: self.tile,
            slots_x: self.slots_x,
            address: u32::from(address == VtAddress::Repeat),
            levels: [GpuLevel::default(); VT_MAX_LEVELS],
        };
        for (l, g) in gpu.levels.iter_mut().enumerate().take(n) {
            let (w, h) = info.level_dims(l);
            *g = GpuLevel {
                size: [w, h],
                origin: if l > first_tail {
                    tail_origin(&info, first_tail, l, self.tile)
                } else {
                    [0, 0]
                },
                tiles_x: tiles[l].0,
                first: page_base + table.first_entry(l) as u32,
                tiled: u32::from(l < first_tail),
                _pad: 0,
            };
        }
        // The demand the entries it takes had (a removed texture's) is not its.
        let range = page_base as usize..(page_base + count) as usize;
        for v in [
            &mut self.pixels,
            &mut self.cpu_pixels,
            &mut self.plan_pixels,
        ] {
            if let Some(v) = v.get_mut(range.clone()) {
                v.fill(0.0);
            }
        }
        let index = reused.unwrap_or(self.entries.len());
        let generation = self
            .entries
            .get(index)
            .map_or(0, |e| e.generation.wrapping_add(1));
        let mut entry = Entry {
            info,
            source,
            table,
            page_base,
            tail: [a, b],
            tail_data,
            gpu,
            dirty: true,
            seen: None,
            priority: 1.0,
            cpu_demand: false,
            alive: true,
            generation,
            // Feedback copied before the next frame may hold a removed texture's counts.
            since: self.frame + 1,
        };
        self.upload_tail(queue, &mut entry);
        if reused.is_some() {
            // Tiles of the removed texture still on their way carry its id: they are dropped
            // when they arrive.
            self.entries[index] = entry;
        } else {
            self.entries.push(entry);
        }
        // Its page table and info written now: drawn before the next update, it shows its
        // tail (not the texture whose index it took).
        self.flush(queue);
        Ok(VtId {
            index: index as u32,
            generation,
        })
    }

    /// Writes a texture's tail (its levels of one tile or less, kept in memory since it was
    /// added) at its place in its two slots, resident for good. Reads no file.
    pub(super) fn upload_tail(&self, queue: &wgpu::Queue, entry: &mut Entry) {
        let n = entry.table.level_count();
        let first_tail = n - entry.tail_data.len();
        for (l, data) in (first_tail..n).zip(&entry.tail_data) {
            let slot = entry.tail[usize::from(l > first_tail)];
            let origin = entry.gpu.levels[l].origin;
            self.write_blocks(queue, slot, origin, entry.info.level_dims(l), data);
            entry.table.set(l, 0, 0, Some(slot));
        }
    }

    /// Removes virtual texture `id`: its tiles' and its tail's slots, its page entries and its
    /// index are given back, for the next texture added to take. Draw nothing with it after:
    /// its id is refused from now on. False for an unknown or removed one.
    pub fn remove(&mut self, id: VtId) -> bool {
        if self.live(id).is_none() {
            return false;
        }
        let e = &mut self.entries[id.index as usize];
        e.alive = false;
        e.seen = None;
        e.cpu_demand = false;
        e.dirty = false;
        e.tail_data = Vec::new();
        let (base, count) = (e.page_base, e.table.entries().len() as u32);
        for l in 0..e.table.level_count() {
            let (x_n, y_n) = e.table.tiles(l);
            for ty in 0..y_n {
                for tx in 0..x_n {
                    if let Some(s) = e.table.set(l, tx, ty, None)
                        && !e.tail.contains(&s)
                    {
                        self.owners[s as usize] = None;
                        self.slots.give_back(s);
                    }
                }
            }
        }
        // The tail's two slots (the second holds several levels).
        for s in e.tail {
            self.slots.give_back(s);
        }
        self.page_ranges.give_back(base, count);
        true
    }

    /// Textures not removed.
    pub(super) fn alive(&self) -> usize {
        self.entries.iter().filter(|e| e.alive).count()
    }

    /// The texture `id` names, unless it was removed.
    pub(super) fn live(&self, id: VtId) -> Option<&Entry> {
        self.entries
            .get(id.index as usize)
            .filter(|e| e.alive && e.generation == id.generation)
    }

    /// [`VirtualTextures::live`], to change.
    pub(super) fn live_mut(&mut self, id: VtId) -> Option<&mut Entry> {
        self.entries
            .get_mut(id.index as usize)
            .filter(|e| e.alive && e.generation == id.generation)
    }

    /// [`VirtualTextures::live`], or the error that says it is not.
    pub(super) fn entry(&self, id: VtId) -> Result<&Entry> {
        self.live(id).ok_or_else(|| Error::InvalidResource {
            label: "virtual texture".into(),
            reason: format!("no texture {} (removed, or of another cache)", id.index),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::PageRanges;

    #[test]
    fn page_ranges_are_taken_first_fit_and_merged_when_given_back() {
        let mut p = PageRanges::default();
        assert_eq!(p.take(10, 100), Some(0));
        assert_eq!(p.take(20, 100), Some(10));
        assert_eq!(p.take(30, 100), Some(30));
        assert_eq!(p.take(41, 100), None, "past the most");
        assert_eq!(p.largest(100), 40);
        p.give_back(0, 10);
        p.give_back(10, 20);
        assert_eq!(p.free, vec![(0, 30)], "merged with the one before");
        assert_eq!(p.take(25, 100), Some(0), "first fit");
        assert_eq!(p.take(5, 100), Some(25), "the rest of the run");
        p.give_back(30, 30);
        assert_eq!(p.end, 30, "a run at the end lowers it");
        assert!(p.free.is_empty());
        p.give_back(25, 5);
        p.give_back(0, 25);
        assert_eq!((p.end, p.free.len()), (0, 0), "everything back");
        assert_eq!(p.largest(100), 100);
    }
}
