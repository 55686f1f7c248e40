//! `mem memory migrate --to URL`: the local SQLite store copied to a team store on PostgreSQL
//! (`docs/TEAM.md`).

use std::io::{self, IsTerminal, Write};

use anyhow::{Result, bail};
use mem_tiers::MemoryConfig;
use mem_tiers::postgres::redact_url;
use serde_json::json;

use crate::open::{env, pg_options, store_section};
use crate::settings::Settings;

/// `mem memory migrate [--to URL]`: copies the local SQLite store to the team store at `to`
/// (default: the configured one). Idempotent and resumable; prints counts.
pub fn migrate(
    settings: &Settings,
    memory: &mewmem::Memory,
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
    let tty = io::stderr().is_terminal();
    let m = memory
        .migrate_to_team(
            config,
            &url,
            || Ok(pg_options(&section)?),
            |done, total| {
                if tty && (done.is_multiple_of(500) || done == total) {
                    eprint!("\rmigrating learnings: {done}/{total}");
                    if done == total {
                        eprintln!();
                    }
                }
            },
        )
        .map_err(crate::open::lib_error)?;
    let report = &m.report;
    let shown = redact_url(&url);
    let db = &m.from;
    if settings.json {
        let v = json!({"from": db.display().to_string(), "to": shown,
                       "schema": m.schema, "author": m.author, "report": report});
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "migrated {} to {} (schema {}, author {})",
        db.display(),
        shown,
        m.schema,
        mem_core::terminal::safe_line(&m.author)
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
