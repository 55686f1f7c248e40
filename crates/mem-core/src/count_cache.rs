//! Token counts remembered across processes.
//!
//! A hook runs as a new process per event; the first token count in a process loads the BPE
//! vocabulary (~75 ms), more than the SessionStart hook's whole budget. The texts a hook must
//! measure (Tier 0 of the tier store) change rarely, so their counts are kept in a small file
//! keyed by a digest of the encoding and the text: the next process that sees the same text
//! reads the count instead of loading the vocabulary.
//!
//! File format (UTF-8, one entry per line, newest last): `mewmem-token-counts 1` on the first
//! line, then `<encoding> <sha256 of the text, 64 hex digits> <tokens>`. The file holds no text,
//! only digests and numbers. It is a cache: a missing, unreadable or damaged file (or line) costs
//! one count, never an error; a write replaces the file atomically (temporary file in the same
//! directory, then rename), and two processes writing at once lose at most the other's new
//! entries. At most [`CountCache::CAPACITY`] entries are kept, the oldest dropped first.

use std::cell::RefCell;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::digest::sha256_hex;
use crate::tokens::TokenCounter;

const HEADER: &str = "mewmem-token-counts 1";

/// A file-backed map from (encoding, text) to its token count. See the module docs.
#[derive(Debug)]
pub struct CountCache {
    path: PathBuf,
    /// `(encoding, digest, tokens)`, oldest first.
    entries: RefCell<Vec<(String, String, usize)>>,
    dirty: RefCell<bool>,
}

impl CountCache {
    /// Entries kept in the file.
    pub const CAPACITY: usize = 64;

    /// Bytes read from the file at most: 64 entries of an encoding name, 64 hex digits and a
    /// number take about 6 KiB; anything past the cap is ignored.
    pub const MAX_FILE_BYTES: usize = 64 * 1024;

    /// The cache stored at `path`, read now through the safe reader (a FIFO or device there is
    /// not opened for blocking; at most [`CountCache::MAX_FILE_BYTES`] bytes are read). A
    /// missing, unreadable or non-regular file is an empty cache; lines that do not parse are
    /// skipped.
    pub fn open(path: &Path) -> Self {
        let mut entries = Vec::new();
        if let Ok(crate::fsread::CappedText { text, .. }) =
            crate::fsread::read_capped(path, Self::MAX_FILE_BYTES)
        {
            let mut lines = text.lines();
            if lines.next() == Some(HEADER) {
                for line in lines {
                    let mut parts = line.split(' ');
                    let (Some(enc), Some(digest), Some(tokens), None) =
                        (parts.next(), parts.next(), parts.next(), parts.next())
                    else {
                        continue;
                    };
                    let Ok(tokens) = tokens.parse::<usize>() else {
                        continue;
                    };
                    if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                        entries.push((enc.to_owned(), digest.to_owned(), tokens));
                    }
                }
            }
        }
        let excess = entries.len().saturating_sub(Self::CAPACITY);
        entries.drain(..excess);
        CountCache {
            path: path.to_owned(),
            entries: RefCell::new(entries),
            dirty: RefCell::new(false),
        }
    }

    /// Where the cache is stored.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tokens of `text` under `counter`'s encoding: the remembered count when this text was
    /// counted before, else [`TokenCounter::count`] (remembered for [`CountCache::save`]).
    pub fn count(&self, counter: &TokenCounter, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let enc = counter.encoding().to_string();
        let digest = sha256_hex(text.as_bytes());
        if let Some((_, _, n)) = self
            .entries
            .borrow()
            .iter()
            .find(|(e, d, _)| *e == enc && *d == digest)
        {
            return *n;
        }
        let n = counter.count(text);
        let mut entries = self.entries.borrow_mut();
        entries.push((enc, digest, n));
        let excess = entries.len().saturating_sub(Self::CAPACITY);
        entries.drain(..excess);
        *self.dirty.borrow_mut() = true;
        n
    }

    /// Writes the cache when a count was added since it was opened (its directory created
    /// when missing); nothing otherwise.
    ///
    /// # Errors
    /// I/O errors creating the directory, writing the temporary file or renaming it.
    pub fn save(&self) -> io::Result<()> {
        if !*self.dirty.borrow() {
            return Ok(());
        }
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        let mut body = String::from(HEADER);
        body.push('\n');
        for (enc, digest, n) in self.entries.borrow().iter() {
            body.push_str(&format!("{enc} {digest} {n}\n"));
        }
        tmp.write_all(body.as_bytes())?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        *self.dirty.borrow_mut() = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn a_saved_count_is_read_back_by_a_new_cache_for_the_same_text_and_encoding_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache").join("token-counts");
        let o200k = TokenCounter::default();
        let cl100k = TokenCounter::new(Encoding::Cl100kBase);
        let text = "永远使用参数化查询 — run `cargo nextest` before committing 🦀";
        let c = CountCache::open(&path);
        let exact = o200k.count(text);
        assert_eq!(c.count(&o200k, text), exact);
        c.save().unwrap();
        // Forge the stored number: a reopened cache must answer from the file, not recount.
        let stored = fs::read_to_string(&path).unwrap();
        assert!(stored.starts_with("mewmem-token-counts 1\n"));
        assert!(
            !stored.contains("cargo"),
            "the file holds digests, never text"
        );
        fs::write(&path, stored.replace(&format!(" {exact}\n"), " 999999\n")).unwrap();
        let again = CountCache::open(&path);
        assert_eq!(again.count(&o200k, text), 999_999);
        // Another encoding or another text is counted, not looked up.
        assert_eq!(again.count(&cl100k, text), cl100k.count(text));
        assert_eq!(again.count(&o200k, "other text"), o200k.count("other text"));
    }

    #[test]
    fn damaged_files_and_lines_cost_a_count_never_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token-counts");
        let c = TokenCounter::default();
        let digest = sha256_hex(b"hello world");
        for body in [
            String::from("\u{0}\u{1}garbage"),
            format!("wrong-header\no200k_base {digest} 7\n"),
            format!("{HEADER}\no200k_base {digest} seven\n"),
            format!("{HEADER}\no200k_base {digest}\n"),
            format!("{HEADER}\no200k_base nothex 7\n"),
        ] {
            fs::write(&path, body).unwrap();
            assert_eq!(CountCache::open(&path).count(&c, "hello world"), 2);
        }
        // A directory where the file should be: reading and saving fail softly / with an error.
        let d = dir.path().join("is-a-dir");
        fs::create_dir(&d).unwrap();
        let cache = CountCache::open(&d);
        assert_eq!(cache.count(&c, "hello world"), 2);
        assert!(cache.save().is_err());
    }

    #[test]
    fn at_most_capacity_entries_are_kept_oldest_dropped_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token-counts");
        let c = TokenCounter::default();
        let cache = CountCache::open(&path);
        for i in 0..CountCache::CAPACITY + 5 {
            cache.count(&c, &format!("text number {i}"));
        }
        cache.save().unwrap();
        let body = fs::read_to_string(&path).unwrap();
        assert_eq!(body.lines().count(), CountCache::CAPACITY + 1);
        assert!(!body.contains(&sha256_hex(b"text number 0")));
        assert!(body.contains(&sha256_hex(
            format!("text number {}", CountCache::CAPACITY + 4).as_bytes()
        )));
    }

    #[test]
    fn an_unchanged_cache_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token-counts");
        let cache = CountCache::open(&path);
        cache.save().unwrap();
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_path_is_an_empty_cache_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token-counts");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            let cache = CountCache::open(&p);
            let n = cache.count(&TokenCounter::default(), "hello world");
            tx.send((n, cache.save().is_ok())).unwrap();
        });
        let (n, saved) = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening a FIFO blocked");
        assert_eq!(n, 2);
        assert!(saved);
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
    }
}
