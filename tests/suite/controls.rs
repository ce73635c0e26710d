//! The streaming controls a game gets besides demand: level limits, never-stream, a requested
//! level, force-resident for a while, "is it resident?" and its future, a global mip bias, and
//! "load everything". Each is planned under the same budget.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::common;

use mipflow::{
    BudgetManager, FrameStats, FrameTiming, GpuContext, TextureHandle, TextureOptions,
    TextureSource,
};

const KIB: u64 = 1 << 10;

/// A manager without render targets on `ctx`, `budget` bytes.
fn manager(ctx: &GpuContext, budget: u64, deterministic: bool) -> BudgetManager {
    common::manager(ctx, common::manager_config(budget, false, deterministic))
}

fn add(m: &mut BudgetManager, seed: u64, size: u32, opts: TextureOptions) -> TextureHandle {
    let bytes = common::cooked("controls", seed, size);
    m.add_texture(TextureSource::Bytes(bytes.into()), opts)
        .unwrap()
}

/// One frame: `demand` (texture, level, pixels) given, planned, submitted, ended.
fn frame(m: &mut BudgetManager, demand: &[(TextureHandle, f32, f32)]) -> FrameStats {
    for &(h, level, pixels) in demand {
        m.add_demand(h, level, pixels);
    }
    let plan = m.frame((1280, 720), FrameTiming::default()).unwrap();
    m.context().queue().submit([]);
    m.end_frame();
    m.frame_stats(&plan, FrameTiming::default())
}

/// Runs frames until `done`, at most `limit` of them; every frame within the budget.
#[track_caller]
fn until(
    m: &mut BudgetManager,
    demand: &[(TextureHandle, f32, f32)],
    limit: u32,
    done: impl Fn(&BudgetManager) -> bool,
) -> u32 {
    for n in 0..limit {
        let s = frame(m, demand);
        assert!(s.frame_peak_bytes <= s.budget_bytes, "frame {n}: {s:?}");
        if done(m) {
            return n + 1;
        }
    }
    let states: Vec<_> = demand.iter().map(|d| m.residency(d.0)).collect();
    panic!("not done in {limit} frames: {states:#?}");
}

fn level(m: &BudgetManager, h: TextureHandle) -> u8 {
    m.residency(h).unwrap().resident_level
}

/// The texture's floor: its coarsest levels, always resident.
fn floor(m: &BudgetManager, h: TextureHandle) -> u8 {
    m.plan_textures()[h.index() as usize].floor_level
}

/// A texture forced resident holds its level for the whole duration while four others, wanted
/// full screen, press the budget (they give it room); then it decays and they take the room
/// back.
#[test]
fn a_forced_texture_holds_its_level_for_the_duration_then_decays() {
    let Some(ctx) = common::gpu() else { return };
    // 256 KiB of staging headroom, five floors, and room for about three 256² chains.
    let mut m = manager(&ctx, 256 * KIB + 7 * KIB + 270 * KIB, true);
    let forced = add(&mut m, 1, 256, TextureOptions::default());
    let others: Vec<_> = (2..6)
        .map(|s| add(&mut m, s, 256, TextureOptions::default()))
        .collect();
    let mut demand: Vec<_> = others.iter().map(|&h| (h, 0.0, 1e6)).collect();
    // The forced texture is barely in view: a corner of it, far away.
    demand.push((forced, 5.0, 10.0));
    let forced_floor = floor(&m, forced);
    let others_bytes = |m: &BudgetManager| -> u64 {
        others
            .iter()
            .map(|&h| {
                m.plan_textures()
                    .bytes_from(h.index() as usize, level(m, h))
            })
            .sum()
    };
    until(&mut m, &demand, 60, |m| level(m, forced) == forced_floor);
    for _ in 0..5 {
        frame(&mut m, &demand);
    }
    let before = others_bytes(&m);
    let hold = Duration::from_secs(4);
    assert!(m.force_resident(forced, 0, hold));
    let start = Instant::now();
    // No hold keeps a forced texture short of its level: a few frames (deterministic reads).
    let frames = until(&mut m, &demand, 300, |m| level(m, forced) == 0);
    assert!(frames <= 20, "forced level 0 took {frames} frames");
    let mut frames_held = 0;
    while start.elapsed() < hold - Duration::from_millis(150) {
        let s = frame(&mut m, &demand);
        assert!(s.frame_peak_bytes <= s.budget_bytes, "{s:?}");
        assert_eq!(level(&m, forced), 0, "held for the duration");
        let r = m.residency(forced).unwrap();
        assert_eq!(r.required_level, Some(0));
        assert!(r.required_met, "{r:?}");
        assert_eq!(s.unmet_required, 0);
        frames_held += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let during = others_bytes(&m);
    assert!(frames_held > 10, "{frames_held} frames");
    assert!(
        during + 60 * KIB <= before,
        "the others gave it room: {before} B before, {during} B while forced"
    );
    // Past the duration its level 0 goes (what is left of it stays while it fits), and the
    // others take the room back.
    std::thread::sleep(hold.saturating_sub(start.elapsed()));
    until(&mut m, &demand, 400, |m| {
        level(m, forced) > 0 && others_bytes(m) >= before
    });
    assert_eq!(m.residency(forced).unwrap().required_level, None);
}

/// A required level the budget cannot hold (a never-streamed 1024² chain, 1.4 MiB, under
/// 1 MiB) is reported, typed, and the frame stays within the budget.
#[test]
fn a_required_level_past_the_budget_is_reported_not_forced() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, 1 << 20, true);
    let big = add(&mut m, 7, 1024, TextureOptions::never_stream());
    let small = add(&mut m, 8, 256, TextureOptions::default());
    let demand = [(small, 0.0, 1e5)];
    let mut last = None;
    for _ in 0..20 {
        let s = frame(&mut m, &demand);
        assert!(s.frame_peak_bytes <= s.budget_bytes, "{s:?}");
        last = Some(s);
    }
    let s = last.unwrap();
    assert_eq!(s.unmet_required, 1, "{s:?}");
    let r = m.residency(big).unwrap();
    assert_eq!(r.required_level, Some(0));
    assert!(!r.required_met, "{r:?}");
    assert!(r.planned_level > 0 && r.resident_level > 0, "{r:?}");
    // With room, it is met and whole.
    m.set_budget(mipflow::Budget::bytes(8 << 20));
    until(&mut m, &demand, 50, |m| level(m, big) == 0);
    let s = frame(&mut m, &demand);
    assert_eq!(s.unmet_required, 0);
    assert!(m.residency(big).unwrap().required_met);
}

/// A finest level caps even a full-screen view; a global mip bias of 1 drops the top level of
/// every texture the view asks for; a requested level replaces the view's demand.
#[test]
fn finest_level_mip_bias_and_requested_level() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, 64 << 20, true);
    let mut opts = TextureOptions::default();
    opts.finest_level = 2;
    let capped = add(&mut m, 11, 256, opts);
    let free = add(&mut m, 12, 256, TextureOptions::default());
    let asked = add(&mut m, 13, 256, TextureOptions::default());
    let demand = [(capped, 0.0, 2e6), (free, 0.0, 2e6)];
    until(&mut m, &demand, 50, |m| level(m, free) == 0);
    for _ in 0..5 {
        frame(&mut m, &demand);
    }
    assert_eq!(
        level(&m, capped),
        2,
        "capped at level 2 under a full-screen view"
    );
    assert_eq!(m.residency(capped).unwrap().planned_level, 2);

    // A cap set at run time drops the finer levels already resident, and lifting it lets
    // them come back.
    assert!(m.set_level_limits(free, 2, None));
    until(&mut m, &demand, 50, |m| level(m, free) == 2);
    assert!(m.set_level_limits(free, 0, None));
    until(&mut m, &demand, 50, |m| level(m, free) == 0);

    // A mip bias of 1: a texture wanted full screen is given level 1, not 0.
    let biased = add(&mut m, 14, 256, TextureOptions::default());
    m.set_mip_bias(1.0);
    let with_biased = [(capped, 0.0, 2e6), (free, 0.0, 2e6), (biased, 0.0, 2e6)];
    until(&mut m, &with_biased, 50, |m| level(m, biased) == 1);
    for _ in 0..5 {
        frame(&mut m, &with_biased);
    }
    assert_eq!(level(&m, biased), 1, "one level less than the view needs");
    assert_eq!(m.residency(biased).unwrap().wanted_level, 1.0);
    assert_eq!(level(&m, capped), 2, "the cap still holds");
    m.set_mip_bias(0.0);
    until(&mut m, &with_biased, 50, |m| level(m, biased) == 0);

    // Requested: level 1 of a texture the view does not ask for, then back to the view.
    assert!(level(&m, asked) > 1);
    assert!(m.request_level(asked, Some(1)));
    until(&mut m, &demand, 50, |m| level(m, asked) == 1);
    for _ in 0..5 {
        frame(&mut m, &demand);
        assert_eq!(level(&m, asked), 1, "not finer than requested");
    }
    // Back to the view, which does not ask for it: it keeps what it has while there is room.
    m.request_level(asked, None);
    frame(&mut m, &demand);
    assert!(m.residency(asked).unwrap().wanted_level.is_infinite());
}

/// "Is it resident?" flips in exactly the frame the level's data is on the GPU: the view's
/// texture holds that level then (read back, byte for byte the file's) and not before; the
/// future resolves in the same frame.
#[test]
fn is_resident_flips_when_the_data_is_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, 64 << 20, true);
    let bytes: Arc<[u8]> = common::cooked("controls", 21, 512).into();
    let h = m
        .add_texture(
            TextureSource::Bytes(bytes.clone()),
            TextureOptions::default(),
        )
        .unwrap();
    let (info, want) = TextureSource::Bytes(bytes)
        .read_all(&Default::default())
        .unwrap();
    let count = info.levels.len() as u8;
    let mut future = std::pin::pin!(m.when_resident(h, 0));
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(future.as_mut().poll(&mut cx), Poll::Pending);
    let mut flipped = None;
    for n in 0..200 {
        frame(&mut m, &[(h, 0.0, 1e6)]);
        let tex = m.streamer().resident_texture(h).unwrap();
        let has_top = tex.mip_level_count() == u32::from(count);
        assert_eq!(m.is_resident(h, 0), has_top, "frame {n}");
        for l in 0..count {
            let first = count - tex.mip_level_count() as u8;
            assert_eq!(m.is_resident(h, l), l >= first, "frame {n}, level {l}");
        }
        let ready = future.as_mut().poll(&mut cx);
        assert_eq!(ready == Poll::Ready(true), has_top, "frame {n}: {ready:?}");
        if has_top {
            let got = mipflow::low_level::read_level(m.context(), tex, 0).unwrap();
            assert!(got == want[0], "level 0 on the GPU is the file's");
            flipped = Some(n);
            break;
        }
    }
    assert!(
        flipped.is_some_and(|n| n > 0),
        "{flipped:?}: it took frames"
    );
    // A removed texture's future resolves to false.
    let gone = m.when_resident(h, 0);
    assert_eq!(gone.is_ready(), Some(true));
    let other = add(&mut m, 22, 256, TextureOptions::default());
    let never = m.when_resident(other, 0);
    assert_eq!(never.is_ready(), None);
    assert!(m.remove_texture(other));
    frame(&mut m, &[]);
    assert_eq!(never.is_ready(), Some(false));
}

/// "Load everything": a still view's every wanted level arrives in a few frames, each within
/// the budget (the frames wait for their reads), on a manager that otherwise streams without
/// waiting.
#[test]
fn load_all_reaches_every_wanted_level_within_the_budget() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, 32 << 20, false);
    let handles: Vec<_> = (30..38)
        .map(|s| add(&mut m, s, 256, TextureOptions::default()))
        .collect();
    let demand: Vec<_> = handles.iter().map(|&h| (h, 0.0, 1e5)).collect();
    m.set_load_all(true);
    let frames = until(&mut m, &demand, 12, |m| {
        handles.iter().all(|&h| m.is_resident(h, 0))
    });
    m.set_load_all(false);
    let s = frame(&mut m, &demand);
    assert!(s.frame_peak_bytes <= s.budget_bytes);
    assert_eq!(s.resident_mip_bytes, s.wanted_mip_bytes, "{s:?}");
    assert_eq!(s.target_mip_bytes, s.resident_mip_bytes, "{s:?}");
    eprintln!("load all: {frames} frames for 8 textures");
}
