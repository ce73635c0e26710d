//! The streaming controls every engine gives a game, on top of demand: per-texture level limits
//! (a finest level, a level always resident), a requested level that overrides the view, a
//! level forced resident for a while, "is this level resident?" (and a future for "resident
//! now"), a global mip bias (a quality tier) and "load everything wanted now" (a loading
//! screen). All of them are demand given to the same planner under the same budget: what does
//! not fit is reported ([`Residency::required_met`], [`crate::FrameStats::unmet_required`]),
//! never forced past the budget.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::BudgetManager;
// A required level's bin holds `REQUIRED_PIXELS`: more than any view covers, so the planner
// keeps that level before any view's wants (within the budget), and holds no texture short of it.
use crate::budget::planner::{MAX_LEVELS, REQUIRED_PIXELS};
use crate::stream::TextureHandle;

/// One texture's controls.
#[derive(Clone, Copy, Debug)]
struct Control {
    handle: TextureHandle,
    /// Never finer than this level (0: no cap).
    finest: u8,
    /// Always at least this fine (`None`: streamed as the view asks).
    required: Option<u8>,
    /// A level asked for instead of the view's demand.
    requested: Option<u8>,
    /// A level forced resident until the instant.
    forced: Option<(u8, Instant)>,
    /// Whether the last plan kept the required (or forced) level.
    met: bool,
    /// The texture's own allowed bases ([`crate::low_level::PlanTexture::base_levels`]) while
    /// the finest level clears the finer ones.
    base_levels: Option<u16>,
}

impl Control {
    fn new(handle: TextureHandle) -> Self {
        Self {
            handle,
            finest: 0,
            required: None,
            requested: None,
            forced: None,
            met: true,
            base_levels: None,
        }
    }

    /// The finest of the required level and a force still in effect at `now`.
    fn required_at(&self, now: Instant) -> Option<u8> {
        let forced = self
            .forced
            .filter(|(_, until)| now < *until)
            .map(|(l, _)| l);
        match (self.required, forced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_idle(&self, now: Instant) -> bool {
        self.finest == 0
            && self.base_levels.is_none()
            && self.requested.is_none()
            && self.required_at(now).is_none()
    }
}

/// The state behind a [`ResidentFuture`].
#[derive(Debug, Default)]
struct Watch {
    /// `Some(true)`: resident; `Some(false)`: the texture was removed.
    done: Option<bool>,
    waker: Option<Waker>,
}

/// The manager's controls: per-texture, global, and the futures waiting for levels.
#[derive(Debug, Default)]
pub(super) struct Controls {
    list: Vec<Control>,
    mip_bias: f32,
    load_all: bool,
    /// The streamer's own deterministic setting, restored when `load_all` goes off.
    base_deterministic: Option<bool>,
    watches: Vec<(TextureHandle, u8, Arc<Mutex<Watch>>)>,
    unmet: u32,
    /// Bytes of the wanted levels the last plan targets.
    target_bytes: u64,
}

/// What a texture holds and what it is asked for ([`BudgetManager::residency`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Residency {
    /// The finest level whose data is on the GPU (`level_count`: none).
    pub resident_level: u8,
    /// The finest level the last plan targets.
    pub planned_level: u8,
    /// The finest level the view wants (after the mip bias and the texture's limits).
    pub wanted_level: f32,
    /// The level kept resident whatever the view (its `required_level`, or a force in effect).
    pub required_level: Option<u8>,
    /// False when the budget could not hold the required level: the plan keeps what fits and
    /// the frame stays within the budget.
    pub required_met: bool,
    /// The texture's level count.
    pub level_count: u8,
}

/// Resolves once a texture's level is resident: `true`, or `false` when the texture was
/// removed first ([`BudgetManager::when_resident`]). Polled by any executor, or checked with
/// [`ResidentFuture::is_ready`] from the frame loop; the manager's frames move it.
#[derive(Debug)]
pub struct ResidentFuture {
    watch: Arc<Mutex<Watch>>,
}

impl ResidentFuture {
    /// `Some(true)` once the level is resident, `Some(false)` if the texture was removed.
    pub fn is_ready(&self) -> Option<bool> {
        self.watch.lock().ok().and_then(|w| w.done)
    }
}

impl Future for ResidentFuture {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let Ok(mut w) = self.watch.lock() else {
            return Poll::Ready(false);
        };
        match w.done {
            Some(done) => Poll::Ready(done),
            None => {
                w.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl BudgetManager {
    fn control_mut(&mut self, h: TextureHandle) -> Option<&mut Control> {
        if !self.streamer.contains(h) {
            return None;
        }
        let list = &mut self.controls.list;
        let k = match list.iter().position(|c| c.handle == h) {
            Some(k) => k,
            None => {
                list.push(Control::new(h));
                list.len() - 1
            }
        };
        Some(&mut list[k])
    }

    /// Limits texture `h`'s residency: never finer than `finest_level` (0: no cap; Unity's
    /// `minimumMipmapLevel`, Unreal's per-texture `DropMips`), and always at least
    /// `required_level` resident whatever the view (`Some(0)`: never streamed, the whole chain
    /// kept, Unreal's `NeverStream`; `None`: streamed as the view asks). Both are planned under
    /// the budget; a required level the budget cannot hold is reported, not forced. The same
    /// as [`crate::TextureOptions`]' `finest_level` and `required_level` at registration.
    /// False for a stale handle.
    pub fn set_level_limits(
        &mut self,
        h: TextureHandle,
        finest_level: u8,
        required_level: Option<u8>,
    ) -> bool {
        let Some(c) = self.control_mut(h) else {
            return false;
        };
        c.finest = finest_level;
        c.required = required_level;
        self.planner.invalidate();
        self.planner.lift_holds();
        true
    }

    /// Asks for level `level` of `h` instead of what the view wants (`None`: the view again;
    /// Unity's `requestedMipmapLevel`): planned like demand covering the texture once, under
    /// the budget. False for a stale handle.
    pub fn request_level(&mut self, h: TextureHandle, level: Option<u8>) -> bool {
        let Some(c) = self.control_mut(h) else {
            return false;
        };
        c.requested = level;
        self.planner.lift_holds();
        true
    }

    /// Keeps level `level` (and the coarser ones) of `h` resident for `duration`, whatever the
    /// view, then lets it decay as the view asks (Unreal's `SetForceMipLevelsToBeResident`,
    /// for a cut-scene's characters). Under the budget, before any view's wants; what the
    /// budget cannot hold is reported ([`BudgetManager::residency`]). False for a stale handle.
    pub fn force_resident(&mut self, h: TextureHandle, level: u8, duration: Duration) -> bool {
        let Some(c) = self.control_mut(h) else {
            return false;
        };
        c.forced = Some((level, Instant::now() + duration));
        self.planner.lift_holds();
        true
    }

    /// Whether level `level` of `h` is resident: its data is on the GPU, in the texture that
    /// [`BudgetManager::texture_view`] hands out (Unity's `IsRequestedMipmapLevelLoaded`).
    pub fn is_resident(&self, h: TextureHandle, level: u8) -> bool {
        self.streamer.resident_level(h).is_some_and(|r| r <= level)
    }

    /// A future that resolves once level `level` of `h` is resident (`true`), or the texture
    /// is removed (`false`): a loading screen awaits the next room's levels. The manager's
    /// frames move it (nothing is resident between frames).
    pub fn when_resident(&mut self, h: TextureHandle, level: u8) -> ResidentFuture {
        let watch = Arc::new(Mutex::new(Watch::default()));
        if let Ok(mut w) = watch.lock() {
            if !self.streamer.contains(h) {
                w.done = Some(false);
            } else if self.is_resident(h, level) {
                w.done = Some(true);
            }
        }
        if watch.lock().is_ok_and(|w| w.done.is_none()) {
            self.controls.watches.push((h, level, watch.clone()));
        }
        ResidentFuture { watch }
    }

    /// What `h` holds and is asked for. `None` for a stale handle.
    pub fn residency(&self, h: TextureHandle) -> Option<Residency> {
        let resident_level = self.streamer.resident_level(h)?;
        let i = h.index() as usize;
        let p = self.streamer.plan_textures().get(i)?;
        let now = Instant::now();
        let control = self.controls.list.iter().find(|c| c.handle == h);
        Some(Residency {
            resident_level,
            planned_level: self
                .plan
                .target_level
                .get(i)
                .copied()
                .unwrap_or(p.level_count),
            wanted_level: p.wanted_level,
            required_level: control.and_then(|c| c.required_at(now)),
            required_met: control.is_none_or(|c| c.met),
            level_count: p.level_count,
        })
    }

    /// A global mip bias in levels (a quality tier; Unreal's `r.Streaming.MipBias`): added to
    /// every view's wanted level (not to requested or required levels), so 1 asks each texture
    /// for one level less than its view needs. Finer levels already resident are not grown
    /// again and go when the budget wants their room (a hard cap per texture is its
    /// `finest_level`). Clamped to -4..=16.
    pub fn set_mip_bias(&mut self, levels: f32) {
        self.controls.mip_bias = if levels.is_finite() {
            levels.clamp(-4.0, 16.0)
        } else {
            0.0
        };
        self.planner.invalidate();
        self.planner.lift_holds();
    }

    /// The global mip bias ([`BudgetManager::set_mip_bias`]).
    pub fn mip_bias(&self) -> f32 {
        self.controls.mip_bias
    }

    /// "Load everything wanted now", for a loading screen (Unity's
    /// `streamingTextureForceLoadAll`, Unreal's `FullyLoadUsedTextures`): each frame waits
    /// for the reads it started and builds without the per-frame time cap, so the wanted levels
    /// arrive in as few frames as the per-frame byte cap allows; still within the budget. It
    /// blocks the frame on IO: off again once the levels are in.
    pub fn set_load_all(&mut self, on: bool) {
        if on == self.controls.load_all {
            return;
        }
        self.controls.load_all = on;
        if on {
            self.controls.base_deterministic = Some(self.streamer.deterministic());
            self.streamer.set_deterministic(true);
        } else if let Some(base) = self.controls.base_deterministic.take() {
            self.streamer.set_deterministic(base);
        }
    }

    /// Applies the controls to the demand given for the coming frame: the mip bias to every
    /// texture given demand, then each controlled texture's requested and finest levels (its
    /// demand begun, so that `apply_required` finds it this frame). Called by `frame` before it
    /// plans.
    pub(super) fn apply_controls(&mut self) {
        let bias = self.controls.mip_bias;
        if bias != 0.0 {
            let shift = bias.round() as isize;
            for k in 0..self.demanded.0.len() {
                let i = self.demanded.0[k] as usize;
                let textures = self.streamer.plan_textures_mut();
                if i < textures.len() {
                    let (p, bins) = textures.histogram_mut(i);
                    if p.histogram {
                        let old = *bins;
                        *bins = [0.0; MAX_LEVELS];
                        for (l, px) in old.into_iter().enumerate() {
                            let to = (l as isize + shift).clamp(0, MAX_LEVELS as isize - 1);
                            bins[to as usize] += px;
                        }
                        p.summarize_histogram(bins);
                    } else if p.wanted_level.is_finite() {
                        p.wanted_level = (p.wanted_level + bias).max(0.0);
                    }
                }
            }
        }
        let now = Instant::now();
        let mut k = 0;
        while k < self.controls.list.len() {
            let c = self.controls.list[k];
            if !self.streamer.contains(c.handle) {
                self.controls.list.swap_remove(k);
                continue;
            }
            if c.forced.is_some_and(|(_, until)| now >= until) {
                self.controls.list[k].forced = None;
            }
            let c = self.controls.list[k];
            if c.is_idle(now) {
                self.controls.list.swap_remove(k);
                continue;
            }
            let i = c.handle.index() as usize;
            let size = self.streamer.texture_size(c.handle).unwrap_or((1, 1));
            self.begin_demand_at(i);
            let (p, bins) = self.streamer.plan_textures_mut().histogram_mut(i);
            let last = p.level_count.saturating_sub(1);
            if let Some(r) = c.requested {
                // Instead of the view: the level over the texture's own texels there.
                let r = r.min(last);
                let texels = (size.0 >> r).max(1) as f32 * (size.1 >> r).max(1) as f32;
                p.histogram = false;
                p.wanted_level = f32::from(r);
                p.screen_pixels = texels;
            }
            // The cap: the bases finer than it are not allowed (the planner drops them and never
            // grows to them), the texture's own restored when the cap goes.
            let mut base_levels = c.base_levels;
            if c.finest > 0 {
                let own = *base_levels.get_or_insert(p.base_levels);
                let cap = c.finest.min(p.floor_level);
                p.base_levels = own & (u16::MAX << cap) | 1 << p.floor_level;
            } else if let Some(own) = base_levels.take() {
                p.base_levels = own;
            }
            if c.finest > 0 {
                let cap = c.finest.min(last);
                if p.histogram {
                    let mut moved = 0.0;
                    for bin in &mut bins[..usize::from(cap)] {
                        moved += std::mem::take(bin);
                    }
                    bins[usize::from(cap)] += moved;
                    p.summarize_histogram(bins);
                } else {
                    p.wanted_level = p.wanted_level.max(f32::from(cap));
                }
            }
            self.controls.list[k].base_levels = base_levels;
            k += 1;
        }
    }

    /// The required (and forced) levels, as demand in each texture's histogram with more pixels
    /// than any view: after `expire_demand`, whose cap at the screen's pixels they must pass.
    pub(super) fn apply_required(&mut self) {
        let now = Instant::now();
        for k in 0..self.controls.list.len() {
            let c = self.controls.list[k];
            let Some(r) = c.required_at(now) else {
                continue;
            };
            let textures = self.streamer.plan_textures_mut();
            let i = c.handle.index() as usize;
            if i >= textures.len() {
                continue;
            }
            let (p, bins) = textures.histogram_mut(i);
            if r >= p.floor_level {
                continue; // always resident anyway
            }
            super::demand::into_histogram(p, bins);
            let bin = &mut bins[usize::from(r)];
            *bin = (*bin + REQUIRED_PIXELS).min(f32::MAX);
            p.summarize_histogram(bins);
        }
    }

    /// After a plan: which required levels it kept, the bytes it targets, and the futures whose
    /// level arrived.
    pub(super) fn note_controls(&mut self) {
        let now = Instant::now();
        let mut unmet = 0;
        for c in &mut self.controls.list {
            let i = c.handle.index() as usize;
            let planned = self.plan.target_level.get(i).copied();
            c.met = match (c.required_at(now), planned) {
                (Some(r), Some(p)) => p <= r,
                _ => true,
            };
            unmet += u32::from(!c.met);
        }
        self.controls.unmet = unmet;
        // As `FrameStats::resident_mip_bytes` counts what is resident of the wanted levels: the
        // wanted levels the plan targets, over the textures given demand this frame (`frame`
        // moved them to the second list; the others want nothing), not every texture.
        let textures = self.streamer.plan_textures();
        let targets = &self.plan.target_level;
        self.controls.target_bytes = self
            .demanded
            .1
            .iter()
            .filter_map(|&i| {
                let i = i as usize;
                let (t, w) = (*targets.get(i)?, textures.wanted_whole_level(i)?);
                Some(textures.bytes_from(i, w.max(t)))
            })
            .sum();
        let streamer = &self.streamer;
        self.controls.watches.retain(|(h, level, watch)| {
            let done = if !streamer.contains(*h) {
                Some(false)
            } else if streamer.resident_level(*h).is_some_and(|r| r <= *level) {
                Some(true)
            } else {
                None
            };
            let Some(done) = done else {
                return true;
            };
            if let Ok(mut w) = watch.lock() {
                w.done = Some(done);
                if let Some(waker) = w.waker.take() {
                    waker.wake();
                }
            }
            false
        });
    }

    /// Required (or forced) levels the last plan could not keep under the budget.
    pub(super) fn unmet_required(&self) -> u32 {
        self.controls.unmet
    }

    /// Bytes of the wanted levels the last plan targets.
    pub(super) fn target_mip_bytes(&self) -> u64 {
        self.controls.target_bytes
    }
}
