//! What an egui renderer holds on the GPU, charged to the budget's ledger
//! ([`mipflow::Category::Overlay`]), for any egui-wgpu layer: the demo's, or a game's.

use std::collections::HashMap;

use egui::epaint::{ClippedPrimitive, ImageDelta, Primitive};
use mipflow::{Category, Charge, Ledger};

/// egui-wgpu's starting buffer capacities (`VERTEX_BUFFER_START_CAPACITY`,
/// `INDEX_BUFFER_START_CAPACITY` in its renderer.rs, 0.37).
const VERTEX_START: u64 = (std::mem::size_of::<egui::epaint::Vertex>() * 1024) as u64;
const INDEX_START: u64 = (std::mem::size_of::<u32>() * 1024 * 3) as u64;
/// Its uniform buffer (16 bytes) and six texture-flag buffers (a `u32` each, counted at the
/// 16 bytes a uniform binding occupies).
const FIXED_BUFFERS: u64 = 16 + 6 * 16;

/// The ledger charges of one egui-wgpu renderer. egui-wgpu creates its textures and buffers
/// itself, outside mipflow's tracked constructors, so they are mirrored here:
/// - textures exactly: every full delta (`delta.pos` is `None`) creates a `w x h` `Rgba8Unorm`
///   texture (4 bytes a texel, one level) for that id, replacing the previous one, and every
///   freed id destroys it; partial deltas write into the existing texture;
/// - buffers as an **estimate**: the vertex and index buffers grow by egui-wgpu's own rule
///   (double, or the size needed if larger, from 1024 vertices and 3072 indices) and never
///   shrink, which [`EguiCharges::buffers`] replays from the paint jobs' vertex and index
///   counts; plus its small uniform buffers. An estimate because egui-wgpu does not expose its
///   buffers' sizes.
///
/// Per frame, beside the egui-wgpu calls: [`EguiCharges::texture_set`] for each delta applied
/// with `update_texture`, [`EguiCharges::buffers`] with the paint jobs given to
/// `update_buffers`, and [`EguiCharges::texture_freed`] for each id given to `free_texture`.
/// Dropped, it releases every charge (drop it with the egui renderer).
#[derive(Debug)]
pub struct EguiCharges {
    ledger: Ledger,
    textures: HashMap<egui::TextureId, Charge>,
    vertex_capacity: u64,
    index_capacity: u64,
    buffers: Option<(u64, Charge)>,
}

impl EguiCharges {
    /// The charges of a new egui-wgpu renderer (its starting buffers charged at once).
    pub fn new(ledger: Ledger) -> Self {
        let mut c = Self {
            ledger,
            textures: HashMap::new(),
            vertex_capacity: VERTEX_START,
            index_capacity: INDEX_START,
            buffers: None,
        };
        c.charge_buffers();
        c
    }

    /// Texture `id` was given `delta` (`egui_wgpu::Renderer::update_texture`): a full delta
    /// (re)creates it and its charge.
    pub fn texture_set(&mut self, id: egui::TextureId, delta: &ImageDelta) {
        if delta.pos.is_none() {
            let bytes = delta.image.width() as u64 * delta.image.height() as u64 * 4;
            let charge = self.ledger.charge(Category::Overlay, bytes, "egui texture");
            self.textures.insert(id, charge);
        }
    }

    /// Texture `id` was freed (`egui_wgpu::Renderer::free_texture`).
    pub fn texture_freed(&mut self, id: egui::TextureId) {
        self.textures.remove(&id);
    }

    /// The frame's paint jobs (`egui_wgpu::Renderer::update_buffers`): the buffers' growth
    /// replayed, the charge updated when it changed.
    pub fn buffers(&mut self, jobs: &[ClippedPrimitive]) {
        let (mut vertices, mut indices) = (0u64, 0u64);
        for p in jobs {
            if let Primitive::Mesh(m) = &p.primitive {
                vertices += m.vertices.len() as u64;
                indices += m.indices.len() as u64;
            }
        }
        let vneed = vertices * std::mem::size_of::<egui::epaint::Vertex>() as u64;
        let ineed = indices * 4;
        if vneed > self.vertex_capacity {
            self.vertex_capacity = (self.vertex_capacity * 2).max(vneed);
        }
        if ineed > self.index_capacity {
            self.index_capacity = (self.index_capacity * 2).max(ineed);
        }
        self.charge_buffers();
    }

    fn charge_buffers(&mut self) {
        let total = self.vertex_capacity + self.index_capacity + FIXED_BUFFERS;
        if self.buffers.as_ref().is_none_or(|(b, _)| *b != total) {
            self.buffers = None;
            let c = self
                .ledger
                .charge(Category::Overlay, total, "egui buffers (estimate)");
            self.buffers = Some((total, c));
        }
    }

    /// Bytes charged (textures exact, buffers estimated).
    pub fn charged_bytes(&self) -> u64 {
        self.textures.values().map(Charge::bytes).sum::<u64>()
            + self.buffers.as_ref().map_or(0, |(b, _)| *b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::epaint::{Mesh, Vertex};

    fn overlay_bytes(l: &Ledger) -> u64 {
        l.snapshot().by_category.get(Category::Overlay).bytes
    }

    /// Full deltas charge 4 bytes a texel and replace the id's charge, partial ones add
    /// nothing, a freed id releases its charge; the buffers start at egui-wgpu's capacities and
    /// double (or jump to the need); everything is released when the charges are dropped.
    #[test]
    fn textures_exact_buffers_by_the_growth_rule() {
        let ledger = Ledger::default();
        let mut c = EguiCharges::new(ledger.clone());
        let start = VERTEX_START + INDEX_START + FIXED_BUFFERS;
        assert_eq!(overlay_bytes(&ledger), start);
        let opts = egui::TextureOptions::LINEAR;
        let image = |w, h| egui::ColorImage::filled([w, h], egui::Color32::WHITE);
        let font = egui::TextureId::Managed(0);
        c.texture_set(font, &ImageDelta::full(image(64, 32), opts));
        assert_eq!(overlay_bytes(&ledger), start + 64 * 32 * 4);
        c.texture_set(font, &ImageDelta::partial([0, 0], image(8, 8), opts));
        assert_eq!(overlay_bytes(&ledger), start + 64 * 32 * 4);
        c.texture_set(font, &ImageDelta::full(image(128, 32), opts));
        assert_eq!(overlay_bytes(&ledger), start + 128 * 32 * 4);
        let user = egui::TextureId::User(7);
        c.texture_set(user, &ImageDelta::full(image(16, 16), opts));
        c.texture_freed(user);
        assert_eq!(overlay_bytes(&ledger), start + 128 * 32 * 4);

        // 1500 vertices: past 1024, the vertex buffer doubles; 10,000 indices: past the double
        // of 3072, it takes the need.
        let mesh = Mesh {
            vertices: vec![Vertex::default(); 1500],
            indices: vec![0; 10_000],
            ..Mesh::default()
        };
        let job = ClippedPrimitive {
            clip_rect: egui::Rect::EVERYTHING,
            primitive: Primitive::Mesh(mesh),
        };
        c.buffers(std::slice::from_ref(&job));
        let vertex = std::mem::size_of::<Vertex>() as u64;
        assert_eq!(
            c.charged_bytes(),
            128 * 32 * 4 + VERTEX_START * 2 + 10_000 * 4 + FIXED_BUFFERS
        );
        assert_eq!(VERTEX_START, 1024 * vertex);
        assert_eq!(overlay_bytes(&ledger), c.charged_bytes());
        drop(c);
        assert_eq!(overlay_bytes(&ledger), 0);
    }
}
