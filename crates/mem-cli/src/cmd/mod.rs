//! One module per subcommand; each turns settings and arguments into a library call and prints.

pub mod checkpoint;
pub mod compact;
pub mod context;
pub mod extract;
pub mod hook;
pub mod instructions;
pub mod llm;
pub mod mcp;
pub mod memory;
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
    let command = match command {
        Command::Instructions(args) => return instructions::run(args, settings),
        Command::Context(args) => return context::run(args, settings),
        Command::Session(args) => return session::run(args, settings),
        Command::Note(args) => return note::run(args, settings),
        Command::Memory(args) => return memory::run(args, settings),
        Command::Checkpoint(args) => return checkpoint::run(args, settings),
        command => command,
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(run_async(command, settings))
}

/// The commands that wait on a model or the network, on the runtime [`run`] starts; the
/// synchronous ones never reach it ([`run`] has run them).
async fn run_async(command: Command, settings: &Settings) -> Result<()> {
    match command {
        Command::Llm(args) => llm::run(args, settings).await,
        Command::Compact(args) => compact::run(args, settings).await,
        Command::Hook(args) => hook::run(args, settings).await,
        Command::Recall(args) => recall::run(args, settings).await,
        Command::Extract(args) => extract::run(args, settings).await,
        Command::Mcp(args) => mcp::run(args, settings).await,
        Command::Skill(args) => skill::run(args, settings).await,
        Command::Instructions(_)
        | Command::Context(_)
        | Command::Session(_)
        | Command::Note(_)
        | Command::Memory(_)
        | Command::Checkpoint(_) => {
            anyhow::bail!("internal: a synchronous command reached the async runner")
        }
    }
}

/// The value of a `--limit` option: a whole number of at least 1 (`--limit 0` would ask for
/// nothing and then report that nothing matched).
///
/// # Errors
/// A message for clap when the value is 0 or not a number.
pub fn parse_limit(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("the limit must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
