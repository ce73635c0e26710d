// mipflow's GPU feedback gather: after the passes that record (feedback.wgsl), copies the bins
// of the slots listed this frame into a compact buffer the CPU reads back, and zeroes them for
// the next frame. Its cost follows the slots drawn, not the slots registered.
//
// Out: [0] the count of listed slots (it may pass `room`: then only the first `room` entries
// are copied, and the CPU skips the frame and makes room), then per entry 17 words: the slot,
// its 16 bins. Every listed slot is zeroed, copied or not. The count itself is cleared by a
// buffer clear after this pass. `MipflowFeedback` comes from feedback_params.wgsl, put in front
// by the registry.

@group(0) @binding(0) var<storage, read_write> bins: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: MipflowFeedback;

@compute @workgroup_size(64)
fn gather(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let c = params.capacity;
    let listed = bins[c * 17u];
    if (id.x == 0u) {
        out[0] = listed;
    }
    let count = min(listed, c);
    let stride = groups.x * 64u;
    for (var i = id.x; i < count; i += stride) {
        let slot = bins[c * 17u + 1u + i];
        let keep = i < params.room;
        if (slot >= c) {
            // Never listed by the record (it checks the slots); named as no slot for the CPU.
            if (keep) {
                out[1u + i * 17u] = 0xffffffffu;
            }
            continue;
        }
        if (keep) {
            out[1u + i * 17u] = slot;
        }
        for (var l = 0u; l < 16u; l++) {
            let b = slot * 16u + l;
            if (keep) {
                out[2u + i * 17u + l] = bins[b];
            }
            bins[b] = 0u;
        }
    }
}
