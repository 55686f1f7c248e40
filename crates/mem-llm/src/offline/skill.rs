//! The offline skill template: every memory of the group becomes one step or one pitfall, in the
//! order given, citing its id; deterministic (the same group gives the same bytes).

use crate::types::{SkillDraft, SkillPoint, SkillRequest, SkillSource};

/// The longest step or pitfall the offline template writes, in characters.
pub const MAX_POINT_CHARS: usize = 400;
/// The longest description the offline template writes, in characters (Claude Code's limit is
/// 1,024).
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// Categories (a learning's category, a note's `type`, an entry's category key) whose memories
/// are pitfalls rather than steps: what went wrong and was corrected.
pub const PITFALL_CATEGORIES: &[&str] = &[
    "bug",
    "bugs",
    "correction",
    "corrections",
    "error",
    "errors",
    "failure",
    "gotcha",
    "gotchas",
    "incident",
    "mistake",
    "mistakes",
    "pitfall",
    "pitfalls",
    "warning",
    "warnings",
];

/// Words that mark a sentence as a warning (what not to do), in English and Chinese.
pub const WARNING_CUES: &[&str] = &[
    "never",
    "don't",
    "dont",
    "do not",
    "avoid",
    "beware",
    "careful",
    "instead of",
    "must not",
    "mustn't",
    "should not",
    "shouldn't",
    "not use",
    "fails",
    "failed",
    "breaks",
    "broke",
    "mistake",
    "wrong",
    "pitfall",
    "gotcha",
    "不要",
    "别用",
    "避免",
    "禁止",
    "错误",
    "失败",
    "注意",
];

/// `true` when the memory reads as a pitfall: its category is one of [`PITFALL_CATEGORIES`],
/// or its text states a warning ([`WARNING_CUES`], matched on word boundaries for Latin cues).
pub fn is_pitfall(source: &SkillSource) -> bool {
    if source
        .category
        .as_deref()
        .is_some_and(|c| PITFALL_CATEGORIES.contains(&c.trim().to_lowercase().as_str()))
    {
        return true;
    }
    let text = format!("{} {}", source.title, source.text).to_lowercase();
    WARNING_CUES.iter().any(|cue| contains_word(&text, cue))
}

fn contains_word(text: &str, cue: &str) -> bool {
    if !cue.is_ascii() {
        return text.contains(cue);
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find(cue) {
        let start = from + pos;
        let end = start + cue.len();
        let before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let after = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if before && after {
            return true;
        }
        from = start + cue.len().max(1);
        if from >= text.len() {
            break;
        }
    }
    false
}

/// `text` on one line (whitespace runs collapsed), cut at `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut = cut.trim_end().to_owned();
    cut.push('…');
    cut
}

/// The point a memory gives: its text (a note's body, a learning's content), prefixed with its
/// title when the title says something the text does not.
fn point_text(source: &SkillSource) -> String {
    let text = one_line(&source.text, MAX_POINT_CHARS);
    let title = one_line(&source.title, 120);
    let said = text.to_lowercase().contains(&title.to_lowercase());
    if title.is_empty() || said || source.kind == "entry" {
        if text.is_empty() {
            return title;
        }
        return text;
    }
    if text.is_empty() {
        return title;
    }
    let title = title.trim_end_matches(['.', ':', ';']);
    one_line(&format!("{title}: {text}"), MAX_POINT_CHARS)
}

fn normalised(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '。'])
        .to_owned()
}

fn push_point(points: &mut Vec<SkillPoint>, text: String, id: &str) {
    if text.is_empty() {
        return;
    }
    let key = normalised(&text);
    if let Some(p) = points.iter_mut().find(|p| normalised(&p.text) == key) {
        if !p.sources.iter().any(|s| s == id) {
            p.sources.push(id.to_owned());
        }
        return;
    }
    points.push(SkillPoint {
        text,
        sources: vec![id.to_owned()],
    });
}

/// The description: when to use the skill (its topic) and what it holds.
pub fn describe(request: &SkillRequest) -> String {
    let topic = one_line(&request.topic, 200);
    let mut titles: Vec<String> = Vec::new();
    for s in &request.sources {
        let t = one_line(&s.title, 80);
        if !t.is_empty() && !titles.iter().any(|x| x.eq_ignore_ascii_case(&t)) {
            titles.push(t);
        }
        if titles.len() == 3 {
            break;
        }
    }
    let n = request.sources.len();
    let mut out = format!(
        "Use when a task involves {topic}. Steps and pitfalls learned across sessions, from {n} \
         memor{}",
        if n == 1 { "y" } else { "ies" }
    );
    if titles.is_empty() {
        out.push('.');
    } else {
        out.push_str(&format!(" ({}).", titles.join("; ")));
    }
    one_line(&out.replace(['<', '>'], ""), MAX_DESCRIPTION_CHARS)
}

/// Drafts a skill without a model: each source, in order, becomes a pitfall ([`is_pitfall`]) or
/// a step; points saying the same thing (normalised text) are merged and cite every source.
pub fn draft(request: &SkillRequest) -> SkillDraft {
    let mut steps = Vec::new();
    let mut pitfalls = Vec::new();
    for source in &request.sources {
        let text = point_text(source);
        if is_pitfall(source) {
            push_point(&mut pitfalls, text, &source.id);
        } else {
            push_point(&mut steps, text, &source.id);
        }
    }
    SkillDraft {
        name: request.name.clone(),
        description: describe(request),
        steps,
        pitfalls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(id: &str, title: &str, text: &str, category: Option<&str>) -> SkillSource {
        SkillSource {
            id: id.into(),
            kind: "learning".into(),
            title: title.into(),
            text: text.into(),
            category: category.map(str::to_owned),
            tags: Vec::new(),
        }
    }

    #[test]
    fn sources_become_steps_or_pitfalls_with_their_ids() {
        let request = SkillRequest {
            name: "db-migrations".into(),
            topic: "database migrations".into(),
            sources: vec![
                source(
                    "L1",
                    "Run migrations",
                    "Run sqlx migrate run before the tests.",
                    None,
                ),
                source(
                    "L2",
                    "Lock timeout",
                    "Migrations fail on a busy database.",
                    Some("error"),
                ),
                source(
                    "L3",
                    "Backfill",
                    "Never backfill in the same migration.",
                    Some("tip"),
                ),
                source(
                    "L4",
                    "Run migrations",
                    "run sqlx migrate run before the tests",
                    None,
                ),
            ],
        };
        let d = draft(&request);
        assert_eq!(d.name, "db-migrations");
        assert_eq!(d.steps.len(), 1);
        assert_eq!(d.steps[0].sources, vec!["L1", "L4"]);
        assert_eq!(
            d.steps[0].text,
            "Run migrations: Run sqlx migrate run before the tests."
        );
        assert_eq!(d.pitfalls.len(), 2);
        assert_eq!(d.pitfalls[0].sources, vec!["L2"]);
        assert_eq!(d.pitfalls[1].sources, vec!["L3"]);
        assert!(
            d.description
                .starts_with("Use when a task involves database migrations.")
        );
        assert!(d.description.contains("from 4 memories"));
    }

    #[test]
    fn warning_cues_match_whole_words_only() {
        assert!(is_pitfall(&source("L1", "", "Do not push to main", None)));
        assert!(!is_pitfall(&source(
            "L1",
            "",
            "Notify the team on deploys",
            None
        )));
        assert!(!is_pitfall(&source(
            "L1",
            "",
            "Use the nevermind flag",
            None
        )));
        assert!(is_pitfall(&source("L1", "", "不要直接改生产库", None)));
    }

    #[test]
    fn descriptions_are_bounded_and_tag_free() {
        let long = "x".repeat(5_000);
        let request = SkillRequest {
            name: "n".into(),
            topic: format!("<b>{long}</b>"),
            sources: vec![source("L1", "t", "body", None)],
        };
        let d = describe(&request);
        assert!(d.chars().count() <= MAX_DESCRIPTION_CHARS);
        assert!(!d.contains('<') && !d.contains('>'));
    }
}
