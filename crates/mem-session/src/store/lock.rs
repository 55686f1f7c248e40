//! Locking: a session's `.jsonl` is locked with `flock` (shared to read, exclusive to write,
//! waiting up to [`StoreOptions::lock_timeout`](super::StoreOptions)), reopened when an import
//! renamed a new file over it; the store's import lock serialises imports.

use std::fs::{self, File, OpenOptions};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

use super::SessionStore;

impl SessionStore {
    /// Opens an existing `.jsonl` and locks it, reopening when the file was replaced (an
    /// import renamed a new file over it) between the open and the lock.
    pub(super) fn open_locked(&self, path: &Path, id: &str, exclusive: bool) -> Result<File> {
        self.lock_opened(path, exclusive, || open_existing(path, id, &self.dir))
    }

    /// [`SessionStore::open_locked`] for a change in place: opened for reading and writing,
    /// locked exclusively.
    pub(super) fn open_locked_for_write(&self, path: &Path, id: &str) -> Result<File> {
        self.lock_opened(path, true, || {
            match OpenOptions::new().read(true).write(true).open(path) {
                Ok(f) => Ok(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound {
                    id: id.to_owned(),
                    dir: self.dir.clone(),
                }),
                Err(e) => Err(Error::io("cannot open", path, e)),
            }
        })
    }

    /// Opens with `open` and locks, again while the file at `path` is no longer the one
    /// opened (an import renamed a new file over it between the open and the lock).
    fn lock_opened(
        &self,
        path: &Path,
        exclusive: bool,
        open: impl Fn() -> Result<File>,
    ) -> Result<File> {
        loop {
            let file = open()?;
            lock(&file, path, exclusive, self.options.lock_timeout)?;
            if same_file(&file, path) {
                return Ok(file);
            }
            let _ = file.unlock();
        }
    }

    /// Takes the store's import lock (`.import.lock` in the sessions directory), waiting while
    /// another process imports. Hold it across an import's check and write
    /// ([`SessionStore::write_session`] requires it), so two imports cannot interleave.
    pub fn lock_imports(&self) -> Result<ImportLock> {
        self.ensure_dir()?;
        let path = self.dir.join(".import.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, e))?;
        file.lock()
            .map_err(|e| Error::io("cannot lock", &path, e))?;
        Ok(ImportLock { _file: file })
    }
}

/// The store's import lock (see [`SessionStore::lock_imports`]); released when dropped.
#[derive(Debug)]
pub struct ImportLock {
    _file: File,
}

pub(super) fn open_existing(path: &Path, id: &str, dir: &Path) -> Result<File> {
    match mem_core::fsread::open(path) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound {
            id: id.to_owned(),
            dir: dir.to_owned(),
        }),
        Err(e) => Err(Error::io("cannot open", path, e)),
    }
}

/// Takes the lock, retrying with short sleeps until `timeout`.
pub(super) fn lock(file: &File, path: &Path, exclusive: bool, timeout: Duration) -> Result<()> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let attempt = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match attempt {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(Error::Locked {
                        path: path.to_owned(),
                        waited_ms: start.elapsed().as_millis() as u64,
                    });
                }
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("cannot lock", path, e)),
        }
    }
}

/// `true` when `file` is the file `path` names now (same device and inode).
#[cfg(unix)]
pub(super) fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
pub(super) fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}
