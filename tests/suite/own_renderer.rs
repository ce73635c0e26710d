//! A renderer that is not mipflow's (the `own_renderer` example's: its own WGSL, pipelines,
//! MSAA targets declared to the manager, its own upscale) under the budget manager, for 300
//! frames with the budget at 256 -> 16 -> 256 MiB (16 MiB: 1.2x its full-resolution targets,
//! a squeeze the default scale weight answers with the scale, not only with the textures). Asserts: the ledger (transients included)
//! within the budget on every frame; the render scale below 1 in the squeeze and back at 1 after;
//! every wanted level resident at the end; the example's bind groups made exactly when a
//! texture view's version changed (versions watched here, frame by frame); the last frame
//! against the same renderer with every texture fully resident at >= 40 dB; the GPU feedback
//! its own shader records back within a few frames, covering the screen.

#[path = "../../examples/own_renderer/game.rs"]
mod game;
#[path = "../../examples/own_renderer/scene.rs"]
mod scene;

use crate::common;

use game::{GameRenderer, Residency};
use mipflow::Budget;

const MATERIALS: usize = 16;
const TEXTURE_SIZE: u32 = 2048;
const OUTPUT: (u32, u32) = (640, 360);
const FRAMES: u64 = 300;
/// How long the last view may be held still after the tour for the last reads to land.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(60);
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// The example's corridor of `MATERIALS` materials, its renderer on `device` at `budget`.
fn corridor_renderer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    materials: &[game::MaterialSources],
    budget: u64,
    residency: Residency,
) -> GameRenderer {
    GameRenderer::new(
        device.clone(),
        queue.clone(),
        FORMAT,
        Budget::bytes(budget),
        materials,
        scene::corridor(MATERIALS),
        residency,
    )
    .unwrap()
}

fn camera(f: u64) -> mipflow::Camera {
    scene::tour_camera(MATERIALS, f as f32 / FRAMES as f32)
}

#[test]
fn a_game_renderer_streams_under_a_budget_that_falls_and_rises() {
    let Some(ctx) = common::gpu() else { return };
    let materials = scene::materials(MATERIALS, TEXTURE_SIZE).expect("cook the materials");
    let mut r = corridor_renderer(
        ctx.device(),
        ctx.queue(),
        &materials,
        256 << 20,
        Residency::Streamed,
    );
    let out = ctx
        .create_offscreen_target("own renderer test", OUTPUT.0, OUTPUT.1)
        .unwrap();
    let view = out.create_view(&Default::default());
    let handles: Vec<_> = r.material_textures().collect();
    let mut seen: Vec<Option<(u64, u64)>> = vec![None; handles.len()];
    let mut expected_builds = 0u64;
    let (mut squeeze_min, mut before_max) = (1.0f32, 0.0f32);
    let mut last = mipflow::FrameStats::default();
    // The tour, then its last view held still until every wanted level is resident: the GPU
    // feedback's demand moves with the camera and with the pixels it samples each frame, so a
    // read asked for in the tour's last frame may still be in flight when it ends.
    // The IO threads are not waited for (the game streams as a game does), so the hold is
    // bounded in time, not frames: a loaded machine's reads may take a few frames more.
    let mut settle_frames = 0;
    let mut settle_start = None;
    for f in 0.. {
        if f >= FRAMES && r.all_wanted_resident() {
            break;
        }
        if f >= FRAMES {
            settle_frames += 1;
            let start = *settle_start.get_or_insert_with(std::time::Instant::now);
            assert!(
                start.elapsed() < SETTLE,
                "not every wanted level resident {SETTLE:?} ({settle_frames} frames) after the tour"
            );
            ctx.wait_idle().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let budget: u64 = if (100..200).contains(&f) { 16 } else { 256 } << 20;
        if r.manager().budget().current_bytes() != budget {
            r.manager_mut().set_budget(Budget::bytes(budget));
        }
        last = r.frame(&camera(f.min(FRAMES - 1)), &view, OUTPUT).unwrap();
        assert!(!last.skipped);
        assert!(
            last.frame_peak_bytes <= budget && last.ledger.total_bytes <= budget,
            "frame {f}: peak {} / total {} over the budget {budget}",
            last.frame_peak_bytes,
            last.ledger.total_bytes
        );
        assert!(!last.budget_too_small, "frame {f}");
        if (100..200).contains(&f) {
            squeeze_min = squeeze_min.min(last.render_scale);
        } else if f < 100 {
            before_max = before_max.max(last.render_scale);
        }
        // The versions as the manager hands them out: a material's bind group must be made
        // exactly when one of its two views changed.
        for (i, &(base, normal)) in handles.iter().enumerate() {
            let v = (
                r.manager().texture_view(base).map(|(_, v)| v),
                r.manager().texture_view(normal).map(|(_, v)| v),
            );
            if let (Some(b), Some(n)) = v
                && seen[i] != Some((b, n))
            {
                seen[i] = Some((b, n));
                expected_builds += 1;
            }
        }
        if f % 8 == 0 {
            ctx.wait_idle().unwrap();
        }
    }
    assert_eq!(before_max, 1.0, "full scale before the squeeze");
    assert!(
        squeeze_min < 1.0,
        "the scale must drop under 16 MiB: {squeeze_min}"
    );
    assert_eq!(last.render_scale, 1.0, "and recover after it");
    // The game's own shader recorded GPU feedback (mipflow's snippet prepended to its WGSL):
    // it came back within a few frames and covers the screen's pixels, twice (base colour and
    // normal map; counts scaled back to output pixels), with some overdraw at most.
    let screen = f64::from(OUTPUT.0 * OUTPUT.1);
    assert!(
        last.feedback.latency_frames.is_some_and(|l| l <= 4),
        "{:?}",
        last.feedback
    );
    assert!(
        last.feedback.pixels > 0.5 * screen && last.feedback.pixels < 3.0 * screen,
        "feedback pixels {} for a {screen}-pixel output",
        last.feedback.pixels
    );
    assert!(
        r.all_wanted_resident(),
        "every wanted level back at 256 MiB"
    );
    eprintln!("every wanted level resident {settle_frames} frame(s) after the tour");
    let c = r.counters();
    assert_eq!(c.bind_groups_built, expected_builds, "{c:?}");
    assert_eq!(c.version_changes, expected_builds);
    assert!(
        expected_builds > MATERIALS as u64 && expected_builds < FRAMES * MATERIALS as u64 / 4,
        "views change as levels stream, not every frame: {expected_builds}"
    );
    assert!(c.blit_groups_built >= 3, "targets were reallocated: {c:?}");

    // The same renderer with every level of every texture resident, same last view.
    ctx.wait_idle().unwrap();
    let streamed = mipflow::read_texture_rgba8(&ctx, out.texture()).unwrap();
    drop(r);
    let mut full = corridor_renderer(
        ctx.device(),
        ctx.queue(),
        &materials,
        512 << 20,
        Residency::Full,
    );
    let stats = full.frame(&camera(FRAMES - 1), &view, OUTPUT).unwrap();
    assert_eq!(stats.render_scale, 1.0);
    ctx.wait_idle().unwrap();
    let reference = mipflow::read_texture_rgba8(&ctx, out.texture()).unwrap();
    let psnr = mipflow_cook::psnr_rgb(&streamed, &reference);
    eprintln!("own renderer: last frame {psnr:.1} dB against all resident; {c:?}");
    assert!(psnr >= 40.0, "{psnr:.2} dB");
    // Not trivially equal: the streamed run rendered something.
    assert!(streamed.chunks_exact(4).any(|p| p[0] > 40));
}

/// The game's own CI test, written with the harness's public API alone
/// (`mipflow::harness`): the game makes its device, runs its own loop, hands each frame's
/// stats to the budget test, takes a screenshot mid-squeeze in reserved room, and gets the
/// report and verdict `mipflow headless` writes. 300 frames at 256 -> 16 -> 256 MiB.
#[test]
fn the_games_budget_test_on_the_harness_passes_with_a_screenshot_in_the_squeeze() {
    use mipflow::harness::{BudgetTest, Expect, Schedule, adapter_or_skip};
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let Some(adapter) = adapter_or_skip(&instance, "own renderer budget test") else {
        return;
    };
    let (device, queue) =
        pollster::block_on(adapter.request_device(&mipflow::device_descriptor(&adapter))).unwrap();
    let schedule = Schedule::new(FRAMES)
        .budget_from(0, 256 << 20)
        .budget_from(100, 16 << 20)
        .budget_from(200, 256 << 20)
        .act(100, "the squeeze")
        .expect(Expect {
            frame: 199,
            max_render_scale: Some(0.9375),
            ..Expect::default()
        })
        .expect(Expect {
            frame: FRAMES - 1,
            min_render_scale: Some(1.0),
            ..Expect::default()
        });
    schedule.validate().unwrap();
    let mut test = BudgetTest::new(schedule);
    let materials = scene::materials(MATERIALS, TEXTURE_SIZE).expect("cook the materials");
    let mut r = corridor_renderer(&device, &queue, &materials, 256 << 20, Residency::Streamed);
    // The game's output (a swapchain stands here: not on the ledger), and room for the
    // screenshot's readback, held on the ledger so that the manager plans for it.
    let out = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("game output"),
        size: wgpu::Extent3d {
            width: OUTPUT.0,
            height: OUTPUT.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = out.create_view(&Default::default());
    let mut room = r.manager().reserve(
        mipflow::Category::Staging,
        mipflow::readback_bytes(&out),
        "screenshot room",
    );
    let ledger = r.manager().context().ledger().clone();
    let mut screenshot: Vec<Vec<u8>> = Vec::new();
    for frame in 0..test.frames() {
        if let Some(b) = test.budget_change(frame) {
            r.manager_mut().set_budget(b);
        }
        let t0 = std::time::Instant::now();
        let stats = r.frame(&camera(frame), &view, OUTPUT).unwrap();
        test.record(frame, &stats, t0.elapsed().as_secs_f64() * 1e3);
        if frame == 150 || frame == FRAMES - 1 {
            let image =
                mipflow::read_texture_rgba8_reserved(r.manager().context(), &out, &mut room)
                    .unwrap();
            screenshot.push(image);
        }
    }
    drop(room);
    drop(r);
    test.check_leaks(&ledger.live_allocations());
    // The last frame against the same view with every level of every texture resident.
    let mut full = corridor_renderer(&device, &queue, &materials, 512 << 20, Residency::Full);
    full.frame(&camera(FRAMES - 1), &view, OUTPUT).unwrap();
    let reference = mipflow::read_texture_rgba8(full.manager().context(), &out).unwrap();
    let db = mipflow_cook::psnr_rgb(&screenshot[1], &reference);
    assert!(test.check_psnr(FRAMES - 1, db, 40.0));
    let report = test.finish();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("own-renderer-budget.json");
    report.write_json(&path).unwrap();
    let plot = dir.join("own-renderer-budget.png");
    mipflow::harness::write_plot(&report, &plot, 1280, 720).unwrap();
    assert!(std::fs::metadata(&plot).unwrap().len() > 10_000);
    assert_eq!(report.frames[FRAMES as usize - 1].psnr_db, Some(db));
    eprintln!("{}", report.verdict_line());
    assert!(report.passed(), "{}", report.verdict_line());
    assert_eq!(report.violations, 0);
    assert_eq!(report.frames.len(), FRAMES as usize);
    assert!(
        report
            .verdict_line()
            .starts_with("verdict: PASS: 300 frames")
    );
    // The screenshot was taken in the squeeze, within the budget, and shows the scene.
    assert!(report.frames[150].budget_bytes == 16 << 20 && !report.frames[151].over_budget);
    assert_eq!(screenshot[0].len(), (OUTPUT.0 * OUTPUT.1 * 4) as usize);
    assert!(screenshot[0].chunks_exact(4).any(|p| p[0] > 40));
    // The report on disk is the one `mipflow headless` writes (its fields, read back).
    let back: mipflow::harness::Report =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back.frames.len(), report.frames.len());
    assert_eq!((back.violations, &back.verdict), (0, &report.verdict));
    assert_eq!(back.events, report.events);
    assert_eq!(back.acts.len(), 1);
    assert!(back.acts[0].render_scale_min < 1.0, "{:?}", back.acts[0]);
}

/// The same budget test fails, with a verdict a person reads, when the budget falls below what
/// the game's floors and smallest targets need; and a screenshot without reserved room in a
/// full budget is a frame over it.
#[test]
fn the_games_budget_test_fails_below_the_floors_and_for_an_unplanned_screenshot() {
    use mipflow::harness::{BudgetTest, Schedule};
    let Some(ctx) = common::gpu() else { return };
    let materials = scene::materials(MATERIALS, 256).expect("cook the materials");
    let mut r = corridor_renderer(
        ctx.device(),
        ctx.queue(),
        &materials,
        256 << 20,
        Residency::Streamed,
    );
    let out = ctx
        .create_offscreen_target("own renderer floors", OUTPUT.0, OUTPUT.1)
        .unwrap();
    let view = out.create_view(&Default::default());
    let mut test = BudgetTest::new(Schedule::new(30).budget_from(10, 1 << 20));
    for frame in 0..test.frames() {
        if let Some(b) = test.budget_change(frame) {
            r.manager_mut().set_budget(b);
        }
        let stats = r.frame(&camera(frame), &view, OUTPUT).unwrap();
        test.record(frame, &stats, 1.0);
    }
    let report = test.finish();
    let line = report.verdict_line();
    assert!(!report.passed(), "{line}");
    assert!(report.budget_too_small, "{line}");
    assert!(
        line.starts_with("verdict: FAIL: ") && line.contains("below the floor"),
        "{line}"
    );

    // A full budget with a screenshot that was not planned for: its readback passes it.
    drop(r);
    let mut r = corridor_renderer(
        ctx.device(),
        ctx.queue(),
        &materials,
        256 << 20,
        Residency::Streamed,
    );
    // A large capture (2048² RGBA8: 16 MiB of readback staging), far past any headroom.
    let capture = ctx
        .create_offscreen_target("unplanned capture", 2048, 2048)
        .unwrap();
    for _ in 0..6 {
        r.frame(&camera(0), &view, OUTPUT).unwrap();
    }
    // What the manager's ledger holds now, and 1 MiB: no room for 16 MiB more.
    let tight = r.manager().context().ledger().total_bytes() + (1 << 20);
    let mut test = BudgetTest::new(Schedule::new(6).budget_from(0, tight));
    for frame in 0..test.frames() {
        if let Some(b) = test.budget_change(frame) {
            r.manager_mut().set_budget(b);
        }
        let stats = r.frame(&camera(0), &view, OUTPUT).unwrap();
        test.record(frame, &stats, 1.0);
        if frame == 3 {
            let _ = mipflow::read_texture_rgba8(r.manager().context(), &capture).unwrap();
        }
    }
    let report = test.finish();
    assert!(
        !report.passed() && report.violations > 0,
        "{}",
        report.verdict_line()
    );
}
