//! The scan cache: a cached scan is the plain scan, whatever changed in between (content, size,
//! times, deletions, a damaged cache file), and the cache lives where its notes' owner is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mem_recall::cache::{CACHE_FILE, clear_memory};
use mem_recall::{MemoryDir, MemoryDirs, Scope, scan, scan_cached};

const OLD: u64 = 1_600_000_000;

fn set_mtime(path: &Path, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

fn write_note(dir: &Path, file: &str, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!("---\nname: {name}\ndescription: about {name}\ntype: project\n---\n{body}\n"),
    )
    .unwrap();
    set_mtime(&path, OLD);
    path
}

/// A project and a home with notes, broken files and one extra (Claude Code style) folder.
fn layout() -> (tempfile::TempDir, MemoryDirs) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    let home = tmp.path().join("h");
    let extra = tmp.path().join("claude/memory");
    let pm = project.join(".mewcode/memory");
    write_note(&pm, "testing.md", "Testing", "Run cargo nextest run.");
    write_note(
        &pm,
        "deploy.md",
        "Deploy",
        "Tag a release; CI publishes it.",
    );
    std::fs::write(pm.join("broken.md"), "---\nname: [unclosed\n---\nbody\n").unwrap();
    set_mtime(&pm.join("broken.md"), OLD);
    std::fs::write(pm.join("binary.md"), b"\x00\x01binary").unwrap();
    let mut big = "---\nname: Big\ndescription: large\n---\n".to_owned();
    big.push_str(&"lorem ipsum dolor sit amet\n".repeat(2_000));
    std::fs::write(pm.join("big.md"), big).unwrap();
    set_mtime(&pm.join("big.md"), OLD);
    write_note(
        &home.join(".mewcode/memory"),
        "style.md",
        "Style",
        "snake_case; 测试命令用中文。",
    );
    write_note(&extra, "user_role.md", "Role", "A data scientist.");
    let dirs = MemoryDirs::standard(&project, &home, &[extra]);
    (tmp, dirs)
}

#[test]
fn a_cached_scan_is_the_plain_scan_cold_warm_and_from_disk() {
    let (tmp, dirs) = layout();
    let plain = scan(&dirs);
    assert_eq!(plain.notes.len(), 6);
    assert_eq!(scan_cached(&dirs), plain, "cold");
    assert_eq!(scan_cached(&dirs), plain, "warm, in memory");
    clear_memory();
    assert_eq!(scan_cached(&dirs), plain, "warm, from the cache files");
    // Where the caches are: the project's notes under the project, the user's and the extra
    // folder's under the user's `.mewcode`; nothing in any memory folder.
    let project_cache = tmp.path().join("p/.mewcode/cache").join(CACHE_FILE);
    let user_cache = tmp.path().join("h/.mewcode/cache").join(CACHE_FILE);
    assert!(project_cache.is_file() && user_cache.is_file());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("p/.mewcode/cache/.gitignore")).unwrap(),
        "# mewmem's cache\n*\n"
    );
    let extra_caches: Vec<_> = std::fs::read_dir(tmp.path().join("h/.mewcode/cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("recall-") && n != CACHE_FILE)
        .collect();
    assert_eq!(extra_caches.len(), 1, "{extra_caches:?}");
    let project_text = std::fs::read_to_string(&project_cache).unwrap();
    assert!(project_text.contains("testing.md") && !project_text.contains("style.md"));
    assert!(
        !project_text.contains("big.md"),
        "large notes are not cached"
    );
    assert!(
        !project_text.contains("binary.md"),
        "skipped files are not cached"
    );
    for dir in &dirs.dirs {
        for e in std::fs::read_dir(&dir.path).unwrap() {
            let name = e.unwrap().file_name();
            assert!(
                !name.to_string_lossy().contains("recall-"),
                "{name:?} in {}",
                dir.path.display()
            );
        }
    }
}

#[test]
fn changes_are_seen_even_with_the_same_size_and_mtime() {
    let (tmp, dirs) = layout();
    scan_cached(&dirs);
    let pm = tmp.path().join("p/.mewcode/memory");
    // Same length, same mtime: the change time (and the plain scan) tell.
    let before = std::fs::read_to_string(pm.join("testing.md")).unwrap();
    let after = before.replace("nextest", "testnex");
    assert_eq!(before.len(), after.len());
    std::fs::write(pm.join("testing.md"), &after).unwrap();
    set_mtime(&pm.join("testing.md"), OLD);
    // A new note, a deleted note, a note changed to another size.
    write_note(&pm, "new.md", "New", "fresh");
    std::fs::remove_file(pm.join("deploy.md")).unwrap();
    let style = tmp.path().join("h/.mewcode/memory/style.md");
    std::fs::write(&style, "---\nname: Style 2\n---\nshorter\n").unwrap();
    set_mtime(&style, OLD);
    for _ in 0..2 {
        let cached = scan_cached(&dirs);
        assert_eq!(cached, scan(&dirs));
        let testing = cached
            .notes
            .iter()
            .find(|n| n.id.file_name == "testing.md")
            .unwrap();
        assert!(testing.body.contains("testnex"));
        assert!(cached.notes.iter().all(|n| n.id.file_name != "deploy.md"));
        clear_memory();
    }
    let project_text =
        std::fs::read_to_string(tmp.path().join("p/.mewcode/cache").join(CACHE_FILE)).unwrap();
    assert!(!project_text.contains("deploy.md"), "a deleted note leaves");
}

#[test]
fn a_note_just_written_is_read_again_until_it_settles() {
    let (tmp, dirs) = layout();
    let pm = tmp.path().join("p/.mewcode/memory");
    let fresh = pm.join("fresh.md");
    std::fs::write(&fresh, "---\nname: Fresh\n---\nv1\n").unwrap();
    assert_eq!(scan_cached(&dirs), scan(&dirs));
    let text =
        std::fs::read_to_string(tmp.path().join("p/.mewcode/cache").join(CACHE_FILE)).unwrap();
    assert!(
        !text.contains("fresh.md"),
        "modified within the racy window"
    );
    assert!(text.contains("testing.md"));
}

#[test]
fn a_damaged_or_foreign_cache_is_ignored_and_rebuilt() {
    let (tmp, dirs) = layout();
    let plain = scan(&dirs);
    let cache = tmp.path().join("p/.mewcode/cache").join(CACHE_FILE);
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    for junk in [
        "not json".to_owned(),
        String::new(),
        "{\"version\":1}".to_owned(),
        // Another folder's cache (a moved project) naming the same files.
        {
            scan_cached(&dirs);
            std::fs::read_to_string(&cache)
                .unwrap()
                .replace("\"dir\":\"", "\"dir\":\"/elsewhere")
        },
        // A future format.
        {
            scan_cached(&dirs);
            std::fs::read_to_string(&cache)
                .unwrap()
                .replacen("\"version\":1", "\"version\":99", 1)
        },
    ] {
        std::fs::write(&cache, &junk).unwrap();
        clear_memory();
        assert_eq!(scan_cached(&dirs), plain, "with {junk:.40}");
        let rebuilt = std::fs::read_to_string(&cache).unwrap();
        assert!(rebuilt.contains("testing.md") && rebuilt.starts_with("{\"version\":1,"));
    }
}

#[test]
fn a_folder_without_a_mewcode_parent_is_cached_in_the_process_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    write_note(&dir, "a.md", "A", "alpha");
    let dirs = MemoryDirs {
        dirs: vec![MemoryDir {
            scope: Scope::Extra(0),
            path: dir.clone(),
        }],
    };
    assert_eq!(scan_cached(&dirs), scan(&dirs));
    assert_eq!(scan_cached(&dirs), scan(&dirs));
    let files: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["notes"]);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn extra_folders_alone_get_no_file_near_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x/.mewcode/memory");
    write_note(&dir, "a.md", "A", "alpha");
    let dirs = MemoryDirs {
        dirs: vec![MemoryDir {
            scope: Scope::Extra(0),
            path: dir.clone(),
        }],
    };
    assert_eq!(scan_cached(&dirs), scan(&dirs));
    assert!(!tmp.path().join("x/.mewcode/cache").exists());
}
