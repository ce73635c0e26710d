//! Reading a render target back to the CPU (tests, screenshots, the bench's image metrics).

use super::GpuContext;
use crate::budget::{Category, Charge, Ledger};
use crate::{Error, Result};

/// Room held on the ledger for a game's own short-lived allocations (a screenshot's readback
/// staging, a loading screen's buffer): charged like any allocation, so the manager plans it as
/// fixed bytes from its next frame, and [`Reservation::lend`] gives it back for the moment the
/// allocation lives, so that the allocation takes its place instead of passing the budget. Made
/// by [`crate::BudgetManager::reserve`] (or [`Reservation::new`] on any ledger); dropped, the
/// room is given back for good.
#[derive(Debug)]
pub struct Reservation {
    ledger: Ledger,
    charge: Option<Charge>,
    category: Category,
    bytes: u64,
    label: String,
}

impl Reservation {
    /// `bytes` of room in `category`, held on `ledger` under `label`.
    pub fn new(ledger: &Ledger, category: Category, bytes: u64, label: &str) -> Self {
        Self {
            charge: Some(ledger.charge(category, bytes, label)),
            ledger: ledger.clone(),
            category,
            bytes,
            label: label.to_owned(),
        }
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Runs `f` with the room given back (its bytes off the ledger), then holds it again: what
    /// `f` allocates, up to [`Reservation::bytes`], takes the room's place.
    pub fn lend<T>(&mut self, f: impl FnOnce() -> T) -> T {
        drop(self.charge.take());
        let out = f();
        self.charge = Some(self.ledger.charge(self.category, self.bytes, &self.label));
        out
    }
}

/// Bytes of the staging buffer [`read_texture_rgba8`] makes for `texture`: what a
/// [`Reservation`] for its screenshots holds. 0 for a texture it cannot read.
pub fn readback_bytes(texture: &wgpu::Texture) -> u64 {
    let format = texture.format();
    let Some(block) = crate::budget::size::copy_block_bytes(format) else {
        return 0;
    };
    let (bw, bh) = format.block_dimensions();
    let physical = texture
        .size()
        .mip_level_size(0, texture.dimension())
        .physical_size(format);
    let unpadded = physical.width / bw * block;
    let padded =
        unpadded.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    u64::from(padded) * u64::from(physical.height / bh)
}

/// [`read_texture_rgba8`] in the room of `room`: a screenshot in a budget test that the
/// manager planned for (reserve [`readback_bytes`]), not a frame over the budget.
pub fn read_texture_rgba8_reserved(
    ctx: &GpuContext,
    texture: &wgpu::Texture,
    room: &mut Reservation,
) -> Result<Vec<u8>> {
    room.lend(|| read_texture_rgba8(ctx, texture))
}

/// Copies mip 0 of a 4-byte-per-texel colour texture (`Rgba8Unorm[Srgb]` or `Bgra8Unorm[Srgb]`) into
/// tightly packed RGBA8 rows (BGRA is swizzled to RGBA). The staging buffer is charged to
/// [`Category::Staging`] while it lives. Blocks until the GPU is done.
pub fn read_texture_rgba8(ctx: &GpuContext, texture: &wgpu::Texture) -> Result<Vec<u8>> {
    let format = texture.format();
    let bgra = matches!(
        format,
        wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
    );
    if !bgra
        && !matches!(
            format,
            wgpu::TextureFormat::Rgba8Unorm | wgpu::TextureFormat::Rgba8UnormSrgb
        )
    {
        return Err(Error::Readback(format!(
            "readback supports RGBA8/BGRA8 targets, not {format:?}"
        )));
    }
    let mut out = read_level(ctx, texture, 0)?;
    if bgra {
        for px in out.chunks_exact_mut(4) {
            px.swap(0, 2);
        }
    }
    Ok(out)
}

/// Copies one mip level of a texture (any copyable format, block-compressed included) into
/// tightly packed rows of blocks, as a KTX2 file stores the level (of an array texture, its
/// first layer). For tests and tools: blocks until the GPU is done; the staging buffer is
/// charged to [`Category::Staging`] while it lives. A texture that cannot be copied (no
/// `COPY_SRC`, multisampled, 3D, a format with no fixed block size) is an
/// [`Error::Readback`], never a panic.
pub fn read_level(ctx: &GpuContext, texture: &wgpu::Texture, level: u32) -> Result<Vec<u8>> {
    let format = texture.format();
    if level >= texture.mip_level_count() {
        return Err(Error::Readback(format!(
            "level {level} of a texture with {} levels",
            texture.mip_level_count()
        )));
    }
    let usage = texture.usage();
    if !usage.contains(wgpu::TextureUsages::COPY_SRC) {
        return Err(Error::Readback(format!(
            "the texture was made without COPY_SRC (its usage: {usage:?})"
        )));
    }
    if texture.sample_count() != 1 {
        return Err(Error::Readback(format!(
            "a multisampled texture ({} samples) cannot be copied: resolve it first",
            texture.sample_count()
        )));
    }
    if texture.dimension() == wgpu::TextureDimension::D3 {
        return Err(Error::Readback("3D textures are not read back".into()));
    }
    // The bytes a copy holds, not the charge (a stencil texel is one byte in the copy).
    let block = crate::budget::size::copy_block_bytes(format).ok_or_else(|| {
        Error::Readback(format!(
            "{format:?} cannot be copied as a whole (depth with stencil, or no fixed size)"
        ))
    })?;
    let (bw, bh) = format.block_dimensions();
    // Of an array, its first layer.
    let mut physical = texture
        .size()
        .mip_level_size(level, texture.dimension())
        .physical_size(format);
    physical.depth_or_array_layers = 1;
    let rows = physical.height / bh;
    let unpadded = physical.width / bw * block;
    let padded =
        unpadded.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let staging = ctx.create_buffer(
        &wgpu::BufferDescriptor {
            label: Some("level readback staging"),
            size: u64::from(padded) * u64::from(rows),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        },
        Category::Staging,
    )?;
    // Whatever the checks above miss (a format with no copyable aspect as a whole, such as
    // depth and stencil together) is an error here, not the device's panic.
    let validation = ctx.device().push_error_scope(wgpu::ErrorFilter::Validation);
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("level readback"),
        });
    enc.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: level,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: staging.buffer(),
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(rows),
            },
        },
        physical,
    );
    let commands = enc.finish();
    if let Some(e) = pollster::block_on(validation.pop()) {
        return Err(Error::Readback(format!("the copy was refused: {e}")));
    }
    ctx.queue().submit([commands]);
    let slice = staging.buffer().slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    ctx.wait_idle()?;
    rx.recv()
        .map_err(|_| Error::Readback("the map callback never ran".into()))?
        .map_err(|e| Error::Readback(e.to_string()))?;
    let mut out =
        Vec::with_capacity(usize::try_from(u64::from(unpadded) * u64::from(rows)).unwrap_or(0));
    {
        let data = slice
            .get_mapped_range()
            .map_err(|e| Error::Readback(e.to_string()))?;
        for row in data.chunks_exact(padded as usize) {
            out.extend_from_slice(&row[..unpadded as usize]);
        }
    }
    staging.buffer().unmap();
    Ok(out)
}
