//! `minimal_game`: the library's one frame, printed (see the crate docs).

use std::process::ExitCode;

fn main() -> ExitCode {
    match minimal_game::render((256, 256)) {
        Ok(s) => {
            println!(
                "minimal-game: 1 texture (256x256, levels {}.. of {} resident), {:.2} MiB on the GPU, \
                 image mean {:.1}, {} of {} pixels covered",
                s.resident_level,
                s.levels,
                s.gpu_bytes as f64 / 1048576.0,
                s.mean,
                s.covered,
                s.size.0 * s.size.1
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("minimal-game: {e}");
            ExitCode::FAILURE
        }
    }
}
