//! Reading a text file safely: regular files only, never blocking, never more than a budget.
//! The reader is `mem_core::fsread`'s (shared with notes, `memories.md` and transcripts); it is
//! re-exported here for the instruction loader's callers.

pub use mem_core::fsread::{CappedText, read_capped};
