//! The embedding cache in the SQLite index: a read without the table writes nothing, rows
//! round-trip by (hash, model), a model change misses, a second connection sees the rows; the
//! same on PostgreSQL (client-side cosine, pgvector or not).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use mem_llm::VectorCache;
use mem_tiers::vectors::SqliteVectorCache;

#[test]
fn vectors_round_trip_by_hash_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let cache = SqliteVectorCache::open(&db, Duration::from_secs(2)).unwrap();
    let hashes = vec!["h1".to_owned(), "h2".to_owned()];
    // No table yet: nothing found, nothing created.
    assert!(cache.vectors("m", &hashes).unwrap().is_empty());
    assert_eq!(cache.count(None).unwrap(), 0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'vectors'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0);

    cache
        .store_vectors("m", &[("h1".to_owned(), vec![0.25, -1.0, 3.5])])
        .unwrap();
    let got = cache.vectors("m", &hashes).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got["h1"], vec![0.25, -1.0, 3.5]);
    // Another model does not see it.
    assert!(cache.vectors("other", &hashes).unwrap().is_empty());
    // Replacing keeps one row per key.
    cache
        .store_vectors(
            "m",
            &[("h1".to_owned(), vec![1.0]), ("h2".to_owned(), vec![2.0])],
        )
        .unwrap();
    assert_eq!(cache.count(Some("m")).unwrap(), 2);
    drop(cache);
    let again = SqliteVectorCache::open(&db, Duration::from_secs(2)).unwrap();
    assert_eq!(again.vectors("m", &hashes).unwrap()["h1"], vec![1.0]);
}

/// PostgreSQL: `MEM_TEST_PG_URL`, or the test is skipped (a failure with `MEM_REQUIRE_PG=1`).
fn pg_url() -> Option<String> {
    mem_core::testing::pg_url_or_skip(env!("CARGO_CRATE_NAME"))
}

#[test]
fn postgres_vectors_round_trip_with_or_without_pgvector() {
    let Some(url) = pg_url() else { return };
    let schema = format!(
        "t_vec_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let options = mem_tiers::PgOptions {
        schema: schema.clone(),
        ..mem_tiers::PgOptions::for_author("tester")
    };
    let store = mem_tiers::PgStore::open(&url, &options).unwrap();
    // Reported, not required: the cosine is computed by the client either way.
    let pgvector = mem_tiers::pg_vectors::has_pgvector(&store).unwrap();
    eprintln!("pgvector installed: {pgvector}");
    let hashes = vec!["h1".to_owned(), "h2".to_owned()];
    assert!(store.vectors("m", &hashes).unwrap().is_empty());
    store
        .store_vectors("m", &[("h1".to_owned(), vec![0.5, -2.0])])
        .unwrap();
    assert_eq!(store.vectors("m", &hashes).unwrap()["h1"], vec![0.5, -2.0]);
    assert!(store.vectors("other", &hashes).unwrap().is_empty());
    store
        .store_vectors(
            "m",
            &[("h1".to_owned(), vec![1.0]), ("h2".to_owned(), vec![2.0])],
        )
        .unwrap();
    let got = store.vectors("m", &hashes).unwrap();
    assert_eq!(
        (got["h1"].clone(), got["h2"].clone()),
        (vec![1.0], vec![2.0])
    );
    store
        .with_client(move |c| c.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE")))
        .unwrap();
}
