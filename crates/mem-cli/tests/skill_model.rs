//! `mem skill generate` with a model: the `mem` binary talks to an OpenAI-compatible server on
//! loopback (wiremock), configured through `MEM_LLM_SKILL_PROVIDER` and `OPENAI_BASE_URL` as a
//! user would; the SKILL.md holds the model's points that cite real ids, never an invented id
//! or a secret, and the prompt the server got holds the memories with their ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

fn mem(project: &Path, home: &Path) -> Command {
    let mut c = Command::new(MEM);
    c.arg("--project").arg(project).arg("--home").arg(home);
    for (k, _) in std::env::vars() {
        if k.starts_with("MEM_") || k.starts_with("OPENAI_") || k.starts_with("ANTHROPIC_") {
            c.env_remove(k);
        }
    }
    c.env("HOME", home).env("MEM_LOG", "off");
    c
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
    })
}

#[tokio::test]
async fn generate_writes_the_models_skill_with_only_cited_points() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    for (title, content) in [
        (
            "Run migrations first",
            "Run sqlx migrate run before cargo test.",
        ),
        (
            "Migration lock",
            "sqlx migrations hang while the dev server holds the lock.",
        ),
    ] {
        run(mem(&project, &home).args(["memory", "add", title, content, "--category", "tip"]));
    }
    let server = MockServer::start().await;
    let answer = r#"{"name": "../../sqlx Migrations", "description": "Use when running or writing sqlx migrations.",
        "steps": [{"text": "Run sqlx migrate run before cargo test.", "sources": ["L1"]},
                  {"text": "Invented advice.", "sources": ["L77"]}],
        "pitfalls": [{"text": "Stop the dev server first: it holds the lock.", "sources": ["L2", "L1"]},
                     {"text": "Use token ghp_ZXc8vB7nM6qW5eR4tY3uI2oP1aS0dF9gH8jK", "sources": ["L2"]}]}"#;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(answer)))
        .mount(&server)
        .await;
    let out = run(mem(&project, &home)
        .env("MEM_LLM_SKILL_PROVIDER", "openai")
        .env("MEM_LLM_SKILL_MODEL", "test-model")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_API_KEY", "sk-test-key-never-logged")
        .args(["--json", "skill", "generate", "--from", "L1", "L2"]));
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["engine"], "openai:test-model");
    assert_eq!(doc["fallback"], Value::Null);
    assert_eq!(
        doc["name"], "sqlx-migrations",
        "the model's name, made safe"
    );
    assert_eq!(doc["steps"], 1);
    assert_eq!(doc["pitfalls"], 1);
    let dropped: Vec<String> = serde_json::from_value(doc["dropped"].clone()).unwrap();
    assert!(dropped.iter().any(|d| d.contains("L77")), "{dropped:?}");
    assert!(dropped.iter().any(|d| d.contains("secrets")), "{dropped:?}");
    let text =
        std::fs::read_to_string(project.join(".claude/skills/sqlx-migrations/SKILL.md")).unwrap();
    assert!(text.starts_with("---\nname: sqlx-migrations\ndescription: \"Use when running or writing sqlx migrations.\"\n---\n"), "{text}");
    assert!(
        text.contains("1. Run sqlx migrate run before cargo test. (L1)"),
        "{text}"
    );
    assert!(
        text.contains("- Stop the dev server first: it holds the lock. (L2, L1)"),
        "{text}"
    );
    assert!(
        !text.contains("Invented") && !text.contains("ghp_"),
        "{text}"
    );
    // The prompt held both memories under their ids; the key went only in the header.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(
        body.contains("- L1 [learning, tip] Run migrations first"),
        "{body}"
    );
    assert!(
        body.contains("- L2 [learning, tip] Migration lock"),
        "{body}"
    );
    assert!(!body.contains("sk-test-key"));
}
