//! `mem llm`: the model layer. `check` shows which engine answers each job (and with `--call`
//! asks it once); `summarize`, `extract` and `select` run one job on a Claude Code transcript or
//! a memory directory, as compaction, auto memory and recall would; `prompts` prints the prompts.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use mem_llm::{ExtractRequest, Job, LlmSettings, Reply, SelectRequest, SummarizeRequest};
use mewmem::ops::llm::{
    self as ops, CallOutcome, read_candidates, read_memories_file, read_transcript,
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
        #[arg(long, default_value_t = mem_llm::DEFAULT_SELECT_LIMIT, value_parser = super::parse_limit)]
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
            let user_dir = settings.user_dir().join("memory");
            let candidates = read_candidates(&dirs, Some(&user_dir), |w| {
                eprintln!("warning: {}", safe_line(&w))
            })?;
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
            let ops::SelectScores {
                scored,
                ideal,
                shares,
            } = ops::select_scores(&request);
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

async fn check(settings: &Settings, call: bool) -> Result<()> {
    let (resolved, sources) = llm_settings(settings)?;
    let calls: Vec<CallOutcome> = if call {
        ops::ping_all(&resolved).await
    } else {
        Vec::new()
    };
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
