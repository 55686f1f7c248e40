//! The recall flow against real directories: bad input never fails a scan, reading never
//! changes a file, the selector's timeout, failure and junk replies give an empty reminder, and
//! surfaced notes are not repeated within a session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use mem_llm::{
    BoxFuture, ExtractRequest, Job, Llm, LlmError, Memories, OfflineEngine, Reply, SelectRequest,
    Selection, SummarizeRequest, Summary,
};
use mem_recall::{
    MemoryDir, MemoryDirs, NewNote, NoteId, RecallOptions, Scope, SurfacedLog, recall,
    recall_for_session, remove_note, scan, write_note,
};

fn note(dir: &Path, file: &str, name: &str, description: &str, body: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(file),
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}\n"),
    )
    .unwrap();
}

fn dirs_of(project: &Path, home: &Path) -> MemoryDirs {
    MemoryDirs::standard(project, home, &[])
}

/// A selector that answers after `delay` with `ids`, or fails.
struct Fake {
    delay: Duration,
    ids: Option<Vec<String>>,
}

impl Llm for Fake {
    fn engine_name(&self, _job: Job) -> String {
        "fake:model".to_owned()
    }
    fn summarize<'a>(
        &'a self,
        _: &'a SummarizeRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Summary>>> {
        Box::pin(async { Ok(Reply::offline(Summary::default())) })
    }
    fn extract<'a>(
        &'a self,
        _: &'a ExtractRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Memories>>> {
        Box::pin(async { Ok(Reply::offline(Memories::default())) })
    }
    fn select<'a>(
        &'a self,
        _: &'a SelectRequest,
    ) -> BoxFuture<'a, mem_llm::Result<Reply<Selection>>> {
        let delay = self.delay;
        let ids = self.ids.clone();
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            match ids {
                Some(ids) => Ok(Reply {
                    value: Selection { ids },
                    engine: "fake:model".to_owned(),
                    fallback: None,
                    dropped: Vec::new(),
                }),
                None => Err(LlmError::Timeout {
                    url: "http://127.0.0.1:9/v1".to_owned(),
                    after: delay,
                    attempts: 1,
                }),
            }
        })
    }
}

fn corpus() -> (tempfile::TempDir, MemoryDirs) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    let home = tmp.path().join("h");
    let mem = project.join(".mewcode/memory");
    note(
        &mem,
        "testing.md",
        "Testing",
        "Run tests with cargo nextest",
        "Use nextest.",
    );
    note(
        &mem,
        "deploy.md",
        "Deploying",
        "Release process with tags",
        "Tag and push.",
    );
    note(
        &home.join(".mewcode/memory"),
        "style.md",
        "Commit style",
        "Imperative commit messages",
        "Short subjects.",
    );
    let dirs = dirs_of(&project, &home);
    (tmp, dirs)
}

#[tokio::test(start_paused = true)]
async fn timeout_failure_and_junk_give_an_empty_reminder() {
    let (_tmp, dirs) = corpus();
    let options = RecallOptions::default();
    let none = BTreeSet::new();
    let now = SystemTime::now();

    let slow = Fake {
        delay: Duration::from_secs(60),
        ids: Some(vec!["N:project/testing.md".into()]),
    };
    let started = tokio::time::Instant::now();
    let r = recall(&slow, scan(&dirs), &none, "run the tests", options, now).await;
    assert_eq!(r.reminder, "");
    assert!(r.selected.is_empty());
    assert!(
        r.fallback
            .as_deref()
            .unwrap()
            .contains("did not answer within 8 s"),
        "{:?}",
        r.fallback
    );
    // Paused clock: the only time that passed is the deadline the recall waited for.
    assert_eq!(started.elapsed(), Duration::from_secs(8));

    let failing = Fake {
        delay: Duration::from_millis(10),
        ids: None,
    };
    let r = recall(&failing, scan(&dirs), &none, "run the tests", options, now).await;
    assert_eq!(r.reminder, "");
    assert!(
        r.fallback
            .as_deref()
            .unwrap()
            .starts_with("the selector failed"),
        "{:?}",
        r.fallback
    );

    let junk = Fake {
        delay: Duration::ZERO,
        ids: Some(vec![
            "N:project/nope.md".into(),
            "```json".into(),
            "testing".into(),
        ]),
    };
    let r = recall(&junk, scan(&dirs), &none, "run the tests", options, now).await;
    assert_eq!(r.reminder, "");
    assert_eq!(r.dropped.len(), 3);
    assert!(
        r.fallback
            .as_deref()
            .unwrap()
            .contains("named no candidate")
    );

    let good = Fake {
        delay: Duration::from_secs(7),
        ids: Some(vec![
            "N:project/testing.md".into(),
            "N:project/testing.md".into(),
        ]),
    };
    let r = recall(&good, scan(&dirs), &none, "run the tests", options, now).await;
    assert_eq!(r.selected.len(), 1, "duplicates collapse");
    assert!(r.reminder.starts_with("<system-reminder>\n"));
    assert!(r.reminder.contains("## Testing ("));
    assert_eq!(r.engine, "fake:model");
}

#[tokio::test]
async fn surfaced_notes_are_not_repeated_within_a_session() {
    let (tmp, dirs) = corpus();
    let sessions = tmp.path().join("p/.mewcode/sessions");
    let log = SurfacedLog::for_session(&sessions, "s1");
    let now = SystemTime::now();
    let options = RecallOptions::default();
    let first = recall_for_session(
        &OfflineEngine,
        &dirs,
        Some(&log),
        "run the tests with nextest",
        options,
        now,
    )
    .await;
    assert_eq!(
        first
            .selected
            .iter()
            .map(|r| r.note.id.to_string())
            .collect::<Vec<_>>(),
        ["N:project/testing.md"]
    );
    let again = recall_for_session(
        &OfflineEngine,
        &dirs,
        Some(&log),
        "run the tests with nextest",
        options,
        now,
    )
    .await;
    assert!(again.selected.is_empty());
    assert_eq!(again.already_surfaced, 1);
    // A resumed session reads the same record.
    let resumed = SurfacedLog::for_session(&sessions, "s1");
    let r = recall_for_session(
        &OfflineEngine,
        &dirs,
        Some(&resumed),
        "nextest tests",
        options,
        now,
    )
    .await;
    assert!(r.selected.is_empty());
    // A new session starts afresh.
    let new = SurfacedLog::for_session(&sessions, "s2");
    let r = recall_for_session(
        &OfflineEngine,
        &dirs,
        Some(&new),
        "run the tests with nextest",
        options,
        now,
    )
    .await;
    assert_eq!(r.selected.len(), 1);
}

#[cfg(unix)]
#[test]
fn bad_input_never_fails_a_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mem");
    note(&dir, "good.md", "Good", "A fine note", "body");
    std::fs::write(
        dir.join("broken.md"),
        "---\nname: [unclosed\ndescription: x\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(dir.join("unclosed.md"), "---\nname: x\nno end\n").unwrap();
    std::fs::write(dir.join("binary.md"), b"\x00\x01\x02binary").unwrap();
    std::fs::write(dir.join("latin1.md"), b"caf\xe9\n").unwrap();
    std::fs::write(dir.join("crlf.md"), "\u{feff}---\r\nname: \"CRLF: yes\"\r\ndescription: >\r\n  folded\r\n  text\r\n# comment\r\nextra: 1\r\n---\r\nbody\r\n").unwrap();
    std::fs::write(dir.join("MEMORY.md"), "- index\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not markdown").unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("fifo.md"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("loop.md", dir.join("loop.md")).unwrap();
    std::os::unix::fs::symlink("missing-target.md", dir.join("dangling.md")).unwrap();
    std::fs::create_dir(dir.join("folder.md")).unwrap();
    let big = dir.join("big.md");
    let mut text = "---\nname: Big\ndescription: a large note\n---\n".to_owned();
    text.push_str(&"lorem ipsum dolor sit amet\n".repeat(20_000));
    std::fs::write(&big, &text).unwrap();
    let a_file = tmp.path().join("a-file");
    std::fs::write(&a_file, "x").unwrap();

    let dirs = MemoryDirs {
        dirs: vec![
            MemoryDir {
                scope: Scope::Project,
                path: dir.clone(),
            },
            MemoryDir {
                scope: Scope::User,
                path: a_file.clone(),
            },
            MemoryDir {
                scope: Scope::Extra(0),
                path: tmp.path().join("missing"),
            },
        ],
    };
    let s = scan(&dirs);
    let mut ids: Vec<String> = s.notes.iter().map(|n| n.id.to_string()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "N:project/big.md",
            "N:project/broken.md",
            "N:project/crlf.md",
            "N:project/good.md",
            "N:project/unclosed.md"
        ]
    );
    let crlf = s
        .notes
        .iter()
        .find(|n| n.id.file_name == "crlf.md")
        .unwrap();
    assert_eq!(
        (crlf.name.as_str(), crlf.description.as_str()),
        ("CRLF: yes", "folded text")
    );
    let broken = s
        .notes
        .iter()
        .find(|n| n.id.file_name == "broken.md")
        .unwrap();
    assert_eq!(broken.name, "broken", "kept by its file name");
    let big_note = s.notes.iter().find(|n| n.id.file_name == "big.md").unwrap();
    assert!(big_note.truncated && big_note.body.len() <= mem_recall::MAX_NOTE_BYTES);
    let mut warned: Vec<String> = s
        .warnings
        .iter()
        .map(|w| w.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    warned.sort();
    assert_eq!(
        warned,
        [
            "a-file",
            "big.md",
            "binary.md",
            "broken.md",
            "dangling.md",
            "fifo.md",
            "latin1.md",
            "loop.md",
            "unclosed.md"
        ],
        "{:#?}",
        s.warnings
    );
    assert_eq!(s.dirs_read, 1);
}

#[test]
fn at_most_200_notes_newest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mem");
    std::fs::create_dir_all(&dir).unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for i in 0..1000 {
        let path = dir.join(format!("n{i:04}.md"));
        std::fs::write(&path, format!("---\nname: n{i}\ndescription: d\n---\n")).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(base + Duration::from_secs(i)).unwrap();
    }
    let dirs = MemoryDirs {
        dirs: vec![MemoryDir {
            scope: Scope::Project,
            path: dir,
        }],
    };
    let s = scan(&dirs);
    assert_eq!(s.notes.len(), mem_recall::MAX_NOTES);
    assert_eq!(s.over_limit, 800);
    assert_eq!(s.notes[0].id.file_name, "n0999.md");
    assert_eq!(s.notes[199].id.file_name, "n0800.md");
}

#[tokio::test]
async fn reading_leaves_every_mtime_unchanged() {
    let (tmp, dirs) = corpus();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    let files: Vec<_> = [
        "p/.mewcode/memory/testing.md",
        "p/.mewcode/memory/deploy.md",
        "h/.mewcode/memory/style.md",
    ]
    .iter()
    .map(|f| tmp.path().join(f))
    .collect();
    for f in &files {
        std::fs::File::options()
            .write(true)
            .open(f)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let before: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let r = recall_for_session(
        &OfflineEngine,
        &dirs,
        None,
        "run tests with nextest, commit style",
        RecallOptions::default(),
        SystemTime::now(),
    )
    .await;
    assert!(!r.selected.is_empty());
    assert!(
        r.reminder.contains("days old"),
        "old mtime → staleness warning"
    );
    mem_recall::read_note(&dirs, &NoteId::parse("N:project/testing.md").unwrap()).unwrap();
    for (f, content) in files.iter().zip(before) {
        assert_eq!(
            std::fs::metadata(f).unwrap().modified().unwrap(),
            old,
            "{}",
            f.display()
        );
        assert_eq!(std::fs::read(f).unwrap(), content);
    }
}

#[test]
fn notes_are_written_once_with_secrets_withheld_and_removed_by_id() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = dirs_of(&tmp.path().join("p"), &tmp.path().join("h"));
    let new = NewNote {
        name: "Deploy: token setup".to_owned(),
        description: "How CI authenticates".to_owned(),
        kind: "reference".to_owned(),
        body: "CI uses ghp_abcdefghijklmnopqrstuvwxyz0123456789 as its token.".to_owned(),
    };
    let w = write_note(&dirs, Scope::User, &new, false).unwrap();
    assert_eq!(w.id.to_string(), "N:user/deploy_token_setup.md");
    assert_eq!(w.withheld, 1);
    let text = std::fs::read_to_string(&w.path).unwrap();
    assert!(
        !text.contains("ghp_abc") && text.contains("[REDACTED]"),
        "{text}"
    );
    let again = write_note(&dirs, Scope::User, &new, false);
    assert!(matches!(again, Err(mem_recall::Error::Exists { .. })));
    assert_eq!(
        std::fs::read_to_string(&w.path).unwrap(),
        text,
        "never overwritten silently"
    );
    let replaced = write_note(&dirs, Scope::User, &new, true).unwrap();
    assert!(replaced.replaced);
    let bad = NewNote {
        kind: "misc".to_owned(),
        ..new.clone()
    };
    assert!(matches!(
        write_note(&dirs, Scope::User, &bad, false),
        Err(mem_recall::Error::InvalidNote(_))
    ));
    let s = scan(&dirs);
    assert_eq!(s.notes.len(), 1);
    assert_eq!(s.notes[0].kind.as_deref(), Some("reference"));
    let leftovers: Vec<_> = std::fs::read_dir(w.path.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != mem_recall::NOTES_LOCK_FILE)
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    remove_note(&dirs, &w.id).unwrap();
    assert!(!w.path.exists());
    assert!(matches!(
        remove_note(&dirs, &w.id),
        Err(mem_recall::Error::NotFound { .. })
    ));
    let unknown = NoteId::parse("N:extra3/x.md").unwrap();
    assert!(matches!(
        remove_note(&dirs, &unknown),
        Err(mem_recall::Error::UnknownScope { .. })
    ));
}
