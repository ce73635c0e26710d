//! The resolution controller's unit tests (in a file of their own: the controller is long
//! enough).

use super::*;

fn mem(scale: f32) -> ControllerInput {
    ControllerInput {
        memory_max_scale: scale,
        ..Default::default()
    }
}

/// A deterministic noise source in [-1, 1] (xorshift64*), so the tests are reproducible.
struct Noise(u64);
impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        (v as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

#[test]
fn budget_drop_lowers_the_scale_within_one_frame() {
    let mut c = ResolutionController::default();
    for _ in 0..50 {
        assert_eq!(c.update(&mem(1.0)), ScaleBucket::FULL);
    }
    let b = c.update(&mem(0.6));
    assert_eq!(
        b,
        ScaleBucket::from_sixteenths(9),
        "0.6 rounds down to 9/16"
    );
    let last = c.last_change().unwrap();
    assert_eq!(last.reason, ChangeReason::MemoryDown);
    assert_eq!((last.from, last.to, last.frame), (ScaleBucket::FULL, b, 50));
    // Below the range: clamped to the minimum, never below.
    assert_eq!(c.update(&mem(0.1)), ScaleBucket::from_sixteenths(8));
}

#[test]
fn restoring_the_budget_raises_the_scale_within_the_stable_window() {
    let cfg = ControllerConfig::default();
    let window = cfg.up_stable_frames;
    let mut c = ResolutionController::new(cfg);
    c.update(&mem(0.5));
    assert_eq!(c.bucket().scale(), 0.5);
    for i in 1..window {
        assert_eq!(c.update(&mem(1.0)).scale(), 0.5, "went up early, frame {i}");
    }
    assert_eq!(c.update(&mem(1.0)), ScaleBucket::FULL);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::MemoryUp);
    // A dip inside the window restarts it, and the move goes to the lowest cap seen.
    c.update(&mem(0.5));
    for _ in 0..window / 2 {
        c.update(&mem(0.8));
    }
    c.update(&mem(0.5));
    for _ in 0..window - 1 {
        c.update(&mem(0.9));
    }
    assert_eq!(c.bucket().scale(), 0.5);
    for _ in 0..window / 2 {
        c.update(&mem(1.0));
    }
    assert_eq!(
        c.bucket(),
        ScaleBucket::floor(0.9),
        "the lowest cap seen in the window"
    );
}

#[test]
fn a_steady_input_changes_the_scale_zero_times_over_300_frames() {
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    for memory in [1.0, 0.8, 0.5] {
        let mut c = ResolutionController::default();
        let input = |t: f32| ControllerInput {
            memory_max_scale: memory,
            frame_time_ms: Some(t),
            target_frame_ms: Some(16.6),
            ..Default::default()
        };
        // The first frame takes the memory cap; from then on nothing moves.
        c.update(&input(14.0));
        let settled = c.change_count();
        for _ in 0..300 {
            // Within ±8 % of 14 ms: well inside the band around 16.6 ms.
            c.update(&input(14.0 * (1.0 + 0.08 * noise.next())));
        }
        assert_eq!(
            c.change_count(),
            settled,
            "memory {memory}: {:?}",
            c.history().collect::<Vec<_>>()
        );
    }
}

/// A simulated GPU whose frame time is proportional to the pixel count (or, second model, 30 %
/// fixed cost and 70 % per pixel), with ±25 % uniform noise per frame: for every load the
/// controller finds a bucket that fits, never returns to a bucket it left, and after 300
/// frames changes at most once more in 5000 frames.
#[test]
fn the_time_path_does_not_oscillate_with_noisy_input() {
    let target = 16.6;
    for fixed in [0.0f32, 0.3] {
        for (seed, load) in [1.05f32, 1.15, 1.25, 1.4, 1.6, 1.9, 2.2, 2.6, 3.0, 4.5]
            .into_iter()
            .enumerate()
        {
            let mut noise = Noise(0xD1B5_4A32_D192_ED03 ^ (seed as u64 + 1));
            let mut c = ResolutionController::default();
            let time = |s: f32| target * load * (fixed + (1.0 - fixed) * s * s);
            let mut changes_after_settling = 0;
            for frame in 0..5300 {
                let t = time(c.bucket().scale()) * (1.0 + 0.25 * noise.next());
                let before = c.change_count();
                c.update(&ControllerInput {
                    memory_max_scale: 1.0,
                    frame_time_ms: Some(t),
                    target_frame_ms: Some(target),
                    ..Default::default()
                });
                if frame >= 300 && c.change_count() != before {
                    changes_after_settling += 1;
                }
            }
            let history: Vec<_> = c.history().collect();
            // Settled: at most one late step (a bucket right at the prediction's margin may
            // take a while to qualify) ...
            assert!(
                changes_after_settling <= 1,
                "load {load}, fixed {fixed}: {history:?}"
            );
            // ... and never back to a bucket it left: no A -> B -> A, ever.
            let mut visited = vec![ScaleBucket::FULL];
            for h in &history {
                assert!(
                    !visited.contains(&h.to),
                    "load {load}, fixed {fixed}: returned to {}: {history:?}",
                    h.to
                );
                visited.push(h.to);
            }
            // It settled where the time fits (or at the floor), not merely anywhere.
            let t = time(c.bucket().scale());
            assert!(
                t <= target * 1.1 || c.bucket() == c.config().range.min(),
                "load {load}, fixed {fixed}: settled at {} ({t:.1} ms)",
                c.bucket()
            );
            assert!(c.history().all(|h| matches!(
                h.reason,
                ChangeReason::GpuTimeDown | ChangeReason::GpuTimeUp
            )));
        }
    }
}

#[test]
fn the_time_path_goes_down_on_overload_and_back_up_when_it_ends() {
    let mut c = ResolutionController::default();
    let target = 10.0;
    let mut load = 1.6f32;
    for frame in 0..400 {
        if frame == 200 {
            load = 0.5;
        }
        let s = c.bucket().scale();
        c.update(&ControllerInput {
            frame_time_ms: Some(target * load * s * s),
            target_frame_ms: Some(target),
            time_source: TimeSource::Cpu,
            ..Default::default()
        });
        if frame == 199 {
            assert!(c.bucket() < ScaleBucket::FULL);
            let s = c.bucket().scale();
            assert!(target * load * s * s <= target * 1.1);
            assert_eq!(
                c.history().next().unwrap().reason,
                ChangeReason::CpuTimeDown
            );
        }
    }
    assert_eq!(c.bucket(), ScaleBucket::FULL);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::CpuTimeUp);
}

#[test]
fn memory_and_time_combine_by_minimum() {
    let mut c = ResolutionController::default();
    let input = |m: f32, t: f32| ControllerInput {
        memory_max_scale: m,
        frame_time_ms: Some(t),
        target_frame_ms: Some(10.0),
        ..Default::default()
    };
    // Time fits at full scale, memory caps at 0.75.
    for _ in 0..100 {
        c.update(&input(0.75, 8.0 * 0.75 * 0.75));
    }
    assert_eq!(c.bucket().scale(), 0.75);
    assert_eq!(c.history().count(), 1);
    // Memory lifted while time is fine: back to full, for the memory reason.
    for _ in 0..100 {
        let s = c.bucket().scale();
        c.update(&input(1.0, 8.0 * s * s));
    }
    assert_eq!(c.bucket(), ScaleBucket::FULL);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::MemoryUp);
}

#[test]
fn lerp_baseline_mode() {
    let r = BucketRange::default();
    assert_eq!(lerp_baseline(r, 0, 1000).scale(), 0.5);
    assert_eq!(lerp_baseline(r, 500, 1000).scale(), 0.75);
    assert_eq!(lerp_baseline(r, 5000, 1000), ScaleBucket::FULL);
    assert_eq!(lerp_baseline(r, 5, 0), ScaleBucket::FULL);
    let mut c = ResolutionController::new(ControllerConfig {
        mode: ControllerMode::LerpBaseline {
            reference_bytes: 1 << 30,
        },
        ..Default::default()
    });
    let avail = |a: Option<u64>| ControllerInput {
        // Ignored in this mode.
        memory_max_scale: 0.1,
        available_bytes: a,
        ..Default::default()
    };
    assert_eq!(c.update(&avail(Some(1 << 29))).scale(), 0.75);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::MemoryDown);
    // No figure: the cap stays where it was.
    for _ in 0..100 {
        assert_eq!(c.update(&avail(None)).scale(), 0.75);
    }
}

#[test]
fn fixed_mode_and_force() {
    let mut c = ResolutionController::new(ControllerConfig {
        mode: ControllerMode::Fixed(ScaleBucket::from_sixteenths(10)),
        ..Default::default()
    });
    assert_eq!(c.update(&mem(1.0)).sixteenths(), 10);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::Manual);
    // Memory still caps a fixed setting.
    assert_eq!(c.update(&mem(0.5)).sixteenths(), 8);
    let mut c = ResolutionController::default();
    c.force(ScaleBucket::from_sixteenths(2));
    assert_eq!(c.bucket().sixteenths(), 8, "clamped to the range");
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::Manual);
    c.set_config(ControllerConfig {
        range: BucketRange::new(0.75, 1.0),
        ..Default::default()
    });
    assert_eq!(c.bucket().sixteenths(), 12);
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::Config);
}

#[test]
fn history_is_a_ring_oldest_first() {
    let mut c = ResolutionController::new(ControllerConfig {
        up_stable_frames: 1,
        ..Default::default()
    });
    for i in 0..40 {
        c.update(&mem(if i % 2 == 0 { 0.5 } else { 1.0 }));
    }
    assert_eq!(c.change_count(), 40);
    let h: Vec<_> = c.history().copied().collect();
    assert_eq!(h.len(), HISTORY);
    assert!(h.windows(2).all(|w| w[0].frame < w[1].frame));
    assert_eq!(h.last(), c.last_change());
    assert_eq!(h.last().unwrap().frame, 39);
}

#[test]
fn bad_input_never_panics() {
    let mut c = ResolutionController::new(ControllerConfig {
        up_stable_frames: 0,
        time_ema_alpha: f32::NAN,
        dead_band: -4.0,
        range: BucketRange::new(f32::INFINITY, f32::NAN),
        ..Default::default()
    });
    for v in [
        f32::NAN,
        f32::INFINITY,
        -1.0,
        0.0,
        f32::MAX,
        f32::MIN_POSITIVE,
    ] {
        c.update(&ControllerInput {
            memory_max_scale: v,
            available_bytes: Some(u64::MAX),
            frame_time_ms: Some(v),
            time_source: TimeSource::Gpu,
            target_frame_ms: Some(v),
        });
    }
    assert!(c.config().range.clamp(c.bucket()) == c.bucket());
}

/// A frame time of `f32::MAX` followed by a step up (forced) left the average infinite,
/// then NaN for good, and a NaN average always wanted the top bucket: the time path never
/// stepped down again. Frame times are now capped at a minute.
#[test]
fn a_huge_frame_time_does_not_poison_the_average() {
    let mut c = ResolutionController::new(ControllerConfig {
        range: BucketRange::new(0.25, 1.0),
        ..Default::default()
    });
    let input = |t: f32| ControllerInput {
        frame_time_ms: Some(t),
        target_frame_ms: Some(10.0),
        ..ControllerInput::default()
    };
    for _ in 0..20 {
        c.update(&input(f32::MAX));
    }
    assert!(c.bucket() < ScaleBucket::FULL);
    c.force(ScaleBucket::FULL);
    for _ in 0..200 {
        c.update(&input(5.0));
    }
    let ema = c.smoothed_frame_ms().unwrap();
    assert!(ema.is_finite() && ema < 10.0, "average {ema}");
    // And it still steps down when frames are slow.
    for _ in 0..50 {
        c.update(&input(40.0));
    }
    assert!(c.bucket() < ScaleBucket::FULL, "{}", c.bucket());
}

/// A bucket the caller could not make is not stepped up to again while the memory input
/// holds; a higher one is, and `lift_refusals` or a new memory input opens it again.
#[test]
fn a_refused_bucket_is_not_tried_again() {
    let mut c = ResolutionController::new(ControllerConfig {
        mode: ControllerMode::Fixed(ScaleBucket::from_sixteenths(15)),
        ..Default::default()
    });
    let mem = |s: f32| ControllerInput {
        memory_max_scale: s,
        ..ControllerInput::default()
    };
    assert_eq!(c.update(&mem(1.0)), ScaleBucket::from_sixteenths(15));
    c.note_made(ScaleBucket::from_sixteenths(13));
    assert_eq!(c.bucket(), ScaleBucket::from_sixteenths(13));
    assert_eq!(c.last_change().unwrap().reason, ChangeReason::MemoryDown);
    let changes = c.change_count();
    for _ in 0..500 {
        assert_eq!(c.update(&mem(1.0)), ScaleBucket::from_sixteenths(13));
    }
    assert_eq!(c.change_count(), changes);
    // Not lower: nothing.
    c.note_made(ScaleBucket::FULL);
    assert_eq!(c.bucket(), ScaleBucket::from_sixteenths(13));
    // Prices changed: tried again after the stable window.
    c.lift_refusals();
    let up = (0..100).map(|_| c.update(&mem(1.0))).last().unwrap();
    assert_eq!(up, ScaleBucket::from_sixteenths(15));
    // A new memory input lifts it too.
    c.note_made(ScaleBucket::from_sixteenths(13));
    let up = (0..100).map(|_| c.update(&mem(0.99))).last().unwrap();
    assert_eq!(up, ScaleBucket::from_sixteenths(15));
}

/// A hitch (one slow frame: a shader compiled, a page fault, the time a window spent minimised
/// counted as one frame) is not a load: 12 ms frames against a 16.6 ms target with an 80 ms
/// frame every 60 frames, or one frame of 10 s, change nothing (before: down at once at every
/// hitch and back up 38 frames later, two reallocations a second). A lasting load still steps
/// down within a few frames, and two slow frames in a row count.
#[test]
fn a_lone_slow_frame_does_not_move_the_scale() {
    let target = 16.6;
    let input = |t: f32| ControllerInput {
        memory_max_scale: 1.0,
        frame_time_ms: Some(t),
        target_frame_ms: Some(target),
        ..Default::default()
    };
    let mut c = ResolutionController::default();
    for frame in 0..3600 {
        let t = if frame % 60 == 59 { 80.0 } else { 12.0 };
        c.update(&input(t));
    }
    for _ in 0..10 {
        c.update(&input(12.0));
    }
    c.update(&input(10_000.0));
    for _ in 0..100 {
        c.update(&input(12.0));
    }
    assert_eq!(c.change_count(), 0, "{:?}", c.history().collect::<Vec<_>>());
    // A lasting 25 ms load: down within 10 frames.
    let mut frames = 0;
    while c.bucket() == ScaleBucket::FULL && frames < 100 {
        c.update(&input(25.0));
        frames += 1;
    }
    assert!(frames <= 10, "{frames} frames to react to a lasting load");
}
