//! Offline extraction: cue rules of English and Chinese speakers for preferences, corrections,
//! project facts the user states, and references (links with what they are), plus project facts
//! visible in the tool calls (package manager, test command, framework). Precision first: a
//! sentence that is a question, hedged, hypothetical, reported speech, about "this file", or a
//! task request gives nothing.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use mem_core::secrets::{REDACTED, redact};
use mem_core::{ContentBlock, Message, Role};
use regex::Regex;

use super::text::{
    already_known, closed, han_count, is_han, normalise, one_line, shorten, urls, user_text,
};
use super::tools::{ToolKind, classify_tool, command_of, touched_file};
use super::{facts, knowledge};
use crate::types::Memories;

const ENTRY_CHARS: usize = 200;
/// Sentences longer than this are pasted logs or code, not instructions.
const MAX_SENTENCE_CHARS: usize = 300;
const MAX_REFERENCES: usize = 20;
/// A sentence with a contrast ("X instead of Y") but no correction opener is read as a
/// correction only up to this many words.
const MAX_CONTRAST_WORDS: usize = 20;
/// Longer user messages are pasted documents (plans, logs, summaries): no cues are read in them.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// Extracts memories from `messages`, skipping entries already in `current_memories`.
///
/// Only what the user typed is read for cues (an assistant's suggestion is not a memory until
/// the user states it), sentence by sentence:
///
/// - never read: questions, hedged sentences (`maybe`, `I think`, 也许, 可能...), hypotheticals
///   (`what if`, 假如...), reported speech (`my colleague said`, 听说...), sentences about one
///   object in front of the user (`this file`, 这个函数...);
/// - corrections: a correction opener (`no,`, `actually,`, `wrong`, 不对, 错了, 其实...) with a
///   statement, `I told you` / `I said` / 说过, or a contrast (`X, not Y`, `instead of`,
///   `rather than`, 而不是, 不是…是…) in an instruction or statement;
/// - preferences: standing instructions (`always` / `never` addressed to the agent, `from now
///   on`, `going forward`, `whenever you`, `I prefer`, `don't use`, 以后, 总是, 一律, 统一, 别用,
///   不要再, 我习惯...);
/// - project facts the user states: where things live (`tests live in`, 放在...目录), what the
///   project uses, runs on, requires, how it is run or deployed (`we deploy with`, `to run X, use
///   Y`, 用…部署), versions, conventions, the main branch, the database (task requests such as
///   `fix …` are not facts);
/// - references: a link the user wrote with words saying what it is (issue, pull-request,
///   commit and CI-run links are one-off tasks; loopback addresses are skipped);
/// - from the tool calls: `Package manager: …`, `Test command: `…``, `Framework: …`.
///
/// Every entry goes through the secret filter ([`mem_core::secrets`]): secrets are replaced by
/// `[REDACTED]`, and an entry that is mostly a secret is dropped. Messages over 2,000 characters
/// (pasted plans, logs) are not read.
pub fn extract(messages: &[Message], current_memories: &str) -> Memories {
    let known = normalise(current_memories);
    let artifacts = project_artifacts(messages);
    let mut memories = Memories::default();
    let add = |list: &mut Vec<String>, entry: String| {
        let Some(entry) = without_secrets(&entry) else {
            return;
        };
        if !entry.is_empty()
            && !already_known(&known, &entry)
            && !list.iter().any(|e| normalise(e) == normalise(&entry))
        {
            list.push(entry);
        }
    };

    // The text of the message before the one read: where a pronoun's referent may be named.
    let mut previous = String::new();
    let mut previous_by_assistant = false;
    for message in messages {
        let mut said = Vec::new();
        if let Some(text) = user_text(message).filter(|t| t.chars().count() <= MAX_MESSAGE_CHARS) {
            said.push(without_quoted_lines(&without_pasted_blocks(
                &without_code_blocks(&text),
            )));
        }
        if message.role == Role::User {
            said.extend(message.content.iter().filter_map(rejection_feedback));
        }
        // The user confirming what the assistant just stated ("yes, exactly", "对") makes the
        // assistant's project facts the user's.
        // A bare "yep" confirms only what the assistant put to the user ("…, right?", "Is that
        // how it's wired?"): after a report of work done it acknowledges it. "right, and we
        // don't bump it…" takes the statement up whatever its form.
        let put_as_question = previous_by_assistant && asks_to_confirm(&previous);
        // "yep thats it": read with its apostrophes, as the sentences are.
        let first_said = said.first().map(|s| facts::with_apostrophes(s));
        // An analysis written out as a document (headings, lists) is the assistant's report,
        // not a statement the user takes up with "yes".
        if message.role == Role::User
            && said.len() == 1
            && !previous.is_empty()
            && !knowledge::looks_like_document(&previous)
            && first_said.as_deref().is_some_and(|first| {
                (put_as_question && facts::is_confirmation(first))
                    || (previous_by_assistant && facts::opens_with_confirmation(first))
            })
        {
            for statement in confirmed_statements(&previous) {
                for fact in facts_of(&statement, &[]) {
                    add(&mut memories.project, fact);
                }
            }
        }
        // "I'll use http://localhost:8089 for this project from now on, correct?" / "Use this
        // command for tests in this project from now on?" answered "yes": the rule the agent
        // put to the user is the user's.
        if message.role == Role::User
            && said.len() == 1
            && previous_by_assistant
            && !knowledge::looks_like_document(&previous)
            && first_said.as_deref().is_some_and(|first| {
                (facts::is_confirmation(first) || facts::opens_with_confirmation(first))
                    && !knowledge::is_one_off(first)
            })
        {
            for (proposal, context) in confirmed_proposals(&previous) {
                for fact in facts_of(&proposal, &[&context]) {
                    add(&mut memories.preferences, fact);
                }
            }
        }
        for text in &said {
            // Redacted before it is split: a password holding `! ` or `. ` would otherwise be
            // cut into sentences the filter no longer recognises.
            // A secret found here (not withheld by the caller before) makes a sentence that is
            // mostly that secret go; markers already in the text are left to the caller's
            // cleaning, which counts them (`mem_auto::clean`).
            let redacted = redact(text);
            let fresh = redacted.withheld() > 0;
            // Pasted output (a build log) states nothing in the user's voice.
            let pasted = knowledge::looks_like_log(text);
            // A task prompt written out or an analysis pasted back: its lines are no facts of
            // the project (a list of the user's rules in it is still read).
            let document = knowledge::looks_like_document(text);
            // A plan or a spec pasted for the task: its "always"/"never" items are requirements
            // of the work; only a sentence speaking to the agent is a rule there.
            let foreign_document = document && !knowledge::introduces_rules(text);
            let mut before: Vec<String> = Vec::new();
            // Whether the sentence before in this message was a habitual complaint about the
            // agent, with the thing it is about ("your commit messages are way too long").
            let mut complaint: Option<Option<String>> = None;
            // Whether the sentence before in this message gave a rule (a correction or a
            // preference): "use `unknown` instead" after it says what to do in its place.
            let mut rule_before: Option<Cue> = None;
            // Whether the sentence before in this message was bound to a time ("for today
            // don't run the test suite"): "just compile with … after changes" goes on from it.
            let mut one_off_before = false;
            // Whether a spec header opened in this message ("requirements:", 要求：): the
            // sentences after it describe the thing asked for.
            let mut in_spec = false;
            // Whether a header of rules for this project opened the message ("Rules for this
            // repo going forward:", 这个项目的规范：): its items hold here.
            let mut rules_here = false;
            let pieces: Vec<String> = facts::sentences(&facts::with_apostrophes(&redacted.text))
                .iter()
                .flat_map(|s| asides(s))
                .flat_map(|s| rule_then_exception(&s))
                .collect();
            // How many project entries there were before the sentence read last: the ones that
            // sentence added are `memories.project[last_start..]`.
            let mut last_start = memories.project.len();
            for sentence in join_terse(pieces) {
                let previous_start = std::mem::replace(&mut last_start, memories.project.len());
                if fresh && mostly_secret(&sentence) {
                    continue;
                }
                let sentence = strip_filler(&one_line(&sentence));
                // "that goes for everything you do for me, not just this repo": the scope of
                // the rule said just before, not a statement of its own. A scope beyond this
                // project moves the rule the sentence before gave to the project's file into
                // the user's.
                let lower = sentence.to_lowercase();
                if SCOPE_CONTINUATION.is_match(&sentence)
                    && (GENERIC_SCOPE.is_match(&lower)
                        || BROAD_SCOPE.is_match(&lower)
                        || BEYOND_PROJECT.is_match(&sentence))
                {
                    let start = previous_start.min(memories.project.len());
                    // The scope is said in the entry, so it stays self-contained and no later
                    // reading of its words puts it back in the project's file.
                    for entry in memories.project.split_off(start) {
                        add(&mut memories.preferences, in_every_project(&entry));
                    }
                    last_start = memories.project.len();
                    before.push(sentence);
                    continue;
                }
                if sentence.chars().count() > MAX_SENTENCE_CHARS {
                    continue;
                }
                // "one thing I wanted to say in general: before you commit anything, show me
                // the diff": the statement after a preamble; "Could you please not use unwrap()
                // in any Rust code you write for me?": the rule a polite question asks for.
                let sentence = after_preamble(&sentence).unwrap_or(sentence);
                let sentence = polite_rule(&sentence).unwrap_or(sentence);
                let after_complaint = complaint.take();
                let after_rule = rule_before.take();
                let goes_on_from_one_off =
                    std::mem::replace(&mut one_off_before, knowledge::is_one_off(&sentence))
                        && CONTINUATION.is_match(&sentence);
                if goes_on_from_one_off {
                    one_off_before = true;
                    before.push(sentence);
                    continue;
                }
                complaint = habitual_complaint(&sentence);
                let read = sentence.trim().to_lowercase();
                in_spec |= SPEC_HEADER.is_match(&read);
                // "… also, from now on always write the tests first for every project": a
                // standing rule ends the spec.
                if in_spec && STANDING_SCOPE.is_match(&read) {
                    in_spec = false;
                }
                rules_here |= RULES_HERE_HEADER.is_match(&read);
                // Pasted output (a build log) holds no statement of the user's.
                let mut cue = classify_sentence(&sentence).filter(|_| !pasted);
                let mut sentence = sentence;
                // A rule right after a complaint about the agent's habit ("your commit
                // messages are way too long. keep them to one line", 你又把整个文件重写了。只改
                // 需要改的那几行): a correction, its pronoun standing for what the complaint
                // was about.
                if let Some(about) = &after_complaint
                    && !pasted
                    && matches!(cue, None | Some(Cue::Preference))
                    && is_rule_after_complaint(&sentence)
                {
                    let promoted = match about {
                        Some(about) => replace_first_pronoun(&sentence, about),
                        None => sentence.clone(),
                    };
                    // Still leaning on a pronoun ("add it to main.rs", "use the ones from the
                    // spec"), or naming a file of the task: a step of the task, not a rule.
                    if !facts::has_pronoun(&promoted)
                        && !ONE_OR_ONES.is_match(&promoted)
                        && facts::named_things(&promoted).is_empty()
                    {
                        cue = Some(Cue::Correction);
                        sentence = promoted;
                    }
                }
                if let Some(rule) = after_rule
                    && cue.is_none()
                    && !pasted
                    && is_replacement(&sentence)
                {
                    cue = Some(rule);
                }
                if cue.is_some() && !facts::is_complaint(&sentence) {
                    let context = before.join(" ");
                    let entries: Vec<String> = match rule_list_items(&sentence) {
                        Some(items) => items
                            .iter()
                            .flat_map(|item| facts_of(item, &[&context, &previous]))
                            .collect(),
                        None => facts_of(&sentence, &[&context, &previous]),
                    };
                    if (foreign_document || in_spec)
                        && matches!(cue, Some(Cue::Correction | Cue::Preference))
                        && !speaks_to_agent(&sentence)
                    {
                        before.push(sentence);
                        continue;
                    }
                    // A rule about a thing this project's files hold ("don't ever run
                    // deploy-prod" after the Makefile listed it) is the project's.
                    let (entries, of_project): (Vec<String>, Vec<String>) =
                        if !document && matches!(cue, Some(Cue::Correction | Cue::Preference)) {
                            entries
                                .into_iter()
                                .partition(|e| !names_artifact(e, &artifacts))
                        } else {
                            (entries, Vec::new())
                        };
                    for entry in of_project {
                        add(&mut memories.project, entry);
                    }
                    let list = match cue {
                        Some(Cue::Correction) => &mut memories.corrections,
                        Some(Cue::Preference) => &mut memories.preferences,
                        Some(Cue::Project) if !document => &mut memories.project,
                        // Knowledge clauses keep only those naming a value ("here's the deploy
                        // key, put it in ~/.ssh/…": the first clause names none).
                        Some(Cue::Knowledge) if !document => {
                            for entry in entries {
                                if knowledge::names_value(&entry) {
                                    add(&mut memories.project, entry);
                                }
                            }
                            before.push(sentence);
                            continue;
                        }
                        Some(Cue::Reference) if memories.references.len() < MAX_REFERENCES => {
                            &mut memories.references
                        }
                        _ => {
                            before.push(sentence);
                            continue;
                        }
                    };
                    let here = rules_here
                        && matches!(cue, Some(Cue::Correction | Cue::Preference))
                        && !names_own_scope(&sentence);
                    let had = list.len();
                    for entry in entries {
                        add(list, if here { in_this_project(&entry) } else { entry });
                    }
                    if list.len() > had {
                        rule_before = match cue {
                            Some(Cue::Correction) => Some(Cue::Correction),
                            Some(Cue::Preference) => Some(Cue::Preference),
                            _ => None,
                        };
                    }
                }
                before.push(sentence);
            }
        }
        let text = message_text(message);
        if !text.trim().is_empty() {
            previous = text;
            previous_by_assistant = message.role == Role::Assistant;
        }
    }

    for fact in project_facts(messages) {
        add(&mut memories.project, fact);
    }
    memories
}

/// Names of things of this project seen in what its tools printed (not errors): hyphenated,
/// dotted, slashed or underscored identifiers of 5 bytes or more (`deploy-prod`,
/// `package-lock.json`, `src/api/client.ts`), lowercased; a program the agent ran (the first
/// word of a command: `docker-compose`, `clang-format`) is a tool, not a thing of the project.
fn project_artifacts(messages: &[Message]) -> std::collections::HashSet<String> {
    let mut programs = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    for block in messages.iter().flat_map(|m| &m.content) {
        match block {
            ContentBlock::ToolUse { input, .. } => {
                if let Some(command) = command_of(input) {
                    for part in command.split(['|', ';', '&']) {
                        if let Some(program) = part.split_whitespace().next() {
                            programs.insert(program.to_lowercase());
                        }
                    }
                }
            }
            ContentBlock::ToolResult { content, .. } if !block.is_error() => {
                for m in ARTIFACT.find_iter(&content.text()) {
                    if m.as_str().len() >= 5 {
                        seen.insert(m.as_str().to_lowercase());
                    }
                }
            }
            _ => {}
        }
    }
    seen.retain(|a| !programs.contains(a));
    seen
}

/// An identifier with a `-`, `_`, `.` or `/` inside it (see [`project_artifacts`]).
static ARTIFACT: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+"));

/// Whether `entry` names one of `artifacts` as a whole word and does not say it holds for all
/// the user's projects.
fn names_artifact(entry: &str, artifacts: &std::collections::HashSet<String>) -> bool {
    !artifacts.is_empty()
        && !USER_WIDE.is_match(&entry.to_lowercase())
        && ARTIFACT
            .find_iter(entry)
            .any(|m| artifacts.contains(&m.as_str().to_lowercase()))
}

/// A sentence going on from the instruction before it: "just …", "only …", "instead …",
/// "then …", 就, 只, 直接.
static CONTINUATION: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(just|only|instead|then|and\ just|and\ then)\b|^(就|只|直接|先)"));

/// Whether `sentence` speaks to the agent or of the user: "you", "your", "me", "my", "I",
/// 你, 我 (a requirement in a pasted plan, "Always validate cart totals on the server", does
/// neither).
fn speaks_to_agent(sentence: &str) -> bool {
    static PERSON: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\b(you|your|yours|u|me|my|mine|i|i'm|i've|i'd)\b|[你我]"));
    PERSON.is_match(sentence)
}

/// Whether the assistant's text puts something to the user to confirm: a sentence ending in a
/// question mark that is not an offer or a request for more ("Want me to update the README?",
/// "Should I also open the PR?", "Anything else?").
/// A question offering a step or asking for more ("Should I run …?", "Want me to …?"): a "yes"
/// to it approves the step, it confirms no statement.
static OFFER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(want\ me|do\ you\ want|would\ you\ like|should\ i|shall\ i|can\ i|may\ i|should\ we|shall\ we|anything\ else|need\ me|do\ you\ need|ok\ to|okay\ to|要不要|需要我|我来)",
    )
});

fn asks_to_confirm(assistant: &str) -> bool {
    // "Remove it?", "Restore the old value?": an action offered, put as a bare imperative.
    static IMPERATIVE_OFFER: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(remove|restore|delete|add|fix|revert|apply|push|merge|commit|run|keep|drop|update|rename|use|switch|install|open|create|retry|proceed|continue|go\ ahead|bump|change|move|rebase|deploy|ship|try)\b",
        )
    });
    facts::sentences(assistant).iter().any(|s| {
        let s = s.trim();
        s.ends_with(['?', '？']) && !OFFER.is_match(s) && !IMPERATIVE_OFFER.is_match(s)
    })
}

/// A sentence announcing a list of rules ("two rules for this codebase: no unwrap() outside
/// tests, and every public fn gets a doc comment", "conventions here: …; …"): its items, each
/// as a statement of its own carrying the header's qualifier ("For this codebase: no unwrap()
/// outside tests."). `None` when the sentence is not such a list or holds one item only.
fn rule_list_items(sentence: &str) -> Option<Vec<String>> {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:(?:a\ few|two|three|four|five|some|my|our|the|house|ground)\s+)*(?:rules?|conventions?|guidelines?)\b([^:]{0,40}):\s*(.+)$",
        )
    });
    let caps = HEADER.captures(sentence.trim())?;
    let qualifier = caps.get(1).map_or("", |m| m.as_str()).trim();
    let body = caps.get(2)?.as_str().trim().trim_end_matches(['.', '!']);
    let items: Vec<&str> = body
        .split([';', ','])
        .map(|i| i.trim())
        .map(|i| i.strip_prefix("and ").unwrap_or(i).trim())
        .filter(|i| !i.is_empty())
        .collect();
    if items.len() < 2 || items.iter().any(|i| i.split_whitespace().count() < 2) {
        return None;
    }
    Some(
        items
            .into_iter()
            .map(|i| {
                if qualifier.is_empty() {
                    format!("{i}.")
                } else {
                    let mut q = qualifier.to_owned();
                    if let Some(first) = q.get(..1) {
                        q.replace_range(..1, &first.to_uppercase());
                    }
                    format!("{q}: {i}.")
                }
            })
            .collect(),
    )
}

/// One stated sentence as facts: split into clauses ([`facts::split_clauses`]), a clause
/// leaning on a pronoun resolved from the clauses before it, then `contexts` (the sentences
/// before, the previous turn) or dropped, rewritten into a statement ([`facts::rewrite`]);
/// fragments and complaints without a rule give nothing.
fn facts_of(sentence: &str, contexts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let clauses = facts::split_clauses(sentence);
    for (i, clause) in clauses.iter().enumerate() {
        let earlier = clauses[..i].join(" ");
        let mut ctx: Vec<&str> = vec![&earlier];
        ctx.extend_from_slice(contexts);
        let Some(rewritten) = facts::rewrite(clause) else {
            continue;
        };
        // A clause of its own asking for a task ("write me a backup script; any script you
        // write should …"): the task, not a fact; the rule beside it stays.
        if clauses.len() > 1
            && TASK_REQUEST.is_match(&rewritten.to_lowercase())
            && classify_sentence(&rewritten).is_none()
        {
            continue;
        }
        // A trailing clause leaning on a pronoun with nothing named to stand for ("…, it makes
        // my PRs unreviewable", "…, finish it or tell me what's missing") goes; the statement
        // before it stays when it is a rule of its own.
        let Some(resolved) = facts::resolve_pronouns(&rewritten, &ctx)
            .or_else(|| {
                facts::before_unresolved_pronoun(&rewritten)
                    .filter(|h| classify_sentence(h).is_some())
            })
            .or_else(|| {
                facts::after_unresolved_reason(&rewritten)
                    .and_then(|a| facts::rewrite(&a))
                    .filter(|a| classify_sentence(a).is_some())
            })
        else {
            continue;
        };
        if facts::is_fragment(&resolved)
            || facts::is_complaint(&resolved)
            || facts::leans_on_context(&resolved)
        {
            continue;
        }
        out.push(shorten(&resolved, ENTRY_CHARS));
    }
    out
}

/// The assistant's sentences a confirmation makes the user's: statements stated as project
/// facts ([`Cue::Project`]), a closing tag question ("…, right?", "…，对吗？") taken off.
fn confirmed_statements(assistant: &str) -> Vec<String> {
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\s*[,—–-]*\s*(right|correct|is\ that\ right|is\ that\ correct|yes|no)\s*\?\s*$|[，,]?\s*(对吗|是吗|对吧|是吧|没错吧|吧|吗)\s*[？?]\s*$",
        )
    });
    static SO: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^((from|based\ on|according\ to|judging\ by|in)\ [^,，]{1,40}[,，]\s*)?((so|ok|okay|got\ it|understood|it\ looks\ like|looks\ like|it\ seems|seems\ like|所以)[,，:\s]+|看起来|好像|似乎)",
        )
    });
    // A yes/no question the user confirmed ("…产物在 dist/ 目录下？" "对的") is stated by the
    // confirmation; a question asking what or how is not.
    // The hedge may follow where the assistant read it ("From the config, it looks like …").
    static YES_NO: LazyLock<Regex> = LazyLock::new(|| re(r"[?？]\s*$"));
    let mut out = Vec::new();
    let sentences = facts::sentences(assistant);
    // A "yes" to an offer approves the step offered; the statements before it are what the
    // agent saw ("I see both in tests/. Should I always use Pest …?"), not what was confirmed.
    let question = |s: &&String| s.trim_end().ends_with(['?', '？']);
    let offered = sentences.iter().any(|s| question(&s))
        && sentences
            .iter()
            .filter(question)
            .all(|s| OFFER.is_match(s.trim()));
    for sentence in sentences {
        if offered && !sentence.trim_end().ends_with(['?', '？']) {
            continue;
        }
        let s = one_line(&sentence);
        let s = SO.replace(&s, "");
        let s = TAG.replace(&s, "").trim().to_owned();
        let s = YES_NO.replace(&s, "").trim().to_owned();
        if matches!(classify_sentence(&s), Some(Cue::Project | Cue::Knowledge)) {
            out.push(s);
        }
    }
    out
}

/// Standing rules the assistant put to the user as a question ("I'll use http://localhost:8089
/// for this project from now on, correct?", "Use this command for tests in this project from
/// now on?", "Should I always squash commits here?"), each as an instruction ("Use
/// http://localhost:8089 for this project from now on.") with the sentences before it in the
/// message, where "this command" finds what it stands for. Only a question with a word of a
/// standing rule (from now on, always, every time, in this project): "Should I run the
/// migration?" answered "yes" approves one step.
fn confirmed_proposals(assistant: &str) -> Vec<(String, String)> {
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\s*[,—–-]*\s*(right|correct|ok|okay|is\ that\ (right|ok|okay|correct)|sound\ good|agreed)?\s*[?？]\s*$",
        )
    });
    static PROPOSAL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:so\s+|then\s+)?(?:i'll|i\s+will|i'm\s+going\s+to|should\s+i|shall\s+i|do\s+you\s+want\s+me\s+to|want\s+me\s+to)\s+(.+)$",
        )
    });
    static STANDING_WORDS: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(from\ now\ on|going\ forward|from\ here\ on|always|never|every\ time|each\ time|in\ this\ (project|repo|repository|codebase)|for\ this\ (project|repo|repository|codebase))\b",
        )
    });
    let sentences = facts::sentences(assistant);
    let mut out = Vec::new();
    for (i, sentence) in sentences.iter().enumerate() {
        let s = one_line(sentence);
        if !s.trim_end().ends_with(['?', '？']) || !STANDING_WORDS.is_match(&s) {
            continue;
        }
        let s = TAG.replace(&s, "").trim().to_owned();
        let body = match PROPOSAL.captures(&s) {
            Some(c) => c[1].to_owned(),
            None if INSTRUCTION.is_match(&s.to_lowercase()) => s.clone(),
            None => continue,
        };
        let mut chars = body.chars();
        let Some(first) = chars.next() else { continue };
        let body = format!("{}{}.", first.to_uppercase(), chars.as_str());
        if matches!(
            classify_sentence(&body),
            Some(Cue::Preference | Cue::Correction | Cue::Knowledge | Cue::Project)
        ) {
            out.push((body, sentences[..i].join(" ")));
        }
    }
    out
}

/// The text of a message a referent may come from: what the user said (injected context left
/// out), or an assistant's text blocks joined (tool blocks left out).
fn message_text(message: &Message) -> String {
    if message.role == Role::User {
        return user_text(message).unwrap_or_default();
    }
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The entry with its secrets replaced; `None` when little is left without them, or when its
/// value is a secret (withheld here or before).
fn without_secrets(entry: &str) -> Option<String> {
    // "The AES key for the export files is [REDACTED].", "SECRET_KEY = '[REDACTED]' is the
    // production one": what the statement gives is the secret; without it nothing is left to
    // keep. A URL's withheld password (`app:[REDACTED]@db`) leaves the URL to keep.
    static VALUE_WITHHELD: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)(\b(is|was|are)|[:=：]|是|为)\s*[`'\x22]?\[REDACTED\][`'\x22]?\s*[.。!！]?$")
    });
    // `KEY=[REDACTED]`, "password: [REDACTED]" inside the entry: that clause goes, the
    // others stay ("… repo1 is in /etc/pgbackrest.conf。凭证先给你：AWS_ACCESS_KEY_ID=[REDACTED]").
    // "Always export API_KEY=[REDACTED] before running", "Put STRIPE_KEY=[REDACTED] in
    // .env.local" say what to do; the clause stays.
    static ASSIGNED_WITHHELD: LazyLock<Regex> =
        LazyLock::new(|| re(r"(=|:\s|：)\s*[`'\x22]?\[REDACTED\]([^@\w]|$)"));
    static EXPORTED: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(export|set|setx|setenv|put|add|store|write|keep|place)\s+[\w.-]+\s*=\s*[`'\x22]?\[REDACTED\]",
        )
    });
    let r = redact(entry);
    let withheld = r.withheld();
    let mut text = r.text;
    if ASSIGNED_WITHHELD.is_match(&text) {
        let kept: String = text
            .split_inclusive([',', '，', ';', '；', '。'])
            .filter(|clause| !ASSIGNED_WITHHELD.is_match(clause) || EXPORTED.is_match(clause))
            .collect();
        let kept = kept.trim_end_matches([',', '，', ';', '；', ' ']).trim();
        if kept.is_empty() {
            return None;
        }
        let cut = kept.len() + 1 < text.trim().len();
        text = if kept.ends_with(['.', '。', '!', '！', '?', '？']) {
            kept.to_owned()
        } else {
            closed(kept)
        };
        // What is left must say something and lean on nothing the cut took away ("这是生产用的",
        // "never commit it").
        if cut && !stands_alone(&text) {
            return None;
        }
    }
    if VALUE_WITHHELD.is_match(&text) {
        // "Always ssh as deploy@staging.example.com, the password is [REDACTED].": the clause
        // giving the secret goes; a statement before it stays when it says something.
        let head = text
            .trim_end_matches(['.', '。', '!', '！'])
            .rsplit_once([',', '，', ';', '；'])
            .map(|(head, _)| head.trim());
        match head {
            Some(h) if stands_alone(h) && !h.contains(REDACTED) => text = closed(h),
            _ => return None,
        }
    }
    if withheld > 0 && mostly_secret(&text) {
        return None;
    }
    Some(text)
}

/// Whether what is left of an entry once a secret's clause is cut says something by itself:
/// three words or six Chinese characters, and no pronoun leaning on the clause cut.
fn stands_alone(text: &str) -> bool {
    (text.split_whitespace().count() >= 3 || han_count(text) >= 6) && !facts::has_pronoun(text)
}

/// Whether little is left of `redacted` once its `[REDACTED]` markers are taken out (fewer than
/// 3 words or 12 characters); `false` without a marker.
fn mostly_secret(redacted: &str) -> bool {
    if !redacted.contains(REDACTED) {
        return false;
    }
    let rest = redacted.replace(REDACTED, " ");
    let words = rest
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    words < 3 || rest.chars().filter(|c| !c.is_whitespace()).count() < 12
}

/// "normally we always squash-merge in this repo, but for release branches do a merge commit",
/// 平时都用 X，不过这次…: the usual rule, then the exception of the task at hand, as two
/// sentences (the rule is read alone; the exception is a one-off or a pointer).
fn rule_then_exception(sentence: &str) -> Vec<String> {
    static USUAL: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^((normally|usually|generally|as\ a\ rule)\b|平时|一般|通常)"));
    static BUT: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)[,;]\s+but\s+|[，；]\s*(但是|但|不过|可是)"));
    let trimmed = sentence.trim_start();
    if !USUAL.is_match(trimmed) {
        return vec![sentence.to_owned()];
    }
    match BUT.find(trimmed) {
        // The exception is the task's own ("this time", "like this one"): a standing
        // exception ("but hotfixes always go out from the release branch") stays in the rule.
        Some(m)
            if TIME_BOUND.is_match(&trimmed[m.end()..].to_lowercase())
                || is_deixis(&trimmed[m.end()..].to_lowercase()) =>
        {
            vec![closed(&trimmed[..m.start()]), trimmed[m.end()..].to_owned()]
        }
        _ => vec![sentence.to_owned()],
    }
}

/// `text` without its quoted lines (`> …`): what the user quotes (the assistant's words, a
/// document) is not what the user says.
fn without_quoted_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('>'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes conversational openers: `also,`, `btw`, `ok,`, `heads up:`, 另外，...
pub(crate) fn strip_filler(sentence: &str) -> String {
    let mut s = without_list_marker(sentence.trim());
    loop {
        let lower = s.to_lowercase();
        let Some(f) = [
            "also, ",
            "also ",
            "and ",
            "btw, ",
            "by the way, ",
            "fyi, ",
            "fyi: ",
            "fyi ",
            "heads up, ",
            "heads up: ",
            "heads up ",
            "quick update: ",
            "quick update, ",
            "update: ",
            "note that ",
            "btw ",
            "oh, ",
            "ok, ",
            "okay, ",
            "ok so ",
            "so, ",
            "anyway, ",
            "sure, and ",
            "sure, ",
            "sure and ",
            "in general: ",
            "in general, ",
            "oh and ",
            "one more thing: ",
            "另外，",
            "另外",
            "还有，",
            "对了，",
            "嗯，",
            "哦，",
            "好的，",
        ]
        .iter()
        .find(|f| lower.starts_with(*f)) else {
            // "so from now on …", "ok always …", "anyway never …": a filler before a word of
            // a standing rule ("so far …", "ok to use …" keep their first word).
            match FILLER_BEFORE_RULE.captures(s).and_then(|c| c.get(1)) {
                Some(filler) => {
                    s = s[filler.end()..].trim_start();
                    continue;
                }
                None => break,
            }
        };
        // The prefix is ASCII or CJK: the same length in `s`, unless a character of `s`
        // lowercases to another length ("oK" with a Kelvin sign); then it is no filler.
        match s.get(..f.len()) {
            Some(head) if head.to_lowercase() == *f => s = s[f.len()..].trim_start(),
            _ => break,
        }
    }
    // "remember our default branch is trunk": the statement after it.
    let s = match s.split_once(' ') {
        Some((first, rest))
            if first.eq_ignore_ascii_case("remember")
                && rest
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| matches!(w.to_lowercase().as_str(), "our" | "the" | "we")) =>
        {
            rest
        }
        _ => s,
    };
    let s = VAGUE_OBJECT.replace_all(s, "");
    match DISLIKED_HABIT.captures(&s) {
        Some(c)
            if !matches!(
                c[1].split_whitespace()
                    .next()
                    .map(str::to_lowercase)
                    .as_deref(),
                Some(
                    "are"
                        | "were"
                        | "is"
                        | "do"
                        | "did"
                        | "have"
                        | "had"
                        | "can"
                        | "could"
                        | "will"
                        | "would"
                )
            ) =>
        {
            format!("Don't {}.", &c[1])
        }
        _ => s.into_owned(),
    }
}

/// "so" / "ok" / "okay" / "anyway" before a word opening a standing rule.
static FILLER_BEFORE_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^((?:so|ok|okay|anyway)\s+)(?:from\ now\ on|going\ forward|in\ (?:the\ )?future|always|never|whenever|every\ time|please|pls|don't|do\ not|remember)\b",
    )
});

/// "I hate it when you put emojis in commit messages, please don't": a dislike of what the
/// agent does is the rule not to do it ("Don't put emojis in commit messages."). The word
/// after "you" must be a verb of its own (not "you're", "you are").
static DISLIKED_HABIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:i\s+(?:really\s+)?(?:hate|dislike|don't\s+like|can't\s+stand)\s+(?:it\s+)?when|it\s+(?:annoys|bothers)\s+me\s+when)\s+you\s+((?:[a-z]+)\b(?:[^,.!;]*?))(?:\s*[,;]\s*(?:so\s+)?(?:please\s+)?(?:don't|do\s+not|stop)(?:\s+(?:do\s+)?(?:that|it))?)?\s*[.!]?$",
    )
});

/// A sentence cut before an aside joined to it ("fix the flaky test, and remember our default
/// branch is trunk", "refactor it, btw I want small PRs", "改一下这个，另外不要直接推 master"):
/// a task and a standing statement said in one breath are judged apart. The aside keeps its
/// marker (stripped later by [`strip_filler`]); a sentence without one comes back whole.
fn asides(sentence: &str) -> Vec<String> {
    static ASIDE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)[,;，；]\s*(?:and\s+|but\s+)?(remember\b|btw\b|by\s+the\s+way\b|fyi\b|note\s+that\b|另外|对了|顺便说一下|顺便)",
        )
    });
    let mut out = Vec::new();
    let mut start = 0;
    for c in ASIDE.captures_iter(sentence) {
        let (Some(whole), Some(marker)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let left = sentence[start..whole.start()].trim();
        if !left.is_empty() {
            out.push(left.to_owned());
        }
        start = marker.start();
    }
    let last = sentence[start..].trim();
    if !last.is_empty() {
        out.push(last.to_owned());
    }
    out
}

/// `text` without its fenced code blocks (a line opening with three backticks up to the next
/// such line, or the end): pasted code, traces and logs are not the user's statements, and a
/// block ends the sentence before it.
pub(crate) fn without_code_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.lines() {
        if line.trim_start().starts_with("~~~") {
            inside = !inside;
            out.push('\n');
            continue;
        }
        // A fence may open or close inside a line ("got this when running it:```").
        for (i, part) in line.split("```").enumerate() {
            if i > 0 {
                inside = !inside;
                out.push('\n');
            }
            if !inside {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// `text` without the output pasted under a line that introduces it without a fence
/// ("unique test fails:", a blank line, then the test's output up to the next blank line): the
/// block's lines are the tool's words, not the user's. Only under a line that speaks of output
/// or reports an event ([`OUTPUT_INTRO`], [`knowledge::is_event_or_task`]): "Heads up:" or
/// "One more thing about this repo:" introduce the user's own words. List items and headings
/// stay (a list of rules or a plan is judged as a document), and so does a block under a line
/// that introduces the user's rules ("my rules for this repo:", [`knowledge::introduces_rules`]).
fn without_pasted_blocks(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        out.push(line);
        i += 1;
        let intro = line.trim_end();
        if (intro.ends_with(':') || intro.ends_with('：'))
            && lines.get(i).is_some_and(|l| l.trim().is_empty())
            && !knowledge::introduces_rules(intro)
            && (OUTPUT_INTRO.is_match(intro) || knowledge::is_event_or_task(intro))
        {
            // The blank line, then the block up to the next blank line: list items stay, and
            // a block of one command line is the value its introduction announces.
            let end = lines[i + 1..]
                .iter()
                .position(|l| l.trim().is_empty())
                .map_or(lines.len(), |n| i + 1 + n);
            if end == i + 2 && looks_like_command(lines[i + 1]) {
                continue;
            }
            out.push("");
            i += 1;
            while i < lines.len() && !lines[i].trim().is_empty() {
                if knowledge::is_structure_line(lines[i]) {
                    out.push(lines[i]);
                }
                i += 1;
            }
        }
    }
    out.join("\n")
}

/// A line introducing what a tool printed: an error, output, a log, a failure, "got this",
/// what a command says or returns (报错, 输出, 日志).
static OUTPUT_INTRO: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(errors?|output|logs?|trace|traceback|stack\ ?trace|warnings?|fails?|failed|failing
           |crash(es|ed)?|panic(s|ked)?|got\ this|getting\ this|says|said|prints?|printed
           |returns?|returned|shows?|showed|spits?\ out)\b
        | 报错|输出|日志|提示
    ")
});

/// Whether `line` reads as one shell command ("make test-integration DB=local", "$ cargo
/// build"): a lowercase program name and its arguments, no sentence.
fn looks_like_command(line: &str) -> bool {
    static COMMAND: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*(\$\s+)?[a-z][a-z0-9_.+/-]*(\s+[^\s]+)*\s*$"));
    let line = line.trim();
    COMMAND.is_match(line)
        && !line.ends_with(['.', ':', '!', '?'])
        && line.split_whitespace().count() <= 12
}

/// The statement after a preamble that announces it ("one thing I noticed today and wanted to
/// say in general, not just for this: before you commit anything, …", "fyi: …"): the preamble (at
/// most 20 words, no value of its own) names a remark or a note. A list of rules ("two rules
/// for this codebase: …") is read whole by [`rule_list_items`].
fn after_preamble(sentence: &str) -> Option<String> {
    static PREAMBLE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(say|said|mention|noticed|thing|things|note|reminder|request|psa|fyi|in general|heads up|from me|my own)\b",
        )
    });
    static SPEAKER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)\b(said|says|say|suggest\w*|mention\w*|wrote|writes|thinks?|told|recommend\w*)\b")
    });
    static FIRST_PERSON: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(i|i'd|i've|i'm|me)\b"));
    let (head, rest) = sentence.split_once(": ")?;
    let rest = rest.trim();
    // "my manager said: …", "the docs say: …": someone else's words.
    if (SPEAKER.is_match(head) && !FIRST_PERSON.is_match(head))
        || NOT_A_STATEMENT.is_match(&head.to_lowercase())
    {
        return None;
    }
    (head.split_whitespace().count() <= 20
        && !head.contains(['`', '/', '='])
        && PREAMBLE.is_match(head)
        && rest.split_whitespace().count() >= 3)
        .then(|| rest.to_owned())
}

/// A rule asked for as a polite question: "Could you please not use unwrap() outside of tests
/// in any Rust code you write for me?" → "Please don't use unwrap() outside of tests in any Rust
/// code you write for me."; "can you always run the linter before you push?" → "Always run the
/// linter before you push." Only with always/never, or a generic scope ([`GENERIC_SCOPE`]):
/// "can you fix the login bug?", "could you not commit yet?" stay questions.
fn polite_rule(sentence: &str) -> Option<String> {
    static POLITE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:could|can|would|will)\s+you\s+(?:please\s+)?(always\s+|never\s+|not\s+|stop\s+)?(.+?)\s*[?？]\s*$",
        )
    });
    let c = POLITE.captures(sentence.trim())?;
    let adverb = c.get(1).map_or("", |m| m.as_str().trim()).to_lowercase();
    let rest = c.get(2)?.as_str();
    let lower = rest.to_lowercase();
    let verb = lower.split_whitespace().next().unwrap_or("");
    // "will you always be this slow?", "could you never mind that": no rule; "could you not
    // commit yet?", "can you stop logging the body in the handler we just wrote?": the task at
    // hand, unless a generic scope says otherwise.
    // "can you not use mocks ever?": the time word after the verb makes it standing too.
    static EVER: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(ever|anymore|any\ more|again|from\ now\ on)\s*$"));
    let standing = (matches!(adverb.as_str(), "always" | "never")
        || (adverb == "not" && EVER.is_match(&lower)))
        && !matches!(verb, "be" | "mind");
    if !(standing || GENERIC_SCOPE.is_match(&lower)) || knowledge::is_event_or_task(&lower) {
        return None;
    }
    let lead = match adverb.as_str() {
        "always" => "Always ",
        "never" => "Never ",
        "not" => "Please don't ",
        "stop" => "Stop ",
        _ => "Please ",
    };
    Some(format!("{lead}{rest}."))
}

/// What to do instead, said right after a rule: "use `unknown` and narrow it with a type
/// guard", "Use `?` or `expect(…)` instead.": it opens with use / prefer / switch to / go with /
/// stick to and names a value (a backticked span or a call).
fn is_replacement(sentence: &str) -> bool {
    static REPLACEMENT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(please\s+)?(use|prefer|switch\s+to|go\s+with|stick\s+(to|with))\s+(`[^`]+`|[\w.:]+\(\))",
        )
    });
    static ONE_OFF: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\b(for\ this|this\ (change|time|one|pr|commit)|the\ last\ one|only\b|just\ for|for\ the\ \w+\ tests?)\b|\b[\w-]+\.(py|rs|ts|js|go|rb|java|kt|swift|c|cc|cpp|h)\b",
        )
    });
    REPLACEMENT.is_match(sentence.trim())
        && !ONE_OFF.is_match(sentence)
        && !knowledge::is_event_or_task(sentence)
}

/// Terse messages put one fact over several "sentences" ("no mocks. ever. hit the real test
/// db", "no. uv sync. always"): a sentence that is only a standing adverb ("ever", "always",
/// "anymore") is joined to the one before it, and one that is only a correction opener
/// ("no.", "wrong.", 不对。) opens the one after it.
fn join_terse(pieces: Vec<String>) -> Vec<String> {
    static ADVERB: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(ever|ever again|always|never again|永远)$"));
    static OPENER: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(no|nope|nah|wrong|not quite|不对|错了|不是)$"));
    // A rule worded as one ("no emoji in commit messages", "never push to main").
    static RULE_SHAPE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(no|never|don't|dont|do not|always|use)\s+\S"));
    let core = |s: &str| {
        s.trim()
            .trim_end_matches(['.', '!', '。', '！', ','])
            .trim()
            .to_owned()
    };
    let mut out: Vec<String> = Vec::new();
    let mut opener: Option<String> = None;
    for piece in pieces {
        let c = core(&piece);
        // Only after a piece of at most three words ("no mocks", "uv sync") or one worded as a
        // rule ("no emoji in commit messages"): "the tests fail locally. always." is a report.
        if ADVERB.is_match(&c)
            && let Some(last) = out.last_mut()
            && (core(last).split_whitespace().count() <= 3 || RULE_SHAPE.is_match(&core(last)))
            && core(last).is_ascii() == c.is_ascii()
        {
            *last = format!("{}, {c}.", core(last));
            continue;
        }
        if OPENER.is_match(&c) {
            opener = Some(c);
            continue;
        }
        match opener.take() {
            Some(o) if o.is_ascii() => out.push(format!("{o}, {piece}")),
            Some(o) => out.push(format!("{o}，{piece}")),
            None => out.push(piece),
        }
    }
    if let Some(o) = opener {
        out.push(o);
    }
    out
}

/// A prohibition of a thing, worded without a verb: "no mocks, ever", "no semicolons in this
/// codebase". The word after "no" must name a thing ("no need", "no problem", "no idea" do
/// not), and "ever" or this project's scope must come with it: "no crashes anymore", "no output
/// again", "no tests here" report what is seen.
fn is_prohibition(lower: &str) -> bool {
    static SHAPE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^no\s+([\w`'./-]+)(\s+[\w`'./-]+){0,3}\s*,?\s*(ever|ever again|in this (project|repo|repository|codebase))\s*[.!]?$",
        )
    });
    SHAPE
        .captures(lower.trim())
        .is_some_and(|c| !facts::NOT_THINGS.contains(&&c[1]))
}

/// A complaint about a habit of the agent, and the thing it is about when named: "your commit
/// messages are way too long" (`commit messages`), "you keep rewriting whole files", "you added
/// emojis again", 你又把整个文件重写了. `None` when `sentence` is no such complaint.
fn habitual_complaint(sentence: &str) -> Option<Option<String>> {
    static YOUR_THINGS: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(?:your|ur)\s+((?:[\w-]+\s+){0,2}[\w-]+s)\s+(?:are|were|keep|always|still|get)\b.*\b(too|so|way|really|still|always|again|annoying|wrong|messy|verbose|cluttered|unreadable|noisy|useless|huge|long)\b",
        )
    });
    static YOU_HABIT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^you(?:'ve)?\s+(keep|always|still|constantly)\s+\w+|^you(?:'ve)?\s+\S+(?:\s+\S+){0,8}\s+again\b|^你(又|总是|老是|每次都|还是|怎么又)",
        )
    });
    let s = sentence.trim();
    if let Some(c) = YOUR_THINGS.captures(s) {
        return Some(Some(c[1].to_owned()));
    }
    YOU_HABIT.is_match(s).then_some(None)
}

/// An instruction that can follow a complaint as its rule: it opens with a rule verb ("keep
/// them to one line", "only change the lines you need", 只改…, 不要…), is no question and no
/// one-off.
fn is_rule_after_complaint(sentence: &str) -> bool {
    static RULE_VERB: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(please\s+)?(keep|use|write|stop|only|limit|ask|don't|do not|never|always|stick to)\b|^(请)?(只|不要|别|以后|每次|保持|控制在)",
        )
    });
    let lower = sentence.to_lowercase();
    RULE_VERB.is_match(sentence.trim())
        && !NOT_A_STATEMENT.is_match(&lower)
        && !knowledge::is_event_or_task(sentence)
}

/// "one" / "ones" standing for a thing ("add one for this release", "use the ones from the
/// spec").
static ONE_OR_ONES: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(add|use|write|pick|take|keep)\s+(one|the\s+ones?)\b|\bones\b"));

/// The first pronoun of `sentence` ("them", "it", "they") replaced by `thing`.
fn replace_first_pronoun(sentence: &str, thing: &str) -> String {
    static PRONOUN: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(them|it|they)\b"));
    PRONOUN.replacen(sentence, 1, thing).into_owned()
}

/// A vague object after a rule ("don't ever use sudo for this stuff", "never do that for things
/// like this"): it names no thing a pronoun could be resolved to, and the rule holds without it.
static VAGUE_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\s+(for|with|on|in)\s+(this|that|such)\s+(stuff|kind\s+of\s+(thing|stuff)|sort\s+of\s+thing|type\s+of\s+thing)s?\b|\s+for\s+(stuff|things)\s+like\s+(this|that)\b",
    )
});

#[derive(Debug, PartialEq, Eq)]
enum Cue {
    Preference,
    Correction,
    /// A project fact by the older cue phrases ([`PROJECT`]).
    Project,
    /// A project fact by value and topic (`knowledge`): each clause must name a value.
    Knowledge,
    Reference,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// Questions (also a tag question without its "?": "we're on pnpm now, right"), hedges,
/// hypotheticals, reported speech, deixis: never a memory.
static NOT_A_STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        [?？]\s*$ | 吗[。.!！]?\s*$ | 呢[。.]?\s*$ | 是不是 | 要不要 | 能不能 | 可不可以 | 怎么
        | ,\s*(right|correct|don't\ we|isn't\ it|aren't\ we|didn't\ we|doesn't\ it|won't\ it)\s*[.!]*\s*$
        | ^(can|could|would|should|shall|does|did|is|are|was|were)(\s|$) | ^do\ (you|we|i|they|he|she|u)\b | ^do$
        | ^(what|why|how|where|which|who)('s|'re)?\b
        | \b(maybe|perhaps|probably|possibly|i\ think|i\ guess|i\ suppose|not\ sure|might|at\ some\ point|let\ me\ think|we\ could\ try|idk|dunno|i\ don't\ know|i\ bet|i\ suspect|i'd\ guess|my\ guess|i\ wonder|i'm\ pretty\ sure|hold\ off)\b
        | 也许|可能|或许|好像|不确定|考虑一下|(以后|回头|到时候|之后|下次)再说|我猜|估计|猜测|先别|等.{1,24}再(说|改|动|弄)
        | \b(he|she|they)('s|'re|\ is|\ are)\ (on|using|running)\b
        | ^(what\ if|suppose|imagine|假如|假设|要是)
        | \b(he|she|they|someone|somebody|people|colleague|coworker|co-worker|teammate|boss|manager|lead|reviewer|docs?|article|blog|friend|cto)\s+([a-z]+\s+)?(said|says|say|told\ me|thinks?|insists?|wants?|suggest(s|ed)?|claims?|believes?|argues?|prefers?|recommends?|mentioned|keeps\ saying)\b
        | \bsaid\ (that\ )?we\b | \baccording\ to\b
        | (^|[,;]\s*)(a|an|the|some|one|our|their)\ [a-z]+\ (just\ )?(asked|said|told\ (me|us)|mentioned|suggested)\b | 他说|她说|同事说|听说|据说|(同事|领导|老板|有人|他|她|他们)(觉得|认为|坚持|建议|说)
        | ^no\ (idea|clue|problem|worries|rush|luck)\b
        | (她们|人家|别人|其他组|别的组|隔壁组|组长)[^，。,]{0,8}(说|觉得|认为|建议|要求)
    ")
});

/// Someone else's habit or words, by who they are: a person named by their role ("my colleague
/// Ahmet always uses tabs", "our tech lead keeps saying …").
static SOMEONE_ELSE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(my|our|his|her|their|a|the|one)\ (colleague|coworker|co-worker|teammate|boss|tech\ lead|team\ lead|cto|ceo|friend|intern|reviewer|designer|wife|husband|predecessor)s?\b
          (\ [\w-]+){0,4}?\ (always|never|usually|often|keeps|tends|said|says|told|mentioned|thinks|wants|insists|suggested|prefers|uses|likes|hates)\b
    ")
});

/// Someone else by their name at the start of the sentence, as written, before a verb of
/// speech ("Priya from SRE said at standup …"): a capitalised word that is no opener of the
/// user's own ([`NOT_NAMES`]). A habit verb is not enough: "Docker always runs as non-root" and
/// "Secrets never go in the repo" name things of the project.
static NAMED_SOMEONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([A-Z][a-z]+)(\s+(from|on|in|at|of)\s+(the\s+)?[\w-]+(\s+team)?)?\s+(said|says|told|mentioned|thinks|insists|suggested|asked|reckons|keeps\s+saying)\b",
    )
    .unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
});

/// Sentence openers that are no name ("Please always …" is the user's own rule).
const NOT_NAMES: &[&str] = &[
    "I",
    "We",
    "You",
    "It",
    "This",
    "That",
    "They",
    "He",
    "She",
    "Also",
    "Then",
    "So",
    "Please",
    "And",
    "But",
    "Just",
    "Now",
    "Ok",
    "Okay",
    "Yes",
    "Yeah",
    "No",
    "Everyone",
    "Everybody",
    "Somebody",
    "Someone",
    "Nobody",
    "The",
    "Here",
    "There",
    "Tests",
    "Prod",
    "Staging",
];

/// Whether `sentence` (as written) reports someone else's habit or words ([`SOMEONE_ELSE`],
/// [`NAMED_SOMEONE`]), or goes on describing a habit with a verb in the third person and no
/// subject of its own ("Never runs tests before pushing"): an instruction to the agent opens
/// with the verb's base form ("never run …").
fn reports_someone_else(sentence: &str, lower: &str) -> bool {
    static THIRD_PERSON_HABIT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^(and\ |but\ |also\ )?(always|never|usually|often)\ ([a-z]{2,}[^sua\W]s|[a-z]+(ss|sh|ch|x)es|does|goes|has)\b",
        )
    });
    // 老王说 / 小张觉得 (not 老实说 "honestly", 老是, 小心; not 说得对 "is right").
    static ZH_NAME_SAYS: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[老小]([\p{Han}])(说|觉得|认为|建议|讲|提到|要求)([^得的]|$)"));
    // 运维那边说…, 产品经理觉得…, 隔壁组建议…: a role or a team, not the user.
    static ZH_ROLE_SAYS: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^[^，,。；;我]{0,4}?(运维|产品|测试|后端|前端|客户|老板|领导|经理|同事|组长|架构师|安全组|dba|sre|隔壁组|其他组|别的组|对方)(经理|那边|团队|组|的同学|的人|们)?也?(说|觉得|认为|建议|提到|反馈|讲)([^明究法]|$)",
        )
    });
    let zh_name = ZH_NAME_SAYS
        .captures(lower)
        .is_some_and(|c| !matches!(&c[1], "实" | "是" | "心" | "早" | "大"))
        || ZH_ROLE_SAYS.is_match(lower);
    zh_name
        || SOMEONE_ELSE.is_match(lower)
        || NAMED_SOMEONE
            .captures(sentence)
            .is_some_and(|c| !NOT_NAMES.contains(&&c[1]))
        || THIRD_PERSON_HABIT.is_match(lower)
}

/// A sentence about one object in front of the user ("this file", 这个函数): not a memory.
static DEIXIS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(this|that|these|those)\ (file|files|function|line|lines|test|bug|one|method|class|variable|pr|branch|commit|case|error|change|diff)\b
        | \bthe\ (other|second|first|third|last|previous|next|old|new|same)\ (one|approach|option|version|way|solution|file|branch|function|method)\b | \bthe\ [\w-]+\ one\b
        | \b(option|choice|variant|approach|plan|proposal)\ ([a-d]|\d|one|two|three)\b | 方案\s*[一二三ABCabc\d] | 选项\s*[ABCabc\d]
        | 这个(文件|函数|方法|变量|bug|类|接口|页面|按钮|组件|字段|请求|模块|脚本|测试|报错)|这一行|这里的
        | \b(like|as)\ (this|that)\s*([.,!;]|$|\ (for|from|in|going|again|every|each|always|too|please)\b)
        | \b(this|that)\ way\s*([.,!;]|$|\ (for|from|in|going|again|every|each|always|too|please)\b)
        | (按|照|像)(上次|之前|刚才)?(那样|这样)|上次那样
    ")
});

/// Whether `lower` points at one object in front of the user ([`DEIXIS`]), or at a way shown
/// before ("write tests like this for me from now on", 按上次那样处理); "that branch" after
/// "a release/3.8 branch" in the same sentence points back into it (anaphora), not out.
fn is_deixis(lower: &str) -> bool {
    DEIXIS.find_iter(lower).any(|m| {
        let noun = m.as_str().rsplit(' ').next().unwrap_or("");
        let before = &lower[..m.start()];
        // "no rails 8 stuff like that": things of that kind, not a way shown before; "keep it
        // that way" keeps what the sentence said; 像这样写：… shows the way after its colon.
        let word_before = before.split_whitespace().next_back().unwrap_or("");
        if (m.as_str().starts_with("like ") || m.as_str().starts_with("as "))
            && matches!(
                word_before,
                "stuff" | "things" | "anything" | "something" | "nothing" | "everything" | "or"
            )
        {
            return false;
        }
        if m.as_str().contains(" way")
            && (before.ends_with("keep it ") || before.ends_with("stay "))
        {
            return false;
        }
        if m.as_str().ends_with("这样") || m.as_str().ends_with("那样") {
            let after: String = lower[m.end()..].chars().take(3).collect();
            if after.contains([':', '：']) {
                return false;
            }
        }
        !(m.as_str().starts_with("that ") || m.as_str().starts_with("those "))
            || noun.is_empty()
            || !before
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == noun || w.strip_suffix('s') == Some(noun))
    })
}

/// `that` as a conjunction ("remember that", "note that"), not a pointer.
static THAT_CONJUNCTION: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(remember|note|know|sure|ensure|mean|means|say|said|agree|given) that\b")
});

/// A request to make one thing for the user ("write me a fetch_with_retry function …") or to
/// make a thing described after it ("add a cron job that never runs on weekends", "create the
/// script: it should always …", 写个 formatAmount…): what follows is that thing's spec. "Add a
/// changelog entry to every PR you open" describes no thing made now.
/// Words that make a rule outlast the task: "from now on", "for every project", 以后, 所有项目.
static STANDING_SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(from\ now\ on|going\ forward|in\ (the\ )?future|from\ here\ on)\b
        | \b(every|any|all)\ (of\ my\ )?(projects?|repos?|codebases?)\b
        | 以后|今后|所有项目|每个项目|任何项目
    ")
});

/// A spec of the work asked for, under its header ("requirements: the button must always …",
/// 要求：导出的 CSV 永远用 UTF-8): what the thing being built does, not a rule for the agent.
static SPEC_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^((the|some|a\ few|functional|product)\ )?(requirements?|specs?|specification|acceptance\ criteria|user\ stor(y|ies))\s*[:：]
        | ^(需求|要求|验收标准|功能要求|产品要求)\s*[:：]
    ")
});

static TASK_WITH_SPEC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^((now|then|next|so|ok|okay|alright|first|pls|please|just)[,\s]+)*(please\ )?(can\ you\ |could\ you\ )?
        (write|add|create|implement|build|make|generate|scaffold|give|code\ up|put\ together|set\ up)\ 
        ( (me|us)\ (a|an|the|one|two|three|some|another)\ 
        | (a|an|the|one|two|three|some|another)\ [^:;]{1,80}?(:|\ (that|which)\ |\ it\ (should|must|will)\ ) )
        | ^(请|麻烦|帮我|给我)?(写|加|建|做|实现|生成)(个|一个|一下)
        | ^((i|we)\ )?(need|want|would\ like)\ (a|an|one|some|two|three)\ [^:;]{1,80}?(:|,?\ (that|which)\ |,?\ it\ (should|must|will|has\ to|needs\ to)\ )
    ")
});

/// What makes an always/never in a task request hold beyond the task: the words of a standing
/// rule ("from now on", "every time", "any script you write", "in every project").
static BEYOND_TASK: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(from\ now\ on|going\ forward|in\ (the\ )?future|from\ here\ on|every\ time|each\ time|whenever|as\ a\ rule|in\ general|by\ default)\b
        | \b(any|every|all)\ ([\w-]+\ ){0,2}(you|u)\ (write|create|make|add|generate)\b
        | \b(every|all|any)\ (project|repo)s?\b | \b(for|in)\ (all|every)\ (my|our)\b
        | \b(every|each)\ (answer|reply|response|message|commit|pr|pull\ request|session|change|task)\b
        | ,\s*(always|every\ time)\s*[.!]?$
        | 以后|今后|每次|所有
    ")
});

/// Sentences that ask the agent to do a task now: not facts.
static TASK_REQUEST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^((now|then|next|so|ok|okay|alright|cool|great|first|pls|please|just)[,\s]+)*(please\ )?(fix|add|create|implement|update|write|refactor|rename|remove|delete|look|check|review|move|merge|push|commit|revert|install|investigate|debug|help|make|change|set\ up|setup|try|find|show|tell|explain|read|open|let's|lets|finish|build|get|hook\ up|wire|port|convert|replace|clean\ up|go\ ahead|continue|parse|wrap|split|extract|document|optimi[sz]e|migrate|handle|validate|print|compute|generate|summari[sz]e|translate|draft|compare|list|load|save|send|fetch|download|upload|scaffold|patch|rebase|squash|give\ me|write\ me|get\ me|show\ me)\b
        | \b(i'd\ like\ (you|your\ help)|i\ would\ like\ (you|your\ help)|i\ want\ you\ to|i\ need\ you\ to|can\ you|could\ you|would\ you|help\ me|your\ help|hey\ claude|hey\ codex)\b
        | ^((now|so|ok|okay)[,\s]+)?((i|we)\ )?(need|want)\ (a|an|some|the)\ 
        | ^(then|next|after\ that|afterwards)[,\s]+(run|apply|deploy|execute|do|push)\b
        | ^(请)?(帮我|帮忙|修复|实现|添加|删除|看一下|看看|检查|把|给|改一下|提交|合并)
    ")
});

/// "no more pip installs", "no longer …": a rule, not "no," answering the agent.
static NO_MORE: LazyLock<Regex> = LazyLock::new(|| re(r"^no\s+(more|longer)\b"));

static CORRECTION_OPENER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(no|nope|nah|actually|wrong|incorrect|not\ quite|that's\ (not|wrong|incorrect)|that\ is\ (not|wrong)|you're\ wrong)\b[,.!:\s—-]
        | ^(不对|错了|不是的|其实|实际上|你搞错了|搞错了)
    ")
});

static TOLD_YOU: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(i told you|i said|i already said|as i said)\b|我说过|说过了|跟你说过")
});

static CONTRAST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ,\s*not\ \S | \(not\ \S | \bnot\ \S+(\ \S+)?\ but\b | \binstead\ of\b | \brather\ than\b | —\s*not\ \S
        | 而不是|而非|，?不是.{1,30}[，,]\s*(而)?是|，\s*不是\S|，不用\S
    ")
});

/// ", not happening any time soon", ", not yet", "not sure": "not" before no value, so no
/// contrast of one thing with another.
static NOT_A_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ,\s*not\ (happening|yet|now|today|sure|necessary|needed|urgent|important|planned|planning|going\ to|a\ (big\ )?deal|a\ problem|an\ issue|worth)\b
    ")
});

/// Standing instructions.
static PREFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(please\ )?(always|never)\b
        | ^(from\ now\ on|going\ forward|in\ the\ future|in\ future|for\ future\ reference|for\ the\ future|as\ a\ rule|from\ here\ on|whenever\ you|when\ you|every\ time\ you|each\ time\ you|remember\ (to|that))\b
        | (^|[,;:]\s*|\b(you|we|please|should|must|to|and)\s+)(always|never)\s+\w
        | \b(so|then|just)\s+(always|never)\s+(use|write|run|add|put|keep|ask|check|commit|push|give|make|do|call|pin|install|test|format|name|include|avoid|prefer|go\ with|stick|wrap|log|print|pick|choose|switch|set|leave|mention|read|open|merge|rebase|deploy|create|delete|remove|edit|touch|change)\b
        | \b(i|we)(\ prefer|'d\ prefer|\ would\ prefer|'d\ rather|\ would\ rather|\ like\ to|\ like\ using)\b | \bmy\ preference\b
        | ^(normally|usually|generally)\ you\ (always\ )?(run|use|do|write|add|put|keep|ask|check|commit|push|make|call|test|format|lint|build|deploy|merge|rebase|squash)\b
        | \bi\ (always\ |only\ |just\ )?use\ \S+(\ \S+)?\ (for\ (every|all|any)\b|for\ everything\b|on\ (every|all|any)\ (of\ )?(my\ )?\w+|in\ (all|every|any)\ (of\ )?(my\ )?\w+|everywhere\b)
        | \bi\ (hate|dislike|don't\ like|can't\ stand)\ (it\ )?when\ you\b | \bit\ (annoys|bothers)\ me\ when\ you\b
        | ^(please\ )?(don't|do\ not|dont)\ (ever|use|add|commit|push|touch|write|put|leave|create|run|edit|modify|include|mock|import|call|install|bump|hardcode|log|print|catch|swallow|wrap|force|skip|disable|reformat|explain|summarize|apologize)\b
        | ^(please\ )?(make|be)\ sure\ (to|that|you\ (always|never|use|run|write|add|keep|don't))\b | ^(please\ )?avoid\ \w+
        | ^(please\ )?prefer\ \S+.*\b(over|to|instead\ of)\b
        | \b(i|we)\ (don't|do\ not)\ want\ (you\ to|any|\w+s)\b | \bi\ want\ you\ to\ (always|never|use|write|keep|stop|avoid|answer|reply)\b
        | \bi\ (don't|do\ not)\ want\b.*\b(in|for)\ (any|every|all)\ (of\ my\ )?(projects?|repos?|codebases?)\b
        | \bi('d|\ would)\ (like|prefer|rather)\ (it\ if\ )?you\ (to\ )?(always|never)\b
        | ^((a\ few|two|three|four|some|my|our|the|house|ground)\ )*(rules?|conventions?|guidelines?)\b[^:]{0,40}:\s*\S
        | ^(please\ )?keep\ (answers|replies|responses|functions|lines|commits|prs|comments|messages|explanations|summaries)\b
        | \b(don't|do\ not)\ .*\b(again|anymore|any\ more|ever)\b | ^no\ (more|longer)\b | ^(please\ )?(stop|quit)\ \w+ing\b
        | (^|[，,。：:；;！!\s]|我们|我|你|们|从|所以|那|大家|都|就|也|项目|仓库)以后|今后|往后|总是|始终|永远|一律|每次|统一|务必|记住|我喜欢用|我习惯|我偏好|偏好|别用|不要用|不许|禁止|不要再|别再|所有.*都
        | \b(answer|reply|respond|talk|speak|write|explain)\b[^.;]{0,30}\bin\ (english|chinese|mandarin|japanese|german|french|spanish|korean)\b
        | \b(english|chinese|mandarin|japanese|german|french|spanish|korean)\ (to|with|for)\ me\b
        | \bi\ ((really|generally|usually|always|just)\ )?(like|love|hate|dislike|want|prefer)\ (short|long|concise|brief|terse|small|detailed|plain|simple)\ \w+
        | \b(the\ thing|what)\ i\ care\ about(\ most)?\ is\ (that\ )?you\ \w+ | \bi\ care\ (a\ lot\ )?that\ you\ \w+
        | (你|也|要|请)记得 | 记得(先|要|每次|别|不要) | 我的习惯
        | \b(every|each|all)\ (reply|replies|answer|answers|response|responses)\b
        | (回复|回答|跟我说|和我说|对我说|跟我交流|和我交流)我?.{0,4}用
        | (注释|提交信息|文档|代码注释).{0,4}(用|写成)(中文|英文)
        | 尽量|优先用|优先使用|最好用|少用|不需要每次|我希望你|请用|请始终|请不要|不要(加|写|用|改|提交|推|删|在|把|给|直接)|别直接
        | (聊天|交流|沟通|说话|回答|回复|解释|注释|文档).{0,3}用(中文|英文|英语|汉语) | 用(中文|英文|英语|汉语)(写|回复|回答|交流|聊天|沟通)
        | [,;]\s*(always|ever|from\ now\ on|going\ forward)\s*[.!]?$
    ")
});

/// "I'd like you to …", "I would rather you …", "I'd prefer it if you …".
static WISH: LazyLock<Regex> =
    LazyLock::new(|| re(r"\bi('d|\ would)\ (like|prefer|rather)\ (it\ if\ )?you\b"));

/// A rule's end in time: "for now", "this time", "until the 2.4 release goes out", "until
/// friday", 这次, 暂时, "12 号之前". Narrower than `knowledge::is_one_off`: "until the tests pass"
/// is a condition, "on a Friday afternoon" a habit, 一下 softens a verb.
static TIME_BOUND: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(for\ now|just\ this\ once|this\ once|for\ today|today|tonight|this\ time|temporarily|for\ the\ moment|right\ now
          |for\ this\ (task|pr|ticket|change|session|run|request|branch|release|sprint|week)|(this|next)\ (week|sprint|month)|over\ the\ weekend)\b
        | \buntil\ (the\ )?[\w.-]+\ (release|launch|demo|freeze|deadline)\b | \buntil\ [^,.;]{0,30}\b(goes\ out|ships|is\ out|lands|is\ merged)\b
        | \buntil\ (monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next\ \w+|the\ end\ of\ \w+)\b
        | 这次|这一次|暂时|今天|临时|这周|本周|\d{1,2}\s*[号日](之前|以前|前)|封网|封版|冻结期
    ")
});

/// `text` without its backticked spans: "`date.today()`" names code, not a day.
fn without_ticks(text: &str) -> String {
    static TICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`[^`]*`"));
    TICKED.replace_all(text, " ").into_owned()
}

/// Words saying a rule holds from now on, whatever the time words beside it.
static STANDING: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(always|never|ever|every|each|whenever|from\ now\ on|going\ forward|from\ here\ on|in\ (the\ )?future|any\ more|anymore|again)\b
        | \b(usually|generally|habit|remember)\b
        | 以后|今后|往后|永远|每次|一律|始终|总是|所有|任何|习惯|一般|记得
    ")
});

/// always/never before a participle or adjective ("never needed, the name says enough",
/// "always worked before"): a judgement, not an instruction; "never mind" drops a request.
static NOT_A_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(always|never)\s+(needed|necessary|useful|helpful|worked|happens|happened|mattered|been|was|were|is|are|had|did)\b|^never\s+mind\b",
    )
});

/// What makes an instruction hold beyond the task at hand: a generic scope over what the agent
/// does ("any bash script you write", "code you hand me", "before every commit", "not here,
/// not anywhere", "that goes for every project", "not just for this", "as a rule").
/// Quantifiers over the task's objects ("for all handlers", "everywhere", "after each entry")
/// are not: "add tests for all handlers" is a task.
static GENERIC_SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(any|every|each|all)\ ([\w-]+\ ){0,2}(you|u)\ (write|create|add|make|generate|open|send|give|hand|touch)\b
        | \b(code|scripts?|commits?|prs?|pull\ requests?|messages?|answers?|replies|tests?)\ (you|u)\ (write|hand|give|send|make|open|create)\b
        | \bas\ a\ (general\ )?rule\b
        | \b(before|after)\ (every|each|any)\ (commit|push|merge|release|deploy|pr|pull\ request|change|edit|reply|answer|task|session)\b
        | \bbefore\ you\ (commit|push|merge)\ anything\b
        | \bnot\ here,?\ not\ anywhere\b | \b(here|there)\ or\ anywhere\b | \bnot\ just\ (for\ )?(this|here|now)\b
        | \b(goes|holds)\ for\ (every|all|any)\ (project|repo)s?\b
        | \b(from\ now\ on|going\ forward|from\ here\ on(\ out)?|in\ (the\ )?future|every\ single\ time)\b
        | \b(every\ time|each\ time|whenever)\ (you|u)\b | \b(every|each)\ time\s*(please|pls|[.,!]|$)
        | \b(in|for|across)\ (every|any|all)\ (of\ (my|our)\ )?(projects?|repos?|repositor(y|ies)|codebases?)\b(\s*[,.;!:]|\s*$|\ (you|i|we)\b|\ (in\ which|that)\ you\b|\ of\ mine\b)
        | [,;]\s*(every|any|all)\ (projects?|repos?|repositor(y|ies)|codebases?)\s*[.!]?$
    ")
});

/// A sentence giving the scope of the rule before it ("that goes for every project", "this
/// applies to any repo of mine", 所有项目都一样): it says where the rule holds, nothing of its own.
static SCOPE_CONTINUATION: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(and\ )?(that|this|it|same|the\ same)(\ rule)?\ (goes|applies|counts|holds|is\ true)\ (for|to)\b
        | ^(and\ )?(that|this|it)('s|\ is)\ (a\ )?(general|global|universal|standing|blanket)\ (thing|rule|preference)\b
        | ^(and\ )?not\ (just\ |only\ )?(in|for)\ (this|here)\b
        | ^(and\ )?not\ here,?\ (and\ )?not\ (anywhere|in\ any\ other)\b
        | ^(and\ )?(the\ )?same\ (goes\ )?(for|in)\ (every|all|any)
        | ^(in\ |for\ )?(any|every|all)\ (of\ my\ )?(repos?|repositor(y|ies)|projects?|codebases?)(,?\ (always|ever|too|as\ well))?\s*[.!]?$
        | ^(it\ |this\ |that\ )?(goes|applies)\ (for|to)\ (everything|every|all|any)\b
        | ^(这|这个|这条|这一条)?(规则)?(也)?(同样)?适用于
        | ^(这|这个|这条)?(在)?(所有|每个|任何|哪个)(项目|仓库)(里)?都(一样|适用|这样)
    ")
});

/// A header of rules for this project, ending in a colon: "Rules for this repo going forward,
/// …:", "conventions here:", 这个项目的规范：.
static RULES_HERE_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^[^:：]{0,20}\b(rules?|conventions?|guidelines?|ground\ rules)\b[^:：]{0,20}\b(for|in|of)\ (this|our)\ (project|repo|repository|codebase|service)\b[^:：]{0,80}[:：]\s*$
        | ^[^:：]{0,20}\b(rules?|conventions?|guidelines?)\ here\s*[:：]\s*$
        | ^(这个|本)(项目|仓库)[^:：]{0,10}(规则|规范|约定)[^:：]{0,20}[:：]\s*$
    ")
});

/// "in this repo", "for this project", 这个项目, 本仓库: this project named as the scope.
static THIS_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(in|for|on)\ (this|our)\ (project|repo|repository|codebase|monorepo|workspace)\b
        | 这个(项目|仓库|工程|代码库)|本(项目|仓库)|我们(项目|仓库)
    ")
});

/// Whether `sentence` says where it holds (this project, every project) or speaks of the user
/// ("me", "my", "I"): then it keeps its own scope.
fn names_own_scope(sentence: &str) -> bool {
    static USER: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\b(i|me|my|mine|i'm|i've|i'd)\b|我([^们]|$)"));
    let lower = sentence.to_lowercase();
    THIS_PROJECT.is_match(&lower)
        || USER_WIDE.is_match(&lower)
        || BEYOND_PROJECT.is_match(sentence)
        || GENERIC_SCOPE.is_match(&lower)
        || USER.is_match(sentence)
}

/// `entry` with this project said as its scope (", in this project"; （这个项目） for a Chinese
/// one) before its final stop.
fn in_this_project(entry: &str) -> String {
    with_scope(entry, ", in this project", "（这个项目）")
}

/// `entry` with its scope said: ", in every project" (所有项目都适用 for a Chinese one) before its
/// final stop.
fn in_every_project(entry: &str) -> String {
    with_scope(entry, ", in every project", "（所有项目都适用）")
}

/// `entry` with a scope said before its final stop: `english` after an English entry, `chinese`
/// after a Chinese one.
fn with_scope(entry: &str, english: &str, chinese: &str) -> String {
    let body = entry.trim_end().trim_end_matches(['.', '。', '!', '！']);
    if body.chars().any(is_han) {
        format!("{body}{chinese}。")
    } else {
        format!("{body}{english}.")
    }
}

/// Scope words beyond this project, in a [`SCOPE_CONTINUATION`]: "not just this repo",
/// "everything you do for me", "any of my projects", 所有项目.
static BEYOND_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \bnot\ (just|only)\ (for\ )?(this|here)\b
        | \beverything\ (you\ (do|write|commit|make|create|open|push|send)|for\ me)\b
        | \b(any|every|all)\ (of\ )?(my|our)\ (projects?|repos?|codebases?)\b
        | \b(every|any|all)\ (projects?|repos?|repositor(y|ies)|codebases?)\b | \bany\ other\ (one|project|repo|codebase)\b
        | \b(goes|applies)\ (for|to)\ everything\b
        | 所有项目|每个项目|任何项目|哪个项目|所有仓库|任何仓库
    ")
});

/// Where or how broadly, not for how long: "on my machine", "in general", "your replies",
/// "before you commit", "all my projects". With a task verb these stay tasks ("install postgres
/// on my laptop", "explain in general how …"); with a habit (don't / never / always / stop /
/// avoid, or "X instead of Y") they make it a rule ("use `trash` instead of rm for anything on
/// my machine", "in general: don't add new dependencies without asking").
static BROAD_SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \bon\ my\ (machine|laptop|computer|mac|box|system)\b
        | \bin\ general\b
        | \bfor\ (every|all|any)\ (of\ my\ )?(project|repo)s?\b | \ball\ my\ (project|repo)s\b
        | \bbefore\ you\ (commit|push|merge|deploy|release)\b
        | \byour\ (replies|answers|responses|messages|explanations|summaries|commit\ messages|prs|pull\ requests|reviews)\b
    ")
});

/// An instruction worded as a habit: a negative or always/stop/avoid in front, or a contrast.
static HABIT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(please\ )?(don't|dont|do\ not|never|always|stop|quit|avoid)\b
        | \b(instead\ of|rather\ than)\b
    ")
});

/// An instruction: a sentence opening with a verb of what the agent does, or with a negative
/// ("don't …", "never …") before any verb (list markers and "please" taken off before).
static INSTRUCTION: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(please\ )?(don't|dont|do\ not|never|always)\ \w+
        | ^(please\ )?do\ (a|an|the|that|this|it)\b
        | ^(please\ )?(use|write|run|add|put|keep|drop|remove|skip|omit|include|prefer|avoid|stop|quit|start|give|show|explain|answer|reply|respond|format|name|test|document|comment|leave|mention|ask|assume|follow|stick|wrap|sort|split|make|end|begin|default|target|pin|check|commit|push|install|quote|indent|prefix|type|declare|import|log|print|return|raise|throw|catch|handle|wait|read|open|pick|choose|go\ with|switch\ to)\b
    ")
});

/// An instruction with a generic scope over what the agent does ([`GENERIC_SCOPE`]), or with a
/// broad one and worded as a habit ([`BROAD_SCOPE`], [`HABIT`]); never a one-off or a report
/// (`knowledge::is_event_or_task`). `without_idle` is `lower` with idle negatives taken out.
fn generic_instruction(without_idle: &str, lower: &str) -> bool {
    let body = WHEN_YOU.replace(without_idle, "");
    // "fyi i'm on compose v2 everywhere so always write `docker compose`", "this goes for
    // every repo you work in with me, do a git pull --rebase before you push": the instruction
    // opens a later clause.
    let opens_instruction = INSTRUCTION.is_match(&body)
        || CLAUSE_OPENING
            .split(&body)
            .skip(1)
            .any(|clause| INSTRUCTION.is_match(clause.trim_start()));
    opens_instruction
        && (GENERIC_SCOPE.is_match(lower) || (BROAD_SCOPE.is_match(lower) && HABIT.is_match(&body)))
        && !knowledge::is_event_or_task(lower)
}

/// Where a clause may open inside a sentence: after a comma, a semicolon, a colon or a dash,
/// or after "so" / "and" / "but" between clauses.
static CLAUSE_OPENING: LazyLock<Regex> =
    LazyLock::new(|| re(r"[,;:—]\s+(?:(?:so|and|but|then|pls|please)\s+)?|\s(?:so|and\ then)\s+"));

/// A clause opening an instruction with when it applies ("before you commit anything, show me
/// the diff"): taken off before [`INSTRUCTION`] is read.
static WHEN_YOU: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(before|after|when|whenever|once|every\ time|each\ time)\ (you|u)\ [^,]{1,60},\s*")
});

/// A statement about everything of a kind the agent makes: "any bash script you write for me
/// starts with `set -euo pipefail`", "every PR you open gets a changelog line".
static GENERIC_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(any|every|each|all)\ ([\w-]+\ ){0,3}(you|u)\ (write|create|make|generate|open|send|add|hand\ me|give\ me)\b.*\b(must|should|needs?|has\ to|have\ to|gets?|starts?\ with|ends?\ with|uses?|follows?|goes|go)\b",
    )
});

/// "don't" before a verb that gives no rule ("don't worry", "don't know"): taken out before the
/// preference cues are read.
static IDLE_NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(don't|do\ not|dont)\ (worry|know|think|mind|bother|care|get|understand|see|have|need|remember|like|forget\ it)\b",
    )
});

/// A definite thing of the code with always/never and a behaviour verb ("the /users endpoint
/// should never return null", "the parser always raises on empty input"): a spec of the task.
static CODE_SPEC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^((the|this|that)\ \S+(\ \S+){0,3}?|`[^`]+`|[\w.]+\([^)]*\)|it|they)\ (should\ |must\ |will\ )?(always|never)\ (return|returns|throw|throws|raise|raises|emit|emits|crash|crashes|panic|panics|block|blocks|be\ (null|nil|none|empty|negative|zero))\b
    ")
});

/// Words naming this project as the scope ("in this repo", 这个仓库): with a rule verb, a
/// statement is a preference for this project ("in this repo commit messages follow
/// conventional commits").
static SCOPE_STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        (\b(in|for|on)\ (this|our)\ (project|repo|repository|codebase|monorepo|workspace)\b | 这个(仓库|项目|代码库)|本(项目|仓库))
        .*
        (\b(follow|follows|use|uses|must|should|need|needs|written|go|goes|live|lives|prefer|only|always|never|don't)\b|不要|别|用|一律|统一|都)
    ")
});

/// Facts about the project, stated.
static PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(lives?|sits?|goes|go|belongs?|(are|is)\ (kept|stored|located|defined|configured))\ (in|under|at|next\ to|inside)\b
        | \bwe(\ all)?\ (use|deploy|run|build|host|release|ship|target|support|pin|store|keep|follow|test|lint|format|manage|vendor|generate)\b
        | \bwe(\ all)?\ [a-z]+\ (with|using|via|through)\ \S
        | \bwe('re|\ are)\ on\b
        | \b(project|repo|repository|codebase|app|application|service|server|backend|frontend|api|sdk|ci|build|monorepo|package|site|cli)\ (uses|is\ written\ in|is\ built\ (with|on)|runs\ on|runs\ in|is\ deployed|deploys|targets|requires|needs|depends\ on|is\ on|talks\ to|is\ hosted)\b
        | \bdeploy(s|ed|ment|ments)?\b.*\b(with|to|via|using|through|from|on)\b
        | ^to\ (run|build|test|deploy|start|lint|format|release|install|set\ up|debug|regenerate|update)\b.*\b(use|run)\b
        | ^(run|use)\ `[^`]+`\ to\b
        | \b(build|test|lint|deploy|start|dev|release|format)\ (command|script|target|task)\ is\b
        | \b(requires?|needs?|pinned\ to|pin\ (it|them)\ to)\b[^.]*\d
        | \b(conventions?|style\ guide|naming\ scheme)\b.*\b(is|are|that)\b | \bby\ convention\b
        | \b(main|default|release|production)\ branch\ is\b
        | \b(database|db|cache|queue|broker|orm)\ is\b
        | 项目(用|使用|采用|基于|是用|运行在|部署在|需要|依赖)
        | 我们(都)?(用|使用|采用|通过|部署|的主分支|的数据库)
        | (测试|代码|配置|文档|脚本|文件).{0,12}(放在|位于|写在|都在|在\ ?\S*(目录|/))
        | 部署(到|在|用|通过)|用.{1,30}部署|(运行|启动|构建|打包).{0,12}(用|执行)
        | 约定|规范是|版本(是|要求)|主分支是|数据库(是|用)|配置在
    ")
});

/// Links that name a one-off task: an issue, a pull request, a commit, a CI run.
static TASK_LINK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"/(issues|pull|pulls|commit|commits|compare|merge_requests|actions/runs|jobs|builds)/|/-/(issues|merge_requests)/|linear\.app/.+/issue/|atlassian\.net/browse/",
    )
});

/// A link described by words: `X is at <url>`, `X: <url>`, `see <url> for X`, 文档在 <url>.
static DESCRIBED_LINK: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        \b(is|are|lives?|hosted|available|published)\ (at|on|in)\ +https?:// | :\s*https?:// | \bat\ https?://
        | \bsee\ https?://\S+\ (for|about)\b | \b(docs?|documentation|wiki|dashboard|spec|guide|reference|runbook|design|board|handbook|changelog|api)\b.*https?://
        | (文档|地址|手册|规范|说明|wiki|看板).{0,10}(在|是|：|:)?\s*https?://
    ")
});

/// Words saying a rule holds for all the user's projects: a preference, never project knowledge.
static USER_WIDE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(all\ my|my\ projects|every\ project|all\ projects|any\ project|everywhere|for\ me|to\ me|how\ i\ work|my\ habit)\b|\b(any|every|all)\ (of\ (my|our)\ )?(repos?|repositor(y|ies)|codebases?)\b(\s*[,.;!]|\s*$|\ (you|i)\ (work|touch|open)|\ (in\ which|that)\ (you|i)\b|\ of\ mine)|所有项目|每个项目|任何项目|哪个项目|所有仓库|任何仓库|每个仓库|我的项目|我所有|我习惯|我的习惯|我一直",
    )
});

/// One detail of the task set to a value: "the button should be blue", "标题应该是深红色" (a
/// definite thing, "should/needs to be"; a short Chinese subject with 应该是); a name given to
/// one thing ("call the variable user_count"); what this spot of the code returns ("it should
/// return 404", "这里应该返回 404").
static TASK_DETAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        ^(the|this|that|my|your)\ [\w-]+(\ [\w-]+)?\ (should|needs\ to|has\ to|must)\ be\b
        | ^[^，,。\s]{1,8}应该是
        | ^(call|name|rename)\ (the|this|that|it)\b
        | ^(it|this|that|the\ [\w-]+)\ should\ (return|raise|throw|respond\ with)\b
        | ^(这里|这儿|此处)[^，,。]{0,6}(应该|要)(返回|抛|报|是)
    ")
});

/// Two whole numbers swapped ("the bug is on line 42 not 40", "超时是 30 秒，不是 60 秒"): a
/// value of the task at hand. A version ("3.11, not 3.8") is no whole number; a scope or a
/// standing word ("in this repo", "we", "always", 我们, 以后) keeps the sentence.
static INT_SWAP: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?x)
        (^|[^\d.])\d+(\s*[^\s\d.,，]{1,8})?\s*[,，]?\s*(not|instead\ of|rather\ than|不是|而不是)\s*\d+($|[^\d.])
    ")
});

/// What keeps a swapped number: a scope of the project or a standing word.
static SWAP_KEEPS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(this\ (repo|repository|project|codebase)|here|we|we're|our|always|never|from\ now\ on|by\ default)\b|我们|项目|仓库|以后|总是|永远|默认",
    )
});

/// A verb that makes the rest of a correction a statement.
static STATEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(is|are|uses?|goes|go|lives?|should|must|need|needs|want|wants|it's|that's)\b|是|用|应该|在",
    )
});

fn classify_sentence(sentence: &str) -> Option<Cue> {
    let lower = sentence.to_lowercase();
    let lower = without_list_marker(lower.trim_start_matches(['-', '*', '>', ' ']));
    let words = lower.split_whitespace().count();
    let cjk = lower.chars().filter(|c| !c.is_ascii()).count();
    if words < 3 && cjk < 5 {
        return None;
    }
    if NOT_A_STATEMENT.is_match(lower)
        || reports_someone_else(sentence.trim_start_matches(['-', '*', '>', ' ']), lower)
        || is_deixis(&THAT_CONJUNCTION.replace_all(lower, "$1"))
        || (INT_SWAP.is_match(lower) && !SWAP_KEEPS.is_match(lower))
    {
        return None;
    }
    let has_url = lower.contains("http://") || lower.contains("https://");
    if has_url {
        let task_like = TASK_REQUEST.is_match(lower)
            || urls(sentence)
                .iter()
                .any(|u| TASK_LINK.is_match(u) || is_loopback(u));
        if !task_like && DESCRIBED_LINK.is_match(lower) && words_without_urls(lower) >= 2 {
            return Some(Cue::Reference);
        }
    }
    if is_prohibition(lower) {
        return Some(Cue::Preference);
    }
    // "you always forget the import", "your tests are too slow again": a complaint about a
    // habit; the rule, if any, comes in the next sentence (`is_rule_after_complaint`).
    if habitual_complaint(sentence).is_some() {
        return None;
    }
    if CORRECTION_OPENER.is_match(lower) && !NO_MORE.is_match(lower) {
        // "No, thanks" / "actually, never mind": an opener needs a statement after it.
        let rest = CORRECTION_OPENER.replace(lower, "");
        let rest_words = rest.split_whitespace().count();
        let rest_cjk = rest.chars().filter(|c| !c.is_ascii()).count();
        let acknowledgement = [
            "thanks",
            "thank you",
            "that's fine",
            "that's ok",
            "never mind",
            "nevermind",
            "all good",
            "没事",
            "算了",
            "不用了",
            "谢谢",
        ]
        .iter()
        .any(|a| rest.trim_start().starts_with(a));
        // "actually 5 is enough, not 10": a value of the task at hand, no subject of its own;
        // "no, the button should be blue" / "标题应该是深红色": one detail of the task.
        let rest_start = rest.trim_start_matches([',', ' ', '，']);
        let bare_value = rest_start.starts_with(|c: char| c.is_ascii_digit())
            || (TASK_DETAIL.is_match(rest_start) && !knowledge::names_project_value(rest_start));
        if !acknowledgement && !bare_value && (rest_words >= 3 || rest_cjk >= 5) {
            let statement = CONTRAST.is_match(lower)
                || PROJECT.is_match(lower)
                || PREFERENCE.is_match(lower)
                || STATEMENT.is_match(&rest);
            if statement && !TASK_REQUEST.is_match(rest.trim_start()) {
                return Some(Cue::Correction);
            }
        }
        return None;
    }
    if TOLD_YOU.is_match(lower) {
        return Some(Cue::Correction);
    }
    // A fact of the project (a value and a project topic, standing): knowledge, even when it is
    // worded as a rule ("never kubectl apply to prod") or a contrast ("PRs go against
    // `staging`, not main").
    let knowledge = knowledge::is_project_knowledge(sentence) && !USER_WIDE.is_match(lower);
    // "the /users endpoint should never return null": how one thing of the code behaves, a spec
    // of the task, not a rule for the agent.
    let without_idle = IDLE_NEGATIVE.replace_all(lower, "");
    let preference = (PREFERENCE.is_match(&without_idle)
        || generic_instruction(&without_idle, lower)
        || (GENERIC_SUBJECT.is_match(lower) && !knowledge::is_event_or_task(lower))
        // "I'd like you to write all commit messages in conventional format from now on":
        // a wish about how the agent works, with a word of a standing rule ("I'd like you to
        // add a retry to fetchUser" is the task).
        || (WISH.is_match(lower) && STANDING.is_match(lower)))
        && !CODE_SPEC.is_match(lower)
        && !NOT_A_RULE.is_match(lower);
    // "write me a retry function: it should always back off": the always/never of a task
    // request is the spec of what is asked for, unless the sentence says it holds beyond it.
    if preference && TASK_WITH_SPEC.is_match(lower) && !BEYOND_TASK.is_match(lower) {
        return None;
    }
    // "until the 2.4 release goes out on friday don't merge anything into main": bound to a
    // time and saying nothing of after it, the rule ends with the moment.
    if preference && TIME_BOUND.is_match(&without_ticks(lower)) && !STANDING.is_match(lower) {
        return None;
    }
    if preference {
        // A rule naming a value only this project has; a tool alone keeps it the user's.
        return Some(if knowledge && knowledge::names_project_value(sentence) {
            Cue::Knowledge
        } else {
            Cue::Preference
        });
    }
    if TASK_REQUEST.is_match(lower) {
        return None;
    }
    // A contrast stays a correction (it supersedes what it corrects); one stating project
    // knowledge goes to the project file all the same (`mem_auto`'s routing).
    if knowledge && !(CONTRAST.is_match(lower) && !has_url && words <= MAX_CONTRAST_WORDS) {
        return Some(Cue::Knowledge);
    }
    if SCOPE_STATEMENT.is_match(lower) && !CONTRAST.is_match(lower) {
        return Some(Cue::Preference);
    }
    // A contrast alone corrects in a short statement; in a long one it describes a task.
    if CONTRAST.is_match(lower)
        && !NOT_A_VALUE.is_match(lower)
        && !has_url
        && words <= MAX_CONTRAST_WORDS
        && !knowledge::is_event_or_task(sentence)
    {
        return Some(Cue::Correction);
    }
    if PROJECT.is_match(lower)
        && !has_url_only_subject(lower)
        && !knowledge::is_event_or_task(sentence)
    {
        return Some(Cue::Project);
    }
    None
}

/// `text` without a list marker at its start ("1) ", "2. ", "(3) ", "a) ", "- ", "* ", "• ").
fn without_list_marker(text: &str) -> &str {
    static MARKER: LazyLock<Regex> = LazyLock::new(|| re(r"^(\(?(\d{1,2}|[a-e])[.)]|[-*•>])\s+"));
    match MARKER.find(text) {
        Some(m) => &text[m.end()..],
        None => text,
    }
}

/// Words that are not part of a URL.
fn words_without_urls(lower: &str) -> usize {
    lower
        .split_whitespace()
        .filter(|w| !w.contains("://") && w.chars().any(char::is_alphanumeric))
        .count()
}

/// A sentence that is little more than a link is not a project fact.
fn has_url_only_subject(lower: &str) -> bool {
    lower.contains("://") && words_without_urls(lower) < 3
}

/// What the user typed when rejecting a tool call (Claude Code puts it after "the user said:").
fn rejection_feedback(block: &ContentBlock) -> Option<String> {
    let ContentBlock::ToolResult { content, .. } = block else {
        return None;
    };
    if !block.is_error() {
        return None;
    }
    let text = content.text();
    let marker = "the user said:";
    // ASCII lowercasing keeps every byte offset (Unicode lowercasing may not: "İ" grows from 2
    // to 3 bytes), so the position found is one in `text`.
    let pos = text.to_ascii_lowercase().find(marker)?;
    let said = text[pos + marker.len()..].trim();
    (!said.is_empty()).then(|| said.to_owned())
}

/// Loopback addresses and XML namespace URLs are not references.
fn is_loopback(url: &str) -> bool {
    let host = url.split("://").nth(1).unwrap_or("");
    ["localhost", "127.", "0.0.0.0", "[::1]", "www.w3.org/"]
        .iter()
        .any(|h| host.starts_with(h))
}

/// Package managers by the first word of a command segment, in the ecosystems where a project
/// chooses one (JavaScript, Python, the JVM): `cargo` for Rust, `go` for Go, Bundler, Composer,
/// `dotnet` and SwiftPM are what the language implies, and a memory saying so tells nothing.
fn package_manager(words: &[&str]) -> Option<&'static str> {
    let first = *words.first()?;
    Some(match first {
        "npm" => "npm",
        "pnpm" => "pnpm",
        "yarn" => "yarn",
        "bun" => "bun",
        "uv" => "uv",
        "pip" | "pip3" => "pip",
        "poetry" => "poetry",
        "pipenv" => "pipenv",
        "mvn" | "./mvnw" => "Maven",
        "gradle" | "./gradlew" => "Gradle",
        _ => return None,
    })
}

fn is_test_command(words: &[&str]) -> bool {
    let w = |i: usize| words.get(i).copied().unwrap_or("");
    match w(0) {
        "cargo" => ["test", "nextest"].contains(&w(1)),
        "npm" | "pnpm" | "yarn" | "bun" => {
            w(1) == "test" || (w(1) == "run" && w(2).starts_with("test"))
        }
        "pytest" | "jest" | "vitest" | "rspec" | "phpunit" => true,
        "python" | "python3" => w(1) == "-m" && w(2) == "pytest",
        "uv" | "poetry" | "pipenv" => w(1) == "run" && ["pytest", "python"].contains(&w(2)),
        "npx" | "bunx" | "pnpx" => ["jest", "vitest", "playwright", "mocha"].contains(&w(1)),
        "go" | "mvn" | "./mvnw" | "gradle" | "./gradlew" | "dotnet" | "make" | "swift" => {
            w(1) == "test"
        }
        "bundle" => w(1) == "exec" && w(2) == "rspec",
        // Task runners: `mise run test`, `just test`, `task test`.
        "mise" | "just" | "task" => {
            w(1).starts_with("test") || (w(1) == "run" && w(2).starts_with("test"))
        }
        _ => false,
    }
}

/// A test run narrowed to one test or file (`go test ./ws -run TestReconnect`, `pytest -k
/// slow`, `cargo test --test cli`, `rspec spec/models/invoice_spec.rb:88`, `jest -t name`):
/// a step of a task (reproducing a bug, checking a fix), not how the project's tests are run.
fn is_targeted_run(words: &[&str]) -> bool {
    words.iter().skip(1).any(|w| {
        matches!(
            *w,
            "-run"
                | "-k"
                | "-t"
                | "--test"
                | "--grep"
                | "-g"
                | "--testNamePattern"
                | "--lib"
                | "--bin"
                | "--example"
                | "-count"
                | "--tests"
                | "--filter"
                | "--only"
        ) || w.starts_with("-run=")
            || w.starts_with("--test=")
            || w.starts_with("-count=")
            || w.starts_with("--testNamePattern=")
            || w.contains("::")
            || TEST_FILE.is_match(w)
    })
}

/// A file argument of a test run (`tests/test_api.py`, `spec/models/invoice_spec.rb:88`): a
/// directory (`tests/`, `./...`) runs a suite, a file one part of it.
static TEST_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^[^-].*\.(py|rb|ts|tsx|js|jsx|mjs|go|rs|java|kt|php|ex|exs|swift|cs)(:\d+)*$")
});

/// The command without its arguments: leading words up to the first flag, path or quoted
/// argument, at most three (`go test ./pkg/... -run X` → `go test`, `uv run pytest -x` →
/// `uv run pytest`).
fn command_stem(words: &[&str]) -> String {
    words
        .iter()
        .take(3)
        .take_while(|w| {
            !w.starts_with(['-', '.', '/', '"', '\'', '~'])
                && !w.contains(['/', '=', '"', '\'', '*'])
        })
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a shell command into simple segments (at `&&`, `||`, `;`, `|` and newlines) and drops
/// leading `VAR=value` assignments and `sudo`/`time`.
fn segments(command: &str) -> Vec<Vec<&str>> {
    command
        .split(['\n', ';', '|', '&'])
        .map(|seg| {
            seg.split_whitespace()
                .skip_while(|w| {
                    (w.contains('=') && !w.starts_with('-')) || *w == "sudo" || *w == "time"
                })
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

fn framework_of_file(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    Some(match stem {
        "next" if name.starts_with("next.config") => "Next.js",
        "vite" if name.starts_with("vite.config") => "Vite",
        "nuxt" if name.starts_with("nuxt.config") => "Nuxt",
        "svelte" if name.starts_with("svelte.config") => "SvelteKit",
        "astro" if name.starts_with("astro.config") => "Astro",
        "tailwind" if name.starts_with("tailwind.config") => "Tailwind CSS",
        "angular" if name == "angular.json" => "Angular",
        "manage" if name == "manage.py" => "Django",
        "tauri" if name.starts_with("tauri.conf") => "Tauri",
        _ => return None,
    })
}

fn framework_of_command(words: &[&str]) -> Option<&'static str> {
    let joined = words.join(" ");
    let has = |w: &str| words.contains(&w);
    if has("next") && (joined.contains("next dev") || joined.contains("next build")) {
        return Some("Next.js");
    }
    if has("uvicorn") || has("fastapi") {
        return Some("FastAPI");
    }
    if has("flask") {
        return Some("Flask");
    }
    if has("django-admin") || (has("manage.py") && !has("cat")) {
        return Some("Django");
    }
    if has("rails") {
        return Some("Rails");
    }
    None
}

/// Counts keyed by name, remembering first appearance for stable ties.
#[derive(Default)]
struct Tally {
    counts: BTreeMap<String, (usize, usize)>,
    next: usize,
}

impl Tally {
    fn add(&mut self, key: &str) {
        self.add_n(key, 1);
    }

    fn add_n(&mut self, key: &str, n: usize) {
        let order = self.next;
        let entry = self.counts.entry(key.to_owned()).or_insert((0, order));
        if entry.0 == 0 {
            self.next += 1;
        }
        entry.0 += n;
    }

    /// Keys by count (descending), then first appearance.
    fn ranked(&self) -> Vec<(&str, usize)> {
        let mut v: Vec<(&str, usize, usize)> = self
            .counts
            .iter()
            .map(|(k, (n, o))| (k.as_str(), *n, *o))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        v.into_iter().map(|(k, n, _)| (k, n)).collect()
    }
}

/// In how many turns (the tool calls between two things the user typed) a tool-derived fact
/// ([`project_facts`]) must show before it is kept: a task's runs are one event however often
/// the agent re-runs them ("pin urllib3<2 for now" then `pip install`; `npm run test` before
/// and after a fix), a value used again for another request is how the project works.
pub const MIN_TOOL_EVIDENCE: usize = 2;

/// A tool call not yet counted: its id, its command's segments, the file it touched.
struct PendingCall {
    id: String,
    segments: Vec<Vec<String>>,
    file: Option<String>,
}

impl PendingCall {
    fn of(id: &str, name: &str, input: &serde_json::Value) -> PendingCall {
        let segments = match classify_tool(name) {
            ToolKind::Command => command_of(input)
                .map(|c| {
                    segments(&c)
                        .into_iter()
                        .map(|w| w.into_iter().map(str::to_owned).collect())
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        PendingCall {
            id: id.to_owned(),
            segments,
            file: touched_file(name, input).map(|(p, _)| p),
        }
    }
}

/// What the tool calls of a conversation show, counted per turn ([`project_facts`]).
#[derive(Default)]
struct ToolEvidence {
    managers: Tally,
    tests: Tally,
    frameworks: Tally,
    files: Vec<String>,
    /// The calls since the user last typed: counted when the user goes on without correcting.
    pending: Vec<PendingCall>,
    /// Ids of calls whose result was an error.
    failed: std::collections::HashSet<String>,
}

impl ToolEvidence {
    /// Counts the pending calls (one turn), or drops them when the user `corrected` them; a
    /// failed call never counts. A turn counts once per fact, however many calls name it.
    fn settle(&mut self, corrected: bool) {
        let (mut managers, mut tests, mut frameworks) = (Vec::new(), Vec::new(), Vec::new());
        for call in std::mem::take(&mut self.pending) {
            if corrected || self.failed.contains(&call.id) {
                continue;
            }
            if let Some(path) = call.file
                && !self.files.contains(&path)
            {
                self.files.push(path);
            }
            let (mut pm, mut test, mut fw) = (None, None, None);
            for words in &call.segments {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                // A global install, a tool install or a pinned version (a bisect) says nothing
                // of how the project manages its packages.
                let aside = words.iter().any(|w| {
                    matches!(*w, "-g" | "--global" | "global")
                        || w.contains("==")
                        || w.split_once('@')
                            .is_some_and(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
                }) || (words.first() == Some(&"cargo")
                    && words.get(1) == Some(&"install"));
                if !aside {
                    pm = pm.or_else(|| package_manager(&words));
                }
                if test.is_none() && is_test_command(&words) && !is_targeted_run(&words) {
                    test = Some(command_stem(&words));
                }
                fw = fw.or_else(|| framework_of_command(&words));
            }
            managers.extend(pm.filter(|pm| !managers.contains(pm)));
            tests.extend(test.filter(|t| !tests.contains(t)));
            frameworks.extend(fw.filter(|fw| !frameworks.contains(fw)));
        }
        managers.iter().for_each(|pm| self.managers.add(pm));
        tests.iter().for_each(|t| self.tests.add(t));
        frameworks.iter().for_each(|fw| self.frameworks.add(fw));
    }
}

/// Project facts visible in the tool calls: the package manager, the test command and the
/// framework, each kept only when the calls of at least [`MIN_TOOL_EVIDENCE`] turns show it. A call
/// that failed (`is_error`), or that the user corrected in the next thing they typed ("wrong,
/// it's `yarn` here", 是 pnpm test:e2e，不是 pnpm e2e), is no evidence.
fn project_facts(messages: &[Message]) -> Vec<String> {
    let mut evidence = ToolEvidence::default();
    for message in messages {
        if let Some(said) = user_text(message) {
            evidence.settle(is_correction_of_what_was_done(&said));
        }
        for block in &message.content {
            match block {
                ContentBlock::ToolResult { tool_use_id, .. } if block.is_error() => {
                    evidence.failed.insert(tool_use_id.clone());
                }
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => evidence.pending.push(PendingCall::of(id, name, input)),
                _ => {}
            }
        }
    }
    evidence.settle(false);
    let ToolEvidence {
        managers,
        tests,
        mut frameworks,
        files,
        ..
    } = evidence;
    // A framework's config file in the project (`next.config.js`) is evidence enough: it is
    // how the project is, not an event of the task.
    for path in &files {
        if let Some(fw) = framework_of_file(path) {
            frameworks.add_n(fw, MIN_TOOL_EVIDENCE);
        }
    }
    let enough = |t: &Tally| -> Vec<String> {
        t.ranked()
            .into_iter()
            .filter(|(_, n)| *n >= MIN_TOOL_EVIDENCE)
            .map(|(k, _)| k.to_owned())
            .collect()
    };
    let (managers, tests, frameworks) = (enough(&managers), enough(&tests), enough(&frameworks));

    let mut facts = Vec::new();
    match managers.as_slice() {
        [] => {}
        [one] => facts.push(format!("Package manager: {one}")),
        many => facts.push(format!("Package managers: {}", many.join(", "))),
    }
    if let Some(test) = tests.first() {
        facts.push(format!("Test command: `{test}`"));
    }
    if !frameworks.is_empty() {
        facts.push(format!("Framework: {}", frameworks.join(", ")));
    }
    facts
}

/// Whether what the user typed after some tool calls corrects them: a correction opener
/// ("wrong, it's `yarn` here", "no, …", 不对), a contrast naming another value ("是 pnpm
/// test:e2e，不是 pnpm e2e", "use X, not Y") or "I told you" / 说过.
fn is_correction_of_what_was_done(said: &str) -> bool {
    let lower = said.to_lowercase();
    let lower = lower.trim_start();
    CORRECTION_OPENER.is_match(lower) || TOLD_YOU.is_match(lower) || CONTRAST.is_match(lower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mem_core::{ContentBlock, Message, Role};
    use serde_json::json;

    fn check(messages: Vec<Message>, current: &str, expected: &str) {
        assert_eq!(extract(&messages, current).to_markdown(), expected);
    }

    #[test]
    fn preferences_and_corrections_in_english() {
        check(
            vec![
                Message::user("Always use snake_case for variables. Can you always do that?"),
                Message::assistant("Sure, I always do."),
                Message::user("No, use pnpm instead of npm. Thanks"),
                Message::user("don't add comments to obvious code"),
                Message::user("Remember that commit messages are in English."),
            ],
            "",
            "### 用户偏好\n- Always use snake_case for variables.\n- Don't add comments to obvious code.\n- Commit messages are in English.\n\n### 纠正反馈\n- Use pnpm instead of npm.\n",
        );
    }

    #[test]
    fn a_tag_question_without_its_mark_is_a_question() {
        for said in [
            "we're on pnpm now, right",
            "we use vitest now, don't we",
            "the deploy script lives in ops/, correct.",
        ] {
            check(vec![Message::user(said)], "", "");
        }
        // A statement ending in "right" as a word of its own is kept.
        check(
            vec![Message::user("Always align the labels to the right.")],
            "",
            "### 用户偏好\n- Always align the labels to the right.\n",
        );
    }

    #[test]
    fn output_pasted_under_an_introducing_line_is_not_read() {
        let text = "`fct_orders` is duplicating rows, unique test fails:\n\nFailure in test \
                    unique_fct_orders_order_id (models/marts/schema.yml)\n  Got 1832 results\n\n\
                    we always run `dbt build` before pushing.";
        let rules = "my rules for this repo:\n\n- always use uv\n- never push to main";
        let command = "to run the integration tests locally:\n\nmake test-integration DB=local";
        let heads_up = "Heads up:\n\nAlways use pnpm in this repo, never npm.";
        for (input, expected) in [
            (
                text,
                "`fct_orders` is duplicating rows, unique test fails:\n\n\nwe always run `dbt build` before pushing.",
            ),
            // A list of the user's rules under its introduction stays; so does a list under
            // any other line (a plan is judged as a document).
            (rules, rules),
            (
                "the build fails:\n\n1. pause the DAG\nerror: some output\n2. backfill",
                "the build fails:\n\n1. pause the DAG\n2. backfill",
            ),
            // A line that introduces the user's own words is no output.
            (heads_up, heads_up),
            (
                "One more thing about this repo:\n\nNever commit generated files.",
                "One more thing about this repo:\n\nNever commit generated files.",
            ),
            // No blank line after the colon: no block.
            (
                "the test command is:\nmake test",
                "the test command is:\nmake test",
            ),
            // One command line under its introduction is the value the line introduces.
            (command, command),
        ] {
            assert_eq!(without_pasted_blocks(input), expected, "{input:?}");
        }
        let out = extract(&[Message::user(text)], "").to_markdown();
        assert!(
            !out.contains("1832") && !out.contains("Failure in test"),
            "{out}"
        );
        assert!(out.contains("`dbt build` before pushing"), "{out}");
        let out = extract(&[Message::user(heads_up)], "").to_markdown();
        assert!(out.contains("pnpm"), "{out}");
    }

    #[test]
    fn a_scope_said_after_a_rule_scopes_the_rule_and_is_not_stored() {
        let said = "you're relying on my current context. always pass `--context` explicitly on \
                    every kubectl command. that goes for everything you do for me, not just this \
                    repo, I juggle like 6 clusters";
        let m = extract(&[Message::user(said)], "");
        assert!(m.project.is_empty() && m.corrections.is_empty(), "{m:?}");
        assert_eq!(
            m.preferences,
            ["Always pass `--context` explicitly on every kubectl command, in every project."]
        );
        // A sentence opening the same way without a scope is read as usual; a rule for this
        // project stays the project's.
        let m = extract(
            &[Message::user(
                "always run `make check` before pushing. that goes to the CI runner too.",
            )],
            "",
        );
        assert!(m.preferences.is_empty(), "{m:?}");
        let m = extract(
            &[Message::user(
                "we deploy with `make ship`. this applies to the staging cluster as well",
            )],
            "",
        );
        assert!(m.preferences.is_empty(), "{m:?}");
    }

    #[test]
    fn cue_words_in_chinese() {
        check(
            vec![Message::user(
                "以后提交信息用英文。不对，项目是 Python 而不是 Go。你好",
            )],
            "",
            "### 用户偏好\n- 以后提交信息用英文。\n\n### 纠正反馈\n- 项目是 Python 而不是 Go。\n",
        );
    }

    #[test]
    fn skips_known_entries_and_secrets() {
        check(
            vec![Message::user(
                "Always use uv. Always export API_KEY=sk-abcdefghijklmnopqrstu before running. Never commit sk-proj-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Yg0Uf9Id8Os7.",
            )],
            "### 用户偏好\n- always use uv.\n",
            // The fact is kept without the secret; an entry that is mostly a secret is dropped.
            "### 用户偏好\n- Always export API_KEY=[REDACTED] before running.\n",
        );
    }

    /// Issue 27 item 1: a password with `! ` (or `. `) in it is withheld whole: the text is
    /// redacted before it is split into sentences.
    #[test]
    fn a_password_holding_a_sentence_end_is_withheld_whole() {
        for secret in [
            "correct! horse battery",
            "correct. horse battery",
            "正确！马电池",
        ] {
            let m = extract(
                &[Message::user(format!(
                    "Always export DB_PASSWORD=\"{secret}\" before you run the deploy script."
                ))],
                "",
            )
            .to_markdown();
            for part in secret.split([' ', '!', '.', '！']).filter(|p| p.len() > 2) {
                assert!(!m.contains(part), "{part} of {secret} kept:\n{m}");
            }
            assert!(m.contains("before you run the deploy script"), "{m}");
        }
    }

    #[test]
    fn project_facts_from_tool_calls_and_references() {
        let messages = vec![
            Message::user(
                "Docs are at https://docs.example.com/guide. Server on http://localhost:3000",
            ),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::tool_use(
                        "1",
                        "Bash",
                        json!({"command": "cd app && pnpm install"}),
                    ),
                    ContentBlock::tool_use(
                        "2",
                        "Bash",
                        json!({"command": "CI=1 pnpm test -- --run"}),
                    ),
                    ContentBlock::tool_use("3", "Bash", json!({"command": "pnpm test"})),
                    ContentBlock::tool_use("4", "Edit", json!({"file_path": "app/src/page.tsx"})),
                    ContentBlock::tool_use("5", "Read", json!({"file_path": "app/next.config.js"})),
                    ContentBlock::tool_use("6", "Read", json!({"file_path": "app/src/util.ts"})),
                    ContentBlock::tool_use(
                        "7",
                        "WebFetch",
                        json!({"url": "https://nextjs.org/docs"}),
                    ),
                ],
            ),
        ];
        check(
            messages,
            "",
            // One turn of calls: the commands are an event of it (`MIN_TOOL_EVIDENCE`); the
            // framework's config file shows how the project is.
            "### 项目知识\n- Framework: Next.js\n\n### 参考资料\n- Docs are at https://docs.example.com/guide.\n",
        );
    }

    /// Issue 26 build 3: project knowledge by value and topic, also worded as a rule; a task, a
    /// one-off and a clause without a value give nothing.
    #[test]
    fn project_knowledge_by_value_and_topic() {
        check(
            vec![
                Message::user("CI runs `cargo deny check` on every PR."),
                Message::user(
                    "staging is the `shop-staging` namespace, never kubectl apply to prod",
                ),
                Message::user("third_party/ 下面是别人的代码，别改"),
                Message::user("run `make lint` and tell me what it says"),
                Message::user("for now put the scratch files in /tmp/exp1"),
                Message::user("here's the deploy key, put it in ~/.ssh/deploy_ed25519"),
            ],
            "",
            "### 项目知识\n- CI runs `cargo deny check` on every PR.\n- staging is the `shop-staging` namespace, never kubectl apply to prod.\n- third_party/ 下面是别人的代码，别改。\n",
        );
    }

    /// Preferences worded without always/never, a rule for this project said with its scope
    /// words, and look-alikes that give nothing (an idle "don't", a pick among options).
    #[test]
    fn preference_cues_beyond_always_and_never() {
        check(
            vec![
                Message::user("Make sure to add a docstring to every public function."),
                Message::user("Avoid nested ternaries in TypeScript."),
                Message::user("in this repo commit messages follow conventional commits"),
                Message::user("这个仓库里不要用 lodash，能用原生就用原生"),
                Message::user("don't worry about the warnings"),
                Message::user("no, use the other approach"),
                Message::user("actually 5 is enough, not 10"),
                Message::user("no, the button should be blue, not green"),
                Message::user("不对，标题应该是深红色，不是大红"),
                Message::user("I prefer option B"),
                Message::user("the /users endpoint should never return null for the email field"),
                Message::user("这个接口永远不要返回 500，出错时返回 400 和错误信息"),
            ],
            "",
            "### 用户偏好\n- Make sure to add a docstring to every public function.\n- Avoid nested ternaries in TypeScript.\n- In this repo commit messages follow conventional commits.\n- 这个仓库里不要用 lodash，能用原生就用原生。\n",
        );
    }

    /// A confirmation going on ("right, and …") and a confirmed yes/no question make the
    /// assistant's project facts the user's.
    #[test]
    fn confirmed_statements_and_questions_become_the_users() {
        check(
            vec![
                Message::assistant("The toolchain is pinned to Rust 1.78.0."),
                Message::user("right, and we don't bump it without asking the platform team"),
                Message::assistant("看起来前端的构建命令是 `pnpm build`，产物在 dist/ 目录下？"),
                Message::user("对的"),
            ],
            "",
            "### 项目知识\n- The toolchain is pinned to Rust 1.78.0.\n- 前端的构建命令是 `pnpm build`，产物在 dist/ 目录下。\n",
        );
    }

    #[test]
    fn a_rule_list_gives_one_statement_per_item() {
        assert_eq!(
            rule_list_items(
                "two rules for this codebase: no unwrap() outside tests, and every public fn gets a doc comment."
            ),
            Some(vec![
                "For this codebase: no unwrap() outside tests.".to_owned(),
                "For this codebase: every public fn gets a doc comment.".to_owned(),
            ])
        );
        assert_eq!(
            rule_list_items("Conventions: tabs for indentation; snake_case file names"),
            Some(vec![
                "tabs for indentation.".to_owned(),
                "snake_case file names.".to_owned()
            ])
        );
        // One item, or an item of one word, is not a list this splits.
        assert_eq!(rule_list_items("the rule here: never push to main"), None);
        assert_eq!(rule_list_items("rules: a, b"), None);
        assert_eq!(rule_list_items("I like rules"), None);
    }

    #[test]
    fn an_aside_is_judged_apart_from_the_task_before_it() {
        assert_eq!(
            asides("fix the flaky test in test_auth.py, and remember our default branch is trunk"),
            vec![
                "fix the flaky test in test_auth.py".to_owned(),
                "remember our default branch is trunk".to_owned()
            ]
        );
        assert_eq!(
            asides("以后提交前先跑 lint，另外不要直接推 master"),
            vec![
                "以后提交前先跑 lint".to_owned(),
                "另外不要直接推 master".to_owned()
            ]
        );
        // No marker: the sentence whole ("remember" opening it is no aside).
        assert_eq!(
            asides("remember to run the tests, then push"),
            vec!["remember to run the tests, then push".to_owned()]
        );
        check(
            vec![Message::user(
                "can you refactor the parser module? and btw I generally want small PRs, under 300 lines if you can",
            )],
            "",
            "### 用户偏好\n- I generally want small PRs, under 300 lines if you can.\n",
        );
    }

    #[test]
    fn a_dislike_of_a_habit_is_the_rule_not_to_do_it() {
        assert_eq!(
            strip_filler("I hate it when you put emojis in commit messages, please don't"),
            "Don't put emojis in commit messages."
        );
        assert_eq!(
            strip_filler("it annoys me when you rewrite whole files"),
            "Don't rewrite whole files."
        );
        // Not a verb after "you": left as it was (and judged as a complaint).
        assert_eq!(
            strip_filler("I hate it when you are slow"),
            "I hate it when you are slow"
        );
        assert_eq!(
            strip_filler("don't ever use sudo for this stuff"),
            "don't ever use sudo"
        );
    }

    #[test]
    fn task_level_corrections_are_no_memory() {
        check(
            vec![
                Message::user("no, call the variable user_count, not count"),
                Message::user("不对，这里应该返回 404，不是 500"),
                Message::user("no, it should return an empty list, not null"),
            ],
            "",
            "",
        );
    }

    #[test]
    fn swapped_whole_numbers_are_a_task_value() {
        check(
            vec![
                Message::user("wrong line, the bug is on line 42 not 40"),
                Message::user("超时是 30 秒，不是 60 秒"),
                Message::user("no, retry 3 times, not 5"),
            ],
            "",
            "",
        );
        assert!(!INT_SWAP.is_match("actually we're on python 3.11 now, not 3.8"));
        assert!(SWAP_KEEPS.is_match("in this repo the api uses port 4000, not 3000"));
    }

    #[test]
    fn a_confirmed_reading_of_the_config_is_the_users() {
        check(
            vec![
                Message::user("what port does the api listen on?"),
                Message::assistant(
                    "From the config, it looks like the API listens on port 8443 in development, is that right?",
                ),
                Message::user("yes, exactly"),
            ],
            "",
            "### 项目知识\n- The API listens on port 8443 in development.\n",
        );
    }

    #[test]
    fn rejected_tool_feedback_is_a_correction() {
        let messages = vec![Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "1",
                "The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nuse the existing helper rather than a new one",
                true,
            )],
        )];
        check(
            messages,
            "",
            "### 纠正反馈\n- Use the existing helper rather than a new one.\n",
        );
    }

    #[test]
    fn rejected_tool_feedback_after_text_whose_lowercase_is_longer() {
        // "İ" is 2 bytes, its lowercase 3: a position found in the lowercased text is not one in
        // the original.
        let rejection = |text: &str| {
            vec![Message::new(
                Role::User,
                vec![ContentBlock::tool_result("1", text, true)],
            )]
        };
        // The reviewer's input: no cue word in the feedback, so nothing is extracted (it panicked).
        check(rejection("İİ the user said: 日本語を使って"), "", "");
        // A one-off instruction without a standing cue is not kept.
        check(
            rejection("İİ the user said: don't translate 日本語 here"),
            "",
            "",
        );
        check(
            rejection("İİİİİİ THE USER SAID: stop adding comments to every line"),
            "",
            "### 用户偏好\n- Stop adding comments to every line.\n",
        );
    }

    fn bash(id: &str, command: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                id,
                "Bash",
                json!({ "command": command }),
            )],
        )
    }

    /// Stop 40: a tool-derived fact needs the calls of two turns that show it; a call the user
    /// corrected right after, or one that failed, is no evidence.
    #[test]
    fn tool_facts_need_two_turns_neither_corrected_nor_failed() {
        // One run: an event of the task.
        check(
            vec![
                Message::user("pin urllib3<2 for now"),
                bash("1", "pip install -r requirements.txt"),
                Message::user("nice"),
            ],
            "",
            "",
        );
        // Runs before and after a fix, in one turn: one event of the task.
        check(
            vec![
                Message::user("the checkout page crashes, fix it"),
                bash("1", "npm run test -- src/checkout"),
                bash("2", "npm run test -- src/checkout"),
                Message::user("thanks"),
            ],
            "",
            "",
        );
        // Runs for two requests: how the project works.
        check(
            vec![
                bash("1", "pnpm install"),
                Message::user("ok"),
                bash("2", "pnpm test"),
                Message::user("now the other bug"),
                bash("3", "pnpm test -- --run"),
            ],
            "",
            "### 项目知识\n- Package manager: pnpm\n- Test command: `pnpm test`\n",
        );
        // Corrected by the user: the command was wrong for this project.
        check(
            vec![
                bash("1", "npm install"),
                Message::user("wrong, it's `yarn` here"),
                bash("2", "npm test"),
                Message::user("no, use yarn, not npm"),
            ],
            "",
            "### 纠正反馈\n- it's `yarn` here.\n- Use yarn, not npm.\n",
        );
        // Failed twice: no evidence.
        let failed = |id: &str| {
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result(id, "Missing script: e2e", true)],
            )
        };
        check(
            vec![
                bash("1", "pnpm e2e"),
                failed("1"),
                bash("2", "pnpm e2e"),
                failed("2"),
            ],
            "",
            "",
        );
    }

    /// Stop 40: terse messages ("no mocks. ever."), "I said …", and a rule right after a
    /// complaint about the agent's habit; their look-alikes give nothing.
    #[test]
    fn terse_rules_and_rules_after_a_complaint() {
        check(
            vec![
                Message::user("no mocks. ever. hit the real test db"),
                Message::user("I said no semicolons"),
                Message::user("your commit messages are way too long. keep them to one line"),
                Message::user("你又把整个文件重写了。只改需要改的那几行"),
            ],
            "",
            "### 用户偏好\n- No mocks, ever.\n\n### 纠正反馈\n- No semicolons.\n- Keep commit messages to one line.\n- 只改需要改的那几行。\n",
        );
        check(
            vec![
                // A complaint about the task at hand, then a task.
                Message::user("this query is way too slow. make it faster"),
                Message::user("your function is too long, split it"),
                // "no" before no thing; an adverb that judges.
                Message::user("no problem, ever grateful"),
                Message::user("no need. thanks"),
                Message::user("never needed, the name says enough"),
                // Reported speech, a request worded as a need, a task after "now".
                Message::user("my coworker insists we should always rebase instead of merge"),
                Message::user("I need a cron line for the cleanup script, every night at 2"),
                Message::user("cool. now write me the command to run postgres 16 locally"),
            ],
            "",
            "",
        );
    }

    /// Stop 40: more ways to confirm what the assistant stated ("yep that's exactly it").
    #[test]
    fn confirmations_in_more_words() {
        check(
            vec![
                Message::assistant(
                    "It looks like the settings are read from config/settings.local.yaml first. Is that right?",
                ),
                Message::user("yep that's exactly it"),
            ],
            "",
            "### 项目知识\n- The settings are read from config/settings.local.yaml first.\n",
        );
    }

    /// Stop 40, second batch: an instruction with a generic scope over what the agent does is a
    /// rule; a list marker, a code block, a status report, a trailing clause on an unnamed
    /// pronoun, a "yep" after a report of work done and "that branch" after "a … branch".
    #[test]
    fn generic_rules_and_what_is_no_statement() {
        check(
            vec![
                Message::user(
                    "use `trash` instead of rm for anything on my machine pls, I lost a week of notes once",
                ),
                Message::user("any bash script you write for me starts with `set -euo pipefail`"),
                Message::user(
                    "two things. 1) show me the diff before every commit. 2) never amend pushed commits",
                ),
                Message::user(
                    "dont run formatters on files u didnt touch, it makes my PRs unreviewable",
                ),
                Message::user(
                    "这个 panic 帮我看下\n```\npanic: open /etc/beacon/config.yaml: no such file or directory\n```",
                ),
                Message::user("status: v2.3.1 is on staging, smoke tests green"),
                Message::user(
                    "inventory service won't start locally: `Can't connect to MySQL on 127.0.0.1:3306`",
                ),
                Message::user("idk, not today"),
                // Quantifiers over the task's objects: tasks.
                Message::user("add tests for all handlers in the router"),
                Message::user("rename fetch_user to load_user everywhere"),
                Message::user("put a blank line after each entry in the changelog"),
            ],
            "",
            "### 用户偏好\n- Use `trash` instead of rm for anything on my machine pls, I lost a week of notes once.\n- Any bash script you write for me starts with `set -euo pipefail`.\n- show me the diff before every commit.\n- Never amend pushed commits.\n- Don't run formatters on files u didn't touch.\n",
        );
        check(
            vec![
                Message::assistant(
                    "Restored test_invoice.py. In test_invoice_rounding.py the expectation was written for half-up.",
                ),
                Message::user("yep"),
                Message::user(
                    "we cut a release/3.8 branch from main, bump the version in pyproject.toml on that branch",
                ),
                Message::user("can't, our floor is python 3.9 for the on-prem customers"),
            ],
            "",
            "### 项目知识\n- We cut a release/3.8 branch from main, bump the version in pyproject.toml on that branch.\n- Our floor is python 3.9 for the on-prem customers.\n",
        );
    }

    /// Stop 40, third batch: a rule asked for politely, a rule after a preamble, what to use
    /// instead said after a rule, a rule for every project, an environment variable as a value
    /// of the project; "the tiled one" picks among the task's options.
    #[test]
    fn polite_rules_preambles_and_replacements() {
        check(
            vec![
                Message::user(
                    "Could you please not use unwrap() outside of tests in any Rust code you write for me? Use `?` or `expect()` instead.",
                ),
                Message::user(
                    "one thing I wanted to say in general, not just for this: before you commit anything, show me the diff",
                ),
                Message::user(
                    "make a venv with `uv venv` and install there, that goes for every project",
                ),
                Message::user("can you fix the login bug?"),
                Message::user("no, not the naive kernel, the tiled one"),
            ],
            "",
            "### 用户偏好\n- Please don't use unwrap() outside of tests in any Rust code you write for me.\n- Use `?` or `expect()` instead.\n- Before you commit anything, show me the diff.\n- Make a venv with `uv venv` and install there, that goes for every project.\n",
        );
        check(
            vec![Message::user(
                "the training scripts read the hub token from the HF_TOKEN env var, not from the cli login cache",
            )],
            "",
            "### 纠正反馈\n- The training scripts read the hub token from the HF_TOKEN env var, not from the cli login cache.\n",
        );
        // A product and its version is a fact of the project; a numbered part of a text is not.
        check(
            vec![
                Message::user("the project moved to Godot 4.2 in march"),
                Message::user("the rules are in Section 4.2 of the style guide"),
            ],
            "",
            "### 项目知识\n- The project moved to Godot 4.2 in march.\n",
        );
    }

    /// Stop 40 review: look-alikes of the new rules that must give nothing (reports while
    /// debugging, tasks with a broad scope, one-off polite requests, reported speech after a
    /// colon, one-off follow-ups, complaints followed by a step of the task).
    #[test]
    fn look_alikes_of_the_stop_40_rules_give_nothing() {
        for text in [
            "no crashes anymore.",
            "no output again.",
            "no logs at all. weird",
            "no tests here",
            "same error. every time.",
            "the tests fail locally. always.",
            "报错。每次都是",
            "run the dev server on my machine and tell me which port it picks",
            "install postgres 16 on my laptop with brew",
            "explain in general how the borrow checker decides lifetimes",
            "check all my projects for the vulnerable log4j version",
            "format your replies above as a table",
            "before you commit, check that the migration actually runs",
            "could you not commit yet? I want to look at the diff first.",
            "can you not run the full suite, just the unit tests?",
            "could you never mind that and look at the parser instead?",
            "will you always be this slow?",
            "can you stop logging the request body in the handler we just wrote?",
            "you always forget the import. add it to main.rs",
            "you forgot the changelog again. add one for this release",
            "your variable names are wrong. use the ones from the spec doc",
            "your docstrings are too verbose again. cut them down in utils.py",
            "my manager said: we should always use feature flags for new endpoints",
            "reviewer said: don't use `lodash` in new code",
            "the docs say: always call init() before connect()",
            "every migration you generate has the wrong timestamp",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text:?}"
            );
        }
    }

    /// Stop 40: a task prompt written out as a list is no source of project facts; a list of
    /// the user's own rules still is read; "yes" after an analysis written as a document
    /// confirms none of its sentences.
    #[test]
    fn a_written_out_task_prompt_gives_no_project_facts() {
        check(
            vec![
                Message::assistant(
                    "## Bug Analysis\n\n**The root cause is in `git.go`** - it uses the default agent type.\n\nThe flow:\n1. `capture` reads the state\n2. `save` writes it\n3. the UI shows it\n\nShould I fix it?",
                ),
                Message::user("yes"),
            ],
            "",
            "",
        );
        check(
            vec![Message::user(
                "Audit the dependencies:\n1. Examine the package.json file(s) in /path/to/Demo and any subdirectories.\n2. Version information for key packages (Next.js, TypeScript, Tailwind, etc.).\n3. Report outdated ones.",
            )],
            "",
            "",
        );
        check(
            vec![Message::user(
                "my rules:\n- always use uv, never pip\n- never push to main\n- reply in Chinese",
            )],
            "",
            "### 用户偏好\n- Always use uv, never pip.\n- Never push to main.\n- Reply in Chinese.\n",
        );
    }

    #[test]
    fn deferrals_plans_observations_and_one_off_steps_give_nothing() {
        for text in [
            // An answer to an offer, with an interjection: no verb and object.
            "hm, not now.",
            "no, not yet. let's just get the crash fix reviewed",
            // A plan pasted for the task: its "always"/"never" are requirements of the work.
            "here's the plan from the checkout doc:\n\n1. Always validate cart totals on the server, never trust client-side prices\n2. Move PaymentForm to its own route\n3. Must keep the old URL redirecting\n\nlet's only do step 2 right now",
            // An observation with a contrast: what the code does, not what to do.
            "the join between sessions and events is giving way more rows than it should, like 3.4M instead of ~2M.",
            "the endpoint keeps returning 500 instead of 404 for missing users",
            // A step that goes on from an instruction bound to today.
            "for today don't run the test suite, the emulator eats all my RAM. just compile with ./gradlew :app:compileDebugKotlin after changes.",
            // A task asked for now, after "please".
            "Please now make the branch for ticket MOB-412 (offline sync banner).",
            // A step of a plan, and a document handed over for the task (both from the bundled
            // real transcripts).
            "When all the initial research step is complete, you can merge the branches from the 3 worktrees in master and then ask the teammates to pull the changes from master.",
            "\"LM Studio configuration.md\" read this to help you.",
            // The always/never of a task request describe what is asked for.
            "write me a fetch_with_retry function for scripts/backup.sh: it should always retry the curl 3 times with exponential backoff (1s, 2s, 4s), and always exit non-zero if the last attempt fails.",
            "add a cron job that never runs on weekends",
            // An observation after a preamble, and a report of what was (not) done.
            "One thing though — I noticed the PR also rewrote the whole package-lock.json.",
            "the release failed because you never created the migration.",
            // A rule whose object points at a tool call: nothing named to stand for it.
            "never use that flag. I want to read the plan and type yes myself.",
            "Don't create one.",
            // Status reports, measurements, a third party's question, steps of the task.
            "`manage.py check` is complaining about conflicting migrations.",
            "anyway, the Airflow scheduler is still restarting, check `logs/scheduler/latest`.",
            "The training container keeps dying with `OSError: [Errno 28] No space left on device` when it writes checkpoints to /workspace/ckpt.",
            "so the `RateLimiter` GenServer's p99 goes from 2ms to 400ms under the load test.",
            "I'm not planning anything, a publisher just asked on a call and I didn't know what to say.",
            "Never mind, let's move on, I need to look at the failing celery beat first.",
            "Then run the plan for `stacks/staging`.",
            "Next task is a tagging sweep: every AWS resource needs a `cost-center` tag, finance is chasing us.",
            "yarn dev 起不来，说 5173 端口被占了。",
            "写个 formatAmount(cents)，返回两位小数的字符串，负数总是用括号包起来。",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
    }

    #[test]
    fn look_alikes_of_the_stop_45_guards_are_still_read() {
        // Standing rules and facts worded like a task request, a report, a status or a
        // pointing pronoun (a review of the stop-45 rules found each dropped by a first draft).
        for text in [
            "Add a changelog entry to every PR you open.",
            "Write the commit message in English, always.",
            "Make a new branch for each task, never commit to main directly.",
            "Don't add features beyond what the issue asked for.",
            "Never do more than the user asked.",
            "We use thiserror: anyhow only in binaries.",
            "Every change goes from `dev` to `staging` to `main`.",
            "Our release script keeps everything under `dist/`.",
            "The first step of every deploy is `make migrate`.",
            "如果端口被占用，就用 `PORT=3001 pnpm dev`。",
            "Now use pnpm, not npm.",
            "Always do this before committing: run the formatter and the linter.",
            "Keep PRs small, as we always discussed.",
            "这些脚本都用 bash 写，不要用 zsh。",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
    }

    #[test]
    fn someone_elses_words_specs_and_dated_freezes_give_nothing() {
        // Stop 46, from the blind batches j46 and k46 (fixtures/eval/RULES.md): someone else's
        // habit or words, a spec of a thing asked for, a freeze bound to a date, a task.
        for text in [
            "my colleague Ahmet always uses tabs and never runs tests before pushing, and then CI is red for everyone lol.",
            "Priya from SRE said at standup that her team wants everybody to stop using kubectl port-forward for prod debugging.",
            "No idea whether that's official yet.",
            "老王说他们组以后 Kafka topic 都用 Terraform 管，不让手动建了。",
            "need a kotlin function formatPrice(cents: Long): String, it should always show 2 decimals and never show negative.",
            "12 号之前别动 prod 集群的 Kafka broker 配置，大促前封网。",
            "你先在 staging 上把 num.replica.fetchers 调到 4 看看效果。",
            "Just fix the ldflags version stamping you were looking at.",
            "The flaky test is in services/ledger, TestReconcileBatch.",
            "we need bump the worker asg instance type to t3.large in staging",
            "本地 docker compose up 起来以后，API gateway 在 8443。",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
    }

    #[test]
    fn look_alikes_of_the_stop_46_guards_are_still_read() {
        for text in [
            "CI always runs mypy --strict on src/.",
            "Never use tabs in Python files.",
            "My colleagues review every PR. Always keep PRs under 400 lines.",
            "Unlike my colleague, I want you to always add type hints.",
            "以后都用 pnpm，不要用 npm。",
            "我们以后统一用 ruff 格式化。",
            "dont bother asking before running the tests, just run them. always.",
            "Tests live in tests/unit, and the flaky ones are tagged @flaky.",
            "Never run curl ... | sh for anything, download the script first.",
            // Look-alikes a review of the first drafts found dropped (stop 46): things of the
            // project before a habit verb, an ellipsis before a rule, Chinese openers.
            "Secrets never go in the repo, use the vault.",
            "Deploys always go through ArgoCD.",
            "Python always goes through uv here, never pip.",
            "Docker always runs as non-root in this repo.",
            "Postgres always runs on port 5433 here, not 5432.",
            "Imports always go at the top of the file.",
            "Remember never commit the .env file.",
            "Always bias towards small PRs.",
            "ugh this broke again... always run the migrations before the tests.",
            "hmm... never use npm here, use pnpm.",
            "老实说，以后都用 pnpm。",
            "小张说得对，以后都用 pnpm。",
            "以后改运维配置前要先跟我说一声。",
            "所以以后都用 pnpm。",
            "你们以后提交前都要跑测试。",
            "先跑 lint 再提交代码。",
            "The failing build is always caused by the cache, clear it with make clean.",
            "I want a short summary at the end of every answer, it should list the files you changed.",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // A contraction typed without its apostrophe is read, and stored, with it.
        check(
            vec![Message::user(
                "dont use pip, use uv instead. thats how i work everywhere",
            )],
            "",
            "### 用户偏好\n- Don't use pip, use uv instead.\n",
        );
        // An ellipsis before a symbol elides, it does not end the sentence; before a word it does.
        assert_eq!(
            facts::sentences("never run curl ... | sh. Download it first."),
            vec!["never run curl ... | sh.", "Download it first."]
        );
        assert_eq!(
            facts::sentences("ugh this broke again... always run the migrations"),
            vec!["ugh this broke again...", "always run the migrations"]
        );
        // A word in capitals is a name, not "im" without its apostrophe; "im" is "I'm" only
        // where a clause starts.
        assert_eq!(
            facts::with_apostrophes("The IM service lives in services/im, im sure. dont"),
            "The IM service lives in services/im, I'm sure. don't"
        );
        assert_eq!(facts::with_apostrophes("the im gateway"), "the im gateway");
        // A path before a Chinese comma keeps its extension.
        assert_eq!(
            facts::named_things("仓库里有个 tools/flash.py，它会枚举设备"),
            vec!["tools/flash.py"]
        );
        // A scope said after the rule, with a typo, moves it to the user's file.
        let out = extract(
            &[Message::user(
                "stop adding docstrings to private helpers. thats a general thing for me, not only this project",
            )],
            "",
        );
        assert!(out.project.is_empty(), "{out:?}");
        assert_eq!(out.preferences.len(), 1, "{out:?}");
    }

    #[test]
    fn a_scope_tag_or_sentence_makes_an_instruction_standing_and_time_or_others_do_not() {
        // Read, and kept in the user's file: the scope said in a tag, a clause or a sentence of
        // its own; quit/no more; "id rather" typed without its apostrophe.
        for text in [
            "use uv for python deps, every project",
            "quit adding the Co-Authored-By line to my commits. any repo",
            "no more --no-verify. if a hook fails you fix what it complains about. goes for everything",
            "id rather you use rg than grep -r for searching from now on, any repo",
            "fyi i'm on compose v2 everywhere so always write `docker compose` not `docker-compose`",
            "so from now on whenever you leave a todo in anything you write for me, write it as TODO(marek): with my name",
            "I'd like you to write all commit messages in conventional commit format from now on",
            "每次改完 Go 代码都用 gofumpt 格式化，别只跑 gofmt，我所有 Go 项目都是这样。",
        ] {
            let out = extract(&[Message::user(text)], "");
            assert!(out.project.is_empty(), "{text}: {out:?}");
            assert_eq!(
                out.preferences.len() + out.corrections.len(),
                1,
                "{text}: {out:?}"
            );
        }
        // Nothing kept: a rule bound to a moment, a way shown before, a team's words.
        for text in [
            "until the 2.4 release goes out on friday don't merge anything into main without pinging me first",
            "Please write tests like this for me from now on.",
            "以后这种情况都按上次那样处理就行。",
            "运维那边说他们以后都用 ArgoCD 部署，不再直接 helm install 了。",
            "产品经理觉得以后所有按钮都要用圆角。",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // Their look-alikes are still read.
        for text in [
            "the app is on ruby 3.2.2 and rails 7.1, so no rails 8 stuff like that",
            "我写代码一般都会先跑一下格式化再提交，所以你帮我改完也记得先格式化",
            "Never deploy on a friday.",
            "When you fix a bug put the issue id like MOB-123 in the commit, always.",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        assert_eq!(
            facts::with_apostrophes("id rather you ask. the issue id like MOB-123"),
            "I'd rather you ask. the issue id like MOB-123"
        );
    }

    #[test]
    fn a_standing_rule_the_agent_put_as_a_question_is_kept_once_confirmed() {
        let asked = |assistant: &str, user: &str| {
            extract(
                &[
                    Message::user("run the tests"),
                    Message::assistant(assistant),
                    Message::user(user),
                ],
                "",
            )
        };
        let out = asked(
            "The webserver is mapped to host port 8089 in docker-compose.yml, not 8080. I'll use http://localhost:8089 for this project from now on, correct?",
            "yep. 8080 is jenkins",
        );
        assert_eq!(
            out.preferences,
            vec!["Use http://localhost:8089 for this project from now on."]
        );
        // "this command" stands for the one command named before it, however long.
        let out = asked(
            "I'll run tests with `xcodebuild test -scheme Ledger -destination 'platform=iOS Simulator,name=iPhone 15'`; the LedgerWidgets scheme has no test action. Use this command for tests in this project from now on?",
            "yes",
        );
        assert_eq!(
            out.preferences,
            vec![
                "Use `xcodebuild test -scheme Ledger -destination 'platform=iOS Simulator,name=iPhone 15'` for tests in this project from now on."
            ]
        );
        // One step offered and approved, or a rule not put as a question: nothing.
        for (assistant, user) in [
            ("Should I run `bin/rails db:test:prepare` first?", "yes"),
            ("I'll use rg for searches from now on.", "yep"),
            ("I'll use pnpm from now on, correct?", "no, npm"),
        ] {
            let out = asked(assistant, user);
            assert!(out.preferences.is_empty(), "{assistant} / {user}: {out:?}");
        }
    }

    #[test]
    fn specs_under_a_header_status_reports_and_not_happening_give_nothing() {
        for text in [
            "build the login screen. requirements: the login button must always be disabled while the request is in flight, never show the spinner under 300ms.",
            "写个导出功能。要求：导出的 CSV 永远用 UTF-8 BOM 编码。金额列永远保留两位小数。不要导出已删除的订单。",
            "good to know, not happening any time soon though.",
            "just curious, not planning anything.",
            "deployed v2.3.1 to prod 20 min ago, dashboards all green.",
            "The `shelfctl import` command panics when the CSV has an empty trailing line, stack trace below.",
            "dbt test 也全过了。",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // Look-alikes: a rule beside a requirement of the user's own, a real contrast.
        for text in [
            "Use pnpm, not npm.",
            "requirements for every PR you open: always link the ticket.",
            "Deploys go through `make deploy`, not by hand.",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // "yes please" to a rule put as a question keeps it; what the agent saw before the
        // offer is not confirmed by it.
        let out = extract(
            &[
                Message::user("write tests for the CouponValidator"),
                Message::assistant(
                    "I see both in tests/. Should I always use Pest syntax instead of PHPUnit classes for new tests in this repo?",
                ),
                Message::user("yes please, the PHPUnit ones are legacy"),
            ],
            "",
        );
        assert!(out.project.is_empty(), "{out:?}");
        assert_eq!(
            out.preferences,
            vec!["Always use Pest syntax instead of PHPUnit classes for new tests in this repo."]
        );
    }

    #[test]
    fn the_usual_rule_before_an_exception_is_kept_and_the_exception_is_not() {
        let out = extract(
            &[Message::user(
                "commit the retry changes. normally you run `make lint` before every commit here, but skip it this time, the golangci config is broken on this branch",
            )],
            "",
        );
        let all = out.to_markdown();
        assert!(
            all.contains("you run `make lint` before every commit here."),
            "{all}"
        );
        assert!(!all.contains("skip"), "{all}");
        let out = extract(
            &[Message::user(
                "normally we always squash-merge in this repo, but for release branches like this one do a real merge commit",
            )],
            "",
        );
        assert_eq!(out.to_markdown().matches("\n- ").count(), 1, "{out:?}");
        assert!(out.to_markdown().contains("squash-merge"), "{out:?}");
        // A scope said as a sentence of its own is no rule of its own.
        let out = extract(
            &[Message::user(
                "NEVER run terraform apply. not here, not in any other repo, ever.",
            )],
            "",
        );
        assert_eq!(out.preferences, vec!["NEVER run terraform apply."]);
    }

    #[test]
    fn every_time_do_that_and_rules_asked_as_questions_are_read() {
        for text in [
            "give me PowerShell every time please",
            "can you not use mocks ever?",
            "I don't want unittest.mock or monkeypatched clients in my tests, in any project.",
            "add a --json flag. and this one is from me, not the agents file: at the end of every task, in any project, give me a short table of the files you changed",
            "run the formatter whenever you touch a Python file",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // "do that" finds what it stands for in the agent's turn before.
        let out = extract(
            &[
                Message::assistant("I'll run `vale` on the files I changed."),
                Message::user(
                    "sure, and do that every time you touch docs, in any docs repo I work in",
                ),
            ],
            "",
        );
        assert_eq!(
            out.preferences,
            vec!["Do `vale` every time you touch docs, in any docs repo I work in."]
        );
        // Questions and one-offs stay out: "do you …", an issue by its number.
        for text in [
            "do you always run the tests before pushing",
            "close #812 as a duplicate of #790, and put needs-repro on #815.",
            "every time I run it, it crashes",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
    }

    #[test]
    fn rules_under_a_header_for_this_project_hold_here() {
        let out = extract(
            &[Message::user(
                "Rules for this repo going forward, I'm tired of repeating them:\n1. never log request bodies, not even at debug level\n2. always answer me in English",
            )],
            "",
        );
        assert_eq!(
            out.preferences,
            vec![
                "Never log request bodies, not even at debug level, in this project.",
                "Always answer me in English."
            ]
        );
        // A macro's `!` does not end a sentence; "we hash with argon2id here" is a fact.
        assert_eq!(
            facts::sentences(
                "all SQL goes through sqlx's query! / query_as! macros. Great! now push"
            ),
            vec![
                "all SQL goes through sqlx's query! / query_as! macros.",
                "Great!",
                "now push"
            ]
        );
        let out = extract(&[Message::user("wrong, we hash with argon2id here.")], "");
        assert_eq!(out.to_markdown().matches("argon2id").count(), 1, "{out:?}");
    }

    #[test]
    fn look_alikes_of_the_stop_47_guards_found_by_the_review() {
        // Still read: conditions that look like deadlines, real contrasts, the user speaking,
        // 说明 / 讲究 / 要求 as words of their own, "keep it that way", a way shown after a
        // colon, a standing exception, a rule after a spec, facts of a monorepo.
        for text in [
            "Don't push until the tests pass.",
            "Don't push to prod on a Friday afternoon.",
            "改完代码别直接提交，先让我看一下 diff。",
            "Prefer `date.today()` over `datetime.now().date()` in this codebase.",
            "Use the new `api/v2` client, not that legacy `ApiWrapper` class.",
            "Keep PR descriptions short, not too formal.",
            "Use ruff, not flake8 - flake8 is not really maintained here.",
            "测试说明在 docs/testing.md 里。",
            "前端要求 Node 18 以上，用 pnpm 装依赖。",
            "我跟运维说了，以后部署统一走 ArgoCD，你也按这个来。",
            "Use 4 spaces, never tabs, and keep it that way.",
            "以后提交信息都像这样写：feat(scope): 描述。",
            "Normally we deploy from main, but hotfixes always go out from the release branch.",
            "build the signup form. requirements: the button is blue. also, from now on always write the tests first for every project.",
            "no longer use moment.js, use date-fns",
            "The shared eslint config in packages/eslint-config is used by every codebase in this monorepo.",
        ] {
            assert_ne!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // Not kept: one-off tasks worded as a wish, stories with "so/then always", a story
        // opening with "normally".
        for text in [
            "I'd like you to add a retry to the fetchUser function.",
            "I restarted the container and then always got a 502.",
            "we hit the rate limit, so never got the full export.",
            "Normally you would see a 200 here, but the proxy strips it.",
            "run npm audit in every repo and send me the report",
        ] {
            assert_eq!(
                extract(&[Message::user(text)], "").to_markdown(),
                "",
                "{text}"
            );
        }
        // Words that are no fillers keep their place; "id" as a noun stays.
        let out = extract(
            &[Message::user(
                "Always look users up by id rather than by email. So far this repo only deploys to eu-west-1, via `make deploy`.",
            )],
            "",
        )
        .to_markdown();
        assert!(out.contains("by id rather than by email"), "{out}");
        assert!(!out.contains("I'd"), "{out}");
        // A character that lowercases to another length is no filler and no panic.
        let _ = extract(&[Message::user("o\u{212a} run the tests every time")], "");
        // A limit said with the "yes" keeps the proposal from becoming a rule.
        let out = extract(
            &[
                Message::assistant("Should I use `make test-fast` for this repo from now on?"),
                Message::user("yes please, for this PR"),
            ],
            "",
        );
        assert!(out.preferences.is_empty(), "{out:?}");
        // A confirmed statement stays confirmed beside an offer.
        let out = extract(
            &[
                Message::assistant(
                    "From the config, it looks like staging deploys from the `release/*` branches. Is that right? Should I also add that to the README?",
                ),
                Message::user("yes, that's right"),
            ],
            "",
        );
        assert!(out.to_markdown().contains("release/*"), "{out:?}");
        // The clause cut keeps Chinese facts and instructions that put the secret somewhere.
        assert_eq!(
            without_secrets("数据库密码：[REDACTED]，连接串在 config/db.yaml，别提交到仓库。"),
            Some("连接串在 config/db.yaml，别提交到仓库。".to_owned())
        );
        assert_eq!(
            without_secrets("Put STRIPE_KEY=[REDACTED] in .env.local, never commit it."),
            Some("Put STRIPE_KEY=[REDACTED] in .env.local, never commit it.".to_owned())
        );
    }

    #[test]
    fn an_entry_whose_value_is_a_secret_is_not_written_and_other_clauses_stay() {
        let out = extract(
            &[Message::user(
                "the AES key for the export files is 3f7a9c2e8b1d4f6a0c5e9b2d7f1a3c8e5b0d4f6a9c2e7b1d3f8a5c0e9b2d4f7a. \
                 in this repo encrypted exports always go to exports/enc/.",
            )],
            "",
        );
        let all = out.to_markdown();
        assert!(!all.contains("3f7a9c2e"), "{all}");
        assert!(!all.contains("AES key"), "{all}");
        assert!(all.contains("exports/enc/"), "{all}");
        assert_eq!(
            without_secrets("Deploy with `make deploy`, DEPLOY_TOKEN=[REDACTED], from main."),
            Some("Deploy with `make deploy`, from main.".to_owned())
        );
        assert_eq!(
            without_secrets("Connect with postgres://app:[REDACTED]@db.staging:5432/app."),
            Some("Connect with postgres://app:[REDACTED]@db.staging:5432/app.".to_owned())
        );
        assert_eq!(without_secrets("The staging password is [REDACTED]."), None);
        assert_eq!(
            without_secrets(
                "Always ssh as deploy@staging.example.com, the password is [REDACTED]."
            ),
            Some("Always ssh as deploy@staging.example.com.".to_owned())
        );
    }

    #[test]
    fn rules_next_to_the_new_guards_are_still_read() {
        // A list introduced as the user's rules is read; so is an item speaking to the agent
        // in a pasted plan.
        check(
            vec![Message::user(
                "my rules for you:\n- always use uv, never pip\n- never push to main\n- keep commits small",
            )],
            "",
            "### 用户偏好\n- Always use uv, never pip.\n- Never push to main.\n- Keep commits small.\n",
        );
        // An interjection before a correction takes nothing from it.
        check(
            vec![Message::user("hm, no, use pnpm instead of npm.")],
            "",
            "### 纠正反馈\n- Use pnpm instead of npm.\n",
        );
        // "I use X for every / on every …": the user's own way of working.
        check(
            vec![Message::user(
                "I use fish on every machine, `export FOO=bar` just doesn't work for me.",
            )],
            "",
            "### 用户偏好\n- I use fish on every machine, `export FOO=bar` just doesn't work for me.\n",
        );
        // A task request that says its rule holds beyond the task.
        check(
            vec![Message::user(
                "write me a backup script; any script you write for me should always start with set -euo pipefail.",
            )],
            "",
            "### 用户偏好\n- Any script you write for me should always start with set -euo pipefail.\n",
        );
    }

    #[test]
    fn a_rule_naming_a_thing_the_tools_printed_is_the_projects() {
        let call = Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "t1",
                "Bash",
                json!({"command": "rg -n '^deploy' Makefile"}),
            )],
        );
        let result = Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "t1",
                "31:deploy-staging: build\n38:deploy-prod: build",
                false,
            )],
        );
        let out = extract(
            &[
                call.clone(),
                result.clone(),
                Message::user("don't ever run deploy-prod"),
            ],
            "",
        );
        assert_eq!(out.project, vec!["Don't ever run deploy-prod.".to_owned()]);
        assert!(out.preferences.is_empty());
        // The program the agent ran is a tool, not a thing of the project.
        let ran = Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "t2",
                "Bash",
                json!({"command": "docker-compose up -d"}),
            )],
        );
        let printed = Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "t2",
                "docker-compose: Creating network web_default",
                false,
            )],
        );
        let out = extract(
            &[
                ran,
                printed,
                Message::user("never use docker-compose, use docker compose instead"),
            ],
            "",
        );
        assert!(out.project.is_empty(), "{out:?}");
        assert!(
            !out.preferences.is_empty() || !out.corrections.is_empty(),
            "{out:?}"
        );
        // A rule said for all the user's projects stays theirs.
        let out = extract(
            &[
                call,
                result,
                Message::user("never run deploy-prod from a laptop, in all my projects"),
            ],
            "",
        );
        assert!(out.project.is_empty(), "{out:?}");
        assert_eq!(
            out.preferences,
            vec!["Never run deploy-prod from a laptop, in all my projects.".to_owned()],
            "{out:?}"
        );
    }
}
