//! The invariants of issue 5, each on a minimal input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::NaiveDate;
use mem_compact::{
    AutoCompact, AutoCompactConfig, CompactSession, Outcome, SUMMARY_PREAMBLE, Skip, WarningLevel,
};
use mem_core::{ContentBlock, Conversation, Message, Role, TokenCounter, is_long_term_memory};
use mem_llm::{
    BoxFuture, ExtractRequest, Job, Llm, LlmError, Memories, OfflineEngine, Reply, SelectRequest,
    Selection, SummarizeRequest, Summary,
};
use mem_session::{COMPACT_SUMMARY_MARKER, SessionStore, validate_message_chain};
use serde_json::json;

/// About `n` tokens of varied text.
fn words(seed: usize, n: usize) -> String {
    (0..n)
        .map(|k| format!("w{} ", (seed * 7919 + k * 31) % 100_003))
        .collect()
}

fn call(id: &str, cmd: &str) -> Message {
    Message::new(
        Role::Assistant,
        vec![ContentBlock::tool_use(id, "Bash", json!({"command": cmd}))],
    )
}

fn result(id: &str, text: String, error: bool) -> Message {
    Message::new(Role::User, vec![ContentBlock::tool_result(id, text, error)])
}

/// A request, `rounds` tool rounds of ~`size` tokens each, a final answer; repeated `turns` times.
fn conversation(turns: usize, rounds: usize, size: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for t in 0..turns {
        out.push(Message::user(format!("request {t}: please do task {t}")));
        for r in 0..rounds {
            let id = format!("t{t}_{r}");
            out.push(call(&id, &format!("cargo test --test t{t}_{r}")));
            out.push(result(&id, words(t * 100 + r, size), false));
        }
        out.push(Message::assistant(format!("task {t} is done")));
    }
    out
}

fn store_with(dir: &Path, messages: &[Message]) -> (SessionStore, String) {
    let store = SessionStore::for_project(dir);
    let mut w = store.open_or_create("s1").unwrap();
    for m in messages {
        w.append(m).unwrap();
    }
    (store, "s1".to_owned())
}

fn offline(config: AutoCompactConfig) -> AutoCompact {
    AutoCompact::new(config, Arc::new(OfflineEngine))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn summary_of(context: &[Message]) -> &Message {
    context
        .iter()
        .find(|m| m.metadata.contains_key(COMPACT_SUMMARY_MARKER))
        .expect("a summary message")
}

#[test]
fn the_cut_never_separates_a_tool_use_from_its_result() {
    // Every tail size from the minimum up: the first kept message is never an orphaned result.
    for size in [400, 700, 1_500, 3_000, 9_000] {
        let dir = tempfile::tempdir().unwrap();
        let messages = conversation(8, 6, size);
        let (store, id) = store_with(dir.path(), &messages);
        let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
        let mut ac = offline(AutoCompactConfig::default());
        let r = rt()
            .block_on(ac.check_and_compact(&mut session, true, false))
            .unwrap();
        assert!(r.triggered, "size {size}: {r:?}");
        let context = session.conversation.messages();
        let tail = &context[1..];
        assert!(!tail[0].is_tool_result_only(), "size {size}: {:?}", tail[0]);
        let (_, issues) = validate_message_chain(tail.to_vec());
        assert!(issues.is_empty(), "size {size}: {issues:?}");
        let resumed = store.resume(&id).unwrap();
        assert!(resumed.from_boundary);
        assert!(resumed.issues.is_empty(), "{:?}", resumed.issues);
    }
}

#[test]
fn the_kept_tail_never_re_presents_an_answered_request() {
    let dir = tempfile::tempdir().unwrap();
    let messages = conversation(6, 3, 600);
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    rt().block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    let context = session.conversation.messages();
    // The summary is marked, comes first and says it is a record, not a request.
    let summary = &context[0];
    assert!(summary.metadata.contains_key(COMPACT_SUMMARY_MARKER));
    let text = summary.text_content();
    assert!(text.starts_with(SUMMARY_PREAMBLE), "{text}");
    assert!(text.contains("not a new request"), "{text}");
    // Every request still in the context as a message was answered in the original, and its
    // answer is still after it; no request of the prefix is a message of its own.
    let kept_requests: Vec<&Message> = context[1..]
        .iter()
        .filter(|m| m.role == Role::User && !m.is_tool_result_only())
        .collect();
    for m in &kept_requests {
        let at = context.iter().position(|c| c == *m).unwrap();
        assert!(
            context[at + 1..]
                .iter()
                .any(|c| c.role == Role::Assistant && c.text_content().starts_with("task ")),
            "request {:?} lost its answer",
            m.text_content()
        );
    }
    let prefix_requests = 6 - kept_requests.len();
    assert!(prefix_requests > 0);
    for t in 0..prefix_requests {
        let req = format!("request {t}: please do task {t}");
        assert!(!context[1..].iter().any(|m| m.text_content() == req));
        assert!(text.contains(&req), "the summary lists it: {text}");
    }
}

#[test]
fn the_boundary_is_on_disk_and_nothing_before_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &conversation(3, 6, 800));
    let before = std::fs::read(store.jsonl_path(&id)).unwrap();
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    rt().block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    let after = std::fs::read(store.jsonl_path(&id)).unwrap();
    assert!(after.len() > before.len());
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "earlier records untouched"
    );
    let fresh = SessionStore::for_project(dir.path()).resume(&id).unwrap();
    assert!(fresh.from_boundary);
    assert_eq!(fresh.messages, session.conversation.messages());
}

/// The child half of the next test: compact, then exit at once (no destructor, no flush).
#[test]
fn child_compacts_and_exits() {
    let Ok(dir) = std::env::var("MEWMEM_COMPACT_CHILD_DIR") else {
        return;
    };
    let store = SessionStore::for_project(Path::new(&dir));
    let mut session = CompactSession::open(&store, "s1", dir.clone().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    assert!(r.triggered);
    std::process::exit(0);
}

#[test]
fn a_process_exiting_right_after_compaction_leaves_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &conversation(3, 6, 800));
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_compacts_and_exits", "--nocapture"])
        .env("MEWMEM_COMPACT_CHILD_DIR", dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let resumed = store.resume(&id).unwrap();
    assert!(resumed.from_boundary, "the child's boundary is there");
    assert!(
        resumed.messages[0]
            .text_content()
            .starts_with(SUMMARY_PREAMBLE)
    );
    assert_eq!(resumed.meta.compactions, 1);
}

/// A summariser that always fails, counting its calls.
struct Failing(AtomicUsize);

impl Llm for Failing {
    fn engine_name(&self, _job: Job) -> String {
        "failing".into()
    }
    fn summarize<'a>(
        &'a self,
        _r: &'a SummarizeRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Summary>>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Err(LlmError::Config {
                message: "no model".into(),
            })
        })
    }
    fn extract<'a>(
        &'a self,
        _r: &'a ExtractRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Memories>>> {
        Box::pin(async { Ok(Reply::offline(Memories::default())) })
    }
    fn select<'a>(
        &'a self,
        _r: &'a SelectRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Selection>>> {
        Box::pin(async { Ok(Reply::offline(Selection::default())) })
    }
}

#[test]
fn a_summariser_failure_changes_nothing_and_three_pause_automatic_compaction() {
    let dir = tempfile::tempdir().unwrap();
    // A result over 50,000 characters: a spill that must not be written on failure.
    let mut messages = conversation(3, 6, 800);
    messages.push(call("big", "cat big.log"));
    messages.push(result("big", "x".repeat(60_000), false));
    let (store, id) = store_with(dir.path(), &messages);
    let bytes = std::fs::read(store.jsonl_path(&id)).unwrap();
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let before = session.conversation.messages().to_vec();
    let llm = Arc::new(Failing(AtomicUsize::new(0)));
    let config = AutoCompactConfig {
        model_context_window: 20_000,
        ..AutoCompactConfig::default()
    };
    let mut ac = AutoCompact::new(config, llm.clone());
    for n in 1..=3 {
        let err = rt()
            .block_on(ac.check_and_compact(&mut session, false, false))
            .unwrap_err();
        match err {
            mem_compact::Error::Summarize {
                consecutive_failures,
                ..
            } => assert_eq!(consecutive_failures, n),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), bytes);
        assert_eq!(session.conversation.messages(), &before[..]);
        assert!(!dir.path().join(".mewcode/session").exists());
    }
    assert!(ac.is_paused(&id));
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert!(r.paused && !r.triggered, "{r:?}");
    assert_eq!(
        llm.0.load(Ordering::SeqCst),
        3,
        "paused: the summariser is not called"
    );
    match rt().block_on(ac.prepare(&session, false, false)).unwrap() {
        Outcome::Skipped { reason, .. } => assert_eq!(reason, Skip::Paused { failures: 3 }),
        Outcome::Ready(_) => panic!("should be paused"),
    }
    // Forcing retries.
    assert!(
        rt().block_on(ac.check_and_compact(&mut session, true, false))
            .is_err()
    );
    assert_eq!(llm.0.load(Ordering::SeqCst), 4);
}

#[test]
fn a_tail_too_big_for_the_window_is_shrunk_and_reported_critical_without_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    // 20,000-token window: compaction triggers over 10,000 (the 13,000 margin is capped at half
    // the window; it used to trigger over 7,000).
    let config = AutoCompactConfig {
        model_context_window: 20_000,
        ..AutoCompactConfig::default()
    };
    let mut messages: Vec<Message> = (0..6)
        .flat_map(|i| {
            [
                Message::user(format!("small request {i} {}", words(i, 300))),
                Message::assistant(format!("ok {i}")),
            ]
        })
        .collect();
    // Five huge user messages: the minimal tail alone is over the window.
    messages.extend((0..5).map(|i| Message::user(format!("huge {i} {}", words(50 + i, 5_000)))));
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(config.clone());
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert!(r.triggered);
    assert_eq!(r.warning_level, WarningLevel::Critical, "{r:?}");
    assert_eq!(
        session.conversation.len(),
        1 + 5,
        "summary + the minimal tail"
    );
    // Called again (as after the next message): no second compaction, no loop.
    let again = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert!(!again.triggered);
    assert_eq!(again.warning_level, WarningLevel::Critical);
    let resumed = store.resume(&id).unwrap();
    assert_eq!(resumed.meta.compactions, 1);

    // The same with big tool results instead: trimming the minimal tail makes it fit.
    let dir = tempfile::tempdir().unwrap();
    let mut messages: Vec<Message> = (0..6)
        .flat_map(|i| {
            [
                Message::user(format!("small request {i} {}", words(i, 300))),
                Message::assistant(format!("ok {i}")),
            ]
        })
        .collect();
    messages.push(Message::user("now read the logs"));
    for i in 0..3 {
        let id = format!("log{i}");
        messages.push(call(&id, "cat log"));
        messages.push(result(&id, words(90 + i, 6_000), false));
    }
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(config);
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert_eq!(r.warning_level, WarningLevel::Compacted, "{r:?}");
    assert!(r.tokens_after <= 10_000, "{r:?}");
    let text: String = session
        .conversation
        .messages()
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.text()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains("[mewmem: tool result trimmed to 200 of"),
        "{text}"
    );
}

#[test]
fn the_per_message_check_counts_only_new_messages() {
    let counter = TokenCounter::default();
    let ac = offline(AutoCompactConfig::default());
    let mut conv = Conversation::from_messages(conversation(10, 30, 450));
    let t0 = std::time::Instant::now();
    let first = ac.check(&conv);
    let full = t0.elapsed();
    assert!(first.tokens > 140_000, "{}", first.tokens);
    let expected: usize = conv
        .messages()
        .iter()
        .map(|m| counter.count_message(m))
        .sum();
    assert_eq!(first.tokens, expected);
    let t1 = std::time::Instant::now();
    for i in 0..20 {
        conv.push(result(&format!("x{i}"), words(i, 100), false));
        let c = ac.check(&conv);
        assert!(c.tokens > first.tokens);
    }
    let per_check = t1.elapsed() / 20;
    assert!(
        per_check * 20 < full,
        "a check after one message ({per_check:?}) should cost a small part of a full count ({full:?})"
    );
    let recount: usize = conv
        .messages()
        .iter()
        .map(|m| counter.count_message(m))
        .sum();
    assert_eq!(ac.check(&conv).tokens, recount);
}

#[test]
fn instructions_and_memories_are_injected_again_once() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &conversation(3, 6, 800));
    let date = NaiveDate::from_ymd_opt(2026, 6, 18).unwrap();
    let mut session = CompactSession::open(&store, &id, dir.path().into())
        .unwrap()
        .with_long_term_memory(mem_compact::LongTermMemory {
            instructions: "Use uv.".into(),
            memories: "- snake_case".into(),
            date,
        });
    session
        .conversation
        .inject_long_term_memory("Use uv.", "- snake_case", date);
    let mut ac = offline(AutoCompactConfig::default());
    rt().block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    let injected: Vec<&Message> = session
        .conversation
        .messages()
        .iter()
        .filter(|m| is_long_term_memory(m))
        .collect();
    assert_eq!(injected.len(), 1);
    assert_eq!(
        injected[0].text_content(),
        mem_core::render_long_term_memory("Use uv.", "- snake_case", date)
    );
    assert!(is_long_term_memory(&session.conversation.messages()[0]));
    // The boundary on disk does not carry the injected block (the agent injects it).
    let resumed = store.resume(&id).unwrap();
    assert!(!resumed.messages.iter().any(is_long_term_memory));
}

#[test]
fn big_results_in_the_tail_are_spilled_only_on_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = conversation(3, 6, 800);
    messages.push(Message::user("show me the log"));
    messages.push(call("toolu_big", "cat big.log"));
    let big = format!("BEGIN {} END", "line of log\n".repeat(5_000));
    messages.push(result("toolu_big", big.clone(), false));
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    // The file is per session and named by id and content hash (was `tool-results/toolu_big.txt`,
    // review finding 6: names collided across ids and sessions).
    let relative = mem_compact::spill_path("s1", "toolu_big", &big, 0);
    let relative_text = relative.display().to_string();
    assert!(relative_text.starts_with(".mewcode/session/tool-results/s1/toolu_big-"));
    let spill = dir.path().join(&relative);
    let Outcome::Ready(c) = rt().block_on(ac.prepare(&session, true, false)).unwrap() else {
        panic!("forced")
    };
    assert_eq!(c.spills.len(), 1);
    assert_eq!(c.spills[0].relative_path, relative);
    assert!(!spill.exists(), "a dry run writes nothing");
    ac.commit(&mut session, *c).unwrap();
    assert_eq!(std::fs::read_to_string(&spill).unwrap(), big);
    let last = session.conversation.messages().last().unwrap();
    let ContentBlock::ToolResult { content, .. } = &last.content[0] else {
        panic!()
    };
    assert!(
        content.text().starts_with(&format!(
            "[mewmem: tool result of 60010 characters saved to {relative_text};"
        )),
        "{}",
        content.text()
    );
}

#[test]
fn duplicates_and_old_errors_are_counted_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![Message::user("fix the flaky test")];
    for i in 0..4 {
        let id = format!("same{i}");
        messages.push(call(&id, "cargo test flaky"));
        messages.push(result(&id, words(i, 400), false));
    }
    for i in 0..3 {
        let id = format!("err{i}");
        messages.push(call(&id, &format!("make target{i}")));
        messages.push(result(
            &id,
            format!("error: target{i} failed\n{}", words(i, 300)),
            true,
        ));
    }
    messages.extend(conversation(2, 12, 300));
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    assert_eq!(r.deduplicated_count, 3, "{r:?}");
    assert_eq!(r.error_removed_count, 2, "the last error stays: {r:?}");
    let text = summary_of(session.conversation.messages()).text_content();
    assert!(text.contains("[去重: 3 次重复 tool_call]"), "{text}");
    assert!(text.contains("[已清理 2 个历史错误]"), "{text}");
    // The old expectation listed the two purged errors too: the summary then said they were
    // cleaned ("[已清理 2 个历史错误]") and listed them anyway. Purged errors are counted by the
    // note, not listed; the last error stays and is listed.
    for i in 0..2 {
        assert!(
            !text.contains(&format!("error: target{i} failed")),
            "{text}"
        );
    }
    assert!(text.contains("error: target2 failed"), "{text}");
    assert_eq!(r.tokens_saved(), r.tokens_before - r.tokens_after);
}

#[test]
fn a_small_prefix_is_not_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &conversation(1, 3, 100));
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let Outcome::Skipped { reason, result } =
        rt().block_on(ac.prepare(&session, true, false)).unwrap()
    else {
        panic!("nothing to summarise")
    };
    assert!(matches!(reason, Skip::PrefixTooSmall { .. }), "{reason:?}");
    assert!(!result.triggered);
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    assert!(!r.triggered);
    assert_eq!(store.meta(&id).unwrap().compactions, 0);
}

#[test]
fn a_session_of_big_tool_results_over_the_window_compacts_under_it() {
    // One request, then rounds whose results are big: trimming shrinks every old result, so a
    // cut planned on trimmed counts kept everything in the tail and skipped the compaction.
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![Message::user("read every log")];
    for i in 0..12 {
        let id = format!("log{i}");
        messages.push(call(&id, &format!("cat log{i}")));
        messages.push(result(&id, words(200 + i, 9_000), false));
    }
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let check = ac.check(&session.conversation);
    assert!(check.should_compact, "{check:?}");
    for force in [false, true] {
        let Outcome::Ready(c) = rt().block_on(ac.prepare(&session, force, false)).unwrap() else {
            panic!("over the window: must compact (force {force})")
        };
        assert_eq!(
            c.result.warning_level,
            WarningLevel::Compacted,
            "{:?}",
            c.result
        );
        assert!(
            c.result.tokens_after < ac.config().trigger_tokens(),
            "{:?}",
            c.result
        );
    }
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert!(r.triggered, "{r:?}");
    assert!(!ac.check(&session.conversation).should_compact);
}

#[test]
fn over_the_limit_with_nothing_to_summarise_the_results_are_trimmed_only() {
    // Four messages: the minimal tail is the whole conversation, so there is no prefix; the big
    // results are trimmed instead of nothing being done.
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![Message::user("read both logs")];
    messages.push(Message::new(
        Role::Assistant,
        vec![
            ContentBlock::tool_use("a", "Bash", json!({"command": "cat a.log"})),
            ContentBlock::tool_use("b", "Bash", json!({"command": "cat b.log"})),
        ],
    ));
    messages.push(Message::new(
        Role::User,
        vec![
            ContentBlock::tool_result("a", words(1, 9_000), false),
            ContentBlock::tool_result("b", words(2, 9_000), false),
        ],
    ));
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig {
        model_context_window: 40_000,
        ..AutoCompactConfig::default()
    });
    assert!(ac.check(&session.conversation).should_compact);
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, false, false))
        .unwrap();
    assert!(r.triggered, "{r:?}");
    assert_eq!(r.messages_removed, 0);
    assert_eq!(r.warning_level, WarningLevel::Compacted, "{r:?}");
    let resumed = store.resume(&id).unwrap();
    assert!(resumed.from_boundary);
    assert!(resumed.issues.is_empty(), "{:?}", resumed.issues);
    assert_eq!(resumed.messages.len(), 1 + 3, "summary + every message");
}

#[test]
fn many_compactions_keep_the_summary_bounded_and_the_context_under_the_limit() {
    // A long tool loop on a small window, checked after every message: each compaction carries
    // the earlier summary; it must not grow without limit nor leave the context critical.
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &[Message::user("run every check")]);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let config = AutoCompactConfig {
        model_context_window: 30_000,
        ..AutoCompactConfig::default()
    };
    let budget = config.summary_budget();
    let mut ac = offline(config);
    let counter = TokenCounter::default();
    let (mut results, mut critical, mut compactions) = (0, 0, 0);
    for i in 0..400 {
        let id = format!("c{i}");
        let error = i % 7 == 0;
        for m in [
            call(&id, &format!("cargo test --package crate{i} -- check_{i}")),
            result(
                &id,
                format!(
                    "{}{}",
                    if error { "error: failed\n" } else { "" },
                    words(i, 500)
                ),
                error,
            ),
        ] {
            let r = rt().block_on(ac.on_message(&mut session, m)).unwrap();
            results += 1;
            compactions += usize::from(r.triggered);
            critical += usize::from(r.warning_level == WarningLevel::Critical);
        }
    }
    let summary = summary_of(session.conversation.messages()).text_content();
    let summary_tokens = counter.count(&summary);
    assert!(compactions > 10, "{compactions}");
    assert!(
        summary_tokens <= budget,
        "summary {summary_tokens} tokens over its budget {budget} after {compactions} compactions"
    );
    assert!(
        critical * 20 < results,
        "{critical} of {results} results critical ({compactions} compactions)"
    );
    assert!(!ac.check(&session.conversation).should_compact);
}

#[test]
fn a_message_appended_during_a_compaction_is_never_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = store_with(dir.path(), &conversation(3, 6, 400));
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let Outcome::Ready(c) = rt().block_on(ac.prepare(&session, true, false)).unwrap() else {
        panic!("forced")
    };
    // Another writer appends between prepare and commit.
    store
        .open(&id)
        .unwrap()
        .append(&Message::user("late request from another writer"))
        .unwrap();
    let err = ac.commit(&mut session, *c).unwrap_err();
    assert!(matches!(err, mem_compact::Error::Changed { .. }), "{err}");
    assert!(
        err.to_string().contains("changed since it was read"),
        "{err}"
    );
    let resumed = store.resume(&id).unwrap();
    assert!(!resumed.from_boundary, "no boundary written");
    assert_eq!(
        resumed.messages.last().unwrap().text_content(),
        "late request from another writer"
    );
    // Read again, the compaction goes through and keeps the late message.
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let r = rt()
        .block_on(ac.check_and_compact(&mut session, true, false))
        .unwrap();
    assert!(r.triggered);
    let resumed = store.resume(&id).unwrap();
    assert!(resumed.from_boundary);
    assert_eq!(
        resumed.messages.last().unwrap().text_content(),
        "late request from another writer"
    );
}

#[test]
fn a_small_window_does_not_make_a_short_conversation_critical() {
    let config = AutoCompactConfig {
        model_context_window: 8_192,
        ..AutoCompactConfig::default()
    };
    assert_eq!(
        config.safety_margin(),
        4_096,
        "the 13,000 margin capped at half the window"
    );
    assert_eq!(config.trigger_tokens(), 4_096);
    let ac = offline(config);
    let check = ac.check(&Conversation::from_messages(vec![Message::user("hi")]));
    assert_eq!(check.warning_level, WarningLevel::Ok, "{check:?}");
    assert!(!check.should_compact);
}

/// Review finding 7: the summariser saw the prefix after pass 1, whose spilled results name a
/// file that is only written for results still in the tail; a summary (here the offline engine's
/// error line) then pointed at a file that never existed.
#[test]
fn a_summary_never_names_a_spill_file_that_was_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![
        Message::user("build the release"),
        call("toolu_err", "cargo build --release"),
    ];
    let big_error = format!(
        "error: link failed\n{}",
        "undefined symbol x\n".repeat(3_000)
    );
    assert!(big_error.chars().count() > 50_000);
    messages.push(result("toolu_err", big_error, true));
    messages.extend(conversation(3, 6, 800));
    let (store, id) = store_with(dir.path(), &messages);
    let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
    let mut ac = offline(AutoCompactConfig::default());
    let Outcome::Ready(c) = rt().block_on(ac.prepare(&session, true, false)).unwrap() else {
        panic!("forced")
    };
    assert!(c.cut.prefix.contains(&2), "the big error is summarised");
    let summary = c.summary.clone();
    assert!(summary.contains("link failed"), "{summary}");
    ac.commit(&mut session, *c).unwrap();
    // Every spill path the summary names exists on disk.
    for (at, _) in summary.match_indices(".mewcode/session/tool-results/") {
        let path: String = summary[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ';' && *c != ']')
            .collect();
        assert!(
            dir.path().join(&path).exists(),
            "the summary names {path}, never written:\n{summary}"
        );
    }
}

/// A summariser that writes the secrets it was shown into its summary, as a model may.
struct Echoing;

impl Llm for Echoing {
    fn engine_name(&self, _job: Job) -> String {
        "echo:model".into()
    }
    fn summarize<'a>(
        &'a self,
        r: &'a SummarizeRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Summary>>> {
        let text = serde_json::to_string(&r.messages[..r.messages.len().min(6)]).unwrap();
        Box::pin(async move {
            Ok(Reply {
                value: Summary { text },
                engine: "echo:model".into(),
                fallback: None,
                dropped: Vec::new(),
            })
        })
    }
    fn extract<'a>(
        &'a self,
        _r: &'a ExtractRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Memories>>> {
        Box::pin(async { Ok(Reply::offline(Memories::default())) })
    }
    fn select<'a>(
        &'a self,
        _r: &'a SelectRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Selection>>> {
        Box::pin(async { Ok(Reply::offline(Selection::default())) })
    }
}

/// Issue 27 item 2: the summary written into the boundary (and re-injected) passes the secret
/// filter, whoever wrote it (the offline engine copying tool commands into its lists or the
/// appendix, a model echoing its input), and so do earlier summaries carried forward.
#[test]
fn the_summary_in_the_boundary_holds_no_secret() {
    let secrets = [
        "ghp_Xy7Zq3Wv9Ut5Sr1Qp8On4Ml6KxYz2Ab4Cd6E",
        "sk_live_51Hx9QmLk2Vb8Nc4Xz7Ad3Fg6Jh0Ty5Ru1Ei9Ow2Pq8Sa4Df",
        "hunter2Secret9",
    ];
    let mut messages = vec![Message::user(format!(
        "please deploy with GITHUB_TOKEN={} and remember it",
        secrets[0]
    ))];
    messages.push(call(
        "s0",
        &format!(
            "curl -H 'Authorization: Bearer {}' https://api.stripe.com/v1/charges",
            secrets[1]
        ),
    ));
    messages.push(result("s0", "ok".into(), false));
    messages.push(call(
        "s1",
        &format!(
            "git push https://bob:{}@git.example.com/acme/app.git",
            secrets[2]
        ),
    ));
    messages.push(result("s1", "ok".into(), false));
    messages.extend(conversation(3, 6, 800));
    let engines: [Arc<dyn Llm>; 2] = [Arc::new(OfflineEngine), Arc::new(Echoing)];
    for llm in engines {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = store_with(dir.path(), &messages);
        let mut session = CompactSession::open(&store, &id, dir.path().into()).unwrap();
        let mut ac = AutoCompact::new(AutoCompactConfig::default(), llm.clone());
        rt().block_on(ac.check_and_compact(&mut session, true, false))
            .unwrap();
        let summary = summary_of(session.conversation.messages()).text_content();
        let jsonl = std::fs::read_to_string(store.jsonl_path(&id)).unwrap();
        let boundary = jsonl.lines().last().unwrap();
        for s in secrets {
            assert!(!summary.contains(s), "{s} in the summary:\n{summary}");
            assert!(!boundary.contains(s), "{s} in the boundary:\n{boundary}");
        }
        assert!(summary.contains(mem_core::secrets::REDACTED), "{summary}");
    }
}
