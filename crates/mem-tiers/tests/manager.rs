//! `MemoryManager` over real files in temp dirs: tiers within budget, the index over entries and
//! notes kept in step with their files, forget from the true home, secrets, archive round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use mem_core::TokenCounter;
use mem_sources::FromProject;
use mem_tiers::*;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

/// A second home and project (a folder without git) to import into.
fn other_env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let e = Env {
        home: dir.path().join("h"),
        project: dir.path().join("p"),
        _tmp: dir,
    };
    std::fs::create_dir_all(&e.project).unwrap();
    e
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("my-project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    Env {
        _tmp: tmp,
        home,
        project,
    }
}

fn manager(e: &Env) -> MemoryManager {
    MemoryManager::from_project(&e.project, MemoryConfig::for_home(&e.home)).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn ids(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn tier0_has_the_seed_shape_and_fits() {
    let e = env();
    write(
        &e.project.join("pyproject.toml"),
        "[project]\ndependencies = [\"fastapi\"]\n",
    );
    let m = manager(&e);
    m.set_preference("model", Some("deepseek")).unwrap();
    m.set_preference("workflow", Some("tdd")).unwrap();
    m.set_preference("theme", Some("dark")).unwrap();
    for (t, c) in [
        ("使用 pytest-cov 检查覆盖率", "测试覆盖率应 > 80%"),
        ("FastAPI 依赖注入", "使用 Depends() 进行依赖注入"),
        ("SQL 注入防护", "永远使用参数化查询"),
        ("oldest", "not in tier 0"),
    ]
    .iter()
    .rev()
    {
        m.add_learning(t, c, "best-practice", &[], None, false)
            .unwrap();
    }
    let t0 = m.get_tier0_summary().unwrap();
    assert_eq!(
        t0.text,
        "## 最近项目\n- my-project: Python/FastAPI\n## 用户偏好\n- 模型: deepseek\n- 工作流: tdd\n\
         ## 最近经验\n- 使用 pytest-cov 检查覆盖率: 测试覆盖率应 > 80%\n- FastAPI 依赖注入: 使用 \
         Depends() 进行依赖注入\n- SQL 注入防护: 永远使用参数化查询\n"
    );
    assert_eq!(t0.tokens, TokenCounter::default().count(&t0.text));
    assert!(t0.tokens < 500);
    let t1 = m.get_tier1_summary(2000).unwrap();
    assert!(
        t1.text.contains(
            "## 项目详情\n### my-project\n- 语言: Python\n- 框架: FastAPI\n- 测试命令: pytest\n"
        ),
        "{}",
        t1.text
    );
    assert!(
        t1.text.contains("## 常用命令\n- 测试命令: `pytest`\n"),
        "{}",
        t1.text
    );
    assert!(t1.text.contains("- oldest: not in tier 0"));
    assert!(t1.tokens < 2000);
}

#[test]
fn projects_do_not_leak_into_each_other() {
    let e = env();
    let other = e._tmp.path().join("web-app");
    std::fs::create_dir_all(&other).unwrap();
    write(
        &other.join("package.json"),
        r#"{"dependencies": {"next": "15"}}"#,
    );
    let a = manager(&e);
    let b = MemoryManager::from_project(&other, MemoryConfig::for_home(&e.home)).unwrap();
    a.add_learning(
        "alpha secret sauce",
        "only alpha",
        "general",
        &[],
        None,
        false,
    )
    .unwrap();
    b.add_learning("beta thing", "only beta", "general", &[], None, false)
        .unwrap();
    a.add_learning("shared tip", "for all", "general", &[], None, true)
        .unwrap();
    let t0 = b.get_tier0_summary().unwrap().text;
    assert!(!t0.contains("alpha"), "{t0}");
    assert!(
        t0.contains("shared tip") && t0.contains("beta thing"),
        "{t0}"
    );
    assert!(t0.contains("- web-app: JavaScript/React/Next.js"), "{t0}");
    assert!(b.recall("alpha", 10).unwrap().is_empty());
    assert_eq!(a.recall("alpha", 10).unwrap().len(), 1);
}

/// A tiny deterministic generator (xorshift), so the property test needs no dependency and
/// every failure is reproducible from its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn text(&mut self, max: usize) -> String {
        const POOL: &[&str] = &[
            "a",
            "Z",
            " ",
            "\n",
            "é",
            "注",
            "入",
            "🦀",
            "\u{1b}",
            "_",
            "/",
            "::",
            "-",
            "\"",
            "0",
            "のは",
            "\t",
            "😀👍🏽",
            "ق",
        ];
        let n = (self.next() as usize) % (max + 1);
        (0..n)
            .map(|_| POOL[(self.next() as usize) % POOL.len()])
            .collect()
    }
}

#[test]
fn budgets_are_never_exceeded_on_random_content() {
    let e = env();
    let m = manager(&e);
    let counter = TokenCounter::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..60 {
        let t = rng.text(40);
        let c = rng.text(if round % 10 == 0 { 5000 } else { 300 });
        if !t.trim().is_empty() {
            m.add_learning(&t, &c, "general", &[], None, false).unwrap();
        }
        if round % 7 == 0 {
            m.set_preference("model", Some(&format!("m{}", rng.text(200))))
                .unwrap();
        }
        let budget = 1 + (rng.next() as usize) % 400;
        for tier in [
            m.get_tier0_summary().unwrap(),
            m.get_tier1_summary(budget).unwrap(),
        ] {
            assert_eq!(tier.tokens, counter.count(&tier.text));
            assert!(
                tier.text.is_empty() || tier.tokens < tier.max_tokens,
                "round {round}: {} >= {}",
                tier.tokens,
                tier.max_tokens
            );
            // Whole items only: every bullet line is one the renderer made.
            for line in tier.text.lines() {
                assert!(
                    line.starts_with("## ") || line.starts_with("### ") || line.starts_with("- "),
                    "round {round}: {line:?}"
                );
            }
        }
    }
}

#[test]
fn search_finds_a_learning_an_entry_and_a_note_and_forget_removes_each_from_its_home() {
    let e = env();
    let m = manager(&e);
    let l = m
        .add_learning(
            "FastAPI deps",
            "Use Depends() for FastAPI injection",
            "best-practice",
            &[],
            None,
            false,
        )
        .unwrap();
    let memories = e.project.join(".mewcode/memories.md");
    write(
        &memories,
        "# Memories\n\n### 项目知识\n- The API is built on FastAPI with uvicorn\n- Tests live in tests/api\n",
    );
    let note = e.project.join(".mewcode/memory/fastapi_notes.md");
    write(
        &note,
        "---\nname: FastAPI notes\ndescription: how routers are split\ntype: project\n---\nRouters live in app/routers, one per FastAPI resource.\n",
    );
    let hits = m.recall("FastAPI", 10).unwrap();
    let found = ids(&hits);
    let entry_id = id::entry_id("The API is built on FastAPI with uvicorn").to_string();
    assert!(
        found.contains(&format!("L{}", l.learning.id).as_str()),
        "{found:?}"
    );
    assert!(found.contains(&entry_id.as_str()), "{found:?}");
    assert!(found.contains(&"N:project/fastapi_notes.md"), "{found:?}");

    let f = m.forget(&entry_id.parse().unwrap()).unwrap();
    assert_eq!(f.source, SourceKind::Entry);
    assert_eq!(
        std::fs::read_to_string(&memories).unwrap(),
        "# Memories\n\n### 项目知识\n- Tests live in tests/api\n"
    );
    let f = m
        .forget(&"N:project/fastapi_notes.md".parse().unwrap())
        .unwrap();
    assert_eq!(f.location, note.display().to_string());
    assert!(!note.exists());
    m.forget(&MemoryId::Learning(l.learning.id)).unwrap();
    assert!(m.recall("FastAPI", 10).unwrap().is_empty());
    let e2 = m.forget(&MemoryId::Learning(l.learning.id)).unwrap_err();
    assert!(matches!(e2, Error::NotFound(_)), "{e2}");
}

#[test]
fn the_index_follows_hand_edits_and_deletions() {
    let e = env();
    let m = manager(&e);
    let note = e.home.join(".mewcode/memory/user_editor.md");
    write(
        &note,
        "---\nname: editor\ndescription: editor choice\ntype: user\n---\nThe user edits with helix.\n",
    );
    assert_eq!(
        ids(&m.recall("helix", 5).unwrap()),
        ["N:user/user_editor.md"]
    );
    let r = m.sync_index().unwrap();
    assert_eq!(
        (r.read, r.reindexed),
        (0, 0),
        "unchanged files are not read again"
    );
    // A hand edit of the same size, with a new mtime.
    write(
        &note,
        "---\nname: editor\ndescription: editor choice\ntype: user\n---\nThe user edits with kakou.\n",
    );
    let f = std::fs::File::options().write(true).open(&note).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    assert!(m.recall("helix", 5).unwrap().is_empty());
    assert_eq!(
        ids(&m.recall("kakou", 5).unwrap()),
        ["N:user/user_editor.md"]
    );
    // Touched without a change: read, hash equal, not re-indexed.
    let f = std::fs::File::options().write(true).open(&note).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(9))
        .unwrap();
    drop(f);
    let r = m.sync_index().unwrap();
    assert_eq!((r.read, r.reindexed), (1, 0));
    std::fs::remove_file(&note).unwrap();
    assert!(m.recall("kakou", 5).unwrap().is_empty());
    assert_eq!(m.store().stats().unwrap().files, 0);
    // Rebuild from scratch.
    write(&note, "---\nname: editor\n---\nback again\n");
    let r = m.reindex().unwrap();
    assert_eq!(r.reindexed, 1);
    assert_eq!(
        ids(&m.recall("back again", 5).unwrap()),
        ["N:user/user_editor.md"]
    );
}

#[test]
fn every_write_goes_through_the_secret_filter() {
    let e = env();
    let m = manager(&e);
    let key = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let a = m
        .add_learning(
            &format!("token {key}"),
            &format!("use {key} for CI"),
            "error",
            &[],
            Some(&format!("ctx {key}")),
            false,
        )
        .unwrap();
    assert_eq!(a.withheld, 3);
    assert!(!a.learning.content.contains(key));
    assert!(a.learning.content.contains(mem_core::secrets::REDACTED));
    assert_eq!(
        m.set_preference("model", Some(&format!("x {key}")))
            .unwrap(),
        1
    );
    assert!(!m.preferences().unwrap()["model"].contains(key));
    let mut archive = m.get_tier2_archive().unwrap();
    archive.learnings[0].content = format!("imported {key}");
    let e2 = other_env();
    let m2 = manager(&e2);
    let r = m2.import(&archive, false).unwrap();
    assert!(r.withheld >= 1);
    let dump = serde_json::to_string(&m2.get_tier2_archive().unwrap()).unwrap();
    assert!(!dump.contains(key));
}

#[test]
fn bad_input_is_refused_clearly() {
    let e = env();
    let m = manager(&e);
    let err = |r: Result<Added>| r.unwrap_err().to_string();
    assert!(
        err(m.add_learning("  ", "x", "general", &[], None, false)).contains("title: it is empty")
    );
    // A title of escape codes alone is empty once they are stripped: refused, not stored
    // empty (an archive holding an empty title does not import).
    for t in ["\u{1b}[31m", "\u{1b}[0m \u{7}\r"] {
        assert!(
            err(m.add_learning(t, "x", "general", &[], None, false))
                .contains("title: it holds only control characters"),
            "{t:?}"
        );
    }
    // The lesson likewise: empty, or empty once escape codes are stripped.
    assert!(
        err(m.add_learning("t", " \n", "general", &[], None, false))
            .contains("content: it is empty")
    );
    assert!(
        err(m.add_learning("t", "\u{1b}[2J\u{7}", "general", &[], None, false))
            .contains("content: it holds only control characters")
    );
    assert!(m.get_tier2_archive().unwrap().learnings.is_empty());
    m.add_learning("kept", "x", "general", &[], None, false)
        .unwrap();
    let mut a = m.get_tier2_archive().unwrap();
    a.learnings[0].title = "\u{1b}[31m".into();
    assert!(
        manager(&other_env())
            .import(&a, false)
            .unwrap_err()
            .to_string()
            .contains("the title is empty")
    );
    assert!(
        err(m.add_learning(&"t".repeat(1001), "x", "general", &[], None, false))
            .contains("1001 characters")
    );
    assert!(
        err(m.add_learning(
            "t",
            &"x".repeat(MAX_CONTENT_BYTES + 1),
            "general",
            &[],
            None,
            false
        ))
        .contains("bytes; at most")
    );
    assert!(err(m.add_learning("t", "x", "two words", &[], None, false)).contains("category"));
    // 1 MB of content is stored and rendered within budget.
    let big = "长".repeat(333_333);
    let a = m
        .add_learning("big one", &big, "general", &[], None, false)
        .unwrap();
    assert_eq!(a.learning.content.len(), big.len());
    let t0 = m.get_tier0_summary().unwrap();
    assert!(t0.tokens < 500);
    // Control characters and escape sequences are stripped before storing (issue 27 item 14).
    let a = m
        .add_learning(
            "esc \u{1b}[31mred",
            "bell \u{7}",
            "general",
            &[],
            None,
            false,
        )
        .unwrap();
    assert_eq!(
        m.show(&MemoryId::Learning(a.learning.id))
            .unwrap()
            .learning
            .unwrap()
            .title,
        "esc red"
    );
    assert_eq!(a.learning.content, "bell ");
    // A broken preset names file and line.
    write(
        &e.project.join(".omc/project.yaml"),
        "framework: FastAPI\ncustom_commands: [oops\n",
    );
    let msg = MemoryManager::from_project(&e.project, MemoryConfig::for_home(&e.home))
        .unwrap_err()
        .to_string();
    assert!(msg.contains(".omc/project.yaml:"), "{msg}");
}

#[test]
fn archive_round_trips_and_import_twice_adds_nothing() {
    let e = env();
    let m = manager(&e);
    m.set_preference("editor", Some("helix")).unwrap();
    m.add_learning(
        "one",
        "first",
        "error",
        &["db".into()],
        Some("prod incident"),
        false,
    )
    .unwrap();
    m.add_learning("two", "second", "tip", &[], None, true)
        .unwrap();
    let a = m.get_tier2_archive().unwrap();
    let json = serde_json::to_string_pretty(&a).unwrap();
    let parsed = archive::parse(&json, Path::new("x.json")).unwrap();
    assert_eq!(parsed, a);
    let e2 = other_env();
    let m2 = manager(&e2);
    let r = m2.import(&parsed, false).unwrap();
    assert_eq!(
        (r.learnings_added, r.learnings_skipped, r.preferences),
        (2, 0, 1)
    );
    let r = m2.import(&parsed, false).unwrap();
    assert_eq!((r.learnings_added, r.learnings_skipped), (0, 2));
    let b = m2.get_tier2_archive().unwrap();
    let strip = |a: &archive::Archive| {
        a.learnings
            .iter()
            .map(|l| {
                (
                    l.title.clone(),
                    l.content.clone(),
                    l.category.clone(),
                    l.tags.clone(),
                    l.context.clone(),
                    l.project_key.clone(),
                    l.created_ms,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&a), strip(&b));
    let md = archive::to_markdown(&b, &tiers::Headings::zh());
    assert!(md.contains("## 学习记录\n### L"), "{md}");
    let e3 = archive::parse(
        "{\"format\": \"other\", \"version\": 1}",
        Path::new("x.json"),
    )
    .unwrap_err();
    assert!(e3.to_string().contains("x.json"), "{e3}");
    let e4 = archive::parse("{\n  \"format\": ", Path::new("x.json")).unwrap_err();
    assert!(e4.to_string().starts_with("x.json:2:"), "{e4}");
}

#[test]
fn an_archive_that_parses_imports_whole_and_errors_name_the_line() {
    let learning = |title: &str, extra: &str| {
        let title = serde_json::to_string(title).unwrap();
        format!(
            "    {{\n      \"id\": 7,\n      \"title\": {title},\n      \"content\": \"c\",\n      \"category\": \"general\",\n      \"tags\": [],\n      \"project_key\": null,\n      \"created_ms\": 1,\n      \"last_used_ms\": 1{extra}\n    }}"
        )
    };
    let archive = |learnings: &[String], top: &str| {
        format!(
            "{{\n  \"format\": \"mewmem-memory-archive\",\n  \"version\": 2,{top}\n  \"learnings\": [\n{}\n  ]\n}}\n",
            learnings.join(",\n")
        )
    };
    let path = Path::new("a.json");
    let good = archive(&[learning("One", ""), learning("Two", "")], "");
    assert_eq!(archive::parse(&good, path).unwrap().learnings.len(), 2);
    // A misspelt field of the second learning (line 24): refused, with its path and line, not
    // dropped with its value.
    let typo = archive(
        &[
            learning("One", ""),
            learning("Two", ",\n      \"contxt\": \"x\""),
        ],
        "",
    );
    let e = archive::parse(&typo, path).unwrap_err().to_string();
    assert!(
        e.starts_with("a.json:24: unknown field `learnings.1.contxt`"),
        "{e}"
    );
    // At the top level too.
    let e = archive::parse(&archive(&[], "\n  \"learning\": [],"), path)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("a.json:4: unknown field `learning`"), "{e}");
    // A learning import would refuse (a title of escape codes only), at the line it starts.
    let e = archive::parse(
        &archive(&[learning("One", ""), learning("\u{1b}[0m", "")], ""),
        path,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("a.json:15: learnings[1] (L7): the title is empty"),
        "{e}"
    );
    // A wrong format or version at its own line.
    let e = archive::parse(&good.replace("mewmem-memory-archive", "other"), path)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("a.json:2: format is \"other\""), "{e}");
    let e = archive::parse(&good.replace("\"version\": 2", "\"version\": 9"), path)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("a.json:3: version 9"), "{e}");
}

#[test]
fn short_term_is_a_view_over_the_latest_session() {
    let e = env();
    let m = manager(&e);
    assert_eq!(m.short_term().unwrap().session_id, None);
    let store = mem_session::SessionStore::for_project(&e.project);
    let mut w = store.create().unwrap();
    for i in 0..130 {
        w.append(&mem_core::Message::user(format!("message {i}")))
            .unwrap();
    }
    let id = w.id().to_owned();
    drop(w);
    let st = m.short_term().unwrap();
    assert_eq!(st.session_id.as_deref(), Some(id.as_str()));
    assert!(!st.expired);
    assert_eq!(st.messages.len(), 100);
    assert_eq!(st.messages[0].text_content(), "message 30");
    assert_eq!(st.messages[99].text_content(), "message 129");
    // Nothing was copied into the tier store.
    let dump = serde_json::to_string(&m.get_tier2_archive().unwrap()).unwrap();
    assert!(!dump.contains("message 129"));
    let mut cfg = MemoryConfig::for_home(&e.home);
    cfg.short_term_max_age_hours = 0;
    std::thread::sleep(std::time::Duration::from_millis(20));
    let old = MemoryManager::from_project(&e.project, cfg).unwrap();
    let st = old.short_term().unwrap();
    assert!(st.expired);
    assert!(st.messages.is_empty());
}

#[test]
fn archive_holds_entries_and_notes_and_import_writes_them_back_to_their_files() {
    let e = env();
    write(
        &e.project.join(".mewcode/memories.md"),
        "### 项目知识\n- The API is built on FastAPI\n",
    );
    write(
        &e.home.join(".mewcode/memories.md"),
        "### 用户偏好\n- Prefers tabs over spaces\n",
    );
    let note = "---\nname: deploy\ndescription: how we deploy\ntype: project\n---\nUse the blue/green script.\n";
    write(&e.project.join(".mewcode/memory/deploy.md"), note);
    let m = manager(&e);
    m.add_learning("one", "first", "error", &[], None, false)
        .unwrap();
    let a = m.get_tier2_archive().unwrap();
    assert_eq!(a.version, archive::ARCHIVE_VERSION);
    let texts: Vec<(&str, &str)> = a
        .entries
        .iter()
        .map(|x| (x.scope.as_str(), x.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("project", "The API is built on FastAPI"),
            ("user", "Prefers tabs over spaces")
        ]
    );
    assert_eq!(a.notes.len(), 1);
    assert_eq!(a.notes[0].id, "N:project/deploy.md");
    assert_eq!(a.notes[0].text, note);
    let md = archive::to_markdown(&a, &tiers::Headings::zh());
    assert!(md.contains("## memories.md\n- M"), "{md}");
    assert!(
        md.contains("### N:project/deploy.md\n\n---\nname: deploy"),
        "{md}"
    );

    // A fresh home and project: everything comes back, in its files, and is searchable.
    let json = serde_json::to_string(&a).unwrap();
    let parsed = archive::parse(&json, Path::new("a.json")).unwrap();
    let e2 = env();
    let m2 = manager(&e2);
    let r = m2.import(&parsed, false).unwrap();
    assert_eq!(
        (r.learnings_added, r.entries_added, r.notes_added),
        (1, 2, 1)
    );
    assert!(r.skipped.is_empty() && r.notes_kept_existing.is_empty());
    let project_md = std::fs::read_to_string(e2.project.join(".mewcode/memories.md")).unwrap();
    assert!(
        project_md.contains("- The API is built on FastAPI"),
        "{project_md}"
    );
    let user_md = std::fs::read_to_string(e2.home.join(".mewcode/memories.md")).unwrap();
    assert!(user_md.contains("- Prefers tabs over spaces"), "{user_md}");
    assert_eq!(
        std::fs::read_to_string(e2.project.join(".mewcode/memory/deploy.md")).unwrap(),
        note
    );
    let hits = m2.recall("blue/green", 10).unwrap();
    assert_eq!(ids(&hits), ["N:project/deploy.md"]);

    // Twice: nothing is added again; a note file that differs is kept, never overwritten.
    write(
        &e2.project.join(".mewcode/memory/deploy.md"),
        "edited by hand\n",
    );
    let r = m2.import(&parsed, false).unwrap();
    assert_eq!(
        (
            r.learnings_added,
            r.entries_added,
            r.entries_present,
            r.notes_added
        ),
        (0, 0, 2, 0)
    );
    assert_eq!(r.notes_kept_existing, ["N:project/deploy.md"]);
    assert_eq!(
        std::fs::read_to_string(e2.project.join(".mewcode/memory/deploy.md")).unwrap(),
        "edited by hand\n"
    );

    // A note of a scope with no dir here is reported, not written; a bad file name or an
    // unknown category refuses the whole archive before anything is written.
    let mut extra = parsed.clone();
    extra.notes[0].scope = "extra3".into();
    extra.notes[0].id = "N:extra3/deploy.md".into();
    let r = m2.import(&extra, false).unwrap();
    assert_eq!(r.skipped, ["N:extra3/deploy.md"]);
    let mut bad = parsed.clone();
    bad.notes[0].file = "../escape.md".into();
    bad.learnings[0].title = "must not be written".into();
    let err = m2.import(&bad, false).unwrap_err().to_string();
    assert!(err.contains("../escape.md"), "{err}");
    let mut bad = parsed.clone();
    bad.entries[0].category = "Nonsense".into();
    bad.learnings[0].title = "must not be written".into();
    assert!(m2.import(&bad, false).is_err());
    assert!(
        !m2.get_tier2_archive()
            .unwrap()
            .learnings
            .iter()
            .any(|l| l.title == "must not be written")
    );
    // A version-1 archive (no entries or notes) still reads.
    let v1 = archive::parse(
        "{\"format\": \"mewmem-memory-archive\", \"version\": 1, \"learnings\": []}",
        Path::new("v1.json"),
    )
    .unwrap();
    assert!(v1.entries.is_empty() && v1.notes.is_empty());
}

/// Issue 27 item 19, SQLite half: `show` and `forget` see what search sees — user-wide and
/// this project's learnings — and never another project's (SQLite has no team scope).
#[test]
fn show_and_forget_see_what_search_sees_on_sqlite() {
    let e = env();
    let other = e._tmp.path().join("proj-bob");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let a = manager(&e);
    let b = MemoryManager::from_project(&other, MemoryConfig::for_home(&e.home)).unwrap();
    let private = a
        .add_learning_in(
            "alpha private",
            "x",
            "general",
            &[],
            None,
            LearningScope::Project,
        )
        .unwrap()
        .learning;
    let user = a
        .add_learning_in(
            "alpha user wide",
            "y",
            "general",
            &[],
            None,
            LearningScope::User,
        )
        .unwrap()
        .learning;
    let team = a.add_learning_in("t", "z", "general", &[], None, LearningScope::Team);
    assert!(matches!(team, Err(Error::Invalid { .. })), "{team:?}");
    let p = MemoryId::Learning(private.id);
    let u = MemoryId::Learning(user.id);
    let listed: Vec<String> = b
        .recall("alpha", 10)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(listed, [u.to_string()]);
    assert!(matches!(b.show(&p), Err(Error::NotFound(_))));
    assert!(matches!(b.forget(&p), Err(Error::NotFound(_))));
    assert!(a.show(&p).is_ok(), "still there for its project");
    assert_eq!(b.show(&u).unwrap().document.title, "alpha user wide");
    b.forget(&u).unwrap();
    assert!(matches!(a.show(&u), Err(Error::NotFound(_))));
}

/// Issue 27 item 2: case-sensitive secrets (an AWS key id, a capitals env assignment) in tags,
/// categories and preference keys: the filter runs before the text is lower-cased.
#[test]
fn tags_categories_and_preference_keys_are_filtered_before_lower_casing() {
    let e = env();
    let m = manager(&e);
    let aws = "AKIAQ7ZK3VX9M2WB5NRT";
    let a = m
        .add_learning(
            "cache the build",
            "use sccache",
            &format!("cat-{aws}"),
            &[format!("aws-{aws}"), format!("DB_PASSWORD={aws}")],
            None,
            false,
        )
        .unwrap();
    assert_eq!(a.withheld, 3, "{:?}", a.learning);
    let dump = serde_json::to_string(&a.learning).unwrap().to_lowercase();
    assert!(!dump.contains(&aws.to_lowercase()), "{dump}");
    assert!(
        a.learning
            .tags
            .iter()
            .all(|t| t.contains(mem_core::secrets::REDACTED)),
        "{:?}",
        a.learning.tags
    );
    assert_eq!(
        m.set_preference(&format!("key-{aws}"), Some("helix"))
            .unwrap(),
        1
    );
    let prefs = serde_json::to_string(&m.preferences().unwrap())
        .unwrap()
        .to_lowercase();
    assert!(!prefs.contains(&aws.to_lowercase()), "{prefs}");
}

/// Issue 27 item 2: `memory import` of an archive filters every string it stores: preference
/// keys and values, each project's name, language, framework, test command, custom command
/// names and commands, notes, and the learnings' fields (tags and category before lower-casing).
#[test]
fn archive_import_filters_every_string_field() {
    let e = env();
    let m = manager(&e);
    m.add_learning("seed", "seed", "tip", &[], None, false)
        .unwrap();
    let mut archive = m.get_tier2_archive().unwrap();
    let secrets = [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "sk_live_51Hx9QmLk2Vb8Nc4Xz7Ad3Fg6Jh0Ty5Ru1Ei9Ow2Pq8Sa4Df",
        "AKIAQ7ZK3VX9M2WB5NRT",
        "glpat-Xy7Zq3Wv9Ut5Sr1Qp8On",
        "xoxb-2048217739-1234567890123-Xy7Zq3Wv9Ut5Sr1Qp8On4Ml6",
        "AIzaSyD4x9Lm2Qp7Rs8Tv1Wx3Yz6Ab0Cd5Ef8Gh",
        "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5",
        "hf_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3",
        "sk-ant-api03-Hq7Lm2Zx9Cv4Bn8Mw1Qe5Rt3Yu6Io0Pa2Sd7Fg4Hj9Kl1-AbCdEfGh",
        "xoxp-9988776655-1122334455-Zq3Wv9Ut5Sr1Qp8On4Ml6K",
        "AKIAZ3WQ8RT5YU2IO9PL",
    ];
    let [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10] = secrets;
    archive
        .user_preferences
        .insert(format!("key-{s2}"), format!("value {s0}"));
    let mut p = archive.projects[0].clone();
    p.key = "path:/elsewhere/imported".into();
    p.path = "/elsewhere/imported".into();
    p.name = format!("app {s1}");
    p.language = Some(format!("Rust {s3}"));
    p.framework = Some(format!("axum {s4}"));
    p.test_command = Some(format!("GITHUB_TOKEN={s5} cargo test"));
    p.custom_commands.insert(
        format!("deploy-{s10}"),
        format!("curl -H 'Authorization: Bearer {s6}' x"),
    );
    p.notes = vec![format!("the CI uses {s7}")];
    archive.projects.push(p);
    archive.learnings[0].tags = vec![format!("t-{s2}")];
    archive.learnings[0].category = format!("c-{s10}");
    archive.learnings[0].title = format!("t {s8}");
    archive.learnings[0].content = format!("c {s9}");
    let e2 = other_env();
    let m2 = manager(&e2);
    let r = m2.import(&archive, false).unwrap();
    let dump = serde_json::to_string(&m2.get_tier2_archive().unwrap())
        .unwrap()
        .to_lowercase();
    for s in secrets {
        assert!(!dump.contains(&s.to_lowercase()), "{s} stored:\n{dump}");
    }
    assert!(r.withheld > secrets.len(), "{r:?}");
}

/// Sets a column of every row of `table` in the manager's database (to age timestamps).
fn age_rows(e: &Env, table: &str, column: &str, value: i64) {
    let db = MemoryConfig::for_home(&e.home).database_path();
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(&format!("UPDATE {table} SET {column} = ?1"), [value])
        .unwrap();
}

fn db_state(e: &Env) -> (u64, std::time::SystemTime) {
    let meta = std::fs::metadata(MemoryConfig::for_home(&e.home).database_path()).unwrap();
    (meta.len(), meta.modified().unwrap())
}

#[test]
fn opening_and_searching_write_only_what_changed() {
    // Issue 27 item 18: the project was registered again (a write, fsyncs) at every open and
    // the learnings found got a new `last_used` at every search.
    let e = env();
    let m = manager(&e);
    let l = m
        .add_learning(
            "Quokka cache",
            "The quokka cache is per thread",
            "pattern",
            &[],
            None,
            false,
        )
        .unwrap();
    let key = m.project().unwrap().key.clone();
    assert_eq!(m.recall("quokka", 5).unwrap().len(), 1);
    drop(m);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = db_state(&e);
    // Open again, search (hit and no hit): nothing changed, nothing written.
    let m = manager(&e);
    assert_eq!(m.recall("quokka", 5).unwrap().len(), 1);
    assert!(m.recall("zebra", 5).unwrap().is_empty());
    let used = m.store().project(&key).unwrap().unwrap().last_used_ms;
    drop(m);
    assert_eq!(db_state(&e), before, "a read wrote to the database");

    // A last use over the step old is recorded again, for the project and the learning found.
    age_rows(&e, "projects", "last_used_ms", 1_000);
    age_rows(&e, "learnings", "last_used_ms", 1_000);
    let m = manager(&e);
    assert!(m.store().project(&key).unwrap().unwrap().last_used_ms >= used);
    assert_eq!(m.recall("quokka", 5).unwrap().len(), 1);
    let touched = m.store().learning(l.learning.id).unwrap().unwrap();
    assert!(touched.last_used_ms > LAST_USED_STEP_MS, "{touched:?}");

    // A changed description (a preset) is registered at the next open.
    write(
        &e.project.join(".omc/project.yaml"),
        "name: quokka-app\nlanguage: Rust\n",
    );
    let m = manager(&e);
    let p = m.store().project(&key).unwrap().unwrap();
    assert_eq!(p.name, "quokka-app");
    assert_eq!(p.language.as_deref(), Some("Rust"));
}

/// `clean` merges each full-text index into one segment (a dry run merges nothing), as does
/// `reindex`.
#[test]
fn clean_and_reindex_merge_the_search_index() {
    let e = env();
    let m = manager(&e);
    for i in 0..60 {
        m.add_learning(
            &format!("heron {i}"),
            "seen at the marsh",
            "tip",
            &[],
            None,
            false,
        )
        .unwrap();
    }
    let segments = || -> i64 {
        m.store()
            .connection()
            .query_row(
                "SELECT count(DISTINCT segid) FROM docs_trigram_idx",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let before = segments();
    assert!(before > 1, "{before}");
    assert!(!m.clean(true).unwrap().search_index_merged);
    assert_eq!(segments(), before);
    assert!(m.clean(false).unwrap().search_index_merged);
    assert_eq!(segments(), 1);
    assert_eq!(m.recall("marsh", 100).unwrap().len(), 60);
    m.add_learning("kestrel", "over the dunes", "tip", &[], None, false)
        .unwrap();
    assert!(segments() > 1);
    m.reindex().unwrap();
    assert_eq!(segments(), 1);
}

/// `batches` transactions of `per` learnings each, written straight into the store (each
/// transaction leaves one segment per full-text index).
fn add_in_batches(m: &MemoryManager<SqliteStore>, batches: usize, per: usize) {
    let c = m.store().connection();
    for b in 0..batches {
        c.execute_batch("BEGIN").unwrap();
        for i in 0..per {
            let n = b * per + i;
            c.execute(
                "INSERT INTO learnings (title, content, category, tags, project_key, created_ms, \
                 last_used_ms) VALUES (?1, ?2, 'tip', '[]', NULL, ?3, ?3)",
                rusqlite::params![
                    format!("heron {n} at the marsh"),
                    format!("seen k{n}x near q{}z, v{n}", n * 31),
                    n as i64
                ],
            )
            .unwrap();
        }
        c.execute_batch("COMMIT").unwrap();
    }
}

/// The writes keep the search index in few segments by themselves: an `add_learning` merges it
/// when the segments beside the largest make up a share of it, and an import of at least
/// `BULK_IMPORT_DOCUMENTS` ends with one segment per index.
#[test]
fn writes_keep_the_search_index_merged() {
    let e = env();
    let m = manager(&e);
    add_in_batches(&m, 3, 2500);
    assert!(m.store().index_segments("docs_trigram", 32).unwrap() >= 2);
    assert!(m.store().index_segments("docs_word", 1).unwrap() >= 2);
    m.add_learning("kestrel", "over the dunes", "tip", &[], None, false)
        .unwrap();
    // The add found both indexes fragmented and merged them.
    assert_eq!(m.store().index_segments("docs_word", 1).unwrap(), 1);
    assert_eq!(m.store().index_segments("docs_trigram", 1).unwrap(), 1);
    assert_eq!(m.recall("marsh", 10_000).unwrap().len(), 7500);
    assert_eq!(m.recall("dunes", 100).unwrap().len(), 1);

    let archive = m.get_tier2_archive().unwrap();
    assert!(archive.learnings.len() >= mem_tiers::BULK_IMPORT_DOCUMENTS);
    let e2 = other_env();
    let m2 = manager(&e2);
    let r = m2.import(&archive, false).unwrap();
    assert_eq!(r.learnings_added, 7501);
    assert_eq!(m2.store().index_segments("docs_word", 1).unwrap(), 1);
    assert_eq!(m2.store().index_segments("docs_trigram", 1).unwrap(), 1);
    assert_eq!(m2.recall("marsh", 10_000).unwrap().len(), 7500);
}

/// A project's `learning_max_age_days` expires the project's learnings only: the user-level
/// ones (seen in every project) follow the user's own setting, so a cloned repository's
/// configuration cannot delete them.
#[test]
fn a_project_expiry_never_deletes_user_level_learnings() {
    let e = env();
    let mut config = MemoryConfig::for_home(&e.home);
    config.learning_max_age_days = Some(30);
    let m = MemoryManager::from_project(&e.project, config.clone()).unwrap();
    m.add_learning("project one", "x", "tip", &[], None, false)
        .unwrap();
    m.add_learning("global one", "x", "tip", &[], None, true)
        .unwrap();
    m.add_learning("recent one", "x", "tip", &[], None, false)
        .unwrap();
    m.store()
        .connection()
        .execute(
            "UPDATE learnings SET last_used_ms = 0 WHERE title != 'recent one'",
            [],
        )
        .unwrap();
    let titles = |r: &CleanReport| -> Vec<String> {
        r.expired_learnings
            .iter()
            .map(|l| l.title.clone())
            .collect()
    };
    assert_eq!(titles(&m.clean(true).unwrap()), ["project one"]);
    assert_eq!(titles(&m.clean(false).unwrap()), ["project one"]);
    assert!(m.clean(false).unwrap().expired_learnings.is_empty());
    config.user_learning_max_age_days = Some(30);
    let m = MemoryManager::from_project(&e.project, config).unwrap();
    assert_eq!(titles(&m.clean(false).unwrap()), ["global one"]);
    assert_eq!(m.recall("one", 10).unwrap().len(), 1);
}

/// This project archived at another path or on another machine (the same repository name, a
/// key the store here never saw): named by the import, and only when the user says so
/// (`into_here`) do its learnings come into this project; a user-wide learning stays
/// user-wide; importing twice adds nothing. Two archived projects of that name, or one this
/// store knows, move nothing.
#[test]
fn an_archive_of_this_project_moved_imports_into_it_when_asked() {
    let old = env();
    let m = manager(&old);
    m.add_learning(
        "pool size",
        "the pool holds 20 connections",
        "tip",
        &[],
        None,
        false,
    )
    .unwrap();
    m.add_learning("editor", "helix everywhere", "tip", &[], None, true)
        .unwrap();
    let a = m.get_tier2_archive().unwrap();

    // Another machine: a new home, the same repository name at another path.
    let new = env();
    assert_ne!(old.project, new.project);
    let m2 = manager(&new);
    // Unasked, the learning keeps its project, and the import names the candidate.
    let probe = env();
    let r = manager(&probe).import(&a, false).unwrap();
    assert_eq!(
        (r.learnings_added, r.learnings_moved, r.learnings_elsewhere),
        (2, 0, 1),
        "{r:?}"
    );
    assert_eq!(r.same_name.len(), 1, "{r:?}");
    // As the import says: again, asked this time, and the learning comes into the project.
    let r = manager(&probe).import(&a, true).unwrap();
    assert_eq!((r.learnings_added, r.learnings_moved), (1, 1), "{r:?}");
    let r = m2.import(&a, true).unwrap();
    assert_eq!(
        (r.learnings_added, r.learnings_moved, r.learnings_elsewhere),
        (2, 1, 0),
        "{r:?}"
    );
    let hits = m2.recall("pool connections", 5).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].title, "pool size");
    let r = m2.import(&a, true).unwrap();
    assert_eq!((r.learnings_added, r.learnings_skipped), (0, 2), "{r:?}");

    // Two archived projects of this name: which one is this is not clear; nothing written.
    let mut two = a.clone();
    let mut twin = two.projects[0].clone();
    twin.key = format!("{}-twin", twin.key);
    twin.path = format!("{}-twin", twin.path);
    two.projects.push(twin);
    let fresh = env();
    let m4 = manager(&fresh);
    let e = m4.import(&two, true).unwrap_err().to_string();
    assert!(e.contains("2 archived projects"), "{e}");
    assert!(m4.get_tier2_archive().unwrap().learnings.is_empty());

    // The same store, another checkout of the same name: the old project is known here, so
    // nothing is taken as this project moved.
    let twin = tempfile::tempdir().unwrap();
    let twin_project = twin.path().join("my-project");
    std::fs::create_dir_all(twin_project.join(".git")).unwrap();
    let m3 = MemoryManager::from_project(&twin_project, MemoryConfig::for_home(&old.home)).unwrap();
    assert!(m3.import(&a, true).is_err());
    let r = m3.import(&a, false).unwrap();
    assert!(r.same_name.is_empty(), "{r:?}");
    assert_eq!(r.learnings_added, 0, "{r:?}");
}
