//! `bench.md`: the report as tables.

use super::*;

pub(super) fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / MIB)
}

pub(super) fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "–".to_owned(), f)
}

/// The Markdown table (and the goals under it).
pub fn markdown(r: &BenchReport) -> String {
    let mut s = String::new();
    if !r.errors.is_empty() {
        let _ = writeln!(
            s,
            "**This run is incomplete**: the figures below stop where it failed, and no goal is \
             judged.\n"
        );
        for e in &r.errors {
            let _ = writeln!(s, "- failed: {e}");
        }
        let _ = writeln!(s);
    }
    let sc = &r.scene;
    let _ = writeln!(
        s,
        "Scene: {} ({}), {} textures, {}x{}, {} frames per mode, anisotropy {}, outputs compared every {} frame(s), {} streaming, camera {:.2} units a frame on average ({:.2} at most). Budget of (c): {} = {} MiB ((b)'s textures: {} MiB; (a)'s: {} MiB).\n",
        sc.kind,
        sc.scenario,
        sc.textures,
        sc.size[0],
        sc.size[1],
        sc.frames,
        sc.anisotropy,
        sc.quality_every,
        if sc.deterministic {
            "deterministic"
        } else {
            "asynchronous"
        },
        sc.camera_speed_mean,
        sc.camera_speed_max,
        sc.budget_rule,
        r.modes
            .get(2)
            .and_then(|c| c.budget_bytes)
            .map_or("–".into(), mib),
        mib(sc.bc7_texture_bytes),
        mib(sc.rgba8_texture_bytes),
    );
    let _ = write!(s, "| figure |");
    for m in &r.modes {
        let _ = write!(s, " {} |", m.title);
    }
    let _ = writeln!(s, " goal |");
    let _ = writeln!(s, "|---|{}---|", "---:|".repeat(r.modes.len()));
    let ratio = |x: f64| format!(" (x{x:.3})");
    let mut row = |name: &str, cells: Vec<String>, goal: &str| {
        let _ = writeln!(s, "| {name} | {} | {goal} |", cells.join(" | "));
    };
    let m = &r.modes;
    row(
        "peak VRAM, MiB (ledger)",
        m.iter()
            .enumerate()
            .map(|(i, x)| {
                let r = if i == 0 {
                    String::new()
                } else {
                    ratio(x.ratios.peak_bytes)
                };
                format!("**{}**{r}", mib(x.peak_bytes))
            })
            .collect(),
        "(c) at most 1/16 of (a)",
    );
    for c in Category::ALL {
        if m.iter().all(|x| *x.peak_by_category.get(c) == 0) {
            continue;
        }
        row(
            &format!("&nbsp;&nbsp;{} peak, MiB", c.name()),
            m.iter().map(|x| mib(*x.peak_by_category.get(c))).collect(),
            "",
        );
    }
    row(
        "allocator report peak, MiB, incl. wgpu's set-up staging (largest allocator − ledger when idle)",
        m.iter()
            .map(|x| {
                opt(x.allocator_peak_bytes, |p| {
                    format!(
                        "{} ({:+} KiB)",
                        mib(p),
                        x.allocator_max_diff_bytes.unwrap_or(0) / 1024
                    )
                })
            })
            .collect(),
        "",
    );
    row(
        "frame ms p50 / p95 / p99",
        m.iter()
            .map(|x| {
                format!(
                    "{:.2} / {:.2} / {:.2}",
                    x.frame_ms.p50, x.frame_ms.p95, x.frame_ms.p99
                )
            })
            .collect(),
        "(c) p99 at most 1.25x (b)",
    );
    row(
        "p99 against (a)",
        m.iter()
            .map(|x| format!("x{:.2}", x.ratios.frame_ms_p99))
            .collect(),
        "",
    );
    row(
        "time to first frame, ms (set-up + frame 0)",
        m.iter()
            .map(|x| {
                format!(
                    "{:.0} ({:.0} + {:.0}){}",
                    x.time_to_first_frame_ms,
                    x.setup_ms,
                    x.time_to_first_frame_ms - x.setup_ms,
                    ratio(x.ratios.time_to_first_frame)
                )
            })
            .collect(),
        "",
    );
    row(
        "set-up's upload staging peak, MiB (not in the peak VRAM row)",
        m.iter().map(|x| mib(x.setup_staging_peak_bytes)).collect(),
        "",
    );
    row(
        "uploaded, MiB (set-up + streamed)",
        m.iter()
            .map(|x| {
                format!(
                    "{} ({} + {}){}",
                    mib(x.uploaded_bytes),
                    mib(x.setup_uploaded_bytes),
                    mib(x.streamed_uploaded_bytes),
                    ratio(x.ratios.uploaded_bytes)
                )
            })
            .collect(),
        "",
    );
    row(
        "PSNR against (a), dB: min / mean",
        m.iter()
            .map(|x| match (x.psnr_min_db, x.psnr_mean_db) {
                (Some(a), Some(b)) => format!("{a:.2} / {b:.2}"),
                _ => "reference".into(),
            })
            .collect(),
        "(c) at least 40 dB every frame",
    );
    row(
        "frames under 40 dB",
        m.iter()
            .map(|x| match x.mode {
                Some(Mode::Rgba8) => "reference".into(),
                _ => format!("{} of {}", x.frames_under_40db, x.frames_compared),
            })
            .collect(),
        "(c) 0",
    );
    row(
        "texture blur on screen, pixel-octaves: max / mean",
        m.iter()
            .map(|x| {
                let n = x.frames.len().max(1) as f64;
                let mean = x.frames.iter().map(|f| f.blur_pixel_octaves).sum::<f64>() / n;
                format!("{:.0} / {:.0}", x.blur_max_pixel_octaves, mean)
            })
            .collect(),
        "",
    );
    row(
        "grows; cancelled (after their data arrived)",
        m.iter()
            .map(|x| match x.mode {
                Some(Mode::Mipflow | Mode::MipflowNoFeedback | Mode::Tiles) => {
                    format!("{}; {} ({})", x.grows, x.cancels, x.cancels_after_arrival)
                }
                _ => "–".into(),
            })
            .collect(),
        "after arrival under 5% of grows",
    );
    row(
        "SSIM against (a): min / mean",
        m.iter()
            .map(|x| match (x.ssim_min, x.ssim_mean) {
                (Some(a), Some(b)) => format!("{a:.4} / {b:.4}"),
                _ => "reference".into(),
            })
            .collect(),
        "",
    );
    row(
        "frames over budget",
        m.iter()
            .map(|x| {
                if x.budget_bytes.is_some() {
                    x.frames_over_budget.to_string()
                } else {
                    "no budget".into()
                }
            })
            .collect(),
        "(c) 0",
    );
    row(
        "render scale min / mean",
        m.iter()
            .map(|x| format!("{:.3} / {:.3}", x.render_scale_min, x.render_scale_mean))
            .collect(),
        "",
    );
    row(
        "first frame with every wanted mip resident",
        m.iter()
            .map(|x| match x.mode {
                Some(Mode::Mipflow | Mode::MipflowNoFeedback | Mode::Tiles) => x
                    .first_frame_all_wanted
                    .map_or_else(|| "never".to_owned(), |f| f.to_string()),
                _ => "0 (all resident)".into(),
            })
            .collect(),
        "",
    );
    row(
        "planner µs per frame, this scene (p50)",
        m.iter()
            .map(|x| {
                if x.mode.is_some_and(Mode::streamed) {
                    format!("{:.1}", x.planner_us_p50)
                } else {
                    "–".into()
                }
            })
            .collect(),
        "",
    );
    let blank = |v: String| vec!["".to_owned(), "".to_owned(), v];
    if let Some(p) = &r.planner {
        row(
            &format!(
                "planner µs per frame, {} textures, steady view: median / mean / p99",
                p.textures
            ),
            blank(format!(
                "{:.1} / {:.1} / {:.1}",
                p.steady_us_p50, p.steady_us_mean, p.steady_us_p99
            )),
            "at most 50 µs at 10k",
        );
        row(
            &format!(
                "planner µs per frame, {} textures, every wanted level moving: mean / median",
                p.textures
            ),
            blank(format!(
                "{:.1} / {:.1} (full pass: {:.1} / {:.1})",
                p.moving_us_mean, p.moving_us_p50, p.moving_full_us_mean, p.moving_full_us_p50
            )),
            "at most 100 µs at 10k",
        );
    }
    if let Some(u) = &r.upload {
        row(
            &format!("upload MB/s against memcpy MB/s ({})", u.what),
            blank(format!(
                "{:.0} / {:.0} ({:.0}%)",
                u.upload_mb_s,
                u.memcpy_mb_s,
                u.ratio * 100.0
            )),
            "at least 50%",
        );
        if u.staged_read_upload_mb_s > 0.0 {
            row(
                "read + upload MB/s from the KTX2 file: into buffers of their own / straight into staging",
                blank(format!(
                    "{:.0} ({:.0}%) / {:.0} ({:.0}%)",
                    u.read_upload_mb_s,
                    u.read_upload_mb_s / u.memcpy_mb_s.max(1e-9) * 100.0,
                    u.staged_read_upload_mb_s,
                    u.staged_ratio * 100.0
                )),
                "at least 50%",
            );
        }
        if u.file_upload_mb_s > 0.0 {
            let pct = |v: f64| v / u.memcpy_mb_s.max(1e-9) * 100.0;
            row(
                "from the file on disk (page cache) straight into staging: read alone / read + upload MB/s",
                blank(format!(
                    "{:.0} ({:.0}%) / {:.0} ({:.0}%)",
                    u.file_read_mb_s,
                    pct(u.file_read_mb_s),
                    u.file_upload_mb_s,
                    pct(u.file_upload_mb_s)
                )),
                "at least 50%",
            );
            row(
                "the same read through the bounce buffer (a `KtxReader` over the file) MB/s",
                blank(format!(
                    "{:.0} ({:.0}%)",
                    u.file_read_bounce_mb_s,
                    pct(u.file_read_bounce_mb_s)
                )),
                "",
            );
        }
        if u.streamed_upload_mb_s > 0.0 {
            row(
                "read + upload MB/s as streamed: reads straight into staging on an IO thread, overlapping the copies",
                blank(format!(
                    "{:.0} ({:.0}%)",
                    u.streamed_upload_mb_s,
                    u.streamed_ratio * 100.0
                )),
                "at least 50%",
            );
        }
    }
    for c in &r.cook {
        row(
            &format!(
                "cook `{}`: MP/s, PSNR mean / min ({} image(s), {:.2} MP)",
                c.quality, c.images, c.megapixels
            ),
            blank(format!(
                "{:.2} MP/s, {:.2} / {:.2} dB",
                c.mp_per_s, c.psnr_mean_db, c.psnr_min_db
            )),
            "",
        );
    }
    let _ = writeln!(s, "\nGoals (measured, not asserted):\n");
    for g in &r.goals {
        let mark = match g.met {
            Some(true) => "met",
            Some(false) => "**not met**",
            None => "not measured",
        };
        let _ = writeln!(
            s,
            "- {}: {} (goal: {}): {mark}",
            g.name, g.measured, g.target
        );
    }
    if let Some(sw) = &r.sweep {
        s.push_str(&super::sweep::sweep_markdown(sw));
    }
    let mc = &r.machine;
    let _ = writeln!(
        s,
        "\nMachine: {} CPUs ({}), {}, {}, {}; {} build; bench took {:.0} s.\n\nCommand: `{}`",
        mc.cpus, mc.cpu_model, mc.adapter, mc.driver, mc.os, mc.profile, r.total_seconds, r.command
    );
    s
}
