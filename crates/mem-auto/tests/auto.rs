//! Auto memory end to end on real directories: extraction into both files, hand edits kept,
//! no double extraction after a restart, two processes writing at once, the cap, secrets,
//! bad files, lookup and removal by id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};
use mem_auto::{
    AutoMemory, AutoOptions, EntryId, ExtractOptions, ExtractReport, MemoryCategory, Scope,
    extract_session,
};
use mem_core::Message;
use mem_llm::OfflineEngine;

mod common;

use common::Project;

impl Project {
    fn append(&self, id: &str, messages: &[Message]) {
        let mut w = self.store().open(id).unwrap();
        for m in messages {
            w.append(m).unwrap();
        }
    }

    fn extract_with(&self, auto: &AutoMemory, id: &str) -> ExtractReport {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(extract_session(
            auto,
            &self.store(),
            id,
            &OfflineEngine,
            &ExtractOptions::new(Utc::now()),
        ))
        .unwrap()
    }

    fn extract(&self, id: &str) -> ExtractReport {
        self.extract_with(&self.auto(), id)
    }

    fn user_file(&self) -> PathBuf {
        self.home.join(".mewcode/memories.md")
    }

    fn project_file(&self) -> PathBuf {
        self.root.join(".mewcode/memories.md")
    }

    /// Every file under the project's `.mewcode` (transcripts excepted) and the home.
    fn memory_files_text(&self) -> String {
        let mut out = String::new();
        for base in [self.root.join(".mewcode"), self.home.clone()] {
            let mut stack = vec![base];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in rd.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        if !p.ends_with("sessions") {
                            stack.push(p);
                        }
                    } else {
                        out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
                    }
                }
            }
        }
        out
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn extraction_writes_both_files_and_hand_edits_survive() {
    let p = Project::new();
    let id = p.session(&[
        Message::user("Always use pnpm, never npm."),
        Message::assistant("Okay."),
        Message::user("Tests live in tests/integration and need Postgres."),
    ]);
    let r = p.extract(&id);
    assert_eq!(r.files.len(), 2, "{r:?}");
    assert!(read(&p.user_file()).contains("- Always use pnpm, never npm."));
    assert!(read(&p.project_file()).contains("### 项目知识\n- Tests live in tests/integration"));

    // A person edits the user file: a reworded bullet, prose, another heading, a comment.
    let edited = "# Mine\n\nProse I wrote.\n\n### 用户偏好\n- Use pnpm everywhere (reworded by me)\n<!-- note to self -->\n\n## Other\n- not an entry\n";
    std::fs::write(p.user_file(), edited).unwrap();
    p.append(
        &id,
        &[Message::user(
            "From now on, write commit messages in English.",
        )],
    );
    let r = p.extract(&id);
    assert_eq!(r.messages_new, 1);
    let text = read(&p.user_file());
    assert_eq!(
        text,
        "# Mine\n\nProse I wrote.\n\n### 用户偏好\n- Use pnpm everywhere (reworded by me)\n- From now on, write commit messages in English.\n<!-- note to self -->\n\n## Other\n- not an entry\n"
    );
}

/// Issue 26 "wrong file": a preference said "in this project" and a correction stating a fact of
/// this project go to `<project>/.mewcode/memories.md`; a preference for everywhere stays the
/// user's.
#[test]
fn scope_words_and_project_facts_land_in_the_project_file() {
    let p = Project::new();
    let id = p.session(&[
        Message::user("From now on always use uv, never pip, in this project."),
        Message::assistant("Okay, uv here."),
        Message::user("No, the project is Python, not Go."),
        Message::assistant("Right, Python."),
        Message::user("Always answer in English."),
    ]);
    p.extract(&id);
    let project = read(&p.project_file());
    let user = read(&p.user_file());
    assert!(
        project.contains("always use uv, never pip, in this project"),
        "{project}"
    );
    assert!(
        project.contains("The project is Python, not Go."),
        "{project}"
    );
    assert!(user.contains("Always answer in English."), "{user}");
    for moved in ["uv", "Python"] {
        assert!(!user.contains(moved), "{moved} in the user file:\n{user}");
    }
}

/// A rule naming a file in the user's home (`~/…`, `$HOME/…`) is the user's, not a fact of
/// this project: it must not land in `<project>/.mewcode/memories.md`, which may be committed.
#[test]
fn a_rule_naming_a_home_path_stays_in_the_user_file() {
    let p = Project::new();
    let id = p.session(&[
        Message::user(
            "I always want my personal snippets from ~/dotfiles/snippets/private.json loaded in every editor.",
        ),
        Message::assistant("Noted."),
        Message::user("Never touch $HOME/.config/nvim/init.lua when you set up a project."),
    ]);
    p.extract(&id);
    let project = read(&p.project_file());
    for home in ["dotfiles", "nvim"] {
        assert!(
            !project.contains(home),
            "{home} in the project file:\n{project}"
        );
    }
    let user = read(&p.user_file());
    assert!(user.contains("$HOME/.config/nvim/init.lua"), "{user}");
}

#[test]
fn a_restart_does_not_extract_again() {
    let p = Project::new();
    let id = p.session(&[Message::user("Always run clippy with -D warnings.")]);
    let first = p.extract(&id);
    assert_eq!(first.files[0].added.len(), 1);
    let before = (read(&p.user_file()), read(&p.project_file()));
    // A new process: a new AutoMemory, same folders.
    let again = p.extract_with(&p.auto(), &id);
    assert_eq!(again.messages_new, 0);
    assert!(again.skipped.is_some());
    assert_eq!((read(&p.user_file()), read(&p.project_file())), before);
    assert_eq!(mem_auto::extracted_count(&p.auto(), &id).unwrap(), 1);
    // Only what came after is read.
    p.append(
        &id,
        &[Message::assistant("Sure."), Message::user("thanks!")],
    );
    let third = p.extract(&id);
    assert_eq!(third.messages_new, 2);
    assert!(third.files.iter().all(|f| f.added.is_empty()));
}

#[test]
fn a_dry_run_writes_nothing() {
    let p = Project::new();
    let id = p.session(&[Message::user("Always use uv, never pip.")]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut options = ExtractOptions::new(Utc::now());
    options.dry_run = true;
    let r = rt
        .block_on(extract_session(
            &p.auto(),
            &p.store(),
            &id,
            &OfflineEngine,
            &options,
        ))
        .unwrap();
    assert_eq!(r.files[0].added.len(), 1);
    assert!(!p.user_file().exists());
    assert_eq!(mem_auto::extracted_count(&p.auto(), &id).unwrap(), 0);
}

const CHILD_ENV: &str = "MEM_AUTO_TEST_CHILD";

/// Run as a child process (see `two_processes_lose_no_entry`): adds 40 entries, one locked
/// update each.
fn child_work(root: &str, home: &str, tag: &str) {
    let auto = AutoMemory::new(
        root,
        home,
        AutoOptions {
            cap_tokens: 1_000_000,
            ..AutoOptions::default()
        },
    );
    for i in 0..40 {
        auto.update(Scope::Project, |f| {
            f.doc.add(
                MemoryCategory::Project,
                &format!("fact {i} from process {tag}"),
                Default::default(),
            );
            Ok(())
        })
        .unwrap();
    }
}

#[test]
fn two_processes_lose_no_entry() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let parts: Vec<&str> = spec.split('\u{1f}').collect();
        child_work(parts[0], parts[1], parts[2]);
        return;
    }
    let p = Project::new();
    std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
    std::fs::write(p.project_file(), "### 项目知识\n- written by hand\n").unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|tag| {
            std::process::Command::new(&exe)
                .args(["--exact", "two_processes_lose_no_entry", "--test-threads=1"])
                .env(
                    CHILD_ENV,
                    format!("{}\u{1f}{}\u{1f}{tag}", p.root.display(), p.home.display()),
                )
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = read(&p.project_file());
    assert!(text.contains("- written by hand\n"));
    for tag in ["a", "b"] {
        for i in 0..40 {
            assert!(
                text.contains(&format!("- fact {i} from process {tag}\n")),
                "fact {i} of {tag} lost"
            );
        }
    }
    assert_eq!(p.auto().list().entries.len(), 81);
}

#[test]
fn at_the_cap_old_entries_are_evicted_and_reported() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".mewcode")).unwrap();
    let mut text = String::from("### 用户偏好\n");
    for i in 0..30 {
        text.push_str(&format!(
            "- old preference number {i} about formatting style\n"
        ));
    }
    text.push_str("- Old preference number 3 about  formatting style.\n");
    std::fs::write(p.user_file(), &text).unwrap();
    // Date the old entries: the first ones confirmed longest ago.
    let seed = AutoMemory::new(&p.root, &p.home, AutoOptions::default());
    seed.update(Scope::User, |f| {
        for (i, e) in f.doc.entries().iter().enumerate() {
            let when = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap()
                + chrono::Duration::hours(i as i64);
            f.meta.entries.insert(
                e.id.to_string(),
                mem_auto::EntryDates {
                    added: when,
                    confirmed: when,
                },
            );
        }
        Ok(())
    })
    .unwrap();
    let cap = mem_auto::count_tokens(&text) - 40;
    let auto = AutoMemory::new(
        &p.root,
        &p.home,
        AutoOptions {
            cap_tokens: cap,
            ..AutoOptions::default()
        },
    );
    // (No scope word: "in this repository" would put it in the project's file.)
    let id = p.session(&[Message::user("Always use pnpm for every install.")]);
    let r = p.extract_with(&auto, &id);
    let f = &r.files[0];
    assert_eq!(f.added.len(), 1);
    assert!(f.tokens <= cap, "{} > {cap}", f.tokens);
    // The near-duplicate pair is consolidated first, then the oldest go.
    assert_eq!(f.consolidated.len(), 1, "{f:?}");
    assert!(!f.evicted.is_empty());
    assert!(f.evicted[0].text.contains("number 0 "), "{:?}", f.evicted);
    let now = read(&p.user_file());
    assert!(now.contains("- Always use pnpm for every install."));
    for e in f.evicted.iter().chain(&f.consolidated) {
        assert!(!now.contains(&format!("- {}\n", e.text)));
    }
}

#[test]
fn no_secret_reaches_a_memory_file() {
    let secrets = [
        ("github", "ghp_Q3vX9kLm2PzR7tYw4NcB8sHd6JfA1uEo0GiK"),
        ("gitlab", "glpat-Xk29Lmq7Rt4Vz8Pw1Nb5"),
        ("aws", "AKIAQ7ZP4LX2MNB6VC3D"),
        (
            "openai",
            "sk-proj-Zx8Cv7Bn6Mq5Wl4Ek3Rj2Th1Yg0Uf9Id8Os7Pa6Sd5Fg4Hj3Kl2",
        ),
        (
            "anthropic",
            "sk-ant-api03-Hq7Lm2Zx9Cv4Bn8Mw1Qe5Rt3Yu6Io0Pa2Sd7Fg4Hj9Kl1-AbCdEfGh",
        ),
        ("google", "AIzaSyD4x9Lm2Qp7Rs8Tv1Wx3Yz6Ab0Cd5Ef8Gh"),
        (
            "slack",
            "xoxb-2048217739-1234567890123-Xy7Zq3Wv9Ut5Sr1Qp8On4Ml6",
        ),
        (
            "stripe",
            "sk_live_51Hx9QmLk2Vb8Nc4Xz7Ad3Fg6Jh0Ty5Ru1Ei9Ow2Pq8Sa4Df",
        ),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbiIsImlhdCI6MTcwMDAwMDAwMH0.Q2hhbmdlTWVQbGVhc2VJdElzRmFrZTEyMzQ1Njc4OTA",
        ),
    ];
    let p = Project::new();
    let mut messages = Vec::new();
    for (name, s) in secrets {
        messages.push(Message::user(format!(
            "Always authenticate the {name} client with {s} when running the integration suite."
        )));
        messages.push(Message::user(format!(
            "The {name} docs are at https://docs.example.com/{name}?token={s} for reference."
        )));
    }
    messages.push(Message::user("We deploy with https://deploy:hunter2Secret9@git.example.com/acme/app.git from the main branch."));
    messages.push(Message::user("Remember to sign releases with this key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx8Zq3Wv9Ut5Sr1Qp8On4Ml6KxYz\n-----END RSA PRIVATE KEY-----"));
    let id = p.session(&messages);
    let r = p.extract(&id);
    let all = p.memory_files_text();
    assert!(!all.is_empty());
    for (name, s) in secrets {
        assert!(!all.contains(s), "{name} secret written:\n{all}");
    }
    for s in [
        "hunter2Secret9",
        "MIIEowIBAAKCAQEAx8Zq3Wv9Ut5Sr1Qp8On4Ml6KxYz",
    ] {
        assert!(!all.contains(s), "{s} written:\n{all}");
    }
    assert!(!mem_core::secrets::contains_secret(&all), "{all}");
    // The offline engine sends no prompt: no prompt redaction is reported.
    assert_eq!(r.withheld_from_prompt, None);
    // The fact around the secret is kept.
    assert!(
        all.contains("We deploy with https://deploy:[REDACTED]@git.example.com/acme/app.git"),
        "{all}"
    );
}

#[test]
fn lookup_and_forget_by_id() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
    std::fs::create_dir_all(p.home.join(".mewcode")).unwrap();
    std::fs::write(
        p.user_file(),
        "### User preferences\n- Use tabs.\n- Use pnpm\n",
    )
    .unwrap();
    std::fs::write(
        p.project_file(),
        "intro\n\n### 参考资料\n- Docs: https://x.dev\n  (the v2 ones)\n- Wiki: https://w.dev\n",
    )
    .unwrap();
    let auto = p.auto();
    let listing = auto.list();
    assert!(listing.warnings.is_empty());
    let shown: Vec<String> = listing
        .entries
        .iter()
        .map(|e| {
            format!(
                "{} {:?} {:?} {} {}",
                e.id, e.scope, e.category, e.text, e.line
            )
        })
        .collect();
    assert_eq!(shown.len(), 4, "{shown:?}");
    let docs = EntryId::of("docs: https://x.dev");
    let found = auto.find(docs).unwrap().unwrap();
    assert_eq!((found.scope, found.line), (Scope::Project, 4));
    assert_eq!(found.path, p.project_file());
    let id_text = docs.to_string();
    assert_eq!(id_text.parse::<EntryId>().unwrap(), docs);
    let gone = auto.forget(docs).unwrap().unwrap();
    assert_eq!(gone.text, "Docs: https://x.dev");
    assert_eq!(
        read(&p.project_file()),
        "intro\n\n### 参考资料\n- Wiki: https://w.dev\n"
    );
    assert!(auto.forget(docs).unwrap().is_none());
    assert!(auto.find(EntryId::of("use tabs")).unwrap().is_some());
}

#[test]
fn bad_files_are_refused_and_left_as_they_are() {
    let p = Project::new();
    let dot = p.root.join(".mewcode");
    std::fs::create_dir_all(&dot).unwrap();
    let id = p.session(&[Message::user("Tests live in tests/unit for every crate.")]);

    let binary = b"### \x00\x01\x02 binary".to_vec();
    std::fs::write(p.project_file(), &binary).unwrap();
    let err = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(extract_session(
            &p.auto(),
            &p.store(),
            &id,
            &OfflineEngine,
            &ExtractOptions::new(Utc::now()),
        ))
        .unwrap_err();
    assert!(err.to_string().contains("memories.md"), "{err}");
    assert_eq!(std::fs::read(p.project_file()).unwrap(), binary);
    assert_eq!(mem_auto::extracted_count(&p.auto(), &id).unwrap(), 0);

    std::fs::write(p.project_file(), b"### \xff\xfe latin1\n").unwrap();
    let err = p.auto().update(Scope::Project, |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");

    std::fs::remove_file(p.project_file()).unwrap();
    std::fs::create_dir(p.project_file()).unwrap();
    let err = p.auto().update(Scope::Project, |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    std::fs::remove_dir(p.project_file()).unwrap();

    let outside = p.home.join("elsewhere.md");
    std::fs::write(&outside, "### 项目知识\n- private\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.project_file()).unwrap();
    let err = p.auto().update(Scope::Project, |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("outside the project"), "{err}");
    assert_eq!(read(&outside), "### 项目知识\n- private\n");

    // A read-only folder: an error, nothing half-written.
    std::fs::remove_file(p.project_file()).unwrap();
    std::fs::write(p.project_file(), "### 项目知识\n- kept\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o555)).unwrap();
    let result = p.auto().update(Scope::Project, |f| {
        f.doc
            .add(MemoryCategory::Project, "new fact here", Default::default());
        Ok(())
    });
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o755)).unwrap();
    if result.is_err() {
        // (Running as root, the write succeeds; only check when it was refused.)
        assert_eq!(read(&p.project_file()), "### 项目知识\n- kept\n");
        let leftovers: Vec<_> = std::fs::read_dir(&dot)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}

#[test]
fn a_correction_replaces_the_entry_it_corrects() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
    std::fs::write(
        p.project_file(),
        "### 项目知识\n- Package manager: npm\n- Deploys run from the main branch\n",
    )
    .unwrap();
    let id = p.session(&[Message::user("No, we use pnpm, not npm, in this monorepo.")]);
    let r = p.extract(&id);
    let project = r.files.iter().find(|f| f.scope == Scope::Project).unwrap();
    assert_eq!(project.removed.len(), 1);
    assert_eq!(project.removed[0].text, "Package manager: npm");
    // "in this monorepo" names the project: the correction goes to the project's file
    // (issue 26 build 3), not to the user's, where it would reach every project.
    assert_eq!(
        read(&p.project_file()),
        "### 纠正反馈\n- We use pnpm, not npm, in this monorepo.\n\n### 项目知识\n- Deploys run from the main branch\n"
    );
    assert!(!read(&p.user_file()).contains("pnpm"));
}

/// Issue 27 item 4: the report counts the secrets withheld from what the extraction wrote
/// (entries kept with `[REDACTED]`) and the entries dropped as mostly secret, whichever stage
/// (prompt redaction, the engine, [`mem_auto::clean`]) took the secret out.
#[test]
fn the_report_counts_the_secrets_that_were_withheld() {
    let p = Project::new();
    let id = p.session(&[
        // Kept with the secret replaced: one secret withheld.
        Message::user(
            "We deploy with https://deploy:hunter2Secret9@git.example.com/acme/app.git from the main branch.",
        ),
        // Mostly a secret: dropped, one more.
        Message::user("Always use ghp_Xy7Zq3Wv9Ut5Sr1Qp8On4Ml6KxYz2Ab4Cd6E"),
    ]);
    let r = p.extract(&id);
    let all = p.memory_files_text();
    let written = all.matches(mem_core::secrets::REDACTED).count();
    assert!(written >= 1, "{all}");
    assert!(!all.contains("ghp_Xy7Zq3"), "{all}");
    assert_eq!(r.secret_entries, 1, "{r:?}\n{all}");
    assert_eq!(r.withheld, written + 1, "{r:?}\n{all}");
}

/// A new entry saying a value is retired ("not neovim anymore", "develop 分支已经废弃了", "isn't
/// on 8000 anymore") removes the older entry stating it, in the same file; an entry naming the
/// value for something else ("The metrics exporter listens on 8000.") stays.
#[test]
fn an_entry_retiring_a_value_replaces_the_entry_stating_it() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
    std::fs::create_dir_all(p.home.join(".mewcode")).unwrap();
    std::fs::write(
        p.project_file(),
        "### 项目知识\n- 开发分支是 `develop`，功能分支从它切出。\n- The dev server runs on port 8000.\n- The metrics exporter listens on 8000.\n",
    )
    .unwrap();
    std::fs::write(
        p.user_file(),
        "### 用户偏好\n- I use neovim.\n- My shell is zsh.\n",
    )
    .unwrap();
    let id = p.session(&[
        Message::user("develop 分支已经废弃了，现在都是直接从 main 切分支，PR 也提到 main。"),
        Message::user(
            "The dev server isn't on 8000 anymore, we moved it to 5173 when we switched to vite.",
        ),
        Message::user("fyi I'm on Helix these days, not neovim anymore."),
    ]);
    let r = p.extract(&id);
    let removed: Vec<&str> = r
        .files
        .iter()
        .flat_map(|f| f.removed.iter().map(|c| c.text.as_str()))
        .collect();
    assert!(
        removed.contains(&"开发分支是 `develop`，功能分支从它切出。"),
        "{removed:?}"
    );
    // The dev server's sentence both retires 8000 and says what replaced it: an update.
    let updated: Vec<&str> = r
        .files
        .iter()
        .flat_map(|f| f.updated.iter().map(|u| u.old.text.as_str()))
        .collect();
    assert!(
        updated.contains(&"The dev server runs on port 8000."),
        "{updated:?}"
    );
    assert_eq!(removed.len(), 1, "{removed:?}");
    let project = read(&p.project_file());
    assert!(
        project.contains("The metrics exporter listens on 8000."),
        "{project}"
    );
    // "I use neovim." says nothing but the retired value: the sentence retiring it takes its
    // place (an update, mem_llm::offline::update).
    let user = read(&p.user_file());
    assert!(!user.contains("I use neovim."), "{user}");
    assert!(user.contains("not neovim anymore"), "{user}");
    assert!(user.contains("My shell is zsh."), "{user}");
}

/// The offline engine's UPDATE: a sentence saying a stored fact changed ("e2e is Playwright
/// now") replaces that entry where it stands; an entry on a neighbouring topic stays.
#[test]
fn a_sentence_changing_a_stored_fact_updates_the_entry_in_place() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join(".mewcode")).unwrap();
    std::fs::write(
        p.project_file(),
        "### 项目知识\n- E2E tests: `npx cypress run`.\n- Unit tests: `npm test`.\n",
    )
    .unwrap();
    let id = p.session(&[Message::user(
        "e2e is Playwright now, `npx playwright test`. unit tests unchanged.",
    )]);
    let r = p.extract(&id);
    let project = r.files.iter().find(|f| f.scope == Scope::Project).unwrap();
    assert_eq!(project.updated.len(), 1, "{project:?}");
    assert_eq!(project.updated[0].old.text, "E2E tests: `npx cypress run`.");
    assert!(project.added.is_empty(), "{project:?}");
    assert_eq!(
        read(&p.project_file()),
        "### 项目知识\n- e2e is Playwright now, `npx playwright test`.\n- Unit tests: `npm test`.\n"
    );
}
