//! `Renderer::prefetch`: the first view streamed before the first frame is drawn (a loading
//! screen), in game mode (IO never blocks a frame).

use crate::common;

use std::time::Duration;

use glam::{Mat4, Vec3};
use mipflow::Budget;
use mipflow::{Camera, FrameInput, Renderer, RendererConfig};

/// A renderer with eight 256² panels filling the view, and its output texture.
fn scene(budget: u64) -> Option<(Renderer, mipflow::TrackedTexture, Camera)> {
    let ctx = common::gpu()?;
    let mut cfg = RendererConfig::default();
    cfg.budget = Budget::bytes(budget);
    let mut r = Renderer::with_context(ctx, cfg).unwrap();
    let output = r
        .context()
        .create_offscreen_target("output", 640, 360)
        .unwrap();
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi).unwrap();
    for i in 0..8u32 {
        let (_, mat) = common::procedural_material(&mut r, 5, i, 256);
        let (x, y) = ((i % 4) as f32 - 1.5, (i / 4) as f32 - 0.5);
        r.add_instance(mesh, mat, Mat4::from_translation(Vec3::new(x, y, 0.0)))
            .unwrap();
    }
    let camera = Camera::look_at(Vec3::new(0.0, 0.0, 1.6), Vec3::ZERO);
    Some((r, output, camera))
}

#[test]
fn prefetch_brings_the_first_view_in_before_frame_one() {
    let Some((mut r, output, camera)) = scene(64 << 20) else {
        return;
    };
    let p = r
        .prefetch((640, 360), &camera, Duration::from_secs(30))
        .unwrap();
    assert!(p.complete, "{p:?}");
    assert!(p.wanted_mip_bytes > 8 * 1392, "{p:?}");
    assert_eq!(p.resident_mip_bytes, p.wanted_mip_bytes, "{p:?}");
    assert!(p.uploaded_bytes > 0 && p.frames >= 2, "{p:?}");
    // The first frame drawn has every wanted level and streams nothing more.
    let view = output.create_view(&Default::default());
    let stats = *r.render(&view, &FrameInput::new(camera)).unwrap();
    assert_eq!(
        stats.resident_mip_bytes, stats.wanted_mip_bytes,
        "{stats:?}"
    );
    assert_eq!(stats.stream.uploaded_bytes, 0, "{stats:?}");
    assert!(stats.frame_peak_bytes <= 64 << 20);
    assert!(r.context().take_uncaptured_errors().is_empty());
}

#[test]
fn prefetch_stops_when_the_budget_is_full() {
    // 3 MiB: the output, the render targets at the smallest scale and the floors fit, the
    // wanted levels do not all.
    let Some((mut r, _output, camera)) = scene(3 << 20) else {
        return;
    };
    let p = r
        .prefetch((640, 360), &camera, Duration::from_secs(30))
        .unwrap();
    assert!(!p.complete, "{p:?}");
    assert!(p.resident_mip_bytes < p.wanted_mip_bytes, "{p:?}");
    // It gave up because nothing more could come in, long before the timeout (the frames it
    // took depend on how fast the reads come back, so they are not bounded here).
    assert!(p.ms < 20_000.0, "{p:?}");
    let snap = r.context().ledger().snapshot();
    assert!(snap.total_bytes <= 3 << 20, "{snap:?}");
}

#[test]
fn the_guard_band_asks_for_levels_just_outside_the_view() {
    for guard in [1.0f32, 2.0] {
        let Some(ctx) = common::gpu() else { return };
        let mut cfg = RendererConfig::default();
        cfg.budget = Budget::bytes(64 << 20);
        cfg.guard_band = guard;
        let mut r = Renderer::with_context(ctx, cfg).unwrap();
        let (pv, pi) = mipflow::panel(1.0, 1.0);
        let mesh = r.add_mesh(&pv, &pi).unwrap();
        let mut textures = Vec::new();
        // One panel in front of the camera, one just beyond the left edge, one behind it.
        for (i, x) in [(0, 0.0f32), (1, -4.5), (2, 0.0)] {
            let (tex, mat) = common::procedural_material(&mut r, 9, i, 256);
            let z = if i == 2 { 6.0 } else { 0.0 };
            r.add_instance(mesh, mat, Mat4::from_translation(Vec3::new(x, 0.0, z)))
                .unwrap();
            textures.push(tex);
        }
        let camera = Camera::look_at(Vec3::new(0.0, 0.0, 3.0), Vec3::ZERO);
        let p = r
            .prefetch((640, 360), &camera, Duration::from_secs(30))
            .unwrap();
        assert!(p.complete, "{p:?}");
        let plan = r.streamer().plan_textures();
        let (front, side, back) = (
            plan[textures[0].index() as usize],
            plan[textures[1].index() as usize],
            plan[textures[2].index() as usize],
        );
        assert!(front.wanted_level.is_finite() && front.screen_pixels > 0.0);
        // Behind the camera: never asked for.
        assert!(!back.wanted_level.is_finite(), "{back:?}");
        if guard > 1.0 {
            // Outside the view, in the guard band: asked for, at less weight than in view.
            assert!(side.wanted_level.is_finite(), "{side:?}");
            assert!(
                side.screen_pixels < front.screen_pixels,
                "{side:?} {front:?}"
            );
            // ...and streamed in before it comes into view.
            assert_eq!(
                side.resident_level,
                side.wanted_level.max(0.0).floor() as u8,
                "{side:?}"
            );
            assert!(side.resident_level < side.floor_level, "{side:?}");
        } else {
            assert!(!side.wanted_level.is_finite(), "{side:?}");
        }
    }
}

#[test]
fn a_turning_camera_asks_for_what_it_turns_towards() {
    // Guard band off: only the look-ahead can ask for the panel left of the view.
    for turning in [false, true] {
        let Some(ctx) = common::gpu() else { return };
        let mut cfg = RendererConfig::default();
        cfg.budget = Budget::bytes(64 << 20);
        cfg.guard_band = 1.0;
        cfg.stream = cfg.stream.with_deterministic(true);
        let mut r = Renderer::with_context(ctx, cfg).unwrap();
        let output = r
            .context()
            .create_offscreen_target("output", 320, 180)
            .unwrap();
        let view = output.create_view(&Default::default());
        let (pv, pi) = mipflow::panel(1.0, 1.0);
        let mesh = r.add_mesh(&pv, &pi).unwrap();
        let (tex, mat) = common::procedural_material(&mut r, 13, 0, 256);
        // 70 degrees to the left of the initial view direction (-z), 4 units away: outside a
        // 16:9 view with a 60-degree vertical field (about 58 degrees to each side).
        let a = 70f32.to_radians();
        r.add_instance(
            mesh,
            mat,
            Mat4::from_translation(Vec3::new(-4.0 * a.sin(), 0.0, -4.0 * a.cos())),
        )
        .unwrap();
        // Two frames; when turning, 2 degrees left per frame (12 frames ahead: 24 more).
        let mut wanted = f32::INFINITY;
        for f in 0..2 {
            let yaw = if turning {
                (2.0 * f as f32).to_radians()
            } else {
                0.0
            };
            let dir = Vec3::new(-yaw.sin(), 0.0, -yaw.cos());
            let camera = Camera::look_at(Vec3::ZERO, dir);
            r.render(&view, &FrameInput::new(camera)).unwrap();
            wanted = r.streamer().plan_textures()[tex.index() as usize].wanted_level;
        }
        assert_eq!(
            wanted.is_finite(),
            turning,
            "turning {turning}: wanted {wanted}"
        );
    }
}
