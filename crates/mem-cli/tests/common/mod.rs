//! Shared by the CLI's integration tests.

use std::path::Path;
use std::process::Command;

/// The `mem` binary under test.
pub const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// `mem --project P --home H` with a clean environment: no `MEM_*`, `OPENAI_*` or
/// `ANTHROPIC_*` variable of the caller, `HOME` set to `home`, logging off.
pub fn mem_command(project: &Path, home: &Path) -> Command {
    let mut c = Command::new(MEM);
    c.arg("--project").arg(project).arg("--home").arg(home);
    for (k, _) in std::env::vars() {
        if k.starts_with("MEM_") || k.starts_with("OPENAI_") || k.starts_with("ANTHROPIC_") {
            c.env_remove(k);
        }
    }
    c.env("HOME", home).env("MEM_LOG", "off");
    c
}
