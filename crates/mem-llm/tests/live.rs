//! Live tests against a real model server: all three jobs through both providers, end to end.
//!
//! Opt-in: `MEM_LIVE_LLM_URL=http://127.0.0.1:8089 cargo test -p mem-llm --test live -- --ignored`
//! (`.ci/live-llm.sh` starts llama.cpp's server with a small model and does exactly this). The
//! server must answer `/v1/chat/completions` (with `response_format` json_schema) and
//! `/v1/messages`. Run without the variable, the tests fail and say so.

// Test helpers outside #[test] functions may panic on setup failures.
#![allow(clippy::expect_used)]

use std::time::{Duration, Instant};

use mem_core::{ContentBlock, Message, Role};
use mem_llm::{
    CallPolicy, Candidate, ExtractRequest, Job, Llm, ModelEngine, Provider, ProviderKind,
    SelectRequest, SummarizeRequest,
};
use serde_json::json;

fn engine(kind: ProviderKind, job: Job) -> ModelEngine {
    let url = std::env::var("MEM_LIVE_LLM_URL").expect(
        "set MEM_LIVE_LLM_URL to the base URL of a running model server (see .ci/live-llm.sh)",
    );
    let model = std::env::var("MEM_LIVE_LLM_MODEL").unwrap_or_else(|_| "local".to_owned());
    // A small CPU model on one thread: generous deadlines, a couple of retries.
    let policy = CallPolicy {
        timeout: Duration::from_secs(180),
        max_retries: 2,
        ..CallPolicy::for_job(job)
    };
    let provider = Provider::new(kind, &url, model, None, &policy).expect("provider");
    ModelEngine::new(provider, policy)
}

fn conversation() -> Vec<Message> {
    vec![
        Message::user("Always use pnpm in this repo. Please fix the failing build."),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("Running the build."),
                ContentBlock::tool_use("t1", "Bash", json!({"command": "pnpm build"})),
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "t1",
                "src/app.ts(3,1): error TS2304: Cannot find name 'foo'.",
                true,
            )],
        ),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "t2",
                "Edit",
                json!({"file_path": "src/app.ts", "old_string": "foo", "new_string": "bar"}),
            )],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result("t2", "ok", false)],
        ),
        Message::assistant("Fixed: `foo` was renamed to `bar` in src/app.ts; the build passes."),
    ]
}

fn candidates() -> Vec<Candidate> {
    vec![
        Candidate {
            user_level: false,
            id: "testing.md".into(),
            name: "Testing".into(),
            description: "How to run the tests: pnpm test".into(),
            body: "Run pnpm test before committing.".into(),
        },
        Candidate {
            user_level: false,
            id: "deploy.md".into(),
            name: "Deployment".into(),
            description: "How releases are deployed to Vercel".into(),
            body: "Push a tag.".into(),
        },
    ]
}

async fn summarize(kind: ProviderKind) {
    let engine = engine(kind, Job::Summarize);
    let start = Instant::now();
    let reply = engine
        .summarize(&SummarizeRequest {
            messages: conversation(),
        })
        .await
        .unwrap_or_else(|e| panic!("{kind} summarize: {e}"));
    eprintln!(
        "{kind} summarize: {:?}, fallback {:?}\n{}",
        start.elapsed(),
        reply.fallback,
        reply.value.text
    );
    assert_eq!(reply.engine, engine.name());
    assert!(!reply.value.text.trim().is_empty());
    if let Some(reason) = &reply.fallback {
        assert!(!reason.is_empty());
        assert!(
            reply
                .value
                .text
                .starts_with("Summary of 6 earlier messages"),
            "offline summary on fallback"
        );
    }
}

async fn extract(kind: ProviderKind) {
    let engine = engine(kind, Job::Extract);
    let start = Instant::now();
    let reply = engine
        .extract(&ExtractRequest {
            current_memories: String::new(),
            entries: Vec::new(),
            messages: conversation(),
        })
        .await
        .unwrap_or_else(|e| panic!("{kind} extract: {e}"));
    eprintln!(
        "{kind} extract: {:?}, fallback {:?}, dropped {:?}\n{}",
        start.elapsed(),
        reply.fallback,
        reply.dropped,
        reply.value.to_markdown()
    );
    if kind == ProviderKind::OpenAi {
        // The server enforces the JSON schema: the structured path must parse.
        assert_eq!(reply.fallback, None, "json_schema reply should parse");
    }
    if reply.fallback.is_some() {
        assert!(
            reply.value.preferences.iter().any(|p| p.contains("pnpm")),
            "offline extraction on fallback"
        );
    }
    for entry in mem_llm::MemoryCategory::ALL
        .iter()
        .flat_map(|c| reply.value.get(*c))
    {
        assert!(!entry.trim().is_empty(), "entries are non-empty strings");
    }
}

async fn select(kind: ProviderKind) {
    let engine = engine(kind, Job::Select);
    let request = SelectRequest {
        query: "how do I run the tests?".into(),
        candidates: candidates(),
        limit: 1,
    };
    let start = Instant::now();
    let reply = engine
        .select(&request)
        .await
        .unwrap_or_else(|e| panic!("{kind} select: {e}"));
    eprintln!(
        "{kind} select: {:?}, {:?}, fallback {:?}, dropped {:?}",
        start.elapsed(),
        reply.value.ids,
        reply.fallback,
        reply.dropped
    );
    if kind == ProviderKind::OpenAi {
        assert_eq!(reply.fallback, None, "json_schema reply should parse");
    }
    assert!(reply.value.ids.len() <= 1, "limit respected");
    for id in &reply.value.ids {
        assert!(
            request.candidates.iter().any(|c| &c.id == id),
            "{id} is a candidate"
        );
    }
    if reply.fallback.is_some() {
        assert_eq!(
            reply.value.ids,
            vec!["testing.md"],
            "offline selection on fallback"
        );
    }
}

#[tokio::test]
#[ignore = "needs a model server: set MEM_LIVE_LLM_URL (see .ci/live-llm.sh)"]
async fn live_openai_compatible_all_jobs() {
    summarize(ProviderKind::OpenAi).await;
    extract(ProviderKind::OpenAi).await;
    select(ProviderKind::OpenAi).await;
}

#[tokio::test]
#[ignore = "needs a model server: set MEM_LIVE_LLM_URL (see .ci/live-llm.sh)"]
async fn live_anthropic_all_jobs() {
    summarize(ProviderKind::Anthropic).await;
    extract(ProviderKind::Anthropic).await;
    select(ProviderKind::Anthropic).await;
}

#[tokio::test]
#[ignore = "needs a model server: set MEM_LIVE_LLM_URL (see .ci/live-llm.sh)"]
async fn live_ping_reports_latency() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let (reply, latency) = engine(kind, Job::Select)
            .ping()
            .await
            .unwrap_or_else(|e| panic!("{kind} ping: {e}"));
        eprintln!("{kind} ping: {latency:?} {reply:?}");
        assert!(latency < Duration::from_secs(60));
    }
}
