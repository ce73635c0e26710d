//! Demand: what a texture's view needs, computed from a world-space bounding volume, its UV
//! density and the camera (demand form (c) of [`crate::BudgetManager`]). The view, frustum,
//! level and prediction math lives here, below the manager; mipflow's own `Renderer` uses it
//! as any game does. A game's own camera comes in as its view and projection matrices
//! ([`DemandView::from_view_proj`]); [`Camera`] is a convenience that makes them.
//!
//! A [`DemandView`] is made once per frame from the camera and the output size; each object then
//! asks [`DemandView::sphere`] (or [`DemandView::aabb`]) for its [`Demand`]. The view carries the
//! same guard band and look-ahead as mipflow's own [`crate::Renderer`]: an object outside the
//! view but inside a wider frustum (the guard band) is wanted at a quarter of its pixels, one
//! the camera will see in a few frames if it keeps moving as it did (the look-ahead) at half, so
//! its reads start before it comes into view.
//!
//! ```
//! use mipflow::{Camera, DemandView};
//! use glam::{vec3, Vec3};
//!
//! let camera = Camera::look_at(vec3(0.0, 0.0, 5.0), Vec3::ZERO);
//! let view = DemandView::new(&camera, (1280, 720));
//! // A 2 m wall, one texture repeat per metre (1 UV unit per metre), a 1024² texture.
//! let d = view.sphere(Vec3::ZERO, 1.0, 1.0, 1024.0).expect("in view");
//! assert!(d.level > 0.0 && d.pixels > 0.0 && d.weight == 1.0);
//! ```

use glam::{Mat4, Vec3, Vec4};

mod camera;
mod frustum;
mod levels;

pub(crate) use camera::extrapolate_view;
pub use camera::{Camera, look_at, perspective};
use frustum::Frustum;
pub(crate) use levels::{demand_at, level_at};

/// Frames the look-ahead extrapolates the camera's motion by (the Renderer's too).
pub const LOOK_AHEAD_FRAMES: u32 = 12;

/// Weight of an object in the look-ahead frustum only.
pub const LOOK_AHEAD_WEIGHT: f32 = 0.5;

/// Weight of an object in the guard band only.
pub const GUARD_BAND_WEIGHT: f32 = 0.25;

/// The most frames ahead [`DemandView::with_prediction`] predicts wanted levels for.
pub const MAX_PREDICTED_FRAMES: u32 = 8;

/// Frames ahead [`DemandView::with_look_ahead`] predicts wanted levels for: a read started now
/// lands in the next frame and is built in the one after, when nothing queues before it. The
/// Renderer uses the streamer's measured latency instead
/// ([`crate::BudgetManager::demand_latency_frames`]).
pub const DEFAULT_PREDICTED_FRAMES: u32 = 2;

/// What one object asks of its texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Demand {
    /// The finest level wanted, fractional (0 = full size; `log2` of texels per pixel at the
    /// nearest point), over the current view and the predicted ones
    /// ([`DemandView::with_prediction`]).
    pub level: f32,
    /// The finest level the current view alone wants (`level` without the prediction): what
    /// the object's pixels on screen now are sharp with.
    pub now_level: f32,
    /// The camera moves and the object is in none of the views it is predicted to have (nor in
    /// the look-ahead): a read started now would land after it has left the view. The
    /// manager then starts no grow for it (it keeps what it has and what is in flight; see
    /// [`crate::BudgetManager::add_view_demand`]).
    pub leaving: bool,
    /// The output pixels it covers, times `weight`.
    pub pixels: f32,
    /// 1 in view, [`LOOK_AHEAD_WEIGHT`] in the look-ahead only, [`GUARD_BAND_WEIGHT`] in the
    /// guard band only.
    pub weight: f32,
}

/// One frame's view, as demand sees it: a view matrix, a projection and the output size.
/// Cheap to make (a few matrix products), no allocation; a sphere costs a few dozen flops.
///
/// # Convention
/// The matrices are wgpu's (and glam's `rh`/`directx` ones): a right-handed view matrix
/// (world to view, the camera looking down -Z), and a perspective projection into wgpu's clip
/// space (x and y in -1..1, depth 0..1, Y up). A reversed depth (near at 1) and an infinite far
/// plane are fine: the frustum is read off the product, and the near distance off the
/// projection. Surface density is given in one unit everywhere: **UV units per world unit**
/// (1 / the world size one repeat of the texture covers), times the texture's side in texels
/// where the texture is not known to the call ([`DemandView::sphere`]).
#[derive(Clone, Copy, Debug)]
pub struct DemandView {
    view: Frustum,
    guard: Option<Frustum>,
    ahead: Option<Frustum>,
    /// The views the camera is predicted to have 1, 2, ... frames from now (the first
    /// `predicted_count`), with their eyes.
    predicted: [(Frustum, Vec3); MAX_PREDICTED_FRAMES as usize],
    predicted_count: u32,
    eye: Vec3,
    tan_half_fov: f32,
    near: f32,
    viewport_height: u32,
    /// The view and projection it was made from, for the guard band and the prediction;
    /// `sound` is false when they see nothing sensible (then nothing is in view).
    view_matrix: Mat4,
    projection: Mat4,
    sound: bool,
}

impl DemandView {
    /// The view of `camera` at an `output` size (pixels), with no guard band or look-ahead.
    pub fn new(camera: &Camera, output: (u32, u32)) -> Self {
        let aspect = output.0.max(1) as f32 / output.1.max(1) as f32;
        // A camera that sees nothing sensible (a field of view of 0 or a half turn and more, a
        // view matrix that is not finite or flattens space, no near plane) sees nothing: its
        // frustum's planes came out degenerate, which reject nothing, and every texture asked
        // for level 0 over the whole screen.
        if camera_is_sound(camera) {
            Self::from_view_proj(camera.view, camera.projection(aspect), output)
        } else {
            Self::nothing(output)
        }
    }

    /// The view of a game's own camera: its `view` matrix (world to view) and `projection`
    /// (see the convention above), at an `output` size in pixels, with no guard band or
    /// look-ahead. A projection that is not a perspective one into depth 0..1 (not finite,
    /// not invertible, no positive near distance, a field of view of a half turn or more, an
    /// orthographic projection), or a view matrix that is not finite or flattens space, sees
    /// nothing.
    ///
    /// ```
    /// use mipflow::DemandView;
    /// use mipflow::glam::{self, Vec3};
    ///
    /// use glam::camera::rh::{proj::directx, view};
    ///
    /// let view = view::look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
    /// // Reversed depth, infinite far plane: a common game projection (glam 0.34 keeps its
    /// // projections under `glam::camera`; `directx` is depth 0..1, wgpu's).
    /// let proj = directx::perspective_infinite_reverse(60f32.to_radians(), 16.0 / 9.0, 0.1);
    /// let demand = DemandView::from_view_proj(view, proj, (1280, 720));
    /// // A 2 m wall, one texture repeat per metre, a 1024² texture.
    /// let d = demand.sphere(Vec3::ZERO, 1.0, 1.0, 1024.0).expect("in view");
    /// assert!(d.level > 0.0 && d.pixels > 0.0 && d.weight == 1.0);
    /// ```
    pub fn from_view_proj(view: Mat4, projection: Mat4, output: (u32, u32)) -> Self {
        let Some((tan_half_fov, near)) = perspective_of(&projection) else {
            return Self::nothing(output);
        };
        if !(view.is_finite() && view.determinant().abs() > 1e-12) {
            return Self::nothing(output);
        }
        Self {
            view: Frustum::new(&(projection * view)),
            guard: None,
            ahead: None,
            predicted: [(Frustum::ALL, Vec3::ZERO); MAX_PREDICTED_FRAMES as usize],
            predicted_count: 0,
            eye: view.inverse().w_axis.truncate(),
            tan_half_fov,
            near,
            viewport_height: output.1,
            view_matrix: view,
            projection,
            sound: true,
        }
    }

    /// A view that holds nothing.
    fn nothing(output: (u32, u32)) -> Self {
        Self {
            view: Frustum::NONE,
            guard: None,
            ahead: None,
            predicted: [(Frustum::ALL, Vec3::ZERO); MAX_PREDICTED_FRAMES as usize],
            predicted_count: 0,
            eye: Vec3::ZERO,
            tan_half_fov: 1.0,
            near: 0.1,
            viewport_height: output.1,
            view_matrix: Mat4::IDENTITY,
            projection: Mat4::IDENTITY,
            sound: false,
        }
    }

    /// Adds a guard band: objects outside the view but inside a frustum `factor` times wider
    /// (vertical field of view, at most 170 degrees) are wanted at [`GUARD_BAND_WEIGHT`] of
    /// their pixels. A factor of 1 or less (or not finite) means none.
    pub fn with_guard_band(mut self, factor: f32) -> Self {
        self.guard = (factor.is_finite() && factor > 1.0 && self.sound).then(|| {
            let fov = (2.0 * self.tan_half_fov.atan() * factor).min(170f32.to_radians());
            // The same projection with x and y scaled down: the field of view widened in both
            // directions by the same ratio of tangents (the aspect and any skew kept).
            let k = self.tan_half_fov / (fov * 0.5).tan();
            let widen = Mat4::from_scale(Vec3::new(k, k, 1.0));
            Frustum::new(&(widen * self.projection * self.view_matrix))
        });
        self
    }

    /// Adds the look-ahead: `previous_view` is the camera's view matrix of the last frame; the
    /// camera is extrapolated [`LOOK_AHEAD_FRAMES`] frames on along the motion from it to this
    /// one (a curve when it turns). A camera that stood still or jumped (a cut) predicts nothing.
    /// Wanted levels are predicted [`DEFAULT_PREDICTED_FRAMES`] ahead (see
    /// [`DemandView::with_prediction`]).
    pub fn with_look_ahead(self, previous_view: Mat4) -> Self {
        self.with_prediction(previous_view, DEFAULT_PREDICTED_FRAMES)
    }

    /// [`DemandView::with_look_ahead`], with wanted levels predicted `frames` frames ahead (at
    /// most [`MAX_PREDICTED_FRAMES`]; 0 predicts none): an object's level is the finest over
    /// the current view and the views the camera is predicted to have in each of the next
    /// `frames` frames where it is inside them. Why: a read started now lands and is built
    /// `frames` frames later (the streamer measures it); by then a moving camera is closer to
    /// what is ahead, and asking for the level seen from here leaves it blurred when it is near
    /// (a fly-by at 6.5 units a frame put half its frames under 40 dB). The weights (pixels)
    /// stay those of the current view, the look-ahead and the guard band, so a prediction never
    /// outbids what is on screen now.
    pub fn with_prediction(mut self, previous_view: Mat4, frames: u32) -> Self {
        self.ahead = None;
        self.predicted_count = 0;
        if !self.sound {
            return self;
        }
        let (projection, now) = (self.projection, self.view_matrix);
        self.ahead = extrapolate_view(previous_view, now, LOOK_AHEAD_FRAMES)
            .map(|ahead| Frustum::new(&(projection * ahead)));
        if self.ahead.is_none() {
            return self;
        }
        for k in 1..=frames.min(MAX_PREDICTED_FRAMES) {
            let Some(v) = extrapolate_view(previous_view, now, k) else {
                break;
            };
            let eye = v.inverse().w_axis.truncate();
            if !eye.is_finite() {
                break;
            }
            self.predicted[self.predicted_count as usize] = (Frustum::new(&(projection * v)), eye);
            self.predicted_count += 1;
        }
        self
    }

    /// Frames ahead the wanted levels are predicted for (0 without a look-ahead).
    pub fn predicted_frames(&self) -> u32 {
        self.predicted_count
    }

    /// The weight of a sphere: 1 in view, less in the look-ahead or guard band, `None` outside.
    pub fn weight(&self, center: Vec3, radius: f32) -> Option<f32> {
        if self.view.touches(center, radius) {
            Some(1.0)
        } else if self.ahead.is_some_and(|a| a.touches(center, radius))
            || self.predicted[..self.predicted_count as usize]
                .iter()
                .any(|(f, _)| f.touches(center, radius))
        {
            Some(LOOK_AHEAD_WEIGHT)
        } else if self.guard.is_some_and(|g| g.touches(center, radius)) {
            Some(GUARD_BAND_WEIGHT)
        } else {
            None
        }
    }

    /// The demand of a world-space sphere whose surface holds `uv_per_unit` UV units per world
    /// unit (1 / the world size one repeat of the texture covers) of a texture whose level 0
    /// is `texture_side` texels on a side (`sqrt(width x height)`, the side of a square of as
    /// many texels; [`crate::BudgetManager::texture_side`] gives it for a managed texture).
    /// `None` outside every frustum, or for a non-finite sphere.
    pub fn sphere(
        &self,
        center: Vec3,
        radius: f32,
        uv_per_unit: f32,
        texture_side: f32,
    ) -> Option<Demand> {
        let texels_per_unit = uv_per_unit * texture_side;
        if !(center.is_finite() && radius.is_finite() && texels_per_unit.is_finite()) {
            return None;
        }
        let radius = radius.max(0.0);
        // Each frustum tested at most once: the weight (as `weight` gives it) and the predicted
        // levels come from the same tests. The finest predicted level is the level at the
        // nearest predicted eye whose view holds the sphere (the level never decreases with
        // the distance), so one distance and one logarithm serve every predicted view.
        let in_view = self.view.touches(center, radius);
        let (mut nearest_sq, mut in_predicted) = (f32::INFINITY, false);
        for (f, eye) in &self.predicted[..self.predicted_count as usize] {
            if f.touches(center, radius) {
                nearest_sq = nearest_sq.min(eye.distance_squared(center));
                in_predicted = true;
            }
        }
        // In a predicted view is ahead already: the look-ahead frustum is tested only when not.
        let ahead = in_predicted || self.ahead.is_some_and(|a| a.touches(center, radius));
        let weight = if in_view {
            1.0
        } else if ahead {
            LOOK_AHEAD_WEIGHT
        } else if self.guard.is_some_and(|g| g.touches(center, radius)) {
            GUARD_BAND_WEIGHT
        } else {
            return None;
        };
        let texels_per_unit = texels_per_unit.max(0.0);
        let (now_level, pixels) = demand_at(
            self.eye,
            center,
            radius,
            texels_per_unit,
            self.tan_half_fov,
            self.near,
            self.viewport_height,
        );
        // Only a predicted eye nearer than the current one can ask for a finer level; `sqrt`
        // is monotonic, so squares compare as the distances do.
        let level = if nearest_sq < self.eye.distance_squared(center) {
            now_level.min(level_at(
                nearest_sq.sqrt(),
                radius,
                texels_per_unit,
                self.tan_half_fov,
                self.near,
                self.viewport_height,
            ))
        } else {
            now_level
        };
        Some(Demand {
            level,
            now_level,
            leaving: self.predicted_count > 0 && !ahead,
            pixels: pixels * weight,
            weight,
        })
    }

    /// [`DemandView::sphere`] for an axis-aligned world-space box (its bounding sphere).
    pub fn aabb(
        &self,
        min: Vec3,
        max: Vec3,
        uv_per_unit: f32,
        texture_side: f32,
    ) -> Option<Demand> {
        let (center, radius) = Self::box_sphere(min, max);
        self.sphere(center, radius, uv_per_unit, texture_side)
    }

    /// The bounding sphere of a box.
    pub fn box_sphere(min: Vec3, max: Vec3) -> (Vec3, f32) {
        ((min + max) * 0.5, (max - min).length() * 0.5)
    }
}

/// Whether `camera` sees a sensible frustum: a field of view strictly between 0 and a half
/// turn, a finite positive near plane, and a finite view matrix that does not flatten space.
fn camera_is_sound(camera: &Camera) -> bool {
    let fov_ok =
        camera.fov_y.is_finite() && camera.fov_y > 0.0 && camera.fov_y < std::f32::consts::PI;
    let near_ok = camera.near.is_finite() && camera.near > 0.0 && camera.far > camera.near;
    let view_ok = camera.view.is_finite() && camera.view.determinant().abs() > 1e-12;
    fov_ok && near_ok && view_ok
}

/// `tan(fov_y / 2)` and the near distance of a perspective `projection` into depth 0..1
/// (standard or reversed, finite or infinite far plane); `None` when it is not one.
fn perspective_of(projection: &Mat4) -> Option<(f32, f32)> {
    let y = projection.y_axis.y;
    // A field of view of a half turn or more has no positive focal length; a perspective
    // projection divides by the distance along -Z (an orthographic one does not divide).
    if !(projection.is_finite() && y > 1e-6 && projection.z_axis.w < 0.0) {
        return None;
    }
    let inverse = projection.inverse();
    if !inverse.is_finite() {
        return None;
    }
    // The view-space distance of the depth-0 and depth-1 planes on the axis: the nearer one
    // is the near plane (the other is the far plane, at infinity for an infinite projection).
    let distance = |depth: f32| {
        let p = inverse * Vec4::new(0.0, 0.0, depth, 1.0);
        -p.z / p.w
    };
    let near = [distance(0.0), distance(1.0)]
        .into_iter()
        .filter(|d| d.is_finite() && *d > 0.0)
        .fold(f32::INFINITY, f32::min);
    (near.is_finite() && near > 0.0).then_some(((1.0 / y).max(1e-4), near))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A camera that sees nothing sensible (a field of view of 0 or a half turn, a view matrix
    /// of zeros or NaN, no near plane) gives no demand at all, with its guard band and
    /// prediction too (before: its degenerate planes rejected nothing, and every texture asked
    /// for level 0 over the whole screen).
    #[test]
    fn a_degenerate_camera_sees_nothing() {
        let good = Camera::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO);
        let mut bad = Vec::new();
        for fov in [0.0, std::f32::consts::PI, 4.0, f32::NAN] {
            bad.push(Camera { fov_y: fov, ..good });
        }
        bad.push(Camera {
            view: Mat4::ZERO,
            ..good
        });
        bad.push(Camera {
            view: Mat4::from_cols_array(&[f32::NAN; 16]),
            ..good
        });
        bad.push(Camera { near: 0.0, ..good });
        bad.push(Camera {
            near: 10.0,
            far: 1.0,
            ..good
        });
        let good_view = DemandView::new(&good, (640, 360));
        assert!(good_view.sphere(Vec3::ZERO, 1.0, 1.0, 1024.0).is_some());
        for cam in bad {
            let v = DemandView::new(&cam, (640, 360))
                .with_guard_band(2.0)
                .with_prediction(good.view, 4);
            for c in [
                Vec3::ZERO,
                Vec3::new(0.0, 0.0, 4.0),
                Vec3::new(50.0, 0.0, 0.0),
            ] {
                assert!(v.sphere(c, 1.0, 1.0, 1024.0).is_none(), "{cam:?} at {c}");
            }
        }
    }

    #[test]
    fn frustum_culls_behind_the_camera() {
        let cam = Camera::look_at(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0));
        let v = DemandView::new(&cam, (100, 100));
        assert_eq!(v.weight(Vec3::new(0.0, 0.0, -10.0), 1.0), Some(1.0));
        assert_eq!(v.weight(Vec3::new(0.0, 0.0, 10.0), 1.0), None);
        assert_eq!(v.weight(Vec3::new(100.0, 0.0, -10.0), 1.0), None);
        assert_eq!(
            v.weight(Vec3::new(0.0, 0.0, 0.5), 1.0),
            Some(1.0),
            "camera inside the sphere"
        );
        // A radius below 0: the centre at least that far inside every plane.
        assert_eq!(v.weight(Vec3::new(0.0, 0.0, -10.0), -0.5), Some(1.0));
        assert_eq!(v.weight(Vec3::new(9.5, 0.0, -10.0), -1.0), None);
    }

    #[test]
    fn demand_follows_distance_and_frusta() {
        let cam = Camera::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO);
        let v = DemandView::new(&cam, (1024, 1024));
        let near = v.sphere(Vec3::ZERO, 1.0, 1.0, 1024.0).unwrap();
        let far = v
            .sphere(Vec3::new(0.0, 0.0, -4.0), 1.0, 1.0, 1024.0)
            .unwrap();
        // Nearest points at 4 and 8 units: one level apart.
        assert!(
            (far.level - near.level - 1.0).abs() < 1e-3,
            "{near:?} {far:?}"
        );
        assert!(near.pixels > far.pixels);
        // Beside the view (53 degrees off its axis): only in the guard band.
        let beside = Vec3::new(4.0, 0.0, 2.0);
        assert!(v.sphere(beside, 0.5, 1.0, 1024.0).is_none());
        let g = v.with_guard_band(2.5);
        let d = g.sphere(beside, 0.5, 1.0, 1024.0).unwrap();
        assert_eq!(d.weight, GUARD_BAND_WEIGHT);
        assert!(v.sphere(Vec3::NAN, 1.0, 1.0, 1.0).is_none());
        // Turning right: the look-ahead sees what is on the right first.
        let prev = Camera::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::new(-0.3, 0.0, 0.0));
        let a = v.with_look_ahead(prev.view);
        let right = Vec3::new(5.0, 0.0, 0.0);
        assert!(v.sphere(right, 0.5, 1.0, 1.0).is_none());
        assert_eq!(
            a.sphere(right, 0.5, 1.0, 1.0).unwrap().weight,
            LOOK_AHEAD_WEIGHT
        );
    }

    /// `sphere` against the plain reading of its contract: each frustum tested, every predicted
    /// view that holds the sphere priced at its own eye, the finest level kept. The shortcuts
    /// (one distance and one logarithm for every predicted view, none when no predicted eye is
    /// nearer, no look-ahead test once a predicted view holds the sphere) give the same bits.
    #[test]
    fn sphere_matches_a_level_per_predicted_view() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut unit = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let out = (1280, 720);
        let (mut predicted_finer, mut leaving, mut checked) = (0, 0, 0);
        for _ in 0..200 {
            let eye = Vec3::new(unit() * 20.0 - 10.0, 1.6, unit() * 20.0 - 10.0);
            let at = eye + Vec3::new(unit() - 0.5, unit() * 0.4 - 0.2, unit() - 0.5);
            let now = Camera::look_at(eye, at);
            // The previous frame: up to 3 units behind, turned a little.
            let back = Vec3::new(unit() - 0.5, 0.0, unit() - 0.5) * 6.0;
            let prev = Camera::look_at(eye + back, at + back * (0.8 + unit() * 0.4));
            let v = DemandView::new(&now, out)
                .with_guard_band(2.0)
                .with_prediction(prev.view, 1 + (unit() * 4.0) as u32);
            for _ in 0..50 {
                let c = eye + Vec3::new(unit() - 0.5, unit() - 0.5, unit() - 0.5) * 60.0;
                let r = unit() * 3.0;
                let texels = 64.0 + unit() * 4096.0;
                let got = v.sphere(c, r, 1.0, texels);
                // The reference.
                let price =
                    |e: Vec3| demand_at(e, c, r, texels, v.tan_half_fov, v.near, v.viewport_height);
                let mut pred = f32::INFINITY;
                let mut in_pred = false;
                for (f, e) in &v.predicted[..v.predicted_count as usize] {
                    if f.touches(c, r) {
                        pred = pred.min(price(*e).0);
                        in_pred = true;
                    }
                }
                let in_ahead = v.ahead.is_some_and(|a| a.touches(c, r));
                let weight = if v.view.touches(c, r) {
                    Some(1.0)
                } else if in_ahead || in_pred {
                    Some(LOOK_AHEAD_WEIGHT)
                } else if v.guard.is_some_and(|g| g.touches(c, r)) {
                    Some(GUARD_BAND_WEIGHT)
                } else {
                    None
                };
                let want = weight.map(|w| {
                    let (now_level, pixels) = price(v.eye);
                    Demand {
                        level: now_level.min(pred),
                        now_level,
                        leaving: v.predicted_count > 0 && !(in_ahead || in_pred),
                        pixels: pixels * w,
                        weight: w,
                    }
                });
                assert_eq!(
                    got.map(|d| d.level.to_bits()),
                    want.map(|d| d.level.to_bits())
                );
                assert_eq!(got, want);
                if let Some(d) = got {
                    checked += 1;
                    predicted_finer += usize::from(d.level < d.now_level);
                    leaving += usize::from(d.leaving);
                }
            }
        }
        // The comparison saw each case: demands, predicted levels finer than now, leaving ones.
        assert!(
            checked > 1000 && predicted_finer > 100 && leaving > 20,
            "{checked} {predicted_finer} {leaving}"
        );
    }

    #[test]
    fn prediction_asks_for_what_the_camera_approaches() {
        // Flying down -z at 6 units a frame; a panel 40 units ahead.
        let now = Camera::look_at(Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 0.0, -1.0));
        let prev = Camera::look_at(Vec3::new(0.0, 0.0, 6.0), Vec3::new(0.0, 0.0, -5.0));
        let out = (640, 360);
        let panel = Vec3::new(0.0, 0.0, -40.0);
        let still = DemandView::new(&now, out)
            .sphere(panel, 1.0, 1.0, 512.0)
            .unwrap();
        let v = DemandView::new(&now, out).with_prediction(prev.view, 3);
        assert_eq!(v.predicted_frames(), 3);
        let d = v.sphere(panel, 1.0, 1.0, 512.0).unwrap();
        // Three frames on the nearest point is 21 units away instead of 39: about 0.9 octave.
        let expected = (39.0f32 / 21.0).log2();
        assert!(
            (still.level - d.level - expected).abs() < 1e-3,
            "{still:?} {d:?}"
        );
        assert_eq!(d.now_level, still.level);
        assert_eq!(d.pixels, still.pixels, "the weights are the current view's");
        assert!(!d.leaving);
        // A panel beside the camera, about to pass behind it: on screen now, in no later view.
        let beside = Vec3::new(-1.5, 0.0, -2.0);
        let b = v.sphere(beside, 0.5, 1.0, 512.0).unwrap();
        assert_eq!(b.weight, 1.0);
        assert!(b.leaving && b.level == b.now_level, "{b:?}");
        // A still camera predicts nothing: nothing is leaving.
        let s = DemandView::new(&now, out).with_prediction(now.view, 3);
        assert_eq!(s.predicted_frames(), 0);
        assert!(!s.sphere(beside, 0.5, 1.0, 512.0).unwrap().leaving);
        // At most MAX_PREDICTED_FRAMES.
        let far = DemandView::new(&now, out).with_prediction(prev.view, 100);
        assert_eq!(far.predicted_frames(), MAX_PREDICTED_FRAMES);
    }

    #[test]
    fn from_view_proj_matches_the_camera_and_takes_game_projections() {
        let cam = Camera::look_at(Vec3::new(0.3, 0.2, 5.0), Vec3::ZERO);
        let out = (1280, 720);
        let aspect = 1280.0 / 720.0;
        let a = DemandView::new(&cam, out);
        let b = DemandView::from_view_proj(cam.view, cam.projection(aspect), out);
        // Reversed depth with an infinite far plane, and an infinite far plane alone.
        let rev = glam::camera::rh::proj::directx::perspective_infinite_reverse(
            cam.fov_y, aspect, cam.near,
        );
        let c = DemandView::from_view_proj(cam.view, rev, out);
        let inf =
            glam::camera::rh::proj::directx::perspective_infinite(cam.fov_y, aspect, cam.near);
        let d = DemandView::from_view_proj(cam.view, inf, out);
        for centre in [
            Vec3::ZERO,
            Vec3::new(1.0, 0.5, -3.0),
            Vec3::new(0.0, 0.0, 4.96),
        ] {
            let want = a.sphere(centre, 0.5, 2.0, 512.0).unwrap();
            for (name, v) in [("same", b), ("reverse", c), ("infinite", d)] {
                let got = v.sphere(centre, 0.5, 2.0, 512.0).unwrap();
                assert!(
                    (got.level - want.level).abs() < 1e-3,
                    "{name} {centre}: {got:?} {want:?}"
                );
                assert!(
                    (got.pixels - want.pixels).abs() <= want.pixels * 1e-3,
                    "{name}"
                );
            }
        }
        // Behind the camera: outside with every projection.
        for v in [b, c, d] {
            assert!(
                v.sphere(Vec3::new(0.0, 0.0, 9.0), 0.5, 1.0, 512.0)
                    .is_none()
            );
        }
        // The guard band and the prediction come from the matrices alone.
        let beside = Vec3::new(6.0, 0.0, 0.0);
        let g = DemandView::from_view_proj(cam.view, rev, out).with_guard_band(2.5);
        assert!(c.sphere(beside, 0.5, 1.0, 512.0).is_none());
        assert_eq!(
            g.sphere(beside, 0.5, 1.0, 512.0).unwrap().weight,
            GUARD_BAND_WEIGHT
        );
        let prev = Camera::look_at(Vec3::new(0.3, 0.2, 6.0), Vec3::new(0.0, 0.0, 1.0));
        assert!(c.with_prediction(prev.view, 3).predicted_frames() > 0);
        // Not a perspective projection, or a flat view: nothing is in view.
        let ortho = glam::camera::rh::proj::directx::orthographic(-1.0, 1.0, -1.0, 1.0, 0.1, 10.0);
        let flat = glam::Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0));
        for v in [
            DemandView::from_view_proj(cam.view, glam::Mat4::ZERO, out),
            DemandView::from_view_proj(cam.view, glam::Mat4::NAN, out),
            DemandView::from_view_proj(flat, rev, out),
            DemandView::from_view_proj(cam.view, ortho, out),
        ] {
            assert!(v.sphere(Vec3::ZERO, 1.0, 1.0, 512.0).is_none(), "{v:?}");
        }
    }
}
