//! Turning a user's search words into index queries. Everything the user types is plain text:
//! FTS5 syntax (`"`, `*`, `NEAR(`, `-`, `AND`, column filters, unbalanced quotes) is quoted away,
//! never interpreted and never an SQL error.

/// The longest snippet of a search hit, in characters ([`hit_snippet`]).
pub const SNIPPET_CHARS: usize = 96;

/// How many matches a full-text pass ranks at most (both backends): the newest this many
/// visible matches are ranked and the best returned, so a query whose words are in a large share
/// of the documents costs the same at 1,000,000 as at 10,000. A query with fewer visible
/// matches is ranked over all of them (exact).
pub const RANK_CAP: usize = 1000;

/// The shortest term the trigram index can match (shorter ones are found by a substring scan).
pub const TRIGRAM_MIN_CHARS: usize = 3;

/// The terms of a query: its whitespace-separated words, each kept whole (so `src/main.rs`,
/// `snake_case_name` and `--json` stay one term). Empty when the query is blank.
pub fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in query.split_whitespace() {
        if !out.iter().any(|t| t == word) {
            out.push(word.to_owned());
        }
    }
    out
}

/// An FTS5 string literal: the text in double quotes, inner quotes doubled. Inside a literal no
/// character is an operator.
pub fn fts_string(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The word-index (unicode61) query: every term as a quoted phrase, all required. `None` when a
/// term has no letter or digit (the tokenizer would see an empty phrase), so the caller falls
/// back to the substring search.
pub fn word_query(terms: &[String]) -> Option<String> {
    if terms.is_empty() || terms.iter().any(|t| !t.chars().any(char::is_alphanumeric)) {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| fts_string(t))
            .collect::<Vec<_>>()
            .join(" AND "),
    )
}

/// The trigram-index query for the terms of at least [`TRIGRAM_MIN_CHARS`] characters (each a
/// quoted substring, all required), and the shorter terms, to be matched with `LIKE`.
pub fn trigram_query(terms: &[String]) -> (Option<String>, Vec<String>) {
    let (long, short): (Vec<&String>, Vec<&String>) = terms
        .iter()
        .partition(|t| t.chars().count() >= TRIGRAM_MIN_CHARS);
    let matched = if long.is_empty() {
        None
    } else {
        Some(
            long.iter()
                .map(|t| fts_string(t))
                .collect::<Vec<_>>()
                .join(" AND "),
        )
    };
    (matched, short.into_iter().cloned().collect())
}

/// `true` when `text` holds a CJK ideograph, kana or hangul (scripts written without spaces).
pub fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF
            | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
    })
}

/// A `LIKE` pattern finding `term` anywhere, with `%`, `_` and `\` escaped (use `ESCAPE '\'`).
pub fn like_pattern(term: &str) -> String {
    let mut p = String::with_capacity(term.len() + 2);
    p.push('%');
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// A short excerpt of `text` around the first case-insensitive occurrence of any term: at most
/// `max_chars` characters (plus the `…` marks), whitespace shown as single spaces, `…` where
/// text was left out. Cut between words: a cut that would fall inside a word moves to the
/// nearest space inside the window (never past the match); only a window without any space
/// (CJK text, one long identifier) is cut at a character.
pub fn excerpt(text: &str, terms: &[String], max_chars: usize) -> String {
    let lower = text.to_lowercase();
    let found = terms
        .iter()
        .filter_map(|t| {
            lower
                .find(&t.to_lowercase())
                .map(|at| (at, t.chars().count()))
        })
        .min();
    let (found, term_chars) = found.unwrap_or((0, 0));
    // `lower` may differ in length from `text` for a few scripts; map by character count.
    let at_chars = lower.get(..found).map(|s| s.chars().count()).unwrap_or(0);
    let chars: Vec<char> = text.chars().collect();
    let mut start = at_chars.saturating_sub(max_chars / 3).min(chars.len());
    let mut end = (start + max_chars).min(chars.len());
    let match_end = (at_chars + term_chars).min(end);
    if start > 0
        && !chars[start - 1].is_whitespace()
        && let Some(space) = chars[start..at_chars.max(start)]
            .iter()
            .position(|c| c.is_whitespace())
    {
        start += space + 1;
    }
    if end < chars.len()
        && !chars[end].is_whitespace()
        && let Some(space) = chars[match_end.max(start)..end]
            .iter()
            .rposition(|c| c.is_whitespace())
    {
        end = match_end.max(start) + space;
    }
    let inner: String = chars[start..end]
        .iter()
        .map(|c| if c.is_whitespace() { ' ' } else { *c })
        .collect();
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(
        &inner
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    );
    if end < chars.len() {
        out.push('…');
    }
    out
}

/// The snippet a search hit shows: an [`excerpt`] of at most `max_chars` characters of the
/// document's text around the first term. A learning's search document is its content, its
/// context and its tags, one per line (the SQLite triggers and the PostgreSQL backend build
/// it so); its tags are never glued onto the text: the excerpt is of the text, and the tags
/// follow as ` (tags: a b)` only when a term is found in them and not in the text.
pub fn hit_snippet(
    source: crate::SourceKind,
    body: &str,
    terms: &[String],
    max_chars: usize,
) -> String {
    if source != crate::SourceKind::Learning {
        return excerpt(body, terms, max_chars);
    }
    let (text, tags) = body.rsplit_once('\n').unwrap_or((body, ""));
    let text = text.trim_end();
    let tags = tags.trim();
    let has = |hay: &str| {
        let hay = hay.to_lowercase();
        terms.iter().any(|t| hay.contains(&t.to_lowercase()))
    };
    let out = excerpt(text, terms, max_chars);
    if !tags.is_empty() && !has(text) && has(tags) {
        format!("{out} (tags: {tags})")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_syntax_is_quoted_away() {
        let t = terms(r#"NEAR( "unbalanced foo* -bar AND"#);
        assert_eq!(t, ["NEAR(", "\"unbalanced", "foo*", "-bar", "AND"]);
        assert_eq!(
            word_query(&t).as_deref(),
            Some(r#""NEAR(" AND """unbalanced" AND "foo*" AND "-bar" AND "AND""#)
        );
        assert_eq!(word_query(&terms("a - b")), None);
        assert_eq!(word_query(&terms("   ")), None);
    }

    #[test]
    fn short_terms_go_to_like() {
        let (m, short) = trigram_query(&terms("注入 参数化查询 id"));
        assert_eq!(m.as_deref(), Some("\"参数化查询\""));
        assert_eq!(short, ["注入", "id"]);
        assert_eq!(like_pattern("50%_a\\"), "%50\\%\\_a\\\\%");
    }

    #[test]
    fn excerpt_cuts_at_characters() {
        let text = "前面很多很多的文字然后是参数化查询以及后面的内容";
        let e = excerpt(text, &["参数化".to_owned()], 8);
        assert!(e.contains("参数化"), "{e}");
        assert!(e.starts_with('…') && e.ends_with('…'));
        assert_eq!(excerpt("short", &["zzz".to_owned()], 80), "short");
    }

    #[test]
    fn excerpt_cuts_between_words() {
        let text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima \
                    mike november oscar papa quebec romeo sierra tango";
        for term in ["alpha", "hotel", "oscar", "tango", "zzz"] {
            let e = excerpt(text, &[term.to_owned()], 30);
            let inner = e.trim_start_matches('…').trim_end_matches('…');
            for word in inner.split(' ') {
                assert!(
                    text.split(' ').any(|w| w == word),
                    "{term}: {e:?} cut {word:?}"
                );
            }
            assert!(inner.chars().count() <= 30, "{e}");
            if term != "zzz" {
                assert!(inner.contains(term), "{term}: {e}");
            }
        }
        // No space in the window: cut at a character, the match kept.
        let e = excerpt(&"x".repeat(100), &["xx".to_owned()], 10);
        assert_eq!(e, format!("{}…", "x".repeat(10)));
    }

    #[test]
    fn a_learnings_tags_are_not_glued_onto_its_text() {
        let body = "Raise the pool size to 40 when the nightly job times out\nseen twice\ndb perf";
        let terms = |t: &str| vec![t.to_owned()];
        let s = hit_snippet(crate::SourceKind::Learning, body, &terms("twice"), 200);
        assert_eq!(
            s,
            "Raise the pool size to 40 when the nightly job times out seen twice"
        );
        let s = hit_snippet(crate::SourceKind::Learning, body, &terms("perf"), 200);
        assert_eq!(
            s,
            "Raise the pool size to 40 when the nightly job times out seen twice (tags: db perf)"
        );
        // A note's body is its text, whatever its last line.
        let s = hit_snippet(crate::SourceKind::Note, "a\nb c", &terms("c"), 200);
        assert_eq!(s, "a b c");
    }
}
