//! [`AutoMemory`]: the two `memories.md` files of a project, read and written safely, and the
//! lookup, listing and removal of single entries by id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use mem_core::sha256_hex;
use mem_instructions::Scope;
use mem_llm::MemoryCategory;
use serde::{Deserialize, Serialize};

use crate::doc::{Document, HeadingStyle, ParseWarning};
use crate::error::{Error, Result};
use crate::fsutil::{
    ensure_dir, lock, lock_path, read_json, read_strict, write_atomic, write_json, write_json_cache,
};
use crate::id::EntryId;
use crate::load::{DEFAULT_MAX_MEMORY_BYTES, MEMORIES_FILE};

/// The confirmation dates kept beside each `memories.md`: `memories.meta.json`.
pub const META_FILE: &str = "memories.meta.json";

/// Default token cap of one `memories.md` (o200k_base tokens): 2,000. Always-loaded memory must
/// stay small; both files together stay under 4,000 tokens of every turn's context.
pub const DEFAULT_CAP_TOKENS: usize = 2_000;

/// How auto memory reads and writes. Built by the caller from its configuration.
#[derive(Debug, Clone)]
pub struct AutoOptions {
    /// Headings written for a new section (default: the seed's).
    pub headings: HeadingStyle,
    /// Token cap of each file (default [`DEFAULT_CAP_TOKENS`]); enforced at write time.
    pub cap_tokens: usize,
    /// A `memories.md` larger than this many bytes is refused, never rewritten (default 1 MiB).
    pub max_file_bytes: usize,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            headings: HeadingStyle::Seed,
            cap_tokens: DEFAULT_CAP_TOKENS,
            max_file_bytes: DEFAULT_MAX_MEMORY_BYTES,
        }
    }
}

/// `user` or `project`.
pub fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

/// The file a category is stored in (seed §3: preferences and corrections in the user's file,
/// project knowledge and references in the project's).
pub fn scope_of(category: MemoryCategory) -> Scope {
    if category.is_user_level() {
        Scope::User
    } else {
        Scope::Project
    }
}

/// One entry of either file, as listed for search indexes, `mem memory show` and MCP tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryInfo {
    /// `M` + 8 hex digits.
    #[serde(serialize_with = "crate::store::ser_id")]
    pub id: EntryId,
    /// Which file.
    #[serde(serialize_with = "crate::store::ser_scope")]
    pub scope: Scope,
    /// Its section.
    pub category: MemoryCategory,
    /// The text after the bullet.
    pub text: String,
    /// The file (the path looked at: `<home>/.mewcode/memories.md` or `<project>/...`).
    pub path: PathBuf,
    /// 1-based line in the file.
    pub line: usize,
}

pub(crate) fn ser_id<S: serde::Serializer>(
    id: &EntryId,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(id)
}

pub(crate) fn ser_scope<S: serde::Serializer>(
    scope: &Scope,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(scope_name(*scope))
}

/// The entries of both files, and what could not be read (each naming its file).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Entries, the user's file first, each in file order.
    pub entries: Vec<EntryInfo>,
    /// Files that could not be read, and parse warnings (`path:line: message`).
    pub warnings: Vec<String>,
}

/// When an entry was added and last confirmed (stated again, or merged into).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryDates {
    /// First written.
    #[serde(serialize_with = "nanos")]
    pub added: DateTime<Utc>,
    /// Last added again or confirmed by an extraction.
    #[serde(serialize_with = "nanos")]
    pub confirmed: DateTime<Utc>,
}

/// A date as RFC 3339 with nine fractional digits, always: chrono's default prints 0, 3, 6 or
/// 9 digits depending on the value, so the size of `memories.meta.json` (shown by `mem
/// checkpoint`) changed with the clock.
fn nanos<S: serde::Serializer>(
    date: &DateTime<Utc>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&date.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true))
}

/// The content of `memories.meta.json`: dates per entry id. A cache: when missing, entries are
/// dated when next seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// Format version (1).
    #[serde(default)]
    pub version: u32,
    /// Dates by entry id (`M...`).
    #[serde(default)]
    pub entries: BTreeMap<String, EntryDates>,
    /// SHA-256 (lowercase hex) of `memories.md` as mewmem last wrote it; a file that no longer
    /// has this hash was edited by someone else since (a person). `None` until mewmem writes
    /// the file. Checkpoint restores use it to tell hand edits from mewmem's own changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

impl Meta {
    /// Dates of `id`.
    pub fn dates(&self, id: EntryId) -> Option<&EntryDates> {
        self.entries.get(&id.to_string())
    }

    /// Marks `id` as confirmed now (added now when unknown).
    pub fn confirm(&mut self, id: EntryId, now: DateTime<Utc>) {
        self.entries
            .entry(id.to_string())
            .and_modify(|d| d.confirmed = now)
            .or_insert(EntryDates {
                added: now,
                confirmed: now,
            });
    }

    /// Dates every entry of `doc` not known yet as `now`; drops dates of entries gone.
    pub(crate) fn sync(&mut self, doc: &Document, now: DateTime<Utc>) {
        let ids: Vec<String> = doc.entries().iter().map(|e| e.id.to_string()).collect();
        let known: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
        self.entries.retain(|k, _| known.contains(k.as_str()));
        for id in ids {
            self.entries.entry(id).or_insert(EntryDates {
                added: now,
                confirmed: now,
            });
        }
    }
}

/// A file opened for a change: the document, its dates, and where it lives.
#[derive(Debug)]
pub struct OpenFile {
    /// Which file.
    pub scope: Scope,
    /// The path looked at.
    pub path: PathBuf,
    /// The document as read under the lock.
    pub doc: Document,
    /// Its dates.
    pub meta: Meta,
    /// Parse warnings (`path:line: message`).
    pub warnings: Vec<String>,
}

/// The two `memories.md` files of a project (seed 000 §3): `<home>/.mewcode/memories.md`
/// (preferences, corrections) and `<project>/.mewcode/memories.md` (project knowledge,
/// references).
///
/// Every change takes the file's lock (`.memories.md.lock` beside it), re-reads the file, applies
/// the change to what is on disk now, and replaces the file atomically: two processes never lose
/// each other's entries, and a hand edit made between two changes is kept.
#[derive(Debug, Clone)]
pub struct AutoMemory {
    project_root: PathBuf,
    home: PathBuf,
    options: AutoOptions,
}

impl AutoMemory {
    /// The files of `project_root`, with `home` holding the user's `.mewcode/`.
    pub fn new(
        project_root: impl Into<PathBuf>,
        home: impl Into<PathBuf>,
        options: AutoOptions,
    ) -> Self {
        AutoMemory {
            project_root: project_root.into(),
            home: home.into(),
            options,
        }
    }

    /// The options.
    pub fn options(&self) -> &AutoOptions {
        &self.options
    }

    /// The project root.
    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// The user's home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The `.mewcode` folder of `scope`.
    pub fn dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.home.join(".mewcode"),
            Scope::Project => self.project_root.join(".mewcode"),
        }
    }

    /// The path of the `memories.md` of `scope` (as looked at, symlinks not resolved).
    pub fn path(&self, scope: Scope) -> PathBuf {
        self.dir(scope).join(MEMORIES_FILE)
    }

    /// Where the file of `scope` really is: symlinks resolved, and required to stay inside its
    /// folder (the project root for the project's file, `~/.mewcode` for the user's).
    fn resolve(&self, scope: Scope, create_dir: bool) -> Result<PathBuf> {
        let dir = self.dir(scope);
        if create_dir {
            ensure_dir(&dir)?;
        }
        let (boundary, shown) = match scope {
            Scope::Project => (
                self.project_root
                    .canonicalize()
                    .map_err(|source| Error::ProjectRoot {
                        path: self.project_root.clone(),
                        source,
                    })?,
                "the project".to_owned(),
            ),
            Scope::User => match dir.canonicalize() {
                Ok(d) => (d, "~/.mewcode".to_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(dir.join(MEMORIES_FILE));
                }
                Err(e) => return Err(Error::io("cannot resolve", &dir, e)),
            },
        };
        let canon_dir = match dir.canonicalize() {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(dir.join(MEMORIES_FILE));
            }
            Err(e) => return Err(Error::io("cannot resolve", &dir, e)),
        };
        if !canon_dir.starts_with(&boundary) {
            return Err(Error::OutsideFolder {
                path: dir,
                target: canon_dir,
                boundary: shown,
            });
        }
        let path = canon_dir.join(MEMORIES_FILE);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => match path.canonicalize() {
                Ok(target) if target.starts_with(&boundary) => Ok(target),
                Ok(target) => Err(Error::OutsideFolder {
                    path: self.path(scope),
                    target,
                    boundary: shown,
                }),
                Err(e) => Err(Error::io("cannot resolve the symlink", &path, e)),
            },
            _ => Ok(path),
        }
    }

    fn meta_path(real: &Path) -> PathBuf {
        real.with_file_name(META_FILE)
    }

    /// Reads the file of `scope` (no lock: files are replaced atomically, so a reader sees a
    /// whole file). A missing file is an empty document.
    ///
    /// # Errors
    /// The file resolves outside its folder, is not a regular file, is larger than
    /// `max_file_bytes`, not UTF-8, or binary: an error naming it.
    pub fn read(&self, scope: Scope) -> Result<(Document, Vec<String>)> {
        let real = self.resolve(scope, false)?;
        let text = read_strict(&real, self.options.max_file_bytes)?.unwrap_or_default();
        let (doc, warnings) = Document::parse(&text);
        Ok((doc, self.show_warnings(scope, warnings)))
    }

    fn show_warnings(&self, scope: Scope, warnings: Vec<ParseWarning>) -> Vec<String> {
        let path = self.path(scope);
        warnings
            .into_iter()
            .map(|w| format!("{}:{}: {}", path.display(), w.line, w.message))
            .collect()
    }

    /// Changes the file of `scope` under its lock: re-reads it, runs `change` on what is on disk
    /// now, and writes the document (atomically) and its dates only when they changed. The
    /// `.mewcode` folder is created when missing.
    ///
    /// # Errors
    /// As [`AutoMemory::read`]; writing errors (full disk, read-only folder) leave the file as
    /// it was.
    pub fn update<R>(
        &self,
        scope: Scope,
        change: impl FnOnce(&mut OpenFile) -> Result<R>,
    ) -> Result<R> {
        let real = self.resolve(scope, true)?;
        let _lock = lock(&lock_path(&real))?;
        let before = read_strict(&real, self.options.max_file_bytes)?;
        let (doc, warnings) = Document::parse(before.as_deref().unwrap_or(""));
        let meta_path = Self::meta_path(&real);
        let meta: Meta = read_json(&meta_path)
            .unwrap_or_else(|e| {
                tracing::warn!("{e}; the dates are rebuilt");
                None
            })
            .unwrap_or_default();
        let meta_before = meta.clone();
        let mut open = OpenFile {
            scope,
            path: self.path(scope),
            doc,
            meta,
            warnings: self.show_warnings(scope, warnings),
        };
        let out = change(&mut open)?;
        let after = open.doc.render();
        if after != before.as_deref().unwrap_or("") {
            write_atomic(&real, after.as_bytes())?;
            open.meta.written = Some(sha256_hex(after.as_bytes()));
        }
        open.meta.version = 1;
        if open.meta != meta_before && (before.is_some() || !after.is_empty()) {
            write_json_cache(&meta_path, &open.meta)?;
        }
        Ok(out)
    }

    /// Takes the lock of the file of `scope` (the one [`AutoMemory::update`] takes; waits while
    /// another process holds it) for a whole-file snapshot or replacement (checkpoints). The
    /// `.mewcode` folder is created when missing.
    ///
    /// # Errors
    /// The file resolves outside its folder; the lock file cannot be created.
    pub fn lock_file(&self, scope: Scope) -> Result<LockedFile> {
        let real = self.resolve(scope, true)?;
        let lock = lock(&lock_path(&real))?;
        Ok(LockedFile {
            meta_path: Self::meta_path(&real),
            real,
            max_bytes: self.options.max_file_bytes,
            _lock: lock,
        })
    }

    /// Every entry of both files, the user's first. A file that cannot be read is named in
    /// [`Listing::warnings`] and skipped.
    pub fn list(&self) -> Listing {
        let mut listing = Listing::default();
        for scope in [Scope::User, Scope::Project] {
            match self.read(scope) {
                Ok((doc, warnings)) => {
                    listing.warnings.extend(warnings);
                    let path = self.path(scope);
                    listing
                        .entries
                        .extend(doc.entries().into_iter().map(|e| EntryInfo {
                            id: e.id,
                            scope,
                            category: e.category,
                            text: e.text,
                            path: path.clone(),
                            line: e.line,
                        }));
                }
                Err(e) => listing.warnings.push(e.to_string()),
            }
        }
        listing
    }

    /// The entry with `id` in either file (the user's searched first).
    ///
    /// # Errors
    /// A file that cannot be read (see [`AutoMemory::read`]).
    pub fn find(&self, id: EntryId) -> Result<Option<EntryInfo>> {
        for scope in [Scope::User, Scope::Project] {
            let (doc, _) = self.read(scope)?;
            if let Some(e) = doc.get(id) {
                return Ok(Some(EntryInfo {
                    id: e.id,
                    scope,
                    category: e.category,
                    text: e.text,
                    path: self.path(scope),
                    line: e.line,
                }));
            }
        }
        Ok(None)
    }

    /// Removes the entry `id` from the file that holds it (under the lock, atomically); returns
    /// what was removed, `None` when no file has it. Its continuation lines go with it; the rest
    /// of the file is kept byte for byte.
    ///
    /// # Errors
    /// As [`AutoMemory::update`].
    pub fn forget(&self, id: EntryId) -> Result<Option<EntryInfo>> {
        let Some(found) = self.find(id)? else {
            return Ok(None);
        };
        self.update(found.scope, |file| {
            let removed = file.doc.remove(id);
            file.meta.entries.remove(&id.to_string());
            Ok(removed.map(|e| EntryInfo {
                id: e.id,
                scope: found.scope,
                category: e.category,
                text: e.text,
                path: file.path.clone(),
                line: e.line,
            }))
        })
    }
}

/// One `memories.md` held under its lock ([`AutoMemory::lock_file`]) while a checkpoint reads it whole
/// or puts a saved version in place (then records it with [`LockedFile::write_meta`]).
/// Dropping it releases the lock.
#[derive(Debug)]
pub struct LockedFile {
    real: PathBuf,
    meta_path: PathBuf,
    max_bytes: usize,
    _lock: crate::fsutil::FileLock,
}

impl LockedFile {
    /// The file's real path (symlinks resolved).
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// The file's bytes, `None` when it does not exist.
    ///
    /// # Errors
    /// As [`AutoMemory::read`] (too large, not UTF-8, binary, not a regular file).
    pub fn read(&self) -> Result<Option<String>> {
        read_strict(&self.real, self.max_bytes)
    }

    /// The dates file (`memories.meta.json`) as is, `None` when missing or unreadable.
    pub fn read_meta(&self) -> Option<Meta> {
        read_json(&self.meta_path).ok().flatten()
    }

    /// [`Meta::written`]: the hash of the file as mewmem last wrote it.
    pub fn last_written(&self) -> Option<String> {
        self.read_meta().and_then(|m| m.written)
    }

    /// Writes the dates file for a `memories.md` that now holds `text` (put in place by the
    /// caller, under this lock): `meta` (default: empty) with [`Meta::written`] set to the
    /// hash of `text`.
    ///
    /// # Errors
    /// Writing errors; the dates are a cache, so the caller may only warn.
    pub fn write_meta(&self, text: Option<&[u8]>, meta: Option<Meta>) -> Result<()> {
        let mut meta = meta.unwrap_or_default();
        meta.version = 1;
        meta.written = text.map(sha256_hex);
        write_json(&self.meta_path, &meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_with_nine_fractional_digits_whatever_the_value() {
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        for (date, written) in [
            ("2026-12-05T14:16:45Z", "2026-12-05T14:16:45.000000000Z"),
            ("2026-12-05T14:16:45.983Z", "2026-12-05T14:16:45.983000000Z"),
            (
                "2026-12-05T14:16:45.983418919Z",
                "2026-12-05T14:16:45.983418919Z",
            ),
        ] {
            let dates = EntryDates {
                added: at(date),
                confirmed: at(date),
            };
            let json = serde_json::to_value(&dates).unwrap();
            assert_eq!(json["added"], written);
            assert_eq!(json["confirmed"], written);
            // Read back unchanged (any RFC 3339 form is read).
            assert_eq!(serde_json::from_value::<EntryDates>(json).unwrap(), dates);
        }
    }
}
