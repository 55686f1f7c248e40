#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Checkpoint create and restore on a project with 100 MB of sessions, 200 notes and 10,000
//! learnings (issue 15), and create with 10 MB of sessions to show that create does not grow
//! with the sessions. `MEM_BENCH_DIR` picks where the corpus is generated (default: a temp dir,
//! deleted at the end).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BatchSize, Criterion};
use mem_auto::AutoOptions;
use mem_checkpoint::{CheckpointConfig, Checkpoints, CreateOptions};
use mem_core::Message;
use mem_session::SessionStore;
use mem_sources::FromProject;
use mem_tiers::{MemoryConfig, MemoryManager, SqliteStore};

struct Project {
    _root: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

/// `sessions` files of `mb_each` MB: user/assistant records of ~2 KB.
fn project(session_mb: usize, sessions: usize, notes: usize, learnings: usize) -> Project {
    let root = match std::env::var_os("MEM_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let project = root.path().join("p");
    let home = root.path().join("h");
    fs::create_dir_all(project.join(".mewcode/sessions")).unwrap();
    fs::create_dir_all(project.join(".mewcode/memory")).unwrap();
    fs::create_dir_all(&home).unwrap();
    let body = "x".repeat(1900);
    for s in 0..sessions {
        let path = project.join(format!(".mewcode/sessions/s{s:03}.jsonl"));
        let mut f = std::io::BufWriter::new(fs::File::create(&path).unwrap());
        let mut written = 0usize;
        let mut i = 0usize;
        while written < session_mb * 1024 * 1024 / sessions.max(1) {
            let (t, role) = if i.is_multiple_of(2) {
                ("user", "user")
            } else {
                ("assistant", "assistant")
            };
            let line = format!(
                "{{\"type\":\"{t}\",\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":[{{\"type\":\"text\",\"text\":\"turn {i} {body}\"}}]}}}}\n"
            );
            f.write_all(line.as_bytes()).unwrap();
            written += line.len();
            i += 1;
        }
    }
    for n in 0..notes {
        fs::write(
            project.join(format!(".mewcode/memory/note_{n:03}.md")),
            format!("---\nname: note {n}\ndescription: about topic {n}\ntype: project\n---\n\nBody of note {n}.\n"),
        )
        .unwrap();
    }
    fs::write(
        project.join(".mewcode/memories.md"),
        "### 项目知识\n- The API lives in crates/api\n",
    )
    .unwrap();
    let config = MemoryConfig::for_home(&home);
    let mm = MemoryManager::from_project(&project, config.clone()).unwrap();
    drop(mm);
    let key = mem_tiers::project::identify(&project).unwrap().key;
    let store = SqliteStore::open(&config.database_path(), Duration::from_secs(5)).unwrap();
    let conn = store.connection();
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..learnings {
        conn.execute(
            "INSERT INTO learnings(title, content, category, tags, context, project_key, created_ms, last_used_ms) VALUES (?1, ?2, 'testing', '[\"rust\"]', NULL, ?3, ?4, ?4)",
            rusqlite_params(i, &key),
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
    // Bring every session meta up to date once (what any earlier `mem` command did).
    let sessions_store = SessionStore::for_project(&project);
    for id in sessions_store.ids().unwrap() {
        sessions_store.position(&id).unwrap();
    }
    Project {
        project: project.canonicalize().unwrap(),
        home,
        _root: root,
    }
}

fn rusqlite_params(i: usize, key: &str) -> (String, String, String, i64) {
    (
        format!("lesson {i}"),
        format!("when doing thing {i}, remember detail {}", i * 7),
        key.to_owned(),
        1_764_000_000_000 + i as i64,
    )
}

fn checkpoints(p: &Project) -> Checkpoints {
    Checkpoints::new(CheckpointConfig {
        project_root: p.project.clone(),
        home: p.home.clone(),
        auto: AutoOptions::default(),
        database: Some(MemoryConfig::for_home(&p.home).database_path()),
        busy_timeout: Duration::from_secs(5),
        lock_timeout: Duration::from_secs(30),
        extra_note_dirs: Vec::new(),
        team_store: None,
    })
    .unwrap()
}

fn clear(dir: &Path, keep: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() && name != keep {
            fs::remove_dir_all(e.path()).unwrap();
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for (mb, label) in [(10usize, "10MB"), (100, "100MB")] {
        let p = project(mb, 20, 200, 10_000);
        let cps = checkpoints(&p);
        let mut group = c.benchmark_group("checkpoint");
        group.bench_function(
            format!("create/{label}_sessions_200_notes_10k_learnings"),
            |b| {
                b.iter_batched(
                    || clear(cps.dir(), ""),
                    |()| {
                        cps.create(&CreateOptions {
                            name: Some("bench".into()),
                            ..CreateOptions::default()
                        })
                        .unwrap()
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        if mb == 100 {
            clear(cps.dir(), "");
            cps.create(&CreateOptions {
                name: Some("base".into()),
                ..CreateOptions::default()
            })
            .unwrap();
            let sessions = SessionStore::for_project(&p.project);
            let ids = sessions.ids().unwrap();
            let mm =
                MemoryManager::from_project(&p.project, MemoryConfig::for_home(&p.home)).unwrap();
            group.bench_function("restore/100MB_sessions_200_notes_10k_learnings", |b| {
                b.iter_batched(
                    || {
                        // What a confused session leaves: records in every session, a note,
                        // learnings.
                        clear(cps.dir(), "base");
                        for id in &ids {
                            let mut w = sessions.open(id).unwrap();
                            w.append(&Message::user("a wrong turn")).unwrap();
                        }
                        fs::write(
                            p.project.join(".mewcode/memory/junk.md"),
                            "---\nname: junk\ndescription: junk\ntype: project\n---\n",
                        )
                        .unwrap();
                        for i in 0..10 {
                            mm.add_learning(
                                &format!("wrong {i}"),
                                "bad",
                                "testing",
                                &[],
                                None,
                                false,
                            )
                            .unwrap();
                        }
                    },
                    |()| cps.restore("base", false, true).unwrap(),
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
    c.final_summary();
}
