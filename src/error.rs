//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong in mipflow, with enough context to act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No adapter matched the request (no GPU, no Vulkan driver, or the backend filter excluded it).
    #[error("no GPU adapter found for backends {}: {reason}", backend_names(*backends))]
    NoAdapter {
        /// The backends that were searched.
        backends: wgpu::Backends,
        /// What wgpu said.
        reason: String,
    },
    /// The adapter refused the device request.
    #[error("device request failed: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    /// Creating a surface for a window failed.
    #[error("surface creation failed: {0}")]
    CreateSurface(#[from] wgpu::CreateSurfaceError),
    /// The driver ran out of memory creating `label` (`bytes` requested).
    #[error("GPU out of memory creating {label:?} ({bytes} bytes)")]
    OutOfMemory {
        /// Label of the resource being created.
        label: String,
        /// Bytes the resource would have needed.
        bytes: u64,
    },
    /// wgpu validation refused a resource or a command.
    #[error("GPU validation error while {context}: {message}")]
    Validation {
        /// What mipflow was doing.
        context: String,
        /// wgpu's message.
        message: String,
    },
    /// A texture or buffer request mipflow cannot satisfy (zero or oversize extent, unsupported format).
    #[error("invalid resource {label:?}: {reason}")]
    InvalidResource {
        /// Label of the resource.
        label: String,
        /// Why it was refused.
        reason: String,
    },
    /// A texture whose floor (the tail of levels kept resident and held on the CPU for
    /// eviction) cannot fit a budget: refused at registration, before its data is read.
    #[error(
        "texture {label:?} refused: its floor needs {needed} bytes of {what}, over the limit of \
         {limit} bytes ({held} bytes already held)"
    )]
    FloorTooLarge {
        /// Label of the texture (its file name).
        label: String,
        /// Which budget: `"CPU memory (StreamConfig::cpu_floor_limit)"` or `"VRAM (the budget)"`.
        what: &'static str,
        /// Bytes its floor needs.
        needed: u64,
        /// The limit.
        limit: u64,
        /// Bytes held already against that limit.
        held: u64,
    },
    /// Reading a GPU buffer back to the CPU failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
    /// The GPU device is lost (a driver reset, `Device::destroy`): nothing more can be made
    /// on it; a new device (and context) is needed.
    #[error("GPU device lost: {label:?} not created")]
    DeviceLost {
        /// The resource that was asked for.
        label: String,
    },
    /// A KTX2 file is malformed or unsupported.
    #[error("{path}: {source}")]
    Ktx2 {
        /// The file (or `<memory>`).
        path: PathBuf,
        /// What is wrong with it.
        source: crate::ktx2::Ktx2Error,
    },
    /// A size string such as `"256MiB"` could not be parsed.
    #[error("invalid size {input:?}: {reason}")]
    InvalidSize {
        /// The text given.
        input: String,
        /// Why it was refused.
        reason: String,
    },
    /// Plain IO, with the path it concerned.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The backends of a set by the names `WGPU_BACKEND` takes ("vulkan, gl"), for messages.
fn backend_names(backends: wgpu::Backends) -> String {
    let names: Vec<&str> = [
        (wgpu::Backends::VULKAN, "vulkan"),
        (wgpu::Backends::METAL, "metal"),
        (wgpu::Backends::DX12, "dx12"),
        (wgpu::Backends::GL, "gl"),
        (wgpu::Backends::BROWSER_WEBGPU, "webgpu"),
        (wgpu::Backends::NOOP, "noop"),
    ]
    .into_iter()
    .filter(|(b, _)| backends.contains(*b))
    .map(|(_, name)| name)
    .collect();
    if names.is_empty() {
        "(none: WGPU_BACKEND takes vulkan, metal, dx12, gl or webgpu)".to_owned()
    } else {
        names.join(", ")
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
