//! The own_renderer example's scene: a corridor of panels, the camera's tour down it, and the
//! materials (procedural base colours and normal maps of bumps, cooked to KTX2 once and
//! cached).

use glam::{Mat4, Vec3};
use mipflow::{Camera, TextureSource};

use super::game::{MaterialSources, Panel};

/// The example's scene: a corridor with `count` panels on its two walls, one material each.
pub fn corridor(count: usize) -> Vec<Panel> {
    (0..count)
        .map(|i| {
            let side = if i % 2 == 0 { -1.0 } else { 1.0 };
            let z = -((i / 2) as f32) * 3.2 - 2.0;
            let yaw = if side < 0.0 {
                std::f32::consts::FRAC_PI_2
            } else {
                -std::f32::consts::FRAC_PI_2
            };
            Panel {
                transform: Mat4::from_scale_rotation_translation(
                    Vec3::splat(2.8),
                    glam::Quat::from_rotation_y(yaw),
                    Vec3::new(side * 2.2, 1.6, z),
                ),
                material: i,
                uv_repeat: 2.0,
            }
        })
        .chain(std::iter::once(Panel {
            // The far wall closes the corridor.
            transform: Mat4::from_scale_rotation_translation(
                Vec3::splat(4.4),
                glam::Quat::IDENTITY,
                Vec3::new(0.0, 1.6, -(count.div_ceil(2) as f32) * 3.2 - 2.0),
            ),
            material: 0,
            uv_repeat: 2.0,
        }))
        .collect()
}

/// The camera at time `t` in 0..1: down the corridor and back, looking ahead, swaying.
pub fn tour_camera(count: usize, t: f32) -> Camera {
    let length = (count.div_ceil(2) as f32) * 3.2;
    let phase = (t * std::f32::consts::TAU).cos() * -0.5 + 0.5;
    let z = 1.0 - phase * (length - 2.0);
    let sway = (t * 5.0 * std::f32::consts::TAU).sin() * 0.6;
    let eye = Vec3::new(sway, 1.6, z);
    let ahead = Vec3::new(
        sway * 0.5 + (t * 3.0 * std::f32::consts::TAU).sin() * 1.5,
        1.5,
        z - 4.0,
    );
    Camera::look_at(eye, ahead)
}

/// The materials: procedural base colours (mipflow-cook's demo textures) and normal maps of
/// bumps, cooked to BC7 KTX2 once and cached (`mipflow_cook::cache_dir`).
pub fn materials(count: usize, size: u32) -> std::result::Result<Vec<MaterialSources>, String> {
    use mipflow_cook::procedural::{cache_dir, cached_procedural, demo_specs};
    use mipflow_cook::{CookOptions, Quality};
    let cache = cache_dir();
    let specs = demo_specs(7, count as u32, size);
    let mut out = Vec::with_capacity(count);
    for (i, spec) in specs.iter().enumerate() {
        let mut spec = spec.clone();
        spec.size = size;
        spec.name = format!("own-base-{i}-{size}");
        let base =
            cached_procedural(&spec, Quality::Fast, Some(&cache)).map_err(|e| e.to_string())?;
        let path = cache.join(format!("own-normal-{i}-{size}.ktx2"));
        if mipflow::ktx2::read_info(&path, &Default::default()).is_err() {
            let img = bumps(size, i as u32);
            let opts = CookOptions {
                quality: Quality::Fast,
                normal_map: true,
                ..CookOptions::default()
            };
            let enc = mipflow_cook::encoder_for(Quality::Fast);
            let tex =
                mipflow_cook::cook_rgba8(img, &opts, enc.as_ref()).map_err(|e| e.to_string())?;
            let mut bytes = Vec::new();
            mipflow::ktx2::write_ktx2(&mut bytes, &tex, None, "own_renderer example")
                .map_err(|e| e.to_string())?;
            let tmp = cache.join(format!(".own-normal-{i}-{size}.{}.tmp", std::process::id()));
            let written = std::fs::create_dir_all(&cache)
                .and_then(|_| std::fs::write(&tmp, &bytes))
                .and_then(|_| std::fs::rename(&tmp, &path));
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
                out.push(MaterialSources {
                    base,
                    normal: TextureSource::bytes(bytes),
                });
                continue;
            }
        }
        out.push(MaterialSources {
            base,
            normal: TextureSource::path(path),
        });
    }
    Ok(out)
}

/// A tangent-space normal map of round bumps on a grid (`variant` sets the grid's density).
fn bumps(size: u32, variant: u32) -> image::RgbaImage {
    let cells = 4.0 + (variant % 5) as f32 * 2.0;
    image::RgbaImage::from_fn(size, size, |x, y| {
        let (u, v) = (
            x as f32 / size as f32 * cells,
            y as f32 / size as f32 * cells,
        );
        let (fu, fv) = (u.fract() - 0.5, v.fract() - 0.5);
        let r2 = fu * fu + fv * fv;
        // A spherical cap of radius 0.4 per cell: the height's gradient gives the normal.
        let (dx, dy) = if r2 < 0.16 {
            let h = (0.16 - r2).sqrt().max(1e-3);
            (fu / h, fv / h)
        } else {
            (0.0, 0.0)
        };
        let n = Vec3::new(-dx * 0.6, dy * 0.6, 1.0).normalize();
        let enc = |c: f32| ((c * 0.5 + 0.5) * 255.0).round() as u8;
        image::Rgba([enc(n.x), enc(n.y), enc(n.z), 255])
    })
}
