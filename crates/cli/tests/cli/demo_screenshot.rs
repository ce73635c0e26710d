//! The demo binary in a window (under `xvfb-run -a` in CI): `--tour --frames N --screenshot`,
//! then checks on the picture: the overlay is drawn, and the scene is a scene (many colours,
//! edges), not a clear colour.
#![cfg(feature = "overlay")]

use crate::display;

use std::time::Duration;

use mipflow_overlay::{CATEGORY_COLOURS, panel_width};

const W: u32 = 820;
const H: u32 = 460;

fn luma(p: &image::Rgba<u8>) -> i32 {
    (i32::from(p[0]) * 3 + i32::from(p[1]) * 6 + i32::from(p[2])) / 10
}

#[test]
fn demo_tour_screenshot_shows_scene_and_overlay() {
    if !display::have_display("demo_tour_screenshot_shows_scene_and_overlay") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let shot = tmp.path().join("shot.png");
    let mut cmd = display::command(
        std::path::Path::new(env!("CARGO_BIN_EXE_mipflow")),
        &tmp.path().join("xdg"),
    );
    // A small scene (12 textures, at most 256²) cooked into a fresh cache: seconds, not minutes.
    cmd.args([
        "demo",
        "--tour",
        "--monitor",
        "--count",
        "12",
        "--max-size",
        "256",
    ])
    .args([
        "--size",
        &format!("{W}x{H}"),
        "--frames",
        "12",
        "--no-vsync",
    ])
    .arg("--screenshot")
    .arg(&shot)
    .env("MIPFLOW_CACHE", tmp.path().join("cache"));
    let out = display::run(cmd, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "demo failed ({}):\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains("scene loaded") && stderr.contains("screenshot saved"),
        "{stderr}"
    );
    // --monitor: at least one line with the totals per category.
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("frame") && l.contains("budget") && l.contains("textures")),
        "no monitor line:\n{stderr}"
    );
    // The cache was filled (12 cooked files).
    let cooked = std::fs::read_dir(tmp.path().join("cache"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "ktx2"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(cooked, 12);

    // A copy to look at (and to keep when an assertion below fails).
    let keep = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo_screenshot.png");
    let _ = std::fs::copy(&shot, &keep);
    eprintln!("screenshot: {}", keep.display());
    let img = image::open(&shot).expect("screenshot is a PNG").to_rgba8();
    assert_eq!(img.dimensions(), (W, H));
    let panel_x = W - panel_width(W).ceil() as u32;

    // The overlay: its panel is dark, has text, and shows every category's colour swatch.
    let mut dark = 0u32;
    let mut bright = 0u32;
    let mut panel_px = 0u32;
    let mut swatches = [0u32; 6];
    for y in 0..H {
        for x in panel_x + 2..W {
            let p = img.get_pixel(x, y);
            panel_px += 1;
            if p[0].max(p[1]).max(p[2]) < 60 {
                dark += 1;
            }
            // egui's text: light grey on the dark panel.
            let spread = p[0].max(p[1]).max(p[2]) - p[0].min(p[1]).min(p[2]);
            if luma(p) > 110 && spread < 30 {
                bright += 1;
            }
            for (k, c) in CATEGORY_COLOURS.iter().enumerate() {
                let d = (i32::from(p[0]) - i32::from(c.r())).abs()
                    + (i32::from(p[1]) - i32::from(c.g())).abs()
                    + (i32::from(p[2]) - i32::from(c.b())).abs();
                if d <= 12 {
                    swatches[k] += 1;
                }
            }
        }
    }
    assert!(
        dark * 2 > panel_px,
        "overlay panel not drawn: {dark} dark of {panel_px}"
    );
    assert!(
        bright * 100 > panel_px,
        "no overlay text: {bright} light grey of {panel_px}"
    );
    for (k, n) in swatches.iter().enumerate() {
        assert!(
            *n >= 40,
            "category colour {k} ({:?}) found on {n} pixels only",
            CATEGORY_COLOURS[k]
        );
    }

    // The scene, left of the panel: many colours, edges, no single colour dominating.
    let mut colours = std::collections::HashMap::<[u8; 3], u32>::new();
    let mut edges = 0u32;
    let mut scene_px = 0u32;
    for y in 0..H {
        for x in 0..panel_x.saturating_sub(4) {
            let p = img.get_pixel(x, y);
            scene_px += 1;
            *colours
                .entry([p[0] >> 3, p[1] >> 3, p[2] >> 3])
                .or_default() += 1;
            if x + 1 < panel_x && (luma(p) - luma(img.get_pixel(x + 1, y))).abs() > 20 {
                edges += 1;
            }
        }
    }
    let most = colours.values().copied().max().unwrap_or(0);
    assert!(
        colours.len() > 300,
        "only {} distinct colours in the scene",
        colours.len()
    );
    // A clear colour has none; the small tour scene has about 1 % (texture detail, panel borders).
    assert!(
        edges * 250 > scene_px,
        "only {edges} edge pixels of {scene_px}"
    );
    // The hall's background shows between the panels (about 60 % at the tour's start); a frame
    // with nothing drawn is one colour on 100 %.
    assert!(
        most * 10 < scene_px * 8,
        "one colour covers {most} of {scene_px} pixels: a clear colour, not a scene"
    );
    eprintln!(
        "scene: {} colours, {edges} edge pixels of {scene_px}; panel: {dark} dark, {bright} bright, swatches {swatches:?}",
        colours.len()
    );
}

#[test]
fn demo_rejects_bad_arguments_without_a_window() {
    // Argument errors come before any window is opened: no display needed.
    for args in [
        &["demo", "--size", "0x0"][..],
        &["demo", "--budget", "lots"][..],
        &["--count", "0"][..],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .args(args)
            .output()
            .expect("run mipflow");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("mipflow demo:"),
            "{args:?}"
        );
    }
    // An argument that is not UTF-8 (a file name) before the error: exit 2, not a panic (101).
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.png");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .arg("--screenshot")
            .arg(name)
            .args(["--size", "0x0"])
            .output()
            .expect("run mipflow");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
}

#[test]
fn demo_survives_resizes_down_to_one_pixel() {
    if !display::have_display("demo_survives_resizes_down_to_one_pixel") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = display::command(
        std::path::Path::new(env!("CARGO_BIN_EXE_mipflow")),
        &tmp.path().join("xdg"),
    );
    // `--resize-test` asks for 1x1, 37x3, 320x200, 801x451 and 640x360 in turn, every 3 frames:
    // the surface is reconfigured and the render targets and overlay follow, without a panic.
    cmd.args(["demo", "--tour", "--count", "6", "--max-size", "128"])
        .args([
            "--size",
            "640x360",
            "--frames",
            "30",
            "--no-vsync",
            "--resize-test",
        ])
        .env("MIPFLOW_CACHE", tmp.path().join("cache"));
    let out = display::run(cmd, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "demo failed ({}):\n{stderr}",
        out.status
    );
    assert!(stderr.contains("frames done"), "{stderr}");
    assert!(!stderr.contains("wgpu error"), "{stderr}");
}

/// The tour's story in the window: `--tour --frames N --screenshot` at a frame inside the hard
/// squeeze (one lap in 600 frames at 960x540, the acts of `assets/tour.toml` as they are). At
/// this size the hard squeeze leaves less room above the window's own bytes than the
/// full-resolution targets take, so the scale must give way whatever the planner prefers. The
/// `--monitor` lines show the budget changes, the scale going below 1 with its reason, and the
/// first acts' captions; the screenshot has the act's caption over the scene, and the panel
/// with its budget bar.
#[test]
fn demo_tour_story_in_the_squeeze() {
    if !display::have_display("demo_tour_story_in_the_squeeze") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let shot = tmp.path().join("story.png");
    let mut cmd = display::command(
        std::path::Path::new(env!("CARGO_BIN_EXE_mipflow")),
        &tmp.path().join("xdg"),
    );
    cmd.args(["demo", "--tour", "--tour-frames", "600", "--monitor"])
        .args(["--size", "960x540", "--frames", "400", "--no-vsync"])
        .arg("--screenshot")
        .arg(&shot)
        // The demo scene, cooked once into the cache the headless story test shares.
        .env(
            "MIPFLOW_CACHE",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mipflow-cache"),
        );
    let out = display::run(cmd, Duration::from_secs(600));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "demo failed ({}):\n{stderr}",
        out.status
    );
    let keep = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo_story.png");
    let _ = std::fs::copy(&shot, &keep);
    eprintln!("screenshot: {}", keep.display());
    // No terminal: no colour codes in the log.
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a non-terminal log"
    );
    let events: Vec<&str> = stderr.lines().filter(|l| l.starts_with("event")).collect();
    assert!(
        events.iter().filter(|l| l.contains("| budget ")).count() >= 2,
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|l| l.contains("| scale ") && l.contains("-> 0.") && l.contains("could not hold")),
        "{events:#?}"
    );
    assert!(events.iter().any(|l| l.contains("level drops gave back")));
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("tour") && l.contains("act 2/4 done")),
        "{stderr}"
    );
    // The last monitor line: inside the squeeze, below full scale, the budget nearly full.
    let last = stderr
        .lines()
        .rfind(|l| l.starts_with("frame") && l.contains("budget"))
        .expect("a monitor line");
    let num = |key: &str| -> f64 {
        let at = last.find(key).unwrap() + key.len();
        last[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (total, budget, scale) = (num("total"), num("budget"), num("scale"));
    assert!(scale < 1.0, "{last}");
    assert!(total >= budget * 0.8, "the budget is pressed: {last}");

    let img = image::open(&shot).expect("a PNG").to_rgba8();
    assert_eq!(img.dimensions(), (960, 540));
    // The caption: a dark band at the top left with light text on it.
    let (mut dark, mut text) = (0u32, 0u32);
    for y in 14..70 {
        for x in 14..400 {
            let p = img.get_pixel(x, y);
            let (mx, mn) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            if mx < 50 {
                dark += 1;
            }
            if mn > 170 && mx - mn < 30 {
                text += 1;
            }
        }
    }
    assert!(dark > 386 * 56 / 2, "no caption band: {dark}");
    assert!(text > 400, "no caption text: {text}");
    // The panel on the right, with the budget bar's colours in it.
    let mut colours = 0u32;
    let panel_x = 960 - panel_width(960).ceil() as u32;
    for y in 0..160 {
        for x in panel_x..960 {
            let p = img.get_pixel(x, y);
            for c in mipflow_overlay::CATEGORY_COLOURS {
                let d = (i32::from(p[0]) - i32::from(c.r())).abs()
                    + (i32::from(p[1]) - i32::from(c.g())).abs()
                    + (i32::from(p[2]) - i32::from(c.b())).abs();
                if d <= 12 {
                    colours += 1;
                }
            }
        }
    }
    assert!(
        colours > 300,
        "the budget bar: {colours} pixels of category colours"
    );
}
