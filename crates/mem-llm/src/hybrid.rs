//! Hybrid note selection (issue 29, Build 2): the configured selector (the offline BM25F engine
//! or a model) ranks lexically, all-candidate cosine similarity ranks by meaning, and the two
//! lists are fused by reciprocal rank ([`crate::embed::rrf`]).
//!
//! The lexical list is the inner selector's selection (its thresholds decide what matches by
//! words); the semantic list is the candidates whose cosine with the message is at least
//! [`crate::EmbeddingSettings::min_similarity`] and within [`SEMANTIC_MARGIN`] of the best
//! candidate's cosine, best first, at most the limit; with
//! [`crate::EmbeddingSettings::english_only`] a message holding CJK text has no semantic list. The fused list, cut to
//! the limit, is the selection. When embedding fails, the inner selection is returned with a
//! `fallback` saying so: embeddings never make recall fail.

use std::sync::Arc;
use std::time::Duration;

use crate::embed::{Embedder, VectorCache, cosine, rrf};
use crate::engine::{BoxFuture, Llm};
use crate::error::Result;
use crate::types::{
    Candidate, ExtractRequest, Job, Memories, Reply, SelectRequest, Selection, SkillDraft,
    SkillRequest, SummarizeRequest, Summary,
};

/// How long the embedding step of a selection may take before the inner selection is returned
/// alone (well inside recall's 8-second selector deadline, so a slow or hung embedding server
/// never costs the lexical result).
pub const EMBED_SELECT_DEADLINE: Duration = Duration::from_secs(3);

/// How far below the best candidate's cosine (an absolute difference of cosines) a candidate
/// may be and still be recalled on meaning alone. The relative gate of the lexical selector
/// ([`crate::offline`]'s `MIN_RELATIVE_SCORE`) for the semantic list: the notes that are about
/// the message score close to the best, the rest of the candidates above
/// [`crate::EmbeddingSettings::min_similarity`] are on the same broad topic and, fused in, lowered
/// precision (the labelled recall set's dev split, all-MiniLM-L6-v2: P@5 0.792 without the gate,
/// 0.807 with it, R@5 and primary unchanged; `docs/BENCHMARKS.md`, stop 42).
pub const SEMANTIC_MARGIN: f32 = 0.05;

/// An [`Llm`] whose `select` is hybrid; the other jobs go to the inner engine unchanged.
pub struct HybridSelector {
    inner: Arc<dyn Llm>,
    embedder: Embedder,
    cache: Option<Arc<dyn VectorCache>>,
    min_similarity: f32,
    english_only: bool,
}

impl HybridSelector {
    /// Wraps `inner`; vectors come from `embedder`, through `cache` when given; a candidate is
    /// recalled on meaning alone at a cosine of at least `min_similarity`.
    pub fn new(
        inner: Arc<dyn Llm>,
        embedder: Embedder,
        cache: Option<Arc<dyn VectorCache>>,
        min_similarity: f32,
    ) -> Self {
        HybridSelector {
            inner,
            embedder,
            cache,
            min_similarity,
            english_only: false,
        }
    }

    /// Ranks messages holding CJK text lexically only (an English-only embedding model).
    pub fn english_only(mut self, yes: bool) -> Self {
        self.english_only = yes;
        self
    }
}

/// Whether `text` holds a Han, kana or Hangul character.
pub fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF
            | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
    })
}

/// The text of a candidate that is embedded: name, description and body, one per line.
pub fn candidate_text(c: &Candidate) -> String {
    format!("{}\n{}\n{}", c.name, c.description, c.body)
}

/// The candidates' ids ranked by cosine with `query` (best first): those at `min_similarity`
/// or above and at most [`SEMANTIC_MARGIN`] below the best cosine, at most `limit`.
/// `vectors[i]` is the vector of `candidates[i]`.
pub fn semantic_ranking(
    query: &[f32],
    candidates: &[Candidate],
    vectors: &[Vec<f32>],
    min_similarity: f32,
    limit: usize,
) -> Vec<String> {
    let mut scored: Vec<(usize, f32)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i, cosine(query, v)))
        .filter(|(_, s)| *s >= min_similarity)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let best = scored.first().map_or(0.0, |&(_, s)| s);
    scored
        .into_iter()
        .take_while(|&(_, s)| s >= best - SEMANTIC_MARGIN)
        .take(limit)
        .filter_map(|(i, _)| candidates.get(i).map(|c| c.id.clone()))
        .collect()
}

/// The selection of a hybrid select: `lexical` and `semantic` fused by reciprocal rank
/// ([`rrf`]), cut to `limit`, with the inner selector's own picks kept in its order. Fusion
/// decides which slots the lexical picks take and where a note found on meaning alone goes in;
/// it never reorders the lexical picks among themselves, so an order the inner selector gives
/// on purpose (a superseding note just before the note it says is stale) survives.
pub fn fuse(lexical: &[String], semantic: &[String], limit: usize) -> Vec<String> {
    let mut fused: Vec<String> = rrf(&[lexical, semantic])
        .into_iter()
        .take(limit)
        .map(|(id, _)| id)
        .collect();
    let mut kept: Vec<String> = Vec::new();
    for id in lexical {
        if fused.contains(id) && !kept.contains(id) {
            kept.push(id.clone());
        }
    }
    let mut in_order = kept.into_iter();
    for slot in fused.iter_mut() {
        if lexical.contains(slot)
            && let Some(id) = in_order.next()
        {
            *slot = id;
        }
    }
    fused
}

impl Llm for HybridSelector {
    fn engine_name(&self, job: Job) -> String {
        match job {
            Job::Select => format!(
                "{}+embeddings:{}",
                self.inner.engine_name(job),
                self.embedder.model()
            ),
            _ => self.inner.engine_name(job),
        }
    }

    fn summarize<'a>(
        &'a self,
        request: &'a SummarizeRequest,
    ) -> BoxFuture<'a, Result<Reply<Summary>>> {
        self.inner.summarize(request)
    }

    fn extract<'a>(
        &'a self,
        request: &'a ExtractRequest,
    ) -> BoxFuture<'a, Result<Reply<Memories>>> {
        self.inner.extract(request)
    }

    fn skill<'a>(&'a self, request: &'a SkillRequest) -> BoxFuture<'a, Result<Reply<SkillDraft>>> {
        self.inner.skill(request)
    }

    fn select<'a>(&'a self, request: &'a SelectRequest) -> BoxFuture<'a, Result<Reply<Selection>>> {
        Box::pin(async move {
            let mut reply = self.inner.select(request).await?;
            if request.candidates.is_empty()
                || request.limit == 0
                || (self.english_only && has_cjk(&request.query))
            {
                return Ok(reply);
            }
            let mut texts: Vec<String> = vec![request.query.clone()];
            texts.extend(request.candidates.iter().map(candidate_text));
            let embedded = tokio::time::timeout(
                EMBED_SELECT_DEADLINE,
                self.embedder
                    .embed_partly_cached(self.cache.as_deref(), &texts, 1),
            )
            .await
            .unwrap_or_else(|_| {
                Err(crate::LlmError::Timeout {
                    url: self.embedder.url().to_owned(),
                    after: EMBED_SELECT_DEADLINE,
                    attempts: 1,
                })
            });
            let vectors = match embedded {
                Ok(v) => v,
                Err(e) => {
                    let note = format!("embeddings failed ({e}); lexical selection only");
                    reply.fallback = Some(match reply.fallback.take() {
                        Some(f) => format!("{f}; {note}"),
                        None => note,
                    });
                    return Ok(reply);
                }
            };
            let (query, notes) = vectors.split_at(1);
            let semantic = semantic_ranking(
                &query[0],
                &request.candidates,
                notes,
                self.min_similarity,
                request.limit,
            );
            reply.value.ids = fuse(&reply.value.ids, &semantic, request.limit);
            reply.engine = format!("{}+embeddings:{}", reply.engine, self.embedder.model());
            Ok(reply)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str) -> Candidate {
        Candidate {
            user_level: false,
            id: id.to_owned(),
            name: id.to_owned(),
            description: String::new(),
            body: String::new(),
        }
    }

    /// A unit vector at `cos` to the query `[1, 0]`.
    fn at(cos: f32) -> Vec<f32> {
        vec![cos, (1.0 - cos * cos).sqrt()]
    }

    #[test]
    fn the_semantic_list_holds_the_notes_near_the_best_cosine_only() {
        let candidates: Vec<Candidate> = ["a", "b", "c", "d"].map(candidate).into();
        let vectors = vec![at(0.60), at(0.57), at(0.50), at(0.30)];
        // `c` is above the floor (0.45) but 0.10 below the best: not recalled on meaning.
        assert_eq!(
            semantic_ranking(&[1.0, 0.0], &candidates, &vectors, 0.45, 5),
            ["a", "b"]
        );
        // The margin counts from the best candidate, whatever the floor.
        let vectors = vec![at(0.30), at(0.52), at(0.49), at(0.46)];
        assert_eq!(
            semantic_ranking(&[1.0, 0.0], &candidates, &vectors, 0.45, 5),
            ["b", "c"]
        );
        // Nothing at the floor: an empty list; the limit still cuts.
        assert!(semantic_ranking(&[1.0, 0.0], &candidates, &vectors, 0.9, 5).is_empty());
        let vectors = vec![at(0.60), at(0.59), at(0.58), at(0.30)];
        assert_eq!(
            semantic_ranking(&[1.0, 0.0], &candidates, &vectors, 0.45, 2),
            ["a", "b"]
        );
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn fusion_keeps_the_lexical_order_of_a_superseding_note_before_the_stale_one() {
        // The inner selector put `new` just before `stale` (it says `stale` is out of date);
        // meaning ranks `stale` first. Both stay, in the inner selector's order.
        let fused = fuse(&ids(&["new", "stale"]), &ids(&["stale", "other"]), 5);
        assert_eq!(fused, ["new", "stale", "other"]);
        // A note found on meaning alone takes the slot fusion gives it.
        let fused = fuse(&ids(&["a", "b"]), &ids(&["c", "b"]), 5);
        assert_eq!(fused, ["a", "b", "c"]);
        let fused = fuse(&ids(&["a"]), &ids(&["c", "a"]), 5);
        assert_eq!(fused, ["a", "c"]);
        // The cut to the limit comes first; the kept lexical picks stay in order.
        let fused = fuse(&ids(&["x", "y", "z"]), &ids(&["z", "w"]), 2);
        assert_eq!(fused, ["x", "z"]);
        assert_eq!(fuse(&[], &ids(&["c"]), 5), ["c"]);
        // An inner selector that repeats an id loses no other pick.
        assert_eq!(fuse(&ids(&["a", "a", "b"]), &[], 5), ["a", "b"]);
    }
}
