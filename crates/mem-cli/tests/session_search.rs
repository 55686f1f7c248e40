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
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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
    std::fs::write(&input, payload.to_string()).unwrap();
    let out = common::mem_command(project, home)
        .args(["hook", "claude", "Stop", "--input"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_stop_hook_sync_adds_new_messages_to_the_session_index() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/hook/stop-sync/project/transcript.jsonl");
    let text = std::fs::read_to_string(&real).unwrap();
    let transcript = project.join("transcript.jsonl");
    std::fs::write(&transcript, &text).unwrap();

    stop_hook(&project, &home, &transcript);
    // A word the user typed in the real transcript is found; the word to come is not.
    let before = search(&project, &home, "hooks_claudecode_handlers.go");
    assert!(!before["hits"].as_array().unwrap().is_empty(), "{before}");
    assert!(
        search(&project, &home, "quasarfrobnicate")["hits"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // The client appends a turn (the shape of its last user line, new text and ids).
    let last_user: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["type"] == "user"
                && v["message"]["content"].is_string()
                && v.get("isCompactSummary").is_none()
                && v.get("isMeta").is_none()
        })
        .last()
        .expect("a user line with text");
    let last_uuid = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["uuid"].as_str().map(str::to_owned))
        .last()
        .unwrap();
    let mut line = last_user.clone();
    line["uuid"] = "9c1d2e3f-0000-4000-8000-000000000001".into();
    line["parentUuid"] = last_uuid.into();
    line["timestamp"] = "2026-01-07T12:00:00.000Z".into();
    line["message"]["content"] =
        "next, quasarfrobnicate the retry queue in cmd/entire/cli/retry.go".into();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);

    stop_hook(&project, &home, &transcript);
    let after = search(&project, &home, "quasarfrobnicate retry");
    let hits = after["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{after}");
    assert_eq!(hits[0]["role"], "user");
    assert!(
        hits[0]["snippet"].as_str().unwrap().contains("retry.go"),
        "{after}"
    );
    // The hook brought the index in step: the search itself had nothing left to read.
    assert_eq!(after["refresh"]["read"], 0, "{after}");
    // The number is that of the record in `mem session show`.
    let id = hits[0]["session_id"].as_str().unwrap();
    let show = common::mem_command(&project, &home)
        .args(["--json", "session", "show", id])
        .output()
        .unwrap();
    let show: Value = serde_json::from_slice(&show.stdout).unwrap();
    let n = hits[0]["record"].as_u64().unwrap() as usize;
    let record = &show["records"][n - 1];
    assert!(record.to_string().contains("quasarfrobnicate"), "{record}");
}
