//! `mem note add` has the one body cap of MCP `memory_add` (issue 27 item 17): a body over
//! `mem_tiers::MAX_CONTENT_BYTES` (1 MiB), from standard input (`-`), is refused (an argument
//! cannot be that long on Linux: 128 KiB), with a message naming the cap, and no note is written; a body at the cap is written.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

mod common;
use common::mem_command;

const CAP: usize = 1024 * 1024;

fn add_from_stdin(project: &Path, home: &Path, name: &str, body: &[u8]) -> std::process::Output {
    let mut child = mem_command(project, home)
        .args([
            "note",
            "add",
            "--name",
            name,
            "--description",
            "d",
            "--type",
            "project",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    // mem may stop reading at the cap: a broken pipe here is expected.
    let _ = stdin.write_all(body);
    drop(stdin);
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

fn notes(project: &Path) -> Vec<String> {
    let dir = project.join(".mewcode").join("memory");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "memories.md")
        .collect()
}

#[test]
fn a_note_body_over_the_mcp_cap_is_refused_from_stdin() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let project = tmp.path().join("p");
    let home = tmp.path().join("h");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));

    for size in [CAP + 1, 3 * CAP] {
        let out = add_from_stdin(&project, &home, "big", &vec![b'a'; size]);
        assert!(!out.status.success(), "a {size}-byte body was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("1048576"), "{err}");
        assert!(notes(&project).is_empty(), "{:?}", notes(&project));
    }
    let at_cap = format!("{}\n", "word ".repeat(CAP / 5 - 1));
    assert!(at_cap.len() <= CAP);
    let out = add_from_stdin(&project, &home, "fits", at_cap.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(notes(&project).len(), 1, "{:?}", notes(&project));
}
