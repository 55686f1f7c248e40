//! Tier 2 (seed 003 "完整存档"): the whole memory as one document, exported as JSON or
//! Markdown and imported back from the JSON form (`mem memory archive`, `mem memory import`).
//!
//! "The whole memory" is what search covers (SPEC "One memory, not three"): the store's
//! preferences, projects and learnings, and the `memories.md` entries and memory notes of the
//! current project and user (and the extra note dirs). Entries and notes stay files, the truth
//! for them; the archive holds a copy (an entry's text, a note's whole file), and importing
//! writes them back into their files through their owners (`mem-auto`'s merge, which never
//! adds a near-duplicate and keeps the file's token cap; a note file only when no file of that
//! name exists).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{
    LearningEntry, LearningFilter, MAX_CONTENT_BYTES, MAX_TITLE_CHARS, NewLearning, ProjectRecord,
};
use crate::store::MemoryStore;
use crate::tiers::Headings;

/// The `format` field of an archive.
pub const ARCHIVE_FORMAT: &str = "mewmem-memory-archive";
/// The archive version this build writes (it reads 1, which had no entries or notes, and 2).
pub const ARCHIVE_VERSION: u32 = 2;

/// A `memories.md` entry in an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedEntry {
    /// Its id (`M` + 8 hex); informational: the text decides the id.
    pub id: String,
    /// `user` or `project`: which `memories.md`.
    pub scope: String,
    /// The heading of its category, as written (`项目知识`, `Project knowledge`...).
    pub category: String,
    /// The entry's text (one line).
    pub text: String,
}

/// A memory note in an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedNote {
    /// Its id (`N:<scope>/<file>`).
    pub id: String,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// The file name (`feedback_testing.md`).
    pub file: String,
    /// The whole file: frontmatter and body.
    pub text: String,
}

/// Everything in the tier store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Archive {
    /// Always [`ARCHIVE_FORMAT`].
    pub format: String,
    /// [`ARCHIVE_VERSION`].
    pub version: u32,
    /// User preferences, by key.
    #[serde(default)]
    pub user_preferences: BTreeMap<String, String>,
    /// Every project, most recently used first.
    #[serde(default)]
    pub projects: Vec<ProjectRecord>,
    /// Every learning, newest first.
    #[serde(default)]
    pub learnings: Vec<LearningEntry>,
    /// The `memories.md` entries (the project's file, then the user's), in file order.
    #[serde(default)]
    pub entries: Vec<ArchivedEntry>,
    /// The memory notes, by scope then file name.
    #[serde(default)]
    pub notes: Vec<ArchivedNote>,
}

/// Reads the whole store.
///
/// # Errors
/// Store errors.
pub fn export<S: MemoryStore + ?Sized>(store: &S) -> Result<Archive> {
    Ok(Archive {
        format: ARCHIVE_FORMAT.to_owned(),
        version: ARCHIVE_VERSION,
        user_preferences: store.user_preferences()?,
        projects: store.recent_projects(None)?,
        learnings: store.learnings(&LearningFilter::default())?,
        entries: Vec::new(),
        notes: Vec::new(),
    })
}

/// The archive as Markdown: `## 用户偏好`, `## 项目详情` (a `### name` block per project),
/// `## 学习记录` (`### L<id> title` blocks with category, tags, context, project, dates, then
/// the content). Text is written as stored; print it through `mem_core::terminal::safe`.
pub fn to_markdown(a: &Archive, h: &Headings) -> String {
    let mut out = String::new();
    let ms = |t: i64| {
        chrono::DateTime::from_timestamp_millis(t)
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default()
    };
    out.push_str(&format!("## {}\n", h.user_preferences));
    for (k, v) in &a.user_preferences {
        let label = crate::USER_PREFERENCE_KEYS
            .iter()
            .position(|x| x == k)
            .map_or(k.as_str(), |i| h.preference_labels[i].as_str());
        out.push_str(&format!("- {label}: {v}\n"));
    }
    out.push_str(&format!("\n## {}\n", h.project_details));
    for p in &a.projects {
        out.push_str(&format!("### {}\n", p.name));
        let fields = [
            p.language.as_deref(),
            p.framework.as_deref(),
            p.test_command.as_deref(),
            Some(p.path.as_str()),
        ];
        for (label, v) in h.project_labels.iter().zip(fields) {
            if let Some(v) = v {
                out.push_str(&format!("- {label}: {v}\n"));
            }
        }
        for (name, cmd) in &p.custom_commands {
            out.push_str(&format!("- {name}: `{cmd}`\n"));
        }
        for n in &p.notes {
            out.push_str(&format!("- {}: {n}\n", h.project_labels[4]));
        }
    }
    out.push_str(&format!("\n## {}\n", h.learnings));
    for l in &a.learnings {
        out.push_str(&format!("### L{} {}\n", l.id, l.title));
        out.push_str(&format!("- category: {}\n", l.category));
        if !l.tags.is_empty() {
            out.push_str(&format!("- tags: {}\n", l.tags.join(", ")));
        }
        if let Some(c) = &l.context {
            out.push_str(&format!("- context: {c}\n"));
        }
        let project = l
            .project_key
            .as_deref()
            .and_then(|k| a.projects.iter().find(|p| p.key == k))
            .map_or_else(
                || {
                    l.project_key
                        .clone()
                        .unwrap_or_else(|| "(user-wide)".into())
                },
                |p| p.name.clone(),
            );
        out.push_str(&format!("- project: {project}\n"));
        out.push_str(&format!("- created: {}\n", ms(l.created_ms)));
        if !l.content.is_empty() {
            out.push('\n');
            out.push_str(&l.content);
            out.push('\n');
        }
        out.push('\n');
    }
    if !a.entries.is_empty() {
        out.push_str("\n## memories.md\n");
        for e in &a.entries {
            out.push_str(&format!(
                "- {} ({}, {}) {}\n",
                e.id, e.scope, e.category, e.text
            ));
        }
    }
    if !a.notes.is_empty() {
        out.push_str("\n## Notes\n");
        for n in &a.notes {
            out.push_str(&format!("\n### {}\n\n", n.id));
            out.push_str(n.text.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Parses an archive's JSON text; `path` names the file in errors. Every field must be one the
/// archive defines (a misspelt `contxt` would otherwise be dropped and its value lost), and
/// every learning must be one [`import`] takes (a title, content within
/// [`MAX_CONTENT_BYTES`]), so an archive that parses imports whole.
///
/// # Errors
/// [`Error::Malformed`] with the file and 1-based line: a JSON error, an unknown field (its
/// path, `learnings.3.contxt`), a wrong `format` / `version`, or a learning [`import`] would
/// refuse (`learnings[3]`).
pub fn parse(text: &str, path: &std::path::Path) -> Result<Archive> {
    let malformed = |line: usize, message: String| Error::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut ignored = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let a: Archive = serde_ignored::deserialize(&mut de, |field| ignored.push(field.to_string()))
        .and_then(|a| de.end().map(|()| a))
        .map_err(|e| malformed(e.line(), e.to_string()))?;
    if let Some(field) = ignored.first() {
        let name = field.rsplit('.').next().unwrap_or(field);
        return Err(malformed(
            line_of_key(text, name),
            format!(
                "unknown field `{field}` (nothing was imported; a misspelt field would lose its value)"
            ),
        ));
    }
    if a.format != ARCHIVE_FORMAT {
        return Err(malformed(
            line_of_key(text, "format"),
            format!("format is {:?}, expected {ARCHIVE_FORMAT:?}", a.format),
        ));
    }
    if !(1..=ARCHIVE_VERSION).contains(&a.version) {
        return Err(malformed(
            line_of_key(text, "version"),
            format!(
                "version {} is not supported (this mewmem reads 1 to {ARCHIVE_VERSION})",
                a.version
            ),
        ));
    }
    let lines = element_lines(text, "learnings");
    for (i, l) in a.learnings.iter().enumerate() {
        if let Some(problem) = learning_problem(l) {
            return Err(malformed(
                lines.get(i).copied().unwrap_or(0),
                format!("learnings[{i}] (L{}): {problem}", l.id),
            ));
        }
    }
    Ok(a)
}

/// Why [`import`] refuses a learning: an empty title (as stored, control characters stripped)
/// or one over [`MAX_TITLE_CHARS`] characters, content over [`MAX_CONTENT_BYTES`] bytes.
fn learning_problem(l: &LearningEntry) -> Option<String> {
    let title = mem_core::secrets::strip_controls(&l.title);
    if title.trim().is_empty() || l.title.chars().count() > MAX_TITLE_CHARS {
        Some(format!(
            "the title is empty or longer than {MAX_TITLE_CHARS} characters"
        ))
    } else if l.content.len() > MAX_CONTENT_BYTES {
        Some(format!(
            "the content is larger than {MAX_CONTENT_BYTES} bytes"
        ))
    } else {
        None
    }
}

/// The 1-based line of the first `"key":` in `text` (1 when there is none).
fn line_of_key(text: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    text.match_indices(&quoted)
        .find(|(i, q)| text[i + q.len()..].trim_start().starts_with(':'))
        .map_or(1, |(i, _)| text[..i].matches('\n').count() + 1)
}

/// The 1-based line where each element of the array under the top-level key `key` starts, in
/// order (a small scan of the JSON text: strings and escapes skipped, nesting counted).
fn element_lines(text: &str, key: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let (mut i, mut depth, mut line) = (0, 0usize, 1);
    let (mut after_key, mut in_array) = (false, false);
    let mut out = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'"' => {
                if in_array && depth == 2 {
                    out.push(line);
                }
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    if bytes.get(i) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 1;
                }
                if depth == 1 && text.get(start..i) == Some(key) {
                    after_key = true;
                }
            }
            b'[' | b'{' => {
                if in_array && depth == 2 {
                    out.push(line);
                }
                if depth == 1 && after_key && bytes[i] == b'[' {
                    in_array = true;
                }
                after_key = false;
                depth += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 1 {
                    in_array = false;
                }
            }
            b',' => after_key = false,
            _ => {}
        }
        i += 1;
    }
    out
}

/// What [`import`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Learnings added.
    pub learnings_added: usize,
    /// Learnings already present (same title, content, category and project) and skipped.
    pub learnings_skipped: usize,
    /// Learnings of the archived project taken as the one imported into, moved, added into it
    /// (`--into-this-project`; see [`import`]).
    pub learnings_moved: usize,
    /// Learnings added to another project than the one imported into (or, outside a project,
    /// to any project): they are not shown here.
    pub learnings_elsewhere: usize,
    /// Archived projects this store has never seen with the name of the project imported
    /// into, as (key, last-seen path): this project at another path or on another machine,
    /// maybe (see [`import`]).
    pub same_name: Vec<(String, String)>,
    /// Projects inserted or updated.
    pub projects: usize,
    /// Preferences set.
    pub preferences: usize,
    /// `memories.md` entries added.
    pub entries_added: usize,
    /// Entries already there (the same or a near-duplicate text) and skipped.
    pub entries_present: usize,
    /// Entries evicted from a `memories.md` to keep it under its token cap.
    pub entries_evicted: usize,
    /// Note files written.
    pub notes_added: usize,
    /// Notes whose file already holds the same text.
    pub notes_present: usize,
    /// Notes not written because a different file of that name exists (`N:<scope>/<file>`);
    /// the existing file is kept.
    pub notes_kept_existing: Vec<String>,
    /// Entries and notes of a scope this project has no file for (an `extra<K>` dir not
    /// configured here), by id; nothing written for them.
    pub skipped: Vec<String>,
    /// Secrets withheld by the filter.
    pub withheld: usize,
}

/// A note file name an archive may create: `*.md`, one path component, not hidden, not
/// `MEMORY.md`, at most 255 bytes.
///
/// # Errors
/// [`Error::Invalid`] naming the file.
pub fn check_note_file_name(file: &str) -> Result<()> {
    let ok = file.ends_with(".md")
        && file.len() > 3
        && file.len() <= 255
        && !file.starts_with('.')
        && file != "MEMORY.md"
        && !file.contains(['/', '\\', '\0']);
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "archive note",
            reason: format!("{file:?} is not a note file name (NAME.md, no folders)"),
        })
    }
}

/// The category of an archived entry: its heading (the seed's or an English one).
///
/// # Errors
/// [`Error::Invalid`] for a heading that names no category.
pub fn entry_category(e: &ArchivedEntry) -> Result<mem_auto::MemoryCategory> {
    mem_auto::category_of_heading(&e.category).ok_or_else(|| Error::Invalid {
        what: "archive entry",
        reason: format!(
            "{}: {:?} is not a memories.md category heading",
            e.id, e.category
        ),
    })
}

/// Writes an archive into the store: every text through the secret filter, learnings that are
/// already present skipped (so importing twice adds nothing), creation times kept (learnings
/// get new row ids).
///
/// `here` is the project imported into. Learnings keep the project they were written in (a
/// key: the canonical git dir), so those of this project archived at another path or on
/// another machine would show nowhere. An archived project this store has never seen, with
/// `here`'s name and another key, may be `here` moved; it is listed in
/// [`ImportReport::same_name`], and only with `into_here` (the user saying so: `mem memory
/// import --into-this-project`) are its learnings imported into `here`
/// ([`ImportReport::learnings_moved`]). Its old record is not written either way, so an import
/// without `into_here` can be followed by one with it. A name alone does not say it: two
/// repositories may share one.
///
/// # Errors
/// [`Error::Invalid`] for an empty or oversized learning (nothing is written then); with
/// `into_here`, when there is no project here, or no such archived project, or more than one
/// (naming their paths; nothing is written then); store errors.
pub fn import<S: MemoryStore + ?Sized>(
    store: &S,
    a: &Archive,
    here: Option<&ProjectRecord>,
    into_here: bool,
) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    // Judged before the archive's project records are written: a moved project is one this
    // store has never seen.
    if let Some(here) = here {
        for p in &a.projects {
            if p.key != here.key && p.name == here.name && store.project(&p.key)?.is_none() {
                report.same_name.push((p.key.clone(), p.path.clone()));
            }
        }
    }
    let moved_from: HashSet<String> = if into_here {
        let Some(here) = here else {
            return Err(Error::Invalid {
                what: "archive import",
                reason: "--into-this-project needs a project to import into".into(),
            });
        };
        match report.same_name.as_slice() {
            [(key, _)] => [key.clone()].into(),
            [] => {
                return Err(Error::Invalid {
                    what: "archive import",
                    reason: format!(
                        "no archived project named {:?} that this store does not know: nothing to import into this project (nothing was imported)",
                        here.name
                    ),
                });
            }
            many => {
                return Err(Error::Invalid {
                    what: "archive import",
                    reason: format!(
                        "{} archived projects are named {:?} ({}): which one is this project is not clear (nothing was imported)",
                        many.len(),
                        here.name,
                        many.iter()
                            .map(|(_, p)| p.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
    } else {
        HashSet::new()
    };
    let mut red = |t: &str| {
        let r = mem_core::secrets::redact(t);
        report.withheld += r.withheld();
        r.text
    };
    for l in &a.learnings {
        if let Some(problem) = learning_problem(l) {
            return Err(Error::Invalid {
                what: "archive learning",
                reason: format!("L{}: {problem}", l.id),
            });
        }
    }
    let mut prefs = Vec::new();
    // Keys are filtered before they are lower-cased anywhere.
    for (k, v) in &a.user_preferences {
        prefs.push((red(k), red(v)));
    }
    // Every string shown in Tier 0 and the start context; the key and path are the identity.
    let mut projects = Vec::new();
    for p in &a.projects {
        let mut p = p.clone();
        p.name = red(&p.name);
        p.language = p.language.as_deref().map(&mut red);
        p.framework = p.framework.as_deref().map(&mut red);
        p.test_command = p.test_command.as_deref().map(&mut red);
        p.notes = p.notes.iter().map(|n| red(n)).collect();
        p.custom_commands = p
            .custom_commands
            .iter()
            .map(|(k, v)| (red(k), red(v)))
            .collect();
        projects.push(p);
    }
    // Oldest first, so the new row ids keep the archive's order (an export lists newest first,
    // ties of `created_ms` by id): importing a re-export gives the same archive back.
    let mut oldest_first: Vec<_> = a.learnings.iter().rev().collect();
    oldest_first.sort_by_key(|l| l.created_ms);
    let mut learnings = Vec::new();
    let mut moves = Vec::new();
    for l in oldest_first {
        let moved = l
            .project_key
            .as_ref()
            .is_some_and(|k| moved_from.contains(k));
        let project_key = match here {
            Some(here) if moved => Some(here.key.clone()),
            _ => l.project_key.clone(),
        };
        learnings.push(NewLearning {
            title: red(l.title.trim()),
            content: red(&l.content),
            category: crate::manager::lowercase_outside_markers(&red(l.category.trim())),
            tags: l.tags.iter().map(|t| red(t)).collect(),
            context: l.context.as_deref().map(&mut red),
            project_key,
            created_ms: l.created_ms,
            share_with_team: false,
        });
        moves.push(moved);
    }
    for (k, v) in prefs {
        store.set_user_preference(&k, Some(&v))?;
        report.preferences += 1;
    }
    // The record of an archived project that may be this one, moved, is not written, asked or
    // not: moved, this project's record is the store's already (with what its files say now);
    // unasked, the next import finds the key unknown again, so `--into-this-project` still
    // can take it (its learnings stored under the old key by this import stay there).
    let same_name: HashSet<&str> = report.same_name.iter().map(|(k, _)| k.as_str()).collect();
    for p in projects
        .iter()
        .filter(|p| !same_name.contains(p.key.as_str()))
    {
        store.upsert_project(p)?;
        report.projects += 1;
    }
    type Key = (String, String, String, Option<String>);
    let mut have: HashSet<Key> = store
        .learnings(&LearningFilter::default())?
        .into_iter()
        .map(|l| (l.title, l.content, l.category, l.project_key))
        .collect();
    for (n, moved) in learnings.into_iter().zip(moves) {
        let key = (
            n.title.clone(),
            n.content.clone(),
            n.category.clone(),
            n.project_key.clone(),
        );
        if have.contains(&key) {
            report.learnings_skipped += 1;
            continue;
        }
        store.add_learning(&n)?;
        report.learnings_added += 1;
        if moved {
            report.learnings_moved += 1;
        } else if n
            .project_key
            .as_deref()
            .is_some_and(|k| here.is_none_or(|h| h.key != k))
        {
            report.learnings_elsewhere += 1;
        }
        have.insert(key);
    }
    Ok(report)
}
