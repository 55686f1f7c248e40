//! Checkpoints of a project's memory state (`mem checkpoint`, seed 003 "Checkpoint/Rollback";
//! `docs/formats/checkpoint.md`) opened on the configured tier store, the automatic checkpoint
//! a command that changes memory takes first, and finishing a restore that was killed.

use std::path::Path;
use std::sync::Arc;

use mem_checkpoint::{
    CHECKPOINTS_DIR, CheckpointConfig, Checkpoints, DEFAULT_LOCK_TIMEOUT, JOURNAL_FILE,
    JOURNAL_TMP_FILE, Manifest,
};
use mem_tiers::StoreLocation;

use crate::Memory;
use crate::error::{Error, Result};

/// `<project>/.mewcode/checkpoints`: where a project's checkpoints are kept.
pub fn checkpoints_dir(project: &Path) -> std::path::PathBuf {
    project.join(".mewcode").join(CHECKPOINTS_DIR)
}

/// Whether a `mem checkpoint restore` was killed in `project` (its journal, or the journal's
/// temporary file while it was written, is there): two `stat`s.
pub fn restore_was_killed(project: &Path) -> bool {
    let dir = checkpoints_dir(project);
    dir.join(JOURNAL_FILE).exists() || dir.join(JOURNAL_TMP_FILE).exists()
}

impl Memory {
    /// The checkpoints of this project, with its configured tier store (the local SQLite file,
    /// or the team store, opened here) and its `memories.md` settings.
    ///
    /// Errors: [`Error::Config`]; [`Error::Tiers`] when the team store cannot be opened;
    /// [`Error::Checkpoint`].
    pub fn checkpoints(&self) -> Result<Checkpoints> {
        let config = self.tier_config()?;
        let location = self
            .config()
            .store_location(&config)
            .map_err(Error::Config)?;
        let (database, team_store) = match location {
            StoreLocation::Sqlite(path) => (Some(path), None),
            StoreLocation::Postgres { url, options } => (
                None,
                Some(Arc::new(mem_tiers::PgStore::open(&url, &options)?)),
            ),
        };
        Ok(Checkpoints::new(CheckpointConfig {
            project_root: self.project().to_owned(),
            home: self.settings().home.clone(),
            auto: config.memories.clone(),
            database,
            busy_timeout: config.busy_timeout,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            extra_note_dirs: config.extra_note_dirs.clone(),
            team_store,
        })?)
    }

    /// Finishes a killed restore ([`restore_was_killed`]), when there is one: `Ok(None)` when
    /// there was nothing to finish.
    ///
    /// Errors: as [`Self::checkpoints`]; the recovery's ([`Error::Checkpoint`]): the journal
    /// stays, the next call tries again.
    pub fn recover_killed_restore(&self) -> Result<Option<String>> {
        if !restore_was_killed(self.project()) {
            return Ok(None);
        }
        Ok(self.checkpoints()?.recover()?)
    }

    /// Takes the automatic checkpoint of a command that changes memory (`reason`: the command;
    /// `user`: with the user level) and prunes the automatic ones to the last `keep`.
    ///
    /// Errors: as [`Self::checkpoints`]; [`Error::Context`] (`cannot take the automatic
    /// checkpoint before REASON`) over the checkpoint's error: the command must not go on
    /// without its undo point.
    pub fn auto_checkpoint(&self, reason: &str, user: bool, keep: usize) -> Result<Manifest> {
        let (m, _) = self
            .checkpoints()?
            .create_auto(reason, user, keep)
            .map_err(|e| Error::Context {
                context: format!("cannot take the automatic checkpoint before {reason}"),
                source: Box::new(e),
            })?;
        Ok(m)
    }
}
