//! The `mipflow` command's library: the demo, `cook`, `inspect`, headless budget runs and the
//! bench, as modules the binary (`src/main.rs`) and the process tests share. Not a stable API:
//! games depend on `mipflow` (and `mipflow-cook`, `mipflow-overlay`), not on this crate.

pub mod bench;
pub mod cook_cmd;
pub mod demo;
pub mod error;
pub mod headless;
pub mod inspect;
pub mod scenes;
