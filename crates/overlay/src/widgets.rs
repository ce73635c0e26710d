//! The small panels and widgets: the events strip, the tour's caption, the mip-colour legend,
//! the streaming figures, the scale changes, pixels per level as text.

use egui::{Color32, RichText, Ui};
use mipflow::{Event, EventKind, EventLog};

use super::{COLLAPSED_WIDTH, PANEL_FILL, PanelInput, mib, swatch};
use mipflow::TextureInfo;

/// Windows narrower than this start with the panel collapsed (it would cover too much of them).
pub const COLLAPSE_BELOW: u32 = 800;

/// Colours of the mip-colour view (F2), levels 0..=7 (7: 7 and coarser), as `textured.wgsl`
/// draws them (mixed 70% into the lit colour).
pub const MIP_COLOURS: [Color32; 8] = [
    Color32::from_rgb(255, 26, 26),
    Color32::from_rgb(255, 153, 26),
    Color32::from_rgb(255, 255, 26),
    Color32::from_rgb(51, 255, 51),
    Color32::from_rgb(26, 230, 255),
    Color32::from_rgb(51, 77, 255),
    Color32::from_rgb(178, 51, 255),
    Color32::from_rgb(128, 128, 128),
];

/// Colour of an event's kind in the strip and the history's marks.
pub fn event_colour(kind: &EventKind) -> Color32 {
    match kind {
        EventKind::Budget { .. } => Color32::WHITE,
        EventKind::Scale { .. } => Color32::from_rgb(255, 230, 90),
        EventKind::Evictions { .. } => Color32::from_rgb(230, 150, 70),
        EventKind::Restreams { .. } => Color32::from_rgb(110, 210, 120),
        EventKind::OutOfMemory { .. } => Color32::from_rgb(255, 80, 200),
        _ => Color32::GRAY,
    }
}

/// A caption over the scene, at the top left of the window (the demo's tour acts): a title and
/// a line under it, on a dark band.
pub fn caption(ctx: &egui::Context, title: &str, line: &str) {
    egui::Area::new(egui::Id::unique("mipflow caption"))
        .anchor(egui::Align2::LEFT_TOP, [12.0, 12.0])
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::new()
                .fill(PANEL_FILL)
                .inner_margin(10.0)
                .corner_radius(4.0)
                .show(ui, |ui| {
                    // Clear of the overlay's panel on the right, whatever the window's width.
                    let room = ctx.content_rect().width() - COLLAPSED_WIDTH - 48.0;
                    ui.set_max_width(room.clamp(200.0, 560.0));
                    ui.label(
                        RichText::new(title)
                            .strong()
                            .size(17.0)
                            .color(Color32::WHITE),
                    );
                    ui.label(
                        RichText::new(line)
                            .size(14.0)
                            .color(Color32::from_gray(225)),
                    );
                });
        });
}

/// The events strip: the last `n` events, newest first, each in its kind's colour.
pub fn event_strip(ui: &mut Ui, events: &EventLog, n: usize) {
    let mut any = false;
    for e in events.iter().rev().take(n) {
        any = true;
        event_row(ui, e);
    }
    if !any {
        ui.label(RichText::new("no events yet").weak());
    }
}

fn event_row(ui: &mut Ui, e: &Event) {
    ui.horizontal_wrapped(|ui| {
        swatch(ui, event_colour(&e.kind));
        ui.label(RichText::new(format!("#{}", e.frame)).small().weak());
        ui.label(
            RichText::new(e.to_string())
                .small()
                .color(event_colour(&e.kind)),
        );
    });
}

/// The legend of the mip-colour view.
pub fn mip_legend(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("level:").small());
        for (l, c) in MIP_COLOURS.iter().enumerate() {
            swatch(ui, *c);
            let name = if l == 7 {
                "7+".to_owned()
            } else {
                l.to_string()
            };
            ui.label(RichText::new(name).small());
        }
    });
}

/// Pixels per wanted level as a short text: the (at most three) levels holding the most pixels,
/// each at least 2% of them, finest first ("L1 864 · L2 10.2k · L3 7.9k"); "hidden" when there
/// are none.
pub fn level_pixels_text(h: &[f32; 16]) -> String {
    let total: f32 = h.iter().sum();
    if total <= 0.0 {
        return "hidden".to_owned();
    }
    let fmt = |p: f32| {
        if p >= 1e6 {
            format!("{:.1}M", p / 1e6)
        } else if p >= 1e3 {
            format!("{:.1}k", p / 1e3)
        } else {
            format!("{p:.0}")
        }
    };
    let mut top: Vec<(usize, f32)> = h
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, p)| *p >= total * 0.02)
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    top.truncate(3);
    top.sort_by_key(|t| t.0);
    top.iter()
        .map(|(l, p)| format!("L{l} {}", fmt(*p)))
        .collect::<Vec<_>>()
        .join(" · ")
}

pub(crate) fn streaming(ui: &mut Ui, input: &PanelInput<'_>) {
    let stats = input.stats;
    let s = &stats.stream;
    egui::Grid::new("streaming").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row(
            "queue",
            format!("{} waiting, {} reads issued", s.pending, s.io_requests),
        );
        row(
            "uploads",
            format!(
                "{:.1} MB/s ({:.2} MB this frame)",
                input.history.upload_rate(1.0) / 1e6,
                s.uploaded_bytes as f64 / 1e6
            ),
        );
        row(
            "this frame",
            format!(
                "{} grows, {} shrinks, {} evictions",
                s.grows, s.shrinks, s.evictions
            ),
        );
        row(
            "grows in flight",
            format!(
                "{} cancelled ({} read), {} retargeted, {} reused",
                s.cancels, s.cancels_after_arrival, s.retargets, s.reused_reads
            ),
        );
        row(
            "wanted resident",
            format!(
                "{:.1} of {:.1} MiB (plan: {:.1})",
                mib(stats.resident_mip_bytes),
                mib(stats.wanted_mip_bytes),
                mib(stats.target_mip_bytes)
            ),
        );
        if stats.unmet_required > 0 {
            row(
                "required",
                format!(
                    "{} texture(s) whose required level the budget cannot hold",
                    stats.unmet_required
                ),
            );
        }
        row(
            "blur left",
            format!(
                "{:.0} pixel-octaves planned, {:.0} on screen",
                stats.quality_cost, stats.blur_pixel_octaves
            ),
        );
        row("planner", format!("{:.0} µs", s.planner_us));
        let gpu = stats
            .gpu_frame_ms
            .map_or_else(|| "-".to_owned(), |g| format!("{g:.2}"));
        row(
            "frame ms",
            format!("cpu {:.2}, gpu {gpu}", stats.cpu_frame_ms),
        );
        if s.io_errors > 0 || s.oom_events > 0 {
            row(
                "errors",
                format!("{} IO, {} out-of-memory", s.io_errors, s.oom_events),
            );
        }
    });
}

pub(crate) fn scale_changes(ui: &mut Ui, input: &PanelInput<'_>) {
    let stats = input.stats;
    ui.label(format!(
        "now {:.3} (memory allows {:.3})",
        stats.render_scale, stats.memory_scale
    ));
    if input.scale_changes.is_empty() {
        ui.label(RichText::new("no change yet").weak());
    }
    for c in input.scale_changes.iter().rev().take(6) {
        let (from, to) = (c.from.scale(), c.to.scale());
        let arrow = if to < from { "-> (down)" } else { "-> (up)" };
        ui.label(format!(
            "frame {}: {from:.3} {arrow} {to:.3}  {}",
            c.frame,
            c.reason.name()
        ));
    }
}

/// A control the texture table asks for (its "pin", "cap" and "keep" buttons).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TextureAction {
    /// Force the whole texture resident for [`PIN_SECONDS`]
    /// (`BudgetManager::force_resident(handle, 0, ..)`).
    Pin(mipflow::TextureHandle),
    /// Its level limits (`BudgetManager::set_level_limits(handle, finest, required)`).
    Limits {
        /// The texture.
        handle: mipflow::TextureHandle,
        /// Never finer than this level.
        finest: u8,
        /// Always at least this level resident.
        required: Option<u8>,
    },
}

/// How long the texture table's "pin" keeps a texture resident.
pub const PIN_SECONDS: f32 = 10.0;

/// A texture row's controls: "pin" (the whole chain resident for [`PIN_SECONDS`]), "≤Ln"
/// (never finer than level n: 0, 1, 2 or 3, a click moves it on) and "keep" (the whole chain
/// always resident). Returns the control clicked.
pub(crate) fn texture_controls(
    ui: &mut Ui,
    t: &TextureInfo,
    limits: &mut std::collections::HashMap<mipflow::TextureHandle, (u8, bool)>,
) -> Option<TextureAction> {
    let mut action = None;
    ui.horizontal(|ui| {
        let pin = ui.small_button("pin").on_hover_text(format!(
            "keep the whole chain resident for {PIN_SECONDS:.0} s: the budget makes room"
        ));
        if pin.clicked() {
            action = Some(TextureAction::Pin(t.handle));
        }
        let (finest, keep) = limits.get(&t.handle).copied().unwrap_or((0, false));
        let cap = ui
            .small_button(format!("≤L{finest}"))
            .on_hover_text("never finer than this level (a click moves it on: 0, 1, 2, 3)");
        let keep_clicked = ui
            .selectable_label(keep, "keep")
            .on_hover_text("always keep the whole chain resident (never stream it)")
            .clicked();
        if cap.clicked() || keep_clicked {
            let finest = if cap.clicked() {
                (finest + 1) % 4
            } else {
                finest
            };
            let keep = keep ^ keep_clicked;
            limits.insert(t.handle, (finest, keep));
            action = Some(TextureAction::Limits {
                handle: t.handle,
                finest,
                required: keep.then_some(0),
            });
        }
    });
    action
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_pixels_read_as_text() {
        let mut h = [0f32; 16];
        assert_eq!(level_pixels_text(&h), "hidden");
        h[1] = 864.0;
        h[2] = 10_200.0;
        h[3] = 7_900.0;
        h[9] = 100.0; // under 2%: left out
        assert_eq!(level_pixels_text(&h), "L1 864 · L2 10.2k · L3 7.9k");
        h[4] = 5_000.0; // four levels: the three with the most pixels
        assert_eq!(level_pixels_text(&h), "L2 10.2k · L3 7.9k · L4 5.0k");
    }
}
