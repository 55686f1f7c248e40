//! Reading, writing and removing one note by id (seed 000 §4's file format; SPEC: "Notes are
//! written by `mem note add` (and the MCP tool) atomically, with valid frontmatter").
//!
//! Every write passes the secret filter ([`mem_core::secrets::redact`]) over the name, the
//! description and the body; the count withheld is returned for the caller to report.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use mem_core::secrets;

use crate::error::{Error, Result};
use crate::scan::{self, MemoryDirs, Note, NoteId, Scope};

/// The four note types of the seed's frontmatter.
pub const NOTE_TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];

/// The longest file name stem [`file_name_for`] makes, in characters.
pub const MAX_STEM_CHARS: usize = 60;

/// Reads the note `id` (whole frontmatter parsed, body at most [`scan::MAX_NOTE_BYTES`]).
/// Errors: [`Error::UnknownScope`], [`Error::NotFound`], [`Error::NotRegular`], and an
/// [`Error::InvalidNote`] for a binary or non-UTF-8 file.
pub fn read_note(dirs: &MemoryDirs, id: &NoteId) -> Result<Note> {
    let path = dirs.path_of(id)?;
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NotFound {
                id: id.to_string(),
                path,
            });
        }
        Err(e) => return Err(Error::io("cannot read", path, e)),
        Ok(m) if !m.is_file() => return Err(Error::NotRegular { path }),
        Ok(_) => {}
    }
    scan::read_note(id.scope, &path, &id.file_name)
        .map(|(note, _)| note)
        .map_err(|message| Error::InvalidNote(format!("{}: {message}", path.display())))
}

/// A note to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNote {
    /// `name:` (one line; whitespace runs collapse to one space). Also makes the file name.
    pub name: String,
    /// `description:` (one line, like the name).
    pub description: String,
    /// `type:`: one of [`NOTE_TYPES`].
    pub kind: String,
    /// The Markdown body.
    pub body: String,
}

/// What [`write_note`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The new note's id.
    pub id: NoteId,
    /// Its file.
    pub path: PathBuf,
    /// How many secrets the filter withheld (replaced by `[REDACTED]`).
    pub withheld: usize,
    /// `true` when an existing file was replaced (only with `overwrite`).
    pub replaced: bool,
}

/// A safe file name for a note called `name`: lowercase letters and digits (any script) kept,
/// every other run of characters one `_`, at most [`MAX_STEM_CHARS`] characters, then `.md`;
/// `note.md` when nothing is left. E.g. `Testing: use nextest!` → `testing_use_nextest.md`.
pub fn file_name_for(name: &str) -> String {
    let mut stem = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            stem.push(c);
        } else if !stem.ends_with('_') && !stem.is_empty() {
            stem.push('_');
        }
    }
    let mut stem: String = stem.chars().take(MAX_STEM_CHARS).collect();
    while stem.ends_with('_') {
        stem.pop();
    }
    if stem.is_empty() || stem.eq_ignore_ascii_case("memory") {
        stem.insert_str(0, "note");
    }
    format!("{stem}.md")
}

/// The file text of a note: a frontmatter with `name`, `description`, `type` as YAML
/// double-quoted strings (so any text round-trips), then the body ending with one newline.
pub fn render_note(note: &NewNote) -> String {
    let mut text = format!(
        "---\nname: {}\ndescription: {}\ntype: {}\n---\n\n",
        quote(&one_line(&note.name)),
        quote(&one_line(&note.description)),
        note.kind
    );
    let body = note.body.trim_matches('\n');
    if !body.is_empty() {
        text.push_str(body);
        text.push('\n');
    }
    text
}

/// A YAML double-quoted scalar: `\\` and `"` escaped, and every character YAML does not allow
/// raw or that a reader could take for a line break (C0/C1 controls, DEL, U+2028/U+2029, BOM,
/// U+FFFE/U+FFFF) as `\uXXXX`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes `note` into the directory of `scope` (created when missing) as
/// [`file_name_for`]`(name)`, atomically: a temporary file in the same directory, fsync, then a
/// link to the final name that fails when the name exists (so a concurrent writer is never
/// overwritten), or a rename over it with `overwrite`; then the directory is fsynced. The
/// folder's lock ([`lock_notes`]) is held meanwhile.
///
/// Name, description and body pass [`secrets::redact`] first. Errors: [`Error::InvalidNote`]
/// (empty name or description, a type not in [`NOTE_TYPES`]), [`Error::Exists`] without
/// `overwrite`, [`Error::UnknownScope`], I/O errors naming the path.
pub fn write_note(
    dirs: &MemoryDirs,
    scope: Scope,
    note: &NewNote,
    overwrite: bool,
) -> Result<Written> {
    if !NOTE_TYPES.contains(&note.kind.as_str()) {
        return Err(Error::InvalidNote(format!(
            "type {:?} is not one of {}",
            note.kind,
            NOTE_TYPES.join(", ")
        )));
    }
    let name = secrets::redact(&one_line(&note.name));
    let description = secrets::redact(&one_line(&note.description));
    let body = secrets::redact(&note.body);
    if name.text.is_empty() {
        return Err(Error::InvalidNote("the name is empty".to_owned()));
    }
    if description.text.is_empty() {
        return Err(Error::InvalidNote(
            "the description is empty (recall selects on it)".to_owned(),
        ));
    }
    let withheld = name.withheld() + description.withheld() + body.withheld();
    let clean = NewNote {
        name: name.text,
        description: description.text,
        kind: note.kind.clone(),
        body: body.text,
    };
    let file_name = file_name_for(&clean.name);
    let id = NoteId::new(scope, file_name);
    let path = dirs.path_of(&id)?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    let _lock = lock_notes(&dir, NOTES_LOCK_TIMEOUT)?;
    let replaced = write_atomic(&dir, &path, render_note(&clean).as_bytes(), overwrite)?;
    Ok(Written {
        id,
        path,
        withheld,
        replaced,
    })
}

/// The lock file of a notes folder: every note writer (`write_note`, `remove_note`, a
/// checkpoint restore, an archive import) holds an exclusive flock on it while it changes the
/// folder, so a restore putting notes back never interleaves with `mem note add`.
pub const NOTES_LOCK_FILE: &str = ".notes.lock";

/// How long a note writer waits for the folder's lock (a restore holds it for its whole apply).
pub const NOTES_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// An exclusive lock on a notes folder, released when dropped.
#[derive(Debug)]
pub struct NotesLock {
    _file: File,
}

/// Takes the exclusive lock of the notes folder `dir` ([`NOTES_LOCK_FILE`]; the folder is
/// created when missing), waiting up to `timeout`.
///
/// Errors: [`Error::Locked`] after `timeout`; I/O errors naming the lock file.
pub fn lock_notes(dir: &Path, timeout: std::time::Duration) -> Result<NotesLock> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let path = dir.join(NOTES_LOCK_FILE);
    match mem_core::lockfile::lock_exclusive(&path, timeout) {
        Ok(file) => Ok(NotesLock { _file: file }),
        Err(mem_core::lockfile::LockFailure::TimedOut { waited }) => Err(Error::Locked {
            path,
            waited_ms: waited.as_millis() as u64,
        }),
        Err(mem_core::lockfile::LockFailure::Io { action, source }) => Err(Error::io(
            if action == "open" {
                "cannot open"
            } else {
                "cannot lock"
            },
            &path,
            source,
        )),
    }
}

/// Writes `bytes` to `path` through a temp file in `dir`. Returns whether a file was replaced.
fn write_atomic(dir: &Path, path: &Path, bytes: &[u8], overwrite: bool) -> Result<bool> {
    let existed = path.exists();
    if existed && !overwrite {
        return Err(Error::Exists {
            path: path.to_owned(),
        });
    }
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io("cannot create", &tmp, e))?;
        file.write_all(bytes)
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        file.sync_all()
            .map_err(|e| Error::io("cannot sync", &tmp, e))?;
        if overwrite {
            std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot replace", path, e))?;
        } else {
            match std::fs::hard_link(&tmp, path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(Error::Exists {
                        path: path.to_owned(),
                    });
                }
                Err(e) => return Err(Error::io("cannot write", path, e)),
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&tmp);
    result?;
    sync_dir(dir);
    Ok(existed)
}

/// fsync a directory so a rename or unlink in it is durable (best effort: not every platform
/// can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Removes the note `id` (its file only; the directory stays). Returns the removed path.
/// Errors: [`Error::UnknownScope`], [`Error::NotFound`], [`Error::NotRegular`] (a directory or
/// FIFO named like a note is never removed), I/O errors naming the path.
pub fn remove_note(dirs: &MemoryDirs, id: &NoteId) -> Result<PathBuf> {
    let path = dirs.path_of(id)?;
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotFound {
            id: id.to_string(),
            path,
        }),
        Err(e) => Err(Error::io("cannot read", path, e)),
        Ok(m) if !(m.is_file() || m.file_type().is_symlink()) => Err(Error::NotRegular { path }),
        Ok(_) => {
            let _lock = match path.parent() {
                Some(dir) => Some(lock_notes(dir, NOTES_LOCK_TIMEOUT)?),
                None => None,
            };
            std::fs::remove_file(&path).map_err(|e| Error::io("cannot remove", &path, e))?;
            if let Some(dir) = path.parent() {
                sync_dir(dir);
            }
            Ok(path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_name(name: &str, expected: &str) {
        assert_eq!(file_name_for(name), expected, "{name:?}");
    }

    #[test]
    fn file_names_are_safe() {
        check_name("Testing: use nextest!", "testing_use_nextest.md");
        check_name("../../etc/passwd", "etc_passwd.md");
        check_name("测试 命令", "测试_命令.md");
        check_name("???", "note.md");
        check_name("MEMORY", "notememory.md");
        assert_eq!(
            file_name_for(&"a".repeat(500)).chars().count(),
            MAX_STEM_CHARS + 3
        );
    }

    #[test]
    fn rendered_frontmatter_parses_back() {
        let note = NewNote {
            name: "Odd: \"quotes\" # and\n newlines".to_owned(),
            description: "'single' — 中文: yes".to_owned(),
            kind: "feedback".to_owned(),
            body: "Body line.\n".to_owned(),
        };
        let (file, warning) = crate::frontmatter::parse(&render_note(&note));
        assert_eq!(warning, None);
        assert_eq!(
            file.frontmatter.name.as_deref(),
            Some("Odd: \"quotes\" # and newlines")
        );
        assert_eq!(
            file.frontmatter.description.as_deref(),
            Some("'single' — 中文: yes")
        );
        assert_eq!(file.frontmatter.kind.as_deref(), Some("feedback"));
        assert_eq!(file.body, "\nBody line.");
    }
}
