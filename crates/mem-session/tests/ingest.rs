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

/// A store in `dir` and a copy of the bundled transcript `rel` beside it, as `t.jsonl`.
fn store_and_copy(dir: &Path, rel: &str) -> (SessionStore, PathBuf) {
    let store = SessionStore::for_project(dir);
    let src = dir.join("t.jsonl");
    std::fs::copy(fixture(rel), &src).unwrap();
    (store, src)
}

#[test]
fn reimport_is_idempotent_and_protects_appended_records() {
    let dir = tempfile::tempdir().unwrap();
    let (store, src) = store_and_copy(
        dir.path(),
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    );

    let first = import_into(&store, &src).unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].action, IngestAction::Created);
    let id = first[0].meta.id.clone();
    let bytes = std::fs::read(store.jsonl_path(&id)).unwrap();

    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), bytes);
    assert_eq!(store.ids().unwrap(), vec![id.clone()]);

    // The source grew by a line that holds no conversation: nothing to write.
    let mut text = std::fs::read_to_string(&src).unwrap();
    text.push('\n');
    std::fs::write(&src, &text).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Unchanged
    );
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), bytes);

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

#[test]
fn a_store_never_imports_its_own_files_and_copies_mewmem_sessions_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    import_into(
        &store,
        &fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"),
    )
    .unwrap();
    let id = "entireio_cli__ckpt-a6e4c2a0fbd1-0.full";
    let own = store.jsonl_path(id);
    let before = std::fs::read(&own).unwrap();
    let err = import_into(&store, &own).unwrap_err();
    assert!(matches!(err, Error::SourceIsStore { .. }), "{err}");
    assert_eq!(std::fs::read(&own).unwrap(), before);

    // Another project importing this session (a mewmem file) gets every record unchanged.
    let other_dir = tempfile::tempdir().unwrap();
    let other = SessionStore::for_project(other_dir.path());
    let got = import_into(&other, &own).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].format.to_string(), "mewmem");
    assert_eq!(got[0].meta.id, id);
    assert_eq!(
        other.read_records(id).unwrap().0,
        store.read_records(id).unwrap().0
    );
    let (a, b) = (store.meta(id).unwrap(), other.meta(id).unwrap());
    assert_eq!(
        (a.title, a.message_count, a.token_count, a.compactions),
        (b.title, b.message_count, b.token_count, b.compactions)
    );
}

#[test]
fn two_sources_with_the_same_id_do_not_replace_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::copy(
        fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"),
        a.join("s.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixture("claude/entireio_cli__ckpt-4b7d5121b42a-0.full.jsonl"),
        b.join("s.jsonl"),
    )
    .unwrap();
    import_into(&store, &a.join("s.jsonl")).unwrap();
    let before = std::fs::read(store.jsonl_path("s")).unwrap();
    let err = import_into(&store, &b.join("s.jsonl")).unwrap_err();
    assert!(matches!(err, Error::IdTaken { .. }), "{err}");
    assert!(err.to_string().contains("imported from"), "{err}");
    assert_eq!(std::fs::read(store.jsonl_path("s")).unwrap(), before);
}

#[test]
fn concurrent_imports_of_the_same_files_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::sync::Arc::new(dir.path().to_owned());
    let files: Vec<PathBuf> = [
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
        "claude/entireio_cli__ckpt-4b7d5121b42a-0.full.jsonl",
        "codex/jazzyalex_agent-sessions__codex_small.jsonl",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    for _round in 0..4 {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let root = root.clone();
                let files = files.clone();
                std::thread::spawn(move || {
                    let store = SessionStore::for_project(&root);
                    for f in &files {
                        import_into(&store, f).unwrap_or_else(|e| panic!("{e}"));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    let store = SessionStore::for_project(&root);
    let metas = store.list().unwrap();
    assert_eq!(metas.len(), 3);
    for m in &metas {
        assert!(
            m.extra.contains_key("imported"),
            "{} lost its provenance",
            m.id
        );
        assert!(m.title.is_some(), "{} lost its title", m.id);
    }
    let leftovers: Vec<_> = std::fs::read_dir(store.dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// The meta is not fsynced at import: a power cut may lose it. The session is then rebuilt
/// without its provenance, and the next import of the same source, finding exactly its own
/// records, puts the meta back instead of refusing the session as another's.
#[test]
fn a_lost_meta_is_put_back_by_the_next_import_of_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let (store, src) = store_and_copy(
        dir.path(),
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    );
    let first = import_into(&store, &src).unwrap();
    let id = first[0].meta.id.clone();
    let meta_path = store.meta_path(&id);
    let saved = std::fs::read(&meta_path).unwrap();
    let bytes = std::fs::read(store.jsonl_path(&id)).unwrap();

    // Lost (an empty file, as a power cut can leave it): rebuilt without provenance.
    std::fs::write(&meta_path, b"").unwrap();
    assert!(!store.meta(&id).unwrap().extra.contains_key("imported"));
    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), bytes);
    assert_eq!(std::fs::read(&meta_path).unwrap(), saved);
    assert!(store.meta(&id).unwrap().extra.contains_key("imported"));

    // A session with other records under that id is still refused.
    std::fs::remove_file(&meta_path).unwrap();
    store
        .open(&id)
        .unwrap()
        .append(&Message::user("not from the source"))
        .unwrap();
    let err = import_into(&store, &src).unwrap_err();
    assert!(matches!(err, Error::IdTaken { .. }), "{err}");
}

/// The lost-meta restore compares the session with the records it would write a chunk at a
/// time: a session of several chunks is put back whole, and one that differs only in its last
/// chunk is still refused.
#[test]
fn a_lost_meta_of_a_session_of_several_chunks_is_put_back_only_when_every_byte_matches() {
    let dir = tempfile::tempdir().unwrap();
    let (store, src) = store_and_copy(
        dir.path(),
        "claude/entireio_cli__ckpt-b02936744f3b-0.full.jsonl",
    );
    let first = import_into(&store, &src).unwrap();
    let id = first[0].meta.id.clone();
    let meta_path = store.meta_path(&id);
    let saved = std::fs::read(&meta_path).unwrap();
    let jsonl = store.jsonl_path(&id);
    let bytes = std::fs::read(&jsonl).unwrap();
    assert!(bytes.len() > 4 << 16, "{}", bytes.len());

    std::fs::write(&meta_path, b"").unwrap();
    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert_eq!(std::fs::read(&meta_path).unwrap(), saved);

    // The same length, one byte changed near the end (inside a JSON string): not ours.
    let mut edited = bytes.clone();
    let at = edited.len()
        - 1
        - edited
            .iter()
            .rev()
            .skip(1)
            .position(|&b| b == b'a')
            .unwrap()
        - 1;
    edited[at] = b'b';
    std::fs::write(&jsonl, &edited).unwrap();
    std::fs::remove_file(&meta_path).unwrap();
    let err = import_into(&store, &src).unwrap_err();
    assert!(matches!(err, Error::IdTaken { .. }), "{err}");
    assert_eq!(std::fs::read(&jsonl).unwrap(), edited);
}

/// A meta written before the XXH3 digest names its source by SHA-256 (`imported.sha256`): an
/// unchanged source is still recognised (nothing written), a changed one replaces the session,
/// and the new meta carries the XXH3 digest only.
#[test]
fn a_meta_with_the_former_sha256_digest_is_still_recognised() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let (store, src) = store_and_copy(
        dir.path(),
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    );
    let first = import_into(&store, &src).unwrap();
    let id = first[0].meta.id.clone();
    let session_bytes = std::fs::read(store.jsonl_path(&id)).unwrap();
    let imported = &first[0].meta.extra["imported"];
    let xxh3 = imported["xxh3"].as_str().unwrap();
    assert_eq!(xxh3.len(), 32, "{imported}");
    assert!(imported.get("sha256").is_none(), "{imported}");

    // The meta as the former version wrote it: `sha256` in place of `xxh3`, no sync mark
    // (so the re-import compares whole-file digests).
    let as_before = |sha256: &str| {
        let path = store.meta_path(&id);
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let imported = meta["imported"].as_object_mut().unwrap();
        imported.remove("xxh3");
        imported.remove("sync");
        imported.insert("sha256".into(), sha256.into());
        std::fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();
    };
    let source_sha256: String = sha2::Sha256::digest(std::fs::read(&src).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    as_before(&source_sha256);
    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), session_bytes);

    // A SHA-256 that is not the source's: the source changed since; the session is replaced
    // and its meta now names the source by XXH3.
    as_before(&"0".repeat(64));
    let replaced = import_into(&store, &src).unwrap();
    assert_eq!(replaced[0].action, IngestAction::Replaced);
    assert_eq!(std::fs::read(store.jsonl_path(&id)).unwrap(), session_bytes);
    let meta = store.meta(&id).unwrap();
    assert_eq!(meta.extra["imported"]["xxh3"].as_str(), Some(xxh3));
    assert!(meta.extra["imported"].get("sha256").is_none());

    // Both keys (never written so; an edited meta): `xxh3` decides, a `sha256` beside it is
    // not looked at, right or wrong.
    for sha256 in [source_sha256.clone(), "0".repeat(64)] {
        as_before(&sha256);
        let path = store.meta_path(&id);
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        meta["imported"]["xxh3"] = xxh3.into();
        std::fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();
        let again = import_into(&store, &src).unwrap();
        assert_eq!(again[0].action, IngestAction::Unchanged, "{sha256}");
    }
    as_before(&source_sha256);
    let path = store.meta_path(&id);
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    meta["imported"]["xxh3"] = "0".repeat(32).into();
    std::fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();
    let replaced = import_into(&store, &src).unwrap();
    assert_eq!(replaced[0].action, IngestAction::Replaced);
}

/// Every session of a source with sidechains recognised by the former SHA-256 digest (the
/// source is hashed once for all of them).
#[test]
fn every_session_of_a_source_is_recognised_by_the_former_sha256_digest() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let src = dir.path().join("t.jsonl");
    std::fs::copy(
        fixture(
            "claude/d-kimuson_claude-code-viewer__sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        ),
        &src,
    )
    .unwrap();
    let first = import_into(&store, &src).unwrap();
    assert!(first.len() > 1, "{}", first.len());
    let sha256: String = sha2::Sha256::digest(std::fs::read(&src).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for ingested in &first {
        let path = store.meta_path(&ingested.meta.id);
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let imported = meta["imported"].as_object_mut().unwrap();
        imported.remove("xxh3").unwrap();
        imported.remove("sync");
        imported.insert("sha256".into(), sha256.clone().into());
        std::fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();
    }
    let again = import_into(&store, &src).unwrap();
    assert_eq!(again.len(), first.len());
    for ingested in &again {
        assert_eq!(
            ingested.action,
            IngestAction::Unchanged,
            "{}",
            ingested.meta.id
        );
    }
}

/// A transcript with subagent sessions, imported whole into a reference store, and a second
/// store in which another source's session already holds one of the transcript's ids (`taken`
/// picks it from the reference's ids, main session first). The transcript is copied beside
/// that store as `t.jsonl`.
struct Blocked {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    reference_store: SessionStore,
    reference: Vec<mem_session::ingest::Ingested>,
    store: SessionStore,
    src: PathBuf,
    taken: String,
}

fn blocked(taken: impl Fn(&[String]) -> String) -> Blocked {
    let rel = "claude/d-kimuson_claude-code-viewer__sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let reference_dir = tempfile::tempdir().unwrap();
    let (reference_store, reference_src) = store_and_copy(reference_dir.path(), rel);
    let reference = import_into(&reference_store, &reference_src).unwrap();
    assert!(reference.len() > 3, "{} sessions", reference.len());
    let ids: Vec<String> = reference.iter().map(|d| d.meta.id.clone()).collect();
    let taken = taken(&ids);

    let dir = tempfile::tempdir().unwrap();
    let (store, src) = store_and_copy(dir.path(), rel);
    let other = dir.path().join("other.jsonl");
    std::fs::copy(
        fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"),
        &other,
    )
    .unwrap();
    mem_session::ingest::import_into_as(&store, &other, Some(&taken)).unwrap();
    Blocked {
        _dirs: (reference_dir, dir),
        reference_store,
        reference,
        store,
        src,
        taken,
    }
}

/// An import that stops between a file's sessions (here: a subagent session's id is taken by
/// another source, so its commit fails) leaves the file's main session out, so importing the
/// file again, once the id is free, completes every session. (Committed first, the main
/// session's meta marked the source as imported: the next import of the unchanged file
/// stopped at it and the subagent sessions after the failure were never written. A SIGKILL
/// between the commits did the same.)
#[test]
fn an_import_stopped_between_a_files_sessions_is_completed_by_the_next() {
    let b = blocked(|ids| ids[ids.len() / 2].clone());
    let main = &b.reference[0].meta.id;
    let err = import_into(&b.store, &b.src).unwrap_err();
    assert!(matches!(err, Error::IdTaken { .. }), "{err}");
    assert!(
        !b.store.jsonl_path(main).exists(),
        "the main session was committed before its subagent sessions"
    );

    b.store.delete(&b.taken).unwrap();
    let again = import_into(&b.store, &b.src).unwrap();
    assert_eq!(again.len(), b.reference.len());
    for done in &b.reference {
        let id = &done.meta.id;
        assert_eq!(
            std::fs::read(b.store.jsonl_path(id)).unwrap(),
            std::fs::read(b.reference_store.jsonl_path(id)).unwrap(),
            "{id}"
        );
    }
}

/// A file whose main session is refused (its id is another source's) writes none of its
/// subagent sessions either, though they are committed before the main session.
#[test]
fn a_refused_main_session_writes_no_subagent_session() {
    let b = blocked(|ids| ids[0].clone());
    let before = b.store.ids().unwrap();
    let err = import_into(&b.store, &b.src).unwrap_err();
    assert!(matches!(err, Error::IdTaken { .. }), "{err}");
    assert_eq!(
        b.store.ids().unwrap(),
        before,
        "a refused file wrote sessions"
    );
}
