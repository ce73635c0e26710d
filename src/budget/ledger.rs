//! The ledger: every byte mipflow places on the GPU, per [`Category`].
//!
//! Updates are lock-free atomics, so charging and releasing from any thread (the render thread, IO
//! workers that create staging buffers) costs a handful of atomic adds. A small registry of live
//! allocations (label, category, bytes) sits behind a mutex; it is touched only when a resource is
//! created or freed, never per frame, and it is what the leak report prints.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

/// The most one [`Ledger::charge`] counts (64 PiB, far beyond any device): a larger charge is
/// counted as this, so that no sum of charges wraps.
pub const MAX_CHARGE: u64 = 1 << 56;

/// What a GPU allocation is for. Each category is accounted separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Streamed material textures (the mip chains the planner decides on).
    Textures,
    /// Colour, depth and intermediate targets, sized by the render scale.
    RenderTargets,
    /// Vertex, index and uniform buffers.
    Buffers,
    /// Upload staging and readback buffers.
    Staging,
    /// The egui overlay's textures and buffers.
    Overlay,
    /// Anything else (test fixtures, the caller's own tracked resources).
    Other,
}

impl Category {
    /// Every category, in display order.
    pub const ALL: [Category; 6] = [
        Category::Textures,
        Category::RenderTargets,
        Category::Buffers,
        Category::Staging,
        Category::Overlay,
        Category::Other,
    ];

    /// The snake_case name used in JSON reports and the monitor line.
    pub const fn name(self) -> &'static str {
        match self {
            Category::Textures => "textures",
            Category::RenderTargets => "render_targets",
            Category::Buffers => "buffers",
            Category::Staging => "staging",
            Category::Overlay => "overlay",
            Category::Other => "other",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Current bytes, live allocation count and peak bytes of one category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryStats {
    /// Bytes alive now.
    pub bytes: u64,
    /// Allocations alive now.
    pub count: u64,
    /// Highest `bytes` seen since the ledger was created (or [`Ledger::reset_peaks`]).
    pub peak: u64,
}

/// One value per [`Category`], with named fields so that it serialises as
/// `{"textures": .., "render_targets": .., ...}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct ByCategory<T> {
    pub textures: T,
    pub render_targets: T,
    pub buffers: T,
    pub staging: T,
    pub overlay: T,
    pub other: T,
}

impl<T> ByCategory<T> {
    /// The value for `category`.
    pub fn get(&self, category: Category) -> &T {
        match category {
            Category::Textures => &self.textures,
            Category::RenderTargets => &self.render_targets,
            Category::Buffers => &self.buffers,
            Category::Staging => &self.staging,
            Category::Overlay => &self.overlay,
            Category::Other => &self.other,
        }
    }

    /// The value for `category`, mutably.
    pub fn get_mut(&mut self, category: Category) -> &mut T {
        match category {
            Category::Textures => &mut self.textures,
            Category::RenderTargets => &mut self.render_targets,
            Category::Buffers => &mut self.buffers,
            Category::Staging => &mut self.staging,
            Category::Overlay => &mut self.overlay,
            Category::Other => &mut self.other,
        }
    }
}

/// A consistent-enough copy of the ledger at one moment (each field is read atomically; the set is
/// not a transaction, which is fine for display and reports). Plain data: no allocation to take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerSnapshot {
    /// Per-category figures.
    pub by_category: ByCategory<CategoryStats>,
    /// Bytes alive now, all categories.
    pub total_bytes: u64,
    /// Highest total ever seen.
    pub peak_bytes: u64,
    /// Highest total seen since the last [`Ledger::take_window_peak`] (the per-frame peak).
    pub window_peak_bytes: u64,
}

/// A live allocation, as the leak report shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveAllocation {
    /// The resource's label.
    pub label: String,
    /// Its category.
    pub category: Category,
    /// Its exact size.
    pub bytes: u64,
}

#[derive(Default)]
struct Counters {
    bytes: AtomicU64,
    count: AtomicU64,
    peak: AtomicU64,
}

thread_local! {
    /// Depth of the [`ManagedScope`]s alive on this thread.
    static MANAGED: Cell<u32> = const { Cell::new(0) };
}

/// While one is alive, the charges this thread makes are the budget manager's own: its streamed
/// textures, its render targets, its upload staging ([`Ledger::managed_bytes`]). The manager
/// enters one in each of its calls that creates resources; what the caller creates between
/// them, on any thread, is the caller's.
pub(crate) struct ManagedScope(());

impl ManagedScope {
    pub(crate) fn enter() -> Self {
        MANAGED.with(|m| m.set(m.get() + 1));
        Self(())
    }
}

impl Drop for ManagedScope {
    fn drop(&mut self) {
        MANAGED.with(|m| m.set(m.get().saturating_sub(1)));
    }
}

#[derive(Default)]
struct Inner {
    per: [Counters; 6],
    /// Per category: the bytes of the charges made in a [`ManagedScope`].
    managed: [AtomicU64; 6],
    total: AtomicU64,
    peak: AtomicU64,
    window_peak: AtomicU64,
    next_id: AtomicU64,
    live: Mutex<BTreeMap<u64, LiveAllocation>>,
}

/// The thread-safe byte account. Cloning is cheap and shares the account.
#[derive(Clone, Default)]
pub struct Ledger {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("snapshot", &self.snapshot())
            .finish()
    }
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Charges `bytes` to `category` for a resource labelled `label`. The bytes come back when the
    /// returned [`Charge`] is dropped (or [`Charge::release`]d).
    pub fn charge(&self, category: Category, bytes: u64, label: &str) -> Charge {
        // No device holds more; so that the sums of any charges cannot wrap.
        let bytes = bytes.min(MAX_CHARGE);
        let inner = &self.inner;
        let c = &inner.per[category.index()];
        let now = c.bytes.fetch_add(bytes, Ordering::AcqRel) + bytes;
        c.peak.fetch_max(now, Ordering::AcqRel);
        c.count.fetch_add(1, Ordering::AcqRel);
        let total = inner.total.fetch_add(bytes, Ordering::AcqRel) + bytes;
        inner.peak.fetch_max(total, Ordering::AcqRel);
        inner.window_peak.fetch_max(total, Ordering::AcqRel);
        let managed = MANAGED.with(|m| m.get() > 0);
        if managed {
            inner.managed[category.index()].fetch_add(bytes, Ordering::AcqRel);
        }
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        inner.live.lock().insert(
            id,
            LiveAllocation {
                label: label.to_owned(),
                category,
                bytes,
            },
        );
        Charge {
            ledger: self.clone(),
            id,
            category,
            bytes,
            managed,
            released: false,
        }
    }

    fn release(&self, id: u64, category: Category, bytes: u64, managed: bool) {
        let inner = &self.inner;
        if managed {
            inner.managed[category.index()].fetch_sub(bytes, Ordering::AcqRel);
        }
        let c = &inner.per[category.index()];
        c.bytes.fetch_sub(bytes, Ordering::AcqRel);
        c.count.fetch_sub(1, Ordering::AcqRel);
        inner.total.fetch_sub(bytes, Ordering::AcqRel);
        inner.live.lock().remove(&id);
    }

    /// Bytes alive now, all categories.
    pub fn total_bytes(&self) -> u64 {
        self.inner.total.load(Ordering::Acquire)
    }

    /// Bytes alive now in `category`.
    pub fn bytes(&self, category: Category) -> u64 {
        self.inner.per[category.index()]
            .bytes
            .load(Ordering::Acquire)
    }

    /// Bytes alive now in `category` that the budget manager made for itself (its streamed
    /// textures, its render targets, its upload staging, its buffers): the rest of the
    /// category is the caller's, which the manager's planner counts as fixed.
    pub fn managed_bytes(&self, category: Category) -> u64 {
        self.inner.managed[category.index()].load(Ordering::Acquire)
    }

    /// Returns the highest total seen since the previous call (or creation), and starts a new
    /// window at the current total. Called once per frame, it gives the frame's peak, so a
    /// transient spike inside a frame is never missed by a report.
    pub fn take_window_peak(&self) -> u64 {
        let now = self.total_bytes();
        self.inner.window_peak.swap(now, Ordering::AcqRel).max(now)
    }

    /// The highest total seen in the current window, without starting a new one.
    pub(crate) fn window_peak(&self) -> u64 {
        self.inner
            .window_peak
            .load(Ordering::Acquire)
            .max(self.total_bytes())
    }

    /// Starts a new window at the current total without reporting the old one. The renderer calls
    /// it when a lowered budget has just been reached by freeing (evictions, lower scale): the
    /// usage from before the budget changed must not count against the new budget, since nothing
    /// can free memory faster than at the start of the next frame. Allocations after this are
    /// measured as usual.
    pub(crate) fn restart_window(&self) {
        self.inner
            .window_peak
            .store(self.total_bytes(), Ordering::Release);
    }

    /// Resets every peak (global, per-category, window) to the current figures.
    pub fn reset_peaks(&self) {
        for c in &self.inner.per {
            c.peak
                .store(c.bytes.load(Ordering::Acquire), Ordering::Release);
        }
        let now = self.total_bytes();
        self.inner.peak.store(now, Ordering::Release);
        self.inner.window_peak.store(now, Ordering::Release);
    }

    /// A copy of every figure. Allocation-free; cheap enough to call every frame.
    pub fn snapshot(&self) -> LedgerSnapshot {
        let inner = &self.inner;
        let mut by_category = ByCategory::<CategoryStats>::default();
        for cat in Category::ALL {
            let c = &inner.per[cat.index()];
            *by_category.get_mut(cat) = CategoryStats {
                bytes: c.bytes.load(Ordering::Acquire),
                count: c.count.load(Ordering::Acquire),
                peak: c.peak.load(Ordering::Acquire),
            };
        }
        LedgerSnapshot {
            by_category,
            total_bytes: inner.total.load(Ordering::Acquire),
            peak_bytes: inner.peak.load(Ordering::Acquire),
            window_peak_bytes: inner.window_peak.load(Ordering::Acquire),
        }
    }

    /// Every allocation alive now, largest first (the leak report when called at shutdown).
    pub fn live_allocations(&self) -> Vec<LiveAllocation> {
        let mut v: Vec<LiveAllocation> = self.inner.live.lock().values().cloned().collect();
        v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
        v
    }
}

/// Bytes charged to the [`Ledger`]; returned when this is dropped. Held by every tracked resource.
#[derive(Debug)]
pub struct Charge {
    ledger: Ledger,
    id: u64,
    category: Category,
    bytes: u64,
    /// Made in a [`ManagedScope`].
    managed: bool,
    released: bool,
}

impl Charge {
    /// The bytes charged.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The category charged.
    pub fn category(&self) -> Category {
        self.category
    }

    /// Returns the bytes now (idempotent; drop does it otherwise).
    pub fn release(&mut self) {
        if !self.released {
            self.released = true;
            self.ledger
                .release(self.id, self.category, self.bytes, self.managed);
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_of_every_byte_is_counted_as_the_most_one_can_be() {
        let l = Ledger::new();
        let a = l.charge(Category::Other, u64::MAX, "reserve");
        let b = l.charge(Category::Other, u64::MAX, "reserve again");
        assert_eq!(l.total_bytes(), 2 * MAX_CHARGE);
        drop(a);
        drop(b);
        assert_eq!(l.total_bytes(), 0);
    }

    #[test]
    fn charge_and_release_track_bytes_counts_and_peaks() {
        let l = Ledger::new();
        let a = l.charge(Category::Textures, 1000, "a");
        let mut b = l.charge(Category::Textures, 500, "b");
        let c = l.charge(Category::Staging, 64, "c");
        let s = l.snapshot();
        assert_eq!(s.by_category.textures.bytes, 1500);
        assert_eq!(s.by_category.textures.count, 2);
        assert_eq!(s.by_category.staging.bytes, 64);
        assert_eq!(s.total_bytes, 1564);
        b.release();
        b.release(); // idempotent
        drop(c);
        let s = l.snapshot();
        assert_eq!(s.total_bytes, 1000);
        assert_eq!(s.by_category.textures.count, 1);
        assert_eq!(s.by_category.textures.peak, 1500);
        assert_eq!(s.peak_bytes, 1564);
        assert_eq!(l.live_allocations().len(), 1);
        assert_eq!(l.live_allocations()[0].label, "a");
        drop(a);
        assert_eq!(l.total_bytes(), 0);
        assert!(l.live_allocations().is_empty());
    }

    #[test]
    fn charges_made_in_a_managed_scope_are_the_managers_until_released() {
        let l = Ledger::new();
        let game = l.charge(Category::Textures, 700, "game");
        let (own, nested) = {
            let _scope = ManagedScope::enter();
            let own = l.charge(Category::Textures, 300, "streamed");
            let _inner = ManagedScope::enter();
            (own, l.charge(Category::Staging, 50, "staging"))
        };
        let after = l.charge(Category::Textures, 11, "game again");
        assert_eq!(l.managed_bytes(Category::Textures), 300);
        assert_eq!(l.managed_bytes(Category::Staging), 50);
        assert_eq!(l.bytes(Category::Textures), 1011);
        // Released on another thread: still the manager's bytes that leave.
        std::thread::spawn(move || drop(own)).join().unwrap();
        drop(nested);
        assert_eq!(l.managed_bytes(Category::Textures), 0);
        assert_eq!(l.managed_bytes(Category::Staging), 0);
        assert_eq!(l.bytes(Category::Textures), 711);
        drop((game, after));
    }

    #[test]
    fn window_peak_catches_spikes_inside_a_frame() {
        let l = Ledger::new();
        let _base = l.charge(Category::Buffers, 100, "base");
        assert_eq!(l.take_window_peak(), 100);
        {
            let _spike = l.charge(Category::Staging, 900, "spike");
        }
        assert_eq!(l.total_bytes(), 100);
        assert_eq!(
            l.take_window_peak(),
            1000,
            "the transient spike must be reported"
        );
        assert_eq!(l.take_window_peak(), 100);
    }

    #[test]
    fn concurrent_charges_balance() {
        let l = Ledger::new();
        std::thread::scope(|s| {
            for t in 0..4 {
                let l = l.clone();
                s.spawn(move || {
                    for i in 0..1000u64 {
                        let _c = l.charge(Category::ALL[(t + i as usize) % 6], i, "x");
                    }
                });
            }
        });
        assert_eq!(l.total_bytes(), 0);
        assert!(l.live_allocations().is_empty());
        let s = l.snapshot();
        for cat in Category::ALL {
            assert_eq!(s.by_category.get(cat).count, 0);
        }
    }

    #[test]
    fn snapshot_serialises_with_category_names() {
        let l = Ledger::new();
        let _c = l.charge(Category::RenderTargets, 7, "rt");
        let json = serde_json::to_value(l.snapshot()).unwrap();
        assert_eq!(json["by_category"]["render_targets"]["bytes"], 7);
        assert_eq!(json["total_bytes"], 7);
    }
}
