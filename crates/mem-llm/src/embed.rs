//! Optional text embeddings (issue 29, Build 2): an OpenAI-compatible `POST <base_url>/embeddings`
//! client (llama.cpp's server, Ollama, vLLM, OpenAI), its configuration, and the pieces of hybrid
//! ranking (cosine similarity, reciprocal-rank fusion, the vector's byte form for caches).
//!
//! Off by default: without a base URL nothing is embedded and every search stays lexical.
//!
//! ```toml
//! [embeddings]                          # user file ~/.mewcode/config.toml only for the URL/key
//! base_url = "http://127.0.0.1:8091/v1" # the API root; requests go to <base_url>/embeddings
//! model = "all-MiniLM-L6-v2"            # sent as `model`; also the cache key of the vectors
//! api_key_env = "MY_KEY_VAR"            # or api_key = "..."; none needed on loopback
//! timeout_secs = 30                     # whole call, retries included
//! connect_timeout_secs = 3
//! max_retries = 3
//! batch = 64                            # texts per request
//! min_similarity = 0.45                 # cosine to be recalled on meaning alone
//! english_only = true                   # CJK messages stay lexical (English-only model)
//! ```
//!
//! Environment: `MEM_EMBED_BASE_URL` and `MEM_EMBED_MODEL` override the files. A project's file
//! may set `model` and the timeouts, never `base_url`, `api_key` or `api_key_env`
//! ([`EMBED_PROJECT_FORBIDDEN_KEYS`]), as for `[llm]`. Key: `api_key`, else the variable named
//! by `api_key_env` (unset: an error), else `OPENAI_API_KEY` for a hosted URL (not loopback).
//!
//! Calls use the model layer's HTTP client and retry loop ([`crate::http::send_json`]): 429, 5xx
//! and connection errors retried with backoff and `Retry-After`, no redirect followed, the key
//! masked in errors. Texts pass the secret filter (`mem_core::secrets::redact`) before they are sent.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::ConfigFile;
use crate::error::{LlmError, Result};
use crate::http::{CallPolicy, build_client, build_plain_client, send_json};
use crate::provider::{ApiKey, is_hosted_url};

/// Keys of `[embeddings]` a project's `config.toml` may not set.
pub const EMBED_PROJECT_FORBIDDEN_KEYS: [&str; 3] = ["base_url", "api_key", "api_key_env"];

/// Texts per request by default.
pub const DEFAULT_BATCH: usize = 64;

/// The largest `batch` accepted.
pub const MAX_BATCH: usize = 2048;

/// The most characters of one text that are embedded (the start is kept): small embedding
/// models see at most 512 tokens, and llama.cpp's server refuses a longer input.
pub const MAX_EMBED_CHARS: usize = 1000;

/// The default [`EmbeddingSettings::min_similarity`]: the cosine a candidate needs to be
/// recalled on meaning alone (tuned on the `dev/` split of the recall set with
/// all-MiniLM-L6-v2; see `docs/BENCHMARKS.md`).
pub const DEFAULT_MIN_SIMILARITY: f32 = 0.45;

/// Reciprocal-rank fusion's constant `k` (Cormack et al. 2009): a document at 1-based rank `r`
/// in one list adds `1 / (k + r)`.
pub const RRF_K: f64 = 60.0;

/// The `[embeddings]` table of a `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsSection {
    /// API root (`.../v1`); requests go to `<base_url>/embeddings`.
    pub base_url: Option<String>,
    /// Model name, sent in each request and keying the cached vectors.
    pub model: Option<String>,
    /// The API key itself (prefer `api_key_env`).
    pub api_key: Option<ApiKey>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Deadline of one call, retries included, in seconds (default 30).
    pub timeout_secs: Option<f64>,
    /// Connect timeout, in seconds (default 3).
    pub connect_timeout_secs: Option<f64>,
    /// Retries after the first attempt (default 3).
    pub max_retries: Option<u32>,
    /// Texts per request (default [`DEFAULT_BATCH`], at most [`MAX_BATCH`]).
    pub batch: Option<usize>,
    /// The cosine (in -1..=1) a memory needs to be recalled on meaning alone (default
    /// [`DEFAULT_MIN_SIMILARITY`]).
    pub min_similarity: Option<f32>,
    /// The model knows English only (default `true`, as all-MiniLM-L6-v2 of
    /// `.ci/local-embed.sh`): a message holding CJK text is ranked lexically only. Set `false`
    /// for a multilingual model.
    pub english_only: Option<bool>,
}

/// Resolved embedding settings: present only when embeddings are configured.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingSettings {
    /// API root, without a trailing `/`.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The key, if any (never printed).
    pub api_key: Option<ApiKey>,
    /// Timeouts and retries.
    pub policy: CallPolicy,
    /// Texts per request.
    pub batch: usize,
    /// The cosine a memory needs to be recalled on meaning alone (see
    /// [`EmbeddingsSection::min_similarity`]).
    pub min_similarity: f32,
    /// See [`EmbeddingsSection::english_only`].
    pub english_only: bool,
}

impl EmbeddingSettings {
    /// Resolves `[embeddings]` of the project file over the user file, under the environment
    /// (`MEM_EMBED_BASE_URL`, `MEM_EMBED_MODEL`, key variables read through `env`).
    /// `Ok(None)`: not configured (no base URL anywhere), the default.
    ///
    /// Errors: [`LlmError::Config`] when the project file sets a key of
    /// [`EMBED_PROJECT_FORBIDDEN_KEYS`], a base URL has no model, `api_key_env` names an unset
    /// variable, or a number is out of range.
    pub fn resolve(
        user: Option<&ConfigFile>,
        project: Option<&ConfigFile>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<EmbeddingSettings>> {
        let section = |f: Option<&ConfigFile>| f.and_then(|f| f.embeddings.clone());
        let (user_s, project_s) = (section(user), section(project));
        if let (Some(p), Some(file)) = (&project_s, project) {
            let set = [
                ("base_url", p.base_url.is_some()),
                ("api_key", p.api_key.is_some()),
                ("api_key_env", p.api_key_env.is_some()),
            ];
            if let Some((key, _)) = set.iter().find(|(_, s)| *s) {
                return Err(LlmError::Config {
                    message: format!(
                        "`{key}` in [embeddings] of the project file {} is refused: a project's \
                         config may not say where texts and your API key go; set it in your user \
                         config ~/.mewcode/config.toml or the environment",
                        file.origin
                    ),
                });
            }
        }
        let layers: Vec<EmbeddingsSection> = [project_s, user_s].into_iter().flatten().collect();
        let pick = |f: &dyn Fn(&EmbeddingsSection) -> Option<String>| {
            layers
                .iter()
                .find_map(|l| f(l).map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()))
        };
        let env_nonempty = |k: &str| {
            env(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let Some(base_url) =
            env_nonempty("MEM_EMBED_BASE_URL").or_else(|| pick(&|l| l.base_url.clone()))
        else {
            return Ok(None);
        };
        let model = env_nonempty("MEM_EMBED_MODEL")
            .or_else(|| pick(&|l| l.model.clone()))
            .ok_or_else(|| LlmError::Config {
                message: format!(
                    "embeddings at {base_url} have no model: set `model` in [embeddings] or \
                     MEM_EMBED_MODEL"
                ),
            })?;
        let api_key = match layers.iter().find_map(|l| l.api_key.clone()) {
            Some(key) => Some(key),
            None => match pick(&|l| l.api_key_env.clone()) {
                Some(var) => Some(ApiKey::new(env_nonempty(&var).ok_or_else(|| {
                    LlmError::Config {
                        message: format!("[embeddings] api_key_env names ${var}, which is not set"),
                    }
                })?)),
                None if is_hosted_url(&base_url) => env_nonempty("OPENAI_API_KEY").map(ApiKey::new),
                None => None,
            },
        };
        let secs = |get: &dyn Fn(&EmbeddingsSection) -> Option<f64>, name: &str, default: u64| {
            match layers.iter().find_map(get) {
                None => Ok(Duration::from_secs(default)),
                Some(s) if s.is_finite() && s > 0.0 && s <= crate::config::MAX_TIMEOUT_SECS => {
                    Ok(Duration::from_secs_f64(s))
                }
                Some(s) => Err(LlmError::Config {
                    message: format!(
                        "[embeddings] {name} = {s}: expected seconds in (0, {}]",
                        crate::config::MAX_TIMEOUT_SECS
                    ),
                }),
            }
        };
        let max_retries = layers.iter().find_map(|l| l.max_retries).unwrap_or(3);
        if max_retries > crate::config::MAX_RETRIES {
            return Err(LlmError::Config {
                message: format!(
                    "[embeddings] max_retries = {max_retries}: at most {}",
                    crate::config::MAX_RETRIES
                ),
            });
        }
        let batch = layers.iter().find_map(|l| l.batch).unwrap_or(DEFAULT_BATCH);
        if batch == 0 || batch > MAX_BATCH {
            return Err(LlmError::Config {
                message: format!("[embeddings] batch = {batch}: expected 1 to {MAX_BATCH}"),
            });
        }
        let min_similarity = layers
            .iter()
            .find_map(|l| l.min_similarity)
            .unwrap_or(DEFAULT_MIN_SIMILARITY);
        if !(-1.0..=1.0).contains(&min_similarity) {
            return Err(LlmError::Config {
                message: format!(
                    "[embeddings] min_similarity = {min_similarity}: expected -1 to 1"
                ),
            });
        }
        let policy = CallPolicy {
            connect_timeout: secs(&|l| l.connect_timeout_secs, "connect_timeout_secs", 3)?,
            timeout: secs(&|l| l.timeout_secs, "timeout_secs", 30)?,
            max_retries,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(4),
        };
        Ok(Some(EmbeddingSettings {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model,
            api_key,
            policy,
            batch,
            min_similarity,
            english_only: layers.iter().find_map(|l| l.english_only).unwrap_or(true),
        }))
    }
}

/// A client of one embeddings endpoint.
#[derive(Debug, Clone)]
pub struct Embedder {
    url: String,
    settings: EmbeddingSettings,
    client: reqwest::Client,
}

impl Embedder {
    /// A client for `settings`.
    ///
    /// Errors: [`LlmError::Config`] when the URL is not `http(s)://` or the HTTP client cannot
    /// be built.
    pub fn new(settings: &EmbeddingSettings) -> Result<Embedder> {
        let base = settings.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(LlmError::Config {
                message: format!("embeddings base_url `{base}` is not an http(s) URL"),
            });
        }
        Ok(Embedder {
            url: format!("{base}/embeddings"),
            settings: settings.clone(),
            client: if base.starts_with("http://") {
                build_plain_client(settings.policy.connect_timeout)?
            } else {
                build_client(settings.policy.connect_timeout)?
            },
        })
    }

    /// The model name (the cache key of the vectors).
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The endpoint URL (`<base_url>/embeddings`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One vector per text like [`Embedder::embed`], taking what `cache` holds for
    /// (text hash, model) and embedding only the rest, stored batch by batch as each reply
    /// arrives (a call dropped at a deadline keeps the batches it finished). A cache that fails
    /// is skipped (logged): the vectors are computed.
    ///
    /// Errors: those of [`Embedder::embed`].
    pub async fn embed_cached(
        &self,
        cache: Option<&dyn VectorCache>,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>> {
        self.embed_partly_cached(cache, texts, 0).await
    }

    /// [`Embedder::embed_cached`], except that the first `uncached` texts (the query of a
    /// search or recall) are neither looked up in nor stored to `cache`: only memories' vectors
    /// are persisted, never a message's.
    ///
    /// Errors: those of [`Embedder::embed`].
    pub async fn embed_partly_cached(
        &self,
        cache: Option<&dyn VectorCache>,
        texts: &[String],
        uncached: usize,
    ) -> Result<Vec<Vec<f32>>> {
        // Keyed by the text as given (hashing is cheaper than the secret filter, which runs
        // only on the texts actually sent).
        let hashes: Vec<String> = texts
            .iter()
            .map(|t| mem_core::sha256_hex(t.as_bytes()))
            .collect();
        let uncached = uncached.min(hashes.len());
        let cacheable = &hashes[uncached..];
        let mut known = match cache.map(|c| c.vectors(&self.settings.model, cacheable)) {
            Some(Ok(map)) => map,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "cannot read cached vectors; embedding again");
                HashMap::new()
            }
            None => HashMap::new(),
        };
        let mut missing: Vec<usize> = Vec::new();
        for (i, h) in hashes.iter().enumerate() {
            if !known.contains_key(h) && !missing.iter().any(|&j| hashes[j] == *h) {
                missing.push(i);
            }
        }
        // One request per batch, each stored as soon as it arrives: a call cut short by its
        // caller's deadline keeps what it got, so a cold cache warms over successive calls.
        for chunk in missing.chunks(self.settings.batch) {
            let todo: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
            let fresh = self.embed(&todo).await?;
            let rows: Vec<(String, Vec<f32>)> = chunk
                .iter()
                .map(|&i| hashes[i].clone())
                .zip(fresh)
                .collect();
            let keep: Vec<(String, Vec<f32>)> = rows
                .iter()
                .filter(|(h, _)| cacheable.contains(h))
                .cloned()
                .collect();
            if let Some(c) = cache
                && !keep.is_empty()
                && let Err(e) = c.store_vectors(&self.settings.model, &keep)
            {
                tracing::warn!(error = %e, "cannot cache vectors");
            }
            known.extend(rows);
        }
        hashes
            .iter()
            .map(|h| {
                known
                    .get(h)
                    .cloned()
                    .ok_or_else(|| self.malformed("a vector is missing".to_owned()))
            })
            .collect()
    }

    /// One vector per text, in order, each L2-normalised (unit length; a zero vector stays zero).
    /// Texts are redacted first and sent [`EmbeddingSettings::batch`] at a time; an empty list
    /// makes no request.
    ///
    /// Errors: the HTTP errors of [`send_json`]; [`LlmError::MalformedReply`] when the reply has
    /// not one finite vector per text, or the vectors' dimensions differ.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.settings.batch) {
            let input: Vec<String> = chunk.iter().map(|t| prepare(t)).collect();
            let body = json!({"model": self.settings.model, "input": input});
            let key = self.settings.api_key.clone();
            let reply = send_json(
                &self.url,
                &self.settings.policy,
                key.as_ref().map(ApiKey::expose),
                |remaining| {
                    let mut b = self.client.post(&self.url).timeout(remaining).json(&body);
                    if let Some(k) = &key {
                        b = b.bearer_auth(k.expose());
                    }
                    b
                },
            )
            .await?;
            out.extend(self.parse(&reply, chunk.len())?);
        }
        if let Some(first) = out.first() {
            let dim = first.len();
            if out.iter().any(|v| v.len() != dim) {
                return Err(self.malformed("the vectors' dimensions differ".to_owned()));
            }
        }
        Ok(out)
    }

    fn malformed(&self, reason: String) -> LlmError {
        LlmError::MalformedReply {
            url: self.url.clone(),
            reason,
        }
    }

    fn parse(&self, reply: &Value, expected: usize) -> Result<Vec<Vec<f32>>> {
        let data = reply
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| self.malformed("no `data` array".to_owned()))?;
        if data.len() != expected {
            return Err(self.malformed(format!("{} vectors for {expected} texts", data.len())));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
        for (pos, item) in data.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .map_or(pos, |i| i as usize);
            let values = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| self.malformed(format!("item {pos} has no `embedding` array")))?;
            let mut v = Vec::with_capacity(values.len());
            for x in values {
                match x.as_f64() {
                    Some(f) if f.is_finite() => v.push(f as f32),
                    _ => {
                        return Err(self.malformed(format!("item {pos} holds a non-number")));
                    }
                }
            }
            if v.is_empty() {
                return Err(self.malformed(format!("item {pos} is an empty vector")));
            }
            match slots.get_mut(index) {
                Some(slot @ None) => *slot = Some(normalized(v)),
                _ => return Err(self.malformed(format!("bad or repeated index {index}"))),
            }
        }
        slots
            .into_iter()
            .map(|s| s.ok_or_else(|| self.malformed("an index is missing".to_owned())))
            .collect()
    }
}

/// The text as it is sent: redacted (`mem_core::secrets::redact`), cut to [`MAX_EMBED_CHARS`]
/// characters, one space for an empty text (some servers refuse an empty input). Idempotent.
pub fn prepare(text: &str) -> String {
    let clean: String = mem_core::secrets::redact(text)
        .text
        .chars()
        .take(MAX_EMBED_CHARS)
        .collect();
    if clean.trim().is_empty() {
        " ".to_owned()
    } else {
        clean
    }
}

/// A store of vectors keyed by (SHA-256 hex of the text as given, model name): the SQLite
/// index's `vectors` table (mem-tiers). A model change misses every key, so texts are embedded
/// again lazily, when next needed.
pub trait VectorCache: Send + Sync {
    /// The vectors held for these hashes under `model` (absent hashes are left out).
    ///
    /// Errors: the store's, as text.
    fn vectors(
        &self,
        model: &str,
        hashes: &[String],
    ) -> std::result::Result<HashMap<String, Vec<f32>>, String>;
    /// Stores (hash, vector) rows under `model`, replacing rows with the same key.
    ///
    /// Errors: the store's, as text.
    fn store_vectors(
        &self,
        model: &str,
        rows: &[(String, Vec<f32>)],
    ) -> std::result::Result<(), String>;
    /// Deletes the rows of these hashes under every model (the vectors of a forgotten or
    /// removed memory's texts); how many were deleted.
    ///
    /// Errors: the store's, as text.
    fn forget_vectors(&self, hashes: &[String]) -> std::result::Result<u64, String>;
}

/// `v` scaled to unit length (a zero vector is returned as is).
pub fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Cosine similarity in [-1, 1]; 0 when the lengths differ or a vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Reciprocal-rank fusion of ranked lists of ids (best first): each id scores
/// `Σ 1 / (RRF_K + rank)` over the lists it is in (1-based rank); returned best first, ties in
/// the order the ids first appear (list by list).
pub fn rrf<S: AsRef<str>>(lists: &[&[S]]) -> Vec<(String, f64)> {
    let mut scores: Vec<(String, f64)> = Vec::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f64 + 1.0);
            match scores.iter_mut().find(|(i, _)| i == id.as_ref()) {
                Some((_, s)) => *s += add,
                None => scores.push((id.as_ref().to_owned(), add)),
            }
        }
    }
    // A stable sort keeps first-appearance order among equal scores.
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores
}

/// A vector as bytes for a cache column: little-endian `f32`s, 4 bytes each.
pub fn vector_to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The inverse of [`vector_to_bytes`]; `None` when the length is not a multiple of 4.
pub fn vector_from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, origin: &str) -> ConfigFile {
        ConfigFile::parse(text, origin).unwrap_or_else(|e| panic!("{e}"))
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn off_by_default() {
        assert_eq!(
            EmbeddingSettings::resolve(None, None, &no_env).unwrap(),
            None
        );
        let llm_only = file("[llm]\nprovider = \"openai\"\n", "u");
        assert_eq!(
            EmbeddingSettings::resolve(Some(&llm_only), None, &no_env).unwrap(),
            None
        );
    }

    #[test]
    fn user_file_and_environment() {
        let user = file(
            "[embeddings]\nbase_url = \"http://127.0.0.1:8091/v1/\"\nmodel = \"mini\"\nbatch = 8\n",
            "u",
        );
        let s = EmbeddingSettings::resolve(Some(&user), None, &no_env)
            .unwrap()
            .unwrap();
        assert_eq!(s.base_url, "http://127.0.0.1:8091/v1");
        assert_eq!(
            (s.model.as_str(), s.batch, s.api_key.is_none()),
            ("mini", 8, true)
        );
        let env = |k: &str| (k == "MEM_EMBED_MODEL").then(|| "other".to_owned());
        let s = EmbeddingSettings::resolve(Some(&user), None, &env)
            .unwrap()
            .unwrap();
        assert_eq!(s.model, "other");
        // A project may choose the model, not the URL.
        let project = file("[embeddings]\nmodel = \"proj\"\n", "p");
        let s = EmbeddingSettings::resolve(Some(&user), Some(&project), &no_env)
            .unwrap()
            .unwrap();
        assert_eq!(s.model, "proj");
    }

    #[test]
    fn project_may_not_set_where_texts_go() {
        for key in [
            "base_url = \"http://evil\"",
            "api_key = \"k\"",
            "api_key_env = \"K\"",
        ] {
            let project = file(
                &format!("[embeddings]\n{key}\n"),
                "/repo/.mewcode/config.toml",
            );
            let err = EmbeddingSettings::resolve(None, Some(&project), &no_env).unwrap_err();
            assert!(err.to_string().contains("refused"), "{err}");
            assert!(err.to_string().contains("/repo/.mewcode"), "{err}");
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        let no_model = file("[embeddings]\nbase_url = \"http://127.0.0.1:1/v1\"\n", "u");
        assert!(EmbeddingSettings::resolve(Some(&no_model), None, &no_env).is_err());
        let unset = file(
            "[embeddings]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"m\"\napi_key_env = \"NOPE\"\n",
            "u",
        );
        let err = EmbeddingSettings::resolve(Some(&unset), None, &no_env).unwrap_err();
        assert!(err.to_string().contains("NOPE"), "{err}");
        let zero = file(
            "[embeddings]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nbatch = 0\n",
            "u",
        );
        assert!(EmbeddingSettings::resolve(Some(&zero), None, &no_env).is_err());
        assert!(ConfigFile::parse("[embeddings]\nbogus = 1\n", "u").is_err());
    }

    #[test]
    fn hosted_url_takes_the_openai_key_loopback_does_not() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_owned());
        let hosted = file(
            "[embeddings]\nbase_url = \"https://api.example.com/v1\"\nmodel = \"m\"\n",
            "u",
        );
        let s = EmbeddingSettings::resolve(Some(&hosted), None, &env)
            .unwrap()
            .unwrap();
        assert_eq!(s.api_key.as_ref().map(ApiKey::expose), Some("sk-x"));
        let local = file(
            "[embeddings]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n",
            "u",
        );
        let s = EmbeddingSettings::resolve(Some(&local), None, &env)
            .unwrap()
            .unwrap();
        assert!(s.api_key.is_none());
    }

    #[test]
    fn cosine_and_fusion() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
        let lexical = ["a", "b", "c"];
        let semantic = ["c", "d", "a"];
        let fused = rrf(&[&lexical[..], &semantic[..]]);
        let ids: Vec<&str> = fused.iter().map(|(i, _)| i.as_str()).collect();
        // a: 1/61 + 1/63; c: 1/63 + 1/61 (tie, a first seen first); b: 1/62; d: 1/62.
        assert_eq!(ids, ["a", "c", "b", "d"]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
    }

    #[test]
    fn vector_bytes_round_trip() {
        let v = vec![0.5f32, -1.25, 3.0e-8];
        let b = vector_to_bytes(&v);
        assert_eq!(b.len(), 12);
        assert_eq!(vector_from_bytes(&b), Some(v));
        assert_eq!(vector_from_bytes(&[0, 1, 2]), None);
    }
}
