//! Offline selection: BM25 (the `bm25` crate, with our tokenizer) over each candidate's name and
//! description (weighted double) and over its body.

use bm25::{Document, SearchEngineBuilder, Tokenizer};

use crate::types::Candidate;

/// A candidate is selected only when its score is at least this fraction of the best score (and
/// above zero): weak, incidental matches are left out.
pub const MIN_RELATIVE_SCORE: f32 = 0.3;

/// The absolute floor: a candidate is selected only when its score is at least this fraction of
/// the query's [`ideal_score`], whatever the other candidates score. A memory that shares one
/// common word with an unrelated query ("what is the weather in paris today" and a note that
/// mentions "today") stays far below it, so such a query selects nothing. A share rather than a
/// fixed number because BM25 scores grow with the number of files and the length of the query.
pub const MIN_IDEAL_SHARE: f32 = 0.15;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so",
    "that", "the", "their", "then", "there", "these", "this", "to", "was", "we", "what", "when",
    "where", "which", "who", "why", "will", "with", "you", "your",
];

/// Lowercased words; plural `s` stripped from longer words; stop words dropped; runs of CJK
/// characters become unigrams and bigrams (so 测试命令 matches 测试 and 命令).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MemTokenizer;

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

impl Tokenizer for MemTokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        let mut tokens = Vec::new();
        let lower = input_text.to_lowercase();
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        let flush_word = |word: &mut String, tokens: &mut Vec<String>| {
            if !word.is_empty() {
                let mut w = std::mem::take(word);
                if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                    w.pop();
                }
                if w.chars().count() > 1 && !STOP_WORDS.contains(&w.as_str()) {
                    tokens.push(w);
                }
            }
        };
        let flush_cjk = |cjk: &mut Vec<char>, tokens: &mut Vec<String>| {
            for (i, c) in cjk.iter().enumerate() {
                tokens.push(c.to_string());
                if let Some(next) = cjk.get(i + 1) {
                    tokens.push([*c, *next].iter().collect());
                }
            }
            cjk.clear();
        };
        for c in lower.chars() {
            if is_cjk(c) {
                flush_word(&mut word, &mut tokens);
                cjk.push(c);
            } else if c.is_alphanumeric() || c == '_' {
                flush_cjk(&mut cjk, &mut tokens);
                word.push(c);
            } else {
                flush_word(&mut word, &mut tokens);
                flush_cjk(&mut cjk, &mut tokens);
            }
        }
        flush_word(&mut word, &mut tokens);
        flush_cjk(&mut cjk, &mut tokens);
        tokens
    }
}

/// Weight of the name + description field against the body.
pub const HEAD_WEIGHT: f32 = 2.0;

fn field_scores(query: &str, texts: Vec<String>) -> Vec<f32> {
    let n = texts.len();
    let documents = texts
        .into_iter()
        .enumerate()
        .map(|(i, t)| Document::new(i, t));
    let engine = SearchEngineBuilder::<usize, u32, MemTokenizer>::with_tokenizer_and_documents(
        MemTokenizer,
        documents,
    )
    .build();
    let mut scores = vec![0.0; n];
    for r in engine.search(query, None) {
        if let Some(s) = scores.get_mut(r.document.id) {
            *s = r.score;
        }
    }
    scores
}

/// BM25 scores of the candidates that match `query` at all: `(index into candidates, score)`,
/// best first, ties in candidate order. The score is [`HEAD_WEIGHT`] × BM25 over name and
/// description plus BM25 over the body (each field ranked against the same field of the others).
pub fn score(query: &str, candidates: &[Candidate]) -> Vec<(usize, f32)> {
    let mut scored: Vec<(usize, f32)> = combined_scores(query, candidates)
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// The score a memory made of the query's own words (name and body = `query`) gets when ranked
/// with `candidates`: the best a candidate can reasonably reach. 0 for an empty query.
pub fn ideal_score(query: &str, candidates: &[Candidate]) -> f32 {
    let mut with_ideal = candidates.to_vec();
    with_ideal.push(Candidate {
        id: String::new(),
        name: query.to_owned(),
        description: String::new(),
        body: query.to_owned(),
    });
    combined_scores(query, &with_ideal)
        .last()
        .copied()
        .unwrap_or(0.0)
}

/// [`HEAD_WEIGHT`] × head score + body score of every candidate, in candidate order.
fn combined_scores(query: &str, candidates: &[Candidate]) -> Vec<f32> {
    if candidates.is_empty() || MemTokenizer.tokenize(query).is_empty() {
        return vec![0.0; candidates.len()];
    }
    let heads = field_scores(
        query,
        candidates
            .iter()
            .map(|c| format!("{}\n{}", c.name, c.description))
            .collect(),
    );
    let bodies = field_scores(query, candidates.iter().map(|c| c.body.clone()).collect());
    heads
        .iter()
        .zip(&bodies)
        .map(|(h, b)| HEAD_WEIGHT * h + b)
        .collect()
}

/// The ids of at most `limit` candidates relevant to `query`, best first: those whose score is
/// at least [`MIN_RELATIVE_SCORE`] of the best one and at least [`MIN_IDEAL_SHARE`] of the
/// query's [`ideal_score`].
pub fn select(query: &str, candidates: &[Candidate], limit: usize) -> Vec<String> {
    let scored = score(query, candidates);
    let Some(best) = scored.first().map(|(_, s)| *s) else {
        return Vec::new();
    };
    let floor = (best * MIN_RELATIVE_SCORE).max(ideal_score(query, candidates) * MIN_IDEAL_SHARE);
    scored
        .into_iter()
        .filter(|(_, s)| *s >= floor)
        .take(limit)
        .map(|(i, _)| candidates[i].id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, name: &str, description: &str, body: &str) -> Candidate {
        Candidate {
            id: id.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            body: body.to_owned(),
        }
    }

    fn corpus() -> Vec<Candidate> {
        vec![
            candidate(
                "testing.md",
                "Testing",
                "How tests are run",
                "Run cargo nextest; snapshots with insta.",
            ),
            candidate(
                "style.md",
                "Code style",
                "Naming and formatting",
                "snake_case, rustfmt defaults.",
            ),
            candidate(
                "deploy.md",
                "Deployment",
                "Release process",
                "Tag, then CI publishes the binaries.",
            ),
            candidate(
                "zh.md",
                "测试命令",
                "如何运行测试",
                "使用 pytest 运行测试。",
            ),
        ]
    }

    fn check(query: &str, limit: usize, expected: &[&str]) {
        assert_eq!(select(query, &corpus(), limit), expected, "query {query:?}");
    }

    #[test]
    fn ranks_by_name_description_and_body() {
        check("how do I run the tests?", 5, &["testing.md"]);
        check("release the binaries", 5, &["deploy.md"]);
        check("formatting of names", 5, &["style.md"]);
    }

    #[test]
    fn matches_chinese_by_characters() {
        check("怎么运行测试", 5, &["zh.md"]);
    }

    #[test]
    fn nothing_matches_nothing_selected() {
        check("kubernetes helm chart", 5, &[]);
        check("", 5, &[]);
        assert!(select("tests", &[], 5).is_empty());
    }

    #[test]
    fn limit_is_respected() {
        let many: Vec<Candidate> = (0..10)
            .map(|i| candidate(&format!("{i}.md"), "tests", "tests", "tests"))
            .collect();
        let chosen = select("tests", &many, 3);
        assert_eq!(chosen, vec!["0.md", "1.md", "2.md"]);
    }

    #[test]
    fn tokenizer_handles_plurals_stop_words_and_cjk() {
        assert_eq!(
            MemTokenizer.tokenize("The Tests of 测试a"),
            vec!["test", "测", "测试", "试"]
        );
    }
}
