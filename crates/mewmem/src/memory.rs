//! The lifecycle of seed 000 §6 ("完整生命周期") for an agent written in Rust:
//!
//! ```text
//! start    load_instructions + memories ──> Memory::open / Memory::start_context
//!          create or resume the session ──> Memory::start (new) / Memory::resume (id)
//!          inject_long_term_memory      ──> done by start/resume: the block heads the context
//! per turn user message                 ──> AgentSession::user_message: append, recall
//!                                           prefetched in the background (mem-recall)
//!          model reply, tool results    ──> AgentSession::model_message: append, compaction
//!                                           check, block injected again after a compaction
//!          next request                 ──> AgentSession::next_request: the context, with the
//!                                           recall reminder before the user's message
//!          end of turn                  ──> AgentSession::end_turn: extraction into
//!                                           memories.md spawned in the background (mem-auto)
//! ```
//!
//! Every message is on disk (mem-session) before the call returns; compaction (mem-compact)
//! writes its boundary through the same session; the summariser is the `mem_llm::Llm` given in
//! [`MemorySettings`] (the offline engine works with no model at all).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use chrono::NaiveDate;
use mem_compact::{AutoCompact, AutoCompactConfig, CompactResult, CompactSession, LongTermMemory};
use mem_core::{Conversation, Message, Role};
use mem_llm::Llm;
use mem_recall::{MemoryDirs, SurfacedLog};
use mem_session::SessionStore;
use mem_sources::FromProjectWith;

use crate::context::{ContextOptions, StartContext, start_context};
use crate::error::Result;
use crate::recall::{Recalled, recall_reminder};

/// How a [`Memory`] works: where the user's files are, which instruction files count, the
/// compaction policy and the model.
#[derive(Clone)]
pub struct MemorySettings {
    /// The user's home directory (user-level files in `<home>/.mewcode/`).
    pub home: PathBuf,
    /// Instruction file names, most preferred first (default MEWCODE.md, AGENTS.md, CLAUDE.md).
    pub instruction_names: Vec<String>,
    /// Compaction: context window (tokens), thresholds, tail policy (seed 003 defaults).
    pub compact: AutoCompactConfig,
    /// The model jobs (compaction summaries); `OfflineEngine` for no model.
    pub llm: Arc<dyn Llm>,
    /// The `# currentDate` of the injected block (the caller's today: libraries do not read
    /// the clock for what they show).
    pub date: NaiveDate,
    /// Note folders recall reads besides `<project>/.mewcode/memory/` and
    /// `<home>/.mewcode/memory/` (e.g. a Claude Code memory folder).
    pub recall_extra_dirs: Vec<PathBuf>,
    /// How `memories.md` is written (headings, token cap per file).
    pub auto: mem_auto::AutoOptions,
    /// The tier store whose Tier 0 (seed 003: recent projects, core preferences, recent
    /// learnings, < `tier0_max_tokens` tokens) goes into the start context after the
    /// `memories.md` entries; `None`: no Tier 0. Default: the local store under
    /// `<home>/.mewcode/tiers/`.
    pub tiers: Option<mem_tiers::MemoryConfig>,
    /// Where the rest of the configuration comes from when an operation needs it (the tier
    /// store's location, `[recall] dirs`, the model of a job, embeddings, the write check);
    /// `None`: the fields above, the local SQLite store, no embeddings, writes unchecked.
    /// See [`ConfigSource`].
    pub config: Option<Arc<dyn ConfigSource>>,
}

/// An error of a [`ConfigSource`] (a configuration file that cannot be read or is wrong), its
/// chain of causes kept.
pub type ConfigError = Box<dyn std::error::Error + Send + Sync>;

/// Embeddings for hybrid search and recall (`[embeddings]`): the settings and their client.
#[derive(Debug, Clone)]
pub struct Embeddings {
    /// Model, endpoint, `min_similarity`, `english_only`.
    pub settings: mem_llm::EmbeddingSettings,
    /// The client of the endpoint.
    pub embedder: mem_llm::Embedder,
}

/// The parts of a [`Memory`]'s configuration that cost a file read, an environment lookup or a
/// connection, asked for when an operation needs them and every time it does (so that a
/// configuration edited while an MCP server runs counts from the next call, and a search never
/// reads what only recall needs). The embedding program implements it (mem-cli reads
/// `config.toml` files and the environment); the library reads no configuration itself.
pub trait ConfigSource: Send + Sync {
    /// The tier store's configuration (`[memory]`: storage folder, budgets, headings, note
    /// folders).
    ///
    /// Errors: the configuration cannot be read or is wrong.
    fn tier_config(&self) -> Result<mem_tiers::MemoryConfig, ConfigError>;

    /// Where the tier store of `config` is (the local SQLite file, or a team store).
    ///
    /// Errors: the configuration cannot be read or is wrong.
    fn store_location(
        &self,
        config: &mem_tiers::MemoryConfig,
    ) -> Result<mem_tiers::StoreLocation, ConfigError> {
        Ok(mem_tiers::StoreLocation::Sqlite(config.database_path()))
    }

    /// The note folders besides the project's and the user's (`[recall] dirs`, scopes
    /// `extra<K>`).
    ///
    /// Errors: the configuration cannot be read or is wrong.
    fn note_dirs(&self) -> Result<Vec<PathBuf>, ConfigError>;

    /// The model of `job`: the outer error when the configuration cannot be read, the inner
    /// when the engine it names cannot be built (no API key...).
    ///
    /// Errors: as said.
    fn llm(&self, job: mem_llm::Job) -> Result<mem_llm::Result<Arc<dyn Llm>>, ConfigError>;

    /// Embeddings when configured; `None` when not (the default). An error (a bad
    /// configuration) turns them off with a warning: search and recall then stay lexical.
    ///
    /// Errors: the configuration cannot be read or is wrong.
    fn embeddings(&self) -> Result<Option<Embeddings>, ConfigError> {
        Ok(None)
    }

    /// Checks that writing or deleting under `path` (inside the project, existing or not) may
    /// happen, e.g. that no symlink leads it out of the project. Default: allowed.
    ///
    /// Errors: refused, with the reason.
    fn check_write(&self, path: &Path) -> Result<(), ConfigError> {
        let _ = path;
        Ok(())
    }

    /// Something the user should be told now that does not stop the operation (embeddings off,
    /// no embedding cache); one line without `warning: `. Default: the log.
    fn warn(&self, message: &str) {
        tracing::warn!("{message}");
    }
}

impl std::fmt::Debug for MemorySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySettings")
            .field("home", &self.home)
            .field("instruction_names", &self.instruction_names)
            .field("compact", &self.compact)
            .field("date", &self.date)
            .finish_non_exhaustive()
    }
}

impl MemorySettings {
    /// Settings with the default names and compaction policy.
    pub fn new(home: impl Into<PathBuf>, llm: Arc<dyn Llm>, date: NaiveDate) -> Self {
        let home: PathBuf = home.into();
        MemorySettings {
            home: home.clone(),
            instruction_names: mem_instructions::DEFAULT_NAMES
                .iter()
                .map(|n| (*n).to_owned())
                .collect(),
            compact: AutoCompactConfig::default(),
            llm,
            date,
            recall_extra_dirs: Vec::new(),
            auto: mem_auto::AutoOptions::default(),
            tiers: Some(mem_tiers::MemoryConfig::for_home(&home)),
            config: None,
        }
    }
}

/// One project's memory: its instructions, memories and sessions.
#[derive(Debug)]
pub struct Memory {
    project: PathBuf,
    settings: MemorySettings,
    fixed: FixedValues,
    store: SessionStore,
}

/// The tier store's manager on whichever backend is configured (SQLite or a team store).
pub type TierManager = mem_tiers::MemoryManager<mem_tiers::AnyStore>;

/// [`ConfigSource`] from the fixed values of [`MemorySettings`] (a copy kept in the
/// [`Memory`]).
struct FixedValues {
    home: PathBuf,
    tiers: Option<mem_tiers::MemoryConfig>,
    recall_extra_dirs: Vec<PathBuf>,
    llm: Arc<dyn Llm>,
}

impl std::fmt::Debug for FixedValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedValues")
            .field("tiers", &self.tiers)
            .finish_non_exhaustive()
    }
}

impl ConfigSource for FixedValues {
    fn tier_config(&self) -> Result<mem_tiers::MemoryConfig, ConfigError> {
        Ok(self
            .tiers
            .clone()
            .unwrap_or_else(|| mem_tiers::MemoryConfig::for_home(&self.home)))
    }

    fn note_dirs(&self) -> Result<Vec<PathBuf>, ConfigError> {
        Ok(self.recall_extra_dirs.clone())
    }

    fn llm(&self, _job: mem_llm::Job) -> Result<mem_llm::Result<Arc<dyn Llm>>, ConfigError> {
        Ok(Ok(self.llm.clone()))
    }
}

impl Memory {
    /// Opens the memory of `project` (seed §6 start: `load_instructions`, `MemoryManager`,
    /// `SessionManager`). Nothing is written until a session starts.
    ///
    /// Errors: [`crate::Error::Instructions`] when `project` is not a directory.
    pub fn open(project: impl Into<PathBuf>, settings: MemorySettings) -> Result<Memory> {
        let project = project.into();
        if !project.is_dir() {
            return Err(mem_instructions::Error::ProjectRoot {
                path: project.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            }
            .into());
        }
        let store = SessionStore::for_project(&project);
        let fixed = FixedValues {
            home: settings.home.clone(),
            tiers: settings.tiers.clone(),
            recall_extra_dirs: settings.recall_extra_dirs.clone(),
            llm: settings.llm.clone(),
        };
        Ok(Memory {
            project,
            settings,
            fixed,
            store,
        })
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The project's session store (`<project>/.mewcode/sessions/`).
    pub fn store(&self) -> &SessionStore {
        &self.store
    }

    /// The settings this memory was opened with.
    pub fn settings(&self) -> &MemorySettings {
        &self.settings
    }

    /// Where the configuration comes from: [`MemorySettings::config`], else the fixed values of
    /// the settings.
    pub fn config(&self) -> &dyn ConfigSource {
        match &self.settings.config {
            Some(c) => c.as_ref(),
            None => &self.fixed,
        }
    }

    /// The tier store's configuration ([`ConfigSource::tier_config`]).
    ///
    /// Errors: [`crate::Error::Config`].
    pub fn tier_config(&self) -> Result<mem_tiers::MemoryConfig> {
        self.config().tier_config().map_err(crate::Error::Config)
    }

    /// Opens the tier store ([`ConfigSource::store_location`]: SQLite or a team store) as the
    /// project's manager (registering the project, as every `MemoryManager` does).
    ///
    /// Errors: [`crate::Error::Config`]; [`crate::Error::Tiers`] when the store cannot be
    /// opened.
    pub fn open_tiers(&self) -> Result<TierManager> {
        self.open_tiers_with(self.tier_config()?)
    }

    /// [`Self::open_tiers`] with a given configuration (from [`Self::tier_config`], then
    /// adjusted).
    ///
    /// Errors: as [`Self::open_tiers`].
    pub fn open_tiers_with(&self, config: mem_tiers::MemoryConfig) -> Result<TierManager> {
        let location = self
            .config()
            .store_location(&config)
            .map_err(crate::Error::Config)?;
        let store = mem_tiers::AnyStore::open(&location, &config)?;
        Ok(mem_tiers::MemoryManager::from_project_with(
            &self.project,
            config,
            store,
        )?)
    }

    /// The note folders: the project's, the user's, then [`ConfigSource::note_dirs`].
    ///
    /// Errors: [`crate::Error::Config`].
    pub fn memory_dirs(&self) -> Result<MemoryDirs> {
        let extras = self.config().note_dirs().map_err(crate::Error::Config)?;
        Ok(MemoryDirs::standard(
            &self.project,
            &self.settings.home,
            &extras,
        ))
    }

    /// [`ConfigSource::check_write`] for `path`.
    ///
    /// Errors: [`crate::Error::Config`] holding the refusal.
    pub fn check_write(&self, path: &Path) -> Result<()> {
        self.config()
            .check_write(path)
            .map_err(crate::Error::Config)
    }

    /// [`Self::check_write`] for the project's notes folder (`.mewcode/memory/`), before every
    /// note write or delete and every forget of a file-backed memory.
    ///
    /// Errors: as [`Self::check_write`].
    pub fn check_notes_write(&self) -> Result<()> {
        self.check_write(&self.project.join(".mewcode").join("memory"))
    }

    /// The seed §6 block for the project as it is now (no budget): instructions, then the
    /// `memories.md` entries and Tier 0 of the tier store (when [`MemorySettings::tiers`] is
    /// set) as `# autoMemory`, then the date. A tier store that cannot be read leaves Tier 0
    /// out with a warning in the log (the agent still starts).
    ///
    /// Errors: [`crate::Error::Instructions`] when the project root is gone.
    pub fn start_context(&self) -> Result<StartContext> {
        let mut options =
            ContextOptions::new(&self.project, &self.settings.home, self.settings.date);
        options.instructions.names = self.settings.instruction_names.clone();
        if let Some(config) = &self.settings.tiers {
            match crate::context::tier0_text(&self.project, config.clone()) {
                Ok(t) => options.tier0 = t,
                Err(e) => tracing::warn!("Tier 0 left out of the start context: {e}"),
            }
        }
        start_context(&options)
    }

    /// Starts a new session: created on disk, the block injected at the head of its context.
    ///
    /// Errors: the store's (cannot create the sessions folder...), [`crate::Error::Instructions`].
    pub fn start(&self) -> Result<AgentSession> {
        let writer = self.store.create()?;
        let session = CompactSession::new(writer, Conversation::new(), self.project.clone());
        self.begin(session)
    }

    /// Resumes session `id` (from its last compact boundary, tool calls paired) and injects
    /// the block at the head of its context.
    ///
    /// Errors: [`crate::Error::Compact`] wrapping the store's (no such session, locked...).
    pub fn resume(&self, id: &str) -> Result<AgentSession> {
        let session = CompactSession::open(&self.store, id, self.project.clone())?;
        self.begin(session)
    }

    fn begin(&self, session: CompactSession) -> Result<AgentSession> {
        let context = self.start_context()?;
        let ltm = LongTermMemory {
            instructions: context.instructions.clone(),
            memories: context.memories.clone(),
            date: self.settings.date,
        };
        let mut session = session.with_long_term_memory(ltm);
        session.conversation.inject_long_term_memory(
            &context.instructions,
            &context.memories,
            self.settings.date,
        );
        let recall_dirs = MemoryDirs::standard(
            &self.project,
            &self.settings.home,
            &self.settings.recall_extra_dirs,
        );
        let surfaced = SurfacedLog::for_session(self.store.dir(), &session.id);
        Ok(AgentSession {
            session,
            compactor: AutoCompact::new(self.settings.compact.clone(), self.settings.llm.clone()),
            context,
            llm: self.settings.llm.clone(),
            recall_dirs,
            surfaced,
            recall: RecallState::None,
            auto: mem_auto::AutoMemory::new(
                &self.project,
                &self.settings.home,
                self.settings.auto.clone(),
            ),
            store: self.store.clone(),
            extraction: None,
        })
    }
}

/// A session in progress: what the agent calls as the conversation goes.
pub struct AgentSession {
    session: CompactSession,
    compactor: AutoCompact,
    context: StartContext,
    llm: Arc<dyn Llm>,
    recall_dirs: MemoryDirs,
    surfaced: SurfacedLog,
    recall: RecallState,
    auto: mem_auto::AutoMemory,
    store: SessionStore,
    extraction: Option<tokio::task::JoinHandle<mem_auto::Result<mem_auto::ExtractReport>>>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("id", &self.session.id)
            .field("messages", &self.session.conversation.len())
            .finish_non_exhaustive()
    }
}

/// Where the recall for the current user message stands.
enum RecallState {
    /// No user message yet.
    None,
    /// Running in the background (a tokio runtime was there when the message came).
    Running(tokio::task::JoinHandle<Recalled>),
    /// To run when the next request is built (no runtime when the message came).
    Pending(String),
    /// Done: the reminder for this turn (empty when no note applied).
    Done(Recalled),
}

impl AgentSession {
    /// The session id (the `.jsonl` file stem).
    pub fn id(&self) -> &str {
        &self.session.id
    }

    /// The start context injected at the head of the conversation.
    pub fn start_context(&self) -> &StartContext {
        &self.context
    }

    /// A user message: appended to the session file and the context, and the recall of notes
    /// for it started in the background (seed §4 `_prefetch_relevant_memories`) when called
    /// inside a tokio runtime (else it runs in [`Self::next_request`]). Notes surfaced earlier
    /// in this session are left out (recorded in `<id>.recall.json` beside the session).
    ///
    /// Errors: [`crate::Error::Compact`] wrapping the store's (the file cannot be written).
    pub fn user_message(&mut self, text: impl Into<String>) -> Result<()> {
        let text = text.into();
        self.session.append(Message::user(text.clone()))?;
        if let RecallState::Running(handle) = &self.recall {
            handle.abort();
        }
        self.recall = match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                let (llm, dirs, log) = (
                    self.llm.clone(),
                    self.recall_dirs.clone(),
                    self.surfaced.clone(),
                );
                RecallState::Running(rt.spawn(async move {
                    recall_reminder(llm, &dirs, Some(&log), &text, None, SystemTime::now()).await
                }))
            }
            Err(_) => RecallState::Pending(text),
        };
        Ok(())
    }

    /// The messages for the next request: [`Self::request_messages`] with the recall reminder
    /// of the current user message (a user message holding the `<system-reminder>`) right
    /// before that user message. Waits for the prefetch (it gives up within 8 s by itself);
    /// the reminder stays for every request of the turn.
    pub async fn next_request(&mut self) -> Vec<Message> {
        self.recall = match std::mem::replace(&mut self.recall, RecallState::None) {
            RecallState::Running(handle) => RecallState::Done(handle.await.unwrap_or_default()),
            RecallState::Pending(text) => RecallState::Done(
                recall_reminder(
                    self.llm.clone(),
                    &self.recall_dirs,
                    Some(&self.surfaced),
                    &text,
                    None,
                    SystemTime::now(),
                )
                .await,
            ),
            other => other,
        };
        let mut messages = self.request_messages().to_vec();
        if let RecallState::Done(r) = &self.recall
            && !r.reminder.is_empty()
        {
            let at = messages
                .iter()
                .rposition(|m| m.role == Role::User && !m.is_tool_result_only())
                .unwrap_or(messages.len());
            messages.insert(at, Message::user(r.reminder.clone()));
        }
        messages
    }

    /// The end of a turn: extraction of the messages after the last extraction into the two
    /// `memories.md` files (seed §3, through `mem_llm::Llm::extract`, secrets withheld) is
    /// spawned on the tokio runtime and never waited for here. When the previous extraction is
    /// still running, none is started: the next one takes these messages too (the count of
    /// extracted messages is kept per session). Returns `true` when one was started (`false`
    /// also outside a tokio runtime).
    pub fn end_turn(&mut self) -> bool {
        if self.extraction.as_ref().is_some_and(|h| !h.is_finished()) {
            return false;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let (auto, store, id, llm) = (
            self.auto.clone(),
            self.store.clone(),
            self.session.id.clone(),
            self.llm.clone(),
        );
        self.extraction = Some(rt.spawn(async move {
            let options = mem_auto::ExtractOptions::new(chrono::Utc::now());
            mem_auto::extract_session(&auto, &store, &id, llm.as_ref(), &options).await
        }));
        true
    }

    /// Waits for the extraction [`Self::end_turn`] started, if any (e.g. before exiting).
    ///
    /// Errors: the extraction's ([`crate::Error::Auto`]).
    pub async fn wait_extraction(&mut self) -> Result<Option<mem_auto::ExtractReport>> {
        match self.extraction.take() {
            None => Ok(None),
            Some(handle) => match handle.await {
                Ok(report) => Ok(Some(report?)),
                Err(join) => Err(crate::Error::Task {
                    what: "extraction",
                    reason: join.to_string(),
                }),
            },
        }
    }

    /// The recall of the current turn, once [`Self::next_request`] has waited for it.
    pub fn recalled(&self) -> Option<&Recalled> {
        match &self.recall {
            RecallState::Done(r) => Some(r),
            _ => None,
        }
    }

    /// A model reply or a message of tool results: appended, then the automatic compaction
    /// check (seed §2: tokens > window − safety margin); when it compacts, the boundary is
    /// written, the context becomes summary + kept tail, and the block is injected again.
    /// Returns the check's result (`triggered`, tokens before/after, warning level).
    ///
    /// Errors: [`crate::Error::Compact`]: the session could not be written, or the summariser
    /// failed (nothing written; after three failures in a row automatic compaction pauses).
    pub async fn model_message(&mut self, message: Message) -> Result<CompactResult> {
        Ok(self
            .compactor
            .on_message(&mut self.session, message)
            .await?)
    }

    /// The conversation as stored: the block, then the messages (after a compaction: the
    /// summary and the kept tail). [`Self::next_request`] adds the recall reminder.
    pub fn request_messages(&self) -> &[Message] {
        self.session.conversation.messages()
    }
}
