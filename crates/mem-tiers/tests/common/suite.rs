//! The store test suite, generic over [`MemoryStore`]: every backend must pass it. A backend's
//! test file includes this module (`#[path = ".../suite.rs"] mod suite;`) and calls
//! [`run_all`] with a function returning a fresh, empty store.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use mem_tiers::*;

fn learning(
    title: &str,
    content: &str,
    category: &str,
    project: Option<&str>,
    t: i64,
) -> NewLearning {
    NewLearning {
        title: title.into(),
        content: content.into(),
        category: category.into(),
        tags: vec!["t1".into()],
        context: None,
        project_key: project.map(str::to_owned),
        created_ms: t,
        share_with_team: false,
    }
}

fn search<S: MemoryStore>(s: &S, q: &str, visible_in: Option<&str>) -> Vec<String> {
    s.search(&SearchQuery {
        text: q.into(),
        visible_in: visible_in.map(str::to_owned),
        sources: Vec::new(),
        scope: None,
        limit: 10,
    })
    .unwrap()
    .into_iter()
    .map(|h| h.id)
    .collect()
}

/// The ids and BM25 scores of a search for `text` visible from `project` (50 at most).
pub fn hits_and_scores<S: MemoryStore>(
    s: &S,
    text: &str,
    project: Option<&str>,
) -> Vec<(String, f64)> {
    s.search(&SearchQuery {
        text: text.into(),
        visible_in: project.map(str::to_owned),
        limit: 50,
        ..Default::default()
    })
    .unwrap()
    .into_iter()
    .map(|h| (h.id, h.score))
    .collect()
}

/// Runs every check on fresh stores from `make`.
pub fn run_all<S: MemoryStore>(make: impl Fn() -> S) {
    learnings_round_trip(&make());
    visibility_and_categories(&make());
    preferences_and_projects(&make());
    search_languages_identifiers_and_syntax(&make());
    scoped_search_fills_the_limit(&make());
    file_documents(&make());
    expiry(&make());
    snippets_cut_between_words_without_tags(&make());
}

/// A hit's snippet is cut between words, never inside one, and a learning's tags are not glued
/// onto its text (issue 27 item 25): shown as `(tags: …)` only when only they hold the term.
pub fn snippets_cut_between_words_without_tags<S: MemoryStore>(s: &S) {
    let words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike \
                 november oscar papa quebec romeo sierra tango uniform victor whiskey xray \
                 yankee zulu";
    let mut l = learning("phonetic", words, "reference", None, 1000);
    l.tags = vec!["pooling".into(), "nightly".into()];
    s.add_learning(&l).unwrap();
    let snippet = |q: &str| {
        let hits = s
            .search(&SearchQuery {
                text: q.into(),
                visible_in: None,
                sources: Vec::new(),
                scope: None,
                limit: 10,
            })
            .unwrap();
        assert_eq!(hits.len(), 1, "{q}: {hits:?}");
        hits[0].snippet.clone()
    };
    let known: Vec<&str> = words.split(' ').collect();
    for q in ["alpha", "november", "zulu", "sierra"] {
        let got = snippet(q);
        let inner = got.trim_start_matches('…').trim_end_matches('…');
        assert!(inner.contains(q), "{q}: {got}");
        for w in inner.split(' ') {
            assert!(
                known.contains(&w),
                "{q}: {got:?} holds {w:?}, not a whole word"
            );
        }
    }
    let tail = snippet("zulu");
    assert!(tail.ends_with("zulu"), "{tail}");
    assert!(!tail.contains("pooling"), "tags glued on: {tail}");
    let by_tag = snippet("pooling");
    assert!(by_tag.ends_with(" (tags: pooling nightly)"), "{by_tag}");
    assert!(by_tag.starts_with("alpha bravo"), "{by_tag}");
}

pub fn learnings_round_trip<S: MemoryStore>(s: &S) {
    let a = s
        .add_learning(&learning(
            "SQL 注入防护",
            "永远使用参数化查询",
            "error",
            Some("p1"),
            1000,
        ))
        .unwrap();
    let b = s
        .add_learning(&learning(
            "FastAPI 依赖注入",
            "使用 Depends() 进行依赖注入",
            "best-practice",
            None,
            2000,
        ))
        .unwrap();
    assert!(b.id > a.id);
    assert_eq!(s.learning(a.id).unwrap().as_ref(), Some(&a));
    assert_eq!(a.tags, ["t1"]);
    let all = s.learnings(&LearningFilter::default()).unwrap();
    assert_eq!(all.iter().map(|l| l.id).collect::<Vec<_>>(), [b.id, a.id]);
    let doc = s.document(&format!("L{}", a.id)).unwrap().unwrap();
    assert_eq!(doc.source, SourceKind::Learning);
    assert_eq!(doc.title, "SQL 注入防护");
    assert!(s.delete_learning(a.id).unwrap());
    assert!(!s.delete_learning(a.id).unwrap());
    assert_eq!(s.learning(a.id).unwrap(), None);
    assert_eq!(s.document(&format!("L{}", a.id)).unwrap(), None);
    assert!(search(s, "参数化查询", None).is_empty());
    s.touch_learnings(&[b.id], 5000).unwrap();
    assert_eq!(s.learning(b.id).unwrap().unwrap().last_used_ms, 5000);
    let stats = s.stats().unwrap();
    assert_eq!(stats.learnings, 1);
    assert_eq!(stats.documents.get("learning"), Some(&1));
}

pub fn visibility_and_categories<S: MemoryStore>(s: &S) {
    let a = s
        .add_learning(&learning("alpha only", "x", "error", Some("pa"), 1))
        .unwrap();
    let b = s
        .add_learning(&learning("beta only", "x", "error", Some("pb"), 2))
        .unwrap();
    let g = s
        .add_learning(&learning("global one", "x", "tip", None, 3))
        .unwrap();
    let ids = |f: LearningFilter| {
        s.learnings(&f)
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(LearningFilter {
            visible_in: Some("pa".into()),
            ..Default::default()
        }),
        [g.id, a.id]
    );
    assert_eq!(
        ids(LearningFilter {
            visible_in: Some("pb".into()),
            category: Some("error".into()),
            ..Default::default()
        }),
        [b.id]
    );
    assert_eq!(
        ids(LearningFilter {
            limit: Some(1),
            ..Default::default()
        }),
        [g.id]
    );
    assert_eq!(search(s, "only", Some("pa")), [format!("L{}", a.id)]);
    let mut both = search(s, "only", None);
    both.sort();
    assert_eq!(both.len(), 2);
}

pub fn preferences_and_projects<S: MemoryStore>(s: &S) {
    assert!(s.set_user_preference("model", Some("deepseek")).unwrap());
    assert!(!s.set_user_preference("model", Some("deepseek")).unwrap());
    s.set_user_preference("workflow", Some("tdd")).unwrap();
    let p = s.user_preferences().unwrap();
    assert_eq!(p.get("model").map(String::as_str), Some("deepseek"));
    assert!(s.set_user_preference("workflow", None).unwrap());
    assert_eq!(s.user_preferences().unwrap().len(), 1);
    let mk = |key: &str, t: i64| ProjectRecord {
        key: key.into(),
        name: key.into(),
        path: format!("/src/{key}"),
        language: Some("Python".into()),
        framework: Some("FastAPI".into()),
        test_command: Some("pytest".into()),
        custom_commands: [("lint".to_owned(), "ruff check .".to_owned())].into(),
        notes: vec!["uses uv".into()],
        created_ms: t,
        last_used_ms: t,
    };
    s.upsert_project(&mk("a", 10)).unwrap();
    s.upsert_project(&mk("b", 20)).unwrap();
    let mut again = mk("a", 30);
    again.created_ms = 30;
    s.upsert_project(&again).unwrap();
    let recent = s.recent_projects(Some(5)).unwrap();
    assert_eq!(
        recent.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        recent[0].created_ms, 10,
        "the first registration time is kept"
    );
    assert_eq!(s.project("b").unwrap().as_ref(), Some(&mk("b", 20)));
}

pub fn search_languages_identifiers_and_syntax<S: MemoryStore>(s: &S) {
    let l = |t: &str, c: &str| {
        s.add_learning(&learning(t, c, "general", None, 1))
            .unwrap()
            .id
    };
    let en = l(
        "Coverage",
        "Use pytest-cov to check coverage: tests should be above 80%",
    );
    let zh = l("SQL 注入防护", "永远使用参数化查询");
    let path = l(
        "Config location",
        "The loader reads crates/mem-cli/src/config.rs first",
    );
    let ident = l(
        "Budget constant",
        "TIER0_MAX_TOKENS is checked by fit_sections()",
    );
    let quote = l("Quotes", "He said \"NEAR(\" and -minus * star");
    let id = |n: i64| format!("L{n}");
    assert_eq!(search(s, "coverage", None), [id(en)]);
    assert_eq!(
        search(s, "TESTS coverage", None),
        [id(en)],
        "case-insensitive, all words"
    );
    assert_eq!(search(s, "参数化查询", None), [id(zh)]);
    assert_eq!(
        search(s, "注入", None),
        [id(zh)],
        "two CJK characters: substring scan"
    );
    assert_eq!(search(s, "crates/mem-cli/src/config.rs", None), [id(path)]);
    assert_eq!(search(s, "config.rs", None), [id(path)]);
    assert_eq!(search(s, "TIER0_MAX_TOKENS", None), [id(ident)]);
    assert_eq!(
        search(s, "MAX_TOK", None),
        [id(ident)],
        "substring of an identifier"
    );
    assert_eq!(search(s, "fit_sections()", None), [id(ident)]);
    for q in [
        "\"",
        "NEAR(",
        "-minus",
        "*",
        "\"unbalanced",
        "a OR",
        "title:x",
        "NOT",
        "(((",
        "'",
        "\\",
        "%",
        "_",
    ] {
        // Never an error; a literal search.
        let _ = search(s, q, None);
    }
    assert_eq!(search(s, "\"NEAR(\"", None), [id(quote)]);
    assert_eq!(
        search(s, "*", None),
        [id(quote)],
        "punctuation is searched literally"
    );
    assert!(search(s, "zzzz-not-there", None).is_empty());
    assert!(search(s, "   ", None).is_empty());
    let hits = s
        .search(&SearchQuery {
            text: "参数化".into(),
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].snippet.contains("参数化"), "{:?}", hits[0].snippet);
    let only_notes = s
        .search(&SearchQuery {
            text: "coverage".into(),
            limit: 5,
            sources: vec![SourceKind::Note],
            ..Default::default()
        })
        .unwrap();
    assert!(only_notes.is_empty());
}

/// A search restricted to one scope returns `limit` hits when that many match, even when the
/// other scope holds many better-ranked matches (the scope is part of the query, not a filter
/// applied to its first `limit` hits).
pub fn scoped_search_fills_the_limit<S: MemoryStore>(s: &S) {
    // 40 project learnings that rank high (the word three times), then 6 user-level ones that
    // rank low (once, in a longer text).
    for i in 0..40 {
        s.add_learning(&learning(
            &format!("cachewarm cachewarm note {i}"),
            "cachewarm first, always cachewarm",
            "tip",
            Some("p1"),
            i,
        ))
        .unwrap();
    }
    let mut user_ids = Vec::new();
    for i in 0..6 {
        let l = s
            .add_learning(&learning(
                &format!("user lesson {i}"),
                "a long text about many things: builds, tests, reviews, releases, and one \
                 mention of cachewarm near the end of it",
                "tip",
                None,
                100 + i,
            ))
            .unwrap();
        user_ids.push(format!("L{}", l.id));
    }
    let scoped = |text: &str, scope: &str, limit: usize| -> Vec<SearchHit> {
        s.search(&SearchQuery {
            text: text.into(),
            visible_in: Some("p1".into()),
            sources: Vec::new(),
            scope: Some(scope.into()),
            limit,
        })
        .unwrap()
    };
    // Word index and substring index ("achewar" is only a part of a word).
    for text in ["cachewarm", "achewar"] {
        let unscoped = s
            .search(&SearchQuery {
                text: text.into(),
                visible_in: Some("p1".into()),
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(unscoped.len(), 5, "{text}");
        let user = scoped(text, "user", 5);
        assert_eq!(user.len(), 5, "{text}: {user:?}");
        assert!(user.iter().all(|h| h.scope == "user"), "{text}: {user:?}");
        assert!(user.iter().all(|h| user_ids.contains(&h.id)), "{text}");
        // All six when asked for more than exist.
        assert_eq!(scoped(text, "user", 20).len(), 6, "{text}");
        let project = scoped(text, "project", 7);
        assert_eq!(project.len(), 7, "{text}");
        assert!(project.iter().all(|h| h.scope == "project"), "{text}");
        assert!(scoped(text, "extra0", 5).is_empty(), "{text}");
    }
}

pub fn file_documents<S: MemoryStore>(s: &S) {
    let state = |path: &str, hash: &str| FileState {
        path: path.into(),
        root: "/r".into(),
        size: 10,
        mtime_ns: 5,
        hash: hash.into(),
    };
    let doc = |id: &str, path: &str, body: &str| Document {
        id: id.into(),
        source: SourceKind::Note,
        scope: "project".into(),
        project_key: Some("p".into()),
        title: "t".into(),
        body: body.into(),
        path: Some(path.into()),
        updated_ms: 1,
    };
    s.replace_file(
        &state("/r/a.md", "h1"),
        &[doc("N:project/a.md", "/r/a.md", "first words")],
    )
    .unwrap();
    assert_eq!(search(s, "first", Some("p")), ["N:project/a.md"]);
    assert!(
        search(s, "first", Some("other")).is_empty(),
        "a project's notes stay in it"
    );
    s.replace_file(
        &state("/r/a.md", "h2"),
        &[doc("N:project/a.md", "/r/a.md", "second words")],
    )
    .unwrap();
    assert!(search(s, "first", Some("p")).is_empty());
    assert_eq!(search(s, "second", Some("p")), ["N:project/a.md"]);
    let mut touched = state("/r/a.md", "h2");
    touched.mtime_ns = 99;
    s.touch_file(&touched).unwrap();
    assert_eq!(s.indexed_files(&["/r".into()]).unwrap(), [touched]);
    assert_eq!(s.remove_file("/r/a.md").unwrap(), 1);
    assert!(search(s, "second", Some("p")).is_empty());
    assert!(s.indexed_files(&["/r".into()]).unwrap().is_empty());
    s.replace_file(
        &state("/r/b.md", "h"),
        &[doc("N:project/b.md", "/r/b.md", "bee")],
    )
    .unwrap();
    s.add_learning(&learning("kept", "bee", "general", None, 1))
        .unwrap();
    assert_eq!(s.clear_file_index().unwrap(), 1);
    assert_eq!(search(s, "bee", None).len(), 1, "learnings stay");
}

pub fn expiry<S: MemoryStore>(s: &S) {
    let old = s
        .add_learning(&learning("old", "x", "general", Some("p"), 100))
        .unwrap();
    let new = s
        .add_learning(&learning("new", "x", "general", Some("p"), 10_000))
        .unwrap();
    let other = s
        .add_learning(&learning("other", "x", "general", Some("q"), 100))
        .unwrap();
    let user_old = s
        .add_learning(&learning("user old", "x", "general", None, 100))
        .unwrap();
    let projects_only = Expiry {
        project_before_ms: Some(1000),
        user_before_ms: None,
    };
    let dry = s.expire_learnings(projects_only, Some("p"), true).unwrap();
    assert_eq!(dry.iter().map(|l| l.id).collect::<Vec<_>>(), [old.id]);
    assert!(s.learning(old.id).unwrap().is_some());
    s.expire_learnings(projects_only, Some("p"), false).unwrap();
    assert!(s.learning(old.id).unwrap().is_none());
    assert!(s.learning(new.id).unwrap().is_some());
    assert!(s.learning(other.id).unwrap().is_some());
    // A project's cutoff never reaches a user-level learning; the user's own does.
    assert!(s.learning(user_old.id).unwrap().is_some());
    let users_only = Expiry {
        project_before_ms: None,
        user_before_ms: Some(1000),
    };
    let gone = s.expire_learnings(users_only, Some("p"), false).unwrap();
    assert_eq!(gone.iter().map(|l| l.id).collect::<Vec<_>>(), [user_old.id]);
    assert!(s.learning(user_old.id).unwrap().is_none());
    assert!(s.learning(new.id).unwrap().is_some());
}

/// Ranking under the cap (issue 29 Build 1): `capped` ranks at most 10 matches, `exact` the
/// default cap. Old learnings that rank high (the word in their bodies only: title matches
/// are ranked uncapped, see [`a_title_match_beyond_the_cap`]), newer ones that rank low, one
/// of those a little higher, and newer still, matches of another project only. `texts`: the
/// queries whose pass ranks (SQLite: a word and a part of it; PostgreSQL ranks the word pass
/// only).
pub fn ranking_under_the_cap<S: MemoryStore>(capped: &S, exact: &S, texts: &[&str]) {
    for s in [capped, exact] {
        for i in 0..5 {
            s.add_learning(&learning(
                &format!("strong {i}"),
                "zebrafish zebrafish zebrafish",
                "tip",
                Some("p1"),
                i,
            ))
            .unwrap();
        }
        for i in 5..30 {
            let content = if i == 25 {
                "a long text about builds and tests with zebrafish and zebrafish in it"
            } else {
                "a long text about builds, tests, reviews and releases with zebrafish in it"
            };
            s.add_learning(&learning(
                &format!("weak {i}"),
                content,
                "tip",
                Some("p1"),
                i,
            ))
            .unwrap();
        }
        for i in 30..60 {
            s.add_learning(&learning(
                &format!("zebrafish other {i}"),
                "zebrafish zebrafish zebrafish",
                "tip",
                Some("p2"),
                i,
            ))
            .unwrap();
        }
    }
    let titles = |s: &S, text: &str, limit: usize| -> Vec<String> {
        s.search(&SearchQuery {
            text: text.into(),
            visible_in: Some("p1".into()),
            limit,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| h.title)
        .collect()
    };
    for &text in texts {
        // Exact: the strong old ones first.
        let all = titles(exact, text, 5);
        assert_eq!(all.len(), 5, "{text}: {all:?}");
        assert!(all.iter().all(|t| t.contains("strong")), "{text}: {all:?}");
        // Capped: only the 10 newest visible matches (weak 20..29) are ranked, the other
        // project's newer matches do not use up the cap, and the best of them comes first.
        let capped_hits = titles(capped, text, 3);
        assert_eq!(capped_hits.len(), 3, "{text}: {capped_hits:?}");
        assert_eq!(capped_hits[0], "weak 25", "{text}: {capped_hits:?}");
        for t in &capped_hits {
            let n: usize = t
                .strip_prefix("weak ")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{text}: {capped_hits:?}"));
            assert!((20..30).contains(&n), "{text}: {capped_hits:?}");
        }
        // Fewer matches than the cap: ranked over all of them, as without a cap.
        assert_eq!(
            titles(capped, "strong", 5),
            titles(exact, "strong", 5),
            "{text}"
        );
    }
}

/// The best match is never cut by the rank cap (issue 29 review F7): on `capped` (a store
/// ranking at most 10 matches), an old learning with the word in its title and body, then 30
/// newer ones with it once in a long body: the old one comes first, for each query of
/// `texts` (SQLite: the word and a part of it, the trigram pass).
pub fn a_title_match_beyond_the_cap<S: MemoryStore>(capped: &S, texts: &[&str]) {
    let best = capped
        .add_learning(&learning("Kestrel", "kestrel", "tip", Some("p1"), 1))
        .unwrap();
    for i in 0..30 {
        capped
            .add_learning(&learning(
                &format!("note {i}"),
                "a long text about builds, tests, reviews, releases, deployments and the \
                 kestrel that was seen near the office one morning in spring",
                "tip",
                Some("p1"),
                i + 2,
            ))
            .unwrap();
    }
    for &text in texts {
        let hits = capped
            .search(&SearchQuery {
                text: text.into(),
                visible_in: Some("p1".into()),
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(hits.len(), 5, "{text}: {ids:?}");
        assert_eq!(ids[0], format!("L{}", best.id), "{text}: {ids:?}");
    }
}
