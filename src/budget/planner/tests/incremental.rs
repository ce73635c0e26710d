//! Incremental planning: which textures a plan goes through, and that skipping the quiet ones
//! gives exactly a full pass's plans.

use super::*;

/// 1000 textures at their floor (level 2), out of view but for the first 10, which want level
/// 0.5 on 5000 pixels.
fn thousand_with_ten_in_view() -> PlanTextures {
    let mut textures = scene((0..1000).map(|_| tex(2, f32::INFINITY, 0.0)));
    for t in textures.iter_mut().take(10) {
        t.wanted_level = 0.5;
        t.screen_pixels = 5000.0;
    }
    textures
}

/// A planner that goes through every texture every frame: the reference for incremental plans.
fn full_planner() -> Planner {
    Planner::new(PlannerConfig {
        incremental: false,
        ..PlannerConfig::default()
    })
}

/// Plans frame `frame` with the incremental planner (executed, as [`run`]) and a full one on
/// the same inputs, asserts the two plans are the same, and returns how many textures the
/// incremental plan went through.
fn step_both(
    inc: &mut Planner,
    full: &mut Planner,
    frame: u64,
    budget: u64,
    textures: &mut PlanTextures,
) -> usize {
    let snapshot = textures.clone();
    let mut b = Plan::default();
    let _ = full.plan(&input(frame, budget, &snapshot), &mut b);
    let a = run(inc, frame, budget, textures);
    assert_eq!(a, b, "frame {frame}");
    // `==` takes -0.0 for +0.0: the blur's bits too.
    assert_eq!(
        a.quality_cost.to_bits(),
        b.quality_cost.to_bits(),
        "frame {frame}"
    );
    inc.last_plan_textures()
}

/// Incremental planning: in a scene of 1000 textures of which 10 are in view, once settled, a
/// moving view re-plans only the textures in view (the others are quiet: at their floors,
/// nothing wanted), and every plan equals a full planner's, including the frame a quiet
/// texture comes into view and the frame it leaves.
#[test]
fn a_moving_view_replans_only_the_textures_in_view() {
    let mut textures = thousand_with_ten_in_view();
    let (mut inc, mut full) = (Planner::default(), full_planner());
    let budget = 1000 * 20 + 10 * 340;
    let mut frame = 0;
    let mut step = |textures: &mut PlanTextures, frame: u64| {
        step_both(&mut inc, &mut full, frame, budget, textures)
    };
    // Settle past the holds.
    while frame < 250 {
        step(&mut textures, frame);
        frame += 1;
    }
    assert_eq!(
        textures[0].resident_level, 0,
        "the textures in view are sharp"
    );
    for k in 0..20 {
        for t in textures.iter_mut().take(10) {
            t.wanted_level = 0.5 + 0.01 * (k % 2) as f32;
        }
        let planned = step(&mut textures, frame);
        assert_eq!(planned, 10, "frame {frame}: only the 10 in view");
        frame += 1;
    }
    // One comes into view and one leaves: both are planned, and the plans still agree.
    textures[500].wanted_level = 0.0;
    textures[500].screen_pixels = 2000.0;
    textures[3].wanted_level = f32::INFINITY;
    textures[3].screen_pixels = 0.0;
    assert_eq!(step(&mut textures, frame), 11);
}

/// A texture in view that wants nothing finer than its floor (a distant object) is quiet too:
/// while the camera moves, its demand changes every frame but it is not planned again, as long
/// as it stays that far (its blur is 0 and no step gains); the plans equal a full planner's,
/// and the frame one comes close enough to want more, it is planned and grows. With a
/// histogram the same holds (every pixel at the floor or coarser).
#[test]
fn a_moving_view_skips_what_wants_nothing_finer_than_its_floor() {
    let mut textures = thousand_with_ten_in_view();
    // 300 far away (the floor is level 2): 200 by their wanted level, 100 by a histogram.
    for t in &mut textures.as_mut_slice()[10..210] {
        t.wanted_level = 2.5;
        t.screen_pixels = 40.0;
    }
    for i in 210..310 {
        textures.set_level_pixels(i, &[0.0, 0.0, 30.0, 10.0]);
    }
    let (mut inc, mut full) = (Planner::default(), full_planner());
    let budget = 1000 * 20 + 10 * 340 + 600;
    let mut step = |textures: &mut PlanTextures, frame: u64| {
        step_both(&mut inc, &mut full, frame, budget, textures)
    };
    let mut frame = 0;
    while frame < 250 {
        step(&mut textures, frame);
        frame += 1;
    }
    for k in 0..20 {
        let d = 0.01 * (k % 2) as f32;
        for t in textures.iter_mut().take(210) {
            t.wanted_level += if k % 2 == 0 { 0.01 } else { -0.01 };
            t.screen_pixels *= 1.0 + d;
        }
        for i in 210..310 {
            textures.set_level_pixels(i, &[0.0, 0.0, 30.0 + k as f32, 10.0]);
        }
        let planned = step(&mut textures, frame);
        assert_eq!(planned, 10, "frame {frame}: only the 10 near ones");
        frame += 1;
    }
    assert!(
        textures.as_slice()[10..310]
            .iter()
            .all(|t| t.resident_level == 2)
    );
    // One far texture comes close, one histogram gets pixels that want level 1: both planned.
    textures[20].wanted_level = 0.0;
    textures[20].screen_pixels = 2000.0;
    textures.set_level_pixels(220, &[0.0, 500.0, 30.0, 10.0]);
    assert_eq!(step(&mut textures, frame), 12);
    assert!(textures[20].resident_level < 2, "the near one grows");
    assert!(textures[220].resident_level < 2, "so does the histogram");
}

/// A scene where every texture is far (all quiet) and the camera moves: the plan is made again
/// through no texture at all, and its blur is +0.0 to the bit, as a full pass's is (the scale's
/// blur at scale 1 was -0.0 before a texture's +0.0 was added to it).
#[test]
fn a_plan_through_no_texture_reports_the_same_blur_bits() {
    let mut textures = scene((0..100).map(|_| tex(2, 2.5, 40.0)));
    let (mut inc, mut full) = (Planner::default(), full_planner());
    for frame in 0..300 {
        for t in textures.iter_mut() {
            t.wanted_level = 2.5 + 0.01 * (frame % 2) as f32;
        }
        let planned = step_both(&mut inc, &mut full, frame, 10_000, &mut textures);
        if frame > 250 {
            assert_eq!(planned, 0, "frame {frame}: every texture is quiet");
        }
    }
}

/// A texture in view with priority 0 gains nothing from any mip, but its pixels' blur still
/// counts in `quality_cost`: it is not quiet, and the incremental plans keep equal to the full
/// planner's on every frame, past its hold.
#[test]
fn a_texture_with_no_priority_still_counts_its_blur() {
    let mut textures = scene((0..100).map(|_| tex(2, f32::INFINITY, 0.0)));
    textures[0] = tex(2, 0.0, 1000.0);
    textures[0].priority = 0.0;
    textures[1] = tex(2, 0.5, 5000.0);
    let (mut inc, mut full) = (Planner::default(), full_planner());
    let budget = 100 * 20 + 340;
    for frame in 0..300 {
        textures[1].wanted_level = 0.5 + 0.01 * (frame % 2) as f32;
        // The whole plans equal, the blur's bits included.
        step_both(&mut inc, &mut full, frame, budget, &mut textures);
    }
    assert_eq!(
        textures[0].resident_level, 2,
        "no priority: kept at its floor"
    );
}

/// The summary of resident steps (the incremental plan takes those well above the previous
/// plan's price without sorting them) gives the greedy's plan even where the greedy's order
/// is not a texture's order: a chain whose finer level is smaller than the coarser one (8
/// bytes under 64) makes the finer step worth more per byte, so the greedy meets it first,
/// while its coarser step is not taken yet, and drops it. Resident at 0, the texture is planned
/// at level 1 by both planners, on a first frame (no summary yet) and on the next ones (a
/// summary would keep level 0 if it ignored the order); and a grow that the greedy meets
/// before the summarised step it needs is blocked too.
#[test]
fn a_summary_keeps_the_greedys_order() {
    const ODD: [u64; 4] = [8, 64, 16, 4];
    for resident in [0, 1] {
        let mut textures = PlanTextures::new();
        let t = textures.push(&ODD, 2);
        (t.resident_level, t.wanted_level, t.screen_pixels) = (resident, 0.0, 1000.0);
        let (mut inc, mut full) = (Planner::default(), full_planner());
        for frame in 0..4 {
            // The view moves a little: every frame is planned again.
            textures[0].wanted_level = frame as f32 * 0.01;
            let (mut a, mut b) = (Plan::default(), Plan::default());
            let _ = inc.plan(&input(frame, 1000, &textures), &mut a);
            let _ = full.plan(&input(frame, 1000, &textures), &mut b);
            assert_eq!(a, b, "resident {resident}, frame {frame}");
            assert_eq!(
                a.target_level,
                vec![1],
                "resident {resident}, frame {frame}"
            );
        }
    }
}

/// The change scan's view-only loop gives the same bits and keeps the same words with AVX2
/// as without, on a block whose textures changed in every way the loop tells apart: nothing,
/// their view (wanted level, pixels, priority), their levels, their identity, `busy`, their
/// bases, a histogram now or before.
#[test]
fn the_view_loop_is_the_same_with_and_without_avx2() {
    let mut rng = crate::testing::SplitMix64(7);
    let mut textures = PlanTextures::new();
    for _ in 0..64 {
        let side = 1u32 << (4 + rng.next() % 8);
        let t = crate::testing::planner_fixture::bc7_chain(&mut textures, side);
        t.wanted_level = rng.unit() * 6.0 - 1.0;
        t.screen_pixels = if rng.next().is_multiple_of(4) {
            0.0
        } else {
            rng.unit() * 1e4
        };
    }
    let seen: Vec<Seen> = textures.iter().map(Seen::of).collect();
    let mut kinds = [0u32; 9];
    for (j, t) in textures.iter_mut().enumerate() {
        let kind = rng.next() % 9;
        kinds[kind as usize] += 1;
        match kind {
            0 => {}
            1 => t.wanted_level += 0.25,
            2 => t.screen_pixels += 1.0,
            3 => t.priority = 2.0,
            4 => t.resident_level = t.resident_level.saturating_sub(1),
            5 => t.busy = true,
            6 => t.base_levels ^= 1,
            7 => t.in_flight_level = 1,
            _ => t.histogram = j % 2 == 0,
        }
    }
    let mut seen = seen;
    // A texture that had a histogram (its words carry the mark): never the view loop's.
    seen[63].0[3] |= 1 << 32;
    assert!(
        kinds.iter().all(|&k| k > 0),
        "every kind of change in the block: {kinds:?}"
    );
    let tex = textures.as_slice();
    let candidates = u64::MAX;
    let (mut a, mut b) = (seen.clone(), seen.clone());
    let plain = super::scan::view_loop::<false>(tex, &mut a, candidates);
    assert_eq!(
        plain.0.count_ones() as usize,
        (0..64)
            .filter(|&j| {
                let (now, was) = (Seen::cheap(&tex[j]), seen[j]);
                now != was && now.same_but_view(&was)
            })
            .count()
    );
    assert_eq!(
        plain.1,
        (0..64).fold(0, |m, j| {
            m | u64::from(!Seen::cheap(&tex[j]).same_but_view(&seen[j])) << j
        })
    );
    if super::scan::wide_compare() {
        // SAFETY: the CPU has AVX2.
        let wide = unsafe { super::scan::view_loop_avx2::<false>(tex, &mut b, candidates) };
        assert_eq!(plain, wide);
        assert_eq!(a, b);
    }
}
