//! `cargo xtask eval <name>`: quality measurements on labelled sets under `fixtures/eval/`.

mod extract;

use anyhow::{Result, bail};

/// Runs `cargo xtask eval <name> [ARGS...]`; `Ok(false)` when a target is missed.
pub fn run(args: &[String]) -> Result<bool> {
    match args.first().map(String::as_str) {
        Some("extract") => extract::run(&args[1..]),
        Some(other) => bail!("unknown eval `{other}` (known: extract)"),
        None => bail!("usage: cargo xtask eval extract [--model] [--verbose] [--filter TEXT]"),
    }
}
