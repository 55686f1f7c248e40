//! Points in a session's `.jsonl`: [`MetaMark`] (the meta at a record boundary) and the
//! import's sync mark kept in the meta (`imported.sync`).

use serde_json::Value;

use crate::error::Result;
use crate::meta::{IMPORTED_KEY, SessionMeta};
use crate::record::SessionRecord;

use super::files::tail_fingerprint;
use super::{SessionStore, encode_record};

impl SessionStore {
    /// The meta as it was right before `tail`, the last records of a session whose meta (after
    /// all of them) is `meta`; `before` is the record right before `tail` (`None` when `tail`
    /// is the whole session). Costs the size of `tail`, not of the session: counts are the
    /// final ones minus what `tail` added.
    ///
    /// Errors: [`Error::Serialize`](crate::Error::Serialize) when a record cannot be encoded.
    pub fn mark_before(
        &self,
        meta: &SessionMeta,
        before: Option<&SessionRecord>,
        tail: &[SessionRecord],
    ) -> Result<MetaMark> {
        let mut tail_bytes = 0u64;
        let mut sizes = Vec::with_capacity(tail.len());
        for record in tail {
            let n = encode_record(&meta.id, record)?.len() as u64;
            sizes.push(n);
            tail_bytes += n;
        }
        let start = meta.jsonl_bytes.saturating_sub(tail_bytes);
        // With a deferred count, only the tail's records before the pending offset are in
        // `token_count`; a pending offset at or before the point carries over as it is.
        let pending = meta.tokens_pending_from;
        let mut offset = start;
        let mut messages = 0usize;
        let mut compactions = 0usize;
        let mut tokens = 0usize;
        let mut boundary_in_tail = false;
        for (record, size) in tail.iter().zip(sizes) {
            let counted = pending.is_none_or(|p| offset < p);
            offset += size;
            match record.record_type {
                crate::record::RecordType::User
                | crate::record::RecordType::Assistant
                | crate::record::RecordType::ToolResult => {
                    if let Some(m) = &record.message {
                        messages += 1;
                        if !boundary_in_tail && counted {
                            tokens += self.options.counter.count_message(m);
                        }
                    }
                }
                crate::record::RecordType::CompactBoundary
                | crate::record::RecordType::Compression => {
                    if crate::record::parse_compact_boundary(record).is_some() {
                        compactions += 1;
                        boundary_in_tail = true;
                    }
                }
                crate::record::RecordType::Rollback => {
                    if crate::record::parse_rollback(record).is_some() {
                        boundary_in_tail = true;
                    }
                }
                crate::record::RecordType::SystemPrompt => {}
            }
        }
        let tail_fp = match before {
            Some(r) => tail_fingerprint(&encode_record(&meta.id, r)?),
            None => String::new(),
        };
        Ok(MetaMark {
            bytes: start,
            tail: tail_fp,
            message_count: meta.message_count.saturating_sub(messages),
            // A boundary in the tail resets the count when the tail is applied again.
            token_count: if boundary_in_tail {
                0
            } else {
                meta.token_count.saturating_sub(tokens)
            },
            tokens_pending_from: pending.filter(|&p| p <= start),
            compactions: meta.compactions.saturating_sub(compactions),
            last_active: before
                .and_then(|r| r.timestamp.clone())
                .unwrap_or_else(|| meta.created.clone()),
        })
    }
}

/// Key of [`SessionMeta::extra`] present while [`SessionStore::rewrite_tail`] runs (left there
/// by a crash): `{"from": bytes}`, the length the `.jsonl` was being cut back to.
pub const REWRITING_KEY: &str = "rewriting";

/// A session's meta at one point of its `.jsonl` (a record boundary): enough to cut the file
/// back there and rebuild the meta from the records appended after it, without reading
/// anything before (see [`SessionStore::rewrite_tail`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MetaMark {
    /// Byte length of the `.jsonl` up to the point.
    pub bytes: u64,
    /// Hex of the (up to) 32 bytes before the point, as [`SessionMeta::jsonl_tail`].
    pub tail: String,
    /// [`SessionMeta::message_count`] at the point.
    pub message_count: usize,
    /// [`SessionMeta::token_count`] at the point (0 when a boundary follows: it resets it).
    pub token_count: usize,
    /// [`SessionMeta::tokens_pending_from`] at the point (`None`: `token_count` is complete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_pending_from: Option<u64>,
    /// [`SessionMeta::compactions`] at the point.
    pub compactions: usize,
    /// [`SessionMeta::last_active`] at the point.
    pub last_active: String,
}

/// Key of the sync mark inside the meta's `imported` object.
pub(crate) const SYNC_KEY: &str = "sync";

/// Where the next incremental import of a source restarts (`imported.sync` in the meta).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct SyncMark {
    /// Byte offset in the source of the line the conversion restarts at.
    pub(crate) offset: u64,
    /// That line's number (1-based).
    pub(crate) line: usize,
    /// Fingerprint (XXH3-128 hex; SHA-256 hex in marks written before it) of the source's
    /// first bytes (up to 64 KiB, never past `offset`).
    pub(crate) head: String,
    /// Fingerprint of the source's (up to) 64 KiB right before `offset`.
    pub(crate) before: String,
    /// The session at the point where the records of `line` on start.
    pub(crate) session: MetaMark,
}

impl SyncMark {
    /// The sync mark `meta` holds, if any.
    pub(crate) fn of(meta: &SessionMeta) -> Option<SyncMark> {
        let v = meta.extra.get(IMPORTED_KEY)?.get(SYNC_KEY)?;
        serde_json::from_value(v.clone()).ok()
    }
}

/// The byte offset of the sync mark's session point when its token count is deferred
/// ([`MetaMark::tokens_pending_from`]), for the store to complete it while it counts.
pub(crate) fn pending_sync_mark(meta: &SessionMeta) -> Option<u64> {
    SyncMark::of(meta)
        .filter(|m| m.session.tokens_pending_from.is_some())
        .map(|m| m.session.bytes)
}

/// Sets the sync mark's session token count to the complete `tokens` (counted by the store).
pub(crate) fn complete_sync_mark(meta: &mut SessionMeta, tokens: usize) {
    let Some(mut mark) = SyncMark::of(meta) else {
        return;
    };
    mark.session.token_count = tokens;
    mark.session.tokens_pending_from = None;
    if let (Some(Value::Object(imported)), Ok(v)) = (
        meta.extra.get_mut(IMPORTED_KEY),
        serde_json::to_value(&mark),
    ) {
        imported.insert(SYNC_KEY.to_owned(), v);
    }
}
