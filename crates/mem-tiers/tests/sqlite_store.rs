//! The generic store suite on SQLite, plus what is SQLite's own: file identity, migrations,
//! concurrent processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common {
    pub mod suite;
}

use std::path::Path;
use std::time::Duration;

use mem_tiers::*;

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, DEFAULT_BUSY_TIMEOUT).unwrap()
}

#[test]
fn sqlite_passes_the_store_suite() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::cell::Cell::new(0);
    common::suite::run_all(|| {
        n.set(n.get() + 1);
        open(&dir.path().join(format!("db{}/memory.db", n.get())))
    });
}

#[test]
fn ranking_under_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let capped = open(&dir.path().join("capped.db")).with_rank_cap(10);
    let exact = open(&dir.path().join("exact.db"));
    // The word index and the trigram index ("ebrafis" is a part of the word).
    common::suite::ranking_under_the_cap(&capped, &exact, &["zebrafish", "ebrafis"]);
}

/// The trigram pass's probe (the oldest `cap + 1` matches, enough when there are no more than
/// the cap) ranks exactly as the capped pass: 8 matches of a part of a word, 5 visible. With a
/// cap of 10 the probe holds every match; with a cap of 6 it does not and the capped pass
/// (newest first) ranks the 5 visible ones. Same hits, order and scores.
#[test]
fn the_trigram_probe_ranks_as_the_capped_pass() {
    let dir = tempfile::tempdir().unwrap();
    let probed = open(&dir.path().join("probed.db")).with_rank_cap(10);
    let capped = open(&dir.path().join("capped.db")).with_rank_cap(6);
    for s in [&probed, &capped] {
        for i in 0..8i64 {
            let content = "pelican ".repeat(1 + i as usize % 3) + "seen near the harbour";
            s.add_learning(&NewLearning {
                title: format!("bird {i}"),
                content,
                category: "tip".into(),
                project_key: Some(if i % 3 == 1 { "p2" } else { "p1" }.into()),
                created_ms: i,
                ..Default::default()
            })
            .unwrap();
        }
    }
    let hits = |s: &SqliteStore| -> Vec<(String, String, f64)> {
        s.search(&SearchQuery {
            text: "elica".into(),
            visible_in: Some("p1".into()),
            limit: 10,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| (h.id, h.title, h.score))
        .collect()
    };
    let got = hits(&probed);
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(got, hits(&capped));
}

#[test]
fn a_title_match_beyond_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let capped = open(&dir.path().join("capped.db")).with_rank_cap(10);
    common::suite::a_title_match_beyond_the_cap(&capped, &["kestrel", "estre"]);
}

#[test]
fn foreign_and_damaged_files_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "not a database at all, just text\n").unwrap();
    let e = SqliteStore::open(&text, DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert!(matches!(e, Error::Foreign { .. }), "{e}");
    assert!(e.to_string().contains("notes.db"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "not a database at all, just text\n"
    );

    let other = dir.path().join("other.db");
    let c = rusqlite::Connection::open(&other).unwrap();
    c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    let e = SqliteStore::open(&other, DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert!(e.to_string().contains("another program"), "{e}");

    let good = dir.path().join("memory.db");
    drop(open(&good));
    let c = rusqlite::Connection::open(&good).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    let e = SqliteStore::open(&good, DEFAULT_BUSY_TIMEOUT).unwrap_err();
    assert!(matches!(e, Error::TooNew { found: 99, .. }), "{e}");
}

#[test]
fn a_version_1_database_migrates_and_gains_the_trigram_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let v1 = SqliteStore::open_at_version(&path, DEFAULT_BUSY_TIMEOUT, 1).unwrap();
    let l = v1
        .add_learning(&NewLearning {
            title: "SQL 注入防护".into(),
            content: "永远使用参数化查询".into(),
            category: "error".into(),
            created_ms: 1,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(v1.stats().unwrap().schema_version, 1);
    drop(v1);
    let v2 = open(&path);
    assert_eq!(v2.stats().unwrap().schema_version, schema::LATEST_VERSION);
    let hits = v2
        .search(&SearchQuery {
            text: "参数化查询".into(),
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
        [format!("L{}", l.id)]
    );
    assert_eq!(v2.learning(l.id).unwrap().unwrap().title, "SQL 注入防护");
}

/// A version 3 database gains `docs_visibility` (schema version 4) with an entry per
/// document already stored, and its searches find what they found before.
#[test]
fn a_version_3_database_gains_the_visibility_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let v3 = SqliteStore::open_at_version(&path, DEFAULT_BUSY_TIMEOUT, 3).unwrap();
    let mut ids = Vec::new();
    for (title, project) in [
        ("pelican mine", Some("p1")),
        ("pelican user-wide", None),
        ("pelican other", Some("p2")),
    ] {
        let l = v3
            .add_learning(&NewLearning {
                title: title.into(),
                content: "the pelican job needs the staging vpn".into(),
                category: "tip".into(),
                project_key: project.map(Into::into),
                created_ms: 1,
                ..Default::default()
            })
            .unwrap();
        ids.push(format!("L{}", l.id));
    }
    let index_rows = |s: &SqliteStore| -> i64 {
        s.connection()
            .query_row(
                "SELECT count(*) FROM docs INDEXED BY docs_visibility WHERE rowid > 0",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert!(
        v3.connection()
            .query_row(
                "SELECT count(*) FROM docs INDEXED BY docs_visibility",
                [],
                |r| r.get::<_, i64>(0)
            )
            .is_err(),
        "version 3 has no docs_visibility"
    );
    drop(v3);
    let v4 = open(&path);
    assert_eq!(v4.stats().unwrap().schema_version, 4);
    assert_eq!(schema::LATEST_VERSION, 4);
    assert_eq!(index_rows(&v4), 3);
    let found = |text: &str| -> Vec<String> {
        v4.search(&SearchQuery {
            text: text.into(),
            visible_in: Some("p1".into()),
            limit: 10,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
    };
    for text in ["pelican vpn", "elica", "ican"] {
        let mut got = found(text);
        got.sort();
        assert_eq!(got, [ids[0].clone(), ids[1].clone()], "{text}");
    }
}

/// Visibility read through `docs_visibility` is the visibility of the rows: the hits, their
/// order and their scores are those of the same statement joined to the rows themselves
/// (`NOT INDEXED`), in each project and user-wide; a learning moved to another project
/// follows in both, and a deleted one leaves no entry in the index or in the word index.
#[test]
fn visibility_through_the_index_is_that_of_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("memory.db"));
    let mut ids = Vec::new();
    for i in 0..30i64 {
        let project = match i % 3 {
            0 => Some(format!("p{}", i % 2)),
            1 => None,
            _ => Some("p2".to_owned()),
        };
        let l = s
            .add_learning(&NewLearning {
                title: format!("heron {}", "tide ".repeat((i % 4) as usize)),
                content: format!("heron watch {} tide {i}", "marsh ".repeat((i % 5) as usize)),
                category: "tip".into(),
                project_key: project,
                created_ms: i,
                ..Default::default()
            })
            .unwrap();
        ids.push(l.id);
    }
    // The same ranking, joined to the rows (no index), as the search's word pass.
    let reference = |text: &str, project: Option<&str>| -> Vec<(String, f64)> {
        let m = text
            .split(' ')
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" AND ");
        s.connection()
            .prepare(
                "SELECT d.doc_id, bm25(docs_word, 2.0, 1.0) AS score FROM docs_word \
                 JOIN docs d NOT INDEXED ON d.rowid = docs_word.rowid \
                 WHERE docs_word MATCH ?1 \
                 AND (?2 IS NULL OR d.project_key = ?2 OR d.project_key IS NULL) \
                 ORDER BY score, d.rowid DESC LIMIT 10",
            )
            .unwrap()
            .query_map(rusqlite::params![m, project], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let check = |text: &str, project: Option<&str>| {
        let hits = s
            .search(&SearchQuery {
                text: text.into(),
                visible_in: project.map(Into::into),
                limit: 10,
                ..Default::default()
            })
            .unwrap();
        let got: Vec<(String, f64)> = hits.into_iter().map(|h| (h.id, h.score)).collect();
        let want = reference(text, project);
        assert!(!want.is_empty(), "{text} in {project:?}");
        assert_eq!(got, want, "{text} in {project:?}");
    };
    let all = |check: &dyn Fn(&str, Option<&str>)| {
        for text in ["heron", "tide", "heron marsh", "marsh tide"] {
            for project in [Some("p0"), Some("p1"), Some("p2"), None] {
                check(text, project);
            }
        }
    };
    all(&check);
    let visible_in = |project: &str, id: i64| {
        s.search(&SearchQuery {
            text: "heron".into(),
            visible_in: Some(project.into()),
            limit: 50,
            ..Default::default()
        })
        .unwrap()
        .iter()
        .any(|h| h.id == format!("L{id}"))
    };
    // Move a learning of p0 to p1: the index follows the row.
    let moved = ids[0];
    assert!(visible_in("p0", moved) && !visible_in("p1", moved));
    s.connection()
        .execute(
            "UPDATE learnings SET project_key = 'p1' WHERE id = ?1",
            [moved],
        )
        .unwrap();
    assert!(!visible_in("p0", moved) && visible_in("p1", moved));
    all(&check);
    // Delete one: nothing of it is left in either index.
    let gone = ids[3];
    let rowid: i64 = s
        .connection()
        .query_row(
            "SELECT rowid FROM docs WHERE doc_id = ?1",
            [format!("L{gone}")],
            |r| r.get(0),
        )
        .unwrap();
    assert!(s.delete_learning(gone).unwrap());
    let count = |sql: &str| -> i64 {
        s.connection()
            .query_row(sql, [rowid], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(
        count("SELECT count(*) FROM docs INDEXED BY docs_visibility WHERE rowid = ?1"),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM docs_word WHERE docs_word MATCH 'heron' AND rowid = ?1"),
        0
    );
    assert!(!visible_in("p0", gone) && !visible_in("p1", gone));
    all(&check);
}

#[test]
fn a_locked_database_is_a_clear_error_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let a = open(&path);
    let b = SqliteStore::open(&path, Duration::from_millis(50)).unwrap();
    a.connection().execute_batch("BEGIN IMMEDIATE").unwrap();
    let e = b.set_user_preference("model", Some("x")).unwrap_err();
    assert!(matches!(e, Error::Locked { waited_ms: 50, .. }), "{e}");
    assert!(e.to_string().contains("memory.db"), "{e}");
    a.connection().execute_batch("COMMIT").unwrap();
    b.set_user_preference("model", Some("x")).unwrap();
    assert_eq!(a.user_preferences().unwrap().len(), 1);
}

#[test]
fn a_read_only_database_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    drop(open(&path));
    // Checkpointed, so the file alone holds everything; then read-only.
    for f in ["memory.db-wal", "memory.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let result = SqliteStore::open(&path, DEFAULT_BUSY_TIMEOUT)
        .and_then(|s| s.set_user_preference("model", Some("x")));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if nix_is_root() {
        return; // root writes anyway
    }
    let e = result.unwrap_err();
    assert!(e.to_string().contains("memory.db"), "{e}");
}

fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Worker half of the concurrency test: runs only inside the child processes it spawns.
#[test]
fn concurrency_worker() {
    let (Ok(path), Ok(tag)) = (
        std::env::var("MEM_TIERS_TEST_DB"),
        std::env::var("MEM_TIERS_TEST_TAG"),
    ) else {
        return;
    };
    let store = SqliteStore::open(Path::new(&path), Duration::from_secs(30)).unwrap();
    for i in 0..1000 {
        store
            .add_learning(&NewLearning {
                title: format!("{tag} learning {i}"),
                content: format!("content {tag} {i}"),
                category: "general".into(),
                created_ms: i,
                ..Default::default()
            })
            .unwrap();
    }
}

#[test]
fn two_processes_adding_1000_learnings_each_lose_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["alpha", "beta"]
        .iter()
        .map(|tag| {
            std::process::Command::new(&exe)
                .args([
                    "concurrency_worker",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("MEM_TIERS_TEST_DB", &path)
                .env("MEM_TIERS_TEST_TAG", tag)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let store = open(&path);
    let all = store.learnings(&LearningFilter::default()).unwrap();
    assert_eq!(all.len(), 2000);
    let stats = store.stats().unwrap();
    assert_eq!(stats.documents.get("learning"), Some(&2000));
    for tag in ["alpha", "beta"] {
        let hits = store
            .search(&SearchQuery {
                text: format!("{tag} 999"),
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(hits.len(), 1, "{tag}");
    }
}

/// The files of the database at `path` (`memory.db`, `-wal`, `-shm`, `-journal`) holding
/// `needle`.
fn db_files_with(path: &Path, needle: &str) -> Vec<String> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|s| format!("{}{s}", path.display()))
        .filter(|p| {
            std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

fn learning_with(marker: &str, n: i64) -> NewLearning {
    NewLearning {
        title: format!("token {marker}"),
        content: format!("the deploy token is {marker} until Friday"),
        category: "error".into(),
        tags: vec![marker.into()],
        context: Some(format!("in {marker}.env")),
        created_ms: n,
        ..Default::default()
    }
}

#[test]
fn a_deleted_learning_leaves_no_byte_in_the_database_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let s = open(&path);
    let marker = "qpx5forgottensecret8w";
    for i in 0..30 {
        s.add_learning(&learning_with(&format!("neighbour{i}"), i))
            .unwrap();
    }
    let l = s.add_learning(&learning_with(marker, 99)).unwrap();
    assert!(!db_files_with(&path, marker).is_empty());
    assert!(s.delete_learning(l.id).unwrap());
    s.purge_deleted().unwrap();
    for needle in [marker, &marker[3..]] {
        assert_eq!(
            db_files_with(&path, needle),
            Vec::<String>::new(),
            "{needle}"
        );
    }
    // The neighbours are still found through both indexes.
    for q in ["neighbour29", "ghbour1"] {
        let hits = s
            .search(&SearchQuery {
                text: q.into(),
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        assert!(!hits.is_empty(), "{q}");
    }
}

#[test]
fn a_version_2_database_loses_the_text_it_deleted_when_it_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let marker = "vvk3deletedbeforev3zz";
    let v2 = SqliteStore::open_at_version(&path, DEFAULT_BUSY_TIMEOUT, 2).unwrap();
    for i in 0..10 {
        v2.add_learning(&learning_with(&format!("other{i}"), i))
            .unwrap();
    }
    let l = v2.add_learning(&learning_with(marker, 50)).unwrap();
    // Deleted by an old version: no secure delete, a plain checkpoint.
    v2.connection()
        .execute_batch("PRAGMA secure_delete = OFF")
        .unwrap();
    for tbl in ["docs_word", "docs_trigram"] {
        v2.connection()
            .execute_batch(&format!(
                "INSERT INTO {tbl}({tbl}, rank) VALUES ('secure-delete', 0)"
            ))
            .unwrap();
    }
    assert!(v2.delete_learning(l.id).unwrap());
    v2.connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop(v2);
    assert!(!db_files_with(&path, marker).is_empty());
    let v3 = open(&path);
    assert_eq!(v3.stats().unwrap().schema_version, schema::LATEST_VERSION);
    for needle in [marker, &marker[3..]] {
        assert_eq!(
            db_files_with(&path, needle),
            Vec::<String>::new(),
            "{needle}"
        );
    }
    assert_eq!(v3.stats().unwrap().learnings, 10);
}

/// The number of segments of a full-text index (`docs_word` or `docs_trigram`).
/// Words of the learnings the search-index tests write: English, a CJK run, an identifier.
const WORDS: [&str; 7] = [
    "heron",
    "tide",
    "marsh",
    "kestrel",
    "參數化",
    "缓存",
    "retry_policy",
];

fn segments(s: &SqliteStore, table: &str) -> i64 {
    s.index_segments(table, 1).unwrap()
}

/// A store written one learning at a time holds several segments per index; merged, one each,
/// and every search finds the same hits with the same scores (words, parts of words, CJK),
/// with deleted learnings among them.
#[test]
fn a_merged_search_index_finds_what_the_segments_found() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("memory.db"));
    let mut ids = Vec::new();
    for i in 0..400usize {
        let w = |k: usize| WORDS[(i * 7 + k * 3) % WORDS.len()];
        let l = s
            .add_learning(&NewLearning {
                title: format!("{} {} {i}", w(0), w(1)),
                content: format!("{} near the {} at {i}, {}", w(2), w(3), w(4)),
                category: "tip".into(),
                project_key: [Some("p1"), Some("p2"), None][i % 3].map(str::to_owned),
                created_ms: i as i64,
                ..Default::default()
            })
            .unwrap();
        ids.push(l.id);
    }
    for id in ids.iter().step_by(9) {
        assert!(s.delete_learning(*id).unwrap());
    }
    assert!(segments(&s, "docs_word") > 1 && segments(&s, "docs_trigram") > 1);
    let queries = [
        "heron",
        "tide marsh",
        "kestrel 17",
        "etry_pol",
        "參數",
        "缓存 heron",
        "arsh",
        "zzz",
    ];
    let search = |q: &str, project: Option<&str>| common::suite::hits_and_scores(&s, q, project);
    let all = || -> Vec<Vec<(String, f64)>> {
        queries
            .iter()
            .flat_map(|q| [Some("p1"), Some("p2"), None].map(|p| search(q, p)))
            .collect()
    };
    let before = all();
    let found = before.iter().filter(|h| !h.is_empty()).count();
    assert!(found >= 15, "{found}: {before:?}");
    s.optimize_search_index().unwrap();
    assert_eq!(segments(&s, "docs_word"), 1);
    assert_eq!(segments(&s, "docs_trigram"), 1);
    assert_eq!(all(), before);
    // Still one index: a write after the merge is found, and merging again changes nothing.
    s.add_learning(&NewLearning {
        title: "heron after the merge".into(),
        content: "seen".into(),
        category: "tip".into(),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(search("after the merge", None).len(), 1);
    s.optimize_search_index().unwrap();
    assert_eq!(segments(&s, "docs_trigram"), 1);
    // FTS5's own check of each index against the documents (an error when they differ).
    for table in ["docs_word", "docs_trigram"] {
        s.connection()
            .execute(
                &format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"),
                [],
            )
            .unwrap();
    }
}

/// Writes learnings `range` in one transaction (one segment per full-text index).
fn add_in_one_transaction(s: &SqliteStore, range: std::ops::Range<usize>) {
    let c = s.connection();
    c.execute_batch("BEGIN").unwrap();
    for n in range {
        let w = |k: usize| WORDS[(n * 7 + k * 3) % WORDS.len()];
        c.execute(
            "INSERT INTO learnings (title, content, category, tags, project_key, created_ms, \
             last_used_ms) VALUES (?1, ?2, 'tip', '[]', ?3, ?4, ?4)",
            rusqlite::params![
                format!("{} {} note {n}", w(0), w(1)),
                format!(
                    "{} near the {} at {n}, then {} by {}: k{n}x q{}z v{n}",
                    w(2),
                    w(3),
                    w(4),
                    w(5),
                    n * 31
                ),
                [Some("p1"), None][n % 2],
                n as i64
            ],
        )
        .unwrap();
    }
    c.execute_batch("COMMIT").unwrap();
}

fn fragmented(s: &SqliteStore) -> Vec<&'static str> {
    SqliteStore::fragmented_indexes(s.connection())
        .unwrap()
        .collect()
}

/// After writes in large batches each full-text index holds several large segments:
/// `tidy_search_index` merges them (the same hits and scores, an index FTS5 finds
/// consistent). Then it does nothing while only small segments join the large one, over
/// hundreds of writes each followed by a tidy (the store's own write path), which leave few
/// segments, nor after one more transaction of a fortieth of the store; after a transaction
/// of an eighth (the writes since the merge past a sixteenth of the index) it merges again.
#[test]
fn tidy_merges_once_the_writes_make_up_a_share_of_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("memory.db"));
    let c = s.connection();
    for batch in 0..3 {
        add_in_one_transaction(&s, batch * 2500..(batch + 1) * 2500);
    }
    assert_eq!(fragmented(&s), ["docs_word", "docs_trigram"]);
    let queries = [
        "heron",
        "tide marsh",
        "note 4242",
        "etry_pol",
        "參數",
        "zzz",
    ];
    let all = || -> Vec<Vec<(String, f64)>> {
        queries
            .iter()
            .flat_map(|q| [Some("p1"), None].map(|p| common::suite::hits_and_scores(&s, q, p)))
            .collect()
    };
    let before = all();
    assert!(
        before.iter().filter(|h| !h.is_empty()).count() >= 8,
        "{before:?}"
    );
    assert!(s.tidy_search_index().unwrap());
    assert_eq!(segments(&s, "docs_word"), 1);
    assert_eq!(segments(&s, "docs_trigram"), 1);
    assert_eq!(all(), before);
    for table in ["docs_word", "docs_trigram"] {
        c.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        )
        .unwrap();
    }
    // Small writes beside the large segment: nothing to merge, nothing written by the tidy.
    for i in 0..300 {
        s.add_learning(&NewLearning {
            title: format!("heron after the tidy {i}"),
            content: "seen".into(),
            category: "tip".into(),
            ..Default::default()
        })
        .unwrap();
        let changes = c.total_changes();
        assert!(!s.tidy_search_index().unwrap(), "write {i}");
        assert_eq!(c.total_changes(), changes);
    }
    for table in ["docs_word", "docs_trigram"] {
        let n = segments(&s, table);
        assert!(n <= 24, "{table}: {n} segments after 300 writes");
    }
    // The search's limit (50) of the 300 written since.
    assert_eq!(
        common::suite::hits_and_scores(&s, "after the tidy", None).len(),
        50
    );
    // A fortieth of the store more: still no merge; an eighth: the trigram index is merged.
    add_in_one_transaction(&s, 7500..7690);
    assert!(fragmented(&s).is_empty(), "{:?}", fragmented(&s));
    assert!(!s.tidy_search_index().unwrap());
    add_in_one_transaction(&s, 7690..8630);
    assert!(fragmented(&s).contains(&"docs_trigram"));
    assert!(s.tidy_search_index().unwrap());
    assert_eq!(segments(&s, "docs_trigram"), 1);
    assert!(fragmented(&s).is_empty());
}

/// The tidy is optional work after a write that has landed: while another process holds the
/// write lock it merges nothing and reports no error (the next write merges), and it leaves
/// the connection's busy timeout as it was.
#[test]
fn tidy_gives_way_to_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let s = open(&path);
    for batch in 0..3 {
        add_in_one_transaction(&s, batch * 2500..(batch + 1) * 2500);
    }
    assert!(!fragmented(&s).is_empty());
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert!(!s.tidy_search_index().unwrap());
    assert!(!fragmented(&s).is_empty());
    let timeout: i64 = s
        .connection()
        .pragma_query_value(None, "busy_timeout", |r| r.get(0))
        .unwrap();
    assert_eq!(timeout, DEFAULT_BUSY_TIMEOUT.as_millis() as i64);
    other.execute_batch("COMMIT").unwrap();
    assert!(s.tidy_search_index().unwrap());
    assert!(fragmented(&s).is_empty());
}
