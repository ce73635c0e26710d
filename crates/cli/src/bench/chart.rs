//! `bench.png`: the report as a chart.

use super::*;

pub(super) fn register_font() {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The chart ships its font (egui's Hack), as the headless plot does.
        let _ = plotters::style::register_font(
            "sans-serif",
            plotters::style::FontStyle::Normal,
            epaint_default_fonts::HACK_REGULAR,
        );
    });
}

/// Draws the chart: peak VRAM per mode (stacked by category), frame-time percentiles per mode,
/// per-frame VRAM of each mode (log scale, with (c)'s budget) and per-frame PSNR against (a).
pub fn write_chart(r: &BenchReport, path: &Path, width: u32, height: u32) -> Result<()> {
    // Drawn in memory, then written whole (a run killed mid-write leaves no truncated image).
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    draw_chart(r, path, &mut rgb, width, height)?;
    crate::write_image(path, width, height, &rgb)
}

/// [`write_chart`]'s drawing, into `rgb` (`path` names it in errors).
fn draw_chart(r: &BenchReport, path: &Path, rgb: &mut [u8], width: u32, height: u32) -> Result<()> {
    use plotters::prelude::*;
    register_font();
    let err = |e: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let mode_colour = [
        RGBColor(200, 60, 50),
        RGBColor(240, 150, 30),
        RGBColor(40, 120, 220),
        RGBColor(120, 120, 120),
    ];
    let cat_colour = |c: Category| match c {
        Category::Textures => RGBColor(66, 133, 244),
        Category::RenderTargets => RGBColor(251, 140, 0),
        Category::Buffers => RGBColor(67, 160, 71),
        Category::Staging => RGBColor(171, 71, 188),
        Category::Overlay => RGBColor(0, 172, 193),
        Category::Other => RGBColor(120, 120, 120),
    };
    let short = ["(a) RGBA8", "(b) BC7", "(c) mipflow", "(d) no feedback"];
    let root = BitMapBackend::with_buffer(rgb, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let panels = root.split_evenly((2, 2));
    let n = r.modes.len();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            short.get(i as usize).copied().unwrap_or("").to_owned()
        } else {
            String::new()
        }
    };

    // Peak VRAM, stacked by category.
    let top = r.modes.iter().map(|m| m.peak_bytes).max().unwrap_or(1) as f64 / MIB * 1.15;
    let mut chart = ChartBuilder::on(&panels[0])
        .caption("peak VRAM per mode (ledger), MiB", ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0..top.max(1.0))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let mut y0 = 0.0;
        for c in Category::ALL {
            // Stacked per-category peaks: an upper bound of the simultaneous peak, shown per
            // category; the total's own peak is the label.
            let v = *m.peak_by_category.get(c) as f64 / MIB;
            if v <= 0.0 {
                continue;
            }
            let x = i as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.3, y0), (x + 0.3, y0 + v)],
                    cat_colour(c).filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
            y0 += v;
        }
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{:.1}", m.peak_bytes as f64 / MIB),
                (i as f64 - 0.15, y0 + top * 0.03),
                ("sans-serif", 13),
            )))
            .map_err(|e| err(e.to_string()))?;
    }
    for c in Category::ALL {
        if r.modes.iter().all(|m| *m.peak_by_category.get(c) == 0) {
            continue;
        }
        let col = cat_colour(c);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (0.0, 0.0)],
                col.filled(),
            )))
            .map_err(|e| err(e.to_string()))?
            .label(c.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    // Frame-time percentiles.
    let top = r.modes.iter().map(|m| m.frame_ms.p99).fold(0.0, f64::max) * 1.2;
    let mut chart = ChartBuilder::on(&panels[1])
        .caption(
            "frame time (render + wait), ms: p50 / p95 / p99",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0..top.max(0.1))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let x = i as f64;
        for (k, v) in [m.frame_ms.p50, m.frame_ms.p95, m.frame_ms.p99]
            .into_iter()
            .enumerate()
        {
            let x0 = x - 0.33 + k as f64 * 0.22;
            let col = mode_colour[i % 4].mix(1.0 - 0.25 * k as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x0 + 0.2, v)],
                    col.filled(),
                )))
                .map_err(|e| err(e.to_string()))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{v:.1}"),
                    (x0, v + top * 0.02),
                    ("sans-serif", 11),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
    }

    // Per-frame VRAM (log scale).
    let frames = r
        .modes
        .iter()
        .map(|m| m.frames.len())
        .max()
        .unwrap_or(1)
        .max(2) as u64;
    let all = r.modes.iter().flat_map(|m| {
        m.frames
            .iter()
            .flat_map(|f| [f.total_bytes, f.budget_bytes.unwrap_or(f.total_bytes)])
    });
    let (lo, hi) = all.fold((u64::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (
        (lo.max(1) as f64 / MIB) * 0.7,
        (hi.max(1) as f64 / MIB) * 1.5,
    );
    let mut chart = ChartBuilder::on(&panels[2])
        .caption(
            "VRAM per frame (in-frame peak), MiB, log scale",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0u64..frames, (lo.min(hi * 0.5)..hi).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, m) in r.modes.iter().enumerate() {
        let col = mode_colour[i % 4];
        chart
            .draw_series(LineSeries::new(
                m.frames
                    .iter()
                    .map(|f| (f.frame, f.total_bytes as f64 / MIB)),
                col.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(short[i % 4])
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], col.stroke_width(2)));
    }
    if let Some(c) = r.modes.get(2)
        && c.frames.iter().any(|f| f.budget_bytes.is_some())
    {
        chart
            .draw_series(DashedLineSeries::new(
                c.frames
                    .iter()
                    .filter_map(|f| f.budget_bytes.map(|b| (f.frame, b as f64 / MIB))),
                6,
                4,
                BLACK.stroke_width(1),
            ))
            .map_err(|e| err(e.to_string()))?
            .label("(c) budget")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    // Per-frame PSNR against (a).
    let mut chart = ChartBuilder::on(&panels[3])
        .caption(
            format!("PSNR against (a), dB (capped at {PSNR_CAP_DB:.0})"),
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0u64..frames, 10.0..(PSNR_CAP_DB + 5.0))
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(DashedLineSeries::new(
            [(0, 40.0), (frames, 40.0)],
            6,
            4,
            BLACK.stroke_width(1),
        ))
        .map_err(|e| err(e.to_string()))?
        .label("40 dB goal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(1)));
    for (i, m) in r.modes.iter().enumerate().skip(1) {
        let col = mode_colour[i % 4];
        chart
            .draw_series(LineSeries::new(
                m.frames
                    .iter()
                    .filter_map(|f| f.psnr_db.map(|p| (f.frame, p.max(10.0)))),
                col.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(short[i % 4])
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], col.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
