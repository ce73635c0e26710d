//! The budget manager used the way a game gets it wrong, on lavapipe: frames never ended, a
//! handle kept across `clear`, a minimised window passed as a 0x0 output, an output wider than
//! the device's largest texture, an upload cap of 0. Each degrades to what the game meant,
//! never a stall, an alias or an error on every frame.

use crate::common;

use mipflow::TextureHandle;
use mipflow::{BudgetManager, FrameTiming, ManagerConfig, TextureOptions, TextureSource};

fn ktx(seed: u64, size: u32) -> Vec<u8> {
    common::cooked("misuse", seed, size)
}

fn config(budget: u64, render_targets: bool) -> ManagerConfig {
    common::manager_config(budget, render_targets, true)
}

use common::manager;

fn add(m: &mut BudgetManager, seeds: std::ops::Range<u64>, size: u32) -> Vec<TextureHandle> {
    seeds
        .map(|s| {
            m.add_texture(
                TextureSource::bytes(ktx(s, size)),
                TextureOptions::default(),
            )
            .unwrap()
        })
        .collect()
}

/// Every texture's resident level, in handle order.
fn levels(m: &BudgetManager, handles: &[TextureHandle]) -> Vec<u8> {
    let infos = m.streamer().texture_infos();
    handles
        .iter()
        .map(|h| {
            infos
                .iter()
                .find(|i| i.index == h.index())
                .unwrap()
                .resident_level
        })
        .collect()
}

#[test]
fn frames_never_ended_still_give_their_staging_back() {
    let Some(ctx) = common::gpu() else { return };
    // More levels than the staging ring's first chunks hold (about 8 MiB through chunks of
    // 1 MiB), so chunks must come back for streaming to go on.
    let files: Vec<Vec<u8>> = (0..24).map(|s| ktx(s, 512)).collect();
    // The same frames twice: ended after each frame's work as documented, and never ended.
    let run = |end: bool| {
        let mut m = manager(&ctx, config(64 << 20, false));
        let h: Vec<TextureHandle> = files
            .iter()
            .map(|f| {
                m.add_texture(TextureSource::bytes(f.clone()), TextureOptions::default())
                    .unwrap()
            })
            .collect();
        for _ in 0..60 {
            for &t in &h {
                m.add_demand(t, 0.0, 50_000.0);
            }
            m.frame((1280, 720), FrameTiming::default()).unwrap();
            if end {
                m.end_frame();
            }
        }
        let staging = m.context().ledger().snapshot().by_category.staging.bytes;
        (levels(&m, &h), staging)
    };
    let (ended, ended_staging) = run(true);
    let (never, never_staging) = run(false);
    assert!(ended.iter().all(|&l| l == 0), "{ended:?}");
    assert_eq!(never, ended, "every texture streams in without end_frame");
    // Without end_frame no chunk ever came back: each frame that uploaded made new ones, and
    // they stay charged.
    assert_eq!(
        never_staging, ended_staging,
        "staging held at the end without end_frame, against with it"
    );
}

#[test]
fn a_handle_kept_across_clear_names_no_texture_after() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, false));
    let old = add(&mut m, 0..1, 64)[0];
    m.clear();
    let new = add(&mut m, 1..2, 64)[0];
    assert_eq!(new.index(), old.index(), "the slot is reused");
    assert_ne!(new, old);
    assert!(
        !m.add_demand(old, 0.0, 1000.0),
        "a stale handle takes no demand"
    );
    assert!(
        !m.remove_texture(old),
        "nor removes the texture in its slot"
    );
    assert!(m.add_demand(new, 0.0, 1000.0));
    // Cleared twice: still never reused.
    m.clear();
    let third = add(&mut m, 2..3, 64)[0];
    assert_ne!(third, new);
    assert_ne!(third, old);
    assert!(!m.remove_texture(new));
    assert!(m.remove_texture(third));
}

#[test]
fn a_minimised_window_keeps_its_targets_and_textures() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(16 << 20, true));
    let h = add(&mut m, 0..6, 256);
    let frame = |m: &mut BudgetManager, output| {
        for &t in &h {
            m.add_demand(t, 0.0, 50_000.0);
        }
        let plan = m.frame(output, FrameTiming::default()).unwrap();
        m.end_frame();
        plan
    };
    for _ in 0..30 {
        frame(&mut m, (640, 360));
    }
    let snap = m.context().ledger().snapshot().by_category;
    let (targets, textures) = (snap.render_targets.bytes, snap.textures.bytes);
    assert!(targets > 0);
    let before = levels(&m, &h);
    for _ in 0..30 {
        let plan = frame(&mut m, (0, 0));
        assert_eq!(plan.render_scale, 1.0);
    }
    let snap = m.context().ledger().snapshot().by_category;
    assert_eq!(snap.render_targets.bytes, targets, "the targets are kept");
    assert_eq!(
        snap.textures.bytes, textures,
        "and the textures as they were"
    );
    assert_eq!(levels(&m, &h), before);
    let size = m.targets().map(|t| t.output_size());
    assert_eq!(size, Some((640, 360)));
}

#[test]
fn an_output_wider_than_the_largest_texture_renders_at_a_scale_that_fits() {
    let Some(ctx) = common::gpu() else { return };
    let max = ctx.device().limits().max_texture_dimension_2d;
    let output = (max + max / 4, 64);
    let mut m = manager(&ctx, config(512 << 20, true));
    for _ in 0..3 {
        let plan = m
            .frame(output, FrameTiming::default())
            .expect("a frame at a scale the device can make");
        m.end_frame();
        let scaled = (output.0 as f32 * plan.render_scale).round() as u32;
        assert!(plan.render_scale < 1.0 && scaled <= max, "{plan:?}");
        let made = m.targets().map(|t| t.bucket());
        assert_eq!(made, Some(plan.bucket));
    }
    // Wider than any scale of the range can fit (the least is 0.5): an error that says so,
    // every frame, and the textures left as they are.
    let h = add(&mut m, 0..2, 128);
    for _ in 0..20 {
        for &t in &h {
            m.add_demand(t, 0.0, 20_000.0);
        }
        m.frame((1280, 720), FrameTiming::default()).unwrap();
        m.end_frame();
    }
    let before = (
        levels(&m, &h),
        m.context().ledger().snapshot().by_category.textures.bytes,
    );
    assert_eq!(before.0, vec![0, 0]);
    for _ in 0..3 {
        for &t in &h {
            m.add_demand(t, 0.0, 20_000.0);
        }
        let e = m.frame((3 * max, 64), FrameTiming::default()).unwrap_err();
        assert!(e.to_string().contains("largest texture"), "{e}");
    }
    let after = (
        levels(&m, &h),
        m.context().ledger().snapshot().by_category.textures.bytes,
    );
    assert_eq!(
        after, before,
        "nothing evicted for targets that cannot be made"
    );
    // The same manager at a size that fits goes back to full scale.
    let plan = m.frame((1280, 720), FrameTiming::default()).unwrap();
    m.end_frame();
    assert_eq!(plan.memory_bucket.scale(), 1.0);
}

#[test]
fn an_upload_cap_of_zero_still_streams_a_band_a_frame() {
    let Some(ctx) = common::gpu() else { return };
    let mut c = config(64 << 20, false);
    c.stream.upload_bytes_per_frame = 0;
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..2, 128);
    for _ in 0..200 {
        for &t in &h {
            m.add_demand(t, 0.0, 20_000.0);
        }
        m.frame((640, 360), FrameTiming::default()).unwrap();
        m.end_frame();
    }
    assert_eq!(levels(&m, &h), vec![0, 0]);
}

#[test]
fn an_upload_cap_of_zero_fills_a_full_budget_one_row_a_frame() {
    let Some(ctx) = common::gpu() else { return };
    // Eight 256² chains (87 KiB each) under 640 KiB: the planner fills its limit, and every
    // band (one row of blocks a frame, 1 KiB at level 0) has to find room beside the textures
    // already there. No band may stall, and no frame pass the budget.
    let mut c = config(640 << 10, false);
    c.stream.upload_bytes_per_frame = 0;
    let mut m = manager(&ctx, c);
    let h = add(&mut m, 0..8, 256);
    let mut over = 0;
    for _ in 0..2_000 {
        for &t in &h {
            m.add_demand(t, 0.0, 50_000.0);
        }
        m.frame((640, 360), FrameTiming::default()).unwrap();
        m.end_frame();
        let ledger = m.context().ledger();
        over += usize::from(ledger.take_window_peak() > 640 << 10);
        assert!(m.streamer().frame_stats().uploaded_bytes <= 1024 + 1024);
    }
    assert_eq!(over, 0, "frames over the budget");
    let targets: Vec<u8> = h
        .iter()
        .map(|t| m.last_plan().target_level[t.index() as usize])
        .collect();
    assert!(
        targets.contains(&0),
        "the limit holds some full chains: {targets:?}"
    );
    assert_eq!(levels(&m, &h), targets, "every planned level built");
}

/// Demand lasts the frame it was given for (the manager resets only the textures given demand
/// in this frame or the one before, not every texture): a texture not given demand again has
/// none; demand given before a `skip_frame` does not survive into the frame after it (and is
/// not added to what is given after it); demand over more than the output is capped at it,
/// a histogram scaled as a whole.
#[test]
fn demand_lasts_its_frame_and_is_capped_at_the_output() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, true));
    let h = add(&mut m, 0..4, 64);
    let out = (64u32, 32u32);
    let screen = 64.0 * 32.0;
    let demand = |m: &BudgetManager, h: TextureHandle| {
        let p = m.plan_textures()[h.index() as usize];
        (p.wanted_level, p.screen_pixels)
    };
    let frame = |m: &mut BudgetManager| {
        m.frame(out, FrameTiming::default()).unwrap();
        m.end_frame();
    };

    // Over the output: capped. A histogram over it keeps its shape.
    assert!(m.add_demand(h[0], 0.0, 1e9));
    assert!(m.add_demand(h[1], 1.0, 100.0));
    assert!(m.add_demand_levels(h[2], &[3e6, 1e6]));
    frame(&mut m);
    assert_eq!(demand(&m, h[0]), (0.0, screen));
    assert_eq!(demand(&m, h[1]), (1.0, 100.0));
    let bins = m.plan_textures().level_pixels(h[2].index() as usize);
    assert_eq!((bins[0], bins[1]), (0.75 * screen, 0.25 * screen));
    assert_eq!(demand(&m, h[3]), (f32::INFINITY, 0.0));

    // The next frame: only h[1] asked again.
    assert!(m.add_demand(h[1], 2.0, 50.0));
    frame(&mut m);
    assert_eq!(demand(&m, h[0]), (f32::INFINITY, 0.0));
    assert_eq!(demand(&m, h[1]), (2.0, 50.0));
    let p2 = m.plan_textures()[h[2].index() as usize];
    let bins2 = m.plan_textures().level_pixels(h[2].index() as usize);
    assert!(!p2.histogram && p2.screen_pixels == 0.0 && *bins2 == [0.0; 16]);

    // Demand, then a skipped frame, then a frame with no demand: none left.
    assert!(m.add_demand(h[3], 1.5, 300.0));
    m.skip_frame();
    frame(&mut m);
    assert_eq!(demand(&m, h[3]), (f32::INFINITY, 0.0));
    assert_eq!(demand(&m, h[1]), (f32::INFINITY, 0.0));

    // Demand, a skipped frame, demand again: the frame has the second only.
    assert!(m.add_demand(h[3], 0.5, 300.0));
    m.skip_frame();
    assert!(m.add_demand(h[3], 1.0, 40.0));
    frame(&mut m);
    assert_eq!(demand(&m, h[3]), (1.0, 40.0));

    // Many frames of demand for one texture: the others stay without.
    for _ in 0..5 {
        assert!(m.add_demand(h[0], 1.0, 10.0));
        frame(&mut m);
    }
    assert_eq!(demand(&m, h[0]), (1.0, 10.0));
    for &o in &h[1..] {
        assert_eq!(demand(&m, o), (f32::INFINITY, 0.0));
    }
}

/// Histogram demand piled past the largest float (bins at f32::MAX given again and again)
/// saturates instead of reaching infinity, which priced every level at 0 (inf x 0 is NaN) and
/// kept the texture at its floor: it streams in like any texture in view.
#[test]
fn histogram_demand_at_the_float_maximum_still_streams() {
    let Some(ctx) = common::gpu() else { return };
    let mut m = manager(&ctx, config(64 << 20, false));
    let h = add(&mut m, 0..1, 256);
    for _ in 0..30 {
        m.add_demand_levels(h[0], &[f32::MAX; 17]);
        m.add_demand_levels(h[0], &[f32::MAX; 17]);
        m.add_demand(h[0], 0.0, f32::MAX);
        m.frame((1280, 720), FrameTiming::default()).unwrap();
        m.end_frame();
    }
    assert_eq!(levels(&m, &h), [0]);
}

/// A handle of one manager given to another (two managers in one game: a level and its
/// preview) names none of its textures: no demand taken, nothing removed.
#[test]
fn a_handle_of_another_manager_names_no_texture() {
    let Some(ctx) = common::gpu() else { return };
    let mut a = manager(&ctx, config(64 << 20, false));
    let mut b = manager(&ctx, config(64 << 20, false));
    let ha = add(&mut a, 0..1, 64)[0];
    let hb = add(&mut b, 1..2, 64)[0];
    assert_eq!(ha.index(), hb.index(), "the same slot in each");
    assert_ne!(ha, hb);
    assert!(!b.add_demand(ha, 0.0, 1000.0));
    assert!(!b.remove_texture(ha));
    assert!(b.add_demand(hb, 0.0, 1000.0));
    assert!(a.remove_texture(ha));
}

/// `add_textures` at a budget that holds a floor but not the floor and its upload staging too:
/// the floor's upload never takes the total past the budget (it charged a second copy of the
/// floor to staging over it). The texture is left without a resident floor, and streams in
/// once the budget is raised.
#[test]
fn a_batch_whose_floor_staging_has_no_room_stays_under_the_budget() {
    let Some(ctx) = common::gpu() else { return };
    let file = ktx(7, 256);
    // The floor's bytes, measured on a roomy manager.
    let floor = {
        let mut m = manager(&ctx, config(64 << 20, false));
        m.add_textures([(
            TextureSource::bytes(file.clone()),
            TextureOptions::default(),
        )]);
        m.context().ledger().bytes(mipflow::Category::Textures)
    };
    assert!(floor > 0);
    let budget = floor + floor / 2;
    let mut m = manager(&ctx, config(budget, false));
    m.context().ledger().reset_peaks();
    let h = m.add_textures([(TextureSource::bytes(file), TextureOptions::default())]);
    let h = h.into_iter().next().unwrap().expect("registered");
    let snap = m.context().ledger().snapshot();
    assert!(
        snap.peak_bytes <= budget,
        "peak {} over the budget {budget} (floor {floor})",
        snap.peak_bytes
    );
    assert_eq!(
        m.context().ledger().bytes(mipflow::Category::Textures),
        0,
        "the floor is not resident"
    );
    // Raised: the floor comes back, and the rest streams in within a few frames (not after
    // the planner's 100-frame hold).
    m.set_budget(mipflow::Budget::bytes(64 << 20));
    for _ in 0..10 {
        m.add_demand(h, 0.0, 1.0e6);
        m.frame((640, 360), FrameTiming::default()).unwrap();
        m.end_frame();
    }
    assert_eq!(levels(&m, &[h]), vec![0]);
}

/// A game's own allocations count against the budget whatever their category: a texture it
/// made itself (not added to the manager), render targets of its own next to the manager's,
/// a staging buffer of its own. The planner counted only buffers, overlay and other as fixed:
/// made while the textures filled the budget, they stayed over it for good.
#[test]
fn the_callers_own_textures_targets_and_staging_count_against_the_budget() {
    use mipflow::Category;
    let Some(ctx) = common::gpu() else { return };
    let budget = 4u64 << 20;
    let mut m = manager(&ctx, config(budget, true));
    // Eight 512² textures: 2.7 MiB with every level.
    let h = add(&mut m, 0..8, 512);
    let floors = m.context().ledger().managed_bytes(Category::Textures);
    let run = |m: &mut BudgetManager, frames: usize| {
        for _ in 0..frames {
            for &t in &h {
                m.add_demand(t, 0.0, 30_000.0);
            }
            m.frame((512, 512), FrameTiming::default()).unwrap();
            m.end_frame();
        }
    };
    run(&mut m, 30);
    let own = |m: &BudgetManager, side: u32, category: Category| {
        common::texture_2d(
            m.context(),
            "the game's own",
            (side, side, 1),
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureUsages::TEXTURE_BINDING,
            1,
            category,
        )
    };
    let before = m.context().ledger().total_bytes();
    let _material = own(&m, 512, Category::Textures); // 1 MiB
    let _shadow_map = own(&m, 362, Category::RenderTargets); // 512 KiB
    let _upload = m
        .context()
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("the game's own staging"),
                size: 256 << 10,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            },
            Category::Staging,
        )
        .unwrap();
    let game = 512 * 512 * 4 + 362 * 362 * 4 + (256 << 10);
    assert_eq!(m.context().ledger().total_bytes(), before + game);
    assert!(before + game > budget, "the game's own take the total over");
    // The next frame gives up what the game took; no frame after passes the budget.
    run(&mut m, 1);
    m.context().ledger().reset_peaks();
    run(&mut m, 20);
    let peak = m.context().ledger().snapshot().peak_bytes;
    assert!(peak <= budget, "peak {peak} over the budget {budget}");
    let streamed = m.context().ledger().managed_bytes(Category::Textures);
    assert!(
        streamed > floors && streamed <= budget - game,
        "streamed {streamed} bytes (floors {floors}, room {})",
        budget - game
    );
}

/// A declared target set the device cannot make (a format with no size per texel, 3 samples,
/// an integer format at 4 samples): every frame is a typed error that names the target, the
/// textures left as they are; priced, such a set cost nothing (its bytes were 0).
#[test]
fn a_target_set_the_device_cannot_make_is_refused_by_name() {
    use mipflow::{TargetSet, TargetSpec};
    let Some(ctx) = common::gpu() else { return };
    let cases = [
        (
            TargetSpec::scaled("video", wgpu::TextureFormat::NV12),
            "no defined size",
        ),
        (
            TargetSpec::scaled("odd", wgpu::TextureFormat::Rgba8Unorm).with_samples(3),
            "3 samples",
        ),
        (
            TargetSpec::scaled("ids", wgpu::TextureFormat::R32Uint).with_samples(4),
            "4 samples",
        ),
    ];
    for (spec, says) in cases {
        let set = TargetSet::new()
            .with(TargetSpec::scaled(
                "colour",
                wgpu::TextureFormat::Rgba16Float,
            ))
            .with(spec);
        if spec.format == wgpu::TextureFormat::NV12 {
            assert_eq!(set.bytes((64, 64), 1.0), u64::MAX, "priced at everything");
        }
        let mut c = config(64 << 20, true);
        c.target_set = Some(set);
        let mut m = manager(&ctx, c);
        let h = add(&mut m, 0..1, 64);
        for _ in 0..2 {
            m.add_demand(h[0], 0.0, 4096.0);
            let e = m.frame((320, 240), FrameTiming::default()).unwrap_err();
            let e = e.to_string();
            assert!(e.contains(spec.label) && e.contains(says), "{e}");
        }
        assert!(m.targets().is_none());
        assert_eq!(
            levels(&m, &h),
            vec![m.streamer().plan_textures()[0].floor_level]
        );
    }
    assert!(ctx.take_uncaptured_errors().is_empty());
}
