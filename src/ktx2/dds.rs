//! The DDS reader: block-compressed 2D textures with a mip chain, from the legacy header (FourCC
//! `DXT1` to `DXT5`, `ATI1`/`BC4U`/`BC4S`, `ATI2`/`BC5U`/`BC5S`) or the DX10 header (every BCn
//! `DXGI_FORMAT`, sRGB and typeless variants), hardened like the KTX2 reader: every field is
//! checked against the file's length and [`ReadLimits`] before anything is sized from it.
//!
//! A DDS file stores its levels one after another, full size first, right after the header; each
//! level's byte range is computed from the format table ([`BlockFormat`]), so the streamer reads
//! one level by its range as it does a KTX2 level. Rows run top to bottom (KTX2's `rd`
//! orientation). Cube maps, arrays, volumes and uncompressed pixel formats are refused with a
//! typed error that says which.

use super::bytes::le_u32;
use super::{
    BlockFormat, Container, DfdSummary, Ktx2Error, Ktx2Info, LevelInfo, ReadLimits,
    Supercompression, full_level_count, level_dims,
};

/// `"DDS "`: the file's first four bytes.
pub(crate) const MAGIC: [u8; 4] = *b"DDS ";
/// The magic and the `DDS_HEADER`.
const HEADER_LEN: u64 = 4 + 124;
/// The longest DDS header: the magic, the `DDS_HEADER` and the `DDS_HEADER_DXT10` that follows
/// when the FourCC is `DX10`.
pub const DX10_HEADER_LEN: u64 = HEADER_LEN + 20;

const DDSD_MIPMAPCOUNT: u32 = 0x2_0000;
const DDSD_DEPTH: u32 = 0x80_0000;
const DDPF_FOURCC: u32 = 0x4;
const DDSCAPS2_CUBEMAP: u32 = 0x200;
const DDSCAPS2_VOLUME: u32 = 0x20_0000;
const D3D10_RESOURCE_DIMENSION_TEXTURE2D: u32 = 3;
const D3D11_RESOURCE_MISC_TEXTURECUBE: u32 = 0x4;

/// How the DDS file named its format, for `mipflow inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DdsHeader {
    /// A legacy header with this FourCC.
    Legacy {
        /// The pixel format's FourCC, as text.
        fourcc: [u8; 4],
    },
    /// A DX10 header with this `DXGI_FORMAT`.
    Dx10 {
        /// The `DXGI_FORMAT` value.
        dxgi_format: u32,
    },
}

/// Whether `bytes` start like a DDS file.
pub(crate) fn is_dds(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[..4] == MAGIC
}

fn unsupported(what: impl Into<String>) -> Ktx2Error {
    Ktx2Error::UnsupportedDds { what: what.into() }
}

fn fourcc_text(f: [u8; 4]) -> String {
    if f.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        format!("FourCC '{}'", String::from_utf8_lossy(&f))
    } else {
        format!("FourCC 0x{:08X}", u32::from_le_bytes(f))
    }
}

/// Parses a DDS file from its first bytes (at least [`DX10_HEADER_LEN`] of them, or the whole file
/// when shorter) and its total length.
pub(crate) fn parse(
    bytes: &[u8],
    file_len: u64,
    limits: &ReadLimits,
) -> Result<Ktx2Info, Ktx2Error> {
    if file_len > limits.max_file_bytes {
        return Err(Ktx2Error::FileTooLarge {
            len: file_len,
            max: limits.max_file_bytes,
        });
    }
    let truncated = |needed: u64| Ktx2Error::Truncated {
        what: "DDS header",
        needed,
        available: (bytes.len() as u64).min(file_len),
    };
    if !is_dds(bytes) {
        return Err(Ktx2Error::BadMagic);
    }
    let field = |off: u64| le_u32(bytes, off).ok_or_else(|| truncated(HEADER_LEN));
    if field(4)? != 124 {
        return Err(Ktx2Error::BadDdsHeader {
            field: "dwSize",
            found: field(4)?.into(),
            reason: "the DDS_HEADER is 124 bytes",
        });
    }
    if field(76)? != 32 {
        return Err(Ktx2Error::BadDdsHeader {
            field: "ddspf.dwSize",
            found: field(76)?.into(),
            reason: "the DDS_PIXELFORMAT is 32 bytes",
        });
    }
    let flags = field(8)?;
    let height = field(12)?;
    let width = field(16)?;
    let depth = field(24)?;
    let mip_count = field(28)?;
    let pf_flags = field(80)?;
    let fourcc = field(84)?.to_le_bytes();
    let caps2 = field(112)?;
    if caps2 & DDSCAPS2_CUBEMAP != 0 {
        return Err(unsupported(
            "a cube map (DDSCAPS2_CUBEMAP); mipflow streams 2D textures",
        ));
    }
    if caps2 & DDSCAPS2_VOLUME != 0 || (flags & DDSD_DEPTH != 0 && depth > 1) {
        return Err(unsupported(format!(
            "a volume texture (depth {depth}); mipflow streams 2D textures"
        )));
    }
    if pf_flags & DDPF_FOURCC == 0 {
        return Err(unsupported(
            "an uncompressed pixel format (no FourCC): cook the image with `mipflow cook`",
        ));
    }
    let (format, data_offset, header) = if &fourcc == b"DX10" {
        let dx10 = |off: u64| le_u32(bytes, off).ok_or_else(|| truncated(DX10_HEADER_LEN));
        let dxgi_format = dx10(128)?;
        let dimension = dx10(132)?;
        let misc = dx10(136)?;
        let array_size = dx10(140)?;
        if misc & D3D11_RESOURCE_MISC_TEXTURECUBE != 0 {
            return Err(unsupported(
                "a cube map (DX10 misc flag TEXTURECUBE); mipflow streams 2D textures",
            ));
        }
        if dimension != D3D10_RESOURCE_DIMENSION_TEXTURE2D {
            return Err(unsupported(format!(
                "resource dimension {dimension} ({}); mipflow streams 2D textures (3)",
                match dimension {
                    2 => "1D",
                    4 => "3D",
                    _ => "unknown",
                }
            )));
        }
        if array_size > 1 {
            return Err(unsupported(format!(
                "an array of {array_size} textures; mipflow streams single 2D textures"
            )));
        }
        let f = BlockFormat::from_dxgi(dxgi_format).ok_or_else(|| {
            unsupported(format!(
                "DXGI_FORMAT {dxgi_format}, not a BCn format (mipflow streams BC1 to BC7: DXGI 70 to 99)"
            ))
        })?;
        (f, DX10_HEADER_LEN, DdsHeader::Dx10 { dxgi_format })
    } else {
        let f = BlockFormat::from_fourcc(fourcc).ok_or_else(|| {
            unsupported(format!(
                "{}, not a block-compressed format mipflow reads (DXT1 to DXT5, ATI1, ATI2, \
                 BC4U/S, BC5U/S, or a DX10 header)",
                fourcc_text(fourcc)
            ))
        })?;
        (f, HEADER_LEN, DdsHeader::Legacy { fourcc })
    };
    if width == 0 || height == 0 {
        return Err(Ktx2Error::ZeroSize { width, height });
    }
    if width > limits.max_dimension || height > limits.max_dimension {
        return Err(Ktx2Error::TooLarge {
            width,
            height,
            max: limits.max_dimension,
        });
    }
    let full = full_level_count(width, height);
    let level_count = if flags & DDSD_MIPMAPCOUNT != 0 {
        mip_count.max(1)
    } else {
        1
    };
    if level_count > full {
        return Err(Ktx2Error::BadLevelCount {
            level_count,
            max: full,
        });
    }
    let mut levels = Vec::with_capacity(level_count as usize);
    let mut offset = data_offset;
    for level in 0..level_count as usize {
        let (w, h) = level_dims(width, height, level);
        let length = format.level_size(w, h);
        let end = offset.saturating_add(length);
        if end > file_len {
            return Err(Ktx2Error::LevelOutOfBounds {
                level,
                offset,
                length,
                file_len,
            });
        }
        levels.push(LevelInfo {
            offset,
            byte_length: length,
            uncompressed_byte_length: length,
        });
        offset = end;
    }
    Ok(Ktx2Info {
        format: format.format,
        width,
        height,
        levels,
        supercompression: Supercompression::None,
        key_values: Vec::new(),
        dfd: DfdSummary {
            version: 0,
            color_model: format.color_model,
            color_primaries: 1,
            transfer_function: if format.is_srgb() { 2 } else { 1 },
            premultiplied_alpha: false,
            block_dimensions: [4, 4, 1],
            bytes_plane0: format.block_bytes as u8,
            samples: 0,
            blocks: 0,
            channel_ids: Vec::new(),
        },
        header_len: data_offset,
        file_len,
        stamp: None,
        container: Container::Dds(header),
        basis: None,
        tiles: None,
    })
}

/// A DDS file of `format` (DX10 header when `dx10`, else the format's legacy FourCC) with
/// `levels` (full size first) after the header: for tests, fuzzing seeds and tools. Returns
/// `None` for a legacy header of a format that has no FourCC (BC6H, BC7, sRGB).
pub fn write_dds(
    format: wgpu::TextureFormat,
    width: u32,
    height: u32,
    levels: &[&[u8]],
    dx10: bool,
) -> Option<Vec<u8>> {
    let f = BlockFormat::from_wgpu(format)?;
    let fourcc: [u8; 4] = if dx10 {
        *b"DX10"
    } else {
        match f.vk_format {
            131 | 133 => *b"DXT1",
            135 => *b"DXT3",
            137 => *b"DXT5",
            139 => *b"BC4U",
            140 => *b"BC4S",
            141 => *b"ATI2",
            142 => *b"BC5S",
            _ => return None,
        }
    };
    let mut out = Vec::new();
    let mut put = |v: u32| out.extend_from_slice(&v.to_le_bytes());
    // magic, dwSize, dwFlags (CAPS | HEIGHT | WIDTH | PIXELFORMAT | MIPMAPCOUNT | LINEARSIZE).
    put(u32::from_le_bytes(MAGIC));
    put(124);
    put(0x1 | 0x2 | 0x4 | 0x1000 | DDSD_MIPMAPCOUNT | 0x8_0000);
    put(height);
    put(width);
    put(levels.first().map_or(0, |l| l.len() as u32));
    put(0);
    put(levels.len() as u32);
    for _ in 0..11 {
        put(0);
    }
    // DDS_PIXELFORMAT.
    put(32);
    put(DDPF_FOURCC);
    put(u32::from_le_bytes(fourcc));
    for _ in 0..5 {
        put(0);
    }
    // dwCaps (TEXTURE | MIPMAP | COMPLEX), caps2..4, reserved.
    put(0x1000 | 0x40_0000 | 0x8);
    for _ in 0..4 {
        put(0);
    }
    if dx10 {
        put(f.dxgi_format);
        put(D3D10_RESOURCE_DIMENSION_TEXTURE2D);
        put(0);
        put(1);
        put(0);
    }
    for l in levels {
        out.extend_from_slice(l);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ReadLimits {
        ReadLimits::default()
    }

    fn bc7_file(w: u32, h: u32, count: usize) -> Vec<u8> {
        let levels: Vec<Vec<u8>> = (0..count)
            .map(|l| {
                let (lw, lh) = level_dims(w, h, l);
                vec![
                    l as u8;
                    super::super::level_size(wgpu::TextureFormat::Bc7RgbaUnorm, lw, lh) as usize
                ]
            })
            .collect();
        let refs: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
        write_dds(wgpu::TextureFormat::Bc7RgbaUnorm, w, h, &refs, true).unwrap()
    }

    /// A DX10 BC7 file's levels lie one after another past the 148-byte header, full size first.
    #[test]
    fn levels_follow_the_header_full_size_first() {
        let file = bc7_file(20, 12, 5);
        let info = parse(&file, file.len() as u64, &limits()).unwrap();
        assert_eq!(info.format, wgpu::TextureFormat::Bc7RgbaUnorm);
        assert_eq!((info.width, info.height, info.levels.len()), (20, 12, 5));
        // 5x3 blocks, 3x2, 2x1, 1x1, 1x1.
        let sizes: Vec<u64> = info.levels.iter().map(|l| l.byte_length).collect();
        assert_eq!(sizes, [240, 96, 32, 16, 16]);
        assert_eq!(info.levels[0].offset, 148);
        assert_eq!(info.levels[1].offset, 148 + 240);
        assert_eq!(
            info.container,
            Container::Dds(DdsHeader::Dx10 { dxgi_format: 98 })
        );
    }

    /// Every hostile header is a typed error: short files, sizes that lie, levels past the end,
    /// more levels than the size allows, cube maps, arrays, volumes, uncompressed formats.
    #[test]
    fn hostile_headers_are_typed_errors() {
        let good = bc7_file(16, 16, 5);
        let n = good.len() as u64;
        let set =
            |f: &mut Vec<u8>, off: usize, v: u32| f[off..off + 4].copy_from_slice(&v.to_le_bytes());
        let err = |f: &[u8]| parse(f, f.len() as u64, &limits()).unwrap_err();
        assert!(matches!(err(&good[..100]), Ktx2Error::Truncated { .. }));
        assert!(matches!(err(&good[..140]), Ktx2Error::Truncated { .. }));
        assert!(matches!(
            err(&good[..n as usize - 1]),
            Ktx2Error::LevelOutOfBounds { level: 4, .. }
        ));
        assert!(matches!(err(b"DDS"), Ktx2Error::BadMagic));
        let mut f = good.clone();
        set(&mut f, 28, 6); // 6 levels for 16x16
        assert!(matches!(
            err(&f),
            Ktx2Error::BadLevelCount {
                level_count: 6,
                max: 5
            }
        ));
        let mut f = good.clone();
        set(&mut f, 16, u32::MAX); // width
        assert!(matches!(err(&f), Ktx2Error::TooLarge { .. }));
        let mut f = good.clone();
        set(&mut f, 12, 0);
        assert!(matches!(err(&f), Ktx2Error::ZeroSize { .. }));
        let mut f = good.clone();
        set(&mut f, 112, DDSCAPS2_CUBEMAP);
        assert!(err(&f).to_string().contains("cube map"), "{}", err(&f));
        let mut f = good.clone();
        set(&mut f, 140, 6); // arraySize
        assert!(err(&f).to_string().contains("array of 6"), "{}", err(&f));
        let mut f = good.clone();
        set(&mut f, 132, 4); // 3D
        assert!(err(&f).to_string().contains("3D"), "{}", err(&f));
        let mut f = good.clone();
        set(&mut f, 128, 28); // R8G8B8A8_UNORM
        assert!(
            err(&f).to_string().contains("DXGI_FORMAT 28"),
            "{}",
            err(&f)
        );
        let mut f = good.clone();
        set(&mut f, 80, 0x40); // DDPF_RGB
        assert!(err(&f).to_string().contains("uncompressed"), "{}", err(&f));
        let mut f = good.clone();
        set(&mut f, 84, u32::from_le_bytes(*b"ETC2"));
        assert!(err(&f).to_string().contains("'ETC2'"), "{}", err(&f));
        let mut f = good.clone();
        set(&mut f, 4, 100);
        assert!(matches!(
            err(&f),
            Ktx2Error::BadDdsHeader {
                field: "dwSize",
                ..
            }
        ));
        // A file larger than the limit is refused before anything else.
        let small = ReadLimits {
            max_file_bytes: 100,
            ..ReadLimits::default()
        };
        assert!(matches!(
            parse(&good, n, &small),
            Err(Ktx2Error::FileTooLarge { .. })
        ));
    }

    /// A legacy header: the FourCC names the format, there is no DX10 header, no mip count flag
    /// means one level.
    #[test]
    fn a_legacy_header_names_its_format_by_fourcc() {
        let level = vec![7u8; 4 * 4 * 16];
        let mut f = write_dds(wgpu::TextureFormat::Bc3RgbaUnorm, 16, 16, &[&level], false).unwrap();
        let info = parse(&f, f.len() as u64, &limits()).unwrap();
        assert_eq!(info.format, wgpu::TextureFormat::Bc3RgbaUnorm);
        assert_eq!(info.levels[0].offset, 128);
        assert_eq!(
            info.container,
            Container::Dds(DdsHeader::Legacy { fourcc: *b"DXT5" })
        );
        // No DDSD_MIPMAPCOUNT: one level, whatever dwMipMapCount says.
        f[8..12].copy_from_slice(&0x1007u32.to_le_bytes());
        f[28..32].copy_from_slice(&9u32.to_le_bytes());
        assert_eq!(
            parse(&f, f.len() as u64, &limits()).unwrap().levels.len(),
            1
        );
        assert!(
            write_dds(
                wgpu::TextureFormat::Bc7RgbaUnorm,
                4,
                4,
                &[&level[..16]],
                false
            )
            .is_none()
        );
    }
}
