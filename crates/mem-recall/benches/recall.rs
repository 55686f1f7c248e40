//! `cargo bench -p mem-recall --bench recall`: the per-turn cost of recall with the offline
//! selector — scan 200 notes (list, stat, read, frontmatter) and select for a message — warm
//! (files in the page cache). Notes are the labelled set's 72 notes, repeated under new file
//! names up to 200. Prints the median of 25 runs per case.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mem_recall::{MemoryDir, MemoryDirs, Scope, scan};

fn median(mut f: impl FnMut()) -> Duration {
    let mut times = Vec::new();
    for _ in 0..25 {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/recall/eval");
    let mut dirs = vec![root.join("home/.mewcode/memory")];
    for p in std::fs::read_dir(root.join("projects")).unwrap() {
        dirs.push(p.unwrap().path().join(".mewcode/memory"));
    }
    let mut files = Vec::new();
    for d in dirs {
        for f in std::fs::read_dir(d).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files.sort();
    files
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("memory");
    std::fs::create_dir_all(&dir).unwrap();
    let files = sources();
    let mut bytes = 0;
    for i in 0..200 {
        let src = &files[i % files.len()];
        let text = std::fs::read_to_string(src).unwrap();
        bytes += text.len();
        std::fs::write(
            dir.join(format!(
                "n{i:03}_{}",
                src.file_name().unwrap().to_string_lossy()
            )),
            text,
        )
        .unwrap();
    }
    let dirs = MemoryDirs {
        dirs: vec![MemoryDir {
            scope: Scope::Project,
            path: dir,
        }],
    };
    println!("200 notes, {} KB", bytes / 1024);
    println!("{:<58} {:>10}", "case", "median");
    let d = median(|| {
        let s = scan(&dirs);
        assert_eq!(s.notes.len(), 200);
    });
    println!("{:<58} {:>10.2?}", "scan + frontmatter (200 notes)", d);
    let notes = scan(&dirs).notes;
    let candidates: Vec<_> = notes.iter().map(|n| n.candidate()).collect();
    for query in [
        "how do I run the test suite locally?",
        "the app hangs on the splash screen when the phone is in airplane mode",
        "站内搜索搜不到中文关键词怎么办",
    ] {
        let d = median(|| {
            std::hint::black_box(mem_llm::offline::select(query, &candidates, 5));
        });
        println!(
            "{:<58} {:>10.2?}",
            format!("select: {}", query.chars().take(40).collect::<String>()),
            d
        );
        let d = median(|| {
            let s = scan(&dirs);
            let c: Vec<_> = s.notes.iter().map(|n| n.candidate()).collect();
            std::hint::black_box(mem_llm::offline::select(query, &c, 5));
        });
        println!(
            "{:<58} {:>10.2?}",
            "  scan + frontmatter + select (the per-turn cost)", d
        );
    }
}
