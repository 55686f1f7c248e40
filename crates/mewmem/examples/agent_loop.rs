//! A minimal coding agent on the `mewmem` facade, against any OpenAI-compatible server
//! (llama.cpp, Ollama, vLLM, OpenAI):
//!
//! ```sh
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 MEM_LLM_MODEL=qwen \
//!   cargo run -p mewmem --example agent_loop -- /path/to/project "what does this project build?"
//! ```
//!
//! Each prompt is one turn: the user message goes into the session, the model is called with
//! `next_request()` (the seed §6 block first, the recall reminder before the prompt) and one tool, `read_file`; every reply and
//! every tool result goes through `model_message`, which appends it and compacts near the
//! window (`MEM_WINDOW` tokens, default 8192, small on purpose). `OPENAI_API_KEY` is sent when
//! set. Compaction summaries use the offline engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mem_core::{ContentBlock, Message, Role};
use mewmem::{Memory, MemorySettings};
use serde_json::{Value, json};

#[path = "common/openai.rs"]
mod openai;
use openai::{from_openai, to_openai};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let project = PathBuf::from(args.next().ok_or("usage: agent_loop PROJECT PROMPT...")?);
    let prompts: Vec<String> = args.collect();
    if prompts.is_empty() {
        return Err("usage: agent_loop PROJECT PROMPT...".into());
    }
    let base =
        std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8080/v1".into());
    let model = std::env::var("MEM_LLM_MODEL").unwrap_or_else(|_| "local".into());
    let key = std::env::var("OPENAI_API_KEY").ok();
    let window = std::env::var("MEM_WINDOW")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(8_192);
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| ".".into()));

    let mut settings = MemorySettings::new(
        home,
        Arc::new(mem_llm::OfflineEngine),
        chrono::Local::now().date_naive(),
    );
    settings.compact.model_context_window = window;
    let memory = Memory::open(&project, settings)?;
    let mut session = memory.start()?;
    eprintln!("session {}", session.id());
    let client = mem_llm::http::build_client(Duration::from_secs(10))?;

    for prompt in prompts {
        session.user_message(prompt)?;
        for _step in 0..8 {
            let body = json!({
                "model": model,
                "messages": to_openai(&session.next_request().await),
                "tools": [{
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "description": "Read a text file of the project",
                        "parameters": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"]
                        }
                    }
                }],
            });
            let mut request = client.post(format!("{base}/chat/completions")).json(&body);
            if let Some(k) = &key {
                request = request.bearer_auth(k);
            }
            let reply: Value = request.send().await?.error_for_status()?.json().await?;
            let choice = &reply["choices"][0]["message"];
            let assistant = from_openai(choice);
            let calls: Vec<(String, Value)> = assistant
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, input, .. } => Some((id.clone(), input.clone())),
                    _ => None,
                })
                .collect();
            println!(
                "assistant: {}",
                mem_core::terminal::safe(&assistant.text_content())
            );
            let result = session.model_message(assistant).await?;
            if result.triggered {
                eprintln!(
                    "compacted: {} -> {} tokens",
                    result.tokens_before, result.tokens_after
                );
            }
            if calls.is_empty() {
                break;
            }
            let results = calls
                .into_iter()
                .map(|(id, input)| {
                    let (text, is_error) = read_file(&project, &input);
                    ContentBlock::tool_result(id, text, is_error)
                })
                .collect();
            session
                .model_message(Message::new(Role::User, results))
                .await?;
        }
    }
    Ok(())
}

/// The `read_file` tool: a file inside the project, at most 20,000 bytes.
fn read_file(project: &Path, input: &Value) -> (String, bool) {
    let Some(rel) = input.get("path").and_then(Value::as_str) else {
        return ("missing `path`".into(), true);
    };
    let path = project.join(rel);
    match (path.canonicalize(), project.canonicalize()) {
        (Ok(p), Ok(root)) if p.starts_with(&root) => match std::fs::read(&p) {
            Ok(bytes) => {
                let n = bytes.len().min(20_000);
                (String::from_utf8_lossy(&bytes[..n]).into_owned(), false)
            }
            Err(e) => (format!("cannot read {rel}: {e}"), true),
        },
        _ => (format!("{rel}: no such file in the project"), true),
    }
}
