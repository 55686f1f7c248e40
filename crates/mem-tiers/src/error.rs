//! Errors of the tier store, the index and the memory manager.

use std::path::PathBuf;

/// Everything that can go wrong in `mem-tiers`. Each variant names the file involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database file exists but is not SQLite, or is another program's SQLite database.
    #[error(
        "{path} is not a mewmem memory database ({reason}); it was left untouched: move it away \
         or point the storage dir elsewhere"
    )]
    Foreign {
        /// The database file.
        path: PathBuf,
        /// What gave it away.
        reason: String,
    },
    /// The database file is damaged.
    #[error(
        "the memory database {path} is damaged ({reason}); it was left untouched: restore a \
         backup, or move it away and run `mem memory reindex` (learnings and preferences live \
         only in the database)"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// SQLite's message.
        reason: String,
    },
    /// The database was written by a newer mewmem.
    #[error(
        "the memory database {path} has schema version {found}; this mewmem knows versions up \
         to {known}: upgrade mewmem"
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// Another process held the database longer than the busy timeout.
    #[error(
        "the memory database {path} is locked by another process (waited {waited_ms} ms); \
         nothing was written: try again"
    )]
    Locked {
        /// The database file.
        path: PathBuf,
        /// The busy timeout, in milliseconds.
        waited_ms: u64,
    },
    /// The disk is full.
    #[error("cannot write the memory database {path}: the disk is full; nothing was written")]
    DiskFull {
        /// The database file.
        path: PathBuf,
    },
    /// The database file, its write-ahead log (`-wal`), its shared-memory file (`-shm`) or its
    /// directory is read-only. `which` names the first of them found not writable (the log
    /// files left read-only by a read-only spell block writes after the database's own mode is
    /// restored).
    #[error("cannot write the memory database {path}: {which} is read-only; nothing was written")]
    ReadOnly {
        /// The database file.
        path: PathBuf,
        /// What is read-only: "it", "its directory", or a side file's path; "it (or its
        /// directory)" when none was found so.
        which: String,
    },
    /// The database's folder (or file) is not writable, so it can only be opened read-only,
    /// and a write-ahead log (`<db>-wal` not empty, or a `<db>-shm` file) is pending: reading
    /// the file as immutable would miss the log's writes. Run any command once with write
    /// access to the folder (it replays the log), or restore write access.
    #[error(
        "cannot read the memory database {path}: the folder is not writable and a write-ahead \
         log is pending: its writes would be missed ({reason}); run mewmem once with write \
         access to the folder to replay the log"
    )]
    PendingLog {
        /// The database file.
        path: PathBuf,
        /// SQLite's message for the read-only open.
        reason: String,
    },
    /// Any other database error.
    #[error("memory database {path}: {source}")]
    Sql {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// The team store (PostgreSQL) could not be reached or answered with an error. `url` is
    /// shown without its password.
    #[error("memory server {url}: {reason}")]
    Server {
        /// The connection URL, password replaced by `***`.
        url: String,
        /// What went wrong (the server's or the client's message; never the password).
        reason: String,
    },
    /// The team store's schema was written by a newer mewmem.
    #[error(
        "the memory server {url} has schema version {found} (schema {schema}); this mewmem \
         knows versions up to {known}: upgrade mewmem"
    )]
    ServerTooNew {
        /// The connection URL, password replaced by `***`.
        url: String,
        /// The PostgreSQL schema holding mewmem's tables.
        schema: String,
        /// The version found on the server.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done ("read", "write", "create"...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A memory file's owner (`mem-auto`, `mem-recall`) refused or failed an operation.
    #[error("{path}: {message}")]
    Source {
        /// The file.
        path: PathBuf,
        /// The owner's error.
        message: String,
    },
    /// `.omc/project.yaml` (or an archive) is malformed.
    #[error("{path}:{line}: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A memory id that is none of `L<n>`, `M<8 hex>`, `N:<scope>/<file>`.
    #[error(
        "invalid memory id {id:?}: {reason} (expected L<number>, M<8 hex digits> or \
         N:<project|user|extraK>/<file>.md)"
    )]
    BadId {
        /// The id as given.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No memory has this id.
    #[error("no memory with id {0}")]
    NotFound(String),
    /// An argument is out of range (empty title, oversized content, unknown preference key...).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
