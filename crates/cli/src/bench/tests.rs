//! Unit tests of the bench's options, figures and report.

use super::*;
use crate::parse_wxh;

#[test]
fn percentiles_nearest_rank() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    let p = Percentiles::of(&v);
    assert_eq!((p.p50, p.p95, p.p99), (50.0, 95.0, 99.0));
    assert!((p.mean - 50.5).abs() < 1e-9);
    let one = Percentiles::of(&[3.0]);
    assert_eq!((one.p50, one.p99), (3.0, 3.0));
    assert_eq!(Percentiles::of(&[]), Percentiles::default());
}

#[test]
fn sizes_parse_and_reject() {
    assert_eq!(parse_wxh("640x360"), Some((640, 360)));
    assert_eq!(parse_wxh("0x10"), None);
    assert_eq!(parse_wxh("640"), None);
}

/// A report made up of plain numbers: the table and the chart are made from it alone.
fn synthetic() -> BenchReport {
    let mode = |m: Mode, scale: u64| ModeSummary {
        mode: Some(m),
        title: m.title().to_owned(),
        peak_bytes: (40 * scale) << 20,
        peak_by_category: ByCategory {
            textures: (36 * scale) << 20,
            render_targets: 4 << 20,
            ..ByCategory::default()
        },
        frame_ms: Percentiles::of(&[4.0, 5.0, 9.0]),
        budget_bytes: (m == Mode::Mipflow).then_some(12 << 20),
        frames: (0..20)
            .map(|f| FrameSample {
                frame: f,
                total_bytes: (40 * scale) << 20,
                budget_bytes: (m == Mode::Mipflow).then_some(12 << 20),
                psnr_db: (m != Mode::Rgba8).then_some(if m == Mode::Bc7 {
                    PSNR_CAP_DB
                } else {
                    35.0 + f as f64
                }),
                ssim: (m != Mode::Rgba8).then_some(0.98),
                ..FrameSample::default()
            })
            .collect(),
        ..ModeSummary::default()
    };
    BenchReport {
        command: "mipflow bench".into(),
        modes: vec![
            mode(Mode::Rgba8, 16),
            mode(Mode::Bc7, 4),
            mode(Mode::Mipflow, 1),
        ],
        planner: Some(PlannerFigures {
            textures: 10_000,
            steady_us_mean: 20.0,
            steady_us_p50: 20.0,
            ..PlannerFigures::default()
        }),
        cook: vec![CookFigures {
            quality: "fast".into(),
            ..CookFigures::default()
        }],
        ..BenchReport::default()
    }
}

#[test]
fn table_and_chart_from_a_report() {
    let mut r = synthetic();
    let opts = BenchOptions::from_args(&BenchArgs {
        scenario: None,
        textures: None,
        budget: None,
        frames: None,
        out: "x".into(),
        size: None,
        count: None,
        texture_size: None,
        seed: None,
        anisotropy: None,
        quality_every: 1,
        async_io: false,
        no_prefetch: false,
        planner_textures: 10_000,
        quick: false,
    })
    .unwrap();
    r.goals = goals(&r, &opts);
    let md = markdown(&r);
    assert!(md.contains("| figure | (a) RGBA8, all resident |"), "{md}");
    assert!(md.contains("**40.0**"), "{md}");
    // 1/16 of (a) exactly: met; the planner at 10k: met; PSNR 35 dB: not met.
    let met = |name: &str| {
        r.goals
            .iter()
            .find(|g| g.name.starts_with(name))
            .and_then(|g| g.met)
    };
    assert_eq!(met("(c) peak VRAM"), Some(true));
    assert_eq!(met("planner"), Some(true));
    assert_eq!(
        met("(c) PSNR"),
        None,
        "no PSNR summary in the synthetic modes"
    );
    let path = std::env::temp_dir().join(format!("mipflow-bench-chart-{}.png", std::process::id()));
    write_chart(&r, &path, 1000, 700).unwrap();
    let img = image::open(&path).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (1000, 700));
    // The textures bars (blue) are drawn.
    let blue = img
        .pixels()
        .filter(|p| p[2] > 200 && p[0] < 100 && p[1] > 100 && p[1] < 160)
        .count();
    assert!(blue > 2_000, "{blue}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn planner_bench_runs_small() {
    let p = planner_bench(200, 20);
    assert_eq!(p.textures, 200);
    assert!(p.note.is_none(), "{:?}", p.note);
    assert!(p.steady_us_mean > 0.0 && p.moving_us_mean > 0.0);
}
