//! `mipflow bench --sweep`: the smallest budget at which every compared frame of the tour stays
//! at or above 40 dB against (a), per demand setting (feedback off, feedback on, feedback with
//! histogram pricing), and pop-in after a camera cut.
//!
//! Each point is a fresh streamed run of the whole tour at one budget, a fraction of (a)'s peak
//! VRAM (`1/N` for each `N` of `--sweep`), compared frame by frame with (a)'s pictures from the
//! main run. Written into `bench.json` (`sweep`), `bench.md` and `sweep.png`.

use super::*;
use mipflow::FeedbackConfig;

/// The demand settings swept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepDemand {
    /// Feedback off: the CPU estimate alone (mode (d)).
    FeedbackOff,
    /// The default: feedback says which textures were seen (mode (c)).
    FeedbackOn,
    /// Feedback on with [`FeedbackConfig::histograms`]: each level priced by its pixels.
    Histograms,
}

impl SweepDemand {
    /// The three, in table order.
    pub const ALL: [SweepDemand; 3] = [
        SweepDemand::FeedbackOff,
        SweepDemand::FeedbackOn,
        SweepDemand::Histograms,
    ];

    /// Column title.
    pub fn title(self) -> &'static str {
        match self {
            SweepDemand::FeedbackOff => "feedback off",
            SweepDemand::FeedbackOn => "feedback on (default)",
            SweepDemand::Histograms => "feedback + histograms",
        }
    }

    fn config(self) -> FeedbackConfig {
        match self {
            SweepDemand::FeedbackOff => FeedbackConfig::off(),
            SweepDemand::FeedbackOn => FeedbackConfig::default(),
            SweepDemand::Histograms => {
                let mut f = FeedbackConfig::default();
                f.histograms = true;
                f
            }
        }
    }
}

/// One run of the tour at one budget with one demand setting.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The demand setting.
    pub demand: Option<SweepDemand>,
    /// `N` of the budget `1/N` of (a)'s peak VRAM.
    pub denominator: u32,
    /// The budget, bytes.
    pub budget_bytes: u64,
    /// The ledger's peak over the run.
    pub peak_bytes: u64,
    /// Worst PSNR against (a) over the compared frames, dB.
    pub psnr_min_db: f64,
    /// Mean PSNR against (a), dB.
    pub psnr_mean_db: f64,
    /// Compared frames under 40 dB.
    pub frames_under_40db: u64,
    /// Frames whose in-frame peak passed the budget.
    pub frames_over_budget: u64,
    /// Lowest render scale.
    pub render_scale_min: f64,
}

/// Per demand setting: the smallest budget of the sweep with no compared frame under 40 dB.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepBest {
    /// The demand setting.
    pub demand: Option<SweepDemand>,
    /// `N` of that budget (`1/N` of (a)'s peak VRAM); `None` when no budget of the sweep held.
    pub denominator: Option<u32>,
    /// That budget, bytes.
    pub budget_bytes: Option<u64>,
}

/// Pop-in after a camera cut, per demand setting, at the main run's budget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PopIn {
    /// The demand setting.
    pub demand: Option<SweepDemand>,
    /// Frames rendered after the cut until every wanted level was resident (1: the first frame
    /// after the cut had them all); `None` when that did not happen within the frames tried.
    pub frames_to_all_wanted: Option<u64>,
    /// Frames tried.
    pub frames_tried: u64,
    /// PSNR against (a) of the first frame after the cut, dB.
    pub first_frame_psnr_db: f64,
}

/// The whole sweep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// (a)'s peak VRAM, the budgets' base.
    pub rgba8_peak_bytes: u64,
    /// Every point, by demand setting then budget (largest first).
    pub points: Vec<SweepPoint>,
    /// The smallest budget that held 40 dB, per demand setting.
    pub best: Vec<SweepBest>,
    /// Pop-in after a cut, per demand setting.
    pub popin: Vec<PopIn>,
}

/// Parses `--sweep 8,16,32`: denominators of (a)'s peak VRAM, each 2 to 4096.
pub fn parse_denominators(s: &str) -> std::result::Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let n: u32 = part
            .trim()
            .parse()
            .map_err(|_| format!("{part:?}: expected a whole number, 2 to 4096"))?;
        if !(2..=4096).contains(&n) {
            return Err(format!("{n}: expected 2 to 4096"));
        }
        v.push(n);
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// (a)'s pictures of the compared frames, kept from the main run.
pub(super) type References = Vec<(u64, Vec<u8>)>;

/// Runs the sweep and the pop-in measurement.
pub(super) fn run_sweep(
    opts: &BenchOptions,
    scene: &Prepared,
    references: &References,
    rgba8_peak: u64,
    main_budget: u64,
    camera_at: &dyn Fn(u64) -> Camera,
    progress: &dyn Fn(&str),
) -> Result<Sweep> {
    let sc = &opts.scenario;
    let mut sweep = Sweep {
        rgba8_peak_bytes: rgba8_peak,
        ..Sweep::default()
    };
    for demand in SweepDemand::ALL {
        let mut best = SweepBest {
            demand: Some(demand),
            ..SweepBest::default()
        };
        for &n in &opts.sweep {
            let budget = (rgba8_peak / u64::from(n)).max(1);
            progress(&format!(
                "sweep: {}, 1/{n} of (a) = {}",
                demand.title(),
                mipflow::format_bytes(budget)
            ));
            let point = sweep_point(opts, scene, references, demand, n, budget, camera_at)?;
            if point.frames_under_40db == 0 && point.frames_over_budget == 0 {
                best.denominator = Some(n);
                best.budget_bytes = Some(budget);
            }
            sweep.points.push(point);
        }
        sweep.best.push(best);
    }
    // Pop-in: the tour up to its middle, then a cut back to frame 0's view (another end of the
    // scene), then as many frames as it takes.
    let cut_from = sc.frames / 2;
    let tries = 60;
    for demand in SweepDemand::ALL {
        progress(&format!("pop-in after a cut: {}", demand.title()));
        let (mut m, _) =
            ModeRun::with_feedback(Mode::Mipflow, opts, main_budget, scene, demand.config())?;
        for f in 0..=cut_from {
            m.frame(f, camera_at(f), main_budget)?;
        }
        let reference = references.first().map(|(_, img)| img);
        let mut p = PopIn {
            demand: Some(demand),
            frames_tried: tries,
            ..PopIn::default()
        };
        for k in 1..=tries {
            m.frame(cut_from + k, camera_at(0), main_budget)?;
            if k == 1
                && let Some(reference) = reference
            {
                p.first_frame_psnr_db = capped_psnr(reference, &m.read_back()?);
            }
            let last = m
                .summary
                .frames
                .last()
                .map(|f| (f.resident_mip_bytes, f.wanted_mip_bytes));
            if last.is_some_and(|(resident, wanted)| resident >= wanted) {
                p.frames_to_all_wanted = Some(k);
                break;
            }
        }
        sweep.popin.push(p);
    }
    Ok(sweep)
}

fn sweep_point(
    opts: &BenchOptions,
    scene: &Prepared,
    references: &References,
    demand: SweepDemand,
    n: u32,
    budget: u64,
    camera_at: &dyn Fn(u64) -> Camera,
) -> Result<SweepPoint> {
    let sc = &opts.scenario;
    let (mut m, _) = ModeRun::with_feedback(Mode::Mipflow, opts, budget, scene, demand.config())?;
    if opts.prefetch {
        m.r.prefetch(
            (sc.size[0], sc.size[1]),
            &camera_at(0),
            std::time::Duration::from_secs(10),
        )?;
    }
    let mut refs = references.iter().peekable();
    let (mut min, mut sum, mut count, mut under) = (f64::INFINITY, 0.0, 0u64, 0u64);
    for frame in 0..sc.frames {
        m.frame(frame, camera_at(frame), budget)?;
        if let Some((_, reference)) = refs.next_if(|(f, _)| *f == frame) {
            let p = capped_psnr(reference, &m.read_back()?);
            min = min.min(p);
            sum += p;
            count += 1;
            under += u64::from(p < 40.0);
        }
    }
    let s = m.finish();
    Ok(SweepPoint {
        demand: Some(demand),
        denominator: n,
        budget_bytes: budget,
        peak_bytes: s.peak_bytes,
        psnr_min_db: if count > 0 { min } else { 0.0 },
        psnr_mean_db: if count > 0 { sum / count as f64 } else { 0.0 },
        frames_under_40db: under,
        frames_over_budget: s.frames_over_budget,
        render_scale_min: s.render_scale_min,
    })
}

/// `sweep.png`: worst PSNR against the budget (as 1/N of (a)'s VRAM), one line per demand
/// setting, the 40 dB line marked.
pub fn write_sweep_chart(s: &Sweep, path: &Path) -> Result<()> {
    // Drawn in memory, then written whole (a run killed mid-write leaves no truncated image).
    let mut rgb = vec![0u8; 900 * 520 * 3];
    draw_sweep_chart(s, path, &mut rgb)?;
    crate::write_image(path, 900, 520, &rgb)
}

/// [`write_sweep_chart`]'s drawing, into `rgb` (`path` names it in errors).
fn draw_sweep_chart(s: &Sweep, path: &Path, rgb: &mut [u8]) -> Result<()> {
    use plotters::prelude::*;
    chart::register_font();
    let err = |e: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let root = BitMapBackend::with_buffer(rgb, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let max_n = s
        .points
        .iter()
        .map(|p| p.denominator)
        .max()
        .unwrap_or(64)
        .max(4);
    let min_n = s
        .points
        .iter()
        .map(|p| p.denominator)
        .min()
        .unwrap_or(2)
        .max(2);
    let lo = s
        .points
        .iter()
        .map(|p| p.psnr_min_db)
        .fold(40.0f64, f64::min)
        .floor()
        - 2.0;
    let hi = s
        .points
        .iter()
        .map(|p| p.psnr_min_db)
        .fold(45.0f64, f64::max)
        .min(PSNR_CAP_DB)
        + 2.0;
    let pad = f64::from(max_n - min_n).max(4.0) * 0.05;
    let (x0, x1) = (f64::from(min_n) - pad, f64::from(max_n) + pad);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "worst PSNR of the tour against (a), by budget",
            ("sans-serif", 18),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(x0..x1, lo..hi)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("budget, as 1/N of (a)'s peak VRAM (smaller to the right)")
        .y_desc("min PSNR, dB")
        .x_labels(12)
        .x_label_formatter(&|x| format!("1/{x:.0}"))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    chart
        .draw_series(LineSeries::new([(x0, 40.0), (x1, 40.0)], BLACK.mix(0.4)))
        .map_err(|e| err(e.to_string()))?
        .label("40 dB")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.4)));
    let colours = [
        RGBColor(120, 120, 120),
        RGBColor(40, 120, 220),
        RGBColor(220, 100, 30),
    ];
    for (demand, colour) in SweepDemand::ALL.into_iter().zip(colours) {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.demand == Some(demand))
            .map(|p| (f64::from(p.denominator), p.psnr_min_db))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(demand.title())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 4, colour.filled())))
            .map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}

/// The sweep's section of `bench.md`.
pub fn sweep_markdown(s: &Sweep) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Budget sweep (every compared frame against (a); budgets as 1/N of (a)'s peak VRAM, {:.1} MiB)\n",
        s.rgba8_peak_bytes as f64 / MIB
    );
    let _ = writeln!(
        out,
        "| demand | budget | MiB | peak MiB | min PSNR dB | mean PSNR dB | frames < 40 dB | over budget | min scale |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    for p in &s.points {
        let _ = writeln!(
            out,
            "| {} | 1/{} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {:.3} |",
            p.demand.map_or("?", SweepDemand::title),
            p.denominator,
            p.budget_bytes as f64 / MIB,
            p.peak_bytes as f64 / MIB,
            p.psnr_min_db,
            p.psnr_mean_db,
            p.frames_under_40db,
            p.frames_over_budget,
            p.render_scale_min,
        );
    }
    let _ = writeln!(
        out,
        "\n| demand | smallest budget with every frame >= 40 dB | pop-in after a cut (frames) | first frame after the cut, dB |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for demand in SweepDemand::ALL {
        let best = s.best.iter().find(|b| b.demand == Some(demand));
        let pop = s.popin.iter().find(|p| p.demand == Some(demand));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            demand.title(),
            best.and_then(|b| b.denominator.zip(b.budget_bytes)).map_or(
                "none of the sweep".to_owned(),
                |(n, b)| format!("1/{n} ({:.2} MiB)", b as f64 / MIB)
            ),
            pop.map_or("-".to_owned(), |p| p
                .frames_to_all_wanted
                .map_or(format!("> {}", p.frames_tried), |f| f.to_string())),
            pop.map_or("-".to_owned(), |p| format!("{:.2}", p.first_frame_psnr_db)),
        );
    }
    out
}
