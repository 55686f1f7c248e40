//! Listing and reading the memory directories (seed 000 §4 `scan_memory_files()`): every `*.md`
//! file except `MEMORY.md`, at most [`MAX_NOTES`] (the newest by mtime when there are more),
//! frontmatter from the first [`crate::frontmatter::FRONTMATTER_MAX_LINES`] lines.
//!
//! A scan never fails: a missing directory is empty, and a directory that is a file, a folder or
//! file that cannot be read, a FIFO, a symlink loop, a binary or non-UTF-8 file, or a broken
//! frontmatter each give one [`Warning`] naming the path, and the scan goes on with the rest.
//! Reading never writes: no mtime or atime is set by mewmem (files are opened read-only).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use mem_core::fsread::ReadError;

use crate::cache::FolderCache;
use crate::error::{Error, Result};
use crate::frontmatter;

/// The seed's bound on the files one scan considers.
pub const MAX_NOTES: usize = 200;

/// The most bytes read from one note (256 KiB). A larger file is used with its first
/// `MAX_NOTE_BYTES` (cut at a character boundary) and a warning.
pub const MAX_NOTE_BYTES: usize = 256 * 1024;

/// The file every memory folder may hold as its index, never recalled itself.
pub const INDEX_FILE: &str = "MEMORY.md";

/// Which memory directory a note lives in: the `<scope>` of its id `N:<scope>/<file>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `<project>/.mewcode/memory`.
    Project,
    /// `~/.mewcode/memory`.
    User,
    /// The K-th (0-based) extra directory from the configuration (e.g. a Claude Code
    /// `~/.claude/projects/<project>/memory` folder).
    Extra(usize),
}

impl Scope {
    /// Parses `project`, `user` or `extra<K>` (K a decimal number without sign or leading zero).
    pub fn parse(text: &str) -> Option<Scope> {
        match text {
            "project" => Some(Scope::Project),
            "user" => Some(Scope::User),
            _ => {
                let k = text.strip_prefix("extra")?;
                let ok = !k.is_empty()
                    && k.bytes().all(|b| b.is_ascii_digit())
                    && (k == "0" || !k.starts_with('0'));
                ok.then(|| k.parse().ok()).flatten().map(Scope::Extra)
            }
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Project => f.write_str("project"),
            Scope::User => f.write_str("user"),
            Scope::Extra(k) => write!(f, "extra{k}"),
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A memory note's id (shared contract): `N:<scope>/<file name>`, e.g.
/// `N:project/feedback_testing.md`. Round-trips exactly through [`NoteId::parse`] and `Display`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NoteId {
    /// The directory.
    pub scope: Scope,
    /// The file name inside it (`*.md`, no path separator).
    pub file_name: String,
}

impl NoteId {
    /// The id of `file_name` in `scope`.
    pub fn new(scope: Scope, file_name: impl Into<String>) -> NoteId {
        NoteId {
            scope,
            file_name: file_name.into(),
        }
    }

    /// Parses `N:<scope>/<file name>`. Errors ([`Error::InvalidId`]): another prefix (the prefix
    /// is case-sensitive), an unknown scope, a file name that is empty, holds `/`, `\` or a NUL,
    /// is `.`/`..`, does not end in `.md`, or is `MEMORY.md`.
    pub fn parse(id: &str) -> Result<NoteId> {
        let bad = |reason: &str| Error::InvalidId {
            id: id.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = id
            .strip_prefix("N:")
            .ok_or_else(|| bad("a note id starts with `N:`"))?;
        let (scope, file) = rest
            .split_once('/')
            .ok_or_else(|| bad("no `/` between scope and file name"))?;
        let scope = Scope::parse(scope).ok_or_else(|| bad("unknown scope"))?;
        check_file_name(file).map_err(|reason| bad(&reason))?;
        Ok(NoteId::new(scope, file))
    }
}

/// Why `name` cannot be a note's file name, if it cannot.
pub(crate) fn check_file_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() || name == "." || name == ".." {
        return Err("empty file name".to_owned());
    }
    if name.contains(['/', '\\', '\0']) {
        return Err("the file name holds a path separator or NUL".to_owned());
    }
    if !name.ends_with(".md") || name == ".md" {
        return Err("a note's file name ends in `.md`".to_owned());
    }
    if name == INDEX_FILE {
        return Err("MEMORY.md is the folder's index, not a note".to_owned());
    }
    Ok(())
}

impl fmt::Display for NoteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "N:{}/{}", self.scope, self.file_name)
    }
}

impl Serialize for NoteId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A memory directory and its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryDir {
    /// The scope its notes' ids carry.
    pub scope: Scope,
    /// The directory (absolute, or relative to the process's current directory).
    pub path: PathBuf,
}

/// The memory directories of a project, in scope order: project, user, then the extras.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryDirs {
    /// All of them.
    pub dirs: Vec<MemoryDir>,
}

impl MemoryDirs {
    /// `<project>/.mewcode/memory`, `<home>/.mewcode/memory`, then `extras` as `extra0`, `extra1`…
    pub fn standard(project: &Path, home: &Path, extras: &[PathBuf]) -> MemoryDirs {
        let mut dirs = vec![
            MemoryDir {
                scope: Scope::Project,
                path: project.join(".mewcode").join("memory"),
            },
            MemoryDir {
                scope: Scope::User,
                path: home.join(".mewcode").join("memory"),
            },
        ];
        dirs.extend(extras.iter().enumerate().map(|(k, p)| MemoryDir {
            scope: Scope::Extra(k),
            path: p.clone(),
        }));
        MemoryDirs { dirs }
    }

    /// The directory of `scope`, if configured.
    pub fn dir(&self, scope: Scope) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|d| d.scope == scope)
            .map(|d| d.path.as_path())
    }

    /// The path of the note `id`. Errors: [`Error::UnknownScope`].
    pub fn path_of(&self, id: &NoteId) -> Result<PathBuf> {
        let dir = self.dir(id.scope).ok_or_else(|| Error::UnknownScope {
            id: id.to_string(),
            scope: id.scope.to_string(),
        })?;
        Ok(dir.join(&id.file_name))
    }
}

/// Something a scan skipped or could only partly use, with the path it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The file or directory.
    pub path: PathBuf,
    /// What happened, e.g. `not valid UTF-8; skipped`.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// One memory note as scanned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    /// `N:<scope>/<file name>`.
    pub id: NoteId,
    /// Its directory's scope.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// Frontmatter `name`, trimmed; the file name without `.md` when there is none.
    pub name: String,
    /// Frontmatter `description`, trimmed (may be empty).
    pub description: String,
    /// Frontmatter `type` as written (`user`, `feedback`, `project`, `reference`, or anything
    /// else a person wrote), trimmed; `None` when absent.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Modification time.
    #[serde(serialize_with = "ser_time")]
    pub mtime: SystemTime,
    /// Size in bytes (of the whole file, even when only [`MAX_NOTE_BYTES`] were read).
    pub size: u64,
    /// The frontmatter's `last_verified` (else `updated`) value as written, when present.
    pub verified: Option<String>,
    /// The text after the frontmatter (lines joined with `\n`; at most [`MAX_NOTE_BYTES`] of
    /// the file read). Not serialised (`--json` listings stay small).
    #[serde(skip)]
    pub body: String,
    /// `true` when the file is larger than [`MAX_NOTE_BYTES`] and the body is cut.
    pub truncated: bool,
}

fn ser_time<S: serde::Serializer>(t: &SystemTime, s: S) -> std::result::Result<S::Ok, S::Error> {
    let t: chrono::DateTime<chrono::Utc> = (*t).into();
    s.collect_str(&t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

impl Note {
    /// The selector's view of the note: id = the note id's text; a note of the user's folder
    /// is user-level.
    pub fn candidate(&self) -> mem_llm::Candidate {
        mem_llm::Candidate {
            user_level: self.id.scope == Scope::User,
            id: self.id.to_string(),
            name: self.name.clone(),
            description: self.description.clone(),
            body: self.body.clone(),
        }
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scan {
    /// The notes, newest first (ties: scope order, then file name).
    pub notes: Vec<Note>,
    /// One per file or directory that was skipped or only partly used.
    pub warnings: Vec<Warning>,
    /// How many `*.md` files were left out because there were more than [`MAX_NOTES`].
    pub over_limit: usize,
    /// Directories that exist and could be listed.
    pub dirs_read: usize,
}

impl Scan {
    /// The note with this id.
    pub fn get(&self, id: &NoteId) -> Option<&Note> {
        self.notes.iter().find(|n| &n.id == id)
    }
}

/// A `*.md` entry found in a listing, not read yet.
struct Entry {
    /// Index of its directory in [`MemoryDirs::dirs`].
    dir: usize,
    scope: Scope,
    path: PathBuf,
    file_name: String,
    mtime: SystemTime,
    meta: std::fs::Metadata,
}

/// Scans all `dirs` (see the module doc): at most [`MAX_NOTES`] notes, the newest first.
pub fn scan(dirs: &MemoryDirs) -> Scan {
    scan_with(dirs, false)
}

/// [`scan`] through the scan cache (see [`crate::cache`]): a note whose size and times are
/// those recorded is taken from the cache instead of being read, parsed and tokenised again.
/// The same result as [`scan`]; the per-turn scan of recall. Updates the cache files (best
/// effort; never a note).
pub fn scan_cached(dirs: &MemoryDirs) -> Scan {
    scan_with(dirs, true)
}

fn scan_with(dirs: &MemoryDirs, cached: bool) -> Scan {
    let started = SystemTime::now();
    let mut out = Scan::default();
    let mut entries = Vec::new();
    let mut listed = vec![false; dirs.dirs.len()];
    for (i, dir) in dirs.dirs.iter().enumerate() {
        let before = out.dirs_read;
        list_dir(i, dir, &mut entries, &mut out);
        listed[i] = out.dirs_read > before;
    }
    let absolute = |p: &Path| std::path::absolute(p).ok();
    let user_dir = dirs.dir(Scope::User).and_then(absolute);
    let mut caches: Vec<Option<FolderCache>> = dirs
        .dirs
        .iter()
        .zip(&listed)
        .map(|(d, listed)| {
            if !cached || !listed {
                return None;
            }
            let abs = absolute(&d.path)?;
            let file = crate::cache::cache_file(&abs, d.scope, user_dir.as_deref());
            Some(FolderCache::open(&abs, file, started))
        })
        .collect();
    entries.sort_by(|a, b| {
        b.mtime
            .cmp(&a.mtime)
            .then(a.scope.cmp(&b.scope))
            .then(a.file_name.cmp(&b.file_name))
    });
    if entries.len() > MAX_NOTES {
        out.over_limit = entries.len() - MAX_NOTES;
        entries.truncate(MAX_NOTES);
    }
    for entry in entries {
        let mut cache = caches.get_mut(entry.dir).and_then(Option::as_mut);
        if let Some(cache) = cache.as_mut()
            && let Some((note, warnings)) =
                cache.get(entry.scope, &entry.path, &entry.file_name, &entry.meta)
        {
            out.warnings.extend(warnings);
            out.notes.push(note);
            continue;
        }
        match read_note(entry.scope, &entry.path, &entry.file_name) {
            Ok((note, warnings)) => {
                if let Some(cache) = cache {
                    cache.put(&note, &warnings, &entry.meta);
                }
                out.warnings.extend(warnings);
                out.notes.push(note);
            }
            Err(message) => out.warnings.push(Warning {
                path: entry.path,
                message,
            }),
        }
    }
    for cache in caches.into_iter().flatten() {
        cache.finish();
    }
    out
}

fn list_dir(index: usize, dir: &MemoryDir, entries: &mut Vec<Entry>, out: &mut Scan) {
    let warn = |out: &mut Scan, path: &Path, message: String| {
        out.warnings.push(Warning {
            path: path.to_owned(),
            message,
        })
    };
    match std::fs::metadata(&dir.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            return warn(
                out,
                &dir.path,
                format!("cannot read the memory directory: {e}"),
            );
        }
        Ok(m) if !m.is_dir() => {
            return warn(
                out,
                &dir.path,
                "is not a directory; no notes read from it".to_owned(),
            );
        }
        Ok(_) => {}
    }
    let listing = match std::fs::read_dir(&dir.path) {
        Ok(l) => l,
        Err(e) => {
            return warn(
                out,
                &dir.path,
                format!("cannot list the memory directory: {e}"),
            );
        }
    };
    out.dirs_read += 1;
    for item in listing {
        let item = match item {
            Ok(i) => i,
            Err(e) => {
                warn(out, &dir.path, format!("cannot list an entry: {e}"));
                continue;
            }
        };
        let Some(file_name) = item.file_name().to_str().map(str::to_owned) else {
            // A `.md` name that is not UTF-8 cannot have an id.
            if item.file_name().to_string_lossy().ends_with(".md") {
                warn(
                    out,
                    &item.path(),
                    "file name is not UTF-8; skipped".to_owned(),
                );
            }
            continue;
        };
        if !file_name.ends_with(".md") || file_name == INDEX_FILE || file_name.starts_with('.') {
            continue;
        }
        let path = item.path();
        // Follow symlinks: a link to a note is a note; a loop or a dangling link is a warning.
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                warn(out, &path, format!("cannot read: {e}; skipped"));
                continue;
            }
        };
        if !meta.is_file() {
            if !meta.is_dir() {
                warn(
                    out,
                    &path,
                    format!(
                        "{}; skipped",
                        not_regular(mem_core::fsread::file_kind(&meta.file_type()))
                    ),
                );
            }
            continue;
        }
        entries.push(Entry {
            dir: index,
            scope: dir.scope,
            path,
            file_name,
            mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta,
        });
    }
}

/// `not a regular file (a FIFO)` for a [`mem_core::fsread::file_kind`], without repeating
/// the catch-all kind `not a regular file`.
fn not_regular(kind: &str) -> String {
    match kind {
        "not a regular file" => kind.to_owned(),
        kind => format!("not a regular file ({kind})"),
    }
}

/// Reads and parses one note. `Err` is the warning text when the file is skipped.
pub(crate) fn read_note(
    scope: Scope,
    path: &Path,
    file_name: &str,
) -> std::result::Result<(Note, Vec<Warning>), String> {
    let mem_core::fsread::CappedBytes {
        bytes,
        size,
        truncated,
        modified,
    } = mem_core::fsread::read_prefix(path, MAX_NOTE_BYTES).map_err(|e| match e {
        ReadError::NotAFile { kind } => format!("{}; skipped", not_regular(kind)),
        ReadError::Io(e) => format!("cannot read: {e}; skipped"),
        other => format!("{other}; skipped"),
    })?;
    if bytes.contains(&0) {
        return Err("binary content (NUL bytes); skipped".to_owned());
    }
    let text = String::from_utf8(bytes).map_err(|_| "not valid UTF-8; skipped".to_owned())?;
    let mut warnings = Vec::new();
    if truncated {
        warnings.push(Warning {
            path: path.to_owned(),
            message: format!(
                "{size} bytes; only the first {MAX_NOTE_BYTES} bytes are used for recall"
            ),
        });
    }
    let (file, warning) = frontmatter::parse(&text);
    if let Some(w) = warning {
        warnings.push(Warning {
            path: path.to_owned(),
            message: format!("{w}; kept by its file name"),
        });
    }
    let fm = file.frontmatter;
    let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
    let trimmed = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let note = Note {
        id: NoteId::new(scope, file_name),
        scope,
        path: path.to_owned(),
        name: trimmed(fm.name).unwrap_or_else(|| stem.to_owned()),
        description: trimmed(fm.description).unwrap_or_default(),
        kind: trimmed(fm.kind),
        mtime: modified.unwrap_or(SystemTime::UNIX_EPOCH),
        size,
        verified: trimmed(fm.last_verified).or_else(|| trimmed(fm.updated)),
        body: file.body,
        truncated,
    };
    Ok((note, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_bad_ids_are_refused() {
        for id in [
            "N:project/feedback_testing.md",
            "N:user/a b.md",
            "N:extra0/x.md",
            "N:extra12/日本.md",
        ] {
            assert_eq!(
                NoteId::parse(id).map(|i| i.to_string()).ok(),
                Some(id.to_owned())
            );
        }
        for bad in [
            "n:project/x.md",
            "N:proj/x.md",
            "N:extra/x.md",
            "N:extra01/x.md",
            "N:project/x.txt",
            "N:project/../x.md",
            "N:project/a/b.md",
            "N:project/MEMORY.md",
            "N:project/",
            "N:project",
            "L42",
        ] {
            assert!(
                matches!(NoteId::parse(bad), Err(Error::InvalidId { .. })),
                "{bad}"
            );
        }
    }
}
