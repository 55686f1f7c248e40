//! Criterion benchmarks of the tier store at 100,000 learnings (issue 10 targets, results in
//! `docs/BENCHMARKS.md`):
//! - search (`MemoryStore::search`) vs a raw FTS5 query on the same table;
//! - Tier 0 build (`get_tier0_summary`);
//! - insert rate (`add_learning`, one transaction each, `synchronous=FULL`);
//! - index sync of 200 unchanged notes.
//!
//! The 100,000-learning database is built once into `target/tmp/tiers-bench/` (a batch insert in
//! one transaction) and reused by later runs. Runs are kept short (a few seconds per case).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mem_sources::NoteDir;
use mem_tiers::index::IndexSource;
use mem_tiers::*;

mod common;

use common::{PROJECT, Rng, text};

const LEARNINGS: usize = 100_000;

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp/tiers-bench")
}

/// The 100,000-learning database, built once (file name versioned by the generator).
fn big_db() -> PathBuf {
    let path = bench_dir().join("memory-100k-v2.db");
    let _ = std::fs::remove_file(bench_dir().join("memory-100k.db"));
    if let Ok(store) = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT)
        && store.stats().ok().map(|s| s.learnings as usize) == Some(LEARNINGS)
    {
        return path;
    }
    let _ = std::fs::remove_file(&path);
    let store = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    common::load_sqlite(&store, common::rows(LEARNINGS));
    path
}

fn config(dir: &Path) -> MemoryConfig {
    let mut c = MemoryConfig::for_home(dir);
    c.user_dir = None;
    c
}

fn project() -> ProjectRecord {
    ProjectRecord {
        key: PROJECT.into(),
        name: "project".into(),
        path: "/bench/project".into(),
        language: Some("Rust".into()),
        framework: Some("Axum".into()),
        test_command: Some("cargo test".into()),
        custom_commands: Default::default(),
        notes: Vec::new(),
        created_ms: 0,
        last_used_ms: 0,
    }
}

fn search(c: &mut Criterion) {
    let path = big_db();
    let store = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let queries = common::title_queries(LEARNINGS);
    let mut g = c.benchmark_group("search_100k");
    let mut i = 0;
    g.bench_function("mem_tiers_search", |b| {
        b.iter(|| {
            i += 1;
            let q = SearchQuery {
                text: queries[i % queries.len()].clone(),
                visible_in: None,
                sources: Vec::new(),
                scope: None,
                limit: 10,
            };
            let hits = store.search(&q).unwrap();
            assert!(!hits.is_empty(), "{}", q.text);
            hits
        })
    });
    let mut i = 0;
    g.bench_function("raw_fts5_query", |b| {
        let conn = store.connection();
        let mut stmt = conn
            .prepare("SELECT rowid FROM docs_word WHERE docs_word MATCH ?1 ORDER BY rank LIMIT 10")
            .unwrap();
        b.iter(|| {
            i += 1;
            let q = queries[i % queries.len()]
                .split(' ')
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" AND ");
            let ids: Vec<i64> = stmt
                .query_map([q], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            ids
        })
    });
    let mut i = 0;
    g.bench_function("mem_tiers_search_project", |b| {
        b.iter(|| {
            i += 1;
            let q = SearchQuery {
                text: queries[i % queries.len()].clone(),
                visible_in: Some(PROJECT.into()),
                sources: Vec::new(),
                scope: None,
                limit: 10,
            };
            store.search(&q).unwrap()
        })
    });
    g.bench_function("raw_fts5_trigram_chinese", |b| {
        let conn = store.connection();
        let mut stmt = conn
            .prepare(
                "SELECT rowid FROM docs_trigram WHERE docs_trigram MATCH '\"参数化\"' \
                 ORDER BY rank LIMIT 10",
            )
            .unwrap();
        b.iter(|| {
            let ids: Vec<i64> = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            ids
        })
    });
    g.bench_function("mem_tiers_search_chinese", |b| {
        b.iter(|| {
            let q = SearchQuery {
                text: "参数化".into(),
                visible_in: None,
                sources: Vec::new(),
                scope: None,
                limit: 10,
            };
            store.search(&q).unwrap()
        })
    });
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let mm = MemoryManager::with_store(
        config(dir.path()),
        SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap(),
        Some(project()),
        Vec::new(),
    );
    c.bench_function("tier0_build_100k", |b| {
        b.iter(|| {
            let t = mm.get_tier0_summary().unwrap();
            assert!(t.tokens < 500);
            t
        })
    });
}

fn insert(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("memory.db"), DEFAULT_BUSY_TIMEOUT).unwrap();
    let mut rng = Rng(7);
    c.bench_function("add_learning", |b| {
        b.iter(|| {
            store
                .add_learning(&NewLearning {
                    title: text(&mut rng, 4),
                    content: text(&mut rng, 20),
                    category: "general".into(),
                    created_ms: 1,
                    ..Default::default()
                })
                .unwrap()
        })
    });
}

fn sync(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let mut rng = Rng(11);
    for i in 0..200 {
        std::fs::write(
            notes.join(format!("note_{i:03}.md")),
            format!(
                "---\nname: note {i}\ndescription: {}\ntype: project\n---\n{}\n",
                text(&mut rng, 8),
                text(&mut rng, 120)
            ),
        )
        .unwrap();
    }
    let store = SqliteStore::open(&dir.path().join("memory.db"), DEFAULT_BUSY_TIMEOUT).unwrap();
    let sources: Vec<Box<dyn IndexSource>> = vec![Box::new(NoteDir {
        dir: notes,
        scope: "project".into(),
        project_key: Some(PROJECT.into()),
    })];
    let first = index::sync(&store, &sources).unwrap();
    assert_eq!(first.reindexed, 200);
    c.bench_function("index_sync_200_unchanged_notes", |b| {
        b.iter(|| {
            let r = index::sync(&store, &sources).unwrap();
            assert_eq!(r.read, 0);
            r
        })
    });
}

fn short() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = short();
    targets = search, insert, sync
}
criterion_main!(benches);
