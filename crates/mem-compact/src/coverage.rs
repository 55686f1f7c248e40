//! What a summary must not lose: the user's requests, the files touched, the commands run and the
//! errors seen in the compacted prefix. [`facts`] lists them; [`missing`] finds those a summary
//! does not mention; [`appendix`] lists those under the summary (at most [`APPENDIX_MAX_ITEMS`]
//! per section, the rest counted), whatever the summariser (the offline engine caps its lists at
//! 20 entries; a model may skip anything).
//!
//! An item counts as mentioned when its key (its first [`KEY_CHARS`] characters on one line,
//! markup removed) is in the summary with whitespace collapsed.

use mem_core::{ContentBlock, Message, Role};
use mem_llm::offline::{ToolKind, classify_tool};
use serde_json::Value;

use crate::split::is_user_request;
use crate::trim::head;

/// Characters of an item compared against the summary.
pub const KEY_CHARS: usize = 80;
/// Characters of an item written in the appendix.
pub const ITEM_CHARS: usize = 200;
/// Items listed per section of the appendix (the most recent ones); the rest are counted. Keeps
/// the appendix to a few hundred tokens whatever the prefix.
pub const APPENDIX_MAX_ITEMS: usize = 5;

/// The facts of a prefix, in order of first appearance, without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The user's requests (one line each).
    pub requests: Vec<String>,
    /// Paths of files read, edited or written.
    pub files: Vec<String>,
    /// Commands run (first line).
    pub commands: Vec<String>,
    /// Errors (tool name and first line of the error).
    pub errors: Vec<String>,
}

impl Facts {
    /// `true` when there is nothing.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
            && self.files.is_empty()
            && self.commands.is_empty()
            && self.errors.is_empty()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.requests.len() + self.files.len() + self.commands.len() + self.errors.len()
    }
}

/// Removes `<system-reminder>…</system-reminder>` blocks and the angle-bracket tags of other
/// markup (keeping the text between them), then collapses whitespace.
pub fn plain(text: &str) -> String {
    let mut s = text.to_owned();
    while let Some(a) = s.find("<system-reminder>") {
        let end = s[a..]
            .find("</system-reminder>")
            .map_or(s.len(), |e| a + e + "</system-reminder>".len());
        s.replace_range(a..end, " ");
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        match after.find('>') {
            // A tag: `<name ...>` or `</name>` with no space right after `<`.
            Some(close)
                if close > 1
                    && after[1..2]
                        .chars()
                        .all(|c| c.is_ascii_alphabetic() || c == '/')
                    && !after[..close].contains('\n') =>
            {
                out.push(' ');
                rest = &after[close + 1..];
            }
            _ => {
                out.push('<');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn first_line(text: &str) -> String {
    let p = plain_lines(text);
    p.into_iter().next().unwrap_or_default()
}

/// Non-empty lines of `text` with markup removed.
fn plain_lines(text: &str) -> Vec<String> {
    text.lines().map(plain).filter(|l| !l.is_empty()).collect()
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

/// The facts of `messages` (see [`Facts`]).
pub fn facts(messages: &[Message]) -> Facts {
    let mut f = Facts::default();
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for m in messages {
        if is_user_request(m) {
            push_unique(&mut f.requests, plain(&m.text_content()));
        }
        for b in &m.content {
            match b {
                ContentBlock::ToolUse {
                    id, name, input, ..
                } if m.role == Role::Assistant => {
                    names.insert(id, name);
                    for key in ["file_path", "notebook_path"] {
                        if let Some(Value::String(p)) = input.get(key) {
                            push_unique(&mut f.files, p.clone());
                        }
                    }
                    if classify_tool(name) == ToolKind::Command
                        && let Some(Value::String(cmd)) =
                            input.get("command").or_else(|| input.get("cmd"))
                    {
                        push_unique(&mut f.commands, first_line(cmd));
                    }
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if b.is_error() => {
                    let line = first_line(&content.text());
                    if !line.is_empty() {
                        let tool = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                        push_unique(&mut f.errors, format!("{tool}: {line}"));
                    }
                }
                _ => {}
            }
        }
    }
    f
}

/// The key of an item: its first [`KEY_CHARS`] characters, whitespace collapsed.
pub fn key(item: &str) -> String {
    let collapsed = item.split_whitespace().collect::<Vec<_>>().join(" ");
    head(&collapsed, KEY_CHARS).trim_end().to_owned()
}

/// The items of `facts` whose key is not in `text` (errors are looked up without their
/// `tool: ` label).
pub fn missing(facts: &Facts, text: &str) -> Facts {
    let hay = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let absent = |items: &[String], strip_label: bool| -> Vec<String> {
        items
            .iter()
            .filter(|item| {
                let probe = if strip_label {
                    item.split_once(": ")
                        .map_or(item.as_str(), |(_, rest)| rest)
                } else {
                    item.as_str()
                };
                !hay.contains(&key(probe))
            })
            .cloned()
            .collect()
    };
    Facts {
        requests: absent(&facts.requests, false),
        files: absent(&facts.files, false),
        commands: absent(&facts.commands, false),
        errors: absent(&facts.errors, true),
    }
}

fn item(s: &str) -> String {
    let h = head(s, ITEM_CHARS);
    if h.len() < s.len() {
        format!("{h}…")
    } else {
        h.to_owned()
    }
}

/// The appendix listing `missing` items under the summary, at most [`APPENDIX_MAX_ITEMS`] (the
/// latest) per section with a count of the others; empty when nothing is missing.
pub fn appendix(missing: &Facts) -> String {
    if missing.is_empty() {
        return String::new();
    }
    let mut out = String::from("Also in the compacted part (not listed above):\n");
    let mut section = |title: &str, items: &[String], code: bool| {
        if items.is_empty() {
            return;
        }
        out.push_str(title);
        out.push_str(":\n");
        let omitted = items.len().saturating_sub(APPENDIX_MAX_ITEMS);
        if omitted > 0 {
            out.push_str(&format!("- ({omitted} earlier not listed)\n"));
        }
        for i in &items[omitted..] {
            if code {
                out.push_str(&format!("- `{}`\n", item(i)));
            } else {
                out.push_str(&format!("- {}\n", item(i)));
            }
        }
    };
    section("Requests", &missing.requests, false);
    section("Files", &missing.files, false);
    section("Commands", &missing.commands, true);
    section("Errors", &missing.errors, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn markup_is_removed() {
        assert_eq!(
            plain("<system-reminder>x\ny</system-reminder>fix <b>it</b> a < b"),
            "fix it a < b"
        );
        assert_eq!(plain("<command-name>/model</command-name>"), "/model");
    }

    #[test]
    fn missing_items_are_listed() {
        let messages = vec![
            Message::user("please fix the build"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::tool_use("t1", "Bash", json!({"command": "cargo build\necho"})),
                    ContentBlock::tool_use("t2", "Read", json!({"file_path": "src/a.rs"})),
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("t1", "<e>error: boom</e>\nmore", true),
                    ContentBlock::tool_result("t2", "ok", false),
                ],
            ),
        ];
        let f = facts(&messages);
        assert_eq!(f.requests, ["please fix the build"]);
        assert_eq!(f.files, ["src/a.rs"]);
        assert_eq!(f.commands, ["cargo build"]);
        assert_eq!(f.errors, ["Bash: error: boom"]);
        let m = missing(&f, "User asked: please fix the build. Ran `cargo build`.");
        assert_eq!(m.requests, Vec::<String>::new());
        assert_eq!(m.files, ["src/a.rs"]);
        assert_eq!(m.errors, ["Bash: error: boom"]);
        assert_eq!(
            appendix(&m),
            "Also in the compacted part (not listed above):\nFiles:\n- src/a.rs\nErrors:\n- Bash: error: boom\n"
        );
        let full = format!(
            "User asked: please fix the build. Ran `cargo build`.\n{}",
            appendix(&m)
        );
        assert!(missing(&f, &full).is_empty());
    }
}
