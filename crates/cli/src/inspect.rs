//! `mipflow inspect`: print and validate KTX2 and DDS files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use mipflow::ktx2::{
    DDS_HEADER_LEN, DfdSummary, HEADER_LEN, Ktx2Error, LevelInfo, ReadLimits, Supercompression,
    header_region_len, level_dims, read_level, validate,
};

/// Arguments of `mipflow inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// KTX2 or DDS files to inspect.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One level as reported by `mipflow inspect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LevelReport {
    /// Level index (0 = full size).
    pub level: usize,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Offset in the file.
    pub offset: u64,
    /// Stored bytes.
    pub byte_length: u64,
    /// Bytes after decompression.
    pub uncompressed_byte_length: u64,
}

/// One key/value entry as reported by `mipflow inspect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KeyValueReport {
    /// The key.
    pub key: String,
    /// The value: text without its NUL if it is printable UTF-8, otherwise `hex:` and its bytes.
    pub value: String,
}

/// A tiled file's layout as `mipflow inspect` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TilesReport {
    /// Tile side in texels.
    pub tile_size: u32,
    /// Levels `0..tiled_levels` are stored tile by tile, the others whole.
    pub tiled_levels: u8,
    /// Tiles across and down each tiled level, level 0 first.
    pub tiles: Vec<[u32; 2]>,
    /// Every tile of every tiled level.
    pub tile_count: u64,
    /// Whether each tile is its own Zstandard frame (the file is supercompressed).
    pub frames: bool,
}

/// What `mipflow inspect` found in one file (printed as text, or as JSON with `--json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct InspectReport {
    /// The file, for display (a name that is not UTF-8 has U+FFFD where its bytes were not).
    pub file: String,
    /// Only for a name that is not UTF-8: its bytes, lossless, as `hex:` and two hex digits per
    /// byte (the path as the OS gave it), so the entry can be traced to its file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<String>,
    /// True when no problem was found.
    pub valid: bool,
    /// File length, if it could be read.
    pub file_len: Option<u64>,
    /// The container and how it named the format (`KTX2`, `DDS (DX10 header, DXGI_FORMAT 98)`),
    /// if the file could be parsed.
    pub container: Option<String>,
    /// For a Basis Universal file, what its levels hold before they are transcoded into `format`
    /// (`Basis UASTC, RGB`, `Basis ETC1S (BasisLZ), two channels`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_format: Option<String>,
    /// vkFormat, if the header could be read.
    pub vk_format: Option<u32>,
    /// The wgpu format, for BC7 files.
    pub format: Option<String>,
    /// Width of level 0.
    pub width: Option<u32>,
    /// Height of level 0.
    pub height: Option<u32>,
    /// Supercompression, when it is one mipflow reads.
    pub supercompression: Option<Supercompression>,
    /// The raw supercompressionScheme value.
    pub supercompression_scheme: Option<u32>,
    /// The level index.
    pub levels: Vec<LevelReport>,
    /// The Basic DFD block, if it could be parsed.
    pub dfd: Option<DfdSummary>,
    /// A tiled file's layout (`mipflow cook --tiles`); absent for a file stored level by level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles: Option<TilesReport>,
    /// Key/value entries.
    pub key_values: Vec<KeyValueReport>,
    /// Every problem found (empty when valid).
    pub problems: Vec<String>,
}

fn show_value(v: &[u8]) -> String {
    let text = v.strip_suffix(&[0]).unwrap_or(v);
    match std::str::from_utf8(text) {
        Ok(s) if !s.chars().any(|c| c.is_control()) => s.to_string(),
        _ => {
            let mut out = String::from("hex:");
            for b in v.iter().take(256) {
                let _ = write!(out, "{b:02x}");
            }
            if v.len() > 256 {
                out.push_str("...");
            }
            out
        }
    }
}

/// `hex:` and the path's bytes when the path is not UTF-8 (on Unix; elsewhere paths that are
/// not Unicode are rare and this is `None`).
fn raw_name(path: &Path) -> Option<String> {
    if path.to_str().is_some() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::fmt::Write as _;
        use std::os::unix::ffi::OsStrExt;
        let mut s = String::from("hex:");
        for b in path.as_os_str().as_bytes() {
            let _ = write!(s, "{b:02x}");
        }
        Some(s)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

fn level_reports(levels: &[LevelInfo], width: u32, height: u32) -> Vec<LevelReport> {
    levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let (width, height) = level_dims(width, height, i);
            LevelReport {
                level: i,
                width,
                height,
                offset: l.offset,
                byte_length: l.byte_length,
                uncompressed_byte_length: l.uncompressed_byte_length,
            }
        })
        .collect()
}

/// Validates the file at `path` (header, level index, DFD, key/value data, and every level's data,
/// decompressed and size-checked) and reports what it holds and every problem found.
pub fn inspect_file(path: &Path, limits: &ReadLimits) -> InspectReport {
    let mut report = InspectReport {
        file: path.display().to_string(),
        file_bytes: raw_name(path),
        valid: false,
        file_len: None,
        container: None,
        source_format: None,
        tiles: None,
        vk_format: None,
        format: None,
        width: None,
        height: None,
        supercompression: None,
        supercompression_scheme: None,
        levels: Vec::new(),
        dfd: None,
        key_values: Vec::new(),
        problems: Vec::new(),
    };
    let mut problems: Vec<Ktx2Error> = Vec::new();
    let result = (|| -> Result<(), Ktx2Error> {
        // Before opening: a FIFO would block the open until a writer came.
        if !std::fs::metadata(path)?.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a folder, a FIFO or a device)",
            )
            .into());
        }
        let mut file = File::open(path)?;
        let file_len = file.metadata()?.len();
        report.file_len = Some(file_len);
        let mut first = Vec::new();
        // A KTX2 header, or a whole DDS header with its DX10 extension.
        (&mut file)
            .take(HEADER_LEN.max(DDS_HEADER_LEN))
            .read_to_end(&mut first)?;
        // Read the header region the header declares (bounded by the limits); if the header itself
        // is unusable, validate what was read so that every problem is still listed.
        let region = header_region_len(&first, limits)
            .unwrap_or(first.len() as u64)
            .min(file_len);
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0))?;
        (&mut file).take(region).read_to_end(&mut bytes)?;
        let v = validate(&bytes, file_len, limits);
        problems.extend(v.problems);
        if let Some(h) = &v.header {
            report.vk_format = Some(h.vk_format);
            report.width = Some(h.pixel_width);
            report.height = Some(h.pixel_height);
            report.supercompression_scheme = Some(h.supercompression_scheme);
            report.levels = level_reports(&h.levels, h.pixel_width, h.pixel_height);
        }
        if let Some(info) = &v.info {
            report.container = Some(info.container.describe());
            report.source_format = info.basis.as_ref().map(|b| b.describe());
            report.tiles = info.tiles.as_ref().map(|t| TilesReport {
                tile_size: t.tile_size,
                tiled_levels: t.tiled_levels,
                tiles: (0..usize::from(t.tiled_levels))
                    .map(|l| {
                        let (x, y) = t.tiles(info, l);
                        [x, y]
                    })
                    .collect(),
                tile_count: t.tile_count(info),
                frames: info.supercompression == Supercompression::Zstd,
            });
            if v.header.is_none() {
                // A DDS file: its levels are computed from the header, not stored in an index.
                report.width = Some(info.width);
                report.height = Some(info.height);
                report.levels = level_reports(&info.levels, info.width, info.height);
            }
            report.format = Some(format!("{:?}", info.format));
            report.supercompression = Some(info.supercompression);
            // A DDS file has no DFD: its summary is made up from the format.
            report.dfd =
                matches!(info.container, mipflow::ktx2::Container::Ktx2).then(|| info.dfd.clone());
            report.key_values = info
                .key_values
                .iter()
                .map(|(k, v)| KeyValueReport {
                    key: k.clone(),
                    // The layout is binary (and its index long): reported as `tiles`.
                    value: if k == mipflow::ktx2::TILES_KEY {
                        format!("(tile layout, {} bytes)", v.len())
                    } else {
                        show_value(v)
                    },
                })
                .collect();
            for level in 0..info.levels.len() {
                if let Err(e) = read_level(&mut file, info, level) {
                    problems.push(e);
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        problems.push(e);
    }
    report.valid = problems.is_empty();
    report.problems = problems.iter().map(ToString::to_string).collect();
    report
}

fn transfer_name(t: u8) -> &'static str {
    match t {
        1 => "linear",
        2 => "sRGB",
        _ => "other",
    }
}

/// Formats a report as the text `mipflow inspect` prints.
pub fn report_text(r: &InspectReport) -> String {
    let mut s = String::new();
    let verdict = if r.valid {
        "valid".to_string()
    } else {
        let n = r.problems.len();
        format!("INVALID ({n} problem{})", if n == 1 { "" } else { "s" })
    };
    let _ = writeln!(s, "{}: {verdict}", r.file);
    if let Some(len) = r.file_len {
        let _ = writeln!(s, "  file size         {len} bytes");
    }
    if let Some(c) = &r.container {
        let _ = writeln!(s, "  container         {c}");
    }
    match (r.vk_format, &r.format) {
        (Some(vk), f) => {
            let f = f.as_deref().unwrap_or("unsupported");
            let _ = writeln!(s, "  format            vkFormat {vk} ({f})");
        }
        (None, Some(f)) => {
            let _ = writeln!(s, "  format            {f}");
        }
        (None, None) => {}
    }
    if let (Some(src), Some(f)) = (&r.source_format, &r.format) {
        let _ = writeln!(
            s,
            "  source            {src}, transcoded to {f} as it streams"
        );
    }
    if let (Some(w), Some(h)) = (r.width, r.height) {
        let _ = writeln!(s, "  size              {w}x{h}, {} levels", r.levels.len());
    }
    if let Some(scheme) = r.supercompression_scheme {
        let name = match scheme {
            0 => "none",
            1 => "BasisLZ",
            2 => "Zstandard",
            3 => "ZLIB",
            _ => "unknown",
        };
        let _ = writeln!(s, "  supercompression  {name} ({scheme})");
    }
    if !r.levels.is_empty() {
        let _ = writeln!(
            s,
            "  level  size          offset        bytes  uncompressed"
        );
        for l in &r.levels {
            let _ = writeln!(
                s,
                "  {:>5}  {:<12} {:>7} {:>12} {:>13}",
                l.level,
                format!("{}x{}", l.width, l.height),
                l.offset,
                l.byte_length,
                l.uncompressed_byte_length
            );
        }
    }
    if let Some(t) = &r.tiles {
        let per_level: Vec<String> = t.tiles.iter().map(|[x, y]| format!("{x}x{y}")).collect();
        let _ = writeln!(
            s,
            "  tiles             {0}x{0} texels; levels 0..{1} tiled ({2} tiles{3}): {4}",
            t.tile_size,
            t.tiled_levels,
            t.tile_count,
            if t.frames {
                ", a Zstandard frame each"
            } else {
                ""
            },
            per_level.join(", ")
        );
    }
    if let Some(d) = &r.dfd {
        let _ = writeln!(
            s,
            "  DFD               version {}, colour model {}{}, primaries {}, transfer {} ({}), {} alpha, block {}x{}x{}, {} bytes/block, {} sample(s), {} block(s)",
            d.version,
            d.color_model,
            match d.color_model {
                128 => " (BC1)",
                129 => " (BC2)",
                130 => " (BC3)",
                131 => " (BC4)",
                132 => " (BC5)",
                133 => " (BC6H)",
                134 => " (BC7)",
                _ => "",
            },
            d.color_primaries,
            transfer_name(d.transfer_function),
            d.transfer_function,
            if d.premultiplied_alpha {
                "premultiplied"
            } else {
                "straight"
            },
            d.block_dimensions[0],
            d.block_dimensions[1],
            d.block_dimensions[2],
            d.bytes_plane0,
            d.samples,
            d.blocks,
        );
    }
    if !r.key_values.is_empty() {
        let _ = writeln!(s, "  key/value data");
        for kv in &r.key_values {
            let _ = writeln!(s, "    {} = {:?}", kv.key, kv.value);
        }
    }
    if !r.problems.is_empty() {
        let _ = writeln!(s, "  problems");
        for p in &r.problems {
            let _ = writeln!(s, "    - {p}");
        }
    }
    s
}

/// Runs `mipflow inspect`: prints each file's report (text, or a JSON array with `--json`) and
/// returns 0 when every file is valid, 1 otherwise.
pub fn run_inspect(args: &InspectArgs) -> i32 {
    let limits = ReadLimits::default();
    let reports: Vec<InspectReport> = args
        .files
        .iter()
        .map(|p| inspect_file(p, &limits))
        .collect();
    // Written, not `print!`ed: a reader that closes the pipe early (`| head`) ends the output
    // quietly; `print!` panicked on the broken pipe (exit 101). Other write errors are
    // reported.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        match serde_json::to_string_pretty(&reports) {
            Ok(json) => writeln!(out, "{json}"),
            Err(e) => {
                crate::say!("error: cannot serialise the report: {e}");
                return 2;
            }
        }
    } else {
        reports
            .iter()
            .try_for_each(|r| write!(out, "{}", report_text(r)))
    };
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write the report: {e}");
            return 1;
        }
        Ok(()) => {}
    }
    if reports.iter().all(|r| r.valid) {
        0
    } else {
        1
    }
}
