//! Criterion benchmark of `mem skill suggest`'s grouping (`mem_skills::suggest`) on
//! 1,000 and 10,000 generated learnings (the tiers benches' generator: 20-word contents, 50
//! tags, 4 categories, one day each), against its floor in the same run: building the feature
//! vectors and similarities alone (`skill::featurize`, the tokenizer's cost). Results in
//! `docs/BENCHMARKS.md`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeSet;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mem_skills::{Item, SuggestOptions, featurize, suggest};
use mem_tiers::SourceKind;

// The tiers benches' generator, shared as a file (the same rows in both crates' benches).
#[path = "../../mem-tiers/benches/common/mod.rs"]
mod common;

fn items(n: usize) -> Vec<Item> {
    common::rows(n)
        .map(|r| {
            let tags: Vec<String> = serde_json::from_str(&r.tags).unwrap();
            let day = format!(
                "2026-{:02}-{:02}",
                1 + (r.created_ms / 1000) % 12,
                1 + (r.created_ms / 1000) % 28
            );
            Item {
                id: format!("L{}", r.created_ms / 1000 + 1),
                source: SourceKind::Learning,
                scope: "project".into(),
                title: r.title,
                text: r.content,
                category: Some(r.category.to_owned()),
                tags,
                context: None,
                sessions: BTreeSet::from([day]),
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("skill");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(8));
    for n in [1_000usize, 10_000] {
        let all = items(n);
        g.bench_function(format!("featurize_{n}"), |b| b.iter(|| featurize(&all)));
        g.bench_function(format!("suggest_{n}"), |b| {
            b.iter(|| suggest(&all, &SuggestOptions::default()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
