//! The PNG plot of a run: the library's budget-test plot ([`mipflow::harness::plot_rgb`]),
//! written with the command's own image writer.

use std::path::Path;

use super::report::Report;
use crate::error::Result;

/// Draws `report` as a `width x height` image at `path` (PNG, or the format its extension
/// names), written whole or not at all.
pub fn write_plot(report: &Report, path: &Path, width: u32, height: u32) -> Result<()> {
    let rgb = mipflow::harness::plot_rgb(report, path, width, height)?;
    crate::write_image(path, width, height, &rgb)
}
