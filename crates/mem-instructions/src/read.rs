//! Reading a text file safely: regular files only, never blocking, never more than a budget.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

use crate::error::ReadError;

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: char = '\u{FEFF}';

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

/// Reads at most `max_bytes` bytes of the regular file at `path` (symlinks followed).
///
/// Directories, FIFOs, sockets and devices are refused by their type before being opened, and
/// the file is opened non-blocking, so this never waits on a writer. A file larger than
/// `max_bytes` is cut at the last character boundary at or before `max_bytes`; only that many
/// bytes are read, however large the file. A leading UTF-8 byte-order mark (U+FEFF) is dropped
/// from the text (it counts in the budget).
///
/// # Errors
/// [`ReadError::NotAFile`] for anything but a regular file, [`ReadError::Io`] when it cannot be
/// opened or read.
pub fn read_capped(path: &Path, max_bytes: usize) -> Result<CappedText, ReadError> {
    let meta = std::fs::metadata(path)?;
    check_regular(&meta)?;
    let file = open_nonblocking(path)?;
    // The file may have been swapped between the two calls: check what was opened.
    let meta = file.metadata()?;
    check_regular(&meta)?;
    let size = meta.len();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(max_bytes).min(max_bytes));
    let limit = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    file.take(limit).read_to_end(&mut bytes)?;
    let truncated = bytes.len() > max_bytes;
    if truncated {
        bytes.truncate(max_bytes);
        // Never cut inside a character: drop an incomplete sequence at the end.
        if let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            bytes.truncate(e.valid_up_to());
        }
    }
    let (mut text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    // A byte-order mark is not text: left in, it hides a fence or a directive on the first
    // line from the include parser and is sent to the model.
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

fn check_regular(meta: &std::fs::Metadata) -> Result<(), ReadError> {
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    Err(ReadError::NotAFile {
        kind: file_kind(&ft),
    })
}

#[cfg(unix)]
fn file_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn file_kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

#[cfg(test)]
mod tests {
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
}
