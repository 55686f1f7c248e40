//! Where to cut: the tail kept verbatim and the prefix summarised (seed 000 §2, seed 003).
//!
//! Layer-2 tail ([`TailPolicy::MewCode`]): at least [`MIN_KEEP_MESSAGES`] messages, growing while
//! the tail holds fewer than [`KEEP_RECENT_TOKENS`] tokens, never past [`KEEP_MAX_TOKENS`] (the
//! minimum wins over the cap; an oversized minimum is handled by the caller). OMC tail
//! ([`TailPolicy::LastFraction`]): the last 20 % of the messages, within the same bounds.
//!
//! Whatever the policy, the cut is moved so that no kept tool_result answers a tool_use that was
//! cut: first backwards to take the call in (if that stays under the cap), otherwise forwards
//! past the orphaned results.

use std::collections::HashMap;

use mem_core::{Message, Role, is_long_term_memory};
use mem_session::COMPACT_SUMMARY_MARKER;

use crate::{KEEP_MAX_TOKENS, KEEP_RECENT_TOKENS, MIN_KEEP_MESSAGES};

/// The OMC share of messages kept verbatim: the last 20 %.
pub const OMC_KEEP_FRACTION: f64 = 0.20;

/// How the verbatim tail is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TailPolicy {
    /// MewCode Layer-2: ≥ 5 messages, growing to 10,000 tokens, never over 40,000. The default.
    #[default]
    MewCode,
    /// OMC: the last `fraction` of the messages (0.20 in the seed), at least 5, shrunk to 40,000
    /// tokens (beyond the seed: so a compaction always frees room).
    LastFraction(f64),
}

/// What a message is to the cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// A system message: never summarised; kept above the summary (or in place in the tail).
    System,
    /// The injected long-term-memory block: dropped, injected again after the compaction.
    Injected,
    /// The summary of an earlier compaction: carried into the new summary.
    Summary,
    /// A conversation message: summarised or kept.
    Message,
}

/// Classifies one message.
pub fn part_of(m: &Message) -> Part {
    if is_long_term_memory(m) {
        Part::Injected
    } else if m.metadata.contains_key(COMPACT_SUMMARY_MARKER) {
        Part::Summary
    } else if m.role == Role::System {
        Part::System
    } else {
        Part::Message
    }
}

/// `true` for a user message that carries a request (text, not only tool results, not a
/// summary or an injected block).
pub fn is_user_request(m: &Message) -> bool {
    m.role == Role::User
        && part_of(m) == Part::Message
        && !m.is_tool_result_only()
        && m.content
            .iter()
            .any(|b| b.as_text().is_some_and(|t| !t.trim().is_empty()))
}

/// The planned cut, as indices into the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut {
    /// Index of the first message of the tail; everything from here on is kept (but injected
    /// blocks and earlier summaries, which are never kept verbatim).
    pub tail_start: usize,
    /// Conversation messages before the tail: summarised.
    pub prefix: Vec<usize>,
    /// System messages before the tail: kept above the summary.
    pub system: Vec<usize>,
    /// Earlier summaries (anywhere): carried into the new summary.
    pub summaries: Vec<usize>,
    /// Injected blocks (anywhere): dropped.
    pub injected: Vec<usize>,
    /// Messages of the tail, kept verbatim.
    pub tail: Vec<usize>,
    /// Tokens of `prefix`.
    pub prefix_tokens: usize,
    /// Tokens of `tail`.
    pub tail_tokens: usize,
}

/// Plans the cut of `messages` whose token counts are `tokens` (same length).
///
/// `since_last_user`: the tail starts at the last user request (OMC `since_last_user`), shrunk
/// to [`KEEP_MAX_TOKENS`] if it is bigger (never under [`MIN_KEEP_MESSAGES`]).
/// `minimal`: the tail is exactly the minimum ([`MIN_KEEP_MESSAGES`], pair-safe), for the
/// last-resort shrink when the minimal context does not fit the window.
pub fn plan_cut(
    messages: &[Message],
    tokens: &[usize],
    policy: TailPolicy,
    since_last_user: bool,
    minimal: bool,
) -> Cut {
    let candidates: Vec<usize> = (0..messages.len())
        .filter(|&i| part_of(&messages[i]) == Part::Message)
        .collect();
    let tok = |k: usize| tokens.get(candidates[k]).copied().unwrap_or(0);
    let n = candidates.len();
    let min_keep = MIN_KEEP_MESSAGES.min(n);

    // `s`: position in `candidates` of the first kept message.
    let mut s = n;
    let mut kept_tokens = 0usize;
    let take = |s: &mut usize, kept: &mut usize| {
        *s -= 1;
        *kept += tok(*s);
    };
    let last_request = candidates
        .iter()
        .rposition(|&i| is_user_request(&messages[i]));
    if minimal {
        while n - s < min_keep {
            take(&mut s, &mut kept_tokens);
        }
    } else if let (true, Some(r)) = (since_last_user, last_request) {
        while s > r {
            take(&mut s, &mut kept_tokens);
        }
        // A last request near the end still keeps the minimum.
        while n - s < min_keep {
            take(&mut s, &mut kept_tokens);
        }
        while kept_tokens > KEEP_MAX_TOKENS && n - s > min_keep {
            kept_tokens -= tok(s);
            s += 1;
        }
    } else {
        match policy {
            TailPolicy::MewCode => {
                while s > 0 {
                    let count = n - s;
                    let next = tok(s - 1);
                    let grow = count < min_keep
                        || (kept_tokens < KEEP_RECENT_TOKENS
                            && kept_tokens + next <= KEEP_MAX_TOKENS);
                    if !grow {
                        break;
                    }
                    take(&mut s, &mut kept_tokens);
                }
            }
            TailPolicy::LastFraction(fraction) => {
                let want = ((n as f64) * fraction.clamp(0.0, 1.0)).ceil() as usize;
                let want = want.max(min_keep).min(n);
                while n - s < want {
                    take(&mut s, &mut kept_tokens);
                }
                while kept_tokens > KEEP_MAX_TOKENS && n - s > min_keep {
                    kept_tokens -= tok(s);
                    s += 1;
                }
            }
        }
    }

    // Never separate a tool_use from its tool_result.
    let safe = safe_cuts(messages, &candidates);
    if !safe[s] {
        let back = (0..s).rev().find(|&j| safe[j]);
        let forward = (s + 1..=n).find(|&j| safe[j]);
        let tokens_from = |j: usize| (j..n).map(tok).sum::<usize>();
        s = match (back, forward) {
            (Some(b), _) if tokens_from(b) <= KEEP_MAX_TOKENS.max(kept_tokens) => b,
            (_, Some(f)) => f,
            (Some(b), None) => b,
            (None, None) => n,
        };
    }

    let tail_start = candidates.get(s).copied().unwrap_or(messages.len());
    classify(messages, tokens, tail_start)
}

/// The cut of `messages` whose tail starts at index `tail_start` (0: nothing is summarised,
/// every conversation message is kept).
pub fn classify(messages: &[Message], tokens: &[usize], tail_start: usize) -> Cut {
    let mut cut = Cut {
        tail_start,
        ..Cut::default()
    };
    for (i, m) in messages.iter().enumerate() {
        match (part_of(m), i < tail_start) {
            (Part::Injected, _) => cut.injected.push(i),
            (Part::Summary, _) => cut.summaries.push(i),
            (Part::System, true) => cut.system.push(i),
            (Part::Message, true) => {
                cut.prefix.push(i);
                cut.prefix_tokens += tokens.get(i).copied().unwrap_or(0);
            }
            (Part::System | Part::Message, false) => {
                cut.tail.push(i);
                cut.tail_tokens += tokens.get(i).copied().unwrap_or(0);
            }
        }
    }
    cut
}

/// For each `s` in `0..=candidates.len()`: `true` when cutting before `candidates[s]` leaves no
/// kept tool_result whose tool_use is cut. Linear: each result whose call comes earlier makes
/// the cuts between the call and the result unsafe (a difference array over the positions).
fn safe_cuts(messages: &[Message], candidates: &[usize]) -> Vec<bool> {
    let n = candidates.len();
    let mut first_use: HashMap<&str, usize> = HashMap::new();
    for (pos, &i) in candidates.iter().enumerate() {
        for id in messages[i].tool_use_ids() {
            first_use.entry(id).or_insert(pos);
        }
    }
    // unsafe_from[u + 1] += 1 and unsafe_from[r + 1] -= 1: cuts in (u, r] split the pair.
    let mut delta = vec![0i64; n + 2];
    for (r, &i) in candidates.iter().enumerate() {
        for id in messages[i].tool_result_ids() {
            if let Some(&u) = first_use.get(id)
                && u < r
            {
                delta[u + 1] += 1;
                delta[r + 1] -= 1;
            }
        }
    }
    let mut open = 0i64;
    (0..=n)
        .map(|s| {
            open += delta[s];
            open == 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::{ContentBlock, TokenCounter};
    use serde_json::json;

    /// The definition, quadratic: no kept tool_result answers a call before the cut.
    fn safe_by_definition(messages: &[Message], candidates: &[usize], s: usize) -> bool {
        let cut: Vec<&str> = candidates[..s]
            .iter()
            .flat_map(|&i| messages[i].tool_use_ids())
            .collect();
        !candidates[s..]
            .iter()
            .any(|&i| messages[i].tool_result_ids().any(|id| cut.contains(&id)))
    }

    #[test]
    fn safe_cuts_agree_with_the_definition() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..300 {
            let len = 1 + next(14) as usize;
            let messages: Vec<Message> = (0..len)
                .map(|_| {
                    let id = format!("t{}", next(5));
                    match next(3) {
                        0 => call(&id),
                        1 => result(&id),
                        _ => Message::user("text"),
                    }
                })
                .collect();
            let candidates: Vec<usize> = (0..len).collect();
            let fast = safe_cuts(&messages, &candidates);
            assert_eq!(fast.len(), len + 1);
            for (s, &safe) in fast.iter().enumerate() {
                assert_eq!(
                    safe,
                    safe_by_definition(&messages, &candidates, s),
                    "cut {s} of {messages:?}"
                );
            }
        }
    }

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(id, "Bash", json!({"command": "ls"}))],
        )
    }
    fn result(id: &str) -> Message {
        Message::new(Role::User, vec![ContentBlock::tool_result(id, "ok", false)])
    }

    fn check(messages: &[Message], tokens: &[usize], policy: TailPolicy, expect_start: usize) {
        let cut = plan_cut(messages, tokens, policy, false, false);
        assert_eq!(cut.tail_start, expect_start, "{cut:?}");
    }

    #[test]
    fn mewcode_tail_keeps_five_then_grows_to_ten_thousand_tokens_within_forty() {
        let msgs: Vec<Message> = (0..20).map(|i| Message::user(format!("m{i}"))).collect();
        // 1,000 tokens each: 5 messages = 5,000 < 10,000, so it grows to 10 messages.
        check(&msgs, &[1_000; 20], TailPolicy::MewCode, 10);
        // 3,000 each: 5 → 15,000 ≥ 10,000: stops at the minimum.
        check(&msgs, &[3_000; 20], TailPolicy::MewCode, 15);
        // 9,000 each: the minimum (45,000) beats the cap.
        check(&msgs, &[9_000; 20], TailPolicy::MewCode, 15);
        // 100 tokens each but one 39,500-token message: growth stops before the cap.
        let mut t = vec![100; 20];
        t[12] = 39_500;
        check(&msgs, &t, TailPolicy::MewCode, 13);
    }

    #[test]
    fn omc_tail_is_the_last_fifth() {
        let msgs: Vec<Message> = (0..50).map(|i| Message::user(format!("m{i}"))).collect();
        check(
            &msgs,
            &[10; 50],
            TailPolicy::LastFraction(OMC_KEEP_FRACTION),
            40,
        );
        check(
            &msgs,
            &[5_000; 50],
            TailPolicy::LastFraction(OMC_KEEP_FRACTION),
            42,
        );
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_result() {
        // u a(t1) r(t1) a(t2) r(t2) a(t3) r(t3): five from the end starts at r(t1).
        let msgs = vec![
            Message::user("go"),
            call("t1"),
            result("t1"),
            call("t2"),
            result("t2"),
            call("t3"),
            result("t3"),
        ];
        let cut = plan_cut(&msgs, &[100; 7], TailPolicy::MewCode, false, true);
        assert_eq!(cut.tail_start, 1, "grows back to take the call in");
        assert!(!msgs[cut.tail_start].is_tool_result_only());
        // When taking the call in would pass the cap, the orphaned result goes to the prefix.
        let mut t = vec![100; 7];
        t[1] = 39_950;
        let cut = plan_cut(&msgs, &t, TailPolicy::MewCode, false, true);
        assert_eq!(cut.tail_start, 3);
        for &i in &cut.tail {
            for id in msgs[i].tool_result_ids() {
                assert!(
                    cut.tail
                        .iter()
                        .any(|&j| msgs[j].tool_use_ids().any(|u| u == id))
                );
            }
        }
    }

    #[test]
    fn since_last_user_starts_at_the_last_request() {
        let mut msgs: Vec<Message> = (0..10).map(|i| Message::user(format!("m{i}"))).collect();
        msgs.push(Message::user("last request"));
        msgs.extend([
            call("a"),
            result("a"),
            call("b"),
            result("b"),
            call("c"),
            result("c"),
        ]);
        let counter = TokenCounter::default();
        let t: Vec<usize> = msgs.iter().map(|m| counter.count_message(m)).collect();
        let cut = plan_cut(&msgs, &t, TailPolicy::MewCode, true, false);
        assert_eq!(cut.tail_start, 10);
    }

    #[test]
    fn since_last_user_keeps_at_least_the_minimum() {
        // The last request is the second-to-last message: the tail still holds five.
        let mut msgs: Vec<Message> = (0..10).map(|i| Message::user(format!("m{i}"))).collect();
        msgs.push(Message::user("last request"));
        msgs.push(Message::assistant("done"));
        let cut = plan_cut(&msgs, &[100; 12], TailPolicy::MewCode, true, false);
        assert_eq!(cut.tail.len(), MIN_KEEP_MESSAGES, "{cut:?}");
        assert_eq!(cut.tail_start, 12 - MIN_KEEP_MESSAGES);
    }

    #[test]
    fn system_injected_and_summaries_are_never_summarised() {
        let d = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let mut conv = mem_core::Conversation::from_messages(vec![
            Message::text(Role::System, "sys"),
            Message::user("S").with_metadata(COMPACT_SUMMARY_MARKER, json!(true)),
        ]);
        conv.inject_long_term_memory("rules", "", d);
        for i in 0..10 {
            conv.push(Message::user(format!("m{i}")));
        }
        let msgs = conv.messages();
        let cut = plan_cut(msgs, &[100; 13], TailPolicy::MewCode, false, true);
        assert_eq!(cut.system, [0]);
        assert_eq!(cut.injected, [1]);
        assert_eq!(cut.summaries, [2]);
        assert_eq!(cut.prefix, [3, 4, 5, 6, 7]);
        assert_eq!(cut.tail, [8, 9, 10, 11, 12]);
    }
}
