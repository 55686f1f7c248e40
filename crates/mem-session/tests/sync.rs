#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Incremental re-import: a transcript that grew is converted from its sync mark on, and the
//! result is the same session a whole import of the grown file gives, byte for byte.

use std::fs;
use std::path::{Path, PathBuf};

use mem_core::Message;
use mem_session::ingest::{IngestAction, import_into};
use mem_session::{Error, REWRITING_KEY, SessionStore, StoreOptions};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/transcripts")
        .join(rel)
}

/// A fresh project store and the path `t.jsonl` of a source beside it, in a new temporary
/// directory (removed when the returned guard drops).
fn fresh_store() -> (tempfile::TempDir, PathBuf, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.jsonl");
    let store = SessionStore::for_project(&dir.path().join("p"));
    (dir, src, store)
}

/// The bytes of the real Claude Code transcript most sync tests grow line by line.
fn checkpoint_transcript() -> Vec<u8> {
    fs::read(fixture(
        "claude/entireio_cli__ckpt-44785715c3f5-2.full.jsonl",
    ))
    .unwrap()
}

/// Byte offsets just after each newline of `bytes`.
fn line_ends(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect()
}

/// The session a whole import of `bytes` (named `name`) gives: its `.jsonl` and meta counts.
fn whole(name: &str, bytes: &[u8]) -> (Vec<u8>, (usize, usize, usize)) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join(name);
    fs::write(&src, bytes).unwrap();
    let store = SessionStore::for_project(&dir.path().join("p"));
    let got = import_into(&store, &src).unwrap();
    // An import leaves the token count to the first reader that reports it.
    let meta = &store.meta(&got[0].meta.id).unwrap();
    (
        fs::read(store.jsonl_path(&meta.id)).unwrap(),
        (meta.message_count, meta.token_count, meta.compactions),
    )
}

/// Imports `bytes[..cuts[0]]`, then grows the file to each next cut and imports again; checks
/// every step against a whole import and returns the actions taken.
fn grow_and_compare(name: &str, bytes: &[u8], cuts: &[usize]) -> Vec<IngestAction> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join(name);
    let store = SessionStore::for_project(&dir.path().join("p"));
    let mut actions = Vec::new();
    for &cut in cuts {
        fs::write(&src, &bytes[..cut]).unwrap();
        let got = import_into(&store, &src).unwrap();
        actions.push(got[0].action);
        if got[0].action == IngestAction::Empty {
            continue; // no conversation yet: nothing stored
        }
        let meta = store.meta(&got[0].meta.id).unwrap();
        let (want, counts) = whole(name, &bytes[..cut]);
        let have = fs::read(store.jsonl_path(&meta.id)).unwrap();
        assert!(
            have == want,
            "{name} at byte {cut}: the synced session differs from a whole import"
        );
        assert_eq!(
            (meta.message_count, meta.token_count, meta.compactions),
            counts,
            "{name} at byte {cut}: meta counts"
        );
    }
    actions
}

#[test]
fn every_real_transcript_grown_in_steps_equals_a_whole_import() {
    let files = [
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
        "claude/entireio_cli__ckpt-8e0a64736bc7-0.full.jsonl",
        "claude/jazzyalex_agent-sessions__claude_small.jsonl",
        "claude/entireio_cli__ckpt-44785715c3f5-2.full.jsonl",
        "codex/jazzyalex_agent-sessions__codex_small.jsonl",
        "codex/lanegrid_agtrace__rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
        "codex/AcidicSoil_codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    ];
    for rel in files {
        let bytes = fs::read(fixture(rel)).unwrap();
        let ends = line_ends(&bytes);
        // Six growth steps spread over the file, then the whole file.
        let mut cuts: Vec<usize> = (1..=6).map(|k| ends[ends.len() * k / 7]).collect();
        cuts.push(bytes.len());
        cuts.dedup();
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let actions = grow_and_compare(name, &bytes, &cuts);
        assert!(actions.contains(&IngestAction::Created), "{rel}");
        assert!(
            actions[1..].contains(&IngestAction::Appended),
            "{rel}: no step was incremental: {actions:?}"
        );
    }
}

/// The hooks' sync defers token counting (`StoreOptions::defer_tokens`): the `.jsonl` and the
/// message counts are those of a whole import at once, and the token count is, once a store
/// that counts reads the meta. That read also completes the sync mark, so the next deferred
/// sync leaves only its own new records to count.
#[test]
fn a_deferred_sync_gives_the_same_counts_once_read() {
    let files = [
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
        "claude/entireio_cli__ckpt-44785715c3f5-2.full.jsonl",
        "codex/lanegrid_agtrace__rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
    ];
    for rel in files {
        let bytes = fs::read(fixture(rel)).unwrap();
        let ends = line_ends(&bytes);
        let mut cuts: Vec<usize> = (1..=8).map(|k| ends[ends.len() * k / 9]).collect();
        cuts.push(bytes.len());
        cuts.dedup();
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.jsonl");
        let project = dir.path().join("p");
        let deferring = SessionStore::for_project(&project).with_options(StoreOptions {
            defer_tokens: true,
            ..StoreOptions::default()
        });
        let counting = SessionStore::for_project(&project);
        let mut deferred_steps = 0;
        let mut last_pending: Option<u64> = None;
        let mut read_since = false;
        for (step, &cut) in cuts.iter().enumerate() {
            fs::write(&src, &bytes[..cut]).unwrap();
            let got = import_into(&deferring, &src).unwrap();
            if got[0].action == IngestAction::Empty {
                continue;
            }
            let id = got[0].meta.id.clone();
            let (want_bytes, (messages, tokens, compactions)) = whole("t.jsonl", &bytes[..cut]);
            assert!(
                fs::read(deferring.jsonl_path(&id)).unwrap() == want_bytes,
                "{rel} at byte {cut}: the synced session differs from a whole import"
            );
            let raw = deferring.meta(&id).unwrap();
            assert_eq!(
                (raw.message_count, raw.compactions),
                (messages, compactions),
                "{rel} at byte {cut}"
            );
            if got[0].action == IngestAction::Appended {
                if let Some(p) = raw.tokens_pending_from {
                    deferred_steps += 1;
                    assert!(p < raw.jsonl_bytes, "{rel} at byte {cut}");
                    // Counted by a read since: the pending part starts later (a boundary
                    // after the sync mark may leave the mark to a later read).
                    if let Some(before) = last_pending
                        && read_since
                        && compactions == 0
                    {
                        assert!(p > before, "{rel} at byte {cut}: {p} <= {before}");
                    }
                    last_pending = Some(p);
                    read_since = false;
                }
            } else if matches!(
                got[0].action,
                IngestAction::Created | IngestAction::Replaced
            ) {
                // A whole import does not count tokens either.
                assert!(
                    raw.tokens_pending_from.is_some(),
                    "{rel} at byte {cut}: a whole import leaves the count pending"
                );
            }
            // Every other step, a store that counts reads the meta (as `mem session` does).
            if step % 2 == 1 || cut == bytes.len() {
                let counted = counting.meta(&id).unwrap();
                assert_eq!(counted.tokens_pending_from, None, "{rel} at byte {cut}");
                assert_eq!(
                    (
                        counted.message_count,
                        counted.token_count,
                        counted.compactions
                    ),
                    (messages, tokens, compactions),
                    "{rel} at byte {cut}: counts after the deferred count"
                );
                // Saved: a second read finds it complete.
                assert_eq!(counting.meta(&id).unwrap(), counted);
                read_since = true;
            }
        }
        assert!(
            deferred_steps >= 2,
            "{rel}: {deferred_steps} deferred steps"
        );
    }
}

#[test]
fn growing_line_by_line_equals_a_whole_import() {
    for rel in [
        "claude/entireio_cli__ckpt-8e0a64736bc7-0.full.jsonl",
        "codex/lanegrid_agtrace__rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
        // Synthetic sidechain lines throughout: every step falls back to a whole import, and
        // the result is still the same.
        "claude/jazzyalex_agent-sessions__claude_small.jsonl",
    ] {
        let bytes = fs::read(fixture(rel)).unwrap();
        let ends = line_ends(&bytes);
        let actions = grow_and_compare("s.jsonl", &bytes, &ends);
        // Lines that convert to nothing (events, progress) leave the session unchanged;
        // none of these two files needs a whole re-import at any line.
        if !rel.contains("claude_small") {
            assert!(
                !actions.contains(&IngestAction::Replaced),
                "{rel}: {actions:?}"
            );
            assert!(actions.contains(&IngestAction::Appended), "{rel}");
        }
    }
}

#[test]
fn a_torn_last_line_is_taken_once_it_is_whole() {
    let bytes = fs::read(fixture(
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    ))
    .unwrap();
    let ends = line_ends(&bytes);
    let half = ends[ends.len() / 2];
    let torn = half + (ends[ends.len() / 2 + 1] - half) / 2;
    let (_dir, src, store) = fresh_store();
    fs::write(&src, &bytes[..half]).unwrap();
    import_into(&store, &src).unwrap();
    // The agent is writing a line right now: half of it is on disk.
    fs::write(&src, &bytes[..torn]).unwrap();
    let got = import_into(&store, &src).unwrap();
    assert!(
        got[0]
            .report
            .diagnostics
            .iter()
            .any(|d| d.message.contains("torn") || d.message.contains("incomplete")),
        "{:?}",
        got[0].report.diagnostics
    );
    let id = got[0].meta.id.clone();
    assert_eq!(
        fs::read(store.jsonl_path(&id)).unwrap(),
        whole("t.jsonl", &bytes[..half]).0
    );
    // The line is finished, and more follow.
    fs::write(&src, &bytes).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Appended
    );
    assert_eq!(
        fs::read(store.jsonl_path(&id)).unwrap(),
        whole("t.jsonl", &bytes).0
    );
}

#[test]
fn sync_reads_the_new_lines_not_the_file() {
    let bytes = checkpoint_transcript();
    let ends = line_ends(&bytes);
    let (_dir, src, store) = fresh_store();
    let start = ends[ends.len() - 12];
    fs::write(&src, &bytes[..start]).unwrap();
    let first = import_into(&store, &src).unwrap();
    assert!(first[0].report.lines > 500, "{}", first[0].report.lines);
    fs::write(&src, &bytes).unwrap();
    let got = import_into(&store, &src).unwrap();
    assert_eq!(got[0].action, IngestAction::Appended);
    // Lines read: the 12 new ones plus the last message before them, not the whole file.
    assert!(
        got[0].report.lines <= 12 + 20,
        "read {} lines",
        got[0].report.lines
    );
    // Nothing new: nothing written, still only the tail read.
    let again = import_into(&store, &src).unwrap();
    assert_eq!(again[0].action, IngestAction::Unchanged);
    assert!(again[0].report.lines <= 20);
}

#[test]
fn a_source_rewritten_before_the_mark_is_imported_whole() {
    let bytes = fs::read(fixture(
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    ))
    .unwrap();
    let (_dir, src, store) = fresh_store();
    fs::write(&src, &bytes).unwrap();
    let id = import_into(&store, &src).unwrap()[0].meta.id.clone();
    // Same length, one early byte changed inside a string: a rewrite, not growth.
    let mut edited = bytes.clone();
    let at = edited.windows(6).position(|w| w == b"\"text\"").unwrap();
    let pos = at + 10;
    edited[pos] = if edited[pos] == b'x' { b'y' } else { b'x' };
    fs::write(&src, &edited).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Replaced
    );
    assert_eq!(
        fs::read(store.jsonl_path(&id)).unwrap(),
        whole("t.jsonl", &edited).0
    );
    // Truncated to half: replaced too.
    let ends = line_ends(&edited);
    let half = &edited[..ends[ends.len() / 2]];
    fs::write(&src, half).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Replaced
    );
    assert_eq!(
        fs::read(store.jsonl_path(&id)).unwrap(),
        whole("t.jsonl", half).0
    );
}

#[test]
fn records_appended_locally_are_never_cut_by_a_sync() {
    let bytes = fs::read(fixture(
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    ))
    .unwrap();
    let ends = line_ends(&bytes);
    let (_dir, src, store) = fresh_store();
    fs::write(&src, &bytes[..ends[ends.len() / 2]]).unwrap();
    let id = import_into(&store, &src).unwrap()[0].meta.id.clone();
    store
        .open(&id)
        .unwrap()
        .append(&Message::user("continued here"))
        .unwrap();
    fs::write(&src, &bytes).unwrap();
    let err = import_into(&store, &src).unwrap_err();
    assert!(matches!(err, Error::WouldDropAppended { .. }), "{err}");
    let resumed = store.resume(&id).unwrap();
    assert_eq!(
        resumed.messages.last().unwrap().text_content(),
        "continued here"
    );
}

#[test]
fn a_sync_interrupted_midway_is_finished_by_the_next() {
    let bytes = fs::read(fixture(
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    ))
    .unwrap();
    let ends = line_ends(&bytes);
    let (_dir, src, store) = fresh_store();
    fs::write(&src, &bytes[..ends[ends.len() / 2]]).unwrap();
    let id = import_into(&store, &src).unwrap()[0].meta.id.clone();
    // A crash after the meta said "rewriting" and the file was cut and half rewritten.
    let meta_path = store.meta_path(&id);
    let mut meta: serde_json::Value =
        serde_json::from_slice(&fs::read(&meta_path).unwrap()).unwrap();
    let from = meta["imported"]["sync"]["session"]["bytes"]
        .as_u64()
        .unwrap();
    meta[REWRITING_KEY] = serde_json::json!({ "from": from });
    fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
    let jsonl = store.jsonl_path(&id);
    let mut session = fs::read(&jsonl).unwrap();
    session.truncate(usize::try_from(from).unwrap());
    session.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"role\":\"us");
    fs::write(&jsonl, &session).unwrap();
    fs::write(&src, &bytes).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Appended
    );
    assert_eq!(fs::read(&jsonl).unwrap(), whole("t.jsonl", &bytes).0);
    let meta = store.meta(&id).unwrap();
    assert!(!meta.extra.contains_key(REWRITING_KEY));
}

/// A sync mark written before the XXH3 fingerprints holds SHA-256 ones (64 hex digits): it is
/// still checked as written, so a grown source is synced from it (not imported whole), and one
/// rewritten before the mark is imported whole; the new mark has XXH3 fingerprints.
#[test]
fn a_sync_mark_with_the_former_sha256_fingerprints_still_syncs() {
    use sha2::Digest;
    let bytes = checkpoint_transcript();
    let ends = line_ends(&bytes);
    let start = ends[ends.len() - 12];
    let sha256 = |b: &[u8]| -> String {
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    };
    for rewritten in [false, true] {
        let (_dir, src, store) = fresh_store();
        fs::write(&src, &bytes[..start]).unwrap();
        let id = import_into(&store, &src).unwrap()[0].meta.id.clone();
        // The mark as the former version wrote it: SHA-256 of the same two windows.
        let path = store.meta_path(&id);
        let mut meta: serde_json::Value =
            serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let sync = meta["imported"]["sync"].as_object_mut().unwrap();
        assert_eq!(sync["head"].as_str().unwrap().len(), 32, "{sync:?}");
        let offset = usize::try_from(sync["offset"].as_u64().unwrap()).unwrap();
        sync.insert("head".into(), sha256(&bytes[..offset.min(64 << 10)]).into());
        sync.insert(
            "before".into(),
            sha256(&bytes[offset.saturating_sub(64 << 10)..offset]).into(),
        );
        fs::write(&path, serde_json::to_vec(&meta).unwrap()).unwrap();

        let mut grown = bytes.clone();
        if rewritten {
            // One byte changed near the top, inside a string: the same JSON shape.
            let at = bytes[..offset.min(4096)]
                .windows(6)
                .position(|w| w == b"\"uuid\"")
                .unwrap()
                + 9;
            grown[at] = if grown[at] == b'0' { b'1' } else { b'0' };
        }
        fs::write(&src, &grown).unwrap();
        let got = import_into(&store, &src).unwrap();
        if rewritten {
            assert_eq!(got[0].action, IngestAction::Replaced);
        } else {
            assert_eq!(got[0].action, IngestAction::Appended);
            assert!(got[0].report.lines <= 12 + 20, "{}", got[0].report.lines);
        }
        assert_eq!(
            fs::read(store.jsonl_path(&got[0].meta.id)).unwrap(),
            whole("t.jsonl", &grown).0
        );
        let sync = &got[0].meta.extra["imported"]["sync"];
        assert_eq!(sync["head"].as_str().unwrap().len(), 32, "{sync}");
        assert_eq!(sync["before"].as_str().unwrap().len(), 32, "{sync}");
    }
}

/// A batch import ([`mem_session::ingest::import_many`], what `mem session import` runs) syncs
/// a grown source from its mark as a single import does, and leaves an unchanged one alone;
/// the first batch, into an empty store, imports whole.
#[test]
fn a_batch_syncs_grown_sources_from_their_marks() {
    use mem_session::ingest::import_many;
    let bytes = checkpoint_transcript();
    let other = fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl");
    let ends = line_ends(&bytes);
    let start = ends[ends.len() - 12];
    let (_dir, src, store) = fresh_store();
    let batch = |files: &[PathBuf]| {
        let mut out = Vec::new();
        import_many(&store, files, None, 2, |_, r| out.push(r.unwrap())).unwrap();
        out
    };
    fs::write(&src, &bytes[..start]).unwrap();
    let first = batch(&[src.clone(), other.clone()]);
    assert_eq!(first[0][0].action, IngestAction::Created);
    assert_eq!(first[1][0].action, IngestAction::Created);
    fs::write(&src, &bytes).unwrap();
    let second = batch(&[other.clone(), src.clone()]);
    assert_eq!(second[0][0].action, IngestAction::Unchanged);
    assert_eq!(second[1][0].action, IngestAction::Appended);
    assert!(
        second[1][0].report.lines <= 12 + 20,
        "{}",
        second[1][0].report.lines
    );
    let id = &second[1][0].meta.id;
    assert_eq!(
        fs::read(store.jsonl_path(id)).unwrap(),
        whole("t.jsonl", &bytes).0
    );
    let third = batch(std::slice::from_ref(&src));
    assert_eq!(third[0][0].action, IngestAction::Unchanged);
    assert!(third[0][0].report.lines <= 20);
}

/// The same source twice in one batch (a path spelled two ways reaches `import_many` twice):
/// into a store without its session, the first creates it and the second finds it unchanged
/// (the batch's id snapshot sends both to a whole import, the commit tells them apart); once
/// the source grew, one syncs it and the other finds nothing left to do (the two syncs run on
/// two workers, so which one is not fixed), and the session is the whole import's.
#[test]
fn the_same_source_twice_in_a_batch() {
    use mem_session::ingest::import_many;
    let bytes = checkpoint_transcript();
    let ends = line_ends(&bytes);
    let start = ends[ends.len() - 12];
    let (dir, src, store) = fresh_store();
    let batch = |files: &[PathBuf]| {
        let mut out = Vec::new();
        import_many(&store, files, None, 2, |_, r| {
            out.push(r.unwrap()[0].action)
        })
        .unwrap();
        out
    };
    fs::write(&src, &bytes[..start]).unwrap();
    let twice = [src.clone(), dir.path().join(".").join("t.jsonl")];
    assert_eq!(
        batch(&twice),
        [IngestAction::Created, IngestAction::Unchanged]
    );
    fs::write(&src, &bytes).unwrap();
    let mut got = batch(&twice);
    got.sort_by_key(|a| format!("{a:?}"));
    assert_eq!(got, [IngestAction::Appended, IngestAction::Unchanged]);
    let ids = store.ids().unwrap();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(
        fs::read(store.jsonl_path(&ids[0])).unwrap(),
        whole("t.jsonl", &bytes).0
    );
}

/// A transcript whose first sixteen lines hold one object of no known shape and damaged lines
/// (the format is told from its first sixteen values) imports the same way alone, in a batch
/// into an empty store (which takes no look at a file's first lines for a sync) and in a
/// batch into a store with sessions: the look at the first lines decides nothing the whole
/// import would not.
#[test]
fn the_sync_probe_fails_no_file_the_whole_import_takes() {
    use mem_session::ingest::import_many;
    let bytes = checkpoint_transcript();
    let mut odd = b"{\"note\":1}\n".to_vec();
    for _ in 0..16 {
        odd.extend_from_slice(b"not json\n");
    }
    odd.extend_from_slice(&bytes);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("odd.jsonl");
    fs::write(&src, &odd).unwrap();
    let other = fixture("claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl");
    for with_sessions in [false, true] {
        let store = SessionStore::for_project(&dir.path().join(format!("p{with_sessions}")));
        if with_sessions {
            import_into(&store, &other).unwrap();
        }
        let mut out = Vec::new();
        import_many(&store, std::slice::from_ref(&src), None, 1, |_, r| {
            out.push(r.map(|v| v[0].action).map_err(|e| e.to_string()));
        })
        .unwrap();
        assert_eq!(out, [Ok(IngestAction::Created)], "{with_sessions}");
    }
    let store = SessionStore::for_project(&dir.path().join("alone"));
    let got = import_into(&store, &src).unwrap();
    assert_eq!(got[0].action, IngestAction::Created);
    // And again: nothing changed.
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Unchanged
    );
}

#[test]
fn a_session_rolled_back_since_its_import_keeps_syncing_and_can_be_reimported() {
    let bytes = checkpoint_transcript();
    let ends = line_ends(&bytes);
    let (_dir, src, store) = fresh_store();
    fs::write(&src, &bytes[..ends[ends.len() / 3]]).unwrap();
    let id = import_into(&store, &src).unwrap()[0].meta.id.clone();
    let then = store.position(&id).unwrap();
    fs::write(&src, &bytes[..ends[2 * ends.len() / 3]]).unwrap();
    import_into(&store, &src).unwrap();
    // `mem checkpoint restore` appends a rollback to the length of the first import.
    let now = store.position(&id).unwrap();
    assert!(
        store
            .append_rollback(
                &id,
                now.jsonl_bytes,
                then.jsonl_bytes,
                &then.jsonl_tail,
                0,
                "c"
            )
            .unwrap()
    );
    let rolled = fs::read(store.jsonl_path(&id)).unwrap();
    let replay_then = store.resume(&id).unwrap().messages.len();
    // The transcript grows: the new lines are appended after the rollback, nothing is cut.
    fs::write(&src, &bytes).unwrap();
    let got = import_into(&store, &src).unwrap();
    assert_eq!(got[0].action, IngestAction::Appended);
    let after = fs::read(store.jsonl_path(&id)).unwrap();
    assert!(after.starts_with(&rolled) && after.len() > rolled.len());
    assert!(store.resume(&id).unwrap().messages.len() > replay_then);
    // Unchanged: nothing written.
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Unchanged
    );
    assert_eq!(fs::read(store.jsonl_path(&id)).unwrap(), after);

    // Rolled back again, then the source rewritten before the mark: a whole import replaces
    // the session (rollbacks included) rather than refusing for good.
    let now = store.position(&id).unwrap();
    assert!(
        store
            .append_rollback(
                &id,
                now.jsonl_bytes,
                then.jsonl_bytes,
                &then.jsonl_tail,
                0,
                "c"
            )
            .unwrap()
    );
    let mut rewritten = bytes.clone();
    let first = String::from_utf8(bytes[..ends[0]].to_vec()).unwrap();
    let changed = first.replacen("\"type\"", "\"extra\":1,\"type\"", 1);
    assert_ne!(first, changed);
    rewritten.splice(..ends[0], changed.into_bytes());
    fs::write(&src, &rewritten).unwrap();
    assert_eq!(
        import_into(&store, &src).unwrap()[0].action,
        IngestAction::Replaced
    );
    assert_eq!(
        fs::read(store.jsonl_path(&id)).unwrap(),
        whole("t.jsonl", &rewritten).0
    );
    // Records appended by someone else are still never dropped.
    store
        .open(&id)
        .unwrap()
        .append(&Message::user("continued here"))
        .unwrap();
    fs::write(&src, &bytes).unwrap();
    let err = import_into(&store, &src).unwrap_err();
    assert!(matches!(err, Error::WouldDropAppended { .. }), "{err}");
}

/// Ids made from file names never start with `-` (`-lead.jsonl` is `_lead-<hash>`, no `--`
/// needed on a command line); a session an earlier import named `-lead` (the id kept its
/// dash then) is still the session of that file: a re-import finds it unchanged, syncs it
/// when the file grew and replaces it when it was rewritten, single or in a batch, and adds
/// no second session beside it.
#[test]
fn ids_from_dash_names_and_the_sessions_stored_under_the_old_ids() {
    use mem_session::ingest::{import_into_as, import_many};
    let bytes = checkpoint_transcript();
    let ends = line_ends(&bytes);
    let start = ends[ends.len() - 12];

    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("-new.jsonl");
    fs::write(&fresh, &bytes).unwrap();
    let store = SessionStore::for_project(&dir.path().join("p"));
    let id = import_into(&store, &fresh).unwrap()[0].meta.id.clone();
    assert!(id.starts_with("_new-"), "{id}");
    assert_eq!(id.len(), "_new-".len() + 8, "{id}");

    // The old rule's session: what an import before this rule wrote for `-lead.jsonl`.
    let src = dir.path().join("-lead.jsonl");
    fs::write(&src, &bytes[..start]).unwrap();
    let old = import_into_as(&store, &src, Some("-lead")).unwrap();
    assert_eq!(old[0].meta.id, "-lead");
    let stored = || store.ids().unwrap();
    assert_eq!(stored(), vec!["-lead".to_owned(), id.clone()]);

    let again = import_into(&store, &src).unwrap();
    assert_eq!(
        (again[0].meta.id.as_str(), again[0].action),
        ("-lead", IngestAction::Unchanged)
    );
    fs::write(&src, &bytes).unwrap();
    let grown = import_into(&store, &src).unwrap();
    assert_eq!(
        (grown[0].meta.id.as_str(), grown[0].action),
        ("-lead", IngestAction::Appended)
    );
    assert_eq!(stored(), vec!["-lead".to_owned(), id.clone()]);

    // Rewritten (another conversation): replaced whole, still `-lead`; in a batch too.
    let other = fs::read(fixture(
        "claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl",
    ))
    .unwrap();
    fs::write(&src, &other).unwrap();
    let replaced = import_into(&store, &src).unwrap();
    assert_eq!(
        (replaced[0].meta.id.as_str(), replaced[0].action),
        ("-lead", IngestAction::Replaced)
    );
    fs::write(&src, &bytes).unwrap();
    let mut out = Vec::new();
    import_many(&store, &[src.clone(), fresh.clone()], None, 2, |_, r| {
        out.push(r.unwrap())
    })
    .unwrap();
    assert_eq!(
        (out[0][0].meta.id.as_str(), out[0][0].action),
        ("-lead", IngestAction::Replaced)
    );
    assert_eq!(out[1][0].action, IngestAction::Unchanged);
    assert_eq!(stored(), vec!["-lead".to_owned(), id]);
}
