//! Notes already surfaced in a session (seed 000 §4 "过滤: 排除已在前几轮召回过的文件"), persisted
//! with the session so that a resumed session does not repeat them: a JSON sidecar
//! `{session_id}.recall.json` beside the session's `{session_id}.jsonl`:
//!
//! ```json
//! {"version":1,"surfaced":["N:project/testing.md","N:user/style.md"]}
//! ```
//!
//! Updates take an exclusive lock on `{session_id}.recall.lock`, re-read, merge, and replace the
//! file atomically (temp file + fsync + rename), so two recalls of one session lose nothing.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The sidecar's format version.
pub const RECORD_VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    version: u32,
    surfaced: Vec<String>,
}

/// The surfaced-notes record of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfacedLog {
    path: PathBuf,
    lock_path: PathBuf,
}

impl SurfacedLog {
    /// The record of session `session_id` in the sessions directory `sessions_dir` (the id is
    /// the caller's to validate: the CLI checks it like every session id).
    pub fn for_session(sessions_dir: &Path, session_id: &str) -> SurfacedLog {
        SurfacedLog {
            path: sessions_dir.join(format!("{session_id}.recall.json")),
            lock_path: sessions_dir.join(format!("{session_id}.recall.lock")),
        }
    }

    /// The record's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The note ids (as text) surfaced so far; empty when the file does not exist.
    /// Errors: I/O, or [`Error::BadRecord`] when the file is not a record.
    pub fn load(&self) -> Result<BTreeSet<String>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
            Err(e) => return Err(Error::io("cannot read", &self.path, e)),
        };
        let record: Record = serde_json::from_str(&text).map_err(|e| Error::BadRecord {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        if record.version != RECORD_VERSION {
            return Err(Error::BadRecord {
                path: self.path.clone(),
                reason: format!(
                    "version {} (this mewmem reads {RECORD_VERSION})",
                    record.version
                ),
            });
        }
        Ok(record.surfaced.into_iter().collect())
    }

    /// Adds `ids` to the record (locked, merged, atomic; the directory is created when missing).
    pub fn add<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Result<()> {
        let ids: Vec<&str> = ids.into_iter().collect();
        if ids.is_empty() {
            return Ok(());
        }
        let dir = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock_path)
            .map_err(|e| Error::io("cannot open", &self.lock_path, e))?;
        lock.lock()
            .map_err(|e| Error::io("cannot lock", &self.lock_path, e))?;
        let mut all = self.load()?;
        let before = all.len();
        all.extend(ids.iter().map(|s| (*s).to_owned()));
        if all.len() != before {
            let record = Record {
                version: RECORD_VERSION,
                surfaced: all.into_iter().collect(),
            };
            let text = serde_json::to_string(&record).map_err(|e| Error::BadRecord {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
            let tmp = dir.join(format!(
                ".{}.tmp-{}",
                self.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                std::process::id()
            ));
            let written = (|| {
                let mut f = File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
                f.write_all(text.as_bytes())
                    .and_then(|()| f.write_all(b"\n"))
                    .map_err(|e| Error::io("cannot write", &tmp, e))?;
                f.sync_all()
                    .map_err(|e| Error::io("cannot sync", &tmp, e))?;
                std::fs::rename(&tmp, &self.path)
                    .map_err(|e| Error::io("cannot replace", &self.path, e))
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written?;
            if let Ok(d) = File::open(&dir) {
                let _ = d.sync_all();
            }
        }
        let _ = lock.unlock();
        Ok(())
    }

    /// Deletes the record and its lock file (when the session is deleted). Takes the lock first,
    /// so a recall writing the record at that moment finishes before it goes. `Ok(false)` when
    /// there was no record.
    ///
    /// # Errors
    /// I/O errors other than a missing file, naming the path.
    pub fn remove(&self) -> Result<bool> {
        let lock = match OpenOptions::new().write(true).open(&self.lock_path) {
            Ok(f) => {
                f.lock()
                    .map_err(|e| Error::io("cannot lock", &self.lock_path, e))?;
                Some(f)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("cannot open", &self.lock_path, e)),
        };
        let removed = match std::fs::remove_file(&self.path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::io("cannot delete", &self.path, e)),
        };
        if let Some(lock) = lock {
            match std::fs::remove_file(&self.lock_path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("cannot delete", &self.lock_path, e)),
            }
            let _ = lock.unlock();
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_merge_and_persist() {
        let dir = tempfile::tempdir().unwrap();
        let log = SurfacedLog::for_session(&dir.path().join("sessions"), "s1");
        assert!(log.load().unwrap().is_empty());
        log.add(["N:project/a.md"]).unwrap();
        log.add(["N:user/b.md", "N:project/a.md"]).unwrap();
        let again = SurfacedLog::for_session(&dir.path().join("sessions"), "s1");
        assert_eq!(
            again.load().unwrap().into_iter().collect::<Vec<_>>(),
            ["N:project/a.md", "N:user/b.md"]
        );
        let other = SurfacedLog::for_session(&dir.path().join("sessions"), "s2");
        assert!(other.load().unwrap().is_empty());
        std::fs::write(log.path(), "not json").unwrap();
        assert!(matches!(log.load(), Err(Error::BadRecord { .. })));
        assert!(log.remove().unwrap());
        assert!(!log.path().exists());
        assert!(!dir.path().join("sessions/s1.recall.lock").exists());
        assert!(!log.remove().unwrap());
        assert!(log.load().unwrap().is_empty());
    }
}
