//! Embedding mipflow in a game loop that owns everything: the winit window, the wgpu instance,
//! adapter, device, queue and surface are created here with plain wgpu, and mipflow is handed
//! the device and queue through [`Renderer::new`], its public constructor.
//!
//! Each frame draws into the one surface texture:
//! 1. mipflow renders the scene (six streamed BC7 textures on spinning panels, under a 48 MiB
//!    budget) and submits its own commands;
//! 2. the game records a pass of its own on top (`LoadOp::Load`): a HUD triangle in the corner,
//!    with a pipeline of its own;
//! 3. the game presents.
//!
//! ```text
//! cargo run --example embed                 # until the window is closed
//! cargo run --example embed -- --frames 60  # exit after 60 frames (the tests do this)
//! ```

use std::sync::Arc;
use std::time::Instant;

use glam::{Mat4, Quat, Vec3};
use mipflow::Budget;
use mipflow::Vertex;
use mipflow::{
    Camera, FrameInput, MaterialDesc, Renderer, RendererConfig, TextureOptions, TextureSource,
};
use mipflow_cook::Quality;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// The game's own pass: a triangle, colours from the vertex index, in clip space.
const HUD_WGSL: &str = r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) colour: vec3<f32> };
@vertex fn vs(@builtin(vertex_index) i: u32) -> Out {
    var p = array<vec2<f32>, 3>(vec2(-0.95, 0.95), vec2(-0.75, 0.95), vec2(-0.85, 0.75));
    var c = array<vec3<f32>, 3>(vec3(1.0, 0.2, 0.2), vec3(0.2, 1.0, 0.2), vec3(0.2, 0.4, 1.0));
    var o: Out;
    o.pos = vec4(p[i], 0.0, 1.0);
    o.colour = c[i];
    return o;
}
@fragment fn fs(v: Out) -> @location(0) vec4<f32> { return vec4(v.colour, 1.0); }
"#;

struct Game {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    device: wgpu::Device,
    queue: wgpu::Queue,
    hud: wgpu::RenderPipeline,
    mipflow: Renderer,
    panels: Vec<mipflow::InstanceHandle>,
    start: Instant,
    frames: u64,
}

struct App {
    instance: wgpu::Instance,
    max_frames: Option<u64>,
    game: Option<Game>,
    error: Option<String>,
}

fn quad() -> ([Vertex; 4], [u32; 6]) {
    let v = |x: f32, y: f32, u: f32, t: f32| Vertex {
        position: [x, y, 0.0],
        normal: [0.0, 0.0, 1.0],
        uv: [u, t],
    };
    (
        [
            v(-0.5, -0.5, 0.0, 1.0),
            v(0.5, -0.5, 1.0, 1.0),
            v(0.5, 0.5, 1.0, 0.0),
            v(-0.5, 0.5, 0.0, 0.0),
        ],
        [0, 1, 2, 0, 2, 3],
    )
}

fn panel_transform(i: usize, n: usize, t: f32) -> Mat4 {
    let angle = i as f32 / n as f32 * std::f32::consts::TAU + t * 0.3;
    Mat4::from_scale_rotation_translation(
        Vec3::splat(1.6),
        Quat::from_rotation_y(angle + t),
        Vec3::new(angle.sin() * 2.5, 0.0, angle.cos() * 2.5),
    )
}

impl Game {
    fn new(instance: &wgpu::Instance, el: &ActiveEventLoop) -> Result<Self, String> {
        let window = Arc::new(
            el.create_window(
                Window::default_attributes()
                    .with_title("mipflow embed example")
                    .with_inner_size(winit::dpi::PhysicalSize::new(800u32, 500u32)),
            )
            .map_err(|e| e.to_string())?,
        );
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| e.to_string())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        }))
        .map_err(|e| format!("no adapter: {e}"))?;
        // mipflow streams BC7: ask for it (and timestamps, for its GPU frame time) where present.
        let wanted = wgpu::Features::TEXTURE_COMPRESSION_BC | wgpu::Features::TIMESTAMP_QUERY;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("game device"),
            required_features: adapter.features() & wanted,
            required_limits: adapter.limits(),
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
        surface.configure(&device, &config);

        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("hud"),
            source: wgpu::ShaderSource::Wgsl(HUD_WGSL.into()),
        });
        let hud = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("hud"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(config.format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });

        // mipflow on the game's device: the output format is the surface's.
        let mut cfg = RendererConfig::default();
        cfg.output_format = config.format;
        cfg.budget = Budget::bytes(48 << 20);
        let mut mipflow =
            Renderer::new(device.clone(), queue.clone(), cfg).map_err(|e| e.to_string())?;

        // Six textures. A game would pass `TextureSource::Path` for its .ktx2 files; here they are
        // cooked in memory so the example needs no assets.
        let (qv, qi) = quad();
        let mesh = mipflow.add_mesh(&qv, &qi).map_err(|e| e.to_string())?;
        let specs = mipflow_cook::procedural::demo_specs(7, 6, 512);
        let mut panels = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let bytes = mipflow_cook::procedural::cook_procedural(spec, Quality::Fast)
                .map_err(|e| e.to_string())?;
            let tex = mipflow
                .add_texture(
                    TextureSource::Bytes(bytes.into()),
                    TextureOptions::default(),
                )
                .map_err(|e| e.to_string())?;
            let mat = mipflow
                .add_material(MaterialDesc::new(tex))
                .map_err(|e| e.to_string())?;
            let inst = mipflow
                .add_instance(mesh, mat, panel_transform(i, specs.len(), 0.0))
                .map_err(|e| e.to_string())?;
            panels.push(inst);
        }
        Ok(Self {
            window,
            surface,
            config,
            device,
            queue,
            hud,
            mipflow,
            panels,
            start: Instant::now(),
            frames: 0,
        })
    }

    fn resize(&mut self, w: u32, h: u32) {
        if w > 0 && h > 0 {
            self.config.width = w;
            self.config.height = h;
            self.surface.configure(&self.device, &self.config);
        }
    }

    /// One frame. Returns false when nothing was drawn (minimised, surface being recreated).
    fn frame(&mut self) -> Result<bool, String> {
        let size = self.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(false);
        }
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.device, &self.config);
                return Ok(false);
            }
            _ => return Ok(false),
        };
        let view = frame.texture.create_view(&Default::default());

        // Game logic: spin the panels.
        let t = self.start.elapsed().as_secs_f32();
        let n = self.panels.len();
        for (i, h) in self.panels.iter().enumerate() {
            self.mipflow.set_transform(*h, panel_transform(i, n, t));
        }

        // 1. mipflow's scene.
        let camera = Camera::look_at(Vec3::new(0.0, 1.0, 6.0), Vec3::ZERO);
        let stats = *self
            .mipflow
            .render(&view, &FrameInput::new(camera))
            .map_err(|e| e.to_string())?;

        // 2. The game's own pass, over it.
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("hud") });
        {
            let mut rp = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("hud"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
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
            rp.set_pipeline(&self.hud);
            rp.draw(0..3, 0..1);
        }
        self.queue.submit([enc.finish()]);

        // 3. Present.
        self.window.pre_present_notify();
        self.queue.present(frame);
        self.frames += 1;
        if self.frames % 60 == 1 {
            let mib = |b: u64| b as f64 / 1048576.0;
            println!(
                "frame {}: {:.1} MiB of {:.1} MiB budget, textures {:.2} MiB, scale {:.3}",
                stats.frame,
                mib(stats.ledger.total_bytes),
                mib(stats.budget_bytes),
                mib(stats.ledger.by_category.textures.bytes),
                stats.render_scale
            );
        }
        Ok(true)
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.game.is_none() {
            match Game::new(&self.instance, el) {
                Ok(g) => self.game = Some(g),
                Err(e) => {
                    self.error = Some(e);
                    el.exit();
                }
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(game) = self.game.as_mut() else {
            return;
        };
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::Resized(s) => game.resize(s.width, s.height),
            WindowEvent::RedrawRequested => match game.frame() {
                Ok(_) if self.max_frames.is_some_and(|n| game.frames >= n) => el.exit(),
                Ok(_) => {}
                Err(e) => {
                    self.error = Some(e);
                    el.exit();
                }
            },
            _ => {}
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        if let Some(g) = &self.game {
            el.set_control_flow(ControlFlow::Poll);
            g.window.request_redraw();
        }
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    let mut max_frames = None;
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|n| n.parse::<u64>().ok())) {
            ("--frames", Some(n)) => max_frames = Some(n),
            _ => {
                eprintln!("usage: embed [--frames N]");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let event_loop = match EventLoop::new() {
        Ok(el) => el,
        Err(e) => {
            eprintln!("embed: no display ({e})");
            return std::process::ExitCode::from(2);
        }
    };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
        Box::new(event_loop.owned_display_handle()),
    ));
    let mut app = App {
        instance,
        max_frames,
        game: None,
        error: None,
    };
    if let Err(e) = event_loop.run_app(&mut app) {
        eprintln!("embed: {e}");
        return std::process::ExitCode::from(1);
    }
    let frames = app.game.as_ref().map_or(0, |g| g.frames);
    let mut failed = None;
    if let Some(g) = app.game.take() {
        let snap = g.mipflow.ledger_snapshot();
        let budget = g.mipflow.budget().current_bytes();
        let within = if snap.peak_bytes <= budget {
            "within"
        } else {
            "OVER"
        };
        println!(
            "embed: {frames} frames, {} textures, peak {:.1} MiB {within} a {:.0} MiB budget",
            g.mipflow.streamer().texture_count(),
            snap.peak_bytes as f64 / 1048576.0,
            budget as f64 / 1048576.0
        );
        // Everything mipflow allocated is in its ledger: once the game (and the renderer with
        // it) is gone, nothing is left charged.
        let ledger = g.mipflow.context().ledger().clone();
        drop(g);
        let left = ledger.snapshot().total_bytes;
        println!("embed: {left} bytes left on the ledger after the renderer was dropped");
        if snap.peak_bytes > budget {
            failed = Some("the peak passed the budget".to_owned());
        } else if left != 0 {
            failed = Some(format!(
                "{left} bytes still charged after the renderer was dropped"
            ));
        }
    }
    if let (None, Some(f)) = (&app.error, failed) {
        eprintln!("embed: {f}");
        return std::process::ExitCode::from(1);
    }
    match app.error {
        Some(e) => {
            eprintln!("embed: {e}");
            std::process::ExitCode::from(1)
        }
        None => std::process::ExitCode::SUCCESS,
    }
}
