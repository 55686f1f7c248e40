//! Checkpoints of a project's whole memory state, and their restore (seed 003
//! "Checkpoint/Rollback — 状态保存与恢复"; format: `docs/formats/checkpoint.md`).
//!
//! A checkpoint lives in `<project>/.mewcode/checkpoints/<name>/`: a `manifest.json` (format
//! [`FORMAT_VERSION`]) with each session's length (bytes, and the fingerprint of the bytes
//! before it, from the session's meta: creating a checkpoint never reads the records, so its
//! cost does not grow with the sessions), copies of `memories.md` (and its dates) and of the
//! notes, and a consistent backup of the tier store's rows of this project (rusqlite's online
//! backup API, cut down to the project's rows). With `user`, the user level too: `~/.mewcode`'s
//! `memories.md` and notes, user-wide learnings and preferences.
//!
//! Restore never deletes conversation history: each session that grew since gets a `rollback`
//! record (`docs/formats/session.md`) so its replay is the one of the checkpoint again. Files and
//! rows are put back atomically; a pre-restore checkpoint is taken first so a restore can itself
//! be undone; hand edits since the checkpoint are conflicts, refused unless forced.

mod journal;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use mem_auto::{
    AutoMemory, AutoOptions, LockedFile, Meta as AutoMeta, Scope as AutoScope, scope_name,
};
use mem_core::sha256_hex;
use mem_session::SessionStore;
use mem_tiers::snapshot as store;
use serde::{Deserialize, Serialize};

pub use journal::{JOURNAL_FILE, JOURNAL_TMP_FILE, STEP_DELAY_ENV};
pub use mem_tiers::snapshot::{RowScope, StoreDiff};

/// Folder of the checkpoints inside `<project>/.mewcode/`.
pub const CHECKPOINTS_DIR: &str = "checkpoints";
/// The manifest's file name inside a checkpoint folder.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest format this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// The copy of the tier store's rows inside a checkpoint folder.
pub const STORE_FILE: &str = "store.sqlite";
/// The copy of a team store's rows (PostgreSQL) inside a checkpoint folder: JSON
/// ([`mem_tiers::ScopeRows`]).
pub const PG_STORE_FILE: &str = "store.json";
/// Longest checkpoint name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// How long a checkpoint operation waits for another one (create/restore/rm) to finish.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of checkpoints. Each names the checkpoint or file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A name with characters a folder name must not have.
    #[error(
        "invalid checkpoint name {name:?}: use 1 to 64 letters, digits, `.`, `_` or `-`, not \
         starting with `.` or `-` (no `/`, `\\`, `..` or control characters)"
    )]
    BadName {
        /// The name as given.
        name: String,
    },
    /// No checkpoint of that name.
    #[error("no checkpoint named {name:?} in {dir}")]
    NotFound {
        /// The name.
        name: String,
        /// The checkpoints folder.
        dir: PathBuf,
    },
    /// A checkpoint of that name exists already.
    #[error(
        "a checkpoint named {name:?} exists already in {dir}: choose another name or `mem checkpoint rm` it"
    )]
    Exists {
        /// The name.
        name: String,
        /// The checkpoints folder.
        dir: PathBuf,
    },
    /// A checkpoint folder that cannot be used: a missing or damaged manifest or copy.
    #[error(
        "checkpoint {name:?} is damaged: {path}: {reason}; it cannot be used (nothing was changed)"
    )]
    Damaged {
        /// The checkpoint.
        name: String,
        /// The file at fault.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint written by a newer mewmem.
    #[error(
        "checkpoint {name:?} has format version {found}; this mewmem reads versions up to \
         {known}: upgrade mewmem (nothing was changed)"
    )]
    TooNew {
        /// The checkpoint.
        name: String,
        /// Its format version.
        found: u32,
        /// The newest this build reads.
        known: u32,
    },
    /// A checkpoint whose rows belong to another project (a checkpoint folder committed with
    /// another project, or a tampered manifest): restoring it would delete this project's rows
    /// and write another's.
    #[error(
        "checkpoint {name:?} is not this project's: {path} names project key {found:?}, this \
         project's key is {expected:?}; it cannot be restored here (nothing was changed)"
    )]
    ForeignProject {
        /// The checkpoint.
        name: String,
        /// Its manifest file.
        path: PathBuf,
        /// The project key the manifest names (`store.scope.project_key`).
        found: String,
        /// This project's key.
        expected: String,
    },
    /// A file a restore would write or delete lies outside the project (a symlinked
    /// `.mewcode/memory`, or `~/.mewcode` for the user level, or the configured note folder).
    #[error(
        "restore refused: {path} resolves to {real}, outside the project (a symlink leads out of \
         it); nothing was changed"
    )]
    Outside {
        /// The path as the restore would use it.
        path: PathBuf,
        /// Its folder with symlinks resolved.
        real: PathBuf,
    },
    /// Things changed by hand since the checkpoint: a restore would lose them.
    #[error(
        "restoring checkpoint {name:?} would overwrite changes made by hand since it was taken:\n{}\nnothing was restored; look at them, then pass --force to restore anyway (a checkpoint of the current state is taken first, so the hand edits stay recoverable)",
        .conflicts.iter().map(|c| format!("  {}: {}", c.item, c.reason)).collect::<Vec<_>>().join("\n")
    )]
    Conflicts {
        /// The checkpoint.
        name: String,
        /// What conflicts.
        conflicts: Vec<Conflict>,
    },
    /// Another checkpoint operation held the lock too long.
    #[error(
        "another `mem checkpoint` (create, restore or rm) is running on this project (lock \
         {path} held for {waited_ms} ms); nothing was changed: try again"
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// How long this one waited.
        waited_ms: u64,
    },
    /// A file operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A restore failed part-way and was undone.
    #[error("restoring checkpoint {name:?} failed: {cause}; {undo}")]
    Failed {
        /// The checkpoint.
        name: String,
        /// What failed.
        cause: String,
        /// What was done about it.
        undo: String,
    },
    /// From the sessions.
    #[error(transparent)]
    Session(#[from] mem_session::Error),
    /// From `memories.md`.
    #[error(transparent)]
    Auto(#[from] mem_auto::Error),
    /// From the tier store.
    #[error(transparent)]
    Store(#[from] mem_tiers::Error),
    /// From the notes (their folder's lock).
    #[error(transparent)]
    Notes(#[from] mem_recall::Error),
}

/// `Result` of checkpoints.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

pub(crate) fn unique_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Checks a checkpoint name: 1 to [`MAX_NAME_CHARS`] of `[A-Za-z0-9._-]`, not starting with `.`
/// or `-`, so it is one safe folder name everywhere.
///
/// # Errors
/// [`Error::BadName`].
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::BadName {
            name: name.to_owned(),
        })
    }
}

/// One session's length at the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMark {
    /// The session id.
    pub id: String,
    /// Length of the `.jsonl` in bytes.
    pub bytes: u64,
    /// Hex of the last (up to) 32 bytes before `bytes` (the meta's `jsonl_tail`).
    pub tail: String,
    /// Message records in the file then (the meta's `message_count`).
    pub messages: usize,
    /// Tokens of the replay then (the meta's `token_count`).
    pub token_count: usize,
}

/// A file copied into the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMark {
    /// `memories`, `memories-meta` or `note`.
    pub kind: String,
    /// `project` or `user`.
    pub scope: String,
    /// The file name (`memories.md`, a note's file name).
    pub name: String,
    /// The copy, relative to the checkpoint folder.
    pub copy: String,
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// Length in bytes.
    pub bytes: u64,
}

impl FileMark {
    /// How a person names it: `project memories.md`, `N:user/testing.md`.
    pub fn label(&self) -> String {
        match self.kind.as_str() {
            "note" => format!("N:{}/{}", self.scope, self.name),
            _ => format!("{} {}", self.scope, self.name),
        }
    }
}

/// The tier store part of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreMark {
    /// `sqlite`.
    pub backend: String,
    /// The copy ([`STORE_FILE`]), `None` when there was no database yet (no rows then).
    pub copy: Option<String>,
    /// SHA-256 of the copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The copy's schema version (`PRAGMA user_version`).
    pub schema_version: i64,
    /// Learnings in the copy.
    pub learnings: usize,
    /// Which rows.
    pub scope: RowScope,
}

/// `manifest.json` of a checkpoint (see `docs/formats/checkpoint.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version ([`FORMAT_VERSION`]).
    pub format: u32,
    /// The checkpoint's name (its folder).
    pub name: String,
    /// When it was taken (RFC 3339, UTC).
    pub created: String,
    /// `manual`, or what took it automatically (`auto: mem extract`, `pre-restore of X`...).
    pub reason: String,
    /// Taken automatically (pruned to the last N).
    pub auto: bool,
    /// Includes the user level.
    pub user: bool,
    /// The project root then.
    pub project: String,
    /// Sessions by id.
    pub sessions: Vec<SessionMark>,
    /// Copied files.
    pub files: Vec<FileMark>,
    /// The tier store rows; `None` when the store is not a local SQLite file.
    pub store: Option<StoreMark>,
    /// What was left out, said once (e.g. a team store on PostgreSQL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The extra note folders copied (`[recall] dirs`), by scope (`extra<K>` → the folder's
    /// path then). A restore puts a scope back only into the same folder.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub note_dirs: BTreeMap<String, String>,
}

/// How many memory files a checkpoint holds, the one count `mem checkpoint create`, `list`
/// and `show` print: each `memories.md` copied (project, user) and each note. A
/// `memories.meta.json` is a sidecar of its `memories.md`, not a file of its own here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FileCounts {
    /// `memories.md` files copied.
    pub memories: usize,
    /// Note files copied.
    pub notes: usize,
}

impl FileCounts {
    /// All files counted: `memories + notes`.
    pub fn total(&self) -> usize {
        self.memories + self.notes
    }
}

impl std::fmt::Display for FileCounts {
    /// `3 files (1 memories.md, 2 notes)`; `1 file (0 memories.md, 1 note)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.total();
        write!(
            f,
            "{n} file{} ({} memories.md, {} note{})",
            if n == 1 { "" } else { "s" },
            self.memories,
            self.notes,
            if self.notes == 1 { "" } else { "s" }
        )
    }
}

impl Manifest {
    /// The memory files held ([`FileCounts`]).
    pub fn file_counts(&self) -> FileCounts {
        let count = |kind: &str| self.files.iter().filter(|f| f.kind == kind).count();
        FileCounts {
            memories: count("memories"),
            notes: count("note"),
        }
    }
}

/// A line of `mem checkpoint list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The name.
    pub name: String,
    /// When taken.
    pub created: String,
    /// Why.
    pub reason: String,
    /// Automatic.
    pub auto: bool,
    /// With the user level.
    pub user: bool,
    /// Sessions recorded.
    pub sessions: usize,
    /// Files copied: [`FileCounts::total`] of [`Manifest::file_counts`].
    pub files: usize,
    /// Learnings in the store copy.
    pub learnings: usize,
    /// Size of the folder on disk, bytes.
    pub bytes: u64,
}

/// Something a restore would overwrite that was changed by hand since the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// What (`project memories.md`, `N:project/x.md`, `session <id>`).
    pub item: String,
    /// Why.
    pub reason: String,
}

/// One change a restore makes (or would make, with `dry_run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `replace`, `create`, `remove`, `rollback` (a session), `restore` (the learnings).
    pub action: String,
    /// What (`project memories.md`, `N:project/x.md`, `session <id>`, `learnings`).
    pub item: String,
    /// Details for a person.
    pub detail: String,
}

/// What [`Checkpoints::restore`] did or would do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RestoreReport {
    /// The checkpoint restored.
    pub name: String,
    /// Nothing was changed (`dry_run`).
    pub dry_run: bool,
    /// The changes.
    pub changes: Vec<Change>,
    /// Hand edits overwritten (with `force`) or that refused the restore.
    pub conflicts: Vec<Conflict>,
    /// The checkpoint of the state before the restore (undo with it).
    pub pre_restore: Option<String>,
    /// Things that could not be restored (a session deleted since...).
    pub warnings: Vec<String>,
    /// The learnings part, in detail.
    pub store: Option<StoreDiff>,
}

/// Where a project's memory lives, as the caller configured it.
#[derive(Debug, Clone)]
pub struct CheckpointConfig {
    /// The project root.
    pub project_root: PathBuf,
    /// The user's home (`~/.mewcode` is under it).
    pub home: PathBuf,
    /// How `memories.md` is read and written.
    pub auto: AutoOptions,
    /// The local tier database (`<storage_dir>/memory.db`); `None` when the store is a team
    /// store on PostgreSQL (not checkpointed: see `docs/formats/checkpoint.md`).
    pub database: Option<PathBuf>,
    /// The tier store's busy timeout.
    pub busy_timeout: Duration,
    /// How long to wait for another checkpoint operation ([`DEFAULT_LOCK_TIMEOUT`]).
    pub lock_timeout: Duration,
    /// The extra note folders (`[recall] dirs`; scope `extra<K>`, K = index here): copied and
    /// put back like the project's notes.
    pub extra_note_dirs: Vec<PathBuf>,
    /// The team store, when the tier store is on PostgreSQL (`database` is `None` then): this
    /// author's rows of the checkpoint's scope are kept as [`PG_STORE_FILE`].
    pub team_store: Option<std::sync::Arc<mem_tiers::PgStore>>,
}

/// What to take.
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    /// The name; `None`: `cp-<N>` (`auto-<N>` when automatic), N counting up.
    pub name: Option<String>,
    /// Include the user level.
    pub user: bool,
    /// Why (`manual` when empty).
    pub reason: String,
    /// Automatic (pruned by [`Checkpoints::prune_auto`]).
    pub auto: bool,
}

/// The checkpoints of one project.
#[derive(Debug)]
pub struct Checkpoints {
    config: CheckpointConfig,
    dir: PathBuf,
    sessions: SessionStore,
    auto: AutoMemory,
    project_key: String,
    /// Test hook: the rename into place that fails (0-based), to test the undo of step 4.
    fail_rename_at: Option<usize>,
    /// Test hook ([`STEP_DELAY_ENV`]): a sleep at each step of a restore.
    step_delay: Option<Duration>,
}

/// The checkpoint-wide lock (`<checkpoints>/.lock`), released when dropped.
#[derive(Debug)]
struct DirLock {
    _file: File,
}

fn now() -> DateTime<Utc> {
    Utc::now()
}

fn read_file(path: &Path) -> Result<Option<Vec<u8>>> {
    match mem_core::fsread::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path, e)),
    }
}

/// Writes `bytes` to a new file at `path` and syncs it.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io("create", path, e))?;
    f.write_all(bytes).map_err(|e| io("write", path, e))?;
    f.sync_all().map_err(|e| io("sync", path, e))
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Regular `*.md` files directly in `dir` (symlinks, folders and hidden files left out), by
/// name. A missing folder has none.
fn note_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io("list", dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io("list", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !name.ends_with(".md") {
            continue;
        }
        let ft = entry
            .file_type()
            .map_err(|e| io("stat", &entry.path(), e))?;
        if ft.is_file() {
            out.insert(name, entry.path());
        }
    }
    Ok(out)
}

fn dir_size(dir: &Path) -> u64 {
    walk_size(dir, 0)
}

fn walk_size(dir: &Path, depth: usize) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() && depth < 4 => n += walk_size(&e.path(), depth + 1),
            Ok(t) if t.is_file() => n += e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => {}
        }
    }
    n
}

/// A file a restore writes: content staged in a temporary file beside its target first.
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
}

impl Checkpoints {
    /// The checkpoints of the project at `config.project_root`.
    ///
    /// # Errors
    /// The project root cannot be resolved.
    pub fn new(config: CheckpointConfig) -> Result<Checkpoints> {
        let identity = mem_tiers::project::identify(&config.project_root)?;
        let dir = config.project_root.join(".mewcode").join(CHECKPOINTS_DIR);
        Ok(Checkpoints {
            sessions: SessionStore::for_project(&config.project_root),
            auto: AutoMemory::new(
                config.project_root.clone(),
                config.home.clone(),
                config.auto.clone(),
            ),
            project_key: identity.key,
            dir,
            config,
            fail_rename_at: None,
            step_delay: journal::step_delay(),
        })
    }

    /// The test hook's sleep between two steps of a restore ([`STEP_DELAY_ENV`]; none by
    /// default).
    fn pause(&self) {
        if let Some(d) = self.step_delay {
            std::thread::sleep(d);
        }
    }

    /// Test hook: makes the `n`-th (0-based) rename of a restore's last step fail, as a full or
    /// read-only disk would, so the undo of the files already in place can be tested.
    #[doc(hidden)]
    pub fn fail_rename_at(mut self, n: usize) -> Self {
        self.fail_rename_at = Some(n);
        self
    }

    /// The note folders of a checkpoint with or without the user level: `project`, `user`,
    /// then each extra folder `extra<K>` (always: a Claude Code memory folder belongs to the
    /// project's memory as much as its own notes).
    fn note_scopes(&self, user: bool) -> Vec<(String, PathBuf)> {
        let mut out = vec![("project".to_owned(), self.notes_dir(AutoScope::Project))];
        if user {
            out.push(("user".to_owned(), self.notes_dir(AutoScope::User)));
        }
        for (k, dir) in self.config.extra_note_dirs.iter().enumerate() {
            out.push((format!("extra{k}"), dir.clone()));
        }
        out
    }

    /// `<project>/.mewcode/checkpoints`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The project key rows are scoped by.
    pub fn project_key(&self) -> &str {
        &self.project_key
    }

    fn notes_dir(&self, scope: AutoScope) -> PathBuf {
        self.auto.dir(scope).join("memory")
    }

    fn lock(&self) -> Result<DirLock> {
        fs::create_dir_all(&self.dir).map_err(|e| io("create", &self.dir, e))?;
        let path = self.dir.join(".lock");
        match mem_core::lockfile::lock_exclusive(&path, self.config.lock_timeout) {
            Ok(file) => {
                let lock = DirLock { _file: file };
                // A restore killed earlier is finished first; what killed ones left goes.
                self.recover_locked()?;
                self.clean_leftovers();
                Ok(lock)
            }
            Err(failure) => Err(failure.into_error(
                |waited_ms| Error::Locked {
                    path: path.clone(),
                    waited_ms,
                },
                |what, source| io(what, &path, source),
            )),
        }
    }

    /// The folder of checkpoint `name` (validated).
    ///
    /// # Errors
    /// [`Error::BadName`].
    pub fn path_of(&self, name: &str) -> Result<PathBuf> {
        validate_name(name)?;
        Ok(self.dir.join(name))
    }

    /// Takes a checkpoint. The copies are written into a hidden temporary folder that is renamed
    /// to the checkpoint's name at the end: a checkpoint is whole or absent.
    ///
    /// Cost: the sessions' metas (not their records), the memories files, the notes, and a
    /// backup of the tier database (proportional to the database, not to the sessions).
    ///
    /// # Errors
    /// [`Error::BadName`], [`Error::Exists`], [`Error::Locked`], and the errors of reading a
    /// session meta, a memories file, a note or the database; on any error nothing is left.
    pub fn create(&self, options: &CreateOptions) -> Result<Manifest> {
        let _lock = self.lock()?;
        self.create_locked(options, &[])
    }

    /// `<stem>-<N>`, N one more than the largest N of any generated name (`cp-`, `auto-`,
    /// `pre-restore-`) in the folder: names sort by age and never repeat while one exists.
    fn unique_auto_name(&self, stem: &str) -> String {
        let mut max = 0u64;
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = ["cp-", "auto-", "pre-restore-"]
                    .iter()
                    .find_map(|p| name.strip_prefix(p))
                    .and_then(|rest| rest.parse::<u64>().ok());
                if let Some(n) = n {
                    max = max.max(n);
                }
            }
        }
        format!("{stem}-{}", max + 1)
    }

    /// [`Checkpoints::create`] under the checkpoints lock. `held`: `memories.md` locks the
    /// caller holds already (a restore), used instead of taking them again.
    fn create_locked(
        &self,
        options: &CreateOptions,
        held: &[(AutoScope, LockedFile)],
    ) -> Result<Manifest> {
        let name = match &options.name {
            Some(n) => {
                validate_name(n)?;
                n.clone()
            }
            None => self.unique_auto_name(if options.auto { "auto" } else { "cp" }),
        };
        let final_dir = self.dir.join(&name);
        if final_dir.exists() {
            return Err(Error::Exists {
                name,
                dir: self.dir.clone(),
            });
        }
        let tmp = self.dir.join(format!(
            ".tmp-{name}-{}-{}",
            std::process::id(),
            unique_number()
        ));
        fs::create_dir_all(&tmp).map_err(|e| io("create", &tmp, e))?;
        let result = self.fill(&tmp, &name, options, held);
        let manifest = match result {
            Ok(m) => m,
            Err(e) => {
                let _ = fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        if let Err(e) = fs::rename(&tmp, &final_dir) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(io("rename into place", &final_dir, e));
        }
        sync_dir(&self.dir);
        Ok(manifest)
    }

    fn scopes(user: bool) -> Vec<AutoScope> {
        if user {
            vec![AutoScope::Project, AutoScope::User]
        } else {
            vec![AutoScope::Project]
        }
    }

    fn fill(
        &self,
        tmp: &Path,
        name: &str,
        options: &CreateOptions,
        held: &[(AutoScope, LockedFile)],
    ) -> Result<Manifest> {
        let mut manifest = Manifest {
            format: FORMAT_VERSION,
            name: name.to_owned(),
            created: now().to_rfc3339_opts(SecondsFormat::Millis, true),
            reason: if options.reason.is_empty() {
                "manual".to_owned()
            } else {
                options.reason.clone()
            },
            auto: options.auto,
            user: options.user,
            project: self.config.project_root.display().to_string(),
            sessions: Vec::new(),
            files: Vec::new(),
            store: None,
            notes: Vec::new(),
            note_dirs: BTreeMap::new(),
        };
        // Sessions: lengths from the metas (brought up to date, which reads only what was
        // appended since the meta was written).
        if self.sessions.dir().exists() {
            for id in self.sessions.ids()? {
                let meta = self.sessions.position(&id)?;
                manifest.sessions.push(SessionMark {
                    id,
                    bytes: meta.jsonl_bytes,
                    tail: meta.jsonl_tail,
                    messages: meta.message_count,
                    token_count: meta.token_count,
                });
            }
        }
        // memories.md (under its lock, so no half-merged extraction is seen) and the notes.
        for scope in Self::scopes(options.user) {
            let sname = scope_name(scope);
            let files_dir = tmp.join("files").join(sname);
            fs::create_dir_all(&files_dir).map_err(|e| io("create", &files_dir, e))?;
            let taken;
            let locked = match held.iter().find(|(s, _)| *s == scope) {
                Some((_, lf)) => lf,
                None => {
                    taken = self.auto.lock_file(scope)?;
                    &taken
                }
            };
            // Copied byte for byte, whatever it holds (a file mewmem refuses to rewrite is still
            // worth keeping).
            if let Some(bytes) = read_file(locked.path())? {
                manifest.files.push(self.copy_into(
                    tmp,
                    &files_dir,
                    "memories",
                    sname,
                    "memories.md",
                    &bytes,
                )?);
            }
            let meta_path = locked.path().with_file_name(mem_auto::META_FILE);
            if let Some(bytes) = read_file(&meta_path)? {
                manifest.files.push(self.copy_into(
                    tmp,
                    &files_dir,
                    "memories-meta",
                    sname,
                    mem_auto::META_FILE,
                    &bytes,
                )?);
            }
        }
        for (sname, dir) in self.note_scopes(options.user) {
            let notes_copy = tmp.join("notes").join(&sname);
            fs::create_dir_all(&notes_copy).map_err(|e| io("create", &notes_copy, e))?;
            if sname.starts_with("extra") {
                manifest
                    .note_dirs
                    .insert(sname.clone(), dir.display().to_string());
            }
            for (file, path) in note_files(&dir)? {
                let Some(bytes) = read_file(&path)? else {
                    continue;
                };
                manifest.files.push(self.copy_into(
                    tmp,
                    &notes_copy,
                    "note",
                    &sname,
                    &file,
                    &bytes,
                )?);
            }
        }
        // The tier store.
        let scope = RowScope {
            project_key: self.project_key.clone(),
            user: options.user,
        };
        match &self.config.database {
            Some(db) if db.exists() => {
                let dest = tmp.join(STORE_FILE);
                let (schema_version, learnings) =
                    store::backup(db, &dest, &scope, self.config.busy_timeout)?;
                let bytes = mem_core::fsread::read(&dest).map_err(|e| io("read", &dest, e))?;
                if let Ok(f) = File::open(&dest) {
                    let _ = f.sync_all();
                }
                manifest.store = Some(StoreMark {
                    backend: "sqlite".into(),
                    copy: Some(STORE_FILE.into()),
                    sha256: Some(sha256_hex(&bytes)),
                    schema_version,
                    learnings,
                    scope,
                });
            }
            Some(_) => {
                manifest.store = Some(StoreMark {
                    backend: "sqlite".into(),
                    copy: None,
                    sha256: None,
                    schema_version: mem_tiers::schema::LATEST_VERSION,
                    learnings: 0,
                    scope,
                });
            }
            None => match &self.config.team_store {
                Some(pg) => {
                    let rows = pg.scope_rows(&scope.project_key, scope.user)?;
                    let dest = tmp.join(PG_STORE_FILE);
                    let mut bytes = serde_json::to_vec_pretty(&rows)
                        .map_err(|e| io("encode", &dest, std::io::Error::other(e)))?;
                    bytes.push(b'\n');
                    write_new(&dest, &bytes)?;
                    manifest.store = Some(StoreMark {
                        backend: "postgresql".into(),
                        copy: Some(PG_STORE_FILE.into()),
                        sha256: Some(sha256_hex(&bytes)),
                        schema_version: rows.schema_version,
                        learnings: rows.learnings.len(),
                        scope,
                    });
                }
                None => manifest.notes.push(
                    "the tier store is not a local SQLite file: its rows are not part of this \
                     checkpoint (sessions, memories.md and notes are)"
                        .into(),
                ),
            },
        }
        let path = tmp.join(MANIFEST_FILE);
        let mut text = serde_json::to_vec_pretty(&manifest)
            .map_err(|e| io("encode", &path, std::io::Error::other(e)))?;
        text.push(b'\n');
        write_new(&path, &text)?;
        sync_dir(tmp);
        Ok(manifest)
    }

    fn copy_into(
        &self,
        root: &Path,
        dir: &Path,
        kind: &str,
        scope: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<FileMark> {
        let dest = dir.join(name);
        write_new(&dest, bytes)?;
        let copy = dest
            .strip_prefix(root)
            .unwrap_or(&dest)
            .to_string_lossy()
            .replace('\\', "/");
        Ok(FileMark {
            kind: kind.into(),
            scope: scope.into(),
            name: name.into(),
            copy,
            sha256: sha256_hex(bytes),
            bytes: bytes.len() as u64,
        })
    }

    /// Reads and checks the manifest of `name`.
    ///
    /// # Errors
    /// [`Error::BadName`], [`Error::NotFound`], [`Error::Damaged`] (unreadable, not JSON, a
    /// name that is not its folder's), [`Error::TooNew`].
    pub fn show(&self, name: &str) -> Result<Manifest> {
        let dir = self.path_of(name)?;
        if !dir.is_dir() {
            return Err(Error::NotFound {
                name: name.to_owned(),
                dir: self.dir.clone(),
            });
        }
        let path = dir.join(MANIFEST_FILE);
        let damaged = |reason: String| Error::Damaged {
            name: name.to_owned(),
            path: path.clone(),
            reason,
        };
        let bytes = match mem_core::fsread::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(damaged("the manifest is missing".into()));
            }
            Err(e) => return Err(io("read", &path, e)),
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| damaged(format!("not valid JSON ({e})")))?;
        let format = value
            .get("format")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| damaged("no `format` version".into()))?;
        let format = u32::try_from(format).unwrap_or(u32::MAX);
        if format > FORMAT_VERSION {
            return Err(Error::TooNew {
                name: name.to_owned(),
                found: format,
                known: FORMAT_VERSION,
            });
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|e| damaged(format!("{e}")))?;
        if manifest.name != name {
            return Err(damaged(format!(
                "it names itself {:?}, not its folder's name",
                manifest.name
            )));
        }
        for (i, f) in manifest.files.iter().enumerate() {
            if let Some(why) = bad_file_name(f) {
                return Err(damaged(format!("files[{i}].name {:?} {why}", f.name)));
            }
            if !is_safe_relative(&f.copy) {
                return Err(damaged(format!(
                    "files[{i}].copy {:?} is not a relative path inside the checkpoint",
                    f.copy
                )));
            }
        }
        Ok(manifest)
    }

    /// Every checkpoint, oldest first, and the folders that could not be read (as warnings
    /// naming them).
    ///
    /// # Errors
    /// The checkpoints folder cannot be listed.
    pub fn list(&self) -> Result<(Vec<Summary>, Vec<String>)> {
        let mut out = Vec::new();
        let mut warnings = Vec::new();
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((out, warnings)),
            Err(e) => return Err(io("list", &self.dir, e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            match self.show(&name) {
                Ok(m) => out.push(Summary {
                    bytes: dir_size(&entry.path()),
                    sessions: m.sessions.len(),
                    files: m.file_counts().total(),
                    learnings: m.store.as_ref().map(|s| s.learnings).unwrap_or(0),
                    name: m.name,
                    created: m.created,
                    reason: m.reason,
                    auto: m.auto,
                    user: m.user,
                }),
                Err(e) => warnings.push(e.to_string()),
            }
        }
        out.sort_by(|a, b| a.created.cmp(&b.created).then(a.name.cmp(&b.name)));
        Ok((out, warnings))
    }

    /// Deletes checkpoint `name`.
    ///
    /// # Errors
    /// [`Error::BadName`], [`Error::NotFound`], [`Error::Locked`], I/O.
    pub fn remove(&self, name: &str) -> Result<()> {
        let dir = self.path_of(name)?;
        let _lock = self.lock()?;
        if !dir.is_dir() {
            return Err(Error::NotFound {
                name: name.to_owned(),
                dir: self.dir.clone(),
            });
        }
        self.delete_locked(name)
    }

    /// Deletes the folder of checkpoint `name` (the caller holds the lock). Renamed away first,
    /// so a crash never leaves a half-deleted checkpoint under its name.
    fn delete_locked(&self, name: &str) -> Result<()> {
        let dir = self.dir.join(name);
        let trash = self.dir.join(format!(".rm-{name}-{}", std::process::id()));
        fs::rename(&dir, &trash).map_err(|e| io("rename", &dir, e))?;
        fs::remove_dir_all(&trash).map_err(|e| io("remove", &trash, e))?;
        sync_dir(&self.dir);
        Ok(())
    }

    /// Takes an automatic checkpoint (`auto-<N>`, reason `reason`), then deletes
    /// the oldest automatic ones beyond the `keep` newest. Manual checkpoints are never pruned.
    /// Returns the new checkpoint and the names pruned.
    ///
    /// # Errors
    /// As [`Checkpoints::create`].
    pub fn create_auto(
        &self,
        reason: &str,
        user: bool,
        keep: usize,
    ) -> Result<(Manifest, Vec<String>)> {
        let _lock = self.lock()?;
        let m = self.create_locked(
            &CreateOptions {
                name: None,
                user,
                reason: reason.to_owned(),
                auto: true,
            },
            &[],
        )?;
        let pruned = self.prune_locked(keep)?;
        Ok((m, pruned))
    }

    /// Deletes the oldest automatic checkpoints beyond the `keep` newest.
    ///
    /// # Errors
    /// [`Error::Locked`], I/O.
    pub fn prune_auto(&self, keep: usize) -> Result<Vec<String>> {
        let _lock = self.lock()?;
        self.prune_locked(keep)
    }

    fn prune_locked(&self, keep: usize) -> Result<Vec<String>> {
        let (all, _) = self.list()?;
        let autos: Vec<&Summary> = all.iter().filter(|s| s.auto).collect();
        let mut pruned = Vec::new();
        if autos.len() > keep {
            for s in &autos[..autos.len() - keep] {
                self.delete_locked(&s.name)?;
                pruned.push(s.name.clone());
            }
        }
        Ok(pruned)
    }

    /// Refuses a manifest whose rows are another project's: its `store.scope.project_key` must be
    /// this project's key ([`Error::ForeignProject`], naming the manifest file). A manifest
    /// without a store part has no rows to put back, so nothing to check.
    fn check_project(&self, manifest: &Manifest) -> Result<()> {
        match &manifest.store {
            Some(s) if s.scope.project_key != self.project_key => Err(Error::ForeignProject {
                name: manifest.name.clone(),
                path: self.dir.join(&manifest.name).join(MANIFEST_FILE),
                found: s.scope.project_key.clone(),
                expected: self.project_key.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Verifies every copy of checkpoint `name` against its manifest (present, same SHA-256).
    fn verify(&self, manifest: &Manifest) -> Result<()> {
        let dir = self.dir.join(&manifest.name);
        let damaged = |path: PathBuf, reason: String| Error::Damaged {
            name: manifest.name.clone(),
            path,
            reason,
        };
        for f in &manifest.files {
            let path = dir.join(&f.copy);
            let Some(bytes) = read_file(&path)? else {
                return Err(damaged(path, "the copy is missing".into()));
            };
            if sha256_hex(&bytes) != f.sha256 {
                return Err(damaged(
                    path,
                    "the copy's content does not match its SHA-256".into(),
                ));
            }
        }
        if let Some(s) = &manifest.store
            && let Some(copy) = &s.copy
        {
            let path = dir.join(copy);
            let Some(bytes) = read_file(&path)? else {
                return Err(damaged(path, "the store copy is missing".into()));
            };
            if s.sha256.as_deref() != Some(sha256_hex(&bytes).as_str()) {
                return Err(damaged(
                    path,
                    "the store copy does not match its SHA-256".into(),
                ));
            }
            let known = if s.backend == "postgresql" {
                mem_tiers::postgres::PG_LATEST_VERSION
            } else {
                mem_tiers::schema::LATEST_VERSION
            };
            if s.schema_version > known {
                return Err(Error::Store(mem_tiers::Error::TooNew {
                    path,
                    found: s.schema_version,
                    known,
                }));
            }
        }
        Ok(())
    }

    /// Restores checkpoint `name` (see the module docs). With `dry_run`, only reports. Hand
    /// edits since the checkpoint (a `memories.md` that is neither the checkpoint's nor the one
    /// mewmem last wrote, a note that changed, a session whose recorded bytes changed) are
    /// conflicts: [`Error::Conflicts`] unless `force`.
    ///
    /// Order, so that a failure leaves nothing half-restored: every file is first written to a
    /// temporary file beside its target (a full disk fails here, before any change); then the
    /// store rows in one transaction; then the sessions' rollback records; then the files are
    /// renamed into place. A failure after the store was changed undoes what was done (the
    /// store from the pre-restore checkpoint, the sessions by rollback records back).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Damaged`], [`Error::TooNew`], [`Error::Conflicts`],
    /// [`Error::Locked`], [`Error::Failed`], and the crates' own errors.
    pub fn restore(&self, name: &str, dry_run: bool, force: bool) -> Result<RestoreReport> {
        validate_name(name)?;
        let _lock = self.lock()?;
        let manifest = self.show(name)?;
        self.check_project(&manifest)?;
        self.verify(&manifest)?;
        let ck_dir = self.dir.join(name);
        let mut report = RestoreReport {
            name: name.to_owned(),
            dry_run,
            ..RestoreReport::default()
        };
        report.warnings.extend(manifest.notes.iter().cloned());

        // memories.md: hold both locks for the whole restore, so an extraction waits.
        let scopes = Self::scopes(manifest.user);
        let mut locked: Vec<(AutoScope, LockedFile)> = Vec::new();
        for scope in &scopes {
            locked.push((*scope, self.auto.lock_file(*scope)?));
        }
        let mut writes: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
        // (index in `locked`, the checkpoint's text, its dates)
        type AutoPlan = (usize, Option<Vec<u8>>, Option<AutoMeta>);
        let mut auto_metas: Vec<AutoPlan> = Vec::new();
        for (i, (scope, lf)) in locked.iter().enumerate() {
            let sname = scope_name(*scope);
            let then = manifest
                .files
                .iter()
                .find(|f| f.kind == "memories" && f.scope == sname);
            let then_text = match then {
                Some(f) => read_file(&ck_dir.join(&f.copy))?,
                None => None,
            };
            let now_text = read_file(lf.path())?;
            let then_meta: Option<AutoMeta> = manifest
                .files
                .iter()
                .find(|f| f.kind == "memories-meta" && f.scope == sname)
                .and_then(|f| mem_core::fsread::read(ck_dir.join(&f.copy)).ok())
                .and_then(|b| serde_json::from_slice(&b).ok());
            let item = format!("{sname} memories.md");
            if now_text == then_text {
                continue;
            }
            if let Some(now) = &now_text {
                let sha = sha256_hex(now);
                if lf.last_written().as_deref() != Some(sha.as_str()) {
                    report.conflicts.push(Conflict {
                        item: item.clone(),
                        reason: "edited by hand since mewmem last wrote it".into(),
                    });
                }
            }
            report.changes.push(Change {
                action: match (&now_text, &then_text) {
                    (None, Some(_)) => "create",
                    (Some(_), None) => "remove",
                    _ => "replace",
                }
                .into(),
                detail: describe_entries(now_text.as_deref(), then_text.as_deref()),
                item,
            });
            auto_metas.push((i, then_text, then_meta));
        }

        // Notes: each folder under the lock every note writer takes, held to the end.
        let mut note_writes: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
        let mut note_locks: Vec<mem_recall::NotesLock> = Vec::new();
        let mut note_scopes = self.note_scopes(manifest.user);
        let configured: Vec<String> = note_scopes.iter().map(|(s, _)| s.clone()).collect();
        note_scopes.retain(|(sname, dir)| {
            if !sname.starts_with("extra") {
                return true;
            }
            match manifest.note_dirs.get(sname) {
                Some(then) if Path::new(then) == dir.as_path() => true,
                Some(then) => {
                    report.warnings.push(format!(
                        "notes {sname} were copied from {then}, which is not {sname} now ({}): \
                         left as they are",
                        dir.display()
                    ));
                    false
                }
                None => {
                    report.warnings.push(format!(
                        "notes {sname} ({}) were not configured when the checkpoint was taken: \
                         left as they are",
                        dir.display()
                    ));
                    false
                }
            }
        });
        for (sname, then) in &manifest.note_dirs {
            if !configured.contains(sname) {
                report.warnings.push(format!(
                    "notes {sname} ({then}) are no longer configured: not restored"
                ));
            }
        }
        // Every file written or deleted (the notes folders' locks too) stays inside the project
        // (or the user level, or a configured note folder), symlinks resolved.
        let mut roots = vec![self.config.project_root.clone()];
        if manifest.user {
            roots.push(self.auto.dir(AutoScope::User));
        }
        roots.extend(
            note_scopes
                .iter()
                .filter(|(s, _)| s.starts_with("extra"))
                .map(|(_, d)| d.clone()),
        );
        for (_, dir) in &note_scopes {
            journal::check_inside(&dir.join(".notes.lock"), &roots)?;
        }
        for (sname, dir) in &note_scopes {
            let sname = sname.as_str();
            if !dry_run {
                note_locks.push(mem_recall::lock_notes(dir, self.config.lock_timeout)?);
            }
            let now = note_files(dir)?;
            let then: BTreeMap<&str, &FileMark> = manifest
                .files
                .iter()
                .filter(|f| f.kind == "note" && f.scope == sname)
                .map(|f| (f.name.as_str(), f))
                .collect();
            for (file, mark) in &then {
                let target = dir.join(file);
                let current = read_file(&target)?;
                let copy = mem_core::fsread::read(ck_dir.join(&mark.copy))
                    .map_err(|e| io("read", &ck_dir.join(&mark.copy), e))?;
                let item = format!("N:{sname}/{file}");
                match current {
                    Some(c) if c == copy => {}
                    Some(_) => {
                        report.conflicts.push(Conflict {
                            item: item.clone(),
                            reason: "changed since the checkpoint".into(),
                        });
                        report.changes.push(Change {
                            action: "replace".into(),
                            item,
                            detail: "put back as it was".into(),
                        });
                        note_writes.push((target, Some(copy)));
                    }
                    None => {
                        report.changes.push(Change {
                            action: "create".into(),
                            item,
                            detail: "deleted since; put back".into(),
                        });
                        note_writes.push((target, Some(copy)));
                    }
                }
            }
            for (file, path) in &now {
                if !then.contains_key(file.as_str()) {
                    report.changes.push(Change {
                        action: "remove".into(),
                        item: format!("N:{sname}/{file}"),
                        detail: "written since the checkpoint".into(),
                    });
                    note_writes.push((path.clone(), None));
                }
            }
        }

        // Sessions.
        struct Plan {
            id: String,
            from: u64,
            to: u64,
            tail: String,
            tokens: usize,
        }
        let mut rollbacks: Vec<Plan> = Vec::new();
        let ids = if self.sessions.dir().exists() {
            self.sessions.ids()?
        } else {
            Vec::new()
        };
        let marks: BTreeMap<&str, &SessionMark> = manifest
            .sessions
            .iter()
            .map(|s| (s.id.as_str(), s))
            .collect();
        for id in &ids {
            let meta = self.sessions.position(id)?;
            let item = format!("session {id}");
            match marks.get(id.as_str()) {
                Some(mark) => {
                    if meta.jsonl_bytes == mark.bytes && meta.jsonl_tail == mark.tail {
                        continue;
                    }
                    if !self.sessions.has_prefix(id, mark.bytes, &mark.tail)? {
                        report.conflicts.push(Conflict {
                            item: item.clone(),
                            reason: "its recorded records were rewritten since (re-imported or \
                                     edited); it is left as it is"
                                .into(),
                        });
                        continue;
                    }
                    report.changes.push(Change {
                        action: "rollback".into(),
                        item,
                        detail: format!(
                            "replay back to {} bytes ({} message records); the {} bytes written \
                             since stay on disk",
                            mark.bytes,
                            mark.messages,
                            meta.jsonl_bytes.saturating_sub(mark.bytes)
                        ),
                    });
                    rollbacks.push(Plan {
                        id: id.clone(),
                        from: meta.jsonl_bytes,
                        to: mark.bytes,
                        tail: mark.tail.clone(),
                        tokens: mark.token_count,
                    });
                }
                None => {
                    if meta.jsonl_bytes == 0 || meta.token_count == 0 && meta.message_count == 0 {
                        continue;
                    }
                    report.changes.push(Change {
                        action: "rollback".into(),
                        item,
                        detail:
                            "started after the checkpoint: replay emptied; its records stay on disk"
                                .into(),
                    });
                    rollbacks.push(Plan {
                        id: id.clone(),
                        from: meta.jsonl_bytes,
                        to: 0,
                        tail: String::new(),
                        tokens: 0,
                    });
                }
            }
        }
        for mark in &manifest.sessions {
            if !ids.contains(&mark.id) {
                report.warnings.push(format!(
                    "session {} was deleted since the checkpoint; a checkpoint holds session \
                     lengths, not copies, so it cannot be put back",
                    mark.id
                ));
            }
        }

        // The store.
        let row_scope = manifest.store.as_ref().map(|s| s.scope.clone());
        let store_copy = manifest
            .store
            .as_ref()
            .and_then(|s| s.copy.as_ref())
            .map(|c| ck_dir.join(c));
        let backend_then = manifest.store.as_ref().map(|s| s.backend.as_str());
        let pg_then: Option<mem_tiers::ScopeRows> = match (backend_then, &store_copy) {
            (Some("postgresql"), Some(copy)) => {
                let bytes = mem_core::fsread::read(copy).map_err(|e| io("read", copy, e))?;
                Some(serde_json::from_slice(&bytes).map_err(|e| Error::Damaged {
                    name: name.to_owned(),
                    path: copy.clone(),
                    reason: format!("the store copy is not valid: {e}"),
                })?)
            }
            _ => None,
        };
        let pg = match (&self.config.team_store, &pg_then) {
            (Some(pg), Some(_)) => Some(pg.clone()),
            _ => None,
        };
        let sqlite = match (&self.config.database, backend_then) {
            (Some(db), Some("sqlite")) => Some(db.clone()),
            _ => None,
        };
        if let Some(scope) = row_scope
            .as_ref()
            .filter(|_| sqlite.is_some() || pg.is_some())
        {
            let d = match (&sqlite, &pg, &pg_then) {
                (Some(db), _, _) => store::diff(
                    db,
                    store_copy.as_deref(),
                    scope,
                    &self.dir,
                    self.config.busy_timeout,
                )?,
                (None, Some(pg), Some(then)) => pg_diff(
                    &pg.scope_rows(&scope.project_key, scope.user)?,
                    then,
                    scope.user,
                ),
                _ => StoreDiff::default(),
            };
            if !d.is_empty() {
                let ids = |v: &[i64]| -> String {
                    let mut s: Vec<String> = v.iter().take(8).map(|i| format!("L{i}")).collect();
                    if v.len() > 8 {
                        s.push(format!("and {} more", v.len() - 8));
                    }
                    if s.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", s.join(" "))
                    }
                };
                let mut detail = format!(
                    "{} removed{}, {} put back{}, {} changed back{}",
                    d.removed.len(),
                    ids(&d.removed),
                    d.added.len(),
                    ids(&d.added),
                    d.changed.len(),
                    ids(&d.changed)
                );
                if !d.preferences.is_empty() {
                    detail.push_str(&format!(
                        "; user preferences put back: {}",
                        d.preferences.join(" ")
                    ));
                }
                report.changes.push(Change {
                    action: "restore".into(),
                    item: "learnings".into(),
                    detail,
                });
            }
            report.store = Some(d);
        } else if let Some(then) = backend_then {
            report.warnings.push(format!(
                "the checkpoint's rows are of a {then} tier store, which is not the one \
                 configured now: its rows were not restored"
            ));
        }

        for target in auto_metas
            .iter()
            .map(|(i, _, _)| locked[*i].1.path())
            .chain(note_writes.iter().map(|(t, _)| t.as_path()))
        {
            journal::check_inside(target, &roots)?;
        }

        if dry_run {
            return Ok(report);
        }
        if !report.conflicts.is_empty() && !force {
            return Err(Error::Conflicts {
                name: name.to_owned(),
                conflicts: report.conflicts,
            });
        }
        if report.changes.is_empty() {
            return Ok(report);
        }

        // The pre-restore checkpoint (keeps hand edits and the later state), taken under the
        // `memories.md` locks held since the files were compared: no extraction gets in between.
        // A restore killed from here on is rolled back (nothing changed yet) or, once the
        // journal says `apply`, forward, by the next command.
        self.write_journal(&journal::Journal {
            checkpoint: name.to_owned(),
            apply: false,
            writes: Vec::new(),
            removals: Vec::new(),
            store: false,
            sessions: Vec::new(),
            metas: Vec::new(),
        })?;
        let pre_name = self.unique_auto_name("pre-restore");
        self.create_locked(
            &CreateOptions {
                name: Some(pre_name.clone()),
                user: manifest.user,
                reason: format!("pre-restore of {name}"),
                auto: true,
            },
            &locked,
        )
        .inspect_err(|_| self.remove_journal())?;
        report.pre_restore = Some(pre_name.clone());

        // 1. Stage every file.
        for (i, text, _) in &auto_metas {
            writes.push((locked[*i].1.path().to_owned(), text.clone()));
        }
        writes.extend(note_writes);
        let mut staged: Vec<Staged> = Vec::new();
        let mut removals: Vec<PathBuf> = Vec::new();
        let cleanup = |staged: &[Staged]| {
            for s in staged {
                let _ = fs::remove_file(&s.tmp);
            }
        };
        for (target, content) in &writes {
            match content {
                Some(bytes) => {
                    let dir = target.parent().unwrap_or(Path::new("."));
                    if let Err(e) = fs::create_dir_all(dir) {
                        cleanup(&staged);
                        self.remove_journal();
                        return Err(io("create", dir, e));
                    }
                    let fname = target
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let tmp = dir.join(format!(
                        ".{fname}.restore-{}-{}.tmp",
                        std::process::id(),
                        unique_number()
                    ));
                    if let Err(e) = write_new(&tmp, bytes) {
                        let _ = fs::remove_file(&tmp);
                        cleanup(&staged);
                        self.remove_journal();
                        return Err(e);
                    }
                    staged.push(Staged {
                        tmp,
                        target: target.clone(),
                    });
                    self.pause();
                }
                None => removals.push(target.clone()),
            }
        }
        for s in &staged {
            if let Some(dir) = s.tmp.parent() {
                sync_dir(dir);
            }
        }

        // The journal, fsynced before the first change: a restore killed from here on is
        // finished by the next command that opens the project (`recover`).
        let plan_store =
            row_scope.is_some() && report.store.as_ref().is_some_and(|d| !d.is_empty());
        let journal = journal::Journal {
            checkpoint: name.to_owned(),
            apply: true,
            writes: staged
                .iter()
                .map(|s| journal::JournalWrite {
                    tmp: s.tmp.clone(),
                    target: s.target.clone(),
                })
                .collect(),
            removals: removals.clone(),
            store: plan_store,
            sessions: rollbacks
                .iter()
                .map(|p| journal::JournalSession {
                    id: p.id.clone(),
                    from: p.from,
                    to: p.to,
                    tail: p.tail.clone(),
                    tokens: p.tokens,
                })
                .collect(),
            metas: auto_metas
                .iter()
                .map(|(i, _, meta)| journal::JournalMeta {
                    scope: scope_name(locked[*i].0).to_owned(),
                    meta: meta.clone(),
                })
                .collect(),
        };
        if let Err(e) = self.write_journal(&journal) {
            cleanup(&staged);
            self.remove_journal();
            return Err(e);
        }
        self.pause();

        // 2. The store rows, in one transaction.
        let mut store_changed = false;
        if let Some(scope) = &row_scope
            && report.store.as_ref().is_some_and(|d| !d.is_empty())
        {
            let done = match (&sqlite, &pg, &pg_then) {
                (Some(db), _, _) => store::restore(
                    db,
                    store_copy.as_deref(),
                    scope,
                    &self.dir,
                    self.config.busy_timeout,
                ),
                (None, Some(pg), Some(then)) => {
                    pg.replace_scope_rows(&scope.project_key, scope.user, then)
                }
                _ => Ok(()),
            };
            if let Err(e) = done {
                cleanup(&staged);
                self.remove_journal();
                return Err(e.into());
            }
            store_changed = true;
            self.pause();
        }

        // 3. Sessions.
        let mut appended: Vec<(String, u64, String, usize)> = Vec::new();
        let mut failure: Option<String> = None;
        for plan in &rollbacks {
            match self.rollback_session(plan.id.as_str(), plan.to, &plan.tail, plan.tokens, name) {
                Ok(before) => {
                    appended.push((plan.id.clone(), before.0, before.1, before.2));
                    self.pause();
                }
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(cause) = failure {
            cleanup(&staged);
            let undo = self.undo(&pre_name, store_changed, &appended);
            self.remove_journal();
            return Err(Error::Failed {
                name: name.to_owned(),
                cause,
                undo,
            });
        }

        // 4. Files into place, all or nothing: each file replaced or removed is kept aside (a
        // hard link, or a copy) until every rename succeeded; a failure puts every file back and
        // undoes the store and the sessions as in step 3.
        let mut placed: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
        let mut removed: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut failure: Option<(usize, String)> = None;
        for (k, s) in staged.iter().enumerate() {
            let backup = match keep_aside(&s.target) {
                Ok(b) => b,
                Err(e) => {
                    failure = Some((k, e.to_string()));
                    break;
                }
            };
            let renamed = if self.fail_rename_at == Some(k) {
                Err(std::io::Error::other("injected failure"))
            } else {
                fs::rename(&s.tmp, &s.target)
            };
            if let Err(e) = renamed {
                if let Some(b) = backup {
                    let _ = fs::remove_file(b);
                }
                failure = Some((
                    k,
                    format!("cannot rename into place {}: {e}", s.target.display()),
                ));
                break;
            }
            placed.push((s.target.clone(), backup));
            self.pause();
        }
        if failure.is_none() {
            for path in &removals {
                let aside = aside_path(path, "removed");
                match fs::rename(path, &aside) {
                    Ok(()) => removed.push((path.clone(), aside)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        failure = Some((
                            staged.len(),
                            format!("cannot remove {}: {e}", path.display()),
                        ));
                        break;
                    }
                }
            }
        }
        if let Some((k, cause)) = failure {
            if k < staged.len() {
                cleanup(&staged[k..]);
            }
            let mut problems = Vec::new();
            for (path, aside) in removed.iter().rev() {
                if let Err(e) = fs::rename(aside, path) {
                    problems.push(format!("{}: {e}", path.display()));
                }
            }
            for (target, backup) in placed.iter().rev() {
                let back = match backup {
                    Some(b) => fs::rename(b, target),
                    None => fs::remove_file(target),
                };
                if let Err(e) = back {
                    problems.push(format!("{}: {e}", target.display()));
                }
                if let Some(dir) = target.parent() {
                    sync_dir(dir);
                }
            }
            let undo = self.undo(&pre_name, store_changed, &appended);
            self.remove_journal();
            let undo = if problems.is_empty() {
                undo
            } else {
                format!(
                    "putting files back failed for {}; run `mem checkpoint restore {pre_name} \
                     --force` to go back ({undo})",
                    problems.join("; ")
                )
            };
            return Err(Error::Failed {
                name: name.to_owned(),
                cause,
                undo,
            });
        }
        for (target, backup) in &placed {
            if let Some(b) = backup {
                let _ = fs::remove_file(b);
            }
            if let Some(dir) = target.parent() {
                sync_dir(dir);
            }
        }
        for (path, aside) in &removed {
            let _ = fs::remove_file(aside);
            if let Some(dir) = path.parent() {
                sync_dir(dir);
            }
        }
        for (i, text, meta) in auto_metas {
            let lf = &locked[i].1;
            // The file is in place; its dates and "written by mewmem" hash follow.
            if let Err(e) = lf.write_meta(text.as_deref(), meta) {
                report.warnings.push(e.to_string());
            }
        }
        self.remove_journal();
        self.clean_leftovers();
        Ok(report)
    }

    /// Appends a rollback to session `id` (retrying when a writer appended in between).
    /// Returns the length and fingerprint before it, and the tokens then, for an undo.
    fn rollback_session(
        &self,
        id: &str,
        to: u64,
        tail: &str,
        tokens: usize,
        name: &str,
    ) -> Result<(u64, String, usize)> {
        for _ in 0..50 {
            let before = self.sessions.position(id)?;
            if self
                .sessions
                .append_rollback(id, before.jsonl_bytes, to, tail, tokens, name)?
            {
                return Ok((before.jsonl_bytes, before.jsonl_tail, before.token_count));
            }
        }
        Err(Error::Failed {
            name: name.to_owned(),
            cause: format!("session {id} kept growing while the restore tried to roll it back"),
            undo: String::new(),
        })
    }

    /// Undoes the parts of a failed restore that were applied; says what it did.
    fn undo(
        &self,
        pre: &str,
        store_changed: bool,
        appended: &[(String, u64, String, usize)],
    ) -> String {
        let mut failed = Vec::new();
        if store_changed
            && let (Some(pg), Ok(m)) = (&self.config.team_store, self.show(pre))
            && let Some(s) = m.store.as_ref().filter(|s| s.backend == "postgresql")
            && let Some(copy) = &s.copy
        {
            let path = self.dir.join(pre).join(copy);
            let put_back = mem_core::fsread::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    serde_json::from_slice::<mem_tiers::ScopeRows>(&b).map_err(|e| e.to_string())
                })
                .and_then(|rows| {
                    pg.replace_scope_rows(&s.scope.project_key, s.scope.user, &rows)
                        .map_err(|e| e.to_string())
                });
            if let Err(e) = put_back {
                failed.push(format!("the team store: {e}"));
            }
        }
        if store_changed
            && let (Some(db), Ok(m)) = (&self.config.database, self.show(pre))
            && let Some(s) = m.store.as_ref().filter(|s| s.backend == "sqlite")
        {
            let copy = s.copy.as_ref().map(|c| self.dir.join(pre).join(c));
            if let Err(e) = store::restore(
                db,
                copy.as_deref(),
                &s.scope,
                &self.dir,
                self.config.busy_timeout,
            ) {
                failed.push(format!("the store: {e}"));
            }
        }
        for (id, len, tail, tokens) in appended {
            let now = match self.sessions.position(id) {
                Ok(m) => m.jsonl_bytes,
                Err(e) => {
                    failed.push(format!("session {id}: {e}"));
                    continue;
                }
            };
            if let Err(e) = self
                .sessions
                .append_rollback(id, now, *len, tail, *tokens, pre)
            {
                failed.push(format!("session {id}: {e}"));
            }
        }
        if failed.is_empty() {
            "nothing was changed (what had been applied was undone)".into()
        } else {
            format!(
                "undoing failed for {}; run `mem checkpoint restore {pre} --force` to go back \
                 to the state before the restore",
                failed.join("; ")
            )
        }
    }
}

/// What putting `then` back over `now` changes (the team store's version of [`store::diff`]):
/// learnings compared by id on title, content, category, tags and context; with `user`, the
/// preferences.
fn pg_diff(now: &mem_tiers::ScopeRows, then: &mem_tiers::ScopeRows, user: bool) -> StoreDiff {
    let text = |l: &mem_tiers::LearningEntry| {
        (
            l.title.clone(),
            l.content.clone(),
            l.category.clone(),
            l.tags.clone(),
            l.context.clone(),
        )
    };
    let now_map: BTreeMap<i64, _> = now.learnings.iter().map(|l| (l.id, text(l))).collect();
    let then_map: BTreeMap<i64, _> = then.learnings.iter().map(|l| (l.id, text(l))).collect();
    let mut d = store::diff_learnings(&now_map, &then_map);
    if user {
        let empty = BTreeMap::new();
        let a = now.preferences.as_ref().unwrap_or(&empty);
        let b = then.preferences.as_ref().unwrap_or(&empty);
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        d.preferences = keys
            .into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect();
    }
    d
}

/// A hidden name beside `path` for keeping it aside during a restore.
fn aside_path(path: &Path, what: &str) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fname = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(
        ".{fname}.restore-{what}-{}-{}",
        std::process::id(),
        unique_number()
    ))
}

/// Keeps the current `target` (if any) under a hidden name beside it — a hard link (no space
/// needed), else a synced copy — so a restore can put it back. `None` when there is no file.
fn keep_aside(target: &Path) -> Result<Option<PathBuf>> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("read", target, e)),
        Ok(_) => {}
    }
    let aside = aside_path(target, "old");
    if fs::hard_link(target, &aside).is_ok() {
        return Ok(Some(aside));
    }
    let bytes = mem_core::fsread::read(target).map_err(|e| io("read", target, e))?;
    if let Err(e) = write_new(&aside, &bytes) {
        let _ = fs::remove_file(&aside);
        return Err(e);
    }
    Ok(Some(aside))
}

/// `+N -M entries` between two `memories.md` texts.
fn describe_entries(now: Option<&[u8]>, then: Option<&[u8]>) -> String {
    let ids = |t: Option<&[u8]>| -> Vec<String> {
        t.map(|t| {
            mem_auto::Document::parse(&String::from_utf8_lossy(t))
                .0
                .entries()
                .iter()
                .map(|e| e.id.to_string())
                .collect()
        })
        .unwrap_or_default()
    };
    let now = ids(now);
    let then = ids(then);
    let back: Vec<&String> = then.iter().filter(|i| !now.contains(i)).collect();
    let gone: Vec<&String> = now.iter().filter(|i| !then.contains(i)).collect();
    let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    let mut parts = Vec::new();
    if !back.is_empty() {
        parts.push(format!("entries back: {}", list(&back)));
    }
    if !gone.is_empty() {
        parts.push(format!("entries removed: {}", list(&gone)));
    }
    if parts.is_empty() {
        "text differs (same entries)".into()
    } else {
        parts.join("; ")
    }
}

/// A relative path without `..`, absolute parts or backslashes.
fn is_safe_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.contains('\\')
        && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// Why a manifest's `files[].name` is not one `create` writes, if so: a note's name must be one
/// visible `*.md` file name (no `/`, `\\`, `..`, control characters, not hidden, not empty or
/// absolute), a memories file's the one of its kind.
fn bad_file_name(f: &FileMark) -> Option<&'static str> {
    let n = f.name.as_str();
    match f.kind.as_str() {
        "note" => {
            let plain = !n.is_empty()
                && !n.contains(['/', '\\'])
                && !n.starts_with('.')
                && n.ends_with(".md")
                && !n.chars().any(char::is_control);
            (!plain).then_some(
                "is not a note's file name (one visible `*.md` name in the notes folder: no \
                 `/`, `\\`, `..` or control characters)",
            )
        }
        "memories" => (n != "memories.md").then_some("is not `memories.md`"),
        "memories-meta" => (n != mem_auto::META_FILE).then_some("is not the memories meta file"),
        _ => None,
    }
}
