#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A Tier 0 text of at least `tier0_max_tokens` bytes must be counted; with
//! `MemoryConfig::count_cache` set, a new process fitting the same Tier 0 again reads the count
//! from the cache instead of loading the BPE vocabulary (~75 ms), and gets the same text as the
//! exact fit. "A new process" is this test binary run again (the vocabulary flag is per
//! process): the parent runs `fill_the_cache_in_a_child_process` in a child with
//! `MEM_TIER0_CACHE_CHILD` naming the project; run alone, that test has nothing to fill and
//! passes without checking.

use std::path::{Path, PathBuf};
use std::process::Command;

use mem_sources::FromProject;
use mem_tiers::{MemoryConfig, MemoryManager};

const CHILD: &str = "MEM_TIER0_CACHE_CHILD";

fn config(root: &Path) -> MemoryConfig {
    let mut config = MemoryConfig::for_home(&root.join("home"));
    config.count_cache = Some(root.join("home/.mewcode/tiers/cache/token-counts"));
    config
}

fn add_long_learnings(mm: &MemoryManager, from: usize, n: usize) {
    for i in from..from + n {
        mm.add_learning(
            &format!("lesson {i} about the payment service's retry policy"),
            &format!(
                "Subsystem {i} fails when its cache is cold; warm it with `make warm-cache \
                 SUBSYSTEM={i}` and check the hit ratio on the dashboard before running the \
                 integration tests again."
            ),
            "error",
            &[],
            None,
            false,
        )
        .unwrap();
    }
}

#[test]
fn fill_the_cache_in_a_child_process() {
    let Some(root) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let mm = MemoryManager::from_project(&root.join("project"), config(&root)).unwrap();
    let text = mm.get_tier0_text().unwrap();
    assert!(
        mem_core::vocabulary_used(),
        "a long Tier 0 must be counted once"
    );
    println!("{text}");
}

#[test]
fn a_long_tier0_is_counted_once_then_read_from_the_cache() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(root.path().join("home")).unwrap();
    let cache_file = config(root.path()).count_cache.unwrap();
    {
        let mm = MemoryManager::from_project(&project, config(root.path())).unwrap();
        add_long_learnings(&mm, 0, 5);
    }
    assert!(!mem_core::vocabulary_used(), "the setup counted tokens");
    assert!(!cache_file.exists());

    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "fill_the_cache_in_a_child_process",
            "--nocapture",
        ])
        .env(CHILD, root.path())
        .output()
        .unwrap();
    assert!(child.status.success(), "{child:?}");
    let child_out = String::from_utf8(child.stdout).unwrap();
    assert!(cache_file.exists(), "the child did not remember the count");

    // This process: the same Tier 0, no vocabulary.
    let mm = MemoryManager::from_project(&project, config(root.path())).unwrap();
    let text = mm.get_tier0_text().unwrap();
    assert!(
        text.len() >= mm.config().tier0_max_tokens,
        "not a long Tier 0: {text}"
    );
    assert!(
        child_out.contains(&text),
        "child and parent fitted different texts"
    );
    assert!(
        !mem_core::vocabulary_used(),
        "a Tier 0 counted by an earlier process loaded the vocabulary again"
    );
    // The exact fit (counting every step) gives the same text.
    let exact = mm.get_tier0_summary().unwrap();
    assert_eq!(exact.text, text);

    // A changed Tier 0 is counted, not taken from the cache, and still equals the exact fit.
    add_long_learnings(&mm, 5, 1);
    let changed = mm.get_tier0_text().unwrap();
    assert_ne!(changed, text);
    assert!(changed.contains("lesson 5 "), "{changed}");
    assert_eq!(mm.get_tier0_summary().unwrap().text, changed);
}
