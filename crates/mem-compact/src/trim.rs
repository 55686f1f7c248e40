//! Tool-result trimming, the three passes of seed 000 §2.
//!
//! | pass | threshold | what happens |
//! |---|---|---|
//! | 1, one result too big | > [`SPILL_THRESHOLD_CHARS`] characters | the full text goes to a file under [`TOOL_RESULTS_DIR`]; the result becomes a preview naming the file |
//! | 2, all results too big | > [`AGGREGATE_LIMIT_CHARS`] characters together | older results (every round but the newest) are cut to one common cap, found so the total fits: the same budget for each, so trimming is even across rounds |
//! | 3, stale results | outside the [`KEEP_RECENT_TURNS`](crate::KEEP_RECENT_TURNS) most recent rounds | results over [`STALE_RESULT_CHARS`] become a [`STALE_PREVIEW_CHARS`]-character preview |
//!
//! A *round* is one model call: an assistant message and the tool results that answer it (a user
//! turn in an agent loop may hold hundreds of them, so rounds, not user turns, are counted).
//! Passes run in the order 1, 3, 2: the stale pass frees old results first, so the even cut of
//! pass 2 rarely has to touch recent rounds.
//!
//! Trimming is pure: [`trim_tool_results`] returns the new messages and the [`Spill`]s to write;
//! [`write_spills`] writes them (atomically) once the caller has decided to commit.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mem_core::{ContentBlock, Message, Role, ToolResultContent};

use crate::error::{Error, Result};

/// Pass 1: a single tool result longer than this (characters) is spilled to a file.
pub const SPILL_THRESHOLD_CHARS: usize = 50_000;
/// Pass 2: when all tool results together are longer than this (characters), old ones are cut.
pub const AGGREGATE_LIMIT_CHARS: usize = 200_000;
/// Pass 3: outside the recent rounds, results longer than this (characters) are cut...
pub const STALE_RESULT_CHARS: usize = 2_048;
/// ...to a preview of this many characters.
pub const STALE_PREVIEW_CHARS: usize = 200;
/// Characters of a spilled result kept in place as its preview (beyond the seed, which does not
/// give the size).
pub const SPILL_PREVIEW_CHARS: usize = 2_000;
/// Where spilled results go, relative to the project root (seed path: singular `session`).
pub const TOOL_RESULTS_DIR: &str = ".mewcode/session/tool-results";

/// A tool result written out by pass 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spill {
    /// The file, relative to the project root
    /// (`.mewcode/session/tool-results/<session>/<id>-<hash>.txt`, see [`spill_path`]).
    pub relative_path: PathBuf,
    /// The full text of the result.
    pub content: String,
}

/// What trimming did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrimStats {
    /// Results spilled to files (pass 1).
    pub spilled: usize,
    /// Results cut by the aggregate pass (pass 2).
    pub aggregate_trimmed: usize,
    /// Results cut to a preview by the stale pass (pass 3).
    pub stale_trimmed: usize,
    /// Characters of tool-result text before trimming.
    pub chars_before: usize,
    /// Characters of tool-result text after trimming.
    pub chars_after: usize,
}

/// Messages after trimming, and the files to write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trimmed {
    /// The messages, same count and order as the input.
    pub messages: Vec<Message>,
    /// Files pass 1 wants written (see [`write_spills`]).
    pub spills: Vec<Spill>,
    /// Counts.
    pub stats: TrimStats,
}

/// The round of each message: the number of assistant messages up to and including it (so
/// messages before the first assistant message are round 0).
pub fn rounds(messages: &[Message]) -> Vec<usize> {
    let mut round = 0;
    messages
        .iter()
        .map(|m| {
            if m.role == Role::Assistant {
                round += 1;
            }
            round
        })
        .collect()
}

/// The first `n` characters of `s` (on a character boundary).
pub(crate) fn head(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The text of a result and whether it has non-text blocks.
fn result_text(content: &ToolResultContent) -> String {
    content.text()
}

/// Replaces the text of a result by `text`, keeping non-text blocks (images) in place after it.
fn set_result_text(content: &mut ToolResultContent, text: String) {
    match content {
        ToolResultContent::Text(s) => *s = text,
        ToolResultContent::Blocks(blocks) => {
            let mut out = vec![ContentBlock::text(text)];
            out.extend(blocks.drain(..).filter(|b| b.as_text().is_none()));
            *blocks = out;
        }
        ToolResultContent::Absent => *content = ToolResultContent::Text(text),
    }
}

/// A file-name-safe form of a tool_use id (`[A-Za-z0-9_-]`, other characters become `_`).
fn file_stem(id: &str, fallback: usize) -> String {
    let stem: String = id
        .chars()
        .take(120)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        format!("result-{fallback}")
    } else {
        stem
    }
}

/// FNV-1a, 64 bits: a content hash that stays the same across builds and platforms (the name
/// of a spill file must not change between runs). Not collision-proof against crafted input:
/// [`write_spills`] refuses to replace a file holding other bytes, so a collision fails the
/// compaction instead of losing a result.
fn content_hash(content: &str) -> u64 {
    content.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Where the full text `content` of the result of `tool_use_id` in session `session_id` is
/// spilled, relative to the project root:
/// `.mewcode/session/tool-results/<session>/<id>-<hash>.txt` (16 hex digits). The session
/// directory keeps apart ids a model reuses across sessions (`call_0`); the hash of the content
/// keeps apart ids that sanitise alike (`call/1`, `call_1`), and maps identical content to the
/// same file. `fallback` names a result whose id is empty.
pub fn spill_path(session_id: &str, tool_use_id: &str, content: &str, fallback: usize) -> PathBuf {
    let session = if session_id.is_empty() {
        "session".to_owned()
    } else {
        file_stem(session_id, 0)
    };
    PathBuf::from(TOOL_RESULTS_DIR).join(session).join(format!(
        "{}-{:016x}.txt",
        file_stem(tool_use_id, fallback),
        content_hash(content)
    ))
}

/// The preview left in place of a spilled result.
pub fn spill_preview(relative_path: &Path, full: &str, chars: usize) -> String {
    format!(
        "[mewmem: tool result of {chars} characters saved to {}; the first {} characters follow]\n{}",
        relative_path.display(),
        SPILL_PREVIEW_CHARS.min(chars),
        head(full, SPILL_PREVIEW_CHARS)
    )
}

/// Start of the preview of a spilled result.
const SPILL_MARK: &str = "[mewmem: tool result of ";

/// Start of the line that ends a result cut by pass 2 or 3.
const CUT_MARK: &str = "[mewmem: tool result trimmed to ";

/// A spilled result's preview without its first line (which names the spill file), ended like a
/// result cut by pass 2 or 3: `None` when `text` is not such a preview. For what the summariser
/// reads of the prefix, whose spill files are never written (only the kept tail's are), so a
/// summary cannot name a file that does not exist.
pub fn without_spill_header(text: &str) -> Option<String> {
    let total: usize = text
        .strip_prefix(SPILL_MARK)?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    let body = text.split_once('\n').map_or("", |(_, b)| b);
    // A preview cut again by pass 3 ends with that cut's line, whose figures are the preview's.
    let body = match body.rfind(CUT_MARK) {
        Some(i) if body.ends_with(" characters]") => {
            body[..i].strip_suffix('\n').unwrap_or(&body[..i])
        }
        _ => body,
    };
    Some(format!(
        "{body}\n{CUT_MARK}{} of {total} characters]",
        body.chars().count()
    ))
}

/// [`without_spill_header`] on every tool result of `message`.
pub fn strip_spill_headers(message: &mut Message) {
    for block in &mut message.content {
        if let ContentBlock::ToolResult { content, .. } = block
            && let Some(text) = without_spill_header(&content.text())
        {
            set_result_text(content, text);
        }
    }
}

/// The preview left in place of a result cut to `keep` characters. A spilled result's preview
/// keeps its first line whole, so the path of the file is never cut away.
pub fn cut_preview(full: &str, chars: usize, keep: usize) -> String {
    let keep = if full.starts_with(SPILL_MARK) {
        let first = full.find('\n').map_or(full.len(), |i| i + 1);
        keep.max(full[..first].chars().count())
    } else {
        keep
    };
    format!(
        "{}\n{CUT_MARK}{keep} of {chars} characters]",
        head(full, keep)
    )
}

/// Where a tool result is, as (message index, block index).
type Loc = (usize, usize);

fn results(messages: &[Message]) -> Vec<(Loc, usize)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for (j, b) in m.content.iter().enumerate() {
            if let ContentBlock::ToolResult { content, .. } = b {
                out.push(((i, j), content.char_len()));
            }
        }
    }
    out
}

fn content_at(messages: &mut [Message], (i, j): Loc) -> Option<&mut ToolResultContent> {
    match messages.get_mut(i)?.content.get_mut(j)? {
        ContentBlock::ToolResult { content, .. } => Some(content),
        _ => None,
    }
}

/// Runs the three passes over `messages` of session `session_id` (see the module docs; the id
/// names the spill directory, [`spill_path`]). `recent_rounds` is how many of
/// the most recent rounds pass 3 leaves alone ([`crate::KEEP_RECENT_TURNS`] normally; 0 cuts every
/// result over [`STALE_RESULT_CHARS`], which the last-resort shrink of a too-big tail uses).
/// Results already trimmed by an earlier run are recognised by their length and left as they are.
pub fn trim_tool_results(messages: &[Message], session_id: &str, recent_rounds: usize) -> Trimmed {
    let mut out = messages.to_vec();
    let mut stats = TrimStats::default();
    let mut spills = Vec::new();
    let round_of = rounds(&out);
    let last_round = round_of.last().copied().unwrap_or(0);
    let ids: HashMap<Loc, String> = out
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            m.content
                .iter()
                .enumerate()
                .filter_map(move |(j, b)| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => {
                        Some(((i, j), tool_use_id.clone()))
                    }
                    _ => None,
                })
        })
        .collect();

    let mut lens = results(&out);
    stats.chars_before = lens.iter().map(|(_, n)| n).sum();

    // Pass 1: spill each result over the threshold.
    for (k, (loc, len)) in lens.iter_mut().enumerate() {
        if *len <= SPILL_THRESHOLD_CHARS {
            continue;
        }
        let Some(content) = content_at(&mut out, *loc) else {
            continue;
        };
        let full = result_text(content);
        let id = ids.get(loc).map(String::as_str).unwrap_or("");
        let relative_path = spill_path(session_id, id, &full, k);
        let preview = spill_preview(&relative_path, &full, *len);
        set_result_text(content, preview);
        *len = content.char_len();
        spills.push(Spill {
            relative_path,
            content: full,
        });
        stats.spilled += 1;
    }

    // Pass 3: stale results outside the recent rounds.
    let recent_from = last_round.saturating_sub(recent_rounds);
    for (loc, len) in lens.iter_mut() {
        let old = recent_rounds == 0 || round_of[loc.0] <= recent_from;
        if !old || *len <= STALE_RESULT_CHARS {
            continue;
        }
        let Some(content) = content_at(&mut out, *loc) else {
            continue;
        };
        let full = result_text(content);
        set_result_text(content, cut_preview(&full, *len, STALE_PREVIEW_CHARS));
        *len = content.char_len();
        stats.stale_trimmed += 1;
    }

    // Pass 2: the total over the limit: one common cap for every result but the newest round's.
    let total: usize = lens.iter().map(|(_, n)| n).sum();
    if total > AGGREGATE_LIMIT_CHARS {
        let (recent, old): (Vec<_>, Vec<_>) = lens
            .iter_mut()
            .partition(|(loc, _)| round_of[loc.0] == last_round && last_round > 0);
        let fixed: usize = recent.iter().map(|(_, n)| *n).sum();
        let budget = AGGREGATE_LIMIT_CHARS.saturating_sub(fixed);
        let cap = common_cap(old.iter().map(|(_, n)| *n), budget).max(STALE_PREVIEW_CHARS);
        for (loc, len) in old {
            if *len <= cap {
                continue;
            }
            let Some(content) = content_at(&mut out, *loc) else {
                continue;
            };
            let full = result_text(content);
            set_result_text(content, cut_preview(&full, *len, cap));
            *len = content.char_len();
            stats.aggregate_trimmed += 1;
        }
    }
    stats.chars_after = lens.iter().map(|(_, n)| n).sum();
    Trimmed {
        messages: out,
        spills,
        stats,
    }
}

/// The largest cap `c` with `sum(min(len, c)) <= budget` (water-filling).
fn common_cap(lens: impl Iterator<Item = usize>, budget: usize) -> usize {
    let mut sorted: Vec<usize> = lens.collect();
    sorted.sort_unstable();
    let mut used = 0usize;
    let n = sorted.len();
    for (k, &len) in sorted.iter().enumerate() {
        let remaining = n - k;
        // Every remaining result gets at least `len` if the budget allows.
        if used + len * remaining > budget {
            return (budget - used) / remaining;
        }
        used += len;
    }
    usize::MAX
}

/// Writes the spilled results under `project`, each atomically (a temporary file with a name of
/// its own in the same directory, synced, renamed, then the directory synced), so a reader sees
/// the whole file or none. A file already there with the same bytes (a rerun) is left alone; one
/// with other bytes is never overwritten ([`Error::Spill`]).
pub fn write_spills(project: &Path, spills: &[Spill]) -> Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);
    for spill in spills {
        let path = project.join(&spill.relative_path);
        let err = |source| Error::Spill {
            path: path.clone(),
            source,
        };
        let dir = path.parent().unwrap_or(project);
        std::fs::create_dir_all(dir).map_err(err)?;
        match mem_core::fsread::read(&path) {
            Ok(existing) if existing == spill.content.as_bytes() => continue,
            Ok(_) => {
                return Err(err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a spill file of this name holds other content",
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e)),
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(spill.content.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(e));
        }
        // The rename (and the session directory, when new) on disk too.
        sync_dir(dir).map_err(err)?;
        if let Some(parent) = dir.parent() {
            sync_dir(parent).map_err(err)?;
        }
    }
    Ok(())
}

/// `fsync` of a directory (a no-op where directories cannot be opened, Windows).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KEEP_RECENT_TURNS;
    use serde_json::json;

    fn round(i: usize, result: String) -> [Message; 2] {
        let id = format!("t{i}");
        [
            Message::new(
                Role::Assistant,
                vec![ContentBlock::tool_use(
                    &id,
                    "Bash",
                    json!({"command": "ls"}),
                )],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result(&id, result, false)],
            ),
        ]
    }

    fn text_of(m: &Message) -> String {
        match &m.content[0] {
            ContentBlock::ToolResult { content, .. } => content.text(),
            _ => String::new(),
        }
    }

    fn check(sizes: &[usize], expect: impl Fn(&Trimmed)) {
        let mut messages = vec![Message::user("go")];
        for (i, n) in sizes.iter().enumerate() {
            messages.extend(round(i, "x".repeat(*n)));
        }
        expect(&trim_tool_results(&messages, "s1", KEEP_RECENT_TURNS));
    }

    #[test]
    fn pass1_spills_one_big_result_with_a_preview_naming_the_file() {
        check(&[SPILL_THRESHOLD_CHARS + 1, 10], |t| {
            assert_eq!(t.stats.spilled, 1);
            assert_eq!(t.spills.len(), 1);
            // Was `tool-results/t0.txt` (review finding 6: names collided).
            assert_eq!(
                t.spills[0].relative_path,
                spill_path("s1", "t0", &t.spills[0].content, 0)
            );
            let rel = t.spills[0].relative_path.display().to_string();
            assert!(
                rel.starts_with(".mewcode/session/tool-results/s1/t0-") && rel.ends_with(".txt"),
                "{rel}"
            );
            assert_eq!(t.spills[0].content.len(), SPILL_THRESHOLD_CHARS + 1);
            let preview = text_of(&t.messages[2]);
            assert!(preview.contains(&rel), "{preview}");
            assert!(preview.chars().count() < SPILL_PREVIEW_CHARS + 200);
            assert_eq!(text_of(&t.messages[4]), "x".repeat(10));
        });
        check(&[SPILL_THRESHOLD_CHARS], |t| assert_eq!(t.stats.spilled, 0));
    }

    #[test]
    fn pass3_cuts_only_results_outside_the_recent_rounds() {
        // 12 rounds of 3,000 characters: rounds 1 and 2 are outside the 10 most recent.
        check(&[3_000; 12], |t| {
            assert_eq!(t.stats.stale_trimmed, 2);
            let first = text_of(&t.messages[2]);
            assert!(first.starts_with(&"x".repeat(STALE_PREVIEW_CHARS)));
            assert!(
                first.contains("trimmed to 200 of 3000 characters"),
                "{first}"
            );
            assert_eq!(text_of(&t.messages[6]).len(), 3_000);
        });
        check(&[STALE_RESULT_CHARS; 12], |t| {
            assert_eq!(t.stats.stale_trimmed, 0)
        });
    }

    #[test]
    fn pass2_cuts_old_results_evenly_until_the_total_fits() {
        // Five recent rounds of 45,000 characters: 225,000 in all, none stale, none spilled.
        check(&[45_000; 5], |t| {
            assert_eq!(t.stats.aggregate_trimmed, 4);
            assert!(
                t.stats.chars_after <= AGGREGATE_LIMIT_CHARS + 4 * 100,
                "{:?}",
                t.stats
            );
            let lens: Vec<usize> = (0..4)
                .map(|k| text_of(&t.messages[2 + 2 * k]).len())
                .collect();
            assert!(lens.iter().all(|l| *l == lens[0]), "{lens:?}");
            assert_eq!(
                text_of(&t.messages[10]).len(),
                45_000,
                "the newest round is whole"
            );
        });
    }

    #[test]
    fn the_summariser_copy_of_a_spilled_result_names_no_file() {
        check(&[SPILL_THRESHOLD_CHARS + 10], |t| {
            let preview = text_of(&t.messages[2]);
            let copy = without_spill_header(&preview).unwrap();
            assert!(!copy.contains(TOOL_RESULTS_DIR), "{copy}");
            assert!(copy.starts_with(&"x".repeat(SPILL_PREVIEW_CHARS)), "{copy}");
            assert!(copy.ends_with("[mewmem: tool result trimmed to 2000 of 50010 characters]"));
            // Cut again by pass 3, the header and that cut's line both go.
            let cut = cut_preview(&preview, preview.chars().count(), STALE_PREVIEW_CHARS);
            let copy = without_spill_header(&cut).unwrap();
            assert!(!copy.contains(TOOL_RESULTS_DIR), "{copy}");
            assert_eq!(copy.matches(CUT_MARK).count(), 1, "{copy}");
            assert!(copy.ends_with(" of 50010 characters]"), "{copy}");
        });
        assert_eq!(without_spill_header("plain output"), None);
    }

    #[test]
    fn common_cap_water_fills() {
        assert_eq!(common_cap([10, 10].into_iter(), 100), usize::MAX);
        assert_eq!(common_cap([100, 100].into_iter(), 100), 50);
        assert_eq!(common_cap([10, 100, 100].into_iter(), 110), 50);
    }

    /// Review finding 6: ids that sanitise alike, and an id reused by another session, got the
    /// same file, the second overwriting the first while the first's preview still named it.
    #[test]
    fn spill_names_never_collide_and_identical_content_shares_one() {
        let big = |c: char| c.to_string().repeat(SPILL_THRESHOLD_CHARS + 1);
        let messages = |ids: [(&str, char); 2]| {
            let mut out = vec![Message::user("go")];
            for (id, c) in ids {
                out.push(Message::new(
                    Role::Assistant,
                    vec![ContentBlock::tool_use(id, "Bash", json!({"command": "ls"}))],
                ));
                out.push(Message::new(
                    Role::User,
                    vec![ContentBlock::tool_result(id, big(c), false)],
                ));
            }
            out
        };
        let dir = tempfile::tempdir().unwrap();
        let a = trim_tool_results(&messages([("call/1", 'a'), ("call_1", 'b')]), "s1", 10);
        // Another session reusing the id `call_1` for other content.
        let b = trim_tool_results(&messages([("call_1", 'c'), ("x", 'a')]), "s2", 10);
        let spills: Vec<Spill> = a.spills.iter().chain(&b.spills).cloned().collect();
        for s in &spills {
            write_spills(dir.path(), std::slice::from_ref(s)).unwrap();
        }
        let names: std::collections::HashSet<_> =
            spills.iter().map(|s| s.relative_path.clone()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        for s in &spills {
            let on_disk = std::fs::read_to_string(dir.path().join(&s.relative_path)).unwrap();
            assert_eq!(on_disk, s.content, "{}", s.relative_path.display());
        }
        // The same result again (a rerun) names the same file, left as it is.
        let again = trim_tool_results(&messages([("call/1", 'a'), ("call_1", 'b')]), "s1", 10);
        assert_eq!(again.spills, a.spills);
        write_spills(dir.path(), &again.spills).unwrap();
    }

    #[test]
    fn concurrent_writers_of_one_spill_do_not_trip_over_a_shared_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill {
            relative_path: spill_path("s1", "t", "same text", 0),
            content: "same text".into(),
        };
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        // Each writer removes the file so the next write is a real one.
                        let _ = std::fs::remove_file(dir.path().join(&spill.relative_path));
                        write_spills(dir.path(), std::slice::from_ref(&spill)).unwrap();
                    }
                });
            }
        });
        let d = dir.path().join(spill.relative_path.parent().unwrap());
        let names: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[test]
    fn spills_are_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill {
            relative_path: PathBuf::from(TOOL_RESULTS_DIR).join("a.txt"),
            content: "full text".into(),
        };
        write_spills(dir.path(), &[spill]).unwrap();
        let p = dir.path().join(".mewcode/session/tool-results/a.txt");
        assert_eq!(std::fs::read_to_string(p).unwrap(), "full text");
        let names: Vec<_> = std::fs::read_dir(dir.path().join(TOOL_RESULTS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }
}
