//! The message model: Anthropic-style role + content blocks, lossless through JSON.
//!
//! Every block kind the seeds and the real transcripts use has a variant; a block whose `type` is
//! unknown (or whose known fields have unexpected JSON types) is kept verbatim as
//! [`ContentBlock::Other`], and unknown fields of known blocks are kept in their `extra` map, so
//! `from_json(to_json(x)) == x` and `to_json(from_json(v)) == v` for any block object `v`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Metadata keys shared across crates (values are JSON booleans unless said otherwise).
pub mod metadata_keys {
    /// A message the harness wrote in the user's name (Claude Code's `isMeta`: command output,
    /// caveats), not something the user typed.
    pub const IS_META: &str = "is_meta";
    /// The user message that carries a compaction summary (written on replay of a boundary).
    pub const COMPACT_SUMMARY: &str = "mewmem_compact_summary";
}

/// Who wrote a message.
///
/// Tool results travel in [`Role::User`] messages, as in the Anthropic Messages API; Codex's
/// `developer` role is imported as [`Role::System`] with the original role kept in the metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A system prompt or other out-of-band instruction.
    System,
    /// The user, or the harness speaking for it (tool results, reminders).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The lowercase wire name: `system`, `user` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// The content of a `tool_result` block: a plain string or a list of blocks (text, image,
/// `tool_reference`, ...), exactly as the Anthropic API allows.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultContent {
    /// `"content": "..."`.
    Text(String),
    /// `"content": [ {block}, ... ]`.
    Blocks(Vec<ContentBlock>),
    /// No `content` field at all (the API allows it: an empty result); written back without one.
    Absent,
}

impl ToolResultContent {
    /// The text of the result: the string, or the text blocks joined by `\n` (non-text blocks
    /// are skipped).
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(blocks) => {
                let parts: Vec<&str> = blocks.iter().filter_map(ContentBlock::as_text).collect();
                parts.join("\n")
            }
            ToolResultContent::Absent => String::new(),
        }
    }

    /// Length of [`ToolResultContent::text`] in characters (Unicode scalar values).
    pub fn char_len(&self) -> usize {
        match self {
            ToolResultContent::Text(s) => s.chars().count(),
            ToolResultContent::Blocks(blocks) => {
                let texts: Vec<&str> = blocks.iter().filter_map(ContentBlock::as_text).collect();
                texts.iter().map(|t| t.chars().count()).sum::<usize>()
                    + texts.len().saturating_sub(1)
            }
            ToolResultContent::Absent => 0,
        }
    }

    /// The JSON of the `content` field; `None` when the field is absent.
    fn to_value(&self) -> Option<Value> {
        match self {
            ToolResultContent::Text(s) => Some(Value::String(s.clone())),
            ToolResultContent::Blocks(b) => {
                Some(Value::Array(b.iter().map(ContentBlock::to_value).collect()))
            }
            ToolResultContent::Absent => None,
        }
    }
}

/// One block of a message's content.
///
/// JSON shape: an object with a `type` field (`text`, `tool_use`, `tool_result`, `image`,
/// `thinking`); any other object is [`ContentBlock::Other`]. The `extra` maps hold every field
/// the variant does not name, in their original order.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{"type":"text","text":...}`.
    Text {
        /// The text.
        text: String,
        /// Fields not named above (e.g. `cache_control`, `citations`).
        extra: Map<String, Value>,
    },
    /// `{"type":"tool_use","id":...,"name":...,"input":{...}}`: the model calls a tool.
    ToolUse {
        /// Call id, matched by [`ContentBlock::ToolResult::tool_use_id`].
        id: String,
        /// Tool name.
        name: String,
        /// Arguments, any JSON value (an object in practice).
        input: Value,
        /// Fields not named above (e.g. Claude Code's `caller`).
        extra: Map<String, Value>,
    },
    /// `{"type":"tool_result","tool_use_id":...,"content":...,"is_error":...}`.
    ToolResult {
        /// The id of the `tool_use` this answers.
        tool_use_id: String,
        /// The result: a string, a list of blocks, or absent.
        content: ToolResultContent,
        /// `Some` when the source had the field (kept so the JSON round-trips); use
        /// [`ContentBlock::is_error`] to read it.
        is_error: Option<bool>,
        /// Fields not named above.
        extra: Map<String, Value>,
    },
    /// `{"type":"image","source":{...}}`; the source (often megabytes of base64) is kept as is.
    Image {
        /// The `source` object (`{type: base64, media_type, data}` or a URL form).
        source: Value,
        /// Fields not named above.
        extra: Map<String, Value>,
    },
    /// `{"type":"thinking","thinking":...,"signature":...}`: model reasoning.
    Thinking {
        /// The reasoning text (may be empty when only a signature was kept).
        thinking: String,
        /// The provider's signature, when present.
        signature: Option<String>,
        /// Fields not named above.
        extra: Map<String, Value>,
    },
    /// Any other block (e.g. `redacted_thinking`, `tool_reference`, `document`), or a known
    /// kind whose fields have unexpected types: kept verbatim.
    Other(Value),
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            extra: Map::new(),
        }
    }

    /// A tool_use block.
    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            extra: Map::new(),
        }
    }

    /// A tool_result block with string content; `is_error` is written only when `true`.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ContentBlock::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(content.into()),
            is_error: is_error.then_some(true),
            extra: Map::new(),
        }
    }

    /// The block's `type` as it appears in JSON (`"other"` when an unknown block has none).
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text { .. } => "text",
            ContentBlock::ToolUse { .. } => "tool_use",
            ContentBlock::ToolResult { .. } => "tool_result",
            ContentBlock::Image { .. } => "image",
            ContentBlock::Thinking { .. } => "thinking",
            ContentBlock::Other(v) => v.get("type").and_then(Value::as_str).unwrap_or("other"),
        }
    }

    /// The text of a text block, `None` for other kinds.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// `true` for a tool_result marked `is_error: true`.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            ContentBlock::ToolResult {
                is_error: Some(true),
                ..
            }
        )
    }

    /// Builds a block from any JSON value; never fails (unknown shapes become `Other`).
    pub fn from_value(value: Value) -> Self {
        let Value::Object(mut map) = value else {
            return ContentBlock::Other(value);
        };
        let kind = map
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match kind.as_str() {
            "text" if matches!(map.get("text"), Some(Value::String(_))) => {
                let text = take_string(&mut map, "text").unwrap_or_default();
                map.remove("type");
                ContentBlock::Text { text, extra: map }
            }
            "tool_use"
                if matches!(map.get("id"), Some(Value::String(_)))
                    && matches!(map.get("name"), Some(Value::String(_)))
                    && map.contains_key("input") =>
            {
                let id = take_string(&mut map, "id").unwrap_or_default();
                let name = take_string(&mut map, "name").unwrap_or_default();
                let input = map.remove("input").unwrap_or(Value::Null);
                map.remove("type");
                ContentBlock::ToolUse {
                    id,
                    name,
                    input,
                    extra: map,
                }
            }
            "tool_result"
                if matches!(map.get("tool_use_id"), Some(Value::String(_)))
                    && matches!(
                        map.get("content"),
                        None | Some(Value::String(_)) | Some(Value::Array(_))
                    )
                    && matches!(map.get("is_error"), None | Some(Value::Bool(_))) =>
            {
                let tool_use_id = take_string(&mut map, "tool_use_id").unwrap_or_default();
                let content = match map.remove("content") {
                    Some(Value::String(s)) => ToolResultContent::Text(s),
                    Some(Value::Array(items)) => ToolResultContent::Blocks(
                        items.into_iter().map(ContentBlock::from_value).collect(),
                    ),
                    // A missing `content` is legal in the API (an empty result); kept absent.
                    _ => ToolResultContent::Absent,
                };
                let is_error = map.remove("is_error").and_then(|v| v.as_bool());
                map.remove("type");
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    extra: map,
                }
            }
            "image" if map.contains_key("source") => {
                let source = map.remove("source").unwrap_or(Value::Null);
                map.remove("type");
                ContentBlock::Image { source, extra: map }
            }
            "thinking"
                if matches!(map.get("thinking"), Some(Value::String(_)))
                    && matches!(map.get("signature"), None | Some(Value::String(_))) =>
            {
                let thinking = take_string(&mut map, "thinking").unwrap_or_default();
                let signature = take_string(&mut map, "signature");
                map.remove("type");
                ContentBlock::Thinking {
                    thinking,
                    signature,
                    extra: map,
                }
            }
            _ => ContentBlock::Other(Value::Object(map)),
        }
    }

    /// The block as a JSON value (the inverse of [`ContentBlock::from_value`]).
    pub fn to_value(&self) -> Value {
        fn object(kind: &str, fields: Vec<(&str, Value)>, extra: &Map<String, Value>) -> Value {
            let mut map = Map::with_capacity(fields.len() + extra.len() + 1);
            map.insert("type".to_owned(), Value::String(kind.to_owned()));
            for (k, v) in fields {
                map.insert(k.to_owned(), v);
            }
            for (k, v) in extra {
                map.insert(k.clone(), v.clone());
            }
            Value::Object(map)
        }
        match self {
            ContentBlock::Text { text, extra } => {
                object("text", vec![("text", Value::String(text.clone()))], extra)
            }
            ContentBlock::ToolUse {
                id,
                name,
                input,
                extra,
            } => object(
                "tool_use",
                vec![
                    ("id", Value::String(id.clone())),
                    ("name", Value::String(name.clone())),
                    ("input", input.clone()),
                ],
                extra,
            ),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                extra,
            } => {
                let mut fields = vec![("tool_use_id", Value::String(tool_use_id.clone()))];
                if let Some(content) = content.to_value() {
                    fields.push(("content", content));
                }
                if let Some(e) = is_error {
                    fields.push(("is_error", Value::Bool(*e)));
                }
                object("tool_result", fields, extra)
            }
            ContentBlock::Image { source, extra } => {
                object("image", vec![("source", source.clone())], extra)
            }
            ContentBlock::Thinking {
                thinking,
                signature,
                extra,
            } => {
                let mut fields = vec![("thinking", Value::String(thinking.clone()))];
                if let Some(s) = signature {
                    fields.push(("signature", Value::String(s.clone())));
                }
                object("thinking", fields, extra)
            }
            ContentBlock::Other(v) => v.clone(),
        }
    }
}

/// A named field of a block, borrowed for serialising.
enum Field<'a> {
    Str(&'a str),
    Json(&'a Value),
    Bool(bool),
    Blocks(&'a [ContentBlock]),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Str(s) => serializer.serialize_str(s),
            Field::Json(v) => v.serialize(serializer),
            Field::Bool(b) => serializer.serialize_bool(*b),
            Field::Blocks(blocks) => serializer.collect_seq(blocks.iter()),
        }
    }
}

/// Writes the JSON of [`ContentBlock::to_value`] without building it: `type`, the named fields,
/// then `extra`, borrowed. When `extra` repeats `type` or a named field (the value then replaces
/// the earlier one in place), the value is built as `to_value` builds it.
impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (kind, fields, extra): (&str, [Option<(&str, Field<'_>)>; 3], _) = match self {
            ContentBlock::Text { text, extra } => (
                "text",
                [Some(("text", Field::Str(text))), None, None],
                extra,
            ),
            ContentBlock::ToolUse {
                id,
                name,
                input,
                extra,
            } => (
                "tool_use",
                [
                    Some(("id", Field::Str(id))),
                    Some(("name", Field::Str(name))),
                    Some(("input", Field::Json(input))),
                ],
                extra,
            ),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                extra,
            } => {
                let content = match content {
                    ToolResultContent::Text(s) => Some(("content", Field::Str(s))),
                    ToolResultContent::Blocks(b) => Some(("content", Field::Blocks(b))),
                    ToolResultContent::Absent => None,
                };
                (
                    "tool_result",
                    [
                        Some(("tool_use_id", Field::Str(tool_use_id))),
                        content,
                        is_error.map(|e| ("is_error", Field::Bool(e))),
                    ],
                    extra,
                )
            }
            ContentBlock::Image { source, extra } => (
                "image",
                [Some(("source", Field::Json(source))), None, None],
                extra,
            ),
            ContentBlock::Thinking {
                thinking,
                signature,
                extra,
            } => (
                "thinking",
                [
                    Some(("thinking", Field::Str(thinking))),
                    signature.as_deref().map(|s| ("signature", Field::Str(s))),
                    None,
                ],
                extra,
            ),
            ContentBlock::Other(v) => return v.serialize(serializer),
        };
        let named = || fields.iter().flatten().map(|(k, _)| *k);
        if extra.keys().any(|k| k == "type" || named().any(|n| n == k)) {
            return self.to_value().serialize(serializer);
        }
        let mut map = serializer.serialize_map(Some(1 + named().count() + extra.len()))?;
        map.serialize_entry("type", kind)?;
        for (k, v) in fields.iter().flatten() {
            map.serialize_entry(k, v)?;
        }
        for (k, v) in extra {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(ContentBlock::from_value)
    }
}

/// One message of a conversation.
///
/// JSON shape: `{"role": "user"|"assistant"|"system", "content": [block...], "metadata": {...}}`.
/// `content` may also be read from a plain string (it becomes one text block). `metadata` holds
/// provenance and fields of imported formats that have no place in the model (ids, timestamps,
/// usage, model name...); it is omitted when empty and never sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The blocks, in order.
    #[serde(deserialize_with = "content_from_string_or_blocks")]
    pub content: Vec<ContentBlock>,
    /// Provenance and preserved source fields; empty for messages mewmem made itself.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

fn content_from_string_or_blocks<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(vec![ContentBlock::text(s)]),
        Value::Array(items) => Ok(items.into_iter().map(ContentBlock::from_value).collect()),
        Value::Null => Ok(Vec::new()),
        other => Err(D::Error::custom(format!(
            "message content must be a string or an array of blocks, found {}",
            json_kind(&other)
        ))),
    }
}

/// A short name for a JSON value's type, for error messages.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Message {
    /// A message with the given blocks and no metadata.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Message {
            role,
            content,
            metadata: Map::new(),
        }
    }

    /// A message holding one text block.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message::new(role, vec![ContentBlock::text(text)])
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::text(Role::User, text)
    }

    /// An assistant message.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::text(Role::Assistant, text)
    }

    /// Adds a metadata entry (builder style).
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// The ids of the tool_use blocks, in order.
    pub fn tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
    }

    /// The `tool_use_id`s of the tool_result blocks, in order.
    pub fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
    }

    /// `true` when the message has at least one block and every block is a tool_result.
    pub fn is_tool_result_only(&self) -> bool {
        !self.content.is_empty()
            && self
                .content
                .iter()
                .all(|b| matches!(b, ContentBlock::ToolResult { .. }))
    }

    /// The text blocks joined by `\n`.
    pub fn text_content(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        parts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_block_roundtrip(v: Value) {
        let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), v, "block {block:?}");
        // Written directly, the same text as the value `to_value` builds (key order included).
        assert_eq!(
            serde_json::to_string(&block).unwrap(),
            serde_json::to_string(&block.to_value()).unwrap(),
            "block {block:?}"
        );
    }

    #[test]
    fn a_block_is_written_as_its_value_even_when_extra_repeats_a_named_field() {
        let extra = |pairs: &[(&str, Value)]| -> Map<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect()
        };
        let blocks = [
            ContentBlock::Text {
                text: "a".into(),
                extra: extra(&[("type", json!("x")), ("z", json!(1)), ("text", json!("b"))]),
            },
            ContentBlock::ToolUse {
                id: "i".into(),
                name: "n".into(),
                input: json!({"k": [1, 2]}),
                extra: extra(&[("caller", json!({"t": 1})), ("name", json!(null))]),
            },
            ContentBlock::ToolResult {
                tool_use_id: "i".into(),
                content: ToolResultContent::Blocks(vec![
                    ContentBlock::Text {
                        text: "t".into(),
                        extra: extra(&[("cache_control", json!({"type": "ephemeral"}))]),
                    },
                    ContentBlock::Other(json!({"type": "weird", "b": 1, "a": 2})),
                ]),
                is_error: Some(false),
                extra: extra(&[("is_error", json!(true))]),
            },
            // Written field by field, its content blocks too, except the first, whose `extra`
            // repeats `type`.
            ContentBlock::ToolResult {
                tool_use_id: "i".into(),
                content: ToolResultContent::Blocks(vec![
                    ContentBlock::Text {
                        text: "t".into(),
                        extra: extra(&[("z", json!(0)), ("type", json!("shadow"))]),
                    },
                    ContentBlock::Image {
                        source: json!({"type": "base64", "data": "AA=="}),
                        extra: extra(&[("alt", json!("a"))]),
                    },
                    ContentBlock::Other(json!([1, "x"])),
                ]),
                is_error: Some(true),
                extra: extra(&[("cache_control", json!({"type": "ephemeral"}))]),
            },
            ContentBlock::ToolResult {
                tool_use_id: "i".into(),
                content: ToolResultContent::Text("plain".into()),
                is_error: None,
                extra: Map::new(),
            },
            ContentBlock::ToolResult {
                tool_use_id: "i".into(),
                content: ToolResultContent::Absent,
                is_error: None,
                extra: extra(&[("content", json!("late"))]),
            },
            ContentBlock::Image {
                source: json!({"type": "url", "url": "u"}),
                extra: Map::new(),
            },
            ContentBlock::Thinking {
                thinking: "t".into(),
                signature: None,
                extra: extra(&[("signature", json!("s")), ("w", json!(2))]),
            },
        ];
        for block in blocks {
            assert_eq!(
                serde_json::to_string(&block).unwrap(),
                serde_json::to_string(&block.to_value()).unwrap(),
                "block {block:?}"
            );
        }
    }

    #[test]
    fn every_block_kind_round_trips() {
        check_block_roundtrip(
            json!({"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}),
        );
        check_block_roundtrip(
            json!({"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"},"caller":{"type":"direct"}}),
        );
        check_block_roundtrip(json!({"type":"tool_result","tool_use_id":"t1","content":"ok"}));
        check_block_roundtrip(
            json!({"type":"tool_result","tool_use_id":"t1","content":"boom","is_error":true}),
        );
        check_block_roundtrip(
            json!({"type":"tool_result","tool_use_id":"t1","content":"x","is_error":false}),
        );
        check_block_roundtrip(json!({"type":"tool_result","tool_use_id":"t1","content":[
            {"type":"text","text":"a"},{"type":"tool_reference","tool_name":"Read"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}));
        check_block_roundtrip(
            json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}),
        );
        check_block_roundtrip(json!({"type":"thinking","thinking":"","signature":"sig"}));
        check_block_roundtrip(json!({"type":"thinking","thinking":"hmm"}));
        check_block_roundtrip(json!({"type":"redacted_thinking","data":"xyz"}));
        check_block_roundtrip(json!({"type":"text","text":5}));
        check_block_roundtrip(json!({"type":"tool_result","tool_use_id":"t"}));
        check_block_roundtrip(json!({"no_type":true}));
        check_block_roundtrip(json!("bare string"));
    }

    #[test]
    fn typed_blocks_are_recognised() {
        let b = ContentBlock::from_value(
            json!({"type":"tool_result","tool_use_id":"t","content":"e","is_error":true}),
        );
        assert!(b.is_error());
        assert_eq!(b.kind(), "tool_result");
        let b = ContentBlock::from_value(json!({"type":"tool_reference","tool_name":"Read"}));
        assert_eq!(b.kind(), "tool_reference");
        assert!(matches!(b, ContentBlock::Other(_)));
    }

    #[test]
    fn message_reads_string_content_and_round_trips() {
        let m: Message = serde_json::from_value(json!({"role":"user","content":"hello"})).unwrap();
        assert_eq!(m, Message::user("hello"));
        let v = json!({"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"a","name":"Read","input":{}}],"metadata":{"uuid":"u1"}});
        let m: Message = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
        assert_eq!(m.tool_use_ids().collect::<Vec<_>>(), ["a"]);
    }

    #[test]
    fn bad_content_type_is_an_error() {
        let err =
            serde_json::from_value::<Message>(json!({"role":"user","content":3})).unwrap_err();
        assert!(err.to_string().contains("string or an array"), "{err}");
    }

    #[test]
    fn tool_result_text_of_blocks() {
        let c = ToolResultContent::Blocks(vec![
            ContentBlock::text("ab"),
            ContentBlock::Other(json!({"type":"x"})),
            ContentBlock::text("é"),
        ]);
        assert_eq!(c.text(), "ab\né");
        assert_eq!(c.char_len(), 4);
    }
}
