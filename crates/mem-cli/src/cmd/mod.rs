//! One module per subcommand; each turns settings and arguments into a library call and prints.

pub mod checkpoint;
pub mod compact;
pub mod context;
pub mod extract;
pub mod hook;
pub mod instructions;
pub mod llm;
pub mod mcp;
pub mod mcp_stdio;
pub mod memory;
pub mod memory_store;
pub mod note;
pub mod recall;
pub mod session;
pub mod skill;

use anyhow::Result;

use crate::cli::Command;
use crate::settings::Settings;

/// Runs one parsed command.
pub async fn run(command: Command, settings: &Settings) -> Result<()> {
    checkpoint::recover_killed_restore(settings);
    match command {
        Command::Instructions(args) => instructions::run(args, settings),
        Command::Context(args) => context::run(args, settings),
        Command::Session(args) => session::run(args, settings),
        Command::Llm(args) => llm::run(args, settings).await,
        Command::Compact(args) => compact::run(args, settings).await,
        Command::Hook(args) => hook::run(args, settings).await,
        Command::Recall(args) => recall::run(args, settings).await,
        Command::Note(args) => note::run(args, settings),
        Command::Extract(args) => extract::run(args, settings).await,
        Command::Memory(args) => memory::run(args, settings),
        Command::Mcp(args) => mcp::run(args, settings).await,
        Command::Checkpoint(args) => checkpoint::run(args, settings),
        Command::Skill(args) => skill::run(args, settings).await,
    }
}
