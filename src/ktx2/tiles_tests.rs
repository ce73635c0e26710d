//! The tiled layout: written, read back whole and tile by tile, and refused when damaged.

use super::*;
use crate::ktx2::{
    EncodedTexture, ReadLimits, level_dims, read_level, write_ktx2, write_ktx2_tiled,
};

/// A BC7 texture of `w x h` whose every block holds its level, column and row (so a block out
/// of place is seen), with a full chain.
fn texture(w: u32, h: u32) -> EncodedTexture {
    let n = crate::ktx2::full_level_count(w, h) as usize;
    let levels = (0..n)
        .map(|l| {
            let (lw, lh) = level_dims(w, h, l);
            let (cols, rows) = (lw.div_ceil(4), lh.div_ceil(4));
            let mut out = Vec::with_capacity((cols * rows * 16) as usize);
            for y in 0..rows {
                for x in 0..cols {
                    let mut block = [0u8; 16];
                    block[0] = l as u8;
                    block[1..5].copy_from_slice(&x.to_le_bytes());
                    block[5..9].copy_from_slice(&y.to_le_bytes());
                    block[9] = (x * 31 + y * 17) as u8;
                    out.extend_from_slice(&block);
                }
            }
            out
        })
        .collect();
    EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnorm,
        width: w,
        height: h,
        levels,
        key_values: Vec::new(),
    }
}

fn info_of(bytes: &[u8]) -> Ktx2Info {
    Ktx2Info::parse(bytes, bytes.len() as u64, &ReadLimits::default()).expect("a valid file")
}

/// The blocks of tile `(tx, ty)` of `level`, cut from the row-major level.
fn cut(tex: &EncodedTexture, level: usize, span: &TileSpan) -> Vec<u8> {
    let (lw, _) = level_dims(tex.width, tex.height, level);
    let row = lw.div_ceil(4) as usize * 16;
    let mut out = Vec::new();
    for y in span.block_y..span.block_y + span.blocks_high {
        let at = y as usize * row + span.block_x as usize * 16;
        out.extend_from_slice(&tex.levels[level][at..at + span.blocks_wide as usize * 16]);
    }
    out
}

/// A 1000x600 chain at tiles of 128 (edge tiles partial), raw and with Zstandard: every level
/// reads back as written, and every tile of every tiled level is its rectangle of blocks.
#[test]
fn tiled_levels_read_back_whole_and_tile_by_tile() {
    let tex = texture(1000, 600);
    for zstd in [None, Some(3)] {
        let mut bytes = Vec::new();
        write_ktx2_tiled(&mut bytes, &tex, zstd, "test", 128).unwrap();
        let info = info_of(&bytes);
        let layout = info.tiles.clone().expect("the file is tiled");
        // 1000x600, 500x300 and 250x150 have a side above 128; 125x75 does not.
        assert_eq!((layout.tile_size, layout.tiled_levels), (128, 3));
        assert_eq!(layout.tiles(&info, 0), (8, 5));
        assert_eq!(layout.tiles(&info, 2), (2, 2));
        assert_eq!(layout.tiles(&info, 3), (1, 1));
        assert_eq!(layout.tile_count(&info), 40 + 12 + 4);
        // The index holds every level's standard size: a valid KTX2 file.
        for (l, level) in info.levels.iter().enumerate() {
            assert_eq!(level.uncompressed_byte_length, tex.levels[l].len() as u64);
        }
        let mut file = std::io::Cursor::new(&bytes);
        for l in 0..tex.levels.len() {
            assert_eq!(
                read_level(&mut file, &info, l).unwrap(),
                tex.levels[l],
                "level {l}"
            );
        }
        for l in 0..3 {
            let (tx_n, ty_n) = layout.tiles(&info, l);
            for ty in 0..ty_n {
                for tx in 0..tx_n {
                    let span = tile_span(&info, l, tx, ty).unwrap();
                    let got = read_tile(&mut file, &info, l, tx, ty).unwrap();
                    assert_eq!(got.len() as u64, span.len);
                    assert_eq!(got, cut(&tex, l, &span), "level {l} tile ({tx}, {ty})");
                }
            }
        }
        // The bottom-right tile of level 0: 250x150 blocks, tiles of 32: 26 x 22 blocks.
        let last = tile_span(&info, 0, 7, 4).unwrap();
        assert_eq!((last.blocks_wide, last.blocks_high), (26, 22));
        // No tile outside the level, none in a level stored whole.
        assert!(read_tile(&mut file, &info, 0, 8, 0).is_err());
        assert!(read_tile(&mut file, &info, 3, 0, 0).is_err());
        // The staged read (into upload memory) puts the blocks in row order too.
        let mut got = Vec::new();
        crate::ktx2::read_level_with(&mut file, &info, 0, &mut [0u8; 4096], &mut |b| {
            got.extend_from_slice(b);
            true
        })
        .unwrap();
        assert_eq!(got, tex.levels[0]);
    }
}

/// A file written level by level has no layout, and `read_tile` says so.
#[test]
fn an_untiled_file_has_no_tiles() {
    let tex = texture(256, 256);
    let mut bytes = Vec::new();
    write_ktx2(&mut bytes, &tex, None, "test").unwrap();
    let info = info_of(&bytes);
    assert!(info.tiles.is_none());
    let err = read_tile(&mut std::io::Cursor::new(&bytes), &info, 0, 0, 0).unwrap_err();
    assert!(matches!(err, Ktx2Error::BadTiles { .. }), "{err}");
}

/// Tile sizes the layout cannot take are refused by the writer.
#[test]
fn a_tile_size_out_of_range_is_refused() {
    let tex = texture(512, 512);
    for size in [0, 32, 100, 2048] {
        let err = write_ktx2_tiled(&mut Vec::new(), &tex, None, "test", size).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{size}");
    }
}

/// A layout entry that does not match its file (a tile size, the tiled levels, an offset past
/// the level) is a typed error when the file is read, never a tile read out of its level.
#[test]
fn a_damaged_layout_is_refused() {
    let tex = texture(512, 512);
    let mut bytes = Vec::new();
    write_ktx2_tiled(&mut bytes, &tex, Some(1), "test", 128).unwrap();
    let key = TILES_KEY.as_bytes();
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .expect("the entry")
        + key.len()
        + 1;
    let parse = |b: &[u8]| Ktx2Info::parse(b, b.len() as u64, &ReadLimits::default());
    assert!(parse(&bytes).unwrap().tiles.is_some());
    // Each edit: (word offset in the value, new u32).
    for (word, value) in [(0, 2u32), (1, 256), (1, 96), (2, 1), (3, 0)] {
        let mut b = bytes.clone();
        b[at + 4 * word..at + 4 * word + 4].copy_from_slice(&value.to_le_bytes());
        let err = parse(&b).unwrap_err();
        assert!(matches!(err, Ktx2Error::BadTiles { .. }), "{word}: {err}");
    }
    // Level 0's second offset past its last one.
    let mut b = bytes.clone();
    b[at + 16 + 8..at + 16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(parse(&b).unwrap_err(), Ktx2Error::BadTiles { .. }));
}
