//! Fuzzes the Basis Universal path: a KTX2 header with vkFormat 0, its DFD's codec and channels,
//! ETC1S's global data (codebooks, image descriptors), and every level transcoded on whatever the
//! reader accepts.
//!
//! Run: `cargo fuzz run --sanitizer none basis_reader fuzz/corpus/basis_reader tests/data/basis`
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mipflow::ktx2::{Ktx2Info, ReadLimits, read_level};

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits::default();
    if let Ok(info) = Ktx2Info::parse(data, data.len() as u64, &limits) {
        let mut cur = Cursor::new(data);
        for level in 0..info.levels.len() {
            match read_level(&mut cur, &info, level) {
                Ok(bytes) => assert_eq!(bytes.len() as u64, info.level_size(level)),
                Err(e) => {
                    let _ = e.to_string();
                }
            }
        }
    }
});
