//! The `memories.md` model: the four seed categories as `###` sections of `- ` bullets, with
//! every other line a person wrote (prose, other headings, comments, code) kept where it was
//! (seed 000 §3 "记忆格式"; format in `docs/formats/memories.md`).
//!
//! Parsing never fails: a line that is not an entry is kept verbatim. Rendering a parsed
//! document gives back the same bytes (a leading byte-order mark aside); edits touch only the
//! lines of the entries they change.

use mem_llm::MemoryCategory;

use crate::id::{EntryId, normalise};

/// Which headings are written for a category that has no section yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeadingStyle {
    /// The seed's headings: `### 用户偏好`, `### 纠正反馈`, `### 项目知识`, `### 参考资料`.
    #[default]
    Seed,
    /// English headings: `### User preferences`, `### Corrections`, `### Project knowledge`,
    /// `### References`.
    English,
}

impl HeadingStyle {
    /// The heading text (without `### `) written for `category`.
    pub fn heading(self, category: MemoryCategory) -> &'static str {
        match self {
            HeadingStyle::Seed => category.heading(),
            HeadingStyle::English => category.heading_en(),
        }
    }

    /// Parses `seed` or `english` (configuration value).
    pub fn parse(value: &str) -> Option<HeadingStyle> {
        match value.trim().to_ascii_lowercase().as_str() {
            "seed" | "chinese" | "zh" => Some(HeadingStyle::Seed),
            "english" | "en" => Some(HeadingStyle::English),
            _ => None,
        }
    }
}

/// The category a heading names, if any: the seed's heading or an English one, any case, an
/// optional trailing colon. `用户偏好`, `User preferences`, `Preferences` → preference.
pub fn category_of_heading(title: &str) -> Option<MemoryCategory> {
    let t = title
        .trim()
        .trim_end_matches([':', '：'])
        .trim()
        .to_lowercase();
    MemoryCategory::ALL.into_iter().find(|c| {
        t == c.heading()
            || t == c.heading_en().to_lowercase()
            || match c {
                MemoryCategory::Preference => {
                    ["preferences", "user preference", "偏好"].contains(&t.as_str())
                }
                MemoryCategory::Correction => {
                    ["correction feedback", "feedback", "纠正"].contains(&t.as_str())
                }
                MemoryCategory::Project => {
                    ["project", "project facts", "project notes"].contains(&t.as_str())
                }
                MemoryCategory::Reference => ["reference", "links", "参考"].contains(&t.as_str()),
            }
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A heading of one of the four categories, with its level (number of `#`).
    CategoryHeading(MemoryCategory, usize),
    /// A bullet in a category section: one entry.
    Entry(MemoryCategory),
    /// An indented line right after an entry: part of it (removed with it).
    Continuation,
    /// Anything else: kept as written.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    /// The line without its `\n` (a `\r` of a CRLF file stays here).
    raw: String,
    kind: Kind,
    /// The entry's id, computed once when the line is read or written (entries only).
    id: Option<EntryId>,
    /// In the unparsed region: from an unclosed code fence or HTML comment to the end of the
    /// file. Nothing is added there (an entry there could not be read back).
    unparsed: bool,
}

/// One entry of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its id.
    pub id: EntryId,
    /// Its category (the section it is in).
    pub category: MemoryCategory,
    /// The text after the bullet marker, trimmed.
    pub text: String,
    /// 1-based line number in the file.
    pub line: usize,
}

/// A problem found while parsing; the document is still usable and nothing is lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseWarning {
    /// 1-based line.
    pub line: usize,
    /// A sentence for a person.
    pub message: String,
}

/// A parsed `memories.md`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document {
    lines: Vec<Line>,
    /// The text ended with a newline (or was empty).
    trailing_newline: bool,
    /// Lines end with `\r\n`.
    crlf: bool,
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_end_matches('\r');
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim();
    Some((level, title))
}

fn bullet(line: &str) -> Option<&str> {
    let line = line.trim_end_matches('\r');
    let rest = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))?;
    let text = rest.trim();
    (!text.is_empty()).then_some(text)
}

impl Document {
    /// Parses `text` (a leading byte-order mark is ignored). Never fails; odd markdown gives
    /// warnings (an unclosed code fence or comment: the lines after it are kept, not read as
    /// entries).
    pub fn parse(text: &str) -> (Document, Vec<ParseWarning>) {
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let mut warnings = Vec::new();
        let mut lines = Vec::new();
        let mut section: Option<(MemoryCategory, usize)> = None;
        let mut fence: Option<(String, usize)> = None;
        let mut comment_from: Option<usize> = None;
        let mut after_entry = false;
        let body = text.strip_suffix('\n').unwrap_or(text);
        let crlf = text.contains("\r\n");
        if !text.is_empty() {
            for (i, raw) in body.split('\n').enumerate() {
                let trimmed = raw.trim();
                let kind = if let Some((marker, _)) = &fence {
                    if trimmed.starts_with(marker.as_str()) {
                        fence = None;
                    }
                    Kind::Other
                } else if comment_from.is_some() {
                    if trimmed.contains("-->") {
                        comment_from = None;
                    }
                    Kind::Other
                } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                    let marker: String = trimmed
                        .chars()
                        .take_while(|c| *c == '`' || *c == '~')
                        .collect();
                    fence = Some((marker, i + 1));
                    Kind::Other
                } else if trimmed.starts_with("<!--") {
                    if !trimmed.contains("-->") {
                        comment_from = Some(i + 1);
                    }
                    Kind::Other
                } else if let Some((level, title)) = heading(raw) {
                    match category_of_heading(title) {
                        Some(c) => {
                            section = Some((c, level));
                            Kind::CategoryHeading(c, level)
                        }
                        None => {
                            if section.is_some_and(|(_, l)| level <= l) {
                                section = None;
                            }
                            Kind::Other
                        }
                    }
                } else if let (Some((c, _)), Some(_)) = (section, bullet(raw)) {
                    Kind::Entry(c)
                } else if after_entry && raw.starts_with([' ', '\t']) && !trimmed.is_empty() {
                    Kind::Continuation
                } else {
                    Kind::Other
                };
                after_entry = matches!(kind, Kind::Entry(_) | Kind::Continuation);
                let id =
                    matches!(kind, Kind::Entry(_)).then(|| EntryId::of(bullet(raw).unwrap_or("")));
                lines.push(Line {
                    raw: raw.to_owned(),
                    kind,
                    id,
                    unparsed: false,
                });
            }
        }
        // The unclosed fence or comment (whichever opened first) starts the unparsed region.
        let unparsed_from = [fence.as_ref().map(|(_, l)| *l), comment_from]
            .into_iter()
            .flatten()
            .min();
        if let Some(from) = unparsed_from {
            for line in lines.iter_mut().skip(from - 1) {
                line.unparsed = true;
            }
        }
        if let Some((_, line)) = fence {
            warnings.push(ParseWarning {
                line,
                message: "code fence not closed: the lines after it are kept as written and not read as entries".to_owned(),
            });
        }
        if let Some(line) = comment_from {
            warnings.push(ParseWarning {
                line,
                message: "HTML comment not closed: the lines after it are kept as written and not read as entries".to_owned(),
            });
        }
        (
            Document {
                lines,
                trailing_newline: text.is_empty() || text.ends_with('\n'),
                crlf,
            },
            warnings,
        )
    }

    /// The text: the parsed bytes where nothing changed.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&line.raw);
        }
        if self.trailing_newline && !self.lines.is_empty() {
            out.push('\n');
        }
        out
    }

    /// The entries, in file order.
    pub fn entries(&self) -> Vec<Entry> {
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match l.kind {
                Kind::Entry(category) => {
                    let text = bullet(&l.raw).unwrap_or("").to_owned();
                    Some(Entry {
                        id: l.id.unwrap_or_else(|| EntryId::of(&text)),
                        category,
                        text,
                        line: i + 1,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// `true` when the document has no entry.
    pub fn has_entries(&self) -> bool {
        self.lines.iter().any(|l| matches!(l.kind, Kind::Entry(_)))
    }

    fn index_of(&self, id: EntryId) -> Option<usize> {
        self.lines
            .iter()
            .position(|l| matches!(l.kind, Kind::Entry(_)) && l.id == Some(id))
    }

    /// The entry with `id`, if any.
    pub fn get(&self, id: EntryId) -> Option<Entry> {
        let i = self.index_of(id)?;
        let Kind::Entry(category) = self.lines[i].kind else {
            return None;
        };
        Some(Entry {
            id,
            category,
            text: bullet(&self.lines[i].raw).unwrap_or("").to_owned(),
            line: i + 1,
        })
    }

    /// Whether an entry with this normalised text exists (any category).
    pub fn contains_text(&self, text: &str) -> bool {
        let n = normalise(text);
        self.entries().iter().any(|e| normalise(&e.text) == n)
    }

    /// Removes the entry `id` and its indented continuation lines; returns it. A section left
    /// empty keeps its heading (a person may have put it there).
    pub fn remove(&mut self, id: EntryId) -> Option<Entry> {
        let entry = self.get(id)?;
        let i = entry.line - 1;
        let mut end = i + 1;
        while end < self.lines.len() && self.lines[end].kind == Kind::Continuation {
            end += 1;
        }
        self.lines.drain(i..end);
        Some(entry)
    }

    /// Replaces the text of entry `id` (its bullet marker and continuation lines are kept);
    /// returns the new entry's id.
    pub fn replace(&mut self, id: EntryId, text: &str) -> Option<EntryId> {
        let i = self.index_of(id)?;
        let raw = &self.lines[i].raw;
        let marker = &raw[..2];
        let cr = if raw.ends_with('\r') { "\r" } else { "" };
        let new_raw = format!("{marker}{}{cr}", one_line(text));
        let new_id = EntryId::of(text);
        self.lines[i].raw = new_raw;
        self.lines[i].id = Some(new_id);
        Some(new_id)
    }

    /// Adds an entry at the end of the (last) section of `category`; when there is none, a new
    /// `### <heading>` section is made before the first section of a later category, else
    /// before an unclosed code fence or HTML comment (whose lines are not read as entries), else
    /// at the end. Returns the entry's id.
    pub fn add(&mut self, category: MemoryCategory, text: &str, style: HeadingStyle) -> EntryId {
        let text = one_line(text);
        let cr = if self.crlf { "\r" } else { "" };
        let id = EntryId::of(&text);
        let entry = Line {
            raw: format!("- {text}{cr}"),
            kind: Kind::Entry(category),
            id: Some(id),
            unparsed: false,
        };
        let last_heading = self
            .lines
            .iter()
            .rposition(|l| matches!(l.kind, Kind::CategoryHeading(c, _) if c == category));
        if let Some(h) = last_heading {
            // After the last entry (or continuation) of the section, else right after the heading.
            let mut at = h + 1;
            let mut i = h + 1;
            while i < self.lines.len() {
                match &self.lines[i].kind {
                    Kind::Entry(c) if *c == category => at = i + 1,
                    Kind::Continuation if at == i => at = i + 1,
                    Kind::CategoryHeading(..) => break,
                    Kind::Other if heading(&self.lines[i].raw).is_some() => break,
                    _ => {}
                }
                i += 1;
            }
            self.lines.insert(at, entry);
            return id;
        }
        let order = |c: MemoryCategory| MemoryCategory::ALL.iter().position(|x| *x == c);
        let later = self.lines.iter().position(
            |l| matches!(l.kind, Kind::CategoryHeading(c, _) if order(c) > order(category)),
        );
        let head = Line {
            raw: format!("### {}{cr}", style.heading(category)),
            kind: Kind::CategoryHeading(category, 3),
            id: None,
            unparsed: false,
        };
        let blank = || Line {
            raw: cr.to_owned(),
            kind: Kind::Other,
            id: None,
            unparsed: false,
        };
        // A new section never goes into the unparsed region (an unclosed fence or comment):
        // it is put before it, so that it is read back (and not added again on the next run).
        let later = later.or_else(|| self.lines.iter().position(|l| l.unparsed));
        match later {
            Some(at) => {
                self.lines.splice(at..at, [head, entry, blank()]);
            }
            None => {
                if self.lines.last().is_some_and(|l| !l.raw.trim().is_empty()) {
                    self.lines.push(blank());
                }
                self.lines.push(head);
                self.lines.push(entry);
                self.trailing_newline = true;
            }
        }
        id
    }
}

/// Whitespace runs (newlines included) collapsed to one space: an entry is one line.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAND: &str = "# My memories\n\nSome prose a person wrote.\n\n### 用户偏好\n- 变量命名用 snake_case\n  (since 2024)\n* commit message 用英文\n<!-- keep this comment -->\n\n## Notes\n- not an entry\n\n### Project knowledge\n- Uses uv\n```\n- in a fence\n```\n";

    #[test]
    fn round_trips_byte_for_byte() {
        for text in [
            HAND,
            "",
            "no newline",
            "- a\r\n### 参考资料\r\n- b\r\n",
            "\n\n",
        ] {
            assert_eq!(Document::parse(text).0.render(), text);
        }
    }

    #[test]
    fn reads_entries_of_both_heading_styles_only_in_sections() {
        let (doc, warnings) = Document::parse(HAND);
        assert!(warnings.is_empty());
        let got: Vec<(MemoryCategory, String, usize)> = doc
            .entries()
            .into_iter()
            .map(|e| (e.category, e.text, e.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    MemoryCategory::Preference,
                    "变量命名用 snake_case".into(),
                    6
                ),
                (
                    MemoryCategory::Preference,
                    "commit message 用英文".into(),
                    8
                ),
                (MemoryCategory::Project, "Uses uv".into(), 15),
            ]
        );
    }

    #[test]
    fn edits_touch_only_their_lines() {
        let (mut doc, _) = Document::parse(HAND);
        let id = EntryId::of("变量命名用 snake_case");
        assert!(doc.remove(id).is_some());
        doc.add(
            MemoryCategory::Preference,
            "Always use pnpm",
            HeadingStyle::Seed,
        );
        doc.add(
            MemoryCategory::Reference,
            "Docs: https://x.dev",
            HeadingStyle::Seed,
        );
        doc.add(
            MemoryCategory::Correction,
            "Python, not Go",
            HeadingStyle::English,
        );
        let new = doc.replace(EntryId::of("uses uv"), "Uses uv 0.5").unwrap();
        assert_eq!(new, EntryId::of("Uses uv 0.5"));
        assert_eq!(
            doc.render(),
            "# My memories\n\nSome prose a person wrote.\n\n### 用户偏好\n* commit message 用英文\n- Always use pnpm\n<!-- keep this comment -->\n\n## Notes\n- not an entry\n\n### Corrections\n- Python, not Go\n\n### Project knowledge\n- Uses uv 0.5\n```\n- in a fence\n```\n\n### 参考资料\n- Docs: https://x.dev\n"
        );
    }

    #[test]
    fn unclosed_fence_is_a_warning_and_kept() {
        let text = "### 用户偏好\n- a\n```\n- b\n";
        let (doc, warnings) = Document::parse(text);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].line, 3);
        assert_eq!(doc.entries().len(), 1);
        assert_eq!(doc.render(), text);
    }

    #[test]
    fn a_new_section_goes_before_an_unclosed_fence_or_comment() {
        for (text, opener) in [
            ("### 用户偏好\n- a\n\n```\n- b\n", "```"),
            ("### 用户偏好\n- a\n<!-- draft\n- b\n", "<!-- draft"),
            ("```sh\nmake\n", "```sh"),
        ] {
            let (mut doc, _) = Document::parse(text);
            doc.add(MemoryCategory::Project, "Uses uv", HeadingStyle::Seed);
            let out = doc.render();
            let (again, _) = Document::parse(&out);
            // The entry is read back, so the next run finds it instead of adding it again.
            assert!(again.contains_text("Uses uv"), "{out}");
            assert!(
                out.find("- Uses uv").unwrap() < out.find(opener).unwrap(),
                "{out}"
            );
            // A second entry of the category joins the section: one heading only.
            let (mut doc, _) = Document::parse(&out);
            doc.add(
                MemoryCategory::Project,
                "Tests with nextest",
                HeadingStyle::Seed,
            );
            let out = doc.render();
            assert_eq!(out.matches("### 项目知识").count(), 1, "{out}");
            let before = Document::parse(text).0.entries().len();
            assert_eq!(Document::parse(&out).0.entries().len(), before + 2, "{out}");
            // What followed the fence or comment is kept as written.
            assert!(out.ends_with(&text[text.find(opener).unwrap()..]), "{out}");
        }
    }

    #[test]
    fn adds_to_an_empty_document() {
        let mut doc = Document::default();
        doc.add(
            MemoryCategory::Project,
            "Tests live in tests/",
            HeadingStyle::Seed,
        );
        doc.add(
            MemoryCategory::Preference,
            "Always use pnpm",
            HeadingStyle::Seed,
        );
        assert_eq!(
            doc.render(),
            "### 用户偏好\n- Always use pnpm\n\n### 项目知识\n- Tests live in tests/\n"
        );
    }
}
