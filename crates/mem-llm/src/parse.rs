//! Robust parsing of the structured replies models give: JSON bare, in a code fence, or after
//! prose; wrong types are errors, never panics; ids the model invents are dropped and reported.

use serde_json::Value;

use crate::types::{Candidate, Memories, MemoryCategory};

/// Finds the first JSON object or array in `text`: the whole text, else a fenced code block
/// (```` ```json ```` or ```` ``` ````), else the first `{` or `[` from which a JSON value parses
/// (trailing prose ignored), else a reply cut off mid-value (see [`find_json_or_cut`]).
/// `None` when there is none.
pub fn find_json(text: &str) -> Option<Value> {
    find_json_or_cut(text).map(|(value, _)| value)
}

/// [`find_json`], telling whether the value was recovered from a reply that was cut off (a
/// model stopped by its `max_tokens` in the middle of a list): the value is then the reply's
/// prefix up to the last complete element of its outermost open list, with the open brackets
/// closed, so the complete elements are kept and the torn one is not (not even the complete
/// parts of a list inside it). `(value, true)` for such a recovery, `(value, false)` for a
/// whole value. Prose before the value may hold brackets of its own.
pub fn find_json_or_cut(text: &str) -> Option<(Value, bool)> {
    if let Some(value) = whole_or_fenced_json(text) {
        return Some((value, false));
    }
    let cut = repair_cut_json(text);
    // A whole value before the cut-off one wins; the scan does not start inside the cut-off
    // value, where it would take its first complete element for the reply.
    let limit = cut.as_ref().map_or(text.len(), |(start, _)| *start);
    if let Some(value) = first_parsing_json(&text[..limit]) {
        return Some((value, false));
    }
    if let Some((_, value)) = cut {
        return Some((value, true));
    }
    first_parsing_json(text).map(|value| (value, false))
}

/// A bracket still open at some point of [`repair_cut_json`]'s scan.
struct OpenBracket {
    /// `{` or `[`.
    byte: u8,
    /// Its byte offset in the text.
    start: usize,
    /// For a list: the byte offset just after its last complete element.
    last_element_end: Option<usize>,
}

/// A JSON value cut off at the end of `text`: the byte offset where it starts, and its prefix
/// up to the last complete element of its outermost open list that has one, closed. Brackets
/// that close (prose such as `see [1]`, a whole value) or do not match are passed over.
fn repair_cut_json(text: &str) -> Option<(usize, Value)> {
    let mut stack: Vec<OpenBracket> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            // Quotes of the prose between values do not open strings.
            b'"' if !stack.is_empty() => in_string = true,
            b'{' | b'[' => stack.push(OpenBracket {
                byte: b,
                start: i,
                last_element_end: None,
            }),
            b'}' | b']' => {
                let Some(open) = stack.pop() else {
                    continue;
                };
                if (open.byte == b'{') != (b == b'}') {
                    // Not JSON: start afresh from the next bracket.
                    stack.clear();
                    continue;
                }
                if let Some(parent) = stack.last_mut()
                    && parent.byte == b'['
                {
                    parent.last_element_end = Some(i + 1);
                }
            }
            _ => {}
        }
    }
    // What is still open now was cut off. The outermost list with a complete element: its
    // torn element (and all inside it) goes; the containers around it are closed.
    let list = stack
        .iter()
        .position(|o| o.byte == b'[' && o.last_element_end.is_some())?;
    let end = stack[list].last_element_end?;
    // The value starts at the outermost open bracket that parses once closed (brackets of
    // the prose before it may be open too).
    (0..=list).find_map(|from| {
        let mut repaired = text[stack[from].start..end].to_owned();
        for open in stack[from..=list].iter().rev() {
            repaired.push(if open.byte == b'{' { '}' } else { ']' });
        }
        serde_json::from_str::<Value>(&repaired)
            .ok()
            .map(|value| (stack[from].start, value))
    })
}

/// The whole text as JSON, else the first fenced code block that parses.
fn whole_or_fenced_json(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed)
        && (v.is_object() || v.is_array())
    {
        return Some(v);
    }
    let mut rest = trimmed;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let Some(end) = after[body_start..].find("```") else {
            break;
        };
        let body = after[body_start..body_start + end].trim();
        if let Ok(v) = serde_json::from_str::<Value>(body)
            && (v.is_object() || v.is_array())
        {
            return Some(v);
        }
        rest = &after[body_start + end + 3..];
    }
    None
}

/// The first JSON object or array that parses from some `{` or `[` of the text.
fn first_parsing_json(text: &str) -> Option<Value> {
    for (i, c) in text.char_indices() {
        if c == '{' || c == '[' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                return Some(v);
            }
        }
    }
    None
}

/// The fewest words (as [`check_summary`] counts them: stop words left out) a summary holds.
pub const MIN_SUMMARY_WORDS: usize = 3;

/// Words a summary and its conversation share by chance whatever was said: they do not count as
/// a mention.
const GENERIC_WORDS: &[&str] = &[
    "not", "please", "just", "also", "all", "any", "some", "now", "here", "okay", "yes", "ask",
    "asked", "let", "sure", "thank", "thanks", "want", "need", "like", "make", "would", "should",
    "could", "have", "has", "had", "been", "being", "were", "they", "them", "than", "very",
];

/// Sanity check of a summary a model wrote for `messages` (seed 000 §2's compaction summary):
/// it holds at least [`MIN_SUMMARY_WORDS`] words and mentions at least one word (4+ characters,
/// or a CJK pair) of the conversation's user requests, touched file names or commands. A
/// conversation with no such word is not checked for mentions.
///
/// Errors (as a reason string): too short; mentions nothing of the conversation.
pub fn check_summary(text: &str, messages: &[mem_core::Message]) -> Result<(), String> {
    let words = crate::offline::words(text);
    if words.len() < MIN_SUMMARY_WORDS {
        return Err(format!(
            "too short to be a summary ({} word(s), at least {MIN_SUMMARY_WORDS} expected)",
            words.len()
        ));
    }
    let telling = |w: &String| {
        let n = w.chars().count();
        let cjk = w.chars().all(|c| !c.is_ascii() && c.is_alphanumeric());
        (if cjk { n >= 2 } else { n >= 4 }) && !GENERIC_WORDS.contains(&w.as_str())
    };
    let salient: std::collections::HashSet<String> = crate::offline::salient_words(messages)
        .into_iter()
        .filter(telling)
        .collect();
    if salient.is_empty() || words.iter().any(|w| salient.contains(w)) {
        return Ok(());
    }
    Err("it mentions none of the requests, files or commands of the conversation".to_owned())
}

/// The outcome of parsing a structured reply: the value and what was dropped from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<T> {
    /// The usable value.
    pub value: T,
    /// Entries dropped (invented ids, wrong types, beyond the limit), described for the user.
    pub dropped: Vec<String>,
}

/// Parses a selection reply: `{"selected": ["a.md", ...]}` (also `ids`, `files`, `memories`),
/// or a bare array. Entries may be strings or objects with an `id`/`file`/`name` string.
/// Ids not among `candidates` (matched by id, or by name when unique), duplicates and entries
/// beyond `limit` are dropped and reported.
///
/// Errors (as a reason string): no JSON found, no list where one is expected.
pub fn parse_selection(
    text: &str,
    candidates: &[Candidate],
    limit: usize,
) -> Result<Parsed<Vec<String>>, String> {
    let value = find_json(text).ok_or_else(|| "no JSON found in the reply".to_owned())?;
    let list = match &value {
        Value::Array(items) => items,
        Value::Object(map) => {
            let key = ["selected", "ids", "files", "memories", "selection"]
                .iter()
                .find(|k| map.contains_key(**k))
                .ok_or_else(|| "expected a `selected` list in the JSON object".to_owned())?;
            match &map[*key] {
                Value::Array(items) => items,
                other => {
                    return Err(format!(
                        "`{key}` should be a list, found {}",
                        type_name(other)
                    ));
                }
            }
        }
        other => {
            return Err(format!(
                "expected a JSON list or object, found {}",
                type_name(other)
            ));
        }
    };
    let mut ids: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    for item in list {
        let raw = match item {
            Value::String(s) => s.trim().to_owned(),
            Value::Object(map) => match ["id", "file", "name"]
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
            {
                Some(s) => s.trim().to_owned(),
                None => {
                    dropped.push(format!("entry without an id: {item}"));
                    continue;
                }
            },
            other => {
                dropped.push(format!(
                    "entry of the wrong type ({}): {other}",
                    type_name(other)
                ));
                continue;
            }
        };
        let Some(id) = resolve_candidate(&raw, candidates) else {
            dropped.push(format!("not a candidate: {raw}"));
            continue;
        };
        if ids.contains(&id) {
            continue;
        }
        if ids.len() >= limit {
            dropped.push(format!("beyond the limit of {limit}: {id}"));
            continue;
        }
        ids.push(id);
    }
    Ok(Parsed {
        value: ids,
        dropped,
    })
}

fn resolve_candidate(raw: &str, candidates: &[Candidate]) -> Option<String> {
    if let Some(c) = candidates.iter().find(|c| c.id == raw) {
        return Some(c.id.clone());
    }
    // Models often drop the extension or a directory: accept a unique match.
    let matches: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| {
            c.name == raw
                || c.id.strip_suffix(".md") == Some(raw)
                || c.id.rsplit('/').next() == Some(raw)
        })
        .collect();
    match matches.as_slice() {
        [one] => Some(one.id.clone()),
        _ => None,
    }
}

/// Parses an extraction reply: a JSON object with the keys `preferences`, `corrections`,
/// `project`, `references` (the seed's Chinese headings and English headings are accepted as
/// keys too), each a list of strings; or, without JSON, the seed's markdown (`### 用户偏好` and
/// `- entry` lines). Missing categories are empty; non-string entries are dropped and reported.
///
/// Errors (as a reason string): no JSON object and no markdown sections; a category that is not
/// a list.
pub fn parse_memories(text: &str) -> Result<Parsed<Memories>, String> {
    let Some(value) = find_json(text) else {
        return parse_memories_markdown(text)
            .ok_or_else(|| "no JSON object and no `###` sections in the reply".to_owned());
    };
    let Value::Object(map) = value else {
        return Err(format!(
            "expected a JSON object, found {}",
            type_name(&value)
        ));
    };
    memories_from_map(&map)
}

/// The four lists of a JSON object ([`parse_memories`]).
fn memories_from_map(map: &serde_json::Map<String, Value>) -> Result<Parsed<Memories>, String> {
    let mut memories = Memories::default();
    let mut dropped = Vec::new();
    let mut recognised = false;
    for (key, entries) in map {
        let Some(category) = category_of(key) else {
            dropped.push(format!("unknown category: {key}"));
            continue;
        };
        recognised = true;
        let Value::Array(items) = entries else {
            return Err(format!(
                "`{key}` should be a list of strings, found {}",
                type_name(entries)
            ));
        };
        for item in items {
            match item {
                Value::String(s) if !s.trim().is_empty() => {
                    let entry = clean_entry(s);
                    let list = memories.get_mut(category);
                    if !list.iter().any(|e| e.eq_ignore_ascii_case(&entry)) {
                        list.push(entry);
                    }
                }
                Value::String(_) => {}
                other => dropped.push(format!(
                    "{key}: entry of the wrong type ({}): {other}",
                    type_name(other)
                )),
            }
        }
    }
    if !recognised && !map.is_empty() {
        return Err("none of the four memory categories in the JSON object".to_owned());
    }
    Ok(Parsed {
        value: memories,
        dropped,
    })
}

/// Keys under which a merge reply lists its operations (`memory` is mem0's).
const MERGE_KEYS: [&str; 4] = ["memory", "memories", "operations", "events"];

/// Parses an extraction reply of the merge prompt (`prompts/extract.v2.md`):
/// `{"memory": [{"event": "ADD", "category": "project", "text": "..."}, {"event": "UPDATE",
/// "id": 3, "text": "..."}, {"event": "DELETE", "id": 5}, {"event": "NONE", "id": 2}]}`
/// (also `memories` / `operations` / `events`, or a bare list). Events are matched without
/// case; an id may be a number or a string of digits.
///
/// `ids` are the request's [`crate::CurrentEntry`] ids. Dropped and reported: an UPDATE,
/// DELETE or NONE naming an id that is not among them (the model invented it), a second change
/// to one id, an ADD without a known category or text, an UPDATE without text, an unknown
/// event, an item that is not an object. An UPDATE to the entry's own text is a NONE.
/// A reply in the four-list form of [`parse_memories`] (no merge operations) is read as ADDs.
///
/// Errors (as a reason string): no JSON; neither a list of operations nor the four lists.
pub fn parse_merge(
    text: &str,
    entries: &[crate::CurrentEntry],
) -> Result<Parsed<Memories>, String> {
    let (value, cut) =
        find_json_or_cut(text).ok_or_else(|| "no JSON found in the reply".to_owned())?;
    let list = match &value {
        Value::Array(items) => items,
        Value::Object(map) => match MERGE_KEYS.iter().find(|k| map.contains_key(**k)) {
            Some(key) => match &map[*key] {
                Value::Array(items) => items,
                other => {
                    return Err(format!(
                        "`{key}` should be a list of operations, found {}",
                        type_name(other)
                    ));
                }
            },
            None => return memories_from_map(map),
        },
        other => {
            return Err(format!(
                "expected a JSON object, found {}",
                type_name(other)
            ));
        }
    };
    let mut memories = Memories::default();
    let mut dropped = Vec::new();
    if cut {
        dropped.push(format!(
            "the reply was cut off (the model's length limit): its {} complete operation(s) kept, the torn one dropped",
            list.len()
        ));
    }
    let mut touched: Vec<u32> = Vec::new();
    for item in list {
        let Value::Object(op) = item else {
            dropped.push(format!(
                "operation of the wrong type ({}): {item}",
                type_name(item)
            ));
            continue;
        };
        let event = op
            .get("event")
            .or_else(|| op.get("action"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_ascii_uppercase();
        let text = op
            .get("text")
            .or_else(|| op.get("memory"))
            .and_then(Value::as_str)
            .map(clean_entry)
            .filter(|t| !t.is_empty());
        let id = op.get("id").and_then(|v| match v {
            Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            Value::String(s) => s.trim().parse::<u32>().ok(),
            _ => None,
        });
        if event == "ADD" {
            let category = op
                .get("category")
                .and_then(Value::as_str)
                .and_then(category_of);
            match (category, text) {
                (Some(category), Some(text)) => {
                    let list = memories.get_mut(category);
                    if !list.iter().any(|e| e.eq_ignore_ascii_case(&text)) {
                        list.push(text);
                    }
                }
                (None, _) => dropped.push(format!("ADD without a known category: {item}")),
                (_, None) => dropped.push(format!("ADD without text: {item}")),
            }
            continue;
        }
        if !matches!(event.as_str(), "UPDATE" | "DELETE" | "NONE") {
            dropped.push(format!("unknown event: {item}"));
            continue;
        }
        let Some(id) = id else {
            dropped.push(format!("{event} without an id: {item}"));
            continue;
        };
        let Some(current) = entries.iter().find(|e| e.id == id) else {
            dropped.push(format!(
                "{event} of id {id}: no such entry (invented by the model)"
            ));
            continue;
        };
        if event == "NONE" {
            continue;
        }
        if touched.contains(&id) {
            dropped.push(format!("{event} of id {id}: a second change to one entry"));
            continue;
        }
        match event.as_str() {
            "DELETE" => {
                touched.push(id);
                memories.changes.push(crate::EntryChange::Delete { id });
            }
            _ => match text {
                Some(text) if text != current.text => {
                    touched.push(id);
                    memories
                        .changes
                        .push(crate::EntryChange::Update { id, text });
                }
                Some(_) => {}
                None => dropped.push(format!("UPDATE of id {id} without text")),
            },
        }
    }
    Ok(Parsed {
        value: memories,
        dropped,
    })
}

fn clean_entry(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("- ")
        .to_owned()
}

fn category_of(key: &str) -> Option<MemoryCategory> {
    let k = key
        .trim()
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .replace([' ', '-'], "_");
    MemoryCategory::ALL.into_iter().find(|c| {
        k == c.key()
            || k == c.heading()
            || k == c.heading_en().to_lowercase().replace(' ', "_")
            || matches!(
                (c, k.as_str()),
                (
                    MemoryCategory::Preference,
                    "user_preferences" | "preference"
                ) | (MemoryCategory::Correction, "correction" | "feedback")
                    | (MemoryCategory::Project, "project_knowledge" | "projects")
                    | (MemoryCategory::Reference, "reference" | "links")
            )
    })
}

fn parse_memories_markdown(text: &str) -> Option<Parsed<Memories>> {
    let mut memories = Memories::default();
    let mut current: Option<MemoryCategory> = None;
    let mut seen = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(heading) = line.strip_prefix("###") {
            current = category_of(heading);
            seen |= current.is_some();
        } else if let (Some(cat), Some(entry)) = (
            current,
            line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")),
        ) && !entry.trim().is_empty()
        {
            memories.get_mut(cat).push(clean_entry(entry));
        }
    }
    seen.then_some(Parsed {
        value: memories,
        dropped: Vec::new(),
    })
}

/// Parses a skill reply: `{"name", "description", "steps": [{"text", "sources": [ids]}],
/// "pitfalls": [...]}` (a point may also be a bare string, then it cites no source and is
/// dropped). Source ids not among `sources` are dropped and reported; a point left without a
/// source is dropped (every point must be traceable); text is put on one line, `<`/`>` removed.
///
/// Errors (as a reason string): no JSON object; an empty description; no step and no pitfall
/// left.
pub fn parse_skill(
    text: &str,
    sources: &[crate::SkillSource],
) -> Result<Parsed<crate::SkillDraft>, String> {
    let value = find_json(text).ok_or_else(|| "no JSON found in the reply".to_owned())?;
    let Value::Object(map) = value else {
        return Err(format!(
            "expected a JSON object, found {}",
            type_name(&value)
        ));
    };
    let clean = |s: &str| {
        s.replace(['<', '>'], "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .map(clean)
        .unwrap_or_default();
    let description = map
        .get("description")
        .and_then(Value::as_str)
        .map(clean)
        .unwrap_or_default();
    if description.is_empty() {
        return Err("the reply has no description".to_owned());
    }
    let mut dropped = Vec::new();
    let mut lists = [Vec::new(), Vec::new()];
    for (key, out) in ["steps", "pitfalls"].into_iter().zip(lists.iter_mut()) {
        let items = match map.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(format!(
                    "`{key}` should be a list, found {}",
                    type_name(other)
                ));
            }
        };
        for item in items {
            let Value::Object(point) = item else {
                dropped.push(format!("{key}: a point without sources: {item}"));
                continue;
            };
            let text = point
                .get("text")
                .and_then(Value::as_str)
                .map(clean)
                .unwrap_or_default();
            if text.is_empty() {
                dropped.push(format!("{key}: a point without text"));
                continue;
            }
            let mut cited: Vec<String> = Vec::new();
            let raw: Vec<&Value> = match point.get("sources").or_else(|| point.get("source")) {
                Some(Value::Array(ids)) => ids.iter().collect(),
                Some(one @ Value::String(_)) => vec![one],
                _ => Vec::new(),
            };
            for id in raw {
                let Some(id) = id.as_str().map(str::trim) else {
                    dropped.push(format!("{key}: a source of the wrong type: {id}"));
                    continue;
                };
                if !sources.iter().any(|s| s.id == id) {
                    dropped.push(format!("{key}: not a source id: {id}"));
                    continue;
                }
                if !cited.iter().any(|c| c == id) {
                    cited.push(id.to_owned());
                }
            }
            if cited.is_empty() {
                dropped.push(format!("{key}: a point citing no source: {text}"));
                continue;
            }
            out.push(crate::SkillPoint {
                text,
                sources: cited,
            });
        }
    }
    let [steps, pitfalls] = lists;
    if steps.is_empty() && pitfalls.is_empty() {
        return Err("the reply has no step and no pitfall citing a source".to_owned());
    }
    Ok(Parsed {
        value: crate::SkillDraft {
            name,
            description,
            steps,
            pitfalls,
        },
        dropped,
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidates() -> Vec<Candidate> {
        ["testing.md", "style.md", "deploy.md"]
            .iter()
            .map(|id| Candidate {
                user_level: false,
                id: (*id).to_owned(),
                name: id.trim_end_matches(".md").to_owned(),
                ..Candidate::default()
            })
            .collect()
    }

    #[test]
    fn summaries_must_be_long_enough_and_on_topic() {
        use mem_core::{ContentBlock, Message, Role};
        let conversation = vec![
            Message::user("Always use pnpm. Fix the build please."),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::tool_use(
                    "t1",
                    "Edit",
                    json!({"file_path": "/repo/src/tsconfig.json"}),
                )],
            ),
        ];
        let ok = |t: &str| check_summary(t, &conversation);
        assert_eq!(
            ok("The user asked to fix the build; pnpm is required."),
            Ok(())
        );
        assert_eq!(ok("Edited tsconfig so that it compiles again now."), Ok(()));
        assert!(ok("<<<not what you asked for>>>").is_err());
        assert!(ok("done").unwrap_err().starts_with("too short"));
        assert!(
            ok("As an AI model I cannot help with that request, sorry.")
                .unwrap_err()
                .contains("mentions none")
        );
        // Chinese requests are matched by character pairs.
        let zh = vec![Message::user("请修复构建脚本")];
        assert_eq!(check_summary("用户要求修复构建脚本，已完成。", &zh), Ok(()));
        assert!(check_summary("今天天气很好，我们去公园散步吧。", &zh).is_err());
        // Nothing to compare with: only the length is checked.
        assert_eq!(check_summary("A short but real summary.", &[]), Ok(()));
    }

    #[test]
    fn json_is_found_bare_fenced_and_after_prose() {
        assert_eq!(find_json(r#"{"a":1}"#), Some(json!({"a": 1})));
        assert_eq!(
            find_json("Sure!\n```json\n[1, 2]\n```\nDone."),
            Some(json!([1, 2]))
        );
        assert_eq!(
            find_json(r#"Here you go: {"selected": ["x"]} hope it helps {"#),
            Some(json!({"selected": ["x"]}))
        );
        assert_eq!(find_json("no json here [at all"), None);
    }

    #[test]
    fn selection_drops_invented_ids_and_reports_them() {
        let parsed = parse_selection(
            r#"{"selected": ["style.md", "invented.md", "testing", 7, "style.md"]}"#,
            &candidates(),
            5,
        )
        .unwrap();
        assert_eq!(parsed.value, vec!["style.md", "testing.md"]);
        assert_eq!(
            parsed.dropped,
            vec![
                "not a candidate: invented.md",
                "entry of the wrong type (a number): 7"
            ]
        );
    }

    #[test]
    fn selection_respects_the_limit() {
        let parsed =
            parse_selection(r#"["style.md","testing.md","deploy.md"]"#, &candidates(), 2).unwrap();
        assert_eq!(parsed.value, vec!["style.md", "testing.md"]);
        assert_eq!(parsed.dropped, vec!["beyond the limit of 2: deploy.md"]);
    }

    #[test]
    fn selection_wrong_types_are_errors() {
        assert_eq!(
            parse_selection(r#"{"selected": "style.md"}"#, &candidates(), 5),
            Err("`selected` should be a list, found a string".to_owned())
        );
        assert_eq!(
            parse_selection("I think style.md", &candidates(), 5),
            Err("no JSON found in the reply".to_owned())
        );
        assert!(parse_selection(r#"{"other": []}"#, &candidates(), 5).is_err());
    }

    fn current() -> Vec<crate::CurrentEntry> {
        vec![
            crate::CurrentEntry {
                id: 1,
                category: MemoryCategory::Preference,
                text: "Always use npm".into(),
            },
            crate::CurrentEntry {
                id: 2,
                category: MemoryCategory::Project,
                text: "Tests live in tests/".into(),
            },
        ]
    }

    #[test]
    fn a_reply_cut_off_by_the_length_limit_keeps_its_complete_elements() {
        // What a small model stopped by `max_tokens` sends: a list torn inside an element, with
        // brackets and an escaped quote inside strings.
        let reply = "{\n \"memory\": [\n  {\"event\": \"ADD\", \"id\": null, \"category\": \"references\", \"text\": \"Docs [v2] at https://x.dev/\\\"a]\"},\n  {\"event\": \"DELETE\", \"id\": 2, \"category\": null, \"text\": null},\n  {\"event\": \"NONE\", \"id\": null, \"categ";
        let (value, cut) = find_json_or_cut(reply).unwrap();
        assert!(cut);
        assert_eq!(value["memory"].as_array().map(Vec::len), Some(2));
        let parsed = parse_merge(reply, &current()).unwrap();
        assert_eq!(
            parsed.value.changes,
            vec![crate::EntryChange::Delete { id: 2 }]
        );
        assert_eq!(
            parsed.value.references,
            vec!["Docs [v2] at https://x.dev/\"a]"]
        );
        assert!(
            parsed.dropped[0].starts_with("the reply was cut off"),
            "{:?}",
            parsed.dropped
        );

        // Torn inside the first element: nothing complete to keep.
        let torn = r#"{"memory": [{"event": "ADD", "text": "half"#;
        assert_eq!(find_json_or_cut(torn), None);
        assert_eq!(
            parse_merge(torn, &current()).map(|p| p.value),
            Err("no JSON found in the reply".to_owned())
        );
        // A whole value is not reported as cut; mismatched brackets are not repaired.
        assert_eq!(
            find_json_or_cut(r#"{"memory": []}"#).map(|(_, cut)| cut),
            Some(false)
        );
        assert_eq!(find_json_or_cut(r#"{"memory": [{"a": 1]"#), None);
    }

    #[test]
    fn a_cut_reply_after_prose_with_brackets_is_still_repaired() {
        let ops = r#"{"memory": [{"event": "ADD", "category": "project", "text": "Uses uv"}, {"event": "DELETE", "id": 2}, {"event": "ADD", "categ"#;
        // Closed brackets in the prose before the reply, and an unclosed one.
        for prose in ["See [the docs] (v2). ", "Answer [draft: "] {
            let reply = format!("{prose}{ops}");
            let (value, cut) = find_json_or_cut(&reply).unwrap();
            assert!(cut, "{prose}");
            assert_eq!(value["memory"].as_array().map(Vec::len), Some(2), "{prose}");
            let parsed = parse_merge(&reply, &current()).unwrap();
            assert_eq!(parsed.value.project, vec!["Uses uv"]);
            assert_eq!(
                parsed.value.changes,
                vec![crate::EntryChange::Delete { id: 2 }]
            );
        }
    }

    #[test]
    fn a_torn_element_is_dropped_whole_even_with_complete_lists_inside() {
        // The torn UPDATE holds a list with a complete element: the UPDATE still goes.
        let reply = r#"{"memory": [{"event": "DELETE", "id": 2}, {"event": "UPDATE", "id": 1, "text": "Use pnpm", "from": [{"m": 1}, {"m"#;
        let (value, cut) = find_json_or_cut(reply).unwrap();
        assert!(cut);
        assert_eq!(
            value,
            serde_json::json!({"memory": [{"event": "DELETE", "id": 2}]})
        );
        // Nested lists that closed are kept inside a complete element.
        let reply = r#"[{"a": [[1], [2]]}, {"b": [[3], ["#;
        assert_eq!(
            find_json_or_cut(reply),
            Some((serde_json::json!([{"a": [[1], [2]]}]), true))
        );
    }

    #[test]
    fn a_whole_value_before_a_cut_one_wins() {
        let reply = r#"{"memory": []} and again: {"memory": [{"event": "DELETE", "id": 2}, {"ev"#;
        assert_eq!(
            find_json_or_cut(reply),
            Some((serde_json::json!({"memory": []}), false))
        );
        // Prose after a whole value, with brackets.
        let reply = r#"{"memory": [{"event": "DELETE", "id": 2}]} (see [1] and [{"x": 1}, "#;
        assert_eq!(
            find_json_or_cut(reply).map(|(v, cut)| (v["memory"].as_array().map(Vec::len), cut)),
            Some((Some(1), false))
        );
    }

    #[test]
    fn merge_operations_are_checked_against_the_ids() {
        let reply = r#"Sure. {"memory": [
            {"event": "UPDATE", "id": 1, "text": "Always use pnpm, not npm"},
            {"event": "delete", "id": "2"},
            {"event": "DELETE", "id": 9},
            {"event": "UPDATE", "id": 1, "text": "again"},
            {"event": "ADD", "category": "references", "text": "Docs: https://x.dev"},
            {"event": "ADD", "category": "gossip", "text": "nope"},
            {"event": "NONE", "id": 1},
            {"event": "MERGE", "id": 1},
            "junk"
        ]}"#;
        let parsed = parse_merge(reply, &current()).unwrap();
        assert_eq!(
            parsed.value.changes,
            vec![
                crate::EntryChange::Update {
                    id: 1,
                    text: "Always use pnpm, not npm".into()
                },
                crate::EntryChange::Delete { id: 2 },
            ]
        );
        assert_eq!(parsed.value.references, vec!["Docs: https://x.dev"]);
        assert_eq!(parsed.dropped.len(), 5, "{:?}", parsed.dropped);
        assert!(parsed.dropped[0].starts_with("DELETE of id 9: no such entry"));
        assert!(parsed.dropped[1].contains("a second change"));
        assert!(parsed.dropped[2].starts_with("ADD without a known category"));
        assert!(parsed.dropped[3].starts_with("unknown event"));
        assert!(parsed.dropped[4].starts_with("operation of the wrong type"));
    }

    #[test]
    fn merge_accepts_the_four_lists_and_refuses_junk() {
        let parsed = parse_merge(r#"{"project": ["Uses uv"]}"#, &current()).unwrap();
        assert_eq!(parsed.value.project, vec!["Uses uv"]);
        assert!(parsed.value.changes.is_empty());
        assert!(parse_merge("no idea", &current()).is_err());
        assert!(parse_merge(r#"{"memory": "x"}"#, &current()).is_err());
        assert!(parse_merge(r#"{"weather": []}"#, &current()).is_err());
        // An update to the same text is no change.
        let same = parse_merge(
            r#"[{"event": "UPDATE", "id": 2, "text": "Tests live in tests/"}]"#,
            &current(),
        )
        .unwrap();
        assert!(same.value.is_empty() && same.dropped.is_empty());
    }

    #[test]
    fn memories_from_json_with_any_heading_style() {
        let parsed = parse_memories(
            r#"```json
{"preferences": ["use snake_case"], "纠正反馈": ["it is Python, not Go"], "Project knowledge": ["uses uv"], "references": [3]}
```"#,
        )
        .unwrap();
        assert_eq!(parsed.value.preferences, vec!["use snake_case"]);
        assert_eq!(parsed.value.corrections, vec!["it is Python, not Go"]);
        assert_eq!(parsed.value.project, vec!["uses uv"]);
        assert!(parsed.value.references.is_empty());
        assert_eq!(
            parsed.dropped,
            vec!["references: entry of the wrong type (a number): 3"]
        );
    }

    #[test]
    fn memories_from_markdown() {
        let parsed = parse_memories(
            "### 用户偏好\n- commit message 用英文\n\n### References\n- https://x.y\n",
        )
        .unwrap();
        assert_eq!(parsed.value.preferences, vec!["commit message 用英文"]);
        assert_eq!(parsed.value.references, vec!["https://x.y"]);
    }

    #[test]
    fn memories_wrong_types_are_errors() {
        assert!(parse_memories(r#"{"preferences": "x"}"#).is_err());
        assert!(parse_memories("[1,2]").is_err());
        assert!(parse_memories("nothing useful").is_err());
        assert!(parse_memories(r#"{"weather": ["sunny"]}"#).is_err());
    }
}
