//! Errors of the session store. What a reader can recover from (a malformed line, a torn tail)
//! is not an error: it is a [`crate::Diagnostic`] returned next to the value.

use std::path::PathBuf;

/// A session operation that could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read, written, created or removed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done ("cannot append to", "cannot read", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the session's lock for longer than the wait allowed.
    #[error(
        "session file {} is locked by another process (waited {waited_ms} ms); \
         another agent may be writing this session",
        path.display()
    )]
    Locked {
        /// The locked `.jsonl` file.
        path: PathBuf,
        /// How long we waited, in milliseconds.
        waited_ms: u64,
    },
    /// No session with this id exists in the store.
    #[error("no session `{id}` in {}", dir.display())]
    NotFound {
        /// The id asked for.
        id: String,
        /// The sessions directory searched.
        dir: PathBuf,
    },
    /// More than one session id starts with the given prefix.
    #[error("session id prefix `{prefix}` is ambiguous: {}", candidates.join(", "))]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The matching ids.
        candidates: Vec<String>,
    },
    /// A session id that cannot name a file (empty, a path separator, a leading dot...).
    #[error("invalid session id `{0}`: use letters, digits, `-`, `_` and `.` (not first)")]
    InvalidId(String),
    /// A record could not be turned into JSON.
    #[error("cannot serialise a record of session {id}: {source}")]
    Serialize {
        /// The session.
        id: String,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// The file is not a transcript any importer understands.
    #[error("{}: not a transcript mewmem can import ({reason})", path.display())]
    NotATranscript {
        /// The file.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// A transcript argument that is not a regular file (a FIFO, a device, a socket, a folder):
    /// reading it could block forever or never end.
    #[error("{}: not a regular file ({kind}); only transcript files can be read", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`mem_core::fsread::file_kind`): `a FIFO`, `a device`, `a socket`,
        /// `a directory`, `not a regular file`.
        kind: &'static str,
    },
    /// A transcript larger than [`crate::import::MAX_TRANSCRIPT_BYTES`].
    #[error(
        "{}: too large to read ({size} bytes; a transcript may have at most {max} bytes)",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        max: u64,
    },
    /// The file to import is one of this store's own session files.
    #[error("{} is a session file of this project already; nothing to import", path.display())]
    SourceIsStore {
        /// The file.
        path: PathBuf,
    },
    /// The id an import would use belongs to a session from another source.
    #[error(
        "session `{id}` already exists ({}); importing {} would replace it: \
         delete that session first if {} should take its place",
        existing_source.as_ref().map(|p| format!("imported from {}", p.display())).unwrap_or_else(|| "written by mewmem, not imported".to_owned()),
        source_path.display(),
        source_path.display()
    )]
    IdTaken {
        /// The session id.
        id: String,
        /// Where the existing session was imported from (`None`: mewmem wrote it).
        existing_source: Option<PathBuf>,
        /// The file being imported.
        source_path: PathBuf,
    },
    /// Re-importing would drop records appended to the session after its import.
    #[error(
        "session `{id}` has records appended after it was imported from {}; \
         re-importing would drop them (export or delete the session first to re-import)",
        source_path.display()
    )]
    WouldDropAppended {
        /// The session.
        id: String,
        /// The transcript it was imported from.
        source_path: PathBuf,
    },
    /// The session search index (SQLite) failed.
    #[error("session search index {}: {source}", path.display())]
    Index {
        /// The index file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The session search index was made by a newer mem.
    #[error(
        "session search index {} has schema version {found}, newer than this mem ({supported}); \
         upgrade mem, or delete the file (it is rebuilt from the sessions)",
        path.display()
    )]
    IndexVersion {
        /// The index file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// The newest this build reads.
        supported: i64,
    },
    /// A search that cannot run as asked (a `since` that is not a date...).
    #[error("{0}")]
    BadQuery(String),
    /// A session changed on disk in a way an incremental update cannot build on (its bytes
    /// before the point recorded at the last import are not the ones written then).
    #[error("session `{id}` changed on disk: {detail}")]
    Changed {
        /// The session.
        id: String,
        /// What differs.
        detail: String,
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
