//! Runs a scenario offscreen and judges it.

use std::path::PathBuf;
use std::time::Instant;

use super::report::{Report, SkippedTexture, UnreadableTexture};
use super::scenario::Scenario;
use crate::error::Result;
use crate::scenes;
use mipflow::Budget;
use mipflow::Camera;
use mipflow::GpuContext;
use mipflow::StreamConfig;
use mipflow::harness::{BudgetKey, BudgetTest, Schedule};
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

    // The scene is registered under the run's highest budget, and not less than 64 MiB, and the
    // run's budget applied before its first frame. A texture whose floor passes the highest
    // budget of the run can never be shown: it is refused before anything of it is read (a
    // dozen one-level 16384² files under 64 MiB peaked at 1.4 GB of memory when registered
    // without a limit: two floors held, 256 MiB each, on the CPU and on lavapipe's "GPU"). A
    // budget below the small floors (`--budget 0`) is a run that degrades and says so (exit 1,
    // with its report), not a scene refused.
    let highest = opts.budget.unwrap_or_else(|| sc.budget_max());
    r.set_budget(Budget::bytes(highest.max(64 << 20)));
    let cache = opts.cache.as_deref();
    let quiet = |_: usize, _: usize| {};
    let mut skipped = Vec::new();
    let (kind, length) = match (&opts.textures, sc.scene.kind.as_str()) {
        (Some(dir), _) => ("gallery", gallery_or_skips(&mut r, dir, &mut skipped)?),
        (None, "gallery") => {
            let dir = sc
                .base_dir
                .join(sc.scene.textures.clone().unwrap_or_default());
            ("gallery", gallery_or_skips(&mut r, &dir, &mut skipped)?)
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
        _ => {
            let floor = sc.scene.floor_tiles;
            let length = scenes::build_demo_with(
                &mut r,
                sc.scene.seed,
                sc.scene.count.unwrap_or(64),
                sc.scene.texture_size.unwrap_or(1024),
                cache,
                &quiet,
                floor.is_none(),
            )?;
            if let Some(side) = floor {
                scenes::add_tiled_floor(&mut r, length, side, cache)?;
            }
            if let Some(side) = sc.scene.walls_tiles {
                let sources = scenes::tiled_enclosure_textures(side, cache)?;
                scenes::add_enclosure(&mut r, length, &sources, &[])?;
            }
            ("demo", length)
        }
    };

    // The budget test (the library's harness): the schedule (one budget with `--budget`), the
    // frames' records, events, acts and the verdict. The scene and the camera are this runner's.
    let schedule = Schedule {
        frames: sc.frames,
        budget: match opts.budget {
            Some(b) => vec![BudgetKey {
                frame: 0,
                bytes: b.into(),
            }],
            None => sc.budget.clone(),
        },
        expect: sc.expect.clone(),
        act: sc.act.clone(),
    };
    let mut test = BudgetTest::new(schedule);
    {
        let report = test.report_mut();
        report.adapter = adapter;
        report.budget_source = format!(
            "{}; the adapter's memory: {}",
            if opts.budget.is_some() {
                "--budget"
            } else {
                "the scenario's schedule"
            },
            r.context()
                .adapter_memory()
                .map_or("not known (no Vulkan query)", |m| m.source)
        );
        report.budget_bytes_max = opts.budget.unwrap_or_else(|| sc.budget_max());
        report.scenario = opts.name.clone();
        report.size = sc.size;
        report.textures = r.streamer().texture_count() as u64;
        report.skipped_textures = skipped
            .into_iter()
            .map(|(p, reason)| SkippedTexture {
                path: p.display().to_string(),
                reason,
            })
            .collect();
        report.frames.reserve(sc.frames as usize);
    }
    r.set_budget(Budget::bytes(budget_at(0)));
    let mut last_monitor = Instant::now();
    let mut budget_now = budget_at(0);
    // Events `--monitor` has printed (or let go: the ring keeps the last ones).
    let mut printed = 0u64;
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
                test.fail(format!("frame {frame} could not be rendered: {e}"));
                break;
            }
        };
        let frame_ms = t0.elapsed().as_secs_f64() * 1e3;
        test.record(frame, &stats, frame_ms);
        // Levels that cannot be read: named in the report once, and counted per frame while
        // the view wants them (the table is gathered only once an error has been seen).
        if stats.stream.io_errors > 0 || !test.report_mut().unreadable_textures.is_empty() {
            let infos = r.streamer().texture_infos();
            let report = test.report_mut();
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
        // `--monitor`: each event once, in order, once it is final (a scale change or a wave
        // with its whole size: printed as it started, a drop that ended at 0.69 read "scale
        // 1.00 -> 0.94"); the last frame prints what is still open.
        if opts.monitor {
            let (events, offset) = (test.events(), test.frame_offset());
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
        if opts.monitor && (last_monitor.elapsed().as_secs_f32() >= 1.0 || frame + 1 == sc.frames) {
            last_monitor = Instant::now();
            crate::say(format_args!(
                "{}",
                monitor_line(frame, b, &stats.ledger, stats.render_scale)
            ));
        }
    }
    let report = test.finish();
    drop(view);
    drop(output);
    Ok(report)
}

/// The gallery of `dir`, streamed; when every file was refused (each in `skipped`), an empty
/// scene, so that the run still writes its report with the refusals and fails its verdict.
fn gallery_or_skips(
    r: &mut Renderer,
    dir: &std::path::Path,
    skipped: &mut Vec<(std::path::PathBuf, String)>,
) -> crate::error::Result<f32> {
    match scenes::build_gallery_with_skips(r, dir, scenes::Residency::Streamed, skipped) {
        Err(crate::error::Error::Scenario(_)) if !skipped.is_empty() => Ok(0.0),
        other => other,
    }
}
