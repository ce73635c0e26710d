// Virtual texture sampling (mipflow::VirtualTextures): a texture resident tile by tile in one
// atlas, found through a page table. `vt_sample(id, uv, bias)` is the call; it filters by hand
// (bilinear on two levels, each texel through its own tile), so filtering across a tile's edge
// reads the neighbouring tile and shows no seam.
//
// Cost of one `vt_sample`: the level from the derivatives, one page read where `uv` falls, then
// 4 page reads and 4 texel loads per level for two levels (8 and 8), about 100 ALU operations.
// A tile that is not resident reads its finest resident ancestor (the page entry says which).

struct VtLevel {
    size: vec2<u32>,
    // Where the level lies in its slot (the tail's levels); 0 for a tiled level.
    origin: vec2<u32>,
    tiles_x: u32,
    // The level's first entry in `vt_pages`.
    first: u32,
    // 1: tiles of `tile` texels, one entry each; 0: one entry for the whole level (the tail).
    tiled: u32,
    _pad: u32,
}

struct VtInfo {
    level_count: u32,
    tile: u32,
    slots_x: u32,
    // 0: clamp to the edge; 1: repeat.
    address: u32,
    levels: array<VtLevel, 16>,
}

@group(0) @binding(0) var vt_atlas: texture_2d<f32>;
// Page entries: bits 0..24 the slot, 24..28 the level it holds, bit 31 set when valid.
@group(0) @binding(1) var<storage, read> vt_pages: array<u32>;
@group(0) @binding(2) var<storage, read> vt_infos: array<VtInfo>;
// Tile feedback: one counter per page entry, what `vt_sample_feedback` records (read back and
// cleared each frame by the cache).
@group(0) @binding(3) var<storage, read_write> vt_feedback: array<atomic<u32>>;
// x: the frame number (which pixel of each 4x4 block records this frame).
@group(0) @binding(4) var<uniform> vt_frame: vec4<u32>;

// Texel `within` (in the slot) of the slot that page entry `e` names.
fn vt_slot_load(id: u32, e: u32, within: vec2<u32>) -> vec4<f32> {
    let slot = e & 0xFFFFFFu;
    let sx = vt_infos[id].slots_x;
    let origin = vec2<u32>(slot % sx, slot / sx) * vt_infos[id].tile;
    return textureLoad(vt_atlas, vec2<i32>(origin + within), 0);
}

// Texel `p` of level `level` (addressed per the texture's mode), from the tile that holds it,
// or the texel of its finest resident ancestor that covers it.
fn vt_texel(id: u32, level: u32, p: vec2<i32>) -> vec4<f32> {
    let lv = vt_infos[id].levels[level];
    let size = vec2<i32>(lv.size);
    var q = clamp(p, vec2<i32>(0), size - 1);
    if vt_infos[id].address == 1u {
        q = ((p % size) + size) % size;
    }
    let tile = vt_infos[id].tile;
    let uq = vec2<u32>(q);
    var e = vt_pages[lv.first];
    if lv.tiled == 1u {
        let t = uq / tile;
        e = vt_pages[lv.first + t.y * lv.tiles_x + t.x];
    }
    let held = (e >> 24u) & 0xFu;
    if held <= level {
        if lv.tiled == 1u {
            return vt_slot_load(id, e, uq % tile);
        }
        return vt_slot_load(id, e, lv.origin + uq);
    }
    // An ancestor: the texel of level `held` that covers this one.
    let hl = vt_infos[id].levels[held];
    let hq = min(uq >> vec2<u32>(held - level), hl.size - 1u);
    if hl.tiled == 1u {
        return vt_slot_load(id, e, hq % tile);
    }
    return vt_slot_load(id, e, hl.origin + hq);
}

// Bilinear filtering of level `level` at `uv`, by hand.
fn vt_bilinear(id: u32, level: u32, uv: vec2<f32>) -> vec4<f32> {
    let size = vec2<f32>(vt_infos[id].levels[level].size);
    let p = uv * size - 0.5;
    let i = vec2<i32>(floor(p));
    let f = p - floor(p);
    let a = vt_texel(id, level, i);
    let b = vt_texel(id, level, i + vec2<i32>(1, 0));
    let c = vt_texel(id, level, i + vec2<i32>(0, 1));
    let d = vt_texel(id, level, i + vec2<i32>(1, 1));
    return mix(mix(a, b, f.x), mix(c, d, f.x), f.y);
}

// The finest level resident where `uv` falls at level `level` (the entry's held level).
fn vt_resident_level(id: u32, level: u32, uv: vec2<f32>) -> u32 {
    let lv = vt_infos[id].levels[level];
    if lv.tiled == 0u {
        return level;
    }
    var q = vec2<i32>(floor(uv * vec2<f32>(lv.size)));
    let size = vec2<i32>(lv.size);
    q = clamp(q, vec2<i32>(0), size - 1);
    if vt_infos[id].address == 1u {
        let w = vec2<i32>(floor(uv * vec2<f32>(lv.size)));
        q = ((w % size) + size) % size;
    }
    let t = vec2<u32>(q) / vt_infos[id].tile;
    let e = vt_pages[lv.first + t.y * lv.tiles_x + t.x];
    return max((e >> 24u) & 0xFu, level);
}

// Trilinear sampling at level of detail `lod` (0 = full size): the finest resident level where
// `uv` falls bounds it from below.
fn vt_sample_level(id: u32, uv: vec2<f32>, lod: f32) -> vec4<f32> {
    let n = vt_infos[id].level_count;
    let l = clamp(lod, 0.0, f32(n - 1u));
    let l0 = u32(floor(l));
    let held = vt_resident_level(id, l0, uv);
    if held > l0 {
        return vt_bilinear(id, held, uv);
    }
    let a = vt_bilinear(id, l0, uv);
    if l0 + 1u >= n {
        return a;
    }
    return mix(a, vt_bilinear(id, l0 + 1u, uv), l - floor(l));
}

// Samples virtual texture `id` at `uv`, its level from the derivatives plus `bias` (the render
// scale's mip bias). Call it in uniform control flow (it takes derivatives).
fn vt_sample(id: u32, uv: vec2<f32>, bias: f32) -> vec4<f32> {
    let size0 = vec2<f32>(vt_infos[id].levels[0].size);
    let dx = dpdx(uv) * size0;
    let dy = dpdy(uv) * size0;
    let rho2 = max(dot(dx, dx), dot(dy, dy));
    let lod = 0.5 * log2(max(rho2, 1e-12)) + bias;
    return vt_sample_level(id, uv, lod);
}

// The page entry of the tile of level `level` where `uv` falls.
fn vt_entry_index(id: u32, level: u32, uv: vec2<f32>) -> u32 {
    let lv = vt_infos[id].levels[level];
    if lv.tiled == 0u {
        return lv.first;
    }
    let size = vec2<i32>(lv.size);
    var q = vec2<i32>(floor(uv * vec2<f32>(lv.size)));
    if vt_infos[id].address == 1u {
        q = ((q % size) + size) % size;
    } else {
        q = clamp(q, vec2<i32>(0), size - 1);
    }
    let t = vec2<u32>(q) / vt_infos[id].tile;
    return lv.first + t.y * lv.tiles_x + t.x;
}

// `vt_sample`, and for one pixel in each 4x4 block per frame (`pixel`: the fragment's
// position), the tile of the level the view wants counted in the feedback: what the cache
// streams from. One atomic add for a sixteenth of the pixels.
fn vt_sample_feedback(id: u32, uv: vec2<f32>, bias: f32, pixel: vec2<u32>) -> vec4<f32> {
    let size0 = vec2<f32>(vt_infos[id].levels[0].size);
    let dx = dpdx(uv) * size0;
    let dy = dpdy(uv) * size0;
    let rho2 = max(dot(dx, dx), dot(dy, dy));
    let lod = 0.5 * log2(max(rho2, 1e-12)) + bias;
    let f = vt_frame.x;
    if ((pixel.x + f) & 3u) == 0u && ((pixel.y + (f >> 2u)) & 3u) == 0u {
        let n = vt_infos[id].level_count;
        let wanted = u32(floor(clamp(lod, 0.0, f32(n - 1u))));
        atomicAdd(&vt_feedback[vt_entry_index(id, wanted, uv)], 1u);
    }
    return vt_sample_level(id, uv, lod);
}
