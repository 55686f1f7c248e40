//! `mem compact stats|sweep` (seed 003's `compact` CLI on seed 000 §2's Layer-2 rules).

use std::io::{self, Write};
use std::sync::Arc;

use anyhow::{Result, bail};
use chrono::NaiveDate;
use clap::{Args, Subcommand, ValueEnum};
use mem_auto::MemoryOptions;
use mem_compact::{
    AutoCompact, AutoCompactConfig, CompactResult, Compaction, LongTermMemory, OMC_KEEP_FRACTION,
    TailPolicy, Trigger,
};
use mem_core::{Message, is_long_term_memory};
use mem_llm::{Job, Llm, OfflineEngine};
use mem_session::SessionStore;
use mewmem::ops::compact::{self as ops, Commit, SweepOptions, SweepOutcome};
use mewmem::ops::session::resolve;
use serde_json::json;

use crate::args::SourceArgs;
use crate::config::llm_settings;
use crate::render::{render_message, safe, safe_line};
use crate::settings::Settings;

/// `mem compact ...`
#[derive(Debug, Args)]
pub struct CompactArgs {
    #[command(subcommand)]
    command: CompactCommand,
}

impl CompactArgs {
    /// Whether the command reads and rewrites sessions (a sweep): it allocates in bulk
    /// (`mem_alloc`).
    pub fn allocates_in_bulk(&self) -> bool {
        matches!(self.command, CompactCommand::Sweep { .. })
    }
}

#[derive(Debug, Subcommand)]
enum CompactCommand {
    /// Tokens of a session, share of the window, warning level, compactions so far, tokens saved.
    /// Counts the context as `sweep` does: with the injected instructions and memories.
    Stats {
        #[command(flatten)]
        common: CommonArgs,
        /// The date of the injected `# currentDate` section (default: today, local time).
        #[arg(long, value_name = "YYYY-MM-DD")]
        date: Option<NaiveDate>,
        #[command(flatten)]
        sources: SourceArgs,
    },
    /// Compact a session now: summarise the prefix, keep the tail, write a boundary.
    Sweep {
        #[command(flatten)]
        common: CommonArgs,
        /// Keep the tail from the last user request on, and summarise what came before (the
        /// tail still holds at least 5 messages).
        #[arg(long)]
        since_last_user: bool,
        /// Print what would be kept, dropped and summarised, and the result; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Compact even under the threshold.
        #[arg(long)]
        force: bool,
        /// How the verbatim tail is chosen.
        #[arg(long, value_enum, default_value_t = TailArg::Mewcode)]
        tail: TailArg,
        /// Summarise with the offline engine whatever the configuration says.
        #[arg(long)]
        offline: bool,
        /// The date of the re-injected `# currentDate` section (default: today, local time).
        #[arg(long, value_name = "YYYY-MM-DD")]
        date: Option<NaiveDate>,
        #[command(flatten)]
        sources: SourceArgs,
    },
}

#[derive(Debug, Args)]
struct CommonArgs {
    /// Session id or unique prefix (default: the latest session).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The model's context window, in tokens (at least 1).
    #[arg(long, value_name = "N", default_value_t = 128_000, value_parser = parse_window)]
    window: usize,
}

fn parse_window(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("the context window must hold at least 1 token".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TailArg {
    /// MewCode Layer-2: at least 5 messages, growing to 10,000 tokens, never over 40,000.
    Mewcode,
    /// OMC: the last 20 % of the messages (within the same bounds).
    Omc,
}

/// Runs `mem compact ...`.
pub async fn run(args: CompactArgs, settings: &Settings) -> Result<()> {
    let store = SessionStore::for_project(&settings.project);
    match args.command {
        CompactCommand::Stats {
            common,
            date,
            sources,
        } => {
            let date = date.unwrap_or_else(|| chrono::Local::now().date_naive());
            let ltm = long_term_memory(&sources, settings, date)?;
            stats(&store, &common, &ltm, settings)
        }
        CompactCommand::Sweep {
            common,
            since_last_user,
            dry_run,
            force,
            tail,
            offline,
            date,
            sources,
        } => {
            let llm: Arc<dyn Llm> = if offline {
                Arc::new(OfflineEngine)
            } else {
                let (resolved, _) = llm_settings(settings)?;
                resolved.job(Job::Summarize).engine()?
            };
            let config = AutoCompactConfig {
                model_context_window: common.window,
                tail: match tail {
                    TailArg::Mewcode => TailPolicy::MewCode,
                    TailArg::Omc => TailPolicy::LastFraction(OMC_KEEP_FRACTION),
                },
                trigger: Trigger::Manual,
                ..AutoCompactConfig::default()
            };
            let id = resolve(&store, common.session.as_deref())?;
            if !dry_run {
                settings.guard_write(store.dir())?;
                settings.guard_write(&settings.project.join(mem_compact::TOOL_RESULTS_DIR))?;
                crate::undo::auto_checkpoint(settings, "mem compact sweep", false)?;
            }
            let date = date.unwrap_or_else(|| chrono::Local::now().date_naive());
            let ltm = long_term_memory(&sources, settings, date)?;
            let sweep = SweepOptions {
                id,
                since_last_user,
                dry_run,
                force,
            };
            run_sweep(&store, &sweep, AutoCompact::new(config, llm), ltm, settings).await
        }
    }
}

fn stats(
    store: &SessionStore,
    common: &CommonArgs,
    ltm: &LongTermMemory,
    settings: &Settings,
) -> Result<()> {
    let id = resolve(store, common.session.as_deref())?;
    let ops::Stats {
        check,
        config,
        compactions: boundaries,
        with_figures: measured,
        tokens_saved: saved,
        ..
    } = ops::stats(store, &id, common.window, ltm)?;
    let mut out = io::stdout().lock();
    if settings.json {
        let v = json!({
            "session": id,
            "tokens": check.tokens,
            "window": check.window,
            "ratio": check.ratio,
            "warning_level": check.warning_level,
            "compact_threshold_tokens": config.trigger_tokens(),
            "safety_margin": config.safety_margin(),
            "trigger": config.trigger,
            "compactions": boundaries,
            "compactions_with_figures": measured,
            "tokens_saved": saved,
        });
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "session {id}")?;
    writeln!(
        out,
        "tokens: {} of {} ({:.1} % of the window)",
        thousands(check.tokens),
        thousands(check.window),
        check.ratio * 100.0
    )?;
    writeln!(out, "warning level: {}", check.warning_level)?;
    let trigger = config.trigger_tokens();
    writeln!(
        out,
        "compacts above {} tokens, {:.0} % of the window (`mem compact sweep` keeps a margin of \
         {} tokens); warns from {:.0} %",
        thousands(trigger),
        trigger as f64 * 100.0 / check.window.max(1) as f64,
        thousands(config.safety_margin()),
        config.warning_threshold * 100.0
    )?;
    write!(out, "compactions: {boundaries}")?;
    if boundaries > measured {
        write!(
            out,
            " ({} imported or legacy, without figures)",
            boundaries - measured
        )?;
    }
    writeln!(out)?;
    writeln!(out, "tokens saved: {saved}")?;
    Ok(())
}

/// The instructions and memories injected into the context, as `mem context` builds them
/// ([`ops::long_term_memory`]); their warnings on stderr.
fn long_term_memory(
    sources: &SourceArgs,
    settings: &Settings,
    date: NaiveDate,
) -> Result<LongTermMemory> {
    Ok(ops::long_term_memory(
        &sources.load_options(settings)?,
        &MemoryOptions::new(&settings.project, &settings.home),
        date,
        |w| eprintln!("warning: {}", safe_line(&w)),
    )?)
}

async fn run_sweep(
    store: &SessionStore,
    sweep: &SweepOptions,
    ac: AutoCompact,
    ltm: LongTermMemory,
    settings: &Settings,
) -> Result<()> {
    let done = ops::sweep(store, settings.project.clone(), sweep, ac, ltm).await?;
    let limit = done.limit;
    let mut out = io::stdout().lock();
    // The library reports a `critical` result; the command says why and fails (exit 1).
    let critical = match done.outcome {
        SweepOutcome::Skipped {
            result,
            reason,
            minimal_tail,
        } => {
            if settings.json {
                let v = json!({
                    "session": sweep.id,
                    "dry_run": sweep.dry_run,
                    "result": result,
                    "skipped": reason.to_string(),
                });
                writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
            } else {
                writeln!(out, "session {}", sweep.id)?;
                if reason == mem_compact::Skip::BelowThreshold {
                    writeln!(
                        out,
                        "not compacted: {reason} ({} tokens; --force compacts anyway)",
                        thousands(limit)
                    )?;
                } else {
                    writeln!(out, "not compacted: {reason}")?;
                }
                print_result(&result, &mut out)?;
            }
            minimal_tail.map(|tail| {
                format!(
                    "not compacted and still critical: the context is {} tokens, over the limit of \
                     {limit} by {}; the minimal tail alone is {tail} tokens ({reason})",
                    result.tokens_before,
                    result.tokens_before.saturating_sub(limit)
                )
            })
        }
        SweepOutcome::Compacted {
            compaction,
            result,
            commit: write,
            critical,
        } => {
            let window = done.window;
            if settings.json {
                let v = json!({
                    "session": sweep.id,
                    "dry_run": sweep.dry_run,
                    "written": write == Commit::Written,
                    "engine": compaction.engine,
                    "fallback": compaction.fallback,
                    "result": result,
                    "summarized": compaction.cut.prefix.len(),
                    "kept": compaction.keep_messages.len(),
                    "summary_cut": compaction.summary_cut,
                    "spills": compaction.spills.iter().map(|s| s.relative_path.display().to_string()).collect::<Vec<_>>(),
                    "summary": compaction.summary,
                    "context": compaction.context,
                });
                writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
            } else {
                print_compaction(sweep, write, &done.before, &compaction, &result, &mut out)?;
            }
            match critical {
                None => None,
                Some(critical) => {
                    let why = critical_after(&compaction, &result, limit, critical.tail_tokens);
                    if critical.usable {
                        let done = if write == Commit::Written {
                            "kept"
                        } else {
                            "would be kept"
                        };
                        eprintln!(
                            "warning: compacted but still {why}; the compaction is {done}: the context fits the window of \
                             {window} tokens"
                        );
                        None
                    } else {
                        let lost = if compaction.summary_cut {
                            format!(
                                "; the summary was cut to its budget of {} tokens",
                                done.summary_budget
                            )
                        } else {
                            String::new()
                        };
                        Some(format!(
                            "not compacted: the result would still be {why}{lost}; nothing written (a larger --window, or --dry-run to see the \
                             result)"
                        ))
                    }
                }
            }
        }
    };
    out.flush()?;
    if let Some(why) = critical {
        bail!("{why}");
    }
    Ok(())
}

/// Why a compaction ended `critical`: what the kept tail alone (`tail` tokens) weighs against
/// the limit.
fn critical_after(c: &Compaction, result: &CompactResult, limit: usize, tail: usize) -> String {
    let which = if c.tail_shrunk {
        "minimal tail"
    } else {
        "kept tail"
    };
    let alone = if tail > limit {
        format!("over the limit by {}", tail - limit)
    } else {
        format!(
            "{} under the limit; with the summary and the injected block the context passes it",
            limit - tail
        )
    };
    format!(
        "critical: {} tokens after compaction, over the limit of {limit} by {}; the {which} \
         alone is {tail} tokens, {alone}",
        result.tokens_after,
        result.tokens_after.saturating_sub(limit)
    )
}

/// The result as a person would say it; `--json` has every field under their seed names.
fn print_result(r: &CompactResult, out: &mut impl Write) -> io::Result<()> {
    if r.triggered {
        writeln!(
            out,
            "tokens: {} → {} ({} saved), {} removed; level now {}",
            thousands(r.tokens_before),
            thousands(r.tokens_after),
            thousands(r.tokens_saved()),
            plural(r.messages_removed, "message"),
            r.warning_level
        )?;
    } else {
        writeln!(
            out,
            "tokens: {} (unchanged); level {}",
            thousands(r.tokens_before),
            r.warning_level
        )?;
    }
    if r.deduplicated_count > 0 || r.error_removed_count > 0 {
        writeln!(
            out,
            "cleaned before summarising: {} repeated, {} old error result(s) removed",
            plural(r.deduplicated_count, "tool call"),
            r.error_removed_count
        )?;
    }
    if r.paused {
        writeln!(
            out,
            "automatic compaction is paused for this session (summariser failures)"
        )?;
    }
    Ok(())
}

/// `108800` → `108,800`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 message`, `2 messages`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// `#3–#40` (1-based), or `none`.
fn span(indices: &[usize]) -> String {
    match (indices.first(), indices.last()) {
        (Some(a), Some(b)) if a == b => format!("#{}", a + 1),
        (Some(a), Some(b)) => format!("#{}–#{}", a + 1, b + 1),
        _ => "none".to_owned(),
    }
}

fn print_compaction(
    sweep: &SweepOptions,
    write: Commit,
    before: &[Message],
    c: &Compaction,
    result: &CompactResult,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "session {}", sweep.id)?;
    match &c.fallback {
        Some(why) => writeln!(
            out,
            "summary by: {} (offline fallback: {})",
            safe_line(&c.engine),
            safe_line(why)
        )?,
        None => writeln!(out, "summary by: {}", safe_line(&c.engine))?,
    }
    match write {
        Commit::DryRun => writeln!(out, "dry run: nothing written")?,
        Commit::Refused => writeln!(out, "not written: the result is not usable (see the error)")?,
        Commit::Written => {}
    }
    print_result(result, out)?;
    writeln!(
        out,
        "summarised: {} messages ({})",
        c.cut.prefix.len(),
        span(&c.cut.prefix)
    )?;
    writeln!(
        out,
        "kept verbatim: {} messages ({}){}",
        c.cut.tail.len(),
        span(&c.cut.tail),
        if c.tail_shrunk {
            ", shrunk to the minimum: the normal tail did not fit"
        } else {
            ""
        }
    )?;
    let injected = before.iter().filter(|m| is_long_term_memory(m)).count();
    let summaries = c.cut.summaries.len();
    writeln!(
        out,
        "replaced: {} (carried into the new one), {} (injected again); system messages kept: {}",
        if summaries == 1 {
            "1 earlier summary".to_owned()
        } else {
            format!("{summaries} earlier summaries")
        },
        plural(injected, "injected block"),
        c.cut.system.len()
    )?;
    writeln!(
        out,
        "tool results: {} spilled, {} cut as stale, {} cut to fit the total ({} → {} characters)",
        c.trim.spilled,
        c.trim.stale_trimmed,
        c.trim.aggregate_trimmed,
        c.trim.chars_before,
        c.trim.chars_after
    )?;
    for s in &c.spills {
        let verb = if write != Commit::Written {
            "would write"
        } else {
            "wrote"
        };
        writeln!(
            out,
            "  {verb} {}",
            safe_line(&s.relative_path.display().to_string())
        )?;
    }
    if c.appended_items > 0 {
        writeln!(
            out,
            "appendix: {} item(s) the summariser left out are listed under the summary",
            c.appended_items
        )?;
    }
    writeln!(out, "\nsummary:")?;
    for line in c.summary.lines() {
        writeln!(out, "  | {}", safe(line))?;
    }
    writeln!(out, "\ncontext after compaction:")?;
    for (i, m) in c.context.iter().enumerate() {
        let mut line = render_message(i + 1, m);
        if is_long_term_memory(m) {
            line.push_str(" [injected]");
        }
        writeln!(out, "{line}")?;
    }
    if let Some(block) = c.context.iter().find(|m| is_long_term_memory(m)) {
        writeln!(out, "\ninjected again (instructions, memories, date):")?;
        for line in block.text_content().lines() {
            writeln!(out, "  | {}", safe(line))?;
        }
    }
    Ok(())
}
