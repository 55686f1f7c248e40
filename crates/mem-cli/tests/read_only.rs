//! Read-only commands write nothing (issue 27 item 18): on a project that is already
//! registered and indexed, `mem memory search` (with and without hits), `show`, `stats`, `core`,
//! `selected`, `archive` and `mem context` leave every file of the store, the project and the
//! home as they were (same listing, sizes and modification times).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

mod common;
use common::mem_command;

fn mem(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = mem_command(project, home)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
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

#[test]
fn read_only_commands_write_nothing() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
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

    let before = snapshot(root.path());
    let commands: Vec<Vec<&str>> = vec![
        vec!["memory", "search", "zebra"],
        vec!["--json", "memory", "search", "zebra"],
        vec!["memory", "search", "flamingo"],
        vec!["memory", "show", &id],
        vec!["memory", "stats"],
        vec!["memory", "core"],
        vec!["memory", "selected"],
        vec!["memory", "archive"],
        vec!["context"],
    ];
    for args in &commands {
        let out = mem(&project, &home, args);
        if args.last() == Some(&"flamingo") {
            assert!(
                out.contains("flamingo") || out.contains("Flamingo"),
                "{out}"
            );
        }
        let after = snapshot(root.path());
        let changed: Vec<String> = before
            .iter()
            .filter(|(p, v)| after.get(*p) != Some(*v))
            .map(|(p, _)| format!("changed or removed: {}", p.display()))
            .chain(
                after
                    .keys()
                    .filter(|p| !before.contains_key(*p))
                    .map(|p| format!("created: {}", p.display())),
            )
            .collect();
        assert!(
            changed.is_empty(),
            "mem {args:?} wrote:\n{}",
            changed.join("\n")
        );
    }
}
