//! Exact byte sizes of textures and buffers, as the ledger charges them.
//!
//! A texture's size is the sum over its mip levels of `blocks_x * blocks_y * depth * block_bytes`,
//! times array layers and samples. These are the bytes of the data itself; drivers add alignment
//! and allocate from larger blocks, which is what the allocator cross-check test measures.

use wgpu::{TextureDimension, TextureFormat};

/// Bytes per texel block of `format` for the data mipflow stores, or `None` for formats whose size
/// is left to the implementation and that mipflow therefore does not create.
///
/// Depth and stencil formats are given the largest storage a backend picks for them, so that a
/// budget is never passed on any of them (the cost: an over-count where the smaller one is
/// native): `Depth24Plus` as 4 bytes (X8D24 or D32); `Depth24PlusStencil8` as 8, since Vulkan
/// without D24S8 (AMD) and Metal store it as D32S8, which drivers pad to 8 bytes per texel (there
/// is no packed 5-byte layout); `Stencil8` as 4, since DX12 always stores it as D24S8 and Vulkan
/// without S8 as D24S8 (or D32S8 where neither exists: not counted); `Depth32FloatStencil8` as 8.
pub fn block_bytes(format: TextureFormat) -> Option<u32> {
    match format {
        TextureFormat::Depth16Unorm => Some(2),
        TextureFormat::Depth24Plus => Some(4),
        TextureFormat::Depth24PlusStencil8 => Some(8),
        TextureFormat::Depth32Float => Some(4),
        TextureFormat::Depth32FloatStencil8 => Some(8),
        TextureFormat::Stencil8 => Some(4),
        f => f.block_copy_size(None),
    }
}

/// Bytes per texel block of `format` in a buffer-texture copy (what the data uploaded or read
/// back holds, `aspect: All`), or `None` for formats that cannot be copied that way (depth with
/// stencil, `Depth24Plus`). Not the charge: a depth or stencil format's storage can be larger
/// ([`block_bytes`]).
pub fn copy_block_bytes(format: TextureFormat) -> Option<u32> {
    format.block_copy_size(Some(wgpu::TextureAspect::All))
}

/// The extent of mip `level` of a texture whose level 0 is `width x height x depth` (depth only
/// shrinks for 3D textures). Never below 1.
pub fn mip_extent(
    width: u32,
    height: u32,
    depth: u32,
    dimension: TextureDimension,
    level: u32,
) -> (u32, u32, u32) {
    let shrink = |v: u32| v.checked_shr(level).unwrap_or(0).max(1);
    let d = if dimension == TextureDimension::D3 {
        shrink(depth)
    } else {
        depth
    };
    (shrink(width), shrink(height), d)
}

/// The number of levels of a full mip chain down to 1x1 for a `width x height` texture.
pub fn full_mip_count(width: u32, height: u32) -> u32 {
    32 - width.max(height).max(1).leading_zeros()
}

/// Bytes of one level of `format` at `width x height` (one layer, one sample). `None` when the
/// format has no defined size.
pub fn level_bytes(format: TextureFormat, width: u32, height: u32) -> Option<u64> {
    blocks_times(format, width, height, block_bytes(format)?)
}

/// The blocks of `format` a `width x height` level holds, times `bytes` each.
fn blocks_times(format: TextureFormat, width: u32, height: u32, bytes: u32) -> Option<u64> {
    let (bw, bh) = format.block_dimensions();
    let bx = u64::from(width.div_ceil(bw));
    let by = u64::from(height.div_ceil(bh));
    bx.checked_mul(by)?.checked_mul(u64::from(bytes))
}

/// Bytes of one level's data as a copy holds it ([`copy_block_bytes`]), rows packed: what an
/// upload of the level is given. `None` for a format that cannot be copied as a whole.
pub fn copy_level_bytes(format: TextureFormat, width: u32, height: u32) -> Option<u64> {
    blocks_times(format, width, height, copy_block_bytes(format)?)
}

/// Exact bytes of the texture `desc` describes: every mip level in `desc.mip_level_count`, every
/// array layer (or depth slice, shrinking per level for 3D), every MSAA sample. `None` when the
/// format has no defined size.
pub fn texture_bytes(desc: &wgpu::TextureDescriptor<'_>) -> Option<u64> {
    texture_bytes_levels(desc, 0, desc.mip_level_count)
}

/// Bytes of the levels `first..first + count` of the texture `desc` describes (a partial chain).
pub fn texture_bytes_levels(
    desc: &wgpu::TextureDescriptor<'_>,
    first: u32,
    count: u32,
) -> Option<u64> {
    let s = desc.size;
    let mut total = 0u64;
    for level in first..first.saturating_add(count) {
        let (w, h, d) = mip_extent(
            s.width,
            s.height,
            s.depth_or_array_layers,
            desc.dimension,
            level,
        );
        let per_layer = level_bytes(desc.format, w, h)?;
        total = total.checked_add(
            per_layer
                .checked_mul(u64::from(d))?
                .checked_mul(u64::from(desc.sample_count))?,
        )?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(
        format: TextureFormat,
        w: u32,
        h: u32,
        layers: u32,
        mips: u32,
        samples: u32,
    ) -> wgpu::TextureDescriptor<'static> {
        wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: layers,
            },
            mip_level_count: mips,
            sample_count: samples,
            dimension: TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        }
    }

    #[test]
    fn copies_use_the_data_size_not_the_charge() {
        assert_eq!(copy_block_bytes(TextureFormat::Stencil8), Some(1));
        assert_eq!(copy_block_bytes(TextureFormat::Depth32Float), Some(4));
        assert_eq!(copy_block_bytes(TextureFormat::Depth24PlusStencil8), None);
        assert_eq!(copy_block_bytes(TextureFormat::Bc7RgbaUnorm), Some(16));
        assert_eq!(copy_block_bytes(TextureFormat::Rgba16Float), Some(8));
    }

    #[test]
    fn depth_and_stencil_are_charged_as_the_largest_storage_a_backend_uses() {
        // 100x100: Stencil8 as D24S8 (DX12), Depth24PlusStencil8 as D32S8 (Metal, AMD).
        for (format, bytes) in [
            (TextureFormat::Stencil8, 40_000),
            (TextureFormat::Depth24PlusStencil8, 80_000),
            (TextureFormat::Depth24Plus, 40_000),
            (TextureFormat::Depth32FloatStencil8, 80_000),
            (TextureFormat::Depth16Unorm, 20_000),
        ] {
            assert_eq!(level_bytes(format, 100, 100), Some(bytes), "{format:?}");
        }
    }

    #[test]
    fn bc7_1024_full_chain_is_1_398_128_bytes() {
        assert_eq!(full_mip_count(1024, 1024), 11);
        let d = desc(TextureFormat::Bc7RgbaUnormSrgb, 1024, 1024, 1, 11, 1);
        assert_eq!(texture_bytes(&d), Some(1_398_128));
        // level 0 alone: 256 x 256 blocks of 16 bytes.
        assert_eq!(texture_bytes_levels(&d, 0, 1), Some(1_048_576));
        // the 4x4, 2x2 and 1x1 levels each take one whole block.
        assert_eq!(texture_bytes_levels(&d, 8, 3), Some(48));
    }

    #[test]
    fn bc7_partial_chains_and_odd_sizes() {
        let d = desc(TextureFormat::Bc7RgbaUnorm, 1024, 1024, 1, 11, 1);
        // levels 5.. (32x32 down to 1x1): 64+16+4+1+1+1 blocks.
        assert_eq!(texture_bytes_levels(&d, 5, 6), Some(87 * 16));
        // 1000x600 level 0: 250 x 150 blocks; level 1 500x300: 125 x 75 blocks.
        let d = desc(TextureFormat::Bc7RgbaUnorm, 1000, 600, 1, 2, 1);
        assert_eq!(texture_bytes(&d), Some((250 * 150 + 125 * 75) * 16));
        // 3x5: 1 x 2 blocks.
        assert_eq!(level_bytes(TextureFormat::Bc7RgbaUnorm, 3, 5), Some(32));
    }

    #[test]
    fn colour_targets() {
        let d = desc(TextureFormat::Rgba16Float, 1920, 1080, 1, 1, 1);
        assert_eq!(texture_bytes(&d), Some(16_588_800));
        let d = desc(TextureFormat::Rgba8UnormSrgb, 256, 256, 1, 9, 1);
        // 4 * (65536+16384+4096+1024+256+64+16+4+1)
        assert_eq!(texture_bytes(&d), Some(4 * 87_381));
    }

    #[test]
    fn depth_msaa_and_layers() {
        let d = desc(TextureFormat::Depth32Float, 1920, 1080, 1, 1, 1);
        assert_eq!(texture_bytes(&d), Some(8_294_400));
        let d = desc(TextureFormat::Depth32Float, 1920, 1080, 1, 1, 4);
        assert_eq!(texture_bytes(&d), Some(33_177_600));
        // As D32S8, 8 bytes a texel (see `block_bytes`).
        let d = desc(TextureFormat::Depth24PlusStencil8, 100, 100, 1, 1, 1);
        assert_eq!(texture_bytes(&d), Some(80_000));
        let d = desc(TextureFormat::Rgba16Float, 64, 64, 6, 7, 1);
        // a cube-like array: 6 layers x (4096+1024+256+64+16+4+1) x 8 bytes
        assert_eq!(texture_bytes(&d), Some(6 * 5461 * 8));
        let d = desc(TextureFormat::Rgba8Unorm, 1280, 720, 1, 1, 4);
        assert_eq!(texture_bytes(&d), Some(1280 * 720 * 4 * 4));
    }

    #[test]
    fn three_d_depth_shrinks_per_level() {
        let mut d = desc(TextureFormat::R8Unorm, 8, 8, 8, 4, 1);
        d.dimension = TextureDimension::D3;
        assert_eq!(texture_bytes(&d), Some(512 + 64 + 8 + 1));
    }

    #[test]
    fn overflow_is_none_not_a_panic() {
        let d = desc(
            TextureFormat::Rgba32Float,
            u32::MAX,
            u32::MAX,
            u32::MAX,
            1,
            1,
        );
        assert_eq!(texture_bytes(&d), None);
    }
}
