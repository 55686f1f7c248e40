//! The MCP server (`mem mcp`, feature `mcp`): the official Rust SDK, `rmcp`, on stdio, exposing
//! a project's [`Memory`] to any MCP client: `memory_search`, `memory_get`, `memory_add`, `memory_forget`,
//! `recall`, `context` and `session_search` (SPEC "mewmem": agent integration without a daemon).
//!
//! Every tool runs the same facade operations as the CLI (`mem memory search|show|add|forget`,
//! `mem note add`, `mem recall`, `mem context` with Tier 0: [`crate::ops`]), so a memory added
//! here is found by `mem memory search` and the other way round. The configuration is read
//! through the memory's [`crate::ConfigSource`] at each call. Ids round-trip exactly (`L<rowid>`,
//! `M<8 hex>`, `N:<scope>/<file>`). A bad argument or a failure is a tool result with
//! `isError: true` and a message naming the argument; an unknown tool is a JSON-RPC
//! invalid-params error; nothing panics the server (work runs on blocking tasks whose panics
//! become tool errors). stdout carries only the protocol: logs go to stderr (`MEM_LOG`).
//! A client that disconnects mid-call ends the server once the call's work is done; writes are
//! atomic, so nothing is left half-written.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use mem_llm::Job;
use mem_recall::NewNote;
use mem_tiers::{LearningScope, MemoryId, SourceKind};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::Memory;
use crate::context::{CLAUDE_HOOK_MAX_CHARS, MAX_CONTEXT_CHARS, MIN_BUDGET_CHARS, start_context};
use crate::ops::tiers::{NewLearning, SearchRequest};
use crate::ops::{age, chain_text, hit_json, rfc3339};

pub mod stdio;

/// The most results `memory_search` returns.
pub const MAX_SEARCH_LIMIT: usize = 100;
/// The longest `memory_search` query, in bytes.
pub const MAX_QUERY_BYTES: usize = 4_096;
/// The most ids one `memory_get` takes.
pub const MAX_GET_IDS: usize = 50;
/// The longest `memory_forget` reason, in characters.
pub const MAX_REASON_CHARS: usize = 1_000;
/// The part of a `recall` message used for recall, in bytes (a longer message is cut at a
/// character boundary and the result says so).
pub const MAX_RECALL_MESSAGE_BYTES: usize = 16_384;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// stdin closed before the client's `initialize` request.
    #[error(
        "no MCP client: stdin closed before the `initialize` request ({0}). An MCP client \
         starts `mem mcp` and speaks JSON-RPC on its stdin and stdout; see docs/INTEGRATION.md"
    )]
    NoClient(String),
    /// The initialisation failed otherwise.
    #[error("MCP initialisation failed: {0}")]
    Init(String),
    /// The service task panicked or was cancelled.
    #[error("the MCP service task failed")]
    Task(#[source] tokio::task::JoinError),
}

/// Serves `memory`'s tools on stdin / stdout until the client closes stdin (or disconnects).
///
/// Errors: [`ServeError`].
pub async fn serve_stdio(memory: Memory) -> Result<(), ServeError> {
    let server = MemServer {
        memory: Arc::new(memory),
    };
    tracing::info!(project = %server.memory.project().display(), "mem mcp: serving on stdio");
    let service = server.serve(stdio::stdio()).await.map_err(|e| {
        let e = e.to_string();
        if e.contains("connection closed") {
            ServeError::NoClient(e)
        } else {
            ServeError::Init(e)
        }
    })?;
    let reason = service.waiting().await.map_err(ServeError::Task)?;
    tracing::info!("mem mcp: stopped ({reason:?})");
    Ok(())
}

/// The MCP server: the memory, shared by every call.
#[derive(Clone)]
struct MemServer {
    memory: Arc<Memory>,
}

/// Which memories `memory_search` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum SourceArg {
    /// Learnings of the tier store (`L<n>`).
    Learning,
    /// `memories.md` entries (`M<hash>`).
    Entry,
    /// Memory notes (`N:<scope>/<file>`).
    Note,
}

impl From<SourceArg> for SourceKind {
    fn from(s: SourceArg) -> Self {
        match s {
            SourceArg::Learning => SourceKind::Learning,
            SourceArg::Entry => SourceKind::Entry,
            SourceArg::Note => SourceKind::Note,
        }
    }
}

/// Where a memory lives: this project only, or every project of the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ScopeArg {
    /// This project only.
    #[default]
    Project,
    /// Every project of this user.
    User,
}

/// Arguments of `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// The words to find, as plain text (no query syntax).
    query: String,
    /// The most results (1 to 100; default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_SEARCH_LIMIT))]
    limit: Option<usize>,
    /// Only these kinds of memory (default: all): `learning`, `entry` (a memories.md bullet),
    /// `note`.
    #[serde(default)]
    sources: Option<Vec<SourceArg>>,
    /// Only memories of this scope: `project` (this project's) or `user` (user-level).
    #[serde(default)]
    scope: Option<ScopeArg>,
}

/// Arguments of `session_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SessionSearchArgs {
    /// The words to find in past conversations of this project, as plain text.
    query: String,
    /// Only this session (an id or a unique prefix of one, as a hit gives it).
    #[serde(default)]
    session: Option<String>,
    /// Only messages made at or after this time (`YYYY-MM-DD` or RFC 3339).
    #[serde(default)]
    since: Option<String>,
    /// The most hits (1 to 100; default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_SEARCH_LIMIT))]
    limit: Option<usize>,
}

/// Arguments of `memory_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetArgs {
    /// Memory ids exactly as `memory_search` returned them (`L42`, `M3f9a0c1e`,
    /// `N:project/testing.md`); at most 50.
    ids: Vec<String>,
}

/// What `memory_add` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum AddKind {
    /// A learning in the tier store: a lesson with a title and a category.
    #[default]
    Learning,
    /// A memory note file (`.mewcode/memory/*.md`) that recall can select for a message.
    Note,
}

/// Arguments of `memory_add`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// `learning` (default) or `note`.
    #[serde(default)]
    kind: AddKind,
    /// A short title (a note's name; it also makes the note's file name).
    title: String,
    /// The lesson or the note's body (at most 1 MiB).
    content: String,
    /// `project` (default: this project only) or `user` (every project).
    #[serde(default)]
    scope: ScopeArg,
    /// Learning: its category (`error`, `best-practice`, ...; default `general`).
    #[serde(default)]
    category: Option<String>,
    /// Learning: tags.
    #[serde(default)]
    tags: Option<Vec<String>>,
    /// Note: one line saying when the note is useful (what recall selects on; default: the
    /// first line of the content).
    #[serde(default)]
    description: Option<String>,
    /// Note: `user`, `feedback`, `project` or `reference` (default: `project` for the project
    /// scope, `user` for the user scope).
    #[serde(default)]
    note_type: Option<String>,
}

/// Arguments of `memory_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ForgetArgs {
    /// The memory id exactly as `memory_search` returned it.
    id: String,
    /// Why it is forgotten (recorded in `.mewcode/logs/mcp.log`).
    reason: String,
}

/// Arguments of `recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// The user's message.
    message: String,
    /// A session id: notes already surfaced in this session are left out, and the ones chosen
    /// now are recorded.
    #[serde(default)]
    session_id: Option<String>,
}

/// Arguments of `context`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ContextArgs {
    /// At most this many characters (1,000 to 100,000; default 10,000).
    #[serde(default)]
    #[schemars(range(min = MIN_BUDGET_CHARS, max = MAX_CONTEXT_CHARS))]
    budget_chars: Option<usize>,
}

/// A tool's failure: the message the client sees (`isError: true`).
struct ToolError(String);

impl From<crate::Error> for ToolError {
    fn from(e: crate::Error) -> Self {
        ToolError(chain_text(&e))
    }
}

type ToolResult = std::result::Result<CallToolResult, ToolError>;

fn bad(message: impl Into<String>) -> ToolError {
    ToolError(message.into())
}

/// The tool list: names, descriptions, input schemas, annotations (what `tools/list`
/// answers).
///
/// Errors: a schema that cannot be generated (internal).
pub fn tools() -> std::result::Result<Vec<Tool>, ErrorData> {
    fn tool<T: JsonSchema + 'static>(
        name: &'static str,
        description: &'static str,
        annotations: ToolAnnotations,
    ) -> std::result::Result<Tool, ErrorData> {
        let schema = rmcp::handler::server::tool::schema_for_input::<T>()
            .map_err(|e| ErrorData::internal_error(format!("{name}: schema: {e}"), None))?;
        Ok(Tool::new(name, description, schema).annotate(annotations))
    }
    let read = |title: &str| {
        ToolAnnotations::with_title(title)
            .read_only(true)
            .destructive(false)
            .open_world(false)
    };
    Ok(vec![
        tool::<SearchArgs>(
            "memory_search",
            "Search every memory of this project and user (learnings, memories.md entries, \
             memory notes) as plain text, best match first. Returns ids, titles, snippets and \
             ages; get the full text with memory_get.",
            read("Search memories"),
        )?,
        tool::<GetArgs>(
            "memory_get",
            "The full text of memories by id (ids exactly as memory_search returned them).",
            read("Get memories"),
        )?,
        tool::<AddArgs>(
            "memory_add",
            "Remember something: a learning (default; a lesson with a title and a category) or \
             a note (a file recall can bring back for a matching message), for this project or \
             for every project of the user. Secrets are withheld and the count reported.",
            ToolAnnotations::with_title("Add a memory")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )?,
        tool::<ForgetArgs>(
            "memory_forget",
            "Forget one memory by id: it is removed from where it lives (the learning's row, the \
             memories.md bullet, the note file). Give the reason; it is logged.",
            ToolAnnotations::with_title("Forget a memory")
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(false),
        )?,
        tool::<RecallArgs>(
            "recall",
            "The memory notes relevant to a user message, as the <system-reminder> an agent \
             adds before that message (at most 5 notes; stale ones carry a warning).",
            read("Recall for a message"),
        )?,
        tool::<ContextArgs>(
            "context",
            "The start-of-session context: instruction files, auto memory (memories.md) and \
             Tier 0 (recent projects, core preferences, recent learnings) in one \
             <system-reminder> block, within a character budget.",
            read("Session context"),
        )?,
        tool::<SessionSearchArgs>(
            "session_search",
            "Search this project's past conversations (its sessions, imported Claude Code and \
             Codex transcripts included): what the user said, assistant text, tool names, \
             commands, file paths and short tool output. Returns session id, record number, \
             time, role and a snippet for each message, best match first.",
            read("Search past sessions"),
        )?,
    ])
}

/// Parses a tool's arguments; an error names the tool and what is wrong.
fn parse<T: DeserializeOwned>(
    tool: &str,
    args: Option<JsonObject>,
) -> std::result::Result<T, ToolError> {
    let value = Value::Object(args.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| bad(format!("{tool}: bad arguments: {e}")))
}

/// A successful result: `text` for the model, `structured` for programs.
fn ok(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// Runs blocking library work off the async threads; a panic becomes a tool error.
async fn blocking<F>(tool: &'static str, work: F) -> ToolResult
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("{tool}: the call failed inside: {e}");
            Err(bad(format!("{tool}: internal error: {e}")))
        }
    }
}

fn withheld_text(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => format!(
            "\nwithheld 1 secret (stored as {})",
            mem_core::secrets::REDACTED
        ),
        n => format!(
            "\nwithheld {n} secrets (stored as {})",
            mem_core::secrets::REDACTED
        ),
    }
}

fn parse_id(tool: &str, id: &str) -> std::result::Result<MemoryId, ToolError> {
    id.parse::<MemoryId>()
        .map_err(|e| bad(format!("{tool}: {e}")))
}

/// A search tool's `query` (trimmed, not empty, at most [`MAX_QUERY_BYTES`]) and `limit`
/// (1 to [`MAX_SEARCH_LIMIT`], default 10); an error names the tool and the argument.
fn query_and_limit<'a>(
    tool: &str,
    query: &'a str,
    limit: Option<usize>,
) -> std::result::Result<(&'a str, usize), ToolError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(bad(format!("{tool}: `query` is empty")));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(bad(format!(
            "{tool}: `query` is {} bytes; at most {MAX_QUERY_BYTES}",
            query.len()
        )));
    }
    let limit = limit.unwrap_or(10);
    if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
        return Err(bad(format!(
            "{tool}: `limit` must be 1 to {MAX_SEARCH_LIMIT}, not {limit}"
        )));
    }
    Ok((query, limit))
}

fn session_search(memory: &Memory, a: SessionSearchArgs) -> ToolResult {
    let (text, limit) = query_and_limit("session_search", &a.query, a.limit)?;
    let store = memory.store();
    let session = match a.session {
        Some(p) => Some(
            store
                .resolve_id(&p)
                .map_err(|e| bad(format!("session_search: {e}")))?,
        ),
        None => None,
    };
    let query = mem_session::SessionQuery {
        text: text.to_owned(),
        session,
        since: a.since,
        limit,
    };
    let found = match mem_session::search_sessions(store, &query) {
        Ok(found) => found,
        Err(e @ mem_session::Error::BadQuery(_)) => {
            return Err(bad(format!("session_search: {e}")));
        }
        Err(e) => return Err(crate::Error::from(e).into()),
    };
    let mut text = String::new();
    if found.hits.is_empty() {
        text.push_str("no session message matches");
    }
    for h in &found.hits {
        text.push_str(&format!(
            "{} #{} {} {}: {}\n",
            h.session_id,
            h.record,
            h.timestamp.as_deref().unwrap_or("-"),
            h.role,
            h.snippet
        ));
    }
    if found.stale {
        text.push_str("\n(the session index could not be updated: read-only project)");
    }
    Ok(ok(
        text.trim_end().to_owned(),
        json!({"hits": found.hits, "stale": found.stale}),
    ))
}

fn search(memory: &Memory, a: SearchArgs) -> ToolResult {
    let (query, limit) = query_and_limit("memory_search", &a.query, a.limit)?;
    let tiers = memory.tiers()?;
    let sources: Vec<SourceKind> = a
        .sources
        .unwrap_or_default()
        .into_iter()
        .map(SourceKind::from)
        .collect();
    let want_scope = a.scope.map(|s| match s {
        ScopeArg::Project => "project",
        ScopeArg::User => "user",
    });
    // Filtered or not: the same index search, restricted by source and scope in the query
    // (before its limit, so `limit` hits come back when that many match), synced and recorded
    // only on a writable store.
    let found = tiers.search(&SearchRequest {
        text: query.to_owned(),
        limit,
        sources,
        scope: want_scope.map(str::to_owned),
    })?;
    for w in &found.warnings {
        memory.config().warn(w);
    }
    let (hits, stale) = (found.hits, found.stale);
    let mut text = String::new();
    if hits.is_empty() {
        text.push_str(&format!("no memory matches {query:?}"));
    }
    for h in &hits {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "{}  {}  {}  {}  {}\n    {}",
            h.id,
            h.source.as_str(),
            h.scope,
            age(h.updated_ms),
            mem_tiers::tiers::one_line(&h.title, 200),
            mem_tiers::tiers::one_line(&h.snippet, 160)
        ));
    }
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut v = hit_json(h);
            v["age"] = json!(age(h.updated_ms));
            v
        })
        .collect();
    if stale {
        text.push_str("\n(index not refreshed: the store is read-only)");
    }
    Ok(ok(text, json!({ "results": results, "stale": stale })))
}

fn get(memory: &Memory, a: GetArgs) -> ToolResult {
    if a.ids.is_empty() {
        return Err(bad("memory_get: `ids` is empty"));
    }
    if a.ids.len() > MAX_GET_IDS {
        return Err(bad(format!(
            "memory_get: {} ids; at most {MAX_GET_IDS}",
            a.ids.len()
        )));
    }
    let ids = a
        .ids
        .iter()
        .map(|id| parse_id("memory_get", id))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let tiers = memory.tiers()?;
    let mut text = String::new();
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for id in &ids {
        let shown = match tiers.get(id) {
            Ok(Some(s)) => s,
            Ok(None) => {
                missing.push(id.to_string());
                continue;
            }
            Err(e) => return Err(bad(format!("memory_get: {id}: {e}"))),
        };
        let d = &shown.document;
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&format!(
            "## {} ({}, {}, {})\n# {}\n",
            d.id,
            d.source.as_str(),
            d.scope,
            age(d.updated_ms),
            d.title
        ));
        let mut item = json!({
            "id": d.id, "source": d.source, "scope": d.scope, "title": d.title,
            "path": d.path, "updated": rfc3339(d.updated_ms), "age": age(d.updated_ms),
        });
        match &shown.learning {
            Some(l) => {
                text.push_str(&format!("category: {}\n", l.category));
                if !l.tags.is_empty() {
                    text.push_str(&format!("tags: {}\n", l.tags.join(", ")));
                }
                if let Some(c) = &l.context {
                    text.push_str(&format!("context: {c}\n"));
                }
                text.push('\n');
                text.push_str(l.content.trim_end());
                item["text"] = json!(l.content);
                item["category"] = json!(l.category);
                item["tags"] = json!(l.tags);
                item["context"] = json!(l.context);
            }
            None => {
                text.push('\n');
                text.push_str(d.body.trim_end());
                item["text"] = json!(d.body);
            }
        }
        found.push(item);
    }
    if found.is_empty() {
        return Err(bad(format!(
            "memory_get: no memory with the id{} {} here (search again: ids of entries \
             change when their text is edited)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    if !missing.is_empty() {
        text.push_str(&format!("\n\nnot found: {}", missing.join(", ")));
    }
    Ok(ok(text, json!({ "memories": found, "not_found": missing })))
}

fn add(memory: &Memory, a: AddArgs) -> ToolResult {
    if a.content.len() > mem_tiers::MAX_CONTENT_BYTES {
        return Err(bad(format!(
            "memory_add: `content` is {} bytes; at most {}",
            a.content.len(),
            mem_tiers::MAX_CONTENT_BYTES
        )));
    }
    if a.title.trim().is_empty() {
        return Err(bad("memory_add: `title` is empty"));
    }
    if a.content.trim().is_empty() {
        return Err(bad("memory_add: `content` is empty"));
    }
    let scope_name = match a.scope {
        ScopeArg::Project => "project",
        ScopeArg::User => "user",
    };
    match a.kind {
        AddKind::Learning => {
            if a.description.is_some() || a.note_type.is_some() {
                return Err(bad(
                    "memory_add: `description` and `note_type` are for notes (kind \"note\")",
                ));
            }
            let tiers = memory.tiers()?;
            let scope = match a.scope {
                ScopeArg::Project => LearningScope::Project,
                ScopeArg::User => LearningScope::User,
            };
            let added = tiers
                .add(&NewLearning {
                    title: &a.title,
                    content: &a.content,
                    category: a.category.as_deref().unwrap_or("general"),
                    tags: &a.tags.unwrap_or_default(),
                    context: None,
                    scope,
                })
                .map_err(|e| bad(format!("memory_add: {e}")))?;
            let id = format!("L{}", added.learning.id);
            let text = format!(
                "added {id} (learning, {scope_name}): {}{}",
                added.learning.title,
                withheld_text(added.withheld)
            );
            Ok(ok(
                text,
                json!({"id": id, "kind": "learning", "scope": scope_name,
                       "withheld": added.withheld}),
            ))
        }
        AddKind::Note => {
            if a.category.is_some() || a.tags.is_some() {
                return Err(bad(
                    "memory_add: `category` and `tags` are for learnings (kind \"learning\")",
                ));
            }
            let scope = match a.scope {
                ScopeArg::Project => mem_recall::Scope::Project,
                ScopeArg::User => mem_recall::Scope::User,
            };
            let description = a.description.unwrap_or_else(|| {
                let first = a.content.lines().find(|l| !l.trim().is_empty());
                mem_tiers::tiers::one_line(first.unwrap_or(&a.title), 150)
            });
            let kind = a.note_type.unwrap_or_else(|| scope_name.to_owned());
            let written = memory
                .add_note(
                    scope,
                    &NewNote {
                        name: a.title,
                        description,
                        kind,
                        body: a.content,
                    },
                    false,
                )
                .map_err(|e| match e {
                    crate::Error::Recall(e) => bad(format!("memory_add: {e}")),
                    e => ToolError::from(e),
                })?;
            let id = written.id.to_string();
            let text = format!(
                "added {id} (note, {scope_name}) at {}{}",
                written.path.display(),
                withheld_text(written.withheld)
            );
            Ok(ok(
                text,
                json!({"id": id, "kind": "note", "scope": scope_name,
                       "path": written.path, "withheld": written.withheld}),
            ))
        }
    }
}

fn forget(memory: &Memory, a: ForgetArgs) -> ToolResult {
    let id = parse_id("memory_forget", &a.id)?;
    let reason = a.reason.trim();
    if reason.is_empty() {
        return Err(bad(
            "memory_forget: `reason` is empty; say why it is forgotten",
        ));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(bad(format!(
            "memory_forget: `reason` is over {MAX_REASON_CHARS} characters"
        )));
    }
    let reason = mem_core::secrets::redact(reason).text;
    let tiers = memory.tiers()?;
    let forgot = tiers.forget(&id).map_err(|e| match e {
        crate::Error::Tiers(e) => bad(format!("memory_forget: {e}")),
        e => ToolError::from(e),
    })?;
    for w in &forgot.warnings {
        memory.config().warn(w);
    }
    let f = forgot.forgotten;
    let line = format!(
        "forgot {} ({} \"{}\") from {}: {reason}",
        f.id,
        f.source.as_str(),
        f.title,
        f.location
    );
    let log = memory.mcp_log_path();
    if let Err(e) = memory
        .check_write(&log)
        .and_then(|()| crate::hook::log_line_to(&log, "mcp", "memory_forget", &line))
    {
        tracing::warn!(
            "memory_forget: the reason could not be logged: {}",
            chain_text(&e)
        );
    }
    Ok(ok(
        line.clone(),
        json!({"id": f.id, "source": f.source, "title": f.title, "location": f.location,
               "reason": reason}),
    ))
}

async fn recall(memory: Arc<Memory>, a: RecallArgs) -> ToolResult {
    let mut message = a.message.as_str();
    let mut cut = false;
    if message.len() > MAX_RECALL_MESSAGE_BYTES {
        let mut end = MAX_RECALL_MESSAGE_BYTES;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message = &message[..end];
        cut = true;
    }
    if message.trim().is_empty() {
        return Err(bad("recall: `message` is empty"));
    }
    let dirs = memory.memory_dirs()?;
    let log = match &a.session_id {
        Some(id) => {
            let log = memory.surfaced_log(id).map_err(|e| match e {
                crate::Error::Session(e) => bad(format!("recall: `session_id`: {e}")),
                e => ToolError::from(e),
            })?;
            let dir = memory.store().dir();
            memory.check_write(dir)?;
            std::fs::create_dir_all(dir)
                .map_err(|e| bad(format!("cannot create {}: {e}", dir.display())))?;
            Some(log)
        }
        None => None,
    };
    let llm = memory
        .config()
        .llm(Job::Select)
        .map_err(crate::Error::Config)?
        .map_err(|e| bad(format!("recall: {e}")))?;
    let (llm, warnings) = memory.with_embeddings(llm, false);
    for w in &warnings {
        memory.config().warn(w);
    }
    let r =
        crate::recall::recall_reminder(llm, &dirs, log.as_ref(), message, None, SystemTime::now())
            .await;
    for p in &r.problems {
        tracing::warn!("recall: {p}");
    }
    let mut text = if r.reminder.is_empty() {
        "no memory note applies to this message".to_owned()
    } else {
        r.reminder.clone()
    };
    if cut {
        text.push_str(&format!(
            "\n(recall used the first {MAX_RECALL_MESSAGE_BYTES} bytes of the message)"
        ));
    }
    Ok(ok(
        text,
        json!({"reminder": r.reminder, "ids": r.ids, "problems": r.problems,
               "message_cut": cut}),
    ))
}

fn context(memory: &Memory, a: ContextArgs) -> ToolResult {
    let budget = a.budget_chars.unwrap_or(CLAUDE_HOOK_MAX_CHARS);
    if !(MIN_BUDGET_CHARS..=MAX_CONTEXT_CHARS).contains(&budget) {
        return Err(bad(format!(
            "context: `budget_chars` must be {MIN_BUDGET_CHARS} to {MAX_CONTEXT_CHARS}, not \
             {budget}"
        )));
    }
    let date = chrono::Local::now().date_naive();
    let instructions =
        mem_instructions::LoadOptions::new(memory.project(), &memory.settings().home);
    let (options, mut problems) =
        memory.context_options_on(instructions, date, Some(budget), false);
    let ctx = start_context(&options).map_err(|e| bad(format!("context: {e}")))?;
    problems.extend(ctx.warnings.iter().map(ToString::to_string));
    if ctx.cut_chars > 0 {
        problems.push(format!(
            "{} characters cut to fit the budget of {budget}",
            ctx.cut_chars
        ));
    }
    Ok(ok(
        ctx.text.clone(),
        json!({"text": ctx.text, "instruction_files": ctx.instruction_files,
               "memory_files": ctx.memory_files, "cut_chars": ctx.cut_chars,
               "problems": problems}),
    ))
}

impl MemServer {
    async fn dispatch(&self, name: &str, args: Option<JsonObject>) -> Option<ToolResult> {
        let memory = self.memory.clone();
        Some(match name {
            "memory_search" => match parse::<SearchArgs>(name, args) {
                Ok(a) => blocking("memory_search", move || search(&memory, a)).await,
                Err(e) => Err(e),
            },
            "session_search" => match parse::<SessionSearchArgs>(name, args) {
                Ok(a) => blocking("session_search", move || session_search(&memory, a)).await,
                Err(e) => Err(e),
            },
            "memory_get" => match parse::<GetArgs>(name, args) {
                Ok(a) => blocking("memory_get", move || get(&memory, a)).await,
                Err(e) => Err(e),
            },
            "memory_add" => match parse::<AddArgs>(name, args) {
                Ok(a) => blocking("memory_add", move || add(&memory, a)).await,
                Err(e) => Err(e),
            },
            "memory_forget" => match parse::<ForgetArgs>(name, args) {
                Ok(a) => blocking("memory_forget", move || forget(&memory, a)).await,
                Err(e) => Err(e),
            },
            "recall" => match parse::<RecallArgs>(name, args) {
                Ok(a) => match tokio::spawn(recall(memory, a)).await {
                    Ok(r) => r,
                    Err(e) => Err(bad(format!("recall: internal error: {e}"))),
                },
                Err(e) => Err(e),
            },
            "context" => match parse::<ContextArgs>(name, args) {
                Ok(a) => blocking("context", move || context(&memory, a)).await,
                Err(e) => Err(e),
            },
            _ => return None,
        })
    }
}

impl ServerHandler for MemServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mewmem", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "mewmem: the memory of this project and user. memory_search finds memories \
                 (ids, titles, snippets), memory_get reads them in full, memory_add remembers a \
                 learning or a note, memory_forget removes one by id, recall gives the notes \
                 relevant to a user message, context gives the start-of-session context, \
                 session_search finds messages of past conversations.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()?))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().ok()?.into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let name: Cow<'static, str> = request.name;
        let started = std::time::Instant::now();
        let result = self.dispatch(&name, request.arguments).await;
        let Some(result) = result else {
            let known = tools()?
                .iter()
                .map(|t| t.name.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; the tools are: {known}"),
                None,
            ));
        };
        let result = match result {
            Ok(r) => r,
            Err(ToolError(message)) => {
                tracing::info!("{name}: {message}");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
        };
        tracing::debug!("{name}: {:?}", started.elapsed());
        Ok(result.into())
    }
}
