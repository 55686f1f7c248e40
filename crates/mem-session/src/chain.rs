//! `validate_message_chain` (seed §1): a replay a model API accepts, whatever the file holds.

use mem_core::{ContentBlock, Message, Role};

/// What [`validate_message_chain`] changed in the replay (never on disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainIssue {
    /// Messages at the end were cut: their tool_use blocks never got a result (the process
    /// stopped mid-call). `from` is the index of the first message cut.
    DanglingTail {
        /// Index (in the input) of the first message cut.
        from: usize,
        /// How many messages were cut.
        count: usize,
    },
    /// A tool_use in the middle of the chain had no result before the conversation moved on
    /// (an interrupted call); a tool_result saying so was inserted after it.
    InterruptedToolUse {
        /// The tool_use id.
        id: String,
    },
    /// A tool_result that answers no open call of the preceding assistant message (absent,
    /// earlier or already answered) was removed from the replay.
    OrphanToolResult {
        /// The tool_use_id it named.
        tool_use_id: String,
    },
}

/// Text of the tool_result inserted for a tool_use that never got one.
pub const INTERRUPTED_TOOL_RESULT: &str =
    "[mewmem: no result was recorded for this tool call; it was interrupted]";

/// Returns the replayable chain: every tool_use answered by a tool_result in the user messages
/// that follow it (before the next assistant message), and every tool_result preceded by its
/// tool_use.
///
/// - A dangling tail (tool_use never answered, nothing after but tool results or nothing) is cut
///   back to the last complete point, as seed §1 says.
/// - A tool_use left unanswered in the middle (the user interrupted and went on) gets an inserted
///   error tool_result, so the history after it is kept.
/// - A tool_result that does not answer an open call of the assistant message just before it
///   (its call is absent, earlier, or already answered: a duplicate) is removed; a message left
///   empty is dropped.
///
/// Linear in the number of blocks.
pub fn validate_message_chain(messages: Vec<Message>) -> (Vec<Message>, Vec<ChainIssue>) {
    let mut issues = Vec::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    // Tool_use ids of the last assistant message not yet answered, and where that message is.
    let mut open: Vec<String> = Vec::new();
    let mut open_at: Option<usize> = None;
    // Index in `out` / input of the last point where nothing was open.
    let mut last_complete_out = 0usize;
    let mut last_complete_in = 0usize;

    for (i, mut message) in messages.into_iter().enumerate() {
        match message.role {
            Role::Assistant => {
                if !open.is_empty() {
                    close_interrupted(&mut out, &mut open, open_at, &mut issues);
                }
                let ids: Vec<String> = message.tool_use_ids().map(str::to_owned).collect();
                out.push(message);
                if ids.is_empty() {
                    open_at = None;
                } else {
                    open = ids;
                    open_at = Some(out.len() - 1);
                }
            }
            Role::User | Role::System => {
                let before = message.content.len();
                message.content.retain(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => {
                        // Only a result for a call of the assistant message just before, not
                        // answered yet, is kept: an absent, earlier or already answered call's
                        // result would be rejected by the API.
                        if let Some(pos) = open.iter().position(|id| id == tool_use_id) {
                            open.remove(pos);
                            true
                        } else {
                            issues.push(ChainIssue::OrphanToolResult {
                                tool_use_id: tool_use_id.clone(),
                            });
                            false
                        }
                    }
                    _ => true,
                });
                if message.content.is_empty() && before > 0 {
                    continue;
                }
                let has_other = message
                    .content
                    .iter()
                    .any(|b| !matches!(b, ContentBlock::ToolResult { .. }));
                if !open.is_empty() && has_other {
                    // The user spoke while calls were unanswered: they were interrupted.
                    close_interrupted(&mut out, &mut open, open_at, &mut issues);
                }
                out.push(message);
            }
        }
        if open.is_empty() {
            last_complete_out = out.len();
            last_complete_in = i + 1;
        }
    }
    if !open.is_empty() {
        let count = out.len() - last_complete_out;
        out.truncate(last_complete_out);
        issues.push(ChainIssue::DanglingTail {
            from: last_complete_in,
            count,
        });
    }
    (out, issues)
}

/// Inserts one error tool_result per open id right after the message at `at` and its
/// following tool-result messages.
fn close_interrupted(
    out: &mut Vec<Message>,
    open: &mut Vec<String>,
    at: Option<usize>,
    issues: &mut Vec<ChainIssue>,
) {
    let Some(at) = at else {
        open.clear();
        return;
    };
    let mut insert_at = at + 1;
    while insert_at < out.len() && out[insert_at].is_tool_result_only() {
        insert_at += 1;
    }
    let blocks: Vec<ContentBlock> = open
        .drain(..)
        .map(|id| {
            issues.push(ChainIssue::InterruptedToolUse { id: id.clone() });
            ContentBlock::tool_result(id, INTERRUPTED_TOOL_RESULT, true)
        })
        .collect();
    out.insert(insert_at, Message::new(Role::User, blocks));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(id, "Bash", json!({"command":"ls"}))],
        )
    }
    fn result(id: &str) -> Message {
        Message::new(Role::User, vec![ContentBlock::tool_result(id, "ok", false)])
    }
    fn shape(ms: &[Message]) -> Vec<String> {
        ms.iter()
            .map(|m| {
                let kinds: Vec<String> = m
                    .content
                    .iter()
                    .map(|b| match b {
                        ContentBlock::ToolUse { id, .. } => format!("use:{id}"),
                        ContentBlock::ToolResult { tool_use_id, .. } => {
                            format!("res:{tool_use_id}")
                        }
                        other => other.as_text().unwrap_or("?").to_owned(),
                    })
                    .collect();
                format!("{}[{}]", m.role.as_str(), kinds.join(","))
            })
            .collect()
    }
    fn check(input: Vec<Message>, want: &[&str], want_issues: usize) {
        let (out, issues) = validate_message_chain(input);
        assert_eq!(shape(&out), want, "issues: {issues:?}");
        assert_eq!(issues.len(), want_issues, "{issues:?}");
    }

    #[test]
    fn complete_chain_is_unchanged() {
        check(
            vec![
                Message::user("q"),
                call("a"),
                result("a"),
                Message::assistant("done"),
            ],
            &[
                "user[q]",
                "assistant[use:a]",
                "user[res:a]",
                "assistant[done]",
            ],
            0,
        );
    }

    #[test]
    fn dangling_tail_is_cut() {
        let (out, issues) =
            validate_message_chain(vec![Message::user("q"), call("a"), result("a"), call("b")]);
        assert_eq!(out.len(), 3);
        assert_eq!(issues, vec![ChainIssue::DanglingTail { from: 3, count: 1 }]);
    }

    #[test]
    fn parallel_calls_answered_by_separate_messages() {
        let two = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::tool_use("a", "R", json!({})),
                ContentBlock::tool_use("b", "R", json!({})),
            ],
        );
        check(
            vec![two.clone(), result("a"), result("b")],
            &["assistant[use:a,use:b]", "user[res:a]", "user[res:b]"],
            0,
        );
        // Only one of two answered at the end: cut back to before the call.
        check(vec![Message::user("q"), two, result("a")], &["user[q]"], 1);
    }

    #[test]
    fn interrupted_call_in_the_middle_gets_a_result() {
        check(
            vec![
                Message::user("q"),
                call("a"),
                Message::user("stop, do X"),
                Message::assistant("ok"),
            ],
            &[
                "user[q]",
                "assistant[use:a]",
                "user[res:a]",
                "user[stop, do X]",
                "assistant[ok]",
            ],
            1,
        );
        check(
            vec![call("a"), call("b"), result("b")],
            &[
                "assistant[use:a]",
                "user[res:a]",
                "assistant[use:b]",
                "user[res:b]",
            ],
            1,
        );
    }

    #[test]
    fn duplicate_and_late_results_are_removed() {
        check(
            vec![call("a"), result("a"), result("a"), Message::assistant("x")],
            &["assistant[use:a]", "user[res:a]", "assistant[x]"],
            1,
        );
        // A result arriving after the conversation moved on: the call got an inserted error
        // result when the user spoke, and the late one is dropped, so `a` has one result.
        check(
            vec![
                call("a"),
                Message::user("stop"),
                Message::assistant("ok"),
                result("a"),
            ],
            &[
                "assistant[use:a]",
                "user[res:a]",
                "user[stop]",
                "assistant[ok]",
            ],
            2,
        );
    }

    #[test]
    fn a_result_without_content_answers_its_call() {
        let empty: Message = serde_json::from_value(
            json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}),
        )
        .unwrap();
        check(
            vec![call("a"), empty, Message::assistant("done")],
            &["assistant[use:a]", "user[res:a]", "assistant[done]"],
            0,
        );
    }

    #[test]
    fn orphan_results_are_removed() {
        check(
            vec![Message::user("q"), result("zz"), Message::assistant("x")],
            &["user[q]", "assistant[x]"],
            1,
        );
    }
}
