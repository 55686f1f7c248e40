//! `mem`: the mewmem command line. Parses arguments, resolves settings once, calls a library,
//! prints. Exit codes: 0 success, 1 error, 2 usage error (clap), 3 `mem session import` stored
//! everything but skipped or altered damaged lines.

// The doc comments of the argument structs are clap's `--help` text, written for a terminal:
// `<project>` there is a placeholder a user reads, not an HTML tag.
#![allow(rustdoc::invalid_html_tags)]

mod args;
mod cli;
mod cmd;
mod config;
mod open;
mod render;
mod settings;
mod undo;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

/// The system's allocator for short commands, mimalloc for the bulk ones (`mem_alloc`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mem_alloc::CommandAllocator = mem_alloc::CommandAllocator;

/// No `#[tokio::main]`: [`cmd::run`] starts a runtime only for the commands that need one.
fn main() -> ExitCode {
    // Inside a model call's own agent session (`claude-cli` / `codex-cli` providers): mewmem's
    // hooks do nothing there, so a model call never triggers them (no re-entrant extraction).
    if is_agent_hook_args() && mewmem::hook::in_child_session() {
        return ExitCode::SUCCESS;
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    if cli.command.allocates_in_bulk() {
        #[cfg(feature = "mimalloc")]
        mem_alloc::use_bulk_allocator();
    }
    init_logging();
    let json = cli.global.json;
    let settings = match settings::Settings::resolve(&cli.global) {
        Ok(s) => s,
        // A Claude Code hook never fails the agent's turn.
        Err(err) if cmd::hook::is_claude_hook(&cli.command) => {
            cmd::hook::settings_failed(&err);
            return ExitCode::SUCCESS;
        }
        Err(err) => return report(&err, json),
    };
    match cmd::run(cli.command, &settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => report(&err, json),
    }
}

/// A clap error: help and version are printed as clap prints them; a usage error too, or, when
/// `--json` is among the arguments, as a JSON `error` object of kind `usage` on stderr. Exit 2
/// (0 for help and version).
fn usage_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let informational = matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !informational && is_agent_hook_args() {
        // Claude Code treats exit 2 as "block the turn": a hook never fails the agent's turn.
        let text = err.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        let first = first.trim_start_matches("error: ");
        let _ = writeln!(
            io::stderr().lock(),
            "mem hook: {}; nothing added",
            mem_core::terminal::safe_line(first)
        );
        return ExitCode::SUCCESS;
    }
    let json = std::env::args_os().skip(1).any(|a| a == "--json");
    if informational || !json {
        let _ = err.print();
        return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
    }
    let text = err.render().to_string();
    let message = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    print_json_error("usage", &message, &[]);
    ExitCode::from(2)
}

/// `true` when the raw arguments are `mem [GLOBAL...] hook claude|codex ...` (an agent hook run),
/// so that a parse error there exits 0 like every other hook failure.
fn is_agent_hook_args() -> bool {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    args.windows(2)
        .any(|w| w[0] == "hook" && (w[1] == "claude" || w[1] == "codex"))
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MEM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        // Colour only on a terminal, and never with NO_COLOR set.
        .with_ansi(
            io::IsTerminal::is_terminal(&io::stderr()) && std::env::var_os("NO_COLOR").is_none(),
        )
        .without_time()
        .try_init();
}

/// Prints an error with its chain of causes (with `--json`: as a JSON `error` object on stderr,
/// see [`print_json_error`]); a broken pipe (e.g. `mem session show | head`) is not an error.
fn report(err: &anyhow::Error, json: bool) -> ExitCode {
    for cause in err.chain() {
        if let Some(io_err) = cause.downcast_ref::<io::Error>()
            && io_err.kind() == io::ErrorKind::BrokenPipe
        {
            return ExitCode::SUCCESS;
        }
    }
    // A result with its own exit code (e.g. `mem session import` with damaged lines: 3).
    if let Some(exit) = err.downcast_ref::<cmd::session::ExitWith>() {
        if !json {
            let _ = writeln!(
                io::stderr().lock(),
                "warning: {}",
                render::safe(&exit.message)
            );
        }
        return ExitCode::from(exit.code);
    }
    if json {
        let causes: Vec<String> = err.chain().skip(1).map(ToString::to_string).collect();
        print_json_error(error_kind(err), &err.to_string(), &causes);
        return ExitCode::FAILURE;
    }
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", render::safe(&err.to_string()));
    let mut said = err.to_string();
    for cause in err.chain().skip(1) {
        // Library errors often end with their cause already ("cannot read X: Permission denied").
        let text = cause.to_string();
        if !said.ends_with(&text) {
            let _ = writeln!(stderr, "  caused by: {}", render::safe(&text));
        }
        said = text;
    }
    ExitCode::FAILURE
}

/// Writes `{"error": {"kind", "message", "causes"}}` (pretty, one object) to stderr; stdout is
/// left as it is (valid JSON already written, or empty).
fn print_json_error(kind: &str, message: &str, causes: &[String]) {
    let value = serde_json::json!({
        "error": { "kind": kind, "message": message, "causes": causes }
    });
    if let Ok(text) = render::json_pretty(&value) {
        let _ = writeln!(io::stderr().lock(), "{text}");
    }
}

/// A short, stable name for what went wrong, for `--json` errors: `not_found` (no such session,
/// ambiguous prefix, missing file), `invalid_input` (a file or argument that cannot be used),
/// `locked`, `model` (a model call or its configuration), `io`, or `error`.
fn error_kind(err: &anyhow::Error) -> &'static str {
    for cause in err.chain() {
        // The facade's errors wrap the layers' (transparently: the wrapped error is not a
        // cause of its own in the chain).
        let facade = cause.downcast_ref::<mewmem::Error>();
        let session = match facade {
            Some(mewmem::Error::Session(e)) => Some(e),
            _ => cause.downcast_ref::<mem_session::Error>(),
        };
        if let Some(e) = session {
            return match e {
                mem_session::Error::NotFound { .. } | mem_session::Error::Ambiguous { .. } => {
                    "not_found"
                }
                mem_session::Error::Locked { .. } => "locked",
                mem_session::Error::Io { source, .. }
                    if source.kind() == io::ErrorKind::NotFound =>
                {
                    "not_found"
                }
                mem_session::Error::Io { .. } => "io",
                _ => "invalid_input",
            };
        }
        if cause.downcast_ref::<mem_llm::LlmError>().is_some()
            || matches!(facade, Some(mewmem::Error::Llm(_)))
        {
            return "model";
        }
        if let Some(e) = cause.downcast_ref::<io::Error>() {
            return if e.kind() == io::ErrorKind::NotFound {
                "not_found"
            } else {
                "io"
            };
        }
    }
    "error"
}
