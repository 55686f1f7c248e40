//! The scan cache: what a scan derives from each note (frontmatter fields, body, warnings and
//! the offline selector's tokens, [`mem_llm::offline::CandidateTerms`]) kept across turns and
//! processes, so that a turn over unchanged notes lists and `stat`s the folders and reads one
//! cache file per folder instead of opening, parsing and tokenising every note.
//! (`mem hook claude UserPromptSubmit` is a new process every turn.)
//!
//! - Key: a note is used from the cache only when its path, size, modification time and (on
//!   Unix) change time, inode and device are those recorded, and it was last modified at least
//!   [`RACY_WINDOW`] before it was read for the cache (a change within a file system's
//!   timestamp granularity could otherwise keep all of them: the "racy clean" case of Git's
//!   index). Anything else is read again. Notes over [`MAX_CACHED_NOTE_BYTES`] are not cached.
//! - Where: one file per memory folder. The project's and the user's folders
//!   (`<X>/.mewcode/memory`) keep their caches in `<X>/.mewcode/cache/recall-notes.json`, so
//!   the notes of one owner are never copied under another's folder; an extra folder (e.g. a
//!   Claude Code memory folder in the configuration) in the user's
//!   `~/.mewcode/cache/recall-<hash of its path>.json`. Without such a `.mewcode` folder (no
//!   user folder configured, as with `mem recall --dir`), a folder is cached in the process
//!   only: nothing is written near a folder mewmem was only asked to read. The `cache` folder
//!   holds a `.gitignore` of `*`, so a project's cache is never committed.
//! - Safety: written atomically (a temporary file in the same folder, then renamed); a cache
//!   file that is missing, damaged, of another format or analyser version, or for another
//!   folder is ignored and rebuilt. Writing it is best effort: a failure is logged, never a
//!   warning of the scan. Reading notes for it never writes a note.
//! - In the process, each folder's cache stays in memory after the first scan (at most
//!   [`MEMORY_DIRS`] folders).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mem_llm::offline::{ANALYZER_VERSION, CandidateTerms};
use serde::{Deserialize, Serialize};

use crate::scan::{INDEX_FILE, Note, NoteId, Scope, Warning};

/// The cache file's format version.
pub const CACHE_VERSION: u32 = 1;

/// The cache file of a `<X>/.mewcode/memory` folder, in `<X>/.mewcode/cache/`.
pub const CACHE_FILE: &str = "recall-notes.json";

/// Notes larger than this (16 KiB) are read on every scan, not cached.
pub const MAX_CACHED_NOTE_BYTES: u64 = 16 * 1024;

/// A note modified less than this (2 s, FAT's timestamp granularity) before it was read is not
/// cached: a second change within the granularity could leave its size and times as they were.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// The most folders whose caches a process keeps in memory (the oldest loaded goes first).
pub const MEMORY_DIRS: usize = 64;

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileKey {
    size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    mtime_ns: i64,
    /// Status-change time (ns), inode and device: 0 where the platform has none.
    ctime_ns: i64,
    ino: u64,
    dev: u64,
}

fn ns_since_epoch(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

impl FileKey {
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileKey {
        let mtime_ns = meta.modified().map_or(0, ns_since_epoch);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileKey {
                size: meta.len(),
                mtime_ns,
                ctime_ns: meta
                    .ctime()
                    .saturating_mul(1_000_000_000)
                    .saturating_add(meta.ctime_nsec()),
                ino: meta.ino(),
                dev: meta.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            FileKey {
                size: meta.len(),
                mtime_ns,
                ctime_ns: 0,
                ino: 0,
                dev: 0,
            }
        }
    }
}

/// One note as a scan derived it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CachedNote {
    key: FileKey,
    name: String,
    description: String,
    kind: Option<String>,
    verified: Option<String>,
    body: String,
    truncated: bool,
    /// The scan's warnings about this file (messages; the path is the note's).
    warnings: Vec<String>,
    terms: CandidateTerms,
}

/// The cache of one folder.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct DirCache {
    version: u32,
    analyzer: u32,
    /// The folder (absolute) the notes are in.
    dir: PathBuf,
    /// By file name.
    notes: BTreeMap<String, CachedNote>,
}

impl DirCache {
    fn empty(dir: &Path) -> DirCache {
        DirCache {
            version: CACHE_VERSION,
            analyzer: ANALYZER_VERSION,
            dir: dir.to_owned(),
            notes: BTreeMap::new(),
        }
    }
}

/// The caches in memory, by folder, in load order.
type Loaded = Vec<(PathBuf, Arc<DirCache>)>;

fn loaded() -> &'static Mutex<Loaded> {
    static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(Vec::new()))
}

/// Where the cache of `dir` (of `scope`) is kept on disk (see the module doc); `None`: in
/// memory only. `user_dir`: the user scope's memory folder (`~/.mewcode/memory`), when
/// configured. Only the project's and the user's own folders are cached beside themselves; an
/// extra folder (named in the configuration or with `--dir`) never gets a file written near it.
pub(crate) fn cache_file(dir: &Path, scope: Scope, user_dir: Option<&Path>) -> Option<PathBuf> {
    let mewcode_of = |d: &Path| -> Option<PathBuf> {
        (d.file_name()? == "memory" && d.parent()?.file_name()? == ".mewcode")
            .then(|| d.parent().map(Path::to_path_buf))
            .flatten()
    };
    if matches!(scope, Scope::Project | Scope::User) {
        return mewcode_of(dir).map(|m| m.join("cache").join(CACHE_FILE));
    }
    let user = mewcode_of(user_dir?)?;
    let hash = mem_core::sha256_hex(dir.to_string_lossy().as_bytes());
    Some(
        user.join("cache")
            .join(format!("recall-{}.json", &hash[..16])),
    )
}

/// One folder's cache during a scan: looked up, then refreshed and saved.
pub(crate) struct FolderCache {
    dir: PathBuf,
    file: Option<PathBuf>,
    old: Arc<DirCache>,
    new: DirCache,
    changed: bool,
    started: SystemTime,
}

impl FolderCache {
    /// The cache of `dir` (absolute), from memory, else from its file, else empty.
    pub(crate) fn open(dir: &Path, file: Option<PathBuf>, started: SystemTime) -> FolderCache {
        let from_memory = {
            let loaded = loaded().lock().unwrap_or_else(|e| e.into_inner());
            loaded
                .iter()
                .find(|(d, _)| d == dir)
                .map(|(_, c)| Arc::clone(c))
        };
        let (old, changed) = match from_memory {
            Some(c) => (c, false),
            None => match file.as_deref().and_then(|f| read_file(f, dir)) {
                Some(c) => (Arc::new(c), false),
                // Nothing usable on disk: written after this scan even if no note is cached.
                None => (Arc::new(DirCache::empty(dir)), file.is_some()),
            },
        };
        FolderCache {
            dir: dir.to_owned(),
            file,
            old,
            new: DirCache::empty(dir),
            changed,
            started,
        }
    }

    /// The note `file_name` of `scope` at `path` with the listing's `meta`, when cached for
    /// exactly this version of the file: the note, its warnings. Kept for the next cache.
    pub(crate) fn get(
        &mut self,
        scope: Scope,
        path: &Path,
        file_name: &str,
        meta: &std::fs::Metadata,
    ) -> Option<(Note, Vec<Warning>)> {
        let cached = self.old.notes.get(file_name)?;
        if cached.key != FileKey::of(meta) {
            return None;
        }
        let note = Note {
            id: NoteId::new(scope, file_name),
            scope,
            path: path.to_owned(),
            name: cached.name.clone(),
            description: cached.description.clone(),
            kind: cached.kind.clone(),
            mtime: meta.modified().unwrap_or(UNIX_EPOCH),
            size: meta.len(),
            verified: cached.verified.clone(),
            body: cached.body.clone(),
            truncated: cached.truncated,
        };
        let warnings = cached
            .warnings
            .iter()
            .map(|m| Warning {
                path: path.to_owned(),
                message: m.clone(),
            })
            .collect();
        mem_llm::offline::remember_terms(&note.candidate(), Arc::new(cached.terms.clone()));
        self.new.notes.insert(file_name.to_owned(), cached.clone());
        Some((note, warnings))
    }

    /// Records `note` as just read (with `meta` from the listing), when it may be cached.
    pub(crate) fn put(&mut self, note: &Note, warnings: &[Warning], meta: &std::fs::Metadata) {
        let key = FileKey::of(meta);
        let settled = meta
            .modified()
            .ok()
            .and_then(|m| m.checked_add(RACY_WINDOW))
            .is_some_and(|m| m <= self.started);
        // The file read must be the version listed (not changed in between).
        let same = note.size == key.size && ns_since_epoch(note.mtime) == key.mtime_ns;
        if !settled || !same || key.size > MAX_CACHED_NOTE_BYTES {
            return;
        }
        let file_name = note.id.file_name.clone();
        let terms = mem_llm::offline::terms_of(&note.candidate());
        self.new.notes.insert(
            file_name,
            CachedNote {
                key,
                name: note.name.clone(),
                description: note.description.clone(),
                kind: note.kind.clone(),
                verified: note.verified.clone(),
                body: note.body.clone(),
                truncated: note.truncated,
                warnings: warnings.iter().map(|w| w.message.clone()).collect(),
                terms: (*terms).clone(),
            },
        );
        self.changed = true;
    }

    /// Keeps the refreshed cache in memory and writes it when it differs from what was read.
    pub(crate) fn finish(self) {
        let changed = self.changed
            || self.new.notes.len() != self.old.notes.len()
            || self
                .new
                .notes
                .iter()
                .zip(&self.old.notes)
                .any(|((a, x), (b, y))| a != b || x.key != y.key);
        let new = Arc::new(self.new);
        {
            let mut loaded = loaded().lock().unwrap_or_else(|e| e.into_inner());
            loaded.retain(|(d, _)| *d != self.dir);
            if loaded.len() >= MEMORY_DIRS {
                loaded.remove(0);
            }
            loaded.push((self.dir.clone(), Arc::clone(&new)));
        }
        if changed
            && let Some(file) = &self.file
            && let Err(e) = write_file(file, &new)
        {
            tracing::debug!("recall cache {} not written: {e}", file.display());
        }
    }
}

/// The cache in `file` when it is one for `dir` of this format; `None` otherwise (logged).
fn read_file(file: &Path, dir: &Path) -> Option<DirCache> {
    let bytes = match mem_core::fsread::read(file) {
        Ok(b) => b,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!("recall cache {} not read: {e}", file.display());
            }
            return None;
        }
    };
    match serde_json::from_slice::<DirCache>(&bytes) {
        Ok(c) if c.version == CACHE_VERSION && c.analyzer == ANALYZER_VERSION && c.dir == dir => {
            // Names that could not be notes are not trusted either.
            let ok = c
                .notes
                .keys()
                .all(|n| crate::scan::check_file_name(n).is_ok() && n != INDEX_FILE);
            ok.then_some(c)
        }
        Ok(_) => None,
        Err(e) => {
            tracing::debug!("recall cache {} is damaged ({e}); rebuilt", file.display());
            None
        }
    }
}

/// Writes `cache` to `file` atomically (temp file in the same folder, then rename; not synced:
/// a cache lost in a crash is rebuilt). The `cache` folder is created when its parent
/// (`.mewcode`) exists.
fn write_file(file: &Path, cache: &DirCache) -> std::io::Result<()> {
    let folder = file.parent().unwrap_or(Path::new("."));
    if !folder.is_dir() {
        let mewcode_exists = folder.parent().is_some_and(Path::is_dir);
        if !mewcode_exists {
            return Ok(());
        }
        std::fs::create_dir_all(folder)?;
        // The folder ignores itself in a Git work tree (as `.pytest_cache` does): a cache is
        // never committed with a project.
        let _ = std::fs::write(folder.join(".gitignore"), "# mewmem's cache\n*\n");
    }
    let text = serde_json::to_vec(cache).map_err(std::io::Error::other)?;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = folder.join(format!(
        ".{}.{}.{}.tmp",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(&text)?;
        drop(f);
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Forgets every folder cache kept in this process's memory (the files stay). For tests and
/// benchmarks that measure a new process's scan.
pub fn clear_memory() {
    loaded().lock().unwrap_or_else(|e| e.into_inner()).clear();
}
