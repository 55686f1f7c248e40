//! The HTTP layer shared by both providers: TLS on rustls/ring, per-job deadlines, bounded
//! retries with exponential backoff and jitter on 429, 5xx and connection errors, `Retry-After`
//! honoured, and typed errors for everything else.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::{LlmError, Result};

/// Characters of a server's error message kept in an error.
pub const MAX_ERROR_EXCERPT: usize = 300;

/// Timeouts and retries of one job's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPolicy {
    /// Time to establish a connection.
    pub connect_timeout: Duration,
    /// Deadline for the whole call, retries and waits included.
    pub timeout: Duration,
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// First backoff delay; doubled after each retry, with jitter in [50 %, 100 %].
    pub base_delay: Duration,
    /// Upper bound of one backoff delay (a longer `Retry-After` is still honoured if the
    /// deadline allows it).
    pub max_delay: Duration,
}

impl CallPolicy {
    /// Defaults per job: summarize 120 s, extract 60 s, select 8 s (the seed's selector
    /// timeout), skill 120 s; connect 10 s (select: 3 s); 3 retries; backoff from 500 ms up to 8 s.
    pub fn for_job(job: crate::Job) -> CallPolicy {
        let (timeout, connect) = match job {
            crate::Job::Summarize => (120, 10),
            crate::Job::Extract => (60, 10),
            crate::Job::Select => (8, 3),
            crate::Job::Skill => (120, 10),
        };
        CallPolicy {
            connect_timeout: Duration::from_secs(connect),
            timeout: Duration::from_secs(timeout),
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
        }
    }

    /// The backoff before retry number `retry` (1-based), with jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
            .min(self.max_delay);
        // Jitter in [50 %, 100 %] from the std hasher's random keys (no RNG dependency).
        let mut h = RandomState::new().build_hasher();
        h.write_u32(retry);
        let fraction = 0.5 + (h.finish() % 1_000) as f64 / 2_000.0;
        exp.mul_f64(fraction)
    }
}

/// Builds the HTTP client: rustls with the ring provider and the platform's root certificates;
/// redirects are not followed (a 3xx becomes [`LlmError::Redirect`] in [`send_json`]).
pub fn build_client(connect_timeout: Duration) -> Result<reqwest::Client> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map_err(tls_error)?
        .with_no_client_auth();
    client_with(tls, connect_timeout)
}

/// [`build_client`] for a plain `http://` endpoint (a local server): no root certificates are
/// loaded (the platform verifier reads the whole CA bundle, tens of milliseconds per process),
/// and since no redirect is followed the client can never complete a TLS handshake, so it never
/// reaches an `https://` URL.
pub fn build_plain_client(connect_timeout: Duration) -> Result<reqwest::Client> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    client_with(tls, connect_timeout)
}

fn tls_error(e: rustls::Error) -> LlmError {
    LlmError::Config {
        message: format!("cannot set up TLS: {e}"),
    }
}

/// The client both builders share: the given TLS configuration, the connect timeout, no
/// redirects, mewmem's user agent.
fn client_with(tls: rustls::ClientConfig, connect_timeout: Duration) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(connect_timeout)
        // A redirect would carry the API key headers to another URL: never follow one.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mewmem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Config {
            message: format!("cannot build the HTTP client: {e}"),
        })
}

/// The longest `Retry-After` taken from a server (one day); a longer one is clamped to it, which
/// is past every job's deadline, so the call gives up at once.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// Parses `Retry-After` (seconds or an HTTP date) or OpenAI's `retry-after-ms`, clamped to
/// [`MAX_RETRY_AFTER`]; a negative or non-numeric value counts as absent.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        && let Some(wait) = clamped_secs(ms / 1000.0)
    {
        return Some(wait);
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return clamped_secs(secs);
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO).min(MAX_RETRY_AFTER))
}

/// `secs` as a duration of at most [`MAX_RETRY_AFTER`]; `None` when negative or NaN.
fn clamped_secs(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    // Overflow (huge or infinite values) is the only failure left: clamp it.
    Some(
        Duration::try_from_secs_f64(secs)
            .unwrap_or(MAX_RETRY_AFTER)
            .min(MAX_RETRY_AFTER),
    )
}

/// The server's error message: `error.message` of an OpenAI or Anthropic error body, else the
/// body's start; `secret` (the API key) is masked if the server echoed it.
pub fn error_message(body: &str, secret: Option<&str>) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
        })
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| body.trim().to_owned());
    // Mask before cutting: a cut through the key would leave its start unmasked.
    let masked = match secret {
        Some(key) if !key.is_empty() => message.replace(key, "***"),
        _ => message,
    };
    let message: String = masked.chars().take(MAX_ERROR_EXCERPT).collect();
    if message.is_empty() {
        "(no message)".to_owned()
    } else {
        message
    }
}

/// One attempt's outcome, for [`with_retries`].
pub(crate) enum Attempt<T> {
    /// It worked.
    Done(T),
    /// It failed and must not be retried.
    Fail(LlmError),
    /// It failed and may be retried, after the wait the other side asked for if any.
    Retry(LlmError, Option<Duration>),
}

/// The one retry loop of every provider (HTTP or a CLI): runs `attempt` (given the 1-based
/// attempt number and the time left before the deadline) until it is done, fails for good,
/// has been retried [`CallPolicy::max_retries`] times, or the next wait would pass
/// [`CallPolicy::timeout`]. Waits [`CallPolicy::backoff`] between attempts, or the hint of the
/// failed attempt (`Retry-After`). `url` names the endpoint (or command) in a timeout error.
pub(crate) async fn with_retries<T, F, Fut>(
    url: &str,
    policy: &CallPolicy,
    mut attempt: F,
) -> Result<T>
where
    F: FnMut(u32, Duration) -> Fut,
    Fut: std::future::Future<Output = Attempt<T>>,
{
    let start = Instant::now();
    let deadline = start + policy.timeout;
    let mut number: u32 = 0;
    loop {
        number += 1;
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(timeout(url, policy, number - 1));
        }
        let (retry_error, wait_hint) = match attempt(number, remaining).await {
            Attempt::Done(value) => return Ok(value),
            Attempt::Fail(err) => return Err(err),
            Attempt::Retry(err, hint) => (err, hint),
        };
        if number > policy.max_retries {
            return Err(retry_error);
        }
        let delay = wait_hint.unwrap_or_else(|| policy.backoff(number));
        let remaining = deadline.saturating_duration_since(Instant::now());
        if delay >= remaining {
            // Waiting would pass the deadline: give up now with what we know.
            return Err(match retry_error {
                LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Connect { .. }
                | LlmError::CommandFailed { .. } => retry_error,
                _ => timeout(url, policy, number),
            });
        }
        tracing::debug!(url, attempt = number, ?delay, error = %retry_error, "retrying model call");
        tokio::time::sleep(delay).await;
    }
}

/// Sends the request built by `make` (called once per attempt) under `policy`, retrying on 429,
/// 5xx and connection errors (`with_retries`); returns the parsed JSON body of the first
/// success. A 3xx is [`LlmError::Redirect`] at once (the client built by [`build_client`]
/// follows no redirect).
///
/// `secret` is masked in error messages.
pub async fn send_json(
    url: &str,
    policy: &CallPolicy,
    secret: Option<&str>,
    make: impl Fn(Duration) -> reqwest::RequestBuilder,
) -> Result<Value> {
    let make = &make;
    with_retries(url, policy, move |attempt, remaining| async move {
        match make(remaining).send().await {
            Err(e) if e.is_timeout() => Attempt::Fail(timeout(url, policy, attempt)),
            Err(e) if e.is_connect() => Attempt::Retry(
                LlmError::Connect {
                    url: url.to_owned(),
                    attempts: attempt,
                    source: e,
                },
                None,
            ),
            Err(e) => Attempt::Fail(LlmError::Transport {
                url: url.to_owned(),
                source: e,
            }),
            Ok(response) => {
                let status = response.status();
                if status.is_redirection() {
                    let location = response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(|v| v.chars().take(MAX_ERROR_EXCERPT).collect());
                    return Attempt::Fail(LlmError::Redirect {
                        url: url.to_owned(),
                        status: status.as_u16(),
                        location,
                    });
                }
                let hint = retry_after(response.headers());
                let body = match response.text().await {
                    Ok(b) => b,
                    Err(e) if e.is_timeout() => {
                        return Attempt::Fail(timeout(url, policy, attempt));
                    }
                    Err(e) => {
                        return Attempt::Fail(LlmError::Transport {
                            url: url.to_owned(),
                            source: e,
                        });
                    }
                };
                if status.is_success() {
                    return match serde_json::from_str(&body) {
                        Ok(value) => Attempt::Done(value),
                        Err(e) => Attempt::Fail(LlmError::MalformedReply {
                            url: url.to_owned(),
                            reason: format!("the body is not JSON ({e})"),
                        }),
                    };
                }
                let message = error_message(&body, secret);
                match status_error(url, status, attempt, hint, message) {
                    Retry::No(err) => Attempt::Fail(err),
                    Retry::Yes(err) => Attempt::Retry(err, hint),
                }
            }
        }
    })
    .await
}

enum Retry {
    Yes(LlmError),
    No(LlmError),
}

fn status_error(
    url: &str,
    status: StatusCode,
    attempts: u32,
    retry_after: Option<Duration>,
    message: String,
) -> Retry {
    let url = url.to_owned();
    match status.as_u16() {
        429 => Retry::Yes(LlmError::RateLimited {
            url,
            attempts,
            retry_after,
            message,
        }),
        s @ 500..=599 => Retry::Yes(LlmError::Server {
            url,
            status: s,
            attempts,
            message,
        }),
        400 => Retry::No(LlmError::BadRequest { url, message }),
        401 => Retry::No(LlmError::Unauthorized { url, message }),
        403 => Retry::No(LlmError::Forbidden { url, message }),
        404 => Retry::No(LlmError::NotFound { url, message }),
        s => Retry::No(LlmError::Http {
            url,
            status: s,
            message,
        }),
    }
}

pub(crate) fn timeout(url: &str, policy: &CallPolicy, attempts: u32) -> LlmError {
    LlmError::Timeout {
        url: url.to_owned(),
        after: policy.timeout,
        attempts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_grows_and_is_bounded() {
        let policy = CallPolicy::for_job(crate::Job::Extract);
        for retry in 1..=10 {
            let d = policy.backoff(retry);
            let exp = policy
                .base_delay
                .saturating_mul(1 << (retry - 1).min(16))
                .min(policy.max_delay);
            assert!(d >= exp / 2 && d <= exp, "retry {retry}: {d:?} vs {exp:?}");
        }
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
    }

    #[test]
    fn huge_retry_after_is_clamped_not_a_panic() {
        let check = |name: &'static str, value: &'static str, expected: Option<Duration>| {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_static(value));
            assert_eq!(retry_after(&h), expected, "{name}: {value}");
        };
        check("retry-after", "99999999999999999999", Some(MAX_RETRY_AFTER));
        check("retry-after", "1e308", Some(MAX_RETRY_AFTER));
        check("retry-after", "inf", Some(MAX_RETRY_AFTER));
        check("retry-after", "NaN", None);
        check("retry-after", "-1", None);
        check("retry-after-ms", "1e300", Some(MAX_RETRY_AFTER));
        check(
            "retry-after",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            Some(MAX_RETRY_AFTER),
        );
    }

    #[test]
    fn error_messages_are_extracted_and_keys_masked() {
        assert_eq!(
            error_message(
                r#"{"error":{"message":"bad key sk-123","type":"x"}}"#,
                Some("sk-123")
            ),
            "bad key ***"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                None
            ),
            "Overloaded"
        );
        assert_eq!(error_message("plain text", None), "plain text");
        // A key across the excerpt's end is masked, not cut in half.
        let key = "sk-abcdefghijklmnop";
        let body = format!("{}{key} trailing", "x".repeat(MAX_ERROR_EXCERPT - 5));
        let shown = error_message(&body, Some(key));
        assert!(!shown.contains("sk-ab"), "{shown}");
        assert_eq!(shown, format!("{}*** t", "x".repeat(MAX_ERROR_EXCERPT - 5)));
        assert_eq!(error_message("", None), "(no message)");
    }
}
