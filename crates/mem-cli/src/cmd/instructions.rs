//! `mem instructions`: the merged instruction text, where each part comes from, the warnings.

use std::io::{self, Write};
use std::path::Component;

use anyhow::{Result, bail};
use clap::Args;
use mem_instructions::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, Instructions, Limits, LoadOptions, Warning,
};
use serde_json::{Value, json};

use crate::output::{safe_line, safe_text};
use crate::settings::Settings;

/// Which instruction files to read and how much of them (shared by `instructions` and `context`).
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Instruction file names, most preferred first, comma-separated. In each place
    /// (`<project>/`, `<project>/.mewcode/`, `<home>/.mewcode/`) the first that exists is loaded.
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        env = "MEM_INSTRUCTION_NAMES",
        default_value = "MEWCODE.md,AGENTS.md,CLAUDE.md"
    )]
    pub names: Vec<String>,
    /// At most this many bytes of one file are used.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: usize,
    /// At most this many bytes of all instruction files together.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_TOTAL_BYTES)]
    pub max_total_bytes: usize,
}

impl SourceArgs {
    /// Validates the names and builds the loader's options.
    pub fn load_options(&self, settings: &Settings) -> Result<LoadOptions> {
        for name in &self.names {
            let path = std::path::Path::new(name);
            let plain =
                !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
            if !plain {
                bail!(
                    "instruction file name {name:?} must be a relative path without `..` \
                     (e.g. AGENTS.md or docs/AGENTS.md)"
                );
            }
        }
        let mut options = LoadOptions::new(&settings.project, &settings.home);
        options.names = self.names.clone();
        options.limits = Limits {
            max_file_bytes: self.max_file_bytes,
            max_total_bytes: self.max_total_bytes,
            ..Limits::default()
        };
        Ok(options)
    }
}

/// `mem instructions`
#[derive(Debug, Args)]
pub struct InstructionsArgs {
    #[command(flatten)]
    sources: SourceArgs,
}

/// Loads the instructions and prints them with their provenance, then the warnings.
pub fn run(args: InstructionsArgs, settings: &Settings) -> Result<()> {
    let options = args.sources.load_options(settings)?;
    let ins = mem_instructions::load(&options)?;
    let mut out = io::stdout().lock();
    if settings.json {
        writeln!(out, "{}", crate::output::json_pretty(&to_json(&ins))?)?;
        return Ok(());
    }
    if ins.files.is_empty() {
        writeln!(
            out,
            "no instruction file found: looked for {} in {}, {} and {}",
            options.names.join(", "),
            settings.project.display(),
            settings.project_dir().display(),
            settings.user_dir().display()
        )?;
    }
    let mut at_line_start = true;
    for part in &ins.parts {
        if !at_line_start {
            writeln!(out)?;
        }
        let via: Vec<String> = part.via.iter().map(ToString::to_string).collect();
        let via = if via.is_empty() {
            String::new()
        } else {
            format!(" (included from {})", via.join(" > "))
        };
        writeln!(
            out,
            "==> {}:{}-{}{} <==",
            safe_line(&part.file.to_string()),
            part.lines.0,
            part.lines.1,
            safe_line(&via)
        )?;
        write!(out, "{}", safe_text(&part.text))?;
        at_line_start = part.text.ends_with('\n');
    }
    if !at_line_start {
        writeln!(out)?;
    }
    print_warnings(&mut out, &ins.warnings)?;
    Ok(())
}

/// Prints `warnings (N):` and one indented line per warning; nothing when there are none.
pub fn print_warnings(out: &mut impl Write, warnings: &[Warning]) -> io::Result<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nwarnings ({}):", warnings.len())?;
    for w in warnings {
        writeln!(out, "  {}", safe_line(&w.to_string()))?;
    }
    Ok(())
}

/// A warning as JSON: `{file, line, kind, message}`.
pub fn warning_json(w: &Warning) -> Value {
    json!({ "file": w.file, "line": w.line, "kind": format!("{:?}", w.kind), "message": w.message })
}

fn to_json(ins: &Instructions) -> Value {
    let parts: Vec<Value> = ins
        .parts
        .iter()
        .map(|p| {
            let via: Vec<String> = p.via.iter().map(ToString::to_string).collect();
            json!({
                "file": p.file,
                "scope": format!("{:?}", p.scope).to_lowercase(),
                "via": via,
                "lines": [p.lines.0, p.lines.1],
                "text": p.text,
            })
        })
        .collect();
    json!({
        "files": ins.files,
        "text": ins.text,
        "parts": parts,
        "warnings": ins.warnings.iter().map(warning_json).collect::<Vec<_>>(),
    })
}
