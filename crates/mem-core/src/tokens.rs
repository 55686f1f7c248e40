//! Token counting with a real byte-pair encoding.
//!
//! Backed by `bpe-openai` rather than the `tiktoken-rs` the design names: identical counts, about
//! twice as fast, and no failure mode on pathological input (tiktoken-rs panics on ~1 MiB of
//! contiguous whitespace, which a tool result can easily contain). Counting is linear in the
//! input length. The dictionaries are built lazily on first use (~75 ms).

use std::fmt;
use std::str::FromStr;

use crate::message::{ContentBlock, Message, ToolResultContent};

/// Tokens charged for one image block, whose real cost depends on its pixel size, which we do not
/// decode: the Anthropic cost of a ~1.15 megapixel image (`width * height / 750`).
pub const IMAGE_TOKENS: usize = 1_600;

/// Tokens charged per message for the role and framing around its content.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// A BPE vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o and later), the default.
    #[default]
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        })
    }
}

impl FromStr for Encoding {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "o200k_base" | "o200k" => Ok(Encoding::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Encoding::Cl100kBase),
            other => Err(format!(
                "unknown encoding `{other}` (expected o200k_base or cl100k_base)"
            )),
        }
    }
}

static VOCABULARY_USED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process has used a BPE vocabulary yet (its first use costs ~75 ms): lets a test
/// prove that a path meant to be cheap (the SessionStart hook) never counts tokens.
pub fn vocabulary_used() -> bool {
    VOCABULARY_USED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Counts tokens of text and messages. Cheap to copy; the vocabulary is shared and static.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenCounter {
    encoding: Encoding,
}

impl TokenCounter {
    /// A counter for the given encoding.
    pub fn new(encoding: Encoding) -> Self {
        TokenCounter { encoding }
    }

    /// The encoding in use.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    fn tokenizer(&self) -> &'static bpe_openai::Tokenizer {
        VOCABULARY_USED.store(true, std::sync::atomic::Ordering::Relaxed);
        match self.encoding {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }

    /// Number of tokens in `text`. Linear time, never panics.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.tokenizer().count(text)
    }

    /// Tokens of one block: its text, a tool call's name and JSON input, a tool result's content,
    /// reasoning text; [`IMAGE_TOKENS`] per image; an unknown block's JSON.
    pub fn count_block(&self, block: &ContentBlock) -> usize {
        match block {
            ContentBlock::Text { text, .. } => self.count(text),
            ContentBlock::ToolUse { name, input, .. } => {
                self.count(name) + self.count(&input.to_string())
            }
            ContentBlock::ToolResult { content, .. } => match content {
                ToolResultContent::Text(s) => self.count(s),
                ToolResultContent::Blocks(blocks) => {
                    blocks.iter().map(|b| self.count_block(b)).sum()
                }
                ToolResultContent::Absent => 0,
            },
            ContentBlock::Image { .. } => IMAGE_TOKENS,
            ContentBlock::Thinking { thinking, .. } => self.count(thinking),
            ContentBlock::Other(v) => {
                if v.get("type").and_then(|t| t.as_str()) == Some("image") {
                    IMAGE_TOKENS
                } else {
                    self.count(&v.to_string())
                }
            }
        }
    }

    /// Tokens of a message: [`MESSAGE_OVERHEAD_TOKENS`] plus its blocks. Metadata is not counted
    /// (it is never sent to a model).
    pub fn count_message(&self, message: &Message) -> usize {
        MESSAGE_OVERHEAD_TOKENS
            + message
                .content
                .iter()
                .map(|b| self.count_block(b))
                .sum::<usize>()
    }
}

/// An upper bound of [`TokenCounter::count_message`] for any encoding, computed without the BPE
/// vocabulary (whose first use costs ~75 ms): every token stands for at least one byte, so a
/// text has at most as many tokens as bytes. Counts bytes where `count_message` counts tokens
/// (text, tool name and JSON input, tool result, reasoning, an unknown block's JSON), plus
/// [`IMAGE_TOKENS`] per image and [`MESSAGE_OVERHEAD_TOKENS`]. Lets a caller skip counting
/// when even the bound fits its budget.
pub fn max_message_tokens(message: &Message) -> usize {
    MESSAGE_OVERHEAD_TOKENS + message.content.iter().map(max_block_tokens).sum::<usize>()
}

fn max_block_tokens(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text, .. } => text.len(),
        ContentBlock::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
        ContentBlock::ToolResult { content, .. } => match content {
            ToolResultContent::Text(s) => s.len(),
            ToolResultContent::Blocks(blocks) => blocks.iter().map(max_block_tokens).sum(),
            ToolResultContent::Absent => 0,
        },
        ContentBlock::Image { .. } => IMAGE_TOKENS,
        ContentBlock::Thinking { thinking, .. } => thinking.len(),
        ContentBlock::Other(v) => {
            if v.get("type").and_then(|t| t.as_str()) == Some("image") {
                IMAGE_TOKENS
            } else {
                v.to_string().len()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;

    #[test]
    fn counts_known_strings() {
        let c = TokenCounter::default();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello world"), 2);
        assert!(c.count("The quick brown fox jumps over the lazy dog.") >= 9);
        let cl = TokenCounter::new(Encoding::Cl100kBase);
        assert_eq!(cl.count("hello world"), 2);
    }

    #[test]
    fn the_byte_bound_is_never_below_the_count() {
        let texts = [
            "",
            "hello world",
            "fn main() { println!(\"{}\", 1 + 2); }",
            "参数化查询可以防止 SQL 注入",
            "emoji 🦀🦀🦀 and \u{200b} zero width",
            "    deeply\n\n\n    indented\t\ttext   ",
        ];
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let c = TokenCounter::new(encoding);
            for text in texts {
                let messages = [
                    Message::user(text),
                    Message::new(
                        Role::Assistant,
                        vec![
                            ContentBlock::text(text),
                            ContentBlock::tool_use("t1", "Bash", serde_json::json!({"cmd": text})),
                        ],
                    ),
                    Message::new(
                        Role::User,
                        vec![ContentBlock::tool_result("t1", text, false)],
                    ),
                ];
                for m in &messages {
                    let n = c.count_message(m);
                    let bound = max_message_tokens(m);
                    assert!(n <= bound, "{encoding} {text:?}: {n} > {bound}");
                }
            }
        }
        // Text-only: the bound is the bytes plus the framing.
        assert_eq!(
            max_message_tokens(&Message::user("hello world")),
            11 + MESSAGE_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn pathological_inputs_do_not_panic_and_count_sensibly() {
        let c = TokenCounter::default();
        let mib = 1 << 20;
        let spaces = " ".repeat(mib);
        let n = c.count(&spaces);
        assert!(n > 0 && n <= mib, "spaces: {n}");
        let letters = "a".repeat(mib);
        let n = c.count(&letters);
        assert!(n > 0 && n <= mib, "letters: {n}");
        // base64-like noise: deterministic pseudo-random alphabet walk.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let b64: String = (0..mib)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % 64) as usize] as char
            })
            .collect();
        let n = c.count(&b64);
        // base64 tokenises far worse than 4 bytes per token.
        assert!(n > mib / 4 && n <= mib, "base64: {n}");
    }

    #[test]
    fn message_counts_include_overhead_and_images() {
        let c = TokenCounter::default();
        let m = Message::new(
            Role::User,
            vec![
                ContentBlock::text("hello world"),
                ContentBlock::Image {
                    source: serde_json::json!({"data": "A".repeat(100_000)}),
                    extra: Default::default(),
                },
            ],
        );
        assert_eq!(
            c.count_message(&m),
            MESSAGE_OVERHEAD_TOKENS + 2 + IMAGE_TOKENS
        );
    }

    #[test]
    fn encoding_parses() {
        assert_eq!("cl100k_base".parse::<Encoding>(), Ok(Encoding::Cl100kBase));
        assert!("p50k".parse::<Encoding>().unwrap_err().contains("p50k"));
    }
}
