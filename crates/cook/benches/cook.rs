//! Cooking throughput and quality per BC7 quality setting.
//!
//! `cargo bench --bench cook` prints a table (megapixels of level 0 per second for the whole cook:
//! mips, BC7, all cores, one image per rayon task as `mipflow cook` does; mean and worst RGB PSNR of
//! level 0 after cook -> KTX2 -> read -> decode) and then lets criterion time each quality.
//! Inputs: the photographs in `assets/photos/` plus one 1024x1024 upscale of the first, so that the
//! parallel bands inside a large image are measured too.

use std::hint::black_box;
use std::io::Cursor;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use image::DynamicImage;
use mipflow::ktx2::{Ktx2Info, ReadLimits, read_level, write_ktx2};
use mipflow_cook::{CookOptions, Quality, cook_image, decode_bc7, psnr_rgb};
use rayon::prelude::*;

fn inputs() -> Vec<(String, DynamicImage)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/photos");
    let mut out: Vec<(String, DynamicImage)> = ["astronaut", "coffee", "chelsea", "brick"]
        .iter()
        .map(|n| {
            (
                n.to_string(),
                image::open(dir.join(format!("{n}.png"))).expect("photo"),
            )
        })
        .collect();
    let big = out[0]
        .1
        .resize_exact(1024, 1024, image::imageops::FilterType::Lanczos3);
    out.push(("astronaut-1024".into(), big));
    out
}

fn cook_all(images: &[(String, DynamicImage)], opts: &CookOptions) {
    images.par_iter().with_max_len(1).for_each(|(_, img)| {
        black_box(cook_image(img, opts).expect("cook"));
    });
}

fn level0_psnr(img: &DynamicImage, opts: &CookOptions) -> f64 {
    let tex = cook_image(img, opts).expect("cook");
    let mut bytes = Vec::new();
    write_ktx2(&mut bytes, &tex, opts.zstd, "bench").expect("write");
    let info = Ktx2Info::parse(&bytes, bytes.len() as u64, &ReadLimits::default()).expect("parse");
    let level0 = read_level(&mut Cursor::new(&bytes), &info, 0).expect("read");
    psnr_rgb(
        &img.to_rgba8(),
        &decode_bc7(&level0, info.width, info.height),
    )
}

/// User + system CPU time of this process (Linux `/proc/self/stat`, in clock ticks of 1/100 s),
/// so that throughput can be judged when other work shares the cores.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn bench(c: &mut Criterion) {
    let images = inputs();
    let megapixels: f64 = images
        .iter()
        .map(|(_, i)| f64::from(i.width() * i.height()) / 1e6)
        .sum();
    let photos = &images[..4];
    eprintln!(
        "\n{} threads, {:.2} MP per run ({} images)",
        rayon::current_num_threads(),
        megapixels,
        images.len()
    );
    eprintln!(
        "| quality | MP/s (wall, all cores) | MP per CPU-second | mean RGB PSNR (colour photos) | worst (all photos) |"
    );
    eprintln!("|---|---|---|---|---|");
    let qualities = [Quality::Fast, Quality::Default, Quality::Slow];
    for q in qualities {
        let opts = CookOptions {
            quality: q,
            ..Default::default()
        };
        cook_all(&images, &opts); // warm-up
        let runs = 3;
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        for _ in 0..runs {
            cook_all(&images, &opts);
        }
        let rate = megapixels * runs as f64 / start.elapsed().as_secs_f64();
        let per_cpu = match (cpu_start, cpu_seconds()) {
            (Some(a), Some(b)) if b > a => format!("{:.2}", megapixels * runs as f64 / (b - a)),
            _ => "n/a".to_string(),
        };
        let psnrs: Vec<f64> = photos
            .iter()
            .map(|(_, img)| level0_psnr(img, &opts))
            .collect();
        let mean = psnrs[..3].iter().sum::<f64>() / 3.0;
        let worst = psnrs.iter().cloned().fold(f64::INFINITY, f64::min);
        eprintln!("| {q:?} | {rate:.2} | {per_cpu} | {mean:.2} dB | {worst:.2} dB |");
    }

    let mut group = c.benchmark_group("cook");
    group.sample_size(10);
    group.throughput(Throughput::Elements((megapixels * 1e6) as u64));
    for q in qualities {
        let opts = CookOptions {
            quality: q,
            ..Default::default()
        };
        group.bench_function(format!("{q:?}"), |b| b.iter(|| cook_all(&images, &opts)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
