//! Whether a budget test has a GPU to run on, for a device the game makes itself.

/// Whether this run must have a GPU: `CI` is `true` or `1` (CI machines have one, lavapipe at
/// least), or `MIPFLOW_REQUIRE_GPU=1`. A test then fails rather than skips without an adapter.
pub fn gpu_required() -> bool {
    let set = |name: &str, values: &[&str]| {
        std::env::var(name).is_ok_and(|v| values.contains(&v.as_str()))
    };
    set("CI", &["true", "1"]) || set("MIPFLOW_REQUIRE_GPU", &["1"])
}

/// An adapter from `instance` for the game's budget test named `test`, or `None` after a line
/// on stderr that says the test is skipped and how to get a GPU (Mesa's lavapipe on Debian:
/// `apt-get install mesa-vulkan-drivers libvulkan1`).
///
/// # Panics
/// With no adapter when [`gpu_required`]: a CI run must not pass by skipping.
pub fn adapter_or_skip(instance: &wgpu::Instance, test: &str) -> Option<wgpu::Adapter> {
    match pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())) {
        Ok(adapter) => Some(adapter),
        Err(e) if gpu_required() => {
            panic!(
                "{test}: no GPU adapter, and this run requires one (CI or MIPFLOW_REQUIRE_GPU=1): {e}"
            )
        }
        Err(e) => {
            eprintln!(
                "SKIPPED {test}: no GPU adapter ({e}). Install lavapipe (apt-get install \
                 mesa-vulkan-drivers libvulkan1), or set MIPFLOW_REQUIRE_GPU=1 to fail instead."
            );
            None
        }
    }
}
