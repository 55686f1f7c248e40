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

/// Runs fmt, clippy, tests (nextest when installed, plus doctests), rustdoc with warnings
/// denied and the goldens.
pub fn run() -> Result<bool> {
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
    if has_nextest() {
        steps.push(step(
            "tests (nextest)",
            &["nextest", "run", "--workspace", "--no-tests=warn"],
        ));
        steps.push(step("doctests", &["test", "--workspace", "--doc"]));
    } else {
        steps.push(step("tests", &["test", "--workspace"]));
    }
    let mut doc = step("docs", &["doc", "--workspace", "--no-deps"]);
    doc.cmd.env("RUSTDOCFLAGS", "-D warnings");
    steps.push(doc);
    steps.push(step("golden", &["xtask", "golden"]));

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
