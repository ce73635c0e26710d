//! Deterministic mutation fuzzing of the KTX2 reader, run by `cargo test` (the cargo-fuzz target in
//! `fuzz/` does the same with coverage guidance). Valid files are mutated (bit flips, random bytes,
//! interesting integers written over header and level-index fields, truncation, extension, spliced
//! chunks); every result must give a typed error or valid data, never a panic, and no allocation may
//! be larger than the file justifies.
//!
//! `MIPFLOW_MUTATION_CASES` sets the number of cases (default 200000).

use crate::common;

use std::io::Cursor;

use mipflow::ktx2::{
    EncodedTexture, Ktx2Info, ReadLimits, full_level_count, level_dims, level_size, read_level,
    read_level_in, read_level_with, validate, write_ktx2,
};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn valid_file(width: u32, height: u32, srgb: bool, zstd: Option<i32>, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    let levels = (0..full_level_count(width, height) as usize)
        .map(|i| {
            let (w, h) = level_dims(width, height, i);
            (0..level_size(wgpu::TextureFormat::Bc7RgbaUnorm, w, h))
                .map(|_| rng.next() as u8)
                .collect()
        })
        .collect();
    let tex = EncodedTexture {
        format: if srgb {
            wgpu::TextureFormat::Bc7RgbaUnormSrgb
        } else {
            wgpu::TextureFormat::Bc7RgbaUnorm
        },
        width,
        height,
        levels,
        key_values: vec![("mipflow.k".into(), b"v\0".to_vec())],
    };
    let mut out = Vec::new();
    write_ktx2(&mut out, &tex, zstd, "mipflow mutation").unwrap();
    out
}

const INTERESTING_32: [u32; 12] = [
    0,
    1,
    2,
    3,
    4,
    16,
    127,
    128,
    255,
    0x7FFF_FFFF,
    0x8000_0000,
    u32::MAX,
];
const INTERESTING_64: [u64; 8] = [
    0,
    1,
    16,
    0xFFFF_FFFF,
    0x1_0000_0000,
    i64::MAX as u64,
    u64::MAX - 15,
    u64::MAX,
];

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, bases: &[Vec<u8>]) {
    let header_region = 80 + 24 * 12 + 140;
    for _ in 0..1 + rng.below(4) {
        let len = bytes.len();
        // Most mutations target the header, index, DFD and key/value data, where parsing happens.
        let pos = if rng.below(4) > 0 {
            rng.below(len.min(header_region))
        } else {
            rng.below(len)
        };
        match rng.below(8) {
            0 if len > 0 => bytes[pos] ^= 1 << rng.below(8),
            1 if len > 0 => bytes[pos] = rng.next() as u8,
            2 => {
                let at = (pos & !3).min(len.saturating_sub(4));
                if len >= 4 {
                    let v = if rng.below(2) == 0 {
                        INTERESTING_32[rng.below(12)]
                    } else {
                        len as u32 ^ rng.below(64) as u32
                    };
                    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            3 => {
                let at = (pos & !7).min(len.saturating_sub(8));
                if len >= 8 {
                    let v = INTERESTING_64[rng.below(8)];
                    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
            4 => bytes.truncate(rng.below(len + 1)),
            5 => {
                let extra = rng.below(64);
                bytes.extend((0..extra).map(|_| rng.next() as u8));
            }
            6 => {
                // Splice a chunk of another valid file in.
                let other = &bases[rng.below(bases.len())];
                let start = rng.below(other.len());
                let n = rng.below(other.len() - start).min(64);
                let at = pos.min(len);
                let end = (at + n).min(len);
                bytes.splice(at..end, other[start..start + n].iter().copied());
            }
            _ => {
                // Level index entry field: offset, length or uncompressed length of a random level.
                let at = 80 + 24 * rng.below(4) + 8 * rng.below(3);
                if at + 8 <= len {
                    let old = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                    let v = match rng.below(3) {
                        0 => old.wrapping_add(rng.below(33) as u64).wrapping_sub(16),
                        1 => INTERESTING_64[rng.below(8)],
                        _ => len as u64,
                    };
                    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
}

/// Parses and reads every level; returns how many cases parsed as valid.
fn exercise(bytes: &[u8]) -> bool {
    exercise_with(bytes, &ReadLimits::default())
}

/// [`exercise`] under `limits`.
fn exercise_with(bytes: &[u8], limits: &ReadLimits) -> bool {
    let limits = limits.clone();
    let v = validate(bytes, bytes.len() as u64, &limits);
    let parsed = Ktx2Info::parse(bytes, bytes.len() as u64, &limits);
    assert_eq!(parsed.is_ok(), v.problems.is_empty() && v.info.is_some());
    for e in &v.problems {
        let _ = e.to_string();
    }
    match parsed {
        Ok(info) => {
            let mut cur = Cursor::new(bytes);
            for level in 0..info.levels.len() {
                let read = read_level(&mut cur, &info, level);
                // The reads straight into staging agree with it: the same bytes, or
                // an error both ways. A sink that refuses bytes past the level, as staging does.
                let expected = info.level_size(level) as usize;
                let mut bounce = [0u8; 61];
                for in_memory in [false, true] {
                    let mut got = Vec::new();
                    let mut sink = |b: &[u8]| {
                        let fits = got.len() + b.len() <= expected;
                        if fits {
                            got.extend_from_slice(b);
                        }
                        fits
                    };
                    let r = if in_memory {
                        read_level_in(bytes, &info, level, &mut bounce, &mut sink)
                    } else {
                        read_level_with(&mut cur, &info, level, &mut bounce, &mut sink)
                    };
                    match (&read, r) {
                        (Ok(data), Ok(())) => assert!(got == *data, "level {level}: other bytes"),
                        (Err(_), Err(_)) => {}
                        (a, b) => panic!(
                            "level {level} (in memory: {in_memory}): read_level {:?}, staged {b:?}",
                            a.as_ref().map(Vec::len)
                        ),
                    }
                }
                if let Ok(data) = read {
                    assert_eq!(data.len() as u64, info.level_size(level));
                    // The CPU decoder must survive any block data too.
                    let (w, h) = info.level_dims(level);
                    if w * h <= 4096 {
                        let rgba = mipflow_cook::decode_bc7(&data, w, h);
                        assert_eq!(rgba.len(), (w * h * 4) as usize);
                    }
                }
            }
            true
        }
        Err(_) => false,
    }
}

#[test]
fn mutated_files_never_panic_or_over_allocate() {
    let cases: usize = std::env::var("MIPFLOW_MUTATION_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let bases = vec![
        valid_file(8, 8, false, None, 1),
        valid_file(8, 8, true, Some(3), 2),
        valid_file(13, 7, true, None, 3),
        valid_file(1, 1, false, Some(1), 4),
        valid_file(64, 32, true, Some(9), 5),
        valid_file(5, 3, false, None, 6),
    ];
    for b in &bases {
        assert!(exercise(b), "base file must be valid");
    }
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut valid = 0usize;
    let mut largest_ratio = 0f64;
    for case in 0..cases {
        let mut bytes = bases[case % bases.len()].clone();
        mutate(&mut rng, &mut bytes, &bases);
        common::alloc::take_largest();
        let ok = exercise(&bytes);
        let largest = common::alloc::take_largest();
        // Allowance: the file itself twice over, plus 1 MiB for zstd's decoder context.
        let allowed = 2 * bytes.len() + (1 << 20);
        assert!(
            largest <= allowed,
            "case {case}: allocated {largest} bytes for a {}-byte file",
            bytes.len()
        );
        largest_ratio = largest_ratio.max(largest as f64 / bytes.len().max(1) as f64);
        valid += usize::from(ok);
    }
    eprintln!(
        "{cases} mutated files: {valid} still valid, none panicked; largest allocation {largest_ratio:.0}x the file"
    );
    assert!(valid < cases, "mutations should break most files");
}

/// Random bytes and every prefix of a valid file.
#[test]
fn random_bytes_and_every_truncation() {
    let mut rng = Rng(77);
    for n in 0..2000 {
        let mut bytes: Vec<u8> = (0..rng.below(600)).map(|_| rng.next() as u8).collect();
        if n % 2 == 0 && bytes.len() >= 12 {
            bytes[..12].copy_from_slice(&[
                0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A,
            ]);
        }
        assert!(!exercise(&bytes) || bytes.len() >= 80);
    }
    for file in [
        valid_file(16, 16, true, None, 9),
        valid_file(16, 16, false, Some(3), 10),
    ] {
        for cut in 0..file.len() {
            assert!(
                !exercise(&file[..cut]),
                "truncated to {cut} bytes yet valid"
            );
        }
    }
}

/// The DDS and Basis fixtures (written by other tools than mipflow), mutated as above: a typed
/// error or valid levels, never a panic. A Basis level is transcoded into its GPU size, which its
/// file does not bound (an ETC1S level of one colour is a few bytes at any size): the allowance
/// adds the texture's largest level, under a 1024-texel side limit for this test, and 8 MiB for
/// ETC1S's codebooks (at most 65535 endpoints and 65535 selectors, whatever the file says).
#[test]
fn mutated_dds_and_basis_files_never_panic() {
    let cases: usize = std::env::var("MIPFLOW_MUTATION_CASES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map_or(20_000, |n| n / 10);
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let bases: Vec<Vec<u8>> = [
        "basis/uastc_coffee.ktx2",
        "basis/uastc_zstd_coffee.ktx2",
        "basis/etc1s_coffee.ktx2",
        "basis/etc1s_chelsea_96x80.ktx2",
        "basis/etc1s_normal.ktx2",
        "basis/uastc_normal.ktx2",
        "dds/bc7_chelsea_96x80.dds",
        "dds/dxt5_legacy.dds",
        "dds/bc5.dds",
    ]
    .iter()
    .map(|f| std::fs::read(data.join(f)).unwrap())
    .collect();
    let mut limits = ReadLimits::default();
    limits.max_dimension = 1024;
    for b in &bases {
        assert!(exercise_with(b, &limits), "base file must be valid");
    }
    let mut rng = Rng(0x5EED_0042_BA51_0001);
    let mut valid = 0usize;
    for case in 0..cases {
        let mut bytes = bases[case % bases.len()].clone();
        mutate(&mut rng, &mut bytes, &bases);
        common::alloc::take_largest();
        let ok = exercise_with(&bytes, &limits);
        let largest = common::alloc::take_largest();
        let level0 = Ktx2Info::parse(&bytes, bytes.len() as u64, &limits)
            .map_or(0, |i| i.level_size(0) as usize);
        let allowed = 2 * bytes.len() + (9 << 20) + 2 * level0;
        assert!(
            largest <= allowed,
            "case {case}: allocated {largest} bytes for a {}-byte file",
            bytes.len()
        );
        valid += usize::from(ok);
    }
    eprintln!("{cases} mutated DDS and Basis files: {valid} still valid, none panicked");
    assert!(valid < cases, "mutations should break most files");
}
