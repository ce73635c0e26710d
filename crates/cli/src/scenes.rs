//! Built-in scenes, made through the public API only: the demo hall of procedural textures, a
//! grid of many small textures, and a gallery of a folder of KTX2 files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
pub use mipflow::panel;
use mipflow::{MaterialDesc, Renderer, TextureHandle, TextureOptions, TextureSource};
use mipflow_cook::Quality;
pub use mipflow_cook::procedural::{
    TextureSpec, cache_dir, cached_procedural, cook_procedural, demo_specs, mix64,
};

use crate::error::{Error, Result};

/// How the scene builders make textures resident: streamed under the budget (mipflow), or, for
/// `mipflow bench`'s baselines, every level resident at once, as BC7 or decoded to RGBA8 (the
/// naive baseline). The baselines are made here, outside the library, with the public API any
/// game has ([`Renderer::add_resident_texture_from`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Residency {
    /// Mips streamed under the budget by the planner.
    #[default]
    Streamed,
    /// Every level of every texture resident at registration, as BC7 (no streaming, no budget).
    FullBc7,
    /// Every level resident as uncompressed RGBA8 (BC7 decoded on the CPU at registration).
    FullRgba8,
}

/// Adds `source` to `r` as `residency` says.
pub fn add_texture(
    r: &mut Renderer,
    source: TextureSource,
    residency: Residency,
) -> Result<TextureHandle> {
    if residency == Residency::Streamed {
        return Ok(r.add_texture(source, TextureOptions::default())?);
    }
    let limits = mipflow::ktx2::ReadLimits::default();
    let label = source.describe();
    // The file's metadata goes with the texture (`add_resident_texture_from`): every mode
    // draws it with the same orientation and shape.
    if residency == Residency::FullBc7 {
        let info = source.info(&limits)?;
        let tex = mipflow::low_level::load_resident(r.context(), &source, &limits)?;
        return Ok(r.add_resident_texture_from(tex, &label, &info));
    }
    // FullRgba8: every level decoded on the CPU, as a shader samples its format: RGBA8 for
    // BC1 to BC5 and BC7, RGBA16F for BC6H (its values past 1 are what HDR is for).
    let (info, levels) = source.read_all(&limits)?;
    let hdr = matches!(
        info.format,
        wgpu::TextureFormat::Bc6hRgbUfloat | wgpu::TextureFormat::Bc6hRgbFloat
    );
    let decoded: Vec<Vec<u8>> = levels
        .iter()
        .enumerate()
        .map(|(l, d)| {
            let (w, h) = info.level_dims(l);
            if hdr {
                let signed = info.format == wgpu::TextureFormat::Bc6hRgbFloat;
                let rgb = mipflow_cook::decode_bc6h(d, w, h, signed);
                rgb.chunks_exact(3)
                    .flat_map(|t| [t[0], t[1], t[2], 1.0])
                    .flat_map(|v| half::f16::from_f32(v).to_le_bytes())
                    .collect()
            } else {
                mipflow_cook::decode_blocks(info.format, d, w, h)
            }
        })
        .collect();
    let format = if hdr {
        wgpu::TextureFormat::Rgba16Float
    } else if info.format.is_srgb() {
        wgpu::TextureFormat::Rgba8UnormSrgb
    } else {
        wgpu::TextureFormat::Rgba8Unorm
    };
    let desc = wgpu::TextureDescriptor {
        label: Some(&label),
        size: wgpu::Extent3d {
            width: info.width,
            height: info.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: decoded.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    let refs: Vec<&[u8]> = decoded.iter().map(Vec::as_slice).collect();
    let tex = mipflow::low_level::create_texture_with_levels(
        r.context(),
        &desc,
        &refs,
        mipflow::Category::Textures,
    )?;
    Ok(r.add_resident_texture_from(tex, &label, &info))
}

/// Spacing of the hall's panels along z.
const HALL_SPACING: f32 = 2.2;

/// The hall's length for `count` panels (both walls), as [`build_hall`] lays them out.
pub fn hall_length(count: usize) -> f32 {
    count.div_ceil(2) as f32 * HALL_SPACING + 4.0
}

/// Where [`build_hall`] puts panel `i` (a unit [`panel`]) showing a texture of side `size`: even
/// panels on the left wall, odd on the right, larger textures on larger panels. Lets a caller add
/// panels one at a time (the demo adds them as they finish cooking) with the same layout.
pub fn hall_panel_transform(i: usize, size: u32) -> Mat4 {
    hall_panel_transform_with_aspect(i, size, 1.0)
}

/// [`hall_panel_transform`] for an image of this aspect (width over height): the panel keeps the
/// same largest side and the image's shape.
pub fn hall_panel_transform_with_aspect(i: usize, size: u32, aspect: f32) -> Mat4 {
    let aspect = if aspect.is_finite() && aspect > 0.0 {
        aspect.clamp(1.0 / 8.0, 8.0)
    } else {
        1.0
    };
    let shape = if aspect >= 1.0 {
        Vec3::new(1.0, 1.0 / aspect, 1.0)
    } else {
        Vec3::new(aspect, 1.0, 1.0)
    };
    hall_panel_square(i, size) * Mat4::from_scale(shape)
}

fn hall_panel_square(i: usize, size: u32) -> Mat4 {
    let side = if i.is_multiple_of(2) { -1.0 } else { 1.0 };
    let row = (i / 2) as f32;
    let extent = 1.0 + (size as f32 / 1024.0).min(2.0) * 0.8;
    let z = -2.0 - row * HALL_SPACING;
    // Alternate heights so the walls read as a gallery, not a fence.
    let y = 1.4 + if (i / 2).is_multiple_of(2) { 0.0 } else { 0.35 };
    Mat4::from_scale_rotation_translation(
        Vec3::splat(extent),
        Quat::from_rotation_y(-side * std::f32::consts::FRAC_PI_2),
        Vec3::new(side * 3.0, y, z),
    )
}

/// The transforms of the floor tiles (a [`mipflow::quad_xz`] each) of a hall of `length`.
pub fn hall_floor_transforms(length: f32) -> impl Iterator<Item = Mat4> {
    let tiles = (length / 6.0).ceil().max(0.0) as i32;
    (0..tiles).map(|k| {
        Mat4::from_scale_rotation_translation(
            Vec3::new(6.0, 1.0, 6.0),
            Quat::IDENTITY,
            Vec3::new(0.0, 0.0, -3.0 - 6.0 * k as f32),
        )
    })
}

/// Places `textures` as panels along both walls of a hall running from z = 0 towards -z, larger
/// textures on larger panels, and a tiled floor with the first texture. Returns the hall's length.
pub fn build_hall(r: &mut Renderer, textures: &[(TextureHandle, u32)]) -> Result<f32> {
    build_hall_with(r, textures, true)
}

/// [`build_hall`], with its floor (`floor`) or without (a floor of its own to come, such as
/// [`add_tiled_floor`]'s).
pub fn build_hall_with(
    r: &mut Renderer,
    textures: &[(TextureHandle, u32)],
    floor: bool,
) -> Result<f32> {
    let (pv, pi) = panel(1.0, 1.0);
    let panel_mesh = r.add_mesh(&pv, &pi)?;
    let length = hall_length(textures.len());
    for (i, &(tex, size)) in textures.iter().enumerate() {
        let aspect = r.streamer().texture_aspect(tex).unwrap_or(1.0);
        let mat = r.add_material(MaterialDesc::new(tex))?;
        r.add_instance(
            panel_mesh,
            mat,
            hall_panel_transform_with_aspect(i, size, aspect),
        )?;
    }
    if let Some(&(floor_tex, _)) = textures.first().filter(|_| floor) {
        let (fv, fi) = mipflow::quad_xz();
        let floor_mesh = r.add_mesh(&fv, &fi)?;
        let mut md = MaterialDesc::new(floor_tex);
        md.uv_scale = 1.0;
        let mat = r.add_material(md)?;
        for t in hall_floor_transforms(length) {
            r.add_instance(floor_mesh, mat, t)?;
        }
    }
    Ok(length)
}

/// The demo scene: `count` procedural textures (largest side `max_size`) on the hall's walls.
/// Returns the hall's length. `progress` is told each texture made (for a progress bar).
pub fn build_demo(
    r: &mut Renderer,
    seed: u64,
    count: u32,
    max_size: u32,
    cache: Option<&Path>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<f32> {
    build_demo_with(r, seed, count, max_size, cache, progress, true)
}

/// [`build_demo`], with the hall's floor (`floor`) or without.
pub fn build_demo_with(
    r: &mut Renderer,
    seed: u64,
    count: u32,
    max_size: u32,
    cache: Option<&Path>,
    progress: &(dyn Fn(usize, usize) + Sync),
    floor: bool,
) -> Result<f32> {
    use rayon::prelude::*;
    let specs = demo_specs(seed, count, max_size);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let sources: Vec<Result<TextureSource>> = specs
        .par_iter()
        .with_max_len(1)
        .map(|s| {
            let r = cached_procedural(s, Quality::Fast, cache).map_err(Error::from);
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, specs.len());
            r
        })
        .collect();
    let mut handles = Vec::with_capacity(specs.len());
    for (spec, src) in specs.iter().zip(sources) {
        let h = r.add_texture(src?, TextureOptions::default())?;
        handles.push((h, spec.size));
    }
    build_hall_with(r, &handles, floor)
}

/// A floor down a hall of `length`: one texture of `side`² (stone slabs, cooked to BC7 tiled at
/// 128 with Zstandard, cached in `cache`) streamed tile by tile as a virtual texture
/// ([`Renderer::add_virtual_texture`]), repeating on every 6 m floor quad.
pub fn add_tiled_floor(
    r: &mut Renderer,
    length: f32,
    side: u32,
    cache: Option<&Path>,
) -> Result<()> {
    let source = tiled_floor_texture(side, cache)?;
    add_floor(r, length, &source, None)
}

/// The floor quads of a hall of `length` with one material: `texture` (the tiled file added as
/// a texture like any other, level by level), or, without one, `source` as a virtual texture
/// streamed tile by tile.
pub fn add_floor(
    r: &mut Renderer,
    length: f32,
    source: &mipflow::TileSource,
    texture: Option<TextureHandle>,
) -> Result<()> {
    let mat = large_material(r, source, texture)?;
    let (fv, fi) = mipflow::quad_xz();
    let mesh = r.add_mesh(&fv, &fi)?;
    for t in hall_floor_transforms(length) {
        r.add_instance(mesh, mat, t)?;
    }
    Ok(())
}

/// Where a large surface of [`add_enclosure`] goes: the left wall, the right wall, the ceiling.
pub const ENCLOSURE: [&str; 3] = ["left wall", "right wall", "ceiling"];

/// The large surfaces down a hall of `length`, one texture each ([`ENCLOSURE`] order): a wall
/// behind each row of panels (x = ±3.4, 4 m high) and a ceiling (4 m up), in 8 m segments, with
/// materials as [`add_floor`]'s: `textures[k]`, or `sources[k]` streamed tile by tile. Seen
/// past the panels and overhead at grazing angles, in part.
pub fn add_enclosure(
    r: &mut Renderer,
    length: f32,
    sources: &[mipflow::TileSource],
    textures: &[Option<TextureHandle>],
) -> Result<()> {
    for (k, source) in sources.iter().enumerate().take(3) {
        add_surface(r, length, k, source, textures.get(k).copied().flatten())?;
    }
    Ok(())
}

/// The material of a large surface: `texture`, or `source` streamed tile by tile (repeating).
fn large_material(
    r: &mut Renderer,
    source: &mipflow::TileSource,
    texture: Option<TextureHandle>,
) -> Result<mipflow::MaterialHandle> {
    let desc = match texture {
        Some(t) => MaterialDesc::new(t),
        None => MaterialDesc::virtual_texture(
            r.add_virtual_texture(source.clone(), mipflow::VtAddress::Repeat)?,
        ),
    };
    Ok(r.add_material(desc)?)
}

/// Surface `k` of [`ENCLOSURE`].
fn add_surface(
    r: &mut Renderer,
    length: f32,
    k: usize,
    source: &mipflow::TileSource,
    texture: Option<TextureHandle>,
) -> Result<()> {
    let mat = large_material(r, source, texture)?;
    let (pv, pi) = panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi)?;
    let segments = (length / 8.0).ceil().max(1.0) as i32;
    for s in 0..segments {
        let z = -4.0 - 8.0 * s as f32;
        let t = match k {
            0 | 1 => {
                let side = if k == 0 { -1.0f32 } else { 1.0 };
                Mat4::from_scale_rotation_translation(
                    Vec3::new(8.0, 4.0, 1.0),
                    Quat::from_rotation_y(-side * std::f32::consts::FRAC_PI_2),
                    Vec3::new(side * 3.4, 2.0, z),
                )
            }
            // Facing down, 6.8 wide.
            _ => Mat4::from_scale_rotation_translation(
                Vec3::new(6.8, 8.0, 1.0),
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
                Vec3::new(0.0, 4.0, z),
            ),
        };
        r.add_instance(mesh, mat, t)?;
    }
    Ok(())
}

/// The tiled floor's texture (stone slabs): read from `cache` when it was cooked before, else
/// cooked (and written there when it can be).
pub fn tiled_floor_texture(side: u32, cache: Option<&Path>) -> Result<mipflow::TileSource> {
    let slab = (side / 8).max(8);
    tiled_texture("floor", side, cache, move |x, y| {
        let groove = x % slab < slab / 32 + 1 || y % slab < slab / 32 + 1;
        let tone = 110 + (((x / slab) * 37 + (y / slab) * 91) % 70) as u8;
        let grain = ((x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) >> 27) as u8;
        if groove {
            image::Rgba([40, 38, 36, 255])
        } else {
            image::Rgba([tone + grain, tone - 10 + grain, tone - 25 + grain / 2, 255])
        }
    })
}

/// The textures of [`add_enclosure`]'s surfaces (bricks of three sizes and tones, offset every
/// other row), as [`tiled_floor_texture`].
pub fn tiled_enclosure_textures(
    side: u32,
    cache: Option<&Path>,
) -> Result<Vec<mipflow::TileSource>> {
    (0..3u32)
        .map(|k| tiled_wall_texture(side, k, cache))
        .collect()
}

/// Bricks (variant `k`: their size and tone), as [`tiled_floor_texture`].
fn tiled_wall_texture(side: u32, k: u32, cache: Option<&Path>) -> Result<mipflow::TileSource> {
    let (bw, bh) = ((side / (16 + 4 * k)).max(8), (side / (40 + 8 * k)).max(4));
    let name = format!("wall{k}");
    tiled_texture(&name, side, cache, move |x, y| {
        let row = y / bh;
        let xs = x + if row % 2 == 1 { bw / 2 } else { 0 };
        let mortar = y % bh < bh / 8 + 1 || xs % bw < bw / 16 + 1;
        let tone = 120 + (((xs / bw) * 53 + row * 29) % 60) as u8;
        let grain = ((x.wrapping_mul(40_503) ^ y.wrapping_mul(2_654_435_761)) >> 27) as u8;
        if mortar {
            image::Rgba([170, 165, 150, 255])
        } else {
            let t = tone + grain;
            match k {
                0 => image::Rgba([t, tone / 2 + grain / 2, tone / 3, 255]),
                1 => image::Rgba([tone / 2, t, tone / 2 + grain / 2, 255]),
                _ => image::Rgba([tone / 3 + grain / 2, tone / 2, t, 255]),
            }
        }
    })
}

/// A `side`² texture of `pixel`, cooked to BC7 tiled at 128 with Zstandard under `name`:
/// read from `cache` when it was cooked before, else cooked (and written there when it can be).
fn tiled_texture(
    name: &str,
    side: u32,
    cache: Option<&Path>,
    pixel: impl Fn(u32, u32) -> image::Rgba<u8>,
) -> Result<mipflow::TileSource> {
    let name = format!("{name}-tiles-{side}-t128.ktx2");
    if let Some(path) = cache.map(|c| c.join(&name))
        && mipflow::ktx2::read_info(&path, &Default::default()).is_ok_and(|i| i.tiles.is_some())
    {
        return Ok(mipflow::TileSource::File(path));
    }
    let img = image::RgbaImage::from_fn(side, side, pixel);
    let opts = mipflow_cook::CookOptions {
        quality: Quality::Fast,
        ..Default::default()
    };
    let enc = mipflow_cook::encoder_for(Quality::Fast);
    let tex = mipflow_cook::cook_rgba8(img, &opts, enc.as_ref()).map_err(Error::from)?;
    let mut bytes = Vec::new();
    mipflow::ktx2::write_ktx2_tiled(&mut bytes, &tex, Some(3), "mipflow scenes", 128).map_err(
        |source| Error::Io {
            path: name.clone().into(),
            source,
        },
    )?;
    if let Some(dir) = cache {
        let (path, tmp) = (
            dir.join(&name),
            dir.join(format!(".{name}.{}", std::process::id())),
        );
        let written = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, &bytes))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if written.is_ok() {
            return Ok(mipflow::TileSource::File(path));
        }
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(mipflow::TileSource::Bytes(bytes.into()))
}

/// A grid scene of `count` small procedural textures (side `size`) on panels in a square grid
/// facing +Z at z = 0: the "thousands of small textures" case. Returns the grid's side length.
pub fn build_grid(
    r: &mut Renderer,
    seed: u64,
    count: u32,
    size: u32,
    residency: Residency,
) -> Result<f32> {
    use rayon::prelude::*;
    let specs: Vec<TextureSpec> = (0..count)
        .map(|i| TextureSpec {
            name: format!("grid-{seed}-{i}"),
            size,
            seed: mix64(seed ^ u64::from(i)),
            number: i,
        })
        .collect();
    let bytes: Vec<Result<Vec<u8>>> = specs
        .par_iter()
        .map(|s| Ok(cook_procedural(s, Quality::Fast)?))
        .collect();
    let (pv, pi) = panel(0.9, 0.9);
    let mesh = r.add_mesh(&pv, &pi)?;
    let side = (count as f32).sqrt().ceil() as u32;
    for (i, b) in bytes.into_iter().enumerate() {
        let h = add_texture(r, TextureSource::Bytes(b?.into()), residency)?;
        let mat = r.add_material(MaterialDesc::new(h))?;
        let (gx, gy) = (i as u32 % side, i as u32 / side);
        let t = Mat4::from_translation(Vec3::new(
            gx as f32 - side as f32 / 2.0,
            gy as f32 - side as f32 / 2.0,
            0.0,
        ));
        r.add_instance(mesh, mat, t)?;
    }
    Ok(side as f32)
}

/// The `.ktx2` and `.dds` files under `dir`, sorted; none is an error that says so (and how to cook the
/// images found there instead, if any).
pub fn gallery_files(dir: &Path) -> Result<Vec<PathBuf>> {
    gallery_files_with_skips(dir, &mut Vec::new())
}

/// [`gallery_files`], each subfolder that could not be read put in `skipped` with the reason:
/// a folder of the gallery that vanished from it silently passed a run that never showed it.
pub fn gallery_files_with_skips(
    dir: &Path,
    skipped: &mut Vec<(PathBuf, String)>,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let unreadable =
        crate::find_files(dir, &["ktx2", "dds"], &mut files).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    for (path, e) in unreadable {
        skipped.push((
            path,
            format!("this folder (or entry) of the gallery cannot be read: {e}"),
        ));
    }
    files.sort();
    if files.is_empty() {
        // Images the demo would cook on the fly: say how to show them here.
        let mut images = Vec::new();
        find_files(
            dir,
            &["png", "jpg", "jpeg", "tga", "bmp", "exr", "hdr"],
            &mut images,
        )?;
        let hint = if images.is_empty() {
            String::new()
        } else {
            format!(
                " ({} image file(s): this command reads KTX2 only; cook them first with \
                 `mipflow cook {} --out <DIR>`, or show them in the demo, which cooks on the fly)",
                images.len(),
                dir.display()
            )
        };
        return Err(Error::Scenario(format!(
            "no .ktx2 or .dds files under {}{hint}",
            dir.display()
        )));
    }
    Ok(files)
}

/// A gallery of every `.ktx2` file under `dir` (sorted by path), as panels along the hall.
pub fn build_gallery(r: &mut Renderer, dir: &Path, residency: Residency) -> Result<f32> {
    build_gallery_with_skips(r, dir, residency, &mut Vec::new())
}

/// Why `file` was skipped, without its path where the error starts with it: the report and the
/// verdict name the file beside the reason (they said its path twice).
fn skip_reason(file: &Path, e: &Error) -> String {
    let text = e.to_string();
    let named = format!("{}: ", file.display());
    match text.strip_prefix(&named) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// [`build_gallery`], each file that could not be added put in `skipped` with the reason.
pub fn build_gallery_with_skips(
    r: &mut Renderer,
    dir: &Path,
    residency: Residency,
    skipped: &mut Vec<(PathBuf, String)>,
) -> Result<f32> {
    let files = gallery_files_with_skips(dir, skipped)?;
    let mut handles = Vec::with_capacity(files.len());
    for f in files {
        match add_texture(r, TextureSource::Path(Arc::new(f.clone())), residency) {
            Ok(h) => {
                let w = r.streamer().texture_width(h).unwrap_or(1024);
                handles.push((h, w));
            }
            Err(e) => {
                tracing::warn!(file = %f.display(), error = %e, "skipped");
                skipped.push((f.clone(), skip_reason(&f, &e)));
            }
        }
    }
    if handles.is_empty() {
        return Err(Error::Scenario(format!(
            "no readable .ktx2 file under {}",
            dir.display()
        )));
    }
    build_hall(r, &handles)
}

/// [`crate::find_files`], its error naming the folder; a subfolder that cannot be read is
/// skipped with a warning (the rest of the gallery shows).
pub fn find_files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) -> Result<()> {
    let skipped = crate::find_files(dir, extensions, out).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (path, error) in skipped {
        tracing::warn!(folder = %path.display(), %error, "skipped: cannot be read");
    }
    Ok(())
}

/// The tour: down the hall and back, near the walls and far from them, over `frames` frames.
pub fn tour(frame: u64, frames: u64, length: f32) -> (Vec3, Vec3) {
    let t = (frame % frames.max(1)) as f32 / frames.max(1) as f32;
    let phase = t * std::f32::consts::TAU;
    let z = -(1.0 - phase.cos()) * 0.5 * (length - 4.0);
    let x = (phase * 3.0).sin() * 2.0;
    let eye = Vec3::new(x, 1.6, 2.0 + z);
    let look = Vec3::new(-x * 0.8 + (phase * 2.0).sin() * 3.0, 1.5, z - 6.0);
    (eye, look)
}

#[cfg(all(test, target_os = "linux"))]
mod unreadable_tests {
    use super::*;

    /// A folder nested past the path limit: read_dir on its path fails (ENAMETOOLONG) even
    /// for root, as a permission denied would for a user. Made with mkdirat/openat, one level
    /// at a time.
    fn nest_past_path_max(dir: &Path) -> PathBuf {
        use std::ffi::CString;
        let name = "d".repeat(200);
        let c_name = CString::new(name.clone()).unwrap();
        let c_dir = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        let mut path = dir.to_path_buf();
        // SAFETY: plain syscalls on descriptors this function opens and closes.
        unsafe {
            let mut fd = libc::open(c_dir.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
            assert!(fd >= 0);
            for _ in 0..25 {
                assert_eq!(libc::mkdirat(fd, c_name.as_ptr(), 0o755), 0);
                let next = libc::openat(fd, c_name.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
                assert!(next >= 0);
                libc::close(fd);
                fd = next;
                path.push(&name);
            }
            libc::close(fd);
        }
        path
    }

    #[test]
    fn a_gallery_folder_that_cannot_be_read_is_named_not_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("a.ktx2"), b"x").unwrap();
        let deep = nest_past_path_max(dir);
        assert!(deep.as_os_str().len() > 4096);
        let mut skipped = Vec::new();
        let files = gallery_files_with_skips(dir, &mut skipped).unwrap();
        assert_eq!(files, vec![dir.join("a.ktx2")]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].1.contains("cannot be read"), "{skipped:?}");
    }
}
