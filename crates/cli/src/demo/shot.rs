//! `--screenshot`: the frame read back and written.

use mipflow::GpuContext;

/// Reads `texture` back and writes it as an opaque RGBA PNG.
pub(super) fn save_png(
    ctx: &GpuContext,
    texture: &wgpu::Texture,
    path: &std::path::Path,
) -> Result<(), String> {
    let mut rgba = mipflow::read_texture_rgba8(ctx, texture).map_err(|e| e.to_string())?;
    // The window is opaque; egui's blending may leave other alpha values in the texture.
    for px in rgba.chunks_exact_mut(4) {
        px[3] = 255;
    }
    let img = image::RgbaImage::from_raw(texture.width(), texture.height(), rgba)
        .ok_or_else(|| "screenshot: readback size mismatch".to_owned())?;
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    img.save(path)
        .map_err(|e| format!("writing {}: {e}", path.display()))
}
