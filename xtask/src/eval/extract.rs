//! `cargo xtask eval extract`: auto-memory extraction measured on the labelled conversations of
//! `fixtures/eval/extract/*.txt` (format: that folder's README.md).
//!
//! Each conversation is written as a session in a temporary project, `mem_auto::extract_session`
//! runs on it (the offline engine; with `--model`, the model configured by `MEM_LLM_*` /
//! `OPENAI_*` / `ANTHROPIC_*` variables), and what was added to the two `memories.md` files is
//! compared with the labels:
//!
//! - an entry is **correct** when it contains every keyword of an `expect` label of the same file
//!   (user: preference, correction; project: project, reference), **neutral** when it matches
//!   only an `allow` label, **wrong** otherwise. Precision per category (the entry's category) =
//!   correct / (correct + wrong).
//! - recall per category (the label's) = `expect` labels matched by an entry of the same file /
//!   `expect` labels.
//! - silence: conversations without `expect` labels where no wrong entry was written.
//! - secrets written: `secret` strings found in any file of the temp project or home outside
//!   the session transcripts (`.mewcode/sessions/`); superseded entries kept: `gone` texts still
//!   in a `memories.md` after the extraction.
//!
//! Targets (exit 1 when missed): precision ≥ 0.9, secrets written 0, silence ≥ 0.9.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use mem_auto::{AutoMemory, AutoOptions, ExtractOptions, MemoryCategory, extract_session};
use mem_core::{ContentBlock, Message, Role};
use mem_llm::{Llm, LlmSettings, OfflineEngine};
use mem_session::SessionStore;
use serde_json::json;

use crate::util::repo_root;

#[derive(Debug, Default)]
struct Case {
    id: String,
    file: String,
    line: usize,
    messages: Vec<Message>,
    project_memories: String,
    user_memories: String,
    expect: Vec<Label>,
    allow: Vec<Label>,
    secrets: Vec<String>,
    gone: Vec<String>,
}

#[derive(Debug, Clone)]
struct Label {
    category: MemoryCategory,
    keywords: Vec<String>,
}

impl Label {
    fn matches(&self, category: MemoryCategory, text: &str) -> bool {
        let text = text.to_lowercase();
        self.category.is_user_level() == category.is_user_level()
            && self.keywords.iter().all(|k| text.contains(k.as_str()))
    }
}

fn category(name: &str) -> Option<MemoryCategory> {
    Some(match name {
        "preference" => MemoryCategory::Preference,
        "correction" => MemoryCategory::Correction,
        "project" => MemoryCategory::Project,
        "reference" => MemoryCategory::Reference,
        _ => return None,
    })
}

fn unescape(text: &str) -> String {
    text.replace("\\n", "\n")
}

/// Parses one labelled file; an unknown line is an error naming file:line.
fn parse(path: &Path) -> Result<Vec<Case>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cases: Vec<Case> = Vec::new();
    let mut tool_n = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let at = || format!("{}:{}", path.display(), i + 1);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(id) = line.strip_prefix("=== ") {
            cases.push(Case {
                id: id.trim().to_owned(),
                file: file.clone(),
                line: i + 1,
                ..Case::default()
            });
            continue;
        }
        let Some(case) = cases.last_mut() else {
            bail!("{}: a line before the first `=== id`", at());
        };
        let Some((key, value)) = line.split_once(':') else {
            bail!("{}: expected `key: value`", at());
        };
        let value = value.trim();
        let mut words = key.split_whitespace();
        let (kind, cat) = (words.next().unwrap_or(""), words.next());
        match (kind, cat) {
            ("user", None) => case.messages.push(Message::user(unescape(value))),
            ("assistant", None) => case.messages.push(Message::assistant(unescape(value))),
            ("bash", None) => {
                tool_n += 1;
                case.messages.push(Message::new(
                    Role::Assistant,
                    vec![ContentBlock::tool_use(
                        format!("t{tool_n}"),
                        "Bash",
                        json!({"command": unescape(value)}),
                    )],
                ));
            }
            ("result" | "reject", None) => {
                let text = if kind == "reject" {
                    format!(
                        "The user doesn't want to proceed with this tool use. The tool use was rejected. To tell you how to proceed, the user said:\n{}",
                        unescape(value)
                    )
                } else {
                    unescape(value)
                };
                case.messages.push(Message::new(
                    Role::User,
                    vec![ContentBlock::tool_result(
                        format!("t{tool_n}"),
                        text,
                        kind == "reject",
                    )],
                ));
            }
            ("memories", None) => case.project_memories.push_str(&unescape(value)),
            ("user-memories", None) => case.user_memories.push_str(&unescape(value)),
            ("secret", None) => case.secrets.push(value.to_owned()),
            ("gone", None) => case.gone.push(value.to_owned()),
            ("expect" | "allow", Some(c)) => {
                let category =
                    category(c).with_context(|| format!("{}: unknown category `{c}`", at()))?;
                let label = Label {
                    category,
                    keywords: value
                        .split('|')
                        .map(|k| k.trim().to_lowercase())
                        .filter(|k| !k.is_empty())
                        .collect(),
                };
                if kind == "expect" {
                    case.expect.push(label);
                } else {
                    case.allow.push(label);
                }
            }
            _ => bail!("{}: unknown key `{key}`", at()),
        }
    }
    Ok(cases)
}

#[derive(Default)]
struct Tally {
    correct: usize,
    wrong: usize,
    neutral: usize,
    expected: usize,
    found: usize,
}

/// Runs the eval; `Ok(false)` when a target is missed.
pub fn run(args: &[String]) -> Result<bool> {
    let mut model = false;
    let mut verbose = false;
    let mut filter: Option<String> = None;
    let mut sample: Option<usize> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--model" => model = true,
            "--verbose" | "-v" => verbose = true,
            "--filter" => filter = it.next().cloned(),
            "--sample" => {
                sample = Some(
                    it.next()
                        .and_then(|n| n.parse().ok())
                        .context("--sample needs a number of conversations")?,
                )
            }
            other => bail!(
                "unknown argument `{other}` (known: --model, --verbose, --filter TEXT, --sample N)"
            ),
        }
    }
    let dir = repo_root().join("fixtures/eval/extract");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in &files {
        cases.extend(parse(f)?);
    }
    if let Some(f) = &filter {
        cases.retain(|c| c.id.contains(f.as_str()));
    }
    let all_cases = cases.len();
    if let Some(n) = sample {
        cases = super::sample_evenly(cases, n);
    }
    let llm: std::sync::Arc<dyn Llm> = if model {
        let env = |name: &str| std::env::var(name).ok();
        LlmSettings::resolve(None, None, &env)?
            .job(mem_llm::Job::Extract)
            .engine()?
    } else {
        std::sync::Arc::new(OfflineEngine)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;

    let mut tallies: BTreeMap<MemoryCategory, Tally> = BTreeMap::new();
    let (mut silent_cases, mut silent_ok) = (0, 0);
    let mut secrets_written = 0;
    let mut superseded_kept = 0;
    let mut fallbacks = 0;
    let mut errors = 0;
    let started = std::time::Instant::now();
    for case in &cases {
        let tmp = tempfile::tempdir()?;
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(project.join(".mewcode"))?;
        std::fs::create_dir_all(home.join(".mewcode"))?;
        if !case.project_memories.is_empty() {
            std::fs::write(project.join(".mewcode/memories.md"), &case.project_memories)?;
        }
        if !case.user_memories.is_empty() {
            std::fs::write(home.join(".mewcode/memories.md"), &case.user_memories)?;
        }
        let store = SessionStore::for_project(&project);
        let mut writer = store.create()?;
        for m in &case.messages {
            writer.append(m)?;
        }
        let id = writer.id().to_owned();
        drop(writer);
        let auto = AutoMemory::new(&project, &home, AutoOptions::default());
        let report = match runtime.block_on(extract_session(
            &auto,
            &store,
            &id,
            llm.as_ref(),
            &ExtractOptions::new(chrono::Utc::now()),
        )) {
            Ok(r) => r,
            Err(e) => {
                // A transport error or timeout of the model: counted, nothing was written.
                println!("ERR  {} ({}:{}): {e}", case.id, case.file, case.line);
                errors += 1;
                continue;
            }
        };
        if report.fallback.is_some() {
            fallbacks += 1;
        }
        let added: Vec<(MemoryCategory, String)> = report
            .files
            .iter()
            .flat_map(|f| f.added.iter().map(|c| (c.category, c.text.clone())))
            .collect();
        let mut case_wrong = Vec::new();
        for (cat, text) in &added {
            let t = tallies.entry(*cat).or_default();
            if case.expect.iter().any(|l| l.matches(*cat, text)) {
                t.correct += 1;
            } else if case.allow.iter().any(|l| l.matches(*cat, text)) {
                t.neutral += 1;
            } else {
                t.wrong += 1;
                case_wrong.push(format!("{}: {text}", cat.key()));
            }
        }
        let mut missed = Vec::new();
        for label in &case.expect {
            let t = tallies.entry(label.category).or_default();
            t.expected += 1;
            if added.iter().any(|(c, text)| label.matches(*c, text)) {
                t.found += 1;
            } else {
                missed.push(format!(
                    "{}: {}",
                    label.category.key(),
                    label.keywords.join(" | ")
                ));
            }
        }
        if case.expect.is_empty() {
            silent_cases += 1;
            if case_wrong.is_empty() {
                silent_ok += 1;
            }
        }
        // Secrets anywhere outside the transcripts; `gone` texts anywhere in memories.md.
        let mut leaks = Vec::new();
        let mut kept = Vec::new();
        for entry in walk(tmp.path()) {
            if entry.components().any(|c| c.as_os_str() == "sessions") {
                continue;
            }
            let Ok(content) = std::fs::read_to_string(&entry) else {
                continue;
            };
            for s in &case.secrets {
                if content.contains(s.as_str()) {
                    leaks.push(format!("secret {s} in {}", entry.display()));
                }
            }
            if entry.ends_with("memories.md") {
                for g in &case.gone {
                    if content.contains(g.as_str()) {
                        kept.push(format!("superseded entry kept: {g}"));
                    }
                }
            }
        }
        secrets_written += leaks.len();
        superseded_kept += kept.len();
        missed.extend(kept);
        let ok = case_wrong.is_empty() && missed.is_empty() && leaks.is_empty();
        if verbose || !ok {
            println!(
                "{} {} ({}:{})",
                if ok { "ok  " } else { "MISS" },
                case.id,
                case.file,
                case.line
            );
            for w in &case_wrong {
                println!("      wrong:  {w}");
            }
            for m in &missed {
                println!("      missed: {m}");
            }
            for l in &leaks {
                println!("      LEAK:   {l}");
            }
            if verbose {
                for (cat, text) in &added {
                    println!("      added:  {}: {text}", cat.key());
                }
            }
        }
    }

    println!();
    println!(
        "extract eval: {} conversations{}, engine {}{}{}, {:.1} s",
        cases.len(),
        if cases.len() < all_cases {
            format!(" (a sample of {all_cases})")
        } else {
            String::new()
        },
        llm.engine_name(mem_llm::Job::Extract),
        if fallbacks > 0 {
            format!(" ({fallbacks} fell back to offline)")
        } else {
            String::new()
        },
        if errors > 0 {
            format!(" ({errors} failed: transport error or timeout, nothing written)")
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<12} {:>7} {:>7} {:>7} {:>9} {:>8} {:>7} {:>7}",
        "category", "written", "correct", "wrong", "precision", "expected", "found", "recall"
    );
    let (mut c, mut w, mut e, mut f) = (0, 0, 0, 0);
    for cat in MemoryCategory::ALL {
        let t = tallies.remove(&cat).unwrap_or_default();
        println!(
            "{:<12} {:>7} {:>7} {:>7} {:>9} {:>8} {:>7} {:>7}",
            cat.key(),
            t.correct + t.wrong + t.neutral,
            t.correct,
            t.wrong,
            ratio(t.correct, t.correct + t.wrong),
            t.expected,
            t.found,
            ratio(t.found, t.expected)
        );
        c += t.correct;
        w += t.wrong;
        e += t.expected;
        f += t.found;
    }
    let precision = if c + w == 0 {
        1.0
    } else {
        c as f64 / (c + w) as f64
    };
    let silence = if silent_cases == 0 {
        1.0
    } else {
        silent_ok as f64 / silent_cases as f64
    };
    println!(
        "{:<12} {:>7} {:>7} {:>7} {:>9} {:>8} {:>7} {:>7}",
        "all",
        "",
        c,
        w,
        ratio(c, c + w),
        e,
        f,
        ratio(f, e)
    );
    println!("silence on nothing-to-store: {silent_ok}/{silent_cases} ({silence:.2})");
    println!("secrets written: {secrets_written}");
    println!("superseded entries kept after a correction: {superseded_kept}");
    let pass = precision >= 0.9 && secrets_written == 0 && silence >= 0.9 && errors == 0;
    println!(
        "targets (precision >= 0.90, secrets 0, silence >= 0.90): {}",
        if pass { "met" } else { "MISSED" }
    );
    Ok(pass)
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "-".to_owned()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
