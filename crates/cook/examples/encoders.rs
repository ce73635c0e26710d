//! The CPU and GPU block encoders side by side on the same images: per format, the mean and worst
//! RGB PSNR of level 0 against the source, and megapixels a second over the whole chain (the
//! GPU's device and pipeline creation timed apart). BENCHMARKS.md's encoder table comes from it.
//!
//! `cargo run --release -p mipflow-cook --example encoders -- [--gpu-only|--cpu-only] [--formats bc7,bc1] IMAGE...`

use std::time::Instant;

use mipflow_cook::{
    BlockKind, ColorSpace, CookOptions, GpuEncoders, GpuMode, Resize, cook_rgba8, decode_blocks,
    encoder::{BlockEncoder, encoder_for_options},
    psnr_rgb,
};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let take = |args: &mut Vec<String>, flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.remove(at);
        Some(())
    };
    let gpu_only = take(&mut args, "--gpu-only").is_some();
    let cpu_only = take(&mut args, "--cpu-only").is_some();
    let mut kinds = vec![
        BlockKind::Bc7,
        BlockKind::Bc1,
        BlockKind::Bc3,
        BlockKind::Bc4,
        BlockKind::Bc5,
        BlockKind::Bc6h,
    ];
    if let Some(at) = args.iter().position(|a| a == "--formats") {
        let list = args.remove(at + 1);
        args.remove(at);
        kinds.retain(|k| {
            list.split(',')
                .any(|f| f == format!("{k:?}").to_lowercase())
        });
    }
    let images: Vec<image::RgbaImage> = args
        .iter()
        .map(|p| {
            image::open(p)
                .unwrap_or_else(|e| panic!("{p}: {e}"))
                .to_rgba8()
        })
        .collect();
    assert!(!images.is_empty(), "give images to encode");
    let gpu = if cpu_only {
        None
    } else {
        let t = Instant::now();
        let gpu = GpuEncoders::open(GpuMode::On).expect("a GPU adapter");
        let g = gpu.expect("on gives a device");
        println!(
            "GPU: {} (device and pipelines: {:.1} s)",
            g.adapter(),
            t.elapsed().as_secs_f64()
        );
        Some(g)
    };
    let threads = rayon::current_num_threads();
    println!("CPU: {threads} threads");
    println!("| format | path | mean dB | worst dB | MP/s |");
    println!("|---|---|---|---|---|");
    for kind in kinds {
        let opts = CookOptions {
            color: ColorSpace::Srgb,
            resize: Resize::Keep,
            block: Some(kind),
            ..CookOptions::default()
        };
        let mut paths: Vec<(&str, Box<dyn BlockEncoder>)> = Vec::new();
        if !gpu_only {
            paths.push(("CPU", encoder_for_options(&opts)));
        }
        if let Some(g) = &gpu {
            paths.push(("GPU", g.encoder(&opts)));
        }
        for (path, encoder) in paths {
            let (mut sum, mut worst, mut mp) = (0.0, f64::MAX, 0.0);
            let start = Instant::now();
            for img in &images {
                let tex = cook_rgba8(img.clone(), &opts, encoder.as_ref()).expect("cooks");
                let (w, h) = img.dimensions();
                let mut got = decode_blocks(opts.format(), &tex.levels[0], w, h);
                let mut want = img.as_raw().clone();
                let keep = match kind {
                    BlockKind::Bc4 => 1,
                    BlockKind::Bc5 => 2,
                    _ => 3,
                };
                for p in got.chunks_exact_mut(4).chain(want.chunks_exact_mut(4)) {
                    p[keep..3].fill(0);
                }
                if kind == BlockKind::Bc6h {
                    // BC6H holds the linear light of the sRGB source: compare with that.
                    for p in want.chunks_exact_mut(4) {
                        for c in &mut p[..3] {
                            *c = mipflow_cook::unorm8(mipflow_cook::srgb_to_linear(
                                f32::from(*c) / 255.0,
                            ));
                        }
                    }
                }
                let db = psnr_rgb(&got, &want);
                sum += db;
                worst = f64::min(worst, db);
                mp += f64::from(w) * f64::from(h) * 4.0 / 3.0 / 1e6;
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "| {kind:?} | {path} | {:.2} | {worst:.2} | {:.2} |",
                sum / images.len() as f64,
                mp / secs
            );
        }
    }
}
