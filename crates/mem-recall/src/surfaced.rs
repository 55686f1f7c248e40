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
//!
//! The lock file is deleted with the session ([`SurfacedLog::remove`]), while it is held. A
//! process that was waiting on it then holds a lock on a file no longer in the folder, which
//! excludes nobody; so every locker, once it has the lock, checks that the lock path still names
//! the file it locked (same device and inode) and, when it does not, lets go and starts again
//! on the file now there (the protocol of lock files that may be unlinked, as in `flock(2)`
//! users such as Git's and systemd's).

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
        let text = match mem_core::fsread::read_to_string(&self.path) {
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
        let lock = self.lock()?;
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
        drop(lock);
        Ok(())
    }

    /// Takes the exclusive lock on the lock file (created when missing), waiting while another
    /// process holds it; see the module doc for why the lock path is checked after locking.
    pub(crate) fn lock(&self) -> Result<RecordLock> {
        loop {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&self.lock_path)
                .map_err(|e| Error::io("cannot open", &self.lock_path, e))?;
            file.lock()
                .map_err(|e| Error::io("cannot lock", &self.lock_path, e))?;
            if self.still_named(&file)? {
                return Ok(RecordLock { file });
            }
            // Deleted (or replaced) while we waited: lock the file now at the path.
            drop(file);
        }
    }

    /// `true` when the lock path names `file` (the file this process locked).
    #[cfg(unix)]
    fn still_named(&self, file: &File) -> Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let held = file
            .metadata()
            .map_err(|e| Error::io("cannot read", &self.lock_path, e))?;
        match std::fs::metadata(&self.lock_path) {
            Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io("cannot read", &self.lock_path, e)),
        }
    }

    /// Elsewhere a file that is open cannot be deleted, so the file locked is the one named.
    #[cfg(not(unix))]
    fn still_named(&self, _file: &File) -> Result<bool> {
        Ok(true)
    }

    /// Deletes the record and its lock file (when the session is deleted). Takes the lock first,
    /// so a recall writing the record at that moment finishes before it goes; the lock file is
    /// unlinked while held, and a recall waiting on it then locks a new one (see the module
    /// doc). `Ok(false)` when there was no record.
    ///
    /// # Errors
    /// I/O errors other than a missing file, naming the path.
    pub fn remove(&self) -> Result<bool> {
        let lock = match self.lock_path.parent() {
            // Without the folder there is neither a record nor a lock to take.
            Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => None,
            _ => Some(self.lock()?),
        };
        let removed = match std::fs::remove_file(&self.path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::io("cannot delete", &self.path, e)),
        };
        if lock.is_some() {
            match std::fs::remove_file(&self.lock_path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("cannot delete", &self.lock_path, e)),
            }
        }
        drop(lock);
        Ok(removed)
    }
}

/// The record's lock, held until dropped (closing the file releases it).
#[derive(Debug)]
pub(crate) struct RecordLock {
    file: File,
}

impl Drop for RecordLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
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

    /// A recall waiting on the lock while the session is deleted must not end up holding the
    /// deleted lock file: then a third process would lock the new file at the same time.
    #[cfg(unix)]
    #[test]
    fn a_lock_deleted_while_waited_on_is_not_used() {
        use std::os::unix::fs::MetadataExt;
        use std::sync::mpsc;
        use std::time::Duration;

        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let log = SurfacedLog::for_session(&sessions, "s1");
        let first = log.lock().unwrap();
        let (to_main, from_waiter) = mpsc::channel();
        let (to_waiter, from_main) = mpsc::channel::<()>();
        let waiter_log = log.clone();
        let waiter = std::thread::spawn(move || {
            to_main.send("started").unwrap();
            let held = waiter_log.lock().unwrap();
            let named = std::fs::metadata(&waiter_log.lock_path).unwrap();
            let mine = held.file.metadata().unwrap();
            assert_eq!(
                (named.dev(), named.ino()),
                (mine.dev(), mine.ino()),
                "the waiter holds a lock file that is no longer at the lock path"
            );
            to_main.send("locked").unwrap();
            from_main.recv().unwrap();
            drop(held);
        });
        assert_eq!(from_waiter.recv().unwrap(), "started");
        // Let the waiter open the lock file and block on it.
        std::thread::sleep(Duration::from_millis(200));
        // What `remove` does: unlink the lock file while holding it, then let go.
        std::fs::remove_file(&log.lock_path).unwrap();
        drop(first);
        assert_eq!(
            from_waiter.recv_timeout(Duration::from_secs(10)).unwrap(),
            "locked"
        );
        // While the waiter holds the lock, nobody else can take it at the lock path.
        let third = OpenOptions::new().write(true).open(&log.lock_path).unwrap();
        assert!(
            matches!(third.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            "a second holder got the lock"
        );
        to_waiter.send(()).unwrap();
        waiter.join().unwrap();
        assert!(third.try_lock().is_ok());
    }

    #[test]
    fn remove_while_a_recall_waits_then_the_recall_writes_a_new_record() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("sessions");
        let log = SurfacedLog::for_session(&sessions, "s1");
        log.add(["N:project/a.md"]).unwrap();
        let held = log.lock().unwrap();
        let adder_log = log.clone();
        let adder = std::thread::spawn(move || adder_log.add(["N:project/b.md"]));
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(held);
        // Either order is valid (the add before the delete, or a new record after it); the
        // note surfaced before the delete never survives it and the record stays readable.
        let removed = log.remove().unwrap();
        adder.join().unwrap().unwrap();
        assert!(removed);
        let left: Vec<String> = log.load().unwrap().into_iter().collect();
        assert!(
            left.is_empty() || left == ["N:project/b.md"],
            "left after the delete: {left:?}"
        );
    }
}
