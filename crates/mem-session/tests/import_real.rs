//! The importers on the real transcripts bundled under `fixtures/transcripts/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mem_session::import::{ImportedSession, SourceFormat, detect_format, discover, import_file};
use mem_session::{ChainIssue, Error, records_to_messages, validate_message_chain};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts")
}

fn claude(rel: &str) -> PathBuf {
    fixtures().join("claude").join(rel)
}

fn codex(rel: &str) -> PathBuf {
    fixtures().join("codex").join(rel)
}

fn import_ok(path: &Path) -> Vec<ImportedSession> {
    import_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Tool_use ids anywhere in the session (messages and kept tails).
fn all_use_ids(s: &ImportedSession) -> HashSet<String> {
    let mut ids = HashSet::new();
    for r in &s.records {
        for m in r.message.iter().chain(r.keep_messages.iter().flatten()) {
            ids.extend(m.tool_use_ids().map(str::to_owned));
        }
    }
    ids
}

/// Chain issues of the replay; panics on an orphan result whose call *is* in the session
/// (that would be the importer's fault, not the source's).
fn chain_issues(s: &ImportedSession) -> (usize, usize, usize) {
    let (_, issues) = validate_message_chain(records_to_messages(&s.records));
    let uses = all_use_ids(s);
    let (mut dangling, mut interrupted, mut orphans) = (0, 0, 0);
    for issue in issues {
        match issue {
            ChainIssue::DanglingTail { .. } => dangling += 1,
            ChainIssue::InterruptedToolUse { .. } => interrupted += 1,
            ChainIssue::OrphanToolResult { tool_use_id } => {
                assert!(
                    !uses.contains(&tool_use_id),
                    "{}: session {}: result of `{tool_use_id}` is orphaned although its call was imported",
                    s.source_path.display(),
                    s.id
                );
                orphans += 1;
            }
        }
    }
    (dangling, interrupted, orphans)
}

fn is_safe_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[test]
fn every_bundled_transcript_imports_or_is_rejected_clearly() {
    let (files, diags) = discover(&[fixtures()]);
    assert!(diags.is_empty(), "{diags:?}");
    assert!(files.len() >= 45, "found {} files", files.len());
    let mut rejected = Vec::new();
    let mut ids = HashSet::new();
    let mut summary = Vec::new();
    for file in &files {
        match import_file(file) {
            Ok(sessions) => {
                for s in &sessions {
                    assert!(is_safe_id(&s.id), "unsafe id {:?}", s.id);
                    assert!(ids.insert(s.id.clone()), "duplicate id {}", s.id);
                    for r in &s.records {
                        r.check().unwrap();
                    }
                    let (d, i, o) = chain_issues(s);
                    let r = &s.report;
                    summary.push(format!(
                        "{:<60} {:<13} msgs {:>4} pairs {:>3} bounds {} skipped {:>4} diags {} | dangling {d} interrupted {i} orphan(src) {o} | {}",
                        s.id.chars().take(60).collect::<String>(),
                        s.format.to_string(),
                        r.messages,
                        r.tool_pairs,
                        r.boundaries,
                        r.skipped_total(),
                        r.diagnostics.len(),
                        s.title.as_deref().unwrap_or("-").chars().take(40).collect::<String>(),
                    ));
                    for d in &r.diagnostics {
                        summary.push(format!("    {d}"));
                    }
                }
            }
            Err(Error::NotATranscript { path, reason }) => {
                rejected.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    reason,
                ));
            }
            Err(e) => panic!("{}: {e}", file.display()),
        }
    }
    println!("{}", summary.join("\n"));
    println!("rejected: {rejected:#?}");
    let names: Vec<&str> = rejected.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "entireio_cli__ckpt-12cbfeaa512b-0.full.jsonl",
            "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl"
        ]
    );
    assert!(rejected[1].1.contains("empty"), "{}", rejected[1].1);
    assert!(rejected[0].1.contains("Gemini"), "{}", rejected[0].1);
}

#[test]
fn not_a_transcript_names_the_file() {
    let path = claude("entireio_cli__ckpt-12cbfeaa512b-0.full.jsonl");
    let err = detect_format(&path).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("entireio_cli__ckpt-12cbfeaa512b-0.full.jsonl"),
        "{text}"
    );
    assert!(text.contains("not JSON Lines"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let random = dir.path().join("notes.jsonl");
    std::fs::write(&random, "just some text\nmore text\n").unwrap();
    assert!(matches!(
        import_file(&random),
        Err(Error::NotATranscript { .. })
    ));
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, "{\"a\":1}\n{\"b\":2}\n").unwrap();
    let err = import_file(&other).unwrap_err().to_string();
    assert!(
        err.contains("neither a Claude Code transcript nor a Codex rollout"),
        "{err}"
    );
}

#[test]
fn formats_are_detected() {
    let cases = [
        (
            claude("entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"),
            SourceFormat::ClaudeCode,
        ),
        (
            claude("daaain_claude-code-log__real_projects/-src-deep-manifest/agent-c8d9b115.jsonl"),
            SourceFormat::ClaudeCode,
        ),
        (
            codex(
                "lanegrid_agtrace__rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
            ),
            SourceFormat::Codex,
        ),
    ];
    for (path, want) in cases {
        assert_eq!(detect_format(&path).unwrap(), want, "{}", path.display());
    }
}

fn boundaries(s: &ImportedSession) -> Vec<&mem_session::SessionRecord> {
    s.records
        .iter()
        .filter(|r| r.record_type == mem_session::RecordType::CompactBoundary)
        .collect()
}

fn trigger(r: &mem_session::SessionRecord) -> Option<&str> {
    r.extra
        .get("compact_metadata")
        .and_then(|m| m.get("trigger"))
        .and_then(|t| t.as_str())
}

#[test]
fn claude_compactions_become_boundaries() {
    let s = &import_ok(&claude("entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl"))[0];
    assert_eq!(s.report.boundaries, 1);
    let b = boundaries(s);
    assert_eq!(trigger(b[0]), Some("auto"));
    let summary = b[0].summary.as_deref().unwrap();
    assert!(
        summary.starts_with("This session is being continued"),
        "{summary}"
    );
    // The replay starts at the boundary: the summary first, then what followed it.
    let replay = records_to_messages(&s.records);
    assert_eq!(replay[0].text_content(), summary);
    assert!(replay.len() < s.report.messages);
    // The summary message itself is not also a user message.
    let summaries = s
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .filter(|m| {
            m.text_content()
                .starts_with("This session is being continued")
        })
        .count();
    assert_eq!(summaries, 0);

    let s = &import_ok(&claude("entireio_cli__ckpt-44785715c3f5-2.full.jsonl"))[0];
    assert_eq!(s.report.boundaries, 2);
    assert!(boundaries(s).iter().all(|b| trigger(b) == Some("manual")));

    let s = &import_ok(&claude("entireio_cli__ckpt-4b7d5121b42a-0.full.jsonl"))[0];
    assert_eq!(s.report.boundaries, 1);
    assert_eq!(trigger(boundaries(s)[0]), Some("manual"));
    assert_eq!(s.report.skipped.get("progress"), Some(&68));
}

#[test]
fn glued_line_keeps_both_objects_and_is_reported() {
    let s = &import_ok(&claude("entireio_cli__ckpt-37995ebed6e4-2.full.jsonl"))[0];
    let d: Vec<String> = s
        .report
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        d.iter().any(|d| d.contains("ckpt-37995ebed6e4-2.full.jsonl:128: warning: 2 JSON values glued")),
        "{d:?}"
    );
    let line_128 = s
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .any(|m| {
            m.metadata.get("source_line") == Some(&128.into())
                || m.metadata
                    .get("merged_source_lines")
                    .and_then(|l| l.as_array())
                    .is_some_and(|l| l.contains(&128.into()))
        });
    assert!(line_128, "the assistant half of line 128 is kept");
    // One `summary` line of its own plus the glued half of line 128: both read and counted.
    assert_eq!(s.report.skipped.get("summary"), Some(&2));
}

#[test]
fn megabyte_line_keeps_its_image() {
    // Line 82 is 961 KB: a tool result with a 480 KB base64 screenshot (the rest of the line is
    // `toolUseResult`, Claude Code's UI copy of the same output, which is dropped).
    let s = &import_ok(&claude("entireio_cli__ckpt-ada8171575ce-0.full.jsonl"))[0];
    let message = s
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .find(|m| {
            m.metadata.get("source_line") == Some(&82.into())
                || m.metadata
                    .get("merged_source_lines")
                    .and_then(|l| l.as_array())
                    .is_some_and(|l| l.contains(&82.into()))
        })
        .expect("line 82 is imported");
    let mut images = Vec::new();
    for b in &message.content {
        if let mem_core::ContentBlock::ToolResult {
            content: mem_core::ToolResultContent::Blocks(blocks),
            ..
        } = b
        {
            for inner in blocks {
                if let mem_core::ContentBlock::Image { source, .. } = inner {
                    images.push(
                        source
                            .get("data")
                            .and_then(|d| d.as_str())
                            .map_or(0, str::len),
                    );
                }
            }
        }
    }
    assert_eq!(images, [480_220]);
}

#[test]
fn subagent_files_are_linked_to_their_parent() {
    let dir = "daaain_claude-code-log__real_projects/-experiments-worktrees";
    let parent = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    let s = &import_ok(&claude(&format!(
        "{dir}/{parent}/subagents/agent-a4ca7529859c158c2.jsonl"
    )))[0];
    assert_eq!(s.id, format!("{parent}.agent-a4ca7529859c158c2"));
    assert_eq!(s.parent_id.as_deref(), Some(parent));
    assert_eq!(s.title.as_deref(), Some("Research Claude Code plan mode"));
    assert!(s.report.messages > 10);

    // Old layout: agent-<8hex>.jsonl beside the session, parent from the lines' sessionId.
    let s = &import_ok(&claude(
        "daaain_claude-code-log__real_projects/-src-deep-manifest/agent-c8d9b115.jsonl",
    ))[0];
    assert_eq!(s.id, "a7da6a22-facc-4fcd-8bab-f83c87862004.agent-c8d9b115");
    assert_eq!(
        s.parent_id.as_deref(),
        Some("a7da6a22-facc-4fcd-8bab-f83c87862004")
    );
    assert_eq!(s.report.tool_pairs, 15);

    // discover lists a parent before its subagents.
    let (files, _) = discover(&[claude("daaain_claude-code-log__real_projects")]);
    let pos = |needle: &str| {
        files
            .iter()
            .position(|f| f.to_string_lossy().ends_with(needle))
            .unwrap()
    };
    assert!(pos(&format!("{parent}.jsonl")) < pos("agent-a4ca7529859c158c2.jsonl"));
    assert!(pos("a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl") < pos("agent-c8d9b115.jsonl"));
    assert!(
        !files
            .iter()
            .any(|f| f.to_string_lossy().ends_with(".meta.json"))
    );
}

#[test]
fn inline_sidechains_are_split_into_subagent_sessions() {
    let path = claude(
        "d-kimuson_claude-code-viewer__sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    );
    let sessions = import_ok(&path);
    assert_eq!(sessions.len(), 6, "the main session and one per Task call");
    let main = &sessions[0];
    assert_eq!(main.id, "fe5e1c67-53e7-4862-81ae-d0e013e3270b");
    assert_eq!(
        main.title.as_deref(),
        Some("/orchestrator create TODO app by Next.js")
    );
    assert_eq!(
        main.report
            .skipped
            .get("sidechain (moved to subagent session)"),
        Some(&405)
    );
    // Every Task call of the main session keeps its result.
    let tasks: usize = main
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .flat_map(|m| m.content.iter())
        .filter(|b| matches!(b, mem_core::ContentBlock::ToolUse { name, .. } if name == "Task"))
        .count();
    assert_eq!(tasks, 5);
    assert_eq!(chain_issues(main), (0, 0, 0));
    for sub in &sessions[1..] {
        assert_eq!(sub.parent_id.as_deref(), Some(main.id.as_str()));
        assert!(
            sub.id
                .starts_with("fe5e1c67-53e7-4862-81ae-d0e013e3270b.sidechain-")
        );
        assert!(sub.title.is_some(), "titled from the Task description");
        assert_eq!(chain_issues(sub), (0, 0, 0));
    }
    let total: usize = sessions[1..].iter().map(|s| s.report.lines).sum();
    assert_eq!(total, 405);
}

#[test]
fn codex_rollout_maps_calls_reasoning_and_errors() {
    let path = codex(
        "AcidicSoil_codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    );
    let s = &import_ok(&path)[0];
    assert_eq!(s.format, SourceFormat::Codex);
    assert_eq!(s.id, "019a93b9-f380-7600-98ff-940e6b99603c");
    assert_eq!(
        s.cwd.as_deref(),
        Some("/home/user/projects/temp/chatbot-ui")
    );
    assert_eq!(s.created.as_deref(), Some("2025-11-17T21:30:28.608Z"));
    assert!(
        s.title
            .as_deref()
            .unwrap()
            .starts_with("finish up the users work")
    );
    assert_eq!(s.report.tool_pairs, 39);
    assert_eq!(s.report.skipped.get("event_msg:token_count"), Some(&79));
    assert_eq!(s.report.skipped.get("event_msg:user_message"), Some(&1));
    assert_eq!(s.report.skipped.get("turn_context"), Some(&40));
    let blocks: Vec<&mem_core::ContentBlock> = s
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .flat_map(|m| m.content.iter())
        .collect();
    let thinking = blocks.iter().filter(|b| b.kind() == "thinking").count();
    assert_eq!(thinking, 38);
    let errors = blocks.iter().filter(|b| b.is_error()).count();
    assert!(errors >= 1, "an `exit_code: 1` output is an error");
    assert_eq!(chain_issues(s), (0, 0, 0));
}

#[test]
fn codex_compacted_lines_become_boundaries() {
    let s = &import_ok(&codex("jazzyalex_agent-sessions__codex_small.jsonl"))[0];
    assert_eq!(s.report.boundaries, 6);
    let kept_compaction = boundaries(s).iter().any(|b| {
        b.keep_messages
            .iter()
            .flatten()
            .flat_map(|m| m.content.iter())
            .any(|c| c.kind() == "compaction")
    });
    assert!(kept_compaction, "the encrypted compaction item is kept");
    assert_eq!(s.report.skipped.get("session_meta (repeated)"), Some(&6));
}

#[test]
fn legacy_codex_rollout_imports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("rollout-2025-08-20T13-20-47-c27a914d.jsonl");
    let text = [
        r#"{"id":"c27a914d-1111-2222-3333-444455556666","timestamp":"2025-08-20T13:20:47.060Z","instructions":"You are Codex.","git":{"branch":"main"}}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"index the rollouts\nplease"}]}"#,
        r#"{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"look first"}],"encrypted_content":null}"#,
        r#"{"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}"#,
        r#"{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"README.md\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","id":null,"role":"assistant","content":[{"type":"output_text","text":"listed the directory"}]}"#,
    ]
    .join("\n");
    std::fs::write(&path, text).unwrap();
    assert_eq!(detect_format(&path).unwrap(), SourceFormat::CodexLegacy);
    let s = &import_ok(&path)[0];
    assert_eq!(s.format.to_string(), "codex-legacy");
    assert_eq!(s.id, "c27a914d-1111-2222-3333-444455556666");
    assert_eq!(s.title.as_deref(), Some("index the rollouts please"));
    assert_eq!(s.created.as_deref(), Some("2025-08-20T13:20:47.060Z"));
    assert_eq!(s.report.skipped.get("record_type:state"), Some(&2));
    let types: Vec<&str> = s.records.iter().map(|r| r.record_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "system_prompt",
            "user",
            "assistant",
            "tool_result",
            "assistant"
        ]
    );
    assert_eq!(s.report.tool_pairs, 1);
    let thinking = &s.records[2].message.as_ref().unwrap().content[0];
    assert!(
        matches!(thinking, mem_core::ContentBlock::Thinking { thinking, .. } if thinking == "look first")
    );
}

#[test]
fn importing_twice_gives_identical_sessions() {
    let (files, _) = discover(&[fixtures()]);
    for file in files {
        let (Ok(a), Ok(b)) = (import_file(&file), import_file(&file)) else {
            continue;
        };
        assert_eq!(a, b, "{}", file.display());
        let ja: Vec<String> = a
            .iter()
            .flat_map(|s| s.records.iter())
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        let jb: Vec<String> = b
            .iter()
            .flat_map(|s| s.records.iter())
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        assert_eq!(ja, jb, "{}", file.display());
    }
}

#[test]
fn records_round_trip_through_json() {
    let s = &import_ok(&claude(
        "daaain_claude-code-log__real_projects/-Users-dev-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl",
    ))[0];
    for r in &s.records {
        let line = serde_json::to_string(r).unwrap();
        let back: mem_session::SessionRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(&back, r);
    }
}

/// The conversion `mem session import` streams for large Claude Code files (records spilled as
/// they settle) gives what the conversion in memory gives, on every bundled transcript.
#[test]
fn the_streamed_conversion_equals_the_one_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = discover(&[fixtures()]);
    assert!(files.len() > 40, "{}", files.len());
    for file in &files {
        let memory = import_file(file);
        let streamed = mem_session::import::import_file_spilled(file, dir.path());
        match (memory, streamed) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.len(), b.len(), "{}", file.display());
                for (a, b) in a.iter().zip(&b) {
                    let enc = |s: &ImportedSession| -> Vec<String> {
                        s.records
                            .iter()
                            .map(|r| serde_json::to_string(r).unwrap())
                            .collect()
                    };
                    assert_eq!(enc(a), enc(b), "{}: {}", file.display(), a.id);
                    assert_eq!(a.report, b.report, "{}: {}", file.display(), a.id);
                    assert_eq!((&a.id, &a.title), (&b.id, &b.title), "{}", file.display());
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{}: {:?} / {:?}", file.display(), a.err(), b.err()),
        }
    }
    // The spill files are gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A summary whose leaf uuid has bytes that are not UTF-8 (read as U+FFFD, as the message's own
/// uuid is) titles the session in the streamed conversion too: the streamed look for the leaf
/// among the earlier lines searched the raw bytes for the U+FFFD text and missed it (found by
/// the `import_streamed` fuzz target).
#[test]
fn a_leaf_uuid_with_bytes_that_are_not_utf8_titles_both_conversions_alike() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        b"{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"uuid\":\"u-\xff\xfe-1\",\
          \"sessionId\":\"s1\",\"timestamp\":\"2025-03-01T10:00:00Z\",\"cwd\":\"/tmp\",\
          \"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n",
    );
    bytes.extend_from_slice(
        b"{\"type\":\"summary\",\"summary\":\"Title from the summary\",\"leafUuid\":\"u-\xff\xfe-1\"}\n",
    );
    std::fs::write(&file, &bytes).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let memory = import_file(&file).unwrap();
    let streamed = mem_session::import::import_file_spilled(&file, spill.path()).unwrap();
    assert_eq!(memory[0].title.as_deref(), Some("Title from the summary"));
    assert_eq!(streamed[0].title, memory[0].title);
    assert_eq!(streamed[0].report, memory[0].report);
}

/// The `injected_context` kinds the importer marked in `path`'s sessions, with a count each;
/// checks on the way that a marked message holds no words of the user's and that an unmarked
/// user text message (not meta, not a tool result) does.
fn injected_kinds(path: &Path) -> std::collections::BTreeMap<String, usize> {
    use mem_core::speech::{
        INJECTED_BLOCKS, INJECTED_CONTEXT, is_injected_message, user_speech_of,
    };
    let mut kinds = std::collections::BTreeMap::new();
    for s in import_ok(path) {
        for m in s.records.iter().filter_map(|r| r.message.as_ref()) {
            if let Some(kind) = m.metadata.get(INJECTED_CONTEXT) {
                let kind = kind.as_str().expect("a kind name").to_owned();
                assert_eq!(user_speech_of(m), None, "{}: {kind}", path.display());
                *kinds.entry(kind).or_insert(0) += 1;
                continue;
            }
            for pair in m
                .metadata
                .get(INJECTED_BLOCKS)
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
            {
                let i = pair[0].as_u64().expect("an index") as usize;
                let kind = pair[1].as_str().expect("a kind name").to_owned();
                let text = m.content[i].as_text().expect("a text block");
                assert_eq!(
                    mem_core::speech::user_speech(text).said,
                    "",
                    "{}: {kind}",
                    path.display()
                );
                *kinds.entry(kind).or_insert(0) += 1;
            }
            if m.role == mem_core::Role::User
                && !is_injected_message(m)
                && !m.is_tool_result_only()
                && m.content.iter().any(|b| b.as_text().is_some())
            {
                let text = m.text_content();
                assert!(
                    user_speech_of(m).is_some() || text.trim().is_empty(),
                    "{}: an unmarked user message with no speech: {text:?}",
                    path.display()
                );
            }
        }
    }
    kinds
}

#[test]
fn client_injected_context_is_marked_in_real_transcripts() {
    let count = |path: PathBuf, kind: &str| injected_kinds(&path).get(kind).copied().unwrap_or(0);
    // Codex: <environment_context> sent as a user message.
    assert!(
        count(
            codex("jazzyalex_agent-sessions__codex_large.jsonl"),
            "environment_context"
        ) >= 1
    );
    // Claude Code: slash-command wrappers and their output, IDE context, interruptions.
    let entire = claude("entireio_cli__ckpt-a6e4c2a0fbd1-0.full.jsonl");
    assert!(count(entire, "slash_command") >= 1);
    let entire = claude("entireio_cli__ckpt-44785715c3f5-2.full.jsonl");
    assert!(count(entire, "command_output") >= 1);
    let ide = claude(
        "daaain_claude-code-log__real_projects/-Users-dev-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    );
    assert!(count(ide, "ide_context") >= 1);
    assert!(
        count(
            claude("entireio_cli__ckpt-37995ebed6e4-2.full.jsonl"),
            "interruption"
        ) >= 1
    );
    // Every bundled transcript: marked messages hold no speech, unmarked ones do.
    let (files, _) = discover(&[fixtures()]);
    for f in files.iter().filter(|f| detect_format(f).is_ok()) {
        injected_kinds(f);
    }
}

#[test]
fn the_user_s_own_words_are_never_marked() {
    let path = claude("entireio_cli__ckpt-44785715c3f5-2.full.jsonl");
    let s = &import_ok(&path)[0];
    let typed = s
        .records
        .iter()
        .filter_map(|r| r.message.as_ref())
        .find(|m| m.text_content().starts_with("yeah let's do it"))
        .expect("the user's reply");
    assert!(
        !typed
            .metadata
            .contains_key(mem_core::speech::INJECTED_CONTEXT)
    );
    assert_eq!(
        mem_core::speech::user_speech_of(typed).as_deref(),
        Some(typed.text_content().trim())
    );
}
