//! Auto-memory bookkeeping benchmark (`cargo bench -p mem-auto`; also run by `cargo xtask
//! bench`): the work an extraction does around the model call, with both files at the default
//! cap (2,000 tokens each): lock, read and parse the file, merge three new entries (dedupe,
//! corrections, near-duplicates), enforce the cap (consolidate, evict), write it atomically with
//! its dates, for the user file and the project file. Target: ≤ 5 ms.
//!
//! Results are printed as a Markdown table (median and minimum of 60 rounds), with two floors
//! measured in the same run (the raw reads of both files; those reads plus one crash-safe write
//! of each: temp file, fsync, rename) and the 1-minute load average.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use chrono::Utc;
use mem_auto::{
    AutoMemory, AutoOptions, Candidate, DEFAULT_CAP_TOKENS, MemoryCategory, Scope, count_tokens,
    merge_offline,
};

/// The 1-minute load average (Linux), printed with every measurement.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A file of varied entries just under `cap` tokens.
fn file_at_cap(categories: [MemoryCategory; 2], cap: usize) -> String {
    let mut text = String::from("# Memories\n\nWritten by hand and by mewmem.\n");
    let subjects = [
        "pnpm",
        "snake_case",
        "clippy",
        "tests/unit",
        "Node 20",
        "fly deploy",
        "PostgreSQL 16",
        "ruff",
        "the main branch",
        "docs/adr",
    ];
    let mut i = 0;
    for cat in categories {
        text.push_str(&format!("\n### {}\n", cat.heading()));
        loop {
            let line = format!(
                "- Rule {i}: use {} for the {} part of service {} and keep it consistent\n",
                subjects[i % subjects.len()],
                ["api", "web", "worker", "cli"][i % 4],
                i * 7 + 3
            );
            if count_tokens(&text) + count_tokens(&line)
                > cap / 2 * (if cat == categories[0] { 1 } else { 2 })
            {
                break;
            }
            text.push_str(&line);
            i += 1;
        }
    }
    text
}

fn main() {
    println!("load average {} at the start", load());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(root.join(".mewcode")).unwrap();
    std::fs::create_dir_all(home.join(".mewcode")).unwrap();
    let user = file_at_cap(
        [MemoryCategory::Preference, MemoryCategory::Correction],
        DEFAULT_CAP_TOKENS,
    );
    let project = file_at_cap(
        [MemoryCategory::Project, MemoryCategory::Reference],
        DEFAULT_CAP_TOKENS,
    );
    let auto = AutoMemory::new(&root, &home, AutoOptions::default());
    let new_user = [
        Candidate {
            category: MemoryCategory::Preference,
            text: "Always run clippy with -D warnings before saying a change is done".into(),
        },
        Candidate {
            category: MemoryCategory::Correction,
            text: "The project is Python, not Go".into(),
        },
        Candidate {
            category: MemoryCategory::Preference,
            text: "Rule 3: use Node 20 for the cli part of service 24 and keep it consistent"
                .into(),
        },
    ];
    let new_project = [
        Candidate {
            category: MemoryCategory::Project,
            text: "Tests live in tests/integration and need a running Postgres".into(),
        },
        Candidate {
            category: MemoryCategory::Reference,
            text: "The API reference is at https://docs.acme.dev/api/v2".into(),
        },
        Candidate {
            category: MemoryCategory::Project,
            text: "We deploy with fly deploy from main".into(),
        },
    ];
    let corrections = vec!["The project is Python, not Go".to_owned()];
    let rounds = 60;
    let mut times = Vec::new();
    let mut evicted = 0;
    for _ in 0..rounds {
        std::fs::write(auto.path(Scope::User), &user).unwrap();
        std::fs::write(auto.path(Scope::Project), &project).unwrap();
        let _ = std::fs::remove_file(home.join(".mewcode/memories.meta.json"));
        let _ = std::fs::remove_file(root.join(".mewcode/memories.meta.json"));
        let start = Instant::now();
        for (scope, cands) in [(Scope::User, &new_user), (Scope::Project, &new_project)] {
            let r = auto
                .update(scope, |f| {
                    Ok(merge_offline(
                        f,
                        cands,
                        &corrections,
                        Utc::now(),
                        DEFAULT_CAP_TOKENS,
                        Default::default(),
                    ))
                })
                .unwrap();
            evicted += r.evicted.len() + r.consolidated.len();
        }
        times.push(start.elapsed());
    }
    // The same work in memory: parse, merge, cap, render (no lock, no file I/O).
    let mut mem_times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        for (text, cands, scope) in [
            (&user, &new_user, Scope::User),
            (&project, &new_project, Scope::Project),
        ] {
            let (doc, _) = mem_auto::Document::parse(text);
            let mut open = mem_auto::OpenFile {
                scope,
                path: auto.path(scope),
                doc,
                meta: Default::default(),
                warnings: Vec::new(),
            };
            let _ = merge_offline(
                &mut open,
                cands,
                &corrections,
                Utc::now(),
                DEFAULT_CAP_TOKENS,
                Default::default(),
            );
            std::hint::black_box(open.doc.render());
        }
        mem_times.push(start.elapsed());
    }
    let entries = auto.list().entries.len();
    // Floors measured in the same run: the raw reads of both files, and the raw reads plus a
    // crash-safe write of each (temp file in the folder, fsync, rename) — the I/O any locked,
    // atomic update of both files pays whatever it computes.
    let mut read_times = Vec::new();
    let mut io_times = Vec::new();
    for round in 0..rounds {
        std::fs::write(auto.path(Scope::User), &user).unwrap();
        std::fs::write(auto.path(Scope::Project), &project).unwrap();
        let start = Instant::now();
        for scope in [Scope::User, Scope::Project] {
            std::hint::black_box(std::fs::read(auto.path(scope)).unwrap());
        }
        read_times.push(start.elapsed());
        let start = Instant::now();
        for scope in [Scope::User, Scope::Project] {
            let path = auto.path(scope);
            let bytes = std::fs::read(&path).unwrap();
            let tmp = path.with_file_name(format!(".floor.{round}.tmp"));
            let mut f = std::fs::File::create(&tmp).unwrap();
            std::io::Write::write_all(&mut f, &bytes).unwrap();
            f.sync_all().unwrap();
            std::fs::rename(&tmp, &path).unwrap();
        }
        io_times.push(start.elapsed());
    }
    println!(
        "| bookkeeping (both files at the cap of {DEFAULT_CAP_TOKENS} tokens, {entries} entries after, 3 new entries each) | median | min |"
    );
    println!("|---|---|---|");
    let min = *times.iter().min().unwrap();
    println!(
        "| lock + read + parse + merge + cap ({} entries evicted or merged per round) + atomic write, both files | {:.2} ms | {:.2} ms |",
        evicted / rounds,
        median(times).as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3
    );
    let mem_min = *mem_times.iter().min().unwrap();
    println!(
        "| the same without file I/O (parse + merge + cap + render, both files) | {:.2} ms | {:.2} ms |",
        median(mem_times).as_secs_f64() * 1e3,
        mem_min.as_secs_f64() * 1e3
    );
    for (label, t) in [
        ("floor: read both files (`std::fs::read`)", read_times),
        (
            "floor: read both files and write each back (temp file, fsync, rename)",
            io_times,
        ),
    ] {
        let min = *t.iter().min().unwrap();
        println!(
            "| {label} | {:.2} ms | {:.2} ms |",
            median(t).as_secs_f64() * 1e3,
            min.as_secs_f64() * 1e3
        );
    }
    println!("load average {} at the end", load());
}
