//! Fixture folders that nothing runs (jj's `test_no_forgotten_test_files`).
//!
//! Every directory under `fixtures/` must be a case, inside a case, an ancestor of a case, or a
//! data folder whose path relative to the repo root appears in a case's `cmd` file or in a `.rs`
//! file under `crates/` or `xtask/` (or be inside or above such a folder).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Every directory under `dir` (not `dir` itself), depth first, sorted; symlinks not followed.
pub fn all_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("cannot list {}", d.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", d.display()))?;
            if entry.file_type()?.is_dir() {
                out.push(entry.path());
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The text of every file under `dir` whose name ends with `suffix` (unreadable files skipped).
pub fn texts_under(dir: &Path, suffix: &str) -> Result<String> {
    let mut text = String::new();
    if !dir.is_dir() {
        return Ok(text);
    }
    for d in std::iter::once(dir.to_path_buf()).chain(all_dirs(dir)?) {
        if d.components().any(|c| c.as_os_str() == "target") {
            continue;
        }
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_file()
                && path.to_string_lossy().ends_with(suffix)
                && let Ok(t) = std::fs::read_to_string(&path)
            {
                text.push_str(&t);
                text.push('\n');
            }
        }
    }
    Ok(text)
}

/// Every path starting with `fixtures/` that `text` names (up to the first character that
/// cannot be part of a path), e.g. `fixtures/transcripts/claude/a.jsonl`.
fn named_paths(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("fixtures/").map(move |(i, _)| {
        let rest = &text[i..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches(['.', '/'])
    })
}

/// The orphan directories, as paths relative to `root` with `/` separators.
///
/// `dirs` are all directories under `root/fixtures`, `cases` the case directories, `references`
/// the text of every `cmd` and `.rs` file that may name a data folder. A named path anchors the
/// deepest directory that contains it (or is it).
pub fn find(root: &Path, dirs: &[PathBuf], cases: &[PathBuf], references: &str) -> Vec<String> {
    let rel = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let dirs: Vec<String> = dirs.iter().map(|d| rel(d)).collect();
    let within = |inner: &str, outer: &str| {
        inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|r| r.starts_with('/'))
    };
    // (anchor, whether its subdirectories count as run too)
    let mut anchors: Vec<(String, bool)> = cases.iter().map(|c| (rel(c), true)).collect();
    for named in named_paths(references) {
        if let Some(deepest) = dirs
            .iter()
            .filter(|d| within(named, d))
            .max_by_key(|d| d.len())
        {
            // A named folder is read as a whole; a named file only vouches for its folder.
            anchors.push((deepest.clone(), deepest == named));
        }
    }
    dirs.iter()
        .filter(|d| {
            !anchors
                .iter()
                .any(|(a, subdirs)| within(a, d) || (*subdirs && within(d, a)))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(dirs: &[&str], cases: &[&str], references: &str, want: &[&str]) {
        let root = Path::new("/r");
        let p = |v: &[&str]| v.iter().map(|d| root.join(d)).collect::<Vec<_>>();
        assert_eq!(find(root, &p(dirs), &p(cases), references), want);
    }

    #[test]
    fn cases_their_insides_and_ancestors_are_run() {
        check(
            &[
                "fixtures/cli",
                "fixtures/cli/help",
                "fixtures/cli/help/project",
                "fixtures/cli/help/project/src",
            ],
            &["fixtures/cli/help"],
            "",
            &[],
        );
    }

    #[test]
    fn data_folders_count_when_named() {
        let dirs = [
            "fixtures/data",
            "fixtures/data/claude",
            "fixtures/data/claude/sub",
            "fixtures/data/codex",
        ];
        check(
            &dirs,
            &[],
            "read(\"fixtures/data/claude\")",
            &["fixtures/data/codex"],
        );
        // A longer name does not count for its prefix.
        check(
            &["fixtures/data", "fixtures/data/claude"],
            &[],
            "fixtures/data/claude2",
            &["fixtures/data/claude"],
        );
        check(&["fixtures/data"], &[], "{root}/fixtures/data/x.jsonl", &[]);
        // A named file vouches for its folder, not for the folder's subfolders.
        check(
            &["fixtures/data", "fixtures/data/sub"],
            &[],
            "fixtures/data/x.jsonl",
            &["fixtures/data/sub"],
        );
        check(&["fixtures/data"], &[], "see `fixtures/data`.", &[]);
    }

    #[test]
    fn sibling_with_common_prefix_is_not_covered() {
        check(
            &["fixtures/cli", "fixtures/cli2"],
            &["fixtures/cli"],
            "",
            &["fixtures/cli2"],
        );
    }
}
