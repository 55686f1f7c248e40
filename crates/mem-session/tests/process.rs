#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Several processes on one session: SIGKILL in the middle of appends, two concurrent writers,
//! a write that fails because the file size limit (a stand-in for a full disk) is reached.
//!
//! The child processes are this test binary run again with `--exact child_append_loop
//! --ignored`; `MEM_TEST_CHILD_*` variables tell the child what to do.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use mem_core::{ContentBlock, Message, Role};
use mem_session::{SessionStore, StoreOptions};
use serde_json::json;

/// Child entry point: appends `count` tool-call pairs (or forever when count is 0), printing
/// `APPENDED <seq>` after each append returned and `FAILED <seq> <error>` on an error.
#[test]
#[ignore = "run as a child process by the other tests"]
fn child_append_loop() {
    let Ok(dir) = std::env::var("MEM_TEST_CHILD_DIR") else {
        return;
    };
    let tag = std::env::var("MEM_TEST_CHILD_TAG").unwrap();
    let start: u64 = std::env::var("MEM_TEST_CHILD_START")
        .unwrap()
        .parse()
        .unwrap();
    let count: u64 = std::env::var("MEM_TEST_CHILD_COUNT")
        .unwrap()
        .parse()
        .unwrap();
    let pad: usize = std::env::var("MEM_TEST_CHILD_PAD")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let store = SessionStore::at(&dir).with_options(StoreOptions {
        lock_timeout: std::time::Duration::from_secs(30),
        ..StoreOptions::default()
    });
    let mut w = store.open_or_create("shared").unwrap();
    let mut seq = start;
    loop {
        if count > 0 && seq >= start + count {
            break;
        }
        let id = format!("{tag}-{seq}");
        let call = Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                &id,
                "Bash",
                json!({"command": "echo", "pad": "p".repeat(pad)}),
            )],
        );
        let result = Message::new(
            Role::User,
            vec![ContentBlock::tool_result(&id, format!("out {seq}"), false)],
        );
        let r = w.append(&call).and_then(|()| w.append(&result));
        match r {
            Ok(()) => println!("APPENDED {seq}"),
            Err(e) => {
                println!("FAILED {seq} {e}");
                break;
            }
        }
        seq += 1;
    }
}

fn spawn_child(dir: &Path, tag: &str, start: u64, count: u64, shell_prefix: Option<&str>) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match shell_prefix {
        Some(prefix) => {
            let mut c = Command::new("bash");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args([
        "--exact",
        "child_append_loop",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("MEM_TEST_CHILD_DIR", dir)
    .env("MEM_TEST_CHILD_TAG", tag)
    .env("MEM_TEST_CHILD_START", start.to_string())
    .env("MEM_TEST_CHILD_COUNT", count.to_string())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    if shell_prefix.is_some() {
        cmd.env("MEM_TEST_CHILD_PAD", "4000");
    }
    cmd.spawn().unwrap()
}

/// (tool ids answered in the replay, number of tool_use blocks) of the resumed session.
fn resumed_ids(store: &SessionStore) -> BTreeSet<String> {
    let r = store.resume("shared").unwrap();
    for m in &r.messages {
        for b in &m.content {
            if let ContentBlock::ToolUse { id, .. } = b {
                assert!(
                    r.messages
                        .iter()
                        .any(|n| n.tool_result_ids().any(|t| t == id)),
                    "tool_use {id} has no tool_result in the replay"
                );
            }
        }
    }
    r.messages
        .iter()
        .flat_map(|m| m.tool_result_ids().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

#[test]
fn sigkill_never_loses_an_append_that_returned() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::at(dir.path());
    let mut confirmed: BTreeSet<String> = BTreeSet::new();
    let mut next = 0u64;
    let rounds = 25;
    for round in 0..rounds {
        let mut child = spawn_child(dir.path(), "k", next, 0, None);
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        // Let it run a varying number of appends, then kill it mid-stream.
        let target = 5 + (round * 7) % 40;
        let mut seen = 0;
        while seen < target {
            let line = lines.next().expect("child ended early").unwrap();
            if let Some(seq) = line.strip_prefix("APPENDED ") {
                confirmed.insert(format!("k-{seq}"));
                next = seq.parse::<u64>().unwrap() + 1;
                seen += 1;
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix
        // Appends that returned after we stopped reading are also confirmed.
        for line in lines.map_while(Result::ok) {
            if let Some(seq) = line.strip_prefix("APPENDED ") {
                confirmed.insert(format!("k-{seq}"));
                next = seq.parse::<u64>().unwrap() + 1;
            }
        }
        child.wait().unwrap();
        let present = resumed_ids(&store);
        let missing: Vec<&String> = confirmed.difference(&present).collect();
        assert!(
            missing.is_empty(),
            "round {round}: appends lost after SIGKILL: {missing:?}"
        );
        // The killed child may have written a call without its result: the next child's ids
        // continue after the last confirmed one, and the replay cut the dangling call.
        next += 1;
    }
    let meta = store.meta("shared").unwrap();
    assert!(
        meta.message_count >= confirmed.len() * 2,
        "{} < {}",
        meta.message_count,
        confirmed.len() * 2
    );
}

#[test]
fn two_processes_appending_never_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::at(dir.path());
    let n = 300;
    let mut a = spawn_child(dir.path(), "a", 0, n, None);
    let mut b = spawn_child(dir.path(), "b", 0, n, None);
    let out_a = std::io::read_to_string(a.stdout.take().unwrap()).unwrap();
    let out_b = std::io::read_to_string(b.stdout.take().unwrap()).unwrap();
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    assert_eq!(out_a.matches("APPENDED").count() as u64, n, "{out_a}");
    assert_eq!(out_b.matches("APPENDED").count() as u64, n, "{out_b}");
    let text = std::fs::read_to_string(store.jsonl_path("shared")).unwrap();
    for (i, line) in text.lines().enumerate() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
    }
    assert_eq!(text.lines().count() as u64, 4 * n);
    let (records, diags) = store.read_records("shared").unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(records.len() as u64, 4 * n);
    assert_eq!(store.meta("shared").unwrap().message_count as u64, 4 * n);
}

#[test]
fn a_write_failing_on_a_full_disk_is_an_error_and_later_appends_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::at(dir.path());
    // `ulimit -f 64`: files may not grow past 64 KiB; SIGXFSZ ignored so write() fails with EFBIG,
    // as it fails with ENOSPC on a full disk.
    let mut child = spawn_child(
        dir.path(),
        "f",
        0,
        10_000,
        Some("trap '' XFSZ; ulimit -f 64"),
    );
    let out = std::io::read_to_string(child.stdout.take().unwrap()).unwrap();
    child.wait().unwrap();
    let failed = out
        .lines()
        .find(|l| l.starts_with("FAILED"))
        .unwrap_or_else(|| panic!("no failure seen: {out}"));
    assert!(
        failed.contains("cannot append to") && failed.contains("shared.jsonl"),
        "{failed}"
    );
    let appended = out.matches("APPENDED").count();
    assert!(appended > 3, "{out}");
    // The cause is gone (no limit in this process): appending works, nothing was lost and the
    // failed write left no fragment behind.
    let mut w = store.open("shared").unwrap();
    w.append(&Message::user("after the disk was freed"))
        .unwrap();
    let r = store.resume("shared").unwrap();
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let ids = resumed_ids(&store);
    for seq in 0..appended {
        assert!(ids.contains(&format!("f-{seq}")), "f-{seq} lost");
    }
    assert_eq!(
        r.messages.last().unwrap().text_content(),
        "after the disk was freed"
    );
}
