//! Render scale against texture sharpness under a squeeze: what the planner's
//! `PlannerConfig::scale_blur_weight` does to the picture.
//!
//! A 1280x720 view of a receding wall of 48 textures (1024² and smaller, BC7) is rendered with
//! every texture resident (the reference); then, for each weight, a fresh renderer starts with
//! the same generous budget, the budget falls to twice (`--targets-times`) the full-resolution
//! render targets (plus
//! the output image, which stands in for a window's surface texture and is charged here, and
//! its readback for the comparison), and
//! the frames after the fall are compared with the reference (PSNR, RGB). Deterministic
//! streaming: every run prints the same figures.
//!
//! ```text
//! cargo run --release --example scale_trade [-- --frames 90 --weights 0.25,1,4 \
//!     --camera 0,1.6,1.8,0,1.5,-12 --targets-times 2]
//! ```
//!
//! `SCALE_TRADE_PNG=path.png` writes the reference image.

use glam::{Mat4, Vec3};
use mipflow::{
    Budget, Camera, Category, FrameInput, GpuConfig, GpuContext, MaterialDesc, Renderer,
    RendererConfig, TextureOptions, TextureSource, format_bytes, read_texture_rgba8,
};
use mipflow_cook::Quality;
use mipflow_cook::compare::psnr_rgb;

const OUTPUT: (u32, u32) = (1280, 720);
const GENEROUS: u64 = 1 << 30;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut frames = 90u64;
    let mut weights = vec![0.25f32, 1.0, 4.0];
    let mut look = [0.0f32, 1.6, 1.8, 0.0, 1.5, -12.0];
    let mut targets_times = 2.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => frames = args.next().ok_or("--frames N")?.parse()?,
            "--weights" => {
                weights = args
                    .next()
                    .ok_or("--weights A,B,..")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--targets-times" => targets_times = args.next().ok_or("--targets-times K")?.parse()?,
            "--camera" => {
                let v: Vec<f32> = args
                    .next()
                    .ok_or("--camera EYE_X,EYE_Y,EYE_Z,AT_X,AT_Y,AT_Z")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
                look = v.try_into().map_err(|_| "--camera takes six numbers")?;
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let textures = cook_textures()?;
    let camera = Camera::look_at(
        Vec3::new(look[0], look[1], look[2]),
        Vec3::new(look[3], look[4], look[5]),
    );

    // The reference: everything resident, at scale 1.
    let (reference, full_targets, output_bytes) = {
        let (mut r, view, out) = scene(&textures, 1.0)?;
        let mut stats = None;
        for _ in 0..40 {
            stats = Some(*r.render(&view, &FrameInput::new(camera))?);
        }
        let s = stats.ok_or("no frame")?;
        if s.render_scale != 1.0 || s.resident_mip_bytes < s.wanted_mip_bytes {
            return Err("the reference is not fully resident at scale 1".into());
        }
        let image = read_texture_rgba8(r.context(), &out)?;
        if let Ok(path) = std::env::var("SCALE_TRADE_PNG") {
            image::save_buffer(&path, &image, OUTPUT.0, OUTPUT.1, image::ColorType::Rgba8)?;
        }
        (
            image,
            s.ledger.by_category.render_targets.bytes,
            out.bytes(),
        )
    };
    // The output image and its readback for the comparison are allocations of this program's
    // own (a window's surface texture is not charged): the budget leaves room for both.
    let squeezed = (targets_times * full_targets as f64) as u64 + 2 * output_bytes;
    println!(
        "{}x{}, 48 textures (2048² to 512²); full-resolution targets {}, output image {} (and its readback); budget {} -> {}",
        OUTPUT.0,
        OUTPUT.1,
        format_bytes(full_targets),
        format_bytes(output_bytes),
        format_bytes(GENEROUS),
        format_bytes(squeezed)
    );
    println!(
        "{:>7} | {:>9} {:>9} {:>9} | {:>6} | {:>9} {:>9} {:>9}",
        "weight", "textures", "targets", "peak", "scale", "mean dB", "min dB", "last dB"
    );
    for w in weights {
        let (mut r, view, out) = scene(&textures, w)?;
        for _ in 0..20 {
            r.render(&view, &FrameInput::new(camera))?;
        }
        // Room for the comparison's readback, held on the ledger between readbacks: the
        // manager plans around it, and the readback takes its place for a moment.
        let reserve = |r: &Renderer| {
            r.context()
                .ledger()
                .charge(Category::Staging, output_bytes, "readback room")
        };
        let mut room = Some(reserve(&r));
        r.set_budget(Budget::bytes(squeezed));
        let (mut sum, mut n, mut min, mut last, mut peak) = (0.0, 0u32, f64::INFINITY, 0.0, 0);
        let mut stats = None;
        for f in 1..=frames {
            let s = *r.render(&view, &FrameInput::new(camera))?;
            peak = peak.max(s.frame_peak_bytes);
            if s.frame_peak_bytes > squeezed {
                eprintln!(
                    "frame {f}: peak {} over {} (total {}, oom cap {:?}, too small {})",
                    s.frame_peak_bytes,
                    squeezed,
                    s.ledger.total_bytes,
                    s.oom_cap_bytes,
                    s.budget_too_small
                );
            }
            // The first frames settle (the drops, the rescale); then every third is compared.
            if f > 10 && f % 3 == 0 || f == frames {
                drop(room.take());
                let image = read_texture_rgba8(r.context(), &out)?;
                room = Some(reserve(&r));
                let db = psnr_rgb(&image, &reference).min(99.0);
                sum += db;
                n += 1;
                min = min.min(db);
                last = db;
            }
            stats = Some(s);
        }
        let s = stats.ok_or("no frame")?;
        println!(
            "{:>7} | {:>9} {:>9} {:>9} | {:>6.3} | {:>9.2} {:>9.2} {:>9.2}{}",
            w,
            format_bytes(s.ledger.by_category.textures.bytes),
            format_bytes(s.ledger.by_category.render_targets.bytes),
            format_bytes(peak),
            s.render_scale,
            sum / f64::from(n.max(1)),
            min,
            last,
            if peak > squeezed { "  OVER BUDGET" } else { "" }
        );
        if peak > squeezed {
            return Err("the ledger passed the budget".into());
        }
    }
    Ok(())
}

/// 48 procedural textures, cooked once (fast BC7): 2048², 1024² and 512² as the demo's set.
fn cook_textures() -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for spec in mipflow_cook::procedural::demo_specs(7, 48, 2048) {
        out.push(mipflow_cook::procedural::cook_procedural(
            &spec,
            Quality::Fast,
        )?);
    }
    Ok(out)
}

/// A renderer with a corridor of textures (two walls of 3 rows and 8 panels of 2 m, receding
/// from the camera), its planner weighing
/// the scale by `weight`, and its output image and view.
fn scene(
    textures: &[Vec<u8>],
    weight: f32,
) -> Result<(Renderer, wgpu::TextureView, mipflow::TrackedTexture), Box<dyn std::error::Error>> {
    let ctx = GpuContext::headless(&GpuConfig::default())?;
    let mut cfg = RendererConfig::default();
    cfg.budget = Budget::bytes(GENEROUS);
    cfg.anisotropy = 1;
    cfg.stream = cfg.stream.with_deterministic(true);
    cfg.stream.planner.scale_blur_weight = weight;
    let mut r = Renderer::with_context(ctx, cfg)?;
    let out = r
        .context()
        .create_offscreen_target("output", OUTPUT.0, OUTPUT.1)?;
    let view = out.create_view(&Default::default());
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi)?;
    for (i, bytes) in textures.iter().enumerate() {
        let tex = r.add_texture(
            TextureSource::Bytes(bytes.clone().into()),
            TextureOptions::default(),
        )?;
        let mat = r.add_material(MaterialDesc::new(tex))?;
        let (side, col, row) = (i % 2, ((i / 2) % 8) as f32, (i / 16) as f32);
        // Two walls along -Z, seen at a grazing angle: near panels want level 0, far ones less.
        let (x, turn) = if side == 0 {
            (1.4, -std::f32::consts::FRAC_PI_2)
        } else {
            (-1.4, std::f32::consts::FRAC_PI_2)
        };
        let at = Vec3::new(x, 1.0 + 2.0 * row, 1.0 - 2.0 * col);
        let t = Mat4::from_translation(at)
            * Mat4::from_rotation_y(turn)
            * Mat4::from_scale(Vec3::splat(2.0));
        r.add_instance(mesh, mat, t)?;
    }
    Ok((r, view, out))
}
