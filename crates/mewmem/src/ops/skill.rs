//! Skills from learnings (`mem skill`, seed 003 "自动 Skills — 从经验自动生成 Skill";
//! `docs/SKILLS.md`): groups of related learnings, `memories.md` entries and notes that would
//! make a skill, and a `SKILL.md` written from one by the skill job.

use mem_llm::{Llm, Reply, SkillDraft};
use mem_skills::{self as skill, Collected, Group, SuggestOptions, WriteOptions, Written};
use mem_tiers::MemoryId;

use crate::Memory;
use crate::error::{Error, Result};

/// What [`Memory::suggest_skills`] found.
#[derive(Debug)]
pub struct Suggestions {
    /// Every memory looked at, and the problems that cost one.
    pub collected: Collected,
    /// The groups that would make a skill, best first.
    pub groups: Vec<Group>,
    /// When no group was found but some would be with one session (day) enough: how many,
    /// and the most sessions one of them was seen in.
    pub short_of_sessions: Option<(usize, usize)>,
}

/// Where a skill is drawn from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillSource {
    /// A suggested group: its id (`G1a2b3c4d`) or its name.
    Group(String),
    /// The memories of these ids (`L42`, `M3f9a0c1e`, `N:project/db.md`), as given.
    Ids(Vec<String>),
}

/// What [`generate`] did.
#[derive(Debug)]
pub struct Generated {
    /// The skill job's reply (engine, fallback, dropped parts, the draft).
    pub reply: Reply<SkillDraft>,
    /// The file written (or not, on a dry run), its status and the secrets withheld.
    pub written: Written,
    /// Steps kept in the skill.
    pub steps: usize,
    /// Pitfalls kept in the skill.
    pub pitfalls: usize,
}

impl Memory {
    /// The groups of related memories of this project's tier store, `memories.md` files and
    /// notes that would make a skill under `options`.
    ///
    /// Errors: [`Error::Config`], [`Error::Tiers`] (the store cannot be opened), [`Error::Skill`].
    pub fn suggest_skills(&self, options: &SuggestOptions) -> Result<Suggestions> {
        let manager = self.open_tiers()?;
        let collected = skill::collect(&manager)?;
        let groups = skill::suggest(&collected.items, options);
        // No group: say whether only the sessions (days) fell short, and by how much.
        let short_of_sessions = if groups.is_empty() && options.min_sessions > 1 {
            let relaxed = SuggestOptions {
                min_sessions: 1,
                ..*options
            };
            let found = skill::suggest(&collected.items, &relaxed);
            found
                .iter()
                .map(|g| g.sessions)
                .max()
                .map(|most| (found.len(), most))
        } else {
            None
        };
        Ok(Suggestions {
            collected,
            groups,
            short_of_sessions,
        })
    }

    /// The group a skill is drawn from: a group suggested under `options` (by id or name), or
    /// the memories of the given ids.
    ///
    /// Errors: as [`Self::suggest_skills`]; [`Error::Tiers`] when an id is not one;
    /// [`Error::Skill`] when no group or memory matches.
    pub fn skill_group(&self, source: &SkillSource, options: &SuggestOptions) -> Result<Group> {
        let manager = self.open_tiers()?;
        let collected = skill::collect(&manager)?;
        Ok(match source {
            SkillSource::Group(wanted) => {
                let groups = skill::suggest(&collected.items, options);
                skill::find_group(&groups, wanted)?.clone()
            }
            SkillSource::Ids(ids) => {
                let ids = ids
                    .iter()
                    .map(|s| s.parse::<MemoryId>())
                    .collect::<Result<Vec<_>, _>>()?;
                skill::group_from_ids(&collected, &ids)?
            }
        })
    }
}

/// Writes the skill of `group` (`<dir>/<name>/SKILL.md`, or beside it, or nothing on a dry
/// run, as `options` say) from the reply of `llm`'s skill job. The name: `name` when given
/// (made safe), else the model's, else the group's.
///
/// Errors: [`Error::Context`] (`the skill job failed`) over the model's error; [`Error::Skill`]
/// when the file cannot be written (edited by hand, a symlink, locked...).
pub async fn generate(
    group: &Group,
    name: Option<&str>,
    llm: &dyn Llm,
    options: &WriteOptions,
) -> Result<Generated> {
    let request = skill::request(group, name);
    let reply = llm.skill(&request).await.map_err(|e| Error::Context {
        context: "the skill job failed".to_owned(),
        source: Box::new(e),
    })?;
    // A name given by the person wins; else the model's (made safe), else the group's.
    let chosen = match name {
        Some(n) => skill::safe_name(n),
        None if !reply.value.name.trim().is_empty() => skill::safe_name(&reply.value.name),
        None => request.name.clone(),
    };
    let text = skill::render(&reply.value, &chosen, group);
    let (steps, pitfalls) = skill::kept_points(&reply.value, group);
    let written = skill::write(options, &chosen, &text, &group.ids(), &reply.engine)?;
    Ok(Generated {
        reply,
        written,
        steps,
        pitfalls,
    })
}
