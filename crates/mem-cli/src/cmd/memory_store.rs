//! Which tier store `mem memory` uses: the local SQLite file (the default) or a team store on
//! PostgreSQL (`docs/TEAM.md`), from `[store]` of the user's `config.toml` and the
//! environment; and `mem memory migrate --to URL`.

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mem_tiers::postgres::redact_url;
use mem_tiers::{MemoryConfig, PgOptions, PgStore, SqliteStore, StoreLocation, migrate};
use serde::Deserialize;
use serde_json::json;

use crate::settings::Settings;

/// The `[store]` table of the user's `config.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreSection {
    /// `postgresql://user:password@host:port/db[?sslmode=require]`; absent: SQLite.
    url: Option<String>,
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
    let read = match mem_instructions::read_capped(path, crate::config::MAX_CONFIG_BYTES) {
        Ok(r) => r,
        Err(mem_instructions::ReadError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if read.truncated || read.lossy {
        bail!("{} is too large or not UTF-8", path.display());
    }
    let parsed: ConfigStoreOnly = toml::from_str(&read.text)
        .with_context(|| format!("{}: invalid [store] table", path.display()))?;
    Ok(parsed.store)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// PostgreSQL options from `[store]` and the environment (`MEM_STORE_SCHEMA`,
/// `MEM_STORE_AUTHOR`, `MEM_STORE_TEAM`, `PGPASSWORD`).
fn pg_options(section: &StoreSection) -> Result<PgOptions> {
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
fn store_section(settings: &Settings) -> Result<StoreSection> {
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

/// `mem memory migrate [--to URL]`: copies the local SQLite store to the team store at `to`
/// (default: the configured one). Idempotent and resumable; prints counts.
pub fn migrate(
    settings: &Settings,
    config: &MemoryConfig,
    to: Option<String>,
    out: &mut impl Write,
) -> Result<()> {
    let section = store_section(settings)?;
    let Some(url) = to.or_else(|| env("MEM_STORE_URL")).or(section.url.clone()) else {
        bail!(
            "no team store to migrate to: give --to postgresql://... or set [store] url in \
             ~/.mewcode/config.toml"
        );
    };
    let db = config.database_path();
    if !db.exists() {
        bail!(
            "no local memory database at {}: nothing to migrate",
            db.display()
        );
    }
    let local = SqliteStore::open(&db, config.busy_timeout)?;
    let server = PgStore::open(&url, &pg_options(&section)?)?;
    let tty = io::stderr().is_terminal();
    let report = migrate::copy_to_server(&local, &server, |done, total| {
        if tty && (done.is_multiple_of(500) || done == total) {
            eprint!("\rmigrating learnings: {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    })?;
    let shown = redact_url(&url);
    if settings.json {
        let v = json!({"from": db.display().to_string(), "to": shown,
                       "schema": server.schema(), "author": server.author(), "report": report});
        writeln!(out, "{}", crate::output::json_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "migrated {} to {} (schema {}, author {})",
        db.display(),
        shown,
        server.schema(),
        mem_core::terminal::safe_line(server.author())
    )?;
    writeln!(
        out,
        "learnings: {} copied, {} already there",
        report.learnings_copied, report.learnings_already_there
    )?;
    writeln!(out, "user preferences: {}", report.preferences)?;
    writeln!(out, "projects: {}", report.projects)?;
    writeln!(
        out,
        "copied learnings are private (scope user or project); `mem memory add --scope team` \
         shares new ones. memories.md entries and notes are indexed from their files on the \
         next command"
    )?;
    Ok(())
}
