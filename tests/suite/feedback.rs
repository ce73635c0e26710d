//! GPU feedback on lavapipe: (1) a texture hidden behind an opaque wall is not streamed above
//! its floor with feedback on, and is with feedback off (the CPU estimate cannot see the wall);
//! (3) the levels feedback records agree with the levels the sampler used (a texture whose every
//! mip is a different flat colour, read back) within one level on >= 95% of the pixels; (4) no
//! frame waits for its readback: every frame uses an earlier frame's feedback.
//! (5) the cost follows the slots drawn: only their bins are copied back, exactly.
//! (2) a grazing wall whose near edge alone asks for level 0 is kept coarser with histogram
//! demand than with the CPU estimate, with the picture within 40 dB of the all-resident one.
//! (6) a material's `uv_scale` is drawn as its demand prices it (the sampler's level moves by
//! log2 of the repeat).

use crate::common;

use glam::{Mat4, Quat, Vec3};
use mipflow::Budget;
use mipflow::FeedbackConfig;
use mipflow::Upscaler;
use mipflow::Vertex;
use mipflow::{
    Camera, FrameInput, MaterialDesc, Renderer, RendererConfig, TextureOptions, TextureSource,
};

fn renderer(feedback: bool, anisotropy: u16, budget: u64) -> Option<Renderer> {
    let ctx = common::gpu()?;
    let mut c = RendererConfig::default();
    c.budget = Budget::bytes(budget);
    c.stream = c.stream.with_deterministic(true);
    c.upscaler = Upscaler::Bilinear;
    c.anisotropy = anisotropy;
    c.feedback = if feedback {
        FeedbackConfig::default()
    } else {
        FeedbackConfig::off()
    };
    let mut r = Renderer::with_context(ctx, c).unwrap();
    r.set_scale_range(1.0, 1.0);
    Some(r)
}

fn level_of(r: &Renderer, t: mipflow::TextureHandle) -> (u8, u8) {
    let infos = r.streamer().texture_infos();
    let i = infos.iter().find(|i| i.index == t.index()).unwrap();
    (i.resident_level, i.level_count)
}

/// A 1024² texture right behind a 6 m wall 1 m in front of the camera, both close enough that
/// the CPU estimate (nearest point of the bounding sphere) wants level 0 of both: the wall hides
/// the other texture. First under a roomy budget (where both stream in the first frames, before
/// any feedback can have come back), then under one that holds the wall in full and the other
/// texture's floor, and no more. Returns the hidden texture's level, its floor, the wall's level
/// and the hidden texture's demand (pixels) at the end.
fn hidden_texture(feedback: bool) -> Option<(u8, u8, u8, f32)> {
    let WallScene {
        mut r,
        _out,
        view,
        input,
        hidden,
        wall,
        ..
    } = wall_scene(feedback)?;
    let count = level_of(&r, hidden).1;
    let floor =
        mipflow::low_level::PlanTexture::floor_for(1024, 1024, 32, count, u16::MAX).unwrap();
    let level_bytes = |l: u8| {
        let s = (1024u32 >> l).max(1);
        mipflow::low_level::level_bytes(wgpu::TextureFormat::Bc7RgbaUnormSrgb, s, s).unwrap()
    };
    // The hidden texture's bytes above its floor now: with feedback, deterministic streaming
    // waits for each readback, so the hidden texture may be known hidden before any of its
    // levels land; without, the CPU estimate streamed it like the wall.
    let above_floor: u64 = (level_of(&r, hidden).0..floor).map(level_bytes).sum();
    if !feedback {
        assert!(above_floor > 0, "feedback off: streamed like the wall");
    }
    // The budget from here: what is in use, less those bytes, plus the staging headroom
    // (256 KiB at this size) and a little slack.
    assert_eq!(level_of(&r, wall).0, 0);
    let snap = r.context().ledger().snapshot();
    let budget =
        snap.total_bytes - snap.by_category.staging.bytes - above_floor + (256 << 10) + (16 << 10);
    r.set_budget(Budget::bytes(budget));
    for _ in 0..40 {
        r.render(&view, &input).unwrap();
    }
    let level = level_of(&r, hidden).0;
    if feedback {
        let s = r.stats().feedback;
        assert!(s.latency_frames.is_some_and(|l| l >= 1), "{s:?}");
        assert!(
            s.pixels > 10_000.0,
            "the wall's pixels are in the feedback: {s:?}"
        );
    }
    let demand = r.manager().plan_textures()[hidden.index() as usize].screen_pixels;
    Some((level, floor, level_of(&r, wall).0, demand))
}

#[test]
fn a_texture_hidden_behind_a_wall_stays_at_its_floor_with_feedback() {
    let Some((on, floor, wall_on, demand_on)) = hidden_texture(true) else {
        return;
    };
    let (off, _, wall_off, demand_off) = hidden_texture(false).unwrap();
    // Feedback off: the CPU estimate cannot see the wall; it wants level 0 of both, and the
    // hidden texture keeps levels above its floor under the same pressure.
    assert!(demand_off > 0.0, "feedback off: {demand_off} px");
    assert!(
        off < floor,
        "feedback off: the hidden texture keeps levels ({off}; wall {wall_off})"
    );
    // Feedback on: no pixel of it was drawn, so no demand, nothing above its floor; the wall
    // it hides behind in full.
    assert_eq!(
        demand_on, 0.0,
        "feedback on: no demand for a hidden texture"
    );
    assert_eq!(on, floor, "feedback on: nothing above the floor");
    assert_eq!(wall_on, 0, "the wall it hides behind is streamed in full");
}

/// A texture whose mip `l` is one flat colour of `COLOURS[l]`: saturated hues around the
/// colour wheel, so that neighbouring levels (which trilinear filtering blends) are neighbours.
const COLOURS: [[u8; 3]; 10] = [
    [255, 0, 0],
    [255, 160, 0],
    [200, 255, 0],
    [0, 255, 40],
    [0, 255, 200],
    [0, 140, 255],
    [30, 0, 255],
    [170, 0, 255],
    [255, 0, 200],
    [255, 0, 80],
];

fn mip_coloured(size: u32) -> Vec<u8> {
    flat_levels(size, |l| COLOURS[l % COLOURS.len()])
}

/// A `size`² BC7 KTX2 whose level `l` is one flat colour `colour(l)`.
fn flat_levels(size: u32, colour: impl Fn(usize) -> [u8; 3]) -> Vec<u8> {
    let enc = mipflow_cook::encoder_for(mipflow_cook::Quality::Fast);
    let count = mipflow::low_level::full_mip_count(size, size);
    let levels = (0..count)
        .map(|l| {
            let s = (size >> l).max(1);
            let c = colour(l as usize);
            let px: Vec<u8> = (0..s * s).flat_map(|_| [c[0], c[1], c[2], 255]).collect();
            mipflow_cook::encode_level(enc.as_ref(), &px, s, s, false).unwrap()
        })
        .collect();
    let tex = mipflow::ktx2::EncodedTexture {
        format: wgpu::TextureFormat::Bc7RgbaUnorm,
        width: size,
        height: size,
        levels,
        key_values: Vec::new(),
    };
    let mut out = Vec::new();
    mipflow::ktx2::write_ktx2(&mut out, &tex, None, "feedback test").unwrap();
    out
}

/// The level whose colour points the same way as `p` (lighting scales colours, not hues);
/// `None` for the background (grey: no hue).
fn classify(p: &[u8]) -> Option<usize> {
    let v = Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    if v.max_element() - v.min_element() < 40.0 {
        return None;
    }
    let v = v.normalize();
    (0..COLOURS.len()).max_by(|&a, &b| {
        let d = |i: usize| {
            let c = COLOURS[i];
            Vec3::new(f32::from(c[0]), f32::from(c[1]), f32::from(c[2]))
                .normalize()
                .dot(v)
        };
        d(a).total_cmp(&d(b))
    })
}

/// A floor 8 m wide and 40 m long, the texture repeating every 2 m: a grazing view spans many
/// levels from the bottom of the image to the horizon.
fn floor_mesh(r: &mut Renderer) -> mipflow::MeshHandle {
    let v = |x: f32, z: f32, u: f32, t: f32| Vertex {
        position: [x, 0.0, z],
        normal: [0.0, 1.0, 0.0],
        uv: [u, t],
    };
    let verts = [
        v(-4.0, 0.0, 0.0, 0.0),
        v(4.0, 0.0, 4.0, 0.0),
        v(4.0, -40.0, 4.0, 20.0),
        v(-4.0, -40.0, 0.0, 20.0),
    ];
    r.add_mesh(&verts, &[0, 1, 2, 0, 2, 3]).unwrap()
}

#[test]
fn feedback_levels_agree_with_the_levels_the_sampler_used() {
    let Some(mut r) = renderer(true, 1, 96 << 20) else {
        return;
    };
    let (w, h) = (320u32, 180u32);
    let out = r.context().create_offscreen_target("fb", w, h).unwrap();
    let view = out.create_view(&Default::default());
    let mesh = floor_mesh(&mut r);
    let tex = r
        .add_texture(
            TextureSource::bytes(mip_coloured(512)),
            TextureOptions::default(),
        )
        .unwrap();
    let mat = r.add_material(MaterialDesc::new(tex)).unwrap();
    r.add_instance(mesh, mat, Mat4::IDENTITY).unwrap();
    let input = FrameInput::new(Camera::look_at(
        Vec3::new(0.0, 1.2, 0.5),
        Vec3::new(0.0, 0.0, -6.0),
    ));
    for _ in 0..30 {
        r.render(&view, &input).unwrap();
    }
    let (resident, _) = level_of(&r, tex);
    assert_eq!(
        resident, 0,
        "every level resident, so the sampler picks freely"
    );
    r.context().wait_idle().unwrap();
    let px = mipflow::read_texture_rgba8(r.context(), out.texture()).unwrap();
    let mut used = [0f64; 16];
    for p in px.chunks_exact(4) {
        if let Some(l) = classify(p) {
            used[l] += 1.0;
        }
    }
    let fb = *r
        .feedback()
        .histogram(tex.index())
        .expect("feedback for the floor");
    let (fb_total, used_total) = (
        fb.iter().map(|&x| f64::from(x)).sum::<f64>(),
        used.iter().sum::<f64>(),
    );
    assert!(
        used_total > f64::from(w * h) / 4.0,
        "the floor fills the bottom of the image"
    );
    assert!(fb_total > 0.0);
    // Each level feedback reports is matched by pixels the sampler drew within one level.
    let mut matched = 0.0;
    for (l, &f) in fb.iter().enumerate() {
        let near: f64 = (l.saturating_sub(1)..=(l + 1).min(15))
            .map(|k| used[k] / used_total)
            .sum();
        matched += (f64::from(f) / fb_total).min(near);
    }
    let levels_used = used.iter().filter(|&&n| n > used_total * 0.02).count();
    eprintln!("feedback {fb:?}\nsampled  {used:?}\nmatched {matched:.3}");
    assert!(levels_used >= 3, "the floor spans several levels: {used:?}");
    assert!(matched >= 0.95, "{matched:.3}");
    // Never waited for: the frame used an earlier frame's feedback.
    let s = r.stats().feedback;
    assert!(
        s.latency_frames.is_some_and(|l| (1..=3).contains(&l)),
        "{s:?}"
    );
}

/// How the grazing-wall scene is streamed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Grazing {
    /// Every level of both textures resident (the reference picture).
    Resident,
    /// Streamed, demand from the CPU estimate (feedback off).
    CpuEstimate,
    /// Streamed, the GPU's histograms price each level by its pixels.
    Histograms,
}

/// A 2048² wall along the left at a grazing angle, its near edge 0.4 m from the eye (those few
/// pixels want level 0), and a 512² panel face on at the right: 640x360, 50 frames of a still
/// camera. Returns the picture, the wall's and the panel's resident levels and the ledger's
/// total.
fn grazing_scene(mode: Grazing, budget: u64) -> Option<(Vec<u8>, u8, u8, u64)> {
    let ctx = common::gpu()?;
    let mut c = RendererConfig::default();
    c.budget = Budget::bytes(budget);
    c.stream = c.stream.with_deterministic(true);
    c.upscaler = Upscaler::Bilinear;
    c.anisotropy = 1;
    c.feedback = match mode {
        Grazing::Histograms => {
            let mut f = FeedbackConfig::default();
            f.histograms = true;
            f
        }
        _ => FeedbackConfig::off(),
    };
    let mut r = Renderer::with_context(ctx, c).unwrap();
    r.set_scale_range(1.0, 1.0);
    let (w, h) = (640u32, 360u32);
    let out = r
        .context()
        .create_offscreen_target("grazing", w, h)
        .unwrap();
    let view = out.create_view(&Default::default());
    let texture = |r: &mut Renderer, i: u32, size: u32| {
        let spec = mipflow_cook::procedural::TextureSpec {
            size,
            ..mipflow_cook::procedural::demo_specs(9, i + 1, size)[i as usize].clone()
        };
        let bytes =
            mipflow_cook::procedural::cook_procedural(&spec, mipflow_cook::Quality::Fast).unwrap();
        let source = TextureSource::Bytes(bytes.into());
        if mode == Grazing::Resident {
            let limits = mipflow::ktx2::ReadLimits::default();
            let tex = mipflow::low_level::load_resident(r.context(), &source, &limits).unwrap();
            r.add_resident_texture(tex, "resident")
        } else {
            r.add_texture(source, TextureOptions::default()).unwrap()
        }
    };
    let wall_tex = texture(&mut r, 1, 2048);
    let panel_tex = texture(&mut r, 0, 512);
    // The wall: the plane x = -1, from 0.4 m to 24 m ahead, 3 m tall; the texture repeats every
    // 3 m along it.
    let v = |z: f32, y: f32, u: f32, t: f32| Vertex {
        position: [-1.0, y, z],
        normal: [1.0, 0.0, 0.0],
        uv: [u, t],
    };
    let wall = [
        v(-0.4, -1.5, 0.0, 1.0),
        v(-24.0, -1.5, 8.0, 1.0),
        v(-24.0, 1.5, 8.0, 0.0),
        v(-0.4, 1.5, 0.0, 0.0),
    ];
    let wall_mesh = r.add_mesh(&wall, &[0, 1, 2, 0, 2, 3]).unwrap();
    let wall_mat = r.add_material(MaterialDesc::new(wall_tex)).unwrap();
    r.add_instance(wall_mesh, wall_mat, Mat4::IDENTITY).unwrap();
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let panel_mesh = r.add_mesh(&pv, &pi).unwrap();
    let panel_mat = r.add_material(MaterialDesc::new(panel_tex)).unwrap();
    r.add_instance(
        panel_mesh,
        panel_mat,
        Mat4::from_scale_rotation_translation(
            Vec3::splat(1.6),
            Quat::IDENTITY,
            Vec3::new(1.0, 0.0, -3.0),
        ),
    )
    .unwrap();
    let input = FrameInput::new(Camera::look_at(Vec3::ZERO, Vec3::new(0.0, 0.0, -4.0)));
    for _ in 0..50 {
        r.render(&view, &input).unwrap();
    }
    r.context().wait_idle().unwrap();
    let px = mipflow::read_texture_rgba8(r.context(), out.texture()).unwrap();
    let level = |t| {
        if mode == Grazing::Resident {
            0
        } else {
            level_of(&r, t).0
        }
    };
    let total = r.context().ledger().total_bytes();
    Some((px, level(wall_tex), level(panel_tex), total))
}

/// (2) Under a 12 MiB budget that just holds the wall's level 0 (4 MiB), the CPU estimate (the
/// nearest point of the wall's bounding sphere, 0.4 m away) streams it; the GPU's histograms know
/// that the sampler draws no pixel from it (at a grazing angle the footprint's long axis picks a
/// coarser level) and keep the wall coarser, 3 MiB and more less in use, and the picture stays
/// within 40 dB of the all-resident one.
#[test]
fn a_grazing_wall_gets_a_coarser_level_with_histograms_at_no_visible_cost() {
    let Some((reference, ..)) = grazing_scene(Grazing::Resident, 1 << 40) else {
        return;
    };
    let budget = 12 << 20;
    let (cpu_img, cpu_wall, cpu_panel, cpu_total) =
        grazing_scene(Grazing::CpuEstimate, budget).unwrap();
    let (img, wall, panel, total) = grazing_scene(Grazing::Histograms, budget).unwrap();
    let psnr = |img: &[u8]| mipflow_cook::compare::psnr_rgb(&reference, img).min(100.0);
    let (cpu_psnr, hist_psnr) = (psnr(&cpu_img), psnr(&img));
    eprintln!(
        "CPU estimate: wall level {cpu_wall}, panel {cpu_panel}, {} KiB, {cpu_psnr:.2} dB\n\
         histograms:   wall level {wall}, panel {panel}, {} KiB, {hist_psnr:.2} dB",
        cpu_total >> 10,
        total >> 10
    );
    assert_eq!(cpu_wall, 0, "the CPU estimate wants the wall's level 0");
    assert!(wall > cpu_wall, "histograms: a coarser wall ({wall})");
    assert!(panel <= cpu_panel, "the panel keeps its level");
    assert!(
        total + (3 << 20) <= cpu_total,
        "histograms: {total} B in use against {cpu_total}"
    );
    assert!(hist_psnr >= 40.0, "{hist_psnr:.2} dB against all-resident");
}

/// The debug views' colours for levels 0..=6 (`mip_colour` in textured.wgsl), less their grey.
const DEBUG_HUES: [[f32; 3]; 7] = [
    [0.9, 0.0, 0.0],
    [0.9, 0.5, 0.0],
    [0.9, 0.9, 0.0],
    [0.0, 0.8, 0.0],
    [0.0, 0.8, 0.9],
    [0.0, 0.1, 0.8],
    [0.5, 0.0, 0.8],
];

/// The debug level a pixel shows (`None`: no hue, the background).
fn debug_level(p: &[u8]) -> Option<usize> {
    let v = Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    if v.max_element() - v.min_element() < 30.0 {
        return None;
    }
    let v = (v - Vec3::splat(v.min_element())).normalize();
    (0..DEBUG_HUES.len()).max_by(|&a, &b| {
        let d = |i: usize| Vec3::from(DEBUG_HUES[i]).normalize().dot(v);
        d(a).total_cmp(&d(b))
    })
}

/// The debug views name levels of the full chain: with the floor's texture held at level 2 by
/// the budget, "the level sampled" shows nothing finer than 2, and "the level wanted" (what
/// feedback records) shows the finer levels the near floor asks for.
#[test]
fn debug_views_show_the_level_sampled_and_the_level_wanted() {
    let Some(mut r) = renderer(true, 1, 96 << 20) else {
        return;
    };
    let (w, h) = (320u32, 180u32);
    let out = r.context().create_offscreen_target("dbg", w, h).unwrap();
    let view = out.create_view(&Default::default());
    let mesh = floor_mesh(&mut r);
    // A grey texture: the debug colours alone carry the hue.
    let bytes = flat_levels(512, |_| [150, 150, 150]);
    let tex = r
        .add_texture(TextureSource::bytes(bytes), TextureOptions::default())
        .unwrap();
    let mat = r.add_material(MaterialDesc::new(tex)).unwrap();
    r.add_instance(mesh, mat, Mat4::IDENTITY).unwrap();
    let camera = Camera::look_at(Vec3::new(0.0, 1.2, 0.5), Vec3::new(0.0, 0.0, -6.0));
    for _ in 0..20 {
        r.render(&view, &FrameInput::new(camera)).unwrap();
    }
    assert_eq!(level_of(&r, tex).0, 0);
    // A budget without levels 0 and 1 (256 + 64 KiB).
    let snap = r.context().ledger().snapshot();
    let budget = snap.total_bytes - snap.by_category.staging.bytes - (320 << 10) + (256 << 10);
    r.set_budget(Budget::bytes(budget));
    for _ in 0..20 {
        r.render(&view, &FrameInput::new(camera)).unwrap();
    }
    let top = level_of(&r, tex).0 as usize;
    assert!(
        top >= 1,
        "the budget holds the texture below level 0: {top}"
    );
    let histogram = |input: FrameInput, r: &mut Renderer| {
        r.render(&view, &input).unwrap();
        r.context().wait_idle().unwrap();
        let px = mipflow::read_texture_rgba8(r.context(), out.texture()).unwrap();
        let mut n = [0u32; 7];
        for p in px.chunks_exact(4) {
            if let Some(l) = debug_level(p) {
                n[l] += 1;
            }
        }
        n
    };
    let sampled = histogram(FrameInput::new(camera).with_debug_mips(true), &mut r);
    let wanted = histogram(FrameInput::new(camera).with_debug_wanted(true), &mut r);
    eprintln!("top {top}: sampled {sampled:?}, wanted {wanted:?}");
    let finer = |n: &[u32; 7]| n[..top].iter().sum::<u32>();
    let total = |n: &[u32; 7]| n.iter().sum::<u32>();
    assert!(total(&sampled) > w * h / 4 && total(&wanted) > w * h / 4);
    assert!(
        finer(&sampled) * 100 < total(&sampled),
        "sampled: nothing finer than the resident top {top}: {sampled:?}"
    );
    assert!(
        finer(&wanted) * 10 > total(&wanted),
        "wanted: the near floor asks for finer levels than {top}: {wanted:?}"
    );
}

/// The histogram of `slot` (every slot below the slots registered has one).
fn hist(fb: &mipflow::Feedback, slot: u32) -> [f32; 16] {
    *fb.histogram(slot)
        .expect("a histogram for every slot below the slots")
}

/// Every drawn slot of set `a` (`k * stride`) and of set `b` (`k * stride + 1`) holds
/// `pixels[0]` and `pixels[1]` at level 4 and nothing at any other level.
fn level_4(fb: &mipflow::Feedback, blocks: u32, stride: u32, pixels: [f32; 2]) {
    for k in 0..blocks {
        for (set, &p) in pixels.iter().enumerate() {
            let slot = k * stride + set as u32;
            let mut want = [0.0f32; 16];
            want[4] = p;
            assert_eq!(hist(fb, slot), want, "slot {slot}");
        }
    }
}

/// One frame of [`RecordPass`] recording into `fb`: begin (reads the last frame's readback
/// back), draw, gather and copy back, submit, wait until the readback is mapped.
fn record_frame(
    ctx: &mipflow::GpuContext,
    fb: &mut mipflow::Feedback,
    pass: &mipflow::testing::feedback_pass::RecordPass,
    frame: u64,
    slots: u32,
    stride_offset: (u32, u32),
) {
    fb.begin_frame(ctx, frame, slots).unwrap();
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    pass.draw(ctx, &mut enc, fb, stride_offset.0, stride_offset.1);
    fb.resolve(ctx, &mut enc, 1.0).unwrap();
    ctx.queue().submit([enc.finish()]);
    fb.after_submit();
    ctx.wait_idle().unwrap();
    let _ = ctx.device().poll(wgpu::PollType::Poll);
}

/// (5) Feedback's cost follows the slots a frame draws, not the slots registered: with 50,000
/// slots and 256 drawn, a frame copies back the drawn slots' bins alone (not 50,000 x 64
/// bytes); a frame that draws more slots than its readback holds is not used and the next ones
/// make room; every drawn slot's histogram is exactly its one recorded pixel (one in each 8x8
/// block, 64 output pixels, at level log2(2048 / 128) = 4); a slot not drawn again fades by the
/// smoothing; and the bins are zeroed between frames (a slot drawn again counts one pixel, not
/// two).
#[test]
fn feedback_copies_back_the_slots_drawn_not_the_slots_registered() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let slots = 50_000;
    let mut config = FeedbackConfig::default();
    config.readback_slots = 64;
    let mut fb = mipflow::Feedback::new(&ctx, config, slots).unwrap();
    let pass = mipflow::testing::feedback_pass::RecordPass::new(&ctx, &fb, 128).unwrap();
    let blocks = pass.blocks();
    assert_eq!(blocks, 256);
    let (stride, a, b) = ((slots / blocks), (slots / blocks, 0), (slots / blocks, 1));
    let entry_bytes = 4 * 17;

    // Frame 0 draws set `a` (256 slots) with room for 64: copied back, but not used.
    record_frame(&ctx, &mut fb, &pass, 0, slots, a);
    assert_eq!(fb.stats().readback_bytes, 4 + 64 * entry_bytes);
    // Frame 1 reads frame 0's readback: too many slots, so none is used; room for 256 now.
    record_frame(&ctx, &mut fb, &pass, 1, slots, a);
    let stats = fb.stats();
    assert_eq!(stats.overflowed, 1, "{stats:?}");
    assert_eq!(fb.latest_frame(), None, "the overflowed frame was used");
    assert_eq!(stats.readback_bytes, 4 + 256 * entry_bytes);
    assert!(
        stats.readback_bytes * 100 < u64::from(slots) * 64,
        "{stats:?}"
    );
    // Frame 2 reads frame 1's: every drawn slot holds 64 pixels at level 4, nothing else.
    record_frame(&ctx, &mut fb, &pass, 2, slots, b);
    assert_eq!(fb.latest_frame(), Some(1));

    let one_pixel = {
        let mut h = [0.0f32; 16];
        h[4] = 64.0;
        h
    };
    for k in 0..blocks {
        assert_eq!(hist(&fb, k * stride), one_pixel, "slot {}", k * stride);
        assert_eq!(
            hist(&fb, k * stride + 1),
            [0.0; 16],
            "slot {}",
            k * stride + 1
        );
    }
    assert_eq!(fb.stats().pixels, 256.0 * 64.0);
    // Frame 3 reads frame 2's (set `b`): `a` fades by the smoothing (64 -> 48), `b` is new.
    record_frame(&ctx, &mut fb, &pass, 3, slots, a);
    level_4(&fb, blocks, stride, [48.0, 64.0]);
    // Frame 4 reads frame 3's (`a` again): one pixel each, 48 -> 52 (two pixels, had its bins
    // not been zeroed after frame 0 or 1: 48 -> 68). A second `resolve` in a frame does
    // nothing: frame 4's counts land with frame 4, checked by frame 5.
    fb.begin_frame(&ctx, 4, slots).unwrap();
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    pass.draw(&ctx, &mut enc, &fb, b.0, b.1);
    fb.resolve(&ctx, &mut enc, 1.0).unwrap();
    assert_eq!(fb.stats().readback_bytes, 4 + 256 * entry_bytes);
    fb.resolve(&ctx, &mut enc, 1.0).unwrap();
    assert_eq!(fb.stats().readback_bytes, 0, "a second resolve copied back");
    ctx.queue().submit([enc.finish()]);
    fb.after_submit();
    ctx.wait_idle().unwrap();
    level_4(&fb, blocks, stride, [52.0, 48.0]);
    record_frame(&ctx, &mut fb, &pass, 5, slots, a);
    assert_eq!(fb.latest_frame(), Some(4));
    level_4(&fb, blocks, stride, [39.0, 52.0]);
    assert_eq!(fb.stats().overflowed, 1);
    assert_eq!(fb.stats().skipped, 0);
    assert_eq!(ctx.take_uncaptured_errors(), Vec::<String>::new());
}

/// (6) A slot count past what one storage binding may hold (the bins take 72 bytes a slot), or
/// past any buffer: a typed error (not a panic, not a wgpu validation error), that frame
/// records and copies back nothing, and the next frame with a sane count records exactly as
/// before.
#[test]
fn feedback_refuses_slots_past_the_device_and_keeps_working() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut fb = mipflow::Feedback::new(&ctx, FeedbackConfig::default(), 256).unwrap();
    let pass = mipflow::testing::feedback_pass::RecordPass::new(&ctx, &fb, 128).unwrap();
    // Feedback in use first: the refusal drops it (nothing will refresh it; a texture seen as
    // hidden must not stay so).
    record_frame(&ctx, &mut fb, &pass, 0, 256, (1, 0));
    record_frame(&ctx, &mut fb, &pass, 1, 256, (1, 0));
    assert_eq!(fb.latest_frame(), Some(0));
    // A count that fits one binding only when not rounded up to a power of two: taken.
    let binding = ctx.device().limits().max_storage_buffer_binding_size;
    let fits = ((binding / 4 - 1) / 18) as u32;
    if !fits.is_power_of_two() {
        fb.begin_frame(&ctx, 2, fits).unwrap();
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        fb.resolve(&ctx, &mut enc, 1.0).unwrap();
        ctx.queue().submit([enc.finish()]);
        fb.after_submit();
        ctx.wait_idle().unwrap();
    }
    // Past one binding (64 bytes a slot would fit, 72 do not), then past any
    // buffer at all.
    let binding = ctx.device().limits().max_storage_buffer_binding_size;
    for slots in [(binding / 64) as u32, 3_000_000_000] {
        let err = fb.begin_frame(&ctx, 3, slots).unwrap_err();
        assert!(
            matches!(err, mipflow::Error::InvalidResource { .. }),
            "{slots} slots: {err}"
        );
        assert_eq!(fb.latest_frame(), None);
        assert!(fb.histogram(0).is_none());
    }
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    pass.draw(&ctx, &mut enc, &fb, 1, 0);
    fb.resolve(&ctx, &mut enc, 1.0).unwrap();
    assert_eq!(fb.stats().readback_bytes, 0);
    ctx.queue().submit([enc.finish()]);
    fb.after_submit();
    ctx.wait_idle().unwrap();
    record_frame(&ctx, &mut fb, &pass, 4, 256, (1, 0));
    record_frame(&ctx, &mut fb, &pass, 5, 256, (1, 0));
    assert_eq!(fb.latest_frame(), Some(4));
    for s in 0..256 {
        assert_eq!(hist(&fb, s)[4], 64.0, "slot {s}");
    }
    assert_eq!(ctx.take_uncaptured_errors(), Vec::<String>::new());
}

/// A texture hidden behind a wall is removed, and a new texture takes its slot in front of the
/// wall: in its first frame it gets the CPU estimate's demand, not the verdict of the old
/// texture's records (hidden: no pixels, kept at its floor until its own records came back).
#[test]
fn a_new_texture_in_a_reused_slot_is_not_judged_by_the_old_ones_feedback() {
    let Some(WallScene {
        mut r,
        _out,
        view,
        input,
        mesh,
        hidden,
        hidden_instance: hi,
        ..
    }) = wall_scene(true)
    else {
        return;
    };
    let slot = hidden.index() as usize;
    assert_eq!(
        r.manager().plan_textures()[slot].screen_pixels,
        0.0,
        "judged hidden by its feedback"
    );
    assert!(r.remove_instance(hi));
    assert!(r.remove_texture(hidden));
    let (fresh, fm) = common::procedural_material(&mut r, 5, 2, 1024);
    assert_eq!(fresh.index(), hidden.index(), "the slot is reused");
    r.add_instance(mesh, fm, at(2.0, -0.5)).unwrap();
    r.render(&view, &input).unwrap();
    let p = r.manager().plan_textures()[slot];
    assert!(
        p.screen_pixels > 1000.0 && p.wanted_level < 2.0,
        "in front of the wall, in its first frame: {} px at level {}",
        p.screen_pixels,
        p.wanted_level
    );
}

/// The scene of [`hidden_texture`] after its first 40 frames under a roomy budget.
struct WallScene {
    r: Renderer,
    _out: mipflow::TrackedTexture,
    view: wgpu::TextureView,
    input: FrameInput,
    mesh: mipflow::MeshHandle,
    hidden: mipflow::TextureHandle,
    hidden_instance: mipflow::InstanceHandle,
    wall: mipflow::TextureHandle,
}

/// A panel at `z`, `scale` wide.
fn at(scale: f32, z: f32) -> Mat4 {
    Mat4::from_scale_rotation_translation(
        Vec3::splat(scale),
        Quat::IDENTITY,
        Vec3::new(0.0, 0.0, z),
    )
}

fn wall_scene(feedback: bool) -> Option<WallScene> {
    let mut r = renderer(feedback, 1, 96 << 20)?;
    let out = r.context().create_offscreen_target("fb", 320, 180).unwrap();
    let view = out.create_view(&Default::default());
    let (pv, pi) = mipflow::panel(1.0, 1.0);
    let mesh = r.add_mesh(&pv, &pi).unwrap();
    let (hidden, hm) = common::procedural_material(&mut r, 5, 0, 1024);
    let (wall, wm) = common::procedural_material(&mut r, 5, 1, 1024);
    let hidden_instance = r.add_instance(mesh, hm, at(3.0, -1.5)).unwrap();
    r.add_instance(mesh, wm, at(6.0, -1.0)).unwrap();
    let input = FrameInput::new(Camera::look_at(Vec3::ZERO, Vec3::new(0.0, 0.0, -4.0)));
    for _ in 0..40 {
        r.render(&view, &input).unwrap();
    }
    Some(WallScene {
        r,
        _out: out,
        view,
        input,
        mesh,
        hidden,
        hidden_instance,
        wall,
    })
}

/// Feedback turned off and on again starts afresh: a readback of a frame before that, still in
/// the ring, is not read (before: it came back as the first histograms after the reset,
/// against `set_enabled`'s word); the frames recorded after are.
#[test]
fn feedback_turned_off_and_on_does_not_read_readbacks_from_before() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut fb = mipflow::Feedback::new(&ctx, FeedbackConfig::default(), 256).unwrap();
    let pass = mipflow::testing::feedback_pass::RecordPass::new(&ctx, &fb, 128).unwrap();
    record_frame(&ctx, &mut fb, &pass, 0, 256, (1, 0));
    fb.set_enabled(false);
    fb.set_enabled(true);
    record_frame(&ctx, &mut fb, &pass, 1, 256, (1, 0));
    assert_eq!(fb.latest_frame(), None, "frame 0's readback was read");
    assert!(fb.histogram(0).is_none_or(|h| h.iter().all(|&p| p == 0.0)));
    record_frame(&ctx, &mut fb, &pass, 2, 256, (1, 0));
    assert_eq!(fb.latest_frame(), Some(1));
    assert_eq!(hist(&fb, 0)[4], 64.0);
}

/// The pixel-weighted mean level the sampler drew in columns `x0..x1` of a `w`-wide RGBA8
/// image of [`mip_coloured`] textures, and how many pixels it judged.
fn mean_level(px: &[u8], w: u32, x0: u32, x1: u32) -> (f64, usize) {
    let (mut sum, mut n) = (0.0, 0usize);
    for (k, p) in px.chunks_exact(4).enumerate() {
        let x = k as u32 % w;
        if (x0..x1).contains(&x)
            && let Some(l) = classify(p)
        {
            sum += l as f64;
            n += 1;
        }
    }
    (sum / n.max(1) as f64, n)
}

/// `MaterialDesc::uv_scale` is drawn as it is priced: two 2 m quads face on, side by side, the
/// same mip-coloured 512² texture on both, repeated once on the left and 4 times on the right.
/// The CPU demand asks the right one for levels 2 coarser (log2 4), and the sampler draws it
/// 2 levels coarser too (it drew both alike before: the shader ignored the repeat, so a
/// repeated texture was streamed 2 levels blurrier than it was drawn). A repeat that is not a
/// finite positive number is refused.
#[test]
fn a_material_uv_scale_is_drawn_as_its_demand_prices_it() {
    let Some(mut r) = renderer(false, 1, 96 << 20) else {
        return;
    };
    let (w, h) = (640u32, 360u32);
    let out = r.context().create_offscreen_target("uv", w, h).unwrap();
    let view = out.create_view(&Default::default());
    let v = |x: f32, y: f32, u: f32, t: f32| Vertex {
        position: [x, y, 0.0],
        normal: [0.0, 0.0, 1.0],
        uv: [u, t],
    };
    let verts = [
        v(-1.0, -1.0, 0.0, 1.0),
        v(1.0, -1.0, 1.0, 1.0),
        v(1.0, 1.0, 1.0, 0.0),
        v(-1.0, 1.0, 0.0, 0.0),
    ];
    let quad = r.add_mesh(&verts, &[0, 1, 2, 0, 2, 3]).unwrap();
    let mut textures = Vec::new();
    for (x, repeat) in [(-1.2f32, 1.0f32), (1.2, 4.0)] {
        let tex = r
            .add_texture(
                TextureSource::bytes(mip_coloured(512)),
                TextureOptions::default(),
            )
            .unwrap();
        let mut desc = MaterialDesc::new(tex);
        desc.uv_scale = repeat;
        let mat = r.add_material(desc).unwrap();
        r.add_instance(quad, mat, Mat4::from_translation(Vec3::new(x, 0.0, 0.0)))
            .unwrap();
        textures.push(tex);
    }
    let input = FrameInput::new(Camera::look_at(Vec3::new(0.0, 0.0, 3.45), Vec3::ZERO));
    for _ in 0..30 {
        r.render(&view, &input).unwrap();
    }
    let wanted =
        |t: mipflow::TextureHandle| r.manager().plan_textures()[t.index() as usize].wanted_level;
    for &t in &textures {
        // What the demand wants is resident (the sampler, which averages over the quad where
        // the demand takes its nearest point, wants no finer): the sampler picks freely.
        let resident = level_of(&r, t).0;
        assert!(
            f32::from(resident) <= wanted(t).floor(),
            "level {resident} resident, {} wanted",
            wanted(t)
        );
    }
    let demand_step = wanted(textures[1]) - wanted(textures[0]);
    assert!(
        (demand_step - 2.0).abs() < 0.05,
        "the demand prices 4 repeats 2 levels coarser: {demand_step}"
    );
    r.context().wait_idle().unwrap();
    let px = mipflow::read_texture_rgba8(r.context(), out.texture()).unwrap();
    let (left, n_left) = mean_level(&px, w, 0, w / 2);
    let (right, n_right) = mean_level(&px, w, w / 2, w);
    eprintln!("sampled: left {left:.2} ({n_left} px), right {right:.2} ({n_right} px)");
    assert!(n_left > 10_000 && n_right > 10_000, "both quads drawn");
    assert!(
        (right - left - 2.0).abs() < 0.35,
        "the sampler draws the repeated texture 2 levels coarser: {left:.2} -> {right:.2}"
    );

    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let mut desc = MaterialDesc::new(textures[0]);
        desc.uv_scale = bad;
        assert!(r.add_material(desc).is_err(), "uv_scale {bad} is refused");
    }
}

/// Bins the driver refused for memory are not tried again every frame (each try made and
/// dropped buffers, rebuilt the bind groups and logged): the same count is refused at once
/// until `OOM_RETRY_FRAMES` have passed, then tried again; fewer slots are tried at once.
#[test]
fn feedback_refused_for_memory_waits_before_trying_again() {
    use mipflow::low_level::OOM_RETRY_FRAMES;
    let Some(ctx) = common::gpu() else {
        return;
    };
    let mut fb = mipflow::Feedback::new(&ctx, FeedbackConfig::default(), 64).unwrap();
    fb.testing_oom_above(Some(256));
    let err = fb.begin_frame(&ctx, 1, 300).unwrap_err();
    assert!(
        matches!(&err, mipflow::Error::OutOfMemory { label, .. } if label.contains("testing")),
        "{err}"
    );
    // The driver has memory again, but the refusal stands for its while, untried.
    fb.testing_oom_above(None);
    for frame in [2, 50, OOM_RETRY_FRAMES] {
        let err = fb.begin_frame(&ctx, frame, 300).unwrap_err();
        assert!(
            matches!(&err, mipflow::Error::OutOfMemory { label, .. } if label.contains("refused earlier")),
            "frame {frame}: {err}"
        );
    }
    // Fewer slots than were refused: tried at once (200 fit 256 bins); the refusal of 300
    // stands.
    fb.begin_frame(&ctx, OOM_RETRY_FRAMES, 200).unwrap();
    let err = fb.begin_frame(&ctx, OOM_RETRY_FRAMES, 300).unwrap_err();
    assert!(
        matches!(&err, mipflow::Error::OutOfMemory { label, .. } if label.contains("refused earlier")),
        "{err}"
    );
    // Past the wait, the count refused before is tried, and made.
    fb.begin_frame(&ctx, 1 + OOM_RETRY_FRAMES, 300).unwrap();
    assert_eq!(ctx.take_uncaptured_errors(), Vec::<String>::new());
}
