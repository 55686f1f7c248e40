//! Shared types of mewmem: the message model every layer speaks, token counting, and the
//! `<system-reminder>` block that carries instructions and memories into a conversation.
//!
//! Implements MewCode seed §6 (`inject_long_term_memory`) and the message model that seed §1
//! (session records) and §2 (compaction) rely on. This crate does no I/O on its own: it reads no
//! file but one its caller names ([`fsread`]), no environment variable and not the clock (the
//! date of the injected block is a parameter).
//!
//! - [`Message`], [`Role`], [`ContentBlock`], [`ToolResultContent`]: Anthropic-style messages
//!   whose JSON round-trips losslessly, unknown blocks and unknown fields included.
//! - [`Conversation`]: an ordered list of messages with a per-message token cache.
//! - [`TokenCounter`]: real BPE counting (o200k_base by default, cl100k_base selectable).
//! - [`secrets`]: the one secret filter every memory write and hosted prompt passes through.
//! - [`fsread`]: the one safe file reader (regular files only, non-blocking open, byte cap)
//!   behind instruction, memory, note and transcript reads.
//! - [`sha256_hex`]: the one content hash (lowercase hex SHA-256) of the layers that fingerprint
//!   files.
//! - [`speech`]: what the user said in a user turn, as opposed to client-injected context.
//! - [`terminal`]: escaping text from transcripts, memories and models before it is printed.
//! - [`render_long_term_memory`] / [`Conversation::inject_long_term_memory`]: seed §6, exactly.

mod conversation;
pub mod count_cache;
pub mod digest;
pub mod fsread;
#[cfg(feature = "sqlite")]
pub mod fts5;
mod inject;
pub mod lockfile;
mod message;
pub mod pathguard;
pub mod secrets;
pub mod speech;
pub mod terminal;
#[doc(hidden)]
pub mod testing;
mod tokens;

pub use conversation::Conversation;
pub use count_cache::CountCache;
pub use digest::sha256_hex;
pub use inject::{
    LONG_TERM_MEMORY_MARKER, is_long_term_memory, render_long_term_memory, unwrap_system_reminder,
};
pub use message::{ContentBlock, Message, Role, ToolResultContent, metadata_keys};
pub use tokens::{
    Encoding, IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, TokenCounter, max_message_tokens,
    vocabulary_used,
};
