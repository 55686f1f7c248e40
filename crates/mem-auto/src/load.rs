//! Reading the auto-memory files `~/.mewcode/memories.md` and `<project>/.mewcode/memories.md`
//! for the `# autoMemory` section (seed §6), with the same safety rules as instruction files.
//!
//! A cloned repository is untrusted: its `.mewcode/memories.md` (or its `.mewcode` folder) may be
//! a symlink to any file of the machine, and whatever is read goes to the model. So each file is
//! resolved (`..` and symlinks) and must stay inside its root: the project root for the project
//! file, `~/.mewcode` for the user's. It is then read with [`read_capped`] (regular files only,
//! non-blocking, at most a byte budget, a marker where it was cut). Every refusal is a
//! [`Warning`]; nothing here is an error.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use mem_instructions::{ReadError, Scope, Warning, WarningKind, read_capped};

use crate::error::{Error, Result};

/// Default budget for one `memories.md`, in bytes (1 MiB).
pub const DEFAULT_MAX_MEMORY_BYTES: usize = 1024 * 1024;

/// The file name of the auto memories in `<project>/.mewcode/` and `<home>/.mewcode/`.
pub const MEMORIES_FILE: &str = "memories.md";

/// Where to read memories from. Built by the caller from its configuration.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    /// The project root: its file is `<root>/.mewcode/memories.md`.
    pub project_root: PathBuf,
    /// The user's home directory: the user's file is `<home>/.mewcode/memories.md`.
    pub home: PathBuf,
    /// At most this many bytes of each file are used (default [`DEFAULT_MAX_MEMORY_BYTES`]).
    pub max_bytes: usize,
}

impl MemoryOptions {
    /// Options with the default budget.
    pub fn new(project_root: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        MemoryOptions {
            project_root: project_root.into(),
            home: home.into(),
            max_bytes: DEFAULT_MAX_MEMORY_BYTES,
        }
    }
}

/// One `memories.md` that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// The file as displayed: `~/.mewcode/memories.md` or `.mewcode/memories.md`.
    pub file: String,
    /// The path it was looked for at (`<home>/.mewcode/memories.md`, `<root>/.mewcode/...`).
    pub path: PathBuf,
    /// The path it resolves to (symlinks resolved), the one that was read.
    pub canonical: PathBuf,
    /// Whose file it is.
    pub scope: Scope,
    /// The text as read: a leading byte-order mark removed, invalid UTF-8 replaced by U+FFFD,
    /// and when the file is larger than the budget its beginning followed by a line
    /// `[mewmem: <file> truncated here: N of M bytes shown]`.
    pub text: String,
}

/// The memories read for one project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memories {
    /// The files read, the user's first; a file reached twice (project = home) appears once.
    pub files: Vec<MemoryFile>,
    /// Everything refused, cut or skipped, in the order met.
    pub warnings: Vec<Warning>,
}

impl Memories {
    /// The body of the `# autoMemory` section: the non-blank files, each without trailing
    /// whitespace, joined by a blank line. Empty when there are none (the section is omitted).
    pub fn text(&self) -> String {
        self.files
            .iter()
            .map(|f| f.text.trim_end())
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// Reads `<home>/.mewcode/memories.md` then `<root>/.mewcode/memories.md`.
///
/// A missing file is skipped silently. A file that resolves outside its root (the project root,
/// or `~/.mewcode` for the user's), is not a regular file, cannot be read, or is the same file as
/// the one already read, is skipped with a [`Warning`]; one larger than `max_bytes` is cut with a
/// marker and a warning.
///
/// # Errors
/// [`Error::ProjectRoot`] when `options.project_root` does not exist.
pub fn load_memories(options: &MemoryOptions) -> Result<Memories> {
    let root = options
        .project_root
        .canonicalize()
        .map_err(|source| Error::ProjectRoot {
            path: options.project_root.clone(),
            source,
        })?;
    let user_dir = options.home.join(".mewcode");
    let places = [
        (
            user_dir.join(MEMORIES_FILE),
            user_dir.canonicalize().ok(),
            Scope::User,
        ),
        (
            root.join(".mewcode").join(MEMORIES_FILE),
            Some(root),
            Scope::Project,
        ),
    ];
    let mut out = Memories::default();
    let mut seen = HashSet::new();
    for (path, boundary, scope) in places {
        if let Some(file) = read_one(
            path,
            boundary.as_deref(),
            scope,
            options.max_bytes,
            &seen,
            &mut out.warnings,
        ) {
            seen.insert(file.canonical.clone());
            out.files.push(file);
        }
    }
    Ok(out)
}

fn read_one(
    path: PathBuf,
    boundary: Option<&Path>,
    scope: Scope,
    max_bytes: usize,
    seen: &HashSet<PathBuf>,
    warnings: &mut Vec<Warning>,
) -> Option<MemoryFile> {
    let file = match scope {
        Scope::User => format!("~/.mewcode/{MEMORIES_FILE}"),
        Scope::Project => format!(".mewcode/{MEMORIES_FILE}"),
    };
    let mut warn = |kind: WarningKind, message: String| {
        tracing::debug!(file, ?kind, "{message}");
        warnings.push(Warning {
            file: file.clone(),
            line: None,
            kind,
            message,
        });
    };
    let canonical = match path.canonicalize() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Nothing there is normal; a symlink to nothing is worth a word.
            if std::fs::symlink_metadata(&path).is_ok() {
                warn(
                    WarningKind::NotFound,
                    "not read: it is a symlink to a missing file".to_owned(),
                );
            }
            return None;
        }
        Err(e) => {
            warn(WarningKind::Unreadable, format!("cannot resolve: {e}"));
            return None;
        }
    };
    if !boundary.is_some_and(|b| canonical.starts_with(b)) {
        let place = match scope {
            Scope::Project => "the project",
            Scope::User => "~/.mewcode",
        };
        warn(
            WarningKind::OutsideRoot,
            format!("refused: it resolves to a file outside {place}"),
        );
        return None;
    }
    if seen.contains(&canonical) {
        warn(
            WarningKind::AlreadyIncluded,
            "the same file was read above; not repeated".to_owned(),
        );
        return None;
    }
    let read = match read_capped(&canonical, max_bytes) {
        Ok(r) => r,
        Err(ReadError::NotAFile { kind }) => {
            warn(WarningKind::NotAFile, format!("refused: {kind}"));
            return None;
        }
        Err(e) => {
            warn(WarningKind::Unreadable, format!("cannot be read: {e}"));
            return None;
        }
    };
    if read.lossy {
        warn(
            WarningKind::InvalidUtf8,
            "invalid UTF-8 replaced by U+FFFD".to_owned(),
        );
    }
    let mut text = read.text;
    if read.truncated {
        let kept = text.len();
        warn(
            WarningKind::FileTooLarge,
            format!(
                "truncated: {} bytes, only the first {kept} are used (the budget is {max_bytes} bytes)",
                read.size
            ),
        );
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[mewmem: {file} truncated here: {kept} of {} bytes shown]\n",
            read.size
        ));
    }
    Some(MemoryFile {
        file,
        path,
        canonical,
        scope,
        text,
    })
}
