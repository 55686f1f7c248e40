//! The one search index over every memory (SPEC "One memory, not three"): learnings are indexed
//! by the store itself; `memories.md` entries and memory notes come from [`IndexSource`]s (the
//! adapters of `mem-sources`), files that stay the truth. [`sync`] re-reads a file only when its
//! size or mtime changed (and re-parses it only when its SHA-256 changed), and drops what was
//! deleted.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use mem_core::sha256_hex;
use serde::Serialize;

use crate::archive::{Archive, ImportReport};
use crate::error::{Error, Result};
use crate::id::MemoryId;
use crate::model::{Document, FileState, SourceKind};
use crate::store::MemoryStore;

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
/// `mem-sources` plugs `memories.md` files (through `mem-auto`) and note folders (through
/// `mem-recall`) in here.
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

/// A file's modification time in nanoseconds since the epoch, as the index records it
/// ([`FileState::mtime_ns`]); 0 when the platform gives none.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
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
