//! Fuzzes mem-session's forgiving JSONL reader: never panics on any bytes; every value comes
//! from a line that exists, in order; each damaged line is tallied once; the byte offsets point
//! at line starts; reading is deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mem_session::{JsonlEvent, JsonlReader, tally_damaged};

fuzz_target!(|data: &[u8]| {
    let read = || JsonlReader::new(data, "fuzz.jsonl").collect::<Vec<_>>();
    let events = read();
    let lines = data.split(|b| *b == b'\n').count();
    let mut last = 0usize;
    let mut diagnostics = Vec::new();
    for ev in &events {
        match ev {
            JsonlEvent::Value(v) => {
                assert!(v.line >= 1 && v.line <= lines, "line {} of {lines}", v.line);
                assert!(v.line >= last, "values out of order");
                last = v.line;
                let off = v.offset as usize;
                assert!(off == 0 || data[off - 1] == b'\n', "offset {off} is not a line start");
            }
            JsonlEvent::Diagnostic(d) => {
                assert!(d.line >= 1 && d.line <= lines + 1, "diagnostic line {}", d.line);
                diagnostics.push(d.clone());
            }
        }
    }
    let damaged: usize = tally_damaged(&diagnostics).values().sum();
    assert!(damaged <= lines, "{damaged} damaged of {lines} lines");
    assert_eq!(events, read(), "not deterministic");
});
