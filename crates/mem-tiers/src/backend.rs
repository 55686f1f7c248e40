//! Backend selection: the local SQLite store (the default) or the team store on PostgreSQL,
//! behind one [`MemoryStore`] value ([`AnyStore`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::Result;
use crate::manager::MemoryConfig;
use crate::model::{
    Document, Expiry, FileState, LearningEntry, LearningFilter, NewLearning, ProjectRecord,
    SearchHit, SearchQuery, SourceKind, StoreStats,
};
use crate::postgres::{PgOptions, PgStore};
use crate::sqlite::SqliteStore;
use crate::store::MemoryStore;

/// Where the tier store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A local SQLite file (`<storage_dir>/memory.db`).
    Sqlite(PathBuf),
    /// A PostgreSQL server (`[store] url` or `MEM_STORE_URL`), with who the store acts for.
    Postgres {
        /// The connection URL (may hold a password: never print it, use
        /// [`crate::postgres::redact_url`]).
        url: String,
        /// Schema, author, team, timeouts.
        options: PgOptions,
    },
}

/// Either backend; every [`MemoryStore`] call is passed through.
#[derive(Debug)]
pub enum AnyStore {
    /// The local SQLite store.
    Sqlite(SqliteStore),
    /// The team store on PostgreSQL.
    Postgres(PgStore),
}

impl AnyStore {
    /// Opens the store at `location` (SQLite with `config.busy_timeout`).
    ///
    /// # Errors
    /// The backend's open errors ([`crate::Error::Foreign`], [`crate::Error::Server`]...).
    pub fn open(location: &StoreLocation, config: &MemoryConfig) -> Result<AnyStore> {
        Ok(match location {
            StoreLocation::Sqlite(path) => {
                AnyStore::Sqlite(SqliteStore::open(path, config.busy_timeout)?)
            }
            StoreLocation::Postgres { url, options } => {
                AnyStore::Postgres(PgStore::open(url, options)?)
            }
        })
    }
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyStore::Sqlite($s) => $e,
            AnyStore::Postgres($s) => $e,
        }
    };
}

impl MemoryStore for AnyStore {
    fn upsert_project(&self, project: &ProjectRecord) -> Result<()> {
        each!(self, s => s.upsert_project(project))
    }
    fn project(&self, key: &str) -> Result<Option<ProjectRecord>> {
        each!(self, s => s.project(key))
    }
    fn recent_projects(&self, limit: Option<usize>) -> Result<Vec<ProjectRecord>> {
        each!(self, s => s.recent_projects(limit))
    }
    fn user_preferences(&self) -> Result<BTreeMap<String, String>> {
        each!(self, s => s.user_preferences())
    }
    fn set_user_preference(&self, key: &str, value: Option<&str>) -> Result<bool> {
        each!(self, s => s.set_user_preference(key, value))
    }
    fn add_learning(&self, learning: &NewLearning) -> Result<LearningEntry> {
        each!(self, s => s.add_learning(learning))
    }
    fn learning(&self, id: i64) -> Result<Option<LearningEntry>> {
        each!(self, s => s.learning(id))
    }
    fn learnings(&self, filter: &LearningFilter) -> Result<Vec<LearningEntry>> {
        each!(self, s => s.learnings(filter))
    }
    fn touch_learnings(&self, ids: &[i64], at_ms: i64) -> Result<()> {
        each!(self, s => s.touch_learnings(ids, at_ms))
    }
    fn delete_learning(&self, id: i64) -> Result<bool> {
        each!(self, s => s.delete_learning(id))
    }
    fn expire_learnings(
        &self,
        expiry: Expiry,
        visible_in: Option<&str>,
        dry_run: bool,
    ) -> Result<Vec<LearningEntry>> {
        each!(self, s => s.expire_learnings(expiry, visible_in, dry_run))
    }
    fn indexed_files(&self, roots: &[String]) -> Result<Vec<FileState>> {
        each!(self, s => s.indexed_files(roots))
    }
    fn replace_file(&self, state: &FileState, documents: &[Document]) -> Result<()> {
        each!(self, s => s.replace_file(state, documents))
    }
    fn touch_file(&self, state: &FileState) -> Result<()> {
        each!(self, s => s.touch_file(state))
    }
    fn remove_file(&self, path: &str) -> Result<usize> {
        each!(self, s => s.remove_file(path))
    }
    fn clear_file_index(&self) -> Result<usize> {
        each!(self, s => s.clear_file_index())
    }
    fn document(&self, id: &str) -> Result<Option<Document>> {
        each!(self, s => s.document(id))
    }
    fn documents(
        &self,
        source: SourceKind,
        visible_in: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        each!(self, s => s.documents(source, visible_in, limit))
    }
    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        each!(self, s => s.search(query))
    }
    fn stats(&self) -> Result<StoreStats> {
        each!(self, s => s.stats())
    }
    fn backend(&self) -> &'static str {
        each!(self, s => s.backend())
    }
    fn describe(&self) -> String {
        each!(self, s => s.describe())
    }
    fn read_only(&self) -> bool {
        each!(self, s => s.read_only())
    }
    fn purge_deleted(&self) -> Result<()> {
        each!(self, s => s.purge_deleted())
    }
    fn optimize_search_index(&self) -> Result<bool> {
        each!(self, s => s.optimize_search_index())
    }
    fn tidy_search_index(&self) -> Result<bool> {
        each!(self, s => s.tidy_search_index())
    }
}
