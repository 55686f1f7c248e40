//! Importers: Claude Code transcripts and Codex CLI rollouts become mewmem sessions.
//!
//! [`import_file`] reads one transcript with the forgiving [`JsonlReader`] (malformed lines,
//! glued objects and torn tails become diagnostics, never errors) and returns the main session
//! plus any subagent sessions split out of it. Nothing here writes to disk: the store does.
//! The field mapping, the id scheme and what is skipped are written down in
//! `docs/formats/import.md`.
//!
//! A file is opened and read one way: [`Transcript`] (`transcript`: the checks every file
//! argument passes, then its first lines, whole, streamed in hashed blocks, or from an offset).
//! Its format is decided in one place: `format` ([`detect_format`]; `classify` on the first
//! values, however they were read). `claude`, `codex` and `mewmem` convert the values read.
//!
//! Guarantees (tested on the real transcripts under `fixtures/transcripts/`):
//! - deterministic: the same file gives the same ids and the same records, byte for byte;
//! - every tool_result is placed after the message holding its tool_use (so the replay's
//!   `validate_message_chain` reports no orphan caused by the import);
//! - a file that is not a transcript is an [`Error::NotATranscript`] naming the file and why.

mod build;
mod claude;
mod codex;
pub(crate) mod codex_line;
mod discover;
mod format;
mod mewmem;
mod text;
mod transcript;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, Severity};
use crate::error::{Error, Result};
use crate::jsonl::{JsonLine, JsonlEvent, JsonlReader};
use crate::record::SessionRecord;

pub use build::IMPORTED_KEEP_MAX_BYTES;
pub(crate) use build::{Spill, SpillFile};
pub use discover::discover;
pub use format::{SourceFormat, detect_format};
use format::{classify, sniff};
pub(crate) use text::is_legacy_of;
use transcript::finish_hash;
pub(crate) use transcript::xxh3_hex;
pub use transcript::{MAX_TRANSCRIPT_BYTES, Transcript};

/// What an import saw: counts, skipped lines by reason, and problems by file and line.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// JSON values read for this session (a line holding two glued objects counts twice).
    pub lines: usize,
    /// Message records produced (system prompts included, boundaries excluded).
    pub messages: usize,
    /// tool_use blocks whose tool_result is in the session too.
    pub tool_pairs: usize,
    /// `compact_boundary` records produced.
    pub boundaries: usize,
    /// Lines that carry no conversation, by reason (`progress`, `event_msg:token_count`, ...).
    pub skipped: BTreeMap<String, usize>,
    /// Lines lost or altered because they were damaged (malformed JSON, torn, not an object,
    /// invalid UTF-8 replaced...), by kind ([`crate::LINE_KINDS`]); each line counted once,
    /// never also in `skipped`.
    pub damaged: BTreeMap<String, usize>,
    /// Malformed or glued lines, moved tool results, unknown items: `path:line: level: msg`.
    pub diagnostics: Vec<Diagnostic>,
}

impl ImportReport {
    /// Counts one skipped line under `reason`.
    pub(crate) fn skip(&mut self, reason: impl Into<String>) {
        *self.skipped.entry(reason.into()).or_insert(0) += 1;
    }

    /// Total skipped lines, all reasons.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }

    /// Damaged lines, all kinds (each line once).
    pub fn damaged_total(&self) -> usize {
        self.damaged.values().sum()
    }

    /// Diagnostics of [`Severity::Error`] (lines that were lost or altered).
    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
}

/// One session produced by an import, ready for the store.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession {
    /// The mewmem session id, deterministic (same source file → same id) and a safe file name
    /// (`[A-Za-z0-9._-]`, not starting with `.`). See `docs/formats/import.md`, "Ids".
    pub id: String,
    /// A custom/AI title or summary recorded by the agent, a subagent's description, or the
    /// first real user request, shortened to one line of at most 80 characters.
    pub title: Option<String>,
    /// The mewmem id of the parent session, for subagent sessions.
    pub parent_id: Option<String>,
    /// The source format.
    pub format: SourceFormat,
    /// The file read.
    pub source_path: PathBuf,
    /// The agent's own session id (Claude `sessionId`, Codex `session_meta.id`), when recorded.
    pub source_session_id: Option<String>,
    /// Earliest timestamp seen (RFC 3339, as written in the source).
    pub created: Option<String>,
    /// Latest timestamp seen (RFC 3339, as written in the source).
    pub last_active: Option<String>,
    /// The working directory the agent ran in, when recorded.
    pub cwd: Option<String>,
    /// The records, in order: messages, system prompts and compact boundaries.
    pub records: Vec<SessionRecord>,
    /// Counts, skipped lines and diagnostics for this session.
    pub report: ImportReport,
}

impl ImportedSession {
    /// `true` when the source held no conversation (only summaries, snapshots...): the caller
    /// may skip such a session rather than store an empty one.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// Opens a transcript for reading ([`Transcript::open`]: a regular file of at most
/// [`MAX_TRANSCRIPT_BYTES`]) and hands out the file.
///
/// Errors: [`Error::NotAFile`], [`Error::TooLarge`], [`Error::Io`] (missing, unreadable).
pub fn open_transcript(path: &Path) -> Result<File> {
    Transcript::open(path).map(Transcript::into_file)
}

/// Reads `path` and converts it: the main session first, then any subagent sessions split out
/// of it (Claude Code's inline sidechains), in order of first appearance.
///
/// Subagent transcripts in their own files (`<session>/subagents/agent-<id>.jsonl`, or
/// `agent-<id>.jsonl` beside the session) come back as one session with
/// [`ImportedSession::parent_id`] set; their `.meta.json` sidecar is read for the title.
///
/// Errors: [`Error::NotATranscript`] (see [`detect_format`]), [`Error::Io`], and those of
/// [`Transcript::open`] (not a regular file, too large). Malformed lines are not errors: they are in each session's [`ImportReport::diagnostics`].
pub fn import_file(path: &Path) -> Result<Vec<ImportedSession>> {
    import_file_indexed(path).map(|(sessions, _)| sessions)
}

/// Converts transcript `bytes` (the contents of a file at `path`, which is only used for
/// diagnostics, the file-name-derived ids and sidecars) in `format`, or in the format sniffed
/// from the first lines when `format` is `None`. The same conversion as [`import_file`],
/// without the file checks; for callers holding the bytes already, and for fuzzing.
///
/// Errors: [`Error::NotATranscript`] when `format` is `None` and no format is recognised.
pub fn import_bytes(
    path: &Path,
    bytes: &[u8],
    format: Option<SourceFormat>,
) -> Result<Vec<ImportedSession>> {
    let mut reader = JsonlReader::new(bytes, path).skim_payloads(codex::SKIMMED_TYPES);
    if format.is_some_and(SourceFormat::is_codex) {
        reader.read_codex_lines();
    }
    convert_events(path, reader, format)
}

/// [`import_bytes`] with every line parsed whole into a `Value`: no skimmed payloads, no
/// Codex line reader. The reference the faster readers are checked against (tests and the
/// importer fuzz targets); the result is the same.
///
/// Errors: as [`import_bytes`].
#[doc(hidden)]
pub fn import_bytes_whole(
    path: &Path,
    bytes: &[u8],
    format: Option<SourceFormat>,
) -> Result<Vec<ImportedSession>> {
    convert_events(path, JsonlReader::new(bytes, path), format)
}

/// Converts what a reader of `path` yields, in `format` or in the format sniffed from it.
fn convert_events(
    path: &Path,
    events: impl Iterator<Item = JsonlEvent>,
    format: Option<SourceFormat>,
) -> Result<Vec<ImportedSession>> {
    let mut values = Vec::new();
    let mut diagnostics = Vec::new();
    for event in events {
        match event {
            JsonlEvent::Value(v) => values.push(v),
            JsonlEvent::Diagnostic(d) => diagnostics.push(d),
        }
    }
    let format = match format {
        Some(f) => f,
        None => classify(path, &values, &diagnostics)?,
    };
    Ok(convert(path, format, values, diagnostics))
}

/// Byte offsets of the lines a conversion read: line number → offset of the line's first byte
/// in the file. Used to find where an incremental re-import restarts.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineIndex {
    lines: Vec<(usize, u64)>,
    /// The file's bytes as they were read and converted, when it was read whole.
    source: Option<Vec<u8>>,
}

impl LineIndex {
    fn of(values: &[JsonLine]) -> LineIndex {
        let mut lines: Vec<(usize, u64)> = values.iter().map(|l| (l.line, l.offset)).collect();
        lines.dedup_by_key(|(line, _)| *line);
        LineIndex {
            lines,
            source: None,
        }
    }

    /// The file's bytes as they were read and converted, when it was read whole (a small
    /// file): what its sync mark's fingerprints are taken from.
    pub(crate) fn source(&self) -> Option<&[u8]> {
        self.source.as_deref()
    }

    /// The byte offset where line `line` starts, if a value was read from it.
    pub(crate) fn offset_of(&self, line: usize) -> Option<u64> {
        self.lines
            .binary_search_by_key(&line, |(l, _)| *l)
            .ok()
            .map(|i| self.lines[i].1)
    }
}

/// [`import_file`], also returning where each line read starts.
pub(crate) fn import_file_indexed(path: &Path) -> Result<(Vec<ImportedSession>, LineIndex)> {
    let (values, diagnostics) = read_all(path)?;
    let format = classify(path, &values, &diagnostics)?;
    let index = LineIndex::of(&values);
    Ok((convert(path, format, values, diagnostics), index))
}

/// Converts the lines of `transcript` from byte `offset` (the start of line `first_line`) to the
/// end,
/// as if the conversion started there with nothing before it: the incremental re-import of a
/// transcript that grew (`crate::ingest`). Reads only the bytes after `offset`. Line numbers
/// and `source_line` metadata are those of the whole file. The caller checks that the result
/// does not depend on what came before `offset` (see `crate::ingest`).
///
/// Errors: [`Error::Io`] when the file cannot be read.
pub(crate) fn import_tail(
    transcript: &Transcript,
    format: SourceFormat,
    offset: u64,
    first_line: usize,
) -> Result<(Vec<ImportedSession>, LineIndex)> {
    let path = transcript.path();
    let bytes = transcript.read_from(offset)?;
    let mut values = Vec::new();
    let mut diagnostics = Vec::new();
    let mut reader = JsonlReader::starting_at(&bytes[..], path, first_line, offset)
        .skim_payloads(codex::SKIMMED_TYPES);
    if format.is_codex() {
        reader.read_codex_lines();
    }
    for event in reader {
        match event {
            JsonlEvent::Value(v) => values.push(v),
            JsonlEvent::Diagnostic(d) => diagnostics.push(d),
        }
    }
    let index = LineIndex::of(&values);
    Ok((convert(path, format, values, diagnostics), index))
}

/// The id [`import_file`] gives the main session of `transcript` and its format, from the first
/// lines only (the id comes from the file name or the first lines: Codex `session_meta`,
/// Claude `sessionId`). `None` for a mewmem session file (no incremental re-import for those).
///
/// Errors: as [`detect_format`].
pub(crate) fn head_id(transcript: &Transcript) -> Result<Option<(String, SourceFormat)>> {
    let path = transcript.path();
    let (values, diagnostics) = transcript.head()?;
    let format = classify(path, &values, &diagnostics)?;
    if format == SourceFormat::Mewmem {
        return Ok(None);
    }
    let sessions = convert(path, format, values, diagnostics);
    Ok(sessions.into_iter().next().map(|s| (s.id, format)))
}

/// Converts values already read and classified.
fn convert(
    path: &Path,
    format: SourceFormat,
    values: Vec<JsonLine>,
    diagnostics: Vec<Diagnostic>,
) -> Vec<ImportedSession> {
    let mut sessions = match format {
        SourceFormat::ClaudeCode => claude::import(path, values, diagnostics),
        SourceFormat::Codex | SourceFormat::CodexLegacy => {
            vec![codex::import(path, format, values, diagnostics)]
        }
        SourceFormat::Mewmem => {
            // Already in our format: no conversion, no relocation; only the counts.
            let mut session = mewmem::import(path, values, diagnostics);
            build::count(&mut session);
            return vec![session];
        }
    };
    for session in &mut sessions {
        build::finish(session);
    }
    sessions
}

/// Every value and diagnostic of a file.
fn read_all(path: &Path) -> Result<(Vec<JsonLine>, Vec<Diagnostic>)> {
    let transcript = Transcript::open(path)?;
    read_all_hashed(&transcript).map(|(_, values, diagnostics)| (values, diagnostics))
}

/// Every value and diagnostic of a file, and the digest ([`digest_hex`]) of its bytes, from one
/// read.
///
/// Errors: [`Error::Io`] when a read fails (the hash would not describe the file).
fn read_all_hashed(transcript: &Transcript) -> Result<(String, Vec<JsonLine>, Vec<Diagnostic>)> {
    let path = transcript.path();
    let mut reader = transcript.stream()?;
    let mut values = Vec::new();
    let mut diagnostics = Vec::new();
    for event in JsonlReader::new(&mut reader, path).skim_payloads(codex::SKIMMED_TYPES) {
        match event {
            JsonlEvent::Value(v) => values.push(v),
            JsonlEvent::Diagnostic(d) => {
                if d.kind == Some("read-error") {
                    return Err(Error::io(
                        "cannot read",
                        path,
                        std::io::Error::other(d.message),
                    ));
                }
                diagnostics.push(d)
            }
        }
    }
    let digest = finish_hash(reader, path)?;
    Ok((digest, values, diagnostics))
}

/// A session converted as it was read: its records are in a spill file (see
/// [`build::Spill`]), not in [`ImportedSession::records`] (empty).
pub(crate) struct SpilledSession {
    /// Everything but the records.
    pub session: ImportedSession,
    /// The records, written out (the main session's in a file of their own, named, in the
    /// directory the caller chose; sidechains' in a shared unnamed file).
    pub spill: build::Spill,
}

/// What [`import_file_streaming`] produced.
pub(crate) enum FileImport {
    /// Converted in memory (a small file, or not a Claude Code transcript).
    Memory(Vec<ImportedSession>),
    /// Converted as read; the line index holds the line an incremental re-import restarts at.
    Spilled(Vec<SpilledSession>),
}

/// [`import_file`] with the digest of the source, converting a Claude Code transcript of at
/// least `min_bytes` as it is read: each session's records are written out as they settle (the
/// main session's to a new file at `tmp_name()`, sidechains' to an unnamed file beside it), so
/// memory is bounded by the largest turn, not the file. The output is the same, record for
/// record and byte for byte, as the conversion in memory. Returns the digest ([`digest_hex`])
/// of the file's bytes (one read).
///
/// Errors: those of [`import_file`]; [`Error::Io`] when a spill file cannot be
/// written or read back (the spill files are removed).
pub(crate) fn import_file_streaming(
    transcript: &Transcript,
    min_bytes: u64,
    tmp_name: &dyn Fn() -> std::io::Result<PathBuf>,
) -> Result<(String, FileImport, LineIndex)> {
    match stream_or_memory(transcript, min_bytes, WHOLE_READ_MAX, tmp_name) {
        Err(e) if is_not_exact(&e) => {
            stream_or_memory(transcript, u64::MAX, WHOLE_READ_MAX, tmp_name)
        }
        other => other,
    }
}

/// `true` for the error of a spilled record that did not read back as itself: the caller
/// converts the file in memory instead (the output must not depend on a JSON round trip).
pub(crate) fn is_not_exact(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if build::is_not_exact(source))
}

/// Files smaller than this many bytes (and than the streaming threshold) are read whole
/// before they are parsed: one copy out of the page cache instead of two (into a buffer, then
/// line by line), one call of the hash, and the sync mark's fingerprints taken from the bytes
/// in memory ([`LineIndex::source`]) rather than read again (on 100 MB of rollouts, 1,414
/// files, the two 64 KiB windows of each read up to 0.6 times the input a second time).
const WHOLE_READ_MAX: u64 = 4 << 20;

/// The error a reader's `read-error` diagnostic stands for.
fn read_error(path: &Path, d: &Diagnostic) -> Option<Error> {
    (d.kind == Some("read-error")).then(|| {
        Error::io(
            "cannot read",
            path,
            std::io::Error::other(d.message.clone()),
        )
    })
}

/// The rest of `events`, each given to `sink`, up to the first read error.
///
/// Errors: that read error.
fn read_rest<R: BufRead>(
    events: JsonlReader<R>,
    path: &Path,
    mut sink: impl FnMut(JsonlEvent),
) -> Result<()> {
    for event in events {
        if let JsonlEvent::Diagnostic(d) = &event
            && let Some(e) = read_error(path, d)
        {
            return Err(e);
        }
        sink(event);
    }
    Ok(())
}

/// A sink for [`read_rest`] that collects into `values` and `diagnostics`.
fn collect_into<'a>(
    values: &'a mut Vec<JsonLine>,
    diagnostics: &'a mut Vec<Diagnostic>,
) -> impl FnMut(JsonlEvent) + 'a {
    move |event| match event {
        JsonlEvent::Value(v) => values.push(v),
        JsonlEvent::Diagnostic(d) => diagnostics.push(d),
    }
}

/// A transcript of fewer than [`WHOLE_READ_MAX`] bytes (`size` when looked at), read whole and
/// converted in memory.
///
/// Errors: [`Error::Io`] when it cannot be read; those of [`classify`].
fn convert_whole(transcript: &Transcript, size: u64) -> Result<(String, FileImport, LineIndex)> {
    let path = transcript.path();
    let bytes = transcript.read_whole(size)?;
    let digest = xxh3_hex(xxhash_rust::xxh3::xxh3_128(&bytes));
    let mut events = JsonlReader::new(&bytes[..], path).skim_payloads(codex::SKIMMED_TYPES);
    let (format, mut values, mut diagnostics) = sniff(&mut events, path)?;
    if format.is_codex() {
        events.read_codex_lines();
    }
    read_rest(events, path, collect_into(&mut values, &mut diagnostics))?;
    let mut index = LineIndex::of(&values);
    index.source = Some(bytes);
    Ok((
        digest,
        FileImport::Memory(convert(path, format, values, diagnostics)),
        index,
    ))
}

/// [`import_file_streaming`]'s one try: files under `whole_max` bytes (and `min_bytes`) are
/// read whole ([`convert_whole`]), others in 64 KiB blocks.
fn stream_or_memory(
    transcript: &Transcript,
    min_bytes: u64,
    whole_max: u64,
    tmp_name: &dyn Fn() -> std::io::Result<PathBuf>,
) -> Result<(String, FileImport, LineIndex)> {
    let path = transcript.path();
    let size = transcript.len_now()?;
    if size < min_bytes.min(whole_max) {
        return convert_whole(transcript, size);
    }
    let mut reader = transcript.stream()?;
    // Skimmed as every other whole read is (the Codex `event_msg` payloads, a fifth of a
    // rollout's bytes, are not built as trees); the output is the same either way.
    let mut events = JsonlReader::new(&mut reader, path).skim_payloads(codex::SKIMMED_TYPES);
    let (format, mut values, mut diagnostics) = sniff(&mut events, path)?;
    if format.is_codex() {
        events.read_codex_lines();
    }
    let spill_dir = if format == SourceFormat::ClaudeCode && size >= min_bytes {
        Some(tmp_name().map_err(|e| Error::io("cannot create", path, e))?)
    } else {
        None
    };
    let Some(main_path) = spill_dir else {
        read_rest(events, path, collect_into(&mut values, &mut diagnostics))?;
        let digest = finish_hash(reader, path)?;
        let index = LineIndex::of(&values);
        return Ok((
            digest,
            FileImport::Memory(convert(path, format, values, diagnostics)),
            index,
        ));
    };
    let create = |p: &Path| -> std::io::Result<build::SpillFile> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(p)?;
        build::SpillFile::new(f, Some(p.to_owned()))
    };
    let main = create(&main_path).map_err(|e| Error::io("cannot create", &main_path, e))?;
    let dir = main_path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let spill = claude::SpillTo {
        main: std::rc::Rc::new(std::cell::RefCell::new(main)),
        shared: Box::new(move || build::SpillFile::new(tempfile::tempfile_in(&dir)?, None)),
    };
    let mut conv = claude::Converter::new(path, Some(spill));
    conv.reader_diagnostics = diagnostics;
    for v in values {
        conv.line(v);
    }
    read_rest(events, path, |event| match event {
        JsonlEvent::Value(v) => conv.line(v),
        JsonlEvent::Diagnostic(d) => conv.reader_diagnostics.push(d),
    })?;
    let spill_error = |e: std::io::Error| Error::io("cannot write a temporary file for", path, e);
    if let Some(e) = conv.take_error() {
        return Err(spill_error(e));
    }
    let restart = conv.last_restart;
    let digest = finish_hash(reader, path)?;
    let mut out = Vec::new();
    for (mut session, spill) in conv.finish(None) {
        let Some(spill) = spill else {
            return Err(spill_error(std::io::Error::other(
                "a session was not spilled",
            )));
        };
        if spill.not_exact {
            return Err(spill_error(std::io::Error::other(build::NotExact)));
        }
        let fresh = || -> std::io::Result<build::Spill> {
            let p = tmp_name()?;
            let file = create(&p)?;
            Ok(build::Spill::new(std::rc::Rc::new(
                std::cell::RefCell::new(file),
            )))
        };
        let (spill, _old) =
            build::finish_spilled(&mut session, spill, fresh).map_err(spill_error)?;
        if let Some(e) = spill.error() {
            return Err(spill_error(std::io::Error::other(e.to_owned())));
        }
        out.push(SpilledSession { session, spill });
    }
    let index = LineIndex {
        lines: restart.into_iter().collect(),
        source: None,
    };
    Ok((digest, FileImport::Spilled(out), index))
}

/// The digest ([`digest_hex`]) and the sessions of `path` converted in memory, read the two
/// ways a store import reads a file: whole (a file under 4 MiB), and in 64 KiB blocks (a larger
/// one): for tests and fuzzing, which compare them with each other and with [`import_file`].
#[doc(hidden)]
pub fn import_file_both_reads(path: &Path) -> [Result<(String, Vec<ImportedSession>)>; 2] {
    let no_spill = || -> std::io::Result<PathBuf> { Err(std::io::Error::other("no spill")) };
    [u64::MAX, 0].map(|whole_max| {
        let transcript = Transcript::open(path)?;
        let (digest, imported, _) = stream_or_memory(&transcript, u64::MAX, whole_max, &no_spill)?;
        match imported {
            FileImport::Memory(sessions) => Ok((digest, sessions)),
            FileImport::Spilled(_) => Err(Error::io(
                "cannot convert in memory",
                path,
                std::io::Error::other("spilled"),
            )),
        }
    })
}

/// The conversion [`crate::ingest`] runs on large Claude Code transcripts (each session's
/// records written to spill files in `dir` as they settle, memory bounded by the largest turn),
/// with the records read back into memory: for tests and fuzzing, which compare it with
/// [`import_file`] (the output must be the same, byte for byte). Other formats are converted in
/// memory, as [`import_file`] does. The spill files are removed before it returns.
///
/// Errors: those of [`import_file`]; [`Error::Io`] when a spill file in `dir` cannot be
/// written or read back.
pub fn import_file_spilled(path: &Path, dir: &Path) -> Result<Vec<ImportedSession>> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp_name = || -> std::io::Result<PathBuf> {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(dir.join(format!(".spill.{}.{n}.tmp", std::process::id())))
    };
    let (_, imported, _) = import_file_streaming(&Transcript::open(path)?, 0, &tmp_name)?;
    let read_back = match imported {
        FileImport::Memory(sessions) => return Ok(sessions),
        FileImport::Spilled(spilled) => spilled
            .into_iter()
            .map(|SpilledSession { mut session, spill }| {
                session.records = (0..spill.len())
                    .map(|i| spill.read(i))
                    .collect::<std::io::Result<Vec<SessionRecord>>>()
                    .map_err(|e| Error::io("cannot read back the records of", path, e))?;
                Ok(session)
            })
            .collect::<Result<Vec<ImportedSession>>>(),
    };
    // As `ingest` does: a record that does not read back as itself means a conversion in memory.
    match read_back {
        Err(e) if is_not_exact(&e) => import_file(path),
        other => other,
    }
}

/// Which of `leaves` are the `uuid` of a JSON value on a line starting before byte `end` of
/// `path` (for [`claude`]'s titles: a summary names its conversation's last message by uuid).
/// Only lines holding one of the leaves' text, or a `\u` escape, are parsed, and, when a leaf
/// holds U+FFFD, lines that are not UTF-8 (the reader replaces their bad bytes by U+FFFD, so
/// their text is not in the file as the leaf spells it). An unreadable file finds nothing.
pub(crate) fn uuids_present(
    path: &Path,
    leaves: &std::collections::HashSet<String>,
    end: u64,
) -> std::collections::HashSet<String> {
    let mut found = std::collections::HashSet::new();
    let Ok(file) = Transcript::open(path).map(Transcript::into_file) else {
        return found;
    };
    let finders: Vec<memchr::memmem::Finder<'_>> = leaves
        .iter()
        .map(|l| memchr::memmem::Finder::new(l.as_bytes()))
        .collect();
    let escapes = [
        memchr::memmem::Finder::new(b"\\u"),
        memchr::memmem::Finder::new(b"\\/"),
    ];
    let replaced = leaves
        .iter()
        .any(|l| l.contains(char::REPLACEMENT_CHARACTER));
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut offset = 0u64;
    while offset < end {
        line.clear();
        let limit = crate::jsonl::MAX_LINE_BYTES as u64 + 1;
        let n = match (&mut reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let start = offset;
        offset += n as u64;
        if line.last() != Some(&b'\n') && n as u64 == limit {
            // An over-long line: the reader skips it; so does this.
            let mut skip = Vec::new();
            loop {
                skip.clear();
                match (&mut reader).take(1 << 20).read_until(b'\n', &mut skip) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => {
                        offset += k as u64;
                        if skip.last() == Some(&b'\n') {
                            break;
                        }
                    }
                }
            }
            continue;
        }
        let wanted = finders
            .iter()
            .chain(&escapes)
            .any(|f| f.find(&line).is_some())
            || (replaced && std::str::from_utf8(&line).is_err());
        if !wanted {
            continue;
        }
        for event in JsonlReader::starting_at(&line[..], path, 1, start) {
            if let JsonlEvent::Value(v) = event
                && let Some(u) = v.value.get("uuid").and_then(Value::as_str)
                && leaves.contains(u)
            {
                found.insert(u.to_owned());
            }
        }
    }
    found
}

/// The `type` string of a JSON object, or `""`.
pub(crate) fn type_of(obj: &Map<String, Value>) -> &str {
    obj.get("type").and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import_unskimmed(path: &Path, bytes: &[u8]) -> Result<Vec<ImportedSession>> {
        import_bytes_whole(path, bytes, None)
    }

    fn codex_fixtures() -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts/codex");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        assert!(files.len() >= 5, "codex fixtures: {files:?}");
        files
    }

    /// A store import's two reads of a file, whole and in 64 KiB blocks, give the same digest
    /// (the XXH3 of the file's bytes) and the same sessions as `import_file`, on every bundled
    /// transcript of both formats (the block read keeps its 16-line sniff's early stop).
    #[test]
    fn both_reads_give_the_same_digest_and_sessions() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
            .into_iter()
            .flatten()
            .map(walkdir::DirEntry::into_path)
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "{files:?}");
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let digest = xxh3_hex(xxhash_rust::xxh3::xxh3_128(&bytes));
            let reference = import_file(&path);
            for read in import_file_both_reads(&path) {
                match (&reference, read) {
                    (Ok(a), Ok((d, b))) => {
                        assert_eq!(d, digest, "{path:?}");
                        assert_same(a, &b, &path.display().to_string());
                    }
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{path:?}"),
                    (a, b) => panic!("{path:?}: {:?} / {:?}", a.as_ref().err(), b.err()),
                }
            }
        }
    }

    /// Skimming the payloads of the lines the Codex importer only counts changes nothing in
    /// what an import gives: records, titles, reports (skipped tallies, diagnostics).
    #[test]
    fn skimming_changes_no_codex_import() {
        for path in codex_fixtures() {
            let bytes = std::fs::read(&path).unwrap();
            let skimmed = import_bytes(&path, &bytes, None).unwrap();
            let whole = import_unskimmed(&path, &bytes).unwrap();
            assert!(!whole.is_empty(), "{path:?}");
            assert_eq!(skimmed, whole, "{path:?}");
        }
    }

    /// The same sessions, and the same bytes once written (`==` on JSON objects ignores the
    /// order of their keys).
    fn assert_same(a: &[ImportedSession], b: &[ImportedSession], what: &str) {
        assert_eq!(a, b, "{what}");
        let bytes = |s: &[ImportedSession]| -> Vec<String> {
            s.iter()
                .flat_map(|s| &s.records)
                .map(|r| serde_json::to_string(r).unwrap())
                .collect()
        };
        assert_eq!(bytes(a), bytes(b), "{what}");
    }

    /// The Codex line reader (on once the file is known to be a rollout) changes nothing in
    /// what an import gives, on every fixture: its lines are read by it from the first.
    #[test]
    fn the_codex_line_reader_changes_no_codex_import() {
        let mut read_by_it = 0;
        for path in codex_fixtures() {
            let bytes = std::fs::read(&path).unwrap();
            let format = import_unskimmed(&path, &bytes).unwrap()[0].format;
            let fast = import_bytes(&path, &bytes, Some(format)).unwrap();
            let whole = import_bytes_whole(&path, &bytes, Some(format)).unwrap();
            assert_same(&fast, &whole, &path.display().to_string());
            let mut reader = JsonlReader::new(&bytes[..], &path);
            reader.read_codex_lines();
            read_by_it += reader
                .filter(|e| matches!(e, JsonlEvent::Value(v) if v.codex.is_some()))
                .count();
        }
        assert!(
            read_by_it > 300,
            "{read_by_it} lines read by the Codex line reader"
        );
    }

    /// Lines the Codex line reader must leave to the whole parse, or read with the same
    /// result: repeated keys (the last counts), the type after the payload, payloads that are
    /// not objects, timestamps that are not strings, surrogate escapes, escaped keys, numbers
    /// beyond `f64`, glued, damaged and torn lines, unknown item types, many fields, and
    /// compactions whose history holds anything (or is not an array, or comes twice).
    #[test]
    fn the_codex_line_reader_reads_odd_lines_as_the_whole_parse_does() {
        let path = Path::new("rollout.jsonl");
        let meta = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#;
        let many: String = (0..40).map(|i| format!(r#","f{i}":{i}"#)).collect();
        let odd = [
            r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}],"id":"a","end_turn":true}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"x","z":1,"y":2}],"a":1,"b":2,"c":3,"d":4}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","role":"assistant","content":"x"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:03Z","payload":{"type":"message","role":"user","content":"late type"},"type":"response_item"}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:04Z","type":"response_item","type":"event_msg","payload":{"type":"x"}}"#.to_owned(),
            r#"{"timestamp":5,"type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"e"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:06Z","type":"response_item","payload":[1,2]}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:07Z","type":"response_item","payload":{"type":"message","role":"user","content":"\ud83d\ude00 and \ud800"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:08Z","type":"response_item","payload":{"typ\u0065":"message","role":"user","content":"escaped key"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:09Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1","n":1e400}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:10Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Exit code: 2"}}{"type":"x"}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:11Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}} trailing"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:12Z","type":"response_item","payload":{"type":"brand_new_item","x":1}}"#.to_owned(),
            format!(r#"{{"timestamp":"2025-01-01T00:00:13Z","type":"response_item","payload":{{"type":"message","role":"user","content":"many"{many}}}}}"#),
            r#"{"timestamp":"2025-01-01T00:00:14Z","type":"event_msg","payload":{"type":"token_count","type":"other"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:15Z","type":"event_msg","payload":{"info":{"n":1},"type":7}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:16Z","type":"turn_context","payload":{"cwd":"/w"},"extra":[1,{"a":null}]}"#.to_owned(),
            r#"{"timestamp":"not a time","type":"world_state","payload":{"type":"s"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:18Z","type":"response_item","payload":{"type":"reasoning","id":"r1","summary":[{"type":"summary_text","text":"a"}],"content":null,"encrypted_content":"e","z":null}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:19Z","type":"response_item","payload":{"call_id":"c9","type":"custom_tool_call","name":"apply_patch","input":"*** Begin","status":"completed"}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:20Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c9","output":{"success":false,"content":"no"},"tools":[1]}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:21Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:22Z","type":"compacted","payload":{"message":"sum","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]},7,"s",[1,{"b":2}],null,{"type":"reasoning","summary":[],"encrypted_content":"e","x":1,"y":2}],"window_id":3,"first_window_id":1}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:23Z","type":"compacted","payload":{"window":1,"replacement_history":{"not":"an array"},"message":""}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:24Z","type":"compacted","payload":{"message":"m","replacement_history":[],"replacement_history":[{"type":"message","role":"user","content":"x"}]}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:25Z","type":"compacted","payload":{"message":"m","replacement_history":[{"type":"message","type":"compaction","content":"x"}]}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:26Z","type":"compacted","payload":{"message":7,"replacement_history":[{"type":"compaction","encrypted_content":"e"},{"type":"ghost_snapshot"}],"z":[1e400]}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:27Z","type":"compacted","payload":{"message":"m","replacement_history":5}}"#.to_owned(),
            r#"{"timestamp":"2025-01-01T00:00:28Z","type":"compacted","payload":{"message":"m","replacement_history":[[[1.5,-2,true]]]}}"#.to_owned(),
        ];
        let mut text = format!("{meta}\n");
        for line in &odd {
            text.push_str(line);
            text.push('\n');
        }
        let bytes = text.as_bytes();
        for format in [SourceFormat::Codex, SourceFormat::CodexLegacy] {
            let fast = import_bytes(path, bytes, Some(format)).unwrap();
            let whole = import_bytes_whole(path, bytes, Some(format)).unwrap();
            assert_same(&fast, &whole, &format!("{format:?}"));
        }
        // Each line alone too, and torn (no final newline).
        for line in &odd {
            for tail in ["\n", ""] {
                let bytes = format!("{line}{tail}");
                let fast = import_bytes(path, bytes.as_bytes(), Some(SourceFormat::Codex)).unwrap();
                let whole =
                    import_bytes_whole(path, bytes.as_bytes(), Some(SourceFormat::Codex)).unwrap();
                assert_same(&fast, &whole, line);
            }
        }
    }

    /// Lines that are JSON text but that the whole parse refuses (a number beyond `f64`, a
    /// payload nested deeper than serde_json's limit) are refused (and reported) the same way
    /// when their payload is skimmed.
    #[test]
    fn skimming_refuses_what_the_whole_parse_refuses() {
        let path = codex_fixtures().remove(0);
        let mut bytes = std::fs::read(&path).unwrap();
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for payload in [
            r#"{"type":"token_count","n":1e400}"#.to_owned(),
            r#"{"type":"token_count","n":-123456789e999}"#.to_owned(),
            format!(r#"{{"type":"token_count","info":{deep}}}"#),
        ] {
            for ty in codex::SKIMMED_TYPES {
                bytes.extend_from_slice(
                    format!(
                        r#"{{"timestamp":"2025-01-01T00:00:00Z","type":"{ty}","payload":{payload}}}"#
                    )
                    .as_bytes(),
                );
                bytes.push(b'\n');
            }
        }
        let skimmed = import_bytes(&path, &bytes, None).unwrap();
        let whole = import_unskimmed(&path, &bytes).unwrap();
        let errors = |s: &[ImportedSession]| {
            s.iter()
                .flat_map(|s| &s.report.diagnostics)
                .filter(|d| d.severity == crate::Severity::Error)
                .count()
        };
        assert_eq!(errors(&whole), 9, "{:?}", whole[0].report.diagnostics);
        assert_eq!(skimmed, whole);
    }
}
