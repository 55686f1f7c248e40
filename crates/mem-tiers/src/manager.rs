//! `MemoryManager` (seed 003 "MemoryManager", "Tier 0/1/2", "数据模型").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_core::{Message, TokenCounter};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::id::MemoryId;
use crate::index::{IndexSource, SyncReport};
use crate::model::*;
use crate::sqlite::{DATABASE_FILE, DEFAULT_BUSY_TIMEOUT, SqliteStore};
use crate::store::MemoryStore;
use crate::tiers::{self, Headings, Item, Section, TierText};

/// Seed 003 `MemoryConfig`, with mewmem's additions.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// Where the database lives (`<storage_dir>/memory.db`). Default
    /// `~/.mewcode/tiers` (the seed's `~/.oh-my-coder/memory`, under mewmem's home dir).
    pub storage_dir: PathBuf,
    /// Short-term memory: at most this many messages of the latest session (default 100).
    pub short_term_max_messages: usize,
    /// Short-term memory: only a session active within this many hours (default 24).
    pub short_term_max_age_hours: u64,
    /// Tier 0 budget in tokens, exclusive (default 500: Tier 0 is `< 500` tokens).
    pub tier0_max_tokens: usize,
    /// Tier 1 default budget in tokens, exclusive (default 2,000).
    pub tier1_max_tokens: usize,
    /// `mem memory clean` deletes the current project's learnings not used for this many days
    /// (the project's `config.toml` wins over the user's); `None` (default): they never expire.
    pub learning_max_age_days: Option<u64>,
    /// The same for user-level learnings (`--global`, seen in every project), from the user's
    /// own `config.toml` only: a project's configuration never expires them (a cloned
    /// repository's `config.toml` would otherwise delete them). `None` (default): they never
    /// expire.
    pub user_learning_max_age_days: Option<u64>,
    /// Headings and labels of the tiers (default the seed's Chinese ones); the same
    /// `[memory] headings` setting as [`MemoryConfig::memories`]' `headings`.
    pub headings: Headings,
    /// How the `memories.md` files are written when `forget` or `import` changes them
    /// (headings of new sections, token cap); the same options `mem-auto` extraction uses.
    pub memories: mem_auto::AutoOptions,
    /// The user-level `.mewcode` dir (`memories.md`, `memory/`); `None`: no user-level sources.
    pub user_dir: Option<PathBuf>,
    /// Extra note dirs (scope `extra<K>`, K = index here), e.g. a Claude Code memory folder.
    pub extra_note_dirs: Vec<PathBuf>,
    /// How long a call waits for another process's write (default 5 s).
    pub busy_timeout: Duration,
    /// The tokenizer measuring the budgets (default o200k_base).
    pub counter: TokenCounter,
    /// Where [`MemoryManager::get_tier0_text`] remembers the token counts of the Tier 0 texts it
    /// measured ([`mem_core::CountCache`]), so that a new process fitting the same text again
    /// does not load the BPE vocabulary (~75 ms); `None` (default): counts are not remembered
    /// and nothing is written. Set by the SessionStart hook (`<storage_dir>/cache/token-counts`).
    pub count_cache: Option<PathBuf>,
}

impl MemoryConfig {
    /// The defaults for a user whose home directory is `home`.
    pub fn for_home(home: &Path) -> Self {
        MemoryConfig {
            storage_dir: home.join(".mewcode").join("tiers"),
            short_term_max_messages: 100,
            short_term_max_age_hours: 24,
            tier0_max_tokens: 500,
            tier1_max_tokens: 2_000,
            learning_max_age_days: None,
            user_learning_max_age_days: None,
            headings: Headings::zh(),
            memories: mem_auto::AutoOptions::default(),
            user_dir: Some(home.join(".mewcode")),
            extra_note_dirs: Vec::new(),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            counter: TokenCounter::default(),
            count_cache: None,
        }
    }

    /// `<storage_dir>/memory.db`.
    pub fn database_path(&self) -> PathBuf {
        self.storage_dir.join(DATABASE_FILE)
    }
}

/// Learnings shown in Tier 0 / Tier 1; projects in Tier 0 / Tier 1 (seed 003).
pub const TIER0_PROJECTS: usize = 3;
/// Learnings in Tier 0.
pub const TIER0_LEARNINGS: usize = 3;
/// Projects in Tier 1.
pub const TIER1_PROJECTS: usize = 5;
/// Learnings in Tier 1.
pub const TIER1_LEARNINGS: usize = 10;
/// Project-knowledge items in Tier 1 (preset notes, project entries and notes).
pub const TIER1_KNOWLEDGE: usize = 10;
/// The longest line of a tier item, in characters.
pub const TIER_ITEM_MAX_CHARS: usize = 200;

/// What [`MemoryManager::add_learning`] stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Added {
    /// The learning as stored (secrets replaced by `[REDACTED]`).
    pub learning: LearningEntry,
    /// How many secrets were withheld.
    pub withheld: usize,
}

/// The short-term memory: a view over the latest session (never a copy).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShortTerm {
    /// The latest session, if any.
    pub session_id: Option<String>,
    /// Its last activity (RFC 3339).
    pub last_active: Option<String>,
    /// `true` when it was last active longer ago than `short_term_max_age_hours`.
    pub expired: bool,
    /// Its last ≤ `short_term_max_messages` messages (empty when expired).
    pub messages: Vec<Message>,
}

/// One item shown by `show`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// The indexed document (title, body, path...).
    pub document: Document,
    /// The learning's full record, for `L` ids.
    pub learning: Option<LearningEntry>,
}

/// What `forget` removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forgotten {
    /// The id.
    pub id: String,
    /// Its source.
    pub source: SourceKind,
    /// Its title.
    pub title: String,
    /// Where it lived: the file changed or removed, or for a learning the store
    /// ([`MemoryStore::describe`]: the SQLite file, or the server's URL without its password).
    pub location: String,
}

/// What `clean` did (or would do, with `dry_run`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CleanReport {
    /// Whether nothing was deleted.
    pub dry_run: bool,
    /// The short-term view (its expiry is computed, the sessions are read through [`Sessions`]).
    pub short_term_expired: bool,
    /// Messages in the short-term view now.
    pub short_term_messages: usize,
    /// Learnings expired (`learning_max_age_days`).
    pub expired_learnings: Vec<LearningEntry>,
    /// The index refresh (files dropped because they are gone).
    pub index: SyncReport,
    /// Whether the full-text search index was merged into one segment per index
    /// ([`MemoryStore::optimize_search_index`]; not on a dry run, a read-only store or
    /// PostgreSQL).
    pub search_index_merged: bool,
}

/// `mem memory stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Where the store is ([`MemoryStore::describe`]: the SQLite file, or the server's URL
    /// without its password).
    pub database: String,
    /// The current project's key, if any.
    pub project: Option<String>,
    /// Store counts.
    pub store: StoreStats,
    /// Learnings visible in the current project.
    pub visible_learnings: usize,
    /// Short-term messages in view.
    pub short_term_messages: usize,
    /// Tier 0 size in tokens, and its budget.
    pub tier0_tokens: (usize, usize),
    /// Tier 1 size in tokens, and its budget.
    pub tier1_tokens: (usize, usize),
}

/// Seed 003's `MemoryManager` over any [`MemoryStore`].
pub struct MemoryManager<S: MemoryStore = SqliteStore> {
    config: MemoryConfig,
    store: S,
    project: Option<ProjectRecord>,
    sources: Vec<Box<dyn IndexSource>>,
    sessions: Option<Box<dyn Sessions>>,
}

impl std::fmt::Debug for MemoryManager<SqliteStore> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryManager")
            .field("config", &self.config)
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The files and sessions a manager reads besides its store, for a project (or none) and the
/// user: the index's file sources and the sessions of its short-term view. `mem-sources` gives
/// mewmem's (`memories.md` through `mem-auto`, note folders through `mem-recall`, sessions
/// through `mem-session`); the manager itself knows none of those formats.
pub trait MemorySources {
    /// The index sources of `project` (its root and key; `None`: no current project) and of the
    /// user, as `config` places them (`user_dir`, `extra_note_dirs`, `memories`).
    fn index_sources(
        &self,
        config: &MemoryConfig,
        project: Option<(&Path, &str)>,
    ) -> Vec<Box<dyn IndexSource>>;

    /// The sessions [`MemoryManager::short_term`] reads; `None` (default): the short-term view
    /// is always empty.
    fn sessions(&self) -> Option<Box<dyn Sessions>> {
        None
    }
}

/// A project's latest session as [`Sessions::latest`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestSession {
    /// The session id.
    pub id: String,
    /// Its last activity (RFC 3339).
    pub last_active: String,
}

/// The sessions of a project, read for the short-term view (seed 003 ShortTermMemory: a view
/// over the latest session, never a copy).
pub trait Sessions {
    /// The most recently active session of the project at `project_root`; `None` when it has
    /// none.
    ///
    /// # Errors
    /// [`Error::Invalid`] (`what` = `session`) naming what could not be read.
    fn latest(&self, project_root: &Path) -> Result<Option<LatestSession>>;

    /// The messages of session `id` of the project at `project_root`, as a resume replays them.
    ///
    /// # Errors
    /// [`Error::Invalid`] (`what` = `session`) naming what could not be read.
    fn messages(&self, project_root: &Path, id: &str) -> Result<Vec<Message>>;
}

impl<S: MemoryStore> MemoryManager<S> {
    /// Seed 003 `MemoryManager.from_project(project_path)` on a given store (any backend, e.g.
    /// the team store): reads `.omc/project.yaml` and registers the project (detecting language
    /// and framework from its manifests where the preset is silent), and plugs in the index
    /// sources and sessions `sources` gives for the project and the user
    /// (`mem_sources::FromProject` opens one with mewmem's own).
    ///
    /// The project is registered (written) only when the store does not know it yet, when its
    /// record (name, path, language, framework, commands, notes) changed, or when its last use
    /// is over [`LAST_USED_STEP_MS`] old: opening a known project for a read writes nothing.
    ///
    /// # Errors
    /// Store errors, and [`Error::Malformed`] for a bad preset (file and line named).
    pub fn open_project(
        project_dir: &Path,
        config: MemoryConfig,
        store: S,
        sources: &dyn MemorySources,
    ) -> Result<Self> {
        let project = crate::project::project_record(project_dir, now_ms())?;
        // A read-only store (a write-protected file or folder) cannot record the project: the
        // manager works with the record read from the preset and the manifests.
        if !store.read_only() {
            let known = store.project(&project.key)?;
            if !known.is_some_and(|k| same_registration(&k, &project)) {
                store.upsert_project(&project)?;
            }
        }
        let root = PathBuf::from(&project.path);
        let index_sources = sources.index_sources(&config, Some((&root, &project.key)));
        Ok(MemoryManager {
            config,
            store,
            project: Some(project),
            sources: index_sources,
            sessions: sources.sessions(),
        })
    }
}

/// How stale a `last_used_ms` (of a project opened, of a learning found) may be before a new
/// use is recorded, in milliseconds (1 hour): recency for "recent projects" and for expiry
/// without a write at every read.
pub const LAST_USED_STEP_MS: i64 = 60 * 60 * 1000;

/// An import (`mem memory import`) adding this many documents or more (learnings, entries,
/// notes) ends by merging the full-text indexes whole ([`MemoryStore::optimize_search_index`]);
/// a smaller one merges only when large segments pile up ([`MemoryStore::tidy_search_index`]).
/// The whole merge took 1.1 s at 100,000 learnings.
pub const BULK_IMPORT_DOCUMENTS: usize = 1000;

/// Whether registering `new` would change nothing that matters in the stored `known`: the same
/// description, and a last use under [`LAST_USED_STEP_MS`] before `new`'s.
fn same_registration(known: &ProjectRecord, new: &ProjectRecord) -> bool {
    known.key == new.key
        && known.name == new.name
        && known.path == new.path
        && known.language == new.language
        && known.framework == new.framework
        && known.test_command == new.test_command
        && known.custom_commands == new.custom_commands
        && known.notes == new.notes
        && new.last_used_ms.saturating_sub(known.last_used_ms) < LAST_USED_STEP_MS
}

fn invalid(what: &'static str, reason: impl Into<String>) -> Error {
    Error::Invalid {
        what,
        reason: reason.into(),
    }
}

/// `text` lowercased, each [`mem_core::secrets::REDACTED`] marker kept as it is.
pub(crate) fn lowercase_outside_markers(text: &str) -> String {
    text.split(mem_core::secrets::REDACTED)
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(mem_core::secrets::REDACTED)
}

fn redact(text: &str, withheld: &mut usize) -> String {
    let r = mem_core::secrets::redact(text);
    *withheld += r.withheld();
    r.text
}

impl<S: MemoryStore> MemoryManager<S> {
    /// A manager over a given store (any backend), for a project already registered (or none),
    /// with the given index sources.
    pub fn with_store(
        config: MemoryConfig,
        store: S,
        project: Option<ProjectRecord>,
        sources: Vec<Box<dyn IndexSource>>,
    ) -> Self {
        MemoryManager {
            config,
            store,
            project,
            sources,
            sessions: None,
        }
    }

    /// The manager with `sessions` read by [`MemoryManager::short_term`] (a manager made by
    /// [`MemoryManager::with_store`] has none: its short-term view is empty).
    pub fn with_sessions(mut self, sessions: Box<dyn Sessions>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// The current project, if any.
    pub fn project(&self) -> Option<&ProjectRecord> {
        self.project.as_ref()
    }

    fn project_key(&self) -> Option<&str> {
        self.project.as_ref().map(|p| p.key.as_str())
    }

    /// Seed 003 `omc memory add TITLE CONTENT --category C`: validates, filters secrets out of
    /// every field, stores the learning in the current project (or user-wide with `global`).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty or over-long title ([`MAX_TITLE_CHARS`] characters),
    /// content over [`MAX_CONTENT_BYTES`] bytes, a bad category or tag; store errors.
    pub fn add_learning(
        &self,
        title: &str,
        content: &str,
        category: &str,
        tags: &[String],
        context: Option<&str>,
        global: bool,
    ) -> Result<Added> {
        let scope = if global {
            LearningScope::User
        } else {
            LearningScope::Project
        };
        self.add_learning_in(title, content, category, tags, context, scope)
    }

    /// [`MemoryManager::add_learning`] with an explicit scope: `User` (every project),
    /// `Project` (the current one; user-wide when there is none) or `Team` (shared with the
    /// team of a team store; the current project is recorded with it). Then the full-text
    /// indexes are tidied ([`MemoryStore::tidy_search_index`]: merged once large segments pile
    /// up; a failure there is logged, the learning is stored).
    ///
    /// # Errors
    /// As [`MemoryManager::add_learning`]; [`Error::Invalid`] for `Team` on a store without a
    /// team (SQLite, or PostgreSQL without `[store] team`).
    pub fn add_learning_in(
        &self,
        title: &str,
        content: &str,
        category: &str,
        tags: &[String],
        context: Option<&str>,
        scope: LearningScope,
    ) -> Result<Added> {
        let global = scope == LearningScope::User;
        let mut withheld = 0;
        // Checked as it is stored: control characters and escape sequences stripped, secrets
        // withheld (a title of escape codes alone would be stored empty, and an archive
        // holding it would not import).
        if title.trim().is_empty() {
            return Err(invalid("title", "it is empty"));
        }
        let title = redact(title, &mut withheld);
        let title = title.trim();
        if title.is_empty() {
            return Err(invalid(
                "title",
                "it holds only control characters or escape sequences, which are not kept",
            ));
        }
        let n = title.chars().count();
        if n > MAX_TITLE_CHARS {
            return Err(invalid(
                "title",
                format!("{n} characters; at most {MAX_TITLE_CHARS}"),
            ));
        }
        // An empty lesson is a slip (an unset shell variable, an empty file), not a learning.
        if content.trim().is_empty() {
            return Err(invalid("content", "it is empty"));
        }
        for (what, text) in [("content", Some(content)), ("context", context)] {
            if let Some(t) = text
                && t.len() > MAX_CONTENT_BYTES
            {
                return Err(invalid(
                    what,
                    format!("{} bytes; at most {MAX_CONTENT_BYTES}", t.len()),
                ));
            }
        }
        // As stored, like the title: a lesson of escape codes alone would be stored empty.
        let content = redact(content, &mut withheld);
        if content.trim().is_empty() {
            return Err(invalid(
                "content",
                "it holds only control characters or escape sequences, which are not kept",
            ));
        }
        let category = validate_name("category", category, &mut withheld)?;
        let mut clean_tags: Vec<String> = Vec::new();
        for t in tags {
            for t in t.split(',') {
                let t = t.trim();
                if t.is_empty() {
                    continue;
                }
                let t = validate_name("tag", t, &mut withheld)?;
                if !clean_tags.contains(&t) {
                    clean_tags.push(t);
                }
            }
        }
        if clean_tags.len() > MAX_TAGS {
            return Err(invalid(
                "tags",
                format!("{}; at most {MAX_TAGS}", clean_tags.len()),
            ));
        }
        let new = NewLearning {
            title: title.to_owned(),
            content,
            category,
            tags: clean_tags,
            context: context
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| redact(c, &mut withheld)),
            project_key: if global {
                None
            } else {
                self.project_key().map(str::to_owned)
            },
            created_ms: now_ms(),
            share_with_team: scope == LearningScope::Team,
        };
        let learning = self.store.add_learning(&new)?;
        self.tidy_search_index();
        Ok(Added { learning, withheld })
    }

    /// [`MemoryStore::tidy_search_index`] after a write that added documents. The write has
    /// landed by then, so a failure (another process holding the lock past the busy timeout)
    /// is logged, not returned: the next write tries again.
    fn tidy_search_index(&self) {
        if let Err(e) = self.store.tidy_search_index() {
            tracing::warn!("search index not merged this time: {e}");
        }
    }

    /// Seed 003 `get_learnings_by_category`: the learnings of a category visible in the current
    /// project, newest first.
    ///
    /// # Errors
    /// Store errors.
    pub fn get_learnings_by_category(&self, category: &str) -> Result<Vec<LearningEntry>> {
        self.store.learnings(&LearningFilter {
            visible_in: self.project_key().map(str::to_owned),
            category: Some(category.trim().to_lowercase()),
            limit: None,
        })
    }

    /// Every user preference.
    ///
    /// # Errors
    /// Store errors.
    pub fn preferences(&self) -> Result<BTreeMap<String, String>> {
        self.store.user_preferences()
    }

    /// Sets (or with `None` removes) a user preference; the value goes through the secret
    /// filter. Returns the number of secrets withheld.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a key that is not `[a-z][a-z0-9_.-]*` (≤ 64 chars) or a value over
    /// [`MAX_CONTENT_BYTES`]; store errors.
    pub fn set_preference(&self, key: &str, value: Option<&str>) -> Result<usize> {
        let mut withheld = 0;
        let key = validate_name("preference key", key, &mut withheld)?;
        let value = match value {
            Some(v) if v.len() > MAX_CONTENT_BYTES => {
                return Err(invalid(
                    "preference value",
                    format!("{} bytes; at most {MAX_CONTENT_BYTES}", v.len()),
                ));
            }
            Some(v) if v.trim().is_empty() => {
                return Err(invalid(
                    "preference value",
                    "it is empty (use --unset to remove a preference)",
                ));
            }
            Some(v) => Some(redact(v.trim(), &mut withheld)),
            None => None,
        };
        self.store.set_user_preference(&key, value.as_deref())?;
        Ok(withheld)
    }

    fn visible_learnings(&self, limit: Option<usize>) -> Result<Vec<LearningEntry>> {
        self.store.learnings(&LearningFilter {
            visible_in: self.project_key().map(str::to_owned),
            category: None,
            limit,
        })
    }

    fn learning_line(&self, l: &LearningEntry) -> String {
        let text = if l.content.trim().is_empty() {
            l.title.clone()
        } else {
            format!("{}: {}", l.title.trim(), l.content.trim())
        };
        format!("- {}", tiers::one_line(&text, TIER_ITEM_MAX_CHARS))
    }

    fn projects_for_tier(&self, n: usize) -> Result<Vec<ProjectRecord>> {
        let mut projects = self.store.recent_projects(Some(n))?;
        if let Some(cur) = &self.project
            && !projects.iter().any(|p| p.key == cur.key)
        {
            projects.insert(0, cur.clone());
            projects.truncate(n);
        }
        Ok(projects)
    }

    /// Seed 003 `get_tier0_summary()`: `## 最近项目` (3, `- name: Language/Framework`),
    /// `## 用户偏好` (the core ones: model, workflow), `## 最近经验` (3, `- title: content`),
    /// fewer than `tier0_max_tokens` tokens. Drop order while over budget: learnings oldest
    /// first, then projects least recent first (the current project last), then preferences
    /// (workflow before model).
    ///
    /// # Errors
    /// Store errors.
    pub fn get_tier0_summary(&self) -> Result<TierText> {
        Ok(tiers::fit(
            self.tier0_sections()?,
            self.config.tier0_max_tokens,
            &self.config.counter,
        ))
    }

    /// The text of [`Self::get_tier0_summary`] (the same fit, the same text) without its token
    /// count: the tokenizer's vocabulary (~75 ms to load in a new process) is used only when
    /// the text has at least `tier0_max_tokens` bytes and its count is not in
    /// [`MemoryConfig::count_cache`]. What the SessionStart hook injects.
    ///
    /// A cache that cannot be written costs nothing but the next process's count (logged at
    /// debug level).
    ///
    /// # Errors
    /// Store errors.
    pub fn get_tier0_text(&self) -> Result<String> {
        let sections = self.tier0_sections()?;
        let max = self.config.tier0_max_tokens;
        let counter = &self.config.counter;
        let Some(path) = &self.config.count_cache else {
            return Ok(tiers::fit_text(sections, max, counter).0);
        };
        let cache = mem_core::CountCache::open(path);
        let (text, _) = tiers::fit_text_with(sections, max, |t| cache.count(counter, t));
        if let Err(e) = cache.save() {
            tracing::debug!("token counts not remembered in {}: {e}", path.display());
        }
        Ok(text)
    }

    fn tier0_sections(&self) -> Result<Vec<Section>> {
        let h = &self.config.headings;
        let projects = self.projects_for_tier(TIER0_PROJECTS)?;
        let mut sections = Vec::new();
        let cur = self.project_key();
        let mut proj_items = Vec::new();
        for (i, p) in projects.iter().enumerate() {
            let stack = [p.language.as_deref(), p.framework.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("/");
            let text = if stack.is_empty() {
                p.name.clone()
            } else {
                format!("{}: {stack}", p.name)
            };
            let current = Some(p.key.as_str()) == cur;
            proj_items.push(Item {
                text: format!("- {}", tiers::one_line(&text, TIER_ITEM_MAX_CHARS)),
                rank: if current { 150 } else { 110 - i as u32 },
                label: format!("project {}", p.name),
            });
        }
        sections.push(Section {
            heading: h.recent_projects.clone(),
            items: proj_items,
        });
        let prefs = self.store.user_preferences()?;
        let mut pref_items = Vec::new();
        for (i, key) in USER_PREFERENCE_KEYS.iter().take(2).enumerate() {
            if let Some(v) = prefs.get(*key) {
                pref_items.push(Item {
                    text: format!(
                        "- {}: {}",
                        h.preference_labels[i],
                        tiers::one_line(v, TIER_ITEM_MAX_CHARS)
                    ),
                    rank: 200 - i as u32,
                    label: format!("preference {key}"),
                });
            }
        }
        sections.push(Section {
            heading: h.user_preferences.clone(),
            items: pref_items,
        });
        let learnings = self.visible_learnings(Some(TIER0_LEARNINGS))?;
        let n = learnings.len();
        sections.push(Section {
            heading: h.recent_learnings.clone(),
            items: learnings
                .iter()
                .enumerate()
                .map(|(i, l)| Item {
                    text: self.learning_line(l),
                    rank: (n - i) as u32,
                    label: format!("L{}", l.id),
                })
                .collect(),
        });
        Ok(sections)
    }

    /// Seed 003 `get_tier1_summary(max_tokens)`: `## 项目详情` (5 projects, a `### name` block
    /// each), `## 项目知识` (the preset's notes, then the project's `memories.md` entries and
    /// notes, newest first), `## 常用命令` (test and custom commands of the current project),
    /// `## 学习记录` (10), fewer than `max_tokens` tokens. Drop order while over budget:
    /// learnings oldest first, then knowledge items oldest first, then other projects least
    /// recent first, then commands (last first), the current project's details last.
    ///
    /// # Errors
    /// Store errors.
    pub fn get_tier1_summary(&self, max_tokens: usize) -> Result<TierText> {
        let h = &self.config.headings;
        let cur = self.project_key().map(str::to_owned);
        let projects = self.projects_for_tier(TIER1_PROJECTS)?;
        let mut items = Vec::new();
        for (i, p) in projects.iter().enumerate() {
            let mut block = format!("### {}", tiers::one_line(&p.name, TIER_ITEM_MAX_CHARS));
            let fields = [
                p.language.as_deref(),
                p.framework.as_deref(),
                p.test_command.as_deref(),
            ];
            for (label, value) in h.project_labels.iter().zip(fields) {
                if let Some(v) = value {
                    block.push_str(&format!(
                        "\n- {label}: {}",
                        tiers::one_line(v, TIER_ITEM_MAX_CHARS)
                    ));
                }
            }
            let current = Some(&p.key) == cur.as_ref();
            items.push(Item {
                text: block,
                rank: if current { 400 } else { 300 - i as u32 },
                label: format!("project {}", p.name),
            });
        }
        let mut sections = vec![Section {
            heading: h.project_details.clone(),
            items,
        }];
        // Project knowledge: the preset's notes, then indexed project entries and notes.
        let mut knowledge = Vec::new();
        if let Some(p) = &self.project {
            for n in &p.notes {
                knowledge.push(format!("- {}", tiers::one_line(n, TIER_ITEM_MAX_CHARS)));
            }
            if self.sync_for_read().is_ok() {
                let mut docs =
                    self.store
                        .documents(SourceKind::Entry, Some(&p.key), TIER1_KNOWLEDGE)?;
                docs.extend(self.store.documents(
                    SourceKind::Note,
                    Some(&p.key),
                    TIER1_KNOWLEDGE,
                )?);
                docs.retain(|d| d.project_key.is_some());
                docs.sort_by(|a, b| {
                    b.updated_ms
                        .cmp(&a.updated_ms)
                        .then_with(|| a.id.cmp(&b.id))
                });
                for d in docs {
                    let text = if d.source == SourceKind::Note {
                        format!("{}: {}", d.title, d.body)
                    } else {
                        d.body.clone()
                    };
                    knowledge.push(format!("- {}", tiers::one_line(&text, TIER_ITEM_MAX_CHARS)));
                }
            }
        }
        knowledge.truncate(TIER1_KNOWLEDGE);
        let nk = knowledge.len();
        sections.push(Section {
            heading: h.project_knowledge.clone(),
            items: knowledge
                .into_iter()
                .enumerate()
                .map(|(i, text)| Item {
                    text,
                    rank: 100 + (nk - i) as u32,
                    label: format!("knowledge {}", i + 1),
                })
                .collect(),
        });
        let mut commands = Vec::new();
        if let Some(p) = &self.project {
            if let Some(t) = &p.test_command {
                commands.push((h.project_labels[2].clone(), t.clone()));
            }
            for (name, cmd) in &p.custom_commands {
                commands.push((name.clone(), cmd.clone()));
            }
        }
        let nc = commands.len() as u32;
        sections.push(Section {
            heading: h.common_commands.clone(),
            items: commands
                .into_iter()
                .enumerate()
                .map(|(i, (name, cmd))| Item {
                    text: format!("- {name}: `{}`", tiers::one_line(&cmd, TIER_ITEM_MAX_CHARS)),
                    rank: 350 + nc - i as u32,
                    label: format!("command {name}"),
                })
                .collect(),
        });
        let learnings = self.visible_learnings(Some(TIER1_LEARNINGS))?;
        let n = learnings.len();
        sections.push(Section {
            heading: h.learnings.clone(),
            items: learnings
                .iter()
                .enumerate()
                .map(|(i, l)| Item {
                    text: self.learning_line(l),
                    rank: (n - i) as u32,
                    label: format!("L{}", l.id),
                })
                .collect(),
        });
        Ok(tiers::fit(sections, max_tokens, &self.config.counter))
    }

    /// Seed 003 `get_tier2_archive()`: the whole memory, unbounded (see [`crate::archive`]):
    /// the store's preferences, projects and learnings, then the `memories.md` entries and the
    /// notes of this project and user (and the extra note dirs), as their files hold them now.
    ///
    /// # Errors
    /// Store errors; [`Error::Source`] for a memory file that cannot be read.
    pub fn get_tier2_archive(&self) -> Result<crate::archive::Archive> {
        let mut archive = crate::archive::export(&self.store)?;
        for s in &self.sources {
            s.export(&mut archive)?;
        }
        Ok(archive)
    }

    /// Imports an archive written by `archive --format json`: the store's records (see
    /// [`crate::archive::import`]; with `into_here`, the learnings of this project archived at
    /// another path or on another machine come into this project), then entries into the
    /// `memories.md` of their category's scope (merged: a near-duplicate is not added again;
    /// the token cap is kept) and notes into the note dir of their scope (a file of that name
    /// that exists is kept, never overwritten). Entries and notes of a scope with no file here
    /// (an `extra<K>` not configured) are listed in [`crate::archive::ImportReport::skipped`].
    /// The full-text
    /// indexes are then merged whole when the import added [`BULK_IMPORT_DOCUMENTS`] or more,
    /// else tidied ([`MemoryStore::tidy_search_index`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown entry category or a bad note file name (checked before
    /// anything is written); as [`crate::archive::import`]; [`Error::Source`] for a file that
    /// cannot be written.
    pub fn import(
        &self,
        archive: &crate::archive::Archive,
        into_here: bool,
    ) -> Result<crate::archive::ImportReport> {
        // Everything is checked before anything is written.
        for e in &archive.entries {
            crate::archive::entry_category(e)?;
        }
        for n in &archive.notes {
            crate::archive::check_note_file_name(&n.file)?;
        }
        let mut report =
            crate::archive::import(&self.store, archive, self.project.as_ref(), into_here)?;
        let mut taken = std::collections::HashSet::new();
        for s in &self.sources {
            taken.extend(s.import(archive, &mut report)?);
        }
        report.skipped = archive
            .entries
            .iter()
            .map(|e| &e.id)
            .chain(archive.notes.iter().map(|n| &n.id))
            .filter(|id| !taken.contains(*id))
            .cloned()
            .collect();
        // Entries and notes are in their files by now: an index that cannot take them yet
        // (the lock held past the busy timeout) is logged, and the next read syncs them.
        if report.entries_added + report.notes_added > 0
            && let Err(e) = self.sync_index()
        {
            tracing::warn!("index not refreshed after the import: {e}");
        }
        // A bulk import leaves its documents in many segments: merged at once, as `mem memory
        // clean` would, when it added at least [`BULK_IMPORT_DOCUMENTS`]; tidied else.
        // The import has landed: a merge that fails (the lock held past the busy timeout) is
        // logged, and the next write or `mem memory clean` merges.
        if report.learnings_added + report.entries_added + report.notes_added
            >= BULK_IMPORT_DOCUMENTS
        {
            if let Err(e) = self.store.optimize_search_index() {
                tracing::warn!("search index not merged after the import: {e}");
            }
        } else {
            self.tidy_search_index();
        }
        Ok(report)
    }

    /// Brings the index up to date with the memory files (see [`crate::index::sync`]).
    ///
    /// # Errors
    /// Store errors.
    pub fn sync_index(&self) -> Result<SyncReport> {
        crate::index::sync(&self.store, &self.sources)
    }

    /// [`MemoryManager::sync_index`] before a read: skipped on a read-only store
    /// ([`MemoryStore::read_only`]), whose index cannot take the files' changes (the read then
    /// sees the index as it was last written).
    fn sync_for_read(&self) -> Result<SyncReport> {
        if self.store.read_only() {
            tracing::debug!("the store is read-only: the index is not synced");
            return Ok(SyncReport::default());
        }
        self.sync_index()
    }

    /// Whether reads see the index as it was last written rather than brought in step with
    /// the memory files first: `true` on a read-only store ([`MemoryStore::read_only`]), where
    /// a note or `memories.md` entry changed since the last write may be missed. The CLI and
    /// the MCP server say so ("index not refreshed: the store is read-only"; `stale` in JSON).
    pub fn index_stale(&self) -> bool {
        self.store.read_only()
    }

    /// Drops every file-backed document and reads all files again (`mem memory reindex`), then
    /// merges the full-text indexes ([`MemoryStore::optimize_search_index`]).
    ///
    /// # Errors
    /// Store errors.
    pub fn reindex(&self) -> Result<SyncReport> {
        self.store.clear_file_index()?;
        let report = self.sync_index()?;
        self.store.optimize_search_index()?;
        self.store.purge_deleted()?;
        Ok(report)
    }

    /// Seed 003 `recall(query)`: the index (synced first) searched for `query` as plain text,
    /// best first (BM25), memories of the current project and user-level ones only. Learnings
    /// found get their `last_used` set when it is over [`LAST_USED_STEP_MS`] old (so a search
    /// repeated within that time writes nothing). On a read-only store ([`MemoryStore::read_only`])
    /// the index is not synced and nothing is recorded.
    ///
    /// # Errors
    /// Store errors.
    pub fn recall(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        self.recall_in(&SearchQuery {
            text: query.to_owned(),
            visible_in: self.project_key().map(str::to_owned),
            sources: Vec::new(),
            scope: None,
            limit,
        })
    }

    /// [`MemoryManager::recall`] with the whole query given: restricted to `query.sources` and
    /// `query.scope` (before its limit), visible from `query.visible_in`. The same sync and
    /// `last_used` rules: on a read-only store the index is not synced and nothing is
    /// recorded ([`MemoryManager::index_stale`] then says so).
    ///
    /// # Errors
    /// Store errors.
    pub fn recall_in(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.sync_for_read()?;
        let hits = self.store.search(query)?;
        if self.store.read_only() {
            return Ok(hits);
        }
        let now = now_ms();
        let mut ids: Vec<i64> = Vec::new();
        for h in &hits {
            if let Ok(MemoryId::Learning(n)) = h.id.parse::<MemoryId>()
                && self
                    .store
                    .learning(n)?
                    .is_some_and(|l| now.saturating_sub(l.last_used_ms) >= LAST_USED_STEP_MS)
            {
                ids.push(n);
            }
        }
        self.store.touch_learnings(&ids, now)?;
        Ok(hits)
    }

    /// Visible from the current project: user-wide, of this project, or shared with the team
    /// (the store returns team rows only to its team's members), as search and archive decide.
    fn visible(&self, d: &Document) -> bool {
        d.project_key.is_none()
            || d.scope == "team"
            || d.project_key.as_deref() == self.project_key()
    }

    /// The item with this id (index synced first), if visible from the current project.
    ///
    /// # Errors
    /// [`Error::NotFound`]; store errors.
    pub fn show(&self, id: &MemoryId) -> Result<Shown> {
        if !matches!(id, MemoryId::Learning(_)) {
            self.sync_for_read()?;
        }
        let key = id.to_string();
        let document = self
            .store
            .document(&key)?
            .filter(|d| self.visible(d))
            .ok_or_else(|| Error::NotFound(key.clone()))?;
        let learning = match id {
            MemoryId::Learning(n) => self.store.learning(*n)?,
            _ => None,
        };
        Ok(Shown { document, learning })
    }

    /// Removes the item from its true home — the learning's row, the note file, the
    /// `memories.md` bullet — and from the index.
    ///
    /// # Errors
    /// [`Error::NotFound`]; I/O and store errors.
    pub fn forget(&self, id: &MemoryId) -> Result<Forgotten> {
        let shown = self.show(id)?;
        let doc = shown.document;
        let location = match id {
            MemoryId::Learning(n) => {
                if !self.store.delete_learning(*n)? {
                    return Err(Error::NotFound(id.to_string()));
                }
                self.store.describe()
            }
            _ => {
                let mut removed = None;
                for s in &self.sources {
                    if s.kind() != doc.source {
                        continue;
                    }
                    // Only the source holding the indexed file.
                    if let Some(p) = &doc.path
                        && !s
                            .roots()
                            .iter()
                            .any(|r| p == r || Path::new(p).starts_with(r))
                    {
                        continue;
                    }
                    if let Some(path) = s.forget(id)? {
                        removed = Some(path);
                        break;
                    }
                }
                let path = removed.ok_or_else(|| Error::NotFound(id.to_string()))?;
                self.sync_index()?;
                path.display().to_string()
            }
        };
        // No copy of the text left in the database's files (a leaked secret is forgotten to
        // be gone).
        self.store.purge_deleted()?;
        Ok(Forgotten {
            id: id.to_string(),
            source: doc.source,
            title: doc.title,
            location,
        })
    }

    /// Seed 003 ShortTermMemory: the latest session of the current project, its last
    /// `short_term_max_messages` messages, empty when it was last active more than
    /// `short_term_max_age_hours` ago. Read through the manager's [`Sessions`] (empty without
    /// them); nothing is copied.
    ///
    /// # Errors
    /// Session read errors.
    pub fn short_term(&self) -> Result<ShortTerm> {
        let empty = ShortTerm {
            session_id: None,
            last_active: None,
            expired: false,
            messages: Vec::new(),
        };
        let Some(p) = &self.project else {
            return Ok(empty);
        };
        let Some(sessions) = &self.sessions else {
            return Ok(empty);
        };
        let root = Path::new(&p.path);
        let Some(meta) = sessions.latest(root)? else {
            return Ok(empty);
        };
        let age_limit = chrono::Duration::hours(self.config.short_term_max_age_hours as i64);
        let expired = chrono::DateTime::parse_from_rfc3339(&meta.last_active)
            .map(|t| chrono::Utc::now().signed_duration_since(t) > age_limit)
            .unwrap_or(true);
        let messages = if expired {
            Vec::new()
        } else {
            let mut m = sessions.messages(root, &meta.id)?;
            let skip = m.len().saturating_sub(self.config.short_term_max_messages);
            m.drain(..skip);
            m
        };
        Ok(ShortTerm {
            session_id: Some(meta.id),
            last_active: Some(meta.last_active),
            expired,
            messages,
        })
    }

    /// Seed 003 `omc memory clean`: refreshes the index (drops memories whose files are gone),
    /// reports the short-term view's expiry, and deletes learnings unused for
    /// `learning_max_age_days` (when set), then merges the full-text indexes
    /// ([`MemoryStore::optimize_search_index`]) and truncates the write-ahead log
    /// ([`MemoryStore::purge_deleted`]). With `dry_run`, or on a read-only store, nothing is
    /// deleted or merged.
    ///
    /// # Errors
    /// Store and session errors.
    pub fn clean(&self, dry_run: bool) -> Result<CleanReport> {
        let index = self.sync_index()?;
        let short = self.short_term()?;
        // Each scope against its own setting: a project's never expires user-level learnings.
        let cutoff = |days: Option<u64>| days.map(|d| now_ms() - (d as i64) * 86_400_000);
        let expiry = Expiry {
            project_before_ms: cutoff(self.config.learning_max_age_days),
            user_before_ms: cutoff(self.config.user_learning_max_age_days),
        };
        let expired_learnings = if expiry == Expiry::default() {
            Vec::new()
        } else {
            self.store
                .expire_learnings(expiry, self.project_key(), dry_run)?
        };
        let mut search_index_merged = false;
        if !dry_run && !self.store.read_only() {
            // Maintenance: the full-text indexes merged into one segment each (searches read
            // one b-tree per term), then the write-ahead log truncated (it held the rewritten
            // index, and the text of what expired). A read-only store is left as it is.
            search_index_merged = self.store.optimize_search_index()?;
            self.store.purge_deleted()?;
        }
        Ok(CleanReport {
            dry_run,
            short_term_expired: short.expired,
            short_term_messages: short.messages.len(),
            expired_learnings,
            index,
            search_index_merged,
        })
    }

    /// Seed 003 `omc memory stats`.
    ///
    /// # Errors
    /// Store errors.
    pub fn stats(&self) -> Result<Stats> {
        self.sync_for_read()?;
        let t0 = self.get_tier0_summary()?;
        let t1 = self.get_tier1_summary(self.config.tier1_max_tokens)?;
        Ok(Stats {
            database: self.store.describe(),
            project: self.project_key().map(str::to_owned),
            store: self.store.stats()?,
            visible_learnings: self.visible_learnings(None)?.len(),
            short_term_messages: self.short_term()?.messages.len(),
            tier0_tokens: (t0.tokens, t0.max_tokens),
            tier1_tokens: (t1.tokens, t1.max_tokens),
        })
    }
}

/// A category, tag or preference key: trimmed, through the secret filter (before lowercasing:
/// a key id or a capitals assignment is only recognised in its own case; the count is added to
/// `withheld`), lowercased outside the `[REDACTED]` markers, 1..=64 characters, no whitespace
/// or control characters.
fn validate_name(what: &'static str, s: &str, withheld: &mut usize) -> Result<String> {
    let s = lowercase_outside_markers(&redact(s.trim(), withheld));
    if s.is_empty() {
        return Err(invalid(what, "it is empty"));
    }
    if s.chars().count() > MAX_CATEGORY_CHARS {
        return Err(invalid(
            what,
            format!("longer than {MAX_CATEGORY_CHARS} characters"),
        ));
    }
    if s.chars()
        .any(|c| c.is_whitespace() || c.is_control() || mem_core::terminal::is_unsafe_char(c))
    {
        return Err(invalid(
            what,
            format!("{:?} holds spaces or control characters", s),
        ));
    }
    Ok(s)
}
