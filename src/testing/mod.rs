//! Helpers for the workspace's tests, benches and tools (feature `testing`; not a stable API):
//! - [`render_textured_quad`]: one textured quad seen at a grazing angle, so that the whole mip
//!   chain is sampled, rendered offscreen and read back (the first image test);
//! - [`planner_fixture`]: the planner's benchmark scene (criterion and `mipflow bench`);
//! - [`SplitMix64`]: the one deterministic generator;
//! - [`feedback_pass::RecordPass`]: a pass that records GPU feedback for chosen slots;
//! - [`bc7_ktx2`]: a KTX2 file of a full BC7 chain, its blocks from a generator.

pub mod feedback_pass;
pub mod planner_fixture;
mod rng;

pub use rng::SplitMix64;

/// A KTX2 file of a full `side`² BC7 chain whose bytes come from `byte` (noise or a constant:
/// nothing meant to be looked at), for benches and tests that stream many textures.
pub fn bc7_ktx2(side: u32, mut byte: impl FnMut() -> u8) -> Vec<u8> {
    let levels = (0..crate::budget::size::full_mip_count(side, side))
        .map(|l| {
            let s = (side >> l).max(1);
            (0..crate::ktx2::level_size(wgpu::TextureFormat::Bc7RgbaUnorm, s, s))
                .map(|_| byte())
                .collect()
        })
        .collect();
    let tex = crate::ktx2::EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: side,
        height: side,
        levels,
        key_values: Vec::new(),
    };
    let mut out = Vec::new();
    crate::ktx2::write_ktx2(&mut out, &tex, None, "mipflow testing")
        .expect("writing to a Vec cannot fail");
    out
}

use glam::{Mat4, Vec3};

use crate::Result;
use crate::budget::Category;
use crate::gpu::{GpuContext, read_texture_rgba8, upload};
use crate::renderer::{DrawUniforms, GpuMesh, TexturedPass};

/// Renders a quad textured with `levels` (a full or partial mip chain of `format`, level 0 =
/// `tex_width x tex_height`) into a `width x height` `Rgba8UnormSrgb` target, tilted so that it
/// recedes to the horizon, and returns the RGBA8 pixels. Every resource goes through the ledger
/// and is freed before returning.
pub fn render_textured_quad(
    ctx: &GpuContext,
    format: wgpu::TextureFormat,
    tex_width: u32,
    tex_height: u32,
    levels: &[Vec<u8>],
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    render_textured_quad_oriented(
        ctx,
        format,
        (tex_width, tex_height),
        levels,
        (width, height),
        crate::ktx2::Orientation::default(),
    )
}

/// [`render_textured_quad`] for a texture whose rows or columns go the other way
/// (`KTXorientation`), drawn the way mipflow's `Renderer` draws it (flipped coordinates).
pub fn render_textured_quad_oriented(
    ctx: &GpuContext,
    format: wgpu::TextureFormat,
    (tex_width, tex_height): (u32, u32),
    levels: &[Vec<u8>],
    (width, height): (u32, u32),
    orientation: crate::ktx2::Orientation,
) -> Result<Vec<u8>> {
    let color_format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let pass = TexturedPass::new(ctx, color_format, 8)?;
    let refs: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
    let texture = upload::create_texture_with_levels(
        ctx,
        &wgpu::TextureDescriptor {
            label: Some("first render texture"),
            size: wgpu::Extent3d {
                width: tex_width,
                height: tex_height,
                depth_or_array_layers: 1,
            },
            mip_level_count: levels.len() as u32,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        &refs,
        Category::Textures,
    )?;
    let target_desc = |label, format, usage| wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    };
    let color = ctx.create_texture(
        &target_desc(
            "first render colour",
            color_format,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        ),
        Category::RenderTargets,
    )?;
    let depth = ctx.create_texture(
        &target_desc(
            "first render depth",
            pass.depth_format(),
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        ),
        Category::RenderTargets,
    )?;
    let (verts, idx) = crate::renderer::quad_xz();
    let mesh = GpuMesh::new(ctx, "first render quad", &verts, &idx)?;
    let (ubuf, ubind) = pass.uniform_buffer(ctx, "first render uniforms", 1)?;
    let material = pass.material_bind_group(
        ctx,
        "first render material",
        &texture.create_view(&Default::default()),
    );

    let aspect = width as f32 / height as f32;
    let proj = crate::demand::perspective(55f32.to_radians(), aspect, 0.05, 100.0);
    let view = crate::demand::look_at(Vec3::new(0.0, 0.6, 1.2), Vec3::new(0.0, 0.0, -1.5), Vec3::Y);
    // A long floor: 2 wide, 8 deep, its UVs repeating 4 times along the depth.
    let model = Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0))
        * Mat4::from_scale(Vec3::new(2.0, 1.0, 8.0));
    let u = DrawUniforms::new(proj * view, model, 0.0, false).with_orientation(orientation);
    ctx.queue()
        .write_buffer(ubuf.buffer(), 0, bytemuck::bytes_of(&u));

    let color_view = color.create_view(&Default::default());
    let depth_view = depth.create_view(&Default::default());
    let mut enc = ctx
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("first render"),
        });
    {
        let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("first render pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &color_view,
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
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.draw(&mut rp, &ubind, 0, &material, &mesh);
    }
    ctx.queue().submit([enc.finish()]);
    read_texture_rgba8(ctx, color.texture())
}
