//! The recall reminder for a user message (seed 000 §4) through mem-recall, fitted to a
//! character budget, with the notes shown recorded as surfaced for the session.

use std::sync::Arc;
use std::time::SystemTime;

use mem_llm::Llm;
use mem_recall::{MemoryDirs, Note, RecallOptions, SurfacedLog, render_reminder, scan_cached};

use crate::context::utf16_len;

/// A recall: the reminder and what went into it.
#[derive(Debug, Clone, Default)]
pub struct Recalled {
    /// The `<system-reminder>` with the chosen notes; empty when nothing was chosen.
    pub reminder: String,
    /// The ids (`N:<scope>/<file>`) of the notes in the reminder, most relevant first.
    pub ids: Vec<String>,
    /// Notes chosen but left out to stay within the budget (least relevant first out).
    pub left_out: Vec<String>,
    /// Problems met (unreadable notes, a selector that failed or timed out...), one line each.
    pub problems: Vec<String>,
}

/// Recalls the notes of `dirs` for `query` (at most 5, through `llm.select`, 8 s deadline),
/// leaving out those `log` says this session already surfaced, and renders the reminder within
/// `budget_chars` (UTF-16 code units) by dropping the least relevant notes. The notes shown are
/// added to `log`. The query is the user's words in `query` ([`mem_core::speech::user_speech`]:
/// client-injected blocks left out). Never fails: every problem gives fewer notes and a line
/// in `problems`.
pub async fn recall_reminder(
    llm: Arc<dyn Llm>,
    dirs: &MemoryDirs,
    log: Option<&SurfacedLog>,
    query: &str,
    budget_chars: Option<usize>,
    now: SystemTime,
) -> Recalled {
    let mut out = Recalled::default();
    // Only the user's words are the query: a reminder or command output a client put into the
    // prompt would otherwise pull in notes about itself.
    let said = mem_core::speech::user_speech(query).said;
    let query = said.as_str();
    let scanned = scan_cached(dirs);
    let surfaced = match log.map(SurfacedLog::load) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            out.problems.push(format!("{e}; surfaced notes may repeat"));
            Default::default()
        }
        None => Default::default(),
    };
    let recall = mem_recall::recall(
        llm.as_ref(),
        scanned,
        &surfaced,
        query,
        RecallOptions::default(),
        now,
    )
    .await;
    out.problems
        .extend(recall.warnings.iter().map(ToString::to_string));
    out.problems.extend(recall.fallback.clone());
    let mut notes: Vec<&Note> = recall.selected.iter().map(|r| &r.note).collect();
    let mut reminder = render_reminder(&notes, now);
    while let Some(budget) = budget_chars
        && utf16_len(&reminder) > budget
        && let Some(dropped) = notes.pop()
    {
        out.left_out.insert(0, dropped.id.to_string());
        reminder = render_reminder(&notes, now);
    }
    out.ids = notes.iter().map(|n| n.id.to_string()).collect();
    out.reminder = reminder;
    if let Some(log) = log
        && !out.ids.is_empty()
        && let Err(e) = log.add(out.ids.iter().map(String::as_str))
    {
        out.problems
            .push(format!("cannot record the surfaced notes: {e}"));
    }
    out
}
