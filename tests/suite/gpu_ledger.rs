//! The ledger against wgpu's own view of memory, on a real adapter (lavapipe in CI).

use crate::common;

use mipflow::Category;

use mipflow::GpuContext;
use mipflow::low_level as size;
use mipflow::low_level as upload;

struct DriverView {
    allocated: u64,
    reserved: u64,
    blocks: usize,
    hal_textures: i64,
    hal_buffers: i64,
}

fn driver_view(ctx: &GpuContext) -> DriverView {
    // Flush the queue's pending writes: `write_texture` keeps its staging copy alive until a submit
    // has completed (1.4 MB here, as much as the BC7 data itself).
    ctx.queue().submit([]);
    ctx.wait_idle().unwrap();
    let report = ctx
        .allocator_report()
        .expect("this backend gives no allocator report (Vulkan and DX12 do)");
    let counters = ctx.device().get_internal_counters();
    DriverView {
        allocated: report.total_allocated_bytes,
        reserved: report.total_reserved_bytes,
        blocks: report.blocks.len(),
        hal_textures: counters.hal.texture_memory.read() as i64,
        hal_buffers: counters.hal.buffer_memory.read() as i64,
    }
}

fn tex_desc(
    label: &'static str,
    format: wgpu::TextureFormat,
    w: u32,
    h: u32,
    mips: u32,
    usage: wgpu::TextureUsages,
) -> wgpu::TextureDescriptor<'static> {
    wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: mips,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    }
}

/// Creates a mixed set (a BC7 texture with a full chain, two Rgba16Float render targets, a depth
/// target, vertex and uniform buffers), compares the ledger with the allocator report and the hal
/// counters, drops everything and checks that every side is back to its baseline.
///
/// Measured on lavapipe (Mesa 22.3.6, llvmpipe): ledger 15,349,360 B; allocator report +15,349,608 B
/// (+248 B, +0.002%); hal counters +15,349,508 B (+148 B; textures +14,300,672 B against the
/// ledger's 14,300,528 B). The differences are the driver's alignment of each allocation (the BC7
/// chain's 4x4, 2x2 and 1x1 levels, the uniform buffer's 256 B). The reserved figure grows from
/// 4 MiB in 1 block to 28 MiB in 3 blocks: gpu-allocator reserves memory in blocks, so it is not
/// comparable allocation by allocation. Until the GPU has consumed it, the report also holds
/// `write_texture`'s staging copy (+1,399,168 B here): `create_texture_with_levels` charges it
/// to `Category::Staging` until then, and the test waits for the GPU before comparing. The
/// tolerance (0.1% + 16 KiB) covers alignment and nothing more: even the
/// forgotten 256-byte uniform buffer would not hide in a render target's size, but a forgotten
/// render target would fail it.
#[test]
fn ledger_matches_allocator_report_and_counters() {
    let Some(ctx) = common::gpu() else { return };
    if !ctx.bc_supported() {
        panic!("adapter {} lacks BC compression", ctx.adapter_name());
    }
    let base = driver_view(&ctx);
    let ledger_base = ctx.ledger().total_bytes();
    assert_eq!(ledger_base, 0);

    let bc7_levels: Vec<Vec<u8>> = (0..11)
        .map(|l| {
            let d = 1024u32 >> l;
            vec![
                0x40u8;
                size::level_bytes(wgpu::TextureFormat::Bc7RgbaUnormSrgb, d, d).unwrap() as usize
            ]
        })
        .collect();
    let refs: Vec<&[u8]> = bc7_levels.iter().map(|v| v.as_slice()).collect();
    let bc7 = upload::create_texture_with_levels(
        &ctx,
        &tex_desc(
            "bc7 1024 full chain",
            wgpu::TextureFormat::Bc7RgbaUnormSrgb,
            1024,
            1024,
            11,
            wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        ),
        &refs,
        Category::Textures,
    )
    .unwrap();
    assert_eq!(bc7.bytes(), 1_398_128);
    // Its `write_texture` staging copy is charged to `staging` until the GPU has it, rows
    // padded to 256 bytes as the backend that pads most (DX12) holds it: the levels of 32 texels
    // and less take 256-byte rows.
    let staged: u64 = (0..11)
        .map(|l| {
            let d = 1024u32 >> l;
            upload::staged_bytes_of(wgpu::TextureFormat::Bc7RgbaUnormSrgb, d, d)
        })
        .sum();
    assert_eq!(staged, 1_398_128 + 1024 + 768 + 448 + 240 + 240 + 240);
    assert_eq!(ctx.ledger().snapshot().by_category.staging.bytes, staged);
    ctx.wait_idle().unwrap();
    assert_eq!(ctx.ledger().snapshot().by_category.staging.bytes, 0);
    let rt_usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING;
    let hdr_a = ctx
        .create_texture(
            &tex_desc(
                "hdr a",
                wgpu::TextureFormat::Rgba16Float,
                1280,
                720,
                1,
                rt_usage,
            ),
            Category::RenderTargets,
        )
        .unwrap();
    let hdr_b = ctx
        .create_texture(
            &tex_desc(
                "hdr b",
                wgpu::TextureFormat::Rgba16Float,
                640,
                360,
                1,
                rt_usage,
            ),
            Category::RenderTargets,
        )
        .unwrap();
    let depth = ctx
        .create_texture(
            &tex_desc(
                "depth",
                wgpu::TextureFormat::Depth32Float,
                1280,
                720,
                1,
                rt_usage,
            ),
            Category::RenderTargets,
        )
        .unwrap();
    let vb = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("vertices"),
                size: 1 << 20,
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )
        .unwrap();
    let ub = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("uniforms"),
                size: 256,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            },
            Category::Buffers,
        )
        .unwrap();

    let snap = ctx.ledger().snapshot();
    let expect_rt = 1280 * 720 * 8 + 640 * 360 * 8 + 1280 * 720 * 4;
    assert_eq!(snap.by_category.textures.bytes, 1_398_128);
    assert_eq!(snap.by_category.textures.count, 1);
    assert_eq!(snap.by_category.render_targets.bytes, expect_rt);
    assert_eq!(snap.by_category.render_targets.count, 3);
    assert_eq!(snap.by_category.buffers.bytes, (1 << 20) + 256);
    let ledger_total = snap.total_bytes;

    let live = driver_view(&ctx);
    let alloc_delta = live.allocated - base.allocated;
    let hal_delta = (live.hal_textures - base.hal_textures) + (live.hal_buffers - base.hal_buffers);
    let hal_tex_delta = live.hal_textures - base.hal_textures;
    println!(
        "ledger {ledger_total} B | allocator report +{alloc_delta} B allocated ({:+} B, {:+.3}%), \
         reserved {} -> {} B in {} -> {} blocks | hal counters +{hal_delta} B ({:+} B), textures +{hal_tex_delta} B \
         (ledger textures+targets {} B)",
        alloc_delta as i64 - ledger_total as i64,
        (alloc_delta as f64 / ledger_total as f64 - 1.0) * 100.0,
        base.reserved,
        live.reserved,
        base.blocks,
        live.blocks,
        hal_delta - ledger_total as i64,
        snap.by_category.textures.bytes + snap.by_category.render_targets.bytes,
    );
    let tol = ledger_total / 1000 + 16 * 1024;
    assert!(
        alloc_delta >= ledger_total && alloc_delta - ledger_total <= tol,
        "allocator report +{alloc_delta} vs ledger {ledger_total} (tolerance {tol})"
    );
    assert!(
        hal_delta >= ledger_total as i64 && (hal_delta - ledger_total as i64) as u64 <= tol,
        "hal counters +{hal_delta} vs ledger {ledger_total} (tolerance {tol})"
    );

    drop((bc7, hdr_a, hdr_b, depth, vb, ub));
    let after = driver_view(&ctx);
    let snap = ctx.ledger().snapshot();
    assert_eq!(snap.total_bytes, 0, "ledger back to baseline");
    for cat in Category::ALL {
        assert_eq!(snap.by_category.get(cat).count, 0, "{cat:?} count");
    }
    assert_eq!(snap.peak_bytes, ledger_total);
    assert!(ctx.leak_report().is_empty());
    assert_eq!(
        after.allocated, base.allocated,
        "allocator back to baseline"
    );
    assert_eq!(
        after.hal_textures, base.hal_textures,
        "hal texture memory back to baseline"
    );
    assert_eq!(
        after.hal_buffers, base.hal_buffers,
        "hal buffer memory back to baseline"
    );
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// Something left alive is named in the leak report, with its bytes.
#[test]
fn leak_report_names_what_is_alive() {
    let Some(ctx) = common::gpu() else { return };
    let keep = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("forgotten buffer"),
                size: 4096,
                usage: wgpu::BufferUsages::VERTEX,
                mapped_at_creation: false,
            },
            Category::Other,
        )
        .unwrap();
    let gone = ctx
        .create_texture(
            &tex_desc(
                "freed texture",
                wgpu::TextureFormat::Rgba8Unorm,
                64,
                64,
                7,
                wgpu::TextureUsages::TEXTURE_BINDING,
            ),
            Category::Textures,
        )
        .unwrap();
    assert_eq!(gone.bytes(), 4 * (4096 + 1024 + 256 + 64 + 16 + 4 + 1));
    gone.destroy();
    let report = ctx.leak_report();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].label, "forgotten buffer");
    assert_eq!(report[0].bytes, 4096);
    assert_eq!(report[0].category, Category::Other);
    drop(keep);
    assert!(ctx.leak_report().is_empty());
}

/// Bad requests are typed errors, not wgpu panics, and charge nothing.
#[test]
fn bad_requests_are_typed_errors() {
    let Some(ctx) = common::gpu() else { return };
    let u = wgpu::TextureUsages::TEXTURE_BINDING;
    let cases = [
        tex_desc("zero", wgpu::TextureFormat::Rgba8Unorm, 0, 16, 1, u),
        tex_desc("huge", wgpu::TextureFormat::Rgba8Unorm, 1 << 20, 16, 1, u),
        tex_desc(
            "too many mips",
            wgpu::TextureFormat::Rgba8Unorm,
            16,
            16,
            6,
            u,
        ),
        tex_desc("no mips", wgpu::TextureFormat::Rgba8Unorm, 16, 16, 0, u),
    ];
    for d in &cases {
        let err = ctx.create_texture(d, Category::Other).unwrap_err();
        assert!(
            matches!(err, mipflow::Error::InvalidResource { .. }),
            "{:?}: {err}",
            d.label
        );
    }
    let err = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("absurd"),
                size: u64::MAX / 2,
                usage: wgpu::BufferUsages::VERTEX,
                mapped_at_creation: false,
            },
            Category::Other,
        )
        .unwrap_err();
    assert!(
        matches!(err, mipflow::Error::InvalidResource { .. }),
        "{err}"
    );
    // wrong level data sizes are refused before anything is created
    let err = upload::create_texture_with_levels(
        &ctx,
        &tex_desc(
            "short data",
            wgpu::TextureFormat::Rgba8Unorm,
            8,
            8,
            1,
            u | wgpu::TextureUsages::COPY_DST,
        ),
        &[&[0u8; 10]],
        Category::Other,
    )
    .unwrap_err();
    assert!(
        matches!(err, mipflow::Error::InvalidResource { .. }),
        "{err}"
    );
    assert_eq!(ctx.ledger().total_bytes(), 0);
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// A real out-of-memory from the driver (lavapipe refuses a single 4 GiB texture, as measured in
/// FIELD-NOTES) is a typed `OutOfMemory` error: no panic, nothing charged, and the context keeps
/// working.
#[test]
fn driver_out_of_memory_is_a_typed_error() {
    let Some(ctx) = common::gpu() else { return };
    let max = ctx.device().limits().max_texture_dimension_2d;
    if max < 16384 {
        eprintln!("adapter allows only {max}² textures; the 4 GiB case cannot be made here");
        return;
    }
    let huge = tex_desc(
        "4 GiB target",
        wgpu::TextureFormat::Rgba32Float,
        16384,
        16384,
        1,
        wgpu::TextureUsages::RENDER_ATTACHMENT,
    );
    match ctx.create_texture(&huge, Category::RenderTargets) {
        Err(mipflow::Error::OutOfMemory { label, bytes }) => {
            assert_eq!(label, "4 GiB target");
            assert_eq!(bytes, 16384 * 16384 * 16);
        }
        Ok(t) => {
            // A driver that really has 4 GiB to give: then it is charged exactly.
            assert_eq!(t.bytes(), 16384 * 16384 * 16);
            eprintln!("the adapter gave 4 GiB; out-of-memory not exercised here");
            return;
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
    }
    assert_eq!(ctx.ledger().total_bytes(), 0);
    let small = ctx
        .create_texture(
            &tex_desc(
                "after oom",
                wgpu::TextureFormat::Rgba8Unorm,
                64,
                64,
                1,
                wgpu::TextureUsages::TEXTURE_BINDING,
            ),
            Category::Other,
        )
        .expect("the context still works after an out-of-memory");
    assert_eq!(small.bytes(), 64 * 64 * 4);
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// A stencil texture's level is charged as a backend may store it (4 bytes a texel, D24S8) but
/// uploaded and read back as its data (1 byte a texel): the bytes written come back, no more
/// (before the charge and the copy were told apart, the read gave 4x the bytes, 3/4 padding).
#[test]
fn a_stencil_level_is_charged_as_stored_and_copied_as_data() {
    let Some(ctx) = common::gpu() else { return };
    let desc = wgpu::TextureDescriptor {
        label: Some("stencil"),
        size: wgpu::Extent3d {
            width: 64,
            height: 4,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Stencil8,
        usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    };
    let data: Vec<u8> = (0..256u32).map(|i| (i * 7) as u8).collect();
    let tex = mipflow::low_level::create_texture_with_levels(
        &ctx,
        &desc,
        &[&data[..]],
        mipflow::Category::Other,
    )
    .unwrap();
    assert_eq!(tex.bytes(), 64 * 4 * 4, "charged as D24S8");
    let got = mipflow::low_level::read_level(&ctx, tex.texture(), 0).unwrap();
    assert_eq!(got, data);
    assert_eq!(ctx.take_uncaptured_errors(), Vec::<String>::new());
}

/// A 3D texture's depth halves a level too: 4x4x64 has 7 levels (64, 32, ... 1 deep), and is
/// made and charged as the size math says (before: refused, its mip count judged on 4x4 alone);
/// one more level is still refused.
#[test]
fn a_deep_3d_texture_may_have_a_level_per_halving_of_its_depth() {
    let Some(ctx) = common::gpu() else { return };
    let mut desc = wgpu::TextureDescriptor {
        label: Some("deep volume"),
        size: wgpu::Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 64,
        },
        mip_level_count: 7,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D3,
        format: wgpu::TextureFormat::R8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    };
    let tex = ctx.create_texture(&desc, mipflow::Category::Other).unwrap();
    // 4x4x64 + 2x2x32 + 1x1x16 + 1x1x8 + 1x1x4 + 1x1x2 + 1x1x1 bytes.
    assert_eq!(tex.bytes(), 1024 + 128 + 16 + 8 + 4 + 2 + 1);
    assert_eq!(Some(tex.bytes()), mipflow::low_level::texture_bytes(&desc));
    drop(tex);
    desc.mip_level_count = 8;
    assert!(matches!(
        ctx.create_texture(&desc, mipflow::Category::Other),
        Err(mipflow::Error::InvalidResource { .. })
    ));
    assert_eq!(ctx.take_uncaptured_errors(), Vec::<String>::new());
}

/// A lost device (here `destroy`, as a driver reset would) makes resources without any error:
/// mipflow notes the loss and refuses them with `Error::DeviceLost`, charging nothing (before:
/// both were "made" and 262,144 + 4,096 bytes charged for nothing). An adopted device's owner
/// says so with `note_device_lost`.
#[test]
fn a_lost_device_makes_nothing_and_charges_nothing() {
    let Some(ctx) = common::gpu() else { return };
    ctx.device().destroy();
    let _ = ctx.device().poll(wgpu::PollType::wait_indefinitely());
    assert!(ctx.is_device_lost());
    let tex = ctx.create_texture(
        &tex_desc(
            "after the loss",
            wgpu::TextureFormat::Rgba8Unorm,
            256,
            256,
            1,
            wgpu::TextureUsages::TEXTURE_BINDING,
        ),
        Category::Other,
    );
    assert!(
        matches!(tex, Err(mipflow::Error::DeviceLost { .. })),
        "{tex:?}"
    );
    let buf = ctx.create_buffer(
        &wgpu::BufferDescriptor {
            label: Some("after the loss"),
            size: 4096,
            usage: wgpu::BufferUsages::UNIFORM,
            mapped_at_creation: false,
        },
        Category::Buffers,
    );
    assert!(
        matches!(buf, Err(mipflow::Error::DeviceLost { .. })),
        "{buf:?}"
    );
    assert_eq!(ctx.ledger().total_bytes(), 0);
    assert!(ctx.ledger().live_allocations().is_empty());

    let Some(adopted) = common::gpu() else { return };
    let adopted = mipflow::GpuContext::adopt(
        adopted.device().clone(),
        adopted.queue().clone(),
        &mipflow::GpuConfig::default(),
    );
    assert!(!adopted.is_device_lost());
    adopted.note_device_lost();
    assert!(matches!(
        adopted.create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("x"),
                size: 256,
                usage: wgpu::BufferUsages::UNIFORM,
                mapped_at_creation: false,
            },
            Category::Buffers,
        ),
        Err(mipflow::Error::DeviceLost { .. })
    ));
}
