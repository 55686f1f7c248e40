//! mewmem: the facade an LLM coding agent embeds for the whole memory lifecycle of MewCode
//! seed 000 §6 ("完整生命周期"), and the agent integrations built on it.
//!
//! - [`Memory`] / [`AgentSession`]: open a project (instructions, memories, session store),
//!   start or resume a session with the seed §6 block at the head of its context, append each
//!   message as it happens, compact near the context window and inject the block again.
//! - [`context`]: the start context (the seed §6 block) fitted to a character budget.
//! - [`hook`]: the Claude Code hook protocol (`mem hook claude EVENT`): the payload, what each
//!   event does (start context; incremental transcript sync), the failure log.
//! - [`recall`]: the recall reminder for a user message (mem-recall) within a budget.
//! - [`install`]: merging mewmem's hooks into a Claude Code `settings.json` and removing them.
//! - [`ops`]: the operations the CLI and the MCP server run (tier store, notes, recall,
//!   context), with typed results; `mcp` (feature `mcp`): the MCP server on them.
//!
//! No daemon anywhere: hooks run the library directly, so nothing has to be up for them.

pub mod context;
mod error;
pub mod hook;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
mod memory;
pub mod ops;
pub mod recall;

pub use error::{Error, Result};

/// `docs/INTEGRATION.md`, whose Rust example (the facade in an agent loop) is compiled as a
/// doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/INTEGRATION.md")]
pub struct IntegrationGuide;
pub use memory::{
    AgentSession, ConfigError, ConfigSource, Embeddings, Memory, MemorySettings, TierManager,
};
