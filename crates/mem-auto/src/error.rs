//! Errors of auto memory. A file that cannot be used is an error naming it; nothing is rewritten
//! after an error, so what a person wrote is never lost.

use std::path::PathBuf;

/// Why an auto-memory operation failed.
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
    /// A file operation failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done: `cannot read`, `cannot write`, `cannot lock`...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A `memories.md` (or a state file) is a directory, FIFO, socket or device.
    #[error("{} is not a regular file ({kind}); it is left as it is", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`a directory`, `a FIFO`...).
        kind: &'static str,
    },
    /// The file resolves (through symlinks) outside its folder (`<project>` or `~/.mewcode`).
    #[error("{} resolves to {}, outside {boundary}; refused", path.display(), target.display())]
    OutsideFolder {
        /// The path looked at.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
        /// The folder it must stay in, as displayed.
        boundary: String,
    },
    /// The file is larger than the byte limit for a `memories.md`.
    #[error("{} is too large to rewrite ({size} bytes; the limit is {max} bytes); it is left as it is", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        max: usize,
    },
    /// The file is not valid UTF-8 text.
    #[error("{} is not valid UTF-8 text; it is left as it is", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The file holds NUL bytes: it is binary, not markdown.
    #[error("{} is a binary file (NUL byte at byte {offset}); it is left as it is", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// A state file (per-session extraction counts, confirmation dates) is not the JSON expected.
    #[error("{} is not a valid state file: {source}", path.display())]
    BadState {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// An id that is not `M` followed by 8 lowercase hex digits.
    #[error(transparent)]
    Id(#[from] crate::id::IdError),
    /// Reading the session failed.
    #[error(transparent)]
    Session(#[from] mem_session::Error),
    /// The model call failed (transport or HTTP error).
    #[error(transparent)]
    Llm(#[from] mem_llm::LlmError),
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
