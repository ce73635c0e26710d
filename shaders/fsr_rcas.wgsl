// Contrast-adaptive sharpening (the second half of an FSR 1-class upscaler), written for mipflow.
// It reads the EASU output (gamma-2 encoded, output size) and writes the final colour. At native
// scale there is nothing to upsample: `fs_rcas_native` reads the HDR scene colour (then the size
// of the output) and applies EASU's display transform to each tap itself, so no intermediate
// image is needed.
//
// What it does, per output pixel: an unsharp mask on the 5-texel cross, `c + k * (c - avg)`,
// where `k` is the largest amount (up to `sharpness`) that keeps every channel of the result
// within the range [min, max] of the cross. That limit is what makes it contrast-adaptive: where
// the neighbourhood already spans its full range (a strong edge) there is nothing to gain and
// `k` is small, so there is no halo; where detail is faint it sharpens fully. One `k` for all
// three channels, not a clamp per channel, so sharpening never shifts the hue.

@group(0) @binding(1) var easu: texture_2d<f32>;

fn load(q: vec2<i32>) -> vec3<f32> {
    let hi = vec2<i32>(textureDimensions(easu, 0)) - vec2<i32>(1);
    return textureLoad(easu, clamp(q, vec2<i32>(0), hi), 0).rgb;
}

// A tap of the HDR scene colour through the same transform as EASU's output: tone map, gamma 2.
fn load_native(q: vec2<i32>) -> vec3<f32> {
    return sqrt(tone_map(load(q)));
}

// The largest k >= 0 with lo <= c + k * d <= hi in every channel (capped by the caller).
fn limit(c: vec3<f32>, d: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> f32 {
    // For d > 0 the bound is (hi - c) / d, for d < 0 it is (lo - c) / d; |d| tiny: no bound.
    let room = select(lo - c, hi - c, d > vec3<f32>(0.0));
    let big = vec3<f32>(1e6);
    let k = select(big, room / d, abs(d) > vec3<f32>(1e-5));
    return max(min(k.x, min(k.y, k.z)), 0.0);
}

@fragment
fn fs_rcas(v: VsOut) -> @location(0) vec4<f32> {
    let q = vec2<i32>(v.pos.xy);
    return sharpen(load(q), load(q + vec2<i32>(0, -1)), load(q + vec2<i32>(0, 1)),
        load(q + vec2<i32>(-1, 0)), load(q + vec2<i32>(1, 0)));
}

@fragment
fn fs_rcas_native(v: VsOut) -> @location(0) vec4<f32> {
    let q = vec2<i32>(v.pos.xy);
    return sharpen(load_native(q), load_native(q + vec2<i32>(0, -1)),
        load_native(q + vec2<i32>(0, 1)), load_native(q + vec2<i32>(-1, 0)),
        load_native(q + vec2<i32>(1, 0)));
}

// The sharpened colour of centre `c` and its cross `n s w e` (gamma-2 encoded), as the output.
fn sharpen(c: vec3<f32>, n: vec3<f32>, s: vec3<f32>, w: vec3<f32>, e: vec3<f32>) -> vec4<f32> {
    let lo = min(c, min(min(n, s), min(w, e)));
    let hi = max(c, max(max(n, s), max(w, e)));
    let d = c - 0.25 * (n + s + w + e);
    let k = min(limit(c, d, lo, hi), p.sharpness);
    let out = clamp(c + k * d, vec3<f32>(0.0), vec3<f32>(1.0));
    // `out` is gamma-2 encoded: back to linear, then sRGB-encoded here for a non-sRGB 8-bit
    // output; an sRGB view encodes in hardware, a float view stays linear.
    let linear = out * out;
    if (p.encode_srgb == 1u) {
        return vec4<f32>(srgb_encode(linear), 1.0);
    }
    return vec4<f32>(linear, 1.0);
}
