//! `mem`: the mewmem command line. Parses arguments, resolves settings once, calls a library,
//! prints. Exit codes: 0 success, 1 error, 2 usage error (clap).

mod cli;
mod cmd;
mod config;
mod output;
mod settings;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_logging();
    let settings = match settings::Settings::resolve(&cli.global) {
        Ok(s) => s,
        Err(err) => return report(&err),
    };
    match cmd::run(cli.command, &settings).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => report(&err),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MEM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(std::env::var_os("NO_COLOR").is_none())
        .without_time()
        .try_init();
}

/// Prints an error with its chain of causes; a broken pipe (e.g. `mem session show | head`) is
/// not an error.
fn report(err: &anyhow::Error) -> ExitCode {
    for cause in err.chain() {
        if let Some(io_err) = cause.downcast_ref::<io::Error>()
            && io_err.kind() == io::ErrorKind::BrokenPipe
        {
            return ExitCode::SUCCESS;
        }
    }
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", output::safe(&err.to_string()));
    let mut said = err.to_string();
    for cause in err.chain().skip(1) {
        // Library errors often end with their cause already ("cannot read X: Permission denied").
        let text = cause.to_string();
        if !said.ends_with(&text) {
            let _ = writeln!(stderr, "  caused by: {}", output::safe(&text));
        }
        said = text;
    }
    ExitCode::FAILURE
}
