//! A Bevy app on lavapipe (or any adapter), headless: a 3x3 wall of streamed images under a
//! moving camera while the budget drops and rises, against the same app with every image fully
//! resident. Bevy's pipelined rendering is on, as in a game.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::app::PluginsState;
use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::TextureFormat;
use bevy::render::settings::{WgpuFeatures, WgpuSettings};
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use mipflow::{Budget, TextureOptions, TextureSource};
use mipflow_bevy::{Mipflow, MipflowPlugin};

const SIZE: u32 = 256;
const MIB: u64 = 1 << 20;
/// The wall: 3x3 panels of 2x2 units, 2.2 apart, each its own 256² texture.
const PANELS: usize = 9;

/// The camera's pose at `t` in 0..=1 of its path: from far and to the side, to the still pose
/// whose centre panel fills the view (its texture wanted at level 0).
fn pose(t: f32) -> Transform {
    let t = t.clamp(0.0, 1.0);
    let x = 3.0 * (1.0 - t) * (t * 9.0).sin();
    let z = 12.0 + (2.6 - 12.0) * t;
    Transform::from_xyz(x, 0.0, z).looking_at(Vec3::new(0.0, 0.0, 0.0), Vec3::Y)
}

#[derive(Resource)]
struct Scene {
    target: Handle<Image>,
    camera: Entity,
    shot: Arc<Mutex<Option<Vec<u8>>>>,
}

fn gpu_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("MIPFLOW_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The app: Bevy's default plugins without a window, and mipflow under `budget`.
fn app(budget: u64) -> Option<App> {
    let instance = mipflow::wgpu::Instance::new(
        mipflow::wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
    );
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()));
    match adapter {
        Ok(a) if a.features().contains(WgpuFeatures::TEXTURE_COMPRESSION_BC) => {}
        _ => {
            assert!(!gpu_required(), "no GPU adapter with BC textures");
            eprintln!("SKIPPING: no GPU adapter with BC textures");
            return None;
        }
    }
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .set(RenderPlugin {
                synchronous_pipeline_compilation: true,
                render_creation: WgpuSettings {
                    features: WgpuFeatures::TEXTURE_COMPRESSION_BC,
                    ..default()
                }
                .into(),
                ..default()
            })
            .disable::<WinitPlugin>(),
    );
    let mut plugin = MipflowPlugin::with_budget(Budget::bytes(budget));
    plugin.measure_every = Duration::ZERO;
    app.add_plugins(plugin);
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
    Some(app)
}

/// The scene: nine panels with their own streamed (or fully resident) images, the camera
/// rendering to a 256² image without tone mapping or anti-aliasing.
fn spawn_scene(app: &mut App, resident: bool) {
    let world = app.world_mut();
    let sources: Vec<TextureSource> = mipflow_cook::procedural::demo_specs(7, PANELS as u32, 256)
        .into_iter()
        .map(|mut spec| {
            spec.size = 256;
            let bytes =
                mipflow_cook::procedural::cook_procedural(&spec, mipflow_cook::Quality::Fast)
                    .expect("cook");
            TextureSource::Bytes(bytes.into())
        })
        .collect();
    let handles: Vec<Handle<Image>> = world.resource_scope(|world, mut mipflow: Mut<Mipflow>| {
        let mut images = world.resource_mut::<Assets<Image>>();
        sources
            .into_iter()
            .map(|s| {
                if resident {
                    mipflow.add_resident_image(&mut images, s).unwrap()
                } else {
                    mipflow
                        .add_image(&mut images, s, TextureOptions::default())
                        .unwrap()
                }
            })
            .collect()
    });
    let mesh = world
        .resource_mut::<Assets<Mesh>>()
        .add(Rectangle::new(2.0, 2.0));
    for (i, image) in handles.into_iter().enumerate() {
        let material = world
            .resource_mut::<Assets<StandardMaterial>>()
            .add(StandardMaterial {
                base_color_texture: Some(image),
                unlit: true,
                ..default()
            });
        let (x, y) = ((i % 3) as f32 - 1.0, (i / 3) as f32 - 1.0);
        world.spawn((
            Mesh3d(mesh.clone()),
            MeshMaterial3d(material),
            Transform::from_xyz(2.2 * x, 2.2 * y, 0.0),
        ));
    }
    let mut target = Image::new_target_texture(SIZE, SIZE, TextureFormat::Rgba8UnormSrgb, None);
    target.asset_usage = RenderAssetUsages::RENDER_WORLD;
    let target = world.resource_mut::<Assets<Image>>().add(target);
    let camera = world
        .spawn((
            Camera3d::default(),
            Camera {
                clear_color: ClearColorConfig::Custom(Color::BLACK),
                ..default()
            },
            RenderTarget::from(target.clone()),
            Tonemapping::None,
            Msaa::Off,
            pose(0.0),
        ))
        .id();
    world.insert_resource(Scene {
        target,
        camera,
        shot: Arc::new(Mutex::new(None)),
    });
}

fn set_pose(app: &mut App, t: f32) {
    let camera = app.world().resource::<Scene>().camera;
    *app.world_mut().get_mut::<Transform>(camera).unwrap() = pose(t);
}

/// One frame; returns (frame peak bytes, budget bytes) from mipflow's figures.
fn frame(app: &mut App) -> (u64, u64) {
    app.update();
    let stats = app.world().resource::<Mipflow>().stats().copied();
    stats.map_or((0, 0), |s| (s.frame_peak_bytes, s.budget_bytes))
}

/// Renders frames until the screenshot of the target comes back (bounded by time).
fn screenshot(app: &mut App) -> Vec<u8> {
    let (target, shot) = {
        let s = app.world().resource::<Scene>();
        (s.target.clone(), s.shot.clone())
    };
    *shot.lock().unwrap() = None;
    let into = shot.clone();
    app.world_mut()
        .spawn(Screenshot::image(target))
        .observe(move |ev: On<ScreenshotCaptured>| {
            let rgba = ev
                .image
                .clone()
                .try_into_dynamic()
                .expect("rgba8")
                .to_rgba8();
            *into.lock().unwrap() = Some(rgba.into_raw());
        });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        app.update();
        if let Some(px) = shot.lock().unwrap().take() {
            return px;
        }
        assert!(Instant::now() < deadline, "no screenshot in 120 s");
    }
}

/// Screenshots until two in a row are the same and show the wall (meshes and materials are
/// prepared a frame or two after they are spawned or changed), bounded by time.
fn stable_screenshot(app: &mut App) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = screenshot(app);
    loop {
        let next = screenshot(app);
        let lit = next.chunks_exact(4).filter(|p| p[..3] != [0, 0, 0]).count();
        if next == last && lit > (SIZE * SIZE / 4) as usize {
            return next;
        }
        assert!(
            Instant::now() < deadline,
            "the frame did not settle in 120 s ({lit} pixels lit)"
        );
        last = next;
    }
}

/// Each streamed texture's finest resident level.
fn levels(app: &mut App) -> Vec<u8> {
    let mut m = app.world_mut().resource_mut::<Mipflow>();
    m.manager()
        .streamer()
        .texture_infos()
        .iter()
        .map(|t| t.resident_level)
        .collect()
}

/// Whether every streamed texture holds the levels its view wants (and nothing is on its way).
fn converged(app: &mut App) -> bool {
    let mut mipflow = app.world_mut().resource_mut::<Mipflow>();
    let m = mipflow.manager();
    m.streamer().texture_infos().iter().all(|t| {
        t.level_count > 0
            && t.in_flight_level.is_none()
            && f32::from(t.resident_level) <= t.wanted_level.max(0.0).floor()
    })
}

/// Runs still frames until `done` holds, bounded by time; counts frames over budget.
fn settle(app: &mut App, over: &mut u32, done: fn(&mut App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    for _ in 0..3 {
        // A few frames first: a budget change or a pose reaches the plan a frame later.
        let (peak, budget) = frame(app);
        *over += u32::from(peak > budget);
    }
    while !done(app) {
        assert!(
            Instant::now() < deadline,
            "the streamed images did not settle in 120 s"
        );
        let (peak, budget) = frame(app);
        *over += u32::from(peak > budget);
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    mipflow_cook::compare::psnr_rgb(a, b)
}

/// Mean absolute difference of horizontally adjacent pixels in the centre quarter: sharper
/// texture detail, larger.
fn detail(px: &[u8]) -> f64 {
    let (s, e) = (SIZE / 4, 3 * SIZE / 4);
    let mut sum = 0u64;
    let mut n = 0u64;
    for y in s..e {
        for x in s..e - 1 {
            let i = ((y * SIZE + x) * 4) as usize;
            for c in 0..3 {
                sum += u64::from(px[i + c].abs_diff(px[i + 4 + c]));
                n += 1;
            }
        }
    }
    sum as f64 / n as f64
}

#[test]
fn streamed_images_hold_the_budget_and_match_the_fully_resident_app() {
    // The reference: the same app and pose, every image fully resident.
    let Some(mut reference) = app(512 * MIB) else {
        return;
    };
    spawn_scene(&mut reference, true);
    set_pose(&mut reference, 1.0);
    let want = stable_screenshot(&mut reference);
    drop(reference);

    let mut app = app(256 * MIB).unwrap();
    spawn_scene(&mut app, false);
    let mut over = 0u32;
    let mut over_small = 0u32;
    let mut frames = 0u32;
    let mut moving = |app: &mut App, n: u32, over: &mut u32| {
        for i in 0..n {
            set_pose(app, i as f32 / n as f32);
            let (peak, budget) = frame(app);
            *over += u32::from(peak > budget);
            frames += 1;
        }
    };
    // 1. A moving camera under an ample budget.
    moving(&mut app, 100, &mut over);
    // 2. The budget drops to what Bevy and the floors hold, plus 1 MiB, while the camera moves.
    let floor = {
        let mut m = app.world_mut().resource_mut::<Mipflow>();
        // Bevy's bytes measured once more, then held: they move by a few hundred KiB from
        // frame to frame on lavapipe, as much as the squeeze leaves the textures.
        assert!(
            m.measure_bevy_bytes(),
            "Bevy's bytes are measured on this backend"
        );
        m.set_measure_every(Duration::MAX);
        let bevy = m.bevy_bytes();
        assert!(bevy > 0, "Bevy's own bytes are counted");
        let now = m.manager().context().ledger().snapshot();
        // Everything but the streamed textures and the upload staging, their floors (9 x 1.4
        // KiB) and 16 KiB (less than a level 1 of 256²), plus the planner's staging headroom
        // (a sixteenth of the budget).
        let c = &now.by_category;
        let fixed = now.total_bytes - c.textures.bytes - c.staging.bytes;
        let squeeze = (fixed + 9 * 1400 + (16 << 10)) * 16 / 15;
        m.set_budget(Budget::bytes(squeeze));
        (fixed, bevy, squeeze)
    };
    moving(&mut app, 100, &mut over);
    set_pose(&mut app, 1.0);
    settle(&mut app, &mut over, |app| {
        let mut m = app.world_mut().resource_mut::<Mipflow>();
        m.manager()
            .streamer()
            .texture_infos()
            .iter()
            .all(|t| t.in_flight_level.is_none())
    });
    let squeezed = stable_screenshot(&mut app);
    let squeezed_levels = levels(&mut app);
    // 3. The budget comes back; the camera moves again, then stays still.
    app.world_mut()
        .resource_mut::<Mipflow>()
        .set_budget(Budget::bytes(256 * MIB));
    moving(&mut app, 100, &mut over);
    set_pose(&mut app, 1.0);
    settle(&mut app, &mut over, converged);
    // Two more frames: the materials of the last grown images are rebound.
    for _ in 0..3 {
        let (peak, budget) = frame(&mut app);
        over += u32::from(peak > budget);
    }
    let risen = stable_screenshot(&mut app);
    let risen_levels = levels(&mut app);

    // 4. A budget below Bevy's own bytes: nothing fits, every image shows the grey fallback,
    // and no material keeps a view of an evicted texture (past the frames replaced textures
    // are kept).
    app.world_mut()
        .resource_mut::<Mipflow>()
        .set_budget(Budget::bytes(MIB));
    settle(&mut app, &mut over_small, |app| {
        let mut m = app.world_mut().resource_mut::<Mipflow>();
        m.manager()
            .streamer()
            .texture_infos()
            .iter()
            .all(|t| t.resident_level == t.level_count)
    });
    for _ in 0..2 * mipflow_bevy::KEEP_REPLACED_FRAMES {
        frame(&mut app);
    }
    let evicted = stable_screenshot(&mut app);
    let centre = ((SIZE / 2 * SIZE + SIZE / 2) * 4) as usize;
    assert!(
        app.should_exit().is_none(),
        "Bevy stopped on a rendering error: a material kept an evicted texture's view"
    );
    assert!(
        evicted[centre..centre + 3]
            .iter()
            .all(|&c| c.abs_diff(128) <= 2),
        "nothing resident: the grey fallback, {:?}",
        &evicted[centre..centre + 4]
    );

    let (p_squeezed, p_risen) = (psnr(&squeezed, &want), psnr(&risen, &want));
    let (d_squeezed, d_risen, d_want) = (detail(&squeezed), detail(&risen), detail(&want));
    eprintln!(
        "bevy: {frames} moving frames, {over} over budget; fixed {} B (Bevy {} B), squeeze {} B; \
         levels squeezed {squeezed_levels:?} risen {risen_levels:?}; PSNR against the fully \
         resident app: squeezed {p_squeezed:.1} dB, risen {p_risen:.1} dB; detail {d_squeezed:.2} \
         / {d_risen:.2} / {d_want:.2}",
        floor.0, floor.1, floor.2
    );
    assert_eq!(
        over, 0,
        "frames over budget (mipflow's ledger with Bevy's bytes)"
    );
    assert!(
        squeezed_levels
            .iter()
            .zip(&risen_levels)
            .any(|(s, r)| r < s),
        "textures grew after the rise: {squeezed_levels:?} -> {risen_levels:?}"
    );
    // The grown textures are drawn: no stale bind group keeps the squeezed view.
    assert!(
        p_risen >= 40.0,
        "after the rise the frame matches the fully resident app: {p_risen:.1} dB"
    );
    assert!(
        p_risen > p_squeezed + 3.0 && d_risen > d_squeezed * 1.2,
        "the grown textures are drawn sharper: {p_squeezed:.1} -> {p_risen:.1} dB, \
         detail {d_squeezed:.2} -> {d_risen:.2}"
    );
}
