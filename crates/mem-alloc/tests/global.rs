//! `CommandAllocator` as a process's global allocator: threads allocate before the switch,
//! hand their blocks to other threads, switch, and free and grow blocks of both allocators
//! from threads that did not allocate them. A block freed by the wrong allocator aborts the
//! process (glibc's checks, mimalloc's), so a passing run is the check; the sums check that
//! no block's content was lost across a resize.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::thread;

#[global_allocator]
static GLOBAL: mem_alloc::CommandAllocator = mem_alloc::CommandAllocator;

/// Blocks of many sizes (small, page-sized, and every 40th of 4 MiB, past mimalloc's size
/// classes), each filled with a value of its own.
fn blocks(tag: u8) -> Vec<Vec<u8>> {
    (0..120usize)
        .map(|i| {
            let len = if i % 40 == 0 {
                4 << 20
            } else {
                1 + (i * 37) % 5000
            };
            vec![tag.wrapping_add(i as u8); len]
        })
        .collect()
}

fn sum(v: &[Vec<u8>]) -> u64 {
    v.iter()
        .map(|b| b.iter().map(|&x| u64::from(x)).sum::<u64>())
        .sum()
}

#[test]
fn blocks_cross_threads_and_the_switch() {
    // Before the switch: the system's blocks, made on four threads, sent to this one.
    let (tx, rx) = mpsc::channel();
    let makers: Vec<_> = (0..4u8)
        .map(|t| {
            let tx = tx.clone();
            thread::spawn(move || tx.send(blocks(t)).unwrap())
        })
        .collect();
    for m in makers {
        m.join().unwrap();
    }
    drop(tx);
    let mut system: Vec<Vec<Vec<u8>>> = rx.iter().collect();
    let system_sums: Vec<u64> = system.iter().map(|v| sum(v)).collect();

    mem_alloc::use_bulk_allocator();

    // After it: mimalloc's blocks made on other threads; the system's grown and freed there.
    let workers: Vec<_> = system
        .drain(..)
        .enumerate()
        .map(|(t, mut old)| {
            thread::spawn(move || {
                let before = sum(&old);
                for b in &mut old {
                    b.extend_from_slice(&[0u8; 10_000]); // grown: still the system's block
                }
                assert_eq!(sum(&old), before);
                let new = blocks(100 + t as u8);
                let new_sum = sum(&new);
                drop(old);
                (new, new_sum, before)
            })
        })
        .collect();
    let mut got = Vec::new();
    for (w, want) in workers.into_iter().zip(system_sums) {
        let (new, new_sum, before) = w.join().unwrap();
        assert_eq!(before, want);
        got.push((new, new_sum));
    }
    // mimalloc's blocks, made on the workers, grown and freed here.
    for (mut new, new_sum) in got {
        for b in &mut new {
            b.extend_from_slice(&[0u8; 3]);
        }
        assert_eq!(sum(&new), new_sum);
    }
}
