//! `mem extract`: auto memory by hand (seed 000 §3) — the messages of a session after its last
//! extraction, through the extract job, merged into `~/.mewcode/memories.md` and
//! `<project>/.mewcode/memories.md`; prints what was added, updated, removed, withheld as
//! secret and evicted, per file, and the tokens spent.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use mem_auto::{AutoMemory, ExtractOptions, ExtractReport, FileReport, Scope};
use mem_core::terminal::safe_line;
use mem_llm::Job;
use mem_session::SessionStore;
use mewmem::ops::extract as ops;

use crate::args::EngineArgs;
use crate::config::memory_settings;
use crate::open::engine_for;
use crate::settings::Settings;

/// `mem extract`
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Session id or unique prefix (default: the latest session).
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    session: Option<String>,
    /// Every session of the project, oldest first.
    #[arg(long)]
    all: bool,
    /// Show what would be written; write nothing (files and per-session counts unchanged).
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Runs `mem extract`.
pub async fn run(args: ExtractArgs, settings: &Settings) -> Result<()> {
    let store = SessionStore::for_project(&settings.project);
    let ids = ops::session_ids(&store, args.all, args.session.as_deref())?;
    if !args.dry_run {
        crate::undo::auto_checkpoint(settings, "mem extract", true)?;
    }
    let memory = memory_settings(settings)?;
    let auto = AutoMemory::new(&settings.project, &settings.home, memory.auto);
    let llm = engine_for(settings, Job::Extract, &args.engine)?;
    let mut options = ExtractOptions::new(chrono::Utc::now());
    options.dry_run = args.dry_run;
    options.daily_token_budget = memory.daily_extract_tokens;
    let reports = ops::extract(&auto, &store, &ids, llm.as_ref(), &options).await?;
    let mut out = std::io::stdout().lock();
    if settings.json {
        writeln!(out, "{}", crate::render::json_pretty(&reports)?)?;
        return Ok(());
    }
    for report in &reports {
        print_report(&mut out, report)?;
    }
    if reports.len() > 1 {
        let added: usize = reports
            .iter()
            .flat_map(|r| &r.files)
            .map(|f| f.added.len())
            .sum();
        let spent: usize = reports.iter().map(|r| r.tokens_spent).sum();
        writeln!(
            out,
            "{} sessions: {added} entries added, {spent} tokens spent",
            reports.len()
        )?;
    }
    Ok(())
}

fn file_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "~/.mewcode/memories.md",
        Scope::Project => ".mewcode/memories.md",
    }
}

fn print_report(out: &mut impl Write, r: &ExtractReport) -> Result<()> {
    let dry = if r.dry_run {
        " (dry run: nothing written)"
    } else {
        ""
    };
    writeln!(
        out,
        "session {}: {} new of {} messages, engine {}{dry}",
        safe_line(&r.session),
        r.messages_new,
        r.messages_total,
        safe_line(&r.engine)
    )?;
    if let Some(reason) = &r.skipped {
        writeln!(out, "  skipped: {}", safe_line(reason))?;
    }
    if let Some(reason) = &r.fallback {
        writeln!(
            out,
            "  note: the model's reply was unusable; the offline engine answered ({})",
            safe_line(reason)
        )?;
    }
    for d in &r.dropped {
        writeln!(out, "  dropped from the reply: {}", safe_line(d))?;
    }
    for w in &r.warnings {
        writeln!(out, "  warning: {}", safe_line(w))?;
    }
    for f in &r.files {
        print_file(out, f)?;
    }
    let found = r.files.iter().any(|f| {
        !(f.added.is_empty()
            && f.updated.is_empty()
            && f.removed.is_empty()
            && f.confirmed.is_empty())
    });
    if r.skipped.is_none() && !found {
        let hint = if r.engine == "offline" {
            " (the offline engine keeps only what is stated outright, such as \"I prefer ...\"; \
             a model finds more: docs/MODELS.md)"
        } else {
            ""
        };
        writeln!(
            out,
            "  0 found: nothing to remember in these messages{hint}"
        )?;
    }
    if r.skipped.is_none() {
        // Prompt redaction is reported only when a prompt went to a model.
        let prompt = r
            .withheld_from_prompt
            .map(|n| format!(", {n} from the prompt sent to {}", safe_line(&r.engine)))
            .unwrap_or_default();
        writeln!(
            out,
            "  secrets withheld: {} from entries ({} entries dropped as mostly secret){prompt}",
            r.withheld, r.secret_entries,
        )?;
        for (text, reason) in &r.one_offs {
            writeln!(out, "  not kept ({reason}): {}", safe_line(text))?;
        }
    }
    writeln!(
        out,
        "  tokens spent: {} (today {} of {})",
        r.tokens_spent, r.tokens_today, r.daily_budget
    )?;
    Ok(())
}

fn print_file(out: &mut impl Write, f: &FileReport) -> Result<()> {
    let changed = f.changed();
    writeln!(
        out,
        "  {}: {}",
        file_name(f.scope),
        if changed {
            format!("{} tokens of {}", f.tokens, f.cap_tokens)
        } else {
            "nothing new".to_owned()
        }
    )?;
    let line = |out: &mut dyn Write, verb: &str, c: &mem_auto::Change| -> Result<()> {
        writeln!(
            out,
            "    {verb:<12} {} [{}] {}",
            c.id,
            c.category.heading(),
            safe_line(&c.text)
        )?;
        Ok(())
    };
    for c in &f.added {
        line(out, "added", c)?;
    }
    for u in &f.updated {
        line(out, "updated", &u.old)?;
        line(out, "  now", &u.new)?;
    }
    for c in &f.removed {
        line(out, "removed", c)?;
    }
    for c in &f.consolidated {
        line(out, "merged away", c)?;
    }
    for c in &f.evicted {
        line(out, "evicted", c)?;
    }
    if !f.confirmed.is_empty() {
        writeln!(out, "    ({} already there, confirmed)", f.confirmed.len())?;
    }
    if f.over_cap() {
        writeln!(
            out,
            "    warning: still over the cap ({} of {} tokens): what remains was written now or is not an entry",
            f.tokens, f.cap_tokens
        )?;
    }
    Ok(())
}
