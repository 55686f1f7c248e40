//! `mem mcp` driven by a real MCP client: the built binary spawned as a child process by
//! `rmcp`'s client (child-process transport), as Claude Code or any MCP client starts it.
//! Handshake, `tools/list`, every tool called (errors included), and the same memories seen
//! through `mem memory search` / `show` (the binary) both ways.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// A `mem` command on `project` / `home`, offline, logs off.
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

/// Runs `mem ARGS --json` and parses stdout.
fn mem_json(project: &Path, home: &Path, args: &[&str]) -> Value {
    let out = mem(project, home)
        .args(args)
        .arg("--json")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "mem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("mem {args:?}: {e}"))
}

async fn client(project: &Path, home: &Path) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::from(mem(project, home));
    cmd.arg("mcp");
    let transport = TokioChildProcess::new(cmd).unwrap_or_else(|e| panic!("spawn: {e}"));
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake: {e}"))
}

fn args(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &'static str, a: Value) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new(tool).with_arguments(args(a)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

fn ids_of(search: &Value) -> Vec<String> {
    search
        .as_array()
        .or_else(|| search["results"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|h| h["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_client_uses_every_tool_and_shares_memories_with_the_cli() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_default();
    std::fs::create_dir_all(&home).unwrap_or_default();
    std::fs::write(
        project.join(".mewcode/memories.md"),
        "### 项目知识\n- The flamingo parser keeps byte offsets in every token.\n",
    )
    .unwrap_or_default();
    std::fs::write(project.join("AGENTS.md"), "Keep commits small.\n").unwrap_or_default();

    let c = client(&project, &home).await;

    // Handshake.
    let info = c.peer_info().unwrap_or_else(|| panic!("no server info"));
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("mewmem")
    );
    assert!(info.capabilities.tools.is_some());

    // tools/list: the seven tools with their annotations.
    let tools = c.list_all_tools().await.unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "memory_search",
            "memory_get",
            "memory_add",
            "memory_forget",
            "recall",
            "context",
            "session_search"
        ]
    );
    let ann = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .and_then(|t| t.annotations.clone())
            .unwrap_or_default()
    };
    for n in [
        "memory_search",
        "memory_get",
        "recall",
        "context",
        "session_search",
    ] {
        assert_eq!(ann(n).read_only_hint, Some(true), "{n}");
    }
    assert_eq!(ann("memory_forget").destructive_hint, Some(true));
    assert_eq!(ann("memory_add").read_only_hint, Some(false));
    assert_eq!(ann("memory_add").destructive_hint, Some(false));
    let search_schema = &tools[0].input_schema;
    assert_eq!(search_schema["required"], json!(["query"]));

    // memory_add (learning) through MCP, a secret in it: withheld and reported.
    let r = call(
        &c,
        "memory_add",
        json!({"title": "Use nextest", "content": "Run the tests with cargo nextest; the CI token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", "category": "best-practice", "tags": ["testing"]}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let added = structured(&r);
    let lid = added["id"].as_str().unwrap_or_default().to_owned();
    assert!(lid.starts_with('L'), "{added}");
    assert_eq!(added["withheld"], 1);
    assert!(text(&r).contains("withheld 1 secret"), "{}", text(&r));

    // ... found by `mem memory search` (the binary), same id, secret not stored.
    let found = mem_json(&project, &home, &["memory", "search", "nextest"]);
    assert_eq!(ids_of(&found), std::slice::from_ref(&lid), "{found}");
    let shown = mem_json(&project, &home, &["memory", "show", &lid]);
    let content = shown["learning"]["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("[REDACTED]") && !content.contains("ghp_"),
        "{shown}"
    );

    // And the other way: a learning added by the CLI is found and read through MCP.
    let cli = mem_json(
        &project,
        &home,
        &[
            "memory",
            "add",
            "Zebra stripes",
            "The zebra module renders stripes lazily",
            "--scope",
            "user",
        ],
    );
    let cli_id = cli["id"].as_str().unwrap_or_default().to_owned();
    let r = call(&c, "memory_search", json!({"query": "zebra stripes"})).await;
    assert!(!is_error(&r), "{}", text(&r));
    let hits = structured(&r);
    assert_eq!(ids_of(&hits), std::slice::from_ref(&cli_id), "{hits}");
    assert_eq!(hits["results"][0]["scope"], "user");
    assert!(hits["results"][0]["age"].as_str().is_some(), "{hits}");
    assert!(
        text(&r).starts_with(&format!("{cli_id}  learning  user")),
        "{}",
        text(&r)
    );

    // A memories.md entry: its M id from MCP search is accepted by the CLI and memory_get.
    let r = call(
        &c,
        "memory_search",
        json!({"query": "flamingo", "sources": ["entry"]}),
    )
    .await;
    let mid = ids_of(&structured(&r)).first().cloned().unwrap_or_default();
    assert!(
        mid.len() == 9 && mid.starts_with('M'),
        "{mid:?} {}",
        text(&r)
    );
    let shown = mem_json(&project, &home, &["memory", "show", &mid]);
    assert_eq!(shown["document"]["id"], mid.as_str());
    // Source filter: no learning matches "flamingo" (only the entry does).
    let r = call(
        &c,
        "memory_search",
        json!({"query": "flamingo", "sources": ["learning", "note"], "limit": 5}),
    )
    .await;
    assert_eq!(ids_of(&structured(&r)), Vec::<String>::new());

    // memory_get: full text of several ids, exactly as given; an unknown one is listed.
    let r = call(
        &c,
        "memory_get",
        json!({"ids": [lid.clone(), mid.clone(), "L999999"]}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let got = structured(&r);
    assert_eq!(got["memories"][0]["id"], lid.as_str());
    assert!(
        got["memories"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("cargo nextest")
    );
    assert_eq!(got["memories"][1]["id"], mid.as_str());
    assert!(
        got["memories"][1]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("byte offsets")
    );
    assert_eq!(got["not_found"], json!(["L999999"]));

    // memory_add (note, project scope): a note file recall can select; the CLI finds it.
    let r = call(
        &c,
        "memory_add",
        json!({"kind": "note", "title": "Release checklist", "content": "Before a release: bump the version, run the changelog script, tag.", "description": "Steps for cutting a release of this project"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let nid = structured(&r)["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(nid, "N:project/release_checklist.md");
    assert!(
        project
            .join(".mewcode/memory/release_checklist.md")
            .is_file()
    );
    let found = mem_json(
        &project,
        &home,
        &["memory", "search", "changelog", "release"],
    );
    assert!(ids_of(&found).contains(&nid), "{found}");
    let r = call(&c, "memory_get", json!({"ids": [nid.clone()]})).await;
    assert!(text(&r).contains("changelog script"), "{}", text(&r));

    // recall: the note comes back for a matching message (offline selector).
    let r = call(
        &c,
        "recall",
        json!({"message": "how do I cut a release and tag it?", "session_id": "s1"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert!(text(&r).contains("<system-reminder>"), "{}", text(&r));
    assert!(text(&r).contains("changelog script"), "{}", text(&r));
    assert_eq!(structured(&r)["ids"], json!([nid.clone()]));
    // Surfaced once in session s1: not again.
    let r = call(
        &c,
        "recall",
        json!({"message": "how do I cut a release and tag it?", "session_id": "s1"}),
    )
    .await;
    assert_eq!(structured(&r)["ids"], json!([]));

    // context: instructions + memories.md + Tier 0 (the learnings) in the seed §6 block.
    let r = call(&c, "context", json!({})).await;
    assert!(!is_error(&r), "{}", text(&r));
    let t = text(&r);
    for want in [
        "<system-reminder>",
        "Keep commits small.",
        "# autoMemory",
        "flamingo parser",
        "## 最近经验",
        "Use nextest",
        "# currentDate",
    ] {
        assert!(t.contains(want), "{want:?} not in {t}");
    }
    let r = call(&c, "context", json!({"budget_chars": 1000})).await;
    assert!(text(&r).encode_utf16().count() <= 1000);

    // memory_forget: removed from its home, the reason logged; the CLI no longer finds it.
    let r = call(
        &c,
        "memory_forget",
        json!({"id": lid.clone(), "reason": "superseded by the CI docs"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let found = mem_json(&project, &home, &["memory", "search", "nextest"]);
    assert_eq!(ids_of(&found), Vec::<String>::new(), "{found}");
    let log = std::fs::read_to_string(project.join(".mewcode/logs/mcp.log")).unwrap_or_default();
    assert!(
        log.contains(&format!("forgot {lid}")) && log.contains("superseded by the CI docs"),
        "{log}"
    );
    // The note, forgotten by the id MCP gave: the file is gone.
    let r = call(
        &c,
        "memory_forget",
        json!({"id": nid.clone(), "reason": "moved to the wiki"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert!(
        !project
            .join(".mewcode/memory/release_checklist.md")
            .exists()
    );

    // Errors: tool errors with clear messages; the server keeps answering.
    for (tool, a, want) in [
        (
            "memory_search",
            json!({"query": 3}),
            "invalid type: integer `3`",
        ),
        ("memory_search", json!({"q": "x"}), "unknown field `q`"),
        ("memory_search", json!({}), "missing field `query`"),
        (
            "memory_search",
            json!({"query": "x", "limit": 0}),
            "`limit` must be 1 to 100",
        ),
        (
            "memory_search",
            json!({"query": "x", "sources": ["wiki"]}),
            "unknown variant `wiki`",
        ),
        ("memory_get", json!({"ids": ["l1"]}), "l1"),
        (
            "memory_get",
            json!({"ids": ["L999999"]}),
            "no memory with the id L999999",
        ),
        ("memory_get", json!({"ids": []}), "`ids` is empty"),
        (
            "memory_add",
            json!({"title": "", "content": "x"}),
            "`title` is empty",
        ),
        (
            "memory_add",
            json!({"title": "t", "content": "x", "scope": "team"}),
            "unknown variant `team`",
        ),
        (
            "memory_add",
            json!({"kind": "note", "title": "t", "content": "x", "note_type": "diary"}),
            "diary",
        ),
        (
            "memory_add",
            json!({"title": "t", "content": "x", "note_type": "user"}),
            "are for notes",
        ),
        (
            "memory_forget",
            json!({"id": "L1"}),
            "missing field `reason`",
        ),
        (
            "memory_forget",
            json!({"id": "L1", "reason": "  "}),
            "`reason` is empty",
        ),
        (
            "memory_forget",
            json!({"id": "N:team/x.md", "reason": "r"}),
            "N:team/x.md",
        ),
        (
            "memory_forget",
            json!({"id": lid.clone(), "reason": "again"}),
            lid.as_str(),
        ),
        ("recall", json!({"message": ""}), "`message` is empty"),
        (
            "recall",
            json!({"message": "x", "session_id": "../etc"}),
            "session_id",
        ),
        (
            "context",
            json!({"budget_chars": 10}),
            "`budget_chars` must be",
        ),
    ] {
        let r = call(&c, tool, a.clone()).await;
        assert!(is_error(&r), "{tool} {a}: {}", text(&r));
        assert!(
            text(&r).contains(want),
            "{tool} {a}: {:?} not in {}",
            want,
            text(&r)
        );
        assert!(text(&r).starts_with(tool), "{tool}: {}", text(&r));
    }

    // An unknown tool: a JSON-RPC error naming the tools.
    let err = c
        .call_tool(CallToolRequestParams::new("memory_delete").with_arguments(JsonObject::new()))
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("unknown tool `memory_delete`"), "{err}");

    // A 10 MB argument: refused with a clear message, nothing written, the server still up.
    let big = "x".repeat(10 << 20);
    let r = call(&c, "memory_add", json!({"title": "big", "content": big})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(text(&r).contains("at most 1048576"), "{}", text(&r));
    let r = call(
        &c,
        "memory_add",
        json!({"kind": "note", "title": "big", "content": "y".repeat(10 << 20)}),
    )
    .await;
    assert!(is_error(&r));
    assert!(!project.join(".mewcode/memory/big.md").exists());
    let r = call(&c, "memory_search", json!({"query": "q".repeat(10 << 20)})).await;
    assert!(text(&r).contains("at most 4096"), "{}", text(&r));
    let r = call(&c, "recall", json!({"message": "release ".repeat(1 << 20)})).await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(structured(&r)["message_cut"], true);
    let r = call(&c, "memory_search", json!({"query": "zebra"})).await;
    assert_eq!(ids_of(&structured(&r)), [cli_id]);

    c.cancel().await.unwrap_or_else(|e| panic!("{e}"));
}

/// `memory_search` with a scope returns `limit` hits when that many match, even when the other
/// scope holds many better-ranked matches (the scope is filtered in the store's query, not
/// after its limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_search_fills_its_limit() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_default();
    std::fs::create_dir_all(&home).unwrap_or_default();
    let c = client(&project, &home).await;
    // 30 project learnings that rank high (the word three times), 4 user ones that rank low.
    for i in 0..30 {
        let r = call(
            &c,
            "memory_add",
            json!({"title": format!("quokka quokka rule {i}"),
                   "content": format!("quokka cages are cleaned on day {i}"),
                   "scope": "project"}),
        )
        .await;
        assert!(!is_error(&r), "{}", text(&r));
    }
    let mut user_ids = Vec::new();
    for i in 0..4 {
        let r = call(
            &c,
            "memory_add",
            json!({"title": format!("user habit {i}"),
                   "content": format!("a long note about reviews, releases, builds and tests, \
                                       with one quokka in it ({i})"),
                   "scope": "user"}),
        )
        .await;
        assert!(!is_error(&r), "{}", text(&r));
        user_ids.push(structured(&r)["id"].as_str().unwrap_or_default().to_owned());
    }
    let search = |scope: &'static str, limit: usize| {
        let c = &c;
        async move {
            let r = call(
                c,
                "memory_search",
                json!({"query": "quokka", "scope": scope, "limit": limit}),
            )
            .await;
            assert!(!is_error(&r), "{}", text(&r));
            structured(&r)
        }
    };
    let user = search("user", 3).await;
    assert_eq!(ids_of(&user).len(), 3, "{user}");
    assert!(
        ids_of(&user).iter().all(|id| user_ids.contains(id)),
        "{user}"
    );
    let all_user = search("user", 10).await;
    assert_eq!(ids_of(&all_user).len(), 4, "{all_user}");
    let project_hits = search("project", 12).await;
    assert_eq!(ids_of(&project_hits).len(), 12, "{project_hits}");
    assert!(
        project_hits["results"]
            .as_array()
            .is_some_and(|r| r.iter().all(|h| h["scope"] == "project")),
        "{project_hits}"
    );
    c.cancel().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A client that sends a call and goes away (stdin closed mid-call): the server finishes or
/// drops the call, exits 0 without a panic, and leaves no half-written memory.
#[test]
fn a_client_that_disconnects_mid_call_ends_the_server_cleanly() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(&project).unwrap_or_default();
    std::fs::create_dir_all(&home).unwrap_or_default();
    let mut child = mem(&project, &home)
        .env("MEM_LOG", "warn")
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let body = "Step one.\n".repeat(50_000);
    let lines = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_add","arguments":{"kind":"note","title":"Long runbook","description":"The whole runbook","content":body}}}),
    ];
    if let Some(mut stdin) = child.stdin.take() {
        for l in &lines {
            let _ = writeln!(stdin, "{l}");
        }
        // Dropped here: the client is gone mid-call.
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // stdout holds only protocol messages.
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["jsonrpc"], "2.0");
    }
    // The note is either whole or absent; no temp file is left.
    let dir = project.join(".mewcode/memory");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".notes.lock" {
                // The folder's lock every note writer takes (mem_recall::NOTES_LOCK_FILE).
                continue;
            }
            assert!(!name.ends_with(".tmp"), "left over: {name}");
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            assert!(text.starts_with("---\n"), "{name}");
            assert_eq!(text.matches("Step one.").count(), 50_000, "{name}");
        }
    }
}

#[tokio::test]
async fn session_search_finds_a_phrase_of_an_imported_real_transcript() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(&project).unwrap_or_default();
    std::fs::create_dir_all(&home).unwrap_or_default();
    let rollout = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../fixtures/transcripts/codex/AcidicSoil_codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    );
    let out = mem(&project, &home)
        .args(["session", "import"])
        .arg(&rollout)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let c = client(&project, &home).await;
    let r = call(
        &c,
        "session_search",
        json!({"query": "rigging up the chatbot-ui", "limit": 5}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    let hits = structured(&r)["hits"].clone();
    assert_eq!(
        hits[0]["session_id"], "019a93b9-f380-7600-98ff-940e6b99603c",
        "{hits}"
    );
    assert_eq!(hits[0]["record"], 2, "{hits}");
    assert_eq!(hits[0]["role"], "user", "{hits}");
    assert!(
        text(&r).contains("019a93b9-f380-7600-98ff-940e6b99603c #2 "),
        "{}",
        text(&r)
    );
    // Filters and errors.
    let r = call(
        &c,
        "session_search",
        json!({"query": "ollama", "session": "019a", "since": "2030-01-01"}),
    )
    .await;
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(structured(&r)["hits"], json!([]));
    for (a, want) in [
        (json!({"query": "  "}), "`query` is empty"),
        (
            json!({"query": "x", "since": "soon"}),
            "`soon` is not a date",
        ),
        (json!({"query": "x", "session": "zzz"}), "no session `zzz`"),
        (
            json!({"query": "x", "limit": 0}),
            "`limit` must be 1 to 100",
        ),
    ] {
        let r = call(&c, "session_search", a.clone()).await;
        assert!(is_error(&r), "{a}");
        assert!(text(&r).contains(want), "{a}: {}", text(&r));
    }
    c.cancel().await.unwrap_or_else(|e| panic!("{e}"));
}
