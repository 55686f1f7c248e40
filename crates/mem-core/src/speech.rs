//! What the user said, as opposed to what a client injected into a user turn.
//!
//! Claude Code and Codex CLI both write text into `user` messages that the person never typed:
//! Codex sends the project's AGENTS.md (`# AGENTS.md instructions for …` with `<INSTRUCTIONS>`),
//! its `<environment_context>` and, after a compaction, the summary behind a fixed prefix; Claude
//! Code adds `<system-reminder>` blocks, slash-command wrappers (`<command-name>` …), the output
//! of local commands (`<local-command-stdout>`), its caveat before them, hook output
//! (`<user-prompt-submit-hook>`), IDE context (`<ide_opened_file>`) and compaction summaries
//! ("This session is being continued from a previous conversation …"). mewmem's own start
//! context (seed §6's `<system-reminder>` block) arrives the same way.
//!
//! The importers keep all of it in the session record, byte for byte, and mark a user message
//! that holds nothing the user said with [`INJECTED_CONTEXT`]; everything that must read the
//! user's words only (extraction, recall queries, titles, "did the user say anything this turn")
//! asks [`user_speech_of`]. `docs/formats/import.md` lists every marker below.
//!
//! The rules are by marker, never by content:
//! - a text block that *starts* with one of the [`PREFIX_MARKERS`] is injected as a whole;
//! - an element `<tag>…</tag>` of one of the [`ELEMENT_MARKERS`] is injected when its opening tag
//!   starts the block or a line (a tag named in the middle of a sentence is the user talking
//!   about it); an element that is never closed runs to the end of the block;
//! - a block that is one element of any snake_case or kebab-case tag, from its first character
//!   to its last (`<recommended_plugins>…</recommended_plugins>`), is injected too: clients keep
//!   adding such wrappers, and a person rarely types a whole message as one XML element;
//! - the argument of a slash command (`<command-args>`) is what the user typed after the
//!   command, so it stays user speech.

use serde_json::Value;

use crate::{ContentBlock, LONG_TERM_MEMORY_MARKER, Message, Role, metadata_keys};

/// Metadata key of a user message that holds client-injected context and nothing the user said;
/// the value is the [`InjectedKind::name`] of its first injected block (a JSON string).
pub const INJECTED_CONTEXT: &str = "injected_context";

/// Metadata key of a user message in which some text blocks are client-injected and others are
/// the user's: a JSON array of `[block index, kind name]` pairs, in block order.
pub const INJECTED_BLOCKS: &str = "injected_blocks";

/// What kind of client-injected context a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InjectedKind {
    /// Codex's AGENTS.md (`# AGENTS.md instructions for …`, `<INSTRUCTIONS>`) or the older
    /// `<user_instructions>`.
    AgentsMd,
    /// Codex's `<environment_context>` (cwd, sandbox, shell).
    EnvironmentContext,
    /// `<system-reminder>`: Claude Code's reminders, and mewmem's own seed §6 block.
    SystemReminder,
    /// A slash-command wrapper (`<command-name>`, `<command-message>`).
    SlashCommand,
    /// Output of a local command or of bash mode (`<local-command-stdout>`, `<bash-stdout>` …).
    CommandOutput,
    /// Claude Code's caveat before local-command output (`<local-command-caveat>`, `Caveat: …`).
    CommandCaveat,
    /// A command the user ran in bash mode or Codex's `!` (`<bash-input>`,
    /// `<user_shell_command>`): a command, not a statement.
    ShellCommand,
    /// Output of a hook (`<user-prompt-submit-hook>`).
    HookOutput,
    /// IDE context (`<ide_opened_file>`, `<ide_selection>`, `<ide_diagnostics>`).
    IdeContext,
    /// A compaction summary (Claude Code's "This session is being continued …", Codex's
    /// "Another language model started to solve this problem …").
    CompactSummary,
    /// An interruption note (`[Request interrupted by user]`, `<turn_aborted>`).
    Interruption,
    /// A background task's notice (`<task-notification>`).
    TaskNotification,
    /// A whole block that is one XML-like element of a tag not listed above.
    TaggedBlock,
}

impl InjectedKind {
    /// The snake_case name written as the value of [`INJECTED_CONTEXT`].
    pub fn name(self) -> &'static str {
        match self {
            InjectedKind::AgentsMd => "agents_md",
            InjectedKind::EnvironmentContext => "environment_context",
            InjectedKind::SystemReminder => "system_reminder",
            InjectedKind::SlashCommand => "slash_command",
            InjectedKind::CommandOutput => "command_output",
            InjectedKind::CommandCaveat => "command_caveat",
            InjectedKind::ShellCommand => "shell_command",
            InjectedKind::HookOutput => "hook_output",
            InjectedKind::IdeContext => "ide_context",
            InjectedKind::CompactSummary => "compact_summary",
            InjectedKind::Interruption => "interruption",
            InjectedKind::TaskNotification => "task_notification",
            InjectedKind::TaggedBlock => "tagged_block",
        }
    }
}

/// Text a block starts with (after leading whitespace) when the whole block is injected.
pub const PREFIX_MARKERS: &[(&str, InjectedKind)] = &[
    ("# AGENTS.md instructions for ", InjectedKind::AgentsMd),
    (
        "Caveat: The messages below were generated by the user while running local commands",
        InjectedKind::CommandCaveat,
    ),
    (
        "This session is being continued from a previous conversation",
        InjectedKind::CompactSummary,
    ),
    (
        "Another language model started to solve this problem",
        InjectedKind::CompactSummary,
    ),
    ("[Request interrupted by user", InjectedKind::Interruption),
    // mewmem's own start context as its hooks send it (the bare sections, without the
    // `<system-reminder>` tags: see `mem_core::unwrap_system_reminder`).
    (
        "As you answer the user's questions, you can use the following context:\n# ",
        InjectedKind::SystemReminder,
    ),
];

/// Elements whose whole content is injected (tag names are matched exactly, case included).
pub const ELEMENT_MARKERS: &[(&str, InjectedKind)] = &[
    ("system-reminder", InjectedKind::SystemReminder),
    ("INSTRUCTIONS", InjectedKind::AgentsMd),
    ("user_instructions", InjectedKind::AgentsMd),
    ("environment_context", InjectedKind::EnvironmentContext),
    ("command-name", InjectedKind::SlashCommand),
    ("command-message", InjectedKind::SlashCommand),
    ("local-command-stdout", InjectedKind::CommandOutput),
    ("local-command-stderr", InjectedKind::CommandOutput),
    ("bash-stdout", InjectedKind::CommandOutput),
    ("bash-stderr", InjectedKind::CommandOutput),
    ("local-command-caveat", InjectedKind::CommandCaveat),
    ("bash-input", InjectedKind::ShellCommand),
    ("user_shell_command", InjectedKind::ShellCommand),
    ("user-prompt-submit-hook", InjectedKind::HookOutput),
    ("ide_opened_file", InjectedKind::IdeContext),
    ("ide_selection", InjectedKind::IdeContext),
    ("ide_diagnostics", InjectedKind::IdeContext),
    ("turn_aborted", InjectedKind::Interruption),
    ("task-notification", InjectedKind::TaskNotification),
];

/// The slash-command element whose content is what the user typed after the command.
const COMMAND_ARGS: &str = "command-args";

/// One text block split into what the user said and what was injected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Speech {
    /// The user's words, injected parts removed, trimmed; empty when there are none.
    pub said: String,
    /// The kinds of the injected parts found, in order of appearance (repeats kept).
    pub injected: Vec<InjectedKind>,
}

/// Splits one text block into the user's words and the injected parts (rules in the module
/// docs). Never fails; a block with no marker is all speech.
pub fn user_speech(text: &str) -> Speech {
    let start = text.trim_start();
    if let Some(kind) = PREFIX_MARKERS
        .iter()
        .find(|(prefix, _)| start.starts_with(prefix))
        .map(|(_, kind)| *kind)
    {
        return Speech {
            said: String::new(),
            injected: vec![kind],
        };
    }
    let trimmed = start.trim_end();
    if let Some(tag) = whole_element(trimmed)
        && !ELEMENT_MARKERS.iter().any(|(t, _)| *t == tag)
        && tag != COMMAND_ARGS
    {
        return Speech {
            said: String::new(),
            injected: vec![InjectedKind::TaggedBlock],
        };
    }
    let mut said = String::with_capacity(text.len());
    let mut injected = Vec::new();
    let mut rest = text;
    while let Some((at, tag, kind)) = next_element(rest) {
        said.push_str(&rest[..at]);
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let body_start = at + open.len();
        let (body, after) = match rest[body_start..].find(&close) {
            Some(rel) => (
                &rest[body_start..body_start + rel],
                body_start + rel + close.len(),
            ),
            None => (&rest[body_start..], rest.len()),
        };
        match kind {
            Some(kind) => {
                injected.push(kind);
                said.push('\n');
            }
            // `<command-args>`: the words after a slash command are the user's.
            None => {
                said.push_str(body);
                said.push('\n');
            }
        }
        rest = &rest[after..];
    }
    said.push_str(rest);
    Speech {
        said: said.trim().to_owned(),
        injected,
    }
}

/// The first marked element of `text` whose opening tag starts the text or a line: its byte
/// offset, tag name and kind (`None` for `<command-args>`).
fn next_element(text: &str) -> Option<(usize, &'static str, Option<InjectedKind>)> {
    let mut best: Option<(usize, &'static str, Option<InjectedKind>)> = None;
    let candidates = ELEMENT_MARKERS
        .iter()
        .map(|(tag, kind)| (*tag, Some(*kind)))
        .chain(std::iter::once((COMMAND_ARGS, None)));
    for (tag, kind) in candidates {
        let open = format!("<{tag}>");
        let mut from = 0;
        while let Some(rel) = text[from..].find(&open) {
            let at = from + rel;
            if starts_line(text, at) {
                if best.is_none_or(|(b, _, _)| at < b) {
                    best = Some((at, tag, kind));
                }
                break;
            }
            from = at + open.len();
        }
    }
    best
}

/// `true` when only spaces or tabs stand between the previous line break (or the start) and
/// `at`, or when the text before `at` ends an element (`</x>`), as Claude Code glues its
/// wrappers together.
fn starts_line(text: &str, at: usize) -> bool {
    let before = &text[..at];
    let line = before.rsplit('\n').next().unwrap_or(before);
    line.chars().all(|c| c == ' ' || c == '\t') || before.trim_end().ends_with('>')
}

/// The tag name when `text` is exactly one element `<tag>…</tag>` of a snake_case,
/// kebab-case or upper-case tag name (1–40 characters).
fn whole_element(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('<')?;
    let end = inner.find('>')?;
    let tag = &inner[..end];
    let ok = !tag.is_empty()
        && tag.len() <= 40
        && tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (ok && text.ends_with(&format!("</{tag}>"))).then_some(tag)
}

/// `true` when the message carries `key` as JSON `true` (or, for the seed §6 marker, any value).
fn flagged(message: &Message, key: &str) -> bool {
    match message.metadata.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Null) | None => false,
        Some(_) => true,
    }
}

/// `true` for a message that the harness or mewmem wrote in the user's name as a whole: Claude
/// Code's `isMeta` lines, compaction summaries, mewmem's seed §6 block and messages the
/// importers marked with [`INJECTED_CONTEXT`].
pub fn is_injected_message(message: &Message) -> bool {
    message.role == Role::User
        && (flagged(message, metadata_keys::IS_META)
            || flagged(message, metadata_keys::COMPACT_SUMMARY)
            || flagged(message, LONG_TERM_MEMORY_MARKER)
            || flagged(message, INJECTED_CONTEXT))
}

/// What the user said in `message`: the text blocks of a user message with every injected part
/// removed, joined by `\n`; `None` for other roles, tool results, messages that are injected as a
/// whole ([`is_injected_message`]) and messages with no words of the user's left.
pub fn user_speech_of(message: &Message) -> Option<String> {
    if message.role != Role::User || is_injected_message(message) {
        return None;
    }
    let parts: Vec<String> = message
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|t| user_speech(t).said)
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// For a user message that holds injected context and no words of the user's, the kind of its
/// first injected block (what an importer writes under [`INJECTED_CONTEXT`]); `None` when the
/// user said something, or when there is no text at all (tool results, images).
pub fn injected_kind_of(message: &Message) -> Option<InjectedKind> {
    if message.role != Role::User {
        return None;
    }
    let mut first = None;
    for text in message.content.iter().filter_map(ContentBlock::as_text) {
        let s = user_speech(text);
        if !s.said.is_empty() {
            return None;
        }
        if first.is_none() {
            first = s.injected.first().copied();
        }
    }
    first
}

/// The text blocks of a user message that are injected as a whole: `(block index, kind)` in
/// block order (blocks that mix the user's words with injected parts are not listed).
pub fn injected_blocks_of(message: &Message) -> Vec<(usize, InjectedKind)> {
    if message.role != Role::User {
        return Vec::new();
    }
    message
        .content
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let s = user_speech(b.as_text()?);
            let kind = s.injected.first().copied()?;
            s.said.is_empty().then_some((i, kind))
        })
        .collect()
}

/// Marks a user message as an importer keeps it: [`INJECTED_CONTEXT`] when it holds injected
/// context and nothing the user said, else [`INJECTED_BLOCKS`] when some of its text blocks are
/// injected; the content is not touched. Returns `true` when a mark was added.
pub fn mark_injected(message: &mut Message) -> bool {
    if let Some(kind) = injected_kind_of(message) {
        message
            .metadata
            .insert(INJECTED_CONTEXT.to_owned(), Value::from(kind.name()));
        return true;
    }
    let blocks = injected_blocks_of(message);
    if blocks.is_empty() {
        return false;
    }
    let pairs = blocks
        .into_iter()
        .map(|(i, k)| Value::Array(vec![Value::from(i), Value::from(k.name())]))
        .collect();
    message
        .metadata
        .insert(INJECTED_BLOCKS.to_owned(), Value::Array(pairs));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> String {
        user_speech(text).said
    }

    fn kinds(text: &str) -> Vec<&'static str> {
        user_speech(text)
            .injected
            .iter()
            .map(|k| k.name())
            .collect()
    }

    #[test]
    fn codex_agents_md_and_environment_are_not_speech() {
        let agents = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nNever commit directly to the main branch.\n</INSTRUCTIONS>";
        assert_eq!(said(agents), "");
        assert_eq!(kinds(agents), ["agents_md"]);
        let env = "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>zsh</shell>\n</environment_context>";
        assert_eq!(said(env), "");
        assert_eq!(kinds(env), ["environment_context"]);
        // Both glued into one block, as some Codex versions send them.
        let both = "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>x</INSTRUCTIONS>\n\n<environment_context>cwd=/r</environment_context>";
        assert_eq!(said(both), "");
        assert_eq!(
            said("<user_instructions>\nUse pnpm.\n</user_instructions>"),
            ""
        );
    }

    #[test]
    fn claude_wrappers_are_removed_and_the_rest_kept() {
        assert_eq!(
            said(
                "<system-reminder>\nThe user opened a file.\n</system-reminder>\nplease fix the parser"
            ),
            "please fix the parser"
        );
        assert_eq!(
            said("fix it\n<system-reminder>Todo list is empty</system-reminder>"),
            "fix it"
        );
        assert_eq!(
            said(
                "<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>the parser, not the lexer</command-args>"
            ),
            "the parser, not the lexer"
        );
        assert_eq!(
            kinds(
                "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"
            ),
            ["slash_command", "slash_command"]
        );
        assert_eq!(
            said("<local-command-stdout>Set model to opus</local-command-stdout>"),
            ""
        );
        assert_eq!(
            said(
                "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond.</local-command-caveat>"
            ),
            ""
        );
        assert_eq!(
            said(
                "Caveat: The messages below were generated by the user while running local commands."
            ),
            ""
        );
        assert_eq!(
            said(
                "<bash-input>git status</bash-input><bash-stdout>clean</bash-stdout><bash-stderr></bash-stderr>"
            ),
            ""
        );
        assert_eq!(
            said(
                "<ide_opened_file>The user opened src/a.rs in the IDE.</ide_opened_file>\nwhy is this slow?"
            ),
            "why is this slow?"
        );
        assert_eq!(
            said(
                "This session is being continued from a previous conversation that ran out of context."
            ),
            ""
        );
        assert_eq!(said("[Request interrupted by user for tool use]"), "");
        assert_eq!(
            said("<user-prompt-submit-hook>ok</user-prompt-submit-hook>"),
            ""
        );
    }

    #[test]
    fn mewmem_own_block_is_not_speech() {
        let block = crate::render_long_term_memory(
            "Use pnpm.",
            "- Prefer uv over pip.",
            chrono::NaiveDate::from_ymd_opt(2026, 1, 2).expect("a date"),
        );
        assert_eq!(said(&block), "");
        assert_eq!(kinds(&block), ["system_reminder"]);
    }

    #[test]
    fn markers_inside_a_sentence_stay_speech() {
        let text = "why does the <system-reminder> tag show up escaped?";
        assert_eq!(said(text), text);
        let text = "the AGENTS.md instructions for this repo say to use pnpm";
        assert_eq!(said(text), text);
        assert_eq!(
            said("use <b>bold</b> in the docs"),
            "use <b>bold</b> in the docs"
        );
    }

    #[test]
    fn unknown_whole_elements_are_injected_and_unclosed_ones_run_to_the_end() {
        assert_eq!(
            kinds("<recommended_plugins>\nHere is a list…\n</recommended_plugins>"),
            ["tagged_block"]
        );
        assert_eq!(
            said("ship it\n<system-reminder>never closed\nstill hidden"),
            "ship it"
        );
        // A block that merely starts with a tag is not one element.
        assert_eq!(said("<b>bold</b> is fine"), "<b>bold</b> is fine");
    }

    #[test]
    fn messages_are_judged_by_flags_and_blocks() {
        let m = Message::new(
            Role::User,
            vec![
                ContentBlock::text(
                    "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>x</INSTRUCTIONS>",
                ),
                ContentBlock::text("<environment_context>cwd</environment_context>"),
            ],
        );
        assert_eq!(user_speech_of(&m), None);
        assert_eq!(injected_kind_of(&m), Some(InjectedKind::AgentsMd));
        let m = Message::new(
            Role::User,
            vec![
                ContentBlock::text("<environment_context>cwd</environment_context>"),
                ContentBlock::text("From now on use uv."),
            ],
        );
        assert_eq!(user_speech_of(&m).as_deref(), Some("From now on use uv."));
        assert_eq!(injected_kind_of(&m), None);
        assert_eq!(
            injected_blocks_of(&m),
            vec![(0, InjectedKind::EnvironmentContext)]
        );
        let mut marked = m.clone();
        assert!(mark_injected(&mut marked));
        assert_eq!(
            marked.metadata.get(INJECTED_BLOCKS),
            Some(&serde_json::json!([[0, "environment_context"]]))
        );
        assert_eq!(marked.content, m.content, "the content is kept as written");
        let mut plain = Message::user("ship it");
        assert!(!mark_injected(&mut plain));
        assert!(plain.metadata.is_empty());
        let meta = Message::user("Base directory for this skill: /x")
            .with_metadata(metadata_keys::IS_META, Value::Bool(true));
        assert_eq!(user_speech_of(&meta), None);
        let marked =
            Message::user("anything").with_metadata(INJECTED_CONTEXT, Value::from("agents_md"));
        assert_eq!(user_speech_of(&marked), None);
        assert_eq!(user_speech_of(&Message::assistant("hi")), None);
        let tool = Message::new(
            Role::User,
            vec![ContentBlock::tool_result("1", "out", false)],
        );
        assert_eq!(user_speech_of(&tool), None);
        assert_eq!(injected_kind_of(&tool), None);
    }
}
