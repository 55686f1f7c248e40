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

/// A config file's settings; `None` when it does not exist.
///
/// Read with [`mem_instructions::read_capped`]: only a regular file (symlinks followed), opened
/// non-blocking, at most [`MAX_CONFIG_BYTES`] + 1 bytes read. A FIFO, device or directory, a
/// larger file or invalid UTF-8 is an error naming the path.
fn read_config(path: &Path) -> Result<Option<ConfigFile>> {
    let read = match mem_instructions::read_capped(path, MAX_CONFIG_BYTES) {
        Ok(read) => read,
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
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

/// The extra memory directories of `[recall] dirs = ["..."]` in the two config files (user's
/// first, then the project's; a leading `~/` is the home directory, a relative path is relative
/// to the config file's `.mewcode/` parent, i.e. the home or the project directory).
pub fn recall_extra_dirs(settings: &Settings) -> Result<Vec<PathBuf>> {
    #[derive(serde::Deserialize, Default)]
    struct File {
        #[serde(default)]
        recall: Recall,
    }
    #[derive(serde::Deserialize, Default)]
    struct Recall {
        #[serde(default)]
        dirs: Vec<String>,
    }
    let mut out = Vec::new();
    let [user_path, project_path] = config_paths(settings);
    for (path, base) in [
        (user_path, &settings.home),
        (project_path, &settings.project),
    ] {
        let read = match mem_instructions::read_capped(&path, MAX_CONFIG_BYTES) {
            Ok(read) => read,
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let file: File = toml::from_str(&read.text)
            .with_context(|| format!("{}: invalid [recall] section", path.display()))?;
        for dir in file.recall.dirs {
            out.push(match dir.strip_prefix("~/") {
                Some(rest) => settings.home.join(rest),
                None => base.join(dir),
            });
        }
    }
    Ok(out)
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
    let mut out = MemorySettings {
        auto: mem_auto::AutoOptions::default(),
        daily_extract_tokens: mem_auto::DEFAULT_DAILY_TOKEN_BUDGET,
    };
    for path in config_paths(settings) {
        let read = match mem_instructions::read_capped(&path, MAX_CONFIG_BYTES) {
            Ok(read) => read,
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let table: toml::Table = toml::from_str(&read.text)
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        let Some(memory) = table.get("memory") else {
            continue;
        };
        let Some(memory) = memory.as_table() else {
            bail!("{}: [memory] must be a table", path.display());
        };
        let count = |key: &str| -> Result<Option<usize>> {
            match memory.get(key) {
                None => Ok(None),
                Some(v) => match v.as_integer().and_then(|n| usize::try_from(n).ok()) {
                    Some(n) if n > 0 => Ok(Some(n)),
                    _ => bail!(
                        "{}: memory.{key} must be a positive integer",
                        path.display()
                    ),
                },
            }
        };
        if let Some(n) = count("cap_tokens")? {
            out.auto.cap_tokens = n;
        }
        if let Some(n) = count("daily_extract_tokens")? {
            out.daily_extract_tokens = n;
        }
        if let Some(v) = memory.get("headings") {
            out.auto.headings = v
                .as_str()
                .and_then(mem_auto::HeadingStyle::parse)
                .with_context(|| {
                    format!(
                        "{}: memory.headings must be \"seed\" or \"english\"",
                        path.display()
                    )
                })?;
        }
    }
    Ok(out)
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
