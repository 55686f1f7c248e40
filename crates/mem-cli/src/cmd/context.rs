//! `mem context`: the whole `<system-reminder>` block an agent sends at the start of a turn
//! (seed §6): instructions, auto memories and the date.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use chrono::NaiveDate;
use clap::Args;
use mem_auto::{MemoryOptions, load_memories};
use mem_instructions::Warning;
use serde_json::json;

use super::instructions::{SourceArgs, warning_json};
use crate::settings::Settings;

/// `mem context`
#[derive(Debug, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// The date of the `# currentDate` section (default: today, local time).
    #[arg(long, value_name = "YYYY-MM-DD")]
    date: Option<NaiveDate>,
}

/// Prints the block; warnings go to stderr so stdout is exactly what the agent would send.
pub fn run(args: ContextArgs, settings: &Settings) -> Result<()> {
    let ins = mem_instructions::load(&args.sources.load_options(settings)?)?;
    let mem = load_memories(&MemoryOptions::new(&settings.project, &settings.home))?;
    let warnings: Vec<&Warning> = ins.warnings.iter().chain(&mem.warnings).collect();
    let date = args
        .date
        .unwrap_or_else(|| chrono::Local::now().date_naive());
    let block = mem_core::render_long_term_memory(&ins.section_body(), &mem.text(), date);

    if settings.json {
        let memory_files: Vec<&PathBuf> = mem.files.iter().map(|f| &f.path).collect();
        let value = json!({
            "text": block,
            "date": date.format("%Y-%m-%d").to_string(),
            "instruction_files": ins.files,
            "memory_files": memory_files,
            "warnings": warnings.iter().map(|w| warning_json(w)).collect::<Vec<_>>(),
            "problems": warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
        writeln!(
            io::stdout().lock(),
            "{}",
            crate::output::json_pretty(&value)?
        )?;
        return Ok(());
    }
    // Piped, stdout is exactly what the agent would send; on a terminal it is made safe.
    let mut out = io::stdout().lock();
    if io::IsTerminal::is_terminal(&out) {
        writeln!(out, "{}", crate::output::safe_text(&block))?;
    } else {
        writeln!(out, "{block}")?;
    }
    let mut err = io::stderr().lock();
    for w in &warnings {
        writeln!(err, "warning: {}", crate::output::safe_line(&w.to_string()))?;
    }
    Ok(())
}
