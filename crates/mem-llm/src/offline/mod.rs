//! The offline engine: deterministic answers to the three jobs, no model, no network.
//!
//! The default engine (beyond the seed). Every feature of mewmem works with it; a configured model
//! only improves the answers. Output is stable: the same input gives the same bytes.

mod extract;
pub mod facts;
pub use facts::PROJECT_NOUNS;
pub mod kinds;
mod knowledge;
mod select;
pub mod skill;
mod summarize;
mod synonyms;
mod text;
mod tools;
pub mod update;

pub use extract::extract;
pub use knowledge::{
    is_home_path, is_project_knowledge, is_project_rule, names_project_value, names_value,
};
pub use select::{
    ANALYZER_VERSION, BODY_WEIGHT, CandidateTerms, DESCRIPTION_WEIGHT, DROP_RATIO,
    EXPANSION_WEIGHT, IDEAL_PRIOR_TERMS, MAX_CLAUSES, MIN_CLAUSE_MATCHES, MIN_IDEAL_SHARE,
    MIN_RELATIVE_SCORE, MIN_STANDOUT_SHARE, NAME_WEIGHT, RARE_TERM_MAX_SHARE, STANDOUT_RATIO,
    TERMS_MEMO_MAX, UNSEEN_CJK_SHARE, best_shares, clauses, forget_terms, ideal_score,
    remember_terms, score, select, terms_of, tokenize,
};
pub use summarize::{MAX_LIST_ITEMS, MessageStats, stats, summarize};
pub use tools::{ToolKind, classify_tool};

/// `true` when `text` looks like it holds a secret (API key, token, password, private key).
pub fn looks_like_secret(text: &str) -> bool {
    text::looks_secret(text)
}

/// The words of `text` as the offline selector matches them (see [`tokenize`]): identifiers
/// split, stemmed, stop words dropped, CJK runs as bigrams.
pub(crate) fn words(text: &str) -> Vec<String> {
    select::tokenize(text)
}

/// What a summary of `messages` should mention: the words of the user's requests, of the names
/// of the files the tools touched, and of the commands run (see [`words`]).
pub(crate) fn salient_words(messages: &[mem_core::Message]) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for m in messages {
        if let Some(t) = text::user_text(m) {
            out.extend(words(&t));
        }
        for b in &m.content {
            if let mem_core::ContentBlock::ToolUse { name, input, .. } = b {
                if let Some((path, _)) = tools::touched_file(name, input) {
                    let file = path.rsplit(['/', '\\']).next().unwrap_or(&path);
                    out.extend(words(file));
                }
                if let Some(command) = tools::command_of(input) {
                    out.extend(words(&command));
                }
            }
        }
    }
    out
}

use crate::engine::{BoxFuture, Llm};
use crate::error::Result;
use crate::types::{
    EntryChange, ExtractRequest, Job, Memories, Reply, SelectRequest, Selection, SkillDraft,
    SkillRequest, SummarizeRequest, Summary,
};

/// The offline engine. Stateless and cheap to copy.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineEngine;

impl OfflineEngine {
    /// Summarises without a model (see [`summarize`]).
    pub fn summarize_now(&self, request: &SummarizeRequest) -> Summary {
        Summary {
            text: summarize(&request.messages),
        }
    }

    /// Extracts without a model (see [`extract`]), and updates the request's current entries
    /// that the user's sentences say have changed ([`update::updates`]). A sentence read both
    /// ways is kept once, as the update.
    pub fn extract_now(&self, request: &ExtractRequest) -> Memories {
        let mut memories = extract(&request.messages, &request.current_memories);
        let said = update::said_updates(&request.messages, &request.entries);
        // Words only, padded: "the package manager is pnpm now." is read in "The package
        // manager is pnpm now, always use pnpm for installs." as whole words.
        let words = |t: &str| {
            let w: Vec<String> = t
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            format!(" {} ", w.join(" "))
        };
        for (change, sentence) in &said {
            if let EntryChange::Update { text, .. } = change {
                let update = format!("{}{}", words(text), words(sentence));
                for list in [
                    &mut memories.preferences,
                    &mut memories.corrections,
                    &mut memories.project,
                    &mut memories.references,
                ] {
                    list.retain(|e| {
                        let e = words(e);
                        e.trim().is_empty() || !update.contains(&e)
                    });
                }
            }
        }
        memories.changes = said.into_iter().map(|(change, _)| change).collect();
        memories
    }

    /// Selects without a model (see [`select`]).
    pub fn select_now(&self, request: &SelectRequest) -> Selection {
        Selection {
            ids: select(&request.query, &request.candidates, request.limit),
        }
    }

    /// Drafts a skill without a model (see [`skill::draft`]).
    pub fn skill_now(&self, request: &SkillRequest) -> SkillDraft {
        skill::draft(request)
    }
}

impl Llm for OfflineEngine {
    fn engine_name(&self, _job: Job) -> String {
        "offline".to_owned()
    }

    fn summarize<'a>(
        &'a self,
        request: &'a SummarizeRequest,
    ) -> BoxFuture<'a, Result<Reply<Summary>>> {
        let reply = Reply::offline(self.summarize_now(request));
        Box::pin(async move { Ok(reply) })
    }

    fn extract<'a>(
        &'a self,
        request: &'a ExtractRequest,
    ) -> BoxFuture<'a, Result<Reply<Memories>>> {
        let reply = Reply::offline(self.extract_now(request));
        Box::pin(async move { Ok(reply) })
    }

    fn select<'a>(&'a self, request: &'a SelectRequest) -> BoxFuture<'a, Result<Reply<Selection>>> {
        let reply = Reply::offline(self.select_now(request));
        Box::pin(async move { Ok(reply) })
    }

    fn skill<'a>(&'a self, request: &'a SkillRequest) -> BoxFuture<'a, Result<Reply<SkillDraft>>> {
        let reply = Reply::offline(self.skill_now(request));
        Box::pin(async move { Ok(reply) })
    }
}
