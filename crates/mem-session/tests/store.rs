#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Session store behaviour on real files in temp dirs.

use std::fs;
use std::io::Write;
use std::time::Duration;

use mem_core::{ContentBlock, Message, Role};
use mem_session::{ChainIssue, Error, RecordType, SessionStore, StoreOptions};
use serde_json::json;

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::for_project(dir.path());
    (dir, store)
}

fn call(id: &str) -> Message {
    Message::new(
        Role::Assistant,
        vec![
            ContentBlock::text("let me look"),
            ContentBlock::tool_use(id, "Bash", json!({"command": "ls"})),
        ],
    )
}

fn result(id: &str) -> Message {
    Message::new(
        Role::User,
        vec![ContentBlock::tool_result(id, "a.txt\nb.txt", false)],
    )
}

fn texts(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| format!("{}:{}", m.role.as_str(), m.text_content()))
        .collect()
}

#[test]
fn append_then_resume_round_trips_and_updates_meta() {
    let (_d, store) = store();
    let mut w = store.create().unwrap();
    let msgs = vec![
        Message::user("list the   files\nplease"),
        call("t1"),
        result("t1"),
        Message::assistant("two files"),
    ];
    for m in &msgs {
        w.append(m).unwrap();
    }
    // Appends leave the tokens pending; completing the meta counts exactly the messages.
    assert_eq!(w.meta().tokens_pending_from, Some(0));
    assert_eq!(w.meta().token_count, 0);
    let meta = w.complete_meta().unwrap().clone();
    assert_eq!(meta.message_count, 4);
    assert_eq!(meta.title.as_deref(), Some("list the files please"));
    assert_eq!(meta.tokens_pending_from, None);
    let counter = mem_core::TokenCounter::default();
    let exact: usize = msgs.iter().map(|m| counter.count_message(m)).sum();
    assert!(exact > 10);
    assert_eq!(meta.token_count, exact);
    let r = store.resume(w.id()).unwrap();
    assert_eq!(r.messages, msgs);
    assert!(r.issues.is_empty() && r.diagnostics.is_empty());
    assert!(!r.from_boundary);
    assert_eq!(r.meta, meta);
    let on_disk: serde_json::Value =
        serde_json::from_slice(&fs::read(store.meta_path(w.id())).unwrap()).unwrap();
    assert_eq!(on_disk["message_count"], 4);
    let (records, _) = store.read_records(w.id()).unwrap();
    let kinds: Vec<RecordType> = records.iter().map(|r| r.record_type).collect();
    assert_eq!(
        kinds,
        [
            RecordType::User,
            RecordType::Assistant,
            RecordType::ToolResult,
            RecordType::Assistant
        ]
    );
}

#[test]
fn torn_last_line_keeps_every_record_and_next_append_starts_fresh() {
    let (_d, store) = store();
    let mut w = store.open_or_create("s1").unwrap();
    w.append(&Message::user("one")).unwrap();
    w.append(&Message::assistant("two")).unwrap();
    // Power loss mid-write: half a record, no newline.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(store.jsonl_path("s1"))
        .unwrap();
    f.write_all(br#"{"type":"user","message":{"role":"user","content":"thr"#)
        .unwrap();
    drop(f);
    let r = store.resume("s1").unwrap();
    assert_eq!(texts(&r.messages), ["user:one", "assistant:two"]);
    assert_eq!(r.diagnostics.len(), 1);
    assert_eq!(r.diagnostics[0].line, 3);
    assert!(
        r.diagnostics[0].message.contains("incomplete last line"),
        "{}",
        r.diagnostics[0]
    );
    // A new writer (after the crash) appends on a fresh line.
    let mut w2 = store.open("s1").unwrap();
    w2.append(&Message::user("four")).unwrap();
    let text = fs::read_to_string(store.jsonl_path("s1")).unwrap();
    assert_eq!(text.lines().count(), 4);
    assert!(
        text.lines()
            .nth(3)
            .unwrap()
            .starts_with(r#"{"type":"user""#)
    );
    let r = store.resume("s1").unwrap();
    assert_eq!(
        texts(&r.messages),
        ["user:one", "assistant:two", "user:four"]
    );
    assert_eq!(r.meta.message_count, 3);
    assert!(
        r.diagnostics[0].message.starts_with("malformed JSON"),
        "{}",
        r.diagnostics[0]
    );
}

#[test]
fn damaged_files_are_read_with_file_and_line() {
    let (_d, store) = store();
    fs::create_dir_all(store.dir()).unwrap();
    let rec = |t: &str| format!(r#"{{"type":"user","message":{{"role":"user","content":"{t}"}}}}"#);
    let big = "x".repeat(15 << 20);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"\xEF\xBB\xBF");
    bytes.extend_from_slice(format!("{}\n\n", rec("a")).as_bytes());
    bytes.extend_from_slice(format!("{}{}\n", rec("b"), rec("c")).as_bytes());
    bytes.extend_from_slice(
        b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"d\xFF\"}}\n",
    );
    bytes.extend_from_slice(format!("{}\n", rec(&big)).as_bytes());
    bytes.extend_from_slice(b"{\"type\":\"bogus\"}\n");
    bytes.extend_from_slice(format!("{}\n", rec("e")).as_bytes());
    fs::write(store.jsonl_path("dmg"), &bytes).unwrap();
    let r = store.resume("dmg").unwrap();
    let got: Vec<String> = r
        .messages
        .iter()
        .map(|m| m.text_content().chars().take(3).collect())
        .collect();
    assert_eq!(got, ["a", "b", "c", "d\u{FFFD}", "xxx", "e"]);
    let lines: Vec<(usize, &str)> = r
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0].0, 1);
    assert!(lines[0].1.contains("byte-order mark"));
    assert_eq!(lines[1].0, 2);
    assert!(lines[1].1.contains("blank line"));
    assert_eq!(lines[2].0, 3);
    assert!(lines[2].1.contains("glued"));
    assert_eq!(lines[3].0, 4);
    assert!(lines[3].1.contains("invalid UTF-8"));
    assert_eq!(lines[4].0, 6);
    assert!(lines[4].1.contains("not a session record"));
    assert!(
        r.diagnostics
            .iter()
            .all(|d| d.path == store.jsonl_path("dmg"))
    );
    assert_eq!(r.meta.message_count, 6);
}

#[test]
fn compaction_appends_and_never_rewrites_the_prefix() {
    let (_d, store) = store();
    let mut w = store.open_or_create("c").unwrap();
    let mut sizes = Vec::new();
    for round in 0..5 {
        for i in 0..20 {
            w.append(&Message::user(format!("round {round} message {i}")))
                .unwrap();
            w.append(&call(&format!("r{round}i{i}"))).unwrap();
            w.append(&result(&format!("r{round}i{i}"))).unwrap();
        }
        let before = fs::read(store.jsonl_path("c")).unwrap();
        let kept = vec![
            Message::user(format!("round {round} message 19")),
            call(&format!("r{round}i19")),
            result(&format!("r{round}i19")),
        ];
        w.append_compact_boundary(&format!("summary of rounds up to {round}"), kept)
            .unwrap();
        let after = fs::read(store.jsonl_path("c")).unwrap();
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "bytes before the boundary changed"
        );
        sizes.push(after.len());
    }
    // Linear growth: each round adds about the same number of bytes.
    let deltas: Vec<usize> = sizes.windows(2).map(|w| w[1] - w[0]).collect();
    let (min, max) = (deltas.iter().min().unwrap(), deltas.iter().max().unwrap());
    assert!(*max < min + min / 10, "growth not linear: {deltas:?}");
    w.append(&Message::assistant("after")).unwrap();
    let r = store.resume("c").unwrap();
    assert!(r.from_boundary);
    assert_eq!(r.messages.len(), 5);
    assert_eq!(r.messages[0].text_content(), "summary of rounds up to 4");
    assert_eq!(r.messages[4].text_content(), "after");
    assert!(
        r.replay_bytes < 2_000,
        "resume read {} bytes",
        r.replay_bytes
    );
    assert_eq!(r.meta.compactions, 5);
    assert_eq!(r.meta.message_count, 301);
}

#[test]
fn a_torn_boundary_falls_back_to_the_previous_one() {
    let (_d, store) = store();
    let mut w = store.open_or_create("tb").unwrap();
    w.append(&Message::user("a")).unwrap();
    w.append_compact_boundary("first", vec![]).unwrap();
    w.append(&Message::user("b")).unwrap();
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(store.jsonl_path("tb"))
        .unwrap();
    f.write_all(br#"{"type":"compact_boundary","summary":"sec"#)
        .unwrap();
    drop(f);
    let r = store.resume("tb").unwrap();
    assert_eq!(texts(&r.messages), ["user:first", "user:b"]);
    assert_eq!(r.diagnostics.len(), 1);
    assert_eq!(
        r.diagnostics[0].line, 4,
        "absolute line number: {}",
        r.diagnostics[0]
    );
}

#[test]
fn dangling_tool_use_is_cut_from_replay_not_from_disk() {
    let (_d, store) = store();
    let mut w = store.open_or_create("dg").unwrap();
    w.append(&Message::user("q")).unwrap();
    w.append(&call("t1")).unwrap();
    let r = store.resume("dg").unwrap();
    assert_eq!(texts(&r.messages), ["user:q"]);
    assert_eq!(
        r.issues,
        vec![ChainIssue::DanglingTail { from: 1, count: 1 }]
    );
    assert_eq!(store.read_records("dg").unwrap().0.len(), 2);
}

#[test]
fn failed_write_returns_an_error_and_appends_work_again() {
    let (d, store) = store();
    // The sessions directory cannot be created: a file is in the way (works even as root).
    fs::create_dir_all(d.path().join(".mewcode")).unwrap();
    fs::write(store.dir(), b"in the way").unwrap();
    let err = store.create().unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(err.to_string().contains("sessions"), "{err}");
    fs::remove_file(store.dir()).unwrap();
    let mut w = store.open_or_create("ok").unwrap();
    w.append(&Message::user("works again")).unwrap();
    // The meta is written lazily: write it now so the step below replaces a real file.
    w.flush_meta().unwrap();
    // The meta cannot be written (its path is a directory): the append still lands, the meta
    // write fails on its own, and the meta is rebuilt from the .jsonl later.
    fs::remove_file(store.meta_path("ok")).unwrap();
    fs::create_dir(store.meta_path("ok")).unwrap();
    w.append(&Message::assistant("meta blocked")).unwrap();
    assert!(w.flush_meta().is_err(), "the meta's path is a directory");
    fs::remove_dir(store.meta_path("ok")).unwrap();
    let r = store.resume("ok").unwrap();
    assert_eq!(
        texts(&r.messages),
        ["user:works again", "assistant:meta blocked"]
    );
    assert_eq!(r.meta.message_count, 2);
}

#[test]
fn a_held_lock_makes_the_writer_wait_then_fail_clearly() {
    let (_d, store) = store();
    let store = store.with_options(StoreOptions {
        lock_timeout: Duration::from_millis(150),
        ..StoreOptions::default()
    });
    let mut w = store.open_or_create("lk").unwrap();
    let other = fs::File::open(store.jsonl_path("lk")).unwrap();
    other.lock().unwrap();
    let err = w.append(&Message::user("blocked")).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    assert!(
        err.to_string().contains("locked by another process"),
        "{err}"
    );
    other.unlock().unwrap();
    w.append(&Message::user("free")).unwrap();
    assert_eq!(texts(&store.resume("lk").unwrap().messages), ["user:free"]);
}

#[test]
fn ids_are_validated_and_prefixes_resolve() {
    let (_d, store) = store();
    for bad in ["", "../x", ".hidden", "a/b", "a b"] {
        assert!(
            matches!(store.open_or_create(bad), Err(Error::InvalidId(_))),
            "{bad}"
        );
    }
    store.open_or_create("abc-1").unwrap();
    store.open_or_create("abd-2").unwrap();
    assert_eq!(store.resolve_id("abc").unwrap(), "abc-1");
    assert!(matches!(
        store.resolve_id("ab"),
        Err(Error::Ambiguous { .. })
    ));
    assert!(matches!(
        store.resolve_id("zz"),
        Err(Error::NotFound { .. })
    ));
    store.delete("abc-1").unwrap();
    assert_eq!(store.ids().unwrap(), ["abd-2"]);
}

#[test]
fn replacing_a_session_makes_an_open_writer_reopen() {
    let (_d, store) = store();
    let mut w = store.open_or_create("rp").unwrap();
    w.append(&Message::user("old")).unwrap();
    let seed = mem_session::SessionMeta::new("rp", "2026-01-01T00:00:00Z".into());
    let recs = vec![mem_session::SessionRecord::message(
        Message::user("new"),
        None,
    )];
    let lock = store.lock_imports().unwrap();
    let (outcome, meta) = store.write_session(&lock, seed, &recs, |_| Ok(())).unwrap();
    assert_eq!(outcome, mem_session::WriteOutcome::Replaced);
    assert_eq!(meta.message_count, 1);
    w.append(&Message::assistant("after")).unwrap();
    assert_eq!(
        texts(&store.resume("rp").unwrap().messages),
        ["user:new", "assistant:after"]
    );
}

#[test]
fn a_meta_is_rebuilt_when_the_file_was_edited_before_its_end() {
    let (_d, store) = store();
    let mut w = store.open_or_create("ed").unwrap();
    for i in 0..6 {
        w.append(&Message::user(format!("message {i}"))).unwrap();
    }
    assert_eq!(store.meta("ed").unwrap().message_count, 6);
    // Paste three records near the top: the file grows, and its old end is no longer where
    // the meta says it was.
    let text = fs::read_to_string(store.jsonl_path("ed")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let first = lines[0].to_owned();
    for _ in 0..3 {
        lines.insert(1, &first);
    }
    fs::write(store.jsonl_path("ed"), lines.join("\n") + "\n").unwrap();
    assert_eq!(store.meta("ed").unwrap().message_count, 9);
}

#[test]
fn a_writer_does_not_bring_a_deleted_session_back() {
    let (_d, store) = store();
    let mut w = store.open_or_create("gone").unwrap();
    w.append(&Message::user("one")).unwrap();
    store.delete("gone").unwrap();
    let err = w.append(&Message::user("two")).unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(!store.jsonl_path("gone").exists());
}

/// `messages_after` gives exactly what a full read gives after the first `skip` messages, for
/// every `skip`, across a boundary, a damaged line, a torn last line and a line longer than
/// the backward scan's chunk.
#[test]
fn messages_after_matches_a_full_read_for_every_skip() {
    let (_dir, store) = store();
    let mut w = store.create().unwrap();
    let id = w.id().to_owned();
    w.append(&Message::user("first question")).unwrap();
    w.append(&call("t1")).unwrap();
    w.append(&result("t1")).unwrap();
    w.append(&Message::assistant("an answer")).unwrap();
    w.append_compact_boundary("summary so far", vec![Message::user("kept")])
        .unwrap();
    // A line longer than the scan chunk (1 MiB).
    w.append(&Message::user("x".repeat(3 << 20))).unwrap();
    w.append(&Message::assistant("after the long one")).unwrap();
    drop(w);
    // A damaged line in the middle, then more messages, then a torn last line.
    let path = store.jsonl_path(&id);
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{not json\n").unwrap();
    drop(f);
    let mut w = store.open(&id).unwrap();
    w.append(&Message::user("second question")).unwrap();
    w.append(&Message::assistant("second answer")).unwrap();
    drop(w);
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"type":"user","message":{"role":"us"#)
        .unwrap();
    drop(f);

    let (records, _) = store.read_records(&id).unwrap();
    let all: Vec<Message> = records
        .into_iter()
        .filter(|r| {
            matches!(
                r.record_type,
                RecordType::User | RecordType::Assistant | RecordType::ToolResult
            )
        })
        .filter_map(|r| r.message)
        .collect();
    assert_eq!(all.len(), 8);
    for skip in 0..=all.len() + 2 {
        let (total, after) = store.messages_after(&id, skip).unwrap();
        assert_eq!(total, all.len(), "skip {skip}");
        assert_eq!(
            texts(&after),
            texts(&all[skip.min(all.len())..]),
            "skip {skip}"
        );
    }
}

/// Lines the forward reader reads differently from a plain parse (two records glued on one
/// line, invalid UTF-8 inside a message) are counted the same way by `messages_after`'s
/// backward scan; and a meta whose count was edited (its fingerprint still matching) falls
/// back to a read of the whole file.
#[test]
fn messages_after_counts_like_the_reader_and_falls_back_on_a_lying_meta() {
    let (_dir, store) = store();
    let mut w = store.create().unwrap();
    let id = w.id().to_owned();
    w.append(&Message::user("one")).unwrap();
    drop(w);
    let path = store.jsonl_path(&id);
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(
        b"{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":\"two\"}}\
          {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"three\"}}\n",
    )
    .unwrap();
    f.write_all(
        b"{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":\"f\xffour\"}}\n",
    )
    .unwrap();
    drop(f);
    let mut w = store.open(&id).unwrap();
    w.append(&Message::user("five")).unwrap();
    drop(w);

    let (records, _) = store.read_records(&id).unwrap();
    let all = mem_session::message_records(records);
    assert_eq!(
        texts(&all),
        [
            "user:one",
            "assistant:two",
            "user:three",
            "assistant:f\u{fffd}our",
            "user:five"
        ]
    );
    for skip in 0..=all.len() + 1 {
        let (total, after) = store.messages_after(&id, skip).unwrap();
        assert_eq!(total, all.len(), "skip {skip}");
        assert_eq!(
            texts(&after),
            texts(&all[skip.min(all.len())..]),
            "skip {skip}"
        );
    }

    // A meta that counts two messages more than the file holds, fingerprint intact: the
    // backward scan runs out of messages, and the whole file decides.
    let meta_path = store.meta_path(&id);
    let mut meta: serde_json::Value =
        serde_json::from_slice(&fs::read(&meta_path).unwrap()).unwrap();
    meta["message_count"] = json!(all.len() + 2);
    fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
    assert_eq!(store.meta(&id).unwrap().message_count, all.len() + 2);
    let (total, after) = store.messages_after(&id, 1).unwrap();
    assert_eq!(total, all.len());
    assert_eq!(texts(&after), texts(&all[1..]));
}

#[test]
fn the_import_lock_removes_temporary_files_of_dead_processes_only() {
    let (_d, store) = store();
    let mut w = store.open_or_create("s1").unwrap();
    w.append(&Message::user("hello")).unwrap();
    drop(w);
    let dir = store.dir().to_owned();
    // A process id above the kernel's largest (pid_max ≤ 2^22) is never running.
    let dead = 2_147_483_000u32;
    let me = std::process::id();
    let stale = [
        format!(".s1.jsonl.{dead}.0.tmp"),
        format!(".s1.meta.{dead}.17.tmp"),
        format!(".other.id.jsonl.{dead}.3.tmp"),
    ];
    let kept = [
        // This process's own (an import in flight here).
        format!(".s1.jsonl.{me}.0.tmp"),
        // A running process's (pid 1 always runs).
        ".s1.meta.1.5.tmp".to_owned(),
        // Not a name the store makes.
        format!(".notes.{dead}.0.tmp"),
        format!(".s1.jsonl.{dead}.x.tmp"),
        format!("s1.jsonl.{dead}.0.tmp"),
        ".import.lock".to_owned(),
    ];
    for name in stale.iter().chain(&kept) {
        fs::write(dir.join(name), b"partial").unwrap();
    }
    let lock = store.lock_imports().unwrap();
    assert_eq!(store.remove_stale_tmp(&lock).unwrap(), stale.len());
    drop(lock);
    for name in &stale {
        assert!(!dir.join(name).exists(), "{name} was left");
    }
    for name in &kept {
        assert!(dir.join(name).exists(), "{name} was removed");
    }
    // The session itself is untouched.
    assert_eq!(store.meta("s1").unwrap().message_count, 1);
}

/// A process id that is not running here may be running in another pid namespace (a container
/// sharing the sessions folder): the meta a live writer there is replacing
/// (`.{id}.meta.{pid}.{n}.tmp`, renamed a moment later) must not be removed under it. A staged
/// meta of a killed import comes with its staged `.jsonl` (same id and process) and goes with
/// it; a lone meta temporary file goes only once it is old.
#[test]
fn the_import_lock_keeps_a_fresh_lone_meta_tmp_of_an_unseen_process() {
    let (_d, store) = store();
    let mut w = store.open_or_create("s1").unwrap();
    w.append(&Message::user("hello")).unwrap();
    drop(w);
    let dir = store.dir().to_owned();
    let unseen = 2_147_483_000u32;
    let fresh_lone = format!(".s1.meta.{unseen}.4.tmp");
    let old_lone = format!(".s1.meta.{}.4.tmp", unseen + 1);
    let staged = [
        format!(".s2.jsonl.{unseen}.7.tmp"),
        format!(".s2.meta.{unseen}.8.tmp"),
    ];
    for name in std::iter::once(&fresh_lone)
        .chain(std::iter::once(&old_lone))
        .chain(&staged)
    {
        fs::write(dir.join(name), b"{}").unwrap();
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
    fs::File::options()
        .write(true)
        .open(dir.join(&old_lone))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let lock = store.lock_imports().unwrap();
    assert_eq!(store.remove_stale_tmp(&lock).unwrap(), 3);
    drop(lock);
    assert!(
        dir.join(&fresh_lone).exists(),
        "a live writer's meta was removed"
    );
    assert!(!dir.join(&old_lone).exists(), "an old lone meta was left");
    for name in &staged {
        assert!(!dir.join(name).exists(), "{name} was left");
    }
}

/// A boundary line torn by a kill (the rest of the session appended after it on a fresh line)
/// is not a boundary: resume replays every message, and the deferred token count, completed by
/// a reader, counts every one of them too, not only those after the torn line.
#[test]
fn a_torn_boundary_line_does_not_reset_the_deferred_token_count() {
    let (_d, store) = store();
    let mut w = store.open_or_create("s1").unwrap();
    w.append(&Message::user("first question about the build"))
        .unwrap();
    w.append(&Message::assistant(
        "a first answer, rather long, about the build",
    ))
    .unwrap();
    w.flush_meta().unwrap();
    drop(w);
    // A compaction boundary cut short by a kill.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(store.jsonl_path("s1"))
        .unwrap();
    f.write_all(
        br#"{"type":"compact_boundary","timestamp":"2026-01-01T00:00:00Z","summary":"the bu"#,
    )
    .unwrap();
    drop(f);
    let mut w = store.open("s1").unwrap();
    w.append(&Message::user("second question")).unwrap();
    w.flush_meta().unwrap();
    drop(w);

    let resumed = store.resume("s1").unwrap();
    assert_eq!(resumed.messages.len(), 3);
    let counter = mem_core::TokenCounter::default();
    let exact: usize = resumed
        .messages
        .iter()
        .map(|m| counter.count_message(m))
        .sum();
    assert_eq!(resumed.meta.token_count, exact);
    assert_eq!(store.meta("s1").unwrap().token_count, exact);
    // A rebuild from the records says the same.
    fs::remove_file(store.meta_path("s1")).unwrap();
    let rebuilt = store.meta("s1").unwrap();
    assert_eq!(rebuilt.token_count, exact, "{rebuilt:?}");
}

/// Two writers appending in turn (messages, a boundary), each completing its own count or
/// flushing its lazy meta, and readers completing the count in between: every count read is the
/// count of what resume replays, and the same as a rebuild from the records.
#[test]
fn deferred_counts_stay_exact_across_two_writers_and_completing_readers() {
    let (_d, store) = store();
    let counter = mem_core::TokenCounter::default();
    let exact = |store: &SessionStore| -> usize {
        store
            .resume("s1")
            .unwrap()
            .messages
            .iter()
            .map(|m| counter.count_message(m))
            .sum()
    };
    let mut w1 = store.open_or_create("s1").unwrap();
    w1.append(&Message::user("the first question, about the parser"))
        .unwrap();
    w1.append(&Message::assistant("an answer about the parser"))
        .unwrap();
    w1.flush_meta().unwrap();
    let mut w2 = store.open("s1").unwrap();
    w2.append(&Message::user("a second question from another writer"))
        .unwrap();
    assert_eq!(store.meta("s1").unwrap().token_count, exact(&store));
    w1.append(&Message::assistant("w1 answers the second question"))
        .unwrap();
    let completed = w1.complete_meta().unwrap().token_count;
    assert_eq!(completed, exact(&store));
    w2.append_compact_boundary(
        "they discussed the parser",
        vec![Message::user("kept: the second question")],
    )
    .unwrap();
    assert_eq!(store.meta("s1").unwrap().token_count, exact(&store));
    // w1's meta is behind (w2 appended): its flush must not write it.
    w1.flush_meta().unwrap();
    assert_eq!(store.meta("s1").unwrap().token_count, exact(&store));
    w1.append(&Message::user("after the boundary")).unwrap();
    w1.flush_meta().unwrap();
    w2.append(&Message::assistant("w2 again")).unwrap();
    w2.flush_meta().unwrap();
    let want = exact(&store);
    let read = store.meta("s1").unwrap();
    assert_eq!(read.token_count, want);
    assert_eq!(read.tokens_pending_from, None);
    assert_eq!(w2.complete_meta().unwrap().token_count, want);
    drop((w1, w2));
    fs::remove_file(store.meta_path("s1")).unwrap();
    assert_eq!(store.meta("s1").unwrap().token_count, want);
}
