//! The agent CLI providers: the user's own coding agent as the model, with the login it already
//! has and no API key to configure.
//!
//! - `claude-cli`: `claude -p --output-format json --model haiku --system-prompt SYSTEM
//!   --no-session-persistence --strict-mcp-config --tools ""`, the user prompt on stdin; the
//!   reply is the `result` of the one JSON object printed on stdout (`is_error: true` is a
//!   failure).
//! - `codex-cli`: `codex exec --json --skip-git-repo-check --ephemeral --sandbox read-only
//!   -c mcp_servers={} [-m MODEL] -`, system and user prompt on stdin; stdout is one JSON event
//!   per line (Codex CLI 0.169.0: `thread.started`, `turn.started`, `item.completed` with an
//!   `agent_message` item holding `text`, `turn.completed`; `turn.failed` / `error` on failure);
//!   the reply is the text of the last `agent_message`.
//!
//! Never re-entrant: the child runs with [`CHILD_SESSION_ENV`]` = 1`, and every `mem hook ...`
//! entry point returns at once, successfully and silently, when it is set, so the model call
//! cannot trigger mewmem's own hooks (no extraction of the child's session, no second
//! extraction). The flags above keep the child from loading MCP servers and from keeping a
//! session; the marker is the guarantee. The child runs in the system's temporary folder, so it
//! loads no project's CLAUDE.md or AGENTS.md.
//!
//! Timeouts and retries are the HTTP providers' (`http::with_retries` under the job's
//! [`CallPolicy`]): a failed run (non-zero exit, an error reply) is retried with backoff, a
//! command that cannot start is not, and a run past the deadline is killed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::error::{LlmError, Result};
use crate::http::{Attempt, CallPolicy, MAX_ERROR_EXCERPT, timeout, with_retries};
use crate::prompt::ChatRequest;
use crate::provider::ProviderKind;

/// The environment variable set to `1` in every agent CLI child mewmem starts. `mem hook ...`
/// does nothing (exit 0, no output) when it is set to anything but empty or `0`.
pub const CHILD_SESSION_ENV: &str = "MEWMEM_CHILD";

/// `true` when `value` (of [`CHILD_SESSION_ENV`]) marks a child session: set, not empty, not
/// `0`.
pub fn is_child_session(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Where `command` runs from: itself when it names a path (holds a `/`), else the first
/// executable file of that name in the folders of `path_var` (a `PATH` value). `None` when
/// there is none.
pub fn find_command(command: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    if command.contains('/') {
        let p = PathBuf::from(command);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// The arguments of one call: see the module docs. `model` empty: the CLI's own default.
pub fn command_args(kind: ProviderKind, model: &str, request: &ChatRequest) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    match kind {
        ProviderKind::ClaudeCli => {
            args.extend(["-p", "--output-format", "json"].map(str::to_owned));
            if !model.is_empty() {
                args.extend(["--model".to_owned(), model.to_owned()]);
            }
            args.extend([
                "--system-prompt".to_owned(),
                request.system.clone(),
                "--no-session-persistence".to_owned(),
                "--strict-mcp-config".to_owned(),
                "--tools".to_owned(),
                String::new(),
            ]);
        }
        _ => {
            args.extend(
                [
                    "exec",
                    "--json",
                    "--skip-git-repo-check",
                    "--ephemeral",
                    "--sandbox",
                    "read-only",
                    "-c",
                    "mcp_servers={}",
                ]
                .map(str::to_owned),
            );
            if !model.is_empty() {
                args.extend(["-m".to_owned(), model.to_owned()]);
            }
            args.push("-".to_owned());
        }
    }
    args
}

/// What is written to the child's stdin: the user prompt for Claude Code (the system prompt is
/// an argument), the system prompt, a blank line and the user prompt for Codex (which has no
/// system prompt option).
pub fn command_stdin(kind: ProviderKind, request: &ChatRequest) -> String {
    match kind {
        ProviderKind::ClaudeCli => request.user.clone(),
        _ => format!("{}\n\n{}", request.system, request.user),
    }
}

/// Why an output could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// The CLI says the call failed (worth a retry): its message.
    Failed(String),
    /// The output is not the CLI's shape: what was wrong.
    Malformed(String),
}

/// The reply text of `claude -p --output-format json` output: `result` of the JSON object
/// (the last line that parses as one, so a warning printed before it does not matter).
///
/// Errors: [`OutputError::Failed`] when `is_error` is true or `subtype` is not `success`;
/// [`OutputError::Malformed`] when no JSON object with a string `result` is found.
pub fn parse_claude_output(stdout: &str) -> std::result::Result<String, OutputError> {
    let value = stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(Value::is_object)
        .or_else(|| serde_json::from_str::<Value>(stdout.trim()).ok())
        .ok_or_else(|| OutputError::Malformed("no JSON object on stdout".to_owned()))?;
    let result = value.get("result").and_then(Value::as_str);
    let is_error = value.get("is_error").and_then(Value::as_bool) == Some(true);
    let subtype = value.get("subtype").and_then(Value::as_str);
    if is_error || subtype.is_some_and(|s| s != "success") {
        let message = result
            .map(str::to_owned)
            .or_else(|| subtype.map(str::to_owned))
            .unwrap_or_else(|| "an error reply".to_owned());
        return Err(OutputError::Failed(excerpt(&message)));
    }
    result
        .map(str::to_owned)
        .ok_or_else(|| OutputError::Malformed("the JSON object has no string `result`".to_owned()))
}

/// The reply text of `codex exec --json` output: the `text` of the last `item.completed` event
/// whose item is an `agent_message`.
///
/// Errors: [`OutputError::Failed`] on a `turn.failed` or `error` event (their message) when no
/// agent message came; [`OutputError::Malformed`] when no line is a JSON event or none carries
/// an agent message.
pub fn parse_codex_output(stdout: &str) -> std::result::Result<String, OutputError> {
    let mut reply = None;
    let mut failure = None;
    let mut events = 0usize;
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            continue;
        };
        events += 1;
        match kind {
            "item.completed" => {
                let item = &event["item"];
                let item_type = item
                    .get("type")
                    .or_else(|| item.get("item_type"))
                    .and_then(Value::as_str);
                if item_type == Some("agent_message")
                    && let Some(text) = item.get("text").and_then(Value::as_str)
                {
                    reply = Some(text.to_owned());
                }
            }
            "turn.failed" | "error" => {
                let message = event
                    .pointer("/error/message")
                    .or_else(|| event.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or(kind);
                failure = Some(excerpt(message));
            }
            _ => {}
        }
    }
    match (reply, failure) {
        (Some(text), _) => Ok(text),
        (None, Some(message)) => Err(OutputError::Failed(message)),
        (None, None) if events == 0 => {
            Err(OutputError::Malformed("no JSON event on stdout".to_owned()))
        }
        (None, None) => Err(OutputError::Malformed(format!(
            "{events} event(s) but no agent_message"
        ))),
    }
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    let cut: String = text.chars().take(MAX_ERROR_EXCERPT).collect();
    if cut.is_empty() {
        "(no message)".to_owned()
    } else {
        cut
    }
}

/// Runs the CLI for `request` under `policy` (the shared retry loop) and returns the reply
/// text.
///
/// Errors: [`LlmError::Command`] when the program cannot start; [`LlmError::CommandFailed`]
/// when every attempt failed; [`LlmError::Timeout`] past the deadline (the child is killed);
/// [`LlmError::MalformedReply`] / [`LlmError::EmptyReply`] for an output that holds no reply.
pub(crate) async fn complete(
    kind: ProviderKind,
    program: &Path,
    model: &str,
    request: &ChatRequest,
    policy: &CallPolicy,
) -> Result<String> {
    let name = program.display().to_string();
    let name = name.as_str();
    let args = command_args(kind, model, request);
    let input = command_stdin(kind, request);
    let (args, input) = (&args, &input);
    let text = with_retries(name, policy, move |attempt, remaining| async move {
        run_once(kind, program, name, args, input, attempt, remaining, policy).await
    })
    .await?;
    if text.trim().is_empty() {
        return Err(LlmError::EmptyReply {
            url: name.to_owned(),
        });
    }
    Ok(text)
}

#[allow(clippy::too_many_arguments)]
async fn run_once(
    kind: ProviderKind,
    program: &Path,
    name: &str,
    args: &[String],
    input: &str,
    attempt: u32,
    remaining: Duration,
    policy: &CallPolicy,
) -> Attempt<String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env(CHILD_SESSION_ENV, "1")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Attempt::Fail(LlmError::Command {
                command: name.to_owned(),
                message: e.to_string(),
            });
        }
    };
    let stdin = child.stdin.take();
    let run = async move {
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A child that exits without reading its input is judged by its output.
                let _ = stdin.write_all(input.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
        };
        let ((), output) = tokio::join!(write, child.wait_with_output());
        output
    };
    let output = match tokio::time::timeout(remaining, run).await {
        // The child is killed when the future holding it is dropped (`kill_on_drop`).
        Err(_) => return Attempt::Fail(timeout(name, policy, attempt)),
        Ok(Err(e)) => {
            return Attempt::Fail(LlmError::Command {
                command: name.to_owned(),
                message: format!("cannot read its output: {e}"),
            });
        }
        Ok(Ok(output)) => output,
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let parsed = match kind {
        ProviderKind::ClaudeCli => parse_claude_output(&stdout),
        _ => parse_codex_output(&stdout),
    };
    let failed = |message: String| {
        Attempt::Retry(
            LlmError::CommandFailed {
                command: name.to_owned(),
                attempts: attempt,
                message,
            },
            None,
        )
    };
    match (output.status.success(), parsed) {
        (true, Ok(text)) => Attempt::Done(text),
        (true, Err(OutputError::Malformed(reason))) => Attempt::Fail(LlmError::MalformedReply {
            url: name.to_owned(),
            reason,
        }),
        (_, Err(OutputError::Failed(message))) => failed(message),
        (false, _) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            failed(format!(
                "{}{}",
                output.status,
                last.map(|l| format!(": {}", excerpt(l)))
                    .unwrap_or_default()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs recorded from Claude Code 2.1.328 and Codex CLI 0.169.0 against the scripted
    /// server of mem-cli's real-client suite (`MEM_RECORD_CLI_OUTPUT=1`).
    const CLAUDE_RECORDED: &str = include_str!("../../../fixtures/llm-cli/claude-2.1.328.json");
    const CODEX_RECORDED: &str = include_str!("../../../fixtures/llm-cli/codex-0.169.0.jsonl");
    const REPLY: &str = r#"{"memory":[{"event":"ADD","id":null,"category":"preferences","text":"Reply to the user in French (extracted by the CLI model)."}]}"#;

    #[test]
    fn recorded_cli_outputs_parse_to_the_reply() {
        assert_eq!(parse_claude_output(CLAUDE_RECORDED), Ok(REPLY.to_owned()));
        assert_eq!(parse_codex_output(CODEX_RECORDED), Ok(REPLY.to_owned()));
    }

    #[test]
    fn cli_failures_and_junk_are_told_apart() {
        let err =
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key"}"#;
        assert_eq!(
            parse_claude_output(err),
            Err(OutputError::Failed("Invalid API key".into()))
        );
        assert!(matches!(
            parse_claude_output("not json"),
            Err(OutputError::Malformed(_))
        ));
        assert!(matches!(
            parse_claude_output(r#"{"type":"result"}"#),
            Err(OutputError::Malformed(_))
        ));
        let failed = "{\"type\":\"thread.started\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}\n";
        assert_eq!(
            parse_codex_output(failed),
            Err(OutputError::Failed("stream disconnected".into()))
        );
        assert!(matches!(
            parse_codex_output(""),
            Err(OutputError::Malformed(_))
        ));
        assert!(matches!(
            parse_codex_output("{\"type\":\"turn.completed\"}"),
            Err(OutputError::Malformed(_))
        ));
    }

    #[test]
    fn the_child_marker_is_set_unless_empty_or_zero() {
        use std::ffi::OsStr;
        assert!(is_child_session(Some(OsStr::new("1"))));
        assert!(is_child_session(Some(OsStr::new("yes"))));
        assert!(!is_child_session(Some(OsStr::new(""))));
        assert!(!is_child_session(Some(OsStr::new("0"))));
        assert!(!is_child_session(None));
    }

    #[test]
    fn commands_are_found_on_path_or_as_paths() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let bin = dir.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
        let plain = dir.path().join("codex");
        std::fs::write(&plain, "not executable").unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let path = format!("/nonexistent:{}", dir.path().display());
        assert_eq!(find_command("claude", Some(&path)), Some(bin.clone()));
        assert_eq!(find_command("codex", Some(&path)), None, "not executable");
        assert_eq!(find_command("claude", None), None);
        assert_eq!(find_command("claude", Some("")), None);
        assert_eq!(
            find_command(&bin.display().to_string(), None),
            Some(bin.clone())
        );
        assert_eq!(find_command("/nonexistent/claude", Some(&path)), None);
        assert_eq!(find_command("", Some(&path)), None);
    }
}
