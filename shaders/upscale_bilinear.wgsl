// Bilinear upscale of the scaled HDR scene colour to the output, with the display transform.
//
// Filtering happens in linear HDR (the hardware bilinear filter), then the tone map (clamp or
// Reinhard, see `tone_map`), then the output encoding. At scale 1 every output pixel centre lands
// on a texel centre, so this pass is an exact copy plus the display transform.

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
    // RCAS strength in [0, 1] (unused here).
    sharpness: f32,
};

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var hdr: texture_2d<f32>;
@group(0) @binding(2) var hdr_sampler: sampler;

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

@fragment
fn fs_bilinear(v: VsOut) -> @location(0) vec4<f32> {
    // `pos.xy` is the output pixel centre (x + 0.5, y + 0.5): its UV in the source is the same
    // fraction of the image.
    let uv = v.pos.xy / p.out_size;
    let c = tone_map(textureSampleLevel(hdr, hdr_sampler, uv, 0.0).rgb);
    if (p.encode_srgb == 1u) {
        return vec4<f32>(srgb_encode(c), 1.0);
    }
    return vec4<f32>(c, 1.0);
}
