//! The setup shared by the `tiers` and `team` benchmarks: one seeded generator of learnings
//! (the same rows for every backend and every run), the queries asked of them, and bulk loads
//! into SQLite (one transaction) and PostgreSQL (`COPY`, indexes built after the load).
#![allow(dead_code)]

use std::io::Write;

use mem_tiers::{MemoryStore, PgStore, SqliteStore};

/// The project a tenth of the learnings belong to; searches run "visible in" it.
pub const PROJECT: &str = "git:/bench/project/.git";

/// A xorshift64 generator: fast, seeded, the same sequence on every machine.
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
}

/// Common words: half the words of a learning come from here (each in ~14 % of documents), so
/// the word index has long posting lists as in a real corpus of lessons.
pub const WORDS: &[&str] = &[
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
    "database",
    "needs",
    "vpn",
    "terraform",
    "apply",
    "never",
    "by",
    "hand",
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
    "参数化查询",
    "依赖注入",
    "测试",
    "覆盖率",
    "缓存",
    "部署",
    "回滚",
    "日志",
];

/// Syllables of the rare vocabulary: 24^3 = 13,824 made-up words, drawn with a skew (low
/// indices much more often), so word frequencies look like a real corpus's.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "za", "be", "do", "fu", "ge", "hi", "jo", "ku",
    "la", "me", "no", "pi", "qu", "re", "si", "tu",
];

fn word(rng: &mut Rng, out: &mut String) {
    if rng.next().is_multiple_of(2) {
        out.push_str(WORDS[rng.next() % WORDS.len()]);
        return;
    }
    let n = SYLLABLES.len().pow(3);
    // The product of two uniforms: a skewed draw.
    let i = (rng.next() % n) * (rng.next() % n) / n;
    let s = SYLLABLES.len();
    out.push_str(SYLLABLES[i % s]);
    out.push_str(SYLLABLES[(i / s) % s]);
    out.push_str(SYLLABLES[i / s / s]);
}

/// `words` generated words separated by spaces.
pub fn text(rng: &mut Rng, words: usize) -> String {
    let mut out = String::with_capacity(words * 8);
    for k in 0..words {
        if k > 0 {
            out.push(' ');
        }
        word(rng, &mut out);
    }
    out
}

/// One generated learning.
pub struct Row {
    /// Four words and the row number.
    pub title: String,
    /// Twenty words; every 97th names a path, every 101st an identifier.
    pub content: String,
    /// One of four categories.
    pub category: &'static str,
    /// A JSON array of one tag.
    pub tags: String,
    /// [`PROJECT`] for a tenth, user-wide (`None`) for a tenth, eight other projects for the rest.
    pub project: Option<String>,
    /// The row number, as milliseconds.
    pub created_ms: i64,
}

/// The `n` learnings of every benchmark, generated lazily (a million do not sit in memory).
pub fn rows(n: usize) -> impl Iterator<Item = Row> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    (0..n).map(move |i| {
        let title = format!("{} {i}", text(&mut rng, 4));
        let mut content = text(&mut rng, 20);
        if i.is_multiple_of(97) {
            content.push_str(&format!(" see crates/mem-{}/src/lib.rs", i % 13));
        }
        if i.is_multiple_of(101) {
            content.push_str(&format!(" TIER{}_MAX_TOKENS", i % 7));
        }
        let project = match rng.next() % 10 {
            0 => Some(PROJECT.to_owned()),
            1 => None,
            k => Some(format!("git:/bench/other{k}/.git")),
        };
        Row {
            title,
            content,
            category: ["error", "best-practice", "general", "tip"][i % 4],
            tags: format!("[\"t{}\"]", i % 50),
            project,
            created_ms: i as i64 * 1000,
        }
    })
}

/// Two-word queries taken from the titles of 20 learnings spread over the first `n` (their
/// second and third words), so every query has at least one hit; the same for every backend.
pub fn title_queries(n: usize) -> Vec<String> {
    let step = (n / 20).max(1);
    let wanted: Vec<usize> = (0..20).map(|k| (k * step).min(n - 1)).collect();
    rows(n)
        .enumerate()
        .filter(|(i, _)| wanted.contains(i))
        .map(|(_, r)| {
            let w: Vec<&str> = r.title.split(' ').collect();
            format!("{} {}", w[1], w[2])
        })
        .collect()
}

/// Queries of each kind a user types: common words, Chinese (a substring of a longer run), an
/// identifier, a path, nothing found.
pub const KIND_QUERIES: &[&str] = &[
    "staging vpn",
    "terraform apply",
    "pytest coverage fixture",
    "参数化",
    "TIER3_MAX_TOKENS",
    "mem-7/src/lib.rs",
    "zzz-not-there",
    "retry",
];

/// Loads `rows` into a SQLite store in one transaction: the learnings through the store's own
/// trigger (so each document is exactly what `add_learning` builds), with the two FTS
/// indexes' insert triggers dropped during the load and the indexes then built in bulk
/// (`'rebuild'`), the triggers re-created from their own definitions.
pub fn load_sqlite(store: &SqliteStore, rows: impl Iterator<Item = Row>) {
    let c = store.connection();
    let cache: i64 = c
        .pragma_query_value(None, "cache_size", |r| r.get(0))
        .unwrap();
    c.execute_batch("PRAGMA cache_size = -262144; PRAGMA synchronous = OFF; BEGIN")
        .unwrap();
    let triggers: Vec<String> = c
        .prepare(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' \
             AND name IN ('docs_word_ai', 'docs_trigram_ai')",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(triggers.len(), 2);
    c.execute_batch("DROP TRIGGER docs_word_ai; DROP TRIGGER docs_trigram_ai")
        .unwrap();
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
    c.execute_batch(
        "INSERT INTO docs_word(docs_word) VALUES ('rebuild'); \
         INSERT INTO docs_trigram(docs_trigram) VALUES ('rebuild');",
    )
    .unwrap();
    for t in &triggers {
        c.execute_batch(t).unwrap();
    }
    c.execute_batch(&format!(
        "COMMIT; PRAGMA optimize; PRAGMA cache_size = {cache}; PRAGMA synchronous = FULL"
    ))
    .unwrap();
}

/// Escapes a value for `COPY ... FROM STDIN` text format (`\N` is NULL).
fn copy_field(out: &mut Vec<u8>, v: Option<&str>) {
    let Some(v) = v else {
        out.extend_from_slice(b"\\N");
        return;
    };
    for b in v.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// Loads `rows` into a team store as its author: the search indexes (`GIN` over `tsv` and
/// `pg_trgm`) are dropped, the learnings streamed in with `COPY`, their documents built with
/// one `INSERT ... SELECT` (the body as `add_learning` writes it: content, context, tags), then
/// the indexes re-created from their own definitions and the tables analysed. One transaction.
pub fn load_pg(store: &PgStore, rows: impl Iterator<Item = Row> + Send) {
    let author = store.author().to_owned();
    store
        .with_client(move |c| {
            let mut tx = c.transaction()?;
            tx.batch_execute("SET LOCAL maintenance_work_mem = '256MB'")?;
            let defs: Vec<(String, String)> = tx
                .query(
                    "SELECT indexname, indexdef FROM pg_indexes \
                     WHERE schemaname = current_schema() AND tablename = 'docs' \
                     AND indexname IN ('docs_tsv', 'docs_trgm', 'docs_title_tsv')",
                    &[],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            for (name, _) in &defs {
                tx.batch_execute(&format!("DROP INDEX {name}"))?;
            }
            {
                let mut w = tx.copy_in(
                    "COPY learnings (author, title, content, category, tags, project_key, \
                     created_ms, last_used_ms) FROM STDIN",
                )?;
                let mut buf = Vec::with_capacity(1 << 20);
                for r in rows {
                    let created = r.created_ms.to_string();
                    for (k, v) in [
                        Some(author.as_str()),
                        Some(r.title.as_str()),
                        Some(r.content.as_str()),
                        Some(r.category),
                        Some(r.tags.as_str()),
                        r.project.as_deref(),
                        Some(created.as_str()),
                        Some(created.as_str()),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        if k > 0 {
                            buf.push(b'\t');
                        }
                        copy_field(&mut buf, v);
                    }
                    buf.push(b'\n');
                    if buf.len() > 1 << 20 {
                        w.write_all(&buf).unwrap();
                        buf.clear();
                    }
                }
                w.write_all(&buf).unwrap();
                w.finish()?;
            }
            tx.execute(
                "INSERT INTO docs (author, team, doc_id, source, scope, project_key, title, body, \
                 path, updated_ms) \
                 SELECT author, team, 'L' || id, 'learning', \
                 CASE WHEN project_key IS NULL THEN 'user' ELSE 'project' END, project_key, \
                 title, content || chr(10) || coalesce(context, '') || chr(10) \
                 || array_to_string(ARRAY(SELECT json_array_elements_text(tags::json)), ' '), \
                 NULL, created_ms FROM learnings WHERE author = $1",
                &[&author],
            )?;
            for (_, def) in &defs {
                tx.batch_execute(def)?;
            }
            tx.commit()?;
            c.batch_execute("ANALYZE learnings; ANALYZE docs")
        })
        .unwrap();
}

/// The learnings a store holds (to check a load).
pub fn count(store: &dyn MemoryStore) -> u64 {
    store.stats().unwrap().learnings
}
