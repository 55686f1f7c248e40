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
    let lower = text.to_lowercase();
    let stop = |s: &str| -> String {
        let end = s
            .find([
                ',', '.', ';', '!', '?', '，', '。', '；', '！', '？', '、', ')', '（', '(',
            ])
            .unwrap_or(s.len());
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
            found = Some(stop(&lower[p + marker.len()..]));
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
                found = Some(stop(rest));
                break;
            }
        }
    }
    let term = found?;
    let words = term.split_whitespace().count();
    let cjk = term.chars().filter(|c| !c.is_ascii()).count();
    (!term.is_empty() && words <= 4 && cjk <= 12).then_some(term)
}

/// `true` when `entry` states `term` (as a whole word, or as a CJK substring) and does not
/// itself negate it.
fn states(entry: &str, term: &str) -> bool {
    let lower = entry.to_lowercase();
    let Some(pos) = find_word(&lower, term) else {
        return false;
    };
    let before = &lower[..pos];
    let negated = [
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
        let ok_before = !ascii
            || haystack[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
        let ok_after = !ascii
            || haystack[end..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
        if ok_before && ok_after {
            return Some(at);
        }
        from = at + needle.len().max(1);
    }
    None
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
        let Some(term) = corrected_term(correction) else {
            continue;
        };
        let superseded: Vec<_> = file
            .doc
            .entries()
            .into_iter()
            .filter(|e| normalise(&e.text) != normalise(correction) && states(&e.text, &term))
            .collect();
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

    // Each entry's normalised text and word set computed once for all candidates.
    let mut existing: Vec<(crate::doc::Entry, String, HashSet<String>)> = file
        .doc
        .entries()
        .into_iter()
        .map(|e| {
            let n = normalise(&e.text);
            let t = tokens(&e.text);
            (e, n, t)
        })
        .collect();
    for candidate in candidates {
        let (norm, set) = (normalise(&candidate.text), tokens(&candidate.text));
        if let Some((same, _, _)) = existing
            .iter()
            .find(|(_, n, t)| *n == norm || set_similarity(t, &set) >= NEAR_DUPLICATE)
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

/// Consolidates then evicts until the file is within `report.cap_tokens`; `protected` entries
/// (written by this change) are never removed.
pub(crate) fn enforce_cap(
    file: &mut OpenFile,
    protected: &HashSet<EntryId>,
    report: &mut FileReport,
) {
    let cap = report.cap_tokens;
    report.tokens = count_tokens(&file.doc.render());
    if report.tokens <= cap {
        return;
    }
    // 1. Consolidate: of two near-duplicates in a section, the less recently confirmed goes.
    let entries = file.doc.entries();
    let dates = file.meta.clone();
    let confirmed = |id: EntryId| dates.dates(id).map(|d| d.confirmed);
    let mut gone: HashSet<EntryId> = HashSet::new();
    let sets: Vec<HashSet<String>> = entries.iter().map(|e| tokens(&e.text)).collect();
    let norms: Vec<String> = entries.iter().map(|e| normalise(&e.text)).collect();
    for (i, a) in entries.iter().enumerate() {
        for (j, b) in entries.iter().enumerate().skip(i + 1) {
            if a.category != b.category || gone.contains(&a.id) || gone.contains(&b.id) {
                continue;
            }
            if norms[i] == norms[j] || set_similarity(&sets[i], &sets[j]) >= NEAR_DUPLICATE {
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
        }
    }
    for id in &gone {
        file.doc.remove(*id);
        file.meta.entries.remove(&id.to_string());
    }
    report.tokens = count_tokens(&file.doc.render());
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
            report.tokens = count_tokens(&file.doc.render());
            if report.tokens <= cap {
                break;
            }
            estimate = report.tokens;
        }
        let line_tokens = count_tokens(&format!("- {}\n", e.text));
        file.doc.remove(e.id);
        file.meta.entries.remove(&e.id.to_string());
        estimate = estimate.saturating_sub(line_tokens);
        report.evicted.push(Change {
            id: e.id,
            category: e.category,
            text: e.text,
        });
    }
    report.tokens = count_tokens(&file.doc.render());
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
}
