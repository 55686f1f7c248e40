//! Finding transcript files under the paths a user names.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;

/// Expands `paths` (files and folders) into the transcript files to import.
///
/// A file named explicitly is always listed (the importer says if it is not a transcript); a
/// folder is walked recursively (symbolic links are not followed: a `*.jsonl` link is reported
/// as a warning) for `*.jsonl` files. The list
/// has no duplicates and is sorted by folder, then session files before `agent-*.jsonl` files,
/// then name, so a parent session comes before its old-style `agent-*.jsonl` siblings and
/// before its `<session>/subagents/` folder. `*.meta.json` sidecars are not listed: the
/// importer reads them for subagent titles. Unreadable or missing paths become diagnostics
/// (line 0).
pub fn discover(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut found: BTreeSet<(OsString, bool, OsString, PathBuf)> = BTreeSet::new();
    let mut diagnostics = Vec::new();
    let mut add = |p: PathBuf| {
        let dir = p
            .parent()
            .map(|d| d.as_os_str().to_owned())
            .unwrap_or_default();
        let name = p.file_name().map(|n| n.to_owned()).unwrap_or_default();
        let is_agent = name.to_string_lossy().starts_with("agent-");
        found.insert((dir, is_agent, name, p));
    };
    for path in paths {
        match std::fs::metadata(path) {
            Err(e) => diagnostics.push(Diagnostic::error(path, 0, format!("cannot read: {e}"))),
            Ok(m) if m.is_file() => add(path.clone()),
            Ok(m) if m.is_dir() => {
                for entry in walkdir::WalkDir::new(path).follow_links(false) {
                    match entry {
                        Ok(e) if e.file_type().is_file() && is_jsonl(e.path()) => {
                            add(e.into_path());
                        }
                        Ok(e) if e.path_is_symlink() && is_jsonl(e.path()) => {
                            diagnostics.push(Diagnostic::warning(
                                e.path(),
                                0,
                                "a symbolic link inside a folder is not followed; skipped \
                                 (name it on the command line to import it)",
                            ));
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let at = e.path().unwrap_or(path).to_owned();
                            diagnostics.push(Diagnostic::error(at, 0, format!("cannot read: {e}")));
                        }
                    }
                }
            }
            Ok(_) => diagnostics.push(Diagnostic::error(
                path,
                0,
                "not a regular file or folder; skipped",
            )),
        }
    }
    let files = found.into_iter().map(|(_, _, _, p)| p).collect();
    (files, diagnostics)
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}
