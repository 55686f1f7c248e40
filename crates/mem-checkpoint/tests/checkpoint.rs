#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Checkpoints end to end on real files: checkpoint → changes → restore gives back the files
//! byte for byte, the same rows, the same replay, with every record still on disk; a restore of
//! the restore returns to the later state; conflicts, damaged and newer checkpoints, names.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_auto::{AutoMemory, AutoOptions, HeadingStyle, MemoryCategory, Scope};
use mem_checkpoint::{CheckpointConfig, Checkpoints, CreateOptions, Error};
use mem_core::Message;
use mem_recall::{MemoryDirs, NewNote};
use mem_session::SessionStore;
use mem_sources::{FromProject, FromProjectWith};
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
            extra_note_dirs: vec![self.extra()],
            team_store: None,
        })
        .unwrap()
    }
    /// An extra note folder (`[recall] dirs`, scope `extra0`), e.g. a Claude Code memory folder.
    fn extra(&self) -> PathBuf {
        self.home.join("claude-memory")
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
                // Hidden files are bookkeeping (the notes folder's lock), not memories.
                for e in rd
                    .flatten()
                    .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                {
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

/// Creates checkpoint `name` with the default options.
fn create_named(cps: &Checkpoints, name: &str) {
    cps.create(&CreateOptions {
        name: Some(name.into()),
        ..CreateOptions::default()
    })
    .unwrap();
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
    create_named(&cps, "c");
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
    create_named(&cps, "c");
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
    create_named(&cps, "manual");
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
    create_named(&cps, "c");
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

fn extra_files(env: &Env) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(env.extra())
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".restore-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_failed_rename_puts_every_file_back_and_undoes_rows_and_sessions() {
    let env = env();
    env.add_entry(
        Scope::Project,
        MemoryCategory::Project,
        "The build uses cargo nextest.",
    );
    env.note("testing", "Run the tests with nextest.");
    env.note("style", "Four spaces.");
    let manager = env.manager();
    manager
        .add_learning("one", "first lesson", "tip", &[], None, false)
        .unwrap();
    drop(manager);
    let sessions = env.sessions();
    let mut w = sessions.create().unwrap();
    let sid = w.id().to_owned();
    w.append(&Message::user("hello")).unwrap();
    let cps = env.checkpoints();
    create_named(&cps, "base");
    // Changes since: an entry, a note changed, one removed, one added, a learning, a message.
    env.add_entry(
        Scope::Project,
        MemoryCategory::Project,
        "The project is written in Rust.",
    );
    fs::write(
        env.project.join(".mewcode/memory/testing.md"),
        "changed by mewmem --force",
    )
    .unwrap();
    fs::remove_file(env.project.join(".mewcode/memory/style.md")).unwrap();
    env.note("later", "Written after the checkpoint.");
    env.manager()
        .add_learning("two", "second lesson", "tip", &[], None, false)
        .unwrap();
    w.append(&Message::user("after")).unwrap();
    drop(w);
    let files_before = env.files();
    let rows_before = env.rows();
    let replay_before = sessions.resume(&sid).unwrap().messages;
    // The last rename fails (the memories.md and two notes are staged: 0, 1, 2).
    let failing = env.checkpoints().fail_rename_at(2);
    let err = failing.restore("base", false, true).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Failed { .. }), "{text}");
    assert!(text.contains("injected failure"), "{text}");
    assert!(text.contains("nothing was changed"), "{text}");
    assert_eq!(env.files(), files_before, "every file is back");
    assert_eq!(env.rows(), rows_before, "the rows are back");
    assert_eq!(
        sessions.resume(&sid).unwrap().messages,
        replay_before,
        "the replay is back"
    );
    assert!(leftovers(&env.project.join(".mewcode")).is_empty());
    assert!(leftovers(&env.project.join(".mewcode/memory")).is_empty());
    // The same restore without the failure goes through.
    env.checkpoints().restore("base", false, true).unwrap();
    assert_eq!(
        fs::read_to_string(env.project.join(".mewcode/memory/style.md"))
            .map(|t| t.contains("Four spaces"))
            .ok(),
        Some(true)
    );
    assert!(!env.project.join(".mewcode/memory/later.md").exists());
}

#[test]
fn a_restore_waits_for_the_notes_lock_and_fails_cleanly() {
    let env = env();
    env.note("testing", "Run the tests with nextest.");
    let cps = env.checkpoints();
    create_named(&cps, "base");
    env.note("later", "Written after the checkpoint.");
    let before = env.files();
    // A note writer holds the folder's lock (as `mem note add` does while it writes).
    let held = mem_recall::lock_notes(&env.project.join(".mewcode/memory"), Duration::from_secs(1))
        .unwrap();
    let err = cps.restore("base", false, false).unwrap_err();
    assert!(
        matches!(err, Error::Notes(mem_recall::Error::Locked { .. })),
        "{err}"
    );
    assert_eq!(env.files(), before, "nothing changed");
    drop(held);
    cps.restore("base", false, false).unwrap();
    assert!(!env.project.join(".mewcode/memory/later.md").exists());
    // And a note writer waits for a restore's lock the same way.
    let held = mem_recall::lock_notes(&env.project.join(".mewcode/memory"), Duration::from_secs(1))
        .unwrap();
    let start = std::time::Instant::now();
    let writer = std::thread::spawn({
        let project = env.project.clone();
        let home = env.home.clone();
        move || {
            let dirs = MemoryDirs::standard(&project, &home, &[]);
            mem_recall::write_note(
                &dirs,
                mem_recall::Scope::Project,
                &NewNote {
                    name: "waiting".into(),
                    description: "written once the lock is free".into(),
                    kind: "project".into(),
                    body: "body".into(),
                },
                false,
            )
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(!env.project.join(".mewcode/memory/waiting.md").exists());
    drop(held);
    writer.join().unwrap().unwrap();
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert!(env.project.join(".mewcode/memory/waiting.md").exists());
}

#[test]
fn extra_note_folders_are_checkpointed_and_restored() {
    let env = env();
    fs::create_dir_all(env.extra()).unwrap();
    fs::write(
        env.extra().join("feedback_tests.md"),
        "---\nname: tests\ndescription: how\ntype: feedback\n---\nUse nextest.\n",
    )
    .unwrap();
    fs::write(
        env.extra().join("project_db.md"),
        "---\nname: db\ndescription: db\ntype: project\n---\nPostgres 15.\n",
    )
    .unwrap();
    let cps = env.checkpoints();
    let m = cps
        .create(&CreateOptions {
            name: Some("base".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    assert_eq!(
        m.files.iter().filter(|f| f.scope == "extra0").count(),
        2,
        "{:?}",
        m.files
    );
    assert_eq!(
        m.note_dirs.get("extra0").map(String::as_str),
        Some(env.extra().display().to_string().as_str())
    );
    let before = extra_files(&env);
    fs::write(env.extra().join("feedback_tests.md"), "edited").unwrap();
    fs::remove_file(env.extra().join("project_db.md")).unwrap();
    fs::write(env.extra().join("new.md"), "new").unwrap();
    let dry = cps.restore("base", true, false).unwrap();
    let items: Vec<&str> = dry.changes.iter().map(|c| c.item.as_str()).collect();
    assert!(items.contains(&"N:extra0/feedback_tests.md"), "{items:?}");
    assert!(items.contains(&"N:extra0/project_db.md"), "{items:?}");
    assert!(items.contains(&"N:extra0/new.md"), "{items:?}");
    cps.restore("base", false, true).unwrap();
    assert_eq!(extra_files(&env), before);
    // Restoring the pre-restore checkpoint gives the later state back.
    let pre = cps
        .list()
        .unwrap()
        .0
        .into_iter()
        .find(|s| s.name.starts_with("pre-restore"))
        .unwrap();
    cps.restore(&pre.name, false, true).unwrap();
    assert_eq!(
        fs::read_to_string(env.extra().join("new.md")).unwrap(),
        "new"
    );
    assert!(!env.extra().join("project_db.md").exists());
}

/// PostgreSQL: `MEM_TEST_PG_URL`, or the test is skipped (a failure with `MEM_REQUIRE_PG=1`).
fn pg_url() -> Option<String> {
    mem_core::testing::pg_url_or_skip(env!("CARGO_CRATE_NAME"))
}

#[test]
fn team_store_rows_are_checkpointed_and_restored() {
    let Some(url) = pg_url() else { return };
    let env = env();
    let schema = format!(
        "t_ckpt_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let open = |author: &str| {
        std::sync::Arc::new(
            mem_tiers::PgStore::open(
                &url,
                &mem_tiers::PgOptions {
                    schema: schema.clone(),
                    ..mem_tiers::PgOptions::for_author(author)
                },
            )
            .unwrap(),
        )
    };
    let pg = open("ana");
    let other = open("bob");
    let manager = |store: std::sync::Arc<mem_tiers::PgStore>| {
        MemoryManager::from_project_with(&env.project, env.mconfig(), PgRef(store)).unwrap()
    };
    let m = manager(pg.clone());
    m.add_learning("one", "first lesson", "tip", &["db".into()], None, false)
        .unwrap();
    m.add_learning("global", "a user-wide lesson", "tip", &[], None, true)
        .unwrap();
    m.set_preference("editor", Some("helix")).unwrap();
    let bob = manager(other.clone());
    bob.add_learning("bob's", "another author's lesson", "tip", &[], None, false)
        .unwrap();
    let cps = Checkpoints::new(CheckpointConfig {
        project_root: env.project.clone(),
        home: env.home.clone(),
        auto: AutoOptions::default(),
        database: None,
        busy_timeout: Duration::from_secs(5),
        lock_timeout: Duration::from_millis(300),
        extra_note_dirs: Vec::new(),
        team_store: Some(pg.clone()),
    })
    .unwrap();
    let key = cps.project_key().to_owned();
    let manifest = cps
        .create(&CreateOptions {
            name: Some("base".into()),
            user: true,
            ..CreateOptions::default()
        })
        .unwrap();
    let store = manifest.store.clone().unwrap();
    assert_eq!(store.backend, "postgresql");
    assert_eq!(
        store.learnings, 2,
        "ana's project and user-wide learnings, not bob's"
    );
    let then = pg.scope_rows(&key, true).unwrap();

    // Changes since: a learning added, one changed (forgotten and re-added), a preference.
    m.add_learning("two", "second lesson", "tip", &[], None, false)
        .unwrap();
    let first = then.learnings.iter().find(|l| l.title == "one").unwrap().id;
    m.forget(&mem_tiers::MemoryId::Learning(first)).unwrap();
    m.set_preference("editor", Some("vim")).unwrap();
    m.set_preference("shell", Some("fish")).unwrap();
    bob.add_learning("bob 2", "bob keeps working", "tip", &[], None, false)
        .unwrap();

    let dry = cps.restore("base", true, false).unwrap();
    let d = dry.store.clone().unwrap();
    assert_eq!(d.added, vec![first]);
    assert_eq!(d.removed.len(), 1);
    assert_eq!(d.preferences, vec!["editor".to_owned(), "shell".to_owned()]);
    let report = cps.restore("base", false, false).unwrap();
    assert!(report.pre_restore.is_some());
    let after = pg.scope_rows(&key, true).unwrap();
    assert_eq!(after.learnings, then.learnings, "the same rows, same ids");
    assert_eq!(after.preferences, then.preferences);
    assert_eq!(after.project, then.project);
    // Search finds the learning put back; bob's rows were not touched.
    let hits = m.recall("first lesson", 5).unwrap();
    assert!(hits.iter().any(|h| h.id == format!("L{first}")), "{hits:?}");
    let bobs: Vec<String> = other
        .learnings(&mem_tiers::LearningFilter::default())
        .unwrap()
        .into_iter()
        .filter(|l| l.author.as_deref() == Some("bob"))
        .map(|l| l.title)
        .collect();
    assert_eq!(bobs.len(), 2, "{bobs:?}");
    // A restore of the restore returns to the later state.
    cps.restore(report.pre_restore.as_deref().unwrap(), false, false)
        .unwrap();
    let later = pg.scope_rows(&key, true).unwrap();
    assert!(later.learnings.iter().any(|l| l.title == "two"));
    assert!(!later.learnings.iter().any(|l| l.id == first));
    assert_eq!(
        later.preferences.unwrap().get("shell").map(String::as_str),
        Some("fish")
    );
    pg.with_client(move |c| c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")))
        .unwrap();
}

/// A `MemoryStore` over a shared `PgStore` (the manager owns its store).
struct PgRef(std::sync::Arc<mem_tiers::PgStore>);

impl MemoryStore for PgRef {
    fn upsert_project(&self, p: &mem_tiers::ProjectRecord) -> mem_tiers::Result<()> {
        self.0.upsert_project(p)
    }
    fn project(&self, key: &str) -> mem_tiers::Result<Option<mem_tiers::ProjectRecord>> {
        self.0.project(key)
    }
    fn recent_projects(
        &self,
        limit: Option<usize>,
    ) -> mem_tiers::Result<Vec<mem_tiers::ProjectRecord>> {
        self.0.recent_projects(limit)
    }
    fn user_preferences(&self) -> mem_tiers::Result<std::collections::BTreeMap<String, String>> {
        self.0.user_preferences()
    }
    fn set_user_preference(&self, key: &str, value: Option<&str>) -> mem_tiers::Result<bool> {
        self.0.set_user_preference(key, value)
    }
    fn add_learning(
        &self,
        l: &mem_tiers::NewLearning,
    ) -> mem_tiers::Result<mem_tiers::LearningEntry> {
        self.0.add_learning(l)
    }
    fn learning(&self, id: i64) -> mem_tiers::Result<Option<mem_tiers::LearningEntry>> {
        self.0.learning(id)
    }
    fn learnings(
        &self,
        f: &mem_tiers::LearningFilter,
    ) -> mem_tiers::Result<Vec<mem_tiers::LearningEntry>> {
        self.0.learnings(f)
    }
    fn touch_learnings(&self, ids: &[i64], at_ms: i64) -> mem_tiers::Result<()> {
        self.0.touch_learnings(ids, at_ms)
    }
    fn delete_learning(&self, id: i64) -> mem_tiers::Result<bool> {
        self.0.delete_learning(id)
    }
    fn expire_learnings(
        &self,
        expiry: mem_tiers::Expiry,
        visible_in: Option<&str>,
        dry_run: bool,
    ) -> mem_tiers::Result<Vec<mem_tiers::LearningEntry>> {
        self.0.expire_learnings(expiry, visible_in, dry_run)
    }
    fn indexed_files(&self, roots: &[String]) -> mem_tiers::Result<Vec<mem_tiers::FileState>> {
        self.0.indexed_files(roots)
    }
    fn replace_file(
        &self,
        state: &mem_tiers::FileState,
        documents: &[mem_tiers::Document],
    ) -> mem_tiers::Result<()> {
        self.0.replace_file(state, documents)
    }
    fn touch_file(&self, state: &mem_tiers::FileState) -> mem_tiers::Result<()> {
        self.0.touch_file(state)
    }
    fn remove_file(&self, path: &str) -> mem_tiers::Result<usize> {
        self.0.remove_file(path)
    }
    fn clear_file_index(&self) -> mem_tiers::Result<usize> {
        self.0.clear_file_index()
    }
    fn document(&self, id: &str) -> mem_tiers::Result<Option<mem_tiers::Document>> {
        self.0.document(id)
    }
    fn documents(
        &self,
        source: mem_tiers::SourceKind,
        visible_in: Option<&str>,
        limit: usize,
    ) -> mem_tiers::Result<Vec<mem_tiers::Document>> {
        self.0.documents(source, visible_in, limit)
    }
    fn search(&self, q: &mem_tiers::SearchQuery) -> mem_tiers::Result<Vec<mem_tiers::SearchHit>> {
        self.0.search(q)
    }
    fn stats(&self) -> mem_tiers::Result<mem_tiers::StoreStats> {
        self.0.stats()
    }
    fn backend(&self) -> &'static str {
        self.0.backend()
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// Copies folder `from` into `to` (files and folders only).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn a_checkpoint_of_another_project_is_refused_and_nothing_is_deleted() {
    // Two projects of one user: one database, rows told apart by project key.
    let a = env();
    let b = Env {
        project: {
            let p = a.project.parent().unwrap().join("other");
            fs::create_dir_all(&p).unwrap();
            p.canonicalize().unwrap()
        },
        home: a.home.clone(),
        _root: tempfile::tempdir().unwrap(),
    };
    a.manager()
        .add_learning("a's lesson", "kept", "testing", &[], None, false)
        .unwrap();
    a.add_entry(Scope::Project, MemoryCategory::Project, "A's fact");
    b.manager()
        .add_learning("b's lesson", "kept too", "testing", &[], None, false)
        .unwrap();
    b.add_entry(Scope::Project, MemoryCategory::Project, "B's fact");
    let cps_a = a.checkpoints();
    let cps_b = b.checkpoints();
    assert_ne!(cps_a.project_key(), cps_b.project_key());
    for user in [false, true] {
        let name = format!("a-{user}");
        cps_a
            .create(&CreateOptions {
                name: Some(name.clone()),
                user,
                ..CreateOptions::default()
            })
            .unwrap();
        // Committed with project A, checked out in project B.
        copy_tree(&cps_a.dir().join(&name), &cps_b.dir().join(&name));
    }
    // B's own checkpoint, its manifest tampered to name A's key.
    cps_b
        .create(&CreateOptions {
            name: Some("tampered".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    let manifest = cps_b.dir().join("tampered/manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    let key_b = serde_json::to_string(cps_b.project_key()).unwrap();
    let key_a = serde_json::to_string(cps_a.project_key()).unwrap();
    assert!(text.contains(&key_b));
    fs::write(&manifest, text.replace(&key_b, &key_a)).unwrap();

    // Changes in B since, so a restore would have something to do.
    b.manager()
        .add_learning("b's later lesson", "also kept", "testing", &[], None, false)
        .unwrap();
    let rows = a.rows();
    assert_eq!(rows.len(), 3);
    let files_a = a.files();
    let files_b = b.files();
    for name in ["a-false", "a-true", "tampered"] {
        for (dry, force) in [(true, false), (false, false), (false, true)] {
            let err = cps_b.restore(name, dry, force).unwrap_err();
            assert!(matches!(err, Error::ForeignProject { .. }), "{name}: {err}");
            let msg = err.to_string();
            let path = cps_b.dir().join(name).join("manifest.json");
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert!(msg.contains(cps_a.project_key()), "{msg}");
            assert!(msg.contains("nothing was changed"), "{msg}");
        }
        assert_eq!(a.rows(), rows, "{name}: every row of both projects kept");
        assert_eq!(a.files(), files_a);
        assert_eq!(b.files(), files_b);
    }
    // No pre-restore checkpoint was taken: nothing happened.
    let (list, _) = cps_b.list().unwrap();
    assert!(
        list.iter().all(|s| !s.name.starts_with("pre-restore")),
        "{list:?}"
    );
    // The same checkpoints restore in their own project.
    cps_a.restore("a-true", false, false).unwrap();
}

#[test]
fn a_tampered_file_name_is_refused_naming_the_name_and_the_manifest() {
    let e = env();
    e.manager();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact one");
    e.note("testing", "Use nextest.");
    let cps = e.checkpoints();
    create_named(&cps, "c");
    let manifest = cps.dir().join("c/manifest.json");
    let good = fs::read_to_string(&manifest).unwrap();
    let value: serde_json::Value = serde_json::from_str(&good).unwrap();
    let files = value["files"].as_array().unwrap();
    let index = |kind: &str| files.iter().position(|f| f["kind"] == kind).unwrap();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact two");
    let outside = e.project.parent().unwrap().join("x.md");
    fs::write(&outside, "outside").unwrap();
    let before = e.files();
    let cases: Vec<(&str, String)> = vec![
        ("note", "../x.md".into()),
        ("note", "..".into()),
        ("note", outside.display().to_string()),
        ("note", String::new()),
        ("note", "a/b.md".into()),
        ("note", "a\\b.md".into()),
        ("note", "bad\u{1b}[2J.md".into()),
        ("note", ".notes.lock".into()),
        ("note", "x.txt".into()),
        ("memories", "../memories.md".into()),
        ("memories", "/etc/passwd".into()),
        ("memories-meta", "".into()),
    ];
    for (kind, bad) in cases {
        let mut v = value.clone();
        let i = index(kind);
        v["files"][i]["name"] = serde_json::Value::String(bad.clone());
        fs::write(&manifest, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        for err in [
            cps.restore("c", false, true).unwrap_err(),
            cps.show("c").unwrap_err(),
        ] {
            assert!(matches!(err, Error::Damaged { .. }), "{bad:?}: {err}");
            let msg = err.to_string();
            assert!(msg.contains(&format!("files[{i}].name {bad:?}")), "{msg}");
            assert!(msg.contains(&manifest.display().to_string()), "{msg}");
            let copy = v["files"][i]["copy"].as_str().unwrap();
            assert!(
                !msg.contains(copy),
                "names the bad name, not the copy: {msg}"
            );
        }
        assert_eq!(e.files(), before, "{bad:?}: nothing restored");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "outside");
    }
    // A copy path out of the checkpoint is named as the copy.
    let mut v = value.clone();
    v["files"][index("note")]["copy"] = "../../memory/testing.md".into();
    fs::write(&manifest, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let err = cps.restore("c", false, true).unwrap_err().to_string();
    assert!(err.contains("copy \"../../memory/testing.md\""), "{err}");
    fs::write(&manifest, &good).unwrap();
    cps.restore("c", false, false).unwrap();
}

#[test]
fn a_restore_never_writes_or_deletes_through_a_memory_folder_linked_out_of_the_project() {
    let e = env();
    e.manager();
    let outside = e.project.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("kept.md"), "someone else's file\n").unwrap();
    fs::create_dir_all(e.project.join(".mewcode")).unwrap();
    std::os::unix::fs::symlink(&outside, e.project.join(".mewcode/memory")).unwrap();
    e.add_entry(Scope::Project, MemoryCategory::Project, "Fact one");
    let cps = e.checkpoints();
    create_named(&cps, "c");
    // Written since: a restore would delete them, and put kept.md back.
    fs::write(outside.join("other.md"), "not the project's\n").unwrap();
    fs::write(outside.join("kept.md"), "changed\n").unwrap();
    for (dry, force) in [(true, false), (false, true)] {
        let err = cps.restore("c", dry, force).unwrap_err();
        assert!(matches!(err, Error::Outside { .. }), "{err}");
        assert!(err.to_string().contains("outside the project"), "{err}");
    }
    assert_eq!(
        fs::read_to_string(outside.join("other.md")).unwrap(),
        "not the project's\n"
    );
    assert_eq!(
        fs::read_to_string(outside.join("kept.md")).unwrap(),
        "changed\n"
    );
    let names: Vec<String> = fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "nothing staged outside: {names:?}");
}
