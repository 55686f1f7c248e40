//! Whole-session writes (imports): a session prepared in memory, staged under temporary names,
//! committed by two renames under the import lock; a session's records after a [`MetaMark`]
//! replaced (`rewrite_tail`); temporary files left by killed processes removed.

use std::fs::{self, File};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::meta::SessionMeta;
use crate::record::SessionRecord;

use super::files::{
    file_len, file_tail_fingerprint, process_id, read_at, sync_dir, tail_fingerprint, unique_tmp,
    write_new_file,
};
use super::lock::ImportLock;
use super::mark::{MetaMark, REWRITING_KEY};
use super::{Durability, SessionStore, encode_record, validate_id};

impl SessionStore {
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
    pub(super) fn stage_file_and_meta(
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
        let file = self.open_locked_for_write(&path, id)?;
        let result =
            self.rewrite_tail_locked(id, &file, &path, base, records, mark_at, check, amend);
        let _ = file.unlock();
        result
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn rewrite_tail_locked(
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

/// What [`SessionStore::write_session`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// A new session was written.
    Created,
    /// An existing session with this id was replaced.
    Replaced,
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

thread_local! {
    /// The buffer [`SessionStore::prepare_session`] encodes into, given back by
    /// [`SessionStore::stage_session`] once written: an import encodes one session after
    /// another on each thread, and a fresh buffer grew by reallocations onto fresh pages each
    /// time (~4 % of a Codex import's CPU in copies and page clearing).
    static ENCODE_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest encode buffer kept for the next session (8 MiB): larger sessions are rare, and
/// a thread keeps at most this much.
pub(super) const ENCODE_BUFFER_KEEP: usize = 8 << 20;

/// Keeps `bytes` as this thread's encode buffer when it is no larger than
/// [`ENCODE_BUFFER_KEEP`] and larger than the one kept.
pub(super) fn recycle_encode_buffer(bytes: Vec<u8>) {
    if bytes.capacity() <= ENCODE_BUFFER_KEEP {
        ENCODE_BUFFER.with_borrow_mut(|kept| {
            if kept.capacity() < bytes.capacity() {
                *kept = bytes;
            }
        });
    }
}

/// Age past which [`SessionStore::remove_stale_tmp`] removes a temporary file whose process
/// it cannot see.
pub(super) const STALE_TMP_AGE: Duration = Duration::from_secs(3600);

/// What the name of a temporary file [`unique_tmp`] made for a session's file says.
pub(super) struct TmpName {
    /// The session id.
    id: String,
    /// The process that made it.
    pid: u32,
    /// A `.meta` (else a `.jsonl`).
    meta: bool,
}

/// The session, process and kind in the name of a temporary file [`unique_tmp`] made for a
/// session's `.jsonl` or `.meta` (`.{id}.jsonl.{pid}.{n}.tmp`), or `None` for any other name.
pub(super) fn stale_tmp_name(name: &str) -> Option<TmpName> {
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

/// A seed meta made ready for counting a session's records into it
/// ([`SessionMeta::apply_deferred`]): its counts zeroed; with the title it was seeded with,
/// which [`counted`] puts back (the records may set another one).
pub(super) fn counting_from(mut meta: SessionMeta) -> (SessionMeta, Option<String>) {
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
pub(super) fn counted(
    meta: &mut SessionMeta,
    seeded_title: Option<String>,
    bytes: u64,
    tail: String,
) {
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
