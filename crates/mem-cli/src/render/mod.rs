//! The rendering more than one command shares: what came from a transcript, a memory, a note,
//! a model or a user's file printed as text made terminal-safe with [`mem_core::terminal`], JSON
//! written so that a terminal showing it acts on none of its characters, ages and times, search
//! hits, instruction warnings and one-line messages.

use std::io::{self, Write};

use mem_core::terminal::is_unsafe_char;
pub use mem_core::terminal::{safe, safe_line};
use mem_core::{ContentBlock, Message, ToolResultContent};
use serde::Serialize;
use serde_json::{Value, json};

/// `value` as pretty-printed JSON in which every character a terminal would act on
/// ([`is_unsafe_char`]: C1 controls, DEL, bidi controls, line separators, invisible characters;
/// serde_json already escapes the C0 controls) is written as a `\uXXXX` escape. The JSON means
/// exactly the same: such characters only occur inside strings.
///
/// Errors: serialisation's (a map with non-string keys).
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(escape_json(serde_json::to_string_pretty(value)?))
}

/// Like [`json_pretty`], on one line (for JSON Lines).
///
/// Errors: serialisation's.
pub fn json_line<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(escape_json(serde_json::to_string(value)?))
}

/// Writes [`json_pretty`] of `value` and a newline to `out`.
///
/// Errors: serialisation's, and `out`'s.
pub fn write_json<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> io::Result<()> {
    let text = json_pretty(value).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

/// `n` with the noun that agrees with it: `1 note`, `2 notes`, `0 notes`.
pub fn plural<N: std::fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

/// [`safe`] for multi-line text that may have Windows line ends: `\r\n` prints as `\n` (a CR
/// before a line feed moves nothing), any other CR is escaped.
pub fn safe_text(text: &str) -> String {
    if text.contains("\r\n") {
        safe(&text.replace("\r\n", "\n")).into_owned()
    } else {
        safe(text).into_owned()
    }
}

/// A preview in double quotes, made one-line safe: `"ls -la"`. Quotes and backslashes inside are
/// left as they are; only characters a terminal would act on are escaped.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", safe_line(text))
}

pub use mewmem::ops::{age, hit_json};

/// An instruction loader's warning as JSON: `{file, line, kind, message}`.
pub fn warning_json(w: &mem_instructions::Warning) -> Value {
    json!({ "file": w.file, "line": w.line, "kind": format!("{:?}", w.kind), "message": w.message })
}

/// Whitespace collapsed, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    mem_session::shorten(&collapsed, max)
}

/// `  12 assistant  text+tool_use:Bash  "let me look" | ls -la`
pub fn render_message(index: usize, m: &Message) -> String {
    // Block kinds in order, a run of the same kind written once with its count: `text*3`.
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for b in &m.content {
        let kind = match b {
            ContentBlock::ToolUse { name, .. } => format!("tool_use:{}", safe_line(name)),
            ContentBlock::ToolResult { .. } if b.is_error() => "tool_result!".to_owned(),
            other => other.kind().to_owned(),
        };
        match kinds.last_mut() {
            Some((last, n)) if *last == kind => *n += 1,
            _ => kinds.push((kind, 1)),
        }
    }
    let kinds: Vec<String> = kinds
        .into_iter()
        .map(|(k, n)| if n == 1 { k } else { format!("{k}*{n}") })
        .collect();
    let mut marks = String::new();
    if m.metadata.contains_key(mem_session::COMPACT_SUMMARY_MARKER) {
        marks.push_str(" [summary]");
    }
    format!(
        "{index:>4} {:<9} {:<28} {}{marks}",
        m.role.as_str(),
        kinds.join("+"),
        preview(m)
    )
}

/// The most telling text of a message, on one line.
fn preview(m: &Message) -> String {
    for b in &m.content {
        match b {
            ContentBlock::Text { text, .. } if !text.trim().is_empty() => {
                return quoted(&one_line(text, 60));
            }
            ContentBlock::ToolUse { input, .. } if !input.is_null() => {
                return safe_line(&one_line(&tool_input_preview(input), 60)).into_owned();
            }
            ContentBlock::ToolResult { content, .. } => {
                let text = match content {
                    ToolResultContent::Text(s) => s.clone(),
                    ToolResultContent::Blocks(_) | ToolResultContent::Absent => content.text(),
                };
                return format!("=> {}", quoted(&one_line(&text, 56)));
            }
            ContentBlock::Thinking { thinking, .. } if !thinking.trim().is_empty() => {
                return format!("({})", safe_line(&one_line(thinking, 58)));
            }
            _ => {}
        }
    }
    String::new()
}

/// The argument a person would look for first: a command, a path, a pattern, a URL.
fn tool_input_preview(input: &Value) -> String {
    for key in [
        "command",
        "cmd",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ] {
        match input.get(key) {
            Some(Value::String(s)) => return s.clone(),
            Some(Value::Array(items)) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect();
                return parts.join(" ");
            }
            _ => {}
        }
    }
    input.to_string()
}

fn escape_json(text: String) -> String {
    // Outside strings, serde_json writes only ASCII structure and `\n` (pretty printing).
    let unsafe_char = |c: char| c != '\n' && is_unsafe_char(c);
    if !text.contains(unsafe_char) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            // Every such character is in the Basic Multilingual Plane: one `\uXXXX`.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_what_a_terminal_acts_on_and_means_the_same() {
        let value =
            json!({"title": "evil\u{202e}txt \u{1b}[2J del\u{7f} c1\u{9b} café 👩\u{200d}💻"});
        let text = json_pretty(&value).unwrap();
        assert!(
            !text.chars().any(|c| c != '\n' && is_unsafe_char(c)),
            "{text}"
        );
        assert!(
            text.contains("\\u202e") && text.contains("café 👩\u{200d}💻"),
            "{text}"
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        let line = json_line(&value).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), value);
    }

    #[test]
    fn windows_line_ends_print_as_line_ends() {
        assert_eq!(safe_text("a\r\nb\rc\u{7}\n"), "a\nb\\u{d}c\\u{7}\n");
    }

    #[test]
    fn previews_escape_controls_only() {
        assert_eq!(quoted("a\u{1b}[2Jb"), "\"a\\u{1b}[2Jb\"");
        assert_eq!(
            quoted("e\u{301} \"x\" 👩\u{200d}💻"),
            "\"e\u{301} \"x\" 👩\u{200d}💻\""
        );
    }
}
