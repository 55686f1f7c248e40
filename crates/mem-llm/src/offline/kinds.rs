//! Kinds of tools: which tools do the same job in a project ("npm", "pnpm", "yarn" and "bun"
//! are package managers of JavaScript), and the words that name that job. An offline update
//! reads "We switched to pnpm." as a change of "Package manager: npm." through them: the new
//! tool takes the place of the old one of its kind, and names the job the entry is about (seed
//! 000 §3: an entry a later statement contradicts is replaced, not kept next to it).
//!
//! General vocabulary of the field, one tool in one kind only (a tool doing two jobs, such as
//! `ruff`, is left out: which one changed is not known), and no tool whose name is as often a
//! word or a person's name ("requests", "black", "linear", "render", Travis, Ava, Jasmine,
//! Winston). Tools are single lowercase words, as [`super::update::content_words`] reads them
//! (its plural stem applied: "postgres" is read as "postgre").

use std::collections::HashSet;

use super::update::stem;

/// One kind: the words naming its job, and its tools (aliases of one tool share a group,
/// separated by `|`: "postgres|postgresql").
struct Kind {
    job: &'static [&'static str],
    tools: &'static [&'static str],
}

const KINDS: &[Kind] = &[
    Kind {
        job: &["package", "manager"],
        tools: &["npm", "pnpm", "yarn", "bun"],
    },
    Kind {
        job: &["package", "manager"],
        tools: &["pip", "uv", "poetry", "pipenv", "conda", "pdm"],
    },
    Kind {
        job: &["build"],
        tools: &["maven|mvn", "gradle", "sbt", "bazel"],
    },
    Kind {
        job: &["bundler"],
        tools: &[
            "webpack",
            "vite",
            "rollup",
            "esbuild",
            "turbopack",
            "rspack",
        ],
    },
    Kind {
        job: &["unit", "test", "runner"],
        tools: &["jest", "vitest"],
    },
    Kind {
        job: &["e2e", "test"],
        tools: &[
            "cypress",
            "playwright",
            "selenium",
            "puppeteer",
            "webdriverio",
        ],
    },
    Kind {
        job: &["test", "runner"],
        tools: &["pytest", "unittest", "nose2"],
    },
    Kind {
        job: &["database"],
        tools: &[
            "postgres|postgresql",
            "mysql",
            "mariadb",
            "sqlite",
            "mongodb|mongo",
            "cockroachdb",
            "mssql",
            "dynamodb",
        ],
    },
    Kind {
        job: &["ci"],
        tools: &["jenkins", "circleci", "buildkite", "teamcity"],
    },
    Kind {
        job: &["formatter"],
        tools: &["prettier", "yapf", "autopep8", "dprint"],
    },
    Kind {
        job: &["linter"],
        tools: &[
            "eslint", "tslint", "pylint", "flake8", "rubocop", "oxlint", "jshint",
        ],
    },
    Kind {
        job: &["editor"],
        tools: &["vim", "neovim|nvim", "emacs", "vscode", "helix", "sublime"],
    },
    Kind {
        job: &["shell"],
        tools: &["bash", "zsh", "fish", "nushell"],
    },
    Kind {
        job: &["infra"],
        tools: &["terraform", "opentofu|tofu", "pulumi", "cloudformation"],
    },
    Kind {
        job: &["hosting"],
        tools: &["vercel", "netlify", "heroku"],
    },
    Kind {
        job: &["orm"],
        tools: &["prisma", "typeorm", "sequelize", "sqlalchemy"],
    },
    Kind {
        job: &["logging"],
        tools: &["logrus", "zerolog", "slog", "loguru", "pino"],
    },
    Kind {
        job: &["error", "tracking"],
        tools: &["sentry", "bugsnag", "rollbar"],
    },
    Kind {
        job: &["issue", "tracker"],
        tools: &["jira", "youtrack", "trello"],
    },
    Kind {
        job: &["queue"],
        tools: &["rabbitmq", "kafka", "sqs", "activemq"],
    },
    Kind {
        job: &["cache"],
        tools: &["redis", "memcached", "valkey"],
    },
    Kind {
        job: &["docs", "site"],
        tools: &["mkdocs", "docusaurus", "sphinx", "vitepress", "jekyll"],
    },
    Kind {
        job: &["state", "management"],
        tools: &["redux", "zustand", "mobx", "jotai"],
    },
    Kind {
        job: &["http", "client"],
        tools: &["axios", "httpx", "aiohttp", "reqwest"],
    },
];

/// The kind of each tool named in `words` (content words, stemmed), with the tool's group.
fn named(words: &HashSet<String>) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (k, kind) in KINDS.iter().enumerate() {
        for group in kind.tools {
            if group.split('|').any(|t| words.contains(stem(t))) {
                out.push((k, *group));
            }
        }
    }
    out
}

/// `true` when the texts `a` and `b` each name a tool, of one kind ("pnpm" and "npm").
pub fn same_kind(a: &str, b: &str) -> bool {
    let a = named(&super::update::content_words(a));
    let b = named(&super::update::content_words(b));
    a.iter().any(|(k, _)| b.iter().any(|(j, _)| j == k))
}

/// The words of the jobs of the tools `text` names ("npm" → "package", "manager"), stemmed as
/// content words are.
pub fn jobs_of(text: &str) -> HashSet<String> {
    named(&super::update::content_words(text))
        .into_iter()
        .flat_map(|(k, _)| KINDS[k].job.iter().map(|w| stem(w).to_owned()))
        .collect()
}

/// A sentence read against one entry ([`read_against`]).
pub struct Reading {
    /// The words the sentence stands for.
    pub words: HashSet<String>,
    /// The tool of the entry whose place a tool of the sentence takes, and that tool (their
    /// groups of names, `|`-separated), when exactly one does.
    pub replaced: Option<(&'static str, &'static str)>,
    /// The words naming the job of that tool ("package", "manager"), stemmed as content words
    /// are; empty without one.
    pub job: Vec<String>,
}

/// The words `sentence` stands for when read against `entry` (both as content words): the
/// sentence's own; for each tool it names, the tool's other names ("postgres", "postgresql");
/// and, when the tool takes the place of the entry's tool of its kind, that tool and the words
/// of their job ("npm", "package", "manager" of "Package manager: npm." for "We switched to
/// pnpm."). A tool takes that place when the sentence names one tool of the kind and the entry
/// one other (with two on either side, which replaces which is not known). A sentence naming
/// the entry's own tool ("cypress is gone") gains no job words: it brings no new tool.
pub fn read_against(sentence: &HashSet<String>, entry: &HashSet<String>) -> Reading {
    let mut words = sentence.clone();
    let mut replaced = Vec::new();
    let said = named(sentence);
    let stored = named(entry);
    let names = |group: &'static str| group.split('|').map(|t| stem(t).to_owned());
    for (k, group) in &said {
        words.extend(names(group));
        let said_of_kind = said.iter().filter(|(j, _)| j == k).count();
        let stored_of_kind: Vec<&'static str> = stored
            .iter()
            .filter(|(j, _)| j == k)
            .map(|(_, g)| *g)
            .collect();
        if let [old] = stored_of_kind[..]
            && said_of_kind == 1
            && old != *group
        {
            words.extend(names(old));
            let job: Vec<String> = KINDS[*k].job.iter().map(|w| stem(w).to_owned()).collect();
            words.extend(job.iter().cloned());
            replaced.push((old, *group, job));
        }
    }
    match replaced.len() {
        1 => {
            let (old, new, job) = replaced.remove(0);
            Reading {
                words,
                replaced: Some((old, new)),
                job,
            }
        }
        _ => Reading {
            words,
            replaced: None,
            job: Vec::new(),
        },
    }
}

/// Each whole-word, case-insensitive occurrence of a name of `group` in `text` outside
/// backticks: its byte range.
fn occurrences(text: &str, group: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut start = None;
    let flush = |from: usize, to: usize, out: &mut Vec<(usize, usize)>| {
        if group
            .split('|')
            .any(|n| text[from..to].eq_ignore_ascii_case(n))
        {
            out.push((from, to));
        }
    };
    for (i, c) in text.char_indices() {
        let word_char = c.is_ascii_alphanumeric() || c == '_' || c == '-';
        match (word_char && !in_code, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                flush(s, i, &mut out);
                start = None;
            }
            _ => {}
        }
        if c == '`' {
            in_code = !in_code;
        }
    }
    if let Some(s) = start {
        flush(s, text.len(), &mut out);
    }
    out
}

/// Words an entry naming a tool may hold besides the tool and the words of its job: a plain
/// statement of which tool does the job ("Package manager: npm.", "Use npm.", "I use neovim.").
const PLAIN: &[&str] = &[
    "use", "uses", "we", "i", "my", "our", "the", "is", "are", "for", "a", "an",
];

/// `entry` with the tool `old` replaced by the tool `new` as `sentence` spells it ("Package
/// manager: npm." → "Package manager: pnpm."; "I use neovim." → "I use Helix."), when the entry
/// says nothing but which tool does the job: its words are the tool, the words of `job`
/// (stemmed) and `PLAIN` ones, with no code, version, link, parenthesis or markup, which
/// could belong to the old tool ("Queue: RabbitMQ (`amqp://…`)", "My shell is zsh with
/// oh-my-zsh"). `None` otherwise.
pub fn substituted(
    entry: &str,
    old: &'static str,
    new: &'static str,
    job: &[String],
    sentence: &str,
) -> Option<String> {
    let spelled = occurrences(sentence, new)
        .first()
        .map(|&(a, b)| &sentence[a..b])?;
    let plain_text = entry
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, ' ' | ':' | ',' | '.' | '\'' | '-'));
    let names: Vec<&str> = old.split('|').collect();
    let only_the_tool = entry
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .all(|w| names.contains(&w) || PLAIN.contains(&w) || job.iter().any(|j| j == stem(w)));
    let found = occurrences(entry, old);
    if !plain_text || !only_the_tool || found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(entry.len());
    let mut last = 0;
    for (a, b) in found {
        out.push_str(&entry[last..a]);
        out.push_str(spelled);
        last = b;
    }
    out.push_str(&entry[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::update::content_words;

    fn read(sentence: &str, entry: &str) -> HashSet<String> {
        read_against(&content_words(sentence), &content_words(entry)).words
    }

    #[test]
    fn a_tool_takes_the_place_of_the_one_of_its_kind() {
        let r = read("We switched to pnpm.", "Package manager: npm.");
        for w in ["pnpm", "npm", "package", "manager"] {
            assert!(r.contains(w), "{w} in {r:?}");
        }
        // Other names of one tool meet, whatever the plural stem makes of them; the entry's own
        // tool names no job.
        let r = read("We're on Postgres 16 now.", "Database: PostgreSQL 14.");
        assert!(r.contains("postgresql") && !r.contains("database"), "{r:?}");
        let r = read("cypress is gone.", "E2E tests: `npx cypress run`.");
        assert!(!r.contains("e2e") && !r.contains("test"), "{r:?}");
    }

    #[test]
    fn two_tools_of_a_kind_or_another_kind_take_no_place() {
        assert!(!read("We use pnpm and bun now.", "Use npm.").contains("npm"));
        assert!(!read("We use pnpm now.", "npm for the app, yarn for the docs.").contains("npm"));
        assert!(!read("We switched to vitest.", "Use npm.").contains("npm"));
        assert_eq!(
            read("The docs are long now.", "Use npm."),
            content_words("The docs are long now.")
        );
    }

    #[test]
    fn the_new_tool_is_written_in_place_of_the_old_one() {
        let sub = |entry: &str, sentence: &str| {
            let r = read_against(&content_words(sentence), &content_words(entry));
            let (old, new) = r.replaced?;
            substituted(entry, old, new, &r.job, sentence)
        };
        assert_eq!(
            sub("Package manager: npm.", "We switched to pnpm.").as_deref(),
            Some("Package manager: pnpm.")
        );
        assert_eq!(
            sub("I use neovim.", "My editor is Helix now.").as_deref(),
            Some("I use Helix.")
        );
        // Anything that may belong to the old tool: a command, a version, a plugin, a link.
        for (entry, sentence) in [
            (
                "Unit tests: `npm run test:unit` (Jest).",
                "Unit tests run on Vitest now.",
            ),
            ("The database is PostgreSQL 14.", "We moved to MySQL."),
            ("My shell is zsh with oh-my-zsh.", "I switched to fish."),
            (
                "Queue: RabbitMQ (amqp://localhost:5672).",
                "We use Kafka now.",
            ),
            ("Package manager: NPM (npm@10).", "We switched to pnpm."),
            ("**Package manager:** <b>npm</b>.", "We switched to pnpm."),
        ] {
            assert_eq!(sub(entry, sentence), None, "{entry}");
        }
    }
}
