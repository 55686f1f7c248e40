//! One way to open and read a transcript: [`Transcript`] opens the file once, after the checks
//! every file argument passes, and reads it in each of the ways an import needs: its first lines
//! (to tell the format and the main session's id), whole (a small file, converted in memory),
//! streamed in 64 KiB blocks hashed as they are parsed (a large one), from a byte offset to the
//! end (the incremental re-import of a transcript that grew), or a window at an offset (the sync
//! mark's fingerprints).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::jsonl::{JsonLine, JsonlEvent, JsonlReader};

use super::codex;
use super::format::SNIFF_LINES;

/// The largest transcript read, in bytes (64 GiB: no real transcript comes near it). A session
/// is converted as it is read when it goes into a store (`crate::ingest`), so memory does not
/// grow with the file; [`import_file`](super::import_file), which returns the records in memory,
/// holds them all.
pub const MAX_TRANSCRIPT_BYTES: u64 = 64 << 30;

/// A transcript file open for reading. Each read starts from the byte it names (the first, or an
/// offset), whatever was read before, so one open serves a whole import: the look at the first
/// lines, the incremental sync's tail and fingerprints, then the whole read when the sync
/// cannot be done.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: File,
    size: u64,
}

impl Transcript {
    /// Opens a transcript for reading after the checks every file argument passes: it must be a
    /// regular file (symlinks followed; checked before and after opening), it is opened
    /// non-blocking (a FIFO swapped in cannot hang the open), and it may hold at most
    /// [`MAX_TRANSCRIPT_BYTES`]. Lines are capped by `MAX_LINE_BYTES` (64 MiB) as they are
    /// read.
    ///
    /// Errors: [`Error::NotAFile`], [`Error::TooLarge`], [`Error::Io`] (missing, unreadable).
    pub fn open(path: &Path) -> Result<Transcript> {
        use mem_core::fsread::{ReadError, open_regular};
        let (file, meta) = open_regular(path).map_err(|e| match e {
            ReadError::NotAFile { kind } => Error::NotAFile {
                path: path.to_owned(),
                kind,
            },
            ReadError::Io(e) => Error::io("cannot read", path, e),
            other => Error::io(
                "cannot read",
                path,
                std::io::Error::other(other.to_string()),
            ),
        })?;
        if meta.len() > MAX_TRANSCRIPT_BYTES {
            return Err(Error::TooLarge {
                path: path.to_owned(),
                size: meta.len(),
                max: MAX_TRANSCRIPT_BYTES,
            });
        }
        Ok(Transcript {
            path: path.to_owned(),
            file,
            size: meta.len(),
        })
    }

    /// The path it was opened at (as given: used in diagnostics and for file-name-derived ids).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size when it was opened, in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The open file (positioned wherever the last read left it).
    pub fn into_file(self) -> File {
        self.file
    }

    /// Its size now, in bytes (it may have grown since it was opened: an agent appends to its
    /// transcript while a hook imports it).
    ///
    /// Errors: [`Error::Io`].
    pub(crate) fn len_now(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| self.io(e))
    }

    /// The file, positioned at byte `offset`.
    fn at(&self, offset: u64) -> Result<&File> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(offset)).map_err(|e| self.io(e))?;
        Ok(file)
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io("cannot read", &self.path, e)
    }

    /// The values and diagnostics of its first [`SNIFF_LINES`] non-blank lines: what tells its
    /// format ([`super::format::classify`]) and its main session's id.
    ///
    /// Errors: [`Error::Io`] when it cannot be read from the start.
    pub(crate) fn head(&self) -> Result<(Vec<JsonLine>, Vec<Diagnostic>)> {
        let file = self.at(0)?;
        let mut values = Vec::new();
        let mut diagnostics = Vec::new();
        let mut seen_lines = 0usize;
        let mut last_line = 0usize;
        for event in
            JsonlReader::new(BufReader::new(file), &self.path).skim_payloads(codex::SKIMMED_TYPES)
        {
            let line = match &event {
                JsonlEvent::Value(v) => v.line,
                JsonlEvent::Diagnostic(d) => d.line,
            };
            if line != last_line {
                last_line = line;
                seen_lines += 1;
                if seen_lines > SNIFF_LINES {
                    break;
                }
            }
            match event {
                JsonlEvent::Value(v) => values.push(v),
                JsonlEvent::Diagnostic(d) => diagnostics.push(d),
            }
        }
        Ok((values, diagnostics))
    }

    /// All its bytes, read at once (a small file: one copy out of the page cache); `size`: its
    /// size as the caller last saw it ([`Transcript::len_now`]), in bytes.
    ///
    /// Errors: [`Error::Io`].
    pub(crate) fn read_whole(&self, size: u64) -> Result<Vec<u8>> {
        let mut file = self.at(0)?;
        // One byte more than its size, so a file that did not grow is read with no reallocation.
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
        file.read_to_end(&mut bytes).map_err(|e| self.io(e))?;
        Ok(bytes)
    }

    /// A reader of all its bytes in 64 KiB blocks that hashes them as they are consumed
    /// ([`HashingReader`]; [`finish_hash`] gives the digest).
    ///
    /// Errors: [`Error::Io`] when it cannot be read from the start.
    pub(crate) fn stream(&self) -> Result<HashingReader<&File>> {
        Ok(HashingReader::new(self.at(0)?))
    }

    /// Its bytes from `offset` to the end (the lines an incremental re-import converts).
    ///
    /// Errors: [`Error::Io`].
    pub(crate) fn read_from(&self, offset: u64) -> Result<Vec<u8>> {
        let mut file = self.at(offset)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| self.io(e))?;
        Ok(bytes)
    }

    /// Fills `buf` with its bytes from `offset` (a positioned read: the other reads are not
    /// disturbed).
    ///
    /// Errors: the operating system's (an end of file before `buf` is full included).
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.read_exact_at(buf, offset)
        }
        #[cfg(not(unix))]
        {
            let mut f = &self.file;
            f.seek(SeekFrom::Start(offset))?;
            f.read_exact(buf)
        }
    }
}

/// A buffered reader (64 KiB) that feeds every byte it hands out to an XXH3-128 digest (the
/// file is read once: hashed as it is parsed). The bytes are hashed as they are consumed
/// ([`BufRead::consume`], or [`Read::read`]), so what is read must be consumed to the end
/// ([`finish_hash`] does) for the digest to cover the file. The file's bytes go straight into
/// [`BufReader`]'s buffer (no zeroing of it before each read, as a `BufReader` over a plain
/// `Read` wrapper would). The digest only detects an unchanged source on re-import (the
/// meta's `imported.xxh3`), so a fast non-cryptographic hash is enough: SHA-256 here was ~8 %
/// of an import's CPU.
pub(crate) struct HashingReader<R> {
    inner: BufReader<R>,
    hasher: xxhash_rust::xxh3::Xxh3,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        HashingReader {
            inner: BufReader::with_capacity(1 << 16, inner),
            hasher: xxhash_rust::xxh3::Xxh3::new(),
        }
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for HashingReader<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        let buffered = self.inner.buffer();
        let amount = amount.min(buffered.len());
        self.hasher.update(&buffered[..amount]);
        self.inner.consume(amount);
    }
}

/// The digest of a whole transcript as the meta keeps it (`imported.xxh3`): XXH3-128 of its
/// bytes, 32 lowercase hex digits.
pub(crate) fn digest_hex(hasher: &xxhash_rust::xxh3::Xxh3) -> String {
    xxh3_hex(hasher.digest128())
}

/// An XXH3-128 value as the metas write it: 32 lowercase hex digits (the source's digest, the
/// sync mark's fingerprints).
pub(crate) fn xxh3_hex(value: u128) -> String {
    format!("{value:032x}")
}

/// Reads what the JSONL reader left unread into the hash and returns the digest
/// ([`digest_hex`]).
pub(crate) fn finish_hash<R: Read>(mut reader: HashingReader<R>, path: &Path) -> Result<String> {
    // Whatever the reader left unread (nothing, normally) still belongs to the hash.
    std::io::copy(&mut reader, &mut std::io::sink())
        .map_err(|e| Error::io("cannot read", path, e))?;
    Ok(digest_hex(&reader.hasher))
}
