//! Budget tests for any renderer, in a game's own CI (feature `harness`): the game runs its own
//! loop and hands each frame's [`FrameStats`] to a [`BudgetTest`]; the test applies a
//! [`Schedule`] of budget changes, checks what a `mipflow headless` scenario checks (no frame
//! over budget, the render scale within bounds, every wanted level resident by a frame, the
//! budget above the floors, no leak at the end), and writes the same JSON [`Report`] and verdict
//! line as `mipflow headless`, which is itself a user of this module. No window, UI or C++
//! dependency: serde and serde_json, which mipflow uses anyway. The plot of `mipflow headless
//! --plot` ([`write_plot`]) is behind the feature `harness-plot`, which brings plotters and
//! image's PNG encoder.
//!
//! ```no_run
//! use mipflow::harness::{BudgetTest, Expect, Schedule};
//! # fn run(manager: &mut mipflow::BudgetManager) -> mipflow::Result<()> {
//! // 300 frames: 256 MiB, squeezed to 24 MiB from frame 100, back at 200.
//! let schedule = Schedule::new(300)
//!     .budget_from(0, 256 << 20)
//!     .budget_from(100, 24 << 20)
//!     .budget_from(200, 256 << 20)
//!     .expect(Expect { frame: 299, min_render_scale: Some(1.0), ..Expect::default() });
//! let mut test = BudgetTest::new(schedule);
//! for frame in 0..test.frames() {
//!     if let Some(budget) = test.budget_change(frame) {
//!         manager.set_budget(budget);
//!     }
//!     // ... the game's frame: demand, manager.frame(..), draw, submit, end_frame ...
//!     # let plan = manager.frame((640, 360), Default::default())?;
//!     # manager.end_frame();
//!     let stats = manager.frame_stats(&plan, Default::default());
//!     test.record(frame, &stats, 16.0);
//! }
//! test.check_leaks(&manager.context().leak_report());
//! let report = test.finish();
//! report.write_json("target/budget-report.json".as_ref())?;
//! assert!(report.passed(), "{}", report.verdict_line());
//! # Ok(()) }
//! ```

mod gpu;
#[cfg(feature = "harness-plot")]
mod plot;
mod report;
mod schedule;

pub use gpu::{adapter_or_skip, gpu_required};
#[cfg(feature = "harness-plot")]
pub use plot::{plot_rgb, write_plot};
pub use report::{
    ActRecord, EventRecord, FrameRecord, RSS_EVERY, Report, SkippedTexture, UnreadableTexture,
    rss_bytes,
};
pub use schedule::{Act, BudgetKey, Expect, Schedule, SizeValue};

use crate::{Budget, Category, EventLog, FrameStats, LiveAllocation, Tally, format_bytes};

/// One budget test: the schedule, and the report it fills frame by frame (see the module
/// documentation).
#[derive(Debug)]
pub struct BudgetTest {
    schedule: Schedule,
    report: Report,
    events: EventLog,
    tally: Tally,
    prev: Option<FrameStats>,
    too_small_at: Option<u64>,
    floor_bytes: u64,
    /// Failures noted before the verdict (a frame that could not be rendered, leaks).
    early: Vec<String>,
    late: Vec<String>,
    /// The manager's frame number minus the test's, once seen (events are numbered as the
    /// report's frames).
    offset: u64,
}

impl BudgetTest {
    /// A test of `schedule` (check it first with [`Schedule::validate`] when it comes from a
    /// file).
    pub fn new(schedule: Schedule) -> Self {
        let report = Report {
            budget_bytes_max: schedule.budget_max(),
            scenario: "budget test".into(),
            ..Report::default()
        };
        Self {
            report,
            schedule,
            events: EventLog::new(),
            tally: Tally::default(),
            prev: None,
            too_small_at: None,
            floor_bytes: 0,
            early: Vec::new(),
            late: Vec::new(),
            offset: 0,
        }
    }

    /// The frames the schedule runs.
    pub fn frames(&self) -> u64 {
        self.schedule.frames
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The budget in force at `frame`.
    pub fn budget_at(&self, frame: u64) -> u64 {
        self.schedule.budget_at(frame)
    }

    /// The budget to set before `frame`, when it differs from the frame before's (at frame 0,
    /// always): give it to `BudgetManager::set_budget` (or `Renderer::set_budget`).
    pub fn budget_change(&self, frame: u64) -> Option<Budget> {
        let now = self.budget_at(frame);
        (frame == 0 || now != self.budget_at(frame - 1)).then(|| Budget::bytes(now))
    }

    /// The report so far: its header fields (adapter, scenario name, size, textures) are the
    /// caller's to fill, and so are the textures it skipped or could not read.
    pub fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// The events so far (budget and scale changes, eviction and re-streaming waves).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The manager's frame number minus the test's (events are numbered by the manager).
    pub fn frame_offset(&self) -> u64 {
        self.offset
    }

    /// Records frame `frame` (from 0) from its stats (taken after its last submit) and the
    /// caller's measure of its time, in ms. Returns the frame's record, for the figures only
    /// the caller knows (`unreadable_wanted`).
    pub fn record(&mut self, frame: u64, stats: &FrameStats, frame_ms: f64) -> &mut FrameRecord {
        let b = self.budget_at(frame);
        if stats.budget_too_small && self.too_small_at.is_none() {
            self.too_small_at = Some(frame);
            self.floor_bytes = stats.floor_bytes;
        }
        let mut by = crate::ByCategory::<u64>::default();
        for c in Category::ALL {
            *by.get_mut(c) = stats.ledger.by_category.get(c).bytes;
        }
        self.report.frames.push(FrameRecord {
            frame,
            budget_bytes: b,
            total_bytes: stats.frame_peak_bytes,
            by_category: by,
            render_scale: f64::from(stats.render_scale),
            uploaded_bytes: stats.stream.uploaded_bytes,
            resident_mip_bytes: stats.resident_mip_bytes,
            wanted_mip_bytes: stats.wanted_mip_bytes,
            target_mip_bytes: stats.target_mip_bytes,
            unmet_required: stats.unmet_required,
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
            rss_bytes: (frame.is_multiple_of(RSS_EVERY) || frame + 1 == self.schedule.frames)
                .then(rss_bytes)
                .flatten(),
            psnr_db: None,
        });
        // Events: the ring's events, copied as they start and as they grow, numbered as the
        // report's frames (the manager counts from 1).
        let offset = stats.frame.saturating_sub(frame);
        self.offset = offset;
        let seen = self.events.pushed();
        self.events.observe(stats);
        for n in seen.saturating_sub(EventLog::CAPACITY as u64)..self.events.pushed() {
            let Some(e) = self.events.get(n) else {
                continue;
            };
            let rec = EventRecord {
                frame: e.frame.saturating_sub(offset),
                last_frame: e.last_frame.saturating_sub(offset),
                kind: e.kind.name().to_owned(),
                text: e.to_string(),
            };
            match self.report.events.get_mut(n as usize) {
                Some(r) if r.last_frame != e.last_frame || r.text != rec.text => *r = rec,
                Some(_) => {}
                None => self.report.events.push(rec),
            }
        }
        // Acts: a tally from the frame before each act's first.
        match self.schedule.act_at(frame) {
            Some((i, act)) if i >= self.report.acts.len() => {
                let start = self.prev.as_ref().unwrap_or(stats);
                self.tally = Tally::start(start);
                self.report.acts.push(ActRecord {
                    frame: act.frame.max(frame),
                    title: act.title.clone(),
                    ..ActRecord::default()
                });
            }
            _ => {}
        }
        if let Some(a) = self.report.acts.last_mut() {
            self.tally.add(stats);
            a.last_frame = frame;
            a.caption = self.tally.to_string();
            a.render_scale_min = f64::from(self.tally.scale_min);
            a.render_scale_end = f64::from(self.tally.scale_to);
            a.drops = self.tally.drops;
            a.grows = self.tally.grows;
        }
        self.prev = Some(*stats);
        self.report.frames.last_mut().expect("just pushed")
    }

    /// Notes the PSNR (dB) of frame `frame` against the game's reference render of the same
    /// view with everything resident (the game renders and compares: `mipflow-cook`'s
    /// `compare::psnr_rgb` does it for RGBA8 readbacks), and fails the verdict when it is under
    /// `min_db` (or not a number: an image of the wrong size). False for a frame not recorded.
    pub fn check_psnr(&mut self, frame: u64, db: f64, min_db: f64) -> bool {
        let Some(rec) = self.report.frames.iter_mut().find(|f| f.frame == frame) else {
            return false;
        };
        rec.psnr_db = Some(db);
        // NaN (an image of the wrong size) fails too.
        if db.partial_cmp(&min_db).is_none_or(|o| o.is_lt()) {
            self.late.push(format!(
                "frame {frame}: {db:.2} dB against the all-resident reference, under {min_db} dB"
            ));
        }
        true
    }

    /// Fails the verdict with `message` (first among the failures): a frame that could not be
    /// rendered, say.
    pub fn fail(&mut self, message: impl Into<String>) {
        self.early.push(message.into());
    }

    /// Fails the verdict for every allocation still on the ledger, but those whose label is
    /// in `allowed` (`GpuContext::leak_report` once the game has dropped what it made, and the
    /// manager's own long-lived objects, such as its "missing-texture fallback"): a leak seen
    /// as bytes. Returns the bytes left.
    pub fn check_leaks_except(&mut self, live: &[LiveAllocation], allowed: &[&str]) -> u64 {
        let left: Vec<&LiveAllocation> = live
            .iter()
            .filter(|a| !allowed.contains(&a.label.as_str()))
            .collect();
        let bytes = left.iter().map(|a| a.bytes).sum();
        if let Some(first) = left.first() {
            self.late.push(format!(
                "{} allocation(s) left on the ledger at the end, {} (first: {} of {:?}, {})",
                left.len(),
                format_bytes(bytes),
                first.label,
                first.category,
                format_bytes(first.bytes)
            ));
        }
        bytes
    }

    /// [`BudgetTest::check_leaks_except`] with nothing allowed.
    pub fn check_leaks(&mut self, live: &[LiveAllocation]) -> u64 {
        self.check_leaks_except(live, &[])
    }

    /// The report with its verdict: `"pass"`, or `"fail"` with one line per failure (frames
    /// over budget beyond what the schedule allows, skipped or unreadable textures, a budget
    /// below the floors, each assertion that did not hold, leaks).
    pub fn finish(self) -> Report {
        let Self {
            schedule,
            mut report,
            too_small_at,
            floor_bytes,
            early,
            late,
            ..
        } = self;
        report.budget_too_small = too_small_at.is_some();
        report.peak_rss_bytes = report::peak_rss_bytes();
        // The highest budget in force in a frame of the run (the schedule's keys may start
        // after frame 0, under the default, or lie past the run's end).
        if let Some(max) = report.frames.iter().map(|f| f.budget_bytes).max() {
            report.budget_bytes_max = max;
        }
        report.summarise();
        let allowed = schedule
            .expect
            .iter()
            .filter_map(|e| e.max_violations)
            .min()
            .unwrap_or(0);
        report.failures.extend(early);
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
            report.failures.push(format!(
                "budget {} is below the floor at frame {f}: the fixed bytes, the smallest render targets and every texture's floor tail need {}; the run degraded (floors evicted)",
                format_bytes(schedule.budget_at(f)),
                format_bytes(floor_bytes)
            ));
        }
        for e in &schedule.expect {
            check_expect(e, &report.frames, too_small_at, &mut report.failures);
        }
        report.failures.extend(late);
        report.verdict = if report.failures.is_empty() {
            "pass"
        } else {
            "fail"
        }
        .into();
        report
    }
}

/// The failures of one assertion against the frames recorded.
fn check_expect(
    e: &Expect,
    frames: &[FrameRecord],
    too_small_at: Option<u64>,
    failures: &mut Vec<String>,
) {
    let Some(rec) = frames.iter().find(|f| f.frame == e.frame) else {
        failures.push(format!(
            "expect at frame {}: the run has only {} frames",
            e.frame,
            frames.len()
        ));
        return;
    };
    if let Some(m) = e.min_render_scale
        && rec.render_scale < m
    {
        failures.push(format!(
            "frame {}: render scale {:.4} < expected minimum {m}",
            e.frame, rec.render_scale
        ));
    }
    if let Some(m) = e.max_render_scale
        && rec.render_scale > m
    {
        failures.push(format!(
            "frame {}: render scale {:.4} > expected maximum {m}",
            e.frame, rec.render_scale
        ));
    }
    if e.all_wanted_resident == Some(true) && rec.unreadable_wanted > 0 {
        failures.push(format!(
            "frame {}: {} texture(s) want levels that cannot be read",
            e.frame, rec.unreadable_wanted
        ));
    } else if e.all_wanted_resident == Some(true) && rec.resident_mip_bytes < rec.wanted_mip_bytes {
        failures.push(format!(
            "frame {}: not every wanted mip is resident ({} of {})",
            e.frame,
            format_bytes(rec.resident_mip_bytes),
            format_bytes(rec.wanted_mip_bytes)
        ));
    }
    match e.max_total_bytes.as_ref().map(SizeValue::bytes) {
        Some(Ok(m)) if rec.total_bytes > m => failures.push(format!(
            "frame {}: total {} > expected maximum {}",
            e.frame,
            format_bytes(rec.total_bytes),
            format_bytes(m)
        )),
        Some(Err(err)) => failures.push(format!("expect at frame {}: {err}", e.frame)),
        _ => {}
    }
    if let Some(want) = e.budget_too_small {
        let seen = too_small_at.is_some_and(|f| f <= e.frame);
        if seen != want {
            failures.push(format!(
                "frame {}: budget_too_small is {seen}, expected {want}",
                e.frame
            ));
        }
    }
}
