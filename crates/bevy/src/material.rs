//! Materials that sample streamed images: their demand, and their bind groups rebuilt when an
//! image's texture changes.

use std::marker::PhantomData;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_asset::{AssetEvent, AssetId, Assets};
use bevy_ecs::prelude::*;
use bevy_image::Image;
use bevy_pbr::{Material, MeshMaterial3d, StandardMaterial};

use crate::{Mipflow, MipflowSystems, demand, render};

/// A material whose images may be streamed: it names the images it samples. Implemented for
/// `StandardMaterial` (its base colour, normal, metallic-roughness, emissive and occlusion
/// textures); a custom material implements it and adds [`StreamedMaterialPlugin`].
pub trait StreamedMaterial: Material {
    /// Calls `f` with each image the material samples (streamed or not: mipflow skips the
    /// images it does not stream).
    fn for_each_image(&self, f: &mut dyn FnMut(AssetId<Image>));
}

impl StreamedMaterial for StandardMaterial {
    fn for_each_image(&self, f: &mut dyn FnMut(AssetId<Image>)) {
        for image in [
            &self.base_color_texture,
            &self.normal_map_texture,
            &self.metallic_roughness_texture,
            &self.emissive_texture,
            &self.occlusion_texture,
        ]
        .into_iter()
        .flatten()
        {
            f(image.id());
        }
    }
}

/// Streams the images of material `M`: demand from the visible entities that use it
/// (`MeshMaterial3d<M>`), and its bind groups rebuilt when one of its images changed.
/// `MipflowPlugin` adds it for `StandardMaterial`.
pub struct StreamedMaterialPlugin<M: StreamedMaterial>(PhantomData<M>);

impl<M: StreamedMaterial> Default for StreamedMaterialPlugin<M> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<M: StreamedMaterial> Plugin for StreamedMaterialPlugin<M>
where
    M::Data: PartialEq + Eq + std::hash::Hash + Clone,
{
    fn build(&self, app: &mut App) {
        app.add_systems(
            PostUpdate,
            (
                demand::gather::<M>.in_set(MipflowSystems::Demand),
                rebind::<M>.in_set(MipflowSystems::Rebind),
            ),
        );
        render::order_before_material::<M>(app);
    }
}

/// Marks modified every material of type `M` that uses an image whose texture changed this
/// frame: its bind group is prepared again (from the render world's swapped `GpuImage`) in this
/// frame's render. The message is written directly, not through `Assets::get_mut`, whose
/// events are flushed before visibility and so only in the next frame.
fn rebind<M: StreamedMaterial>(
    mipflow: Option<Res<Mipflow>>,
    materials: Res<Assets<M>>,
    mut events: MessageWriter<AssetEvent<M>>,
) {
    let Some(mipflow) = mipflow else {
        return;
    };
    if mipflow.changed.is_empty() {
        return;
    }
    for (id, material) in materials.iter() {
        let mut uses = false;
        material.for_each_image(&mut |image| uses |= mipflow.changed.contains(&image));
        if uses {
            events.write(AssetEvent::Modified { id });
        }
    }
}

/// The `MeshMaterial3d<M>` component type, for the render world's system ordering.
pub(crate) type Component3d<M> = MeshMaterial3d<M>;
