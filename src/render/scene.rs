//! The scene a game embeds: meshes, materials and instances behind generational handles, and the
//! visibility pass that turns them into each texture's wanted mip level.

use glam::{Mat4, Vec3};

use super::{GpuMesh, Vertex};
use crate::stream::TextureHandle;

/// A slab of values behind generational handles: a removed value's slot is reused with a new
/// generation, so an old handle fails softly (returns `None`) instead of naming the new value.
#[derive(Debug)]
pub(crate) struct Slab<T> {
    entries: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    pub(crate) fn insert(&mut self, value: T) -> (u32, u32) {
        match self.free.pop() {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                e.0 = e.0.wrapping_add(1);
                e.1 = Some(value);
                (i, e.0)
            }
            None => {
                self.entries.push((0, Some(value)));
                ((self.entries.len() - 1) as u32, 0)
            }
        }
    }

    pub(crate) fn get(&self, index: u32, generation: u32) -> Option<&T> {
        match self.entries.get(index as usize) {
            Some((g, Some(v))) if *g == generation => Some(v),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, index: u32, generation: u32) -> Option<&mut T> {
        match self.entries.get_mut(index as usize) {
            Some((g, Some(v))) if *g == generation => Some(v),
            _ => None,
        }
    }

    pub(crate) fn remove(&mut self, index: u32, generation: u32) -> Option<T> {
        match self.entries.get_mut(index as usize) {
            Some((g, v @ Some(_))) if *g == generation => {
                self.free.push(index);
                v.take()
            }
            _ => None,
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().filter_map(|(_, v)| v.as_ref())
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }
}

macro_rules! handle {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) index: u32,
            pub(crate) generation: u32,
        }
    };
}

handle!(
    /// A mesh added with `Renderer::add_mesh`.
    MeshHandle
);
handle!(
    /// A material added with `Renderer::add_material`.
    MaterialHandle
);
handle!(
    /// An instance added with `Renderer::add_instance`.
    InstanceHandle
);

/// A material: what a surface is drawn with. A basic lit material is enough: the product is
/// memory, not shading.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct MaterialDesc {
    /// The streamed base-colour texture.
    pub base_color: TextureHandle,
    /// How many times the texture repeats across the mesh's UV range 0..1 (1 = once; finite and
    /// above 0, or `add_material` refuses it). The Renderer's shader repeats the texture so, and
    /// its demand follows: a texture repeated 4 times over the same surface shows each texel
    /// 4 times smaller, so it wants levels 2 coarser.
    pub uv_scale: f32,
}

impl MaterialDesc {
    /// A material with this base colour, not repeated.
    pub fn new(base_color: TextureHandle) -> Self {
        Self {
            base_color,
            uv_scale: 1.0,
        }
    }
}

/// A mesh with what visibility needs: its bounding sphere and its UV density.
#[derive(Debug)]
pub(crate) struct Mesh {
    pub(crate) gpu: GpuMesh,
    pub(crate) center: Vec3,
    pub(crate) radius: f32,
    /// UV units per object-space unit (square root of UV area over surface area).
    pub(crate) uv_density: f32,
}

impl Mesh {
    /// Bounds and UV density of a vertex/index list.
    pub(crate) fn measure(vertices: &[Vertex], indices: &[u32]) -> (Vec3, f32, f32) {
        let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        for v in vertices {
            let p = Vec3::from(v.position);
            lo = lo.min(p);
            hi = hi.max(p);
        }
        let center = if vertices.is_empty() {
            Vec3::ZERO
        } else {
            (lo + hi) * 0.5
        };
        let radius = vertices
            .iter()
            .map(|v| Vec3::from(v.position).distance(center))
            .fold(0.0f32, f32::max);
        let (mut area, mut uv_area) = (0.0f64, 0.0f64);
        for t in indices.chunks_exact(3) {
            let (Some(a), Some(b), Some(c)) = (
                vertices.get(t[0] as usize),
                vertices.get(t[1] as usize),
                vertices.get(t[2] as usize),
            ) else {
                continue;
            };
            let (pa, pb, pc) = (
                Vec3::from(a.position),
                Vec3::from(b.position),
                Vec3::from(c.position),
            );
            area += f64::from((pb - pa).cross(pc - pa).length() * 0.5);
            let (ua, ub, uc) = (
                glam::Vec2::from(a.uv),
                glam::Vec2::from(b.uv),
                glam::Vec2::from(c.uv),
            );
            uv_area += f64::from(((ub - ua).perp_dot(uc - ua)).abs() * 0.5);
        }
        let density = if area > 0.0 {
            (uv_area / area).sqrt() as f32
        } else {
            0.0
        };
        (center, radius, density)
    }
}

#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) mesh: MeshHandle,
    pub(crate) material: MaterialHandle,
    pub(crate) transform: Mat4,
}

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
            view: super::look_at(eye, target, Vec3::Y),
            fov_y: 60f32.to_radians(),
            near: 0.1,
            far: 2000.0,
        }
    }

    /// The projection for an `aspect` (width / height) viewport.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        super::perspective(self.fov_y, aspect.max(1e-3), self.near, self.far)
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
    fn the_look_ahead_follows_a_curved_path() {
        // A camera going round a circle, 1.5 units a frame, turning 4 degrees a frame.
        let at = |f: f32| {
            let a = (4.0 * f).to_radians();
            let eye = Vec3::new(20.0 * a.cos(), 1.6, 20.0 * a.sin());
            let tangent = Vec3::new(-a.sin(), 0.0, a.cos());
            super::super::look_at(eye, eye + tangent, Vec3::Y)
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
    fn slab_handles_are_generational() {
        let mut s = Slab::default();
        let (a, ga) = s.insert("a");
        assert_eq!(s.get(a, ga), Some(&"a"));
        assert_eq!(s.remove(a, ga), Some("a"));
        assert_eq!(s.get(a, ga), None);
        let (b, gb) = s.insert("b");
        assert_eq!(b, a, "slot reused");
        assert_ne!(gb, ga);
        assert_eq!(s.get(a, ga), None, "stale handle fails softly");
        assert_eq!(s.remove(a, ga), None);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn quad_density_and_bounds() {
        let (v, i) = crate::render::quad_xz();
        let (c, r, d) = Mesh::measure(&v, &i);
        assert!(c.length() < 1e-6);
        assert!((r - 0.5f32.sqrt()).abs() < 1e-5);
        assert!(
            (d - 1.0).abs() < 1e-5,
            "unit quad, UVs 0..1: 1 UV unit per world unit"
        );
    }

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
