//! Tiled levels: a KTX2 file whose large levels are stored tile by tile, so that one tile of
//! one level is one contiguous byte range (one Zstandard frame when supercompressed).
//!
//! # The layout (`mipflow cook --tiles SIZE`)
//! - Tiles are `SIZE x SIZE` texels (a power of two from 64 to 1024, a multiple of the block),
//!   without borders: a sampler that filters across a tile's edge reads the neighbouring
//!   tile's texels (see `shaders/vt.wgsl`), so no texel is stored twice.
//! - Levels larger than one tile (either side above `SIZE`) are **tiled**: their blocks are
//!   stored tile by tile, tiles in row-major order, each tile's blocks in row-major order. Tiles
//!   on the right and bottom edges hold the blocks that are left (fewer than `SIZE / 4`). This is
//!   a permutation of the level's blocks: its `uncompressedByteLength` is the format's size for
//!   the level, as in any KTX2 file.
//! - With Zstandard (scheme 2), each tile of a tiled level is its own frame and the level's
//!   bytes are the frames one after the other (what a Zstandard decoder reads as one stream).
//! - The coarser levels (one tile or less) are stored as in any KTX2 file.
//! - The key/value entry `mipflowTiles` records the layout, little-endian: four `u32` (version
//!   1, the tile size, the number of tiled levels, 1 when a tile index follows), then for a
//!   supercompressed file, for each tiled level from level 0, `tiles + 1` `u64` offsets of its
//!   tiles' frames from the level's start (the last one is the level's `byteLength`).
//!
//! The file stays a valid KTX2 file: every size in its index is the one the format's math
//! gives. A reader that does not know the key sees the tiled levels' blocks in tile order;
//! mipflow reads any level whole ([`super::read_level`] puts the blocks back in row order) or
//! one tile of it ([`read_tile`]).

use std::io::{Read, Seek, SeekFrom};

use super::reader::level_buffer;
use super::{Container, Ktx2Error, Ktx2Info, Supercompression};

/// The key/value key of a tiled file's layout.
pub const TILES_KEY: &str = "mipflowTiles";

/// Smallest and largest tile side in texels.
pub const TILE_SIZE_RANGE: std::ops::RangeInclusive<u32> = 64..=1024;

/// How a tiled file stores its levels (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TileLayout {
    /// Tile side in texels.
    pub tile_size: u32,
    /// Levels `0..tiled_levels` are stored tile by tile; the others whole.
    pub tiled_levels: u8,
    /// With Zstandard: for each tiled level, its tiles' frame offsets from the level's start
    /// (`tiles + 1` entries). Empty when the levels are stored raw (tiles at fixed offsets).
    #[serde(skip)]
    offsets: Vec<Vec<u64>>,
}

/// Where one tile lies: its blocks in the level, and its bytes in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileSpan {
    /// First block column and row of the tile in its level.
    pub block_x: u32,
    /// First block row.
    pub block_y: u32,
    /// Columns and rows of blocks in the tile (fewer than a full tile's on the right and
    /// bottom edges).
    pub blocks_wide: u32,
    /// Rows of blocks.
    pub blocks_high: u32,
    /// Offset of the tile's stored bytes from the start of the file.
    pub offset: u64,
    /// Its stored bytes (a Zstandard frame, or the raw blocks).
    pub stored_len: u64,
    /// Its blocks' bytes once decompressed.
    pub len: u64,
}

/// The level's grid of blocks and of tiles.
#[derive(Debug, Clone, Copy)]
struct Grid {
    cols: u32,
    rows: u32,
    tile_cols: u32,
    tile_rows: u32,
    tiles_x: u32,
    tiles_y: u32,
    block_bytes: u64,
}

impl Grid {
    fn of(info: &Ktx2Info, tile_size: u32, level: usize) -> Grid {
        let (w, h) = info.level_dims(level);
        let (bw, bh) = info.format.block_dimensions();
        let (cols, rows) = (w.div_ceil(bw), h.div_ceil(bh));
        let (tile_cols, tile_rows) = ((tile_size / bw).max(1), (tile_size / bh).max(1));
        Grid {
            cols,
            rows,
            tile_cols,
            tile_rows,
            tiles_x: cols.div_ceil(tile_cols),
            tiles_y: rows.div_ceil(tile_rows),
            block_bytes: u64::from(info.format.block_copy_size(None).unwrap_or(16)),
        }
    }

    fn tile_count(&self) -> usize {
        self.tiles_x as usize * self.tiles_y as usize
    }

    /// Blocks of tile `(tx, ty)`: first column, first row, columns, rows.
    fn tile(&self, tx: u32, ty: u32) -> (u32, u32, u32, u32) {
        let (x, y) = (tx * self.tile_cols, ty * self.tile_rows);
        (
            x,
            y,
            self.tile_cols.min(self.cols - x),
            self.tile_rows.min(self.rows - y),
        )
    }

    /// Offset of tile `(tx, ty)`'s blocks in the tile-major level, in bytes.
    fn raw_offset(&self, tx: u32, ty: u32) -> u64 {
        let (_, y, _, h) = self.tile(tx, ty);
        (u64::from(y) * u64::from(self.cols) + u64::from(h) * u64::from(tx * self.tile_cols))
            * self.block_bytes
    }
}

impl TileLayout {
    /// The layout for `info`'s texture (its size and format) at tiles of `tile_size` texels:
    /// every level with a side above it is tiled. `None` when the size is out of
    /// [`TILE_SIZE_RANGE`], not a power of two, or not a multiple of the format's block.
    pub fn plan(info: &Ktx2Info, tile_size: u32) -> Option<TileLayout> {
        let (bw, bh) = info.format.block_dimensions();
        if !TILE_SIZE_RANGE.contains(&tile_size)
            || !tile_size.is_power_of_two()
            || !tile_size.is_multiple_of(bw)
            || !tile_size.is_multiple_of(bh)
        {
            return None;
        }
        let tiled = (0..info.levels.len())
            .take_while(|&l| {
                let (w, h) = info.level_dims(l);
                w.max(h) > tile_size
            })
            .count();
        Some(TileLayout {
            tile_size,
            tiled_levels: tiled as u8,
            offsets: Vec::new(),
        })
    }

    /// Tiles across and down `level` (`(1, 1)` for a level stored whole).
    pub fn tiles(&self, info: &Ktx2Info, level: usize) -> (u32, u32) {
        if level < usize::from(self.tiled_levels) {
            let g = Grid::of(info, self.tile_size, level);
            (g.tiles_x, g.tiles_y)
        } else {
            (1, 1)
        }
    }

    /// Every tile of every tiled level, summed.
    pub fn tile_count(&self, info: &Ktx2Info) -> u64 {
        (0..usize::from(self.tiled_levels))
            .map(|l| {
                let (x, y) = self.tiles(info, l);
                u64::from(x) * u64::from(y)
            })
            .sum()
    }

    /// Where tile `(tx, ty)` of tiled level `level` lies. `None` for a level stored whole or a
    /// tile outside the level.
    pub fn span(&self, info: &Ktx2Info, level: usize, tx: u32, ty: u32) -> Option<TileSpan> {
        if level >= usize::from(self.tiled_levels) {
            return None;
        }
        let g = Grid::of(info, self.tile_size, level);
        if tx >= g.tiles_x || ty >= g.tiles_y {
            return None;
        }
        let l = info.levels.get(level)?;
        let (x, y, w, h) = g.tile(tx, ty);
        let len = u64::from(w) * u64::from(h) * g.block_bytes;
        let (start, stored_len) = match self.offsets.get(level) {
            Some(offsets) => {
                let k = (ty * g.tiles_x + tx) as usize;
                (offsets[k], offsets[k + 1] - offsets[k])
            }
            None => (g.raw_offset(tx, ty), len),
        };
        Some(TileSpan {
            block_x: x,
            block_y: y,
            blocks_wide: w,
            blocks_high: h,
            offset: l.offset + start,
            stored_len,
            len,
        })
    }

    /// The key/value entry's value for this layout (`offsets`: each tiled level's frame
    /// offsets, or none for raw levels).
    pub(super) fn encode(tile_size: u32, tiled_levels: u8, offsets: &[Vec<u64>]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [
            1,
            tile_size,
            u32::from(tiled_levels),
            u32::from(!offsets.is_empty()),
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for level in offsets {
            for &o in level {
                out.extend_from_slice(&o.to_le_bytes());
            }
        }
        out
    }

    /// Reads and checks the layout of `info`'s file from its key/value entry (`None` without
    /// one): the tile size, the tiled levels and every offset checked against the file's level
    /// index, so that a tile's range is within its level.
    pub(super) fn parse(info: &Ktx2Info) -> Result<Option<TileLayout>, Ktx2Error> {
        let Some(value) = info.key_value(TILES_KEY) else {
            return Ok(None);
        };
        let bad = |reason: String| Ktx2Error::BadTiles { reason };
        if info.container != Container::Ktx2 || info.basis.is_some() {
            return Err(bad("only a KTX2 file of GPU blocks can be tiled".into()));
        }
        let word = |i: usize| {
            value
                .get(4 * i..4 * i + 4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        };
        let (Some(version), Some(size), Some(tiled), Some(indexed)) =
            (word(0), word(1), word(2), word(3))
        else {
            return Err(bad(format!("{} bytes, the header needs 16", value.len())));
        };
        if version != 1 {
            return Err(bad(format!("version {version}, not 1")));
        }
        let mut layout = TileLayout::plan(info, size)
            .ok_or_else(|| bad(format!("tile size {size} for {:?}", info.format)))?;
        if tiled != u32::from(layout.tiled_levels) {
            return Err(bad(format!(
                "{tiled} tiled levels; tiles of {size} make {}",
                layout.tiled_levels
            )));
        }
        let zstd = info.supercompression == Supercompression::Zstd;
        match (indexed, zstd) {
            (0, false) => {}
            (1, true) => {}
            (i, _) => {
                return Err(bad(format!(
                    "tile index flag {i} with supercompression {:?}",
                    info.supercompression
                )));
            }
        }
        let mut rest = &value[16..];
        if zstd {
            for level in 0..usize::from(layout.tiled_levels) {
                let g = Grid::of(info, size, level);
                let n = g.tile_count() + 1;
                let Some(bytes) = rest.get(..n * 8) else {
                    return Err(bad(format!("the index ends in level {level}")));
                };
                rest = &rest[n * 8..];
                let offsets: Vec<u64> = bytes
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .collect();
                let stored = info.levels[level].byte_length;
                if offsets[0] != 0
                    || offsets[n - 1] != stored
                    || offsets.windows(2).any(|w| w[1] <= w[0])
                {
                    return Err(bad(format!(
                        "level {level}'s tile offsets do not run from 0 up to its {stored} bytes"
                    )));
                }
                layout.offsets.push(offsets);
            }
        }
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes past the index", rest.len())));
        }
        Ok(Some(layout))
    }
}

/// Reorders a level's blocks (`cols x rows` blocks of `block_bytes`, row-major) into tile order
/// for tiles of `tile_cols x tile_rows` blocks; `f` gets each tile's blocks in turn.
pub(super) fn for_each_tile(
    blocks: &[u8],
    cols: u32,
    rows: u32,
    tile_cols: u32,
    tile_rows: u32,
    block_bytes: usize,
    mut f: impl FnMut(&[&[u8]]),
) {
    let row_bytes = cols as usize * block_bytes;
    let mut parts: Vec<&[u8]> = Vec::with_capacity(tile_rows as usize);
    for y0 in (0..rows).step_by(tile_rows as usize) {
        for x0 in (0..cols).step_by(tile_cols as usize) {
            parts.clear();
            let w = tile_cols.min(cols - x0) as usize * block_bytes;
            for y in y0..(y0 + tile_rows).min(rows) {
                let start = y as usize * row_bytes + x0 as usize * block_bytes;
                parts.push(&blocks[start..start + w]);
            }
            f(&parts);
        }
    }
}

/// The grid of a level of `info` at tiles of `tile_size` (for the writer).
pub(super) fn grid(info: &Ktx2Info, tile_size: u32, level: usize) -> (u32, u32, u32, u32) {
    let g = Grid::of(info, tile_size, level);
    (g.cols, g.rows, g.tile_cols, g.tile_rows)
}

/// Reads tile `(tx, ty)` of tiled level `level`: its blocks, row-major within the tile
/// ([`TileSpan::blocks_wide`] blocks a row), decompressed. Errors for a file without tiles, a
/// level stored whole, a tile outside the level, or a frame that does not decode to the tile's
/// size.
pub fn read_tile(
    file: &mut (impl Read + Seek),
    info: &Ktx2Info,
    level: usize,
    tx: u32,
    ty: u32,
) -> Result<Vec<u8>, Ktx2Error> {
    let span = tile_span(info, level, tx, ty)?;
    file.seek(SeekFrom::Start(span.offset))?;
    let mut data = level_buffer(level, span.stored_len)?;
    file.take(span.stored_len).read_to_end(&mut data)?;
    if (data.len() as u64) < span.stored_len {
        return Err(Ktx2Error::Truncated {
            what: "tile data",
            needed: span.offset + span.stored_len,
            available: span.offset + data.len() as u64,
        });
    }
    match info.supercompression {
        Supercompression::Zstd => super::reader::decompress_level(&data, level, span.len),
        _ => Ok(data),
    }
}

/// The span of a tile of `info`'s file, or why there is none.
pub fn tile_span(info: &Ktx2Info, level: usize, tx: u32, ty: u32) -> Result<TileSpan, Ktx2Error> {
    let layout = info.tiles.as_ref().ok_or_else(|| Ktx2Error::BadTiles {
        reason: "the file is not tiled".into(),
    })?;
    layout
        .span(info, level, tx, ty)
        .ok_or_else(|| Ktx2Error::BadTiles {
            reason: format!("no tile ({tx}, {ty}) in level {level}"),
        })
}

/// Level `level` of a tiled file, its stored bytes `stored` already read: the blocks in row
/// order (each tile decompressed and put in its place).
pub(super) fn untile_level(
    info: &Ktx2Info,
    layout: &TileLayout,
    level: usize,
    stored: &[u8],
) -> Result<Vec<u8>, Ktx2Error> {
    let g = Grid::of(info, layout.tile_size, level);
    let expected = info.level_size(level);
    let mut out = level_buffer(level, expected)?;
    out.resize(expected as usize, 0);
    let base = info.levels[level].offset;
    let row_bytes = g.cols as usize * g.block_bytes as usize;
    for ty in 0..g.tiles_y {
        for tx in 0..g.tiles_x {
            let span = layout
                .span(info, level, tx, ty)
                .expect("every tile of a tiled level has a span");
            let start = (span.offset - base) as usize;
            let src = &stored[start..start + span.stored_len as usize];
            let decoded;
            let blocks = match info.supercompression {
                Supercompression::Zstd => {
                    decoded = super::reader::decompress_level(src, level, span.len)?;
                    &decoded[..]
                }
                _ => src,
            };
            let w = span.blocks_wide as usize * g.block_bytes as usize;
            for (r, row) in blocks.chunks_exact(w).enumerate() {
                let y = span.block_y as usize + r;
                let at = y * row_bytes + span.block_x as usize * g.block_bytes as usize;
                out[at..at + w].copy_from_slice(row);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "tiles_tests.rs"]
mod tests;
