//! The feedback's GPU resources: its storage buffers (refused with a typed error past one
//! binding) and bind groups.

use super::*;

impl Feedback {
    /// A storage buffer of `size` bytes, refused with a typed error past what one binding may
    /// hold (the bind group would fail otherwise).
    pub(super) fn storage(
        ctx: &GpuContext,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<TrackedBuffer> {
        let most = ctx.device().limits().max_storage_buffer_binding_size;
        if size > most {
            return Err(crate::Error::InvalidResource {
                label: label.to_owned(),
                reason: format!(
                    "{size} bytes exceed the device's max_storage_buffer_binding_size {most}"
                ),
            });
        }
        ctx.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | usage,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )
    }

    /// The bins (16 a slot), the tags (one a slot), the count and the list (one a slot).
    pub(super) fn bins(ctx: &GpuContext, capacity: u32) -> Result<TrackedBuffer> {
        Self::storage(
            ctx,
            "mipflow feedback bins",
            bins_bytes(capacity),
            wgpu::BufferUsages::COPY_DST,
        )
    }

    /// Bytes of the gather's output (and of each readback) for `room` listed slots.
    pub(super) fn compact_bytes(room: u32) -> u64 {
        (1 + u64::from(room) * ENTRY_WORDS) * 4
    }

    pub(super) fn compact(ctx: &GpuContext, room: u32) -> Result<TrackedBuffer> {
        Self::storage(
            ctx,
            "mipflow feedback gathered",
            Self::compact_bytes(room),
            wgpu::BufferUsages::COPY_SRC,
        )
    }

    pub(super) fn group(
        ctx: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        bins: &TrackedBuffer,
        params: &TrackedBuffer,
    ) -> wgpu::BindGroup {
        ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("mipflow feedback"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: bins.buffer().as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: params.buffer().as_entire_binding(),
                },
            ],
        })
    }

    pub(super) fn gather_group(
        ctx: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        bins: &TrackedBuffer,
        compact: &TrackedBuffer,
        params: &TrackedBuffer,
    ) -> wgpu::BindGroup {
        fn entry(binding: u32, b: &TrackedBuffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.buffer().as_entire_binding(),
            }
        }
        ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("mipflow feedback gather"),
            layout,
            entries: &[entry(0, bins), entry(1, compact), entry(2, params)],
        })
    }
}

/// A storage buffer binding, read-write.
pub(super) fn storage_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The parameters' uniform binding.
pub(super) fn uniform_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(PARAMS_BYTES),
        },
        count: None,
    }
}
