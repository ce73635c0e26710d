//! A global allocator that counts the current thread's allocations (reallocations included) and
//! records the largest one, for the tests that assert what a path allocates. A test binary
//! installs it with `#[global_allocator] static ALLOC: common::alloc::Counting =
//! common::alloc::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator (forwards to the system allocator).
pub struct Counting;

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: a thread being torn down has no locals left, and must still allocate.
    let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    let _ = LARGEST.try_with(|m| m.set(m.get().max(size)));
}

// SAFETY: forwards to the system allocator unchanged; the counters are const-initialised thread
// locals, which need no allocation of their own.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        note(size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, size) }
    }
}

/// Allocations this thread has made so far.
pub fn allocations() -> u64 {
    COUNT.with(Cell::get)
}

/// The largest allocation this thread made since the last call (bytes); resets it.
pub fn take_largest() -> usize {
    LARGEST.with(|m| m.replace(0))
}
