//! `mem llm`: the model layer. `check` shows which engine answers each job (and with `--call`
//! asks it once); `summarize`, `extract` and `select` run one job on a Claude Code transcript or
//! a memory directory, as compaction, auto memory and recall would; `prompts` prints the prompts.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use mem_core::{Message, Role};
use mem_llm::{
    Candidate, ExtractRequest, Job, LlmSettings, Reply, SelectRequest, SummarizeRequest,
};
use serde_json::{Value, json};

use crate::args::EngineArgs;
use crate::config::llm_settings;
use crate::open::engine_for;
use crate::render::{quoted, safe_line, safe_text};
use crate::settings::Settings;

/// Arguments of `mem llm`.
#[derive(Debug, Args)]
pub struct LlmArgs {
    #[command(subcommand)]
    command: LlmCommand,
}

#[derive(Debug, Subcommand)]
enum LlmCommand {
    /// Print the provider and model resolved for each job; with --call, ask each once.
    Check {
        /// Make one tiny request per job and report the latency or the error.
        #[arg(long)]
        call: bool,
    },
    /// Summarise a transcript (Claude Code, Codex or mewmem JSONL) as compaction would.
    Summarize {
        /// The transcript.
        file: PathBuf,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Extract memories from a transcript (Claude Code, Codex or mewmem JSONL) as auto memory would.
    Extract {
        /// The transcript.
        file: PathBuf,
        /// The current memories (a memories.md); entries already there are not extracted again.
        #[arg(long, value_name = "FILE")]
        memories: Option<PathBuf>,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Choose the memory files relevant to a query as recall would.
    Select {
        /// The user's message.
        query: String,
        /// Memory directories, relative to the current directory (default:
        /// `<project>/.mewcode/memory` and `~/.mewcode/memory`, skipped when missing).
        #[arg(long, value_name = "DIR")]
        dir: Vec<PathBuf>,
        /// The most files to choose (at least 1).
        #[arg(long, default_value_t = mem_llm::DEFAULT_SELECT_LIMIT, value_parser = parse_limit)]
        limit: usize,
        /// Also print the offline engine's BM25 score of every matching file.
        #[arg(long)]
        scores: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Print the prompts the model jobs send, with their version.
    Prompts,
}

/// `--limit`: a whole number of at least 1.
fn parse_limit(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("the limit must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `mem llm ...`.
pub async fn run(args: LlmArgs, settings: &Settings) -> Result<()> {
    match args.command {
        LlmCommand::Check { call } => check(settings, call).await,
        LlmCommand::Summarize { file, engine } => {
            let messages = read_transcript(&file)?;
            let llm = engine_for(settings, Job::Summarize, &engine)?;
            let reply = llm.summarize(&SummarizeRequest { messages }).await?;
            print_reply(
                settings,
                &reply,
                json!({"summary": reply.value.text}),
                &reply.value.text,
            )
        }
        LlmCommand::Extract {
            file,
            memories,
            engine,
        } => {
            let messages = read_transcript(&file)?;
            let current_memories = match memories {
                Some(p) => read_memories_file(&p)?,
                None => String::new(),
            };
            let llm = engine_for(settings, Job::Extract, &engine)?;
            let reply = llm
                .extract(&ExtractRequest {
                    current_memories,
                    entries: Vec::new(),
                    messages,
                })
                .await?;
            let text = if reply.value.is_empty() {
                "(no memories found)\n".to_owned()
            } else {
                reply.value.to_markdown()
            };
            print_reply(settings, &reply, json!({"memories": reply.value}), &text)
        }
        LlmCommand::Select {
            query,
            dir,
            limit,
            scores,
            engine,
        } => {
            let dirs = if dir.is_empty() {
                vec![
                    settings.project_dir().join("memory"),
                    settings.user_dir().join("memory"),
                ]
            } else {
                // Relative to the current directory, as every path argument is.
                for d in &dir {
                    match std::fs::metadata(d) {
                        Ok(m) if m.is_dir() => {}
                        Ok(_) => bail!("--dir {}: not a directory", d.display()),
                        Err(e) => bail!("--dir {}: {e}", d.display()),
                    }
                }
                dir.clone()
            };
            let candidates = read_candidates(&dirs)?;
            let llm = engine_for(settings, Job::Select, &engine)?;
            let request = SelectRequest {
                query,
                candidates,
                limit,
            };
            let reply = llm.select(&request).await?;
            let mut text = String::new();
            for (i, id) in reply.value.ids.iter().enumerate() {
                let c = request.candidates.iter().find(|c| &c.id == id);
                let (name, description) =
                    c.map_or(("", ""), |c| (c.name.as_str(), c.description.as_str()));
                text.push_str(&format!(
                    "{}. {} — {}: {}\n",
                    i + 1,
                    safe_line(id),
                    safe_line(name),
                    safe_line(description)
                ));
            }
            if reply.value.ids.is_empty() {
                text.push_str("(nothing selected)\n");
            }
            let scored = mem_llm::offline::score(&request.query, &request.candidates);
            let ideal = mem_llm::offline::ideal_score(&request.query, &request.candidates);
            let shares = mem_llm::offline::best_shares(&request.query, &request.candidates);
            if scores {
                text.push_str(&format!(
                    "\nBM25F scores of {} candidates and their best share of an ideal score over \
                     the message (ideal {ideal:.3}) and its clauses (threshold: a share of at \
                     least {} and {} of the best share; when none passes, the best alone if it has {}× \
                     the second's share and at least {}, else the rare-term floor; cut at a drop \
                     of {}×):\n",
                    request.candidates.len(),
                    mem_llm::offline::MIN_IDEAL_SHARE,
                    mem_llm::offline::MIN_RELATIVE_SCORE,
                    mem_llm::offline::STANDOUT_RATIO,
                    mem_llm::offline::MIN_STANDOUT_SHARE,
                    mem_llm::offline::DROP_RATIO,
                ));
                for (i, s) in &scored {
                    text.push_str(&format!(
                        "{s:8.3}  {:5.3}  {}\n",
                        shares[*i],
                        safe_line(&request.candidates[*i].id)
                    ));
                }
            }
            let scores_json: Vec<Value> = scored
                .iter()
                .map(|(i, s)| json!({"id": request.candidates[*i].id, "bm25": s, "share": shares[*i]}))
                .collect();
            print_reply(
                settings,
                &reply,
                json!({"selected": reply.value.ids, "candidates": request.candidates.len(), "ideal_bm25": ideal, "bm25": scores_json}),
                &text,
            )
        }
        LlmCommand::Prompts => {
            let mut out = std::io::stdout().lock();
            if settings.json {
                let prompts: Vec<Value> = Job::ALL
                    .iter()
                    .map(|job| json!({"job": job.as_str(), "system": mem_llm::prompt::template(*job)}))
                    .collect();
                let doc = json!({
                    "prompt_version": mem_llm::prompt::PROMPT_VERSION,
                    "prompts": prompts,
                });
                writeln!(out, "{}", crate::render::json_pretty(&doc)?)?;
                return Ok(());
            }
            writeln!(out, "prompt version: {}", mem_llm::prompt::PROMPT_VERSION)?;
            for job in Job::ALL {
                writeln!(out, "\n===== {job} (system prompt) =====")?;
                write!(out, "{}", mem_llm::prompt::template(job))?;
            }
            Ok(())
        }
    }
}

fn print_reply<T>(settings: &Settings, reply: &Reply<T>, value: Value, text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if settings.json {
        let mut doc = json!({
            "engine": reply.engine,
            "fallback": reply.fallback,
            "dropped": reply.dropped,
        });
        if let (Value::Object(doc), Value::Object(extra)) = (&mut doc, value) {
            doc.extend(extra);
        }
        writeln!(out, "{}", crate::render::json_pretty(&doc)?)?;
        return Ok(());
    }
    write!(out, "{}", safe_text(text))?;
    out.flush()?;
    let mut err = std::io::stderr().lock();
    if let Some(reason) = &reply.fallback {
        writeln!(
            err,
            "note: the reply of {} was unusable; the offline engine answered ({})",
            safe_line(&reply.engine),
            safe_line(reason)
        )?;
    }
    for dropped in &reply.dropped {
        writeln!(
            err,
            "note: dropped from the reply of {}: {}",
            safe_line(&reply.engine),
            safe_line(dropped)
        )?;
    }
    Ok(())
}

/// The outcome of one `--call` request.
struct CallOutcome {
    job: Job,
    /// `None` when the job is offline (no call needed).
    result: Option<std::result::Result<(String, std::time::Duration), String>>,
}

async fn check(settings: &Settings, call: bool) -> Result<()> {
    let (resolved, sources) = llm_settings(settings)?;
    let mut calls = Vec::new();
    if call {
        for job in Job::ALL {
            let result = match resolved.job(job).model_engine() {
                Ok(None) => None,
                Ok(Some(engine)) => Some(engine.ping().await.map_err(|e| error_chain(&e))),
                Err(e) => Some(Err(error_chain(&e))),
            };
            calls.push(CallOutcome { job, result });
        }
    }
    let failures = calls
        .iter()
        .filter(|c| matches!(c.result, Some(Err(_))))
        .count();
    let mut out = std::io::stdout().lock();
    if settings.json {
        let jobs: Vec<Value> = Job::ALL
            .iter()
            .map(|job| {
                let s = resolved.job(*job);
                json!({
                    "job": job.as_str(),
                    "provider": s.provider.as_str(),
                    "model": s.model,
                    "base_url": s.base_url,
                    "key": s.key_source,
                    "command": s.command.as_ref().map(|c| c
                        .path
                        .as_ref()
                        .map_or_else(|| c.name.clone(), |p| p.display().to_string())),
                    "timeout_secs": s.policy.timeout.as_secs_f64(),
                    "problem": s.problem(),
                })
            })
            .collect();
        let files: Vec<Value> = sources
            .iter()
            .map(|s| json!({"path": s.path, "found": s.found}))
            .collect();
        let mut doc = json!({"jobs": jobs, "config_files": files});
        if call && let Value::Object(map) = &mut doc {
            let calls: Vec<Value> = calls
                .iter()
                .map(|c| match &c.result {
                    None => json!({"job": c.job.as_str(), "status": "offline"}),
                    Some(Ok((reply, latency))) => json!({
                        "job": c.job.as_str(),
                        "status": "ok",
                        "latency_ms": latency.as_millis(),
                        "reply": reply,
                    }),
                    Some(Err(e)) => json!({"job": c.job.as_str(), "status": "error", "error": e}),
                })
                .collect();
            map.insert("calls".to_owned(), Value::Array(calls));
        }
        writeln!(out, "{}", crate::render::json_pretty(&doc)?)?;
    } else {
        for source in &sources {
            let state = if source.found { "read" } else { "not found" };
            writeln!(
                out,
                "config {} ({state})",
                safe_line(&source.path.display().to_string())
            )?;
        }
        for job in Job::ALL {
            writeln!(out, "{}", safe_line(&describe(&resolved, job)))?;
        }
        for c in &calls {
            let line = match &c.result {
                None => format!("{:<9}  offline: no call needed", c.job.as_str()),
                Some(Ok((reply, latency))) => format!(
                    "{:<9}  ok  {} ms  reply: {}",
                    c.job.as_str(),
                    latency.as_millis(),
                    quoted(&reply.chars().take(40).collect::<String>())
                ),
                Some(Err(e)) => format!("{:<9}  error: {}", c.job.as_str(), safe_line(e)),
            };
            writeln!(out, "{line}")?;
        }
    }
    if failures > 0 {
        bail!("{failures} of {} model calls failed", Job::ALL.len());
    }
    Ok(())
}

/// An error and its causes on one line, `: `-separated.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn describe(resolved: &LlmSettings, job: Job) -> String {
    let s = resolved.job(job);
    let mut line = format!("{:<9}  {}", job.as_str(), s.provider);
    if let Some(model) = &s.model {
        line.push_str(&format!("  model={model}"));
    }
    if let Some(url) = &s.base_url {
        line.push_str(&format!("  url={url}"));
    }
    if let Some(command) = &s.command {
        let program = command
            .path
            .as_ref()
            .map_or_else(|| command.name.clone(), |p| p.display().to_string());
        line.push_str(&format!(
            "  command={program}  timeout={}s  retries={}",
            s.policy.timeout.as_secs_f64(),
            s.policy.max_retries
        ));
    } else if s.provider != mem_llm::ProviderKind::Offline {
        line.push_str(&format!(
            "  key={}  timeout={}s  retries={}",
            s.key_source.as_deref().unwrap_or("none"),
            s.policy.timeout.as_secs_f64(),
            s.policy.max_retries
        ));
    }
    if let Some(problem) = s.problem() {
        line.push_str(&format!("  PROBLEM: {problem}"));
    }
    line
}

/// The largest `--memories` file read, in bytes (4 MiB; a memories.md is a few KB).
const MAX_MEMORIES_BYTES: usize = 4 << 20;

/// A `--memories` file, through the checks every file argument passes
/// ([`mem_instructions::read_capped`]: regular files only, opened non-blocking, at most
/// [`MAX_MEMORIES_BYTES`]). Errors name the file: not a regular file, too large, not UTF-8.
fn read_memories_file(path: &Path) -> Result<String> {
    let read = mem_instructions::read_capped(path, MAX_MEMORIES_BYTES)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if read.truncated {
        bail!(
            "{} is too large ({} bytes; a memories file may have at most {MAX_MEMORIES_BYTES})",
            path.display(),
            read.size
        );
    }
    if read.lossy {
        bail!("{} is not valid UTF-8", path.display());
    }
    Ok(read.text)
}

/// The conversation of a transcript (Claude Code or Codex, through the session importers): the
/// main session's message records in file order, system prompts and boundaries left out.
fn read_transcript(path: &Path) -> Result<Vec<Message>> {
    let sessions = mem_session::import::import_file(path)?;
    let messages: Vec<Message> = sessions
        .into_iter()
        .next()
        .map(|main| main.records)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| r.message)
        .filter(|m| m.role != Role::System)
        .collect();
    if messages.is_empty() {
        bail!("{} holds no conversation to work on", path.display());
    }
    Ok(messages)
}

/// Memory files (`*.md`, `MEMORY.md` excluded) of the given directories, sorted by name, at most
/// 200 (a name seen in an earlier directory wins); frontmatter parsed by
/// [`mem_recall::frontmatter`]. A file that cannot be read or is not UTF-8 is skipped, and a
/// frontmatter that cannot be used ignored, each with a warning on stderr naming the file.
fn read_candidates(dirs: &[PathBuf]) -> Result<Vec<Candidate>> {
    const MAX_FILES: usize = 200;
    const MAX_FILE_BYTES: usize = 1 << 20;
    let mut candidates: Vec<Candidate> = Vec::new();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|e| e == "md")
                    && p.file_name().is_some_and(|n| n != "MEMORY.md")
                    && p.is_file()
            })
            .collect();
        paths.sort();
        for path in paths {
            if candidates.len() >= MAX_FILES {
                break;
            }
            let id = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if candidates.iter().any(|c| c.id == id) {
                continue;
            }
            let text = match mem_instructions::read_capped(&path, MAX_FILE_BYTES) {
                Ok(read) if read.lossy => {
                    eprintln!(
                        "warning: {} is not valid UTF-8; skipped",
                        safe_line(&path.display().to_string())
                    );
                    continue;
                }
                Ok(read) => read.text,
                Err(e) => {
                    eprintln!(
                        "warning: {}",
                        safe_line(&format!("cannot read {}: {e}; skipped", path.display()))
                    );
                    continue;
                }
            };
            let (candidate, warning) = mem_recall::frontmatter::candidate(id, &text);
            if let Some(warning) = warning {
                eprintln!(
                    "warning: {}",
                    safe_line(&format!("{}: {warning}", path.display()))
                );
            }
            candidates.push(candidate);
        }
    }
    Ok(candidates)
}
