//! Argument groups several commands take (flattened into their clap arguments).

use std::path::Component;

use anyhow::{Result, bail};
use clap::Args;
use mem_instructions::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, Limits, LoadOptions};

use crate::settings::Settings;

/// Which instruction files to read and how much of them (shared by `instructions`, `context` and `compact`).
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Instruction file names, most preferred first, comma-separated. In each place
    /// (`<project>/`, `<project>/.mewcode/`, `<home>/.mewcode/`) the first that exists is loaded.
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        env = "MEM_INSTRUCTION_NAMES",
        default_value = "MEWCODE.md,AGENTS.md,CLAUDE.md"
    )]
    pub names: Vec<String>,
    /// At most this many bytes of one file are used.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: usize,
    /// At most this many bytes of all instruction files together.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_TOTAL_BYTES)]
    pub max_total_bytes: usize,
}

impl SourceArgs {
    /// Validates the names and builds the loader's options.
    pub fn load_options(&self, settings: &Settings) -> Result<LoadOptions> {
        for name in &self.names {
            let path = std::path::Path::new(name);
            let plain =
                !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
            if !plain {
                bail!(
                    "instruction file name {name:?} must be a relative path without `..` \
                     (e.g. AGENTS.md or docs/AGENTS.md)"
                );
            }
        }
        let mut options = LoadOptions::new(&settings.project, &settings.home);
        options.names = self.names.clone();
        options.limits = Limits {
            max_file_bytes: self.max_file_bytes,
            max_total_bytes: self.max_total_bytes,
            ..Limits::default()
        };
        Ok(options)
    }
}

/// Which engine a model job uses (shared by `llm`, `extract` and `skill`).
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Use the offline engine whatever the configuration says.
    #[arg(long)]
    pub offline: bool,
}
