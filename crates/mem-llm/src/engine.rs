//! The [`Llm`] trait: the three jobs, whoever answers them.

use std::future::Future;
use std::pin::Pin;

use crate::error::Result;
use crate::types::{
    ExtractRequest, Job, Memories, Reply, SelectRequest, Selection, SummarizeRequest, Summary,
};

/// A boxed, sendable future (the trait is object-safe so callers can hold `&dyn Llm`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The three model jobs of mewmem.
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
}
