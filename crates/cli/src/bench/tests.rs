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
        speed: super::DEFAULT_TOUR_SPEED,
        sweep: None,
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
    assert!(p.steady_us_mean > 0.0 && p.moving_us_mean > 0.0 && p.moving_full_us_mean > 0.0);
    assert!(p.moving_us_p50 > 0.0 && p.moving_full_us_p50 > 0.0);
}

#[test]
fn sweep_denominators_are_checked() {
    assert_eq!(
        sweep::parse_denominators("32, 8,16,8").unwrap(),
        vec![8, 16, 32]
    );
    assert!(sweep::parse_denominators("1").is_err());
    assert!(sweep::parse_denominators("8,x").is_err());
    assert!(sweep::parse_denominators("5000").is_err());
}

#[test]
fn sweep_table_and_chart() {
    use sweep::{PopIn, Sweep, SweepBest, SweepDemand, SweepPoint};
    let mut s = Sweep {
        rgba8_peak_bytes: 256 << 20,
        ..Sweep::default()
    };
    for demand in SweepDemand::ALL {
        for (n, psnr) in [(8, 48.0), (16, 43.0), (32, 38.5)] {
            s.points.push(SweepPoint {
                demand: Some(demand),
                denominator: n,
                budget_bytes: (256 << 20) / u64::from(n),
                psnr_min_db: psnr,
                frames_under_40db: u64::from(psnr < 40.0) * 3,
                ..SweepPoint::default()
            });
        }
        s.best.push(SweepBest {
            demand: Some(demand),
            denominator: Some(16),
            budget_bytes: Some(16 << 20),
        });
        s.popin.push(PopIn {
            demand: Some(demand),
            frames_to_all_wanted: Some(4),
            frames_tried: 60,
            first_frame_psnr_db: 31.5,
        });
    }
    let md = sweep::sweep_markdown(&s);
    assert!(md.contains("| feedback off | 1/32 | 8.00 |"), "{md}");
    assert!(
        md.contains("| feedback + histograms | 1/16 (16.00 MiB) | 4 | 31.50 |"),
        "{md}"
    );
    let path = std::env::temp_dir().join(format!("mipflow-sweep-{}.png", std::process::id()));
    sweep::write_sweep_chart(&s, &path).unwrap();
    let img = image::open(&path).unwrap().to_rgba8();
    // The last series drawn (histograms, orange) is there.
    let orange = img
        .pixels()
        .filter(|p| p[0] > 200 && p[1] > 80 && p[1] < 120 && p[2] < 60)
        .count();
    assert!(orange > 300, "{orange}");
    let _ = std::fs::remove_file(path);
}
