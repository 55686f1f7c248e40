//! `mem checkpoint restore` of a project whose sessions the agent hooks keep in sync: after the
//! restore (a `rollback` record appended to the imported session), the next Stop still imports
//! the transcript's new turns, and they are extracted (issue 27 item 12).

#![allow(
    clippy::unwrap_used,
    reason = "a test: a failed spawn, read or parse is a failed test"
)]
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

struct Env {
    _dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    transcript: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        fs::create_dir_all(&project).unwrap();
        fs::create_dir_all(&home).unwrap();
        let transcript = dir.path().join("claude").join("3f6c.jsonl");
        fs::create_dir_all(transcript.parent().unwrap()).unwrap();
        fs::write(&transcript, "").unwrap();
        Env {
            _dir: dir,
            project,
            home,
            transcript,
        }
    }

    /// Runs `mem --project P --home H ARGS` with `stdin`; returns stdout, asserting exit 0.
    fn mem(&self, args: &[&str], stdin: &str) -> String {
        let mut c = Command::new(MEM);
        c.arg("--project")
            .arg(&self.project)
            .arg("--home")
            .arg(&self.home);
        for (k, _) in std::env::vars() {
            if k.starts_with("MEM_") || k.starts_with("OPENAI_") || k.starts_with("ANTHROPIC_") {
                c.env_remove(k);
            }
        }
        c.env("HOME", &self.home).env("MEM_LOG", "off");
        let mut child = c
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "mem {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Appends one user turn and the assistant's answer to the Claude Code transcript.
    fn turn(&self, n: usize, user: &str, assistant: &str) {
        let ts = |s: usize| format!("2026-12-01T10:{n:02}:{s:02}.000Z");
        let user_line = serde_json::json!({
            "parentUuid": if n == 1 { serde_json::Value::Null } else { format!("a{}", n - 1).into() },
            "isSidechain": false, "userType": "external", "cwd": self.project,
            "sessionId": "3f6c", "version": "2.0.76", "type": "user",
            "message": {"role": "user", "content": user},
            "uuid": format!("u{n}"), "timestamp": ts(0)
        });
        let assistant_line = serde_json::json!({
            "parentUuid": format!("u{n}"), "isSidechain": false, "userType": "external",
            "cwd": self.project, "sessionId": "3f6c", "version": "2.0.76", "type": "assistant",
            "message": {"id": format!("msg_{n}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4", "content": [{"type": "text", "text": assistant}],
                "stop_reason": "end_turn"},
            "uuid": format!("a{n}"), "timestamp": ts(5)
        });
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(&self.transcript)
            .unwrap();
        writeln!(f, "{user_line}\n{assistant_line}").unwrap();
    }

    /// Claude Code's Stop hook, with its JSON payload on stdin.
    fn stop(&self) {
        let payload = serde_json::json!({
            "session_id": "3f6c", "transcript_path": self.transcript,
            "cwd": self.project, "permission_mode": "default", "hook_event_name": "Stop",
            "stop_hook_active": false
        });
        let out = self.mem(&["hook", "claude", "Stop"], &payload.to_string());
        assert_eq!(out, "", "Stop adds nothing");
    }

    fn session_file(&self) -> PathBuf {
        let dir = self.project.join(".mewcode/sessions");
        fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .unwrap()
    }

    fn memories(&self) -> String {
        let read =
            |p: &Path| fs::read_to_string(p.join(".mewcode/memories.md")).unwrap_or_default();
        format!("{}{}", read(&self.project), read(&self.home))
    }

    fn log(&self) -> String {
        fs::read_to_string(self.project.join(".mewcode/logs/hooks.log")).unwrap_or_default()
    }

    /// What a resume replays (`mem --json session resume`).
    fn replay(&self, id: &str) -> String {
        self.mem(&["--json", "session", "resume", id], "")
    }
}

#[test]
fn the_stop_hook_keeps_syncing_and_extracting_after_a_restore() {
    let e = Env::new();
    e.turn(1, "Always use snake_case for variables.", "Noted.");
    e.stop();
    let file = e.session_file();
    let id = file.file_stem().unwrap().to_string_lossy().into_owned();
    assert!(e.memories().contains("snake_case"), "{}", e.memories());
    e.mem(&["checkpoint", "create", "c1", "--user"], "");

    e.turn(2, "Always indent with tabs in this repo.", "Understood.");
    e.stop();
    assert!(
        e.memories().contains("indent with tabs"),
        "{}",
        e.memories()
    );
    assert!(e.replay(&id).contains("indent with tabs"));

    let out = e.mem(&["checkpoint", "restore", "c1"], "");
    assert!(out.contains("rollback"), "{out}");
    assert!(
        !e.memories().contains("indent with tabs"),
        "{}",
        e.memories()
    );
    assert!(!e.replay(&id).contains("indent with tabs"));
    let after_restore = fs::read(&file).unwrap();

    // The agent goes on: turns after the restore are imported and extracted, every Stop.
    for (n, text, word) in [
        (
            3,
            "Always write commit messages in English.",
            "commit messages",
        ),
        (
            4,
            "From now on, run cargo fmt before every commit.",
            "cargo fmt",
        ),
    ] {
        e.turn(n, text, "Will do.");
        e.stop();
        let log = e.log();
        assert!(!log.contains("would drop"), "the sync stopped: {log}");
        let replay = e.replay(&id);
        assert!(replay.contains(text), "turn {n} not imported: {replay}");
        assert!(replay.contains("snake_case"), "{replay}");
        assert!(
            !replay.contains("indent with tabs"),
            "the rolled-back turn stays out of the replay: {replay}"
        );
        assert!(
            e.memories().contains(word),
            "turn {n} not extracted: {}",
            e.memories()
        );
    }
    // Nothing was cut: every record written before the restore is still there.
    assert!(fs::read(&file).unwrap().starts_with(&after_restore));
    // A Stop with nothing new changes nothing.
    let before = fs::read(&file).unwrap();
    e.stop();
    assert_eq!(fs::read(&file).unwrap(), before);
}
