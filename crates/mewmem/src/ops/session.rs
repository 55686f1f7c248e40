//! Session operations (`mem session ...`, and the session argument of `mem compact` and
//! `mem extract`): resolving an id, a window of records, deleting a session with what is kept
//! beside it, importing transcripts with the totals of the report.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use mem_session::ingest::{IngestAction, Ingested};
use mem_session::{Diagnostic, SessionMeta, SessionRecord, SessionStore};

use crate::error::{Error, Result};

/// A full id from a prefix (`Some`), or the id of the most recently active session (`None`).
///
/// Errors: the store's ([`mem_session::Error::NotFound`], `Ambiguous`...), or
/// [`Error::NoSessions`] when no id is given and the project has no session.
pub fn resolve(store: &SessionStore, id: Option<&str>) -> Result<String> {
    match id {
        Some(prefix) => Ok(store.resolve_id(prefix)?),
        None => match store.latest()? {
            Some(meta) => Ok(meta.id),
            None => Err(Error::NoSessions {
                dir: store.dir().to_owned(),
            }),
        },
    }
}

/// The records of a session `mem session show` prints: all, or a window around one.
#[derive(Debug)]
pub struct Records {
    /// The session's meta.
    pub meta: SessionMeta,
    /// The records shown: `first..=last` of the session's records.
    pub records: Vec<SessionRecord>,
    /// The number of the first record shown (1-based).
    pub first: usize,
    /// The number of the last record shown (1-based; `first - 1` when there is none).
    pub last: usize,
    /// How many records the session has.
    pub total: usize,
    /// Damaged lines of the file.
    pub diagnostics: Vec<Diagnostic>,
}

/// The records of session `id`: every one, or with `window = Some((n, k))` records
/// `n - k ..= n + k` (within the session).
///
/// Errors: the store's (no such session, unreadable file), or [`Error::NoSuchRecord`] when `n`
/// is not a record of the session.
pub fn records(store: &SessionStore, id: &str, window: Option<(usize, usize)>) -> Result<Records> {
    let meta = store.meta(id)?;
    let (records, diagnostics) = store.read_records(id)?;
    let total = records.len();
    let (first, last) = match window {
        None => (1, total),
        Some((n, k)) => {
            if n == 0 || n > total {
                return Err(Error::NoSuchRecord {
                    id: id.to_owned(),
                    number: n,
                    records: total,
                });
            }
            (n.saturating_sub(k).max(1), (n + k).min(total))
        }
    };
    let records = records
        .into_iter()
        .skip(first - 1)
        .take((last + 1).saturating_sub(first))
        .collect();
    Ok(Records {
        meta,
        records,
        first,
        last,
        total,
        diagnostics,
    })
}

/// The folder of the tool results compactions of session `id` spilled:
/// `<project>/.mewcode/session/tool-results/<id>/`.
pub fn spill_dir(project: &Path, id: &str) -> PathBuf {
    project.join(mem_compact::TOOL_RESULTS_DIR).join(id)
}

/// What [`delete`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The session.
    pub id: String,
    /// The folder of its spilled tool results, when there was one (deleted with it).
    pub tool_results: Option<PathBuf>,
}

/// Deletes session `id` of `project` (a full id, not a prefix): its `.jsonl` and `.meta`, its
/// spilled tool results ([`spill_dir`]), the record of the notes recall surfaced in it
/// (`<id>.recall.json`), and its messages in the session search index.
///
/// Errors: the store's ([`mem_session::Error::Locked`], no such session...);
/// [`Error::PrefixNotId`] when `id` is no session but starts some; [`Error::DeletedPartly`]
/// when the session went but something kept beside it could not be deleted.
pub fn delete(store: &SessionStore, project: &Path, id: &str) -> Result<Deleted> {
    let spills = spill_dir(project, id);
    match store.delete(id) {
        Ok(()) => {}
        Err(err @ mem_session::Error::Locked { .. }) => return Err(err.into()),
        Err(err) if !store.jsonl_path(id).exists() => {
            let matches: Vec<String> = store
                .ids()
                .unwrap_or_default()
                .into_iter()
                .filter(|other| other.starts_with(id))
                .collect();
            if !matches.is_empty() {
                return Err(Error::PrefixNotId {
                    prefix: id.to_owned(),
                    matches,
                });
            }
            return Err(err.into());
        }
        Err(err) => return Err(err.into()),
    }
    let partly =
        |what: String, source: Box<dyn std::error::Error + Send + Sync>| Error::DeletedPartly {
            id: id.to_owned(),
            what,
            source,
        };
    let spilled = match std::fs::remove_dir_all(&spills) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(partly(
                format!(
                    "cannot delete its spilled tool results in {}",
                    spills.display()
                ),
                Box::new(e),
            ));
        }
    };
    // What recall surfaced in this session (`<id>.recall.json`) goes with it.
    mem_recall::SurfacedLog::for_session(store.dir(), id)
        .remove()
        .map_err(|e| partly("not its recall record".to_owned(), Box::new(e)))?;
    // And its messages leave the session search index.
    mem_session::forget_in_index(store, id)
        .map_err(|e| partly("not from the session search index".to_owned(), Box::new(e)))?;
    Ok(Deleted {
        id: id.to_owned(),
        tool_results: spilled.then_some(spills),
    })
}

/// Totals over every file of one import (`mem session import`), as its JSON report gives them.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ImportSummary {
    /// Transcript files found.
    pub files: usize,
    /// Sessions imported or found unchanged.
    pub sessions: usize,
    /// Sessions whose source had nothing new (counted in `sessions`, not in the totals).
    pub unchanged: usize,
    /// Messages imported (new or rewritten), over every session.
    pub messages: usize,
    /// Tool calls paired with their results, over every session.
    pub tool_pairs: usize,
    /// Compact boundaries imported.
    pub boundaries: usize,
    /// Damaged lines (each once), all kinds.
    pub damaged_lines: usize,
    /// Damaged lines by kind.
    pub damaged: BTreeMap<String, usize>,
    /// Files found inside a folder that are not transcripts (passed over).
    pub not_transcripts: usize,
    /// Files that could not be imported, and paths that could not be read.
    pub failed: usize,
    /// The exit code of the import: 0, 1 (a failure) or [`EXIT_DAMAGED_LINES`].
    pub exit_code: u8,
}

/// Exit code of an import when every file was imported but some lines were lost or altered
/// because they were damaged (malformed JSON, torn, invalid UTF-8...): the sessions are
/// stored, the damaged lines are listed and tallied in the summary.
pub const EXIT_DAMAGED_LINES: u8 = 3;

/// What became of one file of an import, handed to the caller as each file is done.
#[derive(Debug)]
pub enum FileOutcome {
    /// Imported: the sessions it holds (the main one and its subagents).
    Imported(Vec<Ingested>),
    /// The file is a session of this project's own store (an import of `.` walks into it):
    /// skipped, not a failure.
    AlreadyStored(PathBuf),
    /// A file found inside a folder that is not a transcript at all: passed over.
    NotATranscript(mem_session::Error),
    /// Could not be imported (counted as a failure).
    Failed(mem_session::Error),
}

/// One import of transcript files into a store: the files found, then the import, the index
/// refresh and the outcome, each a step of its own so the caller can report between them.
#[derive(Debug)]
pub struct Import {
    /// The transcript files found, in import order.
    pub files: Vec<PathBuf>,
    /// Paths that could not be read or walked (line 0).
    pub diagnostics: Vec<Diagnostic>,
    /// The totals so far ([`Import::finish`] sets `failed` and `exit_code`).
    pub summary: ImportSummary,
    paths: Vec<PathBuf>,
    failures: usize,
    unreadable: usize,
}

impl Import {
    /// Finds the transcripts under `paths` (files or folders, recursive): nothing is read yet.
    pub fn discover(paths: &[PathBuf]) -> Import {
        let (files, diagnostics) = mem_session::import::discover(paths);
        // A path named on the command line that could not be read is a failure, not a detail.
        let unreadable = diagnostics
            .iter()
            .filter(|d| d.severity == mem_session::Severity::Error)
            .count();
        Import {
            summary: ImportSummary {
                files: files.len(),
                ..ImportSummary::default()
            },
            files,
            diagnostics,
            paths: paths.to_vec(),
            failures: 0,
            unreadable,
        }
    }

    /// Imports every file into `store` (session `id` for the main session of a single file),
    /// `threads` files read and converted at once, written in their order; `each` gets every
    /// file's outcome in that order, after it is counted in [`Import::summary`].
    ///
    /// Errors: [`Error::NoTranscripts`] when no file was found; the store's when it cannot
    /// be locked or listed (a file that cannot be imported is an outcome, not an error).
    pub fn run(
        &mut self,
        store: &SessionStore,
        id: Option<&str>,
        threads: usize,
        mut each: impl FnMut(usize, &Path, FileOutcome),
    ) -> Result<()> {
        if self.files.is_empty() {
            return Err(Error::NoTranscripts {
                paths: self.paths.clone(),
            });
        }
        let (files, paths, summary, failures) = (
            &self.files,
            &self.paths,
            &mut self.summary,
            &mut self.failures,
        );
        mem_session::ingest::import_many(store, files, id, threads, |i, result| {
            let file = &files[i];
            let outcome = match result {
                Ok(sessions) => {
                    count(summary, &sessions);
                    FileOutcome::Imported(sessions)
                }
                Err(mem_session::Error::SourceIsStore { path }) => FileOutcome::AlreadyStored(path),
                // A file found inside a folder that is not a transcript at all is passed over
                // (a folder of transcripts often holds other JSONL); named on the command
                // line, or any other error, it is a failure.
                Err(err @ mem_session::Error::NotATranscript { .. }) if !paths.contains(file) => {
                    summary.not_transcripts += 1;
                    FileOutcome::NotATranscript(err)
                }
                Err(err) => {
                    *failures += 1;
                    FileOutcome::Failed(err)
                }
            };
            each(i, file, outcome);
        })?;
        Ok(())
    }

    /// Makes the imported messages searchable (`mem session search`) when a session was
    /// imported; a failure here loses nothing (the next search brings the index in step) and
    /// is returned for a warning, not as the import's error.
    pub fn refresh_index(&self, store: &SessionStore) -> Option<mem_session::Error> {
        if self.summary.sessions == 0 {
            return None;
        }
        mem_session::refresh_index(store).err()
    }

    /// Sets the summary's `failed` and `exit_code`, and returns why the import failed, if it
    /// did: no file found was a transcript, none could be imported, or some could not.
    pub fn finish(&mut self) -> Option<ImportFailure> {
        let files = self.files.len();
        let (failures, not_transcripts) = (self.failures, self.summary.not_transcripts);
        self.summary.failed = failures + self.unreadable;
        let failure = if not_transcripts == files {
            Some(ImportFailure::NoTranscript { files })
        } else if failures + not_transcripts == files && failures > 0 {
            Some(ImportFailure::NoneImported)
        } else if failures + self.unreadable > 0 {
            Some(ImportFailure::Some {
                paths: failures + self.unreadable,
            })
        } else {
            None
        };
        self.summary.exit_code = if failure.is_some() {
            1
        } else if self.summary.damaged_lines > 0 {
            EXIT_DAMAGED_LINES
        } else {
            0
        };
        failure
    }
}

/// Why an import failed as a whole (exit code 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFailure {
    /// None of the `files` found is a transcript mewmem can import.
    NoTranscript {
        /// Files found.
        files: usize,
    },
    /// No file could be imported.
    NoneImported,
    /// Some `paths` could not be imported (files, and paths that could not be read).
    Some {
        /// How many.
        paths: usize,
    },
}

/// Adds one file's sessions to the totals.
fn count(summary: &mut ImportSummary, sessions: &[Ingested]) {
    for s in sessions {
        if s.action == IngestAction::Unchanged {
            // Nothing imported: the lines read again from the sync mark are not new
            // messages.
            summary.sessions += 1;
            summary.unchanged += 1;
        } else if s.action != IngestAction::Empty {
            summary.sessions += 1;
            summary.messages += s.report.messages;
            summary.tool_pairs += s.report.tool_pairs;
            summary.boundaries += s.report.boundaries;
        }
        for (kind, n) in &s.report.damaged {
            *summary.damaged.entry(kind.clone()).or_insert(0) += n;
            summary.damaged_lines += n;
        }
    }
}
