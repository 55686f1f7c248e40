//! `mem context`: the start context an agent gets, exactly as the SessionStart hook and the MCP
//! `context` tool build it (seed §6 `<system-reminder>` block: instructions, auto memories with
//! Tier 0 of the tier store, the date). [`start_options`] is the one builder of all three.

use std::io::{self, Write};

use anyhow::Result;
use chrono::NaiveDate;
use clap::Args;
use mem_instructions::LoadOptions;
use mewmem::context::{CLAUDE_HOOK_MAX_CHARS, ContextOptions, MIN_BUDGET_CHARS, start_context};
use serde_json::json;

use super::instructions::{SourceArgs, warning_json};
use super::mcp::MAX_CONTEXT_CHARS;
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

/// The options of the start context of `settings.project` (the one builder behind the
/// SessionStart hook, the MCP `context` tool and `mem context`): `instructions` as given, the
/// `memories.md` files of the project and `settings.home`, Tier 0 of the configured tier store
/// (SQLite or PostgreSQL) after the entries, `date`, at most `budget` characters (`None`: no
/// limit). `remember_counts`: Tier 0's token counts are kept in
/// `<storage_dir>/cache/token-counts` ([`mem_tiers::MemoryConfig::count_cache`]) so that the next
/// process fitting the same Tier 0 does not load the BPE vocabulary (the SessionStart hook, a
/// new process per event); read-only callers pass `false` and write nothing.
///
/// A tier store that cannot be opened or read never costs the rest: Tier 0 is left out and the
/// second value holds one line that says so (`Tier 0 left out: <why>`).
pub(crate) fn start_options(
    settings: &Settings,
    instructions: LoadOptions,
    date: NaiveDate,
    budget: Option<usize>,
    remember_counts: bool,
) -> (ContextOptions, Vec<String>) {
    let mut options = ContextOptions::new(&settings.project, &settings.home, date);
    options.instructions = instructions;
    options.budget_chars = budget;
    let mut problems = Vec::new();
    let opened = super::memory::memory_config(settings).and_then(|mut config| {
        if remember_counts {
            config.count_cache = Some(config.storage_dir.join("cache").join("token-counts"));
        }
        super::memory::open_manager_with(settings, config)
    });
    match opened.and_then(|mm| Ok(mewmem::context::tier0_of(&mm)?)) {
        Ok(t) => options.tier0 = t,
        Err(e) => problems.push(format!("Tier 0 left out: {e:#}")),
    }
    (options, problems)
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
            crate::output::json_pretty(&value)?
        )?;
        return Ok(());
    }
    // Piped, stdout is exactly what the agent would get; on a terminal it is made safe.
    let mut out = io::stdout().lock();
    if io::IsTerminal::is_terminal(&out) {
        writeln!(out, "{}", crate::output::safe_text(&ctx.text))?;
    } else {
        writeln!(out, "{}", ctx.text)?;
    }
    let mut err = io::stderr().lock();
    for p in &problems {
        writeln!(err, "warning: {}", crate::output::safe_line(p))?;
    }
    for n in &notes {
        writeln!(err, "note: {n}")?;
    }
    Ok(())
}
