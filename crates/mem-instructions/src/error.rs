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

/// Why [`crate::read_capped`] read nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The path is not a regular file (a directory, FIFO, socket or device): refused without
    /// opening it, so a FIFO never blocks.
    #[error("not a regular file ({kind})")]
    NotAFile {
        /// What it is: `"a directory"`, `"a FIFO"`, `"a socket"`, `"a device"`, `"not a
        /// regular file"`.
        kind: &'static str,
    },
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
