//! `mem context`: the whole `<system-reminder>` block an agent sends at the start of a turn
//! (seed §6): instructions, auto memories and the date.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use chrono::NaiveDate;
use clap::Args;
use mem_instructions::{ReadError, read_capped};
use serde_json::json;

use super::instructions::{SourceArgs, warning_json};
use crate::settings::Settings;

/// At most this many bytes of each `memories.md` are read (1 MiB).
const MAX_MEMORY_BYTES: usize = 1024 * 1024;

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
    let mut problems: Vec<String> = ins.warnings.iter().map(ToString::to_string).collect();
    let memory_files = [
        settings.user_dir().join("memories.md"),
        settings.project_dir().join("memories.md"),
    ];
    let mut memories = Vec::new();
    let mut read_files: Vec<&PathBuf> = Vec::new();
    for path in &memory_files {
        if let Some(text) = read_memories(path, &mut problems) {
            read_files.push(path);
            if !text.trim().is_empty() {
                memories.push(text.trim_end().to_owned());
            }
        }
    }
    let date = args
        .date
        .unwrap_or_else(|| chrono::Local::now().date_naive());
    let block =
        mem_core::render_long_term_memory(&ins.section_body(), &memories.join("\n\n"), date);

    if settings.json {
        let value = json!({
            "text": block,
            "date": date.format("%Y-%m-%d").to_string(),
            "instruction_files": ins.files,
            "memory_files": read_files,
            "warnings": ins.warnings.iter().map(warning_json).collect::<Vec<_>>(),
            "problems": problems,
        });
        writeln!(
            io::stdout().lock(),
            "{}",
            serde_json::to_string_pretty(&value)?
        )?;
        return Ok(());
    }
    writeln!(io::stdout().lock(), "{block}")?;
    let mut err = io::stderr().lock();
    for p in &problems {
        writeln!(err, "warning: {p}")?;
    }
    Ok(())
}

/// Reads one `memories.md` as it is; `None` when it does not exist or cannot be read (the
/// reason is added to `problems`).
fn read_memories(path: &Path, problems: &mut Vec<String>) -> Option<String> {
    match read_capped(path, MAX_MEMORY_BYTES) {
        Ok(read) => {
            if read.truncated {
                problems.push(format!(
                    "{}: {} bytes, only the first {} are used",
                    path.display(),
                    read.size,
                    read.text.len()
                ));
            }
            if read.lossy {
                problems.push(format!(
                    "{}: invalid UTF-8 replaced by U+FFFD",
                    path.display()
                ));
            }
            Some(read.text)
        }
        Err(ReadError::Io(e)) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(format!("{}: not read: {e}", path.display()));
            None
        }
    }
}
