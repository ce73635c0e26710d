//! Build script: intel_tex_2's ISPC kernels are C++ objects and need the C++ runtime at link time
//! (see shared/FIELD-NOTES.md, "BC7 and KTX2"). Only this crate links it, and only the runtime the
//! target's toolchain ships: libstdc++ on GNU targets, libc++ on Apple and the BSDs, nothing on
//! MSVC (its C++ runtime comes with the C one).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let runtime = match (os.as_str(), env.as_str()) {
        (_, "msvc") => None,
        ("macos" | "ios" | "freebsd" | "openbsd" | "netbsd", _) => Some("c++"),
        ("android", _) => Some("c++_shared"),
        _ => Some("stdc++"),
    };
    if let Some(lib) = runtime {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
