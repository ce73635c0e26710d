//! `BudgetManager::make_room`: a game about to allocate (a tile cache it grows) asks the plans
//! for room; the textures give it up over the next frames without a frame over the budget, and
//! take it back once the game stops asking. The trade a tile cache makes with it is
//! `VirtualTextures::fit_to` (`src/tiles/market.rs`, its decision tested there).

use std::time::{Duration, Instant};

use mipflow::{Budget, BudgetManager, FrameTiming, ManagerConfig, TextureOptions, TextureSource};

use crate::common;

/// One frame with every texture wanted at level 0; its peak within the budget.
fn checked_frame(m: &mut BudgetManager, handles: &[mipflow::TextureHandle]) {
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
}

/// Frames with every texture wanted at level 0 until `done` holds (waited for by time, not
/// counted); every frame's peak within the budget.
fn frames_until(
    m: &mut BudgetManager,
    handles: &[mipflow::TextureHandle],
    mut done: impl FnMut(&BudgetManager) -> bool,
) {
    let start = Instant::now();
    loop {
        checked_frame(m, handles);
        if done(m) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never settled");
    }
}

const BUDGET: u64 = 8 << 20;

/// A manager of 8 MiB and 32 textures of 512² (10.7 MiB at level 0: more than the budget).
fn short_of_memory(ctx: &mipflow::GpuContext) -> (BudgetManager, Vec<mipflow::TextureHandle>) {
    let mut c = ManagerConfig::default();
    c.budget = Budget::bytes(BUDGET);
    c.render_targets = false;
    c.stream = c.stream.with_deterministic(true);
    let mut m = BudgetManager::new(ctx.device().clone(), ctx.queue().clone(), c).unwrap();
    let handles = (0..32)
        .map(|i| {
            let mut rng = mipflow::testing::SplitMix64(i);
            let file = mipflow::testing::bc7_ktx2(512, || rng.next() as u8);
            m.add_texture(TextureSource::bytes(file), TextureOptions::default())
                .unwrap()
        })
        .collect();
    (m, handles)
}

#[test]
fn the_textures_make_room_for_an_allocation_and_take_it_back() {
    let Some(ctx) = common::gpu() else { return };
    let (mut m, handles) = short_of_memory(&ctx);
    let budget = BUDGET;
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

/// The trade end to end: textures short of memory (the plan's price above 0) and a tile cache
/// on the same manager. Tiles wanted by a few pixels are not worth the textures' levels: the
/// cache stays at its 64 slots. Wanted by many, they are: the textures make the room and the
/// cache grows to every tile it could use, no frame over the budget.
#[test]
fn a_tile_cache_buys_slots_only_when_its_tiles_are_worth_more_than_the_textures_levels() {
    use super::tiles::{FEEDBACK, FLOOR_UV, cooked, draw};
    use mipflow::ktx2::{Ktx2Info, ReadLimits};
    use mipflow::{TileSource, VirtualTextures, VtAddress, VtConfig};
    let Some(ctx) = common::gpu() else { return };
    let (mut m, handles) = short_of_memory(&ctx);
    let (_, file) = cooked();
    let info = Ktx2Info::parse(&file, file.len() as u64, &ReadLimits::default()).unwrap();
    let config = VtConfig {
        format: info.format,
        tile: super::tiles::TILE,
        slots: 64,
        max_pages: 1024,
        max_textures: 1,
    };
    let mut vt = VirtualTextures::new(m.context(), &config).unwrap();
    let id = vt
        .add(
            m.context().queue(),
            info,
            TileSource::Bytes(file.into()),
            VtAddress::Clamp,
        )
        .unwrap();
    let source = format!("{}{FLOOR_UV}{FEEDBACK}", mipflow::vt_wgsl(0));
    // The test's own picture (a 256² target and its readback) is on the same ledger: room held
    // for it, as a game holds room for its screenshots.
    let mut picture = m.reserve(mipflow::Category::Other, 1 << 20, "test picture");
    // One frame: the textures' demand, every level-0 tile wanted by `pixels` from the CPU
    // beside the view's feedback, the cache fitted, planned, streamed and drawn.
    let mut frame = |m: &mut BudgetManager, vt: &mut VirtualTextures, pixels: f32| {
        vt.add_demand(id, 0.0, [0.0; 2], [1.0; 2], pixels);
        vt.fit_to(m, 4 << 20).unwrap();
        checked_frame(m, &handles);
        let ctx = m.context();
        vt.update(ctx.device(), ctx.queue(), 16).unwrap();
        picture.lend(|| draw(ctx, &source, vt.layout(), vt.bind_group()));
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        vt.record_feedback(&mut enc);
        ctx.queue().submit([enc.finish()]);
        vt.submitted();
    };
    // Until the view's feedback is back (waited for by time), then long enough for several
    // judgements (every 8 frames): 64 level-0 tiles wanted by 2 pixels each.
    let start = Instant::now();
    while !vt.has_feedback(id) {
        assert!(start.elapsed() < Duration::from_secs(60), "no feedback");
        frame(&mut m, &mut vt, 128.0);
    }
    let mut most = vt.slots().0;
    for _ in 0..48 {
        frame(&mut m, &mut vt, 128.0);
        most = most.max(vt.slots().0);
    }
    let price = m.last_plan().memory_price;
    assert!(price > 0.0, "the textures are short of memory");
    assert_eq!(most, 64, "slots bought for tiles worth less than the price");
    // Wanted by 10^5 pixels each: worth far more per byte than the textures' levels.
    let textures = |m: &BudgetManager| m.context().ledger().snapshot().total_bytes;
    let before = textures(&m) - vt.bytes();
    while vt.slots().0 != 86 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the cache never grew"
        );
        frame(&mut m, &mut vt, 64.0 * 100_000.0);
    }
    let after = textures(&m) - vt.bytes();
    assert!(
        after < before,
        "the textures made the room: {before} -> {after}"
    );
    assert_eq!(m.room_asked(), 0, "no room asked once grown");
}
