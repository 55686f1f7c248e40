//! The one search index over every memory (SPEC "One memory, not three"): learnings are indexed
//! by the store itself; `memories.md` entries and memory notes come from [`IndexSource`]s, files
//! that stay the truth. [`sync`] re-reads a file only when its size or mtime changed (and
//! re-parses it only when its SHA-256 changed), and drops what was deleted.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use mem_core::sha256_hex;
use serde::Serialize;

use crate::archive::{Archive, ArchivedEntry, ArchivedNote, ImportReport};
use crate::error::{Error, Result};
use crate::id::MemoryId;
use crate::model::{Document, FileState, SourceKind};
use crate::store::MemoryStore;

/// The most note files read from one directory (newest first when there are more; seed §4).
pub const MAX_NOTES_PER_DIR: usize = 200;
/// The largest file indexed, in bytes (4 MiB); larger ones are passed over with a warning.
pub const MAX_INDEXED_FILE_BYTES: u64 = 4 << 20;

/// A file a source found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The file.
    pub path: PathBuf,
    /// The root that found it (see [`FileState::root`]).
    pub root: String,
}

/// Something that turns files into index documents and can remove an item from its file.
/// `mem-auto` (`memories.md`) and `mem-recall` (note dirs) plug in here.
pub trait IndexSource {
    /// Which kind of memory it yields.
    fn kind(&self) -> SourceKind;
    /// The roots it scans (files or dirs, as strings): the index drops files of these roots
    /// that [`IndexSource::files`] no longer lists.
    fn roots(&self) -> Vec<String>;
    /// The files it holds now. The second value holds warnings (unreadable entries...).
    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)>;
    /// The documents of one file, given its text and mtime (ms since the epoch).
    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document>;
    /// Removes the item with this id from its file (or the file itself, for a note). Returns the
    /// file changed or removed, or `None` when this source does not hold it.
    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>>;

    /// Adds this source's items to an archive (`mem memory archive`), as they are in their
    /// files now. Default: nothing.
    ///
    /// # Errors
    /// [`Error::Source`] naming a file that cannot be read.
    fn export(&self, _archive: &mut Archive) -> Result<()> {
        Ok(())
    }

    /// Writes the archive's items that belong to this source (its kind and scope) back into its
    /// files, counting what it did in `report`. Returns the ids of the items it took. Default:
    /// none.
    ///
    /// # Errors
    /// [`Error::Source`] naming a file that cannot be written; what was written before stays.
    fn import(&self, _archive: &Archive, _report: &mut ImportReport) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

/// What one [`sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Files found by the sources.
    pub files: usize,
    /// Files read because their size or mtime changed (or they were new).
    pub read: usize,
    /// Files re-indexed because their content changed.
    pub reindexed: usize,
    /// Files dropped from the index because they are gone.
    pub removed: usize,
    /// Problems met, each naming its file.
    pub warnings: Vec<String>,
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

/// Brings the index up to date with the sources' files.
///
/// # Errors
/// Store errors; a file that cannot be read is a warning, not an error (its old documents stay).
pub fn sync<S: MemoryStore + ?Sized>(
    store: &S,
    sources: &[Box<dyn IndexSource>],
) -> Result<SyncReport> {
    let mut report = SyncReport::default();
    for source in sources {
        let known: HashMap<String, FileState> = store
            .indexed_files(&source.roots())?
            .into_iter()
            .map(|s| (s.path.clone(), s))
            .collect();
        let (files, warnings) = source.files()?;
        report.warnings.extend(warnings);
        report.files += files.len();
        let mut seen = std::collections::HashSet::new();
        for file in files {
            let key = file.path.display().to_string();
            seen.insert(key.clone());
            let meta = match std::fs::metadata(&file.path) {
                Ok(m) => m,
                Err(e) => {
                    report.warnings.push(format!("{key}: {e}"));
                    continue;
                }
            };
            let (size, mtime) = (meta.len(), mtime_ns(&meta));
            let old = known.get(&key);
            if old.is_some_and(|o| o.size == size && o.mtime_ns == mtime && o.root == file.root) {
                continue;
            }
            if size > MAX_INDEXED_FILE_BYTES {
                report.warnings.push(format!(
                    "{key}: {size} bytes, larger than {MAX_INDEXED_FILE_BYTES}: not indexed"
                ));
                continue;
            }
            report.read += 1;
            let bytes = match mem_core::fsread::read(&file.path) {
                Ok(b) => b,
                Err(e) => {
                    report.warnings.push(format!("{key}: {e}"));
                    continue;
                }
            };
            let state = FileState {
                path: key.clone(),
                root: file.root.clone(),
                size: bytes.len() as u64,
                mtime_ns: mtime,
                hash: sha256_hex(&bytes),
            };
            if old.is_some_and(|o| o.hash == state.hash && o.root == state.root) {
                store.touch_file(&state)?;
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let docs = source.parse(&file, &text, mtime / 1_000_000);
            store.replace_file(&state, &docs)?;
            report.reindexed += 1;
        }
        for path in known.keys() {
            if !seen.contains(path) {
                store.remove_file(path)?;
                report.removed += 1;
            }
        }
    }
    Ok(report)
}

/// A directory of memory notes (`*.md` with frontmatter; `MEMORY.md` excluded): one document
/// per file, id `N:<scope>/<file name>`, title = frontmatter `name` (else the file stem), body =
/// `description` + the text.
#[derive(Debug, Clone)]
pub struct NoteDir {
    /// The directory.
    pub dir: PathBuf,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// The owning project, `None` for user-level dirs.
    pub project_key: Option<String>,
}

impl IndexSource for NoteDir {
    fn kind(&self) -> SourceKind {
        SourceKind::Note
    }

    fn roots(&self) -> Vec<String> {
        vec![self.dir.display().to_string()]
    }

    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()));
            }
            Err(e) => {
                return Ok((Vec::new(), vec![format!("{}: {e}", self.dir.display())]));
            }
        };
        let mut warnings = Vec::new();
        let mut found = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    warnings.push(format!("{}: {e}", self.dir.display()));
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".md") || name == "MEMORY.md" || name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => found.push((mtime_ns(&m), path)),
                Ok(_) => {}
                Err(e) => warnings.push(format!("{}: {e}", path.display())),
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        found.truncate(MAX_NOTES_PER_DIR);
        let root = self.dir.display().to_string();
        Ok((
            found
                .into_iter()
                .map(|(_, path)| SourceFile {
                    path,
                    root: root.clone(),
                })
                .collect(),
            warnings,
        ))
    }

    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document> {
        let name = file
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (parsed, _warning) = mem_recall::frontmatter::parse(text);
        let fm = parsed.frontmatter;
        let title = fm
            .name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| name.trim_end_matches(".md").to_owned());
        let body = match fm.description {
            Some(d) if !d.trim().is_empty() => format!("{d}\n{}", parsed.body),
            _ => parsed.body,
        };
        vec![Document {
            id: MemoryId::Note {
                scope: self.scope.clone(),
                file: name,
            }
            .to_string(),
            source: SourceKind::Note,
            scope: self.scope.clone(),
            project_key: self.project_key.clone(),
            title,
            body,
            path: Some(file.path.display().to_string()),
            updated_ms: mtime_ms,
        }]
    }

    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        let MemoryId::Note { scope, file } = id else {
            return Ok(None);
        };
        if *scope != self.scope {
            return Ok(None);
        }
        // mem-recall owns the note files: it removes regular files only, and syncs the dir.
        let Some(recall_scope) = mem_recall::Scope::parse(scope) else {
            return Ok(None);
        };
        let dirs = mem_recall::MemoryDirs {
            dirs: vec![mem_recall::MemoryDir {
                scope: recall_scope,
                path: self.dir.clone(),
            }],
        };
        match mem_recall::remove_note(&dirs, &mem_recall::NoteId::new(recall_scope, file.clone())) {
            Ok(path) => Ok(Some(path)),
            Err(mem_recall::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(Error::Source {
                path: self.dir.join(file),
                message: e.to_string(),
            }),
        }
    }

    fn export(&self, archive: &mut Archive) -> Result<()> {
        let (files, _warnings) = self.files()?;
        let mut notes = Vec::new();
        for f in files {
            let text = read_bounded(&f.path)?;
            let file = f
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            notes.push(ArchivedNote {
                id: MemoryId::Note {
                    scope: self.scope.clone(),
                    file: file.clone(),
                }
                .to_string(),
                scope: self.scope.clone(),
                file,
                text,
            });
        }
        notes.sort_by(|a, b| a.file.cmp(&b.file));
        archive.notes.extend(notes);
        Ok(())
    }

    fn import(&self, archive: &Archive, report: &mut ImportReport) -> Result<Vec<String>> {
        let mut taken = Vec::new();
        let mut _lock = None;
        for n in archive.notes.iter().filter(|n| n.scope == self.scope) {
            if _lock.is_none() {
                // The lock every note writer and a checkpoint restore take.
                _lock = Some(
                    mem_recall::lock_notes(&self.dir, mem_recall::NOTES_LOCK_TIMEOUT).map_err(
                        |e| Error::Source {
                            path: self.dir.clone(),
                            message: e.to_string(),
                        },
                    )?,
                );
            }
            check_note_file_name(&n.file)?;
            taken.push(n.id.clone());
            let path = self.dir.join(&n.file);
            let red = mem_core::secrets::redact(&n.text);
            match std::fs::symlink_metadata(&path) {
                Ok(_) => {
                    let existing = mem_core::fsread::read_to_string(&path).unwrap_or_default();
                    if existing == red.text {
                        report.notes_present += 1;
                    } else {
                        report.notes_kept_existing.push(n.id.clone());
                    }
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("read", &path, e)),
            }
            std::fs::create_dir_all(&self.dir).map_err(|e| Error::io("create", &self.dir, e))?;
            write_atomic(&path, red.text.as_bytes())?;
            report.withheld += red.withheld();
            report.notes_added += 1;
        }
        Ok(taken)
    }
}

/// A file's text, refused past [`MAX_INDEXED_FILE_BYTES`] (lossy UTF-8, as the index reads it).
fn read_bounded(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
    if meta.len() > MAX_INDEXED_FILE_BYTES {
        return Err(Error::Source {
            path: path.to_path_buf(),
            message: format!("{} bytes, larger than {MAX_INDEXED_FILE_BYTES}", meta.len()),
        });
    }
    let bytes = mem_core::fsread::read(path).map_err(|e| Error::io("read", path, e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A note file name an archive may create: `*.md`, one path component, not hidden, not
/// `MEMORY.md`, at most 255 bytes.
///
/// # Errors
/// [`Error::Invalid`] naming the file.
pub fn check_note_file_name(file: &str) -> Result<()> {
    let ok = file.ends_with(".md")
        && file.len() > 3
        && file.len() <= 255
        && !file.starts_with('.')
        && file != "MEMORY.md"
        && !file.contains(['/', '\\', '\0']);
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "archive note",
            reason: format!("{file:?} is not a note file name (NAME.md, no folders)"),
        })
    }
}

/// A `memories.md` file (seed 000 §3), read and written through `mem-auto` (which owns the
/// format): each entry is one document, id `M<hash>`, titled by its category heading. Forget goes
/// through `mem_auto::AutoMemory::forget` (locked, re-read, hand edits kept, atomic replace).
#[derive(Debug, Clone)]
pub struct MemoriesFile {
    /// The two files of a project and its user.
    pub auto: mem_auto::AutoMemory,
    /// Which of the two this source indexes.
    pub scope: mem_auto::Scope,
    /// The owning project for the project file, `None` for the user's.
    pub project_key: Option<String>,
}

impl MemoriesFile {
    /// The file indexed.
    pub fn path(&self) -> PathBuf {
        self.auto.path(self.scope)
    }
}

impl IndexSource for MemoriesFile {
    fn kind(&self) -> SourceKind {
        SourceKind::Entry
    }

    fn roots(&self) -> Vec<String> {
        vec![self.path().display().to_string()]
    }

    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)> {
        let path = self.path();
        Ok(match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => (
                vec![SourceFile {
                    root: path.display().to_string(),
                    path,
                }],
                Vec::new(),
            ),
            Ok(_) => (Vec::new(), Vec::new()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), Vec::new()),
            Err(e) => (Vec::new(), vec![format!("{}: {e}", path.display())]),
        })
    }

    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document> {
        let (doc, _warnings) = mem_auto::Document::parse(text);
        let mut seen = std::collections::HashSet::new();
        doc.entries()
            .into_iter()
            .filter(|e| !e.text.is_empty())
            .filter_map(|e| {
                let id = e.id.to_string();
                seen.insert(id.clone()).then(|| Document {
                    id,
                    source: SourceKind::Entry,
                    scope: mem_auto::scope_name(self.scope).to_owned(),
                    project_key: self.project_key.clone(),
                    title: e.category.heading().to_owned(),
                    body: e.text,
                    path: Some(file.path.display().to_string()),
                    updated_ms: mtime_ms,
                })
            })
            .collect()
    }

    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        let MemoryId::Entry(_) = id else {
            return Ok(None);
        };
        let entry: mem_auto::EntryId =
            id.to_string()
                .parse()
                .map_err(|e: mem_auto::IdError| Error::BadId {
                    id: id.to_string(),
                    reason: e.to_string(),
                })?;
        // Only this source's file: the entry is looked up in it before mem-auto removes it.
        let (doc, _) = self.auto.read(self.scope).map_err(|e| Error::Source {
            path: self.path(),
            message: e.to_string(),
        })?;
        if doc.get(entry).is_none() {
            return Ok(None);
        }
        match self.auto.forget(entry) {
            Ok(Some(info)) => Ok(Some(info.path)),
            Ok(None) => Ok(None),
            Err(e) => Err(Error::Source {
                path: self.path(),
                message: e.to_string(),
            }),
        }
    }

    fn export(&self, archive: &mut Archive) -> Result<()> {
        let (doc, _warnings) = self.auto.read(self.scope).map_err(|e| Error::Source {
            path: self.path(),
            message: e.to_string(),
        })?;
        let scope = mem_auto::scope_name(self.scope).to_owned();
        archive.entries.extend(
            doc.entries()
                .into_iter()
                .filter(|e| !e.text.is_empty())
                .map(|e| ArchivedEntry {
                    id: e.id.to_string(),
                    scope: scope.clone(),
                    category: e.category.heading().to_owned(),
                    text: e.text,
                }),
        );
        Ok(())
    }

    fn import(&self, archive: &Archive, report: &mut ImportReport) -> Result<Vec<String>> {
        let mut taken = Vec::new();
        let mut candidates = Vec::new();
        for e in &archive.entries {
            let category = entry_category(e)?;
            if mem_auto::scope_of(category) != self.scope {
                continue;
            }
            let red = mem_core::secrets::redact(&e.text);
            report.withheld += red.withheld();
            let text = red.text.split_whitespace().collect::<Vec<_>>().join(" ");
            taken.push(e.id.clone());
            if !text.is_empty() {
                candidates.push(mem_auto::Candidate { category, text });
            }
        }
        if candidates.is_empty() {
            return Ok(taken);
        }
        let options = self.auto.options().clone();
        let done = self
            .auto
            .update(self.scope, |file| {
                Ok(mem_auto::merge_offline(
                    file,
                    &candidates,
                    &[],
                    chrono::Utc::now(),
                    options.cap_tokens,
                    options.headings,
                ))
            })
            .map_err(|e| Error::Source {
                path: self.path(),
                message: e.to_string(),
            })?;
        report.entries_added += done.added.len();
        report.entries_present += candidates.len() - done.added.len();
        report.entries_evicted += done.evicted.len() + done.consolidated.len();
        Ok(taken)
    }
}

/// The category of an archived entry: its heading (the seed's or an English one).
///
/// # Errors
/// [`Error::Invalid`] for a heading that names no category.
pub fn entry_category(e: &ArchivedEntry) -> Result<mem_auto::MemoryCategory> {
    mem_auto::category_of_heading(&e.category).ok_or_else(|| Error::Invalid {
        what: "archive entry",
        reason: format!(
            "{}: {:?} is not a memories.md category heading",
            e.id, e.category
        ),
    })
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename,
/// fsync of the directory.
///
/// # Errors
/// [`Error::Io`] naming the file; the old file is untouched on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            let _ = std::fs::set_permissions(&tmp, meta.permissions());
        }
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("write", path, e)
    })
}
