//! The demo's egui plumbing (feature `overlay`): an egui context, its winit input state and its
//! egui-wgpu renderer, drawing the [`mipflow_overlay::MemoryPanels`] after
//! [`mipflow::Renderer::render`], into the same output texture, at native resolution (the scene
//! may be rendered at a lower scale; the overlay never is).
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

use egui::epaint::{ClippedPrimitive, Primitive};
use mipflow::budget::{Category, Charge, Ledger};
use mipflow::{Renderer, Result};
pub use mipflow_overlay::OverlayActions;
use mipflow_overlay::{History, MemoryPanels, PanelInput};

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
    /// What the budget did (the events strip, the history's marks).
    pub events: &'a mipflow::events::EventLog,
    /// The tour's caption: the act's title and what the budget moved since it began.
    pub caption: Option<(&'a str, &'a str)>,
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
    panels: MemoryPanels,
    /// The controller's scale changes, gathered each frame the overlay is drawn.
    changes: Vec<mipflow::resolution::ScaleChange>,
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
            panels: MemoryPanels::new(budget, scale_range),
            changes: Vec::new(),
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
        self.panels.debug_mips()
    }

    /// Sets the "colour by resident mip" toggle (the F2 key).
    pub fn set_debug_mips(&mut self, on: bool) {
        self.panels.set_debug_mips(on);
    }

    /// Sets the panels' "colour by wanted level" toggle (F2, second press).
    pub fn set_debug_wanted(&mut self, on: bool) {
        self.panels.set_debug_wanted(on);
    }

    /// Builds the panels, then draws them into `target` (`size` pixels) and submits.
    pub fn draw(
        &mut self,
        window: &winit::window::Window,
        target: &wgpu::TextureView,
        size: (u32, u32),
        input: &OverlayInput<'_>,
    ) -> Result<OverlayActions> {
        let r = input.renderer;
        if self.panels.wants_textures() {
            let table = r.streamer().texture_infos();
            let slots = table
                .iter()
                .map(|t| t.index as usize + 1)
                .max()
                .unwrap_or(0);
            let fb = r.feedback();
            self.panels.set_level_pixels(
                (0..slots as u32)
                    .map(|s| fb.histogram(s).copied())
                    .collect(),
            );
            self.panels.set_textures(table);
        }
        if self.panels.wants_driver_memory() {
            self.panels.set_driver_memory(r.context().driver_memory());
        }
        self.changes.clear();
        self.changes.extend(r.controller().history().copied());
        let source = r.budget().source().describe();
        let mut panel_input = PanelInput::new(r.stats(), input.history, &self.changes);
        panel_input.budget_source = &source;
        panel_input.budget_origin = input.budget_origin;
        panel_input.loading = input.loading;
        panel_input.fps = input.fps;
        panel_input.output = input.output;
        panel_input.hints =
            "F1 hide  F2 mip colours (sampled, wanted)  WASD+drag fly  Shift fast  wheel speed";
        panel_input.events = Some(input.events);
        let caption = input.caption;
        let raw = self.state.take_egui_input(window);
        let mut actions = OverlayActions::default();
        let panels = &mut self.panels;
        let mut full = self.ctx.run_ui(raw, |ui| {
            actions = panels.show_side_panel(ui, &panel_input);
            if let Some((title, line)) = caption {
                mipflow_overlay::caption(ui.ctx(), title, line);
            }
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
