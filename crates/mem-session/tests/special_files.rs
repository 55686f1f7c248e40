//! Every transcript argument is checked before it is read (issue 14): a FIFO, a device or a
//! folder is refused without blocking, a file over the size cap is refused without reading it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use mem_session::import::{MAX_TRANSCRIPT_BYTES, import_file};

/// `import_file`'s error, run on a thread so that a read that blocks fails the test.
fn error_of(path: PathBuf) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let shown = match import_file(&path) {
            Ok(s) => format!("ok: {} session(s)", s.len()),
            Err(e) => e.to_string(),
        };
        let _ = tx.send(shown);
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| "blocked (or panicked)".to_owned())
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn fifo_device_and_folder_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.jsonl");
    mkfifo(&fifo);
    let e = error_of(fifo);
    assert!(e.contains("not a regular file (a FIFO)"), "{e}");

    let e = error_of(PathBuf::from("/dev/zero"));
    assert!(e.contains("not a regular file (a device)"), "{e}");

    let link = dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let e = error_of(link);
    assert!(
        e.contains("zero.jsonl: not a regular file (a device)"),
        "{e}"
    );

    let e = error_of(dir.path().to_owned());
    assert!(e.contains("not a regular file (a directory)"), "{e}");
}

#[test]
fn a_file_over_the_cap_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    // Sparse: no disk space used, and never read.
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(MAX_TRANSCRIPT_BYTES + 1).unwrap();
    let e = error_of(big);
    assert!(e.contains("too large to read"), "{e}");
    assert!(
        e.contains(&format!("at most {MAX_TRANSCRIPT_BYTES} bytes")),
        "{e}"
    );
}
