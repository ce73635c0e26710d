//! Fuzzes the DDS reader: header validation (legacy and DX10), the level layout computed from
//! it, and level reads by byte range on whatever it accepts.
//!
//! Run: `cargo fuzz run --sanitizer none dds_reader fuzz/corpus/dds_reader tests/data/dds`
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mipflow::ktx2::{Ktx2Info, ReadLimits, read_level};

fuzz_target!(|data: &[u8]| {
    // Every input is a DDS file: the fuzzer spends no time finding the magic.
    let mut file = b"DDS ".to_vec();
    file.extend_from_slice(data);
    let limits = ReadLimits::default();
    match Ktx2Info::parse(&file, file.len() as u64, &limits) {
        Ok(info) => {
            assert!(info.width >= 1 && info.width <= limits.max_dimension);
            let mut cur = Cursor::new(&file);
            for level in 0..info.levels.len() {
                let bytes = read_level(&mut cur, &info, level).unwrap();
                assert_eq!(bytes.len() as u64, info.level_size(level));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
