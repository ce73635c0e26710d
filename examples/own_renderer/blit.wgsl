// The example's own upscale: a full-screen triangle sampling the scaled HDR target bilinearly,
// with a Reinhard tone map, at the output size.

@group(0) @binding(0) var hdr: texture_2d<f32>;
@group(0) @binding(1) var hdr_sampler: sampler;

struct BlitOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn blit_vs(@builtin(vertex_index) i: u32) -> BlitOut {
    let p = vec2(f32((i << 1u) & 2u), f32(i & 2u));
    var o: BlitOut;
    o.clip = vec4(p * 2.0 - 1.0, 0.0, 1.0);
    o.uv = vec2(p.x, 1.0 - p.y);
    return o;
}

@fragment
fn blit_fs(v: BlitOut) -> @location(0) vec4<f32> {
    let c = textureSampleLevel(hdr, hdr_sampler, v.uv, 0.0).rgb;
    return vec4(c / (1.0 + c), 1.0);
}
