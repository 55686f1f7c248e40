use std::collections::BTreeSet;

use super::*;

fn item(id: &str, title: &str, text: &str, tags: &[&str], days: &[&str]) -> Item {
    Item {
        id: id.into(),
        source: SourceKind::Learning,
        scope: "project".into(),
        title: title.into(),
        text: text.into(),
        category: Some("tip".into()),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        context: None,
        sessions: days.iter().map(|d| d.to_string()).collect::<BTreeSet<_>>(),
    }
}

fn corpus() -> Vec<Item> {
    vec![
        item(
            "L1",
            "Run migrations first",
            "Run sqlx migrate run before cargo test, or the schema is stale.",
            &["db"],
            &["2026-01-02"],
        ),
        item(
            "L2",
            "Migration lock",
            "sqlx migrations hang while the dev server holds the database lock; stop it first.",
            &["db"],
            &["2026-01-09"],
        ),
        item(
            "L3",
            "Offline sqlx",
            "Set SQLX_OFFLINE=true so sqlx macros build without a database.",
            &["db"],
            &["2026-02-01"],
        ),
        item(
            "L4",
            "Changelog",
            "Every user-visible change gets a line in CHANGELOG.md under Unreleased.",
            &["release"],
            &["2026-01-03"],
        ),
        item(
            "L5",
            "Release tags",
            "Tag releases as vX.Y.Z and push the tag after the changelog is updated.",
            &["release"],
            &["2026-01-20"],
        ),
        item(
            "L6",
            "Release notes",
            "Release notes are copied from the changelog section of the version.",
            &["release"],
            &["2026-02-11"],
        ),
        item(
            "L7",
            "Font size",
            "The user likes a 14pt font in the editor.",
            &[],
            &["2026-01-05"],
        ),
    ]
}

#[test]
fn related_memories_group_and_unrelated_ones_do_not() {
    let items = corpus();
    let groups = suggest(&items, &SuggestOptions::default());
    let sets: Vec<BTreeSet<String>> = groups
        .iter()
        .map(|g| g.ids().into_iter().collect())
        .collect();
    let db: BTreeSet<String> = ["L1", "L2", "L3"].iter().map(|s| s.to_string()).collect();
    let release: BTreeSet<String> = ["L4", "L5", "L6"].iter().map(|s| s.to_string()).collect();
    assert!(sets.contains(&db), "{sets:?}");
    assert!(sets.contains(&release), "{sets:?}");
    assert_eq!(groups.len(), 2, "{sets:?}");
    for g in &groups {
        assert_eq!(g.sessions, 3);
        assert!(g.id.starts_with('G') && g.id.len() == 9);
        assert_eq!(g.name, safe_name(&g.name));
        assert!(g.cohesion > 0.0 && g.cohesion <= 1.0);
    }
    let db_group = groups.iter().find(|g| g.ids().contains(&"L1".to_owned()));
    let terms = db_group.map(|g| g.terms.clone()).unwrap_or_default();
    assert!(terms.iter().any(|t| t == "sqlx" || t == "db"), "{terms:?}");
}

#[test]
fn one_session_is_not_enough() {
    let mut items = corpus();
    for i in &mut items {
        i.sessions = ["2026-01-02".to_owned()].into_iter().collect();
    }
    assert!(suggest(&items, &SuggestOptions::default()).is_empty());
    let relaxed = SuggestOptions {
        min_sessions: 1,
        ..SuggestOptions::default()
    };
    assert_eq!(suggest(&items, &relaxed).len(), 2);
}

#[test]
fn group_ids_depend_on_members_only() {
    let a = group_id(&["L2".into(), "L1".into()]);
    let b = group_id(&["L1".into(), "L2".into()]);
    assert_eq!(a, b);
    assert_ne!(a, group_id(&["L1".into(), "L3".into()]));
}

#[test]
fn hostile_names_become_safe_folder_names() {
    let check = |raw: &str, want: &str| assert_eq!(safe_name(raw), want, "{raw:?}");
    check("Database Migrations", "database-migrations");
    check("../../etc/passwd", "etc-passwd");
    check("a\u{1b}[31mred\u{7}", "a-31mred");
    check("claude-code tips", "code-tips");
    check("CON", "con-skill");
    check("null", "null-skill");
    check("2026", "2026-skill");
    check("--x--y--", "x-y");
    let hashed = safe_name("../");
    assert!(
        hashed.starts_with("skill-") && hashed.len() == 14,
        "{hashed}"
    );
    assert!(safe_name("数据库迁移").starts_with("skill-"));
    assert!(safe_name("").starts_with("skill-"));
    let long = safe_name(&"abcdefghij ".repeat(20));
    assert!(long.len() <= MAX_NAME_CHARS, "{long}");
    assert!(!long.ends_with('-'));
    let one_word = safe_name(&"x".repeat(200));
    assert_eq!(one_word.len(), MAX_NAME_CHARS);
    for raw in ["../", ".", "..", "a/b", "\u{0}", "a\\b", "Anthropic"] {
        let n = safe_name(raw);
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{n}"
        );
        assert!(!n.starts_with('-') && !n.contains("--"), "{n}");
    }
}

fn draft_for(group: &Group) -> SkillDraft {
    mem_llm::OfflineEngine.skill_now(&request(group, None))
}

#[test]
fn rendered_skills_have_valid_frontmatter_and_cite_their_sources() {
    let items = corpus();
    let group = group_of(&items, &[0, 1, 2]);
    let mut draft = draft_for(&group);
    draft.description = "Use when \"quoting\": matters\n<tag> and: colons".into();
    draft.steps.push(mem_llm::SkillPoint {
        text: "invented".into(),
        sources: vec!["L99".into()],
    });
    let text = render(&draft, &group.name, &group);
    let front = text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
        .map(|(f, _)| f)
        .unwrap_or_default();
    #[derive(serde::Deserialize)]
    struct Front {
        name: String,
        description: String,
    }
    let parsed: Front = serde_saphyr::from_str(front).unwrap_or_else(|e| panic!("{e}: {front}"));
    assert_eq!(parsed.name, group.name);
    assert_eq!(
        parsed.description,
        "Use when \"quoting\": matters tag and: colons"
    );
    assert!(!text.contains("invented"));
    for id in ["L1", "L2", "L3"] {
        assert!(text.contains(&format!("`{id}`")), "{text}");
    }
    assert!(text.contains("## Steps"));
    assert!(text.contains("## Sources"));
}

fn options(dir: &std::path::Path) -> WriteOptions {
    WriteOptions {
        dir: dir.to_path_buf(),
        beside: false,
        dry_run: false,
    }
}

#[test]
fn writes_refuse_hand_edits_and_can_write_beside() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path().join("skills");
    let sources = vec!["L1".to_owned()];
    // Skill `db` with body `body`, written with `opts`.
    let put = |opts: &WriteOptions, body: &str| {
        write(
            opts,
            "db",
            &format!("---\nname: db\n---\n{body}\n"),
            &sources,
            "offline",
        )
    };
    let ok = |w: Result<Written>| w.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok(put(&options(&dir), "one")).status, WriteStatus::Created);
    assert_eq!(
        ok(put(&options(&dir), "one")).status,
        WriteStatus::Unchanged
    );
    assert_eq!(ok(put(&options(&dir), "two")).status, WriteStatus::Updated);
    let path = dir.join("db").join(SKILL_FILE);
    let hand = "---\nname: db\n---\nmy own words\n";
    std::fs::write(&path, hand).unwrap_or_else(|e| panic!("{e}"));
    let refused = put(&options(&dir), "three");
    assert!(matches!(refused, Err(Error::Edited { .. })), "{refused:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), hand);
    let beside_opts = WriteOptions {
        beside: true,
        ..options(&dir)
    };
    let beside = ok(put(&beside_opts, "three"));
    assert_eq!(beside.status, WriteStatus::Beside);
    assert_eq!(beside.path, dir.join("db").join(BESIDE_FILE));
    assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), hand);
    // A skill a person wrote (no sidecar) is refused too.
    std::fs::create_dir_all(dir.join("mine")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("mine").join(SKILL_FILE), "hand").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        write(&options(&dir), "mine", "x", &sources, "offline"),
        Err(Error::Edited { .. })
    ));
}

#[test]
fn writes_filter_secrets_and_refuse_symlinks() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path().join("skills");
    let text = "use ghp_ZXc8vB7nM6qW5eR4tY3uI2oP1aS0dF9gH8jK here\n";
    let w = write(&options(&dir), "s", text, &[], "offline").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.withheld, 1);
    let on_disk = std::fs::read_to_string(dir.join("s").join(SKILL_FILE)).unwrap_or_default();
    assert!(!on_disk.contains("ghp_"), "{on_disk}");
    assert!(on_disk.contains(mem_core::secrets::REDACTED));
    #[cfg(unix)]
    {
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&elsewhere, dir.join("link")).unwrap_or_else(|e| panic!("{e}"));
        let r = write(&options(&dir), "link", "x", &[], "offline");
        assert!(matches!(r, Err(Error::Unsafe { .. })), "{r:?}");
        assert!(
            std::fs::read_dir(&elsewhere)
                .map(|d| d.count())
                .unwrap_or(1)
                == 0
        );
    }
}
