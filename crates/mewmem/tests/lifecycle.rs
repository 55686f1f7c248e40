#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The seed §6 lifecycle through the facade, offline: start with the block, append every
//! message, compact at a small window with the block injected again (never stacked), resume.

use std::sync::Arc;

use chrono::NaiveDate;
use mem_compact::WarningLevel;
use mem_core::{ContentBlock, Message, Role, is_long_term_memory};
use mem_llm::OfflineEngine;
use mewmem::{Memory, MemorySettings};
use serde_json::json;

fn date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 6, 18).unwrap()
}

fn project() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(project.join(".mewcode")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(project.join("MEWCODE.md"), "Always run the tests.\n").unwrap();
    std::fs::write(
        project.join(".mewcode/memories.md"),
        "### 项目知识\n- The build uses cargo.\n",
    )
    .unwrap();
    (dir, project, home)
}

fn settings(home: &std::path::Path, window: usize) -> MemorySettings {
    let mut s = MemorySettings::new(home, Arc::new(OfflineEngine), date());
    s.compact.model_context_window = window;
    s
}

fn tool_turn(i: usize) -> (Message, Message) {
    let id = format!("call_{i}");
    let call = Message::new(
        Role::Assistant,
        vec![
            ContentBlock::text(format!("Reading file {i}.")),
            ContentBlock::tool_use(&id, "read_file", json!({"path": format!("src/f{i}.rs")})),
        ],
    );
    let body = format!("fn f{i}() {{ /* {} */ }}\n", "body text ".repeat(120));
    let result = Message::new(
        Role::User,
        vec![ContentBlock::tool_result(&id, body, false)],
    );
    (call, result)
}

#[tokio::test]
async fn a_session_compacts_at_a_small_window_and_the_block_comes_back_once() {
    let (_dir, project, home) = project();
    let memory = Memory::open(&project, settings(&home, 8_192)).unwrap();
    let mut session = memory.start().unwrap();
    let first = &session.request_messages()[0];
    assert!(is_long_term_memory(first));
    let text = first.text_content();
    assert!(text.contains("# mewcodeMd") && text.contains("Always run the tests."));
    assert!(text.contains("# autoMemory") && text.contains("The build uses cargo."));
    assert!(text.contains("Today's date is 2026-06-18."));

    let mut compacted = 0;
    for i in 0..40 {
        session
            .user_message(format!("step {i}: read the next file"))
            .unwrap();
        let (call, result) = tool_turn(i);
        let r1 = session.model_message(call).await.unwrap();
        let r2 = session.model_message(result).await.unwrap();
        compacted += usize::from(r1.triggered) + usize::from(r2.triggered);
        if r2.triggered {
            assert_eq!(r2.warning_level, WarningLevel::Compacted);
            assert!(r2.tokens_after < r2.tokens_before);
        }
    }
    assert!(compacted >= 1, "no compaction at an 8k window");
    let messages = session.request_messages();
    let blocks = messages.iter().filter(|m| is_long_term_memory(m)).count();
    assert_eq!(blocks, 1, "the block is injected again, never stacked");
    assert!(is_long_term_memory(&messages[0]));

    // Everything is on disk: resuming gives the summary and the kept tail, block first again.
    let id = session.id().to_owned();
    drop(session);
    let meta = memory.store().meta(&id).unwrap();
    assert_eq!(meta.message_count, 120);
    assert!(meta.compactions >= 1);
    let resumed = memory.resume(&id).unwrap();
    let messages = resumed.request_messages();
    assert!(is_long_term_memory(&messages[0]));
    let last = messages.last().unwrap();
    assert!(last.is_tool_result_only());
}

#[test]
fn opening_a_missing_project_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Memory::open(dir.path().join("nope"), settings(dir.path(), 128_000))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("nope"), "{err}");
}

#[tokio::test]
async fn a_user_message_prefetches_recall_and_the_reminder_goes_before_it_once() {
    let (_dir, project, home) = project();
    std::fs::create_dir_all(project.join(".mewcode/memory")).unwrap();
    std::fs::write(
        project.join(".mewcode/memory/deploy.md"),
        "---\nname: Deploying\ndescription: How the service is deployed to staging\ntype: project\n---\nRun `make deploy-staging`; it needs VPN.\n",
    )
    .unwrap();
    let memory = Memory::open(&project, settings(&home, 128_000)).unwrap();
    let mut session = memory.start().unwrap();
    session
        .user_message("how do I deploy the service to staging?")
        .unwrap();
    let request = session.next_request().await;
    let n = request.len();
    assert!(is_long_term_memory(&request[0]));
    let reminder = request[n - 2].text_content();
    assert!(reminder.starts_with("<system-reminder>"), "{reminder}");
    assert!(reminder.contains("make deploy-staging"), "{reminder}");
    assert_eq!(
        request[n - 1].text_content(),
        "how do I deploy the service to staging?"
    );
    assert_eq!(
        session.recalled().unwrap().ids,
        vec!["N:project/deploy.md".to_owned()]
    );
    // The reminder is not part of the stored conversation.
    assert!(
        !session
            .request_messages()
            .iter()
            .any(|m| m.text_content().contains("make deploy-staging"))
    );
    // The same question later in the session: the note was surfaced already.
    session
        .model_message(Message::assistant("Run make deploy-staging."))
        .await
        .unwrap();
    session
        .user_message("and deploy to staging again?")
        .unwrap();
    let again = session.next_request().await;
    assert!(!again.iter().any(|m| {
        m.text_content()
            .contains("<system-reminder>\nThe following memory")
    }),);
}
