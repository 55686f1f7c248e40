//! The `mem` binary's global allocator: the system's for every command until
//! [`use_bulk_allocator`] is called, mimalloc for what is allocated after it.
//!
//! Measured with the release build (`docs/BENCHMARKS.md`, "Stop 43"):
//! - a short command pays for mimalloc's start and exit (its arena's reservation and bitmaps,
//!   about 100 more page faults): a `mem memory search` process at 100,000 learnings took
//!   0.4–0.6 ms more with mimalloc than with the system's allocator, 11 % of a fast search;
//! - an import allocates and frees millions of small JSON nodes: with the system's allocator a
//!   100 MB Codex import took 47 % more CPU (2.15 against 1.46 s), a 200 MB Claude Code folder
//!   15 % more.
//!
//! So the bulk commands (imports, the migration to a team store, the MCP server) switch to
//! mimalloc once their arguments are parsed. A block is freed or resized by the allocator that
//! gave it: mimalloc's own page map says whether a pointer is one of its blocks
//! (`mi_is_in_heap_region`), so blocks of the system's allocator made before the switch (the
//! arguments, the settings) stay valid after it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once, never cleared: new blocks come from mimalloc.
static BULK: AtomicBool = AtomicBool::new(false);

/// From now on, new blocks come from mimalloc (for a command that allocates in bulk). Blocks
/// allocated before stay with the system's allocator until freed.
pub fn use_bulk_allocator() {
    BULK.store(true, Ordering::Release);
}

/// The global allocator of the `mem` binary (see the module docs).
pub struct CommandAllocator;

impl CommandAllocator {
    /// Whether `ptr` is one of mimalloc's blocks. Without the switch, mimalloc has given no
    /// block, so its map is not read.
    fn is_bulk_block(ptr: *mut u8) -> bool {
        // SAFETY: `mi_is_in_heap_region` only reads mimalloc's page map for the address; any
        // pointer value is allowed.
        BULK.load(Ordering::Acquire)
            && unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast_const().cast()) }
    }
}

// SAFETY: each call is forwarded to one of two allocators that implement `GlobalAlloc`
// soundly; a block is always freed or resized by the allocator that allocated it
// (`is_bulk_block`), and `BULK` is set before mimalloc gives any block.
unsafe impl GlobalAlloc for CommandAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if BULK.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        } else {
            // SAFETY: as above.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if BULK.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        } else {
            // SAFETY: as above.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if Self::is_bulk_block(ptr) {
            // SAFETY: `ptr` is a mimalloc block of `layout` (the caller's contract).
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        } else {
            // SAFETY: `ptr` is a block of the system's allocator of `layout`.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if Self::is_bulk_block(ptr) {
            // SAFETY: `ptr` is a mimalloc block of `layout` (the caller's contract).
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        } else {
            // SAFETY: `ptr` is a block of the system's allocator of `layout`; it stays one.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of both allocators, freed and resized across the switch: each goes back to the
    /// allocator that gave it (a block freed by the wrong one would abort the test process).
    /// The only test of this crate's unit tests: the switch is process-wide and never undone.
    #[test]
    fn blocks_made_before_and_after_the_switch_are_freed_by_their_own_allocator() {
        let a = CommandAllocator;
        let layout = Layout::from_size_align(48, 8).unwrap();
        // SAFETY: every block is allocated, written within its size, resized and freed once,
        // with its own layout.
        unsafe {
            let before = a.alloc(layout);
            assert!(!before.is_null());
            // A block of the system's allocator is not in mimalloc's map (asked directly: the
            // switch is not on yet, so `is_bulk_block` would not ask).
            assert!(!libmimalloc_sys::mi_is_in_heap_region(
                before.cast_const().cast()
            ));
            before.write_bytes(7, 48);
            use_bulk_allocator();
            assert!(!CommandAllocator::is_bulk_block(before));
            let after = a.alloc_zeroed(layout);
            assert!(!after.is_null());
            assert!(CommandAllocator::is_bulk_block(after));
            assert_eq!(*after.add(47), 0);
            // The system's block stays the system's when it grows after the switch.
            let grown = a.realloc(before, layout, 4096);
            assert!(!CommandAllocator::is_bulk_block(grown));
            assert_eq!(*grown.add(47), 7);
            let big = a.realloc(after, layout, 1 << 20);
            assert!(CommandAllocator::is_bulk_block(big));
            a.dealloc(grown, Layout::from_size_align(4096, 8).unwrap());
            a.dealloc(big, Layout::from_size_align(1 << 20, 8).unwrap());
        }
    }
}
