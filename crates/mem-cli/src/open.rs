//! From the CLI's settings and configuration to the facade: the `mewmem::Memory` of the
//! project with a [`ConfigSource`] that reads `config.toml` files and the environment when an
//! operation needs them (so `mem memory search` reads no model configuration), the tier
//! store's configuration and location (`[memory]`, `[store]`), the note folders, the model of
//! a job, and the start context's options.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::NaiveDate;
use mem_instructions::LoadOptions;
use mem_llm::{Job, Llm, OfflineEngine};
use mem_recall::MemoryDirs;
use mem_tiers::tiers::Headings;
use mem_tiers::{MemoryConfig, PgOptions, StoreLocation};
use mewmem::context::ContextOptions;
use mewmem::{ConfigError, ConfigSource, Embeddings, Memory, MemorySettings};
use serde::Deserialize;

use crate::args::EngineArgs;
use crate::settings::Settings;

/// The facade's configuration read the CLI's way: `config.toml` files and the environment, each
/// time an operation asks.
#[derive(Debug, Clone)]
pub struct CliConfig {
    settings: Settings,
}

impl CliConfig {
    /// The configuration of `settings`' project and home.
    pub fn new(settings: &Settings) -> Self {
        CliConfig {
            settings: settings.clone(),
        }
    }
}

impl ConfigSource for CliConfig {
    fn tier_config(&self) -> Result<MemoryConfig, ConfigError> {
        Ok(memory_config(&self.settings)?)
    }

    fn store_location(&self, config: &MemoryConfig) -> Result<StoreLocation, ConfigError> {
        Ok(location(&self.settings, config)?)
    }

    fn note_dirs(&self) -> Result<Vec<PathBuf>, ConfigError> {
        Ok(crate::config::recall_extra_dirs(&self.settings)?)
    }

    fn llm(&self, job: Job) -> Result<mem_llm::Result<Arc<dyn Llm>>, ConfigError> {
        let (resolved, _) = crate::config::llm_settings(&self.settings)?;
        Ok(resolved.job(job).engine())
    }

    fn embeddings(&self) -> Result<Option<Embeddings>, ConfigError> {
        Ok(crate::config::embeddings(&self.settings)?
            .map(|(settings, embedder)| Embeddings { settings, embedder }))
    }

    fn check_write(&self, path: &Path) -> Result<(), ConfigError> {
        Ok(self.settings.guard_write(path)?)
    }

    fn warn(&self, message: &str) {
        eprintln!("warning: {}", mem_core::terminal::safe_line(message));
    }
}

/// The facade's settings for `settings`: its home, `llm` for what a command runs with a model
/// (the offline engine for those that run none), `date` for the start context (the store
/// commands show none), the rest read on demand through [`CliConfig`].
pub fn facade_settings(settings: &Settings, llm: Arc<dyn Llm>, date: NaiveDate) -> MemorySettings {
    let mut s = MemorySettings::new(&settings.home, llm, date);
    s.config = Some(Arc::new(CliConfig::new(settings)));
    s
}

/// The project's memory for a command that runs no model and shows no date (the store, notes,
/// search): nothing is read until an operation asks.
///
/// Errors: the project directory is gone.
pub fn memory(settings: &Settings) -> Result<Memory> {
    let s = facade_settings(
        settings,
        Arc::new(OfflineEngine),
        chrono::Utc::now().date_naive(),
    );
    Memory::open(&settings.project, s).map_err(lib_error)
}

/// `llm` with hybrid selection when embeddings are configured and not turned `off`
/// ([`Memory::with_embeddings`]); its warnings printed on stderr.
pub fn with_embeddings(settings: &Settings, llm: Arc<dyn Llm>, off: bool) -> Arc<dyn Llm> {
    let Ok(memory) = memory(settings) else {
        return llm;
    };
    let (llm, warnings) = memory.with_embeddings(llm, off);
    print_warnings(&warnings);
    llm
}

/// Prints the facade's warnings on stderr, one `warning: ` line each.
pub fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", mem_core::terminal::safe_line(w));
    }
}

/// A facade error as the CLI reports it: the library's own error (so `--json` errors keep their
/// kind), a configuration error with its chain as the CLI built it.
pub fn lib_error(e: mewmem::Error) -> anyhow::Error {
    match e {
        mewmem::Error::Config(b) => anyhow::Error::from_boxed(b),
        mewmem::Error::Tiers(e) => e.into(),
        mewmem::Error::Session(e) => e.into(),
        mewmem::Error::Recall(e) => e.into(),
        mewmem::Error::Instructions(e) => e.into(),
        mewmem::Error::Auto(e) => e.into(),
        mewmem::Error::Compact(e) => e.into(),
        other => other.into(),
    }
}

/// `MemoryConfig` from the defaults for `--home`, then `[memory]` of the user's and the
/// project's `config.toml` (the project's wins, key by key), the same table `memories.md`
/// extraction reads (`crate::config::memory_settings`), and the note dirs of `[recall] dirs`.
pub fn memory_config(settings: &Settings) -> Result<MemoryConfig> {
    let files = crate::config::memory_files(settings)?;
    let shared = crate::config::memory_settings_from(&files)?;
    let mut config = MemoryConfig::for_home(&settings.home);
    config.headings = Headings::for_style(shared.auto.headings);
    config.memories = shared.auto;
    config.extra_note_dirs = crate::config::extra_dirs(settings, &files);
    for f in &files {
        let Some(m) = &f.memory else { continue };
        let base = f.path.parent().unwrap_or(Path::new("."));
        if let Some(d) = &m.storage_dir {
            config.storage_dir = base.join(d);
        }
        if let Some(v) = m.short_term_max_messages {
            config.short_term_max_messages = v;
        }
        if let Some(v) = m.short_term_max_age_hours {
            config.short_term_max_age_hours = v;
        }
        if let Some(v) = m.tier0_max_tokens {
            config.tier0_max_tokens = v;
        }
        if let Some(v) = m.tier1_max_tokens {
            config.tier1_max_tokens = v;
        }
        if let Some(v) = m.learning_max_age_days {
            config.learning_max_age_days = Some(v);
            // User-level learnings follow the user's own file only.
            if f.base == settings.home {
                config.user_learning_max_age_days = Some(v);
            }
        }
    }
    Ok(config)
}

/// The `[store]` table of the user's `config.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreSection {
    /// `postgresql://user:password@host:port/db[?sslmode=require]`; absent: SQLite.
    pub(crate) url: Option<String>,
    /// PostgreSQL schema for mewmem's tables (default `mewmem`).
    schema: Option<String>,
    /// The name this user's rows carry (default: the login name).
    author: Option<String>,
    /// The team shared with by `--scope team` (default: none).
    team: Option<String>,
    /// Connect timeout in seconds (default 10).
    connect_timeout_secs: Option<f64>,
    /// Pooled connections (default 4).
    pool_size: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
struct ConfigStoreOnly {
    store: Option<StoreSection>,
}

fn read_section(path: &std::path::Path) -> Result<Option<StoreSection>> {
    let Some(read) = crate::config::read_config_text(path)? else {
        return Ok(None);
    };
    if read.truncated || read.lossy {
        bail!("{} is too large or not UTF-8", path.display());
    }
    let parsed: ConfigStoreOnly = toml::from_str(&read.text)
        .with_context(|| format!("{}: invalid [store] table", path.display()))?;
    Ok(parsed.store)
}

/// The value of environment variable `name`, `None` when it is unset or blank.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// PostgreSQL options from `[store]` and the environment (`MEM_STORE_SCHEMA`,
/// `MEM_STORE_AUTHOR`, `MEM_STORE_TEAM`, `PGPASSWORD`).
pub(crate) fn pg_options(section: &StoreSection) -> Result<PgOptions> {
    let author = env("MEM_STORE_AUTHOR")
        .or_else(|| section.author.clone())
        .or_else(|| env("USER"))
        .or_else(|| env("LOGNAME"));
    let Some(author) = author else {
        bail!(
            "a team store needs an author name: set [store] author in ~/.mewcode/config.toml \
             or MEM_STORE_AUTHOR"
        );
    };
    let mut o = PgOptions::for_author(author);
    if let Some(s) = env("MEM_STORE_SCHEMA").or_else(|| section.schema.clone()) {
        o.schema = s;
    }
    o.team = env("MEM_STORE_TEAM").or_else(|| section.team.clone());
    if let Some(t) = section.connect_timeout_secs {
        if !(t.is_finite() && t > 0.0 && t <= 600.0) {
            bail!("[store] connect_timeout_secs must be between 0 and 600 seconds, not {t}");
        }
        o.connect_timeout = Duration::from_secs_f64(t);
    }
    if let Some(n) = section.pool_size {
        if !(1..=64).contains(&n) {
            bail!("[store] pool_size must be 1 to 64, not {n}");
        }
        o.pool_size = n;
    }
    o.password = env("PGPASSWORD");
    Ok(o)
}

/// The user's `[store]` table. A project's `config.toml` comes with a cloned repository and
/// may not choose where memories are sent: its `[store]` is ignored with a warning.
pub(crate) fn store_section(settings: &Settings) -> Result<StoreSection> {
    let [user, project] = crate::config::config_paths(settings);
    if project != user && read_section(&project)?.is_some() {
        tracing::warn!(
            "{}: [store] is ignored in a project's config.toml (a cloned repository must not \
             choose where your memories go); set it in {}",
            project.display(),
            user.display()
        );
    }
    Ok(read_section(&user)?.unwrap_or_default())
}

/// Where `mem memory` keeps its store: `MEM_STORE_URL`, else `[store] url` of the user's
/// config, else the local SQLite file.
pub fn location(settings: &Settings, config: &MemoryConfig) -> Result<StoreLocation> {
    let section = store_section(settings)?;
    match env("MEM_STORE_URL").or_else(|| section.url.clone()) {
        Some(url) => Ok(StoreLocation::Postgres {
            options: pg_options(&section)?,
            url,
        }),
        None => Ok(StoreLocation::Sqlite(config.database_path())),
    }
}

/// The memory directories given by `--dir` values (relative to the current directory), as
/// scopes `extra<K>`.
///
/// Errors: the current directory cannot be read.
pub fn given_dirs(dir: &[PathBuf]) -> Result<MemoryDirs> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let extras: Vec<PathBuf> = dir.iter().map(|d| cwd.join(d)).collect();
    Ok(MemoryDirs {
        dirs: extras
            .into_iter()
            .enumerate()
            .map(|(k, path)| mem_recall::MemoryDir {
                scope: mem_recall::Scope::Extra(k),
                path,
            })
            .collect(),
    })
}

/// [`Memory::context_options`] of `settings.project` on `date` (the one builder behind the
/// SessionStart hook, the MCP `context` tool and `mem context`); a project directory that is
/// gone leaves Tier 0 out with the line that says why.
pub fn start_options(
    settings: &Settings,
    instructions: LoadOptions,
    date: NaiveDate,
    budget: Option<usize>,
    remember_counts: bool,
) -> (ContextOptions, Vec<String>) {
    let s = facade_settings(settings, Arc::new(OfflineEngine), date);
    match Memory::open(&settings.project, s) {
        Ok(memory) => memory.context_options(instructions, budget, remember_counts),
        Err(e) => {
            let mut options = ContextOptions::new(&settings.project, &settings.home, date);
            options.instructions = instructions;
            options.budget_chars = budget;
            (
                options,
                vec![format!("Tier 0 left out: {:#}", lib_error(e))],
            )
        }
    }
}

/// The model of `job`: the offline engine with `--offline`, else the configured one.
///
/// Errors: the configuration cannot be read, or the engine it names cannot be built.
pub fn engine_for(settings: &Settings, job: Job, args: &EngineArgs) -> Result<Arc<dyn Llm>> {
    if args.offline {
        return Ok(Arc::new(OfflineEngine));
    }
    let (resolved, _) = crate::config::llm_settings(settings)?;
    Ok(resolved.job(job).engine()?)
}
