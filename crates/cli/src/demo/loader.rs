//! Builds the demo's scene while it is already on screen.
//!
//! Cooking 200 procedural textures (or a folder of images) takes a minute or more on a fresh
//! cache, so it happens on worker threads. The workers send each finished [`TextureSource`] over a
//! channel; the main thread ([`Loader::poll`], once per frame) adds it to the [`Renderer`] and
//! places its panel in the hall at the slot its index gives, so the layout does not depend on
//! the order in which textures finish. The first frame therefore comes at once, and the walls
//! fill in front of the viewer: the workers take the jobs in index order, nearest panels first.
//!
//! The renderer itself stays on the main thread (it is not shared between threads); only plain
//! bytes and paths cross the channel.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::scenes::{self, TextureSpec};
use mipflow::MeshHandle;
use mipflow::{MaterialDesc, Renderer, TextureOptions, TextureSource};
use mipflow_cook::{CookOptions, Quality};

/// What the demo shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SceneChoice {
    /// The procedural hall: `count` textures, the largest `max_size`, cached in `cache`.
    Demo {
        /// Seed of the textures' colours and patterns.
        seed: u64,
        /// Number of textures.
        count: u32,
        /// Largest side (1 in 16 textures has it, 1 in 4 half of it, the rest a quarter).
        max_size: u32,
        /// Cache folder for the cooked files (`None`: cook in memory every run).
        cache: Option<PathBuf>,
    },
    /// Every `.ktx2` file and image (PNG, JPEG, TGA, BMP; cooked on the fly) under a folder.
    Gallery(PathBuf),
}

/// One texture to make.
#[derive(Clone, Debug)]
enum Job {
    Procedural(TextureSpec, Option<PathBuf>),
    Ktx2(PathBuf),
    Image(PathBuf),
}

impl Job {
    fn run(&self) -> Result<TextureSource> {
        match self {
            Job::Procedural(spec, cache) => Ok(scenes::cached_procedural(
                spec,
                Quality::Fast,
                cache.as_deref(),
            )?),
            Job::Ktx2(p) => Ok(TextureSource::Path(Arc::new(p.clone()))),
            Job::Image(p) => {
                let img = image::open(p).map_err(|source| Error::Image {
                    path: p.clone(),
                    source,
                })?;
                let opts = CookOptions {
                    quality: Quality::Fast,
                    // Any photo streams level by level (see `Resize::Stream`).
                    resize: mipflow_cook::Resize::Stream,
                    ..CookOptions::default()
                };
                let tex = mipflow_cook::cook_image(&img, &opts)?;
                let mut out = Vec::new();
                mipflow::ktx2::write_ktx2(&mut out, &tex, None, "mipflow demo").map_err(
                    |source| Error::Io {
                        path: p.clone(),
                        source,
                    },
                )?;
                Ok(TextureSource::Bytes(out.into()))
            }
        }
    }

    fn name(&self) -> String {
        match self {
            Job::Procedural(s, _) => s.name.clone(),
            Job::Ktx2(p) | Job::Image(p) => p.display().to_string(),
        }
    }
}

type Message = (usize, Result<TextureSource>);

/// Extensions the gallery shows: KTX2 and DDS as they are, images cooked on the fly.
const GALLERY_EXTENSIONS: [&str; 7] = ["ktx2", "dds", "png", "jpg", "jpeg", "tga", "bmp"];

/// The background scene builder (see the module documentation).
pub struct Loader {
    rx: mpsc::Receiver<Message>,
    jobs: Arc<Vec<Job>>,
    received: usize,
    failed: usize,
    stop: Arc<AtomicBool>,
    panel_mesh: MeshHandle,
    floor_mesh: MeshHandle,
    floor_done: bool,
    length: f32,
    started: Instant,
    finished: Option<Duration>,
    progress: indicatif::ProgressBar,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("total", &self.jobs.len())
            .field("received", &self.received)
            .field("failed", &self.failed)
            .finish()
    }
}

impl Loader {
    /// Starts building `choice` into `r`: the meshes now, the textures on `threads` workers.
    /// Errors: an unreadable gallery folder, or one with no usable file.
    pub fn start(r: &mut Renderer, choice: &SceneChoice, threads: usize) -> Result<Self> {
        let jobs: Vec<Job> = match choice {
            SceneChoice::Demo {
                seed,
                count,
                max_size,
                cache,
            } => scenes::demo_specs(*seed, *count, *max_size)
                .into_iter()
                .map(|s| Job::Procedural(s, cache.clone()))
                .collect(),
            SceneChoice::Gallery(dir) => {
                let mut files = Vec::new();
                scenes::find_files(dir, &GALLERY_EXTENSIONS, &mut files)?;
                files.sort();
                files
                    .into_iter()
                    .map(|p| {
                        if p.extension().is_some_and(|x| {
                            x.eq_ignore_ascii_case("ktx2") || x.eq_ignore_ascii_case("dds")
                        }) {
                            Job::Ktx2(p)
                        } else {
                            Job::Image(p)
                        }
                    })
                    .collect()
            }
        };
        if jobs.is_empty() {
            let what = match choice {
                SceneChoice::Gallery(d) => format!("no .ktx2 or image files under {}", d.display()),
                SceneChoice::Demo { .. } => "the demo scene has no textures (--count 0)".to_owned(),
            };
            return Err(Error::Scenario(what));
        }
        let (pv, pi) = scenes::panel(1.0, 1.0);
        let panel_mesh = r.add_mesh(&pv, &pi)?;
        let (fv, fi) = mipflow::quad_xz();
        let floor_mesh = r.add_mesh(&fv, &fi)?;
        let length = scenes::hall_length(jobs.len());
        let jobs = Arc::new(jobs);
        let (tx, rx) = mpsc::channel::<Message>();
        let stop = Arc::new(AtomicBool::new(false));
        let next = Arc::new(AtomicUsize::new(0));
        for t in 0..threads.max(1) {
            let (tx, jobs, stop, next) = (tx.clone(), jobs.clone(), stop.clone(), next.clone());
            // Detached: at exit a worker may be inside one cook; nothing waits for it.
            let spawned = std::thread::Builder::new()
                .name(format!("mipflow-cook-{t}"))
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        // A decoder or cooker that panics fails its texture: a worker that died
                        // without sending left the scene "loading" for ever.
                        let res =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run()))
                                .unwrap_or_else(|_| {
                                    Err(crate::error::Error::Scenario(
                                        "loading it panicked (see the message above)".to_owned(),
                                    ))
                                });
                        if tx.send((i, res)).is_err() {
                            break;
                        }
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "could not start a cooking thread");
            }
        }
        let progress = indicatif::ProgressBar::new(jobs.len() as u64);
        progress.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:40}] {pos}/{len} textures ({elapsed}, eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        progress.set_message("loading the scene");
        Ok(Self {
            rx,
            jobs,
            received: 0,
            failed: 0,
            stop,
            panel_mesh,
            floor_mesh,
            floor_done: false,
            length,
            started: Instant::now(),
            finished: None,
            progress,
        })
    }

    /// Adds finished textures to `r` for at most `budget` of wall time (at least one when any is
    /// ready; never blocks on the workers). Returns how many were added.
    ///
    /// The time cap bounds the frame's cost: each add reads the file's header and floor tail and
    /// uploads the floor. A cap in time rather than in count lets a warm cache load in a few
    /// frames even when frames are slow (software rendering).
    pub fn poll(&mut self, r: &mut Renderer, budget: Duration) -> usize {
        let start = Instant::now();
        let mut added = 0;
        while self.finished.is_none() && (added == 0 || start.elapsed() < budget) {
            let Ok((i, res)) = self.rx.try_recv() else {
                break;
            };
            self.received += 1;
            self.progress.inc(1);
            match res.and_then(|src| self.place(r, i, src)) {
                Ok(()) => added += 1,
                Err(e) => {
                    self.failed += 1;
                    let name = self.jobs.get(i).map(Job::name).unwrap_or_default();
                    self.progress
                        .suspend(|| tracing::warn!(texture = %name, error = %e, "skipped"));
                }
            }
            if self.received == self.jobs.len() {
                let took = self.started.elapsed();
                self.finished = Some(took);
                self.progress.finish_and_clear();
                tracing::info!(
                    textures = self.received - self.failed,
                    failed = self.failed,
                    seconds = format!("{:.2}", took.as_secs_f64()),
                    "scene loaded"
                );
            }
        }
        added
    }

    fn place(&mut self, r: &mut Renderer, i: usize, src: TextureSource) -> Result<()> {
        let tex = r.add_texture(src, TextureOptions::default())?;
        let size = r.streamer().texture_width(tex).unwrap_or(1024);
        let aspect = r.streamer().texture_aspect(tex).unwrap_or(1.0);
        let mat = r.add_material(MaterialDesc::new(tex))?;
        let t = scenes::hall_panel_transform_with_aspect(i, size, aspect);
        r.add_instance(self.panel_mesh, mat, t)?;
        if !self.floor_done {
            // The floor shows the first texture that arrives, tiled along the hall.
            self.floor_done = true;
            for t in scenes::hall_floor_transforms(self.length) {
                r.add_instance(self.floor_mesh, mat, t)?;
            }
        }
        Ok(())
    }

    /// Textures in the scene when loading is done.
    pub fn total(&self) -> usize {
        self.jobs.len()
    }

    /// Textures received so far (added or failed).
    pub fn received(&self) -> usize {
        self.received
    }

    /// Textures that could not be made or added.
    pub fn failed(&self) -> usize {
        self.failed
    }

    /// Whether every texture has been received.
    pub fn is_done(&self) -> bool {
        self.finished.is_some()
    }

    /// How long loading took, once done.
    pub fn load_time(&self) -> Option<Duration> {
        self.finished
    }

    /// The hall's length (for the tour).
    pub fn hall_length(&self) -> f32 {
        self.length
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.progress.finish_and_clear();
    }
}
