//! Embeddings behind search, recall and forget: hybrid search (full-text hits fused with the
//! documents nearest by meaning), the embedding cache in the tier database, and deleting a
//! forgotten memory's cached vectors. Every problem here is a warning (a line without
//! `warning: `), never an error: search and recall then stay lexical.

use std::sync::Arc;

use mem_llm::{Llm, VectorCache};
use mem_tiers::{AnyStore, Document, SearchHit, SearchQuery, SourceKind};

use super::chain_text;
use crate::Memory;
use crate::error::Result;

impl Memory {
    /// Embeddings when configured ([`crate::ConfigSource::embeddings`]); a bad configuration
    /// is `None` and a warning in `warnings`.
    pub(crate) fn embeddings_or_warn(
        &self,
        warnings: &mut Vec<String>,
    ) -> Option<crate::Embeddings> {
        match self.config().embeddings() {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!(
                    "embeddings off ({}); full-text results only",
                    chain_text(e.as_ref())
                ));
                None
            }
        }
    }

    /// The embedding cache for hybrid search and recall: the `vectors` table of the local tier
    /// database (`<storage_dir>/memory.db`), opened only when that database is already set up
    /// ([`mem_tiers::vectors::SqliteVectorCache::open_existing`]: never created, migrated or
    /// waited for; a locked database skips caching). `None` when there is no set-up database
    /// (silently), or, with a warning in `warnings`, when it cannot be opened; vectors are then
    /// computed each time.
    pub fn vector_cache(&self, warnings: &mut Vec<String>) -> Option<Arc<dyn VectorCache>> {
        let opened = self.tier_config().and_then(|config| {
            Ok(mem_tiers::vectors::SqliteVectorCache::open_existing(
                &config.database_path(),
            )?)
        });
        match opened {
            Ok(c) => c.map(|c| Arc::new(c) as Arc<dyn VectorCache>),
            Err(e) => {
                warnings.push(format!(
                    "no embedding cache ({}); embedding every text",
                    chain_text(&e)
                ));
                None
            }
        }
    }

    /// `llm` with hybrid selection when embeddings are configured and `off` is `false`; else
    /// `llm` itself, also when the `[embeddings]` configuration is bad (a warning in the
    /// second value).
    pub fn with_embeddings(&self, llm: Arc<dyn Llm>, off: bool) -> (Arc<dyn Llm>, Vec<String>) {
        let mut warnings = Vec::new();
        if off {
            return (llm, warnings);
        }
        let Some(embed) = self.embeddings_or_warn(&mut warnings) else {
            return (llm, warnings);
        };
        let cache = self.vector_cache(&mut warnings);
        let llm = Arc::new(
            mem_llm::HybridSelector::new(llm, embed.embedder, cache, embed.settings.min_similarity)
                .english_only(embed.settings.english_only),
        );
        (llm, warnings)
    }

    /// `lexical` (the full-text hits of `query`, best first) fused with the documents nearest
    /// the query by meaning ([`mem_tiers::hybrid`]) when embeddings are configured; else
    /// `lexical` as it is. Vectors are cached in the store's backend: the `vectors` table of
    /// the SQLite file, or of the PostgreSQL schema (similarity computed here either way). A
    /// bad configuration or a failed embedding call is a warning in `warnings` and leaves
    /// `lexical` as it is.
    ///
    /// Errors: the store's.
    pub(crate) fn hybrid_search(
        &self,
        store: &AnyStore,
        query: &SearchQuery,
        lexical: Vec<SearchHit>,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<SearchHit>> {
        let Some(embed) = self.embeddings_or_warn(warnings) else {
            return Ok(lexical);
        };
        if query.text.trim().is_empty()
            || (embed.settings.english_only && mem_llm::hybrid::has_cjk(&query.text))
        {
            return Ok(lexical);
        }
        let docs = mem_tiers::hybrid::semantic_candidates(store, query)?;
        if docs.is_empty() {
            return Ok(lexical);
        }
        let local;
        let cache: Option<&dyn VectorCache> = match store {
            AnyStore::Postgres(pg) => Some(pg),
            AnyStore::Sqlite(_) => {
                local = self.vector_cache(warnings);
                local.as_deref()
            }
        };
        let mut texts = vec![query.text.clone()];
        texts.extend(docs.iter().map(mem_tiers::hybrid::document_text));
        let vectors = run_async(embed.embedder.embed_partly_cached(cache, &texts, 1));
        match vectors {
            Ok(v) if v.len() == texts.len() => Ok(mem_tiers::hybrid::fuse(
                query,
                lexical,
                &docs,
                &v[0],
                &v[1..],
                embed.settings.min_similarity,
            )),
            Ok(_) => Ok(lexical),
            Err(e) => {
                warnings.push(format!("embeddings failed ({e}); full-text results only"));
                Ok(lexical)
            }
        }
    }

    /// The texts of `doc` whose vectors may be cached: its search text
    /// ([`mem_tiers::hybrid::document_text`]) and, for a note, its recall candidate's text
    /// ([`mem_llm::hybrid::candidate_text`], read from the note file, which must still exist).
    pub(crate) fn embedded_texts(&self, doc: &Document) -> Vec<String> {
        let mut texts = vec![mem_tiers::hybrid::document_text(doc)];
        if doc.source == SourceKind::Note
            && let Ok(id) = mem_recall::NoteId::parse(&doc.id)
            && let Ok(dirs) = self.memory_dirs()
            && let Ok(note) = mem_recall::read_note(&dirs, &id)
        {
            texts.push(mem_llm::hybrid::candidate_text(&note.candidate()));
        }
        texts
    }

    /// Deletes the cached vectors of `texts` (those of a forgotten or removed memory) under
    /// every model: from the local cache in `memory.db` when that database is set up, and from
    /// the team schema when `store` is PostgreSQL. A failure is a warning in `warnings` (the
    /// memory itself is gone).
    pub(crate) fn forget_vectors(
        &self,
        store: Option<&AnyStore>,
        texts: &[String],
        warnings: &mut Vec<String>,
    ) {
        let hashes: Vec<String> = texts
            .iter()
            .map(|t| mem_core::sha256_hex(t.as_bytes()))
            .collect();
        let mut caches: Vec<Box<dyn FnOnce() -> std::result::Result<u64, String> + '_>> =
            Vec::new();
        if let Some(local) = self.vector_cache(warnings) {
            let hashes = &hashes;
            caches.push(Box::new(move || local.forget_vectors(hashes)));
        }
        if let Some(AnyStore::Postgres(pg)) = store {
            let hashes = &hashes;
            caches.push(Box::new(move || VectorCache::forget_vectors(pg, hashes)));
        }
        for forget in caches {
            if let Err(e) = forget() {
                warnings.push(format!(
                    "cannot delete the forgotten memory's cached vectors ({e})"
                ));
            }
        }
    }
}

/// Runs `fut` to completion on a runtime of its own, in a thread of its own, so a synchronous
/// caller may wait for it whether or not it is itself inside a runtime (only when embeddings
/// are configured: a lexical search starts no runtime). The error is its text with its causes.
fn run_async<T: Send>(
    fut: impl std::future::Future<Output = mem_llm::Result<T>> + Send,
) -> std::result::Result<T, String> {
    std::thread::scope(|s| {
        s.spawn(|| -> std::result::Result<T, String> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a runtime for the embedding call: {e}"))?;
            rt.block_on(fut).map_err(|e| chain_text(&e))
        })
        .join()
        .unwrap_or_else(|_| Err("the embedding call panicked".to_owned()))
    })
}
