//! Session records on disk (MewCode seed §1): every message of a conversation is appended to
//! `<project>/.mewcode/sessions/{id}.jsonl` as it happens, with `{id}.meta` beside it; a session
//! resumes from its last compact boundary; the replay is validated so tool_use / tool_result
//! pairs are whole. Importers turn Claude Code transcripts and Codex CLI rollouts into sessions.
//!
//! Guarantees (each tested):
//! - an append that returned is on disk (in the page cache; [`Durability::Sync`] adds fsync);
//! - a torn last line loses no complete record, and the next append starts on a fresh line;
//! - two processes appending to one session take turns under a file lock;
//! - records before a boundary are never rewritten; resume reads only from the last boundary,
//!   found by a backward byte search, so its cost grows with the tail, not the history;
//! - malformed lines are reported with file and line and skipped, never fatal.

mod chain;
mod diagnostic;
mod error;
pub mod import;
pub mod ingest;
mod jsonl;
mod meta;
mod record;
pub mod search;
mod store;

pub use chain::{ChainIssue, INTERRUPTED_TOOL_RESULT, validate_message_chain};
pub use diagnostic::{Diagnostic, LINE_KINDS, Severity, tally_damaged};
pub use error::{Error, Result};
pub use jsonl::{JsonLine, JsonlEvent, JsonlReader};
pub use meta::{SessionMeta, TITLE_MAX_CHARS, shorten, title_from};
pub use record::{
    COMPACT_SUMMARY_MARKER, CompactBoundary, RecordType, Rollback, SessionRecord,
    make_compact_boundary, make_rollback, parse_compact_boundary, parse_rollback,
    records_to_messages, write_json,
};
pub use search::{
    RefreshReport, SessionHit, SessionIndex, SessionQuery, SessionSearch, forget_in_index,
    refresh_index, search_sessions,
};
pub use store::{
    Durability, ImportLock, META_FLUSH_INTERVAL, MetaMark, PreparedSession, REWRITING_KEY, Resumed,
    SESSIONS_DIR, SessionStore, SessionWriter, StagedSession, StoreOptions, WriteOutcome,
    message_records, validate_id,
};
