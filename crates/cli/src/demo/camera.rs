//! The demo's fly camera: WASD to move, Q/E (or Ctrl/Space) down and up, the mouse to look while a
//! button is held, Shift to go faster and the scroll wheel to change the base speed.
//!
//! Pure CPU state, no winit types: the event loop translates its events into [`FlyInput`], so the
//! camera's behaviour can be tested without a window.

use glam::Vec3;

use mipflow::Camera;

/// Keys and buttons the fly camera reads, as the event loop last saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlyInput {
    /// W: forward.
    pub forward: bool,
    /// S: backward.
    pub back: bool,
    /// A: left.
    pub left: bool,
    /// D: right.
    pub right: bool,
    /// E or Space: up.
    pub up: bool,
    /// Q or Ctrl: down.
    pub down: bool,
    /// Shift: four times faster.
    pub fast: bool,
    /// A mouse button is held: mouse motion turns the camera.
    pub looking: bool,
}

/// A free-flying camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlyCamera {
    /// Eye position.
    pub position: Vec3,
    /// Heading in radians (0 looks down -Z, positive turns left).
    pub yaw: f32,
    /// Pitch in radians, clamped to just under ±90°.
    pub pitch: f32,
    /// Base speed in units per second (scroll changes it).
    pub speed: f32,
    /// Radians per pixel of mouse motion.
    pub sensitivity: f32,
}

/// Pitch limit: just under straight up or down, so `look_at`'s up vector never degenerates.
const PITCH_LIMIT: f32 = 1.55;

impl Default for FlyCamera {
    fn default() -> Self {
        Self {
            position: Vec3::new(0.0, 1.6, 2.0),
            yaw: 0.0,
            pitch: 0.0,
            speed: 3.0,
            sensitivity: 0.003,
        }
    }
}

impl FlyCamera {
    /// A camera at `eye` looking at `target`.
    pub fn looking_at(eye: Vec3, target: Vec3) -> Self {
        let d = (target - eye).normalize_or(Vec3::NEG_Z);
        Self {
            position: eye,
            yaw: (-d.x).atan2(-d.z),
            pitch: d.y.clamp(-1.0, 1.0).asin().clamp(-PITCH_LIMIT, PITCH_LIMIT),
            ..Self::default()
        }
    }

    /// The unit view direction.
    pub fn forward(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(-sy * cp, sp, -cy * cp)
    }

    /// Turns by a mouse motion of `(dx, dy)` pixels (only while [`FlyInput::looking`]).
    pub fn look(&mut self, dx: f64, dy: f64) {
        if !(dx.is_finite() && dy.is_finite()) {
            return;
        }
        // Clamped before the cast: a finite f64 past f32's range is an infinite f32, and the
        // yaw would be NaN for good. (No real motion reaches a million pixels in one event.)
        let (dx, dy) = (dx.clamp(-1e6, 1e6), dy.clamp(-1e6, 1e6));
        self.yaw -= dx as f32 * self.sensitivity;
        self.pitch = (self.pitch - dy as f32 * self.sensitivity).clamp(-PITCH_LIMIT, PITCH_LIMIT);
        self.yaw = self.yaw.rem_euclid(std::f32::consts::TAU);
    }

    /// Changes the base speed by scroll `lines` (each line is a factor of 1.25), within 0.1..200.
    pub fn scroll(&mut self, lines: f32) {
        if lines.is_finite() {
            self.speed = (self.speed * 1.25f32.powf(lines)).clamp(0.1, 200.0);
        }
    }

    /// Moves for `dt` seconds under `input`. A long `dt` (a stall) is capped at 0.1 s so the
    /// camera never jumps through walls after a hitch.
    pub fn update(&mut self, input: &FlyInput, dt: f32) {
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 0.1)
        } else {
            0.0
        };
        let fwd = self.forward();
        let right = fwd.cross(Vec3::Y).normalize_or(Vec3::X);
        let axis = |pos: bool, neg: bool| f32::from(u8::from(pos)) - f32::from(u8::from(neg));
        let dir = fwd * axis(input.forward, input.back)
            + right * axis(input.right, input.left)
            + Vec3::Y * axis(input.up, input.down);
        let speed = self.speed * if input.fast { 4.0 } else { 1.0 };
        self.position += dir.normalize_or_zero() * speed * dt;
    }

    /// The frame's camera.
    pub fn camera(&self) -> Camera {
        Camera::look_at(self.position, self.position + self.forward())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looking_at_round_trips() {
        let eye = Vec3::new(1.0, 2.0, 3.0);
        let target = Vec3::new(-4.0, 1.0, -7.0);
        let c = FlyCamera::looking_at(eye, target);
        let want = (target - eye).normalize();
        assert!(
            (c.forward() - want).length() < 1e-4,
            "{:?} vs {want:?}",
            c.forward()
        );
    }

    #[test]
    fn moves_forward_and_strafes() {
        let mut c = FlyCamera::default();
        let start = c.position;
        let input = FlyInput {
            forward: true,
            ..FlyInput::default()
        };
        // update() caps dt at 0.1 s, so a 0.1 s step at the default 3 m/s moves 0.3 m.
        c.update(&input, 0.1);
        assert!((c.position - (start + Vec3::new(0.0, 0.0, -0.3))).length() < 1e-4);
        let input = FlyInput {
            right: true,
            fast: true,
            ..FlyInput::default()
        };
        let before = c.position;
        c.update(&input, 0.1);
        assert!((c.position.x - before.x - 1.2).abs() < 1e-4);
    }

    #[test]
    fn bad_input_is_ignored() {
        let mut c = FlyCamera::default();
        c.look(f64::NAN, 1.0);
        c.scroll(f32::INFINITY);
        c.update(
            &FlyInput {
                forward: true,
                ..FlyInput::default()
            },
            f32::NAN,
        );
        assert_eq!(c, FlyCamera::default());
        c.look(0.0, 1e9);
        assert!(c.pitch <= PITCH_LIMIT);
        assert!(c.camera().view.is_finite());
        // Finite in f64 but past f32's range: the camera stays sound.
        c.look(1e300, -1e300);
        assert!(c.yaw.is_finite() && c.pitch.is_finite());
        assert!(c.camera().view.is_finite());
    }
}
