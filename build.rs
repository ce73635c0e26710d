//! Build script: intel_tex_2's ISPC kernels are C++ objects and need the C++ runtime at link time
//! (see shared/FIELD-NOTES.md, "BC7 and KTX2").

fn main() {
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rerun-if-changed=build.rs");
}
