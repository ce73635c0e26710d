//! `mipflow cook --gpu`: the GPU encoder against the CPU one on the same images (every block
//! format, a size that is not a multiple of 4), and files cooked on the GPU that another KTX2
//! reader (the `ktx2` crate) and ours accept. On lavapipe here: a software adapter, which `auto`
//! does not pick and `on` does. Its pipelines take over a minute to build there, so one test
//! makes the device once and does everything on it; BC7 and BC6H there only with
//! `MIPFLOW_GPU_COOK_ALL=1` (see below).

use std::path::Path;
use std::process::Command;

use mipflow_cli::cook_cmd::{CookArgs, cook_files_on};
use mipflow_cook::{
    BlockKind, ColorSpace, CookOptions, GpuEncoders, GpuMode, Quality, Resize, Wrap, cook_rgba8,
    decode_blocks, encoder::encoder_for_options, psnr_rgb,
};

fn coffee() -> image::RgbaImage {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/basis/inputs/coffee_128.png");
    image::open(path).unwrap().to_rgba8()
}

/// RGB PSNR of `blocks` (level 0 of `opts`' format) against `img`, over the channels the format
/// keeps.
fn db(opts: &CookOptions, blocks: &[u8], img: &image::RgbaImage) -> f64 {
    let (w, h) = img.dimensions();
    let mut got = decode_blocks(opts.format(), blocks, w, h);
    let mut want = img.as_raw().clone();
    let keep = match opts.block_kind() {
        BlockKind::Bc4 => 1,
        BlockKind::Bc5 => 2,
        _ => 3,
    };
    for p in got.chunks_exact_mut(4).chain(want.chunks_exact_mut(4)) {
        p[keep..3].fill(0);
    }
    psnr_rgb(&got, &want)
}

#[test]
fn the_gpu_encoder_cooks_within_a_decibel_of_the_cpu() {
    let gpu = match GpuEncoders::open(GpuMode::On) {
        Ok(Some(gpu)) => gpu,
        other => {
            assert!(
                std::env::var_os("MIPFLOW_REQUIRE_GPU").is_none(),
                "no GPU adapter: {other:?}"
            );
            return;
        }
    };
    let software = gpu.adapter().contains("llvmpipe");
    if software {
        assert!(
            GpuEncoders::open(GpuMode::Auto).unwrap().is_none(),
            "auto took lavapipe"
        );
    }
    // BC7's and BC6H's shaders take lavapipe about two minutes each to compile on a clean
    // machine (Mesa's shader cache keeps them after): on a software adapter they run only when
    // MIPFLOW_GPU_COOK_ALL is set. A real GPU runs every format.
    let all = !software || std::env::var_os("MIPFLOW_GPU_COOK_ALL").is_some();
    let mut kinds = vec![
        BlockKind::Bc1,
        BlockKind::Bc3,
        BlockKind::Bc4,
        BlockKind::Bc5,
    ];
    if all {
        kinds.extend([BlockKind::Bc7, BlockKind::Bc6h]);
    }
    assert!(GpuEncoders::open(GpuMode::Off).unwrap().is_none());
    let src = coffee();
    let small = image::imageops::resize(&src, 32, 32, image::imageops::FilterType::Triangle);
    let odd = image::imageops::crop_imm(&src, 40, 50, 14, 10).to_image();
    for img in [&small, &odd] {
        for &kind in &kinds {
            let opts = CookOptions {
                color: ColorSpace::Linear,
                resize: Resize::Keep,
                block: Some(kind),
                ..CookOptions::default()
            };
            let on_gpu = cook_rgba8(img.clone(), &opts, gpu.encoder(&opts).as_ref()).unwrap();
            let on_cpu =
                cook_rgba8(img.clone(), &opts, encoder_for_options(&opts).as_ref()).unwrap();
            let (g, c) = (
                db(&opts, &on_gpu.levels[0], img),
                db(&opts, &on_cpu.levels[0], img),
            );
            let (w, h) = img.dimensions();
            assert!(
                g > c - 1.0,
                "{kind:?} {w}x{h}: GPU {g:.2} dB, CPU {c:.2} dB"
            );
            assert!(g > 25.0, "{kind:?} {w}x{h}: GPU {g:.2} dB");
            assert_eq!(on_gpu.levels.len(), on_cpu.levels.len());
            for (gl, cl) in on_gpu.levels.iter().zip(&on_cpu.levels) {
                assert_eq!(gl.len(), cl.len(), "{kind:?}");
            }
        }
    }

    // A cook on the GPU, as `mipflow cook --gpu on` runs it: files both readers accept.
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in/coffee.png");
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    odd.save(&input).unwrap();
    let args = CookArgs {
        inputs: vec![input.clone()],
        out: tmp.path().join("out"),
        quality: Quality::Default,
        zstd: Some(3),
        color: ColorSpace::Srgb,
        normal_map: false,
        format: (!all).then_some(BlockKind::Bc5),
        wrap: Wrap::Clamp,
        threads: None,
        force: false,
        resize: Resize::Stream,
        max_memory: None,
        gpu: GpuMode::On,
        tiles: None,
    };
    let summary = cook_files_on(&args, false, Some(&gpu));
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let out = tmp.path().join("out/coffee.ktx2");
    let bytes = std::fs::read(&out).unwrap();
    let r = ktx2::Reader::new(bytes.as_slice()).expect("the ktx2 crate reads it");
    let (vk, name) = if all { (146, "bc7") } else { (141, "bc5") };
    assert_eq!(r.header().format.map(|f| f.value()), Some(vk));
    let info = mipflow::ktx2::read_info(&out, &Default::default()).unwrap();
    let stamp = String::from_utf8_lossy(info.key_value("mipflow.cook").unwrap()).into_owned();
    let encoder = format!("encoder=block_compression-0.11-gpu/{name}/fast");
    assert!(stamp.contains(&encoder), "{stamp}");
    assert_eq!(r.levels().len(), info.levels.len());
}

/// The flag's contract through the binary, without building the GPU pipelines: `auto` on a
/// software adapter and `off` cook on the CPU (the stamp names the encoder); a bad value is a
/// usage error.
#[test]
fn the_gpu_flag_chooses_the_encoder() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("a.png");
    image::imageops::crop_imm(&coffee(), 0, 0, 32, 32)
        .to_image()
        .save(&input)
        .unwrap();
    let run = |gpu: &str| {
        Command::new(env!("CARGO_BIN_EXE_mipflow"))
            .args(["cook", input.to_str().unwrap(), "-o"])
            .arg(tmp.path().join(gpu))
            .args(["--gpu", gpu])
            .output()
            .unwrap()
    };
    let o = run("sideways");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--gpu"));
    let mut modes = vec!["off"];
    let lavapipe = std::env::var("VK_DRIVER_FILES").is_ok_and(|v| v.contains("lvp"));
    if lavapipe {
        modes.push("auto");
    }
    for mode in modes {
        let o = run(mode);
        assert!(
            o.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let info =
            mipflow::ktx2::read_info(&tmp.path().join(mode).join("a.ktx2"), &Default::default())
                .unwrap();
        let stamp = String::from_utf8_lossy(info.key_value("mipflow.cook").unwrap()).into_owned();
        assert!(stamp.contains("encoder=intel_tex_2"), "{mode}: {stamp}");
    }
}
