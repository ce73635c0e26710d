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
//! The default budget of (c) is a quarter of (b)'s texture footprint, the setting issue 8's goals
//! are stated for.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::headless::Scenario;
use crate::scenes;
use crate::scenes::Residency;
use mipflow::budget::ledger::ByCategory;
use mipflow::budget::{Budget, Category};
use mipflow::gpu::{GpuContext, GpuOptions, TrackedTexture};
use mipflow::render::scene::Camera;
use mipflow::resolution::BucketRange;
use mipflow::stream::StreamConfig;
use mipflow::{FrameInput, Renderer, RendererConfig, TextureSource};
use mipflow_cook::{CookOptions, Quality};

/// Default output size. Why this small: lavapipe rasterises on the CPU, and three modes render
/// every frame; at 640x360 the default run stays well under the 10 minutes issue 8 allows on a
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
    /// Show this folder of .ktx2 files as a gallery instead of the demo scene.
    #[arg(long)]
    pub textures: Option<PathBuf>,
    /// Budget of mode (c) ("12MiB", bytes). Default: the scenario's schedule when it has one, else
    /// a quarter of (b)'s texture footprint.
    #[arg(long)]
    pub budget: Option<String>,
    /// Frames per mode (default 120, or the scenario's).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Where bench.json, bench.md and bench.png are written.
    #[arg(long, default_value = "bench-out")]
    pub out: PathBuf,
    /// Output size, WxH (default 640x360, or the scenario's).
    #[arg(long)]
    pub size: Option<String>,
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
}

impl Mode {
    /// The three, in table order.
    pub const ALL: [Mode; 3] = [Mode::Rgba8, Mode::Bc7, Mode::Mipflow];

    /// The column title.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Rgba8 => "(a) RGBA8, all resident",
            Mode::Bc7 => "(b) BC7, all resident",
            Mode::Mipflow => "(c) mipflow, streamed",
        }
    }

    fn residency(self) -> Residency {
        match self {
            Mode::Rgba8 => Residency::FullRgba8,
            Mode::Bc7 => Residency::FullBc7,
            Mode::Mipflow => Residency::Streamed,
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
    /// The ledger's peak total over the run (set-up included, the bench's own readback excluded).
    pub peak_bytes: u64,
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
    /// Compared frames under 40 dB (issue 8's goal for (c) is none).
    pub frames_under_40db: u64,
    /// Frames whose in-frame peak passed the budget (mode (c)).
    pub frames_over_budget: u64,
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
    /// `queue.write_texture` of every level, submit, wait: MB/s (10^6 bytes).
    pub upload_mb_s: f64,
    /// `copy_from_slice` of the same levels: MB/s.
    pub memcpy_mb_s: f64,
    /// Upload over memcpy.
    pub ratio: f64,
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

/// One goal of issue 8, measured (never asserted).
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
    /// Issue 8's goals against the figures.
    pub goals: Vec<Goal>,
    /// Wall time of the whole bench, s.
    pub total_seconds: f64,
}

/// How (c)'s budget is chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum BudgetRule {
    /// A fixed budget (`--budget`).
    Fixed(u64),
    /// The scenario's budget schedule.
    Schedule,
    /// A quarter of (b)'s texture footprint.
    QuarterOfBc7,
}

/// A resolved bench configuration (what [`BenchArgs`] become once checked).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The scenario (the default one, resized for the bench, when none was given).
    pub scenario: Scenario,
    /// Its name for the report.
    pub scenario_name: String,
    /// `--textures DIR`.
    pub textures: Option<PathBuf>,
    /// Budget rule for (c).
    pub budget: BudgetRule,
    /// Compare outputs every this many frames.
    pub quality_every: u64,
    /// Deterministic streaming.
    pub deterministic: bool,
    /// Prefetch (c)'s first view during its set-up.
    pub prefetch: bool,
    /// Textures in the planner measurement.
    pub planner_textures: usize,
    /// Short micro-benchmarks.
    pub quick: bool,
    /// Cache folder for the procedural textures.
    pub cache: Option<PathBuf>,
    /// The command line, for the report.
    pub command: String,
}

fn parse_wxh(s: &str) -> Option<(u32, u32)> {
    let (w, h) = s
        .to_ascii_lowercase()
        .split_once('x')
        .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))?;
    let (w, h): (u32, u32) = (w.parse().ok()?, h.parse().ok()?);
    (w > 0 && h > 0 && w <= 16384 && h <= 16384).then_some((w, h))
}

impl BenchOptions {
    /// Checks `args` (and reads the scenario). The error is the message for a usage error.
    pub fn from_args(args: &BenchArgs) -> std::result::Result<Self, String> {
        let (mut sc, name) = match &args.scenario {
            Some(p) => (
                Scenario::load(p).map_err(|e| e.to_string())?,
                p.display().to_string(),
            ),
            None => {
                let d = Scenario::default();
                let s = Scenario {
                    frames: DEFAULT_FRAMES,
                    size: [DEFAULT_SIZE.0, DEFAULT_SIZE.1],
                    anisotropy: Some(DEFAULT_ANISOTROPY),
                    scene: crate::headless::scenario::SceneSpec {
                        count: Some(DEFAULT_COUNT),
                        texture_size: Some(DEFAULT_TEXTURE_SIZE),
                        ..d.scene.clone()
                    },
                    ..d
                };
                (s, "default".to_owned())
            }
        };
        let has_schedule = args.scenario.is_some() && !sc.budget.is_empty();
        if let Some(f) = args.frames {
            if f == 0 {
                return Err("--frames must be at least 1".into());
            }
            sc.frames = f;
        }
        if let Some(s) = &args.size {
            let (w, h) = parse_wxh(s)
                .ok_or_else(|| format!("--size {s:?}: expected WxH, such as 640x360"))?;
            sc.size = [w, h];
        }
        if let Some(c) = args.count {
            if !(1..=100_000).contains(&c) {
                return Err(format!("--count {c}: expected 1 to 100000"));
            }
            sc.scene.count = Some(c);
        }
        if let Some(t) = args.texture_size {
            if !(64..=8192).contains(&t) {
                return Err(format!("--texture-size {t}: expected 64 to 8192"));
            }
            sc.scene.texture_size = Some(t);
        }
        if let Some(s) = args.seed {
            sc.scene.seed = s;
        }
        if let Some(a) = args.anisotropy {
            if !(1..=16).contains(&a) {
                return Err(format!("--anisotropy {a}: expected 1 to 16"));
            }
            sc.anisotropy = Some(a);
        }
        if args.quality_every == 0 {
            return Err("--quality-every must be at least 1".into());
        }
        if args.planner_textures == 0 || args.planner_textures > 1_000_000 {
            return Err(format!(
                "--planner-textures {}: expected 1 to 1000000",
                args.planner_textures
            ));
        }
        let budget = match args.budget.as_deref() {
            Some(text) => {
                let b = mipflow::budget::parse_size(text).map_err(|e| e.to_string())?;
                if b == 0 {
                    return Err("--budget must be more than 0 bytes".into());
                }
                BudgetRule::Fixed(b)
            }
            None if has_schedule => BudgetRule::Schedule,
            None => BudgetRule::QuarterOfBc7,
        };
        if let Some(dir) = &args.textures
            && !dir.is_dir()
        {
            return Err(format!("--textures {}: not a folder", dir.display()));
        }
        let command = std::iter::once("mipflow".to_owned())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Self {
            scenario: sc,
            scenario_name: name,
            textures: args.textures.clone(),
            budget,
            quality_every: args.quality_every,
            deterministic: !args.async_io,
            prefetch: !args.no_prefetch,
            planner_textures: args.planner_textures,
            quick: args.quick,
            cache: Some(scenes::cache_dir()),
            command,
        })
    }
}

/// The scene, prepared once (cooked into the cache) so that every mode's set-up reads the same
/// files and no mode's time to first frame pays for cooking.
enum Prepared {
    Demo(Vec<(TextureSource, u32)>),
    Gallery(PathBuf),
    Grid { seed: u64, count: u32, size: u32 },
}

impl Prepared {
    fn new(opts: &BenchOptions) -> Result<(Self, &'static str)> {
        let sc = &opts.scenario;
        if let Some(dir) = &opts.textures {
            return Ok((Prepared::Gallery(dir.clone()), "gallery"));
        }
        match sc.scene.kind.as_str() {
            "gallery" => Ok((
                Prepared::Gallery(
                    sc.base_dir
                        .join(sc.scene.textures.clone().unwrap_or_default()),
                ),
                "gallery",
            )),
            // The grid cooks in memory inside `build_grid`: its cook time counts in every mode's
            // time to first frame alike.
            "grid" => Ok((
                Prepared::Grid {
                    seed: sc.scene.seed,
                    count: sc.scene.count.unwrap_or(2000),
                    size: sc.scene.texture_size.unwrap_or(64),
                },
                "grid",
            )),
            _ => {
                use rayon::prelude::*;
                let specs = scenes::demo_specs(
                    sc.scene.seed,
                    sc.scene.count.unwrap_or(DEFAULT_COUNT),
                    sc.scene.texture_size.unwrap_or(DEFAULT_TEXTURE_SIZE),
                );
                let cache = opts.cache.as_deref();
                let sources: Vec<Result<TextureSource>> = specs
                    .par_iter()
                    .with_max_len(1)
                    .map(|s| Ok(scenes::cached_procedural(s, Quality::Fast, cache)?))
                    .collect();
                let mut out = Vec::with_capacity(specs.len());
                for (spec, src) in specs.iter().zip(sources) {
                    out.push((src?, spec.size));
                }
                Ok((Prepared::Demo(out), "demo"))
            }
        }
    }

    /// Builds the scene into `r` exactly as `scenes::build_demo` / `build_gallery` /
    /// `build_grid` do; returns the scene's length for the default camera.
    fn build(&self, r: &mut Renderer, residency: Residency) -> Result<f32> {
        match self {
            Prepared::Demo(textures) => {
                let mut handles = Vec::with_capacity(textures.len());
                for (src, size) in textures {
                    handles.push((scenes::add_texture(r, src.clone(), residency)?, *size));
                }
                scenes::build_hall(r, &handles)
            }
            Prepared::Gallery(dir) => scenes::build_gallery(r, dir, residency),
            Prepared::Grid { seed, count, size } => {
                scenes::build_grid(r, *seed, *count, *size, residency)
            }
        }
    }
}

/// One mode while it runs.
struct ModeRun {
    mode: Mode,
    r: Renderer,
    output: TrackedTexture,
    view: wgpu::TextureView,
    alloc_base: Option<u64>,
    summary: ModeSummary,
}

impl ModeRun {
    fn new(mode: Mode, opts: &BenchOptions, budget: u64, scene: &Prepared) -> Result<(Self, f32)> {
        let ctx = GpuContext::headless(&GpuOptions::default())?;
        ctx.wait_idle()?;
        let alloc_base = ctx.allocator_report().map(|r| r.total_allocated_bytes);
        let sc = &opts.scenario;
        let t0 = Instant::now();
        let stream = StreamConfig::default().with_deterministic(opts.deterministic);
        let mut config = RendererConfig::default();
        config.budget = Budget::bytes(budget);
        config.anisotropy = sc.anisotropy.unwrap_or(DEFAULT_ANISOTROPY);
        config.stream = stream;
        if let Some(m) = sc.min_scale {
            config.controller.range = BucketRange::new(m, 1.0);
        }
        let mut r = Renderer::with_context(ctx, config)?;
        if mode != Mode::Mipflow {
            r.set_scale_range(1.0, 1.0);
        }
        let (w, h) = (sc.size[0], sc.size[1]);
        // The output stands in for a swapchain image: charged to `Other` (as in the headless
        // runner), the same in every mode, and counted by (c)'s planner as fixed bytes.
        let output = r.context().create_offscreen_target("bench output", w, h)?;
        let view = output.create_view();
        let length = scene.build(&mut r, mode.residency())?;
        r.context().wait_idle()?;
        let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
        let setup_staging = r
            .context()
            .allocator_report()
            .map(|rep| rep.total_allocated_bytes);
        let setup_uploaded_bytes = r.bytes(Category::Textures);
        let mut run = Self {
            mode,
            r,
            output,
            view,
            alloc_base,
            summary: ModeSummary {
                mode: Some(mode),
                title: mode.title().to_owned(),
                setup_ms,
                setup_uploaded_bytes,
                ..ModeSummary::default()
            },
        };
        // Before the first submit, the allocator still holds wgpu's own staging copies of every
        // `write_texture` of the set-up (the baselines' whole chains), which no ledger sees: they
        // count in the allocator peak, not in the ledger cross-check. Then flush them.
        if let (Some(base), Some(setup)) = (alloc_base, setup_staging) {
            run.summary.allocator_peak_bytes = Some(setup.saturating_sub(base));
            run.summary.ledger_at_allocator_peak_bytes =
                Some(run.r.context().ledger().total_bytes());
        }
        run.r.context().queue().submit([]);
        run.r.context().wait_idle()?;
        run.check_errors("set-up")?;
        run.sample_memory();
        Ok((run, length))
    }

    /// A run with GPU validation errors measures nothing (a pipeline that failed to build draws
    /// nothing, fast): fail it instead of reporting its figures.
    fn check_errors(&self, when: &str) -> Result<()> {
        let errors = self.r.context().take_uncaptured_errors();
        match errors.first() {
            None => Ok(()),
            Some(first) => Err(mipflow::Error::Validation {
                context: format!(
                    "bench mode {:?}, {when}: {} GPU error(s), the first",
                    self.mode,
                    errors.len()
                ),
                message: first.clone(),
            }
            .into()),
        }
    }

    /// Folds the ledger's peaks and the allocator report into the summary. Called after set-up
    /// and after every frame, before any readback (whose staging buffer is the bench's, not the
    /// mode's).
    fn sample_memory(&mut self) {
        let ctx = self.r.context();
        let snap = ctx.ledger().snapshot();
        let s = &mut self.summary;
        s.peak_bytes = s.peak_bytes.max(snap.peak_bytes);
        for c in Category::ALL {
            let p = s.peak_by_category.get_mut(c);
            *p = (*p).max(snap.by_category.get(c).peak);
        }
        if let (Some(base), Some(rep)) = (self.alloc_base, ctx.allocator_report()) {
            let alloc = rep.total_allocated_bytes.saturating_sub(base);
            let ledger = ctx.ledger().total_bytes();
            if s.allocator_peak_bytes.is_none_or(|p| alloc > p) {
                s.allocator_peak_bytes = Some(alloc);
                s.ledger_at_allocator_peak_bytes = Some(ledger);
            }
            let diff = alloc as i64 - ledger as i64;
            if s.allocator_max_diff_bytes
                .is_none_or(|d| diff.abs() > d.abs())
            {
                s.allocator_max_diff_bytes = Some(diff);
            }
        }
    }

    fn frame(&mut self, frame: u64, camera: Camera, budget: u64) -> Result<()> {
        if self.mode == Mode::Mipflow && self.r.budget().current_bytes() != budget {
            self.r.set_budget(Budget::bytes(budget));
        }
        let input = FrameInput::new(camera);
        let t0 = Instant::now();
        let stats = *self.r.render(&self.view, &input)?;
        self.r.context().wait_idle()?;
        let frame_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.check_errors(&format!("frame {frame}"))?;
        let mut by = ByCategory::<u64>::default();
        for c in Category::ALL {
            *by.get_mut(c) = stats.ledger.by_category.get(c).bytes;
        }
        let streamed = self.mode == Mode::Mipflow;
        self.summary.frames.push(FrameSample {
            frame,
            frame_ms,
            gpu_ms: stats.gpu_frame_ms.map(f64::from),
            total_bytes: stats.frame_peak_bytes,
            by_category: by,
            budget_bytes: streamed.then_some(stats.budget_bytes),
            render_scale: f64::from(stats.render_scale),
            uploaded_bytes: stats.stream.uploaded_bytes,
            resident_mip_bytes: stats.resident_mip_bytes,
            wanted_mip_bytes: stats.wanted_mip_bytes,
            planner_us: f64::from(stats.stream.planner_us),
            psnr_db: None,
            ssim: None,
        });
        self.sample_memory();
        Ok(())
    }

    fn read_back(&self) -> Result<Vec<u8>> {
        let img = mipflow::gpu::read_texture_rgba8(self.r.context(), self.output.texture())?;
        // The readback's staging buffer is gone now: start the peaks again from here, so that it
        // never counts as the mode's VRAM (the summary already holds the peaks so far).
        self.r.context().ledger().reset_peaks();
        Ok(img)
    }

    fn finish(mut self) -> ModeSummary {
        let s = &mut self.summary;
        let timed: Vec<f64> = s
            .frames
            .iter()
            .skip(usize::from(s.frames.len() > 1))
            .map(|f| f.frame_ms)
            .collect();
        s.frame_ms = Percentiles::of(&timed);
        let gpu: Vec<f64> = s.frames.iter().filter_map(|f| f.gpu_ms).collect();
        s.gpu_ms_p50 = (!gpu.is_empty()).then(|| Percentiles::of(&gpu).p50);
        s.time_to_first_frame_ms = s.setup_ms + s.frames.first().map_or(0.0, |f| f.frame_ms);
        s.streamed_uploaded_bytes = s.frames.iter().map(|f| f.uploaded_bytes).sum();
        s.uploaded_bytes = s.setup_uploaded_bytes + s.streamed_uploaded_bytes;
        let psnr: Vec<f64> = s.frames.iter().filter_map(|f| f.psnr_db).collect();
        let ssim: Vec<f64> = s.frames.iter().filter_map(|f| f.ssim).collect();
        s.frames_compared = psnr.len() as u64;
        s.frames_under_40db = psnr.iter().filter(|&&p| p < 40.0).count() as u64;
        let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        s.psnr_min_db = min(&psnr);
        s.psnr_mean_db = mean(&psnr);
        s.ssim_min = min(&ssim);
        s.ssim_mean = mean(&ssim);
        s.frames_over_budget = s
            .frames
            .iter()
            .filter(|f| f.budget_bytes.is_some_and(|b| f.total_bytes > b))
            .count() as u64;
        s.budget_bytes = s.frames.iter().filter_map(|f| f.budget_bytes).max();
        let scales: Vec<f64> = s.frames.iter().map(|f| f.render_scale).collect();
        s.render_scale_min = min(&scales).unwrap_or(1.0);
        s.render_scale_mean = mean(&scales).unwrap_or(1.0);
        if self.mode == Mode::Mipflow {
            s.first_frame_all_wanted = s
                .frames
                .iter()
                .find(|f| f.resident_mip_bytes >= f.wanted_mip_bytes)
                .map(|f| f.frame);
        }
        let planner: Vec<f64> = s.frames.iter().map(|f| f.planner_us).collect();
        s.planner_us_p50 = Percentiles::of(&planner).p50;
        self.r.context().ledger().reset_peaks();
        let _ = self.r.context().wait_idle();
        drop(self.view);
        drop(self.output);
        drop(self.r);
        self.summary
    }
}

fn capped_psnr(a: &[u8], b: &[u8]) -> f64 {
    let p = mipflow_cook::compare::psnr_rgb(a, b);
    if p.is_finite() {
        p.min(PSNR_CAP_DB)
    } else {
        PSNR_CAP_DB
    }
}

/// Runs the three modes and the micro-benchmarks. `progress` gets one line per stage.
pub fn run(opts: &BenchOptions, progress: &dyn Fn(&str)) -> Result<BenchReport> {
    let started = Instant::now();
    let sc = &opts.scenario;
    progress("preparing the scene (cooking into the cache when not there yet)");
    let (scene, kind) = Prepared::new(opts)?;

    progress("set-up: (a) RGBA8");
    let (a, length) = ModeRun::new(Mode::Rgba8, opts, UNLIMITED, &scene)?;
    progress("set-up: (b) BC7");
    let (b, _) = ModeRun::new(Mode::Bc7, opts, UNLIMITED, &scene)?;
    let bc7_bytes = b.r.bytes(Category::Textures);
    let rgba8_bytes = a.r.bytes(Category::Textures);
    let (budget_rule, budget_at): (String, Box<dyn Fn(u64) -> u64>) = match &opts.budget {
        BudgetRule::Fixed(v) => {
            let v = *v;
            (
                format!("--budget {}", mipflow::budget::source::format_bytes(v)),
                Box::new(move |_| v),
            )
        }
        BudgetRule::Schedule => {
            let s = sc.clone();
            (
                "the scenario's schedule".to_owned(),
                Box::new(move |f| s.budget_at(f)),
            )
        }
        BudgetRule::QuarterOfBc7 => {
            let v = (bc7_bytes / 4).max(1);
            (
                "a quarter of (b)'s texture footprint".to_owned(),
                Box::new(move |_| v),
            )
        }
    };
    let camera_at = |frame: u64| {
        let (eye, target) = sc.camera_at(frame).unwrap_or_else(|| match kind {
            "grid" => (
                glam::Vec3::new(
                    0.0,
                    0.0,
                    2.0 + length * (1.0 - frame as f32 / sc.frames as f32),
                ),
                glam::Vec3::ZERO,
            ),
            _ => scenes::tour(frame, sc.frames, length),
        });
        Camera::look_at(eye, target)
    };
    progress("set-up: (c) mipflow");
    let (mut c, _) = ModeRun::new(Mode::Mipflow, opts, budget_at(0), &scene)?;
    if opts.prefetch {
        // As a game behind its loading screen: the first view streamed before frame 0.
        let p = c.r.prefetch(
            (sc.size[0], sc.size[1]),
            &camera_at(0),
            std::time::Duration::from_secs(10),
        )?;
        c.summary.setup_ms += f64::from(p.ms);
        c.summary.prefetch = Some(p);
    }
    let textures = c.r.streamer().texture_count() as u64;
    let machine = machine(a.r.context());
    let mut runs = [a, b, c];

    progress(&format!(
        "rendering {} frames x 3 modes, interleaved",
        sc.frames
    ));
    let mut last = Instant::now();
    for frame in 0..sc.frames {
        let camera = camera_at(frame);
        for m in &mut runs {
            m.frame(frame, camera, budget_at(frame))?;
        }
        if frame % opts.quality_every == 0 || frame + 1 == sc.frames {
            let reference = runs[0].read_back()?;
            let (w, h) = (sc.size[0], sc.size[1]);
            for m in &mut runs[1..] {
                let img = m.read_back()?;
                let psnr = capped_psnr(&reference, &img);
                let ssim = mipflow_cook::compare::ssim(&reference, &img, w, h);
                if let Some(f) = m.summary.frames.last_mut() {
                    f.psnr_db = Some(psnr);
                    f.ssim = Some(ssim);
                }
            }
        }
        if last.elapsed().as_secs_f32() > 10.0 {
            last = Instant::now();
            progress(&format!("frame {}/{}", frame + 1, sc.frames));
        }
    }
    let mut modes: Vec<ModeSummary> = runs.into_iter().map(ModeRun::finish).collect();
    let base = modes[0].clone();
    let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { 0.0 };
    for m in &mut modes {
        m.ratios = Ratios {
            peak_bytes: ratio(m.peak_bytes as f64, base.peak_bytes as f64),
            frame_ms_p50: ratio(m.frame_ms.p50, base.frame_ms.p50),
            frame_ms_p99: ratio(m.frame_ms.p99, base.frame_ms.p99),
            time_to_first_frame: ratio(m.time_to_first_frame_ms, base.time_to_first_frame_ms),
            uploaded_bytes: ratio(m.uploaded_bytes as f64, base.uploaded_bytes as f64),
        };
    }

    progress(&format!("planner: {} textures", opts.planner_textures));
    let planner = planner_bench(opts.planner_textures, if opts.quick { 200 } else { 2000 });
    progress("upload against memcpy");
    let upload = match GpuContext::headless(&GpuOptions::default()) {
        Ok(ctx) => Some(upload_bench(&ctx, opts.quick)?),
        Err(e) => {
            tracing::warn!(error = %e, "no context for the upload measurement");
            None
        }
    };
    progress("cook per quality");
    let cook = cook_bench(opts.quick)?;

    let mut report = BenchReport {
        command: opts.command.clone(),
        machine,
        scene: SceneInfo {
            kind: kind.to_owned(),
            scenario: opts.scenario_name.clone(),
            textures,
            size: sc.size,
            frames: sc.frames,
            anisotropy: sc.anisotropy.unwrap_or(DEFAULT_ANISOTROPY),
            quality_every: opts.quality_every,
            deterministic: opts.deterministic,
            budget_rule,
            bc7_texture_bytes: bc7_bytes,
            rgba8_texture_bytes: rgba8_bytes,
        },
        modes,
        planner: Some(planner),
        upload,
        cook,
        goals: Vec::new(),
        total_seconds: 0.0,
    };
    report.goals = goals(&report, opts);
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

fn machine(ctx: &GpuContext) -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown".to_owned(), |(_, v)| v.trim().to_owned());
    let driver = ctx
        .adapter_info()
        .map(|i| format!("{} {}", i.driver, i.driver_info).trim().to_owned())
        .unwrap_or_default();
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model,
        adapter: ctx.adapter_name(),
        driver,
        os: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| format!("Linux {}", s.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_owned()),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_owned(),
    }
}

/// Planner time per frame on the scene of `benches/planner.rs`: `n` random BC7 textures of 16² to
/// 8192², about half in view, a budget of about half the demand, nine render-scale buckets at
/// 1080p; run to convergence (plans executed by `SimExecutor`, grows built at once) and then
/// timed for `frames` frames of a steady view and of a moving one.
pub fn planner_bench(n: usize, frames: u64) -> PlannerFigures {
    let mut scene = mipflow::testing::planner_fixture::BenchScene::new(n);
    let (converge_frames, note) = match scene.converge(20_000) {
        Ok(f) => (f, None),
        Err(e) => (scene.frame, Some(e)),
    };
    let mut steady = Vec::with_capacity(frames as usize);
    for _ in 0..frames {
        let t0 = Instant::now();
        black_box(scene.plan_frame());
        steady.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let mut moving = Vec::with_capacity(frames as usize);
    let mut sign = 1.0;
    for _ in 0..frames {
        sign = -sign;
        scene.move_view(0.01 * sign);
        let t0 = Instant::now();
        black_box(scene.plan_frame());
        moving.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let s = Percentiles::of(&steady);
    PlannerFigures {
        textures: n,
        converge_frames,
        frames_timed: frames,
        steady_us_mean: s.mean,
        steady_us_p99: s.p99,
        steady_us_p50: s.p50,
        moving_us_mean: Percentiles::of(&moving).mean,
        note,
    }
}

/// Uploads a full BC7 chain (2048², or 512² when `quick`) the way the streamer does (through its
/// mapped staging ring), submit and wait, several times, against `copy_from_slice` of the same
/// bytes.
pub fn upload_bench(ctx: &GpuContext, quick: bool) -> Result<UploadFigures> {
    let side: u32 = if quick { 512 } else { 2048 };
    let reps: u32 = if quick { 4 } else { 16 };
    let bc = ctx.bc_supported();
    let format = if bc {
        wgpu::TextureFormat::Bc7RgbaUnormSrgb
    } else {
        wgpu::TextureFormat::Rgba8UnormSrgb
    };
    let count = mipflow::budget::size::full_mip_count(side, side);
    let mut rng = mipflow::testing::SplitMix64(7);
    let levels: Vec<Vec<u8>> = (0..count)
        .map(|l| {
            let s = (side >> l).max(1);
            let bytes = mipflow::budget::size::level_bytes(format, s, s).unwrap_or(0) as usize;
            (0..bytes.div_ceil(8))
                .flat_map(|_| rng.next().to_le_bytes())
                .take(bytes)
                .collect()
        })
        .collect();
    let total: u64 = levels.iter().map(|l| l.len() as u64).sum();
    let tex = ctx.create_texture(
        &wgpu::TextureDescriptor {
            label: Some("bench upload"),
            size: wgpu::Extent3d {
                width: side,
                height: side,
                depth_or_array_layers: 1,
            },
            mip_level_count: count,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        Category::Other,
    )?;
    // The streamer's path: a persistently mapped staging chunk (rows padded to 256 bytes),
    // copy_buffer_to_texture, submit, wait, and the chunk mapped again for the next upload.
    let mut ring = mipflow::gpu::staging::StagingRing::new(total * 2 + (1 << 20), 1, 1);
    let mut upload_once = |rep: u64| -> Result<()> {
        for (l, data) in levels.iter().enumerate() {
            ring.write_level(ctx, tex.texture(), l as u32, data)?;
        }
        ring.submit(ctx, rep);
        ctx.wait_idle()?;
        ring.recycle(rep);
        Ok(ctx.wait_idle()?)
    };
    upload_once(0)?; // warm-up
    let t0 = Instant::now();
    for rep in 0..reps {
        upload_once(u64::from(rep) + 1)?;
    }
    let upload_s = t0.elapsed().as_secs_f64();
    let mut dst: Vec<Vec<u8>> = levels.iter().map(|l| vec![0u8; l.len()]).collect();
    // memcpy is fast and so noisier: more repetitions, same bytes per repetition.
    let memcpy_reps = reps * 4;
    let t0 = Instant::now();
    for _ in 0..memcpy_reps {
        for (d, s) in dst.iter_mut().zip(&levels) {
            d.copy_from_slice(black_box(s));
        }
        black_box(&mut dst);
    }
    let memcpy_s = t0.elapsed().as_secs_f64();
    let upload_mb_s = total as f64 * f64::from(reps) / upload_s.max(1e-9) / 1e6;
    let memcpy_mb_s = total as f64 * f64::from(memcpy_reps) / memcpy_s.max(1e-9) / 1e6;
    Ok(UploadFigures {
        what: format!(
            "{side}x{side} {}, {count} levels",
            if bc {
                "BC7"
            } else {
                "RGBA8 (no BC on this adapter)"
            }
        ),
        bytes: total,
        reps,
        upload_mb_s,
        memcpy_mb_s,
        ratio: upload_mb_s / memcpy_mb_s.max(1e-9),
    })
}

/// The images to cook: the photographs in `assets/photos/` (only the smallest when `quick`), or
/// the test pattern when they are missing.
fn cook_inputs(quick: bool) -> Vec<image::RgbaImage> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/photos");
    let names: &[&str] = if quick {
        &["brick"]
    } else {
        &["astronaut", "coffee", "chelsea", "brick"]
    };
    let mut out: Vec<image::RgbaImage> = names
        .iter()
        .filter_map(|n| image::open(dir.join(format!("{n}.png"))).ok())
        .map(|i| i.to_rgba8())
        .collect();
    if out.is_empty() {
        out.push(mipflow_cook::procedural::test_pattern(if quick {
            128
        } else {
            512
        }));
    }
    out
}

/// Cooks the inputs at each quality (mips, BC7, every level; all cores), and measures level 0's
/// RGB PSNR after BC7.
pub fn cook_bench(quick: bool) -> Result<Vec<CookFigures>> {
    let images = cook_inputs(quick);
    let megapixels: f64 = images
        .iter()
        .map(|i| f64::from(i.width()) * f64::from(i.height()) / 1e6)
        .sum();
    let mut out = Vec::new();
    for q in [Quality::Fast, Quality::Default, Quality::Slow] {
        let opts = CookOptions {
            quality: q,
            ..CookOptions::default()
        };
        let encoder = mipflow_cook::encoder_for(q);
        let t0 = Instant::now();
        let mut cooked = Vec::with_capacity(images.len());
        for img in &images {
            let tex = mipflow_cook::cook_rgba8(img.clone(), &opts, encoder.as_ref())?;
            cooked.push(tex);
        }
        let seconds = t0.elapsed().as_secs_f64();
        let psnr: Vec<f64> = images
            .iter()
            .zip(&cooked)
            .map(|(img, tex)| {
                let level0 = tex.levels.first().map_or(&[][..], Vec::as_slice);
                let decoded = mipflow_cook::decode_bc7(level0, img.width(), img.height());
                capped_psnr(img.as_raw(), &decoded)
            })
            .collect();
        out.push(CookFigures {
            quality: format!("{q:?}").to_lowercase(),
            images: images.len(),
            megapixels,
            seconds,
            mp_per_s: megapixels / seconds.max(1e-9),
            psnr_mean_db: psnr.iter().sum::<f64>() / psnr.len().max(1) as f64,
            psnr_min_db: psnr.iter().copied().fold(f64::INFINITY, f64::min),
        });
    }
    Ok(out)
}

fn goals(r: &BenchReport, opts: &BenchOptions) -> Vec<Goal> {
    let mut g = Vec::new();
    let (Some(a), Some(b), Some(c)) = (r.modes.first(), r.modes.get(1), r.modes.get(2)) else {
        return g;
    };
    let quarter = opts.budget == BudgetRule::QuarterOfBc7;
    let note = if quarter {
        ""
    } else {
        " (goal stated for a quarter of (b); this run's budget differs)"
    };
    let frac = c.peak_bytes as f64 / a.peak_bytes.max(1) as f64;
    g.push(Goal {
        name: format!("(c) peak VRAM against (a){note}"),
        measured: format!("1/{:.1}", 1.0 / frac.max(1e-12)),
        target: "at most 1/16".into(),
        met: Some(frac <= 1.0 / 16.0),
    });
    g.push(Goal {
        name: format!("(c) PSNR against (a), every compared frame{note}"),
        measured: c
            .psnr_min_db
            .map_or("n/a".into(), |p| format!("min {p:.2} dB")),
        target: "at least 40 dB".into(),
        met: c.psnr_min_db.map(|p| p >= 40.0),
    });
    g.push(Goal {
        name: "(c) frames over budget".into(),
        measured: c.frames_over_budget.to_string(),
        target: "0".into(),
        met: Some(c.frames_over_budget == 0),
    });
    let p99 = c.frame_ms.p99 / b.frame_ms.p99.max(1e-9);
    g.push(Goal {
        name: "(c) p99 frame time against (b)".into(),
        measured: format!("{p99:.2}x"),
        target: "at most 1.25x".into(),
        met: Some(p99 <= 1.25),
    });
    if let Some(p) = &r.planner {
        g.push(Goal {
            name: format!("planner per frame at {} textures, steady view", p.textures),
            measured: format!(
                "median {:.1} µs (mean {:.1})",
                p.steady_us_p50, p.steady_us_mean
            ),
            target: "at most 50 µs at 10k".into(),
            met: (p.textures == 10_000 && p.note.is_none()).then_some(p.steady_us_p50 <= 50.0),
        });
    }
    if let Some(u) = &r.upload {
        g.push(Goal {
            name: "upload against memcpy".into(),
            measured: format!("{:.0}%", u.ratio * 100.0),
            target: "at least 50%".into(),
            met: Some(u.ratio >= 0.5),
        });
    }
    g
}

fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / MIB)
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "–".to_owned(), f)
}

/// The Markdown table (and the goals under it).
pub fn markdown(r: &BenchReport) -> String {
    let mut s = String::new();
    let sc = &r.scene;
    let _ = writeln!(
        s,
        "Scene: {} ({}), {} textures, {}x{}, {} frames per mode, anisotropy {}, outputs compared every {} frame(s), {} streaming. Budget of (c): {} = {} MiB ((b)'s textures: {} MiB; (a)'s: {} MiB).\n",
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
    let _ = writeln!(s, " goal (issue 8) |");
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
                Some(Mode::Mipflow) => x
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
                if x.mode == Some(Mode::Mipflow) {
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
                "planner µs per frame, {} textures, every wanted level moving",
                p.textures
            ),
            blank(format!("{:.1}", p.moving_us_mean)),
            "",
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
    let mc = &r.machine;
    let _ = writeln!(
        s,
        "\nMachine: {} CPUs ({}), {}, {}, {}; {} build; bench took {:.0} s.\n\nCommand: `{}`",
        mc.cpus, mc.cpu_model, mc.adapter, mc.driver, mc.os, mc.profile, r.total_seconds, r.command
    );
    s
}

fn register_font() {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The chart ships its font (egui's Hack), as the headless plot does.
        let _ = plotters::style::register_font(
            "sans-serif",
            plotters::style::FontStyle::Normal,
            epaint_default_fonts::HACK_REGULAR,
        );
    });
}

/// Draws the chart: peak VRAM per mode (stacked by category), frame-time percentiles per mode,
/// per-frame VRAM of each mode (log scale, with (c)'s budget) and per-frame PSNR against (a).
pub fn write_chart(r: &BenchReport, path: &Path, width: u32, height: u32) -> Result<()> {
    use plotters::prelude::*;
    register_font();
    let err = |e: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let mode_colour = [
        RGBColor(200, 60, 50),
        RGBColor(240, 150, 30),
        RGBColor(40, 120, 220),
    ];
    let cat_colour = |c: Category| match c {
        Category::Textures => RGBColor(66, 133, 244),
        Category::RenderTargets => RGBColor(251, 140, 0),
        Category::Buffers => RGBColor(67, 160, 71),
        Category::Staging => RGBColor(171, 71, 188),
        Category::Overlay => RGBColor(0, 172, 193),
        Category::Other => RGBColor(120, 120, 120),
    };
    let short = ["(a) RGBA8", "(b) BC7", "(c) mipflow"];
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let panels = root.split_evenly((2, 2));
    let n = r.modes.len();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            short[i as usize].to_owned()
        } else {
            String::new()
        }
    };

    // Peak VRAM, stacked by category.
    let top = r.modes.iter().map(|m| m.peak_bytes).max().unwrap_or(1) as f64 / MIB * 1.15;
    let mut chart = ChartBuilder::on(&panels[0])
        .caption("peak VRAM per mode (ledger), MiB", ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0..top.max(1.0))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let mut y0 = 0.0;
        for c in Category::ALL {
            // Stacked per-category peaks: an upper bound of the simultaneous peak, shown per
            // category; the total's own peak is the label.
            let v = *m.peak_by_category.get(c) as f64 / MIB;
            if v <= 0.0 {
                continue;
            }
            let x = i as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.3, y0), (x + 0.3, y0 + v)],
                    cat_colour(c).filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
            y0 += v;
        }
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{:.1}", m.peak_bytes as f64 / MIB),
                (i as f64 - 0.15, y0 + top * 0.03),
                ("sans-serif", 13),
            )))
            .map_err(|e| err(e.to_string()))?;
    }
    for c in Category::ALL {
        if r.modes.iter().all(|m| *m.peak_by_category.get(c) == 0) {
            continue;
        }
        let col = cat_colour(c);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (0.0, 0.0)],
                col.filled(),
            )))
            .map_err(|e| err(e.to_string()))?
            .label(c.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    // Frame-time percentiles.
    let top = r.modes.iter().map(|m| m.frame_ms.p99).fold(0.0, f64::max) * 1.2;
    let mut chart = ChartBuilder::on(&panels[1])
        .caption(
            "frame time (render + wait), ms: p50 / p95 / p99",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0..top.max(0.1))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let x = i as f64;
        for (k, v) in [m.frame_ms.p50, m.frame_ms.p95, m.frame_ms.p99]
            .into_iter()
            .enumerate()
        {
            let x0 = x - 0.33 + k as f64 * 0.22;
            let col = mode_colour[i % 3].mix(1.0 - 0.25 * k as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x0 + 0.2, v)],
                    col.filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{v:.1}"),
                    (x0, v + top * 0.02),
                    ("sans-serif", 11),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
    }

    // Per-frame VRAM (log scale).
    let frames = r
        .modes
        .iter()
        .map(|m| m.frames.len())
        .max()
        .unwrap_or(1)
        .max(2) as u64;
    let all = r.modes.iter().flat_map(|m| {
        m.frames
            .iter()
            .flat_map(|f| [f.total_bytes, f.budget_bytes.unwrap_or(f.total_bytes)])
    });
    let (lo, hi) = all.fold((u64::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (
        (lo.max(1) as f64 / MIB) * 0.7,
        (hi.max(1) as f64 / MIB) * 1.5,
    );
    let mut chart = ChartBuilder::on(&panels[2])
        .caption(
            "VRAM per frame (in-frame peak), MiB, log scale",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0u64..frames, (lo.min(hi * 0.5)..hi).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let col = mode_colour[i % 3];
        chart
            .draw_series(LineSeries::new(
                m.frames
                    .iter()
                    .map(|f| (f.frame, f.total_bytes as f64 / MIB)),
                col.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(short[i % 3])
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], col.stroke_width(2)));
    }
    if let Some(c) = r.modes.get(2)
        && c.frames.iter().any(|f| f.budget_bytes.is_some())
    {
        chart
            .draw_series(DashedLineSeries::new(
                c.frames
                    .iter()
                    .filter_map(|f| f.budget_bytes.map(|b| (f.frame, b as f64 / MIB))),
                6,
                4,
                BLACK.stroke_width(1),
            ))
            .map_err(|e| err(e.to_string()))?
            .label("(c) budget")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    // Per-frame PSNR against (a).
    let mut chart = ChartBuilder::on(&panels[3])
        .caption(
            format!("PSNR against (a), dB (capped at {PSNR_CAP_DB:.0})"),
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0u64..frames, 10.0..(PSNR_CAP_DB + 5.0))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(DashedLineSeries::new(
            [(0, 40.0), (frames, 40.0)],
            6,
            4,
            BLACK.stroke_width(1),
        ))
        .map_err(|e| err(e.to_string()))?
        .label("40 dB goal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(1)));
    for (i, m) in r.modes.iter().enumerate().skip(1) {
        let col = mode_colour[i % 3];
        chart
            .draw_series(LineSeries::new(
                m.frames
                    .iter()
                    .filter_map(|f| f.psnr_db.map(|p| (f.frame, p.max(10.0)))),
                col.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(short[i % 3])
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], col.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Writes `bench.json`, `bench.md` and `bench.png` into `dir` (created if needed).
pub fn write_outputs(r: &BenchReport, dir: &Path) -> Result<()> {
    let io = |path: PathBuf| move |source| Error::Io { path, source };
    std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
    let json = serde_json::to_string_pretty(r).map_err(|e| Error::Io {
        path: dir.join("bench.json"),
        source: std::io::Error::other(e),
    })?;
    std::fs::write(dir.join("bench.json"), json).map_err(io(dir.join("bench.json")))?;
    std::fs::write(dir.join("bench.md"), markdown(r)).map_err(io(dir.join("bench.md")))?;
    write_chart(r, &dir.join("bench.png"), 1400, 900)
}

/// `mipflow bench`: exit 0 after writing the outputs, 2 on a usage error, 1 when the run failed.
pub fn run_bench(args: &BenchArgs) -> ExitCode {
    let opts = match BenchOptions::from_args(args) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("mipflow bench: {msg}");
            return ExitCode::from(2);
        }
    };
    let progress = |m: &str| eprintln!("bench: {m}");
    let report = match run(&opts, &progress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mipflow bench: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = write_outputs(&report, &args.out) {
        eprintln!("mipflow bench: {e}");
        return ExitCode::from(1);
    }
    println!("{}", markdown(&report));
    eprintln!(
        "bench: wrote bench.json, bench.md and bench.png into {}",
        args.out.display()
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = Percentiles::of(&v);
        assert_eq!((p.p50, p.p95, p.p99), (50.0, 95.0, 99.0));
        assert!((p.mean - 50.5).abs() < 1e-9);
        let one = Percentiles::of(&[3.0]);
        assert_eq!((one.p50, one.p99), (3.0, 3.0));
        assert_eq!(Percentiles::of(&[]), Percentiles::default());
    }

    #[test]
    fn sizes_parse_and_reject() {
        assert_eq!(parse_wxh("640x360"), Some((640, 360)));
        assert_eq!(parse_wxh("0x10"), None);
        assert_eq!(parse_wxh("640"), None);
    }

    /// A report made up of plain numbers: the table and the chart are made from it alone.
    fn synthetic() -> BenchReport {
        let mode = |m: Mode, scale: u64| ModeSummary {
            mode: Some(m),
            title: m.title().to_owned(),
            peak_bytes: (40 * scale) << 20,
            peak_by_category: ByCategory {
                textures: (36 * scale) << 20,
                render_targets: 4 << 20,
                ..ByCategory::default()
            },
            frame_ms: Percentiles::of(&[4.0, 5.0, 9.0]),
            budget_bytes: (m == Mode::Mipflow).then_some(12 << 20),
            frames: (0..20)
                .map(|f| FrameSample {
                    frame: f,
                    total_bytes: (40 * scale) << 20,
                    budget_bytes: (m == Mode::Mipflow).then_some(12 << 20),
                    psnr_db: (m != Mode::Rgba8).then_some(if m == Mode::Bc7 {
                        PSNR_CAP_DB
                    } else {
                        35.0 + f as f64
                    }),
                    ssim: (m != Mode::Rgba8).then_some(0.98),
                    ..FrameSample::default()
                })
                .collect(),
            ..ModeSummary::default()
        };
        BenchReport {
            command: "mipflow bench".into(),
            modes: vec![
                mode(Mode::Rgba8, 16),
                mode(Mode::Bc7, 4),
                mode(Mode::Mipflow, 1),
            ],
            planner: Some(PlannerFigures {
                textures: 10_000,
                steady_us_mean: 20.0,
                steady_us_p50: 20.0,
                ..PlannerFigures::default()
            }),
            cook: vec![CookFigures {
                quality: "fast".into(),
                ..CookFigures::default()
            }],
            ..BenchReport::default()
        }
    }

    #[test]
    fn table_and_chart_from_a_report() {
        let mut r = synthetic();
        let opts = BenchOptions::from_args(&BenchArgs {
            scenario: None,
            textures: None,
            budget: None,
            frames: None,
            out: "x".into(),
            size: None,
            count: None,
            texture_size: None,
            seed: None,
            anisotropy: None,
            quality_every: 1,
            async_io: false,
            no_prefetch: false,
            planner_textures: 10_000,
            quick: false,
        })
        .unwrap();
        r.goals = goals(&r, &opts);
        let md = markdown(&r);
        assert!(md.contains("| figure | (a) RGBA8, all resident |"), "{md}");
        assert!(md.contains("**40.0**"), "{md}");
        // 1/16 of (a) exactly: met; the planner at 10k: met; PSNR 35 dB: not met.
        let met = |name: &str| {
            r.goals
                .iter()
                .find(|g| g.name.starts_with(name))
                .and_then(|g| g.met)
        };
        assert_eq!(met("(c) peak VRAM"), Some(true));
        assert_eq!(met("planner"), Some(true));
        assert_eq!(
            met("(c) PSNR"),
            None,
            "no PSNR summary in the synthetic modes"
        );
        let path =
            std::env::temp_dir().join(format!("mipflow-bench-chart-{}.png", std::process::id()));
        write_chart(&r, &path, 1000, 700).unwrap();
        let img = image::open(&path).unwrap().to_rgba8();
        assert_eq!(img.dimensions(), (1000, 700));
        // The textures bars (blue) are drawn.
        let blue = img
            .pixels()
            .filter(|p| p[2] > 200 && p[0] < 100 && p[1] > 100 && p[1] < 160)
            .count();
        assert!(blue > 2_000, "{blue}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn planner_bench_runs_small() {
        let p = planner_bench(200, 20);
        assert_eq!(p.textures, 200);
        assert!(p.note.is_none(), "{:?}", p.note);
        assert!(p.steady_us_mean > 0.0 && p.moving_us_mean > 0.0);
    }
}
