//! The `mipflow` command line: `demo` (default), `render`, `cook`, `inspect`, `headless`, `bench`.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "mipflow",
    version,
    about = "VRAM-budgeted BC7/KTX2 texture streaming on wgpu"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Cook images (PNG, JPG, TGA, BMP) into BC7 KTX2 files with full mip chains.
    Cook(mipflow::cook::CookArgs),
    /// Print and validate the contents of KTX2 files.
    Inspect(mipflow::ktx2::InspectArgs),
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("info,wgpu_core=warn,wgpu_hal=warn,naga=warn")
            }),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Cook(args)) => mipflow::cook::run_cook(&args),
        Some(Command::Inspect(args)) => mipflow::ktx2::run_inspect(&args),
        None => 0,
    };
    std::process::exit(code);
}
