//! The block-compressed formats mipflow reads, streams and writes: every BCn format wgpu has, with
//! its sRGB variant where one exists. One table says, per format, its `vkFormat` (KTX2), its
//! `DXGI_FORMAT` (DDS), the wgpu format it is sampled as, the Khronos Data Format colour model its
//! DFD must declare, and its block size; every size in the readers, the writer, the ledger and the
//! planner comes from it.

use wgpu::TextureFormat as F;

/// One block-compressed format as a KTX2 file declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFormat {
    /// `vkFormat` in the KTX2 header.
    pub vk_format: u32,
    /// `DXGI_FORMAT` in a DDS file's DX10 header (BC1's RGB variants share the RGBA value).
    pub dxgi_format: u32,
    /// The wgpu format it is created and sampled as.
    pub format: wgpu::TextureFormat,
    /// The DFD's `colorModel` (`KHR_DF_MODEL_BC1A` 128 ... `KHR_DF_MODEL_BC7` 134).
    pub color_model: u8,
    /// Bytes in one 4x4 block: 8 (BC1, BC4) or 16.
    pub block_bytes: u32,
    /// The Vulkan name without `VK_FORMAT_` and `_BLOCK`, for messages and reports.
    pub name: &'static str,
}

const fn bf(
    vk_format: u32,
    dxgi_format: u32,
    format: F,
    color_model: u8,
    block_bytes: u32,
    name: &'static str,
) -> BlockFormat {
    BlockFormat {
        vk_format,
        dxgi_format,
        format,
        color_model,
        block_bytes,
        name,
    }
}

/// Every format accepted, by `vkFormat`. BC1's RGB variants (131, 132) are sampled as wgpu's
/// RGBA BC1, which decodes their blocks the same way (a 3-colour block's fourth index is black
/// with alpha 0 there, opaque black in Vulkan's RGB view: the colour matches, only alpha can
/// differ, and an RGB texture's alpha is not meant to be read).
pub const FORMATS: &[BlockFormat] = &[
    bf(131, 71, F::Bc1RgbaUnorm, 128, 8, "BC1_RGB_UNORM"),
    bf(132, 72, F::Bc1RgbaUnormSrgb, 128, 8, "BC1_RGB_SRGB"),
    bf(133, 71, F::Bc1RgbaUnorm, 128, 8, "BC1_RGBA_UNORM"),
    bf(134, 72, F::Bc1RgbaUnormSrgb, 128, 8, "BC1_RGBA_SRGB"),
    bf(135, 74, F::Bc2RgbaUnorm, 129, 16, "BC2_UNORM"),
    bf(136, 75, F::Bc2RgbaUnormSrgb, 129, 16, "BC2_SRGB"),
    bf(137, 77, F::Bc3RgbaUnorm, 130, 16, "BC3_UNORM"),
    bf(138, 78, F::Bc3RgbaUnormSrgb, 130, 16, "BC3_SRGB"),
    bf(139, 80, F::Bc4RUnorm, 131, 8, "BC4_UNORM"),
    bf(140, 81, F::Bc4RSnorm, 131, 8, "BC4_SNORM"),
    bf(141, 83, F::Bc5RgUnorm, 132, 16, "BC5_UNORM"),
    bf(142, 84, F::Bc5RgSnorm, 132, 16, "BC5_SNORM"),
    bf(143, 95, F::Bc6hRgbUfloat, 133, 16, "BC6H_UFLOAT"),
    bf(144, 96, F::Bc6hRgbFloat, 133, 16, "BC6H_SFLOAT"),
    bf(145, 98, F::Bc7RgbaUnorm, 134, 16, "BC7_UNORM"),
    bf(146, 99, F::Bc7RgbaUnormSrgb, 134, 16, "BC7_SRGB"),
];

impl BlockFormat {
    /// The entry for a `vkFormat`, if mipflow reads it.
    pub fn from_vk(vk_format: u32) -> Option<&'static BlockFormat> {
        FORMATS.iter().find(|f| f.vk_format == vk_format)
    }

    /// The entry for a DDS file's `DXGI_FORMAT`, if mipflow reads it. A `_TYPELESS` BCn format
    /// (70, 73, 76, 79, 82, 94, 97) is read as its UNORM variant (BC6H's as UFLOAT): the blocks
    /// are the same, only the view's interpretation is left open.
    pub fn from_dxgi(dxgi_format: u32) -> Option<&'static BlockFormat> {
        let typed = match dxgi_format {
            70 | 73 | 76 | 79 | 82 | 94 | 97 => dxgi_format + 1,
            other => other,
        };
        // The RGBA BC1 entries come after the RGB ones: search from the end.
        FORMATS.iter().rev().find(|f| f.dxgi_format == typed)
    }

    /// The entry for a legacy DDS pixel format's FourCC (no DX10 header): `DXT1` (BC1), `DXT2`
    /// and `DXT3` (BC2), `DXT4` and `DXT5` (BC3), `ATI1`/`BC4U` and `BC4S`, `ATI2`/`BC5U` and
    /// `BC5S`. All UNORM (or SNORM): a legacy header has no way to say sRGB.
    pub fn from_fourcc(fourcc: [u8; 4]) -> Option<&'static BlockFormat> {
        let vk = match &fourcc {
            b"DXT1" => 133,
            b"DXT2" | b"DXT3" => 135,
            b"DXT4" | b"DXT5" => 137,
            b"ATI1" | b"BC4U" => 139,
            b"BC4S" => 140,
            b"ATI2" | b"BC5U" => 141,
            b"BC5S" => 142,
            _ => return None,
        };
        Self::from_vk(vk)
    }

    /// The entry a wgpu format is written as (BC1 as its RGBA variant), if it is one of ours.
    pub fn from_wgpu(format: wgpu::TextureFormat) -> Option<&'static BlockFormat> {
        // The RGBA BC1 entries come after the RGB ones: search from the end.
        FORMATS.iter().rev().find(|f| f.format == format)
    }

    /// Bytes of one level of `width` x `height` texels (partial edge blocks count whole).
    pub fn level_size(&self, width: u32, height: u32) -> u64 {
        // Saturating: a hostile header's 2^32-texel sides are then refused for their size.
        u64::from(width.div_ceil(4))
            .saturating_mul(u64::from(height.div_ceil(4)))
            .saturating_mul(u64::from(self.block_bytes))
    }

    /// Whether the format stores sRGB-encoded colour.
    pub fn is_srgb(&self) -> bool {
        self.format.is_srgb()
    }
}

/// Bytes of one level of `format`: any wgpu BCn format, or an uncompressed one (a Basis file
/// transcoded to RGBA8 on an adapter without BC); 16-byte blocks for a format with no copy size.
pub fn level_size(format: wgpu::TextureFormat, width: u32, height: u32) -> u64 {
    let block = format.block_copy_size(None).unwrap_or(16);
    let (bw, bh) = format.block_dimensions();
    u64::from(width.div_ceil(bw))
        .saturating_mul(u64::from(height.div_ceil(bh)))
        .saturating_mul(u64::from(block))
}

/// What an unsupported `vkFormat` probably is, for its error message.
pub(super) fn unsupported_note(vk_format: u32) -> &'static str {
    match vk_format {
        0 => " (VK_FORMAT_UNDEFINED, which mipflow reads only as Basis Universal UASTC or ETC1S)",
        1_000_066_000 => " (ASTC 4x4 SFLOAT, which mipflow reads only as Basis UASTC HDR)",
        1..=130 => " (uncompressed or packed: cook the image with `mipflow cook`)",
        147..=184 => " (ETC2, EAC or ASTC, which desktop GPUs do not sample: cook it to BCn)",
        _ => "",
    }
}

/// The supported `vkFormat`s, for an error message.
pub const SUPPORTED: &str =
    "131 to 146: BC1 to BC7 (UNORM, SNORM, sRGB, BC6H's floats), and 0 for Basis UASTC or ETC1S";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_agrees_with_wgpu() {
        for f in FORMATS {
            assert_eq!(
                u64::from(f.block_bytes),
                u64::from(f.format.block_copy_size(None).unwrap()),
                "{}",
                f.name
            );
            assert_eq!(f.format.block_dimensions(), (4, 4), "{}", f.name);
            assert_eq!(f.name.ends_with("SRGB"), f.is_srgb(), "{}", f.name);
            assert_eq!(BlockFormat::from_vk(f.vk_format), Some(f));
            let dds = BlockFormat::from_dxgi(f.dxgi_format).unwrap();
            assert_eq!((dds.format, dds.block_bytes), (f.format, f.block_bytes));
            // Written back as the same vkFormat (BC1 RGB as RGBA, same blocks).
            let back = BlockFormat::from_wgpu(f.format).unwrap();
            assert_eq!(back.format, f.format);
            assert_eq!(back.color_model, f.color_model);
        }
        assert_eq!(
            BlockFormat::from_wgpu(F::Bc1RgbaUnorm).unwrap().vk_format,
            133
        );
        assert!(BlockFormat::from_vk(37).is_none());
        assert!(BlockFormat::from_dxgi(28).is_none()); // R8G8B8A8_UNORM
        assert_eq!(BlockFormat::from_dxgi(97).unwrap().format, F::Bc7RgbaUnorm); // typeless
        assert_eq!(
            BlockFormat::from_fourcc(*b"DXT5").unwrap().format,
            F::Bc3RgbaUnorm
        );
        assert_eq!(
            BlockFormat::from_fourcc(*b"ATI2").unwrap().format,
            F::Bc5RgUnorm
        );
        assert!(BlockFormat::from_fourcc(*b"DX10").is_none());
        let bc1 = BlockFormat::from_vk(131).unwrap();
        assert_eq!(bc1.level_size(1000, 600), 250 * 150 * 8);
        assert_eq!(level_size(F::Bc4RUnorm, 3, 5), 2 * 8);
        assert_eq!(level_size(F::Bc7RgbaUnorm, 3, 5), 2 * 16);
        assert_eq!(level_size(F::Rgba8UnormSrgb, 3, 5), 3 * 5 * 4);
    }

    #[test]
    fn a_level_too_large_to_count_saturates() {
        // 2^30 x 2^30 blocks of 16 bytes is 2^64: the size saturates (and a file can never
        // hold it) instead of wrapping to 0, which would pass a length check.
        let bc7 = BlockFormat::from_wgpu(F::Bc7RgbaUnorm).unwrap();
        assert_eq!(bc7.level_size(u32::MAX, u32::MAX), u64::MAX);
        assert_eq!(level_size(F::Bc7RgbaUnorm, u32::MAX, u32::MAX), u64::MAX);
        assert_eq!(
            level_size(F::Bc1RgbaUnorm, u32::MAX, u32::MAX),
            (1u64 << 60) * 8
        );
    }
}
