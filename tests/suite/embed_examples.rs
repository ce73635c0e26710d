//! The embedding examples run as tests: `embed` in a window (under `xvfb-run -a` in CI) for a
//! few frames, `headless_budget` and `open_world` with no window at all.

use crate::display;

use std::time::Duration;

#[test]
fn embed_example_draws_frames_and_exits() {
    if !display::have_display("embed_example_draws_frames_and_exits") {
        return;
    }
    let exe = display::example("embed");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = display::command(&exe, &tmp.path().join("xdg"));
    cmd.args(["--frames", "8"]);
    let out = display::run(cmd, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "embed failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("embed: 8 frames, 6 textures"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" within a 48 MiB budget"), "{stdout}");
    // The game dropped, nothing of mipflow's is left charged.
    assert!(
        stdout.contains("embed: 0 bytes left on the ledger after the renderer was dropped"),
        "{stdout}"
    );
    assert!(!stderr.contains("wgpu error"), "{stderr}");
}

#[test]
fn embed_example_rejects_bad_arguments() {
    let exe = display::example("embed");
    let out = std::process::Command::new(exe)
        .args(["--frames", "many"])
        .output()
        .expect("run embed");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn headless_budget_example_runs_within_budget() {
    let exe = display::example("headless_budget");
    let tmp = tempfile::tempdir().expect("tempdir");
    let cmd = display::command(&exe, &tmp.path().join("xdg"));
    let out = display::run(cmd, Duration::from_secs(600));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("no GPU adapter") && !display::required() {
        eprintln!("\n!!!!!!!! SKIPPING headless_budget: no GPU adapter.\n");
        return;
    }
    assert!(
        out.status.success(),
        "headless_budget failed:\n{stdout}\n{stderr}"
    );
    // Five budgets, each a row; the scene unloads back to (almost) nothing.
    let rows = stdout.lines().filter(|l| l.contains(" MiB |")).count();
    assert_eq!(rows, 5, "{stdout}");
    assert!(stdout.contains("after clear_scene:"), "{stdout}");
}

/// The open-world example, small: tiles of 200 textures registered ahead of the camera and
/// unloaded behind it under an 8 MiB budget (render targets included): every frame within the
/// budget, and nothing of the world left on the GPU once it is unloaded; bad flags exit 2.
#[test]
fn open_world_example_streams_tiles_within_budget() {
    let exe = display::example("open_world");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = display::command(&exe, &tmp.path().join("xdg"));
    cmd.args([
        "--frames",
        "120",
        "--tile-textures",
        "200",
        "--tiles-ahead",
        "3",
        "--side",
        "128",
        "--budget",
        "8",
        // Reads land in frame order: 120 frames of a fast loop raced the IO threads on a
        // loaded machine (nothing streamed before the run ended).
        "--deterministic",
    ]);
    let out = display::run(cmd, Duration::from_secs(600));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("no GPU adapter") && !display::required() {
        eprintln!("\n!!!!!!!! SKIPPING open_world: no GPU adapter.\n");
        return;
    }
    assert!(
        out.status.success(),
        "open_world failed:\n{stdout}\n{stderr}"
    );
    // 120 frames at half a unit: tiles 0 to 2 under the camera, 3 ahead of it, one behind.
    assert!(
        stdout.contains("1400 textures registered (1000 at once, 1400 unloaded)"),
        "{stdout}"
    );
    assert!(stdout.contains(", 0 frames over budget,"), "{stdout}");
    assert!(stdout.contains(", 0 refused,"), "{stdout}");
    // Levels finer than the floors were streamed (the world was not just registered).
    assert!(!stdout.contains("levels streamed: 0 B"), "{stdout}");
    assert!(
        stdout.contains("world texture bytes left after unloading: 0"),
        "{stdout}"
    );
    assert!(!stderr.contains("wgpu error"), "{stderr}");
    let bad = std::process::Command::new(&exe)
        .args(["--side", "100"])
        .output()
        .expect("run open_world");
    assert_eq!(bad.status.code(), Some(2));
}

/// The own_renderer example as a user runs it: in a window (its egui UI with mipflow's panels,
/// a screenshot of the window's last frame), and headless with the squeeze; bad flags exit 2.
#[test]
fn own_renderer_example_runs_in_a_window_and_headless() {
    let exe = display::example("own_renderer");
    let bad = std::process::Command::new(&exe)
        .args(["--frames", "many"])
        .output()
        .expect("run own_renderer");
    assert_eq!(bad.status.code(), Some(2));
    // No frame to run, a budget whose bytes pass a u64: refused before any window.
    for args in [["--frames", "0"], ["--budget", "99999999999999"]] {
        let bad = std::process::Command::new(&exe)
            .args(args)
            .output()
            .expect("run own_renderer");
        assert_eq!(bad.status.code(), Some(2), "{args:?}");
    }
    let small = [
        "--materials",
        "4",
        "--texture-size",
        "256",
        "--size",
        "320x180",
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    let shot = tmp.path().join("headless.png");
    let mut cmd = display::command(&exe, &tmp.path().join("xdg"));
    cmd.args(small)
        .args(["--headless", "--frames", "60", "--squeeze", "--screenshot"])
        .arg(&shot);
    let out = display::run(cmd, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("no GPU adapter") && !display::required() {
        eprintln!("\n!!!!!!!! SKIPPING own_renderer: no GPU adapter.\n");
        return;
    }
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("0 frames over budget"), "{stdout}");
    // The floor streams tile by tile: a few of its 1024² texture's 84 tiles, not all.
    let held: usize = stdout
        .split("floor tiles ")
        .nth(1)
        .and_then(|r| r.split(" of 84 held").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no floor tiles line: {stdout}"));
    assert!((1..42).contains(&held), "{held} floor tiles held");
    let img = image::open(&shot).expect("screenshot").to_rgba8();
    assert_eq!(img.dimensions(), (320, 180));
    // The corridor's panels, not just the clear colour.
    let lit = img.pixels().filter(|p| p[0] > 90 || p[1] > 90).count();
    assert!(lit > 320 * 180 / 10, "{lit} bright pixels");

    if !display::have_display("own_renderer_example_runs_in_a_window_and_headless") {
        return;
    }
    let win = tmp.path().join("window.png");
    let mut cmd = display::command(&exe, &tmp.path().join("xdg"));
    cmd.args(small)
        .args([
            "--size",
            "640x400",
            "--frames",
            "6",
            "--budget",
            "2048",
            "--screenshot",
        ])
        .arg(&win);
    let out = display::run(cmd, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("own_renderer: 6 frames"), "{stdout}");
    // A budget past the slider's range is kept (the slider clamped it to its 1024 MiB end).
    assert!(stdout.contains("budget 2048 MiB"), "{stdout}");
    // The game's egui renderer is charged to the budget (it was not: the panel said 0).
    let overlay_kib: u64 = stdout
        .split("overlay ")
        .nth(1)
        .and_then(|r| r.split(" KiB").next())
        .and_then(|n| n.parse().ok())
        .expect("the overlay's charge in the last line");
    assert!(overlay_kib >= 64, "{stdout}");
    assert!(!stderr.contains("wgpu error"), "{stderr}");
    if stdout.contains("screenshot") {
        // mipflow's memory panel in the game's egui window, top left: egui's dark panel fill.
        let img = image::open(&win).expect("window screenshot").to_rgba8();
        let dark = (20..200)
            .flat_map(|y| (20..200).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = img.get_pixel(x, y);
                p[0] < 40 && p[1] < 40 && p[2] < 40
            })
            .count();
        assert!(dark > 180 * 180 / 3, "no egui panel in the window: {dark}");
    }
}
