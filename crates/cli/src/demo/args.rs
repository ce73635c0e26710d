//! The demo's command line and the options it checks into.

use super::*;

/// The room the automatic budget leaves beside the window's fixed bytes (its full-resolution
/// render targets, the swapchain, the overlay, meshes): upload staging and textures. Why 14 MiB:
/// flying the default hall, the view wants 6 to 12 MiB of mips at 1280x720 and the upload ring
/// takes up to 8 MiB; with 14 MiB the budget is full all the time, textures are evicted and
/// streamed back as the view changes, and the render scale gives way where the view wants more
/// (measured: `assets/tour.toml`'s first act, 87 level drops in 150 frames at 640x360).
pub const AUTO_ROOM_BYTES: u64 = 14 << 20;
/// The budget before the first frame has measured the window's fixed bytes (automatic budget).
pub const PROVISIONAL_BUDGET_BYTES: u64 = 64 << 20;

/// Arguments of `mipflow demo` (also the defaults of `mipflow` with no subcommand).
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Show a folder of your own .ktx2 and .dds files (and PNG/JPEG/TGA/BMP images, cooked on the fly) as
    /// a gallery instead of the procedural hall.
    #[arg(long, value_name = "DIR")]
    pub textures: Option<PathBuf>,
    /// The VRAM budget shared by textures and render targets ("128MiB", "1.5GiB", bytes).
    /// Default: automatic, the window's fixed bytes (full-resolution render targets, swapchain,
    /// overlay) plus 14 MiB for upload staging and textures, which keeps the budget pressed:
    /// textures are traded as the view changes. For an unpressed run pass a large budget
    /// (`--budget 1GiB`) or move the overlay's slider.
    #[arg(long, value_name = "SIZE", value_parser = crate::size_arg)]
    pub budget: Option<u64>,
    /// Fly the built-in tour (down the hall and back, near the walls and far from them) and play
    /// its story (`assets/tour.toml`): the budget lowered in steps to well below what the view
    /// wants, held, and raised again, with a caption per act. Moving the budget slider ends the
    /// story (the tour flies on).
    #[arg(long)]
    pub tour: bool,
    /// Frames one lap of the tour (and its story) takes.
    #[arg(long, value_name = "N", default_value_t = 1800)]
    pub tour_frames: u64,
    /// Print one line per second with the totals per category (stderr), like `nvidia-smi -l 1`,
    /// and a line per event (budget and scale changes, eviction and re-streaming waves,
    /// out-of-memory errors) and per act of the tour.
    #[arg(long)]
    pub monitor: bool,
    /// Exit after N frames, counted from when the scene has finished loading.
    #[arg(long, value_name = "N")]
    pub frames: Option<u64>,
    /// Save the final frame, overlay included, as a PNG (with --frames; default 120 frames).
    #[arg(long, value_name = "PATH.png")]
    pub screenshot: Option<PathBuf>,
    /// Window size, WxH.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = crate::wxh_arg)]
    pub size: (u32, u32),
    /// Procedural textures in the hall (the default scene: 200).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub count: u32,
    /// Largest procedural texture side: 1 in 16 textures has it, 1 in 4 half of it, the rest a
    /// quarter.
    #[arg(long, value_name = "TEXELS", default_value_t = 2048)]
    pub max_size: u32,
    /// Seed of the procedural textures.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start with the overlay hidden (F1 shows it).
    #[arg(long)]
    pub no_overlay: bool,
    /// Present without waiting for vertical blank (for measuring frame rates).
    #[arg(long)]
    pub no_vsync: bool,
    /// Smallest render scale per axis the resolution controller may use.
    #[arg(long, value_name = "SCALE", default_value_t = 0.5)]
    pub min_scale: f32,
    /// A GPU frame-time target in ms: above it the render scale goes down too.
    #[arg(long, value_name = "MS")]
    pub target_ms: Option<f32>,
    /// Anisotropic filtering, 1 to 16. Default: 8, or 1 on a software adapter such as lavapipe,
    /// where 8x halves the frame rate.
    #[arg(long, value_name = "N")]
    pub anisotropy: Option<u16>,
    /// Threads cooking textures in the background (each also encodes in parallel).
    #[arg(long, default_value_t = 2)]
    pub cook_threads: usize,
    /// Testing aid: request a new window size every few frames (down to 1x1 and back).
    #[arg(long, hide = true)]
    pub resize_test: bool,
}

impl Default for DemoArgs {
    fn default() -> Self {
        Self {
            textures: None,
            budget: None,
            tour: false,
            tour_frames: 1800,
            monitor: false,
            frames: None,
            screenshot: None,
            size: (1280, 720),
            count: 200,
            max_size: 2048,
            seed: 1,
            no_overlay: false,
            no_vsync: false,
            min_scale: 0.5,
            target_ms: None,
            anisotropy: None,
            cook_threads: 2,
            resize_test: false,
        }
    }
}

/// The arguments, checked.
#[derive(Clone, Debug)]
pub(super) struct Options {
    pub(super) args: DemoArgs,
    /// `None`: automatic.
    pub(super) budget: Option<u64>,
    pub(super) size: (u32, u32),
    pub(super) choice: SceneChoice,
    pub(super) frames: Option<u64>,
}

impl Options {
    pub(super) fn from_args(args: &DemoArgs) -> Result<Self, String> {
        let (budget, size) = (args.budget, args.size);
        if !(64..=16384).contains(&args.max_size) {
            return Err(format!(
                "--max-size {}: expected 64 to 16384",
                args.max_size
            ));
        }
        if args.textures.is_none() {
            crate::headless::scenario::check_texture_size("demo", args.max_size)
                .map_err(|e| format!("--max-size {e}"))?;
        }
        if let Some(n) = args.frames
            && (n == 0 || n > crate::headless::scenario::MAX_FRAMES)
        {
            return Err(format!(
                "--frames {n}: expected 1 to {}",
                crate::headless::scenario::MAX_FRAMES
            ));
        }
        if args.tour_frames == 0 || args.tour_frames > crate::headless::scenario::MAX_FRAMES {
            return Err(format!(
                "--tour-frames {}: expected 1 to {}",
                args.tour_frames,
                crate::headless::scenario::MAX_FRAMES
            ));
        }
        if args.count == 0 || args.count > 20_000 {
            return Err(format!("--count {}: expected 1 to 20000", args.count));
        }
        if !(args.min_scale.is_finite() && args.min_scale > 0.0 && args.min_scale <= 1.0) {
            return Err(format!(
                "--min-scale {}: expected a scale in (0, 1]",
                args.min_scale
            ));
        }
        if let Some(t) = args.target_ms
            && !(t.is_finite() && t > 0.0)
        {
            return Err(format!("--target-ms {t}: expected a positive number"));
        }
        if let Some(a) = args.anisotropy
            && !(1..=16).contains(&a)
        {
            return Err(format!("--anisotropy {a}: expected 1 to 16"));
        }
        let choice = match &args.textures {
            Some(dir) => SceneChoice::Gallery(dir.clone()),
            None => SceneChoice::Demo {
                seed: args.seed,
                count: args.count,
                max_size: args.max_size,
                cache: Some(scenes::cache_dir()),
            },
        };
        // Checked before the window opens: a run must not end in a screenshot that could
        // never be written.
        if let Some(p) = &args.screenshot {
            // Not a device, a pipe, a link or a folder; not a file of the texture folder shown.
            let inputs: Vec<(&str, &std::path::Path)> = args
                .textures
                .as_deref()
                .map(|d| ("--textures folder", d))
                .into_iter()
                .collect();
            crate::check_outputs(&[("--screenshot", p)], &inputs)?;
            // Saved as an RGBA PNG.
            crate::check_image_path(p, &["png"]).map_err(|e| format!("--screenshot {e}"))?;
        }
        let frames = match (args.frames, &args.screenshot) {
            (Some(n), _) => Some(n),
            (None, Some(_)) => Some(120),
            (None, None) => None,
        };
        Ok(Self {
            args: args.clone(),
            budget,
            size,
            choice,
            frames,
        })
    }
}
