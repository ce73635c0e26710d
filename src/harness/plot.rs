//! The PNG plot of a budget test (feature `harness-plot`): a stacked area per category, the
//! budget line, the render scale on a second axis, the frames over budget marked in red, and the
//! events along the top. The plot `mipflow headless --plot` draws.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::RGBColor;

use super::report::Report;
use crate::{Category, Error, Result};

const MIB: f64 = 1024.0 * 1024.0;

fn colour(c: Category) -> RGBColor {
    match c {
        Category::Textures => RGBColor(66, 133, 244),
        Category::RenderTargets => RGBColor(251, 140, 0),
        Category::Buffers => RGBColor(67, 160, 71),
        Category::Staging => RGBColor(171, 71, 188),
        Category::Overlay => RGBColor(0, 172, 193),
        Category::Other => RGBColor(120, 120, 120),
    }
}

fn register_font() {
    use std::sync::Once;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The plot ships its font (egui's Hack), so no system font lookup is needed.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::HACK_REGULAR,
        );
    });
}

/// Draws `report` as a `width x height` PNG at `path`, written whole or not at all (into a
/// temporary file beside it, renamed over it once complete).
pub fn write_plot(report: &Report, path: &Path, width: u32, height: u32) -> Result<()> {
    let rgb = plot_rgb(report, path, width, height)?;
    let io = |source: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut png = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut png,
        &rgb,
        width,
        height,
        image::ExtendedColorType::Rgb8,
        image::ImageFormat::Png,
    )
    .map_err(|e| io(std::io::Error::other(e)))?;
    super::report::write_whole(path, png.get_ref()).map_err(io)
}

/// The plot of `report` drawn in memory: `width x height` RGB8 rows (`path` names it in
/// errors), for a caller that writes the image itself.
pub fn plot_rgb(report: &Report, path: &Path, width: u32, height: u32) -> Result<Vec<u8>> {
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    draw_plot(report, path, &mut rgb, width, height)?;
    Ok(rgb)
}

/// [`plot_rgb`]'s drawing, into `rgb` (`path` names it in errors).
fn draw_plot(report: &Report, path: &Path, rgb: &mut [u8], width: u32, height: u32) -> Result<()> {
    register_font();
    let err = |e: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let frames = report.frames.len().max(1) as u64;
    let top = report
        .frames
        .iter()
        .map(|f| f.total_bytes.max(f.budget_bytes))
        .max()
        .unwrap_or(1) as f64
        / MIB
        * 1.15;
    let root = BitMapBackend::with_buffer(rgb, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let title = format!(
        "{}: peak {:.1} MiB, {} frame(s) over budget, {}",
        report.scenario,
        report.peak_bytes as f64 / MIB,
        report.violations,
        report.verdict
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .right_y_label_area_size(56)
        .build_cartesian_2d(0u64..frames, 0.0..top.max(1.0))
        .map_err(|e| err(e.to_string()))?
        .set_secondary_coord(0u64..frames, 0.0..1.05f64);
    chart
        .configure_mesh()
        .x_desc("frame")
        .y_desc("VRAM (MiB)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_secondary_axes()
        .y_desc("render scale")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|e| err(e.to_string()))?;

    // Stacked areas: draw the cumulative sums from the top category down, so each band shows.
    let order = Category::ALL;
    for k in (0..order.len()).rev() {
        let cats = &order[..=k];
        let series = report.frames.iter().map(|f| {
            let sum: u64 = cats.iter().map(|c| *f.by_category.get(*c)).sum();
            (f.frame, sum as f64 / MIB)
        });
        let c = colour(order[k]);
        chart
            .draw_series(AreaSeries::new(series, 0.0, c.filled()).border_style(c))
            .map_err(|e| err(e.to_string()))?
            .label(order[k].name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            report
                .frames
                .iter()
                .map(|f| (f.frame, f.budget_bytes as f64 / MIB)),
            ShapeStyle::from(&BLACK).stroke_width(2),
        ))
        .map_err(|e| err(e.to_string()))?
        .label("budget")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(2)));
    // Events: budget and scale changes as vertical lines, eviction and re-streaming waves as
    // marks along the top, out-of-memory errors as magenta dots; acts as labels at their start.
    let ymax = top.max(1.0);
    let vline = |kind: &'static str, c: RGBColor| {
        report
            .events
            .iter()
            .filter(move |e| e.kind == kind)
            .map(move |e| {
                PathElement::new([(e.frame, 0.0), (e.frame, ymax * 0.93)], c.stroke_width(1))
            })
    };
    chart
        .draw_series(vline("budget", RGBColor(30, 30, 30)))
        .map_err(|e| err(e.to_string()))?
        .label("budget change")
        .legend(|(x, y)| PathElement::new([(x + 6, y - 6), (x + 6, y + 6)], RGBColor(30, 30, 30)));
    chart
        .draw_series(vline("scale", RGBColor(200, 30, 30)))
        .map_err(|e| err(e.to_string()))?
        .label("scale change")
        .legend(|(x, y)| PathElement::new([(x + 6, y - 6), (x + 6, y + 6)], RGBColor(200, 30, 30)));
    let wave = |kind: &'static str, at: f64, c: RGBColor| {
        report
            .events
            .iter()
            .filter(move |e| e.kind == kind)
            .map(move |e| {
                PathElement::new(
                    [
                        (e.frame, ymax * at),
                        (e.last_frame.max(e.frame + 1), ymax * at),
                    ],
                    c.stroke_width(5),
                )
            })
    };
    chart
        .draw_series(wave("evictions", 0.955, RGBColor(150, 90, 20)))
        .map_err(|e| err(e.to_string()))?
        .label("eviction wave")
        .legend(|(x, y)| {
            PathElement::new([(x, y), (x + 12, y)], RGBColor(150, 90, 20).stroke_width(5))
        });
    chart
        .draw_series(wave("restreams", 0.935, RGBColor(30, 140, 60)))
        .map_err(|e| err(e.to_string()))?
        .label("re-streaming wave")
        .legend(|(x, y)| {
            PathElement::new([(x, y), (x + 12, y)], RGBColor(30, 140, 60).stroke_width(5))
        });
    chart
        .draw_series(
            report
                .events
                .iter()
                .filter(|e| e.kind == "out_of_memory")
                .map(|e| Circle::new((e.frame, ymax * 0.91), 5, MAGENTA.filled())),
        )
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(report.acts.iter().enumerate().map(|(i, a)| {
            let title: String = a.title.chars().take(34).collect();
            Text::new(
                format!("{}. {title}", i + 1),
                (a.frame, ymax * 0.985),
                ("sans-serif", 12),
            )
        }))
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(
            report
                .frames
                .iter()
                .filter(|f| f.over_budget)
                .map(|f| Circle::new((f.frame, f.total_bytes as f64 / MIB), 4, RED.filled())),
        )
        .map_err(|e| err(e.to_string()))?
        .label("over budget")
        .legend(|(x, y)| Circle::new((x + 6, y), 4, RED.filled()));
    chart
        .draw_secondary_series(LineSeries::new(
            report.frames.iter().map(|f| (f.frame, f.render_scale)),
            ShapeStyle::from(&RGBColor(200, 30, 30)).stroke_width(2),
        ))
        .map_err(|e| err(e.to_string()))?
        .label("render scale (right axis)")
        .legend(|(x, y)| {
            PathElement::new([(x, y), (x + 12, y)], RGBColor(200, 30, 30).stroke_width(2))
        });
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::FrameRecord;

    #[test]
    fn plot_is_written_and_marks_violations() {
        let mut r = Report {
            scenario: "unit".into(),
            ..Default::default()
        };
        for i in 0..100u64 {
            let mut f = FrameRecord {
                frame: i,
                budget_bytes: 100 << 20,
                total_bytes: if i == 50 { 120 << 20 } else { 80 << 20 },
                render_scale: if i < 50 { 1.0 } else { 0.75 },
                ..Default::default()
            };
            f.by_category.textures = 60 << 20;
            f.by_category.render_targets = 20 << 20;
            f.over_budget = f.total_bytes > f.budget_bytes;
            r.frames.push(f);
        }
        r.events.push(crate::harness::EventRecord {
            frame: 30,
            last_frame: 30,
            kind: "budget".into(),
            text: "budget 120.0 -> 100.0 MiB".into(),
        });
        r.events.push(crate::harness::EventRecord {
            frame: 60,
            last_frame: 90,
            kind: "restreams".into(),
            text: "x".into(),
        });
        r.summarise();
        assert_eq!(r.violations, 1);
        assert_eq!(r.peak_bytes, 120 << 20);
        let path = std::env::temp_dir().join(format!("mipflow-plot-{}.png", std::process::id()));
        write_plot(&r, &path, 800, 450).unwrap();
        let img = image::open(&path).unwrap().to_rgba8();
        assert_eq!(img.dimensions(), (800, 450));
        // The textures band (blue) and a red violation marker are both drawn.
        let blue = img
            .pixels()
            .filter(|p| p[2] > 150 && p[0] < 170 && p[1] < 200)
            .count();
        let red = img
            .pixels()
            .filter(|p| p[0] > 200 && p[1] < 60 && p[2] < 60)
            .count();
        assert!(blue > 10_000, "{blue}");
        assert!(red > 20, "{red}");
        // The re-streaming wave's green mark.
        let green = img
            .pixels()
            .filter(|p| p[0] < 60 && p[1] > 120 && p[1] < 160 && p[2] > 40 && p[2] < 80)
            .count();
        assert!(green > 100, "{green}");
        let _ = std::fs::remove_file(path);
    }
}
