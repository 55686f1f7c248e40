//! Note folders as an index source: `*.md` files with frontmatter (seed 000 §4), read through
//! `mem-recall`'s frontmatter parser, forgotten with `mem_recall::remove_note`, written back
//! from an archive under the folder's lock (`mem_recall::lock_notes`).

use std::path::{Path, PathBuf};

use mem_tiers::archive::{Archive, ArchivedNote, ImportReport, check_note_file_name};
use mem_tiers::index::{IndexSource, MAX_INDEXED_FILE_BYTES, SourceFile, mtime_ns, write_atomic};
use mem_tiers::{Document, Error, MemoryId, Result, SourceKind};

/// The most note files read from one directory (newest first when there are more; seed §4).
pub const MAX_NOTES_PER_DIR: usize = 200;

/// A directory of memory notes (`*.md` with frontmatter; `MEMORY.md` excluded): one document
/// per file, id `N:<scope>/<file name>`, title = frontmatter `name` (else the file stem), body =
/// `description` + the text.
#[derive(Debug, Clone)]
pub struct NoteDir {
    /// The directory.
    pub dir: PathBuf,
    /// `project`, `user` or `extra<K>`.
    pub scope: String,
    /// The owning project, `None` for user-level dirs.
    pub project_key: Option<String>,
}

impl IndexSource for NoteDir {
    fn kind(&self) -> SourceKind {
        SourceKind::Note
    }

    fn roots(&self) -> Vec<String> {
        vec![self.dir.display().to_string()]
    }

    fn files(&self) -> Result<(Vec<SourceFile>, Vec<String>)> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()));
            }
            Err(e) => {
                return Ok((Vec::new(), vec![format!("{}: {e}", self.dir.display())]));
            }
        };
        let mut warnings = Vec::new();
        let mut found = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    warnings.push(format!("{}: {e}", self.dir.display()));
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".md") || name == "MEMORY.md" || name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => found.push((mtime_ns(&m), path)),
                Ok(_) => {}
                Err(e) => warnings.push(format!("{}: {e}", path.display())),
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        found.truncate(MAX_NOTES_PER_DIR);
        let root = self.dir.display().to_string();
        Ok((
            found
                .into_iter()
                .map(|(_, path)| SourceFile {
                    path,
                    root: root.clone(),
                })
                .collect(),
            warnings,
        ))
    }

    fn parse(&self, file: &SourceFile, text: &str, mtime_ms: i64) -> Vec<Document> {
        let name = file
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (parsed, _warning) = mem_recall::frontmatter::parse(text);
        let fm = parsed.frontmatter;
        let title = fm
            .name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| name.trim_end_matches(".md").to_owned());
        let body = match fm.description {
            Some(d) if !d.trim().is_empty() => format!("{d}\n{}", parsed.body),
            _ => parsed.body,
        };
        vec![Document {
            id: MemoryId::Note {
                scope: self.scope.clone(),
                file: name,
            }
            .to_string(),
            source: SourceKind::Note,
            scope: self.scope.clone(),
            project_key: self.project_key.clone(),
            title,
            body,
            path: Some(file.path.display().to_string()),
            updated_ms: mtime_ms,
        }]
    }

    fn forget(&self, id: &MemoryId) -> Result<Option<PathBuf>> {
        let MemoryId::Note { scope, file } = id else {
            return Ok(None);
        };
        if *scope != self.scope {
            return Ok(None);
        }
        // mem-recall owns the note files: it removes regular files only, and syncs the dir.
        let Some(recall_scope) = mem_recall::Scope::parse(scope) else {
            return Ok(None);
        };
        let dirs = mem_recall::MemoryDirs {
            dirs: vec![mem_recall::MemoryDir {
                scope: recall_scope,
                path: self.dir.clone(),
            }],
        };
        match mem_recall::remove_note(&dirs, &mem_recall::NoteId::new(recall_scope, file.clone())) {
            Ok(path) => Ok(Some(path)),
            Err(mem_recall::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(Error::Source {
                path: self.dir.join(file),
                message: e.to_string(),
            }),
        }
    }

    fn export(&self, archive: &mut Archive) -> Result<()> {
        let (files, _warnings) = self.files()?;
        let mut notes = Vec::new();
        for f in files {
            let text = read_bounded(&f.path)?;
            let file = f
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            notes.push(ArchivedNote {
                id: MemoryId::Note {
                    scope: self.scope.clone(),
                    file: file.clone(),
                }
                .to_string(),
                scope: self.scope.clone(),
                file,
                text,
            });
        }
        notes.sort_by(|a, b| a.file.cmp(&b.file));
        archive.notes.extend(notes);
        Ok(())
    }

    fn import(&self, archive: &Archive, report: &mut ImportReport) -> Result<Vec<String>> {
        let mut taken = Vec::new();
        let mut _lock = None;
        for n in archive.notes.iter().filter(|n| n.scope == self.scope) {
            if _lock.is_none() {
                // The lock every note writer and a checkpoint restore take.
                _lock = Some(
                    mem_recall::lock_notes(&self.dir, mem_recall::NOTES_LOCK_TIMEOUT).map_err(
                        |e| Error::Source {
                            path: self.dir.clone(),
                            message: e.to_string(),
                        },
                    )?,
                );
            }
            check_note_file_name(&n.file)?;
            taken.push(n.id.clone());
            let path = self.dir.join(&n.file);
            let red = mem_core::secrets::redact(&n.text);
            match std::fs::symlink_metadata(&path) {
                Ok(_) => {
                    let existing = mem_core::fsread::read_to_string(&path).unwrap_or_default();
                    if existing == red.text {
                        report.notes_present += 1;
                    } else {
                        report.notes_kept_existing.push(n.id.clone());
                    }
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("read", &path, e)),
            }
            std::fs::create_dir_all(&self.dir).map_err(|e| Error::io("create", &self.dir, e))?;
            write_atomic(&path, red.text.as_bytes())?;
            report.withheld += red.withheld();
            report.notes_added += 1;
        }
        Ok(taken)
    }
}

/// A file's text, refused past [`MAX_INDEXED_FILE_BYTES`] (lossy UTF-8, as the index reads it).
fn read_bounded(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
    if meta.len() > MAX_INDEXED_FILE_BYTES {
        return Err(Error::Source {
            path: path.to_path_buf(),
            message: format!("{} bytes, larger than {MAX_INDEXED_FILE_BYTES}", meta.len()),
        });
    }
    let bytes = mem_core::fsread::read(path).map_err(|e| Error::io("read", path, e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
