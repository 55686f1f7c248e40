//! Loading the instruction files of a project and expanding their includes (seed §5).

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, ReadError, Result};
use crate::parse::{IncludeRef, NearMiss, scan};
use crate::read::read_capped;

/// The file names looked for by default, in order of preference: the seed's `MEWCODE.md`, then
/// the names real repositories use.
pub const DEFAULT_NAMES: [&str; 3] = ["MEWCODE.md", "AGENTS.md", "CLAUDE.md"];

/// Seed §5: includes nest at most this deep (a top-level file is depth 0).
pub const MAX_INCLUDE_DEPTH: usize = 5;

/// Default budget for one file, in bytes (128 KiB).
pub const DEFAULT_MAX_FILE_BYTES: usize = 128 * 1024;

/// Default budget for all files together, in bytes (256 KiB).
pub const DEFAULT_MAX_TOTAL_BYTES: usize = 256 * 1024;

/// Where a file comes from; decides how far its includes may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Under the project root: includes stay inside the root; `~` and absolute paths refused.
    Project,
    /// Under the user's `~/.mewcode`: includes stay inside `~/.mewcode`; `~/` is expanded.
    User,
}

/// Size limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many bytes of one file are used (default [`DEFAULT_MAX_FILE_BYTES`]).
    pub max_file_bytes: usize,
    /// At most this many bytes of all files together (default [`DEFAULT_MAX_TOTAL_BYTES`]).
    pub max_total_bytes: usize,
    /// Include nesting limit (default [`MAX_INCLUDE_DEPTH`]).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_depth: MAX_INCLUDE_DEPTH,
        }
    }
}

/// What to load. Built by the caller from its configuration; this crate reads no config itself.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The project root.
    pub project_root: PathBuf,
    /// The user's home directory: user-level files live in `<home>/.mewcode/`.
    pub home: PathBuf,
    /// File names, most preferred first. In each of the three places (`<root>/`,
    /// `<root>/.mewcode/`, `<home>/.mewcode/`) the first name that exists is loaded.
    pub names: Vec<String>,
    /// Files never loaded here, because the agent client puts them in the model's context
    /// itself (a Claude Code or Codex hook: see `mewmem::install::Agent::loads_itself`). A
    /// skipped file is passed over silently, as if absent: the next name present in its place
    /// is loaded instead, and it shadows nothing. Compared after resolving symlinks.
    pub skip: Vec<PathBuf>,
    /// Size and depth limits.
    pub limits: Limits,
}

impl LoadOptions {
    /// Options with [`DEFAULT_NAMES`] and default [`Limits`].
    pub fn new(project_root: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        LoadOptions {
            project_root: project_root.into(),
            home: home.into(),
            names: DEFAULT_NAMES.iter().map(|n| (*n).to_owned()).collect(),
            skip: Vec::new(),
            limits: Limits::default(),
        }
    }
}

/// A line that included a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The including file, as displayed (see [`Part::file`]).
    pub file: String,
    /// 1-based line of the reference.
    pub line: usize,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A piece of the merged text that comes from one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The file as displayed: relative to the project root (`AGENTS.md`, `docs/a.md`), or
    /// `~/.mewcode/...` for user-level files.
    pub file: String,
    /// The file's path on disk (symlinks resolved for included files).
    pub path: PathBuf,
    /// Where the file is.
    pub scope: Scope,
    /// Index of the top-level file this part belongs to (0 = highest priority).
    pub top: usize,
    /// The include chain from the top-level file down to the line that included this file;
    /// empty for a top-level file.
    pub via: Vec<Site>,
    /// First and last line of the file this part covers (1-based, inclusive).
    pub lines: (usize, usize),
    /// The text, as it appears in the merged text.
    pub text: String,
}

/// Why a warning was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// `@include` / `@import` without a path.
    MissingPath,
    /// A file of a later name in the same place as the one loaded (CLAUDE.md beside AGENTS.md):
    /// it is not read.
    Shadowed,
    /// The included file does not exist.
    NotFound,
    /// The path leaves the project root (or `~/.mewcode`) after resolving `..` and symlinks.
    OutsideRoot,
    /// An absolute path in a project file.
    AbsolutePath,
    /// A `~` path in a project file.
    HomePath,
    /// A directory, FIFO, socket or device.
    NotAFile,
    /// The file exists but could not be read.
    Unreadable,
    /// The file includes itself through the chain.
    Cycle,
    /// The file was already included; it is not repeated.
    AlreadyIncluded,
    /// Deeper than the nesting limit.
    TooDeep,
    /// The file is larger than the per-file budget: its beginning is used.
    FileTooLarge,
    /// The total budget was reached: the file was cut or skipped.
    TotalBudget,
    /// Invalid UTF-8 was replaced.
    InvalidUtf8,
    /// The whole file is a bare path to another file, which is not an include.
    BarePath,
    /// An `@word` that is not an include (a folder, or a path without an extension) names a
    /// folder or file on disk: the author probably meant an include.
    NotAnInclude,
    /// The file is on the deny-list of secret-bearing files ([`DENIED_NAMES`],
    /// [`DENIED_FOLDERS`]).
    Denied,
}

/// A problem found while loading: the load went on without the offending piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file the problem is in, as displayed (see [`Part::file`]).
    pub file: String,
    /// 1-based line, when the problem is on a line.
    pub line: Option<usize>,
    /// Why.
    pub kind: WarningKind,
    /// A sentence for a person.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The loaded instructions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The merged text: each top-level file with its includes expanded, the files joined with
    /// `\n---\n` (seed §5), highest priority first. Empty when no file was found.
    pub text: String,
    /// Where each piece of `text` comes from, in order.
    pub parts: Vec<Part>,
    /// The top-level files loaded, highest priority first.
    pub files: Vec<PathBuf>,
    /// Everything skipped, refused or cut, in the order met.
    pub warnings: Vec<Warning>,
}

/// Loads the instruction files described by `options`.
///
/// The project root with `..` and symlinks resolved; [`Error::ProjectRoot`] when it does not
/// exist. Every containment check compares against this path.
pub(crate) fn canonical_root(project_root: &Path) -> Result<PathBuf> {
    project_root
        .canonicalize()
        .map_err(|source| Error::ProjectRoot {
            path: project_root.to_owned(),
            source,
        })
}

/// In `<root>/`, `<root>/.mewcode/` and `<home>/.mewcode/` (in that order of priority) the first
/// of `options.names` that exists is loaded; their includes are expanded (depth-first, each file
/// at most once) and the results joined with `\n---\n`. Recoverable problems are
/// [`Warning`]s: this fails only when the project root cannot be resolved.
///
/// # Errors
/// [`Error::ProjectRoot`] when `options.project_root` does not exist.
pub fn load(options: &LoadOptions) -> Result<Instructions> {
    let root = canonical_root(&options.project_root)?;
    let user_dir_logical = options.home.join(".mewcode");
    let user_dir = user_dir_logical.canonicalize().ok();
    let mut loader = Loader {
        root: root.clone(),
        home: options.home.clone(),
        user_dir: user_dir.clone(),
        limits: options.limits,
        used: 0,
        seen: HashSet::new(),
        parts: Vec::new(),
        warnings: Vec::new(),
    };
    let places = [
        (root.clone(), Scope::Project),
        (root.join(".mewcode"), Scope::Project),
        (user_dir_logical, Scope::User),
    ];
    let skipped: HashSet<PathBuf> = options
        .skip
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut texts = Vec::new();
    let mut files = Vec::new();
    for (dir, scope) in places {
        let mut present = options
            .names
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.exists())
            .filter(|p| p.canonicalize().map_or(true, |c| !skipped.contains(&c)));
        let Some(path) = present.next() else {
            continue;
        };
        let chosen = loader.display(&path, scope);
        for other in present {
            let display = loader.display(&other, scope);
            loader.warn(
                &display,
                None,
                WarningKind::Shadowed,
                format!("not read: {chosen} in the same place is loaded instead (--names sets the order)"),
            );
        }
        let top = texts.len();
        if let Some(text) = loader.load_top(&path, scope, top) {
            texts.push(text);
            files.push(path);
        }
    }
    Ok(Instructions {
        text: texts.join("\n---\n"),
        parts: loader.parts,
        files,
        warnings: loader.warnings,
    })
}

/// A file on the include path: its canonical path and how it is displayed.
struct FileRef {
    canonical: PathBuf,
    display: String,
    scope: Scope,
}

/// An include resolved on a line, then read.
struct Child {
    file: FileRef,
    /// The folder its own includes resolve from.
    base: PathBuf,
    text: String,
    /// Reading it failed (a warning was given).
    failed: bool,
}

struct Loader {
    root: PathBuf,
    home: PathBuf,
    /// Canonical `~/.mewcode`, when it exists.
    user_dir: Option<PathBuf>,
    limits: Limits,
    /// Bytes of file text used so far.
    used: usize,
    /// Canonical paths already included.
    seen: HashSet<PathBuf>,
    parts: Vec<Part>,
    warnings: Vec<Warning>,
}

impl Loader {
    fn warn(&mut self, file: &str, line: Option<usize>, kind: WarningKind, message: String) {
        tracing::debug!(file, ?line, ?kind, "{message}");
        self.warnings.push(Warning {
            file: file.to_owned(),
            line,
            kind,
            message,
        });
    }

    fn display(&self, path: &Path, scope: Scope) -> String {
        let rel = |base: &Path| {
            path.strip_prefix(base)
                .ok()
                .map(|r| r.to_string_lossy().into_owned())
        };
        match scope {
            Scope::Project => {
                rel(&self.root).unwrap_or_else(|| path.to_string_lossy().into_owned())
            }
            Scope::User => {
                let inside = self
                    .user_dir
                    .as_deref()
                    .and_then(rel)
                    .or_else(|| rel(&self.home.join(".mewcode")));
                match inside {
                    Some(r) => format!("~/.mewcode/{r}"),
                    None => path.to_string_lossy().into_owned(),
                }
            }
        }
    }

    /// Loads one top-level file; `None` when it was refused or unreadable.
    fn load_top(&mut self, path: &Path, scope: Scope, top: usize) -> Option<String> {
        let display = self.display(path, scope);
        let canonical = match path.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                self.warn(
                    &display,
                    None,
                    WarningKind::Unreadable,
                    format!("cannot resolve: {e}"),
                );
                return None;
            }
        };
        // A project's own instruction file must not point outside it (a cloned repository is
        // untrusted); the user's file is theirs and may live anywhere (a dotfiles symlink).
        if scope == Scope::Project && !canonical.starts_with(&self.root) {
            self.warn(
                &display,
                None,
                WarningKind::OutsideRoot,
                "refused: it resolves to a file outside the project".to_owned(),
            );
            return None;
        }
        if self.seen.contains(&canonical) {
            self.warn(
                &display,
                None,
                WarningKind::AlreadyIncluded,
                "already included above; not repeated".to_owned(),
            );
            return None;
        }
        let file = FileRef {
            canonical,
            display,
            scope,
        };
        let mut out = String::new();
        let mut stack = Vec::new();
        // The user's file resolves its includes from ~/.mewcode even when it is a symlink.
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let text = self.read(&file, None)?;
        self.expand(&file, &base, text, top, &[], &mut stack, &mut out);
        Some(out)
    }

    /// Appends the `text` of `file` to `out` with its includes expanded, and records its parts.
    /// `base` is the folder its relative includes resolve from.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        file: &FileRef,
        base: &Path,
        text: String,
        top: usize,
        via: &[Site],
        stack: &mut Vec<PathBuf>,
        out: &mut String,
    ) {
        self.seen.insert(file.canonical.clone());
        stack.push(file.canonical.clone());
        self.check_bare_path(file, base, &text);

        let (refs, misses) = scan(&text);
        // Near misses are warned in line order with the includes' warnings.
        let mut misses = misses.as_slice();
        let mut lines = LineCounter::default();
        let mut cursor = 0;
        let mut i = 0;
        while i < refs.len() {
            let line = refs[i].line;
            let group_end = refs[i..]
                .iter()
                .position(|r| r.line != line)
                .map_or(refs.len(), |p| i + p);
            let group = &refs[i..group_end];
            i = group_end;
            let before = misses.partition_point(|m| m.line <= line);
            self.check_near_misses(file, base, &misses[..before]);
            misses = &misses[before..];
            let line_start = text[..group[0].span.start].rfind('\n').map_or(0, |p| p + 1);
            let line_end = text[group[0].span.start..]
                .find('\n')
                .map_or(text.len(), |p| group[0].span.start + p + 1);

            let mut chain = via.to_vec();
            chain.push(Site {
                file: file.display.clone(),
                line,
            });
            // Each child is resolved and read before the line is emitted: a standalone line is
            // replaced only when every file it names was read.
            let mut children: Vec<Child> = Vec::new();
            for r in group {
                let written = &text[r.span.clone()];
                if let Some(child) =
                    self.resolve(file, base, r, written, stack, &children, chain.len())
                {
                    match self.read(&child.file, chain.last()) {
                        Some(text) => children.push(Child { text, ..child }),
                        None => children.push(Child {
                            text: String::new(),
                            failed: true,
                            ..child
                        }),
                    }
                }
            }
            let all_read = children.len() == group.len() && children.iter().all(|c| !c.failed);
            let keep_until = if group[0].standalone && all_read {
                line_start
            } else {
                line_end
            };
            self.emit(file, top, via, &text, &mut lines, cursor..keep_until, out);
            cursor = line_end;
            for child in children.into_iter().filter(|c| !c.failed) {
                ensure_newline(out, &mut self.parts);
                self.expand(
                    &child.file,
                    &child.base,
                    child.text,
                    top,
                    &chain,
                    stack,
                    out,
                );
            }
        }
        self.check_near_misses(file, base, misses);
        self.emit(file, top, via, &text, &mut lines, cursor..text.len(), out);
        stack.pop();
    }

    /// Appends `text[range]` of `file` to `out` as a part. The ranges of one file come in
    /// increasing order, so `lines` counts each newline once.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        file: &FileRef,
        top: usize,
        via: &[Site],
        text: &str,
        lines: &mut LineCounter,
        range: Range<usize>,
        out: &mut String,
    ) {
        if range.start >= range.end {
            return;
        }
        ensure_newline(out, &mut self.parts);
        let first = lines.line_at(text, range.start);
        let piece = &text[range];
        let last = first + piece.trim_end_matches('\n').matches('\n').count();
        out.push_str(piece);
        // Text right after the previous part of the same file (a kept line) extends it.
        if let Some(prev) = self.parts.last_mut()
            && prev.path == file.canonical
            && prev.top == top
            && prev.via == via
            && prev.lines.1 + 1 == first
        {
            prev.text.push_str(piece);
            prev.lines.1 = last;
            return;
        }
        self.parts.push(Part {
            file: file.display.clone(),
            path: file.canonical.clone(),
            scope: file.scope,
            top,
            via: via.to_vec(),
            lines: (first, last),
            text: piece.to_owned(),
        });
    }

    /// Reads a file within the budgets, warning about what was cut or refused.
    fn read(&mut self, file: &FileRef, site: Option<&Site>) -> Option<String> {
        let (wfile, wline) = match site {
            Some(s) => (s.file.clone(), Some(s.line)),
            None => (file.display.clone(), None),
        };
        let remaining = self.limits.max_total_bytes.saturating_sub(self.used);
        if remaining == 0 {
            self.warn(
                &wfile,
                wline,
                WarningKind::TotalBudget,
                format!(
                    "{} skipped: the instructions already use the total budget of {} bytes",
                    file.display, self.limits.max_total_bytes
                ),
            );
            return None;
        }
        let cap = self.limits.max_file_bytes.min(remaining);
        let read = match read_capped(&file.canonical, cap) {
            Ok(r) => r,
            Err(ReadError::NotAFile { kind }) => {
                self.warn(
                    &wfile,
                    wline,
                    WarningKind::NotAFile,
                    format!("{} refused: {kind}", file.display),
                );
                return None;
            }
            Err(e) => {
                self.warn(
                    &wfile,
                    wline,
                    WarningKind::Unreadable,
                    format!("{} cannot be read: {e}", file.display),
                );
                return None;
            }
        };
        let mut text = read.text;
        self.used += text.len();
        if read.lossy {
            self.warn(
                &file.display,
                None,
                WarningKind::InvalidUtf8,
                "invalid UTF-8 replaced by U+FFFD".to_owned(),
            );
        }
        if read.truncated {
            let (kind, why) = if cap == self.limits.max_file_bytes {
                (
                    WarningKind::FileTooLarge,
                    format!(
                        "the per-file budget is {} bytes",
                        self.limits.max_file_bytes
                    ),
                )
            } else {
                (
                    WarningKind::TotalBudget,
                    format!(
                        "the total budget of {} bytes is used up",
                        self.limits.max_total_bytes
                    ),
                )
            };
            self.warn(
                &file.display,
                None,
                kind,
                format!(
                    "truncated: {} bytes, only the first {} are used ({why})",
                    read.size,
                    text.len()
                ),
            );
            let kept = text.len();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[mewmem: {} truncated here: {kept} of {} bytes shown]\n",
                file.display, read.size
            ));
        }
        Some(text)
    }

    /// Resolves one reference of `file`; `None` (with a warning) when it is refused. `shown` is
    /// the reference as written (`@include ~/x`, `@"a b.md"`), to name it in a warning.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &mut self,
        file: &FileRef,
        base: &Path,
        r: &IncludeRef,
        shown: &str,
        stack: &[PathBuf],
        siblings: &[Child],
        depth: usize,
    ) -> Option<Child> {
        let written = &r.path;
        let refuse = |this: &mut Self, kind: WarningKind, why: String| {
            this.warn(&file.display, Some(r.line), kind, format!("{shown}: {why}"));
            None
        };
        if written.is_empty() {
            return refuse(
                self,
                WarningKind::MissingPath,
                "no path after it".to_owned(),
            );
        }
        let candidate = if written == "~" || written.starts_with("~/") {
            if file.scope == Scope::Project {
                return refuse(
                    self,
                    WarningKind::HomePath,
                    "refused: `~` paths are not allowed in project files".to_owned(),
                );
            }
            self.home
                .join(written.trim_start_matches('~').trim_start_matches('/'))
        } else if Path::new(written).is_absolute() {
            if file.scope == Scope::Project {
                return refuse(
                    self,
                    WarningKind::AbsolutePath,
                    "refused: absolute paths are not allowed in project files".to_owned(),
                );
            }
            PathBuf::from(written)
        } else {
            base.join(written)
        };
        let canonical = match candidate.canonicalize() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return refuse(self, WarningKind::NotFound, "not found".to_owned());
            }
            Err(e) => {
                return refuse(
                    self,
                    WarningKind::Unreadable,
                    format!("cannot resolve: {e}"),
                );
            }
        };
        let boundary = match file.scope {
            Scope::Project => Some(self.root.as_path()),
            Scope::User => self.user_dir.as_deref(),
        };
        if !boundary.is_some_and(|b| canonical.starts_with(b)) {
            let place = match file.scope {
                Scope::Project => "the project",
                Scope::User => "~/.mewcode",
            };
            return refuse(
                self,
                WarningKind::OutsideRoot,
                format!("refused: resolves outside {place}"),
            );
        }
        let display = self.display(&canonical, file.scope);
        let inside = boundary
            .and_then(|b| canonical.strip_prefix(b).ok())
            .unwrap_or(&canonical);
        if let Some(pattern) = denied(Path::new(written)).or_else(|| denied(inside)) {
            return refuse(
                self,
                WarningKind::Denied,
                format!("refused: `{pattern}` files may hold secrets and are never included"),
            );
        }
        if stack.contains(&canonical) {
            return refuse(
                self,
                WarningKind::Cycle,
                format!("cycle: {display} is already being included"),
            );
        }
        if self.seen.contains(&canonical) || siblings.iter().any(|c| c.file.canonical == canonical)
        {
            return refuse(
                self,
                WarningKind::AlreadyIncluded,
                format!("{display} is already included above; not repeated"),
            );
        }
        if depth > self.limits.max_depth {
            return refuse(
                self,
                WarningKind::TooDeep,
                format!(
                    "not included: nesting deeper than {} levels",
                    self.limits.max_depth
                ),
            );
        }
        Some(Child {
            file: FileRef {
                canonical,
                display,
                scope: file.scope,
            },
            base: lexical_parent(&candidate),
            text: String::new(),
            failed: false,
        })
    }

    /// Warns about each `@word` that is not an include but names a folder or file next to
    /// `file` (`@docs/`, `@Makefile`): the author probably meant an include.
    fn check_near_misses(&mut self, file: &FileRef, base: &Path, misses: &[NearMiss]) {
        for m in misses {
            if denied(Path::new(&m.path)).is_some() {
                continue;
            }
            let Ok(meta) = std::fs::metadata(base.join(&m.path)) else {
                continue;
            };
            let why = if meta.is_dir() {
                "a folder is not included; name its files (`@dir/file.md`)".to_owned()
            } else {
                format!(
                    "a path without an extension is not an include; write `@./{}` to include it",
                    m.path
                )
            };
            self.warn(
                &file.display,
                Some(m.line),
                WarningKind::NotAnInclude,
                format!("@{}: not included: {why}", m.path),
            );
        }
    }

    /// Warns when a whole file is nothing but the path of another file (a pointer by
    /// convention, like an AGENTS.md holding `.cursor/rules/general.mdc`): it is not followed.
    fn check_bare_path(&mut self, file: &FileRef, base: &Path, text: &str) {
        let t = text.trim();
        if t.is_empty() || t.contains(char::is_whitespace) || t.starts_with('@') {
            return;
        }
        let target = base.join(t);
        let inside = target.canonicalize().ok().is_some_and(|c| {
            c.is_file()
                && match file.scope {
                    Scope::Project => c.starts_with(&self.root),
                    Scope::User => self.user_dir.as_deref().is_some_and(|u| c.starts_with(u)),
                }
        });
        if inside {
            self.warn(
                &file.display,
                Some(1),
                WarningKind::BarePath,
                format!("the whole file is the path `{t}`, which is not an include: write `@{t}` to include it"),
            );
        }
    }
}

/// The 1-based line number at a byte offset, counted from where the previous question left off
/// (offsets asked in increasing order cost one pass over the text in all).
#[derive(Debug, Default)]
struct LineCounter {
    /// Bytes counted so far.
    pos: usize,
    /// Newlines in `text[..pos]`.
    newlines: usize,
}

impl LineCounter {
    /// The line of `text` that byte `offset` is on. An offset before the previous one is
    /// counted from the start again (never the case in the loader).
    fn line_at(&mut self, text: &str, offset: usize) -> usize {
        if offset < self.pos {
            *self = LineCounter::default();
        }
        self.newlines += text.as_bytes()[self.pos..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.pos = offset;
        self.newlines + 1
    }
}

/// File names that may hold secrets: never included, whatever their place (see
/// `docs/formats/instructions.md`). `*` stands for any text.
pub const DENIED_NAMES: &[&str] = &[
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".netrc",
    ".pypirc",
    ".git-credentials",
];

/// Folders whose files are never included (`.git/config`, `.ssh/...`).
pub const DENIED_FOLDERS: &[&str] = &[".git", ".ssh", ".gnupg", ".aws"];

/// The deny-list pattern `path` matches (`.env*`, `.git/`), if any: a folder of
/// [`DENIED_FOLDERS`] anywhere in it, or a last component matching [`DENIED_NAMES`].
fn denied(path: &Path) -> Option<String> {
    let mut components = path.components().peekable();
    while let Some(c) = components.next() {
        let Component::Normal(name) = c else {
            continue;
        };
        let name = name.to_string_lossy();
        if components.peek().is_some() {
            if let Some(folder) = DENIED_FOLDERS.iter().find(|f| **f == name) {
                return Some(format!("{folder}/"));
            }
            continue;
        }
        if let Some(folder) = DENIED_FOLDERS.iter().find(|f| **f == name) {
            return Some(format!("{folder}/"));
        }
        let hit = DENIED_NAMES
            .iter()
            .find(|p| match (p.strip_prefix('*'), p.strip_suffix('*')) {
                (Some(suffix), _) => name.ends_with(suffix),
                (_, Some(prefix)) => name.starts_with(prefix),
                _ => name == **p,
            });
        if let Some(p) = hit {
            return Some((*p).to_owned());
        }
    }
    None
}

/// The folder that relative includes of `path` resolve from: its parent, `..` kept lexical.
fn lexical_parent(path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = path.components().collect();
    parts.pop();
    parts.iter().collect()
}

/// Makes the merged text end with a newline before more text is added, so an included file
/// starts on a line of its own (the newline goes to the last part).
fn ensure_newline(out: &mut String, parts: &mut [Part]) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
        if let Some(last) = parts.last_mut() {
            last.text.push('\n');
        }
    }
}
