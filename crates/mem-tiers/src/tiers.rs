//! Rendering Tier 0 and Tier 1 within a token budget (seed 003 "Tier 0 / Tier 1").
//!
//! A tier is a list of sections (`## heading` + items); an item is one bullet (or, for a project
//! in Tier 1, a `### name` block). The text is measured with the tokenizer; while it does not
//! fit, the item of lowest value is dropped whole (each item carries its drop rank), and a
//! section left without items loses its heading. Long single items are shortened first to a
//! fixed number of characters, at a character boundary, ending in `…`.

use mem_core::TokenCounter;
use serde::Serialize;

/// The headings and labels of the tiers. [`Headings::zh`] is the seed's; [`Headings::en`] the
/// English alternative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Headings {
    /// Tier 0: `## 最近项目`.
    pub recent_projects: String,
    /// Tier 0 / Tier 2: `## 用户偏好`.
    pub user_preferences: String,
    /// Tier 0: `## 最近经验`.
    pub recent_learnings: String,
    /// Tier 1 / Tier 2: `## 项目详情`.
    pub project_details: String,
    /// Tier 1: `## 项目知识`.
    pub project_knowledge: String,
    /// Tier 1: `## 常用命令`.
    pub common_commands: String,
    /// Tier 1 / Tier 2: `## 学习记录`.
    pub learnings: String,
    /// Labels of the user preferences, in [`crate::USER_PREFERENCE_KEYS`] order.
    pub preference_labels: [String; 5],
    /// Labels of a project's details: language, framework, test command, path, notes.
    pub project_labels: [String; 5],
}

impl Headings {
    /// The seed's Chinese headings and labels (`## 最近项目`, `- 模型: deepseek`...).
    pub fn zh() -> Self {
        let s = |x: &str| x.to_owned();
        Headings {
            recent_projects: s("最近项目"),
            user_preferences: s("用户偏好"),
            recent_learnings: s("最近经验"),
            project_details: s("项目详情"),
            project_knowledge: s("项目知识"),
            common_commands: s("常用命令"),
            learnings: s("学习记录"),
            preference_labels: [s("模型"), s("工作流"), s("主题"), s("编辑器"), s("Shell")],
            project_labels: [s("语言"), s("框架"), s("测试命令"), s("路径"), s("备注")],
        }
    }

    /// English headings and labels.
    pub fn en() -> Self {
        let s = |x: &str| x.to_owned();
        Headings {
            recent_projects: s("Recent projects"),
            user_preferences: s("User preferences"),
            recent_learnings: s("Recent learnings"),
            project_details: s("Project details"),
            project_knowledge: s("Project knowledge"),
            common_commands: s("Common commands"),
            learnings: s("Learnings"),
            preference_labels: [
                s("Model"),
                s("Workflow"),
                s("Theme"),
                s("Editor"),
                s("Shell"),
            ],
            project_labels: [
                s("Language"),
                s("Framework"),
                s("Test command"),
                s("Path"),
                s("Notes"),
            ],
        }
    }

    /// The headings of a `[memory] headings` style, the same setting `memories.md` uses: the
    /// seed's ([`Headings::zh`]) or English ([`Headings::en`]).
    pub fn for_style(style: mem_auto::HeadingStyle) -> Self {
        match style {
            mem_auto::HeadingStyle::Seed => Self::zh(),
            mem_auto::HeadingStyle::English => Self::en(),
        }
    }

    /// By the name of `[memory] headings`: `seed` or `english` (also the old spellings `zh`,
    /// `chinese` and `en`; see [`mem_auto::HeadingStyle::parse`]).
    pub fn by_name(name: &str) -> Option<Self> {
        mem_auto::HeadingStyle::parse(name).map(Self::for_style)
    }
}

/// One item: its rendered text (one or more lines, no trailing newline) and its drop rank
/// (lower is dropped first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The text.
    pub text: String,
    /// Drop rank: the lowest rank still present is dropped first while over budget.
    pub rank: u32,
    /// What it is, for the report of dropped items (`L3`, `project web-app`...).
    pub label: String,
}

/// A `## heading` with its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading text (without `## `).
    pub heading: String,
    /// The items, in display order.
    pub items: Vec<Item>,
}

/// A rendered tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TierText {
    /// The Markdown text (empty when nothing fits or nothing is stored).
    pub text: String,
    /// Its size in tokens (the configured encoding, o200k_base by default).
    pub tokens: usize,
    /// The budget: `tokens < max_tokens` always holds for a non-empty text.
    pub max_tokens: usize,
    /// Labels of the items dropped to fit, in the order they were dropped.
    pub dropped: Vec<String>,
}

/// Renders sections: `## heading`, then one line per item (`- ` already part of the text).
pub fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections.iter().filter(|s| !s.items.is_empty()) {
        out.push_str("## ");
        out.push_str(&s.heading);
        out.push('\n');
        for item in &s.items {
            out.push_str(&item.text);
            out.push('\n');
        }
    }
    out
}

/// Fits sections into `max_tokens`: the rendered text has fewer than `max_tokens` tokens (or
/// is empty). Items are dropped whole, lowest rank first (ties: the later item first).
/// `tokens` is the exact count of the result (this loads the BPE vocabulary, ~75 ms on first
/// use); a caller that needs only the text uses [`fit_text`], which is the same fit without it.
pub fn fit(sections: Vec<Section>, max_tokens: usize, counter: &TokenCounter) -> TierText {
    let (text, dropped) = fit_text(sections, max_tokens, counter);
    TierText {
        tokens: counter.count(&text),
        text,
        max_tokens,
        dropped,
    }
}

/// [`fit`] without the final count: the same text and the same dropped labels (in drop
/// order), but the tokenizer runs only while a text has at least `max_tokens` bytes. A token
/// stands for at least one byte, so a text of fewer bytes than `max_tokens` certainly fits and
/// its exact count is not needed to decide; a Tier 0 of short items is fitted without loading
/// the vocabulary at all.
pub fn fit_text(
    sections: Vec<Section>,
    max_tokens: usize,
    counter: &TokenCounter,
) -> (String, Vec<String>) {
    fit_text_with(sections, max_tokens, |t| counter.count(t))
}

/// [`fit_text`] with the token count of a rendered text given by `count` (e.g. a
/// [`mem_core::CountCache`] in front of the counter); `count` is called only for texts of at
/// least `max_tokens` bytes and must return the same number the counter would.
pub fn fit_text_with(
    mut sections: Vec<Section>,
    max_tokens: usize,
    mut count: impl FnMut(&str) -> usize,
) -> (String, Vec<String>) {
    let mut dropped = Vec::new();
    loop {
        let text = render(&sections);
        if text.is_empty() || text.len() < max_tokens || count(&text) < max_tokens {
            return (text, dropped);
        }
        let mut victim: Option<(usize, usize, u32)> = None;
        for (si, s) in sections.iter().enumerate() {
            for (ii, it) in s.items.iter().enumerate() {
                if victim.is_none_or(|(_, _, r)| it.rank <= r) {
                    victim = Some((si, ii, it.rank));
                }
            }
        }
        let Some((si, ii, _)) = victim else {
            // Unreachable: a non-empty text has an item.
            return (String::new(), dropped);
        };
        dropped.push(sections[si].items.remove(ii).label);
    }
}

/// `text` on one line (whitespace runs become one space), at most `max_chars` characters; a
/// longer text is cut at a character boundary and ends in `…`.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    'words: for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
            n += 1;
        }
        for c in word.chars() {
            out.push(c);
            n += 1;
            if n > max_chars {
                break 'words;
            }
        }
    }
    if n > max_chars {
        let cut: String = out.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_cuts_at_characters() {
        assert_eq!(one_line("a  b\n c", 10), "a b c");
        assert_eq!(one_line("永远使用参数化查询", 5), "永远使用…");
        assert_eq!(one_line("abcdef", 6), "abcdef");
        assert_eq!(one_line("abcdefg", 6), "abcde…");
    }

    #[test]
    fn fit_drops_lowest_rank_first() {
        let item = |t: &str, rank| Item {
            text: format!("- {t}"),
            rank,
            label: t.to_owned(),
        };
        let sections = vec![
            Section {
                heading: "A".into(),
                items: vec![item("keep this one", 9), item("old", 1)],
            },
            Section {
                heading: "B".into(),
                items: vec![item("middle", 5)],
            },
        ];
        let c = TokenCounter::default();
        let full = fit(sections.clone(), 1000, &c);
        assert!(full.dropped.is_empty());
        let budget = c.count("## A\n- keep this one\n") + 1;
        let t = fit(sections, budget, &c);
        assert_eq!(t.dropped, ["old", "middle"]);
        assert_eq!(t.text, "## A\n- keep this one\n");
        assert!(t.tokens < budget);
    }

    /// The fit as it was before `fit_text` (an exact count at every step): the reference.
    fn exact_fit(mut sections: Vec<Section>, max_tokens: usize, c: &TokenCounter) -> TierText {
        let mut dropped = Vec::new();
        loop {
            let text = render(&sections);
            let tokens = c.count(&text);
            if text.is_empty() || tokens < max_tokens {
                return TierText {
                    text,
                    tokens,
                    max_tokens,
                    dropped,
                };
            }
            let mut victim: Option<(usize, usize, u32)> = None;
            for (si, s) in sections.iter().enumerate() {
                for (ii, it) in s.items.iter().enumerate() {
                    if victim.is_none_or(|(_, _, r)| it.rank <= r) {
                        victim = Some((si, ii, it.rank));
                    }
                }
            }
            let (si, ii, _) = victim.unwrap_or_default();
            dropped.push(sections[si].items.remove(ii).label);
        }
    }

    #[test]
    fn fit_text_and_fit_equal_the_exact_fit_at_every_budget() {
        // Scripts whose bytes per token differ: ASCII words (~4 bytes/token), CJK (~3 bytes
        // per character, 1-2 characters per token), emoji and rare characters (several tokens
        // each), digits and punctuation runs, and whitespace runs.
        let samples = [
            "run the tests with cargo nextest before committing",
            "永远使用参数化查询，避免字符串拼接的SQL",
            "🦀🦀🦀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮꙮ",
            "1234567890 ;;;;;;;;;;;;;;;; ((()))[[[]]]",
            "a     b\t\tc",
            "Ölçüm değerleri ağırlıklı ortalama ile hesaplanır",
        ];
        for c in [
            TokenCounter::default(),
            TokenCounter::new(mem_core::Encoding::Cl100kBase),
        ] {
            for n in [1usize, 3, 6] {
                let sections: Vec<Section> = (0..3)
                    .map(|s| Section {
                        heading: ["最近项目", "Preferences", "最近经验"][s].into(),
                        items: (0..n)
                            .map(|i| {
                                let k = s * 7 + i;
                                Item {
                                    text: format!("- {} {k}", samples[k % samples.len()]),
                                    rank: ((k * 37) % 11) as u32,
                                    label: format!("i{s}.{i}"),
                                }
                            })
                            .collect(),
                    })
                    .collect();
                let bytes = render(&sections).len();
                for budget in 0..=bytes + 2 {
                    let want = exact_fit(sections.clone(), budget, &c);
                    let got = fit(sections.clone(), budget, &c);
                    assert_eq!(got, want, "n {n}, budget {budget}");
                    let (text, dropped) = fit_text(sections.clone(), budget, &c);
                    assert_eq!(
                        (text, dropped),
                        (want.text, want.dropped),
                        "budget {budget}"
                    );
                }
            }
        }
    }
}
