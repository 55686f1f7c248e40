//! The one search index over every memory (SPEC "One memory, not three"): learnings are indexed
//! by the store itself; `memories.md` entries and memory notes come from [`IndexSource`]s, files
//! that stay the truth. [`sync`] re-reads a file only when its size or mtime changed (and
//! re-parses it only when its SHA-256 changed), and drops what was deleted.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::id::{MemoryId, entry_id};
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

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
            let bytes = match std::fs::read(&file.path) {
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
        let (parsed, _warning) = mem_llm::memory_files::parse(text);
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
        let path = self.dir.join(file);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(Some(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("remove", path, e)),
        }
    }
}

/// A `memories.md` file (seed 000 §3): each top-level `- ` bullet is one entry, id
/// `M<hash>` of its normalised text, titled by the `###` heading above it.
#[derive(Debug, Clone)]
pub struct MemoriesFile {
    /// The file.
    pub path: PathBuf,
    /// `project` or `user`.
    pub scope: String,
    /// The owning project, `None` for the user-level file.
    pub project_key: Option<String>,
}

/// The entries of a `memories.md` text: (line index, heading, entry text).
fn entries(text: &str) -> Vec<(usize, String, String)> {
    let mut heading = String::new();
    let mut out = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_end();
        if trimmed.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('#') {
            heading = h.trim_start_matches('#').trim().to_owned();
        } else if let Some(e) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        {
            let e = e.trim();
            if !e.is_empty() {
                out.push((i, heading.clone(), e.to_owned()));
            }
        }
    }
    out
}

impl IndexSource for MemoriesFile {
    fn kind(&self) -> SourceKind {
        SourceKind::Entry
    }

    fn roots(&self) -> Vec<String> {
        vec![self.path.display().to_string()]
    }

    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)> {
        Ok(match std::fs::metadata(&self.path) {
            Ok(m) if m.is_file() => (
                vec![SourceFile {
                    path: self.path.clone(),
                    root: self.path.display().to_string(),
                }],
                Vec::new(),
            ),
            Ok(_) => (Vec::new(), Vec::new()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), Vec::new()),
            Err(e) => (Vec::new(), vec![format!("{}: {e}", self.path.display())]),
        })
    }

    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document> {
        let mut seen = std::collections::HashSet::new();
        entries(text)
            .into_iter()
            .filter_map(|(_, heading, entry)| {
                let id = entry_id(&entry).to_string();
                seen.insert(id.clone()).then(|| Document {
                    id,
                    source: SourceKind::Entry,
                    scope: self.scope.clone(),
                    project_key: self.project_key.clone(),
                    title: if heading.is_empty() {
                        "memories.md".to_owned()
                    } else {
                        heading
                    },
                    body: entry,
                    path: Some(file.path.display().to_string()),
                    updated_ms: mtime_ms,
                })
            })
            .collect()
    }

    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        if !matches!(id, MemoryId::Entry(_)) {
            return Ok(None);
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let lock_path = dir.join(".memories.md.lock");
        let lock = match std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("lock", &lock_path, e)),
        };
        lock.lock().map_err(|e| Error::io("lock", &lock_path, e))?;
        let result = self.remove_locked(id);
        let _ = lock.unlock();
        result
    }
}

impl MemoriesFile {
    fn remove_locked(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &self.path, e)),
        };
        let drop: std::collections::HashSet<usize> = entries(&text)
            .into_iter()
            .filter(|(_, _, e)| entry_id(e) == *id)
            .map(|(i, _, _)| i)
            .collect();
        if drop.is_empty() {
            return Ok(None);
        }
        let mut out = String::with_capacity(text.len());
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if !drop.contains(&i) {
                out.push_str(line);
            }
        }
        write_atomic(&self.path, out.as_bytes())?;
        Ok(Some(self.path.clone()))
    }
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
