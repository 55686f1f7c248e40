//! Errors of the facade and the hook protocol.

use std::path::PathBuf;

/// Something the facade could not do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading instruction files failed (the project root does not exist).
    #[error(transparent)]
    Instructions(#[from] mem_instructions::Error),
    /// Reading or writing `memories.md`, or extracting into it, failed.
    #[error(transparent)]
    Auto(#[from] mem_auto::Error),
    /// The tier store (Tier 0, learnings) could not be opened or read.
    #[error(transparent)]
    Tiers(#[from] mem_tiers::Error),
    /// A memory note could not be read, written or removed, or its id is not valid.
    #[error(transparent)]
    Recall(#[from] mem_recall::Error),
    /// A session operation failed.
    #[error(transparent)]
    Session(#[from] mem_session::Error),
    /// Compaction failed (the summariser, or writing the boundary).
    #[error(transparent)]
    Compact(#[from] mem_compact::Error),
    /// The configuration of the embedding program ([`crate::ConfigSource`]) could not be read
    /// or is wrong, or it refused a write; the message and causes are its own.
    #[error(transparent)]
    Config(crate::ConfigError),
    /// `mem memory migrate` with no local store to copy.
    #[error("no local memory database at {}: nothing to migrate", path.display())]
    NoLocalStore {
        /// Where the local database would be.
        path: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A background task (extraction) panicked or was cancelled.
    #[error("background {what} did not finish: {reason}")]
    Task {
        /// Which task.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A hook payload (the JSON Claude Code writes on stdin) that cannot be used.
    #[error("hook payload: {0}")]
    Payload(String),
    /// A Claude Code `settings.json` that cannot be merged into.
    #[error("{}: {reason}", path.display())]
    Settings {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
