//! Auto memory (MewCode seed 000 §3): facts an agent learns, kept across sessions in two
//! `memories.md` files — `~/.mewcode/memories.md` (用户偏好 preferences, 纠正反馈 corrections) and
//! `<project>/.mewcode/memories.md` (项目知识 project knowledge, 参考资料 references) — extracted
//! after each turn and injected as the `# autoMemory` section (seed §6).
//!
//! - [`Document`]: the file model. Entries are `- ` bullets under the four category headings
//!   (the seed's or English ones); every other line a person wrote is kept where it was.
//! - [`EntryId`]: `M` + 8 hex digits of SHA-256 of an entry's normalised text; stable, shown by
//!   `mem extract`, accepted by `mem memory show/forget` and the MCP tools.
//! - [`AutoMemory`]: both files of a project: [`AutoMemory::list`], [`AutoMemory::find`],
//!   [`AutoMemory::forget`], [`AutoMemory::update`] (lock, re-read, change, atomic replace).
//! - [`extract_session`]: extraction after a turn — only the messages after the last extraction
//!   (count persisted per session), secrets withheld from the prompt and the entries, one-off
//!   details dropped, corrections replacing what they correct, the token cap enforced.
//! - [`load_memories`]: the safe reading of both files for `mem context` (symlinks out of their
//!   folder, FIFOs, huge files refused or cut with a warning).
//!
//! **Invariant**: a `memories.md` is only ever replaced whole (temp file, fsync, rename) under its
//! lock, from what is on disk at that moment; no entry is written with a secret
//! ([`mem_core::secrets`]), and a file that cannot be read back without loss (binary, not UTF-8,
//! too large, not a regular file, outside its folder) is never rewritten.

mod clean;
mod doc;
mod error;
mod extract;
mod fsutil;
mod id;
mod load;
mod merge;
mod retire;
mod scope;
mod store;

pub use clean::{Cleaned, MAX_ENTRY_CHARS, clean, one_off, repeats_itself};
pub use doc::{Document, Entry, HeadingStyle, ParseWarning, category_of_heading};
pub use error::{Error, Result};
pub use extract::{
    DEFAULT_DAILY_TOKEN_BUDGET, DEFAULT_MAX_PROMPT_TOKENS, ExtractOptions, ExtractReport,
    STATE_DIR, bound_messages, extract_session, extracted_count, redact_messages, session_messages,
};
pub use id::{EntryId, IdError, normalise};
pub use load::{
    DEFAULT_MAX_MEMORY_BYTES, MEMORIES_FILE, Memories, MemoryFile, MemoryOptions, load_memories,
};
pub use mem_instructions::Scope;
pub use mem_llm::MemoryCategory;
pub use merge::{
    Candidate, Change, FileReport, ModelChange, NEAR_DUPLICATE, Update, corrected_term,
    count_tokens, merge_offline, merge_with_changes, near_duplicate, similarity,
};
pub use scope::{names_project_scope, states_project_fact};
pub use store::{
    AutoMemory, AutoOptions, DEFAULT_CAP_TOKENS, EntryDates, EntryInfo, Listing, LockedFile,
    META_FILE, Meta, OpenFile, scope_name, scope_of,
};
