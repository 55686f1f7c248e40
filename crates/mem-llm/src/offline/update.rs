//! Updates of known entries without a model (seed 000 §3 merging, the offline counterpart of a
//! model's UPDATE): a sentence of the user that says something stored has changed ("e2e is
//! Playwright now, `npx playwright test`" while the file holds "E2E tests: `npx cypress run`")
//! replaces that entry, in its file and category.
//!
//! A sentence updates an entry only when all of these hold (precision first: a wrong update
//! loses a good memory):
//!
//! - it is the user's statement: not a question, hedge, hypothetical, reported speech, plan or
//!   one-off ("just for today run it on 8001", "we might move off Postgres");
//! - it says a change ([`CHANGE`]: "now", "anymore", "no longer", "moved", "renamed", "dropped",
//!   "replaced", "switched", "migrated", "went (up) to", "is gone", 现在, 改成, 换成, 迁移, 不再用…),
//!   not negated ("we're not moving it now");
//! - it is about the entry: the two share at least half of the entry's content words, or three
//!   of them ([`about`]), and the entry is the only one that close;
//! - it brings something the entry does not have (a word or value of its own) and is not the
//!   entry said again.

use std::collections::HashSet;
use std::sync::LazyLock;

use mem_core::{Message, Role};
use regex::Regex;

use super::facts;
use super::knowledge;
use super::text::{closed, is_han, one_line, user_text};
use crate::types::{CurrentEntry, EntryChange};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// Words saying that something changed (lowercase text).
static CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(now|anymore|any\ more|no\ longer|moved|renamed|dropped|replaced|switched|migrated|retired
          |deprecated|went\ (up\ |down\ )?to|bumped|is\ gone|are\ gone|got\ archived|was\ archived
          |left\ the\ company|moved\ teams)\b
        | 现在 | 改成 | 改为 | 换成 | 迁移 | 迁到 | 已经不用 | 不再用 | 废弃 | 调去 | 换了 | 改了
    ")
});

/// A change word negated ("we're not moving it now", "minSdk didn't change"): no change said.
/// "not … anymore" and "no longer" say one.
static NEGATED_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(not|n't|never)\s+(\w+\s+){0,3}?(now|moved|moving|renamed|dropped|replaced|switched|migrated|changed|changing)\b
        | (没|不|别)(有)?(改|换|迁移|动)
    ")
});

/// Statements that are not the user's standing word: questions, hedges, hypotheticals, plans
/// ("we might", "we're going to", "next year", 打算, 准备, 计划).
static NOT_STANDING: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        [?？]\s*$ | 吗[。.!！]?\s*$ | \b(maybe|perhaps|probably|possibly|might|i\ think|i\ guess|not\ sure|what\ if|suppose|if\ we|if\ you|once\ we|when\ we)\b
        | \b(i|we)\s*('ll|\ will|\ want|\ plan|'re\ going\ to|\ are\ going\ to|\ could|\ should|\ need\ to)\b
        | \bnext\ (year|month|quarter|sprint|week)\b | \beventually\b
        | \b(said|says|told\ me|suggested|suggests)\b
        | 也许|可能|或许|打算|准备|计划|如果|假如|要是|以后再|下个月|明年
    ")
});

/// Words left out of [`content_words`].
const STOP: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "not",
    "now",
    "our",
    "you",
    "your",
    "this",
    "that",
    "its",
    "from",
    "into",
    "any",
    "anymore",
    "all",
    "but",
    "use",
    "uses",
    "used",
    "using",
    "don",
    "doesn",
    "isn",
    "aren",
    "never",
    "longer",
    "more",
    "also",
    "just",
    "only",
    "still",
    "them",
    "they",
    "their",
    "there",
    "here",
    "when",
    "then",
    "than",
    "what",
    "which",
    "will",
    "would",
    "should",
    "can",
    "could",
    "been",
    "being",
    "out",
    "off",
    "over",
    "via",
    "per",
    "one",
    "ago",
    "last",
    "new",
    "old",
    "goes",
    "go",
    "went",
    "get",
    "got",
    "moved",
    "renamed",
    "dropped",
    "replaced",
    "switched",
    "migrated",
    "everything",
    "every",
    "since",
    "please",
    "btw",
    "fyi",
    "heads",
];

/// Content words of a text: lowercase ASCII words of three or more characters outside [`STOP`]
/// (a trailing `s` dropped: "tests" and "test" meet), and each pair of adjacent Han characters.
fn content_words(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut out = HashSet::new();
    for w in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.len() >= 3 && !STOP.contains(&w) && !w.bytes().all(|b| b.is_ascii_digit()) {
            let w = if w.len() > 3 {
                w.strip_suffix('s').unwrap_or(w)
            } else {
                w
            };
            out.insert(w.to_owned());
        }
    }
    let chars: Vec<char> = lower.chars().collect();
    for pair in chars.windows(2) {
        if pair.iter().all(|c| is_han(*c)) {
            out.insert(pair.iter().collect());
        }
    }
    out
}

/// Every lowercase ASCII word or number and Han character of a text outside [`STOP`]: what
/// tells two values apart (`8000` / `3000`).
fn tokens(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut out: HashSet<String> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(str::to_owned)
        .collect();
    out.extend(lower.chars().filter(|c| is_han(*c)).map(String::from));
    out
}

/// How much `sentence` is about `entry`: the number of the entry's content words it shares,
/// when that is at least half of them or three; `None` otherwise.
fn about(entry: &HashSet<String>, sentence: &HashSet<String>) -> Option<usize> {
    let shared = entry.intersection(sentence).count();
    (shared > 0 && (shared * 2 >= entry.len() || shared >= 3)).then_some(shared)
}

/// `true` when `lower` has "X's Y" with X a word of the entry and Y not one: the sentence is
/// about a part of the entry's subject (the admin frontend's storybook), not about the subject.
fn names_a_part(lower: &str, entry: &HashSet<String>) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    words.windows(2).any(|pair| {
        let Some(owner) = pair[0].strip_suffix("'s") else {
            return false;
        };
        let part: String = pair[1]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let part = if part.len() > 3 {
            part.strip_suffix('s').unwrap_or(&part).to_owned()
        } else {
            part
        };
        entry.contains(owner) && !part.is_empty() && !entry.contains(&part)
    })
}

/// The updates the user's sentences in `messages` make to `entries` (see the module doc): one
/// [`EntryChange::Update`] per entry at most, its text the sentence (one line, closed), the
/// latest sentence winning.
pub fn updates(messages: &[Message], entries: &[CurrentEntry]) -> Vec<EntryChange> {
    if entries.is_empty() {
        return Vec::new();
    }
    let entry_words: Vec<HashSet<String>> =
        entries.iter().map(|e| content_words(&e.text)).collect();
    let mut out: Vec<EntryChange> = Vec::new();
    for message in messages.iter().filter(|m| m.role == Role::User) {
        let Some(text) = user_text(message) else {
            continue;
        };
        if knowledge::looks_like_log(&text) || knowledge::looks_like_document(&text) {
            continue;
        }
        for sentence in facts::sentences(&facts::with_apostrophes(&text)) {
            let sentence = one_line(&sentence);
            let lower = sentence.to_lowercase();
            if sentence.chars().count() > 300
                || !CHANGE.is_match(&lower)
                || NEGATED_CHANGE.is_match(&lower)
                || NOT_STANDING.is_match(&lower)
                || knowledge::is_one_off(&sentence)
            {
                continue;
            }
            let words = content_words(&sentence);
            let scored: Vec<(usize, usize)> = entry_words
                .iter()
                .enumerate()
                .filter_map(|(i, ew)| about(ew, &words).map(|s| (s, i)))
                .collect();
            // About two entries ("tests moved into the package, and we run them through nox
            // now" against where the package lives and how tests run): which one changed is
            // not known.
            let [(_, index)] = scored[..] else {
                continue;
            };
            // "the admin frontend's storybook": a part of what the entry is about, named by a
            // word the entry does not have, is another thing.
            if names_a_part(&lower, &entry_words[index]) {
                continue;
            }
            // Nothing of its own (no word, number or value the entry lacks): the entry said
            // again (a confirmation), not a change.
            let entry_tokens = tokens(&entries[index].text);
            if tokens(&sentence).is_subset(&entry_tokens) {
                continue;
            }
            let entry = &entries[index];
            // Said as "fyi I'm on Helix …", "quick update: minSdk …": stored without the opener.
            let body = super::extract::strip_filler(&sentence);
            let body = body.trim();
            let text = if body.ends_with(['.', '!', '。', '！']) {
                body.to_owned()
            } else {
                closed(body)
            };
            out.retain(|c| c.id() != entry.id);
            out.push(EntryChange::Update { id: entry.id, text });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MemoryCategory;

    fn entry(id: u32, text: &str) -> CurrentEntry {
        CurrentEntry {
            id,
            category: MemoryCategory::Project,
            text: text.to_owned(),
        }
    }

    fn updated(said: &str, entries: &[CurrentEntry]) -> Vec<(u32, String)> {
        updates(&[Message::user(said)], entries)
            .into_iter()
            .map(|c| match c {
                EntryChange::Update { id, text } => (id, text),
                EntryChange::Delete { id } => (id, String::new()),
            })
            .collect()
    }

    #[test]
    fn a_change_to_a_stored_fact_updates_its_entry() {
        let entries = [
            entry(1, "E2E tests: `npx cypress run`"),
            entry(2, "Unit tests: `npm test`"),
            entry(3, "Backend reviews: @tomasz"),
            entry(4, "Frontend reviews: @sana"),
        ];
        assert_eq!(
            updated(
                "The dev server runs on port 3000 now.",
                &[entry(1, "The dev server runs on port 8000.")]
            ),
            [(1, "The dev server runs on port 3000 now.".to_owned())]
        );
        assert_eq!(
            updated("e2e is Playwright now, `npx playwright test`.", &entries),
            [(
                1,
                "e2e is Playwright now, `npx playwright test`.".to_owned()
            )]
        );
        assert_eq!(
            updated(
                "Tomasz moved teams, backend reviews go to @ifeoma now. Sana still does frontend.",
                &entries
            ),
            [(
                3,
                "Tomasz moved teams, backend reviews go to @ifeoma now.".to_owned()
            )]
        );
    }

    #[test]
    fn no_update_without_a_change_said_about_one_entry() {
        let entries = [
            entry(1, "The dev server runs on port 8000."),
            entry(2, "Lint with `npm run lint` before committing."),
        ];
        for said in [
            // No change said, a question, a plan, a one-off, a negated change.
            "We also have a staging server on port 8001.",
            "Is the dev server still on 8000?",
            "We might move the dev server to 3000 next year.",
            "Just for today run the dev server on 8001.",
            "No, we're not moving the dev server now.",
            // The entry said again.
            "The dev server runs on port 8000 now.",
            "the dev server runs on port 8000, now.",
            // About something else, or a part of it.
            "The metrics exporter is on 9464 now.",
            "I moved the dev server's storybook to port 6007.",
            // About two entries.
            "The dev server moved and lint runs with `npm run lint:ci` now.",
        ] {
            assert!(updated(said, &entries).is_empty(), "{said}");
        }
    }
}
