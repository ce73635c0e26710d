//! Creating a texture and filling its mip levels from CPU data.

use super::{GpuContext, TrackedTexture};
use crate::budget::{Category, size};
use crate::{Error, Result};

/// Creates the texture `desc` describes, charged to `category`, and writes `levels` into its mip
/// levels `0..levels.len()` (level 0 = full size; `levels.len()` must equal
/// `desc.mip_level_count`). Each level must hold exactly the bytes the format math gives; for
/// block-compressed formats the copy extent of levels smaller than one block is padded to the
/// block, as wgpu requires.
pub fn create_texture_with_levels(
    ctx: &GpuContext,
    desc: &wgpu::TextureDescriptor<'_>,
    levels: &[&[u8]],
    category: Category,
) -> Result<TrackedTexture> {
    let label = desc.label.unwrap_or("unlabelled texture");
    if levels.len() != desc.mip_level_count as usize {
        return Err(Error::InvalidResource {
            label: label.to_owned(),
            reason: format!(
                "{} levels of data for {} mip levels",
                levels.len(),
                desc.mip_level_count
            ),
        });
    }
    for (i, data) in levels.iter().enumerate() {
        // Layers of an array, or the level's own depth (halved a level) for a 3D texture.
        let (w, h, d) = size::mip_extent(
            desc.size.width,
            desc.size.height,
            desc.size.depth_or_array_layers,
            desc.dimension,
            i as u32,
        );
        let expect = size::copy_level_bytes(desc.format, w, h)
            .unwrap_or(0)
            .saturating_mul(u64::from(d));
        if data.len() as u64 != expect {
            return Err(Error::InvalidResource {
                label: label.to_owned(),
                reason: format!("level {i} has {} bytes, {w}x{h} needs {expect}", data.len()),
            });
        }
    }
    let tex = ctx.create_texture(desc, category)?;
    // The levels written hold a staging copy each until the GPU has them: charged, on an
    // error part-way too.
    let mut staged = 0u64;
    let mut written = Ok(());
    for (i, data) in levels.iter().enumerate() {
        written = write_level(ctx, tex.texture(), i as u32, data);
        if written.is_err() {
            break;
        }
        staged += staged_bytes(tex.texture(), i as u32);
    }
    ctx.hold_staging_until_done(staged, "texture upload staging");
    written.map(|()| tex)
}

/// Writes one whole mip level (all layers) of `texture` from tightly packed `data`.
///
/// wgpu holds a staging copy of `data` until the GPU has consumed it, which this does not
/// charge: the caller does (`create_texture_with_levels` charges its levels' copies to
/// `staging` until then).
///
/// wgpu copies `data` into a staging buffer it allocates: when the driver cannot give that
/// buffer, this returns [`Error::OutOfMemory`] (the write is inside an out-of-memory error
/// scope), and the level's content is undefined.
pub fn write_level(
    ctx: &GpuContext,
    texture: &wgpu::Texture,
    level: u32,
    data: &[u8],
) -> Result<()> {
    if level >= texture.mip_level_count() {
        return Err(Error::InvalidResource {
            label: "texture upload".into(),
            reason: format!(
                "level {level} of a texture of {} levels",
                texture.mip_level_count()
            ),
        });
    }
    ctx.scoped("texture upload staging", data.len() as u64, || {
        write_level_unscoped(ctx, texture, level, data)
    })
}

/// The bytes of the staging copy wgpu holds for a `write_texture` of `level` of `texture` until
/// the GPU has it: rows of blocks padded to 256 bytes, the largest row pitch a backend asks
/// for (DX12's; a BC7 1x1 level is 16 bytes of data and 256 of staging there), times rows and
/// depth. What the callers of [`write_level`] charge.
pub fn staged_bytes(texture: &wgpu::Texture, level: u32) -> u64 {
    if level >= texture.mip_level_count() {
        return 0;
    }
    let extent = texture.size().mip_level_size(level, texture.dimension());
    staged_bytes_of(texture.format(), extent.width, extent.height)
        * u64::from(extent.depth_or_array_layers)
}

/// [`staged_bytes`] of a 2D level of `width x height` texels in `format`, with no texture.
pub fn staged_bytes_of(format: wgpu::TextureFormat, width: u32, height: u32) -> u64 {
    let (row, rows) = level_rows_of(format, width, height);
    u64::from(row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
        * u64::from(rows)
}

/// The bytes of one row of blocks of `level` of `texture` (a row of texels for uncompressed
/// formats), and the number of such rows: the unit staged uploads work in
/// ([`super::staging::StagingRing::write_rows`]).
pub fn level_rows(texture: &wgpu::Texture, level: u32) -> (u32, u32) {
    if level >= texture.mip_level_count() {
        return (0, 0); // no such level: no rows
    }
    let extent = texture.size().mip_level_size(level, texture.dimension());
    level_rows_of(texture.format(), extent.width, extent.height)
}

/// [`level_rows`] for a level of `width x height` texels in `format`, with no texture.
pub fn level_rows_of(format: wgpu::TextureFormat, width: u32, height: u32) -> (u32, u32) {
    let (bw, bh) = format.block_dimensions();
    let block = size::copy_block_bytes(format).unwrap_or(4);
    (
        width.div_ceil(bw).saturating_mul(block),
        height.div_ceil(bh),
    )
}

fn write_level_unscoped(ctx: &GpuContext, texture: &wgpu::Texture, level: u32, data: &[u8]) {
    let format = texture.format();
    let (bw, bh) = format.block_dimensions();
    let block = size::copy_block_bytes(format).unwrap_or(4);
    let extent = texture.size().mip_level_size(level, texture.dimension());
    let physical = extent.physical_size(format);
    let blocks_x = physical.width / bw;
    let rows = physical.height / bh;
    ctx.queue().write_texture(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: level,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        data,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(blocks_x * block),
            rows_per_image: Some(rows),
        },
        physical,
    );
}
