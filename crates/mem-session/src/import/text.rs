//! Small text helpers shared by the importers: ids, titles, timestamps.

use chrono::{DateTime, FixedOffset};

/// Longest title, in characters.
const TITLE_MAX_CHARS: usize = 80;
/// Longest id, in bytes (a file name must stay under 255 bytes with its extension).
const ID_MAX_BYTES: usize = 200;

/// Turns any string into a safe session id: characters outside `[A-Za-z0-9._-]` become `_`,
/// leading dots are dropped, leading `-` become `_` (an id never reads as a command-line
/// option), the result is cut to 200 bytes; an empty result is `fallback`.
///
/// When anything had to change, `-` and the first 8 hex digits of the SHA-256 of `raw` are
/// appended, so that different names stay different ids (`uni-日本-名前` and `uni-中文-文件`
/// would both become `uni-__-__` otherwise; `-lead` becomes `_lead-<hash>`, not the id of a
/// file named `_lead`) and the same name always gives the same id.
///
/// Before leading `-` were replaced, such a name kept them; [`is_legacy_of`] tells which
/// stored id an earlier import gave the session that now gets a new id.
pub(crate) fn sanitize_id(raw: &str, fallback: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = out.trim_start_matches('.').len();
    out = out.split_off(out.len() - trimmed);
    out = undash(&out);
    if out == raw && out.len() <= ID_MAX_BYTES && !out.is_empty() {
        return out;
    }
    if raw.is_empty() {
        return fallback.to_owned();
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(raw.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    out.truncate(ID_MAX_BYTES - hash.len() - 1);
    if out.is_empty() {
        out = fallback.to_owned();
    }
    format!("{out}-{hash}")
}

/// `id` with each leading `-` made `_`.
fn undash(id: &str) -> String {
    let rest = id.trim_start_matches('-');
    let mut out = "_".repeat(id.len() - rest.len());
    out.push_str(rest);
    out
}

/// Whether `legacy`, an id starting with `-` that an import before leading `-` were replaced
/// gave a session, is the id of the session that [`sanitize_id`] now names `id`: the same raw
/// name gave `legacy` unchanged (now `legacy` with the rule applied) or `legacy` with a hash
/// already (now the same hash after the leading `_`).
pub(crate) fn is_legacy_of(legacy: &str, id: &str) -> bool {
    legacy.starts_with('-') && (undash(legacy) == id || sanitize_id(legacy, "session") == id)
}

/// One line, whitespace collapsed, at most 80 characters (ending with `…` when cut).
pub(crate) fn shorten_title(text: &str) -> Option<String> {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= TITLE_MAX_CHARS {
        return Some(line);
    }
    let mut out: String = line.chars().take(TITLE_MAX_CHARS - 1).collect();
    out.push('…');
    Some(out)
}

/// From a slash-command wrapper (`<command-name>/x</command-name><command-args>y</command-args>`),
/// `"/x y"`; used as a title when a session holds nothing else.
pub(crate) fn command_title(text: &str) -> Option<String> {
    let name = between(text, "<command-name>", "</command-name>")?;
    let args = between(text, "<command-args>", "</command-args>").unwrap_or("");
    shorten_title(&format!("{name} {args}"))
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(text[start..end].trim())
}

/// Parses an RFC 3339 timestamp; `None` for anything else (placeholders, numbers...).
pub(crate) fn parse_time(s: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(s).ok()
}

/// The earliest and latest valid timestamps seen, kept as written.
#[derive(Debug, Default, Clone)]
pub(crate) struct TimeSpan {
    first: Option<(DateTime<FixedOffset>, String)>,
    last: Option<(DateTime<FixedOffset>, String)>,
    /// Lines whose timestamp was not RFC 3339, and the first of them (line, value as JSON).
    bad: usize,
    first_bad: Option<(usize, String)>,
}

impl TimeSpan {
    /// Notes that line `line` has a `timestamp` that is not a valid RFC 3339 date-time.
    pub(crate) fn note_bad(&mut self, line: usize, raw: &serde_json::Value) {
        self.bad += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some((line, raw.to_string()));
        }
    }

    /// One warning for the lines [`Self::note_bad`] saw (at the first of them), if any.
    pub(crate) fn bad_diagnostic(&self, path: &std::path::Path) -> Option<crate::Diagnostic> {
        let (line, raw) = self.first_bad.as_ref()?;
        let message = if self.bad == 1 {
            format!("timestamp {raw} is not an RFC 3339 date-time; the line is kept without it")
        } else {
            format!(
                "timestamp {raw} is not an RFC 3339 date-time, nor are those of {} later \
                 line(s); the lines are kept without them",
                self.bad - 1
            )
        };
        Some(crate::Diagnostic::warning(path, *line, message))
    }

    /// Notes `ts` when it is a valid RFC 3339 timestamp; returns it back in that case.
    pub(crate) fn see(&mut self, ts: Option<&str>) -> Option<String> {
        let s = ts?;
        let t = parse_time(s)?;
        if self.first.as_ref().is_none_or(|(f, _)| t < *f) {
            self.first = Some((t, s.to_owned()));
        }
        if self.last.as_ref().is_none_or(|(l, _)| t >= *l) {
            self.last = Some((t, s.to_owned()));
        }
        Some(s.to_owned())
    }

    /// `(created, last_active)`.
    pub(crate) fn bounds(&self) -> (Option<String>, Option<String>) {
        (
            self.first.as_ref().map(|(_, s)| s.clone()),
            self.last.as_ref().map(|(_, s)| s.clone()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_safe_file_names() {
        assert_eq!(sanitize_id("ab-12.x_y", "f"), "ab-12.x_y");
        assert_eq!(sanitize_id("", "f"), "f");
        let changed = |raw: &str, stem: &str| {
            let id = sanitize_id(raw, "f");
            assert!(id.starts_with(&format!("{stem}-")), "{raw} -> {id}");
            assert_eq!(id.len(), stem.len() + 9, "{raw} -> {id}");
            assert!(crate::validate_id(&id).is_ok(), "{id}");
            id
        };
        changed("..a/b c", "a_b_c");
        changed("...", "f");
        changed("[trimmed]", "_trimmed_");
        assert_eq!(sanitize_id(&"x".repeat(300), "f").len(), 200);
        // Names that differ only in characters an id cannot hold stay different ids.
        let a = changed("uni-日本-名前", "uni-__-__");
        let b = changed("uni-中文-文件", "uni-__-__");
        assert_ne!(a, b);
        assert_eq!(a, sanitize_id("uni-日本-名前", "f"), "stable");
    }

    #[test]
    fn ids_never_start_with_a_dash() {
        let id = sanitize_id("-lead", "f");
        assert!(id.starts_with("_lead-"), "{id}");
        assert_eq!(id.len(), "_lead".len() + 9, "{id}");
        assert_ne!(id, sanitize_id("_lead", "f"), "not the id of `_lead`");
        for raw in ["-", "--x", ".-x", "-a b", "-.x", "-x.agent-y"] {
            let id = sanitize_id(raw, "f");
            assert!(!id.starts_with('-'), "{raw} -> {id}");
            assert!(crate::validate_id(&id).is_ok(), "{raw} -> {id}");
        }
        assert_eq!(sanitize_id("a-b", "f"), "a-b", "inner dashes stay");
    }

    #[test]
    fn legacy_dash_ids_are_recognised() {
        // `-lead` was kept as it was; `.-x` and `-a b` had a hash already.
        assert!(is_legacy_of("-lead", &sanitize_id("-lead", "f")));
        let old = format!("-x-{}", &sanitize_id(".-x", "f")[3..]);
        assert!(is_legacy_of(&old, &sanitize_id(".-x", "f")), "{old}");
        let old = format!("-a_b-{}", &sanitize_id("-a b", "f")[5..]);
        assert!(is_legacy_of(&old, &sanitize_id("-a b", "f")), "{old}");
        assert!(!is_legacy_of("-lead", &sanitize_id("-other", "f")));
        assert!(!is_legacy_of("_lead", &sanitize_id("_lead", "f")));
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(
            shorten_title("  fix\n the   bug "),
            Some("fix the bug".to_owned())
        );
        let long = shorten_title(&"é".repeat(100)).unwrap_or_default();
        assert_eq!(long.chars().count(), 80);
        assert!(long.ends_with('…'));
        assert_eq!(shorten_title(" \n "), None);
        assert_eq!(
            command_title("<command-name>/init</command-name>\n<command-args>now</command-args>"),
            Some("/init now".to_owned())
        );
    }

    #[test]
    fn time_span_keeps_extremes_as_written() {
        let mut span = TimeSpan::default();
        span.see(Some("2025-01-02T00:00:00Z"));
        span.see(Some("[trimmed]"));
        span.see(Some("2025-01-01T00:00:00.000Z"));
        span.see(Some("2025-01-03T00:00:00+01:00"));
        assert_eq!(
            span.bounds(),
            (
                Some("2025-01-01T00:00:00.000Z".to_owned()),
                Some("2025-01-03T00:00:00+01:00".to_owned())
            )
        );
    }
}
