//! mipflow in a Bevy app: Bevy's images streamed mip level by mip level under one VRAM budget.
//!
//! Bevy (0.20) has no texture streaming: its KTX2 loader uploads every level of a file at once.
//! [`MipflowPlugin`] puts a [`mipflow::BudgetManager`] on Bevy's own render device and queue,
//! and [`Mipflow::add_image`] turns a KTX2 file into an ordinary `Handle<Image>` that
//! `StandardMaterial` (or a custom material, see [`StreamedMaterial`]) samples. Each frame:
//!
//! 1. **Demand** from the Bevy world: every visible entity whose material uses a streamed image
//!    gives demand through every active 3D camera, from its `Aabb`, `GlobalTransform` and the UV
//!    density of its mesh (computed once per mesh), with the moving-camera prediction.
//! 2. **One budget**: Bevy's own GPU allocations (meshes, its render targets, its other images)
//!    are measured from wgpu's allocator report and charged as fixed bytes, so the budget
//!    covers the whole device.
//! 3. **Swaps**: when an image's texture changes (a level streamed in, or evicted), the render
//!    world's `GpuImage` gets the new texture and view, and every material that uses the image
//!    is re-prepared by an `AssetEvent::Modified` of the material (its bind group is rebuilt
//!    from the next frame on; a replaced texture is kept alive for the frames in flight).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use mipflow_bevy::{Mipflow, MipflowPlugin};
//!
//! fn setup(
//!     mut commands: Commands,
//!     mut mipflow: ResMut<Mipflow>,
//!     mut images: ResMut<Assets<Image>>,
//!     mut meshes: ResMut<Assets<Mesh>>,
//!     mut materials: ResMut<Assets<StandardMaterial>>,
//! ) {
//!     let wall = mipflow.load(&mut images, "assets/brick.ktx2").expect("a KTX2 file");
//!     commands.spawn((
//!         Mesh3d(meshes.add(Rectangle::new(2.0, 2.0))),
//!         MeshMaterial3d(materials.add(StandardMaterial::from(wall))),
//!     ));
//!     commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 0.0, 3.0)));
//! }
//!
//! App::new()
//!     .add_plugins((DefaultPlugins, MipflowPlugin::with_budget(mipflow::Budget::bytes(256 << 20))))
//!     .add_systems(Startup, setup)
//!     .run();
//! ```

#![warn(missing_docs)]

mod demand;
mod material;
mod render;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bevy_app::{App, Plugin, PostUpdate};
use bevy_asset::{AssetEvent, AssetId, Assets, Handle, RenderAssetUsages};
use bevy_camera::visibility::VisibilitySystems;
use bevy_ecs::prelude::*;
use bevy_image::{Image, ImageAddressMode, ImageSampler, ImageSamplerDescriptor};
use bevy_render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use bevy_render::renderer::{RenderAdapter, RenderDevice, RenderQueue};
use mipflow::{
    Budget, BudgetManager, Category, Charge, FrameStats, FrameTiming, ManagerConfig, TextureHandle,
    TextureOptions, TextureSource,
};

pub use material::{StreamedMaterial, StreamedMaterialPlugin};
pub use mipflow;

/// Frames a replaced texture is kept alive by default: Bevy's pipelined rendering records
/// frame N while frame N+1 is planned, and a material's bind group is rebuilt one frame after
/// its image changed.
pub const KEEP_REPLACED_FRAMES: u32 = 3;

/// The plugin: a [`Mipflow`] resource on Bevy's device, the demand, frame and swap systems, and
/// [`StandardMaterial`](bevy_pbr::StandardMaterial) as a streamed material. Add
/// [`StreamedMaterialPlugin`] for each custom material that samples streamed images.
#[derive(Clone, Debug)]
pub struct MipflowPlugin {
    /// The manager's settings. The plugin makes no render targets of its own
    /// (`render_targets` is forced off: Bevy keeps its view targets, counted as fixed bytes),
    /// and keeps replaced textures [`KEEP_REPLACED_FRAMES`] frames unless this asks for more.
    pub config: ManagerConfig,
    /// How often Bevy's own GPU bytes are measured (default 250 ms): wgpu's allocator report
    /// walks every allocation.
    pub measure_every: Duration,
}

impl Default for MipflowPlugin {
    fn default() -> Self {
        Self {
            config: ManagerConfig::default(),
            measure_every: Duration::from_millis(250),
        }
    }
}

impl MipflowPlugin {
    /// The plugin with `budget` for the whole device (Bevy's bytes and mipflow's).
    pub fn with_budget(budget: Budget) -> Self {
        let mut p = Self::default();
        p.config.budget = budget;
        p
    }
}

/// The order of the plugin's systems in `PostUpdate`, after visibility and transforms are final.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MipflowSystems {
    /// Each streamed material's demand from the visible entities ([`StreamedMaterialPlugin`]).
    Demand,
    /// The plan, the uploads, Bevy's fixed bytes and the list of images whose texture changed.
    Frame,
    /// The materials that use a changed image are marked modified.
    Rebind,
}

impl Plugin for MipflowPlugin {
    fn build(&self, app: &mut App) {
        let (tx, rx) = crossbeam_channel::unbounded();
        app.insert_resource(PluginSettings {
            config: self.config.clone(),
            measure_every: self.measure_every,
            swaps: tx,
        });
        app.configure_sets(
            PostUpdate,
            (
                MipflowSystems::Demand,
                MipflowSystems::Frame,
                MipflowSystems::Rebind,
            )
                .chain()
                .after(VisibilitySystems::MarkNewlyHiddenEntitiesInvisible),
        );
        app.add_systems(
            PostUpdate,
            (
                demand::begin_demand.before(MipflowSystems::Demand),
                frame.in_set(MipflowSystems::Frame),
            ),
        );
        render::build(app, rx);
        app.add_plugins(StreamedMaterialPlugin::<bevy_pbr::StandardMaterial>::default());
    }

    fn finish(&self, app: &mut App) {
        let world = app.world();
        let (Some(device), Some(queue), Some(adapter)) = (
            world.get_resource::<RenderDevice>(),
            world.get_resource::<RenderQueue>(),
            world.get_resource::<RenderAdapter>(),
        ) else {
            tracing::error!(
                "mipflow: no render device (is the RenderPlugin added?): not streaming"
            );
            return;
        };
        let device = device.wgpu_device().clone();
        let queue: mipflow::wgpu::Queue = (**queue).clone();
        let adapter: mipflow::wgpu::Adapter = (**adapter).clone();
        let settings = world.resource::<PluginSettings>();
        match Mipflow::new(adapter, device, queue, settings) {
            Ok(m) => {
                app.insert_resource(m);
            }
            Err(e) => {
                tracing::error!(error = %e, "mipflow: the budget manager failed: not streaming")
            }
        }
    }
}

#[derive(Resource)]
struct PluginSettings {
    config: ManagerConfig,
    measure_every: Duration,
    swaps: crossbeam_channel::Sender<render::Message>,
}

/// One streamed image.
struct Streamed {
    texture: TextureHandle,
    /// The view version the render world was last sent (`None`: none yet).
    sent: Option<u64>,
}

/// The budget manager on Bevy's device, and the streamed images (a resource of the main world).
#[derive(Resource)]
pub struct Mipflow {
    /// `None` only once dropped (sent to the render world, see `Drop`).
    manager: bevy_platform::cell::SyncCell<Option<BudgetManager>>,
    images: HashMap<AssetId<Image>, Streamed>,
    swaps: crossbeam_channel::Sender<render::Message>,
    /// Images whose texture changed this frame: their materials are marked modified.
    changed: Vec<AssetId<Image>>,
    /// Bevy's own bytes on the device, charged as fixed.
    bevy_charge: Option<Charge>,
    measured_at: Option<Instant>,
    measure_every: Duration,
    stats: Option<FrameStats>,
    demand: demand::DemandState,
}

impl Mipflow {
    fn new(
        adapter: mipflow::wgpu::Adapter,
        device: mipflow::wgpu::Device,
        queue: mipflow::wgpu::Queue,
        settings: &PluginSettings,
    ) -> mipflow::Result<Self> {
        let mut config = settings.config.clone();
        config.render_targets = false;
        config.stream.keep_replaced_frames =
            config.stream.keep_replaced_frames.max(KEEP_REPLACED_FRAMES);
        let manager = BudgetManager::with_adapter(adapter, device, queue, config)?;
        Ok(Self {
            manager: bevy_platform::cell::SyncCell::new(Some(manager)),
            images: HashMap::new(),
            swaps: settings.swaps.clone(),
            changed: Vec::new(),
            bevy_charge: None,
            measured_at: None,
            measure_every: settings.measure_every,
            stats: None,
            demand: demand::DemandState::default(),
        })
    }

    /// The budget manager (its stats, its streamer, its ledger).
    pub fn manager(&mut self) -> &mut BudgetManager {
        self.manager
            .get()
            .as_mut()
            .expect("the manager is taken only when the resource is dropped")
    }

    /// Streams the KTX2 file at `path`: a `Handle<Image>` for any material. See
    /// [`Mipflow::add_image`].
    pub fn load(
        &mut self,
        images: &mut Assets<Image>,
        path: impl Into<PathBuf>,
    ) -> mipflow::Result<Handle<Image>> {
        self.add_image(images, TextureSource::path(path), TextureOptions::default())
    }

    /// Streams a KTX2 texture (a file, bytes, or the game's own reader): its header and floor
    /// are read now, its levels as the view asks for them. The image is a 1x1 placeholder on
    /// the main world (no CPU pixels: `RenderAssetUsages::RENDER_WORLD`) whose GPU texture is
    /// mipflow's from its first frame, sampled with trilinear filtering and repeat addressing.
    /// Dropping every handle to it removes the texture.
    pub fn add_image(
        &mut self,
        images: &mut Assets<Image>,
        source: TextureSource,
        opts: TextureOptions,
    ) -> mipflow::Result<Handle<Image>> {
        let texture = self.manager().add_texture(source, opts)?;
        Ok(self.insert_image(images, texture))
    }

    /// A KTX2 texture made fully resident now, every level, and never streamed (a UI texture, a
    /// reference to compare streaming with). Charged to the same budget.
    pub fn add_resident_image(
        &mut self,
        images: &mut Assets<Image>,
        source: TextureSource,
    ) -> mipflow::Result<Handle<Image>> {
        let m = self.manager();
        let limits = mipflow::ktx2::ReadLimits::default();
        let tex = mipflow::low_level::load_resident(m.context(), &source, &limits)?;
        let texture = m.add_resident_texture(tex, &source.describe());
        Ok(self.insert_image(images, texture))
    }

    fn insert_image(
        &mut self,
        images: &mut Assets<Image>,
        texture: TextureHandle,
    ) -> Handle<Image> {
        let mut image = Image::new_fill(
            Extent3d {
                width: 1,
                height: 1,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            &[128, 128, 128, 255],
            TextureFormat::Rgba8UnormSrgb,
            RenderAssetUsages::RENDER_WORLD,
        );
        image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor {
            address_mode_u: ImageAddressMode::Repeat,
            address_mode_v: ImageAddressMode::Repeat,
            ..ImageSamplerDescriptor::linear()
        });
        let handle = images.add(image);
        self.images.insert(
            handle.id(),
            Streamed {
                texture,
                sent: None,
            },
        );
        handle
    }

    /// The mipflow texture behind a streamed image.
    pub fn texture(&self, image: impl Into<AssetId<Image>>) -> Option<TextureHandle> {
        self.images.get(&image.into()).map(|s| s.texture)
    }

    /// The streamed images.
    pub fn images(&self) -> impl Iterator<Item = (AssetId<Image>, TextureHandle)> + '_ {
        self.images.iter().map(|(id, s)| (*id, s.texture))
    }

    /// How often Bevy's own bytes are measured from now on (`Duration::MAX`: keep the last
    /// measurement, as a test that wants a fixed figure does).
    pub fn set_measure_every(&mut self, every: Duration) {
        self.measure_every = every;
    }

    /// Sets the budget for the whole device (Bevy's bytes included).
    pub fn set_budget(&mut self, budget: Budget) {
        self.manager().set_budget(budget);
    }

    /// The last frame's figures (the ledger per category, the plan, streaming), `None` before
    /// the first frame. Bevy's own bytes are in the `other` category
    /// ([`Mipflow::bevy_bytes`]).
    pub fn stats(&self) -> Option<&FrameStats> {
        self.stats.as_ref()
    }

    /// Bevy's own GPU bytes as last measured (allocator total less mipflow's ledger), charged
    /// to the budget as fixed bytes.
    pub fn bevy_bytes(&self) -> u64 {
        self.bevy_charge.as_ref().map_or(0, Charge::bytes)
    }

    /// Measures Bevy's bytes now and charges them: the driver allocator's total less every
    /// byte on mipflow's ledger but this charge. Returns whether the backend gave a report
    /// (Vulkan, DX12); without one, Bevy's bytes stay unknown (0).
    pub fn measure_bevy_bytes(&mut self) -> bool {
        let ledger = self.manager().context().ledger().clone();
        let driver = self.manager().context().driver_memory();
        if driver.allocated == 0 {
            return false;
        }
        let own = self.bevy_charge.as_ref().map_or(0, Charge::bytes);
        let bevy = driver
            .allocated
            .saturating_sub(ledger.total_bytes().saturating_sub(own));
        if bevy != own {
            // The old charge goes first: both at once would be a peak of twice Bevy's bytes.
            self.bevy_charge = None;
            self.bevy_charge = Some(ledger.charge(Category::Other, bevy, "bevy"));
        }
        self.measured_at = Some(Instant::now());
        true
    }
}

impl Drop for Mipflow {
    /// The manager goes to the render world, dropped with it after its last frame: the main
    /// world is dropped while the render thread may still draw with the streamed textures.
    fn drop(&mut self) {
        // Bevy's charge goes first: the manager's context reports what is still charged.
        self.bevy_charge = None;
        if let Some(manager) = self.manager.get().take() {
            let _ = self.swaps.send(render::Message::Retire(Box::new(manager)));
        }
    }
}

/// The frame: Bevy's bytes (every `measure_every`), the plan and uploads, the images whose
/// texture changed sent to the render world.
fn frame(
    mipflow: Option<ResMut<Mipflow>>,
    mut image_events: MessageReader<AssetEvent<Image>>,
    cameras: Query<&bevy_camera::Camera>,
) {
    let Some(mut mipflow) = mipflow else {
        return;
    };
    let mipflow = &mut *mipflow;
    for e in image_events.read() {
        if let AssetEvent::Removed { id } | AssetEvent::Unused { id } = e
            && let Some(s) = mipflow.images.remove(id)
        {
            mipflow.manager().remove_texture(s.texture);
            let _ = mipflow.swaps.send(render::Message::Forget(*id));
        }
    }
    if mipflow
        .measured_at
        .is_none_or(|t| t.elapsed() >= mipflow.measure_every)
    {
        mipflow.measure_bevy_bytes();
    }
    // The output: the largest active camera's viewport.
    let output = cameras
        .iter()
        .filter(|c| c.is_active)
        .filter_map(|c| c.physical_viewport_size())
        .fold((1, 1), |(w, h), s| (w.max(s.x), h.max(s.y)));
    let Some(m) = mipflow.manager.get().as_mut() else {
        return;
    };
    let timing = FrameTiming::default();
    let plan = match m.frame(output, timing) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "mipflow frame failed");
            m.end_frame();
            return;
        }
    };
    m.end_frame();
    mipflow.stats = Some(m.frame_stats(&plan, timing));
    mipflow.changed.clear();
    for (id, s) in &mut mipflow.images {
        let Some((view, version)) = m.texture_view(s.texture) else {
            continue;
        };
        if s.sent == Some(version) {
            continue;
        }
        // Nothing resident (a budget too small even for the floors): the grey fallback, so that
        // no material keeps the view of a texture that is gone.
        let (texture, view) = match m.streamer().resident_texture(s.texture) {
            Some(t) => (t, view),
            None => match m.streamer().fallback() {
                Some(f) => f,
                None => continue,
            },
        };
        s.sent = Some(version);
        mipflow.changed.push(*id);
        // An unbounded channel to the render world: a send never blocks.
        let _ = mipflow
            .swaps
            .send(render::Message::Swap(render::Swap::new(*id, texture, view)));
    }
}
