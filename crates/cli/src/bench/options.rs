//! The bench's options: [`BenchArgs`] checked and resolved.

use super::*;

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

/// The default tour's mean speed, world units a frame: the default scene's (64 textures, 120
/// frames) tour as it was when its length followed the texture count, so its figures compare
/// with the figures recorded before it.
pub const DEFAULT_TOUR_SPEED: f32 = 1.2;

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
    /// `--speed`: the default tour's mean speed, units a frame.
    pub speed: f32,
    /// Short micro-benchmarks.
    pub quick: bool,
    /// `--sweep`: denominators of (a)'s peak VRAM (empty: no sweep).
    pub sweep: Vec<u32>,
    /// Cache folder for the procedural textures.
    pub cache: Option<PathBuf>,
    /// The command line, for the report.
    pub command: String,
    /// Tests only: (c)'s frame that fails (as a device error would), to check that the report
    /// keeps what was measured. Never set from the command line.
    #[doc(hidden)]
    pub fail_at_frame: Option<u64>,
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
            if f == 0 || f > crate::headless::scenario::MAX_FRAMES {
                return Err(format!(
                    "--frames {f}: expected 1 to {}",
                    crate::headless::scenario::MAX_FRAMES
                ));
            }
            sc.frames = f;
        }
        if let Some((w, h)) = args.size {
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
            crate::headless::scenario::check_texture_size(&sc.scene.kind, t)
                .map_err(|e| format!("--texture-size {e}"))?;
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
        if !(args.speed.is_finite() && args.speed > 0.0 && args.speed <= 1000.0) {
            return Err(format!(
                "--speed {}: expected more than 0 and at most 1000 units a frame",
                args.speed
            ));
        }
        let budget = match args.budget {
            Some(b) => {
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
        if let Some(dir) = &args.textures {
            // A folder with nothing to show is the command line's mistake, found before the
            // set-up (it failed the run after the scene's preparation, exit 1).
            crate::scenes::gallery_files(dir).map_err(|e| format!("--textures: {e}"))?;
        }
        let sweep = match &args.sweep {
            Some(list) => sweep::parse_denominators(list).map_err(|e| format!("--sweep {e}"))?,
            None => Vec::new(),
        };
        let command = std::iter::once("mipflow".to_owned())
            // `args_os`: a name that is not UTF-8 is shown lossily (`args` panics on it).
            .chain(
                std::env::args_os()
                    .skip(1)
                    .map(|a| a.to_string_lossy().into_owned()),
            )
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
            speed: args.speed,
            quick: args.quick,
            sweep,
            cache: Some(scenes::cache_dir()),
            command,
            fail_at_frame: None,
        })
    }
}
