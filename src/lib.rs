//! # mipflow
//!
//! A VRAM budget manager for [wgpu]: it streams block-compressed KTX2 mip chains and scales the
//! render targets under **one budget**. Every byte placed on the GPU is charged to a
//! [`budget::Ledger`] per [`budget::Category`]; one planner spends the budget on whatever buys
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
//! let (vertices, indices) = mipflow::render::panel(2.0, 2.0);
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
//! ## Modules
//! - [`budget`]: the ledger, exact size math, budget sources and the planner (pure CPU).
//! - [`demand`]: demand from bounds (a bounding volume, its UV density and the camera), with
//!   the guard band and look-ahead.
//! - [`feedback`]: GPU feedback: what the sampler really used, per texture, as demand.
//! - [`gpu`]: device set-up (headless, for a window, or adopted from the caller), tracked
//!   creation, staging, readback.
//! - [`ktx2`]: reading (hardened against hostile files, one level at a time) and writing.
//! - [`stream`]: IO workers, residency transitions, the upload scheduler; hands out views.
//! - [`resolution`]: scale buckets, the controller, render-target sets and the upscaler.
//! - [`manager`]: the [`BudgetManager`], the one owner of the frame's budget loop.
//! - [`render`]: the Renderer's scene types and its textured pass.
//! - [`shaders`]: the WGSL registry.
//!
//! Cooking images into KTX2 is the `mipflow-cook` crate; egui memory panels are
//! `mipflow-overlay`; the `mipflow` command (demo, cook, inspect, headless, bench) is
//! `mipflow-cli`. None of them is compiled by a game that depends on `mipflow` alone.
//!
//! ## Cargo features
//! - `testing`: helpers for the workspace's tests and tools (the `testing` module); not a
//!   stable API.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod budget;
pub mod demand;
pub mod error;
pub mod events;
pub mod feedback;
pub mod feedback_demand;
pub mod gpu;
pub mod ktx2;
pub mod manager;
pub mod render;
mod renderer;
pub mod resolution;
pub mod shaders;
pub mod stream;
#[cfg(feature = "testing")]
pub mod testing;

/// The wgpu and glam mipflow is built on, so that a game uses the same versions.
pub use {glam, wgpu};

pub use budget::{Budget, Category, LedgerSnapshot};
pub use demand::{Demand, DemandView};
pub use error::{Error, Result};
pub use gpu::{GpuContext, GpuOptions};
pub use manager::{BudgetManager, FramePlan, FrameStats, FrameTiming, ManagerConfig};
pub use render::Vertex;
pub use render::scene::{Camera, InstanceHandle, MaterialDesc, MaterialHandle, MeshHandle};
pub use renderer::{FrameInput, Prefetch, Renderer, RendererConfig};
pub use stream::{TextureHandle, TextureOptions, TextureSource};
