//! Hybrid memory search (issue 29, Build 2): the index's full-text hits (BM25) fused by
//! reciprocal rank ([`mem_llm::embed::rrf`]) with the documents nearest the query by cosine of
//! their embeddings. Used by `mem memory search` and MCP `memory_search` only when
//! `[embeddings]` is configured; the embedding call itself is the caller's (it is async and
//! needs the configured [`mem_llm::Embedder`]), these are the synchronous parts around it:
//!
//! 1. [`semantic_candidates`]: the documents the query may find (same visibility, sources and
//!    scope as the full-text search), at most [`MAX_SEMANTIC_DOCS`], newest first per source.
//! 2. Embed `[query] + documents` ([`document_text`]), through the vector cache.
//! 3. [`fuse`]: the full-text hits and the documents at or above the cosine floor, fused; a
//!    document found only by meaning gets a snippet from the start of its body (or around a
//!    query word it holds), made like a full-text hit's ([`crate::query::hit_snippet`]: a
//!    learning's tags are not glued onto its text).

use crate::error::Result;
use crate::model::{Document, SearchHit, SearchQuery, SourceKind};
use crate::query::{hit_snippet, terms};
use crate::store::MemoryStore;

/// The most documents compared by cosine in one search (per source, newest first).
pub const MAX_SEMANTIC_DOCS: usize = 5_000;

/// Characters of a snippet made for a document found only by meaning.
pub const SEMANTIC_SNIPPET_CHARS: usize = 160;

/// The documents a hybrid search ranks by meaning: those of `query.sources` (all when empty)
/// visible in `query.visible_in`, of `query.scope` when set.
///
/// # Errors
/// The store's.
pub fn semantic_candidates<S: MemoryStore + ?Sized>(
    store: &S,
    query: &SearchQuery,
) -> Result<Vec<Document>> {
    let sources = if query.sources.is_empty() {
        vec![SourceKind::Learning, SourceKind::Entry, SourceKind::Note]
    } else {
        query.sources.clone()
    };
    let mut docs = Vec::new();
    for source in sources {
        docs.extend(
            store
                .documents(source, query.visible_in.as_deref(), MAX_SEMANTIC_DOCS)?
                .into_iter()
                .filter(|d| query.scope.as_deref().is_none_or(|s| d.scope == s)),
        );
    }
    Ok(docs)
}

/// The text of a document that is embedded: its title, then its body.
pub fn document_text(d: &Document) -> String {
    format!("{}\n{}", d.title, d.body)
}

/// Fuses the full-text `lexical` hits (best first) with the documents whose cosine with the
/// query (`query_vector`, `vectors[i]` for `docs[i]`) is at least `min_similarity`, best first;
/// at most `query.limit` hits. `score` of each hit becomes minus its fused score (lower is
/// better, as for BM25).
pub fn fuse(
    query: &SearchQuery,
    lexical: Vec<SearchHit>,
    docs: &[Document],
    query_vector: &[f32],
    vectors: &[Vec<f32>],
    min_similarity: f32,
) -> Vec<SearchHit> {
    let mut near: Vec<(usize, f32)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i, mem_llm::embed::cosine(query_vector, v)))
        .filter(|(_, s)| *s >= min_similarity)
        .collect();
    near.sort_by(|a, b| b.1.total_cmp(&a.1));
    near.truncate(query.limit);
    let lexical_ids: Vec<String> = lexical.iter().map(|h| h.id.clone()).collect();
    let semantic_ids: Vec<String> = near
        .iter()
        .filter_map(|(i, _)| docs.get(*i).map(|d| d.id.clone()))
        .collect();
    let words = terms(&query.text);
    mem_llm::embed::rrf(&[&lexical_ids[..], &semantic_ids[..]])
        .into_iter()
        .take(query.limit)
        .filter_map(|(id, fused)| {
            let mut hit = match lexical.iter().find(|h| h.id == id) {
                Some(h) => h.clone(),
                None => {
                    let d = docs.iter().find(|d| d.id == id)?;
                    SearchHit {
                        id: d.id.clone(),
                        source: d.source,
                        scope: d.scope.clone(),
                        title: d.title.clone(),
                        snippet: hit_snippet(d.source, &d.body, &words, SEMANTIC_SNIPPET_CHARS),
                        path: d.path.clone(),
                        updated_ms: d.updated_ms,
                        score: 0.0,
                    }
                }
            };
            hit.score = -fused;
            Some(hit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A learning found only by meaning shows its text, not its tags glued on.
    #[test]
    fn a_learning_found_by_meaning_has_no_tags_in_its_snippet() {
        let doc = Document {
            id: "L1".to_owned(),
            source: SourceKind::Learning,
            scope: "project".to_owned(),
            project_key: None,
            title: "Slow compiles".to_owned(),
            body: "Compilation is sluggish while the cache is cold.\nseen on CI\nrust perf"
                .to_owned(),
            path: None,
            updated_ms: 0,
        };
        let query = SearchQuery {
            text: "why does it take ages to build".to_owned(),
            limit: 5,
            ..SearchQuery::default()
        };
        let hits = fuse(
            &query,
            Vec::new(),
            &[doc],
            &[1.0, 0.0],
            &[vec![1.0, 0.0]],
            0.5,
        );
        assert_eq!(hits.len(), 1);
        assert_eq!(
            hits[0].snippet,
            "Compilation is sluggish while the cache is cold. seen on CI"
        );
    }
}
