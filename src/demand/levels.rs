//! The level a surface wants: `log2` of the texels one output pixel spans at its nearest point.

use glam::Vec3;

/// What one instance asks of its texture: the finest level it needs and the pixels it covers.
///
/// The level is `log2(texels per pixel)` at the sphere's nearest point: one pixel there spans
/// `2 d tan(fov/2) / viewport_height` world units, which hold `uv_density x uv_scale x
/// texture_width` texels per world unit. Why the nearest point: a surface receding from the camera
/// (a floor) needs its finest level where it is closest; using the centre would blur the
/// foreground, which is what players look at. Anisotropy is ignored (the trilinear level along the
/// shorter axis is what this gives), which errs on the sharp side.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn instance_demand(
    eye: Vec3,
    center: Vec3,
    radius: f32,
    uv_per_unit: f32,
    texture_width: u32,
    fov_y: f32,
    near: f32,
    viewport_height: u32,
) -> (f32, f32) {
    let tan = (fov_y * 0.5).tan().max(1e-4);
    let texels_per_unit = uv_per_unit * texture_width as f32;
    demand_at(
        eye,
        center,
        radius,
        texels_per_unit,
        tan,
        near,
        viewport_height,
    )
}

/// [`instance_demand`] with `tan(fov_y / 2)` (at least 1e-4) and the texel density given.
pub(crate) fn demand_at(
    eye: Vec3,
    center: Vec3,
    radius: f32,
    texels_per_unit: f32,
    tan: f32,
    near: f32,
    viewport_height: u32,
) -> (f32, f32) {
    let centre_d = eye.distance(center);
    let level = level_at(
        centre_d,
        radius,
        texels_per_unit,
        tan,
        near,
        viewport_height,
    );
    let proj_radius_px =
        radius / (centre_d.max(near.max(1e-4)) * tan) * viewport_height as f32 * 0.5;
    let pixels = std::f32::consts::PI * proj_radius_px * proj_radius_px;
    (level, pixels)
}

/// The level of [`demand_at`] from the distance between the eye and the sphere's centre. It
/// never decreases as the distance grows (each step is a monotonic float operation), so the
/// finest level over several eyes is the level at the nearest of them.
#[inline]
pub(crate) fn level_at(
    centre_d: f32,
    radius: f32,
    texels_per_unit: f32,
    tan: f32,
    near: f32,
    viewport_height: u32,
) -> f32 {
    let d = (centre_d - radius).max(near.max(1e-4));
    let world_per_pixel = 2.0 * d * tan / viewport_height.max(1) as f32;
    let texels_per_pixel = texels_per_unit * world_per_pixel;
    if texels_per_pixel > 0.0 {
        texels_per_pixel.log2().max(0.0)
    } else {
        f32::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wanted_level_follows_distance() {
        // A 1 m quad with a 1024 texture, 90 degree fov, 1024 px tall viewport: at 0.5 m from its
        // nearest point one pixel spans 1/1024 m, so level 0 is wanted; each doubling of the
        // distance wants one level coarser.
        let fov = 90f32.to_radians();
        let (l0, _) = instance_demand(
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::ZERO,
            0.5,
            1.0,
            1024,
            fov,
            0.01,
            1024,
        );
        assert!(l0.abs() < 1e-4, "{l0}");
        let (l1, _) = instance_demand(
            Vec3::new(0.0, 0.0, 1.5),
            Vec3::ZERO,
            0.5,
            1.0,
            1024,
            fov,
            0.01,
            1024,
        );
        assert!((l1 - 1.0).abs() < 1e-4, "{l1}");
        let (l3, p3) = instance_demand(
            Vec3::new(0.0, 0.0, 4.5),
            Vec3::ZERO,
            0.5,
            1.0,
            1024,
            fov,
            0.01,
            1024,
        );
        assert!((l3 - 3.0).abs() < 1e-4, "{l3}");
        assert!(p3 > 0.0);
    }
}
