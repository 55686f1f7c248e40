//! `memories.md` files as an index source: each entry one document, parsed, forgotten, exported
//! and merged back through `mem-auto`, which owns the format.

use std::path::PathBuf;

use mem_tiers::archive::{Archive, ArchivedEntry, ImportReport, entry_category};
use mem_tiers::index::{IndexSource, SourceFile};
use mem_tiers::{Document, Error, MemoryId, Result, SourceKind};

/// A `memories.md` file (seed 000 §3), read and written through `mem-auto` (which owns the
/// format): each entry is one document, id `M<hash>`, titled by its category heading. Forget goes
/// through `mem_auto::AutoMemory::forget` (locked, re-read, hand edits kept, atomic replace).
#[derive(Debug, Clone)]
pub struct MemoriesFile {
    /// The two files of a project and its user.
    pub auto: mem_auto::AutoMemory,
    /// Which of the two this source indexes.
    pub scope: mem_auto::Scope,
    /// The owning project for the project file, `None` for the user's.
    pub project_key: Option<String>,
}

impl MemoriesFile {
    /// The file indexed.
    pub fn path(&self) -> PathBuf {
        self.auto.path(self.scope)
    }
}

impl IndexSource for MemoriesFile {
    fn kind(&self) -> SourceKind {
        SourceKind::Entry
    }

    fn roots(&self) -> Vec<String> {
        vec![self.path().display().to_string()]
    }

    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)> {
        let path = self.path();
        Ok(match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => (
                vec![SourceFile {
                    root: path.display().to_string(),
                    path,
                }],
                Vec::new(),
            ),
            Ok(_) => (Vec::new(), Vec::new()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), Vec::new()),
            Err(e) => (Vec::new(), vec![format!("{}: {e}", path.display())]),
        })
    }

    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document> {
        let (doc, _warnings) = mem_auto::Document::parse(text);
        let mut seen = std::collections::HashSet::new();
        doc.entries()
            .into_iter()
            .filter(|e| !e.text.is_empty())
            .filter_map(|e| {
                let id = e.id.to_string();
                seen.insert(id.clone()).then(|| Document {
                    id,
                    source: SourceKind::Entry,
                    scope: mem_auto::scope_name(self.scope).to_owned(),
                    project_key: self.project_key.clone(),
                    title: e.category.heading().to_owned(),
                    body: e.text,
                    path: Some(file.path.display().to_string()),
                    updated_ms: mtime_ms,
                })
            })
            .collect()
    }

    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        let MemoryId::Entry(_) = id else {
            return Ok(None);
        };
        let entry: mem_auto::EntryId =
            id.to_string()
                .parse()
                .map_err(|e: mem_auto::IdError| Error::BadId {
                    id: id.to_string(),
                    reason: e.to_string(),
                })?;
        // Only this source's file: the entry is looked up in it before mem-auto removes it.
        let (doc, _) = self.auto.read(self.scope).map_err(|e| Error::Source {
            path: self.path(),
            message: e.to_string(),
        })?;
        if doc.get(entry).is_none() {
            return Ok(None);
        }
        match self.auto.forget(entry) {
            Ok(Some(info)) => Ok(Some(info.path)),
            Ok(None) => Ok(None),
            Err(e) => Err(Error::Source {
                path: self.path(),
                message: e.to_string(),
            }),
        }
    }

    fn export(&self, archive: &mut Archive) -> Result<()> {
        let (doc, _warnings) = self.auto.read(self.scope).map_err(|e| Error::Source {
            path: self.path(),
            message: e.to_string(),
        })?;
        let scope = mem_auto::scope_name(self.scope).to_owned();
        archive.entries.extend(
            doc.entries()
                .into_iter()
                .filter(|e| !e.text.is_empty())
                .map(|e| ArchivedEntry {
                    id: e.id.to_string(),
                    scope: scope.clone(),
                    category: e.category.heading().to_owned(),
                    text: e.text,
                }),
        );
        Ok(())
    }

    fn import(&self, archive: &Archive, report: &mut ImportReport) -> Result<Vec<String>> {
        let mut taken = Vec::new();
        let mut candidates = Vec::new();
        for e in &archive.entries {
            let category = entry_category(e)?;
            if mem_auto::scope_of(category) != self.scope {
                continue;
            }
            let red = mem_core::secrets::redact(&e.text);
            report.withheld += red.withheld();
            let text = red.text.split_whitespace().collect::<Vec<_>>().join(" ");
            taken.push(e.id.clone());
            if !text.is_empty() {
                candidates.push(mem_auto::Candidate { category, text });
            }
        }
        if candidates.is_empty() {
            return Ok(taken);
        }
        let options = self.auto.options().clone();
        let done = self
            .auto
            .update(self.scope, |file| {
                Ok(mem_auto::merge_offline(
                    file,
                    &candidates,
                    &[],
                    chrono::Utc::now(),
                    options.cap_tokens,
                    options.headings,
                ))
            })
            .map_err(|e| Error::Source {
                path: self.path(),
                message: e.to_string(),
            })?;
        report.entries_added += done.added.len();
        report.entries_present += candidates.len() - done.added.len();
        report.entries_evicted += done.evicted.len() + done.consolidated.len();
        Ok(taken)
    }
}
