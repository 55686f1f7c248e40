//! The one place mewmem talks to models (beyond the seed's card): the three model jobs of MewCode
//! seed 000 — summarising the old prefix when compacting (§2), extracting memories after a turn
//! (§3), choosing which memory files to recall (§4) — and the fourth of seed 003, writing a skill
//! from related memories ("自动 Skills"), behind one trait, [`Llm`].
//!
//! - [`OfflineEngine`]: deterministic, no network, the default. Summary = the OMC statistics
//!   summary (seed 003) plus requests, files, commands and errors; extraction = cue-word rules and
//!   project facts; selection = BM25; skill = a template, one step or pitfall per memory.
//! - [`ModelEngine`]: one HTTP [`Provider`] (OpenAI-compatible `/chat/completions` or Anthropic
//!   `/v1/messages`) under a [`CallPolicy`] (deadline, retries with backoff and jitter,
//!   `Retry-After`); an unusable reply falls back to the offline engine and says so.
//! - The agent CLI providers ([`cli`]): `claude -p` / `codex exec` with the user's own login,
//!   under the same policy and fallback; the child runs with [`cli::CHILD_SESSION_ENV`] set, so
//!   mewmem's hooks do nothing inside it.
//! - [`Router`]: a possibly different engine per job; [`LlmSettings`] resolves it from
//!   `config.toml` values and environment variables handed in by the caller.
//!
//! The library reads no file and no environment variable (it looks for an agent CLI's program
//! in the `PATH` value handed in); it starts no runtime. Only the model calls are async.

pub mod cli;
pub mod config;
pub mod embed;
mod engine;
mod error;
pub mod http;
pub mod hybrid;
mod model;
pub mod offline;
pub mod parse;
pub mod prompt;
mod provider;
mod types;

pub use config::{CliCommand, ConfigFile, JobSettings, LlmSettings};
pub use embed::{Embedder, EmbeddingSettings, VectorCache};
pub use engine::{BoxFuture, Llm};
pub use error::{LlmError, Result};
pub use http::CallPolicy;
pub use hybrid::HybridSelector;
pub use model::{ModelEngine, Router};
pub use offline::OfflineEngine;
pub use provider::{ApiKey, Provider, ProviderKind, is_hosted_url};
pub use types::{
    Candidate, CurrentEntry, DEFAULT_SELECT_LIMIT, EntryChange, ExtractRequest, Job, Memories,
    MemoryCategory, Reply, SelectRequest, Selection, SkillDraft, SkillPoint, SkillRequest,
    SkillSource, SummarizeRequest, Summary,
};
