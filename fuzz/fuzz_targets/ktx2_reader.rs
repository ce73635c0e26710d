//! Fuzzes the hardened KTX2 reader: header/DFD/key-value validation, level reads with Zstandard
//! decoding, and the CPU block decoders (every format the reader accepts) on whatever level data
//! comes out.
//!
//! Run: `cargo fuzz run --sanitizer none ktx2_reader fuzz/corpus/ktx2_reader tests/data/ktx2`
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mipflow::ktx2::{Ktx2Info, ReadLimits, header_region_len, read_level, validate};

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits::default();
    let _ = header_region_len(data, &limits);
    let v = validate(data, data.len() as u64, &limits);
    for p in &v.problems {
        let _ = p.to_string();
    }
    if let Ok(info) = Ktx2Info::parse(data, data.len() as u64, &limits) {
        let mut cur = Cursor::new(data);
        for level in 0..info.levels.len() {
            if let Ok(bytes) = read_level(&mut cur, &info, level) {
                assert_eq!(bytes.len() as u64, info.level_size(level));
                let (w, h) = info.level_dims(level);
                if u64::from(w) * u64::from(h) <= 1 << 16 {
                    let rgba = mipflow_cook::decode_blocks(info.format, &bytes, w, h);
                    assert_eq!(rgba.len() as u64, u64::from(w) * u64::from(h) * 4);
                }
            }
        }
    }
});
