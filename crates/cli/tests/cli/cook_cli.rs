//! `mipflow cook` and `mipflow inspect` end to end, through the binary: the flag contract, folders,
//! input formats, failures, incremental skipping, an interrupted and re-run cook, inspect output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use image::{Rgba, RgbaImage};
use mipflow::ktx2::{ReadLimits, Supercompression, read_info};

fn mipflow(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mipflow"));
    cmd.args(args).env("RUST_LOG", "warn");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run mipflow")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn test_image(w: u32, h: u32, seed: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        Rgba([
            (x * 7 + seed * 40) as u8,
            (y * 5) as u8,
            ((x ^ y) * 3 + seed) as u8,
            255,
        ])
    })
}

fn save(img: &RgbaImage, path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    image::DynamicImage::ImageRgba8(img.clone())
        .to_rgb8()
        .save(path)
        .unwrap();
}

fn write_palette_png(path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), 6, 5);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_palette(vec![255, 0, 0, 0, 255, 0, 0, 0, 255]);
    let mut w = enc.write_header().unwrap();
    let data: Vec<u8> = (0..30).map(|i| (i % 3) as u8).collect();
    w.write_image_data(&data).unwrap();
}

/// Every output under `dir` (recursively), relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(d: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.push(
                    p.strip_prefix(base)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// Folders are searched recursively and subfolders kept; every supported format and pixel layout
/// cooks (PNG 8/16-bit, grey, grey+alpha, palette, JPEG, TGA, BMP, upper-case extension); other
/// files are ignored; the outputs are valid and `inspect` agrees.
#[test]
fn cooks_folders_recursively_in_every_input_format() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let out = tmp.path().join("out");
    save(&test_image(40, 24, 1), &input.join("a/b/deep.png"));
    save(&test_image(33, 17, 2), &input.join("photo.jpg"));
    save(&test_image(16, 16, 3), &input.join("sub/old.tga"));
    save(&test_image(9, 13, 4), &input.join("win.bmp"));
    save(&test_image(8, 8, 5), &input.join("UPPER.PNG"));
    image::DynamicImage::ImageRgba16(image::ImageBuffer::from_fn(10, 6, |x, _| {
        Rgba([x as u16 * 6000, 0, 65535, 40000])
    }))
    .save(input.join("sixteen.png"))
    .unwrap();
    image::GrayImage::from_fn(12, 12, |x, _| image::Luma([(x * 20) as u8]))
        .save(input.join("grey.png"))
        .unwrap();
    image::GrayAlphaImage::from_fn(7, 5, |x, y| image::LumaA([(x * 30) as u8, (y * 60) as u8]))
        .save(input.join("greyalpha.png"))
        .unwrap();
    write_palette_png(&input.join("palette.png"));
    std::fs::write(input.join("notes.txt"), "not an image").unwrap();

    let o = mipflow(
        &["cook", s(&input), "-o", s(&out), "--quality", "fast"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        files_under(&out),
        [
            "UPPER.ktx2",
            "a/b/deep.ktx2",
            "grey.ktx2",
            "greyalpha.ktx2",
            "palette.ktx2",
            "photo.ktx2",
            "sixteen.ktx2",
            "sub/old.ktx2",
            "win.ktx2"
        ]
    );
    for f in files_under(&out) {
        let info = read_info(&out.join(&f), &ReadLimits::default()).unwrap();
        assert_eq!(info.format, wgpu::TextureFormat::Bc7RgbaUnormSrgb);
        assert_eq!(info.key_value_str("KTXorientation"), Some("rd"));
        assert!(
            info.key_value_str("KTXwriter")
                .unwrap()
                .starts_with("mipflow ")
        );
    }
    let deep = read_info(&out.join("a/b/deep.ktx2"), &ReadLimits::default()).unwrap();
    assert_eq!((deep.width, deep.height, deep.levels.len()), (40, 24, 6));

    let paths: Vec<PathBuf> = files_under(&out).iter().map(|f| out.join(f)).collect();
    let mut args = vec!["inspect"];
    args.extend(paths.iter().map(|p| s(p)));
    let o = mipflow(&args, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Files named directly; the flag contract: --quality, --zstd, --color, --normal-map.
#[test]
fn flags_select_format_and_supercompression() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("tex.png");
    save(&test_image(64, 48, 7), &img);
    let out = |name: &str| tmp.path().join(name);

    let o = mipflow(
        &[
            "cook",
            s(&img),
            "-o",
            s(&out("z")),
            "--zstd",
            "5",
            "--quality",
            "slow",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let info = read_info(&out("z").join("tex.ktx2"), &ReadLimits::default()).unwrap();
    assert_eq!(info.supercompression, Supercompression::Zstd);
    assert_eq!(info.key_value_str("KTXwriterScParams"), Some("--zcmp 5"));

    let o = mipflow(
        &[
            "cook",
            s(&img),
            "--out",
            s(&out("lin")),
            "--color",
            "linear",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let info = read_info(&out("lin").join("tex.ktx2"), &ReadLimits::default()).unwrap();
    assert_eq!(info.format, wgpu::TextureFormat::Bc7RgbaUnorm);
    assert_eq!(info.supercompression, Supercompression::None);
    assert_eq!(info.dfd.transfer_function, 1);

    let o = mipflow(
        &[
            "cook",
            s(&img),
            "-o",
            s(&out("n")),
            "--normal-map",
            "--color",
            "srgb",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let info = read_info(&out("n").join("tex.ktx2"), &ReadLimits::default()).unwrap();
    // A normal map is BC5 (x and y; the shader rebuilds z) unless --format says otherwise.
    assert_eq!(info.format, wgpu::TextureFormat::Bc5RgUnorm);
    assert!(
        info.key_value_str("mipflow.cook")
            .unwrap()
            .contains("normal_map=true")
    );

    // --format writes each block format, read by another reader (the ktx2 crate) with the right
    // vkFormat and DFD colour model, and by ours with the format's level sizes.
    for (name, vk, model, block) in [
        ("bc7", 146u32, 134u8, 16u64),
        ("bc1", 134, 128, 8),
        ("bc3", 138, 130, 16),
        ("bc4", 139, 131, 8),
        ("bc5", 141, 132, 16),
        ("bc6h", 143, 133, 16),
    ] {
        let dir = out(&format!("f-{name}"));
        let o = mipflow(
            &[
                "cook",
                s(&img),
                "-o",
                s(&dir),
                "--format",
                name,
                "--threads",
                "1",
            ],
            &[],
        );
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let bytes = std::fs::read(dir.join("tex.ktx2")).unwrap();
        let r = ktx2::Reader::new(bytes.as_slice()).unwrap();
        assert_eq!(r.header().format.map(|f| f.value()), Some(vk), "{name}");
        assert_eq!(r.color_model().map(|m| m.value()), Some(model), "{name}");
        let info = read_info(&dir.join("tex.ktx2"), &ReadLimits::default()).unwrap();
        let (w, h) = info.level_dims(0);
        assert_eq!(
            info.level_size(0),
            u64::from(w.div_ceil(4) * h.div_ceil(4)) * block,
            "{name}"
        );
    }

    // --wrap repeat: the mips of a tiling texture read across its edges (a different level 1
    // from clamp's), and the stamp says so (a later clamp cook is not "up to date").
    let mut level1 = Vec::new();
    for wrap in ["clamp", "repeat"] {
        let dir = out(&format!("w-{wrap}"));
        let o = mipflow(&["cook", s(&img), "-o", s(&dir), "--wrap", wrap], &[]);
        assert!(o.status.success(), "{wrap}: {}", stderr(&o));
        let path = dir.join("tex.ktx2");
        let info = read_info(&path, &ReadLimits::default()).unwrap();
        let stamp = info.key_value_str("mipflow.cook").unwrap().to_owned();
        assert_eq!(stamp.contains("wrap=repeat"), wrap == "repeat", "{stamp}");
        let levels = mipflow::TextureSource::Path(std::sync::Arc::new(path))
            .read_levels(&info, 1..2, &std::sync::atomic::AtomicBool::new(false))
            .unwrap();
        level1.push(levels[0].clone());
    }
    assert_ne!(level1[0], level1[1], "repeat filters across the edges");

    // An HDR input (OpenEXR, Radiance HDR) is cooked to BC6H in floats: values above 1 keep
    // their range (an 8-bit path would clip the sun at 1).
    let hdr_img = image::Rgb32FImage::from_fn(64, 32, |x, y| {
        let sun = ((x as f32 - 40.0).powi(2) + (y as f32 - 12.0).powi(2)) < 36.0;
        let sky = 0.2 + 0.6 * y as f32 / 31.0;
        if sun {
            image::Rgb([12.0, 10.0, 6.0])
        } else {
            image::Rgb([sky * 0.5, sky * 0.7, sky])
        }
    });
    for ext in ["exr", "hdr"] {
        let src_dir = out(&format!("hdr-src-{ext}"));
        std::fs::create_dir_all(&src_dir).unwrap();
        let input = src_dir.join(format!("sky.{ext}"));
        image::DynamicImage::ImageRgb32F(hdr_img.clone())
            .save(&input)
            .unwrap();
        let dir = out(&format!("hdr-{ext}"));
        let o = mipflow(&["cook", s(&input), "-o", s(&dir)], &[]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        let path = dir.join("sky.ktx2");
        let info = read_info(&path, &ReadLimits::default()).unwrap();
        assert_eq!(info.format, wgpu::TextureFormat::Bc6hRgbUfloat, "{ext}");
        assert_eq!(info.levels.len(), 7);
        let level0 = mipflow::TextureSource::Path(std::sync::Arc::new(path))
            .read_levels(&info, 0..1, &std::sync::atomic::AtomicBool::new(false))
            .unwrap()
            .remove(0);
        let rgb = mipflow_cook::decode_bc6h(&level0, 64, 32, false);
        let at = |x: usize, y: usize| &rgb[(y * 64 + x) * 3..(y * 64 + x) * 3 + 3];
        // The sun's centre, and a sky texel, within 10% (Radiance HDR stores 8-bit mantissas).
        let sun = at(40, 12);
        assert!(
            (sun[0] - 12.0).abs() < 1.2 && (sun[2] - 6.0).abs() < 0.6,
            "{ext}: {sun:?}"
        );
        let sky = at(5, 28);
        let want = 0.2 + 0.6 * 28.0 / 31.0;
        assert!(
            (sky[2] - want).abs() < 0.1 * want,
            "{ext}: {sky:?} against {want}"
        );
    }

    for bad in [
        &["--zstd", "0"][..],
        &["--zstd", "23"],
        &["--quality", "ultra"],
        &["--format", "etc2"],
        &["--threads", "0"],
        &["--wrap", "mirror"],
        &["--color", "rgb"],
    ] {
        let bad_out = out("bad");
        let mut args = vec!["cook", s(&img), "-o", s(&bad_out)];
        args.extend_from_slice(bad);
        let o = mipflow(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad:?} accepted");
    }
    assert!(!out("bad").exists());
}

/// A corrupt or unsupported input is reported with its path and reason; the others still cook; the
/// exit code is 1; nothing is written for the failures.
#[test]
fn failures_are_reported_and_the_rest_cooks() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let out = tmp.path().join("out");
    save(&test_image(20, 20, 1), &input.join("good.png"));
    std::fs::write(
        input.join("corrupt.png"),
        b"\x89PNG\r\n\x1a\nthis is not a png",
    )
    .unwrap();
    let jpg = input.join("cut.jpg");
    save(&test_image(64, 64, 2), &jpg);
    let bytes = std::fs::read(&jpg).unwrap();
    // Cut inside the headers (the JPEG decoder fills in a truncated scan, so cut before it).
    std::fs::write(&jpg, &bytes[..120]).unwrap();
    save(&test_image(8, 8, 3), &input.join("twin.png"));
    save(&test_image(8, 8, 4), &input.join("twin.bmp"));
    let missing = tmp.path().join("missing.png");
    let txt = tmp.path().join("readme.txt");
    std::fs::write(&txt, "x").unwrap();

    let o = mipflow(
        &["cook", s(&input), s(&missing), s(&txt), "-o", s(&out)],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("corrupt.png") && err.contains("cannot decode"),
        "{err}"
    );
    assert!(err.contains("cut.jpg"), "{err}");
    assert!(err.contains("missing.png"), "{err}");
    assert!(
        err.contains("readme.txt") && err.contains("not a .png"),
        "{err}"
    );
    // twin.png and twin.bmp differ by extension only: both cooked, each under its own name.
    assert!(err.contains("differ by extension only"), "{err}");
    assert!(err.contains("cooked 3"), "{err}");
    assert_eq!(
        files_under(&out),
        ["good.ktx2", "twin.bmp.ktx2", "twin.png.ktx2"]
    );
}

/// One file named twice is cooked once (compared by the file, not the path text);
/// same-named inputs from two folders are refused, each naming the other; outputs get the
/// umask's permissions; two cooks into one folder at once both succeed with valid files.
#[test]
fn duplicates_collisions_permissions_and_concurrent_cooks() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    save(&test_image(40, 40, 1), &src.join("a.png"));
    save(&test_image(40, 40, 2), &tmp.path().join("other/a.png"));
    let out = tmp.path().join("out");
    let dotted = tmp.path().join("src/../src/./a.png");
    let o = mipflow(
        &["cook", s(&src.join("a.png")), s(&dotted), "-o", s(&out)],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("cooked 1"), "{}", stderr(&o));

    let out2 = tmp.path().join("out2");
    let o = mipflow(
        &[
            "cook",
            s(&src.join("a.png")),
            s(&tmp.path().join("other/a.png")),
            "-o",
            s(&out2),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("several inputs") && err.contains("other"),
        "{err}"
    );

    // Names made for inputs that differ by extension (`b.jpg.ktx2`) meeting another input's
    // own name (`b.jpg.png`): the two refused, not one overwriting the other; `b.tga` cooks.
    let twins = tmp.path().join("twins");
    for (i, name) in ["b.jpg", "b.tga", "b.jpg.png"].into_iter().enumerate() {
        save(&test_image(40, 40, 10 + i as u32), &twins.join(name));
    }
    let out4 = tmp.path().join("out4");
    let o = mipflow(
        &["cook", s(&twins), "-o", s(&out4), "--quality", "fast"],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("cooked 1") && err.contains("2 failed"),
        "{err}"
    );
    assert!(
        err.contains("b.jpg.ktx2 would be written by several inputs"),
        "{err}"
    );
    assert!(out4.join("b.tga.ktx2").exists());
    assert!(!out4.join("b.jpg.ktx2").exists());

    // A folder with nothing to cook in it fails (exit 1), naming it, instead of "cooked 0".
    let empty = tmp.path().join("nothing");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), b"x").unwrap();
    let o = mipflow(&["cook", s(&empty), "-o", s(&out4)], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no .png, .jpg") && stderr(&o).contains("nothing"),
        "{}",
        stderr(&o)
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let out3 = tmp.path().join("out3");
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask 027 && exec '{}' cook '{}' -o '{}' --quality fast",
                env!("CARGO_BIN_EXE_mipflow"),
                s(&src.join("a.png")),
                s(&out3)
            ))
            .status()
            .unwrap();
        assert!(status.success());
        let mode = std::fs::metadata(out3.join("a.ktx2"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640, "{mode:o}");
    }

    // Two cooks of the same folder into the same output folder, at once.
    let many = tmp.path().join("many");
    for i in 0..12 {
        save(&test_image(64, 64, i), &many.join(format!("t{i:02}.png")));
    }
    let shared = tmp.path().join("shared");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .args([
                "cook",
                s(&many),
                "-o",
                s(&shared),
                "--force",
                "--quality",
                "fast",
            ])
            .env("RUST_LOG", "warn")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let names = files_under(&shared);
    assert_eq!(names.len(), 12, "{names:?}");
    for n in names {
        assert!(n.ends_with(".ktx2"), "a leftover: {n}");
        read_info(&shared.join(&n), &ReadLimits::default()).unwrap();
    }
}

/// An up-to-date output is skipped; a changed input, changed settings or --force cook again.
#[test]
fn incremental_cooking() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("t.png");
    let out = tmp.path().join("out");
    save(&test_image(32, 32, 1), &img);
    let cook = |extra: &[&str]| {
        let mut args = vec!["cook", s(&img), "-o", s(&out), "--quality", "fast"];
        args.extend_from_slice(extra);
        let o = mipflow(&args, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    assert!(cook(&[]).contains("cooked 1"));
    let stamp = || {
        read_info(&out.join("t.ktx2"), &ReadLimits::default())
            .unwrap()
            .key_value_str("mipflow.cook")
            .unwrap()
            .to_string()
    };
    let first = stamp();
    assert!(
        first.contains("quality=fast") && first.contains("input-xxh3-128="),
        "{first}"
    );
    let err = cook(&[]);
    assert!(
        err.contains("cooked 0") && err.contains("1 up to date"),
        "{err}"
    );
    assert!(cook(&["--force"]).contains("cooked 1"));
    assert!(cook(&["--zstd", "3"]).contains("cooked 1"));
    assert!(cook(&["--zstd", "3"]).contains("1 up to date"));
    save(&test_image(32, 32, 2), &img);
    assert!(cook(&["--zstd", "3"]).contains("cooked 1"));
    assert_ne!(stamp(), first);
    // A damaged output is not taken as up to date.
    std::fs::write(out.join("t.ktx2"), b"garbage").unwrap();
    assert!(cook(&["--zstd", "3"]).contains("cooked 1"));
}

/// The process dies while writing one output (the test hook aborts it half-way through the
/// temporary file): no partial `.ktx2` exists, every `.ktx2` present is complete, and a re-run
/// cooks only what is missing, removes the leftover temporary file and ends with all outputs valid.
#[test]
fn interrupted_cook_then_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let out = tmp.path().join("out");
    for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        save(
            &test_image(48, 40, i as u32),
            &input.join(format!("{name}.png")),
        );
    }
    let o = mipflow(
        &["cook", s(&input), "-o", s(&out)],
        &[("MIPFLOW_TEST_ABORT_WRITING", "c.ktx2")],
    );
    assert!(!o.status.success(), "the hook should have killed the run");
    let after_crash = files_under(&out);
    assert!(
        !after_crash.contains(&"c.ktx2".to_string()),
        "{after_crash:?}"
    );
    assert!(
        after_crash
            .iter()
            .any(|f| f.starts_with(".c.ktx2.") && f.ends_with(".part")),
        "{after_crash:?}"
    );
    let complete: Vec<&String> = after_crash
        .iter()
        .filter(|f| f.ends_with(".ktx2"))
        .collect();
    for f in &complete {
        read_info(&out.join(f), &ReadLimits::default()).unwrap_or_else(|e| panic!("{f}: {e}"));
    }

    let o = mipflow(&["cook", s(&input), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("cooked {}", 5 - complete.len())),
        "{err}"
    );
    assert!(
        err.contains(&format!("{} up to date", complete.len())),
        "{err}"
    );
    assert_eq!(
        files_under(&out),
        ["a.ktx2", "b.ktx2", "c.ktx2", "d.ktx2", "e.ktx2"]
    );
    let o = mipflow(&["inspect", s(&out.join("c.ktx2"))], &[]);
    assert!(o.status.success());
}

/// `inspect` prints the format, levels, DFD and metadata; `--json` gives the same to machines;
/// invalid files are reported with their problems and exit code 1.
#[test]
fn inspect_text_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("t.png");
    save(&test_image(20, 10, 1), &img);
    let out = tmp.path().join("out");
    assert!(
        mipflow(
            &[
                "cook",
                s(&img),
                "-o",
                s(&out),
                "--zstd",
                "3",
                "--resize",
                "keep"
            ],
            &[]
        )
        .status
        .success()
    );
    let file = out.join("t.ktx2");

    let o = mipflow(&["inspect", s(&file)], &[]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "valid",
        "vkFormat 146",
        "20x10, 5 levels",
        "Zstandard",
        "colour model 134 (BC7)",
        "KTXorientation = \"rd\"",
        "mipflow.cook",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }

    let bad = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/ktx2/dfd_transfer_srgb_on_unorm.ktx2");
    let o = mipflow(&["inspect", "--json", s(&file), s(&bad)], &[]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reports = json.as_array().unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["valid"], true);
    assert_eq!(reports[0]["format"], "Bc7RgbaUnormSrgb");
    assert_eq!(reports[0]["supercompression"], "zstd");
    assert_eq!(reports[0]["levels"].as_array().unwrap().len(), 5);
    assert_eq!(reports[0]["levels"][0]["width"], 20);
    assert_eq!(reports[0]["dfd"]["color_model"], 134);
    assert_eq!(reports[1]["valid"], false);
    assert!(
        reports[1]["problems"][0]
            .as_str()
            .unwrap()
            .contains("transferFunction")
    );
    assert!(
        reports[0].get("file_bytes").is_none(),
        "UTF-8 names have none"
    );

    // A name that is not UTF-8 keeps its bytes in `file_bytes`.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = tmp
            .path()
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9.ktx2"));
        std::fs::copy(&file, &odd).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .arg("inspect")
            .arg("--json")
            .arg(&odd)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let raw = json[0]["file_bytes"].as_str().unwrap();
        let mut want = String::from("hex:");
        for b in odd.as_os_str().as_bytes() {
            want.push_str(&format!("{b:02x}"));
        }
        assert_eq!(raw, want);
        assert!(raw.ends_with("636166e92e6b747832"), "{raw}");
    }
}

#[test]
fn resize_stream_makes_every_level_to_the_floor_block_aligned() {
    use mipflow::low_level::PlanTexture;
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let out = tmp.path().join("out");
    let keep = tmp.path().join("keep");
    save(&test_image(451, 300, 7), &input.join("odd.png"));
    save(&test_image(960, 540, 8), &input.join("hd.png"));
    save(&test_image(256, 256, 9), &input.join("square.png"));
    let o = mipflow(
        &["cook", s(&input), "-o", s(&out), "--quality", "fast"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (name, size, source) in [
        ("odd", (448, 320), Some("451x300")),
        ("hd", (1024, 512), Some("960x540")),
        ("square", (256, 256), None),
    ] {
        let info = read_info(&out.join(format!("{name}.ktx2")), &ReadLimits::default()).unwrap();
        assert_eq!((info.width, info.height), size, "{name}");
        assert_eq!(info.key_value_str("mipflowSourceSize"), source, "{name}");
        // Every level down to the first of at most 32 texels can start a BC7 texture.
        let count = info.levels.len() as u8;
        let bases = PlanTexture::block_aligned_bases(info.width, info.height, 4, 4, count);
        let floor = PlanTexture::floor_for(info.width, info.height, 32, count, bases).unwrap();
        assert!(
            (info.width >> floor).max(info.height >> floor) <= 32,
            "{name}"
        );
        assert!(
            (0..=floor).all(|l| bases & (1 << l) != 0),
            "{name}: {bases:b}"
        );
    }
    // --resize keep leaves the size (and such a file cannot go on the GPU at all).
    let o = mipflow(
        &[
            "cook",
            s(&input.join("odd.png")),
            "-o",
            s(&keep),
            "--quality",
            "fast",
            "--resize",
            "keep",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let info = read_info(&keep.join("odd.ktx2"), &ReadLimits::default()).unwrap();
    assert_eq!((info.width, info.height), (451, 300));
}

/// A folder with `small.png` (32²) and `big.png` (4096² grey, a few KiB as a PNG: about 150 MiB
/// of buffers to cook), and the output folder to cook it into.
fn small_and_big(tmp: &Path) -> (PathBuf, PathBuf) {
    let input = tmp.join("in");
    save(&test_image(32, 32, 1), &input.join("small.png"));
    image::GrayImage::new(4096, 4096)
        .save(input.join("big.png"))
        .unwrap();
    (input, tmp.join("out"))
}

/// An allocation that fails deep in the cook (the process's address space limited
/// below what a 4096² image needs, while `--max-memory` allows it) is that input's typed error;
/// the other input is cooked and the exit code is 1. Before, the allocation failure aborted the
/// whole process (signal 6) and nothing after it was cooked.
#[cfg(target_os = "linux")]
#[test]
fn an_allocation_failure_deep_in_the_cook_is_that_inputs_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (input, out) = small_and_big(tmp.path());
    // 140 MB of address space: the process starts and cooks the small image in it (it needs
    // under 100 MB), the big one cannot have its buffers.
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 140000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_mipflow"))
        .args(["cook", s(&input), "-o", s(&out), "--max-memory", "16GiB"])
        .args(["--quality", "fast", "--threads", "1"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run mipflow under ulimit");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("big.png") && err.contains("out of memory") && err.contains("MiB"),
        "{err}"
    );
    assert_eq!(files_under(&out), ["small.ktx2"]);
}

/// An image too large to cook in the memory allowed is that input's error, found from
/// its header before it is decoded; the others cook.
#[test]
fn an_image_too_large_for_the_memory_allowed_is_its_own_error() {
    let tmp = tempfile::tempdir().unwrap();
    // big.png: 160 MiB to cook at 10 bytes a pixel.
    let (input, out) = small_and_big(tmp.path());
    let o = mipflow(
        &[
            "cook",
            s(&input),
            "-o",
            s(&out),
            "--max-memory",
            "64MiB",
            "--quality",
            "fast",
        ],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("big.png") && err.contains("4096x4096") && err.contains("over the 64 MiB"),
        "{err}"
    );
    assert_eq!(files_under(&out), ["small.ktx2"]);
    let o = mipflow(
        &["cook", s(&input), "-o", s(&out), "--max-memory", "lots"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// An HDR input's working memory is estimated in floats (32 bytes a pixel), not as an 8-bit
/// image's 10: an OpenEXR that an 8-bit estimate would let through is refused from its header
/// with the float figure, and the same pixels as PNG cook in that memory.
#[test]
fn an_hdr_input_is_priced_in_floats() {
    use mipflow_cli::cook_cmd::cook_bytes;
    use mipflow_cook::{COOK_HDR_BYTES_PER_PIXEL, CookError, CookOptions, Quality};
    let opts = CookOptions {
        quality: Quality::Fast,
        ..Default::default()
    };
    let encode = |img: image::DynamicImage, format| {
        let mut bytes = std::io::Cursor::new(Vec::new());
        img.write_to(&mut bytes, format).unwrap();
        bytes.into_inner()
    };
    let exr = encode(
        image::DynamicImage::ImageRgb32F(image::Rgb32FImage::from_pixel(
            64,
            64,
            image::Rgb([2.0, 1.0, 0.5]),
        )),
        image::ImageFormat::OpenExr,
    );
    let png = encode(
        image::DynamicImage::ImageRgba8(test_image(64, 64, 3)),
        image::ImageFormat::Png,
    );
    let max = 100 * 1024;
    match cook_bytes(Path::new("sky.exr"), &exr, &opts, max) {
        Err(CookError::TooLarge { needed, limit, .. }) => {
            assert_eq!(needed, 64 * 64 * COOK_HDR_BYTES_PER_PIXEL);
            assert_eq!(limit, max);
        }
        other => panic!("{:?}", other.map(|t| t.width)),
    }
    assert_eq!(
        cook_bytes(Path::new("wall.png"), &png, &opts, max)
            .unwrap()
            .width,
        64
    );
    // With the float figure allowed, the OpenEXR cooks.
    let tex = cook_bytes(Path::new("sky.exr"), &exr, &opts, 64 * 64 * 32).unwrap();
    assert_eq!(tex.format, wgpu::TextureFormat::Bc6hRgbUfloat);
}

/// An HDR input (linear light) cooked to an 8-bit sRGB format is encoded to sRGB: a flat
/// linear 0.5 grey decodes (sRGB to linear, as the GPU samples it) to 0.5, not to 0.21 (the
/// linear values were stored as sRGB codes); with `--color linear` it is stored as 128.
#[test]
fn an_hdr_input_cooked_to_8_bit_srgb_keeps_its_light() {
    use mipflow_cli::cook_cmd::cook_bytes;
    use mipflow_cook::{BlockKind, ColorSpace, CookOptions, Quality};
    let mut bytes = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb32F(image::Rgb32FImage::from_pixel(
        32,
        32,
        image::Rgb([0.5, 0.5, 0.5]),
    ))
    .write_to(&mut bytes, image::ImageFormat::OpenExr)
    .unwrap();
    let exr = bytes.into_inner();
    for (color, want_code, want_format) in [
        (
            ColorSpace::Srgb,
            188u8,
            wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        ),
        (ColorSpace::Linear, 128, wgpu::TextureFormat::Bc7RgbaUnorm),
    ] {
        let opts = CookOptions {
            quality: Quality::Fast,
            block: Some(BlockKind::Bc7),
            color,
            ..Default::default()
        };
        let tex = cook_bytes(Path::new("grey.exr"), &exr, &opts, 1 << 30).unwrap();
        assert_eq!(tex.format, want_format);
        let rgba = mipflow_cook::decode_bc7(&tex.levels[0], 32, 32);
        let code = rgba[0];
        assert!(
            code.abs_diff(want_code) <= 1,
            "{color:?}: stored {code}, want {want_code}"
        );
        if color == ColorSpace::Srgb {
            let shown = mipflow_cook::srgb_to_linear(f32::from(code) / 255.0);
            assert!((shown - 0.5).abs() < 0.01, "shown as {shown}");
        }
    }
}

/// An output folder that cannot take files (an existing file, a folder under a file) is a usage
/// error found before anything is encoded: exit 2, the path named (before: every input was
/// encoded, then each failed on its own write, exit 1).
#[test]
fn an_output_that_cannot_be_written_exits_2_before_cooking() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("a.png");
    save(&test_image(64, 64, 1), &img);
    let file = tmp.path().join("taken.txt");
    std::fs::write(&file, b"not a folder").unwrap();
    for out in [file.clone(), file.join("sub")] {
        let o = mipflow(&["cook", s(&img), "-o", s(&out)], &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {stderr}", out.display());
        assert!(stderr.contains(s(&out)), "{stderr}");
        assert!(
            !stderr.contains("cooked"),
            "encoded before the check: {stderr}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a folder");
}

/// `mipflow inspect many.ktx2 | head -1`: a reader that closes the pipe ends the output
/// quietly, with the exit of the files' validity (before: a panic, exit 101).
#[test]
fn inspect_into_a_closed_pipe_exits_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("a.png");
    save(&test_image(32, 32, 1), &img);
    let out = tmp.path().join("out");
    let o = mipflow(&["cook", s(&img), "-o", s(&out), "--quality", "fast"], &[]);
    assert!(o.status.success(), "{o:?}");
    let file = out.join("a.ktx2");
    let files: Vec<&str> = std::iter::repeat_n(s(&file), 200).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .arg("inspect")
        .args(&files)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mipflow");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `mipflow cook dir -o out 2>&1 | head -1`: a reader that closes stderr does not turn the
/// run's exit into a panic (101): the good input is cooked and the exit is 1 for the bad one.
#[test]
fn cook_into_a_closed_stderr_pipe_keeps_its_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    save(&test_image(32, 32, 1), &input.join("good.png"));
    std::fs::write(input.join("bad.png"), b"not a png").unwrap();
    let out = tmp.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args(["cook", s(&input), "-o", s(&out), "--quality", "fast"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mipflow");
    drop(child.stderr.take());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(out.join("good.ktx2").is_file());
}

/// `--format bc1` on an image with transparent texels says that they come out opaque (the
/// encoder writes no punch-through alpha; before, the cut-out was silently opaque); an opaque
/// image is cooked to BC1 without the warning.
#[test]
fn bc1_says_when_alpha_is_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let cut = tmp.path().join("cut.png");
    RgbaImage::from_fn(32, 32, |x, _| {
        Rgba([200, 100, 50, if x < 16 { 0 } else { 255 }])
    })
    .save(&cut)
    .unwrap();
    let opaque = tmp.path().join("opaque.png");
    save(&test_image(32, 32, 1), &opaque);
    for (input, warned) in [(&cut, true), (&opaque, false)] {
        let out = tmp.path().join("out");
        let o = mipflow(&["cook", s(input), "-o", s(&out), "--format", "bc1"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).contains("BC1 is cooked opaque"),
            warned,
            "{}",
            stderr(&o)
        );
    }
}

/// An output that exists and is not a regular file (a symbolic link, a pipe, a folder) is
/// refused before anything is cooked (exit 2), and left as it was: the atomic write would have
/// renamed a file over it.
#[test]
fn outputs_that_are_links_pipes_or_folders_are_refused_before_cooking() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("a.png");
    save(&test_image(64, 64, 1), &img);
    let kept = tmp.path().join("kept.bin");
    std::fs::write(&kept, b"kept").unwrap();

    let out = tmp.path().join("out-link");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&kept, out.join("a.ktx2")).unwrap();
    let o = mipflow(&["cook", s(&img), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("symbolic link") && !err.contains("cooked"),
        "{err}"
    );
    assert_eq!(std::fs::read(&kept).unwrap(), b"kept");

    let out = tmp.path().join("out-dir");
    std::fs::create_dir_all(out.join("a.ktx2")).unwrap();
    let o = mipflow(&["cook", s(&img), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(out.join("a.ktx2").is_dir());

    let out = tmp.path().join("out-fifo");
    std::fs::create_dir(&out).unwrap();
    if Command::new("mkfifo")
        .arg(out.join("a.ktx2"))
        .status()
        .is_ok_and(|st| st.success())
    {
        let o = mipflow(&["cook", s(&img), "-o", s(&out)], &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
    }
}

/// `a.jpg` cooked alone is `a.ktx2`; once `a.tga` appears beside it, both cook to
/// `a.jpg.ktx2` and `a.tga.ktx2` and the old `a.ktx2` is removed (and said), not left for a
/// game to load. A file at that name that no cook wrote is left, and named.
#[test]
fn an_output_renamed_by_a_new_twin_leaves_no_stale_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let out = tmp.path().join("out");
    std::fs::create_dir(&src).unwrap();
    save(&test_image(64, 64, 1), &src.join("a.jpg"));
    let o = mipflow(&["cook", s(&src), "-o", s(&out)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("a.ktx2").is_file());

    save(&test_image(64, 64, 2), &src.join("a.tga"));
    let o = mipflow(&["cook", s(&src), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !out.join("a.ktx2").exists(),
        "the stale a.ktx2 is gone: {err}"
    );
    assert!(out.join("a.jpg.ktx2").is_file() && out.join("a.tga.ktx2").is_file());
    assert!(err.contains("removed") && err.contains("a.ktx2"), "{err}");

    // Someone else's a.ktx2 (no cook stamp) is kept, and named.
    std::fs::write(out.join("a.ktx2"), b"mine").unwrap();
    let o = mipflow(&["cook", s(&src), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(out.join("a.ktx2")).unwrap(), b"mine");
    assert!(err.contains("not a cook output"), "{err}");
}

/// A subfolder of a cook input that cannot be read (nested past PATH_MAX: unreadable whoever
/// runs the test) fails the run by its name, exit 1, while the rest cooks.
#[test]
fn an_unreadable_input_subfolder_fails_the_cook_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("deep")).unwrap();
    save(&test_image(64, 64, 1), &src.join("a.png"));
    let name = "d".repeat(250);
    let made = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd deep && for i in $(seq 20); do mkdir {name} && cd -P {name} || exit 1; done"
        ))
        .current_dir(&src)
        .status()
        .unwrap();
    assert!(made.success());
    let out = tmp.path().join("out");
    let o = mipflow(&["cook", s(&src), "-o", s(&out)], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("deep"), "the folder is named: {err}");
    assert!(out.join("a.ktx2").is_file(), "the rest cooks: {err}");
}

/// SIGTERM (or SIGINT) during a write: the temporary part is removed and the output keeps its
/// previous content (none here), exit 130; the next cook writes it whole.
#[test]
fn a_signal_mid_write_leaves_no_part() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("a.png");
    save(&test_image(64, 64, 1), &img);
    let out = tmp.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args(["cook", s(&img), "-o", s(&out)])
        .env("MIPFLOW_TEST_STALL_WRITING", "a.ktx2")
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run mipflow");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let part = || {
        files_under(&out)
            .into_iter()
            .any(|f| f.starts_with(".a.ktx2.") && f.ends_with(".part"))
    };
    while !part() {
        assert!(
            std::time::Instant::now() < deadline,
            "no part written in 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert_eq!(
        files_under(&out),
        Vec::<String>::new(),
        "no part, no output"
    );
    let o = mipflow(&["cook", s(&img), "-o", s(&out)], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(files_under(&out), ["a.ktx2"]);
}
