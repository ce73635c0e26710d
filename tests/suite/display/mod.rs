//! Shared set-up of the tests that open windows (the demo binary, the embed example).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether this run must not skip GPU or display tests (CI has lavapipe and xvfb).
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("MIPFLOW_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// True when a display is available. Without one, the test is skipped loudly, unless the run
/// is required to have one (CI runs `xvfb-run -a cargo test`), where it fails.
pub fn have_display(test: &str) -> bool {
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        return true;
    }
    assert!(
        !required(),
        "{test}: no DISPLAY, and this run requires one (CI or MIPFLOW_REQUIRE_GPU=1); run under `xvfb-run -a cargo test`"
    );
    eprintln!(
        "\n!!!!!!!! SKIPPING {test}: no DISPLAY.\n!!!!!!!! Run under `xvfb-run -a cargo test` (packages xvfb, mesa-vulkan-drivers).\n"
    );
    false
}

/// A command with a private 0700 `XDG_RUNTIME_DIR` when none is set (the driver stack prints
/// errors without one).
pub fn command(program: &Path, runtime_dir: &Path) -> Command {
    let mut c = Command::new(program);
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::create_dir_all(runtime_dir);
            let _ = std::fs::set_permissions(runtime_dir, std::fs::Permissions::from_mode(0o700));
        }
        c.env("XDG_RUNTIME_DIR", runtime_dir);
    }
    c.env("NO_COLOR", "1");
    c
}

/// Runs `cmd` to completion, killing it after `limit`. Panics (with what it printed) on timeout.
/// Its output is drained while it runs: a child that prints more than a pipe holds (64 KiB, a
/// few minutes of `--monitor` lines) would otherwise block on its next write and time out.
pub fn run(mut cmd: Command, limit: Duration) -> Output {
    use std::io::Read;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (status, false),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                break (child.wait().expect("wait"), true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("waiting for the child: {e}"),
        }
    };
    let out = Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    if timed_out {
        panic!(
            "timed out after {limit:?}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// The path of example `name`, built for the profile this test was built with (`cargo test`
/// builds examples, but `cargo test --test X` does not, so it is built here when needed; a
/// no-op when it is up to date).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps")
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--example", name]);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("run cargo build --example");
    assert!(status.success(), "cargo build --example {name} failed");
    let path = profile_dir.join("examples").join(name);
    assert!(path.exists(), "{} not found", path.display());
    path
}
