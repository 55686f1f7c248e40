//! `mem memory migrate --to URL`: the local SQLite store copied to a team store on PostgreSQL
//! (`docs/TEAM.md`).

use std::io::{self, IsTerminal, Write};

use anyhow::{Result, bail};
use mem_tiers::postgres::redact_url;
use mem_tiers::{MemoryConfig, PgStore, SqliteStore, migrate};
use serde_json::json;

use crate::open::{env, pg_options, store_section};
use crate::settings::Settings;

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
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
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
