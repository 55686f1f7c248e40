//! The OMC clean-up steps of seed 003, applied to the messages about to be summarised (the tail
//! is kept verbatim, so it is never cleaned):
//!
//! - de-duplication: of consecutive identical tool calls (same tool names and inputs, one call
//!   after the other), only the last is kept; the summary notes `[去重: N 次重复 tool_call]`;
//! - error purge: error results older than `max_age_rounds` rounds are removed with their call,
//!   except the last error of the conversation; the summary notes `[已清理 N 个历史错误]`.
//!
//! The purge is counted, not listed: the summary's note says how many errors were removed and
//! its appendix (see [`crate::coverage`]) lists only the errors that remain, so the summary
//! never says an error was cleaned and then lists it.

use std::collections::HashSet;

use mem_core::{ContentBlock, Message, Role};
use serde_json::Value;

/// Default age, in rounds, past which an error result is purged (beyond the seed, which names
/// `max_age_rounds` without a value: the same 10 rounds Layer-2 keeps tool results for).
pub const DEFAULT_MAX_AGE_ROUNDS: usize = crate::KEEP_RECENT_TURNS;

/// The note the seed appends to the summary after de-duplication.
pub fn dedup_note(n: usize) -> String {
    format!("[去重: {n} 次重复 tool_call]")
}

/// The note the seed appends to the summary after the error purge.
pub fn purge_note(n: usize) -> String {
    format!("[已清理 {n} 个历史错误]")
}

/// A message with its round age (rounds between it and the end of the conversation).
#[derive(Debug, Clone, PartialEq)]
pub struct Aged {
    /// The message.
    pub message: Message,
    /// Rounds from this message's round to the conversation's last round.
    pub age: usize,
}

/// What a clean-up removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Tool calls removed as consecutive duplicates.
    pub deduplicated_count: usize,
    /// Error results removed (with their calls).
    pub error_removed_count: usize,
    /// Messages removed entirely.
    pub messages_removed: usize,
}

fn calls(m: &Message) -> Vec<(&str, &Value)> {
    m.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { name, input, .. } => Some((name.as_str(), input)),
            _ => None,
        })
        .collect()
}

/// Removes consecutive identical tool calls, keeping the last of each run. A call unit is an
/// assistant message with tool calls and the user messages holding only its results; two units
/// are identical when their calls (names and inputs, in order) are.
pub fn deduplicate(messages: &mut Vec<Aged>, cleaned: &mut Cleaned) {
    // Units: (start, end exclusive) of an assistant message with calls plus its result messages.
    let mut units: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i].message;
        if m.role == Role::Assistant && m.tool_use_ids().next().is_some() {
            let ids: HashSet<&str> = m.tool_use_ids().collect();
            let mut j = i + 1;
            while j < messages.len()
                && messages[j].message.is_tool_result_only()
                && messages[j]
                    .message
                    .tool_result_ids()
                    .all(|id| ids.contains(id))
            {
                j += 1;
            }
            units.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    let mut remove = vec![false; messages.len()];
    for pair in units.windows(2) {
        let ((a0, a1), (b0, _)) = (pair[0], pair[1]);
        if a1 == b0 && calls(&messages[a0].message) == calls(&messages[b0].message) {
            cleaned.deduplicated_count += calls(&messages[a0].message).len();
            for r in &mut remove[a0..a1] {
                *r = true;
            }
        }
    }
    let mut k = 0;
    messages.retain(|_| {
        let keep = !remove[k];
        k += 1;
        keep
    });
    cleaned.messages_removed += remove.iter().filter(|r| **r).count();
}

/// Removes error results older than `max_age_rounds` with their calls, except the error at
/// `keep` (the conversation's last error, when it is among these messages). Messages left empty
/// are dropped.
pub fn purge_errors(
    messages: &mut Vec<Aged>,
    max_age_rounds: usize,
    keep: Option<&str>,
    cleaned: &mut Cleaned,
) {
    let mut purge: HashSet<String> = HashSet::new();
    for a in messages.iter() {
        if a.age <= max_age_rounds {
            continue;
        }
        for b in &a.message.content {
            if let ContentBlock::ToolResult { tool_use_id, .. } = b
                && b.is_error()
                && Some(tool_use_id.as_str()) != keep
            {
                purge.insert(tool_use_id.clone());
            }
        }
    }
    if purge.is_empty() {
        return;
    }
    cleaned.error_removed_count += purge.len();
    for a in messages.iter_mut() {
        a.message.content.retain(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => !purge.contains(tool_use_id),
            ContentBlock::ToolUse { id, .. } => !purge.contains(id),
            _ => true,
        });
    }
    let before = messages.len();
    messages.retain(|a| !a.message.content.is_empty());
    cleaned.messages_removed += before - messages.len();
}

/// The id of the last error result in `messages`.
pub fn last_error_id(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|m| {
        m.content.iter().rev().find_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } if b.is_error() => {
                Some(tool_use_id.clone())
            }
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn unit(id: &str, cmd: &str, error: bool, age: usize) -> [Aged; 2] {
        [
            Aged {
                message: Message::new(
                    Role::Assistant,
                    vec![ContentBlock::tool_use(id, "Bash", json!({"command": cmd}))],
                ),
                age,
            },
            Aged {
                message: Message::new(
                    Role::User,
                    vec![ContentBlock::tool_result(id, "out", error)],
                ),
                age,
            },
        ]
    }

    fn ids(messages: &[Aged]) -> Vec<String> {
        messages
            .iter()
            .flat_map(|a| {
                a.message
                    .tool_use_ids()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn consecutive_identical_calls_keep_the_last() {
        let mut m: Vec<Aged> = [
            unit("a", "ls", false, 0),
            unit("b", "ls", false, 0),
            unit("c", "ls", false, 0),
            unit("d", "pwd", false, 0),
            unit("e", "ls", false, 0),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut c = Cleaned::default();
        deduplicate(&mut m, &mut c);
        assert_eq!(ids(&m), ["c", "d", "e"]);
        assert_eq!(c.deduplicated_count, 2);
        assert_eq!(c.messages_removed, 4);
        assert_eq!(dedup_note(2), "[去重: 2 次重复 tool_call]");
    }

    #[test]
    fn old_errors_are_purged_but_the_last() {
        let mut m: Vec<Aged> = [
            unit("a", "x", true, 30),
            unit("b", "y", true, 20),
            unit("c", "z", false, 20),
            unit("d", "w", true, 5),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut c = Cleaned::default();
        purge_errors(&mut m, 10, Some("d"), &mut c);
        assert_eq!(ids(&m), ["c", "d"], "a and b are old; d is recent");
        assert_eq!(c.error_removed_count, 2);
        assert_eq!(c.messages_removed, 4);
        assert_eq!(purge_note(2), "[已清理 2 个历史错误]");
        // When the conversation's last error is old, it stays.
        let mut m: Vec<Aged> = [unit("a", "x", true, 30), unit("b", "y", true, 20)]
            .into_iter()
            .flatten()
            .collect();
        let mut c = Cleaned::default();
        purge_errors(&mut m, 10, Some("b"), &mut c);
        assert_eq!(ids(&m), ["b"]);
        assert_eq!(c.error_removed_count, 1);
    }
}
