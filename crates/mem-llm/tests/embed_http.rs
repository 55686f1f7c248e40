//! The embeddings client against a real HTTP server on loopback (wiremock): the request it sends
//! (path, model, input, bearer key, secrets redacted), batching, index order, 500 then success,
//! 429 with Retry-After, 401 without retry, malformed replies, connection refused; the vector
//! cache; hybrid selection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mem_llm::embed::{Embedder, EmbeddingSettings, VectorCache};
use mem_llm::{
    ApiKey, CallPolicy, Candidate, HybridSelector, Job, Llm, LlmError, OfflineEngine, SelectRequest,
};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-embed-test-key-never-logged";

fn settings(base: &str, batch: usize) -> EmbeddingSettings {
    EmbeddingSettings {
        base_url: base.to_owned(),
        model: "mini".to_owned(),
        api_key: Some(ApiKey::new(KEY)),
        policy: CallPolicy {
            connect_timeout: Duration::from_secs(2),
            timeout: Duration::from_secs(10),
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
        batch,
        min_similarity: 0.5,
        english_only: true,
    }
}

fn embedder(server: &MockServer, batch: usize) -> Embedder {
    Embedder::new(&settings(&format!("{}/v1", server.uri()), batch))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A reply giving text i the vector [len(text), i], in reverse index order.
fn reply_for(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or_else(|e| panic!("{e}"));
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let mut data: Vec<Value> = input
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let len = t.as_str().map_or(0, str::len) as f64;
            json!({"object": "embedding", "index": i, "embedding": [len, i as f64 + 1.0]})
        })
        .collect();
    data.reverse();
    ResponseTemplate::new(200)
        .set_body_json(json!({"object": "list", "data": data, "model": "mini"}))
}

#[tokio::test]
async fn sends_openai_shape_batches_and_orders_by_index() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(reply_for)
        .expect(2)
        .mount(&server)
        .await;
    let texts: Vec<String> = ["a", "bbb", "cc"].map(str::to_owned).to_vec();
    let v = embedder(&server, 2).embed(&texts).await.unwrap();
    assert_eq!(v.len(), 3);
    // Unit length, and text order kept though the server answered in reverse.
    for (vec, (len, i)) in v.iter().zip([(1.0f32, 1.0f32), (3.0, 2.0), (2.0, 1.0)]) {
        let n = (len * len + i * i).sqrt();
        assert!(
            (vec[0] - len / n).abs() < 1e-6 && (vec[1] - i / n).abs() < 1e-6,
            "{vec:?}"
        );
    }
    let requests = server.received_requests().await.unwrap_or_default();
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(first, json!({"model": "mini", "input": ["a", "bbb"]}));
    // No request for nothing.
    assert!(embedder(&server, 2).embed(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn secrets_are_redacted_before_sending() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(reply_for)
        .mount(&server)
        .await;
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let texts = vec![format!("the aws key is {secret} ok")];
    embedder(&server, 8).embed(&texts).await.unwrap();
    let requests = server.received_requests().await.unwrap_or_default();
    let sent = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(!sent.contains(secret), "{sent}");
    assert!(sent.contains("the aws key is"), "{sent}");
}

#[tokio::test]
async fn retries_500_and_429_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(reply_for)
        .mount(&server)
        .await;
    let v = embedder(&server, 8).embed(&["x".to_owned()]).await.unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        3
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_the_key_is_masked() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"error": {"message": format!("bad key {KEY}")}})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = embedder(&server, 8)
        .embed(&["x".to_owned()])
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Unauthorized { .. }), "{err:?}");
    assert!(!format!("{err} {err:?}").contains(KEY));
}

#[tokio::test]
async fn malformed_replies_are_errors() {
    let bodies = [
        json!({"data": []}),
        json!({"nothing": 1}),
        json!({"data": [{"index": 0, "embedding": ["x"]}]}),
        json!({"data": [{"index": 5, "embedding": [1.0]}]}),
        json!({"data": [{"index": 0, "embedding": []}]}),
    ];
    for body in bodies {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(body.clone()))
            .mount(&server)
            .await;
        let err = embedder(&server, 8)
            .embed(&["x".to_owned()])
            .await
            .unwrap_err();
        assert!(
            matches!(err, LlmError::MalformedReply { .. }),
            "{body}: {err:?}"
        );
    }
    // Vectors of different dimensions across batches.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"data": [{"index": 0, "embedding": [1.0, 2.0]}]})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"data": [{"index": 0, "embedding": [1.0]}]})),
        )
        .mount(&server)
        .await;
    let err = embedder(&server, 1)
        .embed(&["x".to_owned(), "y".to_owned()])
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::MalformedReply { .. }), "{err:?}");
}

#[tokio::test]
async fn connection_refused_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e = Embedder::new(&settings(&format!("http://127.0.0.1:{port}/v1"), 8)).unwrap();
    let err = e.embed(&["x".to_owned()]).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");
    assert!(Embedder::new(&settings("ftp://x", 8)).is_err());
}

/// An in-memory [`VectorCache`].
#[derive(Default)]
struct MemCache(Mutex<HashMap<(String, String), Vec<f32>>>);

impl VectorCache for MemCache {
    fn vectors(&self, model: &str, hashes: &[String]) -> Result<HashMap<String, Vec<f32>>, String> {
        let map = self.0.lock().map_err(|e| e.to_string())?;
        Ok(hashes
            .iter()
            .filter_map(|h| {
                map.get(&(h.clone(), model.to_owned()))
                    .map(|v| (h.clone(), v.clone()))
            })
            .collect())
    }
    fn store_vectors(&self, model: &str, rows: &[(String, Vec<f32>)]) -> Result<(), String> {
        let mut map = self.0.lock().map_err(|e| e.to_string())?;
        for (h, v) in rows {
            map.insert((h.clone(), model.to_owned()), v.clone());
        }
        Ok(())
    }
    fn forget_vectors(&self, hashes: &[String]) -> Result<u64, String> {
        let mut map = self.0.lock().map_err(|e| e.to_string())?;
        let before = map.len();
        map.retain(|(h, _), _| !hashes.contains(h));
        Ok((before - map.len()) as u64)
    }
}

fn inputs(requests: &[Request]) -> Vec<String> {
    requests
        .iter()
        .flat_map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}"));
            body["input"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
        })
        .collect()
}

#[tokio::test]
async fn cached_vectors_are_reused_and_a_model_change_re_embeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply_for)
        .mount(&server)
        .await;
    let cache = MemCache::default();
    let e = embedder(&server, 8);
    let first = e
        .embed_cached(
            Some(&cache),
            &["a".to_owned(), "bb".to_owned(), "a".to_owned()],
        )
        .await
        .unwrap();
    assert_eq!(first[0], first[2]);
    assert_eq!(
        inputs(&server.received_requests().await.unwrap()),
        ["a", "bb"]
    );
    // Only the new text is sent.
    let second = e
        .embed_cached(Some(&cache), &["bb".to_owned(), "ccc".to_owned()])
        .await
        .unwrap();
    assert_eq!(second[0], first[1]);
    assert_eq!(
        inputs(&server.received_requests().await.unwrap()),
        ["a", "bb", "ccc"]
    );
    // Another model misses the cache.
    let mut other = settings(&format!("{}/v1", server.uri()), 8);
    other.model = "other".to_owned();
    Embedder::new(&other)
        .unwrap()
        .embed_cached(Some(&cache), &["bb".to_owned()])
        .await
        .unwrap();
    assert_eq!(inputs(&server.received_requests().await.unwrap()).len(), 4);
}

/// The first `uncached` texts (a query) are embedded but never stored; a memory text equal to
/// the query is still stored; `forget_vectors` drops rows by hash under every model.
#[tokio::test]
async fn a_query_is_not_cached_and_forgotten_rows_go() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply_for)
        .mount(&server)
        .await;
    let cache = MemCache::default();
    let e = embedder(&server, 8);
    let texts = ["q".to_owned(), "a".to_owned(), "bb".to_owned()];
    e.embed_partly_cached(Some(&cache), &texts, 1)
        .await
        .unwrap();
    let hash = |t: &str| mem_core::sha256_hex(t.as_bytes());
    let held = |h: &str| {
        cache
            .vectors("mini", &[h.to_owned()])
            .unwrap()
            .contains_key(h)
    };
    assert!(!held(&hash("q")));
    assert!(held(&hash("a")) && held(&hash("bb")));
    // The query again is sent again; the memories are not.
    e.embed_partly_cached(Some(&cache), &texts, 1)
        .await
        .unwrap();
    assert_eq!(
        inputs(&server.received_requests().await.unwrap()),
        ["q", "a", "bb", "q"]
    );
    // A memory whose text is the query's is cached as a memory.
    e.embed_partly_cached(Some(&cache), &["a".to_owned(), "a".to_owned()], 1)
        .await
        .unwrap();
    assert!(held(&hash("a")));
    assert_eq!(cache.forget_vectors(&[hash("a")]).unwrap(), 1);
    assert!(!held(&hash("a")) && held(&hash("bb")));
}

fn candidate(id: &str, name: &str, body: &str) -> Candidate {
    Candidate {
        user_level: false,
        id: id.to_owned(),
        name: name.to_owned(),
        description: String::new(),
        body: body.to_owned(),
    }
}

/// Vectors by topic: texts mentioning "cache" or "slow" point one way, the rest another.
fn topic_reply(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or_else(|e| panic!("{e}"));
    let data: Vec<Value> = body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_str().unwrap_or_default();
            let v = if t.contains("sluggish") || t.contains("cache") {
                [1.0, 0.1]
            } else {
                [0.0, 1.0]
            };
            json!({"index": i, "embedding": v})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({"data": data}))
}

#[tokio::test]
async fn hybrid_selection_adds_a_paraphrase_and_falls_back_when_embeddings_fail() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(topic_reply)
        .mount(&server)
        .await;
    let request = SelectRequest {
        query: "why are builds so sluggish".to_owned(),
        candidates: vec![
            candidate("build.md", "build steps", "how builds run in CI"),
            candidate(
                "cache.md",
                "compile cache",
                "the cache must be warmed first",
            ),
            candidate("pizza.md", "lunch", "basil on top"),
        ],
        limit: 5,
    };
    let offline = OfflineEngine.select(&request).await.unwrap();
    assert!(
        !offline.value.ids.contains(&"cache.md".to_owned()),
        "{:?}",
        offline.value.ids
    );
    let hybrid = HybridSelector::new(Arc::new(OfflineEngine), embedder(&server, 8), None, 0.5);
    let reply = hybrid.select(&request).await.unwrap();
    assert!(
        reply.value.ids.contains(&"cache.md".to_owned()),
        "{:?}",
        reply.value.ids
    );
    assert!(
        !reply.value.ids.contains(&"pizza.md".to_owned()),
        "{:?}",
        reply.value.ids
    );
    for id in &offline.value.ids {
        assert!(reply.value.ids.contains(id), "{id} lost");
    }
    assert_eq!(reply.engine, "offline+embeddings:mini");
    assert_eq!(hybrid.engine_name(Job::Select), "offline+embeddings:mini");
    assert_eq!(hybrid.engine_name(Job::Extract), "offline");

    let down = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&down)
        .await;
    let hybrid = HybridSelector::new(Arc::new(OfflineEngine), embedder(&down, 8), None, 0.5);
    let reply = hybrid.select(&request).await.unwrap();
    assert_eq!(reply.value.ids, offline.value.ids);
    assert!(
        reply
            .fallback
            .as_deref()
            .unwrap_or("")
            .contains("embeddings failed")
    );
}

#[tokio::test]
async fn english_only_leaves_cjk_messages_lexical() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(topic_reply)
        .mount(&server)
        .await;
    let request = SelectRequest {
        query: "构建为什么这么 sluggish".to_owned(),
        candidates: vec![candidate(
            "cache.md",
            "compile cache",
            "the cache must be warmed",
        )],
        limit: 5,
    };
    let both = HybridSelector::new(Arc::new(OfflineEngine), embedder(&server, 8), None, 0.5);
    assert_eq!(both.select(&request).await.unwrap().value.ids, ["cache.md"]);
    let english = HybridSelector::new(Arc::new(OfflineEngine), embedder(&server, 8), None, 0.5)
        .english_only(true);
    assert!(english.select(&request).await.unwrap().value.ids.is_empty());
}

#[tokio::test]
async fn a_slow_embedding_server_costs_the_lexical_selection_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(topic_reply_delayed)
        .mount(&server)
        .await;
    let request = SelectRequest {
        query: "how builds run".to_owned(),
        candidates: vec![candidate("build.md", "build steps", "how builds run in CI")],
        limit: 5,
    };
    let hybrid = HybridSelector::new(Arc::new(OfflineEngine), embedder(&server, 8), None, 0.5);
    let started = std::time::Instant::now();
    let reply = hybrid.select(&request).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?} {:?}",
        started.elapsed(),
        reply
    );
    assert_eq!(reply.value.ids, ["build.md"]);
    assert!(
        reply
            .fallback
            .as_deref()
            .unwrap_or("")
            .contains("embeddings failed")
    );
}

fn topic_reply_delayed(req: &Request) -> ResponseTemplate {
    topic_reply(req).set_delay(Duration::from_secs(8))
}

#[tokio::test]
async fn a_call_cut_at_a_deadline_keeps_the_batches_it_finished() {
    let server = MockServer::start().await;
    // The first batch answers at once, every later one after 8 s.
    Mock::given(method("POST"))
        .respond_with(reply_for)
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(|r: &Request| reply_for(r).set_delay(Duration::from_secs(8)))
        .mount(&server)
        .await;
    let cache = MemCache::default();
    let e = embedder(&server, 2);
    let texts: Vec<String> = ["a", "bb", "ccc", "dddd"].map(str::to_owned).to_vec();
    let cut = tokio::time::timeout(Duration::from_secs(1), e.embed_cached(Some(&cache), &texts));
    assert!(
        cut.await.is_err(),
        "the second batch should still be running"
    );
    let kept = cache.0.lock().unwrap().len();
    assert_eq!(kept, 2, "the first batch is cached");
}
