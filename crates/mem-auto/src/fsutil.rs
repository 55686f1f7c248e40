//! File helpers: strict reading of a file that will be rewritten, atomic replacement, locks.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use mem_instructions::{ReadError, read_capped};

use crate::error::{Error, Result};

/// Reads the whole regular file at `path` as UTF-8 text for a rewrite; `None` when it does not
/// exist. Refuses (with an error naming the file) anything it could not write back without
/// loss: not a regular file, larger than `max_bytes`, not UTF-8, binary (a NUL byte).
pub(crate) fn read_strict(path: &Path, max_bytes: usize) -> Result<Option<String>> {
    let read = match read_capped(path, max_bytes) {
        Ok(r) => r,
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(ReadError::NotAFile { kind }) => {
            return Err(Error::NotAFile {
                path: path.to_owned(),
                kind,
            });
        }
        Err(ReadError::Io(e)) => return Err(Error::io("cannot read", path, e)),
        Err(e) => {
            return Err(Error::io(
                "cannot read",
                path,
                std::io::Error::other(e.to_string()),
            ));
        }
    };
    if read.truncated {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            size: read.size,
            max: max_bytes,
        });
    }
    if read.lossy {
        return Err(Error::NotUtf8 {
            path: path.to_owned(),
        });
    }
    if let Some(offset) = read.text.find('\0') {
        return Err(Error::Binary {
            path: path.to_owned(),
            offset,
        });
    }
    Ok(Some(read.text))
}

/// Writes `bytes` to a temporary file in `path`'s directory, syncs it (one `fsync`) and renames
/// it over `path`: readers, and the file after a crash, are the old file or the new one, never
/// a part. (The folder is not synced: a crash right after the rename may bring back the old
/// file, whole, which the next extraction redoes.) On any error the temporary file is removed
/// and `path` is untouched.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, true)
}

/// [`write_atomic`] without the `fsync`, for caches rebuilt when lost or damaged (the dates
/// beside a `memories.md`): still a rename, so a reader never sees a part; after a crash the
/// file may be empty or old, which reads as "no dates" and is rebuilt.
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, false)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        next_tmp_number()
    ));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io("cannot create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        if durable {
            f.sync_all()
                .map_err(|e| Error::io("cannot sync", &tmp, e))?;
        }
        // Keep the permissions of the file replaced (a person may have made it read-only for
        // others, say).
        if let Ok(meta) = fs::metadata(path) {
            let _ = fs::set_permissions(&tmp, meta.permissions());
        }
        fs::rename(&tmp, path).map_err(|e| Error::io("cannot replace", path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    Ok(())
}

fn next_tmp_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// An exclusive lock on a lock file, released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct FileLock {
    _file: File,
}

/// Takes an exclusive lock on `path` (created if missing), waiting while another process
/// holds it.
pub(crate) fn lock(path: &Path) -> Result<FileLock> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io("cannot open the lock file", path, e))?;
    file.lock().map_err(|e| Error::io("cannot lock", path, e))?;
    Ok(FileLock { _file: file })
}

/// Creates `dir` (and parents) when missing.
pub(crate) fn ensure_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io("cannot create the folder", dir, e))
}

/// Reads a small JSON state file; `None` when missing. A file that is not the expected JSON
/// is an error naming it (it is not overwritten blindly).
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let Some(text) = read_strict(path, 16 * 1024 * 1024)? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| Error::BadState {
            path: path.to_owned(),
            source,
        })
}

/// Writes a JSON state file atomically (synced).
pub(crate) fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, &json_text(path, value)?)
}

/// Writes a JSON cache file atomically, not synced ([`write_cache`]).
pub(crate) fn write_json_cache<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    write_cache(path, &json_text(path, value)?)
}

fn json_text<T: serde::Serialize>(path: &Path, value: &T) -> Result<Vec<u8>> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::io("cannot encode", path, std::io::Error::other(e)))?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// `path` with `.lock` appended to its file name, hidden: `<dir>/.<name>.lock`.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}
