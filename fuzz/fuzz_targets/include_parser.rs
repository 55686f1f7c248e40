//! Fuzzes `mem_instructions::find_includes`: no panic on any text, and every reference it
//! returns is consistent with the text it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mem_instructions::{IncludeKind, find_includes};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let refs = find_includes(text);
    let mut last_line = 0;
    let mut last_end = 0;
    for r in &refs {
        // Spans are in order, inside the text, on character boundaries, start at an `@`.
        assert!(r.span.start >= last_end, "{r:?}");
        assert!(
            r.span.end <= text.len() && r.span.start < r.span.end,
            "{r:?}"
        );
        assert!(text.is_char_boundary(r.span.start) && text.is_char_boundary(r.span.end));
        assert_eq!(&text[r.span.start..r.span.start + 1], "@");
        // The line number is the span's line; a reference never spans lines.
        let line = text[..r.span.start].matches('\n').count() + 1;
        assert_eq!(r.line, line, "{r:?}");
        assert!(!text[r.span.clone()].contains('\n'), "{r:?}");
        assert!(r.line >= last_line);
        assert!(!r.path.contains('\n'));
        // An `@path` reference always has a path; a directive may have none (warned later).
        if r.kind == IncludeKind::At {
            assert!(!r.path.is_empty(), "{r:?}");
        }
        last_line = r.line;
        last_end = r.span.end;
    }
    // Parsing is a function of the text.
    assert_eq!(find_includes(text), refs);
});
