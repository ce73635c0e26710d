//! Scale buckets: the render scales the targets may take, and their exact byte cost.
//!
//! A render scale is quantised to per-axis steps of 1/16 ([`ScaleBucket`]) between a configurable
//! minimum (default 0.5) and 1.0 ([`BucketRange`]). Why buckets: a continuous scale would
//! reallocate the render targets whenever it moved, churning memory and stalling; with steps of
//! 1/16 a change is worth its reallocation (at 0.5..1.0 one step is 6..12 % of the pixels), and the
//! planner has a short list (9 entries by default) of sizes to trade against texture mips.

/// Number of steps between 0 and 1: a bucket is `n / STEPS` for `n` in `1..=STEPS`.
pub const STEPS: u32 = 16;

/// Default smallest scale: below half resolution per axis (a quarter of the pixels) an FSR1-class
/// spatial upscale visibly falls apart, so going lower buys memory at a price no player accepts.
pub const DEFAULT_MIN_SCALE: f32 = 0.5;

/// A render scale per axis, `n / 16` with `n` in `1..=16`. Ordered by scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ScaleBucket(u8);

impl ScaleBucket {
    /// Native resolution (scale 1.0).
    pub const FULL: ScaleBucket = ScaleBucket(STEPS as u8);
    /// The smallest bucket that exists (1/16); [`BucketRange`] normally stops well above it.
    pub const SMALLEST: ScaleBucket = ScaleBucket(1);

    /// The bucket `n / 16`, with `n` clamped to `1..=16`.
    pub const fn from_sixteenths(n: u32) -> ScaleBucket {
        let n = if n < 1 {
            1
        } else if n > STEPS {
            STEPS
        } else {
            n
        };
        ScaleBucket(n as u8)
    }

    /// The largest bucket not above `scale` (clamped to `1/16..=1`). Rounding down, not to the
    /// nearest: a scale that the memory budget allows must never be rounded into one it does not.
    /// A tiny epsilon absorbs float noise (`0.75` computed as `0.7499999`). Not finite counts as
    /// 1.0 (no limit), which is how the planner reads a non-finite scale too.
    pub fn floor(scale: f32) -> ScaleBucket {
        if !scale.is_finite() {
            return ScaleBucket::FULL;
        }
        let n = (scale * STEPS as f32 + 1e-3).floor();
        // `as` saturates for out-of-range floats; the clamp does the rest.
        ScaleBucket::from_sixteenths(n.max(0.0) as u32)
    }

    /// The bucket nearest to `scale` (clamped to `1/16..=1`; not finite counts as 1.0).
    pub fn nearest(scale: f32) -> ScaleBucket {
        if !scale.is_finite() {
            return ScaleBucket::FULL;
        }
        ScaleBucket::from_sixteenths((scale * STEPS as f32).round().max(0.0) as u32)
    }

    /// The numerator `n` of `n / 16`.
    pub const fn sixteenths(self) -> u32 {
        self.0 as u32
    }

    /// The scale per axis, `n / 16`.
    pub fn scale(self) -> f32 {
        f32::from(self.0) / STEPS as f32
    }

    /// The texture mip bias that matches this scale: `log2(scale)` (zero or negative). Why: at a
    /// lower render scale each texel covers more output pixels after the upscale, so materials
    /// sample one level finer per halving to keep the upscaled image as detailed as the native one.
    pub fn mip_bias(self) -> f32 {
        self.scale().log2()
    }

    /// One step up, saturating at [`ScaleBucket::FULL`].
    pub const fn up(self) -> ScaleBucket {
        ScaleBucket::from_sixteenths(self.0 as u32 + 1)
    }

    /// One step down, saturating at [`ScaleBucket::SMALLEST`].
    pub const fn down(self) -> ScaleBucket {
        ScaleBucket::from_sixteenths(self.0 as u32 - 1)
    }
}

impl Default for ScaleBucket {
    fn default() -> Self {
        ScaleBucket::FULL
    }
}

impl std::fmt::Display for ScaleBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/16 ({:.4})", self.0, self.scale())
    }
}

/// The buckets the controller and the planner may use: `min..=max`, both inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketRange {
    min: ScaleBucket,
    max: ScaleBucket,
}

impl Default for BucketRange {
    fn default() -> Self {
        BucketRange::new(DEFAULT_MIN_SCALE, 1.0)
    }
}

impl BucketRange {
    /// The buckets from `min_scale` (rounded UP to a bucket, so the configured minimum is never
    /// undercut) to `max_scale` (rounded down). Bad input is repaired, never a panic: not finite
    /// `min_scale` means the default 0.5, not finite `max_scale` means 1.0, and `max < min` gives
    /// the single bucket `min`.
    pub fn new(min_scale: f32, max_scale: f32) -> BucketRange {
        let min_scale = if min_scale.is_finite() {
            min_scale
        } else {
            DEFAULT_MIN_SCALE
        };
        let min_n = (min_scale * STEPS as f32 - 1e-3).ceil().max(0.0) as u32;
        let min = ScaleBucket::from_sixteenths(min_n);
        let max = ScaleBucket::floor(max_scale).max(min);
        BucketRange { min, max }
    }

    /// The smallest bucket.
    pub fn min(self) -> ScaleBucket {
        self.min
    }

    /// The largest bucket.
    pub fn max(self) -> ScaleBucket {
        self.max
    }

    /// `b` clamped into the range.
    pub fn clamp(self, b: ScaleBucket) -> ScaleBucket {
        b.clamp(self.min, self.max)
    }

    /// How many buckets the range holds (at least 1).
    pub fn len(self) -> usize {
        (self.max.sixteenths() - self.min.sixteenths() + 1) as usize
    }

    /// Never empty; here for clippy's `len_without_is_empty`.
    pub fn is_empty(self) -> bool {
        false
    }

    /// Every bucket, ascending.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = ScaleBucket> + Clone {
        (self.min.sixteenths()..=self.max.sixteenths()).map(ScaleBucket::from_sixteenths)
    }

    /// Position of `b` (clamped into the range) in [`BucketRange::iter`]: the index the planner's
    /// `current_bucket` wants.
    pub fn index_of(self, b: ScaleBucket) -> usize {
        (self.clamp(b).sixteenths() - self.min.sixteenths()) as usize
    }

    /// The bucket at position `i` of [`BucketRange::iter`] (clamped to the last).
    pub fn at(self, i: usize) -> ScaleBucket {
        let i = i.min(self.len() - 1) as u32;
        ScaleBucket::from_sixteenths(self.min.sixteenths() + i)
    }
}

/// The size of the render targets for an `output` of `(width, height)` at `scale` per axis: each
/// axis is rounded to the nearest pixel and never 0. `scale` is clamped to `(0, 1]`; not finite
/// counts as 1. Why round to nearest: the upscale maps the whole source onto the whole output, so
/// the exact ratio does not matter, and nearest keeps it closest to the nominal scale (and thus
/// to the mip bias).
pub fn scaled_size(output: (u32, u32), scale: f32) -> (u32, u32) {
    let s = if scale.is_finite() {
        scale.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let axis = |v: u32| -> u32 {
        let scaled = (f64::from(v) * f64::from(s)).round();
        // In range: 0 <= scaled <= v <= u32::MAX.
        (scaled as u32).clamp(1, v.max(1))
    };
    (axis(output.0), axis(output.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_range_is_nine_buckets_from_half_to_one() {
        let r = BucketRange::default();
        assert_eq!(r.len(), 9);
        let scales: Vec<f32> = r.iter().map(ScaleBucket::scale).collect();
        assert_eq!(scales.first(), Some(&0.5));
        assert_eq!(scales.last(), Some(&1.0));
        for w in scales.windows(2) {
            assert!((w[1] - w[0] - 1.0 / 16.0).abs() < 1e-6);
        }
        assert_eq!(r.index_of(ScaleBucket::FULL), 8);
        assert_eq!(r.at(0), ScaleBucket::from_sixteenths(8));
        assert_eq!(r.at(99), ScaleBucket::FULL);
    }

    #[test]
    fn bucket_rounding_and_bad_input() {
        assert_eq!(ScaleBucket::floor(0.7499999).sixteenths(), 12);
        assert_eq!(ScaleBucket::floor(0.74).sixteenths(), 11);
        assert_eq!(ScaleBucket::floor(f32::NAN), ScaleBucket::FULL);
        assert_eq!(ScaleBucket::floor(-3.0), ScaleBucket::SMALLEST);
        assert_eq!(ScaleBucket::floor(7.0), ScaleBucket::FULL);
        assert_eq!(ScaleBucket::nearest(0.74).sixteenths(), 12);
        assert_eq!(ScaleBucket::FULL.up(), ScaleBucket::FULL);
        assert_eq!(ScaleBucket::SMALLEST.down(), ScaleBucket::SMALLEST);
        assert_eq!(ScaleBucket::FULL.mip_bias(), 0.0);
        assert_eq!(ScaleBucket::from_sixteenths(8).mip_bias(), -1.0);
        // The minimum rounds up, never undercutting the configured floor.
        assert_eq!(BucketRange::new(0.6, 1.0).min().sixteenths(), 10);
        assert_eq!(BucketRange::new(f32::NAN, 1.0), BucketRange::default());
        let r = BucketRange::new(0.9, 0.2);
        assert_eq!((r.min(), r.max(), r.len()), (r.min(), r.min(), 1));
    }

    #[test]
    fn scaled_size_is_never_zero() {
        assert_eq!(scaled_size((1920, 1080), 0.75), (1440, 810));
        assert_eq!(scaled_size((320, 240), 0.5), (160, 120));
        assert_eq!(scaled_size((0, 0), 0.5), (1, 1));
        assert_eq!(scaled_size((1, 1), 0.0), (1, 1));
        assert_eq!(scaled_size((3, 3), f32::NAN), (3, 3));
        assert_eq!(scaled_size((u32::MAX, 7), 2.0), (u32::MAX, 7));
    }
}
