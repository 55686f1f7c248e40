//! `mem memory migrate --to URL`: copy a local SQLite store to a team store (`docs/TEAM.md`,
//! "Migrating").
//!
//! What is copied: user preferences, projects, learnings (with their times, categories, tags,
//! contexts and projects; written as the team store's author, private: scope user or project).
//! What is not: the index of `memories.md` entries and notes, a cache rebuilt from the files
//! by the next sync on the new store.
//!
//! Idempotent and resumable: each learning is copied in its own transaction and remembered on
//! the server by its origin (`sqlite:<database file>#L<id>`), so a second run, or a run after
//! an interruption, copies only what is missing. Preferences and projects are upserts.

use serde::Serialize;

use crate::error::Result;
use crate::model::LearningFilter;
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::MemoryStore;

/// What [`copy_to_server`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MigrateReport {
    /// User preferences written (set or already equal).
    pub preferences: u64,
    /// Projects written (inserted or updated).
    pub projects: u64,
    /// Learnings copied by this run.
    pub learnings_copied: u64,
    /// Learnings found already copied by an earlier run.
    pub learnings_already_there: u64,
}

/// Copies `from` into `to`; `progress(done, total)` is called after each learning.
///
/// # Errors
/// Either store's errors. What was copied before an error stays copied; running again
/// resumes.
pub fn copy_to_server(
    from: &SqliteStore,
    to: &PgStore,
    mut progress: impl FnMut(u64, u64),
) -> Result<MigrateReport> {
    let mut report = MigrateReport::default();
    for (k, v) in from.user_preferences()? {
        to.set_user_preference(&k, Some(&v))?;
        report.preferences += 1;
    }
    for p in from.recent_projects(None)? {
        to.upsert_project(&p)?;
        report.projects += 1;
    }
    let origin_base = format!("sqlite:{}", from.path().display());
    let mut all = from.learnings(&LearningFilter::default())?;
    all.reverse(); // oldest first, so server ids keep the local order
    let total = all.len() as u64;
    for (i, l) in all.iter().enumerate() {
        match to.import_learning(l, &format!("{origin_base}#L{}", l.id))? {
            Some(_) => report.learnings_copied += 1,
            None => report.learnings_already_there += 1,
        }
        progress(i as u64 + 1, total);
    }
    Ok(report)
}
