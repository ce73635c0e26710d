//! `mipflow bench`: mipflow against its two baselines, on the same scene, camera path and machine,
//! in one run.
//!
//! Three modes, each on its own [`GpuContext`] and [`Renderer`]:
//! - (a) `rgba8`: every texture fully resident as uncompressed RGBA8, full resolution (the naive
//!   baseline);
//! - (b) `bc7`: every texture fully resident as BC7, full resolution;
//! - (c) `mipflow`: streaming and dynamic resolution under the budget.
//!
//! They render **interleaved frame by frame** (a, b, c, a, b, c, ...), so that the drift of a
//! shared, noisy machine (other processes, lavapipe's thread pool, caches) hits all three alike:
//! the ratios between modes are the figures to trust, more than the absolute times. A frame's
//! time is the wall time of [`Renderer::render`] plus [`GpuContext::wait_idle`], so that GPU work
//! counts on a software rasteriser too; frame 0 is left out of the percentiles and reported in the
//! time to first frame instead.
//!
//! Per mode: peak VRAM per category (the ledger, cross-checked against wgpu's allocator report),
//! p50/p95/p99 frame time, time to first frame (renderer creation, scene build and first frame),
//! uploaded bytes, and the image quality of (b) and (c) against (a) (PSNR and SSIM of the output
//! read back every `--quality-every` frames). Then, for the same table: planner microseconds per
//! frame at 10k textures, upload MB/s against memcpy MB/s, and cook megapixels/s and PSNR per
//! quality. Writes `bench.json`, `bench.md` and `bench.png`.
//!
//! The default budget of (c) is a quarter of (b)'s texture footprint, the setting the bench's goals
//! are stated for.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde::{Deserialize, Serialize};

mod chart;
mod figures;
mod markdown;
mod modes;
mod options;
pub mod sweep;
#[cfg(test)]
mod tests;

pub use chart::write_chart;
pub use figures::{cook_bench, planner_bench, upload_bench};
pub use markdown::markdown;
pub use modes::run;
pub use options::{BenchOptions, BudgetRule, DEFAULT_TOUR_SPEED};
#[allow(unused_imports)]
use {chart::*, figures::*, markdown::*, modes::*};

use crate::error::{Error, Result};
use crate::headless::Scenario;
use crate::scenes;
use crate::scenes::Residency;
use mipflow::BucketRange;
use mipflow::ByCategory;
use mipflow::Camera;
use mipflow::StreamConfig;
use mipflow::{Budget, Category};
use mipflow::{FrameInput, Renderer, RendererConfig, TextureSource};
use mipflow::{GpuConfig, GpuContext, TrackedTexture};
use mipflow_cook::{CookOptions, Quality};

/// Default output size. Why this small: lavapipe rasterises on the CPU, and three modes render
/// every frame; at 640x360 the default run stays well under the 10 minutes allowed on a
/// 2-core machine, while the render targets stay small next to the textures, so that the texture
/// strategy, not the targets, decides each mode's VRAM.
pub const DEFAULT_SIZE: (u32, u32) = (640, 360);
/// Default frames per mode: one tour of the demo hall.
pub const DEFAULT_FRAMES: u64 = 120;
/// Default texture count of the demo scene.
pub const DEFAULT_COUNT: u32 = 64;
/// Default largest texture side of the demo scene. Why 2048: (b)'s footprint (about 56 MiB) must
/// dwarf the render targets and the floors, or a quarter of it would not even hold them.
pub const DEFAULT_TEXTURE_SIZE: u32 = 2048;
/// Default anisotropy. Why 1: on lavapipe 8x costs several times the frame time of 1x, in every
/// mode alike, which would only make the run longer; on a real GPU pass `--anisotropy 8`.
pub const DEFAULT_ANISOTROPY: u16 = 1;
/// Budget of the fully resident baselines: unlimited in effect (they do not stream, and their
/// single full-resolution bucket must never be refused).
const UNLIMITED: u64 = 1 << 50;
/// PSNR reported for identical images (and anything closer), so that the JSON holds numbers only.
pub const PSNR_CAP_DB: f64 = 100.0;
const MIB: f64 = 1024.0 * 1024.0;

/// Arguments of `mipflow bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Scenario file (TOML): scene, output size, frames, camera path, budget schedule, minimum
    /// scale and anisotropy are taken from it (flags win). Without it: the demo scene.
    #[arg(long, conflicts_with = "textures")]
    pub scenario: Option<PathBuf>,
    /// Show this folder of .ktx2 and .dds files as a gallery instead of the demo scene.
    #[arg(long)]
    pub textures: Option<PathBuf>,
    /// Budget of mode (c) ("12MiB", bytes). Default: the scenario's schedule when it has one, else
    /// a quarter of (b)'s texture footprint.
    #[arg(long, value_name = "SIZE", value_parser = crate::size_arg)]
    pub budget: Option<u64>,
    /// Frames per mode (default 120, or the scenario's).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Where bench.json, bench.md and bench.png are written.
    #[arg(long, default_value = "bench-out")]
    pub out: PathBuf,
    /// Output size, WxH (default 640x360, or the scenario's).
    #[arg(long, value_name = "WxH", value_parser = crate::wxh_arg)]
    pub size: Option<(u32, u32)>,
    /// Demo scene: how many textures (default 64).
    #[arg(long)]
    pub count: Option<u32>,
    /// Demo scene: the largest texture side, 64 to 8192 (default 2048).
    #[arg(long)]
    pub texture_size: Option<u32>,
    /// Seed of the procedural scene.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Anisotropic filtering, 1 to 16 (default 1: see the crate's BENCHMARKS.md for why).
    #[arg(long)]
    pub anisotropy: Option<u16>,
    /// Read the outputs back and compare them every N frames (1: every frame).
    #[arg(long, default_value_t = 1)]
    pub quality_every: u64,
    /// Stream as a game does (IO never blocks a frame) instead of deterministically (each frame
    /// waits for the reads it issued before, so that every run streams the same way).
    #[arg(long)]
    pub async_io: bool,
    /// Do not prefetch (c)'s first view before frame 0 (`Renderer::prefetch`, what a game does
    /// behind its loading screen): frame 0 then shows only the floor tails.
    #[arg(long)]
    pub no_prefetch: bool,
    /// Textures in the planner measurement.
    #[arg(long, default_value_t = 10_000)]
    pub planner_textures: usize,
    /// The default tour's speed, world units a frame (averaged over the tour; the report states
    /// the measured mean and maximum). The tour goes down the hall and back, as far as this
    /// speed takes it in `--frames` (at most the hall's length): its speed does not depend on
    /// the texture count. Ignored when the scenario has its own camera keys.
    #[arg(long, value_name = "UNITS", default_value_t = DEFAULT_TOUR_SPEED)]
    pub speed: f32,
    /// Budget sweep: after the main run, the tour again at each budget 1/N of (a)'s peak VRAM
    /// (N from this comma-separated list; `--sweep` alone: 8,12,16,24,32,48,64), with feedback
    /// off, on, and with histograms; reports the smallest budget at which every compared frame
    /// stays >= 40 dB against (a), and pop-in after a camera cut. Writes `sweep.png` too.
    #[arg(long, value_name = "N,N,...", num_args = 0..=1, default_missing_value = "8,12,16,24,32,48,64")]
    pub sweep: Option<String>,
    /// Smaller micro-benchmarks (fewer planner frames, a small upload, one small image to cook):
    /// for tests and quick looks, not for BENCHMARKS.md.
    #[arg(long)]
    pub quick: bool,
}

/// The three modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// (a) Every texture fully resident as RGBA8, full resolution.
    Rgba8,
    /// (b) Every texture fully resident as BC7, full resolution.
    Bc7,
    /// (c) mipflow: streamed under the budget, dynamic resolution.
    Mipflow,
    /// (d) (c) with GPU feedback off: demand from the CPU estimate alone (the cost and the
    /// worth of feedback, side by side in the same run).
    MipflowNoFeedback,
    /// (e) (c) with the scene's floor streamed tile by tile (a virtual texture): run only for a
    /// scenario whose demo scene has `floor_tiles`, where (a) to (d) draw that floor as a
    /// texture like the others.
    Tiles,
}

impl Mode {
    /// The four, in table order.
    pub const ALL: [Mode; 4] = [
        Mode::Rgba8,
        Mode::Bc7,
        Mode::Mipflow,
        Mode::MipflowNoFeedback,
    ];

    /// Whether the mode streams under the budget ((c) and (d)).
    pub fn streamed(self) -> bool {
        matches!(self, Mode::Mipflow | Mode::MipflowNoFeedback | Mode::Tiles)
    }

    /// The column title.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Rgba8 => "(a) RGBA8, all resident",
            Mode::Bc7 => "(b) BC7, all resident",
            Mode::Mipflow => "(c) mipflow, streamed",
            Mode::MipflowNoFeedback => "(d) mipflow, feedback off",
            Mode::Tiles => "(e) mipflow, floor as tiles",
        }
    }

    fn residency(self) -> Residency {
        match self {
            Mode::Rgba8 => Residency::FullRgba8,
            Mode::Bc7 => Residency::FullBc7,
            Mode::Mipflow | Mode::MipflowNoFeedback | Mode::Tiles => Residency::Streamed,
        }
    }
}

/// Nearest-rank percentiles and the mean of a set of times (ms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Mean.
    pub mean: f64,
}

impl Percentiles {
    /// Of `values` (nearest rank: the smallest value with at least p% of the values at or below
    /// it). Empty gives zeros.
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let at = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Self {
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
            mean: v.iter().sum::<f64>() / v.len() as f64,
        }
    }
}

/// One frame of one mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameSample {
    /// Frame index, from 0.
    pub frame: u64,
    /// Wall time of `render()` plus `wait_idle()`, ms.
    pub frame_ms: f64,
    /// GPU time from timestamps where the adapter has them, ms.
    pub gpu_ms: Option<f64>,
    /// The ledger's peak total inside the frame.
    pub total_bytes: u64,
    /// Bytes per category at the end of the frame.
    pub by_category: ByCategory<u64>,
    /// The budget in force (mode (c) only).
    pub budget_bytes: Option<u64>,
    /// Render scale per axis.
    pub render_scale: f64,
    /// Bytes uploaded by the streamer this frame.
    pub uploaded_bytes: u64,
    /// Bytes of the wanted levels that are resident (mode (c)).
    pub resident_mip_bytes: u64,
    /// Bytes of the levels the view wants (mode (c)).
    pub wanted_mip_bytes: u64,
    /// Planner time, µs.
    pub planner_us: f64,
    /// PSNR (RGB) of this mode's output against (a)'s, dB, capped at [`PSNR_CAP_DB`]; `None`
    /// for (a) and for frames not compared.
    pub psnr_db: Option<f64>,
    /// SSIM (luma) against (a)'s output; `None` for (a) and for frames not compared.
    pub ssim: Option<f64>,
    /// Texture blur on screen after the frame's uploads, pixel-octaves (see
    /// `mipflow::FrameStats::blur_pixel_octaves`; 0 for the baselines, all resident).
    #[serde(default)]
    pub blur_pixel_octaves: f64,
}

/// A figure of a mode divided by the same figure of (a).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// Peak VRAM.
    pub peak_bytes: f64,
    /// Median frame time.
    pub frame_ms_p50: f64,
    /// 99th percentile frame time.
    pub frame_ms_p99: f64,
    /// Time to first frame.
    pub time_to_first_frame: f64,
    /// Uploaded bytes.
    pub uploaded_bytes: f64,
}

/// Everything measured for one mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeSummary {
    /// The mode.
    pub mode: Option<Mode>,
    /// (c) only: the prefetch of the first view during set-up (its time is in `setup_ms`).
    pub prefetch: Option<mipflow::Prefetch>,
    /// Column title.
    pub title: String,
    /// The ledger's peak total over the run: the set-up's result (once its uploads are on the
    /// GPU) and every frame; the bench's own readback and the set-up's transient upload staging
    /// (in `setup_staging_peak_bytes`) excluded, so that it compares what each mode keeps.
    pub peak_bytes: u64,
    /// The ledger's `staging` peak during the set-up: the copies wgpu holds of the set-up's
    /// uploads until the GPU has them (the baselines' whole chains; (c)'s floors).
    #[serde(default)]
    pub setup_staging_peak_bytes: u64,
    /// Each category's own peak over the run.
    pub peak_by_category: ByCategory<u64>,
    /// The highest allocator-report figure (allocated bytes above the fresh device's), sampled
    /// after set-up (before its first submit, so wgpu's staging copies of the set-up uploads are
    /// in it) and after every frame; `None` where the backend gives no report.
    pub allocator_peak_bytes: Option<u64>,
    /// The ledger's total at the sample where the allocator report peaked.
    pub ledger_at_allocator_peak_bytes: Option<u64>,
    /// The largest difference, allocator minus ledger, over the samples taken with the GPU idle
    /// and no upload pending (after the set-up's flush and after every frame).
    pub allocator_max_diff_bytes: Option<i64>,
    /// Frame times (frame 0 excluded when there is more than one frame).
    pub frame_ms: Percentiles,
    /// Median GPU time from timestamps, where available.
    pub gpu_ms_p50: Option<f64>,
    /// Renderer creation and scene build, ms.
    pub setup_ms: f64,
    /// Set-up plus frame 0, ms.
    pub time_to_first_frame_ms: f64,
    /// Texture bytes uploaded at set-up (the baselines' whole chains; (c)'s floors).
    pub setup_uploaded_bytes: u64,
    /// Bytes the streamer uploaded during the frames.
    pub streamed_uploaded_bytes: u64,
    /// Set-up plus streamed.
    pub uploaded_bytes: u64,
    /// Worst PSNR against (a) over the compared frames, dB.
    pub psnr_min_db: Option<f64>,
    /// Mean PSNR against (a), dB.
    pub psnr_mean_db: Option<f64>,
    /// Worst SSIM against (a).
    pub ssim_min: Option<f64>,
    /// Mean SSIM against (a).
    pub ssim_mean: Option<f64>,
    /// Frames compared.
    pub frames_compared: u64,
    /// Compared frames under 40 dB (the goal for (c) is none).
    pub frames_under_40db: u64,
    /// Frames whose in-frame peak passed the budget (mode (c)).
    pub frames_over_budget: u64,
    /// Frames whose budget could not hold the fixed bytes, the smallest render targets and
    /// every texture's floor tail together (the planner's `BudgetTooSmall`; mode (c)).
    #[serde(default)]
    pub budget_too_small_frames: u64,
    /// The most those needed in such a frame, bytes (0 when none).
    #[serde(default)]
    pub floor_bytes_max: u64,
    /// The highest budget in force (mode (c)).
    pub budget_bytes: Option<u64>,
    /// Lowest render scale.
    pub render_scale_min: f64,
    /// Mean render scale.
    pub render_scale_mean: f64,
    /// First frame at which every wanted level was resident (mode (c)).
    pub first_frame_all_wanted: Option<u64>,
    /// Median planner time in the real scene, µs.
    pub planner_us_p50: f64,
    /// Against (a).
    pub ratios: Ratios,
    /// Grows completed over the frames (the streamed modes).
    #[serde(default)]
    pub grows: u64,
    /// Grows cancelled over the frames.
    #[serde(default)]
    pub cancels: u64,
    /// Of those, cancelled after their data had arrived (IO thrown away).
    #[serde(default)]
    pub cancels_after_arrival: u64,
    /// The largest texture blur on screen of any frame, pixel-octaves.
    #[serde(default)]
    pub blur_max_pixel_octaves: f64,
    /// Every frame.
    pub frames: Vec<FrameSample>,
}

/// The machine the bench ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs available to the process.
    pub cpus: usize,
    /// CPU model (`/proc/cpuinfo`).
    pub cpu_model: String,
    /// Adapter name and backend.
    pub adapter: String,
    /// Driver and its version (for lavapipe: the Mesa and LLVM versions).
    pub driver: String,
    /// Kernel release.
    pub os: String,
    /// `debug` or `release` build of mipflow.
    pub profile: String,
}

/// What was rendered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SceneInfo {
    /// `demo`, `gallery` or `grid`.
    pub kind: String,
    /// The scenario file, or `default`.
    pub scenario: String,
    /// Textures in the scene.
    pub textures: u64,
    /// Output size.
    pub size: [u32; 2],
    /// Frames per mode.
    pub frames: u64,
    /// Anisotropic filtering.
    pub anisotropy: u16,
    /// Outputs compared every this many frames.
    pub quality_every: u64,
    /// Deterministic streaming (false with `--async-io`).
    pub deterministic: bool,
    /// How (c)'s budget was chosen.
    pub budget_rule: String,
    /// (b)'s texture footprint (every level of every texture as BC7).
    pub bc7_texture_bytes: u64,
    /// (a)'s texture footprint.
    pub rgba8_texture_bytes: u64,
    /// The camera's speed over the frames, world units a frame (measured from its positions):
    /// mean.
    #[serde(default)]
    pub camera_speed_mean: f64,
    /// The camera's largest move in one frame, world units.
    #[serde(default)]
    pub camera_speed_max: f64,
}

/// Planner time per frame on a synthetic scene, run to convergence first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlannerFigures {
    /// Textures.
    pub textures: usize,
    /// Frames planned and executed until nothing changed for 250 frames.
    pub converge_frames: u64,
    /// Frames timed in each measurement.
    pub frames_timed: u64,
    /// Steady view: mean µs per frame.
    pub steady_us_mean: f64,
    /// Steady view: 99th percentile µs.
    pub steady_us_p99: f64,
    /// Steady view: median µs per frame (the figure the goal is judged on: robust to the
    /// preemption of a shared machine, which the mean is not).
    pub steady_us_p50: f64,
    /// Every visible texture's wanted level moving each frame (re-planned every frame): mean µs.
    pub moving_us_mean: f64,
    /// The same with a full pass over every texture (`PlannerConfig::incremental = false`,
    /// the planner before incremental planning), same scene, same run: mean µs.
    #[serde(default)]
    pub moving_full_us_mean: f64,
    /// Moving, median µs per frame (robust to the preemption of a shared machine).
    #[serde(default)]
    pub moving_us_p50: f64,
    /// Moving with a full pass, median µs per frame.
    #[serde(default)]
    pub moving_full_us_p50: f64,
    /// Why the figures are missing or partial, if they are.
    pub note: Option<String>,
}

/// Upload throughput against memcpy of the same bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UploadFigures {
    /// What was uploaded.
    pub what: String,
    /// Bytes per repetition.
    pub bytes: u64,
    /// Repetitions timed.
    pub reps: u32,
    /// Every level written into the streamer's staging ring (its bands), the copies into the
    /// texture, submit, wait: MB/s (10^6 bytes).
    pub upload_mb_s: f64,
    /// `copy_from_slice` of the same levels: MB/s.
    pub memcpy_mb_s: f64,
    /// Upload over memcpy.
    pub ratio: f64,
    /// The whole path from the KTX2 file (in memory) to the texture, read into buffers of their
    /// own and then through the ring's bands (two CPU copies): MB/s. 0 without BC.
    #[serde(default)]
    pub read_upload_mb_s: f64,
    /// The same, read straight into a lent staging chunk (one CPU copy): MB/s. 0 without BC.
    #[serde(default)]
    pub staged_read_upload_mb_s: f64,
    /// `staged_read_upload_mb_s` over memcpy.
    #[serde(default)]
    pub staged_ratio: f64,
    /// The staged path as the streamer runs it: an IO thread reads each texture straight into
    /// staging while the render thread copies the previous one into its texture, submits and
    /// waits (the read overlaps the GPU's copy): MB/s. 0 without BC.
    #[serde(default)]
    pub streamed_upload_mb_s: f64,
    /// `streamed_upload_mb_s` over memcpy.
    #[serde(default)]
    pub streamed_ratio: f64,
    /// The same KTX2 file on disk (in the page cache): every level read into a lent staging
    /// chunk (on Unix its large levels with one `pread` each, straight into the chunk), the
    /// reads alone timed (no copy into the texture): the IO worker's part, MB/s. 0 without BC.
    #[serde(default)]
    pub file_read_mb_s: f64,
    /// The same reads through a `KtxReader` over the file, which go through the IO worker's
    /// bounce buffer (two CPU copies: what every file read did before the direct read), MB/s.
    /// 0 without BC.
    #[serde(default)]
    pub file_read_bounce_mb_s: f64,
    /// The same read from the file, then the copies into the texture, submit, wait: MB/s. 0
    /// without BC.
    #[serde(default)]
    pub file_upload_mb_s: f64,
}

/// Cook throughput and quality at one quality setting.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CookFigures {
    /// `fast`, `default` or `slow`.
    pub quality: String,
    /// Images cooked.
    pub images: usize,
    /// Megapixels of level 0, all images.
    pub megapixels: f64,
    /// Wall time of the whole cook (mips, BC7, every level), s.
    pub seconds: f64,
    /// Megapixels of level 0 per second.
    pub mp_per_s: f64,
    /// Mean RGB PSNR of level 0 after BC7, dB.
    pub psnr_mean_db: f64,
    /// Worst.
    pub psnr_min_db: f64,
}

/// One of the bench's goals, measured (never asserted).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// What.
    pub name: String,
    /// The measured figure, as text.
    pub measured: String,
    /// The goal, as text.
    pub target: String,
    /// Met, or `None` where it could not be measured.
    pub met: Option<bool>,
}

/// The whole bench (`bench.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The command line.
    pub command: String,
    /// The machine.
    pub machine: Machine,
    /// The scene and settings.
    pub scene: SceneInfo,
    /// (a), (b), (c).
    pub modes: Vec<ModeSummary>,
    /// Planner time at `--planner-textures`.
    pub planner: Option<PlannerFigures>,
    /// Upload against memcpy.
    pub upload: Option<UploadFigures>,
    /// Cook per quality.
    pub cook: Vec<CookFigures>,
    /// The budget sweep and pop-in after a cut (`--sweep`).
    pub sweep: Option<sweep::Sweep>,
    /// The bench's goals against the figures.
    pub goals: Vec<Goal>,
    /// Wall time of the whole bench, s.
    pub total_seconds: f64,
    /// What failed after the set-up (a frame of a mode, a sweep point, a micro-benchmark): the
    /// report holds everything measured before and beside it, and the command exits 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The files `mipflow bench` writes into its `--out` folder.
pub const OUTPUT_FILES: [&str; 4] = ["bench.json", "bench.md", "bench.png", "sweep.png"];

/// Writes `bench.json`, `bench.md` and `bench.png` into `dir` (created if needed).
pub fn write_outputs(r: &BenchReport, dir: &Path) -> Result<()> {
    let io = |path: PathBuf| move |source| Error::Io { path, source };
    std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
    // Each file whole or not at all (a run killed mid-write leaves the previous one).
    let json = dir.join("bench.json");
    crate::write_atomic(&json, |w| {
        serde_json::to_writer_pretty(w, r).map_err(std::io::Error::other)
    })
    .map_err(io(json.clone()))?;
    let md = dir.join("bench.md");
    crate::write_atomic(&md, |w| w.write_all(markdown(r).as_bytes())).map_err(io(md.clone()))?;
    if let Some(s) = &r.sweep {
        sweep::write_sweep_chart(s, &dir.join("sweep.png"))?;
    }
    write_chart(r, &dir.join("bench.png"), 1400, 900)
}

/// `mipflow bench`: exit 0 after writing the outputs, 2 on a usage error, 1 when the run failed.
pub fn run_bench(args: &BenchArgs) -> ExitCode {
    let opts = match BenchOptions::from_args(args) {
        Ok(o) => o,
        Err(msg) => {
            crate::say!("mipflow bench: {msg}");
            return ExitCode::from(2);
        }
    };
    // The output folder is made and checked before the run, not after it: each file it writes
    // is a regular file or nothing yet (not a link, a device, a pipe or a folder), and none is
    // an input of the run or lies in its texture folder.
    let files = OUTPUT_FILES.map(|f| args.out.join(f));
    let outputs: Vec<(&str, &Path)> = files.iter().map(|p| ("--out", p.as_path())).collect();
    let inputs: Vec<(&str, &Path)> = [
        args.scenario.as_deref().map(|p| ("scenario", p)),
        args.textures.as_deref().map(|p| ("texture folder", p)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Err(e) = crate::check_outputs(&outputs, &inputs)
        .and_then(|()| {
            std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))
        })
        .and_then(|()| crate::check_writable(&args.out.join("bench.json")))
    {
        crate::say!("mipflow bench: {e}");
        return ExitCode::from(2);
    }
    run_into(&opts, &args.out)
}

/// Runs the bench of `opts` and writes its outputs into `out` (made and checked already):
/// exit 0, or 1 when the run failed (nothing written) or a part of it did (the report holds
/// what was measured).
pub fn run_into(opts: &BenchOptions, out: &Path) -> ExitCode {
    let progress = |m: &str| crate::say!("bench: {m}");
    let report = match run(opts, &progress) {
        Ok(r) => r,
        Err(e) => {
            crate::say!("mipflow bench: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = write_outputs(&report, out) {
        crate::say!("mipflow bench: {e}");
        return ExitCode::from(1);
    }
    // Ignored when stdout is closed (`mipflow bench | head`): the files are written.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stdout(),
        format_args!("{}\n", markdown(&report)),
    );
    crate::say!(
        "bench: wrote bench.json, bench.md and bench.png into {}",
        out.display()
    );
    if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        for e in &report.errors {
            crate::say!("mipflow bench: {e}");
        }
        crate::say!(
            "mipflow bench: {} part(s) failed; the report holds what was measured",
            report.errors.len()
        );
        ExitCode::from(1)
    }
}
