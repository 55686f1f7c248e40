//! Fuzzes mem-recall's frontmatter: `parse` and `candidate` never panic on any text and agree,
//! a parsed block never leaks into the body, and a note written by `render_note` from any name
//! and description parses back to exactly those (one-lined) values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mem_recall::frontmatter::{FRONTMATTER_MAX_LINES, candidate, parse};
use mem_recall::{NewNote, render_note};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    let (file, _warning) = parse(text);
    if file.frontmatter != Default::default() {
        // The block came from the top of the text and ended within the line limit.
        let t = text.strip_prefix('\u{feff}').unwrap_or(text);
        assert!(t.lines().next().is_some_and(|l| l.trim() == "---"));
        let body_lines = file.body.lines().count();
        assert!(t.lines().count() - body_lines <= FRONTMATTER_MAX_LINES + 1);
    }
    // `candidate` is `parse` plus the fallbacks (deterministic: the same fields come back).
    let (c, _) = candidate("fuzz.md".to_owned(), text);
    assert!(!c.name.is_empty(), "a candidate always has a name");
    assert_eq!(c.id, "fuzz.md");
    assert_eq!(c.body, file.body);
    if let Some(d) = &file.frontmatter.description {
        assert_eq!(&c.description, d.trim());
    }

    // Round trip: any name / description, written by render_note, reads back.
    let mut parts = text.splitn(3, '\u{1}');
    let name = parts.next().unwrap_or("");
    let description = parts.next().unwrap_or("");
    let body = parts.next().unwrap_or("");
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let note = NewNote {
        name: name.to_owned(),
        description: description.to_owned(),
        kind: "project".to_owned(),
        body: body.to_owned(),
    };
    let written = render_note(&note);
    let (back, warning) = parse(&written);
    assert_eq!(warning, None, "{written:?}");
    assert_eq!(
        back.frontmatter.name.as_deref(),
        Some(one_line(name).as_str()),
        "{written:?}"
    );
    assert_eq!(
        back.frontmatter.description.as_deref(),
        Some(one_line(description).as_str()),
        "{written:?}"
    );
    assert_eq!(back.frontmatter.kind.as_deref(), Some("project"));
});
