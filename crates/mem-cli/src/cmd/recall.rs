//! `mem recall QUERY`: the recall reminder exactly as the agent would get it for a user message
//! (seed 000 §4), with `--session` remembering what was surfaced.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, NaiveDate, Utc};
use clap::Args;
use mem_core::terminal::{safe, safe_line};
use mem_llm::{Job, Llm, OfflineEngine};
use mem_recall::RecallOptions;
use serde_json::json;

use crate::config::llm_settings;
use crate::open::{given_dirs, lib_error, print_warnings};
use crate::settings::Settings;

/// Arguments of `mem recall`.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// The user's message.
    query: String,
    /// Leave out notes this session already surfaced, and record the ones chosen now (kept in
    /// `<project>/.mewcode/sessions/<ID>.recall.json`).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Memory directories to use instead of the configured ones (project, user, `[recall] dirs`).
    #[arg(long, value_name = "DIR")]
    dir: Vec<PathBuf>,
    /// The most notes to choose.
    #[arg(long, default_value_t = mem_llm::DEFAULT_SELECT_LIMIT, value_parser = super::parse_limit)]
    limit: usize,
    /// Use the offline selector whatever the configuration says (embeddings, when configured,
    /// still apply: see `--no-embeddings`).
    #[arg(long)]
    offline: bool,
    /// Lexical selection only, even when `[embeddings]` is configured.
    #[arg(long)]
    no_embeddings: bool,
    /// The time ages are counted to (`YYYY-MM-DD` or RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    now: Option<String>,
}

fn parse_now(text: &str) -> Result<SystemTime> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc).into());
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .with_context(|| format!("--now {text:?}: expected YYYY-MM-DD or an RFC 3339 time"))?;
    Ok(date
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
        .into())
}

/// Runs `mem recall`.
pub async fn run(args: RecallArgs, settings: &Settings) -> Result<()> {
    let memory = crate::open::memory(settings)?;
    let dirs = if args.dir.is_empty() {
        memory.memory_dirs().map_err(lib_error)?
    } else {
        given_dirs(&args.dir)?
    };
    let now = match &args.now {
        Some(t) => parse_now(t)?,
        None => SystemTime::now(),
    };
    let log = match &args.session {
        Some(id) => Some(memory.surfaced_log(id).map_err(lib_error)?),
        None => None,
    };
    let llm: Arc<dyn Llm> = if args.offline {
        Arc::new(OfflineEngine)
    } else {
        let (resolved, _) = llm_settings(settings)?;
        resolved.job(Job::Select).engine()?
    };
    let (llm, warnings) = memory.with_embeddings(llm, args.no_embeddings);
    print_warnings(&warnings);
    let options = RecallOptions {
        limit: args.limit,
        ..RecallOptions::default()
    };
    let recall = memory
        .recall_notes(llm, &dirs, log.as_ref(), &args.query, options, now)
        .await;
    for w in &recall.warnings {
        eprintln!("warning: {}", safe_line(&w.to_string()));
    }
    if !args.dir.is_empty() && recall.candidates + recall.already_surfaced == 0 {
        let readable = dirs.dirs.iter().any(|d| d.path.is_dir());
        if !readable {
            bail!(
                "no memory directory could be read ({})",
                dirs.dirs
                    .iter()
                    .map(|d| d.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if settings.json {
        let notes: Vec<_> = recall
            .selected
            .iter()
            .map(|r| {
                json!({
                    "id": r.note.id,
                    "file": r.note.id.file_name,
                    "name": r.note.name,
                    "path": r.note.path,
                    "type": r.note.kind,
                    "age_days": r.age_days,
                    "age_source": r.age_source,
                    "score": (f64::from(r.score) * 1000.0).round() / 1000.0,
                })
            })
            .collect();
        let value = json!({
            "selected": recall.selected.iter().map(|r| &r.note.id.file_name).collect::<Vec<_>>(),
            "ids": recall.selected.iter().map(|r| r.note.id.to_string()).collect::<Vec<_>>(),
            "notes": notes,
            "reminder": recall.reminder,
            "engine": recall.engine,
            "fallback": recall.fallback,
            "dropped": recall.dropped,
            "candidates": recall.candidates,
            "already_surfaced": recall.already_surfaced,
            "warnings": recall.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        });
        println!("{}", crate::render::json_pretty(&value)?);
        return Ok(());
    }
    if let Some(reason) = &recall.fallback {
        eprintln!("note: {}", safe_line(reason));
    }
    if recall.reminder.is_empty() {
        println!(
            "(nothing recalled: {} candidate notes, {} already surfaced in this session)",
            recall.candidates, recall.already_surfaced
        );
    } else {
        println!("{}", safe(&recall.reminder));
    }
    Ok(())
}
