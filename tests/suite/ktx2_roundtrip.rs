//! The KTX2 writer against the specification's layout, our reader, and the ktx2 crate's reader.

use std::io::Cursor;

use mipflow::ktx2::{
    EncodedTexture, Ktx2Error, Ktx2Info, ReadLimits, Supercompression, full_level_count,
    header_region_len, level_dims, level_size, read_info, read_level, validate, write_ktx2,
};

/// Deterministic pseudo-random bytes (xorshift), so level data is incompressible and distinct.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn texture(width: u32, height: u32, srgb: bool) -> EncodedTexture {
    let levels = (0..full_level_count(width, height) as usize)
        .map(|i| {
            let (w, h) = level_dims(width, height, i);
            noise(
                level_size(wgpu::TextureFormat::Bc7RgbaUnorm, w, h) as usize,
                i as u64 + 1,
            )
        })
        .collect();
    EncodedTexture {
        format: if srgb {
            wgpu::TextureFormat::Bc7RgbaUnormSrgb
        } else {
            wgpu::TextureFormat::Bc7RgbaUnorm
        },
        width,
        height,
        levels,
        key_values: vec![("mipflow.test".into(), b"hello\0".to_vec())],
    }
}

fn write(tex: &EncodedTexture, zstd: Option<i32>) -> Vec<u8> {
    let mut out = Vec::new();
    write_ktx2(&mut out, tex, zstd, "mipflow test").expect("write");
    out
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// Our reader and the ktx2 crate's reader both return exactly the written levels, with and without
/// Zstandard, for power-of-two, odd and 1x1 sizes, in both colour spaces.
#[test]
fn both_readers_read_back_identical_levels() {
    for &(w, h) in &[(1, 1), (3, 5), (8, 8), (64, 32), (1000, 600), (13, 1)] {
        for srgb in [false, true] {
            for zstd in [None, Some(3), Some(19)] {
                let tex = texture(w, h, srgb);
                let bytes = write(&tex, zstd);
                let info = Ktx2Info::parse(&bytes, bytes.len() as u64, &ReadLimits::default())
                    .unwrap_or_else(|e| panic!("{w}x{h} zstd {zstd:?}: {e}"));
                assert_eq!((info.width, info.height), (w, h));
                assert_eq!(info.format, tex.format);
                assert_eq!(info.levels.len(), tex.levels.len());
                assert_eq!(
                    info.supercompression,
                    if zstd.is_some() {
                        Supercompression::Zstd
                    } else {
                        Supercompression::None
                    }
                );
                let mut cur = Cursor::new(&bytes);
                for (i, level) in tex.levels.iter().enumerate() {
                    assert_eq!(
                        &read_level(&mut cur, &info, i).expect("read_level"),
                        level,
                        "level {i}"
                    );
                }

                let reader = ktx2::Reader::new(&bytes[..]).expect("ktx2 crate reads our file");
                let header = reader.header();
                assert_eq!(header.pixel_width, w);
                assert_eq!(header.pixel_height, h);
                assert_eq!(
                    header.format.map(|f| f.value()),
                    Some(if srgb { 146 } else { 145 })
                );
                let theirs: Vec<Vec<u8>> = reader
                    .levels()
                    .map(|l| match zstd {
                        Some(_) => {
                            zstd::bulk::decompress(l.data, l.uncompressed_byte_length as usize)
                                .unwrap()
                        }
                        None => l.data.to_vec(),
                    })
                    .collect();
                assert_eq!(theirs, tex.levels);
                assert_eq!(reader.writer(), Some("mipflow test\0"));
            }
        }
    }
}

/// Levels are stored smallest first, each at a multiple of 16 without supercompression; the DFD
/// follows the level index, the key/value data follows the DFD, there is no SGD.
#[test]
fn layout_follows_the_specification() {
    let tex = texture(37, 21, true);
    let bytes = write(&tex, None);
    let n = tex.levels.len();
    assert_eq!(u32_at(&bytes, 40) as usize, n);
    assert_eq!(u32_at(&bytes, 16), 1, "typeSize");
    assert_eq!(u32_at(&bytes, 36), 1, "faceCount");
    let dfd_off = u32_at(&bytes, 48) as usize;
    assert_eq!(dfd_off, 80 + 24 * n);
    let dfd_len = u32_at(&bytes, 52) as usize;
    assert_eq!(dfd_len, 44);
    assert_eq!(
        u32_at(&bytes, 56) as usize,
        dfd_off + dfd_len,
        "KVD follows the DFD"
    );
    assert_eq!(u64_at(&bytes, 64), 0);
    assert_eq!(u64_at(&bytes, 72), 0);
    let offsets: Vec<u64> = (0..n).map(|i| u64_at(&bytes, 80 + 24 * i)).collect();
    for i in 0..n {
        assert_eq!(offsets[i] % 16, 0, "level {i} aligned");
        if i + 1 < n {
            assert!(
                offsets[i + 1] < offsets[i],
                "level {} stored before level {i}",
                i + 1
            );
        }
    }
    let last = offsets[0] as usize + tex.levels[0].len();
    assert_eq!(last, bytes.len(), "level 0 ends the file");
    // The DFD is the ktx2 crate's Basic block for BC7 SRGB.
    let (basic, _) = ktx2::dfd::Basic::from_format(ktx2::Format::BC7_SRGB_BLOCK).unwrap();
    let block = ktx2::dfd::Block::Basic(basic).to_vec();
    assert_eq!(&bytes[dfd_off + 4..dfd_off + dfd_len], &block[..]);
    // Basic block fields that matter for BC7.
    let b = &bytes[dfd_off + 4 + 8..];
    assert_eq!(b[0], 134, "colour model BC7");
    assert_eq!(b[2], 2, "transfer sRGB");
    assert_eq!(&b[4..8], &[3, 3, 0, 0], "4x4x1 blocks");
    assert_eq!(b[8], 16, "16 bytes per block");
}

/// Metadata: KTXorientation "rd", KTXwriter, caller's entries, sorted; KTXwriterScParams with zstd.
#[test]
fn metadata_is_written_sorted() {
    let tex = texture(16, 16, false);
    let bytes = write(&tex, Some(5));
    let info = Ktx2Info::parse(&bytes, bytes.len() as u64, &ReadLimits::default()).unwrap();
    let keys: Vec<&str> = info.key_values.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "KTXorientation",
            "KTXwriter",
            "KTXwriterScParams",
            "mipflow.test"
        ]
    );
    assert_eq!(info.key_value_str("KTXorientation"), Some("rd"));
    assert_eq!(info.key_value_str("KTXwriter"), Some("mipflow test"));
    assert_eq!(info.key_value_str("KTXwriterScParams"), Some("--zcmp 5"));
    assert_eq!(info.key_value("mipflow.test"), Some(&b"hello\0"[..]));
    let reader = ktx2::Reader::new(&bytes[..]).unwrap();
    let theirs: Vec<(&str, &[u8])> = reader.key_value_data().collect();
    assert_eq!(theirs.len(), 4);
    assert_eq!(reader.writer(), Some("mipflow test\0"));
}

/// Zstandard shrinks compressible levels and records both lengths.
#[test]
fn zstd_round_trip_of_compressible_levels() {
    let mut tex = texture(256, 128, true);
    for level in &mut tex.levels {
        for (i, b) in level.iter_mut().enumerate() {
            *b = (i % 16) as u8;
        }
    }
    let plain = write(&tex, None);
    let packed = write(&tex, Some(9));
    assert!(
        packed.len() * 10 < plain.len(),
        "{} vs {}",
        packed.len(),
        plain.len()
    );
    let info = Ktx2Info::parse(&packed, packed.len() as u64, &ReadLimits::default()).unwrap();
    let mut cur = Cursor::new(&packed);
    for (i, l) in info.levels.iter().enumerate() {
        assert!(l.byte_length < l.uncompressed_byte_length || l.uncompressed_byte_length <= 64);
        assert_eq!(l.uncompressed_byte_length, tex.levels[i].len() as u64);
        assert_eq!(read_level(&mut cur, &info, i).unwrap(), tex.levels[i]);
    }
}

/// `read_info` reads only the header region and returns the same as parsing the whole file.
#[test]
fn read_info_matches_parse_and_reads_only_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let tex = texture(100, 60, true);
    let bytes = write(&tex, Some(3));
    let path = dir.path().join("t.ktx2");
    std::fs::write(&path, &bytes).unwrap();
    let mut info = read_info(&path, &ReadLimits::default()).unwrap();
    let full = Ktx2Info::parse(&bytes, bytes.len() as u64, &ReadLimits::default()).unwrap();
    // The file's stamp is the one difference: bytes in memory have none.
    assert_eq!(info.stamp.map(|s| s.len), Some(bytes.len() as u64));
    assert_eq!(full.stamp, None);
    info.stamp = None;
    assert_eq!(info, full);
    let region = header_region_len(&bytes[..80], &ReadLimits::default()).unwrap();
    assert_eq!(region, info.header_len);
    assert!(region < info.levels.last().unwrap().offset + 1);
    // Parsing from just the header region works, given the real file length.
    let again = Ktx2Info::parse(
        &bytes[..region as usize],
        bytes.len() as u64,
        &ReadLimits::default(),
    )
    .unwrap();
    assert_eq!(again, full);
    // Streaming one level from the file.
    let mut f = std::fs::File::open(&path).unwrap();
    assert_eq!(read_level(&mut f, &info, 3).unwrap(), tex.levels[3]);
    assert!(matches!(
        read_level(&mut f, &info, 99),
        Err(Ktx2Error::NoSuchLevel { level: 99, .. })
    ));
}

/// Limits are enforced: a smaller `max_dimension` or `max_file_bytes` rejects a valid file.
#[test]
fn limits_are_enforced() {
    let tex = texture(64, 64, false);
    let bytes = write(&tex, None);
    let mut limits = ReadLimits::default();
    limits.max_dimension = 32;
    assert!(matches!(
        Ktx2Info::parse(&bytes, bytes.len() as u64, &limits),
        Err(Ktx2Error::TooLarge {
            width: 64,
            height: 64,
            max: 32
        })
    ));
    let mut limits = ReadLimits::default();
    limits.max_file_bytes = 100;
    assert!(matches!(
        Ktx2Info::parse(&bytes, bytes.len() as u64, &limits),
        Err(Ktx2Error::FileTooLarge { max: 100, .. })
    ));
}

/// A level index that lies about its sizes is caught by `read_level` even if the caller edits the
/// public fields of a parsed `Ktx2Info` (no unbounded allocation).
#[test]
fn read_level_rechecks_sizes() {
    let tex = texture(8, 8, false);
    let bytes = write(&tex, None);
    let mut info = Ktx2Info::parse(&bytes, bytes.len() as u64, &ReadLimits::default()).unwrap();
    info.levels[0].byte_length = u64::MAX;
    assert!(matches!(
        read_level(&mut Cursor::new(&bytes), &info, 0),
        Err(Ktx2Error::LevelSizeMismatch { level: 0, .. })
    ));
}

/// The writer refuses textures it cannot describe, and writes nothing then.
#[test]
fn writer_rejects_bad_textures() {
    let mut tex = texture(8, 8, false);
    tex.levels[1].pop();
    let mut out = Vec::new();
    assert!(write_ktx2(&mut out, &tex, None, "x").is_err());
    assert!(out.is_empty());
    let mut tex = texture(8, 8, false);
    tex.format = wgpu::TextureFormat::Rgba8Unorm;
    assert!(write_ktx2(&mut out, &tex, None, "x").is_err());
    let mut tex = texture(8, 8, false);
    tex.levels.push(vec![0; 16]);
    assert!(write_ktx2(&mut out, &tex, None, "x").is_err());
    let mut tex = texture(8, 8, false);
    tex.key_values.push(("KTXwriter".into(), b"dup\0".to_vec()));
    assert!(write_ktx2(&mut out, &tex, None, "x").is_err());
}

/// A partial chain (fewer levels than the full chain) is valid.
#[test]
fn partial_mip_chain_is_valid() {
    let mut tex = texture(64, 64, true);
    tex.levels.truncate(3);
    let bytes = write(&tex, None);
    let v = validate(&bytes, bytes.len() as u64, &ReadLimits::default());
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.info.unwrap().levels.len(), 3);
}
