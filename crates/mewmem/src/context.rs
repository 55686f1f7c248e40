//! The context an agent gets at the start of a session (and again after each compaction):
//! the seed §6 `<system-reminder>` block of instructions and auto memories, fitted to a
//! character budget when the receiver limits it (Claude Code keeps at most 10,000 characters of
//! a hook's added context in view).

use std::path::PathBuf;

use chrono::NaiveDate;
use mem_auto::{MemoryOptions, load_memories};
use mem_instructions::{LoadOptions, Warning};

use crate::error::Result;
use mem_sources::FromProject;

/// The largest budget a Claude Code hook may use, in characters: past it, Claude Code saves the
/// added context to a file and shows the model a short preview only.
pub const CLAUDE_HOOK_MAX_CHARS: usize = 10_000;

/// The smallest budget accepted, in characters (the block's frame alone is ~200).
pub const MIN_BUDGET_CHARS: usize = 1_000;

/// The largest budget `mem context --budget` and the MCP `context` tool accept, in characters.
pub const MAX_CONTEXT_CHARS: usize = 100_000;

/// What goes into the start context, and how much of it.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// Where the instruction files are looked for, their names and byte limits.
    pub instructions: LoadOptions,
    /// Where the `memories.md` files are.
    pub memories: MemoryOptions,
    /// The `# currentDate` of the block.
    pub date: NaiveDate,
    /// At most this many characters (UTF-16 code units, as JavaScript and Claude Code count
    /// them) for the whole block; `None`: no limit. Clamped to at least [`MIN_BUDGET_CHARS`].
    pub budget_chars: Option<usize>,
    /// Tier 0 of the tier store (seed 003 `get_tier0_summary()`: recent projects, core
    /// preferences, recent learnings; already under its token budget), appended to the
    /// `# autoMemory` body after the `memories.md` entries; `None` or blank: left out.
    /// [`tier0_text`] computes it from the local store.
    pub tier0: Option<String>,
}

impl ContextOptions {
    /// Options for `project` and `home`: the default instruction names (MEWCODE.md, AGENTS.md,
    /// CLAUDE.md) and limits, today's date is the caller's to give, no budget.
    pub fn new(project: impl Into<PathBuf>, home: impl Into<PathBuf>, date: NaiveDate) -> Self {
        let project = project.into();
        let home = home.into();
        ContextOptions {
            instructions: LoadOptions::new(&project, &home),
            memories: MemoryOptions::new(&project, &home),
            date,
            budget_chars: None,
            tier0: None,
        }
    }
}

/// Tier 0 of the local tier store (`<config.storage_dir>/memory.db`, SQLite) for `project`
/// (see [`tier0_of`]). Registers the project in the store, as every
/// `MemoryManager::from_project` does.
///
/// Errors: [`crate::Error::Tiers`] when the store cannot be opened or read.
pub fn tier0_text(
    project: &std::path::Path,
    config: mem_tiers::MemoryConfig,
) -> Result<Option<String>> {
    tier0_of(&mem_tiers::MemoryManager::from_project(project, config)?)
}

/// Tier 0 of a tier store (seed 003 `get_tier0_summary()`: recent projects, core preferences,
/// recent learnings, fewer than `tier0_max_tokens` tokens) for the start context; `None` while
/// the store holds neither a preference nor a learning visible here (the current project's
/// name alone tells the model nothing).
///
/// Errors: [`crate::Error::Tiers`] when the store cannot be read.
pub fn tier0_of<S: mem_tiers::MemoryStore>(
    mm: &mem_tiers::MemoryManager<S>,
) -> Result<Option<String>> {
    let learnings = mm.store().learnings(&mem_tiers::LearningFilter {
        visible_in: mm.project().map(|p| p.key.clone()),
        category: None,
        limit: Some(1),
    })?;
    if learnings.is_empty() && mm.preferences()?.is_empty() {
        return Ok(None);
    }
    Ok(Some(mm.get_tier0_text()?))
}

/// `memories` followed by `tier0` (a blank line between), either of them possibly empty.
fn with_tier0(memories: String, tier0: Option<&str>) -> String {
    match tier0.map(str::trim).filter(|t| !t.is_empty()) {
        None => memories,
        Some(t) if memories.trim().is_empty() => t.to_owned(),
        Some(t) => format!("{}\n\n{t}", memories.trim_end()),
    }
}

/// The start context: the block and where its parts came from.
#[derive(Debug, Clone)]
pub struct StartContext {
    /// The seed §6 block (`<system-reminder>` ... `</system-reminder>`).
    pub text: String,
    /// The `# mewcodeMd` body as it went in (cut when over budget).
    pub instructions: String,
    /// The `# autoMemory` body as it went in: the `memories.md` entries, then Tier 0 when
    /// given (cut when over budget).
    pub memories: String,
    /// The instruction files read, as displayed.
    pub instruction_files: Vec<String>,
    /// The memory files read, as displayed (`~/.mewcode/memories.md`, `.mewcode/memories.md`).
    pub memory_files: Vec<String>,
    /// The same files as the paths they were looked for at.
    pub memory_paths: Vec<PathBuf>,
    /// Problems met while reading (refused includes, unreadable files...).
    pub warnings: Vec<Warning>,
    /// Characters (UTF-16 code units) cut to fit the budget; 0 when nothing was cut.
    pub cut_chars: usize,
}

impl StartContext {
    /// `true` when there are neither instructions nor memories: the block would hold only the
    /// date, which is not worth sending.
    pub fn is_empty(&self) -> bool {
        self.instructions.trim().is_empty() && self.memories.trim().is_empty()
    }
}

/// Length in UTF-16 code units (what Claude Code's JavaScript counts as characters).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// Loads instructions and memories and renders the seed §6 block within the budget.
///
/// When the block is over budget, the two sections share what is left after the frame
/// (max-min fair: a section that fits in half keeps all of it, the other gets the rest); a
/// section is cut at a line end (never inside a character) and ends with a line
/// `[mewmem: N more characters cut to fit the context budget; run `mem context` to see all]`.
///
/// Errors: [`crate::Error::Instructions`] when the project root does not exist.
pub fn start_context(options: &ContextOptions) -> Result<StartContext> {
    let ins = mem_instructions::load(&options.instructions)?;
    let mem = load_memories(&options.memories)?;
    let instructions = ins.section_body();
    let memories = with_tier0(mem.text(), options.tier0.as_deref());
    let mut warnings = ins.warnings.clone();
    warnings.extend(mem.warnings.iter().cloned());
    let budget = options.budget_chars.map(|b| b.max(MIN_BUDGET_CHARS));
    let (instructions, memories, cut_chars) = fit(&instructions, &memories, options.date, budget);
    Ok(StartContext {
        text: mem_core::render_long_term_memory(&instructions, &memories, options.date),
        instructions,
        memories,
        instruction_files: ins.files.iter().map(|p| p.display().to_string()).collect(),
        memory_files: mem.files.iter().map(|f| f.file.clone()).collect(),
        memory_paths: mem.files.iter().map(|f| f.path.clone()).collect(),
        warnings,
        cut_chars,
    })
}

/// Cuts the two section bodies so the rendered block fits `budget` (UTF-16 units); returns the
/// bodies and how many units were cut.
fn fit(
    instructions: &str,
    memories: &str,
    date: NaiveDate,
    budget: Option<usize>,
) -> (String, String, usize) {
    let render = |i: &str, m: &str| utf16_len(&mem_core::render_long_term_memory(i, m, date));
    let full = render(instructions, memories);
    let Some(budget) = budget.filter(|b| full > *b) else {
        return (instructions.to_owned(), memories.to_owned(), 0);
    };
    let (li, lm) = (utf16_len(instructions), utf16_len(memories));
    let mut excess = full - budget;
    let mut out = (instructions.to_owned(), memories.to_owned());
    // A few rounds: each cut adds a marker line, and cuts land on line ends.
    for _ in 0..8 {
        let avail = li + lm - excess.min(li + lm);
        let (si, sm) = shares(li, lm, avail);
        out = (cut_to(instructions, si), cut_to(memories, sm));
        let now = render(&out.0, &out.1);
        if now <= budget {
            let cut = full.saturating_sub(now);
            return (out.0, out.1, cut);
        }
        excess += now - budget;
    }
    // Unreachable in practice (the minimum budget leaves room); drop both sections rather
    // than exceed the budget.
    let cut = full.saturating_sub(render("", ""));
    let _ = out;
    (String::new(), String::new(), cut)
}

/// Max-min fair split of `avail` between two sizes.
fn shares(a: usize, b: usize, avail: usize) -> (usize, usize) {
    if a + b <= avail {
        return (a, b);
    }
    let half = avail / 2;
    if a <= half {
        (a, avail - a)
    } else if b <= half {
        (avail - b, b)
    } else {
        (half, avail - half)
    }
}

/// `text` cut to at most `max` UTF-16 units including the marker line, at a line end when one
/// is in the second half of what fits (else at a character boundary).
fn cut_to(text: &str, max: usize) -> String {
    let total = utf16_len(text);
    if total <= max {
        return text.to_owned();
    }
    let marker = |n: usize| {
        format!(
            "\n[mewmem: {n} more characters cut to fit the context budget; run `mem context` to \
             see all]"
        )
    };
    // Room for the text before the marker (the marker's own number is at most `total` long).
    let room = max.saturating_sub(utf16_len(&marker(total)));
    if room == 0 {
        return String::new();
    }
    let mut end = 0;
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = c.len_utf16();
        if used + w > room {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    let head = &text[..end];
    let head = match head.rfind('\n') {
        Some(nl) if nl >= end / 2 => &head[..nl],
        _ => head,
    };
    let kept = utf16_len(head);
    format!("{head}{}", marker(total - kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 6, 18).unwrap_or_default()
    }

    fn check(ins: &str, mem: &str, budget: usize) -> (String, String, usize) {
        let (i, m, cut) = fit(ins, mem, date(), Some(budget));
        let block = mem_core::render_long_term_memory(&i, &m, date());
        assert!(
            utf16_len(&block) <= budget,
            "{} > {budget}",
            utf16_len(&block)
        );
        (i, m, cut)
    }

    #[test]
    fn under_budget_nothing_is_cut() {
        let (i, m, cut) = check("Use uv.", "- likes tabs", 10_000);
        assert_eq!(
            (i.as_str(), m.as_str(), cut),
            ("Use uv.", "- likes tabs", 0)
        );
    }

    #[test]
    fn the_small_section_stays_whole_and_the_big_one_is_cut_at_a_line() {
        let ins = "Use uv.\n".repeat(10);
        let mem: String = (0..2000)
            .map(|i| format!("- memory number {i}\n"))
            .collect();
        let (i, m, cut) = check(&ins, &mem, 5_000);
        assert_eq!(i, ins);
        assert!(cut > 0);
        assert!(m.ends_with("run `mem context` to see all]"), "{m}");
        let before_marker = m.rsplit_once("\n[mewmem:").map(|(h, _)| h).unwrap_or("");
        assert!(
            before_marker.ends_with(|c: char| c.is_ascii_digit()),
            "{before_marker:?}"
        );
    }

    #[test]
    fn both_big_share_the_budget_and_multibyte_text_is_never_split() {
        let ins = "说明文字很长。".repeat(3000);
        let mem = "🦀 记忆 ".repeat(3000);
        let (i, m, _) = check(&ins, &mem, 10_000);
        let (a, b) = (utf16_len(&i), utf16_len(&m));
        assert!(a > 3000 && b > 3000, "{a} {b}");
        for budget in [1_000, 1_001, 2_345, 9_999] {
            check(&ins, &mem, budget);
            check(&ins, "", budget);
            check("", &mem, budget);
        }
    }
}
