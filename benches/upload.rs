//! Upload throughput against a plain memcpy of the same bytes (issue 4).
//!
//! The bytes are a full BC7 chain of 2048² (5.6 MB). Criterion reports each function's
//! throughput, so the lines compare directly:
//! - `memcpy`: `copy_from_slice` of every level into a buffer of the same size;
//! - `write_texture`: `queue.write_texture` of every level (mipflow's upload path, in an error
//!   scope), one submit, and a wait until the GPU has finished;
//! - `grow_step`: what the streamer does for a texture's last step, counted as the level-0 bytes
//!   it uploads: a new texture, levels 1.. copied GPU-side from the old one, level 0 uploaded,
//!   submit, wait.
//!
//! `cargo bench --bench upload`. Without a GPU adapter it says so and measures only `memcpy`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mipflow::budget::Category;
use mipflow::gpu::{GpuContext, GpuOptions, upload};

const SIDE: u32 = 2048;

fn levels(format: wgpu::TextureFormat) -> Vec<Vec<u8>> {
    let count = mipflow::budget::size::full_mip_count(SIDE, SIDE);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|l| {
            let s = (SIDE >> l).max(1);
            let n = mipflow::budget::size::level_bytes(format, s, s).unwrap_or(0) as usize;
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect()
}

fn desc(format: wgpu::TextureFormat, first: u32) -> wgpu::TextureDescriptor<'static> {
    let count = mipflow::budget::size::full_mip_count(SIDE, SIDE);
    wgpu::TextureDescriptor {
        label: Some("bench upload"),
        size: wgpu::Extent3d {
            width: SIDE >> first,
            height: SIDE >> first,
            depth_or_array_layers: 1,
        },
        mip_level_count: count - first,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_DST
            | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    }
}

fn upload_bench(c: &mut Criterion) {
    let ctx = GpuContext::headless(&GpuOptions::default())
        .map_err(|e| eprintln!("no GPU adapter ({e}): only memcpy is measured"))
        .ok();
    let format = match &ctx {
        Some(ctx) if !ctx.bc_supported() => wgpu::TextureFormat::Rgba8UnormSrgb,
        _ => wgpu::TextureFormat::Bc7RgbaUnormSrgb,
    };
    let levels = levels(format);
    let total: u64 = levels.iter().map(|l| l.len() as u64).sum();
    let mut g = c.benchmark_group("upload");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(total));
    let mut dst: Vec<Vec<u8>> = levels.iter().map(|l| vec![0u8; l.len()]).collect();
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            for (d, s) in dst.iter_mut().zip(&levels) {
                d.copy_from_slice(black_box(s));
            }
            black_box(&mut dst);
        })
    });
    let Some(ctx) = ctx else {
        g.finish();
        return;
    };
    let tex = ctx
        .create_texture(&desc(format, 0), Category::Other)
        .unwrap();
    g.bench_function("write_texture", |b| {
        b.iter(|| {
            for (l, data) in levels.iter().enumerate() {
                upload::write_level(&ctx, tex.texture(), l as u32, data).unwrap();
            }
            ctx.queue().submit([]);
            ctx.wait_idle().unwrap();
        })
    });

    // The last step of a grow: the old texture holds levels 1.., the new one all of them.
    let old = ctx
        .create_texture(&desc(format, 1), Category::Other)
        .unwrap();
    for (l, data) in levels[1..].iter().enumerate() {
        upload::write_level(&ctx, old.texture(), l as u32, data).unwrap();
    }
    ctx.queue().submit([]);
    ctx.wait_idle().unwrap();
    g.throughput(Throughput::Bytes(levels[0].len() as u64));
    g.bench_function("grow_step", |b| {
        b.iter(|| {
            let new = ctx
                .create_texture(&desc(format, 0), Category::Other)
                .unwrap();
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            for l in 1..levels.len() as u32 {
                let size = wgpu::Extent3d {
                    width: (SIDE >> l).max(1),
                    height: (SIDE >> l).max(1),
                    depth_or_array_layers: 1,
                }
                .physical_size(format);
                enc.copy_texture_to_texture(
                    wgpu::TexelCopyTextureInfo {
                        texture: old.texture(),
                        mip_level: l - 1,
                        origin: wgpu::Origin3d::ZERO,
                        aspect: wgpu::TextureAspect::All,
                    },
                    wgpu::TexelCopyTextureInfo {
                        texture: new.texture(),
                        mip_level: l,
                        origin: wgpu::Origin3d::ZERO,
                        aspect: wgpu::TextureAspect::All,
                    },
                    size,
                );
            }
            upload::write_level(&ctx, new.texture(), 0, &levels[0]).unwrap();
            ctx.queue().submit([enc.finish()]);
            ctx.wait_idle().unwrap();
            black_box(new);
        })
    });
    g.finish();
}

criterion_group!(benches, upload_bench);
criterion_main!(benches);
