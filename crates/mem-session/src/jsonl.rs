//! A forgiving JSON Lines reader shared by the session store and the importers.
//!
//! It never stops at a bad line. For each physical line it yields the JSON values found there,
//! or a [`Diagnostic`] naming the file and line:
//! - a UTF-8 byte-order mark at the start of the file is skipped (warning);
//! - blank lines are skipped (warning);
//! - `\r\n` endings are accepted;
//! - invalid UTF-8 is replaced by U+FFFD and the line parsed again (error if it still fails);
//! - two or more JSON objects glued on one line (a real write race) all come out (warning);
//! - a last line without its newline that does not parse is reported as torn;
//! - lines of any length (tested at 15 MB) are read whole.

use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostic::Diagnostic;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One JSON value read from a line.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonLine {
    /// 1-based physical line number (relative to where reading started).
    pub line: usize,
    /// Byte offset of the start of the line, relative to where reading started.
    pub offset: u64,
    /// The value; `Null` when the line was read by the Codex line reader instead
    /// (`JsonlReader::read_codex_lines`, crate-internal), which then holds it in `codex`.
    pub value: Value,
    /// The line as the Codex line reader read it (without building `value`).
    pub(crate) codex: Option<Box<crate::import::codex_line::CodexLine>>,
}

/// What [`JsonlReader`] yields: a value, or a problem that was stepped over.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonlEvent {
    /// A parsed value.
    Value(JsonLine),
    /// A problem; reading goes on.
    Diagnostic(Diagnostic),
}

/// The longest line read, in bytes (64 MiB; the longest real lines, pasted images, are a few
/// MB). A longer line is skipped with an error diagnostic naming it; reading goes on.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Streams [`JsonlEvent`]s from any buffered reader. I/O errors end the stream with an
/// error diagnostic (line 0 is never used for them: the line being read is named).
pub struct JsonlReader<R> {
    reader: R,
    path: PathBuf,
    line: usize,
    offset: u64,
    buf: Vec<u8>,
    queue: VecDeque<JsonlEvent>,
    done: bool,
    skim: &'static [&'static str],
    codex: bool,
}

impl<R: BufRead> JsonlReader<R> {
    /// Reads from `reader`; `path` is used in diagnostics only.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        Self::starting_at(reader, path, 1, 0)
    }

    /// Reads from `reader` whose first byte is at `offset` of the file and starts line
    /// `first_line` (used when resuming from the middle of a file). A byte-order mark is only
    /// recognised when `offset == 0`.
    pub fn starting_at(
        reader: R,
        path: impl Into<PathBuf>,
        first_line: usize,
        offset: u64,
    ) -> Self {
        JsonlReader {
            reader,
            path: path.into(),
            line: first_line.saturating_sub(1),
            offset,
            buf: Vec::new(),
            queue: VecDeque::new(),
            done: false,
            skim: &[],
            codex: false,
        }
    }

    /// Lines whose top-level `type` is one of `types` come out with their `payload` object
    /// reduced to its `type` field (the rest of the payload is checked as JSON, not built):
    /// for readers that only count such lines by their payload's type, such as the Codex
    /// importer's `event_msg` lines (a fifth of a rollout's bytes). Every other field, every
    /// other line, and what is reported for a damaged line stay as without it.
    pub fn skim_payloads(mut self, types: &'static [&'static str]) -> Self {
        self.skim = types;
        self
    }

    /// From the next line on, Codex `response_item`, `compacted` and `session_meta` lines and
    /// the lines of the skimmed types come out read by the Codex line reader
    /// (`crate::import::codex_line`: `value` is `Null`, `codex` holds the line), when it can
    /// read them with the same result as the whole parse; every other line, and every
    /// diagnostic, stays as without it. For the Codex importer only, once the file is known to
    /// be a rollout.
    pub(crate) fn read_codex_lines(&mut self) {
        self.codex = true;
    }

    fn read_next_line(&mut self) {
        self.buf.clear();
        let start = self.offset;
        let limit = MAX_LINE_BYTES as u64 + 1;
        match (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buf)
        {
            Ok(0) => self.done = true,
            Ok(n) if n > MAX_LINE_BYTES && self.buf.last() != Some(&b'\n') => {
                self.line += 1;
                self.offset += n as u64;
                self.buf.clear();
                let skipped = self.skip_rest_of_line();
                self.queue.push_back(JsonlEvent::Diagnostic(
                    Diagnostic::error(
                        &self.path,
                        self.line,
                        format!(
                            "line longer than {MAX_LINE_BYTES} bytes ({} bytes read); skipped",
                            n as u64 + skipped
                        ),
                    )
                    .with_kind("line-too-long"),
                ));
            }
            Ok(n) => {
                self.line += 1;
                self.offset += n as u64;
                let complete = self.buf.last() == Some(&b'\n');
                let mut bytes: &[u8] = &self.buf;
                if complete {
                    bytes = &bytes[..bytes.len() - 1];
                }
                if bytes.last() == Some(&b'\r') {
                    bytes = &bytes[..bytes.len() - 1];
                }
                parse_line(
                    bytes,
                    &self.path,
                    self.line,
                    start,
                    complete,
                    (self.skim, self.codex),
                    &mut self.queue,
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                self.done = true;
                self.queue.push_back(JsonlEvent::Diagnostic(
                    Diagnostic::error(
                        &self.path,
                        self.line + 1,
                        format!("read failed: {e}; the rest of the file was not read"),
                    )
                    .with_kind("read-error"),
                ));
            }
        }
    }
}

impl<R: BufRead> JsonlReader<R> {
    /// Consumes the rest of an over-long line, its `\n` included; returns the bytes consumed.
    fn skip_rest_of_line(&mut self) -> u64 {
        let mut skipped = 0u64;
        loop {
            let (used, found) = match self.reader.fill_buf() {
                Ok([]) => break,
                Ok(buf) => match memchr::memchr(b'\n', buf) {
                    Some(i) => (i + 1, true),
                    None => (buf.len(), false),
                },
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            self.reader.consume(used);
            skipped += used as u64;
            self.offset += used as u64;
            if found {
                break;
            }
        }
        skipped
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = JsonlEvent;

    fn next(&mut self) -> Option<JsonlEvent> {
        loop {
            if let Some(ev) = self.queue.pop_front() {
                return Some(ev);
            }
            if self.done {
                return None;
            }
            self.read_next_line();
        }
    }
}

/// Parses one physical line (without its newline) into events appended to `out`.
#[allow(clippy::too_many_arguments)]
fn parse_line(
    raw: &[u8],
    path: &Path,
    line: usize,
    offset: u64,
    complete: bool,
    (skim, codex): (&[&str], bool),
    out: &mut VecDeque<JsonlEvent>,
) {
    let mut bytes = raw;
    if offset == 0 && bytes.starts_with(BOM) {
        bytes = &bytes[BOM.len()..];
        out.push_back(JsonlEvent::Diagnostic(Diagnostic::warning(
            path,
            line,
            "UTF-8 byte-order mark skipped",
        )));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if complete {
            out.push_back(JsonlEvent::Diagnostic(Diagnostic::warning(
                path,
                line,
                "blank line skipped",
            )));
        }
        return;
    }
    let lossy;
    let text: &str = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            out.push_back(JsonlEvent::Diagnostic(
                Diagnostic::error(
                    path,
                    line,
                    format!(
                        "invalid UTF-8 at byte {} of the line; replaced by U+FFFD",
                        e.valid_up_to()
                    ),
                )
                .with_kind("invalid-utf8"),
            ));
            lossy = String::from_utf8_lossy(bytes).into_owned();
            &lossy
        }
    };
    bytes = text.as_bytes();
    if codex && let Some(line_read) = crate::import::codex_line::read(text) {
        out.push_back(JsonlEvent::Value(JsonLine {
            line,
            offset,
            value: Value::Null,
            codex: Some(line_read),
        }));
        return;
    }
    if !skim.is_empty()
        && let Some(value) = skim_line(text, skim)
    {
        out.push_back(JsonlEvent::Value(JsonLine {
            line,
            offset,
            value,
            codex: None,
        }));
        return;
    }
    let mut values = Vec::new();
    // Parsed from the `str` checked above: serde_json then does not check the UTF-8 again.
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<SizedValue>();
    let mut failure = None;
    for item in stream.by_ref() {
        match item {
            Ok(SizedValue(v)) => values.push(v),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let consumed = stream.byte_offset();
    if values.len() > 1 {
        out.push_back(JsonlEvent::Diagnostic(Diagnostic::warning(
            path,
            line,
            format!(
                "{} JSON values glued on one line; all were read",
                values.len()
            ),
        )));
    }
    for value in values {
        out.push_back(JsonlEvent::Value(JsonLine {
            line,
            offset,
            value,
            codex: None,
        }));
    }
    if let Some(e) = failure {
        let what = if !complete {
            "incomplete last line (torn write?)".to_owned()
        } else if consumed > 0 {
            format!("malformed JSON after byte {consumed}")
        } else {
            "malformed JSON".to_owned()
        };
        let kind = if complete {
            "malformed-json"
        } else {
            "torn-line"
        };
        out.push_back(JsonlEvent::Diagnostic(
            Diagnostic::error(
                path,
                line,
                format!("{what}: {e}; {} bytes skipped", bytes.len() - consumed),
            )
            .with_kind(kind),
        ));
    }
}

/// How far into a line its top-level `type` is looked for (Codex writes
/// `{"timestamp":"...","type":"event_msg","payload":...}`).
const TYPE_PREFIX: usize = 160;

/// The first of `names` that a `"type":"<name>"` in the first [`TYPE_PREFIX`] bytes of `text`
/// names (occurrences in order), or `None`: the cheap look the skimming and the Codex line
/// reader take before they try a line (the parse then checks the real top-level `type`).
pub(crate) fn type_in_head<'n>(text: &str, names: &[&'n str]) -> Option<&'n str> {
    const KEY: &[u8] = b"\"type\":\"";
    // Built once: `memmem::find` builds its searcher on every call.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(KEY));
    let head = &text.as_bytes()[..text.len().min(TYPE_PREFIX)];
    let mut at = 0;
    loop {
        at += FINDER.find(&head[at..])? + KEY.len();
        let rest = &head[at..];
        if let Some(name) = names
            .iter()
            .find(|t| rest.starts_with(t.as_bytes()) && rest.get(t.len()) == Some(&b'"'))
        {
            return Some(name);
        }
    }
}

/// The line as one object whose `payload` object keeps only its `type`, when the line is
/// exactly one JSON object whose top-level `type` is one of `types`; `None` (the line is then
/// parsed whole, as usual) otherwise: glued or malformed lines, a payload that is not an
/// object, a `\u` surrogate escape anywhere (checked by the whole parse only).
fn skim_line(text: &str, types: &[&str]) -> Option<Value> {
    if type_in_head(text, types).is_none() || has_surrogate_escape(text) {
        return None;
    }
    let Skimmed(map) = serde_json::from_str(text).ok()?;
    let ty = map.get("type").and_then(Value::as_str)?;
    types.contains(&ty).then_some(Value::Object(map))
}

/// Whether `text` holds a `\u` escape of a UTF-16 surrogate (`\uD800`–`\uDFFF`, any case),
/// or something that looks like one (an escaped backslash before `ud`): the readers that skip
/// values without building them leave such texts to the whole `Value` parse, the reference for
/// which of them are valid.
pub(crate) fn has_surrogate_escape(text: &str) -> bool {
    // Built once: `memmem::find` builds its searcher on every call (~1 % of a Codex import).
    static FINDERS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::LazyLock::new(|| {
            [
                memchr::memmem::Finder::new(b"\\ud"),
                memchr::memmem::Finder::new(b"\\uD"),
            ]
        });
    FINDERS.iter().any(|f| f.find(text.as_bytes()).is_some())
}

/// A top-level object read with its `payload` skimmed (see [`skim_line`]).
struct Skimmed(serde_json::Map<String, Value>);

impl<'de> serde::Deserialize<'de> for Skimmed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> serde::de::Visitor<'de> for Top {
            type Value = Skimmed;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Skimmed, A::Error> {
                let mut map = serde_json::Map::new();
                while let Some(key) = access.next_key::<String>()? {
                    let value = if key == "payload" {
                        Value::Object(access.next_value::<PayloadType>()?.0)
                    } else {
                        access.next_value::<SizedValue>()?.0
                    };
                    map.insert(key, value);
                }
                Ok(Skimmed(map))
            }
        }
        d.deserialize_map(Top)
    }
}

/// A payload object reduced to its `type` field; any other JSON is an error (the line is then
/// parsed whole).
struct PayloadType(serde_json::Map<String, Value>);

impl<'de> serde::Deserialize<'de> for PayloadType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Payload;
        impl<'de> serde::de::Visitor<'de> for Payload {
            type Value = PayloadType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<PayloadType, A::Error> {
                let mut map = serde_json::Map::new();
                while let Some(key) = access.next_key::<String>()? {
                    if key == "type" {
                        let value = access.next_value::<Value>()?;
                        map.insert(key, value);
                    } else {
                        access.next_value::<Checked>()?;
                    }
                }
                Ok(PayloadType(map))
            }
        }
        d.deserialize_map(Payload)
    }
}

/// A JSON value read exactly as serde_json reads a [`Value`] (same values, same key order, the
/// same rule for a repeated key: the last value at the first key's place, the same errors), but
/// each object and array is allocated once at its final size: its entries are gathered on a
/// per-thread stack and moved into a map or vector of exactly their count. serde_json's own
/// `Value` grows them entry by entry, which re-indexed every object of a transcript several
/// times (~5 % of an import's CPU).
pub(crate) struct SizedValue(pub(crate) Value);

/// How many entries (elements) a per-thread stack of [`SizedValue`] keeps room for once it is
/// empty again: a line with one huge object or array would otherwise keep its stack's memory
/// (~100 bytes an entry) allocated for the rest of the thread's life.
const STACK_KEEP: usize = 1 << 12;

/// The entries of a [`SizedValue`] stack from `start` on, taken off it into a collection of
/// their exact count (innermost frame first: the frames outside stay below `start`). The stack,
/// left empty, gives back its memory beyond [`STACK_KEEP`] entries.
fn drain_stack<T: 'static, C: FromIterator<T>>(
    stack: &'static std::thread::LocalKey<std::cell::RefCell<Vec<T>>>,
    start: usize,
) -> C {
    stack.with_borrow_mut(|stack| {
        let taken = stack.drain(start..).collect();
        if stack.is_empty() && stack.capacity() > STACK_KEEP {
            stack.shrink_to(STACK_KEEP);
        }
        taken
    })
}

thread_local! {
    /// Entries of the objects being read on this thread, innermost last.
    static ENTRIES: std::cell::RefCell<Vec<(String, Value)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// Elements of the arrays being read on this thread, innermost last.
    static ELEMENTS: std::cell::RefCell<Vec<Value>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'de> serde::Deserialize<'de> for SizedValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Value;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
                Ok(Value::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
                Ok(Value::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
                Ok(Value::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
            }
            fn visit_str<E>(self, v: &str) -> Result<Value, E> {
                Ok(Value::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Value, E> {
                Ok(Value::String(v))
            }
            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_none<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                <SizedValue as serde::Deserialize>::deserialize(d).map(|v| v.0)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Value, A::Error> {
                let start = ELEMENTS.with_borrow(Vec::len);
                let read = (|| {
                    while let Some(SizedValue(v)) = access.next_element()? {
                        ELEMENTS.with_borrow_mut(|stack| stack.push(v));
                    }
                    Ok(())
                })();
                // Drained on error too, so the stack holds only the arrays being read.
                let elements: Vec<Value> = drain_stack(&ELEMENTS, start);
                read.map(|()| Value::Array(elements))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Value, A::Error> {
                let start = ENTRIES.with_borrow(Vec::len);
                let read = (|| {
                    while let Some(key) = access.next_key::<String>()? {
                        let SizedValue(value) = access.next_value()?;
                        ENTRIES.with_borrow_mut(|stack| stack.push((key, value)));
                    }
                    Ok(())
                })();
                // `collect` sizes the map from the drain's exact length, then inserts in
                // order: a repeated key keeps its first place and takes the last value.
                let map: serde_json::Map<String, Value> = drain_stack(&ENTRIES, start);
                read.map(|()| Value::Object(map))
            }
        }
        d.deserialize_any(Visit).map(SizedValue)
    }
}

/// Any JSON value, read and dropped, refused exactly where reading it as a [`Value`] would be
/// (a number beyond `f64`, nesting past serde_json's recursion limit): unlike
/// [`serde::de::IgnoredAny`], which serde_json skips without these checks, so a skimmed line
/// would be read where the whole parse reports it malformed. Builds nothing (borrowed
/// strings are not copied).
pub(crate) struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Checked;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Checked, A::Error> {
                while access.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Checked, A::Error> {
                while access.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use serde_json::json;

    type Problems = Vec<(usize, Severity, String)>;

    fn read(bytes: &[u8]) -> (Vec<(usize, Value)>, Problems) {
        let mut values = Vec::new();
        let mut diags = Vec::new();
        for ev in JsonlReader::new(bytes, "t.jsonl") {
            match ev {
                JsonlEvent::Value(v) => values.push((v.line, v.value)),
                JsonlEvent::Diagnostic(d) => diags.push((d.line, d.severity, d.message)),
            }
        }
        (values, diags)
    }

    #[test]
    fn plain_lines_and_crlf() {
        let (v, d) = read(b"{\"a\":1}\r\n{\"a\":2}\n");
        assert_eq!(v, vec![(1, json!({"a":1})), (2, json!({"a":2}))]);
        assert!(d.is_empty());
    }

    #[test]
    fn bom_blank_and_missing_final_newline() {
        let (v, d) = read(b"\xEF\xBB\xBF{\"a\":1}\n\n   \n{\"a\":2}");
        assert_eq!(v, vec![(1, json!({"a":1})), (4, json!({"a":2}))]);
        assert_eq!(d.len(), 3);
        assert!(d[0].2.contains("byte-order mark"));
        assert_eq!((d[1].0, d[2].0), (2, 3));
    }

    #[test]
    fn glued_objects_are_both_kept() {
        let (v, d) = read(b"{\"a\":1}{\"b\":2}\n{\"c\":3}\n");
        assert_eq!(
            v,
            vec![
                (1, json!({"a":1})),
                (1, json!({"b":2})),
                (2, json!({"c":3}))
            ]
        );
        assert_eq!(
            d,
            vec![(
                1,
                Severity::Warning,
                "2 JSON values glued on one line; all were read".to_owned()
            )]
        );
    }

    #[test]
    fn malformed_and_torn_lines_are_reported_and_skipped() {
        let (v, d) = read(b"{\"a\":1}\nnot json\n{\"a\":3}\n{\"a\":4, \"tru");
        assert_eq!(v, vec![(1, json!({"a":1})), (3, json!({"a":3}))]);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].0, 2);
        assert!(d[0].2.starts_with("malformed JSON"), "{}", d[0].2);
        assert_eq!(d[1].0, 4);
        assert!(d[1].2.starts_with("incomplete last line"), "{}", d[1].2);
    }

    #[test]
    fn glued_then_garbage_keeps_the_good_object() {
        let (v, d) = read(b"{\"a\":1}{\"type\":\"sum\n");
        assert_eq!(v, vec![(1, json!({"a":1}))]);
        assert!(d[0].2.contains("after byte 7"), "{:?}", d);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (v, d) = read(b"{\"a\":\"x\xFFy\"}\n");
        assert_eq!(v, vec![(1, json!({"a":"x\u{FFFD}y"}))]);
        assert!(d[0].2.contains("invalid UTF-8 at byte 7"), "{:?}", d);
    }

    #[test]
    fn over_long_line_is_skipped_and_reading_goes_on() {
        let big = "x".repeat(MAX_LINE_BYTES + 10);
        let text = format!("{{\"a\":1}}\n{{\"big\":\"{big}\"}}\n{{\"a\":3}}\n");
        let (v, d) = read(text.as_bytes());
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].0, 3);
        assert_eq!(v[1].1["a"], 3);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0, 2);
        assert!(d[0].2.contains("skipped"), "{d:?}");
    }

    fn read_skimmed(bytes: &[u8]) -> (Vec<(usize, Value)>, Problems) {
        let mut values = Vec::new();
        let mut diags = Vec::new();
        for ev in JsonlReader::new(bytes, "t.jsonl").skim_payloads(&["event_msg", "turn_context"]) {
            match ev {
                JsonlEvent::Value(v) => values.push((v.line, v.value)),
                JsonlEvent::Diagnostic(d) => diags.push((d.line, d.severity, d.message)),
            }
        }
        (values, diags)
    }

    #[test]
    fn skimmed_payloads_keep_their_type_only_and_nothing_else_changes() {
        let text = concat!(
            r#"{"timestamp":"t1","type":"event_msg","payload":{"type":"token_count","info":{"a":[1,2,{"b":"x\"y"}]}},"extra":[1]}"#,
            "\n",
            r#"{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"user"}}"#,
            "\n",
            // Not skimmed: glued, a payload that is not an object, a surrogate escape, a
            // nested `type` only, malformed, torn.
            r#"{"type":"event_msg","payload":{"type":"a"}}{"type":"event_msg","payload":{}}"#,
            "\n",
            r#"{"type":"event_msg","payload":[1]}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"a","s":"\ud800"}}"#,
            "\n",
            r#"{"type":"other","payload":{"type":"event_msg","x":1}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"a","x":tru}}"#,
            "\n",
            r#"{"type":"turn_context","payload":{"cwd":"/x"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"a""#,
        );
        let (plain, plain_diags) = read(text.as_bytes());
        let (skimmed, skimmed_diags) = read_skimmed(text.as_bytes());
        assert_eq!(skimmed_diags, plain_diags);
        assert_eq!(skimmed.len(), plain.len(), "{skimmed:?}");
        assert_eq!(
            skimmed[0],
            (
                1,
                json!({"timestamp":"t1","type":"event_msg","payload":{"type":"token_count"},"extra":[1]})
            )
        );
        assert_eq!(
            skimmed[skimmed.len() - 1],
            (8, json!({"type":"turn_context","payload":{}}))
        );
        // Everything else is as read without skimming.
        for (i, (a, b)) in plain.iter().zip(&skimmed).enumerate() {
            if i != 0 && i != plain.len() - 1 {
                assert_eq!(a, b, "value {i}");
            }
        }
    }

    #[test]
    fn a_skimmed_payload_is_checked_as_the_whole_parse_checks_it() {
        // `1e999` is valid JSON syntax but out of range for the whole parse: the line must be
        // malformed either way (found by the jsonl_reader fuzz target).
        let text = concat!(
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"n":1e999}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"token_count","info":[{"n":-1e400}]}}"#,
            "\n",
        );
        let (plain, plain_diags) = read(text.as_bytes());
        let (skimmed, skimmed_diags) = read_skimmed(text.as_bytes());
        assert!(plain.is_empty(), "{plain:?}");
        assert_eq!(plain_diags.len(), 2, "{plain_diags:?}");
        assert_eq!(skimmed, plain);
        assert_eq!(skimmed_diags, plain_diags);
    }

    #[test]
    fn huge_line() {
        let big = "x".repeat(15 << 20);
        let text = format!("{{\"a\":1}}\n{{\"big\":\"{big}\"}}\n{{\"a\":3}}\n");
        let (v, d) = read(text.as_bytes());
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].1["big"].as_str().map(str::len), Some(15 << 20));
        assert!(d.is_empty());
    }

    #[test]
    fn sized_values_are_the_values_serde_json_reads() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let texts = [
            r#"{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f\n\u00e9\ud83d\ude00"}}"#,
            r#"{"k":1,"j":2,"k":3}"#,
            r#"{"z":{},"y":[],"x":[[],[{}]],"w":-1.5e300,"v":18446744073709551615,"u":-9}"#,
            r#"[1,true,false,null,"s",1.0,0.1,-0]"#,
            r#"{"a":[1,2,{"b":[3,{"c":4}]}],"a":{"x":1}}{"glued":true} 7 "#,
            r#"{"a":[1,2,{"b":[3,{"c":"#,
            r#"{"a":1,}"#,
            r#"{"n":1e400}"#,
            r#"{"s":"\ud800"}"#,
            &deep,
        ];
        for text in texts {
            let mut ours = serde_json::Deserializer::from_str(text).into_iter::<SizedValue>();
            let mut theirs = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            loop {
                match (ours.next(), theirs.next()) {
                    (None, None) => break,
                    (Some(Ok(SizedValue(a))), Some(Ok(b))) => {
                        assert_eq!(a, b, "{text}");
                        // The same key order, not only the same map.
                        assert_eq!(a.to_string(), b.to_string(), "{text}");
                    }
                    (Some(Err(a)), Some(Err(b))) => {
                        assert_eq!(a.to_string(), b.to_string(), "{text}");
                        break;
                    }
                    (a, b) => panic!("{text}: {:?} / {b:?}", a.map(|r| r.map(|v| v.0))),
                }
            }
            assert_eq!(ours.byte_offset(), theirs.byte_offset(), "{text}");
        }
        // Nothing is left on the per-thread stacks, after errors too.
        assert_eq!(ENTRIES.with_borrow(Vec::len), 0);
        assert_eq!(ELEMENTS.with_borrow(Vec::len), 0);
    }

    #[test]
    fn a_huge_object_or_array_does_not_keep_its_stack_memory() {
        let n = STACK_KEEP * 4;
        let keys: Vec<String> = (0..n).map(|i| format!("\"k{i}\":[{i},{{}}]")).collect();
        let text = format!("{{{}, \"a\":[{}]}}", keys.join(","), vec!["1"; n].join(","));
        let SizedValue(ours) = serde_json::from_str(&text).unwrap();
        let theirs: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(ours.to_string(), theirs.to_string());
        assert_eq!(ours.as_object().map(serde_json::Map::len), Some(n + 1));
        for (stack_len, capacity) in [
            ENTRIES.with_borrow(|s| (s.len(), s.capacity())),
            ELEMENTS.with_borrow(|s| (s.len(), s.capacity())),
        ] {
            assert_eq!(stack_len, 0);
            assert!(capacity <= STACK_KEEP, "{capacity}");
        }
    }
}
