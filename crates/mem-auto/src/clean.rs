//! What may become an entry: one line, secrets withheld, no one-off details.

use mem_core::secrets::{REDACTED, redact};

/// An extracted text after cleaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleaned {
    /// Keep this text (secrets replaced by `[REDACTED]`); `withheld` secrets were removed.
    Keep {
        /// The entry text, one line.
        text: String,
        /// Secrets withheld from it.
        withheld: usize,
    },
    /// Dropped: mostly a secret once the secret is removed (`withheld` secrets).
    Secret {
        /// Secrets withheld.
        withheld: usize,
    },
    /// Dropped: a one-off detail, not a memory (the reason).
    OneOff(&'static str),
    /// Dropped: empty.
    Empty,
}

/// Longest entry kept, in characters; longer texts are cut with `…`.
pub const MAX_ENTRY_CHARS: usize = 300;

/// Cleans one extracted entry: one line, at most [`MAX_ENTRY_CHARS`], every secret replaced by
/// `[REDACTED]` ([`mem_core::secrets`]); an entry with fewer than 3 words or 12 characters left
/// once the secrets are taken out is dropped, and so is a one-off detail ([`one_off`]).
pub fn clean(text: &str) -> Cleaned {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = line
        .trim_start_matches(['-', '*', '+', ' '])
        .trim()
        .to_owned();
    if line.is_empty() {
        return Cleaned::Empty;
    }
    let redacted = redact(&line);
    let withheld = redacted.withheld();
    if withheld > 0 {
        let rest = redacted.text.replace(REDACTED, " ");
        let words = rest
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .count();
        let chars = rest.chars().filter(|c| !c.is_whitespace()).count();
        if words < 3 || chars < 12 {
            return Cleaned::Secret { withheld };
        }
    }
    if let Some(reason) = one_off(&redacted.text) {
        return Cleaned::OneOff(reason);
    }
    let mut text = redacted.text;
    if text.chars().count() > MAX_ENTRY_CHARS {
        text = text.chars().take(MAX_ENTRY_CHARS - 1).collect::<String>();
        text.truncate(text.trim_end().len());
        text.push('…');
    }
    Cleaned::Keep { text, withheld }
}

/// Why `text` is a one-off detail rather than a memory, if it is: a commit hash, a time of day
/// or a date-bound plan ("tomorrow", "明天"), a test count ("12 tests passed"), or a scope of
/// "just this once" / "for now" / "这次".
pub fn one_off(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    const ONCE: &[&str] = &[
        "just this once",
        "only this once",
        "this time only",
        "just for now",
        "for now",
        "for this task",
        "for this pr",
        "right now",
        "this one time",
        "这次",
        "这一次",
        "本次",
        "暂时",
        "临时",
        "先这样",
    ];
    if ONCE.iter().any(|c| lower.contains(c)) {
        return Some("only for now");
    }
    const WHEN: &[&str] = &[
        "tomorrow",
        "tonight",
        "yesterday",
        "this afternoon",
        "this morning",
        "next week",
        "meeting",
        "明天",
        "今晚",
        "昨天",
        "下午",
        "上午",
        "开会",
        "会议",
    ];
    if WHEN.iter().any(|c| lower.contains(c)) {
        return Some("a date or meeting");
    }
    let words: Vec<&str> = lower
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | '.' | ';' | '(' | ')' | '`' | '"' | '\'')
        })
        .filter(|w| !w.is_empty())
        .collect();
    // A commit hash: 7-40 hex digits with both a digit and a letter.
    if words.iter().any(|w| {
        (7..=40).contains(&w.len())
            && w.bytes().all(|b| b.is_ascii_hexdigit())
            && w.bytes().any(|b| b.is_ascii_digit())
            && w.bytes().any(|b| b.is_ascii_alphabetic())
    }) {
        return Some("a commit hash");
    }
    // A time of day: 9:30, 14:00, 3pm.
    if words.iter().any(|w| {
        let (h, m) = w.split_once(':').unwrap_or(("", ""));
        (!h.is_empty()
            && h.len() <= 2
            && h.bytes().all(|b| b.is_ascii_digit())
            && m.len() == 2
            && m.bytes().all(|b| b.is_ascii_digit()))
            || ((w.ends_with("am") || w.ends_with("pm"))
                && w.len() <= 4
                && w[..w.len() - 2].bytes().all(|b| b.is_ascii_digit())
                && w.len() > 2)
    }) {
        return Some("a time of day");
    }
    // A test count: "12 tests", "3 passed", "5 failing".
    for pair in words.windows(2) {
        if pair[0].bytes().all(|b| b.is_ascii_digit())
            && [
                "test", "tests", "passed", "failed", "failing", "passing", "errors", "warnings",
            ]
            .contains(&pair[1])
        {
            return Some("a test count");
        }
    }
    if lower.contains("个测试") || lower.contains("测试通过") || lower.contains("测试失败")
    {
        return Some("a test count");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_fact_around_a_secret() {
        match clean(
            "The CI remote is https://bot:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/app.git, pushed by the release job",
        ) {
            Cleaned::Keep { text, withheld } => {
                assert_eq!(withheld, 1);
                assert!(!text.contains("ghp_"), "{text}");
                assert!(text.contains("release job"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            clean("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            Cleaned::Secret { withheld: 1 }
        ));
    }

    #[test]
    fn one_offs() {
        for t in [
            "Fixed in commit 3f9a0c1e2b",
            "Standup meeting at 9:30",
            "Use npm just this once",
            "All 42 tests passed",
            "明天下午三点开会",
            "这次先不用写测试",
        ] {
            assert!(one_off(t).is_some(), "{t}");
        }
        for t in [
            "Always use pnpm",
            "Tests live in tests/unit",
            "Deploy with `fly deploy` from main",
            "Node 20 is required",
            "以后提交信息用英文",
        ] {
            assert_eq!(one_off(t), None, "{t}");
        }
    }
}
