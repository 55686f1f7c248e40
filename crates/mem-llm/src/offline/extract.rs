//! Offline extraction: rules for explicit preferences and corrections (cue words in English and
//! Chinese), project facts visible in the tool calls (package manager, test command, language,
//! framework) and URLs as references.

use std::collections::BTreeMap;

use mem_core::{ContentBlock, Message, Role};
use serde_json::Value;

use super::text::{
    already_known, looks_secret, normalise, one_line, sentences, shorten, urls, user_text,
};
use super::tools::{ToolKind, classify_tool, command_of, touched_file};
use crate::types::Memories;

const ENTRY_CHARS: usize = 200;
/// Sentences longer than this are pasted logs or code, not instructions.
const MAX_SENTENCE_CHARS: usize = 300;
const MAX_REFERENCES: usize = 20;
/// Longer user messages are pasted documents (plans, logs, summaries): no cues are read in them.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// Extracts memories from `messages`, skipping entries already in `current_memories`.
///
/// - preferences: user sentences that start with `always`, `never`, `prefer`, `remember`,
///   `from now on`, `make sure to`, `going forward` (optionally after `please`), or contain
///   `I prefer`, `I like`, `I want you to`, `we always`, `always use`, `never use`,
///   `remember to`, ... or 总是, 始终, 永远, 一律, 偏好, 喜欢, 记住, 以后, 务必, 请用, 请使用,
///   统一用 (questions excluded);
/// - corrections: user sentences that start with `no,`, `nope`, `actually,`, `wrong`,
///   `that's not`, `don't`, `do not`, `stop` or 不对, 不是, 错了, 别, 不要; that contain
///   `I said`, `I told you`, `you should have`, 而不是, 应该是, 应该用, 搞错, 说过; instructions
///   (`use …`, `please …`, `we should …`) with `instead of` / `rather than`; and the feedback a
///   user typed when rejecting a tool call;
/// - project: `Package manager: …`, `Test command: `…`` (the most used, without arguments), `Languages: …`, `Framework: …`, from
///   the commands run and the files touched;
/// - references: URLs the user wrote or a tool fetched (loopback addresses excluded).
///
/// Messages over 2,000 characters (pasted plans, logs) are not read for cues or links. Sentences
/// that look like they hold a secret are never extracted.
pub fn extract(messages: &[Message], current_memories: &str) -> Memories {
    let known = normalise(current_memories);
    let mut memories = Memories::default();
    let add = |list: &mut Vec<String>, entry: String| {
        if !entry.is_empty()
            && !looks_secret(&entry)
            && !already_known(&known, &entry)
            && !list.iter().any(|e| normalise(e) == normalise(&entry))
        {
            list.push(entry);
        }
    };

    let mut reference_urls = Vec::new();
    for message in messages {
        let mut said = Vec::new();
        if let Some(text) = user_text(message).filter(|t| t.chars().count() <= MAX_MESSAGE_CHARS) {
            // Links the user wrote in prose; pasted logs and documents (long lines) are skipped.
            for sentence in sentences(&text) {
                if sentence.chars().count() <= MAX_SENTENCE_CHARS {
                    reference_urls.extend(urls(&sentence));
                }
            }
            said.push(text);
        }
        if message.role == Role::User {
            said.extend(message.content.iter().filter_map(rejection_feedback));
        }
        for text in said {
            for sentence in sentences(&text) {
                let sentence = one_line(&sentence);
                if sentence.chars().count() > MAX_SENTENCE_CHARS {
                    continue;
                }
                match classify_sentence(&sentence) {
                    Some(Cue::Correction) => {
                        add(&mut memories.corrections, shorten(&sentence, ENTRY_CHARS))
                    }
                    Some(Cue::Preference) => {
                        add(&mut memories.preferences, shorten(&sentence, ENTRY_CHARS))
                    }
                    None => {}
                }
            }
        }
        for block in &message.content {
            if let ContentBlock::ToolUse { input, .. } = block
                && let Some(url) = input.get("url").and_then(Value::as_str)
            {
                reference_urls.extend(urls(url));
            }
        }
    }

    for fact in project_facts(messages) {
        add(&mut memories.project, fact);
    }
    for url in reference_urls {
        if memories.references.len() >= MAX_REFERENCES {
            break;
        }
        if !is_loopback(&url) {
            add(&mut memories.references, url);
        }
    }
    memories
}

#[derive(Debug, PartialEq, Eq)]
enum Cue {
    Preference,
    Correction,
}

fn classify_sentence(sentence: &str) -> Option<Cue> {
    let lower = sentence.to_lowercase();
    let lower = lower.trim_start_matches(['-', '*', '>', ' ']);
    let starts = |list: &[&str]| list.iter().any(|c| lower.starts_with(c));
    let contains = |list: &[&str]| list.iter().any(|c| lower.contains(c));
    const CORRECTION_STARTS: &[&str] = &[
        "no,",
        "no.",
        "no!",
        "nope",
        "actually,",
        "wrong",
        "that's not",
        "that is not",
        "that's wrong",
        "don't ",
        "dont ",
        "do not ",
        "stop ",
        "not like that",
        "不对",
        "不是",
        "错了",
        "别",
        "不要",
    ];
    const CORRECTION_ANYWHERE: &[&str] = &[
        "i said ",
        "i told you",
        "you should have",
        "that's not what",
        "而不是",
        "应该是",
        "应该用",
        "搞错",
        "说过",
    ];
    // "instead of" / "rather than" correct only in an instruction, not in a description.
    const INSTRUCTION_STARTS: &[&str] = &[
        "use ",
        "please ",
        "we should",
        "you should",
        "let's",
        "just ",
    ];
    if starts(CORRECTION_STARTS)
        || contains(CORRECTION_ANYWHERE)
        || (starts(INSTRUCTION_STARTS) && contains(&[" instead of ", " rather than "]))
    {
        return Some(Cue::Correction);
    }
    if lower.ends_with('?') || lower.ends_with('？') {
        return None;
    }
    const PREFERENCE_STARTS: &[&str] = &[
        "always ",
        "never ",
        "prefer ",
        "remember ",
        "please always",
        "please never",
        "please remember",
        "please prefer",
        "from now on",
        "make sure to",
        "going forward",
    ];
    const PREFERENCE_ANYWHERE: &[&str] = &[
        "i prefer",
        "i like ",
        "i want you to",
        "we prefer",
        "we always",
        "we never",
        "you should always",
        "you should never",
        "always use ",
        "never use ",
        "remember to ",
        "remember that ",
        "from now on",
        "总是",
        "始终",
        "永远",
        "一律",
        "偏好",
        "喜欢",
        "记住",
        "以后",
        "务必",
        "请用",
        "请使用",
        "统一用",
    ];
    if starts(PREFERENCE_STARTS) || contains(PREFERENCE_ANYWHERE) {
        return Some(Cue::Preference);
    }
    None
}

/// What the user typed when rejecting a tool call (Claude Code puts it after "the user said:").
fn rejection_feedback(block: &ContentBlock) -> Option<String> {
    let ContentBlock::ToolResult { content, .. } = block else {
        return None;
    };
    if !block.is_error() {
        return None;
    }
    let text = content.text();
    let marker = "the user said:";
    // ASCII lowercasing keeps every byte offset (Unicode lowercasing may not: "İ" grows from 2
    // to 3 bytes), so the position found is one in `text`.
    let pos = text.to_ascii_lowercase().find(marker)?;
    let said = text[pos + marker.len()..].trim();
    (!said.is_empty()).then(|| said.to_owned())
}

/// Loopback addresses and XML namespace URLs are not references.
fn is_loopback(url: &str) -> bool {
    let host = url.split("://").nth(1).unwrap_or("");
    ["localhost", "127.", "0.0.0.0", "[::1]", "www.w3.org/"]
        .iter()
        .any(|h| host.starts_with(h))
}

/// Package managers by the first word of a command segment.
fn package_manager(words: &[&str]) -> Option<&'static str> {
    let first = *words.first()?;
    Some(match first {
        "cargo" => "cargo",
        "npm" => "npm",
        "pnpm" => "pnpm",
        "yarn" => "yarn",
        "bun" => "bun",
        "uv" => "uv",
        "pip" | "pip3" => "pip",
        "poetry" => "poetry",
        "pipenv" => "pipenv",
        "go" if words.len() > 1 => "go",
        "mvn" | "./mvnw" => "Maven",
        "gradle" | "./gradlew" => "Gradle",
        "bundle" => "Bundler",
        "composer" => "Composer",
        "dotnet" => "dotnet",
        "swift"
            if words
                .get(1)
                .is_some_and(|w| ["build", "test", "run", "package"].contains(w)) =>
        {
            "SwiftPM"
        }
        _ => return None,
    })
}

fn is_test_command(words: &[&str]) -> bool {
    let w = |i: usize| words.get(i).copied().unwrap_or("");
    match w(0) {
        "cargo" => ["test", "nextest"].contains(&w(1)),
        "npm" | "pnpm" | "yarn" | "bun" => {
            w(1) == "test" || (w(1) == "run" && w(2).starts_with("test"))
        }
        "pytest" | "jest" | "vitest" | "rspec" | "phpunit" => true,
        "python" | "python3" => w(1) == "-m" && w(2) == "pytest",
        "uv" | "poetry" | "pipenv" => w(1) == "run" && ["pytest", "python"].contains(&w(2)),
        "npx" | "bunx" | "pnpx" => ["jest", "vitest", "playwright", "mocha"].contains(&w(1)),
        "go" | "mvn" | "./mvnw" | "gradle" | "./gradlew" | "dotnet" | "make" | "swift" => {
            w(1) == "test"
        }
        "bundle" => w(1) == "exec" && w(2) == "rspec",
        _ => false,
    }
}

/// The command without its arguments: leading words up to the first flag, path or quoted
/// argument, at most three (`go test ./pkg/... -run X` → `go test`, `uv run pytest -x` →
/// `uv run pytest`).
fn command_stem(words: &[&str]) -> String {
    words
        .iter()
        .take(3)
        .take_while(|w| {
            !w.starts_with(['-', '.', '/', '"', '\'', '~'])
                && !w.contains(['/', '=', '"', '\'', '*'])
        })
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a shell command into simple segments (at `&&`, `||`, `;`, `|` and newlines) and drops
/// leading `VAR=value` assignments and `sudo`/`time`.
fn segments(command: &str) -> Vec<Vec<&str>> {
    command
        .split(['\n', ';', '|', '&'])
        .map(|seg| {
            seg.split_whitespace()
                .skip_while(|w| {
                    (w.contains('=') && !w.starts_with('-')) || *w == "sudo" || *w == "time"
                })
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "Rust",
        "py" | "pyi" => "Python",
        "ts" | "tsx" | "mts" | "cts" => "TypeScript",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "go" => "Go",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "rb" => "Ruby",
        "php" => "PHP",
        "cs" => "C#",
        "c" | "h" => "C",
        "cpp" | "cc" | "cxx" | "hpp" | "hh" => "C++",
        "swift" => "Swift",
        "scala" => "Scala",
        "ex" | "exs" => "Elixir",
        "dart" => "Dart",
        "lua" => "Lua",
        "zig" => "Zig",
        "vue" => "Vue",
        "svelte" => "Svelte",
        _ => return None,
    })
}

fn framework_of_file(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    Some(match stem {
        "next" if name.starts_with("next.config") => "Next.js",
        "vite" if name.starts_with("vite.config") => "Vite",
        "nuxt" if name.starts_with("nuxt.config") => "Nuxt",
        "svelte" if name.starts_with("svelte.config") => "SvelteKit",
        "astro" if name.starts_with("astro.config") => "Astro",
        "tailwind" if name.starts_with("tailwind.config") => "Tailwind CSS",
        "angular" if name == "angular.json" => "Angular",
        "manage" if name == "manage.py" => "Django",
        "tauri" if name.starts_with("tauri.conf") => "Tauri",
        _ => return None,
    })
}

fn framework_of_command(words: &[&str]) -> Option<&'static str> {
    let joined = words.join(" ");
    let has = |w: &str| words.contains(&w);
    if has("next") && (joined.contains("next dev") || joined.contains("next build")) {
        return Some("Next.js");
    }
    if has("uvicorn") || has("fastapi") {
        return Some("FastAPI");
    }
    if has("flask") {
        return Some("Flask");
    }
    if has("django-admin") || (has("manage.py") && !has("cat")) {
        return Some("Django");
    }
    if has("rails") {
        return Some("Rails");
    }
    None
}

/// Counts keyed by name, remembering first appearance for stable ties.
#[derive(Default)]
struct Tally {
    counts: BTreeMap<String, (usize, usize)>,
    next: usize,
}

impl Tally {
    fn add(&mut self, key: &str) {
        let order = self.next;
        let entry = self.counts.entry(key.to_owned()).or_insert((0, order));
        if entry.0 == 0 {
            self.next += 1;
        }
        entry.0 += 1;
    }

    /// Keys by count (descending), then first appearance.
    fn ranked(&self) -> Vec<(&str, usize)> {
        let mut v: Vec<(&str, usize, usize)> = self
            .counts
            .iter()
            .map(|(k, (n, o))| (k.as_str(), *n, *o))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        v.into_iter().map(|(k, n, _)| (k, n)).collect()
    }
}

fn project_facts(messages: &[Message]) -> Vec<String> {
    let mut managers = Tally::default();
    let mut tests = Tally::default();
    let mut frameworks = Tally::default();
    let mut files: Vec<String> = Vec::new();
    for message in messages {
        for block in &message.content {
            let ContentBlock::ToolUse { name, input, .. } = block else {
                continue;
            };
            if let Some((path, _)) = touched_file(name, input)
                && !files.contains(&path)
            {
                files.push(path);
            }
            if classify_tool(name) != ToolKind::Command {
                continue;
            }
            let Some(command) = command_of(input) else {
                continue;
            };
            for words in segments(&command) {
                if let Some(pm) = package_manager(&words) {
                    managers.add(pm);
                }
                if is_test_command(&words) {
                    tests.add(&command_stem(&words));
                }
                if let Some(fw) = framework_of_command(&words) {
                    frameworks.add(fw);
                }
            }
        }
    }
    let mut languages = Tally::default();
    for path in &files {
        if let Some(lang) = language_of(path) {
            languages.add(lang);
        }
        if let Some(fw) = framework_of_file(path) {
            frameworks.add(fw);
        }
    }

    let mut facts = Vec::new();
    let pms: Vec<&str> = managers.ranked().into_iter().map(|(k, _)| k).collect();
    match pms.as_slice() {
        [] => {}
        [one] => facts.push(format!("Package manager: {one}")),
        many => facts.push(format!("Package managers: {}", many.join(", "))),
    }
    if let Some((test, _)) = tests.ranked().first() {
        facts.push(format!("Test command: `{test}`"));
    }
    let langs: Vec<String> = languages
        .ranked()
        .into_iter()
        .map(|(k, n)| format!("{k} ({n} file{})", if n == 1 { "" } else { "s" }))
        .collect();
    if !langs.is_empty() {
        facts.push(format!("Languages: {}", langs.join(", ")));
    }
    let fws: Vec<&str> = frameworks.ranked().into_iter().map(|(k, _)| k).collect();
    if !fws.is_empty() {
        facts.push(format!("Framework: {}", fws.join(", ")));
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::{ContentBlock, Message, Role};
    use serde_json::json;

    fn check(messages: Vec<Message>, current: &str, expected: &str) {
        assert_eq!(extract(&messages, current).to_markdown(), expected);
    }

    #[test]
    fn preferences_and_corrections_in_english() {
        check(
            vec![
                Message::user("Always use snake_case for variables. Can you always do that?"),
                Message::assistant("Sure, I always do."),
                Message::user("No, use pnpm instead of npm. Thanks"),
                Message::user("don't add comments to obvious code"),
                Message::user("Remember that commit messages are in English."),
            ],
            "",
            "### 用户偏好\n- Always use snake_case for variables.\n- Remember that commit messages are in English.\n\n### 纠正反馈\n- No, use pnpm instead of npm.\n- don't add comments to obvious code\n",
        );
    }

    #[test]
    fn cue_words_in_chinese() {
        check(
            vec![Message::user(
                "以后提交信息用英文。不对，项目是 Python 而不是 Go。你好",
            )],
            "",
            "### 用户偏好\n- 以后提交信息用英文。\n\n### 纠正反馈\n- 不对，项目是 Python 而不是 Go。\n",
        );
    }

    #[test]
    fn skips_known_entries_and_secrets() {
        check(
            vec![Message::user(
                "Always use uv. Always export API_KEY=sk-abcdefghijklmnopqrstu before running.",
            )],
            "### 用户偏好\n- always use uv.\n",
            "",
        );
    }

    #[test]
    fn project_facts_from_tool_calls_and_references() {
        let messages = vec![
            Message::user(
                "Docs are at https://docs.example.com/guide. Server on http://localhost:3000",
            ),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::tool_use(
                        "1",
                        "Bash",
                        json!({"command": "cd app && pnpm install"}),
                    ),
                    ContentBlock::tool_use(
                        "2",
                        "Bash",
                        json!({"command": "CI=1 pnpm test -- --run"}),
                    ),
                    ContentBlock::tool_use("3", "Bash", json!({"command": "pnpm test"})),
                    ContentBlock::tool_use("4", "Edit", json!({"file_path": "app/src/page.tsx"})),
                    ContentBlock::tool_use("5", "Read", json!({"file_path": "app/next.config.js"})),
                    ContentBlock::tool_use("6", "Read", json!({"file_path": "app/src/util.ts"})),
                    ContentBlock::tool_use(
                        "7",
                        "WebFetch",
                        json!({"url": "https://nextjs.org/docs"}),
                    ),
                ],
            ),
        ];
        check(
            messages,
            "",
            "### 项目知识\n- Package manager: pnpm\n- Test command: `pnpm test`\n- Languages: TypeScript (2 files), JavaScript (1 file)\n- Framework: Next.js\n\n### 参考资料\n- https://docs.example.com/guide\n- https://nextjs.org/docs\n",
        );
    }

    #[test]
    fn rejected_tool_feedback_is_a_correction() {
        let messages = vec![Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "1",
                "The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nuse the existing helper rather than a new one",
                true,
            )],
        )];
        check(
            messages,
            "",
            "### 纠正反馈\n- use the existing helper rather than a new one\n",
        );
    }

    #[test]
    fn rejected_tool_feedback_after_text_whose_lowercase_is_longer() {
        // "İ" is 2 bytes, its lowercase 3: a position found in the lowercased text is not one in
        // the original.
        let rejection = |text: &str| {
            vec![Message::new(
                Role::User,
                vec![ContentBlock::tool_result("1", text, true)],
            )]
        };
        // The reviewer's input: no cue word in the feedback, so nothing is extracted (it panicked).
        check(rejection("İİ the user said: 日本語を使って"), "", "");
        check(
            rejection("İİ the user said: don't translate 日本語 here"),
            "",
            "### 纠正反馈\n- don't translate 日本語 here\n",
        );
        check(
            rejection("İİİİİİ THE USER SAID: stop adding comments"),
            "",
            "### 纠正反馈\n- stop adding comments\n",
        );
    }
}
