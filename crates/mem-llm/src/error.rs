//! Errors of the model layer.

use std::time::Duration;

/// What can go wrong when a job is sent to a model, or when a model is configured.
///
/// HTTP variants carry the endpoint URL (never an API key) and an excerpt of the server's message
/// (at most [`crate::http::MAX_ERROR_EXCERPT`] characters).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is incomplete or contradictory (unknown provider, missing key, bad URL).
    #[error("model configuration: {message}")]
    Config {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The TOML configuration file could not be parsed. Only the position and the parser's
    /// message are kept — never the offending line, which may hold an API key; quoted values in
    /// the message are masked.
    #[error(
        "cannot parse the model configuration {origin}, line {line}, column {column}: {message}"
    )]
    ConfigFile {
        /// Where the text came from (a path, shown to the user).
        origin: String,
        /// 1-based line of the error (0 when the parser gave no position).
        line: usize,
        /// 1-based column of the error, in characters (0 when the parser gave no position).
        column: usize,
        /// The parser's message, without a source excerpt.
        message: String,
    },
    /// No connection could be made (refused, DNS, TLS), after all retries.
    #[error("cannot connect to {url} after {attempts} attempt(s)")]
    Connect {
        /// The endpoint.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// The transport error.
        source: reqwest::Error,
    },
    /// The job's deadline passed before a reply arrived.
    #[error("no reply from {url} within {after:?} ({attempts} attempt(s))")]
    Timeout {
        /// The endpoint.
        url: String,
        /// The job's total timeout.
        after: Duration,
        /// How many attempts were made.
        attempts: u32,
    },
    /// HTTP 429 on every attempt, or a `Retry-After` longer than the time left.
    #[error("rate limited by {url} (HTTP 429) after {attempts} attempt(s): {message}")]
    RateLimited {
        /// The endpoint.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last `Retry-After` the server asked for, if any.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// HTTP 5xx on every attempt.
    #[error("server error HTTP {status} from {url} after {attempts} attempt(s): {message}")]
    Server {
        /// The endpoint.
        url: String,
        /// The last status code.
        status: u16,
        /// How many attempts were made.
        attempts: u32,
        /// The server's message.
        message: String,
    },
    /// HTTP 400: the request was refused (often an unknown parameter or a too-long prompt).
    #[error("bad request (HTTP 400) to {url}: {message}")]
    BadRequest {
        /// The endpoint.
        url: String,
        /// The server's message.
        message: String,
    },
    /// HTTP 401: the API key is missing or wrong.
    #[error("unauthorized (HTTP 401) at {url}: check the API key ({message})")]
    Unauthorized {
        /// The endpoint.
        url: String,
        /// The server's message.
        message: String,
    },
    /// HTTP 403: the key is valid but not allowed to use this model or endpoint.
    #[error("forbidden (HTTP 403) at {url}: {message}")]
    Forbidden {
        /// The endpoint.
        url: String,
        /// The server's message.
        message: String,
    },
    /// HTTP 404: wrong base URL or unknown model.
    #[error("not found (HTTP 404) at {url}: check the base URL and the model name ({message})")]
    NotFound {
        /// The endpoint.
        url: String,
        /// The server's message.
        message: String,
    },
    /// HTTP 3xx: the server redirected. Redirects are never followed, because the request's API
    /// key headers would go to the redirect target.
    #[error(
        "the server at {url} redirected (HTTP {status}){}; mewmem does not follow redirects (they \
         would carry the API key elsewhere): set base_url to the final address",
        location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    Redirect {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The `Location` header, if any (at most [`crate::http::MAX_ERROR_EXCERPT`] characters).
        location: Option<String>,
    },
    /// Any other non-success status.
    #[error("HTTP {status} from {url}: {message}")]
    Http {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// Another transport failure (e.g. the body could not be read).
    #[error("request to {url} failed")]
    Transport {
        /// The endpoint.
        url: String,
        /// The transport error.
        source: reqwest::Error,
    },
    /// The agent CLI provider's command could not be started (not found, not executable).
    #[error("cannot run the model command {command}: {message}")]
    Command {
        /// The command (a path or the name looked up on `PATH`).
        command: String,
        /// Why it could not run, and how to fix it.
        message: String,
    },
    /// The agent CLI ran but failed (a non-zero exit, or a reply that says it is an error),
    /// after all retries.
    #[error("the model command {command} failed after {attempts} attempt(s): {message}")]
    CommandFailed {
        /// The command.
        command: String,
        /// How many attempts were made.
        attempts: u32,
        /// The exit status and an excerpt of what it printed (at most
        /// [`crate::http::MAX_ERROR_EXCERPT`] characters).
        message: String,
    },
    /// The reply was well-formed but carried no text.
    #[error("empty reply from {url}")]
    EmptyReply {
        /// The endpoint.
        url: String,
    },
    /// The reply body was not the provider's JSON shape.
    #[error("malformed reply from {url}: {reason}")]
    MalformedReply {
        /// The endpoint.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The model's text did not hold the structure the job asks for (JSON with the wrong types,
    /// no JSON at all).
    #[error("unusable {job} reply: {reason}")]
    Unusable {
        /// The job (`summarize`, `extract`, `select`).
        job: &'static str,
        /// What was wrong.
        reason: String,
    },
}

impl LlmError {
    /// `true` when the model answered but its answer could not be used (empty, malformed,
    /// unusable): the cases where the offline engine answers instead.
    pub fn is_unusable_reply(&self) -> bool {
        matches!(
            self,
            LlmError::EmptyReply { .. }
                | LlmError::MalformedReply { .. }
                | LlmError::Unusable { .. }
        )
    }
}

/// Result alias of this crate.
pub type Result<T, E = LlmError> = std::result::Result<T, E>;
