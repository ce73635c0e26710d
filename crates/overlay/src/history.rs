//! The last ~30 seconds of the ledger, sampled ten times a second, for the overlay's plot and its
//! upload rate. A fixed-capacity ring: after start-up, recording never allocates.

use std::collections::VecDeque;

use mipflow::Category;
use mipflow::FrameStats;

/// Seconds between samples. Why 0.1 s: 300 points cover 30 s, enough for a smooth plot and
/// cheap to draw every frame.
pub const SAMPLE_INTERVAL_S: f64 = 0.1;
/// Samples kept (30 s).
pub const CAPACITY: usize = 300;

/// One sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the demo started.
    pub t: f64,
    /// The frame sampled ([`FrameStats::frame`]), to place events on the time axis.
    pub frame: u64,
    /// Bytes per category, in [`Category::ALL`] order.
    pub bytes: [u64; 6],
    /// The budget.
    pub budget: u64,
    /// The render scale.
    pub scale: f32,
    /// Upload rate since the previous sample, bytes per second.
    pub upload_bps: f64,
}

/// The ring of samples.
#[derive(Debug)]
pub struct History {
    samples: VecDeque<Sample>,
    last_t: f64,
    uploaded_since: u64,
}

impl Default for History {
    fn default() -> Self {
        Self {
            samples: VecDeque::with_capacity(CAPACITY + 1),
            last_t: f64::NEG_INFINITY,
            uploaded_since: 0,
        }
    }
}

impl History {
    /// Records a frame at time `t` (seconds): its uploads always count, a sample is taken every
    /// [`SAMPLE_INTERVAL_S`]. Returns whether a sample was taken.
    pub fn record(&mut self, t: f64, stats: &FrameStats) -> bool {
        self.uploaded_since += stats.stream.uploaded_bytes;
        if t < self.last_t {
            // The caller's clock went back (restarted, or another clock): the samples before
            // are on a time axis that no longer exists. Start again from this one; held to
            // the old samples, the history took none until the clock passed them again.
            self.samples.clear();
            self.last_t = f64::NEG_INFINITY;
        }
        if !t.is_finite() || t - self.last_t < SAMPLE_INTERVAL_S {
            return false;
        }
        let dt = t - self.last_t;
        let upload_bps = if dt.is_finite() && dt > 0.0 {
            self.uploaded_since as f64 / dt
        } else {
            0.0
        };
        let mut bytes = [0u64; 6];
        for (b, c) in bytes.iter_mut().zip(Category::ALL) {
            *b = stats.ledger.by_category.get(c).bytes;
        }
        if self.samples.len() == CAPACITY {
            self.samples.pop_front();
        }
        self.samples.push_back(Sample {
            t,
            frame: stats.frame,
            bytes,
            budget: stats.budget_bytes,
            scale: stats.render_scale,
            upload_bps,
        });
        self.last_t = t;
        self.uploaded_since = 0;
        true
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> &VecDeque<Sample> {
        &self.samples
    }

    /// The time of `frame` on the history's clock (the first sample at or after it), while the
    /// history still covers it.
    pub fn time_of_frame(&self, frame: u64) -> Option<f64> {
        if self.samples.front().is_none_or(|s| s.frame > frame) {
            return None;
        }
        let i = self.samples.partition_point(|s| s.frame < frame);
        self.samples.get(i).or(self.samples.back()).map(|s| s.t)
    }

    /// The latest sample.
    pub fn last(&self) -> Option<&Sample> {
        self.samples.back()
    }

    /// Mean upload rate over the last `seconds`, bytes per second.
    pub fn upload_rate(&self, seconds: f64) -> f64 {
        let Some(last) = self.samples.back() else {
            return 0.0;
        };
        let from = last.t - seconds;
        let (mut sum, mut n) = (0.0, 0usize);
        for s in self.samples.iter().rev().take_while(|s| s.t > from) {
            sum += s.upload_bps;
            n += 1;
        }
        if n == 0 { 0.0 } else { sum / n as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_at_the_interval_and_stays_bounded() {
        let mut h = History::default();
        let mut stats = FrameStats::default();
        stats.stream.uploaded_bytes = 1000;
        stats.render_scale = 0.75;
        let mut taken = 0;
        for f in 0..10_000u32 {
            if h.record(f64::from(f) / 60.0, &stats) {
                taken += 1;
            }
        }
        // 10,000 frames at 60 fps = 166.7 s, one sample per 0.1 s (rounded to frames).
        assert!((1400..=1700).contains(&taken), "{taken}");
        assert_eq!(h.samples().len(), CAPACITY);
        let cap = h.samples.capacity();
        h.record(1e6, &stats);
        assert_eq!(h.samples.capacity(), cap, "the ring never grows");
        // 1000 bytes per frame at 60 fps.
        let rate = h.samples()[CAPACITY - 2].upload_bps;
        assert!((rate - 60_000.0).abs() < 10_000.0, "{rate}");
        assert_eq!(h.last().map(|s| s.scale), Some(0.75));
    }

    #[test]
    fn a_clock_that_goes_back_restarts_the_history() {
        let mut h = History::default();
        let stats = FrameStats::default();
        for i in 0..10 {
            assert!(h.record(1000.0 + f64::from(i) * 0.2, &stats));
        }
        assert_eq!(h.samples().len(), 10);
        // Back to 0: sampled at once, alone, and on from there.
        assert!(h.record(0.0, &stats));
        assert_eq!(h.samples().len(), 1);
        assert!(!h.record(0.05, &stats));
        assert!(h.record(0.2, &stats));
        assert_eq!(
            h.samples().iter().map(|s| s.t).collect::<Vec<_>>(),
            [0.0, 0.2]
        );
    }

    #[test]
    fn non_finite_time_is_ignored() {
        let mut h = History::default();
        assert!(!h.record(f64::NAN, &FrameStats::default()));
        assert!(h.samples().is_empty());
        assert_eq!(h.upload_rate(1.0), 0.0);
    }
}
