// The own_renderer example's floor: one large texture streamed tile by tile (mipflow's virtual
// textures), sampled through `vt_sample_feedback` (prepended from `mipflow::vt_wgsl(1)`), which
// also tells mipflow which tiles the view wants. Lit by the same light as the panels.

struct Frame {
    view_proj: mat4x4<f32>,
    light: vec4<f32>,
    colour: vec4<f32>,
};

struct Draw {
    model: mat4x4<f32>,
    // x, y: how many times the texture repeats across and along the floor.
    slots: vec4<f32>,
    sizes: vec4<f32>,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> draw: Draw;

struct In {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec3<f32>,
    @location(3) uv: vec2<f32>,
};

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) uv: vec2<f32>,
};

@vertex
fn vs(v: In) -> Out {
    var o: Out;
    o.clip = frame.view_proj * (draw.model * vec4(v.position, 1.0));
    o.normal = normalize((draw.model * vec4(v.normal, 0.0)).xyz);
    o.uv = v.uv * draw.slots.xy;
    return o;
}

@fragment
fn fs(v: Out) -> @location(0) vec4<f32> {
    // Virtual texture 0 of the cache; the mip bias of the render scale; the pixel for the
    // feedback's sampling pattern.
    let albedo = vt_sample_feedback(0u, v.uv, frame.light.w, vec2<u32>(v.clip.xy)).rgb;
    let diffuse = max(dot(v.normal, frame.light.xyz), 0.0);
    return vec4(albedo * (frame.colour.w + frame.colour.rgb * diffuse), 1.0);
}
