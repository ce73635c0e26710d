//! The budget sources of the library's other targets, compiled against a stand-in for the one
//! type they use from it. See Cargo.toml for the commands.

mod budget {
    /// The library's `AdapterMemory`, field for field (src/budget/source.rs).
    #[derive(Clone, Copy, Debug)]
    pub struct AdapterMemory {
        pub device_local_bytes: u64,
        pub driver_budget_bytes: Option<u64>,
        pub source: &'static str,
    }
}

#[cfg(windows)]
#[path = "../../../src/gpu/adapter_memory/dx12.rs"]
mod dx12;
#[cfg(target_vendor = "apple")]
#[path = "../../../src/gpu/adapter_memory/metal.rs"]
mod metal;

/// The source for this target's backend, as the library calls it.
pub fn memory(adapter: &wgpu::Adapter) -> Option<budget::AdapterMemory> {
    #[cfg(windows)]
    return dx12::memory(adapter);
    #[cfg(target_vendor = "apple")]
    return metal::memory(adapter);
    #[allow(unreachable_code)]
    {
        let _ = adapter;
        None
    }
}
