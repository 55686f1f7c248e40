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
    /// Dropped: not a memory (the reason): a one-off detail ([`one_off`]), or a text repeating
    /// itself ([`repeats_itself`]).
    OneOff(&'static str),
    /// Dropped: empty.
    Empty,
}

/// Longest entry kept, in characters; longer texts are cut with `…`.
pub const MAX_ENTRY_CHARS: usize = 300;

/// Cleans one extracted entry: one line, at most [`MAX_ENTRY_CHARS`], every secret replaced by
/// `[REDACTED]` ([`mem_core::secrets`]). `withheld` counts the secrets found here and the
/// `[REDACTED]` markers already in `text` (secrets withheld earlier, from the prompt); an entry with fewer than 3 words or 12 characters left
/// once the secrets are taken out is dropped, and so is a one-off detail ([`one_off`]) and a
/// text repeating itself ([`repeats_itself`], checked on the part that would be kept).
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
    // A secret taken out before (the messages are redacted before any engine reads them) left
    // its marker: it counts as withheld here, and weighs the same in "mostly a secret".
    let withheld = redacted.withheld() + line.matches(REDACTED).count();
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
    let cut = text.chars().count() > MAX_ENTRY_CHARS;
    if cut {
        text = text.chars().take(MAX_ENTRY_CHARS - 1).collect::<String>();
        text.truncate(text.trim_end().len());
    }
    if repeats_itself(&text) {
        return Cleaned::OneOff("repeats itself");
    }
    if cut {
        text.push('…');
    }
    Cleaned::Keep { text, withheld }
}

/// Whether `text` is mostly one piece said over and over, as a model stuck in a loop writes
/// it ("It is new. It is new. It is new."): some unit of characters repeated at least 3 times
/// in a row covers at least half of the text's non-space characters (compared lowercased, so
/// it holds without spaces, in CJK too). `O(n²)` for `n` characters: [`clean`] checks at most
/// [`MAX_ENTRY_CHARS`].
pub fn repeats_itself(text: &str) -> bool {
    let chars: Vec<char> = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let n = chars.len();
    // `run` characters equal to the one `period` later: the unit repeats (run + period) /
    // period times over run + period characters.
    (1..=n / 3).any(|period| {
        let mut run = 0;
        chars.iter().zip(&chars[period..]).any(|(a, b)| {
            run = if a == b { run + 1 } else { 0 };
            run >= 2 * period && 2 * (run + period) >= n
        })
    })
}

/// Whether `phrase` is in `text` with no ASCII letter or digit right after it ("for this pr" in
/// "for this pr, skip it", not in "for this project"); a Chinese phrase wherever it is.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    // Chinese has no spaces between words: a phrase stands as it is found.
    if !phrase.is_ascii() {
        return text.contains(phrase);
    }
    // Whole words at both ends: "right now" is not in "playwright now".
    text.match_indices(phrase).any(|(i, _)| {
        !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric())
            && !text[i + phrase.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
    })
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
    // As whole words: "for this pr" is not in "for this project".
    if ONCE.iter().any(|c| contains_phrase(&lower, c)) {
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
    // A schedule ("reset every night at 3am", 每天) is standing, not a one-off.
    const RECURRING: &[&str] = &[
        "every night",
        "every day",
        "every morning",
        "every week",
        "every hour",
        "each night",
        "each day",
        "nightly",
        "daily",
        "weekly",
        "hourly",
        "每天",
        "每晚",
        "每周",
        "每小时",
        "定时",
    ];
    if RECURRING.iter().any(|c| lower.contains(c)) {
        return None;
    }
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

    /// Issue 27 item 14: an entry from the offline engine or a model's reply is stored without
    /// escape sequences, BEL or bidi controls.
    #[test]
    fn entries_are_stored_without_control_characters() {
        match clean(
            "Always run \u{1b}[31mpnpm\u{1b}[0m install\u{7} before \u{1b}]0;pwned\u{7}the tests \u{202E}here",
        ) {
            Cleaned::Keep { text, withheld } => {
                assert_eq!(withheld, 0);
                assert_eq!(text, "Always run pnpm install before the tests here");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn texts_repeating_themselves_are_not_kept() {
        for t in [
            "Ok. Use pnpm. Use pnpm. Use pnpm. Use pnpm.",
            "The build is cached the build is cached the build is cached",
            "fine fine fine fine fine fine fine",
            "测试用例。测试用例。测试用例。测试用例。",
            "Rule: --------------------------",
        ] {
            assert!(repeats_itself(t), "{t}");
            assert_eq!(clean(t), Cleaned::OneOff("repeats itself"), "{t}");
        }
        // A loop running past the length limit is checked on what would be kept.
        let long = "Lint before commit; ".repeat(40);
        assert_eq!(clean(&long), Cleaned::OneOff("repeats itself"));
        for t in [
            "Always use pnpm, never npm",
            "Tabs, tabs, tabs: the user wants tabs everywhere in Go files",
            "Run `make test` then `make test-e2e` before a release",
            "Port 8000 for the API, 8001 for the admin UI",
            "以后提交信息用英文",
            "Docs at https://x.dev/a/a/a and the API at https://api.x.dev",
        ] {
            assert!(!repeats_itself(t), "{t}");
        }
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
            "For this PR, skip the changelog.",
        ] {
            assert!(one_off(t).is_some(), "{t}");
        }
        for t in [
            "Always use pnpm",
            "Tests live in tests/unit",
            "Deploy with `fly deploy` from main",
            "Node 20 is required",
            "以后提交信息用英文",
            "The staging db is reset every night at 3am UTC.",
            "备份每天 02:00 跑",
            "Use http://localhost:8089 for this project from now on.",
            "For this project, run tests with `make test`.",
            "e2e is Playwright now, `npx playwright test`.",
        ] {
            assert_eq!(one_off(t), None, "{t}");
        }
    }
}
