//! Context compaction (MewCode seed 000 §2, OMC seed 003 auto-compact): when a conversation nears
//! the model's context window, the old prefix is summarised and a tail kept verbatim, the
//! boundary persisted through `mem-session`, and the instructions and memories injected again.
//!
//! - [`AutoCompact`] / [`AutoCompactConfig`] / [`CompactResult`]: seed 003's API
//!   (`check_and_compact(session, force, since_last_user)`, thresholds 0.70 / 0.85 of
//!   `model_context_window`, de-duplication, error purge) with seed 000's Layer-2 rules (the
//!   constants below, [`TailPolicy::MewCode`]).
//! - [`trim`]: the three tool-result trimming passes of seed 000 §2, spilled results written
//!   atomically under `<project>/.mewcode/session/tool-results/<session-id>/`.
//! - [`split`]: where the cut goes; it never separates a tool_use from its tool_result.
//! - [`coverage`]: the requests, files, commands and errors a summary must keep; what a
//!   summariser leaves out is appended under it.
//!
//! Guarantees (each tested): the boundary is on disk when a compaction returns and nothing before
//! it is rewritten; a summariser failure writes nothing and, three times in a row, pauses
//! automatic compaction for that session; a tail too big for the window is shrunk to the minimum,
//! its tool results cut, and `critical` reported, never a loop; the per-message [`AutoCompact::check`]
//! counts only new messages. Only the summariser call is async; no runtime is started here.

mod auto;
pub mod coverage;
mod error;
pub mod omc;
pub mod split;
pub mod trim;

pub use auto::{
    AutoCompact, AutoCompactConfig, BOUNDARY_STATS_KEY, Check, CompactResult, CompactSession,
    Compaction, LongTermMemory, Outcome, SUMMARY_PREAMBLE, Skip, Trigger, WarningLevel,
};
pub use error::{Error, Result};
pub use split::{OMC_KEEP_FRACTION, TailPolicy};
pub use trim::{Spill, TOOL_RESULTS_DIR, TrimStats, spill_path, trim_tool_results, write_spills};

/// Keep the last N rounds' tool results whole (used only when trimming old tool results).
pub const KEEP_RECENT_TURNS: usize = 10;
/// Token budget the kept tail grows to.
pub const KEEP_RECENT_TOKENS: usize = 10_000;
/// Messages the kept tail holds at least.
pub const MIN_KEEP_MESSAGES: usize = 5;
/// Hard cap on the kept tail's tokens.
pub const KEEP_MAX_TOKENS: usize = 40_000;
/// A prefix under this many tokens is not worth summarising.
pub const MIN_SUMMARIZE_PREFIX_TOKENS: usize = 2_000;
/// Safety margin (tokens) of automatic compaction: it triggers over `window − 13,000`.
pub const AUTO_COMPACT_SAFETY_MARGIN: usize = 13_000;
/// Safety margin (tokens) of manual compaction: `window − 3,000`.
pub const MANUAL_COMPACT_SAFETY_MARGIN: usize = 3_000;
/// The most tokens a compaction's summary holds (beyond the seed, which does not bound it):
/// earlier summaries are carried forward, so without a bound the summary would grow with every
/// compaction until it alone filled the window. 8,000 is a fifth of
/// [`KEEP_MAX_TOKENS`]: room for the offline engine's full lists (20 entries each) and a model's
/// summary of a long session. On small windows the budget is lower: see
/// [`AutoCompactConfig::summary_budget`].
pub const SUMMARY_MAX_TOKENS: usize = 8_000;
/// Summariser failures in a row after which automatic compaction pauses for a session (beyond
/// the seed).
pub const MAX_CONSECUTIVE_FAILURES: usize = 3;
