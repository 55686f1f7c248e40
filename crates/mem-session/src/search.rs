//! Full-text search over session messages (MewCode §1: sessions are memory too; issue 29
//! "Session search").
//!
//! The index is a SQLite file beside the project's other caches,
//! `<sessions dir>/../cache/session-index.db` (for a project: `.mewcode/cache/session-index.db`).
//! It can always be rebuilt from the `.jsonl` files, which stay the truth. One row per indexed
//! record holds the session id, the record's number (1-based, as `mem session show` numbers
//! them), its time, its role and the text searched:
//! - user records: what the user said ([`mem_core::speech::user_speech_of`]; client-injected
//!   context is left out);
//! - assistant records: the text blocks, and for each tool_use the tool name and the short
//!   string arguments (commands, file paths, patterns; strings up to
//!   [`MAX_TOOL_ARGUMENT_CHARS`] characters);
//! - tool_result records: the result text when it is at most [`MAX_TOOL_OUTPUT_BYTES`] bytes
//!   (raw output above that is not indexed);
//! - compaction boundaries and legacy compression markers: the summary.
//!
//! Every text is redacted ([`mem_core::secrets::redact`]) before it is stored, so a secret in
//! a transcript is never in the index. The full-text table is contentless with secure delete:
//! a deleted session leaves no row and no token behind.
//!
//! [`SessionIndex::refresh`] keeps the index in step: a session whose file grew has only the
//! bytes after the indexed length read (the 256 bytes before that mark are compared first; if
//! they changed, or the file shrank, the session is indexed again from the start); a session
//! whose file is gone is dropped. Each session's update is one transaction, so a killed refresh
//! leaves the index as it was before that session.
//!
//! Words are matched by SQLite's `unicode61` tokenizer; text in scripts written without spaces
//! (CJK) is indexed as overlapping character pairs, so any two or more consecutive characters
//! of it can be found.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use mem_core::{ContentBlock, Message};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::record::{RecordType, SessionRecord};
use crate::store::SessionStore;

/// The index file's name, in the `cache` directory beside the sessions directory.
pub const INDEX_FILE: &str = "session-index.db";
/// The largest tool result indexed, in bytes of its text (2 KiB); larger raw output is left out.
pub const MAX_TOOL_OUTPUT_BYTES: usize = 2048;
/// The longest tool_use argument string indexed, in characters (commands, paths, patterns).
pub const MAX_TOOL_ARGUMENT_CHARS: usize = 400;
/// The most hits a search returns, whatever `limit` asks.
pub const MAX_HITS: usize = 200;
/// Bytes before the indexed length compared at each refresh to notice a rewritten file.
const TAIL_CHECK_BYTES: u64 = 256;
/// The most matches ranked for one search (the newest ones): a query whose words are in most
/// messages stays fast.
const RANK_WINDOW: usize = 5_000;
/// A query word found in more than this share of the indexed messages is left out of the match
/// when rarer words remain (the index's own stop words, in any language).
const COMMON_SHARE: f64 = 0.05;
/// Words that never match on their own when a search falls back to "any word" (English
/// function words and the commonest Chinese particles, as they are after lowercasing).
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "did", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my",
    "no", "not", "of", "on", "or", "our", "so", "that", "the", "their", "then", "there", "these",
    "this", "to", "up", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your", "我们", "你们", "他们", "这个", "那个", "什么", "怎么",
];
/// Schema version, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files (
    session_id TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    records INTEGER NOT NULL,
    tail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    record INTEGER NOT NULL,
    ts TEXT,
    role TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, record);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_vocab USING fts5vocab(messages_fts, 'row');
INSERT INTO messages_fts(messages_fts, rank) VALUES ('secure-delete', 1);
";

/// What one [`SessionIndex::refresh`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RefreshReport {
    /// Session files found.
    pub sessions: usize,
    /// Sessions read (new, grown or changed).
    pub read: usize,
    /// Sessions indexed again from the start (rewritten or shrunk files).
    pub reindexed: usize,
    /// Sessions dropped because their file is gone.
    pub removed: usize,
    /// Message rows added.
    pub added: usize,
    /// Whether the full-text index was merged after the rows were added (once they make up a
    /// sixteenth of it, [`mem_core::fts5::tidy`]).
    pub merged: bool,
    /// Sessions that could not be read (locked, unreadable), each naming its file; their old
    /// rows stay.
    pub warnings: Vec<String>,
}

/// A search over the index.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// The words to find (any language; FTS5 syntax has no meaning here).
    pub text: String,
    /// Only this session (a full id).
    pub session: Option<String>,
    /// Only records at or after this time: `YYYY-MM-DD` (UTC midnight) or RFC 3339.
    pub since: Option<String>,
    /// The most hits wanted (capped at [`MAX_HITS`]; 0 means 20).
    pub limit: usize,
}

/// One message that matches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionHit {
    /// The session.
    pub session_id: String,
    /// The record's number in the session, 1-based, as `mem session show` numbers them.
    pub record: u64,
    /// When the record was made (RFC 3339, UTC), if the record says.
    pub timestamp: Option<String>,
    /// `user`, `assistant`, `tool_result` or `summary`.
    pub role: String,
    /// Up to about 200 characters of the indexed text around the first match, cut at word
    /// boundaries, `…` where text was cut; redacted; not yet escaped for a terminal.
    pub snippet: String,
    /// BM25 score (higher is better; comparable within one search only).
    pub score: f64,
}

/// How long the index waits for another process's write (10 s).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The session search index of one sessions directory.
pub struct SessionIndex {
    conn: Connection,
    path: PathBuf,
    writable: bool,
}

fn db_error(path: &Path, source: rusqlite::Error) -> Error {
    Error::Index {
        path: path.to_owned(),
        source,
    }
}

impl SessionIndex {
    /// Where the index of `store` lives: `<store dir>/../cache/session-index.db`.
    pub fn path_for(store: &SessionStore) -> PathBuf {
        let dir = store.dir();
        dir.parent().unwrap_or(dir).join("cache").join(INDEX_FILE)
    }

    /// Opens (creating when missing) the index of `store` for reading and writing.
    ///
    /// # Errors
    /// [`Error::Io`] when the cache directory cannot be made, [`Error::Index`] naming the file
    /// when SQLite cannot open or set it up (a damaged file: delete it, it is rebuilt).
    pub fn open(store: &SessionStore) -> Result<Self> {
        let path = Self::path_for(store);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
        }
        let conn = Connection::open(&path).map_err(|e| db_error(&path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_error(&path, e))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| db_error(&path, e))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| db_error(&path, e))?;
        // Deleted rows are overwritten, not left in free pages: a deleted session leaves no
        // text in the file.
        conn.pragma_update(None, "secure_delete", "ON")
            .map_err(|e| db_error(&path, e))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db_error(&path, e))?;
        if version != SCHEMA_VERSION {
            if version > SCHEMA_VERSION {
                return Err(Error::IndexVersion {
                    path,
                    found: version,
                    supported: SCHEMA_VERSION,
                });
            }
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(|e| db_error(&path, e))?;
        }
        Ok(SessionIndex {
            conn,
            path,
            writable: true,
        })
    }

    /// Opens the index of `store` read-only, or `None` when there is none yet. Nothing is
    /// written (a read-only project, a read-only command).
    ///
    /// # Errors
    /// [`Error::Index`] naming the file when it cannot be opened.
    pub fn open_read_only(store: &SessionStore) -> Result<Option<Self>> {
        let path = Self::path_for(store);
        if !path.is_file() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| db_error(&path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_error(&path, e))?;
        Ok(Some(SessionIndex {
            conn,
            path,
            writable: false,
        }))
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Brings the index in step with the session files of `store` (see the module docs).
    ///
    /// # Errors
    /// [`Error::Index`] on a database failure; a session that cannot be read is a warning in
    /// the report, and its old rows stay.
    pub fn refresh(&mut self, store: &SessionStore) -> Result<RefreshReport> {
        let mut report = RefreshReport::default();
        if !self.writable {
            return Ok(report);
        }
        let ids = store.ids()?;
        report.sessions = ids.len();
        let known = self.known_files()?;
        let present: HashSet<&str> = ids.iter().map(String::as_str).collect();
        for id in known.keys() {
            if !present.contains(id.as_str()) {
                self.remove(id)?;
                report.removed += 1;
            }
        }
        for id in &ids {
            let path = store.jsonl_path(id);
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64);
            let state = known.get(id.as_str());
            if state.is_some_and(|s| s.bytes == meta.len() && s.mtime_ns == mtime_ns) {
                continue;
            }
            match self.update_session(store, id, state, mtime_ns) {
                Ok((added, again)) => {
                    report.read += 1;
                    report.added += added;
                    if again {
                        report.reindexed += 1;
                    }
                }
                Err(e @ Error::Index { .. }) => return Err(e),
                Err(e) => report.warnings.push(e.to_string()),
            }
        }
        // The rows added leave segments: merged once they make up a sixteenth of the index
        // (`mem_core::fts5::tidy`; it does not wait for another writer). The rows have landed,
        // so a failure there is a warning.
        if report.added > 0 {
            match mem_core::fts5::tidy(&self.conn, &["messages_fts"], BUSY_TIMEOUT) {
                Ok(merged) => report.merged = merged,
                Err(e) => report.warnings.push(db_error(&self.path, e).to_string()),
            }
        }
        Ok(report)
    }

    /// Drops every row of session `id` (a deleted session).
    ///
    /// # Errors
    /// [`Error::Index`] on a database failure.
    pub fn remove(&mut self, id: &str) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db_error(&path, e))?;
        delete_session_rows(&tx, id).map_err(|e| db_error(&path, e))?;
        // FTS5's secure delete takes the rows out of every doclist, but a word left with no
        // row keeps its key in the segment until the segments are merged: merge them, so no
        // word of a deleted session stays in the file. Cost: one pass over the full-text index
        // (deleting a session is rare).
        tx.execute(
            "INSERT INTO messages_fts(messages_fts) VALUES ('optimize')",
            [],
        )
        .map_err(|e| db_error(&path, e))?;
        tx.commit().map_err(|e| db_error(&path, e))
    }

    fn known_files(&self) -> Result<HashMap<String, FileState>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT session_id, bytes, mtime_ns, records, tail FROM files")
            .map_err(|e| db_error(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    FileState {
                        bytes: r.get::<_, i64>(1)? as u64,
                        mtime_ns: r.get(2)?,
                        records: r.get::<_, i64>(3)? as u64,
                        tail: r.get(4)?,
                    },
                ))
            })
            .map_err(|e| db_error(&self.path, e))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(|e| db_error(&self.path, e))
    }

    /// Indexes what is new in session `id`; returns the rows added and whether the session was
    /// indexed again from the start.
    fn update_session(
        &mut self,
        store: &SessionStore,
        id: &str,
        state: Option<&FileState>,
        mtime_ns: i64,
    ) -> Result<(usize, bool)> {
        let mut from = state.map_or(0, |s| s.bytes);
        let mut first_record = state.map_or(0, |s| s.records);
        let mut read = store.records_after_offset(id, from, TAIL_CHECK_BYTES)?;
        let mut again = false;
        if let Some(s) = state
            && (read.len < s.bytes || mem_core::sha256_hex(&read.before_from) != s.tail)
        {
            again = true;
            from = 0;
            first_record = 0;
            read = store.records_after_offset(id, 0, TAIL_CHECK_BYTES)?;
        }
        // A digest, not the bytes: the raw tail of a transcript may hold a secret.
        let tail = mem_core::sha256_hex(&read.before_end);
        let (records, len) = (read.records, read.len);
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db_error(&path, e))?;
        if from == 0 {
            delete_session_rows(&tx, id).map_err(|e| db_error(&path, e))?;
        }
        let mut added = 0;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO messages(session_id, record, ts, role, text) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(|e| db_error(&path, e))?;
            let mut insert_fts = tx
                .prepare_cached("INSERT INTO messages_fts(rowid, body) VALUES (?1, ?2)")
                .map_err(|e| db_error(&path, e))?;
            for (i, record) in records.iter().enumerate() {
                let number = first_record + i as u64 + 1;
                let Some((role, text)) = indexed_text(record) else {
                    continue;
                };
                let text = mem_core::secrets::redact(&text).text;
                if text.trim().is_empty() {
                    continue;
                }
                let ts = record.timestamp.as_deref().and_then(normalize_time);
                insert
                    .execute(params![id, number as i64, ts, role, text])
                    .map_err(|e| db_error(&path, e))?;
                let rowid = tx.last_insert_rowid();
                insert_fts
                    .execute(params![rowid, fts_text(&text)])
                    .map_err(|e| db_error(&path, e))?;
                added += 1;
            }
        }
        tx.execute(
            "INSERT INTO files(session_id, bytes, mtime_ns, records, tail) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(session_id) DO UPDATE SET bytes = ?2, mtime_ns = ?3, records = ?4, tail = ?5",
            params![
                id,
                len as i64,
                mtime_ns,
                (first_record + records.len() as u64) as i64,
                tail
            ],
        )
        .map_err(|e| db_error(&path, e))?;
        tx.commit().map_err(|e| db_error(&path, e))?;
        Ok((added, again))
    }

    /// The messages that match `query`, best first (BM25; the newest 5,000 matches
    /// are ranked). Words found in more than 5% of the indexed messages are left out while a
    /// rarer word remains; every remaining word must match, and when that finds nothing any of
    /// them may. An empty or wordless query finds nothing.
    ///
    /// # Errors
    /// [`Error::Index`] on a database failure; [`Error::BadQuery`] for a `since` that is not a
    /// date.
    pub fn search(&self, query: &SessionQuery) -> Result<Vec<SessionHit>> {
        let limit = match query.limit {
            0 => 20,
            n => n.min(MAX_HITS),
        };
        let since = match &query.since {
            None => None,
            Some(s) => Some(parse_since(s).ok_or_else(|| {
                Error::BadQuery(format!(
                    "`{s}` is not a date for `since` (use YYYY-MM-DD or RFC 3339)"
                ))
            })?),
        };
        let mut units = query_units(&query.text);
        // A lone CJK character says little: left out beside other words, else a prefix.
        if units.iter().any(|u| !u.is_single_cjk()) {
            units.retain(|u| !u.is_single_cjk());
        } else {
            for u in &mut units {
                u.expr.push('*');
            }
        }
        if units.is_empty() {
            return Ok(Vec::new());
        }
        // The largest row id: the count of rows ever indexed, read from the b-tree's edge
        // (a `count(*)` would walk every row). Deleted rows make it larger, which only makes
        // fewer words count as common.
        let total: i64 = self
            .conn
            .query_row("SELECT coalesce(max(id), 0) FROM messages", [], |r| {
                r.get(0)
            })
            .map_err(|e| db_error(&self.path, e))?;
        let units = self.drop_common(units, total)?;
        let all = units.join(" AND ");
        let mut hits = self.run_match(&all, query, since.as_deref(), limit)?;
        if hits.is_empty() && units.len() > 1 {
            // Any word may match now, but not a function word alone: in a small index no
            // word is common enough to be dropped above, and "is" or "的" would match anything.
            let content: Vec<&String> = units
                .iter()
                .filter(|u| !FUNCTION_WORDS.contains(&u.trim_matches('"')))
                .collect();
            if !content.is_empty() {
                let any = content
                    .iter()
                    .map(|u| u.as_str())
                    .collect::<Vec<_>>()
                    .join(" OR ");
                hits = self.run_match(&any, query, since.as_deref(), limit)?;
            }
        }
        Ok(hits)
    }

    /// Leaves out the units found in more than [`COMMON_SHARE`] of `total` messages, keeping
    /// at least the rarest one.
    fn drop_common(&self, units: Vec<Unit>, total: i64) -> Result<Vec<String>> {
        let threshold = (total as f64 * COMMON_SHARE).max(50.0);
        let mut scored = Vec::with_capacity(units.len());
        for unit in units {
            let mut df = i64::MAX;
            for token in &unit.tokens {
                let d: i64 = self
                    .conn
                    .prepare_cached("SELECT doc FROM messages_vocab WHERE term = ?1")
                    .and_then(|mut s| {
                        s.query_row([token], |r| r.get(0))
                            .optional()
                            .map(|d| d.unwrap_or(0))
                    })
                    .map_err(|e| db_error(&self.path, e))?;
                df = df.min(d);
            }
            scored.push((unit.expr, df));
        }
        let rarest = scored.iter().map(|s| s.1).min().unwrap_or(0);
        Ok(scored
            .into_iter()
            .filter(|(_, df)| *df as f64 <= threshold || *df == rarest)
            .map(|(expr, _)| expr)
            .collect())
    }

    fn run_match(
        &self,
        expr: &str,
        query: &SessionQuery,
        since: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SessionHit>> {
        let sql = "SELECT m.session_id, m.record, m.ts, m.role, m.text, f.score
             FROM (SELECT rowid, -bm25(messages_fts) AS score FROM messages_fts
                   WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2) AS f
             JOIN messages m ON m.id = f.rowid
             WHERE (?3 IS NULL OR m.session_id = ?3) AND (?4 IS NULL OR m.ts >= ?4)
             ORDER BY f.score DESC, m.id DESC LIMIT ?5";
        let window = if query.session.is_some() || since.is_some() {
            // Filters apply after the window: rank every match so none is cut before them.
            i64::MAX
        } else {
            RANK_WINDOW as i64
        };
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| db_error(&self.path, e))?;
        let rows = stmt
            .query_map(
                params![expr, window, query.session, since, limit as i64],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, f64>(5)?,
                    ))
                },
            )
            .map_err(|e| db_error(&self.path, e))?;
        let words = snippet_words(&query.text);
        let mut hits = Vec::new();
        for row in rows {
            let (session_id, record, timestamp, role, text, score) =
                row.map_err(|e| db_error(&self.path, e))?;
            hits.push(SessionHit {
                session_id,
                record: record as u64,
                timestamp,
                role,
                snippet: snippet(&text, &words),
                score,
            });
        }
        Ok(hits)
    }
}

/// What [`search_sessions`] found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionSearch {
    /// The hits, best first.
    pub hits: Vec<SessionHit>,
    /// What bringing the index in step did (all zero when it could not be written).
    pub refresh: RefreshReport,
    /// `true` when the index could not be brought in step (it, or its directory, is read-only):
    /// sessions changed since the last import or hook sync may be missed.
    pub stale: bool,
}

/// The one session search of the CLI and the MCP server: opens the index of `store`, brings it
/// in step ([`SessionIndex::refresh`]) and runs `query`. When the index cannot be opened for
/// writing (a read-only project) the existing index is searched as it is, and `stale` says
/// so; with no index at all, nothing is found.
///
/// # Errors
/// [`Error::BadQuery`] for a bad `since`; [`Error::Index`] when the index is damaged (the
/// message names the file: deleting it is safe, it is rebuilt); store errors listing sessions.
pub fn search_sessions(store: &SessionStore, query: &SessionQuery) -> Result<SessionSearch> {
    if !store.dir().is_dir() {
        return Ok(SessionSearch::default());
    }
    let writable = match SessionIndex::open(store) {
        Ok(index) => Some(index),
        Err(Error::Io { .. }) => None,
        Err(Error::Index { source, .. }) if is_read_only(&source) => None,
        Err(e) => return Err(e),
    };
    match writable {
        Some(mut index) => match index.refresh(store) {
            Ok(refresh) => Ok(SessionSearch {
                hits: index.search(query)?,
                refresh,
                stale: false,
            }),
            Err(Error::Index { source, .. }) if is_read_only(&source) => {
                read_only_search(store, query)
            }
            Err(e) => Err(e),
        },
        None => read_only_search(store, query),
    }
}

/// Brings the session index of `store` in step (opening, or creating, it): what an import and
/// the hooks' transcript sync call after they wrote, so a search finds the new messages.
///
/// # Errors
/// As [`SessionIndex::open`] and [`SessionIndex::refresh`].
pub fn refresh_index(store: &SessionStore) -> Result<RefreshReport> {
    SessionIndex::open(store)?.refresh(store)
}

/// Drops session `id` from the index of `store`, when there is an index (`mem session delete`:
/// nothing of a deleted session stays searchable or in the file).
///
/// # Errors
/// As [`SessionIndex::open`] and [`SessionIndex::remove`].
pub fn forget_in_index(store: &SessionStore, id: &str) -> Result<()> {
    if !SessionIndex::path_for(store).is_file() {
        return Ok(());
    }
    SessionIndex::open(store)?.remove(id)
}

fn read_only_search(store: &SessionStore, query: &SessionQuery) -> Result<SessionSearch> {
    let hits = match SessionIndex::open_read_only(store)? {
        Some(index) => index.search(query)?,
        None => Vec::new(),
    };
    Ok(SessionSearch {
        hits,
        refresh: RefreshReport::default(),
        stale: true,
    })
}

fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

#[derive(Debug, Clone)]
struct FileState {
    bytes: u64,
    mtime_ns: i64,
    records: u64,
    /// SHA-256 (hex) of the up to [`TAIL_CHECK_BYTES`] bytes before `bytes`.
    tail: String,
}

fn delete_session_rows(tx: &rusqlite::Transaction<'_>, id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM messages_fts WHERE rowid IN (SELECT id FROM messages WHERE session_id = ?1)",
        [id],
    )?;
    tx.execute("DELETE FROM messages WHERE session_id = ?1", [id])?;
    tx.execute("DELETE FROM files WHERE session_id = ?1", [id])?;
    Ok(())
}

/// The role and text a record is searched by (see the module docs), or `None` for a record
/// with nothing to search.
pub fn indexed_text(record: &SessionRecord) -> Option<(&'static str, String)> {
    match record.record_type {
        RecordType::User => {
            let said = mem_core::speech::user_speech_of(record.message.as_ref()?)?;
            Some(("user", said))
        }
        RecordType::Assistant => Some(("assistant", assistant_text(record.message.as_ref()?))),
        RecordType::ToolResult => {
            let message = record.message.as_ref()?;
            let parts: Vec<String> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { content, .. } => {
                        let text = content.text();
                        (text.len() <= MAX_TOOL_OUTPUT_BYTES).then_some(text)
                    }
                    _ => None,
                })
                .collect();
            Some(("tool_result", parts.join("\n")))
        }
        RecordType::CompactBoundary | RecordType::Compression => {
            Some(("summary", record.summary.clone()?))
        }
        RecordType::SystemPrompt | RecordType::Rollback => None,
    }
}

fn assistant_text(message: &Message) -> String {
    let mut out = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text, .. } => push_line(&mut out, text),
            ContentBlock::ToolUse { name, input, .. } => {
                push_line(&mut out, name);
                push_short_strings(&mut out, input);
            }
            _ => {}
        }
    }
    out
}

fn push_line(out: &mut String, text: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

fn push_short_strings(out: &mut String, value: &Value) {
    match value {
        Value::String(s) if s.chars().count() <= MAX_TOOL_ARGUMENT_CHARS => push_line(out, s),
        Value::Array(items) => items.iter().for_each(|v| push_short_strings(out, v)),
        Value::Object(map) => map.values().for_each(|v| push_short_strings(out, v)),
        _ => {}
    }
}

/// `true` for a character of a script written without spaces (CJK ideographs, kana, hangul).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF
        | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// The text as it is given to the tokenizer: each run of CJK characters becomes its
/// overlapping pairs (a lone character stays itself), separated by spaces; the rest is kept.
fn fts_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
            continue;
        }
        flush_run(&mut out, &mut run);
        out.push(c);
    }
    flush_run(&mut out, &mut run);
    out
}

fn flush_run(out: &mut String, run: &mut Vec<char>) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    out.push_str(&cjk_pairs(run).join(" "));
    out.push(' ');
    run.clear();
}

fn cjk_pairs(run: &[char]) -> Vec<String> {
    if run.len() == 1 {
        return vec![run[0].to_string()];
    }
    run.windows(2).map(|w| w.iter().collect()).collect()
}

/// One part of a query: an FTS5 phrase (quoted) and the tokens it is made of, lowercased.
#[derive(Debug, Clone, PartialEq)]
struct Unit {
    expr: String,
    tokens: Vec<String>,
}

impl Unit {
    fn is_single_cjk(&self) -> bool {
        let mut chars = self.tokens.first().map(|t| t.chars()).into_iter().flatten();
        self.tokens.len() == 1 && chars.next().is_some_and(is_cjk) && chars.next().is_none()
    }
}

/// The query's parts: each run of letters and digits (a phrase when joined by `_`, `.`, `/`,
/// `-`…: `src/main.rs` is the phrase `src main rs`), and each CJK run as the phrase of its
/// pairs. Duplicates are dropped.
fn query_units(text: &str) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    for chunk in text.split(|c: char| c.is_whitespace()) {
        let mut tokens: Vec<String> = Vec::new();
        let mut word = String::new();
        let mut run: Vec<char> = Vec::new();
        let push_units = |tokens: &mut Vec<String>, units: &mut Vec<Unit>| {
            if tokens.is_empty() {
                return;
            }
            let expr = format!("\"{}\"", tokens.join(" ").replace('"', "\"\""));
            if !units.iter().any(|u| u.expr == expr) {
                units.push(Unit {
                    expr,
                    tokens: std::mem::take(tokens),
                });
            }
            tokens.clear();
        };
        for c in chunk.chars() {
            if is_cjk(c) {
                if !word.is_empty() {
                    tokens.push(std::mem::take(&mut word));
                }
                run.push(c);
            } else if c.is_alphanumeric() {
                if !run.is_empty() {
                    // A CJK run ends: it is a unit of its own.
                    push_units(&mut tokens, &mut units);
                    let mut pairs = cjk_pairs(&run);
                    push_units(&mut pairs, &mut units);
                    run.clear();
                }
                word.extend(c.to_lowercase());
            } else {
                if !word.is_empty() {
                    tokens.push(std::mem::take(&mut word));
                }
                if !run.is_empty() {
                    push_units(&mut tokens, &mut units);
                    let mut pairs = cjk_pairs(&run);
                    push_units(&mut pairs, &mut units);
                    run.clear();
                }
            }
        }
        if !word.is_empty() {
            tokens.push(word);
        }
        push_units(&mut tokens, &mut units);
        if !run.is_empty() {
            let mut pairs = cjk_pairs(&run);
            push_units(&mut pairs, &mut units);
        }
    }
    units
}

/// The query's words as they are looked for in a snippet: lowercased runs of letters and
/// digits, and CJK runs.
fn snippet_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut cjk = false;
    for c in text.chars() {
        let this_cjk = is_cjk(c);
        if c.is_alphanumeric() && (word.is_empty() || this_cjk == cjk) {
            word.extend(c.to_lowercase());
            cjk = this_cjk;
        } else {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
                cjk = this_cjk;
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.dedup();
    words
}

/// About this many characters of text around the first match.
const SNIPPET_CHARS: usize = 200;

/// Up to [`SNIPPET_CHARS`] characters of `text` around the first place one of `words`
/// (longest first) is found, whitespace folded to single spaces, cut at word boundaries with
/// `…` where text was left out.
fn snippet(text: &str, words: &[String]) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = folded.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return folded;
    }
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let at = words
        .iter()
        .filter_map(|w| {
            let w: Vec<char> = w.chars().collect();
            lower
                .windows(w.len().max(1))
                .position(|win| win == w.as_slice())
        })
        .min()
        .unwrap_or(0);
    let mut start = at.saturating_sub(SNIPPET_CHARS / 3);
    let mut end = (start + SNIPPET_CHARS).min(chars.len());
    start = end.saturating_sub(SNIPPET_CHARS).min(start);
    // Move the cuts to word boundaries (a space), unless that loses too much.
    if start > 0
        && let Some(sp) = chars[start..at.max(start)].iter().position(|c| *c == ' ')
    {
        start += sp + 1;
    }
    if end < chars.len()
        && let Some(sp) = chars[at.min(end)..end].iter().rposition(|c| *c == ' ')
        && at.min(end) + sp > start
    {
        end = at.min(end) + sp;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

/// A record time as RFC 3339 UTC with second precision (`2026-06-18T10:00:00Z`), comparable
/// as text.
fn normalize_time(ts: &str) -> Option<String> {
    chrono::DateTime::parse_from_rfc3339(ts).ok().map(|t| {
        t.with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    })
}

/// `--since`: `YYYY-MM-DD` (midnight UTC) or RFC 3339, normalised like [`normalize_time`].
fn parse_since(s: &str) -> Option<String> {
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
        return Some(format!("{}T00:00:00Z", d.format("%Y-%m-%d")));
    }
    normalize_time(s.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_runs_become_pairs_and_the_rest_stays() {
        assert_eq!(fts_text("用 uv 管理依赖"), " 用  uv  管理 理依 依赖 ");
        assert_eq!(fts_text("plain words"), "plain words");
        assert_eq!(fts_text("数据库migration"), " 数据 据库 migration");
    }

    #[test]
    fn query_units_make_phrases_of_identifiers_and_cjk_runs() {
        let exprs =
            |q: &str| -> Vec<String> { query_units(q).into_iter().map(|u| u.expr).collect() };
        assert_eq!(exprs("src/main.rs"), vec!["\"src main rs\""]);
        assert_eq!(
            exprs("clinicbook 的appointment表"),
            vec!["\"clinicbook\"", "\"的\"", "\"appointment\"", "\"表\""]
        );
        assert_eq!(exprs("缓存策略"), vec!["\"缓存 存策 策略\""]);
        assert_eq!(exprs("Cache cache CACHE"), vec!["\"cache\""]);
        assert_eq!(
            exprs("\"quoted\" AND NEAR(x"),
            vec!["\"quoted\"", "\"and\"", "\"near x\""]
        );
        assert!(exprs("  ?! -- ").is_empty());
    }

    #[test]
    fn snippets_cut_at_word_boundaries_around_the_match() {
        let text = format!(
            "{} the cache key is the tenant id {}",
            "lorem ipsum ".repeat(40),
            "dolor sit ".repeat(40)
        );
        let s = snippet(&text, &snippet_words("cache key"));
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("the cache key is the tenant id"), "{s}");
        let inner = s.trim_matches('…');
        assert!(
            inner.starts_with("lorem") || inner.starts_with("ipsum"),
            "{s}"
        );
        assert!(inner.ends_with("dolor") || inner.ends_with("sit"), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS + 2);
        assert_eq!(snippet("short  text\n here", &[]), "short text here");
    }

    #[test]
    fn since_takes_a_date_or_a_time() {
        assert_eq!(
            parse_since("2026-06-18").as_deref(),
            Some("2026-06-18T00:00:00Z")
        );
        assert_eq!(
            parse_since("2026-06-18T12:00:00+02:00").as_deref(),
            Some("2026-06-18T10:00:00Z")
        );
        assert_eq!(parse_since("last week"), None);
    }
}
