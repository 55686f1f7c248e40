//! Helpers shared by the subcommands: the repo root and running cargo.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

/// The repository root: the parent of this crate's manifest directory.
///
/// `cargo run` sets `CARGO_MANIFEST_DIR` for the process too; that value is preferred over the
/// compile-time one, which can name another checkout when two share a target directory.
pub fn repo_root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// A `cargo` command (the same cargo that runs xtask), started in the repo root.
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(repo_root());
    cmd
}

/// Runs `cmd` with inherited stdio; `Ok(true)` when it exits 0.
pub fn run_status(cmd: &mut Command) -> Result<bool> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    Ok(status.success())
}
