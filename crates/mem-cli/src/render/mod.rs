//! Rendering shared by several commands (text for a terminal; JSON is `crate::output`).

pub mod session;
