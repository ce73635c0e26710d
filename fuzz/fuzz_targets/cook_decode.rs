//! Fuzz target: cook's decoding path, from an input file's bytes to a KTX2 file.
//!
//! The first byte picks the file name (TGA has no signature, so the extension guides the
//! decoder; `.hdr`/`.exr` cook to BC6H in floats) and the block format; the rest is the file.
//! Whatever the bytes: a typed error, or a texture that `write_ktx2` writes and mipflow's own
//! reader accepts with the same size and level count. Images are limited to 4 MiB of working
//! memory (about 400k pixels) so that each run stays fast; the limit is the same check `cook
//! --max-memory` makes. `cargo fuzz run --sanitizer none cook_decode` (see the README's "Fuzzing").
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mipflow::ktx2::{ReadLimits, read_info_from, read_level, write_ktx2};
use mipflow_cli::cook_cmd::cook_bytes;
use mipflow_cook::{BlockKind, CookOptions, Quality};

const NAMES: [&str; 7] = ["in.png", "in.jpg", "in.tga", "in.bmp", "in.hdr", "in.exr", "in.dat"];
const BLOCKS: [Option<BlockKind>; 4] = [None, Some(BlockKind::Bc1), Some(BlockKind::Bc5), Some(BlockKind::Bc6h)];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(pick & 7) % NAMES.len()];
    let opts = CookOptions {
        quality: Quality::Fast,
        block: BLOCKS[usize::from(pick >> 4) % BLOCKS.len()],
        zstd: (pick & 8 != 0).then_some(1),
        ..CookOptions::default()
    };
    let Ok(tex) = cook_bytes(Path::new(name), bytes, &opts, 4 << 20) else {
        return;
    };
    let mut file = Vec::new();
    write_ktx2(&mut file, &tex, opts.zstd, "fuzz").expect("a cooked texture writes");
    let len = file.len() as u64;
    let mut cursor = std::io::Cursor::new(file);
    let info = read_info_from(&mut cursor, len, &ReadLimits::default(), Path::new(name))
        .expect("mipflow reads what cook wrote");
    assert_eq!((info.width, info.height), (tex.width, tex.height));
    assert_eq!(info.levels.len(), tex.levels.len());
    for (i, level) in tex.levels.iter().enumerate() {
        let data = read_level(&mut cursor, &info, i).expect("each level reads back");
        assert_eq!(&data, level, "level {i} reads back as written");
    }
});
