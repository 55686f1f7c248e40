#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A parallel import killed (SIGKILL) mid-way leaves the store with whole sessions only: every
//! session file present is byte for byte the one a complete import writes, and running the
//! import again completes it to exactly the complete import's store.
//!
//! The child is this test binary run again with `--exact child_import --ignored`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mem_session::SessionStore;
use mem_session::ingest::import_many;

/// Child entry point: imports every `.jsonl` of `MEM_TEST_IMPORT_SRC` into `MEM_TEST_IMPORT_DST`
/// on two threads.
#[test]
#[ignore = "run as a child process by the other test"]
fn child_import() {
    let (Ok(src), Ok(dst)) = (
        std::env::var("MEM_TEST_IMPORT_SRC"),
        std::env::var("MEM_TEST_IMPORT_DST"),
    ) else {
        return;
    };
    let (files, _) = mem_session::import::discover(&[PathBuf::from(src)]);
    import_many(&SessionStore::at(dst), &files, None, 2, |i, r| {
        if let Err(e) = r {
            println!("ERR {} {e}", files[i].display());
        }
    })
    .unwrap();
    println!("DONE");
}

/// Copies of the bundled Claude Code transcripts (three of each file) and the Codex ones.
fn corpus(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
    for sub in ["claude", "codex"] {
        for entry in std::fs::read_dir(root.join(sub)).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "jsonl") {
                // Codex ids come from the rollout's own id: one copy of those.
                let copies = if sub == "claude" { 3 } else { 1 };
                for k in 0..copies {
                    let name = format!("c{k}-{}", p.file_name().unwrap().to_string_lossy());
                    std::fs::copy(&p, dir.join(name)).unwrap();
                }
            }
        }
    }
}

/// id → .jsonl bytes of every session in `dir`.
fn sessions(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let store = SessionStore::at(dir);
    store
        .ids()
        .unwrap()
        .into_iter()
        .map(|id| {
            let bytes = std::fs::read(store.jsonl_path(&id)).unwrap();
            (id, bytes)
        })
        .collect()
}

fn run_child(src: &Path, dst: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_import", "--ignored", "--nocapture"])
        .env("MEM_TEST_IMPORT_SRC", src)
        .env("MEM_TEST_IMPORT_DST", dst)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_parallel_import_killed_midway_leaves_whole_sessions_only() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    corpus(&src);
    // The complete import, for reference (ids do not depend on the store).
    let reference_dir = tmp.path().join("reference");
    let out = run_child(&src, &reference_dir).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed = stdout
        .lines()
        .filter(|l| l.starts_with("ERR") && !l.contains("not a transcript"))
        .count();
    assert!(stdout.contains("DONE") && failed == 0, "{stdout}");
    let reference = sessions(&reference_dir);
    assert!(reference.len() > 20, "{}", reference.len());

    let mut partial_rounds = 0;
    for round in 0..8u64 {
        let dst = tmp.path().join(format!("store{round}"));
        let mut child = run_child(&src, &dst);
        std::thread::sleep(Duration::from_millis(40 + round * 90));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if check_killed_store(&src, &dst, &reference, round) {
            partial_rounds += 1;
        }
        // ... and removed what the killed import left (its process is gone).
        let left: Vec<String> = std::fs::read_dir(&dst)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "round {round}: left behind: {left:?}");
    }
    assert!(partial_rounds > 0, "no kill landed mid-import");
}

/// Checks the store `dst` an import of `src` was killed in: every session there is byte for byte
/// the `reference`'s and its meta reads (rebuilt if the kill came between the renames); besides
/// them only hidden files are left (the import lock, staged temporary files), never read as
/// sessions; importing again completes the store to the reference. Returns whether the kill
/// landed mid-import (fewer sessions than the reference).
fn check_killed_store(
    src: &Path,
    dst: &Path,
    reference: &BTreeMap<String, Vec<u8>>,
    round: impl std::fmt::Display,
) -> bool {
    let found = sessions(dst);
    for (id, bytes) in &found {
        let want = reference
            .get(id)
            .unwrap_or_else(|| panic!("unknown session {id}"));
        assert!(bytes == want, "round {round}: session {id} is not whole");
        SessionStore::at(dst).meta(id).unwrap();
    }
    for entry in std::fs::read_dir(dst).into_iter().flatten() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let session_file = name.ends_with(".jsonl") || name.ends_with(".meta");
        let hidden = name == ".import.lock" || (name.starts_with('.') && name.ends_with(".tmp"));
        assert!(
            session_file || hidden,
            "round {round}: unexpected file {name}"
        );
    }
    let out = run_child(src, dst).wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("DONE"),
        "round {round}: the re-import failed"
    );
    assert_eq!(&sessions(dst), reference, "round {round}");
    found.len() < reference.len()
}

/// A transcript large enough to be converted as it is read (`ingest::STREAM_MIN_BYTES`): the
/// copies of a real session with inline sidechains, one after the other.
fn big_transcript(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../fixtures/transcripts/claude/d-kimuson_claude-code-viewer__sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    );
    let text = std::fs::read_to_string(root).unwrap();
    let path = dir.join("big.jsonl");
    let mut out = String::new();
    while (out.len() as u64) < mem_session::ingest::STREAM_MIN_BYTES + (1 << 20) {
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn a_streamed_import_killed_midway_leaves_whole_sessions_only() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    big_transcript(&src);
    let reference_dir = tmp.path().join("reference");
    let started = std::time::Instant::now();
    let out = run_child(&src, &reference_dir).wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(String::from_utf8_lossy(&out.stdout).contains("DONE"));
    let reference = sessions(&reference_dir);
    // The main session and its sidechain sessions.
    assert!(reference.len() > 10, "{}", reference.len());
    let mut partial_rounds = 0;
    // Kills spread over the time a whole import took; earlier ones while none has landed
    // mid-import (a loaded machine makes the reference run slow and a later one fast).
    for (round, part) in [0.2f64, 0.5, 0.8, 0.1, 0.05, 0.02].into_iter().enumerate() {
        if round >= 3 && partial_rounds > 0 {
            break;
        }
        let dst = tmp.path().join(format!("store{round}"));
        let mut child = run_child(&src, &dst);
        std::thread::sleep(took.mul_f64(part));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if check_killed_store(&src, &dst, &reference, round) {
            partial_rounds += 1;
        }
    }
    assert!(partial_rounds > 0, "no kill landed mid-import");
}
