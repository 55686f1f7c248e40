//! The frontmatter parser on the real auto-memory files of `fixtures/llm/select` (see
//! fixtures/llm/NOTICE): every file's frontmatter parses, with its top-level name, description
//! and type.

// Test setup may panic on I/O failures.
#![allow(clippy::expect_used)]

use std::path::PathBuf;

use mem_llm::memory_files::{candidate, parse};

fn memory_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/llm/select/project/.mewcode/memory")
}

#[test]
fn every_real_memory_file_has_a_usable_frontmatter() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(memory_dir())
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("MEMORY.md"))
        .collect();
    paths.sort();
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
