//! `cargo bench -p mem-instructions --bench instructions`: the loader and the include parser on
//! inputs that were quadratic once (one line per include, a 120 KB line full of `@`). `mem
//! context` runs every turn, so each must stay linear. Prints the median of up to 5 runs.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use mem_instructions::{LoadOptions, find_includes, load};

/// Runs `f` up to 5 times (once when a run takes more than 2 s) and returns the median.
fn median(mut f: impl FnMut()) -> Duration {
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        f();
        let d = t.elapsed();
        times.push(d);
        if d > Duration::from_secs(2) {
            break;
        }
    }
    times.sort();
    times[times.len() / 2]
}

fn main() {
    println!("{:<52} {:>12}", "case", "median");
    for lines in [5_000, 10_000, 20_000] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("MEWCODE.md"), "@a.md\n".repeat(lines)).unwrap();
        std::fs::write(project.join("a.md"), "A\n").unwrap();
        let options = LoadOptions::new(&project, dir.path().join("home"));
        let d = median(|| {
            let ins = load(&options).unwrap();
            assert_eq!(ins.warnings.len(), lines - 1);
        });
        println!(
            "{:<52} {:>12.2?}",
            format!("load: {lines} lines of `@a.md`"),
            d
        );
    }
    const LINE: usize = 120 * 1024;
    let cases = [
        ("code spans and `@`s: \"`x` @y \"", "`x` @y "),
        (
            "directives not at line start: \"@include a \"",
            "@include a ",
        ),
        ("one word of `(@` (no space)", "(@"),
        ("unclosed `@<` quotes", "@<"),
    ];
    for (name, unit) in cases {
        let text = format!("{}\n", unit.repeat(LINE / unit.len()));
        let d = median(|| {
            std::hint::black_box(find_includes(&text));
        });
        println!(
            "{:<52} {:>12.2?}",
            format!("parse one 120 KB line: {name}"),
            d
        );
    }
}
