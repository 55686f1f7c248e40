//! Codex CLI rollouts (enveloped and legacy) → sessions. Field mapping:
//! `docs/formats/import.md`.

use std::collections::BTreeSet;
use std::path::Path;

use mem_core::{ContentBlock, Message, Role, ToolResultContent};
use serde_json::{Map, Value};

use super::build::{Builder, Merge};
use super::codex_line::{CodexLine, Entry, Object};
use super::text::{TimeSpan, sanitize_id, shorten_title};
use super::{ImportReport, ImportedSession, SourceFormat, type_of};
use crate::diagnostic::Diagnostic;
use crate::jsonl::{Checked, JsonLine, has_surrogate_escape};
use crate::record::make_compact_boundary;

/// Boundary summary when Codex's `compacted.message` is empty (remote compaction: the summary
/// is the encrypted `compaction` item kept in the boundary's kept messages).
pub(crate) const ENCRYPTED_SUMMARY: &str = "[Codex compacted the conversation here; its summary \
     is encrypted and kept as the `compaction` item among the kept messages]";

/// Line types whose payload the Codex importer reads only for its `type` (it counts them as
/// skipped): read with [`crate::jsonl::JsonlReader::skim_payloads`], their payloads are not
/// built as JSON trees (`event_msg` alone is ~15 % of a rollout's bytes).
pub(crate) const SKIMMED_TYPES: &[&str] = &["event_msg", "turn_context", "world_state"];

struct Importer<'a> {
    path: &'a Path,
    builder: Builder,
    times: TimeSpan,
    report: ImportReport,
    id: Option<String>,
    parent: Option<String>,
    cwd: Option<String>,
    title: Option<String>,
    unknown_warned: BTreeSet<String>,
}

pub(crate) fn import(
    path: &Path,
    format: SourceFormat,
    lines: Vec<JsonLine>,
    diagnostics: Vec<Diagnostic>,
) -> ImportedSession {
    let mut im = Importer {
        path,
        builder: Builder::default(),
        times: TimeSpan::default(),
        report: ImportReport {
            diagnostics,
            ..ImportReport::default()
        },
        id: None,
        parent: None,
        cwd: None,
        title: None,
        unknown_warned: BTreeSet::new(),
    };
    for line in lines {
        im.report.lines += 1;
        let n = line.line;
        if let Some(read) = line.codex {
            match *read {
                CodexLine::Counted {
                    kind,
                    payload_type,
                    timestamp,
                } => {
                    im.see(n, timestamp);
                    im.counted(kind, payload_type.as_deref().unwrap_or(""));
                }
                CodexLine::Item { timestamp, payload } => {
                    let seen = im.see(n, timestamp);
                    im.response_item(n, payload, seen);
                }
                CodexLine::Meta { timestamp, payload } => {
                    let seen = im.see(n, timestamp);
                    im.session_meta(n, payload, seen);
                }
                CodexLine::Compacted {
                    timestamp,
                    payload,
                    history,
                } => {
                    let seen = im.see(n, timestamp);
                    im.compacted(n, payload, history, seen);
                }
            }
            continue;
        }
        let Value::Object(mut obj) = line.value else {
            im.report.diagnostics.push(
                Diagnostic::error(path, n, "a JSON value that is not an object; skipped")
                    .with_kind("not-an-object"),
            );
            continue;
        };
        // Normalise both layouts to (kind, payload, timestamp).
        let (kind, payload, ts) = match obj.remove("payload") {
            Some(Value::Object(p)) => {
                let kind = type_of(&obj).to_owned();
                let ts = obj
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                (kind, p, ts)
            }
            Some(other) => {
                obj.insert("payload".to_owned(), other);
                (type_of(&obj).to_owned(), Map::new(), None)
            }
            None if obj.contains_key("record_type") => {
                let rt = obj
                    .get("record_type")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                im.report.skip(format!("record_type:{rt}"));
                continue;
            }
            None if !obj.contains_key("type") && obj.contains_key("id") => {
                let ts = obj
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                ("session_meta".to_owned(), obj, ts)
            }
            None => {
                let ts = obj
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                ("response_item".to_owned(), obj, ts)
            }
        };
        let seen = im.see(n, ts);
        im.line(n, &kind, payload, seen);
    }
    if let Some(d) = im.times.bad_diagnostic(path) {
        im.report.diagnostics.push(d);
    }
    let (created, last_active) = im.times.bounds();
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let source_id = im.id.clone();
    ImportedSession {
        id: sanitize_id(im.id.as_deref().unwrap_or(stem), "session"),
        title: im.title,
        parent_id: im.parent,
        format,
        source_path: path.to_owned(),
        source_session_id: source_id,
        created,
        last_active,
        cwd: im.cwd,
        records: im.builder.records,
        report: im.report,
    }
}

impl Importer<'_> {
    /// Takes in line `n`'s timestamp: the timestamp to give its records, `None` when it has
    /// none or one that does not parse (noted for the report).
    fn see(&mut self, n: usize, ts: Option<String>) -> Option<String> {
        let seen = self.times.see(ts.as_deref());
        if let Some(raw) = ts
            && seen.is_none()
        {
            self.times.note_bad(n, &Value::String(raw));
        }
        seen
    }

    /// A line of a type that is only counted ([`SKIMMED_TYPES`]), by its payload's type
    /// (`""` when it has none).
    fn counted(&mut self, kind: &str, payload_type: &str) {
        if kind == "event_msg" {
            self.report.skip(format!("event_msg:{payload_type}"));
        } else {
            self.report.skip(kind.to_owned());
        }
    }

    /// A `response_item` line: one item of the conversation.
    fn response_item(&mut self, n: usize, item: impl Object, ts: Option<String>) {
        let mut b = std::mem::take(&mut self.builder);
        self.item(&mut b, n, item, ts, true);
        self.builder = b;
    }

    fn line(&mut self, n: usize, kind: &str, payload: Map<String, Value>, ts: Option<String>) {
        match kind {
            "session_meta" => self.session_meta(n, payload, ts),
            "response_item" => self.response_item(n, payload, ts),
            "compacted" => {
                let mut payload = payload;
                let history = Entry::all_of(payload.shift_remove("replacement_history"));
                self.compacted(n, payload, history, ts);
            }
            "event_msg" | "turn_context" | "world_state" => {
                self.counted(kind, type_of(&payload));
            }
            "" => {
                self.report.skip("no type");
                self.report.diagnostics.push(Diagnostic::warning(
                    self.path,
                    n,
                    "an object without a `type`; skipped",
                ));
            }
            other => self.report.skip(other.to_owned()),
        }
    }

    /// A `session_meta` line: the rollout's id, working directory, parent and instructions.
    /// Reads only the payload's [`META_FIELDS`](super::codex_line::META_FIELDS).
    fn session_meta<O: Object>(&mut self, n: usize, mut p: O, ts: Option<String>) {
        if self.id.is_some() {
            // Forked and subagent rollouts repeat their parent's session_meta: not ours.
            self.report.skip("session_meta (repeated)");
            return;
        }
        let s = |p: &O, k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
        self.id = s(&p, "id");
        self.cwd = s(&p, "cwd");
        self.times.see(p.get("timestamp").and_then(Value::as_str));
        let source = p.get("source");
        let spawn_parent = source
            .and_then(|v| v.pointer("/subagent/thread_spawn/parent_thread_id"))
            .and_then(Value::as_str);
        let is_subagent = source.and_then(|v| v.get("subagent")).is_some();
        let parent = spawn_parent.map(str::to_owned).or_else(|| {
            if is_subagent {
                s(&p, "parent_thread_id")
            } else {
                None
            }
        });
        self.parent = parent.map(|id| sanitize_id(&id, "session"));
        let instructions = match p.take("base_instructions") {
            Some(Value::Object(mut o)) => match o.remove("text") {
                Some(Value::String(t)) => Some(t),
                _ => None,
            },
            Some(Value::String(t)) => Some(t),
            _ => None,
        }
        .or_else(|| match p.take("instructions") {
            Some(Value::String(t)) => Some(t),
            _ => None,
        });
        if let Some(text) = instructions.filter(|t| !t.trim().is_empty()) {
            let m = Message::text(Role::System, text)
                .with_metadata("source_line", Value::from(n))
                .with_metadata("codex_origin", Value::from("session_meta.instructions"));
            self.builder.push(m, ts, Merge::No);
        }
    }

    /// A compaction: `p` is its payload without `replacement_history`, whose entries are
    /// `history`.
    fn compacted(&mut self, n: usize, mut p: impl Object, history: Vec<Entry>, ts: Option<String>) {
        let summary = match p.take("message") {
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            _ => ENCRYPTED_SUMMARY.to_owned(),
        };
        let mut kept = Builder::default();
        for entry in history {
            match entry {
                Entry::Map(o) => self.item(&mut kept, n, o, None, false),
                Entry::Fields(o) => self.item(&mut kept, n, o, None, false),
                Entry::Other(other) => kept.push(
                    Message::new(Role::User, vec![ContentBlock::Other(other)]),
                    None,
                    Merge::No,
                ),
            }
        }
        let kept = super::build::cap_kept(
            kept.into_messages(),
            self.path,
            n,
            &mut self.report.diagnostics,
        );
        let mut record = make_compact_boundary(summary, kept, ts);
        record
            .extra
            .insert("source".to_owned(), Value::from("codex"));
        record
            .extra
            .insert("source_line".to_owned(), Value::from(n));
        let p = p.into_map();
        if !p.is_empty() {
            record
                .extra
                .insert("codex_compacted".to_owned(), Value::Object(p));
        }
        self.builder.push_record(record);
    }

    /// Converts one response item into `b`. `count` is false inside a replacement history
    /// (its items are not lines of the file).
    fn item(
        &mut self,
        b: &mut Builder,
        n: usize,
        mut item: impl Object,
        ts: Option<String>,
        count: bool,
    ) {
        let ty = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut meta = Map::new();
        meta.insert("source_line".to_owned(), Value::from(n));
        if let Some(id) = item.get("id").filter(|v| !v.is_null()) {
            meta.insert("codex_item_id".to_owned(), id.clone());
        }
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match ty.as_str() {
            "message" => {
                let role_name = item
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let role = match role_name.as_str() {
                    "assistant" => Role::Assistant,
                    "user" => Role::User,
                    _ => Role::System,
                };
                if role == Role::System {
                    meta.insert("original_role".to_owned(), Value::from(role_name.clone()));
                }
                let content = match item.take("content") {
                    Some(Value::Array(items)) => items.into_iter().map(content_item).collect(),
                    Some(Value::String(s)) => vec![ContentBlock::text(s)],
                    _ => Vec::new(),
                };
                let rest = leftovers(item, &["type", "role", "id"]);
                if !rest.is_empty() {
                    meta.insert("codex_fields".to_owned(), Value::Object(rest));
                }
                let mut m = Message {
                    role,
                    content,
                    metadata: meta,
                };
                // AGENTS.md, the environment, a compaction summary: kept, marked as the
                // client's words.
                mem_core::speech::mark_injected(&mut m);
                if count && role == Role::User && self.title.is_none() {
                    self.title = mem_core::speech::user_speech_of(&m)
                        .as_deref()
                        .and_then(shorten_title);
                }
                let merge = if role == Role::Assistant {
                    Merge::Adjacent
                } else {
                    Merge::No
                };
                b.push(m, ts, merge);
            }
            "reasoning" => {
                let texts = |v: Option<&Value>| -> Vec<String> {
                    v.and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.get("text").and_then(Value::as_str))
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let mut thinking = texts(item.get("summary")).join("\n\n");
                if thinking.is_empty() {
                    thinking = texts(item.get("content")).join("\n\n");
                }
                let mut extra = leftovers(item, &["type", "id"]);
                extra.retain(|_, v| !v.is_null());
                extra.insert("codex_type".to_owned(), Value::from("reasoning"));
                let block = ContentBlock::Thinking {
                    thinking,
                    signature: None,
                    extra,
                };
                b.push(single(Role::Assistant, block, meta), ts, Merge::Adjacent);
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call"
                if call_id.is_some() || item.contains_key("id") =>
            {
                let id = call_id
                    .or_else(|| item.get("id").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| ty.trim_end_matches("_call").to_owned());
                let input = match ty.as_str() {
                    "function_call" => parse_arguments(item.take("arguments")),
                    "custom_tool_call" => item.take("input").unwrap_or(Value::Null),
                    "local_shell_call" => item.take("action").unwrap_or(Value::Null),
                    _ => parse_arguments(item.take("arguments")),
                };
                let mut extra = leftovers(item, &["type", "call_id", "name", "id"]);
                if ty != "function_call" {
                    extra.insert("codex_type".to_owned(), Value::from(ty.clone()));
                }
                let block = ContentBlock::ToolUse {
                    id,
                    name,
                    input,
                    extra,
                };
                b.push(single(Role::Assistant, block, meta), ts, Merge::Adjacent);
            }
            "function_call_output"
            | "custom_tool_call_output"
            | "local_shell_call_output"
            | "tool_search_output"
                if call_id.is_some() =>
            {
                let output = item.take("output").or_else(|| item.take("tools"));
                let (content, is_error) = tool_output(output);
                let mut extra = leftovers(item, &["type", "call_id", "id"]);
                if ty != "function_call_output" {
                    extra.insert("codex_type".to_owned(), Value::from(ty.clone()));
                }
                let block = ContentBlock::ToolResult {
                    tool_use_id: call_id.unwrap_or_default(),
                    content,
                    is_error,
                    extra,
                };
                b.push(single(Role::User, block, meta), ts, Merge::No);
            }
            "web_search_call"
            | "image_generation_call"
            | "tool_search_call"
            | "function_call"
            | "custom_tool_call"
            | "local_shell_call" => {
                // Server-side tools (no call_id, no separate output): kept verbatim.
                b.push(
                    single(
                        Role::Assistant,
                        ContentBlock::Other(Value::Object(item.into_map())),
                        meta,
                    ),
                    ts,
                    Merge::Adjacent,
                );
            }
            "compaction" | "compaction_summary" => {
                b.push(
                    single(
                        Role::User,
                        ContentBlock::Other(Value::Object(item.into_map())),
                        meta,
                    ),
                    ts,
                    Merge::No,
                );
            }
            "agent_message" => {
                let content = match item.take("content") {
                    Some(Value::Array(items)) => items.into_iter().map(content_item).collect(),
                    Some(Value::String(s)) => vec![ContentBlock::text(s)],
                    _ => Vec::new(),
                };
                let rest = leftovers(item, &["type", "id"]);
                meta.insert("codex_type".to_owned(), Value::from("agent_message"));
                if !rest.is_empty() {
                    meta.insert("codex_fields".to_owned(), Value::Object(rest));
                }
                if !content.is_empty() {
                    b.push(
                        Message {
                            role: Role::User,
                            content,
                            metadata: meta,
                        },
                        ts,
                        Merge::No,
                    );
                } else if count {
                    self.report.skip("response_item:agent_message (empty)");
                }
            }
            "ghost_snapshot" => {
                if count {
                    self.report.skip("response_item:ghost_snapshot");
                }
            }
            other => {
                if count {
                    self.report.skip(format!("response_item:{other}"));
                }
                if self.unknown_warned.insert(other.to_owned()) {
                    self.report.diagnostics.push(Diagnostic::warning(
                        self.path,
                        n,
                        format!("unknown Codex item type `{other}`; skipped (further ones counted, not reported)"),
                    ));
                }
            }
        }
    }
}

/// The fields of `item` other than `drop`, in order.
fn leftovers(mut item: impl Object, drop: &[&str]) -> Map<String, Value> {
    for k in drop {
        item.take(k);
    }
    item.into_map()
}

/// `function_call.arguments`: a JSON string parsed into an object; any other string is kept
/// as a string; a missing value is `null`.
pub(crate) fn parse_arguments(arguments: Option<Value>) -> Value {
    match arguments {
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(&raw) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(raw),
        },
        Some(other) => other,
        None => Value::Null,
    }
}

/// One Codex content item (`input_text`, `output_text`, `input_image`...) as a block.
fn content_item(v: Value) -> ContentBlock {
    let Value::Object(mut o) = v else {
        return ContentBlock::Other(v);
    };
    match type_of(&o) {
        "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text"
            if o.get("text").is_some_and(Value::is_string) =>
        {
            let text = match o.shift_remove("text") {
                Some(Value::String(s)) => s,
                _ => String::new(),
            };
            let mut extra = leftovers(o, &["type"]);
            extra.retain(|k, v| !(k == "annotations" && v.as_array().is_some_and(Vec::is_empty)));
            ContentBlock::Text { text, extra }
        }
        "input_image" if o.get("image_url").is_some_and(Value::is_string) => {
            let url = match o.shift_remove("image_url") {
                Some(Value::String(s)) => s,
                _ => String::new(),
            };
            let source = image_source(&url);
            let mut extra = leftovers(o, &["type"]);
            extra.retain(|_, v| !v.is_null());
            ContentBlock::Image { source, extra }
        }
        _ => ContentBlock::Other(Value::Object(o)),
    }
}

/// `data:<media>;base64,<data>` → an Anthropic base64 source; any other URL → a URL source.
fn image_source(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((media, data)) = rest.split_once(";base64,")
    {
        return serde_json::json!({"type": "base64", "media_type": media, "data": data});
    }
    serde_json::json!({"type": "url", "url": url})
}

/// A tool output as tool_result content, and whether it reports a failure.
///
/// `is_error` is `Some(true)` when the output says the command failed: a JSON string whose
/// `metadata.exit_code` is not 0, a text starting `Exit code: N` with N not 0, or an object
/// with `success: false`. Otherwise `None` (Codex records no error flag). Strings are kept
/// verbatim; arrays of content items become blocks.
pub(crate) fn tool_output(output: Option<Value>) -> (ToolResultContent, Option<bool>) {
    match output {
        Some(Value::String(s)) => {
            let failed = exit_code_of(&s).is_some_and(|c| c != 0);
            (ToolResultContent::Text(s), failed.then_some(true))
        }
        Some(Value::Array(items)) => (
            ToolResultContent::Blocks(items.into_iter().map(content_item).collect()),
            None,
        ),
        Some(Value::Object(o)) => {
            let failed = o.get("success") == Some(&Value::Bool(false));
            let content = match o.get("content") {
                Some(Value::String(s)) => ToolResultContent::Text(s.clone()),
                Some(Value::Array(items)) => {
                    ToolResultContent::Blocks(items.iter().cloned().map(content_item).collect())
                }
                _ if o.contains_key("type") => {
                    ToolResultContent::Blocks(vec![content_item(Value::Object(o))])
                }
                _ => ToolResultContent::Text(Value::Object(o).to_string()),
            };
            (content, failed.then_some(true))
        }
        Some(Value::Null) | None => (ToolResultContent::Text(String::new()), None),
        Some(other) => (ToolResultContent::Text(other.to_string()), None),
    }
}

/// The exit code a Codex shell output reports, in either of its two shapes.
fn exit_code_of(s: &str) -> Option<i64> {
    let t = s.trim_start();
    if t.starts_with('{') {
        // A `\u` surrogate escape is left to the `Value` parse, the reference for what is
        // valid JSON here; everything else is read by `IntAt` with the same result.
        if has_surrogate_escape(t) {
            if let Ok(v) = serde_json::from_str::<Value>(t) {
                return v.pointer("/metadata/exit_code").and_then(Value::as_i64);
            }
        } else {
            return IntAt(&["metadata", "exit_code"]).read(t);
        }
    }
    let rest = t.strip_prefix("Exit code: ")?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// The integer at a path of object keys in a JSON value, read without building the value:
/// what `Value::pointer` then `Value::as_i64` give on the whole parse (a repeated key: the last
/// one counts; a key path through anything but objects, or a number that is not an `i64`:
/// `None`). Everything else is read by [`Checked`], so the texts refused are those the whole
/// parse refuses, except a `\u` surrogate escape (left to the whole parse by the caller).
///
/// Used on JSON shell outputs (`{"output":"...","metadata":{"exit_code":N}}`, a fifth of a
/// Codex rollout's bytes): their output text is checked, not copied into a tree.
#[derive(Clone, Copy)]
struct IntAt(&'static [&'static str]);

impl IntAt {
    /// The integer at this path in the JSON text `t`; `None` also when `t` is not JSON.
    fn read(self, t: &str) -> Option<i64> {
        let mut de = serde_json::Deserializer::from_str(t);
        let found = serde::de::DeserializeSeed::deserialize(self, &mut de).ok()?;
        de.end().ok()?;
        found
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for IntAt {
    type Value = Option<i64>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for IntAt {
    type Value = Option<i64>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Option<i64>, E> {
        Ok(self.0.is_empty().then_some(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Option<i64>, E> {
        Ok(i64::try_from(v).ok().filter(|_| self.0.is_empty()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Option<i64>, A::Error> {
        while a.next_element::<Checked>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Option<i64>, A::Error> {
        let mut found = None;
        while let Some(key) = a.next_key::<String>()? {
            match self.0.split_first() {
                Some((first, rest)) if key == *first => found = a.next_value_seed(IntAt(rest))?,
                _ => {
                    a.next_value::<Checked>()?;
                }
            }
        }
        Ok(found)
    }
}

/// A message of one block.
fn single(role: Role, block: ContentBlock, metadata: Map<String, Value>) -> Message {
    Message {
        role,
        content: vec![block],
        metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordType;
    use serde_json::json;

    fn run(lines: &[Value]) -> ImportedSession {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(i, v)| JsonLine {
                line: i + 1,
                offset: 0,
                value: v.clone(),
                codex: None,
            })
            .collect();
        let mut s = import(Path::new("r.jsonl"), SourceFormat::Codex, lines, Vec::new());
        super::super::build::finish(&mut s);
        s
    }
    fn env(ty: &str, payload: Value) -> Value {
        json!({"timestamp":"2025-11-17T21:30:28.608Z","type":ty,"payload":payload})
    }

    #[test]
    fn function_calls_map_to_tool_use_and_results() {
        let s = run(&[
            env(
                "session_meta",
                json!({"id":"abc","cwd":"/w","timestamp":"2025-11-17T21:30:00Z","instructions":"be brief"}),
            ),
            env(
                "response_item",
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":"run ls"}]}),
            ),
            env(
                "event_msg",
                json!({"type":"user_message","message":"run ls"}),
            ),
            env(
                "response_item",
                json!({"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**"}],"content":null,"encrypted_content":"gAAA"}),
            ),
            env(
                "response_item",
                json!({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}),
            ),
            env(
                "response_item",
                json!({"type":"function_call","name":"shell","arguments":"not json","call_id":"c2"}),
            ),
            env(
                "response_item",
                json!({"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a\\n\",\"metadata\":{\"exit_code\":0}}"}),
            ),
            env(
                "response_item",
                json!({"type":"function_call_output","call_id":"c2","output":"Exit code: 2\nWall time: 0 s\nOutput:\nboom"}),
            ),
            env(
                "response_item",
                json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}),
            ),
        ]);
        assert_eq!(s.id, "abc");
        assert_eq!(s.cwd.as_deref(), Some("/w"));
        assert_eq!(s.title.as_deref(), Some("run ls"));
        assert_eq!(s.created.as_deref(), Some("2025-11-17T21:30:00Z"));
        let types: Vec<RecordType> = s.records.iter().map(|r| r.record_type).collect();
        assert_eq!(
            types,
            [
                RecordType::SystemPrompt,
                RecordType::User,
                RecordType::Assistant,
                RecordType::ToolResult,
                RecordType::Assistant
            ]
        );
        let asst = s.records[2]
            .message
            .as_ref()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        assert_eq!(asst.len(), 3);
        assert!(
            matches!(&asst[0], ContentBlock::Thinking { thinking, extra, .. }
            if thinking == "**Plan**" && extra.get("encrypted_content") == Some(&json!("gAAA")))
        );
        assert!(
            matches!(&asst[1], ContentBlock::ToolUse { id, input, .. } if id == "c1" && input == &json!({"command":["ls"]}))
        );
        assert!(
            matches!(&asst[2], ContentBlock::ToolUse { input, .. } if input == &json!("not json"))
        );
        let results = s.records[3]
            .message
            .as_ref()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        assert!(!results[0].is_error());
        assert!(results[1].is_error());
        assert_eq!(s.report.tool_pairs, 2);
        assert_eq!(s.report.skipped.get("event_msg:user_message"), Some(&1));
    }

    #[test]
    fn compacted_becomes_a_boundary_with_kept_history() {
        let s = run(&[
            env("session_meta", json!({"id":"abc"})),
            env(
                "response_item",
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}),
            ),
            env(
                "compacted",
                json!({"message":"","replacement_history":[
                {"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
                {"type":"compaction","encrypted_content":"xyz"}]}),
            ),
        ]);
        assert_eq!(s.report.boundaries, 1);
        let b = &s.records[1];
        assert_eq!(b.summary.as_deref(), Some(ENCRYPTED_SUMMARY));
        let kept = b.keep_messages.clone().unwrap_or_default();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[1].content[0].kind(), "compaction");
    }

    #[test]
    fn subagent_rollout_links_its_parent() {
        let s = run(&[
            env(
                "session_meta",
                json!({"id":"child","source":{"subagent":{"thread_spawn":{"parent_thread_id":"dad","depth":1}}}}),
            ),
            env("session_meta", json!({"id":"dad"})),
        ]);
        assert_eq!(s.id, "child");
        assert_eq!(s.parent_id.as_deref(), Some("dad"));
        assert_eq!(s.report.skipped.get("session_meta (repeated)"), Some(&1));
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code_of("Exit code: 0\nx"), Some(0));
        assert_eq!(exit_code_of("Exit code: 127"), Some(127));
        assert_eq!(
            exit_code_of("{\"output\":\"\",\"metadata\":{\"exit_code\":1}}"),
            Some(1)
        );
        assert_eq!(exit_code_of("Plan updated"), None);
    }

    /// `IntAt` gives what the whole parse gives, on the shapes where the two could part.
    #[test]
    fn exit_code_reads_as_the_whole_parse_does() {
        let reference = |t: &str| {
            serde_json::from_str::<Value>(t)
                .ok()
                .and_then(|v| v.pointer("/metadata/exit_code").and_then(Value::as_i64))
        };
        let deep = format!(
            "{{\"a\":{}1{},\"metadata\":{{\"exit_code\":3}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        let cases = [
            r#"{"output":"a\nb","metadata":{"exit_code":0,"duration_seconds":0.1}}"#,
            r#"{"metadata":{"exit_code":-1}}"#,
            r#"{"metadata":{"exit_code":1},"metadata":{"exit_code":2}}"#,
            r#"{"metadata":{"exit_code":1,"exit_code":"x"}}"#,
            r#"{"metadata":{"exit_code":1.0}}"#,
            r#"{"metadata":{"exit_code":18446744073709551615}}"#,
            r#"{"metadata":{"exit_code":9223372036854775807}}"#,
            r#"{"metadata":{"exit_code":[1]}}"#,
            r#"{"metadata":[{"exit_code":1}]}"#,
            r#"{"metadata":"exit_code"}"#,
            r#"{"meta\u0064ata":{"exit_\u0063ode":4}}"#,
            r#"{"output":1e400,"metadata":{"exit_code":5}}"#,
            r#"{"output":"x","metadata":{"exit_code":6}} trailing"#,
            r#"{"output":"x","metadata":{"exit_code":7}}   "#,
            r#"{"output":"bad \x escape","metadata":{"exit_code":8}}"#,
            r#"{"metadata":{"exit_code":9}"#,
            r#"{}"#,
            &deep,
        ];
        for t in cases {
            assert_eq!(
                IntAt(&["metadata", "exit_code"]).read(t),
                reference(t),
                "{t}"
            );
            assert_eq!(exit_code_of(t), reference(t), "{t}");
        }
        let lone = r#"{"output":"\ud800","metadata":{"exit_code":1}}"#;
        assert_eq!(exit_code_of(lone), reference(lone));
    }
}
