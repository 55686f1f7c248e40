//! Settings resolved once at the edge from flags and the environment.

use std::path::{Path, PathBuf};

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
    /// `--allow-outside-project`: writes may go through a symlink that leaves the project.
    pub allow_outside_project: bool,
    /// `true` when the home is `$HOME` (not another `--home`): only then is the user directory
    /// shown as `~/.mewcode`.
    pub home_is_env: bool,
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
        let env_home = std::env::var_os("HOME").filter(|h| !h.is_empty());
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
            json: args.json,
            interactive: std::io::stderr().is_terminal(),
            allow_outside_project: args.allow_outside_project,
            home_is_env: env_home.is_some_and(|h| h == home.as_os_str()),
            home,
        })
    }

    /// Checks that writing or deleting under `path` (a path inside the project, existing or
    /// not) stays inside the project: the deepest part of it that exists must resolve (symlinks
    /// followed) to a place inside the project. A `.mewcode/` or `.mewcode/sessions/` symlink to
    /// elsewhere is refused, as the instruction loader refuses includes that leave the project,
    /// unless `--allow-outside-project` was given (then a warning is printed).
    ///
    /// Errors: the path leads out of the project (naming the symlinked part and its target), or
    /// it cannot be resolved.
    pub fn guard_write(&self, path: &Path) -> Result<()> {
        // The deepest existing ancestor, walking down from the project one component at a time,
        // so that the first component that leads out is the one named.
        let out = mem_core::pathguard::leads_out(&self.project, path)
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        if let Some((logical, resolved)) = out {
            let what = format!(
                "{} leads out of the project (to {})",
                logical.display(),
                resolved.display()
            );
            if self.allow_outside_project {
                eprintln!(
                    "warning: {}; writing there as --allow-outside-project says",
                    crate::render::safe_line(&what)
                );
                return Ok(());
            }
            bail!(
                "refused: {what}; nothing changed. Pass --allow-outside-project to write \
                 there anyway"
            );
        }
        Ok(())
    }

    /// A file label of the instruction loader for printing: `~/.mewcode/...` names the user
    /// directory, which is shown as its real path when `--home` is not `$HOME`.
    pub fn user_label(&self, label: &str) -> String {
        match label.strip_prefix("~/.mewcode") {
            Some(rest) if !self.home_is_env => format!("{}{rest}", self.user_dir().display()),
            _ => label.to_owned(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(project: &Path, allow: bool) -> Settings {
        Settings {
            project: project.to_owned(),
            home: project.to_owned(),
            json: false,
            interactive: false,
            project_given: true,
            allow_outside_project: allow,
            home_is_env: false,
        }
    }

    #[test]
    fn writes_through_a_symlink_out_of_the_project_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(project.join(".mewcode")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let s = settings(&project, false);
        let sessions = project.join(".mewcode/sessions");
        // Not there yet, or a real folder: fine.
        s.guard_write(&sessions).unwrap();
        std::fs::create_dir_all(project.join("inside")).unwrap();
        std::os::unix::fs::symlink(project.join("inside"), &sessions).unwrap();
        s.guard_write(&sessions.join("x.jsonl")).unwrap();
        std::fs::remove_file(&sessions).unwrap();
        // A symlink that leads out: refused, naming it; allowed with the flag.
        std::os::unix::fs::symlink(&outside, &sessions).unwrap();
        let err = s.guard_write(&sessions).unwrap_err().to_string();
        assert!(
            err.contains(".mewcode/sessions leads out of the project"),
            "{err}"
        );
        assert!(err.contains("--allow-outside-project"), "{err}");
        settings(&project, true).guard_write(&sessions).unwrap();
    }
}
