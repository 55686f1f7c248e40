//! Setup shared by the integration tests: a project folder and a home folder in a temporary
//! directory, sessions in the project's store.

use std::path::PathBuf;

use mem_auto::{AutoMemory, AutoOptions};
use mem_core::Message;
use mem_session::SessionStore;

/// A project folder (`root`) and a home folder (`home`), both created, in a temporary
/// directory removed on drop.
pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Project {
            _dir: dir,
            root,
            home,
        }
    }

    pub fn auto(&self) -> AutoMemory {
        AutoMemory::new(&self.root, &self.home, AutoOptions::default())
    }

    pub fn store(&self) -> SessionStore {
        SessionStore::for_project(&self.root)
    }

    /// A new session holding `messages`; its id.
    pub fn session(&self, messages: &[Message]) -> String {
        let mut w = self.store().create().unwrap();
        for m in messages {
            w.append(m).unwrap();
        }
        w.id().to_owned()
    }
}
