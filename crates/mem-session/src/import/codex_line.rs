//! A reader for the kinds of Codex rollout line that make up nearly all of a rollout:
//! `response_item` lines (the conversation), `compacted` lines (a compaction and the history it
//! keeps), `session_meta` lines (of whose payload only the fields the importer reads are
//! built: [`META_FIELDS`]) and the lines the importer only counts (`event_msg`,
//! `turn_context`, `world_state`). It reads them without building the `Value`
//! tree of the line and of its payload object (a hashed, ordered map each, with every key
//! allocated); the payload's fields keep their order in a plain list and their values are
//! built as usual.
//!
//! It only says yes to a line whose whole parse would give the same conversion: exactly one
//! JSON object; `timestamp`, `type` and `payload` at most once each; `type` a string naming
//! one of those kinds; a payload object (of at most [`MAX_FIELDS`] fields, none repeated); no
//! `\u` surrogate escape anywhere (some values are checked, not built: see
//! [`has_surrogate_escape`]). For any other line it says `None` and the line is parsed whole
//! as before, with the same diagnostics. Tested against the whole parse on every fixture and
//! by the `import_codex` fuzz target.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::jsonl::{Checked, SizedValue, has_surrogate_escape, type_in_head};

/// The most fields a payload read here may have (real response items have at most ~8); a
/// payload with more is parsed whole (which also keeps the repeated-key check linear).
pub(crate) const MAX_FIELDS: usize = 32;

/// The line types read here: `response_item`, `compacted`, `session_meta` and the skimmed
/// types ([`SKIMMED_TYPES`](super::codex::SKIMMED_TYPES), checked by a test).
const READ_TYPES: &[&str] = &[
    "response_item",
    "compacted",
    "session_meta",
    "event_msg",
    "turn_context",
    "world_state",
];

/// The fields of a `session_meta` payload the importer reads (`Importer::session_meta`: keep
/// them in step; the fixtures' and the fuzz target's rollouts are imported both ways and
/// compared); the others (the tools offered, the git state: most of the line) are checked as
/// JSON, not built.
pub(crate) const META_FIELDS: &[&str] = &[
    "id",
    "cwd",
    "timestamp",
    "source",
    "parent_thread_id",
    "base_instructions",
    "instructions",
];

/// One Codex line read without its tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CodexLine {
    /// A line of one of the skimmed types ([`SKIMMED_TYPES`](super::codex::SKIMMED_TYPES)):
    /// only its payload's `type` is kept (the rest of the payload is checked as JSON, not
    /// built).
    Counted {
        /// The line's `type` (one of the skimmed types).
        kind: &'static str,
        /// The payload's `type` when it is a string.
        payload_type: Option<String>,
        /// The line's `timestamp` when it is a string.
        timestamp: Option<String>,
    },
    /// A `response_item` line.
    Item {
        /// The line's `timestamp` when it is a string.
        timestamp: Option<String>,
        /// The payload's fields, in order.
        payload: Fields,
    },
    /// A `session_meta` line.
    Meta {
        /// The line's `timestamp` when it is a string.
        timestamp: Option<String>,
        /// The payload's [`META_FIELDS`] that it has, in order.
        payload: Fields,
    },
    /// A `compacted` line.
    Compacted {
        /// The line's `timestamp` when it is a string.
        timestamp: Option<String>,
        /// The payload's fields but `replacement_history`, in order.
        payload: Fields,
        /// The entries of `replacement_history` when it is an array (else none).
        history: Vec<Entry>,
    },
}

/// An entry of a compaction's `replacement_history`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// An object, as the whole parse reads it.
    Map(Map<String, Value>),
    /// An object, as this reader reads it.
    Fields(Fields),
    /// Any other value.
    Other(Value),
}

impl Entry {
    /// The entries of a `replacement_history` value read whole: none unless it is an array.
    pub(crate) fn all_of(history: Option<Value>) -> Vec<Entry> {
        match history {
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::Object(o) => Entry::Map(o),
                    other => Entry::Other(other),
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The fields of a JSON object in their order, keys unique: what a `serde_json::Map` holds,
/// without its hash index (lookups are linear; payloads have a handful of fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fields(Vec<(String, Value)>);

/// A JSON object the importer takes apart, field by field: a `serde_json::Map`, or the
/// [`Fields`] of a payload read here. Taking a field out keeps the order of the others (so both
/// give the same leftovers, in the order of the line).
pub(crate) trait Object {
    /// The value of `key`.
    fn get(&self, key: &str) -> Option<&Value>;
    /// Takes `key` out; the other fields keep their order.
    fn take(&mut self, key: &str) -> Option<Value>;
    /// The fields left, in order.
    fn into_map(self) -> Map<String, Value>;
    /// Whether `key` is there.
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl Object for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        self.shift_remove(key)
    }
    fn into_map(self) -> Map<String, Value> {
        self
    }
}

impl Object for Fields {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }
    fn into_map(self) -> Map<String, Value> {
        self.0.into_iter().collect()
    }
}

/// What the line's `type` says the line is, from its head ([`type_in_head`]).
#[derive(Clone, Copy)]
enum Kind {
    Counted(&'static str),
    Item,
    Meta,
    Compacted,
}

/// `text` (one line, without its newline) read as a [`CodexLine`], or `None` when it must be
/// parsed whole (see the module documentation).
pub(crate) fn read(text: &str) -> Option<Box<CodexLine>> {
    let kind = kind_of(text)?;
    if has_surrogate_escape(text) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let line = de.deserialize_map(Top(kind)).ok()?;
    de.end().ok()?;
    Some(Box::new(line))
}

/// The kind named by the first `"type":"..."` in the line's head that names one.
fn kind_of(text: &str) -> Option<Kind> {
    Some(match type_in_head(text, READ_TYPES)? {
        "response_item" => Kind::Item,
        "compacted" => Kind::Compacted,
        "session_meta" => Kind::Meta,
        counted => Kind::Counted(counted),
    })
}

/// A key, borrowed from the line when it has no escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Sets `slot` once; a second time is an error (the line is then parsed whole, where the last
/// value counts).
fn once<T, E: serde::de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::custom("repeated key"));
    }
    *slot = Some(value);
    Ok(())
}

/// The line's top-level object, for the kind its head names.
struct Top(Kind);

impl<'de> Visitor<'de> for Top {
    type Value = CodexLine;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Codex line object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<CodexLine, A::Error> {
        let mut timestamp: Option<Value> = None;
        let mut ty: Option<Value> = None;
        let mut counted: Option<Option<String>> = None;
        let mut item: Option<Fields> = None;
        let mut meta: Option<Fields> = None;
        let mut compacted: Option<CompactedPayload> = None;
        while let Some(Key(key)) = access.next_key::<Key>()? {
            match key.as_ref() {
                "timestamp" => once(&mut timestamp, access.next_value::<SizedValue>()?.0)?,
                "type" => once(&mut ty, access.next_value::<SizedValue>()?.0)?,
                "payload" => match self.0 {
                    Kind::Counted(_) => once(&mut counted, access.next_value::<PayloadType>()?.0)?,
                    Kind::Item => once(&mut item, access.next_value::<Fields>()?)?,
                    Kind::Meta => once(&mut meta, access.next_value_seed(FieldsOf(meta_field))?)?,
                    Kind::Compacted => {
                        once(&mut compacted, access.next_value::<CompactedPayload>()?)?
                    }
                },
                _ => {
                    access.next_value::<Checked>()?;
                }
            }
        }
        let timestamp = match timestamp {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let ty = ty.as_ref().and_then(Value::as_str);
        match self.0 {
            Kind::Counted(kind) if ty == Some(kind) => Ok(CodexLine::Counted {
                kind,
                payload_type: counted.ok_or_else(|| A::Error::custom("no payload"))?,
                timestamp,
            }),
            Kind::Item if ty == Some("response_item") => Ok(CodexLine::Item {
                timestamp,
                payload: item.ok_or_else(|| A::Error::custom("no payload"))?,
            }),
            Kind::Meta if ty == Some("session_meta") => Ok(CodexLine::Meta {
                timestamp,
                payload: meta.ok_or_else(|| A::Error::custom("no payload"))?,
            }),
            Kind::Compacted if ty == Some("compacted") => {
                let CompactedPayload { fields, history } =
                    compacted.ok_or_else(|| A::Error::custom("no payload"))?;
                Ok(CodexLine::Compacted {
                    timestamp,
                    payload: fields,
                    history: history.flatten().unwrap_or_default(),
                })
            }
            _ => Err(A::Error::custom("not the type the line's head names")),
        }
    }
}

/// A payload object reduced to its `type` when that is a string (a repeated `type`: an error).
struct PayloadType(Option<String>);

impl<'de> Deserialize<'de> for PayloadType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PayloadType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<PayloadType, A::Error> {
                let mut ty: Option<Value> = None;
                while let Some(Key(key)) = access.next_key::<Key>()? {
                    if key == "type" {
                        once(&mut ty, access.next_value::<SizedValue>()?.0)?;
                    } else {
                        access.next_value::<Checked>()?;
                    }
                }
                Ok(PayloadType(match ty {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                }))
            }
        }
        d.deserialize_map(V)
    }
}

/// Adds a field read from `access` to `fields` (too many fields or a repeated key: an error).
fn push_field<'de, A: MapAccess<'de>>(
    fields: &mut Vec<(String, Value)>,
    key: Cow<'de, str>,
    access: &mut A,
) -> Result<(), A::Error> {
    if fields.len() == MAX_FIELDS || fields.iter().any(|(k, _)| *k == key) {
        return Err(A::Error::custom("too many or repeated keys"));
    }
    let value = access.next_value::<SizedValue>()?.0;
    fields.push((key.into_owned(), value));
    Ok(())
}

/// The fields of an object read from `access`, in order: those `keep` says yes to are built
/// ([`push_field`]: at most [`MAX_FIELDS`], none repeated), the others are checked, not built
/// (a repeated one among them is dropped all the same).
fn read_fields<'de, A: MapAccess<'de>>(
    mut access: A,
    keep: fn(&str) -> bool,
) -> Result<Fields, A::Error> {
    let mut fields: Vec<(String, Value)> = Vec::with_capacity(8);
    while let Some(Key(key)) = access.next_key::<Key>()? {
        if keep(&key) {
            push_field(&mut fields, key, &mut access)?;
        } else {
            access.next_value::<Checked>()?;
        }
    }
    Ok(Fields(fields))
}

/// Reads a JSON object as its [`Fields`] that a filter keeps ([`read_fields`]).
struct FieldsOf(fn(&str) -> bool);

impl<'de> Visitor<'de> for FieldsOf {
    type Value = Fields;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Fields, A::Error> {
        read_fields(access, self.0)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for FieldsOf {
    type Value = Fields;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields, D::Error> {
        d.deserialize_map(self)
    }
}

/// Every field of an object.
fn all_fields(_: &str) -> bool {
    true
}

/// The fields of a `session_meta` payload the importer reads ([`META_FIELDS`]).
fn meta_field(key: &str) -> bool {
    META_FIELDS.contains(&key)
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FieldsOf(all_fields))
    }
}

/// A `compacted` payload object: its `replacement_history` apart (its entries when it is an
/// array), the other fields in order.
struct CompactedPayload {
    fields: Fields,
    /// `Some` when the payload has a `replacement_history`; `Some(None)` when that is not
    /// an array.
    history: Option<Option<Vec<Entry>>>,
}

impl<'de> Deserialize<'de> for CompactedPayload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CompactedPayload;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<CompactedPayload, A::Error> {
                let mut fields: Vec<(String, Value)> = Vec::with_capacity(8);
                let mut history = None;
                while let Some(Key(key)) = access.next_key::<Key>()? {
                    if key == "replacement_history" {
                        once(&mut history, access.next_value::<History>()?.0)?;
                    } else {
                        push_field(&mut fields, key, &mut access)?;
                    }
                }
                Ok(CompactedPayload {
                    fields: Fields(fields),
                    history,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A `replacement_history` value: its entries when it is an array; any other value is checked
/// (refused where the whole parse refuses it) and dropped, as the importer drops it.
struct History(Option<Vec<Entry>>);

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = History;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_unit<E>(self) -> Result<History, E> {
                Ok(History(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<History, A::Error> {
                while access.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(History(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<History, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = access.next_element::<Entry>()? {
                    entries.push(entry);
                }
                Ok(History(Some(entries)))
            }
        }
        d.deserialize_any(V)
    }
}

/// An entry of a `replacement_history` array: an object's [`Fields`], or any other value
/// built as the whole parse builds it.
impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entry;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Entry, E> {
                Ok(Entry::Other(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Entry, E> {
                Ok(Entry::Other(Value::Number(v.into())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Entry, E> {
                Ok(Entry::Other(Value::Number(v.into())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Entry, E> {
                Ok(Entry::Other(
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<Entry, E> {
                Ok(Entry::Other(Value::String(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Entry, E> {
                Ok(Entry::Other(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<Entry, E> {
                Ok(Entry::Other(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Entry, A::Error> {
                let mut items = Vec::new();
                while let Some(SizedValue(v)) = access.next_element()? {
                    items.push(v);
                }
                Ok(Entry::Other(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Entry, A::Error> {
                read_fields(access, all_fields).map(Entry::Fields)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The types read here are the conversation's two, `session_meta` and exactly the skimmed
    /// ones.
    #[test]
    fn the_types_read_are_the_conversation_and_the_skimmed_ones() {
        assert_eq!(
            &READ_TYPES[..3],
            &["response_item", "compacted", "session_meta"]
        );
        assert_eq!(&READ_TYPES[3..], super::super::codex::SKIMMED_TYPES);
    }
}
