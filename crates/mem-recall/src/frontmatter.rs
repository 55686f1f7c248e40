//! Memory notes' frontmatter (seed 000 §4): Markdown files whose frontmatter — a YAML block
//! between `---` lines at the top, the closing one within the first [`FRONTMATTER_MAX_LINES`]
//! lines — gives the note's `name`, `description` and `type` (and, beyond the seed, an optional
//! `last_verified` / `updated` date that recall takes as the note's age). This module parses a
//! file's text; [`crate::scan`] lists and reads the directories.
//!
//! Tolerated: a UTF-8 byte-order mark, CRLF line endings, nested keys (`metadata:\n  name: x`,
//! ignored: only top-level keys count), folded and literal scalars (`description: >`), and the
//! unquoted colons real files have in values (`description: Rules: never skip`), which strict YAML
//! refuses: such top-level values are quoted and the block parsed again. A block that still does
//! not parse counts as no frontmatter, with a warning.

use serde::Deserialize;

use mem_llm::Candidate;

/// The line (1-based) by which a frontmatter's closing `---` must come.
pub const FRONTMATTER_MAX_LINES: usize = 30;

/// The top-level frontmatter fields mewmem reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Frontmatter {
    /// `name:`: a short title.
    #[serde(default, deserialize_with = "lenient_scalar")]
    pub name: Option<String>,
    /// `description:`: one line on what the memory is for (what recall selects on).
    #[serde(default, deserialize_with = "lenient_scalar")]
    pub description: Option<String>,
    /// `type:`: `user`, `feedback`, `project` or `reference` (not checked here).
    #[serde(default, rename = "type", deserialize_with = "lenient_scalar")]
    pub kind: Option<String>,
    /// `last_verified:` (beyond the seed): the date (`YYYY-MM-DD`, or an RFC 3339 time) the
    /// note was last checked against reality; recall's age is counted from it when present.
    #[serde(default, deserialize_with = "lenient_scalar")]
    pub last_verified: Option<String>,
    /// `updated:` (beyond the seed): the date the note was last updated; used for the age when
    /// there is no `last_verified`.
    #[serde(default, deserialize_with = "lenient_scalar")]
    pub updated: Option<String>,
}

/// A scalar of any YAML type (a date, a number, a string) as its text; anything else (a list, a
/// mapping) as `None`, so a strange `updated:` never costs the note its name.
fn lenient_scalar<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Text(String),
        Int(i64),
        Float(f64),
        Bool(bool),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Option::<Scalar>::deserialize(d)? {
        Some(Scalar::Text(s)) => Some(s),
        Some(Scalar::Int(i)) => Some(i.to_string()),
        Some(Scalar::Float(f)) => Some(f.to_string()),
        Some(Scalar::Bool(b)) => Some(b.to_string()),
        Some(Scalar::Other(_)) | None => None,
    })
}

/// A memory file's text, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryFile {
    /// The frontmatter's fields (all `None` when there is none or it does not parse).
    pub frontmatter: Frontmatter,
    /// The text after the frontmatter (the whole text without one), BOM removed, lines joined
    /// with `\n`.
    pub body: String,
}

/// The most bytes a frontmatter block (between its `---` lines) may hold: 16 KiB. Real ones
/// hold a few hundred; a longer block is not read (a warning says so), so no pathological
/// block reaches the YAML parser.
pub const FRONTMATTER_MAX_BYTES: usize = 16 * 1024;

/// Splits `text` into frontmatter and body. The second value is a warning (why a frontmatter
/// that is there could not be used), for the caller to report with the file's name.
///
/// Only the first [`FRONTMATTER_MAX_LINES`] lines and [`FRONTMATTER_MAX_BYTES`] bytes of the
/// block are looked at; the YAML parser runs under a small budget (nesting, aliases, events).
pub fn parse(text: &str) -> (MemoryFile, Option<String>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let whole = || MemoryFile {
        frontmatter: Frontmatter::default(),
        body: join_lines(text),
    };
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return (whole(), None);
    }
    // The block's lines, up to the closing `---` within the first FRONTMATTER_MAX_LINES lines.
    let mut block: Vec<&str> = Vec::new();
    let mut bytes = 0;
    let mut closed = false;
    for line in lines.by_ref().take(FRONTMATTER_MAX_LINES - 1) {
        if line.trim() == "---" {
            closed = true;
            break;
        }
        bytes += line.len() + 1;
        if bytes > FRONTMATTER_MAX_BYTES {
            return (
                whole(),
                Some(format!(
                    "frontmatter longer than {FRONTMATTER_MAX_BYTES} bytes; no frontmatter read"
                )),
            );
        }
        block.push(line);
    }
    if !closed {
        return (
            whole(),
            Some(format!(
                "no closing `---` within the first {FRONTMATTER_MAX_LINES} lines; no frontmatter read"
            )),
        );
    }
    let yaml = block.join("\n");
    let body = lines.collect::<Vec<_>>().join("\n");
    match parse_yaml(&yaml) {
        Ok(frontmatter) => (MemoryFile { frontmatter, body }, None),
        Err(reason) => (
            MemoryFile {
                frontmatter: Frontmatter::default(),
                body,
            },
            Some(format!("frontmatter is not valid YAML ({reason}); ignored")),
        ),
    }
}

/// The lines of `text` joined with `\n` (CRLF and a final newline dropped).
fn join_lines(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n")
}

/// A selection candidate from a memory file: `id` is its file name; name and description are
/// trimmed (a folded scalar ends with a newline), the name falls back to the file name without
/// `.md` when the frontmatter has none. The warning is [`parse`]'s.
pub fn candidate(id: String, text: &str) -> (Candidate, Option<String>) {
    let (file, warning) = parse(text);
    let name = file
        .frontmatter
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| id.strip_suffix(".md").unwrap_or(&id).to_owned());
    let candidate = Candidate {
        user_level: false,
        name,
        description: file
            .frontmatter
            .description
            .map(|d| d.trim().to_owned())
            .unwrap_or_default(),
        body: file.body,
        id,
    };
    (candidate, warning)
}

/// The YAML block's top-level fields; on failure, once more with unquoted top-level values that
/// hold `: ` or ` #` quoted.
fn parse_yaml(yaml: &str) -> Result<Frontmatter, String> {
    if yaml.trim().is_empty() {
        return Ok(Frontmatter::default());
    }
    match serde_saphyr::from_str_with_options::<Frontmatter>(yaml, yaml_options()) {
        Ok(f) => Ok(f),
        Err(first) => {
            let quoted = quote_plain_values(yaml);
            if quoted == yaml {
                return Err(first_line(&first.to_string()));
            }
            serde_saphyr::from_str_with_options::<Frontmatter>(&quoted, yaml_options())
                .map_err(|_| first_line(&first.to_string()))
        }
    }
}

/// The YAML parser's limits for a frontmatter block (at most [`FRONTMATTER_MAX_BYTES`] of a
/// few keys): the library's defaults are sized for large configs (a million events, 50,000
/// aliases), which lets a few kilobytes of aliases cost milliseconds. No source excerpt in
/// errors (only the first line of a message is shown).
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 20_000;
    budget.max_aliases = 64;
    budget.max_anchors = 64;
    budget.max_recorded_anchor_events = 20_000;
    budget.max_recorded_anchor_bytes = 256 * 1024;
    budget.max_depth = 32;
    budget.max_documents = 2;
    budget.max_nodes = 10_000;
    budget.max_total_scalar_bytes = 256 * 1024;
    budget.max_merge_keys = 64;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = 20_000;
    options.alias_limits.max_replay_stack_depth = 32;
    options.with_snippet = false;
    options
}

/// `key: value` lines at the top level whose plain value holds `: ` or ` #` (which strict YAML
/// reads as a mapping or a comment) get the value single-quoted.
fn quote_plain_values(yaml: &str) -> String {
    let mut out = Vec::new();
    for line in yaml.lines() {
        let top_level = !line.starts_with([' ', '\t', '#', '-']);
        let fixed = top_level
            .then(|| line.split_once(": "))
            .flatten()
            .filter(|(key, value)| {
                let value = value.trim();
                !key.contains(' ')
                    && !value.starts_with(['\'', '"', '[', '{', '>', '|', '&', '*', '!'])
                    && (value.contains(": ") || value.contains(" #") || value.ends_with(':'))
            })
            .map(|(key, value)| format!("{key}: '{}'", value.trim().replace('\'', "''")));
        out.push(fixed.unwrap_or_else(|| line.to_owned()));
    }
    out.join("\n")
}

/// The first line of a parser message (serde-saphyr may add a source excerpt).
fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or("").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, name: Option<&str>, description: Option<&str>, kind: Option<&str>) {
        let (file, warning) = parse(text);
        assert_eq!(warning, None, "{text:?}");
        assert_eq!(
            (
                file.frontmatter.name.as_deref(),
                file.frontmatter.description.as_deref(),
                file.frontmatter.kind.as_deref()
            ),
            (name, description, kind),
            "{text:?}"
        );
    }

    #[test]
    fn top_level_fields_only() {
        check(
            "---\nname: top\ndescription: d\ntype: user\nmetadata:\n  name: nested\n  type: other\n---\nbody\n",
            Some("top"),
            Some("d"),
            Some("user"),
        );
        check(
            "---\nmetadata:\n  name: nested\n---\nbody\n",
            None,
            None,
            None,
        );
    }

    #[test]
    fn bom_crlf_folded_scalars_and_colons() {
        check(
            "\u{feff}---\r\nname: \"日本語のメモ\"\r\ndescription: >\r\n  folded\r\n  text\r\ntype: project\r\n---\r\nbody\r\n",
            Some("日本語のメモ"),
            Some("folded text\n"),
            Some("project"),
        );
        check(
            "---\nname: Cover letter\ndescription: Standards: NYC location, no #hashtags\n---\n",
            Some("Cover letter"),
            Some("Standards: NYC location, no #hashtags"),
            None,
        );
    }

    #[test]
    fn body_and_fallbacks() {
        let (file, warning) = parse("---\nname: x\n---\nline 1\r\nline 2\n");
        assert_eq!((file.body.as_str(), warning), ("line 1\nline 2", None));

        let (c, warning) = candidate("note.md".to_owned(), "---\nname: [unclosed\n---\nbody\n");
        assert_eq!((c.name.as_str(), c.description.as_str()), ("note", ""));
        assert!(
            warning
                .as_deref()
                .is_some_and(|w| w.starts_with("frontmatter is not valid YAML")),
            "{warning:?}"
        );

        let late = format!("---\n{}---\nbody\n", "k: v\n".repeat(FRONTMATTER_MAX_LINES));
        let (c, warning) = candidate("late.md".to_owned(), &late);
        assert_eq!(c.name, "late");
        assert!(warning.is_some_and(|w| w.contains("no closing")));

        let huge = format!(
            "---\nname: x\ndescription: {}\n---\nbody\n",
            "y".repeat(FRONTMATTER_MAX_BYTES)
        );
        let (c, warning) = candidate("huge.md".to_owned(), &huge);
        assert_eq!(c.name, "huge");
        assert!(warning.is_some_and(|w| w.contains("longer than")));

        let bomb = format!(
            "---\nname: n\na: &a [x, x, x, x, x, x, x, x, x, x]\n{}---\nbody\n",
            (b'b'..=b'y')
                .map(|c| {
                    let prev = if c == b'b' { 'a' } else { (c - 1) as char };
                    let p = format!("*{prev}, ");
                    format!(
                        "{0}: &{0} [{1}]\n",
                        c as char,
                        p.repeat(10).trim_end_matches(", ")
                    )
                })
                .collect::<String>()
        );
        let (c, _) = candidate("bomb.md".to_owned(), &bomb);
        assert_eq!(c.body, "body");

        let (c, warning) = candidate("plain.md".to_owned(), "# Title\ntext\n");
        assert_eq!(
            (c.name.as_str(), c.body.as_str(), warning),
            ("plain", "# Title\ntext", None)
        );
    }
}
