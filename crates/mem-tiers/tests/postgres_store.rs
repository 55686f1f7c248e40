//! The generic store suite on PostgreSQL, plus what is the team store's own: scopes and
//! isolation between authors and teams, bad URLs, schema versions, migrating a SQLite store,
//! concurrent writer processes.
//!
//! Needs a server: `MEM_TEST_PG_URL=postgresql://...` (`.ci/postgres.sh start` prints one).
//! Without it every test here says so on stderr and passes; with `MEM_REQUIRE_PG=1` (set by
//! `.ci/run`) a missing server is a failure instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common {
    pub mod suite;
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mem_sources::FromProjectWith;
use mem_tiers::*;

static SCHEMAS: AtomicUsize = AtomicUsize::new(0);

/// PostgreSQL: `MEM_TEST_PG_URL`, or the test is skipped (a failure with `MEM_REQUIRE_PG=1`).
fn server() -> Option<String> {
    mem_core::testing::pg_url_or_skip(env!("CARGO_CRATE_NAME"))
}

/// A schema no other test (or test process) uses.
fn fresh_schema(tag: &str) -> String {
    format!(
        "t_{tag}_{}_{}_{}",
        std::process::id(),
        SCHEMAS.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    )
}

fn opts(schema: &str, author: &str, team: Option<&str>) -> PgOptions {
    PgOptions {
        schema: schema.into(),
        team: team.map(str::to_owned),
        ..PgOptions::for_author(author)
    }
}

fn open(url: &str, schema: &str, author: &str, team: Option<&str>) -> PgStore {
    PgStore::open(url, &opts(schema, author, team)).unwrap()
}

fn drop_schema(url: &str, schema: &str) {
    let s = open(url, schema, "cleanup", None);
    let sql = format!("DROP SCHEMA \"{schema}\" CASCADE");
    s.with_client(move |c| c.batch_execute(&sql)).unwrap();
}

fn ids(hits: &[SearchHit]) -> Vec<String> {
    let mut v: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    v.sort();
    v
}

fn find(s: &PgStore, q: &str) -> Vec<SearchHit> {
    s.search(&SearchQuery {
        text: q.into(),
        limit: 50,
        ..Default::default()
    })
    .unwrap()
}

fn new_learning(title: &str, project: Option<&str>, team: bool) -> NewLearning {
    NewLearning {
        title: title.into(),
        content: format!("{title} content"),
        category: "general".into(),
        project_key: project.map(str::to_owned),
        created_ms: 1,
        share_with_team: team,
        ..Default::default()
    }
}

#[test]
fn postgres_passes_the_store_suite() {
    let Some(url) = server() else { return };
    let schemas = std::cell::RefCell::new(Vec::new());
    common::suite::run_all(|| {
        let schema = fresh_schema("suite");
        schemas.borrow_mut().push(schema.clone());
        open(&url, &schema, "alice", Some("core"))
    });
    for s in schemas.into_inner() {
        drop_schema(&url, &s);
    }
}

#[test]
fn ranking_under_the_cap() {
    let Some(url) = server() else { return };
    let (a, b) = (fresh_schema("capped"), fresh_schema("exact"));
    let capped = open(&url, &a, "alice", None).with_rank_cap(10);
    let exact = open(&url, &b, "alice", None);
    // The word pass ranks; the substring pass returns the newest matches.
    common::suite::ranking_under_the_cap(&capped, &exact, &["zebrafish"]);
    drop_schema(&url, &a);
    drop_schema(&url, &b);
}

#[test]
fn a_title_match_beyond_the_cap() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("title_cap");
    let capped = open(&url, &schema, "alice", None).with_rank_cap(10);
    common::suite::a_title_match_beyond_the_cap(&capped, &["kestrel"]);
    drop_schema(&url, &schema);
}

#[test]
fn scopes_isolate_authors_and_teams_share() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("scopes");
    let alice = open(&url, &schema, "alice", Some("core"));
    let bob = open(&url, &schema, "bob", Some("core"));
    let carol = open(&url, &schema, "carol", Some("other"));

    let a_user = alice
        .add_learning(&new_learning("zebra alice private", None, false))
        .unwrap();
    let a_proj = alice
        .add_learning(&new_learning("zebra alice project", Some("p"), false))
        .unwrap();
    let a_team = alice
        .add_learning(&new_learning(
            "zebra staging needs the VPN",
            Some("p"),
            true,
        ))
        .unwrap();
    assert_eq!(a_user.scope(), "user");
    assert_eq!(a_proj.scope(), "project");
    assert_eq!(a_team.scope(), "team");
    assert_eq!(a_team.team.as_deref(), Some("core"));
    assert_eq!(a_team.author.as_deref(), Some("alice"));
    let b_user = bob
        .add_learning(&new_learning("zebra bob private", None, false))
        .unwrap();
    alice.set_user_preference("editor", Some("vim")).unwrap();

    // Alice sees her own three and nothing of Bob's.
    let l = |id: i64| format!("L{id}");
    assert_eq!(
        ids(&find(&alice, "zebra")),
        ids(&[a_user.id, a_proj.id, a_team.id].map(|i| SearchHit {
            id: l(i),
            source: SourceKind::Learning,
            scope: String::new(),
            title: String::new(),
            snippet: String::new(),
            path: None,
            updated_ms: 0,
            score: 0.0
        }))
    );
    // Bob sees his own and the team's, never Alice's private ones: not by search (word or
    // substring), listing, id, document, category, stats, touch or delete.
    let bob_hits = find(&bob, "zebra");
    let mut want = vec![l(b_user.id), l(a_team.id)];
    want.sort();
    assert_eq!(ids(&bob_hits), want);
    let team_hit = bob_hits.iter().find(|h| h.id == l(a_team.id)).unwrap();
    assert_eq!(team_hit.scope, "team", "search says which is which");
    assert!(find(&bob, "alice private").is_empty());
    assert!(find(&bob, "ice priv").is_empty(), "substring pass too");
    let listed: Vec<i64> = bob
        .learnings(&LearningFilter::default())
        .unwrap()
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(listed, [b_user.id, a_team.id]);
    assert_eq!(bob.learning(a_user.id).unwrap(), None);
    assert_eq!(bob.learning(a_proj.id).unwrap(), None);
    assert_eq!(bob.document(&l(a_user.id)).unwrap(), None);
    assert_eq!(
        bob.learning(a_team.id).unwrap().unwrap().author.as_deref(),
        Some("alice")
    );
    assert_eq!(bob.stats().unwrap().learnings, 2);
    assert!(bob.user_preferences().unwrap().is_empty());
    assert!(!bob.delete_learning(a_user.id).unwrap());
    bob.touch_learnings(&[a_user.id], 99).unwrap();
    assert_eq!(alice.learning(a_user.id).unwrap().unwrap().last_used_ms, 1);
    let all = Expiry {
        project_before_ms: Some(i64::MAX),
        user_before_ms: Some(i64::MAX),
    };
    let expired = bob.expire_learnings(all, None, false).unwrap();
    assert_eq!(
        expired.iter().map(|x| x.id).collect::<Vec<_>>(),
        [b_user.id],
        "a sweep deletes only its author's learnings"
    );
    assert!(alice.learning(a_team.id).unwrap().is_some());
    assert!(alice.learning(a_user.id).unwrap().is_some());

    // Another team sees none of it.
    assert!(find(&carol, "zebra").is_empty());
    assert_eq!(carol.learning(a_team.id).unwrap(), None);
    assert_eq!(carol.stats().unwrap().learnings, 0);

    // A project's team items show in every project of a member; private ones only in theirs.
    let in_q: Vec<i64> = alice
        .learnings(&LearningFilter {
            visible_in: Some("q".into()),
            ..Default::default()
        })
        .unwrap()
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(in_q, [a_team.id, a_user.id]);

    // Files indexed by one author stay theirs: the same path for two authors never clashes.
    let state = FileState {
        path: "/home/u/.mewcode/memories.md".into(),
        root: "/home/u/.mewcode/memories.md".into(),
        size: 1,
        mtime_ns: 1,
        hash: "h".into(),
    };
    let doc = |body: &str| Document {
        id: "M0badcafe".into(),
        source: SourceKind::Entry,
        scope: "user".into(),
        project_key: None,
        title: "t".into(),
        body: body.into(),
        path: Some(state.path.clone()),
        updated_ms: 1,
    };
    alice.replace_file(&state, &[doc("quokka alice")]).unwrap();
    bob.replace_file(&state, &[doc("quokka bob")]).unwrap();
    assert_eq!(find(&alice, "quokka")[0].snippet, "quokka alice");
    assert_eq!(find(&bob, "quokka").len(), 1);
    assert_eq!(
        bob.document("M0badcafe").unwrap().unwrap().body,
        "quokka bob"
    );
    assert_eq!(
        alice
            .indexed_files(std::slice::from_ref(&state.root))
            .unwrap()
            .len(),
        1
    );

    // Team scope needs a team.
    let loner = open(&url, &schema, "dave", None);
    let e = loner
        .add_learning(&new_learning("x", None, true))
        .unwrap_err();
    assert!(e.to_string().contains("[store] team"), "{e}");
    drop_schema(&url, &schema);
}

#[test]
fn bad_urls_fail_fast_and_never_show_the_password() {
    let Some(url) = server() else { return };
    let o = PgOptions {
        connect_timeout: Duration::from_secs(3),
        ..opts(&fresh_schema("bad"), "alice", None)
    };
    let e = PgStore::open("postgresql://mem:pw@127.0.0.1:notaport/db", &o).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    assert!(!e.to_string().contains("pw@"), "{e}");

    // A closed port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = Instant::now();
    let e = PgStore::open(
        &format!("postgresql://mem:hunter2secret@127.0.0.1:{port}/mem_test"),
        &o,
    )
    .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(30), "bounded time");
    let msg = e.to_string();
    assert!(matches!(e, Error::Server { .. }), "{msg}");
    assert!(!msg.contains("hunter2secret"), "{msg}");
    assert!(msg.contains("mem:***@127.0.0.1"), "{msg}");

    // A wrong password.
    let wrong = url.replacen("mem-test@", "wrong-password-xyz@", 1);
    assert_ne!(wrong, url);
    let e = PgStore::open(&wrong, &o).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert!(!msg.contains("wrong-password-xyz"), "{msg}");

    // TLS asked for, and the test server has none: a clear refusal, not a plain connection.
    let sep = if url.contains('?') { '&' } else { '?' };
    let e = PgStore::open(&format!("{url}{sep}sslmode=require"), &o).unwrap_err();
    assert!(matches!(e, Error::Server { .. }), "{e}");
    assert!(!e.to_string().contains("mem-test"), "{e}");

    // Bad schema and author names never reach the server.
    let e = PgStore::open(&url, &opts("Bad-Name", "alice", None)).unwrap_err();
    assert!(matches!(e, Error::Invalid { what: "schema", .. }), "{e}");
}

#[test]
fn a_newer_schema_is_refused_with_both_versions() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("ver");
    let s = open(&url, &schema, "alice", None);
    assert_eq!(
        s.stats().unwrap().schema_version,
        postgres::PG_LATEST_VERSION
    );
    s.with_client(|c| {
        c.batch_execute("UPDATE mewmem_meta SET value = '99' WHERE key = 'schema_version'")
    })
    .unwrap();
    let e = PgStore::open(&url, &opts(&schema, "alice", None)).unwrap_err();
    assert!(
        matches!(e, Error::ServerTooNew { found: 99, known, .. } if known == postgres::PG_LATEST_VERSION),
        "{e}"
    );
    assert!(e.to_string().contains("99"), "{e}");
    s.with_client(|c| {
        c.batch_execute("UPDATE mewmem_meta SET value = '1' WHERE key = 'schema_version'")
    })
    .unwrap();
    drop_schema(&url, &schema);
}

/// A version 1 team store (no `docs_recent`, no visibility in its word indexes) is migrated
/// on open: it gains `docs_recent` (version 2) and the word and title indexes with each
/// document's visibility (version 3, replacing version 2's `docs_title_tsv` and version 1's
/// `docs_tsv`), says version 3, and its learnings are found as before.
#[test]
fn a_version_1_team_store_gains_the_search_indexes() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("v1");
    let s = open(&url, &schema, "alice", None);
    s.add_learning(&NewLearning {
        title: "Pelican deploys".into(),
        content: "the pelican job needs the staging vpn".into(),
        category: "tip".into(),
        project_key: Some("p1".into()),
        ..Default::default()
    })
    .unwrap();
    let indexes = |s: &PgStore| -> Vec<String> {
        s.with_client(|c| {
            c.query(
                "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() \
                 AND indexname IN ('docs_recent', 'docs_title_tsv', 'docs_tsv', \
                 'docs_tsv_visible', 'docs_title_tsv_visible') ORDER BY 1",
                &[],
            )
            .map(|rows| rows.iter().map(|r| r.get(0)).collect())
        })
        .unwrap()
    };
    let latest = ["docs_recent", "docs_title_tsv_visible", "docs_tsv_visible"];
    assert_eq!(indexes(&s), latest);
    // Back to version 1's schema.
    s.with_client(|c| {
        c.batch_execute(
            "DROP INDEX docs_recent; DROP INDEX docs_title_tsv_visible; \
             DROP INDEX docs_tsv_visible; CREATE INDEX docs_tsv ON docs USING GIN (tsv); \
             UPDATE mewmem_meta SET value = '1' WHERE key = 'schema_version'",
        )
    })
    .unwrap();
    assert_eq!(s.stats().unwrap().schema_version, 1);
    drop(s);
    let s = open(&url, &schema, "alice", None);
    assert_eq!(s.stats().unwrap().schema_version, 3);
    assert_eq!(postgres::PG_LATEST_VERSION, 3);
    assert_eq!(indexes(&s), latest);
    let hits = s
        .search(&SearchQuery {
            text: "pelican vpn".into(),
            visible_in: Some("p1".into()),
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].title, "Pelican deploys");
    drop(s);
    drop_schema(&url, &schema);
}

/// The word pass finds its rows through the visibility in the index (schema version 3): for
/// every author, team and project the hits, their order and their scores are those of the
/// same query on a server that cannot use that index (`enable_bitmapscan` and
/// `enable_indexscan` off: the visibility filter on every row); a learning moved to another
/// project follows, and a deleted one is found nowhere.
#[test]
fn visibility_through_the_index_is_that_of_the_rows() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("vis");
    let mut stores = Vec::new();
    for (author, team) in [
        ("alice", Some("red")),
        ("bob", Some("red")),
        ("carol", None),
    ] {
        stores.push(open(&url, &schema, author, team));
    }
    let mut ids = Vec::new();
    for i in 0..36usize {
        let store = &stores[i % 3];
        let project = match i % 4 {
            0 => Some("p1"),
            1 => Some("p2"),
            _ => None,
        };
        let l = store
            .add_learning(&NewLearning {
                title: format!("heron {}", "tide ".repeat(i % 3)),
                content: format!("heron watch {} tide {i}", "marsh ".repeat(i % 5)),
                category: "tip".into(),
                project_key: project.map(str::to_owned),
                share_with_team: i % 6 == 0,
                created_ms: i as i64,
                ..Default::default()
            })
            .unwrap();
        ids.push(l.id);
    }
    let search = |s: &PgStore, text: &str, project: Option<&str>| {
        common::suite::hits_and_scores(s, text, project)
    };
    // The same stores on one connection each that scans every row (no index).
    let plain: Vec<PgStore> = [
        ("alice", Some("red")),
        ("bob", Some("red")),
        ("carol", None),
    ]
    .into_iter()
    .map(|(author, team)| {
        let s = PgStore::open(
            &url,
            &PgOptions {
                pool_size: 1,
                ..opts(&schema, author, team)
            },
        )
        .unwrap();
        s.with_client(|c| {
            c.batch_execute("SET enable_bitmapscan = off; SET enable_indexscan = off")
        })
        .unwrap();
        s
    })
    .collect();
    let check_all = || {
        for (s, reference) in stores.iter().zip(&plain) {
            for text in ["heron", "tide", "heron marsh", "marsh tide", "the"] {
                for project in [Some("p1"), Some("p2"), None] {
                    let got = search(s, text, project);
                    assert_eq!(
                        got,
                        search(reference, text, project),
                        "{text} in {project:?}"
                    );
                    assert_eq!(got.is_empty(), text == "the", "{text} in {project:?}");
                }
            }
        }
    };
    check_all();
    let found_in = |s: &PgStore, project: &str, id: i64| {
        search(s, "heron", Some(project))
            .iter()
            .any(|(h, _)| *h == format!("L{id}"))
    };
    // Move carol's learning from p1 to p2 (as a checkpoint's restore rewrites a row).
    let moved = ids[8];
    assert!(found_in(&stores[2], "p1", moved) && !found_in(&stores[2], "p2", moved));
    stores[2]
        .with_client(move |c| {
            c.execute(
                "UPDATE docs SET project_key = 'p2' WHERE doc_id = $1",
                &[&format!("L{moved}")],
            )
            .map(|_| ())
        })
        .unwrap();
    assert!(!found_in(&stores[2], "p1", moved) && found_in(&stores[2], "p2", moved));
    check_all();
    // Delete one of alice's: found by nobody.
    let gone = ids[3];
    assert!(stores[0].delete_learning(gone).unwrap());
    for s in &stores {
        for project in ["p1", "p2"] {
            assert!(!found_in(s, project, gone));
        }
    }
    check_all();
    drop(plain);
    drop(stores);
    drop_schema(&url, &schema);
}

#[test]
fn migrating_a_sqlite_store_is_idempotent_and_resumable() {
    let Some(url) = server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let local = SqliteStore::open(&dir.path().join("memory.db"), DEFAULT_BUSY_TIMEOUT).unwrap();
    for i in 0..30 {
        local
            .add_learning(&NewLearning {
                title: format!("local lesson {i}"),
                content: "永远使用参数化查询".into(),
                category: if i % 2 == 0 { "error" } else { "tip" }.into(),
                tags: vec!["sql".into()],
                project_key: (i % 3 == 0).then(|| "git:/src/app".to_owned()),
                created_ms: 1000 + i,
                ..Default::default()
            })
            .unwrap();
    }
    local
        .set_user_preference("model", Some("deepseek"))
        .unwrap();
    let schema = fresh_schema("migrate");
    let server = open(&url, &schema, "alice", Some("core"));

    // Interrupted after 10 learnings: simulate by copying a prefix first.
    let mut first: Vec<LearningEntry> = local.learnings(&LearningFilter::default()).unwrap();
    first.reverse();
    let origin = format!("sqlite:{}", local.path().display());
    for l in &first[..10] {
        server
            .import_learning(l, &format!("{origin}#L{}", l.id))
            .unwrap()
            .unwrap();
    }
    let mut seen = 0;
    let r = migrate::copy_to_server(&local, &server, |done, total| {
        assert_eq!(total, 30);
        seen = done;
    })
    .unwrap();
    assert_eq!(seen, 30);
    assert_eq!(r.learnings_copied, 20);
    assert_eq!(r.learnings_already_there, 10);
    assert_eq!(r.preferences, 1);
    let again = migrate::copy_to_server(&local, &server, |_, _| {}).unwrap();
    assert_eq!(again.learnings_copied, 0);
    assert_eq!(again.learnings_already_there, 30);
    let copied = server.learnings(&LearningFilter::default()).unwrap();
    assert_eq!(copied.len(), 30);
    assert!(
        copied
            .iter()
            .all(|l| l.author.as_deref() == Some("alice") && l.team.is_none())
    );
    let local_all = local.learnings(&LearningFilter::default()).unwrap();
    for (a, b) in local_all.iter().zip(&copied) {
        assert_eq!(
            (
                &a.title,
                &a.content,
                &a.category,
                &a.tags,
                &a.project_key,
                a.created_ms
            ),
            (
                &b.title,
                &b.content,
                &b.category,
                &b.tags,
                &b.project_key,
                b.created_ms
            )
        );
    }
    assert_eq!(find(&server, "参数化查询").len(), 30);
    assert_eq!(
        server
            .user_preferences()
            .unwrap()
            .get("model")
            .map(String::as_str),
        Some("deepseek")
    );
    // Another member never sees the migrated (private) learnings.
    let bob = open(&url, &schema, "bob", Some("core"));
    assert!(find(&bob, "参数化查询").is_empty());
    drop_schema(&url, &schema);
}

/// Worker half of the concurrency test: runs only inside the child processes it spawns.
#[test]
fn pg_concurrency_worker() {
    let (Ok(url), Ok(schema), Ok(tag)) = (
        std::env::var("MEM_TIERS_PG_WORKER_URL"),
        std::env::var("MEM_TIERS_PG_WORKER_SCHEMA"),
        std::env::var("MEM_TIERS_PG_WORKER_TAG"),
    ) else {
        return;
    };
    let n: usize = std::env::var("MEM_TIERS_PG_WORKER_N")
        .unwrap()
        .parse()
        .unwrap();
    let store = open(&url, &schema, &format!("writer-{tag}"), Some("core"));
    for i in 0..n {
        store
            .add_learning(&NewLearning {
                title: format!("{tag} learning {i}"),
                content: format!("content w{tag}x{i}"),
                category: "general".into(),
                created_ms: i as i64,
                share_with_team: true,
                ..Default::default()
            })
            .unwrap();
    }
}

#[test]
fn eight_writer_processes_add_10000_learnings_and_lose_none() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("conc");
    drop(open(&url, &schema, "setup", Some("core"))); // migrated once, before the writers
    let exe = std::env::current_exe().unwrap();
    let writers = 8;
    let each = 1250;
    let children: Vec<_> = (0..writers)
        .map(|w| {
            std::process::Command::new(&exe)
                .args([
                    "pg_concurrency_worker",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("MEM_TIERS_PG_WORKER_URL", &url)
                .env("MEM_TIERS_PG_WORKER_SCHEMA", &schema)
                .env("MEM_TIERS_PG_WORKER_TAG", w.to_string())
                .env("MEM_TIERS_PG_WORKER_N", each.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let reader = open(&url, &schema, "reader", Some("core"));
    let all = reader.learnings(&LearningFilter::default()).unwrap();
    assert_eq!(all.len(), writers * each);
    let mut titles: Vec<&str> = all.iter().map(|l| l.title.as_str()).collect();
    titles.sort_unstable();
    titles.dedup();
    assert_eq!(titles.len(), writers * each, "every learning exactly once");
    let stats = reader.stats().unwrap();
    assert_eq!(
        stats.documents.get("learning"),
        Some(&((writers * each) as u64))
    );
    for w in 0..writers {
        let hits = find(&reader, &format!("w{w}x{}", each - 1));
        assert_eq!(hits.len(), 1, "writer {w}");
    }
    drop_schema(&url, &schema);
}

#[test]
fn forget_and_stats_name_the_server_without_its_password() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("forget");
    let store = open(&url, &schema, "alice", None);
    assert_eq!(store.backend(), "postgresql");
    let described = store.describe();
    assert!(
        described.contains(":***@") && !described.contains("mem-test"),
        "{described}"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config = MemoryConfig::for_home(dir.path());
    config.user_dir = None;
    let mm = MemoryManager::with_store(config, store, None, Vec::new());
    let added = mm
        .add_learning("staging", "needs the VPN", "general", &[], None, true)
        .unwrap();
    assert_eq!(mm.stats().unwrap().database, described);
    let gone = mm.forget(&MemoryId::Learning(added.learning.id)).unwrap();
    assert_eq!(gone.location, described);
    assert!(!gone.location.contains(".db"), "{}", gone.location);
    drop(mm);
    drop_schema(&url, &schema);
}

/// Issue 27 item 19: a team learning listed in another project of the same team opens and
/// forgets there (show, forget, as search lists it); private ones of another project stay
/// hidden, and another team sees nothing.
#[test]
fn team_learnings_open_and_forget_from_every_project_of_the_team() {
    let Some(url) = server() else { return };
    let schema = fresh_schema("teamshow");
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(d.join(".git")).unwrap();
        d
    };
    let (pa, pb, pc) = (dir("proj-alice"), dir("proj-bob"), dir("proj-carol"));
    let home = |name: &str| MemoryConfig::for_home(&tmp.path().join(format!("home-{name}")));
    let alice = MemoryManager::from_project_with(
        &pa,
        home("alice"),
        open(&url, &schema, "alice", Some("core")),
    )
    .unwrap();
    let bob = MemoryManager::from_project_with(
        &pb,
        home("bob"),
        open(&url, &schema, "bob", Some("core")),
    )
    .unwrap();
    let carol = MemoryManager::from_project_with(
        &pc,
        home("carol"),
        open(&url, &schema, "carol", Some("other")),
    )
    .unwrap();
    let alice_elsewhere = MemoryManager::from_project_with(
        &pb,
        home("alice"),
        open(&url, &schema, "alice", Some("core")),
    )
    .unwrap();
    let team = alice
        .add_learning_in(
            "staging needs the VPN",
            "connect first",
            "general",
            &[],
            None,
            LearningScope::Team,
        )
        .unwrap()
        .learning;
    let private = alice
        .add_learning_in(
            "staging private note",
            "alice only",
            "general",
            &[],
            None,
            LearningScope::Project,
        )
        .unwrap()
        .learning;
    let t = MemoryId::Learning(team.id);
    let p = MemoryId::Learning(private.id);

    // Listed in bob's project, and opened there too.
    assert!(
        bob.recall("staging", 10)
            .unwrap()
            .iter()
            .any(|h| h.id == t.to_string())
    );
    let shown = bob.show(&t).unwrap();
    assert_eq!(shown.document.title, "staging needs the VPN");
    assert_eq!(shown.learning.unwrap().author.as_deref(), Some("alice"));
    // The author's own team learning opens from another of her projects; her project one not.
    assert!(alice_elsewhere.show(&t).is_ok());
    assert!(matches!(alice_elsewhere.show(&p), Err(Error::NotFound(_))));
    assert!(matches!(bob.show(&p), Err(Error::NotFound(_))));
    assert!(matches!(bob.forget(&p), Err(Error::NotFound(_))));
    // Another team sees nothing and forgets nothing.
    assert!(matches!(carol.show(&t), Err(Error::NotFound(_))));
    assert!(matches!(carol.forget(&t), Err(Error::NotFound(_))));

    // Any member forgets it (TEAM.md), from their own project.
    let f = bob.forget(&t).unwrap();
    assert_eq!(f.id, t.to_string());
    assert!(matches!(alice.show(&t), Err(Error::NotFound(_))));
    assert!(alice.show(&p).is_ok(), "the private one is untouched");
    drop_schema(&url, &schema);
}

/// Issue 27 item 20: an immediate refusal (closed port, wrong or missing password) fails at
/// once with the default 10 s connect timeout, not after it; a missing password says to set
/// PGPASSWORD.
#[test]
fn an_immediate_refusal_fails_fast_with_a_hint() {
    let Some(url) = server() else { return };
    let o = opts(&fresh_schema("fast"), "alice", None);
    assert_eq!(o.connect_timeout, Duration::from_secs(10));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let wrong = url.replacen("mem-test@", "wrong-password-xyz@", 1);
    let missing = url.replacen(":mem-test@", "@", 1);
    assert_ne!(missing, url);
    for (what, u) in [
        (
            "closed port",
            format!("postgresql://mem:pw@127.0.0.1:{port}/mem_test"),
        ),
        ("wrong password", wrong),
        ("missing password", missing.clone()),
    ] {
        let t = Instant::now();
        let e = PgStore::open(&u, &o).unwrap_err();
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{what}: {:?} ({e})",
            t.elapsed()
        );
        assert!(matches!(e, Error::Server { .. }), "{what}: {e}");
    }
    let e = PgStore::open(&missing, &o).unwrap_err().to_string();
    assert!(e.contains("PGPASSWORD"), "{e}");
}
