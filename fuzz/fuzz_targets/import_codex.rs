//! Fuzzes the codex importer of mem-session on any bytes read as that format: never panics;
//! every session id is a valid file name; each damaged line is tallied once (no more damaged
//! lines than lines); every boundary's kept tail is bounded; the conversion is deterministic;
//! the records serialise and read back; it gives what the whole parse of every line gives (the
//! skimmed payloads and the Codex line reader change nothing). See `common::check_import`.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use mem_session::import::SourceFormat;

fuzz_target!(|data: &[u8]| {
    common::check_import(
        "/nonexistent-fuzz-dir/rollout.jsonl",
        data,
        SourceFormat::Codex,
    );
});
