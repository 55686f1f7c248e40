//! The session search index (`mem_session::search`): what is indexed, incremental refresh, a
//! rewritten file, a deleted session and secrets, on real session files in a temp dir.

use mem_core::{ContentBlock, Message, Role};
use mem_session::{SessionIndex, SessionQuery, SessionStore};
use serde_json::json;

fn query(text: &str) -> SessionQuery {
    SessionQuery {
        text: text.to_owned(),
        ..SessionQuery::default()
    }
}

fn found(index: &SessionIndex, text: &str) -> Vec<(String, u64, String)> {
    index
        .search(&query(text))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|h| (h.session_id, h.record, h.role))
        .collect()
}

/// Every byte of the index's files (the database, and a WAL when there is one).
fn index_bytes(store: &SessionStore) -> Vec<u8> {
    let path = SessionIndex::path_for(store);
    let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
    for ext in ["-wal", "-journal"] {
        let mut p = path.clone().into_os_string();
        p.push(ext);
        if let Ok(b) = std::fs::read(&p) {
            bytes.extend(b);
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn messages_tool_calls_and_summaries_are_found_by_record_number() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::for_project(tmp.path());
    let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
    let id = w.id().to_owned();
    w.append(&Message::user(
        "Why is the tenant cache returning stale rows?",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::new(
        Role::Assistant,
        vec![
            ContentBlock::text("Let me look at the invalidation."),
            ContentBlock::tool_use(
                "t1",
                "Bash",
                json!({"command": "rg invalidate_tenant src/cache.rs"}),
            ),
        ],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::new(
        Role::User,
        vec![ContentBlock::tool_result(
            "t1",
            "src/cache.rs:42: fn invalidate_tenant(id)",
            false,
        )],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::new(
        Role::User,
        vec![ContentBlock::tool_result(
            "t2",
            format!("noisyoutputword {}", "x".repeat(4000)),
            false,
        )],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::user(
        "<system-reminder>\nInjectedreminderword from the client\n</system-reminder>",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::user("我们决定把缓存策略改成写穿。"))
        .unwrap_or_else(|e| panic!("{e}"));
    drop(w);

    let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("{e}"));
    let report = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (report.sessions, report.read, report.added),
        (1, 1, 4),
        "{report:?}"
    );

    assert_eq!(
        found(&index, "stale tenant cache"),
        vec![(id.clone(), 1, "user".into())]
    );
    // A command and a file path of a tool call, and a short tool result.
    assert_eq!(
        found(&index, "rg invalidate_tenant"),
        vec![(id.clone(), 2, "assistant".into())]
    );
    let path_hits = found(&index, "src/cache.rs");
    assert_eq!(path_hits.len(), 2, "{path_hits:?}");
    // Raw output above the size and client-injected context are not indexed.
    assert!(found(&index, "noisyoutputword").is_empty());
    assert!(found(&index, "Injectedreminderword").is_empty());
    // Any two consecutive characters of Chinese text, with the query's own words around them.
    assert_eq!(
        found(&index, "缓存策略"),
        vec![(id.clone(), 6, "user".into())]
    );
    assert_eq!(found(&index, "写穿"), vec![(id.clone(), 6, "user".into())]);
    // Record numbers are those `mem session show` prints.
    let (records, _) = store.read_records(&id).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(records.len(), 6);
    // A filter by session and by time.
    let mut q = query("cache");
    q.session = Some("someone-else".into());
    assert!(
        index
            .search(&q)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    q.session = Some(id.clone());
    assert!(
        !index
            .search(&q)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    q.since = Some("2999-01-01".into());
    assert!(
        index
            .search(&q)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    q.since = Some("yesterday-ish".into());
    let err = index
        .search(&q)
        .err()
        .unwrap_or_else(|| panic!("no error"))
        .to_string();
    assert!(
        err.contains("yesterday-ish") && err.contains("YYYY-MM-DD"),
        "{err}"
    );
    // Query syntax has no meaning: quotes, operators and stray punctuation are words or nothing.
    assert!(found(&index, "\" NEAR( * -").is_empty());
}

#[test]
fn a_refresh_reads_only_what_was_appended_and_notices_a_rewrite() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::for_project(tmp.path());
    let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
    let id = w.id().to_owned();
    w.append(&Message::user("first we talk about the parser"))
        .unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::assistant("the parser is recursive descent"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        index
            .refresh(&store)
            .unwrap_or_else(|e| panic!("{e}"))
            .added,
        2
    );
    // Nothing changed: nothing read.
    let again = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((again.read, again.added), (0, 0), "{again:?}");

    w.append(&Message::user("now the lexer needs unicode identifiers"))
        .unwrap_or_else(|e| panic!("{e}"));
    let grown = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (grown.read, grown.reindexed, grown.added),
        (1, 0, 1),
        "{grown:?}"
    );
    assert_eq!(
        found(&index, "lexer unicode"),
        vec![(id.clone(), 3, "user".into())]
    );
    assert_eq!(found(&index, "parser").len(), 2);
    drop(w);

    // The file is rewritten with other content of a greater length: indexed again from the start.
    let path = store.jsonl_path(&id);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, text.replace("parser", "grammar") + "").unwrap_or_else(|e| panic!("{e}"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{e}"));
    use std::io::Write;
    writeln!(
        f,
        "{}",
        json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"and the formatter"}]}})
    )
    .unwrap_or_else(|e| panic!("{e}"));
    drop(f);
    let rewritten = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rewritten.reindexed, 1, "{rewritten:?}");
    assert!(found(&index, "parser").is_empty());
    assert_eq!(found(&index, "grammar").len(), 2);
    assert_eq!(found(&index, "formatter"), vec![(id, 4, "user".into())]);
}

#[test]
fn a_deleted_session_and_a_secret_leave_nothing_in_the_index_files() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::for_project(tmp.path());
    let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
    let gone = w.id().to_owned();
    w.append(&Message::user("the zanzibarword migration plan is ready"))
        .unwrap_or_else(|e| panic!("{e}"));
    drop(w);
    let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
    let kept = w.id().to_owned();
    let key = "ghp_Zq8rT2vLk9sXw4mNb7cYd1eFg3hJk5pQr6tU";
    w.append(&Message::user(format!(
        "deploy with token {key} to staging"
    )))
    .unwrap_or_else(|e| panic!("{e}"));
    drop(w);

    let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("{e}"));
    index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(found(&index, "zanzibarword").len(), 1);
    let hits = index
        .search(&query("deploy staging"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hits.len(), 1);
    assert!(!hits[0].snippet.contains(key), "{}", hits[0].snippet);
    assert!(found(&index, key).is_empty());

    store.delete(&gone).unwrap_or_else(|e| panic!("{e}"));
    let report = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.removed, 1, "{report:?}");
    assert!(found(&index, "zanzibarword").is_empty());
    assert_eq!(found(&index, "staging"), vec![(kept, 1, "user".into())]);
    drop(index);
    let bytes = index_bytes(&store);

    assert!(
        !contains(&bytes, "zanzibarword"),
        "a deleted session's text is still in the index file"
    );
    assert!(!contains(&bytes, key), "a secret reached the index file");
    assert!(
        !contains(&bytes, &gone),
        "a deleted session's id is still in the index file"
    );
}

#[test]
fn a_read_only_index_answers_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::for_project(tmp.path());
    assert!(
        SessionIndex::open_read_only(&store)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_none()
    );
    let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
    w.append(&Message::user("remember the quokka endpoint"))
        .unwrap_or_else(|e| panic!("{e}"));
    drop(w);
    SessionIndex::open(&store)
        .unwrap_or_else(|e| panic!("{e}"))
        .refresh(&store)
        .unwrap_or_else(|e| panic!("{e}"));
    let path = SessionIndex::path_for(&store);
    let before = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .modified()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut perms = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap_or_else(|e| panic!("{e}"));
    let mut ro = SessionIndex::open_read_only(&store)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no index"));
    assert_eq!(ro.refresh(&store).unwrap_or_else(|e| panic!("{e}")).read, 0);
    assert_eq!(found(&ro, "quokka").len(), 1);
    drop(ro);
    assert_eq!(
        std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{e}"))
            .modified()
            .unwrap_or_else(|e| panic!("{e}")),
        before
    );
}

/// Segments of the index's full-text table.
fn fts_segments(store: &SessionStore) -> i64 {
    let c =
        rusqlite::Connection::open(SessionIndex::path_for(store)).unwrap_or_else(|e| panic!("{e}"));
    c.query_row(
        "SELECT count(DISTINCT segid) FROM messages_fts_idx",
        [],
        |r| r.get(0),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `n` messages of varied words for session writer `w`, starting at number `from`.
fn chatter(w: &mut mem_session::SessionWriter, from: usize, n: usize) {
    for i in from..from + n {
        w.append(&Message::user(format!(
            "step {i}: check w{i}a and q{}z in module m{} before the k{i}x release",
            i * 31,
            i % 97
        )))
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A refresh that adds rows merges the full-text index once the segments beside its largest
/// make up a share of it (`mem_core::fts5::needs_merge`), and not for a few messages more.
#[test]
fn a_refresh_merges_the_index_once_new_rows_make_up_a_share_of_it() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::for_project(tmp.path());
    let mut writers = Vec::new();
    for s in 0..3 {
        let mut w = store.create().unwrap_or_else(|e| panic!("{e}"));
        chatter(&mut w, s * 2000, 2000);
        writers.push(w);
    }
    let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("{e}"));
    let first = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.added, 6000);
    assert!(first.merged, "{first:?}");
    assert_eq!(fts_segments(&store), 1);
    // A few messages more: a small segment beside the merged one, no merge.
    chatter(&mut writers[0], 6000, 5);
    let few = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((few.added, few.merged), (5, false), "{few:?}");
    assert_eq!(fts_segments(&store), 2);
    // A third of the index more (past a sixteenth and the least merged, 32 pages): merged
    // again, and everything is found.
    chatter(&mut writers[1], 6005, 2000);
    let many = index.refresh(&store).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((many.added, many.merged), (2000, true), "{many:?}");
    assert_eq!(fts_segments(&store), 1);
    assert_eq!(found(&index, "k6003x").len(), 1);
    assert_eq!(found(&index, "k6500x").len(), 1);
    assert_eq!(found(&index, "k17x").len(), 1);
}
