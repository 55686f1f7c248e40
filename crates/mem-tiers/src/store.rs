//! The store API: every read and write of the tier store and its index. SQL stays behind this
//! trait, so a second backend (PostgreSQL, issue 12) implements the same calls and passes the
//! same generic test suite (`tests/store_suite.rs`).

use std::collections::BTreeMap;

use crate::error::Result;
use crate::model::{
    Document, Expiry, FileState, LearningEntry, LearningFilter, NewLearning, ProjectRecord,
    SearchHit, SearchQuery, SourceKind, StoreStats,
};

/// The persistence of seed 003's stores (LongTermMemory: user and project preferences,
/// LearningsMemory) and of the one search index over every memory.
///
/// Implementations are safe to use from several processes at once: each call is one
/// transaction, and a call that waits longer than the backend's busy timeout fails with
/// [`crate::Error::Locked`] without writing anything. Writes take values already validated and
/// secret-filtered by [`crate::MemoryManager`].
pub trait MemoryStore {
    /// Inserts or updates a project by [`ProjectRecord::key`]; keeps the first `created_ms`.
    fn upsert_project(&self, project: &ProjectRecord) -> Result<()>;
    /// The project with this key.
    fn project(&self, key: &str) -> Result<Option<ProjectRecord>>;
    /// Projects by `last_used_ms`, most recent first; `limit` `None`: all.
    fn recent_projects(&self, limit: Option<usize>) -> Result<Vec<ProjectRecord>>;

    /// Every user preference set, by key.
    fn user_preferences(&self) -> Result<BTreeMap<String, String>>;
    /// Sets (`Some`) or removes (`None`) one user preference. Returns whether something changed.
    fn set_user_preference(&self, key: &str, value: Option<&str>) -> Result<bool>;

    /// Stores a learning and indexes it (its document `L<id>` is searchable when this returns).
    fn add_learning(&self, learning: &NewLearning) -> Result<LearningEntry>;
    /// The learning with this row id.
    fn learning(&self, id: i64) -> Result<Option<LearningEntry>>;
    /// Learnings matching the filter, newest first (`created_ms`, then id).
    fn learnings(&self, filter: &LearningFilter) -> Result<Vec<LearningEntry>>;
    /// Sets `last_used_ms` of these learnings to `at_ms` (missing ids are ignored).
    fn touch_learnings(&self, ids: &[i64], at_ms: i64) -> Result<()>;
    /// Deletes a learning and its document. Returns whether it existed.
    fn delete_learning(&self, id: i64) -> Result<bool>;
    /// Deletes the learnings not used since their scope's cutoff in `expiry` (only those
    /// visible in `visible_in` when given), in one transaction. With `dry_run`, deletes
    /// nothing. Returns the learnings concerned, by id.
    fn expire_learnings(
        &self,
        expiry: Expiry,
        visible_in: Option<&str>,
        dry_run: bool,
    ) -> Result<Vec<LearningEntry>>;

    /// The files the index tracks under these roots.
    fn indexed_files(&self, roots: &[String]) -> Result<Vec<FileState>>;
    /// Replaces everything indexed from `state.path` with `documents` and records `state`, in
    /// one transaction.
    fn replace_file(&self, state: &FileState, documents: &[Document]) -> Result<()>;
    /// Records a new size/mtime for a file whose content hash did not change.
    fn touch_file(&self, state: &FileState) -> Result<()>;
    /// Drops a file and its documents from the index. Returns the documents dropped.
    fn remove_file(&self, path: &str) -> Result<usize>;
    /// Drops every file-backed document and file state (learnings stay). Returns the documents
    /// dropped.
    fn clear_file_index(&self) -> Result<usize>;
    /// The document with this id.
    fn document(&self, id: &str) -> Result<Option<Document>>;
    /// Documents of one source visible in a project, newest first, at most `limit`.
    fn documents(
        &self,
        source: SourceKind,
        visible_in: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Document>>;
    /// Full-text search, best first (see `docs/formats/tiers.md`, "Search").
    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>>;

    /// Counts.
    fn stats(&self) -> Result<StoreStats>;

    /// Makes the text of deleted rows unreadable from the backend's files, after a forget or an
    /// expiry. SQLite (which overwrites deleted content with zeros, `secure_delete`) copies its
    /// write-ahead log into the database and truncates it (`wal_checkpoint(TRUNCATE)`), so the
    /// `-wal` file keeps no old page; a checkpoint that other readers keep from finishing is
    /// retried by the next one. The default does nothing: on PostgreSQL dead tuples stay in the
    /// table's pages until `VACUUM` (see `docs/TEAM.md`).
    ///
    /// # Errors
    /// The backend's error.
    fn purge_deleted(&self) -> Result<()> {
        Ok(())
    }

    /// Merges each full-text index into one segment, after which a search reads one b-tree per
    /// term instead of one per segment (`mem memory clean`, `mem memory reindex`). A store
    /// written one document at a time keeps several (FTS5's automerge leaves up to three per
    /// level); merging them all rewrites the whole index, so it is done on these maintenance
    /// commands, after a bulk import, and after a write once large segments pile up
    /// ([`MemoryStore::tidy_search_index`]), not on every write. At 100,000 learnings: 1.1 s,
    /// after which a substring pass takes 0.4–0.6 ms less in process and a whole `mem memory
    /// search` 1.66 → 1.29× the `sqlite3` floor (`docs/BENCHMARKS.md`, "Stop 43"). The default
    /// does nothing: PostgreSQL's GIN indexes keep their own pending list.
    ///
    /// Returns whether the backend merged anything (`false`: nothing to do on this backend).
    ///
    /// # Errors
    /// The backend's error; a read-only store refuses the write.
    fn optimize_search_index(&self) -> Result<bool> {
        Ok(false)
    }

    /// Keeps the full-text indexes merged as writes add to them, run after the writes that add
    /// learnings (`mem memory add`, the MCP `memory_add` tool for a learning, a small `mem
    /// memory import`). FTS5's automerge keeps the small segments in check but leaves several
    /// large ones; each costs a search one more b-tree per term (at 100,000 learnings a whole
    /// `mem memory search` on a store never merged: 1.54–1.77× the `sqlite3` floor; merged:
    /// 1.29–1.50×, `docs/BENCHMARKS.md`). So once the segments beside an index's largest hold
    /// a share of it (on SQLite [`mem_core::fts5::needs_merge`]: a sixteenth of its pages, at
    /// least 32), this merges that index as [`MemoryStore::optimize_search_index`] does, which
    /// rewrites it whole; small segments alone never start one. The merge does not wait for another
    /// process's write lock (the next write merges), is left to `mem memory clean` on an index
    /// too large to merge within a write's wait (256 MiB on SQLite), and is not done on a
    /// read-only store. The default does nothing (PostgreSQL's GIN indexes keep their own
    /// pending list).
    ///
    /// FTS5's incremental merge (`'merge'` with a page budget) was tried for this first: with
    /// writes between its steps, each step starts a new output segment, and 300 adds at
    /// 100,000 learnings left the trigram index in 611 segments.
    ///
    /// Returns whether it merged anything.
    ///
    /// # Errors
    /// The backend's error.
    fn tidy_search_index(&self) -> Result<bool> {
        Ok(false)
    }

    /// Which backend this is, as `mem memory stats` shows it: `sqlite` or `postgresql`.
    fn backend(&self) -> &'static str;

    /// Where the store is, safe to print: the SQLite file's path, or the server's URL without
    /// its password (plus the schema, author and team).
    fn describe(&self) -> String;

    /// Whether the store can only be read (a SQLite file or folder without write access): the
    /// manager then skips what only keeps records (registering the project, `last_used` times,
    /// syncing the index from changed files), so a read-only command succeeds. Default `false`.
    fn read_only(&self) -> bool {
        false
    }
}
