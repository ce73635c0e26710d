//! The manager's demand API: what a frame's view wants of each texture, in the three forms
//! (a level and pixels, a histogram of pixels per level, a bounding volume seen by a
//! [`DemandView`]).

use super::BudgetManager;
use crate::budget::planner::MAX_LEVELS;
use crate::budget::planner::PlanTexture;
use crate::demand::{Demand, DemandView};
use crate::stream::TextureHandle;

impl BudgetManager {
    /// Demand for `h` this frame (form (a)): the view wants level `wanted_level` (fractional; 0
    /// is the full size) over `pixels` output pixels. Several calls for one texture combine (the
    /// finest level, the sum of the pixels). A texture given no demand before
    /// [`BudgetManager::frame`] is not wanted this frame (its levels decay by the planner's
    /// hysteresis). False for a stale handle; non-finite or negative figures are ignored. On a
    /// texture that was given a histogram this frame, the pixels go to the level's bin.
    pub fn add_demand(&mut self, h: TextureHandle, wanted_level: f32, pixels: f32) -> bool {
        let Some(i) = self.begin_demand(h) else {
            return false;
        };
        self.demand_at(i, wanted_level, pixels);
        true
    }

    /// [`BudgetManager::add_demand`] on slot `i`, whose handle was checked and whose demand
    /// this frame was begun.
    fn demand_at(&mut self, i: usize, wanted_level: f32, pixels: f32) {
        if wanted_level.is_nan() || !pixels.is_finite() || pixels < 0.0 {
            return;
        }
        let (p, bins) = self.streamer.plan_textures_mut().histogram_mut(i);
        if p.histogram {
            if wanted_level.is_finite() {
                let bin = (wanted_level.max(0.0) as usize).min(MAX_LEVELS - 1);
                // Saturating: a bin at infinity would price every level at 0 (inf x 0).
                bins[bin] = (bins[bin] + pixels).min(f32::MAX);
                p.summarize_histogram(bins);
            }
            return;
        }
        p.wanted_level = p.wanted_level.min(wanted_level.max(0.0));
        p.screen_pixels += pixels;
    }

    /// [`BudgetManager::add_demand`] from a [`Demand`] of a [`DemandView`], its pixels times
    /// `pixel_weight`: an object that is [`Demand::leaving`] the view asks for no level finer
    /// than `h` has or has in flight (a read started now would land after it has gone: the IO
    /// would be thrown away).
    pub fn add_view_demand(&mut self, h: TextureHandle, d: &Demand, pixel_weight: f32) -> bool {
        let Some(i) = self.begin_demand(h) else {
            return false;
        };
        self.view_demand_at(i, d, pixel_weight);
        true
    }

    /// [`BudgetManager::add_view_demand`] on slot `i` (checked, its demand begun).
    fn view_demand_at(&mut self, i: usize, d: &Demand, pixel_weight: f32) {
        let level = if d.leaving {
            // Beginning the demand resets the wanted level and pixels, not the levels.
            d.level
                .max(f32::from(self.streamer.plan_textures()[i].in_flight_level))
        } else {
            d.level
        };
        self.demand_at(i, level, d.pixels * pixel_weight);
    }

    /// Demand for `h` this frame as a histogram (form (b), what GPU feedback measures):
    /// `pixels_per_level[l]` output pixels want level `l` (at native resolution; a fractional
    /// level `l + f` counts in bin `l`; bins past 15 count in bin 15). The planner then prices
    /// each level by the pixels that want it or finer: a texture whose near edge alone wants
    /// level 0 keeps a coarser level under a tight budget than one that wants level 0
    /// everywhere. Several calls add up, and demand already given this frame in form (a) joins
    /// the histogram at its level's bin. Negative or NaN bins count as 0. False for a stale
    /// handle.
    pub fn add_demand_levels(&mut self, h: TextureHandle, pixels_per_level: &[f32]) -> bool {
        let Some(i) = self.begin_demand(h) else {
            return false;
        };
        let (p, bins) = self.streamer.plan_textures_mut().histogram_mut(i);
        // Form (a) given earlier this frame joins the histogram.
        into_histogram(p, bins);
        for (l, &px) in pixels_per_level.iter().enumerate() {
            if px > 0.0 && px.is_finite() {
                let b = &mut bins[l.min(MAX_LEVELS - 1)];
                *b = (*b + px).min(f32::MAX);
            }
        }
        p.summarize_histogram(bins);
        true
    }

    /// Demand for `h` from a world-space bounding sphere seen by `view` (form (c)): the level
    /// its nearest point needs for `uv_per_unit` (UV units per world unit: 1 / the world size
    /// one texture repeat covers; the unit of [`DemandView::sphere`] too, which this calls
    /// with the texture's side) and the pixels its projection covers, weighted down in the
    /// view's guard band and look-ahead (see [`DemandView`]). Returns the demand given (`None`
    /// when the sphere is outside every frustum, or for a stale handle).
    pub fn add_demand_sphere(
        &mut self,
        h: TextureHandle,
        view: &DemandView,
        center: glam::Vec3,
        radius: f32,
        uv_per_unit: f32,
    ) -> Option<Demand> {
        // One handle check: `texture_texel_side` is `None` for a stale handle.
        let side = self.streamer.texture_texel_side(h)?;
        let d = view.sphere(center, radius, uv_per_unit, side)?;
        let i = h.index() as usize;
        self.begin_demand_at(i);
        self.view_demand_at(i, &d, 1.0);
        Some(d)
    }

    /// [`BudgetManager::add_demand_sphere`] for an axis-aligned world-space box (its bounding
    /// sphere).
    pub fn add_demand_box(
        &mut self,
        h: TextureHandle,
        view: &DemandView,
        min: glam::Vec3,
        max: glam::Vec3,
        uv_per_unit: f32,
    ) -> Option<Demand> {
        let (center, radius) = DemandView::box_sphere(min, max);
        self.add_demand_sphere(h, view, center, radius, uv_per_unit)
    }

    /// The side of a square with as many texels as `h`'s level 0, `sqrt(width x height)`
    /// (`None` for a stale handle): what [`DemandView::sphere`] takes with a surface's UV
    /// density.
    pub fn texture_side(&self, h: TextureHandle) -> Option<f32> {
        self.streamer.texture_texel_side(h)
    }

    /// Starts this frame's demand on the first call after a frame: the texture's slot, `None`
    /// for a stale handle.
    fn begin_demand(&mut self, h: TextureHandle) -> Option<usize> {
        if !self.streamer.contains(h) {
            return None;
        }
        let i = h.index() as usize;
        self.begin_demand_at(i);
        Some(i)
    }

    /// [`BudgetManager::begin_demand`] for slot `i` of a checked handle.
    pub(super) fn begin_demand_at(&mut self, i: usize) {
        let next = self.frame + 1;
        if i >= self.demand_frame.len() {
            // Grows with the texture count only.
            self.demand_frame.resize(i + 1, 0);
        }
        if self.demand_frame[i] != next {
            self.demand_frame[i] = next;
            // Within the capacity of earlier frames: grows with the texture count only.
            self.demanded.0.push(i as u32);
            let (p, bins) = self.streamer.plan_textures_mut().histogram_mut(i);
            reset_demand(p, bins);
        }
    }
}

impl BudgetManager {
    /// Resets the demand of every texture that holds an earlier frame's (given before a frame
    /// and not again since), and caps this frame's at the `output`'s pixels (none for a
    /// skipped frame). Touches only the textures whose demand was begun in this frame or the
    /// one before (every texture holding demand is among them), not every texture.
    pub(super) fn expire_demand(&mut self, output: Option<(u32, u32)>) {
        let now = self.frame;
        let textures = self.streamer.plan_textures_mut();
        let (begun, before) = (&mut self.demanded.0, &mut self.demanded.1);
        for &i in before.iter().chain(begun.iter()) {
            let i = i as usize;
            if let Some(d) = self.demand_frame.get_mut(i)
                && *d != 0
                && *d != now
            {
                *d = 0;
                if i < textures.len() {
                    let (p, bins) = textures.histogram_mut(i);
                    reset_demand(p, bins);
                }
            }
        }
        // This frame's demand over more than the screen (overlapping draws) is capped at it.
        let screen = output.map_or(f32::INFINITY, |o| (o.0 as f32) * (o.1 as f32));
        for &i in begun.iter() {
            let i = i as usize;
            if self.demand_frame.get(i) != Some(&now) {
                continue;
            }
            if i < textures.len() && textures[i].screen_pixels > screen {
                let (p, bins) = textures.histogram_mut(i);
                if p.histogram {
                    // A histogram over more than the screen: scaled down as a whole, so its
                    // shape (which levels are wanted) stays.
                    let k = screen / p.screen_pixels;
                    for b in bins.iter_mut() {
                        *b *= k;
                    }
                    p.summarize_histogram(bins);
                } else {
                    p.screen_pixels = screen;
                }
            }
        }
        // Both lists' demand may have changed since the last plan (given, or expired).
        if let Some(dirty) = self.plan_dirty.as_mut() {
            dirty.extend_from_slice(before);
            dirty.extend_from_slice(begun);
            if dirty.len() > 2 * textures.len() + 1024 {
                // Frames that did not plan (each refused) added theirs: check every texture.
                dirty.clear();
                self.plan_dirty_spare = self.plan_dirty.take().unwrap_or_default();
            }
        }
        // This frame's become the frame before's; no allocation once both have grown.
        std::mem::swap(begun, before);
        begun.clear();
    }
}

/// A texture's demand as a histogram: form (a)'s level and pixels (given earlier this frame)
/// become its bin; a histogram stays as it is.
pub(super) fn into_histogram(p: &mut PlanTexture, bins: &mut [f32; MAX_LEVELS]) {
    if !p.histogram {
        let (level, pixels) = (p.wanted_level, p.screen_pixels);
        *bins = [0.0; MAX_LEVELS];
        p.histogram = true;
        if level.is_finite() && pixels > 0.0 {
            bins[(level.max(0.0) as usize).min(MAX_LEVELS - 1)] = pixels;
        }
    }
}

/// No demand: not wanted, no pixels, no histogram.
pub(super) fn reset_demand(p: &mut PlanTexture, bins: &mut [f32; MAX_LEVELS]) {
    p.wanted_level = f32::INFINITY;
    p.screen_pixels = 0.0;
    if p.histogram {
        p.histogram = false;
        *bins = [0.0; MAX_LEVELS];
    }
}
