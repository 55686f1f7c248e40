//! `mem skill suggest|generate`: skills from learnings (seed 003 "自动 Skills — 从经验自动生成
//! Skill"; `docs/SKILLS.md`), on `mewmem::ops::skill`.
//!
//! `[skills]` of `config.toml` (user's, then the project's; the project wins): `dir` (where
//! skills are written; relative to the project; `~/` is the home; default `.claude/skills`),
//! `min_memories`, `min_sessions`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use mem_core::terminal::safe_line;
use mem_llm::Job;
use mem_skills::{self as skill, Group, SuggestOptions, WriteOptions, WriteStatus};
use mewmem::ops::skill::{SkillSource, generate};
use serde_json::{Value, json};

use crate::args::EngineArgs;
use crate::open::{engine_for, lib_error};
use crate::render::plural;
use crate::settings::Settings;

/// The default skills folder, relative to the project: where Claude Code looks.
pub const DEFAULT_DIR: &str = ".claude/skills";

/// Arguments of `mem skill`.
#[derive(Debug, Args)]
pub struct SkillArgs {
    #[command(subcommand)]
    command: SkillCommand,
}

#[derive(Debug, Args)]
struct GroupingArgs {
    /// Fewest memories in a group (default 3, or `[skills] min_memories`).
    #[arg(long, value_name = "N")]
    min: Option<usize>,
    /// Fewest sessions (distinct days) its memories were seen in (default 2, or `[skills]
    /// min_sessions`).
    #[arg(long, value_name = "N")]
    min_sessions: Option<usize>,
}

#[derive(Debug, Subcommand)]
enum SkillCommand {
    /// List groups of related learnings, notes and memories.md entries that would make a skill.
    Suggest {
        #[command(flatten)]
        grouping: GroupingArgs,
        /// Most groups listed.
        #[arg(long, default_value_t = 20, value_parser = super::parse_limit)]
        limit: usize,
    },
    /// Write <dir>/<name>/SKILL.md from a suggested group (its id or name) or from memory ids.
    Generate {
        /// A group of `mem skill suggest`: its id (`G1a2b3c4d`) or its name.
        #[arg(required_unless_present = "from", conflicts_with = "from")]
        group: Option<String>,
        /// The memories to draw from instead: ids such as L42, M3f9a0c1e, N:project/db.md.
        #[arg(long, num_args = 1.., value_name = "ID")]
        from: Vec<String>,
        /// The skill's name (made safe: lowercase letters, digits, hyphens).
        #[arg(long)]
        name: Option<String>,
        /// The skills folder (default the project's .claude/skills, or `[skills] dir`).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// When SKILL.md was edited by hand, write SKILL.mewmem.md beside it instead of failing.
        #[arg(long)]
        beside: bool,
        /// Print the SKILL.md; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        grouping: GroupingArgs,
        #[command(flatten)]
        engine: EngineArgs,
    },
}

/// `[skills]` of `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSettings {
    /// `dir`, resolved.
    pub dir: Option<PathBuf>,
    /// `min_memories`.
    pub min_memories: Option<usize>,
    /// `min_sessions`.
    pub min_sessions: Option<usize>,
}

/// Reads `[skills]` from the user's then the project's `config.toml` (the project wins).
///
/// # Errors
/// An unreadable file, or a `[skills]` with unknown keys or values out of range, naming the file.
pub fn skill_settings(settings: &Settings) -> Result<SkillSettings> {
    #[derive(serde::Deserialize, Default)]
    struct File {
        skills: Option<Section>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct Section {
        dir: Option<String>,
        min_memories: Option<usize>,
        min_sessions: Option<usize>,
    }
    let mut out = SkillSettings::default();
    let [_, project_file] = crate::config::config_paths(settings);
    for path in crate::config::config_paths(settings) {
        let Some(read) = crate::config::read_config_text(&path)? else {
            continue;
        };
        if read.truncated || read.lossy {
            bail!("{} is too large or not UTF-8", path.display());
        }
        let file: File = toml::from_str(&read.text)
            .with_context(|| format!("{}: invalid [skills] table", path.display()))?;
        let Some(section) = file.skills else {
            continue;
        };
        if let Some(d) = section.dir {
            if d.trim().is_empty() {
                bail!("{}: skills.dir is empty", path.display());
            }
            // A project's config comes with the repository: it may not send writes outside it.
            let escapes = d.starts_with("~/")
                || std::path::Path::new(&d).components().any(|c| {
                    !matches!(
                        c,
                        std::path::Component::Normal(_) | std::path::Component::CurDir
                    )
                });
            if path == project_file && escapes {
                bail!(
                    "{}: skills.dir = {d:?} is refused: a project's config may only name a folder \
                     inside the project; set it in ~/.mewcode/config.toml or pass --dir",
                    path.display()
                );
            }
            out.dir = Some(match d.strip_prefix("~/") {
                Some(rest) => settings.home.join(rest),
                None => settings.project.join(d),
            });
        }
        for (key, value, slot) in [
            ("min_memories", section.min_memories, &mut out.min_memories),
            ("min_sessions", section.min_sessions, &mut out.min_sessions),
        ] {
            if let Some(v) = value {
                if v == 0 {
                    bail!("{}: skills.{key} must be at least 1", path.display());
                }
                *slot = Some(v);
            }
        }
    }
    Ok(out)
}

fn options(config: &SkillSettings, grouping: &GroupingArgs, limit: usize) -> SuggestOptions {
    let defaults = SuggestOptions::default();
    SuggestOptions {
        min_items: grouping
            .min
            .or(config.min_memories)
            .unwrap_or(defaults.min_items)
            .max(2),
        min_sessions: grouping
            .min_sessions
            .or(config.min_sessions)
            .unwrap_or(defaults.min_sessions)
            .max(1),
        max_groups: limit,
        ..defaults
    }
}

fn member_json(m: &skill::Item) -> Value {
    json!({
        "id": m.id,
        "kind": m.source.as_str(),
        "scope": m.scope,
        "title": m.title,
        "category": m.category,
        "tags": m.tags,
        "sessions": m.sessions.len(),
    })
}

fn group_json(g: &Group) -> Value {
    json!({
        "id": g.id,
        "name": g.name,
        "terms": g.terms,
        "memories": g.members.len(),
        "sessions": g.sessions,
        "cohesion": (g.cohesion * 1000.0).round() / 1000.0,
        "members": g.members.iter().map(member_json).collect::<Vec<_>>(),
    })
}

/// Runs `mem skill ...`.
pub async fn run(args: SkillArgs, settings: &Settings) -> Result<()> {
    let config = skill_settings(settings)?;
    match args.command {
        SkillCommand::Suggest { grouping, limit } => {
            if limit == 0 {
                bail!("--limit must be at least 1");
            }
            let opts = options(&config, &grouping, limit);
            let found = crate::open::memory(settings)?
                .suggest_skills(&opts)
                .map_err(lib_error)?;
            print_suggestions(
                settings,
                &found.collected,
                &found.groups,
                &opts,
                &grouping,
                found.short_of_sessions,
            )
        }
        SkillCommand::Generate {
            group,
            from,
            name,
            dir,
            beside,
            dry_run,
            grouping,
            engine,
        } => {
            let source = match group {
                Some(wanted) => SkillSource::Group(wanted),
                None => SkillSource::Ids(from),
            };
            let group = crate::open::memory(settings)?
                .skill_group(&source, &options(&config, &grouping, usize::MAX))
                .map_err(lib_error)?;
            let dir = dir
                .map(|d| {
                    if d.is_absolute() {
                        d
                    } else {
                        std::env::current_dir().unwrap_or_default().join(d)
                    }
                })
                .or(config.dir)
                .unwrap_or_else(|| settings.project.join(DEFAULT_DIR));
            if dir.starts_with(&settings.project) && !dry_run {
                settings.guard_write(&dir)?;
            }
            let llm = engine_for(settings, Job::Skill, &engine)?;
            let generated = generate(
                &group,
                name.as_deref(),
                llm.as_ref(),
                &WriteOptions {
                    dir,
                    beside,
                    dry_run,
                },
            )
            .await
            .map_err(lib_error)?;
            print_generated(
                settings,
                &group,
                &generated.reply,
                &generated.written,
                generated.steps,
                generated.pitfalls,
            )
        }
    }
}

impl GroupingArgs {
    /// The flags as given on the command line (` --min 2 --min-sessions 1`), for a printed
    /// command that finds the same groups; empty when none was given.
    fn flags(&self) -> String {
        let mut s = String::new();
        if let Some(n) = self.min {
            s.push_str(&format!(" --min {n}"));
        }
        if let Some(n) = self.min_sessions {
            s.push_str(&format!(" --min-sessions {n}"));
        }
        s
    }
}

/// Prints the groups; `short`: when none was found but some would be with `--min-sessions 1`,
/// how many and the most sessions one of them was seen in.
fn print_suggestions(
    settings: &Settings,
    collected: &skill::Collected,
    groups: &[Group],
    opts: &SuggestOptions,
    grouping: &GroupingArgs,
    short: Option<(usize, usize)>,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if settings.json {
        let doc = json!({
            "considered": skill::considered(collected),
            "min_memories": opts.min_items,
            "min_sessions": opts.min_sessions,
            "groups": groups.iter().map(group_json).collect::<Vec<_>>(),
            "short_of_sessions": short.map(|(n, most)| json!({"groups": n, "most_sessions": most})),
            "warnings": collected.warnings,
        });
        writeln!(out, "{}", crate::render::json_pretty(&doc)?)?;
        return Ok(());
    }
    let c = skill::considered(collected);
    let seen = format!(
        "{}, {}, {}",
        plural(c["learning"], "learning", "learnings"),
        plural(c["entry"], "memories.md entry", "memories.md entries"),
        plural(c["note"], "note", "notes")
    );
    if groups.is_empty() {
        writeln!(
            out,
            "no group of at least {} related memories seen in {} (looked at {seen})",
            opts.min_items,
            plural(opts.min_sessions, "session", "sessions")
        )?;
        if let Some((n, most)) = short {
            writeln!(
                out,
                "only the sessions fell short: {} of at least {} related memories {}, but seen \
                 in at most {} (a group must come back on {} distinct days); `mem skill suggest \
                 --min {} --min-sessions {most}` lists {}",
                plural(n, "group", "groups"),
                opts.min_items,
                if n == 1 { "exists" } else { "exist" },
                plural(most, "session", "sessions"),
                opts.min_sessions,
                opts.min_items,
                if n == 1 { "it" } else { "them" },
            )?;
        }
    } else {
        writeln!(
            out,
            "{} that would make a skill (looked at {seen}):",
            plural(groups.len(), "group", "groups")
        )?;
    }
    for g in groups {
        writeln!(
            out,
            "\n{}  {}  {}, {}, cohesion {:.2}",
            g.id,
            safe_line(&g.name),
            plural(g.members.len(), "memory", "memories"),
            plural(g.sessions, "session", "sessions"),
            g.cohesion
        )?;
        writeln!(out, "  about: {}", safe_line(&g.topic()))?;
        for m in &g.members {
            let title = mem_llm::offline::skill::one_line(&m.title, 60);
            let text = mem_llm::offline::skill::one_line(&m.text, 70);
            writeln!(
                out,
                "  {}  {}: {}",
                m.id,
                safe_line(&title),
                safe_line(&text)
            )?;
        }
        writeln!(
            out,
            "  write it: mem skill generate {}{}",
            g.id,
            grouping.flags()
        )?;
    }
    for w in &collected.warnings {
        writeln!(out, "warning: {}", safe_line(w))?;
    }
    Ok(())
}

fn print_generated(
    settings: &Settings,
    group: &Group,
    reply: &mem_llm::Reply<mem_llm::SkillDraft>,
    written: &skill::Written,
    steps: usize,
    pitfalls: usize,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if settings.json {
        let doc = json!({
            "name": written.name,
            "path": written.path,
            "status": written.status.as_str(),
            "group": group.id,
            "sources": group.ids(),
            "steps": steps,
            "pitfalls": pitfalls,
            "engine": reply.engine,
            "fallback": reply.fallback,
            "dropped": reply.dropped,
            "withheld": written.withheld,
            "text": if written.status == WriteStatus::DryRun { Some(&written.text) } else { None },
        });
        writeln!(out, "{}", crate::render::json_pretty(&doc)?)?;
        return Ok(());
    }
    if written.status == WriteStatus::DryRun {
        write!(out, "{}", mem_core::terminal::safe(&written.text))?;
        writeln!(
            out,
            "\n(dry run: {} not written)",
            safe_line(&written.path.display().to_string())
        )?;
    } else {
        let what = match written.status {
            WriteStatus::Created => "wrote",
            WriteStatus::Updated => "updated",
            WriteStatus::Unchanged => "unchanged",
            WriteStatus::Beside => "SKILL.md was edited by hand; wrote beside it",
            WriteStatus::DryRun => "would write",
        };
        writeln!(
            out,
            "{what} {}",
            safe_line(&written.path.display().to_string())
        )?;
    }
    writeln!(
        out,
        "  skill {}: {}, {} from {}; engine {}",
        safe_line(&written.name),
        plural(steps, "step", "steps"),
        plural(pitfalls, "pitfall", "pitfalls"),
        safe_line(&group.ids().join(", ")),
        safe_line(&reply.engine)
    )?;
    if let Some(reason) = &reply.fallback {
        writeln!(
            out,
            "  note: the model's reply was unusable; the offline template answered ({})",
            safe_line(reason)
        )?;
    }
    for d in &reply.dropped {
        writeln!(out, "  dropped from the reply: {}", safe_line(d))?;
    }
    if written.withheld > 0 {
        writeln!(
            out,
            "  {} withheld",
            plural(written.withheld, "secret", "secrets")
        )?;
    }
    Ok(())
}
