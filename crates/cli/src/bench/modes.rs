//! The three modes, run interleaved frame by frame, and the machine they ran on.

use super::*;

/// The scene, prepared once (cooked into the cache) so that every mode's set-up reads the same
/// files and no mode's time to first frame pays for cooking.
pub(super) enum Prepared {
    /// The hall's textures, and its floor and walls as tiled textures when the scenario says so.
    Demo(Vec<(TextureSource, u32)>, Large),
    Gallery(PathBuf),
    Grid {
        seed: u64,
        count: u32,
        size: u32,
    },
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
                let large = Large {
                    floor: match sc.scene.floor_tiles {
                        Some(side) => Some(scenes::tiled_floor_texture(side, cache)?),
                        None => None,
                    },
                    walls: match sc.scene.walls_tiles {
                        Some(side) => scenes::tiled_enclosure_textures(side, cache)?,
                        None => Vec::new(),
                    },
                };
                Ok((Prepared::Demo(out, large), "demo"))
            }
        }
    }

    /// Builds the scene into `r` exactly as `scenes::build_demo` / `build_gallery` /
    /// `build_grid` do; returns the scene's length for the default camera.
    fn build(&self, r: &mut Renderer, mode: Mode) -> Result<f32> {
        let residency = mode.residency();
        match self {
            Prepared::Demo(textures, large) => {
                let mut handles = Vec::with_capacity(textures.len());
                for (src, size) in textures {
                    handles.push((scenes::add_texture(r, src.clone(), residency)?, *size));
                }
                let length = scenes::build_hall_with(r, &handles, large.floor.is_none())?;
                // (e): streamed tile by tile; the others: the same file as a texture like the
                // hall's.
                let texture = |r: &mut Renderer, f: &mipflow::TileSource| -> Result<_> {
                    if mode == Mode::Tiles {
                        return Ok(None);
                    }
                    let src = match f {
                        mipflow::TileSource::File(p) => TextureSource::path(p.clone()),
                        mipflow::TileSource::Bytes(b) => TextureSource::bytes(b.to_vec()),
                    };
                    Ok(Some(scenes::add_texture(r, src, residency)?))
                };
                if let Some(f) = &large.floor {
                    let h = texture(r, f)?;
                    scenes::add_floor(r, length, f, h)?;
                }
                let handles = large
                    .walls
                    .iter()
                    .map(|f| texture(r, f))
                    .collect::<Result<Vec<_>>>()?;
                scenes::add_enclosure(r, length, &large.walls, &handles)?;
                Ok(length)
            }
            Prepared::Gallery(dir) => scenes::build_gallery(r, dir, residency),
            Prepared::Grid { seed, count, size } => {
                scenes::build_grid(r, *seed, *count, *size, residency)
            }
        }
    }
}

/// The demo scene's large textures, streamed tile by tile in (e): the floor; the walls and the
/// ceiling (`scenes::ENCLOSURE`).
pub(super) struct Large {
    floor: Option<mipflow::TileSource>,
    walls: Vec<mipflow::TileSource>,
}

/// One mode while it runs.
pub(super) struct ModeRun {
    mode: Mode,
    pub(super) r: Renderer,
    output: TrackedTexture,
    view: wgpu::TextureView,
    alloc_base: Option<u64>,
    pub(super) summary: ModeSummary,
}

impl ModeRun {
    fn new(mode: Mode, opts: &BenchOptions, budget: u64, scene: &Prepared) -> Result<(Self, f32)> {
        let feedback = if mode == Mode::MipflowNoFeedback {
            mipflow::FeedbackConfig::off()
        } else {
            mipflow::FeedbackConfig::default()
        };
        Self::with_feedback(mode, opts, budget, scene, feedback)
    }

    /// [`ModeRun::new`] with the feedback settings given (the sweep's demand settings).
    pub(super) fn with_feedback(
        mode: Mode,
        opts: &BenchOptions,
        budget: u64,
        scene: &Prepared,
        feedback: mipflow::FeedbackConfig,
    ) -> Result<(Self, f32)> {
        let ctx = GpuContext::headless(&GpuConfig::default())?;
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
        config.feedback = feedback;
        let mut r = Renderer::with_context(ctx, config)?;
        if !mode.streamed() {
            r.set_scale_range(1.0, 1.0);
        }
        let (w, h) = (sc.size[0], sc.size[1]);
        // The output stands in for a swapchain image: charged to `Other` (as in the headless
        // runner), the same in every mode, and counted by (c)'s planner as fixed bytes.
        let output = r.context().create_offscreen_target("bench output", w, h)?;
        let view = output.create_view(&Default::default());
        let length = scene.build(&mut r, mode)?;
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
        // The set-up's upload staging (charged until the GPU had the data) is reported on its
        // own; the peaks start again from what the set-up left, so that `peak_bytes` compares
        // what each mode keeps, not how it loaded.
        let ledger = run.r.context().ledger();
        run.summary.setup_staging_peak_bytes = ledger.snapshot().by_category.staging.peak;
        ledger.reset_peaks();
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

    pub(super) fn frame(&mut self, frame: u64, camera: Camera, budget: u64) -> Result<()> {
        if self.mode.streamed() && self.r.budget().current_bytes() != budget {
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
        let streamed = self.mode.streamed();
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
            blur_pixel_octaves: f64::from(stats.blur_pixel_octaves),
        });
        let s = &mut self.summary;
        s.grows += u64::from(stats.stream.grows);
        s.cancels += u64::from(stats.stream.cancels);
        s.cancels_after_arrival += u64::from(stats.stream.cancels_after_arrival);
        s.blur_max_pixel_octaves = s
            .blur_max_pixel_octaves
            .max(f64::from(stats.blur_pixel_octaves));
        if streamed && stats.budget_too_small {
            s.budget_too_small_frames += 1;
            s.floor_bytes_max = s.floor_bytes_max.max(stats.floor_bytes);
        }
        self.sample_memory();
        Ok(())
    }

    pub(super) fn read_back(&self) -> Result<Vec<u8>> {
        let img = mipflow::read_texture_rgba8(self.r.context(), self.output.texture())?;
        // The readback's staging buffer is gone now: start the peaks again from here, so that it
        // never counts as the mode's VRAM (the summary already holds the peaks so far).
        self.r.context().ledger().reset_peaks();
        Ok(img)
    }

    pub(super) fn finish(mut self) -> ModeSummary {
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
        if self.mode.streamed() {
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

pub(super) fn capped_psnr(a: &[u8], b: &[u8]) -> f64 {
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
                format!("--budget {}", mipflow::format_bytes(v)),
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
    // The default tours go as far as `--speed` takes them in the frames (at most the scene's
    // length): the same speed at any texture count.
    let travel = opts.speed * sc.frames as f32;
    let camera_at = |frame: u64| {
        let (eye, target) = sc.camera_at(frame).unwrap_or_else(|| match kind {
            "grid" => {
                let reach = length.min(travel);
                (
                    glam::Vec3::new(
                        0.0,
                        0.0,
                        2.0 + reach * (1.0 - frame as f32 / sc.frames as f32),
                    ),
                    glam::Vec3::ZERO,
                )
            }
            _ => scenes::tour(frame, sc.frames, (travel * 0.5 + 4.0).min(length)),
        });
        Camera::look_at(eye, target)
    };
    let (speed_mean, speed_max) = camera_speed(sc.frames, &camera_at);
    // (c) and (d): as a game behind its loading screen, the first view streamed before frame 0.
    let streamed = |mode: Mode| -> Result<ModeRun> {
        progress(&format!("set-up: {}", mode.title()));
        let (mut m, _) = ModeRun::new(mode, opts, budget_at(0), &scene)?;
        if opts.prefetch {
            // Deterministic streaming waits for each frame's reads, so its prefetch ends when
            // the view is resident (or the budget holds no more): the limit only guards a hang,
            // and must not cut a slow machine's prefetch short (frame 0 would then differ).
            let limit = if opts.deterministic { 600 } else { 10 };
            let p = m.r.prefetch(
                (sc.size[0], sc.size[1]),
                &camera_at(0),
                std::time::Duration::from_secs(limit),
            )?;
            m.summary.setup_ms += f64::from(p.ms);
            m.summary.prefetch = Some(p);
        }
        Ok(m)
    };
    let c = streamed(Mode::Mipflow)?;
    let d = streamed(Mode::MipflowNoFeedback)?;
    let textures = c.r.streamer().texture_count() as u64;
    let machine = machine(a.r.context());
    let mut runs = vec![a, b, c, d];
    // (e) where the scene has large textures to stream tile by tile.
    if matches!(&scene, Prepared::Demo(_, l) if l.floor.is_some() || !l.walls.is_empty()) {
        runs.push(streamed(Mode::Tiles)?);
    }

    progress(&format!(
        "rendering {} frames x {} modes, interleaved",
        sc.frames,
        runs.len()
    ));
    let mut last = Instant::now();
    let mut references: sweep::References = Vec::new();
    // What fails from here is noted in the report, which keeps what was measured before and
    // beside it (a failed sweep point lost the whole run's figures).
    let mut errors = Vec::new();
    let mut compare = |runs: &mut [ModeRun], frame: u64| -> Result<()> {
        let reference = runs[0].read_back()?;
        let (w, h) = (sc.size[0], sc.size[1]);
        if !opts.sweep.is_empty() {
            references.push((frame, reference.clone()));
        }
        for m in &mut runs[1..] {
            let img = m.read_back()?;
            let psnr = capped_psnr(&reference, &img);
            let ssim = mipflow_cook::compare::ssim(&reference, &img, w, h);
            if let Some(f) = m.summary.frames.last_mut() {
                f.psnr_db = Some(psnr);
                f.ssim = Some(ssim);
            }
        }
        Ok(())
    };
    'frames: for frame in 0..sc.frames {
        let camera = camera_at(frame);
        for m in &mut runs {
            let fails = opts.fail_at_frame == Some(frame) && m.mode == Mode::Mipflow;
            let r = if fails {
                Err(Error::Scenario(format!(
                    "frame {frame} failed on purpose (a test's)"
                )))
            } else {
                m.frame(frame, camera, budget_at(frame))
            };
            if let Err(e) = r {
                errors.push(format!("{}, frame {frame}: {e}", m.mode.title()));
                break 'frames;
            }
        }
        if (frame % opts.quality_every == 0 || frame + 1 == sc.frames)
            && let Err(e) = compare(&mut runs, frame)
        {
            errors.push(format!("comparing frame {frame}: {e}"));
            break 'frames;
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

    // A sweep compares with the main run's references: not after a main run that failed.
    let sweep = if opts.sweep.is_empty() || !errors.is_empty() {
        None
    } else {
        match sweep::run_sweep(
            opts,
            &scene,
            &references,
            modes[0].peak_bytes,
            budget_at(0),
            &camera_at,
            progress,
        ) {
            Ok(s) => Some(s),
            Err(e) => {
                errors.push(format!("the budget sweep: {e}"));
                None
            }
        }
    };
    drop(references);

    progress(&format!("planner: {} textures", opts.planner_textures));
    let planner = planner_bench(opts.planner_textures, if opts.quick { 200 } else { 2000 });
    progress("upload against memcpy");
    let upload = match GpuContext::headless(&GpuConfig::default()) {
        Ok(ctx) => match upload_bench(&ctx, opts.quick) {
            Ok(u) => Some(u),
            Err(e) => {
                errors.push(format!("upload against memcpy: {e}"));
                None
            }
        },
        Err(e) => {
            tracing::warn!(error = %e, "no context for the upload measurement");
            None
        }
    };
    progress("cook per quality");
    let cook = cook_bench(opts.quick).unwrap_or_else(|e| {
        errors.push(format!("cook per quality: {e}"));
        Vec::new()
    });

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
            camera_speed_mean: speed_mean,
            camera_speed_max: speed_max,
        },
        modes,
        planner: Some(planner),
        upload,
        cook,
        sweep,
        goals: Vec::new(),
        total_seconds: 0.0,
        errors,
    };
    report.goals = goals(&report, opts);
    if !report.errors.is_empty() {
        // Figures of a run cut short: shown, not judged.
        for g in &mut report.goals {
            g.met = None;
        }
    }
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The camera's mean and largest move per frame over `frames` frames, world units.
fn camera_speed(frames: u64, camera_at: &dyn Fn(u64) -> Camera) -> (f64, f64) {
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    let mut prev = camera_at(0).position();
    for f in 1..frames {
        let p = camera_at(f).position();
        let d = f64::from(p.distance(prev));
        sum += d;
        max = max.max(d);
        prev = p;
    }
    (sum / frames.saturating_sub(1).max(1) as f64, max)
}

pub(super) fn machine(ctx: &GpuContext) -> Machine {
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
