//! Both providers against a real HTTP server on loopback (wiremock): the request each sends, and
//! success, 429 + Retry-After, repeated 500, timeout, malformed reply, 401, connection refused.

// Test helpers outside #[test] functions may panic on setup failures.
#![allow(clippy::expect_used)]

use std::time::{Duration, Instant};

use mem_core::{ContentBlock, Message, Role};
use mem_llm::prompt::{ChatRequest, SUMMARIZE_PROMPT};
use mem_llm::{
    ApiKey, CallPolicy, Candidate, ExtractRequest, Job, Llm, LlmError, ModelEngine, Provider,
    ProviderKind, SelectRequest, SkillRequest, SkillSource, SummarizeRequest,
};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-key-never-logged";
const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

fn fast_policy() -> CallPolicy {
    CallPolicy {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
    }
}

fn engine(kind: ProviderKind, server: &MockServer, policy: CallPolicy) -> ModelEngine {
    let provider = Provider::new(
        kind,
        &server.uri(),
        "test-model",
        Some(ApiKey::new(KEY)),
        &policy,
    )
    .expect("provider");
    ModelEngine::new(provider, policy)
}

fn endpoint(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "/v1/messages",
        _ => "/v1/chat/completions",
    }
}

/// A successful reply in the provider's shape.
fn reply(kind: ProviderKind, text: &str) -> Value {
    match kind {
        ProviderKind::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "test-model",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}
        }),
        _ => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        }),
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::user("Always use pnpm. Fix the build please."),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "t1",
                "Bash",
                json!({"command": "pnpm build"}),
            )],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result("t1", "error TS2304", true)],
        ),
    ]
}

fn summarize_request() -> SummarizeRequest {
    SummarizeRequest {
        messages: conversation(),
    }
}

async fn mount_ok(server: &MockServer, kind: ProviderKind, text: &str) {
    Mock::given(method("POST"))
        .and(path(endpoint(kind)))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(kind, text)))
        .mount(server)
        .await;
}

async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

#[tokio::test]
async fn success_sends_the_expected_request() {
    for kind in KINDS {
        let server = MockServer::start().await;
        mount_ok(&server, kind, "## User requests\nFix the build.").await;
        let reply = engine(kind, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect("summary");
        assert_eq!(reply.value.text, "## User requests\nFix the build.\n");
        assert_eq!(reply.engine, format!("{kind}:test-model"));
        assert_eq!(reply.fallback, None);

        let requests = received(&server).await;
        assert_eq!(requests.len(), 1, "{kind}");
        let req = &requests[0];
        let body: Value = serde_json::from_slice(&req.body).expect("json body");
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["max_tokens"], 1024);
        assert_eq!(
            req.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        let user_text = match kind {
            ProviderKind::Anthropic => {
                assert_eq!(
                    req.headers.get("x-api-key").and_then(|v| v.to_str().ok()),
                    Some(KEY)
                );
                assert_eq!(
                    req.headers
                        .get("anthropic-version")
                        .and_then(|v| v.to_str().ok()),
                    Some("2023-06-01")
                );
                assert!(req.headers.get("authorization").is_none());
                assert_eq!(body["system"], SUMMARIZE_PROMPT);
                assert_eq!(body["messages"].as_array().map(Vec::len), Some(1));
                assert_eq!(body["messages"][0]["role"], "user");
                body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            }
            _ => {
                assert_eq!(
                    req.headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok()),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(body["messages"][0]["role"], "system");
                assert_eq!(body["messages"][0]["content"], SUMMARIZE_PROMPT);
                assert_eq!(body["messages"][1]["role"], "user");
                assert!(
                    body.get("response_format").is_none(),
                    "summaries are free text"
                );
                body["messages"][1]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            }
        };
        assert_eq!(
            user_text,
            "Conversation to summarise (3 messages):\n\n[user] Always use pnpm. Fix the build please.\n[assistant] tool Bash {\"command\":\"pnpm build\"}\n[tool error] error TS2304\n"
        );
    }
}

#[tokio::test]
async fn structured_jobs_use_json_schema_and_drop_invented_ids() {
    for kind in KINDS {
        let server = MockServer::start().await;
        let selection = r#"Here is my choice: {"selected": ["testing.md", "made-up.md"]}"#;
        mount_ok(&server, kind, selection).await;
        let request = SelectRequest {
            query: "how do I run the tests".into(),
            candidates: vec![
                Candidate {
                    user_level: false,
                    id: "testing.md".into(),
                    name: "Testing".into(),
                    description: "Test commands".into(),
                    body: String::new(),
                },
                Candidate {
                    user_level: false,
                    id: "style.md".into(),
                    name: "Style".into(),
                    description: "Code style".into(),
                    body: String::new(),
                },
            ],
            limit: 5,
        };
        let reply = engine(kind, &server, fast_policy())
            .select(&request)
            .await
            .expect("selection");
        assert_eq!(reply.value.ids, vec!["testing.md"]);
        assert_eq!(reply.dropped, vec!["not a candidate: made-up.md"]);
        assert_eq!(reply.fallback, None);
        let body: Value = serde_json::from_slice(&received(&server).await[0].body).expect("json");
        assert_eq!(body["max_tokens"], 256);
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(body["response_format"]["type"], "json_schema");
                assert_eq!(
                    body["response_format"]["json_schema"]["schema"]["properties"]["selected"]["items"]
                        ["enum"],
                    json!(["testing.md", "style.md"])
                );
            }
            _ => assert!(body.get("response_format").is_none()),
        }
    }
}

#[tokio::test]
async fn extraction_reply_is_parsed_and_secrets_dropped() {
    for kind in KINDS {
        let server = MockServer::start().await;
        let text = "```json\n{\"preferences\": [\"Use pnpm\", \"token is sk-proj-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Yg0Uf9Id8Os7\"], \"corrections\": [], \"project\": [\"TypeScript project\"], \"references\": []}\n```";
        mount_ok(&server, kind, text).await;
        let request = ExtractRequest {
            current_memories: String::new(),
            entries: Vec::new(),
            messages: conversation(),
        };
        let reply = engine(kind, &server, fast_policy())
            .extract(&request)
            .await
            .expect("memories");
        assert_eq!(reply.value.preferences, vec!["Use pnpm"]);
        assert_eq!(reply.value.project, vec!["TypeScript project"]);
        assert_eq!(
            reply.dropped,
            vec!["preferences: 1 entry(ies) that look like secrets"]
        );
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    for kind in KINDS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(endpoint(kind)))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("retry-after", "1")
                    .set_body_json(json!({"error": {"message": "slow down"}})),
            )
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
        mount_ok(&server, kind, "Fixed the pnpm build.").await;
        let start = Instant::now();
        let reply = engine(kind, &server, fast_policy())
            .summarize(&summarize_request())
            .await;
        let elapsed = start.elapsed();
        assert_eq!(
            reply.expect("summary after retry").value.text,
            "Fixed the pnpm build.\n"
        );
        assert_eq!(received(&server).await.len(), 2);
        assert!(
            elapsed >= Duration::from_millis(950),
            "Retry-After honoured: {elapsed:?}"
        );
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }
}

#[tokio::test]
async fn rate_limit_longer_than_the_deadline_gives_up_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "30"))
        .mount(&server)
        .await;
    let start = Instant::now();
    let err = engine(ProviderKind::OpenAi, &server, fast_policy())
        .summarize(&summarize_request())
        .await
        .expect_err("rate limited");
    assert!(start.elapsed() < Duration::from_secs(2));
    match err {
        LlmError::RateLimited {
            attempts,
            retry_after,
            ..
        } => {
            assert_eq!(attempts, 1);
            assert_eq!(retry_after, Some(Duration::from_secs(30)));
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
}

#[tokio::test]
async fn an_absurd_retry_after_gives_up_at_once_without_panicking() {
    for (name, value) in [
        ("retry-after", "99999999999999999999"),
        ("retry-after-ms", "1e300"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header(name, value))
            .expect(1)
            .mount(&server)
            .await;
        let start = Instant::now();
        let err = engine(ProviderKind::Anthropic, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect_err("rate limited");
        assert!(start.elapsed() < Duration::from_secs(2));
        match err {
            LlmError::RateLimited { retry_after, .. } => {
                assert_eq!(retry_after, Some(mem_llm::http::MAX_RETRY_AFTER), "{name}");
            }
            other => panic!("{name}: expected RateLimited, got {other:?}"),
        }
        server.verify().await;
    }
}

#[tokio::test]
async fn repeated_server_errors_give_up_after_the_bound() {
    for kind in KINDS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500).set_body_string("internal boom"))
            .expect(3)
            .mount(&server)
            .await;
        let err = engine(kind, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect_err("server error");
        match &err {
            LlmError::Server {
                status,
                attempts,
                message,
                ..
            } => {
                assert_eq!((*status, *attempts), (500, 3));
                assert_eq!(message, "internal boom");
            }
            other => panic!("expected Server, got {other:?}"),
        }
        server.verify().await;
    }
}

#[tokio::test]
async fn a_slow_server_times_out_within_the_deadline() {
    for kind in KINDS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(reply(kind, "late"))
                    .set_delay(Duration::from_secs(3)),
            )
            .mount(&server)
            .await;
        let policy = CallPolicy {
            timeout: Duration::from_millis(400),
            ..fast_policy()
        };
        let start = Instant::now();
        let err = engine(kind, &server, policy)
            .select(&SelectRequest {
                query: "q".into(),
                candidates: vec![Candidate {
                    user_level: false,
                    id: "a.md".into(),
                    ..Candidate::default()
                }],
                limit: 5,
            })
            .await
            .expect_err("timeout");
        let elapsed = start.elapsed();
        assert!(
            matches!(err, LlmError::Timeout { after, .. } if after == Duration::from_millis(400)),
            "{err:?}"
        );
        assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
    }
}

#[tokio::test]
async fn malformed_replies_are_errors_and_fall_back_when_unusable() {
    for kind in KINDS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_string("{not json"))
            .mount(&server)
            .await;
        let engine = engine(kind, &server, fast_policy());
        let chat = ChatRequest {
            job: Job::Summarize,
            system: "s".into(),
            user: "u".into(),
            max_tokens: 8,
            schema: None,
        };
        let err = engine
            .provider()
            .complete(&chat, engine.policy())
            .await
            .expect_err("malformed");
        assert!(matches!(err, LlmError::MalformedReply { .. }), "{err:?}");

        let reply = engine
            .summarize(&summarize_request())
            .await
            .expect("fallback");
        let reason = reply.fallback.expect("fallback reported");
        assert!(reason.starts_with("malformed reply from"), "{reason}");
        assert!(
            reply
                .value
                .text
                .starts_with("Summary of 3 earlier messages"),
            "offline summary"
        );
    }
}

#[tokio::test]
async fn junk_summaries_fall_back_to_offline() {
    for kind in KINDS {
        let server = MockServer::start().await;
        mount_ok(&server, kind, "<<<not what you asked for>>>").await;
        let reply = engine(kind, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect("fallback");
        let reason = reply.fallback.expect("fallback reported");
        assert!(reason.starts_with("unusable summarize reply"), "{reason}");
        assert!(
            reply
                .value
                .text
                .starts_with("Summary of 3 earlier messages"),
            "offline summary: {}",
            reply.value.text
        );
    }
}

#[tokio::test]
async fn wrong_shapes_and_unusable_structures_fall_back() {
    for kind in KINDS {
        let server = MockServer::start().await;
        // Valid provider JSON, but the text is not a selection.
        mount_ok(&server, kind, r#"{"selected": "testing.md"}"#).await;
        let request = SelectRequest {
            query: "run the tests".into(),
            candidates: vec![Candidate {
                user_level: false,
                id: "testing.md".into(),
                name: "Testing".into(),
                description: "how to run tests".into(),
                body: String::new(),
            }],
            limit: 5,
        };
        let reply = engine(kind, &server, fast_policy())
            .select(&request)
            .await
            .expect("fallback");
        assert_eq!(
            reply.fallback.as_deref(),
            Some("unusable select reply: `selected` should be a list, found a string")
        );
        assert_eq!(
            reply.value.ids,
            vec!["testing.md"],
            "the offline engine chose"
        );

        // A reply without choices is malformed; an empty text is empty.
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"unexpected": true})))
            .mount(&server)
            .await;
        let err = engine(kind, &server, fast_policy())
            .provider()
            .complete(
                &ChatRequest {
                    job: Job::Select,
                    system: "s".into(),
                    user: "u".into(),
                    max_tokens: 8,
                    schema: None,
                },
                &fast_policy(),
            )
            .await
            .expect_err("malformed");
        assert!(matches!(err, LlmError::MalformedReply { .. }), "{err:?}");
        let server = MockServer::start().await;
        mount_ok(&server, kind, "  ").await;
        let reply = engine(kind, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect("fallback");
        assert!(
            reply
                .fallback
                .unwrap_or_default()
                .starts_with("empty reply from")
        );
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_never_shows_the_key() {
    for kind in KINDS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_json(json!({
                "type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}
            })))
            .expect(1)
            .mount(&server)
            .await;
        let err = engine(kind, &server, fast_policy())
            .extract(&ExtractRequest {
                current_memories: String::new(),
                entries: Vec::new(),
                messages: conversation(),
            })
            .await
            .expect_err("401");
        assert!(matches!(err, LlmError::Unauthorized { .. }), "{err:?}");
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(KEY), "{shown}");
        assert!(shown.contains("invalid x-api-key ***"), "{shown}");
        server.verify().await;
    }
}

#[tokio::test]
async fn other_client_errors_are_typed() {
    type IsExpected = fn(&LlmError) -> bool;
    let cases: [(u16, IsExpected); 3] = [
        (400, |e| matches!(e, LlmError::BadRequest { .. })),
        (403, |e| matches!(e, LlmError::Forbidden { .. })),
        (404, |e| matches!(e, LlmError::NotFound { .. })),
    ];
    for (status, is_expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(header("content-type", "application/json"))
            .respond_with(
                ResponseTemplate::new(status).set_body_json(json!({"error": {"message": "nope"}})),
            )
            .expect(1)
            .mount(&server)
            .await;
        let err = engine(ProviderKind::OpenAi, &server, fast_policy())
            .summarize(&summarize_request())
            .await
            .expect_err("client error");
        assert!(is_expected(&err), "{status}: {err:?}");
        server.verify().await;
    }
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // Bind and drop a listener so the port is (almost certainly) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let policy = fast_policy();
    let provider = Provider::new(
        ProviderKind::OpenAi,
        &format!("http://127.0.0.1:{port}"),
        "m",
        None,
        &policy,
    )
    .expect("provider");
    let err = ModelEngine::new(provider, policy)
        .summarize(&summarize_request())
        .await
        .expect_err("refused");
    assert!(
        matches!(err, LlmError::Connect { attempts: 3, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn redirects_are_not_followed_and_the_key_stays_home() {
    for kind in KINDS {
        for status in [301u16, 302, 307, 308] {
            let elsewhere = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(200).set_body_json(reply(kind, "stolen")))
                .mount(&elsewhere)
                .await;
            let server = MockServer::start().await;
            let target = format!("{}{}", elsewhere.uri(), endpoint(kind));
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(status).insert_header("location", &*target))
                .expect(1)
                .mount(&server)
                .await;
            let err = engine(kind, &server, fast_policy())
                .summarize(&summarize_request())
                .await
                .expect_err("a redirect is an error");
            match &err {
                LlmError::Redirect {
                    status: s,
                    location,
                    ..
                } => {
                    assert_eq!(*s, status);
                    assert_eq!(location.as_deref(), Some(target.as_str()));
                }
                other => panic!("{kind} {status}: expected a redirect error, got {other:?}"),
            }
            assert!(
                err.to_string().contains("does not follow redirects"),
                "{err}"
            );
            assert!(
                received(&elsewhere).await.is_empty(),
                "{kind} {status}: the redirect target was called"
            );
            server.verify().await;
        }
    }
}

fn skill_request() -> SkillRequest {
    let source = |id: &str, title: &str, text: &str, category: &str| SkillSource {
        id: id.into(),
        kind: "learning".into(),
        title: title.into(),
        text: text.into(),
        category: Some(category.into()),
        tags: vec!["db".into()],
    };
    SkillRequest {
        name: "database-migrations".into(),
        topic: "database migrations".into(),
        sources: vec![
            source(
                "L1",
                "Run migrations",
                "Run sqlx migrate run before cargo test.",
                "tip",
            ),
            source(
                "L2",
                "Lock timeout",
                "Migrations time out while the dev server holds a lock.",
                "error",
            ),
        ],
    }
}

#[tokio::test]
async fn skill_job_sends_the_memories_and_keeps_only_cited_points() {
    for kind in KINDS {
        let server = MockServer::start().await;
        let text = r#"Sure. {"name": "db-migrations", "description": "Use when <b>changing</b> the schema.",
            "steps": [{"text": "Run sqlx migrate run first.", "sources": ["L1", "L99"]},
                      {"text": "Ask the DBA.", "sources": ["L42"]}],
            "pitfalls": [{"text": "Stop the dev server: it holds the lock.", "sources": ["L2"]},
                         {"text": "Use key sk-proj-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Yg0Uf9Id8Os7", "sources": ["L2"]}]}"#;
        mount_ok(&server, kind, text).await;
        let reply = engine(kind, &server, fast_policy())
            .skill(&skill_request())
            .await
            .expect("skill");
        assert_eq!(reply.fallback, None);
        assert_eq!(reply.engine, format!("{kind}:test-model"));
        let draft = reply.value;
        assert_eq!(draft.name, "db-migrations");
        assert_eq!(draft.description, "Use when bchanging/b the schema.");
        assert_eq!(draft.steps.len(), 1);
        assert_eq!(draft.steps[0].sources, vec!["L1"]);
        assert_eq!(draft.pitfalls.len(), 1);
        assert_eq!(
            draft.pitfalls[0].text,
            "Stop the dev server: it holds the lock."
        );
        assert_eq!(
            reply.dropped,
            vec![
                "steps: not a source id: L99",
                "steps: not a source id: L42",
                "steps: a point citing no source: Ask the DBA.",
                "pitfalls: 1 point(s) that look like secrets",
            ]
        );
        let requests = received(&server).await;
        assert_eq!(requests.len(), 1);
        let body: Value = serde_json::from_slice(&requests[0].body).expect("json");
        let sent = body.to_string();
        assert!(sent.contains("L1 [learning, tip, tags: db] Run migrations: Run sqlx migrate run"));
        assert!(sent.contains("Proposed name: database-migrations"));
        assert_eq!(body["max_tokens"], 1536);
        if kind == ProviderKind::OpenAi {
            assert_eq!(
                body["response_format"]["json_schema"]["schema"]["properties"]["steps"]["items"]["properties"]
                    ["sources"]["items"]["enum"],
                json!(["L1", "L2"])
            );
        }
    }
}

#[tokio::test]
async fn skill_job_falls_back_to_the_template_on_junk() {
    for kind in KINDS {
        let server = MockServer::start().await;
        mount_ok(&server, kind, "I cannot help with that.").await;
        let request = skill_request();
        let reply = engine(kind, &server, fast_policy())
            .skill(&request)
            .await
            .expect("skill");
        let reason = reply.fallback.clone().unwrap_or_default();
        assert!(reason.contains("no JSON found"), "{reason}");
        assert_eq!(reply.value, mem_llm::OfflineEngine.skill_now(&request));
        assert_eq!(reply.value.steps[0].sources, vec!["L1"]);
        assert_eq!(reply.value.pitfalls[0].sources, vec!["L2"]);
    }
}
