//! Files and the bytes left on disk (issue 27 items 3, 5–8): a forgotten memory leaves no
//! trace in the database files, note paths never leave the project through a symlink, FIFOs
//! never hang a command, an unclosed fence in `memories.md` is never written into, a symlinked
//! `settings.json` is written through.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// How long a command may take before the test calls it hung.
const HANG: Duration = Duration::from_secs(20);

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

/// Runs `mem ARGS` with no stdin; a run over [`HANG`] is killed and fails the test.
fn run(project: &Path, home: &Path, args: &[&str]) -> Output {
    let mut child = mem(project, home)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > HANG => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mem {args:?} hung for {HANG:?}");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("wait: {e}"),
        }
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("output: {e}"))
}

/// [`run`], which must succeed; returns stdout.
fn ok(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = run(project, home, args);
    assert!(
        out.status.success(),
        "mem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// [`run`], which must fail; returns stderr.
fn fails(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = run(project, home, args);
    assert!(
        !out.status.success(),
        "mem {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A project and a home folder under a fresh temporary root.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    (root, project, home)
}

/// Every regular file under `dir` (symlinks not followed).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                todo.push(e.path());
            } else if ft.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// The files under `dir` whose raw bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

/// The markers to scan for: the whole word and its tail (an FTS index stores a term after the
/// prefix it shares with the term before it).
fn traces(marker: &str) -> [&str; 2] {
    [marker, &marker[3..]]
}

fn assert_no_trace(root: &Path, marker: &str) {
    for needle in traces(marker) {
        let hits = files_containing(root, needle);
        assert!(hits.is_empty(), "{needle:?} is still in {hits:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Item 3: forget purges the database files.

#[test]
fn a_forgotten_learning_leaves_no_byte_in_the_database_files() {
    let (root, project, home) = dirs();
    let marker = "zqv7leakedpassword4kx";
    for i in 0..20 {
        ok(
            &project,
            &home,
            &[
                "memory",
                "add",
                &format!("neighbour {i}"),
                &format!("an ordinary lesson number {i} about the build"),
            ],
        );
    }
    let out = ok(
        &project,
        &home,
        &[
            "memory",
            "add",
            &format!("login {marker}"),
            &format!("the database password is {marker} for staging"),
            "--tags",
            marker,
            "--context",
            &format!("seen in {marker}.log"),
            "--json",
        ],
    );
    let added: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let id = added["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{added}"))
        .to_owned();
    for i in 20..40 {
        ok(
            &project,
            &home,
            &[
                "memory",
                "add",
                &format!("neighbour {i}"),
                &format!("an ordinary lesson number {i} about the build"),
            ],
        );
    }
    assert!(!files_containing(&root.path().join("home"), marker).is_empty());
    ok(&project, &home, &["memory", "forget", &id]);
    assert_no_trace(root.path(), marker);
    // The neighbours are intact and still found.
    let found = ok(
        &project,
        &home,
        &["memory", "search", "ordinary", "--limit", "50", "--json"],
    );
    assert!(
        found.contains("neighbour 39") && found.contains("neighbour 0"),
        "{found}"
    );
    let err = fails(&project, &home, &["memory", "show", &id]);
    assert!(err.contains("no memory"), "{err}");
}

async fn client(project: &Path, home: &Path) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::from(mem(project, home));
    cmd.arg("mcp");
    let transport = TokioChildProcess::new(cmd).unwrap_or_else(|e| panic!("spawn: {e}"));
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake: {e}"))
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &'static str, a: Value) -> CallToolResult {
    let Value::Object(a) = a else {
        panic!("not an object: {a}")
    };
    let a: JsonObject = a;
    c.call_tool(CallToolRequestParams::new(tool).with_arguments(a))
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

fn structured_id(r: &CallToolResult) -> String {
    let v = r.structured_content.clone().unwrap_or(Value::Null);
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {v}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_forget_through_mcp_leaves_no_byte_in_the_database_files() {
    let (root, project, home) = dirs();
    let marker = "mcp9leakedtoken3bq";
    let note_marker = "mcp4notesecret7hh";
    let c = client(&project, &home).await;
    for i in 0..10 {
        let r = call(
            &c,
            "memory_add",
            json!({"title": format!("neighbour {i}"), "content": format!("an ordinary lesson {i}")}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    let r = call(
        &c,
        "memory_add",
        json!({"title": "staging login", "content": format!("the password is {marker} on staging"), "tags": [marker]}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let lid = structured_id(&r);
    let r = call(
        &c,
        "memory_add",
        json!({"kind": "note", "title": "Staging access", "content": format!("Log in with {note_marker} first."), "description": "How to reach staging"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let nid = structured_id(&r);
    // Indexed: the note's text is in the database too.
    ok(&project, &home, &["memory", "search", "staging"]);
    assert!(!files_containing(&home, marker).is_empty());
    assert!(!files_containing(&home, note_marker).is_empty());
    for id in [lid, nid] {
        let r = call(
            &c,
            "memory_forget",
            json!({"id": id, "reason": "a secret was leaked"}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    assert_no_trace(root.path(), marker);
    assert_no_trace(root.path(), note_marker);
    let _ = c.cancel().await;
}

// ---------------------------------------------------------------------------------------------
// Item 6: a FIFO (or any non-regular file) where mewmem reads never hangs a command.

/// A transcript with something to extract.
fn transcript() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/extract/bad-memories-file/followup.jsonl")
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))
        .unwrap_or_else(|e| panic!("{e}"));
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs `mem ARGS` (killed after [`HANG`]): when it fails, its message names the file.
fn never_hangs(project: &Path, home: &Path, args: &[&str], file: &Path) -> Output {
    let out = run(project, home, args);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            err.contains(&name),
            "mem {args:?}: the error does not name {name}: {err}"
        );
    }
    out
}

#[test]
fn fifos_at_memories_files_never_hang_checkpoint_or_extract() {
    for (level, file) in [
        ("project", "memories.md"),
        ("project", "memories.meta.json"),
        ("user", "memories.md"),
        ("user", "memories.meta.json"),
    ] {
        let (_root, project, home) = dirs();
        let transcript = transcript();
        ok(
            &project,
            &home,
            &["session", "import", &transcript.to_string_lossy()],
        );
        let dir = if level == "project" {
            project.join(".mewcode")
        } else {
            home.join(".mewcode")
        };
        let fifo = dir.join(file);
        mkfifo(&fifo);
        for args in [
            &["checkpoint", "create", "c1"][..],
            &["extract"][..],
            &["memory", "stats"][..],
            &["context"][..],
        ] {
            never_hangs(&project, &home, args, &fifo);
            // The FIFO is left as it is: never replaced, never written into.
            let ft = std::fs::symlink_metadata(&fifo)
                .unwrap_or_else(|e| panic!("{e}"))
                .file_type();
            assert!(
                std::os::unix::fs::FileTypeExt::is_fifo(&ft),
                "{level} {file}: mem {args:?} replaced the FIFO"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Item 5: a `.mewcode/memory` symlink out of the project is refused on every note write and
// delete (as `.mewcode/sessions` is), unless `--allow-outside-project`.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notes_folder_symlinked_out_of_the_project_is_never_written_or_deleted() {
    let (root, project, home) = dirs();
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        outside.join("keep.md"),
        "---\nname: keep\ndescription: d\ntype: project\n---\nkeep me\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&outside, project.join(".mewcode/memory"))
        .unwrap_or_else(|e| panic!("{e}"));
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(&outside)
            .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let before = listing();
    for args in [
        &[
            "note",
            "add",
            "--name",
            "release",
            "--description",
            "d",
            "--type",
            "project",
            "the body",
        ][..],
        &["note", "rm", "N:project/keep.md"][..],
        &["memory", "forget", "N:project/keep.md"][..],
    ] {
        let err = fails(&project, &home, args);
        assert!(
            err.contains("leads out of the project") && err.contains("--allow-outside-project"),
            "mem {args:?}: {err}"
        );
        assert_eq!(listing(), before, "mem {args:?} changed the folder outside");
    }
    let c = client(&project, &home).await;
    let r = call(
        &c,
        "memory_add",
        json!({"kind": "note", "title": "Outside", "content": "never written"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    let r = call(
        &c,
        "memory_forget",
        json!({"id": "N:project/keep.md", "reason": "test"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", text(&r));
    let _ = c.cancel().await;
    assert_eq!(listing(), before, "MCP changed the folder outside");
    // With the override, the write goes there (and says so).
    let out = run(
        &project,
        &home,
        &[
            "--allow-outside-project",
            "note",
            "add",
            "--name",
            "release",
            "--description",
            "d",
            "--type",
            "project",
            "the body",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert!(outside.join("release.md").is_file());
}

/// `mem memory add TITLE -` with `input` on standard input.
fn add_from_stdin(project: &Path, home: &Path, input: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = mem(project, home)
        .args(["memory", "add", "Long lesson", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    // A writer that stops early (the limit) closes the pipe: not an error here.
    let _ = stdin.write_all(input);
    drop(stdin);
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("output: {e}"))
}

#[test]
fn content_from_standard_input_is_whole_up_to_the_limit_and_refused_over_it() {
    let (_root, project, home) = dirs();
    // 512 KiB: four times what an argument may hold on this system.
    let lesson: String = "Retry the socket test once before bisecting. ".repeat(12_000);
    let out = add_from_stdin(&project, &home, lesson.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Read while it runs (`run` waits first, and half a megabyte fills the pipe).
    let shown = mem(&project, &home)
        .args(["memory", "show", "L1"])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("show: {e}"));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(lesson.trim_end()),
        "the lesson came back whole"
    );
    // Over 1 MiB: refused with its size, nothing stored.
    let big = vec![b'x'; (1 << 20) + 10];
    let out = add_from_stdin(&project, &home, &big);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("at most 1048576"),
        "{err}"
    );
    // Empty standard input, and bytes that are not UTF-8: refused.
    let err = String::from_utf8_lossy(&add_from_stdin(&project, &home, b"").stderr).into_owned();
    assert!(err.contains("content") && err.contains("empty"), "{err}");
    let err = String::from_utf8_lossy(&add_from_stdin(&project, &home, b"ok \xff\xfe").stderr)
        .into_owned();
    assert!(err.contains("not UTF-8"), "{err}");
    assert!(fails(&project, &home, &["memory", "show", "L2"]).contains("L2"));
}
