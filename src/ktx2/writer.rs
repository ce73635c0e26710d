//! The KTX 2.0 writer.
//!
//! The ktx2 crate (0.5) only reads, but it builds the Data Format Descriptor for a format
//! ([`ktx2::dfd::Basic::from_format`]); the container layout is written here, following the
//! specification's file structure:
//!
//! | section | where |
//! |---|---|
//! | 80-byte header | 0 |
//! | level index (24 bytes per level, level 0 first) | 80 |
//! | DFD (`dfdTotalSize` + one Basic block for BC7, 44 bytes) | right after the level index |
//! | key/value data, sorted by key, each entry padded to 4 bytes | right after the DFD |
//! | no supercompression global data (Zstandard needs none) | sgdByteOffset = sgdByteLength = 0 |
//! | levels, **smallest first**, each at a multiple of 16 (lcm of the 16-byte BC7 block and 4) when not supercompressed, unaligned (alignment 1) when Zstandard-compressed | after the key/value data |
//!
//! Metadata written: `KTXorientation` = `"rd"` (rows go right then down: the first texel is the
//! top-left one, as images are decoded), `KTXwriter` = the caller's name, and with Zstandard
//! `KTXwriterScParams` = `"--zcmp LEVEL"`.

use std::io::{self, Write};

use rayon::prelude::*;

use super::reader::{HEADER_LEN, LEVEL_ENTRY_LEN, MAGIC};
use super::{BlockFormat, EncodedTexture, level_dims};

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Builds the DFD section (with its leading `dfdTotalSize`) for `vk_format` through the ktx2 crate.
fn dfd_section(vk_format: u32) -> io::Result<Vec<u8>> {
    let format = ktx2::Format::new(vk_format)
        .ok_or_else(|| invalid(format!("unknown vkFormat {vk_format}")))?;
    let (basic, _type_size) = ktx2::dfd::Basic::from_format(format)
        .map_err(|e| invalid(format!("cannot build a DFD for vkFormat {vk_format}: {e}")))?;
    let block = ktx2::dfd::Block::Basic(basic).to_vec();
    let total = 4 + block.len() as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&block);
    Ok(out)
}

/// Serialises key/value entries (sorted by key, as the specification requires).
fn kvd_section(entries: &mut [(String, Vec<u8>)]) -> io::Result<Vec<u8>> {
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = Vec::new();
    for pair in entries.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(invalid(format!("duplicate key/value key {:?}", pair[0].0)));
        }
    }
    for (key, value) in entries.iter() {
        if key.is_empty() || key.contains('\0') {
            return Err(invalid(format!("invalid key/value key {key:?}")));
        }
        let len = u32::try_from(key.len() + 1 + value.len())
            .map_err(|_| invalid(format!("value of {key:?} too large")))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.push(0);
        out.extend_from_slice(value);
        out.resize(out.len().next_multiple_of(4), 0);
    }
    Ok(out)
}

/// One level as a Zstandard frame, its buffer (the compression bound) allocated fallibly: a
/// level too large for the memory left is an `OutOfMemory` error, not an abort.
fn compress_level(index: usize, data: &[u8], level: i32) -> io::Result<Vec<u8>> {
    let bound = zstd::zstd_safe::compress_bound(data.len());
    let mut out = super::try_buffer(bound as u64).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("out of memory: compressing level {index} needs {bound} bytes"),
        )
    })?;
    zstd::bulk::Compressor::new(level)?.compress_to_buffer(data, &mut out)?;
    Ok(out)
}

/// Writes `tex` as a KTX 2.0 file to `w` (see the module documentation for the layout).
///
/// `zstd_level`: `None` stores the raw blocks; `Some(level)` compresses each level as one Zstandard
/// frame (levels are compressed in parallel). `writer_name` goes into `KTXwriter`.
///
/// Fails with `InvalidInput` if the texture is not block-compressed (BC1 to BC7), has more levels than its size allows, or a
/// level's byte size disagrees with its dimensions; no bytes are written then.
pub fn write_ktx2(
    w: &mut impl Write,
    tex: &EncodedTexture,
    zstd_level: Option<i32>,
    writer_name: &str,
) -> io::Result<()> {
    write(w, tex, zstd_level, writer_name, None)
}

/// [`write_ktx2`] with the levels larger than `tile_size` stored tile by tile (the layout of
/// [`super::TileLayout`]: one tile one byte range, one Zstandard frame each when
/// supercompressed). Fails with `InvalidInput` for a tile size out of
/// [`super::TILE_SIZE_RANGE`], not a power of two, or not a multiple of the block.
pub fn write_ktx2_tiled(
    w: &mut impl Write,
    tex: &EncodedTexture,
    zstd_level: Option<i32>,
    writer_name: &str,
    tile_size: u32,
) -> io::Result<()> {
    write(w, tex, zstd_level, writer_name, Some(tile_size))
}

fn write(
    w: &mut impl Write,
    tex: &EncodedTexture,
    zstd_level: Option<i32>,
    writer_name: &str,
    tile_size: Option<u32>,
) -> io::Result<()> {
    let Some(block_format) = BlockFormat::from_wgpu(tex.format) else {
        return Err(invalid(format!(
            "only block-compressed formats (BC1 to BC7) can be written, not {:?}",
            tex.format
        )));
    };
    let vk_format = block_format.vk_format;
    if tex.width == 0 || tex.height == 0 {
        return Err(invalid(format!(
            "zero-sized texture {}x{}",
            tex.width, tex.height
        )));
    }
    let n = tex.levels.len();
    if n == 0 || n > super::full_level_count(tex.width, tex.height) as usize {
        return Err(invalid(format!(
            "{n} levels for a {}x{} texture",
            tex.width, tex.height
        )));
    }
    for (i, level) in tex.levels.iter().enumerate() {
        let (lw, lh) = level_dims(tex.width, tex.height, i);
        let expected = block_format.level_size(lw, lh);
        if level.len() as u64 != expected {
            return Err(invalid(format!(
                "level {i} ({lw}x{lh}) has {} bytes, {} needs {expected}",
                level.len(),
                block_format.name
            )));
        }
    }

    // The tiled levels in tile order (each tile one frame when supercompressed).
    let (tiled, tile_entry) = match tile_size {
        Some(size) => {
            let (levels, entry) = tile_levels(tex, size, zstd_level)?;
            (levels, Some(entry))
        }
        None => (Vec::new(), None),
    };
    // Supercompress (or borrow) each level that is not tiled.
    let compressed: Option<Vec<Vec<u8>>> = match zstd_level {
        Some(level) => Some(
            tex.levels
                .par_iter()
                .with_max_len(1)
                .enumerate()
                .map(|(i, data)| {
                    if i < tiled.len() {
                        Ok(Vec::new())
                    } else {
                        compress_level(i, data, level)
                    }
                })
                .collect::<io::Result<_>>()?,
        ),
        None => None,
    };
    let stored: Vec<&[u8]> = (0..n)
        .map(|i| match (&compressed, tiled.get(i)) {
            (_, Some(t)) => t.as_slice(),
            (Some(c), None) => c[i].as_slice(),
            (None, None) => tex.levels[i].as_slice(),
        })
        .collect();

    let dfd = dfd_section(vk_format)?;
    let mut entries = tex.key_values.clone();
    // Top-down rows, unless the caller says otherwise (a bottom-up "ru" file).
    if !entries.iter().any(|(k, _)| k == "KTXorientation") {
        entries.push(("KTXorientation".into(), b"rd\0".to_vec()));
    }
    entries.push(("KTXwriter".into(), [writer_name.as_bytes(), b"\0"].concat()));
    if let Some(entry) = tile_entry {
        entries.push((super::TILES_KEY.into(), entry));
    }
    if let Some(level) = zstd_level {
        entries.push((
            "KTXwriterScParams".into(),
            format!("--zcmp {level}\0").into_bytes(),
        ));
    }
    let kvd = kvd_section(&mut entries)?;

    // Layout.
    let dfd_offset = HEADER_LEN + LEVEL_ENTRY_LEN * n as u64;
    let kvd_offset = dfd_offset + dfd.len() as u64;
    let kvd_end = kvd_offset + kvd.len() as u64;
    let align = if zstd_level.is_some() {
        1
    } else {
        u64::from(block_format.block_bytes)
    };
    let mut offsets = vec![0u64; n];
    let mut cursor = kvd_end;
    for i in (0..n).rev() {
        cursor = cursor.next_multiple_of(align);
        offsets[i] = cursor;
        cursor += stored[i].len() as u64;
    }
    let too_big = |_| invalid("section offset does not fit its 32-bit header field".into());

    let mut header = Vec::with_capacity(dfd_offset as usize);
    header.extend_from_slice(&MAGIC);
    for v in [
        vk_format,
        1, // typeSize: 1 for block-compressed formats
        tex.width,
        tex.height,
        0, // pixelDepth
        0, // layerCount
        1, // faceCount
        n as u32,
        if zstd_level.is_some() { 2 } else { 0 },
        u32::try_from(dfd_offset).map_err(too_big)?,
        dfd.len() as u32,
        if kvd.is_empty() {
            0
        } else {
            u32::try_from(kvd_offset).map_err(too_big)?
        },
        kvd.len() as u32,
    ] {
        header.extend_from_slice(&v.to_le_bytes());
    }
    header.extend_from_slice(&0u64.to_le_bytes()); // sgdByteOffset
    header.extend_from_slice(&0u64.to_le_bytes()); // sgdByteLength
    for (i, data) in stored.iter().enumerate() {
        header.extend_from_slice(&offsets[i].to_le_bytes());
        header.extend_from_slice(&(data.len() as u64).to_le_bytes());
        header.extend_from_slice(&(tex.levels[i].len() as u64).to_le_bytes());
    }
    w.write_all(&header)?;
    w.write_all(&dfd)?;
    w.write_all(&kvd)?;
    let mut pos = kvd_end;
    for i in (0..n).rev() {
        let pad = offsets[i] - pos;
        w.write_all(&[0u8; 16][..pad as usize])?;
        w.write_all(stored[i])?;
        pos = offsets[i] + stored[i].len() as u64;
    }
    Ok(())
}

/// The levels of `tex` larger than one tile of `size`, in tile order (each tile one Zstandard
/// frame with `zstd_level`), and the `mipflowTiles` entry that describes them.
fn tile_levels(
    tex: &EncodedTexture,
    size: u32,
    zstd_level: Option<i32>,
) -> io::Result<(Vec<Vec<u8>>, Vec<u8>)> {
    let mut probe = super::Ktx2Info::resident(tex.format, tex.width, tex.height);
    probe.levels = vec![
        super::LevelInfo {
            offset: 0,
            byte_length: 0,
            uncompressed_byte_length: 0,
        };
        tex.levels.len()
    ];
    let layout = super::TileLayout::plan(&probe, size).ok_or_else(|| {
        invalid(format!(
            "tile size {size}: a power of two from {} to {}, a multiple of the {:?} block",
            super::TILE_SIZE_RANGE.start(),
            super::TILE_SIZE_RANGE.end(),
            tex.format.block_dimensions()
        ))
    })?;
    let block_bytes = tex.format.block_copy_size(None).unwrap_or(16) as usize;
    let mut levels = Vec::with_capacity(usize::from(layout.tiled_levels));
    let mut offsets = Vec::new();
    for (i, blocks) in tex.levels[..usize::from(layout.tiled_levels)]
        .iter()
        .enumerate()
    {
        let (cols, rows, tile_cols, tile_rows) = super::tiles::grid(&probe, size, i);
        let mut tiles: Vec<Vec<u8>> = Vec::new();
        super::tiles::for_each_tile(
            blocks,
            cols,
            rows,
            tile_cols,
            tile_rows,
            block_bytes,
            |rows| {
                tiles.push(rows.concat());
            },
        );
        if let Some(level) = zstd_level {
            tiles = tiles
                .par_iter()
                .map(|t| compress_level(i, t, level))
                .collect::<io::Result<_>>()?;
            let mut at = 0u64;
            let mut level_offsets = vec![0u64];
            for t in &tiles {
                at += t.len() as u64;
                level_offsets.push(at);
            }
            offsets.push(level_offsets);
        }
        levels.push(tiles.concat());
    }
    let entry = super::TileLayout::encode(size, layout.tiled_levels, &offsets);
    Ok((levels, entry))
}
