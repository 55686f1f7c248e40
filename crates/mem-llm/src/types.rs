//! Requests and replies of the three model jobs.

use std::fmt;

use mem_core::Message;
use serde::{Deserialize, Serialize};

/// One of the three jobs a model does for mewmem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Job {
    /// Summarise the old prefix of a conversation (compaction, seed 000 §2).
    Summarize,
    /// Extract categorised memories from new messages (auto memory, seed 000 §3).
    Extract,
    /// Choose which memory files to recall for a query (recall selector, seed 000 §4).
    Select,
    /// Write a skill (`SKILL.md`: name, description, steps, pitfalls) from a group of related
    /// memories (seed 003 "自动 Skills — 从经验自动生成 Skill"; `docs/SKILLS.md`).
    Skill,
}

impl Job {
    /// All jobs, in a stable order.
    pub const ALL: [Job; 4] = [Job::Summarize, Job::Extract, Job::Select, Job::Skill];

    /// The lowercase name used in configuration sections and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Job::Summarize => "summarize",
            Job::Extract => "extract",
            Job::Select => "select",
            Job::Skill => "skill",
        }
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Summarise a prefix of a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummarizeRequest {
    /// The messages to summarise, oldest first.
    pub messages: Vec<Message>,
}

/// A summary of a conversation prefix: plain text (markdown), meant to replace the prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The summary text.
    pub text: String,
}

/// Extract memories from the messages added since the last extraction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtractRequest {
    /// The current memories (the text of both `memories.md` files; may be empty). Entries already
    /// there are not extracted again. Read by the offline engine.
    pub current_memories: String,
    /// The current entries, each named by a small integer id (`1..`), which a model answers
    /// against: it may UPDATE or DELETE them by id (seed 000 §3 merging, mem0-style). Empty: the
    /// model can only ADD. The offline engine does not use them.
    pub entries: Vec<CurrentEntry>,
    /// The new messages, oldest first.
    pub messages: Vec<Message>,
}

/// A current memory entry offered to the model under a small integer id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentEntry {
    /// The id the model sees (`1..`, unique within the request); real ids (`M…`) are not shown,
    /// so the model cannot half-remember a hash.
    pub id: u32,
    /// Its category.
    pub category: MemoryCategory,
    /// Its text (one line, secrets already redacted).
    pub text: String,
}

/// A change to a current entry a model asked for, by the request's integer id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "UPPERCASE")]
pub enum EntryChange {
    /// Replace the text of entry `id` (it keeps its category).
    Update {
        /// A [`CurrentEntry::id`] of the request.
        id: u32,
        /// The new text.
        text: String,
    },
    /// Remove entry `id` (it is wrong now, or contradicted by the new messages).
    Delete {
        /// A [`CurrentEntry::id`] of the request.
        id: u32,
    },
}

impl EntryChange {
    /// The entry it changes.
    pub fn id(&self) -> u32 {
        match self {
            EntryChange::Update { id, .. } | EntryChange::Delete { id } => *id,
        }
    }
}

/// The four memory categories of seed 000 §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryCategory {
    /// 用户偏好 — user preferences (user-level file).
    Preference,
    /// 纠正反馈 — corrections the user made (user-level file).
    Correction,
    /// 项目知识 — project knowledge (project-level file).
    Project,
    /// 参考资料 — references: links, documents (project-level file).
    Reference,
}

impl MemoryCategory {
    /// All categories, in the seed's order.
    pub const ALL: [MemoryCategory; 4] = [
        MemoryCategory::Preference,
        MemoryCategory::Correction,
        MemoryCategory::Project,
        MemoryCategory::Reference,
    ];

    /// The seed's `###` heading (Chinese), e.g. `用户偏好`.
    pub fn heading(self) -> &'static str {
        match self {
            MemoryCategory::Preference => "用户偏好",
            MemoryCategory::Correction => "纠正反馈",
            MemoryCategory::Project => "项目知识",
            MemoryCategory::Reference => "参考资料",
        }
    }

    /// The English heading, e.g. `User preferences`.
    pub fn heading_en(self) -> &'static str {
        match self {
            MemoryCategory::Preference => "User preferences",
            MemoryCategory::Correction => "Corrections",
            MemoryCategory::Project => "Project knowledge",
            MemoryCategory::Reference => "References",
        }
    }

    /// The JSON key used in structured replies: `preferences`, `corrections`, `project`,
    /// `references`.
    pub fn key(self) -> &'static str {
        match self {
            MemoryCategory::Preference => "preferences",
            MemoryCategory::Correction => "corrections",
            MemoryCategory::Project => "project",
            MemoryCategory::Reference => "references",
        }
    }

    /// `true` for the categories stored in the user-level file (preferences, corrections).
    pub fn is_user_level(self) -> bool {
        matches!(
            self,
            MemoryCategory::Preference | MemoryCategory::Correction
        )
    }
}

/// Memories sorted into the four categories; each entry is one line without the leading `- `.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Memories {
    /// 用户偏好.
    pub preferences: Vec<String>,
    /// 纠正反馈.
    pub corrections: Vec<String>,
    /// 项目知识.
    pub project: Vec<String>,
    /// 参考资料.
    pub references: Vec<String>,
    /// Changes to the request's current entries (a model's UPDATE / DELETE answers, ids checked
    /// against the request). From the offline engine: UPDATEs only, of entries a sentence of the
    /// user says have changed (`offline::update::updates`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<EntryChange>,
}

impl Memories {
    /// The entries of one category.
    pub fn get(&self, category: MemoryCategory) -> &[String] {
        match category {
            MemoryCategory::Preference => &self.preferences,
            MemoryCategory::Correction => &self.corrections,
            MemoryCategory::Project => &self.project,
            MemoryCategory::Reference => &self.references,
        }
    }

    /// The entries of one category, mutable.
    pub fn get_mut(&mut self, category: MemoryCategory) -> &mut Vec<String> {
        match category {
            MemoryCategory::Preference => &mut self.preferences,
            MemoryCategory::Correction => &mut self.corrections,
            MemoryCategory::Project => &mut self.project,
            MemoryCategory::Reference => &mut self.references,
        }
    }

    /// `true` when no category has an entry and there is no change.
    pub fn is_empty(&self) -> bool {
        MemoryCategory::ALL.iter().all(|c| self.get(*c).is_empty()) && self.changes.is_empty()
    }

    /// Total number of entries.
    pub fn len(&self) -> usize {
        MemoryCategory::ALL.iter().map(|c| self.get(*c).len()).sum()
    }

    /// The seed's markdown: a `### <heading>` section per non-empty category, `- entry` lines,
    /// sections separated by a blank line; empty string when there is nothing.
    pub fn to_markdown(&self) -> String {
        let mut sections = Vec::new();
        for category in MemoryCategory::ALL {
            let entries = self.get(category);
            if entries.is_empty() {
                continue;
            }
            let mut section = format!("### {}\n", category.heading());
            for entry in entries {
                section.push_str("- ");
                section.push_str(entry);
                section.push('\n');
            }
            sections.push(section);
        }
        sections.join("\n")
    }
}

/// A memory file offered to the selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidate {
    /// Stable identifier returned in the selection (the file name, e.g. `testing.md`).
    pub id: String,
    /// Frontmatter `name`.
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// The body (or its first lines); ranked by the offline engine, not sent to models.
    pub body: String,
    /// A note of the user's own folder (`~/.mewcode/memory`), offered in every project: the
    /// offline engine selects such a note on the ideal-share floor only, never through its
    /// fallbacks (`offline::select`). `false` for a project's notes and extra folders.
    pub user_level: bool,
}

/// Choose at most `limit` candidates relevant to `query`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectRequest {
    /// The user's message.
    pub query: String,
    /// The memory files to choose from.
    pub candidates: Vec<Candidate>,
    /// The most to choose (the seed's selector picks at most 5).
    pub limit: usize,
}

/// The seed's bound on recalled files per turn.
pub const DEFAULT_SELECT_LIMIT: usize = 5;

/// The chosen candidates, most relevant first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// Candidate ids, at most the request's limit, each one of the candidates.
    pub ids: Vec<String>,
}

/// A job's answer and how it was produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reply<T> {
    /// The answer.
    pub value: T,
    /// Who answered: `offline`, or `<provider>:<model>` (e.g. `openai:gpt-4o-mini`).
    pub engine: String,
    /// Set when a model was asked but its reply was unusable and the offline engine answered
    /// instead: the reason. Never silent: callers show or log it.
    pub fallback: Option<String>,
    /// Parts of the model's reply that were dropped: ids that are not among the candidates,
    /// entries of the wrong type, entries beyond the limit.
    pub dropped: Vec<String>,
}

impl<T> Reply<T> {
    /// An answer from the offline engine.
    pub fn offline(value: T) -> Self {
        Reply {
            value,
            engine: "offline".to_owned(),
            fallback: None,
            dropped: Vec::new(),
        }
    }
}

/// One memory a skill is drawn from: a learning, a `memories.md` entry or a note.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillSource {
    /// Its memory id (`L42`, `M3f9a0c1e`, `N:project/testing.md`); the draft's points cite it.
    pub id: String,
    /// `learning`, `entry` or `note`.
    pub kind: String,
    /// A title (a learning's title, a note's name, an entry's category heading).
    pub title: String,
    /// Its text (secrets already redacted; a note's body without its frontmatter).
    pub text: String,
    /// Its category (a learning's category, an entry's category key, a note's `type`), if any.
    pub category: Option<String>,
    /// Its tags (learnings only).
    pub tags: Vec<String>,
}

/// Write a skill from a group of related memories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillRequest {
    /// The name the caller proposes (lowercase, digits and hyphens); the model may propose a
    /// better one, which the caller makes safe again.
    pub name: String,
    /// What the group is about, in a few words (its characteristic terms).
    pub topic: String,
    /// The memories, most relevant first.
    pub sources: Vec<SkillSource>,
}

/// One step or pitfall of a skill, with the memories it comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillPoint {
    /// One instruction, one line.
    pub text: String,
    /// Ids of the [`SkillSource`]s it is drawn from (at least one; each one of the request's).
    pub sources: Vec<String>,
}

/// A skill as a model or the offline template drafts it; the caller renders `SKILL.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillDraft {
    /// Proposed name (made safe by the caller).
    pub name: String,
    /// When to use the skill (frontmatter `description`; at most 1,024 characters).
    pub description: String,
    /// What to do, in order.
    pub steps: Vec<SkillPoint>,
    /// What goes wrong and how to avoid it.
    pub pitfalls: Vec<SkillPoint>,
}
