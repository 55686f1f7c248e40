//! Finding include references in the text of an instruction file. Pure: no I/O.
//!
//! Recognised forms (see `docs/formats/instructions.md`):
//!
//! - `@include <path>` (seed §5) and `@import <path>`: at the start of a line the path is the
//!   rest of the line (spaces allowed); elsewhere one word. `"..."`, `'...'` and `<...>` quote a
//!   path.
//! - `@path` (the form real CLAUDE.md / AGENTS.md files use): one word, `\ ` escapes a space,
//!   `@"path with spaces.md"` quotes one. It counts only when it looks like a file: it starts with
//!   `./`, `../`, `/` or `~/`, or its last segment has an extension (`@AGENTS.md`,
//!   `@docs/rules.mdc`). `@someone` and `@scope/package` are mentions, not includes.
//!
//! Never an include: text inside fenced code blocks (```` ``` ```` or `~~~`) or inline code
//! spans, and an `@` glued to a preceding word character (e-mail addresses). Trailing
//! punctuation is not part of a path (`@notes.md:` → `notes.md`).

use std::ops::Range;

/// Which syntax a reference used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeKind {
    /// `@include <path>` (the seed's form).
    Include,
    /// `@import <path>`.
    Import,
    /// `@path`.
    At,
}

/// One include reference found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeRef {
    /// 1-based line number.
    pub line: usize,
    /// Byte range of the reference in the text, from the `@` to the end of the path as written
    /// (quotes included, trailing punctuation excluded).
    pub span: Range<usize>,
    /// The path as meant: unquoted, `\ ` unescaped, trailing punctuation removed. May be empty
    /// for `@include` / `@import` with nothing after them.
    pub path: String,
    /// The syntax used.
    pub kind: IncludeKind,
    /// `true` when its line holds nothing but include references (plus whitespace and list or
    /// quote markers `-`, `*`, `+`, `>`): such a line is replaced by the included text.
    pub standalone: bool,
}

/// Characters removed from the end of a path: sentence punctuation and closing brackets.
const TRAILING_PUNCTUATION: &[char] = &[
    '.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"', '*', '_', '>', '`',
];

/// Finds every include reference in `text`, in order.
pub fn find_includes(text: &str) -> Vec<IncludeRef> {
    scan(text).0
}

/// An `@word` outside code that is not an include because it does not look like a file
/// (`@docs/`, `@Makefile`, `@someone`): the loader warns when it names something on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NearMiss {
    /// 1-based line number.
    pub line: usize,
    /// The word after the `@`, trailing punctuation removed.
    pub path: String,
}

/// The include references of `text` and its near misses, both in order.
pub(crate) fn scan(text: &str) -> (Vec<IncludeRef>, Vec<NearMiss>) {
    let mut refs = Vec::new();
    let mut misses = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut offset = 0;
    for (index, raw_line) in text.split_inclusive('\n').enumerate() {
        let line_start = offset;
        offset += raw_line.len();
        let line = raw_line.trim_end_matches(['\n', '\r']);
        if let Some((ch, len)) = fence {
            if fence_marker(line)
                .is_some_and(|(c, n, rest)| c == ch && n >= len && rest.trim().is_empty())
            {
                fence = None;
            }
            continue;
        }
        if let Some((c, n, _)) = fence_marker(line) {
            fence = Some((c, n));
            continue;
        }
        let first = refs.len();
        scan_line(line, line_start, index + 1, &mut refs, &mut misses);
        if refs.len() > first {
            let standalone = is_standalone(line, line_start, &refs[first..]);
            for r in &mut refs[first..] {
                r.standalone = standalone;
            }
        }
    }
    (refs, misses)
}

/// `(char, run length, rest)` when `line` opens or closes a fenced code block (up to three
/// spaces of indentation, then three or more backticks or tildes).
fn fence_marker(line: &str) -> Option<(u8, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == ch).count();
    (n >= 3).then(|| (ch, n, &rest[n..]))
}

/// Byte ranges (within `line`) of inline code spans: a run of N backticks up to the next run of
/// exactly N backticks on the same line.
fn code_spans(line: &str) -> Vec<Range<usize>> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut j = i + n;
        let mut closed = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let m = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                spans.push(i..end);
                i = end;
            }
            None => i += n,
        }
    }
    spans
}

/// `true` when the character before an `@` lets it start a reference.
fn can_precede(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => !(c.is_alphanumeric() || "@._-/\\+=%~&#$".contains(c)),
    }
}

/// The end of the longest prefix of `line` made of whitespace, then list or quote markers
/// (`-`, `*`, `+`, `>`), then whitespace: a directive starting at or before it is at the start
/// of its line.
fn marker_prefix_end(line: &str) -> usize {
    let is_marker = |c: char| "-*+>".contains(c);
    let a = line.len() - line.trim_start().len();
    let b = a + (line[a..].len() - line[a..].trim_start_matches(is_marker).len());
    b + (line[b..].len() - line[b..].trim_start().len())
}

fn scan_line(
    line: &str,
    line_start: usize,
    line_no: usize,
    refs: &mut Vec<IncludeRef>,
    misses: &mut Vec<NearMiss>,
) {
    let spans = code_spans(line);
    let prefix_end = marker_prefix_end(line);
    // `@`s are met left to right and the spans are in order: one pass over both keeps a line
    // linear however many of each it holds.
    let mut next_span = 0;
    let mut memo = Memo::default();
    let mut search = 0;
    while let Some(found) = line[search..].find('@') {
        let at = search + found;
        search = at + 1;
        while spans.get(next_span).is_some_and(|s| s.end <= at) {
            next_span += 1;
        }
        if spans.get(next_span).is_some_and(|s| s.contains(&at)) {
            continue;
        }
        if !can_precede(line[..at].chars().next_back()) {
            continue;
        }
        let after = &line[at + 1..];
        let directive = [
            ("include", IncludeKind::Include),
            ("import", IncludeKind::Import),
        ]
        .into_iter()
        .find(|(word, _)| {
            after.starts_with(word)
                && after[word.len()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        });
        let parsed = match directive {
            Some((word, kind)) => {
                let arg_start = at + 1 + word.len();
                let ws = line[arg_start..].len() - line[arg_start..].trim_start().len();
                let at_line_start = at <= prefix_end;
                let (path, end) = directive_path(line, arg_start + ws, at_line_start, &mut memo);
                Some((kind, path, end))
            }
            None => match at_path(line, at + 1, &mut memo) {
                Some((path, end)) => Some((IncludeKind::At, path, end)),
                None => {
                    if let Some(path) = memo.near_miss(line, at + 1) {
                        misses.push(NearMiss {
                            line: line_no,
                            path,
                        });
                    }
                    None
                }
            },
        };
        if let Some((kind, path, end)) = parsed {
            refs.push(IncludeRef {
                line: line_no,
                span: line_start + at..line_start + end,
                path,
                kind,
                standalone: false,
            });
            search = end.max(search);
        }
    }
}

/// What the scan of one line remembers between its `@`s, so that a line is scanned in linear
/// time however many `@`s it holds: the `@`s are met left to right, and an unclosed quote or a
/// long word that is not a path would otherwise be scanned again from every `@` inside it.
#[derive(Default)]
struct Memo {
    /// For `"`, `'` and `>`: `(from, next)`, the next occurrence at or after `from`.
    closes: [Option<(usize, Option<usize>)>; 3],
    /// The last word examined by [`looks_like_file_at`].
    word: Option<WordShape>,
    /// The start of that word when the last question read it afresh (not inside an earlier
    /// word).
    fresh: Option<usize>,
}

/// The shape of the raw word `line[start..raw_end]`, enough to tell for any later start inside
/// it whether the rest looks like a file.
#[derive(Clone, Copy)]
struct WordShape {
    start: usize,
    raw_end: usize,
    /// `raw_end` less trailing punctuation (never below `start`).
    path_end: usize,
    /// The last `/` in `start..path_end`.
    last_slash: Option<usize>,
    /// The last `.` after `last_slash` (or `start`) in `start..path_end`.
    last_dot: Option<usize>,
    /// The text after `last_dot` is non-empty and ASCII alphanumeric.
    ext_ok: bool,
}

impl Memo {
    /// The next `close` at or after `from` in `line`.
    fn find_close(&mut self, line: &str, from: usize, close: char) -> Option<usize> {
        let slot = match close {
            '"' => 0,
            '\'' => 1,
            _ => 2,
        };
        if let Some((asked, next)) = self.closes[slot]
            && asked <= from
            && next.is_none_or(|n| n >= from)
        {
            return next;
        }
        let next = line[from..].find(close).map(|p| from + p);
        self.closes[slot] = Some((from, next));
        next
    }

    /// [`looks_like_file`] of the word at `start` (as [`word`] would read it), without reading
    /// the word again when `start` lies inside the last one examined.
    fn looks_like_file_at(&mut self, line: &str, start: usize) -> bool {
        self.fresh = None;
        let shape = match self.word {
            Some(w) if w.start <= start && start < w.raw_end => w,
            _ => {
                let w = word_shape(line, start);
                self.word = Some(w);
                self.fresh = Some(start);
                w
            }
        };
        if start >= shape.path_end {
            return false;
        }
        let path = &line[start..shape.path_end];
        if ["./", "../", "/", "~/"].iter().any(|p| path.starts_with(p)) {
            return true;
        }
        let segment_start = shape
            .last_slash
            .filter(|&p| p >= start)
            .map_or(start, |p| p + 1);
        shape
            .last_dot
            .filter(|&d| d >= segment_start)
            .is_some_and(|d| d > segment_start && shape.ext_ok)
    }
}

impl Memo {
    /// The word at `start` when [`Memo::looks_like_file_at`] just rejected it and it was not
    /// part of an earlier word (so each word is copied at most once): non-empty, without `@`,
    /// at most 4096 bytes.
    fn near_miss(&self, line: &str, start: usize) -> Option<String> {
        let w = self.word.filter(|_| self.fresh == Some(start))?;
        let path = &line[start..w.path_end.max(start)];
        (!path.is_empty() && path.len() <= 4096 && !path.contains('@')).then(|| word(line, start).0)
    }
}

/// Reads the raw word at `start` once: where it ends (unescaped whitespace), where its path
/// ends (trailing punctuation removed), its last `/` and `.`.
fn word_shape(line: &str, start: usize) -> WordShape {
    let bytes = line.as_bytes();
    let mut raw_end = line.len();
    for (i, c) in line[start..].char_indices() {
        let i = start + i;
        // `\ ` escapes a space (the byte before `start` is the `@`, never a backslash).
        if c.is_whitespace() && !(c == ' ' && i > start && bytes[i - 1] == b'\\') {
            raw_end = i;
            break;
        }
    }
    let path_end = start
        + line[start..raw_end]
            .trim_end_matches(TRAILING_PUNCTUATION)
            .len();
    let last_slash = line[start..path_end].rfind('/').map(|p| start + p);
    let segment_start = last_slash.map_or(start, |p| p + 1);
    let last_dot = line[segment_start..path_end]
        .rfind('.')
        .map(|p| segment_start + p);
    let ext_ok = last_dot.is_some_and(|d| {
        let ext = &line[d + 1..path_end];
        !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    WordShape {
        start,
        raw_end,
        path_end,
        last_slash,
        last_dot,
        ext_ok,
    }
}

/// The path of `@include` / `@import` starting at `start`; `(path, end of reference)`.
fn directive_path(
    line: &str,
    start: usize,
    rest_of_line: bool,
    memo: &mut Memo,
) -> (String, usize) {
    if let Some(q) = quoted(line, start, memo) {
        return q;
    }
    if rest_of_line {
        let end = line.trim_end().len().max(start);
        let (path, end) = strip_trailing(&line[start..end], start);
        return (path.to_owned(), end);
    }
    word(line, start)
}

/// The path of an `@path` reference starting after the `@`, when it looks like a file.
fn at_path(line: &str, start: usize, memo: &mut Memo) -> Option<(String, usize)> {
    if line[start..].starts_with('"')
        && let Some((path, end)) = quoted(line, start, memo)
    {
        return looks_like_file(&path).then_some((path, end));
    }
    // Most `@`s are not paths: decide before building the word.
    if !memo.looks_like_file_at(line, start) {
        return None;
    }
    let (path, end) = word(line, start);
    looks_like_file(&path).then_some((path, end))
}

/// A path quoted with `"..."`, `'...'` or `<...>` at `start`, when the closing quote is on the
/// line; `(path, end after the closing quote)`.
fn quoted(line: &str, start: usize, memo: &mut Memo) -> Option<(String, usize)> {
    let close = match line[start..].chars().next()? {
        '"' => '"',
        '\'' => '\'',
        '<' => '>',
        _ => return None,
    };
    let inner_start = start + 1;
    let close_at = memo.find_close(line, inner_start, close)?;
    Some((line[inner_start..close_at].to_owned(), close_at + 1))
}

/// One whitespace-delimited word at `start` (`\ ` escapes a space), trailing punctuation
/// removed; `(word, end)`.
fn word(line: &str, start: usize) -> (String, usize) {
    let mut out = String::new();
    let mut end = start;
    let mut chars = line[start..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|&(_, n)| n == ' ') {
            chars.next();
            out.push(' ');
            end = start + i + 2;
            continue;
        }
        if c.is_whitespace() {
            break;
        }
        out.push(c);
        end = start + i + c.len_utf8();
    }
    let kept = out.trim_end_matches(TRAILING_PUNCTUATION).len();
    let removed = out.len() - kept;
    out.truncate(kept);
    (out, end - removed)
}

/// Removes trailing punctuation from `s` (which starts at `start` in its line).
fn strip_trailing(s: &str, start: usize) -> (&str, usize) {
    let kept = s.trim_end_matches(TRAILING_PUNCTUATION);
    (kept, start + kept.len())
}

/// `true` for `./x`, `../x`, `/x`, `~/x`, or a last segment with an extension (`x.md`).
fn looks_like_file(path: &str) -> bool {
    if path.is_empty() {
        return false;
    }
    if ["./", "../", "/", "~/"].iter().any(|p| path.starts_with(p)) {
        return true;
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    match last.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// `true` when the line holds only the references (and whitespace or list/quote markers).
fn is_standalone(line: &str, line_start: usize, refs: &[IncludeRef]) -> bool {
    let mut pos = 0;
    let mut rest = String::new();
    for r in refs {
        let (s, e) = (r.span.start - line_start, r.span.end - line_start);
        rest.push_str(&line[pos..s]);
        pos = e;
    }
    rest.push_str(&line[pos..]);
    rest.chars()
        .all(|c| c.is_whitespace() || "-*+>".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(line, path, kind, standalone)` of every reference in `text`.
    fn check(text: &str, want: &[(usize, &str, IncludeKind, bool)]) {
        let got: Vec<_> = find_includes(text)
            .into_iter()
            .map(|r| {
                assert_eq!(&text[r.span.start..r.span.start + 1], "@", "{r:?}");
                (r.line, r.path, r.kind, r.standalone)
            })
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|&(l, p, k, s)| (l, p.to_owned(), k, s))
            .collect();
        assert_eq!(got, want);
    }

    use IncludeKind::{At, Import, Include};

    #[test]
    fn seed_form_and_import() {
        check(
            "@include docs/style.md\n  @import rules.txt\n",
            &[
                (1, "docs/style.md", Include, true),
                (2, "rules.txt", Import, true),
            ],
        );
    }

    #[test]
    fn directive_paths_with_spaces_and_quotes() {
        check(
            "@include my notes.md\n@include \"a b.md\" and more\n@import <c d.md>\n",
            &[
                (1, "my notes.md", Include, true),
                (2, "a b.md", Include, false),
                (3, "c d.md", Import, true),
            ],
        );
        // Not at the start of the line: one word.
        check(
            "see @include x.md for more\n",
            &[(1, "x.md", Include, false)],
        );
    }

    #[test]
    fn at_form_inline_and_standalone() {
        check(
            "@FLAGS.md\n- @RULES.md\nSee @AGENTS.md for details.\n@a.md @b.md\n",
            &[
                (1, "FLAGS.md", At, true),
                (2, "RULES.md", At, true),
                (3, "AGENTS.md", At, false),
                (4, "a.md", At, true),
                (4, "b.md", At, true),
            ],
        );
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_the_path() {
        check(
            "x @notes.md: y @b.md, (@c.md) @CLAUDE.md. \"@d.md\" @e.md!\n",
            &[
                (1, "notes.md", At, false),
                (1, "b.md", At, false),
                (1, "c.md", At, false),
                (1, "CLAUDE.md", At, false),
                (1, "d.md", At, false),
                (1, "e.md", At, false),
            ],
        );
    }

    #[test]
    fn escaped_and_quoted_spaces() {
        check(
            "@my\\ notes.md\n@\"other notes.txt\" x\n",
            &[
                (1, "my notes.md", At, true),
                (2, "other notes.txt", At, false),
            ],
        );
    }

    #[test]
    fn non_md_targets_and_relative_prefixes() {
        check(
            "@.cursor/rules/general.mdc @notes.txt @./README @../x @~/y @/abs\n",
            &[
                (1, ".cursor/rules/general.mdc", At, true),
                (1, "notes.txt", At, true),
                (1, "./README", At, true),
                (1, "../x", At, true),
                (1, "~/y", At, true),
                (1, "/abs", At, true),
            ],
        );
    }

    #[test]
    fn not_includes() {
        check(
            concat!(
                "mail dev@example.com or a@b.md\n",
                "thanks @someone and @tanstack/react-router, '@tanstack/react-start'\n",
                "inline `@include x.md` and ``@y.md`` code\n",
                "```sh\n@include fenced.md\n```\n",
                "~~~~\n@z.md\n```\n@still-fenced.md\n~~~~\n",
                "@ alone, @. @.md\n",
            ),
            &[],
        );
    }

    #[test]
    fn unclosed_code_span_and_fence_indentation() {
        check("a ` b @x.md\n", &[(1, "x.md", At, false)]);
        // Four spaces: not a fence, so the next line is scanned.
        check("    ```\n@y.md\n", &[(2, "y.md", At, true)]);
        // An unclosed fence hides the rest of the file.
        check("```\n@y.md\n", &[]);
    }

    #[test]
    fn empty_directive_path() {
        check("@include \n", &[(1, "", Include, true)]);
        check(
            "@include\n@import",
            &[(1, "", Include, true), (2, "", Import, true)],
        );
        // A word that merely starts like a directive is an `@path`.
        check("@includes.md\n", &[(1, "includes.md", At, true)]);
        check("@include  \"\"\n", &[(1, "", Include, true)]);
    }

    #[test]
    fn directive_at_line_start_after_markers() {
        check(
            "  - > @include my notes.md\n-> @include a b.md\n",
            &[(1, "my", Include, false), (2, "a b.md", Include, true)],
        );
    }

    /// The memo's answer for every `@` of many generated lines equals reading the word and
    /// testing it, from each start, in the order the scan asks.
    #[test]
    fn memo_agrees_with_reading_the_word() {
        let alphabet: Vec<char> = "ab.@/\\ ~()<>\"'`:,é\t-".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let len = (seed % 24) as usize;
            let line: String = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    alphabet[(seed >> 33) as usize % alphabet.len()]
                })
                .collect();
            let mut memo = Memo::default();
            for (at, _) in line.match_indices('@') {
                let start = at + 1;
                let want = looks_like_file(&word(&line, start).0);
                assert_eq!(
                    memo.looks_like_file_at(&line, start),
                    want,
                    "{line:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn crlf_and_no_trailing_newline() {
        check(
            "@a.md\r\n@b.md",
            &[(1, "a.md", At, true), (2, "b.md", At, true)],
        );
    }

    #[test]
    fn spans_cover_what_was_written() {
        let text = "x @\"a b.md\", @c.md.\n";
        let spans: Vec<&str> = find_includes(text)
            .iter()
            .map(|r| &text[r.span.clone()])
            .collect();
        assert_eq!(spans, ["@\"a b.md\"", "@c.md"]);
    }
}
