//! Problems found while reading a file that did not stop the read.

use std::fmt;
use std::path::PathBuf;

/// How bad a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Read as intended, but unusual (a byte-order mark, a blank line, glued objects).
    Warning,
    /// Something was skipped or altered (a malformed line, an invalid byte replaced).
    Error,
}

/// One problem in one file, at one line: `path:line: message`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// The file.
    pub path: PathBuf,
    /// 1-based line number; 0 when the problem is not tied to a line.
    pub line: usize,
    /// How bad it is.
    pub severity: Severity,
    /// What happened and what was done about it.
    pub message: String,
    /// For a line that was lost or altered ([`Severity::Error`] from the reader or an
    /// importer): a short kebab-case name of what was wrong with it, one of [`LINE_KINDS`]
    /// (`malformed-json`, `torn-line`, ...). Reports tally damaged lines by it, each line once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
}

/// The kinds of damaged lines ([`Diagnostic::kind`]), most severe first: when a line has more
/// than one diagnostic (invalid UTF-8 replaced, then still not JSON), it is tallied under the
/// first of its kinds in this list.
/// - `line-too-long`: longer than the reader's 64 MiB cap; skipped;
/// - `read-error`: the file could not be read from this line on;
/// - `torn-line`: an incomplete last line (a write cut short); skipped;
/// - `malformed-json`: not JSON (or JSON followed by garbage: the garbage is skipped);
/// - `not-an-object`: a JSON value that is not an object; skipped;
/// - `not-a-record`: an object that is not a session record (mewmem files); skipped;
/// - `invalid-record`: a session record missing a field its type needs; skipped;
/// - `invalid-utf8`: invalid bytes replaced by U+FFFD; the line was read (altered, not lost).
pub const LINE_KINDS: [&str; 8] = [
    "line-too-long",
    "read-error",
    "torn-line",
    "malformed-json",
    "not-an-object",
    "not-a-record",
    "invalid-record",
    "invalid-utf8",
];

impl Diagnostic {
    /// A warning at `path:line`.
    pub fn warning(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.into(),
            line,
            severity: Severity::Warning,
            message: message.into(),
            kind: None,
        }
    }

    /// An error at `path:line`.
    pub fn error(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.into(),
            line,
            severity: Severity::Error,
            message: message.into(),
            kind: None,
        }
    }

    /// The same diagnostic, tagged as a damaged line of `kind` (one of [`LINE_KINDS`]).
    pub fn with_kind(mut self, kind: &'static str) -> Self {
        self.kind = Some(kind);
        self
    }

    /// `true` when this diagnostic says its line was lost or altered (it has a
    /// [`Diagnostic::kind`]).
    pub fn is_damaged_line(&self) -> bool {
        self.kind.is_some()
    }
}

/// Damaged lines among `diagnostics`, each `(path, line)` counted once, by kind (see
/// [`LINE_KINDS`] for which kind a line with several diagnostics is tallied under).
pub fn tally_damaged<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
) -> std::collections::BTreeMap<&'static str, usize> {
    use std::collections::{BTreeMap, HashMap};
    let rank = |k: &str| {
        LINE_KINDS
            .iter()
            .position(|x| *x == k)
            .unwrap_or(LINE_KINDS.len())
    };
    let mut per_line: HashMap<(&std::path::Path, usize), &'static str> = HashMap::new();
    for d in diagnostics {
        let Some(kind) = d.kind else { continue };
        per_line
            .entry((d.path.as_path(), d.line))
            .and_modify(|k| {
                if rank(kind) < rank(k) {
                    *k = kind;
                }
            })
            .or_insert(kind);
    }
    let mut out = BTreeMap::new();
    for kind in per_line.into_values() {
        *out.entry(kind).or_insert(0) += 1;
    }
    out
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        if self.line == 0 {
            write!(f, "{}: {level}: {}", self.path.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}: {level}: {}",
                self.path.display(),
                self.line,
                self.message
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_several_diagnostics_is_tallied_once_under_its_worst_kind() {
        let d = [
            Diagnostic::error("a", 5, "bad utf8").with_kind("invalid-utf8"),
            Diagnostic::error("a", 5, "then not json").with_kind("malformed-json"),
            Diagnostic::error("a", 6, "bad utf8 only").with_kind("invalid-utf8"),
            Diagnostic::warning("a", 7, "glued"),
            Diagnostic::error("b", 5, "torn").with_kind("torn-line"),
        ];
        let t = tally_damaged(&d);
        assert_eq!(
            t.into_iter().collect::<Vec<_>>(),
            [("invalid-utf8", 1), ("malformed-json", 1), ("torn-line", 1)]
        );
    }
}
