#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Importing into a store: idempotent re-import, protection of local appends, atomic replace.

use std::path::{Path, PathBuf};

use mem_core::Message;
use mem_session::ingest::{IngestAction, import_into};
use mem_session::{Error, SessionStore};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/transcripts")
        .join(rel)
}

#[test]
fn reimport_is_idempotent_and_protects_appended_records() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let src = dir.path().join("t.jsonl");
    std::fs::copy(
        fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"),
        &src,
    )
    .unwrap();

    let first = import_into(&store, &src).unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].action, IngestAction::Created);
    let id = first[0].meta.id.clone();
    let bytes = std::fs::read(store.jsonl_path(&id)).unwrap();

    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), bytes);
    assert_eq!(store.ids().unwrap(), vec![id.clone()]);

    // The source grew (the agent kept writing): the session is replaced, still one session.
    let mut text = std::fs::read_to_string(&src).unwrap();
    text.push('\n');
    std::fs::write(&src, &text).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Replaced
    );

    // Records appended to the imported session are never dropped by a re-import.
    store
        .open(&id)
        .unwrap()
        .append(&Message::user("continued here"))
        .unwrap();
    text.push('\n');
    std::fs::write(&src, &text).unwrap();
    let err = import_into(&store, &src).unwrap_err();
    assert!(matches!(err, Error::WouldDropAppended { .. }), "{err}");
    let resumed = store.resume(&id).unwrap();
    assert_eq!(
        resumed.messages.last().unwrap().text_content(),
        "continued here"
    );
}

#[test]
fn every_imported_session_resumes_to_a_valid_chain() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let (files, _) = mem_session::import::discover(&[fixture("")]);
    assert!(files.len() >= 40, "{} files", files.len());
    let mut sessions = 0;
    for file in &files {
        let Ok(imported) = import_into(&store, file) else {
            continue;
        };
        for s in imported.iter().filter(|s| s.action != IngestAction::Empty) {
            sessions += 1;
            let r = store.resume(&s.meta.id).unwrap();
            let uses: Vec<&str> = r.messages.iter().flat_map(|m| m.tool_use_ids()).collect();
            let results: Vec<&str> = r
                .messages
                .iter()
                .flat_map(|m| m.tool_result_ids())
                .collect();
            for u in &uses {
                assert!(
                    results.contains(u),
                    "{}: tool_use {u} has no tool_result",
                    s.meta.id
                );
            }
            for t in &results {
                assert!(
                    uses.contains(t),
                    "{}: tool_result {t} has no tool_use",
                    s.meta.id
                );
            }
            let boundaries = s.report.boundaries;
            assert_eq!(r.from_boundary, boundaries > 0, "{}", s.meta.id);
            if boundaries > 0 {
                assert!(
                    r.messages[0]
                        .metadata
                        .contains_key(mem_session::COMPACT_SUMMARY_MARKER)
                );
            }
        }
    }
    assert!(sessions >= 45, "{sessions} sessions");
}
