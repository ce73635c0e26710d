//! Reads straight into the upload staging ring (issue 18, "IO into staging"): a chunk lent to
//! a writer on another thread, the copies recorded from it with no CPU copy, and the chunk's way
//! back into the ring.

use mipflow::budget::Category;
use mipflow::gpu::read_texture_rgba8;
use mipflow::gpu::staging::StagingRing;

use super::common;

fn texture(ctx: &mipflow::gpu::GpuContext, w: u32, h: u32) -> mipflow::gpu::TrackedTexture {
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
