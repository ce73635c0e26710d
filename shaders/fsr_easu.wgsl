// Edge-adaptive spatial upsampling (the first half of an FSR 1-class upscaler), written for
// mipflow. It reads the scaled HDR scene colour and writes display-referred, gamma-2 encoded
// colour at the output size into an Rgba8Unorm intermediate that the sharpening pass
// (fsr_rcas.wgsl) reads.
//
// What it does, per output pixel:
// 1. Find the source position and the 2x2 source texels around it, and load a 12-texel footprint:
//    that 2x2 block plus its 8 edge neighbours (a 4x4 block without its corners).
// 2. Tone-map each texel and encode it with gamma 2 (a square root): the filter works in a
//    perceptual space, where a negative lobe rings least visibly and where the edge analysis
//    matches what the eye sees. Gamma 2 rather than the exact sRGB curve because it is one sqrt
//    instead of three pow per texel (36 per pixel), which on lavapipe was most of the pass's
//    cost, and it is as good a perceptual space for filtering and for 8-bit storage.
// 3. Estimate the local edge from luma: central-difference gradients at the four centre texels,
//    accumulated (bilinearly weighted) into a 2x2 structure tensor. Its dominant eigenvector is
//    the direction across the edge; its coherence (how much one direction dominates), scaled by
//    the gradient's strength, is the edge strength in [0, 1]. A tensor, not a summed gradient,
//    because opposite gradients on the two sides of a thin line must reinforce, not cancel.
// 4. Filter the 12 texels with a radial, Lanczos-2-like kernel whose footprint is stretched along
//    the edge (smoothing the staircase of an aliased edge) in proportion to the edge strength,
//    and whose negative lobe grows with it (keeping the edge crisp across). The kernel is a cheap
//    polynomial in the squared distance, x = d^2 (no trigonometry):
//       w(x) = (1 - x/4)^2 * (1 - x)          for x < 1 (the positive core, zero at d = 1),
//       w(x) = (1 - x/4)^2 * (1 - x) * lobe   for 1 <= x < 4 (the negative lobe, zero at d = 2).
// 5. Clamp the result to the range of the 2x2 centre texels: no ringing beyond what is there.

@group(0) @binding(1) var hdr: texture_2d<f32>;
@group(0) @binding(2) var hdr_sampler: sampler;

// One source texel, clamped to the image (`last` = the last texel), tone-mapped and gamma-2
// encoded.
fn tap(q: vec2<i32>, last: vec2<i32>) -> vec3<f32> {
    let c = textureLoad(hdr, clamp(q, vec2<i32>(0), last), 0).rgb;
    return sqrt(tone_map(c));
}

fn luma(c: vec3<f32>) -> f32 {
    return dot(c, vec3<f32>(0.299, 0.587, 0.114));
}

// Accumulates one texel into the filter: `off` is its offset from the sample position in source
// texels; `axis` the unit direction across the edge; `stretch` (>= 1) lengthens the footprint
// along the edge; `lobe` scales the negative lobe.
fn kernel(off: vec2<f32>, axis: vec2<f32>, stretch: f32, lobe: f32) -> f32 {
    let across = dot(off, axis);
    let along = dot(off, vec2<f32>(-axis.y, axis.x)) / stretch;
    let x = min(across * across + along * along, 4.0);
    let window = (1.0 - 0.25 * x) * (1.0 - 0.25 * x);
    let core = 1.0 - x;
    return window * core * select(1.0, lobe, x >= 1.0);
}

@fragment
fn fs_easu(v: VsOut) -> @location(0) vec4<f32> {
    // Source position of this output pixel centre, with texel centres on integers.
    let sp = v.pos.xy * p.src_size / p.out_size - vec2<f32>(0.5);
    let fl = floor(sp);
    let t = sp - fl;
    let o = vec2<i32>(fl);
    let last = vec2<i32>(textureDimensions(hdr, 0)) - vec2<i32>(1);

    // The footprint:     b c
    //                  e f g h
    //                  i j k l
    //                    n m
    // with f at `o`, and the sample position inside the f-g-j-k square.
    let b = tap(o + vec2<i32>(0, -1), last);
    let c = tap(o + vec2<i32>(1, -1), last);
    let e = tap(o + vec2<i32>(-1, 0), last);
    let f = tap(o, last);
    let g = tap(o + vec2<i32>(1, 0), last);
    let h = tap(o + vec2<i32>(2, 0), last);
    let i = tap(o + vec2<i32>(-1, 1), last);
    let j = tap(o + vec2<i32>(0, 1), last);
    let k = tap(o + vec2<i32>(1, 1), last);
    let l = tap(o + vec2<i32>(2, 1), last);
    let n = tap(o + vec2<i32>(0, 2), last);
    let m = tap(o + vec2<i32>(1, 2), last);

    let lb = luma(b); let lc = luma(c);
    let le = luma(e); let lf = luma(f); let lg = luma(g); let lh = luma(h);
    let li = luma(i); let lj = luma(j); let lk = luma(k); let ll = luma(l);
    let ln = luma(n); let lm = luma(m);

    // Central-difference gradients at the four centre texels (spacing 2, halved).
    let gf = 0.5 * vec2<f32>(lg - le, lj - lb);
    let gg = 0.5 * vec2<f32>(lh - lf, lk - lc);
    let gj = 0.5 * vec2<f32>(lk - li, ln - lf);
    let gk = 0.5 * vec2<f32>(ll - lj, lm - lg);
    let wf = (1.0 - t.x) * (1.0 - t.y);
    let wg = t.x * (1.0 - t.y);
    let wj = (1.0 - t.x) * t.y;
    let wk = t.x * t.y;
    // Structure tensor [[jxx, jxy], [jxy, jyy]].
    let jxx = wf * gf.x * gf.x + wg * gg.x * gg.x + wj * gj.x * gj.x + wk * gk.x * gk.x;
    let jyy = wf * gf.y * gf.y + wg * gg.y * gg.y + wj * gj.y * gj.y + wk * gk.y * gk.y;
    let jxy = wf * gf.x * gf.y + wg * gg.x * gg.y + wj * gj.x * gj.y + wk * gk.x * gk.y;
    let half_diff = 0.5 * (jxx - jyy);
    let root = sqrt(half_diff * half_diff + jxy * jxy);
    let l1 = 0.5 * (jxx + jyy) + root;
    // Dominant eigenvector (across the edge); whichever form is better conditioned.
    var axis = select(vec2<f32>(jxy, l1 - jxx), vec2<f32>(l1 - jyy, jxy), jxx >= jyy);
    let alen = length(axis);
    axis = select(vec2<f32>(1.0, 0.0), axis / max(alen, 1e-8), alen > 1e-8);
    // Coherence in [0, 1]: 1 for a straight edge, 0 for no preferred direction.
    let coherence = 2.0 * root / max(jxx + jyy, 1e-8);
    // Gradient strength: a luma step of about 1/8 or more counts fully. Why: below that the
    // direction is mostly noise and quantisation, and a stretched kernel would smear texture.
    let strength = coherence * clamp(sqrt(l1) * 8.0, 0.0, 1.0);
    // Up to twice as long along a strong edge; the negative lobe from 0.2 (about Lanczos 2's own
    // depth with this polynomial) on flat areas to 0.5 on strong edges.
    let stretch = 1.0 + strength;
    let lobe = mix(0.2, 0.5, strength);

    var acc = vec3<f32>(0.0);
    var wsum = 0.0;
    // Offsets from the sample position: texel position minus `t` (f is at 0,0).
    var w: f32;
    w = kernel(vec2<f32>(0.0, -1.0) - t, axis, stretch, lobe); acc += w * b; wsum += w;
    w = kernel(vec2<f32>(1.0, -1.0) - t, axis, stretch, lobe); acc += w * c; wsum += w;
    w = kernel(vec2<f32>(-1.0, 0.0) - t, axis, stretch, lobe); acc += w * e; wsum += w;
    w = kernel(vec2<f32>(0.0, 0.0) - t, axis, stretch, lobe); acc += w * f; wsum += w;
    w = kernel(vec2<f32>(1.0, 0.0) - t, axis, stretch, lobe); acc += w * g; wsum += w;
    w = kernel(vec2<f32>(2.0, 0.0) - t, axis, stretch, lobe); acc += w * h; wsum += w;
    w = kernel(vec2<f32>(-1.0, 1.0) - t, axis, stretch, lobe); acc += w * i; wsum += w;
    w = kernel(vec2<f32>(0.0, 1.0) - t, axis, stretch, lobe); acc += w * j; wsum += w;
    w = kernel(vec2<f32>(1.0, 1.0) - t, axis, stretch, lobe); acc += w * k; wsum += w;
    w = kernel(vec2<f32>(2.0, 1.0) - t, axis, stretch, lobe); acc += w * l; wsum += w;
    w = kernel(vec2<f32>(0.0, 2.0) - t, axis, stretch, lobe); acc += w * n; wsum += w;
    w = kernel(vec2<f32>(1.0, 2.0) - t, axis, stretch, lobe); acc += w * m; wsum += w;

    // Bilinear of the centre four: the fallback when the weights nearly cancel.
    let bilinear = mix(mix(f, g, t.x), mix(j, k, t.x), t.y);
    var col = select(bilinear, acc / wsum, wsum > 1e-3);
    // De-ring: stay within the range of the 2x2 texels around the sample.
    let lo = min(min(f, g), min(j, k));
    let hi = max(max(f, g), max(j, k));
    col = clamp(col, lo, hi);
    return vec4<f32>(col, 1.0);
}
