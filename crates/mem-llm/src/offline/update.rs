//! Updates of known entries without a model (seed 000 §3 merging, the offline counterpart of a
//! model's UPDATE): a sentence of the user that says something stored has changed ("e2e is
//! Playwright now, `npx playwright test`" while the file holds "E2E tests: `npx cypress run`")
//! replaces that entry, in its file and category.
//!
//! A sentence updates an entry only when all of these hold (precision first: a wrong update
//! loses a good memory; a review's ~240 look-alikes shaped them, `mem-auto`'s
//! `tests/changes.rs`):
//!
//! - it is what the user says: not inside a code fence, not a quoted (`> `), grep or commit
//!   message line (`PASTED`);
//! - it says a change as a statement (`CHANGE`: "X is Y now", "now uses", "anymore", "no
//!   longer", "moved / switched / migrated … to", "renamed … to", "replaced … with", "is gone",
//!   现在是, 改成, 换成, 迁移到 …), and is none of `NOT_A_CHANGE`: a negation or "still", an
//!   addition ("also", "another"), a question (with or without "?"), a plan, a hedge, reported
//!   speech, a failure report, a branch or a PR; nor a one-off;
//! - it is about exactly one entry (`about`: at least half of the entry's content words, or
//!   three), and names every word of that entry's subject (its words outside values:
//!   `subject_words`), and nothing else before its verb (`names_another_subject`), nor a part
//!   or a narrower scope ("the dev server proxy", "… for the e2e suite":
//!   `names_a_compound_or_scope`);
//! - an instruction or a first-person event ("now run …", "I moved the config test") changes only
//!   the user's own habits ("I switched to …"), and a sentence about this repository never
//!   rewrites the user's file;
//! - it brings a word or value the entry lacks (not a confirmation said again).

use std::collections::HashSet;
use std::sync::LazyLock;

use mem_core::{Message, Role};
use regex::Regex;

use super::facts;
use super::knowledge;
use super::text::{closed, is_han, one_line, user_text};
use crate::types::{CurrentEntry, EntryChange};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// A change said as a statement (lowercase text): a state with "now" ("e2e is Playwright now",
/// "alerts now post to #pay-alerts"), "anymore" / "no longer", "moved / switched / migrated /
/// changed / upgraded / bumped / went (up) … to", "switched from", "renamed … to", "replaced …
/// with", "is gone", 现在是 / 现在用, 改成, 换成, 迁移到, 升级到, 不再用. Bare "now" is not one
/// ("Now run the dev server", "the tests are failing now").
static CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(is|are|'s|'re|uses|use|runs|run|lives|live|goes|go|posts|post|points|point|defaults|default|targets|target|requires|require)\b[^,;:]{1,40}?\bnow\b
        | \bnow\s+(is|are|uses|use|runs|run|lives|live|goes|go|posts|post|points|requires|targets|defaults)\b
        | \b(anymore|any\ more|no\ longer)\b
        | \b(moved|switched|migrated|changed|upgraded|bumped|went(\ up|\ down)?)\s+(\S+\s+){0,4}?(to|over\ to)\b
        | \b(switched|migrated|moved)\s+(away\ )?from\b | \brenamed\b.{1,40}\bto\b | \breplaced\b.{1,40}\bwith\b
        | \b(is|are)\ gone\b
        | 现在(是|用|改|在|跑|归) | 改成 | 改为 | 换成 | 迁移到 | 迁到 | 升级到 | 升到 | 不再用 | 已经不用
    ")
});

/// Not a change of a stored fact, whatever the words of change: a negation or "still" ("we
/// didn't move it, it's still on 8000"), an addition ("also", "too", "another", "as well"), a
/// question (also without "?": "is the dev server on 3000 now"), a plan or wish ("let's", "I want",
/// "we should", 想, 打算, 要不 … 吧), a hedge, reported speech ("Tomasz mentioned", "apparently",
/// "according to", 说), a report of a failure ("failing now", "doesn't start anymore", 报错), or
/// something bound to a branch or a moment ("on this branch", "for this PR"), or a "/s"
/// (sarcasm words anywhere in the message are [`SARCASM`]'s).
static NOT_A_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(not|never|didn't|hasn't|haven't|wasn't|weren't|isn't\ moving|aren't\ moving|nothing|don't|dont|doesn't|doesnt|no\ one|nobody)\s+(\w+\s+){0,3}?(moved|changed|renamed|switched|migrated|now|gone)\b
        | \b(still|stays|stay|unchanged|also|too|another|second|as\ well|additionally|both)\b
        | [?？]\s*$ | 吗[。.!！]?\s*$ | 呢 | 哪 | 什么 | 还是 | 怎么 | 吧[。.!！]?\s*$
        | ^(is|are|does|do|did|can|could|should|would|will|has|have|was|were|what|which|why|how|where|who|whether)\b
        | \b(maybe|perhaps|probably|possibly|might|i\ think|i\ guess|not\ sure|what\ if|suppose|if|once|wonder|whether)\b
        | \b(let's|lets|i\ want|we\ want|i'd\ like|we\ should|should\ we|we'll|i'll|will|going\ to|plan|planning|proposal|propose|suggest|suggested|next\ (year|month|quarter|sprint|week)|eventually)\b
        | \b(said|says|say|told|mentioned|mentions|thinks|think|apparently|according\ to|heard|claims?|the\ (ticket|docs|readme|doc|wiki)\s+says?)\b
        | \b(fail|fails|failing|failed|broken|breaks|error|errors|crash|crashes|crashing|flaky|slow|hangs|timeout|times\ out|forever|eaddrinuse)\b
        | \b(doesn't|does\ not|won't|can't|cannot)\s+(work|start|compile|build|run|load|connect)\b
        | \bno\ longer\s+(compiles|works|builds|starts|runs|loads|connects|passes)\b
        | \b(is|are|'s|'re)\s+(\w+\s+){0,2}?(out|stable|released|available|live|ready|faster|slower|better|worse|nicer|broken|fixed|done|great|nice|cool|awesome|huge|bigger|smaller|down|up|locked|frozen|offline|unavailable|full|busy|empty|real|red|green)\b
        | ,\s*(right|correct|no|yes|ok|okay|yeah|don't\ we|isn't\ it|aren't\ we|didn't\ we|doesn't\ it|won't\ it)\s*[?.!]*\s*$
        | \b(only|except)\b
        | \b(same\ as\ (before|always|ever)|as\ before|as\ always)\b
        | /s\b
        | \bon\ (this|my|that|the\ feature)\ branch\b | \bfor\ this\ (pr|task|ticket|change|branch)\b
        | 也许|可能|或许|打算|准备|计划|如果|假如|要是|以后再|下个月|明年|说|想|要不|报错|失败|挂了|不行|还在|仍然|依然|也
    ")
});

/// An instruction or an event in the first person (lowercase): "now run the dev server", "ok
/// now lint everything", "I moved the config test into …". A person's own change ("I switched to
/// Helix") still updates the user's file.
static TASK_OR_EVENT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(now|ok|okay|so|then|please|pls|just)\b
        | ^(run|use|move|switch|rename|replace|bump|upgrade|change|lint|deploy|start|stop|check|fix|add|remove|drop)\b
        | ^(i|i've|i\ just|we\ just)\s+(\w+\s+)?(moved|renamed|replaced|bumped|dropped|changed|updated|patched|fixed|added|removed|got\ rid\ of)\b
    ")
});

/// Where a sentence comes from pasted text: a quoted line ("> …"), a commit message, a grep or
/// log line (`src/a.ts:12:`), a line of a diff (`+We use pnpm now.`).
static PASTED: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x) ^\s*> | \bcommit\ message\b | \S+:\d+: | ^\s*//|^\s*\#\  | ^[+-][^\s+-]")
});

/// Words left out of [`content_words`]: function words, words of change and conversational
/// openers (lowercase).
pub const STOP: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "not",
    "now",
    "our",
    "you",
    "your",
    "this",
    "that",
    "its",
    "from",
    "into",
    "any",
    "anymore",
    "all",
    "but",
    "use",
    "uses",
    "used",
    "using",
    "don",
    "doesn",
    "isn",
    "aren",
    "never",
    "longer",
    "more",
    "also",
    "just",
    "only",
    "still",
    "them",
    "they",
    "their",
    "there",
    "here",
    "when",
    "then",
    "than",
    "what",
    "which",
    "will",
    "would",
    "should",
    "can",
    "could",
    "been",
    "being",
    "out",
    "off",
    "over",
    "via",
    "per",
    "one",
    "ago",
    "last",
    "new",
    "old",
    "goes",
    "go",
    "went",
    "get",
    "got",
    "moved",
    "renamed",
    "dropped",
    "replaced",
    "switched",
    "migrated",
    "everything",
    "every",
    "since",
    "please",
    "btw",
    "fyi",
    "heads",
    "yes",
    "yeah",
    "yep",
    "right",
    "correct",
    "exactly",
    "indeed",
    "always",
    "is",
    "a",
    "an",
    "to",
    "of",
    "in",
    "on",
    "at",
    "it",
    "be",
];

/// `true` when `text` (lowercase) has a word of the first person singular: "i", "i'm",
/// "i've", "my", "me", "im" ("I use zsh", "my editor is Helix now").
pub fn names_the_user(lower: &str) -> bool {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|w| matches!(w, "i" | "i'm" | "i've" | "my" | "me" | "im"))
}

/// `word` without a plural `s` when it is longer than three characters ("tests" → "test", "bus"
/// stays): how content words meet.
pub fn stem(word: &str) -> &str {
    if word.len() > 3 {
        word.strip_suffix('s').unwrap_or(word)
    } else {
        word
    }
}

/// Where the clause holding byte `at` of `text` starts: just after the last of `ends` before it
/// (0 when there is none).
pub fn clause_start(text: &str, at: usize, ends: &[char]) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| ends.contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Content words of a text: lowercase ASCII words of three or more characters outside [`STOP`]
/// (a trailing `s` dropped: "tests" and "test" meet), and each pair of adjacent Han characters.
pub fn content_words(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut out = HashSet::new();
    for w in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.len() >= 3 && !STOP.contains(&w) && !w.bytes().all(|b| b.is_ascii_digit()) {
            out.insert(stem(w).to_owned());
        }
    }
    let chars: Vec<char> = lower.chars().collect();
    for pair in chars.windows(2) {
        if pair.iter().all(|c| is_han(*c)) {
            out.insert(pair.iter().collect());
        }
    }
    out
}

/// Every lowercase ASCII word or number and Han character of a text outside [`STOP`]: what
/// tells two values apart (`8000` / `3000`).
fn tokens(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut out: HashSet<String> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(str::to_owned)
        .collect();
    out.extend(lower.chars().filter(|c| is_han(*c)).map(String::from));
    out
}

/// How much `sentence` is about `entry`: the number of the entry's content words it shares,
/// when that is at least half of them or three; `None` otherwise.
fn about(entry: &HashSet<String>, sentence: &HashSet<String>) -> Option<usize> {
    let shared = entry.intersection(sentence).count();
    (shared > 0 && (shared * 2 >= entry.len() || shared >= 3)).then_some(shared)
}

/// The updates the user's sentences in `messages` make to `entries` (see the module doc): one
/// [`EntryChange::Update`] per entry at most, its text the sentence (one line, closed), the
/// latest sentence winning.
pub fn updates(messages: &[Message], entries: &[CurrentEntry]) -> Vec<EntryChange> {
    said_updates(messages, entries)
        .into_iter()
        .map(|(change, _)| change)
        .collect()
}

/// [`updates`], each with the sentence that made it (read without its opener): the text of an
/// update may be the entry rewritten ("Package manager: pnpm." for "We switched to pnpm."), and
/// the sentence is then not to be added as well.
pub fn said_updates(messages: &[Message], entries: &[CurrentEntry]) -> Vec<(EntryChange, String)> {
    if entries.is_empty() {
        return Vec::new();
    }
    let entry_words: Vec<HashSet<String>> =
        entries.iter().map(|e| content_words(&e.text)).collect();
    let mut out: Vec<(EntryChange, String)> = Vec::new();
    for message in messages.iter().filter(|m| m.role == Role::User) {
        let Some(text) = user_text(message) else {
            continue;
        };
        // A message taking back what was said before ("wait no, that was the billing repo",
        // "reverted to Jest") voids the changes read so far: which of them still holds is not
        // known.
        let lower = text.to_lowercase();
        if TAKEN_BACK.is_match(&lower) {
            out.clear();
        }
        if knowledge::looks_like_log(&text)
            || knowledge::looks_like_document(&text)
            || SARCASM.is_match(&lower)
        {
            continue;
        }
        // Code and logs pasted in fences are not said.
        let text = super::extract::without_code_blocks(&text);
        let sentences: Vec<String> = text
            .lines()
            .filter(|l| !PASTED.is_match(l))
            .flat_map(|line| facts::sentences(&facts::with_apostrophes(line)))
            .collect();
        for (i, sentence) in sentences.iter().enumerate() {
            // A limit said in the next sentence: "We switched to Playwright. Only in the admin
            // app though."
            if sentences
                .get(i + 1)
                .is_some_and(|next| LIMIT_NEXT.is_match(&next.to_lowercase()))
            {
                continue;
            }
            // Read without its opener: "quick update: minSdk went up to 26".
            let sentence = without_answer(&super::extract::strip_filler(&one_line(sentence)));
            let lower = sentence.to_lowercase();
            if sentence.chars().count() > 300
                || !CHANGE.is_match(&lower)
                || NOT_A_CHANGE.is_match(&lower)
                || knowledge::is_one_off(&sentence)
            {
                continue;
            }
            if let Some(change) = update_of(&sentence, &lower, entries, &entry_words) {
                out.retain(|(c, _)| c.id() != change.id());
                out.push((change, sentence.clone()));
            }
        }
    }
    out
}

/// Words taking back what was said ("wait no", "scratch that", "my bad", "reverted", 说错了),
/// lowercase.
static TAKEN_BACK: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(wait,?\ no|scratch\ that|never\ ?mind|my\ bad|my\ mistake|ignore\ (that|what\ i\ said)|i\ was\ wrong|that\ was\ wrong|that\ was\ the\ \w+|reverted|rolled\ back|went\ back\ to|take\ that\ back|not\ true\ anymore|sorry,?\ (it's|its|that's|i\ meant))\b
        | 说错了|搞错了|撤回|回滚了|改回
    ")
});

/// Sarcasm anywhere in a message: "In your dreams.", "… NOT.", "yeah right", "/s".
static SARCASM: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(in\ your\ dreams|yeah\ right|pigs\ (might\ |will\ |can\ )?fly|as\ if|just\ kidding|kidding|joking|jk)\b
        | (^|\s)/s\b | \bnot[.!]\s*$
    ")
});

/// A sentence limiting the one before it: "Only in the admin app though.", "except on CI",
/// "but not for the docs" (lowercase).
static LIMIT_NEXT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\W*(but\ )?(only|except|just\ for|not\ for|not\ in|not\ on|apart\ from|other\ than)\b|\bthough[.!]?\s*$",
    )
});

/// An answer opening a sentence: "no, ", "nope, ", "actually, " (lowercase).
static ANSWER: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:(?:no|nope|nah)\s*[,!]\s*(?:no\s*,\s*)?|actually,?\s+)"));

/// `sentence` without an answer opening it ("No, I use fish now, not zsh." → "I use fish now,
/// not zsh."), its first letter then capitalised; "no longer …" and "no more …" keep theirs.
fn without_answer(sentence: &str) -> String {
    let lower = sentence.to_lowercase();
    if lower.len() != sentence.len()
        || lower.starts_with("no longer")
        || lower.starts_with("no more")
    {
        return sentence.to_owned();
    }
    let Some(m) = ANSWER.find(&lower) else {
        return sentence.to_owned();
    };
    let rest = &sentence[m.end()..];
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) if !rest.trim().is_empty() => first.to_uppercase().chain(chars).collect(),
        _ => sentence.to_owned(),
    }
}

/// The update `sentence` (a change said, see [`CHANGE`]) makes to one of `entries`, if any.
fn update_of(
    sentence: &str,
    lower: &str,
    entries: &[CurrentEntry],
    entry_words: &[HashSet<String>],
) -> Option<EntryChange> {
    let said = content_words(sentence);
    // Read against each entry: a tool of the sentence names its job and takes the place of the
    // entry's tool of its kind ("We switched to pnpm." against "Package manager: npm.").
    let read: Vec<super::kinds::Reading> = entry_words
        .iter()
        .map(|ew| super::kinds::read_against(&said, ew))
        .collect();
    let scored: Vec<(usize, usize)> = entry_words
        .iter()
        .zip(&read)
        .enumerate()
        .filter_map(|(i, (ew, r))| about(ew, &r.words).map(|s| (s, i)))
        .collect();
    // About two entries ("tests moved into the package, and we run them through nox now"
    // against where the package lives and how tests run): which one changed is not known.
    let [(_, index)] = scored[..] else {
        return None;
    };
    let entry = &entries[index];
    let words = &read[index].words;
    // A tool taking another's place (when the sentence is about the entry only through it) is
    // read only from a sentence saying nothing else: every content word of it is the entry's,
    // the job's, the new tool's or a word of when, how far or doing ("We switched to pnpm last
    // month."), and no pronoun or "no one" stands for another subject ("They switched to
    // pnpm", "It uses Vitest now"). "We switched the docs to pnpm", "On CI we use pnpm now",
    // "`scripts/seed.ts` uses pino now" are about a part.
    let subject = subject_words(&entry.text);
    let without_kinds = about(&entry_words[index], &said).is_some() && subject.is_subset(&said);
    if let Some((_, new)) = read[index].replaced
        && !without_kinds
    {
        let only_the_switch = said.iter().all(|w| {
            entry_words[index].contains(w)
                || read[index].job.contains(w)
                || new.split('|').any(|n| stem(n) == w)
                || SWITCH_WORDS.contains(&w.as_str())
        });
        let other_subject = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| OTHER_SUBJECTS.contains(&w))
            || lower.contains("no one");
        let short_words_or_code = lower.split(|c: char| !c.is_alphanumeric()).any(|w| {
            w.len() == 2
                && !matches!(
                    w,
                    "we" | "re" | "ve" | "to" | "on" | "is" | "my" | "in" | "up" | "us"
                )
        }) || sentence.contains('`')
            || sentence.contains('/');
        if !only_the_switch || other_subject || short_words_or_code {
            return None;
        }
    }
    // Every word naming what the entry is about, outside its values, is in the sentence:
    // "The API server runs on port 9000 now" is not about "The dev server runs on port
    // 8000".
    if subject.is_empty() || !subject.is_subset(words) {
        return None;
    }
    // What the sentence's clause is about, before its first verb, holds no word the entry
    // lacks: "My zsh prompt is starship now" is about the prompt, not the shell; "the admin
    // frontend's storybook", "the HMR websocket of the dev server" are parts. The job and the
    // name of a tool taking the entry's tool's place count as the entry's ("My editor is Helix
    // now" against "I use neovim").
    let mut about_words = entry_words[index].clone();
    about_words.extend(read[index].job.iter().map(|w| (*w).to_owned()));
    if let Some((_, new)) = read[index].replaced {
        about_words.extend(new.split('|').map(|n| stem(n).to_owned()));
    }
    if names_another_subject(lower, &about_words)
        || names_a_compound_or_scope(lower, &about_words, &subject)
    {
        return None;
    }
    // A first-person event or an instruction changes only the user's own habits ("I
    // switched to Helix"), never a fact of the project ("I moved the config test").
    if TASK_OR_EVENT.is_match(lower)
        && (!entry.category.is_user_level() || !lower.starts_with("i "))
    {
        return None;
    }
    // What the user does ("I use pnpm now in my side projects") is not a fact of the project.
    if !entry.category.is_user_level()
        && ["i ", "i'm ", "i've ", "im "]
            .iter()
            .any(|p| lower.starts_with(p))
    {
        return None;
    }
    // An instruction ("Use pnpm.") is replaced by another way of working ("we use bun now",
    // "switched to bun"), not by a remark about its tool ("pnpm is so much faster now").
    if IMPERATIVE_ENTRY.is_match(&entry.text.to_lowercase()) && !WAY_OF_WORKING.is_match(lower) {
        return None;
    }
    // A fact of this repository does not rewrite the user's own habits, and only the user
    // speaking of themselves does ("I switched to fish", "my editor is Helix now"; "Unit tests
    // run on Vitest now" leaves "I prefer Jest for unit tests").
    if entry.category.is_user_level()
        && (SAYS_PROJECT.is_match(lower) || !names_the_user(lower) && !lower.contains('我'))
    {
        return None;
    }
    // An entry holding a value (a number, a command, a path, a handle) changes only for a
    // sentence bringing one, or a tool taking another's place: "Redis is down now" says
    // nothing of "Redis port: 6379", "Godot is a real engine now" nothing of "Engine: Godot
    // 4.2".
    if ENTRY_VALUE.is_match(&entry.text) && !brings_a_value(sentence) {
        return None;
    }
    // Nothing of its own (no word, number or value the entry lacks): the entry said again
    // (a confirmation), not a change.
    if tokens(sentence).is_subset(&tokens(&entry.text)) {
        return None;
    }
    // A sentence saying only that a tool took another's place ("We switched to pnpm.") keeps
    // the entry, the tool replaced in it ("Package manager: pnpm."); else the sentence is the
    // new text, read without its opener ("fyi", "quick update:").
    if let Some((old, new)) = read[index].replaced
        && !without_kinds
        && let Some(text) =
            super::kinds::substituted(&entry.text, old, new, &read[index].job, sentence)
    {
        return Some(EntryChange::Update { id: entry.id, text });
    }
    // A sentence saying only that a number changed ("Gradle is 8.7 now." against "Gradle
    // version: 7.6."; "The dev server is on port 3000 now." against "The dev server runs on
    // port 8000 (`npm run dev`).") keeps the entry, the number replaced in it.
    if let Some(text) = renumbered(&entry.text, sentence, &said, &entry_words[index]) {
        return Some(EntryChange::Update { id: entry.id, text });
    }
    let body = sentence.trim();
    let text = if body.ends_with(['.', '!', '。', '！']) {
        body.to_owned()
    } else {
        closed(body)
    };
    Some(EntryChange::Update { id: entry.id, text })
}

/// Content words a sentence saying that a tool took another's place may hold besides the
/// entry's, the job's and the tool's: when and how far, and verbs of doing a job ("runs on",
/// "is handled by").
const SWITCH_WORDS: &[&str] = &[
    "everything",
    "everywhere",
    "fully",
    "completely",
    "finally",
    "officially",
    "whole",
    "entire",
    "team",
    "project",
    "repo",
    "codebase",
    "week",
    "month",
    "year",
    "sprint",
    "quarter",
    "release",
    "run",
    "runs",
    "running",
    "live",
    "lives",
    "handled",
    "managed",
    "powered",
    "done",
    "based",
    "built",
    "happen",
    "happens",
];

/// Words standing for a subject other than this project or its user: pronouns of a third
/// party, and "nobody", "everyone", "people".
const OTHER_SUBJECTS: &[&str] = &[
    "they",
    "they're",
    "they've",
    "their",
    "them",
    "it",
    "it's",
    "its",
    "he",
    "she",
    "his",
    "her",
    "nobody",
    "everyone",
    "everybody",
    "people",
    "someone",
    "somebody",
    "folks",
];

/// A number or version standing alone (`8000`, `3.11`; not `e2e`, `H100`, `v2`, `3e-4`).
static NUMBER: LazyLock<Regex> = LazyLock::new(|| re(r"\d+(?:\.\d+)*"));

/// Words of a sentence saying a number changed, besides the entry's own.
const RENUMBER_WORDS: &[&str] = &[
    "upgraded",
    "bumped",
    "raised",
    "lowered",
    "increased",
    "decreased",
    "changed",
    "updated",
    "set",
    "down",
    "went",
];

/// Each number standing alone in `text`: its byte range.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    NUMBER
        .find_iter(text)
        .filter(|m| {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            before.is_none_or(|c| !(c.is_alphanumeric() || c == '.' || c == '_' || c == '-'))
                && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
        })
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// `entry` with its one number replaced by the one number of `sentence`, when the sentence says
/// nothing else: every content word of it is the entry's (`entry_words`) or one of
/// [`RENUMBER_WORDS`], and each holds exactly one number, outside code, the two different.
/// `None` otherwise.
fn renumbered(
    entry: &str,
    sentence: &str,
    said: &HashSet<String>,
    entry_words: &HashSet<String>,
) -> Option<String> {
    let outside_code =
        |text: &str, (a, _): (usize, usize)| text[..a].matches('`').count().is_multiple_of(2);
    let old: Vec<(usize, usize)> = numbers(entry)
        .into_iter()
        .filter(|&r| outside_code(entry, r))
        .collect();
    let new = numbers(sentence);
    let ([(a, b)], [(c, d)]) = (&old[..], &new[..]) else {
        return None;
    };
    let only_the_number = said
        .iter()
        .all(|w| entry_words.contains(w) || RENUMBER_WORDS.contains(&w.as_str()));
    if !only_the_number || entry[*a..*b] == sentence[*c..*d] || !outside_code(sentence, (*c, *d)) {
        return None;
    }
    Some(format!(
        "{}{}{}",
        &entry[..*a],
        &sentence[*c..*d],
        &entry[*b..]
    ))
}

/// `true` when `sentence` names a value: one of [`ENTRY_VALUE`], a tool of a kind
/// ([`super::kinds::jobs_of`]), or a name (a capitalised ASCII word after the first: "CI is on
/// GitHub Actions now").
fn brings_a_value(sentence: &str) -> bool {
    ENTRY_VALUE.is_match(sentence)
        || !super::kinds::jobs_of(sentence).is_empty()
        || sentence.split_whitespace().skip(1).any(|w| {
            w.starts_with(|c: char| c.is_ascii_uppercase()) && w != "I" && !w.starts_with("I'")
        })
}

/// An entry that is an instruction: "Use pnpm.", "Always run …", "Prefer …" (lowercase).
static IMPERATIVE_ENTRY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(use|always|never|prefer|run|do|don't|avoid|keep|write|put)\b"));

/// Words of a way of working replacing another (lowercase).
static WAY_OF_WORKING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(use|uses|using|switched|moved|migrated|instead|replaced|prefer|run|runs|anymore|no\ longer)\b|用|换成|改成",
    )
});

/// "in this repo / project", "here", 这个项目 / 仓库 (lowercase).
static SAYS_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(in|for)\ (this|the|our)\ (repo|repository|project|codebase|monorepo|service|app)\b|\bhere\b|这个(项目|仓库|库)|本项目",
    )
});

/// Values in an entry: backticked spans, parenthesised asides, URLs, @handles, #channels,
/// paths and numbers; what is left names what the entry is about.
static ENTRY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"`[^`]*`|\([^)]*\)|（[^）]*）|https?://\S+|[@#][\w.-]+|\S*/\S*|\b\d+(\.\d+)*\b")
});

/// Verbs and generic words that do not name what an entry is about.
const NOT_SUBJECT: &[&str] = &[
    "run",
    "runs",
    "use",
    "uses",
    "live",
    "lives",
    "listen",
    "listens",
    "serve",
    "serves",
    "need",
    "needs",
    "require",
    "requires",
    "support",
    "supports",
    "pinned",
    "pin",
    "called",
    "install",
    "with",
    "via",
    "prefer",
    "prefers",
    "like",
    "likes",
    "always",
    "never",
    "should",
    "must",
    "port",
    "version",
    "command",
    "before",
    "after",
    "committing",
    "commit",
    "ask",
    "give",
    "hint",
    "hints",
    "relevant",
    "when",
];

/// The content words of `entry` outside its values ([`ENTRY_VALUE`]) and [`NOT_SUBJECT`]:
/// "dev", "server" of "The dev server runs on port 8000 (`npm run dev`)".
fn subject_words(entry: &str) -> HashSet<String> {
    let bare = ENTRY_VALUE.replace_all(entry, " ");
    content_words(&bare)
        .into_iter()
        .filter(|w| !NOT_SUBJECT.contains(&w.as_str()))
        .collect()
}

/// `true` when `lower` narrows what the entry is about: a word of the entry's subject followed
/// by a noun the entry lacks ("the dev server proxy", "the neovim LSP"), or a qualifier "for /
/// in (the) X" with X a word the entry lacks ("… 60 seconds now for the e2e suite").
fn names_a_compound_or_scope(
    lower: &str,
    entry: &HashSet<String>,
    subject: &HashSet<String>,
) -> bool {
    let bare = ENTRY_VALUE.replace_all(lower, " ");
    let words: Vec<&str> = bare
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let new_noun = |w: &str| {
        w.len() >= 3
            && w.is_ascii()
            && !STOP.contains(&w)
            && !SUBJECT_END.contains(&w)
            && !NOT_SUBJECT.contains(&w)
            && !entry.contains(stem(w))
    };
    words
        .windows(2)
        .any(|pair| subject.contains(stem(pair[0])) && new_noun(pair[1]))
        || words.iter().enumerate().any(|(i, w)| {
            // "for all our services", "on the new boards": the first word after the determiners
            // (after "on", "at", "with" only when there is one: "CI is on GitHub Actions now"
            // names the value).
            let determiner = |x: &str| {
                matches!(
                    x,
                    "the" | "our" | "this" | "all" | "new" | "old" | "any" | "every" | "my"
                )
            };
            let preposition = match *w {
                "for" | "in" => true,
                "on" | "at" | "with" => words.get(i + 1).is_some_and(|x| determiner(x)),
                _ => false,
            };
            preposition
                && words[i + 1..]
                    .iter()
                    .find(|x| !determiner(x))
                    .is_some_and(|x| new_noun(x))
        })
}

/// Words that end what a clause is about (its verb or a word of change).
const SUBJECT_END: &[&str] = &[
    "is", "are", "'s", "'re", "was", "were", "now", "runs", "run", "uses", "use", "lives", "live",
    "goes", "go", "posts", "post", "points", "moved", "switched", "migrated", "changed", "went",
    "upgraded", "bumped", "renamed", "replaced", "isn't", "aren't", "doesn't", "don't", "has",
    "have", "got", "needs", "requires", "defaults", "targets",
];

/// `true` when the clause of `lower` holding its word of change names, before its verb, a
/// content word that `entry` (its content words) lacks, or a part ("X's Y", "Y of X").
fn names_another_subject(lower: &str, entry: &HashSet<String>) -> bool {
    let at = CHANGE.find(lower).map_or(0, |m| m.start());
    let clause = &lower[clause_start(lower, at, &[',', ';', '，', '；', '。'])..];
    let mut head = Vec::new();
    for w in clause.split_whitespace() {
        if SUBJECT_END.contains(&w) {
            break;
        }
        head.push(w);
    }
    let head = head.join(" ");
    if head.contains("'s ") || head.contains(" of ") {
        return true;
    }
    let bare = ENTRY_VALUE.replace_all(&head, " ");
    content_words(&bare).iter().any(|w| !entry.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MemoryCategory;

    fn entry(id: u32, text: &str) -> CurrentEntry {
        CurrentEntry {
            id,
            category: MemoryCategory::Project,
            text: text.to_owned(),
        }
    }

    fn updated(said: &str, entries: &[CurrentEntry]) -> Vec<(u32, String)> {
        updates(&[Message::user(said)], entries)
            .into_iter()
            .map(|c| match c {
                EntryChange::Update { id, text } => (id, text),
                EntryChange::Delete { id } => (id, String::new()),
            })
            .collect()
    }

    #[test]
    fn a_change_to_a_stored_fact_updates_its_entry() {
        let entries = [
            entry(1, "E2E tests: `npx cypress run`"),
            entry(2, "Unit tests: `npm test`"),
            entry(3, "Backend reviews: @tomasz"),
            entry(4, "Frontend reviews: @sana"),
        ];
        assert_eq!(
            updated(
                "The dev server runs on port 3000 now.",
                &[entry(1, "The dev server runs on port 8000.")]
            ),
            // Only the number changed: the entry keeps its words, the number replaced.
            [(1, "The dev server runs on port 3000.".to_owned())]
        );
        assert_eq!(
            updated(
                "The dev server is on port 3000 now.",
                &[entry(
                    1,
                    "The dev server runs on port 8000 (`npm run dev`)."
                )]
            ),
            [(
                1,
                "The dev server runs on port 3000 (`npm run dev`).".to_owned()
            )]
        );
        assert_eq!(
            updated("Gradle is 8.7 now.", &[entry(1, "Gradle version: 7.6.")]),
            [(1, "Gradle version: 8.7.".to_owned())]
        );
        // Something else said with it: the sentence is the new text.
        assert_eq!(
            updated(
                "Flutter is on 3.22 now, the whole team upgraded.",
                &[entry(1, "Flutter version: 3.16.")]
            ),
            [(
                1,
                "Flutter is on 3.22 now, the whole team upgraded.".to_owned()
            )]
        );
        assert_eq!(
            updated("e2e is Playwright now, `npx playwright test`.", &entries),
            [(
                1,
                "e2e is Playwright now, `npx playwright test`.".to_owned()
            )]
        );
        assert_eq!(
            updated(
                "Tomasz moved teams, backend reviews go to @ifeoma now. Sana still does frontend.",
                &entries
            ),
            [(
                3,
                "Tomasz moved teams, backend reviews go to @ifeoma now.".to_owned()
            )]
        );
    }

    #[test]
    fn no_update_without_a_change_said_about_one_entry() {
        let entries = [
            entry(1, "The dev server runs on port 8000."),
            entry(2, "Lint with `npm run lint` before committing."),
        ];
        for said in [
            // No change said, a question, a plan, a one-off, a negated change.
            "We also have a staging server on port 8001.",
            "Is the dev server still on 8000?",
            "We might move the dev server to 3000 next year.",
            "Just for today run the dev server on 8001.",
            "No, we're not moving the dev server now.",
            // The entry said again.
            "The dev server runs on port 8000 now.",
            "the dev server runs on port 8000, now.",
            // About something else, or a part of it.
            "The metrics exporter is on 9464 now.",
            "I moved the dev server's storybook to port 6007.",
            // About two entries.
            "The dev server moved and lint runs with `npm run lint:ci` now.",
        ] {
            assert!(updated(said, &entries).is_empty(), "{said}");
        }
    }
}
