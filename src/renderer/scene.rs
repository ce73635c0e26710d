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
    /// A base colour streamed tile by tile instead ([`crate::Renderer::add_virtual_texture`]):
    /// then `base_color` is unused, and the texture is sampled through `vt_sample`.
    pub virtual_texture: Option<crate::VtId>,
}

impl MaterialDesc {
    /// A material with this base colour, not repeated.
    pub fn new(base_color: TextureHandle) -> Self {
        Self {
            base_color,
            uv_scale: 1.0,
            virtual_texture: None,
        }
    }

    /// A material whose base colour is a virtual texture (streamed tile by tile), not repeated.
    pub fn virtual_texture(texture: crate::VtId) -> Self {
        Self {
            base_color: TextureHandle::default(),
            uv_scale: 1.0,
            virtual_texture: Some(texture),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let (v, i) = super::super::quad_xz();
        let (c, r, d) = Mesh::measure(&v, &i);
        assert!(c.length() < 1e-6);
        assert!((r - 0.5f32.sqrt()).abs() < 1e-5);
        assert!(
            (d - 1.0).abs() < 1e-5,
            "unit quad, UVs 0..1: 1 UV unit per world unit"
        );
    }
}
