//! The tier-store half of a checkpoint (`mem-checkpoint`, `docs/formats/checkpoint.md`): a
//! consistent SQLite backup (rusqlite's online backup API) cut down to a [`RowScope`], the
//! comparison of the live store with such a copy, and its restore in one transaction. The SQL
//! stays here, behind the store crate; the team store's counterpart is
//! [`crate::PgStore::scope_rows`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::schema::LATEST_VERSION;
use crate::sqlite::{SqliteStore, map_err};

/// The rows a checkpoint holds: this project's (learnings with its `project_key`, its
/// `projects` row) and, at the user level, the user-wide learnings and the user preferences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowScope {
    /// The project key (`git:...` or `path:...`, see `docs/formats/tiers.md`).
    pub project_key: String,
    /// User-level rows too (`--user`).
    pub user: bool,
}

impl RowScope {
    fn learnings_where(&self, table: &str) -> String {
        if self.user {
            format!("({table}.project_key = ?1 OR {table}.project_key IS NULL)")
        } else {
            format!("{table}.project_key = ?1")
        }
    }
}

/// One learning row as compared by a restore: id and the fields a person sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowDigest {
    pub id: i64,
    pub text: String,
}

/// Copies the database at `live` into `dest` with the online backup API (a consistent snapshot
/// even while other processes write), then deletes every row outside `scope` from the copy and
/// compacts it. Returns the schema version and the learnings kept.
///
/// # Errors
/// The store's errors ([`Error::Locked`], [`Error::Corrupt`], [`Error::DiskFull`]...), naming
/// the file concerned.
pub fn backup(live: &Path, dest: &Path, scope: &RowScope, busy: Duration) -> Result<(i64, usize)> {
    let src = Connection::open_with_flags(
        live,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| map_err(live, busy, e))?;
    src.busy_timeout(busy).map_err(|e| map_err(live, busy, e))?;
    let mut dst = Connection::open(dest).map_err(|e| map_err(dest, busy, e))?;
    {
        let b =
            rusqlite::backup::Backup::new(&src, &mut dst).map_err(|e| map_err(dest, busy, e))?;
        b.run_to_completion(1024, Duration::from_millis(5), None)
            .map_err(|e| map_err(live, busy, e))?;
    }
    let version: i64 = dst
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| map_err(dest, busy, e))?;
    // A copy is a plain file: no WAL beside it.
    dst.pragma_update(None, "journal_mode", "delete")
        .map_err(|e| map_err(dest, busy, e))?;
    let tx = dst.transaction().map_err(|e| map_err(dest, busy, e))?;
    let keep = scope.learnings_where("learnings");
    tx.execute(
        &format!("DELETE FROM learnings WHERE NOT {keep}"),
        params![scope.project_key],
    )
    .map_err(|e| map_err(dest, busy, e))?;
    tx.execute(
        "DELETE FROM projects WHERE key <> ?1",
        params![scope.project_key],
    )
    .map_err(|e| map_err(dest, busy, e))?;
    if !scope.user {
        tx.execute("DELETE FROM user_preferences", [])
            .map_err(|e| map_err(dest, busy, e))?;
    }
    // The file index is derived (rebuilt from the files): not part of a checkpoint.
    tx.execute("DELETE FROM docs WHERE source <> 'learning'", [])
        .map_err(|e| map_err(dest, busy, e))?;
    tx.execute("DELETE FROM files", [])
        .map_err(|e| map_err(dest, busy, e))?;
    tx.commit().map_err(|e| map_err(dest, busy, e))?;
    dst.execute_batch("VACUUM")
        .map_err(|e| map_err(dest, busy, e))?;
    let kept: i64 = dst
        .query_row("SELECT count(*) FROM learnings", [], |r| r.get(0))
        .map_err(|e| map_err(dest, busy, e))?;
    Ok((version, usize::try_from(kept).unwrap_or(0)))
}

/// The schema version of a checkpoint's copy, read without changing it.
///
/// # Errors
/// [`Error::Corrupt`] / [`Error::Foreign`] for a damaged copy.
pub(crate) fn copy_version(copy: &Path, busy: Duration) -> Result<i64> {
    let c = Connection::open_with_flags(
        copy,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| map_err(copy, busy, e))?;
    let check: String = c
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| map_err(copy, busy, e))?;
    if check != "ok" {
        return Err(Error::Corrupt {
            path: copy.to_owned(),
            reason: check,
        });
    }
    c.pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| map_err(copy, busy, e))
}

/// Learnings in `scope`, in id order, of the database `conn` names as `schema` (`main` or
/// `ck`).
fn digests(conn: &Connection, schema: &str, scope: &RowScope) -> rusqlite::Result<Vec<RowDigest>> {
    let sql = format!(
        "SELECT id, title || char(31) || content || char(31) || category || char(31) || tags \
         || char(31) || coalesce(context, '') FROM {schema}.learnings AS learnings WHERE {} \
         ORDER BY id",
        scope.learnings_where("learnings")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![scope.project_key], |r| {
        Ok(RowDigest {
            id: r.get(0)?,
            text: r.get(1)?,
        })
    })?;
    rows.collect()
}

/// The user preferences (`key`, `value`) of the database `conn` names as `schema`, by key.
fn preferences(conn: &Connection, schema: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT key, value FROM {schema}.user_preferences ORDER BY key"
    ))?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// What restoring the copy would change in the live store's rows of `scope`: learnings
/// (`removed`, `added`, `changed` ids) and the user preferences (with `scope.user`). The
/// project's row is not compared (every `mem memory` command records it): it follows when the
/// rest differs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreDiff {
    /// Learnings in the live store that the checkpoint does not have (deleted by the restore).
    pub removed: Vec<i64>,
    /// Learnings of the checkpoint missing from the live store (put back, same ids).
    pub added: Vec<i64>,
    /// Learnings whose title, content, category, tags or context differ (put back).
    pub changed: Vec<i64>,
    /// Keys of the user preferences set, changed or unset since (put back as they were); only
    /// with the user level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferences: Vec<String>,
}

/// The learning part of a [`StoreDiff`] between the live store (`now`) and a checkpoint
/// (`then`), both keyed by learning id with whatever the caller compares (text, fields): ids only
/// live are `removed`, ids only in the checkpoint `added`, ids in both with different values
/// `changed`; each list in ascending id order. Preferences are left empty.
pub fn diff_learnings<T: PartialEq>(now: &BTreeMap<i64, T>, then: &BTreeMap<i64, T>) -> StoreDiff {
    let mut d = StoreDiff::default();
    for (id, value) in now {
        match then.get(id) {
            None => d.removed.push(*id),
            Some(v) if v != value => d.changed.push(*id),
            Some(_) => {}
        }
    }
    d.added = then
        .keys()
        .filter(|id| !now.contains_key(id))
        .copied()
        .collect();
    d
}

impl StoreDiff {
    /// `true` when the learnings and the preferences are the same.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.added.is_empty()
            && self.changed.is_empty()
            && self.preferences.is_empty()
    }
}

/// Opens the live store (migrating it as every open does) and attaches the copy, migrated to
/// the latest schema first when it is older (on a temporary copy, so the checkpoint is never
/// changed). `tmp_dir` receives that temporary copy.
fn open_with_copy(
    live: &Path,
    copy: Option<&Path>,
    tmp_dir: &Path,
    busy: Duration,
) -> Result<(SqliteStore, Option<tempfile_path::TempPath>)> {
    let store = SqliteStore::open(live, busy)?;
    let Some(copy) = copy else {
        return Ok((store, None));
    };
    let version = copy_version(copy, busy)?;
    if version > LATEST_VERSION {
        return Err(Error::TooNew {
            path: copy.to_owned(),
            found: version,
            known: LATEST_VERSION,
        });
    }
    let (attach, tmp) = if version < LATEST_VERSION {
        let tmp = tempfile_path::TempPath::new(tmp_dir, "store-migrated.sqlite");
        std::fs::copy(copy, tmp.path()).map_err(|e| Error::io("copy", copy, e))?;
        drop(SqliteStore::open(tmp.path(), busy)?);
        (tmp.path().to_owned(), Some(tmp))
    } else {
        (copy.to_owned(), None)
    };
    store
        .conn
        .execute(
            "ATTACH DATABASE ?1 AS ck",
            params![attach.to_string_lossy()],
        )
        .map_err(|e| map_err(&attach, busy, e))?;
    Ok((store, tmp))
}

/// Compares the live store with a checkpoint's copy (`None`: the checkpoint had no database,
/// so it holds no rows).
///
/// # Errors
/// As [`restore`], without writing anything.
pub fn diff(
    live: &Path,
    copy: Option<&Path>,
    scope: &RowScope,
    tmp_dir: &Path,
    busy: Duration,
) -> Result<StoreDiff> {
    if !live.exists() && copy.is_none() {
        return Ok(StoreDiff::default());
    }
    let (store, _tmp) = open_with_copy(live, copy, tmp_dir, busy)?;
    let now = digests(&store.conn, "main", scope).map_err(|e| store.err(e))?;
    let then = if copy.is_some() {
        digests(&store.conn, "ck", scope).map_err(|e| store.err(e))?
    } else {
        Vec::new()
    };
    let then_map: BTreeMap<i64, &str> = then.iter().map(|r| (r.id, r.text.as_str())).collect();
    let now_map: BTreeMap<i64, &str> = now.iter().map(|r| (r.id, r.text.as_str())).collect();
    let mut d = diff_learnings(&now_map, &then_map);
    if scope.user {
        let now: BTreeMap<String, String> = preferences(&store.conn, "main")
            .map_err(|e| store.err(e))?
            .into_iter()
            .collect();
        let then: BTreeMap<String, String> = if copy.is_some() {
            preferences(&store.conn, "ck")
                .map_err(|e| store.err(e))?
                .into_iter()
                .collect()
        } else {
            BTreeMap::new()
        };
        let mut keys: Vec<&String> = now.keys().chain(then.keys()).collect();
        keys.sort();
        keys.dedup();
        d.preferences = keys
            .into_iter()
            .filter(|k| now.get(*k) != then.get(*k))
            .cloned()
            .collect();
    }
    Ok(d)
}

/// Columns two tables share (so an older copy, migrated, or a newer store with extra columns
/// still restore by name).
fn shared_columns(conn: &Connection, table: &str) -> rusqlite::Result<String> {
    let cols = |schema: &str| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare(&format!("PRAGMA {schema}.table_info({table})"))?;
        let names = stmt.query_map([], |r| r.get::<_, String>(1))?;
        names.collect()
    };
    let main = cols("main")?;
    let ck = cols("ck")?;
    Ok(main
        .into_iter()
        .filter(|c| ck.contains(c))
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", "))
}

/// Puts the rows of `scope` back as the copy has them, in one `BEGIN IMMEDIATE` transaction:
/// this project's learnings (same ids) and project row, and with `scope.user` the user-wide
/// learnings and the user preferences. Rows of other projects are not touched. The index
/// documents of learnings follow by trigger. `copy` `None` deletes the rows of `scope`.
///
/// # Errors
/// [`Error::TooNew`] for a copy of a newer schema, [`Error::Corrupt`] for a damaged one,
/// [`Error::Locked`], [`Error::DiskFull`]: in every case nothing was written.
pub fn restore(
    live: &Path,
    copy: Option<&Path>,
    scope: &RowScope,
    tmp_dir: &Path,
    busy: Duration,
) -> Result<()> {
    if !live.exists() && copy.is_none() {
        return Ok(());
    }
    let (mut store, _tmp) = open_with_copy(live, copy, tmp_dir, busy)?;
    let path = store.path.clone();
    let e = |err: rusqlite::Error| map_err(&path, busy, err);
    let tx = store
        .conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(e)?;
    let learn = scope.learnings_where("learnings");
    tx.execute(
        &format!("DELETE FROM main.learnings WHERE {learn}"),
        params![scope.project_key],
    )
    .map_err(e)?;
    tx.execute(
        "DELETE FROM main.projects WHERE key = ?1",
        params![scope.project_key],
    )
    .map_err(e)?;
    if scope.user {
        tx.execute("DELETE FROM main.user_preferences", [])
            .map_err(e)?;
    }
    if copy.is_some() {
        let cols = shared_columns(&tx, "learnings").map_err(e)?;
        tx.execute(
            &format!(
                "INSERT INTO main.learnings ({cols}) SELECT {cols} FROM ck.learnings AS \
                 learnings WHERE {learn} ORDER BY id"
            ),
            params![scope.project_key],
        )
        .map_err(e)?;
        let cols = shared_columns(&tx, "projects").map_err(e)?;
        tx.execute(
            &format!(
                "INSERT INTO main.projects ({cols}) SELECT {cols} FROM ck.projects WHERE key = ?1"
            ),
            params![scope.project_key],
        )
        .map_err(e)?;
        if scope.user {
            let cols = shared_columns(&tx, "user_preferences").map_err(e)?;
            tx.execute(
                &format!(
                    "INSERT INTO main.user_preferences ({cols}) SELECT {cols} FROM \
                     ck.user_preferences"
                ),
                [],
            )
            .map_err(e)?;
        }
    }
    tx.commit().map_err(e)?;
    if copy.is_some() {
        let _ = store.conn.execute("DETACH DATABASE ck", []);
    }
    Ok(())
}

/// A path removed when dropped (no `tempfile` dependency at run time).
mod tempfile_path {
    use std::path::{Path, PathBuf};

    #[derive(Debug)]
    pub struct TempPath(PathBuf);

    impl TempPath {
        pub fn new(dir: &Path, name: &str) -> TempPath {
            TempPath(dir.join(format!(
                ".{name}.{}.{}.tmp",
                std::process::id(),
                unique_number()
            )))
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    /// A number no other temporary path of this process took.
    fn unique_number() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
