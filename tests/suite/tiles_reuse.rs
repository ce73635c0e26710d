//! A tile cache in a game that adds and removes virtual textures for as long as it runs: a
//! removed texture's index, page entries and slots are taken by the next one, its id is refused
//! after, tiles read for it that arrive late never land in the texture that took its place, and
//! a cache made again reads no file.

use std::time::{Duration, Instant};

use mipflow::ktx2::{Ktx2Info, ReadLimits};
use mipflow::{GpuContext, TileSource, VirtualTextures, VtAddress, VtConfig, VtId};

use super::tiles::{
    FEEDBACK, FLOOR_UV, SIZE, TILE, VIRTUAL, cooked, cooked_from, draw, hardware, test_image,
};
use crate::common;

/// The first level of one tile or less (the tail) of the test texture: 1024 / 128 = 8 tiles,
/// so levels 0, 1 and 2 are tiled and level 3 is the tail's first.
const TAIL: f32 = 3.0;

/// The test picture in other colours: a tile of one landing in the other shows.
fn other_image() -> image::RgbaImage {
    let mut img = test_image();
    for p in img.pixels_mut() {
        p.0 = [p.0[2], 255 - p.0[0], p.0[1], 255];
    }
    img
}

fn info(file: &[u8]) -> Ktx2Info {
    Ktx2Info::parse(file, file.len() as u64, &ReadLimits::default()).unwrap()
}

/// Page entries of the test texture (each tiled level's tiles, and one a tail level).
fn pages(ctx: &GpuContext, file: &[u8]) -> u32 {
    let mut vt = VirtualTextures::new(ctx, &config(file, 64, 1 << 12, 1)).unwrap();
    let id = add(ctx, &mut vt, file).unwrap();
    vt.table(id).unwrap().entries().len() as u32
}

fn config(file: &[u8], slots: u32, max_pages: u32, max_textures: u32) -> VtConfig {
    VtConfig {
        format: info(file).format,
        tile: TILE,
        slots,
        max_pages,
        max_textures,
    }
}

fn add(ctx: &GpuContext, vt: &mut VirtualTextures, file: &[u8]) -> mipflow::Result<VtId> {
    vt.add(
        ctx.queue(),
        info(file),
        TileSource::Bytes(file.into()),
        VtAddress::Clamp,
    )
}

/// The cache drawn with `vt_sample(0u, ...)` against the hardware sampler on `tex`'s levels
/// from `min_lod`.
fn psnr_against(
    ctx: &GpuContext,
    vt: &VirtualTextures,
    tex: &mipflow::ktx2::EncodedTexture,
    min_lod: f32,
) -> f64 {
    let picture = draw(
        ctx,
        &format!("{}{FLOOR_UV}{VIRTUAL}", mipflow::vt_wgsl(0)),
        vt.layout(),
        vt.bind_group(),
    );
    common::psnr(
        &picture,
        &hardware(ctx, tex, min_lod),
        [true, true, true, false],
    )
}

#[test]
fn a_removed_texture_gives_back_its_index_page_entries_and_slots() {
    let Some(ctx) = common::gpu() else { return };
    let (_, file_a) = cooked();
    let (tex_b, file_b) = cooked_from(other_image());
    let per = pages(&ctx, &file_a);
    // Room for exactly two textures' page entries and infos.
    let mut vt = VirtualTextures::new(&ctx, &config(&file_a, 32, 2 * per, 2)).unwrap();
    let a = add(&ctx, &mut vt, &file_a).unwrap();
    let keep = add(&ctx, &mut vt, &file_a).unwrap();
    assert!(add(&ctx, &mut vt, &file_b).is_err(), "two textures at most");
    assert!(vt.remove(a));
    let mut b = add(&ctx, &mut vt, &file_b).unwrap();
    assert_eq!(
        b.index(),
        a.index(),
        "the removed texture's index is taken again"
    );
    assert_ne!(b, a);
    // The removed texture's id is refused everywhere, though its index is another's now.
    assert!(vt.table(a).is_none() && vt.info(a).is_none());
    assert!(vt.make_resident(ctx.queue(), a, 0, 0, 0).is_err());
    assert!(!vt.add_demand(a, 0.0, [0.0; 2], [1.0; 2], 100.0));
    assert!(!vt.set_priority(a, 2.0));
    assert!(!vt.evict(a, 0, 0, 0));
    assert!(!vt.remove(a), "removed once");
    // Added and removed for as long as a game runs: nothing is used up.
    for _ in 0..40 {
        assert!(vt.remove(b));
        b = add(&ctx, &mut vt, &file_b).unwrap();
    }
    assert_eq!(
        vt.slots(),
        (32, 28),
        "two tails of two slots each, nothing else"
    );
    // The texture in the reused index draws as itself: its tail, then level 1 on.
    assert!(b.index() == 0 && keep.index() == 1);
    let tail = psnr_against(&ctx, &vt, &tex_b, TAIL);
    for level in [2, 1] {
        let (x_n, y_n) = vt.table(b).unwrap().tiles(level);
        for ty in 0..y_n {
            for tx in 0..x_n {
                assert!(vt.make_resident(ctx.queue(), b, level, tx, ty).unwrap());
            }
        }
    }
    vt.flush(ctx.queue());
    let sharp = psnr_against(&ctx, &vt, &tex_b, 1.0);
    eprintln!("reused index: {tail:.1} dB (tail), {sharp:.1} dB (levels 1 on)");
    assert!(tail >= 40.0 && sharp >= 40.0, "{tail:.1} / {sharp:.1} dB");
}

#[test]
fn a_tile_read_for_a_removed_texture_never_lands_in_the_next() {
    let Some(ctx) = common::gpu() else { return };
    let (_, file_a) = cooked();
    let (tex_b, file_b) = cooked_from(other_image());
    let mut vt = VirtualTextures::new(&ctx, &config(&file_a, 128, 1 << 12, 1)).unwrap();
    let a = add(&ctx, &mut vt, &file_a).unwrap();
    // Every tile of level 0 asked for, then the texture removed with its reads on their way.
    vt.add_demand(a, 0.0, [0.0; 2], [1.0; 2], 1e6);
    vt.update(ctx.device(), ctx.queue(), 0).unwrap();
    assert!(vt.reads_in_flight() > 0, "reads on their way");
    assert!(vt.remove(a));
    let b = add(&ctx, &mut vt, &file_b).unwrap();
    assert_eq!(b.index(), a.index());
    // Until every read has come back (waited for by time), nothing asked for the new one.
    let start = Instant::now();
    let mut loaded = 0;
    while vt.reads_in_flight() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "reads never came back"
        );
        loaded += vt.update(ctx.device(), ctx.queue(), 64).unwrap().loaded;
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(loaded, 0, "a removed texture's tile was loaded");
    let table = vt.table(b).unwrap();
    let tail_levels = table.level_count() - TAIL as usize;
    assert_eq!(
        table.resident_tiles(),
        tail_levels,
        "the tail's levels only"
    );
    assert_eq!(vt.slots().1, 126);
    let psnr = psnr_against(&ctx, &vt, &tex_b, TAIL);
    assert!(psnr >= 40.0, "{psnr:.1} dB against the new texture's tail");
}

/// The feedback a removed texture's draws counted, copied before the texture that took its
/// index was added, is not that texture's demand: it gets none, and no tile is read for it.
#[test]
fn feedback_counted_for_a_removed_texture_is_not_the_nexts() {
    let Some(ctx) = common::gpu() else { return };
    let (_, file_a) = cooked();
    let (_, file_b) = cooked_from(other_image());
    let mut vt = VirtualTextures::new(&ctx, &config(&file_a, 128, 1 << 12, 1)).unwrap();
    let a = add(&ctx, &mut vt, &file_a).unwrap();
    // A frame that draws it with feedback, copied and submitted; then it is removed.
    let source = format!("{}{FLOOR_UV}{FEEDBACK}", mipflow::vt_wgsl(0));
    draw(&ctx, &source, vt.layout(), vt.bind_group());
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    assert!(vt.record_feedback(&mut enc));
    ctx.queue().submit([enc.finish()]);
    vt.submitted();
    assert!(vt.remove(a));
    let b = add(&ctx, &mut vt, &file_b).unwrap();
    // Until that copy has come back (waited for by time).
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(30), "no readback");
        let u = vt.update(ctx.device(), ctx.queue(), 64).unwrap();
        if u.readbacks > 0 {
            assert_eq!(u.kept, 0, "the removed texture's demand planned tiles");
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!vt.has_feedback(b));
    assert_eq!(vt.reads_in_flight(), 0, "tiles asked for the new texture");
}

#[test]
fn a_cache_made_again_reads_no_file() {
    let Some(ctx) = common::gpu() else { return };
    let (tex, file) = cooked();
    let dir = std::env::temp_dir().join(format!("mipflow-tiles-reuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("floor.ktx2");
    std::fs::write(&path, &file).unwrap();
    let mut vt = VirtualTextures::new(&ctx, &config(&file, 64, 1 << 12, 2)).unwrap();
    vt.add(
        ctx.queue(),
        info(&file),
        TileSource::File(path.clone()),
        VtAddress::Clamp,
    )
    .unwrap();
    // The file gone (a game that unpacked it to a temporary place, a drive unplugged): the
    // tails are in memory, so a budget that moves still gets a cache.
    std::fs::remove_dir_all(&dir).unwrap();
    vt.resize(&ctx, 8).unwrap();
    assert_eq!(vt.slots(), (8, 6));
    let psnr = psnr_against(&ctx, &vt, &tex, TAIL);
    assert!(psnr >= 40.0, "{psnr:.1} dB against the tail");
    assert_eq!(SIZE / TILE, 8);
}
