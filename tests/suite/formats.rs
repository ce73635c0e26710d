//! Every BCn format a game ships: each streams through the budget on a real adapter
//! (lavapipe in CI) with the levels the GPU holds equal to the file's blocks and the ledger's
//! bytes equal to the format's sizes; the cook writes each format, read back by the `ktx2` crate
//! (another reader than ours) with the right vkFormat and DFD colour model and decoding close to
//! the source; `KTXorientation` "ru" draws the same picture as its "rd" twin; a zstd file whose
//! DFD says `bytesPlane0 = 0` loads.

use crate::common;
use crate::common::psnr;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mipflow::FrameTiming;
use mipflow::ktx2::{BlockFormat, EncodedTexture, FORMATS, Ktx2Info, write_ktx2};
use mipflow::{Budget, Category};
use mipflow::{BudgetManager, ManagerConfig};
use mipflow::{TextureHandle, TextureOptions, TextureSource};
use mipflow_cook::{BlockKind, ColorSpace, CookOptions, Resize, cook_image, decode_blocks};

const MIB: u64 = 1 << 20;

/// A `w x h` texture of `format` with a full chain of arbitrary blocks (every byte pattern is a
/// block the GPU copies as it is; streaming never looks inside).
fn arbitrary(format: wgpu::TextureFormat, w: u32, h: u32, seed: u32) -> EncodedTexture {
    let levels = mipflow::low_level::full_mip_count(w, h);
    EncodedTexture {
        format,
        width: w,
        height: h,
        levels: (0..levels)
            .map(|l| {
                let n = mipflow::ktx2::BlockFormat::from_wgpu(format)
                    .unwrap()
                    .level_size((w >> l).max(1), (h >> l).max(1));
                (0..n)
                    .map(|k| (k as u32).wrapping_mul(seed | 1).wrapping_add(seed) as u8)
                    .collect()
            })
            .collect(),
        key_values: Vec::new(),
    }
}

/// Writes `tex` to `path` as `vk_format` (the writer stores BC1 as its RGBA variant: the RGB
/// ones are the same blocks with another header value).
fn write_as(path: &Path, tex: &EncodedTexture, vk_format: u32, zstd: Option<i32>) {
    let mut bytes = Vec::new();
    write_ktx2(&mut bytes, tex, zstd, "mipflow test").unwrap();
    bytes[12..16].copy_from_slice(&vk_format.to_le_bytes());
    std::fs::write(path, bytes).unwrap();
}

/// A file's description and every level, as the streamer's IO reads them.
fn read_all(path: &Path) -> (Ktx2Info, Vec<Vec<u8>>) {
    let info = mipflow::ktx2::read_info(path, &Default::default()).unwrap();
    let levels = TextureSource::Path(Arc::new(path.to_path_buf()))
        .read_levels(
            &info,
            0..info.levels.len() as u8,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
    (info, levels)
}

#[test]
fn every_block_format_streams_with_its_own_sizes() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut mc = ManagerConfig::default();
    mc.render_targets = false;
    // Each frame waits for its reads: the frame bound below counts steps, not time.
    mc.stream = mc.stream.with_deterministic(true);
    let mut m = BudgetManager::with_context(ctx, mc);
    m.set_budget(Budget::bytes(256 * MIB));
    let mut files: Vec<(PathBuf, TextureHandle, &BlockFormat)> = Vec::new();
    let mut expected_bytes = 0u64;
    for (i, f) in FORMATS.iter().enumerate() {
        let (w, h) = (64, 32);
        let tex = arbitrary(f.format, w, h, i as u32 * 7 + 3);
        expected_bytes += tex.levels.iter().map(|l| l.len() as u64).sum::<u64>();
        let path = dir.path().join(format!("{}.ktx2", f.name));
        // Every other one zstd-supercompressed: both read paths, every format.
        write_as(&path, &tex, f.vk_format, (i % 2 == 1).then_some(3));
        let info = mipflow::ktx2::read_info(&path, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert_eq!(info.format, f.format, "{}", f.name);
        for (l, level) in tex.levels.iter().enumerate() {
            assert_eq!(
                info.level_size(l),
                level.len() as u64,
                "{} level {l}",
                f.name
            );
        }
        let hd = m
            .add_texture(
                TextureSource::Path(Arc::new(path.clone())),
                TextureOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        files.push((path, hd, f));
    }
    // Everything wanted at level 0 until everything is resident.
    let mut frames = 0;
    loop {
        for (_, hd, _) in &files {
            m.add_demand(*hd, 0.0, 10_000.0);
        }
        m.frame((640, 360), FrameTiming::default()).unwrap();
        m.context().queue().submit([]);
        m.end_frame();
        frames += 1;
        let done = files
            .iter()
            .all(|(_, hd, _)| m.streamer().resident_level(*hd) == Some(0));
        if done {
            break;
        }
        assert!(frames < 200, "not every format became resident");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // The ledger: the formats' own sizes (8-byte blocks for BC1 and BC4), plus the fallback.
    let fallback = 4;
    assert_eq!(
        m.context().ledger().bytes(Category::Textures),
        expected_bytes + fallback
    );
    for (path, hd, f) in &files {
        let (_, levels) = read_all(path);
        let tex = m.streamer().resident_texture(*hd).unwrap();
        assert_eq!(tex.format(), f.format, "{}", f.name);
        for (l, want) in levels.iter().enumerate() {
            let got = mipflow::low_level::read_level(m.context(), tex, l as u32).unwrap();
            assert!(got == *want, "{}: level {l} differs on the GPU", f.name);
        }
    }
}

/// A 96x64 test card: gradients, a disc, stripes (colours in every channel).
fn card() -> image::DynamicImage {
    image::DynamicImage::ImageRgba8(image::RgbaImage::from_fn(96, 64, |x, y| {
        let disc = ((x as i32 - 48).pow(2) + (y as i32 - 32).pow(2)) < 400;
        let stripe = (x / 6) % 2 == 0;
        image::Rgba([
            (x * 255 / 95) as u8,
            if disc { 230 } else { (y * 255 / 63) as u8 },
            if stripe { 200 } else { 40 },
            255,
        ])
    }))
}

#[test]
fn the_cook_writes_every_format_other_readers_read() {
    let img = card();
    let src = img.to_rgba8();
    // Linear colour, so that every format's stored values are the image's own bytes.
    use wgpu::TextureFormat as F;
    const RGB: [bool; 4] = [true, true, true, false];
    const RGBA: [bool; 4] = [true; 4];
    const R: [bool; 4] = [true, false, false, false];
    const RG: [bool; 4] = [true, true, false, false];
    #[rustfmt::skip]
    let cases = [
        (BlockKind::Bc7, F::Bc7RgbaUnorm, 145, 134, RGB, 40.0),
        (BlockKind::Bc1, F::Bc1RgbaUnorm, 133, 128, RGB, 30.0),
        (BlockKind::Bc3, F::Bc3RgbaUnorm, 137, 130, RGBA, 30.0),
        (BlockKind::Bc4, F::Bc4RUnorm, 139, 131, R, 40.0),
        (BlockKind::Bc5, F::Bc5RgUnorm, 141, 132, RG, 40.0),
        (BlockKind::Bc6h, F::Bc6hRgbUfloat, 143, 133, RGB, 35.0),
    ];
    for (kind, format, vk, model, mask, min_db) in cases {
        let opts = CookOptions {
            color: ColorSpace::Linear,
            resize: Resize::Keep,
            block: Some(kind),
            ..CookOptions::default()
        };
        let tex = cook_image(&img, &opts).unwrap();
        assert_eq!(tex.format, format, "{kind:?}");
        assert_eq!(tex.levels.len(), 7);
        let mut bytes = Vec::new();
        write_ktx2(&mut bytes, &tex, Some(3), "mipflow test").unwrap();
        // Another reader: the ktx2 crate.
        let r = ktx2::Reader::new(bytes.as_slice()).unwrap();
        assert_eq!(r.header().format.map(|f| f.value()), Some(vk), "{kind:?}");
        assert_eq!(r.color_model().map(|m| m.value()), Some(model), "{kind:?}");
        assert_eq!(r.levels().len(), 7);
        // Ours.
        let info = Ktx2Info::parse(&bytes, bytes.len() as u64, &Default::default()).unwrap();
        assert_eq!(info.format, format);
        // The blocks decode close to the source (the channels the format keeps).
        let decoded = decode_blocks(format, &tex.levels[0], 96, 64);
        let db = psnr(&src, &decoded, mask);
        assert!(db >= min_db, "{kind:?}: {db:.1} dB");
    }
    // A normal map is BC5 unless told otherwise.
    let normal = CookOptions {
        normal_map: true,
        ..CookOptions::default()
    };
    assert_eq!(normal.format(), wgpu::TextureFormat::Bc5RgUnorm);
}

#[test]
fn bytes_plane0_zero_is_accepted_in_a_supercompressed_file_only() {
    let tex = arbitrary(wgpu::TextureFormat::Bc7RgbaUnorm, 32, 32, 5);
    for zstd in [Some(3), None] {
        let mut bytes = Vec::new();
        write_ktx2(&mut bytes, &tex, zstd, "mipflow test").unwrap();
        // The DFD starts at dfdByteOffset (header bytes 48..52); bytesPlane0 is its byte
        // 4 (dfdTotalSize) + 16 (its offset in the Basic block).
        let dfd = u32::from_le_bytes(bytes[48..52].try_into().unwrap()) as usize;
        assert_eq!(bytes[dfd + 4 + 16], 16);
        bytes[dfd + 4 + 16] = 0;
        let parsed = Ktx2Info::parse(&bytes, bytes.len() as u64, &Default::default());
        match zstd {
            Some(_) => {
                let info = parsed.expect("an older zstd writer's bytesPlane0 = 0 loads");
                assert_eq!(info.level_size(0), 32 * 32);
            }
            None => {
                let e = parsed.expect_err("an uncompressed file must say its block size");
                assert!(e.to_string().contains("bytesPlane0"), "{e}");
            }
        }
    }
}

#[test]
fn orientation_ru_draws_the_same_picture_as_rd() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let img = card();
    let opts = CookOptions {
        resize: Resize::Keep,
        ..CookOptions::default()
    };
    let rd = cook_image(&img, &opts).unwrap();
    // The bottom-up twin: rows stored last first, and said so.
    let mut ru = cook_image(&img.flipv(), &opts).unwrap();
    ru.key_values
        .push(("KTXorientation".into(), b"ru\0".to_vec()));
    let dir = tempfile::tempdir().unwrap();
    let mut shots = Vec::new();
    for (name, tex) in [("rd", &rd), ("ru", &ru)] {
        let path = dir.path().join(format!("{name}.ktx2"));
        let mut f = std::fs::File::create(&path).unwrap();
        write_ktx2(&mut f, tex, None, "mipflow test").unwrap();
        drop(f);
        let (info, levels) = read_all(&path);
        assert_eq!(info.orientation().flip_y, name == "ru");
        for o in [info.orientation(), Default::default()] {
            shots.push(
                mipflow::testing::render_textured_quad_oriented(
                    &ctx,
                    info.format,
                    (info.width, info.height),
                    &levels,
                    (160, 120),
                    o,
                )
                .unwrap(),
            );
        }
    }
    // shots: rd as read, rd again, ru as read (flipped), ru ignoring its orientation.
    let rgb = [true, true, true, false];
    let db = psnr(&shots[0], &shots[2], rgb);
    assert!(
        db >= 35.0,
        "ru drawn with its orientation against rd: {db:.1} dB"
    );
    let ignored = psnr(&shots[0], &shots[3], rgb);
    assert!(
        ignored < db - 10.0,
        "ru drawn upside down should differ: {ignored:.1} dB against {db:.1}"
    );
}

/// `add_textures` registers a batch of every format in one call, with a file that is no KTX2
/// in the middle: one result per texture in order (that one refused, the others not), and
/// before any frame the GPU already holds each floor equal to the file's blocks, copied from
/// one staging buffer (charged while the GPU copies it), not one `write_texture` a level.
#[test]
fn a_batch_of_every_format_is_registered_with_its_floors_on_the_gpu() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut mc = ManagerConfig::default();
    mc.render_targets = false;
    mc.budget = Budget::bytes(256 * MIB);
    let mut m = BudgetManager::with_context(ctx, mc);
    let mut paths = Vec::new();
    for (i, f) in FORMATS.iter().enumerate() {
        let tex = arbitrary(f.format, 64, 32, i as u32 * 5 + 1);
        let path = dir.path().join(format!("{}.ktx2", f.name));
        write_as(&path, &tex, f.vk_format, (i % 2 == 0).then_some(3));
        paths.push(path);
    }
    let mut batch: Vec<(TextureSource, TextureOptions)> = paths
        .iter()
        .map(|p| {
            (
                TextureSource::bytes(std::fs::read(p).unwrap()),
                TextureOptions::default(),
            )
        })
        .collect();
    let bad = 5;
    batch.insert(
        bad,
        (
            TextureSource::bytes(b"not a KTX2 file".to_vec()),
            TextureOptions::default(),
        ),
    );
    let results = m.add_textures(batch);
    assert_eq!(results.len(), FORMATS.len() + 1);
    assert!(results[bad].is_err());
    let handles: Vec<TextureHandle> = results
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i != bad)
        .map(|(_, r)| r.unwrap())
        .collect();
    // One staging buffer for the batch, charged while the GPU copies it (at least every
    // floor's rows, padded), then released.
    let staging = m.context().ledger().snapshot().by_category.staging;
    assert!(staging.peak >= 17 * 1024, "staging peak {}", staging.peak);
    let mut floors = 0u64;
    for ((path, h), f) in paths.iter().zip(&handles).zip(FORMATS) {
        let (_, levels) = read_all(path);
        let first = m.streamer().resident_level(*h).unwrap() as usize;
        assert!(
            first > 0 && first < levels.len(),
            "{}: floor {first}",
            f.name
        );
        let tex = m.streamer().resident_texture(*h).unwrap();
        for (k, want) in levels[first..].iter().enumerate() {
            let got = mipflow::low_level::read_level(m.context(), tex, k as u32).unwrap();
            assert!(
                got == *want,
                "{}: level {} differs on the GPU",
                f.name,
                first + k
            );
            floors += want.len() as u64;
        }
    }
    assert_eq!(m.context().ledger().bytes(Category::Textures), floors);
    let _ = m.context().wait_idle();
    m.poll();
    assert_eq!(m.context().ledger().bytes(Category::Staging), 0);
}

/// `add_textures` under a budget with room for every floor but not for one staging buffer of
/// them all: the floors go in parts that fit (the rest one level at a time), every floor lands
/// on the GPU equal to the file's blocks, and the ledger's total never passes the budget.
#[test]
fn a_batch_under_a_tight_budget_splits_its_staging_and_stays_within_it() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut mc = ManagerConfig::default();
    mc.render_targets = false;
    // 24 floors of 720 bytes (17 KiB) and some room left: far less than the 60 KiB their rows
    // take padded in one staging buffer.
    let budget = 24 * 1024;
    mc.budget = Budget::bytes(budget);
    let mut m = BudgetManager::with_context(ctx, mc);
    let files: Vec<Vec<u8>> = (0..24)
        .map(|i| {
            let tex = arbitrary(wgpu::TextureFormat::Bc7RgbaUnorm, 64, 32, i * 3 + 2);
            let mut bytes = Vec::new();
            write_ktx2(&mut bytes, &tex, None, "mipflow test").unwrap();
            bytes
        })
        .collect();
    let handles: Vec<TextureHandle> = m
        .add_textures(
            files
                .iter()
                .map(|b| (TextureSource::bytes(b.clone()), TextureOptions::default())),
        )
        .into_iter()
        .map(Result::unwrap)
        .collect();
    for (bytes, h) in files.iter().zip(&handles) {
        let source = TextureSource::bytes(bytes.clone());
        let info = source.info(&Default::default()).unwrap();
        let levels = source
            .read_levels(
                &info,
                0..info.levels.len() as u8,
                &std::sync::atomic::AtomicBool::new(false),
            )
            .unwrap();
        let first = m.streamer().resident_level(*h).unwrap() as usize;
        assert_eq!(first, 1, "every floor made resident");
        let tex = m.streamer().resident_texture(*h).unwrap();
        for (k, want) in levels[first..].iter().enumerate() {
            let got = mipflow::low_level::read_level(m.context(), tex, k as u32).unwrap();
            assert!(got == *want, "level {} differs on the GPU", first + k);
        }
    }
    let snap = m.context().ledger().snapshot();
    assert!(
        snap.peak_bytes <= budget,
        "peak {} over {budget}",
        snap.peak_bytes
    );
    assert!(snap.by_category.staging.peak > 0, "some floors were staged");
}
