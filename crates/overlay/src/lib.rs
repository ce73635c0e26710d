//! # mipflow-overlay
//!
//! mipflow's memory panels for any egui app: the ledger per category against the budget, 30 s of
//! history with the render scale, the streaming queue, the top textures, the driver allocator's
//! view beside the ledger's, budget and scale controls, and the last scale changes with reasons.
//!
//! The panels are functions over `&mut egui::Ui` and plain figures ([`PanelInput`]: a
//! [`mipflow::FrameStats`], a [`History`], and the texture table and [`mipflow::DriverMemory`]
//! that [`MemoryPanels`] asks for a few times a second). No winit, no egui context, no wgpu: a game
//! that runs egui shows them in its own windows; the `mipflow` demo's egui-wgpu/egui-winit layer
//! is a thin shell over the same panels.
//!
//! ```no_run
//! # fn ui(ui: &mut egui::Ui, renderer: &mipflow::Renderer, panels: &mut mipflow_overlay::MemoryPanels,
//! #       history: &mut mipflow_overlay::History, t: f64) {
//! history.record(t, renderer.stats());
//! if panels.wants_textures() {
//!     panels.set_textures(renderer.streamer().texture_infos());
//! }
//! if panels.wants_driver_memory() {
//!     panels.set_driver_memory(renderer.context().driver_memory());
//! }
//! let changes: Vec<_> = renderer.controller().history().copied().collect();
//! let input = mipflow_overlay::PanelInput::new(renderer.stats(), history, &changes);
//! let actions = panels.contents(ui, &input);
//! # let _ = actions;
//! # }
//! ```
#![warn(missing_docs)]

mod charges;
mod history;
mod widgets;

pub use charges::EguiCharges;
pub use history::{CAPACITY, History, SAMPLE_INTERVAL_S, Sample};
pub use widgets::{
    COLLAPSE_BELOW, MIP_COLOURS, PIN_SECONDS, TextureAction, caption, event_colour, event_strip,
    level_pixels_text, mip_legend,
};
use widgets::{scale_changes, streaming, texture_controls};

use std::time::Instant;

use egui::{Color32, RichText, Stroke, Ui};
use egui_plot::{Line, Plot, PlotPoints};
use mipflow::Category;
use mipflow::DriverMemory;
use mipflow::FrameStats;
use mipflow::ScaleChange;
use mipflow::TextureInfo;
use mipflow::{EventKind, EventLog};

/// Colour of each category, in [`Category::ALL`] order.
pub const CATEGORY_COLOURS: [Color32; 6] = [
    Color32::from_rgb(70, 130, 235),
    Color32::from_rgb(245, 150, 40),
    Color32::from_rgb(90, 195, 90),
    Color32::from_rgb(175, 95, 225),
    Color32::from_rgb(235, 80, 125),
    Color32::from_rgb(150, 150, 150),
];

/// The overlay panel's background (opaque enough to read, see-through enough to keep the scene).
pub const PANEL_FILL: Color32 = Color32::from_rgba_premultiplied(16, 18, 24, 235);

/// Width in points of the overlay's panel (on the right edge) for an output `width` points
/// wide: a third of the window, within 240..=440.
pub fn panel_width(width: u32) -> f32 {
    (width as f32 * 0.34).clamp(240.0, 440.0)
}

/// An output `pixels` wide in egui's points at `ppp` pixels a point: on a high-DPI display (2
/// pixels a point) a third of the window is a third of its points, not of its pixels.
fn points_wide(pixels: u32, ppp: f32) -> u32 {
    if ppp.is_finite() && ppp > 0.0 {
        (pixels as f32 / ppp) as u32
    } else {
        pixels
    }
}

/// Width of the collapsed panel.
const COLLAPSED_WIDTH: f32 = 150.0;

/// Rows in the texture table.
const TOP_N: usize = 14;

/// What the overlay asks the demo to change (applied after the frame).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OverlayActions {
    /// A new budget in bytes (the slider moved).
    pub budget: Option<u64>,
    /// A new scale range (min, max).
    pub scale_range: Option<(f32, f32)>,
    /// Colour surfaces by resident mip.
    pub debug_mips: bool,
    /// Colour surfaces by the level the view wants (what GPU feedback records).
    pub debug_wanted: bool,
    /// A control from the texture table, for the caller to apply to its budget manager.
    pub texture: Option<TextureAction>,
}

/// The figures the panels show, besides the texture table and the driver's view, which
/// [`MemoryPanels`] asks for when it wants them (they walk every live object).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct PanelInput<'a> {
    /// The last frame's figures ([`mipflow::Renderer::stats`] or the budget manager's).
    pub stats: &'a FrameStats,
    /// The sampled history.
    pub history: &'a History,
    /// The last scale changes, oldest first (the resolution controller's history).
    pub scale_changes: &'a [ScaleChange],
    /// Where the budget figure comes from (`Budget::source().describe()`).
    pub budget_source: &'a str,
    /// Who set it (command line, default, slider).
    pub budget_origin: &'a str,
    /// Scene loading progress: (received, total), while loading.
    pub loading: Option<(usize, usize)>,
    /// Smoothed frames per second (0: not shown).
    pub fps: f32,
    /// Output size in pixels.
    pub output: (u32, u32),
    /// A line of key hints under the title (the demo's keys); empty: none.
    pub hints: &'a str,
    /// What the budget did ([`mipflow::EventLog`]): the events strip and the history's
    /// marks. `None`: neither.
    pub events: Option<&'a EventLog>,
    /// Show the toggles of mipflow's debug views (surfaces coloured by the level sampled or
    /// wanted), true by default: false for a game's own renderer, which has no such views.
    pub debug_views: bool,
}

impl<'a> PanelInput<'a> {
    /// Input with these figures and nothing else (no loading bar, no fps, an unnamed budget).
    pub fn new(
        stats: &'a FrameStats,
        history: &'a History,
        scale_changes: &'a [ScaleChange],
    ) -> Self {
        Self {
            stats,
            history,
            scale_changes,
            budget_source: "",
            budget_origin: "",
            loading: None,
            fps: 0.0,
            output: (0, 0),
            hints: "",
            events: None,
            debug_views: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    Bytes,
    Wanted,
    Index,
}

/// The panels' own state: the table's sort, the cached texture table and driver figures, and the
/// controls' values.
#[derive(Debug)]
pub struct MemoryPanels {
    sort: SortBy,
    table: Vec<TextureInfo>,
    table_at: Option<Instant>,
    /// GPU feedback's output pixels per wanted level, by texture slot (empty: none given).
    level_pixels: Vec<Option<[f32; 16]>>,
    allocator: Option<DriverMemory>,
    allocator_at: Option<Instant>,
    budget_mib: f64,
    min_scale: f32,
    max_scale: f32,
    debug_mips: bool,
    debug_wanted: bool,
    /// The level limits set from the texture table: (finest level, whole chain kept).
    limits: std::collections::HashMap<mipflow::TextureHandle, (u8, bool)>,
    /// Only the title and the budget bar (a narrow panel); `None` until the first frame, which
    /// collapses it on windows narrower than [`COLLAPSE_BELOW`].
    collapsed: Option<bool>,
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

impl MemoryPanels {
    /// Panels whose budget slider starts at `budget` bytes and scale sliders at `scale_range`.
    pub fn new(budget: u64, scale_range: (f32, f32)) -> Self {
        Self {
            sort: SortBy::Bytes,
            table: Vec::new(),
            table_at: None,
            level_pixels: Vec::new(),
            allocator: None,
            allocator_at: None,
            budget_mib: mib(budget),
            min_scale: scale_range.0,
            max_scale: scale_range.1,
            debug_mips: false,
            debug_wanted: false,
            limits: std::collections::HashMap::new(),
            collapsed: None,
        }
    }

    /// Whether the "colour by resident mip" toggle is on.
    pub fn debug_mips(&self) -> bool {
        self.debug_mips
    }

    /// Sets the "colour by resident mip" toggle (the demo's F2 key).
    pub fn set_debug_mips(&mut self, on: bool) {
        self.debug_mips = on;
    }

    /// Whether the "colour by wanted level" toggle is on.
    pub fn debug_wanted(&self) -> bool {
        self.debug_wanted
    }

    /// Sets the "colour by wanted level" toggle (the demo's F2 key, second press).
    pub fn set_debug_wanted(&mut self, on: bool) {
        self.debug_wanted = on;
    }

    /// Whether the texture table is older than a quarter of a second (or was never given):
    /// then pass a fresh one to [`MemoryPanels::set_textures`]. Why not every frame: gathering
    /// it walks every texture and allocates.
    pub fn wants_textures(&self) -> bool {
        self.table_at
            .is_none_or(|t| t.elapsed().as_secs_f32() > 0.25)
    }

    /// A fresh texture table (`Streamer::texture_infos`).
    pub fn set_textures(&mut self, table: Vec<TextureInfo>) {
        self.table = table;
        self.sort_table();
        self.table_at = Some(Instant::now());
    }

    /// GPU feedback's output pixels per wanted level for each texture slot (the
    /// `Renderer::feedback().histogram(slot)` of every texture), given with the table: the table
    /// shows them per texture ("px by level"). Empty: the column says "-".
    /// `None` for a slot: no feedback for it (off, or not read back yet).
    pub fn set_level_pixels(&mut self, by_slot: Vec<Option<[f32; 16]>>) {
        self.level_pixels = by_slot;
    }

    /// Whether the driver's figures are older than half a second (or were never given).
    pub fn wants_driver_memory(&self) -> bool {
        self.allocator_at
            .is_none_or(|t| t.elapsed().as_secs_f32() > 0.5)
    }

    /// Fresh driver figures (`GpuContext::driver_memory`).
    pub fn set_driver_memory(&mut self, m: DriverMemory) {
        self.allocator = Some(m);
        self.allocator_at = Some(Instant::now());
    }

    /// The panels on the right edge of the screen (`panel_width` wide, scrolling), as the demo
    /// shows them.
    pub fn show_side_panel(&mut self, ui: &mut Ui, input: &PanelInput<'_>) -> OverlayActions {
        let mut actions = OverlayActions {
            debug_mips: self.debug_mips,
            ..OverlayActions::default()
        };
        let wide = points_wide(input.output.0, ui.ctx().pixels_per_point());
        let collapsed = *self
            .collapsed
            .get_or_insert(wide > 0 && wide < COLLAPSE_BELOW);
        let width = if collapsed {
            COLLAPSED_WIDTH
        } else {
            panel_width(wide)
        };
        egui::Panel::right("mipflow overlay")
            .resizable(false)
            .exact_size(width)
            .frame(egui::Frame::new().fill(PANEL_FILL).inner_margin(8.0))
            .show(ui, |ui| {
                let label = if collapsed { "«" } else { "»" };
                let hover = if collapsed {
                    "show the panels"
                } else {
                    "collapse the panel"
                };
                if ui.button(label).on_hover_text(hover).clicked() {
                    self.collapsed = Some(!collapsed);
                }
                if collapsed {
                    self.compact(ui, input);
                } else {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        self.contents_into(ui, input, &mut actions);
                    });
                }
            });
        actions.debug_mips = self.debug_mips;
        actions.debug_wanted = self.debug_wanted;
        actions
    }

    /// Whether the side panel is collapsed (title and budget bar only).
    pub fn collapsed(&self) -> bool {
        self.collapsed.unwrap_or(false)
    }

    /// Collapses or expands the side panel.
    pub fn set_collapsed(&mut self, on: bool) {
        self.collapsed = Some(on);
    }

    /// The collapsed panel: the total against the budget, the scale, the last event.
    fn compact(&self, ui: &mut Ui, input: &PanelInput<'_>) {
        let s = input.stats;
        ui.label(RichText::new("mipflow").strong());
        ui.label(format!(
            "{:.1} / {:.1} MiB",
            mib(s.ledger.total_bytes),
            mib(s.budget_bytes)
        ));
        stacked_bar(ui, s, 14.0);
        ui.label(format!("scale {:.2}", s.render_scale));
        if let Some(e) = input.events.and_then(|e| e.iter().next_back()) {
            ui.label(
                RichText::new(e.kind.name())
                    .small()
                    .color(event_colour(&e.kind)),
            );
        }
    }

    /// Every panel, one below the other, into `ui` (a game's own window or side panel).
    pub fn contents(&mut self, ui: &mut Ui, input: &PanelInput<'_>) -> OverlayActions {
        let mut actions = OverlayActions {
            debug_mips: self.debug_mips,
            ..OverlayActions::default()
        };
        self.contents_into(ui, input, &mut actions);
        actions.debug_mips = self.debug_mips;
        actions.debug_wanted = self.debug_wanted;
        actions
    }

    fn contents_into(&mut self, ui: &mut Ui, input: &PanelInput<'_>, actions: &mut OverlayActions) {
        let stats = input.stats;
        ui.horizontal(|ui| {
            ui.heading(RichText::new("mipflow").strong());
            if input.fps > 0.0 {
                ui.label(format!(
                    "{:.0} fps  {}x{}  scale {:.3}",
                    input.fps, input.output.0, input.output.1, stats.render_scale
                ));
            } else {
                ui.label(format!("scale {:.3}", stats.render_scale));
            }
        });
        if !input.hints.is_empty() {
            ui.label(RichText::new(input.hints).small().weak());
        }
        if let Some((done, total)) = input.loading {
            ui.add(
                egui::ProgressBar::new(done as f32 / total.max(1) as f32)
                    .text(format!("cooking and loading textures {done}/{total}")),
            );
        }
        ui.separator();
        self.budget_bar(ui, input);
        ui.separator();
        if let Some(events) = input.events {
            egui::CollapsingHeader::new("events")
                .default_open(true)
                .show(ui, |ui| event_strip(ui, events, 6));
        }
        egui::CollapsingHeader::new("history (30 s)")
            .default_open(true)
            .show(ui, |ui| history_plot(ui, input.history, input.events));
        egui::CollapsingHeader::new("streaming")
            .default_open(true)
            .show(ui, |ui| streaming(ui, input));
        egui::CollapsingHeader::new("textures")
            .default_open(true)
            .show(ui, |ui| self.texture_table(ui, actions));
        egui::CollapsingHeader::new("driver allocator vs ledger")
            .default_open(true)
            .show(ui, |ui| self.allocator(ui, stats));
        egui::CollapsingHeader::new("controls")
            .default_open(true)
            .show(ui, |ui| {
                self.controls(ui, stats.budget_bytes, input.debug_views, actions)
            });
        egui::CollapsingHeader::new("scale changes")
            .default_open(true)
            .show(ui, |ui| scale_changes(ui, input));
    }

    fn budget_bar(&self, ui: &mut Ui, input: &PanelInput<'_>) {
        let stats = input.stats;
        let snap = &stats.ledger;
        let budget = stats.budget_bytes.max(1);
        ui.label(format!(
            "VRAM {:.1} / {:.1} MiB  (frame peak {:.1})",
            mib(snap.total_bytes),
            mib(budget),
            mib(stats.frame_peak_bytes)
        ));
        stacked_bar(ui, stats, 22.0);
        egui::Grid::new("categories").num_columns(4).show(ui, |ui| {
            for (c, colour) in Category::ALL.iter().zip(CATEGORY_COLOURS) {
                let s = snap.by_category.get(*c);
                swatch(ui, colour);
                ui.label(c.name());
                ui.label(format!("{:.1} MiB", mib(s.bytes)));
                ui.label(
                    RichText::new(format!("peak {:.1}", mib(s.peak)))
                        .weak()
                        .small(),
                );
                ui.end_row();
            }
        });
        ui.label(format!(
            "budget: {} ({})",
            input.budget_source, input.budget_origin
        ));
        if let Some(cap) = stats.oom_cap_bytes {
            ui.colored_label(
                Color32::from_rgb(255, 170, 60),
                format!(
                    "the driver ran out of memory: effective budget {:.1} MiB (raised again \
                     after a quiet spell)",
                    mib(cap)
                ),
            );
        }
        if stats.budget_too_small {
            ui.colored_label(
                Color32::from_rgb(255, 90, 90),
                format!(
                    "budget below the floor: the scene needs {:.1} MiB at least",
                    mib(stats.floor_bytes)
                ),
            );
        }
    }

    fn texture_table(&mut self, ui: &mut Ui, actions: &mut OverlayActions) {
        ui.horizontal(|ui| {
            ui.label("sort by");
            for (s, name) in [
                (SortBy::Bytes, "bytes"),
                (SortBy::Wanted, "blur"),
                (SortBy::Index, "number"),
            ] {
                if ui.selectable_label(self.sort == s, name).clicked() {
                    self.sort = s;
                    self.sort_table();
                }
            }
        });
        egui::Grid::new("textures")
            .num_columns(8)
            .striped(true)
            .show(ui, |ui| {
                for h in [
                    "#",
                    "control",
                    "size",
                    "want",
                    "have",
                    "MiB",
                    "state",
                    "px by level",
                ] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for t in self.table.iter().take(TOP_N) {
                    ui.label(t.index.to_string());
                    if let Some(a) = texture_controls(ui, t, &mut self.limits) {
                        actions.texture = Some(a);
                    }
                    ui.label(format!("{}²", t.width));
                    let visible = t.wanted_level < f32::from(t.level_count);
                    ui.label(if visible {
                        format!("L{:.1}", t.wanted_level.max(0.0))
                    } else {
                        "-".to_owned()
                    });
                    ui.label(format!("L{}", t.resident_level));
                    ui.label(format!("{:.2}", mib(t.resident_bytes)));
                    let (text, colour) = texture_state(t);
                    ui.label(RichText::new(text).color(colour));
                    let px = self
                        .level_pixels
                        .get(t.index as usize)
                        .and_then(Option::as_ref);
                    ui.label(
                        RichText::new(px.map_or_else(|| "-".to_owned(), level_pixels_text)).small(),
                    );
                    ui.end_row();
                }
            });
        ui.label(RichText::new(format!("{} textures", self.table.len())).weak());
    }

    fn sort_table(&mut self) {
        match self.sort {
            SortBy::Bytes => self.table.sort_by(|a, b| {
                b.resident_bytes
                    .cmp(&a.resident_bytes)
                    .then(a.index.cmp(&b.index))
            }),
            SortBy::Wanted => self
                .table
                .sort_by(|a, b| blur(b).total_cmp(&blur(a)).then(a.index.cmp(&b.index))),
            SortBy::Index => self.table.sort_by_key(|t| t.index),
        }
    }

    fn allocator(&mut self, ui: &mut Ui, stats: &FrameStats) {
        let snap = &stats.ledger;
        let count: u64 = Category::ALL
            .iter()
            .map(|c| snap.by_category.get(*c).count)
            .sum();
        let a = self.allocator.unwrap_or_default();
        egui::Grid::new("allocator").num_columns(3).show(ui, |ui| {
            ui.label("");
            ui.label(RichText::new("driver").strong());
            ui.label(RichText::new("ledger").strong());
            ui.end_row();
            ui.label("allocated");
            ui.label(format!("{:.1} MiB", mib(a.allocated)));
            ui.label(format!("{:.1} MiB", mib(snap.total_bytes)));
            ui.end_row();
            ui.label("reserved");
            ui.label(format!("{:.1} MiB", mib(a.reserved)));
            ui.label("-");
            ui.end_row();
            ui.label("blocks / allocs");
            ui.label(format!("{} / {}", a.blocks, a.allocations));
            ui.label(format!("- / {count}"));
            ui.end_row();
            ui.label("wgpu tex / buf");
            ui.label(format!(
                "{:.1} / {:.1} MiB",
                a.texture_memory as f64 / 1048576.0,
                a.buffer_memory as f64 / 1048576.0
            ));
            ui.label(format!(
                "{:.1} / {:.1} MiB",
                mib(snap.by_category.textures.bytes + snap.by_category.render_targets.bytes),
                mib(snap.by_category.buffers.bytes + snap.by_category.staging.bytes)
            ));
            ui.end_row();
            // egui's own textures and buffers (and anything charged as other) are real wgpu
            // resources in the driver's figures above: shown here, not a gap in the account.
            ui.label("overlay + other");
            ui.label("(in tex / buf)");
            ui.label(format!(
                "{:.1} MiB",
                mib(snap.by_category.overlay.bytes + snap.by_category.other.bytes)
            ));
            ui.end_row();
        });
        if a.reserved == 0 {
            ui.label(RichText::new("(no allocator report on this backend)").weak());
        }
    }

    /// `budget`: the budget in force, which the slider shows (set by the slider, or by the
    /// caller: an automatic budget, a scripted one, a flag).
    fn controls(&mut self, ui: &mut Ui, budget: u64, debug: bool, actions: &mut OverlayActions) {
        if budget > 0 {
            self.budget_mib = mib(budget);
        }
        let b = ui.add(
            egui::Slider::new(&mut self.budget_mib, 16.0..=4096.0)
                // A budget outside the range (8 GiB, 8 MiB) is shown as it is: clamped at
                // once, it was also applied, overriding the caller's.
                .clamping(egui::SliderClamping::Edits)
                .logarithmic(true)
                .text("budget")
                .suffix(" MiB"),
        );
        if b.changed() {
            actions.budget = Some((self.budget_mib * 1048576.0) as u64);
        }
        // Rounded and clamped on an edit only: egui's default clamps (and rounds to the step)
        // every frame it is shown and reports that as a change, so a caller's range off the
        // 1/16 grid (`--min-scale 0.3`) was replaced by the slider's (0.3125) on the first
        // frame, unasked.
        let lo = ui.add(
            egui::Slider::new(&mut self.min_scale, 0.25..=1.0)
                .step_by(1.0 / 16.0)
                .clamping(egui::SliderClamping::Edits)
                .text("min scale"),
        );
        let hi = ui.add(
            egui::Slider::new(&mut self.max_scale, 0.25..=1.0)
                .step_by(1.0 / 16.0)
                .clamping(egui::SliderClamping::Edits)
                .text("max scale"),
        );
        if lo.changed() && self.min_scale > self.max_scale {
            self.max_scale = self.min_scale;
        }
        if hi.changed() && self.max_scale < self.min_scale {
            self.min_scale = self.max_scale;
        }
        if lo.changed() || hi.changed() {
            actions.scale_range = Some((self.min_scale, self.max_scale));
        }
        if !debug {
            return;
        }
        ui.checkbox(
            &mut self.debug_mips,
            "colour surfaces by the level sampled (F2)",
        );
        ui.checkbox(
            &mut self.debug_wanted,
            "colour surfaces by the level wanted, as feedback records it (F2 twice)",
        );
        if self.debug_mips || self.debug_wanted {
            mip_legend(ui);
        }
    }
}

/// Octaves of blur on screen weighted by nothing: resident level minus wanted level, 0 when sharp
/// or hidden. For sorting the table by "most blurry".
fn blur(t: &TextureInfo) -> f32 {
    if t.wanted_level >= f32::from(t.level_count) {
        return 0.0;
    }
    (f32::from(t.resident_level) - t.wanted_level.max(0.0).floor()).max(0.0)
}

fn texture_state(t: &TextureInfo) -> (String, Color32) {
    if let Some(e) = &t.error {
        let short: String = e.chars().take(24).collect();
        return (format!("error: {short}"), Color32::from_rgb(255, 90, 90));
    }
    if let Some(l) = t.in_flight_level {
        return (format!("-> L{l}"), Color32::from_rgb(120, 200, 255));
    }
    if t.wanted_level >= f32::from(t.level_count) {
        return ("hidden".to_owned(), Color32::GRAY);
    }
    let b = blur(t);
    if b > 0.0 {
        (
            format!("{b:.0} oct blurry"),
            Color32::from_rgb(255, 200, 80),
        )
    } else {
        ("sharp".to_owned(), Color32::from_rgb(120, 220, 120))
    }
}

/// The ledger's categories as one stacked bar, with the budget as a white mark.
fn stacked_bar(ui: &mut Ui, stats: &FrameStats, height: f32) {
    let snap = &stats.ledger;
    let budget = stats.budget_bytes.max(1);
    let w = ui.available_width();
    let (rect, _) = ui.allocate_exact_size(egui::vec2(w, height), egui::Sense::hover());
    let p = ui.painter();
    p.rect_filled(rect, 2.0, Color32::from_gray(40));
    let full = (budget.max(snap.total_bytes) as f64 * 1.08) as f32;
    let mut x = rect.left();
    for (c, colour) in Category::ALL.iter().zip(CATEGORY_COLOURS) {
        let b = snap.by_category.get(*c).bytes as f32;
        let dw = rect.width() * b / full;
        if dw > 0.0 {
            let seg = egui::Rect::from_min_max(
                egui::pos2(x, rect.top()),
                egui::pos2((x + dw).min(rect.right()), rect.bottom()),
            );
            p.rect_filled(seg, 0.0, colour);
        }
        x += dw;
    }
    let bx = rect.left() + rect.width() * budget as f32 / full;
    p.line_segment(
        [
            egui::pos2(bx, rect.top() - 3.0),
            egui::pos2(bx, rect.bottom() + 3.0),
        ],
        Stroke::new(2.5, Color32::WHITE),
    );
}

/// A small square of `colour` (the default fonts have no "■").
fn swatch(ui: &mut Ui, colour: Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, colour);
}

fn history_plot(ui: &mut Ui, h: &History, events: Option<&EventLog>) {
    let samples = h.samples();
    let now = samples.back().map_or(0.0, |s| s.t);
    // Stacked: each category's line is the running sum up to it, drawn from the top down so the
    // fills layer as bands.
    let mut stacked: Vec<Vec<[f64; 2]>> =
        vec![Vec::with_capacity(samples.len()); Category::ALL.len()];
    let mut budget = Vec::with_capacity(samples.len());
    let mut scale = Vec::with_capacity(samples.len());
    for s in samples {
        let x = s.t - now;
        let mut acc = 0u64;
        for (k, b) in s.bytes.iter().enumerate() {
            acc += b;
            stacked[k].push([x, mib(acc)]);
        }
        budget.push([x, mib(s.budget)]);
        scale.push([x, f64::from(s.scale)]);
    }
    // No legend: the category list above gives the colours, and a legend would cover the plot.
    Plot::new("memory history")
        .height(150.0)
        .include_x(-30.0)
        .include_x(0.0)
        .include_y(0.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .y_axis_label("MiB")
        .show(ui, |p| {
            for (k, pts) in stacked.into_iter().enumerate().rev() {
                p.line(
                    Line::new(Category::ALL[k].name(), PlotPoints::from(pts))
                        .color(CATEGORY_COLOURS[k])
                        .fill(0.0)
                        .fill_alpha(0.5),
                );
            }
            p.line(
                Line::new("budget", PlotPoints::from(budget))
                    .color(Color32::WHITE)
                    .style(egui_plot::LineStyle::dashed_dense()),
            );
            // Budget and scale changes and out-of-memory errors, marked where they happened.
            for e in events.into_iter().flat_map(|e| e.iter()) {
                if matches!(
                    e.kind,
                    EventKind::Evictions { .. } | EventKind::Restreams { .. }
                ) {
                    continue;
                }
                if let Some(t) = h.time_of_frame(e.frame) {
                    p.vline(
                        egui_plot::VLine::new(e.kind.name(), t - now)
                            .color(event_colour(&e.kind).gamma_multiply(0.8))
                            .width(1.0),
                    );
                }
            }
        });
    Plot::new("scale history")
        .height(70.0)
        .include_x(-30.0)
        .include_x(0.0)
        .include_y(0.0)
        .include_y(1.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .y_axis_label("scale")
        .show(ui, |p| {
            p.line(
                Line::new("render scale", PlotPoints::from(scale))
                    .color(Color32::from_rgb(255, 230, 90)),
            );
        });
}

#[cfg(test)]
mod tests;
