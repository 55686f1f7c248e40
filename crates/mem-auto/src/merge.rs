//! Merging extracted entries into a file without a model (offline): normalised and
//! near-duplicate entries are one entry, a correction ("X, not Y") replaces the entry stating Y,
//! one-off details are not memories; then the token cap: consolidate near-duplicates, evict the
//! least recently confirmed entries, never one written by this change.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use mem_core::{Encoding, TokenCounter};
use mem_instructions::Scope;
use mem_llm::MemoryCategory;
use serde::Serialize;

use crate::id::{EntryId, normalise};
use crate::store::{OpenFile, ser_id, ser_scope};

/// One entry in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Its id.
    #[serde(serialize_with = "ser_id")]
    pub id: EntryId,
    /// Its section.
    pub category: MemoryCategory,
    /// Its text.
    pub text: String,
}

/// An entry replaced by a newer one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Update {
    /// The entry before.
    pub old: Change,
    /// The entry after.
    pub new: Change,
}

/// What one change did to one `memories.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// Which file.
    #[serde(serialize_with = "ser_scope")]
    pub scope: Scope,
    /// Its path (as looked at).
    pub path: std::path::PathBuf,
    /// New entries.
    pub added: Vec<Change>,
    /// Entries stated again (already there, or a near-duplicate of one): kept, confirmed now.
    pub confirmed: Vec<Change>,
    /// Entries whose text was replaced.
    pub updated: Vec<Update>,
    /// Entries removed because a correction superseded them (or a model said DELETE).
    pub removed: Vec<Change>,
    /// Near-duplicates merged away to get under the cap.
    pub consolidated: Vec<Change>,
    /// Entries evicted (least recently confirmed first) to get under the cap.
    pub evicted: Vec<Change>,
    /// Tokens of the file after the change (o200k_base).
    pub tokens: usize,
    /// The cap in tokens.
    pub cap_tokens: usize,
}

impl FileReport {
    pub(crate) fn new(file: &OpenFile, cap_tokens: usize) -> Self {
        FileReport {
            scope: file.scope,
            path: file.path.clone(),
            added: Vec::new(),
            confirmed: Vec::new(),
            updated: Vec::new(),
            removed: Vec::new(),
            consolidated: Vec::new(),
            evicted: Vec::new(),
            tokens: 0,
            cap_tokens,
        }
    }

    /// `true` when the file's entries changed (added, updated, removed, consolidated, evicted).
    pub fn changed(&self) -> bool {
        !(self.added.is_empty()
            && self.updated.is_empty()
            && self.removed.is_empty()
            && self.consolidated.is_empty()
            && self.evicted.is_empty())
    }

    /// `true` when the file is still over its cap (every older entry was evicted and what this
    /// change wrote, or what a person wrote outside the sections, is larger than the cap).
    pub fn over_cap(&self) -> bool {
        self.tokens > self.cap_tokens
    }
}

/// Words of a text for similarity: lowercase ASCII alphanumeric runs, and each CJK character.
fn tokens(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.insert(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() && !c.is_ascii() {
            out.insert(c.to_string());
        }
    }
    if !word.is_empty() {
        out.insert(word);
    }
    out
}

/// Jaccard similarity of the word sets of `a` and `b` (0.0–1.0).
pub fn similarity(a: &str, b: &str) -> f64 {
    set_similarity(&tokens(a), &tokens(b))
}

fn set_similarity(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(b).count();
    common as f64 / (a.len() + b.len() - common) as f64
}

/// The words of texts ([`tokens`]'s, exactly) numbered, for comparing many texts: a text's word
/// set is its sorted, distinct word numbers.
#[derive(Debug, Default)]
struct Words {
    ids: std::collections::HashMap<String, u32>,
}

impl Words {
    fn id(&mut self, word: &str) -> u32 {
        if let Some(id) = self.ids.get(word) {
            return *id;
        }
        let id = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        self.ids.insert(word.to_owned(), id);
        id
    }

    /// The set [`tokens`] gives for `text`, as sorted word numbers.
    fn set(&mut self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        let lower = text.to_lowercase();
        let mut start: Option<usize> = None;
        for (i, c) in lower.char_indices() {
            if c.is_ascii_alphanumeric() || c == '_' {
                start.get_or_insert(i);
                continue;
            }
            if let Some(s) = start.take() {
                out.push(self.id(&lower[s..i]));
            }
            if c.is_alphanumeric() && !c.is_ascii() {
                out.push(self.id(&lower[i..i + c.len_utf8()]));
            }
        }
        if let Some(s) = start {
            out.push(self.id(&lower[s..]));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// [`set_similarity`] of two sorted, distinct word-number sets.
fn sorted_similarity(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

/// Two entries at or above this similarity say the same thing.
pub const NEAR_DUPLICATE: f64 = 0.8;

/// `true` when `a` and `b` are the same entry in other words: the same normalised text, or a
/// word-set similarity of at least [`NEAR_DUPLICATE`].
pub fn near_duplicate(a: &str, b: &str) -> bool {
    normalise(a) == normalise(b) || similarity(a, b) >= NEAR_DUPLICATE
}

/// What a correction says is wrong: `Y` of "X, not Y", "not Y but X", "X instead of Y",
/// "X rather than Y", "X 而不是 Y", "X 而非 Y", "不是 Y，是 X" (at most 4 words / 12 CJK
/// characters, lowercase). `None` when the text has no such form.
pub fn corrected_term(text: &str) -> Option<String> {
    correction_sides(text).map(|(term, _)| term)
}

/// Openers of a correction that say nothing of what is right.
const CORRECTION_OPENERS: &[&str] = &[
    "no,",
    "no ",
    "nope,",
    "actually,",
    "actually ",
    "wait,",
    "sorry,",
    "oh,",
    "well,",
    "不对，",
    "不对,",
    "其实",
];

/// A correction read as its two sides: the term it says is wrong ([`corrected_term`]) and the
/// lowercase words saying what is right instead (`X`, its openers "no," / "actually," / 不对，
/// removed; for "not Y but X", what follows the first comma or "but", without its first word,
/// the new value).
fn correction_sides(text: &str) -> Option<(String, String)> {
    let lower = text.to_lowercase();
    let stop = |s: &str| -> String {
        // A `.` inside a word (`3.11`, `api.acme.io`) does not end the term.
        let end = s
            .char_indices()
            .find(|&(i, c)| {
                matches!(
                    c,
                    ',' | ';'
                        | '!'
                        | '?'
                        | '，'
                        | '。'
                        | '；'
                        | '！'
                        | '？'
                        | '、'
                        | ')'
                        | '（'
                        | '('
                ) || (c == '.'
                    && s[i + 1..]
                        .chars()
                        .next()
                        .is_none_or(|n| n.is_whitespace() || n == '`'))
            })
            .map_or(s.len(), |(i, _)| i);
        let mut t = s[..end].trim();
        for cut in [" but ", " as ", " for ", " in ", " because ", "，", " - "] {
            if let Some(p) = t.find(cut) {
                t = t[..p].trim();
            }
        }
        t.trim_start_matches("the ")
            .trim_start_matches("a ")
            .trim_start_matches("an ")
            .trim_matches(['`', '"', '\'', '“', '”'])
            .trim()
            .to_owned()
    };
    let mut found = None;
    for marker in [
        ", not ",
        "(not ",
        " instead of ",
        " rather than ",
        "而不是",
        "而非",
    ] {
        if let Some(p) = lower.find(marker) {
            found = Some((stop(&lower[p + marker.len()..]), lower[..p].to_owned()));
            break;
        }
    }
    if found.is_none() {
        for start in ["not ", "不是", "并不是"] {
            let body = lower.trim_start_matches(['-', ' ', '*']);
            let body = body
                .strip_prefix("no, ")
                .or_else(|| body.strip_prefix("actually, "))
                .or_else(|| body.strip_prefix("不对，"))
                .or_else(|| body.strip_prefix("其实"))
                .unwrap_or(body);
            if let Some(rest) = body.strip_prefix(start) {
                // "not main but develop is the default branch": the right side's first word
                // is the new value, not what the sentence is about.
                let right = [", ", "，", " but "]
                    .iter()
                    .filter_map(|m| rest.find(m).map(|p| &rest[p + m.len()..]))
                    .next()
                    .unwrap_or("");
                let right = right
                    .trim_start()
                    .split_once(' ')
                    .map_or("", |(_, after)| after);
                found = Some((stop(rest), right.to_owned()));
                break;
            }
        }
    }
    let (term, right) = found?;
    let words = term.split_whitespace().count();
    let cjk = term.chars().filter(|c| !c.is_ascii()).count();
    let mut right = right.trim_start_matches(['-', ' ', '*']).trim();
    while let Some(rest) = CORRECTION_OPENERS
        .iter()
        .find_map(|o| right.strip_prefix(o))
    {
        right = rest.trim_start();
    }
    let right = right.trim_start_matches("是").trim().to_owned();
    // "not npm, not yarn, pnpm": the right side is itself a negation; which is which is not known.
    if right.starts_with("not ") || right.starts_with("不是") {
        return None;
    }
    (!term.is_empty() && words <= 4 && cjk <= 12).then_some((term, right))
}

/// `true` when `entry` states `term` (as a whole word, or as a CJK substring) and does not
/// itself negate it.
fn states(entry: &str, term: &str) -> bool {
    let lower = entry.to_lowercase();
    let Some(pos) = find_word(&lower, term) else {
        return false;
    };
    let before = &lower[..pos];
    // "Secrets live in Vault, never in the repo": a negation earlier in the term's clause.
    let clause = &before[before
        .rfind([',', ';', '.', '，', '；', '。'])
        .map_or(0, |p| p + 1)..];
    let negated_clause = clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|w| matches!(w, "never" | "not" | "no" | "don't" | "without" | "avoid"));
    let negated = negated_clause
        || [
            "not ",
            "instead of ",
            "rather than ",
            "而不是",
            "而非",
            "不是",
            "don't use ",
            "never ",
        ]
        .iter()
        .any(|m| before.trim_end().ends_with(m.trim_end()));
    !negated && corrected_term(entry).as_deref() != Some(term)
}

fn find_word(haystack: &str, needle: &str) -> Option<usize> {
    let ascii = needle.is_ascii();
    let mut from = 0;
    while let Some(rel) = haystack[from..].find(needle) {
        let at = from + rel;
        let end = at + needle.len();
        // `master` is not in `master-data`, nor `docker` in `docker_compose`.
        let part_of_word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
        let ok_before = !ascii
            || haystack[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !part_of_word(c));
        let ok_after = !ascii
            || haystack[end..]
                .chars()
                .next()
                .is_none_or(|c| !part_of_word(c));
        if ok_before && ok_after {
            return Some(at);
        }
        from = at + needle.len().max(1);
    }
    None
}

/// The lowercase text of `text` after the first `term` in it ("" when it has none).
fn after_term<'a>(text: &'a str, term: &str) -> &'a str {
    // Lowercasing may change byte lengths: find the term in a lowercase copy only when the
    // lengths agree, else read nothing after it.
    let lower = text.to_lowercase();
    if lower.len() != text.len() {
        return "";
    }
    lower
        .find(term)
        .and_then(|p| text.get(p + term.len()..))
        .unwrap_or("")
}

/// Removes `superseded` entries from `file` (and their dates), each reported as removed.
fn remove_superseded(
    file: &mut OpenFile,
    report: &mut FileReport,
    superseded: Vec<crate::doc::Entry>,
) {
    for e in superseded {
        if file.doc.remove(e.id).is_some() {
            file.meta.entries.remove(&e.id.to_string());
            report.removed.push(Change {
                id: e.id,
                category: e.category,
                text: e.text,
            });
        }
    }
}

/// One extracted entry, cleaned (one line, secrets removed), ready to merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its category.
    pub category: MemoryCategory,
    /// Its text.
    pub text: String,
}

/// A model's change to an entry of this file (from its UPDATE / DELETE answer, the integer id
/// already mapped back to the entry's [`EntryId`] as it was read for the prompt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChange {
    /// The entry as the model saw it.
    pub id: EntryId,
    /// The id the model used (for messages).
    pub model_id: u32,
    /// `Some(new text)` (cleaned) for an UPDATE, `None` for a DELETE.
    pub text: Option<String>,
}

/// Merges `candidates` (this file's categories) into `file`, applies every correction of this
/// extraction (`corrections`, whichever file they go to) to the entries that state what they
/// correct, then enforces the cap. The entries written here are never evicted.
pub fn merge_offline(
    file: &mut OpenFile,
    candidates: &[Candidate],
    corrections: &[String],
    now: DateTime<Utc>,
    cap_tokens: usize,
    style: crate::HeadingStyle,
) -> FileReport {
    merge_with_changes(file, &[], candidates, corrections, now, cap_tokens, style).0
}

/// [`merge_offline`] after a model's UPDATE / DELETE `changes` to this file's entries (applied
/// first, to the file as it is on disk now). A change whose entry is no longer there (edited
/// by hand or by another process since the prompt was built) is not applied: the second value
/// lists such changes, described for the user. An UPDATE to a text another entry already has
/// removes the entry and confirms the other. Updated entries are never evicted by this change.
pub fn merge_with_changes(
    file: &mut OpenFile,
    changes: &[ModelChange],
    candidates: &[Candidate],
    corrections: &[String],
    now: DateTime<Utc>,
    cap_tokens: usize,
    style: crate::HeadingStyle,
) -> (FileReport, Vec<String>) {
    let mut report = FileReport::new(file, cap_tokens);
    file.meta.sync(&file.doc, now);
    let mut protected: HashSet<EntryId> = HashSet::new();
    let mut skipped = Vec::new();

    for change in changes {
        let Some(old) = file.doc.get(change.id) else {
            skipped.push(format!(
                "{} of id {} ({}): the entry changed since the prompt was built; not applied",
                if change.text.is_some() {
                    "UPDATE"
                } else {
                    "DELETE"
                },
                change.model_id,
                change.id
            ));
            continue;
        };
        let old_change = Change {
            id: old.id,
            category: old.category,
            text: old.text.clone(),
        };
        match &change.text {
            None => {
                file.doc.remove(old.id);
                file.meta.entries.remove(&old.id.to_string());
                report.removed.push(old_change);
            }
            Some(text) => {
                let new_id = EntryId::of(text);
                if new_id == old.id {
                    // The same normalised text: only confirmed.
                    file.meta.confirm(old.id, now);
                    protected.insert(old.id);
                    continue;
                }
                if let Some(same) = file.doc.get(new_id) {
                    file.doc.remove(old.id);
                    file.meta.entries.remove(&old.id.to_string());
                    file.meta.confirm(same.id, now);
                    protected.insert(same.id);
                    report.removed.push(old_change);
                    continue;
                }
                let Some(new_id) = file.doc.replace(old.id, text) else {
                    continue;
                };
                let added = file.meta.dates(old.id).map(|d| d.added).unwrap_or(now);
                file.meta.entries.remove(&old.id.to_string());
                file.meta.entries.insert(
                    new_id.to_string(),
                    crate::store::EntryDates {
                        added,
                        confirmed: now,
                    },
                );
                protected.insert(new_id);
                report.updated.push(Update {
                    old: old_change,
                    new: Change {
                        id: new_id,
                        category: old.category,
                        text: crate::doc::one_line(text),
                    },
                });
            }
        }
    }

    // Corrections first: the entries stating what is corrected go.
    for correction in corrections {
        let Some((term, right)) = correction_sides(correction) else {
            continue;
        };
        let tail = after_term(correction, &term);
        let said = normalise(correction);
        let superseded: Vec<_> = file
            .doc
            .entries()
            .into_iter()
            .filter(|e| {
                normalise(&e.text) != said
                    && states(&e.text, &term)
                    && crate::retire::correction_supersedes(&right, tail, &e.text, &term)
            })
            .collect();
        remove_superseded(file, &mut report, superseded);
    }

    // Retirements next: an entry stating a value that a new entry of this file says is no
    // longer used ("the dev server isn't on 8000 anymore"), or giving a key the new entry gives
    // another number ("minSdk is 24" / "minSdk went up to 26"), goes when the two are about the
    // same thing (crate::retire).
    for candidate in candidates {
        let terms = crate::retire::retired_terms(&candidate.text);
        let keyed = crate::retire::KeyedChange::of(&candidate.text);
        let superseded: Vec<_> = file
            .doc
            .entries()
            .into_iter()
            .filter(|e| !near_duplicate(&e.text, &candidate.text))
            .filter(|e| {
                terms.iter().any(|term| {
                    states(&e.text, term)
                        && crate::retire::shares_topic(&e.text, &candidate.text, term)
                        && !crate::retire::other_subject(&candidate.text, &e.text, term)
                        && !crate::retire::narrower_after(
                            after_term(&candidate.text, term),
                            &e.text,
                        )
                        && !crate::retire::retired_terms(&e.text).contains(term)
                }) || keyed.as_ref().is_some_and(|k| k.replaces(&e.text))
            })
            .collect();
        remove_superseded(file, &mut report, superseded);
    }

    // Each entry's normalised text and word set computed once for all candidates.
    let mut words = Words::default();
    let mut existing: Vec<(crate::doc::Entry, String, Vec<u32>)> = file
        .doc
        .entries()
        .into_iter()
        .map(|e| {
            let n = normalise(&e.text);
            let t = words.set(&e.text);
            (e, n, t)
        })
        .collect();
    for candidate in candidates {
        let (norm, set) = (normalise(&candidate.text), words.set(&candidate.text));
        if let Some((same, _, _)) = existing
            .iter()
            .find(|(_, n, t)| *n == norm || sorted_similarity(t, &set) >= NEAR_DUPLICATE)
        {
            file.meta.confirm(same.id, now);
            protected.insert(same.id);
            if !report.confirmed.iter().any(|c| c.id == same.id) {
                report.confirmed.push(Change {
                    id: same.id,
                    category: same.category,
                    text: same.text.clone(),
                });
            }
            continue;
        }
        let id = file.doc.add(candidate.category, &candidate.text, style);
        file.meta.confirm(id, now);
        protected.insert(id);
        let text = crate::doc::one_line(&candidate.text);
        existing.push((
            crate::doc::Entry {
                id,
                category: candidate.category,
                text: text.clone(),
                line: 0,
            },
            norm,
            set,
        ));
        report.added.push(Change {
            id,
            category: candidate.category,
            text,
        });
    }
    enforce_cap(file, &protected, &mut report);
    (report, skipped)
}

/// Tokens of a text for the cap (o200k_base).
pub fn count_tokens(text: &str) -> usize {
    TokenCounter::new(Encoding::O200kBase).count(text)
}

/// Where a text may be cut so that the tokens of the pieces add up to the tokens of the whole:
/// right after a `\n` that is followed by a bullet marker (`-`, `*`, `+`), i.e. before each
/// entry line. The byte-pair encoding counts each pre-token of o200k_base's split pattern on its
/// own, and no pre-token runs from a line break into a following character that is neither
/// whitespace nor `/` (only a punctuation run's `[\r\n/]*` tail and the whitespace patterns
/// hold a `\n`, and none of them takes a `-`, `*` or `+`); the split restarts there exactly as
/// on a text starting with that line.
fn entry_chunks(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        while i + 1 < bytes.len() {
            let at = i;
            i += 1;
            if bytes[at] == b'\n' && matches!(bytes[at + 1], b'-' | b'*' | b'+') && at + 1 > start {
                let chunk = &text[start..=at];
                start = at + 1;
                return Some(chunk);
            }
        }
        let chunk = &text[start..];
        start = bytes.len();
        Some(chunk)
    })
}

/// Token counts of a file as it changes during one write: the text is cut before each entry
/// line ([`entry_chunks`]) and each piece is counted once, so after a removal only the piece
/// that changed is counted again. The sum is the count of the whole text, exactly.
struct TokenMemo {
    counter: TokenCounter,
    pieces: std::collections::HashMap<String, usize>,
}

impl TokenMemo {
    fn new() -> Self {
        TokenMemo {
            counter: TokenCounter::new(Encoding::O200kBase),
            pieces: std::collections::HashMap::new(),
        }
    }

    /// Tokens of `text` (o200k_base), as [`count_tokens`] gives them.
    fn count(&mut self, text: &str) -> usize {
        let mut total = 0;
        for chunk in entry_chunks(text) {
            total += match self.pieces.get(chunk) {
                Some(n) => *n,
                None => {
                    let n = self.counter.count(chunk);
                    self.pieces.insert(chunk.to_owned(), n);
                    n
                }
            };
        }
        total
    }
}

/// Every pair `(i, j)`, `i < j`, of entries of one section that are near-duplicates (the same
/// normalised text, or word sets with a Jaccard similarity of at least [`NEAR_DUPLICATE`]), in
/// ascending order.
///
/// Not every pair is compared: by prefix filtering (Chaudhuri et al. 2006; Bayardo et al.,
/// "Scaling up all pairs similarity search", 2007), with each word set ordered rarest word
/// first, two sets with a Jaccard similarity of at least `t` share a word among the first
/// `|A| − ⌈t·|A|⌉ + 1` words of each; only pairs sharing such a word are compared, exactly.
fn near_duplicate_pairs(
    entries: &[crate::doc::Entry],
    norms: &[String],
    sets: &[Vec<u32>],
) -> Vec<(usize, usize)> {
    use std::collections::{BTreeSet, HashMap};
    let mut pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
    let same_section = |i: usize, j: usize| entries[i].category == entries[j].category;
    // The same normalised text (whatever the word sets, which may be empty).
    let mut by_norm: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in norms.iter().enumerate() {
        by_norm.entry(n.as_str()).or_default().push(i);
    }
    for group in by_norm.values().filter(|g| g.len() > 1) {
        for (x, &i) in group.iter().enumerate() {
            for &j in &group[x + 1..] {
                if same_section(i, j) {
                    pairs.insert((i, j));
                }
            }
        }
    }
    // Word sets: candidates by prefix, then the exact similarity. The global order: fewest
    // entries holding the word first, then the word's number.
    let words = sets.iter().flatten().max().map_or(0, |m| *m as usize + 1);
    let mut df = vec![0usize; words];
    for w in sets.iter().flatten() {
        df[*w as usize] += 1;
    }
    let mut index: Vec<Vec<usize>> = vec![Vec::new(); words];
    let mut candidates: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut ordered: Vec<u32> = Vec::new();
    for (j, set) in sets.iter().enumerate() {
        if set.is_empty() {
            continue;
        }
        ordered.clear();
        ordered.extend_from_slice(set);
        ordered.sort_unstable_by_key(|w| (df[*w as usize], *w));
        // At least ⌈t·|A|⌉ words in common (rounded down a hair against floating point: a
        // longer prefix only adds candidates).
        let need = ((NEAR_DUPLICATE * ordered.len() as f64) - 1e-9)
            .ceil()
            .max(1.0) as usize;
        let prefix = (ordered.len() + 1).saturating_sub(need).min(ordered.len());
        for w in &ordered[..prefix] {
            let seen = &mut index[*w as usize];
            for &i in seen.iter() {
                if same_section(i, j) {
                    candidates.insert((i, j));
                }
            }
            seen.push(j);
        }
    }
    for (i, j) in candidates {
        if sorted_similarity(&sets[i], &sets[j]) >= NEAR_DUPLICATE {
            pairs.insert((i, j));
        }
    }
    pairs.into_iter().collect()
}

/// Consolidates then evicts until the file is within `report.cap_tokens`; `protected` entries
/// (written by this change) are never removed.
pub(crate) fn enforce_cap(
    file: &mut OpenFile,
    protected: &HashSet<EntryId>,
    report: &mut FileReport,
) {
    let cap = report.cap_tokens;
    let mut memo = TokenMemo::new();
    report.tokens = memo.count(&file.doc.render());
    if report.tokens <= cap {
        return;
    }
    // 1. Consolidate: of two near-duplicates in a section, the less recently confirmed goes.
    let entries = file.doc.entries();
    let dates = file.meta.clone();
    let confirmed = |id: EntryId| dates.dates(id).map(|d| d.confirmed);
    let mut gone: HashSet<EntryId> = HashSet::new();
    let mut words = Words::default();
    let sets: Vec<Vec<u32>> = entries.iter().map(|e| words.set(&e.text)).collect();
    let norms: Vec<String> = entries.iter().map(|e| normalise(&e.text)).collect();
    // Only the pairs that are near-duplicates do anything below, taken in the order of a
    // loop over every pair (i < j), so the outcome is that loop's.
    for (i, j) in near_duplicate_pairs(&entries, &norms, &sets) {
        let (a, b) = (&entries[i], &entries[j]);
        if gone.contains(&a.id) || gone.contains(&b.id) {
            continue;
        }
        // Later in the file wins a tie: it was written after.
        let drop = if confirmed(a.id) > confirmed(b.id) {
            b
        } else {
            a
        };
        if protected.contains(&drop.id) {
            continue;
        }
        gone.insert(drop.id);
        report.consolidated.push(Change {
            id: drop.id,
            category: drop.category,
            text: drop.text.clone(),
        });
    }
    for id in &gone {
        file.doc.remove(*id);
        file.meta.entries.remove(&id.to_string());
    }
    report.tokens = memo.count(&file.doc.render());
    // 2. Evict the least recently confirmed (ties: earlier in the file) until within the cap.
    let mut order: Vec<_> = file
        .doc
        .entries()
        .into_iter()
        .filter(|e| !protected.contains(&e.id))
        .map(|e| (confirmed(e.id), e.line, e))
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    // Each entry's line counted once; the file is recounted exactly when the estimate fits.
    let mut estimate = report.tokens;
    for (_, _, e) in order {
        if estimate <= cap {
            report.tokens = memo.count(&file.doc.render());
            if report.tokens <= cap {
                break;
            }
            estimate = report.tokens;
        }
        let line_tokens = memo.counter.count(&format!("- {}\n", e.text));
        file.doc.remove(e.id);
        file.meta.entries.remove(&e.id.to_string());
        estimate = estimate.saturating_sub(line_tokens);
        report.evicted.push(Change {
            id: e.id,
            category: e.category,
            text: e.text,
        });
    }
    report.tokens = memo.count(&file.doc.render());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrected_terms() {
        let check =
            |t: &str, want: Option<&str>| assert_eq!(corrected_term(t).as_deref(), want, "{t}");
        check("Use pnpm, not npm.", Some("npm"));
        check("The project is Python, not Go", Some("go"));
        check("No, use pnpm instead of npm", Some("npm"));
        check("项目实际是 Python 而非 Go", Some("go"));
        check("不对，不是 MySQL，是 PostgreSQL", Some("mysql"));
        check("Always use snake_case", None);
        check("Use vitest rather than jest for unit tests", Some("jest"));
    }

    #[test]
    fn states_a_term_unless_negated() {
        assert!(states("Package manager: npm", "npm"));
        assert!(!states("Use pnpm, not npm", "npm"));
        assert!(!states("Run npmx", "npm"));
        assert!(states("项目用 Go 写的", "go"));
    }

    #[test]
    fn similarity_of_rewordings() {
        assert!(near_duplicate("Always use pnpm.", "always use pnpm"));
        assert!(
            similarity("Tests live in tests/unit", "Tests live in tests/unit/") >= NEAR_DUPLICATE
        );
        assert!(!near_duplicate("Always use pnpm", "Never use npm"));
    }

    /// A small deterministic generator (xorshift) for the property tests below.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[(self.next() % from.len() as u64) as usize]
        }
    }

    #[test]
    fn token_pieces_add_up_to_the_whole_text() {
        let mut texts: Vec<String> = vec![
            "# Memories\n\n### 用户偏好\n- 变量命名用 snake_case\n  (since 2024)\n* commit 用英文\n".into(),
            "- a.\n\n- b\n".into(),
            ".\n-x\n--\n---\n".into(),
            " \n- y \n\n\n+ z\r\n- w\r\n".into(),
            "path/\n/x\n- y/\n- /z\n".into(),
            "-\n-\n-".into(),
            "\n- leading".into(),
            String::new(),
        ];
        let pieces = [
            "\n",
            "\r\n",
            " ",
            "  ",
            "\t",
            "-",
            "- ",
            "* ",
            "+ ",
            "/",
            ".",
            ",",
            "!",
            "'s",
            "word",
            "Rule",
            "42",
            "1234",
            "中文",
            "测试",
            "é",
            "`code`",
            "https://x.dev/a",
            "###",
            "\n\n",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..400 {
            let n = (rng.next() % 60) as usize;
            texts.push((0..n).map(|_| rng.pick(&pieces)).collect());
        }
        for text in &texts {
            let mut memo = TokenMemo::new();
            assert_eq!(memo.count(text), count_tokens(text), "{text:?}");
            // Counted again from the pieces already known: the same.
            assert_eq!(memo.count(text), count_tokens(text), "{text:?}");
            assert_eq!(entry_chunks(text).collect::<String>(), *text);
        }
    }

    #[test]
    fn near_duplicate_pairs_are_those_of_every_pair_compared() {
        let words = [
            "use",
            "pnpm",
            "npm",
            "the",
            "tests",
            "live",
            "in",
            "unit",
            "run",
            "clippy",
            "always",
            "never",
            "python",
            "go",
            "中",
            "文",
            "deploy",
            "main",
            "İstanbul",
            "Été",
            "a_b",
            "v2.1",
            "--",
            "。",
        ];
        let categories = [MemoryCategory::Preference, MemoryCategory::Project];
        let mut rng = Rng(12345);
        for _ in 0..60 {
            let n = 2 + (rng.next() % 40) as usize;
            let entries: Vec<crate::doc::Entry> = (0..n)
                .map(|k| {
                    let len = (rng.next() % 7) as usize;
                    let text: Vec<&str> = (0..len).map(|_| rng.pick(&words)).collect();
                    let text = text.join(if rng.next().is_multiple_of(2) {
                        " "
                    } else {
                        "  "
                    });
                    crate::doc::Entry {
                        id: EntryId::of(&format!("{k}{text}")),
                        category: categories[(rng.next() % 2) as usize],
                        text,
                        line: k + 1,
                    }
                })
                .collect();
            let hashed: Vec<HashSet<String>> = entries.iter().map(|e| tokens(&e.text)).collect();
            let mut numbered = Words::default();
            let sets: Vec<Vec<u32>> = entries.iter().map(|e| numbered.set(&e.text)).collect();
            let norms: Vec<String> = entries.iter().map(|e| normalise(&e.text)).collect();
            let mut every = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    if entries[i].category == entries[j].category
                        && (norms[i] == norms[j]
                            || set_similarity(&hashed[i], &hashed[j]) >= NEAR_DUPLICATE)
                    {
                        every.push((i, j));
                    }
                }
            }
            assert_eq!(near_duplicate_pairs(&entries, &norms, &sets), every);
            for i in 0..n {
                assert_eq!(sets[i].len(), hashed[i].len());
                for j in 0..n {
                    assert_eq!(
                        sorted_similarity(&sets[i], &sets[j]),
                        set_similarity(&hashed[i], &hashed[j])
                    );
                }
            }
        }
    }
}
