//! The `.meta` beside each `.jsonl`: read under the session lock, brought up to date from the
//! records it does not reflect, deferred token counts completed, written atomically.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::thread;

use crate::error::{Error, Result};
use crate::jsonl::{JsonlEvent, JsonlReader};
use crate::meta::SessionMeta;
use crate::record::SessionRecord;

use super::files::{file_created, file_len, file_tail_fingerprint, write_atomic};
use super::reader::find_last_reset;
use super::{Durability, SessionStore, now_rfc3339};

impl SessionStore {
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
    pub(super) fn complete_all(&self, metas: &mut [SessionMeta], pending: &[usize]) -> Result<()> {
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
    ///
    /// [`StoreOptions::defer_tokens`]: super::StoreOptions::defer_tokens
    pub fn meta(&self, id: &str) -> Result<SessionMeta> {
        self.meta_with(id, true)
    }

    /// Reads the meta and repairs it if it lags behind the file; the caller holds a lock.
    /// `count`: complete a deferred `token_count` ([`SessionMeta::tokens_pending_from`]), for a
    /// caller that reports or uses it (never with [`StoreOptions::defer_tokens`]); writers and
    /// the import's checks pass `false` and leave it pending (counting loads the BPE vocabulary
    /// and reads the records again).
    pub(super) fn load_meta_locked(
        &self,
        id: &str,
        file: &File,
        count: bool,
    ) -> Result<SessionMeta> {
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
    pub(super) fn count_pending_tokens(&self, meta: &mut SessionMeta, file: &File) -> Result<()> {
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
        let mark = super::mark::pending_sync_mark(meta).filter(|&m| m >= start && m <= end);
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
            super::mark::complete_sync_mark(meta, n);
        }
        Ok(())
    }

    pub(super) fn write_meta(&self, meta: &SessionMeta) -> Result<()> {
        let path = self.meta_path(&meta.id);
        let bytes = serde_json::to_vec_pretty(meta).map_err(|source| Error::Serialize {
            id: meta.id.clone(),
            source,
        })?;
        write_atomic(&path, &bytes, self.options.durability == Durability::Sync)
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
}

/// Most recently active first, then by id.
pub(super) fn sort_by_activity(metas: &mut [SessionMeta]) {
    metas.sort_by(|a, b| {
        b.last_active
            .cmp(&a.last_active)
            .then_with(|| a.id.cmp(&b.id))
    });
}
