//! Printing what came from a transcript, a memory, a note, a model or a user's file: text made
//! terminal-safe with [`mem_core::terminal`], and JSON written so that a terminal showing it acts
//! on none of its characters.

use std::io::{self, Write};

use mem_core::terminal::is_unsafe_char;
pub use mem_core::terminal::{safe, safe_line};
use serde::Serialize;

/// `value` as pretty-printed JSON in which every character a terminal would act on (C1 controls,
/// DEL, bidi controls; serde_json already escapes the C0 controls) is written as a `\uXXXX`
/// escape. The JSON means exactly the same: such characters only occur inside strings.
///
/// Errors: serialisation's (a map with non-string keys).
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(escape_json(serde_json::to_string_pretty(value)?))
}

/// Like [`json_pretty`], on one line (for JSON Lines).
///
/// Errors: serialisation's.
pub fn json_line<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(escape_json(serde_json::to_string(value)?))
}

/// Writes [`json_pretty`] of `value` and a newline to `out`.
///
/// Errors: serialisation's, and `out`'s.
pub fn write_json<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> io::Result<()> {
    let text = json_pretty(value).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

/// [`safe`] for multi-line text that may have Windows line ends: `\r\n` prints as `\n` (a CR
/// before a line feed moves nothing), any other CR is escaped.
pub fn safe_text(text: &str) -> String {
    if text.contains("\r\n") {
        safe(&text.replace("\r\n", "\n")).into_owned()
    } else {
        safe(text).into_owned()
    }
}

/// A preview in double quotes, made one-line safe: `"ls -la"`. Quotes and backslashes inside are
/// left as they are; only characters a terminal would act on are escaped.
pub fn quoted(text: &str) -> String {
    format!("\"{}\"", safe_line(text))
}

fn escape_json(text: String) -> String {
    // Outside strings, serde_json writes only ASCII structure and `\n` (pretty printing).
    let unsafe_char = |c: char| c != '\n' && is_unsafe_char(c);
    if !text.contains(unsafe_char) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            // Every such character is in the Basic Multilingual Plane: one `\uXXXX`.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn json_escapes_what_a_terminal_acts_on_and_means_the_same() {
        let value =
            json!({"title": "evil\u{202e}txt \u{1b}[2J del\u{7f} c1\u{9b} café 👩\u{200d}💻"});
        let text = json_pretty(&value).unwrap();
        assert!(
            !text.chars().any(|c| c != '\n' && is_unsafe_char(c)),
            "{text}"
        );
        assert!(
            text.contains("\\u202e") && text.contains("café 👩\u{200d}💻"),
            "{text}"
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        let line = json_line(&value).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), value);
    }

    #[test]
    fn windows_line_ends_print_as_line_ends() {
        assert_eq!(safe_text("a\r\nb\rc\u{7}\n"), "a\nb\\u{d}c\\u{7}\n");
    }

    #[test]
    fn previews_escape_controls_only() {
        assert_eq!(quoted("a\u{1b}[2Jb"), "\"a\\u{1b}[2Jb\"");
        assert_eq!(
            quoted("e\u{301} \"x\" 👩\u{200d}💻"),
            "\"e\u{301} \"x\" 👩\u{200d}💻\""
        );
    }
}
