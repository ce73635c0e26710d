//! Tile streaming's sampling on the GPU: a virtual texture drawn through `vt_sample` (all its
//! tiles resident, or only its coarse levels) against the same texture drawn by the hardware
//! sampler, on a floor seen from near (magnified) to far (minified), with lines and gradients
//! that cross the tiles' edges.

use mipflow::ktx2::{Ktx2Info, ReadLimits, write_ktx2_tiled};
use mipflow::{GpuContext, TileSource, VirtualTextures, VtAddress, VtConfig, VtId, wgpu};

use crate::common;

pub(super) const SIZE: u32 = 1024;
pub(super) const TILE: u32 = 128;
const OUT: u32 = 256;

/// Gradients, and lines across every tile edge (on them, beside them, and diagonal).
pub(super) fn test_image() -> image::RgbaImage {
    image::RgbaImage::from_fn(SIZE, SIZE, |x, y| {
        let edge = |v: u32| matches!(v % TILE, 126..=129);
        let line = edge(x) || edge(y) || (x + 3 * y) % 97 < 3;
        let r = (x * 255 / SIZE) as u8;
        let g = (y * 255 / SIZE) as u8;
        if line {
            image::Rgba([255 - r / 2, 40, 255 - g, 255])
        } else {
            image::Rgba([r, g, ((x ^ y) & 0x3f) as u8 + 64, 255])
        }
    })
}

/// The uv of a floor seen in perspective: the bottom of the screen near (the texture
/// magnified), the top far (minified, at a grazing angle).
pub(super) const FLOOR_UV: &str = r#"
fn floor_uv(pos: vec4<f32>) -> vec2<f32> {
    let s = pos.xy / 256.0;
    let t = 1.0 - s.y;
    return vec2<f32>(0.5 + (s.x - 0.5) * (0.1 + 0.9 * t), 0.05 + 0.95 * t * t * t) + FLOOR_SHIFT;
}
const FLOOR_SHIFT = vec2<f32>(0.0, 0.0);

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}
"#;

const HARDWARE: &str = r#"
@group(0) @binding(0) var tex: texture_2d<f32>;
@group(0) @binding(1) var samp: sampler;

@fragment
fn fs(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    return textureSample(tex, samp, floor_uv(pos));
}
"#;

pub(super) const FEEDBACK: &str = r#"
@fragment
fn fs(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    return vt_sample_feedback(0u, floor_uv(pos), 0.0, vec2<u32>(pos.xy));
}
"#;

pub(super) const VIRTUAL: &str = r#"
@fragment
fn fs(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    return vt_sample(0u, floor_uv(pos), 0.0);
}
"#;

/// Draws a full-screen triangle with `source` (fragment `fs`) and `group` bound at 0, and
/// reads the picture back (RGBA8).
pub(super) fn draw(
    ctx: &GpuContext,
    source: &str,
    layout: &wgpu::BindGroupLayout,
    group: &wgpu::BindGroup,
) -> Vec<u8> {
    let device = ctx.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("tiles test"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("tiles test"),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        multiview_mask: None,
        cache: None,
    });
    let target = common::texture_2d(
        ctx,
        "tiles test target",
        (OUT, OUT, 1),
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        1,
        mipflow::Category::Other,
    );
    let view = target.texture().create_view(&Default::default());
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: None,
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
    ctx.queue().submit([enc.finish()]);
    let px = mipflow::read_texture_rgba8(ctx, target.texture()).expect("read back");
    assert!(ctx.take_uncaptured_errors().is_empty());
    px
}

/// The texture with every level, sampled by the hardware (trilinear, clamped to the edge,
/// its levels from `min_lod` on).
pub(super) fn hardware(
    ctx: &GpuContext,
    tex: &mipflow::ktx2::EncodedTexture,
    min_lod: f32,
) -> Vec<u8> {
    hardware_with(ctx, tex, min_lod, &format!("{FLOOR_UV}{HARDWARE}"))
}

/// [`hardware`] drawn with `source`.
fn hardware_with(
    ctx: &GpuContext,
    tex: &mipflow::ktx2::EncodedTexture,
    min_lod: f32,
    source: &str,
) -> Vec<u8> {
    let device = ctx.device();
    let n = tex.levels.len() as u32;
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("tiles test reference"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: n,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: tex.format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (l, data) in tex.levels.iter().enumerate() {
        let s = (SIZE >> l).max(1);
        let cols = s.div_ceil(4);
        ctx.queue().write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: l as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            data,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(cols * 16),
                rows_per_image: Some(cols),
            },
            wgpu::Extent3d {
                width: cols * 4,
                height: cols * 4,
                depth_or_array_layers: 1,
            },
        );
    }
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        mipmap_filter: wgpu::MipmapFilterMode::Linear,
        lod_min_clamp: min_lod,
        ..Default::default()
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    });
    let view = texture.create_view(&Default::default());
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&view),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Sampler(&sampler),
            },
        ],
    });
    draw(ctx, source, &layout, &group)
}

/// The cooked texture (BC7, linear) and its tiled file.
pub(super) fn cooked() -> (mipflow::ktx2::EncodedTexture, Vec<u8>) {
    cooked_from(test_image())
}

/// [`cooked`] of another picture.
pub(super) fn cooked_from(img: image::RgbaImage) -> (mipflow::ktx2::EncodedTexture, Vec<u8>) {
    let opts = mipflow_cook::CookOptions {
        quality: mipflow_cook::Quality::Fast,
        color: mipflow_cook::ColorSpace::Linear,
        ..Default::default()
    };
    let tex = mipflow_cook::cook_image(&image::DynamicImage::ImageRgba8(img), &opts).expect("cook");
    let mut file = Vec::new();
    write_ktx2_tiled(&mut file, &tex, Some(3), "tiles test", TILE).unwrap();
    (tex, file)
}

/// A cache with the texture added (its tail resident) and, per `resident(level)`, every tile
/// of those levels made resident.
fn cache_with(
    ctx: &GpuContext,
    file: &[u8],
    resident: impl Fn(usize) -> bool,
) -> (VirtualTextures, VtId) {
    let (mut vt, id) = cache_of(ctx, file, 128);
    let tiled = usize::from(vt.info(id).unwrap().tiles.as_ref().unwrap().tiled_levels);
    for level in (0..tiled).rev().filter(|&l| resident(l)) {
        let (x_n, y_n) = vt.table(id).unwrap().tiles(level);
        for ty in 0..y_n {
            for tx in 0..x_n {
                assert!(vt.make_resident(ctx.queue(), id, level, tx, ty).unwrap());
            }
        }
    }
    vt.flush(ctx.queue());
    (vt, id)
}

/// A cache of `slots` slots with the texture of `file` added (its tail resident).
fn cache_of(ctx: &GpuContext, file: &[u8], slots: u32) -> (VirtualTextures, VtId) {
    let info = Ktx2Info::parse(file, file.len() as u64, &ReadLimits::default()).unwrap();
    let config = VtConfig {
        format: info.format,
        tile: TILE,
        slots,
        max_pages: 1024,
        max_textures: 4,
    };
    let mut vt = VirtualTextures::new(ctx, &config).unwrap();
    let source = TileSource::Bytes(file.into());
    let id = vt.add(ctx.queue(), info, source, VtAddress::Clamp).unwrap();
    (vt, id)
}

/// Frames of `source` (a shader calling `vt_sample_feedback`) with the cache's feedback and
/// update (`max_loads`), each update's figures to `each`, until settled: feedback has come
/// back and nothing the plan keeps is missing, three updates in a row (waited for by time).
fn settle(
    ctx: &GpuContext,
    vt: &mut VirtualTextures,
    source: &str,
    max_loads: usize,
    mut each: impl FnMut(&mipflow::TileUpdate),
) {
    let start = std::time::Instant::now();
    let mut settled = 0;
    while settled < 3 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "not settled"
        );
        draw(ctx, source, vt.layout(), vt.bind_group());
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        vt.record_feedback(&mut enc);
        ctx.queue().submit([enc.finish()]);
        vt.submitted();
        let u = vt.update(ctx.device(), ctx.queue(), max_loads).unwrap();
        each(&u);
        settled = if u.readbacks > 0 && u.pending == 0 && u.loaded == 0 {
            settled + 1
        } else {
            0
        };
    }
}

/// Largest difference of any channel, per pixel.
fn diff(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .map(|(p, q)| (0..3).map(|c| p[c].abs_diff(q[c])).max().unwrap())
        .collect()
}

/// A seam is a line of differences: the most pixels in one row or column that differ by more
/// than `threshold`.
fn longest_line(d: &[u8], threshold: u8) -> usize {
    let n = OUT as usize;
    let mut best = 0;
    for i in 0..n {
        let (mut row, mut col) = (0, 0);
        for j in 0..n {
            row = if d[i * n + j] > threshold { row + 1 } else { 0 };
            col = if d[j * n + i] > threshold { col + 1 } else { 0 };
            best = best.max(row).max(col);
        }
    }
    best
}

/// Every tile resident: the virtual texture's picture is the hardware's (>= 40 dB), from the
/// magnified near edge to the minified far one, with no line of differences along the tiles'
/// edges; the atlas and its tables are on the ledger.
#[test]
fn every_tile_resident_matches_the_hardware_sampler_without_seams() {
    let Some(ctx) = common::gpu() else { return };
    let (tex, file) = cooked();
    let reference = hardware(&ctx, &tex, 0.0);
    let before = ctx.ledger().total_bytes();
    let (vt, id) = cache_with(&ctx, &file, |_| true);
    assert_eq!(ctx.ledger().total_bytes() - before, vt.bytes());
    // 8x8 + 4x4 + 2x2 tiles and the tail's two slots.
    assert_eq!(vt.table(id).unwrap().resident_tiles(), 64 + 16 + 4 + 8);
    assert_eq!(vt.slots(), (128, 128 - 84 - 2));
    let picture = draw(
        &ctx,
        &format!("{}{FLOOR_UV}{VIRTUAL}", mipflow::vt_wgsl(0)),
        vt.layout(),
        vt.bind_group(),
    );
    if let Some(dir) = std::env::var_os("MIPFLOW_TILES_DUMP") {
        for (name, px) in [("vt.png", &picture), ("hw.png", &reference)] {
            image::RgbaImage::from_raw(OUT, OUT, px.clone())
                .unwrap()
                .save(std::path::Path::new(&dir).join(name))
                .unwrap();
        }
    }
    let psnr = common::psnr(&picture, &reference, [true, true, true, false]);
    let d = diff(&picture, &reference);
    let line = longest_line(&d, 24);
    eprintln!("virtual against hardware: {psnr:.1} dB, longest line of differences {line} px");
    assert!(psnr >= 40.0, "{psnr:.1} dB");
    assert!(
        line < 6,
        "a seam: {line} pixels in a line differ by more than 24"
    );
    // Not the picture of a black screen or of one level: the floor shows the texture.
    assert!(
        reference.chunks_exact(4).any(|p| p[0] > 200)
            && reference.chunks_exact(4).any(|p| p[0] < 60)
    );
}

/// Only levels 2 and coarser resident: every tile of levels 0 and 1 reads its ancestor at
/// level 2, which is what the hardware draws with its levels clamped from 2 on.
#[test]
fn missing_tiles_fall_back_to_their_resident_ancestors() {
    let Some(ctx) = common::gpu() else { return };
    let (tex, file) = cooked();
    let reference = hardware(&ctx, &tex, 2.0);
    let sharp = hardware(&ctx, &tex, 0.0);
    let (vt, _) = cache_with(&ctx, &file, |l| l >= 2);
    let picture = draw(
        &ctx,
        &format!("{}{FLOOR_UV}{VIRTUAL}", mipflow::vt_wgsl(0)),
        vt.layout(),
        vt.bind_group(),
    );
    let psnr = common::psnr(&picture, &reference, [true, true, true, false]);
    let against_sharp = common::psnr(&picture, &sharp, [true, true, true, false]);
    eprintln!("fallback: {psnr:.1} dB against level 2 on, {against_sharp:.1} against every level");
    assert!(psnr >= 40.0, "{psnr:.1} dB");
    assert!(
        against_sharp < psnr - 3.0,
        "the fallback is not the sharp picture"
    );
}

/// The loop closed: starting from the tails alone, the view's own feedback decides which tiles
/// stream in; within a few frames (waited for by time, not counted) the picture is the
/// all-resident one (>= 40 dB), holding a fraction of the texture's tiles.
#[test]
fn feedback_streams_the_tiles_the_view_needs() {
    let Some(ctx) = common::gpu() else { return };
    let (tex, file) = cooked();
    let reference = hardware(&ctx, &tex, 0.0);
    let (mut vt, id) = cache_with(&ctx, &file, |_| false);
    let all_tiles = 64 + 16 + 4;
    let source = format!("{}{FLOOR_UV}{FEEDBACK}", mipflow::vt_wgsl(0));
    let (mut readbacks, mut loaded) = (0, 0);
    settle(&ctx, &mut vt, &source, 16, |u| {
        readbacks += u.readbacks;
        loaded += u.loaded;
    });
    let picture = draw(
        &ctx,
        &format!("{}{FLOOR_UV}{VIRTUAL}", mipflow::vt_wgsl(0)),
        vt.layout(),
        vt.bind_group(),
    );
    let psnr = common::psnr(&picture, &reference, [true, true, true, false]);
    let resident = vt.table(id).unwrap().resident_tiles() - 8;
    eprintln!(
        "feedback-driven: {psnr:.1} dB with {resident} of {all_tiles} tiles, {readbacks} readbacks, {loaded} loads"
    );
    assert!(psnr >= 40.0, "{psnr:.1} dB");
    assert!(
        resident < all_tiles / 2,
        "{resident} tiles: the view needs fewer"
    );
}

/// One budget: a tile cache made on the budget manager's device is on its ledger, so the
/// planner counts its atlas as fixed bytes and the streamed textures get the rest; the frame
/// peak never passes the budget, with the tiles streaming in beside them.
#[test]
fn a_tile_cache_on_the_managers_device_counts_in_its_budget() {
    let Some(ctx) = common::gpu() else { return };
    let budget = 6u64 << 20;
    let mut m = common::manager(&ctx, common::manager_config(budget, false, true));
    let (_, file) = cooked();
    let info = Ktx2Info::parse(&file, file.len() as u64, &ReadLimits::default()).unwrap();
    let slots = VtConfig::slots_for(info.format, TILE, 2 << 20);
    assert_eq!(slots, 128);
    let mut vt = VirtualTextures::new(
        m.context(),
        &VtConfig {
            format: info.format,
            tile: TILE,
            slots,
            max_pages: 1024,
            max_textures: 4,
        },
    )
    .unwrap();
    let vt_bytes = vt.bytes();
    assert!(vt_bytes >= 2 << 20);
    vt.add(
        m.context().queue(),
        info,
        TileSource::Bytes(file.into()),
        VtAddress::Clamp,
    )
    .unwrap();
    // About 13 MiB of full chains wanted: more than the budget holds.
    let handles: Vec<_> = (0..40)
        .map(|s| {
            m.add_texture(
                mipflow::TextureSource::bytes(common::cooked("vt", s, 512)),
                mipflow::TextureOptions::default(),
            )
            .unwrap()
        })
        .collect();
    let mut peak = 0;
    let mut floor = 0;
    for _ in 0..40 {
        for &h in &handles {
            m.add_demand(h, 0.0, 100_000.0);
        }
        let plan = m
            .frame((640, 360), mipflow::FrameTiming::default())
            .unwrap();
        m.end_frame();
        let stats = m.frame_stats(&plan, mipflow::FrameTiming::default());
        peak = peak.max(stats.frame_peak_bytes);
        floor = stats.floor_bytes;
        vt.update(m.context().device(), m.context().queue(), 8)
            .unwrap();
    }
    let total = m.context().ledger().total_bytes();
    eprintln!("tile cache {vt_bytes} bytes; frame peak {peak}, total {total} of {budget}");
    assert!(peak <= budget, "frame peak {peak} over the budget {budget}");
    assert!(total <= budget);
    assert!(
        floor >= vt_bytes,
        "the planner's fixed bytes hold the tile cache: {floor}"
    );
    // The streamed textures filled what the cache left, not the whole budget.
    let streamed = m
        .context()
        .ledger()
        .managed_bytes(mipflow::Category::Textures);
    assert!(
        streamed + vt_bytes <= budget,
        "{streamed} streamed beside {vt_bytes}"
    );
    assert!(
        streamed > budget / 3,
        "the textures got the rest: {streamed}"
    );
}

/// A camera that moves under a cache too small for everything it sees: the plan keeps the tiles
/// worth most within the slots (never more), the tiles of the old view give way to the new
/// view's, and each view's picture is better than the tails alone.
#[test]
fn a_moving_view_under_few_slots_trades_tiles_by_worth() {
    let Some(ctx) = common::gpu() else { return };
    let (tex, file) = cooked();
    // The tail's 2 slots and 8 for tiles: the view above wants 12.
    let (mut vt, id) = cache_of(&ctx, &file, 10);
    let shifted =
        |x: f32| FLOOR_UV.replace("vec2<f32>(0.0, 0.0)", &format!("vec2<f32>({x:.2}, 0.0)"));
    let mut tiles_of = Vec::new();
    for shift in [-0.3f32, 0.3] {
        let uv = shifted(shift);
        let feedback = format!("{}{uv}{FEEDBACK}", mipflow::vt_wgsl(0));
        let mut evicted = 0;
        settle(&ctx, &mut vt, &feedback, 4, |u| {
            assert!(u.kept <= 8, "the plan keeps {} tiles in 8 slots", u.kept);
            evicted += u.evicted;
        });
        let table = vt.table(id).unwrap();
        // The tail's 8 levels (in 2 slots) and at most 8 tiles.
        assert!(table.resident_tiles() <= 8 + 8);
        let (x_n, y_n) = table.tiles(0);
        let level0: Vec<(u32, u32)> = (0..y_n)
            .flat_map(|y| (0..x_n).map(move |x| (x, y)))
            .filter(|&(x, y)| table.slot(0, x, y).is_some())
            .collect();
        // The picture against the hardware's of the same view: the tiles held are worth it.
        let reference = {
            let hw = format!("{uv}{HARDWARE}");
            hardware_with(&ctx, &tex, 0.0, &hw)
        };
        let tails = hardware_with(&ctx, &tex, 3.0, &format!("{uv}{HARDWARE}"));
        let picture = draw(
            &ctx,
            &format!("{}{uv}{VIRTUAL}", mipflow::vt_wgsl(0)),
            vt.layout(),
            vt.bind_group(),
        );
        let psnr = common::psnr(&picture, &reference, [true, true, true, false]);
        let floor_only = common::psnr(&tails, &reference, [true, true, true, false]);
        eprintln!(
            "shift {shift}: {psnr:.1} dB (tail alone {floor_only:.1}), level-0 tiles {level0:?}, {evicted} given up"
        );
        assert!(
            psnr > floor_only + 3.0,
            "{psnr:.1} dB, the tail alone {floor_only:.1}"
        );
        if shift > 0.0 {
            assert!(
                evicted > 0,
                "the new view's tiles took the old view's slots"
            );
        }
        tiles_of.push(level0);
    }
    assert_ne!(
        tiles_of[0], tiles_of[1],
        "each view holds its own level-0 tiles"
    );
}

/// Demand from the CPU (no feedback pass): a UV rectangle at level 0 brings in exactly the
/// level-0 tiles it covers, with their parents; demand that stops lets the next one take the
/// slots.
#[test]
fn cpu_demand_brings_in_the_tiles_a_rectangle_covers() {
    let Some(ctx) = common::gpu() else { return };
    let (_, file) = cooked();
    let (mut vt, id) = cache_with(&ctx, &file, |_| false);
    // Texels 200..300 x 600..700 of level 0 (tiles of 128): tiles (1..3, 4..6).
    let rect = (
        [200.0 / 1024.0, 600.0 / 1024.0],
        [300.0 / 1024.0, 700.0 / 1024.0],
    );
    let settle = |vt: &mut VirtualTextures, rect: ([f32; 2], [f32; 2])| {
        let start = std::time::Instant::now();
        loop {
            assert!(vt.add_demand(id, 0.0, rect.0, rect.1, 10_000.0));
            let u = vt.update(ctx.device(), ctx.queue(), 16).unwrap();
            if u.pending == 0 && u.loaded == 0 && u.kept > 0 {
                return u;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "not settled: {u:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    let u = settle(&mut vt, rect);
    let table = vt.table(id).unwrap();
    let level0: Vec<(u32, u32)> = (0..8)
        .flat_map(|y| (0..8).map(move |x| (x, y)))
        .filter(|&(x, y)| table.slot(0, x, y).is_some())
        .collect();
    assert_eq!(level0, [(1, 4), (2, 4), (1, 5), (2, 5)]);
    // Their parents: (0, 2) and (1, 2) at level 1, (0, 1) at level 2.
    assert_eq!(u.kept, 7, "{u:?}");
    assert!(table.slot(1, 0, 2).is_some() && table.slot(1, 1, 2).is_some());
    assert!(table.slot(2, 0, 1).is_some() && table.slot(1, 0, 1).is_none());
    assert!(
        !vt.add_demand(id, 0.0, rect.0, rect.1, 0.0),
        "no pixels: no demand"
    );
    // Elsewhere now: the new rectangle's tiles come in.
    let other = ([0.9, 0.05], [0.95, 0.1]);
    settle(&mut vt, other);
    let table = vt.table(id).unwrap();
    assert!(table.slot(0, 7, 0).is_some());
}

/// The reference `Renderer` draws a material whose base colour is a virtual texture: a floor seen
/// from near to far, its tiles streamed by the renderer's frames from the feedback alone, is
/// the picture of the same floor with the whole texture resident (>= 40 dB), holding fewer
/// tiles than the texture has, and no frame passes the budget.
#[test]
fn the_renderer_draws_a_virtual_texture_material() {
    use mipflow::{Camera, FrameInput, MaterialDesc, Renderer, RendererConfig};
    let (tex, file) = cooked();
    let plain_tiled = file.clone();
    let mut plain = Vec::new();
    mipflow::ktx2::write_ktx2(&mut plain, &tex, None, "tiles test").unwrap();
    let camera = Camera::look_at(
        glam::Vec3::new(0.0, 0.6, 3.8),
        glam::Vec3::new(0.0, 0.0, -1.0),
    );
    let budget = 48u64 << 20;
    let make = || -> Option<Renderer> {
        let ctx = common::gpu()?;
        let mut c = RendererConfig::default();
        c.budget = mipflow::Budget::bytes(budget);
        c.stream = c.stream.with_deterministic(true);
        c.upscaler = mipflow::Upscaler::Bilinear;
        c.anisotropy = 1;
        c.tile_cache_bytes = 2 << 20;
        let mut r = Renderer::with_context(ctx, c).unwrap();
        r.set_scale_range(1.0, 1.0);
        Some(r)
    };
    let (v, i) = mipflow::quad_xz();
    let floor = glam::Mat4::from_scale(glam::Vec3::new(8.0, 1.0, 8.0));
    // The whole texture, streamed at a roomy budget until every wanted level is resident.
    let Some(mut full) = make() else { return };
    let mesh = full.add_mesh(&v, &i).unwrap();
    let t = full
        .add_texture(
            mipflow::TextureSource::bytes(plain),
            mipflow::TextureOptions::default(),
        )
        .unwrap();
    let m = full.add_material(MaterialDesc::new(t)).unwrap();
    full.add_instance(mesh, m, floor).unwrap();
    let out_full = full
        .context()
        .create_offscreen_target("full", 320, 180)
        .unwrap();
    let view_full = out_full.create_view(&Default::default());
    let start = std::time::Instant::now();
    loop {
        let s = *full.render(&view_full, &FrameInput::new(camera)).unwrap();
        if s.resident_mip_bytes == s.wanted_mip_bytes && s.frame > 4 {
            break;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "{s:?}"
        );
    }
    let reference = mipflow::read_texture_rgba8(full.context(), out_full.texture()).unwrap();

    let mut r = make().unwrap();
    let mesh = r.add_mesh(&v, &i).unwrap();
    let id = r
        .add_virtual_texture(TileSource::Bytes(file.into()), VtAddress::Clamp)
        .unwrap();
    let m = r.add_material(MaterialDesc::virtual_texture(id)).unwrap();
    r.add_instance(mesh, m, floor).unwrap();
    // An id of the renderer's index, but of a texture that took a removed one's place in
    // another cache: a later generation, refused.
    let (mut other, first) = cache_of(r.context(), &plain_tiled, 8);
    assert!(other.remove(first));
    let info = Ktx2Info::parse(
        &plain_tiled,
        plain_tiled.len() as u64,
        &ReadLimits::default(),
    );
    let later = other
        .add(
            r.context().queue(),
            info.unwrap(),
            TileSource::Bytes(plain_tiled.as_slice().into()),
            VtAddress::Clamp,
        )
        .unwrap();
    assert_eq!(later.index(), id.index());
    assert!(
        r.add_material(MaterialDesc::virtual_texture(later))
            .is_err()
    );
    drop(other);
    let out = r
        .context()
        .create_offscreen_target("virtual", 320, 180)
        .unwrap();
    let view = out.create_view(&Default::default());
    let start = std::time::Instant::now();
    let (mut settled, mut readbacks, mut over) = (0, 0, 0);
    while settled < 3 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "not settled"
        );
        let s = *r.render(&view, &FrameInput::new(camera)).unwrap();
        over += u32::from(s.frame_peak_bytes > s.budget_bytes);
        let u = r.virtual_textures().unwrap().last_update();
        readbacks += u.readbacks;
        settled = if readbacks > 0 && u.readbacks > 0 && u.pending == 0 && u.loaded == 0 {
            settled + 1
        } else {
            0
        };
    }
    let picture = mipflow::read_texture_rgba8(r.context(), out.texture()).unwrap();
    let psnr = common::psnr(&picture, &reference, [true, true, true, false]);
    if let Some(dir) = std::env::var_os("MIPFLOW_TILES_DUMP") {
        for (name, px) in [
            ("renderer_vt.png", &picture),
            ("renderer_full.png", &reference),
        ] {
            image::RgbaImage::from_raw(320, 180, px.clone())
                .unwrap()
                .save(std::path::Path::new(&dir).join(name))
                .unwrap();
        }
    }
    let held = r
        .virtual_textures()
        .unwrap()
        .table(id)
        .unwrap()
        .resident_tiles()
        - 8;
    eprintln!("renderer: {psnr:.1} dB against the whole texture, {held} of 84 tiles held");
    assert_eq!(over, 0, "frames over the budget");
    assert!(psnr >= 40.0, "{psnr:.1} dB");
    assert!(held < 84, "{held} tiles");
    assert!(r.context().take_uncaptured_errors().is_empty());
}

/// A damaged tile (its Zstandard frame overwritten in the file) is a counted failure, not a
/// panic or a retry every frame: its ancestor shows, the other tiles load; and a removed texture
/// gives every slot back.
#[test]
fn a_damaged_tile_is_skipped_and_a_removed_texture_frees_its_slots() {
    let Some(ctx) = common::gpu() else { return };
    let (_, mut file) = cooked();
    let info = Ktx2Info::parse(&file, file.len() as u64, &ReadLimits::default()).unwrap();
    // Tile (1, 4) of level 0: its frame's bytes overwritten.
    let span = mipflow::ktx2::tile_span(&info, 0, 1, 4).unwrap();
    for b in &mut file[span.offset as usize..(span.offset + span.stored_len) as usize] {
        *b = 0xA5;
    }
    let (mut vt, id) = cache_with(&ctx, &file, |_| false);
    let free_before = vt.slots().1;
    let rect = (
        [200.0 / 1024.0, 600.0 / 1024.0],
        [300.0 / 1024.0, 700.0 / 1024.0],
    );
    let start = std::time::Instant::now();
    let (mut failed, mut loaded) = (0, 0);
    // Until the three good level-0 tiles and the parents are in, and the bad one failed.
    while !(failed > 0 && loaded >= 6) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "{failed} {loaded}"
        );
        vt.add_demand(id, 0.0, rect.0, rect.1, 10_000.0);
        let u = vt.update(ctx.device(), ctx.queue(), 16).unwrap();
        failed += u.failed;
        loaded += u.loaded;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The next updates do not ask for it again (its back-off is 120 updates).
    for _ in 0..20 {
        vt.add_demand(id, 0.0, rect.0, rect.1, 10_000.0);
        let u = vt.update(ctx.device(), ctx.queue(), 16).unwrap();
        assert_eq!(u.failed, 0);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let table = vt.table(id).unwrap();
    assert!(
        table.slot(0, 1, 4).is_none(),
        "the damaged tile is not resident"
    );
    assert!(table.slot(0, 2, 4).is_some() && table.slot(0, 1, 5).is_some());
    // Its ancestor covers it.
    assert_eq!(table.entry(0, 1, 4) >> 24 & 0xF, 1);
    assert!(vt.slots().1 < free_before);
    assert!(vt.remove(id));
    assert!(!vt.remove(id), "removed once");
    assert_eq!(vt.slots(), (128, 128), "every slot is free again");
    assert!(!vt.add_demand(id, 0.0, rect.0, rect.1, 1.0));
}

/// The tile cache follows the view and the budget: it grows while the view wants more tiles
/// and the textures have memory to spare, a quarter of the budget at most, at a power of two of
/// slots (or every tile the textures have). A budget that falls shrinks the atlas (freed before the smaller one is made: no frame over the
/// budget), its tiles stream back.
#[test]
fn the_renderers_tile_cache_follows_the_budget() {
    use mipflow::{Camera, FrameInput, MaterialDesc, Renderer, RendererConfig};
    let Some(ctx) = common::gpu() else { return };
    let (_, file) = cooked();
    let mut c = RendererConfig::default();
    c.budget = mipflow::Budget::bytes(64 << 20);
    c.stream = c.stream.with_deterministic(true);
    c.upscaler = mipflow::Upscaler::Bilinear;
    c.anisotropy = 1;
    let mut r = Renderer::with_context(ctx, c).unwrap();
    r.set_scale_range(1.0, 1.0);
    let (v, i) = mipflow::quad_xz();
    let mesh = r.add_mesh(&v, &i).unwrap();
    let id = r
        .add_virtual_texture(TileSource::Bytes(file.into()), VtAddress::Clamp)
        .unwrap();
    let m = r.add_material(MaterialDesc::virtual_texture(id)).unwrap();
    r.add_instance(
        mesh,
        m,
        glam::Mat4::from_scale(glam::Vec3::new(8.0, 1.0, 8.0)),
    )
    .unwrap();
    let camera = Camera::look_at(
        glam::Vec3::new(0.0, 0.6, 3.8),
        glam::Vec3::new(0.0, 0.0, -1.0),
    );
    let out = r
        .context()
        .create_offscreen_target("virtual", 320, 180)
        .unwrap();
    let view = out.create_view(&Default::default());
    let mut over = 0;
    let mut frames = |r: &mut Renderer, n: usize| {
        let mut held = 0;
        for _ in 0..n {
            let s = *r.render(&view, &FrameInput::new(camera)).unwrap();
            over += u32::from(s.frame_peak_bytes > s.budget_bytes);
            held = r
                .virtual_textures()
                .unwrap()
                .table(id)
                .unwrap()
                .resident_tiles()
                - 8;
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        held
    };
    // 64 MiB: a quarter is 16 MiB; the cache starts at 64 slots (the texture could use 86:
    // 84 tiles and its tail's 2). The view keeps every slot and wants more, and the textures
    // have memory to spare (the plan's price is 0): it grows to 86, once its feedback is back
    // (waited for by time).
    let start = std::time::Instant::now();
    let mut held = 0;
    while r.virtual_textures().unwrap().slots().0 != 86 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "never grew"
        );
        held = frames(&mut r, 1);
    }
    assert_eq!(r.manager().last_plan().memory_price, 0.0);
    held = held.max(frames(&mut r, 5));
    assert!(held > 62, "{held} tiles held");
    let big = r.virtual_textures().unwrap().bytes();
    // 3 MiB: 0.75 MiB, 48 slots fit, 32 (a power of two) taken: shrunk at once.
    r.set_budget(mipflow::Budget::bytes(3 << 20));
    frames(&mut r, 30);
    let vt = r.virtual_textures().unwrap();
    assert_eq!(vt.slots().0, 32);
    assert!(vt.bytes() < big, "the atlas shrank");
    assert!(
        vt.table(id).unwrap().resident_tiles() - 8 > 0,
        "its tiles came back"
    );
    assert_eq!(over, 0, "frames over the budget");
    assert!(r.context().take_uncaptured_errors().is_empty());
}

/// Growing the cache keeps its tiles (a GPU copy of each slot): the picture drawn through it is
/// the same before and after, and the new slots are free.
#[test]
fn growing_the_cache_keeps_its_tiles() {
    let Some(ctx) = common::gpu() else { return };
    let (_, file) = cooked();
    let (mut vt, id) = cache_with(&ctx, &file, |l| l >= 1);
    let source = format!("{}{FLOOR_UV}{VIRTUAL}", mipflow::vt_wgsl(0));
    let before = draw(&ctx, &source, vt.layout(), vt.bind_group());
    let (slots, free) = vt.slots();
    let held = vt.table(id).unwrap().resident_tiles();
    vt.grow(&ctx, 256).unwrap();
    assert_eq!(vt.slots(), (256, free + 256 - slots));
    assert_eq!(vt.table(id).unwrap().resident_tiles(), held);
    let after = draw(&ctx, &source, vt.layout(), vt.bind_group());
    assert_eq!(
        common::psnr(&before, &after, [true, true, true, false]),
        99.0
    );
}
