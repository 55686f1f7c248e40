//! Building a record list from converted messages: merging streamed pieces of one model turn,
//! moving late tool results next to their calls, and counting the report.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use mem_core::{ContentBlock, Message, Role};
use serde_json::{Map, Value};

use super::ImportedSession;
use crate::diagnostic::Diagnostic;
use crate::record::{RecordType, SessionRecord};

/// When an assistant message may be merged into the previous assistant record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merge<'a> {
    /// Never: a new message.
    No,
    /// When the previous record is that assistant message (Codex items emitted back to back).
    Adjacent,
    /// When the last assistant message has this API message id and only tool-result records
    /// follow it (Claude Code writes one line per content block of a streamed message, with the
    /// results of parallel calls between them).
    SameId(&'a str),
}

/// Appends converted messages as records, merging where the source split one message.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    /// The records so far.
    pub records: Vec<SessionRecord>,
    /// Index and merge id of the last assistant record.
    last_assistant: Option<(usize, Option<String>)>,
}

impl Builder {
    /// Adds a message record (or merges it into the previous one, see [`Merge`]).
    /// Tool-result-only user messages merge into a tool-result record right before them.
    pub(crate) fn push(&mut self, message: Message, timestamp: Option<String>, merge: Merge<'_>) {
        match message.role {
            Role::Assistant => {
                if let Some(idx) = self.merge_target(merge)
                    && let Some(prev) = self.records[idx].message.as_mut()
                {
                    extend(prev, message);
                    return;
                }
                let id = match merge {
                    Merge::SameId(id) => Some(id.to_owned()),
                    _ => None,
                };
                self.records
                    .push(SessionRecord::message(message, timestamp));
                self.last_assistant = Some((self.records.len() - 1, id));
            }
            Role::User if message.is_tool_result_only() => {
                if let Some(last) = self.records.last_mut()
                    && last.record_type == RecordType::ToolResult
                    && let Some(prev) = last.message.as_mut()
                {
                    extend(prev, message);
                    return;
                }
                self.records
                    .push(SessionRecord::message(message, timestamp));
            }
            Role::User | Role::System => {
                self.records
                    .push(SessionRecord::message(message, timestamp));
            }
        }
    }

    fn merge_target(&self, merge: Merge<'_>) -> Option<usize> {
        let (idx, id) = self.last_assistant.as_ref()?;
        let idx = *idx;
        match merge {
            Merge::No => None,
            Merge::Adjacent => (idx + 1 == self.records.len()).then_some(idx),
            Merge::SameId(want) => {
                let after_ok = self.records[idx + 1..]
                    .iter()
                    .all(|r| r.record_type == RecordType::ToolResult);
                (id.as_deref() == Some(want) && after_ok).then_some(idx)
            }
        }
    }

    /// Adds a boundary (or any non-message record); nothing merges across it.
    pub(crate) fn push_record(&mut self, record: SessionRecord) {
        self.records.push(record);
        self.last_assistant = None;
    }

    /// The messages of the message records, in order (for a boundary's kept tail).
    pub(crate) fn into_messages(self) -> Vec<Message> {
        self.records.into_iter().filter_map(|r| r.message).collect()
    }
}

/// The most an imported boundary keeps inline, in bytes of JSON (1 MiB): a source's kept tail
/// (Claude's `preservedSegment`, Codex's `replacement_history`) beyond it is cut to its newest
/// messages that fit (at least one), with a warning. mewmem's own boundaries are bounded by the
/// seed's `KEEP_MAX_TOKENS` (40,000 tokens, `mem-compact`); 1 MiB is far above what real sources
/// keep and bounds what a damaged or trimmed one can make a boundary hold.
pub const IMPORTED_KEEP_MAX_BYTES: usize = 1 << 20;

/// Cuts `kept` to its newest messages within [`IMPORTED_KEEP_MAX_BYTES`] (see there), pushing a
/// warning at `path:line` when anything was cut.
pub(crate) fn cap_kept(
    mut kept: Vec<Message>,
    path: &Path,
    line: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Message> {
    let mut total = 0usize;
    let mut start = kept.len();
    while start > 0 {
        let size = serde_json::to_vec(&kept[start - 1]).map_or(0, |v| v.len());
        if total + size > IMPORTED_KEEP_MAX_BYTES && start < kept.len() {
            break;
        }
        total += size;
        start -= 1;
    }
    if start > 0 {
        diagnostics.push(Diagnostic::warning(
            path,
            line,
            format!(
                "the compaction keeps {} messages verbatim, more than {} KiB; kept the newest {} \
                 ({} KiB), the {start} older ones are left to the summary",
                kept.len(),
                IMPORTED_KEEP_MAX_BYTES >> 10,
                kept.len() - start,
                total >> 10
            ),
        ));
        kept.drain(..start);
    }
    kept
}

/// Moves `from`'s blocks into `into` and merges the metadata: the first piece's `uuid` /
/// `codex_item_id` stay, later ones are listed in `merged_uuids` / `merged_codex_item_ids`;
/// `usage` and `stop_reason` take the last piece's value; other keys keep the first value.
fn extend(into: &mut Message, from: Message) {
    into.content.extend(from.content);
    for (key, value) in from.metadata {
        match key.as_str() {
            "uuid" | "codex_item_id" | "source_line" => {
                let list = into
                    .metadata
                    .entry(format!("merged_{key}s"))
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = list {
                    items.push(value);
                }
            }
            "usage" | "stop_reason" => {
                into.metadata.insert(key, value);
            }
            _ => {
                into.metadata.entry(key).or_insert(value);
            }
        }
    }
}

/// Moves each tool_result that arrives after a *later* assistant message back next to its
/// tool_use (into the tool-result record right after the call, or a new one), so the chain
/// validates. Results are never moved across a compact boundary. Each move is reported.
pub(crate) fn relocate_late_results(
    records: Vec<SessionRecord>,
    path: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SessionRecord> {
    let mut use_at: HashMap<String, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if r.record_type == RecordType::Assistant
            && let Some(m) = &r.message
        {
            for id in m.tool_use_ids() {
                use_at.entry(id.to_owned()).or_insert(i);
            }
        }
    }
    // Which blocks move where: (record index, block index) → assistant index.
    let mut moving: HashMap<(usize, usize), usize> = HashMap::new();
    let mut last_assistant: Option<usize> = None;
    let mut last_boundary: Option<usize> = None;
    for (i, r) in records.iter().enumerate() {
        match r.record_type {
            RecordType::Assistant => last_assistant = Some(i),
            RecordType::CompactBoundary | RecordType::Compression => last_boundary = Some(i),
            _ => {}
        }
        if r.record_type == RecordType::Assistant {
            continue;
        }
        let Some(m) = &r.message else { continue };
        for (j, block) in m.content.iter().enumerate() {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block
                && let Some(&a) = use_at.get(tool_use_id)
                && a < i
                && last_assistant.is_some_and(|l| l > a)
                && last_boundary.is_none_or(|b| b < a)
            {
                moving.insert((i, j), a);
                let line = m
                    .metadata
                    .get("source_line")
                    .and_then(Value::as_u64)
                    .map_or(0, |l| usize::try_from(l).unwrap_or(0));
                diagnostics.push(Diagnostic::warning(
                    path,
                    line,
                    format!(
                        "the result of tool call `{tool_use_id}` came after a later model turn; \
                         moved next to its call"
                    ),
                ));
            }
        }
    }
    if moving.is_empty() {
        return records;
    }
    // Take the moving blocks out, grouped by destination, in source order.
    let mut parked: HashMap<usize, Vec<ContentBlock>> = HashMap::new();
    let mut stripped: Vec<Option<SessionRecord>> = Vec::with_capacity(records.len());
    for (i, mut r) in records.into_iter().enumerate() {
        if let Some(m) = r.message.as_mut()
            && (0..m.content.len()).any(|j| moving.contains_key(&(i, j)))
        {
            let blocks = std::mem::take(&mut m.content);
            for (j, block) in blocks.into_iter().enumerate() {
                match moving.get(&(i, j)) {
                    Some(&a) => parked.entry(a).or_default().push(block),
                    None => m.content.push(block),
                }
            }
            if m.content.is_empty() {
                stripped.push(None);
                continue;
            }
            r.record_type = RecordType::for_message(m);
        }
        stripped.push(Some(r));
    }
    let mut out: Vec<SessionRecord> = Vec::with_capacity(stripped.len() + parked.len());
    let mut pending: Vec<ContentBlock> = Vec::new();
    for (i, r) in stripped.into_iter().enumerate() {
        let Some(r) = r else { continue };
        if !pending.is_empty() && r.record_type != RecordType::ToolResult {
            flush_parked(&mut out, &mut pending);
        }
        let is_assistant = r.record_type == RecordType::Assistant;
        out.push(r);
        if is_assistant && let Some(blocks) = parked.remove(&i) {
            pending = blocks;
        }
    }
    flush_parked(&mut out, &mut pending);
    out
}

fn flush_parked(out: &mut Vec<SessionRecord>, pending: &mut Vec<ContentBlock>) {
    if pending.is_empty() {
        return;
    }
    let blocks = std::mem::take(pending);
    if let Some(last) = out.last_mut()
        && last.record_type == RecordType::ToolResult
        && let Some(m) = last.message.as_mut()
    {
        m.content.extend(blocks);
        return;
    }
    let mut metadata = Map::new();
    metadata.insert("relocated".to_owned(), Value::Bool(true));
    let message = Message {
        role: Role::User,
        content: blocks,
        metadata,
    };
    out.push(SessionRecord::message(message, None));
}

/// Final pass over a session: relocate late results and fill the report's counts.
pub(crate) fn finish(session: &mut ImportedSession) {
    let records = std::mem::take(&mut session.records);
    session.records = relocate_late_results(
        records,
        &session.source_path,
        &mut session.report.diagnostics,
    );
    report_orphan_results(session);
    count(session);
}

/// A warning for each tool result whose tool call is nowhere in the session (the result is
/// kept in the records; a resume leaves it out of the replay).
fn report_orphan_results(session: &mut ImportedSession) {
    let messages = || {
        session
            .records
            .iter()
            .flat_map(|r| r.message.iter().chain(r.keep_messages.iter().flatten()))
    };
    let calls: HashSet<&str> = messages().flat_map(|m| m.tool_use_ids()).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut orphans = Vec::new();
    for id in messages().flat_map(|m| m.tool_result_ids()) {
        if !calls.contains(id) && seen.insert(id) {
            orphans.push(id.to_owned());
        }
    }
    for id in orphans {
        session.report.diagnostics.push(Diagnostic::warning(
            &session.source_path,
            0,
            format!(
                "tool result for `{id}` has no tool call in the transcript; kept, but a resume \
                 leaves it out"
            ),
        ));
    }
}

/// Fills the report's counts from the records: message records (system prompts excluded, as in
/// the session's meta), boundaries, and tool_use blocks whose result is present.
pub(crate) fn count(session: &mut ImportedSession) {
    let mut results: HashSet<&str> = HashSet::new();
    let mut messages = 0;
    let mut boundaries = 0;
    for r in &session.records {
        if let Some(m) = &r.message {
            if r.record_type != RecordType::SystemPrompt {
                messages += 1;
            }
            results.extend(m.tool_result_ids());
        }
        if let Some(kept) = &r.keep_messages {
            for m in kept {
                results.extend(m.tool_result_ids());
            }
        }
        if r.record_type == RecordType::CompactBoundary {
            boundaries += 1;
        }
    }
    let mut pairs = 0;
    for r in &session.records {
        let kept = r.keep_messages.iter().flatten();
        for m in r.message.iter().chain(kept) {
            pairs += m.tool_use_ids().filter(|id| results.contains(id)).count();
        }
    }
    session.report.messages = messages;
    session.report.boundaries = boundaries;
    session.report.tool_pairs = pairs;
    session.report.damaged = crate::diagnostic::tally_damaged(&session.report.diagnostics)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asst(blocks: Vec<ContentBlock>, uuid: &str) -> Message {
        Message::new(Role::Assistant, blocks).with_metadata("uuid", json!(uuid))
    }
    fn result(id: &str) -> Message {
        Message::new(Role::User, vec![ContentBlock::tool_result(id, "ok", false)])
    }
    fn shape(records: &[SessionRecord]) -> Vec<String> {
        records
            .iter()
            .map(|r| {
                let m = r.message.as_ref().map_or_else(String::new, |m| {
                    m.content
                        .iter()
                        .map(|b| match b {
                            ContentBlock::ToolUse { id, .. } => format!("use:{id}"),
                            ContentBlock::ToolResult { tool_use_id, .. } => {
                                format!("res:{tool_use_id}")
                            }
                            other => other.kind().to_owned(),
                        })
                        .collect::<Vec<_>>()
                        .join(",")
                });
                format!("{}[{m}]", r.record_type.as_str())
            })
            .collect()
    }

    #[test]
    fn same_id_merges_across_interleaved_results() {
        let mut b = Builder::default();
        b.push(Message::user("go"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::text("t")], "u1"),
            None,
            Merge::SameId("m1"),
        );
        b.push(
            asst(vec![ContentBlock::tool_use("a", "R", json!({}))], "u2"),
            None,
            Merge::SameId("m1"),
        );
        b.push(result("a"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("b", "R", json!({}))], "u3"),
            None,
            Merge::SameId("m1"),
        );
        b.push(result("b"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::text("next")], "u4"),
            None,
            Merge::SameId("m2"),
        );
        assert_eq!(
            shape(&b.records),
            [
                "user[text]",
                "assistant[text,use:a,use:b]",
                "tool_result[res:a,res:b]",
                "assistant[text]"
            ]
        );
        let meta = &b.records[1]
            .message
            .as_ref()
            .map(|m| m.metadata.clone())
            .unwrap_or_default();
        assert_eq!(meta.get("uuid"), Some(&json!("u1")));
        assert_eq!(meta.get("merged_uuids"), Some(&json!(["u2", "u3"])));
    }

    #[test]
    fn adjacent_merges_only_back_to_back() {
        let mut b = Builder::default();
        b.push(
            asst(vec![ContentBlock::tool_use("a", "R", json!({}))], "x"),
            None,
            Merge::Adjacent,
        );
        b.push(
            asst(vec![ContentBlock::tool_use("b", "R", json!({}))], "y"),
            None,
            Merge::Adjacent,
        );
        b.push(result("a"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("c", "R", json!({}))], "z"),
            None,
            Merge::Adjacent,
        );
        assert_eq!(
            shape(&b.records),
            [
                "assistant[use:a,use:b]",
                "tool_result[res:a]",
                "assistant[use:c]"
            ]
        );
    }

    #[test]
    fn late_results_move_next_to_their_call() {
        let mut b = Builder::default();
        b.push(
            asst(
                vec![
                    ContentBlock::tool_use("a", "R", json!({})),
                    ContentBlock::tool_use("b", "R", json!({})),
                ],
                "1",
            ),
            None,
            Merge::No,
        );
        b.push(result("b"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("c", "R", json!({}))], "2"),
            None,
            Merge::No,
        );
        b.push(
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("c", "ok", false),
                    ContentBlock::tool_result("a", "late", false),
                ],
            ),
            None,
            Merge::No,
        );
        let mut diags = Vec::new();
        let out = relocate_late_results(b.records, Path::new("f"), &mut diags);
        assert_eq!(
            shape(&out),
            [
                "assistant[use:a,use:b]",
                "tool_result[res:b,res:a]",
                "assistant[use:c]",
                "tool_result[res:c]"
            ]
        );
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("`a`"), "{}", diags[0]);
    }
}
