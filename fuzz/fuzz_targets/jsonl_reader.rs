//! Fuzzes mem-session's forgiving JSONL reader: never panics on any bytes; every value comes
//! from a line that exists, in order; each damaged line is tallied once; the byte offsets point
//! at line starts; reading is deterministic. Read again with `skim_payloads` (the Codex
//! importer's reading), the reader gives the same events, except that a value may have its
//! `payload` object reduced to its `type` field, and only when its top-level `type` is skimmed.
//! Each line's values are exactly those serde_json reads as `Value`s from the line's text (the
//! reader builds them its own way: objects and arrays allocated at their final size), and
//! `mem_session::write_json` writes each of them as serde_json does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mem_session::{JsonlEvent, JsonlReader, tally_damaged};
use serde_json::Value;

/// The types the fuzzed reading skims (the Codex importer's, and one it does not use).
const SKIMMED: &[&str] = &["event_msg", "turn_context", "x"];

/// `value` with its `payload` reduced as `skim_payloads` reduces it, if the skim applies.
fn reduced(value: &Value) -> Option<Value> {
    let obj = value.as_object()?;
    let ty = obj.get("type")?.as_str()?;
    let payload = obj.get("payload")?.as_object()?;
    if !SKIMMED.contains(&ty) {
        return None;
    }
    let mut kept = serde_json::Map::new();
    if let Some(t) = payload.get("type") {
        kept.insert("type".to_owned(), t.clone());
    }
    let mut out = obj.clone();
    out.insert("payload".to_owned(), Value::Object(kept));
    Some(Value::Object(out))
}

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
                assert!(
                    off == 0 || data[off - 1] == b'\n',
                    "offset {off} is not a line start"
                );
            }
            JsonlEvent::Diagnostic(d) => {
                assert!(
                    d.line >= 1 && d.line <= lines + 1,
                    "diagnostic line {}",
                    d.line
                );
                diagnostics.push(d.clone());
            }
        }
    }
    let mut by_line: std::collections::HashMap<usize, Vec<&Value>> = Default::default();
    for ev in &events {
        if let JsonlEvent::Value(v) = ev {
            by_line.entry(v.line).or_default().push(&v.value);
        }
    }
    for (i, raw) in data.split(|b| *b == b'\n').enumerate() {
        let mut raw = raw;
        if i == 0 {
            raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        }
        raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = String::from_utf8_lossy(raw);
        let expected: Vec<Value> = serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .map_while(Result::ok)
            .collect();
        let got = by_line.remove(&(i + 1)).unwrap_or_default();
        assert!(
            got.iter().copied().eq(expected.iter()),
            "line {}: {got:?} / {expected:?}",
            i + 1
        );
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g.to_string(), e.to_string(), "key order, line {}", i + 1);
            // The store's writer (sonic-rs) writes what serde_json writes, on any value.
            let mut ours = Vec::new();
            mem_session::write_json(&mut ours, *g).expect("a value serialises");
            assert!(
                ours == g.to_string().as_bytes(),
                "write_json differs, line {}",
                i + 1
            );
        }
    }
    let damaged: usize = tally_damaged(&diagnostics).values().sum();
    assert!(damaged <= lines, "{damaged} damaged of {lines} lines");
    assert_eq!(events, read(), "not deterministic");

    let skimmed: Vec<_> = JsonlReader::new(data, "fuzz.jsonl")
        .skim_payloads(SKIMMED)
        .collect();
    assert_eq!(
        skimmed.len(),
        events.len(),
        "skimming changed the number of events"
    );
    for (s, e) in skimmed.iter().zip(&events) {
        match (s, e) {
            (JsonlEvent::Value(s), JsonlEvent::Value(e)) => {
                assert_eq!((s.line, s.offset), (e.line, e.offset));
                if s.value != e.value {
                    assert_eq!(
                        Some(&s.value),
                        reduced(&e.value).as_ref(),
                        "skimmed wrongly"
                    );
                }
            }
            (JsonlEvent::Diagnostic(s), JsonlEvent::Diagnostic(e)) => assert_eq!(s, e),
            _ => panic!("skimming changed an event's kind: {s:?} / {e:?}"),
        }
    }
});
