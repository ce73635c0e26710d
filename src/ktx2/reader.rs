//! The hardened KTX2 reader: every field of an untrusted file is checked before anything whose size
//! comes from the file is allocated.
//!
//! The layout is checked as the KTX 2.0 specification lays it out: the 80-byte header, then the level
//! index, then the DFD immediately after it, then the key/value data immediately after the DFD (when
//! present), then the levels, smallest first. Because the DFD and the key/value data must follow the
//! level index directly and are capped by [`ReadLimits`], the header region a reader has to load is
//! small (at most 80 + 24 x 32 bytes of index plus the two caps), whatever the file claims.

use super::bytes::{le_u32, le_u64, slice};
use super::metadata::{parse_dfd, parse_kvd};
use std::io::{Read, Seek, SeekFrom};

use super::{
    BlockFormat, Ktx2Error, Ktx2Info, LevelInfo, ReadLimits, Supercompression, full_level_count,
    level_dims,
};

/// The KTX 2.0 file identifier.
pub(crate) const MAGIC: [u8; 12] = [
    0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A,
];
/// Bytes in the fixed header.
pub const HEADER_LEN: u64 = 80;
/// Bytes in one level index entry.
pub(crate) const LEVEL_ENTRY_LEN: u64 = 24;
/// Most levels any 2D texture with 32-bit dimensions can have.
const MAX_LEVELS: u32 = 32;
/// Size of a Basic DFD section with one sample: dfdTotalSize + block header + basic fields + one
/// sample (the smallest a BCn DFD can be).
const BC7_DFD_LEN: u64 = 4 + 24 + 16;

/// The raw fields of the 80-byte header and the level index, as stored (for display by
/// `mipflow inspect`, even when the file is invalid).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RawHeader {
    /// vkFormat.
    pub vk_format: u32,
    /// typeSize.
    pub type_size: u32,
    /// pixelWidth.
    pub pixel_width: u32,
    /// pixelHeight.
    pub pixel_height: u32,
    /// pixelDepth.
    pub pixel_depth: u32,
    /// layerCount.
    pub layer_count: u32,
    /// faceCount.
    pub face_count: u32,
    /// levelCount.
    pub level_count: u32,
    /// supercompressionScheme.
    pub supercompression_scheme: u32,
    /// dfdByteOffset.
    pub dfd_byte_offset: u32,
    /// dfdByteLength.
    pub dfd_byte_length: u32,
    /// kvdByteOffset.
    pub kvd_byte_offset: u32,
    /// kvdByteLength.
    pub kvd_byte_length: u32,
    /// sgdByteOffset.
    pub sgd_byte_offset: u64,
    /// sgdByteLength.
    pub sgd_byte_length: u64,
    /// The level index entries that could be read (at most 32).
    pub levels: Vec<LevelInfo>,
}

/// The result of [`validate`]: what could be read, and every problem found.
#[derive(Debug)]
pub struct Validation {
    /// The raw header, if the first 80 bytes could be read and carry the KTX 2.0 identifier.
    pub header: Option<RawHeader>,
    /// The parsed texture description, if every structure could be parsed (it may still have
    /// problems, such as levels stored in the wrong order).
    pub info: Option<Ktx2Info>,
    /// Every problem found, in file order. Empty means the file is valid.
    pub problems: Vec<Ktx2Error>,
}

/// Zstandard's worst-case compressed size for `n` bytes (`ZSTD_COMPRESSBOUND`).
pub(crate) fn zstd_bound(n: u64) -> u64 {
    const KB128: u64 = 128 << 10;
    // Saturating: a hostile header's level size can be near u64::MAX (raised limits).
    n.saturating_add(n >> 8)
        .saturating_add(if n < KB128 { (KB128 - n) >> 11 } else { 0 })
}

fn read_raw_header(b: &[u8]) -> Option<RawHeader> {
    Some(RawHeader {
        vk_format: le_u32(b, 12)?,
        type_size: le_u32(b, 16)?,
        pixel_width: le_u32(b, 20)?,
        pixel_height: le_u32(b, 24)?,
        pixel_depth: le_u32(b, 28)?,
        layer_count: le_u32(b, 32)?,
        face_count: le_u32(b, 36)?,
        level_count: le_u32(b, 40)?,
        supercompression_scheme: le_u32(b, 44)?,
        dfd_byte_offset: le_u32(b, 48)?,
        dfd_byte_length: le_u32(b, 52)?,
        kvd_byte_offset: le_u32(b, 56)?,
        kvd_byte_length: le_u32(b, 60)?,
        sgd_byte_offset: le_u64(b, 64)?,
        sgd_byte_length: le_u64(b, 72)?,
        levels: Vec::new(),
    })
}

/// Checks the identifier and reads the header from the first bytes.
fn header_from(bytes: &[u8]) -> Result<RawHeader, Ktx2Error> {
    let n = bytes.len().min(MAGIC.len());
    if bytes[..n] != MAGIC[..n] {
        return Err(Ktx2Error::BadMagic);
    }
    if (bytes.len() as u64) < HEADER_LEN {
        return Err(Ktx2Error::Truncated {
            what: "header",
            needed: HEADER_LEN,
            available: bytes.len() as u64,
        });
    }
    read_raw_header(bytes).ok_or(Ktx2Error::Truncated {
        what: "header",
        needed: HEADER_LEN,
        available: bytes.len() as u64,
    })
}

fn index_end(level_count: u32) -> u64 {
    HEADER_LEN + LEVEL_ENTRY_LEN * u64::from(level_count.max(1))
}

pub(super) fn header_region_len(first_bytes: &[u8], limits: &ReadLimits) -> Result<u64, Ktx2Error> {
    let h = header_from(first_bytes)?;
    if h.level_count > MAX_LEVELS {
        return Err(Ktx2Error::BadLevelCount {
            level_count: h.level_count,
            max: MAX_LEVELS,
        });
    }
    if h.dfd_byte_length > limits.max_dfd_bytes {
        return Err(Ktx2Error::BadSection {
            section: "DFD",
            offset: h.dfd_byte_offset.into(),
            length: h.dfd_byte_length.into(),
            reason: "larger than the reader's limit",
        });
    }
    if h.kvd_byte_length > limits.max_kvd_bytes {
        return Err(Ktx2Error::BadSection {
            section: "key/value data",
            offset: h.kvd_byte_offset.into(),
            length: h.kvd_byte_length.into(),
            reason: "larger than the reader's limit",
        });
    }
    // The DFD must follow the level index and the key/value data the DFD (checked in `validate`);
    // computing the region from the index end rather than the declared offsets keeps it bounded
    // even when the offsets are hostile.
    let idx = index_end(h.level_count);
    let end = idx + u64::from(h.dfd_byte_length) + u64::from(h.kvd_byte_length);
    if h.sgd_byte_length == 0 {
        return Ok(end);
    }
    // BasisLZ's global data follows, 8-byte aligned (checked in `validate`).
    if h.sgd_byte_length > limits.max_sgd_bytes {
        return Err(Ktx2Error::BadSection {
            section: "supercompression global data",
            offset: h.sgd_byte_offset,
            length: h.sgd_byte_length,
            reason: "larger than the reader's limit",
        });
    }
    Ok(end.next_multiple_of(8) + h.sgd_byte_length)
}

/// Validates a KTX2 file (or a DDS file) from its first bytes (which must cover
/// the header region, see [`super::header_region_len`]) and its total length, collecting
/// **every** problem found rather than stopping at the first. [`Ktx2Info::parse`] is this plus "the first problem is an error".
pub fn validate(bytes: &[u8], file_len: u64, limits: &ReadLimits) -> Validation {
    let mut problems = Vec::new();
    let mut out = Validation {
        header: None,
        info: None,
        problems: Vec::new(),
    };
    let file_len = file_len.max(bytes.len() as u64);
    if super::dds::is_dds(bytes) {
        match super::dds::parse(bytes, file_len, limits) {
            Ok(info) => out.info = Some(info),
            Err(e) => out.problems.push(e),
        }
        return out;
    }
    if file_len > limits.max_file_bytes {
        problems.push(Ktx2Error::FileTooLarge {
            len: file_len,
            max: limits.max_file_bytes,
        });
    }
    let mut h = match header_from(bytes) {
        Ok(h) => h,
        Err(e) => {
            problems.push(e);
            out.problems = problems;
            return out;
        }
    };

    // Scalar header fields. vkFormat 0 is a Basis Universal file (as is ASTC 4x4 SFLOAT with
    // UASTC HDR's DFD): its GPU format comes from its DFD.
    let basis_file = h.vk_format == 0 || h.vk_format == super::basis::VK_FORMAT_ASTC_4X4_SFLOAT;
    let mut block_format = BlockFormat::from_vk(h.vk_format);
    if block_format.is_none() && !basis_file {
        problems.push(Ktx2Error::UnsupportedFormat {
            vk_format: h.vk_format,
        });
    }
    if h.type_size != 1 {
        problems.push(Ktx2Error::BadTypeSize {
            type_size: h.type_size,
        });
    }
    let (w, hh) = (h.pixel_width, h.pixel_height);
    let mut dims_ok = true;
    if w == 0 || hh == 0 {
        problems.push(Ktx2Error::ZeroSize {
            width: w,
            height: hh,
        });
        dims_ok = false;
    } else if w > limits.max_dimension || hh > limits.max_dimension {
        problems.push(Ktx2Error::TooLarge {
            width: w,
            height: hh,
            max: limits.max_dimension,
        });
        dims_ok = false;
    }
    if h.pixel_depth != 0 {
        problems.push(Ktx2Error::UnsupportedDepth {
            depth: h.pixel_depth,
        });
    }
    if h.layer_count != 0 {
        problems.push(Ktx2Error::UnsupportedLayers {
            layer_count: h.layer_count,
        });
    }
    if h.face_count != 1 {
        problems.push(Ktx2Error::UnsupportedFaces {
            face_count: h.face_count,
        });
    }
    let max_levels = if dims_ok {
        full_level_count(w, hh)
    } else {
        MAX_LEVELS
    };
    let levels_ok = h.level_count >= 1 && h.level_count <= max_levels;
    if !levels_ok {
        problems.push(Ktx2Error::BadLevelCount {
            level_count: h.level_count,
            max: max_levels,
        });
    }
    let supercompression = match h.supercompression_scheme {
        0 => Some(Supercompression::None),
        1 if basis_file => Some(Supercompression::BasisLz),
        2 => Some(Supercompression::Zstd),
        scheme => {
            problems.push(Ktx2Error::UnsupportedSupercompression { scheme });
            None
        }
    };
    let basislz = supercompression == Some(Supercompression::BasisLz);
    if !basislz && (h.sgd_byte_length != 0 || h.sgd_byte_offset != 0) {
        problems.push(Ktx2Error::UnexpectedSgd {
            offset: h.sgd_byte_offset,
            length: h.sgd_byte_length,
        });
    }

    // Level index: read what is there (at most 32 entries), check ranges later.
    let idx_end = index_end(h.level_count.min(MAX_LEVELS));
    let mut index_read = false;
    if h.level_count <= MAX_LEVELS {
        let avail = bytes.len() as u64;
        if idx_end > file_len || idx_end > avail {
            problems.push(Ktx2Error::Truncated {
                what: "level index",
                needed: idx_end,
                available: avail.min(file_len),
            });
        } else {
            let mut levels = Vec::with_capacity(h.level_count.max(1) as usize);
            for i in 0..u64::from(h.level_count.max(1)) {
                let at = HEADER_LEN + i * LEVEL_ENTRY_LEN;
                if let (Some(offset), Some(byte_length), Some(uncompressed_byte_length)) = (
                    le_u64(bytes, at),
                    le_u64(bytes, at + 8),
                    le_u64(bytes, at + 16),
                ) {
                    levels.push(LevelInfo {
                        offset,
                        byte_length,
                        uncompressed_byte_length,
                    });
                }
            }
            h.levels = levels;
            index_read = true;
        }
    }

    // DFD: must follow the level index directly.
    let dfd_off = u64::from(h.dfd_byte_offset);
    let dfd_len = u64::from(h.dfd_byte_length);
    let dfd_end = dfd_off + dfd_len;
    let dfd_problem = |reason| Ktx2Error::BadSection {
        section: "DFD",
        offset: dfd_off,
        length: dfd_len,
        reason,
    };
    let mut dfd = None;
    if dfd_len < BC7_DFD_LEN {
        problems.push(dfd_problem(
            "too short for a Basic descriptor block with one sample",
        ));
    } else if dfd_len > u64::from(limits.max_dfd_bytes) {
        problems.push(dfd_problem("larger than the reader's limit"));
    } else if h.level_count <= MAX_LEVELS && dfd_off != idx_end {
        problems.push(dfd_problem("does not immediately follow the level index"));
    } else if dfd_end > file_len {
        problems.push(dfd_problem("extends past the end of the file"));
    } else {
        match slice(bytes, dfd_off, dfd_len) {
            Some(section) => {
                let supercompressed = h.supercompression_scheme != 0;
                dfd = parse_dfd(section, block_format, supercompressed, &mut problems)
            }
            None => problems.push(Ktx2Error::Truncated {
                what: "DFD",
                needed: dfd_end,
                available: bytes.len() as u64,
            }),
        }
    }

    // Key/value data: optional; when present it must follow the DFD directly.
    let kvd_off = u64::from(h.kvd_byte_offset);
    let kvd_len = u64::from(h.kvd_byte_length);
    let kvd_end = if kvd_len == 0 { 0 } else { kvd_off + kvd_len };
    let kvd_problem = |reason| Ktx2Error::BadSection {
        section: "key/value data",
        offset: kvd_off,
        length: kvd_len,
        reason,
    };
    let mut key_values = None;
    if kvd_len == 0 {
        key_values = Some(Vec::new());
    } else if kvd_len > u64::from(limits.max_kvd_bytes) {
        problems.push(kvd_problem("larger than the reader's limit"));
    } else if kvd_off != dfd_end {
        problems.push(kvd_problem("does not immediately follow the DFD"));
    } else if kvd_end > file_len {
        problems.push(kvd_problem("extends past the end of the file"));
    } else {
        match slice(bytes, kvd_off, kvd_len) {
            Some(section) => key_values = parse_kvd(section, kvd_off, limits, &mut problems),
            None => problems.push(Ktx2Error::Truncated {
                what: "key/value data",
                needed: kvd_end,
                available: bytes.len() as u64,
            }),
        }
    }
    let mut header_end = idx_end.max(dfd_end).max(kvd_end);

    // A Basis file: the codec and the GPU format from the DFD; ETC1S's global data after the
    // key/value data (8-byte aligned), within what the caller read.
    let mut basis = None;
    let mut sgd = None;
    if let (true, Some(d), Some(sc)) = (basis_file, &dfd, supercompression) {
        match super::basis::describe(d, sc, h.vk_format) {
            Ok((b, f)) => {
                basis = Some(b);
                block_format = Some(f);
            }
            Err(e) => problems.push(e),
        }
    }
    if basislz {
        let (off, len) = (h.sgd_byte_offset, h.sgd_byte_length);
        let problem = |reason| Ktx2Error::BadSection {
            section: "supercompression global data",
            offset: off,
            length: len,
            reason,
        };
        let start = header_end.next_multiple_of(8);
        if len == 0 {
            problems.push(problem("absent, but BasisLZ needs it"));
        } else if len > limits.max_sgd_bytes {
            problems.push(problem("larger than the reader's limit"));
        } else if off != start {
            problems.push(problem(
                "does not follow the key/value data (8-byte aligned)",
            ));
        } else if off + len > file_len {
            problems.push(problem("extends past the end of the file"));
        } else if let Some(section) = slice(bytes, off, len) {
            sgd = Some(section);
            header_end = off + len;
        } else {
            problems.push(Ktx2Error::Truncated {
                what: "supercompression global data",
                needed: off + len,
                available: bytes.len() as u64,
            });
        }
    }
    let format = block_format.map(|b| b.format);

    // Levels: sizes against the format math, ranges against the file and each other.
    let mut levels_valid = index_read;
    if index_read {
        let n = h.levels.len();
        let mut in_bounds = vec![false; n];
        for (i, l) in h.levels.iter().enumerate() {
            let end = l.offset.checked_add(l.byte_length);
            match end {
                Some(end) if end <= file_len => in_bounds[i] = true,
                _ => {
                    problems.push(Ktx2Error::LevelOutOfBounds {
                        level: i,
                        offset: l.offset,
                        length: l.byte_length,
                        file_len,
                    });
                    levels_valid = false;
                }
            }
            if l.offset < header_end {
                problems.push(Ktx2Error::LevelInHeader {
                    level: i,
                    offset: l.offset,
                    header_end,
                });
                levels_valid = false;
            }
            let Some(bf) = block_format.filter(|_| dims_ok) else {
                continue;
            };
            let (lw, lh) = level_dims(w, hh, i);
            let expected = bf.level_size(lw, lh);
            // The spec's alignment: lcm(block size, 4).
            let alignment = u64::from(bf.block_bytes);
            match supercompression {
                Some(Supercompression::None) => {
                    if l.byte_length != expected {
                        problems.push(Ktx2Error::LevelSizeMismatch {
                            level: i,
                            what: "byteLength",
                            expected,
                            found: l.byte_length,
                        });
                        levels_valid = false;
                    }
                    if l.uncompressed_byte_length != expected {
                        problems.push(Ktx2Error::LevelSizeMismatch {
                            level: i,
                            what: "uncompressedByteLength",
                            expected,
                            found: l.uncompressed_byte_length,
                        });
                        levels_valid = false;
                    }
                    if l.offset % alignment != 0 {
                        problems.push(Ktx2Error::LevelMisaligned {
                            level: i,
                            offset: l.offset,
                            alignment,
                        });
                    }
                }
                Some(Supercompression::BasisLz) => {
                    if l.uncompressed_byte_length != 0 {
                        problems.push(Ktx2Error::LevelSizeMismatch {
                            level: i,
                            what: "uncompressedByteLength (0 for BasisLZ)",
                            expected: 0,
                            found: l.uncompressed_byte_length,
                        });
                        levels_valid = false;
                    }
                    if l.byte_length == 0 || l.byte_length > expected {
                        problems.push(Ktx2Error::LevelCompressedSize {
                            level: i,
                            length: l.byte_length,
                            bound: expected,
                        });
                        levels_valid = false;
                    }
                }
                Some(Supercompression::Zstd) => {
                    if l.uncompressed_byte_length != expected {
                        problems.push(Ktx2Error::LevelSizeMismatch {
                            level: i,
                            what: "uncompressedByteLength",
                            expected,
                            found: l.uncompressed_byte_length,
                        });
                        levels_valid = false;
                    }
                    let bound = zstd_bound(expected);
                    if l.byte_length == 0 || l.byte_length > bound {
                        problems.push(Ktx2Error::LevelCompressedSize {
                            level: i,
                            length: l.byte_length,
                            bound,
                        });
                        levels_valid = false;
                    }
                }
                None => levels_valid = false,
            }
        }
        let mut overlapping = false;
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (&h.levels[i], &h.levels[j]);
                if in_bounds[i]
                    && in_bounds[j]
                    && a.byte_length > 0
                    && b.byte_length > 0
                    && a.offset < b.offset + b.byte_length
                    && b.offset < a.offset + a.byte_length
                {
                    problems.push(Ktx2Error::LevelOverlap { level: i, other: j });
                    overlapping = true;
                }
            }
        }
        if !overlapping {
            for i in 0..n.saturating_sub(1) {
                if in_bounds[i] && in_bounds[i + 1] && h.levels[i].offset < h.levels[i + 1].offset {
                    problems.push(Ktx2Error::LevelOrder {
                        level: i,
                        smaller: i + 1,
                    });
                }
            }
        }
    }

    if let (Some(b), Some(sgd), true) = (basis.as_mut(), sgd, levels_valid)
        && let Err(e) = super::basis::attach_global(b, sgd, &h.levels)
    {
        problems.push(e);
        levels_valid = false;
    }
    if let (Some(format), Some(supercompression), Some(dfd), Some(key_values), true, true, true) = (
        format,
        supercompression,
        dfd,
        key_values,
        dims_ok,
        levels_ok,
        levels_valid,
    ) {
        let mut info = Ktx2Info {
            format,
            width: w,
            height: hh,
            levels: h.levels.clone(),
            supercompression,
            key_values,
            dfd,
            header_len: header_end,
            file_len,
            stamp: None,
            container: super::Container::Ktx2,
            basis,
            tiles: None,
        };
        match super::tiles::TileLayout::parse(&info) {
            Ok(tiles) => {
                info.tiles = tiles;
                out.info = Some(info);
            }
            Err(e) => problems.push(e),
        }
    }
    out.header = Some(h);
    out.problems = problems;
    out
}

/// Reads level `level` (0 = full size) by its byte range and returns its blocks, undoing
/// Zstandard supercompression. The output is never larger than the format's size for the
/// level's dimensions, and its size is checked against it.
pub fn read_level(
    file: &mut (impl Read + Seek),
    info: &Ktx2Info,
    level: usize,
) -> Result<Vec<u8>, Ktx2Error> {
    let (l, expected, end) = level_span(info, level)?;
    file.seek(SeekFrom::Start(l.offset))?;
    let mut data = level_buffer(level, l.byte_length)?;
    file.take(l.byte_length).read_to_end(&mut data)?;
    if (data.len() as u64) < l.byte_length {
        return Err(Ktx2Error::Truncated {
            what: "level data",
            needed: end,
            available: l.offset + data.len() as u64,
        });
    }
    if let Some(tiles) = &info.tiles
        && level < usize::from(tiles.tiled_levels)
    {
        return super::tiles::untile_level(info, tiles, level, &data);
    }
    let data = match info.supercompression {
        Supercompression::Zstd => decompress_level(&data, level, expected)?,
        Supercompression::None | Supercompression::BasisLz => data,
    };
    match &info.basis {
        Some(basis) => super::basis::transcode(info, basis, level, &data),
        None if info.supercompression == Supercompression::BasisLz => {
            Err(Ktx2Error::BadBasisGlobal {
                reason: "BasisLZ levels without the file's global data".into(),
            })
        }
        None => Ok(data),
    }
}

/// Level `level`'s entry, its expected size (the format math), and where its bytes end, with
/// the entry checked against both.
pub(crate) fn level_span(
    info: &Ktx2Info,
    level: usize,
) -> Result<(super::LevelInfo, u64, u64), Ktx2Error> {
    let l = *info.levels.get(level).ok_or(Ktx2Error::NoSuchLevel {
        level,
        count: info.levels.len(),
    })?;
    let expected = info.stored_level_size(level);
    // `Ktx2Info`'s fields are public: re-check what bounds the allocations below.
    match info.supercompression {
        Supercompression::None if l.byte_length != expected => {
            return Err(Ktx2Error::LevelSizeMismatch {
                level,
                what: "byteLength",
                expected,
                found: l.byte_length,
            });
        }
        Supercompression::BasisLz if l.byte_length == 0 || l.byte_length > expected => {
            return Err(Ktx2Error::LevelCompressedSize {
                level,
                length: l.byte_length,
                bound: expected,
            });
        }
        Supercompression::Zstd if l.byte_length == 0 || l.byte_length > zstd_bound(expected) => {
            return Err(Ktx2Error::LevelCompressedSize {
                level,
                length: l.byte_length,
                bound: zstd_bound(expected),
            });
        }
        _ => {}
    }
    let Some(end) = l.offset.checked_add(l.byte_length) else {
        return Err(Ktx2Error::LevelOutOfBounds {
            level,
            offset: l.offset,
            length: l.byte_length,
            file_len: info.file_len,
        });
    };
    Ok((l, expected, end))
}

/// An empty buffer with room for a level's `bytes`, reserved fallibly: an IO worker that meets
/// the process's memory limit fails that read (the streamer retries it after a back-off)
/// instead of aborting the process.
pub(super) fn level_buffer(level: usize, bytes: u64) -> Result<Vec<u8>, Ktx2Error> {
    super::try_buffer(bytes).ok_or(Ktx2Error::OutOfMemory { level, bytes })
}

pub(super) fn decompress_level(
    data: &[u8],
    level: usize,
    expected: u64,
) -> Result<Vec<u8>, Ktx2Error> {
    let fail = |reason: String| Ktx2Error::Decompress { level, reason };
    // The decoders skip skippable frames themselves; the size check needs the first real one.
    let data = super::bytes::past_skippable_frames(data)
        .ok_or_else(|| fail("a skippable frame runs past the level's end".into()))?;
    // The frame header states the decompressed size: check it before allocating for it.
    match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(Some(n)) if n != expected => Err(Ktx2Error::DecompressedSize {
            level,
            expected,
            found: n,
        }),
        Ok(Some(_)) => {
            let mut out = level_buffer(level, expected)?;
            zstd::bulk::Decompressor::new()
                .and_then(|mut d| d.decompress_to_buffer(data, &mut out))
                .map_err(|e| fail(e.to_string()))?;
            if out.len() as u64 != expected {
                return Err(Ktx2Error::DecompressedSize {
                    level,
                    expected,
                    found: out.len() as u64,
                });
            }
            Ok(out)
        }
        Ok(None) => {
            // Size not in the frame header: stream, and stop one byte past the expected size.
            let mut decoder =
                zstd::stream::read::Decoder::with_buffer(data).map_err(|e| fail(e.to_string()))?;
            // One byte more than expected: a level that decodes too long is found without
            // growing the buffer.
            let mut out = level_buffer(level, expected.saturating_add(1))?;
            (&mut decoder)
                .take(expected.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| fail(e.to_string()))?;
            if out.len() as u64 != expected {
                return Err(Ktx2Error::DecompressedSize {
                    level,
                    expected,
                    found: out.len() as u64,
                });
            }
            Ok(out)
        }
        Err(e) => Err(fail(e.to_string())),
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
