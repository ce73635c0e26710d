// Shared by the upscale passes (upscale_bilinear.wgsl, fsr_easu.wgsl, fsr_rcas.wgsl): the registry
// (src/shaders.rs) puts this file in front of each, since WGSL has no include. The uniform
// parameters at binding 0, the full-screen triangle, the tone map and the sRGB encoding.

struct Params {
    // Size of the HDR source (the scaled render size), pixels.
    src_size: vec2<f32>,
    // Size of the output, pixels.
    out_size: vec2<f32>,
    // Multiplier applied to the HDR colour before the tone map.
    exposure: f32,
    // 0: clamp to [0, 1]; 1: Reinhard on luminance.
    tone_map: u32,
    // 1: the output format is not sRGB, so the shader writes sRGB-encoded values itself.
    encode_srgb: u32,
    // RCAS strength in [0, 1] (the sharpening pass only).
    sharpness: f32,
};

@group(0) @binding(0) var<uniform> p: Params;

struct VsOut {
    @builtin(position) pos: vec4<f32>,
};

// One triangle covering the whole target: (-1,-1), (3,-1), (-1,3).
@vertex
fn vs_fullscreen(@builtin(vertex_index) i: u32) -> VsOut {
    let x = f32((i << 1u) & 2u) * 2.0 - 1.0;
    let y = f32(i & 2u) * 2.0 - 1.0;
    var o: VsOut;
    o.pos = vec4<f32>(x, y, 0.0, 1.0);
    return o;
}

fn tone_map(c: vec3<f32>) -> vec3<f32> {
    let x = max(c * p.exposure, vec3<f32>(0.0));
    if (p.tone_map == 1u) {
        // Reinhard on luminance: compresses highlights, keeps the hue.
        let l = dot(x, vec3<f32>(0.2126, 0.7152, 0.0722));
        return clamp(x / (1.0 + l), vec3<f32>(0.0), vec3<f32>(1.0));
    }
    return clamp(x, vec3<f32>(0.0), vec3<f32>(1.0));
}

fn srgb_encode(c: vec3<f32>) -> vec3<f32> {
    let lo = c * 12.92;
    let hi = 1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, c <= vec3<f32>(0.0031308));
}
