//! File primitives of the store: opening for appending, positioned reads, tail fingerprints,
//! temporary names, atomic replacement, directory fsync.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
#[cfg(not(unix))]
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub(super) fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(|e| Error::io("cannot open for appending", path, e))
}

pub(super) fn file_len(file: &File, path: &Path) -> Result<u64> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| Error::io("cannot stat", path, e))
}

pub(super) fn file_created(file: &File) -> Option<String> {
    let modified = file.metadata().ok()?.modified().ok()?;
    Some(
        chrono::DateTime::<chrono::Utc>::from(modified)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )
}

#[cfg(unix)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

pub(super) fn last_byte(file: &File, len: u64) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    read_at(file, &mut b, len - 1)?;
    Ok(b[0])
}

/// Creates `path` with `bytes`, `fsync`ed when `sync`; its directory is made when missing.
pub(super) fn write_new_file(path: &Path, bytes: &[u8], sync: bool) -> Result<File> {
    // The directory is made only when the file cannot be created without it: a `mkdir` and a
    // `stat` before each of an import's thousands of files would find it there every time.
    let create = || File::create(path);
    let mut f = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match path.parent() {
            Some(dir) => fs::create_dir_all(dir).and_then(|()| create()),
            None => Err(e),
        },
        other => other,
    }
    .map_err(|e| Error::io("cannot create", path, e))?;
    f.write_all(bytes)
        .map_err(|e| Error::io("cannot write", path, e))?;
    if sync {
        f.sync_all()
            .map_err(|e| Error::io("cannot sync", path, e))?;
    }
    Ok(f)
}

/// A temporary name beside `path`, unique to this process and call:
/// `.{name}.{pid}.{n}.tmp`.
pub(super) fn unique_tmp(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{n}.tmp", process_id()))
}

/// This process's id, asked of the system once (each ask is a system call; an import names
/// two temporary files a session).
pub(super) fn process_id() -> u32 {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// [`tail_fingerprint`] of the file's bytes before `end`.
pub(super) fn file_tail_fingerprint(file: &File, end: u64) -> std::io::Result<String> {
    let start = end.saturating_sub(32);
    let mut buf = vec![0u8; (end - start) as usize];
    read_at(file, &mut buf, start)?;
    Ok(tail_fingerprint(&buf))
}

/// Fingerprint of the last bytes a meta reflects: hex of the last (up to) 32 bytes.
pub(crate) fn tail_fingerprint(bytes: &[u8]) -> String {
    let tail = &bytes[bytes.len().saturating_sub(32)..];
    tail.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let tmp = unique_tmp(path);
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        if sync {
            f.sync_all()
                .map_err(|e| Error::io("cannot sync", &tmp, e))?;
        }
        fs::rename(&tmp, path).map_err(|e| Error::io("cannot replace", path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io("cannot sync", dir, e))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
