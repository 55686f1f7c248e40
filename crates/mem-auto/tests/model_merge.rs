//! Extraction through a model on a real HTTP server on loopback (wiremock): the model's
//! ADD / UPDATE / DELETE answers against the numbered current entries land on the right
//! entries, an id it invents is dropped and reported, a junk reply makes the offline engine
//! answer (and the report says so), and prompt redaction is reported only when a prompt was
//! sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::Utc;
use mem_auto::{EntryId, ExtractOptions, ExtractReport, extract_session};
use mem_core::Message;
use mem_llm::{ApiKey, CallPolicy, ModelEngine, Provider, ProviderKind};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const USER_FILE: &str =
    "### 用户偏好\n- Always use npm for installs\n- Write commit messages in English\n";
const PROJECT_FILE: &str = "# Project memory\n\nKept by hand too.\n\n### 项目知识\n- Tests live in tests/unit\n- The API runs on port 8080\n";

mod common;

use common::Project;

impl Project {
    /// A project whose two `memories.md` files hold [`USER_FILE`] and [`PROJECT_FILE`].
    fn with_memories() -> Project {
        let p = Project::new();
        std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
        std::fs::create_dir_all(p.home.join(".mewcode")).unwrap();
        std::fs::write(p.home.join(".mewcode/memories.md"), USER_FILE).unwrap();
        std::fs::write(p.root.join(".mewcode/memories.md"), PROJECT_FILE).unwrap();
        p
    }

    fn user(&self) -> String {
        std::fs::read_to_string(self.home.join(".mewcode/memories.md")).unwrap()
    }

    fn project(&self) -> String {
        std::fs::read_to_string(self.root.join(".mewcode/memories.md")).unwrap()
    }

    async fn extract(&self, server: &MockServer, messages: &[Message]) -> ExtractReport {
        let id = self.session(messages);
        let policy = CallPolicy {
            connect_timeout: Duration::from_secs(2),
            timeout: Duration::from_secs(10),
            max_retries: 0,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        };
        let provider = Provider::new(
            ProviderKind::OpenAi,
            &server.uri(),
            "test-model",
            Some(ApiKey::new("sk-test")),
            &policy,
        )
        .unwrap();
        let llm = ModelEngine::new(provider, policy);
        extract_session(
            &self.auto(),
            &self.store(),
            &id,
            &llm,
            &ExtractOptions::new(Utc::now()),
        )
        .await
        .unwrap()
    }
}

async fn server_answering(content: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
        })))
        .mount(&server)
        .await;
    server
}

/// The user message the model received.
async fn prompt_sent(server: &MockServer) -> String {
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    body["messages"][1]["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn update_and_delete_land_on_the_right_entries() {
    let p = Project::with_memories();
    // The numbering: user's file first (1, 2), then the project's (3, 4).
    let server = server_answering(
        r#"{"memory": [
            {"event": "UPDATE", "id": 1, "category": null, "text": "Always use pnpm for installs, not npm"},
            {"event": "DELETE", "id": 4, "category": null, "text": null},
            {"event": "NONE", "id": 3, "category": null, "text": null},
            {"event": "ADD", "id": null, "category": "references", "text": "The API docs are at https://docs.acme.dev/api"}
        ]}"#,
    )
    .await;
    let r = p
        .extract(
            &server,
            &[
                Message::user(
                    "We switched to pnpm, use it for installs. The API no longer runs on 8080, it's serverless now. Docs: https://docs.acme.dev/api",
                ),
                Message::assistant("Noted."),
            ],
        )
        .await;
    let prompt = prompt_sent(&server).await;
    assert!(
        prompt.contains("1. [preferences] Always use npm for installs\n2. [preferences] Write commit messages in English\n3. [project] Tests live in tests/unit\n4. [project] The API runs on port 8080"),
        "{prompt}"
    );
    assert_eq!(r.engine, "openai:test-model");
    assert_eq!(r.fallback, None);
    assert!(r.dropped.is_empty(), "{:?}", r.dropped);
    assert_eq!(
        p.user(),
        "### 用户偏好\n- Always use pnpm for installs, not npm\n- Write commit messages in English\n"
    );
    assert_eq!(
        p.project(),
        "# Project memory\n\nKept by hand too.\n\n### 项目知识\n- Tests live in tests/unit\n\n### 参考资料\n- The API docs are at https://docs.acme.dev/api\n"
    );
    let user = r.files.iter().find(|f| !f.updated.is_empty()).unwrap();
    assert_eq!(
        user.updated[0].old.id,
        EntryId::of("Always use npm for installs")
    );
    assert_eq!(
        user.updated[0].new.id,
        EntryId::of("Always use pnpm for installs, not npm")
    );
    let project = r.files.iter().find(|f| !f.removed.is_empty()).unwrap();
    assert_eq!(project.removed[0].text, "The API runs on port 8080");
    assert_eq!(
        project.added[0].text,
        "The API docs are at https://docs.acme.dev/api"
    );
    // A prompt went to the model: its redaction count is reported (0 here).
    assert_eq!(r.withheld_from_prompt, Some(0));
    assert!(r.tokens_spent > 0);
}

#[tokio::test]
async fn an_invented_id_is_dropped_and_reported() {
    let p = Project::with_memories();
    let server = server_answering(
        r#"{"memory": [
            {"event": "DELETE", "id": 17, "category": null, "text": null},
            {"event": "UPDATE", "id": 99, "category": null, "text": "Tests live in spec/"},
            {"event": "UPDATE", "id": 3, "category": null, "text": "Tests live in tests/integration"}
        ]}"#,
    )
    .await;
    let r = p
        .extract(
            &server,
            &[Message::user(
                "Tests moved: they live in tests/integration now. My token is ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s0nly.",
            )],
        )
        .await;
    assert_eq!(r.fallback, None);
    assert_eq!(r.dropped.len(), 2, "{:?}", r.dropped);
    assert!(
        r.dropped[0].starts_with("DELETE of id 17: no such entry"),
        "{:?}",
        r.dropped
    );
    assert!(
        r.dropped[1].starts_with("UPDATE of id 99: no such entry"),
        "{:?}",
        r.dropped
    );
    // Nothing else touched; the real id applied.
    assert_eq!(p.user(), USER_FILE);
    assert_eq!(
        p.project(),
        PROJECT_FILE.replace("tests/unit", "tests/integration")
    );
    // The token never reached the model, and the report says one was withheld.
    assert!(!prompt_sent(&server).await.contains("ghp_R4nd0m"));
    assert_eq!(r.withheld_from_prompt, Some(1));
}

#[tokio::test]
async fn a_junk_reply_makes_the_offline_engine_answer_and_says_so() {
    let p = Project::with_memories();
    let server = server_answering("I'm sorry, I can't help with that {{{").await;
    let r = p
        .extract(
            &server,
            &[Message::user("Always run cargo fmt before committing.")],
        )
        .await;
    let why = r.fallback.as_deref().unwrap_or_default();
    assert!(why.contains("no JSON"), "{why}");
    assert_eq!(r.engine, "openai:test-model");
    // The offline engine's answer was merged; nothing the model said was applied.
    let added: Vec<&str> = r
        .files
        .iter()
        .flat_map(|f| f.added.iter().map(|c| c.text.as_str()))
        .collect();
    assert!(added.iter().any(|t| t.contains("cargo fmt")), "{added:?}");
    assert!(
        p.project()
            .contains("- Tests live in tests/unit\n- The API runs on port 8080\n")
    );
}

#[tokio::test]
async fn an_update_to_an_entry_edited_since_is_not_applied() {
    let p = Project::with_memories();
    // The server edits the file by hand while "thinking": the entry the model updates is gone.
    let server = MockServer::start().await;
    let file = p.root.join(".mewcode/memories.md");
    let content = r#"{"memory": [{"event": "UPDATE", "id": 3, "category": null, "text": "Tests live in tests/e2e"}]}"#;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(move |_: &wiremock::Request| {
            std::fs::write(&file, PROJECT_FILE.replace("tests/unit", "tests/smoke")).unwrap();
            ResponseTemplate::new(200).set_body_json(json!({
                "id": "c", "object": "chat.completion", "model": "test-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
            }))
        })
        .mount(&server)
        .await;
    let r = p
        .extract(&server, &[Message::user("Tests live in tests/e2e now.")])
        .await;
    assert!(
        r.dropped
            .iter()
            .any(|d| d.contains("UPDATE of id 3") && d.contains("not applied")),
        "{:?}",
        r.dropped
    );
    // The hand edit survives.
    assert!(
        p.project().contains("- Tests live in tests/smoke\n"),
        "{}",
        p.project()
    );
}
