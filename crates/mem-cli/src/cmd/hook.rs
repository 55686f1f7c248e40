//! `mem hook claude EVENT` (Claude Code hooks: payload on stdin, context on stdout, failures
//! logged and exit 0) and `mem hook install|uninstall` (merging the hooks into settings.json).

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use chrono::NaiveDate;
use clap::{Args, Subcommand};
use mem_llm::{Job, Llm};
use mem_recall::MemoryDirs;
use mewmem::context::{CLAUDE_HOOK_MAX_CHARS, ContextOptions};
use mewmem::hook::{
    ClaudeEvent, ExtractConfig, HookConfig, HookInput, log_line, log_path, run_claude,
};
use mewmem::install::{Agent, Change, install_with, uninstall_for};

use crate::config::{llm_settings, memory_settings, recall_extra_dirs};

use crate::settings::Settings;

/// `mem hook`
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    /// Run as a Claude Code hook: reads the event's JSON on stdin, prints what to add. Never
    /// fails the hook: problems are logged to <project>/.mewcode/logs/hooks.log, exit code 0.
    Claude(ClaudeArgs),
    /// Run as a Codex CLI hook (the same payload and output as Claude Code's): SessionStart's
    /// context also fits --max-tokens (Codex keeps about 2,500 tokens of it). Never fails the
    /// hook: problems are logged to <project>/.mewcode/logs/hooks.log, exit code 0.
    Codex(CodexArgs),
    /// Add mewmem's hooks to a Claude Code settings.json, or with --agent codex to a Codex
    /// hooks.json (other hooks and settings are kept; the old file is backed up first; running
    /// it again changes nothing).
    Install(InstallArgs),
    /// Remove mewmem's hooks from a Claude Code settings.json or a Codex hooks.json (other hooks
    /// are kept).
    Uninstall(WhereArgs),
}

#[derive(Debug, Args)]
struct ClaudeArgs {
    /// The hook event: SessionStart, UserPromptSubmit, PreCompact, Stop or SessionEnd.
    #[arg(value_name = "EVENT", value_parser = parse_event)]
    event: ClaudeEvent,
    /// Read the payload from FILE instead of stdin (for testing a hook by hand).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// At most this many characters of added context (at most 10000: past that Claude Code
    /// shows the model only a preview).
    #[arg(long, value_name = "CHARS", env = "MEM_HOOK_BUDGET", default_value_t = CLAUDE_HOOK_MAX_CHARS)]
    budget: usize,
    /// Instruction file names for the start context, comma-separated. Whatever the names, the
    /// files the client loads itself are left out (Claude Code: CLAUDE.md, and AGENTS.md when
    /// there is no CLAUDE.md; Codex: AGENTS.md).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        env = "MEM_HOOK_INSTRUCTION_NAMES",
        default_value = "MEWCODE.md,AGENTS.md"
    )]
    names: Vec<String>,
    /// The date of the `# currentDate` section (default: today, local time).
    #[arg(long, value_name = "YYYY-MM-DD")]
    date: Option<NaiveDate>,
    /// PreCompact, Stop, SessionEnd: seconds the memory extraction may take before it is left
    /// for the next hook (keep it under the hook's timeout, 30 s as installed).
    #[arg(
        long,
        value_name = "SECS",
        env = "MEM_HOOK_EXTRACT_TIMEOUT",
        default_value_t = 20
    )]
    extract_timeout: u64,
}

#[derive(Debug, Args)]
struct CodexArgs {
    #[command(flatten)]
    common: ClaudeArgs,
    /// SessionStart: at most this many tokens of added context (o200k; Codex cuts a
    /// SessionStart hook's context near 2,500 tokens).
    #[arg(
        long,
        value_name = "TOKENS",
        env = "MEM_CODEX_HOOK_TOKENS",
        default_value_t = 2_500
    )]
    max_tokens: usize,
}

fn parse_event(s: &str) -> std::result::Result<ClaudeEvent, String> {
    s.parse()
}

#[derive(Debug, Args)]
struct WhereArgs {
    /// The agent: `claude` (Claude Code's settings.json) or `codex` (Codex CLI's hooks.json).
    #[arg(long, value_enum, default_value_t = AgentArg::Claude)]
    agent: AgentArg,
    /// Which settings file: `user` (<home>/.claude/settings.json; Codex:
    /// $CODEX_HOME/hooks.json, default <home>/.codex/hooks.json), `project` (the project's
    /// shared <project>/.claude/settings.json; Codex: <project>/.codex/hooks.json) or `local`
    /// (<project>/.claude/settings.local.json, personal, not committed; Claude Code only).
    #[arg(long, value_enum, default_value_t = Scope::User)]
    scope: Scope,
    /// Show the changes and the resulting file; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Which agent's hook configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentArg {
    Claude,
    Codex,
}

impl From<AgentArg> for Agent {
    fn from(a: AgentArg) -> Agent {
        match a {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
        }
    }
}

/// Which Claude Code settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Scope {
    User,
    Project,
    Local,
}

#[derive(Debug, Args)]
struct InstallArgs {
    #[command(flatten)]
    place: WhereArgs,
    /// The binary the agent runs (default: the absolute path of this `mem`; for `--scope
    /// project`, a file shared with the project, `mem` as found on each user's PATH).
    #[arg(long, value_name = "CMD")]
    command: Option<String>,
}

/// The binary the installed hooks run, and a notice for the installer when it is worth one.
/// `shared`: the file is the project's, committed and read by everyone (`--scope project`):
/// the default is then `mem` from each user's PATH, never this machine's path; an absolute
/// `--command` there is written as given, with a notice. Elsewhere the default is the absolute
/// path of this binary (the agent's PATH may not be the shell's).
///
/// Errors: the path of this binary cannot be found (user and local scope without `--command`).
fn installed_binary(
    command: Option<String>,
    shared: bool,
    path: &std::path::Path,
) -> Result<(String, Option<String>)> {
    let file = path.display();
    Ok(match (command, shared) {
        (Some(c), true) if std::path::Path::new(&c).is_absolute() => {
            let notice = format!(
                "{file} is shared with the project: its hooks run {c}, a path on this machine \
                 (`--command mem` runs `mem` from each user's PATH)"
            );
            (c, Some(notice))
        }
        (Some(c), _) => (c, None),
        (None, true) => {
            let notice = format!(
                "{file} is shared with the project: its hooks run `mem` from each user's PATH \
                 (pass --command to run another binary)"
            );
            ("mem".to_owned(), Some(notice))
        }
        (None, false) => (
            std::env::current_exe()
                .context("cannot find the path of this `mem` (pass --command)")?
                .display()
                .to_string(),
            None,
        ),
    })
}

impl HookArgs {
    /// Whether the hook imports the session's transcript (PreCompact, Stop, SessionEnd: the
    /// first one on a long session reads all of it): it allocates in bulk (`mem_alloc`).
    /// SessionStart and UserPromptSubmit, run before the agent's turn, stay short.
    pub fn allocates_in_bulk(&self) -> bool {
        let event = match &self.command {
            HookCommand::Claude(a) => a.event,
            HookCommand::Codex(a) => a.common.event,
            HookCommand::Install(_) | HookCommand::Uninstall(_) => return false,
        };
        matches!(
            event,
            ClaudeEvent::PreCompact | ClaudeEvent::Stop | ClaudeEvent::SessionEnd
        )
    }
}

/// `true` for `mem hook claude ...`: a run that must exit 0 whatever happens.
pub fn is_claude_hook(command: &crate::cli::Command) -> bool {
    matches!(
        command,
        crate::cli::Command::Hook(HookArgs {
            command: HookCommand::Claude(_) | HookCommand::Codex(_)
        })
    )
}

/// Runs `mem hook ...`.
pub async fn run(args: HookArgs, settings: &Settings) -> Result<()> {
    match args.command {
        HookCommand::Claude(a) => {
            agent_hook("claude", None, a, settings).await;
            Ok(())
        }
        HookCommand::Codex(a) => {
            agent_hook("codex", Some(a.max_tokens), a.common, settings).await;
            Ok(())
        }
        HookCommand::Install(a) => {
            let path = settings_path(&a.place, settings)?;
            let shared = a.place.scope == Scope::Project;
            let (mem, notice) = installed_binary(a.command, shared, &path)?;
            // The hooks run as the installer did: `mem --home X hook install` configures X, so
            // its hooks read and write X too.
            let global: Vec<String> = if settings.home_is_env {
                Vec::new()
            } else {
                vec!["--home".to_owned(), settings.home.display().to_string()]
            };
            let agent = Agent::from(a.place.agent);
            let plan = install_with(agent, &path, &mem, &global, a.place.dry_run)?;
            print_plan(&plan, agent, a.place.dry_run, settings)?;
            let mut err = io::stderr().lock();
            if let Some(n) = notice {
                writeln!(err, "note: {}", crate::render::safe_line(&n))?;
            }
            if shared && !global.is_empty() {
                writeln!(
                    err,
                    "note: the commands carry --home {}: {} is shared with everyone who \
                     works on the project",
                    crate::render::safe_line(&settings.home.display().to_string()),
                    crate::render::safe_line(&path.display().to_string())
                )?;
            }
            Ok(())
        }
        HookCommand::Uninstall(a) => {
            let path = settings_path(&a, settings)?;
            let agent = Agent::from(a.agent);
            let plan = uninstall_for(agent, &path, a.dry_run)?;
            print_plan(&plan, agent, a.dry_run, settings)
        }
    }
}

/// The file to change: Claude Code's settings.json of the scope, or Codex's hooks.json (user
/// scope: `$CODEX_HOME`, default `<home>/.codex`, where Codex reads its own configuration).
fn settings_path(place: &WhereArgs, settings: &Settings) -> Result<PathBuf> {
    Ok(match (place.agent, place.scope) {
        (AgentArg::Claude, Scope::Project) => {
            settings.project.join(".claude").join("settings.json")
        }
        (AgentArg::Claude, Scope::Local) => {
            settings.project.join(".claude").join("settings.local.json")
        }
        (AgentArg::Claude, Scope::User) => settings.home.join(".claude").join("settings.json"),
        (AgentArg::Codex, Scope::Project) => settings.project.join(".codex").join("hooks.json"),
        (AgentArg::Codex, Scope::User) => std::env::var_os("CODEX_HOME")
            .filter(|h| !h.is_empty())
            .map_or_else(|| settings.home.join(".codex"), PathBuf::from)
            .join("hooks.json"),
        (AgentArg::Codex, Scope::Local) => bail!(
            "--scope local is Claude Code's settings.local.json; Codex reads hooks from \
             --scope user (~/.codex/hooks.json) or --scope project (<project>/.codex/hooks.json)"
        ),
    })
}

fn print_plan(
    plan: &mewmem::install::Plan,
    agent: Agent,
    dry_run: bool,
    settings: &Settings,
) -> Result<()> {
    let mut out = io::stdout().lock();
    if settings.json {
        let changes: Vec<String> = plan.changes.iter().map(describe).collect();
        let value = serde_json::json!({
            "agent": agent.as_str(),
            "path": plan.path,
            "dry_run": dry_run,
            "changes": changes,
            "backup": plan.backup,
        });
        writeln!(out, "{}", crate::render::json_pretty(&value)?)?;
        return Ok(());
    }
    let path = plan.path.display();
    if plan.changes.is_empty() {
        writeln!(out, "{path}: nothing to change")?;
        return Ok(());
    }
    let verb = if dry_run { "would change" } else { "changed" };
    writeln!(out, "{path}: {verb}")?;
    for c in &plan.changes {
        writeln!(out, "  {}", describe(c))?;
    }
    if let Some(b) = &plan.backup {
        writeln!(out, "backup of the previous file: {}", b.display())?;
    }
    if dry_run {
        writeln!(out, "--- the file would become ---")?;
        write!(out, "{}", plan.text)?;
    }
    if agent == Agent::Codex && plan.changes.iter().any(|c| matches!(c, Change::Added(_))) {
        // As observed with Codex CLI 0.169.0 (the real-client suite's pinned version).
        writeln!(
            out,
            "Codex runs new hooks only once trusted: review them with /hooks in Codex. Headless \
             `codex exec` runs hooks only with --dangerously-bypass-hook-trust (without it none \
             runs, and nothing says so). Hooks are on by default since Codex 0.169.0; older \
             versions need `[features] hooks = true` (earlier `codex_hooks = true`, now \
             deprecated) in config.toml."
        )?;
        if plan.path.starts_with(&settings.project) {
            writeln!(
                out,
                "Codex reads {} only in a trusted project (`[projects.\"<path>\"] trust_level = \
                 \"trusted\"` in ~/.codex/config.toml, written when you trust the folder).",
                plan.path.display()
            )?;
        }
    }
    Ok(())
}

fn describe(c: &Change) -> String {
    match c {
        Change::Added(e) => format!("added {e}"),
        Change::Updated(e) => format!("updated {e} (new command)"),
        Change::Removed(e) => format!("removed {e}"),
    }
}

/// The project a hook works on: `--project`, else `$CLAUDE_PROJECT_DIR`, else the payload's
/// `cwd`, else the current directory.
fn hook_project(settings: &Settings, input: Option<&HookInput>) -> PathBuf {
    if settings.project_given {
        return settings.project.clone();
    }
    if let Some(dir) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(cwd) = input.and_then(|i| i.cwd.as_ref()).filter(|c| c.is_dir()) {
        return cwd.clone();
    }
    settings.project.clone()
}

/// The most bytes of a hook payload read (stdin or `--input`): Claude Code's payloads are a few
/// KiB; past this the hook logs, adds nothing and exits 0 without reading the rest.
pub const HOOK_STDIN_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// Reads at most [`HOOK_STDIN_MAX_BYTES`] + 1 bytes of `from` (named `what` in errors).
///
/// Errors: a read error, or a payload over the cap (the rest is never read or buffered).
fn read_capped(from: impl Read, what: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    from.take(HOOK_STDIN_MAX_BYTES + 1)
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read {what}"))?;
    if buf.len() as u64 > HOOK_STDIN_MAX_BYTES {
        bail!(
            "{what} is over {HOOK_STDIN_MAX_BYTES} bytes: not a hook payload, nothing read past that"
        );
    }
    Ok(buf)
}

/// One hook run for `agent` (`claude` or `codex`: the same wire format); with `max_tokens`,
/// SessionStart's context is cut further until it has at most that many tokens. Every failure
/// is logged and reported on stderr, never returned.
async fn agent_hook(
    agent: &'static str,
    max_tokens: Option<usize>,
    args: ClaudeArgs,
    settings: &Settings,
) {
    let event = args.event;
    let raw = match &args.input {
        Some(path) => mem_core::fsread::open(path)
            .with_context(|| format!("cannot read {}", path.display()))
            .and_then(|f| read_capped(f, &path.display().to_string())),
        None => read_capped(io::stdin().lock(), "stdin"),
    };
    let input = raw.and_then(|bytes| Ok(HookInput::parse(&bytes)?));
    let project = hook_project(settings, input.as_ref().ok());
    let mut early_problems: Vec<String> = Vec::new();
    let result = async {
        let input = input?;
        if args.budget > CLAUDE_HOOK_MAX_CHARS {
            bail!(
                "--budget {} is over Claude Code's {CLAUDE_HOOK_MAX_CHARS}-character limit",
                args.budget
            );
        }
        let date = args
            .date
            .unwrap_or_else(|| chrono::Local::now().date_naive());
        let here = in_project(settings, &project);
        let mut instructions = mem_instructions::LoadOptions::new(&project, &settings.home);
        instructions.names = args.names.clone();
        let client = if agent == "codex" {
            Agent::Codex
        } else {
            Agent::Claude
        };
        instructions.skip = client.loads_itself(&project);
        let context = if event == ClaudeEvent::SessionStart {
            // The one start context (`mem context` shows it): Tier 0 of the tier store after
            // the memories.md entries, within the same budget; a store that cannot be read
            // leaves it out (logged), never the whole context.
            let (context, problems) =
                crate::open::start_options(&here, instructions, date, Some(args.budget), true);
            early_problems.extend(problems);
            context
        } else {
            let mut context = ContextOptions::new(&project, &settings.home, date);
            context.instructions = instructions;
            context.budget_chars = Some(args.budget);
            context
        };
        let recall_dirs =
            MemoryDirs::standard(&project, &settings.home, &recall_extra_dirs(&here)?);
        let select: Option<Arc<dyn Llm>> = if event == ClaudeEvent::UserPromptSubmit {
            let (resolved, _) = llm_settings(&here)?;
            Some(crate::open::with_embeddings(
                &here,
                resolved.job(Job::Select).engine()?,
                false,
            ))
        } else {
            None
        };
        let extract = if matches!(
            event,
            ClaudeEvent::PreCompact | ClaudeEvent::Stop | ClaudeEvent::SessionEnd
        ) {
            let memory = memory_settings(&here)?;
            let (resolved, _) = llm_settings(&here)?;
            let mut options = mem_auto::ExtractOptions::new(chrono::Utc::now());
            options.daily_token_budget = memory.daily_extract_tokens;
            Some(ExtractConfig {
                auto: mem_auto::AutoMemory::new(&project, &settings.home, memory.auto),
                llm: resolved.job(Job::Extract).engine()?,
                options,
                deadline: std::time::Duration::from_secs(args.extract_timeout),
            })
        } else {
            None
        };
        let config = HookConfig {
            project: project.clone(),
            context,
            recall_dirs,
            select,
            now: SystemTime::now(),
            extract,
        };
        if event != ClaudeEvent::SessionStart {
            here.guard_write(mem_session::SessionStore::for_project(&project).dir())?;
        }
        let mut config = config;
        let mut outcome = run_claude(event, &input, &config).await?;
        if let (Some(cap), ClaudeEvent::SessionStart) = (max_tokens, event) {
            mewmem::ops::hook::fit_tokens(&mut outcome, &mut config, &input, cap, args.budget)
                .await?;
        }
        Ok::<_, anyhow::Error>(outcome)
    }
    .await;
    match result {
        Ok(outcome) => {
            for note in &outcome.notes {
                tracing::debug!("hook {event}: {note}");
            }
            for problem in early_problems.iter().chain(&outcome.problems) {
                let _ = log_line(&project, agent, event.as_str(), problem);
            }
            if let Some(value) = outcome.stdout {
                let _ = writeln!(io::stdout().lock(), "{value}");
            }
        }
        Err(err) => fail(settings, &project, agent, event, &err),
    }
}

/// `settings` with the hook's project.
fn in_project(settings: &Settings, project: &std::path::Path) -> Settings {
    Settings {
        project: project.to_owned(),
        ..settings.clone()
    }
}

/// Logs a failure to the hook log and says so on stderr (Claude Code shows it in verbose mode).
fn fail(
    settings: &Settings,
    project: &std::path::Path,
    agent: &str,
    event: ClaudeEvent,
    err: &anyhow::Error,
) {
    let message = format!("{err:#}");
    let log = log_path(project);
    let logged = in_project(settings, project)
        .guard_write(&log)
        .and_then(|()| Ok(log_line(project, agent, event.as_str(), &message)?));
    let mut stderr = io::stderr().lock();
    let _ = match logged {
        Ok(()) => writeln!(
            stderr,
            "mem hook {agent} {event}: {} (logged to {}); nothing added",
            mem_core::terminal::safe_line(&message),
            mem_core::terminal::safe_line(&log.display().to_string())
        ),
        Err(log_err) => writeln!(
            stderr,
            "mem hook {agent} {event}: {}; nothing added (the log could not be written: {})",
            mem_core::terminal::safe_line(&message),
            mem_core::terminal::safe_line(&log_err.to_string())
        ),
    };
}

/// A hook run whose settings could not even be resolved (no $HOME, a bad --project): report on
/// stderr, exit 0 all the same.
pub fn settings_failed(err: &anyhow::Error) {
    let _ = writeln!(
        io::stderr().lock(),
        "mem hook claude: {}; nothing added",
        mem_core::terminal::safe_line(&format!("{err:#}"))
    );
}
