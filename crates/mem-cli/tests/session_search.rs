//! `mem session search` kept in step by the hooks' transcript sync: a Stop hook after new
//! transcript lines makes them searchable, reading only what was appended.

mod common;

use std::io::Write;
use std::path::Path;

use serde_json::Value;

fn search(project: &Path, home: &Path, words: &str) -> Value {
    let out = common::mem_command(project, home)
        .args(["--json", "session", "search", words])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

fn stop_hook(project: &Path, home: &Path, transcript: &Path) {
    let payload = serde_json::json!({
        "session_id": "s1",
        "transcript_path": transcript,
        "cwd": project,
        "hook_event_name": "Stop",
        "stop_hook_active": false,
    });
    let input = project.join("stop.json");
    std::fs::write(&input, payload.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let out = common::mem_command(project, home)
        .args(["hook", "claude", "Stop", "--input"])
        .arg(&input)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_stop_hook_sync_adds_new_messages_to_the_session_index() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/hook/stop-sync/project/transcript.jsonl");
    let text = std::fs::read_to_string(&real).unwrap_or_else(|e| panic!("{e}"));
    let transcript = project.join("transcript.jsonl");
    std::fs::write(&transcript, &text).unwrap_or_else(|e| panic!("{e}"));

    stop_hook(&project, &home, &transcript);
    // A word the user typed in the real transcript is found; the word to come is not.
    let before = search(&project, &home, "hooks_claudecode_handlers.go");
    assert!(
        !before["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("missing"))
            .is_empty(),
        "{before}"
    );
    assert!(
        search(&project, &home, "quasarfrobnicate")["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("missing"))
            .is_empty()
    );

    // The client appends a turn (the shape of its last user line, new text and ids).
    let last_user: Value = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| {
            v["type"] == "user"
                && v["message"]["content"].is_string()
                && v.get("isCompactSummary").is_none()
                && v.get("isMeta").is_none()
        })
        .unwrap_or_else(|| panic!("no user line with text"));
    let last_uuid = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["uuid"].as_str().map(str::to_owned))
        .next()
        .unwrap_or_else(|| panic!("missing"));
    let mut line = last_user.clone();
    line["uuid"] = "9c1d2e3f-0000-4000-8000-000000000001".into();
    line["parentUuid"] = last_uuid.into();
    line["timestamp"] = "2026-01-07T12:00:00.000Z".into();
    line["message"]["content"] =
        "next, quasarfrobnicate the retry queue in cmd/entire/cli/retry.go".into();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap_or_else(|e| panic!("{e}"));
    writeln!(f, "{line}").unwrap_or_else(|e| panic!("{e}"));
    drop(f);

    stop_hook(&project, &home, &transcript);
    let after = search(&project, &home, "quasarfrobnicate retry");
    let hits = after["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("missing"));
    assert_eq!(hits.len(), 1, "{after}");
    assert_eq!(hits[0]["role"], "user");
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap_or_else(|| panic!("missing"))
            .contains("retry.go"),
        "{after}"
    );
    // The hook brought the index in step: the search itself had nothing left to read.
    assert_eq!(after["refresh"]["read"], 0, "{after}");
    // The number is that of the record in `mem session show`.
    let id = hits[0]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("missing"));
    let show = common::mem_command(&project, &home)
        .args(["--json", "session", "show", id])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let show: Value = serde_json::from_slice(&show.stdout).unwrap_or_else(|e| panic!("{e}"));
    let n = hits[0]["record"]
        .as_u64()
        .unwrap_or_else(|| panic!("missing")) as usize;
    let record = &show["records"][n - 1];
    assert!(record.to_string().contains("quasarfrobnicate"), "{record}");
}
