//! The operations behind the `mem` commands of the session lifecycle, with typed results: the
//! CLI parses its arguments, reads the configuration, calls one of these and renders what it
//! returns (text or JSON). Nothing here prints, reads the environment or the configuration.
//!
//! - [`session`]: resolving, showing, deleting and importing sessions (`mem session`).
//! - [`compact`]: a session's size against the window and a compaction by hand (`mem compact`).
//! - [`extract`]: auto memory by hand over one or every session (`mem extract`).
//! - [`llm`]: the inputs of the model jobs run by hand and a ping of each job (`mem llm`).
//! - [`hook`]: fitting an agent hook's start context to a token cap (`mem hook codex`).
//! - [`checkpoint`]: the project's checkpoints on its configured store, the automatic one a
//!   command that changes memory takes first, a killed restore finished (`mem checkpoint`).
//! - [`skill`]: groups of memories that would make a skill, and a `SKILL.md` written from one
//!   (`mem skill`).

pub mod checkpoint;
pub mod compact;
pub mod extract;
pub mod hook;
pub mod llm;
pub mod session;
pub mod skill;
