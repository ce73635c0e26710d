//! `mipflow inspect` on the containers a game ships besides mipflow's own KTX2: DDS and Basis
//! Universal KTX2, text and JSON.

use std::path::PathBuf;
use std::process::Command;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(name)
}

fn inspect(args: &[&str], files: &[PathBuf]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_mipflow"))
        .arg("inspect")
        .args(args)
        .args(files)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// The container, the source codec and the GPU format it becomes; every level read (and a Basis
/// level transcoded) to validate it.
#[test]
fn inspect_shows_the_container_the_source_and_the_gpu_format() {
    let files = [
        data("dds/bc7.dds"),
        data("dds/dxt5_legacy.dds"),
        data("basis/etc1s_coffee.ktx2"),
        data("basis/uastc_zstd_coffee.ktx2"),
    ];
    let (code, text) = inspect(&[], &files);
    assert_eq!(code, Some(0), "{text}");
    for needle in [
        "container         DDS (DX10 header, DXGI_FORMAT 99)",
        "format            Bc7RgbaUnormSrgb",
        "container         DDS (legacy header, FourCC DXT5)",
        "source            Basis ETC1S (BasisLZ), RGB, transcoded to Bc7RgbaUnormSrgb as it streams",
        "supercompression  BasisLZ (1)",
        "source            Basis UASTC, RGB, transcoded to Bc7RgbaUnormSrgb",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let (code, json) = inspect(&["--json"], &files);
    assert_eq!(code, Some(0));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[0]["format"], "Bc7RgbaUnormSrgb");
    assert_eq!(json[0]["levels"].as_array().unwrap().len(), 8);
    assert_eq!(json[0]["levels"][1]["offset"], 148 + 16384);
    assert!(json[0]["dfd"].is_null(), "a DDS file has no DFD");
    assert_eq!(json[1]["format"], "Bc3RgbaUnorm");
    assert_eq!(json[2]["source_format"], "Basis ETC1S (BasisLZ), RGB");
    assert_eq!(json[2]["supercompression"], "basislz");
    assert_eq!(json[3]["source_format"], "Basis UASTC, RGB");
    assert!(json[0].get("source_format").is_none());
}

/// A DDS cube map and a truncated DDS file: invalid, with the reason, exit 1.
#[test]
fn inspect_refuses_what_does_not_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cube = std::fs::read(data("dds/bc1.dds")).unwrap();
    cube[112..116].copy_from_slice(&0x200u32.to_le_bytes());
    let cube_path = tmp.path().join("cube.dds");
    std::fs::write(&cube_path, cube).unwrap();
    let short = std::fs::read(data("dds/bc7.dds")).unwrap();
    let short_path = tmp.path().join("short.dds");
    std::fs::write(&short_path, &short[..short.len() - 100]).unwrap();
    let (code, text) = inspect(&[], &[cube_path, short_path]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("DDS: a cube map"), "{text}");
    assert!(text.contains("runs past the end of the file"), "{text}");
}
