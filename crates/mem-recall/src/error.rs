//! Errors of mem-recall. What a scan can recover from (a broken file, an unreadable folder) is
//! not an error but a [`crate::Warning`]; these are the failures of an operation asked for by
//! name: a malformed note id, a note that is not there, a write that could not be done.

use std::path::PathBuf;

/// A mem-recall error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A note id that is not `N:<scope>/<file name>` (scope `project`, `user` or `extra<K>`).
    #[error("invalid note id {id:?}: {reason} (expected N:<project|user|extraK>/<file>.md)")]
    InvalidId {
        /// The id as given.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The id's scope names a directory that is not configured (e.g. `extra3` with two extras).
    #[error("note id {id}: no memory directory is configured for scope {scope}")]
    UnknownScope {
        /// The id.
        id: String,
        /// The scope.
        scope: String,
    },
    /// No such note.
    #[error("no note {id} (looked for {})", path.display())]
    NotFound {
        /// The id.
        id: String,
        /// Where it would be.
        path: PathBuf,
    },
    /// `write_note` without `overwrite` found a file of that name.
    #[error("{} already exists; choose another name or overwrite it explicitly", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// A note to write is not valid (empty name, unknown type, ...).
    #[error("invalid note: {0}")]
    InvalidNote(String),
    /// A path exists but is not a regular file (a FIFO, a directory, a device).
    #[error("{} is not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
    },
    /// An I/O failure, with what was being done and on which path.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`cannot read`, `cannot write`, ...).
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Another process held a notes folder's lock ([`crate::NOTES_LOCK_FILE`]) too long: a
    /// checkpoint restore putting notes back, or another writer.
    #[error(
        "the notes folder is busy (lock {} held by another process for {waited_ms} ms): nothing \
         was written; try again",
        path.display()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// How long it waited.
        waited_ms: u64,
    },
    /// The per-session record of surfaced notes does not parse.
    #[error("{}: not a recall record ({reason})", path.display())]
    BadRecord {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
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

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
