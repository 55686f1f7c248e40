//! Live end to end (opt-in, run by `.ci/live-llm.sh`): a coding agent loop through the `mewmem`
//! facade against a real model server on loopback (`MEM_LIVE_LLM_URL`, OpenAI-compatible).
//!
//! Session 1, four turns with tool calls (`read_file`, `remember`, `save_note`) at a small
//! context window (2,048 tokens): compaction happens, summarised by the model, and the seed §6
//! block is injected again, once; every turn ends with an extraction into `memories.md` by the
//! model. Session 2 (a new `Memory`): the start context brings back what session 1 learnt (the
//! `memories.md` entries and Tier 0 with the learning), and the recall for a user message
//! brings back the note.
//!
//! The small model the script starts (SmolLM2-135M) calls tools rarely and writes weak JSON.
//! So the agent does what a careful agent harness does: a request the user made explicitly
//! (read this file, remember that) is carried out by the harness as a tool call when the model
//! did not make it, and the model's own tool calls are executed too; the model's unusable
//! replies fall back to the offline engine (reported). The assertions are on the files and the
//! next request's context, and hold whichever answered; recall selects with the offline
//! engine so the note is found deterministically (model selection is covered by mem-llm's live
//! tests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mem_core::{ContentBlock, Message, Role, is_long_term_memory};
use mem_llm::{CallPolicy, Job, Llm, ModelEngine, OfflineEngine, Provider, ProviderKind, Router};
use mewmem::{AgentSession, Memory, MemorySettings};
use serde_json::{Value, json};

#[path = "../examples/common/openai.rs"]
mod openai;
use mem_sources::FromProject;
use openai::{from_openai, to_openai};

fn url() -> String {
    std::env::var("MEM_LIVE_LLM_URL").expect(
        "set MEM_LIVE_LLM_URL to the base URL of a running model server (see .ci/live-llm.sh)",
    )
}

fn model() -> String {
    std::env::var("MEM_LIVE_LLM_MODEL").unwrap_or_else(|_| "local".to_owned())
}

fn engine(job: Job) -> Arc<dyn Llm> {
    let policy = CallPolicy {
        timeout: Duration::from_secs(180),
        max_retries: 1,
        ..CallPolicy::for_job(job)
    };
    let provider =
        Provider::new(ProviderKind::OpenAi, &url(), model(), None, &policy).expect("provider");
    Arc::new(ModelEngine::new(provider, policy))
}

fn tools() -> Value {
    let f = |name: &str, description: &str, props: Value, required: Value| {
        json!({"type": "function", "function": {"name": name, "description": description,
               "parameters": {"type": "object", "properties": props, "required": required}}})
    };
    json!([
        f(
            "read_file",
            "Read a text file of the project",
            json!({"path": {"type": "string"}}),
            json!(["path"])
        ),
        f(
            "remember",
            "Save a lesson for later sessions",
            json!({"title": {"type": "string"}, "content": {"type": "string"}}),
            json!(["title", "content"])
        ),
        f(
            "save_note",
            "Save a note that is recalled when a later message is about it",
            json!({"title": {"type": "string"}, "description": {"type": "string"},
                 "content": {"type": "string"}}),
            json!(["title", "description", "content"])
        ),
    ])
}

/// The agent's tools, run on the project (and the user's tier store under `home`).
fn run_tool(project: &Path, home: &Path, name: &str, input: &Value) -> (String, bool) {
    let s = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match name {
        "read_file" => {
            let rel = s("path");
            match std::fs::read_to_string(project.join(rel.trim_start_matches("./"))) {
                Ok(t) if !rel.contains("..") => (t, false),
                _ => (format!("{rel}: no such file in the project"), true),
            }
        }
        "remember" => {
            let config = mem_tiers::MemoryConfig::for_home(home);
            let added = mem_tiers::MemoryManager::from_project(project, config).and_then(|mm| {
                mm.add_learning_in(
                    &s("title"),
                    &s("content"),
                    "general",
                    &[],
                    None,
                    mem_tiers::LearningScope::Project,
                )
            });
            match added {
                Ok(a) => (format!("saved L{}", a.learning.id), false),
                Err(e) => (e.to_string(), true),
            }
        }
        "save_note" => {
            let dirs = mem_recall::MemoryDirs::standard(project, home, &[]);
            let note = mem_recall::NewNote {
                name: s("title"),
                description: s("description"),
                kind: "project".into(),
                body: s("content"),
            };
            match mem_recall::write_note(&dirs, mem_recall::Scope::Project, &note, true) {
                Ok(w) => (format!("saved {}", w.id), false),
                Err(e) => (e.to_string(), true),
            }
        }
        other => (format!("unknown tool {other}"), true),
    }
}

struct Agent {
    client: reqwest::Client,
    project: PathBuf,
    home: PathBuf,
    compactions: usize,
    model_tool_calls: usize,
    harness_tool_calls: usize,
    harness_ids: usize,
}

impl Agent {
    async fn chat(&self, messages: &[Message]) -> Message {
        let body = json!({"model": model(), "messages": to_openai(messages), "tools": tools(),
                          "max_tokens": 96, "temperature": 0});
        let reply: Value = self
            .client
            .post(format!("{}/v1/chat/completions", url()))
            .json(&body)
            .send()
            .await
            .expect("the model server answers")
            .error_for_status()
            .expect("the model server accepts the request")
            .json()
            .await
            .expect("a JSON reply");
        from_openai(&reply["choices"][0]["message"])
    }

    async fn push(&mut self, session: &mut AgentSession, message: Message) {
        let r = session.model_message(message).await.expect("append");
        if r.triggered {
            self.compactions += 1;
            // Right after a compaction the block heads the context again, exactly once.
            let msgs = session.request_messages();
            assert!(is_long_term_memory(&msgs[0]), "no block after compaction");
            assert_eq!(msgs.iter().filter(|m| is_long_term_memory(m)).count(), 1);
        }
    }

    /// One turn: the user's message, up to 3 model steps (its tool calls executed), then the
    /// calls the user asked for that the harness carries out, then the end of the turn.
    async fn turn(&mut self, session: &mut AgentSession, prompt: &str, asked: &[(&str, Value)]) {
        session.user_message(prompt).expect("user message");
        for _ in 0..3 {
            let request = session.next_request().await;
            let reply = self.chat(&request).await;
            let calls: Vec<(String, String, Value)> = reply
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse {
                        id, name, input, ..
                    } => Some((id.clone(), name.clone(), input.clone())),
                    _ => None,
                })
                .collect();
            self.push(session, reply).await;
            if calls.is_empty() {
                break;
            }
            self.model_tool_calls += calls.len();
            let results = calls
                .iter()
                .map(|(id, name, input)| {
                    let (text, err) = run_tool(&self.project, &self.home, name, input);
                    ContentBlock::tool_result(id, text, err)
                })
                .collect();
            self.push(session, Message::new(Role::User, results)).await;
        }
        for (name, input) in asked {
            self.harness_ids += 1;
            let id = format!("harness_{}", self.harness_ids);
            self.push(
                session,
                Message::new(
                    Role::Assistant,
                    vec![ContentBlock::tool_use(&id, *name, input.clone())],
                ),
            )
            .await;
            let (text, err) = run_tool(&self.project, &self.home, name, input);
            assert!(!err, "{name}: {text}");
            self.push(
                session,
                Message::new(Role::User, vec![ContentBlock::tool_result(&id, text, err)]),
            )
            .await;
            self.harness_tool_calls += 1;
        }
        assert!(session.end_turn(), "extraction started");
        let report = session
            .wait_extraction()
            .await
            .expect("extraction")
            .expect("a report");
        eprintln!(
            "turn {prompt:?}: extraction by {} ({} new messages, {} entries added{})",
            report.engine,
            report.messages_new,
            report.files.iter().map(|f| f.added.len()).sum::<usize>(),
            report
                .fallback
                .as_deref()
                .map(|f| format!("; offline fallback: {f}"))
                .unwrap_or_default()
        );
    }
}

fn bullets(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a model server: set MEM_LIVE_LLM_URL (see .ci/live-llm.sh)"]
async fn live_agent_learns_in_one_session_and_the_next_session_gets_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("shop");
    let home = dir.path().join("home");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        project.join("MEWCODE.md"),
        "Run the tests before every commit.\n",
    )
    .unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "shop", "scripts": {"build": "vite build", "test": "vitest run"}}"#,
    )
    .unwrap();
    let server: String = (0..40)
        .map(|i| {
            format!(
                "// handler {i}: validates the cart and answers with JSON\nfn handler_{i}() {{}}\n"
            )
        })
        .collect();
    std::fs::write(
        project.join("src/server.rs"),
        format!("const PORT: u16 = 8743;\n{server}"),
    )
    .unwrap();
    let deploy: String = (1..=40)
        .map(|i| {
            format!("{i}. Check step {i} of the release: build, upload, verify the health page.\n")
        })
        .collect();
    std::fs::write(project.join("docs/deploy.md"), deploy).unwrap();

    let date = chrono::Local::now().date_naive();
    let llm: Arc<dyn Llm> = Arc::new(Router::new(
        engine(Job::Summarize),
        engine(Job::Extract),
        Arc::new(OfflineEngine),
    ));
    let mut settings = MemorySettings::new(&home, llm, date);
    settings.compact.model_context_window = 2_048;
    let client = mem_llm::http::build_client(Duration::from_secs(10)).unwrap();
    let mut agent = Agent {
        client,
        project: project.clone(),
        home: home.clone(),
        compactions: 0,
        model_tool_calls: 0,
        harness_tool_calls: 0,
        harness_ids: 0,
    };

    // Session 1.
    let memory = Memory::open(&project, settings.clone()).unwrap();
    let mut s1 = memory.start().unwrap();
    let id1 = s1.id().to_owned();
    assert!(is_long_term_memory(&s1.request_messages()[0]));
    let read = |p: &str| ("read_file", json!({"path": p}));
    agent
        .turn(
            &mut s1,
            "From now on always use pnpm instead of npm in this repository. Read package.json \
             and tell me the build script.",
            &[read("package.json")],
        )
        .await;
    agent
        .turn(
            &mut s1,
            "Read src/server.rs: which port does the server listen on?",
            &[read("src/server.rs")],
        )
        .await;
    agent
        .turn(
            &mut s1,
            "Read docs/deploy.md and list the deploy steps.",
            &[read("docs/deploy.md")],
        )
        .await;
    agent
        .turn(
            &mut s1,
            "Remember for later sessions: deploying to staging needs the VPN connected first.",
            &[
                (
                    "save_note",
                    json!({"title": "Staging deploy needs the VPN",
                           "description": "Deploying to staging: connect the VPN first",
                           "content": "Deploying to staging requires the VPN (vpn.shop.internal) to be connected first."}),
                ),
                (
                    "remember",
                    json!({"title": "Staging deploy needs the VPN",
                           "content": "Connect vpn.shop.internal before deploying to staging"}),
                ),
            ],
        )
        .await;
    eprintln!(
        "session 1: {} compactions, {} tool calls by the model, {} by the harness",
        agent.compactions, agent.model_tool_calls, agent.harness_tool_calls
    );

    // Files after session 1.
    assert!(
        agent.compactions >= 1,
        "no compaction at a 2,048-token window"
    );
    let meta = memory.store().meta(&id1).unwrap();
    assert!(meta.compactions >= 1, "the boundary is in the session file");
    let entries: Vec<String> = [
        project.join(".mewcode/memories.md"),
        home.join(".mewcode/memories.md"),
    ]
    .iter()
    .flat_map(|p| bullets(p))
    .collect();
    assert!(!entries.is_empty(), "nothing extracted into memories.md");
    assert!(
        project
            .join(".mewcode/memory/staging_deploy_needs_the_vpn.md")
            .is_file()
    );
    drop(s1);

    // Session 2: a new process would do exactly this.
    let memory2 = Memory::open(&project, settings).unwrap();
    let mut s2 = memory2.start().unwrap();
    assert_ne!(s2.id(), id1);
    let block = s2.request_messages()[0].text_content();
    assert!(
        block.contains("Run the tests before every commit."),
        "{block}"
    );
    for e in &entries {
        assert!(
            block.contains(e.as_str()),
            "memories.md entry {e:?} not in {block}"
        );
    }
    assert!(block.contains("## 最近经验"), "{block}");
    assert!(block.contains("Staging deploy needs the VPN"), "{block}");
    s2.user_message("How do I deploy the shop to staging?")
        .unwrap();
    let request = s2.next_request().await;
    let last_user = request.iter().rposition(|m| m.role == Role::User).unwrap();
    let reminder = request[last_user - 1].text_content();
    assert!(
        reminder.contains("<system-reminder>") && reminder.contains("vpn.shop.internal"),
        "{reminder}"
    );
    assert_eq!(request.iter().filter(|m| is_long_term_memory(m)).count(), 1);
    // The model takes the next request as it is.
    let answer = agent.chat(&request).await;
    eprintln!("session 2 answer: {}", answer.text_content());
}
