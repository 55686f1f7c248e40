//! `cargo xtask ci`: the checks a change must pass, in order, stopping at the first failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;

use crate::util::{cargo, run_status};

/// One CI step: a name to report and the command.
struct Step {
    name: &'static str,
    cmd: Command,
}

fn step(name: &'static str, args: &[&str]) -> Step {
    let mut cmd = cargo();
    cmd.args(args);
    Step { name, cmd }
}

/// `true` when `cargo nextest` is installed.
fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs fmt, clippy, tests (nextest when installed, plus doctests), `cargo check` of the fuzz
/// targets, rustdoc with warnings denied and the goldens.
///
/// Without `MEM_TEST_PG_URL` the PostgreSQL tests pass without a server (they say so on a stderr
/// that nextest hides): each one records itself in a log ([`PG_SKIP_LOG_VAR`]), and the run
/// reports how many were skipped after the tests and at the end.
pub fn run() -> Result<bool> {
    let skip_log = pg_url_missing().then(|| {
        std::env::temp_dir().join(format!("mem-xtask-pg-skips-{}.log", std::process::id()))
    });
    if let Some(log) = &skip_log {
        let _ = std::fs::remove_file(log);
    }
    let steps = steps(has_nextest(), skip_log.as_deref());
    let total = steps.len();
    let mut summary = None;
    for (i, mut s) in steps.into_iter().enumerate() {
        eprintln!("xtask ci: [{}/{total}] {}: {:?}", i + 1, s.name, s.cmd);
        let passed = run_status(&mut s.cmd)?;
        if s.name.starts_with("tests")
            && let Some(log) = &skip_log
        {
            summary = skip_summary(&std::fs::read_to_string(log).unwrap_or_default());
            if let Some(line) = &summary {
                eprintln!("xtask ci: {line}");
            }
        }
        if !passed {
            eprintln!(
                "xtask ci: step `{}` failed; fix it and run `cargo xtask ci` again",
                s.name
            );
            return Ok(false);
        }
    }
    if let Some(log) = &skip_log {
        let _ = std::fs::remove_file(log);
    }
    match summary {
        Some(line) => eprintln!("xtask ci: all {total} steps passed; {line}"),
        None => eprintln!("xtask ci: all {total} steps passed"),
    }
    Ok(true)
}

/// The environment variable naming the file where a PostgreSQL test that found no server
/// records itself (one line `<test binary>::<test name>`; see the PostgreSQL tests of mem-tiers
/// and mem-checkpoint, whose test binary `checkpoint` gives `checkpoint::<test>`).
pub const PG_SKIP_LOG_VAR: &str = "MEM_PG_SKIP_LOG";

/// `true` when `MEM_TEST_PG_URL` is unset or blank: the PostgreSQL tests will skip.
fn pg_url_missing() -> bool {
    std::env::var("MEM_TEST_PG_URL").map_or(true, |u| u.trim().is_empty())
}

/// The line reporting the skipped PostgreSQL tests recorded in `log` (each test once, however
/// often it recorded itself); `None` when none skipped.
fn skip_summary(log: &str) -> Option<String> {
    let tests: std::collections::BTreeSet<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match tests.len() {
        0 => None,
        n => Some(format!(
            "{n} PostgreSQL test{} skipped (set MEM_TEST_PG_URL, see .ci/postgres.sh): {}",
            if n == 1 { "" } else { "s" },
            tests.into_iter().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The steps, in order; `nextest` when `cargo nextest` is installed.
/// With `pg_skip_log`, the test steps get [`PG_SKIP_LOG_VAR`] set to it.
fn steps(nextest: bool, pg_skip_log: Option<&Path>) -> Vec<Step> {
    let mut steps = vec![
        step("format", &["fmt", "--all", "--check"]),
        step(
            "clippy",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
    ];
    if nextest {
        steps.push(step(
            "tests (nextest)",
            &["nextest", "run", "--workspace", "--no-tests=warn"],
        ));
        steps.push(step("doctests", &["test", "--workspace", "--doc"]));
    } else {
        steps.push(step("tests", &["test", "--workspace"]));
    }
    if let Some(log) = pg_skip_log {
        for s in steps.iter_mut().filter(|s| s.name.contains("tests")) {
            s.cmd.env(PG_SKIP_LOG_VAR, PathBuf::from(log));
        }
    }
    // `fuzz/` is its own workspace (cargo-fuzz builds it with nightly flags), so nothing above
    // builds it; a plain check on stable keeps its targets compiling against the libraries.
    steps.push(step(
        "fuzz targets (check)",
        &[
            "check",
            "--manifest-path",
            "fuzz/Cargo.toml",
            "--all-targets",
        ],
    ));
    let mut doc = step("docs", &["doc", "--workspace", "--no-deps"]);
    doc.cmd.env("RUSTDOCFLAGS", "-D warnings");
    steps.push(doc);
    steps.push(step("golden", &["xtask", "golden"]));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(name, arguments)` of each step.
    fn check(nextest: bool, name: &str, args: &[&str]) {
        let found: Vec<(String, Vec<String>)> = steps(nextest, None)
            .iter()
            .map(|s| {
                let args = s.cmd.get_args().map(|a| a.to_string_lossy().into_owned());
                (s.name.to_owned(), args.collect())
            })
            .collect();
        let want = (
            name.to_owned(),
            args.iter().map(|a| (*a).to_owned()).collect(),
        );
        assert!(found.contains(&want), "{found:#?}");
    }

    #[test]
    fn skipped_postgresql_tests_are_counted_once_each_and_named() {
        assert_eq!(skip_summary(""), None);
        assert_eq!(skip_summary("\n\n"), None);
        assert_eq!(
            skip_summary("postgres_store::b\ncheckpoint::a\npostgres_store::b\n").as_deref(),
            Some(
                "2 PostgreSQL tests skipped (set MEM_TEST_PG_URL, see .ci/postgres.sh): \
                 checkpoint::a, postgres_store::b"
            )
        );
        assert!(
            skip_summary("checkpoint::a")
                .is_some_and(|l| l.starts_with("1 PostgreSQL test skipped"))
        );
    }

    #[test]
    fn the_test_steps_get_the_skip_log() {
        let log = Path::new("/tmp/skips.log");
        for nextest in [false, true] {
            let steps = steps(nextest, Some(log));
            for s in &steps {
                let set = s
                    .cmd
                    .get_envs()
                    .any(|(k, v)| k == PG_SKIP_LOG_VAR && v == Some(log.as_os_str()));
                assert_eq!(set, s.name.contains("tests"), "{}", s.name);
            }
            assert!(steps.iter().any(|s| s.name.starts_with("tests")));
        }
    }

    #[test]
    fn fuzz_targets_are_checked() {
        for nextest in [false, true] {
            check(
                nextest,
                "fuzz targets (check)",
                &[
                    "check",
                    "--manifest-path",
                    "fuzz/Cargo.toml",
                    "--all-targets",
                ],
            );
        }
    }
}
