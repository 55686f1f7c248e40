//! Oh My Coder's tiered memory (seed 003 "分层有限记忆") for mewmem, and the one search index
//! over every memory (SPEC "One memory, not three").
//!
//! - [`MemoryStore`]: the store API (user/project preferences, projects, learnings, the index);
//!   [`SqliteStore`] is the default backend (bundled SQLite, WAL, FTS5 with bm25 and trigram);
//!   [`PgStore`] the team store on PostgreSQL (authors, scopes, tsvector + pg_trgm);
//!   [`AnyStore`] either, chosen by a [`StoreLocation`].
//! - [`index`]: the search index's documents from files, kept in step with them
//!   ([`index::sync`]) through [`index::IndexSource`]s; the adapters for `memories.md` entries
//!   and memory notes are in `mem-sources`, which also opens a manager with them.
//! - [`snapshot`]: the tier-store half of a checkpoint (a scoped backup of the rows, its diff
//!   and restore); checkpoints themselves are `mem-checkpoint`, skills `mem-skills`.
//! - [`MemoryManager`]: `open_project` (with the files and sessions a [`MemorySources`] gives),
//!   Tier 0 / Tier 1 / Tier 2, `recall`, learnings by category, the short-term view over the
//!   latest session (through [`Sessions`]), `forget`, `clean`, export/import.
//!
//! The schema, migrations, index rules and tier shapes are in `docs/formats/tiers.md`.

pub mod archive;
mod backend;
mod error;
pub mod hybrid;
pub mod id;
pub mod index;
mod manager;
pub mod migrate;
pub mod model;
pub mod pg_vectors;
pub mod postgres;
pub mod project;
pub mod query;
mod rows;
pub mod schema;
pub mod snapshot;
mod sqlite;
mod store;
pub mod tiers;
pub mod vectors;

pub use backend::{AnyStore, StoreLocation};
pub use error::{Error, Result};
pub use id::MemoryId;
pub use manager::*;
pub use model::*;
pub use postgres::{PgOptions, PgStore, ScopeRows};
pub use sqlite::{DATABASE_FILE, DEFAULT_BUSY_TIMEOUT, SqliteStore};
pub use store::MemoryStore;
