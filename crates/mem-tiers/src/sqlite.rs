//! The SQLite backend of [`MemoryStore`] (bundled SQLite: WAL, busy timeout, FTS5).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, params};

use crate::error::{Error, Result};
use crate::model::{
    Document, Expiry, FileState, LearningEntry, LearningFilter, NewLearning, ProjectRecord,
    SearchHit, SearchQuery, SourceKind, StoreStats,
};
use crate::query;
use crate::rows::{self, DOC_COLS, FILE_COLS, LEARNING_COLS, PROJECT_COLS, source_list};
use crate::schema::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS, SECURE_DELETE_VERSION};
use crate::store::MemoryStore;

/// The default busy timeout: how long a call waits for another process's write (5 s).
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The file name of the database inside [`crate::MemoryConfig::storage_dir`].
pub const DATABASE_FILE: &str = "memory.db";

/// The full-text indexes of the documents: words, and trigrams for parts of words and CJK.
const SEARCH_INDEXES: [&str; 2] = ["docs_word", "docs_trigram"];

/// The settings of every connection: durable commits (`synchronous = FULL`), foreign keys,
/// deleted content overwritten (`secure_delete`), and reads through a memory map of the first
/// 1 GiB of the file (`mmap_size`; writes still go through the write-ahead log). SQLite's
/// default page cache (2 MiB) stays.
///
/// The map was first tried at stop 40 and left out then (`mem memory search retry` at 100,000
/// learnings measured 24 against 17 ms of CPU, under a load of 5–10). Measured again at stop
/// 42, fat-LTO build, quiet machine, the same binary with and without the map
/// (`perf stat -r 25`, whole process): `retry` 15.1 → 11.0 ms, `staging vpn` 9.6 → 8.0 ms,
/// `参数化` 15.2 → 12.7 ms, a substring search found only in other projects 7.8 → 6.2 ms, rare
/// words and no match unchanged (±3 %); 25–30 % fewer page faults (pages of the file are
/// mapped, not copied into new heap memory). A larger page cache (64 MiB) cost a new process
/// more than it saved (stop 40: 28 ms, 4,500 page faults).
///
/// `journal_size_limit` (64 MiB): a write-ahead log grown by a large write (`mem memory clean`
/// merging the search index rewrites all of it: 91 MiB at 100,000 learnings) is cut back to
/// that size at its next reset, even when a reader kept the checkpoint from truncating it.
const CONNECTION_PRAGMAS: &str = "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON; \
     PRAGMA mmap_size = 1073741824; PRAGMA journal_size_limit = 67108864;";

/// The tier store in one SQLite file.
///
/// Opened with `journal_mode=WAL` (readers never wait for the writer), `synchronous=FULL`
/// (a committed write survives a power cut), a busy timeout, and every write in a
/// `BEGIN IMMEDIATE` transaction, so concurrent `mem` processes serialise their writes and lose
/// nothing.
#[derive(Debug)]
pub struct SqliteStore {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    busy_timeout: Duration,
    read_only: bool,
    rank_cap: usize,
    /// Whether the schema has `docs_visibility` (version 4 on): a full-text pass reads each
    /// match's visibility from it (`INDEXED BY`); an older database read as it is (see
    /// [`SqliteStore::open_at_version`]) joins the documents themselves.
    visibility_index: bool,
}

impl SqliteStore {
    /// Opens (creating it and its directory if needed) and migrates the database at `path`.
    ///
    /// # Errors
    /// [`Error::Foreign`] for a file that is not SQLite or is another program's database,
    /// [`Error::Corrupt`] for a damaged one, [`Error::TooNew`] for a newer schema,
    /// [`Error::Locked`] when another process holds it past `busy_timeout`, [`Error::ReadOnly`],
    /// [`Error::PendingLog`] when only a read-only open is possible and a write-ahead log is
    /// pending, [`Error::Io`]. The file is never reset or overwritten on an error.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<SqliteStore> {
        Self::open_at_version(path, busy_timeout, LATEST_VERSION)
    }

    /// Opens the database at `path` only if it is already set up (WAL, mewmem's application id,
    /// the current schema version): never creates, migrates or takes the setup lock, so it
    /// never waits on another process's setup. `None` when there is no such file or it is not
    /// set up yet. Used for the embedding cache, which must not delay a hook.
    ///
    /// # Errors
    /// Those of [`SqliteStore::open`] for a file that claims to be set up.
    pub fn open_if_set_up(path: &Path, busy_timeout: Duration) -> Result<Option<SqliteStore>> {
        if check_header(path)?.is_some_and(|h| h.is_set_up(LATEST_VERSION)) {
            return Self::open_set_up(path, busy_timeout).map(Some);
        }
        Ok(None)
    }

    /// [`SqliteStore::open`], migrating only up to `version` (for migration tests).
    ///
    /// A database set up at an older schema version that cannot be migrated because it is
    /// write-protected (a read-only home made by an older `mem`) is opened read-only at its own
    /// version: reads work as they did, a write fails with [`Error::ReadOnly`].
    #[doc(hidden)]
    pub fn open_at_version(path: &Path, busy_timeout: Duration, version: i64) -> Result<Self> {
        let header = check_header(path)?;
        if header.as_ref().is_some_and(|h| h.is_set_up(version)) {
            return Self::open_set_up(path, busy_timeout);
        }
        let older = header.as_ref().is_some_and(|h| h.is_set_up(1));
        match Self::open_and_migrate(path, busy_timeout, version) {
            Err(Error::ReadOnly { .. }) if older => {
                tracing::debug!(
                    "{}: write-protected at an older schema version; read as it is",
                    path.display()
                );
                Self::open_set_up(path, busy_timeout)
            }
            other => other,
        }
    }

    /// Creates (when missing), sets up and migrates the database to `version`, under the
    /// setup lock.
    fn open_and_migrate(path: &Path, busy_timeout: Duration, version: i64) -> Result<Self> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| map_err(path, busy_timeout, e))?;
        let store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            busy_timeout,
            read_only: false,
            rank_cap: query::RANK_CAP,
            visibility_index: false,
        };
        store
            .conn
            .busy_timeout(busy_timeout)
            .map_err(|e| store.err(e))?;
        // Switching a new file to WAL and migrating it are not covered by SQLite's busy handler
        // in every case (two processes opening a fresh file at once got SQLITE_BUSY at once), so
        // the setup of each connection is serialised by a lock on `<db>.lock`. Where that file
        // cannot be created (a read-only folder) setup goes on without it and fails, if it must,
        // with the database's own error.
        let _setup = setup_lock(path);
        store.check_identity()?;
        store
            .conn
            .pragma_update(None, "journal_mode", "wal")
            .map_err(|e| store.err(e))?;
        store
            .conn
            .execute_batch(CONNECTION_PRAGMAS)
            .map_err(|e| store.err(e))?;
        let mut store = store;
        store.migrate(version)?;
        store.visibility_index = store.has_visibility_index()?;
        Ok(store)
    }

    /// Opens a database that is already set up (its header says WAL, mewmem's application id
    /// and a schema version of at least the one wanted): no setup lock, no journal-mode switch,
    /// no migration, so opening it for a read is one file open and one statement (the schema
    /// version, which may be newer in the log than in the header).
    ///
    /// Where the file or its folder is not writable (a read-only home, a write-protected file),
    /// the database is opened read-only ([`SqliteStore::is_read_only`]): reads work, a write
    /// fails with [`Error::ReadOnly`]. Without write access to the folder SQLite cannot create
    /// the log's shared-memory file; the file is then opened as immutable, which is sound
    /// because no process can be writing it (a writer in WAL mode needs that file), but only
    /// when no write-ahead log is pending: `<db>-wal` missing or empty and `<db>-shm` missing.
    /// Otherwise (a writer killed mid-session left its log) opening as immutable would miss
    /// the log's writes, and the open fails with [`Error::PendingLog`]. [`Error::TooNew`],
    /// [`Error::Corrupt`], [`Error::Foreign`] and [`Error::Locked`] from the read-only open are
    /// returned as they are.
    fn open_set_up(path: &Path, busy_timeout: Duration) -> Result<Self> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let first = Self::connect(path, busy_timeout, flags, path.as_os_str().into(), false);
        match first {
            Err(Error::ReadOnly { .. }) | Err(Error::Io { .. }) | Err(Error::Sql { .. }) => {}
            other => return other,
        }
        let uri = file_uri(path);
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Self::connect(
            path,
            busy_timeout,
            flags,
            format!("{uri}?mode=ro").into(),
            true,
        ) {
            Ok(s) => Ok(s),
            Err(
                e @ (Error::TooNew { .. }
                | Error::Corrupt { .. }
                | Error::Foreign { .. }
                | Error::Locked { .. }),
            ) => Err(e),
            // Immutable: no locks are taken, so another process could still shrink the file
            // under this one (a `VACUUM` by its owner); a page read past the new end through
            // the memory map would kill the process (SIGBUS), a plain read is an error.
            Err(_) if no_log_pending(path) => Self::connect(
                path,
                busy_timeout,
                flags,
                format!("{uri}?mode=ro&immutable=1").into(),
                true,
            )
            .and_then(|s| {
                s.conn
                    .pragma_update(None, "mmap_size", 0)
                    .map_err(|e| s.err(e))?;
                Ok(s)
            }),
            Err(e) => Err(Error::PendingLog {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }),
        }
    }

    /// One connection to a set-up database, checked by reading its schema version.
    fn connect(
        path: &Path,
        busy_timeout: Duration,
        flags: OpenFlags,
        name: std::ffi::OsString,
        read_only: bool,
    ) -> Result<Self> {
        let conn = Connection::open_with_flags(std::path::Path::new(&name), flags)
            .map_err(|e| map_err(path, busy_timeout, e))?;
        let mut store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            busy_timeout,
            read_only,
            rank_cap: query::RANK_CAP,
            visibility_index: false,
        };
        store
            .conn
            .busy_timeout(busy_timeout)
            .map_err(|e| store.err(e))?;
        store
            .conn
            .execute_batch(CONNECTION_PRAGMAS)
            .map_err(|e| store.err(e))?;
        store.check_not_newer()?;
        store.visibility_index = store.has_visibility_index()?;
        store.read_only = read_only
            || store
                .conn
                .is_readonly(rusqlite::MAIN_DB)
                .map_err(|e| store.err(e))?;
        Ok(store)
    }

    /// Whether this connection is read-only because the file or its folder is not writable
    /// (see [`SqliteStore::open`]); callers skip what only records use (the project's
    /// registration, `last_used` times, the index sync), and a write fails with
    /// [`Error::ReadOnly`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw connection, for benchmarks comparing against a raw FTS5 query.
    #[doc(hidden)]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> Error {
        map_err(&self.path, self.busy_timeout, e)
    }

    /// Whether `docs_visibility` is in the schema (version 4 on, unless it was dropped by
    /// hand).
    fn has_visibility_index(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'docs_visibility'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    fn schema_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn check_identity(&self) -> Result<()> {
        let app: i64 = self
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if app == APPLICATION_ID {
            return Ok(());
        }
        if app != 0 {
            return Err(Error::Foreign {
                path: self.path.clone(),
                reason: format!("its application id is {app:#x}"),
            });
        }
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if tables > 0 {
            return Err(Error::Foreign {
                path: self.path.clone(),
                reason: format!(
                    "it is an SQLite database with {tables} objects of another program"
                ),
            });
        }
        Ok(())
    }

    fn migrate(&self, target: i64) -> Result<()> {
        let before = self.schema_version()?;
        if before >= target {
            return self.check_not_newer();
        }
        self.write(|conn| {
            let mut version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            while version < target {
                let Some(sql) = MIGRATIONS.get(version as usize) else {
                    break;
                };
                conn.execute_batch(sql)?;
                version += 1;
                tracing::debug!(version, "migrated the tier database");
            }
            conn.pragma_update(None, "user_version", version)?;
            conn.pragma_update(None, "application_id", APPLICATION_ID)?;
            Ok(())
        })?;
        if (1..SECURE_DELETE_VERSION).contains(&before) && target >= SECURE_DELETE_VERSION {
            self.scrub_free_pages();
        }
        self.check_not_newer()
    }

    /// Rewrites a database made before [`SECURE_DELETE_VERSION`] (`VACUUM`), so the free pages
    /// and cells where rows deleted then left their text are gone, then truncates the log.
    /// Best effort: another process reading at that moment keeps it from running (logged); the
    /// rows deleted from now on are overwritten anyway.
    fn scrub_free_pages(&self) {
        match self
            .conn
            .execute_batch("VACUUM")
            .map_err(|e| self.err(e))
            .and_then(|()| self.purge_deleted())
        {
            Ok(()) => tracing::debug!("scrubbed the free pages of {}", self.path.display()),
            Err(e) => tracing::warn!("could not scrub the free pages of the tier database: {e}"),
        }
    }

    fn check_not_newer(&self) -> Result<()> {
        let found = self.schema_version()?;
        if found > LATEST_VERSION {
            return Err(Error::TooNew {
                path: self.path.clone(),
                found,
                known: LATEST_VERSION,
            });
        }
        Ok(())
    }

    /// How many segments full-text index `table` has with at least `min_rows` rows in its
    /// `_idx` table (one per leaf page where a new term starts); 1 counts them all. For tests
    /// and benchmarks.
    #[doc(hidden)]
    pub fn index_segments(&self, table: &str, min_rows: i64) -> rusqlite::Result<i64> {
        self.conn.query_row(
            &format!(
                "SELECT count(*) FROM (SELECT segid FROM {table}_idx GROUP BY segid \
                 HAVING count(*) >= ?1)"
            ),
            [min_rows],
            |r| r.get(0),
        )
    }

    /// The full-text indexes that [`MemoryStore::tidy_search_index`] would merge now
    /// ([`mem_core::fts5::needs_merge`]).
    #[doc(hidden)]
    pub fn fragmented_indexes(
        c: &Connection,
    ) -> rusqlite::Result<impl Iterator<Item = &'static str>> {
        let mut out = Vec::new();
        for table in SEARCH_INDEXES {
            if mem_core::fts5::needs_merge(c, table)? {
                out.push(table);
            }
        }
        Ok(out.into_iter())
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction; rolls back on any error.
    fn write<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err(e))?;
        match f(&self.conn) {
            Ok(v) => match self.conn.execute_batch("COMMIT") {
                Ok(()) => Ok(v),
                Err(e) => {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    Err(self.err(e))
                }
            },
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(self.err(e))
            }
        }
    }

    /// Sets how many matches a full-text pass ranks at most ([`query::RANK_CAP`] by default):
    /// the newest `cap` visible matches (highest rowid: the latest learnings and the latest
    /// indexed files) are ranked by BM25 and the best returned. A query with fewer visible
    /// matches is ranked exactly as without a cap. For tests and benchmarks.
    #[doc(hidden)]
    pub fn with_rank_cap(mut self, cap: usize) -> Self {
        self.rank_cap = cap.max(1);
        self
    }

    /// The filters every pass shares, on `docs d`: visibility (`?2`), sources (`?3`), scope
    /// (`?4`) and a `LIKE` per short term; pushes their arguments after `args[0]` (`?1`).
    fn filters(
        q: &SearchQuery,
        likes: &[String],
        sql: &mut String,
        args: &mut Vec<rusqlite::types::Value>,
    ) {
        args.push(
            q.visible_in
                .clone()
                .map_or(rusqlite::types::Value::Null, Into::into),
        );
        sql.push_str(" AND (?2 IS NULL OR d.project_key = ?2 OR d.project_key IS NULL)");
        args.push(source_list(&q.sources).into());
        sql.push_str(" AND (?3 = '' OR instr(?3, ',' || d.source || ',') > 0)");
        args.push(
            q.scope
                .clone()
                .map_or(rusqlite::types::Value::Null, Into::into),
        );
        sql.push_str(" AND (?4 IS NULL OR d.scope = ?4)");
        for like in likes {
            args.push(query::like_pattern(like).into());
            let n = args.len();
            sql.push_str(&format!(
                " AND (d.title LIKE ?{n} ESCAPE '\\' OR d.body LIKE ?{n} ESCAPE '\\')"
            ));
        }
    }

    /// One pass over the full-text index `table` (`fts`: its match expression) or, without
    /// one, a scan of the documents (newest first, `LIKE` per term).
    ///
    /// A full-text pass ranks at most [`SqliteStore::with_rank_cap`] matches: FTS5 walks the
    /// matches newest first (`ORDER BY rowid DESC`, served by the index, no sort), the visible
    /// ones are joined and filtered until the cap, BM25 (title 2.0, body 1.0) ranks those, and
    /// only the `limit` best are read again with their bodies, cut by [`query::hit_snippet`].
    /// Without the cap a word in
    /// 14 % of 1,000,000 learnings had every match ranked (0.3–0.6 s). A second pass, not
    /// capped, ranks the matches in titles only (titles are short: few documents hold a word
    /// in their title), so the best match, the query in a title, is never cut by the cap; the
    /// `limit` best of both passes are returned.
    ///
    /// "Newest" here is the highest rowid (the order the index walks without a sort), not
    /// the highest `updated_ms` as on PostgreSQL: a file re-read by `replace_file` gets new
    /// rowids for all its documents. Sorting by `updated_ms` would join and sort every match
    /// before the cap, the cost the cap exists to avoid; the title pass makes both backends
    /// agree on the title matches, and below the cap (fewer visible matches than
    /// [`query::RANK_CAP`]) they rank the same set.
    ///
    /// On the trigram index a probe comes first: the oldest `rank_cap + 1` matches in the
    /// index's own order (each joined, BM25 computed for the visible ones only). When there are
    /// no more matches than the cap, that is every match, so every visible one is ranked,
    /// exactly the set and scores of the capped pass, and the search ends there. FTS5 walks a
    /// trigram phrase newest first at about twice the cost of oldest first (1.5 against 2.5 ms
    /// for two rare words at 100,000 learnings, the substring pass of a title query found only
    /// in other projects); a query with more matches pays for the probe's first `rank_cap + 1`
    /// (about 1 ms at 100,000) before the capped pass.
    fn search_fts(
        &self,
        table: &str,
        fts: Option<&str>,
        likes: &[String],
        q: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let Some(m) = fts else {
            return self.search_scan(likes, q, limit);
        };
        let mut args: Vec<rusqlite::types::Value> = vec![m.to_owned().into()];
        let mut visible = String::from("1");
        Self::filters(q, likes, &mut visible, &mut args);
        // Each match's visibility is read from `docs_visibility` (schema version 4), a small
        // index of the columns the filters test, not from the documents' rows with their text;
        // a `LIKE` on a short term needs the text, so then the rows are read.
        let docs = if likes.is_empty() && self.visibility_index {
            "docs d INDEXED BY docs_visibility"
        } else {
            "docs d"
        };
        let inner = format!(
            "SELECT {table}.rowid AS rid, bm25({table}, 2.0, 1.0) AS score \
             FROM {table} JOIN {docs} ON d.rowid = {table}.rowid WHERE {table} MATCH ?1 \
             AND {visible}"
        );
        if table == "docs_trigram" {
            let mut probe_args = args.clone();
            probe_args.push((self.rank_cap as i64 + 1).into());
            let n = probe_args.len();
            let probe: Vec<(i64, Option<f64>)> = self
                .conn
                .prepare_cached(&format!(
                    "SELECT {table}.rowid, CASE WHEN {visible} THEN bm25({table}, 2.0, 1.0) END \
                     FROM {table} JOIN {docs} ON d.rowid = {table}.rowid \
                     WHERE {table} MATCH ?1 ORDER BY {table}.rowid LIMIT ?{n}"
                ))
                .and_then(|mut s| {
                    s.query_map(rusqlite::params_from_iter(probe_args), |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?
                    .collect()
                })
                .map_err(|e| self.err(e))?;
            if probe.len() <= self.rank_cap {
                let scored = probe
                    .into_iter()
                    .filter_map(|(id, score)| score.map(|s| (id, s)))
                    .collect();
                return self.ranked_hits(scored, q, limit);
            }
        }
        args.push((self.rank_cap as i64).into());
        let cap = args.len();
        args.push((limit as i64).into());
        let lim = args.len();
        // The capped pass over titles and bodies, and the uncapped pass over titles only (the
        // column filter `title : (...)`): an exact title match older than the newest
        // `rank_cap` matches is still ranked. The title pass's ids are ranked again with the
        // whole query below, so both passes' scores are the same BM25.
        // The capped pass also counts what it ranked (the window runs before the limit): with
        // fewer matches than the cap, every match was ranked and the title pass is skipped.
        let sql = format!(
            "SELECT rid, score, count(*) OVER () FROM ({inner} ORDER BY {table}.rowid DESC \
             LIMIT ?{cap}) ORDER BY score, rid DESC LIMIT ?{lim}"
        );
        let title_sql = format!("SELECT rid FROM ({inner}) ORDER BY score, rid DESC LIMIT ?{lim}");
        let capped: Vec<(i64, f64, i64)> = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params_from_iter(&args), |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .map_err(|e| self.err(e))?;
        let ranked_all = capped
            .first()
            .is_none_or(|&(_, _, n)| n < self.rank_cap as i64);
        let mut scored: Vec<(i64, f64)> = capped.into_iter().map(|(id, s, _)| (id, s)).collect();
        if !ranked_all {
            let mut title_args = args;
            title_args[0] = format!("title : ({m})").into();
            let titled: Vec<i64> = self
                .conn
                .prepare_cached(&title_sql)
                .and_then(|mut s| {
                    s.query_map(rusqlite::params_from_iter(title_args), |r| r.get(0))?
                        .collect()
                })
                .map_err(|e| self.err(e))?;
            let extra: Vec<i64> = titled
                .into_iter()
                .filter(|id| !scored.iter().any(|&(x, _)| x == *id))
                .collect();
            if !extra.is_empty() {
                // The title matches outside the capped set, scored with the whole query in one
                // walk of the match between the lowest and the highest of them (a rowid range
                // FTS5 seeks to), each kept when it is one of them. BM25 counts each phrase's
                // documents (a scan of the phrase's whole doclist) once per walk: with
                // `rowid IN (...)` as an index constraint FTS5 was queried once per id, and
                // counted again each time (34 ms for 10 ids of a word in 14 % of 1,000,000
                // rows, 8 ms so; 68 against 14 ms for two words).
                let (lo, hi) = (
                    extra.iter().copied().min().unwrap_or_default(),
                    extra.iter().copied().max().unwrap_or_default(),
                );
                let ids = format!(
                    "[{}]",
                    extra
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                );
                let mut again: Vec<(i64, f64)> = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT rowid, bm25({table}, 2.0, 1.0) FROM {table} \
                         WHERE {table} MATCH ?1 AND rowid >= ?3 AND rowid <= ?4 \
                         AND +rowid IN (SELECT value FROM json_each(?2))"
                    ))
                    .and_then(|mut s| {
                        s.query_map(params![m, ids, lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?
                            .collect()
                    })
                    .map_err(|e| self.err(e))?;
                scored.append(&mut again);
            }
        }
        self.ranked_hits(scored, q, limit)
    }

    /// The `limit` best of the scored rowids (BM25, lower is better; the newer on a tie) as
    /// hits: each document read by rowid with the score its pass gave (the same BM25 of the
    /// same match expression), its body cut into a snippet by [`query::hit_snippet`].
    fn ranked_hits(
        &self,
        mut scored: Vec<(i64, f64)>,
        q: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let mut one = self
            .conn
            .prepare_cached(
                "SELECT d.doc_id, d.source, d.scope, d.title, d.body, d.path, d.updated_ms, ?2 \
                 FROM docs d WHERE d.rowid = ?1",
            )
            .map_err(|e| self.err(e))?;
        // Best first (BM25 is lower for a better match), the newer on a tie, as the passes.
        scored.sort_by(|(ra, a), (rb, b)| a.total_cmp(b).then(rb.cmp(ra)));
        scored.truncate(limit);
        let mut hits = Vec::with_capacity(scored.len());
        for (id, score) in scored {
            if let Some(h) = one
                .query_row(params![id, score], |r| rows::search_hit(r))
                .optional()
                .map_err(|e| self.err(e))?
            {
                hits.push(h);
            }
        }
        // Column 4 is the whole body: cut a snippet around the first term.
        let terms = query::terms(&q.text);
        for h in &mut hits {
            h.snippet = query::hit_snippet(h.source, &h.snippet, &terms, query::SNIPPET_CHARS);
        }
        Ok(hits)
    }

    /// The pass without an index (every term shorter than a trigram): the visible documents
    /// holding every term (`LIKE`), newest first, with an excerpt around the first term.
    fn search_scan(
        &self,
        likes: &[String],
        q: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let mut args: Vec<rusqlite::types::Value> = vec![rusqlite::types::Value::Null];
        let mut sql = String::from(
            "SELECT d.doc_id, d.source, d.scope, d.title, d.body, d.path, d.updated_ms, \
             0.0 AS score FROM docs d WHERE ?1 IS NULL",
        );
        Self::filters(q, likes, &mut sql, &mut args);
        args.push((limit as i64).into());
        let n = args.len();
        sql.push_str(&format!(
            " ORDER BY d.updated_ms DESC, d.rowid DESC LIMIT ?{n}"
        ));
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut hits = stmt
            .query_map(rusqlite::params_from_iter(args), |r| rows::search_hit(r))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.err(e))?;
        let terms = query::terms(&q.text);
        for h in &mut hits {
            h.snippet = query::hit_snippet(h.source, &h.snippet, &terms, query::SNIPPET_CHARS);
        }
        Ok(hits)
    }
}

/// The first 100 bytes of an SQLite file: its database header.
struct Header([u8; 100]);

impl Header {
    /// A big-endian 32-bit field of the header at byte `at`.
    fn u32_at(&self, at: usize) -> u32 {
        let b = &self.0[at..at + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Whether a database with this header needs no setup: WAL mode (file format versions 2 at
    /// bytes 18 and 19), mewmem's application id (byte 68) and a schema version (byte 60) of at
    /// least `version`.
    fn is_set_up(&self, version: i64) -> bool {
        self.0[18] == 2
            && self.0[19] == 2
            && i64::from(self.u32_at(68)) == APPLICATION_ID
            && i64::from(self.u32_at(60)) >= version
    }
}

/// Refuses a non-empty file that does not start with SQLite's header, before SQLite touches it;
/// the header of a file that has one whole (`None`: no file, an empty one, a short one).
fn check_header(path: &Path) -> Result<Option<Header>> {
    let mut file = match mem_core::fsread::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("open", path, e)),
    };
    let mut head = [0u8; 100];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(Error::io("read", path, e)),
        }
    }
    if got > 0 && (got < 16 || head[..16] != *b"SQLite format 3\0") {
        return Err(Error::Foreign {
            path: path.to_path_buf(),
            reason: "it is not an SQLite file".to_owned(),
        });
    }
    Ok((got == head.len()).then_some(Header(head)))
}

/// Whether the database at `path` can be opened as immutable without missing a write: its
/// `-wal` file is missing or empty and its `-shm` file is missing (see
/// [`SqliteStore::open`]).
fn no_log_pending(path: &Path) -> bool {
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    let wal_empty = match std::fs::symlink_metadata(beside("-wal")) {
        Ok(meta) => meta.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    let shm_missing = matches!(
        std::fs::symlink_metadata(beside("-shm")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    );
    wal_empty && shm_missing
}

/// `path` as an SQLite `file:` URI: every byte but unreserved ones and `/` percent-encoded, so
/// `?`, `#` and `%` in a folder name are not read as URI syntax.
fn file_uri(path: &Path) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// An exclusive lock on `<db>.lock`, held while a connection sets the file up; `None` when the
/// lock file cannot be created or locked (the caller goes on without it).
fn setup_lock(db: &Path) -> Option<std::fs::File> {
    let mut name = db.file_name()?.to_os_string();
    name.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(db.with_file_name(name))
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

/// Which part of the database at `path` is not writable, for [`Error::ReadOnly`]: the file
/// itself, its `-wal` or `-shm` file (SQLite gives them the database's mode when it creates
/// them, so a read-only spell can leave them read-only), or its directory.
fn read_only_part(path: &Path) -> String {
    // By mode (no write bit): what a read-only spell leaves, and what `chmod` restores.
    let read_only = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly());
    if read_only(path) {
        return "it".to_owned();
    }
    for ext in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(ext);
        let side = PathBuf::from(side);
        if side.exists() && read_only(&side) {
            return format!("its {} file {}", &ext[1..], side.display());
        }
    }
    if path.parent().is_some_and(read_only) {
        return "its directory".to_owned();
    }
    "it (or its directory)".to_owned()
}

pub(crate) fn map_err(path: &Path, busy: Duration, e: rusqlite::Error) -> Error {
    let path = path.to_path_buf();
    if let rusqlite::Error::SqliteFailure(ref f, ref msg) = e {
        let reason = msg.clone().unwrap_or_else(|| f.to_string());
        match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return Error::Locked {
                    path,
                    waited_ms: busy.as_millis() as u64,
                };
            }
            ErrorCode::DiskFull => return Error::DiskFull { path },
            ErrorCode::ReadOnly => {
                let which = read_only_part(&path);
                return Error::ReadOnly { path, which };
            }
            ErrorCode::DatabaseCorrupt => return Error::Corrupt { path, reason },
            ErrorCode::NotADatabase => {
                return Error::Foreign {
                    path,
                    reason: "SQLite cannot read it as a database".to_owned(),
                };
            }
            _ => {}
        }
    }
    Error::Sql { path, source: e }
}

// The shared mappings of `crate::rows`, as functions of rusqlite's row type.
fn project_row(r: &Row<'_>) -> rusqlite::Result<ProjectRecord> {
    rows::project(r)
}
fn learning_row(r: &Row<'_>) -> rusqlite::Result<LearningEntry> {
    rows::learning(r)
}
fn doc_row(r: &Row<'_>) -> rusqlite::Result<Document> {
    rows::document(r)
}
fn file_row(r: &Row<'_>) -> rusqlite::Result<FileState> {
    rows::file_state(r)
}

/// A JSON column's value, as a rusqlite parameter.
fn to_json<T: serde::Serialize>(v: &T) -> rusqlite::Result<String> {
    Ok(rows::to_json(v))
}

impl MemoryStore for SqliteStore {
    fn upsert_project(&self, p: &ProjectRecord) -> Result<()> {
        self.write(|c| {
            c.execute(
                &format!(
                    "INSERT INTO projects ({PROJECT_COLS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) \
                     ON CONFLICT(key) DO UPDATE SET name=excluded.name, path=excluded.path, \
                     language=excluded.language, framework=excluded.framework, \
                     test_command=excluded.test_command, custom_commands=excluded.custom_commands, \
                     notes=excluded.notes, last_used_ms=max(last_used_ms, excluded.last_used_ms)"
                ),
                params![
                    p.key,
                    p.name,
                    p.path,
                    p.language,
                    p.framework,
                    p.test_command,
                    to_json(&p.custom_commands)?,
                    to_json(&p.notes)?,
                    p.created_ms,
                    p.last_used_ms
                ],
            )?;
            Ok(())
        })
    }

    fn project(&self, key: &str) -> Result<Option<ProjectRecord>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {PROJECT_COLS} FROM projects WHERE key = ?1"
            ))
            .and_then(|mut s| s.query_row([key], project_row).optional())
            .map_err(|e| self.err(e))
    }

    fn recent_projects(&self, limit: Option<usize>) -> Result<Vec<ProjectRecord>> {
        let limit = limit.map_or(-1, |l| l as i64);
        self.conn
            .prepare_cached(&format!(
                "SELECT {PROJECT_COLS} FROM projects ORDER BY last_used_ms DESC, key LIMIT ?1"
            ))
            .and_then(|mut s| s.query_map([limit], project_row)?.collect())
            .map_err(|e| self.err(e))
    }

    fn user_preferences(&self) -> Result<BTreeMap<String, String>> {
        self.conn
            .prepare_cached("SELECT key, value FROM user_preferences")
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(|e| self.err(e))
    }

    fn set_user_preference(&self, key: &str, value: Option<&str>) -> Result<bool> {
        let now = chrono::Utc::now().timestamp_millis();
        self.write(|c| match value {
            Some(v) => Ok(c.execute(
                "INSERT INTO user_preferences (key, value, updated_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, \
                 updated_ms = excluded.updated_ms WHERE value IS NOT excluded.value",
                params![key, v, now],
            )? > 0),
            None => Ok(c.execute("DELETE FROM user_preferences WHERE key = ?1", [key])? > 0),
        })
    }

    fn add_learning(&self, l: &NewLearning) -> Result<LearningEntry> {
        if l.share_with_team {
            return Err(Error::Invalid {
                what: "scope",
                reason: "scope team needs a team store: set [store] url (PostgreSQL) and \
                         [store] team in config.toml"
                    .to_owned(),
            });
        }
        self.write(|c| {
            c.execute(
                "INSERT INTO learnings (title, content, category, tags, context, project_key, \
                 created_ms, last_used_ms) VALUES (?1,?2,?3,?4,?5,?6,?7,?7)",
                params![
                    l.title,
                    l.content,
                    l.category,
                    to_json(&l.tags)?,
                    l.context,
                    l.project_key,
                    l.created_ms
                ],
            )?;
            let id = c.last_insert_rowid();
            Ok(LearningEntry {
                id,
                title: l.title.clone(),
                content: l.content.clone(),
                category: l.category.clone(),
                tags: l.tags.clone(),
                context: l.context.clone(),
                project_key: l.project_key.clone(),
                created_ms: l.created_ms,
                last_used_ms: l.created_ms,
                author: None,
                team: None,
            })
        })
    }

    fn learning(&self, id: i64) -> Result<Option<LearningEntry>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {LEARNING_COLS} FROM learnings WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row([id], learning_row).optional())
            .map_err(|e| self.err(e))
    }

    fn learnings(&self, f: &LearningFilter) -> Result<Vec<LearningEntry>> {
        let limit = f.limit.map_or(-1, |l| l as i64);
        // Two shapes so each uses its index: by project (+ user-wide) or by category / all.
        let sql = format!(
            "SELECT {LEARNING_COLS} FROM learnings \
             WHERE (?1 IS NULL OR project_key = ?1 OR project_key IS NULL) \
             AND (?2 IS NULL OR category = ?2) \
             ORDER BY created_ms DESC, id DESC LIMIT ?3"
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(params![f.visible_in, f.category, limit], learning_row)?
                    .collect()
            })
            .map_err(|e| self.err(e))
    }

    fn touch_learnings(&self, ids: &[i64], at_ms: i64) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.write(|c| {
            let mut s = c.prepare_cached(
                "UPDATE learnings SET last_used_ms = ?2 WHERE id = ?1 AND last_used_ms < ?2",
            )?;
            for id in ids {
                s.execute(params![id, at_ms])?;
            }
            Ok(())
        })
    }

    fn delete_learning(&self, id: i64) -> Result<bool> {
        self.write(|c| Ok(c.execute("DELETE FROM learnings WHERE id = ?1", [id])? > 0))
    }

    fn expire_learnings(
        &self,
        expiry: Expiry,
        visible_in: Option<&str>,
        dry_run: bool,
    ) -> Result<Vec<LearningEntry>> {
        self.write(|c| {
            let found: Vec<LearningEntry> = c
                .prepare_cached(&format!(
                    "SELECT {LEARNING_COLS} FROM learnings \
                     WHERE last_used_ms < CASE WHEN project_key IS NULL THEN ?1 ELSE ?2 END \
                     AND (?3 IS NULL OR project_key = ?3 OR project_key IS NULL) ORDER BY id"
                ))?
                .query_map(
                    params![expiry.user_before_ms, expiry.project_before_ms, visible_in],
                    learning_row,
                )?
                .collect::<rusqlite::Result<_>>()?;
            if !dry_run {
                let mut del = c.prepare_cached("DELETE FROM learnings WHERE id = ?1")?;
                for l in &found {
                    del.execute([l.id])?;
                }
            }
            Ok(found)
        })
    }

    fn indexed_files(&self, roots: &[String]) -> Result<Vec<FileState>> {
        let mut out = Vec::new();
        let mut s = self
            .conn
            .prepare_cached(&format!("SELECT {FILE_COLS} FROM files WHERE root = ?1"))
            .map_err(|e| self.err(e))?;
        for root in roots {
            let rows = s
                .query_map([root], file_row)
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(|e| self.err(e))?;
            out.extend(rows);
        }
        Ok(out)
    }

    fn replace_file(&self, state: &FileState, documents: &[Document]) -> Result<()> {
        self.write(|c| {
            c.execute("DELETE FROM docs WHERE path = ?1", [&state.path])?;
            let mut ins = c.prepare_cached(&format!(
                "INSERT INTO docs ({DOC_COLS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8) \
                 ON CONFLICT(doc_id) DO UPDATE SET source=excluded.source, scope=excluded.scope, \
                 project_key=excluded.project_key, title=excluded.title, body=excluded.body, \
                 path=excluded.path, updated_ms=excluded.updated_ms"
            ))?;
            for d in documents {
                ins.execute(params![
                    d.id,
                    d.source.as_str(),
                    d.scope,
                    d.project_key,
                    d.title,
                    d.body,
                    d.path,
                    d.updated_ms
                ])?;
            }
            c.execute(
                "INSERT INTO files (path, root, size, mtime_ns, hash) VALUES (?1,?2,?3,?4,?5) \
                 ON CONFLICT(path) DO UPDATE SET root=excluded.root, size=excluded.size, \
                 mtime_ns=excluded.mtime_ns, hash=excluded.hash",
                params![
                    state.path,
                    state.root,
                    state.size as i64,
                    state.mtime_ns,
                    state.hash
                ],
            )?;
            Ok(())
        })
    }

    fn touch_file(&self, state: &FileState) -> Result<()> {
        self.write(|c| {
            c.execute(
                "UPDATE files SET size = ?2, mtime_ns = ?3 WHERE path = ?1",
                params![state.path, state.size as i64, state.mtime_ns],
            )?;
            Ok(())
        })
    }

    fn remove_file(&self, path: &str) -> Result<usize> {
        self.write(|c| {
            let n = c.execute("DELETE FROM docs WHERE path = ?1", [path])?;
            c.execute("DELETE FROM files WHERE path = ?1", [path])?;
            Ok(n)
        })
    }

    fn clear_file_index(&self) -> Result<usize> {
        self.write(|c| {
            let n = c.execute("DELETE FROM docs WHERE source <> 'learning'", [])?;
            c.execute("DELETE FROM files", [])?;
            Ok(n)
        })
    }

    fn document(&self, id: &str) -> Result<Option<Document>> {
        self.conn
            .prepare_cached(&format!("SELECT {DOC_COLS} FROM docs WHERE doc_id = ?1"))
            .and_then(|mut s| s.query_row([id], doc_row).optional())
            .map_err(|e| self.err(e))
    }

    fn documents(
        &self,
        source: SourceKind,
        visible_in: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {DOC_COLS} FROM docs WHERE source = ?1 \
                 AND (?2 IS NULL OR project_key = ?2 OR project_key IS NULL) \
                 ORDER BY updated_ms DESC, rowid DESC LIMIT ?3"
            ))
            .and_then(|mut s| {
                s.query_map(params![source.as_str(), visible_in, limit as i64], doc_row)?
                    .collect()
            })
            .map_err(|e| self.err(e))
    }

    fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms = query::terms(&q.text);
        if terms.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut hits = match query::word_query(&terms) {
            Some(m) => self.search_fts("docs_word", Some(&m), &[], q, q.limit)?,
            None => Vec::new(),
        };
        // The substring index when words found nothing (a partial identifier, punctuation) or
        // the query has CJK text (unicode61 keeps a CJK run as one token, so a part of it is
        // only found by substring).
        if hits.len() < q.limit && (hits.is_empty() || terms.iter().any(|t| query::has_cjk(t))) {
            let (tri, short) = query::trigram_query(&terms);
            let more = match tri {
                Some(m) => self.search_fts("docs_trigram", Some(&m), &short, q, q.limit)?,
                None => self.search_fts("docs", None, &short, q, q.limit)?,
            };
            for h in more {
                if hits.len() >= q.limit {
                    break;
                }
                if !hits.iter().any(|x| x.id == h.id) {
                    hits.push(h);
                }
            }
        }
        Ok(hits)
    }

    fn stats(&self) -> Result<StoreStats> {
        let count = |sql: &str| -> Result<u64> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| self.err(e))
        };
        let group = |sql: &str| -> Result<BTreeMap<String, u64>> {
            self.conn
                .prepare(sql)
                .and_then(|mut s| {
                    s.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
                        .collect()
                })
                .map_err(|e| self.err(e))
        };
        Ok(StoreStats {
            projects: count("SELECT count(*) FROM projects")?,
            user_preferences: count("SELECT count(*) FROM user_preferences")?,
            learnings: count("SELECT count(*) FROM learnings")?,
            learnings_by_category: group(
                "SELECT category, count(*) FROM learnings GROUP BY category",
            )?,
            documents: group("SELECT source, count(*) FROM docs GROUP BY source")?,
            files: count("SELECT count(*) FROM files")?,
            schema_version: self.schema_version()?,
        })
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn optimize_search_index(&self) -> Result<bool> {
        self.write(|c| {
            for table in SEARCH_INDEXES {
                c.execute(
                    &format!("INSERT INTO {table}({table}) VALUES ('optimize')"),
                    [],
                )?;
            }
            Ok(true)
        })
    }

    fn tidy_search_index(&self) -> Result<bool> {
        if self.read_only {
            return Ok(false);
        }
        mem_core::fts5::tidy(&self.conn, &SEARCH_INDEXES, self.busy_timeout)
            .map_err(|e| self.err(e))
    }

    fn purge_deleted(&self) -> Result<()> {
        let (busy, log, copied): (i64, i64, i64) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(|e| self.err(e))?;
        if busy != 0 {
            tracing::warn!(
                log,
                copied,
                "{}: another process is reading; the write-ahead log is truncated by a later checkpoint",
                self.path.display()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// A read-only error names what is read-only: the database, a side file a read-only spell
    /// left (after the database's own mode was restored), or the directory.
    #[test]
    fn a_read_only_error_names_the_read_only_part() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(DATABASE_FILE);
        let shm = dir.path().join(format!("{DATABASE_FILE}-shm"));
        std::fs::write(&db, "").unwrap();
        std::fs::write(&shm, "").unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        };
        let message = || {
            let e = rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                None,
            );
            map_err(&db, DEFAULT_BUSY_TIMEOUT, e).to_string()
        };
        mode(&shm, 0o444);
        let m = message();
        assert!(
            m.contains(&format!("its shm file {}", shm.display())),
            "{m}"
        );
        mode(&db, 0o444);
        assert!(message().contains(": it is read-only"));
        mode(&db, 0o644);
        mode(&shm, 0o644);
        mode(dir.path(), 0o555);
        let m = message();
        mode(dir.path(), 0o755);
        assert!(m.contains("its directory is read-only"), "{m}");
    }
}
