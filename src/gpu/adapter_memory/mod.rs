//! What the adapter says about its memory: the largest device-local heap and, on Vulkan, the
//! driver's budget for it (VK_EXT_memory_budget), queried whenever the physical device has the
//! extension, whether or not wgpu enabled it.
//!
//! Why not wgpu's list: wgpu 30 removes VK_EXT_memory_budget from the extensions it reports for
//! AMD's Mesa driver (RADV) so as not to enable it on the device, but the budget is a
//! physical-device query (`vkGetPhysicalDeviceMemoryProperties2` with
//! `VkPhysicalDeviceMemoryBudgetPropertiesEXT`), valid whenever the physical device supports the
//! extension.
//!
//! DX12 (`dx12.rs`: DXGI `QueryVideoMemoryInfo`) and Metal (`metal.rs`:
//! `recommendedMaxWorkingSetSize`) are compiled on their own targets only; they type-check there
//! (`cargo check --target x86_64-pc-windows-msvc` / `aarch64-apple-darwin`) but no machine of
//! either kind has run them yet. GL and WebGPU have no source: there the budget is bytes, or the
//! caller's.

use crate::budget::AdapterMemory;

#[cfg(windows)]
mod dx12;
#[cfg(target_vendor = "apple")]
mod metal;

/// What the adapter says about its memory, from whichever backend it runs on; `None` where no
/// source exists (GL, WebGPU) or the query failed.
pub(super) fn adapter_memory(adapter: &wgpu::Adapter) -> Option<AdapterMemory> {
    match adapter.get_info().backend {
        wgpu::Backend::Vulkan => vulkan_memory(adapter),
        #[cfg(windows)]
        wgpu::Backend::Dx12 => dx12::memory(adapter),
        #[cfg(target_vendor = "apple")]
        wgpu::Backend::Metal => metal::memory(adapter),
        _ => None,
    }
}

/// Where the budget figure of the driver comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BudgetQuery {
    /// The physical device has no VK_EXT_memory_budget: the heap size only.
    None,
    /// Queried, with wgpu listing the extension too.
    Listed,
    /// Queried although wgpu does not list the extension (it keeps it off on this driver).
    NotListedByWgpu,
}

impl BudgetQuery {
    /// The decision: query whenever the physical device lists the extension (`device`), whatever
    /// wgpu's own list says (`wgpu`).
    pub(crate) fn decide(device: bool, wgpu: bool) -> Self {
        match (device, wgpu) {
            (false, _) => BudgetQuery::None,
            (true, true) => BudgetQuery::Listed,
            (true, false) => BudgetQuery::NotListedByWgpu,
        }
    }

    /// The source's name, for the overlay and the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BudgetQuery::None => "device-local heap size",
            BudgetQuery::Listed => "VK_EXT_memory_budget",
            BudgetQuery::NotListedByWgpu => {
                "VK_EXT_memory_budget (queried directly: wgpu keeps it off on this driver)"
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn vulkan_memory(adapter: &wgpu::Adapter) -> Option<AdapterMemory> {
    use ash::vk;
    // SAFETY: the hal adapter is only used within this function, while `adapter` is alive, and
    // only for read-only physical-device queries.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    let phd = hal.raw_physical_device();
    // SAFETY: a valid physical device of this instance.
    let listed = unsafe { instance.enumerate_device_extension_properties(phd) }.unwrap_or_default();
    let on_device = listed
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::memory_budget::NAME));
    let query = BudgetQuery::decide(
        on_device,
        hal.physical_device_capabilities()
            .supports_extension(ash::ext::memory_budget::NAME),
    );
    let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
    let mut props2 = vk::PhysicalDeviceMemoryProperties2::default();
    if query != BudgetQuery::None {
        props2 = props2.push_next(&mut budget);
    }
    // SAFETY: valid physical device of this instance; the output structs are properly chained,
    // and the budget struct only when the physical device supports its extension.
    unsafe { instance.get_physical_device_memory_properties2(phd, &mut props2) };
    let props = props2.memory_properties;
    let heaps = &props.memory_heaps[..props.memory_heap_count as usize];
    let (index, heap) = heaps
        .iter()
        .enumerate()
        .filter(|(_, h)| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .max_by_key(|(_, h)| h.size)?;
    let driver_budget_bytes = (query != BudgetQuery::None).then(|| budget.heap_budget[index]);
    Some(AdapterMemory {
        device_local_bytes: heap.size,
        driver_budget_bytes,
        source: query.name(),
    })
}

#[cfg(target_arch = "wasm32")]
fn vulkan_memory(_adapter: &wgpu::Adapter) -> Option<AdapterMemory> {
    None
}

#[cfg(test)]
mod tests {
    use super::BudgetQuery;

    /// Supported by the physical device but not listed (nor enabled) by wgpu, as on RADV with
    /// wgpu 30: queried all the same, and the source says so. Not on the device: not queried.
    #[test]
    fn the_budget_is_queried_whenever_the_device_has_the_extension() {
        assert_eq!(
            BudgetQuery::decide(true, false),
            BudgetQuery::NotListedByWgpu
        );
        assert!(
            BudgetQuery::decide(true, false)
                .name()
                .contains("queried directly")
        );
        assert_eq!(BudgetQuery::decide(true, true), BudgetQuery::Listed);
        assert_eq!(BudgetQuery::decide(false, false), BudgetQuery::None);
        assert_eq!(BudgetQuery::decide(false, true), BudgetQuery::None);
        assert_eq!(BudgetQuery::None.name(), "device-local heap size");
    }
}
