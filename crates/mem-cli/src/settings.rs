//! Settings resolved once at the edge from flags and the environment.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::cli::GlobalArgs;

/// What every command needs to know about where it runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The project directory (absolute).
    pub project: PathBuf,
    /// `true` when `--project` was given (hooks otherwise take Claude Code's project dir).
    pub project_given: bool,
    /// The user's home directory (absolute); user-level files live in `<home>/.mewcode/`.
    pub home: PathBuf,
    /// Machine-readable output.
    pub json: bool,
    /// Whether stderr is a terminal (progress bars are drawn only then).
    pub interactive: bool,
}

impl Settings {
    /// Resolves `--project` (default: current dir) and `--home` (default: `$HOME`).
    pub fn resolve(args: &GlobalArgs) -> Result<Settings> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let project = match &args.project {
            Some(p) => cwd.join(p),
            None => cwd.clone(),
        };
        if !project.is_dir() {
            bail!(
                "project directory {} does not exist or is not a directory",
                project.display()
            );
        }
        let home = match &args.home {
            Some(h) => cwd.join(h),
            None => match std::env::var_os("HOME") {
                Some(h) if !h.is_empty() => PathBuf::from(h),
                _ => bail!("cannot find the home directory: set $HOME or pass --home DIR"),
            },
        };
        use std::io::IsTerminal;
        Ok(Settings {
            project,
            project_given: args.project.is_some(),
            home,
            json: args.json,
            interactive: std::io::stderr().is_terminal(),
        })
    }

    /// `<project>/.mewcode`.
    pub fn project_dir(&self) -> PathBuf {
        self.project.join(".mewcode")
    }

    /// `<home>/.mewcode`.
    pub fn user_dir(&self) -> PathBuf {
        self.home.join(".mewcode")
    }
}
