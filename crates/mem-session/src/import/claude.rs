//! Claude Code transcripts → sessions. Field mapping: `docs/formats/import.md`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mem_core::{ContentBlock, Message, Role};
use serde_json::{Map, Value};

use super::build::{Builder, IdKey, Merge, Spill, SpillFile, task_key};
use super::text::{TimeSpan, command_title, sanitize_id, shorten_title};
use super::{ImportReport, ImportedSession, SourceFormat, type_of};
use crate::diagnostic::Diagnostic;
use crate::jsonl::JsonLine;
use crate::record::{RecordType, SessionRecord, make_compact_boundary};
use mem_core::speech::user_speech;

/// Summary used when a `compact_boundary` line has no `isCompactSummary` message after it.
const MISSING_SUMMARY: &str =
    "[Claude Code compacted the conversation here but recorded no summary]";

/// Skip reason for lines moved out of the main session into a subagent session.
const MOVED_TO_SUBAGENT: &str = "sidechain (moved to subagent session)";

/// What kind of file this is, from its path.
enum FileRole {
    /// A session file: lines with `isSidechain: true` are split into subagent sessions.
    Main,
    /// A subagent's own file: `<parent>/subagents/agent-<id>.jsonl` (parent known from the
    /// folder) or `agent-<id>.jsonl` beside the session (parent from the lines' `sessionId`).
    Agent {
        agent_id: String,
        parent_from_dir: Option<String>,
    },
}

fn file_role(path: &Path) -> FileRole {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let Some(agent_id) = stem.strip_prefix("agent-") else {
        return FileRole::Main;
    };
    let parent = path.parent();
    let in_subagents = parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == "subagents");
    let parent_from_dir = if in_subagents {
        parent
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(|n| sanitize_id(n, "session"))
    } else {
        None
    };
    FileRole::Agent {
        agent_id: agent_id.to_owned(),
        parent_from_dir,
    }
}

/// A boundary line waiting for its summary message.
struct PendingBoundary {
    /// The file and line of the boundary (for diagnostics).
    path: std::path::PathBuf,
    line: usize,
    timestamp: Option<String>,
    extra: Map<String, Value>,
    preserved: Option<(String, String)>,
}

/// One output session being built: the main conversation or one sidechain.
#[derive(Default)]
struct Stream {
    builder: Builder,
    times: TimeSpan,
    report: ImportReport,
    pending: Option<PendingBoundary>,
    title: Option<String>,
    command_title: Option<String>,
    /// The key ([`task_key`]) of the first real request: a sidechain's is its `Task` prompt.
    first_prompt: Option<[u8; 32]>,
    cwd: Option<String>,
    session_id: Option<String>,
    agent_id: Option<String>,
    root_uuid: Option<String>,
}

pub(crate) fn import(
    path: &Path,
    lines: Vec<JsonLine>,
    diagnostics: Vec<Diagnostic>,
) -> Vec<ImportedSession> {
    let titles = Titles::scan(&lines);
    let mut conv = Converter::new(path, None);
    conv.reader_diagnostics = diagnostics;
    for line in lines {
        conv.line(line);
    }
    conv.finish(Some(titles))
        .into_iter()
        .map(|(session, _)| session)
        .collect()
}

/// Where a streaming conversion spills records: the main session's own file, and a maker of
/// the file shared by the sidechain sessions (made on the first sidechain line).
pub(crate) struct SpillTo {
    /// The main session's spill.
    pub main: Rc<RefCell<SpillFile>>,
    /// Makes the sidechains' shared spill file.
    pub shared: Box<dyn FnMut() -> std::io::Result<SpillFile>>,
}

/// Converts a Claude Code transcript one line at a time ([`Converter::line`]) and finishes
/// the sessions at the end ([`Converter::finish`]). With a [`SpillTo`], each session's records
/// are written out as they settle, so memory holds one turn per session, not the session.
pub(crate) struct Converter {
    path: PathBuf,
    role: FileRole,
    split_sidechains: bool,
    main: Stream,
    /// The sidechains. A file can hold hundreds, most of them parked: boxed, a growing list
    /// moves (and leaves unused) pointers rather than whole sessions' state (~1 KiB each).
    #[expect(
        clippy::vec_box,
        reason = "the list's spare capacity and regrowth cost a pointer per sidechain, not a Stream"
    )]
    groups: Vec<Box<Stream>>,
    /// The sidechain of each sidechain line's uuid (keyed by its hash: 24 bytes of key and
    /// index a line; with the spills' record offsets, the state that grows with the sidechain
    /// lines of the file), to follow `parentUuid`.
    group_of_uuid: HashMap<IdKey, usize>,
    /// Diagnostics of the reader (damaged lines), before those of the conversion.
    pub(crate) reader_diagnostics: Vec<Diagnostic>,
    /// Titles gathered line by line (a streaming conversion has no lines to scan first).
    titles: TitleScan,
    spill: Option<SpillTo>,
    shared: Option<Rc<RefCell<SpillFile>>>,
    /// The first spill error (a sidechain spill that could not be made).
    error: Option<std::io::Error>,
    /// Line and byte offset of the line that started the main session's last record where an
    /// incremental re-import may restart.
    pub(crate) last_restart: Option<(usize, u64)>,
    /// The sidechain the last line went to (the others are parked when spilling).
    active: Option<usize>,
}

impl Converter {
    /// A conversion of `path`, spilling to `spill` when given.
    pub(crate) fn new(path: &Path, spill: Option<SpillTo>) -> Converter {
        let role = file_role(path);
        let mut main = Stream::default();
        if let Some(s) = &spill {
            main.builder = Builder::spilling(Spill::new(Rc::clone(&s.main)));
        }
        Converter {
            path: path.to_owned(),
            split_sidechains: matches!(role, FileRole::Main),
            role,
            main,
            groups: Vec::new(),
            group_of_uuid: HashMap::new(),
            reader_diagnostics: Vec::new(),
            titles: TitleScan::default(),
            spill,
            shared: None,
            error: None,
            last_restart: None,
            active: None,
        }
    }

    /// The first I/O error of the spills, if any (the conversion is then not usable).
    pub(crate) fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    /// Converts one value read from the file.
    pub(crate) fn line(&mut self, line: JsonLine) {
        let path = self.path.as_path();
        let JsonLine {
            line: n,
            value,
            offset,
            ..
        } = line;
        self.titles.see(&value, offset);
        let Value::Object(obj) = value else {
            self.main.report.lines += 1;
            self.main.report.diagnostics.push(
                Diagnostic::error(path, n, "a JSON value that is not an object; skipped")
                    .with_kind("not-an-object"),
            );
            return;
        };
        let main = &mut self.main;
        let is_summary_for_main =
            obj.get("isCompactSummary") == Some(&Value::Bool(true)) && main.pending.is_some();
        let sidechain = self.split_sidechains
            && !is_summary_for_main
            && obj.get("isSidechain") == Some(&Value::Bool(true));
        if !sidechain {
            if let Some(g) = self.active.take() {
                self.groups[g].builder.park();
            }
            let main = &mut self.main;
            let before = main.builder.len();
            main.line(path, n, obj);
            if main.builder.len() > before && main.builder.records.last().is_some_and(restarts_here)
            {
                self.last_restart = Some((n, offset));
            }
            return;
        }
        // Sidechain line in a session file: follow parentUuid to its chain's root.
        let uuid = obj.get("uuid").and_then(Value::as_str);
        let parent = obj.get("parentUuid").and_then(Value::as_str);
        let g = match parent.and_then(|p| self.group_of_uuid.get(&IdKey::of(p))) {
            Some(&g) => g,
            None => {
                let mut stream = Stream {
                    root_uuid: Some(uuid.map_or_else(|| format!("line{n}"), str::to_owned)),
                    ..Stream::default()
                };
                if let Some(spill) = self.spill.as_mut() {
                    if self.shared.is_none() {
                        match (spill.shared)() {
                            Ok(f) => self.shared = Some(Rc::new(RefCell::new(f))),
                            Err(e) => {
                                self.error.get_or_insert(e);
                            }
                        }
                    }
                    if let Some(shared) = &self.shared {
                        stream.builder = Builder::spilling(Spill::deferred(Rc::clone(shared)));
                    }
                }
                self.groups.push(Box::new(stream));
                self.groups.len() - 1
            }
        };
        if let Some(u) = uuid {
            self.group_of_uuid.insert(IdKey::of(u), g);
        }
        self.main.report.lines += 1;
        self.main.report.skip(MOVED_TO_SUBAGENT);
        if self.active != Some(g) {
            if let Some(other) = self.active.take() {
                self.groups[other].builder.park();
            }
            self.groups[g].builder.unpark();
            self.active = Some(g);
        }
        self.groups[g].line(path, n, obj);
    }

    /// The sessions: the main one first, then one per sidechain, each with its spill when
    /// spilling. `titles`: the titles scanned from all lines beforehand (in memory), else
    /// those gathered line by line (a summary whose `leafUuid` names an earlier line is checked
    /// by reading the file again up to it).
    pub(crate) fn finish(
        mut self,
        titles: Option<Titles>,
    ) -> Vec<(ImportedSession, Option<Spill>)> {
        let path = self.path.clone();
        let path = path.as_path();
        let mut main = std::mem::take(&mut self.main);
        let mut reader = std::mem::take(&mut self.reader_diagnostics);
        reader.append(&mut main.report.diagnostics);
        main.report.diagnostics = reader;
        let main_id = match &self.role {
            FileRole::Main => {
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                sanitize_id(stem, "session")
            }
            FileRole::Agent {
                agent_id,
                parent_from_dir,
            } => {
                let parent = parent_from_dir.clone().or_else(|| {
                    main.session_id
                        .as_deref()
                        .map(|s| sanitize_id(s, "session"))
                });
                match parent {
                    Some(p) => sanitize_id(&format!("{p}.agent-{agent_id}"), "agent"),
                    None => sanitize_id(&format!("agent-{agent_id}"), "agent"),
                }
            }
        };
        let parent_id = match &self.role {
            FileRole::Main => None,
            FileRole::Agent {
                parent_from_dir, ..
            } => parent_from_dir.clone().or_else(|| {
                main.session_id
                    .as_deref()
                    .map(|s| sanitize_id(s, "session"))
            }),
        };
        let main_title = match &self.role {
            FileRole::Main => match titles {
                Some(t) => t.best(),
                None => self.titles.best(path),
            },
            FileRole::Agent { .. } => agent_meta_title(path, &mut main.report, &main_id),
        };
        main.flush_boundary(None);
        let main_spill = main.builder.finish_spill();
        let task_titles = match &main_spill {
            Some(spill) => spill.tally.tasks.clone(),
            None => task_descriptions(&main.builder.records),
        };

        let mut out = Vec::with_capacity(1 + self.groups.len());
        out.push((
            main.finish(path, main_id.clone(), parent_id, main_title),
            main_spill,
        ));
        let mut used: HashSet<String> = HashSet::from([main_id.clone()]);
        for group in std::mem::take(&mut self.groups) {
            let mut group = *group;
            let base = match (&group.agent_id, &group.root_uuid) {
                (Some(a), _) => format!("{main_id}.agent-{a}"),
                (None, Some(root)) => format!("{main_id}.sidechain-{root}"),
                (None, None) => format!("{main_id}.sidechain"),
            };
            let mut id = sanitize_id(&base, "sidechain");
            let mut k = 2;
            while used.contains(&id) {
                // Sanitised whole: a long base cut to the id limit keeps room for the suffix.
                id = sanitize_id(&format!("{base}-{k}"), "sidechain");
                k += 1;
            }
            used.insert(id.clone());
            group.builder.unpark();
            let title = group
                .first_prompt
                .as_ref()
                .and_then(|key| task_titles.get(key).cloned());
            group.flush_boundary(None);
            let spill = group.builder.finish_spill();
            out.push((group.finish(path, id, Some(main_id.clone()), title), spill));
        }
        out
    }
}

/// `true` for a record an incremental re-import may restart at (see `ingest::sync_cut`).
fn restarts_here(r: &SessionRecord) -> bool {
    match (r.record_type, &r.message) {
        (RecordType::Assistant, Some(m)) => m.metadata.contains_key("source_line"),
        (RecordType::User, Some(m)) => {
            !m.is_tool_result_only() && m.metadata.contains_key("source_line")
        }
        _ => false,
    }
}

impl Stream {
    /// Handles one line routed to this stream.
    fn line(&mut self, path: &Path, n: usize, obj: Map<String, Value>) {
        self.report.lines += 1;
        let raw_ts = obj.get("timestamp");
        let ts = self.times.see(raw_ts.and_then(Value::as_str));
        if let Some(raw) = raw_ts
            && ts.is_none()
            && !raw.is_null()
        {
            self.times.note_bad(n, raw);
        }
        if self.cwd.is_none() {
            self.cwd = obj.get("cwd").and_then(Value::as_str).map(str::to_owned);
        }
        if self.session_id.is_none() {
            self.session_id = obj
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if self.agent_id.is_none() {
            self.agent_id = obj
                .get("agentId")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        match type_of(&obj) {
            "user" | "assistant" => self.message_line(path, n, obj, ts),
            "system" => match obj.get("subtype").and_then(Value::as_str) {
                Some("compact_boundary") => {
                    self.flush_boundary(None);
                    self.pending = Some(boundary_from(path, n, &obj, ts));
                }
                Some(sub) => self.report.skip(format!("system:{sub}")),
                None => self.report.skip("system"),
            },
            "" => {
                self.report.skip("no type");
                self.report.diagnostics.push(Diagnostic::warning(
                    path,
                    n,
                    "an object without a `type`; skipped",
                ));
            }
            other => self.report.skip(other.to_owned()),
        }
    }

    fn message_line(
        &mut self,
        path: &Path,
        n: usize,
        mut obj: Map<String, Value>,
        ts: Option<String>,
    ) {
        let ty = type_of(&obj).to_owned();
        let Some(Value::Object(mut msg)) = obj.remove("message") else {
            self.report.skip(format!("{ty} (no message)"));
            self.report.diagnostics.push(Diagnostic::warning(
                path,
                n,
                format!("a `{ty}` line without a `message` object; skipped"),
            ));
            return;
        };
        let content = match msg.remove("content") {
            Some(Value::String(s)) => vec![ContentBlock::text(s)],
            Some(Value::Array(items)) => items.into_iter().map(ContentBlock::from_value).collect(),
            _ => Vec::new(),
        };
        let flag = |key: &str| obj.get(key) == Some(&Value::Bool(true));
        if ty == "user" && flag("isCompactSummary") {
            let text = Message::new(Role::User, content).text_content();
            self.flush_boundary(Some(text));
            return;
        }
        if content.is_empty() {
            self.report.skip(format!("{ty} (empty content)"));
            return;
        }
        self.flush_boundary(None);
        let role = if ty == "assistant" {
            Role::Assistant
        } else {
            Role::User
        };
        let mut message = Message::new(role, content);
        let meta = &mut message.metadata;
        meta.insert("source_line".to_owned(), Value::from(n));
        copy(&obj, "uuid", meta, "uuid");
        copy(&obj, "parentUuid", meta, "parent_uuid");
        copy(&obj, "agentId", meta, "agent_id");
        copy(&obj, "requestId", meta, "request_id");
        copy(&msg, "id", meta, "message_id");
        copy(&msg, "model", meta, "model");
        copy(&msg, "stop_reason", meta, "stop_reason");
        copy(&msg, "usage", meta, "usage");
        for (from, to) in [
            ("isMeta", mem_core::metadata_keys::IS_META),
            ("isApiErrorMessage", "is_api_error"),
            ("isVisibleInTranscriptOnly", "visible_in_transcript_only"),
        ] {
            if flag(from) {
                meta.insert(to.to_owned(), Value::Bool(true));
            }
        }
        if role == Role::User && !flag("isMeta") {
            // Kept as it was written, marked where it is the client's words, not the user's.
            mem_core::speech::mark_injected(&mut message);
        }
        if role == Role::User && !flag("isMeta") {
            self.note_title(&message);
        }
        let merge_id = msg.get("id").and_then(Value::as_str).map(str::to_owned);
        let merge = match (&role, &merge_id) {
            (Role::Assistant, Some(id)) => Merge::SameId(id),
            _ => Merge::No,
        };
        self.builder.push(message, ts, merge);
    }

    /// Remembers the first real request (and a slash command as a fallback title).
    fn note_title(&mut self, message: &Message) {
        if message.is_tool_result_only() {
            return;
        }
        for text in message.content.iter().filter_map(ContentBlock::as_text) {
            if self.first_prompt.is_none() && !text.trim().is_empty() {
                self.first_prompt = Some(task_key(text));
            }
            let command = command_title(text);
            if self.title.is_none() {
                let said = user_speech(text).said;
                if command.as_ref().is_some_and(|c| c.contains(' ')) {
                    // A slash command with arguments is the request (`/review fix the parser`).
                    self.title.clone_from(&command);
                } else if !said.is_empty() {
                    self.title = shorten_title(&said);
                }
            }
            if self.command_title.is_none() {
                self.command_title = command;
            }
        }
    }

    /// Emits the pending boundary, with `summary` or the placeholder.
    fn flush_boundary(&mut self, summary: Option<String>) {
        let Some(p) = self.pending.take() else {
            if let Some(text) = summary {
                // A summary message with no boundary line before it (older versions).
                let mut b = make_compact_boundary(text, Vec::new(), None);
                b.extra
                    .insert("source".to_owned(), Value::from("claude-code"));
                self.builder.push_record(b);
            }
            return;
        };
        let keep = match &p.preserved {
            Some((head, tail)) => self.preserved_segment(&p.path, p.line, head, tail),
            None => Vec::new(),
        };
        let mut record = make_compact_boundary(
            summary.unwrap_or_else(|| MISSING_SUMMARY.to_owned()),
            keep,
            p.timestamp,
        );
        record.extra = p.extra;
        self.builder.push_record(record);
    }

    /// Messages from the one with uuid `head` to the one with uuid `tail`, inclusive, taken from
    /// the messages since the last boundary only (a segment never reaches back across one): the
    /// last message holding `tail`, and the last message holding `head` at or before it, so
    /// repeated uuids (trimmed or damaged files) never widen the segment. Capped by
    /// [`super::build::cap_kept`].
    fn preserved_segment(
        &mut self,
        path: &Path,
        line: usize,
        head: &str,
        tail: &str,
    ) -> Vec<Message> {
        let has = |m: &Message, id: &str| {
            m.metadata.get("uuid").and_then(Value::as_str) == Some(id)
                || m.metadata
                    .get("merged_uuids")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(id)))
        };
        // One pass over the messages since the last boundary (read back when spilled): the
        // last one holding `tail`, and the last one holding `head` at or before it.
        let mut messages: Vec<usize> = Vec::new();
        let mut last_head: Option<usize> = None;
        let mut segment: Option<(Option<usize>, usize)> = None;
        for k in self.builder.since_last_boundary()..self.builder.len() {
            let record = match self.builder.get(k) {
                Ok(r) => r,
                Err(e) => {
                    self.builder.fail(e);
                    return Vec::new();
                }
            };
            let Some(m) = &record.message else { continue };
            let at = messages.len();
            messages.push(k);
            if has(m, head) {
                last_head = Some(at);
            }
            if has(m, tail) {
                segment = Some((last_head, at));
            }
        }
        let Some((Some(start), end)) = segment else {
            return Vec::new();
        };
        let picked = &messages[start..=end];
        let message_at = |k: usize| -> std::io::Result<Message> {
            let record = self.builder.get(k)?;
            Ok(record.message.clone().unwrap_or_else(|| Message::user("")))
        };
        let mut failed = None;
        let drop = super::build::cap_start(
            picked.len(),
            |i| match message_at(picked[i]) {
                Ok(m) => super::build::json_len(&m),
                Err(e) => {
                    failed.get_or_insert(e);
                    0
                }
            },
            path,
            line,
            &mut self.report.diagnostics,
        );
        let mut kept = Vec::with_capacity(picked.len() - drop);
        for &k in &picked[drop..] {
            match message_at(k) {
                Ok(m) => kept.push(m),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failed {
            self.builder.fail(e);
        }
        kept
    }

    fn finish(
        mut self,
        path: &Path,
        id: String,
        parent_id: Option<String>,
        title: Option<String>,
    ) -> ImportedSession {
        self.flush_boundary(None);
        if let Some(d) = self.times.bad_diagnostic(path) {
            self.report.diagnostics.push(d);
        }
        let (created, last_active) = self.times.bounds();
        ImportedSession {
            id,
            title: title.or(self.title).or(self.command_title),
            parent_id,
            format: SourceFormat::ClaudeCode,
            source_path: path.to_owned(),
            source_session_id: self.session_id,
            created,
            last_active,
            cwd: self.cwd,
            records: self.builder.records,
            report: self.report,
        }
    }
}

fn copy(from: &Map<String, Value>, key: &str, to: &mut Map<String, Value>, as_key: &str) {
    if let Some(v) = from.get(key)
        && !v.is_null()
    {
        to.insert(as_key.to_owned(), v.clone());
    }
}

fn boundary_from(
    path: &Path,
    n: usize,
    obj: &Map<String, Value>,
    ts: Option<String>,
) -> PendingBoundary {
    let mut extra = Map::new();
    extra.insert("source".to_owned(), Value::from("claude-code"));
    extra.insert("source_line".to_owned(), Value::from(n));
    copy(obj, "uuid", &mut extra, "uuid");
    copy(obj, "logicalParentUuid", &mut extra, "logical_parent_uuid");
    copy(obj, "compactMetadata", &mut extra, "compact_metadata");
    let preserved = obj
        .get("compactMetadata")
        .and_then(|m| m.get("preservedSegment"))
        .and_then(|s| {
            let head = s.get("headUuid")?.as_str()?.to_owned();
            let tail = s.get("tailUuid")?.as_str()?.to_owned();
            Some((head, tail))
        });
    PendingBoundary {
        path: path.to_owned(),
        line: n,
        timestamp: ts,
        extra,
        preserved,
    }
}

/// Titles the agent recorded: `custom-title` (set by the user), `ai-title`, and `summary` lines
/// whose `leafUuid` is a message of this file (summaries at the head of a file often describe
/// other sessions and are ignored).
#[derive(Default)]
pub(crate) struct Titles {
    custom: Option<String>,
    ai: Option<String>,
    summary: Option<String>,
}

impl Titles {
    fn scan(lines: &[JsonLine]) -> Titles {
        let uuids: HashSet<&str> = lines
            .iter()
            .filter_map(|l| l.value.get("uuid").and_then(Value::as_str))
            .collect();
        let mut t = Titles::default();
        for l in lines {
            let v = &l.value;
            let s = |k: &str| v.get(k).and_then(Value::as_str).and_then(shorten_title);
            match v.get("type").and_then(Value::as_str) {
                Some("custom-title") => t.custom = s("customTitle").or(t.custom.take()),
                Some("ai-title") => t.ai = s("aiTitle").or(t.ai.take()),
                Some("summary")
                    if v.get("leafUuid")
                        .and_then(Value::as_str)
                        .is_some_and(|u| uuids.contains(u)) =>
                {
                    t.summary = s("summary").or(t.summary.take());
                }
                _ => {}
            }
        }
        t
    }

    fn best(self) -> Option<String> {
        self.custom.or(self.ai).or(self.summary)
    }
}

/// [`Titles`] gathered one line at a time: a `summary` line counts when its `leafUuid` is the
/// `uuid` of any line of the file. Uuids of later lines are matched as they come; for the
/// summary that would be chosen, earlier lines are checked by reading the file again before
/// it ([`super::uuids_present`]), which only summaries of other sessions (or none) need.
#[derive(Default)]
struct TitleScan {
    custom: Option<String>,
    ai: Option<String>,
    /// Summary lines with a `leafUuid`: leaf, title, byte offset of the line, matched.
    summaries: Vec<(String, Option<String>, u64, bool)>,
    by_leaf: HashMap<String, Vec<usize>>,
}

impl TitleScan {
    fn see(&mut self, v: &Value, offset: u64) {
        let s = |k: &str| v.get(k).and_then(Value::as_str).and_then(shorten_title);
        match v.get("type").and_then(Value::as_str) {
            Some("custom-title") => self.custom = s("customTitle").or(self.custom.take()),
            Some("ai-title") => self.ai = s("aiTitle").or(self.ai.take()),
            Some("summary") => {
                if let Some(leaf) = v.get("leafUuid").and_then(Value::as_str) {
                    self.by_leaf
                        .entry(leaf.to_owned())
                        .or_default()
                        .push(self.summaries.len());
                    self.summaries
                        .push((leaf.to_owned(), s("summary"), offset, false));
                }
            }
            _ => {}
        }
        if let Some(u) = v.get("uuid").and_then(Value::as_str)
            && let Some(found) = self.by_leaf.get(u)
        {
            for &i in found {
                self.summaries[i].3 = true;
            }
        }
    }

    fn best(self, path: &Path) -> Option<String> {
        if let Some(t) = self.custom.or(self.ai) {
            return Some(t);
        }
        // The last summary with a title whose leaf is in the file; those not matched by a
        // later line may be matched by an earlier one.
        let candidates: Vec<&(String, Option<String>, u64, bool)> = self
            .summaries
            .iter()
            .rev()
            .filter(|c| c.1.is_some())
            .collect();
        let unsure: Vec<&(String, Option<String>, u64, bool)> =
            candidates.iter().take_while(|c| !c.3).copied().collect();
        let found = if unsure.is_empty() {
            HashSet::new()
        } else {
            let leaves: HashSet<String> = unsure.iter().map(|c| c.0.clone()).collect();
            let end = unsure.iter().map(|c| c.2).max().unwrap_or(0);
            super::uuids_present(path, &leaves, end)
        };
        candidates
            .into_iter()
            .find(|c| c.3 || found.contains(&c.0))
            .and_then(|c| c.1.clone())
    }
}

/// A subagent file's title from its `.meta.json` sidecar (`description`, else `agentType`).
fn agent_meta_title(path: &Path, report: &mut ImportReport, id: &str) -> Option<String> {
    let sidecar = path.with_extension("meta.json");
    let text = mem_core::fsread::read_to_string(&sidecar).ok()?;
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => {
            let s = |k: &str| v.get(k).and_then(Value::as_str).and_then(shorten_title);
            s("description").or_else(|| s("agentType"))
        }
        Err(e) => {
            report.diagnostics.push(Diagnostic::warning(
                &sidecar,
                0,
                format!("subagent metadata of `{id}` is not JSON ({e}); title not taken from it"),
            ));
            None
        }
    }
}

/// `Task`/`Agent` tool calls of the main session: prompt → description, to title the inline
/// sidechain that ran the prompt.
fn task_descriptions(records: &[SessionRecord]) -> HashMap<[u8; 32], String> {
    let mut out = HashMap::new();
    for m in records.iter().filter_map(|r| r.message.as_ref()) {
        for block in &m.content {
            if let ContentBlock::ToolUse { name, input, .. } = block
                && (name == "Task" || name == "Agent")
                && let Some(prompt) = input.get("prompt").and_then(Value::as_str)
                && let Some(desc) = input.get("description").and_then(Value::as_str)
                && let Some(title) = shorten_title(desc)
            {
                out.entry(task_key(prompt)).or_insert(title);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordType;
    use serde_json::json;

    fn run(name: &str, lines: &[Value]) -> Vec<ImportedSession> {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(i, v)| JsonLine {
                line: i + 1,
                offset: 0,
                value: v.clone(),
                codex: None,
            })
            .collect();
        let mut out = import(Path::new(name), lines, Vec::new());
        for s in &mut out {
            super::super::build::finish(s);
        }
        out
    }

    fn assistant(uuid: &str, id: &str, block: Value) -> Value {
        json!({"type":"assistant","uuid":uuid,"sessionId":"s","timestamp":"2025-01-01T00:00:01Z",
               "message":{"id":id,"role":"assistant","model":"m","content":[block]}})
    }
    fn user(uuid: &str, content: Value) -> Value {
        json!({"type":"user","uuid":uuid,"sessionId":"s","timestamp":"2025-01-01T00:00:00Z",
               "message":{"role":"user","content":content}})
    }

    #[test]
    fn streamed_lines_of_one_message_merge() {
        let out = run(
            "s.jsonl",
            &[
                user("u0", json!("list files please")),
                assistant(
                    "a1",
                    "msg_1",
                    json!({"type":"thinking","thinking":"","signature":"x"}),
                ),
                assistant(
                    "a2",
                    "msg_1",
                    json!({"type":"tool_use","id":"t1","name":"Bash","input":{}}),
                ),
                assistant(
                    "a3",
                    "msg_1",
                    json!({"type":"tool_use","id":"t2","name":"Bash","input":{}}),
                ),
                user(
                    "u1",
                    json!([{"type":"tool_result","tool_use_id":"t1","content":"a"}]),
                ),
                user(
                    "u2",
                    json!([{"type":"tool_result","tool_use_id":"t2","content":"b"}]),
                ),
                assistant("a4", "msg_2", json!({"type":"text","text":"done"})),
            ],
        );
        assert_eq!(out.len(), 1);
        let s = &out[0];
        let kinds: Vec<(RecordType, usize)> = s
            .records
            .iter()
            .map(|r| {
                (
                    r.record_type,
                    r.message.as_ref().map_or(0, |m| m.content.len()),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (RecordType::User, 1),
                (RecordType::Assistant, 3),
                (RecordType::ToolResult, 2),
                (RecordType::Assistant, 1)
            ]
        );
        assert_eq!(s.report.tool_pairs, 2);
        assert_eq!(s.title.as_deref(), Some("list files please"));
        assert_eq!(s.id, "s");
    }

    #[test]
    fn boundary_and_summary_become_one_record() {
        let out = run(
            "s.jsonl",
            &[
                user("u0", json!("hi")),
                json!({"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,
                       "timestamp":"2025-01-01T00:00:05Z","compactMetadata":{"trigger":"manual","preTokens":5}}),
                json!({"type":"user","uuid":"u9","isCompactSummary":true,"isVisibleInTranscriptOnly":true,
                       "message":{"role":"user","content":"This session is being continued... SUMMARY"}}),
                user("u10", json!("next")),
            ],
        );
        let s = &out[0];
        assert_eq!(s.report.boundaries, 1);
        let b = &s.records[1];
        assert_eq!(b.record_type, RecordType::CompactBoundary);
        assert!(b.summary.as_deref().unwrap_or("").ends_with("SUMMARY"));
        assert_eq!(
            b.extra.get("compact_metadata"),
            Some(&json!({"trigger":"manual","preTokens":5}))
        );
        assert_eq!(s.records.len(), 3);
    }

    #[test]
    fn inline_sidechains_split_by_chain() {
        let task = json!({"type":"tool_use","id":"t1","name":"Task","input":{"description":"Explore","prompt":"look around"}});
        let side = |uuid: &str, parent: Option<&str>, content: Value, ty: &str| {
            let mut v = json!({"type":ty,"uuid":uuid,"parentUuid":parent,"isSidechain":true,"sessionId":"s",
                               "message":{"role":ty,"content":content}});
            if ty == "assistant" {
                v["message"]["id"] = json!(format!("m-{uuid}"));
            }
            v
        };
        let out = run(
            "p.jsonl",
            &[
                user("u0", json!("go")),
                assistant("a1", "m1", task),
                side("s1", None, json!("look around"), "user"),
                side(
                    "s2",
                    Some("s1"),
                    json!([{"type":"text","text":"found it"}]),
                    "assistant",
                ),
                user(
                    "u1",
                    json!([{"type":"tool_result","tool_use_id":"t1","content":"found it"}]),
                ),
            ],
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].records.len(), 3);
        assert_eq!(out[0].report.skipped.get(MOVED_TO_SUBAGENT), Some(&2));
        assert_eq!(out[1].id, "p.sidechain-s1");
        assert_eq!(out[1].parent_id.as_deref(), Some("p"));
        assert_eq!(out[1].title.as_deref(), Some("Explore"));
        assert_eq!(out[1].records.len(), 2);
    }

    #[test]
    fn repeated_uuids_never_widen_a_preserved_segment() {
        // A trimmed file uses one placeholder uuid everywhere: the segment is the last message
        // holding it, not everything from the first to the last.
        let mut lines = Vec::new();
        for i in 0..200 {
            lines.push(user("[trimmed]", json!(format!("question {i}"))));
            lines.push(assistant(
                "[trimmed]",
                &format!("m{i}"),
                json!({"type":"text","text":"a"}),
            ));
        }
        let boundary = json!({"type":"system","subtype":"compact_boundary","uuid":"b",
            "compactMetadata":{"trigger":"auto","preservedSegment":{"headUuid":"[trimmed]","tailUuid":"[trimmed]"}}});
        for _ in 0..3 {
            lines.push(boundary.clone());
            lines.push(json!({"type":"user","uuid":"s","isCompactSummary":true,
                "message":{"role":"user","content":"summary"}}));
        }
        let out = run("dup.jsonl", &lines);
        let kept: Vec<usize> = out[0]
            .records
            .iter()
            .filter(|r| r.record_type == RecordType::CompactBoundary)
            .map(|r| r.keep_messages.as_ref().map_or(0, Vec::len))
            .collect();
        // The first boundary keeps the last message; the next two find none after a boundary.
        assert_eq!(kept, [1, 0, 0]);
    }

    #[test]
    fn an_oversized_kept_segment_is_capped_with_a_warning() {
        let big = "x".repeat(300 << 10);
        let mut lines = vec![user("h", json!("start"))];
        for i in 0..6 {
            lines.push(assistant(
                &format!("a{i}"),
                &format!("m{i}"),
                json!({"type":"text","text":big}),
            ));
            lines.push(user(&format!("u{i}"), json!(format!("more {i}"))));
        }
        lines.push(
            json!({"type":"system","subtype":"compact_boundary","uuid":"b",
            "compactMetadata":{"preservedSegment":{"headUuid":"h","tailUuid":"u5"}}}),
        );
        let out = run("big.jsonl", &lines);
        let b = out[0]
            .records
            .iter()
            .find(|r| r.record_type == RecordType::CompactBoundary)
            .and_then(|r| r.keep_messages.clone())
            .unwrap_or_default();
        assert!(!b.is_empty() && b.len() < 13, "{}", b.len());
        let size: usize = b.iter().map(|m| serde_json::to_vec(m).unwrap().len()).sum();
        assert!(
            size <= super::super::build::IMPORTED_KEEP_MAX_BYTES,
            "{size}"
        );
        assert_eq!(
            b.last().map(Message::text_content).as_deref(),
            Some("more 5")
        );
        assert!(
            out[0]
                .report
                .diagnostics
                .iter()
                .any(|d| d.message.contains("kept the newest")),
            "{:?}",
            out[0].report.diagnostics
        );
    }

    #[test]
    fn sidechain_ids_stay_valid_when_long_and_repeated() {
        // Found by fuzzing: two sidechains with the same long agent id got `-2` appended after
        // the id was cut to its limit, making an id longer than a file name allows.
        let long = "x".repeat(250);
        let side = |uuid: &str| {
            json!({"type":"user","uuid":uuid,"parentUuid":null,"isSidechain":true,"sessionId":"s",
                   "agentId":long,"message":{"role":"user","content":"go"}})
        };
        let out = run(
            "p.jsonl",
            &[user("u0", json!("hi")), side("s1"), side("s2")],
        );
        assert_eq!(out.len(), 3);
        for s in &out {
            assert!(crate::validate_id(&s.id).is_ok(), "{}", s.id);
        }
        assert_ne!(out[1].id, out[2].id);
    }
}
