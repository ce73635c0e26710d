//! The demo: a window on a hall of streamed textures under one VRAM budget, a fly camera or a
//! tour, the egui memory overlay (feature `overlay`), `--monitor` lines and `--screenshot`.
//!
//! It is an ordinary user of the public API: a [`GpuContext`] made for its window, a
//! [`Renderer`] on it, scene building through `add_texture` / `add_material` / `add_instance`
//! (in [`loader`]), and [`Renderer::render`] into the surface texture, after which the overlay is
//! drawn into the same texture at native resolution.
//!
//! Frame loop (winit 0.30, [`ApplicationHandler`]): each redraw takes the textures the cooking
//! threads finished, moves the camera, acquires the surface texture (a lost or outdated surface
//! is reconfigured, a minimised window skips the frame), renders, draws the overlay, presents.
//! The per-frame path does no IO beyond the capped header reads of newly arrived textures and
//! allocates only inside egui (when the overlay is shown) and for `--monitor` lines.

mod args;
mod budget;
pub mod camera;
pub mod loader;
#[cfg(feature = "overlay")]
pub mod overlay;
mod pace;
mod shot;
pub mod story;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::event::{DeviceEvent, ElementState, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Window, WindowId};

use crate::scenes;
use args::Options;
pub use args::{AUTO_ROOM_BYTES, DemoArgs, PROVISIONAL_BUDGET_BYTES};
use camera::{FlyCamera, FlyInput};
use loader::{Loader, SceneChoice};
use mipflow::BucketRange;
use mipflow::Camera;
use mipflow::Charge;
use mipflow::{Budget, Category};
use mipflow::{FrameInput, FrameStats, Renderer, RendererConfig};
use mipflow::{GpuConfig, GpuContext};
#[cfg(feature = "overlay")]
use mipflow_overlay::History;
use pace::{Fps, OCCLUDED_RETRY, pace};

/// Runs the demo until the window is closed (or `--frames` are done). Exit code 0 on success,
/// 1 when something failed while running, 2 for bad arguments or no usable GPU/window.
pub fn run(args: &DemoArgs) -> ExitCode {
    let started = Instant::now();
    let opts = match Options::from_args(args) {
        Ok(o) => o,
        Err(e) => {
            crate::say!("mipflow demo: {e}");
            return ExitCode::from(2);
        }
    };
    let event_loop = match EventLoop::new() {
        Ok(el) => el,
        Err(e) => {
            crate::say!(
                "mipflow demo: cannot open a window ({e}); is DISPLAY or WAYLAND_DISPLAY set? \
                 Try `xvfb-run -a mipflow`, or `mipflow headless` for no window at all"
            );
            return ExitCode::from(2);
        }
    };
    let mut app = App {
        opts,
        started,
        running: None,
        outcome: Ok(()),
    };
    if let Err(e) = event_loop.run_app(&mut app) {
        crate::say!("mipflow demo: event loop: {e}");
        return ExitCode::from(1);
    }
    // Drop the window state (overlay, renderer, surface) before reporting.
    let frames = app.running.as_ref().map_or(0, |r| r.frame);
    let shot = app.running.as_ref().is_some_and(|r| r.screenshot_written);
    app.running = None;
    // A run asked for a screenshot that ended before it (the window closed, Esc): a script
    // must not read success and find no file.
    if let (Ok(()), Some(path)) = (&app.outcome, &app.opts.args.screenshot)
        && !shot
    {
        app.outcome = Err((
            1,
            format!(
                "the run ended after {frames} frame(s), before the screenshot {} was taken",
                path.display()
            ),
        ));
    }
    match app.outcome {
        Ok(()) => {
            tracing::info!(frames, "demo finished");
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            crate::say!("mipflow demo: {e}");
            ExitCode::from(code)
        }
    }
}

struct App {
    opts: Options,
    started: Instant,
    running: Option<Running>,
    /// Exit code and message of a failure.
    outcome: Result<(), (u8, String)>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        match Running::new(el, &self.opts, self.started) {
            Ok(r) => self.running = Some(r),
            Err(e) => {
                self.outcome = Err((2, e));
                el.exit();
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = self.running.as_mut() else {
            return;
        };
        match r.window_event(el, event) {
            Ok(()) => {}
            Err(e) => {
                self.outcome = Err((1, e));
                el.exit();
            }
        }
    }

    fn device_event(
        &mut self,
        _el: &ActiveEventLoop,
        _id: winit::event::DeviceId,
        event: DeviceEvent,
    ) {
        if let (Some(r), DeviceEvent::MouseMotion { delta }) = (self.running.as_mut(), event)
            && r.input.looking
        {
            r.fly.look(delta.0, delta.1);
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        let Some(r) = self.running.as_ref() else {
            el.set_control_flow(ControlFlow::Wait);
            return;
        };
        let flow = pace(r.minimised, r.occluded_until, Instant::now());
        if flow == ControlFlow::Poll {
            r.window.request_redraw();
        }
        el.set_control_flow(flow);
    }

    fn new_events(&mut self, _el: &ActiveEventLoop, cause: winit::event::StartCause) {
        // An occluded window's wait is over: try a frame again.
        if let (Some(r), winit::event::StartCause::ResumeTimeReached { .. }) =
            (self.running.as_mut(), cause)
        {
            r.occluded_until = None;
            r.window.request_redraw();
        }
    }
}

/// Everything that lives while the window does. Fields drop in order: the overlay's charges and
/// the swapchain estimate go before the renderer, whose context prints the leak report.
struct Running {
    /// `--screenshot`'s file was written.
    screenshot_written: bool,
    #[cfg(feature = "overlay")]
    overlay: overlay::Overlay,
    swapchain_charge: Option<Charge>,
    loader: Loader,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    renderer: Renderer,
    window: Arc<Window>,
    opts: Options,
    started: Instant,
    fly: FlyCamera,
    input: FlyInput,
    #[cfg(feature = "overlay")]
    history: History,
    fps: Fps,
    overlay_visible: bool,
    debug_mips: bool,
    debug_wanted: bool,
    budget_origin: &'static str,
    /// The budget the story (or nothing) starts from: `--budget`, or the automatic one.
    base_budget: u64,
    /// The budget follows the window (no `--budget`, slider not moved).
    auto_budget: bool,
    /// The window's own bytes (swapchain, overlay, meshes), measured when the budget settles:
    /// the story scales the rest.
    window_bytes: u64,
    /// The tour's story, while it plays (`--tour`, slider not moved).
    story: Option<story::Story>,
    events: mipflow::EventLog,
    /// Next event to print under `--monitor` (printed once final).
    events_printed: u64,
    minimised: bool,
    /// The surface said the window is occluded (hidden, on another space): no frame is tried
    /// before this instant (without it, Metal answers `Occluded` at once and the loop spun at
    /// full speed on a hidden window).
    occluded_until: Option<Instant>,
    needs_configure: bool,
    surface_copy_src: bool,
    frame: u64,
    frames_loaded: u64,
    tour_frame: u64,
    /// The tour flies the camera (`--tour`) until a fly key or a drag in the scene takes it.
    touring: bool,
    last_frame: Option<Instant>,
    last_monitor: Option<Instant>,
    last_title: Option<Instant>,
    first_frame_logged: bool,
    stats: FrameStats,
}

/// Frames the automatic budget takes to measure the window (the overlay's first draw comes
/// after the first frame): events and the tour's story are observed from then on.
const SETTLE_FRAMES: u64 = 3;

/// The renderer's configuration, field by field, as any user outside the crate must write it
/// (the config is `#[non_exhaustive]`).
#[allow(clippy::field_reassign_with_default)]
fn renderer_config(opts: &Options, format: wgpu::TextureFormat, anisotropy: u16) -> RendererConfig {
    let mut rc = RendererConfig::default();
    rc.budget = Budget::bytes(opts.budget.unwrap_or(PROVISIONAL_BUDGET_BYTES));
    rc.output_format = format;
    rc.anisotropy = anisotropy;
    rc.target_frame_ms = opts.args.target_ms;
    rc.controller.range = BucketRange::new(opts.args.min_scale, 1.0);
    rc
}

/// An 8-bit sRGB format if the surface has one (so readback and egui both work), else its first.
fn pick_format(formats: &[wgpu::TextureFormat]) -> Option<wgpu::TextureFormat> {
    use wgpu::TextureFormat as F;
    [F::Bgra8UnormSrgb, F::Rgba8UnormSrgb]
        .into_iter()
        .find(|f| formats.contains(f))
        .or_else(|| formats.iter().copied().find(|f| f.is_srgb()))
        .or_else(|| formats.first().copied())
}

impl Running {
    fn new(el: &ActiveEventLoop, opts: &Options, started: Instant) -> Result<Self, String> {
        let (w, h) = opts.size;
        let attrs = Window::default_attributes()
            .with_title("mipflow")
            .with_inner_size(winit::dpi::PhysicalSize::new(w, h));
        let window = Arc::new(
            el.create_window(attrs)
                .map_err(|e| format!("cannot create a window: {e}"))?,
        );
        let (ctx, surface) = GpuContext::with_surface(window.clone(), &GpuConfig::default())
            .map_err(|e| e.to_string())?;
        let adapter = ctx
            .adapter()
            .ok_or_else(|| "the context has no adapter".to_owned())?;
        let caps = surface.get_capabilities(adapter);
        let format = pick_format(&caps.formats)
            .ok_or_else(|| "the surface supports no format on this adapter".to_owned())?;
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(adapter, size.width.max(1), size.height.max(1))
            .ok_or_else(|| "the surface is not supported by the adapter".to_owned())?;
        config.format = format;
        // egui draws through a non-sRGB view of the same texture (it blends in gamma space).
        let overlay_format = format.remove_srgb_suffix();
        if overlay_format != format {
            config.view_formats = vec![overlay_format];
        }
        // Reading the presented frame back needs COPY_SRC on the surface; where the surface
        // cannot, the screenshot frame is drawn into an offscreen texture instead.
        let surface_copy_src =
            opts.args.screenshot.is_some() && caps.usages.contains(wgpu::TextureUsages::COPY_SRC);
        if surface_copy_src {
            config.usage |= wgpu::TextureUsages::COPY_SRC;
        }
        config.present_mode = if opts.args.no_vsync {
            wgpu::PresentMode::AutoNoVsync
        } else {
            wgpu::PresentMode::AutoVsync
        };
        config.desired_maximum_frame_latency = 2;
        surface.configure(ctx.device(), &config);
        tracing::info!(
            adapter = %ctx.adapter_name(),
            format = ?format,
            width = config.width,
            height = config.height,
            "window surface"
        );

        let software = ctx
            .adapter_info()
            .is_some_and(|i| i.device_type == wgpu::DeviceType::Cpu);
        let anisotropy = opts.args.anisotropy.unwrap_or(if software { 1 } else { 8 });
        if software && opts.args.anisotropy.is_none() {
            tracing::info!(
                "software adapter: anisotropic filtering off (--anisotropy N to set it)"
            );
        }
        let rc = renderer_config(opts, format, anisotropy);
        let mut renderer = Renderer::with_context(ctx, rc).map_err(|e| e.to_string())?;
        let loader = Loader::start(&mut renderer, &opts.choice, opts.args.cook_threads)
            .map_err(|e| e.to_string())?;
        let (eye, target) = scenes::tour(0, opts.args.tour_frames, loader.hall_length());
        #[cfg(feature = "overlay")]
        let overlay = overlay::Overlay::new(
            &window,
            renderer.context().device(),
            overlay_format,
            renderer.context().ledger().clone(),
            opts.budget.unwrap_or(PROVISIONAL_BUDGET_BYTES),
            (opts.args.min_scale, 1.0),
        );
        let mut r = Self {
            #[cfg(feature = "overlay")]
            overlay,
            swapchain_charge: None,
            screenshot_written: false,
            loader,
            surface,
            config,
            renderer,
            window,
            opts: opts.clone(),
            started,
            fly: FlyCamera::looking_at(eye, target),
            input: FlyInput::default(),
            #[cfg(feature = "overlay")]
            history: History::default(),
            fps: Fps::default(),
            overlay_visible: cfg!(feature = "overlay") && !opts.args.no_overlay,
            debug_mips: false,
            debug_wanted: false,
            budget_origin: match (opts.budget, opts.args.tour) {
                (None, false) => "automatic: the window's fixed bytes + 14 MiB",
                (None, true) => "the tour's story (from the automatic budget)",
                (Some(_), false) => "--budget",
                (Some(_), true) => "the tour's story (from --budget)",
            },
            base_budget: opts.budget.unwrap_or(PROVISIONAL_BUDGET_BYTES),
            auto_budget: opts.budget.is_none(),
            window_bytes: 0,
            story: if opts.args.tour {
                Some(story::Story::new(opts.args.tour_frames)?)
            } else {
                None
            },
            events: mipflow::EventLog::new(),
            events_printed: 0,
            minimised: false,
            occluded_until: None,
            needs_configure: false,
            surface_copy_src,
            frame: 0,
            frames_loaded: 0,
            tour_frame: 0,
            touring: opts.args.tour,
            last_frame: None,
            last_monitor: None,
            last_title: None,
            first_frame_logged: false,
            stats: FrameStats::default(),
        };
        r.charge_swapchain();
        Ok(r)
    }

    /// The swapchain's images are the window system's, not mipflow's, but they are VRAM the
    /// process holds: charged to `Other` as an estimate (4 bytes a pixel, frame latency + 1
    /// images, the usual FIFO/mailbox count), so the planner leaves room for them.
    fn charge_swapchain(&mut self) {
        self.swapchain_charge = None;
        let images = u64::from(self.config.desired_maximum_frame_latency) + 1;
        let bytes = u64::from(self.config.width) * u64::from(self.config.height) * 4 * images;
        self.swapchain_charge = Some(self.renderer.context().ledger().charge(
            Category::Other,
            bytes,
            "swapchain images (estimate)",
        ));
    }

    fn configure(&mut self) {
        self.surface
            .configure(self.renderer.context().device(), &self.config);
        self.charge_swapchain();
        self.needs_configure = false;
    }

    fn window_event(&mut self, el: &ActiveEventLoop, event: WindowEvent) -> Result<(), String> {
        #[cfg(feature = "overlay")]
        let consumed = self.overlay_visible && self.overlay.on_window_event(&self.window, &event);
        #[cfg(not(feature = "overlay"))]
        let consumed = false;
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::Resized(size) => {
                if size.width == 0 || size.height == 0 {
                    self.minimised = true;
                } else {
                    self.minimised = false;
                    self.config.width = size.width;
                    self.config.height = size.height;
                    // Configured before the next frame, once however many resizes come first
                    // (a drag sends several a frame, and each configure waits for the GPU).
                    self.needs_configure = true;
                }
            }
            WindowEvent::Occluded(occluded) => {
                self.occluded_until = occluded.then(|| Instant::now() + OCCLUDED_RETRY);
            }
            WindowEvent::Focused(false) => self.input = FlyInput::default(),
            WindowEvent::KeyboardInput { event, .. } => {
                let PhysicalKey::Code(code) = event.physical_key else {
                    return Ok(());
                };
                let down = event.state == ElementState::Pressed;
                // Not while egui has the keyboard (a value typed into the overlay): Esc there
                // cancels the edit, and quit the demo too.
                if down && !event.repeat && !consumed {
                    match code {
                        KeyCode::F1 => {
                            self.overlay_visible =
                                cfg!(feature = "overlay") && !self.overlay_visible
                        }
                        KeyCode::F2 => {
                            // Off -> the level sampled -> the level wanted -> off.
                            (self.debug_mips, self.debug_wanted) =
                                match (self.debug_mips, self.debug_wanted) {
                                    (false, false) => (true, false),
                                    (true, false) => (false, true),
                                    _ => (false, false),
                                };
                            #[cfg(feature = "overlay")]
                            {
                                self.overlay.set_debug_mips(self.debug_mips);
                                self.overlay.set_debug_wanted(self.debug_wanted);
                            }
                        }
                        KeyCode::Escape => el.exit(),
                        _ => {}
                    }
                }
                // Releases always count, so a key never sticks when egui takes the focus.
                if !(down && consumed) {
                    let i = &mut self.input;
                    match code {
                        KeyCode::KeyW | KeyCode::ArrowUp => i.forward = down,
                        KeyCode::KeyS | KeyCode::ArrowDown => i.back = down,
                        KeyCode::KeyA | KeyCode::ArrowLeft => i.left = down,
                        KeyCode::KeyD | KeyCode::ArrowRight => i.right = down,
                        KeyCode::KeyE | KeyCode::Space => i.up = down,
                        KeyCode::KeyQ | KeyCode::ControlLeft => i.down = down,
                        KeyCode::ShiftLeft | KeyCode::ShiftRight => i.fast = down,
                        _ => {}
                    }
                }
                self.leave_tour_if_flown();
            }
            WindowEvent::MouseInput { state, .. } => {
                let down = state == ElementState::Pressed;
                self.input.looking = down && !consumed;
                self.leave_tour_if_flown();
            }
            WindowEvent::MouseWheel { delta, .. } if !consumed => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => (p.y / 40.0) as f32,
                };
                self.fly.scroll(lines);
            }
            WindowEvent::RedrawRequested => self.frame(el)?,
            _ => {}
        }
        Ok(())
    }

    /// A fly key or a drag in the scene during the tour: the user takes the camera, from where
    /// the tour had it (as the overlay's hint says); the tour's story ends with it, as when
    /// the budget slider is moved.
    fn leave_tour_if_flown(&mut self) {
        let i = &self.input;
        let flying = i.forward || i.back || i.left || i.right || i.up || i.down || i.looking;
        if self.touring && flying {
            self.touring = false;
            self.story = None;
            tracing::info!(
                frame = self.tour_frame,
                "left the tour: the camera is yours"
            );
        }
    }

    fn camera(&mut self, dt: f32) -> Camera {
        if self.touring {
            let (eye, target) = scenes::tour(
                self.tour_frame,
                self.opts.args.tour_frames,
                self.loader.hall_length(),
            );
            if self.loader.is_done() {
                self.tour_frame += 1;
            }
            // Leaving the tour (a fly key, a drag) continues from where it was.
            self.fly = FlyCamera {
                speed: self.fly.speed,
                ..FlyCamera::looking_at(eye, target)
            };
            Camera::look_at(eye, target)
        } else {
            self.fly.update(&self.input, dt);
            self.fly.camera()
        }
    }

    /// Whether this frame is the last of a `--frames` run.
    fn is_last_frame(&self) -> bool {
        self.loader.is_done()
            && self
                .opts
                .frames
                .is_some_and(|n| self.frames_loaded + 1 >= n)
    }

    fn frame(&mut self, el: &ActiveEventLoop) -> Result<(), String> {
        let now = Instant::now();
        let dt = self
            .last_frame
            .map_or(0.0, |t| now.duration_since(t).as_secs_f32());
        self.last_frame = Some(now);
        self.fps.push(dt * 1e3);
        // Up to 20 ms a frame on adding newly cooked textures (see `Loader::poll`).
        self.loader
            .poll(&mut self.renderer, std::time::Duration::from_millis(20));
        self.update_title();
        let camera = self.camera(dt);
        if self.minimised {
            return Ok(());
        }
        if self.needs_configure {
            self.configure();
        }
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f) => f,
            wgpu::CurrentSurfaceTexture::Suboptimal(f) => {
                self.needs_configure = true;
                f
            }
            wgpu::CurrentSurfaceTexture::Timeout => return Ok(()),
            wgpu::CurrentSurfaceTexture::Occluded => {
                self.occluded_until = Some(Instant::now() + OCCLUDED_RETRY);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Outdated => {
                // At the window's size now (the configured one is what went out of date).
                let size = self.window.inner_size();
                if size.width == 0 || size.height == 0 {
                    self.minimised = true;
                } else {
                    self.config.width = size.width;
                    self.config.height = size.height;
                    self.configure();
                }
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Lost => {
                self.recreate_surface()?;
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Validation => {
                tracing::warn!("validation error acquiring the surface texture; reconfiguring");
                self.needs_configure = true;
                return Ok(());
            }
        };
        let size = (frame.texture.width(), frame.texture.height());
        let capture = self.opts.args.screenshot.is_some() && self.is_last_frame();
        // The screenshot frame goes into an offscreen copy when the surface cannot be read.
        let offscreen = if capture && !self.surface_copy_src {
            Some(
                self.renderer
                    .context()
                    .create_texture(
                        &wgpu::TextureDescriptor {
                            label: Some("screenshot"),
                            size: wgpu::Extent3d {
                                width: size.0,
                                height: size.1,
                                depth_or_array_layers: 1,
                            },
                            mip_level_count: 1,
                            sample_count: 1,
                            dimension: wgpu::TextureDimension::D2,
                            format: self.config.format,
                            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                                | wgpu::TextureUsages::COPY_SRC,
                            view_formats: &self.config.view_formats,
                        },
                        Category::Other,
                    )
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        let texture = offscreen.as_ref().map_or(&frame.texture, |t| t.texture());
        let view = texture.create_view(&wgpu::TextureViewDescriptor {
            label: Some("mipflow output"),
            format: Some(self.config.format),
            ..Default::default()
        });
        self.apply_budget();
        let input = FrameInput::new(camera)
            .with_debug_mips(self.debug_mips)
            .with_debug_wanted(self.debug_wanted);
        self.stats = *self
            .renderer
            .render(&view, &input)
            .map_err(|e| format!("rendering frame {}: {e}", self.frame + 1))?;
        self.after_render();
        #[cfg(feature = "overlay")]
        self.history
            .record(self.started.elapsed().as_secs_f64(), &self.stats);
        #[cfg(feature = "overlay")]
        if self.overlay_visible {
            let loading =
                (!self.loader.is_done()).then(|| (self.loader.received(), self.loader.total()));
            let oi = overlay::OverlayInput {
                renderer: &self.renderer,
                history: &self.history,
                loading,
                fps: self.fps.fps(),
                output: size,
                budget_origin: self.budget_origin,
                events: &self.events,
                caption: self
                    .story
                    .as_ref()
                    .filter(|_| self.loader.is_done())
                    .map(|s| (s.title.as_str(), s.line.as_str())),
            };
            let overlay_view = texture.create_view(&wgpu::TextureViewDescriptor {
                label: Some("mipflow overlay output"),
                format: Some(self.config.format.remove_srgb_suffix()),
                ..Default::default()
            });
            let actions = self
                .overlay
                .draw(&self.window, &overlay_view, size, &oi)
                .map_err(|e| format!("drawing the overlay: {e}"))?;
            self.apply(actions);
        }
        if capture && let Some(path) = self.opts.args.screenshot.clone() {
            shot::save_png(self.renderer.context(), texture, &path)?;
            self.screenshot_written = true;
            tracing::info!(path = %path.display(), width = size.0, height = size.1, "screenshot saved");
        }
        drop(view);
        self.window.pre_present_notify();
        self.renderer.context().queue().present(frame);
        self.frame += 1;
        if self.opts.args.resize_test && self.frame.is_multiple_of(3) {
            // Sizes the window system will send back as `Resized` events: tiny, odd, larger.
            const SIZES: [(u32, u32); 5] = [(1, 1), (37, 3), (320, 200), (801, 451), (640, 360)];
            let (w, h) = SIZES[(self.frame / 3) as usize % SIZES.len()];
            let _ = self
                .window
                .request_inner_size(winit::dpi::PhysicalSize::new(w, h));
        }
        if !self.first_frame_logged {
            self.first_frame_logged = true;
            tracing::info!(
                ms = format!("{:.0}", self.started.elapsed().as_secs_f64() * 1e3),
                "first frame presented"
            );
        }
        if self.opts.args.monitor
            && self
                .last_monitor
                .is_none_or(|t| t.elapsed().as_secs_f32() >= 1.0)
        {
            self.last_monitor = Some(Instant::now());
            crate::say!(
                "{}",
                crate::headless::monitor_line(
                    self.stats.frame,
                    self.stats.budget_bytes,
                    &self.stats.ledger,
                    self.stats.render_scale
                )
            );
        }
        for e in self.renderer.context().take_uncaptured_errors() {
            tracing::error!(error = %e, "wgpu error");
        }
        if self.loader.is_done() {
            let last = self.is_last_frame();
            self.frames_loaded += 1;
            if last {
                tracing::info!(
                    frames = self.frames_loaded,
                    fps = format!("{:.1}", self.fps.fps()),
                    "frames done"
                );
                el.exit();
            }
        }
        Ok(())
    }

    #[cfg(feature = "overlay")]
    fn apply(&mut self, a: overlay::OverlayActions) {
        if let Some(b) = a.budget {
            self.renderer.set_budget(Budget::bytes(b));
            self.budget_origin = "the overlay's slider";
            // The slider takes over: no story, no automatic budget.
            self.story = None;
            self.auto_budget = false;
        }
        if let Some((lo, hi)) = a.scale_range {
            self.renderer.set_scale_range(lo, hi);
        }
        self.debug_mips = a.debug_mips;
        self.debug_wanted = a.debug_wanted;
        overlay::apply_texture_action(self.renderer.manager_mut(), a.texture);
    }

    fn recreate_surface(&mut self) -> Result<(), String> {
        let instance = self.renderer.context().instance().ok_or_else(|| {
            "the surface was lost and there is no instance to recreate it".to_owned()
        })?;
        self.surface = instance
            .create_surface(self.window.clone())
            .map_err(|e| format!("recreating the lost surface: {e}"))?;
        self.configure();
        Ok(())
    }

    /// While loading (and without the overlay to show it), the title shows the progress.
    fn update_title(&mut self) {
        if self
            .last_title
            .is_some_and(|t| t.elapsed().as_secs_f32() < 0.5)
        {
            return;
        }
        self.last_title = Some(Instant::now());
        let title = if self.loader.is_done() {
            format!(
                "mipflow: {} textures, budget {} ({})",
                self.loader.total() - self.loader.failed(),
                mipflow::format_bytes(self.stats.budget_bytes),
                self.budget_origin
            )
        } else {
            format!(
                "mipflow: loading {}/{} textures",
                self.loader.received(),
                self.loader.total()
            )
        };
        if self.window.title() != title {
            self.window.set_title(&title);
        }
    }
}

#[cfg(test)]
mod tests;
