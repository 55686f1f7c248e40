//! `mem checkpoint create|list|show|restore|rm`: save a project's whole memory state and go back
//! to it (seed 003 "Checkpoint/Rollback"; `docs/formats/checkpoint.md`), on
//! `mewmem::ops::checkpoint`. The automatic checkpoint `mem extract` and `mem compact sweep`
//! take first is `crate::undo`.

use std::io::Write;

use anyhow::Result;
use clap::{Args, Subcommand};
use mem_checkpoint::{Checkpoints, CreateOptions, Manifest};
use mem_core::terminal::safe_line;
use serde_json::json;

use crate::settings::Settings;

/// Arguments of `mem checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    #[command(subcommand)]
    command: CheckpointCommand,
}

impl CheckpointArgs {
    /// Whether the command copies a project's whole memory (create, restore): it allocates in
    /// bulk (`mem_alloc`).
    pub fn allocates_in_bulk(&self) -> bool {
        matches!(
            self.command,
            CheckpointCommand::Create { .. } | CheckpointCommand::Restore { .. }
        )
    }
}

#[derive(Debug, Subcommand)]
enum CheckpointCommand {
    /// Save the project's memory state: session lengths, memories.md, notes, tier store rows.
    Create {
        /// The name (letters, digits, `.`, `_`, `-`); default `cp-<N>`.
        name: Option<String>,
        /// Include the user level (~/.mewcode memories.md and notes, user-wide learnings and
        /// preferences).
        #[arg(long)]
        user: bool,
    },
    /// List the checkpoints, oldest first.
    List,
    /// Show what a checkpoint holds.
    Show {
        /// The checkpoint.
        name: String,
    },
    /// Go back to a checkpoint (a checkpoint of the current state is taken first).
    Restore {
        /// The checkpoint.
        name: String,
        /// Only list what would change.
        #[arg(long)]
        dry_run: bool,
        /// Restore even over changes made by hand since the checkpoint.
        #[arg(long)]
        force: bool,
    },
    /// Delete a checkpoint.
    Rm {
        /// The checkpoint.
        name: String,
    },
}

/// The checkpoints of the project `settings` names, with its configured store
/// ([`mewmem::Memory::checkpoints`]).
///
/// Errors: config errors; the team store cannot be opened.
fn checkpoints(settings: &Settings) -> Result<Checkpoints> {
    crate::open::memory(settings)?
        .checkpoints()
        .map_err(crate::open::lib_error)
}

/// Finishes a `mem checkpoint restore` that was killed (its journal
/// `.mewcode/checkpoints/.restore-journal.json`, or its `.tmp` while written, is there) before
/// any command reads the project: two `stat`s when there is none. A failure is one line on
/// stderr (the journal stays, the next command tries again); the command goes on.
pub fn recover_killed_restore(settings: &Settings) {
    if !mewmem::ops::checkpoint::restore_was_killed(&settings.project) {
        return;
    }
    let recovered = crate::open::memory(settings)
        .and_then(|m| m.recover_killed_restore().map_err(crate::open::lib_error));
    if let Err(e) = recovered {
        let _ = writeln!(
            std::io::stderr().lock(),
            "mem: finishing a killed checkpoint restore failed: {}",
            safe_line(&format!("{e:#}"))
        );
    }
}

fn size(bytes: u64) -> String {
    if bytes >= 10 * 1024 * 1024 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 10 * 1024 {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// `1 session, 2 files (1 memories.md, 1 note), 3 learnings`: the files counted as
/// `mem checkpoint list` and `show` count them ([`Manifest::file_counts`]).
fn summary_line(m: &Manifest) -> String {
    format!(
        "{} session{}, {}, {}",
        m.sessions.len(),
        if m.sessions.len() == 1 { "" } else { "s" },
        m.file_counts(),
        match &m.store {
            Some(s) => format!(
                "{} learning{}",
                s.learnings,
                if s.learnings == 1 { "" } else { "s" }
            ),
            None => "no tier store rows".to_owned(),
        }
    )
}

/// Runs `mem checkpoint ...`.
pub fn run(args: CheckpointArgs, settings: &Settings) -> Result<()> {
    let cps = checkpoints(settings)?;
    let mut out = std::io::stdout().lock();
    match args.command {
        CheckpointCommand::Create { name, user } => {
            settings.guard_write(cps.dir())?;
            let m = cps.create(&CreateOptions {
                name,
                user,
                reason: String::new(),
                auto: false,
            })?;
            if settings.json {
                writeln!(out, "{}", crate::render::json_pretty(&m)?)?;
            } else {
                writeln!(
                    out,
                    "created checkpoint {}{}: {}",
                    m.name,
                    if m.user { " (with the user level)" } else { "" },
                    summary_line(&m)
                )?;
                for n in &m.notes {
                    writeln!(out, "note: {}", safe_line(n))?;
                }
            }
        }
        CheckpointCommand::List => {
            let (list, warnings) = cps.list()?;
            for w in &warnings {
                eprintln!("warning: {}", safe_line(w));
            }
            if settings.json {
                writeln!(
                    out,
                    "{}",
                    crate::render::json_pretty(
                        &json!({"checkpoints": list, "warnings": warnings})
                    )?
                )?;
                return Ok(());
            }
            if list.is_empty() {
                writeln!(
                    out,
                    "no checkpoints in {} (take one with `mem checkpoint create`)",
                    safe_line(&cps.dir().display().to_string())
                )?;
                return Ok(());
            }
            for s in &list {
                writeln!(
                    out,
                    "{:<32} {}  {:>3} sessions {:>4} files {:>6} learnings {:>9}  {}{}",
                    s.name,
                    safe_line(&s.created),
                    s.sessions,
                    s.files,
                    s.learnings,
                    size(s.bytes),
                    safe_line(&s.reason),
                    if s.user { " (+user)" } else { "" }
                )?;
            }
        }
        CheckpointCommand::Show { name } => {
            let m = cps.show(&name)?;
            if settings.json {
                writeln!(out, "{}", crate::render::json_pretty(&m)?)?;
                return Ok(());
            }
            writeln!(out, "checkpoint {}", m.name)?;
            writeln!(out, "created: {}", safe_line(&m.created))?;
            writeln!(out, "reason: {}", safe_line(&m.reason))?;
            writeln!(
                out,
                "levels: project{}",
                if m.user { " + user" } else { "" }
            )?;
            writeln!(out, "sessions ({}):", m.sessions.len())?;
            for s in &m.sessions {
                writeln!(
                    out,
                    "  {}  {} bytes, {} messages, {} tokens in the replay",
                    safe_line(&s.id),
                    s.bytes,
                    s.messages,
                    s.token_count
                )?;
            }
            writeln!(out, "files: {}", m.file_counts())?;
            for f in m.files.iter().filter(|f| f.kind != "memories-meta") {
                // A memories.md's sidecar is shown with it, not counted as a file.
                let sidecar = m
                    .files
                    .iter()
                    .find(|x| {
                        x.kind == "memories-meta" && f.kind == "memories" && x.scope == f.scope
                    })
                    .map(|x| format!(" (+ {} {} bytes)", safe_line(&x.name), x.bytes))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  {}  {} bytes{sidecar}",
                    safe_line(&f.label()),
                    f.bytes
                )?;
            }
            match &m.store {
                Some(s) => writeln!(
                    out,
                    "tier store: {} learnings (schema {}, {}{})",
                    s.learnings,
                    s.schema_version,
                    safe_line(&s.scope.project_key),
                    if s.scope.user { " + user-wide" } else { "" }
                )?,
                None => writeln!(out, "tier store: not included")?,
            }
            for n in &m.notes {
                writeln!(out, "note: {}", safe_line(n))?;
            }
        }
        CheckpointCommand::Restore {
            name,
            dry_run,
            force,
        } => {
            if !dry_run {
                settings.guard_write(cps.dir())?;
            }
            let report = cps.restore(&name, dry_run, force)?;
            if settings.json {
                writeln!(out, "{}", crate::render::json_pretty(&report)?)?;
                return Ok(());
            }
            let verb = if dry_run { "would " } else { "" };
            for c in &report.changes {
                writeln!(
                    out,
                    "{verb}{} {}: {}",
                    c.action,
                    safe_line(&c.item),
                    safe_line(&c.detail)
                )?;
            }
            for c in &report.conflicts {
                writeln!(
                    out,
                    "conflict: {}: {}{}",
                    safe_line(&c.item),
                    safe_line(&c.reason),
                    if dry_run {
                        " (a restore needs --force)"
                    } else {
                        " (overwritten: --force)"
                    }
                )?;
            }
            for w in &report.warnings {
                writeln!(out, "warning: {}", safe_line(w))?;
            }
            if report.changes.is_empty() {
                writeln!(
                    out,
                    "nothing to restore: the state is the one of checkpoint {name}"
                )?;
            } else if dry_run {
                writeln!(out, "dry run: nothing was changed")?;
            } else {
                writeln!(out, "restored checkpoint {name}")?;
                if let Some(pre) = &report.pre_restore {
                    writeln!(
                        out,
                        "the state before is checkpoint {pre} (undo with `mem checkpoint restore {pre}`)"
                    )?;
                }
            }
        }
        CheckpointCommand::Rm { name } => {
            cps.remove(&name)?;
            if settings.json {
                writeln!(
                    out,
                    "{}",
                    crate::render::json_pretty(&json!({"removed": name}))?
                )?;
            } else {
                writeln!(out, "removed checkpoint {name}")?;
            }
        }
    }
    Ok(())
}
