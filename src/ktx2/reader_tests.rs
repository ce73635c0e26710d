//! The reader's unit tests (beside it: reader.rs stays under the file-size limit).
use super::*;

/// A level stored as a skippable frame and then the real frame (valid per RFC 8878) decodes
/// to its bytes, by both decoders; a skippable frame cut short is an error, not a panic.
#[test]
fn a_skippable_frame_before_the_level_is_skipped() {
    let level: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    let frame = zstd::bulk::compress(&level, 3).unwrap();
    let mut data = 0x184D_2A53u32.to_le_bytes().to_vec();
    data.extend_from_slice(&5u32.to_le_bytes());
    data.extend_from_slice(b"hello");
    data.extend_from_slice(&frame);
    assert_eq!(decompress_level(&data, 0, 4096).unwrap(), level);
    let mut bounce = vec![0u8; 1000];
    let mut got = Vec::new();
    super::super::staged::decode(&data, 0, 4096, &mut bounce, &mut |b| {
        got.extend_from_slice(b);
        true
    })
    .unwrap();
    assert_eq!(got, level);
    // Cut inside the skippable frame: an error.
    assert!(decompress_level(&data[..10], 0, 4096).is_err());
}

/// Zstandard's bound saturates: a hostile header's level size near u64::MAX (limits raised
/// to 2^32 sides) is refused by the size checks, not an overflow.
#[test]
fn the_zstd_bound_saturates() {
    assert_eq!(zstd_bound(u64::MAX), u64::MAX);
    assert_eq!(zstd_bound(u64::MAX - 300), u64::MAX);
    assert_eq!(zstd_bound(0), 64);
    assert_eq!(zstd_bound(1 << 20), (1 << 20) + (1 << 12));
}

/// Memory that cannot be had is that level's typed error, never an abort (an IO worker
/// reading under the process's memory limit fails the read, and the streamer retries).
#[test]
fn a_level_buffer_that_cannot_be_had_is_an_error() {
    for bytes in [u64::MAX, 1 << 62] {
        match level_buffer(3, bytes) {
            Err(Ktx2Error::OutOfMemory { level: 3, bytes: b }) => assert_eq!(b, bytes),
            other => panic!("{bytes}: {other:?}"),
        }
    }
    assert!(level_buffer(0, 4096).unwrap().capacity() >= 4096);
    let e = Ktx2Error::OutOfMemory {
        level: 2,
        bytes: 1 << 40,
    };
    assert_eq!(
        e.to_string(),
        "level 2: out of memory for its 1099511627776 bytes"
    );
}

/// The image's shape: a cooked image's `mipflowSourceSize` (the size before it was
/// resampled to whole blocks and levels), else the texture's own size; a size that is
/// not `WxH` of two positive numbers counts as absent.
#[test]
fn the_display_aspect_is_the_source_image_s() {
    let mut info = Ktx2Info::resident(wgpu::TextureFormat::Bc7RgbaUnorm, 448, 320);
    assert_eq!(info.display_aspect(), 1.4);
    info.key_values
        .push(("mipflowSourceSize".into(), b"451x300\0".to_vec()));
    assert_eq!(info.display_aspect(), 451.0 / 300.0);
    for bad in [&b"0x300\0"[..], b"451x", b"wide", b"451x-3"] {
        info.key_values[0].1 = bad.to_vec();
        assert_eq!(info.display_aspect(), 1.4, "{bad:?}");
    }
}
