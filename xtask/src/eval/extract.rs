//! `cargo xtask eval extract`: auto-memory extraction measured on the labelled conversations of
//! `fixtures/eval/extract/{dev,test}/*.txt` (format: that folder's README.md).
//!
//! Each conversation is written as a session in a temporary project, `mem_auto::extract_session`
//! runs on it (the offline engine; with `--model`, the model configured by `MEM_LLM_*` /
//! `OPENAI_*` / `ANTHROPIC_*` variables), and what was added to the two `memories.md` files is
//! compared with the labels:
//!
//! - an entry (added, or the new text of an entry the extraction updated) is **correct** when it contains every keyword of an `expect` label of the same file
//!   (user's file: preference, correction; project's file: project, reference,
//!   project-preference, project-correction), **neutral** when it matches
//!   only an `allow` label, **wrong** otherwise. Precision per category (the entry's category) =
//!   correct / (correct + wrong).
//! - recall per category (the label's) = `expect` labels matched by an entry of the same file /
//!   `expect` labels.
//! - silence: conversations without `expect` labels where no wrong entry was written.
//! - secrets written: `secret` strings found in any file of the temp project or home outside
//!   the session transcripts (`.mewcode/sessions/`); superseded entries kept: `gone` texts still
//!   in a `memories.md` after the extraction; entries removed wrongly: entries that were in a
//!   `memories.md` before and that the extraction removed or replaced (a correction or a
//!   retirement superseding them, an UPDATE, a model's DELETE) without a `gone` label naming
//!   them.
//!
//! The set is split into `dev/` (tuned against) and `test/` (never read by whoever tunes the
//! extractor); each split is scored on its own and printed as its own table (dev, then test),
//! then the dev − test gap per measure. Per-conversation lines (misses, `--verbose`) are printed
//! for dev only: whoever tunes sees test's aggregate numbers, never its cases. `--split
//! dev|test|all` runs one split or both (default all); `--split heldout` runs `heldout/`, blind
//! batches kept to measure rules on text they were not made from (aggregates only, the test
//! targets; never part of `all`). `--filter TEXT` keeps the conversations whose id contains
//! TEXT, `--sample N` N of each split spread evenly.
//!
//! Targets (exit 1 when missed) are judged on **test**: precision ≥ 0.85, recall ≥ 0.60,
//! silence ≥ 0.90, secrets written 0, no failed conversation (and at least one conversation).
//! The older dev targets (precision ≥ 0.9, secrets written 0, silence ≥ 0.9) are printed for
//! dev; they decide the exit code only with `--split dev`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use mem_auto::{AutoMemory, AutoOptions, ExtractOptions, MemoryCategory, Scope, extract_session};
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
    /// The category counted for recall.
    category: MemoryCategory,
    /// The file the entry must be in: the user's (`true`) or the project's.
    user_file: bool,
    keywords: Vec<String>,
}

impl Label {
    /// Whether an entry written to the user's file (`user_file`) or the project's with this text
    /// satisfies the label: same file, every keyword inside (case-insensitive).
    fn matches(&self, user_file: bool, text: &str) -> bool {
        let text = text.to_lowercase();
        self.user_file == user_file && self.keywords.iter().all(|k| text.contains(k.as_str()))
    }
}

/// A label's category name and the file it names: `preference`/`correction` the user's file,
/// `project`/`reference` the project's, `project-preference`/`project-correction` a
/// preference/correction said for this project only (project file).
fn category(name: &str) -> Option<(MemoryCategory, bool)> {
    Some(match name {
        "preference" => (MemoryCategory::Preference, true),
        "correction" => (MemoryCategory::Correction, true),
        "project" => (MemoryCategory::Project, false),
        "reference" => (MemoryCategory::Reference, false),
        "project-preference" => (MemoryCategory::Preference, false),
        "project-correction" => (MemoryCategory::Correction, false),
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
                let (category, user_file) = category(c).with_context(|| {
                    format!(
                        "{}: unknown category `{c}` (known: preference, correction, project, reference, project-preference, project-correction)",
                        at()
                    )
                })?;
                let label = Label {
                    category,
                    user_file,
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

/// The two splits of the set: `dev/` (tuned against) and `test/` (never tuned against).
const SPLITS: [&str; 2] = ["dev", "test"];

/// What one split scored.
#[derive(Default)]
struct Scores {
    /// Per category: the entry's category for precision, the label's for recall.
    tallies: BTreeMap<MemoryCategory, Tally>,
    conversations: usize,
    silent_cases: usize,
    silent_ok: usize,
    secrets_written: usize,
    superseded_kept: usize,
    removed_wrongly: usize,
    fallbacks: usize,
    errors: usize,
}

impl Scores {
    fn sums(&self) -> (usize, usize, usize, usize) {
        self.tallies.values().fold((0, 0, 0, 0), |(c, w, e, f), t| {
            (c + t.correct, w + t.wrong, e + t.expected, f + t.found)
        })
    }

    /// correct / (correct + wrong) over all categories; 1.0 when nothing was written.
    fn precision(&self) -> f64 {
        let (c, w, _, _) = self.sums();
        if c + w == 0 {
            1.0
        } else {
            c as f64 / (c + w) as f64
        }
    }

    /// found / expected over all categories; 1.0 when nothing was expected.
    fn recall(&self) -> f64 {
        let (_, _, e, f) = self.sums();
        if e == 0 { 1.0 } else { f as f64 / e as f64 }
    }

    /// Nothing-to-store conversations with no wrong entry / nothing-to-store conversations.
    fn silence(&self) -> f64 {
        if self.silent_cases == 0 {
            1.0
        } else {
            self.silent_ok as f64 / self.silent_cases as f64
        }
    }
}

/// Test-split targets (issue 26 "Done when"): precision, recall, silence; 0 secrets.
const TEST_TARGETS: (f64, f64, f64) = (0.85, 0.60, 0.90);
/// Dev-split targets (the older ones): precision, silence; 0 secrets.
const DEV_TARGETS: (f64, f64) = (0.90, 0.90);

fn test_targets_met(s: &Scores) -> bool {
    // An empty (or filtered-away) test split proves nothing.
    s.conversations > 0
        && s.precision() >= TEST_TARGETS.0
        && s.recall() >= TEST_TARGETS.1
        && s.silence() >= TEST_TARGETS.2
        && s.secrets_written == 0
        && s.errors == 0
}

fn dev_targets_met(s: &Scores) -> bool {
    s.precision() >= DEV_TARGETS.0
        && s.silence() >= DEV_TARGETS.1
        && s.secrets_written == 0
        && s.errors == 0
}

/// The labelled files of one split (`fixtures/eval/extract/<split>/*.txt`), sorted.
fn split_files(root: &Path, split: &str) -> Result<Vec<std::path::PathBuf>> {
    let dir = root.join(split);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    Ok(files)
}

/// Runs the eval; `Ok(false)` when a target is missed (judged on `test/` when it is run, on
/// `dev/` with `--split dev`).
pub fn run(args: &[String]) -> Result<bool> {
    let mut model = false;
    let mut verbose = false;
    let mut filter: Option<String> = None;
    let mut sample: Option<usize> = None;
    let mut splits: Vec<&str> = SPLITS.to_vec();
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
            "--split" => {
                splits = match it.next().map(String::as_str) {
                    Some("dev") => vec!["dev"],
                    Some("test") => vec!["test"],
                    // Never part of `all`: measured on purpose, aggregates only.
                    Some("heldout") => vec!["heldout"],
                    Some("all") => SPLITS.to_vec(),
                    other => bail!(
                        "--split needs dev, test, heldout or all (got {})",
                        other.unwrap_or("nothing")
                    ),
                }
            }
            other => bail!(
                "unknown argument `{other}` (known: --model, --verbose, --filter TEXT, --sample N, --split dev|test|heldout|all)"
            ),
        }
    }
    let root = repo_root().join("fixtures/eval/extract");
    // Parse every split first: a bad line fails before anything runs.
    let mut sets = Vec::new();
    for split in &splits {
        let mut cases = Vec::new();
        for f in split_files(&root, split)? {
            cases.extend(parse(&f)?);
        }
        if let Some(f) = &filter {
            cases.retain(|c| c.id.contains(f.as_str()));
        }
        let all_cases = cases.len();
        if let Some(n) = sample {
            cases = super::sample_evenly(cases, n);
        }
        sets.push((*split, cases, all_cases));
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

    let mut results = Vec::new();
    for (split, cases, all_cases) in &sets {
        println!("--- {split}/");
        let started = std::time::Instant::now();
        // Test and held-out cases are never shown case by case
        // (fixtures/eval/extract/README.md).
        let details = *split == "dev";
        let scores = score_split(cases, llm.as_ref(), &runtime, verbose, details)?;
        results.push((*split, scores, *all_cases, started.elapsed()));
    }

    for (split, scores, all_cases, elapsed) in &results {
        println!();
        println!(
            "extract eval, {split}/: {} conversations{}, engine {}{}{}, {:.1} s",
            scores.conversations,
            if scores.conversations < *all_cases {
                format!(" (a sample of {all_cases})")
            } else {
                String::new()
            },
            llm.engine_name(mem_llm::Job::Extract),
            if scores.fallbacks > 0 {
                format!(" ({} fell back to offline)", scores.fallbacks)
            } else {
                String::new()
            },
            if scores.errors > 0 {
                format!(
                    " ({} failed: transport error or timeout, nothing written)",
                    scores.errors
                )
            } else {
                String::new()
            },
            elapsed.as_secs_f64()
        );
        print_table(scores);
        if *split == "test" || *split == "heldout" {
            println!(
                "{split} targets (precision >= {:.2}, recall >= {:.2}, silence >= {:.2}, secrets 0): {}",
                TEST_TARGETS.0,
                TEST_TARGETS.1,
                TEST_TARGETS.2,
                if test_targets_met(scores) {
                    "met"
                } else {
                    "MISSED"
                }
            );
        } else {
            println!(
                "dev targets (precision >= {:.2}, secrets 0, silence >= {:.2}): {}",
                DEV_TARGETS.0,
                DEV_TARGETS.1,
                if dev_targets_met(scores) {
                    "met"
                } else {
                    "MISSED"
                }
            );
        }
    }
    if let [(_, dev, _, _), (_, test, _, _)] = results.as_slice() {
        println!();
        println!(
            "dev - test gap: precision {:+.2}, recall {:+.2}, silence {:+.2}, secrets written {:+}",
            dev.precision() - test.precision(),
            dev.recall() - test.recall(),
            dev.silence() - test.silence(),
            dev.secrets_written as i64 - test.secrets_written as i64,
        );
    }
    let pass = match results
        .iter()
        .find(|(s, ..)| *s == "test" || *s == "heldout")
    {
        Some((_, test, _, _)) => test_targets_met(test),
        None => results.iter().all(|(_, s, _, _)| dev_targets_met(s)),
    };
    Ok(pass)
}

/// Runs the extractor on each conversation of one split and scores it; prints the misses (every
/// case with `verbose`); with `details` false (the test split) no case is printed.
fn score_split(
    cases: &[Case],
    llm: &dyn Llm,
    runtime: &tokio::runtime::Runtime,
    verbose: bool,
    details: bool,
) -> Result<Scores> {
    let mut s = Scores {
        conversations: cases.len(),
        ..Scores::default()
    };
    for case in cases {
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
            llm,
            &ExtractOptions::new(chrono::Utc::now()),
        )) {
            Ok(r) => r,
            Err(e) => {
                // A transport error or timeout of the model: counted, nothing was written.
                println!("ERR  {} ({}:{}): {e}", case.id, case.file, case.line);
                s.errors += 1;
                continue;
            }
        };
        if report.fallback.is_some() {
            s.fallbacks += 1;
        }
        // (entry category, written to the user's file, text): the new entries, and the new
        // texts of entries the extraction updated (written by it all the same).
        let added: Vec<(MemoryCategory, bool, String)> = report
            .files
            .iter()
            .flat_map(|f| {
                let user = f.scope == Scope::User;
                f.added
                    .iter()
                    .chain(f.updated.iter().map(|u| &u.new))
                    .map(move |c| (c.category, user, c.text.clone()))
            })
            .collect();
        let mut case_wrong = Vec::new();
        for (cat, user, text) in &added {
            let t = s.tallies.entry(*cat).or_default();
            if case.expect.iter().any(|l| l.matches(*user, text)) {
                t.correct += 1;
            } else if case.allow.iter().any(|l| l.matches(*user, text)) {
                t.neutral += 1;
            } else {
                t.wrong += 1;
                case_wrong.push(format!("{} ({}): {text}", cat.key(), file_name(*user)));
            }
        }
        let mut missed = Vec::new();
        for label in &case.expect {
            let t = s.tallies.entry(label.category).or_default();
            t.expected += 1;
            if added
                .iter()
                .any(|(_, user, text)| label.matches(*user, text))
            {
                t.found += 1;
            } else {
                missed.push(format!(
                    "{} ({}): {}",
                    label.category.key(),
                    file_name(label.user_file),
                    label.keywords.join(" | ")
                ));
            }
        }
        if case.expect.is_empty() {
            s.silent_cases += 1;
            if case_wrong.is_empty() {
                s.silent_ok += 1;
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
            for secret in &case.secrets {
                if content.contains(secret.as_str()) {
                    leaks.push(format!("secret {secret} in {}", entry.display()));
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
        s.secrets_written += leaks.len();
        s.superseded_kept += kept.len();
        missed.extend(kept);
        // An entry that was there before and is gone now (removed, or replaced by an update)
        // without a label saying it should be: a good memory lost. (Eviction under the cap is not counted: the set's files are small.)
        for f in &report.files {
            for r in f.removed.iter().chain(f.updated.iter().map(|u| &u.old)) {
                if !case.gone.iter().any(|g| r.text.contains(g.as_str())) {
                    s.removed_wrongly += 1;
                    case_wrong.push(format!(
                        "removed without a `gone` label ({}): {}",
                        file_name(f.scope == Scope::User),
                        r.text
                    ));
                }
            }
        }
        let ok = case_wrong.is_empty() && missed.is_empty() && leaks.is_empty();
        if details && (verbose || !ok) {
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
                for (cat, user, text) in &added {
                    println!("      added:  {} ({}): {text}", cat.key(), file_name(*user));
                }
            }
        }
    }
    Ok(s)
}

fn file_name(user: bool) -> &'static str {
    if user { "user file" } else { "project file" }
}

/// The per-category table of one split, then its silence, secrets and superseded lines.
fn print_table(s: &Scores) {
    println!(
        "{:<12} {:>7} {:>7} {:>7} {:>9} {:>8} {:>7} {:>7}",
        "category", "written", "correct", "wrong", "precision", "expected", "found", "recall"
    );
    for cat in MemoryCategory::ALL {
        let empty = Tally::default();
        let t = s.tallies.get(&cat).unwrap_or(&empty);
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
    }
    let (c, w, e, f) = s.sums();
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
    println!(
        "silence on nothing-to-store: {}/{} ({:.2})",
        s.silent_ok,
        s.silent_cases,
        s.silence()
    );
    println!("secrets written: {}", s.secrets_written);
    println!(
        "superseded entries kept after a correction: {}",
        s.superseded_kept
    );
    println!(
        "entries removed without a `gone` label: {}",
        s.removed_wrongly
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_file_the_entry_must_be_in() {
        let parse_label = |name: &str| {
            let (category, user_file) = category(name).unwrap();
            Label {
                category,
                user_file,
                keywords: vec!["uv".to_owned()],
            }
        };
        let p = parse_label("project-preference");
        assert_eq!(p.category, MemoryCategory::Preference);
        assert!(p.matches(false, "Use uv in this project."));
        assert!(!p.matches(true, "Use uv in this project."));
        let u = parse_label("preference");
        assert!(u.matches(true, "Use UV."));
        assert!(!u.matches(false, "Use uv."));
        assert!(parse_label("reference").matches(false, "uv docs"));
        assert!(category("project-project").is_none());
    }

    #[test]
    fn an_empty_test_split_misses_its_targets() {
        assert!(!test_targets_met(&Scores::default()));
        let one = Scores {
            conversations: 1,
            ..Scores::default()
        };
        assert!(test_targets_met(&one));
    }
}
