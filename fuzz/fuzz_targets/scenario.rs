//! Fuzz target: the headless scenario parser (`mipflow headless --scenario`, `bench --scenario`).
//!
//! Any text: parsing and validation return a typed error or a scenario; a scenario that parses
//! answers its per-frame queries (budget, camera, act) at its first, middle and last frames and
//! past them without a panic, with finite camera positions, and accepts or refuses overrides
//! the same way. `cargo fuzz run --sanitizer none scenario` (see the README's "Fuzzing").
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mipflow_cli::headless::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(s) = Scenario::parse(text, Path::new(".")) else {
        return;
    };
    assert!(s.frames >= 1, "a scenario that parses has frames");
    for frame in [0, s.frames / 2, s.frames - 1, s.frames, u64::MAX] {
        let _ = s.budget_at(frame);
        let _ = s.act_at(frame);
        if let Some((eye, target)) = s.camera_at(frame) {
            assert!(
                eye.is_finite() && target.is_finite(),
                "camera at {frame}: {eye} -> {target}"
            );
        }
    }
    let _ = s.budget_max();
    let _ = s.clone().with_overrides(Some(u64::MAX), None);
    let _ = s.with_overrides(Some(1), Some((0, 0)));
});
