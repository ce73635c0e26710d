//! Runs a scenario offscreen and judges it.

use std::path::PathBuf;
use std::time::Instant;

use super::report::{
    ActRecord, EventRecord, FrameRecord, Report, SkippedTexture, UnreadableTexture,
};
use super::scenario::Scenario;
use crate::error::Result;
use crate::scenes;
use mipflow::Camera;
use mipflow::GpuContext;
use mipflow::StreamConfig;
use mipflow::format_bytes;
use mipflow::{Budget, Category};
use mipflow::{FrameInput, Renderer, RendererConfig};

/// What to run: a scenario plus command-line overrides (flags win over the scenario).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The scenario (`Scenario::default()` when none was given).
    pub scenario: Scenario,
    /// A name for the report (the scenario file, or `"default"`).
    pub name: String,
    /// `--textures DIR`: show this folder as a gallery instead of the scenario's scene.
    pub textures: Option<PathBuf>,
    /// `--budget SIZE`: one budget for the whole run.
    pub budget: Option<u64>,
    /// `--frames N`.
    pub frames: Option<u64>,
    /// `--size WxH`.
    pub size: Option<(u32, u32)>,
    /// `--monitor`: one line per second with the totals per category, on stderr.
    pub monitor: bool,
    /// Cache folder for procedural textures (`None`: cook in memory).
    pub cache: Option<PathBuf>,
    /// Testing hook: the render of this frame fails (as a device lost mid-run would).
    #[doc(hidden)]
    pub fail_at_frame: Option<u64>,
}

/// One line with the totals per category, like `nvidia-smi -l 1` (the `--monitor` output).
pub fn monitor_line(frame: u64, budget: u64, snap: &mipflow::LedgerSnapshot, scale: f32) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let c = &snap.by_category;
    format!(
        "frame {frame:>6} | total {:>8.1} MiB / budget {:>8.1} MiB | textures {:>7.1} | targets {:>6.1} | buffers {:>5.1} | staging {:>5.1} | overlay {:>4.1} | other {:>5.1} | scale {:.3}",
        mib(snap.total_bytes),
        mib(budget),
        mib(c.textures.bytes),
        mib(c.render_targets.bytes),
        mib(c.buffers.bytes),
        mib(c.staging.bytes),
        mib(c.overlay.bytes),
        mib(c.other.bytes),
        scale
    )
}

/// Runs `opts` on `ctx` and returns the report with its verdict (`"pass"` / `"fail"` and the
/// failures). Set-up errors (a scene that cannot be built) are `Err`.
pub fn run(ctx: GpuContext, opts: &RunOptions) -> Result<Report> {
    // Overrides are checked like the file's own values: `--frames 0` or 10^12 is refused here,
    // before any allocation, with the same message.
    let sc = opts
        .scenario
        .clone()
        .with_overrides(opts.frames, opts.size)?;
    let budget_at = |frame: u64| opts.budget.unwrap_or_else(|| sc.budget_at(frame));
    let adapter = ctx.adapter_name();
    let mut config = RendererConfig::default();
    config.budget = Budget::bytes(budget_at(0));
    config.stream = StreamConfig::default().with_deterministic(true);
    if let Some(a) = sc.anisotropy {
        config.anisotropy = a;
    }
    if let Some(m) = sc.min_scale {
        config.controller.range = mipflow::BucketRange::new(m, 1.0);
    }
    let mut r = Renderer::with_context(ctx, config)?;
    let (w, h) = (sc.size[0], sc.size[1]);
    // The output image stands in for a swapchain: charged to `Other`, so the planner counts it.
    let output = r
        .context()
        .create_offscreen_target("headless output", w, h)?;
    let view = output.create_view(&Default::default());

    // The scene is registered with no budget limit and the run's budget applied before its first
    // frame: a budget below one texture's floor (`--budget 0`) is then a run that degrades and
    // says so (exit 1, with its report), as for any budget below the floors, not a registration
    // refused (`FloorTooLarge`, which would end the run without a report).
    r.set_budget(Budget::bytes(u64::MAX));
    let cache = opts.cache.as_deref();
    let quiet = |_: usize, _: usize| {};
    let mut skipped = Vec::new();
    let (kind, length) = match (&opts.textures, sc.scene.kind.as_str()) {
        (Some(dir), _) => (
            "gallery",
            scenes::build_gallery_with_skips(
                &mut r,
                dir,
                scenes::Residency::Streamed,
                &mut skipped,
            )?,
        ),
        (None, "gallery") => {
            let dir = sc
                .base_dir
                .join(sc.scene.textures.clone().unwrap_or_default());
            (
                "gallery",
                scenes::build_gallery_with_skips(
                    &mut r,
                    &dir,
                    scenes::Residency::Streamed,
                    &mut skipped,
                )?,
            )
        }
        (None, "grid") => (
            "grid",
            scenes::build_grid(
                &mut r,
                sc.scene.seed,
                sc.scene.count.unwrap_or(2000),
                sc.scene.texture_size.unwrap_or(64),
                scenes::Residency::Streamed,
            )?,
        ),
        _ => (
            "demo",
            scenes::build_demo(
                &mut r,
                sc.scene.seed,
                sc.scene.count.unwrap_or(64),
                sc.scene.texture_size.unwrap_or(1024),
                cache,
                &quiet,
            )?,
        ),
    };

    let mut report = Report {
        adapter,
        budget_bytes_max: opts.budget.unwrap_or_else(|| sc.budget_max()),
        scenario: opts.name.clone(),
        size: sc.size,
        textures: r.streamer().texture_count() as u64,
        skipped_textures: skipped
            .into_iter()
            .map(|(p, reason)| SkippedTexture {
                path: p.display().to_string(),
                reason,
            })
            .collect(),
        ..Report::default()
    };
    report.frames.reserve(sc.frames as usize);
    r.set_budget(Budget::bytes(budget_at(0)));
    let mut last_monitor = Instant::now();
    let mut budget_now = budget_at(0);
    let mut too_small_at: Option<u64> = None;
    let mut floor_bytes = 0;
    let mut events = mipflow::EventLog::new();
    // Events `--monitor` has printed (or let go: the ring keeps the last ones).
    let mut printed = 0u64;
    let mut tally = mipflow::Tally::default();
    let mut prev_stats: Option<mipflow::FrameStats> = None;
    let mut render_error = None;
    for frame in 0..sc.frames {
        let b = budget_at(frame);
        if b != budget_now {
            r.set_budget(Budget::bytes(b));
            budget_now = b;
        }
        let (eye, target) = sc.camera_at(frame).unwrap_or_else(|| match kind {
            "grid" => (
                glam::Vec3::new(
                    0.0,
                    0.0,
                    2.0 + length * (1.0 - frame as f32 / sc.frames as f32),
                ),
                glam::Vec3::ZERO,
            ),
            _ => scenes::tour(frame, sc.tour_frames.unwrap_or(sc.frames), length),
        });
        let t0 = Instant::now();
        let rendered = if opts.fail_at_frame == Some(frame) {
            Err(mipflow::Error::Validation {
                context: "rendering (testing hook)".into(),
                message: "injected failure".into(),
            })
        } else {
            r.render(&view, &FrameInput::new(Camera::look_at(eye, target)))
                .copied()
        };
        let stats = match rendered {
            Ok(stats) => stats,
            // A frame that cannot be rendered (a device lost mid-run) ends the run, not the
            // report: the frames so far are kept and the verdict fails with the error.
            Err(e) => {
                render_error = Some(format!("frame {frame} could not be rendered: {e}"));
                break;
            }
        };
        let frame_ms = t0.elapsed().as_secs_f64() * 1e3;
        if stats.budget_too_small && too_small_at.is_none() {
            too_small_at = Some(frame);
            floor_bytes = stats.floor_bytes;
        }
        let mut by = mipflow::ByCategory::<u64>::default();
        for c in Category::ALL {
            *by.get_mut(c) = stats.ledger.by_category.get(c).bytes;
        }
        report.frames.push(FrameRecord {
            frame,
            budget_bytes: b,
            total_bytes: stats.frame_peak_bytes,
            by_category: by,
            render_scale: f64::from(stats.render_scale),
            uploaded_bytes: stats.stream.uploaded_bytes,
            resident_mip_bytes: stats.resident_mip_bytes,
            wanted_mip_bytes: stats.wanted_mip_bytes,
            frame_ms,
            over_budget: stats.frame_peak_bytes > b,
            quality_cost: stats.quality_cost,
            planner_us: f64::from(stats.stream.planner_us),
            oom_cap_bytes: stats.oom_cap_bytes,
            oom_events: stats.stream.oom_events,
            feedback_latency_frames: stats.feedback.latency_frames,
            feedback_pixels: stats.feedback.pixels,
            feedback_readback_bytes: stats.feedback.readback_bytes,
            evictions: stats.stream.shrinks + stats.stream.evictions,
            freed_bytes: stats.stream.freed_bytes,
            grows: stats.stream.grows,
            cancels: stats.stream.cancels,
            cancels_after_arrival: stats.stream.cancels_after_arrival,
            reused_reads: stats.stream.reused_reads,
            io_requests: stats.stream.io_requests,
            staged_reads: stats.stream.staged_reads,
            blur_pixel_octaves: f64::from(stats.blur_pixel_octaves),
            scale_reason: stats.scale_reason.map(|r| r.name().to_owned()),
            unreadable_wanted: 0,
            rss_bytes: (frame % super::report::RSS_EVERY == 0 || frame + 1 == sc.frames)
                .then(super::report::rss_bytes)
                .flatten(),
        });
        // Levels that cannot be read: named in the report once, and counted per frame while
        // the view wants them (the table is gathered only once an error has been seen).
        if stats.stream.io_errors > 0 || !report.unreadable_textures.is_empty() {
            let infos = r.streamer().texture_infos();
            let mut blocked = 0;
            for t in &infos {
                let Some(reason) = &t.error else { continue };
                if !report
                    .unreadable_textures
                    .iter()
                    .any(|u| u.label == t.label)
                {
                    report.unreadable_textures.push(UnreadableTexture {
                        label: t.label.clone(),
                        reason: reason.clone(),
                        frame,
                    });
                }
                // The error stands until a read of it succeeds; while it is in view, the view
                // wants a level that cannot be read (the streamer backs off from asking).
                if t.wanted_level < f32::from(t.level_count) {
                    blocked += 1;
                }
            }
            if let Some(rec) = report.frames.last_mut() {
                rec.unreadable_wanted = blocked;
            }
        }
        // Events: the ring's events, copied as they start and as they grow, numbered as the
        // report's frames (the manager counts from 1).
        let offset = stats.frame.saturating_sub(frame);
        let seen = events.pushed();
        events.observe(&stats);
        for n in seen.saturating_sub(mipflow::EventLog::CAPACITY as u64)..events.pushed() {
            let Some(e) = events.get(n) else { continue };
            let rec = EventRecord {
                frame: e.frame.saturating_sub(offset),
                last_frame: e.last_frame.saturating_sub(offset),
                kind: e.kind.name().to_owned(),
                text: e.to_string(),
            };
            match report.events.get_mut(n as usize) {
                Some(r) if r.last_frame != e.last_frame || r.text != rec.text => *r = rec,
                Some(_) => {}
                None => report.events.push(rec),
            }
        }
        // `--monitor`: each event once, in order, once it is final (a scale change or a wave
        // with its whole size: printed as it started, a drop that ended at 0.69 read "scale
        // 1.00 -> 0.94"); the last frame prints what is still open.
        if opts.monitor {
            let first = events
                .pushed()
                .saturating_sub(mipflow::EventLog::CAPACITY as u64);
            printed = printed.max(first);
            let last = frame + 1 == sc.frames;
            while printed < events.pushed() && (last || events.is_final(printed, stats.frame)) {
                if let Some(e) = events.get(printed) {
                    crate::say(format_args!(
                        "event  {:>6} | {}",
                        e.frame.saturating_sub(offset),
                        e
                    ));
                }
                printed += 1;
            }
        }
        // Acts: a tally from the frame before each act's first.
        match sc.act_at(frame) {
            Some((i, act)) if i >= report.acts.len() => {
                let start = prev_stats.as_ref().unwrap_or(&stats);
                tally = mipflow::Tally::start(start);
                report.acts.push(ActRecord {
                    frame: act.frame.max(frame),
                    title: act.title.clone(),
                    ..ActRecord::default()
                });
            }
            _ => {}
        }
        if let Some(a) = report.acts.last_mut() {
            tally.add(&stats);
            a.last_frame = frame;
            a.caption = tally.to_string();
            a.render_scale_min = f64::from(tally.scale_min);
            a.render_scale_end = f64::from(tally.scale_to);
            a.drops = tally.drops;
            a.grows = tally.grows;
        }
        prev_stats = Some(stats);
        if opts.monitor && (last_monitor.elapsed().as_secs_f32() >= 1.0 || frame + 1 == sc.frames) {
            last_monitor = Instant::now();
            crate::say(format_args!(
                "{}",
                monitor_line(frame, b, &stats.ledger, stats.render_scale)
            ));
        }
    }
    report.budget_too_small = too_small_at.is_some();
    // The highest budget in force in a frame of the run (the schedule's keys may start after
    // frame 0, under the default, or lie past the run's end).
    if let Some(max) = report.frames.iter().map(|f| f.budget_bytes).max() {
        report.budget_bytes_max = max;
    }
    report.summarise();

    // The verdict.
    let allowed = sc
        .expect
        .iter()
        .filter_map(|e| e.max_violations)
        .min()
        .unwrap_or(0);
    if let Some(e) = render_error {
        report.failures.push(e);
    }
    if report.violations > allowed {
        let first = report.frames.iter().find(|f| f.over_budget);
        report.failures.push(format!(
            "{} frame(s) over budget (first: frame {}, {} over {})",
            report.violations,
            first.map_or(0, |f| f.frame),
            format_bytes(first.map_or(0, |f| f.total_bytes)),
            format_bytes(first.map_or(0, |f| f.budget_bytes)),
        ));
    }
    if let Some(first) = report.skipped_textures.first() {
        report.failures.push(format!(
            "{} texture(s) skipped at registration (first: {}: {})",
            report.skipped_textures.len(),
            first.path,
            first.reason
        ));
    }
    if let Some(first) = report.unreadable_textures.first() {
        report.failures.push(format!(
            "{} texture(s) with levels that cannot be read (first: {} at frame {}: {})",
            report.unreadable_textures.len(),
            first.label,
            first.frame,
            first.reason
        ));
    }
    if let Some(f) = too_small_at {
        // A budget below the floor always fails the run: the scene cannot be shown as meant.
        let msg = format!(
            "budget {} is below the floor at frame {f}: the fixed bytes, the smallest render targets and every texture's floor tail need {}; the run degraded (floors evicted)",
            format_bytes(budget_at(f)),
            format_bytes(floor_bytes)
        );
        report.failures.push(msg);
    }
    for e in &sc.expect {
        let Some(rec) = report.frames.iter().find(|f| f.frame == e.frame) else {
            report.failures.push(format!(
                "expect at frame {}: the run has only {} frames",
                e.frame,
                report.frames.len()
            ));
            continue;
        };
        if let Some(m) = e.min_render_scale
            && rec.render_scale < m
        {
            report.failures.push(format!(
                "frame {}: render scale {:.4} < expected minimum {m}",
                e.frame, rec.render_scale
            ));
        }
        if let Some(m) = e.max_render_scale
            && rec.render_scale > m
        {
            report.failures.push(format!(
                "frame {}: render scale {:.4} > expected maximum {m}",
                e.frame, rec.render_scale
            ));
        }
        if e.all_wanted_resident == Some(true) && rec.unreadable_wanted > 0 {
            report.failures.push(format!(
                "frame {}: {} texture(s) want levels that cannot be read",
                e.frame, rec.unreadable_wanted
            ));
        } else if e.all_wanted_resident == Some(true)
            && rec.resident_mip_bytes < rec.wanted_mip_bytes
        {
            report.failures.push(format!(
                "frame {}: not every wanted mip is resident ({} of {})",
                e.frame,
                format_bytes(rec.resident_mip_bytes),
                format_bytes(rec.wanted_mip_bytes)
            ));
        }
        if let Some(m) = &e.max_total_bytes
            && rec.total_bytes > m.bytes()?
        {
            report.failures.push(format!(
                "frame {}: total {} > expected maximum {}",
                e.frame,
                format_bytes(rec.total_bytes),
                format_bytes(m.bytes()?)
            ));
        }
        if let Some(want) = e.budget_too_small {
            let seen = too_small_at.is_some_and(|f| f <= e.frame);
            if seen != want {
                report.failures.push(format!(
                    "frame {}: budget_too_small is {seen}, expected {want}",
                    e.frame
                ));
            }
        }
    }
    report.verdict = if report.failures.is_empty() {
        "pass"
    } else {
        "fail"
    }
    .into();
    drop(view);
    drop(output);
    Ok(report)
}
