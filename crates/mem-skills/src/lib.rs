//! Skills from learnings (seed 003 "自动 Skills — 从经验自动生成 Skill"; `docs/SKILLS.md`).
//!
//! - [`collect`]: every memory visible in the project (learnings, `memories.md` entries, notes)
//!   as an [`Item`], read through the one search index (synced first).
//! - [`suggest`]: groups of related items — TF-IDF vectors over the index's words (the offline
//!   selector's tokenizer: stems, identifiers split, CJK bigrams), tags and categories, cosine
//!   similarity, average-linkage agglomerative clustering — kept when a group has at least
//!   [`SuggestOptions::min_items`] memories seen in at least [`SuggestOptions::min_sessions`]
//!   sessions (distinct days a memory was written, confirmed or verified).
//! - [`request`] turns a [`Group`] into a [`mem_llm::SkillRequest`] for [`mem_llm::Llm::skill`]
//!   (a model, or the offline template); [`render`] writes the draft as a `SKILL.md` (YAML
//!   frontmatter `name`, `description`; steps and pitfalls citing their memory ids) and
//!   [`write()`] puts it in `<dir>/<name>/SKILL.md` — atomically, secret-filtered, and never over
//!   a file a person edited ([`SIDECAR_FILE`] holds the SHA-256 of what mewmem wrote).
//!
//! Names come from memories, which may be hostile: [`safe_name`] makes any text a folder name
//! Claude Code accepts (lowercase ASCII letters, digits, single hyphens, at most 64 characters,
//! no reserved word).

pub mod cluster;
mod write;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeZone, Utc};
use mem_llm::{SkillDraft, SkillRequest, SkillSource};
use serde::Serialize;

use mem_tiers::{LearningFilter, MemoryId, MemoryManager, MemoryStore, SourceKind};

pub use cluster::{Features, featurize};
pub use write::{
    BESIDE_FILE, LOCK_FILE, SIDECAR_FILE, SKILL_FILE, Sidecar, WriteOptions, WriteStatus, Written,
    write,
};

/// The longest skill name, in characters (Claude Code's limit).
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description, in characters (Claude Code's limit).
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;
/// Words a skill name may not contain (Claude Code reserves them).
pub const RESERVED_WORDS: &[&str] = &["anthropic", "claude"];
/// The most memories [`collect`] reads of each kind.
pub const MAX_ITEMS_PER_KIND: usize = 20_000;

/// Errors of skills. Each names the file or id concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `SKILL.md` exists and is not what mewmem last wrote there: a person wrote or edited it.
    #[error(
        "{path} was written or edited by hand since mewmem last wrote it: left as it is. Use \
         --beside to write the new version next to it ({beside}), or choose another --name"
    )]
    Edited {
        /// The `SKILL.md`.
        path: PathBuf,
        /// Where `--beside` would write.
        beside: PathBuf,
    },
    /// A path on the way is a symlink or not a regular file/folder: refused, nothing written.
    #[error("{path} is {what}: refused, nothing written")]
    Unsafe {
        /// The path.
        path: PathBuf,
        /// What it is (`a symlink`, `not a folder`...).
        what: &'static str,
    },
    /// No suggested group has this id or name.
    #[error("no group {group:?} among the suggestions ({available}); run `mem skill suggest`")]
    NoGroup {
        /// As given.
        group: String,
        /// The groups there are (`none` when there are none).
        available: String,
    },
    /// An id that no visible memory has.
    #[error("no memory with id {0} in this project")]
    NotFound(String),
    /// Nothing to make a skill from.
    #[error("no memories to make a skill from")]
    Empty,
    /// Another `mem skill generate` held the skills folder's lock too long.
    #[error("another `mem skill generate` is writing in {path} (waited {waited_ms} ms): try again")]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// How long it waited.
        waited_ms: u64,
    },
    /// A file operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The tier store or the index failed.
    #[error(transparent)]
    Tiers(#[from] mem_tiers::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// One memory a skill may be drawn from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// Its memory id (`L42`, `M3f9a0c1e`, `N:project/testing.md`).
    pub id: String,
    /// Learning, entry or note.
    pub source: SourceKind,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// A learning's title, a note's name, an entry's category heading.
    pub title: String,
    /// A learning's content, an entry's text, a note's description and body.
    pub text: String,
    /// A learning's category, an entry's category key (`project`...), a note's `type`.
    pub category: Option<String>,
    /// A learning's tags.
    pub tags: Vec<String>,
    /// A learning's context (counted as words, not shown).
    #[serde(skip)]
    pub context: Option<String>,
    /// The sessions it was seen in: the UTC days (`YYYY-MM-DD`) it was written, confirmed by an
    /// extraction, updated or verified.
    pub sessions: BTreeSet<String>,
}

/// What [`collect`] read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Collected {
    /// The memories: learnings (newest first), then entries, then notes.
    pub items: Vec<Item>,
    /// Problems that cost a memory (a file that could not be read), each naming its file.
    pub warnings: Vec<String>,
}

impl Collected {
    /// How many items of `source` there are.
    pub fn count(&self, source: SourceKind) -> usize {
        self.items.iter().filter(|i| i.source == source).count()
    }
}

fn day(ms: i64) -> Option<String> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.format("%Y-%m-%d").to_string())
}

fn date_prefix(text: &str) -> Option<String> {
    let t = text.trim();
    let d = t.get(..10)?;
    chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
        .ok()
        .map(|_| d.to_owned())
}

fn category_key(heading: &str) -> Option<String> {
    mem_llm::MemoryCategory::ALL
        .iter()
        .find(|c| c.heading() == heading || c.heading_en().eq_ignore_ascii_case(heading))
        .map(|c| c.key().to_owned())
}

/// Every memory visible in the manager's project (its own and user-level ones; the index is
/// synced first), at most [`MAX_ITEMS_PER_KIND`] of each kind.
///
/// # Errors
/// Store and index errors. An entry's dates file or a note that cannot be read is a warning.
pub fn collect<S: MemoryStore>(manager: &MemoryManager<S>) -> Result<Collected> {
    let report = manager.sync_index()?;
    let mut out = Collected {
        warnings: report.warnings,
        ..Collected::default()
    };
    let visible = manager.project().map(|p| p.key.clone());
    let store = manager.store();
    for l in store.learnings(&LearningFilter {
        visible_in: visible.clone(),
        category: None,
        limit: Some(MAX_ITEMS_PER_KIND),
    })? {
        out.items.push(Item {
            id: MemoryId::Learning(l.id).to_string(),
            source: SourceKind::Learning,
            scope: l.scope().to_owned(),
            title: l.title,
            text: l.content,
            category: Some(l.category).filter(|c| !c.trim().is_empty()),
            tags: l.tags,
            context: l.context,
            sessions: day(l.created_ms).into_iter().collect(),
        });
    }
    let mut metas: HashMap<String, Option<mem_auto::Meta>> = HashMap::new();
    for d in store.documents(SourceKind::Entry, visible.as_deref(), MAX_ITEMS_PER_KIND)? {
        let mut sessions: BTreeSet<String> = day(d.updated_ms).into_iter().collect();
        if let Some(path) = &d.path {
            let meta = metas.entry(path.clone()).or_insert_with(|| {
                let file = Path::new(path).with_file_name(mem_auto::META_FILE);
                mem_core::fsread::read(&file)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<mem_auto::Meta>(&b).ok())
            });
            if let Some(dates) = meta.as_ref().and_then(|m| m.entries.get(&d.id)) {
                sessions.clear();
                for t in [dates.added, dates.confirmed] {
                    sessions.insert(t.format("%Y-%m-%d").to_string());
                }
            }
        }
        out.items.push(Item {
            category: category_key(&d.title),
            id: d.id,
            source: SourceKind::Entry,
            scope: d.scope,
            title: d.title,
            text: d.body,
            tags: Vec::new(),
            context: None,
            sessions,
        });
    }
    for d in store.documents(SourceKind::Note, visible.as_deref(), MAX_ITEMS_PER_KIND)? {
        let mut sessions: BTreeSet<String> = day(d.updated_ms).into_iter().collect();
        let mut category = None;
        let mut text = d.body.clone();
        if let Some(path) = &d.path {
            match mem_core::fsread::read(path) {
                Ok(bytes) => {
                    let (parsed, _) =
                        mem_recall::frontmatter::parse(&String::from_utf8_lossy(&bytes));
                    let fm = parsed.frontmatter;
                    category = fm.kind.filter(|k| !k.trim().is_empty());
                    for t in [&fm.updated, &fm.last_verified].into_iter().flatten() {
                        if let Some(d) = date_prefix(t) {
                            sessions.insert(d);
                        }
                    }
                    text = match fm.description {
                        Some(desc) if !desc.trim().is_empty() => {
                            let desc = desc.trim();
                            let stop = if desc.ends_with(['.', '!', '?', '。', ':']) {
                                ""
                            } else {
                                "."
                            };
                            format!("{desc}{stop}\n{}", parsed.body.trim())
                        }
                        _ => parsed.body.trim().to_owned(),
                    };
                }
                Err(e) => out.warnings.push(format!("{path}: {e}")),
            }
        }
        out.items.push(Item {
            id: d.id,
            source: SourceKind::Note,
            scope: d.scope,
            title: d.title,
            text,
            category,
            tags: Vec::new(),
            context: None,
            sessions,
        });
    }
    Ok(out)
}

/// Settings of [`suggest`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuggestOptions {
    /// Fewest memories in a group (default 3).
    pub min_items: usize,
    /// Fewest distinct sessions (days) its memories were seen in (default 2): a lesson that
    /// keeps coming back, not one session's notes.
    pub min_sessions: usize,
    /// Fewest average cosine similarity between the members of a group, in (0, 1] (default
    /// 0.12: short memories on one subject share a few telling words, giving cosines of 0.1 to
    /// 0.4; unrelated ones stay under 0.1).
    pub min_similarity: f64,
    /// Most groups returned, best first (default 20).
    pub max_groups: usize,
}

impl Default for SuggestOptions {
    fn default() -> Self {
        SuggestOptions {
            min_items: 3,
            min_sessions: 2,
            min_similarity: 0.12,
            max_groups: 20,
        }
    }
}

/// A group of related memories that would make a skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// `G` + 8 hex digits of SHA-256 of its sorted member ids: the same members, the same id.
    pub id: String,
    /// The proposed skill name ([`safe_name`] of its characteristic words).
    pub name: String,
    /// Its characteristic words, most characteristic first.
    pub terms: Vec<String>,
    /// The members, most central first.
    pub members: Vec<Item>,
    /// Distinct sessions (days) its members were seen in.
    pub sessions: usize,
    /// Average cosine similarity between its members (0..1).
    pub cohesion: f64,
}

impl Group {
    /// What the group is about: its terms joined by `, `.
    pub fn topic(&self) -> String {
        self.terms.join(", ")
    }

    /// The member ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.members.iter().map(|m| m.id.clone()).collect()
    }
}

/// `G` + the first 8 hex digits of SHA-256 of the sorted ids joined by newlines.
pub fn group_id(ids: &[String]) -> String {
    let mut sorted: Vec<&str> = ids.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let hash = mem_core::sha256_hex(sorted.join("\n").as_bytes());
    format!("G{}", &hash[..8])
}

/// Groups of related memories, best first (most sessions, then most members, then the most
/// cohesive): see the module docs for the method.
pub fn suggest(items: &[Item], options: &SuggestOptions) -> Vec<Group> {
    let features = featurize(items);
    let clusters = cluster::agglomerate(&features, options.min_similarity);
    let mut groups: Vec<Group> = clusters
        .into_iter()
        .filter(|c| c.len() >= options.min_items.max(2))
        .filter_map(|members| {
            let group = make_group(items, &features, &members);
            (group.sessions >= options.min_sessions).then_some(group)
        })
        .collect();
    groups.sort_by(|a, b| {
        b.sessions
            .cmp(&a.sessions)
            .then(b.members.len().cmp(&a.members.len()))
            .then(b.cohesion.total_cmp(&a.cohesion))
            .then(a.id.cmp(&b.id))
    });
    groups.truncate(options.max_groups);
    groups
}

/// The group of exactly these items (by index into `items`), named and ordered as [`suggest`]
/// does.
pub fn group_of(items: &[Item], members: &[usize]) -> Group {
    let features = featurize(items);
    make_group(items, &features, members)
}

fn make_group(items: &[Item], features: &Features, members: &[usize]) -> Group {
    let (ordered, cohesion) = features.order(members);
    let terms = features.terms(members, 3);
    let raw_name = terms.join("-");
    let mut sessions = BTreeSet::new();
    for &m in members {
        sessions.extend(items[m].sessions.iter().cloned());
    }
    let members: Vec<Item> = ordered.iter().map(|&i| items[i].clone()).collect();
    let ids: Vec<String> = members.iter().map(|m| m.id.clone()).collect();
    Group {
        id: group_id(&ids),
        name: safe_name(&raw_name),
        terms,
        members,
        sessions: sessions.len(),
        cohesion,
    }
}

/// The group `wanted` names (its id `G…`, or its name) among `groups`.
///
/// # Errors
/// [`Error::NoGroup`] listing the groups there are.
pub fn find_group<'a>(groups: &'a [Group], wanted: &str) -> Result<&'a Group> {
    groups
        .iter()
        .find(|g| g.id == wanted)
        .or_else(|| groups.iter().find(|g| g.name == wanted))
        .ok_or_else(|| Error::NoGroup {
            group: wanted.to_owned(),
            available: if groups.is_empty() {
                "none".to_owned()
            } else {
                groups
                    .iter()
                    .map(|g| format!("{} {}", g.id, g.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

/// The group made of the memories `ids` (each must be among `collected`'s items), in the order
/// given.
///
/// # Errors
/// [`Error::NotFound`] for an id no visible memory has; [`Error::Empty`] without ids.
pub fn group_from_ids(collected: &Collected, ids: &[MemoryId]) -> Result<Group> {
    if ids.is_empty() {
        return Err(Error::Empty);
    }
    let mut members = Vec::new();
    for id in ids {
        let key = id.to_string();
        let index = collected
            .items
            .iter()
            .position(|i| i.id == key)
            .ok_or(Error::NotFound(key))?;
        if !members.contains(&index) {
            members.push(index);
        }
    }
    let mut group = group_of(&collected.items, &members);
    // Keep the order the person gave.
    group.members = members
        .iter()
        .map(|&i| collected.items[i].clone())
        .collect();
    Ok(group)
}

/// `text` without control characters (C0 but newline and tab, DEL, C1) and bidi controls
/// (U+200E/F, U+061C, U+202A–U+202E, U+2066–U+2069): a memory's text may hold escape
/// sequences; a `SKILL.md` is read by people in terminals and by agents.
pub fn plain(text: &str) -> String {
    text.chars()
        .filter(|&c| {
            let control = c.is_control() && c != '\n' && c != '\t';
            let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            !control && !bidi
        })
        .collect()
}

/// The request for [`mem_llm::Llm::skill`]: the group's memories (secrets redacted again: the
/// text may go to a hosted model; control characters removed, [`plain`]), its topic, and the
/// proposed name (`name`, else the group's).
pub fn request(group: &Group, name: Option<&str>) -> SkillRequest {
    let red = |t: &str| plain(&mem_core::secrets::redact(t).text);
    SkillRequest {
        name: safe_name(name.unwrap_or(&group.name)),
        topic: red(&group.topic()),
        sources: group
            .members
            .iter()
            .map(|m| SkillSource {
                id: m.id.clone(),
                kind: m.source.as_str().to_owned(),
                title: red(&m.title),
                text: red(&m.text),
                category: m.category.as_deref().map(red),
                tags: m.tags.iter().map(|t| red(t)).collect(),
            })
            .collect(),
    }
}

/// Windows device names, refused as folder names there.
const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];
/// Plain YAML scalars that would not read back as a string.
const YAML_WORDS: &[&str] = &["true", "false", "null", "yes", "no", "on", "off", "y", "n"];

/// Any text as a skill name and folder name: lowercase ASCII letters and digits, single
/// hyphens between words, at most [`MAX_NAME_CHARS`] characters, without the words of
/// [`RESERVED_WORDS`]; a name that would be a device name, a YAML keyword or a number gets
/// `-skill` appended; an empty result (no ASCII letter or digit: `../`, control characters,
/// another script) becomes `skill-<8 hex of SHA-256 of the text>`. Never `.`, `..`, a path
/// separator or a control character.
pub fn safe_name(raw: &str) -> String {
    let lower = raw.to_lowercase();
    let words: Vec<String> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter(|w| !RESERVED_WORDS.contains(w))
        .map(str::to_owned)
        .collect();
    let mut name = String::new();
    for w in words {
        let extra = if name.is_empty() {
            w.len()
        } else {
            w.len() + 1
        };
        if name.len() + extra > MAX_NAME_CHARS {
            if name.is_empty() {
                name = w[..MAX_NAME_CHARS].to_owned();
            }
            break;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&w);
    }
    if name.is_empty() {
        let hash = mem_core::sha256_hex(raw.as_bytes());
        return format!("skill-{}", &hash[..8]);
    }
    if DEVICE_NAMES.contains(&name.as_str())
        || YAML_WORDS.contains(&name.as_str())
        || name.bytes().all(|b| b.is_ascii_digit())
    {
        if name.len() + 6 > MAX_NAME_CHARS {
            name.truncate(MAX_NAME_CHARS - 6);
        }
        name.push_str("-skill");
    }
    name
}

/// The skill's heading: its name with hyphens as spaces, the first letter upper-case.
fn heading(name: &str) -> String {
    let spaced = name.replace('-', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => spaced,
    }
}

fn kind_label(source: SourceKind) -> &'static str {
    match source {
        SourceKind::Learning => "learning",
        SourceKind::Entry => "memories.md entry",
        SourceKind::Note => "note",
    }
}

fn one_line(text: &str, max: usize) -> String {
    mem_llm::offline::skill::one_line(&plain(text), max)
}

/// The description as written: one line, no `<`/`>` (Claude Code refuses XML tags), at most
/// [`MAX_DESCRIPTION_CHARS`]; the offline one when empty.
pub fn clean_description(text: &str, fallback: &str) -> String {
    let d = one_line(&text.replace(['<', '>'], ""), MAX_DESCRIPTION_CHARS);
    if d.is_empty() {
        one_line(&fallback.replace(['<', '>'], ""), MAX_DESCRIPTION_CHARS)
    } else {
        d
    }
}

/// The `SKILL.md` text of a draft named `name` for `group`:
///
/// ```text
/// ---
/// name: <name>
/// description: "<when to use it>"      (a JSON string: valid YAML, any character escaped)
/// ---
///
/// # <Name>
///
/// <what it was drawn from>
///
/// ## Steps
///
/// 1. <text> (L1, M3f9a0c1e)
///
/// ## Pitfalls
///
/// - <text> (N:project/db.md)
///
/// ## Sources
///
/// - `L1` learning: <title> (<category>; tags: a, b)
/// ```
///
/// Every point cites at least one id of the group (others are dropped here too); the text is
/// not secret-filtered yet ([`write()`] does it).
pub fn render(draft: &SkillDraft, name: &str, group: &Group) -> String {
    let ids: BTreeSet<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let fallback = mem_llm::offline::skill::describe(&request(group, Some(name)));
    let description = clean_description(&draft.description, &fallback);
    let quoted = serde_json::to_string(&description).unwrap_or_else(|_| "\"\"".to_owned());
    let mut out = format!(
        "---\nname: {name}\ndescription: {quoted}\n---\n\n# {}\n\n",
        heading(name)
    );
    let sessions = group.sessions;
    out.push_str(&format!(
        "Written by mewmem (`mem skill generate`) from {} memor{} seen in {} session{}. Each \
         point names the memories it comes from (`mem memory show ID` prints one).\n",
        group.members.len(),
        if group.members.len() == 1 { "y" } else { "ies" },
        sessions,
        if sessions == 1 { "" } else { "s" },
    ));
    let cite = |p: &mem_llm::SkillPoint| -> Option<String> {
        let cited: Vec<&str> = p
            .sources
            .iter()
            .map(String::as_str)
            .filter(|s| ids.contains(s))
            .collect();
        let text = one_line(&p.text, 600);
        (!cited.is_empty() && !text.is_empty()).then(|| format!("{text} ({})", cited.join(", ")))
    };
    let steps: Vec<String> = draft.steps.iter().filter_map(cite).collect();
    let pitfalls: Vec<String> = draft.pitfalls.iter().filter_map(cite).collect();
    if !steps.is_empty() {
        out.push_str("\n## Steps\n\n");
        for (i, s) in steps.iter().enumerate() {
            out.push_str(&format!("{}. {s}\n", i + 1));
        }
    }
    if !pitfalls.is_empty() {
        out.push_str("\n## Pitfalls\n\n");
        for p in &pitfalls {
            out.push_str(&format!("- {p}\n"));
        }
    }
    out.push_str("\n## Sources\n\n");
    for m in &group.members {
        let mut about = Vec::new();
        if let Some(c) = &m.category {
            about.push(one_line(c, 40));
        }
        if !m.tags.is_empty() {
            about.push(format!("tags: {}", one_line(&m.tags.join(", "), 120)));
        }
        let about = if about.is_empty() {
            String::new()
        } else {
            format!(" ({})", about.join("; "))
        };
        let title = one_line(&m.title, 120);
        out.push_str(&format!(
            "- `{}` {}: {}{about}\n",
            m.id,
            kind_label(m.source),
            if title.is_empty() {
                "(untitled)"
            } else {
                title.as_str()
            }
        ));
    }
    out
}

/// How many points of a draft [`render`] keeps (those citing an id of the group): (steps,
/// pitfalls).
pub fn kept_points(draft: &SkillDraft, group: &Group) -> (usize, usize) {
    let ids: BTreeSet<&str> = group.members.iter().map(|m| m.id.as_str()).collect();
    let keeps = |p: &&mem_llm::SkillPoint| {
        p.sources.iter().any(|s| ids.contains(s.as_str())) && !p.text.trim().is_empty()
    };
    (
        draft.steps.iter().filter(keeps).count(),
        draft.pitfalls.iter().filter(keeps).count(),
    )
}

/// The UTC time now, RFC 3339 (for sidecars).
pub(crate) fn now() -> DateTime<Utc> {
    Utc::now()
}

/// Counts of what a suggestion looked at, by kind (`learning`, `entry`, `note`).
pub fn considered(collected: &Collected) -> BTreeMap<&'static str, usize> {
    [SourceKind::Learning, SourceKind::Entry, SourceKind::Note]
        .into_iter()
        .map(|k| (k.as_str(), collected.count(k)))
        .collect()
}

#[cfg(test)]
mod tests;
