//! Which file an entry belongs in when its words name the scope: "in this project", "this repo",
//! "here", "这个仓库", "本项目" put any entry, whatever its category, into the project's file;
//! so does a preference or correction that states a fact of this project ("we use PostgreSQL,
//! not MySQL", "the project is Python", "fixtures go in crates/parser/test_data", 我们的主分支是
//! main): it would be wrong in every other project.

use mem_llm::offline::PROJECT_NOUNS;

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
    "about this project",
    "about this repo",
    "about this codebase",
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

/// Whether `text` says it holds for the current project only (never when it widens the scope:
/// `BEYOND_THIS`, "in this project or any other"): a phrase of `PROJECT_PHRASES` or
/// `PROJECT_PHRASES_ZH`, "here" right after the subject ("every view here needs …", "tests here
/// run with …"), or a clause ending in "here" ("use tabs here."). Such an entry goes to
/// `<project>/.mewcode/memories.md` whatever its category.
pub fn names_project_scope(text: &str) -> bool {
    let lower = text.to_lowercase();
    let padded = padded_words(&lower);
    if widens_scope(&lower, &padded) {
        return false;
    }
    // "项目里" after 所有 / 每个 / 任何 / 哪个 ("我所有项目里都用 rg") is every project, not this one.
    if PROJECT_PHRASES_ZH.iter().any(|p| {
        lower.match_indices(p).any(|(i, _)| {
            !["所有", "每个", "任何", "哪个", "别的", "其他", "其它"]
                .iter()
                .any(|q| lower[..i].ends_with(q))
        })
    }) {
        return true;
    }
    // 这个 repo / 本 project: a Chinese demonstrative before an English word for the project,
    // as a word of its own (not the end of 应该, 版本, 因此).
    let cjk = |c: char| ('\u{4e00}'..='\u{9fff}').contains(&c);
    if ["这个", "本", "该", "此"].iter().any(|d| {
        lower.match_indices(d).any(|(i, _)| {
            // 这个 is always a demonstrative; 本, 该, 此 end many words (应该, 版本, 因此), so
            // they count only after a space, punctuation or a preposition (在本, 对该).
            if *d != "这个"
                && lower[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| cjk(c) && !"在于对给把从让".contains(c))
            {
                return false;
            }
            let rest = lower[i + d.len()..].trim_start();
            PROJECT_NOUNS.iter().any(|n| {
                rest.strip_prefix(n)
                    .is_some_and(|after| !after.starts_with(|c: char| c.is_ascii_alphanumeric()))
            })
        })
    }) {
        return true;
    }
    if PROJECT_PHRASES
        .iter()
        .any(|p| padded.contains(&format!(" {p} ")))
    {
        return true;
    }
    // "for this platform repo", "in our main codebase": the phrases with one word between the
    // demonstrative and the noun.
    let w: Vec<&str> = padded.split_whitespace().collect();
    if w.windows(4).any(|x| {
        ["in", "for", "on", "about"].contains(&x[0])
            && ["this", "our"].contains(&x[1])
            && ![
                "and", "or", "other", "next", "last", "old", "previous", "new",
            ]
            .contains(&x[2])
            && PROJECT_NOUNS.contains(&x[3])
    }) {
        return true;
    }
    // "not here, not anywhere", "on my machine": the rule holds beyond this project, whatever
    // "here" says ("everywhere" alone may mean everywhere in it: "we use httpx everywhere");
    // an explicit phrase ("in this repo") above wins over them.
    if USER_WIDE
        .iter()
        .filter(|w| **w != "everywhere")
        .any(|w| lower.contains(w))
        || all_projects_zh(&lower)
    {
        return false;
    }
    // "here" right after the subject ("every SwiftUI view here needs …", "tests here run with
    // …"): the things of this project. The subject's noun opens the sentence or has a
    // determiner one to three words before "here"; a verb follows it.
    const SUBJECT_VERBS: &[&str] = &[
        "need", "needs", "must", "should", "use", "uses", "go", "goes", "live", "lives", "run",
        "runs", "get", "gets",
    ];
    // Words before "here" that are no subject of the project's ("the point here is", "ok here
    // is my rule", "all I ask here is").
    const NOT_SUBJECTS: &[&str] = &[
        "ok", "okay", "so", "and", "then", "now", "point", "thing", "idea", "ask", "problem",
        "question", "issue", "goal", "rule", "what", "i", "we", "you",
    ];
    if w.iter().enumerate().any(|(i, word)| {
        *word == "here"
            && i >= 1
            && !NOT_SUBJECTS.contains(&w[i - 1])
            && w.get(i + 1).is_some_and(|v| SUBJECT_VERBS.contains(v))
            && (i == 1
                || (2..=4).any(|back| {
                    i >= back
                        && ["every", "each", "all", "the", "our", "any"].contains(&w[i - back])
                }))
    }) {
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

/// The words of `lower` (letters, digits, `'`, `_`, `-`) joined by one space, with a space
/// before and after, so a phrase is found as whole words by `contains(" {phrase} ")`.
fn padded_words(lower: &str) -> String {
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    format!(" {} ", words.join(" "))
}

/// Words widening a phrase naming this project to every project ("in this project or any
/// other", "wherever we're working"): the entry is the user's, whatever phrase came before.
const BEYOND_THIS: &[&str] = &[
    "or any other project",
    "or any other repo",
    "or any other codebase",
    "or any other one",
    "or anywhere else",
    "and everywhere else",
    "wherever we",
    "wherever we're",
    "wherever you",
    "wherever i",
    "wherever i'm",
    "其他项目也",
    "别的项目也",
];

/// Whether `lower` widens the scope to every project ([`BEYOND_THIS`], whole words, or "or any
/// other" closing a clause: "in this project or any other."); `padded` is `padded_words(lower)`.
fn widens_scope(lower: &str, padded: &str) -> bool {
    BEYOND_THIS.iter().any(|w| {
        if w.is_ascii() {
            padded.contains(&format!(" {w} "))
        } else {
            lower.contains(w)
        }
    }) || lower.match_indices("or any other").any(|(i, m)| {
        lower[i + m.len()..]
            .trim_start()
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '.' | ',' | ';' | '!' | ')' | '。' | '，'))
    })
}

/// Whether `lower` says "all / any / every … project" in Chinese with words between
/// (我所有 Go 项目, 任何前端项目, 每个 Python 仓库): 所有 / 任何 / 每个 / 全部 up to eight
/// characters before 项目 or 仓库, no stop or comma between.
fn all_projects_zh(lower: &str) -> bool {
    lower.match_indices(['项', '仓']).any(|(i, _)| {
        let rest = &lower[i..];
        if !(rest.starts_with("项目") || rest.starts_with("仓库")) {
            return false;
        }
        // 子项目 is a part of this one (每个子项目都有自己的 Makefile).
        if lower[..i].ends_with('子') {
            return false;
        }
        let before: Vec<char> = lower[..i].chars().rev().take(8).collect();
        let window: String = before
            .iter()
            .take_while(|c| !matches!(c, '，' | ',' | '。' | '；' | ';' | '、'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        ["所有", "任何", "每个", "全部"]
            .iter()
            .any(|q| window.contains(q))
    })
}

/// Words saying an entry holds for all of the user's projects ("for all my projects", 所有项目):
/// such an entry stays in the user's file whatever else it names.
const USER_WIDE: &[&str] = &[
    "how i work",
    "my habit",
    "我习惯",
    "我的习惯",
    "all my",
    "my projects",
    "every project",
    "all projects",
    "any project",
    "every repo",
    "all repos",
    "everywhere",
    "anywhere",
    "on my machine",
    "on my laptop",
    "any repo",
    "any codebase",
    "every codebase",
    "any of my",
    "所有项目",
    "每个项目",
    "我的项目",
    "所有仓库",
    "哪个项目",
    "任何项目",
    "哪个仓库",
    "任何仓库",
];

/// Nouns naming a part of this project when they are the subject ("the service uses port 8080",
/// "the project is Python, not Go"), after an optional "the" / "this" / "our".
const PROJECT_SUBJECTS: &[&str] = &[
    "project",
    "repo",
    "repository",
    "codebase",
    "monorepo",
    "app",
    "application",
    "service",
    "server",
    "backend",
    "frontend",
    "api",
    "endpoint",
    "database",
    "db",
    "ci",
    "pipeline",
    "staging",
    "prod",
    "production",
    "cluster",
];

/// Chinese words naming this project's things: 我们 (the team), 项目, 仓库, 主分支, 目录, 端口.
const PROJECT_WORDS_ZH: &[&str] = &["我们", "项目", "仓库", "代码库", "主分支", "目录", "端口"];

/// Config-file endings: a token ending in one names a file of this project.
const CONFIG_ENDINGS: &[&str] = &[
    ".toml", ".json", ".yaml", ".yml", ".lock", ".cfg", ".ini", ".env", ".conf",
];

/// Whether a token is a path of the project: `crates/parser/test_data`, `src/gen/`, `./bin`,
/// `config.toml`, `.env` (a URL, "and/or", a lone `/` or a path in the user's home such as
/// `~/dotfiles/snippets.json` is not).
fn is_project_path(token: &str) -> bool {
    let t = token
        .trim_start_matches(['`', '"', '\'', '('])
        .trim_end_matches(['`', '"', '\'', ',', '.', ';', ':', ')', '!', '?']);
    if t.contains("://") || t.len() < 3 || mem_llm::offline::is_home_path(t) {
        return false;
    }
    let lower = t.to_lowercase();
    // A dotfile: `.env`, `.env.example`, `.gitignore`.
    let dotfile = t.strip_prefix('.').is_some_and(|name| {
        name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    });
    if dotfile || CONFIG_ENDINGS.iter().any(|e| lower.ends_with(e)) {
        return true;
    }
    if !t.contains('/') {
        return false;
    }
    let segments: Vec<&str> = t.split('/').filter(|s| !s.is_empty()).collect();
    token
        .trim_end_matches(['.', ',', ';', ':', '`'])
        .ends_with('/')
        || t.starts_with(['.', '~', '/'])
        || segments.len() >= 3
        || segments.last().is_some_and(|s| s.contains(['.', '_']))
}

/// Whether `text` states a fact of this project rather than a habit of the user: "we" / "our"
/// speaking for the team, a project noun as the subject ("the service uses port 8080"), a path
/// or config file of the project, a port, project knowledge by value and topic
/// naming a value only this project has ([`mem_llm::offline::is_project_rule`]: "PRs go
/// against `staging`, not main"), or (Chinese) 我们 / 项目 / 仓库 / 主分支 / 目录 / 端口;
/// `false` when it says it holds for all the user's projects ("for all my projects", "wherever
/// we're working"). A preference or correction stating such a fact goes to
/// `<project>/.mewcode/memories.md`.
pub fn states_project_fact(text: &str) -> bool {
    let lower = text.to_lowercase();
    if USER_WIDE.iter().any(|w| lower.contains(w))
        || all_projects_zh(&lower)
        || widens_scope(&lower, &padded_words(&lower))
    {
        return false;
    }
    // A value of the project and a project topic ("PRs go against `staging`, not main").
    if mem_llm::offline::is_project_rule(text) {
        return true;
    }
    if PROJECT_WORDS_ZH.iter().any(|w| lower.contains(w)) {
        return true;
    }
    let raw: Vec<&str> = text.split_whitespace().collect();
    if raw.iter().any(|t| is_project_path(t)) {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| matches!(*w, "we" | "we're" | "we've" | "our" | "ours"))
    {
        return true;
    }
    if words
        .windows(2)
        .any(|p| p[0] == "port" && p[1].chars().all(|c| c.is_ascii_digit()))
    {
        return true;
    }
    // A project noun as the subject: the first words, after an opener such as "no" / "actually".
    let mut rest = words.as_slice();
    while let [first, tail @ ..] = rest {
        if matches!(
            *first,
            "no" | "actually"
                | "nope"
                | "wrong"
                | "the"
                | "this"
                | "our"
                | "dev"
                | "main"
                | "web"
                | "api's"
        ) {
            rest = tail;
        } else {
            break;
        }
    }
    // "the metrics endpoint is …", "the payments service runs …": one word may name which.
    if let [modifier, _, ..] = rest
        && !matches!(*modifier, "i" | "my" | "your" | "you" | "his" | "her")
        && project_subject_then_verb(&rest[1..])
    {
        return true;
    }
    project_subject_then_verb(rest)
}

/// `true` when `words` start with a project subject ([`PROJECT_SUBJECTS`]) and a verb of a
/// fact ("api is", "service runs").
fn project_subject_then_verb(rest: &[&str]) -> bool {
    rest.first().is_some_and(|w| PROJECT_SUBJECTS.contains(w))
        && rest.get(1).is_some_and(|w| {
            matches!(
                *w,
                "is" | "uses"
                    | "runs"
                    | "listens"
                    | "serves"
                    | "needs"
                    | "requires"
                    | "talks"
                    | "lives"
                    | "has"
                    | "reads"
                    | "writes"
                    | "targets"
                    | "deploys"
                    | "was"
                    | "isn't"
                    | "doesn't"
                    | "only"
                    | "should"
                    | "must"
                    | "can't"
                    | "cannot"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_words_name_the_project() {
        for t in [
            "every SwiftUI view here needs a `#Preview` block at the bottom.",
            "Tests here run with `just test`.",
            // Words near the widening phrases that do not widen.
            "In this repo, prefer `anyhow` wherever it fits.",
            "Put fixtures in `tests/fixtures` in this repo, not in `src/` or elsewhere.",
            "In this project, wrap `reqwest` and any other HTTP client in `net::Client`.",
            "From now on always use uv, never pip, in this project.",
            "In this repo we squash merge.",
            "Always use tabs in this codebase",
            "Use pnpm here.",
            "Prefer small commits in here, please",
            "这个仓库里提交信息用英文。",
            "本项目统一用 uv。",
            "以后这个项目都用 pnpm",
            "The thing to know about this codebase is that tables are partitioned.",
            "这个 repo 里 private 函数不要加 `@spec`。",
            "在这个 repo 里别用 sed -i。",
            "在本 project 中统一用 mix format。",
            "本project统一用 mix format。",
            "The state for this platform repo lives in GCS, never commit a local state file.",
            "In our main codebase we never use unwrap().",
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
            "这个 reporter 的输出太长了。",
            "In this old repo we used tabs, use spaces in the new one.",
            "Use rg for every project, not just this repo.",
            // A phrase naming this project, widened to every project.
            "Don't reformat whole files, in this project or any other.",
            "Here the tests are slow.",
            // "here" after a word that is no subject of the project's.
            "Ok here is my rule: always rebase, never merge.",
            "The point here is to always write the test first.",
            "All I ask here is that you run the tests.",
            "pnpm 应该 workspace 级别安装",
            "升级到新版本 repository 工具",
            "因此 project 的名字要小写",
        ] {
            assert!(!names_project_scope(t), "{t}");
        }
    }

    #[test]
    fn facts_of_this_project_name_the_project() {
        for t in [
            "Actually, we use PostgreSQL, not MySQL — we migrated last year.",
            "The project is Python, not Go.",
            "No, the dev server uses port 8080, not 3000.",
            "Parser fixtures go in crates/parser/test_data, not tests/fixtures.",
            "Never edit src/gen/ by hand.",
            "Keep secrets out of .env.example.",
            "This service is plain JavaScript, there's no tsc in the build.",
            "我们的主分支是 main，不是 master。",
            "项目实际是 Python 而不是 Go。",
            // An environment variable of the project (stop 40).
            "The training scripts read the hub token from the HF_TOKEN env var, not from the cli login cache.",
        ] {
            assert!(states_project_fact(t), "{t}");
        }
        for t in [
            "Always answer in English.",
            "Use pnpm instead of npm.",
            "I told you to use tabs for indentation in the Go files.",
            "For all my projects: never run `git push --force`, ask me first.",
            "Use the existing helper rather than a new one.",
            "Never hardcode the key.",
            "Use and/or sparingly in docs.",
            "See https://x.dev/a/b/c for the style guide.",
            "以后提交信息用英文。",
            // "we" of wherever the user works; the user's own way.
            "Please always make a new commit instead, wherever we're working.",
            "I squash my WIP commits before review, that's how I work in our repos too.",
            // 所有 / 任何 … 项目 with words between is every project (stop 47).
            "每次改完 Go 代码都用 gofumpt 格式化，别只跑 gofmt，我所有 Go 项目都是这样。",
            "任何前端项目都用 pnpm，npm 会生成 package-lock.json。",
        ] {
            assert!(!states_project_fact(t), "{t}");
            assert!(!names_project_scope(t), "{t}");
        }
        // 子项目 is a part of this project; a stop between 所有 and 项目 ends the phrase.
        assert!(!all_projects_zh(
            "每个子项目都有自己的 Makefile，根目录的 make 会依次调用。"
        ));
        assert!(!all_projects_zh("所有测试都要过，项目里的 CI 会检查。"));
        assert!(all_projects_zh("我所有 Go 项目都是这样"));
    }
}
