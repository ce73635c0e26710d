//! Textures and buffers whose bytes are charged to the ledger for as long as they live.

use crate::budget::ledger::Charge;

/// A wgpu texture charged to the ledger. Dropping it (or [`TrackedTexture::destroy`]) destroys the
/// texture and returns its bytes, so GPU memory comes back at once rather than when the last
/// reference (a bind group, say) happens to go.
///
/// It is used where a `wgpu::Texture` is: it derefs to one (`tracked.create_view(&desc)`,
/// `tracked.size()`, `&*tracked`), and `&TrackedTexture` coerces to `&wgpu::Texture` in calls
/// such as [`crate::read_texture_rgba8`]. Do not call `wgpu::Texture::destroy` through it: drop
/// it instead, so that the ledger returns its bytes at the same time.
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

/// A wgpu buffer charged to the ledger; see [`TrackedTexture`]. It derefs to the
/// `wgpu::Buffer` (`tracked.slice(..)`, `tracked.as_entire_binding()`).
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

impl std::ops::Deref for TrackedTexture {
    type Target = wgpu::Texture;

    fn deref(&self) -> &wgpu::Texture {
        &self.texture
    }
}

impl AsRef<wgpu::Texture> for TrackedTexture {
    fn as_ref(&self) -> &wgpu::Texture {
        &self.texture
    }
}

impl std::ops::Deref for TrackedBuffer {
    type Target = wgpu::Buffer;

    fn deref(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

impl AsRef<wgpu::Buffer> for TrackedBuffer {
    fn as_ref(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}
