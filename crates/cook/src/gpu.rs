//! The GPU block encoder: `block_compression`'s compute shaders (ports of Intel's ISPC kernels,
//! the same family as the CPU path's intel_tex_2) on a wgpu device, behind [`BlockEncoder`].
//!
//! [`GpuEncoders::open`] makes the device once per cook; [`GpuEncoders::encoder`] gives the
//! encoder for a cook's options. A level is encoded whole ([`BlockEncoder::whole_level`]): the
//! image goes up as a texture, the blocks come back through a storage buffer, in bands of rows
//! whose output stays under the device's storage-binding limit. The compressor records one
//! compute pass per submit (its settings buffers are written at submit time), so the cook's
//! threads take turns on it; their mip filtering still runs in parallel.
//!
//! `auto` uses a GPU only where it is a real one: on a software adapter (lavapipe, WARP) the
//! shaders run slower than the CPU encoder, so the CPU path stays ([`GpuMode`]).

use std::sync::{Arc, Mutex};

use block_compression::{BC6HSettings, BC7Settings, CompressionVariant, GpuBlockCompressor};

use crate::encoder::BlockEncoder;
use crate::{BlockKind, CookError, Quality};

/// Whether `mipflow cook` encodes on the GPU (`--gpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum GpuMode {
    /// A real GPU if the machine has one; the CPU on a software adapter or none.
    #[default]
    Auto,
    /// The GPU, whatever adapter there is (a software one included); an error without one.
    On,
    /// The CPU encoder.
    Off,
}

/// The device the GPU encoders share.
pub struct GpuEncoders {
    device: wgpu::Device,
    queue: wgpu::Queue,
    compressor: Mutex<GpuBlockCompressor>,
    adapter: String,
    max_binding: u64,
}

impl std::fmt::Debug for GpuEncoders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuEncoders")
            .field("adapter", &self.adapter)
            .finish_non_exhaustive()
    }
}

impl GpuEncoders {
    /// The GPU for `mode`: `None` for `off`, and for `auto` without a real GPU (a software
    /// adapter, or none); an error for `on` without any adapter.
    pub fn open(mode: GpuMode) -> Result<Option<Arc<Self>>, CookError> {
        if mode == GpuMode::Off {
            return Ok(None);
        }
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        // Vulkan, Metal, DX12 (WGPU_BACKEND may say otherwise): GL cannot run the encoders'
        // compute shaders, and probing it prints EGL errors on machines without a display.
        desc.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }));
        let adapter = match (adapter, mode) {
            (Ok(a), GpuMode::Auto) if a.get_info().device_type == wgpu::DeviceType::Cpu => {
                tracing::info!(
                    "cook: {} is a software adapter: encoding on the CPU (--gpu on to use it)",
                    a.get_info().name
                );
                return Ok(None);
            }
            (Ok(a), _) => a,
            (Err(_), GpuMode::Auto) => return Ok(None),
            (Err(e), _) => return Err(CookError::Gpu(format!("--gpu on: no GPU adapter ({e})"))),
        };
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("mipflow cook"),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| CookError::Gpu(format!("{}: {e}", adapter.get_info().name)))?;
        let compressor = GpuBlockCompressor::new(device.clone(), queue.clone());
        Ok(Some(Arc::new(Self {
            device,
            queue,
            compressor: Mutex::new(compressor),
            adapter: adapter.get_info().name,
            max_binding: limits.max_storage_buffer_binding_size.min(64 << 20),
        })))
    }

    /// The adapter's name.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// The GPU encoder for a cook's options (every block format).
    pub fn encoder(self: &Arc<Self>, opts: &crate::CookOptions) -> Box<dyn BlockEncoder> {
        Box::new(GpuEncoder {
            gpu: self.clone(),
            kind: opts.block_kind(),
            quality: opts.quality,
            srgb_to_linear: opts.mips_in_linear_light(),
        })
    }
}

/// One block format on the GPU.
struct GpuEncoder {
    gpu: Arc<GpuEncoders>,
    kind: BlockKind,
    quality: Quality,
    /// BC6H: the 8-bit values are sRGB-encoded colour.
    srgb_to_linear: bool,
}

impl GpuEncoder {
    fn variant(&self, alpha: bool) -> CompressionVariant {
        match (self.kind, self.quality, alpha) {
            (BlockKind::Bc7, Quality::Fast, false) => {
                CompressionVariant::BC7(BC7Settings::opaque_very_fast())
            }
            (BlockKind::Bc7, Quality::Fast, true) => {
                CompressionVariant::BC7(BC7Settings::alpha_very_fast())
            }
            (BlockKind::Bc7, Quality::Default, false) => {
                CompressionVariant::BC7(BC7Settings::opaque_fast())
            }
            (BlockKind::Bc7, Quality::Default, true) => {
                CompressionVariant::BC7(BC7Settings::alpha_fast())
            }
            (BlockKind::Bc7, Quality::Slow, false) => {
                CompressionVariant::BC7(BC7Settings::opaque_basic())
            }
            (BlockKind::Bc7, Quality::Slow, true) => {
                CompressionVariant::BC7(BC7Settings::alpha_basic())
            }
            (BlockKind::Bc1, ..) => CompressionVariant::BC1,
            (BlockKind::Bc3, ..) => CompressionVariant::BC3,
            (BlockKind::Bc4, ..) => CompressionVariant::BC4,
            (BlockKind::Bc5, ..) => CompressionVariant::BC5,
            (BlockKind::Bc6h, Quality::Fast, _) => {
                CompressionVariant::BC6H(BC6HSettings::very_fast())
            }
            (BlockKind::Bc6h, Quality::Default, _) => {
                CompressionVariant::BC6H(BC6HSettings::fast())
            }
            (BlockKind::Bc6h, Quality::Slow, _) => CompressionVariant::BC6H(BC6HSettings::basic()),
        }
    }

    /// The source texture: RGBA8 as stored (the blocks keep the values; an sRGB format decodes
    /// them), or for BC6H half floats of the linear light.
    fn upload(&self, rgba: &[u8], width: u32, height: u32, stride: u32) -> wgpu::Texture {
        let bc6h = self.kind == BlockKind::Bc6h;
        let format = if bc6h {
            wgpu::TextureFormat::Rgba16Float
        } else {
            wgpu::TextureFormat::Rgba8Unorm
        };
        let size = wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        };
        let texture = self.gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("cook source"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let (data, row): (std::borrow::Cow<'_, [u8]>, u32) = if bc6h {
            let linear = self.srgb_to_linear;
            let mut halves = Vec::with_capacity(width as usize * height as usize * 8);
            for y in 0..height as usize {
                let start = y * stride as usize;
                for p in rgba[start..start + width as usize * 4].chunks_exact(4) {
                    for (c, &x) in p.iter().enumerate() {
                        let f = match c {
                            3 => 1.0,
                            _ if linear => crate::srgb_to_linear(f32::from(x) / 255.0),
                            _ => f32::from(x) / 255.0,
                        };
                        halves.extend_from_slice(&half::f16::from_f32(f).to_le_bytes());
                    }
                }
            }
            (halves.into(), width * 8)
        } else {
            (rgba.into(), stride)
        };
        self.gpu.queue.write_texture(
            texture.as_image_copy(),
            &data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(height),
            },
            size,
        );
        texture
    }
}

impl BlockEncoder for GpuEncoder {
    fn name(&self) -> String {
        let kind = format!("{:?}", self.kind).to_lowercase();
        let q = self.quality.profile();
        let linear = if self.srgb_to_linear && self.kind == BlockKind::Bc6h {
            "/linear"
        } else {
            ""
        };
        format!("block_compression-0.11-gpu/{kind}/{q}{linear}")
    }

    fn block_bytes(&self) -> usize {
        match self.kind {
            BlockKind::Bc1 | BlockKind::Bc4 => 8,
            _ => 16,
        }
    }

    fn whole_level(&self) -> bool {
        true
    }

    fn encode_blocks(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
        stride: u32,
        alpha: bool,
        out: &mut [u8],
    ) -> Result<(), CookError> {
        if crate::encoder::check_surface(rgba, (width, height, stride), out, self.block_bytes())?
            == 0
        {
            return Ok(());
        }
        let gpu = &self.gpu;
        let variant = self.variant(alpha);
        let row_bytes = u64::from(variant.bytes_per_row(width));
        // Bands of block rows whose output fits one storage binding.
        let band_rows = (gpu.max_binding / row_bytes).clamp(1, u64::from(height / 4)) as u32;
        let mut compressor = gpu.compressor.lock().map_err(|_| {
            CookError::Gpu("a cook thread panicked while encoding on the GPU".into())
        })?;
        let texture = self.upload(rgba, width, height, stride);
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let mut row = 0u32;
        while row < height / 4 {
            let rows = band_rows.min(height / 4 - row);
            let bytes = u64::from(rows) * row_bytes;
            let blocks = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cook blocks"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cook readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            compressor.add_compression_task(
                variant,
                &view,
                width,
                rows * 4,
                &blocks,
                Some(row * 4),
                None,
            );
            let mut enc = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("cook"),
                });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("cook encode"),
                    timestamp_writes: None,
                });
                compressor.compress(&mut pass);
            }
            enc.copy_buffer_to_buffer(&blocks, 0, &readback, 0, bytes);
            gpu.queue.submit([enc.finish()]);
            let slice = readback.slice(..);
            let (tx, rx) = std::sync::mpsc::channel();
            slice.map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| CookError::Gpu(format!("waiting for the encode: {e}")))?;
            match rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(CookError::Gpu(format!("reading the blocks back: {e}"))),
                Err(_) => return Err(CookError::Gpu("the readback never completed".into())),
            }
            let start = (u64::from(row) * row_bytes) as usize;
            {
                let mapped = slice
                    .get_mapped_range()
                    .map_err(|e| CookError::Gpu(format!("reading the blocks back: {e}")))?;
                out[start..start + bytes as usize].copy_from_slice(&mapped);
            }
            readback.unmap();
            row += rows;
        }
        Ok(())
    }
}
