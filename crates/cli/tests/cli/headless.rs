//! `mipflow headless` on the scenarios in tests/scenarios/: verdicts, exit codes, and each report
//! checked against the ledger's figures.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use mipflow_cli::headless::Report;

struct Run {
    code: i32,
    stderr: String,
    report: Option<Report>,
    plot: PathBuf,
}

fn out_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("mipflow-headless-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(name: &str, args: &[&str]) -> Option<Run> {
    // The runner needs an adapter; `common::gpu` says so loudly (or fails under CI) when none.
    common::gpu()?;
    let dir = out_dir();
    let report = dir.join(format!("{name}.json"));
    let plot = dir.join(format!("{name}.png"));
    let out = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .arg("headless")
        .args(args)
        .arg("--report")
        .arg(&report)
        .arg("--plot")
        .arg(&plot)
        .env("MIPFLOW_CACHE", dir.join("cache"))
        .output()
        .expect("run mipflow");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = std::fs::read_to_string(&report)
        .ok()
        .map(|j| serde_json::from_str(&j).expect("the report parses"));
    Some(Run {
        code: out.status.code().unwrap_or(-1),
        stderr,
        report,
        plot,
    })
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios")
        .join(format!("{name}.toml"))
        .display()
        .to_string()
}

/// Checks a report against itself and the ledger's figures: the peak is the highest frame total,
/// violations count the frames over their budget, every frame's categories add up to at most its
/// peak total.
fn check_consistent(r: &Report) {
    assert!(!r.frames.is_empty());
    assert_eq!(
        r.peak_bytes,
        r.frames.iter().map(|f| f.total_bytes).max().unwrap()
    );
    assert_eq!(
        r.violations,
        r.frames
            .iter()
            .filter(|f| f.total_bytes > f.budget_bytes)
            .count() as u64
    );
    for f in &r.frames {
        let c = &f.by_category;
        let sum = c.textures + c.render_targets + c.buffers + c.staging + c.overlay + c.other;
        assert!(
            sum <= f.total_bytes,
            "frame {}: categories {sum} > peak {}",
            f.frame,
            f.total_bytes
        );
        assert!(
            c.textures > 0 || r.budget_too_small,
            "frame {}: no textures",
            f.frame
        );
        assert!(f.render_scale >= 0.5 && f.render_scale <= 1.0);
        assert!(f.budget_bytes <= r.budget_bytes_max, "frame {}", f.frame);
    }
    assert!(
        r.frames
            .iter()
            .any(|f| f.budget_bytes == r.budget_bytes_max),
        "budget_bytes_max {} is no frame's budget",
        r.budget_bytes_max
    );
    assert!(r.adapter.len() > 3);
    // Where the budget came from, and the source of the adapter's memory figures (Mesa 22's
    // lavapipe has no VK_EXT_memory_budget: its heap size).
    assert!(
        (r.budget_source.starts_with("the scenario's schedule")
            || r.budget_source.starts_with("--budget"))
            && r.budget_source.contains("the adapter's memory:"),
        "{}",
        r.budget_source
    );
    assert!(
        r.budget_source.contains("VK_EXT_memory_budget")
            || r.budget_source.contains("device-local heap size"),
        "{}",
        r.budget_source
    );
}

/// A schedule whose first key comes after frame 0: the frames before run under the default 256
/// MiB, and `budget_bytes_max` says so (it was the keys' highest, 64 MiB, below a budget in
/// force: "peak 150 MiB within budget 64 MiB" could pass).
#[test]
fn budget_bytes_max_is_the_highest_budget_in_force() {
    let dir = out_dir();
    let path = dir.join("late_budget.toml");
    std::fs::write(
        &path,
        "frames = 6\nsize = [160, 90]\n[scene]\nkind = \"grid\"\ncount = 8\ntexture_size = 64\n\
         [[budget]]\nframe = 3\nbytes = \"64MiB\"\n",
    )
    .unwrap();
    let Some(run) = run("late_budget", &["--scenario", &path.display().to_string()]) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert_eq!(r.budget_bytes_max, 256 << 20);
    assert_eq!(r.frames[3].budget_bytes, 64 << 20);
}

#[test]
fn steady_passes_and_is_deterministic() {
    let Some(a) = run("steady", &["--scenario", &scenario("steady")]) else {
        return;
    };
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert!(a.stderr.contains("verdict: PASS"), "{}", a.stderr);
    let ra = a.report.expect("report");
    check_consistent(&ra);
    assert_eq!(ra.violations, 0);
    assert!(ra.peak_bytes <= ra.budget_bytes_max);
    assert_eq!(ra.frames.len(), 90);
    assert_eq!(ra.verdict, "pass");
    // Steady: the scale never changes, and the last 30 frames upload nothing.
    assert!(ra.frames.iter().all(|f| f.render_scale == 1.0));
    assert!(ra.frames[60..].iter().all(|f| f.uploaded_bytes == 0));
    assert!(image::open(&a.plot).is_ok(), "the plot is a PNG");
    // Reads straight into upload staging, counted among the reads.
    assert!(ra.frames.iter().all(|f| f.staged_reads <= f.io_requests));
    let staged: u32 = ra.frames.iter().map(|f| f.staged_reads).sum();
    assert!(staged > 0, "no read went straight into staging");
    // GPU feedback in the report: its latency (never 0: no frame waits for its own) and the
    // pixels it covers.
    assert!(
        ra.frames[30..]
            .iter()
            .all(|f| f.feedback_latency_frames.is_some_and(|l| l >= 1) && f.feedback_pixels > 0.0),
        "{:?}",
        ra.frames.last()
    );
    // What it copied back: the slots drawn, gathered (the count, then 68 bytes a slot the
    // readback holds: never more than the slots registered, rounded up to a power of two).
    let most = ra.textures.max(16).next_power_of_two();
    assert!(
        ra.frames.iter().all(|f| f.feedback_readback_bytes >= 4
            && (f.feedback_readback_bytes - 4) % 68 == 0
            && (f.feedback_readback_bytes - 4) / 68 <= most),
        "{:?}",
        ra.frames
            .iter()
            .map(|f| f.feedback_readback_bytes)
            .collect::<Vec<_>>()
    );

    // The same scenario twice gives the same report, timings and the process's memory aside.
    let b = run("steady2", &["--scenario", &scenario("steady")]).unwrap();
    let mut rb = b.report.unwrap();
    let mut ra = ra;
    for r in [&mut ra, &mut rb] {
        r.mean_frame_ms = 0.0;
        r.scenario.clear();
        r.peak_rss_bytes = None;
        for f in &mut r.frames {
            f.frame_ms = 0.0;
            f.planner_us = 0.0;
            f.rss_bytes = None;
        }
    }
    assert_eq!(ra, rb);
}

/// Runs a `budget_drop` scenario (the budget is `low` bytes over frames 40..100) and checks that
/// it passed and that every frame of the drop, the first included, stayed within `low`.
fn budget_drop_run(name: &str, low: u64) -> Option<Report> {
    let run = run(name, &["--scenario", &scenario(name)])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert_eq!(r.violations, 0);
    for f in &r.frames[40..100] {
        assert_eq!(f.budget_bytes, low);
        assert!(f.total_bytes <= low, "frame {}: {}", f.frame, f.total_bytes);
    }
    Some(r)
}

#[test]
fn budget_drop_lowers_scale_at_once_and_recovers() {
    let Some(r) = budget_drop_run("budget_drop", 800 * 1024) else {
        return;
    };
    assert_eq!(r.frames[39].render_scale, 1.0);
    assert!(
        r.frames[40].render_scale < 1.0,
        "the scale drops in the frame the budget does"
    );
    assert_eq!(r.frames[159].render_scale, 1.0, "and comes back");
}

/// A budget drop that the native targets still fit: no lower scale, and no frame over the new
/// budget, including the frame it falls in, where the staging ring shrinking to the new headroom
/// alone brings the total under it.
#[test]
fn budget_drop_met_without_a_lower_scale_stays_within_it() {
    let Some(r) = budget_drop_run("budget_drop_no_rescale", 1100 * 1024) else {
        return;
    };
    assert!(r.frames.iter().all(|f| f.render_scale == 1.0));
}

#[test]
fn below_floor_fails_with_a_clear_message() {
    let Some(run) = run("below_floor", &["--scenario", &scenario("below_floor")]) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("below the floor"), "{}", run.stderr);
    assert!(run.stderr.contains("verdict: FAIL"));
    let r = run.report.unwrap();
    check_consistent(&r);
    assert!(r.budget_too_small);
    assert_eq!(r.verdict, "fail");
    // The render targets and the output cannot go below their minimum: every frame is over.
    assert_eq!(r.violations, 30);
    // Degraded, not crashed: all 30 frames were rendered, textures evicted to fit what they can.
    assert_eq!(r.frames.len(), 30);
}

/// A budget below even one texture's floor (`--budget 0`): the scene still registers, the run
/// degrades and reports, as for any budget below the floors (not a set-up error without a report).
#[test]
fn a_zero_budget_degrades_with_a_report() {
    let Some(run) = run(
        "zero_budget",
        &[
            "--scenario",
            &scenario("below_floor"),
            "--budget",
            "0",
            "--frames",
            "4",
        ],
    ) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("below the floor"), "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert!(r.budget_too_small);
    assert_eq!(r.textures, 24);
    assert_eq!(r.frames.len(), 4);
    assert_eq!(r.violations, 4);
    assert!(r.frames.iter().all(|f| f.budget_bytes == 0));
    assert!(run.plot.exists());
}

/// A frame that cannot be rendered mid-run (a lost device) ends the run but keeps its work: the
/// frames before it are in the report, and the verdict fails naming the frame.
#[test]
fn a_render_error_mid_run_keeps_the_report() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let opts = mipflow_cli::headless::RunOptions {
        scenario: mipflow_cli::headless::Scenario::load(Path::new(&scenario("steady"))).unwrap(),
        name: "steady".into(),
        frames: Some(6),
        size: Some((160, 90)),
        fail_at_frame: Some(4),
        ..Default::default()
    };
    let r = mipflow_cli::headless::run(ctx, &opts).unwrap();
    assert_eq!(r.frames.len(), 4);
    assert_eq!(r.verdict, "fail");
    assert!(
        r.failures
            .iter()
            .any(|f| f.contains("frame 4 could not be rendered") && f.contains("injected")),
        "{:?}",
        r.failures
    );
    check_consistent(&r);
}

#[test]
fn camera_cut_streams_the_new_view_within_budget() {
    let Some(run) = run("camera_cut", &["--scenario", &scenario("camera_cut")]) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert_eq!(r.violations, 0);
    // The cut changes what is wanted...
    assert_ne!(r.frames[59].wanted_mip_bytes, r.frames[60].wanted_mip_bytes);
    // ...and the new view streams in after it.
    assert!(r.frames[60..].iter().any(|f| f.uploaded_bytes > 0));
    let last = r.frames.last().unwrap();
    assert_eq!(last.resident_mip_bytes, last.wanted_mip_bytes);
}

#[test]
fn thousands_of_small_textures() {
    let Some(run) = run("many", &["--scenario", &scenario("many_textures")]) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert_eq!(r.textures, 2000);
    assert_eq!(r.violations, 0);
}

#[test]
fn flags_override_the_scenario_and_bad_input_exits_2() {
    // --budget below the floor overrides the scenario's 64 MiB: now it fails.
    let Some(run1) = run(
        "override",
        &[
            "--scenario",
            &scenario("steady"),
            "--budget",
            "100KiB",
            "--frames",
            "5",
            "--size",
            "160x90",
        ],
    ) else {
        return;
    };
    assert_eq!(run1.code, 1, "{}", run1.stderr);
    let r = run1.report.unwrap();
    assert_eq!(r.frames.len(), 5);
    assert_eq!(r.size, [160, 90]);
    assert_eq!(r.budget_bytes_max, 100 * 1024);
    // A folder of images (which the demo cooks on the fly): the error says how to show them.
    let photos = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/photos");
    let r = run("images", &["--textures", photos, "--frames", "2"]).unwrap();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("image file(s)") && r.stderr.contains("mipflow cook"),
        "{}",
        r.stderr
    );
    for args in [
        vec!["--scenario", "/nonexistent/scenario.toml"],
        vec!["--size", "wide"],
        vec!["--budget", "lots"],
        vec!["--textures", "/nonexistent-dir", "--frames", "2"],
        // Refused, not coerced or left to abort on a huge reservation.
        vec!["--frames", "0"],
        vec!["--frames", "1000000000000"],
    ] {
        let r = run("bad", &args).unwrap();
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("verdict: ERROR"), "{}", r.stderr);
    }
    // A report that could never be written is found before the run, not after it.
    let t0 = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args([
            "headless",
            "--frames",
            "600",
            "--report",
            "/nonexistent-dir/r.json",
        ])
        .output()
        .expect("run mipflow");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("verdict: ERROR"),
        "{stderr}"
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "refused before rendering"
    );
    // So is a plot whose name says no image format the plot writer knows.
    let txt = out_dir().join("plot.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args(["headless", "--frames", "600", "--plot"])
        .arg(&txt)
        .output()
        .expect("run mipflow");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(".png") && stderr.contains("verdict: ERROR"),
        "{stderr}"
    );
    assert!(!txt.exists());
    // The demo's screenshot too: refused before a window is asked for (no display here, so
    // only the path check can answer "cannot write").
    let out = demo_without_display("/nonexistent-dir/shot.png".as_ref());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--screenshot") && stderr.contains("cannot write"),
        "{stderr}"
    );
    // A screenshot name that is not a PNG: refused before the run, not after it.
    let jpg = out_dir().join("shot.jpg");
    let out = demo_without_display(&jpg);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("must end in .png"), "{stderr}");
    assert!(!jpg.exists());
    // A screenshot name that is a link (to /dev/null here) or ends in '/': refused, the link kept.
    let link = out_dir().join("shot-link.png");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    for (shot, says) in [
        (link.clone(), "symbolic link"),
        ("shots/".into(), "ends in '/'"),
    ] {
        let out = demo_without_display(&shot);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// The tour's story (`assets/tour.toml`, what the demo's `--tour` plays): from the report's frame
/// stats, the render scale goes below 1 in the squeeze and comes back to 1 after the release;
/// textures are evicted in the squeeze and streamed back after it; the events name the budget
/// and scale changes; each act has its caption; the plot is written.
#[test]
fn the_tour_story_squeezes_and_releases() {
    let tour = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/tour.toml");
    let Some(_) = common::gpu() else { return };
    let dir = out_dir();
    let (report, plot) = (dir.join("tour.json"), dir.join("tour.png"));
    // The demo scene (200 textures) cooked once into a cache the demo's story test shares.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mipflow-cache");
    let out = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .arg("headless")
        .arg("--scenario")
        .arg(&tour)
        .arg("--report")
        .arg(&report)
        .arg("--plot")
        .arg(&plot)
        .env("MIPFLOW_CACHE", cache)
        .output()
        .expect("run mipflow");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: Report = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    check_consistent(&r);
    assert_eq!(r.violations, 0);
    let f = &r.frames;
    assert_eq!(f.len(), 600);
    let min_in = |a: usize, b: usize| {
        f[a..b]
            .iter()
            .map(|x| x.render_scale)
            .fold(1.0f64, f64::min)
    };
    let sum = |a: usize, b: usize, g: &dyn Fn(&mipflow_cli::headless::FrameRecord) -> u64| {
        f[a..b].iter().map(g).sum::<u64>()
    };
    assert_eq!(
        f[149].render_scale, 1.0,
        "the pressed default holds full resolution"
    );
    assert!(min_in(300, 450) < 0.75, "the squeeze lowers the scale");
    assert_eq!(f[599].render_scale, 1.0, "and the release brings it back");
    assert!(
        sum(150, 450, &|x| u64::from(x.evictions)) > 50,
        "levels given up in the squeeze"
    );
    assert!(sum(150, 450, &|x| x.freed_bytes) > 4 << 20);
    assert!(
        sum(450, 600, &|x| u64::from(x.grows)) > 50,
        "streamed back after the release"
    );
    assert!(
        f[599].resident_mip_bytes * 10 >= f[599].wanted_mip_bytes * 9,
        "the view's levels are back: {} of {}",
        f[599].resident_mip_bytes,
        f[599].wanted_mip_bytes
    );
    // Events: the three budget changes, the scale going down and coming up with their reasons.
    let budgets: Vec<u64> = r
        .events
        .iter()
        .filter(|e| e.kind == "budget")
        .map(|e| e.frame)
        .collect();
    assert_eq!(budgets, vec![150, 300, 450], "{:?}", r.events);
    let scales: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e.kind == "scale")
        .map(|e| e.text.as_str())
        .collect();
    assert!(
        scales
            .iter()
            .any(|t| t.contains("frees") && t.contains("could not hold")),
        "{scales:?}"
    );
    assert!(
        scales
            .iter()
            .any(|t| t.contains("-> 1.00") && t.contains("memory came back")),
        "{scales:?}"
    );
    assert!(r.events.iter().any(|e| e.kind == "evictions"));
    assert!(r.events.iter().any(|e| e.kind == "restreams"));
    // The acts and their captions.
    assert_eq!(r.acts.len(), 4);
    assert!(
        r.acts[2]
            .caption
            .starts_with("budget 11.0 -> 3.0 MiB: scale"),
        "{:?}",
        r.acts[2]
    );
    assert!(r.acts[2].render_scale_min < 1.0 && r.acts[2].drops > 0);
    assert!(r.acts[3].render_scale_end == 1.0 && r.acts[3].grows > 0);
    assert!(std::fs::metadata(&plot).unwrap().len() > 10_000);
}

/// Writes a `size`² BC7 KTX2 file with a full chain of arbitrary blocks, zstd-supercompressed,
/// and returns its bytes.
fn zstd_texture(size: u32, seed: u32) -> Vec<u8> {
    let levels = mipflow::low_level::full_mip_count(size, size);
    let tex = mipflow::ktx2::EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: size,
        height: size,
        levels: (0..levels)
            .map(|l| {
                let s = (size >> l).max(1);
                let n = (s.div_ceil(4) * s.div_ceil(4) * 16) as usize;
                (0..n)
                    .map(|k| (k as u32 ^ seed.wrapping_mul(2_654_435_761)) as u8)
                    .collect()
            })
            .collect(),
        key_values: Vec::new(),
    };
    let mut out = Vec::new();
    mipflow::ktx2::write_ktx2(&mut out, &tex, Some(3), "test").unwrap();
    out
}

/// What went wrong with textures is in the report and the verdict, not only in log
/// lines. A gallery with a good file, a file that is not a KTX2 (skipped at registration) and
/// a file whose level 2 cannot be decompressed (unreadable while streaming): exit 1, both named
/// with their reasons, and `all_wanted_resident` fails while the view wants the level that
/// cannot be read.
#[test]
fn skipped_and_unreadable_textures_are_in_the_report_and_fail_the_verdict() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gallery = dir.path().join("gallery");
    std::fs::create_dir_all(&gallery).unwrap();
    std::fs::write(gallery.join("a_good.ktx2"), zstd_texture(256, 1)).unwrap();
    std::fs::write(gallery.join("b_not_ktx2.ktx2"), b"this is not a KTX2 file").unwrap();
    // Level 2's data (from the level index: 80 bytes of header, then 24 bytes per level):
    // its zstd frame header overwritten, so that it fails to decompress.
    let mut bad = zstd_texture(256, 2);
    let at = 80 + 2 * 24;
    let offset = u64::from_le_bytes(bad[at..at + 8].try_into().unwrap()) as usize;
    for b in &mut bad[offset..offset + 16] {
        *b = 0xA5;
    }
    std::fs::write(gallery.join("c_corrupt_level.ktx2"), bad).unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        "frames = 40\nsize = [320, 180]\nanisotropy = 1\n[scene]\nkind = \"gallery\"\n\
         textures = \"gallery\"\n[[camera]]\nframe = 0\nposition = [0.0, 1.6, 1.0]\n\
         look_at = [0.0, 1.5, -6.0]\n[[budget]]\nframe = 0\nbytes = \"64MiB\"\n\
         [[expect]]\nframe = 39\nall_wanted_resident = true\n",
    )
    .unwrap();
    let Some(run) = run(
        "textures_wrong",
        &["--scenario", &scenario.display().to_string()],
    ) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    let r = run.report.unwrap();
    assert_eq!(
        r.textures, 2,
        "the good and the corrupt one are in the scene"
    );
    assert_eq!(r.skipped_textures.len(), 1, "{:?}", r.skipped_textures);
    assert!(r.skipped_textures[0].path.ends_with("b_not_ktx2.ktx2"));
    assert!(!r.skipped_textures[0].reason.is_empty());
    // The reason does not say the path again (the verdict names the file beside it).
    assert!(
        !r.skipped_textures[0].reason.contains("b_not_ktx2"),
        "{:?}",
        r.skipped_textures[0]
    );
    assert_eq!(
        r.unreadable_textures.len(),
        1,
        "{:?}",
        r.unreadable_textures
    );
    let u = &r.unreadable_textures[0];
    assert!(u.label.contains("c_corrupt_level"), "{u:?}");
    assert!(u.reason.contains("level 2"), "{u:?}");
    assert!(r.frames[39].unreadable_wanted > 0);
    let failures = r.failures.join("\n");
    assert!(failures.contains("skipped at registration"), "{failures}");
    assert!(failures.contains("cannot be read"), "{failures}");
    assert!(
        failures.contains("frame 39: 1 texture(s) want levels that cannot be read"),
        "{failures}"
    );
    assert!(run.stderr.contains("verdict: FAIL"), "{}", run.stderr);
}

/// The soak (ignored: minutes, not for CI's default run; `cargo test --release -p
/// mipflow-cli --test cli -- --ignored soak --nocapture`): 50,000 frames of the demo's tour (a
/// moving camera, one lap per 2,000 frames) with the budget changing every 500 frames, the
/// process's RSS and the ledger sampled. Prints both curves' start, max and end; asserts no
/// growth beyond the report itself (RSS at the end within 64 MiB of its value at frame 5,000,
/// once the scene and the caches are warm) and no frame over budget.
#[test]
#[ignore]
fn soak() {
    if common::gpu().is_none() {
        return;
    }
    let frames = 50_000u64;
    let mut toml = format!(
        "frames = {frames}\nsize = [320, 180]\nanisotropy = 1\ntour_frames = 2000\n\
         [scene]\nkind = \"demo\"\nseed = 4\ncount = 48\ntexture_size = 512\n"
    );
    for (i, f) in (0..frames).step_by(500).enumerate() {
        let mib = [24, 6, 12, 4, 16, 8][i % 6];
        toml.push_str(&format!("[[budget]]\nframe = {f}\nbytes = \"{mib}MiB\"\n"));
    }
    let dir = out_dir();
    let path = dir.join("soak.toml");
    std::fs::write(&path, toml).unwrap();
    let Some(run) = run("soak", &["--scenario", &path.display().to_string()]) else {
        return;
    };
    let r = run.report.expect("a report");
    assert_eq!(r.frames.len() as u64, frames, "{}", run.stderr);
    let rss: Vec<(u64, u64)> = r
        .frames
        .iter()
        .filter_map(|f| f.rss_bytes.map(|b| (f.frame, b)))
        .collect();
    let ledger: Vec<u64> = r.frames.iter().map(|f| f.total_bytes).collect();
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let (r0, rmax, rend) = (
        rss[0].1,
        rss.iter().map(|x| x.1).max().unwrap(),
        rss.last().unwrap().1,
    );
    let warm = rss.iter().find(|x| x.0 >= 5_000).unwrap().1;
    eprintln!(
        "soak: {frames} frames, {:.2} ms/frame; RSS start {:.1} MiB, at 5k {:.1}, max {:.1}, end {:.1}; \
         ledger start {:.2} MiB, max {:.2}, end {:.2}; {} violations",
        r.mean_frame_ms,
        mib(r0),
        mib(warm),
        mib(rmax),
        mib(rend),
        mib(ledger[0]),
        mib(*ledger.iter().max().unwrap()),
        mib(*ledger.last().unwrap()),
        r.violations
    );
    assert_eq!(r.violations, 0);
    assert!(
        rend < warm + (64 << 20),
        "RSS grew: {} -> {}",
        mib(warm),
        mib(rend)
    );
}

/// `mipflow demo --screenshot <shot>` with no display to open a window on.
fn demo_without_display(shot: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args(["demo", "--screenshot"])
        .arg(shot)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run mipflow demo")
}

/// A reader that closes the pipe early (`mipflow headless --monitor 2>&1 | head`): the run goes
/// on and writes its report, and the exit is the verdict's (before: the monitor's next line
/// panicked, exit 101, no report).
#[test]
fn a_closed_stderr_pipe_keeps_the_report() {
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir();
    let report = dir.join("closed_pipe.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args([
            "headless",
            "--monitor",
            "--frames",
            "30",
            "--size",
            "160x90",
        ])
        .arg("--report")
        .arg(&report)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mipflow");
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().expect("wait");
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    let r: Report = serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
        .expect("a report");
    assert_eq!(r.frames.len(), 30);
}

/// `--monitor` prints each event once, when it is final: every line says what the report's
/// event says (a scale change or a wave with its whole size; before, a line was printed when
/// the event started and showed its first frame's figures), in order, none twice.
#[test]
fn monitor_events_are_printed_final() {
    // A walk down the hall: textures stream in over most of the run, one wave.
    let path = out_dir().join("monitor_walk.toml");
    std::fs::write(
        &path,
        "frames = 60\nsize = [320, 180]\nanisotropy = 1\n[scene]\nkind = \"demo\"\nseed = 3\n\
         count = 24\ntexture_size = 256\n[[camera]]\nframe = 0\nposition = [0.0, 1.6, 2.0]\n\
         look_at = [0.0, 1.5, -6.0]\n[[camera]]\nframe = 59\nposition = [0.0, 1.6, -20.0]\n\
         look_at = [0.0, 1.5, -28.0]\n",
    )
    .unwrap();
    let Some(run) = run(
        "monitor_events",
        &["--scenario", &path.display().to_string(), "--monitor"],
    ) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    let printed: Vec<(u64, String)> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("event  "))
        .filter_map(|l| {
            let (frame, text) = l.split_once(" | ")?;
            Some((frame.trim().parse().ok()?, text.to_owned()))
        })
        .collect();
    let reported: Vec<(u64, String)> = r.events.iter().map(|e| (e.frame, e.text.clone())).collect();
    assert!(
        r.events.iter().any(|e| e.last_frame > e.frame),
        "the scenario has an event that grows over frames: {reported:?}"
    );
    assert_eq!(printed, reported, "{}", run.stderr);
}

/// Output targets refused before the run (exit 2), each left as it was: a device node's stand-ins
/// (a FIFO, and a symbolic link to `/dev/null`, both in a temporary folder: the real `/dev` is
/// never a target here), a folder, a name ending in '/', the run's own scenario, a file in the
/// run's texture folder, and the report and the plot naming one file.
#[test]
fn outputs_that_would_clobber_devices_inputs_or_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, "frames = 2\nsize = [64, 64]\n").unwrap();
    let gallery = d.join("gal");
    std::fs::create_dir(&gallery).unwrap();
    std::fs::write(gallery.join("t0.ktx2"), b"not really a texture").unwrap();
    let fifo = d.join("pipe.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let link = d.join("null.json");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let headless = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .arg("headless")
            .args(args)
            .output()
            .expect("run mipflow")
    };
    let s = scenario.as_os_str();
    let mut cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        (
            vec![
                "--scenario".as_ref(),
                s,
                "--report".as_ref(),
                link.as_os_str(),
            ],
            "symbolic link",
        ),
        (
            vec!["--scenario".as_ref(), s, "--report".as_ref(), d.as_os_str()],
            "not a regular file",
        ),
        (
            vec![
                "--scenario".as_ref(),
                s,
                "--report".as_ref(),
                "nodir/".as_ref(),
            ],
            "ends in '/'",
        ),
        (
            vec![
                "--scenario".as_ref(),
                s,
                "--plot".as_ref(),
                "out.png/".as_ref(),
            ],
            "ends in '/'",
        ),
        (
            vec!["--scenario".as_ref(), s, "--report".as_ref(), s],
            "this run's scenario",
        ),
    ];
    let t0 = gallery.join("t0.ktx2");
    let same = d.join("x.png");
    cases.push((
        vec![
            "--textures".as_ref(),
            gallery.as_os_str(),
            "--report".as_ref(),
            t0.as_os_str(),
        ],
        "--textures folder",
    ));
    cases.push((
        vec![
            "--scenario".as_ref(),
            s,
            "--report".as_ref(),
            same.as_os_str(),
            "--plot".as_ref(),
            same.as_os_str(),
        ],
        "name the same file",
    ));
    if made.is_ok_and(|s| s.success()) {
        cases.push((
            vec![
                "--scenario".as_ref(),
                s,
                "--report".as_ref(),
                fifo.as_os_str(),
            ],
            "not a regular file",
        ));
    }
    let scenario_before = std::fs::read(&scenario).unwrap();
    for (args, says) in &cases {
        let out = headless(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stderr.contains("verdict: ERROR"), "{stderr}");
    }
    // Nothing was replaced.
    assert_eq!(std::fs::read(&scenario).unwrap(), scenario_before);
    assert_eq!(std::fs::read(&t0).unwrap(), b"not really a texture");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!same.exists());
    if fifo.exists() {
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }
}

/// A dozen small zstd files whose one level decodes to 256 MiB (16384² BC7), shown under a
/// 64 MiB budget: each refused by name (they cannot stream and cannot fit), and the process's
/// peak memory stays bounded: no refused level is decoded, so the run costs what a small
/// scene does (it peaked at 1.36 GB: registered without a limit, two were taken, 256 MiB each
/// held on the CPU and on lavapipe's "GPU").
#[test]
fn refusing_huge_one_level_textures_costs_no_memory() {
    if common::gpu().is_none() {
        return;
    }
    let dir = out_dir().join("huge-refusals");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let first = dir.join("huge-00.ktx2");
    {
        let side = 16384usize;
        let tex = mipflow::ktx2::EncodedTexture {
            format: mipflow::wgpu::TextureFormat::Bc7RgbaUnormSrgb,
            width: side as u32,
            height: side as u32,
            levels: vec![vec![0u8; (side / 4) * (side / 4) * 16]],
            key_values: Vec::new(),
        };
        let mut f = std::fs::File::create(&first).unwrap();
        mipflow::ktx2::write_ktx2(&mut f, &tex, Some(3), "mipflow test").unwrap();
    }
    assert!(std::fs::metadata(&first).unwrap().len() < 64 << 10);
    for i in 1..12 {
        std::fs::copy(&first, dir.join(format!("huge-{i:02}.ktx2"))).unwrap();
    }
    let Some(run) = run(
        "huge-refusals",
        &[
            "--textures",
            dir.to_str().unwrap(),
            "--budget",
            "64MiB",
            "--frames",
            "5",
        ],
    ) else {
        return;
    };
    let r = run.report.expect("a report");
    assert_eq!(run.code, 1, "refusals fail the verdict: {}", run.stderr);
    assert_eq!(r.skipped_textures.len(), 12, "{:?}", r.skipped_textures);
    assert!(
        r.skipped_textures[0].reason.contains("VRAM"),
        "refused for the budget, before a read: {}",
        r.skipped_textures[0].reason
    );
    let peak = r.peak_rss_bytes.expect("VmHWM on Linux");
    eprintln!(
        "refusals: 12 x 256 MiB levels refused, peak RSS {:.0} MiB",
        peak as f64 / 1048576.0
    );
    assert!(
        peak < 384 << 20,
        "peak RSS {} MiB refusing what never fits",
        peak >> 20
    );
}

/// A scenario whose floor, walls and ceiling are virtual textures: the runs stay within the
/// budget with the tile cache on the same ledger (its atlas among the frames' textures: at
/// least the 64 slots of 16 KiB it starts with), and the verdict passes.
#[test]
fn a_tiled_floor_streams_within_the_budget() {
    let Some(run) = run("tiled_floor", &["--scenario", &scenario("tiled_floor")]) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.report.unwrap();
    check_consistent(&r);
    assert_eq!(r.violations, 0);
    // The tile cache's atlas is on the ledger every frame, with the streamed walls beside it.
    assert!(
        r.frames
            .iter()
            .all(|f| f.by_category.textures >= 64 * (16 << 10)),
        "the atlas is counted"
    );
    assert!(r.frames.iter().all(|f| f.total_bytes <= 32 << 20));
}
