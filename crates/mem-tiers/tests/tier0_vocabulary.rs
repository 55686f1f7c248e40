#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The SessionStart path's Tier 0 never loads the BPE vocabulary (~75 ms of a new process) when
//! its text is shorter in bytes than the budget in tokens, and gives the same text as the exact
//! fit. One test in this binary: the "vocabulary used" flag is per process.

use mem_sources::FromProject;
use mem_tiers::{MemoryConfig, MemoryManager};

#[test]
fn tier0_text_of_short_items_does_not_load_the_vocabulary() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let home = root.path().join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let config = MemoryConfig::for_home(&home);
    {
        let mm = MemoryManager::from_project(&project, config.clone()).unwrap();
        for i in 0..20 {
            mm.add_learning(
                &format!("lesson {i}"),
                &format!("subsystem {i} fails when its cache is cold"),
                "error",
                &[],
                None,
                i % 2 == 0,
            )
            .unwrap();
        }
    }
    assert!(
        !mem_core::vocabulary_used(),
        "the setup itself counted tokens: the test cannot tell"
    );
    // A new manager, as a new hook process opens it.
    let mm = MemoryManager::from_project(&project, config).unwrap();
    let text = mm.get_tier0_text().unwrap();
    assert!(text.contains("lesson 19"), "{text}");
    assert!(
        !mem_core::vocabulary_used(),
        "Tier 0's text loaded the vocabulary"
    );
    // The exact fit (which counts) gives the same text.
    let exact = mm.get_tier0_summary().unwrap();
    assert!(mem_core::vocabulary_used());
    assert_eq!(exact.text, text);
    assert!(exact.dropped.is_empty());
}
