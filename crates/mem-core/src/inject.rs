//! The long-term-memory `<system-reminder>` of MewCode seed §6.

use chrono::NaiveDate;
use serde_json::Value;

use crate::message::Message;

/// Metadata key that marks the message carrying the injected block, so that re-injection can
/// replace it instead of stacking a second copy. Its value is `"long_term_memory"`.
pub const LONG_TERM_MEMORY_MARKER: &str = "mewmem_injected";

const MARKER_VALUE: &str = "long_term_memory";

const OPENING: &str =
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n";
const CLOSING: &str = "\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>";

/// Renders the block of seed §6 for the given instructions, memories and date.
///
/// Sections, in order, separated by one blank line: `# mewcodeMd` + instructions,
/// `# autoMemory` + memories, `# currentDate` + `Today's date is YYYY-MM-DD.`. A section whose
/// text is empty or only whitespace is omitted (the date is always present). Trailing whitespace
/// of each text is dropped so sections stay one blank line apart whatever the file ended with.
/// The body is wrapped in `<system-reminder>` with the seed's two fixed sentences. Seed §6 shows
/// the block twice and the two disagree: its Python joins the body and `IMPORTANT` with one
/// newline and omits the closing tag, while the block it presents as "what is injected" has a
/// blank line before `IMPORTANT` and ends with `</system-reminder>`. We follow the presented block
/// (it is also what Claude Code sends):
///
/// ```text
/// <system-reminder>
/// As you answer the user's questions, you can use the following context:
/// # mewcodeMd
/// ...instructions...
///
/// # autoMemory
/// ...memories...
///
/// # currentDate
/// Today's date is 2026-06-18.
///
///       IMPORTANT: this context may or may not be relevant to your tasks.
/// </system-reminder>
/// ```
///
/// Control characters and escape sequences in the instructions and memories (a hand-edited
/// file, an old entry) are stripped ([`crate::secrets::strip_controls`]): the block goes to an
/// agent and to `mem context`'s stdout, never with raw ESC, BEL, OSC or bidi controls.
pub fn render_long_term_memory(instructions: &str, memories: &str, date: NaiveDate) -> String {
    let instructions = &*crate::secrets::strip_controls(instructions);
    let memories = &*crate::secrets::strip_controls(memories);
    let mut sections: Vec<String> = Vec::with_capacity(3);
    if !instructions.trim().is_empty() {
        sections.push(format!("# mewcodeMd\n{}", instructions.trim_end()));
    }
    if !memories.trim().is_empty() {
        sections.push(format!("# autoMemory\n{}", memories.trim_end()));
    }
    sections.push(format!(
        "# currentDate\nToday's date is {}.",
        date.format("%Y-%m-%d")
    ));
    format!("{OPENING}{}{CLOSING}", sections.join("\n\n"))
}

/// The body of one `<system-reminder>` … `</system-reminder>` block (the tags and the newline
/// inside each removed), for a client that frames a hook's added context itself: Claude Code
/// shows `additionalContext` to the model as `SessionStart hook additional context: …` and
/// escapes a `<` that opens a tag there (`&lt;system-reminder>`), so mewmem's hooks send the
/// bare sections. A text that is not exactly one such block is returned unchanged. The
/// library's block (seed §6, [`render_long_term_memory`]) stays byte-exact for agents that
/// embed mewmem.
pub fn unwrap_system_reminder(block: &str) -> &str {
    let inner = block
        .strip_prefix("<system-reminder>")
        .and_then(|b| b.strip_suffix("</system-reminder>"));
    match inner {
        Some(body)
            if !body.contains("<system-reminder>") && !body.contains("</system-reminder>") =>
        {
            let body = body.strip_prefix('\n').unwrap_or(body);
            body.strip_suffix('\n').unwrap_or(body)
        }
        _ => block,
    }
}

/// `true` when `message` is a block made by [`crate::Conversation::inject_long_term_memory`].
pub fn is_long_term_memory(message: &Message) -> bool {
    message
        .metadata
        .get(LONG_TERM_MEMORY_MARKER)
        .and_then(Value::as_str)
        == Some(MARKER_VALUE)
}

/// The user message that carries a rendered block, marked for replacement.
pub(crate) fn long_term_memory_message(text: String) -> Message {
    Message::user(text).with_metadata(
        LONG_TERM_MEMORY_MARKER,
        Value::String(MARKER_VALUE.to_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 6, 18).unwrap()
    }

    #[test]
    fn all_sections() {
        let got = render_long_term_memory("Use uv.\n", "### 用户偏好\n- snake_case\n", date());
        let want = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# mewcodeMd\nUse uv.\n\n# autoMemory\n### 用户偏好\n- snake_case\n\n# currentDate\nToday's date is 2026-06-18.\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>";
        assert_eq!(got, want);
    }

    /// Issue 27 item 14: a memory file holding escape sequences is not passed on raw.
    #[test]
    fn control_characters_are_not_passed_on() {
        let got = render_long_term_memory(
            "Use uv.\u{1b}]0;pwned\u{7}\n",
            "- snake\u{1b}[2J_case\u{202E}\u{7}\n",
            date(),
        );
        assert!(got.contains("Use uv.\n"), "{got:?}");
        assert!(got.contains("- snake_case\n"), "{got:?}");
        assert!(
            !got.contains(|c: char| c != '\n' && crate::terminal::is_unsafe_char(c)),
            "{got:?}"
        );
    }

    #[test]
    fn empty_sections_are_omitted() {
        let got = render_long_term_memory("", "  \n", date());
        assert_eq!(
            got,
            "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# currentDate\nToday's date is 2026-06-18.\n\n      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>"
        );
        let got = render_long_term_memory("", "- m", date());
        assert!(
            got.contains("context:\n# autoMemory\n- m\n\n# currentDate"),
            "{got}"
        );
        assert!(!got.contains("mewcodeMd"));
    }
}

#[cfg(test)]
mod unwrap_tests {
    use super::*;

    #[test]
    fn one_block_loses_its_tags_and_anything_else_stays() {
        let date = NaiveDate::from_ymd_opt(2026, 12, 3).unwrap();
        let block = render_long_term_memory("- rule", "- memory", date);
        let bare = unwrap_system_reminder(&block);
        assert!(
            bare.starts_with("As you answer the user's questions"),
            "{bare}"
        );
        assert!(bare.ends_with("relevant to your tasks."), "{bare}");
        assert!(!bare.contains("system-reminder"));
        assert_eq!(
            format!("<system-reminder>\n{bare}\n</system-reminder>"),
            block
        );
        for other in [
            "plain text",
            "<system-reminder>a</system-reminder>\n<system-reminder>b</system-reminder>",
            "<system-reminder>unclosed",
            "",
        ] {
            assert_eq!(unwrap_system_reminder(other), other);
        }
    }
}
