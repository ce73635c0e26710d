//! Files a game ships in other containers than mipflow's own: DDS (written by NVIDIA Texture
//! Tools and by a Python writer around blocks from the reference Basis transcoder; see
//! tests/data/dds/README.md) streams through the budget with the levels on the GPU equal to the
//! file's blocks and the ledger equal to the format's sizes.

use crate::common;

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
    let mut handles = Vec::new();
    let mut expected_bytes = 0;
    let mut files = Vec::new();
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
