#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The SessionStart hook remembers the token counts of a long Tier 0
//! (`<home>/.mewcode/tiers/cache/token-counts`) so the next hook process does not load the BPE
//! vocabulary; `mem context` shows the same context and writes no cache.

mod common;

use std::fs;
use std::io::Write;
use std::process::Stdio;

use common::mem_command;
use serde_json::json;

#[test]
fn session_start_remembers_tier0_counts_and_mem_context_writes_none() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let home = root.path().join("home");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(&home).unwrap();
    let learnings: Vec<serde_json::Value> = (0..5i64)
        .map(|i| {
            json!({"id": i + 1, "title": format!("lesson {i} about the payment service's retries"),
                   "content": format!("Subsystem {i} fails when its cache is cold; warm it with \
                       `make warm-cache SUBSYSTEM={i}` and check the hit ratio on the dashboard \
                       before running the integration tests again."),
                   "category": "error", "tags": [], "context": null, "project_key": null,
                   "created_ms": 1_780_000_000_000i64 + i * 60_000,
                   "last_used_ms": 1_780_000_000_000i64 + i * 60_000})
        })
        .collect();
    let archive = root.path().join("learnings.json");
    fs::write(
        &archive,
        json!({"format": "mewmem-memory-archive", "version": 1, "learnings": learnings})
            .to_string(),
    )
    .unwrap();
    let import = mem_command(&project, &home)
        .args(["memory", "import"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(import.status.success(), "{import:?}");
    let cache = home.join(".mewcode/tiers/cache/token-counts");

    let context = mem_command(&project, &home)
        .args(["context", "--date", "2026-12-03"])
        .output()
        .unwrap();
    assert!(context.status.success(), "{context:?}");
    let context = String::from_utf8(context.stdout).unwrap();
    assert!(context.contains("lesson 4"), "{context}");
    assert!(!cache.exists(), "`mem context` wrote the count cache");

    let payload = json!({"session_id": "s1", "hook_event_name": "SessionStart",
                         "source": "startup", "cwd": project});
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let mut child = mem_command(&project, &home)
            .args(["hook", "claude", "SessionStart", "--date", "2026-12-03"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        outputs.push(String::from_utf8(out.stdout).unwrap());
        let body = fs::read_to_string(&cache).expect("the hook remembers Tier 0's count");
        assert!(body.starts_with("mewmem-token-counts 1\n"), "{body}");
        assert!(
            !body.contains("warm-cache"),
            "the cache holds digests, not text"
        );
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the cached count changed the context"
    );
    assert!(outputs[0].contains("lesson 4"), "{}", outputs[0]);
}
