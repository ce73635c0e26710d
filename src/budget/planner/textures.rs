//! The planner's input per texture, laid out for a per-frame scan: [`PlanTexture`] is the
//! 32 bytes that change from frame to frame (demand, residency) and identify the texture;
//! [`PlanTextures`] keeps them in one dense array beside the level sizes and the histograms,
//! which a plan reads only for the textures it goes through.
//!
//! Why split: the change check reads every texture every frame. With the level sizes and the
//! histogram in the same record (224 bytes), that check pulled one cache line per texture from
//! a 2.2 MB array at 10k textures; dense, it reads 320 KB that stay in the core's cache.

use super::*;

/// One texture as the planner sees it each frame: what the view wants and what is resident.
/// The level sizes and the histogram bins live beside it in [`PlanTextures`].
///
/// 32 bytes, aligned: a texture's change check is one cache line shared with its neighbour.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::NoUninit)]
#[repr(C, align(32))]
pub struct PlanTexture {
    /// Finest level the view wants at native resolution, fractional (2.3 samples levels 2 and 3).
    /// `>= level_count` or `f32::INFINITY`: not visible. NaN counts as not visible.
    pub wanted_level: f32,
    /// Output pixels the texture covers: the weight of its blur. Negative or NaN counts as 0.
    pub screen_pixels: f32,
    /// User weight of the texture's blur, 1 by default. Negative or NaN counts as 0.
    pub priority: f32,
    /// Mips in the full chain (at most [`MAX_LEVELS`]; more are ignored). Set with the level
    /// sizes ([`PlanTextures::push`], [`PlanTextures::replace`]).
    pub level_count: u8,
    /// Levels `floor_level..level_count` (the small tail, such as <= 32x32) are always resident
    /// while the budget holds every texture's floor. Set with the level sizes.
    pub floor_level: u8,
    /// Finest level resident now: levels `resident_level..level_count` are on the GPU.
    /// `floor_level` when only the tail is, `level_count` when nothing is.
    pub resident_level: u8,
    /// While `busy`: the finest level that will be resident once the in-flight grow is built.
    pub in_flight_level: u8,
    /// Bytes of level 0, copied from the level sizes: with the level count and the floor, the
    /// texture's identity (a slot that holds another texture starts a fresh history).
    pub(super) level0_bytes: u64,
    /// A grow is in flight (requested, not built yet): the planner plans nothing new for the
    /// texture, except to cancel it when its inputs changed or the budget no longer holds it.
    pub busy: bool,
    /// The demand is the texture's histogram ([`PlanTextures::level_pixels`]: what GPU feedback
    /// measures), not the single `wanted_level` over `screen_pixels`. Then `wanted_level` and
    /// `screen_pixels` are only its summary (the finest level with pixels, the total), for
    /// reports; the planner prices every level by the pixels that want finer.
    pub histogram: bool,
    /// Bit `l` set: level `l` may be the finest resident level (the base of the GPU texture).
    /// All set by default. Why a mask: a block-compressed texture can only start at a level
    /// whose size is a multiple of the block (wgpu refuses a 480x270 BC7 base), so a 960x540
    /// chain can hold `0..` or the floor, nothing between. The planner then steps from one
    /// allowed level to the next finer one as a single step (its bytes and gain summed). The
    /// floor level is expected to be allowed; it is the caller's choice either way.
    pub base_levels: u16,
    /// Always 0: the bytes after `base_levels` are a field, not padding, so that the change
    /// check reads the record's last eight bytes as one word (one load, not three).
    pub(super) reserved: u32,
}

impl Default for PlanTexture {
    fn default() -> Self {
        Self {
            wanted_level: f32::INFINITY,
            screen_pixels: 0.0,
            priority: 1.0,
            level_count: 0,
            floor_level: 0,
            resident_level: 0,
            in_flight_level: 0,
            level0_bytes: 0,
            busy: false,
            histogram: false,
            base_levels: u16::MAX,
            reserved: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<PlanTexture>() == 32);

impl PlanTexture {
    /// The base-level mask of a chain whose level 0 is `width x height` in a format of
    /// `block_w x block_h` blocks: level `l` is allowed when its size is a multiple of the block
    /// on both axes (see [`PlanTexture::base_levels`]); every level for 1x1 blocks.
    pub fn block_aligned_bases(
        width: u32,
        height: u32,
        block_w: u32,
        block_h: u32,
        level_count: u8,
    ) -> u16 {
        let (bw, bh) = (block_w.max(1), block_h.max(1));
        (0..level_count.min(MAX_LEVELS as u8))
            .filter(|&l| {
                let (w, h) = ((width >> l).max(1), (height >> l).max(1));
                w % bw == 0 && h % bh == 0
            })
            .fold(0u16, |m, l| m | (1 << l))
    }

    /// The floor level for a chain whose level 0 is `width x height`: the first level whose
    /// largest side is at most `floor_size` that `bases` allows, else the coarsest allowed level
    /// finer than that (the floor moves up: the texture streams in fewer, larger steps). `None`
    /// when no level is allowed: the texture cannot be created at all.
    pub fn floor_for(
        width: u32,
        height: u32,
        floor_size: u32,
        level_count: u8,
        bases: u16,
    ) -> Option<u8> {
        let count = level_count.min(MAX_LEVELS as u8);
        let by_size = (0..count)
            .find(|&l| (width >> l).max(1).max((height >> l).max(1)) <= floor_size)
            .unwrap_or(count.saturating_sub(1));
        let allowed = |l: u8| bases & (1 << l) != 0;
        (by_size..count)
            .find(|&l| allowed(l))
            .or_else(|| (0..by_size).rev().find(|&l| allowed(l)))
    }

    /// Whether level `level` may be the finest resident level (see [`PlanTexture::base_levels`]).
    pub fn base_allowed(&self, level: u8) -> bool {
        level < 16 && self.base_levels & (1 << level) != 0
    }

    /// Sets `wanted_level` (the finest bin with pixels, infinity when none) and `screen_pixels`
    /// (the total) from the texture's histogram bins (see [`PlanTextures::histogram_mut`]).
    pub fn summarize_histogram(&mut self, bins: &[f32; MAX_LEVELS]) {
        let mut total = 0.0f32;
        let mut finest = f32::INFINITY;
        for (l, &p) in bins.iter().enumerate().rev() {
            if p > 0.0 {
                total += p;
                finest = l as f32;
            }
        }
        self.wanted_level = finest;
        self.screen_pixels = total.min(f32::MAX);
    }

    /// `level_count`, at most [`MAX_LEVELS`].
    pub(super) fn count(&self) -> u8 {
        self.level_count.min(MAX_LEVELS as u8)
    }

    /// `floor_level`, at most the level count.
    pub(super) fn floor(&self) -> u8 {
        self.floor_level.min(self.count())
    }

    /// `resident_level`, at most the level count.
    pub(super) fn resident(&self) -> u8 {
        self.resident_level.min(self.count())
    }

    /// `in_flight_level`, at most the level count.
    pub(super) fn in_flight(&self) -> u8 {
        self.in_flight_level.min(self.count())
    }
}

/// Every streamed texture as the planner sees it, indexed by the texture's id in
/// [`Transition::texture`]: each one's [`PlanTexture`] (indexing gives it), its level sizes and
/// its histogram bins. The streaming code keeps one and updates it every frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanTextures {
    hot: Vec<PlanTexture>,
    level_bytes: Vec<Sizes>,
    level_pixels: Vec<Bins>,
}

/// A texture's level sizes on two cache lines of their own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
struct Sizes([u64; MAX_LEVELS]);

/// A texture's histogram bins on one cache line of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
struct Bins([f32; MAX_LEVELS]);

impl PlanTextures {
    /// No textures.
    pub fn new() -> Self {
        Self::default()
    }

    /// No textures, room for `n`.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            hot: Vec::with_capacity(n),
            level_bytes: Vec::with_capacity(n),
            level_pixels: Vec::with_capacity(n),
        }
    }

    /// How many textures (slots) there are.
    pub fn len(&self) -> usize {
        self.hot.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }

    /// Every texture's per-frame record, indexed by id.
    pub fn as_slice(&self) -> &[PlanTexture] {
        &self.hot
    }

    /// The same, to update demand and residency.
    pub fn as_mut_slice(&mut self) -> &mut [PlanTexture] {
        &mut self.hot
    }

    /// Every texture's record, by id.
    pub fn iter(&self) -> std::slice::Iter<'_, PlanTexture> {
        self.hot.iter()
    }

    /// Every texture's record, by id, to update demand and residency.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, PlanTexture> {
        self.hot.iter_mut()
    }

    /// The record of texture `i`, if it exists.
    pub fn get(&self, i: usize) -> Option<&PlanTexture> {
        self.hot.get(i)
    }

    /// The record of texture `i` to update, if it exists.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut PlanTexture> {
        self.hot.get_mut(i)
    }

    /// Adds a texture with these level sizes (index 0 = full size; at most [`MAX_LEVELS`] are
    /// used) whose floor `floor_level..` is resident, not visible, priority 1. Its id is the
    /// previous [`PlanTextures::len`]; the record is returned to set its demand.
    pub fn push(&mut self, level_bytes: &[u64], floor_level: u8) -> &mut PlanTexture {
        self.hot.push(PlanTexture::default());
        self.level_bytes.push(Sizes::default());
        self.level_pixels.push(Bins::default());
        let i = self.hot.len() - 1;
        self.replace(i, level_bytes, floor_level)
    }

    /// An empty slot (no levels, nothing wanted): what a released texture's id holds until
    /// [`PlanTextures::replace`] puts another texture there.
    pub fn push_empty(&mut self) {
        self.hot.push(PlanTexture::default());
        self.level_bytes.push(Sizes::default());
        self.level_pixels.push(Bins::default());
    }

    /// Puts a new texture in slot `i` (as [`PlanTextures::push`] makes one: its floor resident,
    /// no demand, priority 1, every base allowed). Panics when `i` is out of range.
    pub fn replace(&mut self, i: usize, level_bytes: &[u64], floor_level: u8) -> &mut PlanTexture {
        let n = level_bytes.len().min(MAX_LEVELS);
        let sizes = &mut self.level_bytes[i].0;
        *sizes = [0; MAX_LEVELS];
        sizes[..n].copy_from_slice(&level_bytes[..n]);
        self.level_pixels[i] = Bins::default();
        let t = &mut self.hot[i];
        *t = PlanTexture {
            level_count: n as u8,
            level0_bytes: sizes[0],
            ..PlanTexture::default()
        };
        t.floor_level = floor_level.min(t.level_count);
        t.resident_level = t.floor_level;
        t.in_flight_level = t.floor_level;
        t
    }

    /// Empties slot `i` (as [`PlanTextures::push_empty`] makes one). Panics when out of range.
    pub fn clear_slot(&mut self, i: usize) {
        self.hot[i] = PlanTexture::default();
        self.level_bytes[i] = Sizes::default();
        self.level_pixels[i] = Bins::default();
    }

    /// Bytes of each level of texture `i`, index 0 = full size (`level_count` entries).
    pub fn level_bytes(&self, i: usize) -> &[u64] {
        &self.level_bytes[i].0[..usize::from(self.hot[i].count())]
    }

    /// Bytes of texture `i` holding levels `level..level_count` (0 when `level >= level_count`).
    pub fn bytes_from(&self, i: usize, level: u8) -> u64 {
        bytes_from(&self.level_bytes[i].0, self.hot[i].count(), level)
    }

    /// The finest whole level texture `i`'s view wants (its wanted level rounded down, at most
    /// its level count), or `None` when it is not visible (infinite, NaN or past the chain) or
    /// has no levels: what the reports count as wanted.
    pub fn wanted_whole_level(&self, i: usize) -> Option<u8> {
        let p = self.hot.get(i)?;
        let visible = p.wanted_level.is_finite() && p.wanted_level < f32::from(p.level_count);
        (p.level_count > 0 && visible)
            .then(|| (p.wanted_level.max(0.0).floor() as u8).min(p.level_count))
    }

    /// Texture `i`'s histogram: output pixels whose wanted level (at native resolution) is `l`
    /// for bin `l` (a fractional level `l + f` counts in bin `l`). Keeping level `r` costs
    /// `sum over l of pixels[l] x max(0, r - l - mip bias)` pixel-octaves, so a level is worth
    /// the pixels that want it or finer: 1% of a surface at level 0 no longer prices its whole
    /// area at level 0. Read only while [`PlanTexture::histogram`] is set.
    pub fn level_pixels(&self, i: usize) -> &[f32; MAX_LEVELS] {
        &self.level_pixels[i].0
    }

    /// Texture `i`'s record and histogram bins, to edit both; call
    /// [`PlanTextures::summarize_histogram`] after editing the bins.
    pub fn histogram_mut(&mut self, i: usize) -> (&mut PlanTexture, &mut [f32; MAX_LEVELS]) {
        (&mut self.hot[i], &mut self.level_pixels[i].0)
    }

    /// Sets texture `i`'s demand to a histogram of output pixels per wanted level (see
    /// [`PlanTextures::level_pixels`]; bins past [`MAX_LEVELS`] count in the last one; negative
    /// or NaN bins count as 0) and its summary in `wanted_level` / `screen_pixels`.
    pub fn set_level_pixels(&mut self, i: usize, pixels: &[f32]) {
        let bins = &mut self.level_pixels[i].0;
        *bins = [0.0; MAX_LEVELS];
        for (l, &p) in pixels.iter().enumerate() {
            if p > 0.0 {
                bins[l.min(MAX_LEVELS - 1)] += p.min(f32::MAX);
            }
        }
        self.hot[i].histogram = true;
        self.summarize_histogram(i);
    }

    /// Recomputes texture `i`'s `wanted_level` (the finest bin with pixels, infinity when none)
    /// and `screen_pixels` (the total) from its bins.
    pub fn summarize_histogram(&mut self, i: usize) {
        self.hot[i].summarize_histogram(&self.level_pixels[i].0);
    }

    /// Drops texture `i`'s histogram: its demand is `wanted_level` over `screen_pixels` again.
    pub fn clear_histogram(&mut self, i: usize) {
        self.hot[i].histogram = false;
        self.level_pixels[i] = Bins::default();
    }

    /// Output pixels times octaves of blur of texture `i` when `level` is its finest resident
    /// level, at a mip bias `bias` (not weighted by priority): the planner's objective for it.
    pub fn blur_pixels(&self, i: usize, level: u8, bias: f32) -> f32 {
        blur_pixels(&self.hot[i], &self.level_pixels[i].0, level, bias)
    }
}

impl std::ops::Index<usize> for PlanTextures {
    type Output = PlanTexture;

    fn index(&self, i: usize) -> &PlanTexture {
        &self.hot[i]
    }
}

impl std::ops::IndexMut<usize> for PlanTextures {
    fn index_mut(&mut self, i: usize) -> &mut PlanTexture {
        &mut self.hot[i]
    }
}

/// Bytes of levels `level..count` of a chain with these sizes (0 when `level >= count`).
#[inline]
pub(super) fn bytes_from(sizes: &[u64; MAX_LEVELS], count: u8, level: u8) -> u64 {
    let end = usize::from(count.min(MAX_LEVELS as u8));
    let start = usize::from(level).min(end);
    // At most 16 terms: a u128 sum cannot overflow, and is cheaper than saturating adds.
    let sum: u128 = sizes[start..end].iter().map(|&b| u128::from(b)).sum();
    u64::try_from(sum).unwrap_or(u64::MAX)
}

/// [`PlanTextures::blur_pixels`] of a record and its bins.
pub(super) fn blur_pixels(t: &PlanTexture, bins: &[f32; MAX_LEVELS], level: u8, bias: f32) -> f32 {
    if t.histogram {
        let mut sum = 0.0f32;
        for (l, &p) in bins.iter().enumerate() {
            if p > 0.0 {
                sum += p * super::state::blur(level, l as f32 + bias);
            }
        }
        sum.min(f32::MAX)
    } else {
        let pixels = super::state::sanitize_weight(t.screen_pixels);
        let wanted = super::state::sanitize_wanted(t.wanted_level);
        (pixels * super::state::blur(level, wanted + bias)).min(f32::MAX)
    }
}

/// One texture's record with its level sizes and bins, as the planner's passes read it (the
/// sizes' and bins' lines are loaded only where a pass reads them).
#[derive(Clone, Copy)]
pub(super) struct Tex<'a> {
    pub(super) t: &'a PlanTexture,
    pub(super) sizes: &'a [u64; MAX_LEVELS],
    pub(super) bins: &'a [f32; MAX_LEVELS],
}

impl std::ops::Deref for Tex<'_> {
    type Target = PlanTexture;

    #[inline(always)]
    fn deref(&self) -> &PlanTexture {
        self.t
    }
}

impl Tex<'_> {
    /// Bytes of levels `level..level_count`.
    #[inline]
    pub(super) fn bytes_from(&self, level: u8) -> u64 {
        bytes_from(self.sizes, self.t.count(), level)
    }

    /// See [`PlanTextures::blur_pixels`].
    #[inline]
    pub(super) fn blur_pixels(&self, level: u8, bias: f32) -> f32 {
        blur_pixels(self.t, self.bins, level, bias)
    }
}

/// Every texture's record, sizes and bins as slices of one length: a pass that reads all
/// three for a texture checks its index once (the compiler then knows it in range for every
/// slice of that length).
#[derive(Clone, Copy)]
pub(super) struct Views<'a> {
    hot: &'a [PlanTexture],
    sizes: &'a [Sizes],
    bins: &'a [Bins],
}

impl<'a> Views<'a> {
    /// Texture `i`, if it exists.
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<Tex<'a>> {
        if i < self.hot.len() {
            Some(Tex {
                t: &self.hot[i],
                sizes: &self.sizes[i].0,
                bins: &self.bins[i].0,
            })
        } else {
            None
        }
    }

    /// Asks for texture `i`'s record and first sizes line (see [`super::prefetch_at`]).
    #[inline(always)]
    pub(super) fn prefetch(&self, i: usize) {
        super::prefetch_at(self.hot, i);
        super::prefetch_at(self.sizes, i);
    }
}

impl PlanTextures {
    /// Every texture as the planner's passes read it.
    #[inline(always)]
    pub(super) fn views(&self) -> Views<'_> {
        let n = self.hot.len();
        Views {
            hot: &self.hot,
            sizes: &self.level_bytes[..n],
            bins: &self.level_pixels[..n],
        }
    }

    /// Texture `i` as the planner's passes read it.
    #[inline(always)]
    pub(super) fn view(&self, i: usize) -> Tex<'_> {
        Tex {
            t: &self.hot[i],
            sizes: &self.level_bytes[i].0,
            bins: &self.level_pixels[i].0,
        }
    }
}
