//! The PostgreSQL backend of [`MemoryStore`]: team memory on a server a team already runs
//! (SPEC "mem-tiers", "team memory"; `docs/TEAM.md`).
//!
//! One mewmem schema (default `mewmem`) holds the same records as the SQLite store, each row
//! stamped with its **author**; a learning may also carry a **team** (scope `team`). A store is
//! opened for one author and at most one team ([`PgOptions`]): it writes every row as that
//! author and reads only what that author may see: their own rows (user and project scope)
//! and the rows shared with their team. Another author's user- and project-scoped rows are
//! never returned, counted, touched or deleted.
//!
//! Search: a ranked full-text pass (`tsvector`, `english` configuration, GIN index,
//! `plainto_tsquery`, so the user's words are plain text and never `tsquery` syntax), then a
//! substring pass (`ILIKE` with every `%`, `_`, `\` escaped, served by a `pg_trgm` GIN index)
//! for identifiers, paths, Chinese and short terms, as the SQLite store does with FTS5 and its
//! trigram index.
//!
//! The client is the synchronous `postgres` crate (the store API is synchronous) behind an
//! `r2d2` pool; TLS is rustls on the ring provider, used when the URL asks for it
//! (`sslmode=require`); certificates are verified against the platform's roots.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use postgres::config::SslMode;
use postgres::types::ToSql;
use postgres::{GenericClient, Row};
use r2d2_postgres::PostgresConnectionManager;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};
use crate::model::{
    Document, Expiry, FileState, LearningEntry, LearningFilter, NewLearning, ProjectRecord,
    SearchHit, SearchQuery, SourceKind, StoreStats,
};
use crate::query;
use crate::rows::{
    self, DOC_COLS, FILE_COLS, LEARNING_COLS_TEAM as LEARNING_COLS, PROJECT_COLS, source_list,
    to_json as json,
};
use crate::store::MemoryStore;

/// The default PostgreSQL schema holding mewmem's tables.
pub const DEFAULT_SCHEMA: &str = "mewmem";

/// The default connect timeout (10 s): how long opening a connection may take before a clear
/// error.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default number of pooled connections per process.
pub const DEFAULT_POOL_SIZE: u32 = 4;

/// The team store's migrations; `PG_MIGRATIONS[i]` takes the schema from version `i` to
/// `i + 1`. Run in one transaction under an advisory lock, so concurrent opens migrate once.
pub const PG_MIGRATIONS: &[&str] = &[PG_V1, PG_V2, PG_V3];

/// The team store's schema version this build writes.
pub const PG_LATEST_VERSION: i64 = PG_MIGRATIONS.len() as i64;

/// Version 1: the records of the SQLite schema (versions 1 and 2) with an author on every
/// row and a team on learnings and documents; the word index (`tsv`, GIN) and the trigram
/// index (`pg_trgm`, GIN) over each document's title and body.
const PG_V1: &str = r#"
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE projects (
    author TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    language TEXT,
    framework TEXT,
    test_command TEXT,
    custom_commands TEXT NOT NULL DEFAULT '{}',
    notes TEXT NOT NULL DEFAULT '[]',
    created_ms BIGINT NOT NULL,
    last_used_ms BIGINT NOT NULL,
    PRIMARY KEY (author, key)
);
CREATE INDEX projects_last_used ON projects (author, last_used_ms);
CREATE TABLE user_preferences (
    author TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (author, key)
);
CREATE TABLE learnings (
    id BIGSERIAL PRIMARY KEY,
    author TEXT NOT NULL,
    team TEXT,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    context TEXT,
    project_key TEXT,
    created_ms BIGINT NOT NULL,
    last_used_ms BIGINT NOT NULL,
    origin TEXT
);
CREATE INDEX learnings_author ON learnings (author, created_ms DESC, id DESC);
CREATE INDEX learnings_team ON learnings (team, created_ms DESC, id DESC) WHERE team IS NOT NULL;
CREATE INDEX learnings_category ON learnings (category, created_ms DESC, id DESC);
CREATE UNIQUE INDEX learnings_origin ON learnings (author, origin) WHERE origin IS NOT NULL;
CREATE TABLE files (
    author TEXT NOT NULL,
    path TEXT NOT NULL,
    root TEXT NOT NULL,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (author, path)
);
CREATE INDEX files_root ON files (author, root);
CREATE TABLE docs (
    seq BIGSERIAL UNIQUE,
    author TEXT NOT NULL,
    team TEXT,
    doc_id TEXT NOT NULL,
    source TEXT NOT NULL,
    scope TEXT NOT NULL,
    project_key TEXT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    path TEXT,
    updated_ms BIGINT NOT NULL,
    tsv TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, title), 'A')
        || setweight(to_tsvector('english'::regconfig, body), 'B')
    ) STORED,
    PRIMARY KEY (author, doc_id)
);
CREATE INDEX docs_tsv ON docs USING GIN (tsv);
CREATE INDEX docs_trgm ON docs USING GIN ((title || ' ' || body) gin_trgm_ops);
CREATE INDEX docs_path ON docs (author, path);
CREATE INDEX docs_source ON docs (source, updated_ms);
CREATE INDEX docs_team ON docs (team) WHERE team IS NOT NULL;
"#;

/// Version 2: two indexes for a search over a large store (issue 29, 1,000,000 learnings).
/// `docs_recent` (newest first) lets the capped word pass and the substring pass walk the
/// newest documents and stop at the cap instead of fetching every match to sort it (a word in
/// 14 % of the rows: 600 to 17 ms); the planner still takes the GIN indexes for a rare word.
/// `docs_title_tsv` indexes the title pass's `to_tsvector(title)`, so it reads the documents
/// whose title holds the words, not every match (570 to 190 ms). Built in the migration's
/// transaction: writers wait for it once (seconds at 1,000,000 documents).
const PG_V2: &str = r#"
CREATE INDEX IF NOT EXISTS docs_recent ON docs (updated_ms DESC, seq DESC);
CREATE INDEX IF NOT EXISTS docs_title_tsv ON docs
    USING GIN (to_tsvector('english'::regconfig, title));
"#;

/// The expression of a document's visibility lexemes ([`VISIBLE_LEXEMES`]) with its columns
/// prefixed by `$d` (`""` in the indexes of [`PG_V3`], `"d."` in a search): one text for both,
/// so the planner always matches a search's expression to the indexes.
macro_rules! visible_lexemes {
    ($d:literal) => {
        concat!(
            "array_to_tsvector(array_remove(ARRAY['a' || md5(",
            $d,
            "author), CASE WHEN ",
            $d,
            "project_key IS NULL THEN 'u' || md5(",
            $d,
            "author) ELSE 'p' || md5(",
            $d,
            "author) || md5(",
            $d,
            "project_key) END, CASE WHEN ",
            $d,
            "team IS NOT NULL THEN 'x' || md5(",
            $d,
            "author) END, CASE WHEN ",
            $d,
            "team IS NOT NULL THEN 't' || md5(",
            $d,
            "team) END], NULL))"
        )
    };
}

/// Version 3: the word index and the title index again, each with the document's visibility
/// next to its words (issue 29, 1,000,000 learnings), so the index finds the matches a search
/// may show instead of every match, each fetched from the heap to test its author, team and
/// project (a search in one project of a store where a tenth of the rows are its own and a
/// tenth user-wide fetched five times the rows it kept). Each document's visibility is a
/// few lexemes ([`VISIBLE_LEXEMES`]) added to `tsv` (`docs_tsv_visible`) and to its title's
/// (`docs_title_tsv_visible`); a search asks for its words and its visibility
/// ([`VISIBLE_QUERY`]) in one index scan and keeps every filter it had, so the rows and the
/// ranking (`ts_rank_cd` of `tsv` without them) are unchanged. They replace `docs_tsv` and
/// `docs_title_tsv`, which every search can do without. Built in the migration's transaction:
/// writers wait for it once (a minute or two at 1,000,000 documents).
const PG_V3: &str = concat!(
    "CREATE INDEX IF NOT EXISTS docs_tsv_visible ON docs USING GIN ((tsv || ",
    visible_lexemes!(""),
    "));\nCREATE INDEX IF NOT EXISTS docs_title_tsv_visible ON docs USING GIN \
     ((to_tsvector('english'::regconfig, title) || ",
    visible_lexemes!(""),
    "));\nDROP INDEX IF EXISTS docs_tsv;\nDROP INDEX IF EXISTS docs_title_tsv;\n"
);

/// The query's words (`$5`) and the visibility [`VISIBLE_QUERY`] asks for, as one `tsquery`
/// for the indexes of schema version 3. Words that are all stop words give the empty query
/// (nothing matches, as `tsv @@` the words alone), never the visibility alone (every visible
/// row).
fn words_visible() -> String {
    format!(
        "(CASE WHEN numnode(plainto_tsquery('english'::regconfig, $5)) = 0 \
         THEN plainto_tsquery('english'::regconfig, $5) \
         ELSE plainto_tsquery('english'::regconfig, $5) && {VISIBLE_QUERY} END)"
    )
}

/// A document's visibility as lexemes (schema version 3), the expression of the indexes
/// `docs_tsv_visible` and `docs_title_tsv_visible` (a search repeats it so the planner matches
/// it to them): `a<md5 author>` on every row; `u<md5 author>` on a user-wide row (no project),
/// `p<md5 author><md5 project>` on a project's; `x<md5 author>` and `t<md5 team>` on a row
/// shared with a team. [`VISIBLE_QUERY`] asks for the lexemes of the rows [`VISIBLE_DOC`]
/// lets a store read. Hashes, so an author, a team or a project key of any characters is one
/// lexeme (at most 65 ASCII characters) that no word of English text stems to.
const VISIBLE_LEXEMES: &str = visible_lexemes!("d.");

/// The lexemes of [`VISIBLE_LEXEMES`] a store may read, as a `tsquery` of `$1` (author), `$2`
/// (team) and `$3` (the project; `NULL`: every project): its author's rows (with `$3`: the
/// user-wide ones, the project's and those shared with a team) or its team's. The same rows as
/// [`VISIBLE_DOC`], which a search keeps as its filter.
const VISIBLE_QUERY: &str = "(CASE \
    WHEN $3::text IS NULL AND $2::text IS NULL THEN ('a' || md5($1))::tsquery \
    WHEN $3::text IS NULL THEN ('a' || md5($1))::tsquery || ('t' || md5($2::text))::tsquery \
    WHEN $2::text IS NULL THEN ('u' || md5($1))::tsquery \
        || ('p' || md5($1) || md5($3::text))::tsquery || ('x' || md5($1))::tsquery \
    ELSE ('u' || md5($1))::tsquery || ('p' || md5($1) || md5($3::text))::tsquery \
        || ('x' || md5($1))::tsquery || ('t' || md5($2::text))::tsquery END)";

/// One author's rows of a checkpoint scope on the team store ([`PgStore::scope_rows`]); kept
/// as `store.json` in a checkpoint (`docs/formats/checkpoint.md`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScopeRows {
    /// The team store's schema version ([`PG_LATEST_VERSION`] when written).
    pub schema_version: i64,
    /// Whose rows they are.
    pub author: String,
    /// The learnings (every field, ids included), by id.
    pub learnings: Vec<LearningEntry>,
    /// `origin` of the learnings copied by `mem memory migrate`, by id.
    #[serde(default)]
    pub origins: BTreeMap<i64, String>,
    /// The project's row.
    pub project: Option<ProjectRecord>,
    /// The user preferences (with the user level; `None` without).
    pub preferences: Option<BTreeMap<String, String>>,
}

/// How a [`PgStore`] connects and whom it acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// The PostgreSQL schema holding mewmem's tables (created when missing): lowercase ASCII
    /// letters, digits and `_`, at most 63 bytes, not starting with a digit. Default
    /// [`DEFAULT_SCHEMA`].
    pub schema: String,
    /// The author every row is written as, and whose private rows are read (`[store] author`,
    /// default the login name). Not authentication: the server's roles are.
    pub author: String,
    /// The team whose shared rows are read, and that `--scope team` writes to (`[store]
    /// team`); `None`: no team.
    pub team: Option<String>,
    /// How long opening a connection may take (default [`DEFAULT_CONNECT_TIMEOUT`]); a URL's
    /// own `connect_timeout` wins.
    pub connect_timeout: Duration,
    /// Pooled connections per process (default [`DEFAULT_POOL_SIZE`]).
    pub pool_size: u32,
    /// A password for a URL without one (e.g. from `PGPASSWORD`); never printed.
    pub password: Option<String>,
}

impl PgOptions {
    /// The defaults for `author`: schema `mewmem`, no team, 10 s connect timeout, 4 connections.
    pub fn for_author(author: impl Into<String>) -> Self {
        PgOptions {
            schema: DEFAULT_SCHEMA.to_owned(),
            author: author.into(),
            team: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            pool_size: DEFAULT_POOL_SIZE,
            password: None,
        }
    }
}

/// `url` with its password replaced by `***` (in the user-info part and in a `password=`
/// parameter), for messages and `mem memory stats`. A string that is not a URL is returned
/// with everything after `:` in its user-info hidden the same way.
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let start = scheme_end + 3;
        let rest = &out[start..];
        let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..auth_end].rfind('@')
            && let Some(colon) = rest[..at].find(':')
        {
            out.replace_range(start + colon + 1..start + at, "***");
        }
    }
    // key=value parameters (`?password=...&...` or a libpq keyword string).
    let mut result = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.to_ascii_lowercase().find("password=") {
        let before = &rest[..i];
        let boundary = before.is_empty() || before.ends_with(['?', '&', ' ', ';']);
        result.push_str(before);
        result.push_str("password=");
        rest = &rest[i + "password=".len()..];
        if boundary {
            result.push_str("***");
            let end = rest.find(['&', ' ', '#', ';']).unwrap_or(rest.len());
            rest = &rest[end..];
        }
    }
    result.push_str(rest);
    result
}

type Pool = r2d2::Pool<PostgresConnectionManager<MakeRustlsConnect>>;
type Conn = r2d2::PooledConnection<PostgresConnectionManager<MakeRustlsConnect>>;

/// The tier store on a PostgreSQL server (team memory).
///
/// Every call is one transaction on a pooled connection. Safe to share between threads and
/// processes: learnings get ids from a sequence, so concurrent writers never collide.
pub struct PgStore {
    pool: PoolBox,
    last_connect_error: Arc<std::sync::Mutex<Option<String>>>,
    url: String,
    schema: String,
    author: String,
    team: Option<String>,
    rank_cap: usize,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.url)
            .field("schema", &self.schema)
            .field("author", &self.author)
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

/// The pool, closed off any async runtime when dropped (closing a synchronous client blocks
/// on its own runtime, which panics inside another one).
struct PoolBox(Option<Pool>);

impl Drop for PoolBox {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            blocking(move || drop(pool));
        }
    }
}

/// Runs `f` off any async runtime: the synchronous client starts its own small runtime per
/// call, which tokio forbids inside another one (the `mem` binary runs under `#[tokio::main]`).
fn blocking<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| match s.spawn(f).join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    } else {
        f()
    }
}

fn check_name(what: &'static str, name: &str, max: usize) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= max
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what,
            reason: format!(
                "{name:?}: use lowercase ASCII letters, digits and _, at most {max} bytes, not \
                 starting with a digit"
            ),
        })
    }
}

fn check_label(what: &'static str, value: &str) -> Result<()> {
    if value.trim().is_empty() || value.chars().count() > 200 || value.chars().any(char::is_control)
    {
        return Err(Error::Invalid {
            what,
            reason: format!("{value:?}: 1 to 200 characters, no control characters"),
        });
    }
    Ok(())
}

fn tls_config() -> std::result::Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_platform_verifier())
        .map(|b| b.with_no_client_auth())
        .map_err(|e| format!("cannot set up TLS: {e}"))
}

impl PgStore {
    /// Connects to `url` (`postgresql://user:password@host:port/db`, `sslmode=require` for
    /// TLS), creates the schema when missing and migrates it to [`PG_LATEST_VERSION`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for a malformed URL or bad options; [`Error::Server`] when the server
    /// cannot be reached within the connect timeout, refuses the password, or fails a query
    /// (the URL is named without its password); [`Error::ServerTooNew`] for a newer schema.
    pub fn open(url: &str, options: &PgOptions) -> Result<PgStore> {
        let shown = redact_url(url);
        check_name("schema", &options.schema, 63)?;
        check_label("author", &options.author)?;
        if let Some(t) = &options.team {
            check_label("team", t)?;
        }
        let mut config = postgres::Config::from_str(url).map_err(|e| Error::Invalid {
            what: "store url",
            reason: format!(
                "{shown}: {e} (expected postgresql://user:password@host:port/database)"
            ),
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if config.get_password().is_none()
            && let Some(p) = &options.password
        {
            config.password(p.as_str());
        }
        // TLS only when the URL asks for it: the library's default `prefer` would otherwise
        // fail on a server whose certificate the platform does not trust.
        if config.get_ssl_mode() == SslMode::Prefer {
            config.ssl_mode(SslMode::Disable);
        }
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(30));
        config.tcp_user_timeout(Duration::from_secs(30));
        config.application_name("mewmem");
        // No JIT: a search is short, and a common word's plan is costly enough for the
        // server to compile it (about 90 ms of a 1,000,000-document search, every time).
        config.options(&format!(
            "-c search_path={},public -c jit=off",
            options.schema
        ));
        let tls = match tls_config() {
            Ok(c) => c,
            Err(e) if config.get_ssl_mode() == SslMode::Require => {
                return Err(Error::Server {
                    url: shown,
                    reason: e,
                });
            }
            Err(_) => rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Server {
                url: shown.clone(),
                reason: e.to_string(),
            })?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        };
        let timeout = *config
            .get_connect_timeout()
            .unwrap_or(&options.connect_timeout);
        let last = Arc::new(std::sync::Mutex::new(None));
        let no_password = config.get_password().is_none();
        let manager = PostgresConnectionManager::new(config, MakeRustlsConnect::new(tls));
        // One direct attempt first: the pool retries a failed connect until its timeout, so a
        // refused connection, a wrong or missing password would otherwise cost the whole
        // connect timeout (~10 s) although the answer came at once.
        // The synchronous client runs its own runtime: on a thread of its own, so that opening
        // the store from async code (the hooks, MCP) does not panic ("Cannot start a runtime
        // from within a runtime"); the connection is closed on that thread too.
        let attempt = std::thread::scope(|scope| {
            scope
                .spawn(|| r2d2::ManageConnection::connect(&manager).map(drop))
                .join()
        });
        let attempt = match attempt {
            Ok(result) => result,
            Err(_) => {
                return Err(Error::Server {
                    url: shown,
                    reason: "the connection attempt panicked".to_owned(),
                });
            }
        };
        if let Err(e) = attempt {
            let mut reason = format!("cannot connect: {}", chain(&e));
            if no_password && reason.contains("password") {
                reason.push_str(
                    " (no password given: put it in the URL or set PGPASSWORD, see docs/TEAM.md)",
                );
            }
            return Err(Error::Server {
                url: shown,
                reason: server_reason(&reason),
            });
        }
        let pool = r2d2::Pool::builder()
            .max_size(options.pool_size.max(1))
            .min_idle(Some(0))
            .test_on_check_out(false)
            .connection_timeout(timeout)
            .error_handler(Box::new(KeepLastError(last.clone())))
            .build_unchecked(manager);
        let store = PgStore {
            pool: PoolBox(Some(pool)),
            last_connect_error: last,
            url: shown,
            schema: options.schema.clone(),
            author: options.author.clone(),
            team: options.team.clone(),
            rank_cap: query::RANK_CAP,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Sets how many matches the word pass ranks at most ([`query::RANK_CAP`] by default): the
    /// newest `cap` visible matches (`updated_ms`, then insertion order) are ranked by
    /// `ts_rank_cd` and the best returned; fewer matches are ranked exactly. For tests and
    /// benchmarks.
    #[doc(hidden)]
    pub fn with_rank_cap(mut self, cap: usize) -> Self {
        self.rank_cap = cap.max(1);
        self
    }

    /// The URL without its password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema holding mewmem's tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The author this store writes as.
    pub fn author(&self) -> &str {
        &self.author
    }

    /// The team this store shares with, if any.
    pub fn team(&self) -> Option<&str> {
        self.team.as_deref()
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Server {
            url: self.url.clone(),
            reason: server_reason(&e.to_string()),
        }
    }

    fn pg_err(&self, e: postgres::Error) -> Error {
        self.err(chain(&e))
    }

    fn conn(&self) -> Result<Conn> {
        let Some(pool) = &self.pool.0 else {
            return Err(self.err("the store is closed"));
        };
        pool.get().map_err(|e| {
            let last = self
                .last_connect_error
                .lock()
                .ok()
                .and_then(|mut g| g.take());
            match last {
                Some(reason) => self.err(format!("cannot connect: {reason}")),
                None => self.err(e),
            }
        })
    }

    /// Runs `f` in one transaction (committed when it returns `Ok`).
    fn tx<T: Send>(
        &self,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> std::result::Result<T, postgres::Error> + Send,
    ) -> Result<T> {
        blocking(|| {
            let mut conn = self.conn()?;
            let mut tx = conn.transaction().map_err(|e| self.pg_err(e))?;
            let v = f(&mut tx).map_err(|e| self.pg_err(e))?;
            tx.commit().map_err(|e| self.pg_err(e))?;
            Ok(v)
        })
    }

    /// Runs read-only queries on one connection.
    fn read<T: Send>(
        &self,
        f: impl FnOnce(&mut Conn) -> std::result::Result<T, postgres::Error> + Send,
    ) -> Result<T> {
        blocking(|| {
            let mut conn = self.conn()?;
            f(&mut conn).map_err(|e| self.pg_err(e))
        })
    }

    fn migrate(&self) -> Result<()> {
        let schema = self.schema.clone();
        let found = self.tx(move |tx| {
            // One lock for every schema: CREATE EXTENSION is database-wide.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext('mewmem migrate'))", &[])?;
            let exists = tx
                .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])?
                .is_some();
            if !exists {
                tx.batch_execute(&format!("CREATE SCHEMA \"{schema}\""))?;
            }
            tx.batch_execute(
                "CREATE TABLE IF NOT EXISTS mewmem_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            )?;
            let version: i64 = tx
                .query_opt(
                    "SELECT value::bigint FROM mewmem_meta WHERE key = 'schema_version'",
                    &[],
                )?
                .map(|r| r.get(0))
                .unwrap_or(0);
            let mut v = version;
            while v < PG_LATEST_VERSION {
                let Some(sql) = PG_MIGRATIONS.get(v as usize) else {
                    break;
                };
                tx.batch_execute(sql)?;
                v += 1;
            }
            if v != version {
                tx.execute(
                    "INSERT INTO mewmem_meta (key, value) VALUES ('schema_version', $1) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    &[&v.to_string()],
                )?;
                tracing::debug!(from = version, to = v, "migrated the team store");
            }
            Ok(version)
        })?;
        if found > PG_LATEST_VERSION {
            return Err(Error::ServerTooNew {
                url: self.url.clone(),
                schema: self.schema.clone(),
                found,
                known: PG_LATEST_VERSION,
            });
        }
        Ok(())
    }

    fn schema_version(&self) -> Result<i64> {
        self.read(|c| {
            Ok(c.query_opt(
                "SELECT value::bigint FROM mewmem_meta WHERE key = 'schema_version'",
                &[],
            )?
            .map(|r| r.get(0))
            .unwrap_or(0))
        })
    }

    /// Copies a learning from another store (`mem memory migrate`), once: `origin` names it
    /// in its old home (e.g. `sqlite:/home/a/.mewcode/tiers/memory.db#L42`), and a learning of
    /// this author with the same origin is never copied again. Keeps its times, category, tags,
    /// context and project; written as this store's author, private (scope user or project).
    /// Returns the new learning, or `None` when it was copied before.
    ///
    /// # Errors
    /// [`Error::Server`].
    pub fn import_learning(
        &self,
        learning: &LearningEntry,
        origin: &str,
    ) -> Result<Option<LearningEntry>> {
        let author = self.author.clone();
        let tags = json(&learning.tags);
        let l = learning.clone();
        let origin = origin.to_owned();
        self.tx(move |tx| {
            let row = tx.query_opt(
                "INSERT INTO learnings (author, team, title, content, category, tags, context, \
                 project_key, created_ms, last_used_ms, origin) \
                 VALUES ($1, NULL, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                 ON CONFLICT (author, origin) WHERE origin IS NOT NULL DO NOTHING RETURNING id",
                &[
                    &author,
                    &l.title,
                    &l.content,
                    &l.category,
                    &tags,
                    &l.context,
                    &l.project_key,
                    &l.created_ms,
                    &l.last_used_ms,
                    &origin,
                ],
            )?;
            let Some(row) = row else { return Ok(None) };
            let entry = LearningEntry {
                id: row.get(0),
                author: Some(author.clone()),
                team: None,
                ..l
            };
            insert_learning_doc(tx, &entry)?;
            Ok(Some(entry))
        })
    }

    /// This author's rows of one checkpoint scope, read in one repeatable-read transaction
    /// (a consistent snapshot): the learnings with `project_key` (and, with `user`, those with
    /// no project), the project's row, and with `user` the user preferences. Rows other
    /// authors share with the team are theirs, not part of it.
    ///
    /// # Errors
    /// [`Error::Server`].
    pub fn scope_rows(&self, project_key: &str, user: bool) -> Result<ScopeRows> {
        let author = self.author.clone();
        let key = project_key.to_owned();
        let version = self.schema_version()?;
        let (learnings, origins, project, preferences) = self.tx(move |tx| {
            tx.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")?;
            let learnings = tx.query(
                &format!(
                    "SELECT {LEARNING_COLS} FROM learnings WHERE author = $1 \
                     AND (project_key = $2 OR ($3 AND project_key IS NULL)) ORDER BY id"
                ),
                &[&author, &key, &user],
            )?;
            let origins: Vec<(i64, String)> = tx
                .query(
                    "SELECT id, origin FROM learnings WHERE author = $1 AND origin IS NOT NULL \
                     AND (project_key = $2 OR ($3 AND project_key IS NULL)) ORDER BY id",
                    &[&author, &key, &user],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let project = tx.query_opt(
                &format!("SELECT {PROJECT_COLS} FROM projects WHERE author = $1 AND key = $2"),
                &[&author, &key],
            )?;
            let preferences: Option<BTreeMap<String, String>> = if user {
                Some(
                    tx.query(
                        "SELECT key, value FROM user_preferences WHERE author = $1",
                        &[&author],
                    )?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect(),
                )
            } else {
                None
            };
            Ok((learnings, origins, project, preferences))
        })?;
        Ok(ScopeRows {
            schema_version: version,
            author: self.author.clone(),
            learnings: self.map(&learnings, rows::learning)?,
            origins: origins.into_iter().collect(),
            project: self.map_opt(project, rows::project)?,
            preferences,
        })
    }

    /// Puts this author's rows of a checkpoint scope back as `rows` has them, in one
    /// transaction: the scope's learnings (and their search documents) deleted and inserted
    /// again with the same ids, the project's row written back (removed when `rows` has
    /// none), and with `user` the user preferences replaced. Other authors' and other
    /// projects' rows are not touched; on any error nothing is written.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `rows` belongs to another author; [`Error::Server`].
    pub fn replace_scope_rows(
        &self,
        project_key: &str,
        user: bool,
        rows: &ScopeRows,
    ) -> Result<()> {
        if rows.author != self.author {
            return Err(Error::Invalid {
                what: "checkpoint rows",
                reason: format!(
                    "they are {}'s; this store acts for {}",
                    rows.author, self.author
                ),
            });
        }
        let author = self.author.clone();
        let key = project_key.to_owned();
        let rows = rows.clone();
        let now = chrono::Utc::now().timestamp_millis();
        self.tx(move |tx| {
            tx.execute(
                "DELETE FROM docs d USING learnings l WHERE d.source = 'learning' \
                 AND d.author = l.author AND d.doc_id = 'L' || l.id AND l.author = $1 \
                 AND (l.project_key = $2 OR ($3 AND l.project_key IS NULL))",
                &[&author, &key, &user],
            )?;
            tx.execute(
                "DELETE FROM learnings WHERE author = $1 \
                 AND (project_key = $2 OR ($3 AND project_key IS NULL))",
                &[&author, &key, &user],
            )?;
            for l in &rows.learnings {
                let origin = rows.origins.get(&l.id);
                tx.execute(
                    "INSERT INTO learnings (id, author, team, title, content, category, tags, \
                     context, project_key, created_ms, last_used_ms, origin) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                    &[
                        &l.id,
                        &author,
                        &l.team,
                        &l.title,
                        &l.content,
                        &l.category,
                        &json(&l.tags),
                        &l.context,
                        &l.project_key,
                        &l.created_ms,
                        &l.last_used_ms,
                        &origin,
                    ],
                )?;
                let entry = LearningEntry {
                    author: Some(author.clone()),
                    ..l.clone()
                };
                insert_learning_doc(tx, &entry)?;
            }
            match &rows.project {
                Some(p) => {
                    tx.execute(
                        &format!(
                            "INSERT INTO projects (author, {PROJECT_COLS}) \
                             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) \
                             ON CONFLICT (author, key) DO UPDATE SET name=excluded.name, \
                             path=excluded.path, language=excluded.language, \
                             framework=excluded.framework, test_command=excluded.test_command, \
                             custom_commands=excluded.custom_commands, notes=excluded.notes, \
                             created_ms=excluded.created_ms, last_used_ms=excluded.last_used_ms"
                        ),
                        &[
                            &author,
                            &p.key,
                            &p.name,
                            &p.path,
                            &p.language,
                            &p.framework,
                            &p.test_command,
                            &json(&p.custom_commands),
                            &json(&p.notes),
                            &p.created_ms,
                            &p.last_used_ms,
                        ],
                    )?;
                }
                None => {
                    tx.execute(
                        "DELETE FROM projects WHERE author = $1 AND key = $2",
                        &[&author, &key],
                    )?;
                }
            }
            if user {
                tx.execute("DELETE FROM user_preferences WHERE author = $1", &[&author])?;
                for (k, v) in rows.preferences.iter().flatten() {
                    tx.execute(
                        "INSERT INTO user_preferences (author, key, value, updated_ms) \
                         VALUES ($1, $2, $3, $4)",
                        &[&author, k, v, &now],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// The raw pool connection, for benchmarks and tests.
    #[doc(hidden)]
    pub fn with_client<T: Send>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error> + Send,
    ) -> Result<T> {
        self.read(|c| f(c))
    }

    /// One search pass: the word pass (`word`: the query's words, `plainto_tsquery`) ranks at
    /// most [`PgStore::with_rank_cap`] matches, the newest visible ones (found through the
    /// GIN index, sorted by recency, cut at the cap), by `ts_rank_cd` computed on those only;
    /// the substring pass (`likes`, `ILIKE` through `pg_trgm`) returns the newest matches. A
    /// second word pass, not capped, ranks the matches whose title holds the query (few
    /// documents hold a word in their short title), so the best match is never cut by the
    /// cap; the `limit` best of both are returned. "Newest" is `updated_ms` (then `seq`);
    /// SQLite walks rowids instead (see `SqliteStore`'s search): the two agree on title
    /// matches and, below the cap, on everything.
    fn search_pass(
        &self,
        word: Option<&str>,
        likes: &[String],
        q: &SearchQuery,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let cols = "d.doc_id, d.source, d.scope, d.title, d.body, d.path, d.updated_ms";
        let words_visible = words_visible();
        let mut sql = String::new();
        let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![
            Box::new(self.author.clone()),
            Box::new(self.team.clone()),
            Box::new(q.visible_in.clone()),
            Box::new(source_list(&q.sources)),
        ];
        match word {
            Some(text) => {
                args.push(Box::new(text.to_owned()));
                // The index scan: the words and the visibility in `docs_tsv_visible`.
                sql.push_str(&format!(
                    "SELECT {cols}, d.tsv, d.seq FROM docs d \
                     WHERE d.tsv @@ plainto_tsquery('english'::regconfig, $5) \
                     AND (d.tsv || {VISIBLE_LEXEMES}) @@ {words_visible}"
                ));
            }
            None => sql.push_str(&format!(
                "SELECT {cols}, 0::float8 AS score FROM docs d WHERE TRUE"
            )),
        }
        sql.push_str(&format!(" AND {VISIBLE_DOC}"));
        sql.push_str(" AND ($4 = '' OR strpos($4, ',' || d.source || ',') > 0)");
        if let Some(scope) = &q.scope {
            args.push(Box::new(scope.clone()));
            sql.push_str(&format!(" AND d.scope = ${}", args.len()));
        }
        for like in likes {
            args.push(Box::new(query::like_pattern(like)));
            let n = args.len();
            sql.push_str(&format!(
                " AND (d.title || ' ' || d.body) ILIKE ${n} ESCAPE '\\'"
            ));
        }
        if word.is_some() {
            args.push(Box::new(self.rank_cap as i64));
            let cap = args.len();
            args.push(Box::new(limit as i64));
            let n = args.len();
            // The capped pass over titles and bodies, and the uncapped pass over the matches
            // whose title holds the query: an exact title match older than the newest
            // `rank_cap` matches is still ranked; the `limit` best of both are returned.
            let rank = "-ts_rank_cd(c.tsv, plainto_tsquery('english'::regconfig, $5))::float8";
            let ranked = "c.doc_id, c.source, c.scope, c.title, c.body, c.path, c.updated_ms";
            sql = format!(
                "SELECT u.doc_id, u.source, u.scope, u.title, u.body, u.path, u.updated_ms, \
                 u.score FROM ( \
                 (SELECT {ranked}, c.seq, {rank} AS score \
                  FROM ({sql} ORDER BY d.updated_ms DESC, d.seq DESC LIMIT ${cap}) c) \
                 UNION \
                 (SELECT {ranked}, c.seq, {rank} AS score \
                  FROM ({sql} AND to_tsvector('english'::regconfig, d.title) \
                  @@ plainto_tsquery('english'::regconfig, $5) \
                  AND (to_tsvector('english'::regconfig, d.title) || {VISIBLE_LEXEMES}) \
                  @@ {words_visible}) c \
                  ORDER BY score, c.updated_ms DESC, c.seq DESC LIMIT ${n})) u \
                 ORDER BY u.score, u.updated_ms DESC, u.seq DESC LIMIT ${n}"
            );
        } else {
            args.push(Box::new(limit as i64));
            let n = args.len();
            sql.push_str(&format!(
                " ORDER BY d.updated_ms DESC, d.seq DESC LIMIT ${n}"
            ));
        }
        let terms = query::terms(&q.text);
        let found = self.read(move |c| {
            let params: Vec<&(dyn ToSql + Sync)> = args
                .iter()
                .map(|a| a.as_ref() as &(dyn ToSql + Sync))
                .collect();
            c.query(sql.as_str(), &params)
        })?;
        let mut hits = self.map(&found, rows::search_hit)?;
        for h in &mut hits {
            // Column 4 is the whole body: cut an excerpt around the first term.
            h.snippet = query::hit_snippet(h.source, &h.snippet, &terms, query::SNIPPET_CHARS);
        }
        Ok(hits)
    }

    /// Maps rows with one of [`crate::rows`]' functions; a column that does not fit is an
    /// error naming the server and the column.
    fn map<T>(
        &self,
        rows: &[Row],
        f: impl Fn(&Row) -> std::result::Result<T, String>,
    ) -> Result<Vec<T>> {
        rows.iter().map(|r| f(r).map_err(|e| self.err(e))).collect()
    }

    /// [`PgStore::map`] for at most one row.
    fn map_opt<T>(
        &self,
        row: Option<Row>,
        f: impl Fn(&Row) -> std::result::Result<T, String>,
    ) -> Result<Option<T>> {
        row.map(|r| f(&r).map_err(|e| self.err(e))).transpose()
    }
}

/// Remembers the pool's last connection error, so a failed checkout says why (wrong
/// password, refused connection) instead of only "timed out".
#[derive(Debug)]
struct KeepLastError(Arc<std::sync::Mutex<Option<String>>>);

impl r2d2::HandleError<postgres::Error> for KeepLastError {
    fn handle_error(&self, error: postgres::Error) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(chain(&error));
        }
    }
}

/// An error and its causes, joined by `: ` (the client's own text is often just "db error").
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !out.ends_with(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cur = c.source();
    }
    out
}

/// A server message without noise: the client's "db error: " prefix dropped.
fn server_reason(text: &str) -> String {
    let text = text.replace("db error: ", "");
    let t = text.as_str();
    let t = t
        .strip_prefix("timed out waiting for connection: ")
        .map_or_else(|| t.to_owned(), |rest| format!("cannot connect: {rest}"));
    if t == "timed out waiting for connection" {
        return "cannot connect: timed out".to_owned();
    }
    t
}

/// Rows this store may read: its author's own (with the project filter `$3` on them), or the
/// rows shared with its team `$2`. `$1` is the author.
const VISIBLE_DOC: &str = "((d.author = $1 AND ($3::text IS NULL OR d.team IS NOT NULL \
                           OR d.project_key = $3 OR d.project_key IS NULL)) \
                           OR (d.team IS NOT NULL AND d.team = $2::text))";

const VISIBLE_LEARNING: &str = "((author = $1 AND ($3::text IS NULL OR team IS NOT NULL \
                                OR project_key = $3 OR project_key IS NULL)) \
                                OR (team IS NOT NULL AND team = $2::text))";

/// The search document of a learning, as the SQLite triggers build it: body = content,
/// context, tags (space-separated), one per line.
fn insert_learning_doc(
    tx: &mut impl GenericClient,
    l: &LearningEntry,
) -> std::result::Result<(), postgres::Error> {
    let body = format!(
        "{}\n{}\n{}",
        l.content,
        l.context.as_deref().unwrap_or(""),
        l.tags.join(" ")
    );
    tx.execute(
        "INSERT INTO docs (author, team, doc_id, source, scope, project_key, title, body, path, \
         updated_ms) VALUES ($1, $2, $3, 'learning', $4, $5, $6, $7, NULL, $8)",
        &[
            &l.author,
            &l.team,
            &format!("L{}", l.id),
            &l.scope(),
            &l.project_key,
            &l.title,
            &body,
            &l.created_ms,
        ],
    )?;
    Ok(())
}

impl MemoryStore for PgStore {
    fn upsert_project(&self, p: &ProjectRecord) -> Result<()> {
        let author = self.author.clone();
        let (cc, notes) = (json(&p.custom_commands), json(&p.notes));
        self.tx(move |tx| {
            tx.execute(
                &format!(
                    "INSERT INTO projects (author, {PROJECT_COLS}) \
                     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) \
                     ON CONFLICT (author, key) DO UPDATE SET name=excluded.name, \
                     path=excluded.path, language=excluded.language, \
                     framework=excluded.framework, test_command=excluded.test_command, \
                     custom_commands=excluded.custom_commands, notes=excluded.notes, \
                     last_used_ms=greatest(projects.last_used_ms, excluded.last_used_ms)"
                ),
                &[
                    &author,
                    &p.key,
                    &p.name,
                    &p.path,
                    &p.language,
                    &p.framework,
                    &p.test_command,
                    &cc,
                    &notes,
                    &p.created_ms,
                    &p.last_used_ms,
                ],
            )?;
            Ok(())
        })
    }

    fn project(&self, key: &str) -> Result<Option<ProjectRecord>> {
        self.read(|c| {
            c.query_opt(
                &format!("SELECT {PROJECT_COLS} FROM projects WHERE author = $1 AND key = $2"),
                &[&self.author, &key],
            )
        })
        .and_then(|r| self.map_opt(r, rows::project))
    }

    fn recent_projects(&self, limit: Option<usize>) -> Result<Vec<ProjectRecord>> {
        let limit = limit.map(|l| l as i64);
        self.read(|c| {
            c.query(
                &format!(
                    "SELECT {PROJECT_COLS} FROM projects WHERE author = $1 \
                     ORDER BY last_used_ms DESC, key LIMIT $2"
                ),
                &[&self.author, &limit],
            )
        })
        .and_then(|r| self.map(&r, rows::project))
    }

    fn user_preferences(&self) -> Result<BTreeMap<String, String>> {
        self.read(|c| {
            Ok(c.query(
                "SELECT key, value FROM user_preferences WHERE author = $1",
                &[&self.author],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
        })
    }

    fn set_user_preference(&self, key: &str, value: Option<&str>) -> Result<bool> {
        let now = chrono::Utc::now().timestamp_millis();
        self.tx(|tx| match value {
            Some(v) => Ok(tx.execute(
                "INSERT INTO user_preferences (author, key, value, updated_ms) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (author, key) DO UPDATE SET \
                 value = excluded.value, updated_ms = excluded.updated_ms \
                 WHERE user_preferences.value IS DISTINCT FROM excluded.value",
                &[&self.author, &key, &v, &now],
            )? > 0),
            None => Ok(tx.execute(
                "DELETE FROM user_preferences WHERE author = $1 AND key = $2",
                &[&self.author, &key],
            )? > 0),
        })
    }

    fn add_learning(&self, l: &NewLearning) -> Result<LearningEntry> {
        let team = if l.share_with_team {
            match &self.team {
                Some(t) => Some(t.clone()),
                None => {
                    return Err(Error::Invalid {
                        what: "scope",
                        reason: "scope team needs a team: set [store] team in config.toml \
                                 (or MEM_STORE_TEAM)"
                            .to_owned(),
                    });
                }
            }
        } else {
            None
        };
        let tags = json(&l.tags);
        let author = self.author.clone();
        self.tx(move |tx| {
            let row = tx.query_one(
                "INSERT INTO learnings (author, team, title, content, category, tags, context, \
                 project_key, created_ms, last_used_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id",
                &[
                    &author,
                    &team,
                    &l.title,
                    &l.content,
                    &l.category,
                    &tags,
                    &l.context,
                    &l.project_key,
                    &l.created_ms,
                ],
            )?;
            let entry = LearningEntry {
                id: row.get(0),
                title: l.title.clone(),
                content: l.content.clone(),
                category: l.category.clone(),
                tags: l.tags.clone(),
                context: l.context.clone(),
                project_key: l.project_key.clone(),
                created_ms: l.created_ms,
                last_used_ms: l.created_ms,
                author: Some(author.clone()),
                team: team.clone(),
            };
            insert_learning_doc(tx, &entry)?;
            Ok(entry)
        })
    }

    fn learning(&self, id: i64) -> Result<Option<LearningEntry>> {
        self.read(|c| {
            c.query_opt(
                &format!(
                    "SELECT {LEARNING_COLS} FROM learnings WHERE id = $4 AND {VISIBLE_LEARNING}"
                ),
                &[&self.author, &self.team, &None::<String>, &id],
            )
        })
        .and_then(|r| self.map_opt(r, rows::learning))
    }

    fn learnings(&self, f: &LearningFilter) -> Result<Vec<LearningEntry>> {
        let limit = f.limit.map(|l| l as i64);
        self.read(|c| {
            c.query(
                &format!(
                    "SELECT {LEARNING_COLS} FROM learnings WHERE {VISIBLE_LEARNING} \
                     AND ($4::text IS NULL OR category = $4) \
                     ORDER BY created_ms DESC, id DESC LIMIT $5"
                ),
                &[&self.author, &self.team, &f.visible_in, &f.category, &limit],
            )
        })
        .and_then(|r| self.map(&r, rows::learning))
    }

    fn touch_learnings(&self, ids: &[i64], at_ms: i64) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.tx(|tx| {
            tx.execute(
                &format!(
                    "UPDATE learnings SET last_used_ms = $5 WHERE id = ANY($4) \
                     AND last_used_ms < $5 AND {VISIBLE_LEARNING}"
                ),
                &[&self.author, &self.team, &None::<String>, &ids, &at_ms],
            )?;
            Ok(())
        })
    }

    fn delete_learning(&self, id: i64) -> Result<bool> {
        self.tx(|tx| {
            let n = tx.execute(
                &format!("DELETE FROM learnings WHERE id = $4 AND {VISIBLE_LEARNING}"),
                &[&self.author, &self.team, &None::<String>, &id],
            )?;
            if n > 0 {
                tx.execute(
                    "DELETE FROM docs WHERE doc_id = $1 AND source = 'learning'",
                    &[&format!("L{id}")],
                )?;
            }
            Ok(n > 0)
        })
    }

    fn expire_learnings(
        &self,
        expiry: Expiry,
        visible_in: Option<&str>,
        dry_run: bool,
    ) -> Result<Vec<LearningEntry>> {
        // Only the author's own learnings expire: a sweep never deletes a teammate's.
        let found = self.tx(|tx| {
            let found = tx.query(
                &format!(
                    "SELECT {LEARNING_COLS} FROM learnings WHERE author = $1 \
                         AND last_used_ms < CASE WHEN project_key IS NULL THEN $2::bigint \
                             ELSE $3::bigint END \
                         AND ($4::text IS NULL OR project_key = $4 OR project_key IS NULL) \
                         ORDER BY id"
                ),
                &[
                    &self.author,
                    &expiry.user_before_ms,
                    &expiry.project_before_ms,
                    &visible_in,
                ],
            )?;
            if !dry_run && !found.is_empty() {
                let ids = found
                    .iter()
                    .map(|r| r.try_get::<_, i64>(0))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                let doc_ids: Vec<String> = ids.iter().map(|i| format!("L{i}")).collect();
                tx.execute("DELETE FROM learnings WHERE id = ANY($1)", &[&ids])?;
                tx.execute(
                    "DELETE FROM docs WHERE source = 'learning' AND doc_id = ANY($1)",
                    &[&doc_ids],
                )?;
            }
            Ok(found)
        })?;
        self.map(&found, rows::learning)
    }

    fn indexed_files(&self, roots: &[String]) -> Result<Vec<FileState>> {
        self.read(|c| {
            c.query(
                &format!(
                    "SELECT {FILE_COLS} FROM files WHERE author = $1 AND root = ANY($2) \
                     ORDER BY root, path"
                ),
                &[&self.author, &roots],
            )
        })
        .and_then(|r| self.map(&r, rows::file_state))
    }

    fn replace_file(&self, state: &FileState, documents: &[Document]) -> Result<()> {
        self.tx(|tx| {
            tx.execute(
                "DELETE FROM docs WHERE author = $1 AND path = $2",
                &[&self.author, &state.path],
            )?;
            let ins = tx.prepare(&format!(
                "INSERT INTO docs (author, {DOC_COLS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) \
                 ON CONFLICT (author, doc_id) DO UPDATE SET source=excluded.source, \
                 scope=excluded.scope, project_key=excluded.project_key, title=excluded.title, \
                 body=excluded.body, path=excluded.path, updated_ms=excluded.updated_ms"
            ))?;
            for d in documents {
                tx.execute(
                    &ins,
                    &[
                        &self.author,
                        &d.id,
                        &d.source.as_str(),
                        &d.scope,
                        &d.project_key,
                        &d.title,
                        &d.body,
                        &d.path,
                        &d.updated_ms,
                    ],
                )?;
            }
            tx.execute(
                "INSERT INTO files (author, path, root, size, mtime_ns, hash) \
                 VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (author, path) DO UPDATE SET \
                 root=excluded.root, size=excluded.size, mtime_ns=excluded.mtime_ns, \
                 hash=excluded.hash",
                &[
                    &self.author,
                    &state.path,
                    &state.root,
                    &(state.size as i64),
                    &state.mtime_ns,
                    &state.hash,
                ],
            )?;
            Ok(())
        })
    }

    fn touch_file(&self, state: &FileState) -> Result<()> {
        self.tx(|tx| {
            tx.execute(
                "UPDATE files SET size = $3, mtime_ns = $4 WHERE author = $1 AND path = $2",
                &[
                    &self.author,
                    &state.path,
                    &(state.size as i64),
                    &state.mtime_ns,
                ],
            )?;
            Ok(())
        })
    }

    fn remove_file(&self, path: &str) -> Result<usize> {
        self.tx(|tx| {
            let n = tx.execute(
                "DELETE FROM docs WHERE author = $1 AND path = $2",
                &[&self.author, &path],
            )?;
            tx.execute(
                "DELETE FROM files WHERE author = $1 AND path = $2",
                &[&self.author, &path],
            )?;
            Ok(n as usize)
        })
    }

    fn clear_file_index(&self) -> Result<usize> {
        self.tx(|tx| {
            let n = tx.execute(
                "DELETE FROM docs WHERE author = $1 AND source <> 'learning'",
                &[&self.author],
            )?;
            tx.execute("DELETE FROM files WHERE author = $1", &[&self.author])?;
            Ok(n as usize)
        })
    }

    fn document(&self, id: &str) -> Result<Option<Document>> {
        self.read(|c| {
            c.query_opt(
                &format!(
                    "SELECT {DOC_COLS} FROM docs d WHERE doc_id = $4 AND {VISIBLE_DOC} \
                     ORDER BY (d.author = $1) DESC LIMIT 1"
                ),
                &[&self.author, &self.team, &None::<String>, &id],
            )
        })
        .and_then(|r| self.map_opt(r, rows::document))
    }

    fn documents(
        &self,
        source: SourceKind,
        visible_in: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        let limit = limit as i64;
        self.read(|c| {
            c.query(
                &format!(
                    "SELECT {DOC_COLS} FROM docs d WHERE source = $4 AND {VISIBLE_DOC} \
                     ORDER BY updated_ms DESC, seq DESC LIMIT $5"
                ),
                &[
                    &self.author,
                    &self.team,
                    &visible_in,
                    &source.as_str(),
                    &limit,
                ],
            )
        })
        .and_then(|r| self.map(&r, rows::document))
    }

    fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let terms = query::terms(&q.text);
        if terms.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut hits = match query::word_query(&terms) {
            Some(_) => self.search_pass(Some(&terms.join(" ")), &[], q, q.limit)?,
            None => Vec::new(),
        };
        if hits.len() < q.limit {
            for h in self.search_pass(None, &terms, q, q.limit)? {
                if hits.len() >= q.limit {
                    break;
                }
                if !hits.iter().any(|x| x.id == h.id) {
                    hits.push(h);
                }
            }
        }
        Ok(hits)
    }

    fn stats(&self) -> Result<StoreStats> {
        let version = self.schema_version()?;
        self.read(|c| {
            let none = None::<String>;
            let base: [&(dyn ToSql + Sync); 3] = [&self.author, &self.team, &none];
            let count = |c: &mut Conn, sql: &str, args: &[&(dyn ToSql + Sync)]| {
                c.query_one(sql, args).map(|r| r.get::<_, i64>(0) as u64)
            };
            let projects = count(
                c,
                "SELECT count(*) FROM projects WHERE author = $1",
                &[&self.author],
            )?;
            let prefs = count(
                c,
                "SELECT count(*) FROM user_preferences WHERE author = $1",
                &[&self.author],
            )?;
            let learnings = count(
                c,
                &format!("SELECT count(*) FROM learnings WHERE {VISIBLE_LEARNING}"),
                &base,
            )?;
            let files = count(
                c,
                "SELECT count(*) FROM files WHERE author = $1",
                &[&self.author],
            )?;
            let by_cat = c
                .query(
                    &format!(
                        "SELECT category, count(*) FROM learnings WHERE {VISIBLE_LEARNING} \
                         GROUP BY category"
                    ),
                    &base,
                )?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                .collect();
            let docs = c
                .query(
                    &format!(
                        "SELECT source, count(*) FROM docs d WHERE {VISIBLE_DOC} GROUP BY source"
                    ),
                    &base,
                )?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                .collect();
            Ok(StoreStats {
                projects,
                user_preferences: prefs,
                learnings,
                learnings_by_category: by_cat,
                documents: docs,
                files,
                schema_version: version,
            })
        })
    }

    fn backend(&self) -> &'static str {
        "postgresql"
    }

    fn describe(&self) -> String {
        let mut d = format!(
            "{} (schema {}, author {}",
            self.url, self.schema, self.author
        );
        if let Some(t) = &self.team {
            d.push_str(&format!(", team {t}"));
        }
        d.push(')');
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        let check = |url: &str, want: &str| assert_eq!(redact_url(url), want);
        check(
            "postgresql://mem:s3cret@db.example:5432/team",
            "postgresql://mem:***@db.example:5432/team",
        );
        check(
            "postgres://mem:p%40ss@host/db?sslmode=require",
            "postgres://mem:***@host/db?sslmode=require",
        );
        check("postgresql://mem@host/db", "postgresql://mem@host/db");
        check(
            "postgresql://host/db?user=mem&password=hunter2&sslmode=require",
            "postgresql://host/db?user=mem&password=***&sslmode=require",
        );
        check(
            "host=h user=u password=hunter2 dbname=d",
            "host=h user=u password=*** dbname=d",
        );
        check(
            "postgresql://a:b:c@h/d?x=1#frag@x",
            "postgresql://a:***@h/d?x=1#frag@x",
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("schema", "mewmem", 63).is_ok());
        assert!(check_name("schema", "team_a1", 63).is_ok());
        for bad in ["", "1abc", "Mewmem", "a-b", "a\"b", "a;drop"] {
            assert!(check_name("schema", bad, 63).is_err(), "{bad}");
        }
        assert!(check_label("author", "alice@example.com").is_ok());
        assert!(check_label("author", " ").is_err());
        assert!(check_label("author", "a\nb").is_err());
    }

    #[test]
    fn server_messages_read_well() {
        assert_eq!(
            server_reason("db error: FATAL: password authentication failed for user \"mem\""),
            "FATAL: password authentication failed for user \"mem\""
        );
        assert_eq!(
            server_reason("timed out waiting for connection: error connecting to server"),
            "cannot connect: error connecting to server"
        );
    }
}
