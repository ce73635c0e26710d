// Bilinear upscale of the scaled HDR scene colour to the output, with the display transform.
//
// Filtering happens in linear HDR (the hardware bilinear filter), then the tone map (clamp or
// Reinhard, see `tone_map`), then the output encoding. At scale 1 every output pixel centre lands
// on a texel centre, so this pass is an exact copy plus the display transform.

@group(0) @binding(1) var hdr: texture_2d<f32>;
@group(0) @binding(2) var hdr_sampler: sampler;

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
