//! Errors of compaction.

use std::path::PathBuf;

/// What can make a compaction fail. On every error the session on disk and the conversation in
/// memory are left as they were (spill files already written are harmless copies).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The summariser failed; nothing was written. `consecutive_failures` counts this failure.
    #[error(
        "cannot summarise the conversation of session {session} ({consecutive_failures} consecutive failure(s))"
    )]
    Summarize {
        /// The session.
        session: String,
        /// Failures in a row for this session, this one included.
        consecutive_failures: usize,
        /// The model layer's error.
        source: Box<mem_llm::LlmError>,
    },
    /// The boundary could not be written to the session.
    #[error("cannot write the compact boundary of session {session}")]
    Session {
        /// The session.
        session: String,
        /// The session store's error.
        source: Box<mem_session::Error>,
    },
    /// A spilled tool result could not be written.
    #[error("cannot write the tool result file {path}")]
    Spill {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The session file changed since its messages were read (another writer appended): the
    /// boundary was not written, since it would hide what was appended. Read the session again
    /// and retry.
    #[error(
        "session {session} changed since it was read (another writer appended); nothing was written: read it again and retry"
    )]
    Changed {
        /// The session.
        session: String,
    },
    /// A compaction was asked of a session opened without a writer (a dry run).
    #[error("session {session} was opened read-only (dry run); nothing can be written")]
    ReadOnly {
        /// The session.
        session: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
