//! `kill -9` of `mem checkpoint restore` at random moments (issue 27 item 13): after the next
//! command, every memory file is all-old or all-new as a set (and the learning rows and the
//! session's replay with them),
//! and no hidden file of the restore is left (`.restore-old-*`, `.restore-removed-*`, `*.tmp`,
//! the journal, a half pre-restore checkpoint).

#![allow(
    clippy::unwrap_used,
    reason = "a test: a failed spawn, read or copy is a failed test"
)]
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

fn mem(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(MEM);
    c.arg("--project")
        .arg(root.join("project"))
        .arg("--home")
        .arg(root.join("home"));
    for (k, _) in std::env::vars() {
        if k.starts_with("MEM_") || k.starts_with("OPENAI_") || k.starts_with("ANTHROPIC_") {
            c.env_remove(k);
        }
    }
    c.env("HOME", root.join("home"))
        .env("MEM_LOG", "off")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn ok(root: &Path, args: &[&str]) -> Output {
    let out = mem(root, args).output().unwrap();
    assert!(
        out.status.success(),
        "mem {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The memory files (memories.md, the notes) and the learnings' titles.
fn state(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let m = root.join("project/.mewcode");
    if let Ok(t) = fs::read_to_string(m.join("memories.md")) {
        out.insert("memories.md".into(), t);
    }
    for e in fs::read_dir(m.join("memory")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && !name.starts_with('.') {
            out.insert(name, fs::read_to_string(e.path()).unwrap());
        }
    }
    let rows = ok(root, &["--json", "memory", "search", "lesson"]);
    let text = String::from_utf8_lossy(&rows.stdout);
    let mut titles: Vec<&str> = ["first lesson", "second lesson"]
        .into_iter()
        .filter(|t| text.contains(t))
        .collect();
    titles.sort();
    out.insert("learnings".into(), titles.join(","));
    let replay = ok(root, &["--json", "session", "resume", "kt"]);
    let replay = String::from_utf8_lossy(&replay.stdout);
    let turns: Vec<&str> = ["turn one", "turn two", "turn three"]
        .into_iter()
        .filter(|t| replay.contains(t))
        .collect();
    out.insert("replay".into(), turns.join(","));
    out
}

/// A Claude Code transcript of `turns` user turns with the assistant's answers.
fn transcript(path: &Path, turns: &[&str]) {
    let mut text = String::new();
    for (n, t) in turns.iter().enumerate() {
        let user = serde_json::json!({
            "parentUuid": if n == 0 { serde_json::Value::Null } else { format!("a{n}").into() },
            "isSidechain": false, "type": "user", "sessionId": "kt",
            "message": {"role": "user", "content": t},
            "uuid": format!("u{}", n + 1), "timestamp": format!("2026-12-01T10:0{n}:00.000Z")
        });
        let assistant = serde_json::json!({
            "parentUuid": format!("u{}", n + 1), "isSidechain": false, "type": "assistant",
            "sessionId": "kt",
            "message": {"id": format!("m{n}"), "role": "assistant",
                "content": [{"type": "text", "text": "ok"}]},
            "uuid": format!("a{}", n + 1), "timestamp": format!("2026-12-01T10:0{n}:05.000Z")
        });
        text.push_str(&format!("{user}\n{assistant}\n"));
    }
    fs::write(path, text).unwrap();
}

/// Hidden files a restore or a checkpoint creation writes, anywhere under `dir`.
fn leftovers(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        if name.contains(".restore-")
            || name.ends_with(".tmp")
            || name.starts_with(".tmp-")
            || name.starts_with(".rm-")
        {
            out.push(p.display().to_string());
        }
        if e.file_type().unwrap().is_dir() && name != "sessions" {
            leftovers(&p, out);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// A small pseudo-random sequence (xorshift), its seed printed on failure.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn kill_9_during_restore_leaves_all_old_or_all_new_and_no_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("live");
    let template = dir.path().join("template");
    fs::create_dir_all(root.join("project/.mewcode/memory")).unwrap();
    fs::create_dir_all(root.join("home")).unwrap();
    let m = root.join("project/.mewcode");
    // The checkpoint's state (new after the restore).
    fs::write(m.join("memories.md"), "### 项目知识\n- Fact A\n").unwrap();
    fs::write(m.join("memory/a.md"), "a, as it was\n").unwrap();
    fs::write(m.join("memory/b.md"), "b, deleted since\n").unwrap();
    ok(
        &root,
        &[
            "memory",
            "add",
            "first lesson",
            "kept",
            "--category",
            "testing",
        ],
    );
    let kt = dir.path().join("kt.jsonl");
    transcript(&kt, &["turn one"]);
    ok(&root, &["session", "import", kt.to_str().unwrap()]);
    ok(&root, &["checkpoint", "create", "c"]);
    let new = state(&root);
    // The state now (old): a file replaced, one created, one removed, a row added.
    fs::write(m.join("memories.md"), "### 项目知识\n- Fact A\n- Fact B\n").unwrap();
    fs::write(m.join("memory/a.md"), "a, edited since\n").unwrap();
    fs::remove_file(m.join("memory/b.md")).unwrap();
    fs::write(m.join("memory/c.md"), "c, written since\n").unwrap();
    ok(
        &root,
        &[
            "memory",
            "add",
            "second lesson",
            "later",
            "--category",
            "testing",
        ],
    );
    transcript(&kt, &["turn one", "turn two", "turn three"]);
    ok(&root, &["session", "import", kt.to_str().unwrap()]);
    let old = state(&root);
    assert_ne!(old, new);
    assert_eq!(new["replay"], "turn one");
    assert_eq!(old["replay"], "turn one,turn two,turn three");
    copy_tree(&root, &template);

    // One restore without a kill, slowed down: how long the window is.
    let delay = "15";
    let t = Instant::now();
    let out = mem(&root, &["checkpoint", "restore", "c", "--force"])
        .env("MEM_TEST_RESTORE_STEP_DELAY_MS", delay)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let window = t.elapsed();
    assert_eq!(state(&root), new);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let nexts: [&[&str]; 3] = [
        &["checkpoint", "list"],
        &["note", "list"],
        &["memory", "search", "fact"],
    ];
    let (mut olds, mut news) = (0, 0);
    let started = Instant::now();
    for round in 0..100 {
        fs::remove_dir_all(&root).unwrap();
        copy_tree(&template, &root);
        let mut child = mem(&root, &["checkpoint", "restore", "c", "--force"])
            .env("MEM_TEST_RESTORE_STEP_DELAY_MS", delay)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let at = rng.below(window.as_micros() as u64 + 1);
        std::thread::sleep(Duration::from_micros(at));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let next = nexts[round % nexts.len()];
        ok(&root, next);
        let now = state(&root);
        let ctx = format!("seed {seed}, round {round}, killed at {at} µs, then mem {next:?}");
        if now == old {
            olds += 1;
        } else if now == new {
            news += 1;
        } else {
            panic!("{ctx}: mixed state\n{now:#?}\nold {old:#?}\nnew {new:#?}");
        }
        let mut left = Vec::new();
        leftovers(&root, &mut left);
        let journal = root.join("project/.mewcode/checkpoints/.restore-journal.json");
        assert!(left.is_empty() && !journal.exists(), "{ctx}: left {left:?}");
    }
    eprintln!(
        "100 kills in {:?} (window {window:?}): {olds} all-old, {news} all-new",
        started.elapsed()
    );
    // A later restore from a recovered state works and cleans too.
    ok(&root, &["checkpoint", "restore", "c", "--force"]);
    assert_eq!(state(&root), new);
}
