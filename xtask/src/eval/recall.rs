//! `cargo xtask eval recall [--live] [--verbose] [--set DIR]`: the recall selector's quality.
//!
//! The labelled set (default `fixtures/recall/eval/`) holds `home/.mewcode/memory/*.md` (user
//! notes), `projects/<name>/.mewcode/memory/*.md` (each project's notes) and `queries.jsonl`, one
//! `{"project", "kind", "query", "relevant": [note ids], "primary": note id or null}` per line;
//! `relevant: []` marks a message that needs no memory. Each query runs
//! `mem --json --project projects/<name> --home home recall QUERY` (with `--offline` unless
//! `--live`, which uses the configured model), so a query sees its project's notes and the user's.
//!
//! Printed: precision@5 (mean over memory-needing queries that selected something of the share
//! of selected notes that are relevant), recall@5 (mean over memory-needing queries of the share
//! of relevant notes selected; nothing selected counts 0), primary hit (share of memory-needing
//! queries whose primary note was selected), how many memory-needing queries got nothing, and
//! no-memory accuracy (share of no-memory queries that selected nothing); then per kind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::util::repo_root;

struct Query {
    project: String,
    kind: String,
    query: String,
    relevant: Vec<String>,
    primary: Option<String>,
}

#[derive(Default, Clone)]
struct Tally {
    needing: usize,
    with_selection: usize,
    precision_sum: f64,
    recall_sum: f64,
    primary_hits: usize,
    none_queries: usize,
    none_correct: usize,
}

impl Tally {
    fn add(&mut self, q: &Query, selected: &[String]) {
        if q.relevant.is_empty() {
            self.none_queries += 1;
            if selected.is_empty() {
                self.none_correct += 1;
            }
            return;
        }
        self.needing += 1;
        let hits = selected.iter().filter(|s| q.relevant.contains(s)).count();
        if !selected.is_empty() {
            self.with_selection += 1;
            self.precision_sum += hits as f64 / selected.len() as f64;
        }
        self.recall_sum += hits as f64 / q.relevant.len() as f64;
        if q.primary.as_ref().is_some_and(|p| selected.contains(p)) {
            self.primary_hits += 1;
        }
    }

    fn ratio(a: f64, b: usize) -> String {
        if b == 0 {
            "   -".to_owned()
        } else {
            format!("{:.3}", a / b as f64)
        }
    }

    fn line(&self, label: &str) -> String {
        format!(
            "{label:<12} p@5 {}  r@5 {}  primary {}  empty {:>2}/{:<2}  no-memory {}",
            Self::ratio(self.precision_sum, self.with_selection),
            Self::ratio(self.recall_sum, self.needing),
            Self::ratio(self.primary_hits as f64, self.needing),
            self.needing - self.with_selection,
            self.needing,
            Self::ratio(self.none_correct as f64, self.none_queries),
        )
    }
}

fn parse_queries(path: &Path) -> Result<Vec<Query>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not JSON", path.display(), i + 1))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let (Some(project), Some(kind), Some(query)) = (s("project"), s("kind"), s("query")) else {
            bail!("{}:{}: needs project, kind, query", path.display(), i + 1);
        };
        let relevant = v
            .get("relevant")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        out.push(Query {
            project,
            kind,
            query,
            relevant,
            primary: s("primary"),
        });
    }
    Ok(out)
}

/// Runs the eval; `Ok(false)` when a query could not run.
pub fn run(args: &[String]) -> Result<bool> {
    let mut live = false;
    let mut verbose = false;
    let mut sample: Option<usize> = None;
    let mut set = repo_root().join("fixtures/recall/eval");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--live" => live = true,
            "--verbose" | "-v" => verbose = true,
            "--set" => {
                set = PathBuf::from(it.next().context("--set needs a directory")?);
            }
            "--sample" => {
                sample = Some(
                    it.next()
                        .and_then(|n| n.parse().ok())
                        .context("--sample needs a number of queries")?,
                )
            }
            other => bail!("unknown argument `{other}`"),
        }
    }
    let mut queries = parse_queries(&set.join("queries.jsonl"))?;
    let all_queries = queries.len();
    if let Some(n) = sample {
        queries = super::sample_evenly(queries, n);
    }
    if queries.len() < all_queries {
        println!("a sample of {} of the {all_queries} queries", queries.len());
    }
    let mem = crate::golden::build_mem()?;
    let home = set.join("home");
    let mut total = Tally::default();
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut engines = BTreeMap::new();
    let mut fallbacks = 0;
    for q in &queries {
        let mut cmd = Command::new(&mem);
        cmd.arg("--json")
            .arg("--project")
            .arg(set.join("projects").join(&q.project))
            .arg("--home")
            .arg(&home)
            .arg("recall");
        if !live {
            cmd.arg("--offline");
        }
        cmd.arg("--").arg(&q.query);
        let out = cmd.output().context("cannot run mem")?;
        if !out.status.success() {
            eprintln!(
                "query {:?} failed: {}",
                q.query,
                String::from_utf8_lossy(&out.stderr)
            );
            return Ok(false);
        }
        let v: Value = serde_json::from_slice(&out.stdout).context("mem recall --json")?;
        let selected: Vec<String> = v["ids"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        *engines
            .entry(v["engine"].as_str().unwrap_or("").to_owned())
            .or_insert(0) += 1;
        if !v["fallback"].is_null() {
            fallbacks += 1;
            if verbose {
                println!("fallback: {} ({})", v["fallback"], q.query);
            }
        }
        total.add(q, &selected);
        by_kind.entry(q.kind.clone()).or_default().add(q, &selected);
        let perfect = if q.relevant.is_empty() {
            selected.is_empty()
        } else {
            q.primary.as_ref().is_some_and(|p| selected.contains(p))
                && selected.iter().all(|s| q.relevant.contains(s))
        };
        if verbose && !perfect {
            println!(
                "[{}] {:?}\n    want {:?}\n    got  {:?}",
                q.kind, q.query, q.relevant, selected
            );
        }
    }
    println!(
        "recall eval: {} queries ({} need memory, {} need none) on {}",
        queries.len(),
        total.needing,
        total.none_queries,
        set.strip_prefix(repo_root()).unwrap_or(&set).display()
    );
    println!(
        "engine: {}; fallbacks: {fallbacks}",
        engines
            .iter()
            .map(|(e, n)| format!("{e} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("{}", total.line("all"));
    for (kind, t) in &by_kind {
        println!("{}", t.line(kind));
    }
    Ok(true)
}
