//! Textures and buffers whose bytes are charged to the ledger for as long as they live.

use crate::budget::ledger::Charge;

/// A wgpu texture charged to the ledger. Dropping it (or [`TrackedTexture::destroy`]) destroys the
/// texture and returns its bytes, so GPU memory comes back at once rather than when the last
/// reference (a bind group, say) happens to go.
#[derive(Debug)]
pub struct TrackedTexture {
    texture: wgpu::Texture,
    charge: Charge,
}

impl TrackedTexture {
    pub(crate) fn new(texture: wgpu::Texture, charge: Charge) -> Self {
        Self { texture, charge }
    }

    /// The texture.
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// The bytes charged for it.
    pub fn bytes(&self) -> u64 {
        self.charge.bytes()
    }

    /// The category it is charged to.
    pub fn category(&self) -> crate::budget::Category {
        self.charge.category()
    }

    /// A default view of the whole texture.
    pub fn create_view(&self) -> wgpu::TextureView {
        self.texture
            .create_view(&wgpu::TextureViewDescriptor::default())
    }

    /// Frees the texture now. wgpu keeps the memory until the GPU has finished with commands
    /// already submitted that use it, so this is safe right after a submit.
    pub fn destroy(self) {
        drop(self);
    }
}

impl Drop for TrackedTexture {
    /// Destroys the texture, so that the ledger and the driver agree at once: a clone of the
    /// `wgpu::Texture` kept elsewhere (a bind group) must not keep memory the ledger calls free.
    fn drop(&mut self) {
        self.texture.destroy();
        self.charge.release();
    }
}

/// A wgpu buffer charged to the ledger; see [`TrackedTexture`].
#[derive(Debug)]
pub struct TrackedBuffer {
    buffer: wgpu::Buffer,
    charge: Charge,
}

impl TrackedBuffer {
    pub(crate) fn new(buffer: wgpu::Buffer, charge: Charge) -> Self {
        Self { buffer, charge }
    }

    /// The buffer.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The bytes charged for it.
    pub fn bytes(&self) -> u64 {
        self.charge.bytes()
    }

    /// Frees the buffer now (see [`TrackedTexture::destroy`]).
    pub fn destroy(self) {
        drop(self);
    }
}

impl Drop for TrackedBuffer {
    /// Destroys the buffer; see [`TrackedTexture`]'s drop.
    fn drop(&mut self) {
        self.buffer.destroy();
        self.charge.release();
    }
}
