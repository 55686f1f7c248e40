//! `cargo xtask eval <name>`: quality measurements on labelled sets under `fixtures/`.
//!
//! - `extract`: auto-memory extraction on `fixtures/eval/extract/` (`dev/` and `test/` splits).
//! - `recall`: the recall selector (`mem recall`) on `fixtures/recall/eval/`, `dev/` and `test/`
//!   query splits (see [`recall`]).

mod extract;
pub mod recall;

use anyhow::{Result, bail};

/// Runs `cargo xtask eval <name> [ARGS...]`; `Ok(false)` when a target is missed.
pub fn run(args: &[String]) -> Result<bool> {
    match args.first().map(String::as_str) {
        Some("extract") => extract::run(&args[1..]),
        Some("recall") => recall::run(&args[1..]),
        Some(other) => bail!("unknown eval `{other}` (known: extract, recall)"),
        None => bail!(
            "usage: cargo xtask eval extract [--model] [--verbose] [--filter TEXT] [--sample N] [--split dev|test|heldout|all]\n       cargo xtask eval recall [--split dev|test|all] [--live] [--verbose] [--set DIR] [--sample N]"
        ),
    }
}

/// `n` of `items` spread evenly over them, in order (`--sample N`: every file and kind of a
/// set, for slow live models); all of them when `n` is 0 or not below their count.
fn sample_evenly<T>(items: Vec<T>, n: usize) -> Vec<T> {
    let len = items.len();
    if n == 0 || n >= len {
        return items;
    }
    // Item `i * len / n` for i in 0..n: strictly increasing, since len > n.
    let mut next = 0;
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, item)| {
            (next < n && i == next * len / n).then(|| {
                next += 1;
                item
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn samples_spread_evenly() {
        assert_eq!(super::sample_evenly((0..10).collect(), 4), vec![0, 2, 5, 7]);
        assert_eq!(super::sample_evenly((0..3).collect(), 3), vec![0, 1, 2]);
        assert_eq!(super::sample_evenly((0..3).collect(), 0), vec![0, 1, 2]);
        assert_eq!(super::sample_evenly((0..7).collect(), 1), vec![0]);
    }
}
