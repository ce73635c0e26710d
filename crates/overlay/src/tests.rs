//! The panels' tests (egui run headless).

use super::*;

/// One frame of the side panel on a 1280x720 output with `stats`: the actions it returned.
fn frame(ctx: &egui::Context, panels: &mut MemoryPanels, stats: &FrameStats) -> OverlayActions {
    let history = History::default();
    let mut input = PanelInput::new(stats, &history, &[]);
    input.output = (1280, 720);
    let mut actions = None;
    let raw = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1280.0, 720.0),
        )),
        ..Default::default()
    };
    let mut out = ctx.run_ui(raw, |ui| {
        actions = Some(panels.show_side_panel(ui, &input));
    });
    // No renderer here to take the font atlas.
    out.textures_delta.clear();
    actions.expect("the panel ran")
}

/// At 2 pixels a point, a 1280-pixel output is 640 points wide: the panel takes its
/// smallest width (240), not a third of the pixels (435 points, two thirds of the window),
/// and a 1440-pixel one (720 points) starts collapsed.
#[test]
fn the_panel_is_a_third_of_the_window_in_points() {
    assert_eq!(panel_width(points_wide(1280, 2.0)), 240.0);
    assert_eq!(panel_width(points_wide(1280, 1.0)), 1280.0 * 0.34);
    assert!(points_wide(1440, 2.0) < COLLAPSE_BELOW);
    assert_eq!(points_wide(1280, f32::NAN), 1280);
    assert_eq!(points_wide(1280, 0.0), 1280);
}

/// The budget slider shows the budget in force, set by whoever set it, and a budget outside
/// its range (8 GiB, 8 MiB) is neither clamped nor sent back as the slider's.
#[test]
fn the_budget_slider_follows_the_budget_and_never_clamps_it() {
    let ctx = egui::Context::default();
    let mut panels = MemoryPanels::new(256 << 20, (0.5, 1.0));
    for budget in [8u64 << 30, 8 << 20, 100 << 20] {
        let stats = FrameStats {
            budget_bytes: budget,
            ..Default::default()
        };
        for _ in 0..2 {
            let a = frame(&ctx, &mut panels, &stats);
            assert_eq!(a.budget, None, "{budget}: nothing moved the slider");
        }
        assert_eq!(panels.budget_mib, mib(budget));
    }
}

/// A scale range off the sliders' 1/16 grid or below their range (`--min-scale 0.3`,
/// `0.1`) is shown, not replaced: nothing is sent back until the user moves a slider.
#[test]
fn the_scale_sliders_keep_the_callers_range() {
    let ctx = egui::Context::default();
    for range in [(0.3f32, 0.9f32), (0.1, 1.0), (0.6, 0.6)] {
        let mut panels = MemoryPanels::new(256 << 20, range);
        let stats = FrameStats {
            budget_bytes: 256 << 20,
            ..Default::default()
        };
        for _ in 0..3 {
            let a = frame(&ctx, &mut panels, &stats);
            assert_eq!(a.scale_range, None, "{range:?}: nothing moved a slider");
        }
        assert_eq!((panels.min_scale, panels.max_scale), range);
    }
}

/// Where the text `label` was drawn in the last frame (its centre), if it was.
fn find_text(out: &egui::FullOutput, label: &str) -> Option<egui::Pos2> {
    out.shapes.iter().find_map(|s| match &s.shape {
        egui::Shape::Text(t) if t.galley.text() == label => {
            Some(t.galley.rect.translate(t.pos.to_vec2()).center())
        }
        _ => None,
    })
}

/// The texture table's "pin", "≤L0" (cap) and "keep" buttons send the control for that row's
/// texture, for the caller to apply to its manager.
#[test]
fn the_texture_table_pins_caps_and_keeps_a_texture() {
    let ctx = egui::Context::default();
    let mut panels = MemoryPanels::new(256 << 20, (0.5, 1.0));
    let handle = mipflow::TextureHandle::default();
    let info = TextureInfo {
        index: 0,
        handle,
        label: "wall".into(),
        width: 256,
        height: 256,
        level_count: 9,
        resident_level: 3,
        wanted_level: 0.0,
        in_flight_level: None,
        resident_bytes: 1400,
        error: None,
    };
    panels.set_textures(vec![info]);
    let stats = FrameStats {
        budget_bytes: 256 << 20,
        ..Default::default()
    };
    let history = History::default();
    // Tall enough that the texture table, below the other sections, is on screen.
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 3000.0));
    let mut run = |events: Vec<egui::Event>| {
        let mut input = PanelInput::new(&stats, &history, &[]);
        input.output = (1280, 720);
        let raw = egui::RawInput {
            screen_rect: Some(screen),
            events,
            ..Default::default()
        };
        let mut actions = None;
        let mut out = ctx.run_ui(raw, |ui| actions = Some(panels.show_side_panel(ui, &input)));
        out.textures_delta.clear();
        (actions.expect("ran"), out)
    };
    let click = |pos: egui::Pos2| {
        vec![
            egui::Event::PointerMoved(pos),
            egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed: true,
                modifiers: Default::default(),
            },
            egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed: false,
                modifiers: Default::default(),
            },
        ]
    };
    run(Vec::new());
    let (_, out) = run(Vec::new());
    let pin = find_text(&out, "pin").expect("a pin button");
    let (a, _) = run(click(pin));
    assert_eq!(a.texture, Some(TextureAction::Pin(handle)));
    let (_, out) = run(Vec::new());
    let cap = find_text(&out, "≤L0").expect("a cap button");
    let (a, _) = run(click(cap));
    assert_eq!(
        a.texture,
        Some(TextureAction::Limits {
            handle,
            finest: 1,
            required: None
        })
    );
    let (_, out) = run(Vec::new());
    let keep = find_text(&out, "keep").expect("a keep button");
    let (a, _) = run(click(keep));
    assert_eq!(
        a.texture,
        Some(TextureAction::Limits {
            handle,
            finest: 1,
            required: Some(0)
        })
    );
}
