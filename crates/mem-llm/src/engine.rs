//! The [`Llm`] trait: the three jobs, whoever answers them.

use std::future::Future;
use std::pin::Pin;

use crate::error::Result;
use crate::types::{
    ExtractRequest, Job, Memories, Reply, SelectRequest, Selection, SkillDraft, SkillRequest,
    SummarizeRequest, Summary,
};

/// A boxed, sendable future (the trait is object-safe so callers can hold `&dyn Llm`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The model jobs of mewmem: the seed's three (summarize, extract, select) and skill writing.
///
/// Implemented by [`crate::OfflineEngine`] (deterministic, no network, the default),
/// [`crate::ModelEngine`] (one HTTP provider and model, falling back to the offline engine when a
/// reply is unusable) and [`crate::Router`] (a possibly different engine per job).
///
/// Errors: transport and HTTP failures ([`crate::LlmError`]); an unusable reply is not an error
/// but a [`Reply`] whose `fallback` says why the offline engine answered.
pub trait Llm: Send + Sync {
    /// Who answers `job`: `offline` or `<provider>:<model>`.
    fn engine_name(&self, job: Job) -> String;

    /// Summarises a conversation prefix.
    fn summarize<'a>(
        &'a self,
        request: &'a SummarizeRequest,
    ) -> BoxFuture<'a, Result<Reply<Summary>>>;

    /// Extracts categorised memories from new messages.
    fn extract<'a>(&'a self, request: &'a ExtractRequest)
    -> BoxFuture<'a, Result<Reply<Memories>>>;

    /// Selects at most `request.limit` candidates relevant to the query, most relevant first.
    fn select<'a>(&'a self, request: &'a SelectRequest) -> BoxFuture<'a, Result<Reply<Selection>>>;

    /// Drafts a skill (name, description, steps, pitfalls, each point citing source ids) from a
    /// group of related memories. The default answers with the offline template
    /// ([`crate::offline::skill::draft`]), so an engine that has no model for this job needs no
    /// code for it.
    fn skill<'a>(&'a self, request: &'a SkillRequest) -> BoxFuture<'a, Result<Reply<SkillDraft>>> {
        let reply = Reply::offline(crate::offline::skill::draft(request));
        Box::pin(async move { Ok(reply) })
    }
}
