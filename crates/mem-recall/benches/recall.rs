//! `cargo bench -p mem-recall --bench recall`: the per-turn cost of recall with the offline
//! selector — scan 200 notes (list, stat, read, frontmatter) and select for a message — warm
//! (files in the page cache). Notes are the labelled set's 72 notes, repeated under new file
//! names up to 200, in a project's `.mewcode/memory` (so the scan cache has its file).
//!
//! Cases: the plain scan (every note read and parsed) and selection with every note tokenised
//! (a process's first turn without a cache); the cached scan as a new process does it (the
//! cache file read, the selector's terms memo empty: `mem hook claude UserPromptSubmit` runs
//! once per turn) and as a long-lived process does it (both in memory); and, measured in the
//! same run, the floors: listing + `stat` of the 200 files, and reading them all. Prints the
//! median and minimum of 25 runs per case, and the 1-minute load average.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use mem_llm::offline::forget_terms;
use mem_recall::cache::clear_memory;
use mem_recall::{MemoryDir, MemoryDirs, Scope, scan, scan_cached};

fn time(mut f: impl FnMut()) -> (Duration, Duration) {
    let mut times = Vec::new();
    for _ in 0..25 {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    (times[times.len() / 2], times[0])
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

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn row(case: &str, (median, min): (Duration, Duration)) {
    println!(
        "| {case} | {:.2} ms | {:.2} ms |",
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3
    );
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project/.mewcode/memory");
    std::fs::create_dir_all(&dir).unwrap();
    let files = sources();
    let mut bytes = 0;
    // Notes last changed an hour ago (a note changed within 2 s is not cached).
    let old = SystemTime::now() - Duration::from_secs(3600);
    let mut paths = Vec::new();
    for i in 0..200 {
        let src = &files[i % files.len()];
        let text = std::fs::read_to_string(src).unwrap();
        bytes += text.len();
        let path = dir.join(format!(
            "n{i:03}_{}",
            src.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        paths.push(path);
    }
    let dirs = MemoryDirs {
        dirs: vec![MemoryDir {
            scope: Scope::Project,
            path: dir.clone(),
        }],
    };
    println!(
        "200 notes, {} KB; load average {} at the start",
        bytes / 1024,
        load()
    );
    println!("| case | median | min |");
    println!("|---|---|---|");
    row(
        "floor: list the folder and `stat` each note",
        time(|| {
            let mut n = 0;
            for e in std::fs::read_dir(&dir).unwrap() {
                n += std::fs::metadata(e.unwrap().path()).unwrap().len();
            }
            std::hint::black_box(n);
        }),
    );
    row(
        "floor: read the 200 notes (`std::fs::read`)",
        time(|| {
            for p in &paths {
                std::hint::black_box(std::fs::read(p).unwrap());
            }
        }),
    );
    row(
        "plain scan + frontmatter (every note read and parsed)",
        time(|| assert_eq!(scan(&dirs).notes.len(), 200)),
    );
    let notes = scan(&dirs).notes;
    let candidates: Vec<_> = notes.iter().map(|n| n.candidate()).collect();
    let queries = [
        "how do I run the test suite locally?",
        "the app hangs on the splash screen when the phone is in airplane mode",
        "站内搜索搜不到中文关键词怎么办",
    ];
    row(
        "select, every note tokenised (terms memo emptied each time)",
        time(|| {
            forget_terms();
            std::hint::black_box(mem_llm::offline::select(queries[0], &candidates, 5));
        }),
    );
    row(
        "per turn, no cache: plain scan + select (tokenising every note)",
        time(|| {
            forget_terms();
            let s = scan(&dirs);
            let c: Vec<_> = s.notes.iter().map(|n| n.candidate()).collect();
            std::hint::black_box(mem_llm::offline::select(queries[0], &c, 5));
        }),
    );
    // Build the cache file once.
    clear_memory();
    assert_eq!(scan_cached(&dirs), scan(&dirs));
    row(
        "cached scan as a new process (cache file read; memories emptied)",
        time(|| {
            clear_memory();
            forget_terms();
            assert_eq!(scan_cached(&dirs).notes.len(), 200);
        }),
    );
    for query in queries {
        let label: String = query.chars().take(32).collect();
        row(
            &format!("per turn, new process: cached scan + select (\"{label}\")"),
            time(|| {
                clear_memory();
                forget_terms();
                let s = scan_cached(&dirs);
                let c: Vec<_> = s.notes.iter().map(|n| n.candidate()).collect();
                std::hint::black_box(mem_llm::offline::select(query, &c, 5));
            }),
        );
    }
    row(
        "per turn, long-lived process: cached scan + select (in memory)",
        time(|| {
            let s = scan_cached(&dirs);
            let c: Vec<_> = s.notes.iter().map(|n| n.candidate()).collect();
            std::hint::black_box(mem_llm::offline::select(queries[0], &c, 5));
        }),
    );
    println!("load average {} at the end", load());
}
