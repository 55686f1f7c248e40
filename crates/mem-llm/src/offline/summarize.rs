//! Offline summary: the OMC statistics summary (seed 003, "按消息类型统计") plus what a reader of
//! the compacted conversation needs: the user's requests, files touched, commands run, errors.

use std::collections::HashMap;

use mem_core::{ContentBlock, Message, Role};

use super::text::{first_line, one_line, shorten, strip_markup, user_text};
use super::tools::{FileOp, ToolKind, classify_tool, command_of, touched_file};

/// The most entries listed per section; older entries beyond it are counted, not listed.
pub const MAX_LIST_ITEMS: usize = 20;
const REQUEST_CHARS: usize = 200;
const COMMAND_CHARS: usize = 120;
const ERROR_CHARS: usize = 160;

/// Message counts by kind, the statistics of seed 003's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageStats {
    /// Messages summarised.
    pub messages: usize,
    /// Messages from the user that carry typed text (not only tool results).
    pub user_messages: usize,
    /// Messages from the assistant.
    pub assistant_messages: usize,
    /// Tool calls that read a file.
    pub file_reads: usize,
    /// Tool calls that ran a command.
    pub commands: usize,
    /// Tool results marked as errors.
    pub errors: usize,
    /// Tool calls that searched.
    pub searches: usize,
    /// Calls of external functions (MCP).
    pub function_calls: usize,
    /// Other tool calls.
    pub other_tools: usize,
}

/// Counts messages by kind (see [`MessageStats`]).
pub fn stats(messages: &[Message]) -> MessageStats {
    let mut s = MessageStats {
        messages: messages.len(),
        ..MessageStats::default()
    };
    for message in messages {
        match message.role {
            Role::User if user_text(message).is_some() => s.user_messages += 1,
            Role::Assistant => s.assistant_messages += 1,
            _ => {}
        }
        for block in &message.content {
            match block {
                ContentBlock::ToolUse { name, .. } => match classify_tool(name) {
                    ToolKind::FileRead => s.file_reads += 1,
                    ToolKind::Command => s.commands += 1,
                    ToolKind::Search => s.searches += 1,
                    ToolKind::FunctionCall => s.function_calls += 1,
                    ToolKind::Other => s.other_tools += 1,
                },
                b if b.is_error() => s.errors += 1,
                _ => {}
            }
        }
    }
    s
}

/// The offline summary of `messages`, sections in a fixed order, empty sections omitted:
///
/// ```text
/// Summary of 12 earlier messages (3 from the user, 6 from the assistant).
///
/// Statistics: file reads 2, commands 3, errors 1, searches 1, function calls 0, other tools 2
///
/// User requests:
/// 1. <request, one line, at most 200 characters>
///
/// Files touched:
/// - src/lib.rs (read, edited)
///
/// Commands run:
/// - `cargo test` (×2)
///
/// Errors seen:
/// - Bash: <first line of the error, at most 160 characters>
/// ```
///
/// Lists keep the most recent [`MAX_LIST_ITEMS`] entries (files: the first ones) and say how
/// many were left out.
pub fn summarize(messages: &[Message]) -> String {
    let s = stats(messages);
    let mut requests = Vec::new();
    let mut files: Vec<(String, Vec<FileOp>)> = Vec::new();
    let mut commands: Vec<(String, usize)> = Vec::new();
    let mut errors = Vec::new();
    let mut tool_names: HashMap<&str, &str> = HashMap::new();

    for message in messages {
        if let Some(text) = user_text(message) {
            requests.push(shorten(&one_line(&text), REQUEST_CHARS));
        }
        for block in &message.content {
            match block {
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => {
                    tool_names.insert(id.as_str(), name.as_str());
                    if let Some((path, op)) = touched_file(name, input) {
                        match files.iter_mut().find(|(p, _)| *p == path) {
                            Some((_, ops)) => {
                                if !ops.contains(&op) {
                                    ops.push(op);
                                }
                            }
                            None => files.push((path, vec![op])),
                        }
                    }
                    if classify_tool(name) == ToolKind::Command
                        && let Some(cmd) = command_of(input)
                    {
                        let cmd = shorten(first_line(&cmd), COMMAND_CHARS);
                        match commands.iter_mut().find(|(c, _)| *c == cmd) {
                            Some((_, n)) => *n += 1,
                            None => commands.push((cmd, 1)),
                        }
                    }
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if block.is_error() => {
                    let text = strip_markup(&content.text());
                    let line = shorten(first_line(&text), ERROR_CHARS);
                    let tool = tool_names
                        .get(tool_use_id.as_str())
                        .copied()
                        .unwrap_or("tool");
                    errors.push(if line.is_empty() {
                        format!("{tool}: (no message)")
                    } else {
                        format!("{tool}: {line}")
                    });
                }
                _ => {}
            }
        }
    }

    let mut out = format!(
        "Summary of {} earlier messages ({} from the user, {} from the assistant).\n\n",
        s.messages, s.user_messages, s.assistant_messages
    );
    out.push_str(&format!(
        "Statistics: file reads {}, commands {}, errors {}, searches {}, function calls {}, other tools {}\n",
        s.file_reads, s.commands, s.errors, s.searches, s.function_calls, s.other_tools
    ));

    let numbered: Vec<String> = requests
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}. {r}", i + 1))
        .collect();
    section(
        &mut out,
        "User requests",
        &numbered,
        Keep::Last,
        "earlier requests",
    );

    let file_lines: Vec<String> = files
        .iter()
        .map(|(path, ops)| {
            let mut ops = ops.clone();
            ops.sort();
            let ops: Vec<&str> = ops.iter().map(|o| o.as_str()).collect();
            format!("- {path} ({})", ops.join(", "))
        })
        .collect();
    section(
        &mut out,
        "Files touched",
        &file_lines,
        Keep::First,
        "more files",
    );

    let command_lines: Vec<String> = commands
        .iter()
        .map(|(c, n)| {
            if *n > 1 {
                format!("- `{c}` (×{n})")
            } else {
                format!("- `{c}`")
            }
        })
        .collect();
    section(
        &mut out,
        "Commands run",
        &command_lines,
        Keep::Last,
        "earlier commands",
    );

    let error_lines: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    section(
        &mut out,
        "Errors seen",
        &error_lines,
        Keep::Last,
        "earlier errors",
    );
    out
}

enum Keep {
    First,
    Last,
}

fn section(out: &mut String, title: &str, lines: &[String], keep: Keep, omitted_what: &str) {
    if lines.is_empty() {
        return;
    }
    out.push('\n');
    out.push_str(title);
    out.push_str(":\n");
    let omitted = lines.len().saturating_sub(MAX_LIST_ITEMS);
    let shown = match keep {
        Keep::First => &lines[..lines.len() - omitted],
        Keep::Last => {
            if omitted > 0 {
                out.push_str(&format!("- ({omitted} {omitted_what} not listed)\n"));
            }
            &lines[omitted..]
        }
    };
    for line in shown {
        out.push_str(line);
        out.push('\n');
    }
    if omitted > 0 && matches!(keep, Keep::First) {
        out.push_str(&format!("- (and {omitted} {omitted_what})\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::{ContentBlock, Message, Role};
    use serde_json::json;

    fn conversation() -> Vec<Message> {
        vec![
            Message::user("Please fix the failing test in src/lib.rs"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("Looking."),
                    ContentBlock::tool_use("t1", "Read", json!({"file_path": "src/lib.rs"})),
                    ContentBlock::tool_use("t2", "Bash", json!({"command": "cargo test\n# again"})),
                    ContentBlock::tool_use("t3", "Grep", json!({"pattern": "fn add"})),
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("t1", "fn add() {}", false),
                    ContentBlock::tool_result("t2", "error[E0425]: cannot find value\nmore", true),
                    ContentBlock::tool_result("t3", "src/lib.rs:1", false),
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::tool_use("t4", "Edit", json!({"file_path": "src/lib.rs"})),
                    ContentBlock::tool_use("t5", "Bash", json!({"command": "cargo test"})),
                    ContentBlock::tool_use("t6", "mcp__github__get_issue", json!({"n": 1})),
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("t4", "ok", false),
                    ContentBlock::tool_result("t5", "ok", false),
                    ContentBlock::tool_result("t6", "{}", false),
                ],
            ),
            Message::user("<system-reminder>noise</system-reminder>"),
        ]
    }

    #[test]
    fn counts_by_kind() {
        let s = stats(&conversation());
        assert_eq!(
            s,
            MessageStats {
                messages: 6,
                user_messages: 1,
                assistant_messages: 2,
                file_reads: 1,
                commands: 2,
                errors: 1,
                searches: 1,
                function_calls: 1,
                other_tools: 1,
            }
        );
    }

    #[test]
    fn summary_lists_requests_files_commands_errors() {
        let expected = "Summary of 6 earlier messages (1 from the user, 2 from the assistant).

Statistics: file reads 1, commands 2, errors 1, searches 1, function calls 1, other tools 1

User requests:
1. Please fix the failing test in src/lib.rs

Files touched:
- src/lib.rs (read, edited)

Commands run:
- `cargo test` (×2)

Errors seen:
- Bash: error[E0425]: cannot find value
";
        assert_eq!(summarize(&conversation()), expected);
    }

    #[test]
    fn long_lists_keep_the_most_recent() {
        let messages: Vec<Message> = (1..=25)
            .map(|i| Message::user(format!("request {i}")))
            .collect();
        let out = summarize(&messages);
        assert!(
            out.contains("- (5 earlier requests not listed)\n6. request 6\n"),
            "{out}"
        );
        assert!(out.ends_with("25. request 25\n"), "{out}");
    }

    #[test]
    fn empty_prefix_has_only_statistics() {
        assert_eq!(
            summarize(&[]),
            "Summary of 0 earlier messages (0 from the user, 0 from the assistant).\n\nStatistics: file reads 0, commands 0, errors 0, searches 0, function calls 0, other tools 0\n"
        );
    }
}
