//! Read-only commands write nothing (issue 27 item 18): on a project that is already
//! registered and indexed, `mem memory search` (with and without hits), `show`, `stats`, `core`,
//! `selected`, `archive` and `mem context` leave every file of the store, the project and the
//! home as they were (same listing, sizes and modification times); and they succeed when the
//! database file and every folder are write-protected (issue 29 Build 1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

mod common;
use common::mem_command;

fn mem(project: &Path, home: &Path, args: &[&str]) -> String {
    mem_as(project, home, args, None)
}

/// `mem ARGS`, as user and group `uid` when given (root writes through any file mode).
fn mem_as(project: &Path, home: &Path, args: &[&str], uid: Option<u32>) -> String {
    let mut c = mem_command(project, home);
    if let Some(id) = uid {
        use std::os::unix::process::CommandExt as _;
        c.uid(id).gid(id);
    }
    let out = c.args(args).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "mem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file and folder under `root`: (size, modification time) of each file, and each
/// folder by name only: SQLite creates its `-wal` / `-shm` files at every open and removes
/// them at close (no data in them), which touches the folder's time but not its listing. A file
/// left behind (a `-wal`, a temp file) shows in the listing.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                todo.push(path.clone());
            }
            let entry = if meta.is_dir() {
                (0, SystemTime::UNIX_EPOCH)
            } else {
                (
                    meta.len(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                )
            };
            out.insert(path, entry);
        }
    }
    out
}

/// A project and home with a note, a `memories.md` entry and a learning, indexed by a first
/// search: (project, home, the learning's id).
fn populated(root: &Path) -> (PathBuf, PathBuf, String) {
    let (project, home) = (root.join("project"), root.join("home"));
    std::fs::create_dir_all(project.join(".mewcode/memory")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        project.join(".mewcode/memories.md"),
        "### 项目知识\n- The flamingo parser keeps byte offsets in every token.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    mem(
        &project,
        &home,
        &[
            "note",
            "add",
            "--name",
            "testing",
            "--description",
            "how to run the flamingo tests",
            "--type",
            "project",
            "Run the flamingo tests with nextest.",
        ],
    );
    let added = mem(
        &project,
        &home,
        &[
            "--json",
            "memory",
            "add",
            "Flamingo offsets",
            "Offsets are bytes, not chars",
        ],
    );
    let id = serde_json::from_str::<serde_json::Value>(&added)
        .ok()
        .and_then(|v| v["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no id in {added}"));
    // A first search indexes the files; from here on nothing has changed.
    mem(&project, &home, &["memory", "search", "flamingo"]);
    // Modification times have a granularity: make a rewrite visible.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    (project, home, id)
}

/// The changes between two snapshots, one line each.
fn changes(
    before: &BTreeMap<PathBuf, (u64, SystemTime)>,
    after: &BTreeMap<PathBuf, (u64, SystemTime)>,
) -> Vec<String> {
    before
        .iter()
        .filter(|(p, v)| after.get(*p) != Some(*v))
        .map(|(p, _)| format!("changed or removed: {}", p.display()))
        .chain(
            after
                .keys()
                .filter(|p| !before.contains_key(*p))
                .map(|p| format!("created: {}", p.display())),
        )
        .collect()
}

/// The read-only commands, each run on an unchanged store.
fn read_commands(id: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["memory", "search", "zebra"],
        vec!["--json", "memory", "search", "zebra"],
        vec!["memory", "search", "flamingo"],
        vec!["memory", "show", &id],
        vec!["memory", "stats"],
        vec!["memory", "core"],
        vec!["memory", "selected"],
        vec!["memory", "archive"],
        vec!["context"],
    ]
}

#[test]
fn read_only_commands_write_nothing() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home, id) = populated(root.path());
    let before = snapshot(root.path());
    for args in &read_commands(&id) {
        let out = mem(&project, &home, args);
        if args.last() == Some(&"flamingo") {
            assert!(
                out.contains("flamingo") || out.contains("Flamingo"),
                "{out}"
            );
        }
        let changed = changes(&before, &snapshot(root.path()));
        assert!(
            changed.is_empty(),
            "mem {args:?} wrote:\n{}",
            changed.join("\n")
        );
    }
}

/// Sets the mode of `root` and everything under it: read and search for all, write for none
/// (`writable: false`), or back to owner-writable.
fn set_modes(root: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut todo = vec![root.to_path_buf()];
    while let Some(p) = todo.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        let mode = match (meta.is_dir(), writable) {
            (true, false) => 0o555,
            (true, true) => 0o755,
            (false, false) => 0o444,
            (false, true) => 0o644,
        };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("{e}"));
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).unwrap_or_else(|e| panic!("{e}")) {
                todo.push(e.unwrap_or_else(|e| panic!("{e}")).path());
            }
        }
    }
}

#[test]
fn read_only_commands_work_on_a_write_protected_store() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home, id) = populated(root.path());
    let db = home.join(".mewcode/tiers/memory.db");
    assert!(db.is_file(), "no database at {}", db.display());
    set_modes(root.path(), false);
    // Root writes through any mode: the commands then run as `nobody` (65534), for whom the
    // modes hold.
    let probe = home.join("probe");
    let uid = std::fs::write(&probe, "x").is_ok().then_some(65534);
    let _ = std::fs::remove_file(&probe);
    let before = snapshot(root.path());
    let db_bytes = std::fs::read(&db).unwrap_or_else(|e| panic!("{e}"));
    for args in &read_commands(&id) {
        let out = mem_as(&project, &home, args, uid);
        if args.last() == Some(&"flamingo") {
            assert!(out.contains("Flamingo offsets"), "{out}");
        }
        let changed = changes(&before, &snapshot(root.path()));
        assert!(
            changed.is_empty(),
            "mem {args:?} wrote:\n{}",
            changed.join("\n")
        );
        assert!(std::fs::read(&db).unwrap_or_else(|e| panic!("{e}")) == db_bytes);
    }
    // `memory clean` with nothing to expire reports and merges nothing there (the merge of
    // the search index is a write).
    let out = mem_as(&project, &home, &["memory", "clean"], uid);
    assert!(out.contains("learnings:"), "{out}");
    assert!(changes(&before, &snapshot(root.path())).is_empty());
    assert!(std::fs::read(&db).unwrap_or_else(|e| panic!("{e}")) == db_bytes);
    // A write still fails, and says why.
    let mut c = mem_command(&project, &home);
    if let Some(id) = uid {
        use std::os::unix::process::CommandExt as _;
        c.uid(id).gid(id);
    }
    let out = c
        .args(["memory", "add", "Zebra", "stripes"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("read-only"), "{err}");
    set_modes(root.path(), true);
}

/// A store whose last learning is only in the write-ahead log, as a writer killed with `-9`
/// leaves it (the database file without the log's frames, the `-wal` file beside it), with
/// the folders write-protected and, per `shm_mode`, no `-shm` file or one the reader cannot
/// open: a read must not silently open the file as immutable and miss the learning; it
/// fails and says why (issue 29 review F4).
fn pending_log_case(shm_mode: Option<u32>) {
    use std::os::unix::fs::PermissionsExt as _;
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home, _) = populated(root.path());
    let db = home.join(".mewcode/tiers/memory.db");
    let wal = home.join(".mewcode/tiers/memory.db-wal");
    let shm = home.join(".mewcode/tiers/memory.db-shm");
    // An open connection keeps the log from being checkpointed when `mem` closes.
    let holder = rusqlite::Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
    holder
        .execute_batch("PRAGMA wal_autocheckpoint = 0; SELECT count(*) FROM sqlite_master;")
        .unwrap_or_else(|e| panic!("{e}"));
    let db_before = std::fs::read(&db).unwrap_or_else(|e| panic!("{e}"));
    mem(
        &project,
        &home,
        &["memory", "add", "Kestrel perch", "The kestrel hovers"],
    );
    let wal_bytes = std::fs::read(&wal).unwrap_or_else(|e| panic!("{e}"));
    assert!(!wal_bytes.is_empty(), "the learning is not in the log");
    assert!(
        std::fs::read(&db).unwrap_or_else(|e| panic!("{e}")) == db_before,
        "the learning reached the database file"
    );
    drop(holder);
    // What `kill -9` leaves: the file as before the write, the log with the write.
    std::fs::write(&db, &db_before).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&wal, &wal_bytes).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&shm);
    if shm_mode.is_some() {
        std::fs::write(&shm, []).unwrap_or_else(|e| panic!("{e}"));
    }
    set_modes(root.path(), false);
    if let Some(mode) = shm_mode {
        std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let probe = home.join("probe");
    let uid = std::fs::write(&probe, "x").is_ok().then_some(65534);
    let _ = std::fs::remove_file(&probe);
    for args in [vec!["memory", "search", "kestrel"], vec!["memory", "stats"]] {
        let mut c = mem_command(&project, &home);
        if let Some(id) = uid {
            use std::os::unix::process::CommandExt as _;
            c.uid(id).gid(id);
        }
        let out = c.args(&args).output().unwrap_or_else(|e| panic!("{e}"));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            !out.status.success(),
            "mem {args:?} read a store with a pending log as if it had none:\n{stdout}"
        );
        assert!(
            stderr.contains("not writable") && stderr.contains("write-ahead log is pending"),
            "{stderr}"
        );
    }
    set_modes(root.path(), true);
}

#[test]
fn a_pending_log_without_shm_on_a_read_only_folder_is_an_error() {
    pending_log_case(None);
}

#[test]
fn a_pending_log_with_an_unreadable_shm_on_a_read_only_folder_is_an_error() {
    pending_log_case(Some(0o600));
}

/// `mem mcp` as user `uid` (when given) on `project` and `home`, driven line by line: each
/// request is answered before the next is sent; returns the `result` of each `tools/call`.
fn mcp_calls(
    project: &Path,
    home: &Path,
    uid: Option<u32>,
    calls: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    use std::io::{BufRead as _, Write as _};
    let mut c = mem_command(project, home);
    if let Some(id) = uid {
        use std::os::unix::process::CommandExt as _;
        c.uid(id).gid(id);
    }
    let mut child = c
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let mut stdout =
        std::io::BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("no stdout")));
    let mut ask = |v: serde_json::Value, reply: bool| -> serde_json::Value {
        writeln!(stdin, "{v}").unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().unwrap_or_else(|e| panic!("{e}"));
        if !reply {
            return serde_json::Value::Null;
        }
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let init = ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "read-only-test", "version": "0"}}}),
        true,
    );
    assert!(init["result"].is_object(), "{init}");
    ask(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        false,
    );
    let mut results = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let r = ask(
            serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": call}),
            true,
        );
        results.push(r["result"].clone());
    }
    drop(stdin);
    let _ = child.wait();
    results
}

/// On a write-protected store, MCP `memory_search` with `sources` or `scope` works like the
/// unfiltered search (no index sync, nothing recorded: issue 29 review F6), and every search,
/// CLI or MCP, says that the index was not refreshed (F5): a note written since the last
/// write is not found, and the CLI's stderr and the MCP result's `stale` say why.
#[test]
fn searches_on_a_write_protected_store_work_filtered_and_say_the_index_is_stale() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home, id) = populated(root.path());
    let notes = project.join(".mewcode/memory");
    let note = std::fs::read_to_string(notes.join("testing.md")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        notes.join("ospreys.md"),
        note.replace("testing", "ospreys")
            .replace("flamingo", "osprey"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    set_modes(root.path(), false);
    let probe = home.join("probe");
    let uid = std::fs::write(&probe, "x").is_ok().then_some(65534);
    let _ = std::fs::remove_file(&probe);

    for json in [false, true] {
        let mut c = mem_command(&project, &home);
        if let Some(id) = uid {
            use std::os::unix::process::CommandExt as _;
            c.uid(id).gid(id);
        }
        if json {
            c.arg("--json");
        }
        let out = c
            .args(["memory", "search", "osprey"])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("index not refreshed: the store is read-only"),
            "no stale warning (json: {json}): {stderr}"
        );
    }

    let results = mcp_calls(
        &project,
        &home,
        uid,
        &[
            serde_json::json!({"name": "memory_search", "arguments": {"query": "flamingo"}}),
            serde_json::json!({"name": "memory_search",
                "arguments": {"query": "flamingo", "sources": ["learning"]}}),
            serde_json::json!({"name": "memory_search",
                "arguments": {"query": "flamingo", "scope": "project"}}),
        ],
    );
    for (i, r) in results.iter().enumerate() {
        assert_ne!(r["isError"], true, "call {i}: {r}");
        let found: Vec<&str> = r["structuredContent"]["results"]
            .as_array()
            .map(|a| a.iter().filter_map(|h| h["id"].as_str()).collect())
            .unwrap_or_default();
        assert!(found.contains(&id.as_str()), "call {i}: {id} not in {r}");
        assert_eq!(r["structuredContent"]["stale"], true, "call {i}: {r}");
    }
    set_modes(root.path(), true);
}

#[test]
fn a_write_protected_store_at_an_older_schema_version_is_read_as_it_is() {
    // A home set up by an older `mem` (schema version 3: no `docs_visibility` index) and then
    // write-protected: the new binary cannot migrate it, and reads it at its own version.
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home, _) = populated(root.path());
    let db = home.join(".mewcode/tiers/memory.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch("DROP INDEX docs_visibility; PRAGMA user_version = 3;")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    set_modes(root.path(), false);
    let probe = home.join("probe");
    let uid = std::fs::write(&probe, "x").is_ok().then_some(65534);
    let _ = std::fs::remove_file(&probe);
    let before = snapshot(root.path());
    let out = mem_as(&project, &home, &["memory", "search", "flamingo"], uid);
    assert!(out.contains("Flamingo offsets"), "{out}");
    let out = mem_as(&project, &home, &["memory", "search", "zebra"], uid);
    assert!(out.to_lowercase().contains("no memory matches"), "{out}");
    let changed = changes(&before, &snapshot(root.path()));
    assert!(changed.is_empty(), "wrote:\n{}", changed.join("\n"));
    set_modes(root.path(), true);
    // Writable again: the next open migrates it, and the search reads the same.
    let out = mem(&project, &home, &["memory", "search", "flamingo"]);
    assert!(out.contains("Flamingo offsets"), "{out}");
    let conn = rusqlite::Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(version, 4);
}
