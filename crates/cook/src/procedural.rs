//! Procedural textures make every mip level visibly distinct: each level is drawn on its own (not
//! downsampled) with a pattern whose detail matches the level, a colour of its own and a label
//! giving the texture's number and the level, so a screenshot shows which level is resident.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use mipflow::TextureSource;
use mipflow::ktx2::{EncodedTexture, write_ktx2};

use crate::{CookError, Quality, encode_level, encoder_for};

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

/// A 64-bit mixer (MurmurHash3's finaliser): a seed per texture from a scene seed.
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Whether a procedural texture of side `size` can go on the GPU: some level of its chain has
/// sides that are multiples of the 4x4 BC7 block (1002² has none: 1002, 501, 250, 125, ...).
pub fn block_alignable(size: u32) -> bool {
    (0..32).any(|l| {
        let s = size >> l;
        s >= 4 && s.is_multiple_of(4)
    })
}

/// The sides of the demo's textures for a `max_size` ([`demo_specs`]): the largest first.
pub fn demo_sides(max_size: u32) -> [u32; 3] {
    [
        max_size.max(64),
        (max_size / 2).max(64),
        (max_size / 4).max(64),
    ]
}

/// The demo's textures: `count` of them, sides from `max_size` down: 1 in 16 at `max_size`, 1 in 4
/// at half of it, the rest at a quarter (at least 64).
pub fn demo_specs(seed: u64, count: u32, max_size: u32) -> Vec<TextureSpec> {
    let [large, half, quarter] = demo_sides(max_size);
    (0..count)
        .map(|i| {
            let size = if i % 16 == 0 {
                large
            } else if i % 4 == 0 {
                half
            } else {
                quarter
            };
            TextureSpec {
                name: format!("demo-{seed}-{i:04}-{size}"),
                size,
                seed: mix64(seed ^ (u64::from(i) << 20)),
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
    let h = mix64(spec.seed);
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
pub fn cook_procedural(spec: &TextureSpec, quality: Quality) -> Result<Vec<u8>, CookError> {
    let encoder = encoder_for(quality);
    let count = mipflow::low_level::full_mip_count(spec.size, spec.size);
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
    write_ktx2(&mut out, &tex, None, "mipflow procedural").map_err(|e| CookError::Write {
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
) -> Result<TextureSource, CookError> {
    if let Some(dir) = cache {
        let path = dir.join(format!("{}.ktx2", spec.name));
        if mipflow::ktx2::read_info(&path, &Default::default()).is_ok() {
            return Ok(TextureSource::Path(Arc::new(path)));
        }
        let bytes = cook_procedural(spec, quality)?;
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            spec.name,
            std::process::id(),
            TMP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let written = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, &bytes))
            .and_then(|_| publish(&tmp, &path));
        let _ = std::fs::remove_file(&tmp);
        if written.is_ok() {
            return Ok(TextureSource::Path(Arc::new(path)));
        }
        return Ok(TextureSource::Bytes(bytes.into()));
    }
    Ok(TextureSource::Bytes(cook_procedural(spec, quality)?.into()))
}

/// Temp-file names unique within the process (threads cook at once).
static TMP_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Puts the cooked file `tmp` at `path` without replacing a good file another process (or
/// thread) put there meanwhile: the streamer checks that a registered file is the one it
/// registered, so renaming a new copy over a file someone streams from would fail their reads
/// (the bytes are the same, the file is not). A hard link fails when `path` exists; then a
/// file that reads is kept, and a broken one replaced. A file system without hard links gets
/// the rename.
fn publish(tmp: &Path, path: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if mipflow::ktx2::read_info(path, &Default::default()).is_ok() {
                Ok(())
            } else {
                std::fs::rename(tmp, path)
            }
        }
        Err(_) => std::fs::rename(tmp, path),
    }
}

/// A procedural RGBA8 test pattern: a colour checkerboard with a fine grid, a diagonal gradient and
/// thin lines, so that every mip level has detail of its own.
pub fn test_pattern(size: u32) -> image::RgbaImage {
    image::RgbaImage::from_fn(size, size, |x, y| {
        let cell = size / 8;
        let (cx, cy) = (x / cell.max(1), y / cell.max(1));
        let palette = [
            [220u8, 60, 50],
            [240, 200, 60],
            [60, 170, 90],
            [50, 110, 210],
            [170, 80, 200],
            [240, 240, 240],
        ];
        let mut c = palette[((cx + 2 * cy) % 6) as usize];
        let fine = (size / 64).max(1);
        if x % (fine * 4) == 0 || y % (fine * 4) == 0 {
            c = [c[0] / 3, c[1] / 3, c[2] / 3];
        }
        if (x as i64 - y as i64).unsigned_abs() < u64::from(fine) {
            c = [20, 20, 20];
        }
        let g = (x + y) * 255 / (2 * size).max(1);
        [
            ((c[0] as u32 * 3 + g) / 4) as u8,
            ((c[1] as u32 * 3 + (255 - g)) / 4) as u8,
            c[2],
            255,
        ]
        .into()
    })
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
        let info = mipflow::ktx2::Ktx2Info::parse(&bytes, bytes.len() as u64, &Default::default())
            .unwrap();
        assert_eq!(info.levels.len(), 8);
        assert_eq!(info.width, 128);
    }

    /// Two cooks of one texture into one cache at once (two demos' first runs, parallel tests):
    /// the second keeps the first's file rather than renaming its own copy over it, so that
    /// whoever registered the first file still streams from it (a replaced file fails the
    /// streamer's check). A broken file is replaced.
    #[test]
    fn a_cached_file_someone_published_first_is_kept() {
        let dir = std::env::temp_dir().join(format!("mipflow-cache-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let spec = &demo_specs(3, 1, 64)[0];
        let TextureSource::Path(cached) =
            cached_procedural(spec, Quality::Fast, Some(&dir)).unwrap()
        else {
            panic!("not cached")
        };
        let path = cached.as_path();
        let first = mipflow::ktx2::read_info(path, &Default::default()).unwrap();
        // The second process's copy, published after the first.
        let tmp = dir.join("second.tmp");
        std::fs::write(&tmp, cook_procedural(spec, Quality::Fast).unwrap()).unwrap();
        publish(&tmp, path).unwrap();
        let now = mipflow::ktx2::read_info(path, &Default::default()).unwrap();
        assert_eq!(now.stamp, first.stamp, "the first file was replaced");
        // A broken file at the path is replaced by a good one.
        std::fs::remove_file(path).unwrap();
        std::fs::write(path, b"not a ktx2").unwrap();
        publish(&tmp, path).unwrap();
        assert!(mipflow::ktx2::read_info(path, &Default::default()).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn demo_specs_are_deterministic_and_sized() {
        let a = demo_specs(1, 200, 2048);
        assert_eq!(a, demo_specs(1, 200, 2048));
        assert_eq!(a.iter().filter(|s| s.size == 2048).count(), 13);
        assert!(a.iter().all(|s| s.size >= 64));
    }
}
