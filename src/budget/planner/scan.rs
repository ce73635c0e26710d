//! The change check's helpers: a block of 64 records compared with the words the previous scan
//! kept (32 bytes at a time where the CPU has AVX2), and the check of the textures that differ.

use super::*;

/// Whether [`wide_differ_mask`] may run: the CPU has AVX2 (checked once per scan; the answer
/// is cached by the standard library).
#[inline]
pub(super) fn wide_compare() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The bits of the textures of a block (up to 64) whose record differs from the words the
/// previous scan kept: each record and its words compared as one 32-byte vector (AVX2), a
/// third of the instructions of four 8-byte comparisons. Only when [`wide_compare`] said so;
/// elsewhere it returns every bit (never reached).
#[inline]
pub(super) fn wide_differ_mask(seen: &[Seen], tex: &[PlanTexture]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the caller checked that the CPU has AVX2.
        unsafe { differ_mask_avx2(seen, tex) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (seen, tex);
        u64::MAX
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn differ_mask_avx2(seen: &[Seen], tex: &[PlanTexture]) -> u64 {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_loadu_si256};
    use std::arch::x86_64::{_mm256_testz_si256, _mm256_xor_si256};
    // The words are the record's bytes as little-endian words (`Seen::cheap`), and x86 is
    // little-endian: the same 32 bytes, so equal words are equal bytes.
    const _: () = assert!(std::mem::size_of::<Seen>() == 32);
    let mut mask = 0u64;
    for (j, (s, t)) in seen.iter().zip(tex).enumerate() {
        // SAFETY: each pointer is to a live 32-byte value (a `Seen` is four words; a
        // `PlanTexture` is 32 bytes, aligned to 32 as `_mm256_load_si256` needs, with no
        // padding: `NoUninit`).
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(std::ptr::from_ref(s).cast::<__m256i>()),
                _mm256_load_si256(std::ptr::from_ref(t).cast::<__m256i>()),
            )
        };
        let x = _mm256_xor_si256(a, b);
        mask |= u64::from(_mm256_testz_si256(x, x) == 0) << j;
    }
    mask
}

/// The change check of the textures of one block of up to 64 (`base`: the first one's index;
/// `seen` and `hashes` are the block's, its records those of `all` from `base` on) whose bits are set in `candidates`: returns the
/// bits of those that changed and of those of them that were quiet and stay quiet
/// ([`incremental::Quiet::stays`]), so that a plan need not go through them. A changed
/// texture's new words are kept, a change of view is noted in `quiet.view_changed`.
///
/// `DIFFERS`: the caller found every candidate's cheap words differ (the full scan's mask).
///
/// The common case is gone through first, in a loop of its own: only the view words differ
/// (wanted level, pixels, priority), and so neither the texture nor its last words have a
/// histogram (a histogram's words carry `HISTOGRAM_MARK`, which the cheap words lack, and
/// its flag). Then any difference is a change of view, only those two words need keeping, and
/// whether a quiet texture stays quiet is its demand alone ([`incremental::asks_nothing`]),
/// judged after the loop for the quiet ones only and applied to the block's marks at once: a
/// moving camera's every texture in two loads, a comparison and a store (and a quiet one's
/// demand in three comparisons more). The others (levels, identity, `busy`, a
/// histogram) go through [`scan_one`]. `wide`: [`wide_compare`] said the CPU has AVX2.
#[inline(always)]
pub(super) fn scan_block<const DIFFERS: bool>(
    seen: &mut [Seen],
    hashes: &mut [u64],
    all: &PlanTextures,
    base: usize,
    candidates: u64,
    quiet: &mut incremental::Quiet<'_>,
    wide: bool,
) -> (u64, u64, u64) {
    let tex = &all.as_slice()[base..base + seen.len()];
    let (mut moved, mut slow) = if wide {
        // SAFETY: `wide` is `wide_compare()`: the CPU has AVX2.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            view_loop_avx2::<DIFFERS>(tex, seen, candidates)
        }
        #[cfg(not(target_arch = "x86_64"))]
        view_loop::<DIFFERS>(tex, seen, candidates)
    } else {
        view_loop::<DIFFERS>(tex, seen, candidates)
    };
    debug_assert!({
        let mut m = moved;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            assert!(!tex[j].histogram && !seen[j].has_histogram() && hashes[j] == 0);
        }
        true
    });
    quiet.view_changed |= moved != 0;
    // The view-only changes: quiet ones stay quiet while they ask for nothing; the others
    // lose their marks and their floors leave the quiet sum.
    let word = base / 64;
    let marked = quiet.marks.get(word).copied().unwrap_or(0);
    // Whether they ask for nothing, for the quiet ones only (what the others ask is judged
    // after the plan): their records are in the cache since the loop.
    let mut asks = 0u64;
    let mut ask = moved & marked;
    while ask != 0 {
        let j = ask.trailing_zeros() as usize;
        ask &= ask - 1;
        if let Some(t) = tex.get(j) {
            asks |= u64::from(incremental::plain_asks_nothing(t, quiet.min_bias)) << j;
        }
    }
    let mut stays = moved & marked & asks;
    let mut lost = moved & marked & !asks;
    if lost != 0 {
        quiet.marks[word] &= !lost;
        while lost != 0 {
            let i = base + lost.trailing_zeros() as usize;
            lost &= lost - 1;
            // Its work is the one it was judged quiet with (a quiet texture is not observed
            // again until it changes): the floor it added.
            *quiet.floor -= u128::from(quiet.work[i].floor_bytes);
        }
    }
    let mut deep = 0u64;
    while slow != 0 {
        let j = slow.trailing_zeros() as usize;
        slow &= slow - 1;
        let i = base + j;
        if let Some(still) = scan_one(
            &tex[j],
            all.level_pixels(i),
            &mut seen[j],
            &mut hashes[j],
            i,
            quiet,
        ) {
            moved |= 1 << j;
            deep |= 1 << j;
            stays |= u64::from(still) << j;
        }
    }
    (moved, stays, deep)
}

/// The view-only loop of [`scan_block`]: of the `candidates`, the bits of those whose view
/// alone changed (`moved`; every one of them with `DIFFERS`) and of the others (`slow`: their
/// levels, identity, flags or a histogram differ, for [`scan_one`]). A moved texture's view
/// words are kept.
#[inline(always)]
pub(super) fn view_loop<const DIFFERS: bool>(
    tex: &[PlanTexture],
    seen: &mut [Seen],
    candidates: u64,
) -> (u64, u64) {
    let (mut moved, mut slow) = (0u64, 0u64);
    let mut m = candidates;
    while m != 0 {
        let j = m.trailing_zeros() as usize;
        m &= m - 1;
        let (Some(t), Some(s)) = (tex.get(j), seen.get_mut(j)) else {
            continue;
        };
        let now = Seen::cheap(t);
        let x1 = now.0[1] ^ s.0[1];
        if (x1 >> 32) | (now.0[2] ^ s.0[2]) | (now.0[3] ^ s.0[3]) == 0 {
            let differs = DIFFERS || ((now.0[0] ^ s.0[0]) | x1) != 0;
            s.0[0] = now.0[0];
            s.0[1] = now.0[1];
            moved |= u64::from(differs) << j;
        } else {
            slow |= 1 << j;
        }
    }
    (moved, slow)
}

/// [`view_loop`] with each record compared and kept as one 32-byte vector: only bytes 12 to
/// 31 (levels, identity, flags, bases) must be equal, and then the record's 32 bytes are its
/// new words (the others are equal already), one store.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) fn view_loop_avx2<const DIFFERS: bool>(
    tex: &[PlanTexture],
    seen: &mut [Seen],
    candidates: u64,
) -> (u64, u64) {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_loadu_si256};
    use std::arch::x86_64::{_mm256_setr_epi32, _mm256_storeu_si256};
    use std::arch::x86_64::{_mm256_testz_si256, _mm256_xor_si256};
    // Bytes 12..32: `level_count`, the floor, resident and in-flight levels, level 0's bytes,
    // `busy`, `histogram`, the bases and the reserved bytes (see `Seen::cheap`).
    let beyond_view = _mm256_setr_epi32(0, 0, 0, -1, -1, -1, -1, -1);
    let (mut moved, mut slow) = (0u64, 0u64);
    let mut m = candidates;
    while m != 0 {
        let j = m.trailing_zeros() as usize;
        m &= m - 1;
        let (Some(t), Some(s)) = (tex.get(j), seen.get_mut(j)) else {
            continue;
        };
        // SAFETY: as in `differ_mask_avx2` (a record is 32 bytes aligned to 32, a `Seen` 32
        // bytes, both live); the store writes the four words of `s`, which this loop owns.
        let (now, x) = unsafe {
            let now = _mm256_load_si256(std::ptr::from_ref(t).cast::<__m256i>());
            let was = _mm256_loadu_si256(std::ptr::from_ref(&*s).cast::<__m256i>());
            (now, _mm256_xor_si256(now, was))
        };
        if _mm256_testz_si256(x, beyond_view) != 0 {
            let differs = DIFFERS || _mm256_testz_si256(x, x) == 0;
            // SAFETY: see above.
            unsafe { _mm256_storeu_si256(std::ptr::from_mut(s).cast::<__m256i>(), now) };
            moved |= u64::from(differs) << j;
        } else {
            slow |= 1 << j;
        }
    }
    (moved, slow)
}

/// The change check of one texture whose words differ from what the previous scan saw in more
/// than the view, or that has a histogram (now or before): `None` when they do not differ
/// (with its histogram's hash); otherwise the new words are kept, a change of view is noted,
/// and the result says whether the texture was quiet and stays quiet
/// ([`incremental::Quiet::stays`]).
#[inline(never)]
fn scan_one(
    t: &PlanTexture,
    bins: &[f32; MAX_LEVELS],
    seen: &mut Seen,
    hash: &mut u64,
    i: usize,
    quiet: &mut incremental::Quiet<'_>,
) -> Option<bool> {
    // The exact words and a histogram's hash decide (a texture without a histogram now nor
    // before has the cheap words as its exact ones and both hashes 0).
    let (now, h) = (Seen::of(t), histogram_hash(t, bins));
    if seen.xor(&now) == 0 && *hash == h {
        return None;
    }
    quiet.view_changed |= now.view_differs(seen) || h != *hash;
    let view_only = now.same_but_view(seen);
    *seen = now;
    *hash = h;
    Some(quiet.stays(t, bins, i, view_only))
}
