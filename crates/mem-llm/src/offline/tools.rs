//! Classifying tool calls into the kinds of the OMC statistics summary (seed 003).

use serde_json::Value;

/// The kind of a tool call, as counted by the statistics summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads a file (`Read`, `read_file`, `view`, `NotebookRead`, ...).
    FileRead,
    /// Runs a shell command (`Bash`, `shell`, `exec_command`, ...).
    Command,
    /// Searches code or the web (`Grep`, `Glob`, `LS`, `WebSearch`, `WebFetch`, ...).
    Search,
    /// Calls an external function: MCP tools (`mcp__server__tool`) and other namespaced functions.
    FunctionCall,
    /// Any other tool (`Edit`, `Write`, `TodoWrite`, `Task`, ...).
    Other,
}

/// Classifies a tool by its name (case-insensitive).
pub fn classify_tool(name: &str) -> ToolKind {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "read" | "read_file" | "readfile" | "view" | "notebookread" | "cat" | "open_file" => {
            ToolKind::FileRead
        }
        "bash" | "shell" | "exec_command" | "local_shell" | "run_command" | "execute_command"
        | "run_terminal_cmd" | "bashoutput" | "powershell" => ToolKind::Command,
        "grep" | "glob" | "ls" | "list_dir" | "list_files" | "search" | "find"
        | "codebase_search" | "file_search" | "grep_search" | "websearch" | "web_search"
        | "webfetch" | "web_fetch" | "toolsearch" => ToolKind::Search,
        _ if lower.starts_with("mcp__") || lower.contains("__") || lower.contains('.') => {
            ToolKind::FunctionCall
        }
        _ => ToolKind::Other,
    }
}

/// How a tool touches a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum FileOp {
    Read,
    Edit,
    Write,
}

impl FileOp {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Edit => "edited",
            FileOp::Write => "written",
        }
    }
}

/// The file a tool call touches and how, from its input (`file_path`, `path`, `notebook_path`).
pub(crate) fn touched_file(name: &str, input: &Value) -> Option<(String, FileOp)> {
    let path = ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))?;
    let op = match name.to_ascii_lowercase().as_str() {
        "read" | "read_file" | "readfile" | "view" | "notebookread" | "open_file" => FileOp::Read,
        "edit"
        | "multiedit"
        | "notebookedit"
        | "str_replace"
        | "apply_patch"
        | "edit_file"
        | "str_replace_based_edit_tool" => FileOp::Edit,
        "write" | "write_file" | "create_file" => FileOp::Write,
        _ => return None,
    };
    Some((path.to_owned(), op))
}

/// The shell command of a command tool call (`command` as a string, or an argv array).
pub(crate) fn command_of(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            // Codex wraps commands as ["bash", "-lc", "<script>"]: keep the script.
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    Some((*script).to_owned())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_common_tools() {
        let check = |name: &str, kind: ToolKind| assert_eq!(classify_tool(name), kind, "{name}");
        check("Read", ToolKind::FileRead);
        check("Bash", ToolKind::Command);
        check("exec_command", ToolKind::Command);
        check("Grep", ToolKind::Search);
        check("WebFetch", ToolKind::Search);
        check("mcp__github__create_issue", ToolKind::FunctionCall);
        check("Edit", ToolKind::Other);
        check("TodoWrite", ToolKind::Other);
    }

    #[test]
    fn reads_commands_and_files() {
        assert_eq!(command_of(&json!({"command": "ls"})).as_deref(), Some("ls"));
        assert_eq!(
            command_of(&json!({"command": ["bash", "-lc", "cargo test"]})).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            touched_file("Edit", &json!({"file_path": "src/a.rs"})),
            Some(("src/a.rs".to_owned(), FileOp::Edit))
        );
        assert_eq!(touched_file("Grep", &json!({"path": "src"})), None);
    }
}
