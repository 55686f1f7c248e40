//! Appending: a [`SessionWriter`] writes each batch of records with one `write` under the
//! exclusive session lock and keeps the meta lazily.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mem_core::Message;

use crate::error::{Error, Result};
use crate::meta::SessionMeta;
use crate::record::{SessionRecord, make_compact_boundary};

use std::io::Write;

use super::files::{file_len, file_tail_fingerprint, last_byte, open_append, tail_fingerprint};
use super::lock::{lock, same_file};
use super::reader::read_records_range;
use super::{Durability, SessionStore, now_rfc3339, validate_id};

impl SessionStore {
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
