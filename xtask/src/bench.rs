//! `cargo xtask bench [ARGS...]`: `cargo bench --workspace`, extra arguments passed through.

use anyhow::Result;

use crate::util::{cargo, run_status};

/// Runs the workspace's benchmarks.
pub fn run(args: &[String]) -> Result<bool> {
    let mut cmd = cargo();
    cmd.args(["bench", "--workspace"]).args(args);
    eprintln!("xtask bench: {cmd:?}");
    run_status(&mut cmd)
}
