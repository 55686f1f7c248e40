//! The files and sessions behind mewmem's tier manager (`mem-tiers`), which knows none of their
//! formats: `memories.md` files ([`MemoriesFile`], through `mem-auto`), note folders
//! ([`NoteDir`], through `mem-recall`) and the sessions of the short-term view
//! ([`SessionFiles`], through `mem-session`).
//!
//! - [`default_sources`]: the index sources of a project and the user, in the order the index
//!   and `forget` visit them; [`Files`] is them with the sessions, as a
//!   [`mem_tiers::MemorySources`].
//! - [`FromProject`] / [`FromProjectWith`]: seed 003 `MemoryManager.from_project(project_path)`
//!   and `MemoryManager(config)` with these sources (`MemoryManager::from_project(...)` with
//!   the trait in scope).

mod memories;
mod notes;
mod sessions;

use std::path::Path;

use mem_tiers::index::IndexSource;
use mem_tiers::{
    MemoryConfig, MemoryManager, MemorySources, MemoryStore, Result, Sessions, SqliteStore,
};

pub use memories::MemoriesFile;
pub use notes::{MAX_NOTES_PER_DIR, NoteDir};
pub use sessions::SessionFiles;

/// The index sources of a project and the user: project `memories.md` and `memory/`, user
/// `memories.md` and `memory/`, then the extra note dirs.
pub fn default_sources(
    config: &MemoryConfig,
    project: Option<(&Path, &str)>,
) -> Vec<Box<dyn IndexSource>> {
    let mut out: Vec<Box<dyn IndexSource>> = Vec::new();
    let user_home = config
        .user_dir
        .as_ref()
        .map(|u| u.parent().unwrap_or(u).to_path_buf());
    if let Some((root, key)) = project {
        let home = user_home.clone().unwrap_or_else(|| root.to_path_buf());
        let auto = mem_auto::AutoMemory::new(root, home, config.memories.clone());
        out.push(Box::new(MemoriesFile {
            auto,
            scope: mem_auto::Scope::Project,
            project_key: Some(key.to_owned()),
        }));
        out.push(Box::new(NoteDir {
            dir: root.join(".mewcode").join("memory"),
            scope: "project".into(),
            project_key: Some(key.to_owned()),
        }));
    }
    if let (Some(user), Some(home)) = (&config.user_dir, &user_home) {
        let root = project.map_or(home.as_path(), |(r, _)| r);
        out.push(Box::new(MemoriesFile {
            auto: mem_auto::AutoMemory::new(root, home, config.memories.clone()),
            scope: mem_auto::Scope::User,
            project_key: None,
        }));
        out.push(Box::new(NoteDir {
            dir: user.join("memory"),
            scope: "user".into(),
            project_key: None,
        }));
    }
    for (k, dir) in config.extra_note_dirs.iter().enumerate() {
        out.push(Box::new(NoteDir {
            dir: dir.clone(),
            scope: format!("extra{k}"),
            project_key: None,
        }));
    }
    out
}

/// mewmem's sources: [`default_sources`] for the index, [`SessionFiles`] for the short-term
/// view.
#[derive(Debug, Clone, Copy, Default)]
pub struct Files;

impl MemorySources for Files {
    fn index_sources(
        &self,
        config: &MemoryConfig,
        project: Option<(&Path, &str)>,
    ) -> Vec<Box<dyn IndexSource>> {
        default_sources(config, project)
    }

    fn sessions(&self) -> Option<Box<dyn Sessions>> {
        Some(Box::new(SessionFiles))
    }
}

/// Opening a [`MemoryManager`] on the default SQLite store with mewmem's sources ([`Files`]).
pub trait FromProject: Sized {
    /// Seed 003 `MemoryManager.from_project(project_path)`: opens the store
    /// ([`MemoryConfig::database_path`]), reads `.omc/project.yaml` and registers the project
    /// (see [`MemoryManager::open_project`]), and plugs in the project's and the user's
    /// `memories.md` and note dirs as index sources, and the project's sessions.
    ///
    /// # Errors
    /// Store errors ([`mem_tiers::Error::Foreign`], [`mem_tiers::Error::Corrupt`],
    /// [`mem_tiers::Error::Locked`]...), and [`mem_tiers::Error::Malformed`] for a bad preset
    /// (file and line named).
    fn from_project(project_dir: &Path, config: MemoryConfig) -> Result<Self>;

    /// Seed 003 `MemoryManager(config)`: no current project; user-level sources only.
    ///
    /// # Errors
    /// Store errors.
    fn new(config: MemoryConfig) -> Result<Self>;
}

impl FromProject for MemoryManager<SqliteStore> {
    fn from_project(project_dir: &Path, config: MemoryConfig) -> Result<Self> {
        let store = SqliteStore::open(&config.database_path(), config.busy_timeout)?;
        MemoryManager::from_project_with(project_dir, config, store)
    }

    fn new(config: MemoryConfig) -> Result<Self> {
        let store = SqliteStore::open(&config.database_path(), config.busy_timeout)?;
        let sources = default_sources(&config, None);
        Ok(MemoryManager::with_store(config, store, None, sources))
    }
}

/// Opening a [`MemoryManager`] on a given store with mewmem's sources ([`Files`]).
pub trait FromProjectWith<S>: Sized {
    /// [`FromProject::from_project`] on a given store (any backend, e.g. the team store); see
    /// [`MemoryManager::open_project`] for when the project is registered.
    ///
    /// # Errors
    /// Store errors, and [`mem_tiers::Error::Malformed`] for a bad preset.
    fn from_project_with(project_dir: &Path, config: MemoryConfig, store: S) -> Result<Self>;
}

impl<S: MemoryStore> FromProjectWith<S> for MemoryManager<S> {
    fn from_project_with(project_dir: &Path, config: MemoryConfig, store: S) -> Result<Self> {
        MemoryManager::open_project(project_dir, config, store, &Files)
    }
}
