//! Fuzzes the claude importer of mem-session on any bytes read as that format: never panics;
//! every session id is a valid file name; each damaged line is tallied once (no more damaged
//! lines than lines); every boundary's kept tail is bounded; the conversion is deterministic;
//! the records serialise and read back.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mem_session::import::{SourceFormat, import_bytes};

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/nonexistent-fuzz-dir/session.jsonl");
    let Ok(sessions) = import_bytes(path, data, Some(SourceFormat::ClaudeCode)) else {
        panic!("a forced format never fails");
    };
    let lines = data.split(|b| *b == b'\n').count();
    for s in &sessions {
        assert!(mem_session::validate_id(&s.id).is_ok(), "bad id {:?}", s.id);
        assert!(s.report.damaged_total() <= lines);
        for r in &s.records {
            let kept: usize = r
                .keep_messages
                .iter()
                .flatten()
                .map(|m| serde_json::to_vec(m).map_or(0, |v| v.len()))
                .sum();
            let last = r
                .keep_messages
                .iter()
                .flatten()
                .last()
                .map_or(0, |m| serde_json::to_vec(m).map_or(0, |v| v.len()));
            assert!(kept <= mem_session::import::IMPORTED_KEEP_MAX_BYTES.max(last), "{kept}");
            let line = serde_json::to_string(r).expect("a record serialises");
            let _back: mem_session::SessionRecord =
                serde_json::from_str(&line).expect("a record reads back");
        }
    }
    let again = import_bytes(path, data, Some(SourceFormat::ClaudeCode)).ok();
    assert_eq!(again.as_ref().map(Vec::len), Some(sessions.len()));
    for (a, b) in sessions.iter().zip(again.iter().flatten()) {
        assert_eq!(a.id, b.id);
        assert_eq!(a.records, b.records, "not deterministic");
    }
});
