//! A `config.toml` that is not TOML is reported as a TOML error naming the file and line, by
//! every command that reads it (issue 27 item 16: it said "invalid [checkpoint] table").

use std::path::Path;

mod common;
use common::mem_command;

fn mem_err(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = mem_command(project, home)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!out.status.success(), "mem {args:?} accepted a bad config");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_config_that_is_not_toml_names_the_file_and_line() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let config = project.join(".mewcode/config.toml");
    for (text, line) in [
        ("# ok\n[checkpoint]\nauto = true\nthis is not toml\n", 4),
        ("{\"checkpoint\": {\"keep\": 3}}\n", 1),
        ("[memory]\n\n[memory]\n", 3),
    ] {
        std::fs::write(&config, text).unwrap_or_else(|e| panic!("{e}"));
        for args in [&["memory", "stats"][..], &["memory", "search", "x"][..]] {
            let err = mem_err(&project, &home, args);
            let at = format!("{}:{line}:", config.display());
            assert!(err.contains(&at), "mem {args:?} on {text:?}: {err}");
            assert!(err.contains("not valid TOML"), "mem {args:?}: {err}");
            assert!(!err.contains("invalid [checkpoint] table"), "{err}");
        }
    }
}

/// Every reader of `config.toml` goes through one reader (`config::read_config_text`): a file
/// over the 1 MiB cap, or one that is not UTF-8, is refused by name by the `[skills]` and
/// `[checkpoint]` readers too (they parsed the first MiB of it before).
#[test]
fn an_oversized_or_non_utf8_config_is_refused_by_the_skill_and_checkpoint_readers() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let config = project.join(".mewcode/config.toml");
    let mut oversized = b"[skills]\nmin_memories = 3\n".to_vec();
    oversized.extend(std::iter::repeat_n(b'#', 2 << 20));
    for bytes in [oversized, b"[skills]\n# \xff\xfe\n".to_vec()] {
        std::fs::write(&config, &bytes).unwrap_or_else(|e| panic!("{e}"));
        for args in [
            &["skill", "suggest"][..],
            &["checkpoint", "create", "c1"][..],
        ] {
            let err = mem_err(&project, &home, args);
            let named = format!("{} is too large or not UTF-8", config.display());
            assert!(err.contains(&named), "mem {args:?}: {err}");
        }
    }
}
