//! `mipflow cook`: find inputs, cook them in parallel with a progress bar, skip up-to-date outputs,
//! write atomically, report failures.
//!
//! **Incremental.** Each output carries a key/value entry [`COOK_STAMP_KEY`] (`mipflow.cook`) whose
//! value names the cooker version, the encoder and every setting, followed by the XXH3-128 hash of
//! the input file's bytes. An output is up to date, and skipped unless `--force`, when its header
//! parses and its stamp equals the one the current input and settings give. Hashing content (rather
//! than comparing modification times) survives checkouts and copies, and costs far less than a cook.
//!
//! **Atomic.** An output is written to a hidden temporary file `.<name>.<pid>.<random>.part` in the
//! output folder (with the umask's permissions), flushed and synced, then renamed over the output,
//! so a `.ktx2` is either complete or absent, even if the process is killed. A later run removes
//! leftover `.part` files of the outputs it writes whose process is gone; two cooks into one
//! folder at once both succeed (the last rename wins, and both write the same bytes for the same
//! input and settings).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use mipflow::ktx2::{COOK_STAMP_KEY, ReadLimits, read_info, write_ktx2, write_ktx2_tiled};
use mipflow_cook::{
    BlockKind, ColorSpace, CookError, CookOptions, MipFilter, Quality, Resize, Wrap, cook_rgba8,
    encoder_for_options, probe_alloc,
};
use mipflow_cook::{GpuEncoders, GpuMode, encoder::BlockEncoder};

/// Arguments of `mipflow cook`.
#[derive(Debug, Clone, clap::Args)]
pub struct CookArgs {
    /// Image files or folders (folders are searched recursively for .png .jpg .jpeg .tga .bmp
    /// .exr .hdr).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output folder: each input becomes OUTDIR/<path relative to its folder, extension .ktx2>.
    #[arg(short = 'o', long = "out", value_name = "OUTDIR")]
    pub out: PathBuf,
    /// BC7 encoder effort.
    #[arg(long, value_enum, default_value_t = Quality::Default)]
    pub quality: Quality,
    /// Supercompress each level with Zstandard at this level (1 to 22).
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd: Option<i32>,
    /// Colour space of the inputs' RGB.
    #[arg(long, value_enum, default_value_t = ColorSpace::Srgb)]
    pub color: ColorSpace,
    /// Treat inputs as tangent-space normal maps (linear, renormalised mips; overrides --color;
    /// stored as BC5 unless --format says otherwise).
    #[arg(long)]
    pub normal_map: bool,
    /// Block format: bc7 (default), bc1 (RGB, half the bytes), bc3 (RGBA), bc4 (red: masks,
    /// heights), bc5 (red and green: normal maps; the default with --normal-map), bc6h (HDR RGB
    /// half floats; from 8-bit inputs, their linear light).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<BlockKind>,
    /// What the mip filter reads past the edges: `clamp` (the edge texels; images that do not
    /// tile) or `repeat` (the other side: tiling textures, whose mips then tile seamlessly).
    #[arg(long, value_enum, default_value_t = Wrap::Clamp)]
    pub wrap: Wrap,
    /// Worker threads (default: one per CPU).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Cook even when an output is up to date.
    #[arg(long)]
    pub force: bool,
    /// The size each image is cooked at: `stream` resamples to the nearest size whose levels
    /// down to 32 texels are all multiples of the 4x4 block (so it streams level by level;
    /// sizes that already do are kept), `pow2` to powers of two, `keep` leaves it (a BC7 texture
    /// whose sides are not multiples of 4 cannot go on the GPU).
    #[arg(long, value_enum, default_value_t = Resize::Stream)]
    pub resize: Resize,
    /// Most memory one image may take to cook ("2GiB"): its working set is estimated from its
    /// header at 10 bytes a pixel (32 for .exr and .hdr, cooked in floats), before it is
    /// decoded; an image over it is that input's error and the others cook. Default: the memory available (`MemAvailable`) shared among the
    /// worker threads, or 4 GiB where that is unknown.
    #[arg(long, value_name = "SIZE", value_parser = crate::size_arg)]
    pub max_memory: Option<u64>,
    /// Encode the blocks on the GPU: `auto` where the machine has a real one (not a software
    /// adapter such as lavapipe), `on` on whatever adapter there is (an error without one),
    /// `off` on the CPU. OpenEXR and Radiance HDR inputs cooked to BC6H stay on the CPU.
    #[arg(long, value_enum, default_value_t = GpuMode::Auto)]
    pub gpu: GpuMode,
    /// Store the levels larger than SIZE texels tile by tile (SIZE a power of two from 64 to
    /// 1024, 128 when the flag has no value): one tile of one level is then one byte range
    /// (one Zstandard frame with --zstd), what tile streaming reads. The file stays a valid
    /// KTX2 file; the layout is in its `mipflowTiles` key/value entry (`mipflow inspect`).
    #[arg(long, value_name = "SIZE", num_args = 0..=1, default_missing_value = "128",
          value_parser = tile_size_arg)]
    pub tiles: Option<u32>,
}

/// `--tiles SIZE`: a power of two from 64 to 1024.
fn tile_size_arg(s: &str) -> Result<u32, String> {
    let range = mipflow::ktx2::TILE_SIZE_RANGE;
    match s.parse::<u32>() {
        Ok(n) if range.contains(&n) && n.is_power_of_two() => Ok(n),
        _ => Err(format!(
            "{s:?}: a power of two from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

/// The block encoder for `opts`: on `gpu` where there is one, else the CPU's.
fn encoder(opts: &CookOptions, gpu: Option<&Arc<GpuEncoders>>) -> Box<dyn BlockEncoder> {
    gpu.map_or_else(|| encoder_for_options(opts), |g| g.encoder(opts))
}

impl CookArgs {
    /// The cooking options these arguments select.
    pub fn options(&self) -> CookOptions {
        CookOptions {
            quality: self.quality,
            color: self.color,
            normal_map: self.normal_map,
            zstd: self.zstd,
            filter: MipFilter::default(),
            resize: self.resize,
            block: self.format,
            wrap: self.wrap,
            tiles: self.tiles,
        }
    }
}

/// Input extensions searched in folders (compared case-insensitively).
const EXTENSIONS: [&str; 7] = ["png", "jpg", "jpeg", "tga", "bmp", "exr", "hdr"];
/// Inputs in floating point (OpenEXR, Radiance HDR): cooked to BC6H in floats unless
/// `--format` says otherwise.
const HDR_EXTENSIONS: [&str; 2] = ["exr", "hdr"];
/// Bump when the cooker's output for the same input and settings changes.
const COOK_VERSION: u32 = 1;
/// Testing hook: when set to an output file name, the process writes half of that output's
/// temporary file and then aborts, as a crash or kill mid-write would.
#[doc(hidden)]
pub const ABORT_HOOK_ENV: &str = "MIPFLOW_TEST_ABORT_WRITING";
/// Testing hook: when set to an output file name, the process writes half of that output's
/// temporary file and then waits a minute, for a test to interrupt it.
#[doc(hidden)]
pub const STALL_HOOK_ENV: &str = "MIPFLOW_TEST_STALL_WRITING";

/// What a cook run did.
#[derive(Debug, Default)]
pub struct CookSummary {
    /// Outputs written.
    pub cooked: Vec<PathBuf>,
    /// Outputs skipped as up to date.
    pub up_to_date: Vec<PathBuf>,
    /// Failed inputs, each a [`CookError::Input`] naming the input, in input order.
    pub failed: Vec<CookError>,
    /// Megapixels (level 0) cooked.
    pub megapixels: f64,
    /// Wall-clock time of the run.
    pub seconds: f64,
    /// Outputs of an earlier cook removed as stale: `a.ktx2`, once `a.jpg` and `a.tga` are both
    /// inputs and cook to `a.jpg.ktx2` and `a.tga.ktx2` (left, a game would load the old one).
    pub removed_stale: Vec<PathBuf>,
    /// Files at such a name that this cook did not write (no cook stamp): left, and named.
    pub kept_foreign: Vec<PathBuf>,
}

struct Job {
    input: PathBuf,
    output: PathBuf,
}

enum Outcome {
    Cooked { megapixels: f64 },
    UpToDate,
}

fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// Maps inputs to jobs; inputs that cannot be used become failures. The third list holds the
/// output names given up because inputs differ by extension only (`a.ktx2`, when `a.jpg` and
/// `a.tga` cook to `a.jpg.ktx2` and `a.tga.ktx2`).
fn discover(args: &CookArgs) -> (Vec<Job>, Vec<CookError>, Vec<PathBuf>) {
    let mut jobs = Vec::new();
    let mut failed = Vec::new();
    let mut split = Vec::new();
    for input in &args.inputs {
        if input.is_dir() {
            let mut files = Vec::new();
            match crate::find_files(input, &EXTENSIONS, &mut files) {
                // A subfolder that cannot be read fails by its own name; the rest cooks.
                Ok(skipped) => failed.extend(
                    skipped
                        .into_iter()
                        .map(|(path, source)| CookError::Read { path, source }),
                ),
                Err(source) => {
                    failed.push(CookError::Read {
                        path: input.clone(),
                        source,
                    });
                    continue;
                }
            }
            if files.is_empty() {
                // A folder of nothing we cook (a typo, .webp files) is not a run that did it all.
                failed.push(CookError::NoImages {
                    path: input.clone(),
                });
                continue;
            }
            for file in files {
                let rel = file
                    .strip_prefix(input)
                    .unwrap_or(&file)
                    .with_extension("ktx2");
                jobs.push(Job {
                    output: args.out.join(rel),
                    input: file,
                });
            }
        } else if !input.exists() {
            failed.push(CookError::Read {
                path: input.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or folder"),
            });
        } else if !has_image_extension(input) {
            failed.push(CookError::UnsupportedInput {
                path: input.clone(),
            });
        } else {
            let name = Path::new(input.file_name().unwrap_or_default()).with_extension("ktx2");
            jobs.push(Job {
                output: args.out.join(name),
                input: input.clone(),
            });
        }
    }
    // One file named twice (`src/a.png ./src/a.png`, a link to it) is one job: compared by the
    // file it resolves to, not by its path text.
    let key = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // Two inputs must not race for one output. Inputs that differ by extension only (a.jpg
    // beside a.tga, as game folders often have) all keep their own output: each is named after
    // its source's extension (`a.jpg.ktx2`, `a.tga.ktx2`), with a warning. Same-named inputs
    // from different folders have no such rule and are refused, each with the other's name.
    let mut by_output: BTreeMap<PathBuf, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        by_output.entry(job.output.clone()).or_default().push(job);
    }
    let mut jobs = Vec::new();
    for (output, mut group) in by_output {
        group.sort_by_cached_key(|j| key(&j.input));
        group.dedup_by(|a, b| key(&a.input) == key(&b.input));
        let extensions: std::collections::BTreeSet<String> = group
            .iter()
            .map(|j| {
                j.input
                    .extension()
                    .map(|e| e.to_string_lossy().to_lowercase())
                    .unwrap_or_default()
            })
            .collect();
        if group.len() == 1 {
            jobs.extend(group);
        } else if extensions.len() == group.len() {
            let inputs: Vec<String> = group
                .iter()
                .map(|j| j.input.display().to_string())
                .collect();
            tracing::warn!(
                output = %output.display(),
                inputs = ?inputs,
                "inputs differ by extension only: each is written as <name>.<extension>.ktx2"
            );
            split.push(output.clone());
            for mut job in group {
                let ext = job
                    .input
                    .extension()
                    .map(|e| e.to_string_lossy().to_lowercase())
                    .unwrap_or_default();
                let stem = output
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                job.output = output.with_file_name(format!("{stem}.{ext}.ktx2"));
                jobs.push(job);
            }
        } else {
            refuse_collision(&output, group, &mut failed);
        }
    }
    // A name made for inputs that differ by extension can still be another input's own
    // (`a.jpg` and `a.tga` beside `a.jpg.png`, all three `a.jpg.ktx2`): refused as above.
    let mut by_output: BTreeMap<PathBuf, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        by_output.entry(job.output.clone()).or_default().push(job);
    }
    let mut jobs = Vec::new();
    for (output, group) in by_output {
        if group.len() == 1 {
            jobs.extend(group);
        } else {
            refuse_collision(&output, group, &mut failed);
        }
    }
    (jobs, failed, split)
}

/// The outputs given up for `<name>.<extension>.ktx2` names: an earlier cook's (it carries the
/// cook stamp) is removed; any other file is left and named.
fn remove_stale_outputs(split: &[PathBuf], summary: &mut CookSummary) {
    for path in split {
        let Ok(meta) = fs::symlink_metadata(path) else {
            continue;
        };
        let ours = meta.is_file()
            && read_info(path, &ReadLimits::default())
                .is_ok_and(|info| info.key_value_str(COOK_STAMP_KEY).is_some());
        if ours && fs::remove_file(path).is_ok() {
            summary.removed_stale.push(path.clone());
        } else {
            summary.kept_foreign.push(path.clone());
        }
    }
}

/// Refuses every input of `group`, which would all be written to `output`, each failure naming
/// the others.
fn refuse_collision(output: &Path, group: Vec<Job>, failed: &mut Vec<CookError>) {
    let inputs: Vec<PathBuf> = group.iter().map(|j| j.input.clone()).collect();
    for job in group {
        failed.push(CookError::Input {
            path: job.input,
            source: Box::new(CookError::OutputCollision {
                output: output.to_path_buf(),
                inputs: inputs.clone(),
            }),
        });
    }
}

/// The stamp stored in the output: cooker version, encoder, settings, input hash.
fn stamp(opts: &CookOptions, encoder: &str, input: &[u8]) -> String {
    let hash = xxhash_rust::xxh3::xxh3_128(input);
    let zstd = opts.zstd.map_or("none".to_string(), |l| l.to_string());
    // Older stamps (no tiles key) read as untiled.
    let tiles = opts.tiles.map_or(String::new(), |t| format!(" tiles={t}"));
    format!(
        "v{COOK_VERSION} encoder={encoder} quality={:?} color={:?} normal_map={} filter={:?} zstd={zstd}{}{}{tiles} input-xxh3-128={hash:032x}",
        opts.quality,
        opts.color,
        opts.normal_map,
        opts.filter,
        // Older stamps (no resize key) read as `keep`.
        match opts.resize {
            Resize::Keep => String::new(),
            r => format!(" resize={r:?}"),
        },
        // Older stamps (no wrap key) read as `clamp`; the block format is in the encoder's name.
        match opts.wrap {
            Wrap::Clamp => String::new(),
            w => format!(" wrap={w:?}"),
        }
    )
    .to_lowercase()
}

fn up_to_date(output: &Path, stamp: &str) -> bool {
    match read_info(output, &ReadLimits::default()) {
        Ok(info) => info.key_value_str(COOK_STAMP_KEY) == Some(stamp),
        Err(_) => false,
    }
}

fn write_atomic(
    output: &Path,
    tex: &mipflow_cook::EncodedTexture,
    zstd: Option<i32>,
    tiles: Option<u32>,
) -> Result<(), CookError> {
    let write_ktx2 = |w: &mut dyn std::io::Write, tex, zstd, name: &str| match tiles {
        Some(size) => write_ktx2_tiled(&mut &mut *w, tex, zstd, name, size),
        None => write_ktx2(&mut &mut *w, tex, zstd, name),
    };
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CookError::Write { path, source }
    };
    let dir = output.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(write_err(dir))?;
    crate::remove_stale_parts(output);
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("output");
    let writer_name = concat!("mipflow ", env!("CARGO_PKG_VERSION"));
    let abort = std::env::var_os(ABORT_HOOK_ENV).is_some_and(|v| v == name);
    let stall = std::env::var_os(STALL_HOOK_ENV).is_some_and(|v| v == name);
    crate::write_atomic(output, |mut w| {
        if stall {
            // The test hook: half the file written, then a wait for the signal.
            let mut bytes = Vec::new();
            write_ktx2(&mut bytes, tex, zstd, writer_name)?;
            w.write_all(&bytes[..bytes.len() / 2])?;
            w.flush()?;
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        if abort {
            // The test hook: half the file written, then killed (its `.part` is left).
            let mut bytes = Vec::new();
            write_ktx2(&mut bytes, tex, zstd, writer_name)?;
            w.write_all(&bytes[..bytes.len() / 2])?;
            w.flush()?;
            std::process::abort();
        }
        write_ktx2(&mut w, tex, zstd, writer_name)
    })
    .map_err(write_err(output))
}

/// The default `--max-memory`: the memory available now, shared among `workers`; 4 GiB where
/// that cannot be read.
fn default_max_memory(workers: usize) -> u64 {
    let available = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    });
    match available {
        Some(a) => (a / workers.max(1) as u64).max(256 << 20),
        None => 4 << 30,
    }
}

/// `opts` for an input: an HDR input with no `--format` cooks to BC6H (8-bit formats would
/// clip its range).
fn hdr_default(opts: &CookOptions, hdr_input: bool) -> CookOptions {
    let mut o = *opts;
    if hdr_input && opts.block.is_none() && !opts.normal_map {
        o.block = Some(BlockKind::Bc6h);
    }
    o
}

/// One input's bytes cooked in memory, as `cook` does for each file: the size read from the
/// header is checked against `max_memory` before a byte is decoded, the decode has limits, and
/// HDR inputs cooked to BC6H stay in floats. `name` only guides the format (TGA has no
/// signature) and the choice of BC6H. Every failure is this input's typed error; the fuzz
/// target `cook_decode` runs arbitrary bytes through it.
pub fn cook_bytes(
    name: &Path,
    bytes: &[u8],
    opts: &CookOptions,
    max_memory: u64,
) -> Result<mipflow_cook::EncodedTexture, CookError> {
    cook_bytes_on(name, bytes, opts, max_memory, None)
}

/// [`cook_bytes`], encoding on `gpu` where given.
pub fn cook_bytes_on(
    name: &Path,
    bytes: &[u8],
    opts: &CookOptions,
    max_memory: u64,
    gpu: Option<&Arc<GpuEncoders>>,
) -> Result<mipflow_cook::EncodedTexture, CookError> {
    let hdr_input = name
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HDR_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)));
    let opts = &hdr_default(opts, hdr_input);
    let hdr = hdr_input && opts.block_kind() == BlockKind::Bc6h;
    // From the header alone: an image too large to cook is this input's error, found before a
    // byte of it is decoded (a 1 MB PNG can decode to 16384²).
    if let Some((width, height)) = header_dims(name, bytes) {
        let per_pixel = if hdr_input {
            mipflow_cook::COOK_HDR_BYTES_PER_PIXEL
        } else {
            mipflow_cook::COOK_BYTES_PER_PIXEL
        };
        let needed = u64::from(width) * u64::from(height) * per_pixel;
        if needed > max_memory {
            return Err(CookError::TooLarge {
                width,
                height,
                needed,
                limit: max_memory,
            });
        }
    }
    let img = decode(name, bytes, max_memory)?;
    let pixels = u64::from(img.width()) * u64::from(img.height());
    if hdr {
        probe_alloc(pixels * 12, "the image in floats")?;
        mipflow_cook::cook_hdr(&img.into_rgb32f(), opts)
    } else if hdr_input && opts.format().is_srgb() {
        // Linear light stored as 8-bit sRGB: encoded on the way. A plain conversion scaled
        // the linear values into sRGB codes, which the GPU decodes once more: linear 0.5 was
        // shown as 0.21, the whole picture too dark.
        probe_alloc(pixels * 16, "the image in floats")?;
        let linear = img.into_rgba32f();
        let mut rgba = image::RgbaImage::new(linear.width(), linear.height());
        for (o, p) in rgba.pixels_mut().zip(linear.pixels()) {
            let [r, g, b, a] = p.0;
            o.0 = [
                mipflow_cook::linear_to_srgb8(r),
                mipflow_cook::linear_to_srgb8(g),
                mipflow_cook::linear_to_srgb8(b),
                mipflow_cook::unorm8(a),
            ];
        }
        drop(linear);
        cook_rgba8(rgba, opts, encoder(opts, gpu).as_ref())
    } else {
        probe_alloc(pixels * 4, "the image as RGBA8")?;
        cook_rgba8(img.into_rgba8(), opts, encoder(opts, gpu).as_ref())
    }
}

/// An input file's bytes, its buffer allocated fallibly (a huge file is this input's error).
fn read_input(path: &Path) -> Result<Vec<u8>, CookError> {
    use std::io::Read;
    let read = |source| CookError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::File::open(path).map_err(read)?;
    let len = file.metadata().map_err(read)?.len();
    let mut bytes = Vec::new();
    usize::try_from(len)
        .ok()
        .and_then(|n| bytes.try_reserve_exact(n).ok())
        .ok_or(CookError::OutOfMemory {
            what: "the input file",
            bytes: len,
        })?;
    file.read_to_end(&mut bytes).map_err(read)?;
    Ok(bytes)
}

fn cook_job(
    job: &Job,
    opts: &CookOptions,
    force: bool,
    max_memory: u64,
    gpu: Option<&Arc<GpuEncoders>>,
) -> Result<Outcome, CookError> {
    let hdr_input = job
        .input
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HDR_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)));
    let opts = &hdr_default(opts, hdr_input);
    // An HDR input cooked to BC6H is encoded from floats, on the CPU (`cook_hdr`).
    let floats = hdr_input && opts.block_kind() == BlockKind::Bc6h;
    let gpu = gpu.filter(|_| !floats);
    let encoder = encoder(opts, gpu);
    let bytes = read_input(&job.input)?;
    let stamp = stamp(opts, &encoder.name(), &bytes);
    if !force && up_to_date(&job.output, &stamp) {
        return Ok(Outcome::UpToDate);
    }
    let megapixels =
        header_dims(&job.input, &bytes).map_or(0.0, |(w, h)| f64::from(w) * f64::from(h) / 1e6);
    let mut tex = cook_bytes_on(&job.input, &bytes, opts, max_memory, gpu)?;
    drop(bytes);
    tex.key_values.push((
        COOK_STAMP_KEY.to_string(),
        [stamp.as_bytes(), b"\0"].concat(),
    ));
    write_atomic(&job.output, &tex, opts.zstd, opts.tiles)?;
    Ok(Outcome::Cooked { megapixels })
}

/// Reads only the image header to learn its size, for the progress bar's total.
fn probe_megapixels(path: &Path) -> f64 {
    let dims = image::ImageReader::open(path)
        .ok()
        .and_then(|r| r.with_guessed_format().ok())
        .and_then(|mut r| {
            if r.format().is_none() {
                r.set_format(image::ImageFormat::from_path(path).ok()?);
            }
            r.into_dimensions().ok()
        });
    dims.map_or(0.0, |(w, h)| f64::from(w) * f64::from(h) / 1e6)
}

/// Cooks every input of `args` (one image per rayon task, images themselves encoded in parallel
/// bands), with an indicatif progress bar on stderr when `progress` is set (it stays hidden when
/// stderr is not a terminal). Failures do not stop the run; they are listed in the summary.
pub fn cook_files(args: &CookArgs, progress: bool) -> CookSummary {
    match GpuEncoders::open(args.gpu) {
        Ok(gpu) => cook_files_on(args, progress, gpu.as_ref()),
        Err(e) => CookSummary {
            failed: vec![e],
            ..CookSummary::default()
        },
    }
}

/// [`cook_files`] with the GPU encoders already open (`None`: the CPU).
pub fn cook_files_on(
    args: &CookArgs,
    progress: bool,
    gpu: Option<&Arc<GpuEncoders>>,
) -> CookSummary {
    let start = Instant::now();
    let opts = args.options();
    let (jobs, mut failed, split) = discover(args);
    let mut stale = CookSummary::default();
    remove_stale_outputs(&split, &mut stale);
    let sizes: Vec<f64> = jobs.iter().map(|j| probe_megapixels(&j.input)).collect();
    let total_kpx: u64 = sizes.iter().map(|mp| (mp * 1000.0) as u64).sum();
    let bar = if progress {
        ProgressBar::with_draw_target(Some(total_kpx.max(1)), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    let style =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    // Redraw on a timer so elapsed time and ETA move while one large image cooks.
    if progress {
        bar.enable_steady_tick(std::time::Duration::from_millis(250));
    }
    let max_memory = args
        .max_memory
        .unwrap_or_else(|| default_max_memory(rayon::current_num_threads()));
    let files_done = AtomicUsize::new(0);
    let cooked_kpx = AtomicU64::new(0);
    let results = Mutex::new(Vec::with_capacity(jobs.len()));
    let total_files = jobs.len();
    jobs.par_iter()
        .zip(&sizes)
        .enumerate()
        .with_max_len(1)
        .for_each(|(i, (job, mp))| {
            let result = cook_job(job, &opts, args.force, max_memory, gpu);
            let kpx = (mp * 1000.0) as u64;
            if matches!(result, Ok(Outcome::Cooked { .. })) {
                cooked_kpx.fetch_add(kpx, Ordering::Relaxed);
            }
            let done = files_done.fetch_add(1, Ordering::Relaxed) + 1;
            let rate = cooked_kpx.load(Ordering::Relaxed) as f64
                / 1000.0
                / start.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{done}/{total_files} files, {rate:.1} MP/s"));
            bar.inc(kpx);
            if let Ok(mut r) = results.lock() {
                r.push((i, result));
            }
        });
    bar.finish_and_clear();
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    let mut summary = stale;
    for (i, result) in results {
        let job = &jobs[i];
        match result {
            Ok(Outcome::Cooked { megapixels }) => {
                summary.cooked.push(job.output.clone());
                summary.megapixels += megapixels;
            }
            Ok(Outcome::UpToDate) => summary.up_to_date.push(job.output.clone()),
            Err(e) => failed.push(CookError::Input {
                path: job.input.clone(),
                source: Box::new(e),
            }),
        }
    }
    summary.failed = failed;
    summary.seconds = start.elapsed().as_secs_f64();
    summary
}

/// Runs `mipflow cook`: cooks, prints a summary and every failure (with its input and reason) on
/// stderr, and returns 0 when every input was cooked or up to date, 1 otherwise.
pub fn run_cook(args: &CookArgs) -> i32 {
    // The output folder must take files before anything is encoded (minutes with `--quality
    // slow`): found after, every input failed on its own write, and the exit said the run
    // failed rather than that it was asked wrong.
    if let Err(e) = check_out_dir(&args.out).and_then(|()| check_job_outputs(args)) {
        crate::say!("mipflow cook: {e}");
        return 2;
    }
    let gpu = match GpuEncoders::open(args.gpu) {
        Ok(gpu) => gpu,
        Err(e) => {
            crate::say!("mipflow cook: {e}");
            return 2;
        }
    };
    if let Some(g) = &gpu {
        crate::say!("encoding on the GPU: {}", g.adapter());
    }
    let gpu = gpu.as_ref();
    let s = match args.threads {
        Some(n) => match rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build()
        {
            Ok(pool) => pool.install(|| cook_files_on(args, true, gpu)),
            Err(e) => {
                crate::say!("error: cannot start {n} worker threads: {e}");
                return 1;
            }
        },
        None => cook_files_on(args, true, gpu),
    };
    let rate = if s.seconds > 0.0 {
        s.megapixels / s.seconds
    } else {
        0.0
    };
    crate::say!(
        "cooked {} ({:.1} MP in {:.1} s, {rate:.1} MP/s), {} up to date, {} failed",
        s.cooked.len(),
        s.megapixels,
        s.seconds,
        s.up_to_date.len(),
        s.failed.len()
    );
    for p in &s.removed_stale {
        crate::say!(
            "removed {}: an earlier cook's output, now cooked as <name>.<extension>.ktx2 beside \
             another input of the same name",
            p.display()
        );
    }
    for p in &s.kept_foreign {
        crate::say!(
            "warning: {} is not a cook output and was left; its inputs are now cooked as \
             <name>.<extension>.ktx2",
            p.display()
        );
    }
    for e in &s.failed {
        crate::say!("error: {e}");
    }
    if s.failed.is_empty() { 0 } else { 1 }
}

/// Every output the cook would write is a regular file or nothing yet: an output that is a
/// symbolic link, a folder, a device or a pipe (written by renaming a file over it, which would
/// turn a device node into a file) is refused before anything is cooked, as `--report` is.
fn check_job_outputs(args: &CookArgs) -> Result<(), String> {
    let (jobs, _, _) = discover(args);
    for job in &jobs {
        crate::check_outputs(&[("-o", &job.output)], &[("input", &job.input)])?;
    }
    Ok(())
}

/// The output folder `out` exists (made if it does not) and takes files.
fn check_out_dir(out: &Path) -> Result<(), String> {
    if out.exists() && !out.is_dir() {
        return Err(format!(
            "{}: not a folder (-o takes a folder)",
            out.display()
        ));
    }
    fs::create_dir_all(out)
        .map_err(|e| format!("{}: cannot make the folder ({e})", out.display()))?;
    crate::check_writable(&out.join("probe.ktx2"))
}

mod decode;
use decode::{decode, header_dims};

#[cfg(test)]
#[path = "cook_cmd_tests.rs"]
mod tests;
