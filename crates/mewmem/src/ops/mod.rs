//! The operations of the facade, one place for each: what the `mem` commands and the MCP
//! tools do, with typed results (the callers render them: text or JSON). Nothing here prints,
//! reads the environment or the configuration files.
//!
//! - [`tiers`]: the tier store through [`crate::Memory::tiers`]: search (hybrid when embeddings
//!   are configured), show, add, forget, stats, clean, reindex, preferences, tiers, archive,
//!   import, and copying the local store to a team store.
//! - [`notes`]: memory notes (add, list, show, remove) and recall for a message.
//! - the start context's options with Tier 0 ([`crate::Memory::context_options`]).
//! - [`session`]: resolving, showing, deleting and importing sessions (`mem session`).
//! - [`compact`]: a session's size against the window and a compaction by hand (`mem compact`).
//! - [`extract`]: auto memory by hand over one or every session (`mem extract`).
//! - [`llm`]: the inputs of the model jobs run by hand and a ping of each job (`mem llm`).
//! - [`hook`]: fitting an agent hook's start context to a token cap (`mem hook codex`).
//! - [`checkpoint`]: the project's checkpoints on its configured store, the automatic one a
//!   command that changes memory takes first, a killed restore finished (`mem checkpoint`).
//! - [`skill`]: groups of memories that would make a skill, and a `SKILL.md` written from one
//!   (`mem skill`).
//!
//! Warnings (embeddings off, no embedding cache...) are returned as lines without `warning: `
//! in the order they arose; nothing here prints.

pub mod checkpoint;
pub mod compact;
pub mod extract;
pub mod hook;
pub mod llm;
pub mod notes;
pub mod session;
pub mod skill;
pub mod tiers;
mod vectors;

use std::path::PathBuf;

use chrono::NaiveDate;
use mem_instructions::LoadOptions;

use crate::Memory;
use crate::context::ContextOptions;

/// An error's text with its causes, `: `-separated (as `anyhow`'s `{:#}` prints a chain).
pub fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Milliseconds since the epoch as RFC 3339 (UTC, seconds).
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// `just now`, `5m ago`, `3h ago`, `2d ago`.
pub fn age(ms: i64) -> String {
    let secs = (chrono::Utc::now().timestamp_millis() - ms).max(0) / 1000;
    match secs {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// A search hit as JSON (`mem memory search --json`, `mem mcp`'s `memory_search`): id, source,
/// scope, title, snippet, path and `updated` (RFC 3339).
pub fn hit_json(h: &mem_tiers::SearchHit) -> serde_json::Value {
    serde_json::json!({
        "id": h.id, "source": h.source, "scope": h.scope, "title": h.title,
        "snippet": h.snippet, "path": h.path, "updated": rfc3339(h.updated_ms),
    })
}

impl Memory {
    /// The options of the project's start context (the one builder behind the SessionStart
    /// hook, the MCP `context` tool and `mem context`): `instructions` as given, the
    /// `memories.md` files of the project and the home, Tier 0 of the configured tier store
    /// (SQLite or PostgreSQL) after the entries, the settings' date, at most `budget`
    /// characters (`None`: no limit). `remember_counts`: Tier 0's token counts are kept in
    /// `<storage_dir>/cache/token-counts` ([`mem_tiers::MemoryConfig::count_cache`]) so that
    /// the next process fitting the same Tier 0 does not load the BPE vocabulary (the
    /// SessionStart hook, a new process per event); read-only callers pass `false` and write
    /// nothing.
    ///
    /// A tier store that cannot be opened or read never costs the rest: Tier 0 is left out and
    /// the second value holds one line that says so (`Tier 0 left out: <why>`).
    pub fn context_options(
        &self,
        instructions: LoadOptions,
        budget: Option<usize>,
        remember_counts: bool,
    ) -> (ContextOptions, Vec<String>) {
        self.context_options_on(instructions, self.settings().date, budget, remember_counts)
    }

    /// [`Self::context_options`] for `date`.
    pub fn context_options_on(
        &self,
        instructions: LoadOptions,
        date: NaiveDate,
        budget: Option<usize>,
        remember_counts: bool,
    ) -> (ContextOptions, Vec<String>) {
        let mut options = ContextOptions::new(self.project(), &self.settings().home, date);
        options.instructions = instructions;
        options.budget_chars = budget;
        let mut problems = Vec::new();
        let opened = self.tier_config().and_then(|mut config| {
            if remember_counts {
                config.count_cache = Some(config.storage_dir.join("cache").join("token-counts"));
            }
            self.open_tiers_with(config)
        });
        match opened.and_then(|mm| crate::context::tier0_of(&mm)) {
            Ok(t) => options.tier0 = t,
            Err(e) => problems.push(format!("Tier 0 left out: {}", chain_text(&e))),
        }
        (options, problems)
    }

    /// `<project>/.mewcode/logs/mcp.log`: what the MCP `memory_forget` removed and why (the
    /// hook log's format and locking).
    pub fn mcp_log_path(&self) -> PathBuf {
        crate::hook::log_path(self.project()).with_file_name("mcp.log")
    }
}
