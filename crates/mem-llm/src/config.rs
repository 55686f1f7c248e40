//! Model configuration: the `[llm]` table of `config.toml` files plus environment variables,
//! resolved per job. This module takes values (file texts, a variable lookup); reading files and
//! the environment is the caller's (the CLI's) job.
//!
//! ```toml
//! [llm]                       # defaults for every job
//! provider = "openai"         # offline (default) | openai | anthropic | claude-cli | codex-cli
//!                             # (ollama, vllm, llamacpp = openai)
//! command = "/usr/local/bin/claude"  # claude-cli / codex-cli: the program (default: claude /
//!                             # codex found on PATH)
//! model = "gpt-4o-mini"
//! base_url = "http://127.0.0.1:11434/v1"
//! api_key_env = "MY_KEY_VAR"  # or api_key = "..." (prefer the variable)
//! timeout_secs = 60
//! connect_timeout_secs = 10
//! max_retries = 3
//!
//! [llm.select]                # per job: summarize, extract, select, skill
//! model = "gpt-4o-mini"
//! timeout_secs = 8
//! ```
//!
//! Precedence, highest first: `MEM_LLM_<JOB>_PROVIDER` / `MEM_LLM_<JOB>_MODEL`; `[llm.<job>]` of
//! the project file, then of the user file; `MEM_LLM_PROVIDER` / `MEM_LLM_MODEL`; `[llm]` of the
//! project file, then of the user file; the built-in defaults. A job whose provider differs from
//! the general one does not inherit the general model, base URL or key. Base URL: configured, else
//! `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, else the provider's. Key: `api_key` or `api_key_env`
//! as configured (a named variable that is unset is an error, never a fallback), else
//! `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.
//!
//! Agent CLI providers (`claude-cli`, `codex-cli`, see [`crate::cli`]): no base URL and no key
//! (the CLI's own login); the program is `command`, else `claude` / `codex` looked up in the
//! `PATH` value of the environment lookup; model default `haiku` for Claude Code, Codex's own
//! default for Codex. A program that cannot be found is [`JobSettings::problem`], naming the
//! config file (or variable) that chose the provider.
//!
//! Trust: a project's file comes with the repository, so it may not say where requests go,
//! which secret they carry or which program runs. `base_url`, `api_key`, `api_key_env` and
//! `command` ([`PROJECT_FORBIDDEN_KEYS`])
//! in the project file, in `[llm]` or a job table, make [`LlmSettings::resolve`] fail with
//! [`LlmError::Config`] naming the file and the key; only the user file and the environment set
//! them.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::engine::Llm;
use crate::error::{LlmError, Result};
use crate::http::CallPolicy;
use crate::model::{ModelEngine, Router};
use crate::offline::OfflineEngine;
use crate::provider::{ApiKey, Provider, ProviderKind};
use crate::types::Job;

/// Settings of one job, or defaults for all (the fields of `[llm]` and `[llm.<job>]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSection {
    /// `offline`, `openai` or `anthropic` (aliases: see [`ProviderKind`]'s `FromStr`).
    pub provider: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// API root (`.../v1` for OpenAI-compatible servers; the host for Anthropic).
    pub base_url: Option<String>,
    /// The API key itself (prefer `api_key_env`).
    pub api_key: Option<ApiKey>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The program of an agent CLI provider (a path, or a name looked up on `PATH`).
    pub command: Option<String>,
    /// Total deadline of one call, retries included, in seconds.
    pub timeout_secs: Option<f64>,
    /// Connect timeout, in seconds.
    pub connect_timeout_secs: Option<f64>,
    /// Retries after the first attempt.
    pub max_retries: Option<u32>,
}

/// The `[llm]` table: defaults for every job (the fields of [`JobSection`]) plus per-job tables.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    /// See [`JobSection::provider`].
    pub provider: Option<String>,
    /// See [`JobSection::model`].
    pub model: Option<String>,
    /// See [`JobSection::base_url`].
    pub base_url: Option<String>,
    /// See [`JobSection::api_key`].
    pub api_key: Option<ApiKey>,
    /// See [`JobSection::api_key_env`].
    pub api_key_env: Option<String>,
    /// See [`JobSection::command`].
    pub command: Option<String>,
    /// See [`JobSection::timeout_secs`].
    pub timeout_secs: Option<f64>,
    /// See [`JobSection::connect_timeout_secs`].
    pub connect_timeout_secs: Option<f64>,
    /// See [`JobSection::max_retries`].
    pub max_retries: Option<u32>,
    /// `[llm.summarize]`.
    pub summarize: Option<JobSection>,
    /// `[llm.extract]`.
    pub extract: Option<JobSection>,
    /// `[llm.select]`.
    pub select: Option<JobSection>,
    /// `[llm.skill]`.
    pub skill: Option<JobSection>,
}

impl LlmSection {
    /// The defaults as a [`JobSection`].
    pub fn defaults(&self) -> JobSection {
        JobSection {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            api_key_env: self.api_key_env.clone(),
            command: self.command.clone(),
            timeout_secs: self.timeout_secs,
            connect_timeout_secs: self.connect_timeout_secs,
            max_retries: self.max_retries,
        }
    }
}

/// Keys a project's `config.toml` may not set (in `[llm]` or a job table): they decide where
/// requests go, which secret they carry and which program runs, and a project file comes with a
/// cloned repository.
pub const PROJECT_FORBIDDEN_KEYS: [&str; 4] = ["base_url", "api_key", "api_key_env", "command"];

/// A parsed `config.toml`; tables other than `[llm]` belong to other crates and are ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ConfigFile {
    /// The `[llm]` table.
    #[serde(default)]
    pub llm: Option<LlmSection>,
    /// The `[embeddings]` table (see [`crate::embed`]); absent: no embeddings.
    #[serde(default)]
    pub embeddings: Option<crate::embed::EmbeddingsSection>,
    /// Where the text came from (the `origin` given to [`ConfigFile::parse`]), for errors.
    #[serde(skip)]
    pub origin: String,
}

impl ConfigFile {
    /// Parses a file's text; `origin` (its path) names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ConfigFile> {
        let mut file: ConfigFile =
            toml::from_str(text).map_err(|e| parse_error(text, origin, &e))?;
        file.origin = origin.to_owned();
        Ok(file)
    }

    /// The first of [`PROJECT_FORBIDDEN_KEYS`] this file sets, as (table, key), e.g.
    /// `("[llm.extract]", "base_url")`.
    fn forbidden_project_key(&self) -> Option<(String, &'static str)> {
        let llm = self.llm.as_ref()?;
        let tables = [
            ("[llm]".to_owned(), Some(llm.defaults())),
            ("[llm.summarize]".to_owned(), llm.summarize.clone()),
            ("[llm.extract]".to_owned(), llm.extract.clone()),
            ("[llm.select]".to_owned(), llm.select.clone()),
            ("[llm.skill]".to_owned(), llm.skill.clone()),
        ];
        tables.into_iter().find_map(|(table, section)| {
            let section = section?;
            let key = [
                ("base_url", section.base_url.is_some()),
                ("api_key", section.api_key.is_some()),
                ("api_key_env", section.api_key_env.is_some()),
                ("command", section.command.is_some()),
            ]
            .into_iter()
            .find_map(|(key, set)| set.then_some(key))?;
            Some((table, key))
        })
    }

    fn job(&self, job: Job) -> Option<&JobSection> {
        let llm = self.llm.as_ref()?;
        match job {
            Job::Summarize => llm.summarize.as_ref(),
            Job::Extract => llm.extract.as_ref(),
            Job::Select => llm.select.as_ref(),
            Job::Skill => llm.skill.as_ref(),
        }
    }

    fn general(&self) -> Option<JobSection> {
        self.llm.as_ref().map(LlmSection::defaults)
    }
}

/// The resolved settings of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSettings {
    /// The job.
    pub job: Job,
    /// Who answers it.
    pub provider: ProviderKind,
    /// The model (`None` for the offline engine).
    pub model: Option<String>,
    /// The base URL (`None` for the offline engine).
    pub base_url: Option<String>,
    /// The API key, if any (never printed).
    pub api_key: Option<ApiKey>,
    /// Where the key came from, for display: `$OPENAI_API_KEY`, `config file`; `None` when there
    /// is no key.
    pub key_source: Option<String>,
    /// Timeouts and retries.
    pub policy: CallPolicy,
    /// The program of an agent CLI provider (`None` for the others).
    pub command: Option<CliCommand>,
}

/// The program an agent CLI provider runs, as configured and as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliCommand {
    /// `command` as configured, or the default name (`claude`, `codex`).
    pub name: String,
    /// Where it was found (`None`: not on `PATH`, or not an executable file).
    pub path: Option<std::path::PathBuf>,
    /// Which setting chose it, for errors: `command in [llm] of /u/config.toml`, or
    /// `provider = "claude-cli" from [llm] of /u/config.toml` for the default name.
    pub origin: String,
}

impl JobSettings {
    /// What makes this job unusable, if anything (e.g. a hosted provider without a key, an
    /// agent CLI whose program is not found).
    pub fn problem(&self) -> Option<String> {
        if self.provider.is_cli() {
            let command = self.command.as_ref()?;
            if command.path.is_some() {
                return None;
            }
            let install = match self.provider {
                ProviderKind::ClaudeCli => "Claude Code (npm install -g @anthropic-ai/claude-code)",
                _ => "Codex CLI (npm install -g @openai/codex)",
            };
            return Some(if command.name.contains('/') {
                format!(
                    "the {} program `{}` ({}) is not an executable file",
                    self.provider, command.name, command.origin
                )
            } else {
                format!(
                    "`{}` is not on PATH ({}): install {install} or set [llm] command = \
                     \"/path/to/{}\" in ~/.mewcode/config.toml",
                    command.name, command.origin, command.name
                )
            });
        }
        if self.provider == ProviderKind::Offline || self.api_key.is_some() {
            return None;
        }
        let base = self.base_url.as_deref().unwrap_or("");
        let default = self.provider.default_base_url().unwrap_or("");
        (base.trim_end_matches('/') == default).then(|| {
            format!(
                "no API key for {}: set {} or `api_key_env` in [llm]",
                self.provider,
                self.provider.key_variable().unwrap_or("a key variable")
            )
        })
    }

    /// The HTTP engine for this job; `None` for the offline engine.
    ///
    /// Errors: [`LlmError::Config`] when [`JobSettings::problem`] reports one or the provider
    /// cannot be built.
    pub fn model_engine(&self) -> Result<Option<ModelEngine>> {
        if self.provider == ProviderKind::Offline {
            return Ok(None);
        }
        if let Some(message) = self.problem() {
            return Err(LlmError::Config { message });
        }
        if self.provider.is_cli() {
            let program = self
                .command
                .as_ref()
                .and_then(|c| c.path.clone())
                .ok_or_else(|| LlmError::Config {
                    message: format!("no program for the {} provider", self.provider),
                })?;
            let model = self.model.clone().unwrap_or_default();
            let provider = Provider::cli(self.provider, program, model)?;
            return Ok(Some(ModelEngine::new(provider, self.policy)));
        }
        let base = self
            .base_url
            .as_deref()
            .or(self.provider.default_base_url())
            .unwrap_or_default();
        let model = self
            .model
            .clone()
            .or(self.provider.default_model().map(str::to_owned))
            .unwrap_or_default();
        let provider = Provider::new(
            self.provider,
            base,
            model,
            self.api_key.clone(),
            &self.policy,
        )?;
        Ok(Some(ModelEngine::new(provider, self.policy)))
    }

    /// The engine for this job (offline or HTTP).
    pub fn engine(&self) -> Result<Arc<dyn Llm>> {
        Ok(match self.model_engine()? {
            Some(engine) => Arc::new(engine),
            None => Arc::new(OfflineEngine),
        })
    }
}

/// The resolved settings of the four jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmSettings {
    /// One entry per job, in [`Job::ALL`] order.
    pub jobs: [JobSettings; 4],
}

impl LlmSettings {
    /// Every job on the offline engine.
    pub fn offline() -> Self {
        LlmSettings {
            jobs: Job::ALL.map(|job| JobSettings {
                job,
                provider: ProviderKind::Offline,
                model: None,
                base_url: None,
                api_key: None,
                key_source: None,
                policy: CallPolicy::for_job(job),
                command: None,
            }),
        }
    }

    /// Resolves the settings from the user file, the project file and an environment lookup
    /// (see the module docs for the precedence).
    ///
    /// Errors: [`LlmError::Config`] for an unknown provider name, a project file that sets one of
    /// [`PROJECT_FORBIDDEN_KEYS`], or an `api_key_env` naming a variable that is not set.
    pub fn resolve(
        user: Option<&ConfigFile>,
        project: Option<&ConfigFile>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self> {
        if let Some(project) = project
            && let Some((table, key)) = project.forbidden_project_key()
        {
            return Err(LlmError::Config {
                message: format!(
                    "`{key}` in {table} of the project file {} is refused: a project's config may \
                     not set base_url, api_key, api_key_env or command (they decide where \
                     requests and your API key go, and which program runs); set it in your user \
                     config ~/.mewcode/config.toml or the environment",
                    project.origin
                ),
            });
        }
        let mut jobs = Vec::with_capacity(Job::ALL.len());
        for job in Job::ALL {
            jobs.push(resolve_job(job, user, project, env)?);
        }
        let jobs: [JobSettings; 4] = jobs.try_into().map_err(|_| LlmError::Config {
            message: "internal: wrong number of jobs".to_owned(),
        })?;
        Ok(LlmSettings { jobs })
    }

    /// The settings of `job`.
    pub fn job(&self, job: Job) -> &JobSettings {
        &self.jobs[match job {
            Job::Summarize => 0,
            Job::Extract => 1,
            Job::Select => 2,
            Job::Skill => 3,
        }]
    }

    /// A [`Router`] with each job's engine.
    ///
    /// Errors: the first job whose engine cannot be built ([`JobSettings::engine`]).
    pub fn router(&self) -> Result<Router> {
        Ok(Router::new(
            self.job(Job::Summarize).engine()?,
            self.job(Job::Extract).engine()?,
            self.job(Job::Select).engine()?,
        )
        .with_skill(self.job(Job::Skill).engine()?))
    }
}

/// The largest `timeout_secs` / `connect_timeout_secs` accepted, in seconds (one hour).
pub const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// The largest `max_retries` accepted.
pub const MAX_RETRIES: u32 = 10;

/// The first layer's value of a seconds setting (`key`, read by `get`) as a duration.
///
/// Errors: [`LlmError::Config`] naming the key, the value and its origin when the value is not a
/// number of seconds in (0, [`MAX_TIMEOUT_SECS`]].
fn seconds(
    layers: &[Layer],
    key: &str,
    get: impl Fn(&JobSection) -> Option<f64>,
) -> Result<Option<Duration>> {
    let Some((layer, secs)) = layers
        .iter()
        .find_map(|l| get(&l.section).map(|secs| (l, secs)))
    else {
        return Ok(None);
    };
    let in_range = secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT_SECS;
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if in_range && !d.is_zero() => Ok(Some(d)),
        _ => Err(LlmError::Config {
            message: format!(
                "{key} = {secs} in {}: expected a number of seconds greater than 0 and at most \
                 {MAX_TIMEOUT_SECS}",
                layer.origin
            ),
        }),
    }
}

/// A parse error as file, line, column and message. toml's `Display` quotes the offending line,
/// which may be `api_key = "sk-..."`: only its message is kept, with quoted values masked.
fn parse_error(text: &str, origin: &str, error: &toml::de::Error) -> LlmError {
    let (line, column) = match error.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            (
                before.matches('\n').count() + 1,
                before[line_start..].chars().count() + 1,
            )
        }
        None => (0, 0),
    };
    LlmError::ConfigFile {
        origin: origin.to_owned(),
        line,
        column,
        message: mask_quoted(error.message().trim()),
    }
}

/// `text` with the contents of every `"..."` replaced by `***` (serde's messages quote values:
/// `invalid type: string "sk-...", expected u32`).
fn mask_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let mut inside = true;
    for part in parts {
        out.push('"');
        out.push_str(if inside { "***" } else { part });
        inside = !inside;
    }
    out
}

/// The provider named by the first layer that names one; `table` says where in a file.
///
/// Errors: [`LlmError::Config`] for an unknown name, saying which file (and table) or variable
/// it came from.
fn provider_of(layers: &[Layer], table: &str) -> Result<Option<(ProviderKind, String)>> {
    let Some((layer, name)) = layers
        .iter()
        .find_map(|l| non_empty(l.section.provider.clone()).map(|p| (l, p)))
    else {
        return Ok(None);
    };
    let from = if layer.origin.starts_with('$') {
        layer.origin.clone()
    } else {
        format!("{table} of {}", layer.origin)
    };
    name.parse::<ProviderKind>()
        .map(|kind| Some((kind, from.clone())))
        .map_err(|e| match e {
            LlmError::Config { message } => LlmError::Config {
                message: format!("{message}, from {from}"),
            },
            other => other,
        })
}

/// One source of settings for a job, with where it came from (a file's path, or the variable
/// `$MEM_LLM_PROVIDER` / `$MEM_LLM_<JOB>_PROVIDER` for the environment's) for errors.
struct Layer {
    origin: String,
    section: JobSection,
}

impl Layer {
    fn new(origin: impl Into<String>, section: JobSection) -> Self {
        Layer {
            origin: origin.into(),
            section,
        }
    }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

fn resolve_job(
    job: Job,
    user: Option<&ConfigFile>,
    project: Option<&ConfigFile>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobSettings> {
    let upper = job.as_str().to_ascii_uppercase();
    let env_job = JobSection {
        provider: non_empty(env(&format!("MEM_LLM_{upper}_PROVIDER"))),
        model: non_empty(env(&format!("MEM_LLM_{upper}_MODEL"))),
        ..JobSection::default()
    };
    let env_general = JobSection {
        provider: non_empty(env("MEM_LLM_PROVIDER")),
        model: non_empty(env("MEM_LLM_MODEL")),
        ..JobSection::default()
    };
    let origin = |f: &ConfigFile| f.origin.clone();
    let job_layers: Vec<Layer> = [
        Some(Layer::new(format!("$MEM_LLM_{upper}_PROVIDER"), env_job)),
        project.and_then(|f| Some(Layer::new(origin(f), f.job(job)?.clone()))),
        user.and_then(|f| Some(Layer::new(origin(f), f.job(job)?.clone()))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let general_layers: Vec<Layer> = [
        Some(Layer::new("$MEM_LLM_PROVIDER", env_general)),
        project.and_then(|f| Some(Layer::new(origin(f), f.general()?))),
        user.and_then(|f| Some(Layer::new(origin(f), f.general()?))),
    ]
    .into_iter()
    .flatten()
    .collect();

    let first = |layers: &[Layer], f: &dyn Fn(&JobSection) -> Option<String>| {
        layers.iter().find_map(|l| non_empty(f(&l.section)))
    };
    let general = provider_of(&general_layers, "[llm]")?;
    let general_provider = general.as_ref().map_or(ProviderKind::Offline, |g| g.0);
    let (provider, provider_origin) = provider_of(&job_layers, &format!("[llm.{job}]"))?
        .or(general)
        .unwrap_or((ProviderKind::Offline, "the default".to_owned()));
    // The general layers count for model, URL and key only when they configure the same provider.
    let mut layers = job_layers;
    if provider == general_provider {
        layers.extend(general_layers);
    }
    let mut policy = CallPolicy::for_job(job);
    if let Some(t) = seconds(&layers, "timeout_secs", |l| l.timeout_secs)? {
        policy.timeout = t;
    }
    if let Some(t) = seconds(&layers, "connect_timeout_secs", |l| l.connect_timeout_secs)? {
        policy.connect_timeout = t;
    }
    if let Some(layer) = layers.iter().find(|l| l.section.max_retries.is_some()) {
        let n = layer.section.max_retries.unwrap_or_default();
        if n > MAX_RETRIES {
            return Err(LlmError::Config {
                message: format!(
                    "max_retries = {n} in {}: expected 0 to {MAX_RETRIES}",
                    layer.origin
                ),
            });
        }
        policy.max_retries = n;
    }
    if provider == ProviderKind::Offline {
        return Ok(JobSettings {
            job,
            provider,
            model: None,
            base_url: None,
            api_key: None,
            key_source: None,
            policy,
            command: None,
        });
    }
    if provider.is_cli() {
        let configured = layers
            .iter()
            .find_map(|l| non_empty(l.section.command.clone()).map(|c| (c, l.origin.clone())));
        let (name, origin) = match configured {
            Some((command, origin)) => (command, format!("command in {origin}")),
            None => (
                provider.default_command().unwrap_or_default().to_owned(),
                format!("provider = \"{provider}\" from {provider_origin}"),
            ),
        };
        let path = crate::cli::find_command(&name, env("PATH").as_deref());
        return Ok(JobSettings {
            job,
            provider,
            model: first(&layers, &|l| l.model.clone())
                .or_else(|| provider.default_model().map(str::to_owned)),
            base_url: None,
            api_key: None,
            key_source: None,
            policy,
            command: Some(CliCommand { name, path, origin }),
        });
    }
    let model = first(&layers, &|l| l.model.clone())
        .or_else(|| provider.default_model().map(str::to_owned));
    let base_url = first(&layers, &|l| l.base_url.clone())
        .or_else(|| provider.base_url_variable().and_then(|v| non_empty(env(v))))
        .or_else(|| provider.default_base_url().map(str::to_owned));
    let mut api_key = None;
    let mut key_source = None;
    for layer in &layers {
        if let Some(key) = layer
            .section
            .api_key
            .as_ref()
            .and_then(|k| non_empty(Some(k.expose().to_owned())))
        {
            api_key = Some(ApiKey::new(key));
            key_source = Some("config file".to_owned());
            break;
        }
        if let Some(var) = non_empty(layer.section.api_key_env.clone()) {
            // A named variable that is unset is a mistake to report, not a reason to send
            // another key.
            let Some(key) = non_empty(env(&var)) else {
                return Err(LlmError::Config {
                    message: format!(
                        "api_key_env = \"{var}\" in {} (job {job}): the variable {var} is not set",
                        layer.origin
                    ),
                });
            };
            api_key = Some(ApiKey::new(key));
            key_source = Some(format!("${var}"));
            break;
        }
    }
    if api_key.is_none()
        && let Some(var) = provider.key_variable()
        && let Some(key) = non_empty(env(var))
    {
        api_key = Some(ApiKey::new(key));
        key_source = Some(format!("${var}"));
    }
    Ok(JobSettings {
        job,
        provider,
        model,
        base_url,
        api_key,
        key_source,
        policy,
        command: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn file(text: &str) -> ConfigFile {
        ConfigFile::parse(text, "test").unwrap_or_default()
    }

    #[test]
    fn default_is_offline_everywhere() {
        let s = LlmSettings::resolve(None, None, &env(&[])).unwrap();
        assert_eq!(s, LlmSettings::offline());
        assert_eq!(s.job(Job::Select).policy.timeout, Duration::from_secs(8));
    }

    #[test]
    fn environment_selects_a_provider_with_its_key() {
        let s = LlmSettings::resolve(
            None,
            None,
            &env(&[
                ("MEM_LLM_PROVIDER", "openai"),
                ("OPENAI_API_KEY", "sk-x"),
                ("MEM_LLM_SELECT_MODEL", "tiny"),
            ]),
        )
        .unwrap();
        let sum = s.job(Job::Summarize);
        assert_eq!(sum.provider, ProviderKind::OpenAi);
        assert_eq!(sum.model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(sum.base_url.as_deref(), Some("https://api.openai.com/v1"));
        assert_eq!(sum.key_source.as_deref(), Some("$OPENAI_API_KEY"));
        assert_eq!(s.job(Job::Select).model.as_deref(), Some("tiny"));
    }

    #[test]
    fn project_overrides_user_and_jobs_override_general() {
        let user = file(
            "[llm]\nprovider = \"anthropic\"\nmodel = \"claude-x\"\n[llm.select]\ntimeout_secs = 5\n[llm.extract]\nbase_url = \"http://localhost:11434/v1\"\n",
        );
        let project = file(
            "[llm]\nmodel = \"claude-y\"\n[llm.extract]\nprovider = \"ollama\"\nmodel = \"qwen\"\n",
        );
        let s = LlmSettings::resolve(
            Some(&user),
            Some(&project),
            &env(&[("ANTHROPIC_API_KEY", "k")]),
        )
        .unwrap();
        let sum = s.job(Job::Summarize);
        assert_eq!(
            (sum.provider, sum.model.as_deref()),
            (ProviderKind::Anthropic, Some("claude-y"))
        );
        let ext = s.job(Job::Extract);
        assert_eq!(
            (ext.provider, ext.model.as_deref()),
            (ProviderKind::OpenAi, Some("qwen"))
        );
        assert_eq!(
            ext.api_key, None,
            "the anthropic key is not inherited by another provider"
        );
        assert_eq!(ext.base_url.as_deref(), Some("http://localhost:11434/v1"));
        assert_eq!(ext.problem(), None, "a local server needs no key");
        assert_eq!(s.job(Job::Select).policy.timeout, Duration::from_secs(5));
    }

    #[test]
    fn missing_key_for_a_hosted_provider_is_a_problem() {
        let s =
            LlmSettings::resolve(None, None, &env(&[("MEM_LLM_PROVIDER", "anthropic")])).unwrap();
        let problem = s.job(Job::Extract).problem().unwrap_or_default();
        assert!(problem.contains("ANTHROPIC_API_KEY"), "{problem}");
        assert!(s.router().is_err());
    }

    #[test]
    fn api_key_env_names_the_variable() {
        let user = file("[llm]\nprovider = \"openai\"\napi_key_env = \"MY_KEY\"\n");
        let s = LlmSettings::resolve(
            Some(&user),
            None,
            &env(&[("MY_KEY", "abc"), ("OPENAI_API_KEY", "other")]),
        )
        .unwrap();
        let j = s.job(Job::Summarize);
        assert_eq!(j.api_key.as_ref().map(ApiKey::expose), Some("abc"));
        assert_eq!(j.key_source.as_deref(), Some("$MY_KEY"));
    }

    fn config_error(result: Result<LlmSettings>) -> String {
        match result {
            Err(LlmError::Config { message }) => message,
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }

    #[test]
    fn a_project_file_may_not_say_where_requests_go_or_which_key_they_carry() {
        let user = file("[llm]\nprovider = \"openai\"\n");
        let keys = [
            ("base_url", "\"http://attacker.invalid/v1\""),
            ("api_key", "\"sk-planted\""),
            ("api_key_env", "\"AWS_SECRET_ACCESS_KEY\""),
            ("command", "\"/repo/evil.sh\""),
        ];
        for (key, value) in keys {
            for table in ["llm", "llm.select"] {
                let text = format!("[{table}]\nprovider = \"openai\"\n{key} = {value}\n");
                let project = ConfigFile::parse(&text, "/repo/.mewcode/config.toml").unwrap();
                let message = config_error(LlmSettings::resolve(
                    Some(&user),
                    Some(&project),
                    &env(&[("OPENAI_API_KEY", "sk-x"), ("AWS_SECRET_ACCESS_KEY", "aws")]),
                ));
                assert!(
                    message.contains(&format!("`{key}` in [{table}]"))
                        && message.contains("/repo/.mewcode/config.toml"),
                    "{message}"
                );
            }
        }
        // The same keys in the user file are fine.
        let user = file("[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n");
        let project = file("[llm]\nmodel = \"qwen\"\n");
        let s = LlmSettings::resolve(Some(&user), Some(&project), &env(&[])).unwrap();
        assert_eq!(
            s.job(Job::Extract).base_url.as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
    }

    #[test]
    fn an_unset_api_key_env_is_an_error_not_a_fallback() {
        let user = ConfigFile::parse(
            "[llm]\nprovider = \"openai\"\napi_key_env = \"MY_KEY\"\n",
            "/home/u/.mewcode/config.toml",
        )
        .unwrap();
        let message = config_error(LlmSettings::resolve(
            Some(&user),
            None,
            &env(&[("OPENAI_API_KEY", "other")]),
        ));
        assert!(
            message.contains("MY_KEY is not set")
                && message.contains("/home/u/.mewcode/config.toml"),
            "{message}"
        );
    }

    #[test]
    fn parse_errors_give_the_position_but_never_the_line() {
        let check = |text: &str, expected: &str| match ConfigFile::parse(text, "/u/config.toml") {
            Err(e) => {
                let shown = format!("{e} {e:?}");
                assert!(!shown.contains("sk-secret"), "{shown}");
                assert_eq!(e.to_string(), expected);
            }
            Ok(f) => panic!("parsed: {f:?}"),
        };
        check(
            "[llm]\nprovider = \"openai\"\napi_key = sk-secret-123\n",
            "cannot parse the model configuration /u/config.toml, line 3, column 11: \
             string values must be quoted, expected literal string",
        );
        check(
            "[llm]\n# é\nmax_retries = \"sk-secret-123\"\n",
            "cannot parse the model configuration /u/config.toml, line 3, column 15: \
             invalid type: string \"***\", expected u32",
        );
    }

    #[test]
    fn out_of_range_timeouts_and_retries_are_errors() {
        for (line, key) in [
            (
                "timeout_secs = 1e30",
                "timeout_secs = 1000000000000000000000000000000",
            ),
            (
                "timeout_secs = 1e300",
                "timeout_secs = 1000000000000000000000",
            ),
            ("timeout_secs = 0", "timeout_secs = 0 "),
            ("timeout_secs = -5", "timeout_secs = -5 "),
            ("timeout_secs = nan", "timeout_secs = NaN "),
            ("timeout_secs = inf", "timeout_secs = inf "),
            ("timeout_secs = 3601", "timeout_secs = 3601 "),
            (
                "connect_timeout_secs = 1e30",
                "connect_timeout_secs = 1000000000000000000000",
            ),
            ("max_retries = 11", "max_retries = 11 "),
        ] {
            let user = ConfigFile::parse(
                &format!("[llm]\nprovider = \"openai\"\n[llm.select]\n{line}\n"),
                "/u/config.toml",
            )
            .unwrap();
            let message = config_error(LlmSettings::resolve(Some(&user), None, &env(&[])));
            assert!(
                message.starts_with(key) && message.contains("in /u/config.toml"),
                "{line}: {message}"
            );
        }
        let user =
            file("[llm]\ntimeout_secs = 3600\nconnect_timeout_secs = 0.5\nmax_retries = 10\n");
        let s = LlmSettings::resolve(Some(&user), None, &env(&[])).unwrap();
        let policy = s.job(Job::Summarize).policy;
        assert_eq!(
            (policy.timeout, policy.connect_timeout, policy.max_retries),
            (Duration::from_secs(3600), Duration::from_millis(500), 10)
        );
    }

    #[test]
    fn secrets_are_redacted_and_unknown_providers_say_where_they_came_from() {
        let user = ConfigFile::parse(
            "[llm]\napi_key = \"sk-config-secret\"\n[llm.select]\napi_key = \"sk-job-secret\"\nprovider = \"gemini\"\n",
            "/u/config.toml",
        )
        .unwrap();
        let shown = format!("{user:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(
            config_error(LlmSettings::resolve(Some(&user), None, &env(&[]))),
            "unknown provider `gemini` (expected offline, openai, anthropic, claude-cli or codex-cli), from [llm.select] of /u/config.toml"
        );
        assert_eq!(
            config_error(LlmSettings::resolve(
                None,
                None,
                &env(&[("MEM_LLM_PROVIDER", "gpt")])
            )),
            "unknown provider `gpt` (expected offline, openai, anthropic, claude-cli or codex-cli), from $MEM_LLM_PROVIDER"
        );
        assert_eq!(
            config_error(LlmSettings::resolve(
                None,
                None,
                &env(&[("MEM_LLM_EXTRACT_PROVIDER", "gpt")])
            )),
            "unknown provider `gpt` (expected offline, openai, anthropic, claude-cli or codex-cli), from $MEM_LLM_EXTRACT_PROVIDER"
        );
    }

    /// A folder with executable `claude` and `codex` scripts, for the PATH of the CLI tests.
    fn fake_clis() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for name in ["claude", "codex"] {
            let p = dir.path().join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        dir
    }

    #[test]
    fn agent_cli_providers_find_their_program_and_need_no_key() {
        let dir = fake_clis();
        let path = dir.path().display().to_string();
        let user = ConfigFile::parse(
            "[llm]\nprovider = \"claude-cli\"\n[llm.select]\nprovider = \"codex-cli\"\n",
            "/u/config.toml",
        )
        .unwrap();
        let s = LlmSettings::resolve(Some(&user), None, &env(&[("PATH", &path)])).unwrap();
        let extract = s.job(Job::Extract);
        assert_eq!(extract.provider, ProviderKind::ClaudeCli);
        assert_eq!(
            extract.model.as_deref(),
            Some("haiku"),
            "a cheap model by default"
        );
        assert_eq!(
            (extract.base_url.as_deref(), extract.api_key.as_ref()),
            (None, None)
        );
        let command = extract.command.clone().unwrap();
        assert_eq!(command.path, Some(dir.path().join("claude")));
        assert_eq!(extract.problem(), None);
        let engine = extract.model_engine().unwrap().unwrap();
        assert_eq!(engine.name(), "claude-cli:haiku");
        assert!(
            engine.provider().is_hosted(),
            "prompts pass the secret filter"
        );
        let select = s.job(Job::Select);
        assert_eq!(select.provider, ProviderKind::CodexCli);
        assert_eq!(select.model, None, "Codex's own default model");
        assert_eq!(
            select.command.as_ref().and_then(|c| c.path.clone()),
            Some(dir.path().join("codex"))
        );
        assert_eq!(select.model_engine().unwrap().unwrap().name(), "codex-cli");
        // The job's own timeout is kept.
        assert_eq!(select.policy.timeout, Duration::from_secs(8));
    }

    #[test]
    fn a_missing_agent_cli_is_a_problem_naming_the_config_file() {
        let user =
            ConfigFile::parse("[llm]\nprovider = \"claude-cli\"\n", "/u/config.toml").unwrap();
        for path in [None, Some("/nonexistent")] {
            let pairs: Vec<(&str, &str)> = path.map(|p| ("PATH", p)).into_iter().collect();
            let s = LlmSettings::resolve(Some(&user), None, &env(&pairs)).unwrap();
            let problem = s.job(Job::Extract).problem().unwrap_or_default();
            assert!(
                problem.contains("`claude` is not on PATH")
                    && problem.contains("provider = \"claude-cli\" from [llm] of /u/config.toml")
                    && problem.contains("[llm] command"),
                "{problem}"
            );
            assert!(s.router().is_err(), "no engine without its program");
        }
        // A configured command that is not there names the key and the file.
        let user = ConfigFile::parse(
            "[llm]\nprovider = \"codex-cli\"\ncommand = \"/opt/none/codex\"\n",
            "/u/config.toml",
        )
        .unwrap();
        let s = LlmSettings::resolve(Some(&user), None, &env(&[])).unwrap();
        let problem = s.job(Job::Summarize).problem().unwrap_or_default();
        assert_eq!(
            problem,
            "the codex-cli program `/opt/none/codex` (command in /u/config.toml) is not an \
             executable file"
        );
        // A command given as a path is used as is.
        let dir = fake_clis();
        let text = format!(
            "[llm]\nprovider = \"codex-cli\"\ncommand = \"{}\"\n",
            dir.path().join("codex").display()
        );
        let user = ConfigFile::parse(&text, "/u/config.toml").unwrap();
        let s = LlmSettings::resolve(Some(&user), None, &env(&[])).unwrap();
        assert_eq!(s.job(Job::Summarize).problem(), None);
    }

    #[test]
    fn bad_files_and_names_are_errors() {
        assert!(ConfigFile::parse("[llm]\nprovder = \"openai\"\n", "x").is_err());
        assert!(ConfigFile::parse("[other]\nanything = 1\n", "x").is_ok());
        let f = file("[llm]\nprovider = \"gemini\"\n");
        assert!(LlmSettings::resolve(Some(&f), None, &env(&[])).is_err());
    }
}
