// The own_renderer example's lit material: a base colour and a tangent-space normal map, both
// streamed by mipflow, sampled with the mip bias mipflow gives for the render scale. One
// directional light and an ambient term, into an HDR target.

struct Frame {
    view_proj: mat4x4<f32>,
    // xyz: direction towards the light (normalised); w: the mip bias.
    light: vec4<f32>,
    // xyz: light colour (HDR); w: ambient.
    colour: vec4<f32>,
};

struct Draw {
    model: mat4x4<f32>,
    // GPU feedback: x, y the base colour's and the normal map's texture slots (negative: none);
    // z, w unused.
    slots: vec4<f32>,
    // The full level-0 sizes: xy the base colour's, zw the normal map's.
    sizes: vec4<f32>,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> draw: Draw;
@group(0) @binding(2) var material_sampler: sampler;
@group(1) @binding(0) var base_colour: texture_2d<f32>;
@group(1) @binding(1) var normal_map: texture_2d<f32>;

struct In {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec3<f32>,
    @location(3) uv: vec2<f32>,
};

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) tangent: vec3<f32>,
    @location(2) uv: vec2<f32>,
};

@vertex
fn vs(v: In) -> Out {
    var o: Out;
    let world = draw.model * vec4(v.position, 1.0);
    o.clip = frame.view_proj * world;
    // Panels are scaled uniformly: the model matrix transforms directions too.
    o.normal = (draw.model * vec4(v.normal, 0.0)).xyz;
    o.tangent = (draw.model * vec4(v.tangent, 0.0)).xyz;
    o.uv = v.uv;
    return o;
}

@fragment
fn fs(v: Out) -> @location(0) vec4<f32> {
    let bias = frame.light.w;
    // mipflow's feedback record (prepended to this file from `Feedback::wgsl(2)`): which level
    // the sampler uses, for a sample of the pixels. In uniform control flow: it takes
    // derivatives. `true`: no depth pre-pass here, so a fragment later covered by a nearer
    // panel records too (a game with a pre-pass passes its depth test's answer).
    if (draw.slots.x >= 0.0) {
        mipflow_record_feedback(u32(draw.slots.x), v.uv, draw.sizes.xy, bias, v.clip, true);
    }
    if (draw.slots.y >= 0.0) {
        mipflow_record_feedback(u32(draw.slots.y), v.uv, draw.sizes.zw, bias, v.clip, true);
    }
    let albedo = textureSampleBias(base_colour, material_sampler, v.uv, bias).rgb;
    let packed = textureSampleBias(normal_map, material_sampler, v.uv, bias).xyz;
    let n_ts = normalize(packed * 2.0 - 1.0);
    let n = normalize(v.normal);
    let t = normalize(v.tangent - n * dot(n, v.tangent));
    let b = cross(n, t);
    let normal = normalize(t * n_ts.x + b * n_ts.y + n * n_ts.z);
    let diffuse = max(dot(normal, frame.light.xyz), 0.0);
    let lit = albedo * (frame.colour.w + frame.colour.rgb * diffuse);
    return vec4(lit, 1.0);
}
