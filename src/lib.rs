//! # mipflow
//!
//! A real-time renderer on [wgpu] that streams BC7-compressed KTX2 textures with mip chains through
//! one **VRAM budget** shared with dynamically-scaled render targets.
//!
//! The heart of the crate is [`budget::Ledger`]: every texture and buffer mipflow creates goes
//! through [`gpu::GpuContext`]'s tracked constructors, which charge its exact byte size to a
//! [`budget::Category`] and return it when the resource is dropped or destroyed. Anything still
//! alive when the context goes away is reported by label (the leak report).
//!
//! Modules:
//! - [`gpu`]: device set-up (headless, for a window, or adopted from the caller), tracked resources,
//!   readback.
//! - [`budget`]: the ledger, exact size math, budget sources and the planner.
//! - [`ktx2`] and [`cook`]: reading (hardened against hostile files) and writing BC7 KTX2 files.
//! - [`render`]: the passes (currently the textured-quad pass used by the first image test).
//! - [`shaders`]: the WGSL registry.
//! - [`compare`]: PSNR and SSIM image metrics shared by tests, the headless runner and the bench.
//! - [`demo`]: the `mipflow` demo window (fly camera, tour, background cooking, screenshots) and,
//!   with the `overlay` feature, its egui memory overlay.
//!
//! Cargo features:
//! - `overlay` (default): the demo's egui memory overlay (egui, egui-wgpu, egui-winit, egui_plot).
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod bench;
pub mod budget;
pub mod compare;
pub mod cook;
pub mod demo;
pub mod error;
pub mod gpu;
pub mod headless;
pub mod ktx2;
pub mod render;
pub mod renderer;
pub mod resolution;
pub mod scenes;
pub mod shaders;
pub mod stream;

pub use error::{Error, Result};
pub use render::scene::{Camera, InstanceHandle, MaterialDesc, MaterialHandle, MeshHandle};
pub use renderer::{FrameInput, FrameStats, Prefetch, Renderer, RendererConfig};
pub use stream::{TextureHandle, TextureOptions, TextureSource};
