//! `mem context`: the start context an agent gets, exactly as the SessionStart hook and the MCP
//! `context` tool build it (seed §6 `<system-reminder>` block: instructions, auto memories with
//! Tier 0 of the tier store, the date); [`crate::open::start_options`] is the one builder of
//! all three.

use std::io::{self, Write};

use anyhow::Result;
use chrono::NaiveDate;
use clap::Args;
use mewmem::context::{CLAUDE_HOOK_MAX_CHARS, MAX_CONTEXT_CHARS, MIN_BUDGET_CHARS, start_context};
use serde_json::json;

use crate::args::SourceArgs;
use crate::open::start_options;
use crate::render::warning_json;
use crate::settings::Settings;

/// `mem context`
#[derive(Debug, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// The date of the `# currentDate` section (default: today, local time).
    #[arg(long, value_name = "YYYY-MM-DD")]
    date: Option<NaiveDate>,
    /// Cut the block to at most this many characters (UTF-16 code units), as the SessionStart
    /// hook does with its `--budget` (10,000 by default) and MCP `context` with `budget_chars`
    /// (1,000 to 100,000); without it nothing is cut.
    #[arg(
        long,
        value_name = "CHARS",
        value_parser = clap::value_parser!(u64).range(MIN_BUDGET_CHARS as u64..=MAX_CONTEXT_CHARS as u64)
    )]
    budget: Option<u64>,
}

/// Prints the block; warnings and notes go to stderr so stdout is exactly what the agent gets.
pub fn run(args: ContextArgs, settings: &Settings) -> Result<()> {
    let date = args
        .date
        .unwrap_or_else(|| chrono::Local::now().date_naive());
    let budget = args
        .budget
        .map(|b| usize::try_from(b).unwrap_or(usize::MAX));
    let (options, mut problems) = start_options(
        settings,
        args.sources.load_options(settings)?,
        date,
        budget,
        false,
    );
    let ctx = start_context(&options)?;
    problems.splice(0..0, ctx.warnings.iter().map(ToString::to_string));
    // What an agent gets that this output does not show, or the other way round.
    let mut notes = Vec::new();
    if ctx.is_empty() {
        notes.push(
            "no instructions and no memories: the SessionStart hook and MCP `context` send \
             nothing"
                .to_owned(),
        );
    }
    if ctx.cut_chars > 0 {
        notes.push(format!(
            "{} characters cut to fit --budget {}",
            ctx.cut_chars,
            budget.unwrap_or_default()
        ));
    } else if budget.is_none() && mewmem::context::utf16_len(&ctx.text) > CLAUDE_HOOK_MAX_CHARS {
        notes.push(format!(
            "{} characters: the SessionStart hook cuts it to {CLAUDE_HOOK_MAX_CHARS} (`mem \
             context --budget {CLAUDE_HOOK_MAX_CHARS}` shows what it sends)",
            mewmem::context::utf16_len(&ctx.text)
        ));
    }

    if settings.json {
        let value = json!({
            "text": ctx.text,
            "date": date.format("%Y-%m-%d").to_string(),
            "instruction_files": ctx.instruction_files,
            "memory_files": ctx.memory_paths,
            "tier0": options.tier0,
            "cut_chars": ctx.cut_chars,
            "sent": !ctx.is_empty(),
            "warnings": ctx.warnings.iter().map(warning_json).collect::<Vec<_>>(),
            "problems": problems,
            "notes": notes,
        });
        writeln!(
            io::stdout().lock(),
            "{}",
            crate::render::json_pretty(&value)?
        )?;
        return Ok(());
    }
    // Piped, stdout is exactly what the agent would get; on a terminal it is made safe.
    let mut out = io::stdout().lock();
    if io::IsTerminal::is_terminal(&out) {
        writeln!(out, "{}", crate::render::safe_text(&ctx.text))?;
    } else {
        writeln!(out, "{}", ctx.text)?;
    }
    let mut err = io::stderr().lock();
    for p in &problems {
        writeln!(err, "warning: {}", crate::render::safe_line(p))?;
    }
    for n in &notes {
        writeln!(err, "note: {n}")?;
    }
    Ok(())
}
