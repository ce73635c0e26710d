//! An open world under one budget, with the game's own renderer (none drawn here): the world is
//! streamed in tiles along a road the camera flies down. Ahead of the camera, a tile's textures
//! are registered in one batch (`BudgetManager::add_textures`: their floors uploaded together);
//! the textures of the tiles near the camera get demand every frame from their bounds, through
//! a view predicted at the streamer's measured latency (`DemandView::with_prediction`,
//! `add_demand_sphere`); behind the camera a tile is unregistered (`remove_texture`). The
//! manager decides which levels are resident, within the budget, every frame.
//!
//! The camera only moves forward here: a game that turns back loads the tiles behind it the
//! same way. Prints a line every 100 frames and a summary; exits with 1 when a frame went over
//! the budget, a texture was refused (an adapter without BC7) or a texture's bytes stayed on
//! the GPU after every tile was unloaded, 2 on bad arguments.
//!
//! ```text
//! cargo run --release --example open_world -- [--frames N] [--tile-textures N]
//!     [--tiles-ahead N] [--side PIXELS] [--budget MIB] [--deterministic]
//! ```

use std::collections::VecDeque;
use std::time::Instant;

use glam::{Mat4, Vec3};
use mipflow::DemandView;
use mipflow::format_bytes;
use mipflow::ktx2::{EncodedTexture, write_ktx2};
use mipflow::{Budget, Category};
use mipflow::{
    BudgetManager, Camera, FrameTiming, ManagerConfig, TextureHandle, TextureOptions, TextureSource,
};
use mipflow::{GpuConfig, GpuContext};

/// Length of a tile along the road (world units), and the camera's speed (units a frame).
const TILE_LENGTH: f32 = 20.0;
const SPEED: f32 = 0.5;
/// The tiles around the camera whose textures get demand: the one behind, the camera's, and
/// the two ahead (what a game's culling would hand over).
const DEMAND_AHEAD: i64 = 2;
const OUTPUT: (u32, u32) = (1280, 720);

struct Options {
    frames: u64,
    tile_textures: usize,
    tiles_ahead: i64,
    side: u32,
    budget_mib: u64,
    /// `--deterministic`: every read lands in frame order, whatever the machine's load (the
    /// figures then do not depend on how fast the IO threads run; tests use it).
    deterministic: bool,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        frames: 600,
        tile_textures: 1000,
        tiles_ahead: 6,
        side: 256,
        budget_mib: 48,
        deterministic: false,
    };
    let mut args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!(
                "open_world [--frames N] [--tile-textures N] [--tiles-ahead N] [--side PIXELS] \
                 [--budget MIB] [--deterministic]\n\nStreams a world in tiles under one budget; exits 1 if a frame \
                 went over it or the world left bytes on the GPU (defaults: 600 frames, tiles of \
                 1000 textures of 256², 6 tiles ahead, 48 MiB)."
            );
            std::process::exit(0);
        }
        if flag == "--deterministic" {
            o.deterministic = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        // A number within `range`, or a message that says which.
        let number = |range: std::ops::RangeInclusive<u64>| {
            value
                .parse::<u64>()
                .ok()
                .filter(|v| range.contains(v))
                .ok_or_else(|| {
                    format!(
                        "{flag}: {value} is not a number from {} to {}",
                        range.start(),
                        range.end()
                    )
                })
        };
        match flag.as_str() {
            "--frames" => o.frames = number(1..=10_000_000)?,
            "--tile-textures" => o.tile_textures = number(2..=100_000)? as usize,
            "--tiles-ahead" => o.tiles_ahead = number(1..=64)? as i64,
            "--side" => {
                o.side = number(4..=4096)? as u32;
                if !o.side.is_power_of_two() {
                    return Err(format!("--side: {value} is not a power of two"));
                }
            }
            "--budget" => o.budget_mib = number(1..=1 << 20)?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(o)
}

/// A BC7 KTX2 file of `side`² with a full mip chain (its blocks are noise: nothing is drawn).
fn texture_file(side: u32) -> std::io::Result<Vec<u8>> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let levels = (0..mipflow::low_level::full_mip_count(side, side))
        .map(|l| {
            let s = (side >> l).max(1);
            (0..mipflow::ktx2::level_size(wgpu::TextureFormat::Bc7RgbaUnorm, s, s))
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect();
    let tex = EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnormSrgb,
        width: side,
        height: side,
        levels,
        key_values: Vec::new(),
    };
    let mut out = Vec::new();
    write_ktx2(&mut out, &tex, None, "mipflow open_world example")?;
    Ok(out)
}

/// A tile of the world: its textures and where each one's panel stands.
struct Tile {
    index: i64,
    panels: Vec<(TextureHandle, Vec3)>,
}

/// Registers tile `index`: its textures on both sides of the road, evenly along the tile.
/// Returns the tile, how many textures were refused and the first refusal's error.
fn load_tile(
    m: &mut BudgetManager,
    source: &TextureSource,
    index: i64,
    n: usize,
) -> (Tile, usize, Option<mipflow::Error>) {
    let handles = m.add_textures((0..n).map(|_| (source.clone(), TextureOptions::default())));
    let step = TILE_LENGTH / n.div_ceil(2) as f32;
    let (mut refused, mut first) = (0, None);
    let mut panels = Vec::with_capacity(n);
    for (i, h) in handles.into_iter().enumerate() {
        match h {
            Ok(h) => {
                let x = if i % 2 == 0 { -3.0 } else { 3.0 };
                let z = -(index as f32) * TILE_LENGTH - (i / 2) as f32 * step;
                panels.push((h, Vec3::new(x, 1.5, z)));
            }
            Err(e) => {
                refused += 1;
                first.get_or_insert(e);
            }
        }
    }
    (Tile { index, panels }, refused, first)
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("open_world: {e}");
            std::process::exit(2);
        }
    };
    match run(&o) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("open_world: {e}");
            std::process::exit(1);
        }
    }
}

/// Flies the road; returns whether every frame stayed within the budget and nothing was left
/// on the GPU after unloading.
fn run(o: &Options) -> Result<bool, Box<dyn std::error::Error>> {
    let ctx = GpuContext::headless(&GpuConfig::default())?;
    let budget = o.budget_mib << 20; // at most 1 TiB: no overflow
    let mut config = ManagerConfig::default();
    config.budget = Budget::bytes(budget);
    config.stream = config.stream.with_deterministic(o.deterministic);
    let mut m = BudgetManager::with_context(ctx, config);
    let source = TextureSource::bytes(texture_file(o.side)?);

    let mut tiles: VecDeque<Tile> = VecDeque::new();
    let (mut loaded, mut unloaded, mut most) = (0usize, 0usize, 0usize);
    let (mut over, mut peak) = (0u64, 0u64);
    let mut frame_us = Vec::with_capacity(o.frames as usize);
    let (mut planner_us, mut upload_ms) = (Vec::with_capacity(o.frames as usize), 0.0f64);
    let (mut uploaded, mut refused, mut loading_us) = (0u64, 0usize, 0.0f64);
    let mut prev: Option<Mat4> = None;
    for f in 0..o.frames {
        let z = -(f as f32) * SPEED;
        let here = (-z / TILE_LENGTH).floor() as i64;
        let camera = Camera::look_at(Vec3::new(0.0, 1.6, z), Vec3::new(0.0, 1.6, z - 10.0));
        let t0 = Instant::now();
        // The world around the camera: the tile behind it to `tiles_ahead` ahead.
        while tiles.front().is_some_and(|t| t.index < here - 1) {
            let tile = tiles.pop_front().expect("a tile");
            for (h, _) in &tile.panels {
                m.remove_texture(*h);
            }
            unloaded += tile.panels.len();
        }
        let next = tiles.back().map_or(here - 1, |t| t.index + 1);
        for index in next..=here + o.tiles_ahead {
            let (tile, n, first) = load_tile(&mut m, &source, index, o.tile_textures);
            if let Some(e) = first
                && refused == 0
            {
                eprintln!("open_world: textures refused (the first: {e})");
            }
            refused += n;
            loaded += tile.panels.len();
            tiles.push_back(tile);
        }
        let loads = t0.elapsed().as_secs_f64() * 1e6;
        most = most.max(tiles.iter().map(|t| t.panels.len()).sum());
        // Demand for the tiles near the camera, from their bounds.
        let mut view = DemandView::new(&camera, OUTPUT).with_guard_band(2.0);
        if let Some(p) = prev {
            view = view.with_prediction(p, m.demand_latency_frames());
        }
        for tile in tiles.iter().filter(|t| t.index <= here + DEMAND_AHEAD) {
            for &(h, center) in &tile.panels {
                m.add_demand_sphere(h, &view, center, 0.7, 1.0);
            }
        }
        let plan = m.frame(OUTPUT, FrameTiming::default())?;
        // (The game draws here, with `plan` and `texture_view`.)
        m.end_frame();
        let stats = m.frame_stats(&plan, FrameTiming::default());
        frame_us.push(t0.elapsed().as_secs_f64() * 1e6);
        loading_us = loading_us.max(loads);
        prev = Some(camera.view);
        peak = peak.max(stats.frame_peak_bytes);
        planner_us.push(f64::from(stats.stream.planner_us));
        upload_ms += f64::from(stats.stream.upload_ms);
        uploaded += stats.stream.uploaded_bytes;
        if stats.frame_peak_bytes > stats.budget_bytes {
            over += 1;
        }
        if f % 100 == 0 {
            println!(
                "frame {f}: tile {here}, {} textures registered, textures {} (wanted levels resident: {}), total {} of {}",
                tiles.iter().map(|t| t.panels.len()).sum::<usize>(),
                format_bytes(stats.ledger.by_category.get(Category::Textures).bytes),
                format_bytes(stats.resident_mip_bytes),
                format_bytes(stats.ledger.total_bytes),
                format_bytes(stats.budget_bytes),
            );
        }
    }

    // Unload the world: every texture's bytes leave the GPU (and the ledger).
    for tile in tiles.drain(..) {
        for (h, _) in &tile.panels {
            m.remove_texture(*h);
        }
        unloaded += tile.panels.len();
    }
    for _ in 0..4 {
        let plan = m.frame(OUTPUT, FrameTiming::default())?;
        std::hint::black_box(&plan);
        m.end_frame();
    }
    m.context().wait_idle()?;
    // Every texture allocation still alive, but the manager's own 1x1 fallback (drawn for a
    // texture with nothing resident, made at the first registration and kept).
    let left: u64 = m
        .context()
        .ledger()
        .live_allocations()
        .iter()
        .filter(|a| a.category == Category::Textures && a.label != "missing-texture fallback")
        .map(|a| a.bytes)
        .sum();
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let (p50, p95, max) = (
        pct(&mut frame_us, 0.5),
        pct(&mut frame_us, 0.95),
        pct(&mut frame_us, 1.0),
    );
    let planner = pct(&mut planner_us, 0.5);
    println!(
        "open_world: {} frames, {loaded} textures registered ({most} at once, {unloaded} unloaded), \
         {refused} refused, peak {} of {}, {over} frames over budget, frame p50 {p50:.0} µs \
         p95 {p95:.0} µs max {max:.0} µs (a frame's tile registrations at most \
         {loading_us:.0} µs; planner p50 {planner:.0} µs; levels streamed: {} uploaded in \
         {upload_ms:.0} ms), world texture bytes left after unloading: {left}",
        o.frames,
        format_bytes(peak),
        format_bytes(budget),
        format_bytes(uploaded),
    );
    Ok(over == 0 && left == 0 && refused == 0 && loaded > 0)
}
