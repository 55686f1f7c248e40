//! Extraction after a turn (seed 000 §3 "提取流程"): only the messages after the last extraction
//! (the count persisted per session), one model call per turn with both files and the new
//! messages, the result cleaned (secrets withheld, one-off details dropped), split into the two
//! files and merged under their locks.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, NaiveDate, Utc};
use mem_core::secrets::redact;
use mem_core::{ContentBlock, Message, TokenCounter, ToolResultContent};
use mem_instructions::Scope;
use mem_llm::{CurrentEntry, EntryChange, ExtractRequest, Job, Llm, MemoryCategory};
use mem_session::SessionStore;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clean::{Cleaned, clean};
use crate::error::Result;
use crate::fsutil::{ensure_dir, lock, read_json, write_json};
use crate::id::EntryId;
use crate::merge::{Candidate, FileReport, ModelChange, merge_with_changes};
use crate::scope::{names_project_scope, states_project_fact};
use crate::store::AutoMemory;

/// The folder of extraction state: `<project>/.mewcode/auto-memory/`.
pub const STATE_DIR: &str = "auto-memory";

/// Default daily token budget for extraction prompts to a model (tokens, o200k_base): 200,000.
/// The offline engine costs nothing and is not counted.
pub const DEFAULT_DAILY_TOKEN_BUDGET: usize = 200_000;

/// Default bound of one extraction prompt's messages, in tokens: 24,000. Over it, old tool
/// output is trimmed first, then the oldest messages are left out.
pub const DEFAULT_MAX_PROMPT_TOKENS: usize = 24_000;

/// How an extraction runs.
#[derive(Debug, Clone)]
pub struct ExtractOptions {
    /// The time written as the entries' confirmation date and used for the daily budget.
    pub now: DateTime<Utc>,
    /// Compute and report, write nothing (files, dates and the per-session count unchanged).
    pub dry_run: bool,
    /// Tokens a model may be sent for extraction per UTC day (all sessions of the project).
    pub daily_token_budget: usize,
    /// Bound of one prompt's messages, in tokens.
    pub max_prompt_tokens: usize,
}

impl ExtractOptions {
    /// Defaults at `now`.
    pub fn new(now: DateTime<Utc>) -> Self {
        ExtractOptions {
            now,
            dry_run: false,
            daily_token_budget: DEFAULT_DAILY_TOKEN_BUDGET,
            max_prompt_tokens: DEFAULT_MAX_PROMPT_TOKENS,
        }
    }
}

/// What one extraction did.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractReport {
    /// The session.
    pub session: String,
    /// Messages of the session in all.
    pub messages_total: usize,
    /// Messages read this time (after the last extraction).
    pub messages_new: usize,
    /// Set when no model call was made: why (nothing new, nothing the user said, budget).
    pub skipped: Option<String>,
    /// Who answered: `offline` or `<provider>:<model>`.
    pub engine: String,
    /// Set when the model's reply was unusable and the offline engine answered: why.
    pub fallback: Option<String>,
    /// Parts of the model's reply dropped (ids it invented, entries of the wrong type...).
    pub dropped: Vec<String>,
    /// Tokens sent to a model (0 for the offline engine).
    pub tokens_spent: usize,
    /// Tokens spent today (this project) including this call, and the daily budget.
    pub tokens_today: usize,
    /// The daily budget in tokens.
    pub daily_budget: usize,
    /// Secrets withheld from the prompt before it was sent to a hosted model; `None` when no
    /// prompt was sent (the offline engine, or no call made).
    pub withheld_from_prompt: Option<usize>,
    /// Secrets withheld from the extracted entries.
    pub withheld: usize,
    /// Extracted entries dropped as one-off details (text and reason).
    pub one_offs: Vec<(String, String)>,
    /// Extracted entries dropped because they were mostly a secret.
    pub secret_entries: usize,
    /// Per file: added, confirmed, updated, removed, consolidated, evicted.
    pub files: Vec<FileReport>,
    /// Problems met in the files (path:line: message).
    pub warnings: Vec<String>,
    /// Nothing was written.
    pub dry_run: bool,
}

/// `<project>/.mewcode/auto-memory/state.json`: per-session counts and tokens spent per day.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    #[serde(default)]
    version: u32,
    /// Messages already extracted, per session id.
    #[serde(default)]
    sessions: BTreeMap<String, usize>,
    /// Tokens sent to a model per UTC day (`YYYY-MM-DD`); only the last 31 days are kept.
    #[serde(default)]
    tokens: BTreeMap<String, usize>,
}

fn state_dir(auto: &AutoMemory) -> PathBuf {
    auto.dir(Scope::Project).join(STATE_DIR)
}

fn day(now: DateTime<Utc>) -> String {
    now.date_naive().format("%Y-%m-%d").to_string()
}

fn read_state(auto: &AutoMemory) -> Result<State> {
    Ok(read_json(&state_dir(auto).join("state.json"))?.unwrap_or_default())
}

/// Changes the state under its lock (`state.json.lock`), re-reading it first.
fn update_state(auto: &AutoMemory, change: impl FnOnce(&mut State)) -> Result<()> {
    let dir = state_dir(auto);
    ensure_dir(&dir)?;
    let path = dir.join("state.json");
    let _lock = lock(&dir.join(".state.json.lock"))?;
    let mut state: State = read_json(&path)?.unwrap_or_default();
    change(&mut state);
    state.version = 1;
    write_json(&path, &state)
}

/// Messages already extracted from `session` (0 when never).
///
/// # Errors
/// The state file cannot be read or is not valid.
pub fn extracted_count(auto: &AutoMemory, session: &str) -> Result<usize> {
    Ok(read_state(auto)?
        .sessions
        .get(session)
        .copied()
        .unwrap_or(0))
}

/// The messages of a session's whole history, in order (compact boundaries' kept copies are not
/// counted twice).
///
/// # Errors
/// The session cannot be read.
pub fn session_messages(sessions: &SessionStore, id: &str) -> Result<Vec<Message>> {
    let (records, _) = sessions.read_records(id)?;
    Ok(mem_session::message_records(records))
}

/// `true` when the user said something in `messages`: a user text that is neither harness meta
/// nor client-injected context ([`mem_core::speech::user_speech_of`]).
fn user_spoke(messages: &[Message]) -> bool {
    messages
        .iter()
        .any(|m| mem_core::speech::user_speech_of(m).is_some())
}

/// Redacts every string of a JSON value; returns the number of secrets withheld.
fn redact_json(value: &mut Value) -> usize {
    match value {
        Value::String(s) => {
            let r = redact(s);
            let n = r.withheld();
            if n > 0 {
                *s = r.text;
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        Value::Object(map) => map.values_mut().map(redact_json).sum(),
        _ => 0,
    }
}

/// The messages with every secret replaced by `[REDACTED]` (text, tool inputs, tool results,
/// thinking): what may be sent to a model. Returns the count withheld.
pub fn redact_messages(messages: &[Message]) -> (Vec<Message>, usize) {
    let mut out = messages.to_vec();
    let mut withheld = 0;
    for message in &mut out {
        for block in &mut message.content {
            let mut value = match serde_json::to_value(&*block) {
                Ok(v) => v,
                Err(_) => continue,
            };
            let n = redact_json(&mut value);
            if n > 0
                && let Ok(b) = serde_json::from_value::<ContentBlock>(value)
            {
                *block = b;
                withheld += n;
            }
        }
    }
    (out, withheld)
}

/// Bounds `messages` to `max_tokens`: old tool results are replaced by a one-line note first
/// (oldest first, the last 4 messages kept), then the oldest messages are left out. Returns
/// the messages kept and their tokens (as [`TokenCounter::count_message`] counts them).
pub fn bound_messages(
    messages: Vec<Message>,
    max_tokens: usize,
    counter: &TokenCounter,
) -> (Vec<Message>, usize) {
    let mut messages = messages;
    // Each message counted once; a trimmed one is recounted once.
    let mut counts: Vec<usize> = messages.iter().map(|m| counter.count_message(m)).collect();
    let mut total: usize = counts.iter().sum();
    if total <= max_tokens {
        return (messages, total);
    }
    let keep_from = messages.len().saturating_sub(4);
    for (message, count) in messages.iter_mut().zip(counts.iter_mut()).take(keep_from) {
        if total <= max_tokens {
            break;
        }
        let mut trimmed = false;
        for block in &mut message.content {
            if let ContentBlock::ToolResult { content, .. } = block {
                let chars = content.text().chars().count();
                *content =
                    ToolResultContent::Text(format!("[tool output trimmed: {chars} characters]"));
                trimmed = true;
            }
        }
        if trimmed {
            let after = counter.count_message(message);
            total = total - *count + after;
            *count = after;
        }
    }
    // Then the oldest messages go, at least one kept: one drain instead of a shift per message.
    let mut drop = 0;
    while total > max_tokens && messages.len() - drop > 1 {
        total -= counts[drop];
        drop += 1;
    }
    messages.drain(..drop);
    (messages, total)
}

/// Extracts memories from the messages of `session` after the last extraction, through `llm`,
/// into both `memories.md` files of `auto`.
///
/// The agent spawns this at the end of a turn (`tokio::spawn`); it never blocks the turn.
/// Holds the session's extraction lock (`auto-memory/.<session>.lock`) throughout, so a second
/// process extracting the same session waits, then finds nothing new. The per-session count is
/// advanced after the files are written: a crash in between extracts the same messages again,
/// and merging makes that add nothing twice.
///
/// Every message is redacted ([`redact_messages`]) before the prompt is built, and every entry
/// is cleaned ([`clean`]) before it is written. A turn without anything the user said makes no
/// call. With a model, a call that would pass the daily token budget is not made (the count is
/// not advanced: the messages wait for the next day).
///
/// # Errors
/// The session or a file cannot be read or written; a transport error of the model.
pub async fn extract_session(
    auto: &AutoMemory,
    sessions: &SessionStore,
    session: &str,
    llm: &dyn Llm,
    options: &ExtractOptions,
) -> Result<ExtractReport> {
    let dir = state_dir(auto);
    ensure_dir(&dir)?;
    let _session_lock = lock(&dir.join(format!(".{session}.lock")))?;
    let state = read_state(auto)?;
    let extracted = state.sessions.get(session).copied().unwrap_or(0);
    // Only the messages after the count are read (backwards from the end of the session), so
    // an extraction after every turn costs the new messages, not the session.
    let (total, new) = sessions.messages_after(session, extracted)?;
    let done = extracted.min(total);
    let today = day(options.now);
    let spent_today = state.tokens.get(&today).copied().unwrap_or(0);
    let engine = llm.engine_name(Job::Extract);
    let mut report = ExtractReport {
        session: session.to_owned(),
        messages_total: total,
        messages_new: total - done,
        skipped: None,
        engine: engine.clone(),
        fallback: None,
        dropped: Vec::new(),
        tokens_spent: 0,
        tokens_today: spent_today,
        daily_budget: options.daily_token_budget,
        withheld_from_prompt: None,
        withheld: 0,
        one_offs: Vec::new(),
        secret_entries: 0,
        files: Vec::new(),
        warnings: Vec::new(),
        dry_run: options.dry_run,
    };
    let new = &new[..];
    if new.is_empty() {
        report.skipped = Some("no new messages since the last extraction".to_owned());
        return Ok(report);
    }
    if !user_spoke(new) {
        report.skipped = Some("nothing the user said in the new messages".to_owned());
        if !options.dry_run {
            update_state(auto, |s| {
                s.sessions.insert(session.to_owned(), total);
            })?;
        }
        return Ok(report);
    }

    let (user_doc, w1) = auto.read(Scope::User)?;
    let (project_doc, w2) = auto.read(Scope::Project)?;
    report.warnings.extend(w1.into_iter().chain(w2));
    let current_memories = [user_doc.render(), project_doc.render()]
        .iter()
        .map(|t| t.trim_end().to_owned())
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let counter = TokenCounter::default();
    let (redacted, withheld) = redact_messages(new);
    let current_memories = redact(&current_memories);
    let prompt_withheld = withheld + current_memories.withheld();
    // The offline engine needs no token count: when even the byte bound of the messages fits,
    // they are kept whole without loading the BPE vocabulary (~75 ms per process).
    let (bounded, messages_tokens) = if engine == "offline"
        && redacted
            .iter()
            .map(mem_core::max_message_tokens)
            .sum::<usize>()
            <= options.max_prompt_tokens
    {
        (redacted, 0)
    } else {
        bound_messages(redacted, options.max_prompt_tokens, &counter)
    };
    // The current entries, numbered 1.. (user's file first) for a model to UPDATE / DELETE by
    // number; the number maps back to the file and entry id read here.
    let mut numbered: Vec<(u32, Scope, EntryId)> = Vec::new();
    let mut entries = Vec::new();
    for (scope, doc) in [(Scope::User, &user_doc), (Scope::Project, &project_doc)] {
        for e in doc.entries() {
            let n = u32::try_from(numbered.len() + 1).unwrap_or(u32::MAX);
            numbered.push((n, scope, e.id));
            entries.push(CurrentEntry {
                id: n,
                category: e.category,
                text: redact(&e.text).text,
            });
        }
    }
    let request = ExtractRequest {
        current_memories: current_memories.text,
        entries,
        messages: bounded,
    };
    let is_model = engine != "offline";
    if is_model {
        // The memories as the prompt shows them: numbered entries, or the text when there
        // are none ([`mem_llm::prompt::extract_request`]).
        let shown = if request.entries.is_empty() {
            counter.count(&request.current_memories)
        } else {
            counter.count(&mem_llm::prompt::render_entries(&request.entries))
        };
        let prompt_tokens = shown + messages_tokens;
        if spent_today + prompt_tokens > options.daily_token_budget {
            report.skipped = Some(format!(
                "the daily extraction budget would be passed ({spent_today} + {prompt_tokens} > {} tokens); the messages wait",
                options.daily_token_budget
            ));
            return Ok(report);
        }
        report.tokens_spent = prompt_tokens;
        report.withheld_from_prompt = Some(prompt_withheld);
    }
    let reply = llm.extract(&request).await?;
    if is_model {
        // The reply: its new entries and the new texts of its updates.
        report.tokens_spent += counter.count(&reply.value.to_markdown())
            + reply
                .value
                .changes
                .iter()
                .map(|c| match c {
                    EntryChange::Update { text, .. } => counter.count(text),
                    EntryChange::Delete { .. } => 0,
                })
                .sum::<usize>();
    }
    report.tokens_today = spent_today + report.tokens_spent;
    report.engine = reply.engine.clone();
    report.fallback = reply.fallback.clone();
    report.dropped = reply.dropped.clone();

    // A model's UPDATE / DELETE answers, mapped back to their files; an id that was not in the
    // prompt is dropped and reported (the engine checks too; this guards any `Llm`).
    let mut changes_by_scope: BTreeMap<u8, Vec<ModelChange>> = BTreeMap::new();
    for change in &reply.value.changes {
        let Some((_, scope, id)) = numbered.iter().find(|(n, _, _)| *n == change.id()) else {
            report.dropped.push(format!(
                "change of id {}: no such entry (invented by the model)",
                change.id()
            ));
            continue;
        };
        let text = match change {
            EntryChange::Delete { .. } => None,
            EntryChange::Update { text, .. } => match clean(text) {
                Cleaned::Keep { text, withheld } => {
                    report.withheld += withheld;
                    Some(text)
                }
                Cleaned::Secret { withheld } => {
                    report.withheld += withheld;
                    report.secret_entries += 1;
                    continue;
                }
                Cleaned::OneOff(reason) => {
                    report.one_offs.push((text.clone(), reason.to_owned()));
                    continue;
                }
                Cleaned::Empty => continue,
            },
        };
        changes_by_scope
            .entry(u8::from(*scope == Scope::Project))
            .or_default()
            .push(ModelChange {
                id: *id,
                model_id: change.id(),
                text,
            });
    }

    // Clean, then split by file.
    let mut by_scope: BTreeMap<u8, Vec<Candidate>> = BTreeMap::new();
    let mut corrections = Vec::new();
    for category in MemoryCategory::ALL {
        for text in reply.value.get(category) {
            match clean(text) {
                Cleaned::Keep { text, withheld } => {
                    report.withheld += withheld;
                    if category == MemoryCategory::Correction {
                        corrections.push(text.clone());
                    }
                    // The words name the scope first ("in this project" -> the project's
                    // file; a fact of this project, "we use PostgreSQL, not MySQL", too),
                    // then the category.
                    let project = !category.is_user_level()
                        || names_project_scope(&text)
                        || states_project_fact(&text);
                    by_scope
                        .entry(u8::from(project))
                        .or_default()
                        .push(Candidate { category, text });
                }
                Cleaned::Secret { withheld } => {
                    report.withheld += withheld;
                    report.secret_entries += 1;
                }
                Cleaned::OneOff(reason) => {
                    report.one_offs.push((text.clone(), reason.to_owned()));
                }
                Cleaned::Empty => {}
            }
        }
    }
    for (key, scope) in [(0u8, Scope::User), (1u8, Scope::Project)] {
        let candidates = by_scope.remove(&key).unwrap_or_default();
        let changes = changes_by_scope.remove(&key).unwrap_or_default();
        if candidates.is_empty() && corrections.is_empty() && changes.is_empty() {
            continue;
        }
        let merge = |open: &mut crate::store::OpenFile| {
            merge_with_changes(
                open,
                &changes,
                &candidates,
                &corrections,
                options.now,
                auto.options().cap_tokens,
                auto.options().headings,
            )
        };
        let (file_report, skipped) = if options.dry_run {
            let (doc, _) = auto.read(scope)?;
            let mut open = crate::store::OpenFile {
                scope,
                path: auto.path(scope),
                doc,
                meta: Default::default(),
                warnings: Vec::new(),
            };
            merge(&mut open)
        } else {
            auto.update(scope, |open| Ok(merge(open)))?
        };
        report.dropped.extend(skipped);
        report.files.push(file_report);
    }
    if !options.dry_run {
        let spent = report.tokens_spent;
        let today_key = today.clone();
        let oldest: NaiveDate = options.now.date_naive() - chrono::Days::new(31);
        update_state(auto, |s| {
            s.sessions.insert(session.to_owned(), total);
            if spent > 0 {
                *s.tokens.entry(today_key).or_insert(0) += spent;
            }
            s.tokens
                .retain(|d, _| NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok_and(|d| d >= oldest));
        })?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::Role;

    fn tool_turn(i: usize) -> Message {
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                format!("t{i}"),
                format!("output line {i} ").repeat(200),
                false,
            )],
        )
    }

    #[test]
    fn bound_messages_trims_tool_output_then_drops_the_oldest() {
        let counter = TokenCounter::default();
        let mut messages = Vec::new();
        for i in 0..8 {
            messages.push(Message::user(format!("question {i} about the build")));
            messages.push(tool_turn(i));
        }
        let all: usize = messages.iter().map(|m| counter.count_message(m)).sum();
        // Unbounded: as is.
        let (kept, total) = bound_messages(messages.clone(), all, &counter);
        assert_eq!((kept.len(), total), (messages.len(), all));
        // Room for the text and the last 4 messages' tool output: old outputs trimmed only.
        let last4: usize = messages[12..]
            .iter()
            .map(|m| counter.count_message(m))
            .sum();
        let (kept, total) = bound_messages(messages.clone(), last4 + 400, &counter);
        assert_eq!(kept.len(), messages.len());
        assert!(total <= last4 + 400, "{total}");
        assert_eq!(
            total,
            kept.iter().map(|m| counter.count_message(m)).sum::<usize>()
        );
        let tool_text = |m: &Message| match &m.content[0] {
            ContentBlock::ToolResult { content, .. } => content.text(),
            _ => String::new(),
        };
        assert!(tool_text(&kept[1]).starts_with("[tool output trimmed: "));
        assert_eq!(kept[12..], messages[12..]);
        // Tighter than the last 4 messages: the oldest go, the newest stays.
        let (kept, total) = bound_messages(messages.clone(), 100, &counter);
        assert_eq!(kept.last(), messages.last());
        assert!(kept.len() < messages.len());
        assert_eq!(
            total,
            kept.iter().map(|m| counter.count_message(m)).sum::<usize>()
        );
        // Nothing fits: one message is still kept.
        let (kept, _) = bound_messages(messages.clone(), 0, &counter);
        assert_eq!(kept, [messages[15].clone()]);
    }
}
