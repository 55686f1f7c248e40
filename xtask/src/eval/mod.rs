//! `cargo xtask eval <name>`: quality measurements on labelled sets under `fixtures/`.
//!
//! - `recall`: the recall selector (`mem recall`) on `fixtures/recall/eval/` (see
//!   [`recall`]).

pub mod recall;

use anyhow::{Result, bail};

/// Dispatches `cargo xtask eval <name> [ARGS...]`.
pub fn run(args: &[String]) -> Result<bool> {
    match args.first().map(String::as_str) {
        Some("recall") => recall::run(&args[1..]),
        Some(other) => bail!("unknown eval `{other}` (known: recall)"),
        None => bail!("usage: cargo xtask eval recall [--live] [--verbose] [--set DIR]"),
    }
}
