//! Hybrid search and recall through the `mem` binary, with embeddings from an OpenAI-compatible
//! server on loopback (wiremock) configured by `[embeddings]` in the user's config file: a
//! memory that shares no word with the query is found only with embeddings; without the table
//! (the default) nothing is sent and the results are lexical; the vectors are cached in the
//! index (a repeated search embeds nothing, a new memory alone is embedded); a project file may not set the URL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

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

/// Texts about building or compiling point one way, the rest another.
fn topic(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let data: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_str().unwrap().to_lowercase();
            let v = if t.contains("build") || t.contains("compil") {
                [1.0, 0.05]
            } else {
                [0.0, 1.0]
            };
            json!({"index": i, "embedding": v})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({"data": data}))
}

fn sent_inputs(requests: &[Request]) -> usize {
    requests
        .iter()
        .map(|r| {
            let b: Value = serde_json::from_slice(&r.body).unwrap();
            b["input"].as_array().map_or(0, Vec::len)
        })
        .sum()
}

fn ids(out: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(out).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn memory_search_and_recall_are_hybrid_only_when_configured() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(project.join(".mewcode/memory")).unwrap();
    std::fs::create_dir_all(home.join(".mewcode")).unwrap();
    run(mem(&project, &home).args([
        "memory",
        "add",
        "Slow compiles",
        "Compilation is sluggish while the incremental cache is cold.",
    ]));
    run(mem(&project, &home).args(["memory", "add", "Lunch", "Basil goes on top."]));
    std::fs::write(
        project.join(".mewcode/memory/compile_cache.md"),
        "---\nname: compile cache\ndescription: warm the compiler cache first\ntype: project\n---\n\nRun cargo check once after a pull.\n",
    )
    .unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(topic)
        .mount(&server)
        .await;
    let query = "why does it take ages to build";

    // Default: lexical, nothing sent.
    let lexical = run(mem(&project, &home).args(["--json", "memory", "search", query]));
    assert!(ids(&lexical).is_empty(), "{lexical}");
    assert!(server.received_requests().await.unwrap().is_empty());

    std::fs::write(
        home.join(".mewcode/config.toml"),
        format!(
            "[embeddings]\nbase_url = \"{}/v1\"\nmodel = \"topic\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let hybrid = run(mem(&project, &home).args(["--json", "memory", "search", query]));
    let found = ids(&hybrid);
    assert!(found.contains(&"L1".to_owned()), "{hybrid}");
    assert!(!found.contains(&"L2".to_owned()), "{hybrid}");
    let first = sent_inputs(&server.received_requests().await.unwrap());
    assert!(first >= 3, "{first}");
    // Cached: the same search again embeds only the query (never cached); a new memory alone
    // is embedded besides it.
    run(mem(&project, &home).args(["--json", "memory", "search", query]));
    let second = sent_inputs(&server.received_requests().await.unwrap());
    assert_eq!(second, first + 1);
    run(mem(&project, &home).args(["memory", "add", "Build flags", "Use --release for benches."]));
    run(mem(&project, &home).args(["--json", "memory", "search", query]));
    let third = sent_inputs(&server.received_requests().await.unwrap());
    assert_eq!(third, second + 2);

    // Recall: the note is chosen with embeddings, not with --no-embeddings.
    let recall = run(mem(&project, &home).args(["--json", "recall", "--offline", "--", query]));
    let v: Value = serde_json::from_str(&recall).unwrap();
    assert_eq!(v["ids"], json!(["N:project/compile_cache.md"]), "{recall}");
    assert_eq!(v["engine"], "offline+embeddings:topic");
    let off = run(mem(&project, &home).args([
        "--json",
        "recall",
        "--offline",
        "--no-embeddings",
        "--",
        query,
    ]));
    let v: Value = serde_json::from_str(&off).unwrap();
    assert_eq!(v["ids"], json!([]), "{off}");

    // Only memories' vectors are kept, never a query's; a forgotten learning or a removed note
    // leaves no vector row for its texts.
    let db = home.join(".mewcode/tiers/memory.db");
    let rows = || -> Vec<String> {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut st = c.prepare("SELECT hash FROM vectors").unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let before = rows();
    assert!(!before.contains(&mem_core::sha256_hex(query.as_bytes())));
    let store = mem_tiers::SqliteStore::open(&db, std::time::Duration::from_secs(2)).unwrap();
    let doc_hash = |source, id: &str| {
        let docs = mem_tiers::MemoryStore::documents(&store, source, None, 100).unwrap();
        let d = docs.iter().find(|d| d.id == id).unwrap();
        mem_core::sha256_hex(mem_tiers::hybrid::document_text(d).as_bytes())
    };
    let learning = doc_hash(mem_tiers::SourceKind::Learning, "L1");
    let note = doc_hash(mem_tiers::SourceKind::Note, "N:project/compile_cache.md");
    let note_text =
        std::fs::read_to_string(project.join(".mewcode/memory/compile_cache.md")).unwrap();
    let (candidate, _) =
        mem_recall::frontmatter::candidate("compile_cache.md".to_owned(), &note_text);
    let candidate = mem_core::sha256_hex(mem_llm::hybrid::candidate_text(&candidate).as_bytes());
    drop(store);
    for h in [&learning, &note, &candidate] {
        assert!(before.contains(h), "{h} not cached");
    }
    run(mem(&project, &home).args(["memory", "forget", "L1"]));
    let after = rows();
    assert!(!after.contains(&learning));
    assert_eq!(after.len(), before.len() - 1);
    run(mem(&project, &home).args(["note", "rm", "N:project/compile_cache.md"]));
    let after = rows();
    assert!(!after.contains(&note) && !after.contains(&candidate));
    // Put the note back for what follows.
    std::fs::write(project.join(".mewcode/memory/compile_cache.md"), &note_text).unwrap();

    // A project's file may not say where texts go.
    std::fs::write(
        project.join(".mewcode/config.toml"),
        "[embeddings]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    // A bad [embeddings] is a warning naming the file; the full-text results are kept.
    let out = mem(&project, &home)
        .args(["--json", "memory", "search", "basil"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(
        stderr.contains(&project.join(".mewcode/config.toml").display().to_string()),
        "{stderr}"
    );
    assert_eq!(ids(&String::from_utf8(out.stdout).unwrap()), ["L2"]);
    let out = mem(&project, &home)
        .args([
            "--json",
            "recall",
            "--offline",
            "--",
            "warm the compiler cache",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ids"], json!(["N:project/compile_cache.md"]), "{v}");
    assert_eq!(v["engine"], "offline");
    // A value out of range in the user's file names that file.
    std::fs::remove_file(project.join(".mewcode/config.toml")).unwrap();
    std::fs::write(
        home.join(".mewcode/config.toml"),
        format!(
            "[embeddings]\nbase_url = \"{}/v1\"\nmodel = \"topic\"\nmin_similarity = 7\n",
            server.uri()
        ),
    )
    .unwrap();
    let out = mem(&project, &home)
        .args(["--json", "memory", "search", "basil"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("min_similarity = 7"), "{stderr}");
    assert!(
        stderr.contains(&home.join(".mewcode/config.toml").display().to_string()),
        "{stderr}"
    );
    assert_eq!(ids(&String::from_utf8(out.stdout).unwrap()), ["L2"]);
}

/// The same hybrid search on the team store (PostgreSQL, `MEM_TEST_PG_URL`; skipped without
/// it, failing with `MEM_REQUIRE_PG=1`): the vectors land in the schema's `vectors` table.
#[tokio::test]
async fn memory_search_is_hybrid_on_postgres_too() {
    let url = match std::env::var("MEM_TEST_PG_URL") {
        Ok(u) if !u.trim().is_empty() => u,
        _ => {
            assert!(
                std::env::var("MEM_REQUIRE_PG").map_or(true, |v| v != "1"),
                "MEM_REQUIRE_PG=1 but MEM_TEST_PG_URL is not set"
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (PostgreSQL half): MEM_TEST_PG_URL is not set"
            );
            if let Some(log) = std::env::var_os("MEM_PG_SKIP_LOG")
                && let Ok(mut f) = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(log)
            {
                let _ = writeln!(
                    f,
                    "{}::memory_search_is_hybrid_on_postgres_too",
                    env!("CARGO_CRATE_NAME")
                );
            }
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(home.join(".mewcode")).unwrap();
    let schema = format!("t_embed_cli_{}", std::process::id());
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(topic)
        .mount(&server)
        .await;
    std::fs::write(
        home.join(".mewcode/config.toml"),
        format!(
            "[store]\nurl = \"{url}\"\nschema = \"{schema}\"\nauthor = \"tester\"\n\n\
             [embeddings]\nbase_url = \"{}/v1\"\nmodel = \"topic\"\n",
            server.uri()
        ),
    )
    .unwrap();
    run(mem(&project, &home).args([
        "memory",
        "add",
        "Slow compiles",
        "Compilation is sluggish while the incremental cache is cold.",
    ]));
    run(mem(&project, &home).args(["memory", "add", "Lunch", "Basil goes on top."]));
    let out = run(mem(&project, &home).args([
        "--json",
        "memory",
        "search",
        "why does it take ages to build",
    ]));
    let found = ids(&out);
    assert_eq!(found.len(), 1, "{out}");
    assert!(found[0].starts_with('L'), "{out}");
    let store = mem_tiers::PgStore::open(
        &url,
        &mem_tiers::PgOptions {
            schema: schema.clone(),
            ..mem_tiers::PgOptions::for_author("tester")
        },
    )
    .unwrap();
    let count = || -> i64 {
        let table = format!("\"{schema}\".vectors");
        store
            .with_client(move |c| {
                Ok(c.query_one(&format!("SELECT count(*) FROM {table}"), &[])?
                    .get(0))
            })
            .unwrap()
    };
    // The two memories' vectors; the query's is not kept.
    assert_eq!(count(), 2);
    // A forgotten memory leaves no vector row.
    run(mem(&project, &home).args(["memory", "forget", &found[0]]));
    assert_eq!(count(), 1);
    store
        .with_client(move |c| c.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE")))
        .unwrap();
}

/// Runs `c` (stdin `payload`) and waits at most `limit`, killing it past that; the output and
/// how long it took, `None` for the output when it had to be killed.
fn run_timed(
    c: &mut Command,
    payload: &[u8],
    limit: std::time::Duration,
) -> (Option<std::process::Output>, std::time::Duration) {
    use std::io::Write;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(payload);
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return (Some(child.wait_with_output().unwrap()), start.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, start.elapsed())
}

fn embeddings_config(home: &Path, server: &MockServer) {
    std::fs::create_dir_all(home.join(".mewcode")).unwrap();
    std::fs::write(
        home.join(".mewcode/config.toml"),
        format!(
            "[embeddings]\nbase_url = \"{}/v1\"\nmodel = \"topic\"\n",
            server.uri()
        ),
    )
    .unwrap();
}

/// The UserPromptSubmit hook with `[embeddings]` configured and no tier database: it does not
/// create `memory.db` for the cache, nor wait for another process's setup lock on it.
#[tokio::test]
async fn the_prompt_hook_neither_creates_nor_waits_for_the_tier_database() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(project.join(".mewcode/memory")).unwrap();
    std::fs::write(
        project.join(".mewcode/memory/compile_cache.md"),
        "---\nname: compile cache\ndescription: warm the compiler cache first\ntype: project\n---\n\nRun cargo check once after a pull.\n",
    )
    .unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(topic)
        .mount(&server)
        .await;
    embeddings_config(&home, &server);
    let tiers = home.join(".mewcode/tiers");
    std::fs::create_dir_all(&tiers).unwrap();
    let lock = std::fs::File::create(tiers.join("memory.db.lock")).unwrap();
    lock.lock().unwrap();
    let payload = json!({"session_id": "c1", "cwd": project, "hook_event_name": "UserPromptSubmit",
        "prompt": "why does it take ages to build"})
    .to_string();
    let mut c = mem(&project, &home);
    c.args(["hook", "claude", "UserPromptSubmit"]);
    let (out, took) = run_timed(
        &mut c,
        payload.as_bytes(),
        std::time::Duration::from_secs(8),
    );
    drop(lock);
    let out = out.unwrap_or_else(|| panic!("the hook still ran after {took:?}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!tiers.join("memory.db").exists());
}

/// A tier database write-locked by another connection: recall keeps its embedding deadline
/// (3 s), skipping the cache write instead of waiting out the store's 5 s busy timeout.
#[tokio::test]
async fn recall_keeps_its_deadline_when_the_database_is_write_locked() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(project.join(".mewcode/memory")).unwrap();
    std::fs::create_dir_all(home.join(".mewcode")).unwrap();
    run(mem(&project, &home).args(["memory", "add", "Lunch", "Basil goes on top."]));
    std::fs::write(
        project.join(".mewcode/memory/compile_cache.md"),
        "---\nname: compile cache\ndescription: warm the compiler cache first\ntype: project\n---\n\nRun cargo check once after a pull.\n",
    )
    .unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(topic)
        .mount(&server)
        .await;
    embeddings_config(&home, &server);
    let db = home.join(".mewcode/tiers/memory.db");
    assert!(db.exists());
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut c = mem(&project, &home);
    c.args([
        "--json",
        "recall",
        "--offline",
        "--",
        "why does it take ages to build",
    ]);
    let (out, took) = run_timed(&mut c, b"", std::time::Duration::from_secs(20));
    writer.execute_batch("ROLLBACK").unwrap();
    let out = out.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < std::time::Duration::from_millis(4500),
        "took {took:?}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ids"], json!(["N:project/compile_cache.md"]));
}
