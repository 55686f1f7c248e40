//! Keeping SQLite FTS5 indexes merged as writes add to them: the memory store's `docs_word` and
//! `docs_trigram` (mem-tiers) and the session index's `messages_fts` (mem-session).
//!
//! Each write transaction leaves a new segment; FTS5's automerge keeps the small ones in check
//! but leaves several large ones, and a search reads one b-tree per term per segment (at
//! 100,000 learnings a whole `mem memory search` on an unmerged store: 1.54–1.77× the `sqlite3`
//! floor; merged: 1.29–1.50×, `docs/BENCHMARKS.md` "Stop 43" and "Stop 44"). A merge
//! (`'optimize'`) rewrites the whole index, so [`tidy`] merges an index only once the segments
//! beside its largest hold a share of it ([`needs_merge`]).
//!
//! FTS5's incremental merge (`'merge'` with a page budget) was tried first: with writes between
//! its steps each step starts a new output segment (611 trigram segments after 300 adds at
//! 100,000 learnings).

use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

/// An index is merged once its segments other than the largest hold at least this many leaf
/// pages (4 KiB each)...
pub const TIDY_MIN_PAGES: i64 = 32;

/// ...and at least this fraction (1/N) of the largest segment's pages: the merge waits until
/// the writes since the last one make up a sixteenth of the index (at 100,000 learnings, 12,014
/// short learnings written one by one in the bench). Small segments beside a merged one cost a
/// search little: 300 one-page segments beside the merged 100,000 left a whole `mem memory
/// search` as fast (`docs/BENCHMARKS.md`, "Stop 44").
pub const TIDY_FRACTION: i64 = 16;

/// An index whose largest segment has more leaf pages than this (256 MiB) is not merged by
/// [`tidy`]: the merge holds the write lock in proportion to the index (0.8 s for the 17,700
/// pages of the trigram index at 100,000 learnings, so about 3 s at this size), and above it
/// would near the 5 s another process's write waits. `mem memory clean` merges the memory
/// store's whole.
pub const TIDY_MAX_PAGES: i64 = 65_536;

/// Whether FTS5 table `table` is due a merge: its segments other than the largest hold at
/// least [`TIDY_MIN_PAGES`] leaf pages and 1/[`TIDY_FRACTION`] of the largest's, the largest
/// holding at most [`TIDY_MAX_PAGES`]. A segment's leaf pages are read from the table's `_idx`
/// shadow table (a row per leaf page where a new term starts, `pgno` the page number shifted
/// left by one); a segment's last leaves, when no term starts there, are not counted.
///
/// # Errors
/// SQLite's (no such table...).
pub fn needs_merge(c: &Connection, table: &str) -> rusqlite::Result<bool> {
    let (largest, rest): (i64, i64) = c.query_row(
        &format!(
            "WITH s(pages) AS (SELECT max(pgno) >> 1 FROM \"{table}_idx\" GROUP BY segid) \
             SELECT coalesce(max(pages), 0), coalesce(sum(pages) - max(pages), 0) FROM s"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(largest <= TIDY_MAX_PAGES && rest >= TIDY_MIN_PAGES.max(largest / TIDY_FRACTION))
}

/// Merges each FTS5 table of `tables` that [`needs_merge`], in one `BEGIN IMMEDIATE`
/// transaction, checked again under the lock (another process may have merged meanwhile).
/// The merge is optional work after a write that has landed: it does not wait for another
/// process's lock (it returns `Ok(false)`, the next write merges), and sets the connection's
/// busy timeout back to `busy_timeout` afterwards. Returns whether it merged anything.
///
/// # Errors
/// SQLite's, other than a busy or locked database.
pub fn tidy(c: &Connection, tables: &[&str], busy_timeout: Duration) -> rusqlite::Result<bool> {
    let mut due = false;
    for t in tables {
        due |= needs_merge(c, t)?;
    }
    if !due {
        return Ok(false);
    }
    c.busy_timeout(Duration::ZERO)?;
    let merged = (|| {
        c.execute_batch("BEGIN IMMEDIATE")?;
        let work = (|| {
            let mut merged = false;
            for t in tables {
                if needs_merge(c, t)? {
                    c.execute(
                        &format!("INSERT INTO \"{t}\"(\"{t}\") VALUES ('optimize')"),
                        [],
                    )?;
                    merged = true;
                }
            }
            Ok(merged)
        })();
        match work {
            Ok(merged) => c.execute_batch("COMMIT").map(|()| merged).inspect_err(|_| {
                let _ = c.execute_batch("ROLLBACK");
            }),
            Err(e) => {
                let _ = c.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    })();
    c.busy_timeout(busy_timeout)?;
    match merged {
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            ) =>
        {
            Ok(false)
        }
        other => other,
    }
}
