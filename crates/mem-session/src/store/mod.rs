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
//!
//! Module map: `writer` (a session open for appending: [`SessionWriter`]), `reader` (records,
//! messages and the resume replay, the backward boundary search), `meta` (the `.meta` beside each
//! `.jsonl`: read, repaired, token counts completed, written), `mark` (points in a session:
//! [`MetaMark`], the import's sync mark), `replace` (whole-session writes of an import: prepare,
//! stage, commit, `rewrite_tail`), `lock` (the session `flock`s and the store's [`ImportLock`]),
//! `syncfs` (syncing a batch's file system at once), `files` (file primitives: positioned reads,
//! fingerprints, temporary names, atomic replacement).

mod files;
mod lock;
mod mark;
mod meta;
mod reader;
mod replace;
mod syncfs;
mod writer;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_core::TokenCounter;

use crate::error::{Error, Result};
use crate::record::SessionRecord;

pub(crate) use files::tail_fingerprint;
pub use lock::ImportLock;
pub use mark::{MetaMark, REWRITING_KEY};
pub(crate) use mark::{SYNC_KEY, SyncMark};
pub use reader::{Resumed, message_records};
pub use replace::{PreparedSession, StagedSession, WriteOutcome};
pub(crate) use syncfs::FileSystem;
pub use writer::{META_FLUSH_INTERVAL, SessionWriter};

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
    ///
    /// [`SessionMeta::tokens_pending_from`]: crate::SessionMeta::tokens_pending_from
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

/// A directory of sessions.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    options: StoreOptions,
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

/// One record as its line in the `.jsonl`, newline included.
fn encode_record(id: &str, record: &SessionRecord) -> Result<Vec<u8>> {
    let mut line = crate::record::to_json_vec(record).map_err(|source| Error::Serialize {
        id: id.to_owned(),
        source,
    })?;
    line.push(b'\n');
    Ok(line)
}
