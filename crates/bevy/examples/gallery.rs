//! A Bevy gallery of streamed images: the demo's procedural set (120 textures by default) cooked
//! to BC7 KTX2 at start-up, hung on the walls of a long hall, streamed by mipflow under one
//! budget with Bevy's own bytes. A fly camera; the budget and memory per category on screen.
//!
//! ```text
//! cargo run --release -p mipflow-bevy --example gallery --ignore-rust-version
//! ```
//!
//! Keys: WASD / arrows move, Q/E down/up, the right mouse button looks, Shift runs; B squeezes
//! the budget (Bevy's own bytes and a sixteenth of the rest) and back; `[` and `]` halve and double it. Options:
//! `--textures N`, `--budget MiB`, `--frames N` (fly a scripted path for N frames, then exit),
//! `--screenshot PATH` (with `--frames`: the last frame as a PNG).

use std::time::{Duration, Instant};

use bevy::input::mouse::AccumulatedMouseMotion;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::settings::{WgpuFeatures, WgpuSettings};
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use mipflow::{Budget, Category, TextureOptions, TextureSource, format_bytes};
use mipflow_bevy::{Mipflow, MipflowPlugin};

#[derive(Resource, Clone, Debug)]
struct Options {
    textures: u32,
    budget_mib: u64,
    frames: Option<u32>,
    screenshot: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        textures: 120,
        budget_mib: 256,
        frames: None,
        screenshot: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--textures" => {
                o.textures = value(&a)?.parse().map_err(|e| format!("--textures: {e}"))?
            }
            "--budget" => {
                o.budget_mib = value(&a)?.parse().map_err(|e| format!("--budget: {e}"))?
            }
            "--frames" => {
                o.frames = Some(value(&a)?.parse().map_err(|e| format!("--frames: {e}"))?)
            }
            "--screenshot" => o.screenshot = Some(value(&a)?),
            "-h" | "--help" => {
                return Err("usage: gallery [--textures N] [--budget MiB] [--frames N] \
                            [--screenshot PATH]"
                    .into());
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    if o.textures == 0 || o.textures > 4096 {
        return Err(format!("--textures {}: 1..=4096", o.textures));
    }
    if o.budget_mib == 0 {
        return Err("--budget 0: a budget of at least 1 MiB".into());
    }
    if o.screenshot.is_some() && o.frames.is_none() {
        return Err("--screenshot needs --frames N".into());
    }
    Ok(o)
}

fn main() -> AppExit {
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gallery: {e}");
            return AppExit::from_code(2);
        }
    };
    let budget = Budget::bytes(options.budget_mib << 20);
    App::new()
        .add_plugins(
            DefaultPlugins.set(RenderPlugin {
                render_creation: WgpuSettings {
                    features: WgpuFeatures::TEXTURE_COMPRESSION_BC,
                    ..default()
                }
                .into(),
                ..default()
            }),
        )
        .add_plugins(MipflowPlugin::with_budget(budget))
        .insert_resource(options)
        .insert_resource(Squeeze::default())
        .add_systems(Startup, setup)
        .add_systems(Update, (fly, keys, scripted, show_memory))
        .run()
}

#[derive(Resource, Default)]
struct Squeeze {
    budget: u64,
    squeezed: bool,
}

#[derive(Component)]
struct Flying {
    yaw: f32,
    pitch: f32,
}

#[derive(Component)]
struct MemoryText;

/// The hall: panels on both walls, 3 units apart, each its own streamed texture.
fn setup(
    mut commands: Commands,
    mut mipflow: ResMut<Mipflow>,
    mut images: ResMut<Assets<Image>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    options: Res<Options>,
    mut squeeze: ResMut<Squeeze>,
) {
    squeeze.budget = options.budget_mib << 20;
    let t0 = Instant::now();
    let specs = mipflow_cook::procedural::demo_specs(1, options.textures, 1024);
    let panel = meshes.add(Rectangle::new(2.4, 2.4));
    let mut cooked = 0u64;
    for (i, spec) in specs.iter().enumerate() {
        let bytes =
            match mipflow_cook::procedural::cook_procedural(spec, mipflow_cook::Quality::Fast) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("gallery: texture {i} did not cook: {e}");
                    continue;
                }
            };
        cooked += bytes.len() as u64;
        let image = match mipflow.add_image(
            &mut images,
            TextureSource::Bytes(bytes.into()),
            TextureOptions::default(),
        ) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("gallery: texture {i} refused: {e}");
                continue;
            }
        };
        let material = materials.add(StandardMaterial {
            base_color_texture: Some(image),
            perceptual_roughness: 0.9,
            ..default()
        });
        let (side, row) = ((i % 2) as f32 * 2.0 - 1.0, (i / 2) as f32);
        commands.spawn((
            Mesh3d(panel.clone()),
            MeshMaterial3d(material),
            // A rectangle faces +Z and `looking_at` turns -Z to the target: the picture faces
            // the hall when -Z looks at the wall behind it.
            Transform::from_xyz(side * 4.0, 1.6, -3.0 * row)
                .looking_at(Vec3::new(side * 8.0, 1.6, -3.0 * row), Vec3::Y),
        ));
    }
    let length = 3.0 * (options.textures as f32 / 2.0).ceil();
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(8.0, length + 6.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.3, 0.3, 0.32))),
        Transform::from_xyz(0.0, 0.0, 3.0 - length / 2.0),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 6000.0,
            ..default()
        },
        Transform::from_xyz(1.0, 4.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 600.0,
        ..default()
    });
    commands.spawn((
        Camera3d::default(),
        // Bevy's default tone mapping needs its LUTs (feature `tonemapping_luts`): not compiled.
        bevy::core_pipeline::tonemapping::Tonemapping::AcesFitted,
        Transform::from_xyz(0.0, 1.6, 4.0).looking_at(Vec3::new(0.0, 1.6, -10.0), Vec3::Y),
        Flying {
            yaw: 0.0,
            pitch: 0.0,
        },
    ));
    commands.spawn((
        Text::new("mipflow"),
        TextFont::from_font_size(14.0),
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(8.0),
            top: Val::Px(8.0),
            ..default()
        },
        MemoryText,
    ));
    info!(
        "gallery: {} textures cooked ({}) in {:.1} s",
        options.textures,
        format_bytes(cooked),
        t0.elapsed().as_secs_f32()
    );
}

/// WASD / arrows, Q/E, Shift; the right mouse button looks around.
fn fly(
    keys: Res<ButtonInput<KeyCode>>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    time: Res<Time>,
    options: Res<Options>,
    mut camera: Query<(&mut Transform, &mut Flying)>,
) {
    if options.frames.is_some() {
        return;
    }
    let Ok((mut t, mut f)) = camera.single_mut() else {
        return;
    };
    if buttons.pressed(MouseButton::Right) {
        f.yaw -= motion.delta.x * 0.003;
        f.pitch = (f.pitch - motion.delta.y * 0.003).clamp(-1.5, 1.5);
    }
    t.rotation = Quat::from_euler(EulerRot::YXZ, f.yaw, f.pitch, 0.0);
    let mut dir = Vec3::ZERO;
    for (k, d) in [
        (KeyCode::KeyW, Vec3::NEG_Z),
        (KeyCode::ArrowUp, Vec3::NEG_Z),
        (KeyCode::KeyS, Vec3::Z),
        (KeyCode::ArrowDown, Vec3::Z),
        (KeyCode::KeyA, Vec3::NEG_X),
        (KeyCode::ArrowLeft, Vec3::NEG_X),
        (KeyCode::KeyD, Vec3::X),
        (KeyCode::ArrowRight, Vec3::X),
        (KeyCode::KeyQ, Vec3::NEG_Y),
        (KeyCode::KeyE, Vec3::Y),
    ] {
        if keys.pressed(k) {
            dir += d;
        }
    }
    let speed = if keys.pressed(KeyCode::ShiftLeft) {
        12.0
    } else {
        4.0
    };
    let step = t.rotation * dir.normalize_or_zero() * speed * time.delta_secs();
    t.translation += step;
}

/// B squeezes the budget (Bevy's own bytes and a sixteenth of the rest) and back; `[` and `]` halve and double it.
fn keys(keys: Res<ButtonInput<KeyCode>>, mut mipflow: ResMut<Mipflow>, mut s: ResMut<Squeeze>) {
    let mut changed = false;
    if keys.just_pressed(KeyCode::KeyB) {
        s.squeezed = !s.squeezed;
        changed = true;
    }
    if keys.just_pressed(KeyCode::BracketLeft) {
        s.budget = (s.budget / 2).max(8 << 20);
        changed = true;
    }
    if keys.just_pressed(KeyCode::BracketRight) {
        s.budget = s.budget.saturating_mul(2).min(1 << 40);
        changed = true;
    }
    if changed {
        let b = if s.squeezed {
            squeezed(s.budget, mipflow.bevy_bytes())
        } else {
            s.budget
        };
        mipflow.set_budget(Budget::bytes(b));
    }
}

/// The squeezed budget: Bevy's own bytes (which mipflow cannot free) and a sixteenth of the rest.
fn squeezed(budget: u64, bevy: u64) -> u64 {
    bevy + budget.saturating_sub(bevy) / 16
}

/// `--frames N`: the camera flies down the hall and back, the budget squeezed for the middle
/// third; the last frame is saved to `--screenshot`, then the app exits.
#[allow(clippy::too_many_arguments)] // a Bevy system: its parameters are its queries
fn scripted(
    mut commands: Commands,
    options: Res<Options>,
    mut frame: Local<u32>,
    mut finished: Local<Option<Instant>>,
    mut camera: Query<&mut Transform, With<Flying>>,
    mut mipflow: ResMut<Mipflow>,
    s: Res<Squeeze>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(frames) = options.frames else {
        return;
    };
    if let Some(at) = *finished {
        // The screenshot is written a few frames after it was asked for.
        let written = options
            .screenshot
            .as_ref()
            .is_none_or(|p| std::path::Path::new(p).exists());
        if written || at.elapsed() > Duration::from_secs(30) {
            exit.write(if written {
                AppExit::Success
            } else {
                AppExit::error()
            });
        }
        return;
    }
    let n = *frame;
    *frame += 1;
    let t = n as f32 / frames.max(1) as f32;
    let length = 3.0 * (options.textures as f32 / 2.0).ceil();
    let z = 4.0 - length * 0.8 * (1.0 - (2.0 * t - 1.0).abs());
    if let Ok(mut cam) = camera.single_mut() {
        *cam = Transform::from_xyz((t * 20.0).sin() * 1.5, 1.6, z)
            .looking_at(Vec3::new((t * 7.0).sin() * 3.0, 1.6, z - 6.0), Vec3::Y);
    }
    let third = frames / 3;
    if n == third {
        let b = squeezed(s.budget, mipflow.bevy_bytes());
        mipflow.set_budget(Budget::bytes(b));
    } else if n == 2 * third {
        mipflow.set_budget(Budget::bytes(s.budget));
    }
    if n + 1 >= frames {
        if let Some(path) = &options.screenshot {
            let _ = std::fs::remove_file(path);
            commands
                .spawn(Screenshot::primary_window())
                .observe(save_to_disk(path.clone()));
        }
        *finished = Some(Instant::now());
    }
}

/// The budget and memory per category, every frame.
fn show_memory(mipflow: Res<Mipflow>, mut text: Query<&mut Text, With<MemoryText>>) {
    let (Some(stats), Ok(mut text)) = (mipflow.stats(), text.single_mut()) else {
        return;
    };
    let c = &stats.ledger.by_category;
    let line = |cat: Category| format_bytes(c.get(cat).bytes);
    text.0 = format!(
        "budget {}  on the GPU {} (peak {}){}\n\
         textures {}  (resident {} of {} wanted)\n\
         Bevy (meshes, its targets and images) {}\n\
         staging {}  buffers {}  render targets {}",
        format_bytes(stats.budget_bytes),
        format_bytes(stats.ledger.total_bytes),
        format_bytes(stats.frame_peak_bytes),
        if stats.budget_too_small {
            "  budget too small"
        } else {
            ""
        },
        line(Category::Textures),
        format_bytes(stats.resident_mip_bytes),
        format_bytes(stats.wanted_mip_bytes),
        format_bytes(mipflow.bevy_bytes()),
        line(Category::Staging),
        line(Category::Buffers),
        line(Category::RenderTargets),
    );
}
