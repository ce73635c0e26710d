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

/// Parses `WxH` (each side 1 to 16384).
pub fn parse_wxh(s: &str) -> Option<(u32, u32)> {
    let lower = s.trim().to_ascii_lowercase();
    let (w, h) = lower.split_once('x')?;
    let (w, h): (u32, u32) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    ((1..=16384).contains(&w) && (1..=16384).contains(&h)).then_some((w, h))
}
