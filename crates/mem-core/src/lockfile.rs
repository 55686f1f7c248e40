//! One advisory lock file per folder, taken with a deadline: the lock that checkpoints, notes
//! folders and skills folders share (each names its own file and error).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

/// Why [`lock_exclusive`] did not return the lock.
#[derive(Debug)]
pub enum LockFailure {
    /// Another holder kept the lock for the whole timeout; `waited` is how long this one waited.
    TimedOut {
        /// Time spent waiting.
        waited: Duration,
    },
    /// The lock file could not be opened (`action` is `"open"`) or locked (`"lock"`).
    Io {
        /// What failed: `"open"` or `"lock"`.
        action: &'static str,
        /// The cause.
        source: std::io::Error,
    },
}

impl LockFailure {
    /// The failure as a caller's error: `locked(waited_ms)` for a timeout (milliseconds
    /// waited), `io(what, source)` otherwise, `what` being "open the lock file" or "lock"
    /// (the phrase after "cannot").
    pub fn into_error<E>(
        self,
        locked: impl FnOnce(u64) -> E,
        io: impl FnOnce(&'static str, std::io::Error) -> E,
    ) -> E {
        match self {
            LockFailure::TimedOut { waited } => locked(waited.as_millis() as u64),
            LockFailure::Io { action, source } => io(
                if action == "open" {
                    "open the lock file"
                } else {
                    "lock"
                },
                source,
            ),
        }
    }
}

/// Opens (creating, never truncating) the lock file at `path` and takes its exclusive lock,
/// retrying every 20 ms for up to `timeout`. The lock is held while the returned [`File`] lives.
///
/// # Errors
/// [`LockFailure::TimedOut`] after `timeout`; [`LockFailure::Io`] when the file cannot be
/// opened or the lock call itself fails.
pub fn lock_exclusive(path: &Path, timeout: Duration) -> Result<File, LockFailure> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| LockFailure::Io {
            action: "open",
            source,
        })?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(LockFailure::TimedOut {
                        waited: start.elapsed(),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(TryLockError::Error(source)) => {
                return Err(LockFailure::Io {
                    action: "lock",
                    source,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_failure_becomes_the_callers_error() {
        let as_text = |f: LockFailure| {
            f.into_error(
                |ms| format!("locked {ms}"),
                |what, e| format!("cannot {what}: {e}"),
            )
        };
        let waited = Duration::from_millis(1500);
        assert_eq!(as_text(LockFailure::TimedOut { waited }), "locked 1500");
        let source = || std::io::Error::other("denied");
        assert_eq!(
            as_text(LockFailure::Io {
                action: "open",
                source: source()
            }),
            "cannot open the lock file: denied"
        );
        assert_eq!(
            as_text(LockFailure::Io {
                action: "lock",
                source: source()
            }),
            "cannot lock: denied"
        );
    }

    #[test]
    fn a_held_lock_times_out_and_is_free_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let held = lock_exclusive(&path, Duration::ZERO).unwrap();
        match lock_exclusive(&path, Duration::from_millis(60)) {
            Err(LockFailure::TimedOut { waited }) => assert!(waited >= Duration::from_millis(60)),
            other => panic!("expected a timeout, got {other:?}"),
        }
        drop(held);
        assert!(lock_exclusive(&path, Duration::ZERO).is_ok());
    }

    #[test]
    fn a_missing_folder_is_an_open_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = lock_exclusive(&dir.path().join("no/such/.lock"), Duration::ZERO).unwrap_err();
        assert!(
            matches!(err, LockFailure::Io { action: "open", .. }),
            "{err:?}"
        );
    }
}
