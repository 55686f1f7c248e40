//! Which file an entry belongs in when its words name the scope: "in this project", "this repo",
//! "here", "这个仓库", "本项目" put any entry, whatever its category, into the project's file.

/// English phrases naming the current project (matched on lowercased text at word boundaries).
const PROJECT_PHRASES: &[&str] = &[
    "in this project",
    "for this project",
    "on this project",
    "in this repo",
    "for this repo",
    "on this repo",
    "in this repository",
    "for this repository",
    "in this codebase",
    "for this codebase",
    "in this workspace",
    "in this monorepo",
    "in this package",
    "in our repo",
    "in our codebase",
    "in our project",
    "in here",
    "around here",
    "this project's",
    "this repo's",
];

/// Chinese phrases naming the current project (matched as substrings).
const PROJECT_PHRASES_ZH: &[&str] = &[
    "这个仓库",
    "这个项目",
    "这个代码库",
    "这个工程",
    "本项目",
    "本仓库",
    "该项目",
    "该仓库",
    "此项目",
    "此仓库",
    "项目里",
    "仓库里",
];

/// Whether `text` says it holds for the current project only: a phrase of
/// `PROJECT_PHRASES` or `PROJECT_PHRASES_ZH`, or a clause ending in "here" ("use tabs
/// here."). Such an entry goes to `<project>/.mewcode/memories.md` whatever its category.
pub fn names_project_scope(text: &str) -> bool {
    let lower = text.to_lowercase();
    if PROJECT_PHRASES_ZH.iter().any(|p| lower.contains(p)) {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_' || c == '-'))
        .collect();
    let joined = words
        .iter()
        .filter(|w| !w.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let padded = format!(" {joined} ");
    if PROJECT_PHRASES
        .iter()
        .any(|p| padded.contains(&format!(" {p} ")))
    {
        return true;
    }
    // "here" closing a clause: "use tabs here.", "here, always rebase" is not counted.
    let closes = |c: char| matches!(c, '.' | '!' | ';' | ',' | ')' | '。' | '，' | '；');
    lower.match_indices("here").any(|(i, _)| {
        let before_ok = lower[..i]
            .chars()
            .next_back()
            .is_some_and(char::is_whitespace);
        let after = &lower[i + 4..];
        let after_ok = after.trim_start().is_empty() || after.starts_with(closes);
        let not_lead = lower[..i].split_whitespace().count() >= 2;
        before_ok && after_ok && not_lead
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_words_name_the_project() {
        for t in [
            "From now on always use uv, never pip, in this project.",
            "In this repo we squash merge.",
            "Always use tabs in this codebase",
            "Use pnpm here.",
            "Prefer small commits in here, please",
            "这个仓库里提交信息用英文。",
            "本项目统一用 uv。",
            "以后这个项目都用 pnpm",
        ] {
            assert!(names_project_scope(t), "{t}");
        }
        for t in [
            "I prefer short answers.",
            "Here is the plan for the refactor.",
            "Always use uv, never pip.",
            "Keep comments in English wherever you write them",
            "以后提交信息用英文。",
            "The thesis project uses LaTeX.",
            "Here, the build is slow.",
        ] {
            assert!(!names_project_scope(t), "{t}");
        }
    }
}
