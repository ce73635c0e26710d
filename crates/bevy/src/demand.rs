//! Demand from the Bevy world: visible entities, their bounds and their meshes' UV density,
//! through every active 3D camera.

use std::collections::HashMap;

use bevy_asset::{AssetId, Assets};
use bevy_camera::primitives::Aabb;
use bevy_camera::visibility::ViewVisibility;
use bevy_camera::{Camera, Camera3d};
use bevy_ecs::prelude::*;
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology, VertexAttributeValues};
use bevy_pbr::MeshMaterial3d;
use bevy_transform::components::GlobalTransform;
use mipflow::DemandView;
use mipflow::glam as mg;

use crate::{Mipflow, StreamedMaterial};

/// The frame's views and what is kept between frames.
#[derive(Default)]
pub(crate) struct DemandState {
    /// This frame's views, one per active 3D camera.
    views: Vec<DemandView>,
    /// Each camera's view matrix last frame (the moving-camera prediction).
    previous: HashMap<Entity, mg::Mat4>,
    /// UV units per mesh unit, per mesh (computed once).
    density: HashMap<AssetId<Mesh>, f32>,
}

fn to_mat4(m: bevy_math::Mat4) -> mg::Mat4 {
    mg::Mat4::from_cols_array(&m.to_cols_array())
}

fn to_vec3(v: bevy_math::Vec3) -> mg::Vec3 {
    mg::Vec3::from_array(v.to_array())
}

/// The frame's views: every active 3D camera, its view and projection (Bevy's infinite
/// reversed-depth perspective), with the look-ahead of its motion since the last frame.
pub(crate) fn begin_demand(
    mipflow: Option<ResMut<Mipflow>>,
    cameras: Query<(Entity, &Camera, &GlobalTransform), With<Camera3d>>,
) {
    let Some(mut mipflow) = mipflow else {
        return;
    };
    let state = &mut mipflow.demand;
    state.views.clear();
    for (entity, camera, transform) in &cameras {
        let Some(size) = camera.physical_viewport_size().filter(|_| camera.is_active) else {
            continue;
        };
        let view = to_mat4(bevy_math::Mat4::from(transform.affine().inverse()));
        let projection = to_mat4(camera.clip_from_view());
        let mut demand = DemandView::from_view_proj(view, projection, (size.x, size.y));
        if let Some(previous) = state.previous.insert(entity, view) {
            demand = demand.with_look_ahead(previous);
        }
        state.views.push(demand);
    }
    if state.previous.len() > 4 * state.views.len().max(1) {
        // Cameras despawned: forget their views (rare, not per frame).
        let live: Vec<Entity> = cameras.iter().map(|(e, _, _)| e).collect();
        state.previous.retain(|e, _| live.contains(e));
    }
}

/// Demand of every visible entity whose material `M` samples a streamed image.
pub(crate) fn gather<M: StreamedMaterial>(
    mipflow: Option<ResMut<Mipflow>>,
    materials: Res<Assets<M>>,
    meshes: Res<Assets<Mesh>>,
    entities: Query<(
        &Mesh3d,
        &MeshMaterial3d<M>,
        &ViewVisibility,
        &Aabb,
        &GlobalTransform,
    )>,
) {
    let Some(mut mipflow) = mipflow else {
        return;
    };
    let mipflow = &mut *mipflow;
    if mipflow.demand.views.is_empty() || mipflow.images.is_empty() {
        return;
    }
    for (mesh, material, visibility, aabb, transform) in &entities {
        if !visibility.get() {
            continue;
        }
        let Some(material) = materials.get(&material.0) else {
            continue;
        };
        let state = &mut mipflow.demand;
        let density = match state.density.get(&mesh.0.id()) {
            Some(d) => *d,
            None => match meshes.get(&mesh.0) {
                Some(m) => *state
                    .density
                    .entry(mesh.0.id())
                    .or_insert(uv_density(Some(m), aabb)),
                None => uv_density(None, aabb),
            },
        };
        let scale = transform.compute_transform().scale.abs().max_element();
        if scale <= 0.0 || !scale.is_finite() {
            continue;
        }
        let center = to_vec3(transform.transform_point(aabb.center.into()));
        let radius = (bevy_math::Vec3::from(aabb.half_extents) * scale).length();
        let uv_per_unit = density / scale;
        let Some(manager) = mipflow.manager.get().as_mut() else {
            return;
        };
        let images = &mipflow.images;
        let views = &mipflow.demand.views;
        material.for_each_image(&mut |image| {
            if let Some(s) = images.get(&image) {
                for view in views {
                    manager.add_demand_sphere(s.texture, view, center, radius, uv_per_unit);
                }
            }
        });
    }
}

/// UV units per mesh unit: the square root of the mesh's UV area over its surface area (a
/// 2x2 quad mapped once is 0.5). Without triangles, positions or UVs: the texture is taken to
/// span the bounds' largest side once.
fn uv_density(mesh: Option<&Mesh>, aabb: &Aabb) -> f32 {
    let fallback = 1.0 / (2.0 * aabb.half_extents.max_element()).max(1e-6);
    let Some(mesh) = mesh.filter(|m| m.primitive_topology() == PrimitiveTopology::TriangleList)
    else {
        return fallback;
    };
    let (
        Ok(Some(VertexAttributeValues::Float32x3(pos))),
        Ok(Some(VertexAttributeValues::Float32x2(uv))),
    ) = (
        mesh.try_attribute_option(Mesh::ATTRIBUTE_POSITION),
        mesh.try_attribute_option(Mesh::ATTRIBUTE_UV_0),
    )
    else {
        return fallback;
    };
    let mut area = 0.0f64;
    let mut uv_area = 0.0f64;
    let mut triangle = |a: usize, b: usize, c: usize| {
        let (Some(pa), Some(pb), Some(pc), Some(ta), Some(tb), Some(tc)) = (
            pos.get(a),
            pos.get(b),
            pos.get(c),
            uv.get(a),
            uv.get(b),
            uv.get(c),
        ) else {
            return;
        };
        let (pa, pb, pc) = (
            bevy_math::Vec3::from(*pa),
            bevy_math::Vec3::from(*pb),
            bevy_math::Vec3::from(*pc),
        );
        area += f64::from((pb - pa).cross(pc - pa).length() * 0.5);
        let (e1, e2) = (
            [tb[0] - ta[0], tb[1] - ta[1]],
            [tc[0] - ta[0], tc[1] - ta[1]],
        );
        uv_area += f64::from((e1[0] * e2[1] - e1[1] * e2[0]).abs() * 0.5);
    };
    match mesh.try_indices_option() {
        Ok(Some(Indices::U16(i))) => i
            .chunks_exact(3)
            .for_each(|t| triangle(t[0].into(), t[1].into(), t[2].into())),
        Ok(Some(Indices::U32(i))) => i
            .chunks_exact(3)
            .for_each(|t| triangle(t[0] as usize, t[1] as usize, t[2] as usize)),
        _ => (0..pos.len() / 3).for_each(|t| triangle(3 * t, 3 * t + 1, 3 * t + 2)),
    }
    if area <= 0.0 || uv_area <= 0.0 {
        return fallback;
    }
    (uv_area / area).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use bevy::prelude::{Cuboid, Rectangle};
    use bevy_math::Vec3;

    use super::*;

    fn aabb(mesh: &Mesh) -> Aabb {
        let Some(VertexAttributeValues::Float32x3(p)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION)
        else {
            panic!("positions");
        };
        let (lo, hi) = p.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), q| {
            (lo.min(Vec3::from(*q)), hi.max(Vec3::from(*q)))
        });
        Aabb::from_min_max(lo, hi)
    }

    #[test]
    fn uv_density_is_uv_units_per_mesh_unit() {
        // A 2x2 quad mapped once: half a UV unit per unit.
        let quad = Mesh::from(Rectangle::new(2.0, 2.0));
        assert!((uv_density(Some(&quad), &aabb(&quad)) - 0.5).abs() < 1e-5);
        // A 4x1 quad mapped once across: sqrt(1 / 4) = 0.5 as well (the mean of 0.25 and 1).
        let strip = Mesh::from(Rectangle::new(4.0, 1.0));
        assert!((uv_density(Some(&strip), &aabb(&strip)) - 0.5).abs() < 1e-5);
        // A unit cube, each face mapped once: one UV unit per unit.
        let cube = Mesh::from(Cuboid::new(1.0, 1.0, 1.0));
        assert!((uv_density(Some(&cube), &aabb(&cube)) - 1.0).abs() < 1e-4);
        // UVs repeated 8 times across the quad: 8 times as dense.
        let mut tiled = Mesh::from(Rectangle::new(2.0, 2.0));
        if let Some(VertexAttributeValues::Float32x2(uv)) =
            tiled.attribute_mut(Mesh::ATTRIBUTE_UV_0)
        {
            uv.iter_mut().for_each(|t| *t = [t[0] * 8.0, t[1] * 8.0]);
        }
        assert!((uv_density(Some(&tiled), &aabb(&tiled)) - 4.0).abs() < 1e-4);
        // No mesh (not loaded yet): the texture spans the bounds' largest side once.
        let bounds = Aabb::from_min_max(Vec3::ZERO, Vec3::new(4.0, 2.0, 0.0));
        assert!((uv_density(None, &bounds) - 0.25).abs() < 1e-6);
    }
}
