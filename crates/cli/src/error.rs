//! The CLI's error: the library's, the cooker's, and what only the tools can get wrong.

use std::path::PathBuf;

/// Everything a `mipflow` command can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From the library.
    #[error(transparent)]
    Mipflow(#[from] mipflow::Error),
    /// From cooking.
    #[error(transparent)]
    Cook(#[from] mipflow_cook::CookError),
    /// A headless scenario (or a scene description) is malformed.
    #[error("scenario: {0}")]
    Scenario(String),
    /// An image could not be read or written.
    #[error("image {path}: {source}")]
    Image {
        /// The file.
        path: PathBuf,
        /// What the image crate said.
        source: image::ImageError,
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

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
