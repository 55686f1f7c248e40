//! Importing transcripts into a [`SessionStore`]: the glue between [`crate::import`] (parsing)
//! and the store (atomic writes), with the re-import rules.
//!
//! Re-importing the same file yields the same session: when the source's SHA-256 and the
//! session's size are unchanged, nothing is written; when the source changed, the session is
//! replaced atomically; when records were appended to the session after its import, the
//! re-import is refused ([`Error::WouldDropAppended`]) so nothing is lost.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::import::{ImportReport, ImportedSession, SourceFormat, import_file};
use crate::meta::{IMPORTED_KEY, SessionMeta};
use crate::store::{ImportLock, SessionStore, WriteOutcome};

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

/// SHA-256 of a file, hex.
fn sha256_file(path: &Path) -> Result<String> {
    let mut file = crate::import::open_transcript(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| Error::io("cannot read", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
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
    if let Some(id) = id {
        crate::validate_id(id)?;
    }
    let source: PathBuf = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    if let Ok(dir) = store.dir().canonicalize()
        && source.starts_with(&dir)
    {
        return Err(Error::SourceIsStore {
            path: path.to_owned(),
        });
    }
    let sha = sha256_file(path)?;
    let mut sessions = import_file(path)?;
    if let Some(id) = id
        && let Some(main) = sessions.first_mut()
    {
        let old = std::mem::replace(&mut main.id, id.to_owned());
        for s in sessions.iter_mut().skip(1) {
            if s.parent_id.as_deref() == Some(old.as_str()) {
                s.parent_id = Some(id.to_owned());
            }
        }
    }
    let lock = store.lock_imports()?;
    let mut out = Vec::with_capacity(sessions.len());
    for session in sessions {
        out.push(ingest_one(store, &lock, session, &source, &sha)?);
    }
    Ok(out)
}

fn ingest_one(
    store: &SessionStore,
    lock: &ImportLock,
    session: ImportedSession,
    source: &Path,
    sha: &str,
) -> Result<Ingested> {
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
        let mut meta = SessionMeta::new(&id, created.unwrap_or_default());
        meta.title = title;
        meta.parent_id = parent_id;
        return Ok(Ingested {
            meta,
            action: IngestAction::Empty,
            report,
            format,
        });
    }
    if store.jsonl_path(&id).is_file() {
        let existing = store.meta(&id)?;
        check_same_source(&existing, source)?;
        if let Some(imported) = existing.extra.get(IMPORTED_KEY)
            && imported.get("sha256").and_then(Value::as_str) == Some(sha)
            && imported.get("bytes").and_then(Value::as_u64) == Some(existing.jsonl_bytes)
        {
            return Ok(Ingested {
                meta: existing,
                action: IngestAction::Unchanged,
                report,
                format,
            });
        }
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut seed = SessionMeta::new(&id, created.clone().unwrap_or_else(|| now.clone()));
    seed.title = title;
    seed.parent_id = parent_id;
    let mut imported = Map::new();
    imported.insert("format".to_owned(), json!(format.to_string()));
    imported.insert("path".to_owned(), json!(source.display().to_string()));
    imported.insert("sha256".to_owned(), json!(sha));
    if let Some(cwd) = cwd {
        imported.insert("cwd".to_owned(), json!(cwd));
    }
    seed.extra
        .insert(IMPORTED_KEY.to_owned(), Value::Object(imported));
    let (outcome, meta) = store.write_session(lock, seed, &records, |existing| {
        check_same_source(existing, source)?;
        let appended = existing
            .extra
            .get(IMPORTED_KEY)
            .and_then(|i| i.get("bytes"))
            .and_then(Value::as_u64)
            .is_some_and(|bytes| existing.jsonl_bytes > bytes);
        if appended {
            Err(Error::WouldDropAppended {
                id: existing.id.clone(),
                source_path: source.to_owned(),
            })
        } else {
            Ok(())
        }
    })?;
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
