//! `mem note add|list|show|rm`: the memory notes of seed 000 §4, written atomically with a valid
//! frontmatter through the secret filter, listed and removed by id (`N:<scope>/<file>`).

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use mem_core::terminal::{safe, safe_line};
use mem_recall::{NewNote, Scope};
use serde_json::json;

use crate::open::{given_dirs, lib_error, print_warnings};
use crate::settings::Settings;

/// Arguments of `mem note`.
#[derive(Debug, Args)]
pub struct NoteArgs {
    #[command(subcommand)]
    command: NoteCommand,
}

#[derive(Debug, Subcommand)]
enum NoteCommand {
    /// Write a new note into `<project>/.mewcode/memory/` (or `~/.mewcode/memory/` with --user).
    Add {
        /// The note's name (also makes its file name).
        #[arg(long)]
        name: String,
        /// One line saying what the note is for (what recall selects on).
        #[arg(long)]
        description: String,
        /// user, feedback, project or reference.
        #[arg(long = "type", value_name = "TYPE")]
        kind: String,
        /// Write into the user-level directory instead of the project's.
        #[arg(long)]
        user: bool,
        /// Replace a note of the same file name.
        #[arg(long)]
        force: bool,
        /// The body; `-` reads it from standard input.
        body: Option<String>,
    },
    /// List the notes (newest first) with their ids.
    List {
        /// Memory directories to use instead of the configured ones.
        #[arg(long, value_name = "DIR")]
        dir: Vec<PathBuf>,
    },
    /// Print one note by id (`N:project/testing.md`).
    Show {
        /// The note id.
        id: String,
    },
    /// Delete one note by id.
    Rm {
        /// The note id.
        id: String,
    },
}

/// Runs `mem note ...`.
pub fn run(args: NoteArgs, settings: &Settings) -> Result<()> {
    let memory = crate::open::memory(settings)?;
    match args.command {
        NoteCommand::Add {
            name,
            description,
            kind,
            user,
            force,
            body,
        } => {
            // One cap with MCP `memory_add`: stdin is read up to one byte past it, never whole.
            let cap = mem_tiers::MAX_CONTENT_BYTES;
            let body = match body.as_deref() {
                Some("-") => {
                    let mut text = String::new();
                    std::io::stdin()
                        .take(cap as u64 + 1)
                        .read_to_string(&mut text)
                        .context("cannot read the body from standard input")?;
                    if text.len() > cap {
                        bail!(
                            "the note's body on standard input is over {cap} bytes (1 MiB), the \
                             cap of every memory write; nothing was written"
                        );
                    }
                    text
                }
                Some(b) if b.len() > cap => bail!(
                    "the note's body is {} bytes, over {cap} (1 MiB), the cap of every memory \
                     write; nothing was written",
                    b.len()
                ),
                Some(b) => b.to_owned(),
                None => String::new(),
            };
            let scope = if user { Scope::User } else { Scope::Project };
            let written = memory
                .add_note(
                    scope,
                    &NewNote {
                        name,
                        description,
                        kind,
                        body,
                    },
                    force,
                )
                .map_err(lib_error)?;
            if settings.json {
                println!(
                    "{}",
                    crate::render::json_pretty(&json!({
                        "id": written.id,
                        "path": written.path,
                        "withheld": written.withheld,
                        "replaced": written.replaced,
                    }))?
                );
            } else {
                println!(
                    "{} {} ({})",
                    if written.replaced {
                        "replaced"
                    } else {
                        "wrote"
                    },
                    safe_line(&written.id.to_string()),
                    safe_line(&written.path.display().to_string())
                );
                if written.withheld > 0 {
                    println!(
                        "withheld {} secret(s): replaced by {}",
                        written.withheld,
                        mem_core::secrets::REDACTED
                    );
                }
            }
            Ok(())
        }
        NoteCommand::List { dir } => {
            let dirs = if dir.is_empty() {
                None
            } else {
                Some(given_dirs(&dir)?)
            };
            let scan = memory.notes(dirs.as_ref()).map_err(lib_error)?;
            for w in &scan.warnings {
                eprintln!("warning: {}", safe_line(&w.to_string()));
            }
            if scan.over_limit > 0 {
                eprintln!(
                    "warning: {} older notes not listed (at most {} are read)",
                    scan.over_limit,
                    mem_recall::MAX_NOTES
                );
            }
            if settings.json {
                println!("{}", crate::render::json_pretty(&scan.notes)?);
                return Ok(());
            }
            if scan.notes.is_empty() {
                println!("(no notes)");
            }
            for note in &scan.notes {
                println!(
                    "{}  [{}]  {}",
                    safe_line(&note.id.to_string()),
                    note.kind.as_deref().unwrap_or("-"),
                    safe_line(&note.name)
                );
                if !note.description.is_empty() {
                    println!("    {}", safe_line(&note.description));
                }
            }
            Ok(())
        }
        NoteCommand::Show { id } => {
            let note = memory.note(&id).map_err(lib_error)?;
            if settings.json {
                let mut value = serde_json::to_value(&note)?;
                value["body"] = json!(note.body);
                println!("{}", crate::render::json_pretty(&value)?);
                return Ok(());
            }
            println!("id: {}", safe_line(&note.id.to_string()));
            println!("path: {}", safe_line(&note.path.display().to_string()));
            println!("name: {}", safe_line(&note.name));
            println!("description: {}", safe_line(&note.description));
            println!("type: {}", safe_line(note.kind.as_deref().unwrap_or("-")));
            println!();
            println!("{}", safe(note.body.trim_matches('\n')));
            Ok(())
        }
        NoteCommand::Rm { id } => {
            let removed = memory.remove_note(&id).map_err(lib_error)?;
            print_warnings(&removed.warnings);
            let (parsed, path) = (removed.id, removed.path);
            if settings.json {
                println!(
                    "{}",
                    crate::render::json_pretty(&json!({"removed": parsed, "path": path}))?
                );
            } else {
                println!("removed {parsed} ({})", path.display());
            }
            if !path.exists() {
                return Ok(());
            }
            bail!("{} still exists after removal", path.display())
        }
    }
}
