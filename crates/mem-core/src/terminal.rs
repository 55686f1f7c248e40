//! Making text from transcripts, memories and models safe to print on a terminal.
//!
//! A session title, a memory entry or a model reply can hold ANSI escape sequences (`ESC [ 2 J`
//! clears the screen), BEL, backspaces, Unicode bidi controls (U+202E turns the rest of a line
//! around), the line and paragraph separators (U+2028, U+2029: a line break where one line was
//! promised) or invisible characters that hide text (U+200B zero width space, U+FEFF, U+2060
//! word joiner and the invisible operators, U+180E). None of that may reach a terminal raw.
//! These functions replace each such character with a visible `\u{..}` escape and leave every
//! other character as it is: accents, emoji, CJK and zero-width joiners inside emoji sequences
//! print normally.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Returns `text` with every control character except `\n` and `\t`, DEL, the C1 controls and
/// the bidi controls replaced by `\u{XX}` escapes. Borrowed when nothing needed escaping.
///
/// For multi-line output (a note body, a summary). Use [`safe_line`] where the text must stay on
/// one line.
pub fn safe(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// Like [`safe`], and `\n`, `\r` and `\t` are escaped too, so the result is one line.
///
/// For titles, list rows and previews.
pub fn safe_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// Whether printing `c` raw could move the cursor, change colours, ring the bell, reorder text,
/// break the line or hide what is next to it.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || is_separator_or_invisible(c)
}

/// The line and paragraph separators, and the invisible characters that are no part of a
/// script or an emoji sequence (U+200C / U+200D, the joiners, print as they are).
fn is_separator_or_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{2028}' | '\u{2029}' | '\u{200B}' | '\u{FEFF}' | '\u{2060}'..='\u{2064}' | '\u{180E}'
    )
}

/// The Unicode bidirectional formatting characters (UAX #9): embeddings, overrides, isolates,
/// and the implicit marks.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let needs = |c: char| is_unsafe_char(c) && !keep(c);
    let Some(first) = text.find(needs) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if needs(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_ansi_bell_and_bidi() {
        assert_eq!(safe("a\u{1b}[2Jb\u{7}"), "a\\u{1b}[2Jb\\u{7}");
        assert_eq!(safe("evil\u{202E}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(safe("del\u{7f} c1\u{9b}"), "del\\u{7f} c1\\u{9b}");
    }

    #[test]
    fn escapes_separators_and_invisible_characters() {
        assert_eq!(
            safe_line("a\u{2028}b\u{2029}c\u{200B}d\u{FEFF}e\u{2060}f"),
            "a\\u{2028}b\\u{2029}c\\u{200b}d\\u{feff}e\\u{2060}f"
        );
        // Joiners belong to scripts and emoji.
        assert_eq!(safe("\u{200C}\u{200D}"), "\u{200C}\u{200D}");
    }

    #[test]
    fn keeps_newlines_only_in_multi_line_mode() {
        assert_eq!(safe("a\nb\tc\r"), "a\nb\tc\\u{d}");
        assert_eq!(safe_line("a\nb\tc"), "a\\u{a}b\\u{9}c");
    }

    #[test]
    fn leaves_accents_emoji_and_cjk_alone_and_borrows() {
        let text = "café e\u{301} 👩\u{200d}💻 记忆";
        assert!(matches!(safe_line(text), Cow::Borrowed(_)));
        assert_eq!(safe_line(text), text);
    }
}
