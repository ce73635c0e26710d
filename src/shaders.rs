//! The WGSL registry: every shader file under `shaders/`, compiled into the crate with
//! `include_str!`, and looked up by name. A CPU test validates each with naga.

/// Every shader: (file name, source).
pub const ALL: &[(&str, &str)] = &[("textured.wgsl", TEXTURED)];

/// The material pass: a textured, lit mesh with a mip bias and a colour-by-mip debug view.
pub const TEXTURED: &str = include_str!("../shaders/textured.wgsl");

/// Creates a shader module from one of [`ALL`], labelled with its file name.
pub fn create_module(device: &wgpu::Device, name: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}
