//! The camera: a view matrix and a perspective projection in wgpu's clip space (right-handed,
//! depth 0..1, Y up), and the prediction of where a moving camera will be.

use glam::{Mat4, Vec3};

/// The camera of one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World to view.
    pub view: Mat4,
    /// Vertical field of view in radians.
    pub fov_y: f32,
    /// Near plane distance.
    pub near: f32,
    /// Far plane distance.
    pub far: f32,
}

impl Camera {
    /// A camera at `eye` looking at `target`, with a 60 degree vertical field of view.
    pub fn look_at(eye: Vec3, target: Vec3) -> Self {
        Self {
            view: look_at(eye, target, Vec3::Y),
            fov_y: 60f32.to_radians(),
            near: 0.1,
            far: 2000.0,
        }
    }

    /// The projection for an `aspect` (width / height) viewport.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        perspective(self.fov_y, aspect.max(1e-3), self.near, self.far)
    }

    /// The eye position in world space.
    pub fn position(&self) -> Vec3 {
        self.view.inverse().w_axis.truncate()
    }
}

/// The view `frames` frames after `now` if the camera keeps the motion it made from `prev` to
/// `now` (both view matrices): `motion^frames * now`, where `motion = now * prev^-1`, capped at
/// half a turn. None when it did not move, or turned half a radian or more in one frame (a cut,
/// a teleport: that predicts nothing). Why the power and not `frames` times the last shift: a
/// camera that turns while it moves follows a curve, and the straight line misses what it turns
/// towards (18 units of travel turning 48 degrees ended 7 units to the side).
pub(crate) fn extrapolate_view(prev: Mat4, now: Mat4, frames: u32) -> Option<Mat4> {
    let motion = now * prev.inverse();
    let (_, rot, shift) = motion.to_scale_rotation_translation();
    let angle = rot.to_axis_angle().1;
    let moving = angle > 1e-4 || shift.length_squared() > 1e-8;
    if !(moving && angle.is_finite() && angle < 0.5 && shift.is_finite()) {
        return None;
    }
    let steps = frames.min((std::f32::consts::PI / angle) as u32).max(1);
    let mut ahead = now;
    for _ in 0..steps {
        ahead = motion * ahead;
    }
    Some(ahead)
}

/// A right-handed perspective projection for wgpu's clip space (depth 0..1, Y up).
pub fn perspective(fov_y: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    glam::camera::rh::proj::directx::perspective(fov_y, aspect, near, far)
}

/// A right-handed view matrix looking from `eye` at `target`, `up` towards the top of the view.
///
/// Degenerate inputs still give a finite view (a scripted camera path may pass through them):
/// a `target` at `eye` looks down -Z, and a look along `up` (straight down or up) puts -Z
/// (looking down) or +Z (looking up) at the top instead, as a map view does.
pub fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Mat4 {
    let dir = target - eye;
    let dir = if dir.length_squared() > 1e-12 && dir.is_finite() {
        dir.normalize()
    } else {
        Vec3::NEG_Z
    };
    let up = up.normalize_or_zero();
    let up = if up.cross(dir).length_squared() > 1e-8 {
        up
    } else if dir.y <= 0.0 {
        Vec3::NEG_Z
    } else {
        Vec3::Z
    };
    glam::camera::rh::view::look_at_mat4(eye, eye + dir, up)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_look_ahead_follows_a_curved_path() {
        // A camera going round a circle, 1.5 units a frame, turning 4 degrees a frame.
        let at = |f: f32| {
            let a = (4.0 * f).to_radians();
            let eye = Vec3::new(20.0 * a.cos(), 1.6, 20.0 * a.sin());
            let tangent = Vec3::new(-a.sin(), 0.0, a.cos());
            look_at(eye, eye + tangent, Vec3::Y)
        };
        let ahead = extrapolate_view(at(9.0), at(10.0), 12).unwrap();
        let truth = at(22.0);
        let eye = |v: Mat4| v.inverse().w_axis.truncate();
        assert!(eye(ahead).distance(eye(truth)) < 1e-2, "{ahead} vs {truth}");
        assert!(ahead.abs_diff_eq(truth, 1e-3));
        // Standing still, or a cut of more than half a radian: no prediction.
        assert!(extrapolate_view(at(10.0), at(10.0), 12).is_none());
        assert!(extrapolate_view(at(0.0), at(10.0), 12).is_none());
        // A fast turn is capped at half a turn.
        let spin = |deg: f32| Mat4::from_rotation_y(deg.to_radians());
        let capped = extrapolate_view(spin(0.0), spin(25.0), 12).unwrap();
        assert!(capped.abs_diff_eq(spin(25.0 + 7.0 * 25.0), 1e-4));
    }

    #[test]
    fn degenerate_looks_give_finite_views() {
        let eye = Vec3::new(1.0, 2.0, 3.0);
        for (target, forward) in [
            (eye, Vec3::NEG_Z),
            (eye - Vec3::Y * 5.0, Vec3::NEG_Y),
            (eye + Vec3::Y * 5.0, Vec3::Y),
            (eye + Vec3::X, Vec3::X),
        ] {
            let m = look_at(eye, target, Vec3::Y);
            assert!(m.is_finite(), "{target}");
            // The view looks along -Z in view space: the world's `forward` maps there.
            let f = m.transform_vector3(forward);
            assert!((f - Vec3::NEG_Z).length() < 1e-5, "{target}: {f}");
            // The eye is the view's origin.
            assert!(m.transform_point3(eye).length() < 1e-5);
        }
        // Looking straight down, world -Z is the top of the view (+Y in view space).
        let m = look_at(eye, eye - Vec3::Y, Vec3::Y);
        assert!((m.transform_vector3(Vec3::NEG_Z) - Vec3::Y).length() < 1e-5);
        // An ordinary look is glam's.
        let t = Vec3::new(-4.0, 0.5, -2.0);
        assert!(
            look_at(eye, t, Vec3::Y)
                .abs_diff_eq(glam::camera::rh::view::look_at_mat4(eye, t, Vec3::Y), 1e-5)
        );
    }
}
