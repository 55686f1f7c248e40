//! The `cmd` file of a golden case: commands, `files:` globs, placeholders.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The parsed `cmd` file of a case.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CaseSpec {
    /// Command lines in order, as written (placeholders unexpanded), with their line numbers.
    pub commands: Vec<CmdLine>,
    /// `files:` globs, relative to the case's temp root (e.g. `project/.mewcode/*.meta`).
    pub files: Vec<String>,
}

/// One command line of a `cmd` file.
#[derive(Debug, PartialEq, Eq)]
pub struct CmdLine {
    /// 1-based line number in `cmd`.
    pub line: usize,
    /// The line as written, trimmed.
    pub text: String,
}

/// Parses a `cmd` file: `#` comments and blank lines ignored, `files: <glob>` declares a snapshot,
/// every other line is a command that must start with `mem`.
pub fn parse(text: &str) -> Result<CaseSpec> {
    let mut spec = CaseSpec::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(glob) = line.strip_prefix("files:") {
            let glob = glob.trim();
            if glob.is_empty() {
                bail!("cmd:{}: `files:` needs a glob", i + 1);
            }
            spec.files.push(glob.to_owned());
            continue;
        }
        if line != "mem" && !line.starts_with("mem ") {
            bail!("cmd:{}: a command must start with `mem `: {line}", i + 1);
        }
        spec.commands.push(CmdLine {
            line: i + 1,
            text: line.to_owned(),
        });
    }
    if spec.commands.is_empty() {
        bail!("cmd: no command");
    }
    Ok(spec)
}

/// Values of the placeholders `{root}`, `{case}`, `{project}` and `{home}`.
#[derive(Debug, Clone)]
pub struct Placeholders {
    /// The repository root.
    pub root: PathBuf,
    /// The case directory.
    pub case: PathBuf,
    /// The temp project directory.
    pub project: PathBuf,
    /// The temp home directory.
    pub home: PathBuf,
}

impl Placeholders {
    /// Replaces every placeholder in `text`.
    pub fn expand(&self, text: &str) -> String {
        let subst = |s: String, key: &str, path: &Path| s.replace(key, &path.to_string_lossy());
        let s = subst(text.to_owned(), "{root}", &self.root);
        let s = subst(s, "{case}", &self.case);
        let s = subst(s, "{project}", &self.project);
        subst(s, "{home}", &self.home)
    }
}

/// Splits a command line shell-style and expands the placeholders in each word (so a path that
/// contains a space stays one word); the leading `mem` is dropped: the result is the arguments.
pub fn arguments(cmd: &CmdLine, placeholders: &Placeholders) -> Result<Vec<String>> {
    let Some(words) = shlex::split(&cmd.text) else {
        bail!("cmd:{}: unbalanced quotes: {}", cmd.line, cmd.text);
    };
    let mut words = words.into_iter();
    if words.next().as_deref() != Some("mem") {
        bail!(
            "cmd:{}: a command must start with `mem`: {}",
            cmd.line,
            cmd.text
        );
    }
    Ok(words.map(|w| placeholders.expand(&w)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders() -> Placeholders {
        Placeholders {
            root: "/repo".into(),
            case: "/repo/fixtures/a".into(),
            project: "/tmp/x/project dir".into(),
            home: "/tmp/x/home".into(),
        }
    }

    fn check(cmd_file: &str, want_args: &[&[&str]], want_files: &[&str]) {
        let spec = parse(cmd_file).unwrap();
        let got: Vec<Vec<String>> = spec
            .commands
            .iter()
            .map(|c| arguments(c, &placeholders()).unwrap())
            .collect();
        assert_eq!(got, want_args);
        assert_eq!(spec.files, want_files);
    }

    #[test]
    fn comments_blank_lines_files_and_quotes() {
        check(
            "# a comment\n\nmem --help\n  mem instructions --project {project}  \nfiles: project/*.md\nmem context --date '2026-06-18' \"a b\"\n",
            &[
                &["--help"],
                &["instructions", "--project", "/tmp/x/project dir"],
                &["context", "--date", "2026-06-18", "a b"],
            ],
            &["project/*.md"],
        );
    }

    #[test]
    fn placeholders_inside_words() {
        check(
            "mem x --file={root}/fixtures/f {case}/in {home}",
            &[&[
                "x",
                "--file=/repo/fixtures/f",
                "/repo/fixtures/a/in",
                "/tmp/x/home",
            ]],
            &[],
        );
    }

    #[test]
    fn line_numbers_are_kept() {
        let spec = parse("# c\n\nmem a\nmem b\n").unwrap();
        assert_eq!(
            spec.commands,
            vec![
                CmdLine {
                    line: 3,
                    text: "mem a".into()
                },
                CmdLine {
                    line: 4,
                    text: "mem b".into()
                }
            ]
        );
    }

    #[test]
    fn rejects_bad_files() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            err("ls -l\n"),
            "cmd:1: a command must start with `mem `: ls -l"
        );
        assert_eq!(
            err("memx a\n"),
            "cmd:1: a command must start with `mem `: memx a"
        );
        assert_eq!(err("# only\n"), "cmd: no command");
        assert_eq!(err("mem a\nfiles:\n"), "cmd:2: `files:` needs a glob");
        let spec = parse("mem a 'b\n").unwrap();
        assert_eq!(
            arguments(&spec.commands[0], &placeholders())
                .unwrap_err()
                .to_string(),
            "cmd:1: unbalanced quotes: mem a 'b"
        );
    }
}
