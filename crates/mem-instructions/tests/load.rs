//! The loader on real directory trees: precedence, includes, and the safety rules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use mem_instructions::{Instructions, Limits, LoadOptions, load};

/// A temp dir with `project/` and `home/`.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Tree { dir }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `content` at `rel` (relative to the temp dir), creating folders.
    fn file(&self, rel: &str, content: &str) -> &Tree {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    fn symlink(&self, target: &Path, rel: &str) -> &Tree {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }

    fn options(&self) -> LoadOptions {
        LoadOptions::new(self.path("project"), self.path("home"))
    }

    fn load(&self) -> Instructions {
        load(&self.options()).unwrap()
    }
}

/// The warnings as `file:line: kind`.
fn warnings(ins: &Instructions) -> Vec<String> {
    ins.warnings
        .iter()
        .map(|w| match w.line {
            Some(l) => format!("{}:{l}: {:?}", w.file, w.kind),
            None => format!("{}: {:?}", w.file, w.kind),
        })
        .collect()
}

fn check(ins: &Instructions, text: &str, want_warnings: &[&str]) {
    assert_eq!(ins.text, text);
    assert_eq!(warnings(ins), want_warnings, "{:#?}", ins.warnings);
    // The parts are the merged text, cut where files change (joined by the seed's separator).
    let mut joined = String::new();
    for (i, p) in ins.parts.iter().enumerate() {
        if i > 0 && p.top != ins.parts[i - 1].top {
            joined.push_str("\n---\n");
        }
        joined.push_str(&p.text);
    }
    assert_eq!(joined, ins.text);
}

#[test]
fn seed_places_in_priority_order_joined_by_rule() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", "root\n")
        .file("project/.mewcode/MEWCODE.md", "dot\n")
        .file("home/.mewcode/MEWCODE.md", "user");
    let ins = t.load();
    check(&ins, "root\n\n---\ndot\n\n---\nuser", &[]);
    let files: Vec<_> = ins.parts.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(
        files,
        ["MEWCODE.md", ".mewcode/MEWCODE.md", "~/.mewcode/MEWCODE.md"]
    );
}

#[test]
fn a_skipped_file_is_passed_over_as_if_absent() {
    let t = Tree::new();
    t.file("project/AGENTS.md", "agents\n")
        .file("project/CLAUDE.md", "claude\n")
        .file("project/.mewcode/AGENTS.md", "dot agents\n");
    let mut opts = t.options();
    opts.skip = vec![t.path("project/AGENTS.md")];
    // The next name present in the same place is loaded, the skipped file shadows nothing and
    // is not warned about; the same name elsewhere is still read.
    check(&load(&opts).unwrap(), "claude\n\n---\ndot agents\n", &[]);
    // Compared after resolving symlinks: a path through a link names the same file.
    t.symlink(&t.path("project"), "link");
    opts.skip = vec![t.path("link/AGENTS.md"), t.path("project/CLAUDE.md")];
    check(&load(&opts).unwrap(), "dot agents\n", &[]);
    // A skip entry that does not exist changes nothing.
    opts.skip = vec![t.path("project/NOPE.md")];
    check(
        &load(&opts).unwrap(),
        "agents\n\n---\ndot agents\n",
        &["CLAUDE.md: Shadowed"],
    );
}

#[test]
fn first_existing_name_wins_in_each_place_and_names_are_configurable() {
    let t = Tree::new();
    t.file("project/AGENTS.md", "agents\n")
        .file("project/CLAUDE.md", "claude\n");
    // The file that loses is named, so a user knows it was not read.
    check(&t.load(), "agents\n", &["CLAUDE.md: Shadowed"]);
    t.file("project/MEWCODE.md", "mewcode\n");
    check(
        &t.load(),
        "mewcode\n",
        &["AGENTS.md: Shadowed", "CLAUDE.md: Shadowed"],
    );
    let mut opts = t.options();
    opts.names = vec!["CLAUDE.md".into(), "AGENTS.md".into()];
    check(&load(&opts).unwrap(), "claude\n", &["AGENTS.md: Shadowed"]);
    opts.names = vec!["NOPE.md".into()];
    let ins = load(&opts).unwrap();
    check(&ins, "", &[]);
    assert!(ins.files.is_empty());
}

#[test]
fn standalone_include_replaces_its_line_inline_reference_is_followed_after_its_line() {
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "a\n@include docs/x.md\nb see @docs/y.txt.\nc\n",
    )
    .file("project/docs/x.md", "X1\nX2")
    .file("project/docs/y.txt", "Y\n");
    let ins = t.load();
    check(&ins, "a\nX1\nX2\nb see @docs/y.txt.\nY\nc\n", &[]);
    let summary: Vec<_> = ins
        .parts
        .iter()
        .map(|p| {
            let via: Vec<String> = p.via.iter().map(ToString::to_string).collect();
            format!(
                "{} {}-{} via [{}]",
                p.file,
                p.lines.0,
                p.lines.1,
                via.join(" > ")
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            "MEWCODE.md 1-1 via []",
            "docs/x.md 1-2 via [MEWCODE.md:2]",
            "MEWCODE.md 3-3 via []",
            "docs/y.txt 1-1 via [MEWCODE.md:3]",
            "MEWCODE.md 4-4 via []",
        ]
    );
}

#[test]
fn includes_resolve_from_the_including_files_folder() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", "@docs/a.md\n")
        .file("project/docs/a.md", "A\n@sub/b.md\n@../top.md\n")
        .file("project/docs/sub/b.md", "B\n")
        .file("project/top.md", "T\n");
    check(&t.load(), "A\nB\nT\n", &[]);
}

#[test]
fn nesting_stops_at_depth_five() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", "0\n@1.md\n");
    for i in 1..=7 {
        t.file(&format!("project/{i}.md"), &format!("{i}\n@{}.md\n", i + 1));
    }
    check(&t.load(), "0\n1\n2\n3\n4\n5\n@6.md\n", &["5.md:2: TooDeep"]);
}

#[test]
fn cycles_and_repeats_are_not_followed() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", "top @MEWCODE.md\n@a.md\n@b.md\n")
        .file("project/a.md", "A\n@b.md\n")
        .file("project/b.md", "B\n@a.md\n");
    check(
        &t.load(),
        "top @MEWCODE.md\nA\nB\n@a.md\n@b.md\n",
        &[
            "MEWCODE.md:1: Cycle",
            "b.md:2: Cycle",
            "MEWCODE.md:3: AlreadyIncluded",
        ],
    );
}

#[test]
fn missing_and_empty_includes_warn_with_file_and_line() {
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "x\n@include nope.md\n@import \"\"\nsee @gone.md\n",
    );
    let ins = t.load();
    check(
        &ins,
        "x\n@include nope.md\n@import \"\"\nsee @gone.md\n",
        &[
            "MEWCODE.md:2: NotFound",
            "MEWCODE.md:3: MissingPath",
            "MEWCODE.md:4: NotFound",
        ],
    );
    assert_eq!(
        ins.warnings[0].to_string(),
        "MEWCODE.md:2: @include nope.md: not found"
    );
}

#[test]
fn dot_dot_escape_is_refused() {
    let t = Tree::new();
    t.file("secret.md", "SECRET\n")
        .file(
            "project/MEWCODE.md",
            "@include ../secret.md\n@docs/../../secret.md\n",
        )
        .file("project/docs/keep", "");
    let ins = t.load();
    check(
        &ins,
        "@include ../secret.md\n@docs/../../secret.md\n",
        &["MEWCODE.md:1: OutsideRoot", "MEWCODE.md:2: OutsideRoot"],
    );
    assert_eq!(
        ins.warnings[0].to_string(),
        "MEWCODE.md:1: @include ../secret.md: refused: resolves outside the project"
    );
}

#[test]
fn absolute_path_is_refused_even_inside_the_project() {
    let t = Tree::new();
    t.file("project/inside.md", "IN\n");
    let abs = t.path("project/inside.md");
    t.file(
        "project/MEWCODE.md",
        &format!("@include {}\n@/etc/passwd\n", abs.display()),
    );
    let ins = t.load();
    assert_eq!(
        warnings(&ins),
        ["MEWCODE.md:1: AbsolutePath", "MEWCODE.md:2: AbsolutePath"]
    );
    assert!(
        !ins.text.contains("IN\n") && !ins.text.contains("root:"),
        "{}",
        ins.text
    );
}

#[test]
fn symlink_pointing_outside_is_refused() {
    let t = Tree::new();
    t.file("outside/secret.md", "SECRET\n")
        .symlink(&t.path("outside/secret.md"), "project/link.md")
        .symlink(&t.path("outside"), "project/linkdir")
        .file("project/MEWCODE.md", "@link.md\n@linkdir/secret.md\n");
    check(
        &t.load(),
        "@link.md\n@linkdir/secret.md\n",
        &["MEWCODE.md:1: OutsideRoot", "MEWCODE.md:2: OutsideRoot"],
    );
    // A top-level project file that is a symlink to outside is refused as well.
    let t = Tree::new();
    t.file("outside.md", "SECRET\n")
        .symlink(&t.path("outside.md"), "project/AGENTS.md");
    check(&t.load(), "", &["AGENTS.md: OutsideRoot"]);
}

#[test]
fn symlink_inside_the_project_is_followed() {
    let t = Tree::new();
    t.file("project/real/r.md", "R\n")
        .symlink(&t.path("project/real/r.md"), "project/l.md")
        .file("project/MEWCODE.md", "@l.md\n");
    check(&t.load(), "R\n", &[]);
}

#[test]
fn home_paths_are_refused_in_project_files() {
    let t = Tree::new();
    t.file("home/.mewcode/x.md", "X\n")
        .file("project/MEWCODE.md", "@~/.mewcode/x.md\n@include ~/x.md\n");
    check(
        &t.load(),
        "@~/.mewcode/x.md\n@include ~/x.md\n",
        &["MEWCODE.md:1: HomePath", "MEWCODE.md:2: HomePath"],
    );
}

#[test]
fn user_file_includes_stay_inside_dot_mewcode() {
    let t = Tree::new();
    t.file("home/secret.md", "SECRET\n")
        .file("home/.mewcode/style.md", "S\n")
        .file(
            "home/.mewcode/MEWCODE.md",
            "@style.md\n@~/.mewcode/style.md\n@../secret.md\n@~/secret.md\n",
        );
    check(
        &t.load(),
        "S\n@~/.mewcode/style.md\n@../secret.md\n@~/secret.md\n",
        &[
            "~/.mewcode/MEWCODE.md:2: AlreadyIncluded",
            "~/.mewcode/MEWCODE.md:3: OutsideRoot",
            "~/.mewcode/MEWCODE.md:4: OutsideRoot",
        ],
    );
}

#[test]
fn directory_is_refused() {
    let t = Tree::new();
    t.file("project/docs/a.md", "A\n")
        .file("project/MEWCODE.md", "@include docs\n@./docs/\n");
    check(
        &t.load(),
        "@include docs\n@./docs/\n",
        &["MEWCODE.md:1: NotAFile", "MEWCODE.md:2: NotAFile"],
    );
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs `load` on another thread so a blocking read fails the test instead of hanging it.
fn load_within(opts: LoadOptions, limit: Duration) -> Instructions {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(load(&opts).unwrap());
    });
    rx.recv_timeout(limit)
        .expect("load blocked (did it open the FIFO?)")
}

#[test]
fn fifo_is_refused_without_blocking() {
    let t = Tree::new();
    mkfifo(&t.path("project/pipe.md"));
    t.file("project/MEWCODE.md", "a\n@pipe.md\nb\n");
    let ins = load_within(t.options(), Duration::from_secs(10));
    check(&ins, "a\n@pipe.md\nb\n", &["MEWCODE.md:2: NotAFile"]);
    assert_eq!(ins.warnings[0].message, "pipe.md refused: a FIFO");

    // A FIFO in place of the instruction file itself.
    let t = Tree::new();
    mkfifo(&t.path("project/MEWCODE.md"));
    let ins = load_within(t.options(), Duration::from_secs(10));
    check(&ins, "", &["MEWCODE.md: NotAFile"]);
}

#[test]
fn hundred_megabyte_file_is_capped_with_a_marker() {
    let t = Tree::new();
    let big = t.path("project/big.md");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(100 * 1024 * 1024).unwrap();
    drop(f);
    t.file("project/MEWCODE.md", "head\n@big.md\ntail\n");
    let ins = load_within(t.options(), Duration::from_secs(30));
    assert_eq!(warnings(&ins), ["big.md: FileTooLarge"]);
    assert_eq!(
        ins.warnings[0].message,
        "truncated: 104857600 bytes, only the first 131072 are used (the per-file budget is 131072 bytes)"
    );
    let marker = "\n[mewmem: big.md truncated here: 131072 of 104857600 bytes shown]\ntail\n";
    assert!(
        ins.text.ends_with(marker),
        "{:?}",
        &ins.text[ins.text.len() - 200..]
    );
    assert!(ins.text.len() < 131_072 + 200);
}

#[test]
fn multibyte_text_is_never_cut_inside_a_character() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", &"é".repeat(10));
    let mut opts = t.options();
    opts.limits = Limits {
        max_file_bytes: 5,
        ..Limits::default()
    };
    let ins = load(&opts).unwrap();
    assert_eq!(
        ins.text,
        "éé\n[mewmem: MEWCODE.md truncated here: 4 of 20 bytes shown]\n"
    );
}

#[test]
fn total_budget_cuts_then_skips() {
    let t = Tree::new();
    t.file("project/MEWCODE.md", "0123456789\n@a.md\n@b.md\n")
        .file("project/a.md", "abcdefghij\n")
        .file("project/b.md", "B\n");
    let mut opts = t.options();
    opts.limits = Limits {
        max_total_bytes: 28,
        ..Limits::default()
    };
    let ins = load(&opts).unwrap();
    check(
        &ins,
        "0123456789\nabcde\n[mewmem: a.md truncated here: 5 of 11 bytes shown]\n@b.md\n",
        &["a.md: TotalBudget", "MEWCODE.md:3: TotalBudget"],
    );
}

#[test]
fn bare_path_pointer_is_reported_not_followed() {
    let t = Tree::new();
    t.file("project/AGENTS.md", ".cursor/rules/general.mdc\n")
        .file("project/.cursor/rules/general.mdc", "rules\n");
    let ins = t.load();
    check(
        &ins,
        ".cursor/rules/general.mdc\n",
        &["AGENTS.md:1: BarePath"],
    );
    // A lone word that names no file is just text.
    let t = Tree::new();
    t.file("project/AGENTS.md", "hello\n");
    check(&t.load(), "hello\n", &[]);
}

#[test]
fn missing_project_root_is_an_error() {
    let t = Tree::new();
    let opts = LoadOptions::new(t.path("nope"), t.path("home"));
    let err = load(&opts).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot resolve the project root"),
        "{err}"
    );
}

#[test]
fn project_that_is_home_loads_its_file_once() {
    let t = Tree::new();
    t.file("home/.mewcode/MEWCODE.md", "user rules\n");
    let ins = load(&LoadOptions::new(t.path("home"), t.path("home"))).unwrap();
    check(
        &ins,
        "user rules\n",
        &["~/.mewcode/MEWCODE.md: AlreadyIncluded"],
    );
    assert_eq!(ins.files.len(), 1);
}

#[test]
fn byte_order_mark_is_not_text() {
    // A BOM before a directive: the rest of the line is the path, and no BOM is kept.
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "\u{feff}@include my notes.md\nafter\n",
    )
    .file("project/my notes.md", "\u{feff}notes\n");
    check(&t.load(), "notes\nafter\n", &[]);
    // A BOM before a fence: the fenced `@` is code, not an include.
    let t = Tree::new();
    t.file("project/MEWCODE.md", "\u{feff}```\n@x.md\n```\n")
        .file("project/x.md", "X\n");
    check(&t.load(), "```\n@x.md\n```\n", &[]);
}

/// `file:line: message` of each warning.
fn messages(ins: &Instructions) -> Vec<String> {
    ins.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn warnings_show_the_reference_as_written() {
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "@include ~/x.md\n@import \"/etc/a b.md\"\n@~/y.md\n",
    );
    assert_eq!(
        messages(&t.load()),
        [
            "MEWCODE.md:1: @include ~/x.md: refused: `~` paths are not allowed in project files",
            "MEWCODE.md:2: @import \"/etc/a b.md\": refused: absolute paths are not allowed in project files",
            "MEWCODE.md:3: @~/y.md: refused: `~` paths are not allowed in project files",
        ]
    );
}

#[test]
fn secret_bearing_files_are_refused() {
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "@./.env\n@.env.local\n@include .git/config\n@keys/server.pem\n@notes.md\n@include .npmrc\n@.env\n@ok.md\n",
    )
    .file("project/.env", "SECRET=1\n")
    .file("project/.env.local", "SECRET=2\n")
    .file("project/.git/config", "SECRET=3\n")
    .file("project/keys/server.pem", "SECRET=4\n")
    .file("project/.npmrc", "SECRET=6\n")
    .file("project/ok.md", "fine\n");
    // A harmless name that links to a secret is refused by what it resolves to; `@.env` is no
    // include (no extension) and, being denied, gets no hint to write `@./.env`.
    t.symlink(&t.path("project/.env"), "project/notes.md");
    let ins = t.load();
    assert!(!ins.text.contains("SECRET"), "{}", ins.text);
    assert!(ins.text.ends_with("fine\n"));
    assert_eq!(
        messages(&ins),
        [
            "MEWCODE.md:1: @./.env: refused: `.env*` files may hold secrets and are never included",
            "MEWCODE.md:2: @.env.local: refused: `.env*` files may hold secrets and are never included",
            "MEWCODE.md:3: @include .git/config: refused: `.git/` files may hold secrets and are never included",
            "MEWCODE.md:4: @keys/server.pem: refused: `*.pem` files may hold secrets and are never included",
            "MEWCODE.md:5: @notes.md: refused: `.env*` files may hold secrets and are never included",
            "MEWCODE.md:6: @include .npmrc: refused: `.npmrc` files may hold secrets and are never included",
        ]
    );
}

#[test]
fn at_words_that_name_a_folder_or_extensionless_file_are_warned() {
    let t = Tree::new();
    t.file(
        "project/MEWCODE.md",
        "See @docs/ and @Makefile.\nThanks @someone, @scope/package and `@docs/` in code.\n",
    )
    .file("project/docs/a.md", "A\n")
    .file("project/Makefile", "all:\n");
    let ins = t.load();
    assert_eq!(
        ins.text,
        "See @docs/ and @Makefile.\nThanks @someone, @scope/package and `@docs/` in code.\n"
    );
    assert_eq!(
        messages(&ins),
        [
            "MEWCODE.md:1: @docs/: not included: a folder is not included; name its files (`@dir/file.md`)",
            "MEWCODE.md:1: @Makefile: not included: a path without an extension is not an include; write `@./Makefile` to include it",
        ]
    );
}
