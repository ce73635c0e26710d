//! `mipflow cook --tiles`: the tiled layout through the binary, and what `inspect` shows of it.

use std::path::Path;
use std::process::{Command, Output};

use image::{Rgb, RgbImage};
use mipflow::ktx2::{ReadLimits, read_info, read_level, read_tile, tile_span};

fn mipflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run mipflow")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The same image cooked level by level and tile by tile (raw, and Zstandard with tiles of
/// 256): the tiled file's levels read back as the untiled one's, a tile is its rectangle of the
/// level, and `inspect` reports the layout (text and JSON).
#[test]
fn a_tiled_cook_holds_the_same_levels_and_inspect_shows_its_tiles() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in/wall.png");
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    RgbImage::from_fn(640, 384, |x, y| {
        Rgb([(x * 3) as u8, (y * 2) as u8, ((x ^ y) & 0xff) as u8])
    })
    .save(&input)
    .unwrap();
    let cook = |out: &str, extra: &[&str]| {
        let out = tmp.path().join(out);
        let mut args = vec!["cook", s(&input), "-o", s(&out), "--gpu", "off"];
        args.extend_from_slice(extra);
        let o = mipflow(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out.join("wall.ktx2")
    };
    let plain = cook("plain", &[]);
    let tiled = cook("tiled", &["--tiles"]);
    let framed = cook("framed", &["--tiles", "256", "--zstd", "3"]);
    let limits = ReadLimits::default();
    let (p, t, f) = (
        read_info(&plain, &limits).unwrap(),
        read_info(&tiled, &limits).unwrap(),
        read_info(&framed, &limits).unwrap(),
    );
    assert!(p.tiles.is_none());
    let (tl, fl) = (t.tiles.clone().unwrap(), f.tiles.clone().unwrap());
    // 640x384, 320x192 and 160x96 have a side above 128; at 256, only 640x384 and 320x192.
    assert_eq!((tl.tile_size, tl.tiled_levels), (128, 3));
    assert_eq!((fl.tile_size, fl.tiled_levels), (256, 2));
    let open = |path: &Path| std::fs::File::open(path).unwrap();
    let (mut pf, mut tf, mut ff) = (open(&plain), open(&tiled), open(&framed));
    for level in 0..p.levels.len() {
        let want = read_level(&mut pf, &p, level).unwrap();
        assert_eq!(
            read_level(&mut tf, &t, level).unwrap(),
            want,
            "level {level}"
        );
        assert_eq!(
            read_level(&mut ff, &f, level).unwrap(),
            want,
            "level {level}"
        );
    }
    // Tile (2, 1) of level 0 at 256: blocks 128.. of rows 64..96 of the 160x96-block level.
    let level0 = read_level(&mut pf, &p, 0).unwrap();
    let span = tile_span(&f, 0, 2, 1).unwrap();
    assert_eq!(
        (
            span.block_x,
            span.block_y,
            span.blocks_wide,
            span.blocks_high
        ),
        (128, 64, 32, 32)
    );
    let tile = read_tile(&mut ff, &f, 0, 2, 1).unwrap();
    for r in 0..32usize {
        let at = ((64 + r) * 160 + 128) * 16;
        assert_eq!(
            &tile[r * 32 * 16..(r + 1) * 32 * 16],
            &level0[at..at + 32 * 16],
            "row {r}"
        );
    }

    let o = mipflow(&["inspect", s(&framed)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("tiles             256x256 texels; levels 0..2 tiled (8 tiles, a Zstandard frame each): 3x2, 2x1"),
        "{text}"
    );
    let o = mipflow(&["inspect", "--json", s(&tiled), s(&plain)]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json[0]["valid"], true);
    assert_eq!(json[0]["tiles"]["tile_size"], 128);
    assert_eq!(json[0]["tiles"]["tiled_levels"], 3);
    assert_eq!(
        json[0]["tiles"]["tiles"],
        serde_json::json!([[5, 3], [3, 2], [2, 1]])
    );
    assert_eq!(json[0]["tiles"]["tile_count"], 15 + 6 + 2);
    assert_eq!(json[0]["tiles"]["frames"], false);
    assert!(
        json[1].get("tiles").is_none(),
        "an untiled file has no tiles"
    );

    // A size the layout cannot take is a usage error.
    let o = mipflow(&[
        "cook",
        s(&input),
        "-o",
        s(&tmp.path().join("bad")),
        "--tiles",
        "100",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
