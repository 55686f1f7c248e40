//! Claude Code hooks: the events mewmem answers, the payload Claude Code writes on stdin, what
//! is printed back, and the log of what went wrong.
//!
//! Protocol facts (Claude Code hooks reference): every hook gets one JSON object on stdin with
//! `session_id`, `transcript_path`, `cwd` and `hook_event_name`, plus per event `source`
//! (SessionStart: `startup` | `resume` | `clear` | `compact`), `prompt` (UserPromptSubmit),
//! `trigger` (PreCompact: `manual` | `auto`), `stop_hook_active` (Stop), `reason` (SessionEnd).
//! Exit code 2 blocks (for UserPromptSubmit it erases the user's prompt) and any other non-zero
//! code shows an error, so a failure of ours is logged to `<project>/.mewcode/logs/hooks.log`
//! and the hook still exits 0 with nothing added. Context is added with
//! `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}` on stdout.
//!
//! No daemon: each hook is one run of the `mem` binary on the project's files.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::SystemTime;

use mem_llm::Llm;
use mem_recall::{MemoryDirs, SurfacedLog};
use serde_json::{Value, json};

use crate::context::{ContextOptions, start_context};
use crate::error::{Error, Result};
use crate::recall::recall_reminder;

/// The environment variable marking a model call's own agent session (set by the
/// `claude-cli` / `codex-cli` providers, [`mem_llm::cli`]): a hook run with it set does
/// nothing, successfully and silently.
pub const CHILD_SESSION_ENV: &str = mem_llm::cli::CHILD_SESSION_ENV;

/// `true` when this process runs inside a model call's agent session ([`CHILD_SESSION_ENV`]
/// set, not empty, not `0`): every hook entry point must then return at once, exit 0, no
/// output.
pub fn in_child_session() -> bool {
    mem_llm::cli::is_child_session(std::env::var_os(CHILD_SESSION_ENV).as_deref())
}

/// The Claude Code events `mem hook claude EVENT` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaudeEvent {
    /// A session starts, resumes, is cleared, or was just compacted: add the start context.
    SessionStart,
    /// The user sent a prompt: add the recall reminder for it (once recall is available).
    UserPromptSubmit,
    /// Claude Code is about to compact: bring the session record up to date first.
    PreCompact,
    /// The assistant finished a turn: bring the session record up to date.
    Stop,
    /// The session ends: a last update of the session record.
    SessionEnd,
}

impl ClaudeEvent {
    /// Every event, in the order of a session.
    pub const ALL: [ClaudeEvent; 5] = [
        ClaudeEvent::SessionStart,
        ClaudeEvent::UserPromptSubmit,
        ClaudeEvent::PreCompact,
        ClaudeEvent::Stop,
        ClaudeEvent::SessionEnd,
    ];

    /// The event's name in Claude Code (`SessionStart`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeEvent::SessionStart => "SessionStart",
            ClaudeEvent::UserPromptSubmit => "UserPromptSubmit",
            ClaudeEvent::PreCompact => "PreCompact",
            ClaudeEvent::Stop => "Stop",
            ClaudeEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The timeout written into `settings.json` for this event, in seconds.
    pub fn timeout_secs(self) -> u64 {
        match self {
            ClaudeEvent::SessionStart | ClaudeEvent::UserPromptSubmit => 10,
            ClaudeEvent::PreCompact | ClaudeEvent::Stop | ClaudeEvent::SessionEnd => 30,
        }
    }
}

impl fmt::Display for ClaudeEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ClaudeEvent {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        ClaudeEvent::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown Claude Code event `{s}` (expected one of: {})",
                    ClaudeEvent::ALL.map(ClaudeEvent::as_str).join(", ")
                )
            })
    }
}

/// The fields of a hook payload mewmem uses. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookInput {
    /// `hook_event_name`.
    pub event_name: Option<String>,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `transcript_path`, resolved against `cwd` when relative.
    pub transcript_path: Option<PathBuf>,
    /// `cwd`.
    pub cwd: Option<PathBuf>,
    /// `source` (SessionStart).
    pub source: Option<String>,
    /// `prompt` (UserPromptSubmit).
    pub prompt: Option<String>,
    /// `trigger` (PreCompact).
    pub trigger: Option<String>,
    /// `reason` (SessionEnd).
    pub reason: Option<String>,
}

impl HookInput {
    /// Parses the payload bytes.
    ///
    /// Errors: [`Error::Payload`] for empty input, input that is not JSON (the position is
    /// given, never the text: it may hold the user's prompt), a JSON value that is not an
    /// object, or a known field of the wrong type.
    pub fn parse(bytes: &[u8]) -> Result<HookInput> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::Payload(
                "stdin is empty: Claude Code sends the hook's JSON on stdin".to_owned(),
            ));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::Payload(format!(
                "stdin is not JSON ({} bytes; {} at line {} column {})",
                bytes.len(),
                match e.classify() {
                    serde_json::error::Category::Eof => "ends early",
                    serde_json::error::Category::Syntax => "syntax error",
                    serde_json::error::Category::Data => "wrong type",
                    serde_json::error::Category::Io => "read error",
                },
                e.line(),
                e.column()
            ))
        })?;
        let Value::Object(obj) = value else {
            return Err(Error::Payload("stdin is JSON but not an object".to_owned()));
        };
        let text = |key: &str| -> Result<Option<String>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::Payload(format!("field `{key}` is not a string"))),
            }
        };
        let cwd = text("cwd")?.map(PathBuf::from);
        let transcript_path = text("transcript_path")?.map(|p| {
            let p = PathBuf::from(p);
            match &cwd {
                Some(c) if p.is_relative() => c.join(p),
                _ => p,
            }
        });
        Ok(HookInput {
            event_name: text("hook_event_name")?,
            session_id: text("session_id")?,
            transcript_path,
            cwd,
            source: text("source")?,
            prompt: text("prompt")?,
            trigger: text("trigger")?,
            reason: text("reason")?,
        })
    }
}

/// What a hook run needs besides the payload, resolved by the caller (the CLI reads
/// configuration and the environment).
#[derive(Clone)]
pub struct HookConfig {
    /// The project (from `$CLAUDE_PROJECT_DIR`, `--project` or the payload's `cwd`).
    pub project: PathBuf,
    /// What the start context holds; its `budget_chars` (at most
    /// [`crate::context::CLAUDE_HOOK_MAX_CHARS`]) bounds every added context.
    pub context: ContextOptions,
    /// The note folders recall reads (project, user, configured extras).
    pub recall_dirs: MemoryDirs,
    /// The recall selector (`mem_llm::Llm::select`); needed for `UserPromptSubmit` only.
    pub select: Option<Arc<dyn Llm>>,
    /// The time note ages are counted to.
    pub now: SystemTime,
    /// Extraction into `memories.md` after the sync (PreCompact, Stop, SessionEnd): the files,
    /// the extractor (`mem_llm::Llm::extract`), its options, and how long it may take.
    pub extract: Option<ExtractConfig>,
}

/// How a hook extracts memories after syncing the transcript.
#[derive(Clone)]
pub struct ExtractConfig {
    /// The two `memories.md` files of the project.
    pub auto: mem_auto::AutoMemory,
    /// The extractor.
    pub llm: Arc<dyn Llm>,
    /// Budget and time of the extraction.
    pub options: mem_auto::ExtractOptions,
    /// The extraction is abandoned past this (the messages wait for the next hook: the
    /// per-session count only moves once the files are written).
    pub deadline: std::time::Duration,
}

impl fmt::Debug for HookConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookConfig")
            .field("project", &self.project)
            .field("context", &self.context)
            .field("recall_dirs", &self.recall_dirs)
            .finish_non_exhaustive()
    }
}

/// What a hook run produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// The JSON to print on stdout, if any (nothing printed: nothing added).
    pub stdout: Option<Value>,
    /// What was done, for the log at debug level (one line each).
    pub notes: Vec<String>,
    /// Problems that did not stop the hook (a note that could not be read, a selector that
    /// timed out, a context cut to fit), for the hook log.
    pub problems: Vec<String>,
}

/// Runs one event. Every error is returned to the caller, who logs it and exits 0.
///
/// Added context is the bare sections of each `<system-reminder>` block
/// ([`mem_core::unwrap_system_reminder`]): the client frames it itself.
///
/// - `SessionStart`: the start context ([`start_context`]) as `additionalContext`, for every
///   `source` (after `compact` the context Claude Code dropped is added again). Nothing when
///   there are neither instructions nor memories.
/// - `UserPromptSubmit`: the recall reminder for `prompt` ([`recall_reminder`]: at most 5
///   notes, 8 s selector deadline, within the budget), notes already surfaced in this Claude
///   Code session (`session_id`) left out. Nothing when no note applies.
/// - `PreCompact`, `Stop`, `SessionEnd`: the transcript is imported into the project's session
///   store incrementally ([`mem_session::ingest::import_into`]: only the new lines are read),
///   then the messages after the last extraction go to [`mem_auto::extract_session`] within
///   [`ExtractConfig::deadline`] (when configured).
///
/// Errors: [`Error::Payload`] for a payload of another event or without a needed field, a
/// `transcript_path` that does not exist or is not a file; session and I/O errors.
pub async fn run_claude(
    event: ClaudeEvent,
    input: &HookInput,
    config: &HookConfig,
) -> Result<HookOutcome> {
    if let Some(name) = &input.event_name
        && name != event.as_str()
    {
        return Err(Error::Payload(format!(
            "`hook_event_name` is `{name}`, but this hook was installed for {event}"
        )));
    }
    let mut out = HookOutcome::default();
    match event {
        ClaudeEvent::SessionStart => {
            let ctx = start_context(&config.context)?;
            for w in &ctx.warnings {
                out.problems.push(format!("warning: {w}"));
            }
            if ctx.cut_chars > 0 {
                out.problems.push(format!(
                    "start context over the budget: {} characters cut",
                    ctx.cut_chars
                ));
            }
            if !ctx.is_empty() {
                let text = mem_core::unwrap_system_reminder(&ctx.text);
                let log = input
                    .session_id
                    .as_deref()
                    .filter(|id| mem_session::validate_id(id).is_ok())
                    .map(|id| ContextLog::for_session(&config.project, id));
                let digest = ContextLog::digest(text);
                let resumed = input.source.as_deref() == Some("resume");
                if resumed && log.as_ref().and_then(ContextLog::last).as_deref() == Some(&digest) {
                    out.notes.push(
                        "start context unchanged since it was added to this session: not added \
                         again on resume"
                            .to_owned(),
                    );
                } else {
                    out.stdout = Some(additional_context(event, text));
                    if let Some(log) = &log
                        && let Err(e) = log.record(&digest, input.source.as_deref())
                    {
                        out.problems.push(format!("{e}"));
                    }
                }
            }
        }
        ClaudeEvent::UserPromptSubmit => {
            let Some(prompt) = &input.prompt else {
                return Err(Error::Payload("field `prompt` is missing".to_owned()));
            };
            let Some(select) = config.select.clone() else {
                return Err(Error::Payload(
                    "no recall selector configured for UserPromptSubmit".to_owned(),
                ));
            };
            let store = mem_session::SessionStore::for_project(&config.project);
            let log = match input.session_id.as_deref() {
                Some(id) if mem_session::validate_id(id).is_ok() => {
                    fs::create_dir_all(store.dir())
                        .map_err(|e| Error::io("cannot create", store.dir(), e))?;
                    Some(SurfacedLog::for_session(store.dir(), id))
                }
                Some(id) => {
                    out.problems.push(format!(
                        "session_id {:?} cannot name a file; surfaced notes are not remembered",
                        mem_core::terminal::safe_line(id)
                    ));
                    None
                }
                None => None,
            };
            let recalled = recall_reminder(
                select,
                &config.recall_dirs,
                log.as_ref(),
                prompt,
                config.context.budget_chars,
                config.now,
            )
            .await;
            out.problems.extend(recalled.problems);
            if !recalled.left_out.is_empty() {
                out.problems.push(format!(
                    "left out of the recall reminder to fit the budget: {}",
                    recalled.left_out.join(", ")
                ));
            }
            out.notes
                .push(format!("recalled: {}", recalled.ids.join(", ")));
            if !recalled.reminder.is_empty() {
                out.stdout = Some(additional_context(
                    event,
                    mem_core::unwrap_system_reminder(&recalled.reminder),
                ));
            }
        }
        ClaudeEvent::PreCompact | ClaudeEvent::Stop | ClaudeEvent::SessionEnd => {
            let path = transcript(input)?;
            // The token count of what the sync appends is left for the next reader that needs
            // it (`mem session`, a resume): counting would load the BPE vocabulary, the larger
            // part of this hook's time.
            let store = mem_session::SessionStore::for_project(&config.project).with_options(
                mem_session::StoreOptions {
                    defer_tokens: true,
                    ..mem_session::StoreOptions::default()
                },
            );
            let synced = mem_session::ingest::import_into(&store, &path)?;
            for s in &synced {
                out.notes.push(format!(
                    "session {}: {:?}, {} lines read",
                    s.meta.id, s.action, s.report.lines
                ));
            }
            let main = synced
                .iter()
                .find(|s| s.action != mem_session::ingest::IngestAction::Empty);
            // The session search index reads only what the sync appended.
            if main.is_some() {
                match mem_session::refresh_index(&store) {
                    Ok(r) => out.notes.push(format!(
                        "session index: {} messages added from {} sessions",
                        r.added, r.read
                    )),
                    Err(e) => out.problems.push(format!("session index: {e}")),
                }
            }
            if let (Some(extract), Some(main)) = (&config.extract, main) {
                let work = mem_auto::extract_session(
                    &extract.auto,
                    &store,
                    &main.meta.id,
                    extract.llm.as_ref(),
                    &extract.options,
                );
                match tokio::time::timeout(extract.deadline, work).await {
                    Ok(Ok(report)) => {
                        let added: usize = report.files.iter().map(|f| f.added.len()).sum();
                        out.notes.push(format!(
                            "extracted from {} new messages: {added} entries added",
                            report.messages_new
                        ));
                        out.problems.extend(report.fallback.map(|f| format!("extraction: {f}")));
                    }
                    Ok(Err(e)) => out.problems.push(format!("extraction failed: {e}")),
                    Err(_) => out.problems.push(format!(
                        "extraction did not finish within {} s; the messages wait for the next hook",
                        extract.deadline.as_secs()
                    )),
                }
            }
        }
    }
    Ok(out)
}

/// What the SessionStart hook last added to one client session:
/// `<project>/.mewcode/sessions/<session_id>.context.json`, `{"sha256": "<hex of the added
/// text>", "source": "<the event's source>"}`.
///
/// A resumed session (`source: resume`) already holds the context added before, in the
/// history the client restores; adding the same text again would put it in front of the model
/// twice. Codex CLI 0.169.0 also runs SessionStart twice when a resumed session compacts at
/// once (`compact`, then `resume`, or the other way round). So on `resume` the context is left
/// out when it is byte-identical to the last one added to that session; `startup`, `clear` and
/// `compact` always add it (the client starts from an empty or summarised history).
struct ContextLog {
    path: PathBuf,
}

impl ContextLog {
    fn for_session(project: &Path, session_id: &str) -> ContextLog {
        let dir = mem_session::SessionStore::for_project(project)
            .dir()
            .to_path_buf();
        ContextLog {
            path: dir.join(format!("{session_id}.context.json")),
        }
    }

    fn digest(text: &str) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The digest last recorded; `None` when there is none or the file is unreadable.
    fn last(&self) -> Option<String> {
        let read = mem_core::fsread::read_prefix(&self.path, 64 * 1024).ok()?;
        let v: Value = serde_json::from_slice(&read.bytes).ok()?;
        v.get("sha256").and_then(Value::as_str).map(str::to_owned)
    }

    fn record(&self, digest: &str, source: Option<&str>) -> Result<()> {
        let body = json!({"sha256": digest, "source": source});
        crate::install::write_atomic(&self.path, format!("{body}\n").as_bytes())
    }
}

/// `{"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}`.
pub fn additional_context(event: ClaudeEvent, text: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": event.as_str(),
            "additionalContext": text,
        }
    })
}

/// The payload's transcript, checked to be an existing regular file.
fn transcript(input: &HookInput) -> Result<PathBuf> {
    let Some(path) = &input.transcript_path else {
        return Err(Error::Payload(
            "field `transcript_path` is missing".to_owned(),
        ));
    };
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(path.clone()),
        Ok(_) => Err(Error::Payload(format!(
            "transcript_path {} is not a regular file",
            path.display()
        ))),
        Err(e) => Err(Error::Payload(format!(
            "transcript_path {} cannot be read: {e}",
            path.display()
        ))),
    }
}

/// The hook log: `<project>/.mewcode/logs/hooks.log`.
pub fn log_path(project: &Path) -> PathBuf {
    project.join(".mewcode").join("logs").join("hooks.log")
}

/// The log is moved to `hooks.log.1` (replacing an older one) past this size, in bytes.
pub const LOG_MAX_BYTES: u64 = 1 << 20;

/// Appends one line to the hook log (`<RFC 3339 time> <agent> <event>: <message>`), under an
/// exclusive lock, rotating it past [`LOG_MAX_BYTES`]. Control characters in `message` are
/// escaped so one entry stays one line.
///
/// Errors: [`Error::Io`] when the log cannot be created or written.
pub fn log_line(project: &Path, agent: &str, event: &str, message: &str) -> Result<()> {
    log_line_to(&log_path(project), agent, event, message)
}

/// [`log_line`] into the log file `path` (e.g. `mem mcp`'s `mcp.log` beside the hook log).
///
/// Errors: [`Error::Io`] when the log cannot be created or written.
pub fn log_line_to(path: &Path, agent: &str, event: &str, message: &str) -> Result<()> {
    let path = path.to_path_buf();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io("cannot open", &path, e))?;
    file.lock()
        .map_err(|e| Error::io("cannot lock", &path, e))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > LOG_MAX_BYTES {
        let _ = fs::rename(&path, path.with_extension("log.1"));
        let _ = file.unlock();
        file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, e))?;
        file.lock()
            .map_err(|e| Error::io("cannot lock", &path, e))?;
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let line = format!(
        "{now} {agent} {event}: {}\n",
        mem_core::terminal::safe_line(message)
    );
    let result = file
        .write_all(line.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e));
    let _ = file.unlock();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_payloads_are_clear_errors_that_never_quote_the_input() {
        for (input, want) in [
            (&b""[..], "stdin is empty"),
            (b"  \n", "stdin is empty"),
            (b"{\"prompt\": \"my secret plan", "ends early"),
            (b"not json at all", "syntax error"),
            (b"[1,2]", "not an object"),
            (b"{\"cwd\": 3}", "`cwd` is not a string"),
        ] {
            let err = HookInput::parse(input).err().map(|e| e.to_string());
            let err = err.unwrap_or_default();
            assert!(err.contains(want), "{input:?}: {err}");
            assert!(!err.contains("secret"), "{err}");
        }
    }

    #[test]
    fn relative_transcript_paths_resolve_against_cwd() {
        let got = HookInput::parse(br#"{"cwd":"/w/p","transcript_path":"t.jsonl","x":1}"#);
        assert_eq!(
            got.ok().and_then(|i| i.transcript_path),
            Some(PathBuf::from("/w/p/t.jsonl"))
        );
    }

    #[test]
    fn event_names_round_trip() {
        for e in ClaudeEvent::ALL {
            assert_eq!(e.as_str().parse::<ClaudeEvent>(), Ok(e));
        }
        assert!("Start".parse::<ClaudeEvent>().is_err());
    }
}
