//! `mem checkpoint create|list|show|restore|rm`: save a project's whole memory state and go back
//! to it (seed 003 "Checkpoint/Rollback"; `docs/formats/checkpoint.md`), and the automatic
//! checkpoint `mem extract` and `mem compact sweep` take first (`[checkpoint]` of
//! `config.toml`: `auto`, `keep`).

use std::io::Write;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use mem_core::terminal::safe_line;
use mem_tiers::StoreLocation;
use mem_tiers::checkpoint::{
    CheckpointConfig, Checkpoints, CreateOptions, DEFAULT_LOCK_TIMEOUT, Manifest,
};
use serde_json::json;

use crate::settings::Settings;

/// Default number of automatic checkpoints kept.
pub const DEFAULT_KEEP: usize = 10;

/// Arguments of `mem checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    #[command(subcommand)]
    command: CheckpointCommand,
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

/// `[checkpoint]` of `config.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoSettings {
    /// Take a checkpoint before `mem extract` and `mem compact sweep` (default true).
    pub auto: bool,
    /// Automatic checkpoints kept (default [`DEFAULT_KEEP`]).
    pub keep: usize,
}

/// Reads `[checkpoint]` from the user's then the project's `config.toml` (the project wins).
///
/// # Errors
/// An unreadable file, or a `[checkpoint]` that is not `auto = bool`, `keep = N >= 1`.
pub fn auto_settings(settings: &Settings) -> Result<AutoSettings> {
    #[derive(serde::Deserialize, Default)]
    struct File {
        checkpoint: Option<Section>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct Section {
        auto: Option<bool>,
        keep: Option<usize>,
    }
    let mut out = AutoSettings {
        auto: true,
        keep: DEFAULT_KEEP,
    };
    for path in crate::config::config_paths(settings) {
        let read = match mem_instructions::read_capped(&path, crate::config::MAX_CONFIG_BYTES) {
            Ok(r) => r,
            Err(mem_instructions::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let file: File = crate::config::parse_toml(&path, &read.text, "[checkpoint] table")?;
        let Some(section) = file.checkpoint else {
            continue;
        };
        if let Some(a) = section.auto {
            out.auto = a;
        }
        if let Some(k) = section.keep {
            if k == 0 {
                bail!(
                    "{}: checkpoint.keep must be at least 1 (set auto = false to take none)",
                    path.display()
                );
            }
            out.keep = k;
        }
    }
    Ok(out)
}

/// The checkpoints of the project `settings` names, with its configured store.
///
/// # Errors
/// Config errors; the project root cannot be resolved.
pub fn checkpoints(settings: &Settings) -> Result<Checkpoints> {
    let config = crate::open::memory_config(settings)?;
    let (database, team_store) = match crate::open::location(settings, &config)? {
        StoreLocation::Sqlite(path) => (Some(path), None),
        StoreLocation::Postgres { url, options } => (
            None,
            Some(std::sync::Arc::new(mem_tiers::PgStore::open(
                &url, &options,
            )?)),
        ),
    };
    let memory = crate::config::memory_settings(settings)?;
    Ok(Checkpoints::new(CheckpointConfig {
        project_root: settings.project.clone(),
        home: settings.home.clone(),
        auto: memory.auto,
        database,
        busy_timeout: config.busy_timeout,
        lock_timeout: DEFAULT_LOCK_TIMEOUT,
        extra_note_dirs: config.extra_note_dirs.clone(),
        team_store,
    })?)
}

/// Finishes a `mem checkpoint restore` that was killed (its journal
/// `.mewcode/checkpoints/.restore-journal.json`, or its `.tmp` while written, is there) before
/// any command reads the project: two `stat`s when there is none. A failure is one line on stderr (the journal stays,
/// the next command tries again); the command goes on.
pub fn recover_killed_restore(settings: &Settings) {
    let dir = settings
        .project
        .join(".mewcode")
        .join(mem_tiers::checkpoint::CHECKPOINTS_DIR);
    if !dir.join(mem_tiers::checkpoint::JOURNAL_FILE).exists()
        && !dir.join(mem_tiers::checkpoint::JOURNAL_TMP_FILE).exists()
    {
        return;
    }
    if let Err(e) = checkpoints(settings).and_then(|c| Ok(c.recover()?)) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "mem: finishing a killed checkpoint restore failed: {}",
            safe_line(&format!("{e:#}"))
        );
    }
}

/// Takes the automatic checkpoint of a command that changes memory (`reason`: the command),
/// when `[checkpoint] auto` is on; prunes to the last `keep`. Says so on stderr when it is a
/// terminal. Returns the checkpoint's name.
///
/// # Errors
/// The checkpoint cannot be taken: the command must not go on without its undo point.
pub fn auto_checkpoint(settings: &Settings, reason: &str, user: bool) -> Result<Option<String>> {
    let auto = auto_settings(settings)?;
    if !auto.auto {
        return Ok(None);
    }
    settings.guard_write(
        &settings
            .project_dir()
            .join(mem_tiers::checkpoint::CHECKPOINTS_DIR),
    )?;
    let cps = checkpoints(settings)?;
    let (m, _) = cps
        .create_auto(reason, user, auto.keep)
        .with_context(|| format!("cannot take the automatic checkpoint before {reason}"))?;
    if settings.interactive && !settings.json {
        eprintln!(
            "checkpoint {} taken (undo with `mem checkpoint restore {}`)",
            m.name, m.name
        );
    }
    Ok(Some(m.name))
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
