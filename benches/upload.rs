//! Upload throughput against a plain memcpy of the same bytes.
//!
//! The bytes are a full BC7 chain of 2048² (5.6 MB). Criterion reports each function's
//! throughput, so the lines compare directly:
//! - `memcpy`: `copy_from_slice` of every level into a buffer of the same size;
//! - `write_texture`: `queue.write_texture` of every level (mipflow's upload path, in an error
//!   scope), one submit, and a wait until the GPU has finished;
//! - `mapped_staging`: the same bytes copied into a persistent mapped staging buffer (rows padded
//!   to 256 bytes), `copy_buffer_to_texture` per level, submit, wait, and the buffer mapped again;
//! - `staging_ring`: the same through [`StagingRing`], the streamer's upload path;
//! - `grow_step`: what the streamer does for a texture's last step, counted as the level-0 bytes
//!   it uploads: a new texture, levels 1.. copied GPU-side from the old one, level 0 uploaded
//!   through the ring, submit, wait.
//!
//! - `read_own`, `read_staged`, `staged_copy`: the whole path from a KTX2 file in memory to the
//!   texture, read into buffers of their own then through the ring's bands, or straight into a
//!   lent staging chunk, and the staged path without its read (see the functions).
//!
//! `cargo bench --bench upload`. Without a GPU adapter it says so and measures only `memcpy`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mipflow::Category;
use mipflow::low_level as upload;
use mipflow::low_level::StagingRing;
use mipflow::{GpuConfig, GpuContext};

const SIDE: u32 = 2048;

fn levels(format: wgpu::TextureFormat) -> Vec<Vec<u8>> {
    let count = mipflow::low_level::full_mip_count(SIDE, SIDE);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|l| {
            let s = (SIDE >> l).max(1);
            let n = mipflow::low_level::level_bytes(format, s, s).unwrap_or(0) as usize;
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
    let count = mipflow::low_level::full_mip_count(SIDE, SIDE);
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

/// Where each level of `texture` goes in a staging buffer whose rows are padded to wgpu's
/// 256-byte row alignment: (offset, padded row bytes, rows) per level, and the buffer size.
fn padded_layout(texture: &wgpu::Texture) -> (Vec<(u64, u32, u32)>, u64) {
    let mut offset = 0u64;
    let layout = (0..texture.mip_level_count())
        .map(|l| {
            let (row, rows) = upload::level_rows(texture, l);
            let padded = row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
                * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
            let here = offset;
            offset += u64::from(padded) * u64::from(rows);
            offset = offset.div_ceil(16) * 16;
            (here, padded, rows)
        })
        .collect();
    (layout, offset)
}

/// What the streamer's frame does with the ring after recording: submit, wait for the GPU, and
/// map the chunks again (waiting for that too), so every iteration starts from a free ring.
fn finish_frame(ctx: &GpuContext, ring: &mut StagingRing, frame: &mut u64) {
    *frame += 1;
    ring.submit(ctx, *frame);
    ctx.wait_idle().unwrap();
    ring.recycle(*frame);
    ctx.wait_idle().unwrap();
}

fn upload_bench(c: &mut Criterion) {
    let ctx = GpuContext::headless(&GpuConfig::default())
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

    // The same bytes through a persistent mapped staging buffer (no per-upload allocation):
    // memcpy into the mapping, unmap, copy_buffer_to_texture per level, submit, wait, map again.
    let (layout, ring_size) = padded_layout(tex.texture());
    let ring = ctx
        .create_buffer(
            &wgpu::BufferDescriptor {
                label: Some("bench staging ring"),
                size: ring_size,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            },
            Category::Staging,
        )
        .unwrap();
    g.bench_function("mapped_staging", |b| {
        b.iter(|| {
            {
                let mut view = ring.buffer().get_mapped_range_mut(..).unwrap();
                for (data, &(offset, padded, rows)) in levels.iter().zip(&layout) {
                    let row = data.len() / rows as usize;
                    for r in 0..rows as usize {
                        let at = offset as usize + r * padded as usize;
                        view.slice(at..at + row)
                            .copy_from_slice(&data[r * row..(r + 1) * row]);
                    }
                }
            }
            ring.buffer().unmap();
            let mut enc = ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            for (l, &(offset, padded, rows)) in layout.iter().enumerate() {
                let size = tex
                    .texture()
                    .size()
                    .mip_level_size(l as u32, wgpu::TextureDimension::D2)
                    .physical_size(format);
                enc.copy_buffer_to_texture(
                    wgpu::TexelCopyBufferInfo {
                        buffer: ring.buffer(),
                        layout: wgpu::TexelCopyBufferLayout {
                            offset,
                            bytes_per_row: Some(padded),
                            rows_per_image: Some(rows),
                        },
                    },
                    wgpu::TexelCopyTextureInfo {
                        texture: tex.texture(),
                        mip_level: l as u32,
                        origin: wgpu::Origin3d::ZERO,
                        aspect: wgpu::TextureAspect::All,
                    },
                    size,
                );
            }
            ctx.queue().submit([enc.finish()]);
            ring.buffer()
                .slice(..)
                .map_async(wgpu::MapMode::Write, |r| r.unwrap());
            ctx.wait_idle().unwrap();
        })
    });

    // The streamer's own path: `StagingRing` (the same as above, through mipflow's API).
    let mut ring = StagingRing::new(ring_size * 2, 1, 1);
    let mut frame = 0u64;
    g.bench_function("staging_ring", |b| {
        b.iter(|| {
            for (l, data) in levels.iter().enumerate() {
                ring.write_level(&ctx, tex.texture(), l as u32, data)
                    .unwrap();
            }
            finish_frame(&ctx, &mut ring, &mut frame);
        })
    });

    // The whole path from a KTX2 file in memory, as the IO workers and the render thread take
    // it: `read_own` reads every level into buffers of its own (the worker's copy) and writes
    // them through the ring's bands (the render thread's copy); `read_staged` reads them
    // straight into a lent chunk (one copy) and records the copies from there; `staged_copy`
    // is `read_staged` without the read (the GPU's copy into the texture, and the rest).
    if let Some(encoded) = (format == wgpu::TextureFormat::Bc7RgbaUnormSrgb).then(|| {
        let mut file = Vec::new();
        let tex = mipflow::ktx2::EncodedTexture {
            format,
            width: SIDE,
            height: SIDE,
            levels: levels.clone(),
            key_values: Vec::new(),
        };
        mipflow::ktx2::write_ktx2(&mut file, &tex, None, "bench").unwrap();
        file
    }) {
        let source = mipflow::TextureSource::bytes(encoded);
        let info = source.info(&Default::default()).unwrap();
        let count = levels.len() as u8;
        let rows: Vec<(u32, u32)> = (0..levels.len() as u32)
            .map(|l| upload::level_rows(tex.texture(), l))
            .collect();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let mut lent = StagingRing::new(ring_size * 2, 2, 2);
        let mut bounce = vec![0u8; 128 << 10];
        g.bench_function("read_own", |b| {
            b.iter(|| {
                let data = source.read_levels(&info, 0..count, &cancel).unwrap();
                for (l, d) in data.iter().enumerate() {
                    ring.write_level(&ctx, tex.texture(), l as u32, d).unwrap();
                }
                finish_frame(&ctx, &mut ring, &mut frame);
            })
        });
        for read in [true, false] {
            let name = if read { "read_staged" } else { "staged_copy" };
            g.bench_function(name, |b| {
                b.iter(|| {
                    let lease = lent.lend(&ctx, &rows, u64::MAX).unwrap().unwrap();
                    let staged = if read {
                        source
                            .read_levels_staged(&info, 0..count, &cancel, lease, &mut bounce)
                            .unwrap()
                    } else {
                        lease.finish()
                    };
                    for (l, s) in staged.iter().enumerate() {
                        let n = s.layout().rows;
                        lent.copy_staged(&ctx, s, tex.texture(), l as u32, 0, n)
                            .unwrap();
                    }
                    drop(staged);
                    finish_frame(&ctx, &mut lent, &mut frame);
                    // The chunk, given back after the copies, is mapped again.
                    lent.recycle(frame);
                    ctx.wait_idle().unwrap();
                    lent.recycle(frame);
                })
            });
        }
    }

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
            // As the streamer does: the copies of the resident levels in the ring's encoder,
            // ordered before the new level's upload through the ring.
            let enc = ring.encoder(&ctx);
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
            ring.write_level(&ctx, new.texture(), 0, &levels[0])
                .unwrap();
            finish_frame(&ctx, &mut ring, &mut frame);
            black_box(new);
        })
    });
    g.finish();
}

criterion_group!(benches, upload_bench);
criterion_main!(benches);
