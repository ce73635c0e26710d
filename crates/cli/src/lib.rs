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

/// The clap value parser of every `WxH` flag (`--size`): each side 1 to 16384.
pub fn wxh_arg(s: &str) -> Result<(u32, u32), String> {
    parse_wxh(s).ok_or_else(|| "expected WxH, such as 1280x720 (each side 1 to 16384)".to_owned())
}

/// The clap value parser of every byte-size flag (`--budget`): "256MiB", "1.5GiB", bytes.
pub fn size_arg(s: &str) -> Result<u64, String> {
    mipflow::budget::parse_size(s).map_err(|e| e.to_string())
}

/// Parses `WxH` (each side 1 to 16384).
pub fn parse_wxh(s: &str) -> Option<(u32, u32)> {
    let lower = s.trim().to_ascii_lowercase();
    let (w, h) = lower.split_once('x')?;
    let (w, h): (u32, u32) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    ((1..=16384).contains(&w) && (1..=16384).contains(&h)).then_some((w, h))
}
