//! The model jobs run by hand (`mem llm`): their inputs read from a transcript, a
//! `memories.md` or memory folders as compaction, auto memory and recall would read them, the
//! offline engine's scores of a selection, and one ping of each job's model.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mem_core::{Message, Role};
use mem_llm::{Candidate, Job, LlmSettings, SelectRequest};

use crate::error::{Error, Result};

/// The largest `--memories` file read, in bytes (4 MiB; a memories.md is a few KB).
pub const MAX_MEMORIES_BYTES: usize = 4 << 20;

/// A `memories.md` given to the extract job, through the checks every file argument passes
/// ([`mem_instructions::read_capped`]: regular files only, opened non-blocking, at most
/// [`MAX_MEMORIES_BYTES`]).
///
/// Errors: [`Error::Context`] (`cannot read FILE`) over the reader's error;
/// [`Error::Refused`] when the file is too large or not UTF-8, naming it.
pub fn read_memories_file(path: &Path) -> Result<String> {
    let read =
        mem_instructions::read_capped(path, MAX_MEMORIES_BYTES).map_err(|e| Error::Context {
            context: format!("cannot read {}", path.display()),
            source: Box::new(e),
        })?;
    if read.truncated {
        return Err(Error::Refused(format!(
            "{} is too large ({} bytes; a memories file may have at most {MAX_MEMORIES_BYTES})",
            path.display(),
            read.size
        )));
    }
    if read.lossy {
        return Err(Error::Refused(format!(
            "{} is not valid UTF-8",
            path.display()
        )));
    }
    Ok(read.text)
}

/// The conversation of a transcript (Claude Code or Codex, through the session importers): the
/// main session's message records in file order, system prompts and boundaries left out.
///
/// Errors: the importer's ([`Error::Session`]); [`Error::Refused`] when the file holds no
/// conversation.
pub fn read_transcript(path: &Path) -> Result<Vec<Message>> {
    let sessions = mem_session::import::import_file(path)?;
    let messages: Vec<Message> = sessions
        .into_iter()
        .next()
        .map(|main| main.records)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| r.message)
        .filter(|m| m.role != Role::System)
        .collect();
    if messages.is_empty() {
        return Err(Error::Refused(format!(
            "{} holds no conversation to work on",
            path.display()
        )));
    }
    Ok(messages)
}

/// Memory files (`*.md`, `MEMORY.md` excluded) of the given directories, sorted by name, at most
/// 200 (a name seen in an earlier directory wins); frontmatter parsed by
/// [`mem_recall::frontmatter`]. A missing directory is skipped. A file that cannot be read or
/// is not UTF-8 is skipped, and a frontmatter that cannot be used ignored, each with a line to
/// `warn` naming the file, as they come.
///
/// The candidates read from `user_dir` (the user's `~/.mewcode/memory`, when it is one of
/// `dirs`) are user-level ([`Candidate::user_level`]).
///
/// Errors: [`Error::Context`] when a directory cannot be listed.
pub fn read_candidates(
    dirs: &[PathBuf],
    user_dir: Option<&Path>,
    mut warn: impl FnMut(String),
) -> Result<Vec<Candidate>> {
    const MAX_FILES: usize = 200;
    const MAX_FILE_BYTES: usize = 1 << 20;
    let mut candidates: Vec<Candidate> = Vec::new();
    // The user's folder however it is spelled (relative, through a symlink).
    let user_dir = user_dir.map(|u| u.canonicalize().unwrap_or_else(|_| u.to_path_buf()));
    for dir in dirs {
        let user_level = user_dir
            .as_ref()
            .is_some_and(|u| dir.canonicalize().is_ok_and(|d| &d == u) || dir == u);
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::Context {
                    context: format!("cannot read {}", dir.display()),
                    source: Box::new(e),
                });
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|e| e == "md")
                    && p.file_name().is_some_and(|n| n != "MEMORY.md")
                    && p.is_file()
            })
            .collect();
        paths.sort();
        for path in paths {
            if candidates.len() >= MAX_FILES {
                break;
            }
            let id = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if candidates.iter().any(|c| c.id == id) {
                continue;
            }
            let text = match mem_instructions::read_capped(&path, MAX_FILE_BYTES) {
                Ok(read) if read.lossy => {
                    warn(format!("{} is not valid UTF-8; skipped", path.display()));
                    continue;
                }
                Ok(read) => read.text,
                Err(e) => {
                    warn(format!("cannot read {}: {e}; skipped", path.display()));
                    continue;
                }
            };
            let (mut candidate, warning) = mem_recall::frontmatter::candidate(id, &text);
            if let Some(warning) = warning {
                warn(format!("{}: {warning}", path.display()));
            }
            candidate.user_level = user_level;
            candidates.push(candidate);
        }
    }
    Ok(candidates)
}

/// The offline engine's view of a selection: every matching candidate's BM25F score, and its
/// best share of an ideal score.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectScores {
    /// `(index into the request's candidates, BM25F score)`, best first.
    pub scored: Vec<(usize, f32)>,
    /// The score of an ideal candidate for the query.
    pub ideal: f32,
    /// Each candidate's best share of the ideal score (over the message and its clauses), by
    /// index.
    pub shares: Vec<f32>,
}

/// The offline engine's scores of `request`'s candidates ([`mem_llm::offline::score`],
/// `ideal_score`, `best_shares`).
pub fn select_scores(request: &SelectRequest) -> SelectScores {
    SelectScores {
        scored: mem_llm::offline::score(&request.query, &request.candidates),
        ideal: mem_llm::offline::ideal_score(&request.query, &request.candidates),
        shares: mem_llm::offline::best_shares(&request.query, &request.candidates),
    }
}

/// The outcome of one ping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The job.
    pub job: Job,
    /// `None` when the job is offline (no call needed); else the reply and the latency, or the
    /// error with its causes on one line (`: `-separated).
    pub result: Option<std::result::Result<(String, Duration), String>>,
}

/// Asks each job's model once (a tiny request), in [`Job::ALL`] order.
pub async fn ping_all(resolved: &LlmSettings) -> Vec<CallOutcome> {
    let mut calls = Vec::new();
    for job in Job::ALL {
        let result = match resolved.job(job).model_engine() {
            Ok(None) => None,
            Ok(Some(engine)) => Some(engine.ping().await.map_err(|e| super::chain_text(&e))),
            Err(e) => Some(Err(super::chain_text(&e))),
        };
        calls.push(CallOutcome { job, result });
    }
    calls
}
