//! Auto memory by hand (`mem extract`, seed 000 §3): the messages of one or every session after
//! its last extraction, through the extract job, merged into `~/.mewcode/memories.md` and
//! `<project>/.mewcode/memories.md`.

use mem_auto::{AutoMemory, ExtractOptions, ExtractReport, extract_session};
use mem_llm::Llm;
use mem_session::SessionStore;

use crate::error::{Error, Result};

/// The sessions to extract from: with `all`, every session of the store, oldest first; else
/// `session` (an id or a unique prefix), or the most recently active one.
///
/// Errors: [`Error::NoSessions`] when there is none; the store's (no such session, ambiguous
/// prefix...).
pub fn session_ids(store: &SessionStore, all: bool, session: Option<&str>) -> Result<Vec<String>> {
    if !all {
        return Ok(vec![super::session::resolve(store, session)?]);
    }
    let mut metas = store.list()?;
    metas.reverse();
    if metas.is_empty() {
        return Err(Error::NoSessions {
            dir: store.dir().to_owned(),
        });
    }
    Ok(metas.into_iter().map(|m| m.id).collect())
}

/// Extracts from each session of `ids` in turn (mem-auto's `extract_session`), with `llm` as
/// the extract job; one report each, in the order of `ids`.
///
/// Errors: the first extraction that fails ([`Error::Auto`]); the reports before it are lost
/// with it (their files are written).
pub async fn extract(
    auto: &AutoMemory,
    store: &SessionStore,
    ids: &[String],
    llm: &dyn Llm,
    options: &ExtractOptions,
) -> Result<Vec<ExtractReport>> {
    let mut reports = Vec::new();
    for id in ids {
        reports.push(extract_session(auto, store, id, llm, options).await?);
    }
    Ok(reports)
}
