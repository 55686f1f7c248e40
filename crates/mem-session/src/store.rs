//! The session store: `{id}.jsonl` + `{id}.meta` in one directory (seed §1).
//!
//! Appends: each call takes an exclusive `flock` on the `.jsonl` (waiting up to
//! [`StoreOptions::lock_timeout`], then [`Error::Locked`]), starts a fresh line if the file ends
//! in a torn fragment, writes the whole record with one `write`, and updates the meta by an
//! atomic rename. Two processes appending to one session therefore take turns: no interleaved
//! or lost line. A failed write is rolled back (the file is truncated to its old length) and
//! returned as an error; the next append works once the cause is gone.
//!
//! Resume: the last `compact_boundary` is found by searching the file backwards for the bytes
//! `\n{"type":"compact_boundary"` (JSON strings escape newlines, so this can only be a line
//! start), then only the tail from there is parsed.

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use mem_core::{Message, TokenCounter};

use crate::chain::{ChainIssue, validate_message_chain};
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::jsonl::{JsonlEvent, JsonlReader};
use crate::meta::SessionMeta;
use crate::record::{RecordType, SessionRecord, make_compact_boundary};

/// Sub-directory of `<project>/.mewcode/` holding the sessions.
pub const SESSIONS_DIR: &str = "sessions";

/// How hard an append pushes its bytes to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `write(2)` only: survives the process being killed, not a power cut. The default.
    #[default]
    Write,
    /// `write(2)` then `fdatasync(2)`: survives a power cut; ~1–10 ms per append on real disks.
    Sync,
}

/// Options of a [`SessionStore`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// See [`Durability`].
    pub durability: Durability,
    /// How long an append waits for another process's lock before [`Error::Locked`].
    /// Default 10 s.
    pub lock_timeout: Duration,
    /// Counts the `token_count` of the meta.
    pub counter: TokenCounter,
    /// Never bring a deferred token count up to date, not even for the readers that report it
    /// ([`SessionStore::meta`], [`SessionStore::list`], [`SessionStore::resume`]). Every store
    /// leaves the tokens of the records it appends or imports uncounted
    /// ([`SessionMeta::tokens_pending_from`]); a store without this option completes the count
    /// when such a reader asks. For a short-lived process that must not pay the BPE
    /// vocabulary's load (~75 ms): the hooks' incremental transcript sync. Default `false`.
    pub defer_tokens: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            durability: Durability::Write,
            lock_timeout: Duration::from_secs(10),
            counter: TokenCounter::default(),
            defer_tokens: false,
        }
    }
}

/// The conversation a resumed session replays, and what was found on the way.
#[derive(Debug, Clone)]
pub struct Resumed {
    /// The session's meta (brought up to date).
    pub meta: SessionMeta,
    /// The messages to send, validated: from the last boundary, every tool_use answered.
    pub messages: Vec<Message>,
    /// What validation changed in the replay (the file is untouched).
    pub issues: Vec<ChainIssue>,
    /// Problems in the lines read (file:line).
    pub diagnostics: Vec<Diagnostic>,
    /// Byte offset where replay started: the last boundary, or 0.
    pub replay_offset: u64,
    /// Bytes read to resume (the tail from `replay_offset`).
    pub replay_bytes: u64,
    /// `true` when replay started at a boundary.
    pub from_boundary: bool,
    /// `true` when the replay went back through a `rollback` record (a checkpoint restore).
    pub rolled_back: bool,
}

/// What [`SessionStore::write_session`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// A new session was written.
    Created,
    /// An existing session with this id was replaced.
    Replaced,
}

/// A directory of sessions.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    options: StoreOptions,
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Checks that `id` can name a file: `[A-Za-z0-9._-]+`, not starting with `.`.
pub fn validate_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && !id.starts_with('.')
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidId(id.to_owned()))
    }
}

impl SessionStore {
    /// The store of a project: `<project>/.mewcode/sessions/`.
    pub fn for_project(project: &Path) -> Self {
        Self::at(project.join(".mewcode").join(SESSIONS_DIR))
    }

    /// A store in `dir` with default options. Nothing is created until the first write.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        SessionStore {
            dir: dir.into(),
            options: StoreOptions::default(),
        }
    }

    /// Replaces the options.
    pub fn with_options(mut self, options: StoreOptions) -> Self {
        self.options = options;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of `{id}.jsonl`.
    pub fn jsonl_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Path of `{id}.meta`.
    pub fn meta_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.meta"))
    }

    fn ensure_dir(&self) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io("cannot create the sessions directory", &self.dir, e))
    }

    /// Creates a new empty session with a fresh time-ordered id (UUID v7).
    pub fn create(&self) -> Result<SessionWriter> {
        let id = uuid::Uuid::now_v7().to_string();
        self.open_or_create(&id)
    }

    /// Opens a session for appending, creating it when absent.
    pub fn open_or_create(&self, id: &str) -> Result<SessionWriter> {
        validate_id(id)?;
        self.ensure_dir()?;
        let path = self.jsonl_path(id);
        let file = open_append(&path)?;
        let mut writer = SessionWriter {
            store: self.clone(),
            id: id.to_owned(),
            path,
            file,
            meta: SessionMeta::new(id, now_rfc3339()),
            meta_dirty: false,
            meta_saved_at: Instant::now(),
        };
        writer.with_lock(|w| {
            w.meta = w.store.load_meta_locked(&w.id, &w.file, false)?;
            Ok(())
        })?;
        Ok(writer)
    }

    /// Opens an existing session for appending; [`Error::NotFound`] when absent.
    pub fn open(&self, id: &str) -> Result<SessionWriter> {
        validate_id(id)?;
        if !self.jsonl_path(id).is_file() {
            return Err(Error::NotFound {
                id: id.to_owned(),
                dir: self.dir.clone(),
            });
        }
        self.open_or_create(id)
    }

    /// The ids of all sessions (files `*.jsonl`), sorted.
    pub fn ids(&self) -> Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("cannot list", &self.dir, e)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("cannot list", &self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(id) = name.strip_suffix(".jsonl")
                && validate_id(id).is_ok()
            {
                ids.push(id.to_owned());
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Resolves a full id or a unique prefix of one.
    pub fn resolve_id(&self, prefix: &str) -> Result<String> {
        let ids = self.ids()?;
        if ids.iter().any(|i| i == prefix) {
            return Ok(prefix.to_owned());
        }
        let matches: Vec<String> = ids.into_iter().filter(|i| i.starts_with(prefix)).collect();
        match matches.len() {
            0 => Err(Error::NotFound {
                id: prefix.to_owned(),
                dir: self.dir.clone(),
            }),
            1 => Ok(matches.into_iter().next().unwrap_or_default()),
            _ => Err(Error::Ambiguous {
                prefix: prefix.to_owned(),
                candidates: matches,
            }),
        }
    }

    /// The metas of all sessions, most recently active first. A missing or stale meta is
    /// rebuilt from the `.jsonl` (reading only the bytes it does not reflect) and rewritten.
    ///
    /// Token counts left pending by appends or imports ([`SessionMeta::tokens_pending_from`])
    /// are completed here and saved, so the first listing after a large import counts the
    /// replayed records of every session once (on one thread per core); later listings read
    /// the metas only.
    pub fn list(&self) -> Result<Vec<SessionMeta>> {
        tracing::debug!(dir = %self.dir.display(), "listing sessions");
        let ids = self.ids()?;
        let mut metas = Vec::with_capacity(ids.len());
        let mut pending = Vec::new();
        for id in &ids {
            let meta = self.meta_with(id, false)?;
            if meta.tokens_pending_from.is_some() && !self.options.defer_tokens {
                pending.push(metas.len());
            }
            metas.push(meta);
        }
        self.complete_all(&mut metas, &pending)?;
        sort_by_activity(&mut metas);
        Ok(metas)
    }

    /// Completes the pending token counts of `metas[i]` for each `i` in `pending`, in
    /// parallel (one thread per core, at most one per session).
    fn complete_all(&self, metas: &mut [SessionMeta], pending: &[usize]) -> Result<()> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        if pending.is_empty() {
            return Ok(());
        }
        let threads = thread::available_parallelism()
            .map_or(1, usize::from)
            .min(pending.len());
        let next = AtomicUsize::new(0);
        let ids: Vec<String> = pending.iter().map(|&i| metas[i].id.clone()).collect();
        let counted: Vec<(usize, Result<SessionMeta>)> = thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(id) = ids.get(k) else { break };
                            out.push((k, self.meta(id)));
                        }
                        out
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_default())
                .collect()
        });
        if counted.len() != pending.len() {
            return Err(Error::io(
                "cannot count the tokens of",
                &self.dir,
                std::io::Error::other("a counting thread panicked"),
            ));
        }
        let mut counted = counted;
        counted.sort_by_key(|(k, _)| *k);
        for (k, meta) in counted {
            metas[pending[k]] = meta?;
        }
        Ok(())
    }

    /// The meta of session `id`; `count`: complete a pending token count (see
    /// [`SessionStore::meta`]).
    pub(crate) fn meta_with(&self, id: &str, count: bool) -> Result<SessionMeta> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = self.load_meta_locked(id, &file, count);
        let _ = file.unlock();
        result
    }

    /// The most recently active session, if any. Only its token count is completed (the
    /// others are not read past their metas).
    pub fn latest(&self) -> Result<Option<SessionMeta>> {
        let mut metas = Vec::new();
        for id in self.ids()? {
            metas.push(self.meta_with(&id, false)?);
        }
        sort_by_activity(&mut metas);
        match metas.into_iter().next() {
            Some(m) if m.tokens_pending_from.is_some() => self.meta(&m.id).map(Some),
            other => Ok(other),
        }
    }

    /// The meta of one session, brought up to date with its `.jsonl`, its `token_count`
    /// complete: tokens left pending by appends or an import ([`SessionMeta::tokens_pending_from`])
    /// are counted now, from the pending offset or the last boundary after it to the end, and
    /// the meta saved (unless the store has [`StoreOptions::defer_tokens`]).
    pub fn meta(&self, id: &str) -> Result<SessionMeta> {
        self.meta_with(id, true)
    }

    /// Reads the meta and repairs it if it lags behind the file; the caller holds a lock.
    /// `count`: complete a deferred `token_count` ([`SessionMeta::tokens_pending_from`]), for a
    /// caller that reports or uses it (never with [`StoreOptions::defer_tokens`]); writers and
    /// the import's checks pass `false` and leave it pending (counting loads the BPE vocabulary
    /// and reads the records again).
    fn load_meta_locked(&self, id: &str, file: &File, count: bool) -> Result<SessionMeta> {
        let count = count && !self.options.defer_tokens;
        let len = file_len(file, &self.jsonl_path(id))?;
        let meta_path = self.meta_path(id);
        let stored: Option<SessionMeta> = match mem_core::fsread::read(&meta_path) {
            Ok(bytes) => serde_json::from_slice(&bytes).ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("cannot read", &meta_path, e)),
        };
        let path = self.jsonl_path(id);
        let (mut meta, from) = match stored {
            Some(m)
                if m.id == id
                    && m.jsonl_bytes <= len
                    && file_tail_fingerprint(file, m.jsonl_bytes)
                        .map_err(|e| Error::io("cannot read", &path, e))?
                        == m.jsonl_tail =>
            {
                let from = m.jsonl_bytes;
                (m, from)
            }
            other => {
                // Missing, unreadable, ahead of the file, or the file was edited before the
                // point it reflects: rebuild from the start, keeping what the records cannot
                // tell (title set by an importer, parent, provenance).
                let mut fresh =
                    SessionMeta::new(id, file_created(file).unwrap_or_else(now_rfc3339));
                if let Some(old) = other.filter(|m| m.id == id) {
                    fresh.created = old.created;
                    // Until a record says otherwise (an emptied file: never).
                    fresh.last_active.clone_from(&fresh.created);
                    // A file emptied of its records keeps no title from before.
                    if len > 0 {
                        fresh.title = old.title;
                    }
                    fresh.parent_id = old.parent_id;
                    fresh.extra = old.extra;
                }
                (fresh, 0)
            }
        };
        tracing::debug!(
            session = id,
            file = %path.display(),
            bytes = len,
            from,
            "session meta: {}",
            if from == 0 && len > 0 {
                "rebuilding from the .jsonl"
            } else if from < len {
                "reading the records appended since"
            } else {
                "up to date"
            }
        );
        if from < len {
            let mut reader = file;
            reader
                .seek(SeekFrom::Start(from))
                .map_err(|e| Error::io("cannot read", &path, e))?;
            let reader = BufReader::new(reader.take(len - from));
            // When rebuilding from the start, the first timestamp is the creation time, and
            // tokens are counted only from the last boundary (nothing before it is replayed).
            let mut take_created = from == 0;
            let count_from = if from == 0 && count {
                find_last_reset(file, &path, len)?.unwrap_or(0)
            } else {
                0
            };
            for ev in JsonlReader::starting_at(reader, self.jsonl_path(id), 1, from) {
                let line = match ev {
                    JsonlEvent::Value(line) => line,
                    JsonlEvent::Diagnostic(d) => {
                        if d.severity == crate::Severity::Error {
                            meta.damaged_lines += 1;
                        }
                        continue;
                    }
                };
                match serde_json::from_value::<SessionRecord>(line.value) {
                    Ok(record) if record.check().is_ok() => {
                        if take_created && let Some(ts) = &record.timestamp {
                            meta.created.clone_from(ts);
                            take_created = false;
                        }
                        if !count || meta.tokens_pending_from.is_some() {
                            meta.apply_deferred(&record, line.offset);
                        } else {
                            meta.apply_with(
                                &record,
                                &self.options.counter,
                                line.offset >= count_from,
                            );
                        }
                    }
                    _ => meta.damaged_lines += 1,
                }
            }

            meta.jsonl_bytes = len;
            meta.jsonl_tail =
                file_tail_fingerprint(file, len).map_err(|e| Error::io("cannot read", &path, e))?;
            if count && meta.tokens_pending_from.is_some() {
                self.count_pending_tokens(&mut meta, file)?;
            }
            if let Err(e) = self.write_meta(&meta) {
                tracing::warn!("session {id}: the repaired meta could not be saved: {e}");
            }
        } else if count && meta.tokens_pending_from.is_some() {
            self.count_pending_tokens(&mut meta, file)?;
            if let Err(e) = self.write_meta(&meta) {
                tracing::warn!("session {id}: the counted meta could not be saved: {e}");
            }
        }
        Ok(meta)
    }

    /// Brings a deferred `token_count` up to date ([`SessionMeta::tokens_pending_from`]): counts
    /// the records from that offset, or from the last boundary when one comes after it (a
    /// boundary resets the count), to `meta.jsonl_bytes`. The incremental import's sync mark
    /// (`imported.sync`), when it lies in the records counted, gets its complete count too, so
    /// the next deferred sync starts from a complete count. The caller holds a lock.
    fn count_pending_tokens(&self, meta: &mut SessionMeta, file: &File) -> Result<()> {
        let Some(pending) = meta.tokens_pending_from else {
            return Ok(());
        };
        let path = self.jsonl_path(&meta.id);
        let end = meta.jsonl_bytes;
        let boundary = find_last_reset(file, &path, end)?;
        let (start, mut counted) = match boundary {
            Some(b) if b >= pending => (b, 0),
            _ => (pending.min(end), meta.token_count),
        };
        let mark = crate::ingest::pending_sync_mark(meta).filter(|&m| m >= start && m <= end);
        let mut at_mark = None;
        let mut reader = file;
        reader
            .seek(SeekFrom::Start(start))
            .map_err(|e| Error::io("cannot read", &path, e))?;
        let reader = BufReader::with_capacity(1 << 16, reader.take(end - start));
        let mut tokens = SessionMeta::new(meta.id.clone(), String::new());
        tokens.token_count = counted;
        for ev in JsonlReader::starting_at(reader, &path, 1, start) {
            let JsonlEvent::Value(line) = ev else {
                continue;
            };
            if mark == Some(line.offset) {
                at_mark = Some(tokens.token_count);
            }
            if let Ok(record) = serde_json::from_value::<SessionRecord>(line.value)
                && record.check().is_ok()
            {
                tokens.apply_tokens(&record, &self.options.counter);
            }
        }
        counted = tokens.token_count;
        if mark == Some(end) {
            at_mark = Some(counted);
        }
        tracing::debug!(
            session = %meta.id,
            from = start,
            to = end,
            "session meta: counted the deferred tokens"
        );
        meta.token_count = counted;
        meta.tokens_pending_from = None;
        if let Some(n) = at_mark {
            crate::ingest::complete_sync_mark(meta, n);
        }
        Ok(())
    }

    fn write_meta(&self, meta: &SessionMeta) -> Result<()> {
        let path = self.meta_path(&meta.id);
        let bytes = serde_json::to_vec_pretty(meta).map_err(|source| Error::Serialize {
            id: meta.id.clone(),
            source,
        })?;
        write_atomic(&path, &bytes, self.options.durability == Durability::Sync)
    }

    /// Opens an existing `.jsonl` and locks it, reopening when the file was replaced (an
    /// import renamed a new file over it) between the open and the lock.
    fn open_locked(&self, path: &Path, id: &str, exclusive: bool) -> Result<File> {
        loop {
            let file = open_existing(path, id, &self.dir)?;
            lock(&file, path, exclusive, self.options.lock_timeout)?;
            if same_file(&file, path) {
                return Ok(file);
            }
            let _ = file.unlock();
        }
    }

    /// Takes the store's import lock (`.import.lock` in the sessions directory), waiting while
    /// another process imports. Hold it across an import's check and write
    /// ([`SessionStore::write_session`] requires it), so two imports cannot interleave.
    pub fn lock_imports(&self) -> Result<ImportLock> {
        self.ensure_dir()?;
        let path = self.dir.join(".import.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, e))?;
        file.lock()
            .map_err(|e| Error::io("cannot lock", &path, e))?;
        Ok(ImportLock { _file: file })
    }

    /// Removes the temporary files that killed processes left in the sessions directory
    /// (`.{name}.jsonl.{pid}.{n}.tmp`, `.{name}.meta.{pid}.{n}.tmp`: staged sessions of an
    /// import, metas being replaced), returning how many. Taking the [`ImportLock`] means no
    /// other import is running, so no staged file belongs to a running import; a file is
    /// removed only when its name has that exact shape and the process id in it is not this
    /// process and not running (`/proc/{pid}` absent; where there is no `/proc`, only files
    /// older than an hour). A pid not running here may be running in another pid namespace (a
    /// container sharing the folder), where a writer is replacing a meta: a meta temporary
    /// file is removed only beside a staged `.jsonl` of the same session and process (an
    /// import's pair) or when older than an hour.
    ///
    /// Errors: I/O listing the directory; a file that cannot be removed is skipped (logged).
    pub fn remove_stale_tmp(&self, _import_lock: &ImportLock) -> Result<usize> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(Error::io("cannot list", &self.dir, e)),
        };
        let have_proc = Path::new("/proc/self").exists();
        let old = |entry: &fs::DirEntry| {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TMP_AGE)
        };
        let mut candidates = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("cannot list", &self.dir, e))?;
            let name = entry.file_name();
            let Some(tmp) = name.to_str().and_then(stale_tmp_name) else {
                continue;
            };
            if tmp.pid == process_id() {
                continue;
            }
            let dead = if have_proc {
                !Path::new("/proc").join(tmp.pid.to_string()).exists()
            } else {
                old(&entry)
            };
            if dead {
                candidates.push((entry, tmp));
            }
        }
        // The sessions (and processes) with a staged `.jsonl` left: their metas are staged too.
        let staged: std::collections::HashSet<(String, u32)> = candidates
            .iter()
            .filter(|(_, t)| !t.meta)
            .map(|(_, t)| (t.id.clone(), t.pid))
            .collect();
        let mut removed = 0;
        for (entry, tmp) in candidates {
            let pid = tmp.pid;
            if tmp.meta && !staged.contains(&(tmp.id, pid)) && !old(&entry) {
                continue;
            }
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!(
                    "{}: a temporary file left by process {pid} could not be removed: {e}",
                    entry.path().display()
                ),
            }
        }
        if removed > 0 {
            tracing::info!(
                dir = %self.dir.display(),
                "removed {removed} temporary files left by killed processes"
            );
        }
        Ok(removed)
    }

    /// Reads every record of a session, in order (the whole history, for export and tools).
    pub fn read_records(&self, id: &str) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = read_records_from(&file, &path, 0);
        let _ = file.unlock();
        out
    }

    /// The records of session `id` between byte offsets `from` (a line start) and `to`, read
    /// under the shared lock (lines that are not valid records are skipped). The incremental
    /// sync reads the few records after its mark with it.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub(crate) fn records_between(
        &self,
        id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<SessionRecord>> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = read_records_range(&file, &path, from, to);
        let _ = file.unlock();
        Ok(out?.0)
    }

    /// The records of session `id` from byte `from` (a line start) to the end of the file as it
    /// is under the shared lock, the file's length then, and the up to `tail` bytes that end at
    /// `from` and at that length (so a reader can check later that the part it read is
    /// unchanged). Lines that are not valid records are skipped. The session search index reads
    /// what was appended with it.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub(crate) fn records_after_offset(
        &self,
        id: &str,
        from: u64,
        tail: u64,
    ) -> Result<AppendedRecords> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = (|| {
            let len = file
                .metadata()
                .map_err(|e| Error::io("cannot read", &path, e))?
                .len();
            let from = from.min(len);
            let bytes_before = |end: u64| -> Result<Vec<u8>> {
                let start = end.saturating_sub(tail);
                let mut buf = vec![0u8; (end - start) as usize];
                let mut reader = &file;
                reader
                    .seek(SeekFrom::Start(start))
                    .map_err(|e| Error::io("cannot read", &path, e))?;
                reader
                    .read_exact(&mut buf)
                    .map_err(|e| Error::io("cannot read", &path, e))?;
                Ok(buf)
            };
            let before_from = bytes_before(from)?;
            let before_end = bytes_before(len)?;
            let (records, _) = read_records_range(&file, &path, from, len)?;
            Ok(AppendedRecords {
                records,
                len,
                before_from,
                before_end,
            })
        })();
        let _ = file.unlock();
        out
    }

    /// The messages of session `id` after its first `skip` (user, assistant and tool-result
    /// records with a message, in file order: the list [`Self::read_records`] gives, less its
    /// first `skip`), and how many messages the session holds in all
    /// ([`SessionMeta::message_count`]).
    ///
    /// Cost: the meta (brought up to date), then a backward scan from the end of the `.jsonl`
    /// that parses only the lines of those messages; the history before them is never read.
    /// This is what an extraction after every turn needs (mem-auto keeps the count of messages
    /// already extracted). Lines that are not valid records are skipped, as the meta counts
    /// them.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub fn messages_after(&self, id: &str, skip: usize) -> Result<(usize, Vec<Message>)> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = self.messages_after_locked(id, &file, &path, skip);
        let _ = file.unlock();
        result
    }

    fn messages_after_locked(
        &self,
        id: &str,
        file: &File,
        path: &Path,
        skip: usize,
    ) -> Result<(usize, Vec<Message>)> {
        // Only the message count is used: a deferred token count stays deferred.
        let meta = self.load_meta_locked(id, file, false)?;
        let total = meta.message_count;
        let want = total.saturating_sub(skip);
        if want == 0 {
            return Ok((total, Vec::new()));
        }
        let len = file_len(file, path)?;
        let start =
            find_last_messages(file, len, want).map_err(|e| Error::io("cannot read", path, e))?;
        let (records, _) = read_records_from(file, path, start)?;
        let mut messages = message_records(records);
        // The line at `start` may hold more than one message (glued objects).
        if let Some(extra) = messages.len().checked_sub(want) {
            return Ok((total, messages.split_off(extra)));
        }
        // Fewer messages than the meta counts (a meta whose count was edited while its
        // fingerprint still matches; a file this store wrote never gets here): the whole file
        // decides.
        tracing::warn!(
            session = id,
            "{} messages found after byte {start}, {want} expected; reading the whole session",
            messages.len()
        );
        let (records, _) = read_records_from(file, path, 0)?;
        let mut all = message_records(records);
        let total = all.len();
        Ok((total, all.split_off(skip.min(total))))
    }

    /// Resumes a session: the messages after the last boundary, validated (seed §1).
    ///
    /// Cost: a backward search for the last boundary, then parsing the tail after it; the history
    /// before the boundary is never read.
    pub fn resume(&self, id: &str) -> Result<Resumed> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = self.resume_locked(id, &file, &path);
        let _ = file.unlock();
        result
    }

    fn resume_locked(&self, id: &str, file: &File, path: &Path) -> Result<Resumed> {
        let meta = self.load_meta_locked(id, file, true)?;
        let len = file_len(file, path)?;
        let seg = replay_segment(file, path, len, 0)?;
        let (messages, issues) = validate_message_chain(seg.messages);
        let replay_offset = seg.offset.unwrap_or(0);
        Ok(Resumed {
            meta,
            messages,
            issues,
            diagnostics: seg.diagnostics,
            replay_offset,
            replay_bytes: len - replay_offset,
            from_boundary: seg.offset.is_some() && !seg.rolled_back,
            rolled_back: seg.rolled_back,
        })
    }

    /// Where session `id` stands now, from its meta (brought up to date; no scan of the
    /// records when the meta is current): `(jsonl_bytes, jsonl_tail)`. A checkpoint records
    /// these; [`SessionStore::has_prefix`] tells later whether the file still starts with the
    /// same bytes.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Locked`], I/O.
    pub fn position(&self, id: &str) -> Result<SessionMeta> {
        self.meta(id)
    }

    /// `true` when session `id` is at least `bytes` long and its bytes before `bytes` end with
    /// the ones `tail` fingerprints (hex of the last up to 32 bytes, as
    /// [`SessionMeta::jsonl_tail`]): the file grew by appends only since that point (the
    /// content before it is not hashed; a session is append-only).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Locked`], I/O.
    pub fn has_prefix(&self, id: &str, bytes: u64, tail: &str) -> Result<bool> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = (|| {
            let len = file_len(&file, &path)?;
            if len < bytes {
                return Ok(false);
            }
            Ok(file_tail_fingerprint(&file, bytes)
                .map_err(|e| Error::io("cannot read", &path, e))?
                == tail)
        })();
        let _ = file.unlock();
        result
    }

    /// Appends a `rollback` record (see [`crate::Rollback`]) taking session `id` back to its
    /// first `to_bytes` bytes, if the file still has `expected_len` bytes and starts with the
    /// bytes `tail` fingerprints at `to_bytes` (checked under the exclusive lock). `to_records`
    /// is counted here (the valid records before `to_bytes`: a read of that prefix, once).
    /// Returns `false`, writing nothing, when the session changed since `expected_len` was read.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Locked`], [`Error::Changed`] when the bytes before
    /// `to_bytes` are not the ones `tail` names, I/O (nothing written then).
    pub fn append_rollback(
        &self,
        id: &str,
        expected_len: u64,
        to_bytes: u64,
        tail: &str,
        token_count: usize,
        checkpoint: &str,
    ) -> Result<bool> {
        let mut writer = self.open(id)?;
        writer.with_lock(|w| {
            let len = file_len(&w.file, &w.path)?;
            if len != expected_len {
                return Ok(false);
            }
            if len < to_bytes
                || file_tail_fingerprint(&w.file, to_bytes)
                    .map_err(|e| Error::io("cannot read", &w.path, e))?
                    != tail
            {
                return Err(Error::Changed {
                    id: w.id.clone(),
                    detail: format!(
                        "its first {to_bytes} bytes are not the ones checkpoint {checkpoint:?} recorded"
                    ),
                });
            }
            let (records, _) = read_records_range(&w.file, &w.path, 0, to_bytes)?;
            let record = crate::record::make_rollback(
                &crate::record::Rollback {
                    to_bytes,
                    to_records: records.len() as u64,
                    token_count,
                    checkpoint: checkpoint.to_owned(),
                },
                Some(now_rfc3339()),
            );
            let line = w.encode(std::slice::from_ref(&record))?;
            w.write_locked(&line, std::slice::from_ref(&record))?;
            Ok(true)
        })
    }

    /// Deletes a session's `.jsonl` and `.meta`. Waits for a writer's lock first.
    pub fn delete(&self, id: &str) -> Result<()> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, true)?;
        let meta = self.meta_path(id);
        match fs::remove_file(&meta) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("cannot delete", meta, e)),
        }
        fs::remove_file(&path).map_err(|e| Error::io("cannot delete", &path, e))?;
        let _ = file.unlock();
        Ok(())
    }

    /// Writes a whole session at once (an import), replacing any session with this id
    /// atomically. The new `.jsonl` and `.meta` are written to temporary files (unique names)
    /// and synced; the new `.meta` is renamed into place first, then the new `.jsonl` (locked
    /// from before its rename until both are in place). A kill between the two renames leaves
    /// the new meta beside the old records: its fingerprint does not match them, so the next
    /// reader rebuilds it from the `.jsonl`, keeping the provenance. The old file's lock is held
    /// meanwhile; a reader or writer holding the old file notices the replacement (inode check)
    /// and reopens.
    ///
    /// `meta_seed` provides what records cannot tell (title, parent, provenance in `extra`,
    /// created time); counts and `jsonl_bytes` are computed here. `keep_existing` is asked, with
    /// the existing meta, whether replacing is allowed (return an error to refuse). The caller
    /// holds the store's [`ImportLock`].
    pub fn write_session(
        &self,
        import_lock: &ImportLock,
        meta_seed: SessionMeta,
        records: &[SessionRecord],
        keep_existing: impl FnOnce(&SessionMeta) -> Result<()>,
    ) -> Result<(WriteOutcome, SessionMeta)> {
        self.write_session_with(import_lock, meta_seed, records, keep_existing, |_| Ok(()))
    }

    /// [`SessionStore::write_session`], with `amend` called on the finished meta (counts and
    /// `jsonl_bytes` filled in) right before it is written, e.g. to record a [`MetaMark`].
    pub fn write_session_with(
        &self,
        import_lock: &ImportLock,
        meta_seed: SessionMeta,
        records: &[SessionRecord],
        keep_existing: impl FnOnce(&SessionMeta) -> Result<()>,
        amend: impl FnOnce(&mut SessionMeta) -> Result<()>,
    ) -> Result<(WriteOutcome, SessionMeta)> {
        let mut prepared = self.prepare_session(meta_seed, records)?;
        amend(&mut prepared.meta)?;
        self.write_prepared(import_lock, prepared, keep_existing, true)
    }

    /// The first half of [`SessionStore::write_session`], which needs no lock and touches no
    /// file: the records encoded as the `.jsonl` bytes and the meta computed from them (counts,
    /// `jsonl_bytes`, `jsonl_tail`, `imported.bytes`). Imports prepare files in parallel and
    /// write them one by one with [`SessionStore::write_prepared`].
    ///
    /// Errors: [`Error::InvalidId`], [`Error::Serialize`].
    pub fn prepare_session(
        &self,
        meta_seed: SessionMeta,
        records: &[SessionRecord],
    ) -> Result<PreparedSession> {
        let id = meta_seed.id.clone();
        validate_id(&id)?;
        let mut bytes = ENCODE_BUFFER.with_borrow_mut(std::mem::take);
        bytes.clear();
        let (mut meta, seeded_title) = counting_from(meta_seed);
        for record in records {
            let offset = bytes.len() as u64;
            crate::record::write_json(&mut bytes, record).map_err(|source| Error::Serialize {
                id: id.clone(),
                source,
            })?;
            bytes.push(b'\n');
            // Tokens are not counted at import (o200k counting was ~30 % of an import's CPU):
            // the first reader that reports the count counts the records after the last
            // boundary (nothing before it is replayed) and saves it.
            meta.apply_deferred(record, offset);
        }
        let tail = tail_fingerprint(&bytes);
        counted(&mut meta, seeded_title, bytes.len() as u64, tail);
        Ok(PreparedSession { meta, bytes })
    }

    /// The second half of [`SessionStore::write_session`]: writes a prepared session (see
    /// there for the atomicity and locking). `sync_dir`: fsync the sessions directory after the
    /// renames; a batch passes `false` and calls [`SessionStore::sync_dir`] once at its end
    /// (until then a power cut may lose the latest renames: the store holds the old sessions
    /// or the new ones, whole, never a part).
    pub fn write_prepared(
        &self,
        import_lock: &ImportLock,
        prepared: PreparedSession,
        keep_existing: impl FnOnce(&SessionMeta) -> Result<()>,
        sync_dir_after: bool,
    ) -> Result<(WriteOutcome, SessionMeta)> {
        let staged = self.stage_session(prepared)?;
        self.commit_staged(import_lock, staged, keep_existing, sync_dir_after)
    }

    /// The writing half of [`SessionStore::write_prepared`] that needs no lock: the `.jsonl`
    /// and the `.meta` are written under temporary names beside their final ones
    /// (`.{name}.{pid}.{n}.tmp`); the `.jsonl` is synced once (`fsync`, by
    /// [`StagedSession::sync`] or at the latest by the commit), the `.meta` (a cache) only with
    /// [`Durability::Sync`] or by a commit that replaces a session; the new `.jsonl` is locked
    /// (exclusive `flock`) until [`SessionStore::commit_staged`] renames both into place.
    /// Importers stage sessions on their worker threads, so the syncs run in parallel and off
    /// the ordered commit path. Dropping a [`StagedSession`] without committing it removes
    /// its temporary files.
    ///
    /// Errors: [`Error::InvalidId`], [`Error::Serialize`], I/O (the temporary files are
    /// removed).
    pub fn stage_session(&self, prepared: PreparedSession) -> Result<StagedSession> {
        let PreparedSession { meta, bytes } = prepared;
        validate_id(&meta.id)?;
        let meta_bytes = serde_json::to_vec_pretty(&meta).map_err(|source| Error::Serialize {
            id: meta.id.clone(),
            source,
        })?;
        let jsonl_tmp = unique_tmp(&self.jsonl_path(&meta.id));
        let mut staged = StagedSession {
            jsonl_tmp: Some(jsonl_tmp.clone()),
            meta_tmp: None,
            meta,
            file: None,
            synced: false,
        };
        // Synced with its batch by an import (`FileSystem::sync`) or by the commit.
        let file = write_new_file(&jsonl_tmp, &bytes, false)?;
        recycle_encode_buffer(bytes);
        self.stage_file_and_meta(&mut staged, file, &jsonl_tmp, &meta_bytes)?;
        Ok(staged)
    }

    /// The end of staging, for [`SessionStore::stage_session`] and
    /// [`SessionStore::stage_written`]: locks the written `.jsonl` (`file`, at `jsonl_tmp`) into
    /// `staged` and writes `meta_bytes` beside it under a temporary name. The meta is a cache of
    /// the `.jsonl`: it is not fsynced (half of an import's fsyncs) unless the store asks for
    /// `Durability::Sync`; a power cut that loses it leaves a session whose meta is rebuilt from
    /// its records. Both temporary names are in `staged` before anything can fail, so dropping
    /// it removes them.
    ///
    /// Errors: I/O.
    fn stage_file_and_meta(
        &self,
        staged: &mut StagedSession,
        file: File,
        jsonl_tmp: &Path,
        meta_bytes: &[u8],
    ) -> Result<()> {
        file.lock()
            .map_err(|e| Error::io("cannot lock", jsonl_tmp, e))?;
        staged.file = Some(file);
        let meta_tmp = unique_tmp(&self.meta_path(&staged.meta.id));
        staged.meta_tmp = Some(meta_tmp.clone());
        write_new_file(
            &meta_tmp,
            meta_bytes,
            self.options.durability == Durability::Sync,
        )?;
        Ok(())
    }

    /// A new temporary path in the sessions directory (made when missing) for a session file
    /// written piece by piece and then staged with [`SessionStore::stage_written`]; named as
    /// staged files are (`.{hint}.jsonl.{pid}.{n}.tmp`).
    ///
    /// Errors: I/O (the directory cannot be made).
    pub(crate) fn staging_path(&self, hint: &str) -> std::io::Result<PathBuf> {
        fs::create_dir_all(&self.dir)?;
        Ok(unique_tmp(&self.jsonl_path(hint)))
    }

    /// The meta [`SessionStore::prepare_session`] computes, for records written already
    /// (`bytes` bytes of `.jsonl` whose last 32 are fingerprinted by `tail`), read back one at
    /// a time, each with its byte offset in the `.jsonl`: the records are never all in memory.
    /// As in `prepare_session`, tokens are not counted here: `tokens_pending_from` is set for
    /// the first reader that reports the count.
    ///
    /// Errors: [`Error::InvalidId`]; the first error `records` yields.
    pub(crate) fn meta_of_written(
        &self,
        meta_seed: SessionMeta,
        records: impl IntoIterator<Item = Result<(SessionRecord, u64)>>,
        bytes: u64,
        tail: String,
    ) -> Result<SessionMeta> {
        validate_id(&meta_seed.id)?;
        let (mut meta, seeded_title) = counting_from(meta_seed);
        for record in records {
            let (record, offset) = record?;
            meta.apply_deferred(&record, offset);
        }
        counted(&mut meta, seeded_title, bytes, tail);
        Ok(meta)
    }

    /// [`SessionStore::stage_session`] for a `.jsonl` written already at `jsonl_tmp` (a path
    /// from [`SessionStore::staging_path`]; `file` is it, open): syncs it, locks it and writes
    /// the `.meta` beside it (fsynced only with `Durability::Sync`). Dropped without a commit, both files are removed.
    ///
    /// Errors: [`Error::InvalidId`], [`Error::Serialize`], I/O.
    pub(crate) fn stage_written(
        &self,
        meta: SessionMeta,
        jsonl_tmp: PathBuf,
        file: File,
    ) -> Result<StagedSession> {
        let mut staged = StagedSession {
            jsonl_tmp: Some(jsonl_tmp.clone()),
            meta_tmp: None,
            meta,
            file: None,
            synced: false,
        };
        validate_id(&staged.meta.id)?;
        let meta_bytes =
            serde_json::to_vec_pretty(&staged.meta).map_err(|source| Error::Serialize {
                id: staged.meta.id.clone(),
                source,
            })?;
        file.sync_all()
            .map_err(|e| Error::io("cannot sync", &jsonl_tmp, e))?;
        staged.synced = true;
        self.stage_file_and_meta(&mut staged, file, &jsonl_tmp, &meta_bytes)?;
        Ok(staged)
    }

    /// The committing half of [`SessionStore::write_prepared`]: under the caller's
    /// [`ImportLock`] and the old session's exclusive lock (if there is one), asks
    /// `keep_existing` whether replacing is allowed, then renames the staged `.meta` into place,
    /// then the staged `.jsonl` (see [`SessionStore::write_session`] for why in this order).
    /// `sync_dir_after`: fsync the sessions directory after the renames (a batch passes
    /// `false` and calls [`SessionStore::sync_dir`] once at its end).
    ///
    /// Errors: what `keep_existing` returns, [`Error::Locked`], I/O; on an error the staged
    /// files are removed and the store is as before.
    pub fn commit_staged(
        &self,
        _import_lock: &ImportLock,
        mut staged: StagedSession,
        keep_existing: impl FnOnce(&SessionMeta) -> Result<()>,
        sync_dir_after: bool,
    ) -> Result<(WriteOutcome, SessionMeta)> {
        // The records are on the disk before their name is (dropping `staged` removes it).
        staged.sync()?;
        let id = staged.meta.id.clone();
        let path = self.jsonl_path(&id);
        let existing = match self.open_locked(&path, &id, true) {
            Ok(f) => Some(f),
            Err(Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let outcome = if let Some(old) = &existing {
            if let Err(e) = self
                .load_meta_locked(&id, old, false)
                .and_then(|m| keep_existing(&m))
            {
                let _ = old.unlock();
                return Err(e);
            }
            // Replacing: the new meta must be on the disk before its name is. A power cut that
            // keeps its rename but not the `.jsonl`'s would else leave the old records beside a
            // lost meta, rebuilt without provenance: a session the next import of its source
            // refuses (`IdTaken`; putting a lost meta back needs the very records it writes).
            if self.options.durability != Durability::Sync
                && let Some(tmp) = &staged.meta_tmp
                && let Err(e) = File::open(tmp).and_then(|f| f.sync_all())
            {
                let _ = old.unlock();
                return Err(Error::io("cannot sync", tmp, e));
            }
            WriteOutcome::Replaced
        } else {
            WriteOutcome::Created
        };
        // The meta first: a kill between the two renames leaves the new meta beside the old
        // `.jsonl` (or beside none: no session), which its fingerprint marks as stale; it is
        // rebuilt from the file keeping the provenance, so the session stays importable. The
        // other order could leave the new records with the old meta or none, losing provenance.
        let meta_path = self.meta_path(&id);
        let rename = |tmp: &mut Option<PathBuf>, to: &Path| -> Result<()> {
            let from = tmp.as_deref().ok_or_else(|| {
                Error::io("cannot replace", to, std::io::Error::other("not staged"))
            })?;
            fs::rename(from, to).map_err(|e| Error::io("cannot replace", to, e))?;
            *tmp = None;
            Ok(())
        };
        let result = rename(&mut staged.meta_tmp, &meta_path)
            .and_then(|()| rename(&mut staged.jsonl_tmp, &path))
            .and_then(|()| {
                if sync_dir_after {
                    sync_dir(&self.dir)
                } else {
                    Ok(())
                }
            });
        if let Some(file) = staged.file.take() {
            let _ = file.unlock();
        }
        if let Some(old) = &existing {
            let _ = old.unlock();
        }
        let meta = staged.meta.clone();
        // Renamed (or failed): the drop removes whatever temporary file is left.
        drop(staged);
        result.map(|()| (outcome, meta))
    }

    /// Puts back the meta of an imported session that lost it: when session `prepared`'s id
    /// exists, its meta holds no import provenance (it was lost, e.g. a power cut before the
    /// unsynced meta reached the disk, and rebuilt from the records), and its `.jsonl` is byte
    /// for byte `prepared`'s, the prepared meta (provenance, title, sync mark) is written in
    /// its place, under the session's exclusive lock. Returns that meta, or `None` (nothing
    /// written) when any of this does not hold. The caller holds the [`ImportLock`].
    ///
    /// Errors: [`Error::Locked`], I/O.
    pub(crate) fn restore_import_meta(
        &self,
        _import_lock: &ImportLock,
        prepared: &PreparedSession,
    ) -> Result<Option<SessionMeta>> {
        let id = &prepared.meta.id;
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, true)?;
        let result = (|| {
            let current = self.load_meta_locked(id, &file, false)?;
            if current.extra.contains_key(crate::meta::IMPORTED_KEY)
                || file_len(&file, &path)? != prepared.bytes.len() as u64
            {
                return Ok(None);
            }
            // Compared a chunk at a time: the session is not held a second time.
            let mut chunk = vec![0u8; prepared.bytes.len().min(64 << 10)];
            let mut offset = 0u64;
            for want in prepared.bytes.chunks(chunk.len().max(1)) {
                let got = &mut chunk[..want.len()];
                read_at(&file, got, offset).map_err(|e| Error::io("cannot read", &path, e))?;
                if got != want {
                    return Ok(None);
                }
                offset += want.len() as u64;
            }
            self.write_meta(&prepared.meta)?;
            tracing::info!(session = %id, "the import provenance of the meta was restored");
            Ok(Some(prepared.meta.clone()))
        })();
        let _ = file.unlock();
        result
    }

    /// fsyncs the sessions directory (the renames of a batch of [`SessionStore::write_prepared`]
    /// calls made with `sync_dir_after: false`).
    ///
    /// Errors: I/O.
    pub fn sync_dir(&self) -> Result<()> {
        sync_dir(&self.dir)
    }
}

/// A session written and synced under temporary names, ready for
/// [`SessionStore::commit_staged`] (see [`SessionStore::stage_session`]). Dropped without a
/// commit, its temporary files are removed.
#[derive(Debug)]
pub struct StagedSession {
    /// The meta that will be written (as in the staged `.meta`).
    meta: SessionMeta,
    /// The staged files not renamed yet.
    jsonl_tmp: Option<PathBuf>,
    meta_tmp: Option<PathBuf>,
    /// The staged `.jsonl`, locked until it is renamed into place.
    file: Option<File>,
    /// The staged `.jsonl` was fsynced.
    synced: bool,
}

impl StagedSession {
    /// The meta that a commit puts in place.
    pub fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    /// fsyncs the staged `.jsonl` (once; [`SessionStore::commit_staged`] does it if nobody
    /// did: in an import, for the sessions whose batch was not synced as a whole).
    ///
    /// Errors: I/O naming the temporary file.
    pub fn sync(&mut self) -> Result<()> {
        if self.synced {
            return Ok(());
        }
        if let (Some(file), Some(path)) = (&self.file, &self.jsonl_tmp) {
            file.sync_all()
                .map_err(|e| Error::io("cannot sync", path, e))?;
        }
        self.synced = true;
        Ok(())
    }

    /// Whether the staged `.jsonl` is known to be on the disk (fsynced, or its file system
    /// synced after it was written).
    pub(crate) fn is_synced(&self) -> bool {
        self.synced
    }

    /// Marks the staged `.jsonl` as on the disk: the caller synced the whole file system that
    /// holds it ([`FileSystem::sync`]) after it was written, so its commit does not fsync it
    /// again.
    pub(crate) fn synced_with_file_system(&mut self) {
        self.synced = true;
    }
}

/// The file system of a store, to make everything written on it durable at once
/// ([`FileSystem::sync`]); only where that is sure ([`FileSystem::of`]). Elsewhere than Linux
/// there is none (the type has no value): callers fsync each file.
#[cfg(target_os = "linux")]
pub(crate) struct FileSystem(File);

/// See the Linux version: no file system is synced as a whole here.
#[cfg(not(target_os = "linux"))]
pub(crate) enum FileSystem {}

impl FileSystem {
    /// The file system that holds `dir`: `None` (callers then fsync each file,
    /// [`StagedSession::sync`]) unless this is Linux 5.8 or later (before, `syncfs` reported no
    /// writeback error) and `dir` is on a local disk file system whose `syncfs` writes
    /// everything back and flushes the disk (ext2/3/4, XFS, Btrfs, F2FS; not FUSE, virtiofs or
    /// network file systems, where only an fsync of the file itself is sure).
    pub(crate) fn of(dir: &Path) -> Option<FileSystem> {
        #[cfg(target_os = "linux")]
        {
            const LOCAL: &[i64] = &[
                0xEF53,      // ext2, ext3, ext4
                0x5846_5342, // XFS
                0x9123_683E, // Btrfs
                0xF2F5_2010, // F2FS
            ];
            let release = rustix::system::uname();
            let release = release.release().to_string_lossy();
            let mut parts = release
                .split(['.', '-'])
                .map(|p| p.parse::<u32>().unwrap_or(0));
            let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            if version < (5, 8) {
                return None;
            }
            let handle = File::open(dir).ok()?;
            let kind = rustix::fs::fstatfs(&handle).ok()?.f_type;
            #[allow(clippy::useless_conversion)] // `f_type` is an `i32` on some targets
            let kind = i64::from(kind);
            LOCAL.contains(&kind).then_some(FileSystem(handle))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            None
        }
    }

    /// Makes everything written so far on this file system durable: one `syncfs(2)`. For a
    /// batch of new files this replaces an fsync of each. On ext4 each fsync of a new file
    /// writes its inode block and waits for it alone; `syncfs` writes the batch's data and
    /// inodes back together and flushes the disk once (a Codex import's fsyncs were ~7 % of
    /// its samples: `docs/BENCHMARKS.md`). It also writes back what other programs wrote
    /// there, and an error it reports may be theirs: callers then fsync each of their files.
    ///
    /// Errors: I/O, as `syncfs` reports it (writeback errors since the last call).
    pub(crate) fn sync(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            rustix::fs::syncfs(&self.0).map_err(std::io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            match *self {}
        }
    }

    /// Whether [`FileSystem::sync`] would write back little besides `own_bytes` (the bytes
    /// written and not yet synced by the caller): the page cache that is dirty or under
    /// writeback, all file systems together (`Dirty` + `Writeback` in `/proc/meminfo`), is at
    /// most twice `own_bytes`, or [`FOREIGN_DIRTY_MAX`] more. A `syncfs` writes back the
    /// whole file system and waits for it: with 400 MB another program had just written, a
    /// one-file import (a hook's, on every turn) took 0.23–0.29 s instead of under 0.01 s
    /// (`docs/BENCHMARKS.md`). `false` when the counts cannot be read.
    pub(crate) fn little_else_dirty(&self, own_bytes: u64) -> bool {
        mem_core::fsread::read_to_string("/proc/meminfo")
            .is_ok_and(|meminfo| little_else_dirty_in(&meminfo, own_bytes))
    }
}

/// [`FileSystem::little_else_dirty`] for the text of `/proc/meminfo` (`false` when it lacks
/// the `Dirty:` or the `Writeback:` line).
fn little_else_dirty_in(meminfo: &str, own_bytes: u64) -> bool {
    let kib = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        line[name.len()..]
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    };
    let (Some(dirty), Some(writeback)) = (kib("Dirty:"), kib("Writeback:")) else {
        return false;
    };
    let pending = dirty.saturating_add(writeback).saturating_mul(1024);
    pending
        <= own_bytes
            .saturating_mul(2)
            .max(own_bytes.saturating_add(FOREIGN_DIRTY_MAX))
}

/// Bytes of unwritten data besides a batch's own that its `syncfs` may write back
/// ([`FileSystem::little_else_dirty`]): 64 MiB. They include the import's own files not yet in
/// a batch (up to its window of files) and its metas (not synced one by one), and another
/// program's data written back now is data the kernel writes anyway: in bulk a `syncfs` can
/// cost less than an fsync of each file (with 200 MB of another program's data unwritten, a
/// 100 MB Codex import took 0.53–0.62 s syncing the file system, 0.73–0.80 s fsyncing each
/// file).
const FOREIGN_DIRTY_MAX: u64 = 64 << 20;

impl Drop for StagedSession {
    fn drop(&mut self) {
        // The meta first: a kill in between leaves the staged `.jsonl`, which
        // `remove_stale_tmp` removes at once (a lone meta temporary file only when old).
        for tmp in [self.meta_tmp.take(), self.jsonl_tmp.take()]
            .into_iter()
            .flatten()
        {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// A session encoded and counted, ready for [`SessionStore::write_prepared`].
#[derive(Debug, Clone)]
pub struct PreparedSession {
    /// The meta that will be written (counts, `jsonl_bytes`, provenance).
    pub meta: SessionMeta,
    /// The `.jsonl` bytes.
    bytes: Vec<u8>,
}

impl PreparedSession {
    /// The size of the encoded `.jsonl` it holds, in bytes.
    pub(crate) fn encoded_len(&self) -> usize {
        self.bytes.len()
    }
}

impl SessionStore {
    /// The meta as it was right before `tail`, the last records of a session whose meta (after
    /// all of them) is `meta`; `before` is the record right before `tail` (`None` when `tail`
    /// is the whole session). Costs the size of `tail`, not of the session: counts are the
    /// final ones minus what `tail` added.
    ///
    /// Errors: [`Error::Serialize`] when a record cannot be encoded.
    pub fn mark_before(
        &self,
        meta: &SessionMeta,
        before: Option<&SessionRecord>,
        tail: &[SessionRecord],
    ) -> Result<MetaMark> {
        let mut tail_bytes = 0u64;
        let mut sizes = Vec::with_capacity(tail.len());
        for record in tail {
            let n = encode_record(&meta.id, record)?.len() as u64;
            sizes.push(n);
            tail_bytes += n;
        }
        let start = meta.jsonl_bytes.saturating_sub(tail_bytes);
        // With a deferred count, only the tail's records before the pending offset are in
        // `token_count`; a pending offset at or before the point carries over as it is.
        let pending = meta.tokens_pending_from;
        let mut offset = start;
        let mut messages = 0usize;
        let mut compactions = 0usize;
        let mut tokens = 0usize;
        let mut boundary_in_tail = false;
        for (record, size) in tail.iter().zip(sizes) {
            let counted = pending.is_none_or(|p| offset < p);
            offset += size;
            match record.record_type {
                crate::record::RecordType::User
                | crate::record::RecordType::Assistant
                | crate::record::RecordType::ToolResult => {
                    if let Some(m) = &record.message {
                        messages += 1;
                        if !boundary_in_tail && counted {
                            tokens += self.options.counter.count_message(m);
                        }
                    }
                }
                crate::record::RecordType::CompactBoundary
                | crate::record::RecordType::Compression => {
                    if crate::record::parse_compact_boundary(record).is_some() {
                        compactions += 1;
                        boundary_in_tail = true;
                    }
                }
                crate::record::RecordType::Rollback => {
                    if crate::record::parse_rollback(record).is_some() {
                        boundary_in_tail = true;
                    }
                }
                crate::record::RecordType::SystemPrompt => {}
            }
        }
        let tail_fp = match before {
            Some(r) => tail_fingerprint(&encode_record(&meta.id, r)?),
            None => String::new(),
        };
        Ok(MetaMark {
            bytes: start,
            tail: tail_fp,
            message_count: meta.message_count.saturating_sub(messages),
            // A boundary in the tail resets the count when the tail is applied again.
            token_count: if boundary_in_tail {
                0
            } else {
                meta.token_count.saturating_sub(tokens)
            },
            tokens_pending_from: pending.filter(|&p| p <= start),
            compactions: meta.compactions.saturating_sub(compactions),
            last_active: before
                .and_then(|r| r.timestamp.clone())
                .unwrap_or_else(|| meta.created.clone()),
        })
    }

    /// Replaces the records of session `id` after the point `base` describes with `records`:
    /// the `.jsonl` is cut back to `base.bytes` and `records` appended, all under the exclusive
    /// session lock (and the caller's [`ImportLock`]). This is how a grown transcript is
    /// re-imported incrementally: the records before `base` are never read or touched, so the
    /// cost grows with `records`, not with the session.
    ///
    /// `check` sees the current meta and the `.jsonl` length and refuses by returning an error
    /// (e.g. records were appended by someone else). Before anything is cut, the meta is saved
    /// with `"rewriting": {"from": base.bytes}` in `extra`, so that after a crash in the
    /// middle, `check` can tell that the bytes past `base` are the rewrite's own. The meta is
    /// then rebuilt from `base` plus `records`; `amend` completes it (it must remove
    /// `rewriting`) before it is written. `mark_at` asks for the [`MetaMark`] right before
    /// `records[mark_at]`, handed to `amend`. Returns the meta and `true`, or the meta as it
    /// was and `false` when the `.jsonl` already ends with exactly `records` after `base`
    /// (nothing is written then, `amend` is not called).
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], [`Error::Changed`] when the session's
    /// bytes before `base.bytes` are not the ones `base` describes, what `check` returns, I/O.
    #[allow(clippy::too_many_arguments)]
    pub fn rewrite_tail(
        &self,
        _import_lock: &ImportLock,
        id: &str,
        base: &MetaMark,
        records: &[SessionRecord],
        mark_at: Option<usize>,
        check: impl FnOnce(&SessionMeta, u64) -> Result<()>,
        amend: impl FnOnce(&mut SessionMeta, Option<MetaMark>) -> Result<()>,
    ) -> Result<(SessionMeta, bool)> {
        let path = self.jsonl_path(id);
        let file = loop {
            let file = match OpenOptions::new().read(true).write(true).open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::NotFound {
                        id: id.to_owned(),
                        dir: self.dir.clone(),
                    });
                }
                Err(e) => return Err(Error::io("cannot open", &path, e)),
            };
            lock(&file, &path, true, self.options.lock_timeout)?;
            if same_file(&file, &path) {
                break file;
            }
            let _ = file.unlock();
        };
        let result =
            self.rewrite_tail_locked(id, &file, &path, base, records, mark_at, check, amend);
        let _ = file.unlock();
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn rewrite_tail_locked(
        &self,
        id: &str,
        file: &File,
        path: &Path,
        base: &MetaMark,
        records: &[SessionRecord],
        mark_at: Option<usize>,
        check: impl FnOnce(&SessionMeta, u64) -> Result<()>,
        amend: impl FnOnce(&mut SessionMeta, Option<MetaMark>) -> Result<()>,
    ) -> Result<(SessionMeta, bool)> {
        let mut meta = self.load_meta_locked(id, file, false)?;
        let len = file_len(file, path)?;
        let intact = base.bytes <= len
            && file_tail_fingerprint(file, base.bytes)
                .map_err(|e| Error::io("cannot read", path, e))?
                == base.tail;
        if !intact {
            return Err(Error::Changed {
                id: id.to_owned(),
                detail: format!(
                    "its records before byte {} are not the ones last imported",
                    base.bytes
                ),
            });
        }
        check(&meta, len)?;
        let mut new = meta.clone();
        let mut bytes = Vec::new();
        let mut mark = None;
        new.jsonl_bytes = base.bytes;
        new.jsonl_tail.clone_from(&base.tail);
        new.message_count = base.message_count;
        new.token_count = base.token_count;
        new.tokens_pending_from = base.tokens_pending_from;
        new.compactions = base.compactions;
        new.last_active.clone_from(&base.last_active);
        for (i, record) in records.iter().enumerate() {
            if mark_at == Some(i) {
                mark = Some(MetaMark {
                    bytes: base.bytes + bytes.len() as u64,
                    tail: if i == 0 {
                        base.tail.clone()
                    } else {
                        tail_fingerprint(&bytes)
                    },
                    message_count: new.message_count,
                    token_count: if records[i..]
                        .iter()
                        .any(|r| crate::record::parse_compact_boundary(r).is_some())
                    {
                        0
                    } else {
                        new.token_count
                    },
                    tokens_pending_from: new.tokens_pending_from,
                    compactions: new.compactions,
                    last_active: new.last_active.clone(),
                });
            }
            let offset = base.bytes + bytes.len() as u64;
            bytes.extend_from_slice(&encode_record(id, record)?);
            // Imported records are counted by the first reader that needs the count.
            new.apply_deferred(record, offset);
        }
        // Nothing new (the source grew by lines that convert to nothing, or not at all):
        // leave the file alone.
        if len - base.bytes == bytes.len() as u64 && !meta.extra.contains_key(REWRITING_KEY) {
            let mut old = vec![0u8; bytes.len()];
            read_at(file, &mut old, base.bytes).map_err(|e| Error::io("cannot read", path, e))?;
            if old == bytes {
                return Ok((meta, false));
            }
        }
        meta.extra.insert(
            REWRITING_KEY.to_owned(),
            serde_json::json!({ "from": base.bytes }),
        );
        self.write_meta(&meta)?;
        let mut meta = new;
        let mut writer = file;
        writer
            .set_len(base.bytes)
            .and_then(|()| writer.seek(SeekFrom::End(0)).map(|_| ()))
            .and_then(|()| writer.write_all(&bytes))
            .map_err(|e| Error::io("cannot rewrite", path, e))?;
        if self.options.durability == Durability::Sync {
            file.sync_data()
                .map_err(|e| Error::io("cannot sync", path, e))?;
        }
        meta.jsonl_bytes = base.bytes + bytes.len() as u64;
        meta.jsonl_tail = file_tail_fingerprint(file, meta.jsonl_bytes)
            .map_err(|e| Error::io("cannot read", path, e))?;
        amend(&mut meta, mark)?;
        meta.extra.remove(REWRITING_KEY);
        self.write_meta(&meta)?;
        Ok((meta, true))
    }
}

/// Key of [`SessionMeta::extra`] present while [`SessionStore::rewrite_tail`] runs (left there
/// by a crash): `{"from": bytes}`, the length the `.jsonl` was being cut back to.
pub const REWRITING_KEY: &str = "rewriting";

/// A session's meta at one point of its `.jsonl` (a record boundary): enough to cut the file
/// back there and rebuild the meta from the records appended after it, without reading
/// anything before (see [`SessionStore::rewrite_tail`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MetaMark {
    /// Byte length of the `.jsonl` up to the point.
    pub bytes: u64,
    /// Hex of the (up to) 32 bytes before the point, as [`SessionMeta::jsonl_tail`].
    pub tail: String,
    /// [`SessionMeta::message_count`] at the point.
    pub message_count: usize,
    /// [`SessionMeta::token_count`] at the point (0 when a boundary follows: it resets it).
    pub token_count: usize,
    /// [`SessionMeta::tokens_pending_from`] at the point (`None`: `token_count` is complete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_pending_from: Option<u64>,
    /// [`SessionMeta::compactions`] at the point.
    pub compactions: usize,
    /// [`SessionMeta::last_active`] at the point.
    pub last_active: String,
}

/// One record as its line in the `.jsonl`, newline included.
fn encode_record(id: &str, record: &SessionRecord) -> Result<Vec<u8>> {
    let mut line = crate::record::to_json_vec(record).map_err(|source| Error::Serialize {
        id: id.to_owned(),
        source,
    })?;
    line.push(b'\n');
    Ok(line)
}

/// The store's import lock (see [`SessionStore::lock_imports`]); released when dropped.
#[derive(Debug)]
pub struct ImportLock {
    _file: File,
}

/// How long a [`SessionWriter`] may leave its `.meta` behind its appends (250 ms). The meta is a
/// cache of the `.jsonl` (every reader brings a lagging one up to date from the bytes after its
/// `jsonl_bytes`), so a run of appends rewrites it at most this often, and at
/// [`SessionWriter::flush_meta`] or drop; a boundary, or [`Durability::Sync`], writes it at once.
pub const META_FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// A session open for appending. Holds no lock between calls.
///
/// The `.meta` is updated lazily (see [`META_FLUSH_INTERVAL`]): an append writes the record
/// under the session lock and updates the meta in memory; the file is rewritten at most every
/// 250 ms, on a boundary, by [`SessionWriter::flush_meta`] and when the writer is dropped. A
/// crash in between leaves a meta that lags behind the `.jsonl`; it is repaired from the records
/// after its `jsonl_bytes` by the next reader, so no count is ever lost.
#[derive(Debug)]
pub struct SessionWriter {
    store: SessionStore,
    id: String,
    path: PathBuf,
    file: File,
    meta: SessionMeta,
    /// The in-memory meta is ahead of the `.meta` file.
    meta_dirty: bool,
    /// When the `.meta` was last written by this writer.
    meta_saved_at: Instant,
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        if let Err(e) = self.flush_meta() {
            tracing::debug!("session {}: meta not saved on close ({e})", self.id);
        }
    }
}

impl SessionWriter {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Path of the `.jsonl`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The meta as of the last append (the `.meta` file may lag behind it by up to
    /// [`META_FLUSH_INTERVAL`]; see [`SessionWriter::flush_meta`]). Appends do not count
    /// tokens: `token_count` covers only the records before
    /// [`SessionMeta::tokens_pending_from`] when that is set; [`SessionWriter::complete_meta`]
    /// gives the complete count.
    pub fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    /// The meta as of the last append with its `token_count` complete: the records whose tokens
    /// are pending ([`SessionMeta::tokens_pending_from`], or the last boundary after it) are
    /// read back from the `.jsonl` under a shared lock and counted (o200k_base), once; the
    /// count is kept and written with the next meta update.
    ///
    /// Errors: [`Error::Locked`], I/O errors reading the `.jsonl`.
    pub fn complete_meta(&mut self) -> Result<&SessionMeta> {
        if self.meta.tokens_pending_from.is_some() && !self.store.options.defer_tokens {
            lock(
                &self.file,
                &self.path,
                false,
                self.store.options.lock_timeout,
            )?;
            let mut meta = self.meta.clone();
            let result = self.store.count_pending_tokens(&mut meta, &self.file);
            let _ = self.file.unlock();
            result?;
            self.meta = meta;
            self.meta_dirty = true;
        }
        Ok(&self.meta)
    }

    /// Writes the in-memory meta to the `.meta` file now if it is ahead of it, under the session
    /// lock, and only when no other writer appended since (their meta, or the repair of it from
    /// the `.jsonl`, is then the newer one) and the file was not replaced.
    ///
    /// Errors: [`Error::Locked`], I/O errors writing the meta.
    pub fn flush_meta(&mut self) -> Result<()> {
        if !self.meta_dirty {
            return Ok(());
        }
        self.lock_exclusive()?;
        let result = if self.is_current()
            && file_len(&self.file, &self.path).ok() == Some(self.meta.jsonl_bytes)
        {
            self.store.write_meta(&self.meta)
        } else {
            Ok(())
        };
        let _ = self.file.unlock();
        self.meta_dirty = false;
        if result.is_ok() {
            self.meta_saved_at = Instant::now();
        }
        result
    }

    /// Appends one message now (seed §1 `session.append(message)`), typed by its role and
    /// content; updates the meta's count, last_active and (first user message) title.
    pub fn append(&mut self, message: &Message) -> Result<()> {
        self.append_records(&[SessionRecord::message(message.clone(), Some(now_rfc3339()))])
    }

    /// Appends a compaction boundary: `summary` of the prefix and the tail kept verbatim. The
    /// records before it are never touched; resume replays from here.
    pub fn append_compact_boundary(
        &mut self,
        summary: &str,
        keep_messages: Vec<Message>,
    ) -> Result<()> {
        self.append_records(&[make_compact_boundary(
            summary,
            keep_messages,
            Some(now_rfc3339()),
        )])
    }

    /// Appends records with one `write` and one meta update. On error nothing was added (the
    /// file is truncated back) unless the truncation itself failed, in which case the partial
    /// line is left behind a newline and reported as malformed on read.
    pub fn append_records(&mut self, records: &[SessionRecord]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let line = self.encode(records)?;
        self.with_lock(|w| w.write_locked(&line, records))
    }

    /// The records as JSON lines, each ending with `\n`.
    fn encode(&self, records: &[SessionRecord]) -> Result<Vec<u8>> {
        let mut line = Vec::with_capacity(256);
        for record in records {
            crate::record::write_json(&mut line, record).map_err(|source| Error::Serialize {
                id: self.id.clone(),
                source,
            })?;
            line.push(b'\n');
        }
        Ok(line)
    }

    /// Appends records as [`Self::append_records`] does, but only if the `.jsonl` still holds
    /// exactly `expected_len` bytes, checked under the same exclusive lock as the write: `Ok(false)`
    /// (nothing written) when another writer appended, or the file was truncated or replaced,
    /// since the caller read it. For writes computed from what was read, such as a compaction
    /// boundary, which must not replace messages appended meanwhile.
    pub fn append_records_if_len(
        &mut self,
        expected_len: u64,
        records: &[SessionRecord],
    ) -> Result<bool> {
        let line = self.encode(records)?;
        self.with_lock(|w| {
            if file_len(&w.file, &w.path)? != expected_len {
                return Ok(false);
            }
            if !records.is_empty() {
                w.write_locked(&line, records)?;
            }
            Ok(true)
        })
    }

    fn write_locked(&mut self, line: &[u8], records: &[SessionRecord]) -> Result<()> {
        let len = file_len(&self.file, &self.path)?;
        if len != self.meta.jsonl_bytes {
            // Another writer appended (or a crash left the meta behind): catch up.
            self.meta = self.store.load_meta_locked(&self.id, &self.file, false)?;
        }
        let torn = len > 0
            && last_byte(&self.file, len).map_err(|e| Error::io("cannot read", &self.path, e))?
                != b'\n';
        let mut buf;
        let bytes = if torn {
            buf = Vec::with_capacity(line.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(line);
            tracing::warn!(
                "{}: the last line was incomplete; appending on a fresh line",
                self.path.display()
            );
            &buf[..]
        } else {
            line
        };
        if let Err(e) = self.file.write_all(bytes) {
            let _ = self.file.set_len(len);
            return Err(Error::io("cannot append to", &self.path, e));
        }
        if self.store.options.durability == Durability::Sync
            && let Err(e) = self.file.sync_data()
        {
            let _ = self.file.set_len(len);
            return Err(Error::io("cannot sync", &self.path, e));
        }
        // The first record starts after the newline added to a torn line.
        let first = len + u64::from(torn);
        if len == 0
            && let Some(ts) = records.iter().find_map(|r| r.timestamp.as_ref())
        {
            // A reader rebuilding the meta takes the first record's timestamp as the creation
            // time; the writer's meta must say the same, whenever the `.meta` is written.
            self.meta.created.clone_from(ts);
        }
        // The tokens are not counted here (o200k counting was ~40 % of an append): the meta
        // says from where they are pending, and the first reader that reports the count
        // completes it (`SessionStore::meta`, `list`, `resume`, `SessionWriter::complete_meta`).
        for record in records {
            self.meta.apply_deferred(record, first);
        }
        self.meta.jsonl_bytes = len + bytes.len() as u64;
        self.meta.jsonl_tail = if bytes.len() >= 32 {
            tail_fingerprint(bytes)
        } else {
            file_tail_fingerprint(&self.file, self.meta.jsonl_bytes)
                .map_err(|e| Error::io("cannot read", &self.path, e))?
        };
        // The record is on disk; the meta is a cache (repaired from the file by any reader), so
        // it is written at most every META_FLUSH_INTERVAL, at once for a boundary or with Sync.
        let now_too = self.store.options.durability == Durability::Sync
            || records.iter().any(|r| r.message.is_none())
            || self.meta_saved_at.elapsed() >= META_FLUSH_INTERVAL;
        if !now_too {
            self.meta_dirty = true;
            return Ok(());
        }
        match self.store.write_meta(&self.meta) {
            Ok(()) => {
                self.meta_dirty = false;
                self.meta_saved_at = Instant::now();
            }
            Err(e) => {
                self.meta_dirty = true;
                tracing::warn!(
                    "session {}: meta not updated ({e}); it will be rebuilt from the .jsonl",
                    self.id
                );
            }
        }
        Ok(())
    }

    /// Runs `f` under the exclusive lock, reopening first if the file was replaced (an import).
    fn with_lock<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        loop {
            self.lock_exclusive()?;
            if self.is_current() {
                break;
            }
            let _ = self.file.unlock();
            // Replaced by an import: reopen. Deleted: do not bring the session back.
            if !self.path.exists() {
                return Err(Error::NotFound {
                    id: self.id.clone(),
                    dir: self.store.dir.clone(),
                });
            }
            self.file = open_append(&self.path)?;
            self.meta.jsonl_bytes = u64::MAX;
        }
        let out = f(self);
        let _ = self.file.unlock();
        out
    }

    /// Takes the exclusive lock on the file this writer holds (waiting up to the store's
    /// `lock_timeout`).
    fn lock_exclusive(&self) -> Result<()> {
        lock(
            &self.file,
            &self.path,
            true,
            self.store.options.lock_timeout,
        )
    }

    fn is_current(&self) -> bool {
        same_file(&self.file, &self.path)
    }
}

/// Most recently active first, then by id.
fn sort_by_activity(metas: &mut [SessionMeta]) {
    metas.sort_by(|a, b| {
        b.last_active
            .cmp(&a.last_active)
            .then_with(|| a.id.cmp(&b.id))
    });
}

fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(|e| Error::io("cannot open for appending", path, e))
}

fn open_existing(path: &Path, id: &str, dir: &Path) -> Result<File> {
    match mem_core::fsread::open(path) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound {
            id: id.to_owned(),
            dir: dir.to_owned(),
        }),
        Err(e) => Err(Error::io("cannot open", path, e)),
    }
}

/// Takes the lock, retrying with short sleeps until `timeout`.
fn lock(file: &File, path: &Path, exclusive: bool, timeout: Duration) -> Result<()> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let attempt = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match attempt {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(Error::Locked {
                        path: path.to_owned(),
                        waited_ms: start.elapsed().as_millis() as u64,
                    });
                }
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("cannot lock", path, e)),
        }
    }
}

fn file_len(file: &File, path: &Path) -> Result<u64> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| Error::io("cannot stat", path, e))
}

fn file_created(file: &File) -> Option<String> {
    let modified = file.metadata().ok()?.modified().ok()?;
    Some(
        chrono::DateTime::<chrono::Utc>::from(modified)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

fn last_byte(file: &File, len: u64) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    read_at(file, &mut b, len - 1)?;
    Ok(b[0])
}

const BOUNDARY_PATTERNS: [&[u8]; 3] = [
    b"\n{\"type\":\"compact_boundary\"",
    b"\n{\"type\":\"compression\"",
    b"\n{\"type\":\"rollback\"",
];
const SCAN_CHUNK: u64 = 1 << 20;

/// Offset of the start of the last line before `end` that begins a boundary, compression or
/// rollback record, searching backwards in 1 MiB chunks. Reads only the bytes after that line start
/// (plus one chunk at most).
pub(crate) fn find_last_boundary(file: &File, end: u64) -> std::io::Result<Option<u64>> {
    find_last_boundary_kept(file, end, 0).map(|(start, _)| start)
}

/// [`find_last_boundary`], when the line found is a record that resets the token count (a valid
/// boundary, compression marker or rollback): `None` when there is none, or when that line only
/// looks like one (a boundary torn by a kill, then appended after on a fresh line, is a damaged
/// line, not a reset). Token counting starts there; on `None` the caller counts from further
/// back, where reading the records in order applies every real reset.
///
/// Errors: I/O naming `path`.
fn find_last_reset(file: &File, path: &Path, end: u64) -> Result<Option<u64>> {
    let Some(at) = find_last_boundary(file, end).map_err(|e| Error::io("cannot read", path, e))?
    else {
        return Ok(None);
    };
    // The caller may be reading `file` already: its position is put back.
    let mut reader = file;
    let position = reader
        .stream_position()
        .map_err(|e| Error::io("cannot read", path, e))?;
    reader
        .seek(SeekFrom::Start(at))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let first = JsonlReader::starting_at(BufReader::new(reader.take(end - at)), path, 1, at).next();
    reader
        .seek(SeekFrom::Start(position))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let resets = match first {
        Some(JsonlEvent::Value(line)) if line.offset == at => {
            serde_json::from_value::<SessionRecord>(line.value).is_ok_and(|r| {
                r.check().is_ok()
                    && match r.record_type {
                        RecordType::CompactBoundary | RecordType::Compression => {
                            crate::record::parse_compact_boundary(&r).is_some()
                        }
                        RecordType::Rollback => crate::record::parse_rollback(&r).is_some(),
                        _ => false,
                    }
            })
        }
        _ => false,
    };
    Ok(resets.then_some(at))
}

/// The most bytes [`find_last_boundary_kept`] keeps of what it read (64 MiB): a longer tail is
/// read again from the file rather than held.
const KEEP_TAIL_MAX: u64 = 64 << 20;

/// [`find_last_boundary`], also returning the bytes it read from the line found (or from the
/// start of the file when there is none) up to `end`, when they are at most `keep_max` bytes:
/// the caller parses the tail from them instead of reading it again (resume reads its tail
/// once). `None` when the tail is longer (the chunks are dropped as the search goes on, so
/// memory stays bounded by `keep_max` plus one chunk).
fn find_last_boundary_kept(
    file: &File,
    end: u64,
    keep_max: u64,
) -> std::io::Result<(Option<u64>, Option<Vec<u8>>)> {
    // Chunks read so far, newest first, each [start, end) without the overlap.
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut keeping = keep_max > 0;
    let assemble = |from: u64, first: &[u8], kept: &mut Vec<Vec<u8>>| {
        let mut out = Vec::with_capacity(usize::try_from(end - from).unwrap_or(0));
        out.extend_from_slice(first);
        for chunk in kept.drain(..).rev() {
            out.extend_from_slice(&chunk);
        }
        out
    };
    let finders: Vec<memchr::memmem::FinderRev<'_>> = BOUNDARY_PATTERNS
        .iter()
        .map(|p| memchr::memmem::FinderRev::new(*p))
        .collect();
    let overlap = BOUNDARY_PATTERNS.iter().map(|p| p.len()).max().unwrap_or(0) as u64;
    let mut chunk_end = end;
    let mut buf = Vec::new();
    while chunk_end > 0 {
        let chunk_start = chunk_end.saturating_sub(SCAN_CHUNK);
        let read_end = (chunk_end + overlap).min(end);
        buf.resize((read_end - chunk_start) as usize, 0);
        read_at(file, &mut buf, chunk_start)?;
        let best = finders.iter().filter_map(|f| f.rfind(&buf)).max();
        let own = (chunk_end - chunk_start) as usize;
        if let Some(pos) = best {
            let line_start = chunk_start + pos as u64 + 1;
            if line_start < end {
                let tail = keeping.then(|| {
                    // The line found starts inside this chunk's own bytes or in its overlap
                    // (the first bytes of the newer chunk, kept already).
                    let at = (pos + 1).min(own);
                    let mut tail = assemble(line_start, &buf[at..own], &mut kept);
                    let skip = (pos + 1).saturating_sub(own);
                    tail.drain(..skip);
                    tail
                });
                return Ok((Some(line_start), tail));
            }
        }
        if keeping {
            if end - chunk_start <= keep_max {
                kept.push(buf[..own].to_vec());
            } else {
                keeping = false;
                kept.clear();
            }
        }
        chunk_end = chunk_start;
    }
    let tail = keeping.then(|| assemble(0, &[], &mut kept));
    // The very first line has no newline before it.
    let mut head = vec![0u8; (overlap as usize + 3).min(end as usize)];
    read_at(file, &mut head, 0)?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    if BOUNDARY_PATTERNS.iter().any(|p| head.starts_with(&p[1..])) && end > 0 {
        return Ok((Some(0), tail));
    }
    Ok((None, tail))
}

/// The messages among `records` (user, assistant, tool-result records with a message), in
/// order; other records (boundaries, titles, rollbacks...) are passed over.
pub fn message_records(records: Vec<SessionRecord>) -> Vec<Message> {
    use crate::record::RecordType;
    records
        .into_iter()
        .filter(|r| {
            matches!(
                r.record_type,
                RecordType::User | RecordType::Assistant | RecordType::ToolResult
            )
        })
        .filter_map(|r| r.message)
        .collect()
}

/// How many message records `line` (one physical line, without its newline, starting at byte
/// `offset` of the file) holds, read exactly as the forward reader and [`SessionMeta::apply`]
/// read it ([`JsonlReader`]: invalid UTF-8 replaced, glued objects split, garbage after a value
/// skipped; valid records of a message type with a message).
fn line_messages(line: &[u8], offset: u64) -> usize {
    use crate::record::RecordType;
    JsonlReader::starting_at(line, "", 1, offset)
        .filter_map(|ev| match ev {
            JsonlEvent::Value(v) => serde_json::from_value::<SessionRecord>(v.value).ok(),
            JsonlEvent::Diagnostic(_) => None,
        })
        .filter(|r| {
            r.check().is_ok()
                && matches!(
                    r.record_type,
                    RecordType::User | RecordType::Assistant | RecordType::ToolResult
                )
                && r.message.is_some()
        })
        .count()
}

/// The byte offset of the start of the last line, before byte `len`, such that the lines from
/// it on hold at least `want` message records (0 when the whole file holds fewer). Reads
/// backwards in chunks, parsing only the lines it passes; a line longer than a chunk is read
/// whole with a bigger one.
fn find_last_messages(file: &File, len: u64, want: usize) -> std::io::Result<u64> {
    let mut count = 0;
    // Bytes [chunk_start, line_end) are read; lines ending at line_end are not yet counted.
    let mut line_end = len;
    let mut size = SCAN_CHUNK;
    let mut buf = Vec::new();
    while line_end > 0 {
        let chunk_start = line_end.saturating_sub(size);
        buf.resize((line_end - chunk_start) as usize, 0);
        read_at(file, &mut buf, chunk_start)?;
        let mut end = buf.len();
        while let Some(nl) = memchr::memrchr(b'\n', &buf[..end]) {
            let start = chunk_start + nl as u64 + 1;
            count += line_messages(&buf[nl + 1..end], start);
            if count >= want {
                return Ok(start);
            }
            end = nl;
        }
        if chunk_start == 0 {
            // The first line: no newline before it.
            return Ok(0);
        }
        line_end = chunk_start + end as u64;
        // No newline in the whole chunk: the line is longer than it; read more at once.
        if end == buf.len() {
            size = size.saturating_mul(2);
        }
    }
    Ok(0)
}

fn count_lines_before(file: &File, offset: u64) -> std::io::Result<usize> {
    let mut f = file;
    f.seek(SeekFrom::Start(0))?;
    let mut reader = f.take(offset);
    let mut count = 0;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(count);
        }
        count += memchr::memchr_iter(b'\n', &buf[..n]).count();
    }
}

/// Parses the records from `offset` to the end; lines that are not valid records become
/// diagnostics (line numbers relative to `offset`).
fn read_records_from(
    file: &File,
    path: &Path,
    offset: u64,
) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
    read_records_range(file, path, offset, u64::MAX)
}

/// [`read_records_from`], stopping at byte `end`.
fn read_records_range(
    file: &File,
    path: &Path,
    offset: u64,
    end: u64,
) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let reader = reader.take(end.saturating_sub(offset));
    Ok(parse_records(
        BufReader::with_capacity(1 << 16, reader),
        path,
        offset,
    ))
}

/// The records of the JSON lines `reader` yields, whose first byte is at `offset` of the file
/// at `path`; damaged lines and lines that are not records become diagnostics.
fn parse_records(
    reader: impl std::io::BufRead,
    path: &Path,
    offset: u64,
) -> (Vec<SessionRecord>, Vec<Diagnostic>) {
    let mut records = Vec::new();
    let mut diagnostics = Vec::new();
    for ev in JsonlReader::starting_at(reader, path, 1, offset) {
        match ev {
            JsonlEvent::Value(line) => match serde_json::from_value::<SessionRecord>(line.value) {
                Ok(record) => match record.check() {
                    Ok(()) => records.push(record),
                    Err(why) => diagnostics.push(
                        Diagnostic::error(path, line.line, format!("{why}; record skipped"))
                            .with_kind("invalid-record"),
                    ),
                },
                Err(e) => diagnostics.push(
                    Diagnostic::error(
                        path,
                        line.line,
                        format!("not a session record: {e}; skipped"),
                    )
                    .with_kind("not-a-record"),
                ),
            },
            JsonlEvent::Diagnostic(d) => diagnostics.push(d),
        }
    }
    (records, diagnostics)
}

/// The replay of a session's first `end` bytes, before validation.
struct Segment {
    messages: Vec<Message>,
    diagnostics: Vec<Diagnostic>,
    /// Where the last boundary or rollback (the replay's start) is, if any.
    offset: Option<u64>,
    /// A rollback was followed on the way.
    rolled_back: bool,
}

/// Rollbacks followed at most (each one points strictly earlier in the file, so this only
/// guards the stack against a file made of millions of them).
const MAX_ROLLBACK_DEPTH: usize = 10_000;

/// Replays the first `end` bytes of a session: from the last boundary (its summary and kept
/// tail) or the last rollback (the replay of the prefix it names, recursively) before `end`,
/// then the records after it. A candidate that does not parse (torn), or a rollback that does
/// not point before itself, is passed over and the search goes on before it.
fn replay_segment(file: &File, path: &Path, end: u64, depth: usize) -> Result<Segment> {
    let mut search_end = end;
    loop {
        // The first search keeps the bytes it reads, so the tail is read once (a later one,
        // past a candidate that was no boundary, reads the range again).
        let keep_max = if search_end == end { KEEP_TAIL_MAX } else { 0 };
        let (start, tail) = find_last_boundary_kept(file, search_end, keep_max)
            .map_err(|e| Error::io("cannot read", path, e))?;
        let from = start.unwrap_or(0);
        let (records, mut diagnostics) = match tail {
            Some(bytes) => parse_records(&bytes[..], path, from),
            None => read_records_range(file, path, from, end)?,
        };
        if from > 0 && !diagnostics.is_empty() {
            let base =
                count_lines_before(file, from).map_err(|e| Error::io("cannot read", path, e))?;
            for d in &mut diagnostics {
                if d.line > 0 {
                    d.line += base;
                }
            }
        }
        let Some(s) = start else {
            return Ok(Segment {
                messages: crate::record::tail_to_messages(records),
                diagnostics,
                offset: None,
                rolled_back: false,
            });
        };
        let first = records.first();
        if let Some(rb) = first.and_then(crate::record::parse_rollback)
            && rb.to_bytes <= s
            && depth < MAX_ROLLBACK_DEPTH
        {
            let mut prefix = replay_segment(file, path, rb.to_bytes, depth + 1)?;
            prefix
                .messages
                .extend(crate::record::tail_to_messages(records.into_iter().skip(1)));
            prefix.diagnostics.extend(diagnostics);
            return Ok(Segment {
                messages: prefix.messages,
                diagnostics: prefix.diagnostics,
                offset: Some(s),
                rolled_back: true,
            });
        }
        if first.is_some_and(|r| crate::record::parse_compact_boundary(r).is_some()) {
            return Ok(Segment {
                messages: crate::record::tail_to_messages(records),
                diagnostics,
                offset: Some(s),
                rolled_back: false,
            });
        }
        search_end = s;
    }
}

thread_local! {
    /// The buffer [`SessionStore::prepare_session`] encodes into, given back by
    /// [`SessionStore::stage_session`] once written: an import encodes one session after
    /// another on each thread, and a fresh buffer grew by reallocations onto fresh pages each
    /// time (~4 % of a Codex import's CPU in copies and page clearing).
    static ENCODE_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest encode buffer kept for the next session (8 MiB): larger sessions are rare, and
/// a thread keeps at most this much.
const ENCODE_BUFFER_KEEP: usize = 8 << 20;

/// Keeps `bytes` as this thread's encode buffer when it is no larger than
/// [`ENCODE_BUFFER_KEEP`] and larger than the one kept.
fn recycle_encode_buffer(bytes: Vec<u8>) {
    if bytes.capacity() <= ENCODE_BUFFER_KEEP {
        ENCODE_BUFFER.with_borrow_mut(|kept| {
            if kept.capacity() < bytes.capacity() {
                *kept = bytes;
            }
        });
    }
}

/// Creates `path` with `bytes`, `fsync`ed when `sync`; its directory is made when missing.
fn write_new_file(path: &Path, bytes: &[u8], sync: bool) -> Result<File> {
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
fn unique_tmp(path: &Path) -> PathBuf {
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
fn process_id() -> u32 {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// Age past which [`SessionStore::remove_stale_tmp`] removes a temporary file whose process
/// it cannot see.
const STALE_TMP_AGE: Duration = Duration::from_secs(3600);

/// What the name of a temporary file [`unique_tmp`] made for a session's file says.
struct TmpName {
    /// The session id.
    id: String,
    /// The process that made it.
    pid: u32,
    /// A `.meta` (else a `.jsonl`).
    meta: bool,
}

/// The session, process and kind in the name of a temporary file [`unique_tmp`] made for a
/// session's `.jsonl` or `.meta` (`.{id}.jsonl.{pid}.{n}.tmp`), or `None` for any other name.
fn stale_tmp_name(name: &str) -> Option<TmpName> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = inner.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    let file = parts.next()?;
    let (id, meta) = match file.strip_suffix(".jsonl") {
        Some(id) => (id, false),
        None => (file.strip_suffix(".meta")?, true),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(n) || !digits(pid) || validate_id(id).is_err() {
        return None;
    }
    Some(TmpName {
        id: id.to_owned(),
        pid: pid.parse().ok()?,
        meta,
    })
}

/// `true` when `file` is the file `path` names now (same device and inode).
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// [`tail_fingerprint`] of the file's bytes before `end`.
fn file_tail_fingerprint(file: &File, end: u64) -> std::io::Result<String> {
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

fn sync_dir(dir: &Path) -> Result<()> {
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

/// A seed meta made ready for counting a session's records into it
/// ([`SessionMeta::apply_deferred`]): its counts zeroed; with the title it was seeded with,
/// which [`counted`] puts back (the records may set another one).
fn counting_from(mut meta: SessionMeta) -> (SessionMeta, Option<String>) {
    meta.message_count = 0;
    meta.token_count = 0;
    meta.compactions = 0;
    meta.tokens_pending_from = None;
    let seeded_title = meta.title.clone();
    (meta, seeded_title)
}

/// Ends the counting [`counting_from`] began: the seeded title back (when there was one), the
/// `.jsonl`'s size (`bytes`) and tail fingerprint, and the size in the import provenance, so a
/// later re-import can tell whether records were appended since.
fn counted(meta: &mut SessionMeta, seeded_title: Option<String>, bytes: u64, tail: String) {
    if seeded_title.is_some() {
        meta.title = seeded_title;
    }
    meta.jsonl_bytes = bytes;
    meta.jsonl_tail = tail;
    if let Some(serde_json::Value::Object(imported)) = meta.extra.get_mut(crate::meta::IMPORTED_KEY)
    {
        imported.insert("bytes".to_owned(), bytes.into());
    }
}

/// What [`SessionStore::records_after_offset`] read.
pub(crate) struct AppendedRecords {
    /// The records after the offset.
    pub(crate) records: Vec<SessionRecord>,
    /// The file's length when read, in bytes.
    pub(crate) len: u64,
    /// The bytes that end at the offset (at most the `tail` asked for).
    pub(crate) before_from: Vec<u8>,
    /// The bytes that end at `len` (at most the `tail` asked for).
    pub(crate) before_end: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch syncs the whole file system only where that is sure: never on procfs or
    /// tmpfs (nor FUSE, virtiofs, network file systems: only local disk file systems).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_file_system_is_synced_as_a_whole_only_on_local_disks() {
        assert!(FileSystem::of(Path::new("/proc")).is_none());
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            assert!(FileSystem::of(shm).is_none());
        }
        assert!(FileSystem::of(Path::new("/nonexistent-dir-for-this-test")).is_none());
    }

    /// A batch is synced as a whole only while the unwritten page cache is at most twice its
    /// own bytes or 64 MiB more; counts that cannot be read say no.
    #[test]
    fn the_file_system_is_synced_whole_only_when_little_else_is_dirty() {
        let meminfo = |dirty: u64, writeback: u64| {
            format!(
                "MemTotal:       24683568 kB\nDirty:          {dirty:>8} kB\n\
                 Writeback:      {writeback:>8} kB\nWritebackTmp:          0 kB\n"
            )
        };
        let mib = 1u64 << 20;
        // 100 MiB of its own: up to 200 MiB pending (its own and 100 MiB more).
        assert!(little_else_dirty_in(&meminfo(100 * 1024, 0), 100 * mib));
        assert!(little_else_dirty_in(
            &meminfo(150 * 1024, 50 * 1024),
            100 * mib
        ));
        assert!(!little_else_dirty_in(
            &meminfo(150 * 1024, 50 * 1024 + 4),
            100 * mib
        ));
        // 100 KiB of its own: up to 64 MiB more.
        assert!(little_else_dirty_in(&meminfo(100 + 65536, 0), 100 << 10));
        assert!(!little_else_dirty_in(&meminfo(100 + 65537, 0), 100 << 10));
        // 400 MiB another program just wrote: not with a small batch.
        assert!(!little_else_dirty_in(&meminfo(400 * 1024, 0), 3 * mib));
        assert!(!little_else_dirty_in("MemTotal: 1 kB\n", 0));
        assert!(!little_else_dirty_in("Dirty: x kB\nWriteback: 0 kB\n", 0));
        // This machine's counts are read (nothing is larger than this batch).
        if let Some(fs) = FileSystem::of(&std::env::temp_dir()) {
            assert!(fs.little_else_dirty(u64::MAX / 4));
        }
    }

    /// The tail kept by the backward search is exactly the file's bytes from the line found
    /// (or from the start) to `end`, whatever the chunk a line starts in; past `keep_max` it
    /// is not kept.
    #[test]
    fn the_kept_tail_is_the_bytes_from_the_boundary_to_the_end() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.jsonl");
        let mut bytes = Vec::new();
        let mut boundaries = Vec::new();
        let mut seed = 12345u64;
        // ~3.5 MiB: lines of 1..120 KB, some of them boundaries, so candidates fall at every
        // position relative to the 1 MiB chunks.
        while bytes.len() < (7 << 19) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = usize::try_from(seed >> 47).unwrap_or(0) % 120_000 + 1;
            let kind = if seed.is_multiple_of(5) {
                boundaries.push(bytes.len() as u64);
                "compact_boundary"
            } else {
                "user"
            };
            bytes.extend_from_slice(format!("{{\"type\":\"{kind}\",\"x\":\"").as_bytes());
            bytes.extend(std::iter::repeat_n(b'a', len));
            bytes.extend_from_slice(b"\"}\n");
        }
        std::fs::write(&path, &bytes)?;
        let file = File::open(&path)?;
        let len = bytes.len() as u64;
        let mut ends: Vec<u64> = boundaries.iter().map(|b| b + 1).collect();
        ends.extend([len, len - 1, 1 << 20, (1 << 20) + 1, (2 << 20) - 3]);
        for end in ends {
            let (start, tail) = find_last_boundary_kept(&file, end, KEEP_TAIL_MAX)?;
            assert_eq!(start, find_last_boundary(&file, end)?, "end {end}");
            let from = start.unwrap_or(0) as usize;
            assert_eq!(
                tail.as_deref(),
                Some(&bytes[from..end as usize]),
                "end {end}"
            );
            let (_, small) = find_last_boundary_kept(&file, end, 1 << 10)?;
            if end - from as u64 > 2 << 20 {
                assert_eq!(small, None, "end {end}");
            }
        }
        Ok(())
    }
}
