//! Offline selection (seed 000 §4's selector without a model): field-weighted BM25 (BM25F,
//! Robertson & Zaragoza 2009) over each candidate's name (+ file name), description and body,
//! with a tokenizer for English prose, code identifiers and CJK text, and a threshold that
//! selects nothing when no note is about the message.
//!
//! - Tokens ([`tokenize`]): lowercased; words split at `snake_case`, `kebab-case`, `camelCase`,
//!   paths and dots, each part stemmed (Snowball English) and, for a compound identifier, the
//!   whole identifier as one more token (so `list_select_related` matches exactly and by parts);
//!   an acronym (`IoU`, `iOS`, `GPUs` → `gpu`, `AWS`: at most four letters, two or more of them
//!   capitals) is one word and not stemmed;
//!   English stop words dropped; runs of CJK characters as overlapping bigrams (a single
//!   character alone), Chinese function-word bigrams dropped.
//! - Score: Σ over query terms of `idf(t) · tf̃ / (k1 + tf̃)`, `tf̃ = Σ_fields w_f · tf_f /
//!   (1 − b + b · len_f / avglen_f)`, weights [`NAME_WEIGHT`], [`DESCRIPTION_WEIGHT`],
//!   [`BODY_WEIGHT`]; `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))` over the candidates.
//! - Threshold: a score is divided by the query's ideal score (every query term matched once
//!   in an average-length name: [`ideal_score`]); that share is taken for the whole message and
//!   for each of its [`clauses`] (one holding [`MIN_CLAUSE_MATCHES`] of the note's words), the
//!   best counts ([`best_shares`]); a candidate is selected when its best share is at least
//!   [`MIN_IDEAL_SHARE`] and at least [`MIN_RELATIVE_SCORE`] of the best candidate's. Words
//!   of the query that no note holds count in the ideal at the highest idf, so a message about
//!   something else ("write a haiku about autumn") stays below the floor.
//! - User-level notes ([`Candidate::user_level`]: the user's own folder, offered in every
//!   project) are selected on the floor only, never by the standout or the rare-term floor
//!   below: they are written in the vocabulary of how the user works, which many messages
//!   share without being about it (dev split: 5 of the 21 wrong selections of user notes came
//!   through the fallbacks, none of the 6 right ones).
//! - Standout: when no candidate passes, the best is still selected alone when it stands out
//!   of the candidates' distribution: its share is at least [`STANDOUT_RATIO`] times the
//!   second's and at least [`MIN_STANDOUT_SHARE`], and its name or description holds a word of
//!   the message itself (not an expansion, not a bare number). A message about nothing matches
//!   several notes weakly and alike (flat shares), or only through expansions or the body.
//! - Rare-term floor: when still nothing is selected, the candidates whose name or description holds
//!   a word of the message that at most [`RARE_TERM_MAX_SHARE`] of the candidates hold, and
//!   that share [`MIN_CLAUSE_MATCHES`] words with the message, are selected (the same relative
//!   floor among them).
//! - Cut: the selection, best first, is cut after its biggest drop in share when that drop is
//!   at least [`DROP_RATIO`]: the notes below a clear break are incidental matches.
//! - Superseded notes: a note whose description says another is out of date (a word of
//!   [`STALE_WORDS`] and a word of the other's name, `says_stale`) is selected with it and put
//!   just before it, so the stale note never comes alone or first.
//! - Cost: a candidate's tokens ([`CandidateTerms`]) depend on its text only, so they are
//!   computed once and kept in a process-wide memo keyed by the candidate's text ([`terms_of`]);
//!   a turn over unchanged notes only tokenises the message. A caller that keeps terms across
//!   processes (mem-recall's scan cache) hands them back with [`remember_terms`].

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};

use crate::types::Candidate;

/// Weight of the name field (frontmatter `name` and the file name's stem).
pub const NAME_WEIGHT: f32 = 3.0;
/// Weight of the description field.
pub const DESCRIPTION_WEIGHT: f32 = 2.0;
/// Weight of the body.
pub const BODY_WEIGHT: f32 = 1.0;
/// BM25's term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25's length normalisation (the same for every field).
pub const B: f32 = 0.75;
/// The most bytes of a body that are ranked (16 KiB; a note's point is at its top).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// A candidate is selected only when its score is at least this fraction of the best score:
/// weak, incidental matches next to a strong one are left out.
pub const MIN_RELATIVE_SCORE: f32 = 0.4;

/// Weight of a word added by query expansion ([`crate::offline`]'s thesaurus of software-work
/// vocabulary and Chinese–English equivalents) against a word of the message itself.
pub const EXPANSION_WEIGHT: f32 = 0.5;

/// How many average query words the ideal score is padded with: a prior that keeps a one- or
/// two-word message from reaching the floor on a single incidental match.
pub const IDEAL_PRIOR_TERMS: f32 = 1.0;

/// How much a CJK bigram of the message that no note holds counts in the ideal score: such a
/// bigram mostly straddles two words or is a function word, and in a mixed-script message
/// (Chinese around ASCII identifiers) the identifiers are the words that matter.
pub const UNSEEN_CJK_SHARE: f32 = 0.25;

/// The absolute floor: a candidate is selected only when its score is at least this share of
/// the query's [`ideal_score`], whatever the other candidates score.
pub const MIN_IDEAL_SHARE: f32 = 0.22;

/// Standout: when no candidate reaches [`MIN_IDEAL_SHARE`], the best one is still selected
/// when its share is at least this many times the second best's (it stands out of the
/// candidates' distribution instead of being one of many weak matches), at least
/// [`MIN_STANDOUT_SHARE`], and its name or description holds a word of the message itself.
pub const STANDOUT_RATIO: f32 = 2.0;

/// The least share of a standout (see [`STANDOUT_RATIO`]).
pub const MIN_STANDOUT_SHARE: f32 = 0.1;

/// A selection is cut after its biggest drop in share when the drop is at least this ratio
/// (see `cut_at_biggest_drop`).
pub const DROP_RATIO: f32 = 2.0;

const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each", "else", "etc",
    "ever", "few", "for", "from", "further", "get", "gets", "getting", "give", "go", "going",
    "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "itself", "just", "let", "like", "make", "me", "might",
    "more", "most", "much", "must", "my", "need", "needs", "no", "nor", "not", "now", "of", "off",
    "on", "once", "one", "only", "or", "other", "our", "ours", "out", "over", "own", "put", "same",
    "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "us", "use", "very", "want", "was", "way", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "yet", "you", "your", "yours",
];

/// Chinese bigrams that are function words (question words, pronouns, auxiliaries): they say
/// nothing about a topic.
const CJK_STOP_BIGRAMS: &[&str] = &[
    "怎么", "什么", "为什", "么办", "怎样", "如何", "一个", "这个", "那个", "一下", "可以", "我们",
    "你们", "他们", "是否", "没有", "不是", "就是", "还是", "已经", "应该", "需要", "帮我", "请帮",
    "一点", "这篇", "这一", "一段", "哪个", "哪里", "的时", "时候", "之后", "之前", "现在", "今天",
    "知道", "觉得", "因为", "所以", "但是", "如果", "然后", "这样", "那样", "这里", "那里",
];

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Folds a full-width form (U+FF01–U+FF5E, as typed with a CJK input method: `ｃｌｉｎｉｃｂｏｏｋ`,
/// `１２３`, `，`, `（`) to its ASCII character and the ideographic space U+3000 to a space;
/// every other character is returned as it is.
fn fold_width(c: char) -> char {
    match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    }
}

/// A word-internal joiner of identifiers and paths.
fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | '/' | ':' | '\\' | '&')
}

/// Splits one identifier-like chunk (letters, digits, joiners) into parts at joiners,
/// lower→upper case changes (`camelCase`), upper-run→word (`HTTPServer`), letter↔digit; the
/// parts keep their case. A segment between joiners whose case changes would leave a single
/// letter (`IoU`, `iOS`, `mIoU`) is an acronym and is not cut at its case changes; a capital
/// run with a plural `s` (`GPUs`, `APIs`, `PRs`) is the run (`GPU`).
fn split_parts(chunk: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for segment in chunk.split(is_joiner).filter(|s| !s.is_empty()) {
        let letters: Vec<char> = segment.chars().collect();
        let plural_acronym = letters.len() >= 3
            && letters[letters.len() - 1] == 's'
            && letters[..letters.len() - 1]
                .iter()
                .all(|c| c.is_ascii_uppercase());
        if plural_acronym {
            parts.push(letters[..letters.len() - 1].iter().collect());
            continue;
        }
        let by_case = split_segment(&letters, true);
        let single_letter = by_case
            .iter()
            .any(|p| p.chars().count() == 1 && p.chars().all(char::is_alphabetic));
        if single_letter && by_case.len() > split_segment(&letters, false).len() {
            parts.extend(split_segment(&letters, false));
        } else {
            parts.extend(by_case);
        }
    }
    parts
}

/// One joiner-free segment cut at letter↔digit changes and, with `case`, at case changes.
fn split_segment(chars: &[char], case: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if let Some(prev) = cur.chars().last() {
            let next = chars.get(i + 1).copied();
            let boundary = (case
                && ((prev.is_lowercase() && c.is_uppercase())
                    || (prev.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(|n| n.is_lowercase()))))
                || (prev.is_alphabetic() != c.is_alphabetic());
            if boundary {
                parts.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// An acronym as written: at most [`ACRONYM_MAX_LETTERS`] letters, two or more of them
/// capitals (`AWS`, `IoU`, `iOS`, `GPU`). It is a name, not an English word: not stemmed
/// (`AWS` is not `aw`).
fn is_acronym(part: &str) -> bool {
    let letters = part.chars().filter(|c| c.is_alphabetic()).count();
    letters == part.chars().count()
        && letters <= ACRONYM_MAX_LETTERS
        && part.chars().filter(|c| c.is_uppercase()).count() >= 2
}

/// The most letters of an acronym (see `is_acronym`).
const ACRONYM_MAX_LETTERS: usize = 4;

/// The analyser: stemmer plus the rules of the module doc.
struct Analyzer {
    stemmer: Stemmer,
}

/// [`STOP_WORDS`] and [`CJK_STOP_BIGRAMS`] as sets (every word of every note is looked up).
fn stop_sets() -> &'static (
    std::collections::HashSet<&'static str>,
    std::collections::HashSet<&'static str>,
) {
    static SETS: OnceLock<(
        std::collections::HashSet<&'static str>,
        std::collections::HashSet<&'static str>,
    )> = OnceLock::new();
    SETS.get_or_init(|| {
        (
            STOP_WORDS.iter().copied().collect(),
            CJK_STOP_BIGRAMS.iter().copied().collect(),
        )
    })
}

impl Analyzer {
    fn new() -> Self {
        Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    fn word(&self, w: &str, out: &mut Vec<String>) {
        if w.chars().count() < 2 && !w.chars().all(|c| c.is_ascii_digit()) {
            return;
        }
        if stop_sets().0.contains(w) {
            return;
        }
        out.push(self.stemmer.stem(w).into_owned());
    }

    fn chunk(&self, chunk: &str, out: &mut Vec<String>) {
        let trimmed = chunk.trim_matches(is_joiner);
        if trimmed.is_empty() {
            return;
        }
        let parts = split_parts(trimmed);
        let lower: Vec<String> = parts.iter().map(|p| p.to_lowercase()).collect();
        for (p, l) in parts.iter().zip(&lower) {
            if is_acronym(p) {
                if !stop_sets().0.contains(l.as_str()) {
                    out.push(l.clone());
                }
            } else {
                self.word(l, out);
            }
        }
        if lower.len() > 1 {
            let whole: String = lower.concat();
            // A compound identifier as one token too (not stemmed: it is a name); an initialism
            // of single letters (`W&B`, `A/B`, `I/O`) is one even when short.
            let initialism = lower.iter().all(|p| p.chars().count() == 1);
            if whole.chars().count() > 3 || initialism {
                out.push(whole);
            }
        }
    }

    fn cjk(&self, run: &[char], out: &mut Vec<String>) {
        if run.len() == 1 {
            out.push(run[0].to_string());
            return;
        }
        for pair in run.windows(2) {
            let bigram: String = pair.iter().collect();
            if !stop_sets().1.contains(bigram.as_str()) {
                out.push(bigram);
            }
        }
    }

    fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut chunk = String::new();
        let mut run: Vec<char> = Vec::new();
        for c in text.chars().map(fold_width) {
            if is_cjk(c) {
                if !chunk.is_empty() {
                    self.chunk(&std::mem::take(&mut chunk), &mut out);
                }
                run.push(c);
            } else {
                if !run.is_empty() {
                    self.cjk(&std::mem::take(&mut run), &mut out);
                }
                if c.is_alphanumeric() || is_joiner(c) {
                    chunk.push(c);
                } else if !chunk.is_empty() {
                    self.chunk(&std::mem::take(&mut chunk), &mut out);
                }
            }
        }
        if !chunk.is_empty() {
            self.chunk(&chunk, &mut out);
        }
        if !run.is_empty() {
            self.cjk(&run, &mut out);
        }
        out
    }
}

/// The tokens of `text` as the selector sees them (see the module doc), in text order.
pub fn tokenize(text: &str) -> Vec<String> {
    Analyzer::new().tokens(text)
}

/// The file-name stem of a candidate id (`N:project/feedback_testing.md` → `feedback_testing`).
fn id_stem(id: &str) -> &str {
    let name = id.rsplit(['/', '\\']).next().unwrap_or(id);
    name.strip_suffix(".md").unwrap_or(name)
}

fn body_prefix(body: &str) -> &str {
    if body.len() <= MAX_BODY_BYTES {
        return body;
    }
    let mut end = MAX_BODY_BYTES;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

const FIELD_COUNT: usize = 3;
const WEIGHTS: [f32; FIELD_COUNT] = [NAME_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT];

/// Bumped whenever [`tokenize`] gives other tokens for a text (stop words, stemming, splitting,
/// the fields ranked): [`CandidateTerms`] kept from another version must not be used.
pub const ANALYZER_VERSION: u32 = 4;

/// A candidate's tokens as the selector ranks them, per field: name (frontmatter name and the
/// file-name stem of its id), description, and the body's first 16 KiB. They depend
/// on the candidate's text only ([`ANALYZER_VERSION`] aside), so they can be kept while the text
/// does not change. Serialisable, for caches across processes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateTerms {
    /// Per field, its tokens in text order, each followed by one space (tokens hold no space).
    fields: [String; FIELD_COUNT],
}

impl CandidateTerms {
    /// The tokens of `candidate`'s fields (the full analysis of [`tokenize`]).
    pub fn of(candidate: &Candidate) -> CandidateTerms {
        CandidateTerms::with(&Analyzer::new(), candidate)
    }

    fn with(analyzer: &Analyzer, c: &Candidate) -> CandidateTerms {
        let texts = [
            format!("{}\n{}", c.name, id_stem(&c.id)),
            c.description.clone(),
            body_prefix(&c.body).to_owned(),
        ];
        let fields = texts.map(|text| {
            let mut field = String::new();
            for t in analyzer.tokens(&text) {
                field.push_str(&t);
                field.push(' ');
            }
            field
        });
        CandidateTerms { fields }
    }

    /// The tokens of field `f`.
    fn tokens(&self, f: usize) -> impl Iterator<Item = &str> {
        self.fields[f].split(' ').filter(|t| !t.is_empty())
    }
}

/// The most candidates the process-wide memo of [`terms_of`] keeps (five scans' worth; it is
/// emptied when full). Each keeps a copy of its text (the body up to 16 KiB).
pub const TERMS_MEMO_MAX: usize = 1024;

/// The memo: candidates by a hash of their text, with the text itself to compare on a hit.
type Memo = HashMap<u64, Vec<(Candidate, Arc<CandidateTerms>)>>;

fn memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

fn memo_key(c: &Candidate) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        c.id.as_str(),
        c.name.as_str(),
        c.description.as_str(),
        body_prefix(&c.body),
    )
        .hash(&mut h);
    h.finish()
}

/// `true` when `a` and `b` rank the same (the body compared up to [`MAX_BODY_BYTES`]).
fn same_text(a: &Candidate, b: &Candidate) -> bool {
    a.id == b.id
        && a.name == b.name
        && a.description == b.description
        && body_prefix(&a.body) == body_prefix(&b.body)
}

fn memo_get(memo: &Memo, key: u64, c: &Candidate) -> Option<Arc<CandidateTerms>> {
    memo.get(&key)?
        .iter()
        .find(|(known, _)| same_text(known, c))
        .map(|(_, t)| Arc::clone(t))
}

fn memo_put(memo: &mut Memo, key: u64, c: &Candidate, terms: Arc<CandidateTerms>) {
    if memo.values().map(Vec::len).sum::<usize>() >= TERMS_MEMO_MAX {
        memo.clear();
    }
    let slot = memo.entry(key).or_default();
    if !slot.iter().any(|(known, _)| same_text(known, c)) {
        let kept = Candidate {
            body: body_prefix(&c.body).to_owned(),
            ..c.clone()
        };
        slot.push((kept, terms));
    }
}

/// The terms of each candidate: from the memo, else computed (then remembered).
fn terms_of_all(candidates: &[Candidate]) -> Vec<Arc<CandidateTerms>> {
    let keys: Vec<u64> = candidates.iter().map(memo_key).collect();
    let mut found: Vec<Option<Arc<CandidateTerms>>> = {
        let memo = memo().lock().unwrap_or_else(|e| e.into_inner());
        candidates
            .iter()
            .zip(&keys)
            .map(|(c, k)| memo_get(&memo, *k, c))
            .collect()
    };
    if found.iter().any(Option::is_none) {
        let analyzer = Analyzer::new();
        let mut new = Vec::new();
        for (i, slot) in found.iter_mut().enumerate() {
            if slot.is_none() {
                let t = Arc::new(CandidateTerms::with(&analyzer, &candidates[i]));
                new.push((i, Arc::clone(&t)));
                *slot = Some(t);
            }
        }
        let mut memo = memo().lock().unwrap_or_else(|e| e.into_inner());
        for (i, t) in new {
            memo_put(&mut memo, keys[i], &candidates[i], t);
        }
    }
    found
        .into_iter()
        .zip(candidates)
        .map(|(t, c)| t.unwrap_or_else(|| Arc::new(CandidateTerms::of(c))))
        .collect()
}

/// The terms of `candidate` (see [`CandidateTerms`]): from the process-wide memo when this text
/// was analysed before, else analysed now and remembered.
pub fn terms_of(candidate: &Candidate) -> Arc<CandidateTerms> {
    terms_of_all(std::slice::from_ref(candidate))
        .pop()
        .unwrap_or_else(|| Arc::new(CandidateTerms::of(candidate)))
}

/// Tells the memo that `candidate`'s terms are `terms` (kept by the caller from an earlier
/// [`terms_of`] of the same text with the same [`ANALYZER_VERSION`], e.g. in a file): the
/// next selection over it does not tokenise it again.
pub fn remember_terms(candidate: &Candidate, terms: Arc<CandidateTerms>) {
    let key = memo_key(candidate);
    let mut memo = memo().lock().unwrap_or_else(|e| e.into_inner());
    if memo_get(&memo, key, candidate).is_none() {
        memo_put(&mut memo, key, candidate, terms);
    }
}

/// Empties the process-wide memo of [`terms_of`] (for tests and benchmarks that measure a new
/// process).
pub fn forget_terms() {
    memo().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The candidates indexed for one query: per field, the term frequencies of the query's terms
/// only (the rest is counted in the length), and the lengths.
struct Index {
    tf: Vec<[HashMap<usize, f32>; FIELD_COUNT]>,
    len: Vec<[f32; FIELD_COUNT]>,
    avg: [f32; FIELD_COUNT],
    df: Vec<f32>,
    n: f32,
}

fn index(terms: &[String], docs: &[Arc<CandidateTerms>]) -> Index {
    let position: HashMap<&str, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let mut tf = Vec::with_capacity(docs.len());
    let mut len = Vec::with_capacity(docs.len());
    let mut df = vec![0.0; terms.len()];
    for doc in docs {
        let mut doc_tf: [HashMap<usize, f32>; FIELD_COUNT] = Default::default();
        let mut doc_len = [0.0; FIELD_COUNT];
        for (f, field_tf) in doc_tf.iter_mut().enumerate() {
            let mut n = 0usize;
            for t in doc.tokens(f) {
                n += 1;
                if let Some(&i) = position.get(t) {
                    *field_tf.entry(i).or_insert(0.0) += 1.0;
                }
            }
            doc_len[f] = n as f32;
        }
        for (i, d) in df.iter_mut().enumerate() {
            if doc_tf.iter().any(|m| m.contains_key(&i)) {
                *d += 1.0;
            }
        }
        tf.push(doc_tf);
        len.push(doc_len);
    }
    let n = docs.len() as f32;
    let mut avg = [1.0; FIELD_COUNT];
    for (f, a) in avg.iter_mut().enumerate() {
        let total: f32 = len.iter().map(|l| l[f]).sum();
        if total > 0.0 {
            *a = total / n.max(1.0);
        }
    }
    Index {
        tf,
        len,
        avg,
        df,
        n,
    }
}

fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Token → the tokens of the thesaurus groups it belongs to (itself excluded).
fn thesaurus() -> &'static HashMap<String, Vec<String>> {
    static MAP: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let analyzer = Analyzer::new();
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for group in super::synonyms::GROUPS {
            let mut tokens: Vec<String> = Vec::new();
            for word in group.split_whitespace() {
                for t in analyzer.tokens(word) {
                    if !tokens.contains(&t) {
                        tokens.push(t);
                    }
                }
            }
            for t in &tokens {
                let entry = map.entry(t.clone()).or_default();
                for other in &tokens {
                    if other != t && !entry.contains(other) {
                        entry.push(other.clone());
                    }
                }
            }
        }
        map
    })
}

/// The query's terms with their weights: the message's own distinct terms first
/// (`1 + ln(count)`), then, after `own` of them, the thesaurus expansions
/// ([`EXPANSION_WEIGHT`]) that are not already terms.
fn query_terms(analyzer: &Analyzer, query: &str) -> (Vec<String>, Vec<f32>, usize) {
    let mut terms: Vec<String> = Vec::new();
    let mut counts: Vec<f32> = Vec::new();
    for t in analyzer.tokens(query) {
        match terms.iter().position(|x| *x == t) {
            Some(i) => counts[i] += 1.0,
            None => {
                terms.push(t);
                counts.push(1.0);
            }
        }
    }
    let own = terms.len();
    let mut weights: Vec<f32> = counts.iter().map(|c| 1.0 + c.ln()).collect();
    let map = thesaurus();
    for i in 0..own {
        let Some(related) = map.get(&terms[i]) else {
            continue;
        };
        for r in related {
            if !terms.contains(r) {
                terms.push(r.clone());
                weights.push(EXPANSION_WEIGHT);
            }
        }
    }
    (terms, weights, own)
}

/// The query's index over the candidates: every term of the whole message (with expansions)
/// and, per candidate and term, its BM25F contribution `idf · tf̃ / (k1 + tf̃)` before the
/// query weight.
struct Ranked {
    terms: Vec<String>,
    idfs: Vec<f32>,
    df: Vec<f32>,
    /// Per candidate, per term.
    contrib: Vec<Vec<f32>>,
    /// Per candidate, the terms found in its name or description.
    named: Vec<Vec<usize>>,
    /// Per candidate, its tokens.
    docs: Vec<Arc<CandidateTerms>>,
}

fn saturate(x: f32) -> f32 {
    x * (K1 + 1.0) / (K1 + x)
}

fn ranked(terms: Vec<String>, candidates: &[Candidate]) -> Ranked {
    let docs = terms_of_all(candidates);
    let ix = index(&terms, &docs);
    let idfs: Vec<f32> = ix.df.iter().map(|df| idf(ix.n, *df)).collect();
    let contrib = (0..candidates.len())
        .map(|d| {
            idfs.iter()
                .enumerate()
                .map(|(i, idf)| {
                    let mut pseudo = 0.0;
                    for (f, weight) in WEIGHTS.iter().enumerate() {
                        if let Some(tf) = ix.tf[d][f].get(&i) {
                            let norm = 1.0 - B + B * ix.len[d][f] / ix.avg[f];
                            pseudo += weight * tf / norm;
                        }
                    }
                    if pseudo > 0.0 {
                        idf * saturate(pseudo)
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let named = ix
        .tf
        .iter()
        .map(|fields| {
            let mut t: Vec<usize> = fields[0].keys().chain(fields[1].keys()).copied().collect();
            t.sort_unstable();
            t.dedup();
            t
        })
        .collect();
    Ranked {
        terms,
        idfs,
        df: ix.df,
        contrib,
        named,
        docs,
    }
}

impl Ranked {
    /// `(scores in candidate order, the ideal score)` of a text whose terms are `terms[k]` at
    /// the global positions `at[k]` with weights `qw[k]`, its own words being the first `own`.
    fn unit(&self, at: &[usize], qw: &[f32], own: usize) -> (Vec<f32>, f32) {
        // A CJK bigram no note holds most likely straddles two words (a sentence's bigrams do,
        // about one in two) or is a function word: it counts a quarter in the ideal, so the
        // Chinese around ASCII identifiers does not drown them.
        let sum: f32 = at
            .iter()
            .zip(qw)
            .take(own)
            .map(|(&g, q)| {
                let straddling =
                    self.df[g] == 0.0 && self.terms[g].chars().next().is_some_and(is_cjk);
                let share = if straddling { UNSEEN_CJK_SHARE } else { 1.0 };
                self.idfs[g] * q * saturate(NAME_WEIGHT) * share
            })
            .sum();
        let ideal = sum + IDEAL_PRIOR_TERMS * sum / own.max(1) as f32;
        let scores = self
            .contrib
            .iter()
            .map(|row| at.iter().zip(qw).map(|(&g, q)| q * row[g]).sum())
            .collect();
        (scores, ideal)
    }
}

/// `(scores in candidate order, the ideal score)` of the whole message.
fn scores_and_ideal(query: &str, candidates: &[Candidate]) -> (Vec<f32>, f32) {
    let analyzer = Analyzer::new();
    let (terms, qw, own) = query_terms(&analyzer, query);
    if terms.is_empty() || candidates.is_empty() {
        return (vec![0.0; candidates.len()], 0.0);
    }
    let at: Vec<usize> = (0..terms.len()).collect();
    ranked(terms, candidates).unit(&at, &qw, own)
}

/// Relevance scores of the candidates that match `query` at all: `(index into candidates,
/// score)`, best first, ties in candidate order (BM25F, see the module doc; unitless).
pub fn score(query: &str, candidates: &[Candidate]) -> Vec<(usize, f32)> {
    let (scores, _) = scores_and_ideal(query, candidates);
    let mut scored: Vec<(usize, f32)> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// The score of a note whose name holds every query term once (at average length) among these
/// candidates: what "fully about the query" scores. 0 for a query without terms.
pub fn ideal_score(query: &str, candidates: &[Candidate]) -> f32 {
    scores_and_ideal(query, candidates).1
}

/// The most clauses of one message judged on their own (a pasted log of hundreds of lines is
/// judged on its first 64 clauses and as a whole).
pub const MAX_CLAUSES: usize = 64;

/// The clauses of a message as byte ranges, in text order: it is cut after a sentence end
/// (`.`, `?`, `!` followed by white space or the end), `;`, `,` or `:` followed by white space,
/// a line break, and the CJK marks `。？！；，` (full-width forms as typed: `，` is `,`), so
/// `crates.io`, `3.12` and `paths::to_repo_path` stay whole. Ranges without a letter or digit
/// are left out; at most [`MAX_CLAUSES`].
pub fn clauses(query: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = query.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let folded = fold_width(c);
        let next_blank = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        let cut = match folded {
            '\n' | '。' | ';' => true,
            '.' | '?' | '!' | ',' | ':' => next_blank || c != folded,
            _ => false,
        };
        if cut {
            let end = i + c.len_utf8();
            out.push(start..end);
            start = end;
        }
    }
    out.push(start..query.len());
    out.retain(|r| query[r.clone()].chars().any(char::is_alphanumeric));
    out.truncate(MAX_CLAUSES);
    out
}

/// How many distinct words of a clause a candidate must hold (in any field) for the clause's
/// share to count for it: one shared word of a short clause is chance. A clause with fewer
/// tokens is not judged alone.
pub const MIN_CLAUSE_MATCHES: usize = 2;

/// The parts of a message judged on their own besides the whole: each of its [`clauses`]
/// holding at least [`MIN_CLAUSE_MATCHES`] tokens (none for a message of one clause); shorter
/// ones ("thanks,", "ok,") count only in the whole message.
fn segments(analyzer: &Analyzer, query: &str) -> Vec<std::ops::Range<usize>> {
    let parts = clauses(query);
    if parts.len() < 2 {
        return Vec::new();
    }
    let counts: Vec<usize> = parts
        .iter()
        .map(|r| analyzer.tokens(&query[r.clone()]).len())
        .collect();
    let mut out = Vec::new();
    for (i, r) in parts.iter().enumerate() {
        if counts[i] >= MIN_CLAUSE_MATCHES {
            out.push(r.clone());
        }
    }
    out
}

/// Each candidate's best share of an ideal score: the most, over the whole message and each of
/// its [`clauses`], of the candidate's score for that text divided by that text's ideal score
/// (see the module doc), in candidate order. 0 for a candidate that matches nothing; unitless
/// (a candidate whose name holds every word of the best clause once scores about 1).
pub fn best_shares(query: &str, candidates: &[Candidate]) -> Vec<f32> {
    match judged(query, candidates) {
        Some(j) => j.shares,
        None => vec![0.0; candidates.len()],
    }
}

/// A message judged against the candidates: the index of its terms (with expansions, its own
/// words being the first `own`) and each candidate's best share (see [`best_shares`]).
struct Judged {
    index: Ranked,
    own: usize,
    shares: Vec<f32>,
}

/// The message's [`Judged`]; `None` when it has no terms or there are no candidates.
fn judged(query: &str, candidates: &[Candidate]) -> Option<Judged> {
    let analyzer = Analyzer::new();
    let (terms, qw, own) = query_terms(&analyzer, query);
    if terms.is_empty() || candidates.is_empty() {
        return None;
    }
    let position: HashMap<String, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i))
        .collect();
    let index = ranked(terms, candidates);
    let mut best = vec![0.0_f32; candidates.len()];
    let mut judge = |at: &[usize], qw: &[f32], own: usize, min_matches: usize| {
        let (scores, ideal) = index.unit(at, qw, own);
        if ideal > 0.0 {
            for (d, (b, s)) in best.iter_mut().zip(scores).enumerate() {
                let matched = at[..own]
                    .iter()
                    .filter(|&&g| index.contrib[d][g] > 0.0)
                    .count();
                if matched >= min_matches {
                    *b = b.max(s / ideal);
                }
            }
        }
    };
    let all: Vec<usize> = (0..position.len()).collect();
    judge(&all, &qw, own, 0);
    for r in segments(&analyzer, query) {
        let (unit_terms, unit_qw, unit_own) = query_terms(&analyzer, &query[r]);
        // Every term of a clause is a term of the whole message (its own words and their
        // expansions are the message's).
        let at: Vec<usize> = unit_terms
            .iter()
            .filter_map(|t| position.get(t).copied())
            .collect();
        if at.len() == unit_terms.len() && unit_own > 0 {
            judge(&at, &unit_qw, unit_own, MIN_CLAUSE_MATCHES);
        }
    }
    Some(Judged {
        index,
        own,
        shares: best,
    })
}

impl Judged {
    /// Per candidate, whether it is held up by the rare-term floor: a word of the message (not
    /// an expansion) that at most [`RARE_TERM_MAX_SHARE`] of the candidates hold (by document
    /// frequency, so by IDF) is in the candidate's name or description, and the candidate holds
    /// at least [`MIN_CLAUSE_MATCHES`] words of the message in any field.
    fn rare_term_matches(&self) -> Vec<bool> {
        let index = &self.index;
        let n = index.contrib.len();
        let rare_df = (n as f32 * RARE_TERM_MAX_SHARE).max(1.0);
        (0..n)
            .map(|d| {
                let named = index.named[d].iter().any(|&g| {
                    g < self.own && index.df[g] <= rare_df && is_rare_word(&index.terms[g])
                });
                let matched = (0..self.own).filter(|&g| index.contrib[d][g] > 0.0).count();
                named && matched >= MIN_CLAUSE_MATCHES
            })
            .collect()
    }

    /// Whether candidate `d` holds a word of the message itself (not an expansion, not a bare
    /// number) in its name or description: the note is about something the message names.
    fn names_a_word(&self, d: usize) -> bool {
        self.index.named[d]
            .iter()
            .any(|&g| g < self.own && !self.index.terms[g].chars().all(|c| c.is_ascii_digit()))
    }

    /// The candidate that stands out (see [`STANDOUT_RATIO`]), if one does.
    fn standout(&self) -> Option<usize> {
        let mut order: Vec<usize> = (0..self.shares.len()).collect();
        order.sort_by(|&a, &b| self.shares[b].total_cmp(&self.shares[a]).then(a.cmp(&b)));
        let top = *order.first()?;
        let best = self.shares[top];
        let second = order.get(1).map_or(0.0, |&i| self.shares[i]);
        (best >= MIN_STANDOUT_SHARE && best >= STANDOUT_RATIO * second && self.names_a_word(top))
            .then_some(top)
    }
}

/// A note's name or description term is "rare" when at most this share of the candidates
/// (and at least one) hold it anywhere.
pub const RARE_TERM_MAX_SHARE: f32 = 0.1;

/// A token that can be a rare term: a word of three or more letters or a CJK bigram (not a
/// number, not an initialism of two letters).
fn is_rare_word(t: &str) -> bool {
    t.chars().next().is_some_and(is_cjk) && t.chars().count() > 1
        || (t.chars().count() >= 3 && t.chars().any(char::is_alphabetic))
}

/// English words that only acknowledge or steer the turn ("thanks, that works!", "ok,
/// continue", "looks good"): a message made of these and stop words asks for nothing a note
/// could answer. Lowercase, compared before stemming.
const ACK_WORDS: &[&str] = &[
    "thanks",
    "thank",
    "thx",
    "ty",
    "cheers",
    "works",
    "worked",
    "working",
    "great",
    "perfect",
    "ok",
    "okay",
    "k",
    "kk",
    "cool",
    "nice",
    "awesome",
    "excellent",
    "good",
    "fine",
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "right",
    "correct",
    "exactly",
    "lgtm",
    "continue",
    "proceed",
    "ahead",
    "sounds",
    "looks",
    "agreed",
    "alright",
    "thumbs",
    "much",
    "lot",
    "please",
    "pls",
    "wonderful",
    "brilliant",
    "fixed",
    "fantastic",
    "love",
    "it's",
    "that's",
    "now",
];

/// Chinese acknowledgements, whole: a message whose CJK text is a run of these (with the
/// sentence particles 了/啊/吧/呀/哈/嗯/的 anywhere) acknowledges.
const CJK_ACK_PHRASES: &[&str] = &[
    "谢谢",
    "多谢",
    "感谢",
    "好的",
    "好",
    "行",
    "可以",
    "没问题",
    "继续",
    "收到",
    "明白",
    "懂",
    "对",
    "是的",
    "完美",
    "不错",
    "很好",
    "太好",
    "搞定",
    "辛苦",
    "棒",
];

/// Whether `query` only acknowledges the previous turn or tells the agent to go on: every
/// word is an [`ACK_WORDS`] word or a stop word, and any CJK text is made of
/// [`CJK_ACK_PHRASES`]. Such a message selects nothing whatever the notes hold (a note saying
/// "usually works 9:00–18:00" shares "works" with "thanks, that works!"). A message with a
/// digit, a path or an identifier is never an acknowledgement.
fn is_acknowledgement(query: &str) -> bool {
    let text = query.trim().to_lowercase();
    if text.is_empty() || text.chars().count() > 80 {
        return false;
    }
    let (stops, _) = stop_sets();
    let mut words = 0;
    let mut cjk = String::new();
    for raw in text.split(|c: char| c.is_whitespace()) {
        let word: String = raw
            .chars()
            .map(fold_width)
            .filter(|c| {
                !matches!(
                    c,
                    '!' | '.' | ',' | '?' | ';' | ':' | '~' | '，' | '。' | '！' | '？' | '～'
                )
            })
            .collect();
        if word.is_empty() {
            continue;
        }
        if word.chars().any(is_cjk) {
            if word.chars().any(|c| !is_cjk(c)) {
                return false;
            }
            cjk.push_str(&word);
            continue;
        }
        if !word.chars().all(|c| c.is_alphabetic() || c == '\'') {
            return false;
        }
        if !stops.contains(word.as_str()) && !ACK_WORDS.contains(&word.as_str()) {
            return false;
        }
        words += 1;
    }
    let mut rest: &str = &cjk;
    'outer: while !rest.is_empty() {
        for p in CJK_ACK_PHRASES
            .iter()
            .copied()
            .chain(["了", "啊", "吧", "呀", "哈", "嗯", "的", "啦", "哦"])
        {
            if let Some(r) = rest.strip_prefix(p) {
                rest = r;
                continue 'outer;
            }
        }
        return false;
    }
    words > 0 || !cjk.is_empty()
}

/// The ids of at most `limit` candidates relevant to `query`, best first: those whose best share
/// of an ideal score (over the whole message and each clause, see [`clauses`]) is at least
/// [`MIN_IDEAL_SHARE`] and at least [`MIN_RELATIVE_SCORE`] of the best candidate's; ranked by
/// that share. A long or many-sentence message is judged by its best clause, so it does not
/// raise the bar for a note about one of its sentences. When none passes, the notes held up by
/// the standout or the rare-term floor (see the module doc) are selected instead; the
/// selection is cut after its biggest drop ([`DROP_RATIO`]).
pub fn select(query: &str, candidates: &[Candidate], limit: usize) -> Vec<String> {
    if is_acknowledgement(query) {
        return Vec::new();
    }
    let Some(judged) = judged(query, candidates) else {
        return Vec::new();
    };
    let shares = &judged.shares;
    let best = shares.iter().copied().fold(0.0_f32, f32::max);
    if best <= 0.0 {
        return Vec::new();
    }
    let floor = (best * MIN_RELATIVE_SCORE).max(MIN_IDEAL_SHARE);
    let mut chosen: Vec<(usize, f32)> = shares
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, s)| *s > 0.0 && *s >= floor)
        .collect();
    // The fallbacks below select a project's notes only: a user-level note is written in the
    // vocabulary of how the user works (tests, commits, shells, reviews), which many messages
    // share without being about it, so it needs the floor itself.
    if chosen.is_empty()
        && let Some(top) = judged.standout()
        && !candidates[top].user_level
    {
        chosen.push((top, shares[top]));
    }
    if chosen.is_empty() {
        chosen = judged
            .rare_term_matches()
            .into_iter()
            .zip(shares.iter().copied())
            .enumerate()
            .filter_map(|(i, (rare, s))| (rare && !candidates[i].user_level).then_some((i, s)))
            .collect();
        let top = chosen.iter().map(|c| c.1).fold(0.0_f32, f32::max);
        chosen.retain(|c| c.1 >= top * MIN_RELATIVE_SCORE);
    }
    chosen.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    cut_at_biggest_drop(&mut chosen);
    let mut ids: Vec<usize> = chosen.into_iter().map(|(i, _)| i).collect();
    put_newer_first(&mut ids, &judged.index.docs);
    ids.into_iter()
        .take(limit)
        .map(|i| candidates[i].id.clone())
        .collect()
}

/// Words that say a note is out of date ("the golang-migrate note is stale").
const STALE_WORDS: &str = "stale superseded outdated obsolete deprecated";

/// The tokens of [`STALE_WORDS`].
fn stale_words() -> &'static [String] {
    static STALE: OnceLock<Vec<String>> = OnceLock::new();
    STALE.get_or_init(|| tokenize(STALE_WORDS))
}

/// Whether a note's description holds a word of [`STALE_WORDS`].
fn speaks_of_stale(terms: &CandidateTerms) -> bool {
    terms
        .tokens(1)
        .any(|t| stale_words().iter().any(|s| s == t))
}

/// Whether the note with terms `newer` (whose description holds a word of [`STALE_WORDS`])
/// says the note with terms `older` is out of date: its description holds a word of `older`'s
/// name that its own name does not hold ("Database migrations (goose)": "…; the
/// golang-migrate note is stale" names "Database migrations (golang-migrate)").
fn says_stale(newer: &CandidateTerms, older: &CandidateTerms) -> bool {
    newer.tokens(1).any(|t| {
        t.chars().count() >= 3
            && !stale_words().iter().any(|s| s == t)
            && older.tokens(0).any(|n| n == t)
            && !newer.tokens(0).any(|n| n == t)
    })
}

/// A note that says a selected note is out of date ([`says_stale`]) is selected too and put
/// just before it: the agent reads the current fact first, and never the stale one alone.
fn put_newer_first(ids: &mut Vec<usize>, docs: &[Arc<CandidateTerms>]) {
    let sayers: Vec<usize> = (0..docs.len())
        .filter(|&n| speaks_of_stale(&docs[n]))
        .collect();
    if sayers.is_empty() {
        return;
    }
    let mut k = 0;
    while k < ids.len() {
        let older = ids[k];
        let newer = sayers
            .iter()
            .copied()
            .find(|&n| n != older && !ids[..k].contains(&n) && says_stale(&docs[n], &docs[older]));
        if let Some(n) = newer {
            ids.retain(|&i| i != n);
            let at = ids.iter().position(|&i| i == older).unwrap_or(ids.len());
            ids.insert(at, n);
            k = at + 2;
        } else {
            k += 1;
        }
    }
}

/// Cuts a selection (best first) after its biggest drop in share when the share before the
/// drop is at least [`DROP_RATIO`] times the one after: the notes below a clear break are
/// about something else than the ones above it.
fn cut_at_biggest_drop(chosen: &mut Vec<(usize, f32)>) {
    let drop = chosen
        .windows(2)
        .enumerate()
        .map(|(k, w)| (k + 1, w[0].1 / w[1].1.max(f32::MIN_POSITIVE)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    if let Some((at, ratio)) = drop
        && ratio >= DROP_RATIO
    {
        chosen.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(tokens: &[String], t: &str) -> bool {
        tokens.iter().any(|x| x == t)
    }

    #[test]
    fn mixed_script_ascii_inside_cjk_is_a_word() {
        let t = tokenize("clinicbook 的appointment表要加一个字段");
        for w in ["clinicbook", "appoint", "字段"] {
            assert!(has(&t, w), "{w} missing in {t:?}");
        }
    }

    #[test]
    fn mixed_script_cjk_inside_ascii_keeps_bigrams() {
        let t = tokenize("run the 数据库迁移 before deploy");
        for w in ["run", "数据", "据库", "迁移", "deploy"] {
            assert!(has(&t, w), "{w} missing in {t:?}");
        }
    }

    #[test]
    fn mixed_script_identifiers_with_digits_underscores_dots() {
        let t = tokenize("改一下config_v2.yaml里的python3.12路径");
        for w in [
            "config",
            "2",
            "yaml",
            "configv2yaml",
            "python",
            "3",
            "12",
            "python312",
            "路径",
        ] {
            assert!(has(&t, w), "{w} missing in {t:?}");
        }
    }

    #[test]
    fn mixed_script_full_width_forms_fold_to_ascii() {
        // Full-width letters and digits as typed with a CJK input method are the same words;
        // full-width punctuation and the ideographic space separate words.
        let wide = tokenize(
            "ｃｌｉｎｉｃｂｏｏｋ的ａｐｐｏｉｎｔｍｅｎｔ表，版本１２（ｖ２）\u{3000}ｄｅｐｌｏｙ",
        );
        let narrow = tokenize("clinicbook的appointment表,版本12(v2) deploy");
        assert_eq!(wide, narrow);
        assert!(has(&wide, "clinicbook") && has(&wide, "12") && has(&wide, "deploy"));
    }

    fn candidate(id: &str, name: &str, description: &str, body: &str) -> Candidate {
        Candidate {
            user_level: false,
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
            candidate(
                "paths.md",
                "Windows paths",
                "Backslashes in repo paths",
                "`to_repo_path` in src/paths.rs normalises them.",
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
    fn stems_and_identifiers_match() {
        check("deploying", 5, &["deploy.md"]);
        check("why does toRepoPath fail", 5, &["paths.md"]);
        check("paths::to_repo_path", 5, &["paths.md"]);
    }

    #[test]
    fn matches_chinese_by_bigrams() {
        check("怎么运行测试", 5, &["zh.md"]);
    }

    #[test]
    fn nothing_matches_nothing_selected() {
        check("kubernetes helm chart", 5, &[]);
        check("", 5, &[]);
        check("今天天气怎么样", 5, &[]);
        check("write a haiku about autumn leaves", 5, &[]);
        // Build 4: one note alone holds a word of this message in its description ("Release
        // process"): it stands out of the candidates and is selected under the floor.
        check(
            "write a haiku about autumn leaves and release it",
            5,
            &["deploy.md"],
        );
        assert!(select("tests", &[], 5).is_empty());
    }

    #[test]
    fn a_note_about_one_sentence_of_a_longer_message_is_selected() {
        // Issue 26: the second sentence alone finds the testing note; the whole message must
        // too (the first sentence's words no note holds must not raise the bar).
        check("how do I run the tests?", 5, &["testing.md"]);
        check(
            "From now on always answer briefly and keep the explanations short. Also, how do \
             I run the tests?",
            5,
            &["testing.md"],
        );
        // A rambling message: the note is about one comma-separated clause of it.
        check(
            "so there is this new colleague who joined on monday and asked me a lot of things \
             about our setup, the backslashes in repo paths break on windows, can you explain \
             why that happens and what we usually do about it",
            5,
            &["paths.md"],
        );
        // Short clauses are not judged alone: a greeting before a question about nothing.
        check(
            "thanks, good morning! write a haiku about autumn leaves",
            5,
            &[],
        );
    }

    #[test]
    fn acknowledgements_select_nothing() {
        for q in [
            "thanks, that works!",
            "ok, continue",
            "Looks good to me.",
            "perfect, thank you so much",
            "好的，谢谢！",
            "可以了，继续吧",
        ] {
            assert!(is_acknowledgement(q), "{q:?}");
        }
        for q in [
            "thanks, now how do I run the tests?",
            "ok, deploy it to staging",
            "works on linux but not on windows",
            "好的，那数据库怎么迁移？",
            "looks good, ship v2.1",
            "",
        ] {
            assert!(!is_acknowledgement(q), "{q:?}");
        }
        let notes = [Candidate {
            user_level: false,
            id: "N:user/user_timezone.md".into(),
            name: "Working hours and timezone".into(),
            description: "User is in Berlin (CET), usually works 9:00-18:00".into(),
            body: "Schedule reminders in Europe/Berlin.".into(),
        }];
        assert!(select("thanks, that works!", &notes, 5).is_empty());
        assert_eq!(
            select("when do I usually work, which hours?", &notes, 5).len(),
            1
        );
    }

    #[test]
    fn clauses_cut_at_sentence_marks_but_not_inside_values() {
        let q = "Build is green. How do we publish to crates.io, version 3.12?\n\
                 see paths::to_repo_path; 然后呢，怎么部署？好的";
        let parts: Vec<&str> = clauses(q).into_iter().map(|r| q[r].trim()).collect();
        assert_eq!(
            parts,
            [
                "Build is green.",
                "How do we publish to crates.io,",
                "version 3.12?",
                "see paths::to_repo_path;",
                "然后呢，",
                "怎么部署？",
                "好的"
            ]
        );
        assert!(clauses("?! ...").is_empty());
        let long = "word. ".repeat(MAX_CLAUSES + 10);
        assert_eq!(clauses(&long).len(), MAX_CLAUSES);
    }

    #[test]
    fn mixed_script_identifiers_count_as_words() {
        // An initialism of single letters is a word (`W&B` → `wb`), in the note and the query.
        let t = tokenize("帮我在 W&B 里对比一下这两个 run, A/B test, I/O");
        for w in ["wb", "run", "ab", "io"] {
            assert!(has(&t, w), "{w} missing in {t:?}");
        }
        let mut notes = corpus();
        notes.push(candidate(
            "tracking.md",
            "Experiment tracking",
            "Every run logs to W&B",
            "Compare runs in W&B reports, tagged with the git commit.",
        ));
        // The Chinese words around the identifiers are mostly function words and straddling
        // bigrams no note holds: they must not drown the two identifiers.
        assert_eq!(
            select("帮我在 W&B 里对比一下这两个 run", &notes, 5),
            ["tracking.md"]
        );
        assert!(select("帮我在这里对比一下这两个方案", &notes, 5).is_empty());
    }

    #[test]
    fn a_rare_word_of_a_note_name_holds_it_up_when_nothing_else_passes() {
        let q = "my colleague keeps telling me that windows is the reason our nightly job never \
                 finishes in time and the path to a fix might be somewhere in the old wiki \
                 notes from last year";
        // Below the floor on its words alone (one long clause about many things)...
        let notes = corpus();
        let (scores, ideal) = scores_and_ideal(q, &notes);
        let paths = notes.iter().position(|c| c.id == "paths.md").unwrap();
        assert!(
            scores[paths] < ideal * MIN_IDEAL_SHARE,
            "{scores:?} {ideal}"
        );
        // ...but `windows` is in its name and in no other note, and it holds `path` too.
        check(q, 5, &["paths.md"]);
        // One shared rare word alone is not enough, nor a word many notes hold.
        check(
            "is windows a good operating system for gaming, and what about its updates",
            5,
            &[],
        );
    }

    #[test]
    fn a_note_that_stands_out_is_selected_under_the_floor() {
        // Issue 26 build 4: the message shares one word with one note's description and
        // nothing with the others; its share is below the floor (most of the message is about
        // the bug, in words no note holds), but the note stands out of the candidates.
        let mut notes = corpus_with_money();
        let q = "the price shows 19.989999 instead of 19.99";
        let shares = best_shares(q, &notes);
        let money = notes.iter().position(|c| c.id == "money.md").unwrap();
        assert!(shares[money] < MIN_IDEAL_SHARE, "{shares:?}");
        check_in(q, &notes, &["money.md"]);
        // Flat weak matches stand out of nothing: two notes hold the word alike.
        notes.push(candidate(
            "pricing.md",
            "Pricing page",
            "The price table copy",
            "Prices are listed per seat.",
        ));
        check_in(q, &notes, &[]);
        // A match through an expansion or the body only is no standout either.
        check_in("what time is it in tokyo", &corpus(), &[]);
    }

    #[test]
    fn a_user_level_note_is_selected_on_the_floor_only() {
        // The standout and the rare-term cases above, with the note in the user's folder:
        // nothing is selected under the floor.
        let mut notes = corpus_with_money();
        let q = "the price shows 19.989999 instead of 19.99";
        check_in(q, &notes, &["money.md"]);
        notes.last_mut().unwrap().user_level = true;
        check_in(q, &notes, &[]);
        let q = "my colleague keeps telling me that windows is the reason our nightly job never \
                 finishes in time and the path to a fix might be somewhere in the old wiki \
                 notes from last year";
        let mut notes = corpus();
        for n in &mut notes {
            n.user_level = n.id == "paths.md";
        }
        check_in(q, &notes, &[]);
        // On the floor a user-level note is selected as any other.
        check_in("how do I run the tests?", &notes, &["testing.md"]);
        for n in &mut notes {
            n.user_level = true;
        }
        check_in("how do I run the tests?", &notes, &["testing.md"]);
    }

    /// The corpus and a note about money that one price-bug message shares a word with.
    fn corpus_with_money() -> Vec<Candidate> {
        let mut notes = corpus();
        notes.push(candidate(
            "money.md",
            "Money handling",
            "Store every price as integer cents",
            "Never use floats for amounts.",
        ));
        notes
    }

    fn check_in(query: &str, notes: &[Candidate], expected: &[&str]) {
        assert_eq!(select(query, notes, 5), expected, "query {query:?}");
    }

    #[test]
    fn a_selection_is_cut_at_its_biggest_clear_drop() {
        let mut v = vec![(0, 0.9), (1, 0.8), (2, 0.4), (3, 0.35)];
        cut_at_biggest_drop(&mut v);
        assert_eq!(v, [(0, 0.9), (1, 0.8)]);
        // No drop of DROP_RATIO: kept whole.
        let mut v = vec![(0, 0.9), (1, 0.7), (2, 0.6)];
        cut_at_biggest_drop(&mut v);
        assert_eq!(v.len(), 3);
        let mut v = vec![(0, 0.9)];
        cut_at_biggest_drop(&mut v);
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn limit_is_respected() {
        let mut many: Vec<Candidate> = (0..6)
            .map(|i| candidate(&format!("{i}.md"), "nextest", "nextest", "nextest"))
            .collect();
        many.extend((6..30).map(|i| candidate(&format!("{i}.md"), "other", "unrelated", "text")));
        assert_eq!(select("nextest", &many, 3), vec!["0.md", "1.md", "2.md"]);
    }

    #[test]
    fn tokenizer_handles_identifiers_stop_words_and_cjk() {
        assert_eq!(
            tokenize("The Tests of list_select_related 测试命令 HTTPServer"),
            vec![
                "test",
                "list",
                "select",
                "relat",
                "listselectrelated",
                "测试",
                "试命",
                "命令",
                "http",
                "server",
                "httpserver"
            ]
        );
    }

    #[test]
    fn a_note_saying_another_is_stale_comes_first() {
        let mut notes = corpus();
        notes.push(candidate(
            "migrate_old.md",
            "Database migrations (golang-migrate)",
            "Schema changes are up/down SQL files applied with golang-migrate",
            "Create with `migrate create -ext sql -dir migrations -seq add_x`.",
        ));
        notes.push(candidate(
            "migrate_goose.md",
            "Database migrations (goose)",
            "Migrations moved to goose; the golang-migrate note is stale",
            "Create with `goose create add_x sql`.",
        ));
        // The message matches the stale note best; the note saying it is stale comes first,
        // whether or not it would have been selected on its own.
        let got = select("run migrate create -ext sql for the new table", &notes, 5);
        assert_eq!(&got[..2], ["migrate_goose.md", "migrate_old.md"], "{got:?}");
        // A note without a stale word links nothing.
        let got = select("how do I run the tests?", &notes, 5);
        assert_eq!(got, ["testing.md"]);
    }

    #[test]
    fn acronyms_are_whole_and_not_stemmed() {
        // Mixed-case acronyms are not cut into single letters, plural acronyms are the
        // acronym, and a short capitalised name is not stemmed (`AWS` is not `aw`).
        assert_eq!(tokenize("IoU mIoU iOS"), vec!["iou", "miou", "ios"]);
        assert_eq!(
            tokenize("GPUs APIs PRs AWS"),
            vec!["gpu", "api", "pr", "aws"]
        );
        assert_eq!(tokenize("GPU api"), vec!["gpu", "api"]);
        // camelCase, HTTPServer and initialisms as before.
        assert_eq!(tokenize("onPress"), vec!["press", "onpress"]);
        assert_eq!(tokenize("W&B"), vec!["wb"]);
    }

    #[test]
    fn terms_survive_a_round_trip_and_rank_the_same() {
        let notes = corpus();
        let terms: Vec<CandidateTerms> = notes.iter().map(CandidateTerms::of).collect();
        let json = serde_json::to_string(&terms).unwrap();
        let back: Vec<CandidateTerms> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, terms);
        // Terms handed back to the memo are the ones a fresh analysis gives, and the selection
        // over remembered terms is the selection over fresh ones.
        let before = select("how do I run the tests?", &notes, 5);
        for (c, t) in notes.iter().zip(back) {
            remember_terms(c, Arc::new(t));
            assert_eq!(*terms_of(c), CandidateTerms::of(c));
        }
        assert_eq!(select("how do I run the tests?", &notes, 5), before);
        // A changed text is analysed again, not served from the memo.
        let mut changed = notes[0].clone();
        changed.body.push_str(" deployment");
        assert_eq!(*terms_of(&changed), CandidateTerms::of(&changed));
        assert_ne!(*terms_of(&changed), *terms_of(&notes[0]));
    }
}
