//! The DX12 budget source: DXGI's `QueryVideoMemoryInfo` on the adapter wgpu opened, for the local
//! segment group (the device's own memory; all of it on a UMA part). Its `Budget` is what the OS
//! grants this process now, as `VkPhysicalDeviceMemoryBudgetPropertiesEXT::heapBudget` does on
//! Vulkan. Compiled on Windows only, and checked here with `cargo check --target
//! x86_64-pc-windows-msvc`; no Windows machine has run it yet.

use windows::Win32::Graphics::Dxgi::DXGI_MEMORY_SEGMENT_GROUP_LOCAL;

use crate::budget::AdapterMemory;

const SOURCE: &str = "DXGI QueryVideoMemoryInfo (local segment group)";

pub(super) fn memory(adapter: &wgpu::Adapter) -> Option<AdapterMemory> {
    // SAFETY: the hal adapter is only used within this function, while `adapter` is alive, and
    // only for read-only queries of the DXGI adapter.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Dx12>() }?;
    let raw = hal.raw_adapter();
    let info = raw
        .query_video_memory_info(DXGI_MEMORY_SEGMENT_GROUP_LOCAL)
        .ok()?;
    // SAFETY: a valid adapter; GetDesc1 only fills a struct.
    let dedicated = unsafe { raw.GetDesc1() }
        .map(|d| d.DedicatedVideoMemory as u64)
        .unwrap_or(0);
    Some(AdapterMemory {
        // A UMA part reports little dedicated memory; its local segment is what it can use.
        device_local_bytes: dedicated.max(info.Budget),
        driver_budget_bytes: Some(info.Budget),
        source: SOURCE,
    })
}
