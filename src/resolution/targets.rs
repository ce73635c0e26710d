//! The render-target pool: HDR colour, depth and the upscaler's intermediate, allocated at the
//! current scale bucket and charged to [`Category::RenderTargets`].
//!
//! The pool is keyed by descriptor (size, format, usage): [`RenderTargets::ensure`] keeps every
//! target whose descriptor is unchanged and reallocates the others. Why no cache of other sizes
//! (as bevy's `TextureCache` keeps): in mipflow the point of a lower scale is to give memory back
//! to the budget, so a target of the old size must be destroyed, not parked. Churn is prevented
//! upstream instead: scales are bucketed, and the controller only moves up after a stable window.

use std::sync::atomic::{AtomicU64, Ordering};

use super::buckets::{Bucket, scaled_size};
use super::target_set::{DEPTH, HDR};
use super::target_set::{INTERMEDIATE, SLOTS, TargetDesc, Upscaler, target_descriptors};
use crate::Result;
use crate::budget::Category;
use crate::gpu::{GpuContext, TrackedTexture};

/// A live target: its texture, a view, and the key it was made from.
#[derive(Debug)]
struct Slot {
    key: TargetDesc,
    texture: TrackedTexture,
    view: wgpu::TextureView,
}

/// Source of [`Targets::generation`]: unique across every pool, so a bind group cached against
/// one set of targets can never be mistaken for another's.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// The render targets of one frame, as [`RenderTargets::ensure`] returns them.
#[derive(Debug)]
pub struct Targets {
    slots: [Option<Slot>; SLOTS],
    output: (u32, u32),
    size: (u32, u32),
    bucket: Bucket,
    upscaler: Upscaler,
    generation: u64,
}

impl Targets {
    /// The HDR scene colour (Rgba16Float, scaled size): the scene pass renders here.
    pub fn hdr(&self) -> &TrackedTexture {
        &self.slot(HDR).texture
    }

    /// A view of [`Targets::hdr`].
    pub fn hdr_view(&self) -> &wgpu::TextureView {
        &self.slot(HDR).view
    }

    /// The scene depth (Depth32Float, scaled size).
    pub fn depth(&self) -> &TrackedTexture {
        &self.slot(DEPTH).texture
    }

    /// A view of [`Targets::depth`].
    pub fn depth_view(&self) -> &wgpu::TextureView {
        &self.slot(DEPTH).view
    }

    /// The upscaler's intermediate (output size), when the upscaler has one.
    pub fn intermediate_view(&self) -> Option<&wgpu::TextureView> {
        self.slots[INTERMEDIATE].as_ref().map(|s| &s.view)
    }

    /// The output size these targets were made for (what the upscale pass writes).
    pub fn output_size(&self) -> (u32, u32) {
        self.output
    }

    /// The scaled size of the HDR colour and depth.
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// The scale bucket.
    pub fn bucket(&self) -> Bucket {
        self.bucket
    }

    /// The upscaler these targets were made for.
    pub fn upscaler(&self) -> Upscaler {
        self.upscaler
    }

    /// Changes whenever any target is reallocated; unique across pools. The upscale pass caches
    /// its bind groups against it.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes of all targets, as charged to the ledger.
    pub fn bytes(&self) -> u64 {
        self.slots.iter().flatten().map(|s| s.texture.bytes()).sum()
    }

    fn slot(&self, i: usize) -> &Slot {
        // HDR and DEPTH are always filled once `Targets` is handed out (see `ensure`); if a
        // future change broke that, fail loudly in debug builds only.
        match &self.slots[i] {
            Some(s) => s,
            None => unreachable!("render target slot {i} missing"),
        }
    }
}

/// The pool of render targets. See the module docs.
#[derive(Debug)]
pub struct RenderTargets {
    upscaler: Upscaler,
    /// `None` until the first successful `ensure`, and after a failed reallocation.
    targets: Option<Targets>,
    reallocations: u64,
}

impl RenderTargets {
    /// An empty pool whose targets will suit `upscaler`.
    pub fn new(upscaler: Upscaler) -> Self {
        Self {
            upscaler,
            targets: None,
            reallocations: 0,
        }
    }

    /// The upscaler the targets are made for.
    pub fn upscaler(&self) -> Upscaler {
        self.upscaler
    }

    /// Switches the upscaler; the next [`RenderTargets::ensure`] adds or frees the intermediate.
    pub fn set_upscaler(&mut self, upscaler: Upscaler) {
        self.upscaler = upscaler;
    }

    /// Makes the targets match `output` (the size the upscale writes, normally the window's) at
    /// `bucket`, reallocating only the targets whose descriptor changed, and returns them.
    ///
    /// - Unchanged output size, bucket and upscaler: nothing is created, no GPU call is made, and
    ///   nothing is allocated on the heap (the per-frame path).
    /// - A changed target is **destroyed before its replacement is created**, so the ledger never
    ///   holds both (the budget must hold on every frame); wgpu keeps the memory alive until
    ///   commands already submitted that use it have finished.
    /// - An empty `output` (a minimised window, 0x0): returns `Ok(None)` and keeps the current
    ///   targets as they are, so that restoring the window reallocates nothing. The caller skips
    ///   rendering that frame, and should keep planning with the last non-empty size
    ///   ([`RenderTargets::current`]`.output_size()`), since those targets still hold memory.
    ///
    /// # Errors
    /// When a target cannot be created (out of memory, a size over the device's limits). The
    /// targets are then all released (`current()` is `None`), the ledger is consistent, and a
    /// later call (with a lower bucket, say) tries again.
    pub fn ensure(
        &mut self,
        ctx: &GpuContext,
        output: (u32, u32),
        bucket: Bucket,
    ) -> Result<Option<&Targets>> {
        if output.0 == 0 || output.1 == 0 {
            return Ok(None);
        }
        let size = scaled_size(output, bucket.scale());
        let wanted = target_descriptors(output, size, self.upscaler);
        let unchanged = self.targets.as_ref().is_some_and(|t| {
            t.slots
                .iter()
                .zip(&wanted)
                .all(|(have, want)| have.as_ref().map(|s| s.key) == *want)
        });
        if !unchanged {
            self.reallocate(ctx, output, size, bucket, &wanted)?;
        }
        Ok(self.targets.as_ref())
    }

    fn reallocate(
        &mut self,
        ctx: &GpuContext,
        output: (u32, u32),
        size: (u32, u32),
        bucket: Bucket,
        wanted: &[Option<TargetDesc>; SLOTS],
    ) -> Result<()> {
        let mut slots: [Option<Slot>; SLOTS] = match self.targets.take() {
            Some(t) => t.slots,
            None => Default::default(),
        };
        // Free every changed target first (drop = destroy + ledger release), then create.
        for (slot, want) in slots.iter_mut().zip(wanted) {
            if slot.as_ref().map(|s| s.key) != *want {
                *slot = None;
            }
        }
        for (slot, want) in slots.iter_mut().zip(wanted) {
            if let (None, Some(key)) = (slot.as_ref(), want) {
                // On error `slots` drops here with whatever it holds: everything is released.
                let texture = ctx.create_texture(&key.desc(), Category::RenderTargets)?;
                let view = texture.create_view();
                *slot = Some(Slot {
                    key: *key,
                    texture,
                    view,
                });
            }
        }
        self.reallocations += 1;
        tracing::debug!(
            output = ?output,
            size = ?size,
            bucket = %bucket,
            upscaler = ?self.upscaler,
            "render targets reallocated"
        );
        self.targets = Some(Targets {
            slots,
            output,
            size,
            bucket,
            upscaler: self.upscaler,
            generation: NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
        });
        Ok(())
    }

    /// The current targets, if any.
    pub fn current(&self) -> Option<&Targets> {
        self.targets.as_ref()
    }

    /// How many times [`RenderTargets::ensure`] has (re)allocated targets.
    pub fn reallocations(&self) -> u64 {
        self.reallocations
    }

    /// Bytes of the current targets (0 when there are none).
    pub fn bytes(&self) -> u64 {
        self.targets.as_ref().map_or(0, Targets::bytes)
    }

    /// Frees every target now.
    pub fn release(&mut self) {
        self.targets = None;
    }
}
