//! `cargo xtask golden [--bless] [--filter NAME]`: runs every case under `fixtures/`.
//!
//! A case is a directory holding a `cmd` file; the format is in `docs/formats/golden.md`. The
//! `mem` binary is built once; cases run in parallel and are reported in path order.

mod case;
mod normalize;
mod orphans;
pub(crate) mod run;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};

use crate::util::{cargo, repo_root};

/// Options of `cargo xtask golden`.
#[derive(Debug, Default)]
pub struct Options {
    /// Rewrite `expected.txt` of cases whose output changed.
    pub bless: bool,
    /// Run only cases whose path (relative to `fixtures/`) contains this text.
    pub filter: Option<String>,
}

impl Options {
    /// Parses `--bless` and `--filter NAME` (or `--filter=NAME`).
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut opts = Options::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--bless" => opts.bless = true,
                "--filter" => {
                    let Some(v) = it.next() else {
                        bail!("--filter needs a NAME")
                    };
                    opts.filter = Some(v.clone());
                }
                other => match other.strip_prefix("--filter=") {
                    Some(v) => opts.filter = Some(v.to_owned()),
                    None => bail!(
                        "golden: unknown argument `{other}` (expected --bless, --filter NAME)"
                    ),
                },
            }
        }
        Ok(opts)
    }
}

/// What happened to one case.
#[derive(Debug)]
pub enum Outcome {
    /// Output equals `expected.txt`.
    Passed,
    /// `expected.txt` did not exist and was written.
    New,
    /// Output differed and `expected.txt` was rewritten (`--bless`).
    Updated,
    /// Output differed (the unified diff) or the case could not run (the reason).
    Failed(String),
}

/// Builds `mem`, runs the selected cases and the orphan check; `Ok(false)` when anything failed.
pub fn run(opts: Options) -> Result<bool> {
    let root = repo_root();
    let fixtures = root.join("fixtures");
    let dirs = if fixtures.is_dir() {
        orphans::all_dirs(&fixtures)?
    } else {
        Vec::new()
    };
    let cases: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| d.join("cmd").is_file())
        .cloned()
        .collect();

    let mut references = String::new();
    for case in &cases {
        references.push_str(&std::fs::read_to_string(case.join("cmd"))?);
        references.push('\n');
    }
    references.push_str(&orphans::texts_under(&root.join("crates"), ".rs")?);
    references.push_str(&orphans::texts_under(&root.join("xtask"), ".rs")?);
    let orphan_dirs = orphans::find(&root, &dirs, &cases, &references);

    let name = |c: &Path| {
        c.strip_prefix(&fixtures)
            .unwrap_or(c)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let selected: Vec<&PathBuf> = cases
        .iter()
        .filter(|c| opts.filter.as_deref().is_none_or(|f| name(c).contains(f)))
        .collect();
    if selected.is_empty() && opts.filter.is_some() {
        bail!(
            "golden: no case matches --filter {:?}",
            opts.filter.unwrap_or_default()
        );
    }

    let mem = build_mem()?;
    let outcomes = run_parallel(&selected, |case| {
        run::run_case(&mem, &root, case, opts.bless)
            .unwrap_or_else(|e| Outcome::Failed(format!("cannot run the case: {e:#}\n")))
    });

    let (mut passed, mut new, mut updated, mut failed) = (0, 0, 0, 0);
    for (case, outcome) in selected.iter().zip(&outcomes) {
        let label = match outcome {
            Outcome::Passed => {
                passed += 1;
                "ok     "
            }
            Outcome::New => {
                new += 1;
                "new    "
            }
            Outcome::Updated => {
                updated += 1;
                "blessed"
            }
            Outcome::Failed(_) => {
                failed += 1;
                "FAILED "
            }
        };
        println!("{label} {}", name(case));
        if let Outcome::Failed(why) = outcome {
            print!("{why}");
        }
    }
    if !orphan_dirs.is_empty() {
        println!(
            "\nfixture folders that no case runs and no test names ({}):",
            orphan_dirs.len()
        );
        for d in &orphan_dirs {
            println!("  {d}");
        }
        println!(
            "make each a case (add a `cmd` file), move it into one, or name its path in a test"
        );
    }
    if failed > 0 {
        println!("\nrerun with `cargo xtask golden --bless` to accept the new output");
    }
    let blessed = if opts.bless {
        format!(", {updated} blessed")
    } else {
        String::new()
    };
    let orphaned = if orphan_dirs.is_empty() {
        String::new()
    } else {
        format!(", {} orphan folders", orphan_dirs.len())
    };
    println!("golden: {passed} passed, {new} new, {failed} failed{blessed}{orphaned}");
    Ok(failed == 0 && orphan_dirs.is_empty())
}

/// Runs `f` on every item with one worker per core; results keep the items' order.
fn run_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Builds the `mem` binary (honouring `CARGO_TARGET_DIR`) and returns its path, as cargo reports
/// it.
pub(crate) fn build_mem() -> Result<PathBuf> {
    let out = cargo()
        .args([
            "build",
            "--package",
            "mem-cli",
            "--bin",
            "mem",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo build")?;
    if !out.status.success() {
        bail!("cargo build -p mem-cli failed");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == "mem"
            && let Some(exe) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    bail!("cargo build did not report the `mem` executable")
}
