//! The WGSL registry: every shader file under `shaders/`, compiled into the crate with
//! `include_str!`, and looked up by name. A CPU test validates each with naga.

/// Every shader: (file name, source).
pub const ALL: &[(&str, &str)] = &[
    ("textured.wgsl", TEXTURED),
    ("feedback_params.wgsl", FEEDBACK_PARAMS),
    ("feedback.wgsl", FEEDBACK),
    ("feedback_gather.wgsl", FEEDBACK_GATHER),
    ("upscale_bilinear.wgsl", UPSCALE_BILINEAR),
    ("fsr_easu.wgsl", FSR_EASU),
    ("fsr_rcas.wgsl", FSR_RCAS),
    ("upscale_common.wgsl", UPSCALE_COMMON),
    ("vt.wgsl", VT),
];

/// Virtual texture sampling (`vt_sample`, see [`crate::VirtualTextures`]), its bindings in group
/// 0 ([`crate::vt_wgsl`] puts them in another).
pub const VT: &str = include_str!("../shaders/vt.wgsl");

/// The material pass: a textured, lit mesh with a mip bias and a colour-by-mip debug view, and
/// the GPU feedback record (bind group 2).
pub const TEXTURED: &str = concat!(
    include_str!("../shaders/feedback_params.wgsl"),
    include_str!("../shaders/feedback.wgsl"),
    include_str!("../shaders/textured.wgsl")
);

/// GPU feedback's parameters (one struct), in front of the record and of the gather.
pub const FEEDBACK_PARAMS: &str = include_str!("../shaders/feedback_params.wgsl");

/// The GPU feedback record (see [`crate::Feedback`]), its parameters in front: to prepend to a
/// fragment shader.
pub const FEEDBACK: &str = concat!(
    include_str!("../shaders/feedback_params.wgsl"),
    include_str!("../shaders/feedback.wgsl")
);

/// The GPU feedback gather: the slots drawn this frame copied out for the readback, their bins
/// zeroed (see [`crate::Feedback`]), its parameters in front.
pub const FEEDBACK_GATHER: &str = concat!(
    include_str!("../shaders/feedback_params.wgsl"),
    include_str!("../shaders/feedback_gather.wgsl")
);

/// The bilinear upscale with the display transform (`resolution::UpscalePass`).
pub const UPSCALE_BILINEAR: &str = concat!(
    include_str!("../shaders/upscale_common.wgsl"),
    include_str!("../shaders/upscale_bilinear.wgsl")
);

/// Edge-adaptive upsampling, the first half of the FSR 1-class upscale (`resolution::UpscalePass`).
pub const FSR_EASU: &str = concat!(
    include_str!("../shaders/upscale_common.wgsl"),
    include_str!("../shaders/fsr_easu.wgsl")
);

/// Contrast-adaptive sharpening, the second half of the FSR 1-class upscale.
pub const FSR_RCAS: &str = concat!(
    include_str!("../shaders/upscale_common.wgsl"),
    include_str!("../shaders/fsr_rcas.wgsl")
);

/// What the upscale passes share (the uniform parameters, the full-screen triangle, the tone map,
/// the sRGB encoding): WGSL has no include, so the registry puts it in front of each of them.
pub const UPSCALE_COMMON: &str = include_str!("../shaders/upscale_common.wgsl");

/// The material pass sampling a virtual texture (its id in the draw's `uv_scale.z`) through
/// `vt_sample_feedback`, the cache's bindings in group 1 where the material's texture was.
pub fn textured_virtual() -> String {
    let body = TEXTURED
        .replace(
            "@group(1) @binding(0) var base_color: texture_2d<f32>;\n@group(1) @binding(1) var base_sampler: sampler;\n",
            "",
        )
        .replace(
            "let tex = textureSampleBias(base_color, base_sampler, i.uv, bias);",
            "let tex = vt_sample_feedback(u32(u.uv_scale.z), i.uv, bias, vec2<u32>(i.clip.xy));",
        )
        .replace(
            "let dims = vec2<f32>(textureDimensions(base_color, 0));",
            "let dims = vec2<f32>(vt_infos[u32(u.uv_scale.z)].levels[0].size);",
        );
    format!("{}\n{body}", crate::tiles::vt_wgsl(1))
}

/// Creates a shader module from one of [`ALL`], labelled with its file name.
pub fn create_module(device: &wgpu::Device, name: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}
