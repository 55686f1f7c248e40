//! mewmem messages ↔ OpenAI chat messages, shared by the `agent_loop` example and the live
//! agent test (`tests/live_agent.rs` includes this file by path).

use mem_core::{ContentBlock, Message, Role};
use serde_json::{Value, json};

/// mewmem messages → OpenAI chat messages (tool results become `tool` messages).
pub fn to_openai(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let mut text = String::new();
        let mut calls = Vec::new();
        for b in &m.content {
            match b {
                ContentBlock::Text { text: t, .. } => text.push_str(t),
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => calls.push(json!({
                    "id": id, "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}
                })),
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => out.push(json!({
                    "role": "tool", "tool_call_id": tool_use_id, "content": content.text()
                })),
                _ => {}
            }
        }
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        if !calls.is_empty() {
            out.push(json!({"role": role, "content": text, "tool_calls": calls}));
        } else if !text.is_empty() {
            out.push(json!({"role": role, "content": text}));
        }
    }
    out
}

/// An OpenAI reply message → a mewmem assistant message: blank text is left out, a tool call
/// without an id gets `model_call_<i>` (ids stay distinct), arguments that are not JSON become
/// `{}`, and a reply with neither text nor calls becomes `(no answer)`.
pub fn from_openai(message: &Value) -> Message {
    let mut blocks = Vec::new();
    if let Some(t) = message["content"].as_str().filter(|t| !t.trim().is_empty()) {
        blocks.push(ContentBlock::text(t));
    }
    for (i, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = call["id"]
            .as_str()
            .map_or_else(|| format!("model_call_{i}"), str::to_owned);
        let name = call["function"]["name"].as_str().unwrap_or("").to_owned();
        let args = call["function"]["arguments"].as_str().unwrap_or("{}");
        let input = serde_json::from_str(args).unwrap_or(json!({}));
        blocks.push(ContentBlock::tool_use(id, name, input));
    }
    if blocks.is_empty() {
        blocks.push(ContentBlock::text("(no answer)"));
    }
    Message::new(Role::Assistant, blocks)
}
