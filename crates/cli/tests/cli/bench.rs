//! `mipflow bench` through the binary: a tiny configuration writes a well-formed report whose
//! modes are ordered by VRAM as they must be ((a) RGBA8 > (b) BC7 > (c) mipflow), and bad flags
//! are usage errors (exit 2).

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use mipflow_cli::bench::{BenchReport, Mode};

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mipflow-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bench(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .arg("bench")
        .args(args)
        .env("MIPFLOW_CACHE", dir.join("cache"))
        .output()
        .expect("run mipflow")
}

/// Six frames at 160x90 of eight demo textures (the largest 1024², so that (b)'s footprint, and a
/// quarter of it as (c)'s budget, stay above the render targets), with the quick
/// micro-benchmarks: a few seconds on lavapipe.
#[test]
fn tiny_bench_report_is_well_formed_and_ordered() {
    // The bench needs an adapter; `common::gpu` says so loudly (or fails under CI) when none.
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir("tiny");
    let out_arg = dir.join("out");
    let out = bench(
        &[
            "--frames",
            "6",
            "--size",
            "160x90",
            "--count",
            "8",
            "--texture-size",
            "1024",
            "--quick",
            "--planner-textures",
            "1000",
            "--out",
            out_arg.to_str().unwrap(),
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\n{stderr}",
        out.status.code()
    );
    assert!(
        stdout.contains("| figure |"),
        "the table goes to stdout:\n{stdout}"
    );

    // Well formed: valid JSON, and it reads back as the report type.
    let text = std::fs::read_to_string(out_arg.join("bench.json")).expect("bench.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("bench.json is JSON");
    assert!(value["modes"].is_array() && value["machine"]["adapter"].is_string());
    let report: BenchReport = serde_json::from_value(value).expect("bench.json is a BenchReport");
    let modes: Vec<Option<Mode>> = report.modes.iter().map(|m| m.mode).collect();
    assert_eq!(
        modes,
        [
            Some(Mode::Rgba8),
            Some(Mode::Bc7),
            Some(Mode::Mipflow),
            Some(Mode::MipflowNoFeedback)
        ]
    );
    for m in &report.modes {
        assert_eq!(m.frames.len(), 6, "{:?}: one sample per frame", m.mode);
        assert!(
            m.frame_ms.p50 > 0.0 && m.frame_ms.p99 >= m.frame_ms.p50,
            "{:?}",
            m.frame_ms
        );
        assert!(m.time_to_first_frame_ms > m.setup_ms);
        assert!(m.peak_bytes > 0);
    }
    // (a)'s set-up uploads whole chains: wgpu's staging copy of each is charged until the GPU
    // has it, reported on its own and not in the peak that compares the modes (which is then
    // what (a) keeps: its chains and targets, less than chains plus their copies).
    let a = &report.modes[0];
    assert!(
        a.setup_staging_peak_bytes >= a.setup_uploaded_bytes,
        "{} < {}",
        a.setup_staging_peak_bytes,
        a.setup_uploaded_bytes
    );
    assert!(a.peak_bytes >= a.setup_uploaded_bytes);
    assert!(a.peak_bytes < a.setup_uploaded_bytes + a.setup_staging_peak_bytes);
    // Every frame of (b) and (c) was compared with (a); (a) is the reference.
    for m in &report.modes[1..] {
        assert!(
            m.frames
                .iter()
                .all(|f| f.psnr_db.is_some() && f.ssim.is_some())
        );
        assert_eq!(m.frames_compared, 6);
    }
    assert!(report.modes[0].frames.iter().all(|f| f.psnr_db.is_none()));
    // (c) ran under the default budget, a quarter of (b)'s texture footprint, and never passed it.
    let c = &report.modes[2];
    assert_eq!(c.budget_bytes, Some(report.scene.bc7_texture_bytes / 4));
    assert_eq!(c.frames_over_budget, 0);
    // (d), feedback off, under the same budget.
    let d = &report.modes[3];
    assert_eq!(d.budget_bytes, c.budget_bytes);
    assert_eq!(d.frames_over_budget, 0);

    // The order the bench exists to show.
    let (a, b) = (&report.modes[0], &report.modes[1]);
    assert!(
        a.peak_bytes > b.peak_bytes && b.peak_bytes > c.peak_bytes,
        "peak VRAM must be ordered a > b > c: {} / {} / {}",
        a.peak_bytes,
        b.peak_bytes,
        c.peak_bytes
    );
    assert!(a.peak_by_category.textures > b.peak_by_category.textures);
    assert!(b.peak_by_category.textures > c.peak_by_category.textures);
    // RGBA8 is 4x BC7 except in the levels smaller than a 4x4 block.
    let (rgba, bc) = (
        report.scene.rgba8_texture_bytes,
        report.scene.bc7_texture_bytes,
    );
    assert!(rgba > bc * 39 / 10 && rgba <= bc * 4, "{rgba} vs {bc}");

    // The machine-wide figures are there too.
    assert!(
        report
            .planner
            .as_ref()
            .is_some_and(|p| p.textures == 1000 && p.steady_us_mean > 0.0)
    );
    assert!(
        report
            .upload
            .as_ref()
            .is_some_and(|u| u.upload_mb_s > 0.0 && u.memcpy_mb_s > 0.0)
    );
    // With BC formats, the read paths too, from the KTX2 file on disk included.
    let u = report.upload.as_ref().expect("upload figures");
    if u.staged_read_upload_mb_s > 0.0 {
        assert!(
            u.file_read_mb_s > 0.0 && u.file_upload_mb_s > 0.0 && u.file_read_bounce_mb_s > 0.0,
            "{u:?}"
        );
    }
    assert_eq!(report.cook.len(), 3);
    assert!(
        report
            .cook
            .iter()
            .all(|c| c.mp_per_s > 0.0 && c.psnr_mean_db > 30.0)
    );

    let md = std::fs::read_to_string(out_arg.join("bench.md")).expect("bench.md");
    assert!(md.contains("| figure |") && md.contains("Command: `mipflow bench"));
    assert_eq!(
        md.contains("from the file on disk (page cache) straight into staging"),
        u.file_upload_mb_s > 0.0
    );
    let png = image::open(out_arg.join("bench.png"))
        .expect("bench.png")
        .to_rgba8();
    assert_eq!(png.dimensions(), (1400, 900));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad flags are usage errors: a message and exit 2, before any GPU work.
#[test]
fn bad_flags_exit_2() {
    let dir = out_dir("flags");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let empty_arg = empty.to_str().unwrap();
    for (args, needle) in [
        (&["--frames", "0"][..], "--frames"),
        (&["--size", "0x10"][..], "--size"),
        (&["--budget", "lots"][..], "lots"),
        (&["--quality-every", "0"][..], "--quality-every"),
        (&["--texture-size", "9"][..], "--texture-size"),
        // No level of a 1002² (or 501², 250²) chain is a multiple of the BC7 block: found
        // before the scene is cooked (it was, then the run failed, exit 1).
        (&["--texture-size", "1002"][..], "multiples of 4"),
        (&["--speed", "0"][..], "--speed"),
        (&["--speed", "NaN"][..], "--speed"),
        (&["--scenario", "nope.toml"][..], "nope.toml"),
        (
            &["--textures", "/nonexistent-mipflow-dir"][..],
            "not a folder",
        ),
        (
            &["--scenario", "a.toml", "--textures", "b"][..],
            "cannot be used with",
        ),
        (&["--textures", empty_arg][..], "no .ktx2 or .dds files"),
    ] {
        let out = bench(args, &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fly-by (`assets/flyby.toml`): 200 demo textures, 24 MiB, the camera moving 6.5
/// units a frame straight down the hall. Demand where the camera will be when a read lands, and
/// no read started for a panel that will have left by then: every frame >= 40 dB against the
/// all-resident render (18 of 36 under 40 dB before, min 34.4 dB), and almost no data read only
/// to be thrown away (56 of 189 grows' reads were cancelled after arriving before the `leaving`
/// rule; 0 after).
#[test]
fn fly_by_keeps_up_with_a_moving_camera() {
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir("flyby");
    let out_arg = dir.join("out");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/flyby.toml");
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mipflow-cache");
    let out = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args([
            "bench",
            "--scenario",
            scenario,
            "--quality-every",
            "1",
            "--quick",
        ])
        .args([
            "--planner-textures",
            "1000",
            "--out",
            out_arg.to_str().unwrap(),
        ])
        .env("MIPFLOW_CACHE", cache)
        .output()
        .expect("run mipflow");
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(out_arg.join("bench.json")).expect("bench.json");
    let report: BenchReport = serde_json::from_str(&text).expect("a BenchReport");
    assert_eq!(report.scene.textures, 200);
    for mode in [Mode::Mipflow, Mode::MipflowNoFeedback] {
        let m = report
            .modes
            .iter()
            .find(|m| m.mode == Some(mode))
            .expect("the mode ran");
        let psnr: Vec<f64> = m.frames.iter().filter_map(|f| f.psnr_db).collect();
        assert_eq!(psnr.len(), 36, "{mode:?}: every frame compared");
        let under: Vec<(usize, f64)> = psnr
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, p)| p < 40.0)
            .collect();
        assert!(under.is_empty(), "{mode:?}: frames under 40 dB: {under:?}");
        assert_eq!(m.frames_over_budget, 0, "{mode:?}");
        // It really streamed as the camera moved (not everything resident from the prefetch).
        assert!(m.grows >= 100, "{mode:?}: {} grows", m.grows);
        assert!(
            m.cancels_after_arrival * 20 < m.grows,
            "{mode:?}: {} of {} grows cancelled after their data arrived",
            m.cancels_after_arrival,
            m.grows
        );
        // The blur figure is there and falls to 0 once the camera stops at the end.
        let last = m.frames.last().unwrap();
        assert!(last.blur_pixel_octaves < 1.0, "{mode:?}: {last:?}");
    }
}

/// A gallery of photos that are not square, nor sized in whole blocks and levels (`chelsea.png`
/// is 451x300, cooked as 448x320 with `mipflowSourceSize` 451x300), one stored bottom row
/// first (`KTXorientation` "ru"), one in BC1 and an HDR one in BC6H: each panel keeps the
/// image's shape and orientation whichever way its texture is loaded, and the uncompressed
/// baseline decodes each file's own format (it decoded every file as BC7: (b) and (c) at
/// 14.7 dB against it; and BC6H clamped to 8 bits: 27.5 dB), so the streamed modes match the
/// all-resident render. The resident
/// modes (`add_resident_texture` keeps no KTX2 metadata) drew the photos at the cooked size's
/// shape and the "ru" file unflipped, the streamed ones at the source's shape and flipped: 22 of
/// 30 frames under 40 dB (min 34.4 dB) with a budget far above what the view wants, from the
/// shapes alone.
#[test]
fn a_gallery_of_photos_that_are_not_square_matches_the_resident_render() {
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir("gallery");
    let photos = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/photos");
    let gallery = dir.join("gallery");
    let cook = |args: &[String]| {
        let cooked = Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .arg("cook")
            .args(args)
            .arg("--out")
            .arg(&gallery)
            .output()
            .expect("run mipflow cook");
        assert!(
            cooked.status.success(),
            "{}",
            String::from_utf8_lossy(&cooked.stderr)
        );
    };
    cook(&[
        format!("{photos}/chelsea.png"),
        format!("{photos}/coffee.png"),
    ]);
    // And one in BC1, and an HDR image (values up to 4) in BC6H: the uncompressed baseline
    // decodes each file's own format (BC6H to RGBA16F).
    cook(&[
        format!("{photos}/brick.png"),
        "--format".into(),
        "bc1".into(),
    ]);
    let hdr = dir.join("glow.hdr");
    image::DynamicImage::ImageRgb32F(image::Rgb32FImage::from_fn(128, 128, |x, y| {
        image::Rgb([x as f32 / 32.0, y as f32 / 32.0, 0.5])
    }))
    .save(&hdr)
    .expect("write the HDR image");
    cook(&[hdr.to_str().unwrap().to_owned()]);
    // The coffee photo again, its rows declared bottom first: drawn upside down, in every mode.
    let coffee = mipflow::TextureSource::path(gallery.join("coffee.ktx2"));
    let (info, levels) = coffee
        .read_all(&mipflow::ktx2::ReadLimits::default())
        .expect("read the cooked file");
    let mut key_values: Vec<(String, Vec<u8>)> = info
        .key_values
        .iter()
        .filter(|(k, _)| k.starts_with("mipflow"))
        .cloned()
        .collect();
    key_values.push(("KTXorientation".into(), b"ru\0".to_vec()));
    let flipped = mipflow::ktx2::EncodedTexture {
        format: info.format,
        width: info.width,
        height: info.height,
        levels,
        key_values,
    };
    let mut bytes = Vec::new();
    mipflow::ktx2::write_ktx2(&mut bytes, &flipped, None, "test").expect("write");
    std::fs::write(gallery.join("coffee_ru.ktx2"), bytes).expect("write the file");
    let gallery_bench = |out: &std::path::Path, more: &[&str]| -> BenchReport {
        let mut args = vec![
            "--textures",
            gallery.to_str().unwrap(),
            "--size",
            "320x180",
            "--quick",
            "--planner-textures",
            "1000",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let run = bench(&args, &dir);
        assert!(
            run.status.success(),
            "exit {:?}\n{}",
            run.status.code(),
            String::from_utf8_lossy(&run.stderr)
        );
        let text = std::fs::read_to_string(out.join("bench.json")).expect("bench.json");
        serde_json::from_str(&text).expect("a BenchReport")
    };
    let report = gallery_bench(&dir.join("out"), &["--frames", "30", "--budget", "64MiB"]);
    assert_eq!(report.scene.textures, 5);
    for m in &report.modes[1..] {
        assert_eq!(m.frames_compared, 30, "{:?}", m.mode);
        let min = m.psnr_min_db.expect("compared");
        assert_eq!(m.frames_under_40db, 0, "{:?}: min {min} dB", m.mode);
        assert!(min > 50.0, "{:?}: min {min} dB", m.mode);
    }
    // Under the default budget (a quarter of (b)'s textures, 0.1 MiB here) the render targets
    // alone do not fit: the report says so and what would.
    let small = dir.join("small");
    let report = gallery_bench(&small, &["--frames", "3"]);
    let c = &report.modes[2];
    assert_eq!(c.budget_too_small_frames, 3);
    assert!(c.floor_bytes_max > c.budget_bytes.unwrap(), "{c:?}");
    let md = std::fs::read_to_string(small.join("bench.md")).expect("bench.md");
    assert!(md.contains("pass a larger --budget"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A part of the bench that fails after the set-up (here (c)'s fourth frame, as a device error
/// would) loses nothing measured before it: bench.json, bench.md and bench.png are written with
/// every mode's frames up to the failure and the micro-benchmarks, the failure is in `errors`,
/// and the command exits 1. It wrote nothing before.
#[test]
fn a_failure_mid_run_keeps_what_was_measured() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: mipflow_cli::bench::BenchArgs,
    }
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir("partial");
    let out_arg = dir.join("out");
    std::fs::create_dir_all(&out_arg).unwrap();
    let cli = Cli::parse_from([
        "bench",
        "--frames",
        "6",
        "--size",
        "160x90",
        "--count",
        "4",
        "--texture-size",
        "256",
        "--quick",
        "--planner-textures",
        "1000",
        "--out",
        out_arg.to_str().unwrap(),
    ]);
    let mut opts = mipflow_cli::bench::BenchOptions::from_args(&cli.bench).unwrap();
    opts.cache = Some(dir.join("cache"));
    opts.fail_at_frame = Some(3);
    let code = mipflow_cli::bench::run_into(&opts, &out_arg);
    assert_eq!(code, std::process::ExitCode::from(1));
    let text = std::fs::read_to_string(out_arg.join("bench.json")).expect("bench.json written");
    let report: BenchReport = serde_json::from_str(&text).expect("a BenchReport");
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert!(report.errors[0].contains("frame 3"), "{:?}", report.errors);
    let frames: Vec<usize> = report.modes.iter().map(|m| m.frames.len()).collect();
    assert_eq!(
        frames,
        [4, 4, 3, 3],
        "(a) and (b) ran frame 3, (c) failed it"
    );
    assert!(report.planner.is_some() && !report.cook.is_empty());
    assert!(
        report.goals.iter().all(|g| g.met.is_none()),
        "no goal judged"
    );
    let md = std::fs::read_to_string(out_arg.join("bench.md")).expect("bench.md");
    assert!(md.contains("incomplete") && md.contains("frame 3"), "{md}");
    assert!(out_arg.join("bench.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--out` files that exist and are not regular files, and an `--out` folder inside the run's
/// texture folder, are refused before the run (exit 2), each left as it was.
#[test]
fn outputs_that_would_clobber_links_pipes_or_inputs_are_refused() {
    let dir = out_dir("clobber");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let target = dir.join("kept.json");
    std::fs::write(&target, b"kept").unwrap();
    std::os::unix::fs::symlink(&target, out.join("bench.json")).unwrap();
    let o = bench(&["--out", out.to_str().unwrap()], &dir);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(std::fs::read(&target).unwrap(), b"kept");
    assert!(
        std::fs::symlink_metadata(out.join("bench.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    let fifo_out = dir.join("fifo-out");
    std::fs::create_dir_all(&fifo_out).unwrap();
    let made = Command::new("mkfifo")
        .arg(fifo_out.join("bench.md"))
        .status();
    if made.is_ok_and(|s| s.success()) {
        let o = bench(&["--out", fifo_out.to_str().unwrap()], &dir);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }

    let gallery = dir.join("gal");
    std::fs::create_dir_all(&gallery).unwrap();
    std::fs::write(gallery.join("t0.ktx2"), b"not really a texture").unwrap();
    let inside = gallery.join("results");
    let o = bench(
        &[
            "--textures",
            gallery.to_str().unwrap(),
            "--out",
            inside.to_str().unwrap(),
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("texture folder"), "{stderr}");
    assert!(!inside.exists(), "nothing made in the input folder");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario whose floor is one tiled texture adds (e), the floor streamed tile by tile, beside
/// (a) to (d) drawing it as a texture like the others: compared with (a) on every frame, within
/// its budget, its VRAM below (a)'s (a scene this small does not hold enough for tiles to beat
/// (b)'s BC7 chains: its tile cache alone is most of it).
#[test]
fn a_scene_with_a_tiled_floor_adds_the_tiles_mode() {
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir("tiles");
    let scenario = dir.join("tiles.toml");
    std::fs::write(
        &scenario,
        "frames = 8\nsize = [160, 90]\nanisotropy = 1\n[scene]\nkind = \"demo\"\ncount = 6\n\
         texture_size = 256\nfloor_tiles = 1024\n[[budget]]\nframe = 0\nbytes = \"24MiB\"\n\
         [[camera]]\nframe = 0\nposition = [0.3, 0.9, 2.0]\nlook_at = [0.0, 0.4, -8.0]\n",
    )
    .unwrap();
    let out_arg = dir.join("out");
    let out = bench(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--quick",
            "--planner-textures",
            "1000",
            "--out",
            out_arg.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(out_arg.join("bench.json")).expect("bench.json");
    let report: BenchReport = serde_json::from_str(&text).expect("a BenchReport");
    let modes: Vec<Option<Mode>> = report.modes.iter().map(|m| m.mode).collect();
    assert_eq!(modes.last(), Some(&Some(Mode::Tiles)), "{modes:?}");
    let (a, e) = (&report.modes[0], &report.modes[4]);
    assert_eq!(e.frames.len(), 8);
    assert_eq!(e.frames_over_budget, 0);
    assert!(
        e.frames.iter().all(|f| f.psnr_db.is_some()),
        "compared with (a)"
    );
    assert!(
        e.peak_bytes < a.peak_bytes,
        "{} >= {}",
        e.peak_bytes,
        a.peak_bytes
    );
    let md = std::fs::read_to_string(out_arg.join("bench.md")).unwrap();
    assert!(md.contains("(e) mipflow, floor as tiles"), "{md}");
}
