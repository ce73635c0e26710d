//! The egui memory overlay (feature `overlay`): what the ledger, the planner, the streamer and the
//! resolution controller are doing, and controls to push them around.
//!
//! It is drawn after [`crate::Renderer::render`], into the same output texture, at native
//! resolution (the scene may be rendered at a lower scale; the overlay never is).
//!
//! **Its GPU memory is charged to [`Category::Overlay`].** egui-wgpu creates its textures and
//! buffers itself, outside mipflow's tracked constructors, so the overlay mirrors them:
//! - textures exactly: every full `textures_delta.set` entry creates a `w x h` `Rgba8Unorm`
//!   texture (4 bytes a texel, one level) for that id, replacing the previous one, and every
//!   `free` destroys it; partial updates write into the existing texture;
//! - buffers as an **estimate**: the vertex and index buffers grow by egui-wgpu's own rule
//!   (double, or the size needed if larger, from 1024 vertices and 3072 indices) and never
//!   shrink, which the overlay replays from the paint jobs' vertex and index counts; plus its
//!   small uniform buffers. It is an estimate because egui-wgpu does not expose its buffers'
//!   sizes, and its per-frame upload staging (`Queue::write_buffer_with`) lives inside wgpu.
//!
//! The overlay allocates on the CPU each frame it is shown (egui builds its shapes and meshes,
//! the plot its point lists, the table its rows): that is egui's model. Nothing is allocated
//! when it is hidden. The texture table and the allocator report are refreshed a few times a
//! second, not every frame, since both walk every live object.

use std::collections::HashMap;
use std::time::Instant;

use egui::epaint::{ClippedPrimitive, Primitive};
use egui::{Color32, RichText, Stroke, Ui};
use egui_plot::{Line, Plot, PlotPoints};

use super::history::History;
use crate::budget::ledger::Charge;
use crate::budget::{Category, Ledger};
use crate::stream::TextureInfo;
use crate::{Renderer, Result};

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

/// Width in pixels of the overlay's panel (on the right edge) for an output `width` wide, at one
/// pixel per point: a third of the window, within 240..=440.
pub fn panel_width(width: u32) -> f32 {
    (width as f32 * 0.34).clamp(240.0, 440.0)
}

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
}

/// What the overlay shows besides the renderer's own state.
#[derive(Clone, Copy, Debug)]
pub struct OverlayInput<'a> {
    /// The renderer (read only; changes come back as [`OverlayActions`]).
    pub renderer: &'a Renderer,
    /// The sampled history.
    pub history: &'a History,
    /// Scene loading progress: (received, total), while loading.
    pub loading: Option<(usize, usize)>,
    /// Smoothed frames per second.
    pub fps: f32,
    /// Output size in pixels.
    pub output: (u32, u32),
    /// Where the budget figure was set (command line, default, slider).
    pub budget_origin: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    Bytes,
    Wanted,
    Index,
}

#[derive(Clone, Copy, Debug, Default)]
struct AllocatorView {
    allocated: u64,
    reserved: u64,
    blocks: usize,
    allocations: usize,
    texture_memory: i64,
    buffer_memory: i64,
}

/// The panels' own state.
#[derive(Debug)]
struct Panels {
    sort: SortBy,
    table: Vec<TextureInfo>,
    table_at: Option<Instant>,
    allocator: Option<AllocatorView>,
    allocator_at: Option<Instant>,
    budget_mib: f64,
    min_scale: f32,
    max_scale: f32,
    debug_mips: bool,
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// The overlay: egui's context, its winit input state, its wgpu renderer, and the ledger charges
/// for what that renderer allocated.
pub struct Overlay {
    ctx: egui::Context,
    state: egui_winit::State,
    renderer: egui_wgpu::Renderer,
    ledger: Ledger,
    texture_charges: HashMap<egui::TextureId, Charge>,
    vertex_capacity: u64,
    index_capacity: u64,
    buffer_charge: Option<(u64, Charge)>,
    panels: Panels,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("textures", &self.texture_charges.len())
            .field("vertex_capacity", &self.vertex_capacity)
            .field("index_capacity", &self.index_capacity)
            .finish()
    }
}

/// egui-wgpu's starting buffer capacities (`VERTEX_BUFFER_START_CAPACITY`,
/// `INDEX_BUFFER_START_CAPACITY` in its renderer.rs, 0.37).
const VERTEX_START: u64 = (std::mem::size_of::<egui::epaint::Vertex>() * 1024) as u64;
const INDEX_START: u64 = (std::mem::size_of::<u32>() * 1024 * 3) as u64;
/// Its uniform buffer (16 bytes) and six texture-flag buffers (a `u32` each, counted at the
/// 16 bytes a uniform binding occupies).
const FIXED_BUFFERS: u64 = 16 + 6 * 16;

impl Overlay {
    /// An overlay for `window`, drawing into views of `format` (egui prefers a non-sRGB view: it
    /// blends in gamma space, as its colours are specified), charging `ledger`.
    pub fn new(
        window: &winit::window::Window,
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
        ledger: Ledger,
        budget: u64,
        scale_range: (f32, f32),
    ) -> Self {
        let ctx = egui::Context::default();
        ctx.set_visuals(egui::Visuals::dark());
        let max_side = device.limits().max_texture_dimension_2d as usize;
        let state = egui_winit::State::new(
            ctx.clone(),
            egui::ViewportId::ROOT,
            window,
            Some(window.scale_factor() as f32),
            window.theme(),
            Some(max_side),
        );
        let renderer =
            egui_wgpu::Renderer::new(device, format, egui_wgpu::RendererOptions::default());
        let mut o = Self {
            ctx,
            state,
            renderer,
            ledger,
            texture_charges: HashMap::new(),
            vertex_capacity: VERTEX_START,
            index_capacity: INDEX_START,
            buffer_charge: None,
            panels: Panels {
                sort: SortBy::Bytes,
                table: Vec::new(),
                table_at: None,
                allocator: None,
                allocator_at: None,
                budget_mib: mib(budget),
                min_scale: scale_range.0,
                max_scale: scale_range.1,
                debug_mips: false,
            },
        };
        o.charge_buffers();
        o
    }

    /// Passes a window event to egui. True when egui used it (the camera should ignore it).
    pub fn on_window_event(
        &mut self,
        window: &winit::window::Window,
        event: &winit::event::WindowEvent,
    ) -> bool {
        self.state.on_window_event(window, event).consumed
    }

    /// Whether the pointer is over the overlay or egui is dragging something.
    pub fn wants_pointer(&self) -> bool {
        self.ctx.egui_wants_pointer_input()
    }

    /// Whether egui has keyboard focus (a text field).
    pub fn wants_keyboard(&self) -> bool {
        self.ctx.egui_wants_keyboard_input()
    }

    /// Whether the "colour by resident mip" toggle is on.
    pub fn debug_mips(&self) -> bool {
        self.panels.debug_mips
    }

    /// Sets the "colour by resident mip" toggle (the F2 key).
    pub fn set_debug_mips(&mut self, on: bool) {
        self.panels.debug_mips = on;
    }

    /// Builds the panels, then draws them into `target` (`size` pixels) and submits.
    pub fn draw(
        &mut self,
        window: &winit::window::Window,
        target: &wgpu::TextureView,
        size: (u32, u32),
        input: &OverlayInput<'_>,
    ) -> Result<OverlayActions> {
        let raw = self.state.take_egui_input(window);
        let mut actions = OverlayActions::default();
        let panels = &mut self.panels;
        let mut full = self.ctx.run_ui(raw, |ui| {
            actions = panels.show(ui, input);
        });
        self.state
            .handle_platform_output(window, full.platform_output);
        let jobs = self.ctx.tessellate(full.shapes, full.pixels_per_point);
        let ctx = input.renderer.context();
        let (device, queue) = (ctx.device(), ctx.queue());
        // Taken out and drained: epaint insists that every delta is applied.
        let mut textures = std::mem::take(&mut full.textures_delta);
        for (id, deltas) in textures.set.drain() {
            for delta in deltas {
                self.renderer.update_texture(device, queue, id, &delta);
                if delta.pos.is_none() {
                    // A full delta (re)creates the texture: Rgba8Unorm, one level.
                    let bytes = delta.image.width() as u64 * delta.image.height() as u64 * 4;
                    let charge = self.ledger.charge(Category::Overlay, bytes, "egui texture");
                    self.texture_charges.insert(id, charge);
                }
            }
        }
        self.account_buffers(&jobs);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [size.0, size.1],
            pixels_per_point: full.pixels_per_point,
        };
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("mipflow overlay"),
        });
        let extra = self
            .renderer
            .update_buffers(device, queue, &mut enc, &jobs, &screen);
        {
            let rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("mipflow overlay"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Load,
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            let mut rp = rp.forget_lifetime();
            self.renderer.render(&mut rp, &jobs, &screen);
        }
        queue.submit(extra.into_iter().chain([enc.finish()]));
        for id in textures.free.drain() {
            self.renderer.free_texture(&id);
            self.texture_charges.remove(&id);
        }
        Ok(actions)
    }

    /// Replays egui-wgpu's buffer growth from the paint jobs (see the module documentation: an
    /// estimate) and updates the charge when it changed.
    fn account_buffers(&mut self, jobs: &[ClippedPrimitive]) {
        let (mut vertices, mut indices) = (0u64, 0u64);
        for p in jobs {
            if let Primitive::Mesh(m) = &p.primitive {
                vertices += m.vertices.len() as u64;
                indices += m.indices.len() as u64;
            }
        }
        let vneed = vertices * std::mem::size_of::<egui::epaint::Vertex>() as u64;
        let ineed = indices * 4;
        if vneed > self.vertex_capacity {
            self.vertex_capacity = (self.vertex_capacity * 2).max(vneed);
        }
        if ineed > self.index_capacity {
            self.index_capacity = (self.index_capacity * 2).max(ineed);
        }
        self.charge_buffers();
    }

    fn charge_buffers(&mut self) {
        let total = self.vertex_capacity + self.index_capacity + FIXED_BUFFERS;
        if self.buffer_charge.as_ref().is_none_or(|(b, _)| *b != total) {
            self.buffer_charge = None;
            let c = self
                .ledger
                .charge(Category::Overlay, total, "egui buffers (estimate)");
            self.buffer_charge = Some((total, c));
        }
    }

    /// Bytes the overlay has charged (textures exact, buffers estimated).
    pub fn charged_bytes(&self) -> u64 {
        self.texture_charges
            .values()
            .map(Charge::bytes)
            .sum::<u64>()
            + self.buffer_charge.as_ref().map_or(0, |(b, _)| *b)
    }
}

impl Panels {
    fn show(&mut self, ui: &mut Ui, input: &OverlayInput<'_>) -> OverlayActions {
        let mut actions = OverlayActions {
            debug_mips: self.debug_mips,
            ..OverlayActions::default()
        };
        let width = panel_width(input.output.0);
        egui::Panel::right("mipflow overlay")
            .resizable(false)
            .exact_size(width)
            .frame(egui::Frame::new().fill(PANEL_FILL).inner_margin(8.0))
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.contents(ui, input, &mut actions);
                });
            });
        actions.debug_mips = self.debug_mips;
        actions
    }

    fn contents(&mut self, ui: &mut Ui, input: &OverlayInput<'_>, actions: &mut OverlayActions) {
        let r = input.renderer;
        let stats = r.stats();
        ui.horizontal(|ui| {
            ui.heading(RichText::new("mipflow").strong());
            ui.label(format!(
                "{:.0} fps  {}x{}  scale {:.3}",
                input.fps, input.output.0, input.output.1, stats.render_scale
            ));
        });
        ui.label(
            RichText::new("F1 hide  F2 mip colours  WASD+drag fly  Shift fast  wheel speed")
                .small()
                .weak(),
        );
        if let Some((done, total)) = input.loading {
            ui.add(
                egui::ProgressBar::new(done as f32 / total.max(1) as f32)
                    .text(format!("cooking and loading textures {done}/{total}")),
            );
        }
        ui.separator();
        self.budget_bar(ui, input);
        ui.separator();
        egui::CollapsingHeader::new("history (30 s)")
            .default_open(true)
            .show(ui, |ui| history_plot(ui, input.history));
        egui::CollapsingHeader::new("streaming")
            .default_open(true)
            .show(ui, |ui| streaming(ui, input));
        egui::CollapsingHeader::new("textures")
            .default_open(true)
            .show(ui, |ui| self.texture_table(ui, r));
        egui::CollapsingHeader::new("driver allocator vs ledger")
            .default_open(true)
            .show(ui, |ui| self.allocator(ui, r));
        egui::CollapsingHeader::new("controls")
            .default_open(true)
            .show(ui, |ui| self.controls(ui, actions));
        egui::CollapsingHeader::new("scale changes")
            .default_open(true)
            .show(ui, |ui| scale_changes(ui, r));
    }

    fn budget_bar(&self, ui: &mut Ui, input: &OverlayInput<'_>) {
        let stats = input.renderer.stats();
        let snap = input.renderer.ledger_snapshot();
        let budget = stats.budget_bytes.max(1);
        ui.label(format!(
            "VRAM {:.1} / {:.1} MiB  (frame peak {:.1})",
            mib(snap.total_bytes),
            mib(budget),
            mib(stats.frame_peak_bytes)
        ));
        let w = ui.available_width();
        let (rect, _) = ui.allocate_exact_size(egui::vec2(w, 22.0), egui::Sense::hover());
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
            input.renderer.budget().source().describe(),
            input.budget_origin
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

    fn texture_table(&mut self, ui: &mut Ui, r: &Renderer) {
        let stale = self
            .table_at
            .is_none_or(|t| t.elapsed().as_secs_f32() > 0.25);
        if stale {
            self.table = r.streamer().texture_infos();
            self.sort_table();
            self.table_at = Some(Instant::now());
        }
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
            .num_columns(6)
            .striped(true)
            .show(ui, |ui| {
                for h in ["#", "size", "want", "have", "MiB", "state"] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for t in self.table.iter().take(TOP_N) {
                    ui.label(t.index.to_string());
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

    fn allocator(&mut self, ui: &mut Ui, r: &Renderer) {
        let stale = self
            .allocator_at
            .is_none_or(|t| t.elapsed().as_secs_f32() > 0.5);
        if stale {
            let ctx = r.context();
            let counters = ctx.device().get_internal_counters();
            self.allocator = Some(match ctx.allocator_report() {
                Some(rep) => AllocatorView {
                    allocated: rep.total_allocated_bytes,
                    reserved: rep.total_reserved_bytes,
                    blocks: rep.blocks.len(),
                    allocations: rep.allocations.len(),
                    texture_memory: counters.hal.texture_memory.read() as i64,
                    buffer_memory: counters.hal.buffer_memory.read() as i64,
                },
                None => AllocatorView {
                    texture_memory: counters.hal.texture_memory.read() as i64,
                    buffer_memory: counters.hal.buffer_memory.read() as i64,
                    ..AllocatorView::default()
                },
            });
            self.allocator_at = Some(Instant::now());
        }
        let snap = r.ledger_snapshot();
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
        });
        if a.reserved == 0 {
            ui.label(RichText::new("(no allocator report on this backend)").weak());
        }
    }

    fn controls(&mut self, ui: &mut Ui, actions: &mut OverlayActions) {
        let b = ui.add(
            egui::Slider::new(&mut self.budget_mib, 16.0..=4096.0)
                .logarithmic(true)
                .text("budget")
                .suffix(" MiB"),
        );
        if b.changed() {
            actions.budget = Some((self.budget_mib * 1048576.0) as u64);
        }
        let lo = ui.add(
            egui::Slider::new(&mut self.min_scale, 0.25..=1.0)
                .step_by(1.0 / 16.0)
                .text("min scale"),
        );
        let hi = ui.add(
            egui::Slider::new(&mut self.max_scale, 0.25..=1.0)
                .step_by(1.0 / 16.0)
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
        ui.checkbox(&mut self.debug_mips, "colour surfaces by resident mip (F2)");
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
        return (format!("→ L{l}"), Color32::from_rgb(120, 200, 255));
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

/// A small square of `colour` (the default fonts have no "■").
fn swatch(ui: &mut Ui, colour: Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, colour);
}

fn history_plot(ui: &mut Ui, h: &History) {
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

fn streaming(ui: &mut Ui, input: &OverlayInput<'_>) {
    let stats = input.renderer.stats();
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
            format!("{} cancelled, {} retargeted", s.cancels, s.retargets),
        );
        row(
            "wanted resident",
            format!(
                "{:.1} of {:.1} MiB",
                mib(stats.resident_mip_bytes),
                mib(stats.wanted_mip_bytes)
            ),
        );
        row(
            "blur left",
            format!("{:.0} pixel-octaves", stats.quality_cost),
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

fn scale_changes(ui: &mut Ui, r: &Renderer) {
    let stats = r.stats();
    ui.label(format!(
        "now {:.3} (memory allows {:.3})",
        stats.render_scale, stats.memory_scale
    ));
    let changes: Vec<_> = r.scale_history().collect();
    if changes.is_empty() {
        ui.label(RichText::new("no change yet").weak());
    }
    for (frame, from, to, reason) in changes.iter().rev().take(6) {
        let arrow = if to < from { "↓" } else { "↑" };
        ui.label(format!(
            "frame {frame}: {from:.3} {arrow} {to:.3}  {}",
            reason.name()
        ));
    }
}
