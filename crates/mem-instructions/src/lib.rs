//! The instructions layer of mewmem (MewCode seed §5): finds a project's instruction files
//! (`MEWCODE.md`, and by default `AGENTS.md` / `CLAUDE.md` as real repositories name them),
//! expands their `@include` / `@path` references safely, and gives the text of the
//! `# mewcodeMd` section that `mem_core::render_long_term_memory` injects (seed §6).
//!
//! - [`load`] with [`LoadOptions`] → [`Instructions`]: the merged text, where each [`Part`] of it
//!   comes from (file and include chain), and every [`Warning`] (file:line and reason).
//! - [`find_includes`]: the include parser alone (no I/O; fuzzed in `fuzz/`).
//! - [`read_capped`]: reads a regular file within a byte budget, never blocking on a FIFO.
//! - The auto-memory files (`memories.md`) are read and written by `mem-auto`, which uses
//!   [`read_capped`] and the same [`Warning`]s.
//!
//! An instruction file from a cloned repository is untrusted input: includes resolve only to
//! files inside the project root after `..` and symlinks are resolved (inside `~/.mewcode` for the
//! user's file); absolute and `~` paths are refused in project files; directories, FIFOs and
//! devices are refused without being opened; every file and the whole are capped in bytes with a
//! visible marker where text was cut. Nothing here panics or fails on a bad include: it is
//! skipped with a warning. Configuration (names, limits) comes in as values: this crate reads no
//! environment variable or config file.

mod error;
mod load;
mod parse;
mod read;

pub use error::{Error, ReadError, Result};
pub use load::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_NAMES, DENIED_FOLDERS, DENIED_NAMES,
    Instructions, Limits, LoadOptions, MAX_INCLUDE_DEPTH, Part, Scope, Site, Warning, WarningKind,
    load,
};
pub use parse::{IncludeKind, IncludeRef, find_includes};
pub use read::{CappedText, read_capped};

/// The seed's instruction that heads the `# mewcodeMd` section (seed §5), with the seed's line
/// breaks.
pub const OVERRIDE_TEXT: &str = "Codebase and user instructions are shown below. Be sure to adhere to these\ninstructions. IMPORTANT: These instructions OVERRIDE any default behavior\nand you MUST follow them exactly as written.";

impl Instructions {
    /// The body of the `# mewcodeMd` section: [`OVERRIDE_TEXT`], a blank line, the merged text.
    /// Empty when there are no instructions (so the section is omitted).
    ///
    /// Pass it as the `instructions` argument of `mem_core::render_long_term_memory` or
    /// `Conversation::inject_long_term_memory`.
    pub fn section_body(&self) -> String {
        if self.text.trim().is_empty() {
            String::new()
        } else {
            format!("{OVERRIDE_TEXT}\n\n{}", self.text)
        }
    }
}
