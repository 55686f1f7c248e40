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
    /// A model call failed (or its configuration cannot be used).
    #[error(transparent)]
    Llm(#[from] mem_llm::LlmError),
    /// The project has no session to work on (none was named).
    #[error("no sessions in {} (import some with `mem session import PATH`)", dir.display())]
    NoSessions {
        /// The sessions folder.
        dir: PathBuf,
    },
    /// A record number outside the session (`mem session show --around N`).
    #[error("session {id} has records 1 to {records}; --around {number} is not one of them")]
    NoSuchRecord {
        /// The session.
        id: String,
        /// The record asked for (1-based).
        number: usize,
        /// How many records the session has.
        records: usize,
    },
    /// A session delete was given a prefix of ids rather than a full id.
    #[error(
        "no session `{prefix}`: delete takes the full id, not a prefix; `{prefix}` starts {}",
        matches.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
    )]
    PrefixNotId {
        /// What was given.
        prefix: String,
        /// The full ids it starts.
        matches: Vec<String>,
    },
    /// A session was deleted, but something kept beside it was not.
    #[error("deleted session {id}, but {what}")]
    DeletedPartly {
        /// The deleted session.
        id: String,
        /// What was left (`not its recall record`...).
        what: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// None of the paths of an import holds a `.jsonl` file.
    #[error("no .jsonl transcripts found under {}", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoTranscripts {
        /// The paths given.
        paths: Vec<PathBuf>,
    },
    /// An operation that cannot go on, said in one line (an input that cannot be used, a
    /// result that would be unusable); the CLI prints it as it is.
    #[error("{0}")]
    Refused(String),
    /// A checkpoint could not be taken, listed, shown, restored or removed.
    #[error(transparent)]
    Checkpoint(#[from] mem_checkpoint::Error),
    /// A skill could not be suggested or written.
    #[error(transparent)]
    Skill(#[from] mem_skills::Error),
    /// What an operation was doing when a lower layer failed: the context, then the cause.
    #[error("{context}")]
    Context {
        /// What was being done (`cannot open session ID`).
        context: String,
        /// The failure.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
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
