//! `cargo xtask ci`: the checks a change must pass, in order, stopping at the first failure.

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
pub fn run() -> Result<bool> {
    let steps = steps(has_nextest());
    let total = steps.len();
    for (i, mut s) in steps.into_iter().enumerate() {
        eprintln!("xtask ci: [{}/{total}] {}: {:?}", i + 1, s.name, s.cmd);
        if !run_status(&mut s.cmd)? {
            eprintln!(
                "xtask ci: step `{}` failed; fix it and run `cargo xtask ci` again",
                s.name
            );
            return Ok(false);
        }
    }
    eprintln!("xtask ci: all {total} steps passed");
    Ok(true)
}

/// The steps, in order; `nextest` when `cargo nextest` is installed.
fn steps(nextest: bool) -> Vec<Step> {
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
        let found: Vec<(String, Vec<String>)> = steps(nextest)
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
