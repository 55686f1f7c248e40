//! [`AutoCompact`]: both designs behind one API — MewCode Layer-2 (seed 000 §2) and OMC
//! AutoCompact (seed 003) — with the failure modes real agents hit handled.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::NaiveDate;
use mem_core::{Conversation, Message, TokenCounter};
use mem_llm::{Llm, SummarizeRequest};
use mem_session::{COMPACT_SUMMARY_MARKER, SessionStore, SessionWriter, make_compact_boundary};
use serde::Serialize;
use serde_json::{Value, json};

use crate::coverage;
use crate::error::{Error, Result};
use crate::omc::{self, Aged, Cleaned};
use crate::split::{Cut, TailPolicy, plan_cut};
use crate::trim::{Spill, TrimStats, rounds, strip_spill_headers, trim_tool_results, write_spills};
use crate::{
    AUTO_COMPACT_SAFETY_MARGIN, KEEP_RECENT_TURNS, MANUAL_COMPACT_SAFETY_MARGIN,
    MAX_CONSECUTIVE_FAILURES, MIN_SUMMARIZE_PREFIX_TOKENS, SUMMARY_MAX_TOKENS,
};

/// OMC warning level (seed 003): `ok`, `warning`, `critical`, `compacted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WarningLevel {
    /// Under `warning_threshold` of the window.
    Ok,
    /// At or over `warning_threshold`, under `compact_threshold`.
    Warning,
    /// Over [`AutoCompactConfig::trigger_tokens`] (the seed triggers on tokens > window − margin;
    /// the OMC threshold is folded into the same count); after a compaction: still too big.
    Critical,
    /// A compaction just ran and the context fits.
    Compacted,
}

impl fmt::Display for WarningLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WarningLevel::Ok => "ok",
            WarningLevel::Warning => "warning",
            WarningLevel::Critical => "critical",
            WarningLevel::Compacted => "compacted",
        })
    }
}

/// Who asked for the compaction: decides the MewCode safety margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// The agent's check after a message: margin [`AUTO_COMPACT_SAFETY_MARGIN`] (13,000).
    #[default]
    Auto,
    /// A person (`mem compact sweep`, `/compact`): margin [`MANUAL_COMPACT_SAFETY_MARGIN`] (3,000).
    Manual,
}

impl Trigger {
    /// The safety margin in tokens.
    pub fn safety_margin(self) -> usize {
        match self {
            Trigger::Auto => AUTO_COMPACT_SAFETY_MARGIN,
            Trigger::Manual => MANUAL_COMPACT_SAFETY_MARGIN,
        }
    }
}

/// Settings of [`AutoCompact`]; `Default` gives the seed's values.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoCompactConfig {
    /// Model context window in tokens. Default 128,000.
    pub model_context_window: usize,
    /// Share of the window at which compaction triggers. Default 0.85.
    pub compact_threshold: f64,
    /// Share of the window at which the level becomes `warning`. Default 0.70.
    pub warning_threshold: f64,
    /// Remove consecutive identical tool calls from the summarised part. Default on.
    pub enable_deduplication: bool,
    /// Purge error results older than `max_age_rounds` from the summarised part. Default on.
    pub enable_purge_errors: bool,
    /// Age in rounds past which errors are purged. Default [`omc::DEFAULT_MAX_AGE_ROUNDS`].
    pub max_age_rounds: usize,
    /// How the verbatim tail is chosen. Default [`TailPolicy::MewCode`].
    pub tail: TailPolicy,
    /// Which MewCode safety margin applies. Default [`Trigger::Auto`].
    pub trigger: Trigger,
}

impl Default for AutoCompactConfig {
    fn default() -> Self {
        AutoCompactConfig {
            model_context_window: 128_000,
            compact_threshold: 0.85,
            warning_threshold: 0.70,
            enable_deduplication: true,
            enable_purge_errors: true,
            max_age_rounds: omc::DEFAULT_MAX_AGE_ROUNDS,
            tail: TailPolicy::MewCode,
            trigger: Trigger::Auto,
        }
    }
}

impl AutoCompactConfig {
    /// The token count at which compaction triggers: the lower of the OMC threshold
    /// (`compact_threshold × window`) and the MewCode one (`window − safety margin`). A
    /// conversation holding more tokens than this is compacted.
    ///
    /// The seed's margins (13,000 auto, 3,000 manual) were set for windows of 128,000 tokens and
    /// more; on a window of 13,000 tokens or less the auto margin would leave nothing, and every
    /// conversation would be critical from its first message. So the margin is at most half the
    /// window ([`Self::safety_margin`]): an 8,192-token window triggers over 4,096.
    pub fn trigger_tokens(&self) -> usize {
        let omc = (self.model_context_window as f64 * self.compact_threshold).floor() as usize;
        let mewcode = self.model_context_window - self.safety_margin();
        omc.min(mewcode)
    }

    /// The MewCode safety margin in force: the trigger's ([`Trigger::safety_margin`]), capped at
    /// half the window.
    pub fn safety_margin(&self) -> usize {
        self.trigger
            .safety_margin()
            .min(self.model_context_window / 2)
    }

    /// The most tokens a compaction's summary may hold: [`SUMMARY_MAX_TOKENS`], and never more
    /// than a fifth of [`Self::trigger_tokens`], so that the summary, a tail at its
    /// [`KEEP_RECENT_TOKENS`](crate::KEEP_RECENT_TOKENS) target and the injected block leave room
    /// for the conversation to grow before the next compaction. Earlier summaries are summarised
    /// again when carrying them would pass it; a summary still over it is cut at a line.
    pub fn summary_budget(&self) -> usize {
        SUMMARY_MAX_TOKENS.min(self.trigger_tokens() / 5)
    }

    /// The level for `tokens` (never `compacted`).
    pub fn warning_level(&self, tokens: usize) -> WarningLevel {
        if tokens > self.trigger_tokens() {
            WarningLevel::Critical
        } else if tokens as f64 >= self.model_context_window as f64 * self.warning_threshold {
            WarningLevel::Warning
        } else {
            WarningLevel::Ok
        }
    }
}

/// The result of a per-message check: cheap (token counts are cached per message).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Check {
    /// Tokens of the conversation.
    pub tokens: usize,
    /// The context window.
    pub window: usize,
    /// `tokens / window`.
    pub ratio: f64,
    /// The level.
    pub warning_level: WarningLevel,
    /// `true` when `tokens` is over [`AutoCompactConfig::trigger_tokens`].
    pub should_compact: bool,
}

/// The seed-003 result of [`AutoCompact::check_and_compact`], plus `paused` (beyond the seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactResult {
    /// Whether a compaction ran.
    pub triggered: bool,
    /// Tokens of the context before.
    pub tokens_before: usize,
    /// Tokens of the context after (equal to `tokens_before` when nothing ran).
    pub tokens_after: usize,
    /// Conversation messages no longer in the context (summarised, de-duplicated or purged).
    pub messages_removed: usize,
    /// The level after this call.
    pub warning_level: WarningLevel,
    /// Consecutive duplicate tool calls removed.
    pub deduplicated_count: usize,
    /// Old error results removed.
    pub error_removed_count: usize,
    /// Automatic compaction is paused for this session after
    /// [`MAX_CONSECUTIVE_FAILURES`] summariser failures in a row (beyond the seed).
    pub paused: bool,
}

impl CompactResult {
    /// Tokens saved: `tokens_before − tokens_after` (0 when the context grew).
    pub fn tokens_saved(&self) -> usize {
        self.tokens_before.saturating_sub(self.tokens_after)
    }

    fn untouched(tokens: usize, warning_level: WarningLevel, paused: bool) -> Self {
        CompactResult {
            triggered: false,
            tokens_before: tokens,
            tokens_after: tokens,
            messages_removed: 0,
            warning_level,
            deduplicated_count: 0,
            error_removed_count: 0,
            paused,
        }
    }

    /// The result as JSON, `tokens_saved` included, fields in the seed's order.
    pub fn to_json(&self) -> Value {
        json!({
            "triggered": self.triggered,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "tokens_saved": self.tokens_saved(),
            "messages_removed": self.messages_removed,
            "warning_level": self.warning_level,
            "deduplicated_count": self.deduplicated_count,
            "error_removed_count": self.error_removed_count,
            "paused": self.paused,
        })
    }
}

impl Serialize for CompactResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// Instructions and memories injected again after a compaction (seed 000 §2 trigger, §6 format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongTermMemory {
    /// The `# mewcodeMd` text.
    pub instructions: String,
    /// The `# autoMemory` text.
    pub memories: String,
    /// The `# currentDate`.
    pub date: NaiveDate,
}

/// A conversation being compacted: its messages, where its boundary goes, what to re-inject.
#[derive(Debug)]
pub struct CompactSession {
    /// The session id.
    pub id: String,
    /// The context the agent sends.
    pub conversation: Conversation,
    /// The project root: spilled tool results go under `<project>/.mewcode/session/tool-results/`.
    pub project: PathBuf,
    /// Injected again after each compaction, when set.
    pub long_term_memory: Option<LongTermMemory>,
    writer: Option<SessionWriter>,
    /// Length in bytes of the `.jsonl` that `conversation` reflects: a boundary is written only
    /// if the file still has it (see [`Error::Changed`]).
    read_len: Option<u64>,
}

impl CompactSession {
    /// A session without a writer: it can be checked and previewed, not compacted.
    pub fn read_only(id: impl Into<String>, conversation: Conversation, project: PathBuf) -> Self {
        CompactSession {
            id: id.into(),
            conversation,
            project,
            long_term_memory: None,
            writer: None,
            read_len: None,
        }
    }

    /// A session whose boundaries go to `writer`; `conversation` is taken to reflect the file as
    /// the writer last saw it (its meta's `jsonl_bytes`).
    pub fn new(writer: SessionWriter, conversation: Conversation, project: PathBuf) -> Self {
        CompactSession {
            id: writer.id().to_owned(),
            conversation,
            project,
            long_term_memory: None,
            read_len: Some(writer.meta().jsonl_bytes),
            writer: Some(writer),
        }
    }

    /// Resumes session `id` of `store` (from its last boundary) and opens it for appending.
    pub fn open(store: &SessionStore, id: &str, project: PathBuf) -> Result<Self> {
        let err = |source| Error::Session {
            session: id.to_owned(),
            source: Box::new(source),
        };
        let resumed = store.resume(id).map_err(err)?;
        let writer = store.open(id).map_err(err)?;
        let mut session = Self::new(writer, resumed.messages.into(), project);
        // The length the messages were read at: an append by another writer between the read
        // and any later boundary makes the commit refuse instead of hiding that message.
        session.read_len = Some(resumed.replay_offset + resumed.replay_bytes);
        Ok(session)
    }

    /// Resumes session `id` of `store` without opening it for writing (takes no write lock).
    pub fn open_read_only(store: &SessionStore, id: &str, project: PathBuf) -> Result<Self> {
        let resumed = store.resume(id).map_err(|source| Error::Session {
            session: id.to_owned(),
            source: Box::new(source),
        })?;
        Ok(Self::read_only(id, resumed.messages.into(), project))
    }

    /// Sets what is injected again after a compaction (builder style).
    pub fn with_long_term_memory(mut self, ltm: LongTermMemory) -> Self {
        self.long_term_memory = Some(ltm);
        self
    }

    /// `true` when the session can be written.
    pub fn is_writable(&self) -> bool {
        self.writer.is_some()
    }

    /// Appends `message` to the session file (when writable) and to the conversation. If another
    /// writer appended since this session was read, the message is still appended, but the next
    /// compaction refuses ([`Error::Changed`]): the conversation lacks the other message.
    pub fn append(&mut self, message: Message) -> Result<()> {
        if let Some(w) = &mut self.writer {
            let err = |source| Error::Session {
                session: self.id.clone(),
                source: Box::new(source),
            };
            let record = mem_session::SessionRecord::message(
                message.clone(),
                Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            );
            let in_step = match self.read_len {
                Some(len) => w
                    .append_records_if_len(len, std::slice::from_ref(&record))
                    .map_err(err)?,
                None => false,
            };
            if in_step {
                self.read_len = Some(w.meta().jsonl_bytes);
            } else {
                w.append_records(&[record]).map_err(err)?;
            }
        }
        self.conversation.push(message);
        Ok(())
    }
}

/// Why [`AutoCompact::prepare`] found nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Under the trigger and not forced.
    BelowThreshold,
    /// The part to summarise is under [`MIN_SUMMARIZE_PREFIX_TOKENS`]: not worth a summary.
    PrefixTooSmall {
        /// Its tokens.
        tokens: usize,
    },
    /// The last attempt left the context over the limit (`critical`) at `tokens`; compacting
    /// again before the conversation grew by [`MIN_SUMMARIZE_PREFIX_TOKENS`] would only repeat
    /// it. `force` tries anyway.
    WaitingForGrowth {
        /// Tokens of the context after the last attempt.
        tokens: usize,
    },
    /// Paused after [`MAX_CONSECUTIVE_FAILURES`] summariser failures in a row.
    Paused {
        /// Failures in a row.
        failures: usize,
    },
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::BelowThreshold => f.write_str("under the compaction threshold"),
            Skip::PrefixTooSmall { tokens } => write!(
                f,
                "the part to summarise holds {tokens} tokens, under {MIN_SUMMARIZE_PREFIX_TOKENS}: not worth a summary"
            ),
            Skip::WaitingForGrowth { tokens } => write!(
                f,
                "the last compaction left {tokens} tokens, still over the limit; waiting until the \
                 conversation grows by {MIN_SUMMARIZE_PREFIX_TOKENS} tokens (force to retry now)"
            ),
            Skip::Paused { failures } => write!(
                f,
                "automatic compaction is paused for this session after {failures} summariser failures in a row (force to retry)"
            ),
        }
    }
}

/// A compaction computed but not yet written: everything a dry run shows.
#[derive(Debug, Clone)]
pub struct Compaction {
    /// The result it will have once committed.
    pub result: CompactResult,
    /// The summary that replaces the prefix (preamble, summariser output, notes, appendix).
    pub summary: String,
    /// Who wrote the summary (`offline` or `<provider>:<model>`).
    pub engine: String,
    /// Set when a model's reply was unusable and the offline engine answered: why.
    pub fallback: Option<String>,
    /// The cut (indices into the conversation as it was).
    pub cut: Cut,
    /// The messages the boundary keeps verbatim (tool results trimmed).
    pub keep_messages: Vec<Message>,
    /// The context after the compaction, as the agent will send it.
    pub context: Vec<Message>,
    /// Tool results to write to files.
    pub spills: Vec<Spill>,
    /// What trimming did.
    pub trim: TrimStats,
    /// `true` when the tail was shrunk to the minimum because the normal one did not fit.
    pub tail_shrunk: bool,
    /// Items listed in the appendix because the summariser left them out.
    pub appended_items: usize,
    /// `true` when the summary was over its budget
    /// ([`AutoCompactConfig::summary_budget`], tokens) and was cut to fit: part of it is lost.
    pub summary_cut: bool,
}

/// What [`AutoCompact::prepare`] decided.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Nothing to do.
    Skipped {
        /// The result (not triggered).
        result: CompactResult,
        /// Why.
        reason: Skip,
    },
    /// A compaction is ready to commit.
    Ready(Box<Compaction>),
}

/// The text standing for the summariser's when a compaction only trims tool results (nothing
/// is summarised: every message is kept).
pub const TRIM_ONLY_NOTE: &str = "No messages were summarised this time: the context was over the \
     limit with too little to summarise, so only tool results were trimmed.";

/// Start of every summary this crate writes.
pub const SUMMARY_PREAMBLE: &str = "[mewmem compact]";

/// Automatic compaction (seed 003 `AutoCompact`) with the Layer-2 rules of seed 000 §2.
pub struct AutoCompact {
    config: AutoCompactConfig,
    llm: Arc<dyn Llm>,
    counter: TokenCounter,
    failures: HashMap<String, usize>,
    /// Per session: tokens of the context when the last attempt left it `critical`.
    stuck: HashMap<String, usize>,
}

impl fmt::Debug for AutoCompact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoCompact")
            .field("config", &self.config)
            .field("summarizer", &self.llm.engine_name(mem_llm::Job::Summarize))
            .field("failures", &self.failures)
            .finish()
    }
}

impl AutoCompact {
    /// Compaction with `config`, summarising through `llm` (the offline engine by default in the
    /// CLI), counting tokens with the default encoding.
    pub fn new(config: AutoCompactConfig, llm: Arc<dyn Llm>) -> Self {
        AutoCompact {
            config,
            llm,
            counter: TokenCounter::default(),
            failures: HashMap::new(),
            stuck: HashMap::new(),
        }
    }

    /// Uses `counter` to count tokens (builder style).
    pub fn with_counter(mut self, counter: TokenCounter) -> Self {
        self.counter = counter;
        self
    }

    /// The settings.
    pub fn config(&self) -> &AutoCompactConfig {
        &self.config
    }

    /// Summariser failures in a row for `session`.
    pub fn consecutive_failures(&self, session: &str) -> usize {
        self.failures.get(session).copied().unwrap_or(0)
    }

    /// `true` when automatic compaction is paused for `session`.
    pub fn is_paused(&self, session: &str) -> bool {
        self.consecutive_failures(session) >= MAX_CONSECUTIVE_FAILURES
    }

    /// The check to run after every appended message: counts only messages not counted yet.
    pub fn check(&self, conversation: &Conversation) -> Check {
        let tokens = conversation.total_tokens(&self.counter);
        let window = self.config.model_context_window;
        Check {
            tokens,
            window,
            ratio: if window == 0 {
                f64::INFINITY
            } else {
                tokens as f64 / window as f64
            },
            warning_level: self.config.warning_level(tokens),
            should_compact: tokens > self.config.trigger_tokens(),
        }
    }

    /// Decides and computes a compaction without writing anything (the dry run). A summariser
    /// failure is counted towards the pause and returned.
    ///
    /// `force` skips the threshold (and the pause); `since_last_user` keeps the tail from the
    /// last user request.
    pub async fn prepare(
        &mut self,
        session: &CompactSession,
        force: bool,
        since_last_user: bool,
    ) -> Result<Outcome> {
        let check = self.check(&session.conversation);
        let tokens_before = check.tokens;
        let skip = |reason: Skip, paused: bool| Outcome::Skipped {
            result: CompactResult::untouched(tokens_before, check.warning_level, paused),
            reason,
        };
        let failures = self.consecutive_failures(&session.id);
        if !force && failures >= MAX_CONSECUTIVE_FAILURES {
            tracing::warn!(
                session = %session.id,
                failures,
                "automatic compaction paused after repeated summariser failures"
            );
            return Ok(skip(Skip::Paused { failures }, true));
        }
        if !force && !check.should_compact {
            return Ok(skip(Skip::BelowThreshold, false));
        }
        if let Some(&stuck) = self.stuck.get(&session.id)
            && !force
            && tokens_before < stuck + MIN_SUMMARIZE_PREFIX_TOKENS
        {
            return Ok(skip(Skip::WaitingForGrowth { tokens: stuck }, false));
        }

        let original = session.conversation.messages();
        let ltm_tokens = session.long_term_memory.as_ref().map_or(0, |l| {
            self.counter.count(&mem_core::render_long_term_memory(
                &l.instructions,
                &l.memories,
                l.date,
            )) + mem_core::MESSAGE_OVERHEAD_TOKENS
        });
        let limit = self.config.trigger_tokens();

        // The cut is planned on the tokens the messages hold now: what the summary replaces and
        // what the tail keeps are weighed as they are, not as trimming would leave them
        // (trimming shrinks old results first, so a tail measured after it would reach back over
        // nearly everything and leave no prefix to summarise).
        let original_tokens: Vec<usize> = (0..original.len())
            .map(|i| session.conversation.message_tokens(&self.counter, i))
            .collect();
        let prefix_of =
            |cut: &Cut| -> usize { cut.prefix.iter().map(|&i| original_tokens[i]).sum() };
        // What the new context holds besides the summary: system messages, the tail (as trimmed),
        // the injected block.
        // The summary is counted at its budget: it is not written yet, and it never holds more.
        let summary_budget = self.config.summary_budget();
        let fixed = |cut: &Cut, tokens: &[usize]| {
            cut.system.iter().map(|&i| tokens[i]).sum::<usize>()
                + cut.tail.iter().map(|&i| tokens[i]).sum::<usize>()
                + ltm_tokens
                + summary_budget
        };
        let over = check.should_compact;
        let mut cut = plan_cut(
            original,
            &original_tokens,
            self.config.tail,
            since_last_user,
            false,
        );
        let mut plan = self.trimmed(session, KEEP_RECENT_TURNS);
        let mut tail_shrunk = false;
        if fixed(&cut, &plan.1) > limit || (over && prefix_of(&cut) < MIN_SUMMARIZE_PREFIX_TOKENS) {
            // The kept part alone would not fit, or over the limit the normal tail leaves too
            // little to summarise: shrink the tail to the minimum and cut every big tool result
            // in it. Reported `critical` below if even that does not fit.
            cut = plan_cut(original, &original_tokens, self.config.tail, false, true);
            plan = self.trimmed(session, 0);
            tail_shrunk = true;
        }
        // The guard weighs what the summary replaces: the prefix as it was, before trimming.
        let prefix_tokens = prefix_of(&cut);
        let mut trim_only = false;
        if prefix_tokens < MIN_SUMMARIZE_PREFIX_TOKENS {
            // Over the limit with nothing worth summarising: a boundary that only trims tool
            // results (every message kept) when that frees room; otherwise nothing to do.
            let everything = crate::split::classify(original, &original_tokens, 0);
            let mut whole = self.trimmed(session, KEEP_RECENT_TURNS);
            if fixed(&everything, &whole.1) > limit {
                whole = self.trimmed(session, 0);
            }
            let frees = fixed(&everything, &whole.1) < fixed(&everything, &original_tokens);
            if !over || !frees {
                let level = if over || fixed(&cut, &plan.1) > limit {
                    WarningLevel::Critical
                } else {
                    check.warning_level
                };
                if over {
                    self.stuck.insert(session.id.clone(), tokens_before);
                }
                return Ok(Outcome::Skipped {
                    result: CompactResult::untouched(tokens_before, level, false),
                    reason: Skip::PrefixTooSmall {
                        tokens: prefix_tokens,
                    },
                });
            }
            cut = everything;
            plan = whole;
            trim_only = true;
        }
        let (trimmed, _) = plan;

        // The part to summarise, cleaned as OMC does.
        let round_of = rounds(&trimmed.messages);
        let last_round = round_of.last().copied().unwrap_or(0);
        let mut prefix: Vec<Aged> = cut
            .prefix
            .iter()
            .map(|&i| {
                // Spill files of the prefix are never written: the summariser sees no path.
                let mut message = trimmed.messages[i].clone();
                strip_spill_headers(&mut message);
                Aged {
                    message,
                    age: last_round - round_of[i],
                }
            })
            .collect();
        let mut cleaned = Cleaned::default();
        if self.config.enable_deduplication {
            omc::deduplicate(&mut prefix, &mut cleaned);
        }
        if self.config.enable_purge_errors {
            let last = omc::last_error_id(original);
            omc::purge_errors(
                &mut prefix,
                self.config.max_age_rounds,
                last.as_deref(),
                &mut cleaned,
            );
        }
        let request = SummarizeRequest {
            messages: prefix.into_iter().map(|a| a.message).collect(),
        };
        // Earlier summaries are carried forward; when carrying them would pass the budget, they
        // are summarised again together with the prefix (a summary is text: any summariser
        // reads it as a message).
        let previous: Vec<String> = cut
            .summaries
            .iter()
            .map(|&i| strip_preamble(&original[i].text_content()))
            .collect();
        let mut notes = Vec::new();
        if cleaned.deduplicated_count > 0 {
            notes.push(omc::dedup_note(cleaned.deduplicated_count));
        }
        if cleaned.error_removed_count > 0 {
            notes.push(omc::purge_note(cleaned.error_removed_count));
        }
        // What the summary must keep: the requests, files and commands of the prefix, and the
        // errors the purge left (purged errors are counted by the note, not listed).
        let prefix_messages: Vec<Message> =
            cut.prefix.iter().map(|&i| original[i].clone()).collect();
        let mut facts = coverage::facts(&prefix_messages);
        facts.errors = coverage::facts(&request.messages).errors;
        let (reply, summary, missing, summary_cut) = if trim_only {
            let reply = mem_llm::Reply {
                value: mem_llm::Summary {
                    text: TRIM_ONLY_NOTE.to_owned(),
                },
                engine: "none (trim only)".to_owned(),
                fallback: None,
                dropped: Vec::new(),
            };
            let summary = compose(cut.prefix.len(), &previous, &reply.value.text, &notes, None);
            let summary = mem_core::secrets::redact(&summary).text;
            (reply, summary, coverage::Facts::default(), false)
        } else {
            let reply = self.summarize(&session.id, &request).await?;
            let (mut summary, mut missing) = compose_covered(
                cut.prefix.len(),
                &previous,
                &reply.value.text,
                &notes,
                &facts,
            );
            let mut reply = reply;
            if !previous.is_empty() && self.counter.count(&summary) > summary_budget {
                let mut again = SummarizeRequest {
                    messages: previous.iter().map(|p| Message::user(p.clone())).collect(),
                };
                again.messages.extend(request.messages.iter().cloned());
                reply = self.summarize(&session.id, &again).await?;
                (summary, missing) =
                    compose_covered(cut.prefix.len(), &[], &reply.value.text, &notes, &facts);
            }
            // The summary is persisted in the boundary and re-injected: the one secret filter
            // runs on all of it (the summariser's text, earlier summaries, the commands and
            // files of the appendix), before it is cut so no half secret is left.
            let summary = mem_core::secrets::redact(&summary).text;
            let (summary, cut) = fit_to_budget(summary, summary_budget, &self.counter);
            (reply, summary, missing, cut)
        };
        // The new context: system messages, the summary, the tail; instructions and memories
        // injected again.
        let leading_system = original
            .iter()
            .take_while(|m| m.role == mem_core::Role::System)
            .count();
        let mut keep_messages = Vec::new();
        let mut context = Vec::new();
        for &i in &cut.system {
            context.push(trimmed.messages[i].clone());
        }
        let summary_message =
            Message::user(summary.clone()).with_metadata(COMPACT_SUMMARY_MARKER, Value::Bool(true));
        context.insert(leading_system.min(context.len()), summary_message);
        for &i in cut.system.iter().filter(|&&i| i >= leading_system) {
            keep_messages.push(trimmed.messages[i].clone());
        }
        for &i in &cut.tail {
            keep_messages.push(trimmed.messages[i].clone());
            context.push(trimmed.messages[i].clone());
        }
        let mut conversation = Conversation::from_messages(context);
        if let Some(l) = &session.long_term_memory {
            conversation.inject_long_term_memory(&l.instructions, &l.memories, l.date);
        }
        let tokens_after = conversation.total_tokens(&self.counter);
        let warning_level = if tokens_after > limit {
            WarningLevel::Critical
        } else {
            WarningLevel::Compacted
        };
        // Only the spills of results still in the context are written.
        let kept_text: String = keep_messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                mem_core::ContentBlock::ToolResult { content, .. } => Some(content.text()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let spills: Vec<Spill> = trimmed
            .spills
            .into_iter()
            .filter(|s| kept_text.contains(&s.relative_path.display().to_string()))
            .collect();
        Ok(Outcome::Ready(Box::new(Compaction {
            result: CompactResult {
                triggered: true,
                tokens_before,
                tokens_after,
                messages_removed: cut.prefix.len(),
                warning_level,
                deduplicated_count: cleaned.deduplicated_count,
                error_removed_count: cleaned.error_removed_count,
                paused: false,
            },
            summary,
            engine: reply.engine,
            fallback: reply.fallback,
            cut,
            keep_messages,
            context: conversation.into_messages(),
            spills,
            trim: trimmed.stats,
            tail_shrunk,
            appended_items: missing.len(),
            summary_cut,
        })))
    }

    /// Writes a prepared compaction: spilled results (atomically), then the boundary (one
    /// append, on disk when this returns), then swaps the session's conversation.
    pub fn commit(
        &mut self,
        session: &mut CompactSession,
        compaction: Compaction,
    ) -> Result<CompactResult> {
        let Some(writer) = session.writer.as_mut() else {
            return Err(Error::ReadOnly {
                session: session.id.clone(),
            });
        };
        write_spills(&session.project, &compaction.spills)?;
        let mut record = make_compact_boundary(
            compaction.summary,
            compaction.keep_messages,
            Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
        let mut stats = compaction.result.to_json();
        if let Value::Object(map) = &mut stats {
            map.insert("engine".to_owned(), Value::String(compaction.engine));
            map.insert(
                "trigger".to_owned(),
                serde_json::to_value(self.config.trigger).unwrap_or(Value::Null),
            );
        }
        record.extra.insert(BOUNDARY_STATS_KEY.to_owned(), stats);
        let err = |source| Error::Session {
            session: session.id.clone(),
            source: Box::new(source),
        };
        match session.read_len {
            Some(len) => {
                if !writer
                    .append_records_if_len(len, std::slice::from_ref(&record))
                    .map_err(err)?
                {
                    return Err(Error::Changed {
                        session: session.id.clone(),
                    });
                }
            }
            None => writer.append_records(&[record]).map_err(err)?,
        }
        session.read_len = Some(writer.meta().jsonl_bytes);
        session.conversation = Conversation::from_messages(compaction.context);
        let result = compaction.result;
        if result.warning_level == WarningLevel::Critical {
            self.stuck.insert(session.id.clone(), result.tokens_after);
        } else {
            self.stuck.remove(&session.id);
        }
        Ok(result)
    }

    /// Seed 003 `check_and_compact(session, force, since_last_user)`: checks, and when over the
    /// threshold (or forced) summarises the prefix, writes the boundary and swaps the context.
    ///
    /// Errors: the summariser's (nothing written; counted towards the pause), the session's.
    pub async fn check_and_compact(
        &mut self,
        session: &mut CompactSession,
        force: bool,
        since_last_user: bool,
    ) -> Result<CompactResult> {
        match self.prepare(session, force, since_last_user).await? {
            Outcome::Skipped { result, .. } => Ok(result),
            Outcome::Ready(c) => self.commit(session, *c),
        }
    }

    /// Appends `message` to the session and runs the automatic check: the call an agent makes
    /// after every message, tool results included (a tool loop has no user turns to wait for).
    pub async fn on_message(
        &mut self,
        session: &mut CompactSession,
        message: Message,
    ) -> Result<CompactResult> {
        session.append(message)?;
        self.check_and_compact(session, false, false).await
    }

    /// Calls the summariser; a failure is counted towards the pause, a success resets the count.
    async fn summarize(
        &mut self,
        session: &str,
        request: &SummarizeRequest,
    ) -> Result<mem_llm::Reply<mem_llm::Summary>> {
        match self.llm.summarize(request).await {
            Ok(r) => {
                self.failures.remove(session);
                Ok(r)
            }
            Err(source) => {
                let n = self.failures.entry(session.to_owned()).or_insert(0);
                *n += 1;
                tracing::warn!(session = %session, failures = *n, "summariser failed: {source}");
                Err(Error::Summarize {
                    session: session.to_owned(),
                    consecutive_failures: *n,
                    source: Box::new(source),
                })
            }
        }
    }

    /// Trims the session's tool results and counts the tokens of the trimmed messages (counts of
    /// untouched messages come from the conversation's cache).
    fn trimmed(
        &self,
        session: &CompactSession,
        recent: usize,
    ) -> (crate::trim::Trimmed, Vec<usize>) {
        let conv = &session.conversation;
        let trimmed = trim_tool_results(conv.messages(), &session.id, recent);
        let tokens = trimmed
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if *m == conv.messages()[i] {
                    conv.message_tokens(&self.counter, i)
                } else {
                    self.counter.count_message(m)
                }
            })
            .collect();
        (trimmed, tokens)
    }
}

/// Key of the `compact_boundary` record's extra field holding the [`CompactResult`], the engine
/// and the trigger (read by `mem compact stats`).
pub const BOUNDARY_STATS_KEY: &str = "mewmem_compact";

/// The summary: preamble, earlier summaries carried forward, the summariser's text, the OMC
/// notes, and the appendix of what the summariser left out (when given).
fn compose(
    replaced: usize,
    previous: &[String],
    text: &str,
    notes: &[String],
    appendix: Option<&str>,
) -> String {
    let mut summary = format!(
        "{SUMMARY_PREAMBLE} This summary replaces {replaced} earlier messages of this conversation. \
         It is a record of what happened, not a new request: the requests it lists were \
         made before this point, and the messages after it show where the work stands.\n\n"
    );
    for p in previous {
        summary.push_str(p.trim_end());
        summary.push_str("\n\n");
    }
    summary.push_str(text.trim_end());
    summary.push('\n');
    if !notes.is_empty() {
        summary.push('\n');
        summary.push_str(&notes.join("\n"));
        summary.push('\n');
    }
    if let Some(a) = appendix.filter(|a| !a.is_empty()) {
        summary.push('\n');
        summary.push_str(a);
    }
    summary
}

/// [`compose`] with the appendix of the `facts` the rest does not mention; also returns them.
fn compose_covered(
    replaced: usize,
    previous: &[String],
    text: &str,
    notes: &[String],
    facts: &coverage::Facts,
) -> (String, coverage::Facts) {
    let body = compose(replaced, previous, text, notes, None);
    let missing = coverage::missing(facts, &body);
    let appendix = coverage::appendix(&missing);
    (
        compose(replaced, previous, text, notes, Some(&appendix)),
        missing,
    )
}

/// `summary` if it holds at most `budget` tokens; otherwise its first lines that fit, and a line
/// saying it was cut. The flag is `true` when it was cut.
fn fit_to_budget(summary: String, budget: usize, counter: &TokenCounter) -> (String, bool) {
    let tokens = counter.count(&summary);
    if tokens <= budget {
        return (summary, false);
    }
    let chars = summary.chars().count();
    let mut keep = chars * budget / tokens.max(1);
    loop {
        let head = crate::trim::head(&summary, keep);
        let head = head.rfind('\n').map_or(head, |i| &head[..i]);
        let out = format!(
            "{head}\n[mewmem: summary cut to its budget of {budget} tokens; {} characters left out]\n",
            chars - head.chars().count()
        );
        if keep == 0 || counter.count(&out) <= budget {
            return (out, true);
        }
        keep = keep * 9 / 10;
    }
}

fn strip_preamble(text: &str) -> String {
    if text.starts_with(SUMMARY_PREAMBLE) {
        match text.find("\n\n") {
            Some(i) => text[i + 2..].to_owned(),
            None => String::new(),
        }
    } else {
        text.to_owned()
    }
}
