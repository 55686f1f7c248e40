#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rollback` records (checkpoint restore): replay goes back to an earlier length of the file,
//! the records in between stay on disk, a rollback of a rollback returns to the later state.

use std::fs;

use mem_core::Message;
use mem_session::{Error, RecordType, SessionStore, make_compact_boundary, records_to_messages};

fn texts(msgs: &[Message]) -> Vec<String> {
    msgs.iter().map(Message::text_content).collect()
}

#[test]
fn rollback_replays_the_checkpointed_prefix_and_keeps_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let mut w = store.create().unwrap();
    let id = w.id().to_owned();
    w.append(&Message::user("one")).unwrap();
    w.append(&Message::assistant("two")).unwrap();
    let at = store.position(&id).unwrap();
    let replay_then = store.resume(&id).unwrap().messages;
    w.append(&Message::user("wrong turn")).unwrap();
    w.append_compact_boundary("summary of a wrong turn", vec![Message::user("wrong turn")])
        .unwrap();
    w.append(&Message::assistant("more")).unwrap();
    let later = store.position(&id).unwrap();
    let replay_later = store.resume(&id).unwrap().messages;

    assert!(
        store
            .has_prefix(&id, at.jsonl_bytes, &at.jsonl_tail)
            .unwrap()
    );
    assert!(
        store
            .append_rollback(
                &id,
                later.jsonl_bytes,
                at.jsonl_bytes,
                &at.jsonl_tail,
                at.token_count,
                "c1"
            )
            .unwrap()
    );
    let r = store.resume(&id).unwrap();
    assert!(r.rolled_back && !r.from_boundary);
    assert_eq!(r.messages, replay_then);
    assert_eq!(r.meta.token_count, at.token_count);
    // Every record is still on disk.
    let (records, diags) = store.read_records(&id).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(records.len(), 6);
    assert_eq!(records[5].record_type, RecordType::Rollback);
    assert_eq!(texts(&records_to_messages(&records)), ["one", "two"]);

    // New messages go on from the restored point.
    let mut w = store.open(&id).unwrap();
    w.append(&Message::user("fresh")).unwrap();
    assert_eq!(
        texts(&store.resume(&id).unwrap().messages),
        ["one", "two", "fresh"]
    );

    // A rollback to the later state (restore of the restore) gives the later replay back.
    let now = store.position(&id).unwrap();
    assert!(
        store
            .append_rollback(
                &id,
                now.jsonl_bytes,
                later.jsonl_bytes,
                &later.jsonl_tail,
                later.token_count,
                "pre"
            )
            .unwrap()
    );
    let r = store.resume(&id).unwrap();
    assert_eq!(r.messages, replay_later);
    let (records, _) = store.read_records(&id).unwrap();
    assert_eq!(records_to_messages(&records), replay_later);
    // The meta rebuilt from scratch agrees with the one kept by appends.
    let kept = store.position(&id).unwrap();
    fs::remove_file(store.meta_path(&id)).unwrap();
    let rebuilt = store.position(&id).unwrap();
    assert_eq!(rebuilt.token_count, kept.token_count);
    assert_eq!(rebuilt.message_count, kept.message_count);
}

#[test]
fn rollback_is_refused_when_the_prefix_changed_or_the_file_grew() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let mut w = store.create().unwrap();
    let id = w.id().to_owned();
    w.append(&Message::user("one")).unwrap();
    let at = store.position(&id).unwrap();
    w.append(&Message::user("two")).unwrap();
    let len = store.position(&id).unwrap().jsonl_bytes;
    // Another writer appended since `len - 1` was read: nothing written.
    assert!(
        !store
            .append_rollback(&id, len - 1, at.jsonl_bytes, &at.jsonl_tail, 0, "c")
            .unwrap()
    );
    let err = store
        .append_rollback(&id, len, at.jsonl_bytes, "00ff", 0, "c")
        .unwrap_err();
    assert!(matches!(err, Error::Changed { .. }), "{err}");
    assert!(
        err.to_string()
            .contains(r#"bytes are not the ones checkpoint "c" recorded"#),
        "{err}"
    );
    assert_eq!(fs::metadata(store.jsonl_path(&id)).unwrap().len(), len);
    assert!(!store.has_prefix(&id, len + 10, &at.jsonl_tail).unwrap());
}

#[test]
fn a_rollback_to_empty_and_a_torn_or_bogus_rollback_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    let mut w = store.create().unwrap();
    let id = w.id().to_owned();
    w.append(&Message::user("one")).unwrap();
    let len = store.position(&id).unwrap().jsonl_bytes;
    assert!(store.append_rollback(&id, len, 0, "", 0, "empty").unwrap());
    assert!(store.resume(&id).unwrap().messages.is_empty());
    // A rollback that points past itself (hand-written) is passed over like a torn boundary.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(store.jsonl_path(&id))
        .unwrap();
    use std::io::Write;
    writeln!(
        f,
        r#"{{"type":"rollback","to_bytes":999999,"to_records":0}}"#
    )
    .unwrap();
    writeln!(
        f,
        r#"{{"type":"user","message":{{"role":"user","content":"two"}}}}"#
    )
    .unwrap();
    drop(f);
    let r = store.resume(&id).unwrap();
    assert_eq!(texts(&r.messages), ["two"]);
    // A boundary after the rollback wins as before.
    let mut w = store.open(&id).unwrap();
    w.append_records(&[make_compact_boundary("S", vec![], None)])
        .unwrap();
    assert_eq!(texts(&store.resume(&id).unwrap().messages), ["S"]);
}
