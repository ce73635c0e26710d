// A textured, lit mesh: the material pass. The texture's mip bias follows the render scale
// (log2(scale)), so that a lower resolution samples correspondingly coarser mips.

// Prepended by the registry: feedback_params.wgsl and feedback.wgsl (the GPU feedback record,
// bind group 2).

struct Uniforms {
    view_proj: mat4x4<f32>,
    model: mat4x4<f32>,
    // x: mip bias, y: debug mode (0 = shaded, 1 = colour by the level sampled, 2 = by the level
    // wanted), z: the texture's feedback slot (negative: none), w: its full level-0 width (0:
    // unknown)
    params: vec4<f32>,
    // xyz: the light's direction; w: the texture's level-0 height
    light_dir: vec4<f32>,
    // xy: how many times the texture repeats across the mesh's UV range (the material's
    // uv_scale); zw: unused
    uv_scale: vec4<f32>,
};

@group(0) @binding(0) var<uniform> u: Uniforms;
@group(1) @binding(0) var base_color: texture_2d<f32>;
@group(1) @binding(1) var base_sampler: sampler;
// The depth pre-pass's depth (the Renderer's), for feedback to skip occluded fragments.
@group(3) @binding(0) var scene_depth: texture_depth_2d;

struct VsIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
};

struct VsOut {
    // Invariant: the depth pre-pass and the shaded pass (two pipelines) compute the same depth.
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) uv: vec2<f32>,
};

@vertex
fn vs_main(v: VsIn) -> VsOut {
    var o: VsOut;
    let world = u.model * vec4<f32>(v.position, 1.0);
    o.clip = u.view_proj * world;
    o.normal = normalize((u.model * vec4<f32>(v.normal, 0.0)).xyz);
    // params.y bits 2 and 3: the texture's KTXorientation flips its columns / rows (the data
    // is never rewritten for it).
    let bits = u32(u.params.y);
    var uv = v.uv;
    if ((bits & 4u) != 0u) {
        uv.x = 1.0 - uv.x;
    }
    if ((bits & 8u) != 0u) {
        uv.y = 1.0 - uv.y;
    }
    // The material's repeat, after the flips (they mirror the texture, not the repeat).
    o.uv = uv * u.uv_scale.xy;
    return o;
}

// Distinct colours for mip levels 0..7+, for the "colour by mip" debug view.
fn mip_colour(level: f32) -> vec3<f32> {
    let l = u32(clamp(level, 0.0, 7.0));
    switch l {
        case 0u: { return vec3<f32>(1.0, 0.1, 0.1); }
        case 1u: { return vec3<f32>(1.0, 0.6, 0.1); }
        case 2u: { return vec3<f32>(1.0, 1.0, 0.1); }
        case 3u: { return vec3<f32>(0.2, 1.0, 0.2); }
        case 4u: { return vec3<f32>(0.1, 0.9, 1.0); }
        case 5u: { return vec3<f32>(0.2, 0.3, 1.0); }
        case 6u: { return vec3<f32>(0.7, 0.2, 1.0); }
        default: { return vec3<f32>(0.5, 0.5, 0.5); }
    }
}

@fragment
fn fs_main(i: VsOut) -> @location(0) vec4<f32> {
    let bias = u.params.x;
    if (u.params.z >= 0.0) {
        // Visible: on (or in front of) the nearest surface the depth pre-pass found.
        let dims = textureDimensions(scene_depth);
        let p = vec2<u32>(i.clip.xy);
        var visible = false;
        if (p.x < dims.x && p.y < dims.y) {
            visible = i.clip.z <= textureLoad(scene_depth, p, 0) + 1e-5;
        }
        mipflow_record_feedback(u32(u.params.z), i.uv, vec2<f32>(u.params.w, u.light_dir.w), bias, i.clip, visible);
    }
    let tex = textureSampleBias(base_color, base_sampler, i.uv, bias);
    let n = normalize(i.normal);
    let diffuse = max(dot(n, -normalize(u.light_dir.xyz)), 0.0);
    let lit = tex.rgb * (0.35 + 0.65 * diffuse);
    let mode = u32(u.params.y) & 3u;
    if (mode > 0u) {
        // The level the view wants, from the UV derivatives and the full texture's size (as
        // the sampler and the feedback record pick it); the resident texture's size when the
        // full one is unknown. Mode 1 shows what is sampled: no finer than the resident top.
        let dims = vec2<f32>(textureDimensions(base_color, 0));
        var full = vec2<f32>(u.params.w, u.light_dir.w);
        if (full.x <= 0.0 || full.y <= 0.0) {
            full = dims;
        }
        let dx = dpdx(i.uv * full);
        let dy = dpdy(i.uv * full);
        let rho = max(dot(dx, dx), dot(dy, dy));
        var level = max(0.5 * log2(max(rho, 1e-8)) + bias, 0.0);
        if (mode < 2u) {
            level = max(level, log2(max(full.x / dims.x, 1.0)));
        }
        return vec4<f32>(mix(lit, mip_colour(level), 0.7), 1.0);
    }
    return vec4<f32>(lit, tex.a);
}
