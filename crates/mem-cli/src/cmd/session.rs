//! `mem session list|show|search|resume|export|import|delete`.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use mem_session::ingest::{IngestAction, Ingested};
use mem_session::{
    ChainIssue, Diagnostic, RecordType, SessionMeta, SessionRecord, SessionStore,
    parse_compact_boundary, shorten,
};
use mewmem::ops::session::{self as ops, EXIT_DAMAGED_LINES, FileOutcome, ImportFailure};
use serde_json::{Value, json};

use crate::render::{quoted, render_message, safe_line};
use crate::settings::Settings;

/// `mem session ...`
#[derive(Debug, Args)]
pub struct SessionArgs {
    #[command(subcommand)]
    command: SessionCommand,
}

impl SessionArgs {
    /// Whether the command reads transcripts in bulk (an import): it allocates in bulk
    /// (`mem_alloc`).
    pub fn allocates_in_bulk(&self) -> bool {
        matches!(self.command, SessionCommand::Import { .. })
    }
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// List the project's sessions, most recently active first.
    List,
    /// Show a session's whole history, one line per record (boundaries included).
    Show {
        /// Session id or unique prefix (default: the latest session); one starting with `-`
        /// is taken as an id too.
        #[arg(allow_hyphen_values = true)]
        id: Option<String>,
        /// Only the records around this one (its number, as this command and
        /// `mem session search` print it).
        #[arg(long, value_name = "N")]
        around: Option<usize>,
        /// With --around: how many records to show on each side.
        #[arg(long, value_name = "K", default_value_t = 3, requires = "around")]
        context: usize,
    },
    /// Search the project's sessions, imported transcripts included, best match first.
    ///
    /// Searched: what the user said, assistant text, tool names, commands and file paths,
    /// short tool output and compaction summaries. Each hit names the session and record for
    /// `mem session show ID --around N`.
    Search {
        /// The words to find (any language).
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        query: Vec<String>,
        /// Only this session (id or unique prefix).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only records made at or after this time (YYYY-MM-DD or RFC 3339).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// The most hits to show (at most 200).
        #[arg(long, default_value_t = 20, value_parser = super::parse_limit)]
        limit: usize,
    },
    /// Show the conversation a resume replays: from the last compact boundary, validated.
    Resume {
        /// Session id or unique prefix (default: the latest session); one starting with `-`
        /// is taken as an id too.
        #[arg(allow_hyphen_values = true)]
        id: Option<String>,
    },
    /// Write a session out: its records (JSONL, the default) or its replayed messages (JSON).
    /// With `--json` and no `-o`, one JSON document: `{"session", "records"|"messages"}`.
    Export {
        /// Session id or unique prefix (default: the latest session); one starting with `-`
        /// is taken as an id too.
        #[arg(allow_hyphen_values = true)]
        id: Option<String>,
        /// What to write.
        #[arg(long, value_enum, default_value_t = ExportFormat::Records)]
        format: ExportFormat,
        /// Output file (default: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import Claude Code transcripts and Codex CLI rollouts (files or folders, recursive).
    Import {
        /// Files or folders to import.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Store the session under this id instead of one derived from the file (one file only).
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// List the skipped lines by event type and every diagnostic (without it, 20 per file;
        /// the JSON output always has them all).
        #[arg(short, long)]
        verbose: bool,
    },
    /// Delete a session (its .jsonl, .meta and spilled tool results). Takes the full id, not a
    /// prefix.
    Delete {
        /// The full session id (one starting with `-` is taken as an id too).
        #[arg(allow_hyphen_values = true)]
        id: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// Every record of the session file, one JSON object per line.
    Records,
    /// The replayed, validated conversation as a JSON array of messages.
    Messages,
}

/// Runs `mem session ...`.
pub fn run(args: SessionArgs, settings: &Settings) -> Result<()> {
    let store = SessionStore::for_project(&settings.project);
    let mut out = io::stdout().lock();
    match args.command {
        SessionCommand::List => list(&store, settings, &mut out),
        SessionCommand::Show {
            id,
            around,
            context,
        } => {
            let window = around.map(|n| (n, context));
            show(&store, &resolve(&store, id)?, window, settings, &mut out)
        }
        SessionCommand::Search {
            query,
            session,
            since,
            limit,
        } => {
            let session = session.map(|p| store.resolve_id(&p)).transpose()?;
            let query = mem_session::SessionQuery {
                text: query.join(" "),
                session,
                since,
                limit,
            };
            search(&store, &query, settings, &mut out)
        }
        SessionCommand::Resume { id } => resume(&store, &resolve(&store, id)?, settings, &mut out),
        SessionCommand::Export { id, format, output } => export(
            &store,
            &resolve(&store, id)?,
            format,
            output,
            settings,
            &mut out,
        ),
        SessionCommand::Import { paths, id, verbose } => {
            settings.guard_write(store.dir())?;
            if let Some(id) = &id {
                mem_session::validate_id(id)?;
                if id.starts_with('-') {
                    bail!(
                        "--id `{id}`: a session id cannot start with `-` (it would read as an option)"
                    );
                }
                if paths.len() != 1 || !paths[0].is_file() {
                    bail!("--id names one session: give exactly one transcript file with it");
                }
            }
            let options = ImportOptions {
                id: id.as_deref(),
                verbose,
            };
            // Piped or redirected, the report is written in blocks rather than a system call
            // a line (four a session); stdout is flushed before the import's diagnostics and
            // errors go to stderr, so they keep their order when the two share a file (log
            // warnings from the store may come ahead of buffered report lines).
            if io::IsTerminal::is_terminal(&out) {
                import(&store, &paths, &options, settings, &mut out)
            } else {
                let mut buffered = io::BufWriter::with_capacity(1 << 16, &mut out);
                let imported = import(&store, &paths, &options, settings, &mut buffered);
                let flushed = buffered.flush();
                imported.and(flushed.map_err(Into::into))
            }
        }
        SessionCommand::Delete { id } => delete(&store, &id, settings, &mut out),
    }
}

/// `mem session delete ID`: the `.jsonl`, the `.meta`, the record of notes recall surfaced in
/// it (`<id>.recall.json`), and the tool results its compactions spilled
/// (`<project>/.mewcode/session/tool-results/<id>/`), by [`ops::delete`]. Only a full id: a
/// prefix is refused with the id(s) it matches.
fn delete(store: &SessionStore, id: &str, settings: &Settings, out: &mut impl Write) -> Result<()> {
    mem_session::validate_id(id)?;
    let spills = ops::spill_dir(&settings.project, id);
    settings.guard_write(store.dir())?;
    settings.guard_write(&spills)?;
    let deleted = ops::delete(store, &settings.project, id)?;
    if settings.json {
        crate::render::write_json(
            out,
            &json!({"deleted": id, "tool_results_deleted": deleted.tool_results}),
        )?;
    } else if let Some(spills) = &deleted.tool_results {
        writeln!(
            out,
            "deleted session {id} and its spilled tool results ({})",
            safe_line(&spills.display().to_string())
        )?;
    } else {
        writeln!(out, "deleted session {id}")?;
    }
    Ok(())
}

/// The key to the one-line listing of `show` and `resume`.
pub(crate) const LEGEND: &str = "legend: \"…\" text  (…) thinking  => tool result  \
     tool_result! an error result  tool_use:NAME a tool call  *N repeated  [summary] a compaction summary";

/// A full id from a prefix, or the latest session when none is given ([`ops::resolve`]).
fn resolve(store: &SessionStore, id: Option<String>) -> Result<String> {
    Ok(ops::resolve(store, id.as_deref())?)
}

fn list(store: &SessionStore, settings: &Settings, out: &mut impl Write) -> Result<()> {
    let metas = store.list()?;
    if settings.json {
        crate::render::write_json(out, &metas)?;
        return Ok(());
    }
    if metas.is_empty() {
        writeln!(out, "no sessions in {}", store.dir().display())?;
        return Ok(());
    }
    // As wide as the longest id (ids are ASCII: one column a byte), so the columns stay
    // aligned whatever the ids' lengths.
    let width = metas.iter().map(|m| m.id.len()).max().unwrap_or(2).max(2);
    writeln!(
        out,
        "{:<width$}  {:>8}  {:>8}  {:>4}  {:<24}  TITLE",
        "ID", "MESSAGES", "TOKENS", "COMP", "LAST ACTIVE"
    )?;
    for m in &metas {
        let mut title = m.title.clone().unwrap_or_default();
        if let Some(parent) = &m.parent_id {
            title = format!("[subagent of {parent}] {title}");
        }
        if m.damaged_lines > 0 {
            title = format!("[damaged: {}] {title}", count(m.damaged_lines, "line"));
        }
        writeln!(
            out,
            "{:<width$}  {:>8}  {:>8}  {:>4}  {:<24}  {}",
            m.id,
            m.message_count,
            m.token_count,
            m.compactions,
            safe_line(&m.last_active),
            safe_line(&shorten(&title, 70))
        )?;
    }
    writeln!(out, "{}", count(metas.len(), "session"))?;
    Ok(())
}

fn header(meta: &SessionMeta, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "session {}", meta.id)?;
    if let Some(t) = &meta.title {
        writeln!(out, "title: {}", safe_line(t))?;
    }
    if let Some(p) = &meta.parent_id {
        writeln!(out, "parent: {}", safe_line(p))?;
    }
    if meta.damaged_lines > 0 {
        writeln!(
            out,
            "damaged: {} could not be read (listed below)",
            count(meta.damaged_lines, "line")
        )?;
    }
    writeln!(
        out,
        "messages: {}  tokens: {}  compactions: {}  created: {}  last active: {}",
        meta.message_count,
        meta.token_count,
        meta.compactions,
        safe_line(&meta.created),
        safe_line(&meta.last_active)
    )
}

/// `mem session show ID [--around N --context K]`: every record, or records N-K..=N+K.
fn show(
    store: &SessionStore,
    id: &str,
    window: Option<(usize, usize)>,
    settings: &Settings,
    out: &mut impl Write,
) -> Result<()> {
    let shown = ops::records(store, id, window)?;
    let first = shown.first;
    if settings.json {
        let mut v =
            json!({"meta": shown.meta, "records": shown.records, "diagnostics": shown.diagnostics});
        if window.is_some() {
            v["first_record"] = json!(first);
        }
        crate::render::write_json(out, &v)?;
        return Ok(());
    }
    header(&shown.meta, out)?;
    if window.is_some() {
        writeln!(out, "records {first} to {} of {}", shown.last, shown.total)?;
    }
    writeln!(out, "{LEGEND}")?;
    for (i, record) in shown.records.iter().enumerate() {
        writeln!(out, "{}", render_record(first + i, record))?;
    }
    print_diagnostics(&shown.diagnostics, out)?;
    Ok(())
}

/// `mem session search QUERY`: two lines a hit (where, then the snippet), then a count.
fn search(
    store: &SessionStore,
    query: &mem_session::SessionQuery,
    settings: &Settings,
    out: &mut impl Write,
) -> Result<()> {
    let found = mem_session::search_sessions(store, query)?;
    if found.stale {
        eprintln!(
            "warning: the session index could not be updated (read-only); sessions changed since the last import or sync may be missed"
        );
    }
    for w in &found.refresh.warnings {
        eprintln!("warning: {}", safe_line(w));
    }
    if settings.json {
        crate::render::write_json(out, &found)?;
        return Ok(());
    }
    if found.hits.is_empty() {
        writeln!(out, "no session message matches {}", quoted(&query.text))?;
        return Ok(());
    }
    for h in &found.hits {
        writeln!(
            out,
            "{}  #{}  {}  {}",
            safe_line(&h.session_id),
            h.record,
            h.timestamp.as_deref().map_or("-".into(), safe_line),
            h.role
        )?;
        writeln!(out, "    {}", safe_line(&h.snippet))?;
    }
    let sessions: std::collections::BTreeSet<&str> =
        found.hits.iter().map(|h| h.session_id.as_str()).collect();
    writeln!(
        out,
        "{} in {} (`mem session show ID --around N` for the context)",
        count(found.hits.len(), "hit"),
        count(sessions.len(), "session")
    )?;
    Ok(())
}

fn resume(store: &SessionStore, id: &str, settings: &Settings, out: &mut impl Write) -> Result<()> {
    let r = store.resume(id)?;
    if settings.json {
        let issues: Vec<String> = r.issues.iter().map(describe_issue).collect();
        let v = json!({
            "meta": r.meta,
            "from_boundary": r.from_boundary,
            "replay_offset": r.replay_offset,
            "messages": r.messages,
            "issues": issues,
            "diagnostics": r.diagnostics,
        });
        crate::render::write_json(out, &v)?;
        return Ok(());
    }
    header(&r.meta, out)?;
    if r.from_boundary {
        writeln!(
            out,
            "replay: from the last compact boundary ({} bytes of the file read)",
            r.replay_bytes
        )?;
    } else {
        writeln!(
            out,
            "replay: from the start ({} bytes read)",
            r.replay_bytes
        )?;
    }
    writeln!(out, "{LEGEND}")?;
    for (i, m) in r.messages.iter().enumerate() {
        writeln!(out, "{}", render_message(i + 1, m))?;
    }
    for issue in &r.issues {
        writeln!(out, "note: {}", safe_line(&describe_issue(issue)))?;
    }
    print_diagnostics(&r.diagnostics, out)?;
    Ok(())
}

fn export(
    store: &SessionStore,
    id: &str,
    format: ExportFormat,
    output: Option<PathBuf>,
    settings: &Settings,
    out: &mut impl Write,
) -> Result<()> {
    if settings.json && output.is_none() {
        // One JSON document, not the JSON Lines of the file format.
        let v = match format {
            ExportFormat::Records => {
                let (records, diagnostics) = store.read_records(id)?;
                for d in &diagnostics {
                    eprintln!("{}", safe_line(&d.to_string()));
                }
                json!({"session": id, "records": records})
            }
            ExportFormat::Messages => {
                json!({"session": id, "messages": store.resume(id)?.messages})
            }
        };
        crate::render::write_json(out, &v)?;
        return Ok(());
    }
    let mut bytes = Vec::new();
    let items = match format {
        ExportFormat::Records => {
            let (records, diagnostics) = store.read_records(id)?;
            for d in &diagnostics {
                eprintln!("{}", safe_line(&d.to_string()));
            }
            for r in &records {
                bytes.extend_from_slice(crate::render::json_line(r)?.as_bytes());
                bytes.push(b'\n');
            }
            (records.len(), "record")
        }
        ExportFormat::Messages => {
            let r = store.resume(id)?;
            bytes.extend_from_slice(crate::render::json_pretty(&r.messages)?.as_bytes());
            bytes.push(b'\n');
            (r.messages.len(), "message")
        }
    };
    match output {
        Some(path) => {
            std::fs::write(&path, &bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            if settings.json {
                let (n, what) = items;
                crate::render::write_json(
                    out,
                    &json!({"session": id, "written": path, format!("{what}s"): n, "bytes": bytes.len()}),
                )?;
            } else {
                writeln!(
                    out,
                    "wrote {}: {} of session {id}, {} bytes",
                    safe_line(&path.display().to_string()),
                    count(items.0, items.1),
                    bytes.len()
                )?;
            }
        }
        None => out.write_all(&bytes)?,
    }
    Ok(())
}

/// `mem session import` options beyond the paths.
struct ImportOptions<'a> {
    /// `--id`: the main session's id.
    id: Option<&'a str>,
    /// `--verbose`: skipped lines listed by event type.
    verbose: bool,
}

/// Ends a command with a given exit code after it has printed its output: not a failure, a
/// result worth a distinct code (`mem session import` with damaged lines: 3). `main` prints
/// `message` as a warning (nothing with `--json`: the JSON report says it) and exits `code`.
#[derive(Debug)]
pub struct ExitWith {
    /// The process exit code.
    pub code: u8,
    /// What it means, one line.
    pub message: String,
}

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitWith {}

/// How many diagnostics of one file are printed without `--verbose`.
const DIAGNOSTICS_SHOWN: usize = 20;

/// `mem session import` ([`ops::Import`]): diagnostics go to stderr (each damaged line once), a
/// per-file report and a summary with damaged lines by kind to stdout (with `--json`: one object
/// `{"files": [...], "summary": {...}}`). Exit 0: everything imported; 3
/// ([`EXIT_DAMAGED_LINES`]): imported, but damaged lines were skipped or altered; 1: a file
/// could not be imported (or nothing was).
fn import(
    store: &SessionStore,
    paths: &[PathBuf],
    options: &ImportOptions<'_>,
    settings: &Settings,
    out: &mut impl Write,
) -> Result<()> {
    let mut run = ops::Import::discover(paths);
    let mut json_items = Vec::new();
    for d in &run.diagnostics {
        if settings.json {
            json_items.push(json!({"file": d.path, "error": d.message}));
        } else {
            eprintln!("{}", safe_line(&d.to_string()));
        }
    }
    let bar = progress_bar(run.files.len() as u64, settings);
    // Files are read and converted in parallel (one thread per core), written and reported in
    // their order: the output and the ids are those of a one-by-one import.
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut io_error: Option<io::Error> = None;
    run.run(store, options.id, threads, |_, file, outcome| {
        bar.set_message(
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let printed: io::Result<()> = (|| {
            match outcome {
                FileOutcome::Imported(sessions) => {
                    if settings.json {
                        json_items.push(json!({"file": file, "sessions": sessions.iter().map(ingested_json).collect::<Vec<_>>()}));
                    } else {
                        bar.suspend(|| print_import(file, &sessions, options.verbose, out))?;
                    }
                }
                FileOutcome::AlreadyStored(path) if settings.json => {
                    json_items.push(
                        json!({"file": path, "skipped": "already a session of this project"}),
                    );
                }
                FileOutcome::AlreadyStored(path) => {
                    // `mem session import .` walks into the project's own sessions: not a
                    // failure.
                    bar.suspend(|| {
                        writeln!(
                            out,
                            "{}\n  skipped: already a session of this project",
                            safe_line(&path.display().to_string())
                        )
                    })?;
                }
                FileOutcome::NotATranscript(err) => {
                    if settings.json {
                        json_items.push(json!({"file": file, "skipped": err.to_string()}));
                    } else {
                        bar.suspend(|| {
                            after_report(out, || {
                                eprintln!("skipped: {}", safe_line(&err.to_string()));
                            })
                        })?;
                    }
                }
                FileOutcome::Failed(err) => {
                    if settings.json {
                        json_items.push(json!({"file": file, "error": err.to_string()}));
                    } else {
                        bar.suspend(|| {
                            after_report(out, || {
                                eprintln!("error: {}", safe_line(&err.to_string()));
                            })
                        })?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = printed
            && io_error.is_none()
        {
            io_error = Some(e);
        }
        bar.inc(1);
    })?;
    if let Some(e) = io_error {
        return Err(e.into());
    }
    bar.finish_and_clear();
    // The imported messages become searchable (`mem session search`); a failure here loses
    // nothing (the next search brings the index in step) and does not fail the import.
    if let Some(e) = run.refresh_index(store) {
        after_report(out, || {
            eprintln!(
                "warning: session search index not updated: {}",
                safe_line(&e.to_string())
            );
        })?;
    }
    let files = run.files.len();
    let failure = run.finish().map(|f| match f {
        ImportFailure::NoTranscript { files } => format!(
            "none of the {} found is a transcript mewmem can import",
            count(files, "file")
        ),
        ImportFailure::NoneImported => "no file could be imported".to_owned(),
        ImportFailure::Some { paths } => format!(
            "{} could not be imported (each is listed with its error)",
            count(paths, "path")
        ),
    });
    let summary = &run.summary;
    let not_transcripts = summary.not_transcripts;
    if settings.json {
        crate::render::write_json(out, &json!({"files": json_items, "summary": summary}))?;
    } else {
        writeln!(
            out,
            "{}, {}{}: {}, {}, {}; {}{}{} failed",
            count(files, "file"),
            count(summary.sessions, "session"),
            if summary.unchanged > 0 {
                format!(" ({} unchanged)", summary.unchanged)
            } else {
                String::new()
            },
            count(summary.messages, "message"),
            count(summary.tool_pairs, "tool pair"),
            count(summary.boundaries, "boundary"),
            if summary.damaged_lines > 0 {
                format!(
                    "{}, ",
                    damaged_text(summary.damaged_lines, &summary.damaged)
                )
            } else {
                String::new()
            },
            if not_transcripts > 0 {
                format!("{not_transcripts} not a transcript, ")
            } else {
                String::new()
            },
            summary.failed
        )?;
    }
    if let Some(message) = failure {
        bail!(message);
    }
    if summary.damaged_lines > 0 {
        return Err(ExitWith {
            code: EXIT_DAMAGED_LINES,
            message: format!(
                "imported, but {} skipped or altered (each is listed above with its file and \
                 line)",
                damaged_text(summary.damaged_lines, &summary.damaged)
            ),
        }
        .into());
    }
    Ok(())
}

/// Runs `to_stderr` once the report written so far to `out` (buffered when stdout is not a
/// terminal) is flushed, so the two keep their order when they share a file; runs it even when
/// that flush fails, whose error it returns.
fn after_report(out: &mut impl Write, to_stderr: impl FnOnce()) -> io::Result<()> {
    let flushed = out.flush();
    to_stderr();
    flushed
}

/// `3 damaged lines (malformed-json 2, torn-line 1)`.
fn damaged_text(total: usize, by_kind: &std::collections::BTreeMap<String, usize>) -> String {
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{} ({})", count(total, "damaged line"), kinds.join(", "))
}

fn progress_bar(len: u64, settings: &Settings) -> indicatif::ProgressBar {
    if len < 2 || !settings.interactive || settings.json {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

/// One session of the `--json` import report; `messages`, `tool_pairs` and `boundaries` count
/// what this import added (0 when `action` is `unchanged`), `session_messages` what the session
/// holds.
fn ingested_json(s: &Ingested) -> Value {
    let added = |n: usize| {
        if s.action == IngestAction::Unchanged {
            0
        } else {
            n
        }
    };
    json!({
        "id": s.meta.id,
        "action": s.action,
        "format": s.format.to_string(),
        "title": s.meta.title,
        "parent_id": s.meta.parent_id,
        "messages": added(s.report.messages),
        "tool_pairs": added(s.report.tool_pairs),
        "boundaries": added(s.report.boundaries),
        "session_messages": s.meta.message_count,
        "lines": s.report.lines,
        "skipped": s.report.skipped,
        "damaged_lines": s.report.damaged_total(),
        "damaged": s.report.damaged,
        "diagnostics": s.report.diagnostics,
    })
}

fn print_import(
    file: &std::path::Path,
    sessions: &[Ingested],
    verbose: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "{}", safe_line(&file.display().to_string()))?;
    for s in sessions {
        let action = match s.action {
            IngestAction::Created => "created",
            IngestAction::Replaced => "replaced",
            IngestAction::Unchanged => "unchanged",
            IngestAction::Appended => "appended to",
            IngestAction::Empty => "no conversation in",
        };
        let parent = s
            .meta
            .parent_id
            .as_deref()
            .map(|p| format!(" (subagent of {})", safe_line(p)))
            .unwrap_or_default();
        writeln!(out, "  {action} {} [{}]{parent}", s.meta.id, s.format)?;
        if s.action == IngestAction::Unchanged {
            // The few lines read again from the sync mark are not an import: say what the
            // session holds, and that nothing was added.
            writeln!(
                out,
                "    nothing new since the last import (the session holds {})",
                count(s.meta.message_count, "message")
            )?;
            continue;
        }
        writeln!(
            out,
            "    {}, {}, {}, {} read{}",
            count(s.report.messages, "message"),
            count(s.report.tool_pairs, "tool pair"),
            count(s.report.boundaries, "boundary"),
            count(s.report.lines, "line"),
            if s.report.damaged.is_empty() {
                String::new()
            } else {
                format!(
                    "; {}",
                    damaged_text(s.report.damaged_total(), &s.report.damaged)
                )
            }
        )?;
        if !s.report.skipped.is_empty() {
            if verbose {
                let parts: Vec<String> = s
                    .report
                    .skipped
                    .iter()
                    .map(|(k, v)| format!("{} {v}", safe_line(k)))
                    .collect();
                writeln!(out, "    skipped: {}", parts.join(", "))?;
            } else {
                let kinds = s.report.skipped.len();
                writeln!(
                    out,
                    "    skipped: {} of {} (--verbose lists them)",
                    count(s.report.skipped_total(), "line"),
                    count(kinds, "kind"),
                )?;
            }
        }
    }
    // Diagnostics to stderr, after the file's report (at most DIAGNOSTICS_SHOWN per file
    // unless --verbose).
    let mut all: Vec<&Diagnostic> = sessions
        .iter()
        .flat_map(|s| &s.report.diagnostics)
        .collect();
    if all.is_empty() {
        return Ok(());
    }
    // Flushed first: on a failing stdout its error is returned after the diagnostics.
    let flushed = out.flush();
    let mut err = io::stderr().lock();
    // In line order (the reader's and the importer's findings interleaved); file-wide last.
    all.sort_by_key(|d| (d.line == 0, d.line));
    let shown = if verbose {
        all.len()
    } else {
        all.len().min(DIAGNOSTICS_SHOWN)
    };
    for d in &all[..shown] {
        writeln!(err, "{}", safe_line(&d.to_string()))?;
    }
    if shown < all.len() {
        writeln!(
            err,
            "{}: {} more {} (--verbose lists them all)",
            safe_line(&file.display().to_string()),
            all.len() - shown,
            if all.len() - shown == 1 {
                "diagnostic"
            } else {
                "diagnostics"
            }
        )?;
    }
    flushed
}

/// `1 file`, `2 files`, `3 boundaries`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun.strip_suffix('y') {
        format!("{n} {stem}ies")
    } else {
        format!("{n} {noun}s")
    }
}

fn print_diagnostics(diagnostics: &[Diagnostic], out: &mut impl Write) -> io::Result<()> {
    for d in diagnostics {
        writeln!(out, "{}", safe_line(&d.to_string()))?;
    }
    Ok(())
}

fn describe_issue(issue: &ChainIssue) -> String {
    match issue {
        ChainIssue::DanglingTail { from, count } => {
            format!(
                "{count} trailing message(s) from #{} cut from the replay: a tool call never got its result",
                from + 1
            )
        }
        ChainIssue::InterruptedToolUse { id } => {
            format!("tool call {id} was interrupted; an error result was added to the replay")
        }
        ChainIssue::OrphanToolResult { tool_use_id } => {
            format!("tool result for {tool_use_id} has no tool call in the replay; left out")
        }
    }
}

/// Whitespace collapsed, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    shorten(&collapsed, max)
}

fn render_record(index: usize, r: &SessionRecord) -> String {
    match r.record_type {
        RecordType::CompactBoundary | RecordType::Compression => {
            let kept = parse_compact_boundary(r)
                .map(|b| b.keep_messages.len())
                .unwrap_or(0);
            format!(
                "{index:>4} --- {} (keeps {kept}) {}",
                r.record_type.as_str(),
                quoted(&one_line(r.summary.as_deref().unwrap_or(""), 60))
            )
        }
        RecordType::Rollback => match mem_session::parse_rollback(r) {
            Some(rb) => format!(
                "{index:>4} --- rollback to record {} (checkpoint {})",
                rb.to_records,
                quoted(&one_line(&rb.checkpoint, 60))
            ),
            None => format!("{index:>4} rollback"),
        },
        _ => match &r.message {
            Some(m) if r.record_type == RecordType::SystemPrompt => {
                format!(
                    "{index:>4} system_prompt {}",
                    quoted(&one_line(&m.text_content(), 60))
                )
            }
            Some(m) => render_message(index, m),
            None => format!("{index:>4} {}", r.record_type.as_str()),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The parent id and the timestamps come from transcripts (a mewmem sidecar's
    /// `parent_id`, a record's `timestamp`): printed escaped.
    #[test]
    fn the_header_escapes_what_came_from_a_transcript() {
        let mut meta = SessionMeta::new("s", "2026-01-01\u{1b}[2J".into());
        meta.parent_id = Some("p\u{1b}]0;title\u{7}".into());
        meta.last_active = "t\u{202e}".into();
        let mut out = Vec::new();
        header(&meta, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(!text.contains('\u{7}'), "{text}");
        assert!(!text.contains('\u{202e}'), "{text}");
        assert!(text.contains("parent: p"), "{text}");
    }
}
