//! The frontmatter parser and the offline selection on the real auto-memory files of
//! `fixtures/llm/select` (see fixtures/llm/NOTICE): every file's frontmatter parses, with its
//! top-level name, description and type; an unrelated query selects nothing.

// Test setup may panic on I/O failures.
#![allow(clippy::expect_used)]

use std::path::PathBuf;

use mem_llm::offline::{MIN_IDEAL_SHARE, ideal_score, score, select};
use mem_recall::frontmatter::{candidate, parse};

fn memory_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/llm/select/project/.mewcode/memory")
}

fn real_files() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(memory_dir())
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("MEMORY.md"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_real_memory_file_has_a_usable_frontmatter() {
    let paths = real_files();
    assert_eq!(paths.len(), 54);
    let mut kinds = std::collections::BTreeMap::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("utf-8 file");
        let (file, warning) = parse(&text);
        assert_eq!(warning, None, "{}", path.display());
        let f = &file.frontmatter;
        assert!(
            f.name.as_deref().is_some_and(|n| !n.is_empty())
                && f.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}: {f:?}",
            path.display()
        );
        assert!(
            !file.body.trim_start().starts_with("---"),
            "{}",
            path.display()
        );
        *kinds.entry(f.kind.clone().unwrap_or_default()).or_insert(0) += 1;
    }
    let kinds: Vec<(String, i32)> = kinds.into_iter().collect();
    assert_eq!(
        kinds,
        [
            ("feedback".to_owned(), 20),
            ("project".to_owned(), 32),
            ("reference".to_owned(), 1),
            ("user".to_owned(), 1)
        ]
    );
}

#[test]
fn a_real_description_with_colons_is_read_whole() {
    let path = memory_dir().join("feedback_cover_letter_quality.md");
    let text = std::fs::read_to_string(path).expect("fixture");
    let (c, warning) = candidate("feedback_cover_letter_quality.md".to_owned(), &text);
    assert_eq!(warning, None);
    assert_eq!(
        c.name,
        "Cover letter quality — location, format, length, factual errors"
    );
    assert!(
        c.description
            .starts_with("Cover letter standards: NYC location"),
        "{}",
        c.description
    );
}

#[test]
fn an_unrelated_query_selects_no_real_memory() {
    let candidates: Vec<_> = real_files()
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("utf-8 file");
            let id = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            candidate(id, &text).0
        })
        .collect();
    let check = |query: &str, expected: &[&str]| {
        assert_eq!(select(query, &candidates, 5), expected, "{query}");
    };
    // Shares one word ("today") with one note: far below the floor.
    let weak = score("what is the weather in paris today", &candidates);
    assert_eq!(weak.len(), 2, "the query does share words with two notes");
    assert!(
        weak[0].1
            < MIN_IDEAL_SHARE * ideal_score("what is the weather in paris today", &candidates)
    );
    check("what is the weather in paris today", &[]);
    check("kubernetes helm chart", &[]);
    // Related queries still select.
    check(
        "never delete system observations, clean the cache",
        &["feedback_data_hygiene.md"],
    );
    check(
        "grafana interview",
        &[
            "project_first_interview_grafana_2026-04-01.md",
            "project_session_2026-04-01-s46.md",
            "project_session_2026-04-03-s54.md",
        ],
    );
    check(
        "funding",
        &[
            "project_funder_fit_lessons_2026-03-30.md",
            "project_tony_carbone_altfunding_2026-03.md",
            "project_three_pillar_strategy_2026-03-24.md",
            "project_weekly_rhythm_2026-03-24.md",
            "project_triptych_architecture_2026-03-30.md",
        ],
    );
}
