//! mewmem's own session files (`{id}.jsonl`, with `{id}.meta` beside when there is one), copied
//! record for record: importing another project's sessions, or an export, loses nothing.

use std::path::Path;

use serde_json::Value;

use super::text::sanitize_id;
use super::{ImportReport, ImportedSession, SourceFormat};
use crate::diagnostic::Diagnostic;
use crate::jsonl::JsonLine;
use crate::meta::SessionMeta;
use crate::record::SessionRecord;

/// Converts the lines of a mewmem session file; lines that are not valid records are reported
/// and skipped, every other record is kept unchanged.
pub(crate) fn import(
    path: &Path,
    values: Vec<JsonLine>,
    mut diagnostics: Vec<Diagnostic>,
) -> ImportedSession {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sidecar: Option<SessionMeta> = mem_core::fsread::read(path.with_extension("meta"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let mut report = ImportReport {
        lines: values.len(),
        ..ImportReport::default()
    };
    let mut records = Vec::with_capacity(values.len());
    let mut created = None;
    let mut last_active = None;
    for line in values {
        let n = line.line;
        match serde_json::from_value::<SessionRecord>(line.value) {
            Ok(record) => match record.check() {
                Ok(()) => {
                    if let Some(ts) = &record.timestamp {
                        created.get_or_insert_with(|| ts.clone());
                        last_active = Some(ts.clone());
                    }
                    records.push(record);
                }
                Err(why) => {
                    diagnostics.push(
                        Diagnostic::error(path, n, format!("{why}; record skipped"))
                            .with_kind("invalid-record"),
                    );
                }
            },
            Err(e) => {
                diagnostics.push(
                    Diagnostic::error(path, n, format!("not a session record: {e}; skipped"))
                        .with_kind("not-a-record"),
                );
            }
        }
    }
    report.diagnostics = diagnostics;
    let cwd = sidecar
        .as_ref()
        .and_then(|m| m.extra.get(crate::meta::IMPORTED_KEY))
        .and_then(|i| i.get("cwd"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    ImportedSession {
        id: sanitize_id(&stem, "session"),
        title: sidecar.as_ref().and_then(|m| m.title.clone()),
        parent_id: sidecar.as_ref().and_then(|m| m.parent_id.clone()),
        format: SourceFormat::Mewmem,
        source_path: path.to_owned(),
        source_session_id: Some(stem),
        created: sidecar.as_ref().map(|m| m.created.clone()).or(created),
        last_active,
        cwd,
        records,
        report,
    }
}
