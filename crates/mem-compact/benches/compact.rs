//! Compaction benchmarks (`cargo bench -p mem-compact`; also run by `cargo xtask bench`).
//!
//! - Offline sweep of a 200k-token session built from the bundled real Claude Code transcripts
//!   (copies with renamed tool ids until 200,000 tokens): resume + trim + cut + offline summary +
//!   boundary append, as `mem compact sweep --force` does.
//! - The per-message check on a 150k-token conversation (push one message, check) against a full
//!   recount of the same conversation.
//!
//! Results are printed as a Markdown table (medians).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mem_compact::{AutoCompact, AutoCompactConfig, CompactSession};
use mem_core::{ContentBlock, Conversation, Message, Role, TokenCounter};
use mem_llm::OfflineEngine;
use mem_session::SessionStore;
use mem_session::ingest::import_into;

const SOURCES: &[&str] = &[
    "entireio_cli__ckpt-b02936744f3b-0.full.jsonl",
    "entireio_cli__ckpt-44785715c3f5-2.full.jsonl",
    "entireio_cli__ckpt-ada8171575ce-0.full.jsonl",
    "entireio_cli__ckpt-4c70d9b5734c-0.full.jsonl",
    "entireio_cli__ckpt-1e868c83dbb7-0.full.jsonl",
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Real messages (summaries of earlier compactions left out), tool ids suffixed by `copy`.
fn real_messages() -> Vec<Message> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts/claude");
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::for_project(dir.path());
    let mut out = Vec::new();
    for name in SOURCES {
        let imported = import_into(&store, &root.join(name)).expect("import");
        let r = store.resume(&imported[0].meta.id).expect("resume");
        out.extend(
            r.messages
                .into_iter()
                .filter(|m| !m.metadata.contains_key(mem_session::COMPACT_SUMMARY_MARKER)),
        );
    }
    out
}

fn with_suffix(m: &Message, copy: usize) -> Message {
    let mut m = m.clone();
    for b in &mut m.content {
        match b {
            ContentBlock::ToolUse { id, .. } => id.push_str(&format!("_{copy}")),
            ContentBlock::ToolResult { tool_use_id, .. } => {
                tool_use_id.push_str(&format!("_{copy}"))
            }
            _ => {}
        }
    }
    m
}

/// At least `tokens` tokens of real conversation.
fn conversation_of(base: &[Message], tokens: usize) -> Vec<Message> {
    let counter = TokenCounter::default();
    let mut out = Vec::new();
    let mut total = 0;
    let mut copy = 0;
    while total < tokens {
        for m in base {
            let m = with_suffix(m, copy);
            total += counter.count_message(&m);
            out.push(m);
            if total >= tokens {
                break;
            }
        }
        copy += 1;
    }
    out
}

fn sweep_bench(base: &[Message]) -> (usize, usize, Duration, Duration, usize) {
    let messages = conversation_of(base, 200_000);
    let counter = TokenCounter::default();
    let tokens: usize = messages.iter().map(|m| counter.count_message(m)).sum();
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SessionStore::for_project(dir.path());
    {
        let mut w = store.open_or_create("big").expect("create");
        for m in &messages {
            w.append(m).expect("append");
        }
    }
    let pristine = std::fs::read(store.jsonl_path("big")).expect("read");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut total_times = Vec::new();
    let mut compact_times = Vec::new();
    let mut after = 0;
    for _ in 0..7 {
        std::fs::write(store.jsonl_path("big"), &pristine).expect("reset");
        let _ = std::fs::remove_file(store.meta_path("big"));
        let t0 = Instant::now();
        let mut session = CompactSession::open(&store, "big", dir.path().into()).expect("open");
        let t1 = Instant::now();
        let mut ac = AutoCompact::new(AutoCompactConfig::default(), Arc::new(OfflineEngine));
        let r = rt
            .block_on(ac.check_and_compact(&mut session, false, false))
            .expect("compact");
        assert!(
            r.triggered,
            "a 200k-token session is over the 128k window's threshold"
        );
        after = r.tokens_after;
        compact_times.push(t1.elapsed());
        total_times.push(t0.elapsed());
    }
    (
        messages.len(),
        tokens,
        median(total_times),
        median(compact_times),
        after,
    )
}

fn check_bench(base: &[Message]) -> (usize, usize, Duration, Duration) {
    let messages = conversation_of(base, 150_000);
    let n = messages.len();
    let ac = AutoCompact::new(
        AutoCompactConfig {
            model_context_window: 1_000_000,
            ..AutoCompactConfig::default()
        },
        Arc::new(OfflineEngine),
    );
    // Full recount: a fresh conversation, every message tokenised.
    let mut recounts = Vec::new();
    let mut tokens = 0;
    for _ in 0..7 {
        let conv = Conversation::from_messages(messages.clone());
        let t = Instant::now();
        tokens = ac.check(&conv).tokens;
        recounts.push(t.elapsed());
    }
    // Per message: push one tool result (a typical ~1.5 KB one) and check.
    let mut conv = Conversation::from_messages(messages);
    let _ = ac.check(&conv);
    let body = "src/lib.rs:10: fn handler() -> Result<()> { Ok(()) }\n".repeat(28);
    let mut per = Vec::new();
    for i in 0..500 {
        let m = Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                format!("bench{i}"),
                body.clone(),
                false,
            )],
        );
        let t = Instant::now();
        conv.push(m);
        let c = ac.check(&conv);
        per.push(t.elapsed());
        assert!(c.tokens > tokens);
    }
    (n, tokens, median(recounts), median(per))
}

fn main() {
    // `cargo test --benches` runs benches with `--bench` absent: keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let base = real_messages();
    let (n, tokens, total, compact, after) = sweep_bench(&base);
    let (cn, ctokens, recount, per) = check_bench(&base);
    println!("| case | size | time (median) |");
    println!("|---|---|---|");
    println!(
        "| offline sweep, resume + compaction + boundary write | {n} messages, {tokens} tokens → {after} | {:.1} ms |",
        total.as_secs_f64() * 1e3
    );
    println!(
        "| offline sweep, compaction + boundary write only | same | {:.1} ms |",
        compact.as_secs_f64() * 1e3
    );
    println!(
        "| full recount of the conversation | {cn} messages, {ctokens} tokens | {:.2} ms |",
        recount.as_secs_f64() * 1e3
    );
    println!(
        "| per-message check (push + check) | same + 1 message | {:.1} µs ({:.3} % of a recount) |",
        per.as_secs_f64() * 1e6,
        per.as_secs_f64() / recount.as_secs_f64() * 100.0
    );
}
