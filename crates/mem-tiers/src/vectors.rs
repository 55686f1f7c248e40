//! The embedding cache of the SQLite index (issue 29, Build 2): one row per (content hash,
//! model) in the table `vectors`, the vector as a blob of little-endian `f32`s
//! ([`mem_llm::embed::vector_to_bytes`]). It implements [`mem_llm::VectorCache`], so
//! [`mem_llm::Embedder::embed_cached`] embeds only texts whose hash is not there under the model
//! in use: an edited memory gets a new hash and is embedded again, and a model change misses
//! every row, re-embedding lazily, when each text is next needed.
//!
//! The table is created on the first write (`CREATE TABLE IF NOT EXISTS`, no schema version:
//! a database without embeddings never has it); a read of a database without it finds nothing
//! and writes nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{OptionalExtension, params};

use crate::error::Result;
use crate::sqlite::SqliteStore;

/// The table, created on the first write.
pub const VECTORS_DDL: &str = "CREATE TABLE IF NOT EXISTS vectors (
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (hash, model)
) WITHOUT ROWID";

/// How long a cache connection opened by [`SqliteVectorCache::open_existing`] waits for a lock
/// held by another connection (50 ms): caching is skipped rather than delaying a recall past
/// its embedding deadline.
pub const CACHE_BUSY_TIMEOUT: Duration = Duration::from_millis(50);

/// The vectors of one SQLite index database, shareable across threads.
pub struct SqliteVectorCache {
    store: Mutex<SqliteStore>,
}

impl SqliteVectorCache {
    /// Opens (creating and migrating it if needed, like [`SqliteStore::open`]) the database at
    /// `path`.
    ///
    /// # Errors
    /// Those of [`SqliteStore::open`].
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<SqliteVectorCache> {
        Ok(SqliteVectorCache {
            store: Mutex::new(SqliteStore::open(path, busy_timeout)?),
        })
    }

    /// Opens the cache in the database at `path` only when that database is already set up
    /// ([`SqliteStore::open_if_set_up`]: no file is created, no setup lock is waited for), with
    /// a busy timeout of [`CACHE_BUSY_TIMEOUT`]: a database another process is writing makes a
    /// cache write fail at once (the caller skips caching) instead of waiting. `None` when the
    /// database does not exist or is not set up.
    ///
    /// # Errors
    /// Those of [`SqliteStore::open_if_set_up`].
    pub fn open_existing(path: &Path) -> Result<Option<SqliteVectorCache>> {
        Ok(
            SqliteStore::open_if_set_up(path, CACHE_BUSY_TIMEOUT)?.map(|store| SqliteVectorCache {
                store: Mutex::new(store),
            }),
        )
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&SqliteStore) -> rusqlite::Result<T>,
    ) -> std::result::Result<T, String> {
        let store = self
            .store
            .lock()
            .map_err(|_| "the vector cache's lock is poisoned".to_owned())?;
        f(&store).map_err(|e| store.err(e).to_string())
    }

    /// Rows held for `model` (all models when `None`); 0 when the table does not exist.
    ///
    /// # Errors
    /// The database's, as text.
    pub fn count(&self, model: Option<&str>) -> std::result::Result<u64, String> {
        self.with(|s| {
            if !has_table(s)? {
                return Ok(0);
            }
            let n: i64 = match model {
                Some(m) => {
                    s.conn
                        .query_row("SELECT count(*) FROM vectors WHERE model = ?1", [m], |r| {
                            r.get(0)
                        })?
                }
                None => s
                    .conn
                    .query_row("SELECT count(*) FROM vectors", [], |r| r.get(0))?,
            };
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }
}

fn has_table(s: &SqliteStore) -> rusqlite::Result<bool> {
    Ok(s.conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

impl mem_llm::VectorCache for SqliteVectorCache {
    fn vectors(
        &self,
        model: &str,
        hashes: &[String],
    ) -> std::result::Result<HashMap<String, Vec<f32>>, String> {
        self.with(|s| {
            let mut out = HashMap::new();
            if hashes.is_empty() || !has_table(s)? {
                return Ok(out);
            }
            let mut stmt = s
                .conn
                .prepare_cached("SELECT vector FROM vectors WHERE hash = ?1 AND model = ?2")?;
            for h in hashes {
                let blob: Option<Vec<u8>> =
                    stmt.query_row(params![h, model], |r| r.get(0)).optional()?;
                if let Some(v) = blob.as_deref().and_then(mem_llm::embed::vector_from_bytes) {
                    out.insert(h.clone(), v);
                }
            }
            Ok(out)
        })
    }

    fn store_vectors(
        &self,
        model: &str,
        rows: &[(String, Vec<f32>)],
    ) -> std::result::Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let now = chrono::Utc::now().timestamp_millis();
        self.with(|s| {
            s.conn.execute_batch(VECTORS_DDL)?;
            let tx = s.conn.unchecked_transaction()?;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT OR REPLACE INTO vectors (hash, model, dim, vector, created_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for (h, v) in rows {
                    let dim = i64::try_from(v.len()).unwrap_or(i64::MAX);
                    stmt.execute(params![
                        h,
                        model,
                        dim,
                        mem_llm::embed::vector_to_bytes(v),
                        now
                    ])?;
                }
            }
            tx.commit()
        })
    }

    fn forget_vectors(&self, hashes: &[String]) -> std::result::Result<u64, String> {
        if hashes.is_empty() {
            return Ok(0);
        }
        self.with(|s| {
            if !has_table(s)? {
                return Ok(0);
            }
            let tx = s.conn.unchecked_transaction()?;
            let mut n = 0;
            {
                let mut stmt = tx.prepare_cached("DELETE FROM vectors WHERE hash = ?1")?;
                for h in hashes {
                    n += stmt.execute([h])? as u64;
                }
            }
            tx.commit()?;
            Ok(n)
        })
    }
}
