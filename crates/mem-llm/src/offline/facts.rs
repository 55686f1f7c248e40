//! Facts, not sentences (issue 26 build 2): a stated sentence is split into one fact per clause,
//! rewritten into a self-contained statement, and dropped when it leans on a pronoun whose
//! referent is not a named thing.
//!
//! - [`split_clauses`]: splits at `;`/`；`, at `, and` / `and` / `，` before a new instruction,
//!   and between parallel scoped clauses ("Chinese to me, English in code comments"); never
//!   inside a backticked or quoted value, a URL or a path, and never a contrast ("X, not Y").
//! - [`rewrite`]: drops openers that carry no fact ("no,", "actually,", "remember that",
//!   "记住，", "不对，"), turns "use X, never Y" into "Use X, not Y.", starts with a capital
//!   and ends with a full stop; values (commands, paths, versions, URLs) are kept verbatim.
//! - [`resolve_pronouns`]: "it", "this", "that", "这个", "那个", "它" standing for a thing are
//!   replaced by the one named thing (a backticked value, a path, a command) of the context, or
//!   the sentence is dropped.

use std::sync::LazyLock;

use regex::Regex;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// Byte ranges of `text` that are values: backticked or quoted spans, URLs, paths and other
/// tokens without spaces that hold `/`, `=`, `@` or `:`. Nothing is split inside them.
pub(crate) fn protected_spans(text: &str) -> Vec<(usize, usize)> {
    static VALUE: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"`[^`]*`|"[^"]*"|“[^”]*”|「[^」]*」|(?:^|\s)'[^'\n]*'|https?://\S+|\S*[/=@:\\]\S*"#)
    });
    VALUE
        .find_iter(text)
        .map(|m| {
            let value = m.as_str();
            // A bare token (URL, path) does not own the punctuation closing its sentence.
            let quoted = value.trim_start().starts_with(['`', '"', '“', '「', '\'']);
            let kept = if quoted {
                value
            } else {
                value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '。', '，'])
            };
            (m.start(), m.start() + kept.len())
        })
        .collect()
}

fn inside(spans: &[(usize, usize)], at: usize) -> bool {
    spans.iter().any(|&(s, e)| at > s && at < e)
}

/// Splits text into sentences (line breaks; `.`, `!`, `?`
/// before a space; `。！？；`), never inside a value of [`protected_spans`]: a `!` in a
/// backticked or quoted password, a `.` in a path or URL does not end a sentence. An ellipsis
/// before a symbol ("never run curl ... | sh", "`fix: ...`") elides part of a command and does
/// not end the sentence; before a word it does ("ugh this broke again... always run the
/// migrations").
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let spans = protected_spans(line);
        let mut from = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let end = i + c.len_utf8();
            let ends = match c {
                '。' | '！' | '？' => true,
                '.' if line[..i].ends_with("..") => {
                    let next = line[end..].trim_start().chars().next();
                    next.is_none_or(char::is_alphanumeric)
                }
                // A macro's `!` in prose ("sqlx's query! / query_as! macros"): the name goes
                // on after it, the sentence does not end.
                '!' if line[..i].ends_with(|p: char| p.is_alphanumeric() || p == '_')
                    && (line[end..].trim_start().starts_with(['/', ',', ')'])
                        || line[end..].trim_start().starts_with("macro")) =>
                {
                    false
                }
                '.' | '!' | '?' => chars.peek().is_none_or(|(_, n)| n.is_whitespace()),
                _ => false,
            };
            if ends && !inside(&spans, i) {
                push_clause_raw(&mut out, &line[from..end]);
                from = end;
            }
        }
        push_clause_raw(&mut out, &line[from..]);
    }
    out
}

/// Contractions written without their apostrophe, as typed in a hurry or by a non-native
/// writer ("dont", "thats", "im"), with the apostrophe put back: the cues read "don't" and
/// "that's". Words that are also words without one ("its", "lets", "ill", "were") are left as
/// they are; "id" is "I'd" only where a clause starts and before rather / prefer / appreciate /
/// like to / love you ("the issue id like MOB-123", "the session id rather than" stay).
const BARE_CONTRACTIONS: &[(&str, &str)] = &[
    ("dont", "don't"),
    ("doesnt", "doesn't"),
    ("didnt", "didn't"),
    ("cant", "can't"),
    ("wont", "won't"),
    ("isnt", "isn't"),
    ("arent", "aren't"),
    ("wasnt", "wasn't"),
    ("werent", "weren't"),
    ("shouldnt", "shouldn't"),
    ("wouldnt", "wouldn't"),
    ("couldnt", "couldn't"),
    ("havent", "haven't"),
    ("hasnt", "hasn't"),
    ("thats", "that's"),
    ("whats", "what's"),
    ("theres", "there's"),
    ("im", "i'm"),
    ("id", "i'd"),
    ("ive", "i've"),
    ("youre", "you're"),
    ("youve", "you've"),
    ("theyre", "they're"),
];

/// `text` with the apostrophes of [`BARE_CONTRACTIONS`] put back, outside values
/// ([`protected_spans`]: a `--dont-ask` flag or a backticked `im` stays as written). A word
/// starting with a capital keeps it ("Dont" → "Don't"); a word in capitals is a name ("the IM
/// service") and stays. "im" / "ive" become "I'm" / "I've" only where a clause starts (the
/// text's start, after a stop or comma, after and/but/so/because/if/when/cause).
pub(crate) fn with_apostrophes(text: &str) -> String {
    static WORD: LazyLock<Regex> = LazyLock::new(|| re(r"\b[A-Za-z]{2,8}\b"));
    static WANTS_AFTER: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^\s+(really\s+)?(rather|prefer|appreciate|(like|love)\s+(to|you|it)\b)\b")
    });
    let spans = protected_spans(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for m in WORD.find_iter(text) {
        let word = m.as_str();
        if word.chars().all(|c| c.is_ascii_uppercase()) {
            continue;
        }
        let lower = word.to_ascii_lowercase();
        if (lower == "im" || lower == "ive") && !opens_clause(&text[..m.start()]) {
            continue;
        }
        // "id rather you use rg": "id" is "I'd" only before a verb of wanting.
        if lower == "id"
            && !(opens_clause(&text[..m.start()]) && WANTS_AFTER.is_match(&text[m.end()..]))
        {
            continue;
        }
        let Some(&(_, full)) = BARE_CONTRACTIONS.iter().find(|(bare, _)| *bare == lower) else {
            continue;
        };
        // Part of a longer token ("dont-ask", "im.png", "o'dont"): not a word of the sentence.
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if spans.iter().any(|&(s, e)| m.start() >= s && m.start() < e)
            || before.is_some_and(|c| matches!(c, '-' | '_' | '\'' | '.' | '/'))
            || after.is_some_and(|c| {
                matches!(c, '-' | '_' | '\'' | '/')
                    || c == '.' && text[m.end() + 1..].starts_with(|n: char| n.is_alphanumeric())
            })
        {
            continue;
        }
        out.push_str(&text[last..m.start()]);
        if lower == "im" || lower == "ive" || lower == "id" {
            out.push('I');
            out.push_str(&full[1..]);
        } else if word.starts_with(|c: char| c.is_ascii_uppercase()) {
            out.push_str(&full[..1].to_ascii_uppercase());
            out.push_str(&full[1..]);
        } else {
            out.push_str(full);
        }
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

/// Whether a clause starts right after `before`: nothing, a stop or a comma, or a conjunction.
fn opens_clause(before: &str) -> bool {
    let before = before.trim_end();
    let last = before
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    before.is_empty()
        || before.ends_with(['.', '!', '?', ',', ';', ':', '(', '-', '—'])
        || [
            "and", "but", "so", "because", "cause", "cuz", "if", "when", "coz", "tbh", "lol",
        ]
        .contains(&last.as_str())
}

fn push_clause_raw(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_owned());
    }
}

/// An instruction or cue starting a clause: what makes the text after a comma a fact of its own.
static CLAUSE_START: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(please\s+)?(always|never|don't|do\ not|dont|use|prefer|keep|put|write|run|avoid|stop|make\ sure|reply|answer|respond|name|format|indent|commit|push|add|finish|tell|ask|explain|mention|leave)\b
        | ^(以后|今后|总是|永远|一律|统一|不要|别|记住|务必|禁止|所有)
    ")
});

/// An instruction that stands on its own whatever comes before it ("…, and never push to main").
static STRONG_START: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?xi)^(please\s+)?(always|never|don't|do\ not|dont|make\ sure)\b"));

/// A sentence opening with a subordinate clause ("when you fix a bug, add a test", "to run the
/// app, use…", "from now on, …"): its comma does not end a fact.
static SUBORDINATE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(when|whenever|if|to|from\ now\ on|going\ forward|in\ the\ future|before|after|once|unless|every\ time|each\ time|for|in|on|while|as\ long\ as)\b
        | ^(如果|当|以后|今后|每次|在)
    ")
});

/// A negative instruction: with a positive one beside it, the pair is one contrast ("不要用
/// var，一律用 const", "never X, always Y"), not two facts.
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(please\s+)?(never|don't|do\s+not|dont|no\b|avoid|stop)|(不要|别|不用|禁止|不许)")
});

/// A clause scoped by a prepositional phrase: "Chinese to me", "English in code comments".
static SCOPED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[\w`'.+#-]+(\s+[\w`'.+#-]+)?\s+(to|in|for|on|with|inside)\s+\S+"));

/// Right-hand sides that continue the clause before them: a contrast or a reason.
static CONTINUES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(never|don't\ use|do\ not\ use)\ \S+$
        | ^(not|but|because|since|so|unless|except|or|then|which|that|especially|even|otherwise|instead|rather)\b
        | ^(不是|而是|而不是|但|但是|因为|所以|否则|除非|然后|或者|而)
        | ^(不要|别|不用)用?\s*[\w.+-]+\s*[。！!.]?$
    ")
});

/// Splits one stated sentence into clauses holding one fact each (see the module doc). A
/// sentence without such a boundary comes back whole; each clause is trimmed of its separator.
pub fn split_clauses(sentence: &str) -> Vec<String> {
    let spans = protected_spans(sentence);
    let mut cuts: Vec<(usize, usize)> = Vec::new(); // (end of left, start of right)
    for (i, c) in sentence.char_indices() {
        if inside(&spans, i) {
            continue;
        }
        let next = i + c.len_utf8();
        match c {
            ';' | '；' => cuts.push((i, next)),
            ',' | '，' => {
                let rest = sentence[next..].trim_start();
                let rest = rest
                    .strip_prefix("and ")
                    .or_else(|| rest.strip_prefix("并且"))
                    .or_else(|| rest.strip_prefix("而且"))
                    .or_else(|| rest.strip_prefix("还有"))
                    .unwrap_or(rest);
                let left = sentence[..i].trim();
                let start = sentence.len() - rest.len();
                if CONTINUES.is_match(rest)
                    || (left.split_whitespace().count() < 2 && left.is_ascii())
                    || SUBORDINATE.is_match(left)
                    || NEGATIVE.is_match(left) != NEGATIVE.is_match(rest)
                {
                    continue;
                }
                let parallel = SCOPED.is_match(left.rsplit(['，', ',']).next().unwrap_or(left))
                    && SCOPED.is_match(rest)
                    && rest.split_whitespace().count() <= 8;
                // "回复我用中文，代码注释用英文": two "A 用 B" clauses side by side.
                let parallel_zh = left.contains('用')
                    && rest.contains('用')
                    && rest.chars().filter(|c| !c.is_ascii()).count() >= 4;
                if CLAUSE_START.is_match(rest) || parallel || parallel_zh {
                    cuts.push((i, start));
                }
            }
            ' ' => {
                // "use tabs and never commit to main": "and" before a new instruction.
                let rest = &sentence[next..];
                // Only when both sides are instructions, or the right one is a strong one
                // ("always", "never", "don't"): after a statement ("tests live in internal/
                // and run with go test") the verb shares the statement's subject.
                let left_start = cuts.last().map_or(0, |c| c.1);
                let left = sentence[left_start.min(i)..i].trim_start();
                if let Some(after) = rest.strip_prefix("and ")
                    && !inside(&spans, next)
                    && sentence[..i].split_whitespace().count() >= 2
                    && CLAUSE_START.is_match(after)
                    && !CONTINUES.is_match(after)
                    && (CLAUSE_START.is_match(left) || STRONG_START.is_match(after))
                {
                    cuts.push((i, next + 4));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut from = 0;
    for (end, start) in cuts {
        if end < from {
            continue;
        }
        push_clause(&mut out, &sentence[from..end]);
        from = start;
    }
    push_clause(&mut out, &sentence[from..]);
    out
}

fn push_clause(out: &mut Vec<String>, clause: &str) {
    let c = clause
        .trim()
        .trim_end_matches([',', '，', ';', '；'])
        .trim();
    if !c.is_empty() {
        out.push(c.to_owned());
    }
}

/// Openers that carry no fact: a correction's "no,", "actually,", "remember that", 记住，...
static OPENER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(no|nope|nah|actually|wrong|not\ quite|ok|okay|yes|yeah|right|correct|exactly|fyi|note|remember|please\ remember|just\ remember|keep\ in\ mind|reminder)(\s+that)?\s*[,:.!—-]+\s*
        | ^(i\ (already\ )?said|i\ told\ you|i've\ (already\ )?told\ you|as\ i\ said|like\ i\ said)(\s+(that|to))?[\s,:]+
        | ^(wait|hold\ on|oh\ wait|no\ wait|scratch\ that|i\ forgot|sorry|actually\ no|can't|cannot)(\s*[,:.!—–-]+\s*|\s+)
        | ^(remember|keep\ in\ mind|note|please\ note)\s+that\s+
        | ^(不对|错了|不是的|其实|实际上|请记住|记住)[，,:：\s]*
        | ^我?(已经)?(跟你)?说过(了|很多次了?)?[，,:：\s]*
        | ^(注意|对了|好的|是的|对)[，,:：]+\s*
    ")
});

/// "use X, never Y" (an instruction naming the alternative): the "never" reads "not".
static NEVER_ALTERNATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^((?:please\s+)?(?:use|prefer|run|pick|choose|go\s+with)\s+\S+(?:\s+\S+)?),\s+never\s+(\S+)$",
    )
});

/// English words a statement starts with that take a capital; any other first word (a command,
/// a package, an identifier: `uv`, `pnpm`) is a value and kept as written.
const STARTERS: &[&str] = &[
    "always",
    "never",
    "don't",
    "dont",
    "do",
    "use",
    "prefer",
    "keep",
    "put",
    "write",
    "run",
    "avoid",
    "stop",
    "make",
    "reply",
    "answer",
    "respond",
    "name",
    "format",
    "indent",
    "commit",
    "push",
    "add",
    "the",
    "we",
    "we're",
    "i",
    "i'd",
    "i'm",
    "our",
    "all",
    "any",
    "every",
    "tests",
    "test",
    "docs",
    "deploy",
    "deploys",
    "build",
    "builds",
    "release",
    "releases",
    "ci",
    "from",
    "in",
    "on",
    "for",
    "when",
    "whenever",
    "before",
    "after",
    "only",
    "no",
    "remember",
    "please",
    "spaces",
    "tabs",
    "comments",
    "commits",
    "branches",
    "code",
    "config",
    "configuration",
];

/// Rewrites one clause into a self-contained statement (see the module doc); `None` when
/// nothing is left once the openers are dropped.
pub fn rewrite(clause: &str) -> Option<String> {
    let mut s = clause.trim().to_owned();
    loop {
        let cut = OPENER.find(&s).map(|m| m.end()).filter(|&e| e > 0);
        match cut {
            Some(e) if e < s.len() => s = s[e..].trim_start().to_owned(),
            Some(_) => return None,
            None => break,
        }
    }
    let body = s
        .trim_end_matches(['.', '!', '。', '！'])
        .trim_end()
        .to_owned();
    if body.is_empty() {
        return None;
    }
    let body = match NEVER_ALTERNATIVE.captures(&body) {
        Some(c) => format!("{}, not {}", &c[1], &c[2]),
        None => body,
    };
    let first_word = body
        .split(|c: char| !c.is_ascii_alphabetic() && c != '\'')
        .next()
        .unwrap_or("");
    let mut out = if STARTERS.contains(&first_word) {
        let mut chars = body.chars();
        chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default()
    } else {
        body
    };
    // The full stop of the clause's script: `。` when it holds CJK text, `.` otherwise.
    let last = out.chars().next_back()?;
    let cjk = out.chars().any(|c| ('\u{3000}'..='\u{9fff}').contains(&c));
    if !matches!(last, '?' | '）' | '」' | '”' | '？') {
        out.push(if cjk { '。' } else { '.' });
    }
    Some(out)
}

/// A pronoun standing for a thing (not "that" as a conjunction, not "this project").
static PRONOUN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(it|them)\b
        | \b(this|that|these|those)\b\s*([.,;!:]|$|\b(one|again|anymore|any\ more|ever|way|thing|stuff|please)\b)
        | ^(this|that)(\s+(is|was)|'s)\b
        | \b(these|those)\s+(against|in|into|on|to|from|for|with|and|or|are|were|get|gets)\b
        | \b(put|move|add|copy|paste|save|store|stick|drop)\s+(that|this|these|those)\s+(in|into|on|to|under|inside)\b
        | \b(create|add|make|write|open|build|use|need)\s+(one|ones)\s*([.,;!]|$)
        | 它们?|(这个|那个|这样|那样|这些|那些)\s*([。，！,.!；]|$|(吧|了|呀|啊))
        | (这个|那个)\p{Han} | (^|[，,。；])\s*(这|那)是
        | ^(这个|那个)
    ")
});

/// `it` in set phrases that point at nothing ("make it short", "keep it simple", "it's
/// fine"): not a pronoun to resolve.
static DUMMY_IT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(keep|make)\s+it\s+(short|simple|brief|concise|small|tidy|clean|minimal|readable|terse)\b|\bit's\s+(fine|ok|okay)\b|\bif\s+it\b|\bit('s|\s+is)\s+`|(这个|那个)(仓库|项目|代码库|工程|目录|分支|服务|模块|接口|库|包)",
    )
});

/// Named things of `text`: backticked values and URLs, then paths and commands written without them.
pub(crate) fn named_things(text: &str) -> Vec<String> {
    static TICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\n]{1,160})`"));
    static PATH: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?:^|\s)((?:\.{0,2}/)?[\w.-]+/(?:[\w.-]+/?)*|[\w-]+\.(?:toml|json|ya?ml|lock|md|cfg|ini|env|txt|sh|py|rs|ts|js))(?:[\s,.;:!?，。；：！？、）)]|$)",
        )
    });
    let mut out: Vec<String> = TICKED
        .captures_iter(text)
        .map(|c| format!("`{}`", &c[1]))
        .collect();
    out.extend(super::text::urls(&TICKED.replace_all(text, "")));
    // An environment assignment or a URL of another scheme ("DATABASE_URL=mysql://…").
    static ASSIGNED: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b[A-Z][A-Z0-9_]{2,}=\S+|\b[a-z][a-z0-9+.-]*://\S+"));
    let unticked = TICKED.replace_all(text, "");
    for m in ASSIGNED.find_iter(&unticked) {
        let value = m.as_str().trim_end_matches(['.', ',', ';']);
        if !out
            .iter()
            .any(|o| value.contains(o.as_str()) || o.contains(value))
        {
            out.push(value.to_owned());
        }
    }
    if out.is_empty() {
        out = PATH
            .captures_iter(text)
            .map(|c| c[1].trim_end_matches('.').to_owned())
            .filter(|p| !p.contains("://") && p.len() > 2)
            .collect();
    }
    out.dedup();
    out
}

/// Whether `clause` leans on a pronoun for its subject or object: a pronoun ("it", "them", a
/// bare "this"/"that", "create one", 它, 这个 + a noun, 这是), or a demonstrative as the object
/// of a verb pointing back ("run that before you push", "never use that flag"; not before a
/// colon, nor "this repo").
pub fn has_pronoun(clause: &str) -> bool {
    let without = DUMMY_IT.replace_all(clause, "");
    // "从 typing 里 import List、Dict 这些": 这些 / 那些 right after the things it sums up
    // (a name in ASCII) points at nothing outside the clause.
    let without = SUMMING_UP.replace_all(&without, "$1");
    PRONOUN.is_match(&without) || points_out(&without)
}

/// A Chinese demonstrative summing up the names just before it (`List、Dict 这些`,
/// `pg_isready、curl 这种`).
static SUMMING_UP: LazyLock<Regex> =
    LazyLock::new(|| re(r"([A-Za-z0-9_\])`]\s*)(这些|那些|这种|这类|这样的)"));

/// English nouns for the project itself (after "this", "our", "in this …"): "this repo" names
/// the scope, it points at nothing. Shared with mem-auto's scope words.
pub const PROJECT_NOUNS: &[&str] = &[
    "project",
    "repo",
    "repository",
    "codebase",
    "workspace",
    "monorepo",
];

/// Verbs of what the agent does, before a demonstrative object ("use that flag").
static DEMONSTRATIVE_OBJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(use|uses|run|runs|do|try|call|pass|apply|keep|skip|avoid|remove|touch|set|put|add|drop|push|commit|install|include|enable|disable)\s+(that|this|these|those)\b(\s+([\w-]+))?",
    )
});

/// Whether a demonstrative is the object of a verb and points back at something outside the
/// clause ("run that before you push", "never use that flag", "don't touch those files"): the
/// thing is named in an earlier turn or a tool call, if anywhere. Not when a colon follows it
/// (it points forward: "always do this before committing: run the formatter"), nor before a
/// noun naming the scope ("this repo", "this app"; [`DUMMY_IT`] has the Chinese forms). As a
/// subject ("that dep is a leftover, the db has been postgres 15 …") it is not counted: it
/// often opens a clause whose fact is elsewhere.
fn points_out(clause: &str) -> bool {
    // The project itself, and what else "this" names as a whole rather than points at.
    const OTHER_WHOLES: &[&str] = &[
        "team",
        "company",
        "org",
        "app",
        "application",
        "service",
        "site",
        "library",
        "package",
        "crate",
        "tool",
        "game",
    ];
    let whole = |noun: &str| {
        let noun = noun.to_lowercase();
        PROJECT_NOUNS.contains(&noun.as_str()) || OTHER_WHOLES.contains(&noun.as_str())
    };
    DEMONSTRATIVE_OBJECT.captures_iter(clause).any(|c| {
        let forward = clause[c.get(0).map_or(0, |m| m.end())..].contains([':', '：']);
        !forward && c.get(4).is_none_or(|noun| !whole(noun.as_str()))
    })
}

/// Whether `clause` goes on from a clause before it and says nothing alone: it opens with
/// "which", "whereas", "hence" or "thus" ("which breaks the build"), or it is a
/// report of what was done worded as a rule, `always`/`never` before a past tense at its start,
/// after a pronoun subject opening it, or after "because"/"since" and a pronoun ("never created
/// the migration", "it always worked before", "failed because you never created it"); a rule
/// takes the base form, and "keep PRs small, as we always discussed" stays one.
pub fn leans_on_context(clause: &str) -> bool {
    static OPENS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^(which|whereas|hence|thus)\b[\s,]"));
    static PAST: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)(?:^(?:please\s+)?|^(?:you|we|i|it|they|he|she)\s+|\b(?:because|since)\s+(?:you|we|i|it|they|he|she)\s+)(?:always|never)\s+([a-z]+ed)\b",
        )
    });
    /// Base forms ending in "ed": "never embed secrets" is a rule.
    const BASE_ED: &[&str] = &["embed", "shed", "shred", "wed"];
    let clause = clause.trim();
    OPENS.is_match(clause)
        || PAST.captures(clause).is_some_and(|c| {
            let verb = c[1].to_lowercase();
            !verb.ends_with("eed") && !BASE_ED.contains(&verb.as_str())
        })
}

/// The clause with its first pronoun replaced by the one named thing of `context` (the clauses
/// before it, then the previous turn, in that order of preference; a later pronoun then has its
/// antecedent in the statement); the clause as is without a pronoun; `None` when there is a pronoun and not exactly one named thing to stand for it.
pub fn resolve_pronouns(clause: &str, contexts: &[&str]) -> Option<String> {
    if !has_pronoun(clause) {
        return Some(clause.to_owned());
    }
    // A clause naming its one thing itself leans on nothing ("`legacy/`: never touch it").
    if named_things(clause).len() == 1 {
        return Some(clause.to_owned());
    }
    // A pronoun after a clause of its own that names a thing ("the service talks to Stripe
    // through the stripe-rust crate, we pin it to 0.26"): its antecedent is in the statement.
    if antecedent_before_pronoun(clause) {
        return Some(clause.to_owned());
    }
    // "use this command for tests": of several things named, the one command (a backticked
    // span with a space in it) is what "this command" stands for.
    static COMMAND_PRONOUN: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\b(this|that)\s+(command|invocation|command\s+line)\b"));
    let mut referent = None;
    for context in contexts {
        match named_things(context).as_slice() {
            [] => continue,
            [one] => {
                referent = Some(one.clone());
                break;
            }
            many if COMMAND_PRONOUN.is_match(clause) => {
                let mut commands = many
                    .iter()
                    .filter(|t| t.starts_with('`') && t.trim_matches('`').contains(' '));
                match (commands.next(), commands.next()) {
                    (Some(command), None) => {
                        referent = Some(command.clone());
                        break;
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    let referent = referent?;
    static REPLACEABLE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\b(it|them|this|that|these|those)\b|它们?|这个|那个"));
    // The first pronoun only: a later one now has its antecedent inside the statement ("Never
    // touch legacy/, it is dead code.").
    // "that's how tests run" → "`X` is how tests run", not "`X`'s how".
    static IS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^(this|that|it)'s\b"));
    let clause = IS.replace(clause, "$1 is");
    if COMMAND_PRONOUN.is_match(&clause) {
        return Some(
            COMMAND_PRONOUN
                .replacen(&clause, 1, regex::NoExpand(&referent))
                .into_owned(),
        );
    }
    let replaced = REPLACEABLE
        .replacen(&clause, 1, referent.as_str())
        .into_owned();
    Some(replaced)
}

/// The part of `clause` before the comma that precedes its first pronoun, as a statement of its
/// own, when that part holds four words or more and no pronoun ("Never leave TODO placeholders
/// in code you hand me, finish it or tell me what's missing." → "Never leave TODO placeholders
/// in code you hand me."); `None` otherwise. The caller keeps it only when it is a rule itself.
pub fn before_unresolved_pronoun(clause: &str) -> Option<String> {
    let without = DUMMY_IT.replace_all(clause, "");
    let at = PRONOUN.find(&without)?.start();
    // The same byte offsets in `clause` only when nothing was taken out before the pronoun.
    if clause.get(..at) != without.get(..at) {
        return None;
    }
    let head = clause[..at]
        .rfind([',', '，'])
        .map(|i| &clause[..i])?
        .trim();
    if head.split_whitespace().count() < 4 || has_pronoun(head) {
        return None;
    }
    let cjk = !head.is_ascii();
    Some(format!("{head}{}", if cjk { '。' } else { '.' }))
}

/// The instruction after ", so" when only the reason before it leans on a pronoun ("that's
/// the setting in this repo, so keep lines under 120 here" → "keep lines under 120 here."); `None`
/// otherwise. The caller keeps it only when it is a rule itself.
pub fn after_unresolved_reason(clause: &str) -> Option<String> {
    let (reason, rest) = clause.split_once(", so ")?;
    let rest = rest.trim();
    if !has_pronoun(reason) || has_pronoun(rest) || !CLAUSE_START.is_match(rest) {
        return None;
    }
    let body = rest.trim_end_matches(['.', '!']);
    Some(format!("{body}."))
}

/// Whether the first pronoun of `clause` (English) comes after six words or more holding a
/// noun phrase ("the stripe-rust crate", a named thing, a capitalised name) and a clause break
/// (a comma or "and"): the pronoun points back into the statement.
fn antecedent_before_pronoun(clause: &str) -> bool {
    static NOUN_PHRASE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i:\b(the|a|an|our|their))\s+[\w-]+|`[^`]+`|\s[A-Z][a-z]+"));
    let without = DUMMY_IT.replace_all(clause, "");
    // The pronoun `has_pronoun` sees (not "that" as a conjunction).
    let Some(m) = PRONOUN.find(&without) else {
        return false;
    };
    let before = &without[..m.start()];
    before.is_ascii()
        && before.split_whitespace().count() >= 6
        && (before.contains(',') || before.contains(" and "))
        && (NOUN_PHRASE.is_match(before) || !named_things(before).is_empty())
}

/// Words after "no" that name no thing to prohibit ("no need", "no problem", "no idea", "no
/// errors"): "no X" with one of them is no rule.
pub(crate) const NOT_THINGS: &[&str] = &[
    "need",
    "problem",
    "problems",
    "worries",
    "idea",
    "way",
    "thanks",
    "rush",
    "luck",
    "change",
    "changes",
    "difference",
    "one",
    "longer",
    "matter",
    "wait",
    "it",
    "that",
    "this",
    "i",
    "we",
    "you",
    "the",
    "not",
    "more",
    "issue",
    "issues",
    "errors",
    "error",
    "big",
    "clue",
    "doubt",
    "time",
];

/// Interjections: sounds and acknowledgements that are no words of a statement.
const INTERJECTIONS: &[&str] = &[
    "hm", "hmm", "hmmm", "uh", "um", "umm", "ah", "oh", "eh", "ugh", "meh", "huh", "welp", "lol",
    "ok", "okay", "k", "yeah", "yep", "yup", "nope",
];

/// A fragment: no verb-and-object left ("never spend time.", "中文。"), fewer than 3 words
/// (or 4 CJK characters) of content.
pub fn is_fragment(clause: &str) -> bool {
    // Interjections ("hm", "ugh", "ok") carry no content: "hm, not now." is two words.
    let content: Vec<&str> = clause
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | '.' | ';' | ':' | '!' | '。' | '，')
        })
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .filter(|w| !INTERJECTIONS.contains(&w.to_lowercase().as_str()))
        .collect();
    // A deferral ("not now", "not yet, maybe later", "not today"): an answer to an offer,
    // never a rule.
    static DEFERRAL: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?i)^(?:no\W+)?not\s+(?:now|yet|today|right\s+now|for\s+now|this\s+time)\b")
    });
    if content.len() <= 5 && DEFERRAL.is_match(&content.join(" ")) {
        return true;
    }
    // The contrast tail of a sentence split off on its own ("not manage.py test in this
    // repo."): its verb is in the clause before it, so it says nothing alone. Short and
    // without a clause after it: "Not Docker: we deploy with systemd." and "Not a fan of
    // mocks, use the real database" go on with a statement of their own.
    static CONTRAST_TAIL: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(?:(?:and|but|or)\s+)?not\s+([\w`'.-]+)"));
    const NOT_A_TAIL: &[&str] = &[
        "only",
        "just",
        "to",
        "all",
        "every",
        "everything",
        "sure",
        "now",
        "yet",
        "today",
    ];
    let body = clause.trim().trim_end_matches(['.', '!', '。', '！']);
    if let Some(next) = CONTRAST_TAIL.captures(body).and_then(|c| c.get(1))
        && !NOT_A_TAIL.contains(&next.as_str().to_lowercase().as_str())
        && content.len() <= 8
        && !body.contains([',', ':', ';', '，', '：', '；'])
    {
        return true;
    }
    let cjk = clause
        .chars()
        .filter(|c| !c.is_ascii() && c.is_alphanumeric())
        .count();
    // An adverb with a scope but no verb ("Always, for all my projects.", "never in prod"):
    // the verb and its object are in an earlier turn.
    static ADVERB_ONLY: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^(always|never|usually|everywhere|sure|yes|yeah|ok|okay)\s*([,;:!—–-]+\s*|\s+(for|in|on|with|at|across)\b)",
        )
    });
    // "No semicolons.", "No mocks, ever.": a prohibition of a thing is whole in two words.
    static NO_THING: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^no\s+[\w`'./-]{3,}"));
    let prohibition = content.len() == 2
        && NO_THING.is_match(clause.trim())
        && !NOT_THINGS.contains(&content[1].to_lowercase().as_str());
    (content.len() < 3 && cjk < 4 && !prohibition) || ADVERB_ONLY.is_match(clause.trim())
}

/// Complaints without a rule ("你每次回答都太长了。", "your answers are way too long"): no
/// instruction word, only a judgement.
pub fn is_complaint(clause: &str) -> bool {
    static JUDGEMENT: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?xi)
            太\S{1,6}了 | 很烦 | 烦死 | 受不了
            | \b(too|so|way\ too|really)\s+(long|verbose|wordy|slow|short|much|many|noisy|chatty|annoying)\b
            | \bis\ annoying\b | \bi\ hate\ (it|that|when)\b
        ")
    });
    static RULE: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?xi)
            \b(should|must|keep|make|use|don't|do\ not|never|always|stop|avoid|write|answer|reply|limit|at\ most|under|no\ more\ than|assume|prefer|put|give|add|include|drop|skip|remove|only|when\ you|whenever\ you|from\ now\ on)\b
            | 应该|要|请|不要|别|控制在|不超过|以内|保持|只写|只用
        ")
    });
    JUDGEMENT.is_match(clause) && !RULE.is_match(&JUDGEMENT.replace_all(clause, ""))
}

/// A message opening with a confirmation and going on ("right, and we don't bump it", "yes —
/// also …", "对，另外…"): it confirms what the assistant just said; not when it goes on with
/// "but", "no", "not", 但, 不.
pub fn opens_with_confirmation(text: &str) -> bool {
    static OPENS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?xi)
            ^(yes|yep|yeah|yup|right|correct|exactly|that's\ right|that's\ correct)[,.!—–-]*\s+please\b[,.!—–-]*\s*(and\ |also\ |plus\ )?
            | ^(yes|yep|yeah|yup|right|correct|exactly|that's\ right|that's\ correct)[,.!—–-]+\s*(and\ |also\ |plus\ )?
            | ^(yes|yep|yeah|yup)\ (that's\ (right|correct|it)|exactly|correct)[,.!—–-]+\s*(and\ |also\ |plus\ )?
            | ^(对|对的|没错|是的)[，,。！!]\s*(而且|另外|并且)?
        ")
    });
    static BUT: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)^(but|no|not|though|however|except|但|不|可是)"));
    match OPENS.find(text.trim()) {
        Some(m) => {
            let rest = text.trim()[m.end()..].trim_start();
            !rest.is_empty() && !BUT.is_match(rest)
        }
        None => false,
    }
}

/// A confirmation of what the assistant said: "yes, exactly", "correct", "对", "没错".
pub fn is_confirmation(text: &str) -> bool {
    static CONFIRM: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?xi)
            ^(yes|yep|yeah|yup|correct|exactly|right|that's\ right|that's\ correct|that\ is\ correct|indeed|precisely|confirmed|spot\ on|you\ got\ it)
             ([\s,.!]+(exactly|correct|that's\ (exactly\ )?(right|correct|it)|exactly\ (right|it)|right|indeed|precisely|yes|please|spot\ on|you\ got\ it))*[\s.!]*$
            | ^(对|对的|是的|没错|正确|就是这样|对，就是这样|是的，没错|对，没错|嗯，对)[。！!.]*$
        ")
    });
    CONFIRM.is_match(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_never_end_inside_a_value() {
        for (text, parts) in [
            (
                "The staging password is `hunter! two` when you call the release API. Use it.",
                &[
                    "The staging password is `hunter! two` when you call the release API.",
                    "Use it.",
                ][..],
            ),
            (
                "Set the banner to \"Done! Ship it.\" in the footer. Thanks!",
                &[
                    "Set the banner to \"Done! Ship it.\" in the footer.",
                    "Thanks!",
                ],
            ),
            (
                "Docs: https://x.dev/a.b!c/d. More later.",
                &["Docs: https://x.dev/a.b!c/d.", "More later."],
            ),
            ("以后用 uv。不要用 pip！", &["以后用 uv。", "不要用 pip！"]),
            ("Use tabs. Never spaces", &["Use tabs.", "Never spaces"]),
        ] {
            assert_eq!(sentences(text), parts, "{text}");
        }
    }

    #[test]
    fn compound_statements_split_into_one_fact_each() {
        for (sentence, parts) in [
            (
                "Chinese to me, English in code comments.",
                &["Chinese to me", "English in code comments."][..],
            ),
            (
                "Use tabs in Go files; spaces in YAML.",
                &["Use tabs in Go files", "spaces in YAML."],
            ),
            (
                "Always rebase, and never push to main directly.",
                &["Always rebase", "never push to main directly."],
            ),
            (
                "Use ruff for linting and always run mypy before a commit.",
                &["Use ruff for linting", "always run mypy before a commit."],
            ),
            (
                "回复我用中文，代码注释用英文。",
                &["回复我用中文", "代码注释用英文。"],
            ),
            (
                "提交前跑测试；不要直接推 main。",
                &["提交前跑测试", "不要直接推 main。"],
            ),
            ("以后都用 uv，不要用 pip。", &["以后都用 uv，不要用 pip。"]),
        ] {
            assert_eq!(split_clauses(sentence), parts, "{sentence}");
        }
    }

    #[test]
    fn the_instruction_after_a_reason_leaning_on_a_pronoun_stands_alone() {
        assert_eq!(
            after_unresolved_reason(
                "that's the setting in this repo, so keep lines under 120 here, not 88"
            )
            .as_deref(),
            Some("keep lines under 120 here, not 88.")
        );
        // A reason without a pronoun keeps the statement whole (the caller never asks); an
        // instruction leaning on the reason, or no instruction, gives nothing.
        assert!(after_unresolved_reason("tests are slow, so run them in parallel").is_none());
        assert!(after_unresolved_reason("that's slow, so it times out").is_none());
        assert!(after_unresolved_reason("that's it, so we are done").is_none());
    }

    #[test]
    fn demonstrative_objects_and_continuations_lean_on_context() {
        for clause in [
            "Never use that flag.",
            "Run that before you push anything.",
            "don't touch those files",
            "that's how tests run in this project.",
            "Don't create one.",
            "好，这个项目以后跑测试都带上这个参数。",
        ] {
            assert!(has_pronoun(clause), "{clause}");
        }
        for clause in [
            // "this repo" names the scope; `thiserror` is a word of its own.
            "Use this repo's formatter settings.",
            "Use thiserror in libraries.",
            "Make sure that the tests pass before you push.",
        ] {
            assert!(!has_pronoun(clause), "{clause}");
        }
        for clause in [
            "Never created the migration.",
            "always worked before",
            "which breaks the build",
            "Hence the retry.",
        ] {
            assert!(leans_on_context(clause), "{clause}");
        }
        for clause in [
            "Never embed secrets in the image.",
            "Always proceed without asking.",
            "Never push to main.",
            "So we deploy on Fridays.",
        ] {
            assert!(!leans_on_context(clause), "{clause}");
        }
        // A resolved "that's" reads "X is".
        assert_eq!(
            resolve_pronouns("that's how tests run here.", &["run `make unit`"]).as_deref(),
            Some("`make unit` is how tests run here.")
        );
    }

    #[test]
    fn contrasts_values_and_reasons_are_never_split() {
        for sentence in [
            "Tests live in internal/ and run with go test.",
            "The API server reads config.toml and writes logs to /var/log/app.",
            "Use uv, not pip.",
            "Use uv, never pip.",
            "Prefer `a; b` in the shell, because it is shorter.",
            "Set `PASS=x;y,always z` before you deploy.",
            "The docs are at https://x.dev/a;b,always/c for the API.",
            "Run \"make test; make lint\" before pushing.",
            "Put configs in conf/a,always/b.toml please.",
            "不是 npm，而是 pnpm。",
            "Tests are slow, so run them in parallel.",
            "When you fix a bug, add a regression test first.",
            "To run the app locally, use `make dev`.",
            "From now on, always answer in English.",
            "不要用 var，一律用 const 或 let。",
            "Never use npm, always use pnpm.",
            "写前端代码的时候别用 var，一律用 const 或 let。",
        ] {
            assert_eq!(split_clauses(sentence), [sentence], "{sentence}");
        }
    }

    #[test]
    fn rewrites_the_common_forms_into_statements() {
        for (clause, fact) in [
            ("no, don't use pip", "Don't use pip."),
            ("No, use pnpm instead of npm.", "Use pnpm instead of npm."),
            (
                "actually, the API lives in `svc/api`",
                "The API lives in `svc/api`.",
            ),
            ("use uv, never pip", "Use uv, not pip."),
            (
                "Remember that commit messages are in English.",
                "Commit messages are in English.",
            ),
            ("I prefer tabs", "I prefer tabs."),
            (
                "we use `make ci` for checks",
                "We use `make ci` for checks.",
            ),
            ("记住，提交信息用英文", "提交信息用英文。"),
            (
                "不对，项目是 Python 而不是 Go。",
                "项目是 Python 而不是 Go。",
            ),
            ("以后提交信息用英文", "以后提交信息用英文。"),
            ("不要用 npm", "不要用 npm。"),
            (
                "Deploy with `fly deploy --remote-only`",
                "Deploy with `fly deploy --remote-only`.",
            ),
        ] {
            assert_eq!(rewrite(clause).as_deref(), Some(fact), "{clause}");
        }
        for clause in ["no.", "ok!", "记住。", "actually,"] {
            assert_eq!(rewrite(clause), None, "{clause}");
        }
    }

    #[test]
    fn pronouns_resolve_to_one_named_thing_or_drop() {
        // Unresolvable: no named thing, or more than one.
        for (clause, context) in [
            ("Never spend time on it.", "The flaky test keeps failing."),
            ("Always do that.", "I can rerun the suite or skip it."),
            ("记住这个。", "好的，我会按你说的做。"),
            (
                "Use it everywhere.",
                "Either `black` or `ruff format` works.",
            ),
            ("不要再用那个。", "我用了一个新的库。"),
        ] {
            assert_eq!(resolve_pronouns(clause, &[context]), None, "{clause}");
        }
        // One named thing: a backticked value, a path.
        assert_eq!(
            resolve_pronouns("Always use it for formatting.", &["I ran `ruff format`."]).as_deref(),
            Some("Always use `ruff format` for formatting.")
        );
        assert_eq!(
            resolve_pronouns("Don't touch it.", &["legacy/ is dead code", ""]).as_deref(),
            Some("Don't touch legacy/.")
        );
        assert_eq!(
            resolve_pronouns(
                "Never touch it, it is dead code.",
                &["There is a legacy/ folder."]
            )
            .as_deref(),
            Some("Never touch legacy/, it is dead code.")
        );
        // The antecedent is in the statement, before the pronoun: as is.
        let c =
            "The billing service talks to Stripe through the stripe-rust crate, we pin it to 0.26.";
        assert_eq!(resolve_pronouns(c, &[]).as_deref(), Some(c));
        // The clause names its one thing itself (a URL here): as is.
        let c = "The API reference is at https://x.dev/api — check it first.";
        assert_eq!(resolve_pronouns(c, &[]).as_deref(), Some(c));
        // No pronoun, or "it" in a set phrase: as is.
        for clause in [
            "Keep it short in commit messages.",
            "Use tabs.",
            "Remember that tests live in tests/.",
        ] {
            assert_eq!(resolve_pronouns(clause, &[]).as_deref(), Some(clause));
        }
    }

    #[test]
    fn fragments_complaints_and_confirmations() {
        for t in [
            "Never mind.",
            "中文。",
            "English only",
            "Always, for every service we own.",
            "never in prod",
            "not manage.py test in this repo.",
            "but not the staging cluster",
        ] {
            assert!(is_fragment(t), "{t}");
        }
        for t in [
            "Use tabs in Go.",
            "提交信息用英文。",
            "Always use tabs.",
            "Never commit to main.",
            "Not just tests: run the linter too.",
            "not to be used for secrets: the .env.example file",
            "Not Docker: we deploy with systemd.",
            "Not `npm`: this repo uses pnpm.",
            "Not a fan of mocks, use the real database in tests.",
        ] {
            assert!(!is_fragment(t), "{t}");
        }
        for t in [
            "你每次回答都太长了。",
            "Your answers are way too long.",
            "This is so slow",
        ] {
            assert!(is_complaint(t), "{t}");
        }
        for t in [
            "Your answers are too long, keep them under 10 lines.",
            "回答太长了，控制在五行以内。",
            "Always use tabs.",
        ] {
            assert!(!is_complaint(t), "{t}");
        }
        for t in [
            "yes, exactly",
            "Correct.",
            "对",
            "没错。",
            "yep, that's right",
        ] {
            assert!(is_confirmation(t), "{t}");
        }
        for t in ["yes, but use pnpm", "ok", "对了，另外", "correct the typo"] {
            assert!(!is_confirmation(t), "{t}");
        }
        for t in [
            "right, and we don't bump it without asking",
            "yes, also keep the old name",
            "对，另外测试也要跑",
        ] {
            assert!(opens_with_confirmation(t), "{t}");
        }
        for t in [
            "yes, but use pnpm",
            "right",
            "correct the typo",
            "yeah no, that's wrong",
        ] {
            assert!(!opens_with_confirmation(t), "{t}");
        }
    }
}
