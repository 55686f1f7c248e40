#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Checkpoints end to end on real files: checkpoint → changes → restore gives back the files
//! byte for byte, the same rows, the same replay, with every record still on disk; a restore of
//! the restore returns to the later state; conflicts, damaged and newer checkpoints, names.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_auto::{AutoMemory, AutoOptions, HeadingStyle, MemoryCategory, Scope};
use mem_core::Message;
use mem_recall::{MemoryDirs, NewNote};
use mem_session::SessionStore;
use mem_tiers::checkpoint::{CheckpointConfig, Checkpoints, CreateOptions, Error};
use mem_tiers::{MemoryConfig, MemoryManager, MemoryStore, SqliteStore};

struct Env {
    _root: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn env() -> Env {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let home = root.path().join("home");
    fs::create_dir_all(&project).unwrap();
    fs::create_dir_all(&home).unwrap();
    Env {
        project: project.canonicalize().unwrap(),
        home: home.canonicalize().unwrap(),
        _root: root,
    }
}

impl Env {
    fn mconfig(&self) -> MemoryConfig {
        MemoryConfig::for_home(&self.home)
    }
    fn manager(&self) -> MemoryManager<SqliteStore> {
        MemoryManager::from_project(&self.project, self.mconfig()).unwrap()
    }
    fn checkpoints(&self) -> Checkpoints {
        Checkpoints::new(CheckpointConfig {
            project_root: self.project.clone(),
            home: self.home.clone(),
            auto: AutoOptions::default(),
            database: Some(self.mconfig().database_path()),
            busy_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_millis(300),
        })
        .unwrap()
    }
    fn auto(&self) -> AutoMemory {
        AutoMemory::new(&self.project, &self.home, AutoOptions::default())
    }
    fn add_entry(&self, scope: Scope, cat: MemoryCategory, text: &str) {
        self.auto()
            .update(scope, |f| {
                f.doc.add(cat, text, HeadingStyle::Seed);
                Ok(())
            })
            .unwrap();
    }
    fn note(&self, name: &str, body: &str) {
        let dirs = MemoryDirs::standard(&self.project, &self.home, &[]);
        mem_recall::write_note(
            &dirs,
            mem_recall::Scope::Project,
            &NewNote {
                name: name.into(),
                description: format!("about {name}"),
                kind: "project".into(),
                body: body.into(),
            },
            false,
        )
        .unwrap();
    }
    fn sessions(&self) -> SessionStore {
        SessionStore::for_project(&self.project)
    }
    /// Every file under the memory folders (not sessions, not checkpoints), with content.
    fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (label, dir) in [
            ("p", self.project.join(".mewcode")),
            ("u", self.home.join(".mewcode")),
        ] {
            for f in ["memories.md"] {
                if let Ok(b) = fs::read(dir.join(f)) {
                    out.push((format!("{label}/{f}"), b));
                }
            }
            if let Ok(rd) = fs::read_dir(dir.join("memory")) {
                for e in rd.flatten() {
                    out.push((
                        format!("{label}/memory/{}", e.file_name().to_string_lossy()),
                        fs::read(e.path()).unwrap(),
                    ));
                }
            }
        }
        out.sort();
        out
    }
    fn rows(&self) -> Vec<(i64, String, String, String, Option<String>)> {
        rusqlite_rows(&self.mconfig().database_path())
    }
}

fn rusqlite_rows(db: &Path) -> Vec<(i64, String, String, String, Option<String>)> {
    let store = SqliteStore::open(db, Duration::from_secs(5)).unwrap();
    let conn = store.connection();
    let mut stmt = conn
        .prepare("SELECT id, title, content, tags, project_key FROM learnings ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn restore_gives_back_files_rows_and_replay_and_keeps_every_record() {
    let e = env();
    let mm = e.manager();
    mm.add_learning(
        "run tests with nextest",
        "cargo nextest run",
        "testing",
        &["rust".into()],
        None,
        false,
    )
    .unwrap();
    mm.add_learning("user wide", "always", "workflow", &[], None, true)
        .unwrap();
    e.add_entry(
        Scope::Project,
        MemoryCategory::Project,
        "The API lives in crates/api",
    );
    e.add_entry(
        Scope::User,
        MemoryCategory::Preference,
        "Prefers short answers",
    );
    e.note("testing", "Use nextest.");
    let store = e.sessions();
    let mut w = store.create().unwrap();
    let sid = w.id().to_owned();
    w.append(&Message::user("hello")).unwrap();
    w.append(&Message::assistant("hi")).unwrap();

    let cps = e.checkpoints();
    let m = cps
        .create(&CreateOptions {
            name: Some("before".into()),
            user: true,
            ..CreateOptions::default()
        })
        .unwrap();
    assert_eq!(m.sessions.len(), 1);
    assert_eq!(m.store.as_ref().unwrap().learnings, 2);
    let files_then = e.files();
    let rows_then = e.rows();
    let replay_then = store.resume(&sid).unwrap().messages;

    // Changes: more learnings, an entry, a note, session records and a compaction, a new
    // session, a learning deleted.
    mm.add_learning("wrong lesson", "bad", "testing", &[], None, false)
        .unwrap();
    mm.store().delete_learning(1).unwrap();
    e.add_entry(Scope::Project, MemoryCategory::Project, "A confused memory");
    e.add_entry(
        Scope::User,
        MemoryCategory::Correction,
        "Not a correction at all",
    );
    e.note("confused", "Nonsense.");
    w.append(&Message::user("confusing turn")).unwrap();
    w.append_compact_boundary("summary", vec![Message::user("confusing turn")])
        .unwrap();
    let mut w2 = store.create().unwrap();
    let sid2 = w2.id().to_owned();
    w2.append(&Message::user("another session")).unwrap();
    let files_later = e.files();
    let rows_later = e.rows();
    let replay_later = store.resume(&sid).unwrap().messages;
    let bytes_later = fs::read(store.jsonl_path(&sid)).unwrap();

    let dry = cps.restore("before", true, false).unwrap();
    assert!(dry.dry_run && dry.conflicts.is_empty(), "{dry:?}");
    assert!(dry.changes.iter().any(|c| c.action == "rollback"));
    assert_eq!(e.files(), files_later, "a dry run changes nothing");

    let report = cps.restore("before", false, false).unwrap();
    let pre = report.pre_restore.clone().unwrap();
    assert_eq!(e.files(), files_then, "memories.md and notes byte for byte");
    assert_eq!(e.rows(), rows_then, "the same learning rows, same ids");
    assert_eq!(store.resume(&sid).unwrap().messages, replay_then);
    assert!(store.resume(&sid2).unwrap().messages.is_empty());
    // Every record written in between is still on disk.
    let now = fs::read(store.jsonl_path(&sid)).unwrap();
    assert!(now.starts_with(&bytes_later));
    let recs2 = store.read_records(&sid2).unwrap().0;
    assert_eq!(recs2.len(), 2, "the message and the rollback");
    assert_eq!(
        recs2[0].message.as_ref().unwrap().text_content(),
        "another session"
    );

    // Restore of the restore: back to the later state.
    cps.restore(&pre, false, false).unwrap();
    assert_eq!(e.files(), files_later);
    assert_eq!(e.rows(), rows_later);
    assert_eq!(store.resume(&sid).unwrap().messages, replay_later);
    assert_eq!(
        texts(&store.resume(&sid2).unwrap().messages),
        ["another session"]
    );
    let (list, warnings) = cps.list().unwrap();
    assert!(warnings.is_empty());
    assert_eq!(list.iter().filter(|s| s.auto).count(), 2);
}

fn texts(m: &[Message]) -> Vec<String> {
    m.iter().map(Message::text_content).collect()
}

#[test]
fn hand_edits_are_conflicts_unless_forced_and_the_pre_restore_keeps_them() {
    let e = env();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact one");
    e.note("testing", "Use nextest.");
    let cps = e.checkpoints();
    cps.create(&CreateOptions {
        name: Some("c".into()),
        ..CreateOptions::default()
    })
    .unwrap();
    let mem = e.project.join(".mewcode/memories.md");
    let mut text = fs::read_to_string(&mem).unwrap();
    text.push_str("- Typed by a person\n");
    fs::write(&mem, &text).unwrap();
    let note = e.project.join(".mewcode/memory/testing.md");
    fs::write(&note, "edited by hand\n").unwrap();
    let err = cps.restore("c", false, false).unwrap_err();
    let Error::Conflicts { conflicts, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(conflicts.len(), 2, "{err}");
    assert!(err.to_string().contains("project memories.md"), "{err}");
    assert_eq!(fs::read_to_string(&mem).unwrap(), text, "nothing restored");
    let r = cps.restore("c", false, true).unwrap();
    assert_eq!(r.conflicts.len(), 2);
    assert!(
        !fs::read_to_string(&mem)
            .unwrap()
            .contains("Typed by a person")
    );
    // The hand edits are in the pre-restore checkpoint.
    let pre = r.pre_restore.unwrap();
    let kept = fs::read_to_string(cps.dir().join(&pre).join("files/project/memories.md")).unwrap();
    assert!(kept.contains("Typed by a person"));
    // mewmem's own writes since a restore are not conflicts.
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact two");
    assert!(cps.restore("c", true, false).unwrap().conflicts.is_empty());
}

#[test]
fn bad_names_missing_damaged_and_newer_checkpoints_are_refused() {
    let e = env();
    e.manager();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact one");
    let cps = e.checkpoints();
    for bad in [
        "../x",
        "a/b",
        "",
        ".hidden",
        "-x",
        "a\u{7}b",
        "a\\b",
        &"x".repeat(65),
    ] {
        let err = cps
            .create(&CreateOptions {
                name: Some(bad.into()),
                ..CreateOptions::default()
            })
            .unwrap_err();
        assert!(matches!(err, Error::BadName { .. }), "{bad:?}: {err}");
        assert!(matches!(
            cps.restore(bad, false, false).unwrap_err(),
            Error::BadName { .. }
        ));
    }
    assert!(matches!(
        cps.restore("nope", false, false).unwrap_err(),
        Error::NotFound { .. }
    ));
    let opts = CreateOptions {
        name: Some("c".into()),
        ..CreateOptions::default()
    };
    cps.create(&opts).unwrap();
    assert!(matches!(
        cps.create(&opts).unwrap_err(),
        Error::Exists { .. }
    ));
    let dir = cps.dir().join("c");
    let before = e.files();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact two");
    let after = e.files();
    assert_ne!(before, after);

    // A damaged copy.
    let copy = dir.join("files/project/memories.md");
    let good = fs::read(&copy).unwrap();
    fs::write(&copy, "- tampered\n").unwrap();
    let err = cps.restore("c", false, false).unwrap_err();
    assert!(matches!(err, Error::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("memories.md"), "{err}");
    fs::write(&copy, &good).unwrap();
    // A damaged store copy.
    let store = dir.join("store.sqlite");
    let good_store = fs::read(&store).unwrap();
    fs::write(&store, b"junk").unwrap();
    assert!(matches!(
        cps.restore("c", false, false).unwrap_err(),
        Error::Damaged { .. }
    ));
    fs::write(&store, &good_store).unwrap();
    // A missing manifest, then a newer format.
    let manifest = dir.join("manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::remove_file(&manifest).unwrap();
    assert!(matches!(
        cps.restore("c", false, false).unwrap_err(),
        Error::Damaged { .. }
    ));
    fs::write(&manifest, text.replace("\"format\": 1", "\"format\": 7")).unwrap();
    let err = cps.restore("c", false, false).unwrap_err();
    assert!(matches!(err, Error::TooNew { found: 7, .. }), "{err}");
    assert_eq!(e.files(), after, "nothing restored by any of these");
    // A list names the damaged one and goes on.
    let (list, warnings) = cps.list().unwrap();
    assert!(list.is_empty() && warnings.len() == 1, "{warnings:?}");
    fs::write(&manifest, &text).unwrap();
    cps.restore("c", false, false).unwrap();
    assert_eq!(e.files(), before);
    cps.remove("c").unwrap();
    assert!(matches!(cps.show("c").unwrap_err(), Error::NotFound { .. }));
}

#[test]
fn a_store_copy_of_a_newer_schema_is_refused() {
    let e = env();
    e.manager();
    let cps = e.checkpoints();
    cps.create(&CreateOptions {
        name: Some("c".into()),
        ..CreateOptions::default()
    })
    .unwrap();
    let dir = cps.dir().join("c");
    let store = dir.join("store.sqlite");
    {
        let c = rusqlite::Connection::open(&store).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    // Re-sign the copy in the manifest, as a newer mewmem would have written it.
    let bytes = fs::read(&store).unwrap();
    let manifest = dir.join("manifest.json");
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    v["store"]["sha256"] = mem_core::sha256_hex(&bytes).into();
    fs::write(&manifest, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let err = cps.restore("c", false, false).unwrap_err();
    assert!(err.to_string().contains("schema version 99"), "{err}");
}

#[test]
fn a_concurrent_checkpoint_operation_waits_then_fails_cleanly() {
    let e = env();
    let cps = e.checkpoints();
    fs::create_dir_all(cps.dir()).unwrap();
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(cps.dir().join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    let err = cps.create(&CreateOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    assert!(cps.list().unwrap().0.is_empty(), "nothing half-made");
    drop(lock);
    cps.create(&CreateOptions::default()).unwrap();
}

#[test]
fn automatic_checkpoints_are_pruned_to_the_last_n() {
    let e = env();
    let cps = e.checkpoints();
    cps.create(&CreateOptions {
        name: Some("manual".into()),
        ..CreateOptions::default()
    })
    .unwrap();
    let mut pruned_all = Vec::new();
    for _ in 0..4 {
        let (_, pruned) = cps.create_auto("auto: test", false, 2).unwrap();
        pruned_all.extend(pruned);
    }
    let (list, _) = cps.list().unwrap();
    assert_eq!(list.iter().filter(|s| s.auto).count(), 2);
    assert!(list.iter().any(|s| s.name == "manual"));
    assert_eq!(pruned_all.len(), 2);
}

#[test]
fn a_restore_waits_for_a_memories_writer_and_an_extraction_waits_for_the_restore() {
    let e = env();
    e.manager();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact one");
    let cps = e.checkpoints();
    cps.create(&CreateOptions {
        name: Some("c".into()),
        ..CreateOptions::default()
    })
    .unwrap();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact two");
    let before = e.files();
    // Another process is writing memories.md: the restore waits for it, then restores.
    let held = e.auto().lock_file(Scope::Project).unwrap();
    let t = std::thread::spawn({
        let cps = e.checkpoints();
        move || cps.restore("c", false, false)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!t.is_finished(), "the restore waits for the lock");
    assert_eq!(e.files(), before, "nothing changed while waiting");
    drop(held);
    t.join().unwrap().unwrap();
    let text = fs::read_to_string(e.project.join(".mewcode/memories.md")).unwrap();
    assert!(text.contains("Fact one") && !text.contains("Fact two"));
    // A write after the restore is whole and lands on the restored file.
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact three");
    let text = fs::read_to_string(e.project.join(".mewcode/memories.md")).unwrap();
    assert!(text.contains("Fact one") && text.contains("Fact three"));
}

#[test]
fn user_preferences_changed_alone_are_restored_with_the_user_level() {
    let e = env();
    let mm = e.manager();
    mm.set_preference("language", Some("Rust")).unwrap();
    let cps = e.checkpoints();
    cps.create(&CreateOptions {
        name: Some("prefs".into()),
        user: true,
        ..CreateOptions::default()
    })
    .unwrap();
    // Only the preferences change: no learning, file or session.
    mm.set_preference("language", Some("Go")).unwrap();
    mm.set_preference("editor", Some("helix")).unwrap();

    let dry = cps.restore("prefs", true, false).unwrap();
    let d = dry.store.as_ref().unwrap();
    assert_eq!(d.preferences, ["editor", "language"], "{dry:?}");
    assert!(!dry.changes.is_empty(), "{dry:?}");

    let report = cps.restore("prefs", false, false).unwrap();
    assert!(report.pre_restore.is_some(), "{report:?}");
    let prefs = mm.preferences().unwrap();
    assert_eq!(prefs.get("language").map(String::as_str), Some("Rust"));
    assert!(!prefs.contains_key("editor"), "{prefs:?}");
}
