//! The prompts (versioned text files in `prompts/`, pinned by golden tests) and the rendering of
//! a job into a [`ChatRequest`].

use mem_core::{ContentBlock, Message, Role};
use serde_json::{Value, json};

use crate::types::{ExtractRequest, Job, SelectRequest, SummarizeRequest};

/// Version of the prompt set; part of every request's provenance.
pub const PROMPT_VERSION: &str = "v3";

/// System prompt of the summarize job (`prompts/summarize.v1.md`).
pub const SUMMARIZE_PROMPT: &str = include_str!("../prompts/summarize.v1.md");
/// System prompt of the extract job (`prompts/extract.v2.md`): merging against numbered
/// current entries (ADD / UPDATE / DELETE / NONE). v1 asked for four lists of new entries.
pub const EXTRACT_PROMPT: &str = include_str!("../prompts/extract.v2.md");
/// System prompt of the select job (`prompts/select.v1.md`); `{limit}` is replaced.
pub const SELECT_PROMPT: &str = include_str!("../prompts/select.v1.md");

/// System prompt of the skill job (`prompts/skill.v1.md`): a skill from related memories.
pub const SKILL_PROMPT: &str = include_str!("../prompts/skill.v1.md");

/// Characters kept of one tool input / tool result / text block in a rendered transcript.
pub const MAX_BLOCK_CHARS: usize = 2_000;
/// Characters kept of a whole rendered transcript (the most recent part is kept).
pub const MAX_TRANSCRIPT_CHARS: usize = 60_000;

/// Reply-token budgets per job.
pub const SUMMARIZE_MAX_TOKENS: u32 = 1_024;
/// See [`SUMMARIZE_MAX_TOKENS`].
pub const EXTRACT_MAX_TOKENS: u32 = 768;
/// See [`SUMMARIZE_MAX_TOKENS`].
pub const SELECT_MAX_TOKENS: u32 = 256;
/// See [`SUMMARIZE_MAX_TOKENS`].
pub const SKILL_MAX_TOKENS: u32 = 1_536;
/// Characters kept of one memory's text in a skill request.
pub const SKILL_SOURCE_MAX_CHARS: usize = 1_500;
/// Memories sent in one skill request (the most relevant first).
pub const SKILL_MAX_SOURCES: usize = 40;

/// A provider-neutral chat request: one system prompt and one user message.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The job this request serves (for logs and errors).
    pub job: Job,
    /// The system prompt.
    pub system: String,
    /// The user message.
    pub user: String,
    /// Most tokens the reply may have.
    pub max_tokens: u32,
    /// A JSON schema for the reply, sent as `response_format` where the provider supports it.
    pub schema: Option<Value>,
}

/// The prompt for `job` with its placeholders still in (as stored in the crate).
pub fn template(job: Job) -> &'static str {
    match job {
        Job::Summarize => SUMMARIZE_PROMPT,
        Job::Extract => EXTRACT_PROMPT,
        Job::Select => SELECT_PROMPT,
        Job::Skill => SKILL_PROMPT,
    }
}

fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept} […{} more characters]", count - max)
}

/// Renders messages one item per line (continuation lines indented), e.g.
/// `[user] fix the test`, `[assistant] tool Bash {"command":"cargo test"}`,
/// `[tool error] ...`. Blocks are cut at [`MAX_BLOCK_CHARS`]; when the whole exceeds
/// [`MAX_TRANSCRIPT_CHARS`], the oldest items are left out and a line says how many.
pub fn render_transcript(messages: &[Message]) -> String {
    let mut items: Vec<String> = Vec::new();
    for message in messages {
        let who = message.role.as_str();
        let summary = message
            .metadata
            .contains_key(mem_core::metadata_keys::COMPACT_SUMMARY);
        let whole_injected = message.role == Role::User
            && !summary
            && mem_core::speech::is_injected_message(message);
        for block in &message.content {
            let line = match block {
                ContentBlock::Text { text, .. } if summary => {
                    format!("[earlier summary] {}", cut(text.trim(), MAX_BLOCK_CHARS))
                }
                ContentBlock::Text { text, .. } if message.role == Role::User => {
                    // What the client injected in the user's name (AGENTS.md, reminders,
                    // command output, mewmem's own context) is not shown as the user's words.
                    let speech = mem_core::speech::user_speech(text);
                    if whole_injected || speech.said.is_empty() {
                        let kind = speech.injected.first().map_or("client", |k| k.name());
                        format!(
                            "[injected context: {kind}] ({} characters left out: not the user's words)",
                            text.chars().count()
                        )
                    } else {
                        format!("[{who}] {}", cut(&speech.said, MAX_BLOCK_CHARS))
                    }
                }
                ContentBlock::Text { text, .. } => {
                    format!("[{who}] {}", cut(text.trim(), MAX_BLOCK_CHARS))
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    format!(
                        "[{who}] tool {name} {}",
                        cut(&input.to_string(), MAX_BLOCK_CHARS)
                    )
                }
                ContentBlock::ToolResult { content, .. } => {
                    let tag = if block.is_error() {
                        "tool error"
                    } else {
                        "tool result"
                    };
                    format!("[{tag}] {}", cut(content.text().trim(), MAX_BLOCK_CHARS))
                }
                ContentBlock::Thinking { .. } => continue,
                ContentBlock::Image { .. } => format!("[{who}] (image)"),
                ContentBlock::Other(_) => format!("[{who}] ({} block)", block.kind()),
            };
            items.push(line.replace('\n', "\n    "));
        }
        if message.content.is_empty() && message.role == Role::System {
            items.push("[system] (empty)".to_owned());
        }
    }
    let mut total = 0;
    let mut start = items.len();
    while start > 0 {
        let len = items[start - 1].chars().count() + 1;
        if total + len > MAX_TRANSCRIPT_CHARS {
            break;
        }
        total += len;
        start -= 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push_str(&format!("({start} earlier items left out)\n"));
    }
    for item in &items[start..] {
        out.push_str(item);
        out.push('\n');
    }
    out
}

/// The request for a summary.
pub fn summarize_request(request: &SummarizeRequest) -> ChatRequest {
    ChatRequest {
        job: Job::Summarize,
        system: SUMMARIZE_PROMPT.to_owned(),
        user: format!(
            "Conversation to summarise ({} messages):\n\n{}",
            request.messages.len(),
            render_transcript(&request.messages)
        ),
        max_tokens: SUMMARIZE_MAX_TOKENS,
        schema: None,
    }
}

/// The longest entry text (characters) the extraction schema lets a model write: a memory entry
/// is one short line (mem-auto cuts entries at the same length). A server that enforces the
/// schema stops a model that loops inside one text here instead of at its `max_tokens`, so the
/// operations before the cut stay usable.
pub const EXTRACT_TEXT_MAX_CHARS: usize = 300;

/// The JSON schema of an extraction reply: `memory`, a list of operations
/// `{event, id, category, text}` (event ADD / UPDATE / DELETE / NONE; `id` one of the request's
/// entry ids or null, an enum so a server that enforces the schema cannot invent one;
/// `category` one of the four keys or null; `text` or null, at most [`EXTRACT_TEXT_MAX_CHARS`]),
/// at most 20.
pub fn extract_schema(request: &ExtractRequest) -> Value {
    let mut ids: Vec<Value> = request.entries.iter().map(|e| json!(e.id)).collect();
    ids.push(Value::Null);
    let mut categories: Vec<Value> = crate::MemoryCategory::ALL
        .iter()
        .map(|c| json!(c.key()))
        .collect();
    categories.push(Value::Null);
    json!({
        "type": "object",
        "properties": {
            "memory": {
                "type": "array",
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "properties": {
                        "event": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
                        "id": {"enum": ids},
                        "category": {"enum": categories},
                        "text": {"type": ["string", "null"], "maxLength": EXTRACT_TEXT_MAX_CHARS},
                    },
                    "required": ["event", "id", "category", "text"],
                    "additionalProperties": false,
                },
            }
        },
        "required": ["memory"],
        "additionalProperties": false,
    })
}

/// The current entries as the model sees them: `<id>. [<category key>] <text>` per line,
/// or `(none)`.
pub fn render_entries(entries: &[crate::CurrentEntry]) -> String {
    if entries.is_empty() {
        return "(none)".to_owned();
    }
    entries
        .iter()
        .map(|e| format!("{}. [{}] {}", e.id, e.category.key(), e.text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The request for an extraction: the numbered current entries and the new messages. A request
/// without numbered entries but with `current_memories` text shows that text instead (nothing
/// to UPDATE or DELETE by number then).
pub fn extract_request(request: &ExtractRequest) -> ChatRequest {
    let current = request.current_memories.trim();
    let memories = if request.entries.is_empty() && !current.is_empty() {
        format!("Current memories (not numbered: only ADD applies):\n{current}")
    } else {
        format!(
            "Current memory entries:\n{}",
            render_entries(&request.entries)
        )
    };
    ChatRequest {
        job: Job::Extract,
        system: EXTRACT_PROMPT.to_owned(),
        user: format!(
            "{memories}\n\nNew messages:\n{}",
            render_transcript(&request.messages)
        ),
        max_tokens: EXTRACT_MAX_TOKENS,
        schema: Some(extract_schema(request)),
    }
}

/// The JSON schema of a selection reply: `selected`, a list of candidate ids (an enum of them,
/// so a server that enforces the schema cannot invent one), at most `limit` long.
pub fn select_schema(request: &SelectRequest) -> Value {
    let ids: Vec<&str> = request.candidates.iter().map(|c| c.id.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "selected": {
                "type": "array",
                "items": {"type": "string", "enum": ids},
                "maxItems": request.limit,
            }
        },
        "required": ["selected"],
        "additionalProperties": false,
    })
}

/// The request for a selection. Candidates are listed as `- <id>: <name> — <description>`.
pub fn select_request(request: &SelectRequest) -> ChatRequest {
    let mut list = String::new();
    for c in &request.candidates {
        list.push_str(&format!(
            "- {}: {} — {}\n",
            c.id,
            c.name.trim(),
            c.description.trim()
        ));
    }
    ChatRequest {
        job: Job::Select,
        system: SELECT_PROMPT.replace("{limit}", &request.limit.to_string()),
        user: format!(
            "User's message:\n{}\n\nMemory files:\n{list}",
            cut(request.query.trim(), MAX_BLOCK_CHARS)
        ),
        max_tokens: SELECT_MAX_TOKENS,
        schema: Some(select_schema(request)),
    }
}

/// The JSON schema of a skill reply: `name`, `description` (at most 1,024 characters), `steps`
/// and `pitfalls`, lists of `{text, sources}` whose sources are an enum of the request's ids
/// (so a server that enforces the schema cannot invent one).
pub fn skill_schema(request: &crate::SkillRequest) -> Value {
    let ids: Vec<&str> = request
        .sources
        .iter()
        .take(SKILL_MAX_SOURCES)
        .map(|s| s.id.as_str())
        .collect();
    let point = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 400},
            "sources": {"type": "array", "items": {"type": "string", "enum": ids}, "minItems": 1},
        },
        "required": ["text", "sources"],
        "additionalProperties": false,
    });
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 64},
            "description": {"type": "string", "maxLength": 1024},
            "steps": {"type": "array", "items": point.clone(), "maxItems": 20},
            "pitfalls": {"type": "array", "items": point, "maxItems": 20},
        },
        "required": ["name", "description", "steps", "pitfalls"],
        "additionalProperties": false,
    })
}

/// The request for a skill: the proposed name, the topic and the memories, each as
/// `- <id> [<kind>, <category>, tags: a, b] <title>: <text>` (text on one line, cut at
/// [`SKILL_SOURCE_MAX_CHARS`]; at most [`SKILL_MAX_SOURCES`] memories).
pub fn skill_request(request: &crate::SkillRequest) -> ChatRequest {
    let mut list = String::new();
    for s in request.sources.iter().take(SKILL_MAX_SOURCES) {
        let mut about = vec![s.kind.clone()];
        if let Some(c) = &s.category {
            about.push(c.clone());
        }
        if !s.tags.is_empty() {
            about.push(format!("tags: {}", s.tags.join(", ")));
        }
        let text = s.text.split_whitespace().collect::<Vec<_>>().join(" ");
        list.push_str(&format!(
            "- {} [{}] {}: {}\n",
            s.id,
            about.join(", "),
            s.title.trim(),
            cut(&text, SKILL_SOURCE_MAX_CHARS)
        ));
    }
    ChatRequest {
        job: Job::Skill,
        system: SKILL_PROMPT.to_owned(),
        user: format!(
            "Proposed name: {}\nTopic: {}\n\nMemories:\n{list}",
            request.name,
            request.topic.trim()
        ),
        max_tokens: SKILL_MAX_TOKENS,
        schema: Some(skill_schema(request)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Candidate;
    use serde_json::json;

    #[test]
    fn transcript_is_one_item_per_line() {
        let messages = vec![
            Message::user("fix it\nplease"),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::tool_use(
                    "1",
                    "Bash",
                    json!({"command": "ls"}),
                )],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result("1", "boom", true)],
            ),
        ];
        assert_eq!(
            render_transcript(&messages),
            "[user] fix it\n    please\n[assistant] tool Bash {\"command\":\"ls\"}\n[tool error] boom\n"
        );
    }

    #[test]
    fn injected_context_is_not_rendered_as_the_users_words() {
        let messages = vec![
            Message::new(
                Role::User,
                vec![
                    ContentBlock::text(
                        "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\nNever commit to main.\n</INSTRUCTIONS>",
                    ),
                    ContentBlock::text("<environment_context>cwd</environment_context>"),
                ],
            ),
            Message::user("<system-reminder>be brief</system-reminder>\nuse uv here"),
            Message::user("Earlier: set up uv.")
                .with_metadata(mem_core::metadata_keys::COMPACT_SUMMARY, json!(true)),
        ];
        let out = render_transcript(&messages);
        assert!(!out.contains("Never commit"), "{out}");
        assert!(!out.contains("be brief"), "{out}");
        assert!(out.contains("[injected context: agents_md]"), "{out}");
        assert!(
            out.contains("[injected context: environment_context]"),
            "{out}"
        );
        assert!(out.contains("[user] use uv here"), "{out}");
        assert!(
            out.contains("[earlier summary] Earlier: set up uv."),
            "{out}"
        );
    }

    #[test]
    fn long_transcripts_keep_the_end() {
        let big = "x".repeat(MAX_BLOCK_CHARS);
        let messages: Vec<Message> = (0..40).map(|_| Message::user(big.clone())).collect();
        let out = render_transcript(&messages);
        assert!(
            out.starts_with("(11 earlier items left out)\n"),
            "{}",
            &out[..40]
        );
        assert!(out.chars().count() <= MAX_TRANSCRIPT_CHARS + 40);
    }

    #[test]
    fn select_request_lists_candidates_and_limits_the_schema() {
        let request = SelectRequest {
            query: "how to test".into(),
            candidates: vec![Candidate {
                user_level: false,
                id: "testing.md".into(),
                name: "Testing".into(),
                description: "How tests run".into(),
                body: "secret body not sent".into(),
            }],
            limit: 5,
        };
        let chat = select_request(&request);
        assert!(chat.system.contains("at most 5 files"));
        assert_eq!(
            chat.user,
            "User's message:\nhow to test\n\nMemory files:\n- testing.md: Testing — How tests run\n"
        );
        let schema = chat.schema.unwrap_or_default();
        assert_eq!(
            schema["properties"]["selected"]["items"]["enum"],
            json!(["testing.md"])
        );
        assert_eq!(schema["properties"]["selected"]["maxItems"], json!(5));
    }
}
