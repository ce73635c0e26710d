//! The `mipflow` command line: `demo` (default), `cook`, `inspect`, `headless`, `bench`.
//!
//! A user of the library like any game: everything here goes through `mipflow`'s public API
//! (plus its `testing` helpers) and `mipflow-cook`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "mipflow",
    version,
    about = "VRAM-budgeted BC7/KTX2 texture streaming on wgpu",
    long_about = "VRAM-budgeted BC7/KTX2 texture streaming on wgpu.\n\nWith no subcommand, runs the demo: 200 procedural textures (13 of them 2048x2048, cooked once into the cache folder) under an automatic budget (the window's fixed bytes plus 14 MiB) that keeps the budget pressed, so streaming and dynamic resolution are visibly at work. F1 toggles the memory overlay, F2 colours surfaces by resident mip.",
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand, the demo runs with these options (see `mipflow demo --help`).
    #[command(flatten)]
    demo: mipflow_cli::demo::DemoArgs,
}

/// Common runs, shown under `--help`.
const EXAMPLES: &str = "Examples:
  mipflow                                  the demo, automatic (pressed) budget
  mipflow --tour                           the tour's story: the budget squeezed and released
  mipflow --budget 1GiB                    the demo with an unpressed budget
  mipflow --textures my/ktx2/folder        your own textures as a gallery
  mipflow cook photos/ -o cooked/          BC7 KTX2 with full mip chains
  mipflow inspect cooked/brick.ktx2        what a KTX2 file holds, validated
  mipflow headless --scenario assets/tour.toml --report tour.json --plot tour.png
                                           the tour's story offscreen: JSON, plot, exit 1 if over budget
  mipflow bench --sweep                    mipflow against all-resident baselines, and a budget sweep";

#[derive(Subcommand)]
enum Command {
    /// The demo (the default): a window on a hall of streamed textures under one VRAM budget, with
    /// the memory overlay (F1). The default budget is automatic (the window's fixed bytes plus
    /// 14 MiB) and pressed, so streaming and dynamic resolution are visibly at work.
    #[command(after_help = "Examples:
  mipflow demo --tour --monitor            the story, with a line per event and per act
  mipflow demo --budget 48MiB --size 1920x1080
  mipflow demo --tour --frames 600 --screenshot shot.png")]
    Demo(mipflow_cli::demo::DemoArgs),
    /// Cook images (PNG, JPEG, TGA, BMP, OpenEXR, Radiance HDR) into block-compressed KTX2 files
    /// (BC7 by default; BC1, BC3, BC4, BC5, BC6H with --format) with full mip chains.
    Cook(mipflow_cli::cook_cmd::CookArgs),
    /// Print and validate the contents of KTX2 and DDS files.
    Inspect(mipflow_cli::inspect::InspectArgs),
    /// Run a scenario offscreen: JSON report, PNG plot, exit 1 when the budget was broken.
    #[command(after_help = "Examples:
  mipflow headless --scenario assets/tour.toml --report tour.json --plot tour.png
  mipflow headless --textures my/ktx2/folder --budget 64MiB --frames 300 --monitor")]
    Headless(HeadlessArgs),
    /// mipflow against its baselines (RGBA8 and BC7 fully resident) on the same scene and camera
    /// path, interleaved: VRAM, frame times, time to first frame, uploads, image quality; writes
    /// bench.json, bench.md and bench.png.
    Bench(mipflow_cli::bench::BenchArgs),
}

/// `mipflow headless`.
#[derive(Args, Debug)]
struct HeadlessArgs {
    /// Scenario file (TOML); without it, the default scenario (demo scene, 600 frames, 256 MiB).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Show this folder of .ktx2 and .dds files as a gallery instead of the scenario's scene.
    #[arg(long)]
    textures: Option<PathBuf>,
    /// One budget for the whole run ("256MiB", "1.5GiB", bytes); overrides the scenario's schedule.
    #[arg(long, value_name = "SIZE", value_parser = mipflow_cli::size_arg)]
    budget: Option<u64>,
    /// Frames to render.
    #[arg(long)]
    frames: Option<u64>,
    /// Output size, WxH.
    #[arg(long, value_name = "WxH", value_parser = mipflow_cli::wxh_arg)]
    size: Option<(u32, u32)>,
    /// Write the JSON report here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write the PNG plot here.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// One line per second with the totals per category (stderr), and a line per event.
    #[arg(long)]
    monitor: bool,
}

fn headless(args: &HeadlessArgs) -> ExitCode {
    use mipflow_cli::headless::{RunOptions, Scenario, run, write_plot};
    let usage = |msg: String| {
        mipflow_cli::say!("mipflow headless: {msg}");
        mipflow_cli::say!("verdict: ERROR (set-up)");
        ExitCode::from(2)
    };
    let (scenario, name) = match &args.scenario {
        Some(p) => match Scenario::load(p) {
            Ok(s) => (s, p.display().to_string()),
            Err(e) => return usage(e.to_string()),
        },
        None => (Scenario::default(), "default".to_owned()),
    };
    let (budget, size) = (args.budget, args.size);
    // Output paths are checked before the run: a run's verdict must not be lost to a path
    // that could never be written, nor an input or another output replaced by it.
    let mut outputs = Vec::new();
    outputs.extend(args.report.as_deref().map(|p| ("--report", p)));
    outputs.extend(args.plot.as_deref().map(|p| ("--plot", p)));
    let gallery = (scenario.scene.kind == "gallery").then(|| {
        scenario
            .base_dir
            .join(scenario.scene.textures.clone().unwrap_or_default())
    });
    let mut inputs = Vec::new();
    inputs.extend(args.scenario.as_deref().map(|p| ("scenario", p)));
    inputs.extend(args.textures.as_deref().map(|p| ("--textures folder", p)));
    inputs.extend(gallery.as_deref().map(|p| ("gallery folder", p)));
    if let Err(e) = mipflow_cli::check_outputs(&outputs, &inputs) {
        return usage(e);
    }
    for p in args.report.iter() {
        if let Err(e) = mipflow_cli::check_writable(p) {
            return usage(e);
        }
    }
    for p in args.plot.iter() {
        if let Err(e) = mipflow_cli::check_image_path(p, &mipflow_cli::PLOT_EXTENSIONS) {
            return usage(e);
        }
    }
    let ctx = match mipflow::GpuContext::headless(&Default::default()) {
        Ok(c) => c,
        Err(e) => return usage(e.to_string()),
    };
    let opts = RunOptions {
        scenario,
        name,
        textures: args.textures.clone(),
        budget,
        frames: args.frames,
        size,
        monitor: args.monitor,
        cache: Some(mipflow_cli::scenes::cache_dir()),
        fail_at_frame: None,
    };
    let report = match run(ctx, &opts) {
        Ok(r) => r,
        Err(e) => return usage(e.to_string()),
    };
    mipflow_cli::say(format_args!("{}", report.verdict_line()));
    let code = if report.verdict == "pass" {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    // The verdict is out; a report or plot that cannot be written (the disk filled during the
    // run) is said, and the run's own exit code stands.
    if let Some(p) = &args.report {
        // Streamed into a temporary file that replaces the report once complete: a run
        // killed (or a disk that fills) mid-write leaves no truncated JSON, and a million
        // frames are not first built as one string.
        let written = mipflow_cli::write_atomic(p, |w| {
            serde_json::to_writer_pretty(w, &report).map_err(std::io::Error::other)
        });
        if let Err(e) = written {
            mipflow_cli::say(format_args!(
                "mipflow headless: writing the report {}: {e}",
                p.display()
            ));
        }
    }
    if let Some(p) = &args.plot
        && let Err(e) = write_plot(&report, p, 1280, 720)
    {
        mipflow_cli::say(format_args!("mipflow headless: writing the plot: {e}"));
    }
    code
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(
                    "warn,mipflow=info,wgpu_core=warn,wgpu_hal=warn,naga=warn",
                )
            }),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a log file or a CI capture gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // A log line that cannot be written (a reader closed the pipe) is dropped: reporting it
        // on stderr too panicked, and a run ended without its report.
        .log_internal_errors(false)
        .init();
    // An interrupted write leaves no temporary part behind.
    mipflow_cli::remove_parts_on_signal();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return argument_error(&e),
    };
    match cli.command {
        Some(Command::Cook(args)) => {
            ExitCode::from(mipflow_cli::cook_cmd::run_cook(&args).clamp(0, 255) as u8)
        }
        Some(Command::Inspect(args)) => {
            ExitCode::from(mipflow_cli::inspect::run_inspect(&args).clamp(0, 255) as u8)
        }
        Some(Command::Headless(args)) => headless(&args),
        Some(Command::Bench(args)) => mipflow_cli::bench::run_bench(&args),
        Some(Command::Demo(args)) => mipflow_cli::demo::run(&args),
        None => mipflow_cli::demo::run(&cli.demo),
    }
}

/// A flag clap refused (a bad `--size`, `--budget`...): the message each subcommand prints for
/// its own usage errors (`mipflow demo: ...`, `mipflow headless: ...` and its `verdict: ERROR`
/// line), exit 2. `--help` and `--version` print as clap does.
fn argument_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    // `args_os`: an argument that is not UTF-8 (a file name) must not panic here.
    let sub = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .find(|a| !a.starts_with('-'))
        .filter(|a| ["demo", "cook", "inspect", "headless", "bench"].contains(&a.as_str()))
        .unwrap_or_else(|| "demo".to_owned());
    let text = e.render().to_string();
    let text = text.trim_end().trim_start_matches("error: ");
    mipflow_cli::say!("mipflow {sub}: {text}");
    if sub == "headless" {
        mipflow_cli::say!("verdict: ERROR (set-up)");
    }
    ExitCode::from(2)
}
