//! The one place that tells a transcript's format: [`classify`] decides it from the first
//! values of a file, or says why the file is not a transcript; every read goes through it
//! ([`detect_format`] and the head of an incremental re-import on the first lines, [`sniff`] on
//! a whole or streamed read, the conversion of bytes in memory on all of them).

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity};
use crate::error::{Error, Result};
use crate::jsonl::{JsonLine, JsonlEvent, JsonlReader};

use super::Transcript;

/// The transcript formats mewmem can import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SourceFormat {
    /// Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`, subagent files).
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// Codex CLI rollout with `{timestamp, type, payload}` lines.
    #[serde(rename = "codex")]
    Codex,
    /// Codex CLI rollout from before the envelope (mid 2025): a bare `{id, timestamp,
    /// instructions, git}` header, bare response items and `{"record_type":"state"}` lines.
    #[serde(rename = "codex-legacy")]
    CodexLegacy,
    /// A mewmem session file (`docs/formats/session.md`), e.g. from another project or from
    /// `mem session export`: copied record for record, nothing converted.
    #[serde(rename = "mewmem")]
    Mewmem,
}

impl SourceFormat {
    /// A Codex rollout, with or without the envelope.
    pub(crate) fn is_codex(self) -> bool {
        matches!(self, SourceFormat::Codex | SourceFormat::CodexLegacy)
    }

    /// The name used in reports and metadata: `claude-code`, `codex`, `codex-legacy` or
    /// `mewmem`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::ClaudeCode => "claude-code",
            SourceFormat::Codex => "codex",
            SourceFormat::CodexLegacy => "codex-legacy",
            SourceFormat::Mewmem => "mewmem",
        }
    }
}

impl fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many non-blank lines [`detect_format`] looks at.
pub(crate) const SNIFF_LINES: usize = 16;

/// Sniffs the first non-blank lines of `path` and names its format.
///
/// Errors: [`Error::NotATranscript`] for an empty file, a file whose first lines are not JSON
/// objects (e.g. one pretty-printed JSON document), or objects of no known shape; [`Error::Io`]
/// when the file cannot be read; those of [`Transcript::open`].
pub fn detect_format(path: &Path) -> Result<SourceFormat> {
    let (values, diagnostics) = Transcript::open(path)?.head()?;
    classify(path, &values, &diagnostics)
}

/// Reads the first lines of `events`, up to the first that tells the format: the format, and
/// the values and diagnostics read. `classify` of the lines so far, once it names a format,
/// names the one it names of the first [`SNIFF_LINES`] (it takes the first line with a known
/// shape, and the lines before the first value are all read). In a real file that is the first
/// line, so the Codex line reader reads all the others.
///
/// Errors: those of [`classify`]; a read error.
pub(super) fn sniff<R: BufRead>(
    events: &mut JsonlReader<R>,
    path: &Path,
) -> Result<(SourceFormat, Vec<JsonLine>, Vec<Diagnostic>)> {
    let mut values = Vec::new();
    let mut diagnostics = Vec::new();
    while values.len() < SNIFF_LINES {
        match events.next() {
            Some(JsonlEvent::Value(v)) => {
                // Only a value of a known shape can end it: `classify` then gives what it gives
                // on all the lines (its refusals do not depend on later lines), and is not run
                // on every line of a file it refuses (its reason can read the whole file).
                let shaped = shape_of(&v.value).is_some();
                values.push(v);
                if shaped {
                    let format = classify(path, &values, &diagnostics)?;
                    return Ok((format, values, diagnostics));
                }
            }
            Some(JsonlEvent::Diagnostic(d)) => {
                if let Some(e) = super::read_error(path, &d) {
                    return Err(e);
                }
                diagnostics.push(d);
            }
            None => break,
        }
    }
    let format = classify(path, &values, &diagnostics)?;
    Ok((format, values, diagnostics))
}

/// The format of one JSON object, when it has a known shape.
fn shape_of(value: &Value) -> Option<SourceFormat> {
    let obj = value.as_object()?;
    let ty = obj.get("type").and_then(Value::as_str);
    if obj.get("payload").is_some_and(Value::is_object) && ty.is_some() {
        return Some(SourceFormat::Codex);
    }
    if obj.contains_key("record_type") {
        return Some(SourceFormat::CodexLegacy);
    }
    let claude_keys = ["sessionId", "parentUuid", "leafUuid", "uuid", "isSidechain"];
    if ty.is_some() && claude_keys.iter().any(|k| obj.contains_key(*k)) {
        return Some(SourceFormat::ClaudeCode);
    }
    // mewmem's own records: types Claude Code never writes, or a user/assistant record whose
    // message has no Claude envelope around it.
    match ty {
        Some("system_prompt" | "tool_result" | "compact_boundary" | "compression") => {
            return Some(SourceFormat::Mewmem);
        }
        Some("user" | "assistant") if obj.get("message").is_some_and(Value::is_object) => {
            return Some(SourceFormat::Mewmem);
        }
        _ => {}
    }
    if ty.is_none() && obj.contains_key("id") && obj.contains_key("timestamp") {
        return Some(SourceFormat::CodexLegacy);
    }
    match ty? {
        "user"
        | "assistant"
        | "system"
        | "summary"
        | "file-history-snapshot"
        | "progress"
        | "queue-operation"
        | "attachment"
        | "permission-mode"
        | "last-prompt"
        | "pr-link"
        | "custom-title"
        | "ai-title"
        | "agent-name" => Some(SourceFormat::ClaudeCode),
        "message" | "reasoning" | "function_call" | "function_call_output"
            if obj.contains_key("role")
                || obj.contains_key("call_id")
                || obj.contains_key("summary") =>
        {
            Some(SourceFormat::CodexLegacy)
        }
        _ => None,
    }
}

/// Decides the format from the first values of a file, or says why it is not a transcript.
pub(super) fn classify(
    path: &Path,
    values: &[JsonLine],
    diagnostics: &[Diagnostic],
) -> Result<SourceFormat> {
    let not = |reason: String| Error::NotATranscript {
        path: path.to_owned(),
        reason,
    };
    let first_value_line = values.first().map(|v| v.line);
    let first_bad = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map(|d| d.line);
    // A file whose first non-blank line is broken or not an object is not JSON Lines at all.
    if let Some(bad) = first_bad
        && first_value_line.is_none_or(|v| bad < v)
    {
        return Err(not(not_jsonl_reason(path, bad)));
    }
    let Some(first) = values.first() else {
        return Err(not(
            "empty file: no JSON lines (0 bytes, or only blank lines)".to_owned(),
        ));
    };
    if !first.value.is_object() {
        return Err(not(not_jsonl_reason(path, first.line)));
    }
    for v in values.iter().take(SNIFF_LINES) {
        if let Some(format) = shape_of(&v.value) {
            return Ok(format);
        }
    }
    let keys: Vec<&str> = first
        .value
        .as_object()
        .map(|o| o.keys().take(6).map(String::as_str).collect())
        .unwrap_or_default();
    Err(not(format!(
        "JSON Lines, but neither a Claude Code transcript nor a Codex rollout \
         (line {} has keys: {})",
        first.line,
        keys.join(", ")
    )))
}

/// Explains a file whose first lines are not JSON objects; recognises a pretty-printed JSON
/// document (and a Gemini CLI session in particular) when the file is small enough to parse.
fn not_jsonl_reason(path: &Path, line: usize) -> String {
    const MAX_DOCUMENT: u64 = 64 << 20;
    let mut what = format!("line {line} is not a JSON object, so this is not JSON Lines");
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_DOCUMENT);
    if small && let Ok(file) = Transcript::open(path).map(Transcript::into_file) {
        let mut text = String::new();
        let mut reader = BufReader::new(file);
        let starts_with_brace = reader
            .fill_buf()
            .is_ok_and(|b| b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{'));
        if starts_with_brace
            && reader.read_to_string(&mut text).is_ok()
            && let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text)
        {
            let keys: Vec<&str> = doc.keys().take(6).map(String::as_str).collect();
            what = if doc.contains_key("projectHash") && doc.contains_key("messages") {
                format!(
                    "the file is one pretty-printed JSON document that looks like a Gemini CLI \
                     session (keys: {}), not JSON Lines",
                    keys.join(", ")
                )
            } else {
                format!(
                    "the file is one pretty-printed JSON document (keys: {}), not JSON Lines",
                    keys.join(", ")
                )
            };
        }
    }
    what
}
