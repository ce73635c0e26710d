//! The CPU side of feedback's readbacks: every slot's histogram, updated from the slots a
//! readback lists and the live ones fading out, in the time of those alone.

use super::ENTRY_WORDS;
use crate::budget::planner::MAX_LEVELS;

/// The histograms read back, per slot, and the slots whose histogram is not all zero.
#[derive(Debug, Default)]
pub(super) struct Histograms {
    /// Output pixels per wanted level, per slot.
    pub(super) latest: Vec<[f32; MAX_LEVELS]>,
    /// The slots whose histogram is not all zero (the only ones a readback that does not list
    /// them changes: they fade out).
    live: Vec<u32>,
    /// Per slot, the readback that listed it last (`seq`'s value then; 0: none).
    stamp: Vec<u32>,
    seq: u32,
    /// Per live slot, the readbacks in a row that did not list it: at [`forget_after`] of them
    /// it has faded to under 1/64 of what it was, and is 0 (the half-pixel cutoff alone took a
    /// full screen's pixels 53 readbacks at the default smoothing: a texture behind a wall kept
    /// its demand for a second).
    unlisted: Vec<u8>,
    /// Per slot, the frame it was last forgotten at ([`Histograms::forget`]; 0: never): a
    /// readback of an earlier frame says nothing of it.
    forgotten: Vec<u64>,
}

impl Histograms {
    /// Every histogram back to 0 (in the time of the live slots).
    pub(super) fn clear(&mut self) {
        for &s in &self.live {
            self.latest[s as usize] = [0.0; MAX_LEVELS];
        }
        self.live.clear();
    }

    /// Slot `slot` holds another texture from frame `frame` on: its histogram goes back to 0,
    /// and readbacks of frames before `frame` (still in flight) leave it alone.
    pub(super) fn forget(&mut self, slot: u32, frame: u64) {
        let s = slot as usize;
        if self.forgotten.len() <= s {
            self.forgotten.resize(s + 1, 0);
        }
        self.forgotten[s] = frame;
        if let Some(u) = self.unlisted.get_mut(s) {
            *u = 0;
        }
        if let Some(h) = self.latest.get_mut(s) {
            *h = [0.0; MAX_LEVELS];
        }
        // Out of `live` now (a rare call, on a removal): listed again before an update dropped
        // it, it would be pushed a second time, and counted and faded twice.
        self.live.retain(|&l| l != slot);
    }

    /// Applies one readback: `entries` (the slot, its 16 counts, per listed slot) for slots
    /// below `slots`, each count `k` output pixels, new values weighted `a` against the old
    /// ones (a slot with no history takes them as they are); the live slots it did not list
    /// fade as if their counts were 0; values under half a pixel are 0, and slots at or past
    /// `slots` are cleared. The same histograms, bit for bit, as a pass over every slot with its
    /// counts (0 for a slot not listed), in the time of the slots listed and live. Returns the
    /// total pixels (summed in another order than such a pass: equal to rounding).
    pub(super) fn update(
        &mut self,
        entries: &[u32],
        slots: usize,
        k: f64,
        a: f32,
        frame: u64,
    ) -> f64 {
        if self.latest.len() < slots {
            self.latest.resize(slots, [0.0; MAX_LEVELS]);
            self.stamp.resize(slots, 0);
            self.unlisted.resize(slots, 0);
            // Room for every slot to be live: a readback never allocates but when the slots
            // grow.
            self.live.reserve(slots.saturating_sub(self.live.len()));
        }
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            // Wrapped: every stamp is older than the new sequence.
            self.stamp.fill(0);
            self.seq = 1;
        }
        for e in entries.chunks_exact(ENTRY_WORDS as usize) {
            let slot = e[0] as usize;
            if slot >= slots
                || self.stamp[slot] == self.seq
                || self.forgotten.get(slot).is_some_and(|&f| f > frame)
            {
                continue;
            }
            self.stamp[slot] = self.seq;
            self.unlisted[slot] = 0;
            let h = &mut self.latest[slot];
            let fresh = h.iter().fold(true, |f, &b| f & (b == 0.0));
            // Straight-line over the 16 bins, chosen without branches: the compiler keeps it
            // in vector registers.
            for (b, &n) in h.iter_mut().zip(&e[1..]) {
                let v = (f64::from(n) * k) as f32;
                let x = if fresh { v } else { *b + a * (v - *b) };
                *b = if x < 0.5 { 0.0 } else { x };
            }
            if fresh && h.iter().fold(false, |any, &b| any | (b != 0.0)) {
                self.live.push(slot as u32);
            }
        }
        let mut total = 0.0f64;
        let (latest, stamp, seq) = (&mut self.latest, &self.stamp, self.seq);
        let (unlisted, limit) = (&mut self.unlisted, forget_after(a));
        self.live.retain(|&s| {
            let s = s as usize;
            let Some(h) = latest.get_mut(s) else {
                return false;
            };
            if s >= slots {
                *h = [0.0; MAX_LEVELS];
                return false;
            }
            if stamp[s] != seq {
                // Not listed: its counts are 0 this time.
                for b in h.iter_mut() {
                    let x = *b + a * (0.0 - *b);
                    *b = if x < 0.5 { 0.0 } else { x };
                }
                unlisted[s] = unlisted[s].saturating_add(1);
                if unlisted[s] >= limit {
                    *h = [0.0; MAX_LEVELS];
                }
            }
            // The slot's pixels in four running sums (not one chain of 16 dependent adds).
            let mut sums = [0.0f64; 4];
            let mut any = false;
            for q in h.chunks_exact(4) {
                for (acc, &b) in sums.iter_mut().zip(q) {
                    *acc += f64::from(b);
                    any |= b != 0.0;
                }
            }
            total += (sums[0] + sums[1]) + (sums[2] + sums[3]);
            any
        });
        total
    }
}

/// Readbacks in a row without a slot after which its histogram is 0: the first at which the
/// smoothing `a` has faded it to 1/64 of what it was (15 at the default 0.25; 1 without
/// smoothing).
fn forget_after(a: f32) -> u8 {
    if !(a > 0.0 && a < 1.0) {
        return 1;
    }
    let n = ((1.0f64 / 64.0).ln() / (1.0 - f64::from(a)).ln()).ceil();
    n.clamp(1.0, 255.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The update the feedback made before: a pass over every slot, its counts 0 when not
    /// listed.
    fn every_slot(
        latest: &mut Vec<[f32; MAX_LEVELS]>,
        unlisted: &mut Vec<u8>,
        entries: &[u32],
        slots: usize,
        k: f64,
        a: f32,
    ) -> f64 {
        if latest.len() < slots {
            latest.resize(slots, [0.0; MAX_LEVELS]);
            unlisted.resize(slots, 0);
        }
        let mut counts = vec![[0u32; MAX_LEVELS]; slots];
        let mut listed = vec![false; slots];
        for e in entries.chunks_exact(ENTRY_WORDS as usize) {
            if let Some(c) = counts.get_mut(e[0] as usize) {
                c.copy_from_slice(&e[1..]);
                listed[e[0] as usize] = true;
            }
        }
        let mut total = 0.0f64;
        for (s, (h, c)) in latest.iter_mut().zip(&counts).enumerate() {
            let fresh = h.iter().all(|&b| b == 0.0);
            for (b, &n) in h.iter_mut().zip(c) {
                let v = (f64::from(n) * k) as f32;
                *b = if fresh { v } else { *b + a * (v - *b) };
                if *b < 0.5 {
                    *b = 0.0;
                }
            }
            if listed[s] {
                unlisted[s] = 0;
            } else if !fresh {
                unlisted[s] = unlisted[s].saturating_add(1);
                if unlisted[s] >= forget_after(a) {
                    *h = [0.0; MAX_LEVELS];
                }
            }
            total += h.iter().map(|&b| f64::from(b)).sum::<f64>();
        }
        for h in latest.iter_mut().skip(slots) {
            *h = [0.0; MAX_LEVELS];
        }
        total
    }

    #[test]
    fn listed_and_fading_slots_give_the_histograms_of_a_pass_over_every_slot() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut sparse, mut dense, mut dense_unlisted) =
            (Histograms::default(), Vec::new(), Vec::new());
        let mut slots = 300usize;
        let mut faded = 0;
        for round in 0..3000 {
            // The slot count moves now and then (a shrink clears the slots past it).
            if next(50) == 0 {
                slots = 20 + next(400) as usize;
            }
            // k under 1: one recorded pixel in 1x1 at a render scale of 2 (under half a pixel:
            // a listed slot can end all 0, or a live one fall to 0).
            let k = [64.0, 16.0, 64.0 / (0.7f64 * 0.7), 0.25][next(4) as usize];
            if round == 1500 {
                // The readback counter wraps: every stamp is older than the next one.
                sparse.seq = u32::MAX - 3;
            }
            let a = [0.25f32, 1.0, 0.5][(round / 1000) % 3];
            // A few slots listed, once each, some with every count 0 past the first bin.
            let listed = next(40) as usize;
            let mut entries = Vec::new();
            let mut taken = std::collections::HashSet::new();
            for _ in 0..listed {
                let slot = next(slots as u64 + 10) as u32;
                if !taken.insert(slot) {
                    continue;
                }
                entries.push(slot);
                let zero = next(10) == 0;
                for _ in 0..MAX_LEVELS {
                    let n = if next(3) == 0 && !zero {
                        next(6) as u32
                    } else {
                        0
                    };
                    entries.push(n);
                }
            }
            let a_total = sparse.update(&entries, slots, k, a, 1);
            let b_total = every_slot(&mut dense, &mut dense_unlisted, &entries, slots, k, a);
            assert_eq!(sparse.latest.len(), dense.len(), "round {round}");
            for (s, (p, q)) in sparse.latest.iter().zip(&dense).enumerate() {
                let same = p.iter().zip(q).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "round {round}, slot {s}: {p:?} against {q:?}");
            }
            // The same pixels, summed in another order.
            assert!(
                (a_total - b_total).abs() <= 1e-9 * b_total.abs(),
                "round {round}: {a_total} against {b_total}"
            );
            // Only the live slots are gone through: a slot is live exactly when its histogram
            // is not all 0, and once.
            for (s, h) in sparse.latest.iter().enumerate() {
                let live = sparse.live.iter().filter(|&&l| l as usize == s).count();
                let nonzero = h.iter().any(|&b| b != 0.0);
                assert_eq!(live, usize::from(nonzero), "round {round}: slot {s}");
            }
            faded += usize::from(entries.is_empty() && !sparse.live.is_empty());
        }
        assert!(
            faded > 10,
            "rounds where live slots faded with nothing listed: {faded}"
        );
    }

    /// A slot whose texture was removed starts again from 0 for the new one: a readback of a
    /// frame before the removal (still in flight) leaves it alone, one from after it is taken
    /// as it is (before: blended with the old texture's, 3/4 of a 4096² wall's pixels at
    /// level 0 asked of a small prop).
    #[test]
    fn a_forgotten_slot_starts_afresh() {
        let mut h = Histograms::default();
        let entry = |slot: u32, bin: usize, n: u32| {
            let mut e = vec![0u32; ENTRY_WORDS as usize];
            e[0] = slot;
            e[1 + bin] = n;
            e
        };
        h.update(&entry(0, 0, 15_625), 4, 64.0, 0.25, 10);
        assert_eq!(h.latest[0][0], 1_000_000.0);
        h.forget(0, 12);
        assert_eq!(h.latest[0], [0.0; MAX_LEVELS]);
        // Frame 11's readback, recorded for the old texture, lands after the removal.
        h.update(&entry(0, 0, 15_625), 4, 64.0, 0.25, 11);
        assert_eq!(h.latest[0], [0.0; MAX_LEVELS]);
        // The new texture's own: taken as it is.
        h.update(&entry(0, 5, 10), 4, 64.0, 0.25, 12);
        assert_eq!(h.latest[0][0], 0.0);
        assert_eq!(h.latest[0][5], 640.0);
        // Forgotten and listed again in the next readback: live once.
        h.forget(0, 13);
        h.update(&entry(0, 5, 10), 4, 64.0, 0.25, 13);
        assert_eq!(h.live, vec![0]);
        assert_eq!(h.latest[0][5], 640.0);
    }

    /// A slot no readback lists any more is 0 after the smoothing has faded it to 1/64 (15
    /// readbacks at 0.25), however many pixels it had: 2M pixels (a full screen at level 0) then
    /// 15 empty readbacks leave nothing (before: about 27k pixels after 15, 0 only after 53).
    #[test]
    fn an_unlisted_slot_is_forgotten_within_the_documented_frames() {
        assert_eq!(forget_after(0.25), 15);
        assert_eq!(forget_after(1.0), 1);
        let mut h = Histograms::default();
        let mut e = vec![0u32; ENTRY_WORDS as usize];
        e[1] = 31_250;
        h.update(&e, 4, 64.0, 0.25, 1);
        assert_eq!(h.latest[0][0], 2_000_000.0);
        for n in 1..=15 {
            h.update(&[], 4, 64.0, 0.25, 1 + n);
            let left = h.latest[0][0];
            assert_eq!(left == 0.0, n == 15, "after {n}: {left}");
        }
        assert!(h.live.is_empty());
    }
}
