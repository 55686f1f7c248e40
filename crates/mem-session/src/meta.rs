//! `{session_id}.meta`: a small JSON summary of a session, derived from its `.jsonl`.
//!
//! The meta is a cache: the `.jsonl` is the truth. `jsonl_bytes` records how much of the
//! `.jsonl` the meta reflects, so a meta left stale by a crash (or by another writer) is brought
//! up to date by reading only the bytes after that point.

use mem_core::{Message, TokenCounter};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::record::{RecordType, SessionRecord, parse_compact_boundary, parse_rollback};

/// Key of [`SessionMeta::extra`] holding import provenance: `{"format", "path", "xxh3",
/// "bytes"}` (`bytes`: the `.jsonl` length right after the import, so a re-import can tell
/// whether records were appended since).
pub const IMPORTED_KEY: &str = "imported";

/// Longest title kept, in characters.
pub const TITLE_MAX_CHARS: usize = 80;

/// The contents of `{session_id}.meta` (seed §1: title, message count, token count, timestamps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session id (the file stem).
    pub id: String,
    /// From the first user message (one line, at most [`TITLE_MAX_CHARS`] characters), or set by
    /// an importer.
    /// Written through the secret filter (a first message often holds a command with its
    /// credential): the `.meta` file never stores one.
    #[serde(default, serialize_with = "redacted_title")]
    pub title: Option<String>,
    /// Message records in the whole file (user, assistant, tool_result), boundaries excluded.
    #[serde(default)]
    pub message_count: usize,
    /// Tokens of the conversation a resume would replay now (after the last boundary); with
    /// [`SessionMeta::tokens_pending_from`], only of the records before that offset.
    #[serde(default)]
    pub token_count: usize,
    /// Byte offset in the `.jsonl` of the first record whose tokens are not in `token_count`
    /// yet, or `None` when `token_count` is complete. Left by a store that defers counting
    /// (`StoreOptions::defer_tokens`, the hooks' incremental transcript sync: counting loads
    /// the BPE vocabulary, ~75 ms per process); a store that counts brings it up to date the
    /// next time it reads the meta, reading only the records from this offset (or from the
    /// last boundary after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_pending_from: Option<u64>,
    /// Compact boundaries (and legacy compression markers) in the file.
    #[serde(default)]
    pub compactions: usize,
    /// RFC 3339 time of creation.
    pub created: String,
    /// RFC 3339 time of the last conversation record (message or system prompt). Compact
    /// boundaries are maintenance, not activity: a `mem compact sweep` does not move it.
    pub last_active: String,
    /// Byte length of the `.jsonl` this meta reflects.
    #[serde(default)]
    pub jsonl_bytes: u64,
    /// Hex of the last (up to) 32 bytes of the `.jsonl` this meta reflects: if the file no
    /// longer has them at `jsonl_bytes`, it was edited and the meta is rebuilt.
    #[serde(default)]
    pub jsonl_tail: String,
    /// The parent session, for a subagent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Lines of the `.jsonl` that could not be read as records (malformed, torn, invalid); `mem
    /// session show` lists them. 0 for a sound file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub damaged_lines: usize,
    /// Other fields (import provenance under `imported`), preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionMeta {
    /// A meta for an empty session created at `now`.
    pub fn new(id: impl Into<String>, now: String) -> Self {
        SessionMeta {
            id: id.into(),
            title: None,
            message_count: 0,
            token_count: 0,
            tokens_pending_from: None,
            compactions: 0,
            created: now.clone(),
            last_active: now,
            jsonl_bytes: 0,
            jsonl_tail: String::new(),
            parent_id: None,
            damaged_lines: 0,
            extra: Map::new(),
        }
    }

    /// Updates the counts for one record appended after the ones already reflected.
    pub fn apply(&mut self, record: &SessionRecord, counter: &TokenCounter) {
        self.apply_with(record, counter, true);
    }

    /// [`SessionMeta::apply`] without counting tokens: `token_count` is left as it is and, for a
    /// record that changes it (a message, a boundary, a rollback), `tokens_pending_from` is set
    /// to `offset` (the record's byte offset in the `.jsonl`) unless already set. Never loads
    /// the BPE vocabulary.
    pub fn apply_deferred(&mut self, record: &SessionRecord, offset: u64) {
        let tokens = self.token_count;
        // The counter is not used when `count_tokens` is false.
        self.apply_with(record, &TokenCounter::default(), false);
        self.token_count = tokens;
        if record.record_type != RecordType::SystemPrompt && self.tokens_pending_from.is_none() {
            self.tokens_pending_from = Some(offset);
        }
    }

    /// The part of [`SessionMeta::apply`] that changes `token_count` (used to bring a deferred
    /// count up to date).
    pub fn apply_tokens(&mut self, record: &SessionRecord, counter: &TokenCounter) {
        match record.record_type {
            RecordType::SystemPrompt => {}
            RecordType::User | RecordType::Assistant | RecordType::ToolResult => {
                if let Some(message) = &record.message {
                    self.token_count += counter.count_message(message);
                }
            }
            RecordType::CompactBoundary | RecordType::Compression => {
                if let Some(b) = parse_compact_boundary(record) {
                    self.token_count = b
                        .to_messages()
                        .iter()
                        .map(|m| counter.count_message(m))
                        .sum();
                }
            }
            RecordType::Rollback => {
                if let Some(r) = parse_rollback(record) {
                    self.token_count = r.token_count;
                }
            }
        }
    }

    /// [`SessionMeta::apply`], counting tokens only when `count_tokens` (a rebuild skips the
    /// records before the last boundary: they are never replayed).
    pub fn apply_with(
        &mut self,
        record: &SessionRecord,
        counter: &TokenCounter,
        count_tokens: bool,
    ) {
        if let Some(ts) = &record.timestamp
            && !matches!(
                record.record_type,
                RecordType::CompactBoundary | RecordType::Compression | RecordType::Rollback
            )
        {
            self.last_active.clone_from(ts);
        }
        match record.record_type {
            RecordType::SystemPrompt => {}
            RecordType::User | RecordType::Assistant | RecordType::ToolResult => {
                let Some(message) = &record.message else {
                    return;
                };
                self.message_count += 1;
                if count_tokens {
                    self.token_count += counter.count_message(message);
                }
                if self.title.is_none() && record.record_type == RecordType::User {
                    self.title = title_from(message);
                }
            }
            RecordType::CompactBoundary | RecordType::Compression => {
                if let Some(b) = parse_compact_boundary(record) {
                    self.compactions += 1;
                    self.token_count = if count_tokens {
                        b.to_messages()
                            .iter()
                            .map(|m| counter.count_message(m))
                            .sum()
                    } else {
                        0
                    };
                }
            }
            RecordType::Rollback => {
                if let Some(r) = parse_rollback(record) {
                    self.token_count = if count_tokens { r.token_count } else { 0 };
                }
            }
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Serializes a title with its secrets withheld ([`mem_core::secrets::redact`]).
fn redacted_title<S: serde::Serializer>(
    title: &Option<String>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match title {
        Some(t) => s.serialize_some(&mem_core::secrets::redact(t).text),
        None => s.serialize_none(),
    }
}

/// A one-line title from a message's text, or `None` when it has no text.
pub fn title_from(message: &Message) -> Option<String> {
    let text = message.text_content();
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    Some(shorten(&line, TITLE_MAX_CHARS))
}

/// Cuts `s` to at most `max` characters, ending with `…` when cut (never mid-character).
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
