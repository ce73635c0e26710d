// The parameters of mipflow's GPU feedback (`Feedback`'s uniform, 32 bytes), shared by the
// record (feedback.wgsl) and the gather (feedback_gather.wgsl): the registry puts this in
// front of each, so the two cannot disagree on the layout.

struct MipflowFeedback {
    // The frame number: which pixel of each block records.
    frame: u32,
    // log2 of the block side (3: one pixel in 8x8).
    block_shift: u32,
    // Slots the histogram buffer holds: a slot at or past it records nothing (0: feedback off).
    slots: u32,
    // The sampler's anisotropy clamp (1: trilinear only).
    max_anisotropy: u32,
    // This frame's tag (never 0).
    tag: u32,
    // Slots the buffer holds (C above: where the tags, the count and the list start).
    capacity: u32,
    // Slots one frame's gather copies out (read by the gather only).
    room: u32,
    pad: u32,
};
