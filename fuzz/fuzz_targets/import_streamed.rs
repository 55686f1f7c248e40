//! Fuzzes the streamed conversion of mem-session (what `mem session import` runs on large
//! Claude Code transcripts: records written to spill files as they settle, sidechains parked,
//! late results moved through a second spill, titles checked by reading the file again): on
//! any bytes it must give exactly what the conversion in memory gives, session for session,
//! record for record (as JSON), report for report, or the same error. So must a store import's
//! two reads of a file in memory (whole, and in 64 KiB blocks), with the same digest.
#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use mem_session::import::{import_file, import_file_both_reads, import_file_spilled};

static NEXT: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!(
        "mem-fuzz-streamed-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.jsonl");
    std::fs::write(&path, data).unwrap();
    let memory = import_file(&path);
    // A store import's two reads (whole, in 64 KiB blocks): the same digest and the same
    // sessions as the conversion in memory, or the same error.
    let [whole, blocks] = import_file_both_reads(&path);
    match (&memory, whole, blocks) {
        (Ok(m), Ok((d1, a)), Ok((d2, b))) => {
            assert_eq!(d1, d2, "digests of the two reads");
            assert_eq!(m, &a, "sessions read whole");
            assert_eq!(m, &b, "sessions read in blocks");
        }
        (Err(m), Err(a), Err(b)) => {
            assert_eq!(m.to_string(), a.to_string());
            assert_eq!(m.to_string(), b.to_string());
        }
        (m, a, b) => panic!(
            "one failed: {:?} / {:?} / {:?}",
            m.as_ref().err(),
            a.err(),
            b.err()
        ),
    }
    let streamed = import_file_spilled(&path, &dir);
    match (memory, streamed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.len(), b.len(), "session count");
            for (a, b) in a.iter().zip(&b) {
                let enc = |s: &mem_session::import::ImportedSession| {
                    s.records
                        .iter()
                        .map(|r| serde_json::to_string(r).unwrap())
                        .collect::<Vec<_>>()
                };
                assert_eq!(enc(a), enc(b), "records of {}", a.id);
                assert_eq!(a.report, b.report, "report of {}", a.id);
                assert_eq!(
                    (
                        &a.id,
                        &a.title,
                        &a.parent_id,
                        &a.created,
                        &a.last_active,
                        &a.cwd
                    ),
                    (
                        &b.id,
                        &b.title,
                        &b.parent_id,
                        &b.created,
                        &b.last_active,
                        &b.cwd
                    )
                );
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("one failed: {:?} / {:?}", a.err(), b.err()),
    }
    // Nothing left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "session.jsonl")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
});
