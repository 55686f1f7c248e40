//! The recall flow of seed 000 §4 (`app.py:1166-1208`): scan → leave out the notes already
//! surfaced in this session → ask the selector (`mem_llm::Llm::select`) for at most 5 under an
//! 8-second deadline → render the reminder. Any failure, a timeout or a reply naming no known
//! note gives an empty reminder and says why in [`Recall::fallback`]; a turn is never blocked.
//!
//! [`prefetch`] starts it when the user sends a message (seed: `asyncio.create_task(...)`) and
//! [`Prefetch::wait`] collects it when the agent builds the turn.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mem_llm::{DEFAULT_SELECT_LIMIT, Llm, SelectRequest};
use serde::Serialize;

use crate::reminder::{AgeSource, age_days, render_reminder};
use crate::scan::{MemoryDirs, Note, Scan, Warning, scan_cached};
use crate::surfaced::SurfacedLog;

/// The seed's selector deadline: 8 seconds.
pub const SELECT_DEADLINE: Duration = Duration::from_secs(8);

/// How a recall runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecallOptions {
    /// The most notes chosen (the seed: 5).
    pub limit: usize,
    /// The deadline of the selector call and, for [`prefetch`], of the whole recall.
    pub deadline: Duration,
}

impl Default for RecallOptions {
    fn default() -> Self {
        RecallOptions {
            limit: DEFAULT_SELECT_LIMIT,
            deadline: SELECT_DEADLINE,
        }
    }
}

/// A chosen note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recalled {
    /// The note.
    #[serde(flatten)]
    pub note: Note,
    /// Its age in whole days.
    pub age_days: u64,
    /// Where the age came from.
    pub age_source: AgeSource,
    /// The offline engine's relevance score of the note for the query (BM25F, see
    /// `mem_llm::offline::score`), whoever selected it; 0 when it does not match lexically.
    pub score: f32,
}

/// The outcome of one recall.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Recall {
    /// The chosen notes, most relevant first (at most the limit).
    pub selected: Vec<Recalled>,
    /// The `<system-reminder>` to inject (empty when nothing was chosen).
    pub reminder: String,
    /// Who selected: `offline` or `<provider>:<model>` (empty when the selector was not asked).
    pub engine: String,
    /// Why the selection is empty or came from the offline fallback, when it did: a timeout,
    /// a failure, a junk reply, the model engine's own fallback reason.
    pub fallback: Option<String>,
    /// Notes the selector's reply named that are not candidates (ignored).
    pub dropped: Vec<String>,
    /// The notes offered to the selector (after leaving out the surfaced ones).
    pub candidates: usize,
    /// Notes left out because they were surfaced earlier in the session.
    pub already_surfaced: usize,
    /// Files and directories skipped or partly used, and problems with the session record.
    pub warnings: Vec<Warning>,
}

/// Chooses among `scan`'s notes minus `surfaced` (note ids as text) for `query` and renders the
/// reminder at `now`. Never fails: see the module doc.
pub async fn recall(
    llm: &dyn Llm,
    scan: Scan,
    surfaced: &BTreeSet<String>,
    query: &str,
    options: RecallOptions,
    now: SystemTime,
) -> Recall {
    let mut out = Recall {
        warnings: scan.warnings,
        ..Recall::default()
    };
    let (notes, old): (Vec<Note>, Vec<Note>) = scan
        .notes
        .into_iter()
        .partition(|n| !surfaced.contains(&n.id.to_string()));
    out.already_surfaced = old.len();
    out.candidates = notes.len();
    if notes.is_empty() || query.trim().is_empty() || options.limit == 0 {
        return out;
    }
    let request = SelectRequest {
        query: query.to_owned(),
        candidates: notes.iter().map(Note::candidate).collect(),
        limit: options.limit,
    };
    out.engine = llm.engine_name(mem_llm::Job::Select);
    let reply = match tokio::time::timeout(options.deadline, llm.select(&request)).await {
        Err(_) => {
            out.fallback = Some(format!(
                "the selector did not answer within {} s; nothing recalled",
                options.deadline.as_secs_f64()
            ));
            return out;
        }
        Ok(Err(e)) => {
            out.fallback = Some(format!("the selector failed ({e}); nothing recalled"));
            return out;
        }
        Ok(Ok(reply)) => reply,
    };
    out.engine = reply.engine;
    out.fallback = reply.fallback;
    out.dropped = reply.dropped;
    let mut chosen: Vec<usize> = Vec::new();
    for id in &reply.value.ids {
        match request.candidates.iter().position(|c| &c.id == id) {
            Some(i) if !chosen.contains(&i) => chosen.push(i),
            Some(_) => {}
            None => out.dropped.push(id.clone()),
        }
    }
    if chosen.is_empty() && !reply.value.ids.is_empty() {
        out.fallback = Some(format!(
            "the selector's reply named no candidate ({} ids, none known); nothing recalled",
            reply.value.ids.len()
        ));
    }
    chosen.truncate(options.limit);
    let scores = mem_llm::offline::score(query, &request.candidates);
    let mut slots: Vec<Option<Note>> = notes.into_iter().map(Some).collect();
    for i in chosen {
        let Some(note) = slots.get_mut(i).and_then(Option::take) else {
            continue;
        };
        let (age, source) = age_days(&note, now);
        let score = scores
            .iter()
            .find(|(j, _)| *j == i)
            .map_or(0.0, |(_, s)| *s);
        out.selected.push(Recalled {
            note,
            age_days: age,
            age_source: source,
            score,
        });
    }
    let chosen_notes: Vec<&Note> = out.selected.iter().map(|r| &r.note).collect();
    out.reminder = render_reminder(&chosen_notes, now);
    out
}

/// The whole flow for a session: scan `dirs` ([`scan_cached`]), leave out what `log` records as surfaced, select,
/// render, and record the chosen notes in `log` (so the next turn and a resumed session do not
/// repeat them). A record that cannot be read or written is a warning, not a failure.
pub async fn recall_for_session(
    llm: &dyn Llm,
    dirs: &MemoryDirs,
    log: Option<&SurfacedLog>,
    query: &str,
    options: RecallOptions,
    now: SystemTime,
) -> Recall {
    let scanned = scan_cached(dirs);
    run_with_log(llm, scanned, log, query, options, now).await
}

async fn run_with_log(
    llm: &dyn Llm,
    scanned: Scan,
    log: Option<&SurfacedLog>,
    query: &str,
    options: RecallOptions,
    now: SystemTime,
) -> Recall {
    let mut record_warning = None;
    let surfaced = match log.map(SurfacedLog::load) {
        None => BTreeSet::new(),
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            record_warning = log.map(|l| Warning {
                path: l.path().to_owned(),
                message: format!("{e}; surfaced notes may repeat"),
            });
            BTreeSet::new()
        }
    };
    let mut out = recall(llm, scanned, &surfaced, query, options, now).await;
    out.warnings.extend(record_warning);
    if let Some(log) = log {
        let ids: Vec<String> = out.selected.iter().map(|r| r.note.id.to_string()).collect();
        if let Err(e) = log.add(ids.iter().map(String::as_str)) {
            out.warnings.push(Warning {
                path: log.path().to_owned(),
                message: format!("cannot record the surfaced notes: {e}"),
            });
        }
    }
    out
}

/// A recall started in the background (seed: prefetched when the user sends a message).
#[derive(Debug)]
pub struct Prefetch {
    handle: tokio::task::JoinHandle<Recall>,
    deadline: Duration,
}

/// Starts [`recall_for_session`] on the current tokio runtime (the scan on a blocking thread)
/// and returns at once. The whole recall — scan included — is bounded by `options.deadline`.
/// Must be called within a tokio runtime.
pub fn prefetch(
    llm: Arc<dyn Llm>,
    dirs: MemoryDirs,
    log: Option<SurfacedLog>,
    query: String,
    options: RecallOptions,
) -> Prefetch {
    let deadline = options.deadline;
    let handle = tokio::spawn(async move {
        let work = async {
            let scanned = tokio::task::spawn_blocking(move || scan_cached(&dirs))
                .await
                .unwrap_or_default();
            run_with_log(
                llm.as_ref(),
                scanned,
                log.as_ref(),
                &query,
                options,
                SystemTime::now(),
            )
            .await
        };
        match tokio::time::timeout(deadline, work).await {
            Ok(recall) => recall,
            Err(_) => Recall {
                fallback: Some(format!(
                    "recall did not finish within {} s; nothing recalled",
                    deadline.as_secs_f64()
                )),
                ..Recall::default()
            },
        }
    });
    Prefetch { handle, deadline }
}

impl Prefetch {
    /// `true` once the recall has finished.
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The recall's outcome; an empty one (with the reason in `fallback`) when the task failed.
    /// Returns within the deadline given to [`prefetch`] (plus scheduling).
    pub async fn wait(self) -> Recall {
        let deadline = self.deadline;
        match tokio::time::timeout(deadline + Duration::from_millis(100), self.handle).await {
            Ok(Ok(recall)) => recall,
            Ok(Err(e)) => Recall {
                fallback: Some(format!("recall failed ({e}); nothing recalled")),
                ..Recall::default()
            },
            Err(_) => Recall {
                fallback: Some(format!(
                    "recall did not finish within {} s; nothing recalled",
                    deadline.as_secs_f64()
                )),
                ..Recall::default()
            },
        }
    }
}
