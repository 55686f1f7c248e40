//! The sessions of the short-term view, read through `mem-session`'s store
//! (`<project>/.mewcode/sessions/`).

use std::path::Path;

use mem_core::Message;
use mem_tiers::{Error, LatestSession, Result, Sessions};

/// A project's sessions in `<project>/.mewcode/sessions/` ([`mem_session::SessionStore`]):
/// the latest by its meta's last activity, its messages as a resume replays them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionFiles;

fn map(e: mem_session::Error) -> Error {
    Error::Invalid {
        what: "session",
        reason: e.to_string(),
    }
}

impl Sessions for SessionFiles {
    fn latest(&self, project_root: &Path) -> Result<Option<LatestSession>> {
        let store = mem_session::SessionStore::for_project(project_root);
        Ok(store.latest().map_err(map)?.map(|meta| LatestSession {
            id: meta.id,
            last_active: meta.last_active,
        }))
    }

    fn messages(&self, project_root: &Path, id: &str) -> Result<Vec<Message>> {
        let store = mem_session::SessionStore::for_project(project_root);
        Ok(store.resume(id).map_err(map)?.messages)
    }
}
