//! mem-recall: memory notes recalled on demand (MewCode seed 000 §4, "长期记忆 — Recall 选择器").
//!
//! Notes are Markdown files with a frontmatter (`name`, `description`, `type`) in
//! `<project>/.mewcode/memory/`, `~/.mewcode/memory/` and any extra configured folder (a Claude
//! Code `~/.claude/projects/<project>/memory` works as is). Per user message:
//!
//! 1. [`scan`]: at most 200 `*.md` files (newest first past 200, `MEMORY.md` excluded), the
//!    frontmatter from the first 30 lines; a broken file is a [`Warning`], never a failure.
//!    [`scan_cached`], the per-turn scan of recall, takes unchanged notes from the [`cache`].
//! 2. [`recall`] / [`recall_for_session`] / [`prefetch`]: leave out what this session already
//!    surfaced ([`SurfacedLog`], persisted beside the session), ask `mem_llm::Llm::select` for at
//!    most 5 within 8 s; a failure, timeout or junk reply gives an empty reminder.
//! 3. [`render_reminder`]: the chosen notes in one `<system-reminder>`, with the seed's staleness
//!    warning on a note older than one day.
//!
//! Notes are addressed by id `N:<scope>/<file name>` ([`NoteId`]); [`read_note`],
//! [`write_note`] (atomic, through the secret filter) and [`remove_note`] work by id.
//!
//! Invariant: reading never writes a note (mtime is the age); writing never overwrites silently.

pub mod cache;
mod error;
pub mod frontmatter;
mod note;
mod recall;
mod reminder;
mod scan;
mod surfaced;

pub use error::{Error, Result};
pub use frontmatter::{FRONTMATTER_MAX_LINES, Frontmatter, MemoryFile};
pub use note::{
    MAX_STEM_CHARS, NOTE_TYPES, NOTES_LOCK_FILE, NOTES_LOCK_TIMEOUT, NewNote, NotesLock, Written,
    file_name_for, lock_notes, read_note, remove_note, render_note, write_note,
};
pub use recall::{
    Prefetch, Recall, RecallOptions, Recalled, SELECT_DEADLINE, prefetch, recall,
    recall_for_session,
};
pub use reminder::{
    AgeSource, MAX_BODY_BYTES, REMINDER_INTRO, STALENESS_WARNING, age_days, render_reminder,
    staleness_warning,
};
pub use scan::{
    INDEX_FILE, MAX_NOTE_BYTES, MAX_NOTES, MemoryDir, MemoryDirs, Note, NoteId, Scan, Scope,
    Warning, scan, scan_cached,
};
pub use surfaced::{RECORD_VERSION, SurfacedLog};
