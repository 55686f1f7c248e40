//! Reading files a person or another program put on disk, safely: regular files only (checked
//! before and after opening), opened non-blocking (a FIFO swapped in cannot hang the open or the
//! read), never more than a byte budget. The one reader behind `mem_instructions::read_capped`
//! (instruction and `memories.md` files, configs), `mem_recall`'s note scan and `mem_session`'s
//! transcript import.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::Path;

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: char = '\u{FEFF}';

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The path is not a regular file (a directory, FIFO, socket or device): refused by its
    /// type, so a FIFO never blocks.
    #[error("not a regular file ({kind})")]
    NotAFile {
        /// What it is: `"a directory"`, `"a FIFO"`, `"a socket"`, `"a device"`, `"not a
        /// regular file"` (see [`file_kind`]).
        kind: &'static str,
    },
    /// The file could not be opened or read (missing, permission denied...).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a file type is, for messages: `"a regular file"`, `"a directory"`, `"a FIFO"`,
/// `"a socket"`, `"a device"`, else `"not a regular file"`.
pub fn file_kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_file() {
        return "a regular file";
    }
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
    }
    "not a regular file"
}

fn check_regular(meta: &Metadata) -> Result<(), ReadError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(ReadError::NotAFile {
            kind: file_kind(&meta.file_type()),
        })
    }
}

/// Opens `path` read-only with `O_NONBLOCK | O_NOCTTY` on Unix (a plain read-only open
/// elsewhere): opening a FIFO or a terminal never waits. No type check: see [`open_regular`].
///
/// # Errors
/// The operating system's error.
#[cfg(unix)]
pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// See the Unix version.
///
/// # Errors
/// The operating system's error.
#[cfg(not(unix))]
pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

/// Opens the regular file at `path` (symlinks followed) for reading: its type is checked on the
/// path before opening (a FIFO is refused without being opened), the open is non-blocking
/// ([`open_nonblocking`]), and the opened file's type is checked again (the path may have been
/// swapped in between). Returns the file and its metadata (size in bytes: `meta.len()`).
///
/// # Errors
/// [`ReadError::NotAFile`] for anything but a regular file, [`ReadError::Io`] when it cannot be
/// looked at or opened.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), ReadError> {
    check_regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    check_regular(&meta)?;
    Ok((file, meta))
}

/// Bytes read by [`read_prefix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CappedBytes {
    /// The bytes kept: at most the budget, and when the file was cut, never an incomplete UTF-8
    /// sequence at the end.
    pub bytes: Vec<u8>,
    /// Size of the file on disk, in bytes.
    pub size: u64,
    /// `true` when the file is larger than the budget and `bytes` is its beginning.
    pub truncated: bool,
    /// The opened file's modification time (`None` where the platform has none).
    pub modified: Option<std::time::SystemTime>,
}

/// Reads at most `max_bytes` bytes of the regular file at `path` ([`open_regular`]); only that
/// many bytes (plus one, to tell a cut) are read, however large the file. A cut drops an
/// incomplete UTF-8 sequence at its end, so text is never cut inside a character.
///
/// # Errors
/// Those of [`open_regular`]; [`ReadError::Io`] when reading fails.
pub fn read_prefix(path: &Path, max_bytes: usize) -> Result<CappedBytes, ReadError> {
    let (file, meta) = open_regular(path)?;
    let size = meta.len();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(max_bytes).min(max_bytes));
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    file.take(limit).read_to_end(&mut bytes)?;
    let truncated = bytes.len() > max_bytes;
    if truncated {
        bytes.truncate(max_bytes);
        if let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            bytes.truncate(e.valid_up_to());
        }
    }
    Ok(CappedBytes {
        bytes,
        size,
        truncated,
        modified: meta.modified().ok(),
    })
}

/// [`open_regular`] as an `std::io` call: the drop-in for `File::open` of a file to read.
///
/// # Errors
/// As [`read`].
pub fn open(path: impl AsRef<Path>) -> std::io::Result<File> {
    open_regular(path.as_ref()).map(|(f, _)| f).map_err(into_io)
}

/// Reads the whole regular file at `path` ([`open_regular`]: a FIFO, socket, device or directory
/// is refused without blocking): the drop-in for `std::fs::read` wherever mewmem reads a file
/// that a person or another program may have replaced. For files mewmem writes itself and
/// bounds; use [`read_prefix`] where the size must be capped.
///
/// # Errors
/// The operating system's error (`NotFound` for a missing file, kept so callers can tell it);
/// a non-regular file is an error of kind `InvalidInput` whose message says what it is
/// ("not a regular file (a FIFO)"). The message does not carry the path: callers name it.
pub fn read(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    let (mut file, meta) = open_regular(path.as_ref()).map_err(into_io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read`] as UTF-8 text: the drop-in for `std::fs::read_to_string`.
///
/// # Errors
/// Those of [`read`]; `InvalidData` when the file is not UTF-8.
pub fn read_to_string(path: impl AsRef<Path>) -> std::io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// A [`ReadError`] as an `std::io::Error` (a non-regular file is `InvalidInput`).
pub fn into_io(e: ReadError) -> std::io::Error {
    match e {
        ReadError::Io(e) => e,
        e @ ReadError::NotAFile { .. } => {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
        }
    }
}

/// Text read by [`read_capped`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CappedText {
    /// The text kept: at most the budget in bytes, cut on a character boundary. A leading
    /// byte-order mark (U+FEFF) is removed; invalid UTF-8 is replaced by U+FFFD.
    pub text: String,
    /// Size of the file on disk, in bytes.
    pub size: u64,
    /// `true` when the file is larger than the budget and `text` is its beginning.
    pub truncated: bool,
    /// `true` when invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// [`read_prefix`] as text: invalid UTF-8 replaced by U+FFFD (`lossy` set), a leading UTF-8
/// byte-order mark dropped (it counts in the budget of `max_bytes` bytes).
///
/// # Errors
/// Those of [`read_prefix`].
pub fn read_capped(path: &Path, max_bytes: usize) -> Result<CappedText, ReadError> {
    let CappedBytes {
        bytes,
        size,
        truncated,
        ..
    } = read_prefix(path, max_bytes)?;
    let (mut text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    // A byte-order mark is not text: left in, it hides a fence or a directive on the first
    // line from a parser and is sent to the model.
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(CappedText {
        text,
        size,
        truncated,
        lossy,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn check(content: &[u8], max: usize, want: &str, truncated: bool, lossy: bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.md");
        std::fs::write(&path, content).unwrap();
        let got = read_capped(&path, max).unwrap();
        assert_eq!(
            got,
            CappedText {
                text: want.to_owned(),
                size: content.len() as u64,
                truncated,
                lossy
            }
        );
    }

    #[test]
    fn small_file_is_read_whole() {
        check(b"hello\n", 100, "hello\n", false, false);
        check(b"hello", 5, "hello", false, false);
    }

    #[test]
    fn large_file_is_cut_on_a_character_boundary() {
        check(b"abcdef", 4, "abcd", true, false);
        // "é" is two bytes: a cut after its first byte keeps neither.
        check("abcé".as_bytes(), 4, "abc", true, false);
        check("a€b".as_bytes(), 3, "a", true, false);
        check("a€b".as_bytes(), 4, "a€", true, false);
    }

    #[test]
    fn prefix_keeps_bytes_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"ab\xffcd").unwrap();
        let got = read_prefix(&path, 3).unwrap();
        assert_eq!(
            (got.bytes.as_slice(), got.size, got.truncated),
            (b"ab\xff".as_slice(), 5, true)
        );
        assert_eq!(
            got.modified,
            std::fs::metadata(&path).unwrap().modified().ok()
        );
    }

    #[test]
    fn leading_byte_order_mark_is_removed() {
        check(
            b"\xef\xbb\xbf@include a.md\n",
            100,
            "@include a.md\n",
            false,
            false,
        );
        check(b"\xef\xbb\xbfabcdef", 5, "ab", true, false);
        check(b"\xef\xbb\xbf\xff", 10, "\u{fffd}", false, true);
        // Only at the start.
        check("a\u{feff}b".as_bytes(), 10, "a\u{feff}b", false, false);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        check(b"a\xffb", 10, "a\u{fffd}b", false, true);
    }

    #[test]
    fn directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), 10).unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::NotAFile {
                    kind: "a directory"
                }
            ),
            "{err:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe.md");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read_prefix(&path, 10).unwrap_err();
        assert!(
            matches!(err, ReadError::NotAFile { kind: "a FIFO" }),
            "{err:?}"
        );
        assert!(matches!(
            open_regular(&dir.path().join("missing")),
            Err(ReadError::Io(_))
        ));
        // The whole-file readers too, and they keep `NotFound`.
        let err = read(&path).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "not a regular file (a FIFO)");
        assert!(read_to_string(&path).is_err());
        assert_eq!(
            read(dir.path().join("missing")).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        std::fs::write(dir.path().join("f"), "text").unwrap();
        assert_eq!(read_to_string(dir.path().join("f")).unwrap(), "text");
    }
}
