//! The upscale pass on lavapipe: a scene rendered at scale 0.75 and upscaled is compared with the
//! same scene rendered natively (straight into an sRGB target, without the code under test), and
//! EASU + RCAS must do at least as well as bilinear on edge-heavy images. The images are written
//! under `target/tmp/resolution_upscale/` for inspection.

use crate::common;

use glam::{Mat4, Vec3};
use mipflow::Category;
use mipflow::Vertex;
use mipflow::low_level as upload;
use mipflow::low_level::{DrawUniforms, GpuMesh, TexturedPass};
use mipflow::low_level::{RenderTargets, UpscaleConfig, UpscalePass};
use mipflow::{GpuContext, TrackedBuffer, TrackedTexture, read_texture_rgba8};
use mipflow::{ScaleBucket, TargetSet, Upscaler};
use mipflow_cook::compare::{psnr_rgb, ssim};
use mipflow_cook::procedural::test_pattern;

const OUT: (u32, u32) = (320, 240);

/// An RGBA8 image's full mip chain (level 0 first), box-filtered by the image crate.
fn mip_chain(img: &image::RgbaImage) -> Vec<Vec<u8>> {
    let mut levels = vec![img.as_raw().clone()];
    let (mut w, mut h) = img.dimensions();
    while w > 1 || h > 1 {
        w = (w / 2).max(1);
        h = (h / 2).max(1);
        levels.push(
            image::imageops::resize(img, w, h, image::imageops::FilterType::Triangle).into_raw(),
        );
    }
    levels
}

/// A textured mesh, its texture, uniforms and camera.
struct Scene {
    pass: TexturedPass,
    mesh: GpuMesh,
    uniforms: TrackedBuffer,
    uniform_group: wgpu::BindGroup,
    material: wgpu::BindGroup,
    /// The same material pass for an Rgba8UnormSrgb target: the native reference, rendered
    /// without any of the code under test.
    direct: (
        TexturedPass,
        TrackedBuffer,
        wgpu::BindGroup,
        wgpu::BindGroup,
    ),
    _texture: TrackedTexture,
    view_proj: Mat4,
    model: Mat4,
}

impl Scene {
    fn new(ctx: &GpuContext, img: &image::RgbaImage, verts: &[Vertex], idx: &[u32]) -> Self {
        let pass = TexturedPass::new(ctx, wgpu::TextureFormat::Rgba16Float, 8).unwrap();
        let levels = mip_chain(img);
        let refs: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
        let texture = upload::create_texture_with_levels(
            ctx,
            &wgpu::TextureDescriptor {
                label: Some("scene texture"),
                size: wgpu::Extent3d {
                    width: img.width(),
                    height: img.height(),
                    depth_or_array_layers: 1,
                },
                mip_level_count: levels.len() as u32,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            },
            &refs,
            Category::Textures,
        )
        .unwrap();
        let mesh = GpuMesh::new(ctx, "scene mesh", verts, idx).unwrap();
        let (uniforms, uniform_group) = pass.uniform_buffer(ctx, "scene uniforms", 1).unwrap();
        let material = pass.material_bind_group(
            ctx,
            "scene material",
            &texture.create_view(&Default::default()),
        );
        let direct_pass = TexturedPass::new(ctx, wgpu::TextureFormat::Rgba8UnormSrgb, 8).unwrap();
        let (du, dg) = direct_pass
            .uniform_buffer(ctx, "direct uniforms", 1)
            .unwrap();
        let dm = direct_pass.material_bind_group(
            ctx,
            "direct material",
            &texture.create_view(&Default::default()),
        );
        Self {
            pass,
            mesh,
            uniforms,
            uniform_group,
            material,
            direct: (direct_pass, du, dg, dm),
            _texture: texture,
            view_proj: Mat4::IDENTITY,
            model: Mat4::IDENTITY,
        }
    }

    /// The receding textured floor of `render::first` (the test pattern, repeating, to the
    /// horizon): texture detail at every mip level.
    fn floor(ctx: &GpuContext) -> Self {
        let (v, i) = mipflow::quad_xz();
        let mut s = Self::new(ctx, &test_pattern(256), &v, &i);
        let aspect = OUT.0 as f32 / OUT.1 as f32;
        let proj = mipflow::perspective(55f32.to_radians(), aspect, 0.05, 100.0);
        let view = mipflow::look_at(Vec3::new(0.0, 0.6, 1.2), Vec3::new(0.0, 0.0, -1.5), Vec3::Y);
        s.view_proj = proj * view;
        s.model = Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0))
            * Mat4::from_scale(Vec3::new(2.0, 1.0, 8.0));
        s
    }

    /// A Siemens star: 48 flat-coloured wedges around an off-centre point, so the image is all
    /// hard geometric edges, at every angle and at every spacing down to sub-pixel. The texture
    /// is a 64x64 palette of four 32x32 quadrants, each wedge's UV at one quadrant's centre, so
    /// that each wedge is one exact colour whatever the filter and mip level.
    fn star(ctx: &GpuContext) -> Self {
        let colours = [
            [240u8, 240, 240],
            [20, 20, 30],
            [230, 60, 40],
            [40, 90, 220],
        ];
        let palette = image::RgbaImage::from_fn(64, 64, |x, y| {
            let c = colours[(x / 32 + 2 * (y / 32)) as usize];
            image::Rgba([c[0], c[1], c[2], 255])
        });
        // Facing the light, so the shading is exactly the texture.
        let normal = Vec3::new(0.4, 1.0, 0.3).normalize().to_array();
        let centre = [0.13f32, -0.07];
        let wedges = 48;
        let mut verts = Vec::new();
        let mut idx = Vec::new();
        for k in 0..wedges {
            let a0 = 0.11 + k as f32 * std::f32::consts::TAU / wedges as f32;
            let a1 = a0 + std::f32::consts::TAU / wedges as f32;
            // Alternate light and dark, with a colour every third dark wedge.
            let texel = if k % 2 == 0 {
                0
            } else if k % 6 == 1 {
                2
            } else if k % 6 == 3 {
                3
            } else {
                1
            };
            let uv = [
                0.25 + 0.5 * (texel % 2) as f32,
                0.25 + 0.5 * (texel / 2) as f32,
            ];
            let base = verts.len() as u32;
            for (x, y) in [
                (centre[0], centre[1]),
                (centre[0] + 3.0 * a0.cos(), centre[1] + 3.0 * a0.sin()),
                (centre[0] + 3.0 * a1.cos(), centre[1] + 3.0 * a1.sin()),
            ] {
                verts.push(Vertex {
                    position: [x, y, 0.5],
                    normal,
                    uv,
                });
            }
            idx.extend([base, base + 1, base + 2]);
        }
        let mut s = Self::new(ctx, &palette, &verts, &idx);
        // Clip space directly, corrected for the aspect so the star is round.
        s.view_proj = Mat4::from_scale(Vec3::new(OUT.1 as f32 / OUT.0 as f32, 1.0, 1.0));
        s
    }

    /// The native reference: rendered straight into an sRGB target at `OUT`, no HDR target and
    /// no upscale pass involved.
    fn render_direct(&self, ctx: &GpuContext) -> Vec<u8> {
        let (pass, ubuf, ugroup, material) = &self.direct;
        let u = DrawUniforms::new(self.view_proj, self.model, 0.0, false);
        ctx.queue()
            .write_buffer(ubuf.buffer(), 0, bytemuck::bytes_of(&u));
        let output = output_texture(ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
        let depth = ctx
            .create_texture(
                &wgpu::TextureDescriptor {
                    label: Some("direct depth"),
                    size: wgpu::Extent3d {
                        width: OUT.0,
                        height: OUT.1,
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::Depth32Float,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                },
                Category::Other,
            )
            .unwrap();
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("direct"),
            });
        {
            let mut rp = scene_pass(
                &mut enc,
                &output.create_view(&Default::default()),
                &depth.create_view(&Default::default()),
            );
            pass.draw(&mut rp, ugroup, 0, material, &self.mesh);
        }
        ctx.queue().submit([enc.finish()]);
        read_texture_rgba8(ctx, output.texture()).unwrap()
    }

    /// Renders at `bucket` (mip bias `log2(scale)`), upscales into a fresh `format` output of
    /// `OUT`, and reads it back as RGBA8.
    fn render(
        &self,
        ctx: &GpuContext,
        pool: &mut RenderTargets,
        upscale: &mut UpscalePass,
        bucket: ScaleBucket,
        settings: &UpscaleConfig,
    ) -> Vec<u8> {
        let targets = pool.ensure(ctx, OUT, bucket).unwrap().unwrap();
        let u = DrawUniforms::new(self.view_proj, self.model, bucket.mip_bias(), false);
        ctx.queue()
            .write_buffer(self.uniforms.buffer(), 0, bytemuck::bytes_of(&u));
        let output = output_texture(ctx, upscale.output_format());
        let out_view = output.create_view(&Default::default());
        let mut enc = ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("scene"),
            });
        {
            let mut rp = scene_pass(
                &mut enc,
                targets.view(TargetSet::RENDERER_COLOR).unwrap(),
                targets.view(TargetSet::RENDERER_DEPTH).unwrap(),
            );
            self.pass
                .draw(&mut rp, &self.uniform_group, 0, &self.material, &self.mesh);
        }
        upscale
            .record(ctx, &mut enc, targets, &out_view, settings, None)
            .unwrap();
        ctx.queue().submit([enc.finish()]);
        read_texture_rgba8(ctx, output.texture()).unwrap()
    }
}

/// A fresh output texture of `OUT` in `format`, readable.
fn output_texture(ctx: &GpuContext, format: wgpu::TextureFormat) -> TrackedTexture {
    ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("test output"),
            size: wgpu::Extent3d {
                width: OUT.0,
                height: OUT.1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        },
        Category::Other,
    )
    .unwrap()
}

/// The scene's render pass: clear colour and depth.
fn scene_pass<'e>(
    enc: &'e mut wgpu::CommandEncoder,
    color: &wgpu::TextureView,
    depth: &wgpu::TextureView,
) -> wgpu::RenderPass<'e> {
    enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("scene"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: color,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: 0.05,
                    g: 0.06,
                    b: 0.09,
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: depth,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Discard,
            }),
            stencil_ops: None,
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

fn save(name: &str, rgba: &[u8]) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("resolution_upscale");
    let _ = std::fs::create_dir_all(&dir);
    let _ = image::save_buffer(
        dir.join(format!("{name}.png")),
        rgba,
        OUT.0,
        OUT.1,
        image::ExtendedColorType::Rgba8,
    );
}

/// PSNR of the bilinear and EASU + RCAS upscales from 0.75 against the native render (drawn
/// straight into an sRGB target). First checks that at scale 1 the bilinear pass reproduces that
/// render to within one 8-bit level: the display transform (clamp, sRGB encode) is right and the
/// sampling is centred.
fn compare(ctx: &GpuContext, scene: &Scene, name: &str) -> (f64, f64) {
    let settings = UpscaleConfig::default();
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut up = UpscalePass::new(ctx, format).unwrap();
    let mut bilinear = RenderTargets::new(Upscaler::Bilinear);
    let mut easu = RenderTargets::new(Upscaler::EasuRcas);
    let native = scene.render_direct(ctx);
    // At scale 1 the bilinear pass is an exact copy plus the display transform: it must
    // reproduce the direct render (f16 storage can move a value by one 8-bit level).
    let through_pass = scene.render(ctx, &mut bilinear, &mut up, ScaleBucket::FULL, &settings);
    let worst = through_pass
        .iter()
        .zip(&native)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap_or(0);
    assert!(
        worst <= 1,
        "{name}: scale 1 differs from native by {worst} levels"
    );
    // EASU + RCAS at scale 1: no intermediate (the sharpening reads the scene colour), so the
    // targets are the HDR colour and depth alone; the picture is the native render sharpened:
    // close to it, and not the bilinear copy (the sharpening really ran).
    let sharpened = scene.render(ctx, &mut easu, &mut up, ScaleBucket::FULL, &settings);
    let t = easu.current().unwrap();
    assert!(t.intermediate_view().is_none());
    assert_eq!(
        easu.bytes(),
        u64::from(OUT.0 * OUT.1) * 12,
        "{name}: Rgba16Float + Depth32Float, nothing else"
    );
    let moved = sharpened
        .iter()
        .zip(&through_pass)
        .filter(|(a, b)| a.abs_diff(**b) >= 2)
        .count();
    let p1 = psnr_rgb(&sharpened, &native);
    save(&format!("{name}_native_rcas"), &sharpened);
    assert!(
        moved > 0 && p1 >= 30.0,
        "{name}: RCAS at scale 1 moved {moved} values, {p1:.2} dB against native"
    );
    let b075 = ScaleBucket::from_sixteenths(12);
    let from_bilinear = scene.render(ctx, &mut bilinear, &mut up, b075, &settings);
    let from_easu = scene.render(ctx, &mut easu, &mut up, b075, &settings);
    save(&format!("{name}_native"), &native);
    save(&format!("{name}_075_bilinear"), &from_bilinear);
    save(&format!("{name}_075_easu_rcas"), &from_easu);
    let pb = psnr_rgb(&from_bilinear, &native);
    let pe = psnr_rgb(&from_easu, &native);
    let (w, h) = OUT;
    println!(
        "{name}: from 0.75, bilinear {pb:.2} dB (SSIM {:.4}), EASU+RCAS {pe:.2} dB (SSIM {:.4})",
        ssim(&from_bilinear, &native, w, h),
        ssim(&from_easu, &native, w, h)
    );
    assert!(ctx.take_uncaptured_errors().is_empty());
    (pb, pe)
}

/// Upscaled from 0.75, the textured floor must reach `MIN_PSNR_075` against the native render
/// with either upscaler, and EASU + RCAS must be at least as close as bilinear.
///
/// Why 32 dB: a 0.75 render holds 56 % of the native pixels, so detail above its Nyquist limit
/// (the fine grid lines, the texture aliasing near the horizon that the native render itself
/// point-samples) is gone and no spatial upscaler brings it back. On lavapipe this scene
/// measures 34.6 dB (bilinear) and 37.6 dB (EASU + RCAS). 32 dB leaves 2.5 dB for another
/// driver's rasterisation and filtering, and still fails the classic upscale bug, a half-texel
/// offset, which measured 29.3 dB (bilinear) and 29.0 dB (EASU) here. A wrong display transform
/// (a double sRGB encode: 11.9 dB; Reinhard instead of clamp: 25 dB) fails it by far, and the
/// scale-1 check in `compare` catches those to the level.
const MIN_PSNR_075: f64 = 32.0;

/// The star's floor. Why 18 dB: its centre is far above any Nyquist limit, so the figures are
/// low for every upscaler: 19.6 dB (bilinear) and 21.7 dB (EASU + RCAS) on lavapipe, against
/// 16.7 dB for either with a half-texel offset.
const MIN_PSNR_STAR: f64 = 18.0;

#[test]
fn upscaled_from_075_is_close_to_native() {
    let Some(ctx) = common::gpu() else { return };
    let (pb, pe) = compare(&ctx, &Scene::floor(&ctx), "floor");
    assert!(pb >= MIN_PSNR_075, "bilinear {pb:.2} dB < {MIN_PSNR_075}");
    assert!(pe >= MIN_PSNR_075, "EASU+RCAS {pe:.2} dB < {MIN_PSNR_075}");
    assert!(pe >= pb, "EASU+RCAS {pe:.2} dB below bilinear {pb:.2} dB");
}

/// On an edge-heavy image (a Siemens star: hard geometric edges at every angle), EASU + RCAS is
/// at least as close to the native render as bilinear.
#[test]
fn easu_rcas_is_at_least_as_good_as_bilinear_on_edges() {
    let Some(ctx) = common::gpu() else { return };
    let (pb, pe) = compare(&ctx, &Scene::star(&ctx), "star");
    assert!(pe >= pb, "EASU+RCAS {pe:.2} dB below bilinear {pb:.2} dB");
    // A floor too, so that a broken EASU that merely equals a broken bilinear fails.
    assert!(pb >= MIN_PSNR_STAR, "bilinear {pb:.2} dB < {MIN_PSNR_STAR}");
    assert!(
        pe >= MIN_PSNR_STAR,
        "EASU+RCAS {pe:.2} dB < {MIN_PSNR_STAR}"
    );
}

/// The same image whatever the output format: sRGB views (hardware encode) and UNORM views
/// (the shader encodes) agree within rounding, for both upscalers; BGRA is swizzled right.
#[test]
fn every_output_format_shows_the_same_image() {
    let Some(ctx) = common::gpu() else { return };
    let scene = Scene::floor(&ctx);
    let settings = UpscaleConfig::default();
    let b = ScaleBucket::from_sixteenths(12);
    for upscaler in [Upscaler::Bilinear, Upscaler::EasuRcas] {
        let mut pool = RenderTargets::new(upscaler);
        let mut reference = None;
        for format in [
            wgpu::TextureFormat::Rgba8UnormSrgb,
            wgpu::TextureFormat::Bgra8UnormSrgb,
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureFormat::Bgra8Unorm,
        ] {
            let mut up = UpscalePass::new(&ctx, format).unwrap();
            let img = scene.render(&ctx, &mut pool, &mut up, b, &settings);
            let Some(r) = reference.as_ref() else {
                reference = Some(img);
                continue;
            };
            let worst = img
                .iter()
                .zip(r)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap_or(0);
            assert!(worst <= 1, "{upscaler:?} {format:?}: off by {worst} levels");
        }
    }
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// Records `up` from `targets` into `view` in an encoder of its own and submits it: the
/// record's error, as text.
fn record_once(
    ctx: &GpuContext,
    up: &mut UpscalePass,
    targets: &mipflow::Targets,
    view: &wgpu::TextureView,
) -> Result<(), String> {
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let r = up.record(
        ctx,
        &mut enc,
        targets,
        view,
        &UpscaleConfig::default(),
        None,
    );
    ctx.queue().submit([enc.finish()]);
    r.map_err(|e| e.to_string())
}

/// The pass refuses an output view of the wrong size (typed error, no GPU validation error).
#[test]
fn a_wrong_output_size_is_an_error() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::new(Upscaler::EasuRcas);
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let targets = pool.ensure(&ctx, OUT, ScaleBucket::FULL).unwrap().unwrap();
    let wrong = ctx
        .create_texture(
            &wgpu::TextureDescriptor {
                label: Some("wrong output"),
                size: wgpu::Extent3d {
                    width: 100,
                    height: 100,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            },
            Category::Other,
        )
        .unwrap();
    let r = record_once(
        &ctx,
        &mut up,
        targets,
        &wrong.create_view(&Default::default()),
    );
    assert!(r.is_err());
    ctx.wait_idle().unwrap();
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// A pool whose declared set is empty (a game's set with nothing in it) gives the upscale no
/// scene colour to read: a typed error, not a panic, and nothing recorded.
#[test]
fn upscaling_an_empty_target_set_is_an_error() {
    let Some(ctx) = common::gpu() else { return };
    let mut pool = RenderTargets::with_set(mipflow::TargetSet::new());
    let targets = pool
        .ensure(&ctx, OUT, ScaleBucket::from_sixteenths(12))
        .unwrap()
        .unwrap();
    assert!(targets.is_empty());
    assert_eq!(targets.bytes(), 0);
    let out = output_texture(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
    let view = out.create_view(&Default::default());
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let e = record_once(&ctx, &mut up, targets, &view).unwrap_err();
    assert!(e.contains("no target 0"), "{e}");
}

/// A declared set whose target 0 the upscale cannot sample (multisampled; an integer format)
/// and an output it cannot render to (no `RENDER_ATTACHMENT`): typed errors before anything
/// is recorded, not the device's panic when the bind group or the pass is made.
#[test]
fn an_unsampleable_source_or_unrenderable_output_is_an_error() {
    use mipflow::{TargetSet, TargetSpec};
    let Some(ctx) = common::gpu() else { return };
    let out = output_texture(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
    let view = out.create_view(&Default::default());
    let mut up = UpscalePass::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb).unwrap();
    let record = |up: &mut UpscalePass, set: TargetSet, view: &wgpu::TextureView| {
        let mut pool = RenderTargets::with_set(set);
        let targets = pool
            .ensure(&ctx, OUT, ScaleBucket::from_sixteenths(12))
            .unwrap()
            .unwrap();
        record_once(&ctx, up, targets, view)
    };
    let msaa = TargetSet::new()
        .with(TargetSpec::scaled("msaa colour", wgpu::TextureFormat::Rgba16Float).with_samples(4));
    let e = record(&mut up, msaa, &view).unwrap_err();
    assert!(e.contains("4 samples"), "{e}");
    let integer = TargetSet::new().with(TargetSpec::scaled("ids", wgpu::TextureFormat::R32Uint));
    let e = record(&mut up, integer, &view).unwrap_err();
    assert!(e.contains("filterable"), "{e}");
    let sampled_only = common::texture_2d(
        &ctx,
        "not a render target",
        (OUT.0, OUT.1, 1),
        wgpu::TextureFormat::Rgba8UnormSrgb,
        wgpu::TextureUsages::TEXTURE_BINDING,
        1,
        Category::Other,
    );
    let colour = TargetSet::new().with(TargetSpec::scaled(
        "colour",
        wgpu::TextureFormat::Rgba16Float,
    ));
    let e = record(
        &mut up,
        colour.clone(),
        &sampled_only.create_view(&Default::default()),
    )
    .unwrap_err();
    assert!(e.contains("RENDER_ATTACHMENT"), "{e}");
    // The same set into a proper output records.
    record(&mut up, colour, &view).unwrap();
    ctx.wait_idle().unwrap();
    assert!(ctx.take_uncaptured_errors().is_empty());
}

/// `read_level` of a texture it cannot copy (no `COPY_SRC`, multisampled) is a typed error;
/// of a 2D array, its first layer.
#[test]
fn reading_back_what_cannot_be_copied_is_an_error() {
    let Some(ctx) = common::gpu() else { return };
    let make = |usage: wgpu::TextureUsages, samples: u32, layers: u32| {
        common::texture_2d(
            &ctx,
            "readback source",
            (8, 4, layers),
            wgpu::TextureFormat::Rgba8Unorm,
            usage,
            samples,
            Category::Other,
        )
    };
    use wgpu::TextureUsages as U;
    let no_copy = make(U::TEXTURE_BINDING, 1, 1);
    let e = mipflow::low_level::read_level(&ctx, no_copy.texture(), 0).unwrap_err();
    assert!(e.to_string().contains("COPY_SRC"), "{e}");
    let msaa = make(U::RENDER_ATTACHMENT | U::COPY_SRC, 4, 1);
    let e = mipflow::low_level::read_level(&ctx, msaa.texture(), 0).unwrap_err();
    assert!(e.to_string().contains("multisampled"), "{e}");
    let array = make(U::COPY_DST | U::COPY_SRC, 1, 3);
    let layer: Vec<u8> = (0..8 * 4 * 4).map(|i| i as u8).collect();
    ctx.queue().write_texture(
        wgpu::TexelCopyTextureInfo {
            texture: array.texture(),
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        &layer,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(32),
            rows_per_image: Some(4),
        },
        wgpu::Extent3d {
            width: 8,
            height: 4,
            depth_or_array_layers: 1,
        },
    );
    assert_eq!(
        mipflow::low_level::read_level(&ctx, array.texture(), 0).unwrap(),
        layer
    );
    ctx.wait_idle().unwrap();
    assert!(ctx.take_uncaptured_errors().is_empty());
}
