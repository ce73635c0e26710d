//! A game's own renderer under mipflow's budget (see `game.rs`): mipflow streams its textures,
//! shares one budget between them and the render targets the game declared, and says the render
//! scale and mip bias; everything else (pipelines, WGSL, bind groups, samplers, the upscale, the
//! window, the egui UI) is the game's.
//!
//! ```text
//! cargo run --release --example own_renderer                      # a window, fly camera
//! cargo run --release --example own_renderer -- --headless --frames 300 --screenshot shot.png
//! cargo run --release --example own_renderer -- --headless --frames 300 --squeeze
//! ```
//!
//! In the window: WASD/QE to fly, right mouse button to look, the game's own egui window with a
//! budget slider, and mipflow's memory panels (`mipflow-overlay`) in an egui window of the game's.
//! `--squeeze` lowers the budget to 24 MiB for the middle third of the frames.

mod game;
mod scene;

use std::sync::Arc;
use std::time::Instant;

use game::{GameRenderer, Residency};
use glam::{Mat4, Vec3};
use mipflow::{Budget, Camera, FrameStats};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Window, WindowId};

const USAGE: &str = "usage: own_renderer [--headless] [--frames N] [--screenshot PATH] \
[--size WxH] [--budget MIB] [--materials N] [--texture-size N] [--squeeze] [--trace]";

/// The floor's tile cache: 4 MiB of 128² BC7 tiles (256 slots).
const FLOOR_ATLAS: u64 = 4 << 20;

/// The floor's texture side: four times the panels' (at most 8192).
fn floor_side(a: &Args) -> u32 {
    (a.texture_size * 4).clamp(256, 8192)
}

/// The floor's length: from behind the tour's start to the far wall.
fn floor_length(a: &Args) -> f32 {
    4.0 + (a.materials.div_ceil(2) as f32) * 3.2
}

#[derive(Clone, Debug)]
struct Args {
    headless: bool,
    frames: Option<u64>,
    screenshot: Option<std::path::PathBuf>,
    size: (u32, u32),
    budget_mib: u64,
    materials: usize,
    texture_size: u32,
    squeeze: bool,
    trace: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        headless: false,
        frames: None,
        screenshot: None,
        size: (1280, 720),
        budget_mib: 256,
        materials: 16,
        texture_size: 1024,
        squeeze: false,
        trace: false,
    };
    let mut it = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "--headless" => a.headless = true,
            "--squeeze" => a.squeeze = true,
            "--trace" => a.trace = true,
            "--frames" => {
                let n: u64 = value("--frames")?
                    .parse()
                    .map_err(|e| format!("--frames: {e}"))?;
                if n == 0 {
                    return Err("--frames: at least 1".into());
                }
                a.frames = Some(n);
            }
            "--screenshot" => a.screenshot = Some(value("--screenshot")?.into()),
            "--size" => {
                let v = value("--size")?;
                let (w, h) = v.split_once('x').ok_or("--size: WxH")?;
                a.size = (
                    w.parse().map_err(|e| format!("--size: {e}"))?,
                    h.parse().map_err(|e| format!("--size: {e}"))?,
                );
                if a.size.0 == 0 || a.size.1 == 0 || a.size.0 > 8192 || a.size.1 > 8192 {
                    return Err("--size: 1x1 to 8192x8192".into());
                }
            }
            "--budget" => {
                a.budget_mib = value("--budget")?
                    .parse()
                    .map_err(|e| format!("--budget (MiB): {e}"))?;
                // Bytes are `MiB << 20`: past 1 TiB they no longer fit any device (nor, far
                // past it, a u64).
                if !(1..=1 << 20).contains(&a.budget_mib) {
                    return Err("--budget: 1 to 1048576 MiB".into());
                }
            }
            "--materials" => {
                a.materials = value("--materials")?
                    .parse()
                    .map_err(|e| format!("--materials: {e}"))?;
                if !(1..=512).contains(&a.materials) {
                    return Err("--materials: 1 to 512".into());
                }
            }
            "--texture-size" => {
                a.texture_size = value("--texture-size")?
                    .parse()
                    .map_err(|e| format!("--texture-size: {e}"))?;
                if !a.texture_size.is_power_of_two() || !(64..=4096).contains(&a.texture_size) {
                    return Err("--texture-size: a power of two from 64 to 4096".into());
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
}

/// The budget at frame `f` of `n`: the given one, or 24 MiB in the middle third with `--squeeze`.
fn budget_at(args: &Args, f: u64, n: u64) -> u64 {
    if args.squeeze && (n / 3..2 * n / 3).contains(&f) {
        24 << 20
    } else {
        args.budget_mib << 20
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("own_renderer: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let result = if args.headless {
        headless(&args)
    } else {
        windowed(args)
    };
    if let Err(e) = result {
        eprintln!("own_renderer: {e}");
        std::process::exit(1);
    }
}

fn headless(args: &Args) -> Result<(), String> {
    let ctx =
        mipflow::GpuContext::headless(&mipflow::GpuConfig::default()).map_err(|e| e.to_string())?;
    let materials = scene::materials(args.materials, args.texture_size)?;
    let panels = scene::corridor(args.materials);
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut renderer = GameRenderer::new(
        ctx.device().clone(),
        ctx.queue().clone(),
        format,
        Budget::bytes(args.budget_mib << 20),
        &materials,
        panels,
        Residency::Streamed,
    )
    .map_err(|e| e.to_string())?
    .with_floor(floor_side(args), FLOOR_ATLAS, floor_length(args))?;
    let output = ctx
        .create_offscreen_target("own_renderer output", args.size.0, args.size.1)
        .map_err(|e| e.to_string())?;
    let view = output.create_view(&Default::default());
    let n = args.frames.unwrap_or(300).max(1);
    let (mut peak, mut min_scale) = (0u64, 1.0f32);
    let mut over = 0u64;
    let mut last = FrameStats::default();
    for f in 0..n {
        let budget = budget_at(args, f, n);
        if renderer.manager().budget().current_bytes() != budget {
            renderer.manager_mut().set_budget(Budget::bytes(budget));
        }
        let camera = scene::tour_camera(args.materials, f as f32 / n as f32);
        last = renderer
            .frame(&camera, &view, args.size)
            .map_err(|e| e.to_string())?;
        peak = peak.max(last.frame_peak_bytes);
        min_scale = min_scale.min(last.render_scale);
        over += u64::from(last.frame_peak_bytes > last.budget_bytes);
        if args.trace {
            println!(
                "frame {f}: budget {} MiB, peak {:.2} MiB, total {:.2} MiB (textures {:.2}, targets \
                 {:.2}), scale {:.3}, wanted {:.2}/{:.2} MiB",
                last.budget_bytes >> 20,
                last.frame_peak_bytes as f64 / 1048576.0,
                last.ledger.total_bytes as f64 / 1048576.0,
                last.ledger.by_category.textures.bytes as f64 / 1048576.0,
                last.ledger.by_category.render_targets.bytes as f64 / 1048576.0,
                last.render_scale,
                last.resident_mip_bytes as f64 / 1048576.0,
                last.wanted_mip_bytes as f64 / 1048576.0,
            );
        }
        if f % 8 == 0 {
            // Keep the GPU within a few frames, as a swap chain would.
            let _ = ctx.wait_idle();
        }
    }
    let c = renderer.counters();
    if let Some((held, all)) = renderer.floor_tiles() {
        println!("own_renderer: floor tiles {held} of {all} held");
    }
    println!(
        "own_renderer: {n} frames, {} materials, peak {:.1} MiB, {over} frames over budget, \
         scale min {min_scale:.3} last {:.3}, {} bind groups for {} view changes, {} MiB resident",
        args.materials,
        peak as f64 / 1048576.0,
        last.render_scale,
        c.bind_groups_built,
        c.version_changes,
        last.ledger.total_bytes >> 20,
    );
    if let Some(path) = &args.screenshot {
        let px = mipflow::read_texture_rgba8(&ctx, output.texture()).map_err(|e| e.to_string())?;
        image::save_buffer(
            path,
            &px,
            args.size.0,
            args.size.1,
            image::ExtendedColorType::Rgba8,
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        println!("own_renderer: screenshot {}", path.display());
    }
    if over > 0 {
        return Err(format!("{over} frames over budget"));
    }
    Ok(())
}

// ---- The window: plain wgpu and winit, the game's own egui UI with mipflow's panels in it. ----

struct Ui {
    ctx: egui::Context,
    state: egui_winit::State,
    renderer: egui_wgpu::Renderer,
    /// What `renderer` holds on the GPU, charged to mipflow's ledger (the overlay category):
    /// the budget leaves room for it. Declared after it, so released once it is dropped.
    charges: mipflow_overlay::EguiCharges,
    panels: mipflow_overlay::MemoryPanels,
    history: mipflow_overlay::History,
    changes: Vec<mipflow::ScaleChange>,
    budget_mib: f32,
}

struct Game {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    device: wgpu::Device,
    queue: wgpu::Queue,
    renderer: GameRenderer,
    ui: Ui,
    eye: Vec3,
    yaw: f32,
    pitch: f32,
    keys: std::collections::HashSet<KeyCode>,
    looking: bool,
    last_cursor: Option<(f64, f64)>,
    start: Instant,
    last_frame: Instant,
    frames: u64,
    stats: FrameStats,
    /// Where to save the window's last frame (`--screenshot` with `--frames`).
    screenshot: Option<std::path::PathBuf>,
    last: Option<u64>,
}

struct App {
    args: Args,
    instance: wgpu::Instance,
    game: Option<Game>,
    error: Option<String>,
}

fn windowed(args: Args) -> Result<(), String> {
    let event_loop = EventLoop::new().map_err(|e| e.to_string())?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
        Box::new(event_loop.owned_display_handle()),
    ));
    let mut app = App {
        args,
        instance,
        game: None,
        error: None,
    };
    event_loop.run_app(&mut app).map_err(|e| e.to_string())?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

impl App {
    fn start(&mut self, el: &ActiveEventLoop) -> Result<Game, String> {
        let window = Arc::new(
            el.create_window(
                Window::default_attributes()
                    .with_title("mipflow: own renderer")
                    .with_inner_size(winit::dpi::PhysicalSize::new(
                        self.args.size.0,
                        self.args.size.1,
                    )),
            )
            .map_err(|e| e.to_string())?,
        );
        let surface = self
            .instance
            .create_surface(window.clone())
            .map_err(|e| e.to_string())?;
        let adapter =
            pollster::block_on(self.instance.request_adapter(&wgpu::RequestAdapterOptions {
                compatible_surface: Some(&surface),
                ..Default::default()
            }))
            .map_err(|e| format!("no GPU adapter: {e}"))?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("own_renderer"),
            required_features: wgpu::Features::TEXTURE_COMPRESSION_BC,
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;
        // wgpu 30 panics on errors nobody catches: the game logs them instead.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| eprintln!("wgpu error: {e}")));
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .ok_or("surface unsupported")?;
        let caps = surface.get_capabilities(&adapter);
        if let Some(f) = caps.formats.iter().find(|f| f.is_srgb()) {
            config.format = *f;
        }
        if self.args.screenshot.is_some() && caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            // The last frame is read back from the window's own image.
            config.usage |= wgpu::TextureUsages::COPY_SRC;
        }
        let format = config.format;
        surface.configure(&device, &config);
        let materials = scene::materials(self.args.materials, self.args.texture_size)?;
        let renderer = GameRenderer::new(
            device.clone(),
            queue.clone(),
            format,
            Budget::bytes(self.args.budget_mib << 20),
            &materials,
            scene::corridor(self.args.materials),
            Residency::Streamed,
        )
        .map_err(|e| e.to_string())?
        .with_floor(
            floor_side(&self.args),
            FLOOR_ATLAS,
            floor_length(&self.args),
        )?;
        let ctx = egui::Context::default();
        let state = egui_winit::State::new(
            ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            window.theme(),
            None,
        );
        let ui_renderer =
            egui_wgpu::Renderer::new(&device, format, egui_wgpu::RendererOptions::default());
        let range = renderer.manager().scale_range();
        let ui = Ui {
            ctx,
            state,
            renderer: ui_renderer,
            charges: mipflow_overlay::EguiCharges::new(
                renderer.manager().context().ledger().clone(),
            ),
            panels: mipflow_overlay::MemoryPanels::new(
                self.args.budget_mib << 20,
                (range.min().scale(), range.max().scale()),
            ),
            history: mipflow_overlay::History::default(),
            changes: Vec::new(),
            budget_mib: self.args.budget_mib as f32,
        };
        Ok(Game {
            window,
            surface,
            config,
            device,
            queue,
            renderer,
            ui,
            eye: Vec3::new(0.0, 1.6, 1.0),
            yaw: 0.0,
            pitch: 0.0,
            keys: Default::default(),
            looking: false,
            last_cursor: None,
            start: Instant::now(),
            last_frame: Instant::now(),
            frames: 0,
            stats: FrameStats::default(),
            screenshot: self.args.screenshot.clone(),
            last: self.args.frames,
        })
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.game.is_some() {
            return;
        }
        match self.start(el) {
            Ok(g) => self.game = Some(g),
            Err(e) => {
                self.error = Some(e);
                el.exit();
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(g) = self.game.as_mut() else { return };
        let used = g.ui.state.on_window_event(&g.window, &event).consumed;
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::Resized(size) => {
                g.config.width = size.width;
                g.config.height = size.height;
                if size.width > 0 && size.height > 0 {
                    g.surface.configure(&g.device, &g.config);
                }
            }
            WindowEvent::KeyboardInput { event, .. } if !used => {
                if let PhysicalKey::Code(k) = event.physical_key {
                    if event.state == ElementState::Pressed {
                        g.keys.insert(k);
                    } else {
                        g.keys.remove(&k);
                    }
                }
            }
            WindowEvent::MouseInput {
                button: MouseButton::Right,
                state,
                ..
            } => {
                g.looking = state == ElementState::Pressed && !g.ui.ctx.egui_wants_pointer_input();
                g.last_cursor = None;
            }
            WindowEvent::CursorMoved { position, .. } if g.looking => {
                if let Some((x, y)) = g.last_cursor {
                    g.yaw -= (position.x - x) as f32 * 0.004;
                    g.pitch = (g.pitch - (position.y - y) as f32 * 0.004).clamp(-1.4, 1.4);
                }
                g.last_cursor = Some((position.x, position.y));
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = g.redraw() {
                    self.error = Some(e);
                    el.exit();
                    return;
                }
                if self.args.frames.is_some_and(|n| g.frames >= n) {
                    println!(
                        "own_renderer: {} frames, {} materials, budget {} MiB, scale {:.3}, {} MiB \
                         in use, overlay {} KiB charged",
                        g.frames,
                        self.args.materials,
                        g.renderer.manager().budget().current_bytes() >> 20,
                        g.stats.render_scale,
                        g.stats.ledger.total_bytes >> 20,
                        g.ui.charges.charged_bytes() >> 10
                    );
                    el.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _el: &ActiveEventLoop) {
        if let Some(g) = &self.game {
            g.window.request_redraw();
        }
    }
}

impl Game {
    fn camera(&mut self) -> Camera {
        let dt = self.last_frame.elapsed().as_secs_f32().min(0.1);
        self.last_frame = Instant::now();
        let forward = Vec3::new(-self.yaw.sin(), 0.0, -self.yaw.cos());
        let right = Vec3::new(-forward.z, 0.0, forward.x);
        let mut d = Vec3::ZERO;
        for (key, dir) in [
            (KeyCode::KeyW, forward),
            (KeyCode::KeyS, -forward),
            (KeyCode::KeyD, right),
            (KeyCode::KeyA, -right),
            (KeyCode::KeyE, Vec3::Y),
            (KeyCode::KeyQ, -Vec3::Y),
        ] {
            if self.keys.contains(&key) {
                d += dir;
            }
        }
        self.eye += d.normalize_or_zero() * 4.0 * dt;
        let look = Mat4::from_rotation_y(self.yaw) * Mat4::from_rotation_x(self.pitch);
        let dir = look.transform_vector3(-Vec3::Z);
        Camera::look_at(self.eye, self.eye + dir)
    }

    fn redraw(&mut self) -> Result<(), String> {
        let camera = self.camera();
        if self.config.width == 0 || self.config.height == 0 {
            // Minimised: no surface to draw into; mipflow counts the frame and keeps its
            // targets and textures for when the window comes back.
            self.renderer.manager_mut().skip_frame();
            return Ok(());
        }
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                if self.config.width > 0 && self.config.height > 0 {
                    self.surface.configure(&self.device, &self.config);
                }
                return Ok(());
            }
            // Nothing to draw into this time (the window is hidden, or the compositor was
            // slow): the next redraw tries again.
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                return Ok(());
            }
            other => return Err(format!("surface: {other:?}")),
        };
        let view = frame.texture.create_view(&Default::default());
        let output = (frame.texture.width(), frame.texture.height());
        self.stats = self
            .renderer
            .frame(&camera, &view, output)
            .map_err(|e| e.to_string())?;
        self.ui
            .history
            .record(self.start.elapsed().as_secs_f64(), &self.stats);
        self.draw_ui(&view, output);
        self.frames += 1;
        if let Some(path) = self
            .screenshot
            .as_ref()
            .filter(|_| Some(self.frames) == self.last)
            && self.config.usage.contains(wgpu::TextureUsages::COPY_SRC)
        {
            let ctx = self.renderer.manager().context();
            let px = mipflow::read_texture_rgba8(ctx, &frame.texture).map_err(|e| e.to_string())?;
            image::save_buffer(
                path,
                &px,
                output.0,
                output.1,
                image::ExtendedColorType::Rgba8,
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
            println!("own_renderer: screenshot {}", path.display());
        }
        self.window.pre_present_notify();
        self.queue.present(frame);
        Ok(())
    }

    /// The game's egui: its own settings window, and a window of its own holding mipflow's
    /// memory panels (drawn from the manager's frame stats), over the frame.
    fn draw_ui(&mut self, target: &wgpu::TextureView, output: (u32, u32)) {
        let ui = &mut self.ui;
        let manager = self.renderer.manager();
        if ui.panels.wants_textures() {
            ui.panels.set_textures(manager.streamer().texture_infos());
        }
        if ui.panels.wants_driver_memory() {
            ui.panels
                .set_driver_memory(manager.context().driver_memory());
        }
        ui.changes.clear();
        ui.changes.extend(manager.controller().history().copied());
        let source = manager.budget().source().describe();
        let mut input = mipflow_overlay::PanelInput::new(&self.stats, &ui.history, &ui.changes);
        input.output = output;
        input.budget_source = &source;
        input.budget_origin = "the game's slider";
        // This renderer has no mip-colour debug views: their toggles are not shown.
        input.debug_views = false;
        let raw = ui.state.take_egui_input(&self.window);
        let (mut budget_mib, mut actions) = (ui.budget_mib, None);
        let panels = &mut ui.panels;
        let mut full = ui.ctx.run_ui(raw, |ctx| {
            egui::Window::new("Game")
                .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-8.0, 8.0))
                .show(ctx.ctx(), |ui| {
                    ui.label("The game's own UI: its renderer, mipflow's budget.");
                    ui.add(
                        egui::Slider::new(&mut budget_mib, 16.0..=1024.0)
                            .clamping(egui::SliderClamping::Edits)
                            .text("budget (MiB)"),
                    );
                });
            egui::Window::new("mipflow memory")
                .default_width(360.0)
                .default_pos(egui::pos2(8.0, 8.0))
                .show(ctx.ctx(), |ui| {
                    actions = Some(panels.contents(ui, &input));
                });
        });
        ui.state
            .handle_platform_output(&self.window, full.platform_output);
        if budget_mib != ui.budget_mib {
            ui.budget_mib = budget_mib;
            self.renderer
                .manager_mut()
                .set_budget(Budget::bytes((budget_mib as u64) << 20));
        } else if let Some(b) = actions.and_then(|a| a.budget) {
            self.renderer.manager_mut().set_budget(Budget::bytes(b));
        }
        if let Some((lo, hi)) = actions.and_then(|a| a.scale_range) {
            self.renderer.manager_mut().set_scale_range(lo, hi);
        }
        let jobs = ui.ctx.tessellate(full.shapes, full.pixels_per_point);
        // Taken out and drained: epaint insists that every delta is applied.
        let mut textures = std::mem::take(&mut full.textures_delta);
        for (id, deltas) in textures.set.drain() {
            for delta in deltas {
                ui.renderer
                    .update_texture(&self.device, &self.queue, id, &delta);
                ui.charges.texture_set(id, &delta);
            }
        }
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [output.0, output.1],
            pixels_per_point: full.pixels_per_point,
        };
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("game ui"),
            });
        let extra = ui
            .renderer
            .update_buffers(&self.device, &self.queue, &mut enc, &jobs, &screen);
        ui.charges.buffers(&jobs);
        {
            let rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("game ui"),
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
            ui.renderer
                .render(&mut rp.forget_lifetime(), &jobs, &screen);
        }
        self.queue.submit(extra.into_iter().chain([enc.finish()]));
        for id in textures.free.drain() {
            ui.renderer.free_texture(&id);
            ui.charges.texture_freed(id);
        }
    }
}
