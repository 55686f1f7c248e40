//! One module per subcommand; each turns settings and arguments into a library call and prints.

use anyhow::Result;

use crate::cli::Command;
use crate::settings::Settings;

/// Runs one parsed command.
pub async fn run(command: Command, settings: &Settings) -> Result<()> {
    let _ = settings;
    match command {}
}
