//! Importing transcripts into a [`SessionStore`]: the glue between [`crate::import`] (parsing)
//! and the store (atomic writes), with the re-import rules.
//!
//! Re-importing the same file yields the same session: when the source's digest (XXH3-128,
//! `imported.xxh3`) and the session's size are unchanged, nothing is written; when the source
//! changed, the session is replaced atomically; when records were appended to the session
//! after its import, the re-import is refused ([`Error::WouldDropAppended`]) so nothing is lost.
//!
//! **Incremental re-import** (what the agent hooks run every turn): a transcript that only grew
//! since its last import is not read again. Each import records a *sync mark* in the meta
//! (`imported.sync`): the source line where the last user or assistant message starts (before
//! it, the conversion is final: no later line can change a record before a new message) with
//! its byte offset and fingerprints of the source bytes before it, and the session's
//! [`MetaMark`] there. The next import checks the fingerprints (the first and the last 64 KiB
//! before the mark), converts only the lines from the mark on (the last message again, and
//! the new lines), and replaces the session's records after the mark with them
//! ([`SessionStore::rewrite_tail`]). Cost: the new bytes plus the last message, whatever the
//! size of the transcript. A torn last line is converted once it is whole. When the lines
//! after the mark cannot be converted on their own (an inline sidechain, a Claude compaction
//! that keeps earlier messages by uuid, a Codex `session_meta`, a tool result whose call came
//! before the mark) or the source was rewritten before the mark, the whole file is imported
//! as above.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::import::{
    FileImport, ImportReport, ImportedSession, LineIndex, SourceFormat, SpilledSession, Transcript,
    head_id, import_tail, is_legacy_of,
};
use crate::meta::{IMPORTED_KEY, SessionMeta};
use crate::record::{RecordType, SessionRecord};
use crate::store::{
    FileSystem, ImportLock, MetaMark, REWRITING_KEY, SYNC_KEY, SessionStore, StagedSession,
    SyncMark, WriteOutcome,
};

/// What happened to one session of an imported file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IngestAction {
    /// A new session.
    Created,
    /// The session existed (same source) and was rewritten from the changed source.
    Replaced,
    /// The session existed and the source is unchanged: nothing written.
    Unchanged,
    /// The session existed and the source grew: only the lines after the sync mark were
    /// converted, and the session's records after the mark replaced by them.
    Appended,
    /// The source holds no conversation at all (e.g. only `summary` lines): nothing written.
    Empty,
}

/// One session produced by importing a file.
#[derive(Debug, Clone)]
pub struct Ingested {
    /// The session's meta after the import.
    pub meta: SessionMeta,
    /// What was done.
    pub action: IngestAction,
    /// The importer's report (messages, tool pairs, boundaries, skipped lines, diagnostics).
    pub report: ImportReport,
    /// The source format.
    pub format: SourceFormat,
}

/// Imports one transcript file into `store`: the main session and any subagent sessions split
/// out of it. Parsing happens first; the decisions and writes then happen under the store's
/// import lock, so concurrent imports of the same files take turns.
///
/// Errors: [`Error::NotATranscript`] for a file no importer understands;
/// [`Error::SourceIsStore`] for a file of this store itself; [`Error::WouldDropAppended`] when
/// a session has records appended after its import; [`Error::IdTaken`] when the id belongs to a
/// session from another source; I/O errors.
pub fn import_into(store: &SessionStore, path: &Path) -> Result<Vec<Ingested>> {
    import_into_as(store, path, None)
}

/// [`import_into`], with the main session stored under `id` when given (`mem session import
/// --id`) instead of the id derived from the file; subagent sessions split out of it keep their
/// ids and point to `id` as their parent.
///
/// Errors: those of [`import_into`]; [`Error::InvalidId`] for an id that cannot name a file.
pub fn import_into_as(
    store: &SessionStore,
    path: &Path,
    id: Option<&str>,
) -> Result<Vec<Ingested>> {
    let prepared = prepare_file(store, path, id)?;
    commit_file(store, prepared, true)
}

/// A transcript file read and converted, its sessions encoded and counted, ready for
/// [`commit_file`] (or already synced incrementally).
#[derive(Debug)]
pub struct PreparedFile {
    source: PathBuf,
    state: Prepared,
}

#[derive(Debug)]
enum Prepared {
    /// Synced incrementally (written already), or nothing to write.
    Done(Vec<Ingested>),
    /// Sessions to write, in order.
    Sessions(Vec<PreparedOne>),
}

/// A session to write: encoded in memory, or already written and synced under temporary names
/// by a worker thread of [`import_many`].
#[derive(Debug)]
enum Payload {
    Encoded(crate::store::PreparedSession),
    Staged(StagedSession),
}

impl PreparedFile {
    /// The bytes of encoded sessions it holds in memory until its commit (sessions that exist
    /// already; new ones are staged on disk).
    fn held_bytes(&self) -> usize {
        match &self.state {
            Prepared::Sessions(sessions) => sessions
                .iter()
                .map(|one| match one {
                    PreparedOne::Write {
                        payload: Payload::Encoded(p),
                        ..
                    } => p.encoded_len(),
                    _ => 0,
                })
                .sum(),
            Prepared::Done(_) => 0,
        }
    }

    /// Its new sessions, staged on disk.
    fn staged_mut(&mut self) -> impl Iterator<Item = &mut StagedSession> {
        let sessions = match &mut self.state {
            Prepared::Sessions(sessions) => &mut sessions[..],
            Prepared::Done(_) => &mut [],
        };
        sessions.iter_mut().filter_map(|one| match one {
            PreparedOne::Write {
                payload: Payload::Staged(staged),
                ..
            } => Some(staged),
            _ => None,
        })
    }
}

impl Payload {
    fn id(&self) -> &str {
        match self {
            Payload::Encoded(p) => &p.meta.id,
            Payload::Staged(s) => &s.meta().id,
        }
    }
}

#[derive(Debug)]
enum PreparedOne {
    Empty(Ingested),
    Write {
        payload: Payload,
        /// The source's digest ([`crate::import::digest_hex`]).
        digest: String,
        report: ImportReport,
        format: SourceFormat,
    },
}

/// The stored session an import before leading `-` were replaced in ids gave the session
/// now named `id` (a new id starting with `_`), when it exists and came from `source`: a
/// file named `-lead.jsonl` imported then is `-lead` in the store, and a re-import finds it
/// there (unchanged, synced or replaced) instead of adding `_lead-<hash>` beside it.
/// `existing`: the store's ids, when the caller listed them.
fn legacy_id(
    store: &SessionStore,
    existing: Option<&HashSet<String>>,
    id: &str,
    source: &Path,
) -> Option<String> {
    if !id.starts_with('_') {
        return None;
    }
    let listed;
    let ids: Vec<&String> = match existing {
        Some(ids) => ids.iter().filter(|i| i.starts_with('-')).collect(),
        None => {
            listed = store.ids().ok()?;
            listed.iter().filter(|i| i.starts_with('-')).collect()
        }
    };
    ids.into_iter()
        .filter(|legacy| is_legacy_of(legacy, id))
        .find(|legacy| {
            store
                .meta_with(legacy, false)
                .is_ok_and(|meta| check_same_source(&meta, source).is_ok())
        })
        .cloned()
}

/// Gives each of `sessions` (the sessions of one file, main first) whose id an earlier import
/// gave with a leading `-` that id back ([`legacy_id`]), and its subagent sessions the parent
/// id to match.
fn keep_legacy_ids(
    store: &SessionStore,
    existing: Option<&HashSet<String>>,
    sessions: &mut dyn Iterator<Item = &mut ImportedSession>,
    source: &Path,
) {
    let mut renamed: HashMap<String, String> = HashMap::new();
    for session in sessions {
        if let Some(parent) = session.parent_id.as_ref().and_then(|p| renamed.get(p)) {
            session.parent_id = Some(parent.clone());
        }
        let exists = match existing {
            Some(ids) => ids.contains(&session.id),
            None => store.jsonl_path(&session.id).is_file(),
        };
        if !exists && let Some(legacy) = legacy_id(store, existing, &session.id, source) {
            let new = std::mem::replace(&mut session.id, legacy.clone());
            renamed.insert(new, legacy);
        }
    }
}

/// The first half of [`import_into_as`]: everything that needs no store lock (reading,
/// hashing and converting the file, encoding and counting its sessions), so files can be
/// prepared in parallel; an incremental sync is done here already (it touches only the
/// file's own session, under the import lock).
///
/// Errors: those of [`import_into_as`] found before writing.
pub fn prepare_file(store: &SessionStore, path: &Path, id: Option<&str>) -> Result<PreparedFile> {
    let store_dir = store.dir().canonicalize().ok();
    let batch = Batch {
        store_dir: store_dir.as_deref(),
        ..Batch::default()
    };
    prepare_file_with(store, &batch, path, id, false, STREAM_MIN_BYTES)
}

/// What [`import_many`] works out once for all the files of a batch (all `None` for a single
/// file).
#[derive(Debug, Default)]
struct Batch<'a> {
    /// The store's import lock, when the caller holds it already (an incremental sync then
    /// uses it instead of taking it).
    lock: Option<&'a ImportLock>,
    /// The store's directory, canonical, when it exists.
    store_dir: Option<&'a Path>,
    /// The ids of the sessions in the store when the batch took the import lock (no other
    /// import can add one while it holds it; one deleted since is found missing by [`sync`]):
    /// a file whose session is not among them has no sync mark to sync from, and a store
    /// without sessions needs no look at a file's first lines for its id (that look converts
    /// up to 16 lines; a Codex rollout's first lines, its instructions, are a large part of a
    /// small one); a session not among them is staged as new (`prepare_one`; its commit looks
    /// again).
    existing: Option<&'a HashSet<String>>,
    /// Canonical paths of the directories of the batch's files, each resolved once: as the
    /// directory resolved at the batch's first file in it (a symbolic link retargeted, a
    /// directory renamed or the current directory changed later in the batch is not seen).
    dirs: Option<&'a Mutex<HashMap<PathBuf, PathBuf>>>,
}

impl Batch<'_> {
    /// `path` made canonical ([`Path::canonicalize`]), or `path` as it is when that fails. In a
    /// batch, a regular file (not a symbolic link) is its directory's canonical path (resolved
    /// once per directory, see [`Batch::dirs`]) joined with its name: one `lstat` instead of a
    /// `readlink` per component of the path. Not on macOS and Windows, whose `canonicalize`
    /// also gives a name the case it has on disk (a case-insensitive file system), which the
    /// name as given may not have.
    fn canonical(&self, path: &Path) -> PathBuf {
        let whole = || path.canonicalize().unwrap_or_else(|_| path.to_owned());
        let name_kept = !cfg!(any(target_os = "macos", target_os = "ios", windows));
        let Some(dirs) = self.dirs.filter(|_| name_kept) else {
            return whole();
        };
        let (Some(std::path::Component::Normal(name)), Some(parent)) =
            (path.components().next_back(), path.parent())
        else {
            return whole();
        };
        if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
            return whole();
        }
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let known = dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(parent)
            .cloned();
        let dir = match known {
            Some(dir) => dir,
            None => {
                let Ok(dir) = parent.canonicalize() else {
                    return whole();
                };
                dirs.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(parent.to_owned(), dir.clone());
                dir
            }
        };
        dir.join(name)
    }
}

/// [`prepare_file`] within `batch`; `stage`: write each new session's files under
/// temporary names now ([`SessionStore::stage_session`]), leaving only the renames to the
/// commit.
fn prepare_file_with(
    store: &SessionStore,
    batch: &Batch<'_>,
    path: &Path,
    id: Option<&str>,
    stage: bool,
    stream_min: u64,
) -> Result<PreparedFile> {
    if let Some(id) = id {
        crate::validate_id(id)?;
    }
    let source = batch.canonical(path);
    if let Some(dir) = batch.store_dir
        && source.starts_with(dir)
    {
        return Err(Error::SourceIsStore {
            path: path.to_owned(),
        });
    }
    // Opened once: the sync's look at the first lines, tail and fingerprints, and the whole
    // read when there is no sync, all read this file.
    let transcript = Transcript::open(path)?;
    // A chosen id (`--id`) makes a session of its own: no incremental sync into another one.
    if id.is_none()
        && let Some(done) = sync(store, batch, &transcript, &source)?
    {
        return Ok(PreparedFile {
            source,
            state: Prepared::Done(vec![done]),
        });
    }
    let tmp_name = || store.staging_path("import");
    let (digest, imported, index) =
        crate::import::import_file_streaming(&transcript, stream_min, &tmp_name)?;
    let rename = |sessions: &mut dyn Iterator<Item = &mut ImportedSession>| {
        let Some(id) = id else {
            keep_legacy_ids(store, batch.existing, sessions, &source);
            return;
        };
        let Some(main) = sessions.next() else { return };
        let old = std::mem::replace(&mut main.id, id.to_owned());
        for s in sessions {
            if s.parent_id.as_deref() == Some(old.as_str()) {
                s.parent_id = Some(id.to_owned());
            }
        }
    };
    let mut out = Vec::new();
    match imported {
        FileImport::Memory(mut sessions) => {
            rename(&mut sessions.iter_mut());
            for (i, session) in sessions.into_iter().enumerate() {
                // Only the main session is synced incrementally (subagent sessions split out
                // of the file are re-imported whole when new sidechain lines appear).
                let index = (i == 0).then_some(&index);
                out.push(prepare_one(
                    store,
                    batch.existing,
                    session,
                    &source,
                    &digest,
                    &transcript,
                    index,
                    stage,
                )?);
            }
        }
        FileImport::Spilled(mut sessions) => {
            rename(&mut sessions.iter_mut().map(|s| &mut s.session));
            for (i, spilled) in sessions.into_iter().enumerate() {
                let index = (i == 0).then_some(&index);
                match prepare_spilled(store, spilled, &source, &digest, &transcript, index) {
                    Ok(one) => out.push(one),
                    // A record that does not read back as itself: convert it in memory, so
                    // the output never depends on a JSON round trip (staged files so far are
                    // removed as `out` drops).
                    Err(e) if crate::import::is_not_exact(&e) => {
                        drop(out);
                        return prepare_file_with(store, batch, path, id, stage, u64::MAX);
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(PreparedFile {
        source,
        state: Prepared::Sessions(out),
    })
}

/// The second half of [`import_into_as`]: under the store's import lock, decides for each
/// prepared session (unchanged, replace, refuse) and writes it atomically. `sync_dir`: fsync
/// the sessions directory after each session (a batch passes `false` and calls
/// [`SessionStore::sync_dir`] once at its end).
///
/// Errors: [`Error::IdTaken`], [`Error::WouldDropAppended`], I/O.
pub fn commit_file(
    store: &SessionStore,
    file: PreparedFile,
    sync_dir: bool,
) -> Result<Vec<Ingested>> {
    let sessions = match file.state {
        Prepared::Done(done) => return Ok(done),
        Prepared::Sessions(s) => s,
    };
    let lock = store.lock_imports()?;
    commit_sessions(store, &lock, sessions, &file.source, sync_dir)
}

/// [`commit_file`] under an import lock the caller holds.
fn commit_file_locked(
    store: &SessionStore,
    lock: &ImportLock,
    file: PreparedFile,
    sync_dir: bool,
) -> Result<Vec<Ingested>> {
    match file.state {
        Prepared::Done(done) => Ok(done),
        Prepared::Sessions(s) => commit_sessions(store, lock, s, &file.source, sync_dir),
    }
}

fn commit_sessions(
    store: &SessionStore,
    lock: &ImportLock,
    sessions: Vec<PreparedOne>,
    source: &Path,
    sync_dir: bool,
) -> Result<Vec<Ingested>> {
    let mut out = Vec::with_capacity(sessions.len());
    let mut legacy = LegacySha256::default();
    // The main session (the first) is committed last: its meta marks the source as imported,
    // and the next import of an unchanged source stops at it (`sync`). Committed first, a kill
    // or an error between it and its subagent sessions would leave those missing for good;
    // last, the next import finds no main session and imports the file again whole (the
    // subagent sessions already there are unchanged). So that a refused file still writes
    // nothing, what would refuse the main session is checked before the others are written.
    if sessions.len() > 1 {
        check_main_accepted(store, &sessions[0], source)?;
    }
    let mut sessions = sessions;
    let first = usize::from(!sessions.is_empty());
    sessions.rotate_left(first);
    for one in sessions {
        out.push(commit_one(store, lock, one, source, &mut legacy, sync_dir)?);
    }
    out.rotate_right(first);
    Ok(out)
}

/// Imports many files as one batch: the store's import lock is taken once for the whole batch;
/// files are prepared in parallel on up to `threads` threads (reading, converting, encoding,
/// and writing each new session's `.jsonl` and `.meta` under temporary names:
/// [`SessionStore::stage_session`]); one thread makes the staged files durable a batch at a
/// time (the files that arrive within 1 ms of each other, at most half the window: one
/// `syncfs` of the store's file system where that is sure, i.e. a local disk file system on
/// Linux 5.8 or later, until a sync fails, and while little else waits to be written back:
/// `FileSystem::little_else_dirty`; else each commit fsyncs its `.jsonl`);
/// the commits (checks and two renames per session) run one by one in the order of `files`
/// (so which file wins an id, the output and the ids are the same as a sequential import),
/// with at most `max(8 × threads, 64)` files (the window) prepared ahead of them, fewer while
/// those hold over 256 MiB of encoded sessions in memory. `each` gets every file's result, in
/// order. The sessions directory is fsynced once at the end. What every file needs is worked
/// out once: the store's session ids when the lock was taken, for a batch of several files (a
/// file whose session is not among them is imported whole without reading its first lines
/// for a sync), and each directory's canonical path. A kill at any point leaves each session
/// as it was or whole (staged files are synced before they are renamed); a kill leaves its
/// temporary files (`.*.tmp`, never read), which the next batch removes
/// ([`SessionStore::remove_stale_tmp`]) once it holds the lock.
///
/// Errors: taking the import lock, the final directory fsync; each file's own error goes to
/// `each`.
pub fn import_many(
    store: &SessionStore,
    files: &[PathBuf],
    id: Option<&str>,
    threads: usize,
    mut each: impl FnMut(usize, Result<Vec<Ingested>>),
) -> Result<()> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, mpsc};
    let threads = threads.clamp(1, files.len().max(1));
    // Prepared files hold only their metas and reports (new sessions are staged on disk, one
    // open file each until its commit), so the window can run well ahead of the commits: far
    // enough that the workers go on while a batch syncs (with 16 files on 2 cores they waited
    // for the syncs: 11 % more wall time on 100 MB of rollouts, `docs/BENCHMARKS.md`).
    let window = (8 * threads).max(MIN_WINDOW);
    // Taken once for the whole import: the workers' incremental syncs and the commits use it.
    let lock = store.lock_imports()?;
    // What a killed import (or writer) left: never read, but it takes space.
    store.remove_stale_tmp(&lock)?;
    // Taking the lock created the directory: its canonical path, once for every file.
    let store_dir = store.dir().canonicalize().ok();
    // The store's ids, for a batch of several files: one listing instead of a look at each
    // file's first lines and a stat. A single file (a hook's import on every turn) keeps its
    // one stat rather than listing a store of thousands of sessions.
    let existing: Option<HashSet<String>> = if files.len() > 1 {
        Some(store.ids()?.into_iter().collect())
    } else {
        None
    };
    let dirs = Mutex::new(HashMap::new());
    let batch = Batch {
        lock: Some(&lock),
        store_dir: store_dir.as_deref(),
        existing: existing.as_ref(),
        dirs: Some(&dirs),
    };
    let next = AtomicUsize::new(0);
    let committed = (Mutex::new(0usize), Condvar::new());
    // Bytes of encoded sessions the prepared files hold in memory until their commits.
    let held = AtomicUsize::new(0);
    let mut wrote = false;
    // Staged files are made durable a batch at a time, before their commits: one sync of the
    // whole file system for a batch (`sync_batch`).
    let file_system = FileSystem::of(store.dir());
    std::thread::scope(|scope| {
        // Workers → the sync thread (one sync per batch of files, at most half the window) →
        // the ordered commits below.
        let (tx, to_sync) = mpsc::channel::<(usize, Result<PreparedFile>)>();
        let (synced, rx) = mpsc::channel::<(usize, Result<PreparedFile>)>();
        let file_system = &file_system;
        scope.spawn(move || {
            let mut file_system = file_system.as_ref();
            while let Ok(first) = to_sync.recv() {
                // Each sync has a cost of its own: a batch takes the files that come within
                // `BATCH_WAIT` of each other, up to half the window (the workers go on with
                // the other half while it syncs).
                let mut batch = vec![first];
                while batch.len() < window / 2 {
                    match to_sync.recv_timeout(BATCH_WAIT) {
                        Ok(more) => batch.push(more),
                        Err(_) => break,
                    }
                }
                if !sync_batch(file_system, &mut batch) {
                    // What failed may be any file on the file system, ours or not, and the
                    // next `syncfs` would not report it again: from now on each commit
                    // fsyncs its own files, which reports their own errors.
                    file_system = None;
                }
                for item in batch {
                    if synced.send(item).is_err() {
                        return;
                    }
                }
            }
        });
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, committed, batch, held) = (&next, &committed, &batch, &held);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= files.len() {
                        break;
                    }
                    // Wait until the commits are within the window of this file.
                    {
                        let (lock, cv) = committed;
                        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                        // Also while the files ahead hold more than `HELD_MAX` bytes of
                        // encoded sessions (re-imports of changed transcripts); never for the
                        // file the commits wait for.
                        while i >= *done + window
                            || (i > *done && held.load(Ordering::SeqCst) > HELD_MAX)
                        {
                            done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    let prepared =
                        prepare_file_with(store, batch, &files[i], id, true, STREAM_MIN_BYTES);
                    if let Ok(p) = &prepared {
                        held.fetch_add(p.held_bytes(), Ordering::SeqCst);
                    }
                    if tx.send((i, prepared)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Result<PreparedFile>> = BTreeMap::new();
        let mut want = 0usize;
        for (i, prepared) in rx {
            pending.insert(i, prepared);
            while let Some(prepared) = pending.remove(&want) {
                let held_here = prepared.as_ref().map_or(0, PreparedFile::held_bytes);
                let result = prepared.and_then(|p| {
                    wrote |= matches!(p.state, Prepared::Sessions(_));
                    commit_file_locked(store, &lock, p, false)
                });
                each(want, result);
                want += 1;
                held.fetch_sub(held_here, Ordering::SeqCst);
                let (lock, cv) = &committed;
                *lock.lock().unwrap_or_else(|e| e.into_inner()) = want;
                cv.notify_all();
            }
        }
    });
    if wrote {
        store.sync_dir()?;
    }
    Ok(())
}

/// The fewest files [`import_many`] prepares ahead of its commits (64).
const MIN_WINDOW: usize = 64;

/// The most bytes of encoded sessions (those that exist already and are replaced: they are
/// held in memory, not staged on disk) [`import_many`] lets files prepared ahead of the
/// commits hold before its workers wait (256 MiB; one file may go past it).
const HELD_MAX: usize = 256 << 20;

/// How long [`import_many`]'s sync thread waits for one more file before it syncs the batch it
/// holds (1 ms: the workers prepare a small rollout in well under that).
const BATCH_WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// Makes the staged sessions of `ready` durable before their commits with one `syncfs` of the
/// store's file system (every one was written before this call), and marks them synced;
/// `false` when that sync failed: nothing is marked, and each commit then fsyncs its own
/// `.jsonl` ([`SessionStore::commit_staged`]), as it does without a handle. A batch synced
/// while other programs' data waits to be written back ([`FileSystem::little_else_dirty`]) is
/// left to those fsyncs too: the `syncfs` would write back (and wait for) far more than the
/// batch.
fn sync_batch(
    file_system: Option<&FileSystem>,
    ready: &mut [(usize, Result<PreparedFile>)],
) -> bool {
    let Some(file_system) = file_system else {
        return true;
    };
    // Only the files not synced yet (a session converted as it was read is synced when
    // staged): their bytes are the batch's own in the unwritten page cache.
    let (mut staged, mut bytes) = (0usize, 0u64);
    for (_, p) in ready.iter_mut() {
        if let Ok(file) = p {
            for s in file.staged_mut().filter(|s| !s.is_synced()) {
                staged += 1;
                bytes += s.meta().jsonl_bytes;
            }
        }
    }
    if staged == 0 || !file_system.little_else_dirty(bytes) {
        return true;
    }
    if file_system.sync().is_err() {
        return false;
    }
    for (_, p) in ready.iter_mut() {
        if let Ok(file) = p {
            file.staged_mut()
                .for_each(StagedSession::synced_with_file_system);
        }
    }
    true
}

/// Claude Code transcripts of at least this many bytes (16 MiB) are converted as they are read
/// and their sessions written out as they are converted, so memory stays flat whatever the
/// size of the file (`import::import_file_streaming`); smaller ones are converted in memory,
/// which costs less CPU. The output is the same either way.
pub const STREAM_MIN_BYTES: u64 = 16 << 20;

/// Bytes hashed at each end of the source before the sync mark.
const FINGERPRINT_WINDOW: u64 = 64 << 10;

/// The [`SyncMark`] for restarting at the record `records[cut]`, whose session state is
/// `session` (`None` when that record has no source line read).
fn sync_mark_at(
    transcript: &Transcript,
    index: &LineIndex,
    records: &[SessionRecord],
    cut: usize,
    session: MetaMark,
) -> Result<Option<SyncMark>> {
    let Some(line) = source_line(&records[cut]) else {
        return Ok(None);
    };
    let Some(offset) = index.offset_of(line) else {
        return Ok(None);
    };
    let (head, before) = fingerprints(transcript, index.source(), offset, Fingerprint::Xxh3)?;
    Ok(Some(SyncMark {
        offset,
        line,
        head,
        before,
        session,
    }))
}

/// How a sync mark's `head` and `before` windows are hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fingerprint {
    /// XXH3-128, 32 lowercase hex digits: the marks written now (SHA-256 of the two windows
    /// was 3.2 % of a Codex import's CPU samples; the windows only detect a rewritten source,
    /// they guard nothing against an adversary).
    Xxh3,
    /// SHA-256, 64 lowercase hex digits: marks written before the XXH3 fingerprints, still
    /// checked as they were written.
    Sha256,
}

impl Fingerprint {
    /// The hash a mark's fingerprint `hex` was made with (told by its length).
    fn of_mark(hex: &str) -> Fingerprint {
        if hex.len() == 64 {
            Fingerprint::Sha256
        } else {
            Fingerprint::Xxh3
        }
    }

    fn hex(self, bytes: &[u8]) -> String {
        match self {
            Fingerprint::Xxh3 => crate::import::xxh3_hex(xxhash_rust::xxh3::xxh3_128(bytes)),
            Fingerprint::Sha256 => hex(&Sha256::digest(bytes)),
        }
    }
}

/// The `hash` fingerprints of the source's first (up to) 64 KiB before `offset`, and of the
/// (up to) 64 KiB right before `offset`: of `source`, the file's bytes as they were read, when
/// it holds them (its first `offset` bytes at least), else read from `transcript`.
fn fingerprints(
    transcript: &Transcript,
    source: Option<&[u8]>,
    offset: u64,
    hash: Fingerprint,
) -> Result<(String, String)> {
    let held = source.filter(|bytes| offset <= bytes.len() as u64);
    let window = |start: u64, end: u64| -> Result<String> {
        match held {
            // Both ends are at most `offset`, within the bytes held.
            Some(held) => Ok(hash.hex(&held[start as usize..end as usize])),
            None => {
                let mut buf = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
                transcript
                    .read_exact_at(&mut buf, start)
                    .map_err(|e| Error::io("cannot read", transcript.path(), e))?;
                Ok(hash.hex(&buf))
            }
        }
    };
    Ok((
        window(0, offset.min(FINGERPRINT_WINDOW))?,
        window(offset.saturating_sub(FINGERPRINT_WINDOW), offset)?,
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `source_line` of a record's message.
fn source_line(record: &SessionRecord) -> Option<usize> {
    let line = record
        .message
        .as_ref()?
        .metadata
        .get("source_line")?
        .as_u64()?;
    usize::try_from(line).ok()
}

/// The record the next incremental import restarts at: the last user message that is not
/// only tool results, or the last assistant message. No later line can change a record
/// before it: a new message starts there (Claude's streamed pieces merge only into the last
/// assistant message across tool results; Codex items only into the message right before).
fn sync_cut(records: &[SessionRecord]) -> Option<usize> {
    records.iter().rposition(|r| {
        let restart = match (r.record_type, &r.message) {
            (RecordType::Assistant, Some(_)) => true,
            (RecordType::User, Some(m)) => !m.is_tool_result_only(),
            _ => false,
        };
        restart && source_line(r).is_some()
    })
}

/// Why the lines from the mark on cannot be converted without the lines before it, if so.
fn not_self_contained(
    format: SourceFormat,
    sessions: &[ImportedSession],
    mark: &SyncMark,
) -> Option<&'static str> {
    let [session] = sessions else {
        return Some("an inline sidechain");
    };
    if matches!(format, SourceFormat::Codex | SourceFormat::CodexLegacy)
        && session.source_session_id.is_some()
    {
        return Some("a Codex session_meta line");
    }
    let first = session.records.iter().find_map(source_line);
    if first != Some(mark.line) {
        return Some("the line at the mark no longer starts a message");
    }
    let mut calls = std::collections::HashSet::new();
    for r in &session.records {
        if r.record_type == RecordType::CompactBoundary
            && r.extra
                .get("compact_metadata")
                .and_then(|m| m.get("preservedSegment"))
                .is_some()
        {
            return Some("a compaction that keeps earlier messages");
        }
        if let Some(m) = &r.message {
            calls.extend(m.tool_use_ids());
            if m.tool_result_ids().any(|id| !calls.contains(id)) {
                return Some("a tool result whose call came before the mark");
            }
        }
    }
    None
}

/// The incremental import of a source imported before (see the module docs). `Ok(None)`: do a
/// whole import instead (first import, no mark, the source was rewritten before the mark or
/// truncated, records were appended to the session, lines that need what came before).
fn sync(
    store: &SessionStore,
    batch: &Batch<'_>,
    transcript: &Transcript,
    source: &Path,
) -> Result<Option<Ingested>> {
    let path = transcript.path();
    if batch.existing.is_some_and(HashSet::is_empty) {
        return Ok(None);
    }
    // A file the look at its first lines cannot place is left to the whole import, which
    // tells the format from its first values (not lines) and reports what it finds: a file
    // imports or fails the same whether or not the store holds sessions (a batch into an
    // empty store takes no look).
    let Ok(Some((id, format))) = head_id(transcript) else {
        return Ok(None);
    };
    let exists = match batch.existing {
        Some(ids) => ids.contains(&id),
        None => store.jsonl_path(&id).is_file(),
    };
    let id = match (exists, legacy_id(store, batch.existing, &id, source)) {
        (true, _) => id,
        (false, Some(legacy)) => legacy,
        (false, None) => return Ok(None),
    };
    let taken;
    let lock = match batch.lock {
        Some(lock) => lock,
        None => {
            taken = store.lock_imports()?;
            &taken
        }
    };
    // The checks need no token count: a pending one stays pending. A session gone since
    // (deleted by another process, which takes no import lock; a batch's `existing` is read
    // once at its start) has no mark to sync from.
    let meta = match store.meta_with(&id, false) {
        Ok(meta) => meta,
        Err(Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    if check_same_source(&meta, source).is_err() {
        return Ok(None);
    }
    let Some(mark) = SyncMark::of(&meta) else {
        return Ok(None);
    };
    let len = transcript.len_now()?;
    if len < mark.offset
        || fingerprints(
            transcript,
            None,
            mark.offset,
            Fingerprint::of_mark(&mark.head),
        )? != (mark.head.clone(), mark.before.clone())
    {
        tracing::debug!(
            "{}: rewritten before the sync mark; importing it whole",
            path.display()
        );
        return Ok(None);
    }
    // Records appended since the import: only `checkpoint restore`'s rollbacks are built on
    // (see `after_rollback`); anything else is refused by the whole import.
    let rolled_back = local_appends(&meta) && only_rollbacks_since_import(store, &meta)?;
    if local_appends(&meta) && !rolled_back {
        return Ok(None);
    }
    let (mut sessions, index) = import_tail(transcript, format, mark.offset, mark.line)?;
    if let Some(why) = not_self_contained(format, &sessions, &mark) {
        tracing::debug!(
            "{}: the new lines hold {why}; importing it whole",
            path.display()
        );
        return Ok(None);
    }
    let Some(session) = sessions.pop() else {
        return Ok(None);
    };
    let cut = sync_cut(&session.records);
    let records = session.records;
    let source_owned = source.to_owned();
    // After a rollback: the records from the mark to the import's end stay where they are (the
    // rollback's `to_bytes` may point among them) and only what the source added is appended
    // after the rollback records.
    let (base, skip) = if rolled_back {
        after_rollback(store, &meta, &mark, &records)?
    } else {
        (mark.session.clone(), 0)
    };
    if skip == records.len() && rolled_back {
        return Ok(Some(Ingested {
            meta,
            action: IngestAction::Unchanged,
            report: session.report,
            format,
        }));
    }
    let mark_at = cut.filter(|&c| c >= skip).map(|c| c - skip);
    let expected_len = meta.jsonl_bytes;
    let (meta, rewritten) = store.rewrite_tail(
        lock,
        &id,
        &base,
        &records[skip..],
        mark_at,
        |current, _len| {
            if rolled_back {
                if current.jsonl_bytes != expected_len {
                    return Err(Error::WouldDropAppended {
                        id: current.id.clone(),
                        source_path: source_owned.clone(),
                    });
                }
                return Ok(());
            }
            if local_appends(current) {
                Err(Error::WouldDropAppended {
                    id: current.id.clone(),
                    source_path: source_owned.clone(),
                })
            } else {
                Ok(())
            }
        },
        |meta, session_mark| {
            let next = match (cut, session_mark) {
                (Some(c), Some(m)) if c >= skip => {
                    sync_mark_at(transcript, &index, &records, c, m)?
                }
                _ => None,
            };
            let bytes = meta.jsonl_bytes;
            if let Some(Value::Object(imported)) = meta.extra.get_mut(IMPORTED_KEY) {
                imported.insert("bytes".to_owned(), json!(bytes));
                // The whole-file digest no longer describes the source.
                imported.remove(DIGEST_KEY);
                imported.remove(LEGACY_SHA256_KEY);
                match next.map(serde_json::to_value) {
                    Some(Ok(v)) => {
                        imported.insert(SYNC_KEY.to_owned(), v);
                    }
                    _ => {
                        imported.remove(SYNC_KEY);
                    }
                }
            }
            Ok(())
        },
    )?;
    Ok(Some(Ingested {
        meta,
        action: if rewritten {
            IngestAction::Appended
        } else {
            IngestAction::Unchanged
        },
        report: session.report,
        format,
    }))
}

/// `true` when every record appended to the session after its last import is a `rollback`
/// (`mem checkpoint restore`, `docs/formats/session.md`): the sync goes on after them.
fn only_rollbacks_since_import(store: &SessionStore, meta: &SessionMeta) -> Result<bool> {
    let Some(imported) = meta
        .extra
        .get(IMPORTED_KEY)
        .and_then(|i| i.get("bytes"))
        .and_then(Value::as_u64)
        .filter(|&b| b < meta.jsonl_bytes)
    else {
        return Ok(false);
    };
    let appended = store.records_between(&meta.id, imported, meta.jsonl_bytes)?;
    Ok(!appended.is_empty()
        && appended
            .iter()
            .all(|r| r.record_type == RecordType::Rollback))
}

/// The session's length when the records appended since its import are all rollbacks.
fn rolled_back_length(store: &SessionStore, meta: &SessionMeta) -> Result<Option<u64>> {
    Ok(only_rollbacks_since_import(store, meta)?.then_some(meta.jsonl_bytes))
}

/// Where the sync of a session rolled back since its import writes, and how many of the
/// converted `records` (from the mark on) it leaves out: the records from the mark to the
/// import's end are kept as they are (a rollback's `to_bytes` may point among them), so the
/// converted records they already hold (the longest common prefix) are not written again, and
/// the rest is appended after the rollback records (`base`: the session's end now). A message
/// that grew since (a streamed piece merged into it) is written again whole after the
/// rollback. The replay is then the checkpoint's followed by the new messages.
fn after_rollback(
    store: &SessionStore,
    meta: &SessionMeta,
    mark: &SyncMark,
    records: &[SessionRecord],
) -> Result<(MetaMark, usize)> {
    let imported = meta
        .extra
        .get(IMPORTED_KEY)
        .and_then(|i| i.get("bytes"))
        .and_then(Value::as_u64)
        .unwrap_or(meta.jsonl_bytes);
    let old = store.records_between(&meta.id, mark.session.bytes, imported)?;
    let skip = old.iter().zip(records).take_while(|(a, b)| a == b).count();
    let base = MetaMark {
        bytes: meta.jsonl_bytes,
        tail: meta.jsonl_tail.clone(),
        message_count: meta.message_count,
        token_count: meta.token_count,
        tokens_pending_from: meta.tokens_pending_from,
        compactions: meta.compactions,
        last_active: meta.last_active.clone(),
    };
    Ok((base, skip))
}

/// `true` when records were appended to the session after its last import (and not by an
/// interrupted incremental import, which leaves `rewriting` in the meta).
fn local_appends(meta: &SessionMeta) -> bool {
    if meta.extra.contains_key(REWRITING_KEY) {
        return false;
    }
    let imported = meta
        .extra
        .get(IMPORTED_KEY)
        .and_then(|i| i.get("bytes"))
        .and_then(Value::as_u64);
    imported != Some(meta.jsonl_bytes)
}

/// Key of the import provenance holding the source's digest ([`crate::import::digest_hex`]).
const DIGEST_KEY: &str = "xxh3";

/// Key of the import provenance holding the source's SHA-256 in metas written before the
/// XXH3 digest (read, never written).
const LEGACY_SHA256_KEY: &str = "sha256";

/// The meta an imported session starts from: its id, times and title, and the import
/// provenance (`imported`: `format`, `path`, `xxh3`, `cwd`; `docs/formats/session.md`).
#[allow(clippy::too_many_arguments)]
fn import_seed(
    id: &str,
    created: Option<String>,
    title: Option<String>,
    parent_id: Option<String>,
    format: SourceFormat,
    source: &Path,
    digest: &str,
    cwd: Option<String>,
) -> SessionMeta {
    let created = created
        .unwrap_or_else(|| chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let mut seed = SessionMeta::new(id, created);
    seed.title = title;
    seed.parent_id = parent_id;
    let mut imported = Map::new();
    imported.insert("format".to_owned(), json!(format.to_string()));
    imported.insert("path".to_owned(), json!(source.display().to_string()));
    imported.insert(DIGEST_KEY.to_owned(), json!(digest));
    if let Some(cwd) = cwd {
        imported.insert("cwd".to_owned(), json!(cwd));
    }
    seed.extra
        .insert(IMPORTED_KEY.to_owned(), Value::Object(imported));
    seed
}

/// A session of the source with no records (e.g. only `summary` lines): nothing to write, its
/// meta for the report only.
fn empty_session(
    id: &str,
    created: Option<String>,
    title: Option<String>,
    parent_id: Option<String>,
    report: ImportReport,
    format: SourceFormat,
) -> PreparedOne {
    let mut meta = SessionMeta::new(id, created.unwrap_or_default());
    meta.title = title;
    meta.parent_id = parent_id;
    PreparedOne::Empty(Ingested {
        meta,
        action: IngestAction::Empty,
        report,
        format,
    })
}

/// Whether the import provenance `imported` describes the same source bytes as `digest`: its
/// `xxh3` is `digest`, or, in a meta written before the XXH3 digest (and without `xxh3`), its
/// `sha256` is the SHA-256 of `source` as it is now ([`LegacySha256`]). An unreadable source is
/// not the same.
fn same_digest(imported: &Value, digest: &str, legacy: &mut LegacySha256, source: &Path) -> bool {
    if let Some(d) = imported.get(DIGEST_KEY).and_then(Value::as_str) {
        return d == digest;
    }
    let Some(sha256) = imported.get(LEGACY_SHA256_KEY).and_then(Value::as_str) else {
        return false;
    };
    legacy.of(source) == Some(sha256)
}

/// The SHA-256 (64 lowercase hex digits) of a source's bytes, for the metas written before the
/// XXH3 digest: read lazily, at most once per commit of the source's sessions (a Claude Code
/// transcript gives one session per sidechain, each with such a meta).
#[derive(Default)]
struct LegacySha256(Option<Option<String>>);

impl LegacySha256 {
    /// The digest of `source` (the same file on every call); `None` when it cannot be read.
    fn of(&mut self, source: &Path) -> Option<&str> {
        self.0
            .get_or_insert_with(|| {
                let mut file = Transcript::open(source).ok()?.into_file();
                let mut hasher = Sha256::new();
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    match std::io::Read::read(&mut file, &mut buf) {
                        Ok(0) => return Some(hex(&hasher.finalize())),
                        Ok(n) => hasher.update(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => return None,
                    }
                }
            })
            .as_deref()
    }
}

#[allow(clippy::too_many_arguments)]
fn prepare_one(
    store: &SessionStore,
    existing: Option<&HashSet<String>>,
    session: ImportedSession,
    source: &Path,
    digest: &str,
    transcript: &Transcript,
    index: Option<&LineIndex>,
    stage: bool,
) -> Result<PreparedOne> {
    // `last_active` comes from the records' timestamps as they are written.
    let ImportedSession {
        id,
        title,
        parent_id,
        format,
        created,
        cwd,
        records,
        report,
        ..
    } = session;
    if records.is_empty() {
        return Ok(empty_session(
            &id, created, title, parent_id, report, format,
        ));
    }
    let seed = import_seed(&id, created, title, parent_id, format, source, digest, cwd);
    let mut prepared = store.prepare_session(seed, &records)?;
    if let (Some(index), Some(cut)) = (index, index.and(sync_cut(&records))) {
        let meta = &mut prepared.meta;
        let before = cut.checked_sub(1).map(|i| &records[i]);
        let session_mark = store.mark_before(meta, before, &records[cut..])?;
        if let Some(mark) = sync_mark_at(transcript, index, &records, cut, session_mark)?
            && let Some(Value::Object(imported)) = meta.extra.get_mut(IMPORTED_KEY)
            && let Ok(v) = serde_json::to_value(mark)
        {
            imported.insert(SYNC_KEY.to_owned(), v);
        }
    }
    // A session that exists already may be unchanged (nothing to write): the commit decides,
    // from the bytes in memory. A new one is written now (synced by its batch or its commit),
    // when asked. In a batch, "exists" is the listing taken at its start: no lookup of a name
    // not in the directory, which waits for the directory's lock while other sessions are
    // created and renamed in it (~100 waits a worker on 100 MB of rollouts). A session made
    // since by another writer is staged all the same, and the commit, which looks again,
    // decides as for any other.
    let exists = |id: &str| match existing {
        Some(ids) => ids.contains(id),
        None => store.jsonl_path(id).is_file(),
    };
    let payload = if stage && !exists(&prepared.meta.id) {
        Payload::Staged(store.stage_session(prepared)?)
    } else {
        Payload::Encoded(prepared)
    };
    Ok(PreparedOne::Write {
        payload,
        digest: digest.to_owned(),
        report,
        format,
    })
}

/// [`prepare_one`] for a session converted as it was read: its records are in a spill file.
/// The main session's spill is its staged `.jsonl` as it is; a sidechain's records are copied
/// out of the shared spill into a staged file of their own. The meta is computed by reading the
/// records back one at a time; the session is always staged (the commit removes it when the
/// session is unchanged).
fn prepare_spilled(
    store: &SessionStore,
    spilled: SpilledSession,
    source: &Path,
    digest: &str,
    transcript: &Transcript,
    index: Option<&LineIndex>,
) -> Result<PreparedOne> {
    let path = transcript.path();
    let SpilledSession { session, spill } = spilled;
    let ImportedSession {
        id,
        title,
        parent_id,
        format,
        created,
        cwd,
        report,
        ..
    } = session;
    if spill.len() == 0 {
        return Ok(empty_session(
            &id, created, title, parent_id, report, format,
        ));
    }
    let io = |e: std::io::Error| Error::io("cannot write a temporary file for", path, e);
    let seed = import_seed(&id, created, title, parent_id, format, source, digest, cwd);
    let cut = spill.tally.cut;
    let n = spill.len();
    let spill = if spill.is_named() && spill.is_whole_file() {
        spill
    } else {
        let p = store.staging_path(&id).map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| Error::io("cannot create", &p, e))?;
        let file = crate::import::SpillFile::new(file, Some(p)).map_err(io)?;
        let mut to = crate::import::Spill::new(std::rc::Rc::new(std::cell::RefCell::new(file)));
        for i in 0..n {
            to.write_line(&spill.read_line(i).map_err(io)?);
        }
        to
    };
    let bytes = spill.file_len();
    let tail = crate::store::tail_fingerprint(&spill.file_tail(32).map_err(io)?);
    let records = (0..n).map(|i| {
        let offset = spill
            .offset(i)
            .ok_or_else(|| io(std::io::Error::other("record index out of range")))?;
        Ok((spill.read(i).map_err(io)?, offset))
    });
    let mut meta = store.meta_of_written(seed, records, bytes, tail)?;
    if let (Some(index), Some(cut)) = (index, cut) {
        let before = match cut.checked_sub(1) {
            Some(i) => Some(spill.read(i).map_err(io)?),
            None => None,
        };
        let tail = (cut..n)
            .map(|i| spill.read(i).map_err(io))
            .collect::<Result<Vec<SessionRecord>>>()?;
        let session_mark = store.mark_before(&meta, before.as_ref(), &tail)?;
        if let Some(mark) = sync_mark_at(transcript, index, &tail, 0, session_mark)?
            && let Some(Value::Object(imported)) = meta.extra.get_mut(IMPORTED_KEY)
            && let Ok(v) = serde_json::to_value(mark)
        {
            imported.insert(SYNC_KEY.to_owned(), v);
        }
    }
    let (file, tmp, _) = spill.into_file().map_err(io)?;
    let Some(tmp) = tmp else {
        return Err(io(std::io::Error::other("the session file has no name")));
    };
    let staged = store.stage_written(meta, tmp, file)?;
    Ok(PreparedOne::Write {
        payload: Payload::Staged(staged),
        digest: digest.to_owned(),
        report,
        format,
    })
}

/// The refusals [`commit_one`] would give the main session of a file, checked before its
/// subagent sessions are committed (they are committed first): its id taken by another source
/// ([`Error::IdTaken`]), or records appended to it since its import
/// ([`Error::WouldDropAppended`]). A session without provenance beside an encoded payload is
/// left to the commit (which may put its meta back).
fn check_main_accepted(store: &SessionStore, main: &PreparedOne, source: &Path) -> Result<()> {
    let PreparedOne::Write { payload, .. } = main else {
        return Ok(());
    };
    let id = payload.id();
    if !store.jsonl_path(id).is_file() {
        return Ok(());
    }
    let existing = store.meta_with(id, false)?;
    if !existing.extra.contains_key(IMPORTED_KEY) && matches!(payload, Payload::Encoded(_)) {
        return Ok(());
    }
    let rolled = rolled_back_length(store, &existing)?;
    check_replaceable(&existing, source, rolled)
}

/// Whether an import of `source` may replace the session `existing`: it came from the same
/// source ([`check_same_source`]) and nothing was appended to it since that import (else
/// [`Error::WouldDropAppended`], unless the session is being rewritten on purpose).
///
/// `rolled_back`: the session's length when every record appended since the import is a
/// `checkpoint restore` rollback ([`rolled_back_length`]): a whole re-import (the source was
/// rewritten, or its new lines cannot be synced alone) then replaces the session, rollbacks
/// included, rather than stopping the sync for good; the replay is the source's again.
fn check_replaceable(
    existing: &SessionMeta,
    source: &Path,
    rolled_back: Option<u64>,
) -> Result<()> {
    check_same_source(existing, source)?;
    if rolled_back == Some(existing.jsonl_bytes) {
        return Ok(());
    }
    let appended = existing
        .extra
        .get(IMPORTED_KEY)
        .and_then(|i| i.get("bytes"))
        .and_then(Value::as_u64)
        .is_some_and(|bytes| existing.jsonl_bytes > bytes)
        && !existing.extra.contains_key(REWRITING_KEY);
    if appended {
        return Err(Error::WouldDropAppended {
            id: existing.id.clone(),
            source_path: source.to_owned(),
        });
    }
    Ok(())
}

fn commit_one(
    store: &SessionStore,
    lock: &ImportLock,
    one: PreparedOne,
    source: &Path,
    legacy: &mut LegacySha256,
    sync_dir: bool,
) -> Result<Ingested> {
    let (payload, digest, report, format) = match one {
        PreparedOne::Empty(done) => return Ok(done),
        PreparedOne::Write {
            payload,
            digest,
            report,
            format,
        } => (payload, digest, report, format),
    };
    let id = payload.id().to_owned();
    if store.jsonl_path(&id).is_file() {
        let existing = store.meta_with(&id, false)?;
        // A meta that lost its provenance (rebuilt from the records) beside exactly the
        // records this import writes: this import's own session; its meta is put back.
        if !existing.extra.contains_key(IMPORTED_KEY)
            && let Payload::Encoded(prepared) = &payload
            && let Some(meta) = store.restore_import_meta(lock, prepared)?
        {
            return Ok(Ingested {
                meta,
                action: IngestAction::Unchanged,
                report,
                format,
            });
        }
        check_same_source(&existing, source)?;
        if let Some(imported) = existing.extra.get(IMPORTED_KEY)
            // The size first: it is free, a legacy digest reads the whole source.
            && imported.get("bytes").and_then(Value::as_u64) == Some(existing.jsonl_bytes)
            && same_digest(imported, &digest, legacy, source)
        {
            return Ok(Ingested {
                meta: existing,
                action: IngestAction::Unchanged,
                report,
                format,
            });
        }
    }
    let rolled = match store.jsonl_path(&id).is_file() {
        true => match store.meta_with(&id, false) {
            Ok(existing) => rolled_back_length(store, &existing)?,
            Err(_) => None,
        },
        false => None,
    };
    let keep = |existing: &SessionMeta| check_replaceable(existing, source, rolled);
    let (outcome, meta) = match payload {
        Payload::Encoded(prepared) => store.write_prepared(lock, prepared, keep, sync_dir)?,
        Payload::Staged(staged) => store.commit_staged(lock, staged, keep, sync_dir)?,
    };
    let action = match outcome {
        WriteOutcome::Created => IngestAction::Created,
        WriteOutcome::Replaced => IngestAction::Replaced,
    };
    Ok(Ingested {
        meta,
        action,
        report,
        format,
    })
}

/// Refuses to replace a session that did not come from `source`: one mewmem wrote itself, or
/// one imported from another file that happens to give the same id.
fn check_same_source(existing: &SessionMeta, source: &Path) -> Result<()> {
    let from = existing
        .extra
        .get(IMPORTED_KEY)
        .and_then(|i| i.get("path"))
        .and_then(Value::as_str);
    match from {
        Some(p) if Path::new(p) == source => Ok(()),
        other => Err(Error::IdTaken {
            id: existing.id.clone(),
            existing_source: other.map(PathBuf::from),
            source_path: source.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The fingerprints taken from a file's bytes in memory are those read from the file, for
    /// offsets inside, at and around both windows; bytes that stop short of the offset are not
    /// used.
    #[test]
    fn fingerprints_from_memory_are_those_of_the_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("t.jsonl");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let transcript = Transcript::open(&path).unwrap();
        let w = FINGERPRINT_WINDOW;
        for offset in [
            0,
            1,
            100,
            w - 1,
            w,
            w + 1,
            2 * w,
            2 * w + 5,
            199_999,
            200_000,
        ] {
            for hash in [Fingerprint::Xxh3, Fingerprint::Sha256] {
                let read = fingerprints(&transcript, None, offset, hash).unwrap();
                let held = fingerprints(&transcript, Some(&bytes), offset, hash).unwrap();
                assert_eq!(held, read, "offset {offset}");
                // Short bytes: read from the file instead.
                let short = fingerprints(&transcript, Some(&bytes[..10]), offset, hash).unwrap();
                assert_eq!(short, read, "offset {offset}, short");
            }
        }
        // The windows differ with the offset (the test is not comparing constants).
        let a = fingerprints(&transcript, Some(&bytes), 2 * w, Fingerprint::Xxh3).unwrap();
        let b = fingerprints(&transcript, Some(&bytes), 2 * w + 5, Fingerprint::Xxh3).unwrap();
        assert_eq!(a.0, b.0);
        assert_ne!(a.1, b.1);
    }

    /// Imports `file` into a fresh store under `dir`, converted as read (`stream_min` 0) or in
    /// memory (`u64::MAX`); returns the store's files (metas with `created`/`last_active`
    /// blanked when the session has no timestamps: they are the clock then) and the results.
    fn import_as(file: &Path, dir: &Path, stream_min: u64) -> (BTreeMap<String, String>, String) {
        let store = SessionStore::at(dir.join("sessions"));
        let result = prepare_file_with(&store, &Batch::default(), file, None, true, stream_min)
            .and_then(|p| commit_file(&store, p, true));
        let shown = match &result {
            Ok(done) => done
                .iter()
                .map(|d| format!("{:?} {:?} {:?}\n", d.action, d.report, d.format))
                .collect(),
            Err(e) => format!("error: {e}"),
        };
        let mut files = BTreeMap::new();
        // The deferred token counts, completed by a reader, agree too (read after the files
        // are listed: completing a count rewrites the meta).
        let mut counts = String::new();
        if let Ok(entries) = std::fs::read_dir(store.dir()) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default())
                    .into_owned();
                files.insert(name, text);
            }
        }
        let names: Vec<String> = files.keys().cloned().collect();
        for name in names {
            let Some(stem) = name.strip_suffix(".meta") else {
                continue;
            };
            let timed = files
                .get(&format!("{stem}.jsonl"))
                .is_some_and(|j| j.contains("\"timestamp\""));
            if !timed && let Some(text) = files.get_mut(&name) {
                let mut v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                for key in ["created", "last_active"] {
                    if let Some(o) = v.as_object_mut() {
                        o.insert(key.to_owned(), json!(""));
                    }
                }
                *text = v.to_string();
            }
        }
        for name in files.keys() {
            if let Some(id) = name.strip_suffix(".meta") {
                match store.meta(id) {
                    Ok(m) => counts.push_str(&format!("{id}: {} tokens\n", m.token_count)),
                    Err(e) => counts.push_str(&format!("{id}: {e}\n")),
                }
            }
        }
        (files, format!("{shown}{counts}"))
    }

    fn same_both_ways(file: &Path) {
        let a = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let b = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (mem_files, mem_shown) = import_as(file, a.path(), u64::MAX);
        let (str_files, str_shown) = import_as(file, b.path(), 0);
        assert_eq!(mem_shown, str_shown, "{}: results differ", file.display());
        assert_eq!(
            mem_files.keys().collect::<Vec<_>>(),
            str_files.keys().collect::<Vec<_>>(),
            "{}: files differ",
            file.display()
        );
        for (name, text) in &mem_files {
            assert!(
                str_files.get(name) == Some(text),
                "{}: {name} differs:\n{text}\n---\n{:?}",
                file.display(),
                str_files.get(name)
            );
        }
    }

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
    }

    #[test]
    fn streamed_import_writes_what_the_import_in_memory_writes_on_every_fixture() {
        let mut n = 0;
        for e in walkdir::WalkDir::new(fixtures()).sort_by_file_name() {
            let Ok(e) = e else { continue };
            if e.path().extension().is_some_and(|x| x == "jsonl") {
                same_both_ways(e.path());
                n += 1;
            }
        }
        assert!(n > 40, "{n} fixtures");
        // The fuzz seeds of the Claude importer (damaged and odd files, and one whose content
        // blocks do not survive a JSON round trip: converted in memory, the same output).
        let seeds = fixtures().join("../fuzz/seeds/import_claude");
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for e in std::fs::read_dir(seeds).into_iter().flatten().flatten() {
            let copy = dir.path().join("seed.jsonl");
            std::fs::copy(e.path(), &copy).unwrap_or_else(|e| panic!("{e}"));
            same_both_ways(&copy);
        }
    }

    fn write_lines(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
        let path = dir.join(name);
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
        json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":"s",
               "timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":content}})
    }

    fn assistant(uuid: &str, id: &str, blocks: Value) -> Value {
        json!({"type":"assistant","uuid":uuid,"sessionId":"s","timestamp":"2025-01-01T00:00:01Z",
               "message":{"id":id,"role":"assistant","model":"m","content":blocks}})
    }

    #[test]
    fn streamed_import_matches_on_moves_kept_segments_sidechains_and_titles() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let big = "y".repeat(200 << 10);
        let task = json!([{"type":"tool_use","id":"task1","name":"Task",
                           "input":{"description":"Look around","prompt":"look around"}}]);
        let mut lines = vec![
            json!({"type":"summary","summary":"Other session","leafUuid":"elsewhere"}),
            json!({"type":"summary","summary":"This session, early","leafUuid":"u3"}),
            user("u1", None, json!("please fix the parser")),
            assistant(
                "a1",
                "m1",
                json!([{"type":"tool_use","id":"t1","name":"Bash","input":{}}]),
            ),
            assistant("a2", "m2", json!([{"type":"text","text":"thinking more"}])),
            // A late result: after a later model turn, moved next to its call.
            user(
                "u2",
                None,
                json!([{"type":"tool_result","tool_use_id":"t1","content":"late"}]),
            ),
            user("u3", None, json!("go on")),
            assistant("a3", "m3", task),
            json!({"type":"user","uuid":"s1","parentUuid":null,"isSidechain":true,"sessionId":"s",
                   "message":{"role":"user","content":"look around"}}),
            json!({"type":"assistant","uuid":"s2","parentUuid":"s1","isSidechain":true,"sessionId":"s",
                   "message":{"id":"ms2","role":"assistant","content":[{"type":"text","text":"found"}]}}),
            user(
                "u4",
                None,
                json!([{"type":"tool_result","tool_use_id":"task1","content":"found"}]),
            ),
            json!("not an object"),
        ];
        for i in 0..8 {
            lines.push(assistant(
                &format!("b{i}"),
                &format!("mb{i}"),
                json!([{"type":"text","text":big}]),
            ));
            lines.push(user(&format!("v{i}"), None, json!(format!("more {i}"))));
        }
        lines.push(json!({"type":"system","subtype":"compact_boundary","uuid":"cb",
            "timestamp":"2025-01-01T00:00:05Z",
            "compactMetadata":{"trigger":"auto","preservedSegment":{"headUuid":"u3","tailUuid":"v7"}}}));
        lines.push(json!({"type":"user","uuid":"cs","isCompactSummary":true,
            "message":{"role":"user","content":"summary of it"}}));
        lines.push(user("w1", None, json!("after the boundary")));
        lines.push(assistant(
            "w2",
            "mw",
            json!([{"type":"tool_use","id":"t9","name":"Bash","input":{}}]),
        ));
        lines.push(user(
            "w3",
            None,
            json!([{"type":"tool_result","tool_use_id":"nowhere","content":"x"}]),
        ));
        // The last summary names an earlier line: found by reading the file again.
        lines.push(json!({"type":"summary","summary":"Latest title","leafUuid":"u1"}));
        lines.push(json!({"type":"summary","summary":"Of another session","leafUuid":"gone"}));
        let path = write_lines(dir.path(), "s.jsonl", &lines);
        // Damaged lines too.
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        let third = text.match_indices('\n').nth(2).map_or(0, |(i, _)| i + 1);
        text.insert_str(third, "{\"type\":\"user\",\"broken\n");
        text.push_str("{\"torn\":");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        same_both_ways(&path);
        // The cases happened: a move, a capped kept segment, a sidechain with its title, and
        // the summary (whose leaf is an earlier line) as the title.
        let store_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = SessionStore::at(store_dir.path().join("sessions"));
        let done = prepare_file_with(&store, &Batch::default(), &path, None, true, 0)
            .and_then(|p| commit_file(&store, p, true))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(done.len(), 2);
        let diags: Vec<String> = done[0]
            .report
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        assert!(
            diags.iter().any(|d| d.contains("moved next to its call")),
            "{diags:?}"
        );
        assert!(
            diags.iter().any(|d| d.contains("kept the newest")),
            "{diags:?}"
        );
        assert!(diags.iter().any(|d| d.contains("`nowhere`")), "{diags:?}");
        assert_eq!(done[0].meta.title.as_deref(), Some("Latest title"));
        assert_eq!(done[1].meta.title.as_deref(), Some("Look around"));
        // Nothing temporary is left beside the sessions.
        let left: Vec<String> = std::fs::read_dir(store.dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A batch's canonical source paths (one `lstat` per file, each directory resolved once)
    /// are those of `Path::canonicalize`, through symbolic links to directories and to files,
    /// `..` and `.` components, relative paths and names that are not UTF-8; a path that does
    /// not exist (a missing file, a dangling link, a file named as a directory) stays as given.
    #[cfg(unix)]
    #[test]
    fn a_batch_resolves_source_paths_as_canonicalize_does() {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = tmp.path();
        let real = root.join("real/sub");
        std::fs::create_dir_all(&real).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(real.join("a.jsonl"), "{}\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(real.join("b.jsonl"), "{}\n").unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("real"), root.join("linkdir")).unwrap_or_else(|e| panic!("{e}"));
        symlink(real.join("b.jsonl"), real.join("to-b.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        symlink(real.join("gone"), real.join("dangling.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            real.join(std::ffi::OsStr::from_bytes(b"\xff.jsonl")),
            "{}\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let dirs = Mutex::new(HashMap::new());
        let batch = Batch {
            dirs: Some(&dirs),
            ..Batch::default()
        };
        let paths = [
            real.join("a.jsonl"),
            root.join("linkdir/sub/a.jsonl"),
            root.join("linkdir/sub/../sub/b.jsonl"),
            real.join("to-b.jsonl"),
            root.join("linkdir/sub/to-b.jsonl"),
            real.join("a.jsonl/."),
            real.join("a.jsonl/"),
            real.join("missing.jsonl"),
            real.join("dangling.jsonl"),
            real.join(std::ffi::OsStr::from_bytes(b"\xff.jsonl")),
            root.join("linkdir/sub/")
                .join(std::ffi::OsStr::from_bytes(b"\xff.jsonl")),
            PathBuf::from("../mem-session/Cargo.toml"),
            PathBuf::from("./Cargo.toml"),
        ];
        for _ in 0..2 {
            // The second round reads the directories from the cache.
            for p in &paths {
                let want = p.canonicalize().unwrap_or_else(|_| p.clone());
                assert_eq!(batch.canonical(p), want, "{}", p.display());
            }
        }
        assert_eq!(
            batch.canonical(&real.join("to-b.jsonl")),
            real.canonicalize()
                .unwrap_or_else(|e| panic!("{e}"))
                .join("b.jsonl")
        );
        // A relative path, from the current directory.
        let cwd = std::env::current_dir().unwrap_or_else(|e| panic!("{e}"));
        let rel = Path::new("Cargo.toml");
        assert_eq!(
            batch.canonical(rel),
            cwd.join(rel)
                .canonicalize()
                .unwrap_or_else(|e| panic!("{e}"))
        );
    }

    /// A session in a batch's id snapshot but deleted since (by another process: deleting
    /// takes no import lock) does not fail its source's import: the source is imported whole,
    /// as when the session was never there.
    #[test]
    fn a_session_deleted_after_the_batch_read_the_ids_is_imported_whole() {
        let src =
            fixtures().join("transcripts/claude/entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl");
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = SessionStore::at(tmp.path().join("sessions"));
        let first = import_into(&store, &src).unwrap_or_else(|e| panic!("{e}"));
        let id = first[0].meta.id.clone();
        let existing: HashSet<String> = store
            .ids()
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .collect();
        assert!(existing.contains(&id), "{existing:?}");
        store.delete(&id).unwrap_or_else(|e| panic!("{e}"));
        let batch = Batch {
            existing: Some(&existing),
            ..Batch::default()
        };
        let done = prepare_file_with(&store, &batch, &src, None, false, STREAM_MIN_BYTES)
            .and_then(|p| commit_file(&store, p, true))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(done[0].meta.id, id);
        assert_eq!(done[0].action, IngestAction::Created);
        assert!(store.jsonl_path(&id).is_file());
    }
}
