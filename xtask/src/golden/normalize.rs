//! Normalisation of a transcript before it is compared: temp paths, timestamps, durations,
//! trailing whitespace.

use std::path::Path;

use regex::Regex;

/// RFC 3339 / ISO-8601 date-times (a date alone is kept: it is usually content).
const TIMESTAMP: &str = r"\b(?:\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?|[ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)(?:Z|[+-]\d{2}(?::?\d{2})?)?|\d{8}T\d{6}(?:[.,]\d+)?Z?)";
/// Durations as printed by people and `Debug` of `Duration`: `12ms`, `1.2s`, `1m30s`, `850µs`.
const DURATION: &str = r"\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?(?:ns|µs|us|ms|s)\b";

/// Turns a raw transcript into its comparable form.
pub struct Normalizer {
    /// `(path, placeholder)`, longest path first so a nested path wins over its parent.
    paths: Vec<(String, &'static str)>,
    timestamp: Regex,
    duration: Regex,
}

impl Normalizer {
    /// A normaliser replacing `project`, `home` and `root` by `{project}`, `{home}`, `{root}`.
    pub fn new(project: &Path, home: &Path, root: &Path) -> Result<Normalizer, regex::Error> {
        let mut paths: Vec<(String, &'static str)> =
            [(project, "{project}"), (home, "{home}"), (root, "{root}")]
                .into_iter()
                .map(|(p, name)| (p.to_string_lossy().into_owned(), name))
                .filter(|(p, _)| !p.is_empty() && p != "/")
                .collect();
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Ok(Normalizer {
            paths,
            timestamp: Regex::new(TIMESTAMP)?,
            duration: Regex::new(DURATION)?,
        })
    }

    /// Applies every rule: paths, then timestamps, then durations, then trailing whitespace.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (path, name) in &self.paths {
            out = out.replace(path.as_str(), name);
        }
        let out = self.timestamp.replace_all(&out, "<TIMESTAMP>");
        let out = self.duration.replace_all(&out, "<DURATION>");
        trim_trailing_whitespace(&out)
    }
}

/// Drops spaces and tabs at the end of every line (a `\r` is kept: CRLF stays visible).
pub fn trim_trailing_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_end_matches([' ', '\t']));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, want: &str) {
        let n = Normalizer::new(
            Path::new("/tmp/.tmpAB12/project"),
            Path::new("/tmp/.tmpAB12/home"),
            Path::new("/work/main"),
        )
        .unwrap();
        assert_eq!(n.normalize(input), want);
    }

    #[test]
    fn paths() {
        check(
            "/tmp/.tmpAB12/project/MEWCODE.md /tmp/.tmpAB12/home/.mewcode /work/main/fixtures/x",
            "{project}/MEWCODE.md {home}/.mewcode {root}/fixtures/x",
        );
    }

    #[test]
    fn nested_path_wins_over_its_parent() {
        let n = Normalizer::new(
            Path::new("/r/t/project"),
            Path::new("/r/t/home"),
            Path::new("/r"),
        )
        .unwrap();
        assert_eq!(n.normalize("/r/t/project/a /r/b"), "{project}/a {root}/b");
    }

    #[test]
    fn timestamps() {
        check("created 2026-06-18T09:15:00Z.", "created <TIMESTAMP>.");
        check(
            "at 2026-06-18T09:15:00.123456+02:00 ok",
            "at <TIMESTAMP> ok",
        );
        check("\"2025-11-17T15:30:28.019Z\"", "\"<TIMESTAMP>\"");
        check("2026-06-18 09:15:00 UTC", "<TIMESTAMP> UTC");
        check(
            "rollout-20251117T153028Z.jsonl",
            "rollout-<TIMESTAMP>.jsonl",
        );
        check("2026-06-18T09:15", "<TIMESTAMP>");
        // A date alone is content (e.g. "Today's date is 2026-06-18."), not a timestamp.
        check("Today's date is 2026-06-18.", "Today's date is 2026-06-18.");
    }

    #[test]
    fn durations() {
        check("done in 12ms", "done in <DURATION>");
        check(
            "took 1.2s, then 850µs and 3us; 1m30s",
            "took <DURATION>, then <DURATION> and <DURATION>; <DURATION>",
        );
        check("(0.5s)", "(<DURATION>)");
        // Only at a word boundary: these are not durations.
        check("12msgs 5seconds v2s x12ms", "12msgs 5seconds v2s x12ms");
    }

    #[test]
    fn trailing_whitespace() {
        check("a  \nb\t\n\nc \r\n", "a\nb\n\nc \r\n");
    }
}
