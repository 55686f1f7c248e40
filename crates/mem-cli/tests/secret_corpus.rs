//! The secret corpus test of issue 27: every credential form of `fixtures/secrets/positive.txt`
//! pushed through every write path of the built `mem` binary (an imported Claude Code
//! transcript extracted, `memory add`, `note add`, MCP `memory_add`, the Stop hook, `memory
//! import`, `skill generate`, `compact sweep`, checkpoint create and restore), then every file
//! under the temp project and the temp home scanned, as bytes (the SQLite database and its
//! `-wal` included), for each secret value: none may be found.
//!
//! The session records (`.mewcode/sessions/*.jsonl`) are the transcripts themselves, kept as
//! Claude Code wrote them (a copy of a file the user already has, not memory): their message
//! records, and the copy of the last messages a compact boundary keeps verbatim, are left out of
//! the scan; what mewmem itself writes into them (the boundary's summary and stats) and the
//! `.meta` files (the session title) are scanned like every other file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const MEM: &str = env!("CARGO_BIN_EXE_mem");
const POSITIVE: &str = include_str!("../../../fixtures/secrets/positive.txt");

/// `(text, secret value)` of every corpus line.
fn corpus() -> Vec<(&'static str, &'static str)> {
    POSITIVE
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.split_once('\t')
                .unwrap_or_else(|| panic!("no TAB in corpus line {l:?}"))
        })
        .collect()
}

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

/// Runs `mem ARGS`, which must succeed; returns its output.
fn run(project: &Path, home: &Path, args: &[&str]) -> Output {
    let out = mem(project, home)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "mem {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run_json(project: &Path, home: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run(project, home, &all);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("mem {args:?}: {e}"))
}

/// A Claude Code transcript (JSONL) in which the user states every corpus text as a standing
/// instruction and the assistant runs it as a Bash command.
fn transcript(session: &str, cases: &[(&str, &str)]) -> String {
    let mut lines = Vec::new();
    let mut parent = Value::Null;
    let mut n = 0;
    let mut push = |message: Value, kind: &str, parent: &mut Value| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        lines.push(
            json!({
                "parentUuid": parent.clone(),
                "isSidechain": false,
                "userType": "external",
                "cwd": "/work/app",
                "sessionId": session,
                "version": "2.0.76",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": format!("2026-01-07T11:{:02}:{:02}.000Z", n / 60 % 60, n % 60),
            })
            .to_string(),
        );
        *parent = Value::String(uuid);
    };
    for (i, (text, _)) in cases.iter().enumerate() {
        push(
            json!({"role": "user", "content": format!("From now on always run {text} before you deploy the app.")}),
            "user",
            &mut parent,
        );
        let id = format!("toolu_{i:04}");
        push(
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": text, "description": format!("run {text}")}}
            ]}),
            "assistant",
            &mut parent,
        );
        push(
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": format!("ran {text}\nok"), "is_error": false}
            ]}),
            "user",
            &mut parent,
        );
        push(
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done: {text}")}]}),
            "assistant",
            &mut parent,
        );
    }
    lines.join("\n") + "\n"
}

/// Every file under `dir`, recursively (symlinks not followed).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// The bytes of `path` to scan: the whole file, but for a session record only what mewmem wrote
/// into it (its compact boundaries), not the transcript's own message records.
fn scanned_bytes(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let in_sessions = path.components().any(|c| c.as_os_str() == "sessions");
    if !(in_sessions && path.extension().is_some_and(|e| e == "jsonl")) {
        return bytes;
    }
    let mut out = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            // A line that is not a record is scanned whole.
            out.extend_from_slice(line);
            continue;
        };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(kind, "user" | "assistant" | "tool_result" | "system_prompt") {
            continue;
        }
        // A boundary: its summary and stats are mewmem's; the tail it keeps is transcript.
        let mut v = v;
        if let Some(map) = v.as_object_mut() {
            map.remove("keep_messages");
        }
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_of_the_corpus_is_stored_by_any_write_path() {
    let cases = corpus();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("app");
    let home = tmp.path().join("home");
    let src = tmp.path().join("claude");
    for d in [&project, &home, &src] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let (p, h) = (project.as_path(), home.as_path());
    let all_text: String = cases.iter().map(|(t, _)| *t).collect::<Vec<_>>().join("\n");

    // 1. A Claude Code transcript imported, then extracted (offline engine).
    let t1 = src.join("deploy-notes.jsonl");
    std::fs::write(&t1, transcript("deploy-notes", &cases)).unwrap();
    run(p, h, &["session", "import", t1.to_str().unwrap()]);
    let out = run(p, h, &["extract", "--offline", "--session", "deploy-notes"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    // Issue 27 item 4: the report counts what was withheld.
    let withheld: usize = report
        .split("secrets withheld: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in:\n{report}"));
    assert!(withheld > 0, "{report}");

    // 2. memory add: title, content, context, tags (a case-sensitive key id among them).
    let mut ids = Vec::new();
    for (i, (text, _)) in cases.iter().enumerate() {
        let added = run_json(
            p,
            h,
            &[
                "memory",
                "add",
                &format!("deploy step {i}: {text}"),
                &format!("Before deploying run {text} and check the output."),
                "--context",
                &format!("seen while running {text}"),
                "--tags",
                "deploy,AKIAQ7ZK3VX9M2WB5NRT,ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            ],
        );
        ids.push(
            added["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{added}"))
                .to_owned(),
        );
    }

    // 3. note add: every text in the body and one in the description.
    run(
        p,
        h,
        &[
            "note",
            "add",
            "--name",
            "deploy credentials",
            "--description",
            &format!("how to deploy with {}", cases[0].0),
            "--type",
            "project",
            &all_text,
        ],
    );

    // 4. MCP memory_add, a learning and a note, over stdio.
    {
        let mut cmd = tokio::process::Command::from(mem(p, h));
        cmd.arg("mcp");
        let client =
            ().serve(TokioChildProcess::new(cmd).unwrap())
                .await
                .unwrap_or_else(|e| panic!("handshake: {e}"));
        for a in [
            json!({"title": format!("mcp {}", cases[1].0), "content": all_text, "tags": ["mcp", "AKIAQ7ZK3VX9M2WB5NRT"]}),
            json!({"kind": "note", "title": "mcp deploy", "content": all_text, "description": format!("deploy with {}", cases[2].0)}),
        ] {
            let Value::Object(args) = a else {
                unreachable!()
            };
            let r = client
                .call_tool(CallToolRequestParams::new("memory_add").with_arguments(args))
                .await
                .unwrap_or_else(|e| panic!("memory_add: {e}"));
            assert_ne!(r.is_error, Some(true), "{r:?}");
        }
        client.cancel().await.unwrap();
    }

    // 5. The Stop hook of a second session: imported from its transcript, then extracted.
    let t2 = src.join("release-run.jsonl");
    std::fs::write(&t2, transcript("release-run", &cases)).unwrap();
    let payload = tmp.path().join("stop.json");
    std::fs::write(
        &payload,
        json!({"session_id": "release-run", "transcript_path": t2, "hook_event_name": "Stop",
               "stop_hook_active": false, "last_assistant_message": "Done."})
        .to_string(),
    )
    .unwrap();
    run(
        p,
        h,
        &[
            "hook",
            "claude",
            "Stop",
            "--input",
            payload.to_str().unwrap(),
        ],
    );

    // 6. memory import of an archive whose every string field holds a secret.
    let mut archive = run_json(p, h, &["memory", "archive", "--format", "json"]);
    let aws = "AKIAQ7ZK3VX9M2WB5NRT";
    let secret_of = |i: usize| cases[i % cases.len()].0.to_owned();
    archive["user_preferences"] = json!({
        format!("key-{aws}"): secret_of(3),
        "editor": secret_of(4),
    });
    archive["projects"] = json!([{
        "key": "path:/elsewhere/imported",
        "name": format!("imported {}", secret_of(5)),
        "path": "/elsewhere/imported",
        "language": secret_of(6),
        "framework": secret_of(7),
        "test_command": secret_of(8),
        "custom_commands": {format!("deploy-{aws}"): secret_of(9), "lint": secret_of(10)},
        "notes": cases.iter().map(|(t, _)| t.to_string()).collect::<Vec<_>>(),
        "created_ms": 1_700_000_000_000_i64,
        "last_used_ms": 1_700_000_000_000_i64,
    }]);
    let learnings: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, (t, _))| {
            json!({
                "id": 10_000 + i,
                "title": format!("imported {t}"),
                "content": format!("imported {t}"),
                "category": format!("Cat-{aws}"),
                "tags": [format!("T-{aws}")],
                "context": t,
                "project_key": Value::Null,
                "created_ms": 1_700_000_000_000_i64 + i as i64,
                "last_used_ms": 1_700_000_000_000_i64 + i as i64,
            })
        })
        .collect();
    if let Some(list) = archive["learnings"].as_array_mut() {
        list.extend(learnings);
    }
    let archive_file = tmp.path().join("archive.json");
    std::fs::write(&archive_file, archive.to_string()).unwrap();
    run(p, h, &["memory", "import", archive_file.to_str().unwrap()]);

    // 7. skill generate from the learnings stored above.
    let mut args = vec![
        "skill",
        "generate",
        "--offline",
        "--name",
        "deploy-steps",
        "--from",
    ];
    args.extend(ids.iter().map(String::as_str));
    run(p, h, &args);

    // 8. compact sweep of the first session (offline summary written into a boundary; a small
    // window so the prefix is worth summarising).
    let sweep = run(
        p,
        h,
        &[
            "compact",
            "sweep",
            "--session",
            "deploy-notes",
            "--force",
            "--window",
            "6000",
        ],
    );
    let sweep = String::from_utf8_lossy(&sweep.stdout).into_owned();

    // 9. checkpoint create, a change, restore.
    run(p, h, &["checkpoint", "create", "--user", "before"]);
    run(
        p,
        h,
        &["memory", "add", "later", &format!("later {}", cases[3].0)],
    );
    run(p, h, &["checkpoint", "restore", "--force", "before"]);

    // The scan: every file under the project and the home.
    let mut scanned = 0;
    let mut hits = Vec::new();
    let mut saw_db = false;
    let mut saw_boundary = false;
    for dir in [&project, &home] {
        for f in files(dir) {
            let bytes = scanned_bytes(&f);
            saw_db |= f.extension().is_some_and(|e| e == "db");
            saw_boundary |= find(&bytes, b"compact_boundary") && find(&bytes, b"[REDACTED]");
            scanned += 1;
            for (text, secret) in &cases {
                if find(&bytes, secret.as_bytes()) {
                    hits.push(format!("{} holds {secret:?} (from {text:?})", f.display()));
                }
            }
        }
    }
    assert!(saw_db, "no database file under the project or home");
    assert!(
        saw_boundary,
        "no compact boundary with a withheld secret was written:\n{sweep}"
    );
    assert!(scanned > 10, "{scanned} files");
    assert!(hits.is_empty(), "{} hits:\n{}", hits.len(), hits.join("\n"));
}
