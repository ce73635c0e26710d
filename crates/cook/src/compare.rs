//! Image metrics (PSNR, SSIM) and reference-image ("snapshot") checks.
//!
//! Shared by the test suite, the headless runner and the bench, and usable in a game's own CI.

use std::path::{Path, PathBuf};

/// PSNR in dB of the RGB channels of two RGBA8 images (alpha ignored), from the mean squared error
/// over all R, G and B samples: `10 log10(255^2 / MSE)`. Identical images give infinity.
///
/// Never panics: if the lengths differ, the common whole texels are compared; with no texel to
/// compare the result is NaN (which fails every `>=` threshold, so a wrong-sized image cannot pass
/// a quality check).
pub fn psnr_rgb(a: &[u8], b: &[u8]) -> f64 {
    let mut se = 0u64;
    let mut n = 0u64;
    for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        for c in 0..3 {
            let d = i64::from(pa[c]) - i64::from(pb[c]);
            se += (d * d) as u64;
        }
        n += 3;
    }
    if n == 0 {
        return f64::NAN;
    }
    if se == 0 {
        return f64::INFINITY;
    }
    let mse = se as f64 / n as f64;
    10.0 * (255.0 * 255.0 / mse).log10()
}

fn luma(img: &[u8], w: usize, x: usize, y: usize) -> f64 {
    let p = &img[(y * w + x) * 4..];
    // Rec. 709 weights on the stored (gamma-encoded) values, as SSIM is usually applied.
    0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2])
}

/// Mean SSIM of the luma of two RGBA8 `w x h` images, over 8x8 windows with a stride of 4
/// (Wang et al. 2004 constants, K1 = 0.01, K2 = 0.03, L = 255). 1.0 means identical. Images
/// smaller than 8x8 are compared as one window.
///
/// # Panics
/// If a buffer is not `w * h * 4` bytes.
pub fn ssim(a: &[u8], b: &[u8], w: u32, h: u32) -> f64 {
    let (w, h) = (w as usize, h as usize);
    assert_eq!(a.len(), w * h * 4, "ssim: image a has the wrong size");
    assert_eq!(b.len(), w * h * 4, "ssim: image b has the wrong size");
    const C1: f64 = (0.01 * 255.0) * (0.01 * 255.0);
    const C2: f64 = (0.03 * 255.0) * (0.03 * 255.0);
    let win = 8.min(w).min(h).max(1);
    let step = (win / 2).max(1);
    let mut total = 0.0;
    let mut count = 0usize;
    let mut y = 0;
    while y + win <= h {
        let mut x = 0;
        while x + win <= w {
            let (mut sa, mut sb, mut saa, mut sbb, mut sab) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for yy in y..y + win {
                for xx in x..x + win {
                    let la = luma(a, w, xx, yy);
                    let lb = luma(b, w, xx, yy);
                    sa += la;
                    sb += lb;
                    saa += la * la;
                    sbb += lb * lb;
                    sab += la * lb;
                }
            }
            let n = (win * win) as f64;
            let (ma, mb) = (sa / n, sb / n);
            let va = saa / n - ma * ma;
            let vb = sbb / n - mb * mb;
            let cov = sab / n - ma * mb;
            total += ((2.0 * ma * mb + C1) * (2.0 * cov + C2))
                / ((ma * ma + mb * mb + C1) * (va + vb + C2));
            count += 1;
            x += step;
        }
        y += step;
    }
    if count == 0 {
        1.0
    } else {
        total / count as f64
    }
}

/// Thresholds of a snapshot check. Both must hold.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Minimum RGB PSNR in dB.
    pub min_psnr: f64,
    /// Minimum mean SSIM.
    pub min_ssim: f64,
}

/// What a snapshot check found.
#[derive(Clone, Debug)]
pub struct SnapshotResult {
    /// PSNR against the reference (dB).
    pub psnr: f64,
    /// SSIM against the reference.
    pub ssim: f64,
    /// The reference file.
    pub reference: PathBuf,
}

/// Compares an RGBA8 image with the reference PNG `dir/name.png`.
///
/// - `UPDATE_SNAPSHOTS=1` in the environment writes the image as the new reference and passes.
/// - A missing reference FAILS (it is never written silently: in CI that would pass anything).
/// - On failure, `name-actual.png` and `name-diff.png` (absolute difference, amplified 4x) are
///   written next to the reference, and the error says where.
pub fn check_snapshot(
    dir: &Path,
    name: &str,
    rgba: &[u8],
    width: u32,
    height: u32,
    tol: Tolerance,
) -> Result<SnapshotResult, String> {
    let reference = dir.join(format!("{name}.png"));
    let actual_path = dir.join(format!("{name}-actual.png"));
    let diff_path = dir.join(format!("{name}-diff.png"));
    let save = |path: &Path, data: &[u8]| -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        image::save_buffer(path, data, width, height, image::ExtendedColorType::Rgba8)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        save(&reference, rgba)?;
        let _ = std::fs::remove_file(&actual_path);
        let _ = std::fs::remove_file(&diff_path);
        return Ok(SnapshotResult {
            psnr: f64::INFINITY,
            ssim: 1.0,
            reference,
        });
    }
    let expected = match image::open(&reference) {
        Ok(img) => img.to_rgba8(),
        Err(e) => {
            save(&actual_path, rgba)?;
            return Err(format!(
                "reference {} could not be read ({e}); the render was written to {}; \
                 run with UPDATE_SNAPSHOTS=1 to accept it",
                reference.display(),
                actual_path.display()
            ));
        }
    };
    if expected.dimensions() != (width, height) {
        save(&actual_path, rgba)?;
        return Err(format!(
            "reference {} is {:?}, the render is {width}x{height}",
            reference.display(),
            expected.dimensions()
        ));
    }
    let exp = expected.as_raw();
    let psnr = psnr_rgb(rgba, exp);
    let s = ssim(rgba, exp, width, height);
    if psnr >= tol.min_psnr && s >= tol.min_ssim {
        let _ = std::fs::remove_file(&actual_path);
        let _ = std::fs::remove_file(&diff_path);
        return Ok(SnapshotResult {
            psnr,
            ssim: s,
            reference,
        });
    }
    save(&actual_path, rgba)?;
    let diff: Vec<u8> = rgba
        .chunks_exact(4)
        .zip(exp.chunks_exact(4))
        .flat_map(|(p, q)| {
            let d = |c: usize| (p[c].abs_diff(q[c]) as u16 * 4).min(255) as u8;
            [d(0), d(1), d(2), 255]
        })
        .collect();
    save(&diff_path, &diff)?;
    Err(format!(
        "{name}: PSNR {psnr:.2} dB (min {}), SSIM {s:.4} (min {}); see {} and {}",
        tol.min_psnr,
        tol.min_ssim,
        actual_path.display(),
        diff_path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(w: u32, h: u32, seed: u32) -> Vec<u8> {
        let mut s = seed;
        (0..w * h * 4)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn psnr_known_values() {
        let a = vec![100u8; 64 * 4];
        assert_eq!(psnr_rgb(&a, &a), f64::INFINITY);
        let mut b = a.clone();
        for px in b.chunks_exact_mut(4) {
            px[0] += 10; // error 10 on one of three channels: MSE = 100/3
            px[3] = 0; // alpha ignored
        }
        let expected = 10.0 * (255.0f64 * 255.0 / (100.0 / 3.0)).log10();
        assert!((psnr_rgb(&a, &b) - expected).abs() < 1e-9);
    }

    #[test]
    fn ssim_orders_distortions() {
        let a = noise(32, 32, 1);
        assert!((ssim(&a, &a, 32, 32) - 1.0).abs() < 1e-12);
        let mut slight = a.clone();
        for v in slight.iter_mut().step_by(7) {
            *v = v.saturating_add(8);
        }
        let other = noise(32, 32, 2);
        let s1 = ssim(&a, &slight, 32, 32);
        let s2 = ssim(&a, &other, 32, 32);
        assert!(s1 > 0.9 && s1 < 1.0, "{s1}");
        assert!(s2 < 0.2, "{s2}");
    }

    #[test]
    fn snapshot_missing_reference_fails_and_writes_actual() {
        let dir = std::env::temp_dir().join(format!("mipflow-snap-{}", std::process::id()));
        let img = noise(8, 8, 3);
        let tol = Tolerance {
            min_psnr: 40.0,
            min_ssim: 0.99,
        };
        if std::env::var_os("UPDATE_SNAPSHOTS").is_none() {
            let err = check_snapshot(&dir, "missing", &img, 8, 8, tol).unwrap_err();
            assert!(err.contains("UPDATE_SNAPSHOTS"), "{err}");
            assert!(dir.join("missing-actual.png").exists());
            // a mismatching reference fails and writes a diff
            image::save_buffer(
                dir.join("other.png"),
                &noise(8, 8, 4),
                8,
                8,
                image::ExtendedColorType::Rgba8,
            )
            .unwrap();
            let err = check_snapshot(&dir, "other", &img, 8, 8, tol).unwrap_err();
            assert!(err.contains("PSNR"), "{err}");
            assert!(dir.join("other-diff.png").exists());
            // the same image passes
            image::save_buffer(
                dir.join("same.png"),
                &img,
                8,
                8,
                image::ExtendedColorType::Rgba8,
            )
            .unwrap();
            let ok = check_snapshot(&dir, "same", &img, 8, 8, tol).unwrap();
            assert_eq!(ok.psnr, f64::INFINITY);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
