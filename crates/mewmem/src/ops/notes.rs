//! Memory notes (seed 000 §4): written atomically with a valid frontmatter through the secret
//! filter, listed, shown and removed by id (`N:<scope>/<file>`), and recalled for a message.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use mem_llm::Llm;
use mem_recall::{
    MemoryDirs, NewNote, Note, NoteId, Recall, RecallOptions, Scan, Scope, SurfacedLog, Written,
};

use crate::Memory;
use crate::error::Result;

/// A removed note ([`Memory::remove_note`]).
#[derive(Debug, Clone)]
pub struct RemovedNote {
    /// Its id.
    pub id: NoteId,
    /// Its file.
    pub path: PathBuf,
    /// Problems deleting its cached vectors (the note itself is gone).
    pub warnings: Vec<String>,
}

impl Memory {
    /// Writes a new note into the folder of `scope` (the project's only when
    /// [`Memory::check_notes_write`] allows it); `overwrite` replaces a note of the same file
    /// name.
    ///
    /// Errors: [`crate::Error::Config`] (refused, or the note folders cannot be configured),
    /// [`crate::Error::Recall`] (an invalid note, a name taken, a write that failed).
    pub fn add_note(&self, scope: Scope, note: &NewNote, overwrite: bool) -> Result<Written> {
        let dirs = self.memory_dirs()?;
        if scope == Scope::Project {
            self.check_notes_write()?;
        }
        Ok(mem_recall::write_note(&dirs, scope, note, overwrite)?)
    }

    /// The notes of `dirs` (default: [`Memory::memory_dirs`]), newest first, with what was
    /// skipped.
    ///
    /// Errors: [`crate::Error::Config`] for the default folders.
    pub fn notes(&self, dirs: Option<&MemoryDirs>) -> Result<Scan> {
        Ok(match dirs {
            Some(d) => mem_recall::scan(d),
            None => mem_recall::scan(&self.memory_dirs()?),
        })
    }

    /// One note by id (`N:project/testing.md`).
    ///
    /// Errors: [`crate::Error::Config`]; [`crate::Error::Recall`] (a bad id, no such note).
    pub fn note(&self, id: &str) -> Result<Note> {
        let dirs = self.memory_dirs()?;
        let id = NoteId::parse(id)?;
        Ok(mem_recall::read_note(&dirs, &id)?)
    }

    /// Deletes one note by id, and its cached vectors (the recall candidate's and the search
    /// index's texts).
    ///
    /// Errors: [`crate::Error::Config`] (refused...), [`crate::Error::Recall`] (a bad id, no
    /// such note, a delete that failed).
    pub fn remove_note(&self, id: &str) -> Result<RemovedNote> {
        let dirs = self.memory_dirs()?;
        let parsed = NoteId::parse(id)?;
        self.check_notes_write()?;
        // The texts whose vectors may be cached: the recall candidate's and the search
        // index's (`name`, then the description when there is one, then the body).
        let texts: Vec<String> = mem_recall::read_note(&dirs, &parsed)
            .map(|note| {
                let c = note.candidate();
                let search = if c.description.is_empty() {
                    format!("{}\n{}", c.name, c.body)
                } else {
                    format!("{}\n{}\n{}", c.name, c.description, c.body)
                };
                vec![mem_llm::hybrid::candidate_text(&c), search]
            })
            .unwrap_or_default();
        let path = mem_recall::remove_note(&dirs, &parsed)?;
        let mut warnings = Vec::new();
        self.forget_vectors(None, &texts, &mut warnings);
        Ok(RemovedNote {
            id: parsed,
            path,
            warnings,
        })
    }

    /// The record of the notes session `id` surfaced (`<sessions>/<id>.recall.json`; nothing
    /// is created here).
    ///
    /// Errors: [`crate::Error::Session`] when `id` is not a valid session id.
    pub fn surfaced_log(&self, id: &str) -> Result<SurfacedLog> {
        mem_session::validate_id(id)?;
        Ok(SurfacedLog::for_session(self.store().dir(), id))
    }

    /// The notes of `dirs` recalled for `query` by `llm` (seed 000 §4), leaving out those
    /// `log` says the session already surfaced and recording the ones chosen now, ages counted
    /// to `now`. Never fails: problems are in the result's warnings.
    pub async fn recall_notes(
        &self,
        llm: Arc<dyn Llm>,
        dirs: &MemoryDirs,
        log: Option<&SurfacedLog>,
        query: &str,
        options: RecallOptions,
        now: SystemTime,
    ) -> Recall {
        mem_recall::recall_for_session(llm.as_ref(), dirs, log, query, options, now).await
    }
}
