//! Errors of the instructions loader. A missing, refused or oversized include is not an error:
//! it is a [`crate::Warning`] returned with the loaded text.

use std::path::PathBuf;

/// Loading could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The project root does not exist or cannot be resolved.
    #[error("cannot resolve the project root {}: {source}", path.display())]
    ProjectRoot {
        /// The root as given.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Why [`crate::read_capped`] read nothing (`mem_core::fsread::ReadError`).
pub use mem_core::fsread::ReadError;
