//! Compaction by hand (`mem compact stats|sweep`, seed 003's `compact` CLI on seed 000 §2's
//! Layer-2 rules): a session's size against the window counted with the injected block, and a
//! compaction now, written or as a dry run, with what made it unusable when it is.

use std::path::PathBuf;
use std::sync::Arc;

use mem_auto::{MemoryOptions, load_memories};
use mem_compact::{
    AutoCompact, AutoCompactConfig, BOUNDARY_STATS_KEY, Check, CompactResult, CompactSession,
    Compaction, LongTermMemory, Outcome, Skip, TailPolicy, Trigger, WarningLevel,
};
use mem_core::{Conversation, Message, TokenCounter};
use mem_instructions::LoadOptions;
use mem_llm::OfflineEngine;
use mem_session::{RecordType, SessionStore};
use serde_json::Value;

use crate::error::{Error, Result};

/// The instructions and memories injected into the context, as `mem context` builds them:
/// the instruction files of `instructions`, then both `memories.md` of `memories`. Each
/// loader's warnings go to `warn` as they come (the instructions' before the memories are read).
///
/// Errors: [`Error::Instructions`] (the project root is gone), [`Error::Auto`].
pub fn long_term_memory(
    instructions: &LoadOptions,
    memories: &MemoryOptions,
    date: chrono::NaiveDate,
    mut warn: impl FnMut(String),
) -> Result<LongTermMemory> {
    let ins = mem_instructions::load(instructions)?;
    for w in &ins.warnings {
        warn(w.to_string());
    }
    let mem = load_memories(memories)?;
    for w in &mem.warnings {
        warn(w.to_string());
    }
    Ok(LongTermMemory {
        instructions: ins.section_body(),
        memories: mem.text(),
        date,
    })
}

/// The context as the agent sends it: the block of seed §6 at the top. [`stats`] and [`sweep`]
/// both count the context after this, so they agree.
fn inject(conversation: &mut Conversation, ltm: &LongTermMemory) {
    conversation.inject_long_term_memory(&ltm.instructions, &ltm.memories, ltm.date);
}

/// A session's size against the window (`mem compact stats`).
#[derive(Debug, Clone)]
pub struct Stats {
    /// The session.
    pub session: String,
    /// Tokens of the replayed context with the injected block, share of the window, level.
    pub check: Check,
    /// The configuration `mem compact sweep` uses (manual margin).
    pub config: AutoCompactConfig,
    /// Compact boundaries in the file.
    pub compactions: usize,
    /// Of those, the ones whose boundary gives the tokens saved (mewmem's own).
    pub with_figures: usize,
    /// Tokens saved over the compactions with figures.
    pub tokens_saved: usize,
}

/// The size of session `id` against a window of `window` tokens, counted as [`sweep`] counts
/// it (the block `ltm` injected, the manual trigger's margin).
///
/// Errors: the store's (no such session, unreadable file).
pub fn stats(store: &SessionStore, id: &str, window: usize, ltm: &LongTermMemory) -> Result<Stats> {
    let resumed = store.resume(id)?;
    let config = AutoCompactConfig {
        model_context_window: window,
        trigger: Trigger::Manual,
        ..AutoCompactConfig::default()
    };
    let ac = AutoCompact::new(config.clone(), Arc::new(OfflineEngine));
    let mut conversation: Conversation = resumed.messages.into();
    inject(&mut conversation, ltm);
    let check = ac.check(&conversation);
    let (records, _) = store.read_records(id)?;
    let mut saved = 0usize;
    let mut measured = 0usize;
    let mut boundaries = 0usize;
    for r in &records {
        if matches!(
            r.record_type,
            RecordType::CompactBoundary | RecordType::Compression
        ) {
            boundaries += 1;
            if let Some(s) = r
                .extra
                .get(BOUNDARY_STATS_KEY)
                .and_then(|v| v.get("tokens_saved"))
                .and_then(Value::as_u64)
            {
                saved += usize::try_from(s).unwrap_or(usize::MAX);
                measured += 1;
            }
        }
    }
    Ok(Stats {
        session: id.to_owned(),
        check,
        config,
        compactions: boundaries,
        with_figures: measured,
        tokens_saved: saved,
    })
}

/// What a sweep is asked to do.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The session.
    pub id: String,
    /// Keep the tail from the last user request on.
    pub since_last_user: bool,
    /// Write nothing.
    pub dry_run: bool,
    /// Compact even under the threshold.
    pub force: bool,
}

/// What a sweep did with its compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Dry run: nothing written.
    DryRun,
    /// The boundary was written.
    Written,
    /// The result was not usable: nothing written.
    Refused,
}

/// The result of [`sweep`].
#[derive(Debug)]
pub struct Sweep {
    /// The context before, as read (from the last boundary, the block injected).
    pub before: Vec<Message>,
    /// The trigger: the context compacts above this many tokens.
    pub limit: usize,
    /// The model's context window, in tokens.
    pub window: usize,
    /// The most tokens a summary may have.
    pub summary_budget: usize,
    /// What happened.
    pub outcome: SweepOutcome,
}

/// Compacted or not, and whether the result is still critical.
#[derive(Debug)]
pub enum SweepOutcome {
    /// Not compacted.
    Skipped {
        /// The result (not triggered).
        result: CompactResult,
        /// Why.
        reason: Skip,
        /// When the context is still `critical`: the tokens of the minimal tail alone.
        minimal_tail: Option<usize>,
    },
    /// A compaction, written or not (`commit`).
    Compacted {
        /// The compaction: cut, summary, spills, the context after.
        compaction: Box<Compaction>,
        /// Its result (as committed when written).
        result: CompactResult,
        /// Whether it was written.
        commit: Commit,
        /// When the result is still `critical`: why, and whether it was worth keeping.
        critical: Option<Critical>,
    },
}

/// A compaction that ended `critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Critical {
    /// Tokens of the kept tail alone (the minimal tail when `tail_shrunk`).
    pub tail_tokens: usize,
    /// Kept all the same: the context fits the window, tokens were saved, the summary is
    /// whole. Otherwise nothing is written (issue 14: never write a boundary and then report
    /// failure).
    pub usable: bool,
}

/// Compacts session `options.id` of `project` now with `ac` (the block `ltm` injected first):
/// the prefix summarised, the tail kept, the boundary written unless it is a dry run or the
/// result is critical and not worth keeping ([`Critical::usable`]).
///
/// Errors: [`Error::Context`] when the session cannot be opened or the compaction fails (the
/// session is unchanged); [`Error::Compact`] when the boundary cannot be written.
pub async fn sweep(
    store: &SessionStore,
    project: PathBuf,
    options: &SweepOptions,
    mut ac: AutoCompact,
    ltm: LongTermMemory,
) -> Result<Sweep> {
    let id = &options.id;
    let session = if options.dry_run {
        CompactSession::open_read_only(store, id, project)
    } else {
        CompactSession::open(store, id, project)
    };
    let mut session = session
        .map_err(|e| Error::Context {
            context: format!("cannot open session {id}"),
            source: Box::new(e),
        })?
        .with_long_term_memory(ltm.clone());
    inject(&mut session.conversation, &ltm);
    let before: Vec<Message> = session.conversation.messages().to_vec();
    tracing::debug!(
        session = %id,
        file = %store.jsonl_path(id).display(),
        messages = before.len(),
        compactions_before = before
            .iter()
            .filter(|m| m.metadata.contains_key(mem_session::COMPACT_SUMMARY_MARKER))
            .count(),
        "sweep: session read (from its last compact boundary)"
    );
    let outcome = ac
        .prepare(&session, options.force, options.since_last_user)
        .await
        .map_err(|e| Error::Context {
            context: "compaction failed; the session is unchanged".to_owned(),
            source: Box::new(e),
        })?;
    let limit = ac.config().trigger_tokens();
    match &outcome {
        Outcome::Skipped { result, reason } => tracing::debug!(
            session = %id,
            tokens = result.tokens_before,
            limit,
            %reason,
            "sweep: not compacting"
        ),
        Outcome::Ready(c) => tracing::debug!(
            session = %id,
            tokens_before = c.result.tokens_before,
            tokens_after = c.result.tokens_after,
            limit,
            summarised = c.cut.prefix.len(),
            kept = c.cut.tail.len(),
            earlier_summaries = c.cut.summaries.len(),
            tail_shrunk = c.tail_shrunk,
            summary_cut = c.summary_cut,
            engine = %c.engine,
            "sweep: cut chosen"
        ),
    }
    let window = ac.config().model_context_window;
    let outcome = match outcome {
        Outcome::Skipped { result, reason } => {
            let minimal_tail = (result.warning_level == WarningLevel::Critical)
                .then(|| minimal_tail_tokens(&before, ac.config().tail));
            SweepOutcome::Skipped {
                result,
                reason,
                minimal_tail,
            }
        }
        Outcome::Ready(compaction) => {
            let critical = compaction.result.warning_level == WarningLevel::Critical;
            // A result still over the limit is kept only when it is worth keeping: the context
            // then fits the window, tokens were saved, and the summary is whole.
            let usable = !critical
                || (compaction.result.tokens_after <= window
                    && compaction.result.tokens_saved() > 0
                    && !compaction.summary_cut);
            let commit = if options.dry_run {
                Commit::DryRun
            } else if usable {
                Commit::Written
            } else {
                Commit::Refused
            };
            let result = if commit == Commit::Written {
                ac.commit(&mut session, (*compaction).clone())?
            } else {
                compaction.result
            };
            let critical = critical.then(|| Critical {
                tail_tokens: Conversation::from_messages(compaction.keep_messages.clone())
                    .total_tokens(&TokenCounter::default()),
                usable,
            });
            SweepOutcome::Compacted {
                compaction,
                result,
                commit,
                critical,
            }
        }
    };
    Ok(Sweep {
        before,
        limit,
        window,
        summary_budget: ac.config().summary_budget(),
        outcome,
    })
}

/// Tokens of the minimal tail of `messages` (the last-resort cut: `MIN_KEEP_MESSAGES`,
/// pair-safe).
fn minimal_tail_tokens(messages: &[Message], policy: TailPolicy) -> usize {
    let counter = TokenCounter::default();
    let tokens: Vec<usize> = messages.iter().map(|m| counter.count_message(m)).collect();
    mem_compact::split::plan_cut(messages, &tokens, policy, false, true).tail_tokens
}
