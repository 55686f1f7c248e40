//! `mem hook claude|codex ...`: every argument or environment error is one line on stderr and
//! exit 0 (Claude Code treats exit 2 as "block the turn"), never clap's usage exit 2.

#![allow(
    clippy::unwrap_used,
    clippy::type_complexity,
    reason = "a test: a failed spawn or pipe is a failed test"
)]
use std::io::Write;
use std::process::{Command, Stdio};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// Runs `mem --project P --home H ARGS` with `env` set and an empty JSON payload on stdin.
fn run_hook(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(MEM);
    c.arg("--project")
        .arg(dir.path())
        .arg("--home")
        .arg(dir.path());
    for (k, _) in std::env::vars() {
        if k.starts_with("MEM_") {
            c.env_remove(k);
        }
    }
    c.env("HOME", dir.path()).env("MEM_LOG", "off");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"{}");
    child.wait_with_output().unwrap()
}

#[test]
fn hook_argument_and_env_errors_exit_zero_with_one_line() {
    let cases: &[(&[&str], &[(&str, &str)])] = &[
        (
            &["hook", "claude", "SessionStart"],
            &[("MEM_HOOK_BUDGET", "")],
        ),
        (
            &["hook", "claude", "SessionStart"],
            &[("MEM_HOOK_BUDGET", "lots")],
        ),
        (
            &["hook", "claude", "SessionStart"],
            &[("MEM_HOOK_BUDGET", "-5")],
        ),
        (
            &["hook", "codex", "SessionStart"],
            &[("MEM_CODEX_HOOK_TOKENS", "x")],
        ),
        (
            &["hook", "codex", "SessionStart"],
            &[("MEM_CODEX_HOOK_TOKENS", "")],
        ),
        (&["hook", "claude", "NoSuchEvent"], &[]),
        (&["hook", "claude", "sessionstart"], &[]),
        (&["hook", "codex", "userpromptsubmit"], &[]),
        (&["hook", "claude"], &[]),
        (&["hook", "claude", "SessionStart", "--no-such-flag"], &[]),
        (&["hook", "claude", "SessionStart", "--budget"], &[]),
        (
            &["hook", "codex", "SessionStart", "--max-tokens", "many"],
            &[],
        ),
        (&["--json", "hook", "claude", "Bogus"], &[]),
    ];
    for (args, env) in cases {
        let out = run_hook(args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} {env:?} exited {:?}: {stderr}",
            out.status
        );
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "{args:?} {env:?}: one line expected, got: {stderr}"
        );
        assert!(stderr.contains("mem hook"), "{args:?}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: nothing added to the context"
        );
    }
}

#[test]
fn hook_install_usage_errors_still_exit_two() {
    let out = run_hook(&["hook", "install", "--no-such-flag"], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// A payload over the 8 MiB stdin cap, streamed (64 MiB, never held by the test): the hook stops
/// reading at the cap, says so on one line, exits 0, quickly.
#[test]
fn hook_stdin_over_the_cap_exits_zero_without_reading_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let mut child = Command::new(MEM)
        .arg("--project")
        .arg(dir.path())
        .arg("--home")
        .arg(dir.path())
        .args(["hook", "claude", "SessionStart"])
        .env("HOME", dir.path())
        .env("MEM_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 20];
        let mut sent = 0usize;
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break; // the hook closed its stdin: it stopped reading
            }
            sent += chunk.len();
        }
        sent
    });
    let out = child.wait_with_output().unwrap();
    let sent = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("over 8388608 bytes"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        sent < 64 << 20,
        "the hook read the whole payload ({sent} bytes)"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

/// Issue 27 item 20: a team store that refuses at once (a closed loopback port) leaves Tier 0
/// out and nothing else: the start context still holds the instructions and `memories.md`, the
/// hook exits 0 well within Claude Code's 10 s hook timeout, and its log says what was left out.
#[test]
fn a_team_store_that_is_down_leaves_the_local_start_context() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let home = dir.path().join("h");
    std::fs::create_dir_all(project.join(".mewcode")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        project.join("CLAUDE.md"),
        "Run make check before committing.\n",
    )
    .unwrap();
    std::fs::write(project.join("AGENTS.md"), "Use pnpm, never npm.\n").unwrap();
    std::fs::write(
        project.join(".mewcode/memories.md"),
        "### 用户偏好\n- Short answers, no closing summary.\n",
    )
    .unwrap();
    // A port nothing listens on: the refusal comes back at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = Command::new(MEM);
    for (k, _) in std::env::vars() {
        if k.starts_with("MEM_") {
            c.env_remove(k);
        }
    }
    let started = std::time::Instant::now();
    let mut child = c
        .arg("--project")
        .arg(&project)
        .arg("--home")
        .arg(&home)
        .args(["hook", "claude", "SessionStart"])
        .env("HOME", &home)
        .env(
            "MEM_STORE_URL",
            format!("postgres://mem:pw@127.0.0.1:{port}/mem"),
        )
        .env("MEM_STORE_AUTHOR", "alice")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = format!(
        r#"{{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":{}}}"#,
        serde_json::Value::from(project.to_string_lossy().into_owned())
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stdout.contains("Use pnpm, never npm."),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("Short answers, no closing summary."),
        "{stdout}"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(5),
        "took {elapsed:?}; the hook timeout is 10 s"
    );
    let log = std::fs::read_to_string(project.join(".mewcode/logs/hooks.log")).unwrap_or_default();
    assert!(log.contains("Tier 0 left out"), "log: {log}");
}

/// Inside a model call's own agent session (`MEWMEM_CHILD` set by the `claude-cli` /
/// `codex-cli` providers) every hook entry point, of both agents, for every event, returns at
/// once: exit 0, no output, nothing written (no session sync, no extraction), even with
/// arguments that would otherwise be an error. The same runs without the marker do their work.
#[test]
fn a_hook_inside_a_model_calls_session_does_nothing() {
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "Stop",
        "SessionEnd",
    ];
    let run = |agent: &str, event: &str, marker: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let transcript = dir.path().join("t.jsonl");
        let line = |n: u32, kind: &str, text: &str| {
            serde_json::json!({"type": kind, "sessionId": "c1", "cwd": project,
                "uuid": format!("{kind}{n}"), "timestamp": format!("2026-12-01T10:00:0{n}.000Z"),
                "message": {"role": kind, "content": [{"type": "text", "text": text}]}})
            .to_string()
        };
        std::fs::write(
            &transcript,
            format!(
                "{}\n{}\n",
                line(1, "user", "From now on, always answer me in French."),
                line(2, "assistant", "D'accord.")
            ),
        )
        .unwrap();
        let payload = serde_json::json!({"session_id": "c1", "transcript_path": transcript,
            "cwd": project, "hook_event_name": event, "source": "startup",
            "prompt": "always answer me in French", "trigger": "manual",
            "stop_hook_active": false, "reason": "exit"});
        let mut c = Command::new(MEM);
        for (k, _) in std::env::vars() {
            if k.starts_with("MEM_") || k == "MEWMEM_CHILD" {
                c.env_remove(k);
            }
        }
        c.env("HOME", &home).env("MEM_LOG", "warn");
        if let Some(v) = marker {
            c.env("MEWMEM_CHILD", v);
        }
        let mut child = c
            .arg("--project")
            .arg(&project)
            .arg("--home")
            .arg(&home)
            .args(["hook", agent, event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
        let out = child.wait_with_output().unwrap();
        let written = project.join(".mewcode").exists() || home.join(".mewcode").exists();
        (out, written)
    };
    for agent in ["claude", "codex"] {
        for event in events {
            let (out, written) = run(agent, event, Some("1"));
            assert!(out.status.success(), "{agent} {event}: {}", out.status);
            assert_eq!(
                (out.stdout.as_slice(), out.stderr.as_slice(), written),
                (&b""[..], &b""[..], false),
                "{agent} {event} with MEWMEM_CHILD=1: silent, nothing written"
            );
        }
        // The control: without the marker (or with it off) the hooks do their work.
        for marker in [None, Some("0"), Some("")] {
            let (_, written) = run(agent, "Stop", marker);
            assert!(
                written,
                "{agent} Stop without the marker ({marker:?}) syncs"
            );
        }
        // Even a bad event name is silent inside a child session.
        let (out, _) = run(agent, "NoSuchEvent", Some("1"));
        assert!(out.status.success() && out.stderr.is_empty() && out.stdout.is_empty());
    }
}
