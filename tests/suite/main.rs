//! The library's tests in one binary (one link after each change to `src/`, instead of one per
//! file). GPU tests run on whatever adapter is present (lavapipe in CI). The counting allocator
//! is installed for the whole binary; it counts each thread's own allocations, so the allocation
//! tests are exact whatever runs beside them.

mod common;
mod containers;
mod controls;
mod display;

#[global_allocator]
static ALLOC: common::alloc::Counting = common::alloc::Counting;

mod cook_quality;
mod embed_examples;
mod feedback;
mod first_render;
mod formats;
mod frame_alloc;
mod gpu_ledger;
mod kept_textures;
mod ktx2_malformed;
mod ktx2_mutation;
mod ktx2_roundtrip;
mod make_room;
mod manager_api;
mod manager_embed;
mod manager_misuse;
mod own_renderer;
mod planner_sim;
mod prefetch;
mod resolution_alloc;
mod resolution_budget;
mod resolution_targets;
mod resolution_timer;
mod resolution_upscale;
mod shaders;
mod staging;
mod streaming;
mod tiles;
mod tiles_reuse;
mod tiles_sim;
