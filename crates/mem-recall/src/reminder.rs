//! `render_reminder` (seed 000 §4 "注入" and "时效性警告"): the chosen notes in one
//! `<system-reminder>`, each with its name and path, a note older than one day carrying the
//! seed's staleness warning word for word with N filled in.

use std::time::SystemTime;

use chrono::{DateTime, NaiveDate, Utc};

use crate::scan::Note;

/// The seed's staleness warning (seed 000 §4, `recall.py:91-101`), `{N}` standing for the age in
/// whole days. Kept word for word, with the seed's line breaks.
pub const STALENESS_WARNING: &str = "This memory is {N} days old. Memories are point-in-time observations, not live\nstate — claims about code behavior or file:line citations may be outdated.\nVerify against current code before asserting as fact.";

/// The first line inside the reminder, before the notes.
pub const REMINDER_INTRO: &str = "The following memory files may be relevant to the user's message. They were saved in earlier sessions; use them only where they apply.";

/// The most bytes of one note's body put in a reminder (16 KiB), cut at a line or character
/// boundary and followed by a line saying where the rest is.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// How the age of a note was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeSource {
    /// The frontmatter's `last_verified` (or `updated`) date.
    Frontmatter,
    /// The file's modification time.
    Mtime,
}

/// A note's age in whole days at `now` (never negative) and where it came from: from the
/// frontmatter's `last_verified`/`updated` date when it starts with a valid `YYYY-MM-DD` (days
/// between that UTC date and `now`'s UTC date), else from the mtime (whole 24-hour periods).
pub fn age_days(note: &Note, now: SystemTime) -> (u64, AgeSource) {
    let now_utc: DateTime<Utc> = now.into();
    if let Some(date) = note
        .verified
        .as_deref()
        .and_then(|v| v.get(..10))
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    {
        let days = (now_utc.date_naive() - date).num_days();
        return (u64::try_from(days).unwrap_or(0), AgeSource::Frontmatter);
    }
    let secs = now
        .duration_since(note.mtime)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    (secs / 86_400, AgeSource::Mtime)
}

/// The staleness warning for an age of `days` whole days; `None` when `days <= 1`.
pub fn staleness_warning(days: u64) -> Option<String> {
    (days > 1).then(|| STALENESS_WARNING.replace("{N}", &days.to_string()))
}

/// The reminder for `notes` (most relevant first) at `now`: empty when there are none, else
///
/// ```text
/// <system-reminder>
/// {REMINDER_INTRO}
///
/// ## {name} ({path})
/// {staleness warning, when older than one day}
///
/// {body}
/// </system-reminder>
/// ```
///
/// with one `## ` section per note. A body longer than [`MAX_BODY_BYTES`] is cut and says so.
pub fn render_reminder(notes: &[&Note], now: SystemTime) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("<system-reminder>\n");
    out.push_str(REMINDER_INTRO);
    out.push('\n');
    for note in notes {
        out.push_str(&format!(
            "\n## {} ({})\n",
            note.name.split_whitespace().collect::<Vec<_>>().join(" "),
            note.path.display()
        ));
        if let Some(warning) = staleness_warning(age_days(note, now).0) {
            out.push_str(&warning);
            out.push('\n');
        }
        let body = note.body.trim_matches(['\n', '\r']);
        if !body.is_empty() {
            out.push('\n');
            let (shown, cut) = cut_body(body);
            out.push_str(shown);
            out.push('\n');
            if cut || note.truncated {
                out.push_str(&format!(
                    "[… cut: the note is longer; read {} for the rest]\n",
                    note.path.display()
                ));
            }
        }
    }
    out.push_str("</system-reminder>");
    out
}

fn cut_body(body: &str) -> (&str, bool) {
    if body.len() <= MAX_BODY_BYTES {
        return (body, false);
    }
    let mut end = MAX_BODY_BYTES;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let shown = &body[..end];
    let shown = match shown.rfind('\n') {
        Some(nl) if nl > end / 2 => &shown[..nl],
        _ => shown,
    };
    (shown, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{NoteId, Scope};
    use std::path::PathBuf;
    use std::time::Duration;

    fn note(verified: Option<&str>, mtime_days_ago: u64, now: SystemTime) -> Note {
        Note {
            id: NoteId::new(Scope::Project, "a.md"),
            scope: Scope::Project,
            path: PathBuf::from("/p/.mewcode/memory/a.md"),
            name: "A".to_owned(),
            description: String::new(),
            kind: None,
            mtime: now - Duration::from_secs(mtime_days_ago * 86_400 + 5),
            size: 0,
            verified: verified.map(str::to_owned),
            body: "body".to_owned(),
            truncated: false,
        }
    }

    #[test]
    fn age_from_frontmatter_date_else_mtime() {
        // 2026-06-18T10:00:00Z
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_781_776_800);
        let check = |verified: Option<&str>, mtime_days: u64, expected: (u64, AgeSource)| {
            assert_eq!(age_days(&note(verified, mtime_days, now), now), expected);
        };
        check(None, 0, (0, AgeSource::Mtime));
        check(None, 1, (1, AgeSource::Mtime));
        check(None, 30, (30, AgeSource::Mtime));
        check(Some("2026-06-15"), 0, (3, AgeSource::Frontmatter));
        check(
            Some("2026-06-18T09:00:00Z"),
            40,
            (0, AgeSource::Frontmatter),
        );
        check(Some("2027-01-01"), 5, (0, AgeSource::Frontmatter));
        check(Some("last week"), 7, (7, AgeSource::Mtime));
    }

    #[test]
    fn warning_only_past_one_day_and_word_for_word() {
        assert_eq!(staleness_warning(0), None);
        assert_eq!(staleness_warning(1), None);
        assert_eq!(
            staleness_warning(2).as_deref(),
            Some(
                "This memory is 2 days old. Memories are point-in-time observations, not live\n\
                 state — claims about code behavior or file:line citations may be outdated.\n\
                 Verify against current code before asserting as fact."
            )
        );
    }

    #[test]
    fn empty_selection_renders_nothing_and_long_bodies_are_cut() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_781_776_800);
        assert_eq!(render_reminder(&[], now), "");
        let mut long = note(None, 3, now);
        long.body = "line of text\n".repeat(5000);
        let text = render_reminder(&[&long], now);
        assert!(text.len() < MAX_BODY_BYTES + 2000);
        assert!(text.contains("This memory is 3 days old."));
        assert!(text.contains("[… cut: the note is longer; read /p/.mewcode/memory/a.md"));
        assert!(text.ends_with("</system-reminder>"));
    }
}
