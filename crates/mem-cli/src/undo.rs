//! The automatic checkpoint a command that changes memory takes first (its undo point:
//! `mem extract`, `mem compact sweep`), as `[checkpoint]` of `config.toml` says (`auto`,
//! `keep`), through [`mewmem::Memory::auto_checkpoint`].

use anyhow::{Result, bail};

use crate::settings::Settings;

/// Default number of automatic checkpoints kept.
pub const DEFAULT_KEEP: usize = 10;

/// `[checkpoint]` of `config.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoSettings {
    /// Take a checkpoint before `mem extract` and `mem compact sweep` (default true).
    pub auto: bool,
    /// Automatic checkpoints kept (default [`DEFAULT_KEEP`]).
    pub keep: usize,
}

/// Reads `[checkpoint]` from the user's then the project's `config.toml` (the project wins).
///
/// # Errors
/// An unreadable file, or a `[checkpoint]` that is not `auto = bool`, `keep = N >= 1`.
pub fn auto_settings(settings: &Settings) -> Result<AutoSettings> {
    #[derive(serde::Deserialize, Default)]
    struct File {
        checkpoint: Option<Section>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct Section {
        auto: Option<bool>,
        keep: Option<usize>,
    }
    let mut out = AutoSettings {
        auto: true,
        keep: DEFAULT_KEEP,
    };
    for path in crate::config::config_paths(settings) {
        let Some(read) = crate::config::read_config_text(&path)? else {
            continue;
        };
        if read.truncated || read.lossy {
            bail!("{} is too large or not UTF-8", path.display());
        }
        let file: File = crate::config::parse_toml(&path, &read.text, "[checkpoint] table")?;
        let Some(section) = file.checkpoint else {
            continue;
        };
        if let Some(a) = section.auto {
            out.auto = a;
        }
        if let Some(k) = section.keep {
            if k == 0 {
                bail!(
                    "{}: checkpoint.keep must be at least 1 (set auto = false to take none)",
                    path.display()
                );
            }
            out.keep = k;
        }
    }
    Ok(out)
}

/// Takes the automatic checkpoint of a command that changes memory (`reason`: the command),
/// when `[checkpoint] auto` is on; prunes to the last `keep`. Says so on stderr when it is a
/// terminal. Returns the checkpoint's name.
///
/// # Errors
/// The checkpoint cannot be taken: the command must not go on without its undo point.
pub fn auto_checkpoint(settings: &Settings, reason: &str, user: bool) -> Result<Option<String>> {
    let auto = auto_settings(settings)?;
    if !auto.auto {
        return Ok(None);
    }
    settings.guard_write(&mewmem::ops::checkpoint::checkpoints_dir(&settings.project))?;
    let m = crate::open::memory(settings)?
        .auto_checkpoint(reason, user, auto.keep)
        .map_err(crate::open::lib_error)?;
    if settings.interactive && !settings.json {
        eprintln!(
            "checkpoint {} taken (undo with `mem checkpoint restore {}`)",
            m.name, m.name
        );
    }
    Ok(Some(m.name))
}
