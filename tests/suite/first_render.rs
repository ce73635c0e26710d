//! The first render through the whole foundation: a procedural image cooked to BC7 with a full mip
//! chain, uploaded through the tracked constructors, drawn as a receding textured quad, read back and
//! compared with `tests/reference/first_render.png`.

use crate::common;

use mipflow::testing::render_textured_quad;
use mipflow_cook::compare::{Tolerance, check_snapshot, psnr_rgb};
use mipflow_cook::procedural::test_pattern;
use mipflow_cook::{CookOptions, Quality, cook_image};

/// Thresholds: the reference was rendered by lavapipe from the same BC7 data, so a rerun on
/// lavapipe gives an identical image (infinite PSNR). Other drivers differ in anisotropic filtering
/// and BC7 decode rounding; 30 dB PSNR and 0.90 SSIM accept those differences (a few levels of
/// 8-bit error on distant, heavily filtered texels) but fail a wrong mip, a missing texture, a
/// swapped channel or a mis-oriented quad, each of which costs well over 10 dB.
const TOL: Tolerance = Tolerance {
    min_psnr: 30.0,
    min_ssim: 0.90,
};

#[test]
fn bc7_textured_quad_matches_reference() {
    let Some(ctx) = common::gpu() else { return };
    let img = image::DynamicImage::ImageRgba8(test_pattern(256));
    let opts = CookOptions {
        quality: Quality::Fast,
        ..Default::default()
    };
    let tex = cook_image(&img, &opts).expect("cook");
    assert_eq!(tex.levels.len(), 9, "full chain 256 -> 1");
    let (w, h) = (320, 240);
    let rgba = render_textured_quad(&ctx, tex.format, tex.width, tex.height, &tex.levels, w, h)
        .expect("render");
    assert_eq!(rgba.len(), (w * h * 4) as usize);
    // Every resource was freed, and the driver raised no error.
    assert_eq!(ctx.ledger().total_bytes(), 0, "{:?}", ctx.leak_report());
    assert!(ctx.ledger().snapshot().peak_bytes > 0);
    assert!(ctx.take_uncaptured_errors().is_empty());

    // Not a clear colour: the quad covers the lower part of the image with many colours.
    let clear = [13u8, 17, 23]; // 0.05, 0.06, 0.09 in sRGB, roughly
    let covered = rgba
        .chunks_exact(4)
        .filter(|p| {
            p[0].abs_diff(clear[0]) > 8
                || p[1].abs_diff(clear[1]) > 8
                || p[2].abs_diff(clear[2]) > 8
        })
        .count();
    assert!(
        covered > (w * h / 4) as usize,
        "quad covers only {covered} pixels"
    );

    let result = check_snapshot(&common::reference_dir(), "first_render", &rgba, w, h, TOL);
    match result {
        Ok(r) => println!("first_render: PSNR {:.2} dB, SSIM {:.4}", r.psnr, r.ssim),
        Err(e) => panic!("{e}"),
    }
}

/// The image test can fail: the same scene with the texture mirrored (same colours, same mips,
/// different layout) is far from the reference.
#[test]
fn a_wrong_render_fails_the_comparison() {
    let Some(ctx) = common::gpu() else { return };
    let reference = common::reference_dir().join("first_render.png");
    let Ok(reference) = image::open(&reference) else {
        panic!("missing reference {}", reference.display());
    };
    let reference = reference.to_rgba8();
    let img = image::DynamicImage::ImageRgba8(image::imageops::flip_horizontal(&test_pattern(256)));
    let tex = cook_image(
        &img,
        &CookOptions {
            quality: Quality::Fast,
            ..Default::default()
        },
    )
    .unwrap();
    let rgba = render_textured_quad(
        &ctx,
        tex.format,
        tex.width,
        tex.height,
        &tex.levels,
        320,
        240,
    )
    .unwrap();
    let psnr = psnr_rgb(&rgba, reference.as_raw());
    assert!(
        psnr < TOL.min_psnr,
        "a mirrored texture scored {psnr:.2} dB"
    );
}
