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

use anyhow::{Context as _, Result};

use crate::cli::Command;
use crate::settings::Settings;

/// Runs one parsed command. The commands that only read and write local files and stores run
/// on this thread; those that wait on a model or the network (or serve MCP) run on a tokio
/// runtime started for them, so a `mem memory search` starts no runtime and no worker threads.
pub fn run(command: Command, settings: &Settings) -> Result<()> {
    checkpoint::recover_killed_restore(settings);
    match command {
        Command::Instructions(args) => instructions::run(args, settings),
        Command::Context(args) => context::run(args, settings),
        Command::Session(args) => session::run(args, settings),
        Command::Note(args) => note::run(args, settings),
        Command::Memory(args) => memory::run(args, settings),
        Command::Checkpoint(args) => checkpoint::run(args, settings),
        command => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
            .block_on(run_async(command, settings)),
    }
}

/// The commands that wait on a model or the network, on the runtime [`run`] starts.
async fn run_async(command: Command, settings: &Settings) -> Result<()> {
    match command {
        Command::Llm(args) => llm::run(args, settings).await,
        Command::Compact(args) => compact::run(args, settings).await,
        Command::Hook(args) => hook::run(args, settings).await,
        Command::Recall(args) => recall::run(args, settings).await,
        Command::Extract(args) => extract::run(args, settings).await,
        Command::Mcp(args) => mcp::run(args, settings).await,
        Command::Skill(args) => skill::run(args, settings).await,
        Command::Instructions(args) => instructions::run(args, settings),
        Command::Context(args) => context::run(args, settings),
        Command::Session(args) => session::run(args, settings),
        Command::Note(args) => note::run(args, settings),
        Command::Memory(args) => memory::run(args, settings),
        Command::Checkpoint(args) => checkpoint::run(args, settings),
    }
}
