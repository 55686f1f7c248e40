//! Session records: one JSON object per line of `{session_id}.jsonl` (MewCode seed §1).
//!
//! On-disk shape (keys in this order; `type` always first so a boundary can be found by a
//! byte search for `\n{"type":"compact_boundary"` without parsing the file):
//!
//! ```json
//! {"type":"user","timestamp":"2026-06-18T10:00:00Z","message":{"role":"user","content":[...]}}
//! {"type":"compact_boundary","timestamp":"...","summary":"...","keep_messages":[{...},...]}
//! ```

use mem_core::{Message, Role};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The six record kinds of seed §1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordType {
    /// The system prompt; stored, never replayed.
    SystemPrompt,
    /// A user message.
    User,
    /// An assistant message (text, thinking, tool_use blocks).
    Assistant,
    /// A user-role message made only of tool_result blocks.
    ToolResult,
    /// Legacy compaction marker: `summary` replaces everything before it. Still read, no longer
    /// written.
    Compression,
    /// Layer-2 compaction boundary: `summary` and the kept tail (`keep_messages`) inline.
    CompactBoundary,
    /// Beyond the seed: a checkpoint restore (`mem checkpoint restore`). Replay goes back to the
    /// session as it was at `to_bytes` / `to_records` (see [`Rollback`]) and goes on with the
    /// records after this one. Nothing before it is rewritten or deleted.
    Rollback,
}

impl RecordType {
    /// The snake_case name used on disk.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::SystemPrompt => "system_prompt",
            RecordType::User => "user",
            RecordType::Assistant => "assistant",
            RecordType::ToolResult => "tool_result",
            RecordType::Compression => "compression",
            RecordType::CompactBoundary => "compact_boundary",
            RecordType::Rollback => "rollback",
        }
    }

    /// The record type that stores `message`: system → `system_prompt`, assistant →
    /// `assistant`, a user message of tool results only → `tool_result`, other user → `user`.
    pub fn for_message(message: &Message) -> RecordType {
        match message.role {
            Role::System => RecordType::SystemPrompt,
            Role::Assistant => RecordType::Assistant,
            Role::User if message.is_tool_result_only() => RecordType::ToolResult,
            Role::User => RecordType::User,
        }
    }
}

/// One line of a session file.
///
/// Message records carry `message`; `compact_boundary` carries `summary` and `keep_messages`;
/// `compression` carries `summary`. `timestamp` is RFC 3339 UTC. `extra` keeps any other field
/// (written by a newer version, or provenance from an importer) so rewriting never drops it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The record kind.
    #[serde(rename = "type")]
    pub record_type: RecordType,
    /// When the record was made (RFC 3339), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The message, for message records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// The summary text, for boundaries and legacy compression markers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The kept tail, verbatim, for boundaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_messages: Option<Vec<Message>>,
    /// Other fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionRecord {
    /// A record for `message`, typed by [`RecordType::for_message`].
    pub fn message(message: Message, timestamp: Option<String>) -> Self {
        SessionRecord {
            record_type: RecordType::for_message(&message),
            timestamp,
            message: Some(message),
            summary: None,
            keep_messages: None,
            extra: Map::new(),
        }
    }

    /// Checks that the fields the type needs are present; returns a reason when not.
    pub fn check(&self) -> Result<(), String> {
        match self.record_type {
            RecordType::SystemPrompt
            | RecordType::User
            | RecordType::Assistant
            | RecordType::ToolResult => {
                if self.message.is_none() {
                    return Err(format!(
                        "`{}` record without a `message`",
                        self.record_type.as_str()
                    ));
                }
            }
            RecordType::Compression => {
                if self.summary.is_none() {
                    return Err("`compression` record without a `summary`".to_owned());
                }
            }
            RecordType::CompactBoundary => {
                if self.summary.is_none() {
                    return Err("`compact_boundary` record without a `summary`".to_owned());
                }
            }
            RecordType::Rollback => {
                for key in ["to_bytes", "to_records"] {
                    if !self.extra.get(key).is_some_and(Value::is_u64) {
                        return Err(format!("`rollback` record without a whole number `{key}`"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A parsed compaction boundary: the summary of the dropped prefix and the tail kept verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactBoundary {
    /// Summary of everything before the boundary.
    pub summary: String,
    /// Messages kept verbatim after the summary.
    pub keep_messages: Vec<Message>,
}

/// Metadata key set on the user message that carries a boundary's summary during replay.
pub const COMPACT_SUMMARY_MARKER: &str = mem_core::metadata_keys::COMPACT_SUMMARY;

impl CompactBoundary {
    /// The messages a boundary replays as: the summary as a user message (marked with
    /// [`COMPACT_SUMMARY_MARKER`]), then the kept tail.
    pub fn to_messages(&self) -> Vec<Message> {
        let mut out = Vec::with_capacity(1 + self.keep_messages.len());
        out.push(
            Message::user(self.summary.clone())
                .with_metadata(COMPACT_SUMMARY_MARKER, Value::Bool(true)),
        );
        out.extend(self.keep_messages.iter().cloned());
        out
    }
}

/// Builds a `compact_boundary` record with the summary and the kept tail inline (seed §1).
pub fn make_compact_boundary(
    summary: impl Into<String>,
    keep_messages: Vec<Message>,
    timestamp: Option<String>,
) -> SessionRecord {
    SessionRecord {
        record_type: RecordType::CompactBoundary,
        timestamp,
        message: None,
        summary: Some(summary.into()),
        keep_messages: Some(keep_messages),
        extra: Map::new(),
    }
}

/// Reads a boundary back from a `compact_boundary` record (or a legacy `compression` record,
/// which has no kept tail). `None` for any other record.
pub fn parse_compact_boundary(record: &SessionRecord) -> Option<CompactBoundary> {
    match record.record_type {
        RecordType::CompactBoundary | RecordType::Compression => Some(CompactBoundary {
            summary: record.summary.clone().unwrap_or_default(),
            keep_messages: record.keep_messages.clone().unwrap_or_default(),
        }),
        _ => None,
    }
}

/// A checkpoint restore written into a session (record type `rollback`, beyond the seed).
///
/// On disk: `{"type":"rollback","timestamp":"...","to_bytes":1234,"to_records":17,
/// "token_count":950,"checkpoint":"before-sweep"}`. Replay of the records up to and including
/// this one is the replay of the session's first `to_records` records (its first `to_bytes`
/// bytes), exactly as it was when the checkpoint was taken; the records after it are appended to
/// that. The records in between stay on disk (conversation history is never deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollback {
    /// Length of the `.jsonl` (bytes) at the checkpoint: replay restarts from the records before
    /// this offset. Always the start of a line.
    pub to_bytes: u64,
    /// Valid records (lines that parse as records) before `to_bytes`.
    pub to_records: u64,
    /// Tokens (o200k_base) of the replay at the checkpoint; the meta's `token_count` after
    /// this record starts from it.
    pub token_count: usize,
    /// The checkpoint restored (for people reading the file).
    pub checkpoint: String,
}

/// Builds a `rollback` record.
pub fn make_rollback(rollback: &Rollback, timestamp: Option<String>) -> SessionRecord {
    let mut extra = Map::new();
    extra.insert("to_bytes".into(), Value::from(rollback.to_bytes));
    extra.insert("to_records".into(), Value::from(rollback.to_records));
    extra.insert("token_count".into(), Value::from(rollback.token_count));
    extra.insert(
        "checkpoint".into(),
        Value::from(rollback.checkpoint.clone()),
    );
    SessionRecord {
        record_type: RecordType::Rollback,
        timestamp,
        message: None,
        summary: None,
        keep_messages: None,
        extra,
    }
}

/// Reads a `rollback` record back; `None` for any other record or one missing its offsets.
pub fn parse_rollback(record: &SessionRecord) -> Option<Rollback> {
    if record.record_type != RecordType::Rollback {
        return None;
    }
    let num = |k: &str| record.extra.get(k).and_then(Value::as_u64);
    Some(Rollback {
        to_bytes: num("to_bytes")?,
        to_records: num("to_records")?,
        token_count: num("token_count")
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0),
        checkpoint: record
            .extra
            .get("checkpoint")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    })
}

/// Rebuilds the conversation to send to a model from records in file order (seed §1):
/// `system_prompt` records are skipped; each boundary (or legacy compression marker) replaces
/// everything before it with its summary and kept tail; message records are appended; a
/// `rollback` record whose `to_records` is at most its own index replaces everything before it
/// with the replay of the first `to_records` records (any other `rollback` is ignored). The
/// records must be the whole session from its first record, for `to_records` to count right.
pub fn records_to_messages<'a>(
    records: impl IntoIterator<Item = &'a SessionRecord>,
) -> Vec<Message> {
    let records: Vec<&SessionRecord> = records.into_iter().collect();
    replay_slice(&records)
}

fn replay_slice(records: &[&SessionRecord]) -> Vec<Message> {
    let mut out = Vec::new();
    for (i, record) in records.iter().enumerate() {
        match record.record_type {
            RecordType::SystemPrompt => {}
            RecordType::User | RecordType::Assistant | RecordType::ToolResult => {
                if let Some(m) = &record.message {
                    out.push(m.clone());
                }
            }
            RecordType::CompactBoundary | RecordType::Compression => {
                if let Some(b) = parse_compact_boundary(record) {
                    out = b.to_messages();
                }
            }
            RecordType::Rollback => {
                if let Some(r) = parse_rollback(record)
                    && let Ok(n) = usize::try_from(r.to_records)
                    && n <= i
                {
                    out = replay_slice(&records[..n]);
                }
            }
        }
    }
    out
}

/// [`records_to_messages`] for a tail of a session (records after a boundary or rollback):
/// `rollback` records in it are ignored, since their `to_records` counts from the file start.
/// Takes the records, so the messages are moved, not copied.
pub(crate) fn tail_to_messages(records: impl IntoIterator<Item = SessionRecord>) -> Vec<Message> {
    let mut out = Vec::new();
    for record in records {
        match record.record_type {
            RecordType::SystemPrompt | RecordType::Rollback => {}
            RecordType::User | RecordType::Assistant | RecordType::ToolResult => {
                if let Some(m) = record.message {
                    out.push(m);
                }
            }
            RecordType::CompactBoundary | RecordType::Compression => {
                if let Some(b) = parse_compact_boundary(&record) {
                    out = b.to_messages();
                }
            }
        }
    }
    out
}

/// Appends the compact JSON of `value` to `out`: byte for byte what `serde_json::to_writer`
/// writes (the same escapes, number forms and key order; tested on every fixture record and on
/// generated values), written by sonic-rs, which escapes strings with SIMD where serde_json
/// goes one byte at a time (~10 % of an import's CPU, the strings being most of the bytes).
/// Every session record the store and the importers write goes through it.
///
/// Errors: what the value's `Serialize` reports (a map key that is not a string or a
/// number, say), as a `serde_json::Error`; `out` is then cut back to its length on entry.
pub fn write_json<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    sonic_rs::to_writer(&mut *out, value).map_err(|e| {
        out.truncate(start);
        <serde_json::Error as serde::ser::Error>::custom(e)
    })
}

/// [`write_json`] into a new vector.
pub(crate) fn to_json_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    write_json(&mut out, value)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::ContentBlock;
    use serde_json::json;

    /// `write_json` against serde_json's writer: every record of every bundled transcript, and
    /// generated values (all escapes, the number forms, nesting, key order).
    #[test]
    fn write_json_writes_serde_json_bytes() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
        let mut records = 0;
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let Ok(sessions) = crate::import::import_file(entry.path()) else {
                continue;
            };
            for record in sessions.iter().flat_map(|s| &s.records) {
                let ours = to_json_vec(record).unwrap();
                let reference = serde_json::to_vec(record).unwrap();
                assert!(
                    ours == reference,
                    "{}: {}",
                    entry.path().display(),
                    String::from_utf8_lossy(&reference)
                );
                records += 1;
            }
        }
        assert!(records > 1000, "{records} records");

        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        fn string(next: &mut dyn FnMut() -> u64) -> String {
            let len = next() % 80;
            (0..len)
                .map(|_| match next() % 6 {
                    0 => char::from_u32((next() % 0x20) as u32).unwrap(),
                    1 => ['"', '\\', '/', '\u{7f}', '\u{2028}', '\u{feff}'][(next() % 6) as usize],
                    2 => char::from_u32((next() % 0x11_0000) as u32).unwrap_or('\u{fffd}'),
                    _ => char::from(b'a' + (next() % 26) as u8),
                })
                .collect()
        }
        fn value(next: &mut dyn FnMut() -> u64, depth: u32) -> Value {
            match next() % if depth > 3 { 6 } else { 8 } {
                0 => Value::Null,
                1 => Value::Bool(next().is_multiple_of(2)),
                2 => json!(next() as i64),
                3 => json!(next()),
                4 => {
                    let f = f64::from_bits(next());
                    if f.is_finite() {
                        json!(f)
                    } else {
                        json!((next() % 1_000_000) as f64 / 1e3)
                    }
                }
                5 => Value::String(string(next)),
                6 => Value::Array((0..next() % 5).map(|_| value(next, depth + 1)).collect()),
                _ => {
                    let mut map = Map::new();
                    for _ in 0..next() % 5 {
                        map.insert(string(next), value(next, depth + 1));
                    }
                    Value::Object(map)
                }
            }
        }
        for _ in 0..20_000 {
            let v = value(&mut next, 0);
            assert_eq!(
                to_json_vec(&v).unwrap(),
                serde_json::to_vec(&v).unwrap(),
                "{v:?}"
            );
        }
    }

    #[test]
    fn record_types_follow_the_message() {
        let tr = Message::new(
            Role::User,
            vec![ContentBlock::tool_result("t", "ok", false)],
        );
        assert_eq!(RecordType::for_message(&tr), RecordType::ToolResult);
        assert_eq!(
            RecordType::for_message(&Message::user("hi")),
            RecordType::User
        );
        assert_eq!(
            RecordType::for_message(&Message::text(Role::System, "s")),
            RecordType::SystemPrompt
        );
    }

    #[test]
    fn type_is_the_first_key_on_disk() {
        let b = make_compact_boundary(
            "sum",
            vec![Message::user("kept")],
            Some("2026-01-01T00:00:00Z".into()),
        );
        let line = serde_json::to_string(&b).unwrap();
        assert!(line.starts_with(r#"{"type":"compact_boundary","#), "{line}");
        let back: SessionRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, b);
        assert_eq!(
            parse_compact_boundary(&back).unwrap().keep_messages,
            vec![Message::user("kept")]
        );
    }

    #[test]
    fn replay_starts_at_the_last_boundary_and_skips_system_prompts() {
        let recs: Vec<SessionRecord> = [
            json!({"type":"system_prompt","message":{"role":"system","content":"sys"}}),
            json!({"type":"user","message":{"role":"user","content":"one"}}),
            json!({"type":"compression","summary":"old summary"}),
            json!({"type":"user","message":{"role":"user","content":"two"}}),
            json!({"type":"compact_boundary","summary":"S","keep_messages":[{"role":"user","content":"two"}]}),
            json!({"type":"assistant","message":{"role":"assistant","content":"three"}}),
        ]
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
        let msgs = records_to_messages(&recs);
        let texts: Vec<String> = msgs.iter().map(Message::text_content).collect();
        assert_eq!(texts, ["S", "two", "three"]);
        assert_eq!(
            msgs[0].metadata.get(COMPACT_SUMMARY_MARKER),
            Some(&json!(true))
        );
    }

    #[test]
    fn a_rollback_replays_the_prefix_then_what_follows() {
        let rec = |v: serde_json::Value| -> SessionRecord { serde_json::from_value(v).unwrap() };
        let rb = make_rollback(
            &Rollback {
                to_bytes: 99,
                to_records: 2,
                token_count: 5,
                checkpoint: "c".into(),
            },
            None,
        );
        let line = serde_json::to_string(&rb).unwrap();
        assert!(line.starts_with(r#"{"type":"rollback","#), "{line}");
        assert_eq!(parse_rollback(&rb).unwrap().to_records, 2);
        let recs = vec![
            rec(json!({"type":"user","message":{"role":"user","content":"one"}})),
            rec(json!({"type":"assistant","message":{"role":"assistant","content":"two"}})),
            rec(json!({"type":"user","message":{"role":"user","content":"undone"}})),
            rb.clone(),
            rec(json!({"type":"user","message":{"role":"user","content":"after"}})),
        ];
        let texts: Vec<String> = records_to_messages(&recs)
            .iter()
            .map(Message::text_content)
            .collect();
        assert_eq!(texts, ["one", "two", "after"]);
        // A rollback pointing past itself is ignored.
        let bad = make_rollback(
            &Rollback {
                to_bytes: 1,
                to_records: 9,
                token_count: 0,
                checkpoint: "c".into(),
            },
            None,
        );
        let texts: Vec<String> = records_to_messages(&[recs[0].clone(), bad])
            .iter()
            .map(Message::text_content)
            .collect();
        assert_eq!(texts, ["one"]);
        let missing = rec(json!({"type":"rollback","to_bytes":3}));
        assert!(missing.check().unwrap_err().contains("to_records"));
    }

    #[test]
    fn unknown_fields_survive_and_missing_fields_are_caught() {
        let v =
            json!({"type":"user","message":{"role":"user","content":[]},"future_field":{"x":1}});
        let r: SessionRecord = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let r: SessionRecord = serde_json::from_value(json!({"type":"assistant"})).unwrap();
        assert!(r.check().unwrap_err().contains("without a `message`"));
    }
}
