//! The budget test's report (JSON), the one `mipflow headless` writes too. Its fields are a
//! contract, documented in the guide (headless CI): add, never rename.

use serde::{Deserialize, Serialize};

use crate::ByCategory;

/// One frame of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    /// Frame index, from 0.
    pub frame: u64,
    /// The budget in force.
    pub budget_bytes: u64,
    /// The ledger's peak total inside the frame (transients included).
    pub total_bytes: u64,
    /// Bytes per category at the end of the frame.
    pub by_category: ByCategory<u64>,
    /// Render scale per axis.
    pub render_scale: f64,
    /// Bytes uploaded from the CPU this frame.
    pub uploaded_bytes: u64,
    /// Bytes of the wanted levels that are resident.
    pub resident_mip_bytes: u64,
    /// Bytes of the levels the view wants.
    pub wanted_mip_bytes: u64,
    /// Bytes of the wanted levels the plan targets under the budget.
    #[serde(default)]
    pub target_mip_bytes: u64,
    /// Required or forced levels the budget could not hold this frame.
    #[serde(default)]
    pub unmet_required: u32,
    /// CPU time of the frame, milliseconds (submit to submit).
    pub frame_ms: f64,
    /// Whether `total_bytes > budget_bytes`.
    #[serde(default)]
    pub over_budget: bool,
    /// The planner's blur figure: pixel-octaves still missing.
    #[serde(default)]
    pub quality_cost: f64,
    /// Microseconds the planner took.
    #[serde(default)]
    pub planner_us: f64,
    /// When the driver ran out of memory below the budget: the effective budget it set (what the
    /// driver really gave); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_cap_bytes: Option<u64>,
    /// Out-of-memory errors from the driver this frame.
    #[serde(default)]
    pub oom_events: u32,
    /// GPU feedback: frames between the feedback in use and this frame; absent before the
    /// first readback, or with feedback off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_latency_frames: Option<u64>,
    /// GPU feedback: output pixels the feedback in use covers (0 without).
    #[serde(default)]
    pub feedback_pixels: f64,
    /// GPU feedback: bytes this frame's readback copied back (the slots it drew, gathered: not
    /// a figure of the slots registered; 0 with feedback off or a frame skipped).
    #[serde(default)]
    pub feedback_readback_bytes: u64,
    /// Textures that gave up levels this frame (shrinks and evictions).
    #[serde(default)]
    pub evictions: u32,
    /// Bytes those gave back.
    #[serde(default)]
    pub freed_bytes: u64,
    /// Grows completed this frame (textures that gained their wanted levels).
    #[serde(default)]
    pub grows: u32,
    /// Grows cancelled this frame.
    #[serde(default)]
    pub cancels: u32,
    /// Of those, cancelled after their data had been read (the levels are kept for a while:
    /// see `reused_reads`).
    #[serde(default)]
    pub cancels_after_arrival: u32,
    /// Grows whose levels came from an earlier cancelled grow's read, without IO.
    #[serde(default)]
    pub reused_reads: u32,
    /// Reads asked for this frame, and of those, the ones made straight into upload staging
    /// (`StreamConfig::staged_reads`).
    #[serde(default)]
    pub io_requests: u32,
    /// See `io_requests`.
    #[serde(default)]
    pub staged_reads: u32,
    /// Texture blur on screen after the frame's uploads: pixels times the octaves their
    /// resident level is coarser than the current view wants (`FrameStats::blur_pixel_octaves`).
    #[serde(default)]
    pub blur_pixel_octaves: f64,
    /// Why the render scale changed this frame (`memory_down`, `memory_up`, ...), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_reason: Option<String>,
    /// Textures whose wanted level is finer than what they hold and cannot be read (a level
    /// failed to read or decode): the view will not get them.
    #[serde(default)]
    pub unreadable_wanted: u32,
    /// The process's resident memory (Linux `VmRSS`), sampled every [`RSS_EVERY`] frames and
    /// on the last; absent on other frames and systems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// PSNR (dB, RGB) of the frame against the game's reference render with everything
    /// resident, when the test compared it ([`crate::harness::BudgetTest::check_psnr`]);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psnr_db: Option<f64>,
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it, synced, then
/// renamed over it.
pub(crate) fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("output");
    let tmp = dir.join(format!(".{name}.{}.part", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Frames between two samples of [`FrameRecord::rss_bytes`].
pub const RSS_EVERY: u64 = 100;

/// This process's resident memory now (`VmRSS` of `/proc/self/status`), bytes; `None` off Linux.
pub fn rss_bytes() -> Option<u64> {
    proc_status_bytes("VmRSS:")
}

/// This process's peak resident set size (`/proc/self/status` `VmHWM`), bytes; `None` off Linux.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_status_bytes("VmHWM:")
}

/// A figure in KiB of this process's `/proc/self/status`, in bytes.
fn proc_status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A texture that was not added to the scene (it could not be opened or is not a valid KTX2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkippedTexture {
    /// The file.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// A texture one of whose levels could not be read or decoded while streaming (it keeps what
/// it had).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnreadableTexture {
    /// Its label (the file name).
    pub label: String,
    /// The error.
    pub reason: String,
    /// The first frame the error was seen.
    pub frame: u64,
}

/// One event of the run ([`crate::EventLog`]): a budget change, a scale change, a wave of
/// evictions or re-streaming, an out-of-memory error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// First frame.
    pub frame: u64,
    /// Last frame merged into it.
    pub last_frame: u64,
    /// `budget`, `scale`, `evictions`, `restreams` or `out_of_memory`.
    pub kind: String,
    /// The event in words, with the bytes it moved and why.
    pub text: String,
}

/// One act of a story scenario, with what the budget moved during it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActRecord {
    /// First frame.
    pub frame: u64,
    /// Last frame.
    pub last_frame: u64,
    /// The scenario's title.
    pub title: String,
    /// What the budget moved ("budget 20.0 -> 12.0 MiB: scale 1.00 -> 0.69 frees ...").
    pub caption: String,
    /// Lowest render scale of the act.
    pub render_scale_min: f64,
    /// Render scale at its last frame.
    pub render_scale_end: f64,
    /// Level drops (shrinks and evictions) during the act.
    pub drops: u64,
    /// Grows completed during the act.
    pub grows: u64,
}

/// A whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The adapter (name and backend).
    pub adapter: String,
    /// The highest budget of the schedule.
    pub budget_bytes_max: u64,
    /// Where the budget comes from, and the adapter's memory figures' source
    /// ("VK_EXT_memory_budget", the heap size, ...).
    #[serde(default)]
    pub budget_source: String,
    /// The highest `total_bytes` of any frame.
    pub peak_bytes: u64,
    /// Frames whose `total_bytes` passed their `budget_bytes`.
    pub violations: u64,
    /// Every frame.
    pub frames: Vec<FrameRecord>,
    /// The scenario file, or `"default"`.
    #[serde(default)]
    pub scenario: String,
    /// `"pass"` or `"fail"`.
    #[serde(default)]
    pub verdict: String,
    /// Why the verdict failed (budget violations, assertions), one line each.
    #[serde(default)]
    pub failures: Vec<String>,
    /// Whether the planner reported the budget too small for the floors on any frame.
    #[serde(default)]
    pub budget_too_small: bool,
    /// Output size.
    #[serde(default)]
    pub size: [u32; 2],
    /// Mean `frame_ms`.
    #[serde(default)]
    pub mean_frame_ms: f64,
    /// Streamed textures in the scene.
    #[serde(default)]
    pub textures: u64,
    /// Events: budget and scale changes, eviction and re-streaming waves, out-of-memory errors.
    #[serde(default)]
    pub events: Vec<EventRecord>,
    /// The scenario's acts, with their captions.
    #[serde(default)]
    pub acts: Vec<ActRecord>,
    /// Textures skipped at registration (each fails the verdict).
    #[serde(default)]
    pub skipped_textures: Vec<SkippedTexture>,
    /// Textures with levels that could not be read (each fails the verdict).
    #[serde(default)]
    pub unreadable_textures: Vec<UnreadableTexture>,
    /// The process's peak resident memory when the report was finished (`VmHWM`, Linux;
    /// absent elsewhere): the CPU side of the run, refusals and set-up included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

impl Report {
    /// Whether the verdict is a pass.
    pub fn passed(&self) -> bool {
        self.verdict == "pass"
    }

    /// Writes the report as JSON (pretty, as `mipflow headless --report` does) to `path`,
    /// whole or not at all: into a temporary file beside it, renamed over it once complete.
    pub fn write_json(&self, path: &std::path::Path) -> crate::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other);
        json.and_then(|bytes| write_whole(path, &bytes))
            .map_err(|e| crate::Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
    }

    /// Recomputes `peak_bytes`, `violations` and `mean_frame_ms` from the frames.
    pub fn summarise(&mut self) {
        self.peak_bytes = self.frames.iter().map(|f| f.total_bytes).max().unwrap_or(0);
        self.violations = self.frames.iter().filter(|f| f.over_budget).count() as u64;
        self.mean_frame_ms = if self.frames.is_empty() {
            0.0
        } else {
            self.frames.iter().map(|f| f.frame_ms).sum::<f64>() / self.frames.len() as f64
        };
    }

    /// The one-line verdict `mipflow headless` prints on stderr (`verdict: PASS: ...` or
    /// `verdict: FAIL: ...`). A pass may have frames over budget when the scenario allows them
    /// (`max_violations`): the line then gives their count and does not call the peak within
    /// the budget.
    pub fn verdict_line(&self) -> String {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        if self.verdict == "pass" {
            let within = if self.violations == 0 {
                "within"
            } else {
                "against"
            };
            format!(
                "verdict: PASS: {} frames, peak {:.1} MiB {within} budget {:.1} MiB, {} violations, {:.2} ms/frame",
                self.frames.len(),
                mib(self.peak_bytes),
                mib(self.budget_bytes_max),
                self.violations,
                self.mean_frame_ms
            )
        } else {
            format!(
                "verdict: FAIL: {} ({} frames, peak {:.1} MiB, {} violations)",
                self.failures.join("; "),
                self.frames.len(),
                mib(self.peak_bytes),
                self.violations
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass with frames over budget that the scenario allowed says how many, and does not
    /// call its peak within the budget (it printed "0 violations" whatever the count).
    #[test]
    fn a_pass_with_allowed_violations_says_how_many() {
        let mut r = Report {
            verdict: "pass".into(),
            peak_bytes: 12 << 20,
            budget_bytes_max: 10 << 20,
            ..Report::default()
        };
        r.violations = 3;
        let line = r.verdict_line();
        assert!(line.starts_with("verdict: PASS: "), "{line}");
        assert!(line.contains(", 3 violations,"), "{line}");
        assert!(
            line.contains("peak 12.0 MiB against budget 10.0 MiB"),
            "{line}"
        );
        r.violations = 0;
        r.peak_bytes = 8 << 20;
        let line = r.verdict_line();
        assert!(
            line.contains("peak 8.0 MiB within budget 10.0 MiB, 0 violations"),
            "{line}"
        );
        r.verdict = "fail".into();
        r.failures = vec!["a".into(), "b".into()];
        assert!(r.verdict_line().starts_with("verdict: FAIL: a; b ("));
    }
}
