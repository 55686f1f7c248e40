//! The team store next to SQLite on the same data (issue 12, results in `docs/BENCHMARKS.md`):
//! search p50/p90 at N learnings (default 100,000; `MEM_BENCH_LEARNINGS`), and write
//! throughput (`add_learning`, one transaction each) with 1 and 8 concurrent writers.
//!
//! `MEM_TEST_PG_URL=postgresql://... cargo bench -p mem-tiers --bench team`
//! (`.ci/postgres.sh start` prints a URL). Without the URL only SQLite is measured. The data
//! is generated once per run (seeded, so both backends get the same learnings) and loaded in
//! bulk; each backend then answers the same queries. Keep runs short: the machine is shared.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use mem_tiers::*;

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
    "token",
    "count",
    "retry",
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
    "staging",
    "database",
    "needs",
    "vpn",
    "terraform",
    "apply",
    "never",
    "by",
    "hand",
    "deploy",
    "release",
    "branch",
    "rebase",
    "lint",
    "format",
    "参数化查询",
    "依赖注入",
    "缓存",
    "超时",
    "重试",
];

struct Row {
    title: String,
    content: String,
    category: &'static str,
    tags: String,
    project: Option<String>,
    created_ms: i64,
}

fn data(n: usize) -> Vec<Row> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|i| {
            let mut words = |k: usize| {
                (0..k)
                    .map(|_| WORDS[rng.next() % WORDS.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let title = words(4);
            let mut content = words(18);
            if i.is_multiple_of(97) {
                content.push_str(&format!(" see crates/mem-{}/src/lib.rs", i % 13));
            }
            if i.is_multiple_of(101) {
                content.push_str(&format!(" TIER{}_MAX_TOKENS", i % 7));
            }
            Row {
                title,
                content,
                category: ["error", "best-practice", "general", "tip"][i % 4],
                tags: format!("[\"t{}\"]", i % 50),
                project: (i % 3 != 0).then(|| format!("git:/src/p{}/.git", i % 20)),
                created_ms: i as i64,
            }
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "staging vpn",
    "terraform apply",
    "pytest coverage fixture",
    "参数化查询",
    "TIER3_MAX_TOKENS",
    "mem-7/src/lib.rs",
    "zzz-not-there",
    "retry",
];

fn load_sqlite(store: &SqliteStore, rows: &[Row]) {
    let c = store.connection();
    c.execute_batch("BEGIN").unwrap();
    {
        let mut ins = c
            .prepare(
                "INSERT INTO learnings (title, content, category, tags, context, project_key, \
                 created_ms, last_used_ms) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?6)",
            )
            .unwrap();
        for r in rows {
            ins.execute(rusqlite::params![
                r.title,
                r.content,
                r.category,
                r.tags,
                r.project,
                r.created_ms
            ])
            .unwrap();
        }
    }
    c.execute_batch("COMMIT").unwrap();
}

fn load_pg(store: &PgStore, rows: &[Row]) {
    for chunk in rows.chunks(20_000) {
        let titles: Vec<&str> = chunk.iter().map(|r| r.title.as_str()).collect();
        let contents: Vec<&str> = chunk.iter().map(|r| r.content.as_str()).collect();
        let cats: Vec<&str> = chunk.iter().map(|r| r.category).collect();
        let tags: Vec<&str> = chunk.iter().map(|r| r.tags.as_str()).collect();
        let projects: Vec<Option<&str>> = chunk.iter().map(|r| r.project.as_deref()).collect();
        let times: Vec<i64> = chunk.iter().map(|r| r.created_ms).collect();
        let author = store.author().to_owned();
        store
            .with_client(move |c| {
                let mut tx = c.transaction()?;
                tx.execute(
                    "WITH ins AS (INSERT INTO learnings (author, title, content, category, tags, \
                     project_key, created_ms, last_used_ms) \
                     SELECT $1, t, c, k, g, p, m, m FROM unnest($2::text[], $3::text[], \
                     $4::text[], $5::text[], $6::text[], $7::bigint[]) AS u(t, c, k, g, p, m) \
                     RETURNING *) \
                     INSERT INTO docs (author, team, doc_id, source, scope, project_key, title, \
                     body, path, updated_ms) SELECT author, NULL, 'L' || id, 'learning', \
                     CASE WHEN project_key IS NULL THEN 'user' ELSE 'project' END, project_key, \
                     title, content || chr(10) || chr(10) || 't', NULL, created_ms FROM ins",
                    &[&author, &titles, &contents, &cats, &tags, &projects, &times],
                )?;
                tx.commit()
            })
            .unwrap();
    }
    store.with_client(|c| c.batch_execute("ANALYZE")).unwrap();
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn search_bench(name: &str, store: &dyn MemoryStore, rounds: usize) {
    // Warm-up: one pass over the queries.
    for q in QUERIES {
        let _ = store.search(&SearchQuery {
            text: (*q).into(),
            limit: 10,
            ..Default::default()
        });
    }
    let mut all = Vec::new();
    for q in QUERIES {
        let mut times = Vec::new();
        let mut hits = 0;
        for _ in 0..rounds {
            let t = Instant::now();
            hits = store
                .search(&SearchQuery {
                    text: (*q).into(),
                    visible_in: Some("git:/src/p3/.git".into()),
                    limit: 10,
                    ..Default::default()
                })
                .unwrap()
                .len();
            times.push(t.elapsed());
        }
        println!(
            "{name:<10} search {q:<26} p50 {:>9.3?} p90 {:>9.3?} ({hits} hits)",
            percentile(times.clone(), 0.5),
            percentile(times.clone(), 0.9)
        );
        all.extend(times);
    }
    println!(
        "{name:<10} search, all queries: p50 {:.3?} p90 {:.3?}",
        percentile(all.clone(), 0.5),
        percentile(all, 0.9)
    );
}

fn write_bench<S: MemoryStore>(name: &str, open: impl Fn(usize) -> S + Sync, per: usize) {
    for writers in [1usize, 8] {
        // Each writer opens its own store (connection) in its own thread, then all start at once.
        let ready = std::sync::Barrier::new(writers + 1);
        let secs = std::thread::scope(|s| {
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    let (open, ready) = (&open, &ready);
                    s.spawn(move || {
                        let store = open(w);
                        ready.wait();
                        for i in 0..per {
                            store
                                .add_learning(&NewLearning {
                                    title: format!("writer {w} learning {i}"),
                                    content: "the staging database needs the VPN".into(),
                                    category: "general".into(),
                                    created_ms: i as i64,
                                    ..Default::default()
                                })
                                .unwrap();
                        }
                    })
                })
                .collect();
            ready.wait();
            let t = Instant::now();
            for h in handles {
                h.join().unwrap();
            }
            t.elapsed().as_secs_f64()
        });
        println!(
            "{name:<10} write  {writers} writer(s) x {per}: {:.0} learnings/s",
            (writers * per) as f64 / secs
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` probes bench binaries this way
    }
    let n: usize = std::env::var("MEM_BENCH_LEARNINGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rounds = 50;
    let rows = data(n);
    let dir = tempfile::tempdir().unwrap();

    let t = Instant::now();
    let sqlite = SqliteStore::open(&dir.path().join("memory.db"), DEFAULT_BUSY_TIMEOUT).unwrap();
    load_sqlite(&sqlite, &rows);
    println!("sqlite     loaded {n} learnings in {:.1?}", t.elapsed());
    search_bench("sqlite", &sqlite, rounds);
    let wdir = dir.path().join("writes.db");
    write_bench(
        "sqlite",
        |_| SqliteStore::open(&wdir, Duration::from_secs(60)).unwrap(),
        500,
    );

    let Ok(url) = std::env::var("MEM_TEST_PG_URL") else {
        println!("postgresql: skipped (MEM_TEST_PG_URL is not set)");
        return;
    };
    let schema = format!("bench_{}", std::process::id());
    let opts = PgOptions {
        schema: schema.clone(),
        ..PgOptions::for_author("bench")
    };
    let pg = PgStore::open(&url, &opts).unwrap();
    let t = Instant::now();
    load_pg(&pg, &rows);
    println!("postgresql loaded {n} learnings in {:.1?}", t.elapsed());
    search_bench("postgresql", &pg, rounds);
    write_bench(
        "postgresql",
        |w| {
            PgStore::open(
                &url,
                &PgOptions {
                    author: format!("writer{w}"),
                    pool_size: 1,
                    ..opts.clone()
                },
            )
            .unwrap()
        },
        500,
    );
    let sql = format!("DROP SCHEMA {schema} CASCADE");
    pg.with_client(move |c| c.batch_execute(&sql)).unwrap();
}
