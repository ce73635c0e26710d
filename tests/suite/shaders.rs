//! Every WGSL file in the registry parses and validates with naga (no GPU needed), and every file
//! under `shaders/` is in the registry.

use wgpu::naga;

#[test]
fn every_shader_validates() {
    assert!(!mipflow::low_level::SHADERS.is_empty());
    for (name, src) in mipflow::low_level::SHADERS {
        let module = naga::front::wgsl::parse_str(src)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

#[test]
fn every_file_is_registered() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".wgsl") {
            assert!(
                mipflow::low_level::SHADERS.iter().any(|(n, _)| *n == name),
                "{name} is not in mipflow::low_level::SHADERS"
            );
        }
    }
}
