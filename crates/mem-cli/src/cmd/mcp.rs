//! `mem mcp`: the facade's MCP server ([`mewmem::mcp`]) on stdio for the project of the global
//! `--project` / `--home`, or its tool list (`--list-tools`).

use anyhow::{Result, anyhow};
use clap::Args;
use serde_json::json;

use crate::settings::Settings;

/// `mem mcp` (the project and home are the global `--project` / `--home`).
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Print the tools, one line each (name and the first line of its description), and exit;
    /// with `--json`, exactly as the server lists them to a client (descriptions, input
    /// schemas, annotations).
    #[arg(long)]
    list_tools: bool,
}

/// Runs the server until the client closes stdin (or disconnects).
pub async fn run(args: McpArgs, settings: &Settings) -> Result<()> {
    if args.list_tools {
        let tools = mewmem::mcp::tools().map_err(|e| anyhow!("{}", e.message))?;
        if settings.json {
            println!(
                "{}",
                crate::render::json_pretty(&json!({ "tools": tools }))?
            );
            return Ok(());
        }
        let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in &tools {
            let first = t
                .description
                .as_deref()
                .and_then(|d| d.lines().next())
                .unwrap_or("");
            println!("{:width$}  {first}", t.name);
        }
        println!("(`mem --json mcp --list-tools` prints the input schemas and annotations)");
        return Ok(());
    }
    mewmem::mcp::serve_stdio(crate::open::memory(settings)?).await?;
    Ok(())
}
