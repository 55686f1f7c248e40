//! `cargo xtask bench [ARGS...]`: `cargo bench --workspace`, extra arguments passed through;
//! `cargo xtask bench import`: the import benchmark against a peer (`crate::bench_import`).

use anyhow::Result;

use crate::util::{cargo, run_status};

/// Runs the workspace's benchmarks.
pub fn run(args: &[String]) -> Result<bool> {
    if args.first().map(String::as_str) == Some("import") {
        return crate::bench_import::run();
    }
    let mut cmd = cargo();
    cmd.args(["bench", "--workspace"]).args(args);
    eprintln!("xtask bench: {cmd:?}");
    run_status(&mut cmd)
}
