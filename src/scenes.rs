//! Built-in scenes, made through the public API only: the demo hall of procedural textures, a
//! grid of many small textures, and a gallery of a folder of KTX2 files.
//!
//! Procedural textures make every mip level visibly distinct: each level is drawn on its own (not
//! downsampled) with a pattern whose detail matches the level, a colour of its own and a label
//! giving the texture's number and the level, so a screenshot shows which level is resident.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use glam::{Mat4, Quat, Vec3};

use crate::cook::{Quality, encode_level, encoder_for};
use crate::ktx2::{EncodedTexture, write_ktx2};
use crate::render::Vertex;
use crate::{Error, MaterialDesc, Renderer, Result, TextureHandle, TextureOptions, TextureSource};

/// One procedural texture to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureSpec {
    /// Name (and cache file stem).
    pub name: String,
    /// Side in texels (square).
    pub size: u32,
    /// Seed of its colours and pattern.
    pub seed: u64,
    /// Its number, drawn in the labels.
    pub number: u32,
}

fn hash(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The demo's textures: `count` of them, sides from `max_size` down: 1 in 16 at `max_size`, 1 in 4
/// at half of it, the rest at a quarter (at least 64).
pub fn demo_specs(seed: u64, count: u32, max_size: u32) -> Vec<TextureSpec> {
    (0..count)
        .map(|i| {
            let size = if i % 16 == 0 {
                max_size
            } else if i % 4 == 0 {
                max_size / 2
            } else {
                max_size / 4
            }
            .max(64);
            TextureSpec {
                name: format!("demo-{seed}-{i:04}-{size}"),
                size,
                seed: hash(seed ^ (u64::from(i) << 20)),
                number: i,
            }
        })
        .collect()
}

const LEVEL_COLOURS: [[u8; 3]; 8] = [
    [230, 60, 50],
    [245, 150, 40],
    [235, 215, 50],
    [80, 190, 80],
    [40, 190, 220],
    [60, 90, 230],
    [170, 70, 220],
    [150, 150, 150],
];

fn draw_text(img: &mut image::RgbaImage, text: &str, x: f32, y: f32, px: f32, colour: [u8; 3]) {
    let Ok(font) = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR) else {
        return;
    };
    let scaled = font.as_scaled(PxScale::from(px));
    let mut caret = x;
    for ch in text.chars() {
        let id = scaled.glyph_id(ch);
        let glyph = id.with_scale_and_position(px, ab_glyph::point(caret, y + scaled.ascent()));
        caret += scaled.h_advance(id);
        if let Some(outline) = font.outline_glyph(glyph) {
            let b = outline.px_bounds();
            outline.draw(|gx, gy, cov| {
                let (px_, py_) = (
                    b.min.x as i64 + i64::from(gx),
                    b.min.y as i64 + i64::from(gy),
                );
                if px_ >= 0 && py_ >= 0 && (px_ as u32) < img.width() && (py_ as u32) < img.height()
                {
                    let p = img.get_pixel_mut(px_ as u32, py_ as u32);
                    for c in 0..3 {
                        p[c] = (f32::from(p[c]) * (1.0 - cov) + f32::from(colour[c]) * cov) as u8;
                    }
                }
            });
        }
    }
}

/// Draws level `level` of `spec`: a pattern with detail at the level's own scale, tinted with the
/// level's colour, and a label `#number Llevel`.
pub fn draw_level(spec: &TextureSpec, level: u32) -> image::RgbaImage {
    let size = (spec.size >> level).max(1);
    let h = hash(spec.seed);
    let base = [
        (60 + (h & 0x7f)) as u8,
        (60 + ((h >> 8) & 0x7f)) as u8,
        (60 + ((h >> 16) & 0x7f)) as u8,
    ];
    let tint = LEVEL_COLOURS[(level as usize).min(7)];
    let cells = 2 + (h >> 24) % 6; // 2..7 cells across, whatever the level
    let stripes = 8 + (h >> 32) % 24;
    let mut img = image::RgbaImage::from_fn(size, size, |x, y| {
        let u = (x as f32 + 0.5) / size as f32;
        let v = (y as f32 + 0.5) / size as f32;
        let cx = (u * cells as f32) as u64;
        let cy = (v * cells as f32) as u64;
        let checker = (cx + cy).is_multiple_of(2);
        let wave = ((u * stripes as f32 + v * 3.0) * std::f32::consts::TAU).sin() * 0.5 + 0.5;
        // A fine grid at 8 texels of this level: detail that only this level resolves.
        let fine = x % 8 == 0 || y % 8 == 0;
        let mut c = [0u8; 4];
        for k in 0..3 {
            let b = f32::from(base[k]) * if checker { 1.0 } else { 0.6 };
            let t = f32::from(tint[k]);
            let mut val = b * 0.55 + t * 0.35 + wave * 25.0;
            if fine {
                val *= 0.7;
            }
            c[k] = val.clamp(0.0, 255.0) as u8;
        }
        c[3] = 255;
        c.into()
    });
    if size >= 16 {
        let px = (size as f32 / 5.0).max(6.0);
        let label = format!("#{} L{level}", spec.number);
        draw_text(
            &mut img,
            &label,
            size as f32 * 0.06,
            size as f32 * 0.08,
            px,
            [255, 255, 255],
        );
        draw_text(
            &mut img,
            &format!("{}", spec.size >> level),
            size as f32 * 0.06,
            size as f32 * 0.55,
            px * 0.8,
            [20, 20, 20],
        );
    }
    img
}

/// Makes `spec` as a BC7 KTX2 file in memory: every level drawn on its own, encoded at `quality`.
pub fn cook_procedural(spec: &TextureSpec, quality: Quality) -> Result<Vec<u8>> {
    let encoder = encoder_for(quality);
    let count = crate::budget::size::full_mip_count(spec.size, spec.size);
    let mut levels = Vec::with_capacity(count as usize);
    for level in 0..count {
        let img = draw_level(spec, level);
        levels.push(encode_level(
            encoder.as_ref(),
            img.as_raw(),
            img.width(),
            img.height(),
            false,
        )?);
    }
    let mut name = spec.name.clone().into_bytes();
    name.push(0);
    let tex = EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: spec.size,
        height: spec.size,
        levels,
        key_values: vec![("mipflowName".to_owned(), name)],
    };
    let mut out = Vec::new();
    write_ktx2(&mut out, &tex, None, "mipflow procedural").map_err(|e| Error::Io {
        path: PathBuf::from(&spec.name),
        source: e,
    })?;
    Ok(out)
}

/// Where cooked demo textures are cached: `$MIPFLOW_CACHE`, else `$XDG_CACHE_HOME/mipflow`, else
/// `~/.cache/mipflow`, else a folder in the temp dir.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MIPFLOW_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("mipflow");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("mipflow");
    }
    std::env::temp_dir().join("mipflow-cache")
}

/// The cooked bytes of `spec`, from `cache` when there (a file is trusted only if it parses), else
/// cooked and written there (atomically; a cache that cannot be written is not an error).
pub fn cached_procedural(
    spec: &TextureSpec,
    quality: Quality,
    cache: Option<&Path>,
) -> Result<TextureSource> {
    if let Some(dir) = cache {
        let path = dir.join(format!("{}.ktx2", spec.name));
        if crate::ktx2::read_info(&path, &Default::default()).is_ok() {
            return Ok(TextureSource::Path(Arc::new(path)));
        }
        let bytes = cook_procedural(spec, quality)?;
        let tmp = dir.join(format!(".{}.{}.tmp", spec.name, std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, &bytes))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if written.is_ok() {
            return Ok(TextureSource::Path(Arc::new(path)));
        }
        let _ = std::fs::remove_file(&tmp);
        return Ok(TextureSource::Bytes(bytes.into()));
    }
    Ok(TextureSource::Bytes(cook_procedural(spec, quality)?.into()))
}

/// A quad of `w x h` in the XY plane facing +Z, UVs 0..1.
pub fn panel(w: f32, h: f32) -> ([Vertex; 4], [u32; 6]) {
    let n = [0.0, 0.0, 1.0];
    let v = |x: f32, y: f32, u: f32, t: f32| Vertex {
        position: [x * w, y * h, 0.0],
        normal: n,
        uv: [u, t],
    };
    (
        [
            v(-0.5, -0.5, 0.0, 1.0),
            v(0.5, -0.5, 1.0, 1.0),
            v(0.5, 0.5, 1.0, 0.0),
            v(-0.5, 0.5, 0.0, 0.0),
        ],
        [0, 1, 2, 0, 2, 3],
    )
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

/// The transforms of the floor tiles (a [`crate::render::quad_xz`] each) of a hall of `length`.
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
    if let Some(&(floor_tex, _)) = textures.first() {
        let (fv, fi) = crate::render::quad_xz();
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
    use rayon::prelude::*;
    let specs = demo_specs(seed, count, max_size);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let sources: Vec<Result<TextureSource>> = specs
        .par_iter()
        .with_max_len(1)
        .map(|s| {
            let r = cached_procedural(s, Quality::Fast, cache);
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
    build_hall(r, &handles)
}

/// A grid scene of `count` small procedural textures (side `size`) on panels in a square grid
/// facing +Z at z = 0: the "thousands of small textures" case. Returns the grid's side length.
pub fn build_grid(r: &mut Renderer, seed: u64, count: u32, size: u32) -> Result<f32> {
    use rayon::prelude::*;
    let specs: Vec<TextureSpec> = (0..count)
        .map(|i| TextureSpec {
            name: format!("grid-{seed}-{i}"),
            size,
            seed: hash(seed ^ u64::from(i)),
            number: i,
        })
        .collect();
    let bytes: Vec<Result<Vec<u8>>> = specs
        .par_iter()
        .map(|s| cook_procedural(s, Quality::Fast))
        .collect();
    let (pv, pi) = panel(0.9, 0.9);
    let mesh = r.add_mesh(&pv, &pi)?;
    let side = (count as f32).sqrt().ceil() as u32;
    for (i, b) in bytes.into_iter().enumerate() {
        let h = r.add_texture(TextureSource::Bytes(b?.into()), TextureOptions::default())?;
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

/// A gallery of every `.ktx2` file under `dir` (sorted by path), as panels along the hall.
pub fn build_gallery(r: &mut Renderer, dir: &Path) -> Result<f32> {
    let mut files = Vec::new();
    collect_ktx2(dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(Error::Scenario(format!(
            "no .ktx2 files under {}",
            dir.display()
        )));
    }
    let mut handles = Vec::with_capacity(files.len());
    for f in files {
        match r.add_texture(
            TextureSource::Path(Arc::new(f.clone())),
            TextureOptions::default(),
        ) {
            Ok(h) => {
                let w = r.streamer().texture_width(h).unwrap_or(1024);
                handles.push((h, w));
            }
            Err(e) => tracing::warn!(file = %f.display(), error = %e, "skipped"),
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

fn collect_ktx2(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_ktx2(&p, out)?;
        } else if p
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("ktx2"))
        {
            out.push(p);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_distinct_and_cook() {
        let spec = &demo_specs(7, 1, 128)[0];
        let l0 = draw_level(spec, 0);
        let l1 = draw_level(spec, 1);
        assert_eq!(l0.dimensions(), (128, 128));
        assert_eq!(l1.dimensions(), (64, 64));
        // Level 1 is not level 0 downsampled: its mean colour carries another tint.
        let mean = |img: &image::RgbaImage| {
            let n = (img.width() * img.height()) as f64;
            let mut m = [0.0f64; 3];
            for p in img.pixels() {
                for c in 0..3 {
                    m[c] += f64::from(p[c]) / n;
                }
            }
            m
        };
        let (m0, m1) = (mean(&l0), mean(&l1));
        let d: f64 = (0..3).map(|c| (m0[c] - m1[c]).abs()).sum();
        assert!(d > 20.0, "levels too similar: {m0:?} vs {m1:?}");
        let bytes = cook_procedural(spec, Quality::Fast).unwrap();
        let info =
            crate::ktx2::Ktx2Info::parse(&bytes, bytes.len() as u64, &Default::default()).unwrap();
        assert_eq!(info.levels.len(), 8);
        assert_eq!(info.width, 128);
    }

    #[test]
    fn demo_specs_are_deterministic_and_sized() {
        let a = demo_specs(1, 200, 2048);
        assert_eq!(a, demo_specs(1, 200, 2048));
        assert_eq!(a.iter().filter(|s| s.size == 2048).count(), 13);
        assert!(a.iter().all(|s| s.size >= 64));
    }
}
