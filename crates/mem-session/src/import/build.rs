//! Building a record list from converted messages: merging streamed pieces of one model turn,
//! moving late tool results next to their calls, and counting the report.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use mem_core::{ContentBlock, Message, Role};
use serde_json::{Map, Value};

use super::ImportedSession;
use crate::diagnostic::Diagnostic;
use crate::record::{RecordType, SessionRecord};

/// When an assistant message may be merged into the previous assistant record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merge<'a> {
    /// Never: a new message.
    No,
    /// When the previous record is that assistant message (Codex items emitted back to back).
    Adjacent,
    /// When the last assistant message has this API message id and only tool-result records
    /// follow it (Claude Code writes one line per content block of a streamed message, with the
    /// results of parallel calls between them).
    SameId(&'a str),
}

/// Appends converted messages as records, merging where the source split one message.
///
/// In memory by default: [`Builder::records`] holds every record. With a [`Spill`]
/// ([`Builder::spilling`]), records that can no longer change (everything before the last
/// assistant message that may still take a merged piece, and before the last record) are
/// written out as they settle, so `records` holds only that short window and memory is bounded
/// by the largest turn, not the session. Indices are absolute either way ([`Builder::len`],
/// [`Builder::get`]).
#[derive(Debug, Default)]
pub(crate) struct Builder {
    /// The records not written out yet: all of them unless spilling.
    pub records: Vec<SessionRecord>,
    /// Absolute index of `records[0]` (records spilled before it).
    base: usize,
    /// Index and merge id of the last assistant record.
    last_assistant: Option<(usize, Option<String>)>,
    /// Index of the last record that is not a message (a boundary): a kept segment never
    /// reaches back across it.
    last_non_message: Option<usize>,
    /// Where settled records go, when spilling.
    spill: Option<Spill>,
    /// The window written out by [`Builder::park`]: (offset, length) of each record's line in
    /// the spill file, read back by [`Builder::unpark`].
    parked: Vec<(u64, usize)>,
}

impl Builder {
    /// A builder that writes settled records to `spill`.
    pub(crate) fn spilling(spill: Spill) -> Builder {
        Builder {
            spill: Some(spill),
            ..Builder::default()
        }
    }

    /// Records so far (spilled and in memory).
    pub(crate) fn len(&self) -> usize {
        self.base + self.records.len()
    }

    /// Record `i` (absolute): borrowed from memory, or read back from the spill.
    ///
    /// Errors: I/O or a damaged spill (as [`std::io::Error`]).
    pub(crate) fn get(&self, i: usize) -> std::io::Result<std::borrow::Cow<'_, SessionRecord>> {
        if i >= self.base {
            return self
                .records
                .get(i - self.base)
                .map(std::borrow::Cow::Borrowed)
                .ok_or_else(|| std::io::Error::other("record index out of range"));
        }
        match &self.spill {
            Some(spill) => spill.read(i).map(std::borrow::Cow::Owned),
            None => Err(std::io::Error::other("record index out of range")),
        }
    }

    /// Records a failure to read the spill back (reported when the spill is finished).
    pub(crate) fn fail(&mut self, e: std::io::Error) {
        if let Some(spill) = self.spill.as_mut() {
            spill.not_exact |= is_not_exact(&e);
            spill.error.get_or_insert_with(|| e.to_string());
        }
    }

    /// Index of the first record after the last non-message record (a boundary).
    pub(crate) fn since_last_boundary(&self) -> usize {
        self.last_non_message.map_or(0, |i| i + 1)
    }

    /// Adds a message record (or merges it into the previous one, see [`Merge`]).
    /// Tool-result-only user messages merge into a tool-result record right before them.
    pub(crate) fn push(&mut self, message: Message, timestamp: Option<String>, merge: Merge<'_>) {
        match message.role {
            Role::Assistant => {
                if let Some(idx) = self.merge_target(merge)
                    && let Some(prev) = self.records[idx - self.base].message.as_mut()
                {
                    extend(prev, message);
                    return;
                }
                let id = match merge {
                    Merge::SameId(id) => Some(id.to_owned()),
                    _ => None,
                };
                self.records
                    .push(SessionRecord::message(message, timestamp));
                self.last_assistant = Some((self.len() - 1, id));
            }
            Role::User if message.is_tool_result_only() => {
                if let Some(last) = self.records.last_mut()
                    && last.record_type == RecordType::ToolResult
                    && let Some(prev) = last.message.as_mut()
                {
                    extend(prev, message);
                    return;
                }
                self.records
                    .push(SessionRecord::message(message, timestamp));
            }
            Role::User | Role::System => {
                self.records
                    .push(SessionRecord::message(message, timestamp));
            }
        }
        self.settle();
    }

    fn merge_target(&self, merge: Merge<'_>) -> Option<usize> {
        let (idx, id) = self.last_assistant.as_ref()?;
        let idx = *idx;
        // Spilled: a record that was not a tool result followed it, so it takes no more pieces.
        if idx < self.base {
            return None;
        }
        match merge {
            Merge::No => None,
            Merge::Adjacent => (idx + 1 == self.len()).then_some(idx),
            Merge::SameId(want) => {
                let after_ok = self.records[idx - self.base + 1..]
                    .iter()
                    .all(|r| r.record_type == RecordType::ToolResult);
                (id.as_deref() == Some(want) && after_ok).then_some(idx)
            }
        }
    }

    /// Adds a boundary (or any non-message record); nothing merges across it.
    pub(crate) fn push_record(&mut self, record: SessionRecord) {
        if record.message.is_none() {
            self.last_non_message = Some(self.len());
        }
        self.records.push(record);
        self.last_assistant = None;
        self.settle();
    }

    /// Writes out the records that can no longer change (when spilling).
    fn settle(&mut self) {
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        let len = self.base + self.records.len();
        // The last record may still take tool results; the last assistant message may still
        // take streamed pieces while only tool results follow it.
        let mut keep = len.saturating_sub(1);
        if let Some((a, _)) = &self.last_assistant
            && *a >= self.base
            && self.records[*a - self.base + 1..]
                .iter()
                .all(|r| r.record_type == RecordType::ToolResult)
        {
            keep = keep.min(*a);
        }
        if keep <= self.base {
            return;
        }
        for record in self.records.drain(..keep - self.base) {
            spill.write(&record);
        }
        self.base = keep;
    }

    /// Writes the records still in memory (which may still change) to the spill file without
    /// settling them, so a session not being added to (a sidechain while other lines come)
    /// holds none in memory; [`Builder::unpark`] reads them back. No-op unless spilling.
    pub(crate) fn park(&mut self) {
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        // Only a window whose every record reads back as itself is parked (a block whose
        // JSON does not round-trip stays in memory: the output must not change).
        let mut lines = Vec::with_capacity(self.records.len());
        for record in &self.records {
            match crate::record::to_json_vec(record) {
                Ok(line) if exact(&line).is_ok() => lines.push(line),
                _ => return,
            }
        }
        // Its capacity too: a parked session may wait for the rest of the file, and a file can
        // hold hundreds of them.
        self.records = Vec::new();
        for line in lines {
            let at = spill.file.borrow_mut().write(&line);
            self.parked.push((at, line.len()));
        }
    }

    /// Reads back the records [`Builder::park`] wrote out.
    pub(crate) fn unpark(&mut self) {
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        for (at, len) in std::mem::take(&mut self.parked) {
            let record = spill
                .file
                .borrow_mut()
                .read_at(at, len)
                .and_then(|line| exact(&line));
            match record {
                Ok(r) => self.records.push(r),
                Err(e) => {
                    spill.not_exact |= is_not_exact(&e);
                    spill.error.get_or_insert_with(|| e.to_string());
                }
            }
        }
    }

    /// Writes out every record left in memory and returns the spill (`None` when not
    /// spilling: the records are in [`Builder::records`]).
    pub(crate) fn finish_spill(&mut self) -> Option<Spill> {
        self.unpark();
        let mut spill = self.spill.take()?;
        for record in self.records.drain(..) {
            spill.write(&record);
        }
        self.base = spill.len();
        Some(spill)
    }

    /// The messages of the message records, in order (for a boundary's kept tail).
    pub(crate) fn into_messages(self) -> Vec<Message> {
        self.records.into_iter().filter_map(|r| r.message).collect()
    }
}

/// A file that spilled records are written to: a session's own temporary `.jsonl` (its
/// records back to back, exactly as the session file will hold them), or one file shared by
/// several sessions (sidechains), each keeping where its records are.
#[derive(Debug)]
pub(crate) struct SpillFile {
    writer: std::io::BufWriter<std::fs::File>,
    /// A second handle for positional reads.
    reader: std::fs::File,
    /// Bytes written so far.
    pos: u64,
    /// The file's path (`None` for an unnamed temporary file), removed on drop unless taken
    /// by [`SpillFile::into_file`].
    path: RemoveOnDrop,
    /// The first write error (reported when the spill is finished).
    error: Option<std::io::Error>,
}

impl SpillFile {
    /// Wraps an open, empty, read-write `file` (at `path` when it has a name).
    pub(crate) fn new(
        file: std::fs::File,
        path: Option<std::path::PathBuf>,
    ) -> std::io::Result<SpillFile> {
        let reader = file.try_clone()?;
        Ok(SpillFile {
            writer: std::io::BufWriter::with_capacity(1 << 16, file),
            reader,
            pos: 0,
            path: RemoveOnDrop(path),
            error: None,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> u64 {
        use std::io::Write;
        let at = self.pos;
        if self.error.is_none()
            && let Err(e) = self.writer.write_all(bytes)
        {
            self.error = Some(e);
        }
        self.pos += bytes.len() as u64;
        at
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        use std::io::Write;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.writer.flush()?;
        let mut buf = vec![0u8; len];
        read_exact_at(&self.reader, &mut buf, offset)?;
        Ok(buf)
    }

    /// Flushes the writes and returns the file and its path; errors: the first write error.
    pub(crate) fn into_file(
        mut self,
    ) -> std::io::Result<(std::fs::File, Option<std::path::PathBuf>, u64)> {
        use std::io::Write;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.writer.flush()?;
        let file = self.writer.into_inner().map_err(|e| e.into_error())?;
        Ok((file, self.path.0.take(), self.pos))
    }
}

/// A spilled record that does not read back as itself (see [`Spill::read`]).
#[derive(Debug)]
pub(crate) struct NotExact;

impl std::fmt::Display for NotExact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a record does not read back as written")
    }
}

impl std::error::Error for NotExact {}

/// `true` when `e` is (or wraps) [`NotExact`].
pub(crate) fn is_not_exact(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<NotExact>())
}

/// Parses an encoded record line (newline optional) and checks that it encodes back to the
/// same bytes.
fn exact(line: &[u8]) -> std::io::Result<SessionRecord> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let record: SessionRecord = serde_json::from_slice(body).map_err(std::io::Error::other)?;
    match crate::record::to_json_vec(&record) {
        Ok(again) if again == body => Ok(record),
        _ => Err(std::io::Error::other(NotExact)),
    }
}

/// A temporary file's path, removed when dropped.
#[derive(Debug)]
struct RemoveOnDrop(Option<std::path::PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// One session's spilled records: where each is in its [`SpillFile`] and what the finishing
/// pass needs to know about them ([`Tally`]), gathered as they were written.
#[derive(Debug)]
pub(crate) struct Spill {
    file: std::rc::Rc<std::cell::RefCell<SpillFile>>,
    /// Length of each record's line, newline included (4 bytes a record: the only memory a
    /// spill needs per record).
    lens: Vec<u32>,
    /// (record index, byte offset) of every 64th record and of each record not right after
    /// the previous one (when the file is shared): record `i`'s offset is the last mark's plus
    /// the lengths between them.
    marks: Vec<(usize, u64)>,
    /// Where the next record would start if it follows the last one.
    next: u64,
    /// Every record follows the previous one, the first at byte 0.
    contiguous: bool,
    /// Facts about the records written (for a [`Spill::deferred`] spill, once it is finished).
    pub(crate) tally: Tally,
    /// A record could not be encoded (reported when the spill is finished).
    error: Option<String>,
    /// A record read back was not itself ([`NotExact`]): the file must be converted in memory.
    pub(crate) not_exact: bool,
    /// The records are tallied when the spill is finished ([`Spill::tally_deferred`]), not
    /// as they are written ([`Spill::deferred`]).
    deferred: bool,
}

impl Spill {
    /// A spill writing to `file` (shared with other spills or not).
    pub(crate) fn new(file: std::rc::Rc<std::cell::RefCell<SpillFile>>) -> Spill {
        Spill {
            file,
            lens: Vec::new(),
            marks: Vec::new(),
            next: 0,
            contiguous: true,
            tally: Tally::default(),
            error: None,
            not_exact: false,
            deferred: false,
        }
    }

    /// A spill writing to `file` whose records are tallied only when it is finished
    /// ([`Spill::tally_deferred`], by reading them back): for the sidechains of a file, which
    /// wait for the end of the file, so what each holds meanwhile does not grow with its tool
    /// ids (a file can hold hundreds of sidechains).
    pub(crate) fn deferred(file: std::rc::Rc<std::cell::RefCell<SpillFile>>) -> Spill {
        Spill {
            deferred: true,
            ..Spill::new(file)
        }
    }

    /// Tallies the records of a [`Spill::deferred`] spill, reading them back in order (each
    /// as written, see [`Spill::read`]): the same [`Tally`] as if they had been tallied as
    /// they were written. No-op for other spills, or when a record could not be encoded (the
    /// spill's [`Spill::error`] is reported instead).
    ///
    /// Errors: I/O, or [`NotExact`] (the caller converts the file in memory).
    pub(crate) fn tally_deferred(&mut self) -> std::io::Result<()> {
        if !std::mem::take(&mut self.deferred) || self.error.is_some() {
            return Ok(());
        }
        for i in 0..self.len() {
            let record = self.read(i)?;
            self.tally.see(i, &record);
        }
        Ok(())
    }

    /// Records written.
    pub(crate) fn len(&self) -> usize {
        self.lens.len()
    }

    /// Byte offset of record `i` (`i < len`).
    pub(crate) fn offset(&self, i: usize) -> Option<u64> {
        let m = self
            .marks
            .partition_point(|&(k, _)| k <= i)
            .checked_sub(1)?;
        let (k, at) = self.marks[m];
        let between: u64 = self.lens.get(k..i)?.iter().map(|&l| u64::from(l)).sum();
        Some(at + between)
    }

    /// Appends one record, encoded as the session file holds it.
    pub(crate) fn write(&mut self, record: &SessionRecord) {
        let mut line = match crate::record::to_json_vec(record) {
            Ok(line) => line,
            Err(e) => {
                self.error.get_or_insert_with(|| e.to_string());
                Vec::new()
            }
        };
        line.push(b'\n');
        if !self.deferred {
            self.tally.see(self.lens.len(), record);
        }
        self.write_line(&line);
    }

    /// The encoded line of record `i`, newline included.
    pub(crate) fn read_line(&self, i: usize) -> std::io::Result<Vec<u8>> {
        let (Some(offset), Some(&len)) = (self.offset(i), self.lens.get(i)) else {
            return Err(std::io::Error::other("record index out of range"));
        };
        self.file.borrow_mut().read_at(offset, len as usize)
    }

    /// Record `i`, read back. Errors with [`NotExact`] when the record read back does not
    /// encode to the same bytes (a content block whose JSON does not round-trip: the caller
    /// converts the file in memory instead, so the output never depends on the round trip).
    pub(crate) fn read(&self, i: usize) -> std::io::Result<SessionRecord> {
        let line = self.read_line(i)?;
        exact(&line)
    }

    /// `true` when the records are the whole file, back to back from its start (the file can
    /// become the session file as it is).
    pub(crate) fn is_whole_file(&self) -> bool {
        self.contiguous && self.next == self.file.borrow().pos
    }

    /// Appends one record's encoded line (newline included) as it is, without tallying it.
    pub(crate) fn write_line(&mut self, line: &[u8]) {
        let at = self.file.borrow_mut().write(line);
        let i = self.lens.len();
        if at != self.next || i.is_multiple_of(64) {
            self.marks.push((i, at));
        }
        self.contiguous &= at == self.next;
        self.next = at + line.len() as u64;
        let len = u32::try_from(line.len()).unwrap_or_else(|_| {
            self.error
                .get_or_insert_with(|| "a record of 4 GiB or more".to_owned());
            0
        });
        self.lens.push(len);
    }

    /// The last (up to) `k` bytes of the spill file.
    pub(crate) fn file_tail(&self, k: u64) -> std::io::Result<Vec<u8>> {
        let mut file = self.file.borrow_mut();
        let end = file.pos;
        let start = end.saturating_sub(k);
        file.read_at(start, usize::try_from(end - start).unwrap_or(0))
    }

    /// Bytes written to the spill file (by every spill sharing it).
    pub(crate) fn file_len(&self) -> u64 {
        self.file.borrow().pos
    }

    /// `true` when the spill file has a name (it is the spill's own, not shared).
    pub(crate) fn is_named(&self) -> bool {
        self.file.borrow().path.0.is_some()
    }

    /// The spill file, flushed, with its path and length, when this spill is its only user.
    ///
    /// Errors: the first write error; a file still shared.
    pub(crate) fn into_file(
        self,
    ) -> std::io::Result<(std::fs::File, Option<std::path::PathBuf>, u64)> {
        match std::rc::Rc::try_unwrap(self.file) {
            Ok(cell) => cell.into_inner().into_file(),
            Err(_) => Err(std::io::Error::other("the spill file is still shared")),
        }
    }

    /// An encoding error, if a record could not be written.
    pub(crate) fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// What the finishing pass ([`finish`]: relocation, orphan results, counts) needs to know
/// about a session's records, gathered one record at a time in order, so a spilled session is
/// finished without reading its records again (unless a tool result must move).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// What is known of each tool id (one entry per distinct id, keyed by the id's hash: 40
    /// bytes of key and facts, plus the table's control byte and spare room; with the record
    /// offsets, the only state that grows with the session).
    ids: HashMap<IdKey, IdFacts>,
    /// The text of the ids whose first tool_result came before any tool_use (orphans unless a
    /// call comes later), for [`Tally::orphan_diagnostics`]: removed when a call comes.
    orphan_text: HashMap<IdKey, Box<str>>,
    /// Distinct tool_result ids seen so far (the order of first appearance).
    results_seen: usize,
    /// Last assistant record, last boundary record (compact boundary or compression).
    last_assistant: Option<usize>,
    last_boundary: Option<usize>,
    /// Tool results to move: (record, block) → assistant record, in record order.
    pub(crate) moving: Vec<((usize, usize), usize)>,
    /// Warnings about the moves, in order.
    moved: Vec<(usize, String)>,
    /// Message records (system prompts excluded), `compact_boundary` records.
    pub(crate) messages: usize,
    pub(crate) boundaries: usize,
    /// Records seen.
    pub(crate) records: usize,
    /// The last record a compact boundary parses from (the meta counts tokens after it).
    pub(crate) last_parsed_boundary: Option<usize>,
    /// The last record an incremental re-import may restart at (see `ingest::sync_cut`).
    pub(crate) cut: Option<usize>,
    /// `Task`/`Agent` calls: prompt key → description title (first wins).
    pub(crate) tasks: HashMap<[u8; 32], String>,
}

impl Tally {
    /// Takes in record `i` (the records come in order, each once, in their final form).
    pub(crate) fn see(&mut self, i: usize, r: &SessionRecord) {
        self.records = i + 1;
        if let Some(m) = &r.message {
            if r.record_type != RecordType::SystemPrompt {
                self.messages += 1;
            }
            for block in &m.content {
                if let ContentBlock::ToolUse { name, input, .. } = block
                    && (name == "Task" || name == "Agent")
                    && let Some(prompt) = input.get("prompt").and_then(Value::as_str)
                    && let Some(desc) = input.get("description").and_then(Value::as_str)
                    && let Some(title) = super::text::shorten_title(desc)
                {
                    self.tasks.entry(task_key(prompt)).or_insert(title);
                }
            }
        }
        if r.record_type == RecordType::CompactBoundary {
            self.boundaries += 1;
        }
        if matches!(
            r.record_type,
            RecordType::CompactBoundary | RecordType::Compression
        ) && crate::record::parse_compact_boundary(r).is_some()
        {
            self.last_parsed_boundary = Some(i);
        }
        let restart = match (r.record_type, &r.message) {
            (RecordType::Assistant, Some(m)) => m.metadata.contains_key("source_line"),
            (RecordType::User, Some(m)) => {
                !m.is_tool_result_only() && m.metadata.contains_key("source_line")
            }
            _ => false,
        };
        if restart {
            self.cut = Some(i);
        }
        // Relocation (as `relocate_late_results`): `use_at` holds the records before `i`.
        match r.record_type {
            RecordType::Assistant => self.last_assistant = Some(i),
            RecordType::CompactBoundary | RecordType::Compression => self.last_boundary = Some(i),
            _ => {}
        }
        if r.record_type == RecordType::Assistant {
            if let Some(m) = &r.message {
                for id in m.tool_use_ids() {
                    self.facts(IdKey::of(id), |f| f.first_use.set_once(i));
                }
            }
        } else if let Some(m) = &r.message {
            for (j, block) in m.content.iter().enumerate() {
                if let ContentBlock::ToolResult { tool_use_id, .. } = block
                    && let Some(a) = self
                        .ids
                        .get(&IdKey::of(tool_use_id))
                        .and_then(|f| f.first_use.get())
                    && a < i
                    && self.last_assistant.is_some_and(|l| l > a)
                    && self.last_boundary.is_none_or(|b| b < a)
                {
                    self.moving.push(((i, j), a));
                    let line = m
                        .metadata
                        .get("source_line")
                        .and_then(Value::as_u64)
                        .map_or(0, |l| usize::try_from(l).unwrap_or(0));
                    self.moved.push((line, tool_use_id.clone()));
                }
            }
        }
        // Orphans and pairs (as `report_orphan_results` and `count`).
        let kept = r.keep_messages.iter().flatten();
        for m in r.message.iter().chain(kept) {
            for id in m.tool_use_ids() {
                let key = IdKey::of(id);
                let first_call = self.facts(key, |f| {
                    f.calls = f.calls.saturating_add(1);
                    f.calls == 1
                });
                if first_call && !self.orphan_text.is_empty() {
                    self.orphan_text.remove(&key);
                }
            }
            for id in m.tool_result_ids() {
                let key = IdKey::of(id);
                let next = self.results_seen;
                let (first, called) = self.facts(key, |f| {
                    let first = f.first_result.get().is_none();
                    f.first_result.set_once(next);
                    (first, f.calls > 0)
                });
                if first {
                    self.results_seen += 1;
                    if !called {
                        self.orphan_text.insert(key, id.into());
                    }
                }
            }
        }
    }

    /// Frees what only [`finish_spilled`] needs (the tool ids, the moves, the `Task` titles),
    /// keeping the counts and [`Tally::cut`]: a finished session waiting for its file's other
    /// sessions holds no state that grows with it.
    pub(crate) fn release(&mut self) {
        self.ids = HashMap::new();
        self.orphan_text = HashMap::new();
        self.moving = Vec::new();
        self.moved = Vec::new();
        self.tasks = HashMap::new();
    }

    /// Updates the facts of the id of `key` (a new entry only for a new id: no allocation
    /// otherwise).
    fn facts<T>(&mut self, key: IdKey, f: impl FnOnce(&mut IdFacts) -> T) -> T {
        f(self.ids.entry(key).or_default())
    }

    /// tool_use blocks whose result is in the session.
    pub(crate) fn tool_pairs(&self) -> usize {
        self.ids
            .values()
            .filter(|f| f.first_result.get().is_some())
            .map(|f| f.calls as usize)
            .sum()
    }

    /// The warnings of [`relocate_late_results`] for the moves found.
    pub(crate) fn move_diagnostics(&self, path: &Path) -> Vec<Diagnostic> {
        self.moved
            .iter()
            .map(|(line, id)| {
                Diagnostic::warning(
                    path,
                    *line,
                    format!(
                        "the result of tool call `{id}` came after a later model turn; moved \
                         next to its call"
                    ),
                )
            })
            .collect()
    }

    /// The warnings of [`report_orphan_results`].
    pub(crate) fn orphan_diagnostics(&self, path: &Path) -> Vec<Diagnostic> {
        // The ids in `orphan_text` are those with a result and no call (a call removes its id).
        let mut orphans: Vec<(usize, &str)> = self
            .orphan_text
            .iter()
            .filter_map(|(key, id)| Some((self.ids.get(key)?.first_result.get()?, &**id)))
            .collect();
        orphans.sort_unstable();
        orphans
            .into_iter()
            .map(|(_, id)| {
                Diagnostic::warning(
                    path,
                    0,
                    format!(
                        "tool result for `{id}` has no tool call in the transcript; kept, but a \
                         resume leaves it out"
                    ),
                )
            })
            .collect()
    }
}

/// What [`Tally`] knows of one tool id (24 bytes).
#[derive(Debug, Default)]
struct IdFacts {
    /// The first assistant record holding a tool_use with the id.
    first_use: Index,
    /// Rank of the id among the distinct tool_result ids, by first appearance.
    first_result: Index,
    /// tool_use blocks with the id, in messages and kept messages (saturating: 4 billion
    /// blocks of one id would take a transcript of over 100 GB).
    calls: u32,
}

/// An index set once, in 8 bytes (`Option<usize>` takes 16): the index plus one.
#[derive(Debug, Default, Clone, Copy)]
struct Index(Option<std::num::NonZeroUsize>);

impl Index {
    fn get(self) -> Option<usize> {
        self.0.map(|n| n.get() - 1)
    }

    /// Sets the index to `i` unless it is set already.
    fn set_once(&mut self, i: usize) {
        if self.0.is_none() {
            self.0 = std::num::NonZeroUsize::new(i.saturating_add(1));
        }
    }
}

/// A tool id or message uuid reduced to its XXH3-128 hash: 16 bytes and no allocation
/// whatever the id's length, for the maps a conversion keeps for a whole session (one entry
/// per distinct id, so their size grows with the session). Two distinct ids share a key with
/// odds of about n² / 2¹²⁹ for n ids: never, in practice, for ids not crafted to collide
/// (XXH3 is not a cryptographic hash; a crafted pair would only confuse that file's import).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct IdKey([u64; 2]);

impl IdKey {
    /// The key of `id`.
    pub(crate) fn of(id: &str) -> IdKey {
        let h = xxhash_rust::xxh3::xxh3_128(id.as_bytes());
        IdKey([h as u64, (h >> 64) as u64])
    }
}

/// The key a `Task` prompt is looked up by (its trimmed text's SHA-256): sidechain titles.
pub(crate) fn task_key(prompt: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(prompt.trim().as_bytes()).into()
}

/// [`relocate_late_results`] over a spilled session: reads `from`'s records one at a time and
/// writes the result to `to` (a fresh spill), fetching each moving result block from `from`
/// when its call's record is written. Memory: one record and the blocks moving to it.
///
/// Errors: I/O on either spill.
pub(crate) fn relocate_spilled(from: &Spill, to: &mut Spill) -> std::io::Result<()> {
    let moving: HashMap<(usize, usize), usize> = from.tally.moving.iter().copied().collect();
    let mut parked: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    for &((i, j), a) in &from.tally.moving {
        parked.entry(a).or_default().push((i, j));
    }
    let mut last: Option<SessionRecord> = None;
    let mut pending: Vec<ContentBlock> = Vec::new();
    let push = |to: &mut Spill, last: &mut Option<SessionRecord>, r: SessionRecord| {
        if let Some(prev) = last.replace(r) {
            to.write(&prev);
        }
    };
    for i in 0..from.len() {
        let mut r = from.read(i)?;
        if let Some(m) = r.message.as_mut()
            && (0..m.content.len()).any(|j| moving.contains_key(&(i, j)))
        {
            let blocks = std::mem::take(&mut m.content);
            for (j, block) in blocks.into_iter().enumerate() {
                if !moving.contains_key(&(i, j)) {
                    m.content.push(block);
                }
            }
            if m.content.is_empty() {
                continue;
            }
            r.record_type = RecordType::for_message(m);
        }
        if !pending.is_empty() && r.record_type != RecordType::ToolResult {
            flush_parked_last(to, &mut last, &mut pending);
        }
        let is_assistant = r.record_type == RecordType::Assistant;
        push(to, &mut last, r);
        if is_assistant && let Some(sources) = parked.remove(&i) {
            for (si, sj) in sources {
                let source = from.read(si)?;
                if let Some(block) = source.message.and_then(|m| m.content.into_iter().nth(sj)) {
                    pending.push(block);
                }
            }
        }
    }
    flush_parked_last(to, &mut last, &mut pending);
    if let Some(prev) = last.take() {
        to.write(&prev);
    }
    Ok(())
}

/// [`flush_parked`] where only the last output record is still in memory.
fn flush_parked_last(
    to: &mut Spill,
    last: &mut Option<SessionRecord>,
    pending: &mut Vec<ContentBlock>,
) {
    if pending.is_empty() {
        return;
    }
    let blocks = std::mem::take(pending);
    if let Some(record) = join_or_relocate(last.as_mut(), blocks)
        && let Some(prev) = last.replace(record)
    {
        to.write(&prev);
    }
}

/// Adds relocated tool_result `blocks` to `last` when it is a tool_result record (`None`), or
/// returns the new user record (`"relocated": true`) that carries them.
fn join_or_relocate(
    last: Option<&mut SessionRecord>,
    blocks: Vec<ContentBlock>,
) -> Option<SessionRecord> {
    if let Some(prev) = last
        && prev.record_type == RecordType::ToolResult
        && let Some(m) = prev.message.as_mut()
    {
        m.content.extend(blocks);
        return None;
    }
    let mut metadata = Map::new();
    metadata.insert("relocated".to_owned(), Value::Bool(true));
    let message = Message {
        role: Role::User,
        content: blocks,
        metadata,
    };
    Some(SessionRecord::message(message, None))
}

/// The most an imported boundary keeps inline, in bytes of JSON (1 MiB): a source's kept tail
/// (Claude's `preservedSegment`, Codex's `replacement_history`) beyond it is cut to its newest
/// messages that fit (at least one), with a warning. mewmem's own boundaries are bounded by the
/// seed's `KEEP_MAX_TOKENS` (40,000 tokens, `mem-compact`); 1 MiB is far above what real sources
/// keep and bounds what a damaged or trimmed one can make a boundary hold.
pub const IMPORTED_KEEP_MAX_BYTES: usize = 1 << 20;

/// Cuts `kept` to its newest messages within [`IMPORTED_KEEP_MAX_BYTES`] (see there), pushing a
/// warning at `path:line` when anything was cut.
pub(crate) fn cap_kept(
    mut kept: Vec<Message>,
    path: &Path,
    line: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Message> {
    let start = cap_start(kept.len(), |i| json_len(&kept[i]), path, line, diagnostics);
    kept.drain(..start);
    kept
}

/// The bytes of `message` as JSON (as [`crate::record::write_json`] writes it, into a
/// per-thread buffer that keeps at most 1 MiB between calls).
pub(crate) fn json_len(message: &Message) -> usize {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|buf| {
        buf.clear();
        let len = match crate::record::write_json(buf, message) {
            Ok(()) => buf.len(),
            Err(_) => 0,
        };
        if buf.capacity() > 1 << 20 {
            *buf = Vec::new();
        }
        len
    })
}

/// [`cap_kept`] for `n` messages (oldest first) whose JSON sizes `size_of` gives, newest
/// asked first: how many of the oldest to drop, with the warning pushed when any are.
pub(crate) fn cap_start(
    n: usize,
    mut size_of: impl FnMut(usize) -> usize,
    path: &Path,
    line: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> usize {
    let mut total = 0usize;
    let mut start = n;
    while start > 0 {
        let size = size_of(start - 1);
        if total + size > IMPORTED_KEEP_MAX_BYTES && start < n {
            break;
        }
        total += size;
        start -= 1;
    }
    if start > 0 {
        diagnostics.push(Diagnostic::warning(
            path,
            line,
            format!(
                "the compaction keeps {n} messages verbatim, more than {} KiB; kept the newest {} \
                 ({} KiB), the {start} older ones are left to the summary",
                IMPORTED_KEEP_MAX_BYTES >> 10,
                n - start,
                total >> 10
            ),
        ));
    }
    start
}

/// Moves `from`'s blocks into `into` and merges the metadata: the first piece's `uuid` /
/// `codex_item_id` stay, later ones are listed in `merged_uuids` / `merged_codex_item_ids`;
/// `usage` and `stop_reason` take the last piece's value; other keys keep the first value.
fn extend(into: &mut Message, from: Message) {
    into.content.extend(from.content);
    for (key, value) in from.metadata {
        match key.as_str() {
            "uuid" | "codex_item_id" | "source_line" => {
                let list = into
                    .metadata
                    .entry(format!("merged_{key}s"))
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = list {
                    items.push(value);
                }
            }
            "usage" | "stop_reason" => {
                into.metadata.insert(key, value);
            }
            _ => {
                into.metadata.entry(key).or_insert(value);
            }
        }
    }
}

/// Moves each tool_result that arrives after a *later* assistant message back next to its
/// tool_use (into the tool-result record right after the call, or a new one), so the chain
/// validates. Results are never moved across a compact boundary. Each move is reported.
pub(crate) fn relocate_late_results(
    records: Vec<SessionRecord>,
    path: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SessionRecord> {
    let mut use_at: HashMap<String, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if r.record_type == RecordType::Assistant
            && let Some(m) = &r.message
        {
            for id in m.tool_use_ids() {
                use_at.entry(id.to_owned()).or_insert(i);
            }
        }
    }
    // Which blocks move where: (record index, block index) → assistant index.
    let mut moving: HashMap<(usize, usize), usize> = HashMap::new();
    let mut last_assistant: Option<usize> = None;
    let mut last_boundary: Option<usize> = None;
    for (i, r) in records.iter().enumerate() {
        match r.record_type {
            RecordType::Assistant => last_assistant = Some(i),
            RecordType::CompactBoundary | RecordType::Compression => last_boundary = Some(i),
            _ => {}
        }
        if r.record_type == RecordType::Assistant {
            continue;
        }
        let Some(m) = &r.message else { continue };
        for (j, block) in m.content.iter().enumerate() {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block
                && let Some(&a) = use_at.get(tool_use_id)
                && a < i
                && last_assistant.is_some_and(|l| l > a)
                && last_boundary.is_none_or(|b| b < a)
            {
                moving.insert((i, j), a);
                let line = m
                    .metadata
                    .get("source_line")
                    .and_then(Value::as_u64)
                    .map_or(0, |l| usize::try_from(l).unwrap_or(0));
                diagnostics.push(Diagnostic::warning(
                    path,
                    line,
                    format!(
                        "the result of tool call `{tool_use_id}` came after a later model turn; \
                         moved next to its call"
                    ),
                ));
            }
        }
    }
    if moving.is_empty() {
        return records;
    }
    // Take the moving blocks out, grouped by destination, in source order.
    let mut parked: HashMap<usize, Vec<ContentBlock>> = HashMap::new();
    let mut stripped: Vec<Option<SessionRecord>> = Vec::with_capacity(records.len());
    for (i, mut r) in records.into_iter().enumerate() {
        if let Some(m) = r.message.as_mut()
            && (0..m.content.len()).any(|j| moving.contains_key(&(i, j)))
        {
            let blocks = std::mem::take(&mut m.content);
            for (j, block) in blocks.into_iter().enumerate() {
                match moving.get(&(i, j)) {
                    Some(&a) => parked.entry(a).or_default().push(block),
                    None => m.content.push(block),
                }
            }
            if m.content.is_empty() {
                stripped.push(None);
                continue;
            }
            r.record_type = RecordType::for_message(m);
        }
        stripped.push(Some(r));
    }
    let mut out: Vec<SessionRecord> = Vec::with_capacity(stripped.len() + parked.len());
    let mut pending: Vec<ContentBlock> = Vec::new();
    for (i, r) in stripped.into_iter().enumerate() {
        let Some(r) = r else { continue };
        if !pending.is_empty() && r.record_type != RecordType::ToolResult {
            flush_parked(&mut out, &mut pending);
        }
        let is_assistant = r.record_type == RecordType::Assistant;
        out.push(r);
        if is_assistant && let Some(blocks) = parked.remove(&i) {
            pending = blocks;
        }
    }
    flush_parked(&mut out, &mut pending);
    out
}

fn flush_parked(out: &mut Vec<SessionRecord>, pending: &mut Vec<ContentBlock>) {
    if pending.is_empty() {
        return;
    }
    let blocks = std::mem::take(pending);
    if let Some(record) = join_or_relocate(out.last_mut(), blocks) {
        out.push(record);
    }
}

/// [`finish`] for a session whose records were spilled: relocates late results through a new
/// spill from `fresh` when any must move (the old one is returned too, for the caller to
/// delete), and fills the report from the tallies (a [`Spill::deferred`] spill is tallied
/// first; the tallies' per-id state is freed after, [`Tally::release`]). Returns the spill
/// holding the final records.
///
/// Errors: I/O on the spills.
pub(crate) fn finish_spilled(
    session: &mut ImportedSession,
    mut spill: Spill,
    fresh: impl FnOnce() -> std::io::Result<Spill>,
) -> std::io::Result<(Spill, Option<Spill>)> {
    spill.tally_deferred()?;
    let path = session.source_path.clone();
    let moves = spill.tally.move_diagnostics(&path);
    let (spill, old) = if spill.tally.moving.is_empty() {
        (spill, None)
    } else {
        let mut to = fresh()?;
        relocate_spilled(&spill, &mut to)?;
        (to, Some(spill))
    };
    let report = &mut session.report;
    report.diagnostics.extend(moves);
    report
        .diagnostics
        .extend(spill.tally.orphan_diagnostics(&path));
    report.messages = spill.tally.messages;
    report.boundaries = spill.tally.boundaries;
    report.tool_pairs = spill.tally.tool_pairs();
    report.damaged = crate::diagnostic::tally_damaged(&report.diagnostics)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let mut spill = spill;
    spill.tally.release();
    Ok((spill, old))
}

/// Final pass over a session: relocate late results and fill the report's counts.
pub(crate) fn finish(session: &mut ImportedSession) {
    let records = std::mem::take(&mut session.records);
    session.records = relocate_late_results(
        records,
        &session.source_path,
        &mut session.report.diagnostics,
    );
    report_orphan_results(session);
    count(session);
}

/// A warning for each tool result whose tool call is nowhere in the session (the result is
/// kept in the records; a resume leaves it out of the replay).
fn report_orphan_results(session: &mut ImportedSession) {
    let messages = || {
        session
            .records
            .iter()
            .flat_map(|r| r.message.iter().chain(r.keep_messages.iter().flatten()))
    };
    let calls: HashSet<&str> = messages().flat_map(|m| m.tool_use_ids()).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut orphans = Vec::new();
    for id in messages().flat_map(|m| m.tool_result_ids()) {
        if !calls.contains(id) && seen.insert(id) {
            orphans.push(id.to_owned());
        }
    }
    for id in orphans {
        session.report.diagnostics.push(Diagnostic::warning(
            &session.source_path,
            0,
            format!(
                "tool result for `{id}` has no tool call in the transcript; kept, but a resume \
                 leaves it out"
            ),
        ));
    }
}

/// Fills the report's counts from the records: message records (system prompts excluded, as in
/// the session's meta), boundaries, and tool_use blocks whose result is present.
pub(crate) fn count(session: &mut ImportedSession) {
    let mut results: HashSet<&str> = HashSet::new();
    let mut messages = 0;
    let mut boundaries = 0;
    for r in &session.records {
        if let Some(m) = &r.message {
            if r.record_type != RecordType::SystemPrompt {
                messages += 1;
            }
            results.extend(m.tool_result_ids());
        }
        if let Some(kept) = &r.keep_messages {
            for m in kept {
                results.extend(m.tool_result_ids());
            }
        }
        if r.record_type == RecordType::CompactBoundary {
            boundaries += 1;
        }
    }
    let mut pairs = 0;
    for r in &session.records {
        let kept = r.keep_messages.iter().flatten();
        for m in r.message.iter().chain(kept) {
            pairs += m.tool_use_ids().filter(|id| results.contains(id)).count();
        }
    }
    session.report.messages = messages;
    session.report.boundaries = boundaries;
    session.report.tool_pairs = pairs;
    session.report.damaged = crate::diagnostic::tally_damaged(&session.report.diagnostics)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asst(blocks: Vec<ContentBlock>, uuid: &str) -> Message {
        Message::new(Role::Assistant, blocks).with_metadata("uuid", json!(uuid))
    }
    fn result(id: &str) -> Message {
        Message::new(Role::User, vec![ContentBlock::tool_result(id, "ok", false)])
    }
    /// An assistant message calling each of `ids`.
    fn uses(ids: &[&str], uuid: &str) -> Message {
        let blocks = ids
            .iter()
            .map(|id| ContentBlock::tool_use(*id, "R", json!({})))
            .collect();
        asst(blocks, uuid)
    }
    /// A session of `records` from the file `f`.
    fn session_of(records: Vec<SessionRecord>) -> ImportedSession {
        ImportedSession {
            id: "s".into(),
            title: None,
            parent_id: None,
            format: super::super::SourceFormat::ClaudeCode,
            source_path: "f".into(),
            source_session_id: None,
            created: None,
            last_active: None,
            cwd: None,
            records,
            report: Default::default(),
        }
    }
    fn shape(records: &[SessionRecord]) -> Vec<String> {
        records
            .iter()
            .map(|r| {
                let m = r.message.as_ref().map_or_else(String::new, |m| {
                    m.content
                        .iter()
                        .map(|b| match b {
                            ContentBlock::ToolUse { id, .. } => format!("use:{id}"),
                            ContentBlock::ToolResult { tool_use_id, .. } => {
                                format!("res:{tool_use_id}")
                            }
                            other => other.kind().to_owned(),
                        })
                        .collect::<Vec<_>>()
                        .join(",")
                });
                format!("{}[{m}]", r.record_type.as_str())
            })
            .collect()
    }

    #[test]
    fn same_id_merges_across_interleaved_results() {
        let mut b = Builder::default();
        b.push(Message::user("go"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::text("t")], "u1"),
            None,
            Merge::SameId("m1"),
        );
        b.push(
            asst(vec![ContentBlock::tool_use("a", "R", json!({}))], "u2"),
            None,
            Merge::SameId("m1"),
        );
        b.push(result("a"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("b", "R", json!({}))], "u3"),
            None,
            Merge::SameId("m1"),
        );
        b.push(result("b"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::text("next")], "u4"),
            None,
            Merge::SameId("m2"),
        );
        assert_eq!(
            shape(&b.records),
            [
                "user[text]",
                "assistant[text,use:a,use:b]",
                "tool_result[res:a,res:b]",
                "assistant[text]"
            ]
        );
        let meta = &b.records[1]
            .message
            .as_ref()
            .map(|m| m.metadata.clone())
            .unwrap_or_default();
        assert_eq!(meta.get("uuid"), Some(&json!("u1")));
        assert_eq!(meta.get("merged_uuids"), Some(&json!(["u2", "u3"])));
    }

    #[test]
    fn adjacent_merges_only_back_to_back() {
        let mut b = Builder::default();
        b.push(
            asst(vec![ContentBlock::tool_use("a", "R", json!({}))], "x"),
            None,
            Merge::Adjacent,
        );
        b.push(
            asst(vec![ContentBlock::tool_use("b", "R", json!({}))], "y"),
            None,
            Merge::Adjacent,
        );
        b.push(result("a"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("c", "R", json!({}))], "z"),
            None,
            Merge::Adjacent,
        );
        assert_eq!(
            shape(&b.records),
            [
                "assistant[use:a,use:b]",
                "tool_result[res:a]",
                "assistant[use:c]"
            ]
        );
    }

    #[test]
    fn late_results_move_next_to_their_call() {
        let mut b = Builder::default();
        b.push(
            asst(
                vec![
                    ContentBlock::tool_use("a", "R", json!({})),
                    ContentBlock::tool_use("b", "R", json!({})),
                ],
                "1",
            ),
            None,
            Merge::No,
        );
        b.push(result("b"), None, Merge::No);
        b.push(
            asst(vec![ContentBlock::tool_use("c", "R", json!({}))], "2"),
            None,
            Merge::No,
        );
        b.push(
            Message::new(
                Role::User,
                vec![
                    ContentBlock::tool_result("c", "ok", false),
                    ContentBlock::tool_result("a", "late", false),
                ],
            ),
            None,
            Merge::No,
        );
        let mut diags = Vec::new();
        let out = relocate_late_results(b.records, Path::new("f"), &mut diags);
        assert_eq!(
            shape(&out),
            [
                "assistant[use:a,use:b]",
                "tool_result[res:b,res:a]",
                "assistant[use:c]",
                "tool_result[res:c]"
            ]
        );
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("`a`"), "{}", diags[0]);
    }

    #[test]
    fn the_tally_finds_the_orphans_and_pairs_the_whole_session_finds() {
        // `x`: results only (an orphan, seen twice); `y`: its result before its call; `z`:
        // two calls, then its result; `w`: a call without a result.
        let mut b = Builder::default();
        b.push(result("x"), None, Merge::No);
        b.push(result("y"), None, Merge::No);
        b.push(uses(&["y", "z"], "1"), None, Merge::No);
        b.push(uses(&["z", "w"], "2"), None, Merge::No);
        b.push(result("z"), None, Merge::No);
        b.push(result("x"), None, Merge::No);
        let mut tally = Tally::default();
        for (i, r) in b.records.iter().enumerate() {
            tally.see(i, r);
        }
        let mut session = session_of(b.records);
        report_orphan_results(&mut session);
        count(&mut session);
        let messages = |d: Vec<Diagnostic>| d.into_iter().map(|d| d.message).collect::<Vec<_>>();
        let whole = messages(session.report.diagnostics.clone());
        assert_eq!(whole.len(), 1, "{whole:?}");
        assert!(whole[0].contains("`x`"), "{whole:?}");
        assert_eq!(messages(tally.orphan_diagnostics(Path::new("f"))), whole);
        // `y` once and `z` twice: their results are in the session.
        assert_eq!(session.report.tool_pairs, 3);
        assert_eq!(tally.tool_pairs(), 3);
    }

    #[test]
    fn the_tally_finishes_a_session_with_kept_calls_and_late_results_as_finish_does() {
        // `k`: its result first, its call only in a boundary's kept messages; `o`, `q`:
        // orphans (`q` first in kept messages, then twice more); `m`: a call, a later turn,
        // then its result twice (both move); `n`: its call kept, its result after (no move:
        // kept calls are not moved to); `p`: a call and its result. Orphans come in order
        // of first result: `o` before `q`.
        let rec = |m: Message| SessionRecord::message(m, None);
        let records = vec![
            rec(result("k")),
            rec(result("o")),
            rec(uses(&["m"], "1")),
            rec(asst(vec![ContentBlock::text("later")], "2")),
            rec(result("m")),
            rec(result("m")),
            crate::record::make_compact_boundary(
                "S",
                vec![uses(&["k"], "3"), result("q"), uses(&["n"], "4")],
                None,
            ),
            rec(result("n")),
            rec(uses(&["p"], "5")),
            rec(result("p")),
            rec(result("q")),
            rec(result("o")),
            rec(result("q")),
        ];
        let mut tally = Tally::default();
        for (i, r) in records.iter().enumerate() {
            tally.see(i, r);
        }
        let mut session = session_of(records);
        finish(&mut session);
        let text = |d: &[Diagnostic]| d.iter().map(ToString::to_string).collect::<Vec<_>>();
        let whole = text(&session.report.diagnostics);
        assert_eq!(whole.len(), 4, "{whole:?}");
        assert!(
            whole[0].contains("`m`") && whole[1].contains("`m`"),
            "{whole:?}"
        );
        assert!(
            whole[2].contains("`o`") && whole[3].contains("`q`"),
            "{whole:?}"
        );
        let mut streamed = tally.move_diagnostics(Path::new("f"));
        streamed.extend(tally.orphan_diagnostics(Path::new("f")));
        assert_eq!(text(&streamed), whole);
        assert_eq!(tally.moving.len(), 2);
        // `m` twice (a call, two results), `k`, `n`, `p`.
        assert_eq!(session.report.tool_pairs, 4);
        assert_eq!(tally.tool_pairs(), 4);
        tally.release();
        assert!(tally.ids.capacity() == 0 && tally.orphan_text.capacity() == 0);
        assert!(tally.moving.capacity() == 0 && tally.moved.capacity() == 0);
        assert!(tally.tasks.capacity() == 0);
    }

    /// The sizes the docs of the per-id state give (on 64-bit targets).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_per_id_state_takes_the_bytes_its_docs_say() {
        use std::mem::size_of;
        assert_eq!(size_of::<Index>(), 8);
        assert_eq!(size_of::<IdFacts>(), 24);
        assert_eq!(size_of::<(IdKey, IdFacts)>(), 40);
        assert_eq!(size_of::<(IdKey, usize)>(), 24);
    }

    #[test]
    fn spilled_lines_of_any_length_read_back_in_a_shared_file() -> std::io::Result<()> {
        // Two spills sharing one file, interleaved (one tallied later), with lines of many
        // lengths and runs past the every-64th mark.
        let file = SpillFile::new(tempfile::tempfile()?, None)?;
        let shared = std::rc::Rc::new(std::cell::RefCell::new(file));
        let mut a = Spill::new(std::rc::Rc::clone(&shared));
        let mut b = Spill::deferred(std::rc::Rc::clone(&shared));
        let sizes = [
            10usize, 65_533, 65_534, 65_535, 65_536, 200_000, 1, 70_000, 3, 65_534,
        ];
        let mut written: (Vec<Vec<u8>>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
        for round in 0..80 {
            for (k, &n) in sizes.iter().enumerate() {
                let mut line = vec![b'a' + u8::try_from(k).unwrap_or(0); n - 1];
                line.push(b'\n');
                if (round + k) % 3 == 0 {
                    b.write_line(&line);
                    written.1.push(line);
                } else {
                    a.write_line(&line);
                    written.0.push(line);
                }
            }
        }
        for (spill, lines) in [(&a, &written.0), (&b, &written.1)] {
            assert_eq!(spill.len(), lines.len());
            for (i, line) in lines.iter().enumerate() {
                assert_eq!(&spill.read_line(i)?, line, "record {i}");
            }
            assert!(spill.read_line(lines.len()).is_err());
            assert_eq!(spill.error(), None);
        }
        Ok(())
    }
}
