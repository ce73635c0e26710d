//! A frustum's planes, for sphere tests four planes at a time.

use glam::{Mat4, Vec3, Vec4};

/// A frustum's six planes, normalised once, stored by coordinate (planes 0-3 in the first
/// lanes, 4-5 and two planes that reject nothing in the second), so that a sphere test is eight
/// multiply-adds over four lanes and one comparison, without a branch per plane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frustum {
    x: [Vec4; 2],
    y: [Vec4; 2],
    z: [Vec4; 2],
    w: [Vec4; 2],
}

impl Frustum {
    /// Planes from the rows of `view_proj` (depth 0..1 clip space).
    pub(crate) fn new(view_proj: &Mat4) -> Self {
        let m = view_proj.transpose();
        let (r0, r1, r2, r3) = (m.x_axis, m.y_axis, m.z_axis, m.w_axis);
        // Six planes, and two set below that hold every sphere.
        let mut planes = [
            r3 + r0,
            r3 - r0,
            r3 + r1,
            r3 - r1,
            r2,
            r3 - r2,
            Vec4::ZERO,
            Vec4::ZERO,
        ];
        for p in &mut planes {
            let n = p.truncate().length();
            // A degenerate plane rejects nothing.
            *p = if n > 0.0 && n.is_finite() {
                *p / n
            } else {
                Vec4::ZERO
            };
        }
        // The two last planes hold every sphere whose centre is finite (`0 x + inf >= -r`,
        // whatever `r`: as no plane at all, for `weight`'s radii below 0 too).
        let all = Vec4::new(0.0, 0.0, 0.0, f32::INFINITY);
        planes[6] = all;
        planes[7] = all;
        let lanes = |f: fn(&Vec4) -> f32, k: usize| {
            Vec4::new(
                f(&planes[k]),
                f(&planes[k + 1]),
                f(&planes[k + 2]),
                f(&planes[k + 3]),
            )
        };
        Self {
            x: [lanes(|p| p.x, 0), lanes(|p| p.x, 4)],
            y: [lanes(|p| p.y, 0), lanes(|p| p.y, 4)],
            z: [lanes(|p| p.z, 0), lanes(|p| p.z, 4)],
            w: [lanes(|p| p.w, 0), lanes(|p| p.w, 4)],
        }
    }

    /// A frustum that rejects nothing.
    pub(crate) const ALL: Self = Self {
        x: [Vec4::ZERO; 2],
        y: [Vec4::ZERO; 2],
        z: [Vec4::ZERO; 2],
        w: [Vec4::INFINITY; 2],
    };

    /// Holds nothing (`0 x - inf >= -r` for no finite radius).
    pub(crate) const NONE: Self = Self {
        x: [Vec4::ZERO; 2],
        y: [Vec4::ZERO; 2],
        z: [Vec4::ZERO; 2],
        w: [Vec4::NEG_INFINITY; 2],
    };

    /// Whether a sphere is at least partly inside (its centre within `radius` of the inner side
    /// of every plane).
    #[inline]
    pub(crate) fn touches(&self, center: Vec3, radius: f32) -> bool {
        let (cx, cy, cz) = (
            Vec4::splat(center.x),
            Vec4::splat(center.y),
            Vec4::splat(center.z),
        );
        let r = Vec4::splat(-radius);
        let side = |k: usize| self.x[k] * cx + self.y[k] * cy + self.z[k] * cz + self.w[k];
        (side(0).cmpge(r) & side(1).cmpge(r)).all()
    }
}
