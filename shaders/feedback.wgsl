// mipflow's GPU feedback record: what the sampler really uses, per texture, as a histogram of
// pixels per mip level. Prepend this, with feedback_params.wgsl in front of it, to any fragment
// shader (mipflow's own pass does; a game's gets both from
// `mipflow::feedback::Feedback::wgsl(group)`, with its own bind group number in place of 2) and
// call `mipflow_record_feedback` once per sampled texture.
//
// One pixel in each BLOCK x BLOCK block records per frame, a different one each frame, so that
// every pixel is seen every BLOCK^2 frames; the CPU scales the counts back up. Bins are atomic
// counters, 16 per texture slot: bin l counts pixels whose level (the log2 of the texel
// footprint the sampler uses, bias included) is in [l, l + 1).
//
// So that a frame's cost follows what it draws, not how many textures are registered, a slot's
// first record in a frame also lists the slot: the buffer holds, for C = capacity slots, the
// bins [0, 16C), one tag per slot [16C, 17C) (the frame's tag once the slot is listed; tags are
// never 0 and change at every gather, so they are never cleared), the count of listed slots at
// 17C and the list from 17C + 1. After the passes, mipflow's gather (feedback_gather.wgsl)
// copies the listed slots' bins out, zeroes them, and the count is cleared.

@group(2) @binding(0) var<storage, read_write> mipflow_feedback_bins: array<atomic<u32>>;
@group(2) @binding(1) var<uniform> mipflow_feedback: MipflowFeedback;

// Records the level the sampler uses for `uv` on a texture whose level 0 is `size` texels, with
// the mip bias `bias`, for the texture in `slot`. `frag` is the fragment's @builtin(position);
// `visible` false records nothing (a fragment behind a depth pre-pass's surface: a shader with
// side effects runs before the depth test, so occluded fragments would count otherwise).
// Takes derivatives: call it in uniform control flow (before any discard or branch on data).
fn mipflow_record_feedback(slot: u32, uv: vec2<f32>, size: vec2<f32>, bias: f32, frag: vec4<f32>, visible: bool) {
    let dx = dpdx(uv * size);
    let dy = dpdy(uv * size);
    // The footprint's long and short axes; anisotropic filtering takes up to max_anisotropy
    // samples along the long one, so the level follows the long axis over that ratio.
    let lx = length(dx);
    let ly = length(dy);
    let major = max(lx, ly);
    let minor = max(min(lx, ly), 1e-6);
    let ratio = clamp(major / minor, 1.0, f32(max(mipflow_feedback.max_anisotropy, 1u)));
    let level = clamp(log2(max(major / ratio, 1e-6)) + bias, 0.0, 15.0);
    let side = 1u << mipflow_feedback.block_shift;
    let mask = side - 1u;
    // A scrambled walk over the block's pixels, one per frame.
    let k = (mipflow_feedback.frame * 37u) & (side * side - 1u);
    let p = vec2<u32>(frag.xy);
    if (visible && slot < mipflow_feedback.slots && (p.x & mask) == (k & mask) && (p.y & mask) == (k >> mipflow_feedback.block_shift)) {
        // A NaN level (NaN texture coordinates, an infinite footprint) counts as level 0: its
        // conversion is undefined in WGSL and could reach another slot's bins. Never past 15.
        let finite = (bitcast<u32>(level) & 0x7f800000u) != 0x7f800000u;
        let bin = min(u32(clamp(select(0.0, level, finite), 0.0, 15.0)), 15u);
        atomicAdd(&mipflow_feedback_bins[slot * 16u + bin], 1u);
        // The slot's first record this frame lists it (the load first: most records find the
        // tag already set, and a load costs less than an exchange).
        let c = mipflow_feedback.capacity;
        let tag = mipflow_feedback.tag;
        let t = c * 16u + slot;
        if (atomicLoad(&mipflow_feedback_bins[t]) != tag && atomicExchange(&mipflow_feedback_bins[t], tag) != tag) {
            let n = atomicAdd(&mipflow_feedback_bins[c * 17u], 1u);
            if (n < c) {
                atomicStore(&mipflow_feedback_bins[c * 17u + 1u + n], slot);
            }
        }
    }
}
