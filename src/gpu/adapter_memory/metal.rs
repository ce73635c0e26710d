//! The Metal budget source: the device's `recommendedMaxWorkingSetSize`, the bytes Apple says a
//! process can keep in use without hurting performance (on unified memory, a share of system
//! memory). Metal has no per-process grant like DXGI's or VK_EXT_memory_budget's, so that figure is
//! both the heap size and the driver's budget. Compiled on Apple targets only, and checked here with
//! `cargo check --target aarch64-apple-darwin`; no Apple machine has run it yet.

use objc2_metal::MTLDevice;

use crate::budget::AdapterMemory;

const SOURCE: &str = "Metal recommendedMaxWorkingSetSize";

pub(super) fn memory(adapter: &wgpu::Adapter) -> Option<AdapterMemory> {
    // SAFETY: the hal adapter is only used within this function, while `adapter` is alive, and
    // only for a read-only property of its MTLDevice.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Metal>() }?;
    let working_set = hal.raw_device().recommendedMaxWorkingSetSize();
    (working_set > 0).then_some(AdapterMemory {
        device_local_bytes: working_set,
        driver_budget_bytes: Some(working_set),
        source: SOURCE,
    })
}
