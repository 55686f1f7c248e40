//! [`ModelEngine`]: the three jobs through one HTTP provider, with the offline engine answering
//! (and saying so) when a reply is unusable; [`Router`]: a possibly different engine per job.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{BoxFuture, Llm};
use crate::error::{LlmError, Result};
use crate::http::CallPolicy;
use crate::offline::OfflineEngine;
use crate::parse::{check_summary, parse_merge, parse_selection, parse_skill};
use crate::prompt::{
    ChatRequest, extract_request, select_request, skill_request, summarize_request,
};
use crate::provider::Provider;
use crate::types::{
    ExtractRequest, Job, Memories, Reply, SelectRequest, Selection, SkillDraft, SkillRequest,
    SummarizeRequest, Summary,
};

/// One provider and model answering the jobs, under one call policy.
///
/// A reply that is empty, malformed or not the structure the job needs is replaced by the offline
/// engine's answer, with [`Reply::fallback`] saying why; transport and HTTP errors are returned.
#[derive(Debug, Clone)]
pub struct ModelEngine {
    provider: Provider,
    policy: CallPolicy,
}

impl ModelEngine {
    /// An engine for `provider` under `policy`.
    pub fn new(provider: Provider, policy: CallPolicy) -> Self {
        ModelEngine { provider, policy }
    }

    /// The provider.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// The call policy.
    pub fn policy(&self) -> &CallPolicy {
        &self.policy
    }

    /// `<provider>:<model>` (`<provider>` alone when the model is the CLI's own default).
    pub fn name(&self) -> String {
        if self.provider.model().is_empty() {
            return self.provider.kind().to_string();
        }
        format!("{}:{}", self.provider.kind(), self.provider.model())
    }

    /// Makes one tiny request ("reply with ok") and returns the reply and the latency.
    pub async fn ping(&self) -> Result<(String, Duration)> {
        let request = ChatRequest {
            job: Job::Select,
            system: "You are a health check. Reply with the single word: ok".to_owned(),
            user: "ping".to_owned(),
            max_tokens: 8,
            schema: None,
        };
        let start = Instant::now();
        let text = self.provider.complete(&request, &self.policy).await?;
        Ok((text.trim().to_owned(), start.elapsed()))
    }

    fn reply<T>(&self, value: T, dropped: Vec<String>) -> Reply<T> {
        Reply {
            value,
            engine: self.name(),
            fallback: None,
            dropped,
        }
    }

    fn fallback<T>(&self, value: T, reason: String) -> Reply<T> {
        tracing::warn!(engine = %self.name(), %reason, "model reply unusable; the offline engine answered");
        Reply {
            value,
            engine: self.name(),
            fallback: Some(reason),
            dropped: Vec::new(),
        }
    }

    /// Summarises through the model. A reply that fails [`check_summary`] (too short, or about
    /// nothing the conversation holds) is replaced by the offline summary, with the reason.
    pub async fn summarize_async(&self, request: &SummarizeRequest) -> Result<Reply<Summary>> {
        match self
            .provider
            .complete(&summarize_request(request), &self.policy)
            .await
        {
            Ok(text) => match check_summary(&text, &request.messages) {
                Ok(()) => Ok(self.reply(
                    Summary {
                        text: format!("{}\n", text.trim()),
                    },
                    Vec::new(),
                )),
                Err(reason) => Ok(self.fallback(
                    OfflineEngine.summarize_now(request),
                    LlmError::Unusable {
                        job: "summarize",
                        reason,
                    }
                    .to_string(),
                )),
            },
            Err(e) if e.is_unusable_reply() => {
                Ok(self.fallback(OfflineEngine.summarize_now(request), e.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    /// Extracts through the model, merging against the request's numbered entries
    /// ([`parse_merge`]: ADD / UPDATE / DELETE / NONE; ids the model invents are dropped and
    /// reported in [`Reply::dropped`]). Entries that look like secrets are dropped (and reported
    /// without their text). A junk reply: the offline engine answers, [`Reply::fallback`] says
    /// why.
    pub async fn extract_async(&self, request: &ExtractRequest) -> Result<Reply<Memories>> {
        let text = match self
            .provider
            .complete(&extract_request(request), &self.policy)
            .await
        {
            Ok(text) => text,
            Err(e) if e.is_unusable_reply() => {
                return Ok(self.fallback(OfflineEngine.extract_now(request), e.to_string()));
            }
            Err(e) => return Err(e),
        };
        match parse_merge(&text, &request.entries) {
            Ok(parsed) => {
                let mut memories = parsed.value;
                let mut dropped = parsed.dropped;
                memories.changes.retain(|c| match c {
                    crate::EntryChange::Update { id, text } => {
                        let secret = crate::offline::looks_like_secret(text);
                        if secret {
                            dropped.push(format!(
                                "UPDATE of id {id}: the new text looks like a secret"
                            ));
                        }
                        !secret
                    }
                    crate::EntryChange::Delete { .. } => true,
                });
                for category in crate::MemoryCategory::ALL {
                    let entries = memories.get_mut(category);
                    let before = entries.len();
                    entries.retain(|e| !crate::offline::looks_like_secret(e));
                    let removed = before - entries.len();
                    if removed > 0 {
                        dropped.push(format!(
                            "{}: {removed} entry(ies) that look like secrets",
                            category.key()
                        ));
                    }
                }
                Ok(self.reply(memories, dropped))
            }
            Err(reason) => Ok(self.fallback(
                OfflineEngine.extract_now(request),
                LlmError::Unusable {
                    job: "extract",
                    reason,
                }
                .to_string(),
            )),
        }
    }

    /// Selects through the model. No call is made when there are no candidates.
    pub async fn select_async(&self, request: &SelectRequest) -> Result<Reply<Selection>> {
        if request.candidates.is_empty() || request.limit == 0 {
            return Ok(self.reply(Selection::default(), Vec::new()));
        }
        let text = match self
            .provider
            .complete(&select_request(request), &self.policy)
            .await
        {
            Ok(text) => text,
            Err(e) if e.is_unusable_reply() => {
                return Ok(self.fallback(OfflineEngine.select_now(request), e.to_string()));
            }
            Err(e) => return Err(e),
        };
        match parse_selection(&text, &request.candidates, request.limit) {
            Ok(parsed) => Ok(self.reply(Selection { ids: parsed.value }, parsed.dropped)),
            Err(reason) => Ok(self.fallback(
                OfflineEngine.select_now(request),
                LlmError::Unusable {
                    job: "select",
                    reason,
                }
                .to_string(),
            )),
        }
    }

    /// Drafts a skill through the model ([`parse_skill`]: source ids the model invents are
    /// dropped and reported, a point citing no source is dropped). Points that look like
    /// secrets are dropped and reported without their text. A junk reply: the offline template
    /// answers, [`Reply::fallback`] says why. No call is made for an empty group.
    pub async fn skill_async(&self, request: &SkillRequest) -> Result<Reply<SkillDraft>> {
        if request.sources.is_empty() {
            return Ok(self.reply(OfflineEngine.skill_now(request), Vec::new()));
        }
        let text = match self
            .provider
            .complete(&skill_request(request), &self.policy)
            .await
        {
            Ok(text) => text,
            Err(e) if e.is_unusable_reply() => {
                return Ok(self.fallback(OfflineEngine.skill_now(request), e.to_string()));
            }
            Err(e) => return Err(e),
        };
        match parse_skill(&text, &request.sources) {
            Ok(parsed) => {
                let mut draft = parsed.value;
                let mut dropped = parsed.dropped;
                for (key, list) in [
                    ("steps", &mut draft.steps),
                    ("pitfalls", &mut draft.pitfalls),
                ] {
                    let before = list.len();
                    list.retain(|p| !crate::offline::looks_like_secret(&p.text));
                    if list.len() < before {
                        dropped.push(format!(
                            "{key}: {} point(s) that look like secrets",
                            before - list.len()
                        ));
                    }
                }
                if crate::offline::looks_like_secret(&draft.description) {
                    dropped.push("the description looks like a secret".to_owned());
                    draft.description = crate::offline::skill::describe(request);
                }
                if draft.steps.is_empty() && draft.pitfalls.is_empty() {
                    return Ok(self.fallback(
                        OfflineEngine.skill_now(request),
                        LlmError::Unusable {
                            job: "skill",
                            reason: "no usable step or pitfall".to_owned(),
                        }
                        .to_string(),
                    ));
                }
                Ok(self.reply(draft, dropped))
            }
            Err(reason) => Ok(self.fallback(
                OfflineEngine.skill_now(request),
                LlmError::Unusable {
                    job: "skill",
                    reason,
                }
                .to_string(),
            )),
        }
    }
}

impl Llm for ModelEngine {
    fn engine_name(&self, _job: Job) -> String {
        self.name()
    }

    fn summarize<'a>(
        &'a self,
        request: &'a SummarizeRequest,
    ) -> BoxFuture<'a, Result<Reply<Summary>>> {
        Box::pin(self.summarize_async(request))
    }

    fn extract<'a>(
        &'a self,
        request: &'a ExtractRequest,
    ) -> BoxFuture<'a, Result<Reply<Memories>>> {
        Box::pin(self.extract_async(request))
    }

    fn select<'a>(&'a self, request: &'a SelectRequest) -> BoxFuture<'a, Result<Reply<Selection>>> {
        Box::pin(self.select_async(request))
    }

    fn skill<'a>(&'a self, request: &'a SkillRequest) -> BoxFuture<'a, Result<Reply<SkillDraft>>> {
        Box::pin(self.skill_async(request))
    }
}

/// A possibly different engine per job (a cheap model for selection, say). Built from resolved
/// settings by [`crate::LlmSettings::router`], or by hand.
#[derive(Clone)]
pub struct Router {
    summarize: Arc<dyn Llm>,
    extract: Arc<dyn Llm>,
    select: Arc<dyn Llm>,
    skill: Arc<dyn Llm>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("summarize", &self.summarize.engine_name(Job::Summarize))
            .field("extract", &self.extract.engine_name(Job::Extract))
            .field("select", &self.select.engine_name(Job::Select))
            .field("skill", &self.skill.engine_name(Job::Skill))
            .finish()
    }
}

impl Default for Router {
    /// The offline engine for every job.
    fn default() -> Self {
        Router::uniform(Arc::new(OfflineEngine))
    }
}

impl Router {
    /// The same engine for every job.
    pub fn uniform(engine: Arc<dyn Llm>) -> Self {
        Router {
            summarize: engine.clone(),
            extract: engine.clone(),
            select: engine.clone(),
            skill: engine,
        }
    }

    /// One engine per seed job; the skill job on the offline engine (see [`Router::with_skill`]).
    pub fn new(summarize: Arc<dyn Llm>, extract: Arc<dyn Llm>, select: Arc<dyn Llm>) -> Self {
        Router {
            summarize,
            extract,
            select,
            skill: Arc::new(OfflineEngine),
        }
    }

    /// The same router with `engine` answering the skill job.
    pub fn with_skill(mut self, engine: Arc<dyn Llm>) -> Self {
        self.skill = engine;
        self
    }

    /// The engine answering `job`.
    pub fn engine(&self, job: Job) -> &Arc<dyn Llm> {
        match job {
            Job::Summarize => &self.summarize,
            Job::Extract => &self.extract,
            Job::Select => &self.select,
            Job::Skill => &self.skill,
        }
    }
}

impl Llm for Router {
    fn engine_name(&self, job: Job) -> String {
        self.engine(job).engine_name(job)
    }

    fn summarize<'a>(
        &'a self,
        request: &'a SummarizeRequest,
    ) -> BoxFuture<'a, Result<Reply<Summary>>> {
        self.summarize.summarize(request)
    }

    fn extract<'a>(
        &'a self,
        request: &'a ExtractRequest,
    ) -> BoxFuture<'a, Result<Reply<Memories>>> {
        self.extract.extract(request)
    }

    fn select<'a>(&'a self, request: &'a SelectRequest) -> BoxFuture<'a, Result<Reply<Selection>>> {
        self.select.select(request)
    }

    fn skill<'a>(&'a self, request: &'a SkillRequest) -> BoxFuture<'a, Result<Reply<SkillDraft>>> {
        self.skill.skill(request)
    }
}
