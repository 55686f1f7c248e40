//! Project knowledge (issue 26 build 3): a statement is read as a fact of the project when it
//! names a **value** of the project and speaks of a **project topic**, as a standing statement
//! rather than a task, a report of what just happened, or a one-off.
//!
//! - values: a backticked span, a path or config file, a dotfile, a version (`3.12`, `node 20`,
//!   `iOS 16+`), a percentage, a time of day, an identifier with digits (`eu-west-1`), a
//!   developer tool by name (`make`, `pnpm`, `kubectl`, `mypy`...), a branch after
//!   `into`/`against`/`from`/`off`; in a Chinese sentence, any ASCII term;
//! - topics: CI and checks, build/test/lint/format, deploy/release/tag/publish, branches and
//!   merges, versions and platforms, generated/vendored/dead code, config and environment,
//!   migrations and schema, docs, environments (staging, prod, cluster, region), where things
//!   live; and their Chinese words (构建, 部署, 发布, 分支, 覆盖率, 别改...);
//! - not knowledge: a task (an imperative without a standing marker such as `always`, `every`,
//!   `before each`, `to start`), a one-off (`for now`, `just this once`, 这次, 暂时), a status
//!   report (`is broken`, `failed`, 挂了), an event the speaker reports (`I upgraded…`).

use std::sync::LazyLock;

use regex::Regex;

use super::text::han_count;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
}

/// Values a project fact names (see the module doc).
static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        `[^`]+`
        | (?:^|[\s(])(?:\.{1,2}/|~/|/)?[\w.-]+/[\w./-]*
        | \b[\w-]+\.(?:toml|json|ya?ml|lock|cfg|ini|env|conf|xml|gradle|md|sh|py|rs|ts|js|go|sql|tf|proto)\b
        | (?:^|\s)\.[a-z][\w.-]+
        | \b\d+(?:\.\d+)+\b | \b\d+\.x\b | \d+\s*% | \b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b
        | \bports?\s+\d{2,5}\b
        | \b[a-z]+(?:[-_][a-z0-9]+)*[-_]\d+[a-z]?\b
        | \b(?:make|just|npm|pnpm|yarn|bun|npx|cargo|pytest|mypy|ruff|black|isort|flake8|eslint|prettier|tsc|vitest|jest|playwright|cypress|docker|docker-compose|kubectl|helm|terraform|ansible|gh|poetry|uv|pipenv|tox|nox|pre-commit|gradle|mvn|bazel|nx|turbo|alembic|prisma|flyway|sqlx|diesel|rspec|rake|dotnet|xcodebuild|fastlane|mdbook|sphinx|mkdocs|clippy|rustfmt|gofmt|golangci-lint|buf|protoc|argo|argocd|fly|vercel|netlify|heroku|wrangler|pulumi|storybook|webpack|vite|esbuild|goreleaser|changesets|semantic-release|nextest|codegen)\b
        | \b(?:into|against|from|off|onto)\s+`?(?:main|master|develop|dev|trunk|staging|release[\w/.-]*)\b
        | \b(?:main|master|develop|trunk)\s+branch\b
        | (?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)
    ")
});

/// A runtime, platform or tool with its version (`python 3.9`, `node 20`, `iOS 16+`): a value
/// and a topic (versions and platforms) at once.
static RUNTIME_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(?:node|python|py|go|golang|rust|java|jdk|ruby|php|postgres(?:ql)?|mysql|redis|ios|android|macos|ubuntu|debian|windows|react|vue|django|rails|kotlin|swift|xcode|k8s|kubernetes|pnpm|npm|yarn|dotnet|\.net)\s*v?\d+(?:\.\d+)*\+?(?:\s|$|[,.;:)])
    ")
});

/// A named product and its dotted version ("Godot 4.2", "Unity 2022.3", "Postgres 16.1"); the
/// name is captured so that numbered parts of a document ("Section 4.2") can be told apart.
static PRODUCT_VERSION: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b([A-Z][a-zA-Z]{2,})\s+v?\d+\.\d+(?:\.\d+)?\+?(?:\s|$|[,.;:)])"));

/// Capitalised words before a dotted number that are parts of a text, not products.
const NOT_PRODUCTS: &[&str] = &[
    "section",
    "chapter",
    "figure",
    "table",
    "step",
    "page",
    "version",
    "line",
    "phase",
    "part",
    "item",
    "rule",
    "issue",
    "sprint",
    "appendix",
    "article",
    "clause",
    "equation",
    "listing",
    "option",
    "level",
    "stage",
    "task",
    "ticket",
    "milestone",
    "release",
];

/// Whether `text` names a runtime or product with its version ([`RUNTIME_VERSION`],
/// [`PRODUCT_VERSION`]).
fn names_runtime_version(text: &str) -> bool {
    RUNTIME_VERSION.is_match(text)
        || PRODUCT_VERSION
            .captures_iter(text)
            .any(|c| !NOT_PRODUCTS.contains(&c[1].to_lowercase().as_str()))
}

/// ASCII terms inside a Chinese sentence (`tag`, `CI`, `pnpm`): values there.
static ASCII_TERM: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z][A-Za-z0-9_.+-]+|\d+%"));

/// Topics of project knowledge (see the module doc).
static TOPIC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(ci|pipeline|workflows?|github\ actions|gitlab\ ci|pre-commit|hooks?|checks?|coverage|lint(s|ed|er|ers|ing)?
          |format(s|ter|ted|ting)?|type-?check\w*|builds?|built|compil\w+|bundl\w+|tests?|suite|specs?|e2e
          |deploy\w*|releases?|released|releasing|ships?|shipped|publish\w*|tag(s|ged|ging)?|branch(es)?|merges?|merged
          |prs?|pull\ requests?|rebas\w+|squash\w*|versions?|pinned|pins?|supports?|supported|platforms?|compatib\w+
          |generated|regenerat\w+|codegen|dead\ code|vendored|legacy|deprecated|read-only|source\ of\ truth
          |configs?|configuration|settings|env\ vars?|environment\ variables?|migrations?|schema|docs|documentation
          |stack|locally|local\ dev|dev\ server|staging|prod|production|database|db|cluster|namespace|region|bucket
          |container|image|registry|nightly|lives?|located|stored|kept\ in|comes?\ from|root|toolchain|runtime
          |lockfile|monorepo|workspace|package\ manager|listens?\ on|port\ \d{2,5})\b
        | \.(env|toml|ya?ml|json|ini|cfg|conf|lock)\b
        | CI|流水线|覆盖率|检查|测试|构建|编译|打包|部署|上线|发布|分支|合并|版本|支持|平台|生成|别改|不要改|别动|不要动|不能改
        | 不要修改|废弃|遗留|配置|环境变量|迁移|文档|目录|数据库|端口|集群|镜像|触发|命令|脚本|工具链|依赖
    ")
});

/// An imperative opening a sentence: a task unless a standing marker or a statement is beside it.
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^(please\s+)?(run|use|call|put|keep|ignore|skip|try|start|stop|set|bump|copy|go|do|move|add|make|write|open|check|build|test|deploy|release|tag|merge|push|pull|install|update|upgrade|change|edit|delete|remove|rename|fix|revert|clean|create|ship|publish|lint|format|regenerate|generate|restart|reset|rerun|look|read|show|tell|give|send|post|commit)\b
        | ^(用|把|推|跑|执行|运行|改|加|删|装|打开|切到|切换到|帮)
    ")
});

/// What makes an imperative a standing rule: `always`, `never`, `every`, `before each`, a purpose
/// (`to start`), or a statement beside it ("ignore old_api/, it's dead code").
static STANDING: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(always|never|every|each|whenever|any\ time|by\ default|instead|don't|do\ not|otherwise)\b
        | \bbefore\ (every|each|any|all|pushing|merging|committing|releasing|deploying|a\ commit|a\ push|a\ release|a\ merge)\b
        | \bto\ (start|run\ it|get\ started|bootstrap|set\ (it\ )?up|develop\ locally)\b
        | \b(it's|it\ is|they're|they\ are|is|are|we)\b
        | 每次|总是|一律|都要|之前
    ")
});

/// Plans, wishes and hand-overs: what the speaker wants done, not how the project is ("we need
/// to migrate…", "I want…", "here's the deploy key", 我想, 我们要, 打算).
static PLAN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(i|we)\s+(want|wanna|need\ to|should|will|'ll|plan|are\ going\ to|'re\ going\ to|could|might)\b
        | \b(i'll|we'll|i'd\ like|we'd\ like)\b | ^(let's|lets|here's|here\ is|here\ are|attached)\b
        | ^(the\ |my\ |our\ )?next\ (task|step|thing|job|up)\b
        | ^(when|once|after)\b[^,]{0,80}\b(is|are|has\ been|have\ been)\s+(complete|completed|done|finished|merged|ready|over)\b.*\byou\s+(can|should|will)\b
        | \bread\s+(this|these|that|it)\b
        | 我想|我们要|我们需要|打算|准备|计划|帮我|帮忙|麻烦你|等.{1,12}再|再看看
        | \b(i|we)\ need\ (bump|fix|add|change|update|move|upgrade|downgrade|migrate|remove|rename|revert|deploy|release|merge|rewrite|refactor|split|switch|raise|lower|increase|decrease)\b
        | ^你先(在|把|去|试|跑|看|用|改|拿|关|开|删) | 看看效果|试试看
    ")
});

/// One-offs: true now or for this task only.
static ONE_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(for\ now|just\ this\ once|this\ once|for\ today|today|tonight|this\ time|temporarily|for\ the\ moment|until\ tomorrow|right\ now|just\ now
          |for\ this\ (task|pr|ticket|change|session|run|request|backfill|demo|release|migration|incident|hotfix|experiment)|until\ \w+|(this|next)\ (week|sprint|month)
          |(over|for|through)\ the\ weekend|just\ so\ (we|i|it)|not\ permanent(ly)?
          |monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b
        | (^|[\s(])(issue\ |pr\ |pull\ request\ |ticket\ )?\#\d{2,}\b
        | 这次|这一次|暂时|今天|先不|临时|刚才|一下|这周|本周|下周|周[一二三四五六日末]|星期[一二三四五六日天]
        | \d{1,2}\s*[号日](之前|以前|前|之后|为止|起)|(月底|月初|年底|年前|节前|节后|大促)(之前|以前|前)|封网|封版|冻结期
    ")
});

/// Whether `sentence` is bound to a time ("for today", "this time", "until friday", 这次,
/// 暂时): a one-off, and so is an instruction that goes on from it in the next sentence
/// ("… just compile with ./gradlew … after changes").
pub fn is_one_off(sentence: &str) -> bool {
    ONE_OFF.is_match(&sentence.to_lowercase())
}

/// Whether `lower` (a lowercased sentence) reports a status ([`STATUS`]) or names the problem
/// at hand ("the flaky test is in services/ledger"; "the failing build is always the cache" is
/// a standing fact all the same).
fn reports_status(lower: &str) -> bool {
    static PROBLEM_AT_HAND: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^the\ (flaky|failing|broken|failed|slow|crashing|hanging|buggy|offending|problematic)\ [\w-]+\ (is|was|are|were|lives|sits)\b",
        )
    });
    static STANDING_WORD: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(always|never|every|each|whenever|usually)\b"));
    STATUS.is_match(lower) || (PROBLEM_AT_HAND.is_match(lower) && !STANDING_WORD.is_match(lower))
}

/// Status reports: what happened, not how the project is.
static STATUS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        \b(is|are|was|were|'s)\s+(broken|failing|red|down|flaky|stuck|green|passing|done|finished)\b
        | ^status\b | \b(tests?|ci|build|checks?|pipeline|smoke\ tests?)\s+(are\s+|is\s+)?(green|red|passing|failing)\b
        | \b(won't|can't|cannot|doesn't|does\ not|isn't|fails\ to|failed\ to)\s+(start|work|connect|build|compile|run|load|boot|deploy)\b
        | \balready\s+(merged|deployed|done|fixed|pushed|released|shipped)\b
        | \b(failed|broke|crashed|passed|succeeded)\b
        | ^(i|i've|i'm|i\ just|we\ just)\b.*\b(ran|upgraded|changed|installed|deleted|pushed|merged|tried|updated|moved|saw|noticed|found|added|removed|fixed)\b
        | \b(still|keeps?)\s+(failing|broken|red|crashing|timing\ out|flaky)\b
        | \b(is|are|was|were|'s|'re)\s+still\s+[a-z]+ing\b
        | \b(keeps|kept)\s+([a-z]*[^h\s]ing|[a-z]*[^t\s]hing)\b
        | \b(goes|went|jumped|jumps|dropped|drops|rose|grew|fell)\ from\ \S*\d\S*\ to\ \S*\d
        | \b(is|are|'s|'re)\s+(taking|complaining|throwing|erroring|crashing|hanging|dying|timing\ out|restarting|flapping|leaking|spiking|acting\ up|blowing\ up)\b
        | \b(crashes|hangs|freezes|segfaults|dies)\s+(on|when|after|with|in|at|every|whenever|if)\b
        | \b(has|have|had|just|was|were)\s+(finished|completed)\b | \b(finished|completed)\s*[.!]?$
        | \b\d+\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?|days?|weeks?)\s+ago\b
        | \b(panics?|panicked|throws|threw|errors\ out|errored)\s+(when|on|if|with|after|because)\b
        | \b(stack\ ?trace|traceback|backtrace|log|output)\s+(below|above|attached)\b
        | (全|都)(过|通过|挂|失败)了|跑通了|报错了|挂掉了|不存在[。！!]?$
        | \bfails?\s+(on|with|at|in)\b | \bcrashloopbackoff\b | \booms?\b | \boom(ed|ing)\b
        | \b(returns?|returning|gives?|giving|throws?|throwing)\s+(an?\s+)?[45]\d\d\b
        | \b(isn't|aren't|wasn't|weren't|is\ not|are\ not)\s+being\b
        | \bsince\s+(around|about|yesterday|this\ morning|last\ night|noon|lunch|the\ deploy|the\ upgrade)\b
        | \b(is|are|that's|it's)\s+(missing|gone|blank)\b | \bon\ my\ (branch|pr|fork)\b
        | \b\d+\s+(tests?|specs?|checks?|examples?)\s+(fail|failed|failing|pass|passed)\b
        | \bafter\ (i|we)\ (just\ )?[a-z]+ed\b
        | \b(i|we)\ (just\ )?(ran|tried|bumped|reverted|deleted|pushed|merged|installed|upgraded|downgraded)\b
        | \bi\ (just\ |also\ )?(noticed|realized|realised)\b
        | \b(is|are|was|were|keeps?)\s+(giving|returning|showing|producing|printing|outputting|emitting|yielding|throwing|spitting\ out|generating|reporting)\b
        | \bthan\s+(it|they|this|that)\s+should\b
        | \b(started|stopped|began)\s+(to\s+)?(fail|failing|erroring|breaking|crashing|timing\ out|throwing|returning|hanging|flaking)\b
        | \bmy\s+(pr|mr|branch|change|commit|patch|diff|run|job|build)\s+(just\s+)?[a-z]+ed\b
        | 挂了|坏了|失败了|报错了|通过了|为什么|为啥|报\s*\S{0,8}\s*了|出错了|崩了|一直挂|还是挂|还在挂|一直失败|一直报错
        | 启动不了|连不上|打不开|卡住了|卡死了|被占了|被占用了
    ")
});

/// Whether `text` names a value of a project fact (see the module doc): a backticked span, a
/// path, a version, a tool... (or an ASCII term in Chinese text).
pub fn names_value(text: &str) -> bool {
    let text = &*without_home_paths(text);
    let cjk = han_count(text);
    names_runtime_version(text) || VALUE.is_match(text) || (cjk >= 4 && ASCII_TERM.is_match(text))
}

/// Values only one project has: a path, a config file or dotfile, a version, an identifier with
/// digits (`eu-west-1`), a branch, an environment (staging, prod, cluster, namespace), CI as
/// the subject, or a task the project defines (`` `make migrate` ``, `` `just test` ``, `npm run
/// build`, `cargo xtask`, `tox -e lint`: its recipe lives in the repository). A tool name alone (`ruff`, `pnpm`, `mypy`) is not one: "always run mypy before a
/// commit" is the user's habit, "never edit src/gen/" a fact of this project.
static PROJECT_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        (?:^|[\s(`])(?:\.{1,2}/|~/|/)?[\w.-]+/[\w./-]*
        | \b[\w-]+\.(?:toml|json|ya?ml|lock|cfg|ini|env|conf|xml|gradle|sql|tf|proto)\b
        | (?:^|\s)\.[a-z][\w.-]+
        | \b\d+(?:\.\d+)+\b | \b\d+\.x\b
        | \b[a-z]+(?:[-_][a-z0-9]+)*[-_]\d+[a-z]?\b
        | \b(?:into|against|from|off|onto)\s+`?(?:main|master|develop|dev|trunk|staging|release[\w/.-]*)\b
        | \b(?:main|master|develop|trunk)\s+branch\b
        | \b(?:staging|prod|production|cluster|namespace|ci|pipeline)\b
        | `(?:make|just|rake|mage|task|invoke)\s+[a-z][\w:.-]*
        | \b(?:npm|pnpm|yarn|bun)\s+run\s+[\w:.-]+ | \bcargo\s+xtask\b | \btox\s+-e\b | \bnox\s+-s\b
        | 分支|目录|环境|集群|流水线|CI
        | (?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b)
    ")
});

/// Whether a word is a path in the user's home (`~/dotfiles/x.json`, `$HOME/.config`,
/// `${HOME}/...`, quotes and backticks around it ignored): the user's own files, never a value of
/// one project, so a rule naming one stays the user's.
pub fn is_home_path(word: &str) -> bool {
    let w = word.trim_start_matches(['`', '"', '\'', '(']);
    w == "~" || w.starts_with("~/") || w.starts_with("$HOME") || w.starts_with("${HOME}")
}

/// `text` without the words that are paths in the user's home ([`is_home_path`]): such a path
/// is no value of the project, so it must not make a sentence project knowledge.
fn without_home_paths(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.split_whitespace().any(is_home_path) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.split_whitespace()
            .filter(|w| !is_home_path(w))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Whether `text` names a value only this project has (see `PROJECT_VALUE`; a path in the
/// user's home does not count, [`is_home_path`]) or a runtime version: what makes a rule worded as a preference ("never kubectl apply to prod") a fact of
/// the project rather than the user's habit.
pub fn names_project_value(text: &str) -> bool {
    let without_urls = text
        .split_whitespace()
        .filter(|w| !w.contains("://") && !is_home_path(w))
        .collect::<Vec<_>>()
        .join(" ");
    names_runtime_version(&without_urls) || PROJECT_VALUE.is_match(&without_urls)
}

/// Whether `text` is project knowledge naming a value only this project has: a standing rule
/// of this project ([`is_project_knowledge`] and [`names_project_value`]).
pub fn is_project_rule(text: &str) -> bool {
    is_project_knowledge(text) && names_project_value(text)
}

/// A line of pasted output: a timestamp, a prompt, a log level, a build tool's progress verb.
static LOG_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?xi)
        ^\s*(\[|\$\ |>\ |\#\d|\d{1,2}:\d\d(:\d\d)?|\d{4}-\d\d-\d\d)
        | ^\s*(running|detected|installing|installed|cloning|building|compiling|downloading|fetching|resolving|linking|collecting|error|warning|warn|info|debug|trace|fatal|npm\ err|err!|successfully|done\ in|finished|added\ \d+\ packages)\b
        | \bexited\ with\b | \bexit\ code\b | \bstatus\ code\b
    ")
});

/// Whether `line` is a list item or a markdown heading ("- x", "2) x", "## x").
pub fn is_structure_line(line: &str) -> bool {
    STRUCTURE.is_match(line)
}

/// Whether `text` (a whole message) is pasted output: three or more lines of it look like a log
/// (timestamps, prompts, log levels, progress verbs). Its lines are not the user's statements.
pub fn looks_like_log(text: &str) -> bool {
    text.lines().filter(|l| LOG_LINE.is_match(l)).count() >= 3
}

/// A line that is a list item or a markdown heading ("- x", "2) x", "## x").
static STRUCTURE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*([-*•]|\d{1,2}[.)]|#{1,6})\s+\S"));

/// Whether `text` (one user message) is a pasted document rather than something said: three
/// lines or more that are list items or markdown headings, or markdown bold used twice (a task
/// prompt written out, an analysis pasted back). Such a message may still hold the user's rules
/// (a list of preferences), but no fact of the project is read in it.
pub fn looks_like_document(text: &str) -> bool {
    text.lines().filter(|l| STRUCTURE.is_match(l)).count() >= 3 || text.matches("**").count() >= 4
}

/// Whether a written-out document ([`looks_like_document`]) is introduced as the user's rules
/// for the agent: the lines before its first list item or heading name rules, conventions,
/// preferences or a habit, or speak to the agent ("a few things I want you to always do:",
/// "my preferences:", 以后的规则：). A plan, a spec or a checklist pasted for the task ("here's
/// the plan from the checkout doc:") is not: the "always" and "never" in its items are
/// requirements of the work, not instructions to remember.
pub fn introduces_rules(text: &str) -> bool {
    static RULE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?xi)
            \b(rules?|conventions?|guidelines?|preferences?|prefer|habits?|style|how\ i\ work
               |i\ (like|want|need|expect)|you|your|always|never|from\ now\ on|going\ forward)\b
            | 规则|规范|约定|习惯|偏好|以后|你
        ")
    });
    let intro: Vec<&str> = text
        .lines()
        .take_while(|l| !STRUCTURE.is_match(l))
        .collect();
    RULE_WORDS.is_match(&intro.join(" "))
}

/// Whether `sentence` is a one-off, a status report, a reported event, a plan or hand-over, or a
/// log line (see the module doc): never a fact of the project, whatever its cue words.
pub fn is_event_or_task(sentence: &str) -> bool {
    // "CI fails on any warning": what a check does to every change, a rule of the project, not
    // a failure that happened.
    static FAILS_ON_ANY: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)\bfails?\s+(on|for|with)\s+(any|every|each)\b"));
    let lower = FAILS_ON_ANY
        .replace_all(&sentence.to_lowercase(), "rejects")
        .into_owned();
    let lower = lower.trim_start_matches(['-', '*', '>', ' ']);
    // A pasted error ("ImportError: cannot import …"), by its CamelCase name.
    static ERROR_NAME: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b[A-Z][A-Za-z]*(Error|Exception):\s"));
    ONE_OFF.is_match(lower)
        || ERROR_NAME.is_match(sentence)
        || reports_status(lower)
        || PLAN.is_match(lower)
        || LOG_LINE.is_match(lower)
}

/// Whether `sentence` (one sentence of what the user said, or an assistant statement the user
/// confirmed) states a fact of the project: a value, a topic, and a standing statement (see the
/// module doc). Questions, hedges and reported speech are judged before this, by the caller.
pub fn is_project_knowledge(sentence: &str) -> bool {
    let sentence = &*without_home_paths(sentence);
    let lower = sentence.to_lowercase();
    let lower = lower.trim_start_matches(['-', '*', '>', ' ']);
    let cjk = han_count(lower);
    let versioned = names_runtime_version(sentence);
    let value =
        versioned || VALUE.is_match(sentence) || (cjk >= 4 && ASCII_TERM.is_match(sentence));
    if !value || !(versioned || TOPIC.is_match(sentence)) {
        return false;
    }
    if ONE_OFF.is_match(lower) || reports_status(lower) || LOG_LINE.is_match(lower) {
        return false;
    }
    if PLAN.is_match(lower) {
        return false;
    }
    if IMPERATIVE.is_match(lower) && !HOW_TO_ZH.is_match(lower) {
        let rest = IMPERATIVE.replace(lower, "");
        return STANDING.is_match(&rest);
    }
    true
}

/// A Chinese how-to opening with its verb: "跑测试用 `pnpm test:unit`", "部署用 fly" ("to run the
/// tests, use …"): the verb names the task the value is for, so it is a statement, not a
/// request (as English "to run the tests, use …").
static HOW_TO_ZH: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(跑|运行|执行|启动|构建|编译|打包|部署|发布)[^，,。]{0,8}(用|要用|就用|得用|是)")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_facts_in_the_cue_classes_are_knowledge() {
        for s in [
            // CI rules
            "The pipeline runs `golangci-lint run` on every PR and blocks the merge.",
            "CI 会检查覆盖率，低于 80% 就会失败",
            // do-not-touch
            "ignore old_api/, it's dead code and gets deleted next quarter",
            "third_party/ 下面是别人的代码，别改",
            // a Chinese how-to opening with its verb
            "跑测试用 `pnpm test:unit`，集成测试要先起 docker",
            // release flow and branches
            "PRs go against `staging`, not main.",
            "We cut a release branch off develop and tag it there.",
            // versions and platforms
            "We have to keep python 3.9 working because of the lab machines.",
            "this app only ships for iOS 16+ and Android 12+",
            // commands, paths and config
            "to bring up the stack locally it's `docker compose up -d db` then `make dev`",
            "the logging config is in deploy/logging.yaml, not in the app settings",
            "copy .env.example to .env to start",
            "Run `make check` before every push.",
            "The PR template lives in `.github/pull_request_template.md`, fill it in.",
            "After the latest release the public API lives under /v2, see api/routes.py.",
        ] {
            assert!(is_project_knowledge(s), "{s}");
        }
    }

    #[test]
    fn tasks_one_offs_reports_and_plain_preferences_are_not() {
        for s in [
            "run `make lint` and tell me what it says",
            "for now put the scratch files in /tmp/exp1",
            "这次先不跑测试，直接 build 一下看看",
            "跑一下测试用 `pytest -x` 看看",
            "部署到 staging 之后首页报 500 了，帮我看看日志",
            "deploy freeze until friday, don't merge anything to main",
            "这周五之前不要往 main 合并任何东西，等发布完再说",
            "The build is broken again on main.",
            "i upgraded node to 22 on my laptop",
            "Always answer in English.",
            "I prefer short commit messages.",
            "Deploy the app to staging.",
            "Set the timeout to 30s for this request.",
            "here's the deploy key, put it in ~/.ssh/deploy_ed25519",
            "Detected Next.js version: 13.0.2",
            "Error: Command \"yarn run build\" exited with 1.",
            "we need to move the CI config to .github/workflows/ci.yml",
            "用这个 token 推送，推到 gitlab 的 release 分支。",
            "The test `test_totals` in `billing/tests/test_invoices.py` started failing after the last dependency bump.",
            "my PR touched `stg_payments` and CI built 11 models, I expected like 40",
            "`api/handlers.go` began timing out since the latest deploy",
        ] {
            assert!(!is_project_knowledge(s), "{s}");
        }
    }

    #[test]
    fn a_task_the_project_defines_is_a_project_value() {
        for t in [
            "migrations always go through `make migrate`, never run alembic by hand",
            "always use `just test`",
            "never skip npm run typecheck before pushing",
            "run cargo xtask ci before a PR",
        ] {
            assert!(names_project_value(t), "{t}");
        }
        // "make sure" and a tool alone name no task of the project.
        for t in [
            "make sure to always run mypy",
            "always use pnpm",
            "never run make by hand",
        ] {
            assert!(!names_project_value(t), "{t}");
        }
    }

    #[test]
    fn pasted_logs_are_not_statements() {
        let log = "Cloning github.com/me/site\n01:12:38.209\nRunning \"yarn run build\"\nDetected Next.js version: 13.0.2\nError: Command exited with 1";
        assert!(looks_like_log(log));
        assert!(!looks_like_log(
            "CI runs mypy --strict.\nThe docs are in docs/."
        ));
    }

    #[test]
    fn a_rule_is_the_projects_when_it_names_a_value_only_this_project_has() {
        for s in [
            "Never edit src/gen/ by hand, it is generated by `buf generate`.",
            "never kubectl apply to prod, deploys go through argo",
            "Always target node 20 in the build.",
        ] {
            assert!(is_project_rule(s), "{s}");
        }
        for s in [
            "Always use `ruff format` for formatting.",
            "Always run the tests with pytest -x before you say it is done.",
            "Use ruff for linting.",
        ] {
            assert!(!is_project_rule(s), "{s}");
        }
    }
}
