//! The render world's side: each streamed image's `GpuImage` points at mipflow's texture and
//! view, swapped after Bevy prepares its images and before it prepares the materials.

use std::collections::HashMap;

use bevy_app::App;
use bevy_asset::AssetId;
use bevy_ecs::prelude::*;
use bevy_image::Image;
use bevy_render::erased_render_asset::prepare_erased_assets;
use bevy_render::render_asset::{RenderAssets, prepare_assets};
use bevy_render::render_resource::{Texture, TextureView};
use bevy_render::texture::GpuImage;
use bevy_render::{Render, RenderApp, RenderSystems};

use crate::StreamedMaterial;
use crate::material::Component3d;

/// What the main world sends the render world.
pub(crate) enum Message {
    /// A streamed image's new texture.
    Swap(Swap),
    /// A streamed image was removed.
    Forget(AssetId<Image>),
    /// The manager of a `Mipflow` resource that was dropped: kept until the render world goes,
    /// after its last frame, so that no frame draws with a destroyed texture.
    Retire(Box<mipflow::BudgetManager>),
}

/// A streamed image's new texture, sent by the main world's frame.
pub(crate) struct Swap {
    id: AssetId<Image>,
    texture: Texture,
    view: TextureView,
}

impl Swap {
    pub(crate) fn new(
        id: AssetId<Image>,
        texture: &mipflow::wgpu::Texture,
        view: &mipflow::wgpu::TextureView,
    ) -> Self {
        Self {
            id,
            texture: Texture::from(texture.clone()),
            view: TextureView::from(view.clone()),
        }
    }
}

/// The set the swap runs in, ordered before each streamed material's preparation.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SwapSet;

/// The render world's current texture of each streamed image.
#[derive(Resource)]
struct Swaps {
    incoming: crossbeam_channel::Receiver<Message>,
    current: HashMap<AssetId<Image>, Swap>,
    retired: Vec<bevy_platform::cell::SyncCell<Box<mipflow::BudgetManager>>>,
}

pub(crate) fn build(app: &mut App, incoming: crossbeam_channel::Receiver<Message>) {
    let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
        return;
    };
    render_app.insert_resource(Swaps {
        incoming,
        current: HashMap::new(),
        retired: Vec::new(),
    });
    render_app.configure_sets(
        Render,
        SwapSet
            .in_set(RenderSystems::PrepareAssets)
            .after(prepare_assets::<GpuImage>),
    );
    render_app.add_systems(Render, swap_gpu_images.in_set(SwapSet));
}

/// Orders the swap before material `M`'s preparation, so that its bind group takes the new view.
pub(crate) fn order_before_material<M: StreamedMaterial>(app: &mut App)
where
    M::Data: PartialEq + Eq + std::hash::Hash + Clone,
{
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app.configure_sets(
            Render,
            SwapSet.before(prepare_erased_assets::<Component3d<M>>),
        );
    }
}

/// Takes the swaps sent since the last frame, and points each streamed image's `GpuImage` at
/// its current texture (again, where Bevy prepared the image anew).
fn swap_gpu_images(mut swaps: ResMut<Swaps>, mut images: ResMut<RenderAssets<GpuImage>>) {
    let swaps = &mut *swaps;
    while let Ok(m) = swaps.incoming.try_recv() {
        match m {
            Message::Swap(s) => {
                swaps.current.insert(s.id, s);
            }
            Message::Forget(id) => {
                swaps.current.remove(&id);
            }
            Message::Retire(m) => swaps.retired.push(bevy_platform::cell::SyncCell::new(m)),
        }
    }
    for (id, s) in &swaps.current {
        let Some(gpu) = images.get_mut(*id) else {
            continue;
        };
        if gpu.texture_view.id() == s.view.id() {
            continue;
        }
        gpu.texture = s.texture.clone();
        gpu.texture_view = s.view.clone();
        gpu.texture_descriptor.size = s.texture.size();
        gpu.texture_descriptor.mip_level_count = s.texture.mip_level_count();
        gpu.texture_descriptor.format = s.texture.format();
        gpu.texture_descriptor.usage = s.texture.usage();
        gpu.texture_view_descriptor = None;
        gpu.had_data = true;
    }
}
