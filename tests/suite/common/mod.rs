//! Shared set-up of the GPU tests.
#![allow(dead_code)]

pub mod alloc;

use mipflow::{GpuConfig, GpuContext};

/// A headless context, or `None` when this machine has no adapter at all. That case is announced
/// loudly; under CI (`CI=true`) or with `MIPFLOW_REQUIRE_GPU=1` it fails the test instead, since CI
/// has lavapipe and must run every GPU test.
pub fn gpu() -> Option<GpuContext> {
    match GpuContext::headless(&GpuConfig::default()) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            let required = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
                || std::env::var("MIPFLOW_REQUIRE_GPU").is_ok_and(|v| v == "1");
            if required {
                panic!(
                    "no GPU adapter, and this run requires one (CI or MIPFLOW_REQUIRE_GPU=1): {e}"
                );
            }
            eprintln!(
                "\n!!!!!!!! SKIPPING GPU TEST: no adapter ({e}).\n!!!!!!!! Install lavapipe: apt-get install mesa-vulkan-drivers libvulkan1\n"
            );
            None
        }
    }
}

/// The folder of reference images.
pub fn reference_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// A procedural texture `name-seed` cooked at `size`² (fast BC7): KTX2 bytes.
pub fn cooked(name: &str, seed: u64, size: u32) -> Vec<u8> {
    let spec = mipflow_cook::procedural::TextureSpec {
        name: format!("{name}-{seed}"),
        size,
        seed,
        number: seed as u32,
    };
    mipflow_cook::procedural::cook_procedural(&spec, mipflow_cook::Quality::Fast).expect("cook")
}

/// Procedural texture `i` of the demo set with `seed`, cooked at `size`² (fast BC7) and added to
/// `r` as a streamed texture with a material: (texture, material).
pub fn procedural_material(
    r: &mut mipflow::Renderer,
    seed: u64,
    i: u32,
    size: u32,
) -> (mipflow::TextureHandle, mipflow::MaterialHandle) {
    let spec = mipflow_cook::procedural::TextureSpec {
        size,
        ..mipflow_cook::procedural::demo_specs(seed, i + 1, size)[i as usize].clone()
    };
    let bytes =
        mipflow_cook::procedural::cook_procedural(&spec, mipflow_cook::Quality::Fast).unwrap();
    let tex = r
        .add_texture(
            mipflow::TextureSource::Bytes(bytes.into()),
            mipflow::TextureOptions::default(),
        )
        .unwrap();
    let mat = r.add_material(mipflow::MaterialDesc::new(tex)).unwrap();
    (tex, mat)
}

/// A manager config: `budget` bytes, the manager's render targets or not, deterministic
/// streaming or not.
pub fn manager_config(
    budget: u64,
    render_targets: bool,
    deterministic: bool,
) -> mipflow::ManagerConfig {
    let mut c = mipflow::ManagerConfig::default();
    c.budget = mipflow::Budget::bytes(budget);
    c.render_targets = render_targets;
    c.stream = c.stream.with_deterministic(deterministic);
    c
}

/// A manager on `ctx`'s device with `config`.
pub fn manager(ctx: &GpuContext, config: mipflow::ManagerConfig) -> mipflow::BudgetManager {
    mipflow::BudgetManager::new(ctx.device().clone(), ctx.queue().clone(), config).unwrap()
}

/// A 2D texture of one level on `ctx`, charged to `category`: `size` is (width, height,
/// layers).
pub fn texture_2d(
    ctx: &GpuContext,
    label: &str,
    size: (u32, u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    samples: u32,
    category: mipflow::Category,
) -> mipflow::TrackedTexture {
    ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: size.0,
                height: size.1,
                depth_or_array_layers: size.2,
            },
            mip_level_count: 1,
            sample_count: samples,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        },
        category,
    )
    .expect("texture")
}

/// RGB PSNR (dB; 99 for identical) of `a` against `b`, both RGBA8 of the same size, over the
/// channels `mask` selects.
pub fn psnr(a: &[u8], b: &[u8], mask: [bool; 4]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (mut se, mut n) = (0f64, 0u64);
    for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        for c in 0..4 {
            if mask[c] {
                let d = f64::from(pa[c]) - f64::from(pb[c]);
                se += d * d;
                n += 1;
            }
        }
    }
    let mse = se / n.max(1) as f64;
    if mse == 0.0 {
        99.0
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}
