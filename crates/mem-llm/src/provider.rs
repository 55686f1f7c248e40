//! The providers: OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp server, vLLM,
//! ...) and Anthropic messages over HTTP, and the user's agent CLI (`claude -p`, `codex exec`,
//! see [`crate::cli`]).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde_json::{Value, json};

use crate::error::{LlmError, Result};
use crate::http::{CallPolicy, build_client, send_json};
use crate::prompt::ChatRequest;

/// Who answers a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProviderKind {
    /// The offline engine (no model). The default.
    #[default]
    Offline,
    /// `POST {base}/chat/completions` (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio, ...).
    OpenAi,
    /// `POST {base}/v1/messages` (Anthropic).
    Anthropic,
    /// `claude -p` with the user's Claude Code login ([`crate::cli`]).
    ClaudeCli,
    /// `codex exec` with the user's Codex CLI login ([`crate::cli`]).
    CodexCli,
}

impl ProviderKind {
    /// The configuration name: `offline`, `openai`, `anthropic`, `claude-cli` or `codex-cli`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Offline => "offline",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::ClaudeCli => "claude-cli",
            ProviderKind::CodexCli => "codex-cli",
        }
    }

    /// `true` for the agent CLI providers (`claude-cli`, `codex-cli`).
    pub fn is_cli(self) -> bool {
        matches!(self, ProviderKind::ClaudeCli | ProviderKind::CodexCli)
    }

    /// The program run by an agent CLI provider when `[llm] command` is not set (looked up on
    /// `PATH`): `claude` or `codex`; `None` for the others.
    pub fn default_command(self) -> Option<&'static str> {
        match self {
            ProviderKind::ClaudeCli => Some("claude"),
            ProviderKind::CodexCli => Some("codex"),
            _ => None,
        }
    }

    /// The base URL used when none is configured.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Offline | ProviderKind::ClaudeCli | ProviderKind::CodexCli => None,
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
        }
    }

    /// The model used when none is configured (`codex-cli`: none, Codex's own default).
    pub fn default_model(self) -> Option<&'static str> {
        match self {
            ProviderKind::Offline | ProviderKind::CodexCli => None,
            ProviderKind::OpenAi => Some("gpt-4o-mini"),
            ProviderKind::Anthropic => Some("claude-haiku-4-5"),
            ProviderKind::ClaudeCli => Some("haiku"),
        }
    }

    /// The environment variable conventionally holding this provider's API key.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            ProviderKind::Offline | ProviderKind::ClaudeCli | ProviderKind::CodexCli => None,
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
        }
    }

    /// The environment variable conventionally holding this provider's base URL.
    pub fn base_url_variable(self) -> Option<&'static str> {
        match self {
            ProviderKind::Offline | ProviderKind::ClaudeCli | ProviderKind::CodexCli => None,
            ProviderKind::OpenAi => Some("OPENAI_BASE_URL"),
            ProviderKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = LlmError;

    /// Accepts `offline`/`none`, `openai` and the servers that speak its API (`openai-compatible`,
    /// `ollama`, `llamacpp`, `llama.cpp`, `vllm`, `lmstudio`), `anthropic`/`claude`,
    /// `claude-cli`/`claude-code` and `codex-cli`/`codex`.
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "offline" | "none" | "" => Ok(ProviderKind::Offline),
            "openai" | "openai-compatible" | "openai_compatible" | "ollama" | "llamacpp"
            | "llama.cpp" | "llama-cpp" | "vllm" | "lmstudio" => Ok(ProviderKind::OpenAi),
            "anthropic" | "claude" => Ok(ProviderKind::Anthropic),
            "claude-cli" | "claude_cli" | "claude-code" | "claude_code" => {
                Ok(ProviderKind::ClaudeCli)
            }
            "codex-cli" | "codex_cli" | "codex" => Ok(ProviderKind::CodexCli),
            other => Err(LlmError::Config {
                message: format!(
                    "unknown provider `{other}` (expected offline, openai, anthropic, claude-cli \
                     or codex-cli)"
                ),
            }),
        }
    }
}

/// An API key. Its `Debug` and `Display` never show it. Deserializes from a string (the
/// `api_key` of a config file).
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// One model endpoint: provider, base URL (or, for an agent CLI, the program), model and key.
#[derive(Debug, Clone)]
pub struct Provider {
    kind: ProviderKind,
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    /// The HTTP client (`None` for an agent CLI).
    client: Option<reqwest::Client>,
    /// The program of an agent CLI provider.
    program: Option<PathBuf>,
}

impl Provider {
    /// A provider for `kind` (not [`ProviderKind::Offline`]) at `base_url`.
    ///
    /// OpenAI-compatible: `base_url` is the API root including its version (`.../v1`); a URL with
    /// no path gets `/v1` (so `http://127.0.0.1:8080` works for llama.cpp). Anthropic: the host
    /// root (`https://api.anthropic.com`); a trailing `/v1` is accepted.
    ///
    /// Errors: [`LlmError::Config`] for the offline kind, a URL that is not http(s), or a client
    /// that cannot be built.
    pub fn new(
        kind: ProviderKind,
        base_url: &str,
        model: impl Into<String>,
        api_key: Option<ApiKey>,
        policy: &CallPolicy,
    ) -> Result<Provider> {
        if kind == ProviderKind::Offline || kind.is_cli() {
            return Err(LlmError::Config {
                message: format!("the {kind} provider has no HTTP endpoint"),
            });
        }
        let base = base_url.trim().trim_end_matches('/');
        let Some(rest) = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"))
        else {
            return Err(LlmError::Config {
                message: format!("base URL `{base}` must start with http:// or https://"),
            });
        };
        let has_path = rest.contains('/');
        let base_url = match kind {
            ProviderKind::OpenAi if !has_path => format!("{base}/v1"),
            ProviderKind::Anthropic => base.strip_suffix("/v1").unwrap_or(base).to_owned(),
            _ => base.to_owned(),
        };
        Ok(Provider {
            kind,
            base_url,
            model: model.into(),
            api_key,
            client: Some(build_client(policy.connect_timeout)?),
            program: None,
        })
    }

    /// An agent CLI provider (`claude-cli` or `codex-cli`) running `program` with `model`
    /// (empty: the CLI's own default).
    ///
    /// Errors: [`LlmError::Config`] for a kind that is not an agent CLI.
    pub fn cli(kind: ProviderKind, program: PathBuf, model: impl Into<String>) -> Result<Provider> {
        if !kind.is_cli() {
            return Err(LlmError::Config {
                message: format!("{kind} is not an agent CLI provider"),
            });
        }
        Ok(Provider {
            kind,
            base_url: program.display().to_string(),
            model: model.into(),
            api_key: None,
            client: None,
            program: Some(program),
        })
    }

    /// The provider kind.
    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// `true` when the base URL's host is not a loopback address (`localhost`, `127.0.0.0/8`,
    /// `::1`): a hosted provider, to which prompts are sent only after the secret filter
    /// ([`mem_core::secrets::redact`]).
    /// An agent CLI always sends to its vendor's hosted model: `true`.
    pub fn is_hosted(&self) -> bool {
        self.kind.is_cli() || is_hosted_url(&self.base_url)
    }

    /// The full URL requests go to (an agent CLI: its program).
    pub fn endpoint(&self) -> String {
        match self.kind {
            ProviderKind::ClaudeCli | ProviderKind::CodexCli => self.base_url.clone(),
            ProviderKind::Anthropic => format!("{}/v1/messages", self.base_url),
            _ => format!("{}/chat/completions", self.base_url),
        }
    }

    /// The JSON body sent for `request`.
    ///
    /// OpenAI-compatible: `model`, `messages` (system + user), `max_tokens`, `temperature: 0`,
    /// and `response_format: {type: json_schema, json_schema: {name, strict, schema}}` when the
    /// request has a schema. Anthropic: `model`, `max_tokens`, `temperature: 0`, `system`,
    /// `messages` (one user message); the schema is described in the prompt only.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        match self.kind {
            ProviderKind::Anthropic => json!({
                "model": self.model,
                "max_tokens": request.max_tokens,
                "temperature": 0,
                "system": request.system,
                "messages": [{"role": "user", "content": request.user}],
            }),
            _ => {
                let mut body = json!({
                    "model": self.model,
                    "messages": [
                        {"role": "system", "content": request.system},
                        {"role": "user", "content": request.user},
                    ],
                    "max_tokens": request.max_tokens,
                    "temperature": 0,
                });
                if let Some(schema) = &request.schema {
                    body["response_format"] = json!({
                        "type": "json_schema",
                        "json_schema": {
                            "name": format!("mewmem_{}", request.job),
                            "strict": true,
                            "schema": schema,
                        }
                    });
                }
                body
            }
        }
    }

    /// Sends `request` and returns the reply's text.
    ///
    /// Errors: the HTTP errors of [`crate::http::send_json`]; [`LlmError::MalformedReply`] when
    /// the body lacks the provider's reply shape; [`LlmError::EmptyReply`] when the text is
    /// empty.
    pub async fn complete(&self, request: &ChatRequest, policy: &CallPolicy) -> Result<String> {
        let url = self.endpoint();
        // One secret filter (SPEC "One memory, not three"): nothing leaves for a hosted provider
        // unredacted, whichever job built the prompt.
        let redacted;
        let request = if self.is_hosted() {
            let system = mem_core::secrets::redact(&request.system);
            let user = mem_core::secrets::redact(&request.user);
            let withheld = system.withheld() + user.withheld();
            if withheld > 0 {
                tracing::info!(job = %request.job, withheld, "secrets withheld from the prompt");
            }
            redacted = ChatRequest {
                system: system.text,
                user: user.text,
                ..request.clone()
            };
            &redacted
        } else {
            request
        };
        if let Some(program) = &self.program {
            return crate::cli::complete(self.kind, program, &self.model, request, policy).await;
        }
        let Some(client) = &self.client else {
            return Err(LlmError::Config {
                message: format!("the {} provider has no HTTP client", self.kind),
            });
        };
        let body = self.request_body(request);
        let key = self.api_key.as_ref().map(ApiKey::expose);
        let reply = send_json(&url, policy, key, |remaining| {
            let mut builder = client.post(&url).timeout(remaining).json(&body);
            match self.kind {
                ProviderKind::Anthropic => {
                    builder = builder.header("anthropic-version", "2023-06-01");
                    if let Some(key) = key {
                        builder = builder.header("x-api-key", key);
                    }
                }
                _ => {
                    if let Some(key) = key {
                        builder = builder.bearer_auth(key);
                    }
                }
            }
            builder
        })
        .await?;
        let text = match self.kind {
            ProviderKind::Anthropic => anthropic_text(&reply),
            _ => openai_text(&reply),
        }
        .map_err(|reason| LlmError::MalformedReply {
            url: url.clone(),
            reason,
        })?;
        if text.trim().is_empty() {
            return Err(LlmError::EmptyReply { url });
        }
        Ok(text)
    }
}

fn openai_text(reply: &Value) -> std::result::Result<String, String> {
    let choice = reply
        .get("choices")
        .and_then(Value::as_array)
        .ok_or("no `choices` list")?
        .first()
        .ok_or("`choices` is empty")?;
    match choice.pointer("/message/content") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) | None => Ok(String::new()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("")),
        Some(_) => Err("`message.content` is not text".to_owned()),
    }
}

fn anthropic_text(reply: &Value) -> std::result::Result<String, String> {
    let blocks = reply
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` list")?;
    Ok(blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_parse_with_aliases() {
        assert_eq!(
            "ollama".parse::<ProviderKind>().ok(),
            Some(ProviderKind::OpenAi)
        );
        assert_eq!(
            "Anthropic".parse::<ProviderKind>().ok(),
            Some(ProviderKind::Anthropic)
        );
        assert_eq!(
            "none".parse::<ProviderKind>().ok(),
            Some(ProviderKind::Offline)
        );
        assert!("gemini".parse::<ProviderKind>().is_err());
    }

    #[test]
    fn keys_never_print() {
        let key = ApiKey::new("sk-very-secret");
        assert_eq!(format!("{key} {key:?}"), "*** ApiKey(***)");
    }

    #[test]
    fn base_urls_are_normalised() {
        let policy = CallPolicy::for_job(crate::Job::Select);
        let check = |kind, base: &str, endpoint: &str| {
            let p = Provider::new(kind, base, "m", None, &policy);
            assert_eq!(
                p.map(|p| p.endpoint()).ok().as_deref(),
                Some(endpoint),
                "{base}"
            );
        };
        check(
            ProviderKind::OpenAi,
            "http://127.0.0.1:8089",
            "http://127.0.0.1:8089/v1/chat/completions",
        );
        check(
            ProviderKind::OpenAi,
            "http://localhost:11434/v1/",
            "http://localhost:11434/v1/chat/completions",
        );
        check(
            ProviderKind::OpenAi,
            "https://api.example.com/openai/v1",
            "https://api.example.com/openai/v1/chat/completions",
        );
        check(
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "https://api.anthropic.com/v1/messages",
        );
        check(
            ProviderKind::Anthropic,
            "http://127.0.0.1:8089/v1",
            "http://127.0.0.1:8089/v1/messages",
        );
        assert!(Provider::new(ProviderKind::OpenAi, "ftp://x", "m", None, &policy).is_err());
    }

    #[test]
    fn reply_text_shapes() {
        assert_eq!(
            openai_text(&json!({"choices": [{"message": {"content": "hi"}}]})),
            Ok("hi".into())
        );
        assert_eq!(
            openai_text(&json!({"choices": []})),
            Err("`choices` is empty".into())
        );
        assert_eq!(
            openai_text(&json!({"error": 1})),
            Err("no `choices` list".into())
        );
        assert_eq!(
            anthropic_text(
                &json!({"content": [{"type": "thinking"}, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
            ),
            Ok("ab".into())
        );
    }
}

/// `true` when `url`'s host is not loopback (`localhost`, `127.x.x.x`, `::1`, `0.0.0.0`).
pub fn is_hosted_url(url: &str) -> bool {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    !(host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host == "0.0.0.0"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback()))
}

#[cfg(test)]
mod hosted_tests {
    use super::is_hosted_url;

    #[test]
    fn loopback_is_not_hosted() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://[::1]:8000/v1",
            "http://127.1.2.3",
        ] {
            assert!(!is_hosted_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "https://api.anthropic.com",
            "http://10.0.0.5:8080",
            "http://localhost.evil.com",
        ] {
            assert!(is_hosted_url(url), "{url}");
        }
    }
}
