//! Configuration read at the edge: `config.toml` files and environment variables, handed to the
//! libraries as values.

use std::path::PathBuf;

use anyhow::{Context, Result};
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

fn read_config(path: &PathBuf) -> Result<Option<ConfigFile>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(ConfigFile::parse(&text, &path.display().to_string())?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
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
