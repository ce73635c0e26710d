//! The render-target pool: HDR colour, depth and the upscaler's intermediate, allocated at the
//! current scale bucket and charged to [`Category::RenderTargets`].
//!
//! The pool is keyed by descriptor (size, format, usage): [`RenderTargets::ensure`] keeps every
//! target whose descriptor is unchanged and reallocates the others. Why no cache of other sizes
//! (as bevy's `TextureCache` keeps): in mipflow the point of a lower scale is to give memory back
//! to the budget, so a target of the old size must be destroyed, not parked. Churn is prevented
//! upstream instead: scales are bucketed, and the controller only moves up after a stable window.

use std::sync::atomic::{AtomicU64, Ordering};

use super::buckets::{ScaleBucket, scaled_size};
use super::target_set::{TargetDesc, TargetKey, TargetSet, Upscaler};
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

/// The render targets of one frame, as [`RenderTargets::ensure`] returns them: one per
/// [`TargetSet`] entry, in its order (an entry not made at this scale, such as an upscaler's
/// intermediate at native scale, has no texture).
#[derive(Debug)]
pub struct Targets {
    slots: Vec<Option<Slot>>,
    output: (u32, u32),
    size: (u32, u32),
    bucket: ScaleBucket,
    upscaler: Upscaler,
    intermediate: Option<usize>,
    generation: u64,
}

impl Targets {
    /// The target of `key` ([`TargetSet::add`]), if the set has it and it is made at this
    /// scale (an upscaler's intermediate is not made at native scale).
    pub fn texture(&self, key: TargetKey) -> Option<&TrackedTexture> {
        self.slot(key.index()).map(|s| &s.texture)
    }

    /// A view of the target of `key`, if the set has it and it is made at this scale.
    pub fn view(&self, key: TargetKey) -> Option<&wgpu::TextureView> {
        self.slot(key.index()).map(|s| &s.view)
    }

    fn slot(&self, i: usize) -> Option<&Slot> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// How many targets the set declares (made at this scale or not).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Target `i`, which the accessors below require.
    fn required(&self, i: usize) -> &Slot {
        match self.slot(i) {
            Some(s) => s,
            None => panic!("render target {i} is not in the set or not made at this scale"),
        }
    }

    /// A view of the Renderer's HDR scene colour (target 0 of [`TargetSet::renderer`]).
    ///
    /// # Panics
    /// On an empty set, or when target 0 is not made at this scale.
    pub(crate) fn hdr_view(&self) -> &wgpu::TextureView {
        &self.required(0).view
    }

    /// A view of the Renderer's scene depth (target 1 of [`TargetSet::renderer`]).
    ///
    /// # Panics
    /// On a set of fewer than two targets, or when target 1 is not made at this scale.
    pub(crate) fn depth_view(&self) -> &wgpu::TextureView {
        &self.required(1).view
    }

    /// The upscaler's intermediate (output size), when the upscaler has one at this scale
    /// ([`Upscaler::EasuRcas`] below native scale).
    pub fn intermediate_view(&self) -> Option<&wgpu::TextureView> {
        self.intermediate
            .and_then(|i| self.slot(i))
            .map(|s| &s.view)
    }

    /// The output size these targets were made for (what the upscale pass writes).
    pub fn output_size(&self) -> (u32, u32) {
        self.output
    }

    /// The scaled size (of every [`super::TargetSize::Scaled`] target).
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// The scale bucket.
    pub fn bucket(&self) -> ScaleBucket {
        self.bucket
    }

    /// The mip bias of the scale these targets really have (their area against the output's,
    /// never above 0): the bucket's own, but at a tiny output, where every bucket rounds to the
    /// same size, that of the size made (1x1 at scale 0.5 is drawn 1:1: no bias, not -1).
    pub fn mip_bias(&self) -> f32 {
        let ((tw, th), (ow, oh)) = (self.size, self.output);
        let area = (f64::from(tw) * f64::from(th)) / (f64::from(ow) * f64::from(oh));
        if area.is_finite() && area > 0.0 {
            (0.5 * area.log2()).min(0.0) as f32
        } else {
            self.bucket.mip_bias()
        }
    }

    /// The upscaler these targets were made for.
    pub fn upscaler(&self) -> Upscaler {
        self.upscaler
    }

    /// Changes whenever any target is reallocated; unique across pools. Bind groups over the
    /// targets are cached against it (the upscale pass's are).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes of all targets, as charged to the ledger.
    pub fn bytes(&self) -> u64 {
        self.slots.iter().flatten().map(|s| s.texture.bytes()).sum()
    }
}

/// The pool of render targets. See the module docs.
#[derive(Debug)]
pub struct RenderTargets {
    upscaler: Upscaler,
    /// The HDR colour format of the Renderer's set.
    hdr: wgpu::TextureFormat,
    set: TargetSet,
    /// The set is the Renderer's for `upscaler` (and follows [`RenderTargets::set_upscaler`]).
    own_set: bool,
    /// `None` until the first successful `ensure`, and after a failed reallocation.
    targets: Option<Targets>,
    reallocations: u64,
}

impl RenderTargets {
    /// An empty pool whose targets will be the Renderer's set for `upscaler` (HDR colour, depth,
    /// and the upscaler's intermediate).
    pub fn new(upscaler: Upscaler) -> Self {
        Self::with_hdr(upscaler, super::HDR_FORMAT)
    }

    /// [`RenderTargets::new`] with the HDR colour in `hdr` (the Renderer's choice is
    /// [`super::hdr_format`] of the device).
    pub fn with_hdr(upscaler: Upscaler, hdr: wgpu::TextureFormat) -> Self {
        Self {
            upscaler,
            hdr,
            set: TargetSet::renderer_with_hdr(upscaler, hdr),
            own_set: true,
            targets: None,
            reallocations: 0,
        }
    }

    /// An empty pool for a renderer's own declared set.
    pub fn with_set(set: TargetSet) -> Self {
        Self {
            upscaler: Upscaler::Bilinear,
            hdr: super::HDR_FORMAT,
            set,
            own_set: false,
            targets: None,
            reallocations: 0,
        }
    }

    /// The declared targets.
    pub fn set(&self) -> &TargetSet {
        &self.set
    }

    /// The upscaler the targets are made for.
    pub fn upscaler(&self) -> Upscaler {
        self.upscaler
    }

    /// Switches the upscaler; the next [`RenderTargets::ensure`] adds or frees the intermediate
    /// (the Renderer's set only: a declared set stays as declared).
    pub fn set_upscaler(&mut self, upscaler: Upscaler) {
        self.upscaler = upscaler;
        if self.own_set {
            self.set = TargetSet::renderer_with_hdr(upscaler, self.hdr);
        }
    }

    /// Makes the targets match `output` (the size the upscale writes, normally the window's) at
    /// `bucket`, reallocating only the targets whose descriptor changed, and returns them.
    ///
    /// - Unchanged output size, bucket and set: nothing is created, no GPU call is made, and
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
        bucket: ScaleBucket,
    ) -> Result<Option<&Targets>> {
        if output.0 == 0 || output.1 == 0 {
            return Ok(None);
        }
        let size = scaled_size(output, bucket.scale());
        let unchanged = self.targets.as_ref().is_some_and(|t| {
            t.slots.len() == self.set.len()
                && t.slots
                    .iter()
                    .zip(self.set.specs())
                    .all(|(have, spec)| have.as_ref().map(|s| s.key) == spec.at(output, size))
        });
        if !unchanged {
            self.reallocate(ctx, output, size, bucket)?;
        } else if let Some(t) = self.targets.as_mut() {
            // The same targets serve another bucket (at a tiny output every bucket rounds to
            // the same size): they are that bucket's now, or the caller, finding another bucket
            // than it asked for, asks again every frame.
            t.bucket = bucket;
        }
        Ok(self.targets.as_ref())
    }

    fn reallocate(
        &mut self,
        ctx: &GpuContext,
        output: (u32, u32),
        size: (u32, u32),
        bucket: ScaleBucket,
    ) -> Result<()> {
        let mut old: Vec<Option<Slot>> = self.targets.take().map(|t| t.slots).unwrap_or_default();
        // Keep the targets whose descriptor is unchanged; free every other one first (drop =
        // destroy + ledger release), then create.
        let mut kept: Vec<Option<Slot>> = Vec::with_capacity(self.set.len());
        for spec in self.set.specs() {
            let found = spec.at(output, size).and_then(|key| {
                old.iter_mut()
                    .find(|s| s.as_ref().is_some_and(|s| s.key == key))
                    .and_then(Option::take)
            });
            kept.push(found);
        }
        drop(old);
        let mut slots = Vec::with_capacity(self.set.len());
        for (spec, have) in self.set.specs().iter().zip(kept) {
            let slot = match (have, spec.at(output, size)) {
                (Some(s), _) => Some(s),
                // Not made at this scale.
                (None, None) => None,
                (None, Some(key)) => {
                    // On error `slots` drops with whatever it holds: everything is released.
                    let texture = ctx.create_texture(&key.desc(), Category::RenderTargets)?;
                    let view = texture.create_view(&Default::default());
                    Some(Slot { key, texture, view })
                }
            };
            slots.push(slot);
        }
        self.reallocations += 1;
        tracing::debug!(
            output = ?output,
            size = ?size,
            bucket = %bucket,
            targets = self.set.len(),
            "render targets reallocated"
        );
        self.targets = Some(Targets {
            slots,
            output,
            size,
            bucket,
            upscaler: self.upscaler,
            intermediate: if self.own_set {
                self.set.intermediate()
            } else {
                None
            },
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
