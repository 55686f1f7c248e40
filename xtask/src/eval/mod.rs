//! `cargo xtask eval <name>`: quality measurements on labelled sets under `fixtures/`.
//!
//! - `extract`: auto-memory extraction on `fixtures/eval/extract/`.
//! - `recall`: the recall selector (`mem recall`) on `fixtures/recall/eval/` (see [`recall`]).

mod extract;
pub mod recall;

use anyhow::{Result, bail};

/// Runs `cargo xtask eval <name> [ARGS...]`; `Ok(false)` when a target is missed.
pub fn run(args: &[String]) -> Result<bool> {
    match args.first().map(String::as_str) {
        Some("extract") => extract::run(&args[1..]),
        Some("recall") => recall::run(&args[1..]),
        Some(other) => bail!("unknown eval `{other}` (known: extract, recall)"),
        None => bail!(
            "usage: cargo xtask eval extract [--model] [--verbose] [--filter TEXT] [--sample N]\n       cargo xtask eval recall [--live] [--verbose] [--set DIR] [--sample N]"
        ),
    }
}
