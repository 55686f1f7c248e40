//! Argument definitions (clap). Raw flags only; [`crate::settings`] turns them into settings.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// mewmem: memory for LLM coding agents (sessions, compaction, memories, recall, instructions).
#[derive(Debug, Parser)]
#[command(name = "mem", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project directory (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Home directory holding the user-level `.mewcode/` (default: $HOME).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Write and delete even where `.mewcode/` (or a folder in it) is a symlink that leads out
    /// of the project.
    #[arg(long, global = true)]
    pub allow_outside_project: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Session records: list, show, resume, export, import transcripts, delete.
    Session(crate::cmd::session::SessionArgs),
    /// Merged instruction files (MEWCODE.md, AGENTS.md, CLAUDE.md), their provenance, warnings.
    Instructions(crate::cmd::instructions::InstructionsArgs),
    /// The whole `<system-reminder>` block for the next turn: instructions, memories, date.
    Context(crate::cmd::context::ContextArgs),
    /// The model layer: which engine answers each job (`check`), and each job run by hand.
    Llm(crate::cmd::llm::LlmArgs),
    /// Context compaction: size against the window (`stats`), compacting now (`sweep`).
    Compact(crate::cmd::compact::CompactArgs),
    /// Agent hooks: `claude EVENT` (run by Claude Code), `install` / `uninstall` (settings.json).
    Hook(crate::cmd::hook::HookArgs),
    /// The memory notes recalled for a message, as the `<system-reminder>` an agent gets.
    Recall(crate::cmd::recall::RecallArgs),
    /// Memory notes: add (atomic, secrets withheld), list, show and rm by id.
    Note(crate::cmd::note::NoteArgs),
    /// Auto memory: extract facts from a session's new messages into both memories.md files.
    Extract(crate::cmd::extract::ExtractArgs),
    /// Tiered memory (Tier 0/1/2), learnings, preferences, and search over every memory.
    Memory(crate::cmd::memory::MemoryArgs),
    /// An MCP server on stdio for any MCP client: search, get, add, forget, recall, context.
    Mcp(crate::cmd::mcp::McpArgs),
    /// Checkpoints of the memory state: create, list, show, restore (undo), rm.
    Checkpoint(crate::cmd::checkpoint::CheckpointArgs),
    /// Skills from learnings: suggest groups of related memories, generate a SKILL.md.
    Skill(crate::cmd::skill::SkillArgs),
}

impl Command {
    /// Whether the command allocates in bulk, so that mimalloc pays off over the system's
    /// allocator (`mem_alloc`): imports (and the hooks that import), extraction, a compaction
    /// sweep, checkpoints, the migration, archives, the long-lived MCP server. The commands an
    /// agent waits for at each turn (recall, search, the start context) stay short.
    pub fn allocates_in_bulk(&self) -> bool {
        match self {
            Command::Session(args) => args.allocates_in_bulk(),
            Command::Memory(args) => args.allocates_in_bulk(),
            Command::Hook(args) => args.allocates_in_bulk(),
            Command::Compact(args) => args.allocates_in_bulk(),
            Command::Checkpoint(args) => args.allocates_in_bulk(),
            Command::Extract(_) | Command::Mcp(_) => true,
            Command::Instructions(_)
            | Command::Context(_)
            | Command::Llm(_)
            | Command::Recall(_)
            | Command::Note(_)
            | Command::Skill(_) => false,
        }
    }
}
