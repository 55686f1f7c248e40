//! Memory ids (SPEC "One memory, not three"): `L<rowid>`, `M<8 hex>`, `N:<scope>/<file>`.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The id of one memory item, wherever it lives. Round-trips exactly through
/// [`Display`](fmt::Display) and [`FromStr`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryId {
    /// A learning in the tier store: `L<rowid>` (`L42`).
    Learning(i64),
    /// A `memories.md` entry: `M` + the first 8 lowercase hex chars of SHA-256 of the entry's
    /// normalised text ([`entry_id`]).
    Entry(String),
    /// A memory note: `N:<scope>/<file name>`, scope `project`, `user` or `extra<K>`.
    Note {
        /// `project`, `user` or `extra<K>`.
        scope: String,
        /// The file name (no directory part).
        file: String,
    },
}

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryId::Learning(n) => write!(f, "L{n}"),
            MemoryId::Entry(h) => write!(f, "M{h}"),
            MemoryId::Note { scope, file } => write!(f, "N:{scope}/{file}"),
        }
    }
}

fn bad(id: &str, reason: &str) -> Error {
    Error::BadId {
        id: id.to_owned(),
        reason: reason.to_owned(),
    }
}

/// `true` for `project`, `user`, `extra<K>` (K a decimal without a leading zero, or `0`).
pub fn is_valid_scope(scope: &str) -> bool {
    match scope {
        "project" | "user" => true,
        _ => scope.strip_prefix("extra").is_some_and(|k| {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_digit())
                && (k == "0" || !k.starts_with('0'))
        }),
    }
}

impl FromStr for MemoryId {
    type Err = Error;

    /// Parses exactly the three forms (case-sensitive prefixes).
    ///
    /// # Errors
    /// [`Error::BadId`] naming what is wrong.
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some(rest) = s.strip_prefix("N:") {
            let (scope, file) = rest
                .split_once('/')
                .ok_or_else(|| bad(s, "a note id needs a scope and a file name"))?;
            if !is_valid_scope(scope) {
                return Err(bad(s, "the scope must be project, user or extra<K>"));
            }
            if file.is_empty() || file.contains(['/', '\\']) || file == "." || file == ".." {
                return Err(bad(s, "the file name must be a plain file name"));
            }
            return Ok(MemoryId::Note {
                scope: scope.to_owned(),
                file: file.to_owned(),
            });
        }
        if let Some(rest) = s.strip_prefix('L') {
            if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) || rest.starts_with('0')
            {
                return Err(bad(s, "a learning id is L followed by a positive number"));
            }
            let n = rest
                .parse::<i64>()
                .map_err(|_| bad(s, "the number is too large"))?;
            return Ok(MemoryId::Learning(n));
        }
        if let Some(rest) = s.strip_prefix('M') {
            if rest.len() != 8 || !rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(bad(
                    s,
                    "an entry id is M followed by 8 lowercase hex digits",
                ));
            }
            return Ok(MemoryId::Entry(rest.to_owned()));
        }
        Err(bad(s, "unknown prefix"))
    }
}

/// The normalised text of a `memories.md` entry (`mem_auto::normalise`, the one definition):
/// lowercased, whitespace runs collapsed, trailing punctuation trimmed.
pub fn normalise_entry(text: &str) -> String {
    mem_auto::normalise(text)
}

/// The id of a `memories.md` entry: `M` + the first 8 lowercase hex chars of SHA-256 of
/// [`normalise_entry`]`(text)` (`mem_auto::EntryId::of`).
pub fn entry_id(text: &str) -> MemoryId {
    let shown = mem_auto::EntryId::of(text).to_string();
    MemoryId::Entry(shown.trim_start_matches('M').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        let shown = match input.parse::<MemoryId>() {
            Ok(id) => {
                assert_eq!(id.to_string(), input, "round trip");
                format!("ok {id:?}")
            }
            Err(e) => format!("err {e}"),
        };
        assert!(shown.contains(expected), "{input}: {shown}");
    }

    #[test]
    fn parses_exactly_the_three_forms() {
        check("L42", "Learning(42)");
        check("M3f9a0c1e", "Entry(\"3f9a0c1e\")");
        check("N:project/feedback_testing.md", "scope: \"project\"");
        check("N:extra0/a.md", "extra0");
        check("N:extra12/a b.md", "extra12");
        check("l42", "unknown prefix");
        check("L", "positive number");
        check("L042", "positive number");
        check("L-1", "positive number");
        check("L99999999999999999999", "too large");
        check("M3F9A0C1E", "lowercase hex");
        check("M3f9a0c1", "8 lowercase hex");
        check("N:team/a.md", "scope must be");
        check("N:extra01/a.md", "scope must be");
        check("N:project/", "plain file name");
        check("N:project/../x.md", "plain file name");
        check("n:project/a.md", "unknown prefix");
        check("", "unknown prefix");
    }

    #[test]
    fn entry_ids_ignore_case_spacing_and_trailing_punctuation() {
        let a = entry_id("Use  pytest-cov for coverage.");
        assert_eq!(a, entry_id("use pytest-cov for coverage"));
        assert_eq!(
            entry_id("永远使用参数化查询。"),
            entry_id("永远使用参数化查询")
        );
        assert_ne!(a, entry_id("use pytest for coverage"));
        let shown = a.to_string();
        assert_eq!(shown.len(), 9);
        assert_eq!(shown.parse::<MemoryId>().ok(), Some(a));
    }
}
