//! The one-line rendering of a message, shared by `mem session show|resume` and
//! `mem compact sweep`: its role, its blocks' kinds and the most telling text.

use mem_core::{ContentBlock, Message, ToolResultContent};
use mem_session::shorten;
use serde_json::Value;

use crate::output::{quoted, safe_line};

/// Whitespace collapsed, cut to `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    shorten(&collapsed, max)
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
