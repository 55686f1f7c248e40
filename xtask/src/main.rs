//! `cargo xtask`: project automation for mewmem (rust-analyzer's xtask pattern).
//!
//! - `cargo xtask golden [--bless] [--filter NAME]`: runs the golden cases under `fixtures/`
//!   (format: `docs/formats/golden.md`).
//! - `cargo xtask ci`: fmt check, clippy with `-D warnings`, tests, docs, goldens; stops at the
//!   first failure.
//! - `cargo xtask bench [ARGS...]`: `cargo bench --workspace`.
//! - `cargo xtask bench import`: `mem session import` against ccusage (docs/BENCHMARKS.md).
//! - `cargo xtask eval extract [--model] [--verbose] [--filter TEXT] [--sample N]
//!   [--split dev|test|all]`: extraction quality on `fixtures/eval/extract/{dev,test}/`.
//! - `cargo xtask eval recall [--split dev|test|all] [--live] [--verbose] [--sample N]`: recall
//!   quality on the labelled set's dev and test query splits.

mod bench;
mod bench_import;
mod ci;
mod eval;
mod golden;
mod util;

use std::process::ExitCode;

use anyhow::{Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  golden [--bless] [--filter NAME]   run the golden cases under fixtures/
  ci                                 fmt, clippy, tests, docs, goldens (stops at the first failure)
  bench [ARGS...]                    cargo bench --workspace [ARGS...]
  bench import                       mem session import vs ccusage (1 GB folder, Codex, one session)
  eval extract [--model] [--sample N] [--verbose] [--split dev|test|all]
                                     extraction precision/recall on fixtures/eval/extract/{dev,test}
  eval recall [--split dev|test|all] [--live] [--sample N] [--verbose]
                                                  recall selector quality on fixtures/recall/eval
                                                  (dev and test splits; fails when test misses a target)
";

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Dispatches to a subcommand; `Ok(false)` means the command ran and reported a failure.
fn run() -> Result<bool> {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        eprint!("{USAGE}");
        return Ok(false);
    };
    let rest: Vec<String> = args.collect();
    match command.as_str() {
        "golden" => golden::run(golden::Options::parse(&rest)?),
        "ci" => {
            if !rest.is_empty() {
                bail!("`ci` takes no arguments\n{USAGE}");
            }
            ci::run()
        }
        "bench" => bench::run(&rest),
        "eval" => eval::run(&rest),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(true)
        }
        other => bail!("unknown command `{other}`\n{USAGE}"),
    }
}
