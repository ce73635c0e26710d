//! Reads straight into the upload staging ring ("IO into staging"): a chunk lent to
//! a writer on another thread, the copies recorded from it with no CPU copy, and the chunk's way
//! back into the ring.

use mipflow::Category;
use mipflow::low_level::StagingRing;
use mipflow::read_texture_rgba8;

use super::common;

fn texture(ctx: &mipflow::GpuContext, w: u32, h: u32) -> mipflow::TrackedTexture {
    ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("staged"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        },
        Category::Textures,
    )
    .expect("texture")
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed)
        .collect()
}

/// Two levels of 40x6 and 24x3 RGBA8 (rows of 160 and 96 bytes, padded to 256 in the chunk)
/// are written on another thread in pieces that cross rows, copied into textures from the
/// chunk, and read back byte for byte. While a second lease of the same chunk is out, a copy
/// waits (0 rows); once every level is dropped and the GPU is done, the chunk is the ring's
/// again (mapped, lendable) and no chunk was made beyond the first.
#[test]
fn a_lent_chunk_is_written_on_another_thread_copied_and_given_back() {
    let Some(ctx) = common::gpu() else { return };
    let mut ring = StagingRing::new(64 << 10, 4, 4);
    let (a, b) = (pattern(40 * 4 * 6, 1), pattern(24 * 4 * 3, 2));
    let mut lease = ring
        .lend(&ctx, &[(160, 6), (96, 3)], u64::MAX)
        .expect("lend")
        .expect("a chunk is lent");
    let layouts = lease.layouts().to_vec();
    assert_eq!((layouts[0].offset, layouts[0].pitch), (0, 256));
    assert_eq!((layouts[1].offset, layouts[1].pitch), (6 * 256, 256));
    let staged_bytes = ctx.ledger().bytes(Category::Staging);
    assert_eq!(staged_bytes, 64 << 10, "one chunk charged to staging");
    // A second lease packs into the same chunk (it is not written yet).
    let other = ring
        .lend(&ctx, &[(64, 2)], u64::MAX)
        .expect("lend")
        .expect("packed into the open chunk");
    assert_eq!(other.layouts()[0].offset, 6 * 256 + 3 * 256);
    assert_eq!(ring.lent_chunks(), 1);

    let (a2, b2) = (a.clone(), b.clone());
    let levels = std::thread::spawn(move || {
        {
            let mut w = lease.level(0).unwrap();
            // Pieces of 100 bytes: every row boundary is crossed inside a write.
            for piece in a2.chunks(100) {
                assert!(w.write(piece));
            }
            assert_eq!(w.written(), w.len());
            assert!(!w.write(&[0]), "a byte past the level is refused");
        }
        {
            let mut w = lease.level(1).unwrap();
            assert!(w.write(&b2));
        }
        lease.finish()
    })
    .join()
    .expect("writer thread");

    let (ta, tb) = (texture(&ctx, 40, 6), texture(&ctx, 24, 3));
    // The other lease is still out: the chunk cannot be unmapped yet.
    assert_eq!(
        ring.copy_staged(&ctx, &levels[0], ta.texture(), 0, 0, 6)
            .unwrap(),
        0
    );
    drop(other);
    assert_eq!(
        ring.copy_staged(&ctx, &levels[0], ta.texture(), 0, 0, 4)
            .unwrap(),
        4
    );
    assert_eq!(
        ring.copy_staged(&ctx, &levels[0], ta.texture(), 0, 4, 9)
            .unwrap(),
        2,
        "clamped to the level's rows"
    );
    assert_eq!(
        ring.copy_staged(&ctx, &levels[1], tb.texture(), 0, 0, 3)
            .unwrap(),
        3
    );
    // A level copied into a texture of another size is refused.
    assert!(
        ring.copy_staged(&ctx, &levels[1], ta.texture(), 0, 0, 1)
            .is_err()
    );
    ring.submit(&ctx, 1);
    ctx.wait_idle().expect("wait");
    assert_eq!(read_texture_rgba8(&ctx, ta.texture()).unwrap(), a);
    assert_eq!(read_texture_rgba8(&ctx, tb.texture()).unwrap(), b);

    // Held while a level is alive, given back when none is and the GPU is done.
    ring.recycle(1);
    assert_eq!(ring.lent_chunks(), 1, "levels still held");
    drop(levels);
    ring.recycle(1);
    ctx.wait_idle().expect("wait");
    ring.recycle(1);
    assert_eq!(ring.lent_chunks(), 0);
    assert!(!ring.busy(), "the chunk is mapped again");
    // Not lent while the room under the budget would not hold the ring's base (4 chunks)
    // beside it: the banded uploads would wait for it.
    assert!(
        ring.lend(&ctx, &[(160, 6)], 4 * (64 << 10) - 1)
            .unwrap()
            .is_none()
    );
    let again = ring.lend(&ctx, &[(160, 6)], 4 * (64 << 10)).expect("lend");
    assert!(again.is_some(), "lent again");
    assert_eq!(
        ctx.ledger().bytes(Category::Staging),
        staged_bytes,
        "the same chunk, no new one"
    );
}

/// What cannot be lent: levels larger than a chunk, and more chunks than all but one of the
/// base ones (the banded uploads keep one). A lease dropped unwritten (a cancelled read) gives
/// its chunk back still mapped, with nothing to wait for.
#[test]
fn lending_keeps_a_chunk_for_the_bands_and_a_dropped_lease_returns_at_once() {
    let Some(ctx) = common::gpu() else { return };
    let mut ring = StagingRing::new(4096, 3, 3);
    assert!(
        ring.lend(&ctx, &[(256, 17)], u64::MAX).unwrap().is_none(),
        "over a chunk"
    );
    let first = ring
        .lend(&ctx, &[(256, 16)], u64::MAX)
        .unwrap()
        .expect("first");
    let second = ring
        .lend(&ctx, &[(256, 16)], u64::MAX)
        .unwrap()
        .expect("second");
    assert!(
        ring.lend(&ctx, &[(256, 1)], u64::MAX).unwrap().is_none(),
        "the third base chunk stays for the bands"
    );
    assert_eq!(ring.lent_chunks(), 2);
    drop(first);
    drop(second);
    ring.recycle(0);
    assert_eq!(ring.lent_chunks(), 0);
    assert!(!ring.busy());
    assert_eq!(ctx.ledger().bytes(Category::Staging), 2 * 4096);
}

/// A level whose rows lie back to back in the chunk (rows of 256 bytes, or a single row) is read
/// from a file straight into the staging (`RowWriter::read_at`, one `pread`), from where the
/// level's entry says; a level whose rows the chunk pads is not (`None`: its bytes go through
/// `write`). A file that ends inside the level is an `UnexpectedEof` error, with what was read
/// counted. Each level is copied into a texture and read back byte for byte.
#[cfg(unix)]
#[test]
fn a_level_with_unpadded_rows_is_read_from_a_file_straight_into_the_staging() {
    use std::io::Write;
    let Some(ctx) = common::gpu() else { return };
    let mut ring = StagingRing::new(64 << 10, 4, 4);
    // 64x3 RGBA8: rows of 256 bytes; 40x6: rows of 160, padded; 24x1: one row of 96.
    let (a, b, c) = (
        pattern(64 * 4 * 3, 3),
        pattern(40 * 4 * 6, 4),
        pattern(24 * 4, 5),
    );
    let mut file = tempfile::tempfile().expect("temp file");
    let junk = vec![0xEEu8; 100];
    for part in [&junk, &a, &b, &c] {
        file.write_all(part).expect("write");
    }
    let (at_a, at_b, at_c) = (
        100u64,
        100 + a.len() as u64,
        100 + (a.len() + b.len()) as u64,
    );
    let mut lease = ring
        .lend(&ctx, &[(256, 3), (160, 6), (96, 1), (256, 3)], u64::MAX)
        .expect("lend")
        .expect("a chunk is lent");
    {
        let mut w = lease.level(0).unwrap();
        assert!(matches!(w.read_at(&file, at_a), Some(Ok(()))));
        assert_eq!(w.written(), a.len());
        assert!(!w.write(&[0]), "the level is whole");
    }
    {
        let mut w = lease.level(1).unwrap();
        assert!(
            w.read_at(&file, at_b).is_none(),
            "padded rows: not read directly"
        );
        assert_eq!(w.written(), 0);
        assert!(w.write(&b));
    }
    {
        let mut w = lease.level(2).unwrap();
        assert!(matches!(w.read_at(&file, at_c), Some(Ok(()))));
        assert_eq!(w.written(), c.len());
    }
    {
        // 200 bytes before the end: a short read, then the end of the file.
        let end = at_c + c.len() as u64;
        let mut w = lease.level(3).unwrap();
        match w.read_at(&file, end - 200) {
            Some(Err(e)) => assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof),
            other => panic!("expected the end of the file, got {other:?}"),
        }
        assert_eq!(w.written(), 200);
        // Past the end: nothing read.
        let mut w = lease.level(3).unwrap();
        assert!(matches!(w.read_at(&file, end + 10), Some(Err(_))));
        assert_eq!(w.written(), 0);
    }
    let levels = lease.finish();
    let (ta, tb, tc) = (
        texture(&ctx, 64, 3),
        texture(&ctx, 40, 6),
        texture(&ctx, 24, 1),
    );
    for (level, t, rows) in [
        (&levels[0], &ta, 3),
        (&levels[1], &tb, 6),
        (&levels[2], &tc, 1),
    ] {
        let copied = ring
            .copy_staged(&ctx, level, t.texture(), 0, 0, rows)
            .expect("copy");
        assert_eq!(copied, rows);
    }
    ring.submit(&ctx, 1);
    ctx.wait_idle().expect("wait");
    assert_eq!(read_texture_rgba8(&ctx, ta.texture()).unwrap(), a);
    assert_eq!(read_texture_rgba8(&ctx, tb.texture()).unwrap(), b);
    assert_eq!(read_texture_rgba8(&ctx, tc.texture()).unwrap(), c);
}

/// `(row bytes, rows)` of the first `count` levels of a file, as a lease lays them out.
fn level_rows(info: &mipflow::ktx2::Ktx2Info, count: usize) -> Vec<(u32, u32)> {
    (0..count)
        .map(|l| {
            let (w, h) = info.level_dims(l);
            mipflow::low_level::level_rows_of(info.format, w, h)
        })
        .collect()
}

/// A BC7 chain in a KTX2 file on disk, read by `TextureSource::read_levels_staged` (the IO
/// workers' path: the large levels straight from the file, the small padded ones through the
/// buffer), lands in the texture byte for byte as written; the same file in memory too. A file
/// cut short after its header was read is a truncation error naming the level, not a panic.
#[test]
fn a_ktx2_file_is_read_into_the_staging_byte_for_byte() {
    use mipflow::TextureSource;
    use mipflow::ktx2::{EncodedTexture, ReadLimits, write_ktx2};
    use std::sync::atomic::AtomicBool;
    let Some(ctx) = common::gpu() else { return };
    if !ctx.bc_supported() {
        eprintln!("skipped: no BC formats on this adapter");
        return;
    }
    let format = wgpu::TextureFormat::Bc7RgbaUnorm;
    // 256x64: rows of 1024, 512 and 256 bytes (read straight from the file), then padded
    // ones; 80x64: rows of 320 bytes, padded from level 0 (read through the buffer).
    for (w, h) in [(256u32, 64u32), (80, 64)] {
        let count = mipflow::low_level::full_mip_count(w, h);
        let levels: Vec<Vec<u8>> = (0..count)
            .map(|l| {
                let (lw, lh) = ((w >> l).max(1), (h >> l).max(1));
                let n = mipflow::low_level::level_bytes(format, lw, lh).unwrap() as usize;
                pattern(n, l as u8)
            })
            .collect();
        let encoded = EncodedTexture {
            format,
            width: w,
            height: h,
            levels: levels.clone(),
            key_values: Vec::new(),
        };
        let mut bytes = Vec::new();
        write_ktx2(&mut bytes, &encoded, None, "staging test").expect("write");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("chain.ktx2");
        std::fs::write(&path, &bytes).expect("write file");
        for source in [
            TextureSource::path(&path),
            TextureSource::bytes(bytes.clone()),
        ] {
            let info = source.info(&ReadLimits::default()).expect("info");
            let rows = level_rows(&info, levels.len());
            let mut ring = StagingRing::new(256 << 10, 2, 2);
            let lease = ring.lend(&ctx, &rows, u64::MAX).unwrap().expect("lent");
            let mut bounce = vec![0u8; 4096];
            let staged = source
                .read_levels_staged(
                    &info,
                    0..count as u8,
                    &AtomicBool::new(false),
                    lease,
                    &mut bounce,
                )
                .expect("read");
            let tex = ctx
                .create_texture(
                    &wgpu::TextureDescriptor {
                        label: Some("staged chain"),
                        size: wgpu::Extent3d {
                            width: w,
                            height: h,
                            depth_or_array_layers: 1,
                        },
                        mip_level_count: count,
                        sample_count: 1,
                        dimension: wgpu::TextureDimension::D2,
                        format,
                        usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC,
                        view_formats: &[],
                    },
                    Category::Textures,
                )
                .expect("texture");
            for (l, s) in staged.iter().enumerate() {
                let n = s.layout().rows;
                assert_eq!(
                    ring.copy_staged(&ctx, s, tex.texture(), l as u32, 0, n)
                        .unwrap(),
                    n
                );
            }
            ring.submit(&ctx, 1);
            ctx.wait_idle().expect("wait");
            for (l, want) in levels.iter().enumerate() {
                let got = mipflow::low_level::read_level(&ctx, tex.texture(), l as u32).unwrap();
                assert!(
                    got == *want,
                    "{}: level {l} of {w}x{h} differs",
                    source.describe()
                );
            }
        }
        if w == 256 {
            // Levels 0 to 2 (rows of 1024, 512 and 256 bytes) come from the file without the
            // buffer: with none, the buffered path could not read a byte.
            let source = TextureSource::path(&path);
            let info = source.info(&ReadLimits::default()).expect("info");
            let rows = level_rows(&info, 3);
            let mut ring = StagingRing::new(256 << 10, 2, 2);
            let lease = ring.lend(&ctx, &rows, u64::MAX).unwrap().expect("lent");
            let read =
                source.read_levels_staged(&info, 0..3, &AtomicBool::new(false), lease, &mut []);
            assert!(read.is_ok(), "{read:?}");
            // Staging laid out for one row fewer than level 0 has: refused, not a partial read
            // nor one that runs into the next level.
            let (row, n) = rows[0];
            let lease = ring
                .lend(&ctx, &[(row, n - 1)], u64::MAX)
                .unwrap()
                .expect("lent");
            let err = source
                .read_levels_staged(&info, 0..1, &AtomicBool::new(false), lease, &mut [0u8; 64])
                .expect_err("a staging of the wrong size")
                .to_string();
            assert!(err.contains("level 0"), "{err}");
        }
        // The file cut inside level 0 (stored last) after its header was read.
        let source = TextureSource::path(&path);
        let mut info = source.info(&ReadLimits::default()).expect("info");
        let cut = info.levels[0].offset + 100;
        std::fs::write(&path, &bytes[..cut as usize]).expect("cut");
        let rows = vec![mipflow::low_level::level_rows_of(format, w, h)];
        let mut ring = StagingRing::new(256 << 10, 2, 2);
        // The file's stamp (its length) says it changed, before anything is read.
        let lease = ring.lend(&ctx, &rows, u64::MAX).unwrap().expect("lent");
        let err = source
            .read_levels_staged(&info, 0..1, &AtomicBool::new(false), lease, &mut [0u8; 64])
            .expect_err("a cut file")
            .to_string();
        assert!(err.contains("changed since it was registered"), "{err}");
        // Without the stamp (a reader's source has none), the read itself finds the cut.
        info.stamp = None;
        let lease = ring.lend(&ctx, &rows, u64::MAX).unwrap().expect("lent");
        let err = source
            .read_levels_staged(&info, 0..1, &AtomicBool::new(false), lease, &mut [0u8; 64])
            .expect_err("a cut file")
            .to_string();
        assert!(
            err.contains("level 0") && err.contains("truncated") && err.contains(&cut.to_string()),
            "{err}"
        );
    }
}
