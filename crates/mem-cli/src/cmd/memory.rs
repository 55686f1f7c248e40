//! `mem memory stats|core|selected|archive|search|add|clean|show|forget|reindex|pref|import|migrate`
//! (seed 003 "CLI 命令", "记忆管理"): the facade's tier store operations
//! ([`mewmem::ops::tiers`]), rendered as text or JSON.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use mem_core::terminal::{safe, safe_line};
use mem_tiers::postgres::redact_url;
use mem_tiers::tiers::TierText;
use mem_tiers::{LearningScope, MemoryConfig, MemoryId};
use mewmem::ops::tiers::{NewLearning, SearchRequest, Tiers};
use serde_json::json;

use crate::open::{env, lib_error, pg_options, print_warnings, store_section};
use crate::render::{age, hit_json, plural};
use crate::settings::Settings;

/// `mem memory ...`
#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    #[command(flatten)]
    Store(StoreCommand),
    /// Copy the local SQLite store to a team store on PostgreSQL (idempotent, resumable).
    Migrate {
        /// The server (default: `[store] url` or MEM_STORE_URL).
        #[arg(long, value_name = "URL")]
        to: Option<String>,
    },
}

/// The commands that work on the configured store.
#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Counts: projects, preferences, learnings, indexed entries and notes, tier sizes.
    Stats,
    /// Tier 0, the core memory for every system prompt (fewer than tier0_max_tokens tokens).
    Core,
    /// Tier 1, the selected memory for when there is room (fewer than --max-tokens tokens).
    Selected {
        /// The budget in tokens (default: tier1_max_tokens, 2000).
        #[arg(long, value_name = "N")]
        max_tokens: Option<usize>,
    },
    /// Tier 2, the whole archive: preferences, projects, learnings, memories.md entries and
    /// notes (Markdown or JSON).
    Archive {
        /// Output format; `json` is what `mem memory import` reads.
        #[arg(long, value_enum, default_value_t = ArchiveFormat::Md)]
        format: ArchiveFormat,
        /// Write to this file (atomically) instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Search every memory (learnings, memories.md entries, notes) as plain text, best first.
    Search {
        /// The words to find (FTS syntax has no meaning here).
        #[arg(required = true, num_args = 1.., value_name = "QUERY")]
        query: Vec<String>,
        /// The most results.
        #[arg(long, default_value_t = 10, value_parser = super::parse_limit)]
        limit: usize,
    },
    /// Add a learning (secrets are withheld).
    Add {
        /// Short title.
        title: String,
        /// The lesson; `-` reads it from standard input (for long text, up to 1 MiB).
        content: String,
        /// Category (`error`, `best-practice`...).
        #[arg(long, default_value = "general")]
        category: String,
        /// Comma-separated tags.
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Where it was learnt.
        #[arg(long)]
        context: Option<String>,
        /// For every project (default: the current project only); same as `--scope user`.
        #[arg(long, conflicts_with = "scope")]
        global: bool,
        /// Who sees it: project (default; only you), user (every project; only you), team
        #[arg(long, value_enum, hide_possible_values = true)]
        scope: Option<ScopeArg>,
    },
    /// Refresh the index, report the short-term view, delete expired learnings, merge the search index.
    Clean {
        /// Say what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Show one memory by id (L<n>, M<hash>, N:<scope>/<file>).
    Show {
        /// The memory id.
        id: String,
    },
    /// Remove one memory from where it lives (database row, memories.md bullet, note file).
    Forget {
        /// The memory id.
        id: String,
    },
    /// Rebuild the index of memories.md entries and notes from the files.
    Reindex,
    /// User preferences: list them (no key, or `list`), show one, or set one (model, workflow,
    /// theme, editor, shell, or any other key).
    Pref {
        /// The preference key.
        key: Option<String>,
        /// The new value.
        value: Option<String>,
        /// Remove the preference.
        #[arg(long, conflicts_with = "value", requires = "key")]
        unset: bool,
    },
    /// Read an archive written by `mem memory archive --format json` back into the store.
    Import {
        /// The archive file.
        file: PathBuf,
        /// The archive holds this project at another path or on another machine (the one
        /// archived project with this project's name that this store has never seen): import
        /// its learnings into this project. Without it they keep the old project, shown nowhere
        /// here, and the import names that project.
        #[arg(long)]
        into_this_project: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScopeArg {
    /// This project, only you.
    Project,
    /// Every project, only you.
    User,
    /// Shared with your team (team store only).
    Team,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ArchiveFormat {
    /// Markdown, for people.
    Md,
    /// JSON, for `mem memory import`.
    Json,
}

impl MemoryArgs {
    /// Whether the command works through a whole store or archive (the migration, an archive
    /// written or read back): it allocates in bulk (`mem_alloc`).
    pub fn allocates_in_bulk(&self) -> bool {
        matches!(
            self.command,
            MemoryCommand::Migrate { .. }
                | MemoryCommand::Store(StoreCommand::Import { .. } | StoreCommand::Archive { .. })
        )
    }
}

/// Runs `mem memory ...`.
pub fn run(args: MemoryArgs, settings: &Settings) -> Result<()> {
    let memory = crate::open::memory(settings)?;
    let command = match args.command {
        // The local database is the source: the configured store is not opened.
        MemoryCommand::Migrate { to } => {
            let config = memory.tier_config().map_err(lib_error)?;
            return migrate(settings, &memory, &config, to, &mut io::stdout());
        }
        MemoryCommand::Store(command) => command,
    };
    let tiers = memory.tiers().map_err(lib_error)?;
    let mut out = io::stdout().lock();
    let json = settings.json;
    match command {
        StoreCommand::Stats => stats(&tiers, json, &mut out),
        StoreCommand::Core => {
            let t = tiers.tier0().map_err(lib_error)?;
            tier(0, &t, json, &mut out)
        }
        StoreCommand::Selected { max_tokens } => {
            let t = tiers.tier1(max_tokens).map_err(lib_error)?;
            tier(1, &t, json, &mut out)
        }
        StoreCommand::Archive { format, output } => {
            archive_cmd(&tiers, format, output, json, &mut out)
        }
        StoreCommand::Search { query, limit } => {
            search(&tiers, &query.join(" "), limit, json, &mut out)
        }
        StoreCommand::Add {
            title,
            content,
            category,
            tags,
            context,
            global,
            scope,
        } => {
            let scope = match (scope, global) {
                (Some(ScopeArg::Team), _) => LearningScope::Team,
                (Some(ScopeArg::User), _) | (None, true) => LearningScope::User,
                (Some(ScopeArg::Project), _) | (None, false) => LearningScope::Project,
            };
            let content = if content == "-" {
                read_stdin_content()?
            } else {
                content
            };
            let added = tiers
                .add(&NewLearning {
                    title: &title,
                    content: &content,
                    category: &category,
                    tags: &tags,
                    context: context.as_deref(),
                    scope,
                })
                .map_err(lib_error)?;
            let l = &added.learning;
            if json {
                let v =
                    json!({"id": format!("L{}", l.id), "learning": l, "withheld": added.withheld});
                writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
            } else {
                let scope = match (&l.team, &l.project_key) {
                    (Some(team), _) => format!("team {}", safe_line(team)),
                    (None, Some(_)) => "this project".to_owned(),
                    (None, None) => "every project".to_owned(),
                };
                writeln!(
                    out,
                    "added L{} [{}] {} (for {scope})",
                    l.id,
                    safe_line(&l.category),
                    safe_line(&l.title)
                )?;
                withheld_line(added.withheld, &mut out)?;
            }
            Ok(())
        }
        StoreCommand::Clean { dry_run } => clean(&tiers, dry_run, json, &mut out),
        StoreCommand::Show { id } => show(&tiers, &parse_id(&id)?, json, &mut out),
        StoreCommand::Forget { id } => {
            let id = parse_id(&id)?;
            let forgot = tiers.forget(&id).map_err(lib_error)?;
            print_warnings(&forgot.warnings);
            let f = &forgot.forgotten;
            if json {
                writeln!(out, "{}", crate::render::json_pretty(f)?)?;
            } else {
                // A learning lived in the store: name the backend as `stats` does (a server's
                // URL without its password); an entry or a note lived in its file.
                let from = match id {
                    MemoryId::Learning(_) => {
                        format!("the {} store {}", tiers.backend(), f.location)
                    }
                    _ => f.location.clone(),
                };
                writeln!(
                    out,
                    "forgot {} ({} \"{}\") from {}",
                    f.id,
                    f.source.as_str(),
                    safe_line(&f.title),
                    safe_line(&from)
                )?;
            }
            Ok(())
        }
        StoreCommand::Reindex => {
            let r = tiers.reindex().map_err(lib_error)?;
            if json {
                writeln!(out, "{}", crate::render::json_pretty(&r)?)?;
            } else {
                writeln!(out, "reindexed {} files ({} read)", r.reindexed, r.read)?;
                for w in &r.warnings {
                    writeln!(io::stderr(), "warning: {}", safe_line(w))?;
                }
            }
            Ok(())
        }
        StoreCommand::Pref { key, value, unset } => pref(&tiers, key, value, unset, json, &mut out),
        StoreCommand::Import {
            file,
            into_this_project,
        } => {
            let text = mem_core::fsread::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let r = tiers
                .import(&text, &file, into_this_project)
                .map_err(lib_error)?;
            if json {
                writeln!(out, "{}", crate::render::json_pretty(&r)?)?;
            } else {
                writeln!(
                    out,
                    "imported {} ({} already present), {}, {}",
                    plural(r.learnings_added, "learning", "learnings"),
                    r.learnings_skipped,
                    plural(r.projects, "project", "projects"),
                    plural(r.preferences, "preference", "preferences")
                )?;
                writeln!(
                    out,
                    "memories.md: {} added ({} already there, {} evicted to keep the cap); \
                     notes: {} written ({} already there)",
                    plural(r.entries_added, "entry", "entries"),
                    r.entries_present,
                    r.entries_evicted,
                    r.notes_added,
                    r.notes_present
                )?;
                if r.learnings_moved > 0 {
                    writeln!(
                        out,
                        "{} of this project archived at {} came into this project",
                        plural(r.learnings_moved, "learning", "learnings"),
                        safe_line(
                            &r.same_name
                                .iter()
                                .map(|(_, p)| p.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    )?;
                }
                if r.learnings_elsewhere > 0 {
                    writeln!(
                        out,
                        "{} not shown here",
                        plural(
                            r.learnings_elsewhere,
                            "learning of another project is",
                            "learnings of other projects are"
                        )
                    )?;
                }
                if !into_this_project {
                    for (_, path) in &r.same_name {
                        writeln!(
                            out,
                            "an archived project of this name was at {}: if it is this project, \
                             import again with --into-this-project",
                            safe_line(path)
                        )?;
                    }
                }
                for id in &r.notes_kept_existing {
                    writeln!(
                        out,
                        "kept {}: a different file of that name exists",
                        safe_line(id)
                    )?;
                }
                for id in &r.skipped {
                    writeln!(
                        out,
                        "skipped {}: no such note dir here ([recall] dirs)",
                        safe_line(id)
                    )?;
                }
                withheld_line(r.withheld, &mut out)?;
            }
            Ok(())
        }
    }
}

/// The content of `mem memory add TITLE -`: standard input, read up to one byte over the
/// store's limit (1 MiB) so an oversized lesson is refused by the store's own check with its
/// size, never cut.
fn read_stdin_content() -> Result<String> {
    use std::io::Read as _;
    let limit = mem_tiers::MAX_CONTENT_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit)
        .read_to_end(&mut bytes)
        .context("cannot read the content from standard input")?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the content on standard input is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn parse_id(id: &str) -> Result<MemoryId> {
    Ok(id.parse::<MemoryId>()?)
}

fn withheld_line(n: usize, out: &mut impl Write) -> Result<()> {
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        writeln!(
            out,
            "withheld {n} secret{s} (stored as {})",
            mem_core::secrets::REDACTED
        )?;
    }
    Ok(())
}

fn tier(n: u8, t: &TierText, json: bool, out: &mut impl Write) -> Result<()> {
    if json {
        let v = json!({"tier": n, "text": t.text, "tokens": t.tokens, "max_tokens": t.max_tokens, "dropped": t.dropped});
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
        return Ok(());
    }
    write!(out, "{}", safe(&t.text))?;
    let mut err = io::stderr().lock();
    writeln!(
        err,
        "tier {n}: {} tokens (budget: fewer than {})",
        t.tokens, t.max_tokens
    )?;
    if !t.dropped.is_empty() {
        writeln!(err, "dropped to fit: {}", safe_line(&t.dropped.join(", ")))?;
    }
    Ok(())
}

fn search(
    tiers: &Tiers<'_>,
    q: &str,
    limit: usize,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    let found = tiers
        .search(&SearchRequest {
            text: q.to_owned(),
            limit,
            ..SearchRequest::default()
        })
        .map_err(lib_error)?;
    if found.stale {
        // On stderr, in `--json` mode too (its output stays the array of hits).
        eprintln!("warning: index not refreshed: the store is read-only");
    }
    print_warnings(&found.warnings);
    let hits = found.hits;
    if json {
        let v: Vec<_> = hits
            .iter()
            .map(|h| {
                let mut v = hit_json(h);
                v["score"] = json!(h.score);
                v
            })
            .collect();
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
        return Ok(());
    }
    if hits.is_empty() {
        writeln!(out, "no memory matches {:?}", safe_line(q).as_ref())?;
        return Ok(());
    }
    for h in &hits {
        writeln!(
            out,
            "{}  {}  {}  {}  {}",
            safe_line(&h.id),
            h.source.as_str(),
            safe_line(&h.scope),
            age(h.updated_ms),
            safe_line(&h.title)
        )?;
        let snippet = mem_tiers::tiers::one_line(&h.snippet, 160);
        writeln!(out, "    {}", safe_line(&snippet))?;
    }
    Ok(())
}

fn show(tiers: &Tiers<'_>, id: &MemoryId, json: bool, out: &mut impl Write) -> Result<()> {
    let s = tiers.show(id).map_err(lib_error)?;
    if json {
        writeln!(out, "{}", crate::render::json_pretty(&s)?)?;
        return Ok(());
    }
    let d = &s.document;
    writeln!(out, "id: {}", safe_line(&d.id))?;
    writeln!(
        out,
        "source: {} ({})",
        d.source.as_str(),
        safe_line(&d.scope)
    )?;
    writeln!(out, "title: {}", safe_line(&d.title))?;
    if let Some(p) = &d.path {
        writeln!(out, "path: {}", safe_line(p))?;
    }
    if let Some(l) = &s.learning {
        writeln!(out, "category: {}", safe_line(&l.category))?;
        if !l.tags.is_empty() {
            writeln!(out, "tags: {}", safe_line(&l.tags.join(", ")))?;
        }
        if let Some(c) = &l.context {
            writeln!(out, "context: {}", safe_line(c))?;
        }
        writeln!(out, "age: {}", age(l.created_ms))?;
        writeln!(out)?;
        writeln!(out, "{}", safe(&l.content))?;
    } else {
        writeln!(out, "age: {}", age(d.updated_ms))?;
        writeln!(out)?;
        writeln!(out, "{}", safe(d.body.trim_end()))?;
    }
    Ok(())
}

fn stats(tiers: &Tiers<'_>, json: bool, out: &mut impl Write) -> Result<()> {
    let s = tiers.stats().map_err(lib_error)?;
    let backend = tiers.backend();
    if json {
        let mut v = serde_json::to_value(&s)?;
        v["backend"] = json!(backend);
        writeln!(out, "{}", crate::render::json_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "backend: {backend}")?;
    writeln!(out, "database: {}", safe_line(&s.database))?;
    if let Some(p) = &s.project {
        writeln!(out, "project: {}", safe_line(p))?;
    }
    writeln!(out, "projects: {}", s.store.projects)?;
    writeln!(out, "user preferences: {}", s.store.user_preferences)?;
    writeln!(
        out,
        "learnings: {} ({} visible here)",
        s.store.learnings, s.visible_learnings
    )?;
    for (c, n) in &s.store.learnings_by_category {
        writeln!(out, "  {}: {n}", safe_line(c))?;
    }
    let docs = |k: &str| s.store.documents.get(k).copied().unwrap_or(0);
    writeln!(
        out,
        "indexed: {}, {} ({})",
        plural(docs("entry"), "memories.md entry", "memories.md entries"),
        plural(docs("note"), "note", "notes"),
        plural(s.store.files, "file", "files")
    )?;
    writeln!(out, "short-term: {} messages", s.short_term_messages)?;
    writeln!(
        out,
        "tier 0: {} tokens (budget: fewer than {})",
        s.tier0_tokens.0, s.tier0_tokens.1
    )?;
    writeln!(
        out,
        "tier 1: {} tokens (budget: fewer than {})",
        s.tier1_tokens.0, s.tier1_tokens.1
    )?;
    writeln!(out, "schema version: {}", s.store.schema_version)?;
    Ok(())
}

fn clean(tiers: &Tiers<'_>, dry_run: bool, json: bool, out: &mut impl Write) -> Result<()> {
    let r = tiers.clean(dry_run).map_err(lib_error)?;
    if json {
        writeln!(out, "{}", crate::render::json_pretty(&r)?)?;
        return Ok(());
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    writeln!(
        out,
        "short-term: {} messages in view{}",
        r.short_term_messages,
        if r.short_term_expired {
            " (latest session older than the limit: expired)"
        } else {
            ""
        }
    )?;
    writeln!(out, "index: {} files gone, dropped", r.index.removed)?;
    if r.search_index_merged {
        writeln!(
            out,
            "search index: merged (one segment per full-text index)"
        )?;
    }
    let config = tiers.manager().config();
    match config.learning_max_age_days {
        None => writeln!(
            out,
            "learnings: no expiry configured ([memory] learning_max_age_days)"
        )?,
        Some(days) => {
            let user = match config.user_learning_max_age_days {
                Some(d) if d == days => String::new(),
                Some(d) => format!(" (user-level ones: {d} days)"),
                None => {
                    " (user-level ones never: the user's config.toml sets no expiry)".to_owned()
                }
            };
            writeln!(
                out,
                "learnings unused for {days} days{user}: {verb} {}",
                r.expired_learnings.len()
            )?;
            for l in &r.expired_learnings {
                writeln!(out, "  L{} {}", l.id, safe_line(&l.title))?;
            }
        }
    }
    Ok(())
}

fn pref(
    tiers: &Tiers<'_>,
    key: Option<String>,
    value: Option<String>,
    unset: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    // `mem memory pref list` lists them, unless a preference is named "list".
    let key = match key {
        Some(k)
            if k == "list"
                && value.is_none()
                && !unset
                && tiers.preference(&k).map_err(lib_error)?.is_none() =>
        {
            None
        }
        k => k,
    };
    match (key, value) {
        (None, _) => {
            let prefs = tiers.preferences().map_err(lib_error)?;
            if json {
                writeln!(out, "{}", crate::render::json_pretty(&prefs)?)?;
            } else if prefs.is_empty() {
                writeln!(
                    out,
                    "no user preferences set (set one: mem memory pref model deepseek)"
                )?;
            } else {
                for (k, v) in &prefs {
                    writeln!(out, "{} = {}", safe_line(k), safe_line(v))?;
                }
            }
        }
        (Some(k), None) if unset => {
            tiers.unset_preference(&k).map_err(lib_error)?;
            if json {
                writeln!(out, "{}", json!({"key": k, "value": null}))?;
            } else {
                writeln!(out, "{} unset", safe_line(&k))?;
            }
        }
        (Some(k), None) => {
            let v = tiers.preference(&k).map_err(lib_error)?;
            let v = v.as_ref();
            if json {
                writeln!(out, "{}", json!({"key": k, "value": v}))?;
            } else {
                match v {
                    Some(v) => writeln!(out, "{}", safe_line(v))?,
                    None => bail!("the preference {:?} is not set", safe_line(&k).as_ref()),
                }
            }
        }
        (Some(k), Some(v)) => {
            let set = tiers.set_preference(&k, &v).map_err(lib_error)?;
            let (stored, withheld) = (set.stored, set.withheld);
            if json {
                writeln!(
                    out,
                    "{}",
                    json!({"key": k, "value": stored, "withheld": withheld})
                )?;
            } else {
                writeln!(out, "{} = {}", safe_line(&k), safe_line(&stored))?;
                withheld_line(withheld, out)?;
            }
        }
    }
    Ok(())
}

fn archive_cmd(
    tiers: &Tiers<'_>,
    format: ArchiveFormat,
    output: Option<PathBuf>,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    let a = tiers.archive().map_err(lib_error)?;
    let format = if json { ArchiveFormat::Json } else { format };
    let text = match format {
        ArchiveFormat::Json => format!("{}\n", crate::render::json_pretty(&a)?),
        ArchiveFormat::Md => tiers.archive_markdown(&a),
    };
    match output {
        Some(path) => {
            mem_tiers::index::write_atomic(&path, text.as_bytes())?;
            writeln!(
                io::stderr(),
                "wrote {}, {}, {}, {}, {} to {}",
                plural(a.learnings.len(), "learning", "learnings"),
                plural(a.projects.len(), "project", "projects"),
                plural(a.user_preferences.len(), "preference", "preferences"),
                plural(a.entries.len(), "memories.md entry", "memories.md entries"),
                plural(a.notes.len(), "note", "notes"),
                path.display()
            )?;
        }
        None if format == ArchiveFormat::Json => write!(out, "{text}")?,
        None => write!(out, "{}", safe(&text))?,
    }
    Ok(())
}

/// `mem memory migrate [--to URL]`: copies the local SQLite store to the team store at `to`
/// (default: the configured one). Idempotent and resumable; prints counts.
fn migrate(
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
        .map_err(lib_error)?;
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
