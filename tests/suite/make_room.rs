//! `BudgetManager::make_room`: a game about to allocate (a tile cache it grows) asks the plans
//! for room; the textures give it up over the next frames without a frame over the budget, and
//! take it back once the game stops asking. The trade a tile cache makes with it is
//! `VirtualTextures::fit_to` (`src/tiles/market.rs`, its decision tested there).

use std::time::{Duration, Instant};

use mipflow::{Budget, BudgetManager, FrameTiming, ManagerConfig, TextureOptions, TextureSource};

use crate::common;

/// Frames with every texture wanted at level 0 until `done` holds (waited for by time, not
/// counted); every frame's peak within the budget.
fn frames_until(
    m: &mut BudgetManager,
    handles: &[mipflow::TextureHandle],
    mut done: impl FnMut(&BudgetManager) -> bool,
) {
    let start = Instant::now();
    loop {
        for &h in handles {
            m.add_demand(h, 0.0, 40_000.0);
        }
        let plan = m.frame((1280, 720), FrameTiming::default()).unwrap();
        m.end_frame();
        let stats = m.frame_stats(&plan, FrameTiming::default());
        assert!(
            stats.frame_peak_bytes <= stats.budget_bytes,
            "a frame over the budget: {} > {}",
            stats.frame_peak_bytes,
            stats.budget_bytes
        );
        if done(m) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never settled");
    }
}

#[test]
fn the_textures_make_room_for_an_allocation_and_take_it_back() {
    let Some(ctx) = common::gpu() else { return };
    let budget = 8u64 << 20;
    let mut c = ManagerConfig::default();
    c.budget = Budget::bytes(budget);
    c.render_targets = false;
    c.stream = c.stream.with_deterministic(true);
    let mut m = BudgetManager::new(ctx.device().clone(), ctx.queue().clone(), c).unwrap();
    // 32 textures of 512² wanting level 0: 10.7 MiB, more than the budget.
    let handles: Vec<_> = (0..32)
        .map(|i| {
            let mut rng = mipflow::testing::SplitMix64(i);
            let file = mipflow::testing::bc7_ktx2(512, || rng.next() as u8);
            m.add_texture(TextureSource::bytes(file), TextureOptions::default())
                .unwrap()
        })
        .collect();
    let total = |m: &BudgetManager| m.context().ledger().total_bytes();
    // Settled: the same total three frames in a row, the budget nearly full.
    let mut last = (0, 0);
    frames_until(&mut m, &handles, |m| {
        last = if total(m) == last.0 {
            (last.0, last.1 + 1)
        } else {
            (total(m), 0)
        };
        last.1 >= 3
    });
    let full = total(&m);
    let price = m.last_plan().memory_price;
    assert!(price > 0.0, "memory is scarce");
    assert!(budget - full < 2 << 20, "{full} of {budget}");

    // 2 MiB asked: the textures give it up.
    let room = 2u64 << 20;
    m.make_room(room);
    assert_eq!(m.room_asked(), room);
    frames_until(&mut m, &handles, |m| {
        budget.saturating_sub(total(m)) >= room
    });
    assert!(
        m.last_plan().memory_price >= price,
        "a byte is worth more with less of them"
    );
    // Asked no more: they take it back.
    m.make_room(0);
    frames_until(&mut m, &handles, |m| total(m) >= full - (256 << 10));
}
