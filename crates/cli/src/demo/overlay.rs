//! The demo's egui plumbing (feature `overlay`): an egui context, its winit input state and its
//! egui-wgpu renderer, drawing the [`mipflow_overlay::MemoryPanels`] after
//! [`mipflow::Renderer::render`], into the same output texture, at native resolution (the scene
//! may be rendered at a lower scale; the overlay never is).
//!
//! **Its GPU memory is charged to [`Category::Overlay`]** by a [`mipflow_overlay::EguiCharges`]
//! (egui-wgpu's textures exactly, its buffers as an estimate: see there).
//!
//! The overlay allocates on the CPU each frame it is shown (egui builds its shapes and meshes,
//! the plot its point lists, the table its rows): that is egui's model. Nothing is allocated
//! when it is hidden. The texture table and the allocator report are refreshed a few times a
//! second, not every frame, since both walk every live object.

use mipflow::Ledger;
use mipflow::{Renderer, Result};
use mipflow_overlay::{EguiCharges, History, MemoryPanels, PanelInput};
pub use mipflow_overlay::{OverlayActions, TextureAction};

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
    pub events: &'a mipflow::EventLog,
    /// The tour's caption: the act's title and what the budget moved since it began.
    pub caption: Option<(&'a str, &'a str)>,
}

/// The overlay: egui's context, its winit input state, its wgpu renderer, and the ledger charges
/// for what that renderer allocated.
pub struct Overlay {
    ctx: egui::Context,
    state: egui_winit::State,
    renderer: egui_wgpu::Renderer,
    /// Declared after the renderer: its charges are released once its resources are dropped.
    charges: EguiCharges,
    panels: MemoryPanels,
    /// The controller's scale changes, gathered each frame the overlay is drawn.
    changes: Vec<mipflow::ScaleChange>,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("charges", &self.charges)
            .finish()
    }
}

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
        Self {
            ctx,
            state,
            renderer,
            charges: EguiCharges::new(ledger),
            panels: MemoryPanels::new(budget, scale_range),
            changes: Vec::new(),
        }
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
                self.charges.texture_set(id, &delta);
            }
        }
        self.charges.buffers(&jobs);
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
            self.charges.texture_freed(id);
        }
        Ok(actions)
    }

    /// Bytes the overlay has charged (textures exact, buffers estimated).
    pub fn charged_bytes(&self) -> u64 {
        self.charges.charged_bytes()
    }
}

/// The texture table's control, applied to the manager: "pin" forces the whole chain resident
/// for `PIN_SECONDS`, "cap" and "keep" set the level limits.
pub fn apply_texture_action(m: &mut mipflow::BudgetManager, action: Option<TextureAction>) {
    match action {
        Some(TextureAction::Pin(h)) => {
            let keep = std::time::Duration::from_secs_f32(mipflow_overlay::PIN_SECONDS);
            m.force_resident(h, 0, keep);
        }
        Some(TextureAction::Limits {
            handle,
            finest,
            required,
        }) => {
            m.set_level_limits(handle, finest, required);
        }
        None => {}
    }
}
