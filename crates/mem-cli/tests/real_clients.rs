//! The real agent clients end to end (issue 28): Claude Code and Codex CLI, installed from npm
//! at pinned versions by `.ci/agents.sh`, run headless with mewmem's hooks and MCP server as the
//! README installs them, against a scripted model server of our own on loopback.
//!
//! The server speaks Anthropic Messages (`POST /v1/messages`, SSE) and OpenAI Responses
//! (`POST /v1/responses`, SSE), records every request, and answers from a script chosen by a
//! marker in the user's prompt (`SAVE-IT`: call the MCP tools; `BIG`: report a full context
//! window so that the client compacts before its next turn). It is also each client's
//! `HTTPS_PROXY`: a connection a client tries anywhere else arrives as a `CONNECT`, is refused
//! and shows in the log.
//!
//! Per client, the checks are on what the model received and on the files written:
//! - session 1: the project's AGENTS.md reaches the model exactly once (the client loads it
//!   itself; the SessionStart hook leaves it out); a preference the user states is extracted
//!   by the Stop hook into `~/.mewcode/memories.md` and the transcript is synced;
//! - an MCP round trip through the client: `memory_add` (a learning, then a note) and
//!   `memory_search`, whose results the model receives;
//! - session 2: the first request holds the preference and Tier 0 (the learning), and the
//!   recall reminder for the prompt brings back the note;
//! - a compaction (`/compact` in Claude Code, an automatic one in Codex): the first request after
//!   it holds the start context again, once;
//! - no process is left running.
//!
//! Where the clients are: `MEM_AGENTS_BIN` (a folder with `claude` and `codex`; `.ci/agents.sh`
//! prints it). Without it the suite is skipped with a message; `MEM_REQUIRE_AGENTS=1` (set by
//! `.ci/run`) turns the skip into a failure.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test: a failed spawn, pipe or parse is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// How long one client run may take before it is killed (a client that waits on something
/// it will never get fails the test instead of hanging it).
const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

/// A rule only the project's AGENTS.md holds: counted in what the model receives.
const AGENTS_RULE: &str = "Run ./scripts/check-licenses.sh before every commit.";
/// The preference the user states in session 1.
const PREFERENCE: &str = "From now on, always answer me in French.";
/// The learning and the note added through MCP.
const LEARNING: &str = "The release script is scripts/release.sh and it needs GPG signing.";
const NOTE_BODY: &str = "Deploy to staging with `make ship ENV=staging` from the bastion host.";
/// The first words of mewmem's extraction prompt: a request holding them is a model call of
/// the `claude-cli` / `codex-cli` provider.
const EXTRACT_PROMPT_MARK: &str = "You maintain the long-term memory of a coding assistant.";
/// The entry the scripted model extracts (different from the user's words, so that an offline
/// fallback, which keeps the user's words, cannot pass for it).
const CLI_MODEL_ENTRY: &str = "Reply to the user in French (extracted by the CLI model).";

/// The extraction JSON mewmem's extract prompt asks for, with [`CLI_MODEL_ENTRY`].
fn extraction_reply() -> String {
    json!({"memory": [{"event": "ADD", "id": null, "category": "preferences",
        "text": CLI_MODEL_ENTRY}]})
    .to_string()
}

/// A line of the start context's frame (seed §6): present whenever mewmem's context is.
const CONTEXT_MARK: &str = "# autoMemory";

/// The folder holding the real clients, or `None` (the suite is skipped) when it is not set.
fn agents_bin() -> Option<PathBuf> {
    let dir = std::env::var_os("MEM_AGENTS_BIN").filter(|d| !d.is_empty());
    let required = std::env::var("MEM_REQUIRE_AGENTS").is_ok_and(|v| v == "1");
    match dir {
        Some(d) => {
            let d = PathBuf::from(d);
            for client in ["claude", "codex"] {
                assert!(
                    d.join(client).exists(),
                    "MEM_AGENTS_BIN={} has no `{client}` (run .ci/agents.sh)",
                    d.display()
                );
            }
            Some(d)
        }
        None if required => {
            panic!("MEM_REQUIRE_AGENTS=1 but MEM_AGENTS_BIN is not set (run .ci/agents.sh)")
        }
        None => {
            eprintln!(
                "SKIPPED: the real-client suite needs MEM_AGENTS_BIN (bash .ci/agents.sh prints it)"
            );
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scripted model server
// ---------------------------------------------------------------------------------------------

/// Every text of a request's conversation (Anthropic `messages[]` / `system`, or Responses
/// `input[]`), for the script to look at.
fn conversation_text(body: &Value) -> String {
    let mut s = String::new();
    for key in ["messages", "input"] {
        if let Some(v) = body.get(key) {
            s.push_str(&v.to_string());
        }
    }
    s
}

/// Anthropic Messages SSE for `content` (text and tool_use blocks) ending with `stop_reason`.
fn anthropic_sse(content: &[Value], stop_reason: &str) -> String {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 1}}})];
    for (i, block) in content.iter().enumerate() {
        if block["type"] == "text" {
            events.push(json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": block["text"]}}));
        } else {
            events.push(json!({"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                  "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta",
                          "partial_json": block["input"].to_string()}}));
        }
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 20}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// OpenAI Responses SSE for `items` (output items) with `input_tokens` reported as used.
fn responses_sse(items: &[Value], input_tokens: u64) -> String {
    let mut events = vec![json!({"type": "response.created", "response": {"id": "resp_scripted"}})];
    for (i, item) in items.iter().enumerate() {
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(
        json!({"type": "response.completed", "response": {"id": "resp_scripted",
        "usage": {"input_tokens": input_tokens, "input_tokens_details": null,
                  "output_tokens": 20, "output_tokens_details": null,
                  "total_tokens": input_tokens + 20}}}),
    );
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// The MCP calls of the `SAVE-IT` script, in order: (tool, arguments).
fn save_it_calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "memory_add",
            json!({"title": "Release script", "content": LEARNING, "category": "project"}),
        ),
        (
            "memory_add",
            json!({"kind": "note", "title": "Staging deploys",
                   "description": "how to deploy the project to staging",
                   "content": NOTE_BODY}),
        ),
        ("memory_search", json!({"query": "release script"})),
    ]
}

/// Claude Code's turn: the `SAVE-IT` script first loads the deferred MCP tools through
/// `ToolSearch`, then makes the calls one per request (counted by the tool results so far).
fn claude_turn(body: &Value) -> (Vec<Value>, &'static str) {
    if body["system"].to_string().contains(EXTRACT_PROMPT_MARK) {
        return (
            vec![json!({"type": "text", "text": extraction_reply()})],
            "end_turn",
        );
    }
    let text = conversation_text(body);
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if text.contains("SAVE-IT") && has_tools {
        let done = text.matches("\"tool_result\"").count();
        let mut steps = vec![
            json!({"type": "tool_use", "id": "toolu_0", "name": "ToolSearch",
            "input": {"query": "select:mcp__mewmem__memory_add,mcp__mewmem__memory_search"}}),
        ];
        for (i, (tool, args)) in save_it_calls().into_iter().enumerate() {
            steps.push(json!({"type": "tool_use", "id": format!("toolu_{}", i + 1),
                "name": format!("mcp__mewmem__{tool}"), "input": args}));
        }
        if let Some(step) = steps.get(done) {
            return (vec![step.clone()], "tool_use");
        }
    }
    let reply = if text.contains("CRITICAL: Respond with TEXT ONLY") {
        "Summary: the user set up the release script and a staging deploy note."
    } else {
        "Done (scripted reply)."
    };
    (vec![json!({"type": "text", "text": reply})], "end_turn")
}

/// Codex's turn: the `SAVE-IT` script calls the tools of the `mcp__mewmem` namespace, one per
/// request; `BIG` reports a context window used up so that Codex compacts before the next turn.
fn codex_turn(body: &Value) -> (Vec<Value>, u64) {
    let text = conversation_text(body);
    if text.contains(EXTRACT_PROMPT_MARK) {
        let item = json!({"type": "message", "role": "assistant", "id": "msg_scripted",
            "content": [{"type": "output_text", "text": extraction_reply()}]});
        return (vec![item], 1_000);
    }
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let last_user = input
        .iter()
        .rev()
        .find(|i| i["type"] == "message" && i["role"] == "user")
        .map(Value::to_string)
        .unwrap_or_default();
    if text.contains("SAVE-IT") {
        let done = input
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .count();
        if let Some((tool, args)) = save_it_calls().into_iter().nth(done) {
            let item = json!({"type": "function_call", "name": tool, "namespace": "mcp__mewmem",
                "arguments": args.to_string(), "call_id": format!("call_{done}")});
            return (vec![item], 1_000);
        }
    }
    let (reply, tokens) = if text.contains("CONTEXT CHECKPOINT COMPACTION") {
        (
            "Summary: the user set up the release script and a staging deploy note.",
            1_000,
        )
    } else if last_user.contains("BIG") {
        ("A long answer (scripted).", 190_000)
    } else {
        ("Done (scripted reply).", 1_000)
    };
    let item = json!({"type": "message", "role": "assistant", "id": "msg_scripted",
        "content": [{"type": "output_text", "text": reply}]});
    (vec![item], tokens)
}

/// The scripted server, started on loopback.
async fn scripted_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(|req: &Request| {
            let path = req.url.path();
            if req.method.as_str() != "POST" {
                return ResponseTemplate::new(403);
            }
            let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
                return ResponseTemplate::new(400);
            };
            if path == "/v1/messages" {
                let (content, stop) = claude_turn(&body);
                if body["stream"] == true {
                    return ResponseTemplate::new(200)
                        .set_body_raw(anthropic_sse(&content, stop), "text/event-stream");
                }
                return ResponseTemplate::new(200).set_body_json(json!({
                    "id": "msg_scripted", "type": "message", "role": "assistant",
                    "model": "scripted", "content": content, "stop_reason": stop,
                    "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 20}}));
            }
            if path == "/v1/responses" {
                let (items, tokens) = codex_turn(&body);
                return ResponseTemplate::new(200)
                    .set_body_raw(responses_sse(&items, tokens), "text/event-stream");
            }
            ResponseTemplate::new(404)
        })
        .mount(&server)
        .await;
    server
}

/// The model requests received since `from` (index into the server's log): JSON bodies of
/// `POST /v1/messages` or `/v1/responses`.
async fn model_requests(server: &MockServer, from: usize) -> Vec<Value> {
    server.received_requests().await.unwrap()[from..]
        .iter()
        .filter(|r| {
            r.method.as_str() == "POST" && matches!(r.url.path(), "/v1/messages" | "/v1/responses")
        })
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect()
}

/// The number of requests the server has seen so far.
async fn seen(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

/// The hosts a client tried to reach through the proxy (`CONNECT host:port`).
async fn connects(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "CONNECT")
        .map(|r| r.url.to_string())
        .collect()
}

/// The first request of a turn: the first one with the client's tools (side requests such as
/// a title or a compaction summary carry none, or carry the compaction prompt).
fn first_turn_request(requests: &[Value]) -> &Value {
    requests
        .iter()
        .find(|r| {
            let t = conversation_text(r);
            !t.contains("CRITICAL: Respond with TEXT ONLY")
                && !t.contains("CONTEXT CHECKPOINT COMPACTION")
                && r.get("tools")
                    .and_then(Value::as_array)
                    .is_some_and(|t| !t.is_empty())
        })
        .unwrap_or_else(|| panic!("no turn request among {} requests", requests.len()))
}

/// Occurrences of `needle` in everything the model was given (system prompt and conversation).
fn occurrences(request: &Value, needle: &str) -> usize {
    let mut s = conversation_text(request);
    if let Some(system) = request.get("system") {
        s.push_str(&system.to_string());
    }
    if let Some(instructions) = request.get("instructions") {
        s.push_str(&instructions.to_string());
    }
    // Texts inside JSON strings: escape the needle the way JSON does.
    let escaped = serde_json::to_string(needle).unwrap();
    s.matches(&escaped[1..escaped.len() - 1]).count()
}

// ---------------------------------------------------------------------------------------------
// Running a client
// ---------------------------------------------------------------------------------------------

/// A temp project and home with the AGENTS.md-only project of the checks.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("shop");
        let home = root.join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            project.join("AGENTS.md"),
            format!("# Shop\n\n- {AGENTS_RULE}\n- Keep functions short.\n"),
        )
        .unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
        World {
            _dir: dir,
            root,
            project,
            home,
        }
    }

    /// `mem --home H --project P ARGS`, which must succeed.
    fn mem(&self, args: &[&str]) -> String {
        let out = self
            .base(Command::new(MEM))
            .arg("--home")
            .arg(&self.home)
            .arg("--project")
            .arg(&self.project)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mem {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A command with a clean environment: `PATH`, `HOME`, no `MEM_*`.
    fn base(&self, mut c: Command) -> Command {
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("MEM_LOG", "warn")
            .current_dir(&self.project);
        c
    }

    /// The user-level `memories.md` (empty when absent).
    fn user_memories(&self) -> String {
        std::fs::read_to_string(self.home.join(".mewcode/memories.md")).unwrap_or_default()
    }

    /// The project's `memories.md` (empty when absent).
    fn project_memories(&self) -> String {
        std::fs::read_to_string(self.project.join(".mewcode/memories.md")).unwrap_or_default()
    }

    /// Files directly in `.mewcode/sessions/` whose name ends with `suffix`.
    fn session_files(&self, suffix: &str) -> Vec<PathBuf> {
        std::fs::read_dir(self.project.join(".mewcode/sessions"))
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.to_string_lossy().ends_with(suffix))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// No process still runs whose command line names this world's folder.
    fn assert_no_process_left(&self) {
        let needle = self.root.to_string_lossy().into_owned();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = processes_naming(&needle);
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "processes left running: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Command lines (from `/proc`) that contain `needle`, except this test's own.
fn processes_naming(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

/// Runs `c` to its end, killed past [`CLIENT_TIMEOUT`]; panics unless it exits 0.
fn run(mut c: Command, what: &str) -> Output {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > CLIENT_TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: killed after {CLIENT_TIMEOUT:?}\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a blocking client on the blocking pool, so that the server keeps answering.
async fn run_blocking(c: Command, what: &'static str) -> Output {
    tokio::task::spawn_blocking(move || run(c, what))
        .await
        .unwrap()
}

/// The `SAVE-IT` script's results reached the model (the last request holds the tool results)
/// and the note is a file in `.mewcode/memory/`.
fn assert_mcp_round_trip(world: &World, requests: &[Value]) {
    let last = conversation_text(requests.last().unwrap());
    assert!(
        last.contains(r#"\"id\":\"L1\""#),
        "memory_add returned L1: {last}"
    );
    assert!(last.contains("N:project/"), "the note was added: {last}");
    assert!(
        last.contains(r#"\"results\":[{\"id\":\"L1\""#),
        "memory_search found the learning: {last}"
    );
    let notes: Vec<PathBuf> = std::fs::read_dir(world.project.join(".mewcode/memory"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(NOTE_BODY)))
        .collect();
    assert_eq!(notes.len(), 1, "the note is a file in .mewcode/memory/");
}

/// Extraction scope (issue 28): what the user typed is extracted, the instructions file the
/// client itself loads (Codex sends AGENTS.md as a user message) never is: AGENTS.md's rule is
/// in neither memories.md.
fn assert_extraction_scope(world: &World) {
    for (file, text) in [
        ("~/.mewcode/memories.md", world.user_memories()),
        ("<project>/.mewcode/memories.md", world.project_memories()),
    ] {
        for needle in ["check-licenses", "Keep functions short"] {
            assert!(
                !text.contains(needle),
                "AGENTS.md's rule `{needle}` was extracted into {file}: {text:?}"
            );
        }
    }
}

/// Session 2's first turn: what session 1 left is there, each once, and AGENTS.md once.
fn assert_session_two(turn: &Value) {
    for (needle, what) in [
        ("always answer me in French", "memories.md"),
        ("scripts/release.sh", "Tier 0 (the learning)"),
        ("make ship ENV=staging", "the recalled note"),
        (AGENTS_RULE, "AGENTS.md"),
    ] {
        assert_eq!(occurrences(turn, needle), 1, "{what}, exactly once");
    }
}

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

fn claude(world: &World, bin: &Path, server: &MockServer, prompt: &str, resume: bool) -> Command {
    let mut c = world.base(Command::new(bin.join("claude")));
    c.env("ANTHROPIC_BASE_URL", server.uri())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted-test")
        .env("HTTPS_PROXY", server.uri())
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args(["-p", prompt, "--allowedTools", "mcp__mewmem"]);
    if resume {
        c.arg("--continue");
    }
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_with_hooks_and_mcp() {
    let Some(bin) = agents_bin() else { return };
    let world = World::new();
    let server = scripted_server().await;
    world.mem(&["hook", "install", "--scope", "project", "--command", MEM]);
    std::fs::write(
        world.project.join(".mcp.json"),
        serde_json::to_string_pretty(&json!({"mcpServers": {"mewmem": {
            "command": MEM,
            "args": ["--home", &world.home, "--project", &world.project, "mcp"]}}}))
        .unwrap(),
    )
    .unwrap();

    // Session 1: a preference.
    let mark = seen(&server).await;
    run_blocking(
        claude(&world, &bin, &server, PREFERENCE, false),
        "claude session 1",
    )
    .await;
    let first = model_requests(&server, mark).await;
    let turn = first_turn_request(&first);
    assert_eq!(
        occurrences(turn, AGENTS_RULE),
        1,
        "AGENTS.md reaches the model exactly once"
    );
    assert!(
        occurrences(turn, "&lt;system-reminder>") == 0,
        "the hook's context reaches the model unescaped"
    );
    assert!(
        world.user_memories().contains("always answer me in French"),
        "the Stop hook extracts the preference into ~/.mewcode/memories.md: {:?}",
        world.user_memories()
    );
    assert_extraction_scope(&world);
    assert_eq!(
        world.session_files(".jsonl").len(),
        1,
        "the transcript is synced"
    );

    // The MCP round trip, in a second session.
    let mark = seen(&server).await;
    run_blocking(
        claude(
            &world,
            &bin,
            &server,
            "SAVE-IT: remember these two things.",
            false,
        ),
        "claude MCP session",
    )
    .await;
    let requests = model_requests(&server, mark).await;
    assert_mcp_round_trip(&world, &requests);

    // Session 2: what session 1 left is in the first request.
    let mark = seen(&server).await;
    run_blocking(
        claude(&world, &bin, &server, "How do I deploy to staging?", false),
        "claude session 2",
    )
    .await;
    let second = model_requests(&server, mark).await;
    assert_session_two(first_turn_request(&second));

    // A compaction, then one more turn: the context is there again, once.
    let mark = seen(&server).await;
    run_blocking(
        claude(&world, &bin, &server, "/compact", true),
        "claude /compact",
    )
    .await;
    run_blocking(
        claude(&world, &bin, &server, "What was I doing?", true),
        "claude after /compact",
    )
    .await;
    let after = model_requests(&server, mark).await;
    let turn = after
        .iter()
        .rev()
        .find(|r| conversation_text(r).contains("What was I doing?"))
        .expect("the turn after the compaction");
    assert!(
        conversation_text(turn).contains("continued from a previous conversation"),
        "the turn after /compact starts from Claude Code's summary"
    );
    assert_eq!(
        occurrences(turn, CONTEXT_MARK),
        1,
        "the start context is re-injected once after the compaction"
    );
    assert_eq!(
        occurrences(turn, AGENTS_RULE),
        1,
        "AGENTS.md once after the compaction"
    );

    assert_eq!(
        connects(&server).await,
        Vec::<String>::new(),
        "no other host was tried"
    );
    world.assert_no_process_left();
}

// ---------------------------------------------------------------------------------------------
// Codex CLI
// ---------------------------------------------------------------------------------------------

fn codex(world: &World, bin: &Path, server: &MockServer, prompt: &str, resume: bool) -> Command {
    let mut c = world.base(Command::new(bin.join("codex")));
    c.env("CODEX_HOME", world.home.join(".codex"))
        .env("SCRIPTED_API_KEY", "scripted-test-key")
        .env("HTTPS_PROXY", server.uri())
        .args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
        ]);
    if resume {
        c.args(["resume", "--last"]);
    }
    c.arg(prompt);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_cli_with_hooks_and_mcp() {
    let Some(bin) = agents_bin() else { return };
    let world = World::new();
    let server = scripted_server().await;
    let codex_home = world.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let toml_str = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n\
             model_auto_compact_token_limit = 150000\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\n\
             wire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n\
             [mcp_servers.mewmem]\ncommand = {}\nargs = [\"--home\", {}, \"--project\", {}, \"mcp\"]\n",
            server.uri(),
            toml_str(Path::new(MEM)),
            toml_str(&world.home),
            toml_str(&world.project),
        ),
    )
    .unwrap();
    // User scope ($CODEX_HOME/hooks.json): a project's .codex/ layer is read only once the
    // project is trusted.
    world.mem(&["hook", "install", "--agent", "codex", "--command", MEM]);

    // Session 1: a preference.
    let mark = seen(&server).await;
    run_blocking(
        codex(&world, &bin, &server, PREFERENCE, false),
        "codex session 1",
    )
    .await;
    let first = model_requests(&server, mark).await;
    let turn = first_turn_request(&first);
    assert_eq!(
        occurrences(turn, AGENTS_RULE),
        1,
        "AGENTS.md reaches the model exactly once"
    );
    assert!(
        world.user_memories().contains("always answer me in French"),
        "the Stop hook extracts the preference: {:?}",
        world.user_memories()
    );
    assert_extraction_scope(&world);
    assert_eq!(
        world.session_files(".jsonl").len(),
        1,
        "the rollout is synced"
    );

    // The MCP round trip.
    let mark = seen(&server).await;
    run_blocking(
        codex(
            &world,
            &bin,
            &server,
            "SAVE-IT: remember these two things.",
            false,
        ),
        "codex MCP session",
    )
    .await;
    let requests = model_requests(&server, mark).await;
    assert_mcp_round_trip(&world, &requests);

    // Session 2.
    let mark = seen(&server).await;
    run_blocking(
        codex(&world, &bin, &server, "How do I deploy to staging?", false),
        "codex session 2",
    )
    .await;
    let second = model_requests(&server, mark).await;
    assert_session_two(first_turn_request(&second));

    // An automatic compaction: a turn that fills the window, then the next turn.
    run_blocking(
        codex(
            &world,
            &bin,
            &server,
            "BIG: explain the whole codebase.",
            true,
        ),
        "codex full window",
    )
    .await;
    let mark = seen(&server).await;
    run_blocking(
        codex(&world, &bin, &server, "What was I doing?", true),
        "codex after compaction",
    )
    .await;
    let after = model_requests(&server, mark).await;
    assert!(
        after
            .iter()
            .any(|r| conversation_text(r).contains("CONTEXT CHECKPOINT COMPACTION")),
        "Codex compacted"
    );
    let turn = after
        .iter()
        .rev()
        .find(|r| conversation_text(r).contains("What was I doing?"))
        .expect("the turn after the compaction");
    assert_eq!(
        occurrences(turn, CONTEXT_MARK),
        1,
        "the start context is re-injected once after the compaction"
    );

    world.assert_no_process_left();
}

// ---------------------------------------------------------------------------------------------
// The agent's own CLI as the model (`claude-cli`, `codex-cli`)
// ---------------------------------------------------------------------------------------------

/// A Claude Code transcript with the preference, imported into the store as the session that
/// `mem extract` reads (with the offline configuration still in place).
fn import_session(world: &World) {
    let transcript = world.root.join("typed.jsonl");
    let line = |n: u32, kind: &str, text: &str| {
        json!({"type": kind, "sessionId": "typed1", "cwd": world.project,
            "uuid": format!("{kind}{n}"), "timestamp": format!("2026-12-01T10:00:0{n}.000Z"),
            "message": {"role": kind, "content": [{"type": "text", "text": text}]}})
        .to_string()
    };
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n",
            line(1, "user", PREFERENCE),
            line(2, "assistant", "D'accord.")
        ),
    )
    .unwrap();
    world.mem(&["session", "import", &transcript.to_string_lossy()]);
}

/// `mem extract` with `[llm] provider = PROVIDER` (the program given by `command`) through
/// the real client against the scripted server; `env` points the child at the server. Checks:
/// the entry the model returned lands in `~/.mewcode/memories.md` (not the offline engine's);
/// the server saw exactly one extraction request; the hooks installed in the child's
/// environment did nothing (no `.mewcode/` in the child's folder, no hooks log, no second
/// extraction); `mem llm check --call` reports the provider.
async fn cli_as_the_model(
    world: &World,
    server: &MockServer,
    provider: &str,
    program: &Path,
    env: &[(&str, String)],
) {
    import_session(world);
    let user_config = world.home.join(".mewcode/config.toml");
    std::fs::create_dir_all(user_config.parent().unwrap()).unwrap();
    std::fs::write(
        &user_config,
        format!(
            "[llm]\nprovider = \"{provider}\"\ncommand = {}\n",
            serde_json::to_string(&program.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    // The child runs in the temporary folder: one of this world's, to look into afterwards.
    let tmp = world.root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mem = |args: &[&str]| {
        let mut c = world.base(Command::new(MEM));
        c.arg("--home")
            .arg(&world.home)
            .arg("--project")
            .arg(&world.project)
            .args(args)
            .env("TMPDIR", &tmp);
        for (k, v) in env {
            c.env(k, v);
        }
        c
    };
    let mark = seen(server).await;
    let out = run_blocking(mem(&["extract"]), "mem extract through the CLI").await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let requests = model_requests(server, mark).await;
    let extractions = requests
        .iter()
        .filter(|r| {
            r["system"].to_string().contains(EXTRACT_PROMPT_MARK)
                || conversation_text(r).contains(EXTRACT_PROMPT_MARK)
        })
        .count();
    assert_eq!(
        extractions, 1,
        "one extraction request through {provider}, no second one from a hook: {stdout}"
    );
    assert!(
        world.user_memories().contains(CLI_MODEL_ENTRY),
        "the CLI model's entry lands in ~/.mewcode/memories.md: {:?}\n{stdout}\n{}",
        world.user_memories(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !tmp.join(".mewcode").exists(),
        "a hook ran inside the child session (it wrote {}/.mewcode)",
        tmp.display()
    );
    assert_eq!(
        world.session_files(".jsonl").len(),
        1,
        "the child's session was not synced into the project"
    );
    assert!(
        !world.project.join(".mewcode/logs/hooks.log").exists(),
        "no hook ran"
    );
    // The same call made by hand, with the provider's own arguments: its output parses to the
    // model's reply. `MEM_RECORD_CLI_OUTPUT=1` records it into fixtures/llm-cli/ for the
    // parser's unit tests in mem-llm (src/cli.rs).
    let kind: mem_llm::ProviderKind = provider.parse().unwrap();
    let request = mem_llm::prompt::ChatRequest {
        job: mem_llm::Job::Extract,
        system: format!("{EXTRACT_PROMPT_MARK} (recorded call)"),
        user: PREFERENCE.to_owned(),
        max_tokens: 64,
        schema: None,
    };
    let model = kind.default_model().unwrap_or_default();
    let mut c = world.base(Command::new(program));
    c.args(mem_llm::cli::command_args(kind, model, &request))
        .env(mem_llm::cli::CHILD_SESSION_ENV, "1")
        .current_dir(&tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(mem_llm::cli::command_stdin(kind, &request).as_bytes())
            .unwrap();
    }
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    let parsed = match kind {
        mem_llm::ProviderKind::ClaudeCli => mem_llm::cli::parse_claude_output(&raw),
        _ => mem_llm::cli::parse_codex_output(&raw),
    };
    assert_eq!(parsed, Ok(extraction_reply()), "{raw}");
    if std::env::var("MEM_RECORD_CLI_OUTPUT").is_ok_and(|v| v == "1") {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/llm-cli");
        std::fs::create_dir_all(&dir).unwrap();
        let name = match kind {
            mem_llm::ProviderKind::ClaudeCli => "claude-2.1.328.json",
            _ => "codex-0.169.0.jsonl",
        };
        std::fs::write(dir.join(name), &raw).unwrap();
    }
    // `mem llm check --call` reports the provider and its reply.
    let out = run_blocking(
        mem(&["--json", "llm", "check", "--call"]),
        "mem llm check --call",
    )
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let extract = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job"] == "extract")
        .cloned()
        .unwrap();
    assert_eq!(extract["provider"], provider);
    assert_eq!(extract["command"], program.to_string_lossy().as_ref());
    let call = doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["job"] == "extract")
        .cloned()
        .unwrap();
    assert_eq!(call["status"], "ok", "{doc}");
    world.assert_no_process_left();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_cli_as_the_model() {
    let Some(bin) = agents_bin() else { return };
    let world = World::new();
    let server = scripted_server().await;
    // Claude Code's hooks at user scope, where the child (in another folder) still loads them.
    world.mem(&["hook", "install", "--scope", "user", "--command", MEM]);
    let env = [
        ("ANTHROPIC_BASE_URL", server.uri()),
        ("ANTHROPIC_API_KEY", "sk-ant-scripted-test".to_owned()),
        ("HTTPS_PROXY", server.uri()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
    ];
    cli_as_the_model(&world, &server, "claude-cli", &bin.join("claude"), &env).await;
    assert_eq!(
        connects(&server).await,
        Vec::<String>::new(),
        "no other host was tried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_cli_as_the_model() {
    let Some(bin) = agents_bin() else { return };
    let world = World::new();
    let server = scripted_server().await;
    let codex_home = world.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"scripted\"\nmodel_provider = \"scripted\"\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\n\
             wire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n",
            server.uri()
        ),
    )
    .unwrap();
    world.mem(&["hook", "install", "--agent", "codex", "--command", MEM]);
    let env = [
        ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
        ("SCRIPTED_API_KEY", "scripted-test-key".to_owned()),
        ("HTTPS_PROXY", server.uri()),
    ];
    cli_as_the_model(&world, &server, "codex-cli", &bin.join("codex"), &env).await;
}
