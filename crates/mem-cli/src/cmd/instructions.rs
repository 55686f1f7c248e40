//! `mem instructions`: the merged instruction text, where each part comes from, the warnings.

use std::io::{self, Write};

use anyhow::Result;
use clap::Args;
use mem_instructions::{Instructions, Warning};
use serde_json::{Value, json};

use crate::args::SourceArgs;
use crate::render::{safe_line, safe_text, warning_json};
use crate::settings::Settings;

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
        writeln!(out, "{}", crate::render::json_pretty(&to_json(&ins))?)?;
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
            safe_line(&settings.user_label(&part.file.to_string())),
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
    print_warnings(&mut out, &ins.warnings, settings)?;
    Ok(())
}

/// Prints `warnings (N):` and one indented line per warning; nothing when there are none.
pub fn print_warnings(
    out: &mut impl Write,
    warnings: &[Warning],
    settings: &Settings,
) -> io::Result<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nwarnings ({}):", warnings.len())?;
    for w in warnings {
        writeln!(out, "  {}", safe_line(&settings.user_label(&w.to_string())))?;
    }
    Ok(())
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
