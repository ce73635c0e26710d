//! The embedding examples run as tests: `embed` in a window (under `xvfb-run -a` in CI) for a
//! few frames, `headless_budget` with no window at all.

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
