//! The embeddings client against a real llama.cpp embedding server (all-MiniLM-L6-v2 served by
//! `.ci/local-embed.sh`). Opt-in:
//! `MEM_LIVE_EMBED_URL=http://127.0.0.1:8091 cargo test -p mem-llm --test live_embed -- --ignored`
//! (`.ci/live-llm.sh` does this). Run without the variable, the test fails and says so.

use std::time::Duration;

use mem_llm::CallPolicy;
use mem_llm::embed::{Embedder, EmbeddingSettings, cosine};

#[tokio::test]
#[ignore = "needs an embedding server: set MEM_LIVE_EMBED_URL (see .ci/local-embed.sh)"]
async fn live_embeddings_rank_a_paraphrase_above_an_unrelated_text() {
    let url = std::env::var("MEM_LIVE_EMBED_URL").unwrap_or_else(|_| {
        panic!("set MEM_LIVE_EMBED_URL to a running embedding server (see .ci/local-embed.sh)")
    });
    let settings = EmbeddingSettings {
        base_url: format!("{}/v1", url.trim_end_matches('/')),
        model: "all-MiniLM-L6-v2".to_owned(),
        api_key: None,
        policy: CallPolicy {
            timeout: Duration::from_secs(60),
            ..CallPolicy::for_job(mem_llm::Job::Extract)
        },
        batch: 2,
        min_similarity: 0.5,
        english_only: true,
    };
    let e = Embedder::new(&settings).unwrap();
    let texts: Vec<String> = [
        "the build cache makes compiles slow",
        "compilation is sluggish because of caching",
        "my favourite pizza topping is basil",
    ]
    .map(str::to_owned)
    .to_vec();
    let v = e.embed(&texts).await.unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].len(), 384, "all-MiniLM-L6-v2 has 384 dimensions");
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    let (para, other) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(
        para > 0.5 && other < 0.3 && para > other + 0.3,
        "{para} vs {other}"
    );
    // The same text twice gives the same vector (the cache relies on it).
    let again = e.embed(&texts[..1]).await.unwrap();
    assert!(cosine(&again[0], &v[0]) > 0.999);
}
