//! # mipflow
//!
//! A VRAM budget manager for [wgpu]: it streams block-compressed KTX2 mip chains and scales the
//! render targets under **one budget**. Every byte placed on the GPU is charged to a
//! [`Ledger`] per [`Category`]; one planner spends the budget on whatever buys
//! the most image quality, texture mips or render-target resolution, and the total never passes
//! the budget, not even for one frame.
//!
//! ## Two ways in
//!
//! **1. The [`Renderer`]: mipflow draws.** Give it your device and queue, add meshes, streamed
//! textures, materials and instances, and render each frame into your own target view (a surface
//! texture or an offscreen texture). It runs the budget loop for you.
//!
//! ```no_run
//! use mipflow::{Budget, Camera, FrameInput, MaterialDesc, Renderer, RendererConfig, TextureOptions,
//!               TextureSource};
//! # fn frame(device: wgpu::Device, queue: wgpu::Queue, target: &wgpu::TextureView) -> mipflow::Result<()> {
//! let mut config = RendererConfig::default();
//! config.budget = Budget::bytes(256 << 20);
//! let mut renderer = Renderer::new(device, queue, config)?;
//! let (vertices, indices) = mipflow::panel(2.0, 2.0);
//! let mesh = renderer.add_mesh(&vertices, &indices)?;
//! let texture = renderer.add_texture(TextureSource::path("wall.ktx2"), TextureOptions::default())?;
//! let material = renderer.add_material(MaterialDesc::new(texture))?;
//! renderer.add_instance(mesh, material, glam::Mat4::IDENTITY)?;
//! let camera = Camera::look_at(glam::vec3(0.0, 0.0, 3.0), glam::Vec3::ZERO);
//! let stats = renderer.render(target, &FrameInput::new(camera))?;
//! println!("{} MiB of {}", stats.ledger.total_bytes >> 20, stats.budget_bytes >> 20);
//! # Ok(()) }
//! ```
//!
//! **2. The [`BudgetManager`] under your own renderer.** Your pipelines, materials and passes;
//! mipflow streams the textures, hands out their views (with a version that changes when a view
//! changes, so you rebuild your bind groups only then), takes your per-frame demand, and keeps
//! your render targets at the planned scale, all under the same budget.
//!
//! ```no_run
//! use mipflow::{BudgetManager, ManagerConfig, TextureOptions, TextureSource};
//! # fn frame(device: wgpu::Device, queue: wgpu::Queue) -> mipflow::Result<()> {
//! let mut manager = BudgetManager::new(device, queue, ManagerConfig::default())?;
//! let wall = manager.add_texture(TextureSource::path("wall.ktx2"), TextureOptions::default())?;
//! // Each frame: say what the view needs (a wanted level and the pixels it covers)...
//! manager.add_demand(wall, 0.0, 200_000.0);
//! // ...plan and stream, at this output size...
//! let plan = manager.frame((1280, 720), mipflow::FrameTiming::default())?;
//! // ...then draw with the views (rebuild a bind group when the version changed).
//! if let Some((view, version)) = manager.texture_view(wall) {
//!     let _ = (view, version, plan.mip_bias);
//! }
//! manager.end_frame();
//! # Ok(()) }
//! ```
//!
//! A whole frame under your own renderer (device, targets, demand, bind groups by version,
//! draw, `end_frame`, stats) is the runnable example on [`BudgetManager`].
//!
//! ## The surface
//! Everything a game names is at the crate root:
//! - the [`Renderer`] and its scene ([`RendererConfig`], [`FrameInput`], [`MaterialDesc`],
//!   handles, [`Vertex`], [`panel`], [`quad_xz`]);
//! - the [`BudgetManager`] ([`ManagerConfig`], [`FramePlan`], [`FrameStats`], [`FrameTiming`]),
//!   its textures ([`TextureSource`], [`TextureOptions`], [`TextureHandle`], [`KtxReader`]),
//!   demand ([`DemandView`], [`Demand`], [`Camera`]), render targets ([`TargetSet`],
//!   [`TargetSpec`], [`TargetKey`], [`Targets`]) and scale ([`ScaleBucket`], [`BucketRange`],
//!   [`ControllerConfig`], [`Upscaler`]);
//! - the device contract ([`REQUIRED_FEATURES`], [`OPTIONAL_FEATURES`],
//!   [`device_descriptor`]), the GPU context and tracked resources ([`GpuContext`],
//!   [`TrackedTexture`], [`TrackedBuffer`]: they deref to the wgpu types);
//! - the budget and the ledger ([`Budget`], [`Ledger`], [`Category`], [`LedgerSnapshot`]);
//! - GPU feedback ([`Feedback`], [`FeedbackDemand`]) and what the overlay and the reports show
//!   ([`EventLog`], [`FeedbackStats`], [`StreamStats`]);
//! - [`Error`] and [`Result`].
//!
//! [`ktx2`] reads and writes the container (for tools). [`low_level`] holds the pieces under
//! the two ways in (planner, streamer, staging, simulation, the Renderer's pass): not the
//! stable surface.
//!
//! Names: `*Config` is how a thing is made (`Default`, `#[non_exhaustive]`), `*Options` what
//! one call takes ([`TextureOptions`]), `*Stats` what a frame reports. The public API takes
//! wgpu 30 and glam 0.34 types, re-exported as [`wgpu`] and [`glam`]; glam 0.34 keeps its
//! projections under `glam::camera` (`glam::camera::rh::proj::directx` is wgpu's depth 0..1).
//!
//! Cooking images into KTX2 is the `mipflow-cook` crate; egui memory panels are
//! `mipflow-overlay`; the `mipflow` command (demo, cook, inspect, headless, bench) is
//! `mipflow-cli`. None of them is compiled by a game that depends on `mipflow` alone.
//!
//! ## Cargo features
//! - `harness`: the `harness` module, budget tests for a game's own renderer in its own CI (the report
//!   and verdict of `mipflow headless`).
//! - `testing`: helpers for the workspace's tests and tools (the `testing` module); not a
//!   stable API.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

// Every module is private: the surface is what this file re-exports (below), plus `ktx2` (the
// container format, for tools) and `low_level` (the pieces under the two ways in).
mod budget;
mod demand;
mod error;
mod events;
mod feedback;
mod gpu;
#[cfg(feature = "harness")]
pub mod harness;
pub mod ktx2;
mod manager;
mod renderer;
mod resolution;
mod shaders;
mod stream;
#[cfg(feature = "testing")]
pub mod testing;
mod tiles;

/// The wgpu and glam mipflow is built on, so that a game uses the same versions (mipflow's
/// public API takes wgpu 30 and glam 0.34 types).
pub use {glam, wgpu};

// The errors.
pub use error::{Error, Result};

// Way 1: the Renderer and its scene.
pub use renderer::{
    FrameInput, InstanceHandle, MaterialDesc, MaterialHandle, MeshHandle, Prefetch, Renderer,
    RendererConfig, Vertex, panel, quad_xz,
};

// Way 2: the BudgetManager under your own renderer: device, textures, demand, targets, stats.
pub use budget::planner::{PlanStatus, PlannerConfig};
pub use demand::{
    Camera, DEFAULT_PREDICTED_FRAMES, Demand, DemandView, GUARD_BAND_WEIGHT, LOOK_AHEAD_FRAMES,
    LOOK_AHEAD_WEIGHT, MAX_PREDICTED_FRAMES, look_at, perspective,
};
pub use gpu::{
    DriverMemory, GpuConfig, GpuContext, OPTIONAL_FEATURES, REQUIRED_FEATURES, Reservation,
    TrackedBuffer, TrackedTexture, device_descriptor, read_texture_rgba8,
    read_texture_rgba8_reserved, readback_bytes,
};
pub use manager::{
    BudgetManager, FeedbackStats, FramePlan, FrameStats, FrameTiming, ManagerConfig, Residency,
    ResidentFuture,
};
pub use resolution::{
    BucketRange, ChangeReason, ControllerConfig, ControllerMode, ScaleBucket, ScaleChange,
    TargetKey, TargetSet, TargetSize, TargetSpec, Targets, Upscaler,
};
pub use stream::{
    KtxReader, ReadError, StreamConfig, StreamStats, TextureHandle, TextureInfo, TextureOptions,
    TextureSource,
};

// The budget and the ledger.
pub use budget::{
    AdapterMemory, Budget, BudgetSource, ByCategory, Category, CategoryStats, Charge, Ledger,
    LedgerSnapshot, LiveAllocation, format_bytes, parse_size,
};

// GPU feedback, for the Renderer and for a game's own renderer.
pub use feedback::{Feedback, FeedbackConfig, FeedbackDemand};
// Tile streaming (virtual textures).
pub use tiles::{TileSource, TileUpdate, VirtualTextures, VtAddress, VtConfig, VtId, vt_wgsl};

// What the overlay and the reports show.
pub use events::{Event, EventKind, EventLog, Tally};

pub mod low_level {
    //! The pieces under the two ways in, for those who drive them themselves: the planner and
    //! its simulation executor, the streamer, staging and uploads, the exact size math, the
    //! resolution controller, the upscaler and the Renderer's own pass. Not the stable surface:
    //! these follow the implementation and may change in any release.

    pub use crate::budget::EffectiveBudget;
    pub use crate::budget::planner::{
        BucketCost, ContractViolation, MAX_LEVELS, Plan, PlanInput, PlanTexture, PlanTextures,
        Planner, SimExecutor, Transition, TransitionKind,
    };
    pub use crate::budget::size::{
        block_bytes, copy_block_bytes, copy_level_bytes, full_mip_count, level_bytes, mip_extent,
        texture_bytes, texture_bytes_levels,
    };
    pub use crate::feedback::OOM_RETRY_FRAMES;
    pub use crate::gpu::read_level;
    pub use crate::gpu::staging::{
        RowWriter, StagedLayout, StagedLevel, StagingLease, StagingRing,
    };
    pub use crate::gpu::upload::{
        create_texture_with_levels, level_rows, level_rows_of, staged_bytes, staged_bytes_of,
        write_level,
    };
    pub use crate::renderer::{DrawUniforms, GpuMesh, TexturedPass};
    pub use crate::resolution::{
        ControllerInput, DEFAULT_MIN_SCALE, DEPTH_FORMAT, GpuTimer, HDR_FORMAT, HDR_PACKED_FORMAT,
        INTERMEDIATE_FORMAT, RenderTargets, ResolutionController, TIMER_SLOTS, TimeSource, ToneMap,
        UpscaleConfig, UpscalePass, fill_scale_buckets, hdr_format, largest_fitting, lerp_baseline,
        scale_buckets, scaled_size, target_bytes,
    };
    pub use crate::shaders::{ALL as SHADERS, FEEDBACK, TEXTURED, create_module};
    pub use crate::stream::{Streamer, load_resident};
    pub use crate::tiles::{PageTable, Slots, TileInput, TilePlanner, TileWant};
}
