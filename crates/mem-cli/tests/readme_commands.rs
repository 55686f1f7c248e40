//! The README's command table does not lag `mem --help` (issue 27 item 25): every subcommand
//! and every long option each `mem … --help` lists is named in the first column of the table's
//! rows for its command, and every option the table names exists in that command's help.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Options every command has (`mem --help` lists them once).
const GLOBAL: [&str; 6] = [
    "--help",
    "--version",
    "--project",
    "--home",
    "--json",
    "--allow-outside-project",
];

fn help(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mem"))
        .args(path)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "mem {} --help failed", path.join(" "));
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

/// The lines of the section that starts with `title` (`Commands:`, `Options:`), up to the
/// next heading (a long help puts empty lines between its options).
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| l.trim() != title)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

fn subcommands(text: &str) -> Vec<String> {
    section(text, "Commands:")
        .into_iter()
        // A command line starts with two spaces and the name; a wrapped description with more.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_owned)
        .collect()
}

/// The long options of a help text, each as `--name` or, with a short form, `--name/-n`.
fn long_options(text: &str) -> BTreeSet<String> {
    section(text, "Options:")
        .into_iter()
        // An option line starts with its names (`-o, --output <FILE>`); a description line
        // with a word.
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().take(3).collect();
            let name = |w: &str| {
                w.trim_end_matches(',')
                    .split(['=', '[', '<'])
                    .next()
                    .map(str::to_owned)
            };
            let long = words
                .iter()
                .find(|w| w.starts_with("--"))
                .and_then(|w| name(w))?;
            if GLOBAL.contains(&long.as_str()) {
                return None;
            }
            Some(
                match words
                    .first()
                    .filter(|w| !w.starts_with("--"))
                    .and_then(|w| name(w))
                {
                    Some(short) => format!("{long}/{short}"),
                    None => long,
                },
            )
        })
        .collect()
}

/// Every leaf command (`["session", "import"]`) with its long options.
fn leaves(path: Vec<String>, out: &mut Vec<(Vec<String>, BTreeSet<String>)>) {
    let text = help(&path);
    let subs = subcommands(&text);
    if subs.is_empty() {
        out.push((path, long_options(&text)));
        return;
    }
    for s in subs {
        let mut p = path.clone();
        p.push(s);
        leaves(p, out);
    }
}

/// The README's command table: each row as `(first cell, whole row)`; the first cell names
/// the command (`` `mem session import PATH... [--id ID]` ``), an option may be named in the
/// row's description too.
fn readme_rows() -> Vec<(String, String)> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(readme).unwrap_or_else(|e| panic!("{e}"));
    text.lines()
        .filter(|l| l.starts_with("| `mem "))
        .filter_map(|l| {
            // The first cell ends at the first `|` outside backticks (`\|` is an escaped bar).
            let body = &l[2..];
            let mut in_code = false;
            let mut prev = ' ';
            for (i, c) in body.char_indices() {
                match c {
                    '`' => in_code = !in_code,
                    '|' if !in_code && prev != '\\' => {
                        return Some((body[..i].to_owned(), l.to_owned()));
                    }
                    _ => {}
                }
                prev = c;
            }
            None
        })
        .collect()
}

#[test]
fn the_readme_command_table_names_every_command_and_option_of_the_help() {
    let mut all = Vec::new();
    leaves(Vec::new(), &mut all);
    assert!(all.len() > 20, "{} commands found", all.len());
    let cells = readme_rows();
    assert!(cells.len() > 20, "{} README rows found", cells.len());
    let mut missing = Vec::new();
    for (path, options) in &all {
        let rows: Vec<&(String, String)> = cells
            .iter()
            .filter(|(c, _)| {
                let top = format!("mem {}", path[0]);
                let named = c.contains(&format!("{top} ")) || c.contains(&format!("{top}`"));
                let words: Vec<&str> = c
                    .split(|ch: char| !(ch.is_alphanumeric() || ch == '-' || ch == '_'))
                    .filter(|w| !w.is_empty())
                    .collect();
                named && path[1..].iter().all(|p| words.contains(&p.as_str()))
            })
            .collect();
        if rows.is_empty() {
            missing.push(format!("mem {}: no README row", path.join(" ")));
            continue;
        }
        for o in options {
            if !rows.iter().any(|(_, r)| {
                r.split(|ch: char| !(ch.is_alphanumeric() || ch == '-'))
                    .any(|w| o.split('/').any(|name| name == w))
            }) {
                missing.push(format!("mem {} {o}: not in its README row", path.join(" ")));
            }
        }
    }
    // The other way: an option a row's first cell names is one of its commands' options.
    for (cell, _) in &cells {
        let known: BTreeSet<&String> = all
            .iter()
            .filter(|(path, _)| {
                let top = format!("mem {}", path[0]);
                let words: Vec<&str> = cell
                    .split(|ch: char| !(ch.is_alphanumeric() || ch == '-' || ch == '_'))
                    .filter(|w| !w.is_empty())
                    .collect();
                (cell.contains(&format!("{top} ")) || cell.contains(&format!("{top}`")))
                    && path[1..].iter().all(|p| words.contains(&p.as_str()))
            })
            .flat_map(|(_, options)| options.iter())
            .collect();
        for w in cell.split(|ch: char| !(ch.is_alphanumeric() || ch == '-')) {
            if w.starts_with("--")
                && w.len() > 2
                && !GLOBAL.contains(&w)
                && !known.iter().any(|k| k.split('/').any(|name| name == w))
            {
                missing.push(format!(
                    "README row {cell:?}: {w} is no option of its commands"
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README lags --help:\n{}",
        missing.join("\n")
    );
}
