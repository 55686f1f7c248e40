//! Writing `<dir>/<name>/SKILL.md`: locked, atomic, secret-filtered, never over a person's
//! edits.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Error, Result, io};
use mem_core::sha256_hex;

/// The skill file Claude Code and Codex read.
pub const SKILL_FILE: &str = "SKILL.md";
/// Where a new version goes when `SKILL.md` was edited by hand (with `--beside`).
pub const BESIDE_FILE: &str = "SKILL.mewmem.md";
/// Beside `SKILL.md`: what mewmem last wrote there ([`Sidecar`]).
pub const SIDECAR_FILE: &str = ".mewmem.json";
/// In the skills folder: held while a skill is written.
pub const LOCK_FILE: &str = ".mewmem.lock";
/// How long a write waits for another one.
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// The sidecar `.mewmem.json` beside a `SKILL.md` mewmem wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sidecar {
    /// Format version (1).
    pub version: u32,
    /// SHA-256 (lowercase hex) of the `SKILL.md` mewmem wrote: a file with another hash was
    /// edited since.
    pub sha256: String,
    /// The memory ids the skill was drawn from.
    pub sources: Vec<String>,
    /// Who drafted it: `offline` or `<provider>:<model>`.
    pub engine: String,
    /// When (RFC 3339, UTC).
    pub written: String,
}

/// How [`write()`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// The skills folder (`<project>/.claude/skills` by default).
    pub dir: PathBuf,
    /// When `SKILL.md` was edited by hand: write [`BESIDE_FILE`] instead of failing.
    pub beside: bool,
    /// Write nothing; report what would happen.
    pub dry_run: bool,
}

/// What [`write()`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteStatus {
    /// A new `SKILL.md`.
    Created,
    /// A `SKILL.md` mewmem wrote before, replaced.
    Updated,
    /// The same bytes were there already.
    Unchanged,
    /// `SKILL.md` was edited by hand: the new version went to [`BESIDE_FILE`].
    Beside,
    /// Dry run: nothing written (`Created`/`Updated` would have happened).
    DryRun,
}

impl WriteStatus {
    /// `created`, `updated`, `unchanged`, `beside`, `dry-run`.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteStatus::Created => "created",
            WriteStatus::Updated => "updated",
            WriteStatus::Unchanged => "unchanged",
            WriteStatus::Beside => "beside",
            WriteStatus::DryRun => "dry-run",
        }
    }
}

/// The outcome of [`write()`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Written {
    /// The skill's name (its folder).
    pub name: String,
    /// The file written (or that would be).
    pub path: PathBuf,
    /// What happened.
    pub status: WriteStatus,
    /// Secrets withheld from the text.
    pub withheld: usize,
    /// The text as written (secrets redacted).
    #[serde(skip)]
    pub text: String,
}

struct Lock {
    _file: File,
}

fn lock(dir: &Path) -> Result<Lock> {
    let path = dir.join(LOCK_FILE);
    match mem_core::lockfile::lock_exclusive(&path, LOCK_TIMEOUT) {
        Ok(file) => Ok(Lock { _file: file }),
        Err(failure) => Err(failure.into_error(
            |waited_ms| Error::Locked {
                path: path.clone(),
                waited_ms,
            },
            |what, source| io(what, &path, source),
        )),
    }
}

/// `Some(bytes)` of a regular file, `None` when absent.
///
/// # Errors
/// [`Error::Unsafe`] for a symlink or anything not a regular file.
fn read_regular(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Unsafe {
            path: path.to_path_buf(),
            what: "a symlink",
        }),
        Ok(m) if !m.is_file() => Err(Error::Unsafe {
            path: path.to_path_buf(),
            what: "not a regular file",
        }),
        Ok(_) => mem_core::fsread::read(path)
            .map(Some)
            .map_err(|e| io("read", path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path, e)),
    }
}

/// A real folder at `path` (created when absent).
///
/// # Errors
/// [`Error::Unsafe`] for a symlink or a file in the way.
fn ensure_folder(path: &Path, create: bool) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::Unsafe {
            path: path.to_path_buf(),
            what: "a symlink",
        }),
        Ok(m) if !m.is_dir() => Err(Error::Unsafe {
            path: path.to_path_buf(),
            what: "not a folder",
        }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if create {
                fs::create_dir_all(path).map_err(|e| io("create", path, e))
            } else {
                Ok(())
            }
        }
        Err(e) => Err(io("read", path, e)),
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    mem_tiers::index::write_atomic(path, bytes).map_err(|e| match e {
        mem_tiers::Error::Io { source, .. } => io("write", path, source),
        other => Error::Tiers(other),
    })
}

/// Writes the skill `name` (a [`super::safe_name`]; checked again here) with `text` into
/// `<dir>/<name>/SKILL.md`, after the secret filter, under the skills folder's lock.
///
/// - No `SKILL.md`: created, with the sidecar [`SIDECAR_FILE`] recording its SHA-256,
///   `sources` and `engine`.
/// - A `SKILL.md` whose SHA-256 is the sidecar's (mewmem wrote it, nobody changed it):
///   replaced ([`WriteStatus::Updated`]), or [`WriteStatus::Unchanged`] when the bytes are the
///   same.
/// - Any other `SKILL.md` (no sidecar, or edited since): a person's. [`Error::Edited`], or with
///   `beside` the text goes to [`BESIDE_FILE`] next to it ([`WriteStatus::Beside`]).
///
/// # Errors
/// [`Error::Edited`]; [`Error::Unsafe`] when the folder, the skill folder or the file is a
/// symlink or of the wrong type; [`Error::Locked`]; I/O errors naming the file (the old file
/// is untouched then: every write is a temp file, fsync, rename).
pub fn write(
    options: &WriteOptions,
    name: &str,
    text: &str,
    sources: &[String],
    engine: &str,
) -> Result<Written> {
    let name = if super::safe_name(name) == name {
        name.to_owned()
    } else {
        super::safe_name(name)
    };
    let red = mem_core::secrets::redact(text);
    let withheld = red.withheld();
    let text = red.text;
    let skill_dir = options.dir.join(&name);
    let path = skill_dir.join(SKILL_FILE);
    let sidecar_path = skill_dir.join(SIDECAR_FILE);
    let written = |path: PathBuf, status: WriteStatus, text: String| Written {
        name: name.clone(),
        path,
        status,
        withheld,
        text,
    };
    ensure_folder(&options.dir, !options.dry_run)?;
    ensure_folder(&skill_dir, false)?;
    let _lock = if options.dry_run || !options.dir.is_dir() {
        None
    } else {
        Some(lock(&options.dir)?)
    };
    let current = read_regular(&path)?;
    let sidecar: Option<Sidecar> =
        read_regular(&sidecar_path)?.and_then(|b| serde_json::from_slice(&b).ok());
    let ours = match (&current, &sidecar) {
        (None, _) => true,
        (Some(bytes), Some(s)) => sha256_hex(bytes) == s.sha256,
        (Some(_), None) => false,
    };
    if !ours {
        let beside = skill_dir.join(BESIDE_FILE);
        if !options.beside {
            return Err(Error::Edited { path, beside });
        }
        if options.dry_run {
            return Ok(written(beside, WriteStatus::DryRun, text));
        }
        read_regular(&beside)?;
        write_atomic(&beside, text.as_bytes())?;
        return Ok(written(beside, WriteStatus::Beside, text));
    }
    if current.as_deref() == Some(text.as_bytes()) {
        return Ok(written(path, WriteStatus::Unchanged, text));
    }
    if options.dry_run {
        return Ok(written(path, WriteStatus::DryRun, text));
    }
    let status = if current.is_some() {
        WriteStatus::Updated
    } else {
        WriteStatus::Created
    };
    ensure_folder(&skill_dir, true)?;
    let record = Sidecar {
        version: 1,
        sha256: sha256_hex(text.as_bytes()),
        sources: sources.to_vec(),
        engine: engine.to_owned(),
        written: super::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    let mut json = serde_json::to_vec_pretty(&record).map_err(|e| {
        io(
            "encode",
            &sidecar_path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    json.push(b'\n');
    // The sidecar first: a crash between the two leaves a sidecar whose hash matches no file,
    // which reads as a hand edit (refused) rather than a person's file being overwritten later.
    write_atomic(&sidecar_path, &json)?;
    write_atomic(&path, text.as_bytes())?;
    if let Ok(d) = File::open(&skill_dir) {
        let _ = d.sync_all();
    }
    Ok(written(path, status, text))
}
