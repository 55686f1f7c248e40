//! Retired values: what a new entry says is no longer used ("the dev server isn't on 8000
//! anymore", "we no longer support Python 3.8", "we renamed `master`", "我们已经放弃 3.8 了"), so
//! that the older entry stating it can be removed when the new one is merged. (Seed 000 §3 gives
//! the extraction the current `memories.md` with the new messages; an entry that a later
//! statement contradicts is replaced, not kept next to it.)
//!
//! Precision first: a stale entry kept is a wrong memory, but a good entry removed is a memory
//! lost. So an older entry is superseded only when all of these hold (two reviews' look-alikes
//! are pinned in `tests/changes.rs`):
//!
//! - the new entry names a value as retired in one of the forms of [`retired_terms`] (a negation
//!   with "anymore", "no longer …", "retired / dropped / renamed / replaced / switched from …",
//!   "… is gone / deprecated / no longer supported", "… doesn't exist", 放弃 / 不再用 / 废弃 … or
//!   … 不用了), and is not a question, plan, suggestion, negated change or report (`NOT_A_CHANGE`);
//! - the older entry states that value as a whole word, not negated ([`crate::merge`]'s
//!   `states`);
//! - the two entries share a content word besides the value, or the older entry says nothing
//!   else ([`shares_topic`]); the new one names no other subject before its verb
//!   ([`other_subject`]: "the docs package switched from npm") and no limit after the value
//!   ([`narrower_after`]: "…anymore, only locally", "…for the analytics replica").
//!
//! A second, narrower form needs no retiring words ([`KeyedChange`]): the older entry gives a
//! number or version to a key ("minSdk is 24", "Node 版本固定为 18"), the new one gives the same
//! key another number with a strong word of change in the same clause ("minSdk went up to 26",
//! "迁移到 Node 22 了"), every other ASCII word of the older entry is in that clause, nothing else
//! is named before the key, and no limit follows the value.

use std::sync::LazyLock;

use mem_llm::offline::update::{STOP, clause_start, content_words, stem};
use regex::Regex;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// One character of a clause, or a `.` / `:` inside a word (`3.8`, `app:bundle`): a term never
/// runs over a clause's end.
const CLAUSE_END: &str =
    r"(?:[^,.;:!?()\[\]，。；：！？（）]|[.:][^\s,.;:!?()\[\]，。；：！？（）])";

/// "… isn't on 8000 anymore", "don't use --release for dev anymore", "never pip install
/// anything anymore": the words between a negation and "anymore".
static NEGATED_ANYMORE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"\b(?:isn't|isnt|is not|aren't|arent|are not|not|don't|dont|do not|doesn't|doesnt|does not|never|no)\s+(?P<t>{CLAUSE_END}{{1,60}}?)\s+any ?more\b"
    ))
});

/// "no longer use X", "retired X", "dropped X", "renamed X (to Y)", "replaced X (with Y)",
/// "switched from X (to Y)", "moved (the docs) off X", "got rid of X", "stopped using X".
static RETIRED_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"\b(?:no longer (?:use|uses|using|run|runs|need|needs|support|supports)|stopped using|retired|dropped|ditched|deprecated|removed|renamed|replaced|got rid of|moved (?:(?:the|our) [a-z]+ )?(?:off(?: of)?|away from)|switched (?:away )?from|migrated (?:away )?from|moved from)\s+(?P<t>{CLAUSE_END}{{1,60}})"
    ))
});

/// "X is gone", "X was removed", "X has been deprecated", "X is no longer supported", "X doesn't
/// even exist". ("X is out" is left out: it says as often that X was released.)
static RETIRED_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?P<t>{CLAUSE_END}{{1,60}}?)\s+(?:(?:is|are|was|were|has been|have been)\s+(?:now\s+)?(?:gone|dead|retired|deprecated|obsolete|removed|dropped|history|no longer (?:supported|used|needed|in use))\b|(?:doesn't|doesnt|does not|don't|dont|do not)\s+(?:even\s+)?exist)"
    ))
});

/// 放弃 / 弃用 / 废弃 / 淘汰 / 不再用 / 换掉 X: an ASCII value (a tool, a version, a port) after
/// the marker. (Bare 不用 is left out: it says "no need to" as often.)
static RETIRED_BEFORE_ZH: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:放弃|弃用|废弃|淘汰|不再用|不再使用|换掉)了?\s*(?P<t>[a-z0-9][a-z0-9._/:@+-]*)")
});

/// 从 X 改成 / 换成 / 迁移到 / 切到 / 升级到 Y: X. (从 alone is "from": 从 main 发布.)
static CHANGED_FROM_ZH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"从\s*(?P<t>[a-z0-9][a-z0-9._/:@+-]*)\s*(?:改成|改为|改到|换成|换到|迁移到|迁到|切到|切换到|升级到|升到)",
    )
});

/// X 不用了 / X 已经废弃 / X 弃用了, also with up to three Han characters naming what X is
/// (develop 分支已经废弃): an ASCII value before the marker. (Not across 的: "npm 的缓存不用了"
/// retires the cache, not npm.)
static RETIRED_AFTER_ZH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?P<t>[a-z0-9][a-z0-9._/:@+-]*)\s*[\p{Han}&&[^的了是也都就还]]{0,3}?(?:已经|已)?(?:不用了|不再用了|废弃|弃用|淘汰)",
    )
});

/// A value that names something exactly: a number or version (`8000`, `3.8`), a flag
/// (`--release`), a path or dotted name (`app/build`, `docker-compose.yml`), an identifier with
/// `_`, `-`, `:`, `@`.
static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|\s)(?P<v>--?[a-z0-9][a-z0-9-]*|[a-z0-9]*[0-9][a-z0-9]*(?:[._:/-][a-z0-9]+)*|[a-z0-9]+(?:[._:/@-][a-z0-9]+)+)(?:\s|$)",
    )
});

/// Words that end a term: what follows them says when, why, to what or for whom.
const TERM_STOPS: &[&str] = &[
    "to",
    "with",
    "for",
    "in",
    "because",
    "since",
    "when",
    "and",
    "but",
    "ago",
    "now",
    "last",
    "months",
    "weeks",
    "years",
    "yesterday",
    "recently",
    "already",
    "entirely",
    "completely",
    "everywhere",
    "by",
    "from",
    "so",
    "as",
    "after",
    "before",
    "anymore",
    "any",
    "inside",
    "of",
    "within",
    "into",
    "upstream",
];

/// Leading words of a term that are not the value: verbs and prepositions of "not on 8000",
/// "don't use --release", "never run X", articles.
const TERM_LEADS: &[&str] = &[
    "use", "using", "uses", "run", "running", "runs", "on", "at", "in", "the", "a", "an", "our",
    "my", "your", "its", "their", "that", "this", "need", "needs", "have", "having", "be", "even",
    "want", "support", "do", "going", "call", "called", "old", "former", "previous", "legacy",
];

/// Trailing filler of a term: "pip install anything", "X stuff".
const TERM_TAILS: &[&str] = &[
    "anything",
    "everything",
    "things",
    "stuff",
    "at",
    "all",
    "here",
    "there",
    "it",
    "them",
    "either",
    "too",
];

/// Words that never make a term alone.
const NOT_A_TERM: &[&str] = &[
    "it",
    "that",
    "this",
    "those",
    "these",
    "them",
    "one",
    "ones",
    "thing",
    "things",
    "which",
    "what",
    "way",
    "anything",
    "everything",
    "something",
    "nothing",
    "more",
    "longer",
    "there",
    "here",
    "he",
    "she",
    "they",
    "we",
    "you",
    "i",
    "old",
    "new",
    "too",
    "so",
];

/// The values `text` says are retired, lowercase, each 1–3 words (or one exact value, see
/// [`VALUE`]); empty when the text retires nothing. Forms: a negation + "anymore", "no longer
/// use X", "retired / dropped / deprecated / removed / renamed / got rid of / moved off / switched
/// from / migrated from X", "X is gone / dead / out / retired / deprecated / obsolete / removed",
/// "X doesn't (even) exist", "X is no longer supported", 放弃 / 弃用 / 废弃 / 淘汰 / 不再用 / 换掉 X,
/// 从 X 改成 / 换成 / 迁移到 Y, X 不用了 / 已经废弃 (the Chinese forms take an ASCII value only).
pub fn retired_terms(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace(['`', '"', '“', '”', '\''], " ");
    // The quotes are gone, but "isn't" needs its apostrophe: read the text once more with only
    // the code quotes blanked for the English forms.
    let english = text.to_lowercase().replace(['`', '"', '“', '”'], " ");
    // A question or a suggestion ("放弃 rebase 吧", "should we drop 3.8?") retires nothing.
    if NOT_A_CHANGE.is_match(&english) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: Option<String>| {
        if let Some(t) = t
            && !out.contains(&t)
        {
            out.push(t);
        }
    };
    for c in NEGATED_ANYMORE.captures_iter(&english) {
        push(term(&c["t"], false));
    }
    for c in RETIRED_BEFORE.captures_iter(&english) {
        push(term(&c["t"], false));
    }
    for c in RETIRED_AFTER.captures_iter(&english) {
        push(term(&c["t"], true));
    }
    for re in [&*RETIRED_BEFORE_ZH, &*CHANGED_FROM_ZH, &*RETIRED_AFTER_ZH] {
        for c in re.captures_iter(&lower) {
            push(term(&c["t"], false));
        }
    }
    out
}

/// The term of a captured phrase: an exact value in it when there is one; else its leading
/// words up to a stop word (`from_end`: its last words, for "X is gone"), at most three.
fn term(phrase: &str, from_end: bool) -> Option<String> {
    let words: Vec<&str> = phrase.split_whitespace().collect();
    // The phrase up to its first stop word ("--release for dev" -> "--release").
    let end = if from_end {
        words.len()
    } else {
        words
            .iter()
            .position(|w| TERM_STOPS.contains(w))
            .unwrap_or(words.len())
    };
    let mut kept: &[&str] = &words[..end];
    if from_end {
        // "…, the deploy script is gone": the last words after a stop word.
        let start = kept
            .iter()
            .rposition(|w| TERM_STOPS.contains(w))
            .map_or(0, |p| p + 1);
        kept = &kept[start..];
        if kept.len() > 3 {
            kept = &kept[kept.len() - 3..];
        }
    }
    while let Some((first, rest)) = kept.split_first()
        && TERM_LEADS.contains(first)
    {
        kept = rest;
    }
    while let Some((last, rest)) = kept.split_last()
        && TERM_TAILS.contains(last)
    {
        kept = rest;
    }
    let joined = kept.join(" ");
    // "Node 16 actions are deprecated": the actions are, not Node 16; a value is the term only
    // as the last word of what is said to be gone.
    let value_in = if from_end {
        kept.last().copied().unwrap_or("")
    } else {
        joined.as_str()
    };
    if let Some(v) = VALUE.captures(value_in) {
        let v = v["v"].trim_end_matches(['.', '/', ':']);
        return (v.len() >= 2).then(|| v.to_owned());
    }
    if kept.is_empty() || kept.len() > 3 || kept.iter().any(|w| NOT_A_TERM.contains(w)) {
        return None;
    }
    (joined.chars().count() >= 2).then_some(joined)
}

/// A limit after a value ("… anymore, only locally", "… for the analytics replica", "… in the
/// mobile SDK docs", "… from the nightly matrix", "… to the internet"): `only`, or a preposition
/// before a word the old entry does not have ("to" only with an article: "… off Sphinx to
/// MkDocs" names what replaced it). Read up to the clause's end.
static LIMIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bonly\b|\bto\s+(?:the|our|a|an)\s+(?P<t>[a-z][a-z0-9_-]{2,})|\b(?:for|in|from|on|within|inside|at)\s+(?:(?:the|our|my|a|an|all|any|every|each|this|some|new|old)\s+)*(?P<w>[a-z][a-z0-9_-]{2,}|ci|qa|ui)\b",
    )
});

/// `true` when `rest` (lowercase text after a retired or changed value, up to its clause's end
/// or the sentence's) narrows the statement to something `old` does not name (see [`LIMIT`]).
pub fn narrower_after(rest: &str, old: &str) -> bool {
    let rest = rest.to_lowercase();
    // ", for the docs site" after "not npm": the clause after the value.
    let rest = rest.trim_start_matches([',', ';', ' ', '，', '；', ')', '`']);
    let old_words = content_words(old);
    let end = rest.find([',', ';', '.', '，', '；', '。']);
    let clause = &rest[..end.unwrap_or(rest.len())];
    // "…, only locally": an "only" just after the clause still limits it.
    let next = end.map_or("", |e| &rest[e..]);
    if next
        .trim_start_matches([',', ';', '，', '；', ' '])
        .starts_with("only ")
    {
        return true;
    }
    LIMIT
        .captures_iter(clause)
        .any(|c| match c.name("w").or_else(|| c.name("t")) {
            None => true,
            Some(w) => {
                let w = w.as_str();
                // "in this monorepo", "for everything": the whole project is no limit.
                let whole = matches!(
                    w,
                    "repo"
                        | "repository"
                        | "project"
                        | "codebase"
                        | "monorepo"
                        | "workspace"
                        | "everything"
                        | "everywhere"
                        | "general"
                );
                !whole
                    && !STOP.contains(&w)
                    && !old_words.contains(stem(w))
                    && !old_words.contains(w)
            }
        })
}

/// Words that end what a clause is about: its verb, a negation, a word of change.
const HEAD_END: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "isn't",
    "aren't",
    "wasn't",
    "doesn't",
    "don't",
    "didn't",
    "no",
    "not",
    "never",
    "now",
    "has",
    "have",
    "had",
    "got",
    "moved",
    "switched",
    "migrated",
    "dropped",
    "retired",
    "renamed",
    "replaced",
    "removed",
    "deprecated",
    "ditched",
    "stopped",
    "went",
    "uses",
    "use",
    "runs",
    "run",
    "lives",
    "listens",
    "listen",
    "serves",
    "goes",
    "go",
    "posts",
    "points",
    "needs",
    "requires",
    "will",
    "should",
    "can",
    "must",
];

/// `true` when the clause of `new` that names `term` is about something `old` does not name:
/// before its verb it has an ASCII content word `old` lacks ("The docs package switched from
/// npm to bun" against "Package manager: npm"; "Tests don't hit the dev server on 8000 anymore"
/// against "The dev server runs on port 8000").
pub fn other_subject(new: &str, old: &str, term: &str) -> bool {
    let lower = new.to_lowercase().replace(['`', '"'], " ");
    let at = lower.find(term).unwrap_or(0);
    let start = clause_start(&lower, at, &[',', ';', '，', '；', '。', '.']);
    names_other_subject(&lower[start..], old, term)
}

/// `true` when the head of `clause` (lowercase; its ASCII words before the first word of
/// [`HEAD_END`]) has a content word that neither `old` nor `term` has.
fn names_other_subject(clause: &str, old: &str, term: &str) -> bool {
    let old_words = content_words(old);
    let term_words = content_words(term);
    clause
        .split_whitespace()
        // Chinese runs on without spaces: the head is read in ASCII words only.
        .take_while(|w| !HEAD_END.contains(w) && w.is_ascii())
        .flat_map(|w| w.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| {
            (w.len() >= 3 || matches!(*w, "ci" | "qa" | "ui"))
                && !STOP.contains(w)
                && !NOT_A_KEY.contains(w)
                && !w.bytes().all(|b| b.is_ascii_digit())
        })
        .map(stem)
        .any(|w| !old_words.contains(w) && !term_words.contains(w))
}

/// A report of what was done ("we ran the benchmark with pnpm", "we tried yarn", "you ran npm
/// install"), lowercase, at the start of a correction's right side: "we" and a verb in the past
/// that is not a decision ("we switched / moved / went / decided …" is one), or "you" (the
/// agent) and a verb in the past.
static WE_DID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^we\s+(?:just\s+|already\s+|accidentally\s+)?(?:ran|did|tried|tested|benchmarked|built|wrote|made|got|used|deployed|pushed|shipped|saw|had|put|set|sent|took)\b|^you\s+(?:just\s+|already\s+|again\s+)?(?:[a-z]+ed|ran|did|wrote|made|got|put|set|took|went|built|sent|forgot)\b",
    )
});

/// Words of a correction saying it holds for now or for one task: "deploy to staging first",
/// "for this experiment", "just this once", "today", "the bug is in prod".
static FOR_NOW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:first|for now|this time|just this once|today|tonight|for this (?:task|pr|ticket|experiment|test|run|one|change|branch|commit)|experiment|temporarily|for the moment|(?:the|this) (?:bug|issue|error|failure|crash|problem))\b",
    )
});

/// Words naming a setting rather than a thing (content words, stemmed): an entry about nothing
/// else ("Default branch: master.", "Container runtime: Docker.", "Indent with 4 spaces.") is
/// what a bare correction ("use main, not master") sets.
const SETTING_WORDS: &[&str] = &[
    "default",
    "main",
    "branch",
    "version",
    "runtime",
    "container",
    "indent",
    "indentation",
    "style",
    "format",
    "formatter",
    "tool",
    "manager",
    "package",
    "command",
    "language",
    "editor",
    "shell",
    "database",
    "engine",
    "framework",
    "library",
    "server",
    "port",
    "host",
    "url",
    "registry",
    "image",
    "runner",
    "test",
    "build",
    "bundler",
    "linter",
    "queue",
    "cache",
    "orm",
    "logging",
    "hosting",
    "theme",
    "font",
    "unit",
    "e2e",
    "integration",
    "deploy",
    "deployment",
    "target",
    "platform",
    "region",
    "provider",
    "client",
    "driver",
    "compiler",
    "interpreter",
    "toolchain",
    "python",
    "node",
    "java",
];

/// An order for the task at hand opening a correction's right side: "run the e2e tests, not the
/// linter", "check the logs", "look at …" (lowercase).
static TASK_ORDER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:please\s+)?(?:run|check|fix|open|edit|look|review|test|debug|redo|retry|try|start|stop|restart|read|update|change|delete|remove|add|install|push|pull|merge|commit|call|ask|show|print|revert|rerun|build|deploy|point)\b",
    )
});

/// "here", "in this repo / project / codebase", 这个项目 / 仓库 (lowercase).
static SAYS_HERE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bhere\b|\b(?:in|for) (?:this|the|our) (?:repo|repository|project|codebase)\b|这个(?:项目|仓库)|本项目",
    )
});

/// Words that head a Chinese clause without naming what it is about: we, I, from now on, now,
/// all, just, please.
const ZH_OPENERS: &[&str] = &[
    "我们", "咱们", "我", "以后", "现在", "都", "就", "请", "还是", "统一", "一律", "全部", "直接",
    "一直", "应该",
];

/// `true` when a correction may supersede the older entry `old`, which states the corrected
/// `term`. `right` is the correction's other side, what is right instead, and `tail` the text
/// after `term` (lowercase: "use pnpm" and "" of "Use pnpm, not npm", as `merge` reads them).
/// Not when:
///
/// - `right` names a subject `old` does not before its verb ("the docs site uses yarn, not npm"
///   leaves "Package manager: npm"; "the metrics endpoint is 9090, not 8080" leaves "The API
///   listens on port 8080"; 文档站点用 yarn，而不是 npm);
/// - the correction narrows itself after its value or after `term` ([`narrower_after`]: "use
///   yarn for the docs site, not npm", "a Map instead of an object for the cache"), or holds
///   for now or for one task ("deploy to staging first, not prod");
/// - `old` is narrower than the correction ("I use npm for my side projects" is left by "use
///   pnpm here, not npm");
/// - `right` reports what was done ("we ran the benchmark with pnpm, not npm"), or is in the
///   first person singular ("I meant the staging bucket, not prod", "I switched to the feature
///   branch now, not main", "I prefer tabs, not spaces"), unless `old` is about the user too
///   ("I use zsh").
pub fn correction_supersedes(right: &str, tail: &str, old: &str, term: &str) -> bool {
    let right = right.to_lowercase().replace(['`', '"'], " ");
    let right = right.trim();
    let tail = tail.to_lowercase().replace(['`', '"'], " ");
    let first_person = right
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .next()
        .is_some_and(|w| {
            matches!(
                w,
                "i" | "i'm" | "i've" | "i'd" | "i'll" | "im" | "ive" | "id"
            )
        })
        || (right.starts_with('我') && !right.starts_with("我们"));
    let about_user = mem_llm::offline::update::names_the_user(&old.to_lowercase());
    if first_person && !about_user && !old.starts_with('我') {
        return false;
    }
    if WE_DID.is_match(right)
        || FOR_NOW.is_match(right)
        || FOR_NOW.is_match(&tail)
        || TASK_ORDER.is_match(right)
    {
        return false;
    }
    // "we use tabs here, not spaces" is about this repository: the user's own "I prefer
    // spaces" stays.
    if about_user && SAYS_HERE.is_match(&format!("{right} {tail}")) {
        return false;
    }
    // What `old` is about, besides the term, is named by the correction, or is the job of a
    // tool the correction puts in the term's place ("Package manager: npm" for "use pnpm, not
    // npm"); "use 4 spaces instead of tabs" leaves "Makefile recipes are indented with tabs",
    // "use pnpm, not npm" leaves "The Dockerfile runs `npm ci`".
    let term_words = content_words(term);
    let old_subject: Vec<String> = content_words(old)
        .into_iter()
        .filter(|w| !term_words.contains(w) && !matches!(w.as_str(), "prefer" | "like" | "want"))
        .collect();
    let said = content_words(&format!("{right} {tail}"));
    let jobs = mem_llm::offline::kinds::jobs_of(term);
    let named = old_subject.is_empty()
        || old_subject.iter().any(|w| said.contains(w))
        || old_subject
            .iter()
            .all(|w| SETTING_WORDS.contains(&w.as_str()))
        || (mem_llm::offline::kinds::same_kind(right, term)
            && old_subject.iter().all(|w| jobs.contains(w)));
    if !named {
        return false;
    }
    let old_lower = old.to_lowercase();
    let old_tail = old_lower
        .find(term)
        .map_or("", |p| &old_lower[p + term.len()..]);
    !right_names_other_subject(right, old, term)
        && !zh_names_other_subject(right, old)
        && !narrower_after(right, old)
        && !narrower_after(&tail, old)
        && !narrower_after(old_tail, &format!("{right} {tail}"))
}

/// [`names_other_subject`] for a correction's right side, except that a right side of at most
/// two words without a verb is the value alone ("pnpm" of "No, pnpm, not npm"; "ruff format"),
/// and one opening with "we", "please", "always" names the team (then only an object of its verb
/// before a preposition can name another thing: "we deploy staging with Argo").
fn right_names_other_subject(right: &str, old: &str, term: &str) -> bool {
    let words: Vec<&str> = right.split_whitespace().collect();
    // "we format with ruff format": the subject is the team, the next word its verb.
    if words
        .first()
        .is_some_and(|w| matches!(*w, "we" | "please" | "let's" | "always"))
    {
        // … unless what follows the verb, before a preposition, names another thing: "we
        // deploy staging with Argo" (for verbs whose object is not the value itself).
        let object: Vec<&str> = words
            .iter()
            .skip(2)
            .take_while(|w| {
                !matches!(
                    **w,
                    "with"
                        | "to"
                        | "on"
                        | "in"
                        | "via"
                        | "through"
                        | "using"
                        | "by"
                        | "from"
                        | "for"
                )
            })
            .copied()
            .collect();
        let verb = words.get(1).copied().unwrap_or("");
        // "we switched: use pnpm": a new clause after the verb, no object.
        if verb.ends_with([':', ',', ';']) {
            return false;
        }
        let value_verb = matches!(
            verb,
            "use"
                | "prefer"
                | "run"
                | "want"
                | "need"
                | "pick"
                | "choose"
                | "go"
                | "went"
                | "switched"
                | "moved"
                | "migrated"
                | "are"
                | "have"
                | "keep"
        );
        let old_words = content_words(old);
        let term_words = content_words(term);
        return !value_verb
            && content_words(&object.join(" "))
                .iter()
                .any(|w| !old_words.contains(w) && !term_words.contains(w));
    }
    let has_verb = words.iter().any(|w| HEAD_END.contains(w) || !w.is_ascii());
    if !has_verb && words.len() <= 2 {
        // The value alone: it replaces `term` when `old` says nothing else, when the two are
        // tools of one kind ("pnpm, not npm") or when its words are `old`'s ("Node 20.11, not
        // 18.19"); "staging, not prod" leaves "Prod DB host: db-prod.internal".
        let term_words = content_words(term);
        let old_words = content_words(old);
        let says_more = old_words.iter().any(|w| !term_words.contains(w));
        // "Node 20.11, not 18.19" against "Node 18.19 is required": the value names the
        // entry's own subject.
        let right_words = content_words(right);
        let names_its_subject =
            !right_words.is_empty() && right_words.iter().all(|w| old_words.contains(w));
        return says_more && !names_its_subject && !mem_llm::offline::kinds::same_kind(right, term);
    }
    names_other_subject(right, old, term)
}

/// `true` when `right` starts with Chinese words naming what it is about (after
/// [`ZH_OPENERS`]) that `old` lacks: 文档站点 of 文档站点用 yarn.
fn zh_names_other_subject(right: &str, old: &str) -> bool {
    let mut rest = right.trim_start();
    while let Some(r) = ZH_OPENERS.iter().find_map(|o| rest.strip_prefix(o)) {
        rest = r.trim_start();
    }
    let head: String = rest
        .chars()
        .take_while(|c| ('\u{4e00}'..='\u{9fff}').contains(c) && !"用是在跑走改换".contains(*c))
        .collect();
    if head.chars().count() < 2 {
        return false;
    }
    let old_words = content_words(old);
    content_words(&head).iter().any(|w| !old_words.contains(w))
}

/// `true` when the older entry `old` may be superseded by `new`, which retires `term`: `old` is
/// about nothing but `term` ("I use neovim": no content word besides it), opens with it
/// ("Storybook runs with `pnpm storybook`."), says nothing else but a setting or the job of
/// `term`'s kind of tool ("Error tracking: Sentry."), or the two share a content word
/// ([`content_words`]) that is not a word of `term`, so they are about the same thing ("The dev
/// server runs on port 8000." and "The dev server isn't on 8000 anymore" share "server"; "The
/// metrics exporter listens on 8000." is left alone).
pub fn shares_topic(old: &str, new: &str, term: &str) -> bool {
    let term_words = content_words(term);
    let a = content_words(old);
    if !a.is_empty() && a.iter().all(|w| term_words.contains(w)) {
        return true;
    }
    // `old` is about the retired thing itself: it opens with it ("Storybook runs with `pnpm
    // storybook`."), or says nothing else but the setting it fills or its tool's job ("Error
    // tracking: Sentry.").
    let lower = old.to_lowercase().replace(['`', '"', '*'], "");
    let lower = lower.trim_start_matches(['-', ' ']);
    let head = lower.strip_prefix("the ").unwrap_or(lower);
    if head
        .strip_prefix(term)
        .is_some_and(|rest| rest.starts_with([' ', ':', ',']))
    {
        return true;
    }
    let jobs = mem_llm::offline::kinds::jobs_of(term);
    if a.iter()
        .filter(|w| !term_words.contains(*w))
        .all(|w| jobs.contains(w) || SETTING_WORDS.contains(&w.as_str()))
    {
        return true;
    }
    let b = content_words(new);
    a.intersection(&b).any(|w| !term_words.contains(w))
}

/// A key given a number or version: `port 8000`, `minsdk is 24`, `python 3.8`, `node 版本固定为
/// 18`, `minsdk went up to 26` (the key, words of change or of being between, up to six Han
/// characters, then the value).
static KEYED_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?P<k>[a-z][a-z0-9_]{2,})(?:\s+(?:is|are|was|were|on|at|to|of|from|version|now|went|up|down|moved|bumped|raised|lowered|changed|set))*\s*[:=]?\s*(?:\p{Han}{1,6}\s*)?v?(?P<v>\d+(?:\.\d+)*)(?:[^0-9a-z.]|\.(?:[^0-9]|$)|$)",
    )
});

/// Words that are never a key or a word naming what an entry is about.
const NOT_A_KEY: &[&str] = &[
    "the", "and", "with", "for", "from", "run", "runs", "running", "use", "uses", "using", "went",
    "moved", "bumped", "set", "now", "was", "are", "been", "has", "have", "only", "just", "also",
    "still", "last", "since", "about", "than", "over", "under", "every", "after", "before",
    "until", "live", "lives", "listen", "listens", "serve", "serves", "need", "needs", "require",
    "requires", "support", "supports", "pin", "pinned", "target", "targets", "raised", "lowered",
    "changed", "version", "our", "its", "this", "that", "day", "days", "week", "weeks", "month",
    "months", "year", "years", "ago", "min", "max", "minute", "minutes", "second", "seconds",
];

/// A key given a number in a text ([`KEYED_NUMBER`]), lowercase.
struct KeyedNumber {
    key: String,
    value: String,
    /// The words of its clause before the key.
    head: String,
    /// Its whole clause.
    clause: String,
}

/// Each [`KeyedNumber`] of `text`.
fn keyed_numbers(text: &str) -> Vec<KeyedNumber> {
    let lower = text.to_lowercase().replace(['`', '"', '“', '”'], " ");
    let mut out = Vec::new();
    for c in KEYED_NUMBER.captures_iter(&lower) {
        let key = &c["k"];
        if NOT_A_KEY.contains(&key) {
            continue;
        }
        let at = c.name("v").map_or(0, |m| m.start());
        let start = clause_start(&lower, at, &[',', ';', '(', '，', '；', '（', '。']);
        let key_at = c.name("k").map_or(at, |m| m.start()).max(start);
        let end = lower[at..]
            .find([',', ';', '，', '；', '。'])
            .map_or(lower.len(), |p| at + p);
        out.push(KeyedNumber {
            key: key.to_owned(),
            value: c["v"].to_owned(),
            head: lower[start..key_at].to_owned(),
            clause: lower[start..end].to_owned(),
        });
    }
    out
}

/// A new entry giving keys numbers with a word of change: read once, checked against each older
/// entry ([`KeyedChange::replaces`]).
pub struct KeyedChange {
    pairs: Vec<KeyedNumber>,
}

impl KeyedChange {
    /// The keyed numbers of `new`; `None` when it has none or is not a change ([`NOT_A_CHANGE`]).
    pub fn of(new: &str) -> Option<KeyedChange> {
        if NOT_A_CHANGE.is_match(&new.to_lowercase()) {
            return None;
        }
        let pairs = keyed_numbers(new);
        (!pairs.is_empty()).then_some(KeyedChange { pairs })
    }

    /// `true` when this change gives a key of `old` another number or version ("minSdk is 24"
    /// → "minSdk went up to 26"): the same key, a different value and not the old one for that
    /// key; in the new value's clause a strong word of change ([`STRONG_CHANGE`]), every other
    /// ASCII word of `old` (outside code spans and asides, less the key and [`NOT_A_KEY`]), no
    /// word before the key that `old` lacks, and no limit after the value ([`narrower_after`]).
    /// "The staging server runs on port 8001 now" does not replace "The dev server runs on port
    /// 8000": "dev" is missing.
    pub fn replaces(&self, old: &str) -> bool {
        let old_words = content_words(old);
        // What the old value is of: the old entry's words outside its code spans and asides.
        // ASCII words only: Han pairs are too many and too loose to be all said again.
        let about = content_words(&ASIDE.replace_all(old, " "));
        keyed_numbers(old).iter().any(|was| {
            let same_key: Vec<&KeyedNumber> =
                self.pairs.iter().filter(|p| p.key == was.key).collect();
            if same_key.is_empty() || same_key.iter().any(|p| p.value == was.value) {
                return false;
            }
            let about: Vec<&String> = about
                .iter()
                .filter(|w| w.is_ascii() && **w != was.key && !NOT_A_KEY.contains(&w.as_str()))
                .collect();
            // The new value's own clause says the change, names what the old value was of, and
            // names nothing else before the key ("Redis moved to port 6380, the dev server
            // stays" gives Redis a port; "The test database runs Postgres 16" is another
            // database; "We're on Java 8 now for the legacy payments module" is narrower).
            same_key.iter().any(|now| {
                let words = content_words(&now.clause);
                let after = now
                    .clause
                    .split_once(now.value.as_str())
                    .map_or("", |(_, a)| a);
                !narrower_after(after, old)
                    && STRONG_CHANGE.is_match(&now.clause)
                    && about.iter().all(|w| words.contains(*w))
                    && content_words(&now.head).iter().all(|w| {
                        old_words.contains(w)
                            || NOT_A_KEY.contains(&w.as_str())
                            || FILLER.contains(&w.as_str())
                            || is_function_bigram(w)
                    })
            })
        })
    }
}

/// Openers before what a clause is about: "quick update: minSdk …", "fyi the port …".
const FILLER: &[&str] = &[
    "quick", "update", "fyi", "btw", "heads", "okay", "yes", "yeah", "note", "actually", "well",
    "anyway", "just", "also", "and",
];

/// A change said strongly enough to replace a key's number (without one, two values of a key are
/// two facts): a verb of change, or a state with "now" ("minSdk is 26 now"); not a bare "now"
/// ("dev server running now at port 5173", a log).
static STRONG_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:moved|changed|switched|bumped|went|raised|lowered|upgraded|downgraded|migrated|anymore|no longer)\b|\b(?:is|are|'s|'re)\b[^,;]{0,40}\bnow\b|\bnow\s+(?:is|are)\b|现在|改成|改为|换成|迁移|升级|升到|换了|改了",
    )
});

/// Code spans and parenthesised asides of an entry: its values and details, not what it is
/// about.
static ASIDE: LazyLock<Regex> = LazyLock::new(|| re(r"`[^`]*`|\([^)]*\)|（[^）]*）"));

/// A pair of Han characters holding a function character (我们, 已经, 迁移到, 现在是 …): no topic.
fn is_function_bigram(w: &str) -> bool {
    w.chars().all(|c| !c.is_ascii())
        && w.chars()
            .any(|c| "我们你他她它的了是在已经现迁移到改成换为把从也都就还要用这那个让".contains(c))
}

/// Not a change, whatever the words: a question, a plan or suggestion, a negation or "still",
/// an addition ("also"), reported speech (lowercase text).
static NOT_A_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        [?？]\s*$ | 吗[。.!！]?\s*$ | 吧[，,。.!！]|吧\s*$ | 要不 | 想 | 打算 | 说
        | ^(is|are|does|do|did|can|could|should|would|will|what|which|why|how|whether)\b
        | \b(maybe|might|if|let's|lets|should|will|going\ to|plan|want|still|stays|unchanged|also|too|another|said|says|mentioned|apparently|according\ to|didn't|hasn't|wasn't|weren't|haven't)\b
        | \b(is|are|'s|'re)\s+(\w+\s+){0,2}?(out|stable|released|available|live|ready|faster|slower|better|worse|nicer|broken|fixed|done|great|nice|cool|awesome)\b
    ")
});
#[cfg(test)]
mod tests {
    use super::*;

    /// [`KeyedChange::replaces`] for one pair of entries.
    fn changed_value(old: &str, new: &str) -> bool {
        KeyedChange::of(new).is_some_and(|change| change.replaces(old))
    }

    #[test]
    fn retired_values_in_their_forms() {
        let check = |text: &str, want: &[&str]| {
            assert_eq!(retired_terms(text), want, "{text}");
        };
        check(
            "The dev server isn't on 8000 anymore, we moved it to 5173 when we switched to vite.",
            &["8000"],
        );
        check(
            "We don't use --release for dev anymore, it's `cargo run --features bevy/dynamic_linking` now.",
            &["--release"],
        );
        check(
            "Never pip install anything anymore, i moved all my python stuff over to uv.",
            &["pip install"],
        );
        check(
            "I use 2-space indentation everywhere now, tabs are out.",
            &[],
        );
        check(
            "We renamed `master` months ago, the default branch is trunk now.",
            &["master"],
        );
        check("We switched from npm to pnpm.", &["npm"]);
        check(
            "Python 3.8 is no longer supported; the floor is 3.10.",
            &["3.8"],
        );
        check("We no longer support Python 3.8.", &["3.8"]);
        check("The old deploy script is gone.", &["deploy script"]);
        check("我们从 mysql 迁移到了 postgres。", &["mysql"]);
        check("从 main 分支发布。", &[]);
        check("The 2.0 release is out now.", &[]);
        check(
            "可以，而且我们已经放弃 3.8 了，最低版本现在是 3.10。",
            &["3.8"],
        );
        check("现在不再用 npm 了，统一用 pnpm。", &["npm"]);
        check("yarn 已经不用了。", &["yarn"]);
        check(
            "develop 分支已经废弃了，现在都是直接从 main 切分支。",
            &["develop"],
        );
        check("npm 的缓存不用了。", &[]);
        check("We replaced eslint with biome for linting.", &["eslint"]);
        check(
            "We moved the docs off Sphinx to MkDocs Material.",
            &["sphinx"],
        );
        check("Deploy.sh is deprecated, don't use it.", &["deploy.sh"]);
        check("Always run the tests before committing.", &[]);
        check(
            "I got rid of the prod flag check inside deploy.sh.",
            &["prod flag check"],
        );
        check("Don't use port 8000 for the metrics exporter.", &[]);
        check("It doesn't exist yet.", &[]);
    }

    #[test]
    fn a_retirement_supersedes_only_an_entry_on_the_same_topic() {
        let new = "The dev server isn't on 8000 anymore, we moved it to 5173.";
        assert!(shares_topic(
            "The dev server runs on port 8000.",
            new,
            "8000"
        ));
        assert!(!shares_topic(
            "The metrics exporter listens on 8000.",
            new,
            "8000"
        ));
        assert!(shares_topic(
            "项目支持 Python 3.8 及以上。",
            "我们已经放弃 3.8 了，pyproject 里 requires-python 也改了。",
            "3.8"
        ));
        assert!(shares_topic(
            "I use neovim",
            "I'm on Helix these days, not neovim anymore.",
            "neovim"
        ));
        // An entry opening with the retired thing is on its topic; the limit after it ("for
        // sessions") is what keeps this one (pinned in tests/changes.rs, d07).
        assert!(shares_topic(
            "Redis runs on port 6379 in docker compose.",
            "We don't use Redis for sessions anymore.",
            "redis"
        ));
        assert!(narrower_after(
            " for sessions anymore.",
            "Redis runs on port 6379 in docker compose."
        ));
        assert!(shares_topic(
            "Error tracking: Sentry.",
            "We don't use Sentry anymore.",
            "sentry"
        ));
        assert!(!shares_topic(
            "Deploy with `./scripts/deploy.sh prod`",
            "I renamed a variable inside deploy.sh.",
            "deploy.sh"
        ));
    }

    #[test]
    fn a_key_given_another_number_with_a_word_of_change() {
        assert!(changed_value(
            "minSdk is 24",
            "quick update: minSdk went up to 26 in the last release."
        ));
        assert!(changed_value(
            "The dev server runs on port 8000 (`npm run dev`).",
            "We moved the dev server to port 3000 last week, it's the vite default now."
        ));
        assert!(changed_value(
            "Node 版本固定为 18",
            "我们已经迁移到 Node 22 了，.nvmrc 也改了，别再按 18 来。"
        ));
        // Another server, no word of change, the same value, another key.
        assert!(!changed_value(
            "The dev server runs on port 8000.",
            "The staging server runs on port 8001 now."
        ));
        assert!(!changed_value(
            "The dev server runs on port 8000.",
            "We also have a dev server for the admin on port 8001."
        ));
        assert!(!changed_value(
            "The dev server runs on port 8000.",
            "Don't use port 8000 for the metrics exporter now, the dev server has it."
        ));
        assert!(!changed_value(
            "The project supports Python 3.8 and up.",
            "The new service now uses Python 3.12."
        ));
        assert!(!changed_value(
            "Timeouts are 30 seconds.",
            "Retries now wait 5 seconds."
        ));
    }
}
