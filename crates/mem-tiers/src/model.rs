//! The records of the tier store (seed 003 "数据模型"): user and project preferences, projects,
//! learnings, and the documents of the search index.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The user-preference keys of seed 003 (UserPreference: 默认模型、工作流、主题、编辑器、Shell),
/// in the order Tier 0 lists them (and drops them, last first).
pub const USER_PREFERENCE_KEYS: [&str; 5] = ["model", "workflow", "theme", "editor", "shell"];

/// The largest title of a learning, in characters.
pub const MAX_TITLE_CHARS: usize = 1_000;
/// The largest content, context or preference value, in bytes (1 MiB).
pub const MAX_CONTENT_BYTES: usize = 1 << 20;
/// The largest category name, in characters.
pub const MAX_CATEGORY_CHARS: usize = 64;
/// The most tags on one learning.
pub const MAX_TAGS: usize = 32;

/// A project known to the store (seed 003 ProjectPreference plus what registering it recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectRecord {
    /// The identity: `git:<canonical common git dir>` or `path:<canonical dir>`.
    pub key: String,
    /// A short display name (the repository's directory name).
    pub name: String,
    /// The project directory last seen.
    pub path: String,
    /// Main language (`Python`, `Rust`...), from the preset or detected.
    #[serde(default)]
    pub language: Option<String>,
    /// Framework (`FastAPI`, `React/Next.js`...), from the preset or detected.
    #[serde(default)]
    pub framework: Option<String>,
    /// How to run the tests.
    #[serde(default)]
    pub test_command: Option<String>,
    /// Named commands (`lint` → `ruff check .`), in name order.
    #[serde(default)]
    pub custom_commands: BTreeMap<String, String>,
    /// Free-form notes about the project (project-specific knowledge), one per item.
    #[serde(default)]
    pub notes: Vec<String>,
    /// First registration, milliseconds since the Unix epoch (UTC).
    pub created_ms: i64,
    /// Last registration / use, milliseconds since the Unix epoch (UTC).
    pub last_used_ms: i64,
}

/// A learning (seed 003 LearningEntry: 标题、内容、类别、标签、上下文).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearningEntry {
    /// The row id; the memory id is `L<id>`.
    pub id: i64,
    /// Short title.
    pub title: String,
    /// The lesson itself.
    pub content: String,
    /// Category (`error`, `best-practice`, `general`...), lowercase.
    pub category: String,
    /// Tags, in the order given, without duplicates.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where it was learnt (free text).
    #[serde(default)]
    pub context: Option<String>,
    /// The project it belongs to ([`ProjectRecord::key`]); `None` for a user-wide learning.
    #[serde(default)]
    pub project_key: Option<String>,
    /// Creation time, ms since the Unix epoch (UTC).
    pub created_ms: i64,
    /// Last time it was shown in a tier or found by a search, ms since the Unix epoch (UTC).
    pub last_used_ms: i64,
    /// Who wrote it: the author name of a team store (PostgreSQL); `None` in a local store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The team it is shared with (scope `team`, PostgreSQL only); `None`: private to its
    /// author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

impl LearningEntry {
    /// Its scope: `team` (shared with a team), `project` (one project, private to its author)
    /// or `user` (every project, private to its author).
    pub fn scope(&self) -> &'static str {
        if self.team.is_some() {
            "team"
        } else if self.project_key.is_some() {
            "project"
        } else {
            "user"
        }
    }
}

/// What [`crate::MemoryStore::add_learning`] stores. Validated and secret-filtered by
/// [`crate::MemoryManager`] before it reaches a store.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewLearning {
    /// Short title (1..=[`MAX_TITLE_CHARS`] characters).
    pub title: String,
    /// The lesson (at most [`MAX_CONTENT_BYTES`] bytes; [`crate::MemoryManager::add_learning`]
    /// refuses an empty one, an archive may hold one).
    pub content: String,
    /// Category, lowercase.
    pub category: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Where it was learnt.
    pub context: Option<String>,
    /// Owning project, or `None` for user-wide.
    pub project_key: Option<String>,
    /// Creation time, ms since the Unix epoch; also the initial `last_used_ms`.
    pub created_ms: i64,
    /// Share it with the store's team (scope `team`). Only a team store (PostgreSQL with a
    /// team configured) accepts it; SQLite refuses it with [`crate::Error::Invalid`].
    pub share_with_team: bool,
}

/// Where [`crate::MemoryManager::add_learning_in`] puts a learning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LearningScope {
    /// Every project of its author; never seen by anyone else.
    User,
    /// The current project of its author; never seen by anyone else.
    Project,
    /// Shared with the team of a team store (PostgreSQL): every member sees it.
    Team,
}

impl LearningScope {
    /// `user`, `project` or `team`.
    pub fn as_str(self) -> &'static str {
        match self {
            LearningScope::User => "user",
            LearningScope::Project => "project",
            LearningScope::Team => "team",
        }
    }
}

/// Which memory a search document came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A learning of the tier store (`L<id>`).
    Learning,
    /// A `memories.md` bullet (`M<hash>`).
    Entry,
    /// A memory note file (`N:<scope>/<file>`).
    Note,
}

impl SourceKind {
    /// `learning`, `entry` or `note` (the stored and displayed form).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Learning => "learning",
            SourceKind::Entry => "entry",
            SourceKind::Note => "note",
        }
    }

    /// The inverse of [`SourceKind::as_str`].
    pub fn parse(s: &str) -> Option<SourceKind> {
        match s {
            "learning" => Some(SourceKind::Learning),
            "entry" => Some(SourceKind::Entry),
            "note" => Some(SourceKind::Note),
            _ => None,
        }
    }
}

/// One searchable document of the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The memory id (`L42`, `M3f9a0c1e`, `N:project/a.md`).
    pub id: String,
    /// Where it came from.
    pub source: SourceKind,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// The project it belongs to; `None` for user-level memories (visible in every project).
    pub project_key: Option<String>,
    /// A title (a note's `name`, an entry's category heading, a learning's title).
    pub title: String,
    /// The searchable text.
    pub body: String,
    /// The file it lives in (entries and notes); `None` for learnings.
    pub path: Option<String>,
    /// Last change, ms since the Unix epoch (a file's mtime, a learning's creation).
    pub updated_ms: i64,
}

/// What the index remembers about a file it read, to re-read it only when it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// The file (absolute).
    pub path: String,
    /// The directory or file scanned that found it (a note dir, a `memories.md` path); files of
    /// a root that are no longer found are dropped from the index.
    pub root: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Lowercase hex SHA-256 of the content.
    pub hash: String,
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchQuery {
    /// The user's words, searched as plain text (FTS syntax has no meaning).
    pub text: String,
    /// Only memories visible in this project (its own plus user-level ones); `None`: all.
    pub visible_in: Option<String>,
    /// Only these sources; empty: all.
    pub sources: Vec<SourceKind>,
    /// Only memories of this scope ([`SearchHit::scope`]: `project`, `user` or `extra<K>`);
    /// `None`: all. Filtered inside the query, before `limit`, so a scoped search still
    /// returns `limit` hits when that many match.
    pub scope: Option<String>,
    /// The most hits returned.
    pub limit: usize,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The memory id.
    pub id: String,
    /// Where it lives.
    pub source: SourceKind,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// Its title.
    pub title: String,
    /// A short excerpt around the match: at most `query::SNIPPET_CHARS` (96) characters, cut
    /// between words, `…` where text was left out; a learning's tags never glued onto it.
    pub snippet: String,
    /// Its file, if any.
    pub path: Option<String>,
    /// Last change, ms since the Unix epoch.
    pub updated_ms: i64,
    /// BM25 score (lower is better, as SQLite reports it); 0 for a substring-only match.
    pub score: f64,
}

/// Counts for `mem memory stats`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StoreStats {
    /// Projects registered.
    pub projects: u64,
    /// User preferences set.
    pub user_preferences: u64,
    /// Learnings (all projects and user-wide).
    pub learnings: u64,
    /// Learnings per category, by name.
    pub learnings_by_category: BTreeMap<String, u64>,
    /// Index documents per source (`learning`, `entry`, `note`).
    pub documents: BTreeMap<String, u64>,
    /// Files the index tracks.
    pub files: u64,
    /// Schema version.
    pub schema_version: i64,
}

/// When [`crate::MemoryStore::expire_learnings`] expires a learning, by its scope: one unused
/// since before its scope's cutoff (milliseconds since the epoch) expires; `None`: that scope
/// never does. A project's configuration sets the project cutoff only, so it never expires the
/// user-level learnings seen in every project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expiry {
    /// For learnings of a project (`project_key` set).
    pub project_before_ms: Option<i64>,
    /// For user-level learnings (no `project_key`).
    pub user_before_ms: Option<i64>,
}

/// Which learnings [`crate::MemoryStore::learnings`] returns, newest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LearningFilter {
    /// Only those visible in this project (its own plus user-wide); `None`: all.
    pub visible_in: Option<String>,
    /// Only this category.
    pub category: Option<String>,
    /// At most this many; `None`: all.
    pub limit: Option<usize>,
}
