//! The tier store's operations (seed 003 "CLI 命令", "记忆管理"): what `mem memory ...` and
//! the MCP `memory_*` tools do, on the configured store (SQLite or a team store).

use std::collections::BTreeMap;
use std::path::Path;

use mem_tiers::archive::{self, Archive, ImportReport};
use mem_tiers::index::SyncReport;
use mem_tiers::tiers::TierText;
use mem_tiers::{
    Added, CleanReport, Forgotten, LearningScope, MemoryId, MemoryStore, SearchHit, SearchQuery,
    Shown, SourceKind, Stats,
};

use crate::error::Result;
use crate::{Memory, TierManager};

/// The tier store opened for one command or tool call ([`Memory::tiers`]).
pub struct Tiers<'m> {
    memory: &'m Memory,
    manager: TierManager,
}

impl std::fmt::Debug for Tiers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiers")
            .field("memory", self.memory)
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

/// What a search asks: the words and which memories.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    /// The words, as plain text (no query syntax).
    pub text: String,
    /// The most results.
    pub limit: usize,
    /// Only these kinds of memory (empty: all).
    pub sources: Vec<SourceKind>,
    /// Only memories of this scope (`project`, `user`...); `None`: all.
    pub scope: Option<String>,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchResults {
    /// The hits, best first (full-text, fused with the nearest by meaning when embeddings are
    /// configured).
    pub hits: Vec<SearchHit>,
    /// `true` when the index could not be refreshed (a read-only store).
    pub stale: bool,
    /// Problems with embeddings (search stayed lexical), in order.
    pub warnings: Vec<String>,
}

/// A learning to add.
#[derive(Debug, Clone)]
pub struct NewLearning<'a> {
    /// Short title.
    pub title: &'a str,
    /// The lesson.
    pub content: &'a str,
    /// Category (`error`, `best-practice`...).
    pub category: &'a str,
    /// Tags.
    pub tags: &'a [String],
    /// Where it was learnt.
    pub context: Option<&'a str>,
    /// Who sees it.
    pub scope: LearningScope,
}

/// A forgotten memory.
#[derive(Debug, Clone)]
pub struct Forgot {
    /// What was removed, and from where.
    pub forgotten: Forgotten,
    /// Problems deleting its cached vectors (the memory itself is gone).
    pub warnings: Vec<String>,
}

/// A preference set.
#[derive(Debug, Clone)]
pub struct PreferenceSet {
    /// The value as stored (secrets withheld).
    pub stored: String,
    /// How many secrets were withheld.
    pub withheld: usize,
}

impl Memory {
    /// Opens the configured tier store for the project ([`Memory::open_tiers`]).
    ///
    /// Errors: [`crate::Error::Config`], [`crate::Error::Tiers`].
    pub fn tiers(&self) -> Result<Tiers<'_>> {
        Ok(Tiers {
            memory: self,
            manager: self.open_tiers()?,
        })
    }
}

impl Tiers<'_> {
    /// The manager (the store, its configuration, the project's record).
    pub fn manager(&self) -> &TierManager {
        &self.manager
    }

    /// The backend's name (`sqlite`, `postgres`).
    pub fn backend(&self) -> &'static str {
        self.manager.store().backend()
    }

    /// Searches every memory visible from the project (learnings, `memories.md` entries,
    /// notes), restricted by source and scope before the limit; the index is synced and use
    /// recorded only on a writable store. Fused with the documents nearest by meaning when
    /// embeddings are configured.
    ///
    /// Errors: the store's.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults> {
        let query = SearchQuery {
            text: request.text.clone(),
            visible_in: self.manager.project().map(|p| p.key.clone()),
            sources: request.sources.clone(),
            scope: request.scope.clone(),
            limit: request.limit,
        };
        let lexical = self.manager.recall_in(&query)?;
        let stale = self.manager.index_stale();
        let mut warnings = Vec::new();
        let hits =
            self.memory
                .hybrid_search(self.manager.store(), &query, lexical, &mut warnings)?;
        Ok(SearchResults {
            hits,
            stale,
            warnings,
        })
    }

    /// One memory by id.
    ///
    /// Errors: [`crate::Error::Tiers`] (`NotFound` when there is none).
    pub fn show(&self, id: &MemoryId) -> Result<Shown> {
        Ok(self.manager.show(id)?)
    }

    /// One memory by id; `None` when there is none.
    ///
    /// Errors: the store's.
    pub fn get(&self, id: &MemoryId) -> Result<Option<Shown>> {
        match self.manager.show(id) {
            Ok(s) => Ok(Some(s)),
            Err(mem_tiers::Error::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Adds a learning (secrets withheld).
    ///
    /// Errors: the store's (a team scope without a team store...).
    pub fn add(&self, l: &NewLearning<'_>) -> Result<Added> {
        Ok(self
            .manager
            .add_learning_in(l.title, l.content, l.category, l.tags, l.context, l.scope)?)
    }

    /// Removes one memory from where it lives (the learning's row, the `memories.md` bullet,
    /// the note file) and its cached vectors. Entries and notes of the project are removed
    /// only when [`Memory::check_notes_write`] allows it.
    ///
    /// Errors: [`crate::Error::Config`] (refused), the store's.
    pub fn forget(&self, id: &MemoryId) -> Result<Forgot> {
        if !matches!(id, MemoryId::Learning(_)) {
            self.memory.check_notes_write()?;
        }
        let texts = self
            .manager
            .show(id)
            .map(|shown| self.memory.embedded_texts(&shown.document))
            .unwrap_or_default();
        let forgotten = self.manager.forget(id)?;
        let mut warnings = Vec::new();
        self.memory
            .forget_vectors(Some(self.manager.store()), &texts, &mut warnings);
        Ok(Forgot {
            forgotten,
            warnings,
        })
    }

    /// Counts: projects, preferences, learnings, indexed entries and notes, tier sizes.
    ///
    /// Errors: the store's.
    pub fn stats(&self) -> Result<Stats> {
        Ok(self.manager.stats()?)
    }

    /// Refreshes the index, reports the short-term view, deletes expired learnings (none with
    /// `dry_run`).
    ///
    /// Errors: the store's.
    pub fn clean(&self, dry_run: bool) -> Result<CleanReport> {
        Ok(self.manager.clean(dry_run)?)
    }

    /// Rebuilds the index of `memories.md` entries and notes from the files.
    ///
    /// Errors: the store's.
    pub fn reindex(&self) -> Result<SyncReport> {
        Ok(self.manager.reindex()?)
    }

    /// The user's preferences, by key.
    ///
    /// Errors: the store's.
    pub fn preferences(&self) -> Result<BTreeMap<String, String>> {
        Ok(self.manager.preferences()?)
    }

    /// One preference (the key is trimmed and lower-cased as stored).
    ///
    /// Errors: the store's.
    pub fn preference(&self, key: &str) -> Result<Option<String>> {
        Ok(self.preferences()?.remove(&key.trim().to_lowercase()))
    }

    /// Sets a preference (secrets withheld) and returns it as stored.
    ///
    /// Errors: the store's.
    pub fn set_preference(&self, key: &str, value: &str) -> Result<PreferenceSet> {
        let withheld = self.manager.set_preference(key, Some(value))?;
        let stored = self.preference(key)?.unwrap_or_default();
        Ok(PreferenceSet { stored, withheld })
    }

    /// Removes a preference.
    ///
    /// Errors: the store's.
    pub fn unset_preference(&self, key: &str) -> Result<()> {
        self.manager.set_preference(key, None)?;
        Ok(())
    }

    /// Tier 0, the core memory for every system prompt.
    ///
    /// Errors: the store's.
    pub fn tier0(&self) -> Result<TierText> {
        Ok(self.manager.get_tier0_summary()?)
    }

    /// Tier 1, the selected memory, within `max_tokens` (default: `tier1_max_tokens`).
    ///
    /// Errors: the store's.
    pub fn tier1(&self, max_tokens: Option<usize>) -> Result<TierText> {
        let max = max_tokens.unwrap_or(self.manager.config().tier1_max_tokens);
        Ok(self.manager.get_tier1_summary(max)?)
    }

    /// Tier 2, the whole archive.
    ///
    /// Errors: the store's.
    pub fn archive(&self) -> Result<Archive> {
        Ok(self.manager.get_tier2_archive()?)
    }

    /// `archive` as Markdown, with the configured headings.
    pub fn archive_markdown(&self, archive: &Archive) -> String {
        archive::to_markdown(archive, &self.manager.config().headings)
    }

    /// Reads an archive (the text of the JSON file at `path`) back into the store; with
    /// `into_here`, the learnings of the one archived project that has this project's name and
    /// a key this store has never seen (this project at another path or on another machine)
    /// come into this project ([`mem_tiers::archive::import`]).
    ///
    /// Errors: the archive does not parse (naming `path`); with `into_here`, no such archived
    /// project or more than one; the store's.
    pub fn import(&self, text: &str, path: &Path, into_here: bool) -> Result<ImportReport> {
        let a = archive::parse(text, path)?;
        Ok(self.manager.import(&a, into_here)?)
    }
}

impl Memory {
    /// Copies the local SQLite store of `config` ([`Memory::tier_config`]) to the team store at
    /// `url` (idempotent, resumable); `options` gives the server's options (schema, author...)
    /// once the local store is open; `progress(done, total)` is called as learnings are copied.
    /// The configured store is not opened: the local database is the source.
    ///
    /// Errors: [`crate::Error::NoLocalStore`] when there is no local database;
    /// [`crate::Error::Config`] from `options`; the stores'.
    pub fn migrate_to_team(
        &self,
        config: &mem_tiers::MemoryConfig,
        url: &str,
        options: impl FnOnce() -> std::result::Result<mem_tiers::PgOptions, crate::ConfigError>,
        progress: impl FnMut(u64, u64),
    ) -> Result<Migrated> {
        let db = config.database_path();
        if !db.exists() {
            return Err(crate::Error::NoLocalStore { path: db });
        }
        let local = mem_tiers::SqliteStore::open(&db, config.busy_timeout)?;
        let server = mem_tiers::PgStore::open(url, &options().map_err(crate::Error::Config)?)?;
        let report = mem_tiers::migrate::copy_to_server(&local, &server, progress)?;
        Ok(Migrated {
            from: db,
            schema: server.schema().to_owned(),
            author: server.author().to_owned(),
            report,
        })
    }
}

/// The local store copied to a team store ([`Memory::migrate_to_team`]).
#[derive(Debug, Clone)]
pub struct Migrated {
    /// The local database.
    pub from: std::path::PathBuf,
    /// The server's schema.
    pub schema: String,
    /// Who the copied rows belong to.
    pub author: String,
    /// What was copied.
    pub report: mem_tiers::migrate::MigrateReport,
}
