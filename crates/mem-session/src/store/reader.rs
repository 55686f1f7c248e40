//! Reading sessions: records, the messages after a count, and the resume replay from the last
//! boundary (found by a backward byte search) or rollback.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use mem_core::Message;

use crate::chain::{ChainIssue, validate_message_chain};
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::jsonl::{JsonlEvent, JsonlReader};
use crate::meta::SessionMeta;
use crate::record::{RecordType, SessionRecord};

use super::SessionStore;
use super::files::{file_len, file_tail_fingerprint, read_at};

impl SessionStore {
    /// Reads every record of a session, in order (the whole history, for export and tools).
    pub fn read_records(&self, id: &str) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = read_records_from(&file, &path, 0);
        let _ = file.unlock();
        out
    }

    /// The records of session `id` between byte offsets `from` (a line start) and `to`, read
    /// under the shared lock (lines that are not valid records are skipped). The incremental
    /// sync reads the few records after its mark with it.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub(crate) fn records_between(
        &self,
        id: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<SessionRecord>> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = read_records_range(&file, &path, from, to);
        let _ = file.unlock();
        Ok(out?.0)
    }

    /// The records of session `id` from byte `from` (a line start) to the end of the file as it
    /// is under the shared lock, the file's length then, and the up to `tail` bytes that end at
    /// `from` and at that length (so a reader can check later that the part it read is
    /// unchanged). Lines that are not valid records are skipped. The session search index reads
    /// what was appended with it.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub(crate) fn records_after_offset(
        &self,
        id: &str,
        from: u64,
        tail: u64,
    ) -> Result<AppendedRecords> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let out = (|| {
            let len = file
                .metadata()
                .map_err(|e| Error::io("cannot read", &path, e))?
                .len();
            let from = from.min(len);
            let bytes_before = |end: u64| -> Result<Vec<u8>> {
                let start = end.saturating_sub(tail);
                let mut buf = vec![0u8; (end - start) as usize];
                let mut reader = &file;
                reader
                    .seek(SeekFrom::Start(start))
                    .map_err(|e| Error::io("cannot read", &path, e))?;
                reader
                    .read_exact(&mut buf)
                    .map_err(|e| Error::io("cannot read", &path, e))?;
                Ok(buf)
            };
            let before_from = bytes_before(from)?;
            let before_end = bytes_before(len)?;
            let (records, _) = read_records_range(&file, &path, from, len)?;
            Ok(AppendedRecords {
                records,
                len,
                before_from,
                before_end,
            })
        })();
        let _ = file.unlock();
        out
    }

    /// The messages of session `id` after its first `skip` (user, assistant and tool-result
    /// records with a message, in file order: the list [`Self::read_records`] gives, less its
    /// first `skip`), and how many messages the session holds in all
    /// ([`SessionMeta::message_count`]).
    ///
    /// Cost: the meta (brought up to date), then a backward scan from the end of the `.jsonl`
    /// that parses only the lines of those messages; the history before them is never read.
    /// This is what an extraction after every turn needs (mem-auto keeps the count of messages
    /// already extracted). Lines that are not valid records are skipped, as the meta counts
    /// them.
    ///
    /// Errors: [`Error::NotFound`], [`Error::Locked`], I/O errors naming the file.
    pub fn messages_after(&self, id: &str, skip: usize) -> Result<(usize, Vec<Message>)> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = self.messages_after_locked(id, &file, &path, skip);
        let _ = file.unlock();
        result
    }

    pub(super) fn messages_after_locked(
        &self,
        id: &str,
        file: &File,
        path: &Path,
        skip: usize,
    ) -> Result<(usize, Vec<Message>)> {
        // Only the message count is used: a deferred token count stays deferred.
        let meta = self.load_meta_locked(id, file, false)?;
        let total = meta.message_count;
        let want = total.saturating_sub(skip);
        if want == 0 {
            return Ok((total, Vec::new()));
        }
        let len = file_len(file, path)?;
        let start =
            find_last_messages(file, len, want).map_err(|e| Error::io("cannot read", path, e))?;
        let (records, _) = read_records_from(file, path, start)?;
        let mut messages = message_records(records);
        // The line at `start` may hold more than one message (glued objects).
        if let Some(extra) = messages.len().checked_sub(want) {
            return Ok((total, messages.split_off(extra)));
        }
        // Fewer messages than the meta counts (a meta whose count was edited while its
        // fingerprint still matches; a file this store wrote never gets here): the whole file
        // decides.
        tracing::warn!(
            session = id,
            "{} messages found after byte {start}, {want} expected; reading the whole session",
            messages.len()
        );
        let (records, _) = read_records_from(file, path, 0)?;
        let mut all = message_records(records);
        let total = all.len();
        Ok((total, all.split_off(skip.min(total))))
    }

    /// Resumes a session: the messages after the last boundary, validated (seed §1).
    ///
    /// Cost: a backward search for the last boundary, then parsing the tail after it; the history
    /// before the boundary is never read.
    pub fn resume(&self, id: &str) -> Result<Resumed> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = self.resume_locked(id, &file, &path);
        let _ = file.unlock();
        result
    }

    pub(super) fn resume_locked(&self, id: &str, file: &File, path: &Path) -> Result<Resumed> {
        let meta = self.load_meta_locked(id, file, true)?;
        let len = file_len(file, path)?;
        let seg = replay_segment(file, path, len, 0)?;
        let (messages, issues) = validate_message_chain(seg.messages);
        let replay_offset = seg.offset.unwrap_or(0);
        Ok(Resumed {
            meta,
            messages,
            issues,
            diagnostics: seg.diagnostics,
            replay_offset,
            replay_bytes: len - replay_offset,
            from_boundary: seg.offset.is_some() && !seg.rolled_back,
            rolled_back: seg.rolled_back,
        })
    }

    /// `true` when session `id` is at least `bytes` long and its bytes before `bytes` end with
    /// the ones `tail` fingerprints (hex of the last up to 32 bytes, as
    /// [`SessionMeta::jsonl_tail`]): the file grew by appends only since that point (the
    /// content before it is not hashed; a session is append-only).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Locked`], I/O.
    pub fn has_prefix(&self, id: &str, bytes: u64, tail: &str) -> Result<bool> {
        let path = self.jsonl_path(id);
        let file = self.open_locked(&path, id, false)?;
        let result = (|| {
            let len = file_len(&file, &path)?;
            if len < bytes {
                return Ok(false);
            }
            Ok(file_tail_fingerprint(&file, bytes)
                .map_err(|e| Error::io("cannot read", &path, e))?
                == tail)
        })();
        let _ = file.unlock();
        result
    }
}

/// The conversation a resumed session replays, and what was found on the way.
#[derive(Debug, Clone)]
pub struct Resumed {
    /// The session's meta (brought up to date).
    pub meta: SessionMeta,
    /// The messages to send, validated: from the last boundary, every tool_use answered.
    pub messages: Vec<Message>,
    /// What validation changed in the replay (the file is untouched).
    pub issues: Vec<ChainIssue>,
    /// Problems in the lines read (file:line).
    pub diagnostics: Vec<Diagnostic>,
    /// Byte offset where replay started: the last boundary, or 0.
    pub replay_offset: u64,
    /// Bytes read to resume (the tail from `replay_offset`).
    pub replay_bytes: u64,
    /// `true` when replay started at a boundary.
    pub from_boundary: bool,
    /// `true` when the replay went back through a `rollback` record (a checkpoint restore).
    pub rolled_back: bool,
}

pub(super) const BOUNDARY_PATTERNS: [&[u8]; 3] = [
    b"\n{\"type\":\"compact_boundary\"",
    b"\n{\"type\":\"compression\"",
    b"\n{\"type\":\"rollback\"",
];

pub(super) const SCAN_CHUNK: u64 = 1 << 20;

/// Offset of the start of the last line before `end` that begins a boundary, compression or
/// rollback record, searching backwards in 1 MiB chunks. Reads only the bytes after that line start
/// (plus one chunk at most).
pub(crate) fn find_last_boundary(file: &File, end: u64) -> std::io::Result<Option<u64>> {
    find_last_boundary_kept(file, end, 0).map(|(start, _)| start)
}

/// [`find_last_boundary`], when the line found is a record that resets the token count (a valid
/// boundary, compression marker or rollback): `None` when there is none, or when that line only
/// looks like one (a boundary torn by a kill, then appended after on a fresh line, is a damaged
/// line, not a reset). Token counting starts there; on `None` the caller counts from further
/// back, where reading the records in order applies every real reset.
///
/// Errors: I/O naming `path`.
pub(super) fn find_last_reset(file: &File, path: &Path, end: u64) -> Result<Option<u64>> {
    let Some(at) = find_last_boundary(file, end).map_err(|e| Error::io("cannot read", path, e))?
    else {
        return Ok(None);
    };
    // The caller may be reading `file` already: its position is put back.
    let mut reader = file;
    let position = reader
        .stream_position()
        .map_err(|e| Error::io("cannot read", path, e))?;
    reader
        .seek(SeekFrom::Start(at))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let first = JsonlReader::starting_at(BufReader::new(reader.take(end - at)), path, 1, at).next();
    reader
        .seek(SeekFrom::Start(position))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let resets = match first {
        Some(JsonlEvent::Value(line)) if line.offset == at => {
            serde_json::from_value::<SessionRecord>(line.value).is_ok_and(|r| {
                r.check().is_ok()
                    && match r.record_type {
                        RecordType::CompactBoundary | RecordType::Compression => {
                            crate::record::parse_compact_boundary(&r).is_some()
                        }
                        RecordType::Rollback => crate::record::parse_rollback(&r).is_some(),
                        _ => false,
                    }
            })
        }
        _ => false,
    };
    Ok(resets.then_some(at))
}

/// The most bytes [`find_last_boundary_kept`] keeps of what it read (64 MiB): a longer tail is
/// read again from the file rather than held.
pub(super) const KEEP_TAIL_MAX: u64 = 64 << 20;

/// [`find_last_boundary`], also returning the bytes it read from the line found (or from the
/// start of the file when there is none) up to `end`, when they are at most `keep_max` bytes:
/// the caller parses the tail from them instead of reading it again (resume reads its tail
/// once). `None` when the tail is longer (the chunks are dropped as the search goes on, so
/// memory stays bounded by `keep_max` plus one chunk).
pub(super) fn find_last_boundary_kept(
    file: &File,
    end: u64,
    keep_max: u64,
) -> std::io::Result<(Option<u64>, Option<Vec<u8>>)> {
    // Chunks read so far, newest first, each [start, end) without the overlap.
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut keeping = keep_max > 0;
    let assemble = |from: u64, first: &[u8], kept: &mut Vec<Vec<u8>>| {
        let mut out = Vec::with_capacity(usize::try_from(end - from).unwrap_or(0));
        out.extend_from_slice(first);
        for chunk in kept.drain(..).rev() {
            out.extend_from_slice(&chunk);
        }
        out
    };
    let finders: Vec<memchr::memmem::FinderRev<'_>> = BOUNDARY_PATTERNS
        .iter()
        .map(|p| memchr::memmem::FinderRev::new(*p))
        .collect();
    let overlap = BOUNDARY_PATTERNS.iter().map(|p| p.len()).max().unwrap_or(0) as u64;
    let mut chunk_end = end;
    let mut buf = Vec::new();
    while chunk_end > 0 {
        let chunk_start = chunk_end.saturating_sub(SCAN_CHUNK);
        let read_end = (chunk_end + overlap).min(end);
        buf.resize((read_end - chunk_start) as usize, 0);
        read_at(file, &mut buf, chunk_start)?;
        let best = finders.iter().filter_map(|f| f.rfind(&buf)).max();
        let own = (chunk_end - chunk_start) as usize;
        if let Some(pos) = best {
            let line_start = chunk_start + pos as u64 + 1;
            if line_start < end {
                let tail = keeping.then(|| {
                    // The line found starts inside this chunk's own bytes or in its overlap
                    // (the first bytes of the newer chunk, kept already).
                    let at = (pos + 1).min(own);
                    let mut tail = assemble(line_start, &buf[at..own], &mut kept);
                    let skip = (pos + 1).saturating_sub(own);
                    tail.drain(..skip);
                    tail
                });
                return Ok((Some(line_start), tail));
            }
        }
        if keeping {
            if end - chunk_start <= keep_max {
                kept.push(buf[..own].to_vec());
            } else {
                keeping = false;
                kept.clear();
            }
        }
        chunk_end = chunk_start;
    }
    let tail = keeping.then(|| assemble(0, &[], &mut kept));
    // The very first line has no newline before it.
    let mut head = vec![0u8; (overlap as usize + 3).min(end as usize)];
    read_at(file, &mut head, 0)?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    if BOUNDARY_PATTERNS.iter().any(|p| head.starts_with(&p[1..])) && end > 0 {
        return Ok((Some(0), tail));
    }
    Ok((None, tail))
}

/// The messages among `records` (user, assistant, tool-result records with a message), in
/// order; other records (boundaries, titles, rollbacks...) are passed over.
pub fn message_records(records: Vec<SessionRecord>) -> Vec<Message> {
    use crate::record::RecordType;
    records
        .into_iter()
        .filter(|r| {
            matches!(
                r.record_type,
                RecordType::User | RecordType::Assistant | RecordType::ToolResult
            )
        })
        .filter_map(|r| r.message)
        .collect()
}

/// How many message records `line` (one physical line, without its newline, starting at byte
/// `offset` of the file) holds, read exactly as the forward reader and [`SessionMeta::apply`]
/// read it ([`JsonlReader`]: invalid UTF-8 replaced, glued objects split, garbage after a value
/// skipped; valid records of a message type with a message).
pub(super) fn line_messages(line: &[u8], offset: u64) -> usize {
    use crate::record::RecordType;
    JsonlReader::starting_at(line, "", 1, offset)
        .filter_map(|ev| match ev {
            JsonlEvent::Value(v) => serde_json::from_value::<SessionRecord>(v.value).ok(),
            JsonlEvent::Diagnostic(_) => None,
        })
        .filter(|r| {
            r.check().is_ok()
                && matches!(
                    r.record_type,
                    RecordType::User | RecordType::Assistant | RecordType::ToolResult
                )
                && r.message.is_some()
        })
        .count()
}

/// The byte offset of the start of the last line, before byte `len`, such that the lines from
/// it on hold at least `want` message records (0 when the whole file holds fewer). Reads
/// backwards in chunks, parsing only the lines it passes; a line longer than a chunk is read
/// whole with a bigger one.
pub(super) fn find_last_messages(file: &File, len: u64, want: usize) -> std::io::Result<u64> {
    let mut count = 0;
    // Bytes [chunk_start, line_end) are read; lines ending at line_end are not yet counted.
    let mut line_end = len;
    let mut size = SCAN_CHUNK;
    let mut buf = Vec::new();
    while line_end > 0 {
        let chunk_start = line_end.saturating_sub(size);
        buf.resize((line_end - chunk_start) as usize, 0);
        read_at(file, &mut buf, chunk_start)?;
        let mut end = buf.len();
        while let Some(nl) = memchr::memrchr(b'\n', &buf[..end]) {
            let start = chunk_start + nl as u64 + 1;
            count += line_messages(&buf[nl + 1..end], start);
            if count >= want {
                return Ok(start);
            }
            end = nl;
        }
        if chunk_start == 0 {
            // The first line: no newline before it.
            return Ok(0);
        }
        line_end = chunk_start + end as u64;
        // No newline in the whole chunk: the line is longer than it; read more at once.
        if end == buf.len() {
            size = size.saturating_mul(2);
        }
    }
    Ok(0)
}

pub(super) fn count_lines_before(file: &File, offset: u64) -> std::io::Result<usize> {
    let mut f = file;
    f.seek(SeekFrom::Start(0))?;
    let mut reader = f.take(offset);
    let mut count = 0;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(count);
        }
        count += memchr::memchr_iter(b'\n', &buf[..n]).count();
    }
}

/// Parses the records from `offset` to the end; lines that are not valid records become
/// diagnostics (line numbers relative to `offset`).
pub(super) fn read_records_from(
    file: &File,
    path: &Path,
    offset: u64,
) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
    read_records_range(file, path, offset, u64::MAX)
}

/// [`read_records_from`], stopping at byte `end`.
pub(super) fn read_records_range(
    file: &File,
    path: &Path,
    offset: u64,
    end: u64,
) -> Result<(Vec<SessionRecord>, Vec<Diagnostic>)> {
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(offset))
        .map_err(|e| Error::io("cannot read", path, e))?;
    let reader = reader.take(end.saturating_sub(offset));
    Ok(parse_records(
        BufReader::with_capacity(1 << 16, reader),
        path,
        offset,
    ))
}

/// The records of the JSON lines `reader` yields, whose first byte is at `offset` of the file
/// at `path`; damaged lines and lines that are not records become diagnostics.
pub(super) fn parse_records(
    reader: impl std::io::BufRead,
    path: &Path,
    offset: u64,
) -> (Vec<SessionRecord>, Vec<Diagnostic>) {
    let mut records = Vec::new();
    let mut diagnostics = Vec::new();
    for ev in JsonlReader::starting_at(reader, path, 1, offset) {
        match ev {
            JsonlEvent::Value(line) => match serde_json::from_value::<SessionRecord>(line.value) {
                Ok(record) => match record.check() {
                    Ok(()) => records.push(record),
                    Err(why) => diagnostics.push(
                        Diagnostic::error(path, line.line, format!("{why}; record skipped"))
                            .with_kind("invalid-record"),
                    ),
                },
                Err(e) => diagnostics.push(
                    Diagnostic::error(
                        path,
                        line.line,
                        format!("not a session record: {e}; skipped"),
                    )
                    .with_kind("not-a-record"),
                ),
            },
            JsonlEvent::Diagnostic(d) => diagnostics.push(d),
        }
    }
    (records, diagnostics)
}

/// The replay of a session's first `end` bytes, before validation.
pub(super) struct Segment {
    messages: Vec<Message>,
    diagnostics: Vec<Diagnostic>,
    /// Where the last boundary or rollback (the replay's start) is, if any.
    offset: Option<u64>,
    /// A rollback was followed on the way.
    rolled_back: bool,
}

/// Rollbacks followed at most (each one points strictly earlier in the file, so this only
/// guards the stack against a file made of millions of them).
pub(super) const MAX_ROLLBACK_DEPTH: usize = 10_000;

/// Replays the first `end` bytes of a session: from the last boundary (its summary and kept
/// tail) or the last rollback (the replay of the prefix it names, recursively) before `end`,
/// then the records after it. A candidate that does not parse (torn), or a rollback that does
/// not point before itself, is passed over and the search goes on before it.
pub(super) fn replay_segment(file: &File, path: &Path, end: u64, depth: usize) -> Result<Segment> {
    let mut search_end = end;
    loop {
        // The first search keeps the bytes it reads, so the tail is read once (a later one,
        // past a candidate that was no boundary, reads the range again).
        let keep_max = if search_end == end { KEEP_TAIL_MAX } else { 0 };
        let (start, tail) = find_last_boundary_kept(file, search_end, keep_max)
            .map_err(|e| Error::io("cannot read", path, e))?;
        let from = start.unwrap_or(0);
        let (records, mut diagnostics) = match tail {
            Some(bytes) => parse_records(&bytes[..], path, from),
            None => read_records_range(file, path, from, end)?,
        };
        if from > 0 && !diagnostics.is_empty() {
            let base =
                count_lines_before(file, from).map_err(|e| Error::io("cannot read", path, e))?;
            for d in &mut diagnostics {
                if d.line > 0 {
                    d.line += base;
                }
            }
        }
        let Some(s) = start else {
            return Ok(Segment {
                messages: crate::record::tail_to_messages(records),
                diagnostics,
                offset: None,
                rolled_back: false,
            });
        };
        let first = records.first();
        if let Some(rb) = first.and_then(crate::record::parse_rollback)
            && rb.to_bytes <= s
            && depth < MAX_ROLLBACK_DEPTH
        {
            let mut prefix = replay_segment(file, path, rb.to_bytes, depth + 1)?;
            prefix
                .messages
                .extend(crate::record::tail_to_messages(records.into_iter().skip(1)));
            prefix.diagnostics.extend(diagnostics);
            return Ok(Segment {
                messages: prefix.messages,
                diagnostics: prefix.diagnostics,
                offset: Some(s),
                rolled_back: true,
            });
        }
        if first.is_some_and(|r| crate::record::parse_compact_boundary(r).is_some()) {
            return Ok(Segment {
                messages: crate::record::tail_to_messages(records),
                diagnostics,
                offset: Some(s),
                rolled_back: false,
            });
        }
        search_end = s;
    }
}

/// What [`SessionStore::records_after_offset`] read.
pub(crate) struct AppendedRecords {
    /// The records after the offset.
    pub(crate) records: Vec<SessionRecord>,
    /// The file's length when read, in bytes.
    pub(crate) len: u64,
    /// The bytes that end at the offset (at most the `tail` asked for).
    pub(crate) before_from: Vec<u8>,
    /// The bytes that end at `len` (at most the `tail` asked for).
    pub(crate) before_end: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail kept by the backward search is exactly the file's bytes from the line found
    /// (or from the start) to `end`, whatever the chunk a line starts in; past `keep_max` it
    /// is not kept.
    #[test]
    fn the_kept_tail_is_the_bytes_from_the_boundary_to_the_end() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("s.jsonl");
        let mut bytes = Vec::new();
        let mut boundaries = Vec::new();
        let mut seed = 12345u64;
        // ~3.5 MiB: lines of 1..120 KB, some of them boundaries, so candidates fall at every
        // position relative to the 1 MiB chunks.
        while bytes.len() < (7 << 19) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = usize::try_from(seed >> 47).unwrap_or(0) % 120_000 + 1;
            let kind = if seed.is_multiple_of(5) {
                boundaries.push(bytes.len() as u64);
                "compact_boundary"
            } else {
                "user"
            };
            bytes.extend_from_slice(format!("{{\"type\":\"{kind}\",\"x\":\"").as_bytes());
            bytes.extend(std::iter::repeat_n(b'a', len));
            bytes.extend_from_slice(b"\"}\n");
        }
        std::fs::write(&path, &bytes)?;
        let file = File::open(&path)?;
        let len = bytes.len() as u64;
        let mut ends: Vec<u64> = boundaries.iter().map(|b| b + 1).collect();
        ends.extend([len, len - 1, 1 << 20, (1 << 20) + 1, (2 << 20) - 3]);
        for end in ends {
            let (start, tail) = find_last_boundary_kept(&file, end, KEEP_TAIL_MAX)?;
            assert_eq!(start, find_last_boundary(&file, end)?, "end {end}");
            let from = start.unwrap_or(0) as usize;
            assert_eq!(
                tail.as_deref(),
                Some(&bytes[from..end as usize]),
                "end {end}"
            );
            let (_, small) = find_last_boundary_kept(&file, end, 1 << 10)?;
            if end - from as u64 > 2 << 20 {
                assert_eq!(small, None, "end {end}");
            }
        }
        Ok(())
    }
}
