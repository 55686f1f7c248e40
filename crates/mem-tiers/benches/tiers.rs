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
use mem_tiers::index::{IndexSource, NoteDir};
use mem_tiers::*;

const LEARNINGS: usize = 100_000;
const PROJECT: &str = "git:/bench/project/.git";

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
}

const WORDS: &[&str] = &[
    "always",
    "use",
    "parameterised",
    "queries",
    "cache",
    "the",
    "token",
    "count",
    "retry",
    "on",
    "timeout",
    "pytest",
    "coverage",
    "fixture",
    "docker",
    "compose",
    "migrate",
    "schema",
    "index",
    "vacuum",
    "router",
    "handler",
    "async",
    "await",
    "tokio",
    "spawn",
    "blocking",
    "lock",
    "mutex",
    "deadlock",
    "release",
    "build",
    "cargo",
    "clippy",
    "lint",
    "format",
    "deploy",
    "staging",
    "rollback",
    "feature",
    "flag",
    "config",
    "env",
    "secret",
    "rotate",
    "log",
    "trace",
    "span",
    "metric",
    "latency",
    "p99",
    "budget",
    "memory",
    "leak",
    "profile",
    "参数化",
    "查询",
    "依赖",
    "注入",
    "测试",
    "覆盖率",
    "缓存",
    "部署",
    "回滚",
    "日志",
];

/// Syllables of the synthetic vocabulary: 24^3 = 13,824 distinct made-up words, drawn with a
/// skew (low indices much more often), so word frequencies look like a real corpus's rather than
/// 70 words each in a third of all documents.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "za", "be", "do", "fu", "ge", "hi", "jo", "ku",
    "la", "me", "no", "pi", "qu", "re", "si", "tu",
];

fn word(rng: &mut Rng) -> String {
    if rng.next().is_multiple_of(2) {
        return WORDS[rng.next() % WORDS.len()].to_owned();
    }
    let n = SYLLABLES.len().pow(3);
    // Product of two uniforms: a skewed draw.
    let i = (rng.next() % n) * (rng.next() % n) / n;
    let s = SYLLABLES.len();
    format!(
        "{}{}{}",
        SYLLABLES[i % s],
        SYLLABLES[(i / s) % s],
        SYLLABLES[i / s / s]
    )
}

fn text(rng: &mut Rng, words: usize) -> String {
    (0..words).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

/// Two-word queries taken from the titles of 20 learnings spread over the table, so every query
/// has at least one hit.
fn queries(store: &SqliteStore) -> Vec<String> {
    let conn = store.connection();
    let mut stmt = conn
        .prepare("SELECT title FROM learnings WHERE id = ?1")
        .unwrap();
    (0..20)
        .map(|k| {
            let title: String = stmt.query_row([1 + k * 4999], |r| r.get(0)).unwrap();
            let words: Vec<&str> = title.split(' ').collect();
            format!("{} {}", words[1], words[2])
        })
        .collect()
}

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp/tiers-bench")
}

/// The 100,000-learning database, built once.
fn big_db() -> PathBuf {
    let path = bench_dir().join("memory-100k.db");
    if let Ok(store) = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT)
        && store
            .stats()
            .is_ok_and(|s| s.learnings as usize == LEARNINGS)
    {
        return path;
    }
    let _ = std::fs::remove_file(&path);
    let store = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let c = store.connection();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    c.execute_batch("BEGIN").unwrap();
    {
        let mut ins = c
            .prepare(
                "INSERT INTO learnings (title, content, category, tags, context, project_key, \
                 created_ms, last_used_ms) VALUES (?1, ?2, ?3, '[]', NULL, ?4, ?5, ?5)",
            )
            .unwrap();
        for i in 0..LEARNINGS {
            let title = format!("{} {i}", text(&mut rng, 4));
            let content = text(&mut rng, 20);
            let category = ["error", "best-practice", "general", "tip"][rng.next() % 4];
            // A tenth of the learnings belong to the bench project, a tenth are user-wide.
            let project = match rng.next() % 10 {
                0 => Some(PROJECT.to_owned()),
                1 => None,
                k => Some(format!("git:/bench/other{k}/.git")),
            };
            ins.execute(rusqlite::params![
                title,
                content,
                category,
                project,
                i as i64 * 1000
            ])
            .unwrap();
        }
    }
    c.execute_batch("COMMIT").unwrap();
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
    let queries = queries(&store);
    let mut g = c.benchmark_group("search_100k");
    let mut i = 0;
    g.bench_function("mem_tiers_search", |b| {
        b.iter(|| {
            i += 1;
            let q = SearchQuery {
                text: queries[i % queries.len()].clone(),
                visible_in: None,
                sources: Vec::new(),
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
                limit: 10,
            };
            store.search(&q).unwrap()
        })
    });
    g.bench_function("mem_tiers_search_chinese", |b| {
        b.iter(|| {
            let q = SearchQuery {
                text: "参数化 查询".into(),
                visible_in: Some(PROJECT.into()),
                sources: Vec::new(),
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
