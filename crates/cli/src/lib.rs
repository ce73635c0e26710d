//! The `mipflow` command's library: the demo, `cook`, `inspect`, headless budget runs and the
//! bench, as modules the binary (`src/main.rs`) and the process tests share. Not a stable API:
//! games depend on `mipflow` (and `mipflow-cook`, `mipflow-overlay`), not on this crate.

pub mod bench;
pub mod cook_cmd;
pub mod demo;
pub mod error;
pub mod headless;
pub mod inspect;
pub mod scenes;

/// The clap value parser of every `WxH` flag (`--size`): each side 1 to 16384.
pub fn wxh_arg(s: &str) -> Result<(u32, u32), String> {
    parse_wxh(s).ok_or_else(|| "expected WxH, such as 1280x720 (each side 1 to 16384)".to_owned())
}

/// The clap value parser of every byte-size flag (`--budget`): "256MiB", "1.5GiB", bytes.
pub fn size_arg(s: &str) -> Result<u64, String> {
    mipflow::parse_size(s).map_err(|e| e.to_string())
}

/// Every file under `dir` (recursively, sorted by name within each folder) whose extension is
/// one of `extensions` (compared case-insensitively), appended to `out`: the one folder walker
/// of `cook`, the gallery and the demo. Symbolic links to files are followed; links to folders
/// are not (a link back to a parent cannot loop, nor register a file twice); only regular files
/// are listed (a FIFO or a device named `x.ktx2` would block its reader for ever).
///
/// An error only when `dir` itself cannot be read. A subfolder or entry below it that cannot
/// be read (a root-only `lost+found`, a folder deleted during the walk) is returned with its
/// error, and the walk goes on: one such folder no longer dropped every file of the input.
pub fn find_files(
    dir: &std::path::Path,
    extensions: &[&str],
    out: &mut Vec<std::path::PathBuf>,
) -> std::io::Result<Vec<(std::path::PathBuf, std::io::Error)>> {
    let mut skipped = Vec::new();
    walk(dir, extensions, out, &mut skipped)?;
    Ok(skipped)
}

/// [`find_files`] below its top folder: `dir`'s own error is returned, its subfolders' are
/// gathered in `skipped`.
fn walk(
    dir: &std::path::Path,
    extensions: &[&str],
    out: &mut Vec<std::path::PathBuf>,
    skipped: &mut Vec<(std::path::PathBuf, std::io::Error)>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let ty = match entry.file_type() {
            Ok(t) => t,
            Err(e) => {
                skipped.push((path, e));
                continue;
            }
        };
        let wanted = || {
            path.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| extensions.iter().any(|e| x.eq_ignore_ascii_case(e)))
        };
        if ty.is_dir() {
            if let Err(e) = walk(&path, extensions, out, skipped) {
                skipped.push((path, e));
            }
        } else if (ty.is_file() || (ty.is_symlink() && path.is_file())) && wanted() {
            out.push(path);
        }
    }
    Ok(())
}

/// `eprintln!` that never panics: [`say`] with the arguments of `format!`.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::say(format_args!($($arg)*))
    };
}

/// A line on stderr that never panics: a reader that closed the pipe (`2>&1 | head`) must not
/// end a run before its report is written (`eprintln!` panics on a broken pipe). What it says
/// goes through [`printable`]: a file name or an error that carries one cannot send terminal
/// control sequences, and a line of a huge input cannot flood the terminal.
pub fn say(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let _ = writeln!(std::io::stderr(), "{}", printable(&text, MAX_SAID_LINE));
}

/// The longest line [`say`] prints whole, in characters.
pub const MAX_SAID_LINE: usize = 2000;

/// `text` made safe to print: control characters other than a newline or a tab (the escape
/// that starts a terminal sequence among them) written as `\u{..}`, and each line past `max`
/// characters cut with a note of how many more there were (a scenario error quoting a
/// 200 KB line printed all of it).
pub fn printable(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (n, c) in line.chars().enumerate() {
            if n == max {
                let more = line.chars().count() - max;
                out.push_str(&format!(" ... ({more} more characters)"));
                break;
            }
            if c.is_control() && c != '\t' {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// Removes temporary files a killed run left for `output` (every writer of the command calls it
/// through [`write_atomic`]): `.<name>.<pid>.<random>.part` whose
/// process is gone (another cook writing the same folder at the same time keeps its own). Where
/// processes cannot be looked up (no `/proc`), parts an hour old.
pub fn remove_stale_parts(output: &std::path::Path) {
    let (Some(dir), Some(name)) = (output.parent(), output.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let prefix = format!(".{name}.");
    let proc = std::path::Path::new("/proc/self").exists();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let n = entry.file_name();
            let n = n.to_string_lossy();
            let Some(rest) = n.strip_prefix(&prefix).filter(|_| n.ends_with(".part")) else {
                continue;
            };
            let pid = rest.split('.').next().and_then(|p| p.parse::<u32>().ok());
            let stale = match pid {
                Some(p) if p == std::process::id() => false,
                Some(p) if proc => !std::path::Path::new(&format!("/proc/{p}")).exists(),
                _ => entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600),
            };
            if stale {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Writes `path` whole or not at all: `write` fills a temporary file beside it
/// (`.<name>.<pid>.<random>.part`, buffered), which is synced and then renamed over `path`. A
/// run killed or a disk that fills mid-write leaves the previous file as it was and no truncated
/// one (a CI job reading a half-written report); the temporary file is removed on an error (a
/// killed run's is found by its pid: `cook` removes those of dead processes). Made with the
/// umask's permissions, as any file the user writes (not a temporary file's 0600).
/// The temporary parts of the writes in progress, removed by the signal handler
/// ([`remove_parts_on_signal`]).
static LIVE_PARTS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A write's temporary part, listed in [`LIVE_PARTS`] while it lives.
struct LivePart(std::path::PathBuf);

impl LivePart {
    fn new(path: &std::path::Path) -> Self {
        if let Ok(mut parts) = LIVE_PARTS.lock() {
            parts.push(path.to_path_buf());
        }
        Self(path.to_path_buf())
    }
}

impl Drop for LivePart {
    fn drop(&mut self) {
        if let Ok(mut parts) = LIVE_PARTS.lock()
            && let Some(i) = parts.iter().position(|p| *p == self.0)
        {
            parts.swap_remove(i);
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP: removes the temporary parts of the writes in progress (a
/// report, a plot, a cooked texture: the target keeps its previous content), then exits 130.
/// Parts of a process killed outright (SIGKILL, a crash) are removed by the next command that
/// writes the same output ([`remove_stale_parts`]).
pub fn remove_parts_on_signal() {
    let installed = ctrlc::set_handler(|| {
        if let Ok(parts) = LIVE_PARTS.lock() {
            for p in parts.iter() {
                let _ = std::fs::remove_file(p);
            }
        }
        std::process::exit(130);
    });
    if let Err(e) = installed {
        tracing::debug!(error = %e, "no signal handler: parts of an interrupted write stay until the next run");
    }
}

pub fn write_atomic(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    remove_stale_parts(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("output");
    let prefix = format!(".{name}.{}.", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".part");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir)?;
    let _live = LivePart::new(tmp.path());
    {
        let mut w = std::io::BufWriter::new(tmp.as_file());
        write(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`write_atomic`] of a `width x height` RGB8 image (rows top to bottom), encoded by its
/// name's extension (`.png`, `.jpg`, `.bmp`; PNG for any other): the plots are drawn into
/// memory and written so.
pub fn write_image_atomic(
    path: &std::path::Path,
    width: u32,
    height: u32,
    rgb: &[u8],
) -> std::io::Result<()> {
    let format = image::ImageFormat::from_path(path).unwrap_or(image::ImageFormat::Png);
    let mut encoded = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut encoded,
        rgb,
        width,
        height,
        image::ExtendedColorType::Rgb8,
        format,
    )
    .map_err(std::io::Error::other)?;
    write_atomic(path, |w| w.write_all(encoded.get_ref()))
}

/// [`write_image_atomic`] with the command's error type (the path named).
pub(crate) fn write_image(
    path: &std::path::Path,
    width: u32,
    height: u32,
    rgb: &[u8],
) -> error::Result<()> {
    write_image_atomic(path, width, height, rgb).map_err(|source| error::Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Where an output would land, for comparing paths: its folder made canonical (symbolic links,
/// `..` and `.` resolved) and its file name; `None` when the folder does not exist.
fn output_key(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    // Folders the run will make (`bench --out new/`) resolve from the nearest one that exists.
    let mut existing = dir;
    let mut made = Vec::new();
    let base = loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            break c;
        }
        made.push(existing.file_name()?);
        existing = match existing.parent()? {
            p if p.as_os_str().is_empty() => std::path::Path::new("."),
            p => p,
        };
    };
    let mut key = base;
    for part in made.into_iter().rev() {
        key.push(part);
    }
    Some(key.join(path.file_name()?))
}

/// Refuses, before a run, output targets that writing would break or that would destroy what
/// the run reads or writes: `outputs` are `(flag, path)` pairs, `inputs` `(what, path)` pairs
/// (files or folders). Refused: a name ending in `/` (a folder); a target that exists and is
/// not a regular file (a folder, a device such as `/dev/null`, a pipe, a socket, or a symbolic
/// link: the write replaces the target by renaming a complete file over it, which would turn a
/// device node into a file); a target that is an input file or lies in an input folder; two
/// outputs naming one file.
pub fn check_outputs(
    outputs: &[(&str, &std::path::Path)],
    inputs: &[(&str, &std::path::Path)],
) -> Result<(), String> {
    for (i, &(flag, path)) in outputs.iter().enumerate() {
        let text = path.as_os_str().to_string_lossy();
        if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
            return Err(format!(
                "{flag} {}: ends in '/', which names a folder; a file name is needed",
                path.display()
            ));
        }
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            let kind = meta.file_type();
            if kind.is_symlink() {
                return Err(format!(
                    "{flag} {}: is a symbolic link; the output would replace the link with a \
                     file (name the file it points to)",
                    path.display()
                ));
            }
            if !kind.is_file() {
                return Err(format!(
                    "{flag} {}: exists and is not a regular file (a folder, a device, a pipe or a \
                     socket); the output is written by replacing the file",
                    path.display()
                ));
            }
        }
        let Some(key) = output_key(path) else {
            continue; // No such folder: check_writable says so.
        };
        for &(what, input) in inputs {
            let Ok(input_key) = std::fs::canonicalize(input) else {
                continue;
            };
            if input_key == key {
                return Err(format!(
                    "{flag} {}: is this run's {what}; writing it would replace the input",
                    path.display()
                ));
            }
            if input_key.is_dir() && key.starts_with(&input_key) {
                return Err(format!(
                    "{flag} {}: lies in this run's {what} ({}); write outputs elsewhere",
                    path.display(),
                    input.display()
                ));
            }
        }
        for &(other_flag, other) in &outputs[i + 1..] {
            if output_key(other).is_some_and(|k| k == key) {
                return Err(format!(
                    "{flag} and {other_flag} name the same file ({}): one would replace the other",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Whether a file can be written at `path`, found out before a long run rather than after it:
/// its folder exists and a probe file can be made there (and is removed).
pub fn check_writable(path: &std::path::Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if path.is_dir() {
        return Err(format!(
            "{}: is a folder, a file name is needed",
            path.display()
        ));
    }
    if path.exists() {
        // A file there already: it must take writing (a read-only file passes the folder's
        // probe). Opened for appending, so nothing in it is lost by the check.
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: cannot write it ({e})", path.display()))?;
        return Ok(());
    }
    let probe = dir.join(format!(".mipflow-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| format!("{}: cannot write there ({e})", path.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks that an image can be written at `path` ([`check_writable`]) with a name ending in one
/// of `extensions` (lower case, the first named in the message: the writer picks the format
/// from it, so another name would fail only after the run).
pub fn check_image_path(path: &std::path::Path, extensions: &[&str]) -> Result<(), String> {
    let ok = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e)));
    if !ok {
        let mut names = extensions.iter().map(|e| format!(".{e}"));
        let first = names.next().unwrap_or_default();
        let rest: Vec<String> = names.collect();
        let others = if rest.is_empty() {
            String::new()
        } else {
            format!(" (or {})", rest.join(", "))
        };
        return Err(format!(
            "{}: the name must end in {first}{others}",
            path.display()
        ));
    }
    check_writable(path)
}

/// What the plot writer can write (`mipflow headless --plot`).
pub const PLOT_EXTENSIONS: [&str; 4] = ["png", "jpg", "jpeg", "bmp"];

/// Parses `WxH` (each side 1 to 16384).
pub fn parse_wxh(s: &str) -> Option<(u32, u32)> {
    let lower = s.trim().to_ascii_lowercase();
    let (w, h) = lower.split_once('x')?;
    let (w, h): (u32, u32) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    ((1..=16384).contains(&w) && (1..=16384).contains(&h)).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed run's temporary part is removed by the next write of the same output (for
    /// every command, not only `cook`); a live process's is kept.
    #[test]
    fn a_dead_runs_part_is_cleaned_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        // Process ids stop at 2^22 on Linux: this one is no process.
        let dead = dir.path().join(".r.json.999999999.abc123.part");
        let live = dir
            .path()
            .join(format!(".r.json.{}.xyz.part", std::process::id()));
        std::fs::write(&dead, vec![0u8; 1 << 20]).unwrap();
        std::fs::write(&live, b"mine").unwrap();
        write_atomic(&out, |w| w.write_all(b"{}")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"{}");
        assert!(!dead.exists(), "the dead run's part is gone");
        assert!(live.exists(), "this process's own part is not touched");
    }

    #[test]
    fn what_is_said_is_printable_and_bounded() {
        // An escape sequence in a file name comes out as text, not as a terminal command.
        let said = printable("cannot read \u{1b}[2J\u{7}evil.ktx2\tok", 100);
        assert_eq!(said, "cannot read \\u{1b}[2J\\u{7}evil.ktx2\tok");
        // Lines are cut one by one; newlines kept.
        let long = format!("line one\n{}", "x".repeat(5000));
        let said = printable(&long, 2000);
        assert!(said.starts_with("line one\nxxx"), "{said}");
        assert!(said.ends_with(" ... (3000 more characters)"), "{said}");
        assert!(said.len() < 2100);
    }

    /// A report written by `write_atomic` is whole or not written: a write that fails half-way
    /// (a full disk, or a run killed) leaves the previous file as it was and no temporary file
    /// (`std::fs::write` truncated it first and left half a JSON); one that completes replaces
    /// it. A PNG written so decodes to the pixels given.
    #[test]
    fn atomic_writes_leave_the_previous_file_on_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("report.json");
        std::fs::write(&path, b"{\"old\": true}").unwrap();
        let failed = write_atomic(&path, |w| {
            w.write_all(b"{\"new\": ")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"old\": true}");
        let names = || -> Vec<String> {
            std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(), ["report.json"], "no temporary file left");
        write_atomic(&path, |w| w.write_all(b"{\"new\": 1}")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"new\": 1}");
        assert_eq!(names(), ["report.json"]);

        let rgb: Vec<u8> = (0..4 * 3 * 3).map(|i| (i * 7) as u8).collect();
        for (name, format) in [
            ("plot.png", image::ImageFormat::Png),
            ("plot.bmp", image::ImageFormat::Bmp),
        ] {
            let p = tmp.path().join(name);
            write_image_atomic(&p, 4, 3, &rgb).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(image::guess_format(&bytes).unwrap(), format);
            let back = image::load_from_memory(&bytes).unwrap().to_rgb8();
            assert_eq!((back.width(), back.height()), (4, 3));
            assert_eq!(back.into_raw(), rgb);
        }
    }

    #[test]
    fn output_paths_are_checked_before_a_run() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        assert!(check_writable(&d.join("r.json")).is_ok());
        assert!(check_writable(d).unwrap_err().contains("is a folder"));
        assert!(check_writable(&d.join("missing/r.json")).is_err());
        assert!(check_image_path(&d.join("p.png"), &PLOT_EXTENSIONS).is_ok());
        assert!(check_image_path(&d.join("p.JPG"), &PLOT_EXTENSIONS).is_ok());
        for bad in ["p.txt", "p", "p.json"] {
            let e = check_image_path(&d.join(bad), &PLOT_EXTENSIONS).unwrap_err();
            assert!(e.contains(".png"), "{bad}: {e}");
        }
        // A file there that cannot be written (the folder can) is refused, and one that can be
        // is kept as it was by the check.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let kept = d.join("kept.json");
            std::fs::write(&kept, b"old").unwrap();
            assert!(check_writable(&kept).is_ok());
            assert_eq!(std::fs::read(&kept).unwrap(), b"old");
            let ro = d.join("ro.json");
            std::fs::write(&ro, b"x").unwrap();
            std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
            // Root writes read-only files anyway: the check then agrees with the write.
            let writable = std::fs::OpenOptions::new().append(true).open(&ro).is_ok();
            assert_eq!(check_writable(&ro).is_ok(), writable);
        }
    }

    /// The walker lists each file once, sorted, through a link to a file; a link back to a
    /// parent folder neither loops nor lists anything twice; a FIFO is not listed.
    #[cfg(unix)]
    #[test]
    fn the_walker_survives_loops_and_skips_what_is_not_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        for f in ["b.ktx2", "a.KTX2", "sub/c.ktx2", "notes.txt"] {
            std::fs::write(root.join(f), b"x").unwrap();
        }
        std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("b.ktx2"), root.join("link.ktx2")).unwrap();
        let fifo = root.join("pipe.ktx2");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        let mut out = Vec::new();
        find_files(root, &["ktx2"], &mut out).unwrap();
        let names: Vec<_> = out
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.KTX2", "b.ktx2", "link.ktx2", "sub/c.ktx2"]);
        assert!(made || !fifo.exists());
    }

    /// A subfolder that cannot be read is returned by name and the walk goes on (before, its
    /// error ended the walk: `cook` dropped every file of the input). The subfolder here is
    /// nested past PATH_MAX, so its full path cannot be opened (ENAMETOOLONG) whoever runs the
    /// test (root reads a folder of any mode).
    #[test]
    fn an_unreadable_subfolder_is_skipped_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join("a.png"), b"x").unwrap();
        std::fs::create_dir_all(root.join("deep")).unwrap();
        std::fs::create_dir_all(root.join("ok")).unwrap();
        std::fs::write(root.join("ok/b.png"), b"x").unwrap();
        let name = "d".repeat(250);
        let made = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "cd deep && for i in $(seq 20); do mkdir {name} && cd -P {name} || exit 1; done"
            ))
            .current_dir(root)
            .status()
            .unwrap();
        assert!(made.success());
        let mut out = Vec::new();
        let skipped = find_files(root, &["png"], &mut out).expect("the top folder reads");
        let names: Vec<_> = out
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.png", "ok/b.png"]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].0.starts_with(root.join("deep")));
        assert!(find_files(&root.join("missing"), &["png"], &mut out).is_err());
    }

    #[test]
    fn value_parsers() {
        assert_eq!(wxh_arg("640x360"), Ok((640, 360)));
        assert!(wxh_arg("0x1").is_err());
        assert_eq!(size_arg("2MiB"), Ok(2 << 20));
        assert!(size_arg("lots").is_err());
    }
}
