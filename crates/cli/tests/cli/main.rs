//! The `mipflow` command's process tests in one binary: each runs the binary (or the library's
//! runners) end to end and checks files, exit codes and pictures.

#[path = "../../../../tests/suite/common/mod.rs"]
mod common;
#[path = "../../../../tests/suite/display/mod.rs"]
mod display;

mod bench;
mod cook_cli;
mod cook_gpu;
mod cook_tiles;
mod demo_screenshot;
mod headless;
mod inspect_containers;
