//! Text helpers shared by the offline jobs: cleaning harness markup, shortening, sentences.

use mem_core::Message;

/// Whether `c` is a CJK unified ideograph (U+4E00–U+9FFF), a Han character of Chinese text.
pub(crate) fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// How many Han characters ([`is_han`]) `text` holds.
pub(crate) fn han_count(text: &str) -> usize {
    text.chars().filter(|&c| is_han(c)).count()
}

/// `body` closed as a sentence: with 。 when it holds Chinese, else with a full stop.
pub(crate) fn closed(body: &str) -> String {
    if body.chars().any(is_han) {
        format!("{body}。")
    } else {
        format!("{body}.")
    }
}

/// Tags whose whole element is harness noise, not something the user wrote.
const NOISE_TAGS: &[&str] = &[
    "system-reminder",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "command-message",
    "user-prompt-submit-hook",
    "bash-stdout",
    "bash-stderr",
];

/// Removes `<tag>…</tag>` elements of [`NOISE_TAGS`], then any other remaining tag markers
/// (keeping their content, e.g. `<command-name>/init</command-name>` → `/init`).
pub(crate) fn strip_markup(text: &str) -> String {
    let mut out = text.to_owned();
    for tag in NOISE_TAGS {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            match out[start..].find(&close) {
                Some(rel) => out.replace_range(start..start + rel + close.len(), " "),
                None => out.replace_range(start.., " "),
            }
        }
    }
    // Drop remaining simple tag markers like <command-name> or </command-args>.
    let mut result = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(lt) = rest.find('<') {
        result.push_str(&rest[..lt]);
        let after = &rest[lt..];
        match after.find('>') {
            Some(gt) if is_tag_marker(&after[1..gt]) => {
                result.push(' ');
                rest = &after[gt + 1..];
            }
            _ => {
                result.push('<');
                rest = &after[1..];
            }
        }
    }
    result.push_str(rest);
    result
}

fn is_tag_marker(inner: &str) -> bool {
    let name = inner.strip_prefix('/').unwrap_or(inner);
    !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
}

/// Collapses runs of whitespace (newlines included) into single spaces and trims.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters; a cut text ends with `…` (counted in `max`).
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// The first non-empty line of `text`, trimmed.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// What the user typed in a message: its text blocks without harness markup; `None` for a
/// message that is not the user's (assistant, tool results only, meta messages, empty).
pub(crate) fn user_text(message: &Message) -> Option<String> {
    // Client-injected context (AGENTS.md, reminders, command output, summaries) is not the
    // user's; what is left may still hold markup the client wraps around typed text.
    let said = mem_core::speech::user_speech_of(message)?;
    let cleaned = strip_markup(&said);
    let trimmed = cleaned.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// URLs (`http://` or `https://`) in `text`, trailing punctuation removed, in order.
pub(crate) fn urls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find("http") {
        let candidate = &rest[pos..];
        if candidate.starts_with("https://") || candidate.starts_with("http://") {
            let end = candidate
                .find(|c: char| {
                    c.is_whitespace()
                        || matches!(
                            c,
                            '"' | '\'' | '<' | '>' | '`' | '(' | ')' | '[' | ']' | '\\' | '{' | '}'
                        )
                        || !c.is_ascii()
                })
                .unwrap_or(candidate.len());
            let url = candidate[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', '*']);
            let scheme_len = if url.starts_with("https://") { 8 } else { 7 };
            if url.len() > scheme_len + 3 && url[scheme_len..].contains('.') {
                out.push(url.to_owned());
            }
            rest = &candidate[end.max(1)..];
        } else {
            rest = &candidate[4..];
        }
    }
    out
}

/// `true` when the text holds a secret: the one secret filter, [`mem_core::secrets`].
pub(crate) fn looks_secret(text: &str) -> bool {
    mem_core::secrets::contains_secret(text)
}

/// `true` when `entry` (normalised) is already contained in `existing` (normalised): used to
/// skip memories that are already stored.
pub(crate) fn already_known(existing_normalised: &str, entry: &str) -> bool {
    let e = normalise(entry);
    !e.is_empty() && existing_normalised.contains(&e)
}

/// Lowercase, whitespace collapsed.
pub(crate) fn normalise(text: &str) -> String {
    one_line(&text.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_noise_and_keeps_command_names() {
        let text = "<command-name>/init</command-name> <command-args>now</command-args>\n<system-reminder>ignore me</system-reminder>hello";
        assert_eq!(one_line(&strip_markup(text)), "/init now hello");
        // Comparisons and generics are not tags.
        assert_eq!(strip_markup("a < b and Vec<T>"), "a < b and Vec<T>");
    }

    #[test]
    fn shortens_on_characters() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdefg", 6), "abcde…");
        assert_eq!(shorten("用中文写提交信息吧", 5), "用中文写…");
    }

    #[test]
    fn splits_sentences_in_both_scripts() {
        assert_eq!(
            super::super::facts::sentences(
                "Use pnpm. Never npm! v1.2 is fine\n以后用中文。不要用英文"
            ),
            vec![
                "Use pnpm.",
                "Never npm!",
                "v1.2 is fine",
                "以后用中文。",
                "不要用英文"
            ]
        );
    }

    #[test]
    fn finds_urls() {
        assert_eq!(
            urls("see https://docs.rs/x, and (http://a.b/c). not http:/x or https://"),
            vec!["https://docs.rs/x", "http://a.b/c"]
        );
    }

    #[test]
    fn detects_secrets() {
        assert!(looks_secret(
            "my key is sk-proj-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Yg0Uf9Id8Os7"
        ));
        assert!(looks_secret("the password is hunter2"));
        assert!(!looks_secret("always use pnpm"));
    }
}
