//! `load_memories` on real directory trees: symlinks out of the roots, non-regular files,
//! budgets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use mem_auto::{Memories, MemoryOptions, load_memories};

/// A temp dir with `project/`, `home/` and `elsewhere/secret.md`.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        for d in ["project", "home", "elsewhere"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("elsewhere/secret.md"), "SECRET\n").unwrap();
        Tree { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn file(&self, rel: &str, content: &str) -> &Tree {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    /// `rel` becomes a symlink to `target` (relative to the temp dir).
    fn symlink(&self, target: &str, rel: &str) -> &Tree {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(self.path(target), p).unwrap();
        self
    }

    fn load_with(&self, project: &str, home: &str, max_bytes: usize) -> Memories {
        let mut options = MemoryOptions::new(self.path(project), self.path(home));
        options.max_bytes = max_bytes;
        load_memories(&options).unwrap()
    }

    fn load(&self) -> Memories {
        self.load_with("project", "home", 1024 * 1024)
    }
}

/// `file: kind: message` of each warning.
fn warnings(m: &Memories) -> Vec<String> {
    m.warnings
        .iter()
        .map(|w| format!("{:?}: {w}", w.kind))
        .collect()
}

fn check(m: &Memories, text: &str, want_warnings: &[&str]) {
    assert_eq!(m.text(), text);
    assert_eq!(warnings(m), want_warnings);
    assert!(!m.text().contains("SECRET"));
}

#[test]
fn user_then_project_joined_by_a_blank_line() {
    let t = Tree::new();
    t.file("home/.mewcode/memories.md", "user one\n\n")
        .file("project/.mewcode/memories.md", "project one\n");
    let m = t.load();
    check(&m, "user one\n\nproject one", &[]);
    let files: Vec<&str> = m.files.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(files, ["~/.mewcode/memories.md", ".mewcode/memories.md"]);
}

#[test]
fn missing_files_are_silent() {
    let t = Tree::new();
    check(&t.load(), "", &[]);
}

#[test]
fn project_memories_symlinked_outside_are_refused() {
    let t = Tree::new();
    t.symlink("elsewhere/secret.md", "project/.mewcode/memories.md");
    check(
        &t.load(),
        "",
        &["OutsideRoot: .mewcode/memories.md: refused: it resolves to a file outside the project"],
    );
}

#[test]
fn project_mewcode_folder_symlinked_outside_is_refused() {
    let t = Tree::new();
    t.file("elsewhere/dot/memories.md", "SECRET\n")
        .symlink("elsewhere/dot", "project/.mewcode");
    check(
        &t.load(),
        "",
        &["OutsideRoot: .mewcode/memories.md: refused: it resolves to a file outside the project"],
    );
}

#[test]
fn symlink_inside_the_project_is_followed() {
    let t = Tree::new();
    t.file("project/notes/mem.md", "kept\n")
        .symlink("project/notes/mem.md", "project/.mewcode/memories.md");
    check(&t.load(), "kept", &[]);
}

#[test]
fn user_memories_stay_inside_mewcode() {
    let t = Tree::new();
    t.symlink("elsewhere/secret.md", "home/.mewcode/memories.md");
    check(
        &t.load(),
        "",
        &["OutsideRoot: ~/.mewcode/memories.md: refused: it resolves to a file outside ~/.mewcode"],
    );
    // A ~/.mewcode that is itself a symlink (dotfiles) is the user's folder: allowed.
    let t = Tree::new();
    t.file("elsewhere/dotfiles/mewcode/memories.md", "from dotfiles\n")
        .symlink("elsewhere/dotfiles/mewcode", "home/.mewcode");
    check(&t.load(), "from dotfiles", &[]);
}

#[test]
fn dangling_symlink_is_reported() {
    let t = Tree::new();
    t.symlink("elsewhere/nothing.md", "project/.mewcode/memories.md");
    check(
        &t.load(),
        "",
        &["NotFound: .mewcode/memories.md: not read: it is a symlink to a missing file"],
    );
}

#[test]
fn directory_and_fifo_are_refused_without_blocking() {
    let t = Tree::new();
    std::fs::create_dir_all(t.path("home/.mewcode/memories.md")).unwrap();
    std::fs::create_dir_all(t.path("project/.mewcode")).unwrap();
    let fifo = t.path("project/.mewcode/memories.md");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let (tx, rx) = mpsc::channel();
    let root: &Path = t.dir.path();
    let options = MemoryOptions::new(root.join("project"), root.join("home"));
    std::thread::spawn(move || tx.send(load_memories(&options).unwrap()).unwrap());
    let m = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("reading a FIFO blocked");
    check(
        &m,
        "",
        &[
            "NotAFile: ~/.mewcode/memories.md: refused: a directory",
            "NotAFile: .mewcode/memories.md: refused: a FIFO",
        ],
    );
}

#[test]
fn large_file_is_cut_with_a_marker() {
    let t = Tree::new();
    t.file("project/.mewcode/memories.md", "0123456789\nabcdef\n");
    check(
        &t.load_with("project", "home", 12),
        "0123456789\na\n[mewmem: .mewcode/memories.md truncated here: 12 of 18 bytes shown]",
        &[
            "FileTooLarge: .mewcode/memories.md: truncated: 18 bytes, only the first 12 are used (the budget is 12 bytes)",
        ],
    );
}

#[test]
fn invalid_utf8_is_replaced_with_a_warning() {
    let t = Tree::new();
    std::fs::create_dir_all(t.path("project/.mewcode")).unwrap();
    std::fs::write(t.path("project/.mewcode/memories.md"), b"a\xffb\n").unwrap();
    check(
        &t.load(),
        "a\u{fffd}b",
        &["InvalidUtf8: .mewcode/memories.md: invalid UTF-8 replaced by U+FFFD"],
    );
}

#[test]
fn project_that_is_home_reads_its_file_once() {
    let t = Tree::new();
    t.file("home/.mewcode/memories.md", "once\n");
    check(
        &t.load_with("home", "home", 1024 * 1024),
        "once",
        &["AlreadyIncluded: .mewcode/memories.md: the same file was read above; not repeated"],
    );
    // The same through a symlinked project folder.
    t.symlink("home", "project-link");
    let m = t.load_with("project-link", "home", 1024 * 1024);
    assert_eq!(m.text(), "once");
    assert_eq!(m.files.len(), 1);
}

#[test]
fn byte_order_mark_is_removed() {
    let t = Tree::new();
    t.file("home/.mewcode/memories.md", "\u{feff}user\n")
        .file("project/.mewcode/memories.md", "\u{feff}\u{feff}project\n");
    // Only the first is a byte-order mark; a second one is text.
    check(&t.load(), "user\n\n\u{feff}project", &[]);
}
