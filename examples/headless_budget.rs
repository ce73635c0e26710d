//! The budget API with no window: a headless GPU context, a renderer, a few procedural textures
//! in view, and the budget changed while it renders. Prints what the ledger, the planner and
//! the resolution controller did with each budget.
//!
//! ```text
//! cargo run --example headless_budget
//! ```

use glam::{Mat4, Vec3};
use mipflow::Budget;
use mipflow::format_bytes;
use mipflow::{
    Camera, FrameInput, MaterialDesc, Renderer, RendererConfig, TextureOptions, TextureSource,
};
use mipflow::{GpuConfig, GpuContext};
use mipflow_cook::Quality;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::headless(&GpuConfig::default())?;
    println!("adapter: {}", ctx.adapter_name());
    if let Some(m) = ctx.adapter_memory() {
        // Where a budget could come from: a fraction of what the adapter reports.
        let b = Budget::adapter_fraction(0.5, m)?;
        println!(
            "half the adapter's memory would be {}: {}",
            format_bytes(b.current_bytes()),
            b.source().describe()
        );
    }

    // A fixed budget to start; deterministic streaming so every run prints the same figures.
    let mut cfg = RendererConfig::default();
    cfg.budget = Budget::bytes(32 << 20);
    cfg.stream = cfg.stream.with_deterministic(true);
    let mut r = Renderer::with_context(ctx, cfg)?;

    // The output image stands in for a window's surface texture.
    let (w, h) = (480, 270);
    let output = r.context().create_offscreen_target("output", w, h)?;
    let view = output.create_view(&Default::default());

    // Eight textures of 512² on panels filling the view, cooked in memory.
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi)?;
    for (i, spec) in mipflow_cook::procedural::demo_specs(3, 8, 512)
        .into_iter()
        .enumerate()
    {
        let spec = mipflow_cook::procedural::TextureSpec { size: 512, ..spec };
        let bytes = mipflow_cook::procedural::cook_procedural(&spec, Quality::Fast)?;
        let tex = r.add_texture(
            TextureSource::Bytes(bytes.into()),
            TextureOptions::default(),
        )?;
        let mat = r.add_material(MaterialDesc::new(tex))?;
        let (x, y) = ((i % 4) as f32 - 1.5, (i / 4) as f32 - 0.5);
        r.add_instance(mesh, mat, Mat4::from_translation(Vec3::new(x, y, 0.0)))?;
    }
    let camera = Camera::look_at(Vec3::new(0.0, 0.0, 1.3), Vec3::ZERO);

    println!(
        "{:>9} | {:>9} {:>9} {:>9} | {:>6} | {:>10}",
        "budget", "total", "textures", "targets", "scale", "resident"
    );
    let t0 = std::time::Instant::now();
    for mib in [32u64, 10, 7, 5, 32] {
        r.set_budget(Budget::bytes(mib << 20));
        let mut peak = 0;
        let mut last = None;
        for _ in 0..20 {
            let s = *r.render(&view, &FrameInput::new(camera))?;
            peak = peak.max(s.frame_peak_bytes);
            last = Some(s);
        }
        let Some(s) = last else { continue };
        let c = &s.ledger.by_category;
        println!(
            "{:>9} | {:>9} {:>9} {:>9} | {:>6.3} | {:>4.0}% {}",
            format_bytes(s.budget_bytes),
            format_bytes(s.ledger.total_bytes),
            format_bytes(c.textures.bytes),
            format_bytes(c.render_targets.bytes),
            s.render_scale,
            100.0 * s.resident_mip_bytes as f64 / s.wanted_mip_bytes.max(1) as f64,
            if s.budget_too_small {
                "(below the floor)"
            } else {
                ""
            }
        );
        if peak > s.budget_bytes && !s.budget_too_small {
            return Err(
                format!("the ledger passed the budget: {peak} > {}", s.budget_bytes).into(),
            );
        }
    }
    println!("({:.1} s of rendering)", t0.elapsed().as_secs_f32());
    let changes: Vec<String> = r
        .scale_history()
        .map(|(f, from, to, why)| format!("frame {f}: {from:.3} -> {to:.3} ({})", why.name()))
        .collect();
    println!(
        "scale changes: {}",
        if changes.is_empty() {
            "none".to_owned()
        } else {
            changes.join("; ")
        }
    );
    drop(view);
    drop(output);
    r.clear_scene();
    println!(
        "after clear_scene: {} in the ledger",
        format_bytes(r.ledger_snapshot().total_bytes)
    );
    Ok(())
}
