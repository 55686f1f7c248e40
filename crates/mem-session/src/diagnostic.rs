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
}

impl Diagnostic {
    /// A warning at `path:line`.
    pub fn warning(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.into(),
            line,
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    /// An error at `path:line`.
    pub fn error(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.into(),
            line,
            severity: Severity::Error,
            message: message.into(),
        }
    }
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
