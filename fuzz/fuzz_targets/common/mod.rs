//! What the importer fuzz targets share: one import of any bytes in a forced format, checked.

use std::path::Path;

use mem_session::import::{SourceFormat, import_bytes};

/// Imports `data` as `format` (from a file named `path`, which does not exist) and checks what
/// every importer promises: never panics, never fails on a forced format; every session id is
/// a valid file name; each damaged line is tallied once (no more damaged lines than lines);
/// every boundary's kept tail is bounded by `IMPORTED_KEEP_MAX_BYTES` (or its last message);
/// the records serialise and read back; the conversion is deterministic and gives what the
/// reference conversion (every line parsed whole) gives.
pub fn check_import(path: &str, data: &[u8], format: SourceFormat) {
    let path = Path::new(path);
    let Ok(sessions) = import_bytes(path, data, Some(format)) else {
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
            assert!(
                kept <= mem_session::import::IMPORTED_KEEP_MAX_BYTES.max(last),
                "{kept}"
            );
            let line = serde_json::to_string(r).expect("a record serialises");
            // The store's writer (sonic-rs) writes serde_json's bytes.
            let mut ours = Vec::new();
            mem_session::write_json(&mut ours, r).expect("a record serialises");
            assert!(ours == line.as_bytes(), "write_json differs: {line}");
            let _back: mem_session::SessionRecord =
                serde_json::from_str(&line).expect("a record reads back");
        }
    }
    // The faster readers (skimmed payloads, the Codex line reader) give what the whole parse
    // of every line gives, down to the bytes written (`==` on maps ignores key order).
    let whole = mem_session::import::import_bytes_whole(path, data, Some(format))
        .expect("a forced format never fails");
    assert!(sessions == whole, "not what the whole parse gives");
    let written = |s: &[mem_session::import::ImportedSession]| -> Vec<String> {
        s.iter()
            .flat_map(|s| &s.records)
            .map(|r| serde_json::to_string(r).expect("a record serialises"))
            .collect()
    };
    assert_eq!(
        written(&sessions),
        written(&whole),
        "not the bytes of the whole parse"
    );
    let again = import_bytes(path, data, Some(format)).ok();
    assert_eq!(again.as_ref().map(Vec::len), Some(sessions.len()));
    for (a, b) in sessions.iter().zip(again.iter().flatten()) {
        assert_eq!(a.id, b.id);
        assert_eq!(a.records, b.records, "not deterministic");
    }
}
