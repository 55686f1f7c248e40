#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Without `MemoryConfig::count_cache`, fitting a long Tier 0 writes no cache file. (Its own test
//! binary: it loads the BPE vocabulary, and `tier0_count_cache.rs` checks a per-process flag
//! that a test running beside it in the same process would set.)

use std::path::Path;

use mem_sources::FromProject;
use mem_tiers::{MemoryConfig, MemoryManager};

fn add_long_learnings(mm: &MemoryManager, n: usize) {
    for i in 0..n {
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
fn without_a_cache_path_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let config = MemoryConfig::for_home(&root.path().join("home"));
    assert!(config.count_cache.is_none(), "the cache is off by default");
    let cache_file: &Path = &root.path().join("home/.mewcode/tiers/cache/token-counts");
    let mm = MemoryManager::from_project(&project, config).unwrap();
    add_long_learnings(&mm, 5);
    assert!(!mm.get_tier0_text().unwrap().is_empty());
    assert!(!cache_file.exists());
    assert!(!cache_file.parent().unwrap().exists());
}
