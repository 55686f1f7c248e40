//! Configuration read at the edge: `config.toml` files and environment variables, handed to the
//! libraries as values.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use mem_instructions::ReadError;
use mem_llm::{ConfigFile, LlmSettings};

use crate::settings::Settings;

/// A configuration file mewmem looks at, and whether it exists.
#[derive(Debug, Clone)]
pub struct ConfigSource {
    /// The path.
    pub path: PathBuf,
    /// `true` when the file exists and was read.
    pub found: bool,
}

/// `<home>/.mewcode/config.toml` then `<project>/.mewcode/config.toml` (the project file wins).
pub fn config_paths(settings: &Settings) -> [PathBuf; 2] {
    [
        settings.user_dir().join("config.toml"),
        settings.project_dir().join("config.toml"),
    ]
}

/// The largest `config.toml` read, in bytes (1 MiB; real ones are a few hundred bytes).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// A `config.toml` as read by [`mem_instructions::read_capped`] (at most [`MAX_CONFIG_BYTES`] + 1
/// bytes; `truncated` / `lossy` say whether it was larger or not UTF-8); `None` when it does not
/// exist. Every reader of a config file goes through this one.
///
/// # Errors
/// A path that exists but cannot be read as a regular file: "cannot read PATH".
pub fn read_config_text(path: &Path) -> Result<Option<mem_instructions::CappedText>> {
    match mem_instructions::read_capped(path, MAX_CONFIG_BYTES) {
        Ok(read) => Ok(Some(read)),
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// A config file's settings; `None` when it does not exist.
///
/// Read with [`mem_instructions::read_capped`]: only a regular file (symlinks followed), opened
/// non-blocking, at most [`MAX_CONFIG_BYTES`] + 1 bytes read. A FIFO, device or directory, a
/// larger file or invalid UTF-8 is an error naming the path.
fn read_config(path: &Path) -> Result<Option<ConfigFile>> {
    let Some(read) = read_config_text(path)? else {
        return Ok(None);
    };
    if read.truncated {
        bail!(
            "{} is too large ({} bytes; a config.toml may have at most {MAX_CONFIG_BYTES})",
            path.display(),
            read.size
        );
    }
    if read.lossy {
        bail!("{} is not valid UTF-8", path.display());
    }
    Ok(Some(ConfigFile::parse(
        &read.text,
        &path.display().to_string(),
    )?))
}

/// The model settings of every job, from the two config files and the environment
/// (`MEM_LLM_PROVIDER`, `MEM_LLM_MODEL`, `MEM_LLM_<JOB>_PROVIDER`, `MEM_LLM_<JOB>_MODEL`,
/// `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, and any
/// variable named by `api_key_env`), plus which files were looked at.
pub fn llm_settings(settings: &Settings) -> Result<(LlmSettings, Vec<ConfigSource>)> {
    let [user_path, project_path] = config_paths(settings);
    let user = read_config(&user_path)?;
    let project = read_config(&project_path)?;
    let sources = vec![
        ConfigSource {
            found: user.is_some(),
            path: user_path,
        },
        ConfigSource {
            found: project.is_some(),
            path: project_path,
        },
    ];
    let env = |name: &str| std::env::var(name).ok();
    let resolved = LlmSettings::resolve(user.as_ref(), project.as_ref(), &env)
        .context("cannot resolve the model configuration")?;
    Ok((resolved, sources))
}

/// The `[embeddings]` settings (`mem_llm::embed`) from the two config files and the environment
/// (`MEM_EMBED_BASE_URL`, `MEM_EMBED_MODEL`, `OPENAI_API_KEY`, a variable named by
/// `api_key_env`); `None` when embeddings are not configured (the default: lexical search only).
pub fn embedding_settings(settings: &Settings) -> Result<Option<mem_llm::EmbeddingSettings>> {
    let [user_path, project_path] = config_paths(settings);
    let user = read_config(&user_path)?;
    let project = read_config(&project_path)?;
    let env = |name: &str| std::env::var(name).ok();
    match mem_llm::EmbeddingSettings::resolve(user.as_ref(), project.as_ref(), &env) {
        Ok(s) => Ok(s),
        Err(e) => {
            // The file at fault: the user's when its layer (with the environment) fails on its
            // own, else the project's, whose values override it.
            let culprit = if mem_llm::EmbeddingSettings::resolve(user.as_ref(), None, &env).is_err()
            {
                &user_path
            } else {
                &project_path
            };
            Err(anyhow::Error::new(e).context(format!(
                "bad [embeddings] configuration in {}",
                culprit.display()
            )))
        }
    }
}

/// The `[embeddings]` settings and their client, or `None` when embeddings are not configured.
///
/// Errors: a bad configuration, naming the config file (the facade turns it into a warning: a
/// bad `[embeddings]` never drops a search or recall, which then stay lexical).
pub fn embeddings(
    settings: &Settings,
) -> Result<Option<(mem_llm::EmbeddingSettings, mem_llm::Embedder)>> {
    embedding_settings(settings).and_then(|embed| match embed {
        Some(embed) => {
            let embedder = mem_llm::Embedder::new(&embed).with_context(|| {
                let [user, project] = config_paths(settings);
                format!(
                    "bad [embeddings] configuration in {} or {}",
                    user.display(),
                    project.display()
                )
            })?;
            Ok(Some((embed, embedder)))
        }
        None => Ok(None),
    })
}

/// The `[memory]` table of a `config.toml`: every setting of the one memory (`memories.md`,
/// the tier store, their index). Unknown keys are refused, naming the file.
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryTable {
    /// Token cap of each `memories.md` (positive).
    pub cap_tokens: Option<i64>,
    /// Model tokens extraction may send per UTC day (positive).
    pub daily_extract_tokens: Option<i64>,
    /// `seed` or `english` (old spellings `zh`, `chinese`, `en`: accepted with a warning).
    pub headings: Option<String>,
    /// Folder of the tier database (relative to the config file's folder).
    pub storage_dir: Option<PathBuf>,
    /// Short-term view: the latest session's last N messages.
    pub short_term_max_messages: Option<usize>,
    /// Short-term view: empty when the latest session is older (hours).
    pub short_term_max_age_hours: Option<u64>,
    /// Tier 0 budget (tokens, exclusive).
    pub tier0_max_tokens: Option<usize>,
    /// Tier 1 default budget (tokens, exclusive).
    pub tier1_max_tokens: Option<usize>,
    /// `mem memory clean` deletes learnings unused this many days: in the project's file, the
    /// project's learnings; in the user's, the user-level ones too.
    pub learning_max_age_days: Option<u64>,
    /// Deprecated spelling of `[recall] dirs` (read as if it were written there, with a
    /// warning).
    pub extra_note_dirs: Option<Vec<String>>,
}

/// The `[recall]` table.
#[derive(Debug, Default, Clone, serde::Deserialize)]
struct RecallTable {
    #[serde(default)]
    dirs: Vec<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct MemoryTables {
    #[serde(default)]
    memory: Option<MemoryTable>,
    #[serde(default)]
    recall: Option<RecallTable>,
}

/// One config file's memory settings: its path, the folder its relative note dirs are
/// relative to (the home or the project directory), and its tables.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    /// The `config.toml`.
    pub path: PathBuf,
    /// The directory holding its `.mewcode/` (home or project).
    pub base: PathBuf,
    /// `[memory]`, when present.
    pub memory: Option<MemoryTable>,
    recall: Option<RecallTable>,
}

/// Prints a deprecation warning once per process (several commands read the same file twice).
fn warn_once(message: String) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&message) {
        tracing::warn!("{message}");
        seen.push(message);
    }
}

/// The memory settings of the two config files (user's first, then the project's; missing
/// files left out). A file that cannot be read, is not TOML or has an unknown `[memory]` key
/// is an error naming it.
pub fn memory_files(settings: &Settings) -> Result<Vec<MemoryFile>> {
    let mut out = Vec::new();
    let [user_path, project_path] = config_paths(settings);
    for (path, base) in [
        (user_path, &settings.home),
        (project_path, &settings.project),
    ] {
        let Some(read) = read_config_text(&path)? else {
            continue;
        };
        if read.truncated || read.lossy {
            bail!("{} is too large or not UTF-8", path.display());
        }
        let tables: MemoryTables = parse_toml(&path, &read.text, "[memory] or [recall] table")?;
        out.push(MemoryFile {
            path,
            base: base.clone(),
            memory: tables.memory,
            recall: tables.recall,
        });
    }
    Ok(out)
}

/// The extra memory directories: `[recall] dirs = ["..."]` of the two config files (user's
/// first, then the project's; a leading `~/` is the home directory, a relative path is relative
/// to the home or project directory holding that `.mewcode/`). `[memory] extra_note_dirs`, the
/// old spelling, is read as if its entries followed that file's `[recall] dirs`, with a
/// warning. The K-th directory is note scope `extra<K>` everywhere (recall, notes, the index).
pub fn recall_extra_dirs(settings: &Settings) -> Result<Vec<PathBuf>> {
    Ok(extra_dirs(settings, &memory_files(settings)?))
}

/// [`recall_extra_dirs`] from files already read.
pub fn extra_dirs(settings: &Settings, files: &[MemoryFile]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in files {
        let mut dirs: Vec<&String> = f.recall.iter().flat_map(|r| r.dirs.iter()).collect();
        if let Some(old) = f.memory.as_ref().and_then(|m| m.extra_note_dirs.as_ref()) {
            warn_once(format!(
                "{}: [memory] extra_note_dirs is deprecated; write the folders as [recall] dirs \
                 (read the same way: relative to {})",
                f.path.display(),
                f.base.display()
            ));
            dirs.extend(old);
        }
        for dir in dirs {
            out.push(match dir.strip_prefix("~/") {
                Some(rest) => settings.home.join(rest),
                None => f.base.join(dir),
            });
        }
    }
    out
}

/// The `[memory] headings` value: `seed` or `english`; the old spellings `zh`/`chinese` and
/// `en` are accepted with a warning. `path` names the file in errors and warnings.
pub fn parse_headings(value: &str, path: &Path) -> Result<mem_auto::HeadingStyle> {
    let v = value.trim().to_ascii_lowercase();
    let style = mem_auto::HeadingStyle::parse(&v).with_context(|| {
        format!(
            "{}: [memory] headings must be \"seed\" or \"english\", not {value:?}",
            path.display()
        )
    })?;
    if v != "seed" && v != "english" {
        let new = match style {
            mem_auto::HeadingStyle::Seed => "seed",
            mem_auto::HeadingStyle::English => "english",
        };
        warn_once(format!(
            "{}: [memory] headings = {value:?} is deprecated; write headings = \"{new}\"",
            path.display()
        ));
    }
    Ok(style)
}

/// Auto-memory settings: the `[memory]` table of the two `config.toml` files (the project's
/// wins, key by key): `cap_tokens` (per file, default 2,000), `headings` (`seed` or `english`),
/// `daily_extract_tokens` (model tokens per day, default 200,000).
#[derive(Debug, Clone)]
pub struct MemorySettings {
    /// Options of the `memories.md` files.
    pub auto: mem_auto::AutoOptions,
    /// Tokens a model may be sent for extraction per day.
    pub daily_extract_tokens: usize,
}

/// Reads [`MemorySettings`]; a bad value is an error naming the file and key.
pub fn memory_settings(settings: &Settings) -> Result<MemorySettings> {
    memory_settings_from(&memory_files(settings)?)
}

/// [`memory_settings`] from files already read.
pub fn memory_settings_from(files: &[MemoryFile]) -> Result<MemorySettings> {
    let mut out = MemorySettings {
        auto: mem_auto::AutoOptions::default(),
        daily_extract_tokens: mem_auto::DEFAULT_DAILY_TOKEN_BUDGET,
    };
    for f in files {
        let Some(memory) = &f.memory else { continue };
        let positive = |key: &str, v: Option<i64>| -> Result<Option<usize>> {
            match v {
                None => Ok(None),
                Some(n) => match usize::try_from(n) {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => bail!(
                        "{}: memory.{key} must be a positive integer",
                        f.path.display()
                    ),
                },
            }
        };
        if let Some(n) = positive("cap_tokens", memory.cap_tokens)? {
            out.auto.cap_tokens = n;
        }
        if let Some(n) = positive("daily_extract_tokens", memory.daily_extract_tokens)? {
            out.daily_extract_tokens = n;
        }
        if let Some(v) = &memory.headings {
            out.auto.headings = parse_headings(v, &f.path)?;
        }
    }
    Ok(out)
}

/// Parses the config file `path` (its text `text`) into `T`, the tables one reader takes
/// (`what`, e.g. "`[checkpoint]` table"). A file that is not TOML is reported as such, naming the
/// file, line and column (not as a bad table); TOML whose `what` is wrong names it, with its
/// line and column.
///
/// # Errors
/// The parse error, as said.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    what: &str,
) -> Result<T> {
    let at = |e: &toml::de::Error| {
        e.span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(":{line}:{column}")
            })
            .unwrap_or_default()
    };
    if let Err(e) = text.parse::<toml::Table>() {
        bail!(
            "{}{}: not valid TOML: {}",
            path.display(),
            at(&e),
            e.message().trim()
        );
    }
    toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{}{}: invalid {what}: {}",
            path.display(),
            at(&e),
            e.message().trim()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// `read_config`'s error message, or its result's debug form; runs on a thread so a read
    /// that blocks fails the test instead of hanging it.
    fn check(path: PathBuf, expected: &str) {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let shown = match read_config(&path) {
                Ok(file) => format!("ok: {}", file.is_some()),
                Err(e) => format!("{e:#}"),
            };
            let _ = tx.send(shown);
        });
        let shown = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| "blocked (or panicked)".to_owned());
        assert!(shown.contains(expected), "{shown}");
    }

    fn settings_in(dir: &Path) -> Settings {
        Settings {
            project: dir.join("project"),
            project_given: true,
            home: dir.join("home"),
            json: false,
            interactive: false,
            allow_outside_project: false,
            home_is_env: false,
        }
    }

    #[test]
    fn headings_have_one_spelling_and_the_old_ones_still_read() {
        let p = Path::new("/x/config.toml");
        assert_eq!(
            parse_headings("seed", p).unwrap(),
            mem_auto::HeadingStyle::Seed
        );
        assert_eq!(
            parse_headings("english", p).unwrap(),
            mem_auto::HeadingStyle::English
        );
        assert_eq!(
            parse_headings("zh", p).unwrap(),
            mem_auto::HeadingStyle::Seed
        );
        assert_eq!(
            parse_headings("en", p).unwrap(),
            mem_auto::HeadingStyle::English
        );
        let e = parse_headings("klingon", p).unwrap_err().to_string();
        assert!(
            e.contains("/x/config.toml") && e.contains("\"seed\" or \"english\""),
            "{e}"
        );
    }

    #[test]
    fn one_memory_table_serves_memories_md_and_the_tiers() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings_in(dir.path());
        std::fs::create_dir_all(s.user_dir()).unwrap();
        std::fs::create_dir_all(s.project_dir()).unwrap();
        std::fs::write(
            s.user_dir().join("config.toml"),
            "[memory]\nheadings = \"english\"\ncap_tokens = 900\ntier0_max_tokens = 300\n\
             extra_note_dirs = [\"old\"]\n[recall]\ndirs = [\"~/a\", \"b\"]\n",
        )
        .unwrap();
        std::fs::write(
            s.project_dir().join("config.toml"),
            "[recall]\ndirs = [\"notes\"]\n",
        )
        .unwrap();
        let files = memory_files(&s).unwrap();
        let m = memory_settings_from(&files).unwrap();
        assert_eq!(m.auto.headings, mem_auto::HeadingStyle::English);
        assert_eq!(m.auto.cap_tokens, 900);
        // [recall] dirs first, then the deprecated spelling of the same file, then the project's.
        assert_eq!(
            extra_dirs(&s, &files),
            [
                s.home.join("a"),
                s.home.join("b"),
                s.home.join("old"),
                s.project.join("notes")
            ]
        );
        // An unknown [memory] key is refused, naming the file.
        std::fs::write(
            s.project_dir().join("config.toml"),
            "[memory]\ncap_tokns = 3\n",
        )
        .unwrap();
        let e = format!("{:#}", memory_files(&s).unwrap_err());
        assert!(
            e.contains("project/.mewcode/config.toml") && e.contains("cap_tokns"),
            "{e}"
        );
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.toml");
        std::fs::write(&good, "[llm]\nprovider = \"offline\"\n").unwrap();
        check(good, "ok: true");
        check(dir.path().join("missing.toml"), "ok: false");

        let fifo = dir.path().join("fifo.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        check(fifo, "not a regular file (a FIFO)");

        let zero = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        check(zero, "not a regular file (a device)");

        let big = dir.path().join("big.toml");
        let mut text = "[llm]\n".to_owned();
        while text.len() <= MAX_CONFIG_BYTES {
            text.push_str("# padding padding padding padding padding padding padding\n");
        }
        std::fs::write(&big, &text).unwrap();
        check(big, "is too large");

        let latin1 = dir.path().join("latin1.toml");
        std::fs::write(&latin1, b"[llm]\nmodel = \"caf\xe9\"\n").unwrap();
        check(latin1, "is not valid UTF-8");
    }
}
