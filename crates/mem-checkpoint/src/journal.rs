//! A restore made recoverable: the journal (`<checkpoints>/.restore-journal.json`) written and
//! fsynced before the first change, rolled forward by the next command that opens the project
//! when a restore was killed; the hidden files a killed restore or create leaves, cleaned; and
//! the one check that a restore writes and deletes only inside the project (or `~/.mewcode`, or
//! a configured note folder).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_auto::{Meta as AutoMeta, Scope as AutoScope};
use serde::{Deserialize, Serialize};

use super::{Checkpoints, Error, Result, io, store, sync_dir};

/// The journal's file name inside the checkpoints folder.
pub const JOURNAL_FILE: &str = ".restore-journal.json";

/// The journal while it is written (renamed to [`JOURNAL_FILE`] once synced).
pub const JOURNAL_TMP_FILE: &str = ".restore-journal.json.tmp";

/// Environment variable of the tests only: milliseconds a restore sleeps at each step (each
/// staged file, the journal, the rows, each session, each rename), so a test can kill it at
/// every moment. Unset (the default) or not a number: no sleep.
pub const STEP_DELAY_ENV: &str = "MEM_TEST_RESTORE_STEP_DELAY_MS";

/// What a restore is about to change, written before it changes anything.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Journal {
    /// The checkpoint restored.
    pub checkpoint: String,
    /// `false` while the restore prepares (the pre-restore checkpoint, the staged files):
    /// nothing changed yet, a killed restore is rolled back (its hidden files deleted).
    /// `true` once every file is staged: it is rolled forward.
    pub apply: bool,
    /// Staged files (`tmp`, fsynced) to rename onto `target`.
    pub writes: Vec<JournalWrite>,
    /// Files to delete.
    pub removals: Vec<PathBuf>,
    /// The store rows are put back from the checkpoint's copy.
    pub store: bool,
    /// Sessions to roll back.
    pub sessions: Vec<JournalSession>,
    /// `memories.md` scopes whose dates (`memories.meta.json`) follow the file.
    pub metas: Vec<JournalMeta>,
}

/// One staged file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalWrite {
    pub tmp: PathBuf,
    pub target: PathBuf,
}

/// One session's rollback: appended when the session still has `from` bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalSession {
    pub id: String,
    pub from: u64,
    pub to: u64,
    pub tail: String,
    pub tokens: usize,
}

/// The dates of one `memories.md` scope (`project` or `user`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JournalMeta {
    pub scope: String,
    pub meta: Option<AutoMeta>,
}

/// The test hook's delay ([`STEP_DELAY_ENV`]), `None` by default.
pub(crate) fn step_delay() -> Option<Duration> {
    std::env::var(STEP_DELAY_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}

/// Resolves `path` through its nearest existing ancestor (symlinks followed), the rest of it
/// appended as it is.
fn resolved(path: &Path) -> PathBuf {
    let mut base = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(&base) {
            let mut out = real;
            for c in rest.iter().rev() {
                out.push(c);
            }
            return out;
        }
        match (base.file_name().map(|n| n.to_owned()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Refuses a path a restore would write or delete whose folder, symlinks resolved, is not
/// inside one of `roots` (resolved too): a `.mewcode/memory` linked out of the project.
///
/// # Errors
/// [`Error::Outside`].
pub(crate) fn check_inside(path: &Path, roots: &[PathBuf]) -> Result<()> {
    let dir = path.parent().unwrap_or(path);
    let real = resolved(dir);
    if roots.iter().any(|r| real.starts_with(resolved(r))) {
        return Ok(());
    }
    Err(Error::Outside {
        path: path.to_owned(),
        real,
    })
}

/// The process id a hidden restore file's name carries (`.x.restore-[old-|removed-]PID-N[.tmp]`),
/// or a hidden temporary file of mem-auto's writes (`.x.PID.N.tmp`, e.g. the `memories.md` dates
/// a restore writes last).
fn leftover_pid(name: &str) -> Option<u32> {
    if !name.contains(".restore-") {
        let mut parts = name.strip_suffix(".tmp")?.rsplitn(3, '.');
        let (_n, pid) = (parts.next()?.parse::<u64>().ok()?, parts.next()?);
        return pid.parse().ok();
    }
    let rest = name.split_once(".restore-")?.1;
    let rest = rest
        .strip_prefix("old-")
        .or_else(|| rest.strip_prefix("removed-"))
        .unwrap_or(rest);
    rest.split('-').next()?.parse().ok()
}

/// `true` when the hidden file `path` named with process `pid` may still be in use: that
/// process runs (another restore or writer, of another project, sharing the folder). Where
/// there is no `/proc` to tell, a file younger than [`STALE_AFTER`] is taken to be in use.
fn in_use(pid: u32, path: &Path) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let proc = Path::new("/proc");
    if proc.is_dir() {
        return proc.join(pid.to_string()).exists();
    }
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < STALE_AFTER)
}

/// Age after which a hidden temporary file is a leftover where process ids cannot be checked.
const STALE_AFTER: Duration = Duration::from_secs(600);

impl Checkpoints {
    fn journal_path(&self) -> PathBuf {
        self.dir.join(JOURNAL_FILE)
    }

    /// Writes the journal and fsyncs it and its folder (before the first change).
    pub(crate) fn write_journal(&self, journal: &Journal) -> Result<()> {
        let path = self.journal_path();
        // One name (the caller holds the lock): a kill while it is written leaves this file,
        // which the next command sees ([`JOURNAL_TMP_FILE`]) and deletes.
        let tmp = self.dir.join(JOURNAL_TMP_FILE);
        let bytes = serde_json::to_vec_pretty(journal)
            .map_err(|e| io("encode", &path, std::io::Error::other(e)))?;
        let _ = fs::remove_file(&tmp);
        super::write_new(&tmp, &bytes)?;
        fs::rename(&tmp, &path).map_err(|e| io("rename into place", &path, e))?;
        sync_dir(&self.dir);
        Ok(())
    }

    /// Deletes the journal (the restore is complete or undone).
    pub(crate) fn remove_journal(&self) {
        let _ = fs::remove_file(self.journal_path());
        sync_dir(&self.dir);
    }

    /// `true` when a restore left its journal (it was killed, or is running now).
    pub fn has_journal(&self) -> bool {
        self.journal_path().exists()
    }

    /// Finishes a restore that was killed (its journal is there) and cleans what killed
    /// restores and checkpoint creations left (hidden `.restore-*`, `*.tmp`, `.tmp-*`, `.rm-*`).
    /// Does nothing while another checkpoint operation holds the lock (a restore running now).
    /// Returns the checkpoint whose restore was finished.
    ///
    /// # Errors
    /// The journal cannot be read or parsed (naming it), or a step of the roll forward fails
    /// (the journal stays: the next command tries again).
    pub fn recover(&self) -> Result<Option<String>> {
        if !self.dir.exists() {
            return Ok(None);
        }
        let Ok(_lock) = mem_core::lockfile::lock_exclusive(&self.dir.join(".lock"), Duration::ZERO)
        else {
            return Ok(None);
        };
        let done = self.recover_locked()?;
        self.clean_leftovers();
        sync_dir(&self.dir);
        Ok(done)
    }

    /// [`Checkpoints::recover`]'s roll forward, under the lock.
    pub(crate) fn recover_locked(&self) -> Result<Option<String>> {
        let path = self.journal_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("read", &path, e)),
        };
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| Error::Damaged {
            name: String::new(),
            path: path.clone(),
            reason: format!("the restore journal is not valid ({e})"),
        })?;
        let name = journal.checkpoint.clone();
        if !journal.apply {
            // Killed while preparing: nothing was changed; its hidden files go.
            self.remove_journal();
            return Ok(None);
        }
        // The rows and the sessions first (as the restore did), then the files.
        if journal.store {
            let manifest = self.show(&name)?;
            if let Some(s) = &manifest.store {
                let copy = s.copy.as_ref().map(|c| self.dir.join(&name).join(c));
                match (&self.config.database, &self.config.team_store) {
                    (Some(db), _) if s.backend == "sqlite" => store::restore(
                        db,
                        copy.as_deref(),
                        &s.scope,
                        &self.dir,
                        self.config.busy_timeout,
                    )?,
                    (None, Some(pg)) if s.backend == "postgresql" => {
                        if let Some(copy) = &copy {
                            let bytes = fs::read(copy).map_err(|e| io("read", copy, e))?;
                            let rows: mem_tiers::ScopeRows = serde_json::from_slice(&bytes)
                                .map_err(|e| io("decode", copy, std::io::Error::other(e)))?;
                            pg.replace_scope_rows(&s.scope.project_key, s.scope.user, &rows)?;
                        }
                    }
                    _ => {}
                }
            }
        }
        for s in &journal.sessions {
            // A session deleted since has nothing to roll back.
            let Ok(now) = self.sessions.position(&s.id) else {
                continue;
            };
            if now.jsonl_bytes == s.from {
                self.sessions
                    .append_rollback(&s.id, s.from, s.to, &s.tail, s.tokens, &name)?;
            }
        }
        for w in &journal.writes {
            if w.tmp.exists() {
                fs::rename(&w.tmp, &w.target).map_err(|e| io("rename into place", &w.target, e))?;
            }
            if let Some(dir) = w.target.parent() {
                sync_dir(dir);
            }
        }
        for r in &journal.removals {
            match fs::remove_file(r) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", r, e)),
            }
            if let Some(dir) = r.parent() {
                sync_dir(dir);
            }
        }
        for m in &journal.metas {
            let scope = if m.scope == "user" {
                AutoScope::User
            } else {
                AutoScope::Project
            };
            let lf = self.auto.lock_file(scope)?;
            let text = super::read_file(lf.path())?;
            lf.write_meta(text.as_deref(), m.meta.clone())?;
        }
        self.remove_journal();
        tracing::warn!("a killed `mem checkpoint restore {name}` was finished");
        Ok(Some(name))
    }

    /// Deletes what killed restores and checkpoint creations left (the caller holds the lock
    /// and no journal is pending): in the checkpoints folder the hidden `.tmp-*`, `.rm-*` and
    /// `*.tmp`; in every folder a restore writes, the hidden `.restore-` files of no running
    /// process.
    pub(crate) fn clean_leftovers(&self) {
        if self.has_journal() {
            return;
        }
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !(name.starts_with(".tmp-")
                    || name.starts_with(".rm-")
                    || name.ends_with(".tmp"))
                {
                    continue;
                }
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = fs::remove_dir_all(&p);
                } else {
                    let _ = fs::remove_file(&p);
                }
            }
        }
        let mut dirs = vec![
            self.auto.dir(AutoScope::Project),
            self.auto.dir(AutoScope::User),
        ];
        dirs.extend(self.note_scopes(true).into_iter().map(|(_, d)| d));
        for dir in dirs {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.starts_with('.') || !e.file_type().is_ok_and(|t| t.is_file()) {
                    continue;
                }
                if leftover_pid(&name).is_some_and(|pid| !in_use(pid, &e.path())) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::leftover_pid;

    #[test]
    fn the_pid_of_each_leftover_name() {
        assert_eq!(leftover_pid(".memories.md.restore-123-4.tmp"), Some(123));
        assert_eq!(leftover_pid(".x.md.restore-old-77-0"), Some(77));
        assert_eq!(leftover_pid(".x.md.restore-removed-9-12"), Some(9));
        assert_eq!(leftover_pid(".memories.meta.json.4321.7.tmp"), Some(4321));
        assert_eq!(leftover_pid(".notes.lock"), None);
        assert_eq!(leftover_pid(".x.tmp"), None);
        assert_eq!(leftover_pid("memories.md"), None);
    }
}
